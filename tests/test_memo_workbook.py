"""`econ verify` of an exported workbook: it recomputes the scenarios the Notes sheet embeds and
checks the Summary and Monthly sheets; an edited figure or scenario fails (exit 1, named)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

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
    assert "Summary.npv_usd row 1: shown 123" in out


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
    assert code == 3 and "not a readable workbook" in out and "Traceback" not in out


def test_an_input_edited_on_the_assumptions_sheet_fails(book, tmp_path, capsys):
    """The figures are the embedded scenario's: a loan rate edited in the workbook (recalculated
    or not) is an input they do not rest on."""
    edited = tmp_path / "rate.xlsx"
    workbook = load_workbook(book)
    sheet, ref = workbook.defined_names["financing_debt_rate_annual_1"].attr_text.split("!")
    workbook[sheet][ref.replace("$", "")].value = 0.09
    workbook.save(edited)
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
