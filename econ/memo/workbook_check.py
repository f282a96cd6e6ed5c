"""`econ verify` of an exported workbook (econ.workbook): the scenarios are read from the Notes
sheet (`scenario_toml` rows), projected again with this econ, and every figure of the Summary sheet
(one metric per row, read back by econ.workbook.read_summary) and the engine's columns of the
Monthly sheet (the cached results of its formulas and its values) are compared with the
projection; every cell of the Annual, Depreciation, Debt and Debt schedule sheets and Monthly's
working columns with the workbook econ writes again from those scenarios (REBUILT_SHEETS); the
inputs shown on Assumptions with the embedded scenarios; the stamp's econ version, catalogs and
scenario hashes too. Not checked: the text of the Notes sheet beyond the stamp and the scenarios,
Assumptions' sources, provenance and live columns and derived figures, the charts, number
formats, styles and data validation. A difference is named by sheet, column, scenario and period
and the sheet's row (`Monthly.revenue_usd of seed, month 1 (sheet row 3)`).

The workbook's formulas are checked against the engine to 1e-9 relative when written (see
econ.workbook), so figures here agree within WORKBOOK_TOLERANCE of each sheet column's scale.

Before openpyxl reads a cell, the package is held to what econ writes (`_check_package`): its
size, its parts' declared sizes and compression ratios (the limits of a zipped submission,
econ.throughput.importers.mlperf_endpoints), and the rows and columns each sheet spans, counted as
its XML streams in. A reader fills in every blank cell of the rectangle a sheet spans, so a sheet
of a few cells far apart costs as much as a full one, and a few hundred kilobytes of repeated
cells unzip to millions.
"""

from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path
from xml.parsers import expat

import numpy as np
import pandas as pd
from openpyxl.utils.cell import CellCoordinatesException, coordinate_to_tuple

from econ import __version__
from econ.errors import InputError
from econ.files import size_text, zip_member_refusal
from econ.memo.verify import NotAMemoError, Report, read_bounded, refuse_files
from econ.provenance import catalog_versions, scenario_sha256
from econ.scenario.errors import ScenarioError, shortened
from econ.workbook import MAX_ROWS

WORKBOOK_TOLERANCE = 1e-7
"""Relative difference (to the column's largest magnitude) under which a cell agrees."""
SHEETS = ("Summary", "Monthly", "Notes")
NOTES_COLUMNS = ("section", "scenario", "item", "text")
"""The Notes sheet's columns the stamp and the embedded scenarios are read from."""

MAX_WORKBOOK_BYTES = 64 * 1024 * 1024
"""Bytes of a workbook read, and of all its parts unzipped as they declare, as for a zipped MLPerf
submission (a one-scenario workbook is about 120 kB, 850 kB unzipped)."""
MAX_PARTS = 5_000
"""Parts (zip members) of a workbook read: econ writes a dozen."""
MAX_COLUMNS = 16_384
"""Columns a sheet may span: Excel's (A to XFD), for which econ writes its workbooks."""
MAX_CELLS = MAX_WORKBOOK_BYTES // len(b"<c><v>0</v></c>")
"""Cells the sheets may span in all (each sheet's last row times its last column, the blanks
included: a reader fills each in): as many as MAX_WORKBOOK_BYTES of sheet XML holds at the
shortest a cell is written. A workbook spanning more is mostly blanks."""
_ROW_TAG = "http://schemas.openxmlformats.org/spreadsheetml/2006/main row"
"""A sheet's row element as expat names it (namespace, space, name): the tag openpyxl reads."""


def _number(value):
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        value = float(value)
        return value if math.isfinite(value) else None
    return None


class _Refused(Exception):  # noqa: N818 - control flow: stops expat, carries the message
    """A part spans more than econ writes (raised inside expat's handlers)."""


class _Extent:
    """The rows and columns each part's sheet spans, as openpyxl reads them (a row's number is
    its r, else the previous row's plus 1; a cell is any child of a row, its column its r's, else
    the previous cell's plus 1), counted as the XML streams in; _Refused at the first row,
    column or total of cells past the limits."""

    def __init__(self):
        self.cells = 0  # spanned by the parts scanned so far

    def _check(self, name: str, rows: int, columns: int) -> None:
        where = f"the part {shortened(name)}"
        if rows > MAX_ROWS:
            raise _Refused(
                f"{where} reaches row {rows:,}; a sheet econ writes holds at most {MAX_ROWS:,} "
                "rows (econ.workbook.MAX_ROWS)"
            )
        if columns > MAX_COLUMNS:
            raise _Refused(
                f"{where} reaches column {columns:,}; expected at most {MAX_COLUMNS:,} (XFD, "
                "Excel's last)"
            )
        if self.cells + rows * columns > MAX_CELLS:
            raise _Refused(
                f"{where} spans {rows:,} rows by {columns:,} columns, and the sheets more than "
                f"{MAX_CELLS:,} cells in all (blanks included, which a reader fills in); "
                "expected a workbook written by econ"
            )

    def scan(self, name: str, stream) -> None:
        """Count the part's rows and columns as its XML streams in (_Refused past a limit)."""
        rows = columns = row = column = depth = 0
        row_depth = -1  # depth of the row open, -1 for none
        where = f"the part {shortened(name)}"

        def start(tag, attrs):
            nonlocal rows, columns, row, column, depth, row_depth
            depth += 1
            if tag == _ROW_TAG:
                if row_depth >= 0:
                    raise _Refused(f"{where} has a row in a row; expected a sheet as econ writes")
                row_depth, column = depth, 0
                row = _row_number(attrs.get("r"), row)
                if row is None:
                    raise _Refused(
                        f"{where} has a row numbered {shortened(str(attrs['r']))}; expected 1, 2, ..."
                    )
                if row > rows:
                    rows = row
                    self._check(name, rows, columns)
            elif depth == row_depth + 1:  # a cell (any child of a row, as openpyxl reads it)
                ref = attrs.get("r")
                cell_row = 0
                if ref:
                    try:
                        cell_row, column = coordinate_to_tuple(ref)
                    except (CellCoordinatesException, ValueError, TypeError):
                        raise _Refused(
                            f"{where} has a cell at {shortened(ref)}; expected a reference such as B7"
                        ) from None
                else:
                    column += 1
                if column > columns or cell_row > rows:
                    rows, columns = max(rows, cell_row), max(columns, column)
                    self._check(name, rows, columns)

        def end(tag):
            nonlocal depth, row_depth
            if depth == row_depth:
                row_depth = -1
            depth -= 1

        def doctype(*_):
            raise _Refused(f"{where} declares a DOCTYPE, which econ does not write")

        parser = expat.ParserCreate(namespace_separator=" ")
        parser.StartElementHandler = start
        parser.EndElementHandler = end
        parser.StartDoctypeDeclHandler = doctype
        try:
            while chunk := stream.read(1 << 20):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
        except expat.ExpatError:
            pass  # not XML (an image) or not well-formed: openpyxl reads no sheet from it
        self.cells += rows * columns


def _row_number(text: str | None, previous: int) -> int | None:
    """A row's number as openpyxl reads its r (a whole number, also written as a float), the
    previous one's plus 1 without; None for another r (openpyxl refuses it)."""
    if text is None:
        return previous + 1
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def _check_package(path: Path, data: bytes) -> None:
    """NotAMemoError, before openpyxl reads a cell, for a package econ does not write: too many
    parts, a part compressed otherwise, encrypted, expanding more than econ.files.MAX_ZIP_RATIO times, parts
    declaring more than MAX_WORKBOOK_BYTES in all, or a sheet spanning more rows, columns or
    cells than econ writes (`_Extent`; the parts are read no further than they declare)."""
    expected = "expected a workbook written by econ"
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except Exception as exc:  # zipfile raises several types for a damaged package
        raise NotAMemoError(
            f"{path}: not a readable workbook ({type(exc).__name__}); {expected} (.xlsx)"
        ) from None
    if len(members) > MAX_PARTS:
        raise NotAMemoError(
            f"{path}: {len(members):,} parts in the package; {expected}, at most {MAX_PARTS:,}"
        )
    declared = 0
    for member in members:
        shown = f"{path}: the part {shortened(member.filename)}"
        refusal = zip_member_refusal(member)
        if refusal:
            raise NotAMemoError(f"{shown} {refusal}; {expected}")
        declared += member.file_size
        if declared > MAX_WORKBOOK_BYTES:
            raise NotAMemoError(
                f"{path}: its parts declare more than {size_text(MAX_WORKBOOK_BYTES)} unzipped "
                f"(up to {shortened(member.filename)}); {expected}"
            )
    extent = _Extent()
    for member in members:
        try:
            with archive.open(member) as stream:
                extent.scan(member.filename, stream)
        except _Refused as exc:
            raise NotAMemoError(f"{path}: {exc}") from None
        except Exception as exc:  # (zipfile, zlib, bz2 and lzma raise several types)
            raise NotAMemoError(
                f"{path}: not a readable workbook ({type(exc).__name__} in the part "
                f"{shortened(member.filename)}); {expected} (.xlsx)"
            ) from None


def _read(path: Path) -> dict[str, pd.DataFrame]:
    data = read_bounded(path, MAX_WORKBOOK_BYTES, "a workbook written by econ (.xlsx)")
    _check_package(path, data)
    try:
        sheets = pd.read_excel(io.BytesIO(data), sheet_name=None, engine="openpyxl")
    except Exception as exc:  # openpyxl and zipfile raise many types for a damaged package
        raise NotAMemoError(
            f"{path}: not a readable workbook ({type(exc).__name__}); expected a .xlsx "
            "written by econ"
        ) from None
    missing = [name for name in SHEETS if name not in sheets]
    if missing:
        raise NotAMemoError(
            f"{path}: no {', '.join(missing)} sheet; expected a workbook written by econ"
        )
    return sheets


def verify_workbook(path: Path) -> Report:
    """Recompute an econ workbook and list each figure that differs."""
    from econ.engine import project
    from econ.reporting import flat_summary
    from econ.scenario.io import loads, scenario_to_dict
    from econ.workbook import SCENARIO_TOML_ITEM, WorkbookError, read_summary

    sheets = _read(path)
    try:
        summary = read_summary(sheets["Summary"])
    except WorkbookError as exc:
        raise NotAMemoError(f"{path}: {exc}") from None
    notes = sheets["Notes"].fillna("")
    missing = [column for column in NOTES_COLUMNS if column not in notes.columns]
    if missing:
        raise NotAMemoError(
            f"{path}: the Notes sheet has no {', '.join(repr(c) for c in missing)} column; "
            f"expected the columns {', '.join(NOTES_COLUMNS)} of a workbook written by econ"
        )
    report = Report(str(path), "workbook")
    out = report.differences
    rows = list(zip(notes["section"], notes["scenario"], notes["item"], notes["text"], strict=True))
    prov = {item: text for section, _, item, text in rows if section == "provenance"}
    hashes = {name: text for s, name, item, text in rows if item == "scenario_sha256"}
    tomls = [(name, text) for s, name, item, text in rows if item == SCENARIO_TOML_ITEM]
    if "econ_version" not in prov:
        raise NotAMemoError(f"{path}: no econ stamp in the Notes sheet; expected an econ workbook")
    if not tomls:
        raise NotAMemoError(
            f"{path}: the Notes sheet holds no scenario_toml; the workbook was written by an econ "
            "that did not embed its scenarios, or without them: it cannot be recomputed"
        )
    if str(prov["econ_version"]) != __version__:
        out.append(f"econ_version: made by econ {prov['econ_version']}, this is econ {__version__}")
    for name, version in sorted(catalog_versions().items()):
        report.checked += 1
        stamped = str(prov.get(f"catalog {name}", ""))
        if stamped != version:
            out.append(f"catalogs.{name}: stamped {stamped or 'none'}, now {version}")
    scenarios = []
    for name, text in tomls:
        try:
            scenario = loads(str(text), file=f"{path} (scenario {name})")
            refuse_files(scenario_to_dict(scenario), str(path))
        except ScenarioError as exc:
            raise InputError(
                f"{path}: the embedded scenario {name} no longer validates with econ "
                f"{__version__}: {exc}"
            ) from None
        report.checked += 1
        sha = scenario_sha256(scenario)
        if sha != str(hashes.get(name, "")):
            out.append(
                f"{name}.scenario_sha256: stamped {hashes.get(name) or 'none'}, the embedded "
                f"scenario hashes to {sha} (the scenario was changed)"
            )
        scenarios.append(scenario)
    if "Assumptions" in sheets:
        _compare_inputs(sheets["Assumptions"], scenarios, report)
    else:
        out.append("Assumptions: no such sheet; the inputs shown cannot be checked")
    projection = project(scenarios)
    names = [str(name) for name in projection.names]
    keys = [str(key) for key in sheets["Summary"]["Key"].tolist()]

    def summary_cell(k: int, column: str) -> str:  # one row per metric, a column per scenario
        where = f" ({_column_letter(3 + k)}{keys.index(column) + 2})" if column in keys else ""
        return f"Summary.{column} of {names[k]}{where}"

    _compare_frame(summary, flat_summary(projection), report, summary_cell)
    monthly = projection.monthly.reset_index()
    _compare_frame(sheets["Monthly"], monthly, report, _row_of("Monthly", sheets["Monthly"]))
    _compare_rebuilt(sheets, projection, scenarios, set(monthly.columns), report)
    return report


REBUILT_SHEETS = ("Monthly", "Annual", "Depreciation", "Debt", "Debt schedule")
"""Sheets compared, cell by cell, with the workbook econ writes again from the embedded scenarios
(Monthly: its working columns; the engine's columns are compared with the projection)."""
_ROW_KEYS = {
    "Monthly": ("scenario", "month", "month"),
    "Depreciation": ("scenario", "month", "month"),
    "Debt": ("scenario", "month", "month"),
    "Annual": ("scenario", "tax_year", "tax year"),
    "Debt schedule": ("Scenario", "Asset year", "asset year"),
}
"""Per sheet: the columns naming a row's scenario and period, and the period's name."""


def _column_letter(j: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(j)


def _row_of(sheet: str, frame: pd.DataFrame):
    """Where a data row of a sheet is, in words: `Monthly.revenue_usd of seed, month 1 (sheet
    row 3)` (pandas' row k is the sheet's row k + 2, below the header)."""
    scenario, period, word = _ROW_KEYS[sheet]

    def where(k: int, column: str) -> str:
        parts = []
        if scenario in frame.columns and k < len(frame):
            parts.append(f" of {frame[scenario].iloc[k]}")
        if (
            period in frame.columns
            and k < len(frame)
            and _number(frame[period].iloc[k]) is not None
        ):
            parts.append(f", {word} {int(_number(frame[period].iloc[k]))}")
        return f"{sheet}.{column}{''.join(parts)} (sheet row {k + 2})"

    return where


def _compare_rebuilt(sheets, projection, scenarios, engine_columns: set, report: Report) -> None:
    """The sheets of REBUILT_SHEETS against the workbook econ writes again from the embedded
    scenarios (every cell: the cached results of its formulas and its values)."""
    from econ.workbook import workbook_bytes

    data = workbook_bytes(projection, scenarios)
    rebuilt = pd.read_excel(io.BytesIO(data), sheet_name=list(REBUILT_SHEETS), engine="openpyxl")
    for name in REBUILT_SHEETS:
        if name not in sheets:
            report.differences.append(f"{name}: no such sheet; its figures cannot be checked")
            continue
        shown, expected = sheets[name], rebuilt[name]
        missing = [c for c in expected.columns if c not in shown.columns]
        if missing:
            report.differences.append(f"{name}: no column {missing[0]!r}, which econ writes")
        skip = engine_columns - {"scenario", "month"} if name == "Monthly" else set()
        columns = [c for c in expected.columns if c in shown.columns and c not in skip]
        _compare_frame(shown[columns], expected[columns], report, _row_of(name, expected))


def _compare_frame(shown: pd.DataFrame, expected: pd.DataFrame, report: Report, where) -> None:
    """Each column of `shown` that `expected` has, cell by cell: numbers within
    WORKBOOK_TOLERANCE of the column's largest magnitude, text as written; one line per column
    (the first cell that differs), placed by `where(row, column)`."""
    if len(shown) != len(expected):
        sheet = where(0, "").split(".")[0]
        report.differences.append(f"{sheet}: {len(shown)} rows, recomputed {len(expected)}")
        return
    for column in shown.columns:
        if column in ("date",) or column not in expected.columns:
            continue
        values = expected[column].tolist()
        cells = shown[column].tolist()
        if column == "warnings":
            for k, (cell, value) in enumerate(zip(cells, values, strict=True)):
                report.checked += 1
                if str(cell if isinstance(cell, str) else "") != str(value or ""):
                    report.differences.append(f"{where(k, column)}: warnings differ")
            continue
        numbers = [_number(v) for v in values]
        finite = [abs(v) for v in numbers if v is not None]
        scale = max(finite, default=0.0) or 1.0
        for k, (cell, value) in enumerate(zip(cells, values, strict=True)):
            report.checked += 1
            if not _same_cell(cell, value, numbers[k], scale):
                shown_value = _number(cell) if _number(cell) is not None else cell
                report.differences.append(
                    f"{where(k, column)}: shown {_plain(shown_value)}, recomputed "
                    f"{_plain(numbers[k] if numbers[k] is not None else value)}"
                )
                break  # one line per column: the first cell that differs


def _same_cell(cell, value, number, scale: float) -> bool:
    got = _number(cell)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return got is None  # a null metric or a blank: its reason as text, or nothing
    if number is not None or got is not None:
        return (
            got is not None
            and number is not None
            and abs(got - number) <= WORKBOOK_TOLERANCE * scale
        )
    blank = lambda v: v is None or (isinstance(v, float) and math.isnan(v)) or v == ""  # noqa: E731
    if blank(cell) or blank(value):
        return blank(cell) and blank(value)
    return str(cell) == str(value)


def _plain(value):
    """A figure as a message shows it: numbers as Python floats (not numpy's repr)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return repr(value)


def _compare_inputs(shown: pd.DataFrame, scenarios, report: Report) -> None:
    """Each input the Assumptions sheet shows against the embedded scenario's: the figures are
    the scenario's, so an input edited in the workbook (and recalculated there or not) is an
    input the figures do not rest on. Numbers, text and blanks are compared; lists and dates are
    left to the scenario's hash."""
    from econ.workbook import scenario_inputs

    if "input" not in shown.columns:
        report.differences.append("Assumptions: no 'input' column; expected an econ workbook")
        return
    rows = {str(path): i for i, path in enumerate(shown["input"]) if isinstance(path, str)}
    n = len(scenarios)
    for k, scenario in enumerate(scenarios):
        column = "value" if n == 1 else f"value ({k + 1})"
        if column not in shown.columns:
            report.differences.append(f"Assumptions: no '{column}' column")
            continue
        for path, value in scenario_inputs(scenario):
            if path not in rows or isinstance(value, list | tuple | dict) or hasattr(value, "year"):
                continue
            report.checked += 1
            cell = shown[column].iloc[rows[path]]
            if _same_input(cell, value):
                continue
            where = f"Assumptions.{path}" + ("" if n == 1 else f" (scenario {k + 1})")
            report.differences.append(
                f"{where}: shown {_shown(cell)}, the embedded scenario gives {_shown(value)}"
            )


def _same_input(cell, value) -> bool:
    blank = cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell == ""
    if value is None or value == "":
        return blank
    if isinstance(value, bool):
        return (
            not blank and bool(cell) == value and str(cell).lower() in ("true", "false", "1", "0")
        )
    if isinstance(value, int | float):
        got = _number(cell)
        return got is not None and abs(got - value) <= 1e-12 * max(abs(value), 1.0)
    return str(cell) == str(value)


def _shown(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "a blank"
    return repr(value.item() if hasattr(value, "item") else value)
