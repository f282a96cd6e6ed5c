"""Cached library calls for the app: every page asks here, never the engine directly.

Arguments are hashable (a scenario travels as its canonical TOML text), results are plain data, and
every cache is bounded (`max_entries`), so a long session cannot grow the server's memory. Errors
are the library's own (`econ.errors.InputError` subclasses); `attempt` turns them into `st.error`.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from econ.errors import InputError
from econ.scenario import loads
from econ.ui.fmt import number_format

T = TypeVar("T")
LOG = logging.getLogger("econ.ui")

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
"""Largest benchmark or scenario file the app reads; serving benchmark outputs are kilobytes."""


GPUS_BOX = 'the "GPUs that served it" box above the chart'
HOLD_LOAN_BOX = '"Hold the base case\'s loan"'
"""The Risk page's control for `hold_debt`, as messages name it."""
CATALOG_IDS = "find ids in the Row ID column of the Throughput page's Benchmark catalog"
"""Where the app lists the MLPerf catalog's row ids (`econ benchmarks list` on the command line)."""
_COMMAND_LINE = (
    ("import it with the GPU count (--gpus N)", f"type the GPU count in {GPUS_BOX}"),
    ("pass the GPU count explicitly (--gpus) if that is wrong", f"correct it in {GPUS_BOX}"),
    ("pass --gpus N if wrong", f"correct it in {GPUS_BOX}"),
    ("(pass --gpus N)", f"(type the GPU count in {GPUS_BOX})"),
    ("(pass --gpus N to have it)", f"(type the GPU count in {GPUS_BOX} to have it)"),
    ("GPU count (--gpus)", "GPU count"),
    ("(step reading, --step)", '(step reading: "Interpolate" off, MLPerf Endpoints files)'),
    ("leave out --hold-debt", f"turn off {HOLD_LOAN_BOX}"),
    ("(--interpolate reads between them)", '("Interpolate (not official)" reads between them)'),
    ("find ids with `econ benchmarks list`", CATALOG_IDS),
)
_SLO_NAME = r"(?:(ttft|tpot|itl|e2e)_s_([a-z0-9]+)|(tokens_per_s_per_user))"
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_SLO_VALUE = re.compile(rf"\b{_SLO_NAME} (<=|>=|=) ({_NUMBER}|nan)(?: \(limit ({_NUMBER})\))?")
_SLO_BARE = re.compile(rf"\b{_SLO_NAME}\b")
_PER_GPU = re.compile(rf"(?<![\d,.])({_NUMBER}) tokens/s per GPU\b")
_OPERATORS = {"<=": "≤", ">=": "≥", "=": "="}


def slo_words(match: re.Match) -> tuple[str, str, float]:
    """(name, unit, factor from the library's unit) of a latency or speed limit as the SLO boxes
    name it: tpot_s_p99 -> ("TPOT p99", "ms", 1000), ttft_s_p99 -> ("TTFT p99", "s", 1),
    tokens_per_s_per_user -> ("tokens/s per user", "", 1)."""
    what, stat, user = match.group(1), match.group(2), match.group(3)
    if user:
        return "tokens/s per user", "", 1.0
    per_token = what in ("tpot", "itl")
    return f"{what.upper()} {stat}", "ms" if per_token else "s", 1000.0 if per_token else 1.0


def _slo_number(text: str, unit: str, factor: float) -> str:
    if text == "nan":
        return "NaN"
    return number_format(float(text) * factor, digits=4) + (f" {unit}" if unit else "")


def _slo_value(match: re.Match) -> str:
    name, unit, factor = slo_words(match)
    operator, value, limit = match.group(4), match.group(5), match.group(6)
    text = f"{name} {_OPERATORS[operator]} {_slo_number(value, unit, factor)}"
    return text + (f" (limit {_slo_number(limit, unit, factor)})" if limit else "")


def slo_text(text: str) -> str:
    """The operating point's limits as the SLO boxes name them, in their units and with
    thousands separators: "ttft_s_p99 = 0.4527 (limit 0.3)" -> "TTFT p99 = 0.4527 s (limit 0.3
    s)", "tpot_s_p99 <= 0.001" -> "TPOT p99 ≤ 1 ms", "tokens_per_s_per_user >= 1e+05" ->
    "tokens/s per user ≥ 100,000", "3654 tokens/s per GPU" -> "3,654 tokens/s per GPU"."""
    text = _SLO_VALUE.sub(_slo_value, text)
    text = _SLO_BARE.sub(lambda m: slo_words(m)[0], text)
    text = text.replace("(or NaN for no limit) per scenario", "(or empty for no limit)")
    return _PER_GPU.sub(
        lambda m: f"{number_format(float(m.group(1)), digits=6)} tokens/s per GPU", text
    )


UPLOAD_FOLDER_PREFIX = "econ-upload-"
"""Prefix of the temporary folder the app writes an uploaded file into (econ's own temporary
folders all start "econ-": econ-export-, econ-zip-, econ-memo-)."""
_SERVER_TEMP = r"econ-[a-z]+-[a-z0-9_]{8}/"
"""A temporary folder of econ's own (tempfile adds 8 characters of [a-z0-9_] to its prefix)."""


def app_text(message: str) -> str:
    """A library message as the app shows it: no command-line options (the app's own controls
    instead), latencies per token in ms as the app's fields are, no temporary folders of econ's
    own (an upload's: the uploaded file's own name stays; any other path is the user's text, kept
    as written) and no server folders: a file of the models/ folder (which a scenario's paths may
    name) is named "models/..." as scenarios name it."""
    text = str(message)
    temp = re.escape(tempfile.gettempdir().rstrip("/") + "/")
    text = re.sub(temp + _SERVER_TEMP, "", text)
    for folder in _models_folders():
        text = text.replace(folder + "/", "models/").replace(folder, "models")
    for cli, app in _COMMAND_LINE:
        text = text.replace(cli, app)
    text = re.sub(r"--gpus(?: N)?", GPUS_BOX, text)
    text = re.sub(r"--step (?=['\"])", "step ", text)
    return slo_text(text)


MAX_REASON_CHARS = 300
"""Characters of an unexpected exception's message a page shows (the log keeps it whole)."""


def _models_folders() -> list[str]:
    """The models/ folder's absolute path as given and as resolved (links followed), longest
    first, so that a message naming either is rewritten."""
    from econ.catalog import models_dir

    folder = models_dir()
    names = {str(p).rstrip("/") for p in (folder, folder.resolve()) if p.is_absolute()}
    return sorted((n for n in names if n), key=len, reverse=True)


def attempt(
    call: Callable[[], T],
    what: str,
    where=None,
    busy: str | None = None,
    words: Callable[[str], str] | None = None,
) -> T | None:
    """Run a library call under a spinner (`busy`, default "WHAT..."; Streamlit shows it only
    when the call takes longer than half a second, so a cached result shows none); on failure
    show `st.error` with the reason and return None.

    Bad input (InputError and its subclasses) shows the library's message as is; anything else
    is reported by type and message (the traceback goes to the server log, never to the page).
    Messages and `what` may quote a user's text (a scenario's name, a file's), so they are shown
    as plain text (`fmt.literal`); `words` rewords a message first (a page's own terms).
    """
    from econ.ui.fmt import literal

    where = where if where is not None else st
    try:
        with st.spinner(literal(busy or f"{what}...")):
            return call()
    except Exception as exc:  # noqa: BLE001 - the page must show a reason, never a traceback
        failed(exc, what, where, words)
    return None


def failed(
    exc: Exception, what: str, where=None, words: Callable[[str], str] | None = None
) -> None:
    """Show why `what` failed as `st.error` (in `where`; default the page), as `attempt` does:
    bad input (InputError) by the library's message, anything else by type and message; the
    traceback goes to the server log, never to the page. Page scripts' own failures come here
    too (common.run_page)."""
    from econ.ui.fmt import literal

    where = where if where is not None else st
    if isinstance(exc, ImportError):
        LOG.error("%s failed", what, exc_info=exc)
        text = import_failure(exc, what)
    elif isinstance(exc, InputError):
        text = f"{what}: {app_text(exc)}"
    elif isinstance(
        exc, ValueError | KeyError | OverflowError | ZeroDivisionError | FileNotFoundError
    ):
        LOG.warning("%s failed", what, exc_info=exc)
        text = f"{what}: {app_text(exc)}"
    else:
        LOG.error("%s failed", what, exc_info=exc)
        reason = app_text(exc)
        if len(reason) > MAX_REASON_CHARS:  # e.g. a TypeError quoting a long value
            reason = f"{reason[:MAX_REASON_CHARS]}... ({len(reason):,} characters)"
        text = f"{what} failed ({type(exc).__name__}): {reason}"
    where.error(literal(words(text) if words is not None else text), icon=":material/error:")


_MODULE_FILE = re.compile(r" \((?:/|[A-Za-z]:\\)[^()]*\)$")
"""The file an ImportError names after its module ("(/srv/econ/files.py)"): a server path."""


def import_failure(exc: ImportError, what: str) -> str:
    """Why `what` failed on an import, without the server's path of the module: "Showing this
    page failed (ImportError): cannot import name 'X' from 'econ.files'; econ's code changed while
    this server ran, ...: restart the server (econ app) to load it". Python's message ends with the
    module's file; the log keeps it."""
    reason = _MODULE_FILE.sub("", app_text(exc))
    return (
        f"{what} failed ({type(exc).__name__}): {reason}; econ's code changed while this server "
        "ran, or an installed package is missing: restart the server (econ app) to load it"
    )


# --- projections ------------------------------------------------------------------------------------


_GENERATION_SEEN: int | None = None
"""The catalog generation (econ.catalog.catalog_generation) the app's cached figures are of."""


def drop_stale_caches() -> None:
    """Empty the app's caches (`st.cache_data`: projections, workbooks, memos, the catalog table)
    once models/ has changed since they were filled: a server left running while new MLPerf rows
    arrive (a `git pull`) would show figures of the old catalogs, as econ's own caches would
    without econ.catalog.catalog_cache. Called on every run (a stat of each catalog file)."""
    global _GENERATION_SEEN
    from econ.catalog import catalog_generation

    generation = catalog_generation()
    if _GENERATION_SEEN is not None and generation != _GENERATION_SEEN:
        st.cache_data.clear()
    _GENERATION_SEEN = generation


@st.cache_data(max_entries=64, show_spinner=False)
def projection(text: str) -> dict[str, Any]:
    """One scenario (TOML text) projected: summary (JSON-ready), monthly frame, vintages frame."""
    from econ.engine import project

    result = project(loads(text))
    record = result.summary_records()[0]["summary"]
    monthly = result.monthly.reset_index()
    vintages = None if result.vintages is None else result.vintages.reset_index()
    return {"summary": record, "monthly": monthly, "vintages": vintages}


@st.cache_data(max_entries=16, show_spinner=False)
def price_cushion(text: str) -> dict[str, Any] | None:
    """The month-1 token price below which the scenario's loan, held as sized, breaches a
    covenant (`econ.analysis.committed.covenant_breach_price`); None without debt."""
    from econ.analysis.committed import covenant_breach_price

    if not projection(text)["summary"].get("debt_usd"):
        return None
    return covenant_breach_price(loads(text))


@st.cache_data(max_entries=16, show_spinner=False)
def projections(texts: tuple[str, ...]) -> dict[str, Any]:
    """Several scenarios projected in one batch: summaries (in order) and the monthly frame."""
    from econ.engine import project

    result = project([loads(t) for t in texts])
    return {
        "summaries": [r["summary"] for r in result.summary_records()],
        "names": [r["name"] for r in result.summary_records()],
        "monthly": result.monthly.reset_index(),
    }


STEM_BYTES = 150
"""Most UTF-8 bytes of a download name's stem: with "-edited-" and a hash (common.export_stem)
and the longest suffix (".tranches.summary.parquet") a name stays within the 255 bytes of a
file name (ext4, APFS, NTFS); a longer one is cut by the browser, hash and kind first."""


def file_stem(name: str) -> str:
    """A scenario's name as the start of a file name: letters, digits and "._-" kept, any other
    character "_", no leading dot (a hidden file, whose dots the browser drops), at most
    STEM_BYTES bytes of whole characters ("scenario" for a name left empty)."""
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in name).lstrip(".")
    stem = stem.encode()[:STEM_BYTES].decode(errors="ignore")
    return stem or "scenario"


@st.cache_data(max_entries=8, show_spinner=False)
def export_bytes(text: str, kind: str, stem: str | None = None) -> dict[str, bytes]:
    """The projection as econ.export writes it in `kind` (csv, parquet, xlsx, json): name -> bytes,
    each file named `stem` (default: the scenario's name) and its kind's suffix.

    Nothing touches the disk: econ.export.output_payloads builds the files in memory.
    """
    from econ.engine import project

    scenario = loads(text)
    result = project(scenario)
    stem = stem or file_stem(scenario.name)
    try:
        from econ.export import output_payloads
    except ImportError:  # an econ.export without in-memory payloads: write to a temporary folder
        from econ.export import write_projection

        with tempfile.TemporaryDirectory(prefix="econ-export-") as folder:
            written = write_projection(result, Path(folder) / f"{stem}.{kind}")
            return {p.name: p.read_bytes() for p in written}
    payloads = output_payloads(result, {kind: f"{stem}.{kind}"}, scenarios=[scenario])
    return {Path(path).name: build() for path, build in payloads.items()}


@st.cache_data(max_entries=4, show_spinner=False)
def memo_bytes(text: str, pdf: bool, stem: str | None = None) -> dict[str, bytes]:
    """The investment memo of the scenario as `econ memo` writes it: name -> bytes (HTML, and
    PDF when `pdf` and a Chromium is installed), named `stem` (default: the scenario's name) and
    "-memo". Nothing touches the disk but Chromium's folder."""
    from econ.memo import render
    from econ.memo.build import build_memo

    scenario = loads(text)
    memo = build_memo(scenario)
    html = render.html(memo)
    stem = stem or file_stem(scenario.name)
    files = {f"{stem}-memo.html": html.encode("utf-8")}
    if pdf and render.chromium() is not None:
        files[f"{stem}-memo.pdf"] = render.pdf(html, memo.stamp)
    return files


# --- software gains ---------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner=False)
def gain_value(text: str, steps: tuple[tuple[int, float, str], ...] | None = None):
    """econ.gains.value_gain of the scenario (its steps replaced by `steps` when given)."""
    from econ.gains import value_gain, with_steps

    scenario = loads(text)
    if steps is not None:
        scenario = with_steps(
            scenario, [{"month": m, "gain": g, "label": label} for m, g, label in steps]
        )
    return value_gain(scenario)


@st.cache_data(max_entries=16, show_spinner=False)
def gain_monthly(text: str, steps: tuple[tuple[int, float, str], ...] | None = None):
    """Monthly frames of the scenario without its gains (base) and with them (gain)."""
    from econ.engine import project
    from econ.gains import with_steps, without_gains

    scenario = loads(text)
    if steps is not None:
        scenario = with_steps(
            scenario, [{"month": m, "gain": g, "label": label} for m, g, label in steps]
        )
    # (named apart: a scenario itself named "base" would otherwise share the batch's key)
    gain = scenario.model_copy(update={"name": "gains"})
    result = project([without_gains(scenario, name="base"), gain])
    return result.monthly.reset_index()


@st.cache_data(max_entries=16, show_spinner=False)
def hold_margin(text: str, declines: tuple[float, ...], metric: str):
    """Annual gain that holds `metric` under each token price decline (econ.gains)."""
    import numpy as np

    from econ.gains import gain_rate_to_hold_margin

    return gain_rate_to_hold_margin(loads(text), np.asarray(declines, dtype=float), metric=metric)


@st.cache_data(max_entries=16, show_spinner=False)
def cost_of_capital_gain(
    text: str,
    lives: tuple[float, ...],
    discount: float | None,
    variable: str,
    step_month: int | None,
):
    """Gain at which the asset earns its cost of capital over each service life (econ.gains)."""
    import numpy as np

    from econ.gains import gain_to_earn_cost_of_capital

    return gain_to_earn_cost_of_capital(
        loads(text),
        np.asarray(lives, dtype=float),
        discount_rate_annual=discount,
        variable=variable,
        step_month=step_month,
    )


def parse_steps(texts: list[str], text: str) -> tuple[tuple[int, float, str], ...]:
    """Steps written WHEN:GAIN[:LABEL] (econ gains --step syntax) for the scenario in `text`."""
    from econ.gains import parse_step

    scenario = loads(text)
    steps = [parse_step(t, scenario.start_date, scenario.horizon) for t in texts if t.strip()]
    steps.sort(key=lambda s: s["month"])
    return tuple((int(s["month"]), float(s["gain"]), str(s.get("label", ""))) for s in steps)


@st.cache_data(max_entries=16, show_spinner=False)
def catalog_step(text: str, from_id: str, to_id: str) -> tuple[tuple[int, float, str], list[str]]:
    """A step from two benchmark catalog rows for the scenario in `text`, and its caveats."""
    from econ.gains import step_from_catalog

    step, warnings = step_from_catalog(loads(text), from_id.strip(), to_id.strip())
    return (int(step["month"]), float(step["gain"]), str(step["label"])), warnings


# --- throughput -------------------------------------------------------------------------------------


@st.cache_data(max_entries=1, show_spinner=False)
def catalog() -> pd.DataFrame:
    from econ.benchmarks import load_catalog

    return load_catalog()


@st.cache_data(max_entries=64, show_spinner=False)
def row_checks(row_id: str, hardware: str | None) -> list[str]:
    from econ.benchmarks import get_row
    from econ.benchmarks import row_checks as checks

    frame = catalog()
    return checks(get_row(row_id, frame), hardware=hardware, catalog=frame)


@st.cache_data(max_entries=64, show_spinner=False)
def generation(hardware: str) -> str:
    from econ.benchmarks import generation_of

    return generation_of(hardware)


SAFE_NAME_CHARS = 100
"""Longest name an upload is stored under while it is read (file systems allow 255 bytes)."""


def _safe_name(name: str) -> str:
    keep = "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(name).name)
    keep = keep.lstrip(".") or "upload"
    if len(keep) > SAFE_NAME_CHARS:  # the suffix decides the format: keep it
        suffix = Path(keep).suffix[:20]
        keep = keep[: SAFE_NAME_CHARS - len(suffix)] + suffix
    return keep


_INT_LIMIT = "integer string conversion"
"""Python's words for a number of more than 4,300 digits it refuses to read (a ValueError)."""


@st.cache_data(max_entries=16, show_spinner=False)
def curve(name: str, content: bytes, gpus: float | None = None):
    """A benchmark output file (name and bytes, as uploaded) read by econ's importers; a .zip is
    an MLPerf Endpoints submission tree, unpacked with its guards (paths, links, size, bombs)."""
    from econ.throughput.importers import CurveError, import_files
    from econ.throughput.importers.mlperf_endpoints import extract_submission_zip

    if not content.strip():
        raise CurveError(f"{name}: the file is empty; expected a benchmark result file")
    if len(content) > MAX_UPLOAD_BYTES:
        raise CurveError(
            f"{name}: {len(content) / 1e6:.1f} MB is larger than the "
            f"{MAX_UPLOAD_BYTES / 1e6:.0f} MB limit for benchmark files"
        )
    with tempfile.TemporaryDirectory(prefix=UPLOAD_FOLDER_PREFIX) as folder:
        path = Path(folder) / _safe_name(name)
        if path.suffix.lower() == ".zip":
            path.mkdir()
            extract_submission_zip(content, path, name)  # refuses, naming the member
        else:
            path.write_bytes(content)
        try:
            return import_files([path], "auto", gpus)
        except ValueError as exc:
            if isinstance(exc, InputError) or _INT_LIMIT not in str(exc):
                raise
            raise CurveError(
                f"{name}: a number of more than 4,300 digits; expected a finite number (at "
                "most about 1.8e308)"
            ) from None


@st.cache_data(max_entries=16, show_spinner=False)
def curve_model(path: str, fmt: str = "auto") -> str:
    """The model a scenario's measured curve file states (its provenance or model column), as a
    catalog key where one matches; "" when it states none or cannot be read."""
    from econ.throughput.importers import import_files
    from econ.throughput.match import model_key_of, stated
    from econ.throughput.resolve import curve_reach

    try:
        found = import_files(
            [path], fmt or "auto", None, allow_incomplete=True, within=curve_reach(path)
        )
    except Exception:  # noqa: BLE001 - a default for a select box, never an error of its own
        return ""
    model = stated(found.provenance, found.points, "model")
    return (model_key_of(model) or model) if model and ";" not in model else ""


@st.cache_data(max_entries=64, show_spinner=False)
def measured_point(
    name: str,
    content: bytes,
    gpus: float | None,
    ttft_p99_s: float | None,
    tpot_p99_s: float | None,
    min_tokens_per_s_per_user: float | None,
    workload: str | None,
    latency_limits: tuple[tuple[str, float], ...] = (),
    reading: str | None = None,
):
    """The SLO operating point of an uploaded curve; `latency_limits` as (column, seconds) pairs,
    `reading` "step" | "interpolate" | None (the curve's own)."""
    from econ.throughput.operating_point import operating_point

    return operating_point(
        curve(name, content, gpus),
        ttft_p99_s=ttft_p99_s,
        tpot_p99_s=tpot_p99_s,
        min_tokens_per_s_per_user=min_tokens_per_s_per_user,
        latency_limits=dict(latency_limits),
        workload=workload,
        reading=reading,
    )


@st.cache_data(max_entries=1, show_spinner=False)
def hardware_keys() -> list[str]:
    from econ.hardware import load_hardware_catalog

    return list(load_hardware_catalog())


@st.cache_data(max_entries=1, show_spinner=False)
def llm_keys() -> list[str]:
    from econ.llms import load_llm_catalog

    return list(load_llm_catalog())


@st.cache_data(max_entries=32, show_spinner=False)
def precisions(hardware: str) -> tuple[list[str], str]:
    from econ.hardware import get_hardware

    hw = get_hardware(hardware)
    return list(hw.native_precisions), hw.default_precision


@st.cache_data(max_entries=32, show_spinner=False)
def workload(model: str, scenario: str):
    from econ.throughput.calibration import get_workload

    w = get_workload(model, scenario)
    return {
        "input_tokens": w.input_tokens,
        "output_tokens": w.output_tokens,
        "tpot_limit_s": w.tpot_limit_s,
        "ttft_limit_s": w.ttft_limit_s,
    }


@st.cache_data(max_entries=32, show_spinner=False)
def simulation(
    hardware: str,
    model: str,
    precision: str | None,
    input_tokens: float,
    output_tokens: float,
    tpot_limit_s: float | None,
    ttft_limit_s: float | None,
    max_gpus: int | None,
) -> dict[str, Any]:
    """Simulated envelope, its SLO operating point, the speed of light (econ.throughput.simulator)
    and the operating point's out-of-sample error band with its warnings (the pair's own MLPerf
    miss, a layout beyond the calibrated ones; econ.throughput.errorbands)."""
    from econ.throughput import errorbands as eb
    from econ.throughput import simulator as sim

    common = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    envelope = sim.simulate_envelope(hardware, model, precision, max_gpus=max_gpus, **common)
    point = sim.operating_point(
        hardware,
        model,
        precision,
        tpot_limit_s=tpot_limit_s,
        ttft_limit_s=ttft_limit_s,
        max_gpus=max_gpus,
        strict=False,
        **common,
    )
    light = sim.speed_of_light(
        hardware,
        model,
        precision,
        tpot_limit_s=tpot_limit_s,
        ttft_limit_s=ttft_limit_s,
        max_gpus=max_gpus,
        **common,
    )
    tps = float(point.tokens_per_s_per_gpu)
    warnings = list(envelope.warnings)
    band = None
    if tps > 0:
        limits = {"tpot_limit_s": tpot_limit_s, "ttft_limit_s": ttft_limit_s}
        hw, llm, p = sim.resolve(hardware, model, precision)
        band, layout, _ = eb.simulated_band(hw, llm, p, point, {**limits, **common})
        warnings += [*band.warnings, *([layout] if layout else [])]
    return {
        "points": envelope.points,
        "provenance": dict(envelope.provenance),
        "warnings": warnings,
        "error_band": None if band is None else band.as_dict(),
        "point": point.as_dict(),
        "speed_of_light": float(light),
        # as `econ throughput simulate` reports it: how much faster physics would allow
        "headroom": float(sim.headroom_to_speed_of_light(point.tokens_per_s_per_gpu, light)),
    }


# --- power and fleet --------------------------------------------------------------------------------


@st.cache_data(max_entries=1, show_spinner=False)
def racks():
    from econ.racks import load_racks

    catalog_ = load_racks()
    return {
        key: {
            "name": r.name,
            "gpus_per_rack": r.gpus_per_rack,
            "kw_per_rack": r.kw_per_rack,
            "cooling": r.cooling,
            "capex_usd_per_rack": r.capex_usd_per_rack,
        }
        for key, r in catalog_.racks.items()
    }


@st.cache_data(max_entries=32, show_spinner=False)
def sizing(**kwargs) -> dict:
    """`econ size` for one hall (econ.racks.size: racks.toml figures, econ.sizing)."""
    from econ.racks import size

    return size(**kwargs)


@st.cache_data(max_entries=16, show_spinner=False)
def refresh(text: str, vintage: str, months: tuple[int, int] | None, power_mw: float | None):
    from econ.fleet import refresh_analysis

    span = None if months is None else range(months[0], months[1] + 1)
    result = refresh_analysis(loads(text), vintage, months=span, power_mw=power_mw)
    return {
        "table": result.table.reset_index(),
        "best_month": result.best_month,
        "npv_keep_usd": result.npv_keep_usd,
        "npv_best_usd": result.npv_best_usd,
        "gain_usd": result.gain_usd,
        "warnings": result.warnings,
    }


@st.cache_data(max_entries=16, show_spinner=False)
def refresh_size(text: str, vintage: str, months: tuple[int, int] | None):
    """What `refresh` would project (econ.fleet.refresh_size), counted without projecting."""
    from econ.fleet import refresh_size as size

    span = None if months is None else range(months[0], months[1] + 1)
    return size(loads(text), vintage, months=span)


@st.cache_data(max_entries=16, show_spinner=False)
def earliest_refresh(text: str, vintage: str) -> int:
    """The first refresh month the analysis takes by default (`econ refresh`'s): the vintage's
    purchase month, or the old fleet's first month where that is later."""
    from econ.fleet import first_refresh_month

    return first_refresh_month(loads(text), vintage)
