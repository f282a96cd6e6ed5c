"""What every importer shares: reading a file, its hash, JSON/JSONL records, unit checks, and
turning parsed records into a validated `Curve`.

Importers parse their tool's layout into *records*: plain dicts holding Curve columns in SI units
(seconds, tokens/s) plus the labels `workload` and `config`; `finish_curve` then derives what the
file implies (totals, per-GPU and per-user rates), refuses silent zeros, NaN, negative values and
duplicate load levels, checks that the latencies are in the unit the file claims, and stamps
provenance (tool, version, file, SHA-256, model, hardware, precision) on every point.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from econ.errors import InputError
from econ.throughput.curve import Curve, with_all_columns

MS_PER_S = 1000.0
NS_PER_S = 1e9
US_PER_S = 1e6

# Plausible ranges used to detect a latency unit that is off by 1000. TPOT outside
# [20 us, 30 s] means a per-user speed above 50,000 or below 0.03 tokens/s, which no LLM server
# produces; TTFT below 50 us is faster than a loopback HTTP round trip, above a day is not a run.
TPOT_S_MIN, TPOT_S_MAX = 2e-5, 30.0
TTFT_S_MIN, TTFT_S_MAX = 5e-5, 86_400.0
# A system cannot emit more than (requests in flight) / TPOT tokens/s; allow 5x for the gap
# between mean(1/TPOT) and 1/mean(TPOT) and for bursts.
LITTLE_RATIO_MAX = 5.0

LATENCY_PREFIXES = ("ttft_s_", "tpot_s_", "e2e_s_")


class CurveError(InputError):
    """A throughput file that cannot be turned into a curve; the message names the file."""


class LatencyUnitError(CurveError):
    """Latencies whose values contradict the unit the file states (typically ms read as s)."""


@dataclass(frozen=True)
class SourceFile:
    """One input file: where it is, its text and its SHA-256."""

    path: Path
    text: str
    sha256: str

    @property
    def name(self) -> str:
        return self.path.name

    def error(self, message: str) -> CurveError:
        return CurveError(f"{self.path}: {message}")


def read_source(path: str | Path) -> SourceFile:
    """Read a file as UTF-8 text and hash its bytes; an empty or binary file is an error."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CurveError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CurveError(f"{path}: is a folder, expected a benchmark result file") from None
    except OSError as exc:
        raise CurveError(f"{path}: cannot be read ({exc.strerror})") from None
    if not raw.strip():
        raise CurveError(f"{path}: the file is empty; expected a benchmark result")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CurveError(
            f"{path}: not a UTF-8 text file (byte {exc.start}); expected JSON, CSV or a text report"
        ) from None
    if "\x00" in text:
        raise CurveError(f"{path}: binary content; expected JSON, CSV or a text report")
    return SourceFile(path=path, text=text, sha256=hashlib.sha256(raw).hexdigest())


def json_records(src: SourceFile) -> list[dict]:
    """The JSON objects in a file: one object, a list of objects, or JSON Lines.

    Python's json accepts the bare `Infinity` and `NaN` tokens SGLang writes.
    """
    text = src.text.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as whole_error:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as line_error:
                exc = whole_error if number == 1 and not records else line_error
                where = (
                    f"line {exc.lineno} column {exc.colno}"
                    if exc is whole_error
                    else f"line {number} column {exc.colno}"
                )
                raise src.error(
                    f"invalid or truncated JSON at {where}: {exc.msg}; "
                    "expected one JSON object, a list of objects or JSON Lines"
                ) from None
        data = records
    items = data if isinstance(data, list) else [data]
    if not items:
        raise src.error("the JSON holds an empty list; expected benchmark result objects")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise src.error(
                f"record {index} is a JSON {type(item).__name__}, expected an object of results"
            )
    return items


def number(value, *, allow_inf: bool = False) -> float:
    """A JSON/text value as float; None, "", "null", "none", "n/a" -> NaN; "inf" -> inf."""
    if value is None or isinstance(value, bool):
        return math.nan
    if isinstance(value, int | float):
        out = float(value)
    else:
        text = str(value).strip().replace(",", "")
        if text.lower() in ("", "null", "none", "n/a", "na", "nan", "-"):
            return math.nan
        try:
            out = float(text)
        except ValueError:
            return math.nan
    if math.isinf(out) and not allow_inf:
        return math.nan
    return out


def first_number(record: Mapping, keys: Iterable[str], scale: float = 1.0, **kw) -> float:
    """The first key present with a numeric value, divided by `scale`; NaN when none is."""
    for key in keys:
        if key in record:
            value = number(record[key], **kw)
            if not math.isnan(value):
                return value / scale
    return math.nan


_COUNT_PATTERNS = (
    (re.compile(r"(?<![a-z0-9.])(\d{1,5})\s*x\s*(?=[a-z])", re.I), "a '<N>x<GPU>' pattern"),
    (re.compile(r"(?<=[a-z0-9])x(\d{1,5})(?![0-9])", re.I), "a '<GPU>x<N>' pattern"),
    (re.compile(r"(?<![a-z])gpus?[_-]?(\d{1,5})(?![0-9])", re.I), "a 'gpus_<N>' pattern"),
    (re.compile(r"(?<![a-z0-9.])(\d{1,5})[_-]?gpus?(?![a-z])", re.I), "a '<N>gpu' pattern"),
)


def gpu_count_from_text(text: str) -> tuple[float, str]:
    """A GPU count written in a name: '4xNVIDIA_L40S', 'H200-SXM-141GBx8', 'gpus_16' or '8gpu'.

    Returns (count, how it was found), or (NaN, "") when the text names no count.
    """
    for pattern, how in _COUNT_PATTERNS:
        match = pattern.search(text)
        if match and 0 < int(match.group(1)) <= 100_000:
            return float(match.group(1)), how
    return math.nan, ""


@dataclass
class Provenance:
    """What a file says about itself; importers fill what they find and leave the rest ""."""

    tool: str
    tool_version: str = ""
    model: str = ""
    hardware: str = ""
    precision: str = ""
    gpu_count_basis: str = ""
    latency_unit: str = ""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def apply_gpu_count(
    records: list[dict],
    src: SourceFile,
    prov: Provenance,
    gpu_count: float | None,
) -> None:
    """Fill `gpu_count`: the caller's value first, then the file's, then a count in the file name."""
    if gpu_count is not None:
        if not (isinstance(gpu_count, int | float) and gpu_count > 0 and math.isfinite(gpu_count)):
            raise src.error(f"GPU count {gpu_count!r} is not a positive number")
        for record in records:
            record["gpu_count"] = float(gpu_count)
        prov.gpu_count_basis = "given by the user"
        return
    if all(not math.isnan(r.get("gpu_count", math.nan)) for r in records):
        return
    count, how = gpu_count_from_text(src.name)
    if not math.isnan(count):
        for record in records:
            if math.isnan(record.get("gpu_count", math.nan)):
                record["gpu_count"] = count
        prov.gpu_count_basis = f"file name ({how} in '{src.name}')"
        prov.warnings.append(
            f"GPU count {count:g} taken from the file name '{src.name}', not from the file; "
            "pass the GPU count explicitly (--gpus) if that is wrong"
        )
        return
    prov.gpu_count_basis = "unknown"
    prov.warnings.append(
        "the file does not say how many GPUs served the run: per-GPU throughput is unknown "
        "(pass --gpus N)"
    )


def _derive(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame
    total, output, inp = (
        out["total_tokens_per_s"],
        out["output_tokens_per_s"],
        out["input_tokens_per_s"],
    )
    out["total_tokens_per_s"] = total.where(total.notna(), output + inp)
    out["input_tokens_per_s"] = inp.where(inp.notna(), out["total_tokens_per_s"] - output)
    per_gpu = out["output_tokens_per_s_per_gpu"]
    out["output_tokens_per_s_per_gpu"] = per_gpu.where(per_gpu.notna(), output / out["gpu_count"])
    out["output_tokens_per_s"] = output.where(
        output.notna(), out["output_tokens_per_s_per_gpu"] * out["gpu_count"]
    )
    return out


def _check_values(frame: pd.DataFrame, src: SourceFile, labels: list[str]) -> None:
    """Refuse negative, infinite or zero measurements: a zero is a failed run, not a data point."""
    numeric = [
        c for c in frame.columns if c not in ("workload", "config") and frame[c].dtype.kind in "fi"
    ]
    for column in numeric:
        values = frame[column].to_numpy(dtype=float)
        bad_inf = np.isinf(values) & (column != "request_rate_per_s")
        negative = values < 0
        zero = (values == 0) & (
            column.startswith(LATENCY_PREFIXES)
            or column
            in (
                "output_tokens_per_s",
                "output_tokens_per_s_per_gpu",
                "tokens_per_s_per_user",
                "gpu_count",
                "duration_s",
                "concurrency",
                "request_rate_per_s",
                "output_tokens_mean",
            )
        )
        for mask, what in ((bad_inf, "infinite"), (negative, "negative"), (zero, "zero")):
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                hint = (
                    " (a run in which no request succeeded reports zeros; it is not a measurement)"
                    if what == "zero"
                    else ""
                )
                raise src.error(
                    f"{labels[i]}: {column} is {what} ({values[i]!r}); expected a positive "
                    f"measured value{hint}"
                )
    missing = frame["output_tokens_per_s"].isna() & frame["output_tokens_per_s_per_gpu"].isna()
    if missing.any():
        i = int(np.flatnonzero(missing.to_numpy())[0])
        raise src.error(
            f"{labels[i]}: no output-token throughput (missing or NaN); every point needs output "
            "tokens/s for the system or per GPU"
        )


def _check_duplicates(
    frame: pd.DataFrame, src: SourceFile, labels: list[str], repeats: str
) -> list[str]:
    """Points at one load level (same workload, configuration, concurrency and request rate).

    Identical copies are always an error. Differing ones are repeat runs: kept with a warning
    when `repeats` is "warn" (appended benchmark logs), an error when "error" (hand-made tables).
    """
    key = frame[["workload", "config"]].copy()
    key["concurrency"] = frame["concurrency"].fillna(-1.0)
    key["rate"] = frame["request_rate_per_s"].fillna(-1.0)
    has_load = (frame["concurrency"].notna() | frame["request_rate_per_s"].notna()).to_numpy()
    dup = key.duplicated(keep=False).to_numpy() & has_load
    warnings = []
    seen: set[int] = set()
    for first in np.flatnonzero(dup):
        if first in seen:
            continue
        same = [j for j in np.flatnonzero(dup) if (key.iloc[j] == key.iloc[first]).all()]
        seen.update(same)
        names = ", ".join(labels[j] for j in same)
        level = describe_load(
            frame["concurrency"].iloc[first], frame["request_rate_per_s"].iloc[first]
        )
        measured = frame.iloc[same][["output_tokens_per_s", "ttft_s_mean", "tpot_s_mean"]]
        if repeats != "warn" or measured.duplicated().any():
            raise src.error(
                f"duplicate load level: {names} share {level} with the same workload and "
                "configuration; expected one measurement per load level (label repeat runs "
                "in a config column, or split them into separate files)"
            )
        warnings.append(
            f"{names} measure the same load level ({level}): kept as repeat runs, each a point"
        )
    return warnings


def describe_load(concurrency: float, rate_per_s: float) -> str:
    """'concurrency 64, request rate inf/s' with unknown parts said in words."""
    conc = "no concurrency limit" if math.isnan(concurrency) else f"concurrency {concurrency:g}"
    if math.isnan(rate_per_s):
        return conc
    rate = "all requests at once" if math.isinf(rate_per_s) else f"request rate {rate_per_s:g}/s"
    return f"{conc}, {rate}"


def latency_unit_findings(points: pd.DataFrame) -> list[tuple[int, str, float]]:
    """Points whose latencies look off by 1000: (row, what is wrong, factor that would fix it).

    factor 1e3 means the values look like milliseconds stored as seconds (divide by 1000);
    1e-3 the reverse. Checks: TPOT and TTFT within physical ranges, and the system output rate
    at most LITTLE_RATIO_MAX x concurrency / TPOT (Little's law: each request in flight emits at
    most 1/TPOT tokens/s; Little 1961, doi:10.1287/opre.9.3.383).
    """
    findings = []
    tpot = points[[c for c in ("tpot_s_mean", "tpot_s_p50") if c in points]].bfill(axis=1)
    tpot = tpot.iloc[:, 0].to_numpy(dtype=float) if tpot.shape[1] else np.full(len(points), np.nan)
    ttft = points[[c for c in ("ttft_s_mean", "ttft_s_p50") if c in points]].bfill(axis=1)
    ttft = ttft.iloc[:, 0].to_numpy(dtype=float) if ttft.shape[1] else np.full(len(points), np.nan)
    output = points["output_tokens_per_s"].to_numpy(dtype=float)
    conc = points["concurrency"].to_numpy(dtype=float)
    for i in range(len(points)):
        t, f = tpot[i], ttft[i]
        if t < TPOT_S_MIN and TPOT_S_MIN <= t * 1e3 <= TPOT_S_MAX:
            findings.append((i, f"mean TPOT {t:.3g} s is below {TPOT_S_MIN:g} s", 1e-3))
        elif t > TPOT_S_MAX and TPOT_S_MIN <= t / 1e3 <= TPOT_S_MAX:
            findings.append((i, f"mean TPOT {t:.3g} s is above {TPOT_S_MAX:g} s", 1e3))
        elif f < TTFT_S_MIN and f * 1e3 >= TTFT_S_MIN:
            findings.append((i, f"mean TTFT {f:.3g} s is below {TTFT_S_MIN:g} s", 1e-3))
        elif f > TTFT_S_MAX:
            findings.append((i, f"mean TTFT {f:.3g} s is above a day", 1e3))
        else:
            bound = conc[i] / t
            ratio = output[i] / bound
            if ratio > LITTLE_RATIO_MAX and ratio / 1e3 <= LITTLE_RATIO_MAX:
                findings.append(
                    (
                        i,
                        f"output {output[i]:.4g} tokens/s exceeds concurrency {conc[i]:g} / "
                        f"mean TPOT {t:.3g} s = {bound:.4g} tokens/s by {ratio:.0f}x",
                        1e3,
                    )
                )
    return findings


def check_latency_units(frame: pd.DataFrame, src: SourceFile, labels: list[str], unit: str) -> None:
    """Raise LatencyUnitError when the file's latencies contradict its stated unit."""
    findings = latency_unit_findings(frame)
    if not findings:
        return
    i, what, factor = findings[0]
    looks = "milliseconds" if factor == 1e3 else "microseconds (or seconds labelled as ms)"
    raise LatencyUnitError(
        f"{src.path}: {labels[i]}: {what}, which is not physically plausible; the latencies look "
        f"like {looks} while the file states {unit}. Expected latencies in {unit}; fix the unit "
        "in the file (or its column names) and import again"
        + (f" ({len(findings)} points affected)" if len(findings) > 1 else "")
    )


def finish_curve(
    records: list[dict],
    src: SourceFile,
    prov: Provenance,
    *,
    labels: list[str] | None = None,
    check_units: bool = True,
    repeats: str = "error",
    keep_point_provenance: bool = False,
) -> Curve:
    """Validate parsed records and return the file's Curve with provenance on every point.

    `keep_point_provenance` keeps tool, version, source file and hash already on the points (a
    curve CSV written by econ) and fills only the blanks with this file's.
    """
    if not records:
        raise src.error("no benchmark results found in the file")
    labels = labels or (
        [f"record {i}" for i in range(len(records))] if len(records) > 1 else ["the run"]
    )
    frame = with_all_columns(pd.DataFrame.from_records(records))
    frame = _derive(frame)
    user = frame["tokens_per_s_per_user"]
    tpot = frame["tpot_s_mean"].where(frame["tpot_s_mean"].notna(), frame["tpot_s_p50"])
    frame["tokens_per_s_per_user"] = user.where(user.notna(), 1.0 / tpot)
    _check_values(frame, src, labels)
    if check_units:
        check_latency_units(frame, src, labels, prov.latency_unit or "seconds")
    prov.warnings.extend(_check_duplicates(frame, src, labels, repeats))

    warnings = list(dict.fromkeys(prov.warnings))
    for column, value in (
        ("tool", prov.tool),
        ("tool_version", prov.tool_version),
        ("source_file", src.name),
        ("file_sha256", src.sha256),
    ):
        keep = (frame[column] != "") & keep_point_provenance
        frame[column] = frame[column].where(keep, value)
    frame["model"] = frame["model"].where(frame["model"] != "", prov.model)
    frame["hardware"] = frame["hardware"].where(frame["hardware"] != "", prov.hardware)
    frame["precision"] = frame["precision"].where(frame["precision"] != "", prov.precision)
    point_warnings = frame["warnings"]
    joined = " | ".join(warnings)
    frame["warnings"] = [
        " | ".join(w for w in (joined, own) if w) for own in point_warnings.fillna("")
    ]
    provenance = {
        "tool": prov.tool,
        "tool_version": prov.tool_version,
        "file": str(src.path),
        "file_sha256": src.sha256,
        "model": prov.model or _single(frame["model"]),
        "hardware": prov.hardware or _single(frame["hardware"]),
        "precision": prov.precision or _single(frame["precision"]),
        "gpu_count_basis": prov.gpu_count_basis or "file",
        "latency_unit": prov.latency_unit,
        "notes": list(prov.notes),
    }
    point_level = sorted({w for ws in point_warnings for w in ws.split(" | ") if w})
    return Curve(points=frame, provenance=provenance, warnings=tuple(warnings + point_level))


def _single(values: pd.Series) -> str:
    distinct = sorted({v for v in values if v})
    return "; ".join(distinct)


def label_pairs(pairs: Iterable[tuple[str, object]]) -> str:
    """'k=v, k=v' for the pairs whose value is set, to label a workload or configuration."""
    parts = []
    for key, value in pairs:
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        parts.append(f"{key}={value}")
    return ", ".join(parts)
