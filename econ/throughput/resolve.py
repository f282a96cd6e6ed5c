"""Resolve a scenario's throughput source to tokens/s per GPU at its SLO, with provenance warnings.

A scenario gives its throughput as a number, a measured curve (a benchmark output file or an MLPerf
catalog row) or the simulator. The batch compiler calls `resolve_throughput` once per distinct
source and SLO (results are cached), so the engine only ever sees a number per row.

The cache key holds the source as written and, for a curve file, the file's identity and version
as the file system states it (device, inode, size, modification and change times in ns): a file
edited or replaced in a long-running process (the app) is read again, not served from the cache.
The cache is emptied, as every cache of catalog data is, once models/ has changed (its MLPerf
rows, hardware and model catalogs: econ.catalog.catalog_cache).
The SHA-256 of the content a curve was last resolved from (the importer's) is kept for the
projection's provenance stamp (`curve_sha256`).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from econ.catalog import catalog_cache
from econ.errors import InputError
from econ.scenario.gain_models import ServiceLevel, Throughput
from econ.throughput.match import curve_mismatches, served_model


class ThroughputSourceError(InputError):
    """A throughput source that cannot give a figure (file, catalog row, model, SLO)."""


@dataclass(frozen=True)
class ResolvedThroughput:
    """tokens/s per GPU of a source at its SLO, where it came from, and what to watch out for."""

    tokens_per_s_per_gpu: float
    source: str
    warnings: tuple[str, ...] = ()
    speed_of_light_tokens_per_s_per_gpu: float | None = None
    input_tokens_per_output_token: float | None = None
    """Input tokens served per output token at the operating point, where the source records it."""
    input_ratio_source: str = ""
    """What the ratio was read from (the curve's token rates or lengths, the simulator's lengths)."""
    curve_sha256: str = ""
    """SHA-256 of the measured curve file's content the figure was read from ("" for others)."""
    limits_text: str = ""
    """The latency limits the figure meets when the source adds its own (a simulated MLPerf
    scenario's); "" when they are the scenario's `throughput.slo` alone (`at_slo`)."""


def resolve_throughput(
    section: Throughput, hardware: str, texts: tuple[str, ...] = ()
) -> ResolvedThroughput | None:
    """The operating point of a measured or simulated source; None for a fixed figure.

    Parameters
    ----------
    section : the scenario's (or vintage's) throughput section
    hardware : the fleet's hardware key (default hardware of a simulated source; checked
        against the silicon of a catalog row and the hardware a measured curve file states)
    texts : the scenario's name and description, which may name the model it serves (compared,
        with the section's own, against the model a measured curve file states)
    """
    if section.measured is None and section.simulated is None:
        return None
    model = served_model(
        section.simulated.model if section.simulated is not None else "",
        section.history.model if section.history is not None else "",
        *texts,
        section.source,
    )
    key = json.dumps(
        {
            "measured": None if section.measured is None else section.measured.model_dump(),
            "simulated": None if section.simulated is None else section.simulated.model_dump(),
            "slo": section.slo.model_dump(),
            "hardware": hardware,
            "model": model,
            "curve_file": _file_version(section.measured.curve)
            if section.measured is not None and section.measured.curve
            else None,
            "reach": curve_reach(section.measured.curve)
            if section.measured is not None and section.measured.curve
            else None,
        },
        sort_keys=True,
        default=str,
    )
    return _resolve(key)


def at_slo(slo: ServiceLevel, resolved: ResolvedThroughput | None = None) -> str:
    """How a resolved figure relates to the scenario's SLO: 'at the SLO', or, when
    `throughput.slo` sets no limit, that none was applied (not "at the SLO"); the limits the
    source applied itself when it did (`ResolvedThroughput.limits_text`)."""
    if resolved is not None and resolved.limits_text:
        return resolved.limits_text
    limits = (slo.ttft_p99_s, slo.tpot_p99_s, slo.min_tokens_per_s_per_user)
    if slo.latency_limits or any(limit is not None for limit in limits):
        return "at the SLO"
    return "with no latency limit (no SLO given)"


def curve_reach(curve: str) -> list[str]:
    """The folders an importer may open files in beside a scenario's measured curve file (an
    MLPerf system description): the curve's own folder and those of --allow-paths
    (`econ.scenario.paths.allowed_folders`), never more than the curve path itself could name.
    A submission's `systems/<Platform>.json` above the curve's folder is read only when such a
    folder holds it; a file named on the command line reaches its whole submission
    (`econ.throughput.importers._common.result_reach`)."""
    from econ.scenario.paths import allowed_folders

    return [os.path.dirname(os.path.abspath(curve)), *map(str, allowed_folders())]


def _file_version(path: str) -> list[int] | None:
    """The file's identity and version as the file system states it: (device, inode, size,
    mtime, ctime in ns); None when it cannot be stated (the import then names the problem).
    The change time moves on every write, even one that restores the modification time."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


_CURVE_SHA256: dict[str, str] = {}
"""Curve file path -> SHA-256 of the content it was last resolved from."""
_CURVE_SHA256_MAX = 1024


def curve_sha256(path: str) -> str:
    """SHA-256 of a measured curve file as it was last resolved in this process (the content the
    figure came from), else of its content now (the importer's reading); "" when unreadable."""
    if path in _CURVE_SHA256:
        return _CURVE_SHA256[path]
    from econ.throughput.importers._common import read_source

    try:
        return read_source(path).sha256
    except InputError:
        return ""


@catalog_cache(maxsize=256)
def _resolve(key: str) -> ResolvedThroughput:
    spec = json.loads(key)
    slo = ServiceLevel.model_validate(spec["slo"])
    if spec["measured"] is not None:
        return _measured(spec["measured"], slo, spec["hardware"], spec["model"], spec["reach"])
    return _simulated(spec["simulated"], slo, spec["hardware"])


MEASURED = "throughput.measured"
"""The section a measured source's refusals name (in a vintage too: its own throughput)."""


def check_measured_file(section: Throughput) -> None:
    """ThroughputSourceError when the measured curve file of `section` cannot be opened as the
    projection opens it (missing, unreadable, a FIFO or a device, over its size limit), in the
    projection's words, without importing it: the app's check of a form (the content is read
    when projecting, and by `econ validate`, which projects)."""
    if section.measured is None or not section.measured.curve:
        return
    from econ.throughput.importers import check_file

    try:
        check_file(section.measured.curve, section.measured.format)
    except InputError as exc:
        raise ThroughputSourceError(f"{MEASURED}: {exc}") from None


def _measured(
    measured: dict, slo: ServiceLevel, hardware: str, model: str | None, reach: list[str] | None
) -> ResolvedThroughput:
    from econ.benchmarks import catalog_curve
    from econ.throughput.importers import import_files
    from econ.throughput.importers._common import NOT_READ
    from econ.throughput.operating_point import operating_point

    where = MEASURED
    curve = None
    try:
        if measured["curve"]:
            curve = import_files(
                [Path(measured["curve"])], measured["format"], measured["gpus"], within=reach
            )
            source = f"measured curve {measured['curve']}"
        else:
            query = measured["catalog_id"] or dict(measured["catalog_query"])
            curve = catalog_curve(query, hardware=hardware or None)
            source = f"MLPerf catalog {measured['catalog_id'] or measured['catalog_query']}"
        point = operating_point(
            curve,
            ttft_p99_s=slo.ttft_p99_s,
            tpot_p99_s=slo.tpot_p99_s,
            min_tokens_per_s_per_user=slo.min_tokens_per_s_per_user,
            latency_limits=slo.latency_limits or None,
            workload=measured["workload"] or None,
        )
    except InputError as exc:
        hint = ""
        if "GPU count" in str(exc):  # (and why no system description gave it, where one did not)
            unread = [w for w in getattr(curve, "warnings", ()) if w.startswith(NOT_READ)]
            hint = f" (set throughput.measured.gpus{''.join(f'; {w}' for w in unread)})"
        raise ThroughputSourceError(f"{where}: {exc}{hint}") from None
    fit = _curve_fit(curve, measured["curve"], hardware, model) if measured["curve"] else []
    said = (*fit, *curve.warnings, *getattr(point, "warnings", ()))
    # the importers speak of the command line's --gpus; a scenario sets throughput.measured.gpus
    warnings = tuple(dict.fromkeys(re.sub(r"--gpus(?: N)?", f"{where}.gpus", w) for w in said))
    ratio, ratio_source = input_ratio_at(point)
    sha = str(curve.provenance.get("file_sha256", "")) if measured["curve"] else ""
    if sha:
        if len(_CURVE_SHA256) >= _CURVE_SHA256_MAX:
            _CURVE_SHA256.clear()
        _CURVE_SHA256[measured["curve"]] = sha
    return ResolvedThroughput(
        float(point.tokens_per_s_per_gpu),
        source,
        warnings,
        input_tokens_per_output_token=ratio,
        input_ratio_source=ratio_source,
        curve_sha256=sha,
    )


def _curve_fit(curve, path: str, hardware: str, model: str | None) -> list[str]:
    """Warnings when a measured curve file's model or hardware is not the scenario's, or when
    the file does not state them (the app's check before a curve's figure is used)."""
    differences, unknowns = curve_mismatches(curve.provenance, curve.points, hardware, model)
    said = [f"the measured curve {path} is not the scenario's: {d}" for d in differences]
    scenario = {"hardware": f"the fleet's {hardware}", "model": f"the scenario's {model}"}
    said += [
        f"the measured curve {path} does not state its {name}: not compared with {scenario[name]}"
        for name in unknowns
        if name == "hardware" or model is not None
    ]
    return said


def input_ratio_at(point) -> tuple[float | None, str]:
    """Input tokens per output token at an operating point, and what it was read from.

    The measured input and output token rates where the curve records both (they weigh each
    request by its lengths, as revenue does), else its mean input and output lengths per
    request; None where the curve records neither.
    """
    output = float(point.tokens_per_s_per_gpu)
    rate = float(point.input_tokens_per_s_per_gpu)
    if math.isfinite(rate) and rate >= 0 and math.isfinite(output) and output > 0:
        return rate / output, "the curve's input and output token rates at the operating point"
    isl = float(point.values.get("input_tokens_mean", math.nan))
    osl = float(point.values.get("output_tokens_mean", math.nan))
    if math.isfinite(isl) and isl >= 0 and math.isfinite(osl) and osl > 0:
        return isl / osl, "the curve's mean input and output lengths at the operating point"
    return None, ""


def _simulated(simulated: dict, slo: ServiceLevel, hardware: str) -> ResolvedThroughput:
    from econ.throughput import calibration as cal
    from econ.throughput import errorbands as eb
    from econ.throughput import simulator as sim

    where = "throughput.simulated"
    try:
        hw, llm, precision = sim.resolve(
            simulated["hardware"] or hardware, simulated["model"], simulated["precision"] or None
        )
        isl, osl = simulated["input_tokens"], simulated["output_tokens"]
        tpot, ttft = slo.tpot_p99_s, slo.ttft_p99_s
        draft, accepted = 0, 1.0
        limits_text = ""
        if simulated["mlperf_scenario"]:
            w = cal.get_workload(llm.key, simulated["mlperf_scenario"])
            isl = w.input_tokens if isl is None else isl
            osl = w.output_tokens if osl is None else osl
            tpot = w.tpot_limit_s if tpot is None and math.isfinite(w.tpot_limit_s) else tpot
            ttft = w.ttft_limit_s if ttft is None and math.isfinite(w.ttft_limit_s) else ttft
            draft, accepted = w.draft_tokens, w.accepted_tokens
            limits_text = _mlperf_limits_text(slo, tpot, ttft, simulated["mlperf_scenario"])
        workload = {
            "input_tokens": isl,
            "output_tokens": osl,
            "tpot_limit_s": tpot,
            "ttft_limit_s": ttft,
            "draft_tokens": draft,
            "accepted_tokens": accepted,
        }
        point = sim.operating_point(hw, llm, precision, **workload)
        ceiling = sim.speed_of_light(hw, llm, precision, **workload)
    except InputError as exc:
        raise ThroughputSourceError(f"{where}: {exc}") from None
    _, provenance = cal.load_efficiency(hw.key, precision)
    warnings = [
        f"simulated throughput ({llm.key} on {hw.key}, {precision}): a model estimate, not a "
        "measurement"
    ]
    if hardware and hw.key != hardware:
        # as a measured curve of other hardware is named (`_curve_fit`)
        warnings.append(
            f"throughput.simulated.hardware is {hw.key}, not the scenario's fleet hardware "
            f"{hardware}: the figure is of GPUs the fleet does not have"
        )
    source = str(provenance.get("calibration_source", provenance.get("efficiency", "")))
    if provenance.get("efficiency") != "calibrated" or source.startswith("transferred"):
        warnings.append(f"the simulator's coefficients for {hw.key} {precision}: {source}")
    tps = float(point.tokens_per_s_per_gpu)
    try:
        band, layout, _ = eb.simulated_band(hw, llm, precision, point, workload)
    except InputError as exc:
        raise ThroughputSourceError(f"{where}: {exc}") from None
    warnings.append(band.description())
    warnings += band.warnings
    if layout:
        warnings.append(layout)
    warnings.append(
        f"speed of light {ceiling:,.0f} tokens/s per GPU at this SLO: software gains are capped "
        f"there, {float(sim.headroom_to_speed_of_light(tps, ceiling)):.0%} above today's "
        "operating point"
    )
    return ResolvedThroughput(
        tps,
        f"simulator: {llm.key} on {hw.key} at {precision}",
        tuple(warnings),
        float(ceiling),
        # Each simulated request prefills isl tokens and decodes osl.
        input_tokens_per_output_token=float(isl) / float(osl),
        input_ratio_source=f"the simulator's prefill and decode lengths ({isl:g} / {osl:g} tokens)",
        limits_text=limits_text,
    )


def _mlperf_limits_text(slo: ServiceLevel, tpot_s, ttft_s, scenario: str) -> str:
    """The p99 limits a simulated MLPerf scenario was held to, and whose they are: MLPerf's fill
    the limits `throughput.slo` leaves open ("" when MLPerf adds none, as in Offline)."""
    added = (slo.tpot_p99_s is None and tpot_s is not None) or (
        slo.ttft_p99_s is None and ttft_s is not None
    )
    if not added:
        return ""
    parts = [f"TPOT <= {tpot_s * 1000:g} ms"] if tpot_s is not None else []
    parts += [f"TTFT <= {ttft_s:g} s"] if ttft_s is not None else []
    own = slo.tpot_p99_s is not None or slo.ttft_p99_s is not None
    whose = ("throughput.slo's and " if own else "") + f"MLPerf {scenario}'s"
    return f"at p99 {', '.join(parts)} ({whose} limits)"


@dataclass(frozen=True)
class FittedRate:
    """A compound annual gain rate fitted to benchmark history, with its caveats."""

    rate_annual: float
    description: str
    caveats: tuple[str, ...]


def resolve_history(section: Throughput, hardware: str) -> FittedRate | None:
    """The compound gain rate of the scenario's history source; None without one."""
    if section.history is None:
        return None
    return _history(json.dumps({**section.history.model_dump(), "fleet": hardware}, sort_keys=True))


@catalog_cache(maxsize=64)
def _history(key: str) -> FittedRate:
    from econ.throughput.history import gain_history

    spec = json.loads(key)
    try:
        fitted = gain_history(
            model=spec["model"],
            scenario=spec["scenario"],
            hardware=spec["hardware"] or spec["fleet"],
            submitter=spec["submitter"] or None,
        )
    except InputError as exc:
        raise ThroughputSourceError(f"throughput.history: {exc}") from None
    if not math.isfinite(fitted.rate_annual):
        raise ThroughputSourceError(
            f"throughput.history: no rate could be fitted ({fitted.description}); expected at "
            "least two rounds of results"
        )
    return FittedRate(float(fitted.rate_annual), fitted.description, tuple(fitted.caveats))
