"""econ.tax.LinearTaxValue: the present value of tax on A + p B without monthly ledgers.

The break-even solver evaluates it instead of `tax_payments_usd` month by month; both must give
the same present value of the tax paid at every price, on every payment schedule.
"""

import numpy as np
import pytest

from econ import tax
from econ.metrics import discount_factors


def _case(seed, n=400, months=73):
    rng = np.random.default_rng(seed)
    fixed = rng.normal(-2e4, 5e4, (n, months))
    fixed[:, 0] = -rng.uniform(1e5, 2e6, n)  # month 0: the deductions of the purchase
    per_unit = rng.uniform(0, 3e3, (n, months))
    per_unit[rng.random((n, months)) < 0.1] = 0.0  # months without token sales
    last = rng.integers(1, months, n)
    m = np.arange(months)[None, :]
    fixed, per_unit = np.where(m <= last[:, None], fixed, 0), np.where(m <= last[:, None], per_unit, 0)
    rate = rng.uniform(0, 0.4, n)
    schedule = rng.integers(0, len(tax.TAX_PAYMENTS), n)
    discount = discount_factors(rng.uniform(-0.2, 0.5, n), np.arange(months))
    return fixed, per_unit, rate, last, discount, schedule


def _monthly(fixed, per_unit, rate, last, discount, schedule, p):
    taxable = fixed + p[:, None] * per_unit
    due = tax.tax_with_loss_carryforward(tax.annual_sums(taxable), rate)
    paid = tax.tax_payments_usd(
        due, tax.first_taxable_month(taxable), last, fixed.shape[1], schedule
    )
    return np.einsum("ij,ij->i", paid, discount)


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_monthly_tax_payments(seed):
    case = _case(seed)
    value = tax.LinearTaxValue(*case)
    rows = np.arange(len(case[0]))
    for p in (-5.0, 0.0, 3.0, 40.0, 400.0, 1e4):
        price = np.full(rows.size, p) * np.random.default_rng(seed).uniform(0.5, 1.5, rows.size)
        expected = _monthly(*case, price)
        got = value(price, rows)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-6)


def test_rows_subset_and_first_taxable_month():
    fixed, per_unit, rate, last, discount, schedule = _case(11)
    value = tax.LinearTaxValue(fixed, per_unit, rate, last, discount, schedule)
    rows = np.arange(3, 300, 7)
    p = np.linspace(0, 80, rows.size)
    np.testing.assert_array_equal(
        value.first_taxable(p, rows),
        tax.first_taxable_month(fixed[rows] + p[:, None] * per_unit[rows]),
    )
    np.testing.assert_allclose(
        value(p, rows),
        _monthly(fixed[rows], per_unit[rows], rate[rows], last[rows], discount[rows],
                 schedule[rows], p),
        rtol=1e-11, atol=1e-6,
    )


def test_a_hand_computed_year():
    """One year of 12 months, 100 USD taxable a month from p = 1 with A = 0, B = 100; 25% tax,
    quarterly: 300 USD due, paid in four equal required installments of 25% each (IRC §6655(d):
    75 USD due in months 4, 6, 9 and 12, IRC §6655(c)); undiscounted PV = 300."""
    months = 13
    fixed = np.zeros((1, months))
    per_unit = np.r_[0.0, np.full(12, 100.0)][None, :]
    value = tax.LinearTaxValue(fixed, per_unit, [0.25], [12], np.ones((1, months)), [0])
    assert value(np.array([1.0]), np.array([0]))[0] == pytest.approx(300.0)
    # Discounted at 1% a month: 75 (1.01^-4 + 1.01^-6 + 1.01^-9 + 1.01^-12).
    d = 1.01 ** -np.arange(months)[None, :]
    value = tax.LinearTaxValue(fixed, per_unit, [0.25], [12], d, [0])
    expected = 75 * sum(1.01**-k for k in (4, 6, 9, 12))
    assert value(np.array([1.0]), np.array([0]))[0] == pytest.approx(expected, rel=1e-14)


def test_increasing_in_the_price():
    case = _case(3)
    value = tax.LinearTaxValue(*case)
    rows = np.arange(len(case[0]))
    low, high = value(np.full(rows.size, 10.0), rows), value(np.full(rows.size, 11.0), rows)
    # More taxable income never lowers the tax due; its timing can only move earlier.
    undiscounted = tax.LinearTaxValue(*case[:4], np.ones_like(case[4]), case[5])
    assert np.all(undiscounted(np.full(rows.size, 11.0), rows)
                  >= undiscounted(np.full(rows.size, 10.0), rows) - 1e-9)
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high))


def test_negative_per_unit_rows_are_flagged():
    fixed, per_unit, rate, last, discount, schedule = _case(5, n=4)
    per_unit[2, 5] = -1.0
    value = tax.LinearTaxValue(fixed, per_unit, rate, last, discount, schedule)
    assert value.usable.tolist() == [True, True, False, True]


def test_breakeven_falls_back_to_monthly_tax_where_token_revenue_is_negative():
    """Rows with a negative revenue month take the month-by-month path; both paths give the
    same break-even where the negative month is negligible."""
    from econ.metrics import breakeven_price_usd_per_mtok

    fixed, per_unit, rate, last, discount, schedule = _case(21, n=60)
    n, months = fixed.shape
    capital = np.zeros((n, months))
    capital[:, 0] = -np.random.default_rng(3).uniform(1e6, 5e6, n)
    args = dict(tax_rate=rate, last_month=last, capital=capital, discount=discount,
                tax_payment=schedule)
    per_unit[:, 0] = 0.0  # no token sales in the purchase month
    fast = breakeven_price_usd_per_mtok(fixed, per_unit, np.zeros((n, months)), **args)
    bent = per_unit.copy()
    bent[:, 0] = -1e-300  # unusable for the yearly evaluation, no effect on the figures
    assert not tax.LinearTaxValue(fixed, bent, rate, last, discount, schedule).usable.any()
    slow = breakeven_price_usd_per_mtok(fixed, bent, np.zeros((n, months)), **args)
    assert np.isfinite(fast).sum() > n // 2
    np.testing.assert_allclose(slow, fast, rtol=1e-9, equal_nan=True)


@pytest.mark.parametrize("shape", [(300, 7, 12), (5, 1, 12), (4, 3, 1)])
def test_suffix_sums_are_the_reversed_cumsum_bit_for_bit(shape):
    rng = np.random.default_rng(sum(shape))
    blocks = rng.uniform(0, 1e6, shape) * (rng.random(shape) > 0.3)  # zeros as in the weights
    expected = np.zeros(shape[:-1] + (shape[-1] + 1,))
    expected[..., :-1] = np.cumsum(blocks[..., ::-1], axis=-1)[..., ::-1]
    got = tax._suffix_sums(blocks)
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)
    assert (got[..., -1] == 0).all()


@pytest.mark.parametrize("schedule", range(len(tax.TAX_PAYMENTS)))
def test_a_batch_sharing_horizon_and_schedule_values_each_row_alike(schedule):
    """Rows with one horizon and one payment schedule share their payment weights (computed
    once): each row's value is the one it has in a batch whose horizons differ, bit for bit, and
    the monthly payments' present value."""
    fixed, per_unit, rate, _, discount, _ = _case(20 + schedule, n=60)
    months = fixed.shape[1]
    last, code = np.full(60, months - 1), np.full(60, schedule)
    shared = tax.LinearTaxValue(fixed, per_unit, rate, last, discount, code)
    mixed_last = np.r_[last[:-1], months - 13]  # one row ends a year early: no shared weights
    mixed = tax.LinearTaxValue(fixed, per_unit, rate, mixed_last, discount, code)
    rows = np.arange(59)
    for p in (0.0, 3.0, 40.0, 1e4):
        price = np.full(rows.size, p)
        assert np.array_equal(shared(price, rows), mixed(price, rows))
        monthly = _monthly(*(x[rows] for x in (fixed, per_unit, rate, last, discount, code)), price)
        np.testing.assert_allclose(shared(price, rows), monthly, rtol=1e-11, atol=1e-6)
