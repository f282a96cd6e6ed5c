"""The US limit on using carried losses: a year's deduction for losses carried forward is at most
80% of its taxable income (IRC §172(a)(2)(B)(ii), for losses arising in tax years after 2017;
the instructions for Form 1120, line 29a). `financing.tax_loss_limit` sets the share.

Reference values are worked by hand from the statute; the properties hold for any limit, and the
engine's lines (tax paid, current tax, the breakeven price) follow the same rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from econ import ScenarioBatch, load_scenario, project, tax
from econ.deferred_tax import deferred_tax_with_losses, loss_carryforward_usd
from econ.errors import InputError
from econ.metrics import discount_factors
from econ.scenario import validate_dict
from tests.conftest import ROOT

MACRS_SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml"


def _by_hand(annual, limit):
    """The statute's rule year by year, in plain Python: used = min(losses, limit x income)."""
    unused, taxed = 0.0, []
    for income in annual:
        used = min(unused, limit * max(income, 0.0))
        taxed.append(max(income, 0.0) - used)
        unused += max(-income, 0.0) - used
    return taxed, unused


def test_reference_value_worked_by_hand():
    # A loss of 100, then income of 60 and 80: with the 80% limit 48 of the 60 is offset (12
    # taxed), and the 52 left offsets all but 28 of the 80 (80% of 80 is 64 > 52).
    annual = np.array([[-100.0, 60.0, 80.0]])
    due = tax.tax_with_loss_carryforward(annual, [0.21], [0.8])
    np.testing.assert_allclose(due, [[0.0, 0.21 * 12, 0.21 * 28]], rtol=1e-15)
    # Without the limit the 100 absorbs the 60 and 40 of the 80.
    np.testing.assert_allclose(tax.tax_with_loss_carryforward(annual, [0.21]), [[0, 0, 8.4]])
    np.testing.assert_allclose(loss_carryforward_usd(annual, [0.8]), [[100.0, 52.0, 0.0]])


def _random_years(seed, n=500, years=8):
    rng = np.random.default_rng(seed)
    annual = rng.normal(0.0, 1e5, (n, years))
    annual[:, 0] -= rng.uniform(0, 5e5, n)  # the purchase year's deductions
    return annual, rng.uniform(0.05, 1.0, n)


@pytest.mark.parametrize("seed", range(4))
def test_matches_the_rule_year_by_year(seed):
    annual, limit = _random_years(seed)
    taxed = tax.income_taxed_to_date_usd(annual, limit)
    unused = loss_carryforward_usd(annual, limit)
    for i in range(0, len(annual), 37):
        expected, left = _by_hand(annual[i].tolist(), limit[i])
        np.testing.assert_allclose(taxed[i], np.cumsum(expected), rtol=1e-12, atol=1e-6)
        assert unused[i, -1] == pytest.approx(left, rel=1e-12, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_properties_of_the_limit(seed):
    annual, limit = _random_years(seed)
    rate = np.full(len(annual), 0.21)
    free = tax.tax_with_loss_carryforward(annual, rate)
    limited = tax.tax_with_loss_carryforward(annual, rate, limit)
    # Tax is never negative, and the limit never lowers the tax of any year to date.
    assert (limited >= -1e-9).all()
    assert (np.cumsum(limited, axis=1) >= np.cumsum(free, axis=1) - 1e-6).all()
    # At least the share the losses may not offset is taxed in every profitable year.
    floor = rate[:, None] * (1 - limit[:, None]) * np.maximum(annual, 0.0)
    assert (limited >= floor - 1e-6).all()
    # Losses are only deferred, never lost: income taxed = cumulative income + losses left.
    taxed = tax.income_taxed_to_date_usd(annual, limit)
    left = loss_carryforward_usd(annual, limit)
    np.testing.assert_allclose(taxed, np.cumsum(annual, axis=1) + left, rtol=1e-12, atol=1e-6)
    assert (left >= -1e-6).all()
    # A tighter limit taxes more (the limits halved).
    tighter = tax.tax_with_loss_carryforward(annual, rate, limit / 2)
    assert (tighter.sum(axis=1) >= limited.sum(axis=1) - 1e-6).all()


def test_a_limit_of_one_is_the_closed_form_exactly():
    annual, _ = _random_years(9)
    ones = np.ones(len(annual))
    np.testing.assert_array_equal(
        tax.income_taxed_to_date_usd(annual, ones), tax.income_taxed_to_date_usd(annual)
    )
    # and the year-by-year rule at 1 agrees with it
    for i in range(0, len(annual), 50):
        expected, _ = _by_hand(annual[i].tolist(), 1.0)
        np.testing.assert_allclose(
            tax.income_taxed_to_date_usd(annual[i : i + 1])[0],
            np.cumsum(expected),
            rtol=1e-12,
            atol=1e-6,
        )


def test_tax_of_a_year_still_behind_on_its_losses_is_paid():
    # Year 1 loses 1,200; year 2 earns 600 (cumulative still -600): with the limit 120 of it is
    # taxed, so the first taxable month is in year 2 and its installments pay the tax.
    monthly = np.zeros((1, 37))
    monthly[0, 1:13] = -100.0
    monthly[0, 13:25] = 50.0
    assert tax.first_taxable_month(monthly)[0] == 37  # no month with cumulative income > 0
    assert tax.first_taxable_month(monthly, [0.8])[0] == 13
    due = tax.tax_with_loss_carryforward(tax.annual_sums(monthly), [0.25], [0.8])
    assert due[0, 1] == pytest.approx(0.25 * 120)
    for schedule in range(len(tax.TAX_PAYMENTS)):
        paid = tax.tax_payments_usd(due, [13], [36], 37, [schedule])
        assert paid.sum() == pytest.approx(due.sum(), rel=1e-12)
        assert paid[0, :13].sum() == 0


def test_breakeven_tax_value_with_the_limit_equals_the_monthly_payments():
    rng = np.random.default_rng(5)
    n, months = 300, 61
    fixed = rng.normal(-2e4, 5e4, (n, months))
    fixed[:, 0] = -rng.uniform(1e5, 2e6, n)
    per_unit = rng.uniform(0, 3e3, (n, months))
    last = rng.integers(1, months, n)
    m = np.arange(months)[None, :]
    fixed = np.where(m <= last[:, None], fixed, 0.0)
    per_unit = np.where(m <= last[:, None], per_unit, 0.0)
    rate, schedule = rng.uniform(0, 0.4, n), rng.integers(0, len(tax.TAX_PAYMENTS), n)
    limit = np.where(rng.random(n) < 0.7, rng.uniform(0.3, 1.0, n), 1.0)
    discount = discount_factors(rng.uniform(0.0, 0.3, n), np.arange(months))
    value = tax.LinearTaxValue(fixed, per_unit, rate, last, discount, schedule, limit)
    rows = np.arange(n)
    for p in (0.0, 5.0, 40.0, 400.0):
        price = p * rng.uniform(0.5, 1.5, n)
        taxable = fixed + price[:, None] * per_unit
        due = tax.tax_with_loss_carryforward(tax.annual_sums(taxable), rate, limit)
        first = tax.first_taxable_month(taxable, limit)
        np.testing.assert_array_equal(value.first_taxable(price, rows), first)
        paid = tax.tax_payments_usd(due, first, last, months, schedule)
        expected = np.einsum("ij,ij->i", paid, discount)
        np.testing.assert_allclose(value(price, rows), expected, rtol=1e-11, atol=1e-6)


def test_current_tax_expense_sums_to_the_tax_due_with_the_limit():
    annual, limit = _random_years(3, n=50, years=3)
    monthly = np.zeros((50, 37))
    for k in range(3):
        monthly[:, 12 * k + 1 : 12 * k + 13] = annual[:, k : k + 1] / 12
    rate = np.full(50, 0.21)
    current, deferred = deferred_tax_with_losses(monthly, monthly, rate, np.full(50, 36), 0, limit)
    due = tax.tax_with_loss_carryforward(tax.annual_sums(monthly), rate, limit)
    np.testing.assert_allclose(tax.annual_sums(current), due, rtol=1e-10, atol=1e-6)
    # book = taxable: the whole expense is the rate times book income, month by month
    np.testing.assert_allclose(current + deferred.expense_usd, rate[:, None] * monthly, atol=1e-6)


def _macrs_seed(limits):
    seed = load_scenario(MACRS_SEED)
    return project(
        ScenarioBatch.repeat(seed, len(limits), {"financing.tax_loss_limit": np.array(limits)})
    )


def test_engine_the_macrs_seed_under_the_us_limit():
    # Bonus depreciation makes the first year a tax loss; the limit taxes a fifth of the
    # following income while the loss lasts.
    result = _macrs_seed([1.0, 0.8])
    summary = result.summary
    assert summary.npv_usd.iloc[1] < summary.npv_usd.iloc[0] - 1000
    assert summary.breakeven_price_usd_per_mtok.iloc[1] > summary.breakeven_price_usd_per_mtok.iloc[0]
    monthly = result.monthly
    for row, limit in enumerate((1.0, 0.8)):
        lines = monthly.xs(summary.index[row], level="scenario")
        taxable = (
            lines.ebitda_usd - lines.tax_depreciation_usd - lines.interest_usd
            + lines.tax_gain_on_disposal_usd
        ).to_numpy()[None, :]
        expected, _ = _by_hand(tax.annual_sums(taxable)[0].tolist(), limit)
        assert lines.tax_usd.sum() == pytest.approx(0.21 * sum(expected), rel=1e-12)
        assert lines.current_tax_usd.sum() == pytest.approx(0.21 * sum(expected), rel=1e-12)


def test_engine_breakeven_price_zeroes_the_npv_under_the_limit():
    # (a level loan of the given share: a sculpted or sized loan would change with the price)
    data = load_scenario(MACRS_SEED).model_dump(mode="json", exclude={"source_file"})
    data["financing"].update(
        repayment="level_payment", size_to_min_dscr=None, max_ltv=None, tax_loss_limit=0.8
    )
    summary = project(validate_dict(data)).summary.iloc[0]
    data["market"]["price_usd_per_mtok"] = float(summary.breakeven_price_usd_per_mtok)
    at_breakeven = project(validate_dict(data)).summary.iloc[0]
    assert abs(at_breakeven.npv_usd) < 1e-6 * summary.capex_usd_total


@pytest.mark.parametrize("value", [0.0, -0.2, 1.5, float("nan"), True])
def test_a_limit_outside_0_to_1_is_refused(value):
    with pytest.raises(InputError, match="financing.tax_loss_limit"):
        validate_dict({"name": "x", "financing": {"tax_loss_limit": value}})


def test_the_allowance_counts_reversals_only_up_to_the_limit():
    # Reference (PwC, Income taxes guide 5.5, Example TX 5-5; Deloitte, Roadmap: Income Taxes
    # 5.3): a loss carried forward of 1,000 and taxable temporary differences of 1,000 that will
    # reverse: under the 80% limit the reversals absorb 800 of the loss, so an allowance of
    # t x 200 stays on the asset; without the limit none.
    months = 13
    book = np.zeros((1, months))
    taxable = np.zeros((1, months))
    taxable[0, 1] = -1000.0  # tax depreciation ahead of book by 1,000: a loss for tax only
    rate = np.array([0.25])
    for limit, allowance in ((None, 0.0), ([0.8], 0.25 * 200.0)):
        _, deferred = deferred_tax_with_losses(book, taxable, rate, [12], 1, limit)
        # liability at the year end: t TD - t NOL + VA = 250 - 250 + VA
        assert deferred.liability_usd[0, 12] == pytest.approx(allowance, abs=1e-9)
