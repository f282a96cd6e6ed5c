"""Yearly totals by asset or calendar year (econ.engine.annual_table, the app's yearly P&L), the flat summary and stamp the
writers share (econ.reporting), and the yearly figures `econ depreciation` takes from econ.tax and
econ.depreciation."""

from __future__ import annotations

import numpy as np
import pytest

from econ import depreciation as dep
from econ import export, load_scenario, project, reporting, tax, workbook
from econ.engine import annual_table
from econ.errors import InputError
from econ.provenance import ProvenanceError
from tests.conftest import SCENARIOS

SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


def test_calendar_years_of_a_schedule_starting_in_april():
    # The seed starts 2026-04: months 0-8 fall in 2026, 9-20 in 2027, and so on.
    projection = project(load_scenario(SEED))
    monthly = projection.monthly
    totals = annual_table(monthly, "calendar").loc["deepseek-r1-gb200-nvl72"]
    one = monthly.loc["deepseek-r1-gb200-nvl72"]
    revenue = one["revenue_usd"].to_numpy()
    assert list(totals.index) == list(range(2026, 2033))
    assert totals.loc[2026, "revenue_usd"] == pytest.approx(revenue[:9].sum(), rel=1e-12)
    assert totals.loc[2027, "revenue_usd"] == pytest.approx(revenue[9:21].sum(), rel=1e-12)
    assert totals.loc[2026, "capex_usd"] == one["capex_usd"].iloc[0]
    # every month counted once; balances at year end
    assert totals["revenue_usd"].sum() == pytest.approx(revenue.sum(), rel=1e-12)
    assert totals.loc[2026, "debt_balance_usd"] == one["debt_balance_usd"].iloc[8]


def test_calendar_years_by_scenario_and_asset_years():
    scenario = load_scenario(SEED)
    projection = project([scenario, scenario.model_copy(update={"name": "b"})])
    totals = annual_table(projection.monthly, "calendar")
    assert totals.index.names == ["scenario", "year"]
    assert totals.loc["b"].equals(totals.loc["deepseek-r1-gb200-nvl72"])
    asset = annual_table(projection.monthly, "asset")
    assert list(asset.loc["b"].index) == list(range(1, 7))  # year 1 = months 0-12
    assert asset["tokens"].sum() == pytest.approx(totals["tokens"].sum(), rel=1e-12)
    with pytest.raises(InputError, match="years: unknown value 'fiscal'"):
        annual_table(projection.monthly, "fiscal")


def test_writers_share_one_flat_summary_and_stamp():
    assert export.flat_summary is reporting.flat_summary is workbook.flat_summary
    assert export.make_stamp is reporting.make_stamp
    projection = project(load_scenario(SEED))
    with pytest.raises(ProvenanceError, match="2 scenarios given for a projection of 1"):
        reporting.make_stamp(projection, [load_scenario(SEED)] * 2)


def test_writers_refuse_scenarios_other_than_those_projected(tmp_path):
    """Only the number was checked: swapped scenarios, or another of the same name, wrote a
    workbook whose `econ verify` found 68 figures differing, or a stamp with another's hash."""
    from econ.workbook import WorkbookError

    seed = load_scenario(SEED)
    cheap = load_scenario(SEED, {"market.price_usd_per_mtok": 0.2, "name": "cheap"})
    projection = project([seed, cheap])
    made_from = "expected the scenarios the projection was made from, in order"
    swapped = (
        r"scenario 0 given is 'cheap' \(the projection's 1\), but the projection's scenario 0 is "
        rf"'deepseek-r1-gb200-nvl72'; {made_from}"
    )
    with pytest.raises(ProvenanceError, match=swapped):
        reporting.make_stamp(projection, [cheap, seed])
    with pytest.raises(ProvenanceError, match=swapped):
        export.write_projection(projection, tmp_path / "x.json", scenarios=[cheap, seed])
    with pytest.raises(WorkbookError, match=swapped):
        workbook.build_workbook(projection, [cheap, seed], reporting.make_stamp(projection))
    other = load_scenario(SEED, {"market.price_usd_per_mtok": 0.25, "name": "cheap"})
    changed = (
        r"scenario 1 given, 'cheap', is not the one projected under that name: "
        rf"market\.price_usd_per_mtok is 0\.25 in it, 0\.2 in the projection; {made_from}"
    )
    with pytest.raises(ProvenanceError, match=changed):
        export.write_projection(projection, tmp_path / "x.xlsx", scenarios=[seed, other])
    assert not list(tmp_path.iterdir())
    # the same scenarios, loaded again, are the ones projected
    again = [load_scenario(SEED), load_scenario(SEED, {"market.price_usd_per_mtok": 0.2,
                                                        "name": "cheap"})]  # fmt: skip
    assert reporting.make_stamp(projection, again).scenarios == (
        reporting.make_stamp(projection, [seed, cheap]).scenarios
    )
    # a batch of columns keeps no scenarios: its names are checked
    from econ import ScenarioBatch

    batch = project(ScenarioBatch.repeat(seed, 2), monthly=False)
    assert batch.scenarios == () and projection.scenarios == (seed, cheap)
    with pytest.raises(ProvenanceError, match=r"scenario 0 given is 'deepseek-r1-gb200-nvl72', bu"):
        reporting.make_stamp(batch, [seed, cheap])


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
