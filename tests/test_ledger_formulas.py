"""The ledger identities the engine composes: opex, token revenue per unit of price, income
before tax, cash flows and net income (econ.opex, econ.market, econ.tax, econ.cashflow)."""

from __future__ import annotations

import numpy as np
import pytest

from econ import cashflow, market, opex, tax
from econ.units import nominal_monthly_rate


def test_opex_of_a_small_site():
    # Staff 5,000 a month; maintenance 2% + insurance 1% a year of 1.2 M USD capex = 3,000 a month;
    # software 10 USD per GPU-month on 72 GPUs = 720.
    open_ = np.array([[False, True, True]])
    serving = np.array([[False, True, False]])
    gpus = np.array([[0.0, 72.0, 0.0]])
    out = opex.opex_usd_per_month(
        np.array([5_000.0]),
        open_,
        np.array([0.02]),
        np.array([0.01]),
        np.array([1.2e6]),
        serving,
        gpus,
        np.array([10.0]),
    )
    assert out[0].tolist() == pytest.approx([0.0, 8_720.0, 5_000.0])


def test_opex_shares_are_charged_as_a_twelfth_a_month():
    out = opex.opex_usd_per_month(
        np.zeros(2), np.ones((2, 2), bool), np.array([0.06, 0.12]), np.zeros(2),
        np.array([100.0, 100.0]), np.ones((2, 2), bool), np.zeros((2, 2)), np.zeros(2),
    )  # fmt: skip
    assert out[:, 1].tolist() == pytest.approx((nominal_monthly_rate([0.06, 0.12]) * 100).tolist())


def test_revenue_per_token_price_follows_the_price_path():
    tokens = np.array([[0.0, 2e6, 2e6], [0.0, 2e6, 2e6]])
    price = np.array([[0.5, 0.5, 0.25], [0.5, 0.5, 0.25]])
    units = market.revenue_per_token_price_usd(
        tokens, price, np.array([0.25, 0.0]), np.array([False, True])
    )
    assert units[0].tolist() == pytest.approx([0.0, 1.5, 0.75])
    assert units[1].tolist() == [0.0, 0.0, 0.0]  # spot sells GPU-hours
    # token revenue = month-1 price x units (revenue_by_source's token line)
    revenue = market.revenue_by_source(tokens, np.ones_like(tokens), np.ones_like(tokens), price,
                                       np.array([0.25, 0.25]), np.zeros(2))["token_usd"]  # fmt: skip
    assert revenue[0] == pytest.approx(0.5 * units[0])


def test_income_before_tax_and_cash_flows():
    ebitda, dep, interest, gain = 1_000.0, 300.0, 100.0, 50.0
    assert tax.income_before_tax_usd(ebitda, dep, interest, gain) == 650.0
    project = cashflow.project_cash_flow_usd(ebitda, 2_000.0, 400.0, 136.5)
    assert project == pytest.approx(1_000 - 2_000 + 400 - 136.5)
    assert cashflow.equity_cash_flow_usd(project, 1_200.0) == pytest.approx(project + 1_200)
    assert cashflow.cash_flow_available_for_debt_service_usd(ebitda, 136.5) == 863.5
    assert cashflow.net_income_usd(650.0, 136.5, 10.0) == 503.5
