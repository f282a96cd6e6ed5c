"""The engine with book and tax depreciation, impairment, disposal and a capital stack."""

from __future__ import annotations

import numpy as np
import pytest

from econ import load_scenario, project
from econ.scenario import apply_overrides, validate_dict
from tests.conftest import ROOT
from tests.test_engine import SMALL

SCENARIOS = ROOT / "models" / "scenarios"


def small(**changes):
    return validate_dict(apply_overrides({**SMALL, "horizon_months": 36}, changes))


def test_macrs_tax_with_bonus_and_deferred_tax():
    scenario = small(
        **{
            "depreciation.life_years": 3.0,
            "depreciation.tax": {"method": "macrs_gds", "recovery_years": 5, "bonus_share": 1.0},
            "market.price_usd_per_mtok": 0.3,
        }
    )
    m = project(scenario).monthly.loc["small"]
    # 100% bonus: the whole cost is deducted for tax in the in-service month (IRS Pub 946).
    assert m.tax_depreciation_usd.iloc[1] == pytest.approx(10000.0)
    assert m.tax_depreciation_usd.iloc[2:].sum() == pytest.approx(0.0, abs=1e-9)
    assert m.depreciation_usd.sum() == pytest.approx(10000.0)
    # Net deferred tax liability at each year end = rate x (cumulative (tax - book) depreciation
    # less the losses carried forward): ASC 740 recognizes a deferred tax asset for the losses
    # (issue 16; before, the losses were left out and year-1 tax expense was not 25% of income).
    gap = np.cumsum(m.tax_depreciation_usd - m.depreciation_usd)
    taxable = m.ebitda_usd - m.tax_depreciation_usd - m.interest_usd
    year_ends = [12, 24, 36]
    cumulative = np.cumsum(taxable).iloc[year_ends].to_numpy()
    losses = np.maximum.accumulate(np.maximum(cumulative, 0.0)) - cumulative
    assert m.deferred_tax_liability_usd.iloc[year_ends].to_numpy() == pytest.approx(
        0.25 * (gap.iloc[year_ends].to_numpy() - losses), abs=1e-6
    )
    assert m.deferred_tax_usd.sum() == pytest.approx(-0.25 * losses[-1], abs=1e-6)
    # Cash tax follows the tax schedule, with the year-1 loss carried forward.
    taxable = m.ebitda_usd - m.tax_depreciation_usd - m.interest_usd
    year1 = taxable.iloc[:13].sum()
    assert year1 < 0 and m.tax_usd.iloc[:13].sum() == 0
    assert m.tax_usd.sum() == pytest.approx(0.25 * taxable.sum(), rel=1e-12)


def test_book_life_moves_profit_not_cash_under_macrs():
    # (an LTV cap against book value would size the debt by the book life: left out here)
    base = load_scenario(
        SCENARIOS / "deepseek-r1-gb200-nvl72-macrs.toml", {"financing.max_ltv": None}
    )
    lives = [base.model_copy(update={"name": f"L{life}"}) for life in (4, 5, 6)]
    lives = [
        validate_dict(
            apply_overrides(
                s.model_dump(mode="json", exclude={"sources"}), {"depreciation.life_years": life}
            )
        )
        for s, life in zip(lives, (4, 5, 6), strict=True)
    ]
    result = project([s.model_copy(update={"name": f"L{i}"}) for i, s in enumerate(lives)])
    s = result.summary
    assert s.npv_usd.nunique() == 1 or np.ptp(s.npv_usd.astype(float)) < 1e-6
    assert np.ptp(s.lcot_usd_per_mtok.astype(float)) < 1e-12
    assert np.ptp(s.net_income_usd_total.astype(float)) < 1e-6
    first_year = result.annual.xs(1, level="year")
    assert first_year.depreciation_usd.iloc[0] > first_year.depreciation_usd.iloc[2]


def test_sale_at_a_price_books_a_gain_and_recapture():
    scenario = small(
        **{
            "depreciation.life_years": 3.0,
            "depreciation.sale_value_share": 0.1,
            "fleet.retire_month": 24,
        }
    )
    m = project(scenario).monthly.loc["small"]
    carrying = 10000.0 * (1 - 24 / 36)
    assert m.disposal_usd.iloc[24] == pytest.approx(1000.0)
    proj = project(scenario)
    assert proj.lines["gain_on_disposal_usd"][0, 24] == pytest.approx(1000.0 - carrying)
    assert m.depreciation_usd.iloc[25:].sum() == 0.0
    # capex = depreciation + carrying amount sold (book identity at disposal)
    assert m.depreciation_usd.sum() + carrying == pytest.approx(10000.0)


def test_impairment_when_token_prices_collapse():
    scenario = small(
        **{
            "market.price_decline_annual": 0.9,
            "market.price_usd_per_mtok": 1.0,
            "depreciation.life_years": 3.0,
            "depreciation.impairment": {"price_drop_threshold": 0.5, "standard": "us_gaap"},
        }
    )
    result = project(scenario)
    m = result.monthly.loc["small"]
    loss = result.summary.iloc[0].impairment_usd_total
    assert loss > 0
    assert any(w.startswith("impaired in month") for w in result.warnings[0])
    # Every dollar of cost is depreciated, impaired or sold.
    total = m.depreciation_usd.sum() + m.impairment_usd.sum() + m.disposal_usd.sum()
    assert total == pytest.approx(10000.0, rel=1e-9)
    # Impairment is not deductible when booked: cash tax uses the tax schedule.
    assert m.tax_depreciation_usd.sum() == pytest.approx(10000.0)


def test_capital_stack_scenario():
    stack = load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml")
    equity_only = validate_dict(
        apply_overrides(
            stack.model_dump(mode="json", exclude={"sources"}),
            {"financing.tranches": [], "name": "all equity"},
        )
    )
    result = project([stack, equity_only])
    s = result.summary
    # The levelized cost is at the cost of capital: financing does not change it.
    assert s.lcot_usd_per_mtok.iloc[0] == pytest.approx(s.lcot_usd_per_mtok.iloc[1], rel=1e-12)
    m = result.monthly.loc[stack.name]
    assert m.debt_balance_usd.iloc[-1] == pytest.approx(0.0, abs=1e-6)
    drawn = s.debt_usd.iloc[0]
    assert drawn == pytest.approx((0.55 + 0.20 + 0.10) * s.capex_usd_total.iloc[0], rel=1e-9)
    assert s.covenant_breach_months.iloc[0] >= 1
    assert s.wacc_after_tax_annual.iloc[0] is not None
    assert s.irr_equity_annual.iloc[1] == pytest.approx(s.irr_project_annual.iloc[1], rel=1e-9)


def test_debt_and_tranches_are_exclusive():
    from econ.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="give the debt either as debt_share"):
        small(
            **{
                "financing.debt_share": 0.5,
                "financing.tranches": [
                    {
                        "type": "senior_notes",
                        "name": "n",
                        "share_of_capex": 0.2,
                        "coupon_annual": 0.09,
                        "maturity_month": 24,
                    }
                ],
            }
        )


@pytest.mark.parametrize("quote", ["nominal", "effective"])
@pytest.mark.parametrize("term", [6, 12, 48])
def test_closed_form_loan_equals_the_general_stack(monkeypatch, quote, term):
    import econ.engine as engine

    scenarios = [
        small(**{"financing.debt_share": share, "financing.debt_rate_annual": 0.11,
                 "financing.debt_rate_quote": quote, "financing.debt_term_months": term,
                 "name": f"s{share}"})
        for share in (0.0, 0.3, 0.8)
    ]
    fast = project(scenarios)
    monkeypatch.setattr(engine, "FAST_SINGLE_LOAN", False)
    general = project(scenarios)
    for key in fast.lines:
        assert np.allclose(fast.lines[key], general.lines[key], rtol=1e-9, atol=1e-6, equal_nan=True), key
    for key in fast.metrics:
        assert np.allclose(fast.metrics[key], general.metrics[key], rtol=1e-9, atol=1e-9, equal_nan=True), key
    assert fast.warnings == general.warnings
