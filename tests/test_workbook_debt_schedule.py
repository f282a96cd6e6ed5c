"""The workbook's Debt schedule sheet: engine.debt_schedule_table by asset year, as values."""

from __future__ import annotations

import datetime as dt
import io
import shutil

import numpy as np
import pytest
from openpyxl import load_workbook

from econ import load_scenario, project
from econ.engine import DEBT_SCHEDULE, debt_schedule_table
from econ.workbook import workbook_bytes
from tests.conftest import ROOT
from tests.test_construction_keys import BUILD
from tests.test_debt_schedule import stepped_ddtl
from tests.test_workbook import recalculate

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


def _debt_roll(path) -> tuple[np.ndarray, np.ndarray]:
    """The Debt sheet's opening balance + draws + interest added - principal - closing balance
    each month, and its interest added, from the cells' results."""
    sheet = load_workbook(path, data_only=True)["Debt"]
    rows = list(sheet.iter_rows(values_only=True))
    names = ("draws_usd", "interest_added_usd", "principal_usd", "debt_balance_usd")
    column = {n: np.array([r[rows[0].index(n)] for r in rows[1:]], dtype=float) for n in names}
    closing = column["debt_balance_usd"]
    opening = np.r_[0.0, closing[:-1]]
    added = column["interest_added_usd"]
    return opening + column["draws_usd"] + added - column["principal_usd"] - closing, added


def test_the_debt_sheet_rolls_its_balance_over_capitalized_and_deferred_interest(tmp_path):
    """A construction period's interest is capitalized (interest_usd 0 in months 1-3) and a
    sculpted loan's unpaid interest deferred (the 10 MW hall's month 1, 675,578 USD), both added
    to the balance: before, no Debt column showed them, so the sheet's balance rose by 35,653 USD
    and 675,578 USD that a lender could not find on it. Debt!interest_added_usd shows them, last
    on the sheet so its other columns keep their letters, and each month's balance is the one
    before + draws + interest added - principal, to the cent, as written and as LibreOffice
    recalculates it."""
    scenarios = {
        "construction": load_scenario(
            ROOT / "models" / "scenarios" / f"{NAMES[0]}.toml",
            BUILD,  # (service from month 4)
        ),
        "hall": load_scenario(ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"),
    }
    added_in_all = {"construction": 35_653.14, "hall": 675_578.41}
    files = []
    for name, scenario in scenarios.items():
        projection = project([scenario])
        path = tmp_path / f"{name}.xlsx"
        path.write_bytes(workbook_bytes(projection, [scenario], created=T0))
        files.append(path)
        header = [c.value for c in load_workbook(path)["Debt"][1]]
        assert header[-1] == "interest_added_usd"
        residual, added = _debt_roll(path)
        assert np.abs(residual).max() < 0.005, name
        assert added.sum() == pytest.approx(added_in_all[name], abs=0.01)
        monthly = projection.monthly.loc[scenario.name]
        assert added.sum() == pytest.approx(
            (
                monthly["capitalized_interest_usd"]
                + monthly["interest_usd"]
                - monthly["cash_interest_usd"]
            ).sum(),
            abs=1e-6,
        )
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    out = tmp_path / "recalculated"
    out.mkdir()
    recalculate(files, out)
    for path in files:
        residual, added = _debt_roll(out / path.name)
        assert np.abs(residual).max() < 0.005, path.name
        assert added.sum() == pytest.approx(added_in_all[path.stem], abs=0.01)
