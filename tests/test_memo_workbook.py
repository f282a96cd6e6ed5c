"""`econ verify` of an exported workbook: it recomputes the scenarios the Notes sheet embeds and
checks the Summary and Monthly sheets; an edited figure or scenario fails (exit 1, named)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

from econ.cli import main
from tests.workbook_helpers import summary_cell

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [
    ROOT / "models" / "scenarios" / f"{name}.toml"
    for name in ("deepseek-r1-gb200-nvl72", "llama2-70b-h200")
]


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("book") / "projection.xlsx"
    assert main(["project", *map(str, SEEDS), "--out", str(path)]) == 0
    return path


def _verify(capsys, path: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _rewrite(source: Path, target: Path, edit) -> None:
    """Copy a workbook, passing each member's bytes through edit(name, data)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            new.writestr(item, edit(item.filename, old.read(item.filename)))


def test_workbook_verifies(book, capsys):
    code, out = _verify(capsys, book)
    assert code == 0, out
    assert "workbook" in out


def test_warnings_joined_as_before_verify_and_edited_ones_fail(book, tmp_path, capsys):
    """The Summary's warnings are one a line (econ.text.WARNING_SEPARATOR); a workbook written
    before joined them by "; ", and verifies as it did: only an edited warning differs."""
    from xml.sax.saxutils import escape

    import econ

    warnings = econ.project(econ.load_scenario(SEEDS[0])).warnings[0]
    written = escape("\n".join(warnings)).encode()
    for joined, expected in (("; ".join(warnings), 0), ("\n".join(warnings[1:]), 1)):
        edited, hits = tmp_path / "warnings.xlsx", []

        def edit(name, data, joined=joined, hits=hits):
            hits.extend([name] * data.count(written))
            return data.replace(written, escape(joined).encode())

        _rewrite(book, edited, edit)
        assert hits == ["xl/worksheets/sheet1.xml"]  # the Summary's cell alone
        code, out = _verify(capsys, edited)
        assert code == expected, out
    assert "warnings differ" in out


def test_a_workbook_written_by_other_code_verifies_on_its_figures(book, tmp_path, capsys):
    """Notes names the code that wrote the workbook (econ_code); another commit's workbook whose
    figures reproduce verifies: the row is not compared with the code that checks it."""
    from econ.sources import code_fingerprint

    code = code_fingerprint().encode()
    other = code.split(b"+")[0] + b"+" + b"0" * (len(code) - len(code.split(b"+")[0]) - 1)
    edited, hits = tmp_path / "other-code.xlsx", []

    def edit(name, data):
        hits.extend([name] * data.count(b">" + code + b"<"))
        return data.replace(b">" + code + b"<", b">" + other + b"<")

    _rewrite(book, edited, edit)
    assert hits == ["docProps/custom.xml", _sheet_part(book, "Notes")]  # property and row
    verdict, out = _verify(capsys, edited)
    assert verdict == 0, out


def test_workbook_of_the_old_summary_layout_exits_3(book, tmp_path, capsys):
    # A Summary sheet without the key column (the older layout: one wide row per scenario).
    edited = tmp_path / "wide.xlsx"
    _rewrite(book, edited, lambda name, data: data.replace(b">Key<", b">Name<"))
    code, out = _verify(capsys, edited)
    assert code == 3 and "no Key column" in out and "Traceback" not in out


def test_edited_summary_figure_fails(book, tmp_path, capsys):
    cell = summary_cell(load_workbook(book)["Summary"], "npv_usd").coordinate
    pattern = re.compile(
        rb'(<c r="' + cell.encode() + rb'"[^>]*>(?:<f>[^<]*</f>)?<v>)([^<]*)(</v>)'
    )
    edited = tmp_path / "edited.xlsx"
    hits = []

    def edit(name, data):
        if name.startswith("xl/worksheets/") and pattern.search(data) and not hits:
            hits.append(name)
            return pattern.sub(rb"\g<1>123\g<3>", data, count=1)
        return data

    _rewrite(book, edited, edit)
    assert hits
    code, out = _verify(capsys, edited)
    assert code == 1
    assert f"Summary.npv_usd of deepseek-r1-gb200-nvl72 ({cell}): shown 123, recomputed" in out


def _forge(book: Path, target: Path, sheet: str, cell: str, value: bytes = b"123") -> None:
    """A copy of the workbook with the cached result (or value) of one cell replaced."""
    part = _sheet_part(book, sheet)
    pattern = re.compile(
        rb'(<c r="' + cell.encode() + rb'"[^>]*>(?:<f>[^<]*</f>)?<v>)([^<]*)(</v>)'
    )

    def edit(name, data):
        if name == part:
            assert pattern.search(data), (sheet, cell)
            return pattern.sub(rb"\g<1>" + value + rb"\g<3>", data, count=1)
        return data

    _rewrite(book, target, edit)


def _sheet_part(book: Path, sheet: str) -> str:
    from econ.workbook import sheet_parts

    with zipfile.ZipFile(book) as archive:
        return sheet_parts(archive)[sheet]


def test_a_difference_is_named_by_sheet_row_and_month(book, tmp_path, capsys):
    """Monthly's first data row is the sheet's row 2, month 0; row 3 is month 1."""
    header = [c.value for c in load_workbook(book)["Monthly"][1]]
    letter = get_column_letter(header.index("revenue_usd") + 1)
    edited = tmp_path / "monthly.xlsx"
    _forge(book, edited, "Monthly", f"{letter}3")
    code, out = _verify(capsys, edited)
    assert code == 1
    assert "Monthly.revenue_usd of deepseek-r1-gb200-nvl72, month 1 (sheet row 3): shown 123" in out


@pytest.mark.parametrize(
    ("sheet", "column", "where"),
    [
        ("Annual", "income_taxed_usd", "of deepseek-r1-gb200-nvl72, tax year 2 (sheet row 3)"),
        (
            "Debt schedule",
            "Interest [USD]",
            "of deepseek-r1-gb200-nvl72, asset year 2 (sheet row 3)",
        ),
        ("Depreciation", "book_value_usd", "of deepseek-r1-gb200-nvl72, month 1 (sheet row 3)"),
        ("Debt", "dscr", "of deepseek-r1-gb200-nvl72, month 1 (sheet row 3)"),
        ("Monthly", "discount_factor", "of deepseek-r1-gb200-nvl72, month 1 (sheet row 3)"),
    ],
)
def test_a_forged_cell_of_any_figure_sheet_fails(book, tmp_path, capsys, sheet, column, where):
    """Annual, Depreciation, Debt, Debt schedule and Monthly's working columns are compared with
    the workbook econ writes again from the embedded scenarios (a forged Annual!U3 or "Debt
    schedule"!L3 passed as "ok" before)."""
    header = [c.value for c in load_workbook(book)[sheet][1]]
    if column not in header:  # (Debt schedule's headers carry units)
        column = next(h for h in header if h.startswith(column.split(" [")[0]))
    letter = get_column_letter(header.index(column) + 1)
    edited = tmp_path / "forged.xlsx"
    _forge(book, edited, sheet, f"{letter}3")
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"{sheet}.{column} {where}: shown 123" in out, out


@pytest.mark.parametrize(
    ("state", "words"),
    [("veryHidden", "very hidden (not even listed by Unhide"), ("hidden", "hidden (Unhide")],
)
def test_a_sheet_hidden_after_the_export_fails(book, tmp_path, capsys, state, words):
    """econ writes every sheet visible: a Debt sheet set to hidden or veryHidden (its figures
    out of sight, still read by the formulas) passed as "ok" before; it is named."""
    edited = tmp_path / f"{state}.xlsx"
    hits = []

    def edit(name, data):
        if name == "xl/workbook.xml":
            pattern = rb'(<sheet name="Debt"[^>]*?state=")visible"'
            changed = re.sub(pattern, rb"\g<1>" + state.encode() + b'"', data)
            hits.append(changed != data)
            return changed
        return data

    _rewrite(book, edited, edit)
    assert hits == [True]
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"Debt: the sheet is {words}" in out and "econ writes it visible" in out


def test_edited_embedded_scenario_fails(book, tmp_path, capsys):
    edited = tmp_path / "scenario.xlsx"
    old, new = b"price_usd_per_kwh = 0.0806", b"price_usd_per_kwh = 0.0906"
    hits = []

    def edit(name, data):
        if old in data:
            hits.append(name)
        return data.replace(old, new)

    _rewrite(book, edited, edit)
    assert hits
    code, out = _verify(capsys, edited)
    assert code == 1
    assert "deepseek-r1-gb200-nvl72.scenario_sha256: stamped" in out
    assert "Summary.lcot_usd_per_mtok" in out


def test_workbook_without_embedded_scenario_exits_3(book, tmp_path, capsys):
    edited = tmp_path / "old.xlsx"
    _rewrite(book, edited, lambda name, data: data.replace(b"scenario_toml", b"scenario_txt"))
    code, out = _verify(capsys, edited)
    assert code == 3 and "holds no scenario_toml" in out
    broken = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("x", "y")
    code, out = _verify(capsys, broken)
    assert code == 3 and "a damaged workbook: the package has no part [Content_Types].xml" in out
    assert "Traceback" not in out


def test_an_input_edited_on_the_assumptions_sheet_fails(book, tmp_path, capsys):
    """The figures are the embedded scenario's: a loan rate edited in the workbook (recalculated
    or not) is an input they do not rest on."""
    edited = tmp_path / "rate.xlsx"
    sheet, ref = (
        load_workbook(book).defined_names["financing_debt_rate_annual_1"].attr_text.split("!")
    )
    _forge(book, edited, sheet, ref.replace("$", ""), b"0.09")
    code, out = _verify(capsys, edited)
    assert code == 1
    assert "Assumptions.financing.debt_rate_annual (scenario 1): shown 0.09" in out


def test_an_embedded_scenario_naming_a_file_is_refused_unopened(book, tmp_path, capsys):
    edited = tmp_path / "curve.xlsx"
    old = b"[throughput]"
    new = b'[throughput.measured]\ncurve = "/etc/passwd"\n\n[throughput]'
    hits = []

    def edit(name, data):
        if old in data:
            hits.append(name)
        return data.replace(old, new, 1)

    _rewrite(book, edited, edit)
    assert hits
    code, out = _verify(capsys, edited)
    assert code == 3 and "names a file (throughput.measured.curve)" in out, out
    assert "root:" not in out


# A workbook is held to what econ writes before openpyxl reads a cell (found by review: an Annual
# sheet of 2 million cells, 240 kB zipped, took 18 s to read and verified ok). pandas.read_excel
# fails these tests if it is reached.
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


@pytest.fixture
def unread(monkeypatch):
    import pandas as pd

    def read_excel(*args, **kwargs):
        raise AssertionError("the workbook was read cell by cell before it was refused")

    monkeypatch.setattr(pd, "read_excel", read_excel)


def _with_annual_rows(source: Path, target: Path, rows: bytes) -> None:
    """A copy of the workbook with `rows` added at the end of its Annual sheet."""
    from econ.workbook import sheet_parts

    with zipfile.ZipFile(source) as archive:
        annual = sheet_parts(archive)["Annual"]

    def edit(name, data):
        return data.replace(b"</sheetData>", rows + b"</sheetData>") if name == annual else data

    _rewrite(source, target, edit)


def test_a_workbook_whose_annual_sheet_unzips_to_millions_of_cells_exits_3(
    book, tmp_path, capsys, unread
):
    edited = tmp_path / "bomb.xlsx"
    cells = b"<c><v>1</v></c>" * 1000
    _with_annual_rows(book, edited, b"".join(b"<row>%s</row>" % cells for _ in range(200)))
    code, out = _verify(capsys, edited)
    assert code == 3, out
    assert f"{edited}: the part 'xl/worksheets/" in out and "refused as a zip bomb" in out, out
    assert "(more than 200)" in out and "Traceback" not in out


@pytest.mark.parametrize(
    "rows, message",
    [
        # one cell far out: a reader fills in the blanks of 1,000 rows by 16,384 columns
        (
            b'<row r="1000"><c r="XFD1000"><v>1</v></c></row>',
            "spans 1,000 rows by 16,384 columns, and the sheets more than",
        ),
        # the same, written with a namespace prefix (as openpyxl also reads it)
        (
            b'<x:row xmlns:x="%s" r="1000"><x:c r="XFD1000"><x:v>1</x:v></x:c></x:row>'
            % MAIN.encode(),
            "spans 1,000 rows by 16,384 columns",
        ),
        (b'<row r="900000"><c><v>1</v></c></row>', "spans 900,000 rows by"),
        (
            b'<row r="1048576"><c r="A1048576"><v>1</v></c></row>',
            "reaches row 1,048,576; a sheet econ writes holds at most 1,000,000 rows",
        ),
        (b'<row r="99"><c r="ZZZ99"><v>1</v></c></row>', "reaches column 18,278"),
        (b'<row r="1e9"><c><v>1</v></c></row>', "reaches row 1,000,000,000"),
    ],
)
def test_a_sheet_spanning_more_than_econ_writes_exits_3(
    book, tmp_path, capsys, unread, rows, message
):
    edited = tmp_path / "far.xlsx"
    _with_annual_rows(book, edited, rows)
    code, out = _verify(capsys, edited)
    assert code == 3, out
    assert f"{edited}: the part 'xl/worksheets/" in out and message in out, out
    assert "Traceback" not in out


def test_a_workbook_larger_than_econ_reads_exits_3(book, tmp_path, capsys, unread, monkeypatch):
    from econ.files import size_text
    from econ.memo import workbook_check

    limit = workbook_check.MAX_WORKBOOK_BYTES
    large = tmp_path / "large.xlsx"
    with large.open("wb") as handle:  # (a sparse file: the workbook after 64 MB of nothing)
        handle.write(b"PK\x03\x04")
        handle.seek(limit)
        handle.write(book.read_bytes())
    code, out = _verify(capsys, large)
    assert code == 3, out
    assert f"{large}: larger than {size_text(limit)}; expected a workbook written by econ" in out
    # parts declaring more than the limit unzipped (here lowered below this workbook's)
    unzipped = sum(item.file_size for item in zipfile.ZipFile(book).infolist())
    assert book.stat().st_size < unzipped // 2
    monkeypatch.setattr(workbook_check, "MAX_WORKBOOK_BYTES", unzipped // 2)
    code, out = _verify(capsys, book)
    assert code == 3, out
    assert f"{book}: its parts declare more than {size_text(unzipped // 2)} unzipped" in out, out
    assert "Traceback" not in out


# What a reader reads a figure by (its label, unit, key and the sheet's headers) is compared with
# the workbook econ writes again: found by review, a Summary whose labels 'Project IRR' and 'Equity
# IRR' were swapped, or whose NPV unit read 'thousand USD', verified "ok" (rows were keyed by the
# Key column alone).


def _replace_in_sheet(book: Path, target: Path, sheet: str, old: bytes, new: bytes) -> None:
    part = _sheet_part(book, sheet)

    def edit(name, data):
        if name == part:
            assert data.count(old) == 1, (sheet, old)
            return data.replace(old, new)
        return data

    _rewrite(book, target, edit)


def _cell_of(book: Path, sheet: str, text: str, column: int | None = None) -> str:
    """The coordinate of the cell of `sheet` holding `text` (in `column`, where given)."""
    ws = load_workbook(book)[sheet]
    for row in ws.iter_rows():
        for cell in row:
            if cell.value == text and (column is None or cell.column == column):
                return cell.coordinate
    raise AssertionError((sheet, text))


def test_swapped_summary_labels_fail(book, tmp_path, capsys):
    project, equity = (_cell_of(book, "Summary", t) for t in ("Project IRR", "Equity IRR"))
    swapped = tmp_path / "swapped.xlsx"
    part = _sheet_part(book, "Summary")

    def edit(name, data):
        if name != part:
            return data
        data = data.replace(b">Project IRR<", b">\x00<").replace(b">Equity IRR<", b">Project IRR<")
        return data.replace(b">\x00<", b">Equity IRR<")

    _rewrite(book, swapped, edit)
    code, out = _verify(capsys, swapped)
    assert code == 1, out
    assert f"Summary!{project}: shown 'Equity IRR', econ writes 'Project IRR'" in out
    assert f"Summary!{equity}: shown 'Project IRR', econ writes 'Equity IRR'" in out


@pytest.mark.parametrize(
    ("sheet", "old", "new", "message"),
    [
        # the NPV's unit (Summary column B, the row keyed npv_usd)
        ("Summary", None, b"thousand USD", "shown 'thousand USD', econ writes 'USD'"),
        # a header a column is read by position (the Debt schedule's units are in its headers)
        (
            "Debt schedule",
            b">Interest [USD]<",
            b">Interest [thousand USD]<",
            "1: shown 'Interest [thousand USD]', econ writes 'Interest [USD]'",
        ),
        # an input's unit on Assumptions
        (
            "Assumptions",
            b">USD/kWh<",
            b">USD/MWh<",
            "shown 'USD/MWh', econ writes 'USD/kWh'",
        ),
        # a legend row of the Notes sheet
        ("Notes", b">legend<", b">legend (approved)<", "shown 'legend (approved)'"),
    ],
)
def test_changed_units_headers_and_notes_fail(book, tmp_path, capsys, sheet, old, new, message):
    edited = tmp_path / "edited.xlsx"
    if old is None:  # the unit cell of the NPV row
        ws = load_workbook(book)["Summary"]
        row = summary_cell(ws, "npv_usd").row
        assert ws.cell(row=row, column=2).value == "USD"
        part = _sheet_part(book, sheet)
        cell = re.compile(rb'(<c r="B%d"[^>]*><is><t>)USD(</t>)' % row)

        def edit(name, data):
            return cell.sub(rb"\g<1>" + new + rb"\g<2>", data) if name == part else data

        _rewrite(book, edited, edit)
    else:  # (the first such text of the sheet)
        part = _sheet_part(book, sheet)
        _rewrite(
            book, edited, lambda name, data: data.replace(old, new, 1) if name == part else data
        )
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"{sheet}!" in out and message in out, out


def test_a_creation_time_not_in_econ_form_exits_3(book, tmp_path, capsys):
    """As a memo's stamp: a sentence in the creation time is refused (it verified "ok")."""
    notes = load_workbook(book)["Notes"]
    created = next(r[3].value for r in notes.iter_rows(min_row=2) if r[2].value == "created_utc")
    edited = tmp_path / "created.xlsx"
    _replace_in_sheet(book, edited, "Notes", f">{created}<".encode(), b">yesterday, trust me<")
    code, out = _verify(capsys, edited)
    assert code == 3, out
    assert "the Notes sheet's created_utc is 'yesterday, trust me'; expected a UTC time" in out


def test_a_cent_of_the_npv_changed_fails(book, tmp_path, capsys):
    """Money is compared to half a cent: the NPV shown in cents with one cent more is a
    difference (at 1e-7 relative, 20 USD of a 210 million USD NPV passed)."""
    import econ

    npv = econ.project(econ.load_scenario(SEEDS[0])).summary["npv_usd"].iloc[0]
    cell = summary_cell(load_workbook(book)["Summary"], "npv_usd").coordinate
    edited = tmp_path / "cent.xlsx"
    _forge(book, edited, "Summary", cell, repr(float(npv) + 0.01).encode())
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"Summary.npv_usd of deepseek-r1-gb200-nvl72 ({cell}): shown" in out


def test_a_workbook_libreoffice_recalculated_and_saved_verifies(book, tmp_path, capsys):
    """LibreOffice recalculates every formula on load and saves 15 significant digits: with the
    inputs unchanged, every figure agrees within the tolerances."""
    import shutil

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    from tests.test_workbook import recalculate

    out_dir = tmp_path / "lo"
    out_dir.mkdir()
    recalculate([book], out_dir)
    code, out = _verify(capsys, out_dir / book.name)
    assert code == 0, out


def test_a_libreoffice_ratio_of_small_operands_verifies(tmp_path, capsys):
    """A minimum DSCR LibreOffice recalculates as 1.29999999998834 against the engine's
    1.3000000000000003 (9e-12 relative: a ratio of small operands) failed verify at 1e-12 of the
    column; a figure not in cents agrees within 1e-9 of its own magnitude, and a cent still
    counts (test_a_cent_of_the_npv_changed_fails)."""
    import shutil

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    from tests.test_workbook import recalculate

    scenario = ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml"
    book = tmp_path / "v2.xlsx"
    sets = ["--set", "market.price_decline_annual=0.6", "--set", "utilization.share=0.3"]
    assert main(["export", str(scenario), *sets, "--xlsx", str(book)]) == 0
    out_dir = tmp_path / "lo"
    out_dir.mkdir()
    recalculate([book], out_dir)
    code, out = _verify(capsys, out_dir / book.name)
    assert code == 0, out


# What Excel shows is also each cell's formula and number format: found by security review, a
# workbook whose number formats all read "0.10", or whose LCOT formula was divided by 10 with its
# cached result kept (Excel recalculates on open), verified "ok" (only the cached values were read).


def _npv_cell(book: Path):
    return summary_cell(load_workbook(book)["Summary"], "npv_usd")


def test_a_number_format_showing_other_digits_fails(book, tmp_path, capsys):
    """Every custom number format of the styles part replaced by the text "0.10" (the review's
    workbook): each figure shows 0.10, and every value is unchanged."""
    cell = _npv_cell(book)
    edited = tmp_path / "format.xlsx"

    def edit(name, data):
        if name == "xl/styles.xml":
            return re.sub(rb'formatCode="[^"]*"', b'formatCode="&quot;0.10&quot;"', data)
        return data

    _rewrite(book, edited, edit)
    code, out = _verify(capsys, edited)
    assert code == 1, out
    written = cell.number_format
    assert (
        f"Summary!{cell.coordinate}: number format shown '\"0.10\"', econ writes {written!r}" in out
    )
    assert "more cells differ in formula, number format or type" in out


def test_a_conditional_format_showing_other_digits_fails(book, tmp_path, capsys):
    """econ's one conditional format (a check row's red flag) given the number format "0.10":
    where its rule holds, Excel shows the cell so, whatever the cell's own format."""
    edited = tmp_path / "conditional.xlsx"
    old = b"<dxf><font>"
    new = b'<dxf><numFmt numFmtId="300" formatCode="&quot;0.10&quot;" /><font>'

    def edit(name, data):
        if name == "xl/styles.xml":
            assert data.count(old) == 1
            return data.replace(old, new)
        return data

    _rewrite(book, edited, edit)
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert (
        'Summary!C72:D76: a conditional format (expression: \'AND(C72<>"",C72<>"ok")\') shows '
        "the cells with number format 0.10, font colour 9C0006, fill FFC7CE where it holds; econ "
        "writes one showing them font colour 9C0006, fill FFC7CE there"
    ) in out


# Found by an outside review: a conditional format giving the Summary's values a white font (its
# rule always true), or the NPV's row hidden, verified "ok" (only a conditional format's number
# format and a sheet's state were compared). econ writes one conditional format (a failed check
# red on pink) and hides no row or column.

WHITE_FONT = b'<dxf><font><color rgb="FFFFFFFF"/></font></dxf>'


def _white_values(name: str, data: bytes, summary: str) -> bytes:
    """A second conditional format over the Summary's values, its style a white font."""
    if name == "xl/styles.xml":
        assert data.count(b'<dxfs count="1">') == 1
        return data.replace(b'<dxfs count="1">', b'<dxfs count="2">' + WHITE_FONT)
    if name == summary:  # (the white style is now the first: econ's moves to the second)
        assert data.count(b'dxfId="0"') == 1
        rule = b'<conditionalFormatting sqref="C2:D73"><cfRule type="expression" priority="1" '
        rule += b'dxfId="0"><formula>TRUE</formula></cfRule></conditionalFormatting>'
        data = data.replace(b'dxfId="0"', b'dxfId="1"')
        return data.replace(b"<conditionalFormatting ", rule + b"<conditionalFormatting ", 1)
    return data


def _white_values_extension(name: str, data: bytes, summary: str) -> bytes:
    """The same as Excel 2010 writes it: in the sheet's extLst, the style within the rule."""
    if name != summary:
        return data
    ext = (
        b'<extLst><ext uri="{78C0D931-6437-407d-A8EE-F0AAD7539E65}" xmlns:x14="http://schemas.'
        b'microsoft.com/office/spreadsheetml/2009/9/main"><x14:conditionalFormattings>'
        b'<x14:conditionalFormatting xmlns:xm="http://schemas.microsoft.com/office/excel/2006/'
        b'main"><x14:cfRule type="expression" priority="2" id="{00000000-0000-0000-0000-00000000'
        b'0001}"><xm:f>TRUE</xm:f><x14:dxf><font><color rgb="FFFFFFFF"/></font></x14:dxf>'
        b"</x14:cfRule><xm:sqref>C2:D73</xm:sqref></x14:conditionalFormatting>"
        b"</x14:conditionalFormattings></ext></extLst></worksheet>"
    )
    assert data.endswith(b"</worksheet>")
    return data[: -len(b"</worksheet>")] + ext


def _hide_npv_row(name: str, data: bytes, summary: str, row: int) -> bytes:
    if name != summary:
        return data
    old = f'<row r="{row}">'.encode()
    assert data.count(old) == 1
    return data.replace(old, f'<row r="{row}" hidden="1">'.encode())


def _low_npv_row(name: str, data: bytes, summary: str, row: int) -> bytes:
    if name != summary:
        return data
    old = f'<row r="{row}">'.encode()
    return data.replace(old, f'<row r="{row}" ht="0.5" customHeight="1">'.encode())


def _hide_values_column(name: str, data: bytes, summary: str) -> bytes:
    if name != summary:
        return data
    old = b'min="3" max="3" />'
    assert data.count(old) == 1
    return data.replace(old, b'min="3" max="3" hidden="1" />')


def _rows_hidden_by_default(name: str, data: bytes, summary: str) -> bytes:
    if name != summary:
        return data
    old = b'<sheetFormatPr baseColWidth="8" defaultRowHeight="15" />'
    assert data.count(old) == 1
    return data.replace(
        old, b'<sheetFormatPr baseColWidth="8" defaultRowHeight="15" zeroHeight="1" />'
    )


@pytest.mark.filterwarnings("error::UserWarning")  # (openpyxl's, printed under the report)
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            _white_values,
            "Summary!C2:D73: a conditional format (expression: 'TRUE') shows the cells with "
            "font colour FFFFFF where it holds; econ writes none there",
        ),
        (
            _white_values_extension,
            "Summary!C2:D73: a conditional format (expression (Excel 2010 extension): 'TRUE') "
            "shows the cells with a style of its own where it holds; econ writes none there",
        ),
        (
            _hide_npv_row,
            "Summary!{row}:{row}: row {row} hidden (or lower than 6 pt); econ writes it visible",
        ),
        (
            _low_npv_row,
            "Summary!{row}:{row}: row {row} hidden (or lower than 6 pt); econ writes it visible",
        ),
        (
            _hide_values_column,
            "Summary!C:C: column C hidden (or narrower than 1 character); econ writes it visible",
        ),
        (
            _rows_hidden_by_default,
            "Summary: every row without a height of its own is hidden (zeroHeight",
        ),
    ],
)
def test_a_figure_hidden_by_a_style_or_a_row_fails(book, tmp_path, capsys, edit, message):
    import inspect

    summary = _sheet_part(book, "Summary")
    row = _npv_cell(book).row
    extra = {"row": row} if "row" in inspect.signature(edit).parameters else {}
    edited = tmp_path / "hidden.xlsx"
    _rewrite(book, edited, lambda name, data: edit(name, data, summary, **extra))
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert message.format(row=row) in out, out
    assert out.count("\n") == 2, out  # (one difference: the figures themselves reproduce)


def test_a_formula_edited_with_its_cached_result_kept_fails(book, tmp_path, capsys):
    """The NPV's formula divided by 10, its cached result kept: the file opens showing a tenth
    of the NPV (fullCalcOnLoad), and the formula alone says so (one line)."""
    cell = _npv_cell(book)
    formula = cell.value.removeprefix("=")
    assert "&" not in formula and "<" not in formula  # (written in the XML as it reads)
    edited = tmp_path / "formula.xlsx"
    old, new = f"<f>{formula}</f>", f"<f>({formula})/10</f>"
    _replace_in_sheet(book, edited, "Summary", old.encode(), new.encode())
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert out.count("\n") == 2, out
    line = f"Summary!{cell.coordinate}: formula shown '=({formula})/10', econ writes '={formula}'"
    assert line in out


@pytest.mark.parametrize(
    ("sheet", "cell", "old", "new", "message"),
    [
        # the NPV's formula dropped, its result kept: a figure typed in, no edit reaches it
        ("Summary", None, rb"<f>[^<]*</f>", b"", "shown a number, econ writes a formula"),
        # the month number 1 as the text '1'
        (
            "Monthly",
            "B3",
            rb' t="n"><v>1</v>',
            b' t="inlineStr"><is><t>1</t></is>',
            "shown text, econ writes a number",
        ),
    ],
)
def test_a_cell_of_another_type_fails(book, tmp_path, capsys, sheet, cell, old, new, message):
    cell = cell or _npv_cell(book).coordinate
    part = _sheet_part(book, sheet)
    element = re.compile(rb'<c r="' + cell.encode() + rb'"[^>]*>.*?</c>')

    def edit(name, data):
        if name != part:
            return data
        found = element.search(data).group()
        forged = re.sub(old, new, found, count=1)
        assert forged != found
        return data.replace(found, forged, 1)

    edited = tmp_path / "type.xlsx"
    _rewrite(book, edited, edit)
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"{sheet}!{cell}: {message}" in out


def test_a_defined_name_pointed_at_another_cell_fails(book, tmp_path, capsys):
    """The NPV's formula reads its discount rate by name: the name pointed one row down changes
    the NPV Excel computes, the formula's text unchanged."""
    name = "calc_discount_rate_monthly_1"
    assert name in _npv_cell(book).value
    target = load_workbook(book).defined_names[name].attr_text
    sheet, column, row = re.fullmatch(r"(\w+)!(\$[A-Z]+\$)(\d+)", target).groups()
    moved = f"{sheet}!{column}{int(row) + 1}"
    edited = tmp_path / "name.xlsx"
    old = f'name="{name}">{target}<'.encode()

    def edit(part, data):
        if part == "xl/workbook.xml":
            assert data.count(old) == 1
            return data.replace(old, f'name="{name}">{moved}<'.encode())
        return data

    _rewrite(book, edited, edit)
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"the name {name}: shown {moved!r}, econ writes {target!r}" in out


def test_assumptions_rows_in_another_order_with_their_names_verify(book, tmp_path, capsys):
    """Assumptions' rows pair by input path (a vintage's fields read back may come in another
    order): two rows swapped, with the names of their cells, are the same workbook."""
    ws = load_workbook(book)["Assumptions"]
    rows = {ws.cell(row=r, column=1).value: r for r in range(2, ws.max_row + 1)}
    a, b = rows["fleet.gpu_count"], rows["fleet.gpus_per_rack"]
    assert b == a + 1
    part = _sheet_part(book, "Assumptions")

    def renumbered(xml: bytes, row: int) -> bytes:
        xml = re.sub(rb'<row r="\d+"', b'<row r="%d"' % row, xml, count=1)
        return re.sub(rb'(<c r="[A-Z]+)\d+"', rb'\g<1>%d"' % row, xml)

    def swapped(match: re.Match) -> bytes:
        return match[1] + (b"%d" % (b if int(match[2]) == a else a)) + match[3]

    def edit(name, data):
        if name == part:
            first, second = (
                re.search(rb'<row r="%d".*?</row>' % r, data, re.S).group() for r in (a, b)
            )
            return data.replace(first + second, renumbered(second, a) + renumbered(first, b))
        if name == "xl/workbook.xml":
            return re.sub(rb"(Assumptions!\$[A-Z]+\$)(%d|%d)(<)" % (a, b), swapped, data)
        return data

    edited = tmp_path / "swapped.xlsx"
    _rewrite(book, edited, edit)
    assert load_workbook(edited).defined_names["fleet_gpu_count_1"].attr_text.endswith(f"${b}")
    code, out = _verify(capsys, edited)
    assert code == 0, out


@pytest.mark.parametrize(
    ("written", "saved"),
    [  # econ's number formats as LibreOffice saves them (a round trip of the ready-made scenarios)
        ('"$"#,##0.00;[Red]-"$"#,##0.00', '\\$#,##0.00;[RED]"-$"#,##0.00'),
        ('"$"#,##0.0000', "\\$#,##0.0000"),
        ('0.00"x"', "0.00\\x"),
        ("yyyy-mm-dd", "yyyy\\-mm\\-dd"),
    ],
)
def test_a_number_format_libreoffice_spells_otherwise_agrees(written, saved):
    from econ.memo.workbook_check import _format_key

    assert _format_key(written) == _format_key(saved)


@pytest.mark.parametrize(
    ("written", "forged"),
    [
        ("#,##0", '"0.10"'),
        ("#,##0", "#,##0,"),  # thousands
        ("0.00%", '0.00"%"'),  # a percent sign shown, the figure not multiplied by 100
        ('"$"#,##0.00', '"$"#,##0.00;;;"n/a"'),  # text shown as n/a
        ("0.00", "0.00E+00"),
        ("General", "@"),
    ],
)
def test_a_number_format_showing_otherwise_differs(written, forged):
    from econ.memo.workbook_check import _format_key

    assert _format_key(written) != _format_key(forged)


@pytest.mark.parametrize(
    ("written", "saved", "same"),
    [  # LibreOffice writes a formula's numbers to 15 significant digits
        (
            '=IF(AA221>1E-06,(AE221-AB221)/AA221,"")',
            '=IF(AA221>0.000001,(AE221-AB221)/AA221,"")',
            True,
        ),
        ("=IRR(B2:B9,0.006857085091169113)", "=IRR(B2:B9,0.00685708509116911)", True),
        ("=IRR(B2:B9,0.01645036951711565)", "=IRR(B2:B9,0.0164503695171157)", True),
        ("=C4+C5", "=(C4+C5)/10", False),
        ("=A1*1E-06", "=A1*1.0001E-06", False),
        ("=SUM(A1:A9)", "=SUM(A1:A8)", False),
        ('=IF(A1,"1E-06","")', '=IF(A1,"0.000001","")', False),  # text, not a number
    ],
)
def test_a_formula_libreoffice_spells_otherwise_agrees(written, saved, same):
    from econ.memo.workbook_check import _same_formula

    assert _same_formula(written, saved) is same


def test_a_figure_not_in_cents_changed_beyond_1e_9_of_itself_fails(book, tmp_path, capsys):
    """The relative tolerance of a ratio is not a licence to edit it: a minimum DSCR moved by
    1e-8 of itself is a difference."""
    import econ

    dscr = econ.project(econ.load_scenario(SEEDS[0])).summary["min_dscr"].iloc[0]
    cell = summary_cell(load_workbook(book)["Summary"], "min_dscr").coordinate
    edited = tmp_path / "dscr.xlsx"
    _forge(book, edited, "Summary", cell, repr(float(dscr) * (1 + 1e-8)).encode())
    code, out = _verify(capsys, edited)
    assert code == 1, out
    assert f"Summary.min_dscr of deepseek-r1-gb200-nvl72 ({cell}): shown" in out


@pytest.mark.parametrize(
    "sets",
    [['name="NA"'], ['name="007"'], ['name="TRUE"'], ['name="1e5"'], ['description="N/A"']],
)
def test_text_that_reads_as_missing_or_a_number_is_read_as_text(tmp_path, capsys, sets):
    """pandas' defaults read the text cells "NA" and "N/A" as missing and "007", "TRUE" and
    "1e5" as numbers: an honest workbook of a scenario so named failed verify."""
    book = tmp_path / "named.xlsx"
    overrides = [arg for item in sets for arg in ("--set", item)]
    assert main(["export", str(SEEDS[1]), *overrides, "--xlsx", str(book)]) == 0
    code, out = _verify(capsys, book)
    assert code == 0, out


def test_damaged_workbooks_and_folders_are_named_so(book, tmp_path, capsys):
    """Dispatched by the zip magic or the suffix: a damaged workbook is called a damaged workbook
    (it was "not UTF-8 text; expected a memo"), a folder a folder, with no exception's name."""
    cut = tmp_path / "cut.xlsx"
    cut.write_bytes(book.read_bytes()[:3000])
    empty = tmp_path / "empty.xlsx"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.xlsx"
    garbage.write_bytes(b"PK\x03\x04garbage")
    text = tmp_path / "text.xlsx"
    text.write_text("a,b\n1,2\n")
    folder = tmp_path / "folder.xlsx"
    folder.mkdir()
    cases = {
        cut: "a damaged workbook: not a readable zip package",
        empty: "an empty file; expected a workbook written by econ (.xlsx)",
        garbage: "a damaged workbook: not a readable zip package",
        text: "not a workbook: a workbook is a zip package",
        folder: "a folder; expected a memo (.html, .pdf) or workbook (.xlsx) file",
    }
    for path, message in cases.items():
        code, out = _verify(capsys, path)
        assert code == 3, out
        assert f"{path}: {message}" in out, out
        assert "Error" not in out and "Traceback" not in out


def test_a_workbook_saved_without_calculated_values_is_one_line(book, tmp_path, capsys):
    """openpyxl (load and save) drops every formula's cached result: one line says so (it was
    a "shown nan" line per figure)."""
    saved = tmp_path / "saved.xlsx"
    load_workbook(book).save(saved)
    code, out = _verify(capsys, saved)
    assert code == 3, out
    assert out.count("\n") == 1, out
    assert "holds no calculated values" in out and "the first Summary!C3" in out
    assert "open it in Excel or LibreOffice, save it and verify that file" in out


# A scenario whose throughput comes from a measured curve file: the workbook and the memo embedded
# the curve's absolute path (Notes, warnings, the memo twice) and `econ verify` refused them as
# naming a file. They now embed the curve's figures and name it by file name and SHA-256.
CURVE = ROOT / "tests" / "data" / "app" / "sample_curve.csv"
"""8 GPUs; 5,600 output tokens/s at the highest load, 4,100 at a p99 TPOT of 34 ms; 1,024 input
and 512 output tokens a request."""


def _curve_scenario(folder: Path, vintage: bool = False) -> Path:
    """The seed reading CURVE (copied beside it) without an SLO and without its own input ratio;
    with `vintage`, a second rack reading it at a p99 TPOT of 34 ms."""
    import shutil

    shutil.copy(CURVE, folder / CURVE.name)
    text = SEEDS[0].read_text().replace("input_tokens_per_output_token = 0.213\n", "")
    text = text.replace(
        "[throughput]\n", f'[throughput]\nmeasured = {{ curve = "{CURVE.name}" }}\n'
    )
    if vintage:
        text = text.replace(
            "\n[sources]",
            '\n[[vintages]]\nname = "later"\nfleet = { gpu_count = 72 }\n'
            f'throughput = {{ measured = {{ curve = "{CURVE.name}" }}, '
            "slo = { tpot_p99_s = 0.034 } }\n\n[sources]",
            1,
        )
    path = folder / "curve.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("vintage", [False, True])
def test_a_measured_curve_is_embedded_as_its_figures_without_its_folder(tmp_path, capsys, vintage):
    import hashlib

    import econ
    from econ.scenario import loads

    folder = tmp_path / "private folder"
    folder.mkdir()
    path = _curve_scenario(folder, vintage)
    original = econ.project(econ.load_scenario(path))
    book = tmp_path / "curve.xlsx"
    assert main(["export", str(path), "--xlsx", str(book)]) == 0
    with zipfile.ZipFile(book) as archive:
        for name in archive.namelist():
            assert str(folder).encode() not in archive.read(name), name
    notes = load_workbook(book)["Notes"]
    toml = next(r[3].value for r in notes.iter_rows(min_row=2) if r[2].value == "scenario_toml")
    embedded = loads(toml)
    assert embedded.throughput.measured is None
    assert embedded.throughput.tokens_per_s_per_gpu == 5600 / 8  # the highest load, no SLO
    assert embedded.throughput.input_tokens_per_output_token == 1024 / 512
    digest = hashlib.sha256(CURVE.read_bytes()).hexdigest()
    source = embedded.sources["throughput.tokens_per_s_per_gpu"]
    assert source.startswith(f"measured curve sample_curve.csv (SHA-256 {digest}; format auto)")
    if vintage:
        later = embedded.vintages[0].throughput
        assert "measured" not in later and later["tokens_per_s_per_gpu"] == 4100 / 8
        assert later["source"].startswith("measured curve sample_curve.csv (SHA-256")
    # the same figures as the scenario reading the file
    frozen = econ.project(embedded)
    assert frozen.summary["npv_usd"].iloc[0] == original.summary["npv_usd"].iloc[0]
    assert (frozen.monthly["revenue_usd"].values == original.monthly["revenue_usd"].values).all()
    code, out = _verify(capsys, book)
    assert code == 0, out


def test_a_memo_of_a_measured_curve_names_no_folder_and_verifies(tmp_path, capsys):
    folder = tmp_path / "private folder"
    folder.mkdir()
    memo = tmp_path / "memo.html"
    capsys.readouterr()
    assert main(["memo", str(_curve_scenario(folder)), "--out", str(memo)]) == 0
    text = memo.read_text(encoding="utf-8")
    assert str(folder) not in text and "measured curve sample_curve.csv (SHA-256" in text
    code, out = _verify(capsys, memo)
    assert code == 0, out


@pytest.mark.parametrize(
    "case, field",
    [
        ("tight=throughput.slo.tpot_p99_s=0.034", "throughput.slo"),
        ("other=throughput.measured.gpus=4", "throughput.measured"),
        ("later=vintages=[]", "vintages"),
    ],
)
def test_a_memo_case_on_the_curve_a_memo_embeds_as_figures_is_refused(
    tmp_path, capsys, case, field
):
    """The memo embeds the curve's figures at the scenario's SLO: a case on the curve's SLO or
    file would have reached nothing (the case showed the base figures and verified ok). At a
    p99 TPOT of 34 ms the curve gives 4,100 tokens/s, not the 5,600 of the base: the case would
    have mattered."""
    folder = tmp_path / "private folder"
    folder.mkdir()
    memo = tmp_path / "memo.html"
    capsys.readouterr()
    code = main(["memo", str(_curve_scenario(folder)), "--case", case, "--out", str(memo)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 3 and not memo.exists(), text
    name = case.split("=")[0]
    assert f"case '{name}'" in text and field in text and "Traceback" not in text
    assert "measured curve file sample_curve.csv" in text and str(folder) not in text
    assert "expected a case on throughput.tokens_per_s_per_gpu" in text


def test_a_memo_case_on_other_fields_of_a_curve_scenario_still_counts(tmp_path, capsys):
    folder = tmp_path / "private folder"
    folder.mkdir()
    path = _curve_scenario(folder)
    memo = tmp_path / "memo.html"
    args = ["memo", str(path), "--case", "low=utilization.share=0.5", "--out", str(memo)]
    assert main(args) == 0
    from econ.memo.build import build_memo
    from econ.scenario import load_scenario

    figures = build_memo(load_scenario(path), {"low": ["utilization.share=0.5"]}).figures
    assert figures["low.npv_usd"] < figures["base.npv_usd"]  # fewer hours sold
    code, out = _verify(capsys, memo)
    assert code == 0, out


def test_tables_of_a_measured_curve_keep_its_caveats_and_curves_without_its_folder(tmp_path):
    """JSON, CSV and Parquet (which `econ verify` does not recompute) hold the projection the
    scenario file gives, its warnings naming the curve by its file name (they carried the
    caveats with the folder, then lost them to the embedded scenario's projection); the stamp
    lists the curve file read and hashes the scenario as the workbook embeds it."""
    import hashlib
    import json

    import pyarrow.parquet as pq

    import econ
    from econ.embedding import embeddable
    from econ.provenance import scenario_sha256

    folder = tmp_path / "private folder"
    folder.mkdir()
    path = _curve_scenario(folder)
    scenario = econ.load_scenario(path)
    original = econ.project(scenario)
    caveats = [w.replace(f"{folder}/", "") for w in original.warnings[0]]
    assert "throughput: no SLO given: the operating point is the highest measured throughput" in (
        caveats
    )
    assert any("curve sample_curve.csv does not state its hardware" in w for w in caveats)
    out = tmp_path / "out"
    out.mkdir()
    args = ["export", str(path), "--json", str(out / "p.json"), "--csv", str(out / "p.csv")]
    args += ["--parquet", str(out / "p.parquet"), "--xlsx", str(out / "p.xlsx")]
    assert main(args) == 0
    for written in out.iterdir():
        data = written.read_bytes()
        assert str(folder).encode() not in data, written.name
        if written.suffix == ".parquet":  # (compressed: read back)
            table = pq.read_table(written)
            assert str(folder) not in str(table.schema.metadata) + str(table.to_pylist())
    payload = json.loads((out / "p.json").read_text())
    summary = payload["scenarios"][0]["summary"]
    assert summary["warnings"] == caveats
    assert summary["npv_usd"] == original.summary["npv_usd"].iloc[0]
    digest = hashlib.sha256(CURVE.read_bytes()).hexdigest()
    entry = payload["provenance"]["scenarios"][0]
    assert entry["curves"] == [{"file": "sample_curve.csv", "sha256": digest}]
    assert entry["sha256"] == scenario_sha256(embeddable(scenario))
    notes = load_workbook(out / "p.xlsx")["Notes"]
    stamped = {r[2].value: r[3].value for r in notes.iter_rows(min_row=2)}
    assert stamped["scenario_sha256"] == entry["sha256"]
    rows = pq.read_table(out / "p.summary.parquet")
    assert json.loads(rows.schema.metadata[b"econ_scenarios"])[0]["curves"] == entry["curves"]
    csv = (out / "p.summary.csv").read_text()
    assert "no SLO given" in csv and entry["sha256"] in csv


def test_workbook_bytes_embeds_a_measured_curve(tmp_path, capsys):
    """The download button's API: it named the curve's folder, and `econ verify` refused it."""
    import econ
    from econ.workbook import workbook_bytes

    folder = tmp_path / "private folder"
    folder.mkdir()
    scenario = econ.load_scenario(_curve_scenario(folder))
    data = workbook_bytes(econ.project(scenario), [scenario])
    book = tmp_path / "download.xlsx"
    book.write_bytes(data)
    with zipfile.ZipFile(book) as archive:
        for name in archive.namelist():
            assert str(folder).encode() not in archive.read(name), name
    code, out = _verify(capsys, book)
    assert code == 0, out


def test_a_scenario_longer_than_a_cell_is_embedded_in_pieces_and_verifies(tmp_path, capsys):
    """A monthly token price table of 700 points makes a TOML longer than a cell holds (32,767
    characters): the Notes sheet holds it in consecutive scenario_toml rows, each within the
    limit and ending at a line's end, and `econ verify` joins them (it said the embedded
    scenario was malformed TOML, and the sheet held a note in its place)."""
    import tomllib

    from econ.scenario import validate_dict
    from econ.scenario.io import dumps
    from econ.workbook import MAX_CELL_CHARS, toml_pieces

    data = tomllib.loads(SEEDS[0].read_text(encoding="utf-8"))
    data |= {"name": "long-table", "horizon_months": 120}
    del data["market"]["price_usd_per_mtok"], data["market"]["price_decline_annual"]
    data["market"]["price_table"] = [
        {"month": m, "price_usd_per_mtok": 0.31 * 0.99**m} for m in range(700)
    ]
    text = dumps(validate_dict(data))
    assert len(text) > MAX_CELL_CHARS
    scenario, path = tmp_path / "long.toml", tmp_path / "long.xlsx"
    scenario.write_text(text, encoding="utf-8")
    assert main(["export", str(scenario), "--xlsx", str(path)]) == 0
    notes = load_workbook(path)["Notes"]
    pieces = [r[3] for r in notes.iter_rows(values_only=True) if r[2] == "scenario_toml"]
    assert len(pieces) == 2 and "".join(pieces) == text
    assert all(len(p) <= MAX_CELL_CHARS and p.endswith("\n") for p in pieces)
    code, out = _verify(capsys, path)
    assert code == 0 and " ok, " in out, out
    # a line longer than the limit is cut where the limit falls
    assert toml_pieces("ab\ncdefgh\ni", limit=4) == ["ab\n", "cdef", "gh\ni"]


def test_a_long_name_edited_into_the_notes_is_quoted_short(book, tmp_path, capsys):
    """A scenario's name is at most 200 characters; one of 40,000 edited into the Notes sheet
    (its TOML and its scenario column) is refused in a message of a few hundred characters,
    where it was quoted whole (37 KB)."""
    edited = tmp_path / "long_name.xlsx"
    long = b"x" * 40_000
    seed = b"deepseek-r1-gb200-nvl72"
    _rewrite(book, edited, lambda name, data: data.replace(seed, long))
    code, out = _verify(capsys, edited)
    assert code == 3 and "Traceback" not in out
    assert "at most 200 characters" in out and "(40,000 characters)" in out
    assert len(out) < 1_000, len(out)
