"""`econ verify` of a workbook and what Excel shows when it opens it (a review's findings,
session 31): a workbook set to "precision as displayed" (workbook.xml's calcPr fullPrecision="0")
recalculates on opening with every figure rounded to the digits its format shows, so the seed's
NPV reads -162,722.33 USD for -162,599.04 in LibreOffice, and it verified with exit 0."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from econ.cli import main

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
WORKBOOK_PART = "xl/workbook.xml"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("book") / "seed.xlsx"
    assert main(["export", str(SEED), "--xlsx", str(path)]) == 0
    return path


def _with_calculation(source: Path, target: Path, attributes: str) -> None:
    """`source` copied to `target` with `attributes` added to workbook.xml's calcPr."""
    with zipfile.ZipFile(source) as book, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in book.infolist():
            data = book.read(info.filename)
            if info.filename == WORKBOOK_PART:
                assert data.count(b"<calcPr ") == 1
                data = data.replace(b"<calcPr ", b"<calcPr " + attributes.encode() + b" ")
            out.writestr(info, data)


def test_precision_as_displayed_is_a_difference(exported, tmp_path, capsys):
    forged = tmp_path / "forged.xlsx"
    _with_calculation(exported, forged, 'fullPrecision="0"')
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 1
    said = capsys.readouterr().out
    assert "1 of " in said
    assert "calculation: the workbook calculates with the precision as displayed" in said


@pytest.mark.parametrize("attributes", ['fullPrecision="1"', 'fullPrecision="true"'])
def test_full_precision_spelled_out_verifies(exported, tmp_path, capsys, attributes):
    """As LibreOffice or Excel may write the default."""
    written = tmp_path / "written.xlsx"
    _with_calculation(exported, written, attributes)
    capsys.readouterr()
    assert main(["verify", str(written)]) == 0


def test_a_path_the_system_cannot_open_is_exit_3_in_one_line(tmp_path, capsys):
    """A file name longer than the file system holds (255 bytes) was a traceback from
    pathlib's is_dir and exit 1, which `econ verify` gives for figures that differ."""
    path = tmp_path / ("a" * 300 + ".xlsx")
    assert main(["verify", str(path)]) == 3
    said = capsys.readouterr().err
    assert said.count("\n") == 1
    assert said.startswith(f"error: {path}: cannot be read: the file name is too long")
    assert "expected a memo (.html, .pdf) or workbook (.xlsx)" in said
