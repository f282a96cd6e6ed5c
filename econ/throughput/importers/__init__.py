"""Importers: benchmark result files of any supported tool -> one `Curve` with provenance.

`import_files(paths)` detects each file's format from its content (not its name), parses it with
the matching importer and merges the points. Supported formats (`FORMATS`):

| name | tool and file |
|---|---|
| vllm / sglang | vLLM `benchmark_serving.py` / `vllm bench serve` JSON (also JSONL, sweep lists); SGLang `bench_serving` JSONL |
| genai-perf-json, genai-perf-csv | GenAI-Perf `profile_export_genai_perf.{json,csv}` |
| aiperf-json, aiperf-csv | AIPerf `profile_export_aiperf.{json,csv}` |
| mlperf-summary, mlperf-detail | MLPerf LoadGen `mlperf_log_summary.txt`, `mlperf_log_detail.txt` |
| inferencex | InferenceX `agg_*.json`, agentic aggregates and nested results |
| trtllm-bench, trtllm-bench-json | TensorRT-LLM `trtllm-bench throughput` console report and `--report_json` |
| generic-csv | one row per point, units in the headers (see `generic_csv`) |
| mlperf-endpoints | MLPerf Endpoints / endpoint client `performance/result_summary.json` |
| (a folder) | an MLPerf Endpoints submission tree, one point per concurrency (`mlperf_endpoints`) |

Every importer refuses what is not a measurement (all requests failed, zero or negative values,
NaN throughput, duplicate load levels) with a `CurveError` naming the file, and checks that the
latencies are in the unit the file states (`LatencyUnitError` otherwise).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from econ.errors import InputError, in_file, with_message
from econ.files import atomic_write
from econ.labels import counted
from econ.strict_json import load_json
from econ.text import clipped, listed, neutralize
from econ.throughput.curve import (
    CURVE_COLUMNS,
    OPTIONAL_COLUMNS,
    Curve,
    shared_provenance,
    with_all_columns,
)
from econ.throughput.importers import (
    bench_serving,
    genai_perf,
    generic_csv,
    inferencex,
    mlperf,
    mlperf_endpoints,
    trtllm,
)
from econ.throughput.importers._common import (
    MAX_GPU_COUNT,
    POINT_WARNING_SEPARATOR,
    CurveError,
    LatencyUnitError,
    NotANumberError,
    SourceFile,
    check_source,
    json_records,
    latency_unit_findings,
    lines_of,
    opened,
    read_source,
    scalar_json,
)

Parser = Callable[[SourceFile, float | None], Curve]

FORMATS: dict[str, tuple[str, Parser]] = {
    "vllm": ("vLLM benchmark_serving / vllm bench serve result JSON", bench_serving.parse),
    "sglang": ("SGLang bench_serving JSONL", bench_serving.parse),
    "genai-perf-json": ("GenAI-Perf profile_export_genai_perf.json", genai_perf.parse_json),
    "genai-perf-csv": ("GenAI-Perf profile_export_genai_perf.csv", genai_perf.parse_csv),
    "aiperf-json": ("AIPerf profile_export_aiperf.json", genai_perf.parse_json),
    "aiperf-csv": ("AIPerf profile_export_aiperf.csv", genai_perf.parse_csv),
    "mlperf-summary": ("MLPerf LoadGen mlperf_log_summary.txt", mlperf.parse_summary),
    "mlperf-detail": ("MLPerf LoadGen mlperf_log_detail.txt", mlperf.parse_detail),
    "inferencex": ("InferenceX result / aggregate JSON", inferencex.parse),
    "trtllm-bench": ("TensorRT-LLM trtllm-bench throughput report", trtllm.parse),
    "trtllm-bench-json": ("TensorRT-LLM trtllm-bench --report_json", trtllm.parse_json),
    "generic-csv": ("generic curve CSV with units in the headers", generic_csv.parse),
    "mlperf-endpoints": (
        "MLPerf Endpoints / endpoint client performance/result_summary.json",
        mlperf_endpoints.parse,
    ),
}
ENDPOINTS_SUBMISSION = "mlperf-endpoints-submission"
SIBLING_FORMATS = {
    "vllm": ("vllm", "sglang"),
    "sglang": ("sglang", "vllm"),
    "genai-perf-json": ("genai-perf", "aiperf-json"),
    "aiperf-json": ("aiperf", "genai-perf-json"),
    "genai-perf-csv": ("genai-perf", "aiperf-csv"),
    "aiperf-csv": ("aiperf", "genai-perf-csv"),
}
"""Formats whose importer reads its sibling's files too and tells the tool from the content:
format -> (the first word of the tool it expects, the sibling's format). A format forced on the
sibling's file is refused, not recorded beside the other tool ('format: sglang; tool: vllm bench
serve')."""

__all__ = [
    "FORMATS",
    "MAX_GPU_COUNT",
    "CurveError",
    "LatencyUnitError",
    "curve_csv_path",
    "detect_format",
    "import_file",
    "import_files",
    "latency_unit_findings",
    "load_curve",
    "write_curve_csv",
]


def detect_format(src: SourceFile) -> str:
    """The format name of a file, from its content; CurveError when no importer recognizes it."""
    text = src.text.lstrip()
    if mlperf.looks_like_detail(text):
        return "mlperf-detail"
    if mlperf.looks_like_summary(text):
        return "mlperf-summary"
    if trtllm.looks_like(text):
        return "trtllm-bench"
    if mlperf_endpoints.looks_like_text(text):
        return "mlperf-endpoints"
    if mlperf_endpoints.looks_like_report(text):
        raise src.error(
            "the MLPerf Endpoints client's report.txt, a summary for people (rounded, in ms); "
            "expected the run's performance/result_summary.json beside it, which holds the same "
            "figures in full (or the submission folder)"
        )
    if _looks_like_toml(text):  # before JSON: a TOML table header starts with "[" too
        raise src.error(
            "a TOML file, not a serving benchmark's result; expected a "
            f"result file of one of: {', '.join(FORMATS)}"
        )
    if text.startswith(("{", "[")):
        records = json_records(src)
        first = records[0]
        if genai_perf.looks_like_json(first):
            return "aiperf-json" if "aiperf_version" in first else "genai-perf-json"
        if inferencex.looks_like(first):
            return "inferencex"
        if trtllm.looks_like_json(first):
            return "trtllm-bench-json"
        if bench_serving.looks_like(first):
            return "sglang" if bench_serving.is_sglang(first) else "vllm"
        if mlperf.looks_like_system(first):
            raise src.error(
                "an MLPerf system description (systems/<Platform>.json), not a result: it gives "
                "the GPU count (number_of_nodes x accelerators_per_node), which the importers "
                "read from it beside a result under the submission's results/<Platform>/ folder; "
                "expected the result file (mlperf_log_summary.txt, mlperf_log_detail.txt or "
                "performance/result_summary.json), with --gpus N when it lies elsewhere"
            )
        if mlperf_endpoints.looks_like_system_desc(first):
            raise src.error(
                "an MLPerf Endpoints system_desc.json, not a result: it describes the system of a "
                "submission point; expected the submission folder (results/<system>/<model>/r<N>/"
                "), which is read with it, or the point's result_summary.json with --gpus N"
            )
        # The message counts keys and names the formats, never the file's content (it may not
        # be the user's): the count tells an empty or tiny object from another tool's result.
        shape = (
            f"an object with {counted(len(first), 'key')}"
            if len(records) == 1
            else f"{len(records)} records, the first with {counted(len(first), 'key')}"
        )
        raise src.error(
            f"JSON from an unsupported tool (or not a benchmark result): {shape}, and no "
            "importer recognizes its fields; expected a result file of one of: "
            f"{', '.join(FORMATS)}"
        )
    if text[:1] in '"-0123456789tfnNI':  # JSON holding one value (null, "abc", 12)?
        try:
            value = load_json(text)
        except (ValueError, RecursionError):
            pass
        else:
            raise src.error(scalar_json(value))
    if genai_perf.looks_like_csv(text):
        header = next(lines_of(text), "").lower()
        return "aiperf-csv" if ",sum," in header or ",p1," in header else "genai-perf-csv"
    if generic_csv.looks_like(text):
        return "generic-csv"
    if "," in next(lines_of(text), ""):
        raise src.error(generic_csv.REQUIRED_COLUMNS_MESSAGE)
    raise src.error(
        "unrecognized format: not JSON, CSV, a LoadGen log or a trtllm-bench report; "
        f"expected a result file of one of: {', '.join(FORMATS)}"
    )


def _looks_like_toml(text: str) -> bool:
    """Whether the first line that is neither blank nor a comment is a TOML table header or a
    `key = value` (as econ's scenarios and curves; no benchmark's CSV, YAML or log starts so)."""
    lines = (line.strip() for line in lines_of(text))
    first = next((line for line in lines if line and not line.startswith("#")), "")
    if re.match(r"[\w.\-\"]+\s*=\s*\S", first):
        return True
    if not re.match(r"\[\[?[\w.\-\" ]+\]\]?\s*(#.*)?$", first):
        return False
    try:  # '["a"]' is a table header and a JSON array: JSON, then
        json.loads(text)
    except ValueError:
        return True
    return False


ZIP_EXPECTED = "a zipped MLPerf Endpoints submission tree"
"""What a .zip an importer reads is expected to be, in its refusals."""


def _read_as(path: str | os.PathLike, fmt: str) -> str:
    """How `import_file` reads `path` in format `fmt`: "folder" (an MLPerf Endpoints submission
    tree), "zip" (one zipped) or "file" (a result file of one of FORMATS)."""
    if fmt not in ("auto", *FORMATS, ENDPOINTS_SUBMISSION):
        raise CurveError(f"unknown format {fmt!r}; expected 'auto' or one of: {', '.join(FORMATS)}")
    # a folder or a zip is how an Endpoints submission comes, so that format reads it as one
    if fmt in ("auto", "mlperf-endpoints", ENDPOINTS_SUBMISSION):
        if os.fspath(path) and Path(path).is_dir():  # Path("") is the current folder
            return "folder"
        if Path(path).suffix.lower() == ".zip":
            return "zip"
    return "file"


def check_file(path: str | os.PathLike, fmt: str = "auto") -> None:
    """CurveError when `import_file` could not open `path` (missing, unreadable, a FIFO or a
    device, over its size limit), in the words of its refusal, without reading it: what `econ
    validate` checks of a scenario's measured curve file. A folder passes (a submission tree's
    files are checked as it is imported), and so does any content."""
    kind = _read_as(path, fmt)
    if kind == "zip":
        opened(path, mlperf_endpoints.MAX_ZIP_BYTES, ZIP_EXPECTED, read=False)
    elif kind == "file":
        check_source(path)


def import_file(
    path: str | os.PathLike,
    fmt: str = "auto",
    gpu_count: float | None = None,
    *,
    allow_incomplete: bool = False,
    within: Iterable[str | os.PathLike] | None = None,
) -> Curve:
    """One file as a Curve. `fmt` is a name from FORMATS or "auto" (detect from the content).

    `gpu_count` overrides the GPU count the file states or implies [GPUs]. A folder is read as an
    MLPerf Endpoints submission tree. `allow_incomplete` imports an interrupted Endpoints run.
    `within`: the folders an importer may open other files in beside a result file (an MLPerf
    system description); default `_common.result_reach(path)`: the submission folder of a path
    through `results/<Platform>/<benchmark>/<scenario>/`, else the file's own folder. Links
    beside a result are never followed. A folder is read inside itself alone.
    """
    kind = _read_as(path, fmt)
    if kind == "folder":
        curve = mlperf_endpoints.import_submission(
            path, gpu_count, allow_incomplete=allow_incomplete
        )
        return Curve(
            curve.points, dict(curve.provenance, format=ENDPOINTS_SUBMISSION), curve.warnings
        )
    if kind == "zip":
        return _zipped_submission(path, gpu_count, allow_incomplete)
    src = read_source(path, within=within)
    forced = fmt != "auto"
    if not forced:
        fmt = detect_format(src)
    try:
        if fmt == "mlperf-endpoints":
            curve = mlperf_endpoints.parse(src, gpu_count, allow_incomplete=allow_incomplete)
        else:
            curve = FORMATS[fmt][1](src, gpu_count)
    except CurveError as exc:
        if isinstance(exc, NotANumberError):  # raised where the field is read, without the file
            exc = in_file(exc, str(src.path))
        raise _forced_on_another(exc, src, fmt) if forced else exc from None
    _check_sibling(src, fmt, curve.provenance["tool"])
    provenance = dict(curve.provenance, format=fmt)
    return Curve(points=curve.points, provenance=provenance, warnings=curve.warnings)


def _forced_on_another(exc: CurveError, src: SourceFile, fmt: str) -> CurveError:
    """The refusal of format `fmt`, forced on a file whose content another format reads, with
    that format named: the refusal alone is in the forced format's words ("the detail log has
    no result_* records: the run did not finish", "invalid or truncated JSON" of valid JSON
    Lines), which blame a good file of another tool."""
    try:
        detected = detect_format(src)
    except CurveError:  # no importer recognizes it: the refusal stands alone
        return exc
    if FORMATS[detected][1] is FORMATS[fmt][1]:  # the same parser (vllm, sglang) refused it
        return exc
    return with_message(
        exc,
        f"{exc}; format {fmt!r} was forced, but the content reads as {FORMATS[detected][0]}: "
        f"format {detected!r} reads it ('auto' detects the tool)",
    )


def _check_sibling(src: SourceFile, fmt: str, tool: str) -> None:
    """CurveError when `fmt` was forced on a file of its sibling tool (SIBLING_FORMATS)."""
    if fmt not in SIBLING_FORMATS:
        return
    expected, sibling = SIBLING_FORMATS[fmt]
    if re.split(r"[ .]", tool, maxsplit=1)[0] != expected:
        raise src.error(
            f"format {fmt!r} was forced, but the file was written by {tool}; expected "
            f"{FORMATS[fmt][0]}, or format {sibling!r} for this file ('auto' detects the tool)"
        )


def _zipped_submission(path, gpu_count, allow_incomplete) -> Curve:
    """A zipped MLPerf Endpoints submission tree (as the app takes an upload): unpacked with the
    importer's guards into a temporary folder and read there; the provenance names the zip."""
    import hashlib
    import tempfile

    content = opened(path, mlperf_endpoints.MAX_ZIP_BYTES, ZIP_EXPECTED)
    with tempfile.TemporaryDirectory(prefix="econ-zip-") as folder:
        tree = mlperf_endpoints.extract_submission_zip(content, Path(folder), Path(path).name)
        try:
            curve = mlperf_endpoints.import_submission(
                tree, gpu_count, allow_incomplete=allow_incomplete
            )
        except InputError as exc:  # its files are named inside the zip, not the gone folder
            inside = str(exc).replace(f"{tree}{os.sep}", "").replace(str(tree), ".")
            raise CurveError(f"{path}: {inside}") from None
    provenance = dict(
        curve.provenance,
        file=os.fspath(path),
        zip_sha256=hashlib.sha256(content).hexdigest(),
        format=ENDPOINTS_SUBMISSION,
    )
    return Curve(curve.points, provenance, curve.warnings)


def import_files(
    paths: Iterable[str | os.PathLike],
    fmt: str = "auto",
    gpu_count: float | None = None,
    *,
    allow_incomplete: bool = False,
    within: Iterable[str | os.PathLike] | None = None,
) -> Curve:
    """Several files merged into one Curve (points in file order, provenance per point).

    The same file given twice is an error; repeated load levels across files are kept as repeat
    runs with a warning; mixing models or hardware is allowed but warned about. `within` as in
    `import_file`, for every file.
    """
    if isinstance(paths, str | bytes | os.PathLike):  # (list() would give its characters)
        raise CurveError(f"paths is one path, {paths!r}; expected a list of paths: [{paths!r}]")
    paths = list(paths)
    if not paths:
        raise CurveError("no input files given")
    within = None if within is None else tuple(within)
    curves = [
        import_file(p, fmt, gpu_count, allow_incomplete=allow_incomplete, within=within)
        for p in paths
    ]
    if len(curves) == 1:
        return curves[0]
    hashes = [c.provenance["file_sha256"] for c in curves]
    for i, digest in enumerate(hashes):
        if digest in hashes[:i]:
            j = hashes.index(digest)
            raise CurveError(
                f"{paths[i]}: same content as {paths[j]} (SHA-256 {digest[:12]}...); each "
                "result should be imported once"
            )
    points = pd.concat([c.points for c in curves], ignore_index=True)
    warnings = [w for c in curves for w in c.warnings]
    for column, plural in (("model", "models"), ("hardware", "hardware")):
        distinct = sorted({v for v in points[column] if v})
        if len(distinct) > 1:
            warnings.append(
                f"the files describe different {plural} ({'; '.join(distinct)}); an operating "
                f"point must be taken within one {column}"
            )
        elif distinct and (points[column] == "").any():
            # the curve's provenance names the one that is recorded: not proof for the others
            silent = dict.fromkeys(points.loc[points[column] == "", "source_file"])
            warnings.append(
                f"{listed(silent)} {'does' if len(silent) == 1 else 'do'} not record the "
                f"{column} (the other files: {distinct[0]}), so its points may be of another "
                f"{column}; an operating point must be taken within one {column}"
            )
    warnings.extend(_per_user_definitions(points))
    key = points[["model", "hardware", "workload", "config"]].copy()
    key["concurrency"] = points["concurrency"].fillna(-1.0)
    key["rate"] = points["request_rate_per_s"].fillna(-1.0)
    loaded = (points["concurrency"].notna() | points["request_rate_per_s"].notna()).to_numpy()
    repeated = key.duplicated(keep=False).to_numpy() & loaded
    if repeated.any():
        files = sorted(set(points.loc[repeated, "source_file"]))
        warnings.append(
            f"{int(repeated.sum())} points in {', '.join(files)} repeat a load level measured in "
            "another file; kept as repeat runs"
        )
    provenance = {
        "files": [c.provenance for c in curves],
        "tool": "; ".join(sorted({c.provenance["tool"] for c in curves})),
        "tool_version": "; ".join(sorted({c.provenance["tool_version"] for c in curves} - {""})),
        "file": "; ".join(str(p) for p in paths),
        "file_sha256": "; ".join(hashes),
        "model": "; ".join(sorted({v for v in points["model"] if v})),
        "hardware": "; ".join(sorted({v for v in points["hardware"] if v})),
        "precision": "; ".join(sorted({v for v in points["precision"] if v})),
        "format": "; ".join(sorted({c.provenance["format"] for c in curves})),
    }
    provenance |= shared_provenance(points)  # e.g. several Endpoints runs: still steps
    return Curve(points=points, provenance=provenance, warnings=tuple(dict.fromkeys(warnings)))


DEFAULT_PER_USER_DEFINITION = "1 / mean TPOT (every tool but MLPerf Endpoints)"
"""The per-user speed of a point whose `tokens_per_s_per_user_definition` is empty."""


def _per_user_definitions(points: pd.DataFrame) -> list[str]:
    """A warning when the merged files define tokens/s per user differently (MLPerf Endpoints
    v1.0: 1000 / TPOT p90, lower than 1 / mean TPOT by 20% on the VR-NVL72 run): their points
    are not comparable on one frontier without a correction (docs/throughput.md §1)."""
    definitions = points["tokens_per_s_per_user_definition"].replace(
        "", DEFAULT_PER_USER_DEFINITION
    )
    if definitions.nunique() < 2:
        return []
    files = points.groupby(definitions, sort=True)["source_file"].agg(
        lambda names: listed(dict.fromkeys(names))
    )
    found = "; ".join(f"{clipped(definition)} in {names}" for definition, names in files.items())
    return [
        f"the files define tokens/s per user differently ({found}); their points are not "
        "comparable on one frontier: convert one definition to the other (e.g. from the TPOT "
        "columns) before reading an operating point across them"
    ]


def load_curve(path: str | os.PathLike, fmt: str = "auto", gpu_count: float | None = None) -> Curve:
    """A curve from a curve CSV written by `write_curve_csv` or any supported result file."""
    return import_file(path, fmt, gpu_count)


def curve_csv_text(curve: Curve) -> str:
    """The curve's points as the generic curve CSV (all columns, NaN as empty, numbers in their
    shortest round-trip form as in every econ CSV: 0.1, not 0.10000000000000001).

    `warnings` holds each point's own warnings; the curve's other warnings are written once, in
    the first row's `curve_warnings` cell, so that a re-imported CSV keeps them."""
    frame = with_all_columns(curve.points)[list(CURVE_COLUMNS + OPTIONAL_COLUMNS)]
    own = {w for cell in frame["warnings"] for w in cell.split(POINT_WARNING_SEPARATOR)}
    frame[generic_csv.CURVE_WARNINGS_COLUMN] = ""
    if len(frame):
        frame.loc[0, generic_csv.CURVE_WARNINGS_COLUMN] = POINT_WARNING_SEPARATOR.join(
            w for w in curve.warnings if w not in own
        )
    text_columns = [
        c
        for c in frame.columns
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])
    ]
    for column in text_columns:
        frame[column] = frame[column].map(neutralize)
    for column in frame.columns:
        if column not in text_columns:
            values = frame[column].to_numpy(dtype=float)
            frame[column] = [
                "" if math.isnan(v) else ("inf" if np.isinf(v) else repr(float(v))) for v in values
            ]
    return frame.to_csv(index=False, lineterminator="\n")


def curve_csv_path(path: str | os.PathLike) -> Path:
    """The path a curve CSV is written to, refused unless it ends in .csv (a curve.parquet or
    curve.json holding CSV text would mislead whatever reads it by its name)."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise CurveError(f"{path}: a curve is written as CSV; expected a path ending in .csv")
    return path


def write_curve_csv(curve: Curve, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write the curve CSV atomically; an existing file is replaced only when `overwrite`."""
    return atomic_write(curve_csv_path(path), curve_csv_text(curve), overwrite=overwrite)
