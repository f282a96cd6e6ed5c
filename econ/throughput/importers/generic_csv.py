"""The generic curve CSV: one row per operating point, units in the headers.

Columns (case-insensitive; spaces or dashes count as underscores):
- rates: `output_tokens_per_s` (whole system) and/or `output_tokens_per_s_per_gpu`,
  `total_tokens_per_s`, `input_tokens_per_s`, `tokens_per_s_per_user` [tokens/s];
- load: `concurrency` [requests in flight], `request_rate_per_s` [1/s; `inf` = all at once];
- size: `gpu_count`, `input_tokens_mean`, `output_tokens_mean`, `duration_s`, `completed_requests`;
- latencies: a metric (`ttft`, `tpot`, `e2e`), a statistic (`mean`/`avg`, `p50`/`median`, `p90`,
  `p95`, `p99`) and a unit (`s`, `ms`, `us`, `ns`) in any order: `ttft_s_p99`, `ttft_ms_p99`,
  `tpot_p99_ms`, `p99_ttft_ms`, `ttft p99 [ms]`. A latency header without a unit is accepted only
  when its values fit one unit alone, column by column (the choice is stated); otherwise it is an
  error. A latency column with every cell empty was not measured and needs no unit;
- labels and provenance: `workload`, `config`, `model`, `hardware`, `precision`, `tool`,
  `tool_version`, `source_file`, `file_sha256`, `warnings` (the point's own, joined by " | "),
  `curve_warnings` (the curve's other warnings, in any row; econ writes them in the first);
- reading rules (`curve.SHARED_PROVENANCE_COLUMNS`): `curve_reading` (`step` or `interpolate`),
  `tokens_per_s_per_user_definition`, `throughput_window`, `power_basis`; filled in every row
  they are the curve's provenance too (an MLPerf Endpoints curve read back stays a step curve).
A CSV written by `econ throughput import --out` is a generic CSV and keeps its provenance columns.
An empty numeric cell is a figure not measured; the text NaN in one is refused.
"""

from __future__ import annotations

import csv
import math
import re

import pandas as pd

from econ.text import listed
from econ.throughput.curve import (
    CURVE_COLUMNS,
    CURVE_READINGS,
    NUMERIC_OPTIONAL_COLUMNS,
    TEXT_OPTIONAL_COLUMNS,
    Curve,
    shared_provenance,
)
from econ.throughput.importers._common import (
    MAX_POINTS_PER_FILE,
    MS_PER_S,
    NS_PER_S,
    PER_GPU_TOLERANCE,
    POINT_WARNING_SEPARATOR,
    TOO_LARGE,
    US_PER_S,
    BeyondFloatError,
    NotANumberError,
    Provenance,
    SourceFile,
    apply_gpu_count,
    file_lines,
    finish_curve,
    latency_unit_findings,
    lines_in,
    lines_of,
    number,
    too_many_points,
)

UNIT_PER_S = {"s": 1.0, "sec": 1.0, "ms": MS_PER_S, "us": US_PER_S, "ns": NS_PER_S}
STAT_ALIASES = {"mean": "mean", "avg": "mean", "p50": "p50", "median": "p50", "p90": "p90"}
STAT_ALIASES |= {"p95": "p95", "p99": "p99"}
METRICS = ("ttft", "tpot", "e2e")
NUMERIC = [
    c
    for c in CURVE_COLUMNS + NUMERIC_OPTIONAL_COLUMNS
    if not c.startswith(("ttft_s_", "tpot_s_", "e2e_s_"))
]
CURVE_WARNINGS_COLUMN = "curve_warnings"
"""The curve's warnings that name no point, written once in the first row by econ's curve CSV."""
TEXT = [*TEXT_OPTIONAL_COLUMNS, CURVE_WARNINGS_COLUMN]
REQUIRED_COLUMNS_MESSAGE = (
    "a CSV that no importer recognizes: the generic curve CSV requires an "
    "output_tokens_per_s (whole system) or output_tokens_per_s_per_gpu column; optional: "
    "concurrency, request_rate_per_s, gpu_count, latencies such as ttft_ms_p99 or tpot_s_mean, "
    "and labels (workload, config, model, hardware, precision); GenAI-Perf/AIPerf exports start "
    "with a 'Metric' column (see docs/throughput.md)"
)


MAX_HEADER_CHARS = 1_000
"""Longest header cell read [characters]; real ones are a few dozen."""


def _unbracket(text: str) -> str:
    """Each '[...]' (up to the first ']' after its '[') as ' ... ', in one pass (a regex
    rescanned to the end of the text from every '[' left unclosed: minutes for 40,000 of them)."""
    parts, start = [], 0
    while (opening := text.find("[", start)) >= 0:
        closing = text.find("]", opening + 1)
        if closing < 0:
            break
        parts += [text[start:opening], " ", text[opening + 1 : closing], " "]
        start = closing + 1
    parts.append(text[start:])
    return "".join(parts)


def _norm(header: str) -> str:
    text = _unbracket(header.strip().lower())
    return re.sub(r"[\s\-/]+", "_", text).strip("_")


def latency_column(header: str) -> tuple[str, str, str] | None:
    """(metric, stat, unit) of a latency header, unit "" when absent; None if not a latency."""
    tokens = [t for t in _norm(header).split("_") if t]
    metric = [t for t in tokens if t in METRICS]
    stat = [STAT_ALIASES[t] for t in tokens if t in STAT_ALIASES]
    unit = [t for t in tokens if t in UNIT_PER_S]
    rest = [t for t in tokens if t not in METRICS and t not in STAT_ALIASES and t not in UNIT_PER_S]
    if len(metric) == 1 and len(stat) == 1 and len(unit) <= 1 and not rest:
        return metric[0], stat[0], unit[0] if unit else ""
    return None


def looks_like(text: str) -> bool:
    first = next(lines_of(text.lstrip()), "")
    try:
        headers = {_norm(h) for h in next(csv.reader([first]), [])}
    except csv.Error:  # e.g. a field over the csv module's size limit: not a curve header
        return False
    return bool(headers & {"output_tokens_per_s", "output_tokens_per_s_per_gpu"})


def _rows(src: SourceFile) -> list[list[str]]:
    """The CSV's records that hold a cell (the header and the data rows); one that is not
    well-formed CSV (a field over the csv module's size limit) is refused with the line it starts
    on, and a file of more than MAX_POINTS_PER_FILE data rows as soon as one more is read."""
    reader = csv.reader(file_lines(src.text))  # (line by line: a count that stops reads no more)
    rows, end = [], 0
    try:
        for row in reader:
            end = reader.line_num
            if not any(c.strip() for c in row):
                continue
            if len(rows) > MAX_POINTS_PER_FILE:  # the header and MAX_POINTS_PER_FILE rows read
                where = f"line {end:,} of the file's {lines_in(src.text):,}"
                raise too_many_points(src, "data rows", where)
            rows.append(row)
    except csv.Error as exc:
        raise src.error(
            f"line {end + 1}: not a well-formed CSV record ({exc}); expected comma-separated "
            "cells of a curve CSV"
        ) from None
    return rows


def parse(src: SourceFile, gpu_count: float | None = None) -> Curve:
    rows = _rows(src)
    if len(rows) < 2:
        raise src.error("the CSV has a header but no data rows")
    header = rows[0]
    for index, name in enumerate(header):
        if len(name) > MAX_HEADER_CHARS:
            raise src.error(
                f"header column {index + 1} is {len(name):,} characters long; expected a column "
                f"name of at most {MAX_HEADER_CHARS:,} (e.g. ttft_ms_p99)"
            )
    prov = Provenance(tool="generic csv")
    numeric_cols: dict[int, str] = {}
    text_cols: dict[int, str] = {}
    latency_cols: dict[int, tuple[str, str, str]] = {}
    unknown = []
    for index, name in enumerate(header):
        key = _norm(name)
        if key in NUMERIC:
            numeric_cols[index] = key
        elif key in TEXT:
            text_cols[index] = key
        elif (lat := latency_column(name)) is not None:
            latency_cols[index] = lat
        else:
            unknown.append(name)
    targets = list(numeric_cols.values()) + [f"{m}_s_{s}" for m, s, _ in latency_cols.values()]
    duplicated = sorted({t for t in targets if targets.count(t) > 1})
    if duplicated:
        raise src.error(f"columns {duplicated} appear more than once (after unit conversion)")
    if not {"output_tokens_per_s", "output_tokens_per_s_per_gpu"} & set(numeric_cols.values()):
        raise src.error(REQUIRED_COLUMNS_MESSAGE)
    if unknown:
        prov.warnings.append(f"columns ignored (not part of the curve format): {listed(unknown)}")
    records = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise src.error(
                f"line {line} has {len(row)} cells, the header has {len(header)} (a truncated "
                "or misaligned row)"
            )
        record: dict = {}
        for index, key in numeric_cols.items():
            cell = row[index].strip()
            record[key] = _cell_number(src, line, header[index], cell, key == "request_rate_per_s")
        for index, (metric, stat, unit) in latency_cols.items():
            cell = row[index].strip()
            value = _cell_number(src, line, header[index], cell, False)
            record[f"{metric}_s_{stat}"] = value / UNIT_PER_S[unit] if unit else value
        for index, key in text_cols.items():
            record[key] = row[index].strip()
        if record.get("curve_reading", "") not in ("", *CURVE_READINGS):
            raise src.error(
                f"line {line}, column 'curve_reading': {record['curve_reading'][:40]!r}; "
                f"expected one of {', '.join(CURVE_READINGS)}, or an empty cell (interpolate)"
            )
        records.append(record)
    _resolve_missing_units(records, latency_cols, header, src, prov)
    stated = sorted({u for _, _, u in latency_cols.values() if u})
    detected = prov.latency_unit  # set by _resolve_missing_units when a header has no unit
    prov.latency_unit = (
        f"stated in the headers ({', '.join(stated)})" if stated else detected or "none"
    )
    if stated and detected:
        prov.latency_unit += f"; other columns {detected}"
    labels = [f"line {i}" for i in range(2, len(records) + 2)]
    for record in records:
        if "tool" in record and record["tool"]:
            prov.tool = record["tool"] if prov.tool == "generic csv" else prov.tool
    apply_gpu_count(records, src, prov, gpu_count)
    prov.warnings.extend(_contradictions(records, labels))  # on the figures the curve keeps
    carried = [
        w
        for record in records
        for w in record.pop(CURVE_WARNINGS_COLUMN, "").split(POINT_WARNING_SEPARATOR)
        if w
    ]
    curve = finish_curve(
        records, src, prov, labels=labels, repeats="error", keep_point_provenance=True
    )
    provenance = curve.provenance | shared_provenance(curve.points)  # econ's CSV keeps them
    warnings = tuple(dict.fromkeys((*carried, *curve.warnings)))
    return Curve(points=curve.points, provenance=provenance, warnings=warnings)


USER_SPEED_FACTOR = 2.0
"""Factor between tokens_per_s_per_user and 1 / tpot_s_mean beyond which the two contradict.
Wide, because both definitions a row may follow differ from 1 / mean TPOT: the mean of 1 / TPOT
over requests is higher (1.52 times on the InferenceX agentic Qwen3.5 sample) and output length
over request latency lower (it counts the TTFT)."""


def _contradictions(records: list[dict], labels: list[str]) -> list[str]:
    """Warnings for rows whose columns contradict each other: the per-GPU rate times the GPU count
    far from the system rate, or the per-user speed far from 1 / mean TPOT. Both are kept as
    given; the warning says which one the curve uses."""
    warnings = []
    for record, label in zip(records, labels, strict=True):
        per_gpu = record.get("output_tokens_per_s_per_gpu", math.nan)
        count = record.get("gpu_count", math.nan)
        system = record.get("output_tokens_per_s", math.nan)
        if per_gpu > 0 and count > 0 and system > 0:
            implied = per_gpu * count
            if abs(implied - system) > PER_GPU_TOLERANCE * system:
                warnings.append(
                    f"{label}: output_tokens_per_s_per_gpu {per_gpu:g} x gpu_count {count:g} = "
                    f"{implied:g}, but output_tokens_per_s is {system:g} "
                    f"({implied / system - 1:+.1%}); the per-GPU column is used as given"
                )
        user, tpot = record.get("tokens_per_s_per_user", math.nan), record.get("tpot_s_mean")
        if user > 0 and tpot is not None and tpot > 0:
            ratio = user * tpot
            if not 1 / USER_SPEED_FACTOR < ratio < USER_SPEED_FACTOR:
                warnings.append(
                    f"{label}: tokens_per_s_per_user {user:g} is {ratio:.3g} times 1 / "
                    f"tpot_s_mean ({1 / tpot:.4g}); the columns contradict each other (a TPOT "
                    "in another unit, or another per-user definition); tokens_per_s_per_user is "
                    "used as given"
                )
    return warnings


def _cell_number(src: SourceFile, line: int, column: str, cell: str, allow_inf: bool) -> float:
    """A numeric cell's value; empty (or n/a, -, null) is NaN, not measured. The text NaN is
    refused in every numeric column, latencies included: it is what a failed computation
    prints, and read as not measured a latency would drop out of the SLO's checks unseen."""
    if cell.lower() == "nan":
        raise src.error(
            f"line {line}, column {column!r}: NaN; leave the cell empty when a value was not "
            "measured"
        )
    try:
        return number(cell, allow_inf=allow_inf)
    except BeyondFloatError:
        raise src.error(f"line {line}, column {column!r}: {cell[:40]!r} is {TOO_LARGE}") from None
    except NotANumberError:
        raise src.error(
            f"line {line}, column {column!r}: {cell[:40]!r} is not a number; expected a number "
            "with a decimal point (or an empty cell when not measured)"
        ) from None


def _resolve_missing_units(
    records, latency_cols, header, src: SourceFile, prov: Provenance
) -> None:
    """Pick s or ms for each latency header without a unit, when only one is physically
    plausible for that column's values. Each column is decided alone: TTFT and TPOT have
    different ranges (a TTFT of 0.5 is plausible only as seconds, a TPOT of 60 only as
    milliseconds) and files that mix the two units are common. A column with no values (every
    cell empty) was not measured and needs no unit."""
    frame = pd.DataFrame.from_records(records)
    missing = {
        i: c
        for i, c in latency_cols.items()
        if not c[2] and frame[f"{c[0]}_s_{c[1]}"].notna().any()
    }
    if not missing:
        return
    for column in ("output_tokens_per_s", "concurrency"):
        if column not in frame:
            frame[column] = math.nan
    units: dict[int, str] = {}
    unclear: list[str] = []
    for index, (metric, stat, _) in missing.items():
        column = f"{metric}_s_{stat}"
        alone = frame[["output_tokens_per_s", "concurrency"]]  # Little's law for a TPOT
        fits = [
            unit
            for unit, scale in (("s", 1.0), ("ms", MS_PER_S))
            if not latency_unit_findings(alone.assign(**{column: frame[column] / scale}))
        ]
        if len(fits) == 1:
            units[index] = fits[0]
        else:
            both = "both seconds and milliseconds" if fits else "neither seconds nor milliseconds"
            unclear.append(f"{header[index]!r} fit {both}")
    if unclear:
        raise src.error(
            f"latency columns have no unit and the values of {'; '.join(unclear)}; put the unit "
            "in the header, e.g. ttft_s_p99 or tpot_ms_p99"
        )
    for record in records:
        for index, (metric, stat, _) in missing.items():
            if units[index] == "ms":
                record[f"{metric}_s_{stat}"] = record[f"{metric}_s_{stat}"] / MS_PER_S
    by_unit = {u: [repr(header[i]) for i in units if units[i] == u] for u in ("s", "ms")}
    detected = {u: names for u, names in by_unit.items() if names}
    if len(detected) == 1:
        prov.latency_unit = f"{next(iter(detected))} (detected: no unit in the headers)"
    else:
        prov.latency_unit = "s and ms (detected per column: no unit in the headers)"
    for unit, names in detected.items():
        one = len(names) == 1
        prov.warnings.append(
            f"latency column{'' if one else 's'} {', '.join(names)} "
            f"{'has' if one else 'have'} no unit; {'its' if one else 'their'} values are "
            f"plausible only as {unit}, so {'it was' if one else 'they were'} read as {unit}. "
            "Put the unit in the header to make this explicit"
        )
