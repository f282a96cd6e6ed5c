"""Calendar-year totals (econ.engine, the app's yearly P&L), the flat summary and stamp the
writers share (econ.reporting), and the yearly figures `econ depreciation` takes from econ.tax and
econ.depreciation."""

from __future__ import annotations

import numpy as np
import pytest

from econ import depreciation as dep
from econ import export, load_scenario, project, reporting, tax, workbook
from econ.engine import calendar_year_totals
from econ.provenance import ProvenanceError
from tests.conftest import SCENARIOS

SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


def test_calendar_years_of_a_schedule_starting_in_april():
    # The seed starts 2026-04: months 0-8 fall in 2026, 9-20 in 2027, and so on.
    projection = project(load_scenario(SEED))
    monthly = projection.monthly.loc["deepseek-r1-gb200-nvl72"]
    totals = calendar_year_totals(monthly, ["revenue_usd", "capex_usd"])
    revenue = monthly["revenue_usd"].to_numpy()
    assert list(totals.index) == list(range(2026, 2033))
    assert totals.loc[2026, "revenue_usd"] == pytest.approx(revenue[:9].sum(), rel=1e-12)
    assert totals.loc[2027, "revenue_usd"] == pytest.approx(revenue[9:21].sum(), rel=1e-12)
    assert totals.loc[2026, "capex_usd"] == monthly["capex_usd"].iloc[0]
    # every month counted once
    assert totals["revenue_usd"].sum() == pytest.approx(revenue.sum(), rel=1e-12)


def test_calendar_years_by_scenario_and_refusing_balances():
    scenario = load_scenario(SEED)
    projection = project([scenario, scenario.model_copy(update={"name": "b"})])
    totals = calendar_year_totals(projection.monthly, ["tokens"])
    assert totals.index.names == ["scenario", "year"]
    assert totals.loc["b"].equals(totals.loc["deepseek-r1-gb200-nvl72"])
    with pytest.raises(ValueError, match="debt_balance_usd is a balance or a ratio"):
        calendar_year_totals(projection.monthly, ["debt_balance_usd"])


def test_writers_share_one_flat_summary_and_stamp():
    assert export.flat_summary is reporting.flat_summary is workbook.flat_summary
    assert export.make_stamp is reporting.make_stamp
    projection = project(load_scenario(SEED))
    with pytest.raises(ProvenanceError, match="2 scenarios given for a projection of 1"):
        reporting.make_stamp(projection, [load_scenario(SEED)] * 2)


def test_year_end_values_take_each_tax_years_last_month():
    # months 0..30: tax years end at months 12, 24 and 30 (the short last year)
    levels = np.arange(31.0)[None, :]
    assert tax.year_end_values(levels)[0].tolist() == [12.0, 24.0, 30.0]
    assert tax.year_end_values(np.array([[5.0]]))[0].tolist() == [5.0]
    # the tax years match annual_sums' years
    assert tax.year_end_values(levels).shape == tax.annual_sums(levels).shape


def test_sale_at_book_value_unless_a_price_is_given():
    # Straight line 1,000 over 5 years, sold after 30 months: carrying 500 (ASC 360-10-40: no gain
    # when sold at its carrying amount); at a price of 600 the gain is 100.
    months = np.arange(61)
    x = dep.straight_line([1000.0], [0.0], [5.0], months)
    carrying = dep.book_value([1000.0], x)[:, 30]
    assert carrying[0] == pytest.approx(500.0)
    at_book = dep.sale_proceeds_usd(carrying, [np.nan])
    assert at_book[0] == pytest.approx(500.0)
    priced = dep.sale_proceeds_usd(carrying, [600.0])
    assert priced[0] == 600.0
    assert dep.dispose(x, [1000.0], months, [30], priced).gain_usd.sum() == pytest.approx(100.0)
    assert dep.sale_proceeds_usd(np.array([-1e-12]), [np.nan])[0] == 0.0


def test_depreciation_command_years_come_from_the_tax_years():
    from econ.commands.depreciation import yearly

    months = np.arange(31)
    lines = {"month": months}
    for name in ("book_depreciation_usd", "tax_depreciation_usd", "deferred_tax_expense_usd"):
        lines[name] = np.where(months >= 1, 1.0, 0.0)
    for name in ("book_value_usd", "tax_basis_usd", "deferred_tax_liability_usd"):
        lines[name] = 100.0 - months
    out = yearly(lines)
    assert out["year"].tolist() == [1, 2, 3]
    assert out["book_depreciation_usd"].tolist() == [12.0, 12.0, 6.0]
    assert out["book_value_usd"].tolist() == [88.0, 76.0, 70.0]
