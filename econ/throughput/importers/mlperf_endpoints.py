"""MLPerf Endpoints and the MLCommons endpoint client: a run's `performance/result_summary.json`,
and a v1.0 submission tree read as one curve with a point per concurrency.

A run's `result_summary.json` (the endpoint client, also what the NVIDIA MLPerf Inference v6.1
result folders hold instead of LoadGen logs) gives whole-system figures: `n_samples_*`,
`duration_ns`, `state`, stat blocks `ttft`, `tpot`, `latency` in **nanoseconds** (`tpot` per
output token after the first chunk) with `percentiles` keyed by decimal strings ("99.0" or "99"),
`output_sequence_lengths.total` (all output tokens), `legacy_loadgen_window_duration_ns`, `tps`
and `run_config.load_pattern`.

Two throughput windows exist. The client's `tps` divides the output tokens by the LoadGen window
when `legacy_loadgen_window_duration_ns` is set (the figure MLPerf Inference publishes), else by
`duration_ns`; MLPerf Endpoints defines `system_tps = output_sequence_lengths.total /
(duration_ns / 1e9)` (Endpoints rules v1.0 §4.1). `window="reported"` takes the client's window,
`window="duration"` the Endpoints one; both figures are kept as columns and the one used is named
in the provenance.

Tokens/s per user has two definitions (both kept as columns, the chosen one in
`tokens_per_s_per_user`): v1.0 `tps_per_user = 1000 / TPOT p90 [ms]` (§4.1) and v0.7
`system_tps / concurrency`. The submission tree (`results/<system>/<model>/r<N>/` with
`point.yaml`, `system_desc.json`, `result_summary.json`; `results/<system>/system_power.json`)
adds the accelerator count (Σ `number_of_nodes` × `accelerators_per_node`, §8.2) and the
**provisioned** power of Appendix E (§4.5.2): a TDP-based figure the system is built to draw, not
a measurement. Nothing here reads a file outside the folder it was given or follows a link.
See ../shared/data/samples/FORMATS.md (MLPerf Endpoints) and mlcommons/endpoints_policies.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import io
import json
import math
import os
import re
import shutil
import stat as file_mode
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from econ import strict_json
from econ.files import ZIP_METHODS, inside_folders, size_text, zip_member_refusal
from econ.throughput.curve import Curve
from econ.throughput.importers._common import (
    MAX_NAME_CHARS,
    NOT_READ,
    NS_PER_S,
    CurveError,
    Provenance,
    SourceFile,
    apply_gpu_count,
    companion_refusal,
    description_not_used,
    finish_curve,
    json_kind,
    label_pairs,
    read_source,
    too_deep,
)

SUMMARY_NAME = "result_summary.json"
POINT_NAME = "point.yaml"
SYSTEM_DESC_NAME = "system_desc.json"
SYSTEM_POWER_NAME = "system_power.json"
MAX_FILE_BYTES = 1024 * 1024
"""Largest result summary or descriptor read [bytes] (`result_summary.json`, `point.yaml`,
`system_desc.json`, `system_power.json`, a systems JSON): the real ones are 1 to 16 kB (the v6.1
VR-NVL72 `result_summary.json`, histograms included, is 15 kB). Checked before parsing: JSON of
nothing but empty objects grows some 25 times once parsed (64 MB of `[{},{},...]`, which a zip
of 2.5 MB holds, took 1.6 GB)."""
MAX_TEXT_CHARS = MAX_NAME_CHARS
"""Longest name or label read from a descriptor [characters]; the real ones are a few dozen."""
MAX_POINTS = 512
"""Most measurement points read from one tree (the rules cap a curve at 32 points)."""
MAX_TREE_DEPTH = 6
MAX_TREE_ENTRIES = 20_000
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0}
WINDOWS = ("reported", "duration")
PER_USER_COLUMNS = {
    "v1.0": "tokens_per_s_per_user_p90",
    "v0.7": "tokens_per_s_per_user_by_concurrency",
}
PER_USER_DEFINITIONS = {
    "v1.0": "MLPerf Endpoints v1.0: 1000 / TPOT p90 [ms]",
    "v0.7": "MLPerf Endpoints v0.7: system tokens/s / concurrency",
}
STATES = ("complete", "interrupted")
POWER_BASIS = "provisioned (MLPerf Endpoints Appendix E), not measured"
# §4.5.2's overhead on the major components, by Appendix E's `cooling`.
OVERHEAD_FRACTION = {"liquid": 0.30, "air": 0.50}
W_PER_KW = 1000.0
BITS_PER_BYTE = 8.0
MAX_ZIP_MEMBERS = 5_000
MAX_ZIP_BYTES = 64 * 1024 * 1024
"""Most a submission archive may hold uncompressed [bytes]; a tree of points is a few MB."""
MAX_ZIP_NAME_BYTES = 255
"""Longest folder or file name a member may have [bytes] (NAME_MAX; less where the system says)."""
MAX_ZIP_PATH_BYTES = 4096
"""Longest path a member may unpack to [bytes] (PATH_MAX; less where the system says)."""
_STAGING_PREFIX = ".econ-unzip-"
_STAGING_RANDOM = 8  # characters tempfile.mkdtemp adds to the prefix
_POINT_DIR = re.compile(r"^r(\d+)$")
_REL_TOL = 1e-5  # the fixtures round stated figures to 4 decimals


DESCRIPTOR_EXPECTED = "an MLPerf Endpoints result summary or descriptor"
"""What a file `_read` reads is expected to be, in the refusal of one that grew past the limit."""


class EndpointsError(CurveError):
    """An Endpoints file or tree that cannot be read; the message names the file and field."""


# --- strict readers -------------------------------------------------------------------------------


def _reject_constant(name: str):
    raise ValueError(f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {text[:20]}")
    return value


def loads_json(text: str, where: str) -> dict:
    """One JSON object from text: no NaN/Infinity, no overflowing numbers, bounded nesting."""
    try:
        data = strict_json.load_json(
            text, parse_constant=_reject_constant, parse_float=_finite_float
        )
    except strict_json.OverlongNumberError as exc:
        raise EndpointsError(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise EndpointsError(
            f"{where}: invalid or truncated JSON at line {exc.lineno} column {exc.colno}: "
            f"{exc.msg}; expected one JSON object"
        ) from None
    except RecursionError:
        raise EndpointsError(f"{where}: {too_deep(text)}; expected one JSON object") from None
    except ValueError as exc:
        raise EndpointsError(
            f"{where}: {exc} in the JSON; expected finite numbers (NaN and Infinity are not "
            "measurements)"
        ) from None
    if not isinstance(data, dict):
        raise EndpointsError(f"{where}: the JSON is {json_kind(data)}; expected an object")
    return data


def _refuse_large(path: Path, size: int) -> None:
    """EndpointsError naming the file, its size and MAX_FILE_BYTES when it is over the limit."""
    if size > MAX_FILE_BYTES:
        raise EndpointsError(
            f"{path}: {size_text(size)} is larger than the {size_text(MAX_FILE_BYTES)} a result "
            "summary or descriptor can be (the real ones are a few kB); refused before it is "
            "parsed"
        )


def _read(path: Path) -> tuple[str, str]:
    """(UTF-8 text, SHA-256 of the bytes) of a file that is not a link and not too large."""
    if path.is_symlink():
        raise EndpointsError(f"{path}: is a symbolic link; links are not followed")
    if path.is_file():
        _refuse_large(path, path.stat().st_size)
    src = read_source(path, limit=MAX_FILE_BYTES, expected=DESCRIPTOR_EXPECTED)
    return src.text, src.sha256


def load_json(path: Path) -> dict:
    return loads_json(_read(path)[0], str(path))


MAX_YAML_DEPTH = 32
"""Most levels of mappings and lists a point.yaml may nest (the real ones nest 3: the file's
mapping, `runtime_settings`, `runtime_settings.runtime`); deeper is refused before the parser's
recursion runs out."""


class _AliasRefused(Exception):
    """An alias in a descriptor; `mark` is where it stands."""

    def __init__(self, mark):
        super().__init__()
        self.mark = mark


class _TooDeep(_AliasRefused):
    """A node nested deeper than MAX_YAML_DEPTH; `mark` is where it starts."""


def _alias_free_loader():
    """yaml.SafeLoader refusing aliases (a short file nesting aliases expands to gigabytes, the
    "billion laughs", and no descriptor needs one) and nodes nested more than MAX_YAML_DEPTH
    levels (each level is a recursive call of the composer)."""
    import yaml

    class AliasFreeLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise _AliasRefused(self.peek_event().start_mark)
            if self.depth >= MAX_YAML_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return AliasFreeLoader


def load_yaml(path: Path) -> dict:
    """A YAML mapping (safe loader: plain data only, no aliases); bad YAML is an EndpointsError."""
    import yaml

    text = _read(path)[0]
    try:
        data = yaml.load(text, Loader=_alias_free_loader())  # a SafeLoader subclass
    except _TooDeep as exc:
        raise EndpointsError(
            f"{path}: the YAML nests more than {MAX_YAML_DEPTH} levels of mappings and lists (at "
            f"line {exc.mark.line + 1} column {exc.mark.column + 1}); expected a point.yaml "
            "mapping, which nests 3"
        ) from None
    except _AliasRefused as exc:
        raise EndpointsError(
            f"{path}: YAML aliases are not allowed (an alias at line {exc.mark.line + 1} column "
            f"{exc.mark.column + 1}); expected a point.yaml mapping of plain values"
        ) from None
    except RecursionError:
        raise EndpointsError(f"{path}: the YAML is nested too deeply") from None
    except ValueError as exc:  # an over-long integer, a date such as 2026-13-45
        raise EndpointsError(
            f"{path}: a value cannot be read ({exc}); expected a point.yaml mapping"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise EndpointsError(
            f"{path}: invalid YAML{where}; expected a point.yaml mapping"
        ) from None
    if not isinstance(data, dict):
        raise EndpointsError(
            f"{path}: expected a YAML mapping of fields, got {type(data).__name__}"
        )
    return data


_MISSING = object()


def _lookup(data: Mapping, dotted: str):
    node = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _number(data: Mapping, dotted: str, where: str, *, required: bool = True, positive=True):
    """A finite real number at `dotted` (NaN when absent and not required)."""
    value = _lookup(data, dotted)
    if value is _MISSING or value is None:
        if required:
            raise EndpointsError(f"{where}: field {dotted} is missing; expected a number")
        return math.nan
    return _as_number(value, dotted, where, positive=positive)


def _as_number(value, name: str, where: str, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EndpointsError(
            f"{where}: field {name} is a {type(value).__name__}; expected a number"
        )
    try:
        out = float(value)
    except OverflowError:
        raise EndpointsError(f"{where}: field {name} is too large to be a number") from None
    if not math.isfinite(out):
        raise EndpointsError(f"{where}: field {name} is {out}; expected a finite number")
    if out < 0 or (positive and out == 0):
        kind = "positive" if positive else "non-negative"
        raise EndpointsError(f"{where}: field {name} is {out:g}; expected a {kind} number")
    return out


def _count(data: Mapping, dotted: str, where: str, *, required: bool = True) -> float:
    value = _number(data, dotted, where, required=required, positive=False)
    if not math.isnan(value) and not value.is_integer():
        raise EndpointsError(f"{where}: field {dotted} is {value:g}; expected a whole number")
    return value


def _text(data: Mapping, dotted: str, where: str) -> str:
    """The text of a scalar field ("" when absent); a list, a mapping or an over-long value is
    refused rather than turned into text."""
    value = _lookup(data, dotted)
    if value is _MISSING or value is None:
        return ""
    if not isinstance(value, str | int | float | datetime.date):
        raise EndpointsError(
            f"{where}: field {dotted} is a {type(value).__name__}; expected a text or a number"
        )
    text = str(value).strip()
    if len(text) > MAX_TEXT_CHARS:
        raise EndpointsError(
            f"{where}: field {dotted} is {len(text):,} characters long; expected at most "
            f"{MAX_TEXT_CHARS:,}"
        )
    return text


def _percentiles(data: Mapping, block: str, where: str) -> dict[float, float]:
    """A stat block's `percentiles` keyed by their value: "99.0" and "99" both give 99.0."""
    raw = _lookup(data, f"{block}.percentiles")
    if raw is _MISSING or raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise EndpointsError(f"{where}: field {block}.percentiles is not an object")
    out: dict[float, float] = {}
    for key in raw:
        try:
            level = float(str(key))
        except ValueError:
            raise EndpointsError(
                f"{where}: field {block}.percentiles has a key that is not a percentile; "
                'expected decimal keys such as "99.0" or "99"'
            ) from None
        value = _as_number(raw[key], f"{block}.percentiles.{key}", where, positive=False)
        if level in out and out[level] != value:
            raise EndpointsError(
                f"{where}: field {block}.percentiles gives percentile {level:g} twice with "
                "different values"
            )
        out[level] = value
    return out


def _latency_block(data: Mapping, block: str, where: str, completed: float) -> dict[str, float]:
    """mean, p50, p90, p95, p99 of a ns stat block, in seconds (NaN where absent)."""
    if _lookup(data, block) is _MISSING:
        return {}
    pct = _percentiles(data, block, where)
    mean = _number(data, f"{block}.avg", where, required=False)
    if math.isnan(mean) and completed > 0:
        mean = _number(data, f"{block}.total", where, required=False) / completed
    out = {"mean": mean / NS_PER_S}
    for stat, level in PERCENTILES.items():
        value = pct.get(level, math.nan)
        if stat == "p50" and math.isnan(value):
            value = _number(data, f"{block}.median", where, required=False)
        out[stat] = value / NS_PER_S
    return out


# --- one run ------------------------------------------------------------------------------------


def looks_like(record: Mapping) -> bool:
    """A result_summary.json of the endpoint client (or of an Endpoints submission point)."""
    return "n_samples_issued" in record and (
        "output_sequence_lengths" in record or "tpot" in record or "ttft" in record
    )


def looks_like_report(text: str) -> bool:
    """The endpoint client's `report.txt` (its summary for people, in ms), not its result."""
    head = text.lstrip()[:2000]
    return head.startswith("-") and "Summary" in head and "Total samples issued:" in head


def looks_like_system_desc(record: Mapping) -> bool:
    """A submission's `system_desc.json` (node types, accelerators per node), not a result."""
    return "node_types" in record and "n_samples_issued" not in record


def looks_like_text(text: str) -> bool:
    """The same test on the raw text, before it is parsed (detection must not parse twice)."""
    return (
        text.lstrip().startswith("{")
        and '"n_samples_issued"' in text
        and any(f'"{key}"' in text for key in ("output_sequence_lengths", "tpot", "ttft"))
    )


def summary_point(
    data: Mapping,
    where: str,
    *,
    window: str = "reported",
    allow_incomplete: bool = False,
    concurrency: float | None = None,
) -> tuple[dict, list[str], list[str]]:
    """One result_summary.json as a curve record, with its warnings and provenance notes.

    `concurrency` is the point's declared concurrency (a submission's point.yaml); without it the
    run's `run_config.load_pattern` gives it.
    """
    if window not in WINDOWS:
        raise EndpointsError(f"window {window!r}; expected one of {', '.join(WINDOWS)}")
    if not looks_like(data):
        raise EndpointsError(
            f"{where}: not an MLPerf Endpoints result_summary.json (expected the fields "
            "n_samples_issued and output_sequence_lengths, ttft or tpot)"
        )
    warnings: list[str] = []
    notes: list[str] = []
    state = _lookup(data, "state")
    complete = _lookup(data, "complete")
    if state is _MISSING or state is None:
        notes.append("the file records no state (complete or interrupted); read as complete")
    elif not isinstance(state, str) or state not in STATES:
        raise EndpointsError(
            f"{where}: field state is {state!r}; expected one of {', '.join(STATES)}"
        )
    interrupted = state == "interrupted" or complete is False
    if interrupted:
        what = f"the run did not finish (state {state}, complete {complete})"
        if not allow_incomplete:
            raise EndpointsError(
                f"{where}: field state: {what}; an interrupted run is not a measurement. "
                "Import it anyway with allow_incomplete (--allow-incomplete)"
            )
        warnings.append(f"{where}: {what}; imported because incomplete runs were allowed")

    issued = _count(data, "n_samples_issued", where)
    completed = _count(data, "n_samples_completed", where)
    failed = _count(data, "n_samples_failed", where, required=False)
    if completed == 0:
        raise EndpointsError(
            f"{where}: field n_samples_completed is 0; a run in which no request completed is "
            "not a measurement"
        )
    if completed > issued:
        raise EndpointsError(
            f"{where}: field n_samples_completed ({completed:g}) exceeds n_samples_issued "
            f"({issued:g})"
        )
    if failed > 0:
        warnings.append(
            f"{where}: {failed:g} of {issued:g} samples failed ({failed / issued:.2%}); the "
            "throughput counts the completed ones"
        )
    unaccounted = issued - completed - (0.0 if math.isnan(failed) else failed)
    if unaccounted > 0:
        warnings.append(
            f"{where}: {unaccounted:g} of {issued:g} issued samples neither completed nor failed "
            "(in flight when the run ended)"
        )
    duration_s = _number(data, "duration_ns", where) / NS_PER_S
    legacy_s = _number(data, "legacy_loadgen_window_duration_ns", where, required=False) / NS_PER_S
    output_total = _number(data, "output_sequence_lengths.total", where, required=False)
    reported_tps = _number(data, "tps", where, required=False)
    stated_system_tps = _number(data, "system_tps", where, required=False)
    if math.isnan(output_total):
        raise EndpointsError(
            f"{where}: field output_sequence_lengths.total is missing; expected the number of "
            "output tokens of the run (system tokens/s is computed from it)"
        )
    full = output_total / duration_s
    loadgen = output_total / legacy_s if not math.isnan(legacy_s) else math.nan
    if window == "duration" or math.isnan(loadgen):
        tps, window_s, window_name = full, duration_s, "duration_ns"
        basis = "duration_ns (the whole run)"
    else:
        tps, window_s, window_name = loadgen, legacy_s, "legacy_loadgen_window_duration_ns"
        basis = "legacy_loadgen_window_duration_ns (the LoadGen window)"
    notes.append(f"system output tokens/s over {basis}")
    if not math.isnan(loadgen):
        other = full if tps == loadgen else loadgen
        other_name = "duration_ns (the whole run)" if tps == loadgen else "the LoadGen window"
        warnings.append(
            f"{where}: system output tokens/s {tps:,.0f} over {basis}, {window_s:,.1f} s; over "
            f"{other_name} it is {other:,.0f} ({other / tps - 1:+.1%})"
        )
    for name, stated in (("tps", reported_tps), ("system_tps", stated_system_tps)):
        if math.isnan(stated):
            continue
        matches = [
            label
            for label, value in (("the LoadGen window", loadgen), ("duration_ns", full))
            if not math.isnan(value) and math.isclose(stated, value, rel_tol=_REL_TOL)
        ]
        if not math.isclose(stated, tps, rel_tol=_REL_TOL):
            warnings.append(
                f"{where}: field {name} is {stated:,.2f} but output_sequence_lengths.total over "
                f"the window used gives {tps:,.2f}"
                + (f" (it matches {matches[0]})" if matches else " (it matches neither window)")
            )

    pattern = _lookup(data, "run_config.load_pattern")
    pattern = pattern if isinstance(pattern, Mapping) else {}
    target_conc = _number(
        pattern, "target_concurrency", f"{where}: run_config.load_pattern", required=False
    )
    target_qps = _number(pattern, "target_qps", f"{where}: run_config.load_pattern", required=False)
    if concurrency is not None:
        if not math.isnan(target_conc) and target_conc != concurrency:
            raise EndpointsError(
                f"{where}: field run_config.load_pattern.target_concurrency is {target_conc:g} "
                f"but the point declares concurrency {concurrency:g}"
            )
        target_conc = float(concurrency)
    if pattern.get("type"):
        notes.append(f"load pattern {pattern.get('type')}")

    record: dict = {
        "concurrency": target_conc,
        "request_rate_per_s": target_qps,
        "output_tokens_per_s": tps,
        "output_tokens_per_s_loadgen_window": loadgen,
        "output_tokens_per_s_full_duration": full,
        "throughput_window": window_name,
        "curve_reading": "step",  # the rules draw the curve as steps between measured points
        "duration_s": window_s,
        "completed_requests": completed,
        "failed_requests": 0.0 if math.isnan(failed) else failed,
        "achieved_request_rate_per_s": _number(data, "qps", where, required=False),
    }
    for block, prefix in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("latency", "e2e_s")):
        for stat, value in _latency_block(data, block, where, completed).items():
            record[f"{prefix}_{stat}"] = value
    osl_mean = _number(data, "output_sequence_lengths.avg", where, required=False)
    record["output_tokens_mean"] = (
        osl_mean if not math.isnan(osl_mean) else output_total / completed
    )
    isl_total = _number(data, "input_sequence_lengths.total", where, required=False)
    isl_mean = _number(data, "input_sequence_lengths.avg", where, required=False)
    record["input_tokens_mean"] = isl_mean if not math.isnan(isl_mean) else isl_total / completed
    record["input_tokens_per_s"] = isl_total / window_s
    tpot_p90 = record.get("tpot_s_p90", math.nan)
    record["tokens_per_s_per_user_p90"] = 1.0 / tpot_p90 if tpot_p90 > 0 else math.nan
    stated_user = _number(data, "tps_per_user", where, required=False)
    if not math.isnan(stated_user) and not math.isclose(
        stated_user, record["tokens_per_s_per_user_p90"], rel_tol=_REL_TOL
    ):
        warnings.append(
            f"{where}: field tps_per_user is {stated_user:,.4f} but 1000 / TPOT p90 [ms] gives "
            f"{record['tokens_per_s_per_user_p90']:,.4f}"
        )
    record["tokens_per_s_per_user_by_concurrency"] = tps / target_conc
    return record, warnings, notes


def _per_user(records: list[dict], per_user: str, where: str) -> None:
    if per_user not in PER_USER_COLUMNS:
        raise EndpointsError(
            f"per-user definition {per_user!r}; expected one of {', '.join(PER_USER_COLUMNS)}"
        )
    column = PER_USER_COLUMNS[per_user]
    for record in records:
        value = record[column]
        if math.isnan(value):
            needs = "tpot.percentiles 90" if per_user == "v1.0" else "a target concurrency"
            raise EndpointsError(
                f"{where}: tokens/s per user ({PER_USER_DEFINITIONS[per_user]}) needs {needs}, "
                "which the result does not give"
                + ("; choose the v1.0 definition" if per_user == "v0.7" else "")
            )
        record["tokens_per_s_per_user"] = value
        record["tokens_per_s_per_user_definition"] = PER_USER_DEFINITIONS[per_user]


def _run_context(path: Path) -> tuple[str, str, str, Path | None]:
    """(platform, benchmark, scenario, systems JSON) from the MLPerf Inference results layout
    `<submitter>/results/<Platform>/<benchmark>/<scenario>/performance/result_summary.json`, whose
    `<submitter>/systems/<Platform>.json` describes the system (whether or not it exists)."""
    parts = path.absolute().parts
    if len(parts) >= 7 and parts[-2] == "performance" and parts[-6] == "results":
        systems = Path(*parts[:-6]) / "systems" / f"{parts[-5]}.json"
        return parts[-5], parts[-4], parts[-3], systems
    return "", "", "", None


def _systems_gpu_count(path: Path) -> tuple[float, str]:
    """number_of_nodes × accelerators_per_node of an MLPerf Inference systems JSON, and its name."""
    desc = load_json(path)
    count = _count(desc, "number_of_nodes", str(path)) * _count(
        desc, "accelerators_per_node", str(path)
    )
    if count <= 0:
        raise EndpointsError(f"{path}: number_of_nodes × accelerators_per_node is 0")
    return count, _text(desc, "system_name", str(path))


def parse(
    src: SourceFile,
    gpu_count: float | None = None,
    *,
    allow_incomplete: bool = False,
    window: str = "reported",
    per_user: str = "v1.0",
) -> Curve:
    """One endpoint-client run (`performance/result_summary.json`) as a one-point Curve."""
    where = str(src.path)
    if len(src.text) > MAX_FILE_BYTES:  # (characters: at most its bytes, counted only if over)
        _refuse_large(src.path, len(src.text.encode("utf-8")))
    data = loads_json(src.text, where)
    record, warnings, notes = summary_point(
        data, where, window=window, allow_incomplete=allow_incomplete
    )
    _per_user([record], per_user, where)
    prov = Provenance(tool="MLCommons endpoint client (result_summary.json)")
    prov.tool_version = _text(data, "version", where)
    prov.latency_unit = "ns (the endpoint client's unit)"
    hardware, model, scenario, systems = _run_context(src.path)
    prov.hardware, prov.model = hardware, model
    refusal = companion_refusal(src, systems) if systems is not None else ""
    if refusal:  # (decided before the file is looked for: nothing is said of what is there)
        prov.warnings.append(f"{NOT_READ}: {refusal}")
    if not refusal and systems is not None and systems.is_file():
        # read with --gpus too: a count that differs is then warned of
        try:
            record["gpu_count"], name = _systems_gpu_count(systems)
        except CurveError as exc:
            if gpu_count is None:
                raise
            prov.warnings.append(description_not_used(exc))
        else:
            prov.hardware = name or hardware
            prov.gpu_count_basis = f"{systems.name}: number_of_nodes × accelerators_per_node"
    record["workload"] = label_pairs([("scenario", scenario)])
    pattern = _lookup(data, "run_config.load_pattern")
    if isinstance(pattern, Mapping):
        record["config"] = label_pairs([("load_pattern", pattern.get("type"))])
    prov.notes.extend(notes)
    prov.notes.append(f"tokens/s per user: {PER_USER_DEFINITIONS[per_user]}")
    prov.warnings.extend(warnings)
    prov.warnings.append(
        "the endpoint client measures the whole system; the per-GPU figure is derived "
        "(system total / GPU count), not submitted"
    )
    if math.isnan(record["concurrency"]):
        prov.notes.append(
            "no target concurrency (an arrival-rate run): tokens/s per user under the v0.7 "
            "definition is unknown"
        )
    rows = [record]
    apply_gpu_count(rows, src, prov, gpu_count)
    curve = finish_curve(rows, src, prov)
    provenance = dict(
        curve.provenance,
        throughput_window=record["throughput_window"],
        tokens_per_s_per_user_definition=PER_USER_DEFINITIONS[per_user],
        curve_reading="step",
    )
    return Curve(points=curve.points, provenance=provenance, warnings=curve.warnings)


# --- the submission tree ------------------------------------------------------------------------


def accelerator_count(desc: Mapping, where: str) -> tuple[float, str]:
    """Σ number_of_nodes × Σ accelerators_per_node over node_types (§8.2), and the accelerators' names."""
    node_types = _lookup(desc, "node_types")
    if not isinstance(node_types, list) or not node_types:
        raise EndpointsError(
            f"{where}: field node_types is missing or empty; expected a list of node types, each "
            "with number_of_nodes and accelerator_info[].accelerators_per_node"
        )
    total, names = 0.0, []
    for i, node in enumerate(node_types):
        at = f"{where}: node_types[{i}]"
        if not isinstance(node, Mapping):
            raise EndpointsError(f"{at} is not an object")
        nodes = _count(node, "number_of_nodes", at)
        infos = node.get("accelerator_info")
        if not isinstance(infos, list):
            raise EndpointsError(f"{at}: field accelerator_info is missing; expected a list")
        for j, info in enumerate(infos):
            if not isinstance(info, Mapping):
                raise EndpointsError(f"{at}: accelerator_info[{j}] is not an object")
            total += nodes * _count(info, "accelerators_per_node", f"{at}.accelerator_info[{j}]")
            names.append(_text(info, "accelerator_model_name", f"{at}.accelerator_info[{j}]"))
    if total <= 0:
        raise EndpointsError(
            f"{where}: node_types list no accelerators (Σ number_of_nodes × "
            "accelerators_per_node is 0); expected at least one"
        )
    return total, "; ".join(dict.fromkeys(n for n in names if n)) or "accelerators"


class _Gap(Exception):
    """A power figure the descriptor leaves to MLCommons' Appendix D defaults."""


def _watts(block, dotted: str, where: str) -> float:
    """An Appendix E.1 sourced value (`value_w` or `value_kw`) in watts."""
    value = _lookup(block, dotted) if isinstance(block, Mapping) else _MISSING
    if value is _MISSING or value is None:
        raise _Gap(dotted)
    if not isinstance(value, Mapping):
        raise EndpointsError(f"{where}: field {dotted} is not an object with value_w or value_kw")
    if value.get("value_w") is not None:
        return _number(value, "value_w", f"{where}: {dotted}", positive=False)
    if value.get("value_kw") is not None:
        return _number(value, "value_kw", f"{where}: {dotted}", positive=False) * W_PER_KW
    raise EndpointsError(f"{where}: field {dotted} has neither value_w nor value_kw")


def _scale_up_w(up, where: str) -> float:
    if not isinstance(up, Mapping):
        raise EndpointsError(
            f"{where}: field scale_up_network is missing (method none if there is no scale-up switch)"
        )
    method = _text(up, "method", f"{where}: scale_up_network")
    if method == "none":
        return 0.0
    if method == "declared_tdp":
        return _count(up, "switch_count", where) * _watts(up, "tdp_per_switch", where)
    if method == "bandwidth_estimate":
        # The worked examples of Appendix C read the aggregate in TB/s: TB/s × 8 bit/B × pJ/bit = W.
        bandwidth = _number(up, "aggregate_bandwidth_tbps", where, positive=False)
        energy = _lookup(up, "energy_per_bit_pj")
        if not isinstance(energy, Mapping) or energy.get("value_pj") is None:
            raise _Gap("scale_up_network.energy_per_bit_pj")
        return bandwidth * BITS_PER_BYTE * _number(energy, "value_pj", where, positive=False)
    raise EndpointsError(
        f"{where}: field scale_up_network.method is {method!r}; expected none, declared_tdp or "
        "bandwidth_estimate"
    )


def provisioned_power_w(power: Mapping, where: str) -> tuple[float, str]:
    """The system's provisioned power [W] by Appendix E / §4.5.2, or (NaN, why not).

    System = Major × (1 + overhead) + Published + Scale-out switches, where Major sums
    component_sum sets (nodes × (CPU + accelerator + scale-up + counted NICs)), overhead is 0.30
    liquid / 0.50 air, Published sums published_system sets (nodes × node power) and
    node_scaling sets (rack power × nodes / nodes in the rack). A declared_provisioned_power
    governs when given. A figure left to Appendix D's defaults is not guessed: NaN with the reason.
    """
    cooling = _text(power, "cooling", where).lower()
    if cooling not in OVERHEAD_FRACTION:
        raise EndpointsError(
            f"{where}: field cooling is {cooling or 'missing'}; expected liquid or air"
        )
    try:
        if _lookup(power, "declared_provisioned_power") not in (_MISSING, None):
            return _watts(power, "declared_provisioned_power", where), "declared_provisioned_power"
        sets = _lookup(power, "node_sets")
        if not isinstance(sets, list) or not sets:
            raise EndpointsError(f"{where}: field node_sets is missing or empty; expected a list")
        fabric = _lookup(power, "scale_out")
        fabric = fabric if isinstance(fabric, Mapping) else {}
        present = fabric.get("present") is True
        nics = fabric.get("nics") if present else None
        nic_per_node = 0.0
        if isinstance(nics, Mapping) and nics.get("counted") is True:
            nic_per_node = _count(nics, "count_per_node", where) * _watts(
                nics, "tdp_per_nic", where
            )
        major = published = 0.0
        for i, node_set in enumerate(sets):
            at = f"{where}: node_sets[{i}]"
            if not isinstance(node_set, Mapping):
                raise EndpointsError(f"{at} is not an object")
            nodes = _count(node_set, "nodes_provisioned", at)
            method = _text(node_set, "power_method", at)
            if method == "component_sum":
                parts = node_set.get("components")
                if not isinstance(parts, Mapping):
                    raise EndpointsError(f"{at}: component_sum needs a components object")
                if parts.get("combined_cpu_accelerator") is not None:
                    per_node = _watts(parts, "combined_cpu_accelerator", at)
                else:
                    per_node = sum(
                        _count(parts, f"{unit}.count_per_node", at)
                        * _watts(parts, f"{unit}.tdp_per_unit", at)
                        for unit in ("cpu", "accelerator")
                    )
                per_node += _scale_up_w(parts.get("scale_up_network"), at)
                major += nodes * (per_node + nic_per_node)
            elif method == "published_system":
                published += nodes * _watts(node_set, "published_power", at)
            elif method == "node_scaling":
                rack = _count(node_set, "nodes_in_published_rack", at)
                if rack <= nodes:
                    raise EndpointsError(
                        f"{at}: field nodes_in_published_rack is {rack:g}; expected more than "
                        f"nodes_provisioned ({nodes:g})"
                    )
                published += _watts(node_set, "published_power", at) * nodes / rack
            else:
                raise EndpointsError(
                    f"{at}: field power_method is {method or 'missing'}; expected component_sum, "
                    "published_system or node_scaling"
                )
        switches = 0.0
        if present:
            listed = fabric.get("switches") or []
            if not isinstance(listed, list):
                raise EndpointsError(f"{where}: field scale_out.switches is not a list")
            for j, switch in enumerate(listed):
                at = f"{where}: scale_out.switches[{j}]"
                switches += _count(switch, "count", at) * _watts(switch, "power_per_switch", at)
    except _Gap as gap:
        return math.nan, (
            f"{gap.args[0]} is absent, so MLCommons would apply an Appendix D default that econ "
            "does not guess; no provisioned power"
        )
    total = major * (1 + OVERHEAD_FRACTION[cooling]) + published + switches
    return (
        total,
        f"Appendix E component sum ({cooling} cooling, overhead {OVERHEAD_FRACTION[cooling]:.0%})",
    )


def find_points(root: Path) -> list[Path]:
    """Folders holding a point.yaml under `root` (not following links; bounded depth and size)."""
    points: list[Path] = []
    entries = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        entries += len(dirnames) + len(filenames)
        if entries > MAX_TREE_ENTRIES:
            raise EndpointsError(
                f"{root}: more than {MAX_TREE_ENTRIES:,} files and folders; expected a "
                "submission tree (results/<system>/<model>/r<N>/)"
            )
        dirnames.sort()
        if POINT_NAME in filenames:
            points.append(here)
            dirnames[:] = []
        elif len(here.relative_to(root).parts) >= MAX_TREE_DEPTH:
            dirnames[:] = []
        if len(points) > MAX_POINTS:
            raise EndpointsError(f"{root}: more than {MAX_POINTS} measurement points")
    return points


def _system_power(root: Path, system_dir: Path) -> tuple[float, str]:
    """(provisioned W, basis) from `system_dir/system_power.json`, read only inside `root`."""
    if not inside_folders(system_dir, [root]):
        return math.nan, (
            f"{SYSTEM_POWER_NAME} would lie outside the folder given; import results/<system>/ "
            "or above to include provisioned power"
        )
    path = system_dir / SYSTEM_POWER_NAME
    if not path.is_file():
        return math.nan, f"no {SYSTEM_POWER_NAME} in {system_dir}: no provisioned power"
    return provisioned_power_w(load_json(path), str(path))


def _point_order(path: Path) -> tuple:
    match = _POINT_DIR.match(path.name)
    return (str(path.parent), int(match.group(1)) if match else math.inf, path.name)


def import_submission(
    root: str | os.PathLike,
    gpu_count: float | None = None,
    *,
    allow_incomplete: bool = False,
    window: str = "duration",
    per_user: str = "v1.0",
) -> Curve:
    """An MLPerf Endpoints submission tree as one Curve with a point per concurrency.

    `root` is the submission folder, its `results/`, one `results/<system>/` or one model folder;
    system_power.json is read only when it lies inside `root`. Per-GPU figures divide by the
    accelerators system_desc.json lists (Σ number_of_nodes × accelerators_per_node; `gpu_count`
    overrides). Power columns are provisioned (Appendix E, TDP-based), never measured:
    `provisioned_power_kw`, `output_tokens_per_s_per_kw_provisioned` [tokens/s/kW] and
    `j_per_output_token_provisioned` [J/token].
    """
    root = Path(root)
    if not root.is_dir():
        raise EndpointsError(f"{root}: not a folder; expected an MLPerf Endpoints submission tree")
    point_dirs = sorted(find_points(root), key=_point_order)
    if not point_dirs:
        raise EndpointsError(
            f"{root}: no measurement point (r<N>/point.yaml) found; expected "
            "results/<system>/<model>/r<N>/ with point.yaml, system_desc.json and "
            "result_summary.json"
        )
    records, labels, warnings, notes = [], [], [], []
    powers: dict[Path, tuple[float, str]] = {}
    digest = hashlib.sha256()
    version = ""
    for point_dir in point_dirs:
        rel = point_dir.relative_to(root)
        label = str(rel) if rel.parts else point_dir.name
        for name in (SUMMARY_NAME, SYSTEM_DESC_NAME):
            if not (point_dir / name).is_file():
                raise EndpointsError(
                    f"{point_dir}: no {name} beside point.yaml; each point folder r<N>/ holds "
                    f"{POINT_NAME}, {SYSTEM_DESC_NAME} and {SUMMARY_NAME}"
                )
        point = load_yaml(point_dir / POINT_NAME)
        point_where = str(point_dir / POINT_NAME)
        concurrency = _count(point, "concurrency", point_where)
        if concurrency <= 0:
            raise EndpointsError(
                f"{point_dir / POINT_NAME}: field concurrency is {concurrency:g}; expected a "
                "positive number of requests in flight"
            )
        text, sha = _read(point_dir / SUMMARY_NAME)
        digest.update(f"{rel}/{SUMMARY_NAME}:{sha}\n".encode())
        data = loads_json(text, str(point_dir / SUMMARY_NAME))
        version = version or _text(data, "version", str(point_dir / SUMMARY_NAME))
        record, point_warnings, point_notes = summary_point(
            data,
            str(point_dir / SUMMARY_NAME),
            window=window,
            allow_incomplete=allow_incomplete,
            concurrency=concurrency,
        )
        warnings += point_warnings
        notes += point_notes
        desc_path = point_dir / SYSTEM_DESC_NAME
        desc = load_json(desc_path)
        accelerators, names = accelerator_count(desc, str(desc_path))
        system = _text(desc, "system_name", str(desc_path)) or point_dir.parent.parent.name
        record["gpu_count"] = accelerators
        record["model"] = (
            _text(point, "model_name", point_where)
            or _text(desc, "model_id", str(desc_path))
            or point_dir.parent.name
        )
        record["hardware"] = f"{system} ({accelerators:g}x {names})"
        record["precision"] = _text(point, "model_precision", point_where) or _text(
            desc, "model_precision", str(desc_path)
        )
        record["workload"] = label_pairs(
            [
                (
                    "dataset",
                    _text(point, "dataset_name", point_where)
                    or _text(desc, "dataset_name", str(desc_path)),
                )
            ]
        )
        record["config"] = label_pairs([("offline", _text(point, "offline", point_where))])
        record["tool"] = "MLPerf Endpoints submission"
        record["tool_version"] = _text(data, "version", str(point_dir / SUMMARY_NAME))
        record["source_file"] = f"{rel.as_posix()}/{SUMMARY_NAME}" if rel.parts else SUMMARY_NAME
        record["file_sha256"] = sha
        system_dir = point_dir.parent.parent
        if system_dir not in powers:
            powers[system_dir] = _system_power(root, system_dir)
        power_w, basis = powers[system_dir]
        record["provisioned_power_kw"] = power_w / W_PER_KW
        record["output_tokens_per_s_per_kw_provisioned"] = record["output_tokens_per_s"] / (
            power_w / W_PER_KW
        )
        record["j_per_output_token_provisioned"] = power_w / record["output_tokens_per_s"]
        record["power_basis"] = POWER_BASIS
        if math.isnan(power_w):
            warnings.append(f"{label}: {basis}")
        else:
            notes.append(f"{system}: provisioned power {power_w / W_PER_KW:,.2f} kW ({basis})")
        max_conc = _number(
            point, "max_supported_concurrency", str(point_dir / POINT_NAME), required=False
        )
        if not math.isnan(max_conc):
            notes.append(
                f"{record['model']} on {system}: maximum supported concurrency {max_conc:g}"
            )
        records.append(record)
        labels.append(f"{label} (concurrency {concurrency:g})")
    _per_user(records, per_user, str(root))
    src = SourceFile(path=root, text="", sha256=digest.hexdigest())
    prov = Provenance(tool="MLPerf Endpoints submission", tool_version=version)
    prov.latency_unit = "ns (the endpoint client's unit)"
    prov.gpu_count_basis = (
        "system_desc.json: Σ number_of_nodes × accelerators_per_node (provisioned accelerators)"
    )
    apply_gpu_count(records, src, prov, gpu_count)
    prov.notes.extend(dict.fromkeys(notes))
    prov.notes.append(f"tokens/s per user: {PER_USER_DEFINITIONS[per_user]}")
    prov.warnings.extend(warnings)
    prov.warnings.append(
        "per-GPU throughput is derived: system tokens/s / the accelerators system_desc.json "
        "lists (provisioned, whether or not a point engages them)"
    )
    if any(not math.isnan(r["provisioned_power_kw"]) for r in records):
        prov.warnings.append(
            "tokens/s per kW and J/token use provisioned power (MLPerf Endpoints Appendix E: "
            "TDP-based, what the system is built to draw), not measured power"
        )
    curve = finish_curve(records, src, prov, labels=labels, keep_point_provenance=True)
    provenance = dict(
        curve.provenance,
        file_sha256=src.sha256,
        throughput_window="; ".join(sorted({r["throughput_window"] for r in records})),
        tokens_per_s_per_user_definition=PER_USER_DEFINITIONS[per_user],
        power_basis=POWER_BASIS,
        curve_reading="step",
        points=len(records),
    )
    return Curve(points=curve.points, provenance=provenance, warnings=curve.warnings)


def _shown(member: str, limit: int = 80) -> str:
    """A member's name as a message quotes it: cut to `limit` characters, saying how long."""
    return (
        repr(member)
        if len(member) <= limit
        else f"{member[:limit]!r}... ({len(member):,} characters)"
    )


def _fs_limit(folder: Path, key: str, bound: int) -> int:
    """os.pathconf(folder, key) where the system states it, never above `bound`."""
    try:
        value = os.pathconf(folder, key)
    except (OSError, ValueError, AttributeError):
        return bound
    return min(value, bound) if value > 0 else bound


def _zip_plan(
    archive: zipfile.ZipFile, dest: Path, name: str
) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """The files of `archive` with their path parts, after every check that needs no reading:
    raises EndpointsError naming the zip and the first member that cannot be unpacked."""
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise EndpointsError(
            f"{name}: {len(members):,} members; a submission archive holds at most "
            f"{MAX_ZIP_MEMBERS:,}"
        )
    probe = dest if dest.is_dir() else dest.parent
    name_max = _fs_limit(probe, "PC_NAME_MAX", MAX_ZIP_NAME_BYTES)
    # what a member's relative path may take of PATH_MAX (which counts the final NUL byte)
    room = (
        _fs_limit(probe, "PC_PATH_MAX", MAX_ZIP_PATH_BYTES)
        - len(os.fsencode(os.path.abspath(dest)))
        - len(_STAGING_PREFIX)
        - _STAGING_RANDOM
        - 3
    )
    files: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
    seen: dict[tuple[str, ...], bool] = {}
    folders: set[tuple[str, ...]] = set()
    declared = 0
    for member in members:
        shown = f"{name}: member {_shown(member.filename)}"
        refusal = zip_member_refusal(member)
        if refusal:
            raise EndpointsError(f"{shown} {refusal}; expected a submission archive econ reads")
        posix = member.filename.replace("\\", "/")
        path = PurePosixPath(posix)
        if (
            path.is_absolute()
            or ".." in path.parts
            or (path.parts and ":" in path.parts[0])
            or not path.parts
        ):
            raise EndpointsError(
                f"{shown} points outside the archive's folder; expected relative paths"
            )
        mode = member.external_attr >> 16
        # many writers store permission bits only (type 0): those are plain files
        if file_mode.S_IFMT(mode) not in (0, file_mode.S_IFREG, file_mode.S_IFDIR):
            raise EndpointsError(f"{shown} is a link or special file; expected plain files")
        longest = max(len(os.fsencode(part)) for part in path.parts)
        if longest > name_max:
            raise EndpointsError(
                f"{shown} has a folder or file name of {longest:,} bytes, too long to unpack; "
                f"expected names of at most {name_max:,} bytes"
            )
        length = len(os.fsencode(path.as_posix()))
        if length > room:
            raise EndpointsError(
                f"{shown} has a path of {length:,} bytes, too long to unpack here; expected "
                f"paths of at most {max(room, 0):,} bytes"
            )
        is_folder = posix.endswith("/")
        if path.parts in seen:
            if seen[path.parts] != is_folder:
                raise EndpointsError(
                    f"{shown} is both a file and a folder in the archive; expected each path "
                    "to be one file or one folder"
                )
            raise EndpointsError(f"{shown} appears twice in the archive; expected each path once")
        seen[path.parts] = is_folder
        folders.update(path.parts[:i] for i in range(1, len(path.parts)))
        if is_folder:
            folders.add(path.parts)
            continue
        declared += member.file_size
        if declared > MAX_ZIP_BYTES:
            raise EndpointsError(
                f"{name}: more than {MAX_ZIP_BYTES / 1e6:.0f} MB uncompressed (as its members "
                f"declare, up to {_shown(member.filename)}); a submission archive is a few MB"
            )
        files.append((member, path.parts))
    for member, parts in files:
        if parts in folders:
            raise EndpointsError(
                f"{name}: member {_shown(member.filename)} is both a file and a folder in the "
                "archive; expected each path to be one file or one folder"
            )
    return files


def _unpack_member(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, name: str, written: int
) -> int:
    """Write one member to `target` (which must not exist) and return the running byte total;
    reading stops as soon as the member gives more than it declares or the archive more than
    MAX_ZIP_BYTES."""
    shown = f"{name}: member {_shown(member.filename)}"
    size = 0
    with archive.open(member) as source, open(target, "xb") as out:
        while chunk := source.read(1 << 16):
            size += len(chunk)
            written += len(chunk)
            if size > member.file_size:
                raise EndpointsError(
                    f"{shown} holds more than the {member.file_size:,} bytes it declares; "
                    "refused as a zip bomb"
                )
            if written > MAX_ZIP_BYTES:
                raise EndpointsError(
                    f"{name}: more than {MAX_ZIP_BYTES / 1e6:.0f} MB uncompressed; a "
                    "submission archive is a few MB"
                )
            out.write(chunk)
    return written


def _unpack_problem(exc: BaseException, member: zipfile.ZipInfo, name: str) -> str:
    """What went wrong while unpacking `member`, in words (never the member's content)."""
    shown = f"{name}: member {_shown(member.filename)}"
    if isinstance(exc, zipfile.BadZipFile | zlib.error | EOFError):
        return (
            f"{shown} is damaged or truncated (its data fails the CRC check or does not "
            "decompress); expected an intact archive"
        )
    if isinstance(exc, NotImplementedError):
        methods = ", ".join(ZIP_METHODS.values())
        return f"{shown} uses a zip feature econ cannot read; expected plain {methods} members"
    if isinstance(exc, RuntimeError):
        return (
            f"{shown} cannot be read (encrypted, or compressed with a method this installation "
            "lacks); expected an unencrypted archive"
        )
    code = getattr(exc, "errno", None)
    if code == errno.ENAMETOOLONG:
        return f"{shown} has a path too long to unpack here; expected names of ordinary length"
    if isinstance(exc, FileExistsError | IsADirectoryError | NotADirectoryError) or code in (
        errno.EEXIST,
        errno.EISDIR,
        errno.ENOTDIR,
    ):
        return (
            f"{shown} clashes with another member of the same name (a file and a folder, or "
            "names that differ only in case); expected each path to be one file or one folder"
        )
    reason = getattr(exc, "strerror", None) or type(exc).__name__
    return f"{shown} could not be unpacked ({reason})"


def _move_into(staging: Path, dest: Path, name: str) -> None:
    """Move what `staging` holds into `dest`, all of it or (on any failure) none of it."""
    moved: list[Path] = []
    try:
        for child in sorted(staging.iterdir()):
            target = dest / child.name
            if os.path.lexists(target):
                raise EndpointsError(
                    f"{name}: member {_shown(child.name)} would replace something already in "
                    "the destination folder; expected to unpack into an empty folder"
                )
            os.replace(child, target)
            moved.append(target)
    except BaseException:
        for target in moved:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        raise


def extract_submission_zip(content: bytes, dest: Path, name: str = "upload.zip") -> Path:
    """Unpack a zipped submission tree into `dest` (an empty folder) and return `dest`.

    Every check that needs no reading runs before anything is written: member paths must be
    relative and stay inside `dest` (no "..", no absolute or drive paths); links, special files
    and encrypted members are refused; no path may appear twice or be both a file and a folder;
    names are at most 255 bytes and paths fit the file system (4,096 bytes); compression is
    stored, deflate, bzip2 or lzma; at most MAX_ZIP_MEMBERS members, MAX_ZIP_BYTES uncompressed as
    declared and no member compressed more than econ.files.MAX_ZIP_RATIO times (a zip bomb). While reading,
    the bytes are counted again (a member may not give more than it declares, nor the archive
    more than MAX_ZIP_BYTES). Members are unpacked into a hidden folder inside `dest` and moved
    into place only when all of them are; a damaged member (bad CRC, bad compressed data, an
    unsupported method) or a file-system error is an EndpointsError naming the zip and the
    member, and leaves nothing behind.
    """
    dest = Path(dest)
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError):
        raise EndpointsError(
            f"{name}: not a zip archive (or a damaged one); expected a .zip of an MLPerf "
            "Endpoints submission folder (results/<system>/<model>/r<N>/), or a result file "
            "under its own suffix (.json, .jsonl, .csv, .txt)"
        ) from None
    with archive:
        files = _zip_plan(archive, dest, name)
        made_dest = not dest.exists()
        try:
            dest.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=dest))
        except OSError as exc:
            if made_dest:
                shutil.rmtree(dest, ignore_errors=True)
            raise EndpointsError(
                f"{name}: the archive could not be unpacked ({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            written = 0
            for member, parts in files:
                try:
                    target = staging.joinpath(*parts)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    written = _unpack_member(archive, member, target, name, written)
                except EndpointsError:
                    raise
                except (
                    OSError,
                    EOFError,
                    RuntimeError,
                    NotImplementedError,
                    zipfile.BadZipFile,
                    zlib.error,
                ) as exc:
                    raise EndpointsError(_unpack_problem(exc, member, name)) from None
            try:
                _move_into(staging, dest, name)
            except OSError as exc:
                raise EndpointsError(
                    f"{name}: the archive could not be moved into place "
                    f"({exc.strerror or type(exc).__name__})"
                ) from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            if made_dest:
                shutil.rmtree(dest, ignore_errors=True)
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return dest
