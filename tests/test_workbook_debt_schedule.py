"""The workbook's Debt schedule sheet: engine.debt_schedule_table by asset year, as values."""

from __future__ import annotations

import datetime as dt
import io

import numpy as np
import pytest
from openpyxl import load_workbook

from econ import load_scenario, project
from econ.engine import DEBT_SCHEDULE, debt_schedule_table
from econ.workbook import workbook_bytes
from tests.conftest import ROOT
from tests.test_debt_schedule import stepped_ddtl

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
NAMES = ("deepseek-r1-gb200-nvl72", "deepseek-r1-gb200-nvl72-capital-stack")


@pytest.mark.parametrize("with_scenarios", [True, False])
def test_debt_schedule_sheet_equals_the_library_table(tmp_path, with_scenarios):
    scenarios = [load_scenario(ROOT / "models" / "scenarios" / f"{n}.toml") for n in NAMES]
    projection = project(scenarios)
    path = tmp_path / "book.xlsx"
    path.write_bytes(workbook_bytes(projection, scenarios if with_scenarios else None, created=T0))
    sheet = load_workbook(path)["Debt schedule"]
    rows = list(sheet.iter_rows(values_only=True))
    assert list(rows[0]) == ["Scenario", "Asset year", *DEBT_SCHEDULE.values()]
    shown = rows[1:]
    at = 0
    for scenario in scenarios:
        floor = scenario.financing.covenants.dscr_floor if with_scenarios else None
        expected = debt_schedule_table(
            projection.monthly.loc[[scenario.name]], "asset", floor
        ).droplevel("scenario")
        for year, values in expected.iterrows():
            row = shown[at]
            assert row[:2] == (scenario.name, year)
            for j, column in enumerate(DEBT_SCHEDULE, start=2):
                if np.isnan(values[column]):
                    assert row[j] is None
                else:
                    assert row[j] == pytest.approx(values[column], rel=1e-12, abs=1e-9)
            at += 1
    assert at == len(shown) == 12  # two 72-month scenarios, six asset years each
    # The capital-stack seed's covenant gives a headroom; without scenarios none is shown.
    headroom = [r[-1] for r in shown]
    assert any(h is not None for h in headroom) == with_scenarios


def test_the_monthly_sheet_shows_commitment_fees_and_keeps_its_column_letters():
    """commitment_fee_usd is the Monthly sheet's column AP, after capitalized_interest_usd (AO),
    so that the columns before it keep their letters (AG, cash_flow_project_usd, is the one
    docs/exports.md's NPV formula quotes). A capital stack's fees are the engine's values, like
    its cash interest; financing.debt_share's loan has no commitment: 0 as a formula, which its
    debt service and equity cash flow formulas read."""
    seed = load_scenario(ROOT / "models" / "scenarios" / f"{NAMES[0]}.toml")
    scenarios = [seed, stepped_ddtl()]
    projection = project(scenarios)
    book = load_workbook(io.BytesIO(workbook_bytes(projection, scenarios, created=T0)))
    sheet = book["Monthly"]
    letter = {c.value: c.column_letter for c in sheet[1]}
    assert letter["cash_flow_project_usd"] == "AG"
    assert (letter["capitalized_interest_usd"], letter["commitment_fee_usd"]) == ("AO", "AP")
    rows = int(projection.horizon_months[0]) + 1
    for month in (1, 6, 7, 13):
        assert sheet[f"AP{2 + month}"].value == "=0"
        assert "AP" in sheet[f"{letter['debt_service_usd']}{2 + month}"].value
        stepped = sheet[f"AP{2 + rows + month}"].value
        expected = projection.lines["commitment_fee_usd"][1, month]
        assert stepped == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert projection.lines["commitment_fee_usd"][1, 1] > 0  # a fee the sheet shows
    notes = [r for r in book["Notes"].iter_rows(values_only=True) if r[:1] == ("values",)]
    assert any(r[1:3] == ("stepped-ddtl", "commitment_fee_usd") for r in notes)
