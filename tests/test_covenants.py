"""The lenders' covenants in the engine: a loan-to-value ceiling tested month by month against the
collateral the ltv line shows, and each scenario of a batch tested (and sized) on its own DSCR
window, as it is alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from econ import ScenarioBatch, load_scenario, project
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
GIVEN_LOAN = {  # a level loan of 60% of capex, as given: no sizing moves it
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "financing.repayment": "level_payment",
    "financing.debt_share": 0.6,
}


def seed(**overrides):
    return load_scenario(SEED, {**GIVEN_LOAN, **overrides})


def test_an_ltv_ceiling_is_breached_where_the_ltv_line_is_above_it():
    """Only an LTV covenant: the months in breach are exactly the months with debt outstanding
    whose ltv line is above the ceiling; the loan of 60% of capex breaches a 55% ceiling at close."""
    result = project(seed(**{"financing.covenants.dscr_floor": "none",
                             "financing.covenants.ltv_ceiling": 0.55}))
    monthly = result.monthly
    ltv, owed = monthly["ltv"].to_numpy(), monthly["debt_balance_usd"].to_numpy() > 1e-6
    expected = owed & (ltv > 0.55)
    assert ltv[0] == pytest.approx(0.6, rel=1e-12)  # the loan over its cost at close
    assert monthly["covenant_breach"].to_numpy().astype(bool).tolist() == expected.tolist()
    summary = result.summary.iloc[0]
    assert summary["covenant_breach_months"] == expected.sum() > 0
    assert summary["first_breach_month"] == 0
    assert pd.isna(summary["dscr_headroom"])  # no DSCR covenant, no DSCR headroom
    warning = next(w for w in result.warnings[0] if w.startswith("covenant breached"))
    assert f"loan-to-value above its 55% ceiling in {expected.sum()} months" in warning
    assert "DSCR" not in warning


def test_a_higher_ltv_ceiling_never_breaches_more_months():
    ceilings = np.array([0.3, 0.5, 0.6, 0.7, 0.9, 1.5])
    batch = ScenarioBatch.repeat(
        seed(**{"financing.covenants.ltv_ceiling": 0.5}), ceilings.size,
        {"financing.covenants.ltv_ceiling": ceilings},
    )
    months = project(batch, monthly=False).metrics["covenant_breach_months"]
    assert np.all(np.diff(months) <= 0) and months[0] > months[-1]
    # a ceiling the ledger never reaches leaves the DSCR test's breaches alone
    plain = project(seed(), monthly=False).metrics["covenant_breach_months"][0]
    assert months[-1] == plain


def test_each_scenario_is_tested_on_its_own_dscr_window():
    """A sweep over the covenant's test window: each row as it is alone (the chunk used to test
    every row on the longest window)."""
    windows = np.array([1.0, 3.0, 12.0])
    base = seed(**{"market.price_usd_per_mtok": 0.26})
    together = project(
        ScenarioBatch.repeat(base, 3, {"financing.covenants.test_months": windows}), monthly=False
    ).metrics
    for row, window in enumerate(windows):
        alone = project(seed(**{"market.price_usd_per_mtok": 0.26,
                                "financing.covenants.test_months": int(window)}), monthly=False)
        for key in ("covenant_breach_months", "first_breach_month", "dscr_headroom"):
            assert together[key][row] == alone.metrics[key][0], (key, window)
    assert together["covenant_breach_months"][0] > together["covenant_breach_months"][2]


def test_each_scenario_sizes_its_loan_on_its_own_dscr_window():
    windows = np.array([1.0, 12.0])
    sized = {"financing.size_to_min_dscr": 1.3, "financing.repayment": "level_payment"}
    together = project(
        ScenarioBatch.repeat(seed(**sized), 2, {"financing.covenants.test_months": windows}),
        monthly=False,
    ).metrics["debt_usd"]
    alone = [
        project(seed(**sized, **{"financing.covenants.test_months": int(w)}), monthly=False)
        .metrics["debt_usd"][0]
        for w in windows
    ]
    np.testing.assert_array_equal(together, alone)


def test_months_of_headroom_count_to_the_dscr_tests_own_breach():
    """An LTV breach at close does not end the DSCR covenant's headroom: months_of_headroom
    counts the months of debt service before the DSCR test first fails, with or without it."""
    dscr_only = project(seed(**{"market.price_usd_per_mtok": 0.26}), monthly=False).metrics
    both = project(
        seed(**{"market.price_usd_per_mtok": 0.26, "financing.covenants.ltv_ceiling": 0.55}),
        monthly=False,
    ).metrics
    assert both["first_breach_month"][0] == 0 < dscr_only["first_breach_month"][0]
    assert both["months_of_headroom"][0] == dscr_only["months_of_headroom"][0] > 0
    assert both["covenant_breach_months"][0] > dscr_only["covenant_breach_months"][0]


def test_a_loan_outliving_its_collateral_breaches_any_ltv_ceiling():
    """Book life 3 years, loan 5: from month 36 the GPUs are worth nothing on the books while
    debt is outstanding. The ltv line is undefined there (NaN), and every such month breaches
    even a 100% ceiling: a lender reads the loan as unsecured."""
    result = project(seed(**{"depreciation.life_years": 3, "financing.covenants.dscr_floor": "none",
                             "financing.covenants.ltv_ceiling": 1.0}))
    monthly = result.monthly
    ltv, owed = monthly["ltv"].to_numpy(), monthly["debt_balance_usd"].to_numpy() > 1e-6
    unsecured = owed & np.isnan(ltv)
    assert unsecured[37:60].all()  # book value 0 from month 36, debt to month 60
    expected = unsecured | (owed & (ltv > 1.0))
    assert monthly["covenant_breach"].to_numpy().astype(bool).tolist() == expected.tolist()
    assert result.summary.iloc[0]["covenant_breach_months"] == expected.sum()


def test_a_sweep_compares_a_covenant_with_none():
    """"none" in a grid is the covenant turned off, as `--set ...=none` is."""
    from econ.analysis.sweeps import sweep

    base = seed(**{"market.price_usd_per_mtok": 0.26})
    rows = sweep(base, grid={"financing.covenants.dscr_floor": [1.2, "none"]}).rows
    for row, value in enumerate([1.2, "none"]):
        alone = project(seed(**{"market.price_usd_per_mtok": 0.26,
                                "financing.covenants.dscr_floor": value}), monthly=False)
        assert rows["covenant_breach_months"].iloc[row] == alone.metrics["covenant_breach_months"][0]
    assert rows["covenant_breach_months"].iloc[0] > 0 == rows["covenant_breach_months"].iloc[1]


def test_a_sale_with_debt_outstanding_is_said_with_its_figures():
    """The refresh scenario sells its H200s in month 18 while its loans run on: the warning gives
    the month, the proceeds and the debt from the monthly lines; the seed, sold at the horizon
    with its loan repaid, has none."""
    refresh = project(load_scenario(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"))
    month = refresh.monthly.xs(18, level="month").iloc[0]
    said = [w for w in refresh.warnings[0] if w.startswith("GPUs are sold with debt outstanding")]
    assert said == [
        f"GPUs are sold with debt outstanding in 1 month, first in month 18 "
        f"({month['disposal_usd']:,.0f} USD of proceeds, {month['debt_balance_usd']:,.0f} USD of "
        "debt): the loan is not prepaid from the proceeds, which go to the cash flows, yet the "
        "ltv line and an LTV covenant still count what was sold as collateral (at its carrying "
        "amount at sale, or its proceeds with a resale table)"
    ]
    assert not any("sold with debt" in w for w in project(load_scenario(SEED)).warnings[0])


def test_a_stack_that_lends_more_than_the_capex_is_said():
    """Tranche amounts are not cut to the capex as the term loan is: a stack raising more debt
    than the GPUs cost is projected, and a warning gives the loan-to-cost."""
    from econ.scenario import scenario_to_dict, validate_dict

    stack = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml")
    data = scenario_to_dict(stack)
    first = data["financing"]["tranches"][0]
    first.pop("share_of_capex", None)
    first["amount_usd"] = 9e6
    result = project(validate_dict(data), monthly=False)
    debt, capex = result.metrics["debt_usd"][0], result.metrics["capex_usd_total"][0]
    assert debt > capex
    assert (f"the debt raised, {debt:,.0f} USD, is more than the capex of {capex:,.0f} USD "
            f"({debt / capex:.0%} loan-to-cost)") in " ".join(result.warnings[0])
    assert not any("debt raised" in w for w in project(stack, monthly=False).warnings[0])
