"""Writers for projections: CSV, Parquet and Excel, written atomically and safe to open.

Text the user controls (scenario names, warnings) could start with `=`, `+`, `-` or `@` and become a
formula when a spreadsheet opens a CSV; such cells are prefixed with an apostrophe (OWASP, "CSV
Injection"), in CSV and in XLSX alike.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from econ import __version__
from econ.engine import COMPONENTS, Projection
from econ.errors import InputError
from econ.scenario.io import atomic_write

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
FORMATS = {".csv": "csv", ".parquet": "parquet", ".xlsx": "xlsx"}


class ExportError(InputError):
    """An output that cannot be written as asked (unknown suffix, existing file, bad folder)."""


def neutralize(value):
    """Prefix text that a spreadsheet would read as a formula with an apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def flat_summary(projection: Projection) -> pd.DataFrame:
    """Summary with one column per component (`cost_usd_per_mtok_<component>`) and warnings joined.

    Undefined metrics stay empty (None), never NaN strings.
    """
    summary = projection.summary.copy()
    parts = pd.DataFrame(projection.component_dicts(), index=summary.index)
    parts.columns = [f"cost_usd_per_mtok_{c}" for c in COMPONENTS]
    position = summary.columns.get_loc("cost_usd_per_mtok_by_component")
    summary = summary.drop(columns="cost_usd_per_mtok_by_component")
    for offset, name in enumerate(parts.columns):
        summary.insert(position + offset, name, parts[name])
    summary["warnings"] = summary["warnings"].map("; ".join)
    return summary.reset_index()


def _safe_text(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for name in frame.columns:
        if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name]):
            frame[name] = frame[name].map(neutralize)
    return frame


def csv_text(frame: pd.DataFrame) -> str:
    """CSV of a frame with formula-like text neutralized; full float precision."""
    return _safe_text(frame).to_csv(index=False, float_format="%.17g", lineterminator="\n")


def output_paths(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """Where the monthly schedule and the summary go for an --out path.

    CSV and Parquet hold one table each, so the summary goes beside the schedule as
    `<stem>.summary<suffix>`; an Excel workbook holds both as sheets.
    """
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise ExportError(
            f"{path}: unknown output format '{path.suffix}'; expected one of: " + ", ".join(FORMATS)
        )
    if kind == "xlsx":
        return path, None
    return path, path.with_name(f"{path.stem}.summary{path.suffix}")


def write_projection(
    projection: Projection, path: str | os.PathLike, overwrite: bool = False
) -> list[Path]:
    """Write the monthly schedule and the summary to `path` (.csv, .parquet or .xlsx).

    Refuses to overwrite existing files unless `overwrite`; each file is written atomically.
    Returns the paths written.
    """
    monthly_path, summary_path = output_paths(path)
    targets = [p for p in (monthly_path, summary_path) if p is not None]
    if not monthly_path.parent.is_dir():
        raise ExportError(f"{monthly_path}: folder {monthly_path.parent} does not exist")
    existing = [str(p) for p in targets if p.exists()]
    if existing and not overwrite:
        raise ExportError(f"{', '.join(existing)} exists; use --force to overwrite")
    monthly = projection.monthly.reset_index()
    summary = flat_summary(projection)
    kind = FORMATS[monthly_path.suffix.lower()]
    if kind == "csv":
        atomic_write(monthly_path, csv_text(monthly), overwrite=True)
        atomic_write(summary_path, csv_text(summary), overwrite=True)
    elif kind == "parquet":
        metadata = {b"econ_version": __version__.encode()}
        for frame, target in ((monthly, monthly_path), (summary, summary_path)):
            buffer = io.BytesIO()
            table = _arrow_table(frame, metadata)
            import pyarrow.parquet as pq

            pq.write_table(table, buffer)
            atomic_write(target, buffer.getvalue(), overwrite=True)
    else:
        buffer = io.BytesIO()
        with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
            _safe_text(summary).to_excel(writer, sheet_name="Summary", index=False)
            _safe_text(monthly).to_excel(writer, sheet_name="Monthly", index=False)
        atomic_write(monthly_path, buffer.getvalue(), overwrite=True)
    return targets


def _arrow_table(frame: pd.DataFrame, metadata: dict[bytes, bytes]):
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
