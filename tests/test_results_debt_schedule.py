"""Results page: the debt schedule by year and the years selector (asset or calendar years)."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import ready_made_scenarios
from econ.engine import DEBT_SCHEDULE, debt_schedule_table
from tests.conftest import ROOT

STACK = "deepseek-r1-gb200-nvl72-capital-stack"


def table_with_row(at: AppTest, row: str) -> pd.DataFrame:
    found = [d.value for d in at.dataframe if row in list(d.value.index)]
    assert found, f"no table with a row {row!r}"
    return found[0]


@pytest.mark.parametrize("years", ["asset", "calendar"])
def test_results_debt_schedule_equals_the_library_table(years):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.sidebar.selectbox[0].set_value(STACK).run()
    at.switch_page("econ/ui/pages/results.py").run()
    assert not at.exception, at.exception
    at.radio(key="results_years").set_value(years).run()
    assert not at.exception, at.exception
    scenario = load_scenario(ready_made_scenarios()[STACK])
    floor = scenario.financing.covenants.dscr_floor
    expected = debt_schedule_table(project(scenario).monthly, years, floor).droplevel("scenario")
    shown = table_with_row(at, "Opening balance [USD]")
    assert len(shown.columns) == len(expected)
    for column, label in DEBT_SCHEDULE.items():
        if column == "months":
            continue
        # shown as text: money to the USD, ratios to 2 decimals, "n/a" where a ratio is undefined
        texts = list(shown.loc[label])
        values = list(expected[column])
        assert ["n/a" if pd.isna(v) else "" for v in values] == [
            "n/a" if t == "n/a" else "" for t in texts
        ], label
        step = 0.005 if label.endswith("[x]") else 0.5
        for text, value in zip(texts, values, strict=True):
            if text != "n/a":
                assert float(text.replace(",", "")) == pytest.approx(value, abs=step), label
    pnl = table_with_row(at, "EBIT")
    annual = project(scenario).yearly(years).droplevel("scenario")
    assert list(pnl.loc["EBIT"]) == pytest.approx(list(annual["ebit_usd"]))
    headings = list(shown.columns)
    if years == "calendar":
        # The seed starts in April 2026: 8 months of service in 2026, 4 in 2032.
        assert headings[0] == "2026 (8 months)" and headings[-1] == "2032 (4 months)"
    else:
        assert headings == [f"Year {k}" for k in range(1, 7)]
    assert list(pnl.columns) == headings  # the P&L follows the same selector
