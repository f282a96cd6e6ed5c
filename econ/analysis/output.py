"""Writing batch results: per-scenario rows to Parquet or CSV with run metadata, and text tables.

Parquet files carry the run metadata (econ version, scenario hash, seed, sampling plan, engine,
creation time) in their schema under the key "econ"; a CSV file gets it in a sidecar
`<stem>.meta.json`. Rows of a large run are streamed from the chunk files one chunk at a time, so
writing ten million rows needs the memory of one chunk. Writes go through econ.files: the rows
and the sidecar are checked before the run starts and again before anything is written, never
replace an existing file unless asked, and are renamed into place together (atomic).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from econ import strict_json
from econ.analysis.chunks import METADATA_KEY, to_arrow
from econ.analysis.runner import RunResult
from econ.export import csv_text
from econ.files import Stream, WriteError, check_targets, refuse_empty_path, write_files
from econ.labels import short_number

ROW_FORMATS = (".parquet", ".csv")


OutputError = WriteError
"""An output path that cannot be written as asked (the writers' error, econ.files.WriteError)."""


def meta_path(path: str | os.PathLike) -> Path:
    """The run-metadata sidecar of a CSV rows file: `<stem>.meta.json` beside it."""
    path = Path(path)
    return path.with_name(path.stem + ".meta.json")


def output_files(path: str | os.PathLike) -> list[Path]:
    """Every file an --out path writes: the rows, and for CSV the `.meta.json` sidecar."""
    expected = "a file named with one of: " + ", ".join(ROW_FORMATS)
    refuse_empty_path(path, "--out", "path", expected)
    given = os.fspath(path)
    path = Path(path)
    if path.suffix.lower() not in ROW_FORMATS or given.endswith(("/", os.sep)):
        what = (
            "a folder" if path.is_dir() or given.endswith(("/", os.sep))
            else "no extension" if not path.suffix
            else f"unknown output format '{path.suffix}'"
        )  # fmt: skip
        raise OutputError(f"{given}: {what}; expected {expected}")
    return [path] if path.suffix.lower() == ".parquet" else [path, meta_path(path)]


def check_out(path: str | os.PathLike, overwrite: bool) -> Path:
    """Validate an --out path before a run starts: suffix, folder, name, and every file it writes
    (the CSV sidecar too) refused if it exists, unless `overwrite`."""
    check_targets(output_files(path), overwrite)
    return Path(path)


def write_rows(result: RunResult, path: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write one row per scenario to `path` (.parquet or .csv, with its `.meta.json` sidecar)
    all-or-nothing through econ.files; returns the paths written.

    Every target is checked before anything is written; rows are streamed into the temporary file
    one chunk at a time.
    """
    files = output_files(path)
    metadata = dict(result.metadata)
    frames = _frames(result)

    if len(files) == 1:

        def rows(handle) -> None:
            import pyarrow.parquet as pq

            writer = None
            try:
                for frame in frames:
                    table = to_arrow({c: frame[c].to_numpy() for c in frame.columns}, metadata)
                    if writer is None:
                        writer = pq.ParquetWriter(handle, table.schema)
                    writer.write_table(table.cast(writer.schema))
            except BaseException:
                # Closed while the file is open (it is removed after): left to the garbage
                # collector, the writer closed a closed file and printed "Exception ignored".
                if writer is not None:
                    with contextlib.suppress(Exception):
                        writer.close()
                raise
            writer.close()

        return write_files({files[0]: Stream(rows)}, overwrite=overwrite)

    def rows(handle) -> None:
        for k, frame in enumerate(frames):
            text = rows_csv_text(frame)
            handle.write((text if k == 0 else text.split("\n", 1)[1]).encode("utf-8"))

    payloads = {
        files[0]: Stream(rows),
        files[1]: strict_json.dumps(metadata, indent=2, default=str),
    }
    return write_files(payloads, overwrite=overwrite)


def _frames(result: RunResult):
    """Row frames in scenario order: from memory, or chunk by chunk from the chunk files."""
    if result.kept_rows is not None:
        yield tidy_rows(result.kept_rows)
        return
    if result.store is None:
        raise OutputError("the run kept no rows to write (run it with rows or a chunk folder)")
    for table in result.store.iter_tables(result.chunks):
        yield tidy_rows(table.to_pandas())


def tidy_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as they are written: text columns (names, warnings) as str."""
    frame = frame.copy()
    for name in frame.columns:
        if frame[name].dtype == object:
            frame[name] = frame[name].astype(str)
    return frame


def whole_number_columns(columns) -> list[str]:
    """The columns of batch rows that are integer scenario fields (`fleet.gpu_count`): float64
    in the rows and in Parquet, whose numeric columns are float64 whatever their values
    (docs/exports.md), and whole numbers in JSON and CSV (72, where they read 72.0)."""
    from econ.analysis.validation import field_specs

    specs = field_specs()
    return [c for c in columns if c in specs and specs[c].kind == "int"]


def rows_csv_text(frame: pd.DataFrame) -> str:
    """CSV of batch rows (`econ.export.csv_text`), integer fields written as whole numbers (72,
    not 72.0; empty where a row leaves an optional one unset)."""
    columns = whole_number_columns(frame.columns)
    if columns:
        frame = frame.copy()
        for name in columns:
            values = frame[name].to_numpy(dtype=float)
            if np.all(np.isnan(values) | (np.abs(values) < 2**53) & (values == np.round(values))):
                frame[name] = pd.array(values, dtype="Int64")  # NaN as <NA>: an empty field
    return csv_text(frame)


def csv_rows_bytes(frame: pd.DataFrame, n: int, metadata) -> int:
    """Estimated size [bytes] of a CSV rows file of `n` rows like those of `frame` (a sample of
    the run's, `tidy_rows`), with its metadata sidecar: the bytes of the sample's CSV text whole
    and half give the bytes per row and the header's."""
    from econ.analysis.runner import writer_sizes

    count = len(frame)
    per_row, header = writer_sizes(lambda k: len(rows_csv_text(frame.iloc[:k]).encode()), count)
    sidecar = len(strict_json.dumps(dict(metadata), indent=2, default=str).encode())
    return int(header + n * per_row + sidecar)


def rows_file_bytes(result: RunResult, path: str | os.PathLike) -> int:
    """Estimated size [bytes] of the rows file `path` of a run with chunk files: for Parquet,
    their total (the same writer, a row group a chunk); for CSV, from the first chunk's rows."""
    files = [result.store.path(i) for i in range(result.chunks)]
    if Path(path).suffix.lower() == ".parquet":
        return sum(f.stat().st_size for f in files if f.exists())
    first = tidy_rows(next(result.store.iter_tables(1)).to_pandas())
    return csv_rows_bytes(first, result.job.n, result.metadata)


def read_rows_metadata(path: str | os.PathLike) -> dict:
    """Run metadata of a rows file written by `write_rows` (Parquet schema or CSV sidecar)."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return json.loads((pq.read_schema(path).metadata or {}).get(METADATA_KEY, b"{}"))
    return json.loads(meta_path(path).read_text())


def format_frame(
    frame: pd.DataFrame, formats: dict[str, str] | None = None, max_rows: int = 50
) -> str:
    """Plain text table, right-aligned numbers; at most `max_rows` rows (says how many more)."""
    formats = formats or {}
    shown = frame.head(max_rows)
    header = [str(c) for c in shown.columns]
    body = []
    for _, row in shown.iterrows():
        cells = []
        for name in shown.columns:
            value = row[name]
            cells.append(cell_text(value, formats.get(name)))
        body.append(cells)
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    numeric = [pd.api.types.is_numeric_dtype(shown[c]) for c in shown.columns]

    def line(cells):
        return "  ".join(
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    lines = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in body]
    if len(frame) > max_rows:
        lines.append(f"... {len(frame) - max_rows:,} more rows (use --format csv or --out)")
    return "\n".join(lines)


def risk_text(key: str, value: float) -> str:
    """A run's risk figure as the terminal and the reports write it: the probability of a loss
    or of a covenant breach in percent, value at risk and expected shortfall in whole USD."""
    return f"{value:.2%}" if key.startswith("probability_of") else f"{value:,.0f}"


def cell_text(value, fmt: str | None = None) -> str:
    """A table cell as the terminal and the Markdown reports write it: n/a for a missing value,
    a number with its thousands grouped (econ.labels.short_number; a whole number exactly, as
    38,000) unless `fmt` is given."""
    if value is None or (isinstance(value, float | np.floating) and np.isnan(value)):
        return "n/a"
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, float | np.floating | int | np.integer) and fmt:
        return fmt.format(value)
    if isinstance(value, float | np.floating):
        return short_number(value)  # 5,631 and 70,312 beside -102,283, not 7.031e+04
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"  # a tornado's 38,000 beside a base of 3,100,000, not 38000
    return str(value)
