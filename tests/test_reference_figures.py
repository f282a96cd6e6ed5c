"""Closed-form reference values for summary figures that were checked only against golden files,
and the two defects that survived the suite (issue 16, section 7)."""

from __future__ import annotations

import numpy as np
import numpy_financial as npf
import pytest

from econ import load_scenario, project
from econ.impairment import ifrs_loss, impair
from tests.conftest import ROOT
from tests.test_capital import DDTL, run
from tests.test_engine import HOURS_PER_MONTH, small

TOKENS_MONTH = 1000.0 * HOURS_PER_MONTH * 3600
POWER_MONTH = 1.0 * 1.2 * HOURS_PER_MONTH * 0.1
COSTS_MONTH = POWER_MONTH + 100.0 + 50.0  # power + colocation + staff
EBITDA_MONTH = TOKENS_MONTH * 2.0 / 1e6 - COSTS_MONTH


def test_ebit_accounting_cost_and_moic_without_debt():
    s = project(small()).summary.iloc[0]
    depreciation = 10000.0  # straight line over the 12-month life, no salvage
    assert s.ebit_usd_total == pytest.approx(12 * EBITDA_MONTH - depreciation, rel=1e-12)
    # Accounting cost: (power + facility + opex + depreciation + interest) / tokens.
    accounting = (12 * COSTS_MONTH + depreciation) / (12 * TOKENS_MONTH) * 1e6
    assert s.accounting_cost_usd_per_mtok == pytest.approx(accounting, rel=1e-12)
    # All equity: distributions over contributions = 12 months of after-tax cash / capex.
    cash = EBITDA_MONTH - 0.25 * (EBITDA_MONTH - depreciation / 12)
    assert s.moic_equity == pytest.approx(12 * cash / 10000.0, rel=1e-12)


def test_cost_of_debt_llcr_and_accounting_cost_with_a_level_loan():
    # 6,000 USD at 12% a year nominal (1% a month) over 12 months, no tax: CFADS = EBITDA.
    scenario = small(
        **{
            "financing.debt_share": 0.6,
            "financing.debt_rate_annual": 0.12,
            "financing.debt_term_months": 12,
            "financing.tax_rate": 0.0,
        }
    )
    s = project(scenario).summary.iloc[0]
    assert s.cost_of_debt_annual == pytest.approx(1.01**12 - 1, rel=1e-12)
    # LLCR_m = EBITDA * a(12 - m) / B_m and B_m = PMT * a(12 - m): every month EBITDA / PMT.
    payment = -npf.pmt(0.01, 12, 6000.0)
    assert s.min_llcr == pytest.approx(EBITDA_MONTH / payment, rel=1e-10)
    interest = 12 * payment - 6000.0
    accounting = (12 * COSTS_MONTH + 10000.0 + interest) / (12 * TOKENS_MONTH) * 1e6
    assert s.accounting_cost_usd_per_mtok == pytest.approx(accounting, rel=1e-12)
    # Equity put in 4,000; it receives EBITDA less debt service each month.
    assert s.moic_equity == pytest.approx(12 * (EBITDA_MONTH - payment) / 4000.0, rel=1e-10)


def test_capital_stack_dilution_is_the_equity_raised_at_its_share_price():
    # Equity funds capex less debt proceeds (55% + 20% + 10%) plus the upfront fees (1.5% of 55%,
    # 1.25% of 20%, 2% of 10%) and the capped call (13% of 10%): 17.575% of capex, issued at the
    # 100 USD reference share price; the convertible does not convert (share price 100 below the
    # 125 USD conversion price), so it adds no shares.
    path = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    s = project(load_scenario(path)).summary.iloc[0]
    equity = (0.15 + 0.015 * 0.55 + 0.0125 * 0.20 + 0.02 * 0.10 + 0.13 * 0.10) * s.capex_usd_total
    assert s.dilution_shares == pytest.approx(equity / 100.0, rel=1e-12)


def test_amortization_is_interest_expense_less_cash_interest_and_commitment_fee():
    # DDTL with a 0.6% commitment fee and a 1% upfront fee: the non-cash part of interest expense
    # is the upfront fee amortized straight line over 48 months (ASU 2015-15); the commitment fee
    # is paid in cash and is not amortization.
    T = 49
    profile = np.zeros((1, T))
    profile[0, [0, 3, 6]] = [0.5, 0.25, 0.25]
    s = run([DDTL], T=T, profile=profile).tranches["ddtl"]
    assert s["commitment_fee_usd"][0, 1:7].sum() > 0
    np.testing.assert_allclose(s["amortization_usd"][0, 1:49], 1.2e4 / 48, rtol=1e-9)
    np.testing.assert_allclose(
        s["amortization_usd"] + s["cash_interest_usd"] + s["commitment_fee_usd"],
        s["interest_expense_usd"],
        rtol=1e-12,
        atol=1e-9,
    )


def test_ifrs_recoverable_amount_subtracts_costs_of_disposal():
    # IAS 36.18: recoverable = max(fair value - costs of disposal, value in use).
    # Carrying 1,000, fair value 800, costs of disposal 50, value in use 700: R = 750, loss 250.
    assert ifrs_loss(1000.0, 800.0 - 50.0, 700.0) == pytest.approx(250.0)
    dep = np.full((1, 10), 100.0)  # cost 1,000 over 10 months: carrying 700 after month 3
    trigger = np.zeros((1, 10), dtype=bool)
    trigger[0, 2] = True
    fair = np.full((1, 10), 560.0)
    in_use = np.full((1, 10), 400.0)
    out = impair(
        dep, [1000.0], [0.0], "ifrs", trigger, fair, value_in_use_usd=in_use,
        costs_of_disposal_usd=[60.0],
    )  # fmt: skip
    # Month 2: carrying 700 against R = max(560 - 60, 400) = 500: loss 200 (80 if the costs were added).
    assert out.impairment_usd[0, 2] == pytest.approx(200.0)
    assert out.carrying_amount_usd[0, 2] == pytest.approx(500.0)
