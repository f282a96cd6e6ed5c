"""`econ verify` reads every cell a workbook's sheet holds, not only those inside the rectangle its
`<dimension>` declares (a review's finding, session 26: a forged "Lender case NPV" beside the NPV,
written into the sheet's XML with the dimension left as econ wrote it, verified with exit 0)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from econ.cli import main

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
SUMMARY = "xl/worksheets/sheet1.xml"


def _with_cells_in_row_12(source: Path, target: Path, cells: str) -> str:
    """`source` copied to `target` with `cells` appended to the Summary sheet's row 12; gives
    the sheet's dimension, which stays as written."""
    with zipfile.ZipFile(source) as book, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in book.infolist():
            data = book.read(info.filename)
            if info.filename == SUMMARY:
                text = data.decode("utf-8")
                dimension = re.search(r'<dimension ref="([^"]+)"', text).group(1)
                row = re.search(r'(<row r="12"[^>]*>.*?)(</row>)', text, flags=re.S)
                text = text[: row.start()] + row.group(1) + cells + row.group(2) + text[row.end() :]
                data = text.encode("utf-8")
            out.writestr(info, data)
    return dimension


def test_a_cell_outside_the_declared_dimension_is_a_difference(tmp_path, capsys):
    exported = tmp_path / "seed.xlsx"
    assert main(["export", str(SEED), "--xlsx", str(exported)]) == 0
    forged = tmp_path / "forged.xlsx"
    dimension = _with_cells_in_row_12(
        exported,
        forged,
        '<c r="E12" t="inlineStr"><is><t>Lender case NPV</t></is></c>'
        '<c r="F12"><f>C12+10000000</f><v>9837400.95815229</v></c>',
    )
    assert re.fullmatch(r"A1:[A-D]\d+", dimension)  # columns E and F lie outside it
    capsys.readouterr()
    assert main(["verify", str(exported)]) == 0
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 1
    said = capsys.readouterr().out
    assert "Summary!E12: shown text, econ writes nothing" in said
    assert "Summary!F12: shown a formula, econ writes nothing" in said
