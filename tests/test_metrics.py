"""econ.metrics: discounting, levelized cost, payback and break-even price, against published
values (Microsoft's NPV examples, the capital recovery factor of engineering-economics tables)
and the invariants of DESIGN.md §6 (LCOT x PV(tokens) = PV(costs))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from econ import metrics, tax


def yearly(values, years):
    """Values at months 0, 12, 24, ... of a (1, 12 * years + 1) grid, 0 elsewhere."""
    out = np.zeros((1, 12 * years + 1))
    out[0, ::12][: len(values)] = values
    return out


def test_npv_of_microsoft_example_one():
    # Excel NPV documentation: rate 10%, -10,000 a year from today, then 3,000, 4,200, 6,800:
    # NPV = 1,188.44. Discounting yearly flows monthly at (1 + r)^(1/12) - 1 is exact at years.
    flows = yearly([0.0, -10_000.0, 3_000.0, 4_200.0, 6_800.0], 4)
    factors = metrics.discount_factors(np.array([0.10]), np.arange(flows.shape[1]))
    assert metrics.present_value(flows, factors)[0] == pytest.approx(1_188.44, abs=0.005)


def test_npv_of_microsoft_example_two():
    # Excel NPV documentation: rate 8%, -40,000 today, 8,000 ... 14,500 over five years: 1,922.06;
    # with -9,000 in year 6: -3,749.47.
    flows = yearly([-40_000.0, 8_000.0, 9_200.0, 10_000.0, 12_000.0, 14_500.0, -9_000.0], 6)
    factors = metrics.discount_factors(np.array([0.08]), np.arange(flows.shape[1]))
    assert metrics.present_value(flows, factors)[0] == pytest.approx(-3_749.47, abs=0.005)
    flows[0, 72] = 0.0
    assert metrics.present_value(flows, factors)[0] == pytest.approx(1_922.06, abs=0.005)


def test_factors_are_zero_outside_active_months_and_one_at_month_zero():
    months = np.arange(25)
    active = months[None, :] <= np.array([[12], [24]])
    factors = metrics.discount_factors(np.array([0.12, 0.0]), months, active)
    assert factors[:, 0].tolist() == [1.0, 1.0]
    assert np.all(factors[0, 13:] == 0.0) and np.all(factors[1] == 1.0)
    assert factors[0, 12] == pytest.approx(1 / 1.12, rel=1e-14)


def test_levelized_cost_of_a_capital_cost_is_its_capital_recovery_annuity():
    # A cost K at time 0 and Q units a year for n years: LCOx = K * CRF(i, n) / Q, with the
    # capital recovery factor CRF = i (1 + i)^n / ((1 + i)^n - 1) (NREL, Simple LCOE Calculator
    # documentation); (A/P, 10%, 20) = 0.11746 in engineering-economics interest tables
    # (Park, Contemporary Engineering Economics, appendix).
    tokens = yearly([0.0] + [1e6] * 20, 20)
    factors = metrics.discount_factors(np.array([0.10]), np.arange(tokens.shape[1]))
    total, parts = metrics.levelized_cost(
        {"capex": np.array([1_000.0])}, metrics.present_value(tokens, factors)
    )
    assert total[0] == pytest.approx(117.46, abs=0.005)
    assert parts["capex"][0] == total[0]


def test_levelized_cost_is_nan_without_tokens():
    total, parts = metrics.levelized_cost({"a": np.array([5.0, 5.0])}, np.array([0.0, 2e6]))
    assert np.isnan(total[0]) and np.isnan(parts["a"][0])
    assert total[1] == pytest.approx(2.5)


def test_a_cost_per_token_is_nan_where_the_token_count_overflowed():
    # A gain of +1e308 overflows the tokens to inf: the cost per token is unknown, not 0.
    total, _ = metrics.levelized_cost({"a": np.array([5.0, 5.0])}, np.array([np.inf, 2e6]))
    assert np.isnan(total[0]) and total[1] == pytest.approx(2.5)
    out = metrics.cost_usd_per_mtok(np.array([3.0, 3.0]), np.array([np.inf, 2e6]))
    assert np.isnan(out[0]) and out[1] == 1.5


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    rate=st.floats(-0.5, 2.0),
)
def test_lcot_times_pv_tokens_is_pv_costs(seed, rate):
    rng = np.random.default_rng(seed)
    tokens = rng.uniform(0, 1e9, (3, 25))
    costs = {k: rng.uniform(-1e3, 1e5, (3, 25)) for k in ("a", "b", "c")}
    factors = metrics.discount_factors(np.full(3, rate), np.arange(25))
    pv_tokens = metrics.present_value(tokens, factors)
    pvs = {k: metrics.present_value(v, factors) for k, v in costs.items()}
    total, parts = metrics.levelized_cost(pvs, pv_tokens)
    assert np.allclose(total * pv_tokens / 1e6, sum(pvs.values()), rtol=1e-10, atol=1e-6)
    assert np.allclose(sum(parts.values()), total, rtol=1e-12)


def test_cost_per_mtok():
    out = metrics.cost_usd_per_mtok(np.array([3.0, 1.0]), np.array([2e6, 0.0]))
    assert out[0] == 1.5 and np.isnan(out[1])


def test_payback_interpolates_within_the_month():
    # -100, then +30 a month: cumulative -70, -40, -10, +20: paid back a third into month 4.
    flows = np.array([[-100.0, 30.0, 30.0, 30.0, 30.0, 30.0], [-100.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    active = np.ones_like(flows, dtype=bool)
    out = metrics.payback(flows, active)
    assert out.months[0] == pytest.approx(3 + 10 / 30)
    assert np.isnan(out.months[1])
    assert np.isnan(out.undone_month).all()  # recovered for good, or never


def test_payback_ignores_months_after_the_horizon():
    flows = np.array([[-100.0, 30.0, 30.0, 30.0, 300.0]])
    active = np.arange(5)[None, :] <= 3
    assert np.isnan(metrics.payback(flows, active).months[0])


def test_a_payback_undone_by_the_horizon_is_said():
    # A browser review: payback 42.7 months, but the cumulative cash peaked at month 54 and ended
    # the horizon at -78,752 USD. By hand: -100, +30 x 4 (cumulative -70, -40, -10, +20, +50),
    # then -40 and -40: +10 in month 6, -30 from month 7 to the end. A dip that recovers (row 2)
    # and a payback in the last month (row 3) are not undone.
    flows = np.array(
        [
            [-100.0, 30.0, 30.0, 30.0, 30.0, 30.0, -40.0, -40.0],
            [-100.0, 60.0, 60.0, -30.0, -30.0, 60.0, 0.0, 0.0],
            [-100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0],
        ]
    )
    out = metrics.payback(flows, np.ones_like(flows, dtype=bool))
    assert out.months[0] == pytest.approx(3 + 10 / 30)
    assert out.undone_month[0] == 7 and out.cumulative_end_usd[0] == -30.0
    assert np.isnan(out.undone_month[1]) and out.cumulative_end_usd[1] == 20.0
    assert out.months[2] == 7.0 and np.isnan(out.undone_month[2])


@settings(max_examples=200, deadline=None)
@given(
    flows=hnp.arrays(
        np.float64, (4, 13), elements=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
    )
)
def test_an_undone_payback_is_a_run_below_zero_to_the_end(flows):
    out = metrics.payback(flows, np.ones_like(flows, dtype=bool))
    cumulative = np.cumsum(flows, axis=1)
    for i in range(len(flows)):
        if np.isnan(out.undone_month[i]):
            assert np.isnan(out.months[i]) or cumulative[i, -1] >= -0.005
            continue
        m = int(out.undone_month[i])
        assert not np.isnan(out.months[i]) and cumulative[i, m - 1] >= -1e-6
        assert (cumulative[i, m:] < 1e-6).all() and cumulative[i, -1] < -0.005 + 1e-6


def npv_after_tax(price, fixed, units, deductions, rate, last, capital, factors, schedule):
    """NPV after tax the engine's way: yearly tax with losses carried forward, paid on the
    scenario's schedule (quarterly, annual or monthly; none before the first taxable income)."""
    revenue = fixed + price[:, None] * units
    taxable = revenue - deductions
    due = tax.tax_with_loss_carryforward(tax.annual_sums(taxable), rate)
    paid = tax.tax_payments_usd(
        due, tax.first_taxable_month(taxable), last, taxable.shape[1], schedule
    )
    return metrics.present_value(revenue + capital - paid, factors)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), rate=st.floats(0.0, 0.4), code=st.sampled_from([0, 1, 2]))
def test_breakeven_price_zeroes_npv_after_tax(seed, rate, code):
    rng = np.random.default_rng(seed)
    n, months = 4, 37
    last = np.full(n, months - 1)
    m = np.arange(months)
    fixed = np.where(m >= 1, -rng.uniform(0, 2e3, (n, months)), 0.0)
    units = np.where(m >= 1, rng.uniform(1, 100, (n, months)), 0.0)
    deductions = np.where(m >= 1, rng.uniform(0, 3e3, (n, months)), 0.0)
    capital = np.where(m == 0, -rng.uniform(1e4, 1e5, (n, 1)), 0.0)
    tax_rate = np.full(n, rate)
    factors = metrics.discount_factors(np.full(n, 0.1), m)
    schedule = np.full(n, code)
    price = metrics.breakeven_price_usd_per_mtok(
        fixed, units, deductions, tax_rate, last, capital, factors, schedule
    )
    assert np.all(price > 0)
    args = (fixed, units, deductions, tax_rate, last, capital, factors, schedule)
    npv = npv_after_tax(price, *args)
    assert np.allclose(npv, 0.0, atol=1e-6 * np.abs(capital).sum(axis=1))
    # a cent above the break-even the NPV is positive
    assert np.all(npv_after_tax(price + 0.01, *args) > 0)


def test_breakeven_price_is_nan_when_price_moves_nothing():
    zeros = np.zeros((1, 13))
    price = metrics.breakeven_price_usd_per_mtok(
        zeros, zeros, zeros, np.array([0.2]), np.array([12]), zeros, np.ones((1, 13))
    )
    assert np.isnan(price[0])


def test_breakeven_without_tax_is_the_pre_tax_ratio():
    m = np.arange(13)
    units = np.where(m >= 1, 10.0, 0.0)[None, :]
    capital = np.where(m == 0, -1200.0, 0.0)[None, :]
    zeros = np.zeros_like(units)
    price = metrics.breakeven_price_usd_per_mtok(
        zeros, units, zeros, np.array([0.0]), np.array([12]), capital, np.ones((1, 13))
    )
    assert price[0] == pytest.approx(10.0)
