"""A scenario sold at its resale value through the workbook and `econ verify` (in-process)."""

from __future__ import annotations

import openpyxl

from econ.cli import main
from tests.conftest import ROOT
from tests.workbook_helpers import summary_cells

BASE = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"


def test_workbook_of_a_resale_scenario_verifies_and_says_why_disposal_is_values(tmp_path, capsys):
    out = tmp_path / "resale.xlsx"
    args = [
        "project",
        str(BASE),
        "--set",
        'market.resale_series="GLRI/ResidualGuide"',
        "--set",
        'market.resale_series_gpu="H100"',
        "--set",
        "market.rental_usd_per_gpu_hour=2.9",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert main(["verify", str(out)]) == 0
    assert "figures reproduce" in capsys.readouterr().out
    book = openpyxl.load_workbook(out)
    notes = [
        " ".join(str(c) for c in row if c) for row in book["Notes"].iter_rows(values_only=True)
    ]
    assert any("disposal_usd" in n and "does not model this scenario" in n for n in notes)
    inputs = [row[0] for row in book["Assumptions"].iter_rows(values_only=True)]
    assert "market.resale_series" in inputs and "market.resale_band" in inputs
    rows = summary_cells(book["Summary"])
    for key in (
        "rental_earnings_usd_per_gpu_year",
        "resale_loss_usd_per_gpu_year",
        "rental_resale_spread_usd_per_gpu_year",
    ):
        assert rows[key][0].value is not None
