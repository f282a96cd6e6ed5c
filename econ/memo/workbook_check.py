"""`econ verify` of an exported workbook (econ.workbook): the scenarios are read from the Notes
sheet (`scenario_toml` rows), projected again with this econ, and every figure of the Summary sheet
(one metric per row, read back by econ.workbook.read_summary) and the engine's columns of the
Monthly sheet (the cached results of its formulas and its values) are compared with the
projection; the inputs shown on Assumptions with the embedded scenarios; the stamp's econ version,
catalogs and scenario hashes too, and the form of its texts (creation time, hashes, version) as
the memo's. Everything else is compared with the workbook econ writes again from those scenarios,
stamped with the same creation time (`_compare_rebuilt`): the sheets and their order, every
sheet's header row, every cell of the Annual, Depreciation, Debt, Debt schedule, Tranches and
Tranche summary sheets and Monthly's working columns (REBUILT_SHEETS), and every text cell of
the Summary (labels, units, keys, the reasons of figures that are n/a), Assumptions (units,
descriptions, sources, provenance, live), Notes and Charts sheets, with Assumptions' derived
figures and constants; and every cell's type, formula and number format, the defined names, the
calculation's precision (full, not "as displayed"), the conditional formats (range, rule and
what each shows: number format, font, fill, border), each sheet's state (a sheet hidden or
very hidden after the export is named) and the rows and columns hidden or too low or narrow to read (`_compare_cells`): what Excel computes and shows
when it opens the file (it recalculates on load), not only the results cached in it. Not
checked: the charts themselves, the cells' own fonts and fills (a white font set on a cell),
cell notes, data validation and the document properties. A difference is named by sheet, column, scenario and period and the sheet's
row (`Monthly.revenue_usd of seed, month 1 (sheet row 3)`; a tranche sheet's names the tranche
too), or by cell (`Summary!A12`).

Tolerance. A figure agrees with the recomputed one within WORKBOOK_TOLERANCE of its column's
largest magnitude (at least 1); a figure the sheet shows in cents (econ.workbook.CURRENCY) within
half a cent besides (MONEY_TOLERANCE_USD): an edit that changes a cent the sheet shows is a
difference; any other figure (a ratio, a share, a count) within FIGURE_TOLERANCE of its own
magnitude (at least 1) besides. A workbook opened, recalculated and saved by LibreOffice with its
inputs unchanged agrees within these (tests/test_memo_workbook.py).

Before openpyxl reads a cell, the package is held to what econ writes (`_check_package`): its
size, its parts' declared sizes and compression ratios (the limits of a zipped submission,
econ.throughput.importers.mlperf_endpoints), the parts a spreadsheet needs, and the rows and
columns each sheet spans, counted as its XML streams in. A reader fills in every blank cell of
the rectangle a sheet spans, so a sheet of a few cells far apart costs as much as a full one, and
a few hundred kilobytes of repeated cells unzip to millions. A formula cell without a calculated
result (a workbook saved by a program that does not calculate, as openpyxl) is refused in one
line: there is no figure to compare.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
import warnings
import zipfile
from pathlib import Path
from xml.parsers import expat

import numpy as np
import pandas as pd
from openpyxl.utils.cell import CellCoordinatesException, coordinate_to_tuple

from econ import __version__, units
from econ.errors import InputError
from econ.files import size_text, zip_member_refusal
from econ.memo.verify import (
    STAMP_TEXT_FORMS,
    NotAMemoError,
    Report,
    read_bounded,
    refuse_files,
)
from econ.provenance import CREATED_FIELD, catalog_versions, scenario_sha256
from econ.scenario.errors import ScenarioError, shortened
from econ.text import WARNING_SEPARATOR, clipped
from econ.workbook import MAX_ROWS

WORKBOOK_TOLERANCE = 1e-12
"""Difference, relative to the largest magnitude in the cell's column (at least 1), under which
a figure agrees. LibreOffice, recalculating and saving the workbook of every ready-made scenario
with unchanged inputs, differs from the engine by at most 3.4e-14 of that magnitude (it saves
15 significant digits; its IRR starts at the engine's root): a margin of about 30."""
FIGURE_TOLERANCE = 1e-9
"""Difference, relative to a figure's own magnitude (at least 1), under which a figure not shown
in cents (a DSCR, a share, a count) agrees: LibreOffice's ratio of two small operands differs
from the engine's by more than WORKBOOK_TOLERANCE of the column (a minimum DSCR of
1.29999999998834 against 1.3000000000000003: 9e-12 relative), far below any digit shown."""
MONEY_TOLERANCE_USD = units.HALF_CENT_USD
"""Difference under which a figure shown in cents agrees, where it exceeds WORKBOOK_TOLERANCE of
the column [USD]: below the cent the sheet shows (a 20 USD edit of a 210 million USD NPV is a
difference; at 1e-7 relative it was not)."""
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
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_ROW_TAG = f"{_MAIN} row"
"""A sheet's row element as expat names it (namespace, space, name): the tag openpyxl reads."""
_FORMULA_TAG, _VALUE_TAG = f"{_MAIN} f", f"{_MAIN} v"
"""A cell's formula and its cached result."""
_COLUMN_TAG, _FORMAT_TAG = f"{_MAIN} col", f"{_MAIN} sheetFormatPr"
"""A column's width and state, the sheet's default row height (ECMA-376 Part 1, 18.3.1.13,
18.3.1.81)."""
_RULE_NAMES = ("conditionalFormatting", "cfRule", "formula", "f", "sqref")
"""A conditional format (its range), its rule and the rule's formula, by local name in any
namespace: the main one's (18.3.1.18, 18.3.1.10) and Excel 2010's extension's (x14:cfRule with
xm:f and xm:sqref, in the sheet's extLst), which Excel shows alike."""
ROW_HEIGHT_MIN_PT = 6.0
"""A row lower than this [pt] hides its figures as a hidden row does: about half the line of
the 11-point font econ writes (econ writes every row at the default 15 pt)."""
COLUMN_WIDTH_MIN = 1.0
"""A column narrower than this [characters] hides its figures (econ's narrowest is 11)."""
HIDDEN_KEPT = 1_000
"""Ranges of hidden rows or columns, and conditional formats, kept of a sheet (the rest are
counted): econ writes none hidden and one conditional format."""


def _true(value) -> bool:
    """An XML Schema boolean attribute (ECMA-376 writes 1 or true, LibreOffice true or false)."""
    return str(value).strip().lower() in ("1", "true")


def _below(value, limit: float) -> bool:
    """Whether a height or width attribute is a number below `limit` (a text is not)."""
    try:
        return float(value) < limit
    except (TypeError, ValueError):
        return False


class _Hides:
    """What a sheet part hides, and its conditional formats, as its XML writes them (read by
    `_Extent` as the part streams in): ranges of rows hidden or lower than ROW_HEIGHT_MIN_PT
    and of columns hidden or narrower than COLUMN_WIDTH_MIN (the first HIDDEN_KEPT of each,
    `more` counting the rest), whether rows are hidden by default (sheetFormatPr zeroHeight,
    or a default height below the minimum), and each rule: [range, type, dxfId, formulas]."""

    def __init__(self):
        self.rows: list[list[int]] = []
        self.columns: list[tuple[int, int]] = []
        self.rows_by_default = False
        self.rules: list[list] = []
        self.more = 0

    def _keep(self, items: list, item) -> None:
        if len(items) < HIDDEN_KEPT:
            items.append(item)
        else:
            self.more += 1

    def row(self, number: int, attrs) -> None:
        if not (_true(attrs.get("hidden")) or _below(attrs.get("ht"), ROW_HEIGHT_MIN_PT)):
            return
        if self.rows and self.rows[-1][1] == number - 1:  # (rows stream in order)
            self.rows[-1][1] = number
        else:
            self._keep(self.rows, [number, number])

    def column(self, attrs) -> None:
        if _true(attrs.get("hidden")) or _below(attrs.get("width"), COLUMN_WIDTH_MIN):
            first = _row_number(attrs.get("min"), 0) or 1
            self._keep(self.columns, (first, _row_number(attrs.get("max"), 0) or first))

    def default_rows(self, attrs) -> None:
        self.rows_by_default = _true(attrs.get("zeroHeight")) or _below(
            attrs.get("defaultRowHeight"), ROW_HEIGHT_MIN_PT
        )

    def rule(self, sqref: str, attrs, extension: bool) -> None:
        kind = str(attrs.get("type", ""))
        dxf = None if extension else attrs.get("dxfId")  # (an extension's holds its own style)
        self._keep(
            self.rules, [sqref, f"{kind} (Excel 2010 extension)" if extension else kind, dxf, []]
        )


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
        self.uncalculated = 0  # formula cells without a calculated result
        self.first_uncalculated: tuple[str, str] | None = None  # (part, cell)
        self.hides: dict[str, _Hides] = {}  # by part: what it hides, its conditional formats

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
        # the cell open: its formula, whether its result has text, its type (t), in its result
        formula = result = in_result = False
        kind = ""
        hides = self.hides.setdefault(name, _Hides())
        sqref = ""  # the conditional format open
        opened = 0  # the rules kept before it
        in_rule = False
        rule_text: list[str] | None = None  # the text of a rule's formula or a range being read

        def start(tag, attrs):
            nonlocal rows, columns, row, column, depth, row_depth
            nonlocal formula, result, in_result, kind, sqref, opened, in_rule, rule_text
            depth += 1
            if row_depth < 0:  # (outside a row: the columns, the formats, the rules)
                local = tag.rpartition(" ")[2]
                if tag == _COLUMN_TAG:
                    hides.column(attrs)
                elif tag == _FORMAT_TAG:
                    hides.default_rows(attrs)
                elif local == "conditionalFormatting":
                    sqref, opened = str(attrs.get("sqref", "")), len(hides.rules)
                elif local == "cfRule":
                    hides.rule(sqref, attrs, extension=not tag.startswith(_MAIN))
                    in_rule = True
                elif local in _RULE_NAMES and (in_rule or local == "sqref"):
                    rule_text = []
            if row_depth >= 0 and depth == row_depth + 2:  # a cell's child
                formula = formula or tag == _FORMULA_TAG
                in_result = tag == _VALUE_TAG
            if tag == _ROW_TAG:
                if row_depth >= 0:
                    raise _Refused(f"{where} has a row in a row; expected a sheet as econ writes")
                row_depth, column = depth, 0
                row = _row_number(attrs.get("r"), row)
                if row is None:
                    raise _Refused(
                        f"{where} has a row numbered {shortened(str(attrs['r']))}; expected 1, 2, ..."
                    )
                hides.row(row, attrs)
                if row > rows:
                    rows = row
                    self._check(name, rows, columns)
            elif depth == row_depth + 1:  # a cell (any child of a row, as openpyxl reads it)
                formula = result = in_result = False
                kind = attrs.get("t", "")
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
            nonlocal depth, row_depth, in_result, in_rule, rule_text
            local = tag.rpartition(" ")[2]
            if rule_text is not None and local in _RULE_NAMES:
                if local == "sqref":  # (an extension's range follows its rules)
                    for rule in hides.rules[opened:]:
                        rule[0] = "".join(rule_text)
                elif hides.rules:
                    hides.rules[-1][3].append("".join(rule_text))
                rule_text = None
            in_rule = in_rule and local != "cfRule"
            if depth == row_depth:
                row_depth = -1
            elif row_depth >= 0 and depth == row_depth + 1 and formula and not result:
                # (an empty result of type str is a formula's empty text, which econ writes)
                if kind != "str":
                    self.uncalculated += 1
                    if self.first_uncalculated is None:
                        self.first_uncalculated = (name, f"{_column_letter(column)}{row}")
            in_result = False
            depth -= 1

        def text(data):
            nonlocal result
            if in_result and data.strip():
                result = True
            if rule_text is not None:
                rule_text.append(data)

        def doctype(*_):
            raise _Refused(f"{where} declares a DOCTYPE, which econ does not write")

        parser = expat.ParserCreate(namespace_separator=" ")
        parser.StartElementHandler = start
        parser.EndElementHandler = end
        parser.CharacterDataHandler = text
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
    previous one's plus 1 without; None for another r (openpyxl refuses it) and for one below 1
    (ECMA-376 Part 1, 18.3.1.73: a sheet's rows are numbered from 1)."""
    if text is None:
        return previous + 1
    try:
        number = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return None
        number = int(value) if value.is_integer() else None
    return number if number is not None and number >= 1 else None


REQUIRED_PARTS = ("[Content_Types].xml", "xl/workbook.xml")
"""Parts without which no spreadsheet program reads a package."""
DAMAGED = "a damaged workbook"
EXPECTED = "expected a workbook written by econ (.xlsx)"


def _check_package(path: Path, data: bytes) -> _Extent:
    """NotAMemoError, before openpyxl reads a cell, for a package econ does not write: empty,
    not a readable zip (truncated), without a part a spreadsheet needs, too many parts, a part
    compressed otherwise, encrypted, expanding more than econ.files.MAX_ZIP_RATIO times, parts
    declaring more than MAX_WORKBOOK_BYTES in all, a sheet spanning more rows, columns or
    cells than econ writes (`_Extent`; the parts are read no further than they declare), or
    formula cells without a calculated result. Returns the extent read (what each part hides,
    its conditional formats: `_Hides`)."""
    if not data:
        raise NotAMemoError(f"{path}: an empty file; {EXPECTED}")
    if not data.startswith(b"PK"):
        raise NotAMemoError(
            f"{path}: not a workbook: a workbook is a zip package, and this file does not start "
            f"as one (another kind of file, named as a workbook); {EXPECTED}"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except Exception:  # zipfile raises several types for a damaged package
        raise NotAMemoError(
            f"{path}: {DAMAGED}: not a readable zip package (cut short, or not saved "
            f"completely); {EXPECTED}"
        ) from None
    names = {member.filename for member in members}
    missing = [part for part in REQUIRED_PARTS if part not in names]
    if missing:
        raise NotAMemoError(
            f"{path}: {DAMAGED}: the package has no part {missing[0]}, which every workbook "
            f"holds; {EXPECTED}"
        )
    if len(members) > MAX_PARTS:
        raise NotAMemoError(
            f"{path}: {len(members):,} parts in the package; {EXPECTED}, at most {MAX_PARTS:,}"
        )
    declared = 0
    for member in members:
        shown = f"{path}: the part {shortened(member.filename)}"
        refusal = zip_member_refusal(member)
        if refusal:
            raise NotAMemoError(f"{shown} {refusal}; {EXPECTED}")
        declared += member.file_size
        if declared > MAX_WORKBOOK_BYTES:
            raise NotAMemoError(
                f"{path}: its parts declare more than {size_text(MAX_WORKBOOK_BYTES)} unzipped "
                f"(up to {shortened(member.filename)}); {EXPECTED}"
            )
    extent = _Extent()
    for member in members:
        try:
            with archive.open(member) as stream:
                extent.scan(member.filename, stream)
        except _Refused as exc:
            raise NotAMemoError(f"{path}: {exc}") from None
        except Exception:  # (zipfile, zlib, bz2 and lzma raise several types)
            raise NotAMemoError(
                f"{path}: {DAMAGED}: the part {shortened(member.filename)} cannot be unzipped; "
                f"{EXPECTED}"
            ) from None
    if extent.uncalculated:
        part, cell = extent.first_uncalculated
        try:
            from econ.workbook import sheet_parts

            titles = {target: title for title, target in sheet_parts(archive).items()}
        except Exception:  # (a package whose workbook part names no sheet as econ writes it)
            titles = {}
        where = f"{titles[part]}!{cell}" if part in titles else f"{cell} of {shortened(part)}"
        raise NotAMemoError(
            f"{path}: holds no calculated values ({extent.uncalculated:,} formula cells without "
            f"a result, the first {where}): it was saved by a program that does not calculate "
            "(such as openpyxl); open it in Excel or LibreOffice, save it and verify that file"
        )
    return extent


def read_sheets(data: bytes) -> dict[str, pd.DataFrame]:
    """Every sheet of a workbook's bytes, each cell as the workbook types it: a text cell is
    text ("NA", "N/A", "007", "TRUE" and "1e5" as written: pandas' defaults read the first two as
    missing and the others as numbers), a blank cell missing; a column of numbers (or dates)
    alone typed as such."""
    sheets = pd.read_excel(
        io.BytesIO(data),
        sheet_name=None,
        engine="openpyxl",
        dtype=object,
        keep_default_na=False,
        na_values=[""],
    )
    return {name: frame.infer_objects() for name, frame in sheets.items()}


@contextlib.contextmanager
def _openpyxl_quiet():
    """openpyxl's warnings silenced: it warns that it drops Excel 2010's extension rules (a
    conditional format of its own), which `_check_package` reads from the XML itself and reports
    as a difference; a warning on the terminal would only repeat it, in a library's words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _read(path: Path) -> tuple[bytes, dict[str, pd.DataFrame], dict[str, _Hides]]:
    """The workbook's bytes, its sheets (`read_sheets`) and what each part hides (`_Hides`, by
    part name), once the package is checked."""
    data = read_bounded(path, MAX_WORKBOOK_BYTES, "a workbook written by econ (.xlsx)")
    hides = _check_package(path, data).hides
    try:
        with _openpyxl_quiet():
            sheets = read_sheets(data)
    except Exception:  # openpyxl and zipfile raise many types for a damaged package
        raise NotAMemoError(
            f"{path}: {DAMAGED}: its parts cannot be read as a spreadsheet's; {EXPECTED}"
        ) from None
    missing = [name for name in SHEETS if name not in sheets]
    if missing:
        raise NotAMemoError(
            f"{path}: no {', '.join(missing)} sheet; expected a workbook written by econ"
        )
    return data, sheets, hides


def verify_workbook(path: Path) -> Report:
    """Recompute an econ workbook and list each figure that differs."""
    from econ.engine import project
    from econ.reporting import flat_summary
    from econ.scenario.io import loads, scenario_to_dict
    from econ.workbook import SCENARIO_TOML_ITEM, WorkbookError, read_summary

    data, sheets, hides = _read(path)
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
    tomls: dict[str, str] = {}  # a long TOML is in consecutive rows (econ.workbook.toml_pieces)
    for _, name, item, text in rows:
        if item == SCENARIO_TOML_ITEM:
            tomls[name] = tomls.get(name, "") + str(text)
    if "econ_version" not in prov:
        raise NotAMemoError(f"{path}: no econ stamp in the Notes sheet; expected an econ workbook")
    if not tomls:
        raise NotAMemoError(
            f"{path}: the Notes sheet holds no scenario_toml; the workbook was written by an econ "
            "that did not embed its scenarios, or without them: it cannot be recomputed"
        )
    _check_stamp_forms(path, prov, hashes)
    if str(prov["econ_version"]) != __version__:
        out.append(f"econ_version: made by econ {prov['econ_version']}, this is econ {__version__}")
    for name, version in sorted(catalog_versions().items()):
        report.checked += 1
        stamped = str(prov.get(f"catalog {name}", ""))
        if stamped != version:
            out.append(f"catalogs.{name}: stamped {stamped or 'none'}, now {version}")
    scenarios = []
    for name, text in tomls.items():
        shown = clipped(name)  # (a name edited in the sheet may be any length)
        try:
            scenario = loads(text, file=f"{path} (scenario {shown})")
            refuse_files(scenario_to_dict(scenario), str(path))
        except ScenarioError as exc:
            raise InputError(
                f"{path}: the embedded scenario {shown} no longer validates with econ "
                f"{__version__}: {exc}"
            ) from None
        report.checked += 1
        sha = scenario_sha256(scenario)
        if sha != str(hashes.get(name, "")):
            out.append(
                f"{shown}.scenario_sha256: stamped {hashes.get(name) or 'none'}, the embedded "
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

    _compare_frame(summary, flat_summary(projection), report, summary_cell, _summary_in_cents)
    monthly = projection.monthly.reset_index()
    _compare_frame(
        sheets["Monthly"], monthly, report, _row_of("Monthly", sheets["Monthly"]), _in_cents
    )
    created = str(prov[CREATED_FIELD])
    _compare_rebuilt(
        data, sheets, hides, projection, scenarios, set(monthly.columns), created, report
    )
    return report


def _check_stamp_forms(path: Path, prov: dict, hashes: dict) -> None:
    """The stamp's texts in the forms econ writes them (econ.memo.verify.STAMP_TEXT_FORMS, as a
    memo's): NotAMemoError naming the Notes row and what was expected otherwise."""
    for key, form, expected in STAMP_TEXT_FORMS:
        if key == "scenario_sha256":
            values = [
                (f"scenario_sha256 of {clipped(name)}", text) for name, text in hashes.items()
            ]
        else:
            values = [(key, prov.get(key, ""))]
        for where, value in values:
            if not (isinstance(value, str) and form.fullmatch(value)):
                shown = shortened(value) if value != "" else "missing"
                raise NotAMemoError(
                    f"{path}: the Notes sheet's {where} is {shown}; expected {expected}"
                )


REBUILT_SHEETS = (
    "Monthly",
    "Annual",
    "Depreciation",
    "Debt",
    "Debt schedule",
    "Tranches",
    "Tranche summary",
)
"""Sheets compared, cell by cell, with the workbook econ writes again from the embedded scenarios
(Monthly: its working columns; the engine's columns are compared with the projection)."""
_ROW_KEYS = {
    "Monthly": ("scenario", "month", "month"),
    "Depreciation": ("scenario", "month", "month"),
    "Debt": ("scenario", "month", "month"),
    "Annual": ("scenario", "tax_year", "tax year"),
    "Debt schedule": ("Scenario", "Asset year", "asset year"),
    "Tranches": ("Scenario", "Month", "month"),
    "Tranche summary": ("Scenario", "", ""),
}
"""Per sheet: the columns naming a row's scenario and period, and the period's name (a tranche
sheet's row names its tranche too)."""


_KEYED_SHEETS = ("Monthly", "Annual", "Depreciation", "Debt")
"""Sheets whose headers are keys (`revenue_usd`); the others' are labels with units."""


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
        if "Tranche" in frame.columns and k < len(frame):
            parts.append(f", tranche {frame['Tranche'].iloc[k]}")
        if (
            period in frame.columns
            and k < len(frame)
            and _number(frame[period].iloc[k]) is not None
        ):
            parts.append(f", {word} {int(_number(frame[period].iloc[k]))}")
        return f"{sheet}.{column}{''.join(parts)} (sheet row {k + 2})"

    return where


def _compare_rebuilt(
    data: bytes,
    sheets,
    hides,
    projection,
    scenarios,
    engine_columns: set,
    created: str,
    report: Report,
) -> None:
    """The workbook (`data`, read as `sheets`; `hides`: what its parts hide) against the one
    econ writes again from the embedded scenarios, stamped `created`: the sheets in order, every
    header row, every cell of REBUILT_SHEETS (the cached results of its formulas and its values),
    the text of TEXT_SHEETS (`_compare_text`), every cell's formula, number format and type, the
    conditional formats and the rows and columns hidden (`_compare_cells`)."""
    from econ.workbook import written_workbook

    book, rebuilt_data = written_workbook(projection, scenarios, created=created)
    rebuilt = read_sheets(rebuilt_data)
    out = report.differences
    report.checked += 1
    if list(sheets) != list(rebuilt):
        out.append(
            f"sheets: shown {', '.join(map(repr, sheets))}; econ writes "
            f"{', '.join(map(repr, rebuilt))}"
        )
    for name, expected in rebuilt.items():
        if name not in sheets:
            out.append(f"{name}: no such sheet; its figures cannot be checked")
            continue
        shown = sheets[name]
        _compare_header(name, shown, expected, report)
        if name in REBUILT_SHEETS:
            skip = engine_columns - {"scenario", "month"} if name == "Monthly" else set()
            columns = [c for c in expected.columns if c in shown.columns and c not in skip]
            money = _in_cents if name in _KEYED_SHEETS else _labelled_in_cents
            _compare_frame(
                shown[columns], expected[columns], report, _row_of(name, expected), money
            )
        if name in TEXT_SHEETS:
            _compare_text(name, shown, expected, report)
    rows = {}  # Assumptions' rows pair by input path (`_row_pairs`), the others' by position
    if "Assumptions" in sheets and "Assumptions" in rebuilt:
        pairs, _ = _row_pairs("Assumptions", sheets["Assumptions"], rebuilt["Assumptions"])
        rows["Assumptions"] = {1: 1} | {i + 2: e + 2 for i, e in pairs}
    _compare_cells(data, book, rows, hides, report)


TEXT_SHEETS = ("Summary", "Charts", "Assumptions", "Notes")
"""Sheets whose text cells are compared one by one with the workbook econ writes again: the
labels, units and keys a figure is read by, the sources and notes beside it."""
_STAMPED_ITEMS = ("econ_version", "econ_code", "scenario_sha256")
"""Notes items whose text is compared with this econ's stamp (above), not with the rebuilt
workbook's (with `catalog ...`); econ_code with neither: the code that wrote a workbook need not
be the code that verifies it, whose figures are what is checked."""
TEXT_DIFFERENCES_SHOWN = 20
"""Cells of one sheet whose text differs listed one by one; the rest are counted."""
_UNSOURCED = {"default", "no source"}
"""Provenance flags of an input without a source (econ.workbook.provenance_flag), told apart by
whether the scenario file gave it: the embedded scenario gives every field, so either passes."""


def _compare_header(name: str, shown: pd.DataFrame, expected: pd.DataFrame, report) -> None:
    """Row 1 of a sheet, cell by cell: the headers a column's figures are read by."""
    report.checked += 1
    a, b = [str(c) for c in shown.columns], [str(c) for c in expected.columns]
    for j in range(max(len(a), len(b))):
        got, want = (a[j] if j < len(a) else ""), (b[j] if j < len(b) else "")
        blank = lambda t: t == "" or t.startswith("Unnamed: ")  # noqa: E731 - pandas' blank
        if got != want and not (blank(got) and blank(want)):
            report.differences.append(
                f"{name}!{_column_letter(j + 1)}1: shown {shortened(got)}, econ writes "
                f"{shortened(want)}"
            )


def _is_blank(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _compare_text(name: str, shown: pd.DataFrame, expected: pd.DataFrame, report) -> None:
    """The text cells of a sheet against the rebuilt workbook's, row by row (`_row_pairs`): a
    cell that holds text there must hold the same text here, and a cell blank there no text
    here. Figures are compared elsewhere (the Summary's by key, the inputs by path), except
    Assumptions' derived figures and constants, compared here as figures. The stamp's own rows
    of Notes are compared with this econ's stamp instead."""
    out = report.differences
    report.checked += 1
    pairs, unpaired = _row_pairs(name, shown, expected)
    out.extend(unpaired)
    columns = [str(c) for c in expected.columns]
    # each row taken once, as an array (a Series a cell took 40% of an 8-scenario verify)
    shown_rows, expected_rows = shown.to_numpy(dtype=object), expected.to_numpy(dtype=object)
    listed = 0
    for i, e in pairs:
        row = expected_rows[e]
        key = str(row[0])
        for j in range(min(shown.shape[1], expected.shape[1])):
            got, want = shown_rows[i, j], row[j]
            if not _text_compared(name, columns[j], key, row, want, got):
                continue
            figure = name == "Assumptions" and not isinstance(want, str)
            if figure:  # a derived figure or constant: within the tolerance, by its own size
                same = _same_cell(got, want, _number(want), abs(_number(want) or 0.0), False)
            elif columns[j].startswith("provenance") and {got, want} <= _UNSOURCED:
                same = True
            else:
                same = _same_text(got, want)
            report.checked += 1
            if same:
                continue
            listed += 1
            if listed <= TEXT_DIFFERENCES_SHOWN:
                out.append(
                    f"{name}!{_column_letter(j + 1)}{i + 2}: shown {_shown_text(got)}, econ "
                    f"writes {_shown_text(want)}"
                )
    if listed > TEXT_DIFFERENCES_SHOWN:
        out.append(f"{name}: {listed - TEXT_DIFFERENCES_SHOWN} more cells differ")


def _row_pairs(name: str, shown: pd.DataFrame, expected: pd.DataFrame):
    """(shown row, rebuilt row) pairs, and the differences of rows without a pair. Assumptions'
    rows pair by their input path (column A; the order of a vintage's fields may differ after
    its TOML is read back), each other sheet's by position."""
    if name != "Assumptions":
        unpaired = []
        if len(shown) != len(expected):
            unpaired.append(
                f"{name}: {len(shown)} rows below the header, econ writes {len(expected)}"
            )
        return [(i, i) for i in range(min(len(shown), len(expected)))], unpaired

    def keyed(frame: pd.DataFrame) -> dict[tuple[str, int], int]:
        seen: dict[str, int] = {}
        out = {}
        for i, key in enumerate(frame.iloc[:, 0].tolist()):
            text = "" if _is_blank(key) else str(key)
            seen[text] = seen.get(text, 0) + 1
            out[(text, seen[text])] = i
        return out

    a, b = keyed(shown), keyed(expected)
    unpaired = [
        f"{name}!A{i + 2}: shown {_shown_text(key)}, a row econ does not write"
        for (key, _), i in a.items()
        if (key, _) not in b
    ] + [
        f"{name}: no row {_shown_text(key)}, which econ writes" for key, _ in b if (key, _) not in a
    ]
    return [(i, b[k]) for k, i in a.items() if k in b], unpaired[:TEXT_DIFFERENCES_SHOWN]


def _text_compared(sheet: str, column: str, key: str, row, want, got) -> bool:
    """Whether `_compare_text` compares this cell (`row`: the rebuilt sheet's row, an array;
    `key`: its first cell)."""
    if sheet == "Notes" and column == "text":
        item = str(row[2])
        return item not in _STAMPED_ITEMS and not item.startswith("catalog ")
    values = column.lower().startswith("value")
    if sheet == "Summary" and values and str(row[-1]) in ("scenario", "warnings"):
        return False  # (compared with the projection, by key)
    if sheet == "Assumptions" and values:  # inputs: compared with the scenario, by path
        return key.startswith(("calc.", "const."))
    return isinstance(want, str) or (_is_blank(want) and isinstance(got, str))


def _same_text(got, want) -> bool:
    if _is_blank(got) or _is_blank(want):
        return _is_blank(got) and _is_blank(want)
    return str(got) == str(want)


def _shown_text(value) -> str:
    if _is_blank(value):
        return "nothing"
    return shortened(_plain(value) if not isinstance(value, str) else value)


CELL_DIFFERENCES_SHOWN = TEXT_DIFFERENCES_SHOWN
"""Cells of one sheet whose formula, number format or type differs listed one by one; the rest
are counted (a number format changed in the styles part changes thousands of cells)."""
_KINDS = {
    "n": "a number",
    "s": "text",
    "f": "a formula",
    "b": "TRUE or FALSE",
    "e": "an error value",
    None: "nothing",
}
"""A cell's type (openpyxl's data_type) in words."""
_BOOLEANS = {True: "TRUE", False: "FALSE", "=TRUE()": "TRUE", "=FALSE()": "FALSE"}
"""A logical cell as its value (econ writes one) or as the formula LibreOffice saves it as."""


def _cell_form(cell) -> tuple[str | None, str | None, str] | None:
    """(type, formula, number format) of a cell, None for a blank one: a logical cell's
    "formula" is TRUE or FALSE, written as a value or as the formula =TRUE() (LibreOffice); a
    date is a number (openpyxl reads a number as a date by its format, compared on its own)."""
    value = cell.value
    if value is None or value == "":
        return None
    kind = "n" if cell.data_type == "d" else cell.data_type
    formula = None
    if kind == "f":
        # an array formula is openpyxl's ArrayFormula: its text in braces, as Excel shows it
        formula = f"{{{value.text}}}" if hasattr(value, "text") else str(value)
        if formula.upper() in _BOOLEANS:
            kind, formula = "b", _BOOLEANS[formula.upper()]
    elif kind == "b":
        formula = _BOOLEANS[bool(value)]
    return kind, formula, str(cell.number_format)


def _compare_cells(
    data: bytes, book, rows: dict[str, dict[int, int]], hides: dict, report: Report
) -> None:
    """Every cell of the workbook's bytes against `book`, the workbook econ writes again (as
    openpyxl holds it): its type (a number, text, a formula, ...), its formula and its number
    format, as Excel reads them when it recalculates and shows the figures (the cached results
    are compared elsewhere; a formula edited with its result kept, or a number format showing
    other digits, is seen only here), read once with openpyxl; also the defined names the
    formulas read, the conditional formats and the rows and columns hidden (`hides`: by part,
    `_Hides`). `rows` pairs a sheet's rows with the rebuilt ones (file row -> rebuilt row) where
    they do not pair by position. What a LibreOffice round trip rewrites without changing its
    meaning agrees (`_same_formula`, `_format_key`, `_look`)."""
    from openpyxl import load_workbook

    with _openpyxl_quiet():  # (a read-only workbook parses each sheet as its cells are read)
        try:
            shown = load_workbook(io.BytesIO(data), read_only=True, data_only=False)
        except Exception:  # (read already as values: not expected)
            report.differences.append(f"{DAMAGED}: its formulas cannot be read")
            return
        try:
            report.checked += 4
            _compare_names(shown, book, rows, report)
            _compare_sheet_states(shown, book, report)
            _compare_precision(shown, book, report)
            by_title = _hides_by_title(data, hides)
            for ws in book.worksheets:
                if ws.title in by_title:
                    report.checked += 2
                    _compare_conditional_formats(ws, by_title[ws.title], shown, report)
                    _compare_hidden(ws, by_title[ws.title], report)
            for ws in book.worksheets:
                if ws.title in shown.sheetnames:
                    report.checked += 1
                    _compare_sheet_cells(shown[ws.title], ws, rows.get(ws.title), report)
        finally:
            shown.close()


SHEET_STATES = {
    "visible": "visible",
    "hidden": "hidden (Unhide shows it again)",
    "veryHidden": "very hidden (not even listed by Unhide: only a macro or an XML edit shows it)",
}
"""A sheet's state (ECMA-376 Part 1, 18.18.68 ST_SheetState) in words."""


def _compare_sheet_states(shown, book, report: Report) -> None:
    """Each sheet's state against the one econ writes (visible): a sheet hidden after the
    export keeps its figures out of sight while the workbook still reads them."""
    for ws in book.worksheets:
        if ws.title not in shown.sheetnames:
            continue  # (listed with the sheets)
        got, want = str(shown[ws.title].sheet_state), str(ws.sheet_state)
        if got != want:
            report.differences.append(
                f"{ws.title}: the sheet is {SHEET_STATES.get(got, shortened(got))}; econ writes "
                f"it {SHEET_STATES.get(want, want)}"
            )


def _full_precision(workbook) -> bool:
    """Whether a workbook calculates in full precision (calcPr fullPrecision absent or true,
    ECMA-376 Part 1, 18.2.2), as econ writes it and LibreOffice saves it."""
    return workbook.calculation.fullPrecision is not False


def _compare_precision(shown, book, report: Report) -> None:
    """The workbook's calculation precision against econ's (full): with "precision as
    displayed" (fullPrecision="0"), Excel and LibreOffice round each figure to the digits its
    format shows as they recalculate on opening, so every formula downstream shows other figures
    than the cached results compared elsewhere."""
    if not _full_precision(shown) and _full_precision(book):
        report.differences.append(
            "calculation: the workbook calculates with the precision as displayed (calcPr "
            'fullPrecision="0"), which rounds each figure to the digits its format shows as '
            "Excel recalculates on opening; econ writes full precision"
        )


def _compare_sheet_cells(shown, ws, rows: dict[int, int] | None, report: Report) -> None:
    """One sheet's cells (`_compare_cells`), `rows` pairing its rows (None: by position)."""
    # the cells the workbook holds (openpyxl's own store: iter_rows would add a blank cell at
    # every coordinate of the rectangle the sheet spans)
    expected = {key: form for key, cell in ws._cells.items() if (form := _cell_form(cell))}
    listed = 0

    def differ(row: int, column: int, text: str) -> None:
        nonlocal listed
        listed += 1
        if listed <= CELL_DIFFERENCES_SHOWN:
            report.differences.append(f"{ws.title}!{_column_letter(column)}{row}: {text}")

    # every cell the sheet's XML holds: its <dimension> is a hint a reader trusts, so a cell
    # written outside the rectangle it declares would not be read (nor seen here) without this
    shown.reset_dimensions()
    for cells in shown.iter_rows():
        for cell in cells:
            got = _cell_form(cell)
            if got is None:
                continue
            row = cell.row if rows is None else rows.get(cell.row)
            if row is None:  # a row econ does not write (listed by _compare_text)
                continue
            want = expected.pop((row, cell.column), None)
            if got != want:
                text = _cell_difference(got, want)
                if text:
                    differ(cell.row, cell.column, text)
    paired = None if rows is None else set(rows.values())
    for (row, column), want in expected.items():
        if paired is None or row in paired:
            differ(row, column, _cell_difference(None, want))
    if listed > CELL_DIFFERENCES_SHOWN:
        report.differences.append(
            f"{ws.title}: {listed - CELL_DIFFERENCES_SHOWN:,} more cells differ in formula, "
            "number format or type"
        )


def _cell_difference(got, want) -> str | None:
    """How a cell's (type, formula, number format) differs from the one econ writes, None when
    the two mean the same."""
    if got is None or want is None or got[0] != want[0]:
        kinds = [_KINDS.get(form[0] if form else None, "a value") for form in (got, want)]
        return f"shown {kinds[0]}, econ writes {kinds[1]}"
    if got[1] != want[1] and not _same_formula(got[1], want[1]):
        shown, written = _differing(got[1], want[1])
        return f"formula shown {shortened(shown)}, econ writes {shortened(written)}"
    if got[2] != want[2] and _format_key(got[2]) != _format_key(want[2]):
        return f"number format shown {shortened(got[2])}, econ writes {shortened(want[2])}"
    return None


_CELL_TARGET = re.compile(r"(?P<sheet>\w+)!(?P<column>\$?[A-Z]{1,3}\$?)(?P<row>\d+)")
"""A defined name's cell (`Assumptions!$D$12`)."""


def _compare_names(shown, book, rows: dict[str, dict[int, int]], report: Report) -> None:
    """The defined names the formulas read (an input's cell, by its path), the workbook's and
    each sheet's: a name pointed at another cell changes what a formula computes. A cell of a
    sheet whose rows pair otherwise than by position (`rows`) is compared at its paired row."""

    def names(workbook) -> dict[str, str]:
        out = {name: str(item.attr_text) for name, item in workbook.defined_names.items()}
        for ws in workbook.worksheets:
            out |= {
                f"{ws.title}!{name}": str(item.attr_text) for name, item in ws.defined_names.items()
            }
        return out

    def paired(target: str) -> str:
        match = _CELL_TARGET.fullmatch(target)
        if match is None or match["sheet"] not in rows:
            return target
        row = rows[match["sheet"]].get(int(match["row"]))
        return f"{match['sheet']}!{match['column']}{row}" if row else target

    got, want = names(shown), names(book)
    listed = [
        f"the name {clipped(name)}: shown {shortened(got.get(name, 'nothing'))}, econ writes "
        f"{shortened(want.get(name, 'nothing'))}"
        for name in sorted(got.keys() | want.keys())
        if got.get(name) != want.get(name)
        and (name not in got or paired(got[name]) != want.get(name))
    ]
    report.differences.extend(listed[:CELL_DIFFERENCES_SHOWN])
    if len(listed) > CELL_DIFFERENCES_SHOWN:
        report.differences.append(
            f"defined names: {len(listed) - CELL_DIFFERENCES_SHOWN:,} more differ"
        )


def _hides_by_title(data: bytes, hides: dict) -> dict:
    """`_Hides` by sheet title (econ.workbook.sheet_parts), {} for a package that names its
    sheets otherwise than econ writes them (its sheets are listed as differing already)."""
    from econ.workbook import sheet_parts

    try:
        parts = sheet_parts(zipfile.ZipFile(io.BytesIO(data)))
    except Exception:  # (a workbook part or relationship econ does not write)
        return {}
    return {title: hides[part] for title, part in parts.items() if part in hides}


def _colour(color) -> str:
    """A colour as a message names it: RRGGBB (the alpha Excel ignores dropped: openpyxl writes
    00, LibreOffice FF), or a theme's or palette's number."""
    if color is None:
        return "none"
    if color.type == "theme":
        return f"theme colour {color.theme}" + (f" (tint {color.tint:g})" if color.tint else "")
    if color.type == "indexed":
        return f"palette colour {color.indexed}"
    return str(color.rgb)[-6:].upper()


_FONT_LOOKS = (
    ("b", "bold"),
    ("i", "italic"),
    ("strike", "struck through"),
    ("u", "underlined"),
    ("sz", "font size"),
    ("vertAlign", "font position"),
    ("outline", "outlined"),
    ("shadow", "shadowed"),
    ("condense", "condensed"),
    ("extend", "extended"),
    ("name", "font"),
)
"""A differential style's font attributes (ECMA-376 Part 1, 18.8.22) and their names."""


def _look(style) -> tuple[tuple[str, object], ...]:
    """What a conditional format's style (a differential style, openpyxl's DifferentialStyle)
    shows a cell as, in (what, how) pairs, the same however a program writes it: a number
    format by `_format_key`, a colour without its alpha, a solid fill's colour as foreground
    (econ, by openpyxl) or background (LibreOffice, as Excel reads a differential fill), an
    attribute off or absent alike."""
    if style is None:
        return ()
    out: list[tuple[str, object]] = []
    if style.numFmt is not None:
        out.append(("number format", _format_key(style.numFmt.formatCode)))
    font = style.font
    if font is not None:
        if font.color is not None:
            out.append(("font colour", _colour(font.color)))
        out.extend(
            (label, str(getattr(font, name)))
            for name, label in _FONT_LOOKS
            if getattr(font, name, None) not in (None, False)
        )
    fill = style.fill
    if fill is not None:
        kind = getattr(fill, "patternType", None) or "solid"
        colours = [_colour(c) for c in (getattr(fill, "fgColor", None), fill.bgColor) if c]
        given = [c for c in colours if c != "000000"] or colours[:1]
        out.append(("fill", f"{kind} {' on '.join(given)}" if kind != "solid" else given[0]))
    border = style.border
    if border is not None:
        sides = [
            f"{name} {side.style}"
            for name in ("left", "right", "top", "bottom", "diagonal")
            if (side := getattr(border, name, None)) is not None and side.style
        ]
        if sides:
            out.append(("border", ", ".join(sides)))
    return tuple(out)


def _look_text(look) -> str:
    if not look:
        return "no other style"
    parts = []
    for what, how in look:
        if what == "number format":  # (as it shows: its text and codes, unquoted)
            how = "".join(token for _, token in how)
        parts.append(f"{what} {clipped(how)}" if how != "True" else what)
    return ", ".join(parts)


def _cells(sqref) -> str:
    """A conditional format's range as written (`C70:C73 E2:E9`), without $ and in order."""
    return " ".join(sorted(str(part).replace("$", "").upper() for part in str(sqref).split()))


_KINDS_WITHOUT_STYLE = ("colorScale", "dataBar", "iconSet")
"""Rules that draw without a differential style (ECMA-376 Part 1, 18.18.12 ST_CfType)."""
_OWN_STYLE = (("a style of its own", "True"),)
"""The look of a rule whose style is not one of the styles part's (an Excel 2010 extension's
rule holds its own, which openpyxl does not read): it differs from econ's."""


def _compare_conditional_formats(ws, hides: _Hides, shown, report: Report) -> None:
    """The sheet's conditional formats (range, rule, formula and what its style shows: `_look`)
    against those econ writes on it (`ws`, the rebuilt sheet): each rule shows the cells
    otherwise where it holds, whatever their own style, so one econ does not write (a white font
    over the figures, another number format) is listed by its range, and one econ writes that
    is missing too. econ's one flags a failed check red (econ.workbook._write_checks)."""
    written = [
        (_cells(cf.sqref), rule.type, list(rule.formula or []), _look(rule.dxf))
        for cf in ws.conditional_formatting
        for rule in cf.rules
    ]
    styles = shown._differential_styles.dxf
    listed = []
    for sqref, kind, dxf, formulas in hides.rules:
        try:
            style = styles[int(dxf)] if dxf is not None else None
        except (ValueError, IndexError):
            style = None
        look = _look(style) if dxf is not None or kind in _KINDS_WITHOUT_STYLE else _OWN_STYLE
        rule = (_cells(sqref), kind, formulas, look)
        match = next((w for w in written if _same_rule(rule, w)), None)
        if match is not None:
            written.remove(match)
            continue
        where = f"{ws.title}!{clipped(rule[0]) if rule[0] else '(no range)'}"  # (the file's)
        condition = f"{clipped(kind)}{': ' + shortened(' ; '.join(formulas)) if formulas else ''}"
        there = [w for w in written if w[0] == rule[0]]
        econ = (
            f"econ writes one showing them {_look_text(there[0][3])} there"
            if there
            else "econ writes none there"
        )
        listed.append(
            f"{where}: a conditional format ({condition}) shows the cells with "
            f"{_look_text(rule[3])} where it holds; {econ}"
        )
    for sqref, kind, formulas, look in written:  # (econ's, not in the file)
        listed.append(
            f"{ws.title}!{sqref}: no conditional format; econ writes one ({kind}: "
            f"{shortened(' ; '.join(formulas))}) showing the cells with {_look_text(look)}"
        )
    if hides.more:
        listed.append(f"{ws.title}: {hides.more:,} more hidden ranges or conditional formats")
    report.differences.extend(listed[:CELL_DIFFERENCES_SHOWN])
    if len(listed) > CELL_DIFFERENCES_SHOWN:
        report.differences.append(
            f"{ws.title}: {len(listed) - CELL_DIFFERENCES_SHOWN:,} more conditional formats differ"
        )


def _same_rule(got, want) -> bool:
    """Two conditional formats alike: range, type, look, and formulas by `_same_formula`."""
    if got[0] != want[0] or got[1] != want[1] or got[3] != want[3] or len(got[2]) != len(want[2]):
        return False
    return all(_same_formula(f"={a}", f"={b}") for a, b in zip(got[2], want[2], strict=True))


def _ranges(numbers: list[int]) -> list[list[int]]:
    """Sorted numbers as [first, last] runs."""
    out: list[list[int]] = []
    for n in sorted(numbers):
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def _compare_hidden(ws, hides: _Hides, report: Report) -> None:
    """Rows and columns the sheet hides (hidden, or too low or narrow to read: `_Hides`) that
    econ does not hide on it (`ws`, the rebuilt sheet), by range (`Summary!12:12`): a figure
    out of sight, which the formulas still read and verify still compares."""
    low = lambda d, size, limit: d.hidden or (size is not None and size < limit)  # noqa: E731
    rows = {
        n
        for n, d in ws.row_dimensions.items()
        if low(d, d.ht if d.customHeight else None, ROW_HEIGHT_MIN_PT)
    }
    columns = set()
    for d in ws.column_dimensions.values():
        if low(d, d.width if d.customWidth else None, COLUMN_WIDTH_MIN):
            columns.update(range(d.min or 1, (d.max or d.min or 1) + 1))
    listed = []
    if hides.rows_by_default and not ws.sheet_format.zeroHeight:
        listed.append(
            f"{ws.title}: every row without a height of its own is hidden (zeroHeight, or a "
            "default row height too low to read); econ writes the rows visible"
        )
    for first, last in hides.rows:
        for a, b in _ranges([n for n in range(first, last + 1) if n not in rows][:MAX_ROWS]):
            what = f"row {a}" if a == b else f"rows {a} to {b}"
            listed.append(
                f"{ws.title}!{a}:{b}: {what} hidden (or lower than {ROW_HEIGHT_MIN_PT:g} pt); "
                "econ writes it visible: its figures are out of sight, and still compared"
            )
    for first, last in hides.columns:
        for a, b in _ranges(
            [n for n in range(first, min(last, MAX_COLUMNS) + 1) if n not in columns]
        ):
            x, y = _column_letter(a), _column_letter(b)
            what = f"column {x}" if a == b else f"columns {x} to {y}"
            listed.append(
                f"{ws.title}!{x}:{y}: {what} hidden (or narrower than {COLUMN_WIDTH_MIN:g} "
                "character); econ writes it visible: its figures are out of sight, and still "
                "compared"
            )
    report.differences.extend(listed[:CELL_DIFFERENCES_SHOWN])
    if len(listed) > CELL_DIFFERENCES_SHOWN:
        report.differences.append(
            f"{ws.title}: {len(listed) - CELL_DIFFERENCES_SHOWN:,} more ranges of rows or "
            "columns hidden"
        )


def _differing(got: str, want: str, context: int = 12) -> tuple[str, str]:
    """The part of two texts that differs, with `context` characters either side ("..." where
    they are cut): a formula of 5,000 characters is not a message."""
    start, n = 0, min(len(got), len(want))
    while start < n and got[start] == want[start]:
        start += 1
    end = 0
    while end < n - start and got[-1 - end] == want[-1 - end]:
        end += 1

    def cut(text: str) -> str:
        a, b = max(0, start - context), min(len(text), len(text) - end + context)
        return ("..." if a else "") + text[a:b] + ("..." if b < len(text) else "")

    return cut(got), cut(want)


FORMULA_NUMBER_TOLERANCE = 1e-14
"""Difference, relative to the larger, under which two numbers written in formulas agree:
LibreOffice saves a number of a formula to 15 significant digits (0.006857085091169113 as
0.00685708509116911, 0.01645036951711565 as 0.0164503695171157: at most 5e-15 of it)."""


def _same_formula(got: str, want: str) -> bool:
    """Two formulas alike token by token, numbers within FORMULA_NUMBER_TOLERANCE however written
    (LibreOffice saves 1E-06 as 0.000001)."""
    a, b = _formula_tokens(got), _formula_tokens(want)
    if a is None or b is None or len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, float) and isinstance(y, float):
            if abs(x - y) > FORMULA_NUMBER_TOLERANCE * max(abs(x), abs(y)):
                return False
        elif x != y:
            return False
    return True


def _formula_tokens(text: str) -> list | None:
    """A formula's tokens (openpyxl's tokenizer), a number as a float; None if it is not one."""
    from openpyxl.formula.tokenizer import Token, Tokenizer, TokenizerError

    try:
        items = Tokenizer(text).items
    except TokenizerError:
        return None
    return [
        float(t.value)
        if t.type == Token.OPERAND and t.subtype == Token.NUMBER
        else (t.type, t.subtype, t.value)
        for t in items
    ]


_FORMAT_TOKEN = re.compile(
    r'(?P<quoted>"[^"]*")|(?P<escaped>\\.)|(?P<bracket>\[[^\]]*\])|(?P<paired>[_*].|[Ee][+-])'
    r"|(?P<char>.)",
    re.S,
)
"""A number format's tokens: a quoted text, an escaped character, a [bracket] (a colour, a
condition, a locale), a code taking the next character (_x, *x, E+), any other character."""
_FORMAT_LITERALS = frozenset("$-+/():!^&'~{}<>= ")
"""Characters a number format shows as themselves without quotes or a backslash."""


@functools.lru_cache(maxsize=256)
def _format_key(code: str) -> tuple[tuple[str, str], ...]:
    """A number format as what it shows: its literal text however written ("$", \\$ or $;
    "-$" or -"$"), brackets in capitals ([Red] or [RED]): LibreOffice rewrites econ's
    '"$"#,##0.00;[Red]-"$"#,##0.00' as '\\$#,##0.00;[RED]"-$"#,##0.00' and yyyy-mm-dd as
    yyyy\\-mm\\-dd."""
    out: list[tuple[str, str]] = []
    for match in _FORMAT_TOKEN.finditer(code):
        kind, token = match.lastgroup, match.group()
        if kind == "quoted":
            literal = token[1:-1]
        elif kind == "escaped":
            literal = token[1:]
        elif kind == "char" and token in _FORMAT_LITERALS:
            literal = token
        else:
            out.append(("code", token.upper() if kind == "bracket" else token))
            continue
        if out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + literal)
        elif literal:
            out.append(("text", literal))
    return tuple(out)


def _in_cents(column) -> bool:
    """A column the sheet shows in cents (econ.workbook.number_format), by its name."""
    from econ.workbook import CURRENCY, number_format

    return number_format(str(column)) == CURRENCY


def _labelled_in_cents(column) -> bool:
    """A Debt schedule column (labelled with its unit) in cents."""
    return str(column).endswith("[USD]")


def _summary_in_cents(key) -> bool:
    """A Summary row shown in cents (econ.workbook.summary_format), by its key."""
    from econ.workbook import CURRENCY, summary_format

    return summary_format(str(key)) == CURRENCY


def _compare_frame(
    shown: pd.DataFrame, expected: pd.DataFrame, report: Report, where, money=lambda c: False
) -> None:
    """Each column of `shown` that `expected` has, cell by cell: numbers within
    WORKBOOK_TOLERANCE of the column's largest magnitude (at least 1), those of a column
    `money(column)` says is shown in cents also within MONEY_TOLERANCE_USD; text as written; one
    line per column (the first cell that differs), placed by `where(row, column)`."""
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
                shown_text, value = str(cell if isinstance(cell, str) else ""), str(value or "")
                # one a line (WARNING_SEPARATOR); a workbook written before joined them by "; "
                if shown_text not in (value, "; ".join(value.split(WARNING_SEPARATOR))):
                    report.differences.append(f"{where(k, column)}: warnings differ")
            continue
        numbers = [_number(v) for v in values]
        finite = [abs(v) for v in numbers if v is not None]
        scale = max(finite, default=0.0)
        cents = money(column)
        for k, (cell, value) in enumerate(zip(cells, values, strict=True)):
            report.checked += 1
            if not _same_cell(cell, value, numbers[k], scale, cents):
                shown_value = _number(cell) if _number(cell) is not None else cell
                report.differences.append(
                    f"{where(k, column)}: shown {_plain(shown_value)}, recomputed "
                    f"{_plain(numbers[k] if numbers[k] is not None else value)}"
                )
                break  # one line per column: the first cell that differs


def _same_cell(cell, value, number, scale: float, cents: bool) -> bool:
    """A cell as shown against the recomputed value: a figure within the tolerance (WORKBOOK_
    TOLERANCE of `scale`, at least 1; a figure in cents also within MONEY_TOLERANCE_USD, any
    other within FIGURE_TOLERANCE of its own magnitude, at least 1), a blank or text as
    written."""
    got = _number(cell)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return got is None  # a null metric or a blank: its reason as text, or nothing
    if number is not None or got is not None:
        if got is None or number is None:
            return False
        tolerance = WORKBOOK_TOLERANCE * max(scale, 1.0)
        if cents:
            tolerance = max(tolerance, MONEY_TOLERANCE_USD)
        else:
            tolerance = max(tolerance, FIGURE_TOLERANCE * max(abs(number), 1.0))
        return abs(got - number) <= tolerance
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
