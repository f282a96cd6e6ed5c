"""Tests of econ.deferred_tax: the seed case's book-tax difference against the IRS table,
the ASC 740 identities (balance = rate x temporary difference; total tax expense = rate x book
income with losses carried forward), disposal and impairment, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import deferred_tax as dt
from econ import depreciation as dep
from econ import tax
from econ.catalog import macrs_gds_tables
from econ.deferred_tax import DeferredTaxError
from econ.errors import InputError

TABLES = macrs_gds_tables()

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_seed_case_straight_line_six_years_against_macrs_five_years():
    # One GB200 NVL72 rack, capex 3,535,600 USD: book straight line over 6 years (SLN = 589,266.67
    # a year), tax MACRS 5-year half-year (IRS Pub 946 Table A-1: 20.00%, 32.00%, ...), 21%.
    cost, m = 3_535_600.0, np.arange(73)
    book = dep.straight_line([cost], [0.0], [6.0], m)
    taxd = dep.macrs_gds([cost], m, 5, "half-year", tables=TABLES)
    out = dt.deferred_tax(book, taxd, 0.21)
    year_ends = out.liability_usd[0, [12, 24, 36, 48, 60, 72]]
    table = np.array([20.00, 32.00, 19.20, 11.52, 11.52, 5.76]) / 100
    expected = 0.21 * np.cumsum(cost * table - cost / 6)
    np.testing.assert_allclose(year_ends, expected, atol=1e-6)
    assert year_ends[0] == pytest.approx(24_749.20, abs=0.01)
    assert year_ends[-1] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(out.expense_usd.sum(axis=1), out.liability_usd[:, -1], atol=1e-6)


def test_full_bonus_creates_the_liability_in_the_first_month():
    cost, m = 1_000_000.0, np.arange(61)
    book = dep.straight_line([cost], [0.0], [5.0], m)
    taxd = dep.macrs_gds([cost], m, 5, "half-year", 1.0, tables=TABLES)
    out = dt.deferred_tax(book, taxd, 0.21)
    assert out.liability_usd[0, 1] == pytest.approx(0.21 * (cost - cost / 60))
    assert out.expense_usd[0, 2] == pytest.approx(-0.21 * cost / 60)


@given(
    rate=st.floats(0.0, 0.6),
    book_method=st.sampled_from(["straight_line", "sum_of_years_digits", "declining_balance"]),
    years=st.sampled_from([3, 5, 7]),
    bonus=st.floats(0, 1),
    life=st.floats(2.0, 8.0),
)
@SETTINGS
def test_balance_is_rate_times_cumulative_tax_less_book(rate, book_method, years, bonus, life):
    m = np.arange(120)
    book = dep.schedule(
        dep.MethodSettings(method=book_method, life_years=life), [1e6], m, tables=TABLES
    )
    taxd = dep.macrs_gds([1e6], m, years, "half-year", bonus, tables=TABLES)
    out = dt.deferred_tax(book, taxd, rate)
    np.testing.assert_allclose(out.liability_usd, rate * np.cumsum(taxd - book, axis=1), atol=1e-6)
    np.testing.assert_allclose(np.cumsum(out.expense_usd, axis=1), out.liability_usd, atol=1e-6)
    # Both schedules recover the whole cost: the temporary difference reverses completely.
    assert out.liability_usd[0, -1] == pytest.approx(0.0, abs=1e-6)


@given(
    retire=st.integers(1, 70),
    sale=st.floats(0, 2e6),
    rate=st.floats(0.0, 0.5),
)
@SETTINGS
def test_disposal_reverses_the_temporary_difference(retire, sale, rate):
    m = np.arange(80)
    cost = [1e6]
    book = dep.dispose(dep.straight_line(cost, [1e5], [6.0], m), cost, m, [retire], [sale])
    taxd = dep.dispose(dep.macrs_gds(cost, m, 5, tables=TABLES), cost, m, [retire], [sale])
    out = dt.deferred_tax(
        book.depreciation_usd,
        taxd.depreciation_usd,
        rate,
        book_gain_usd=book.gain_usd,
        tax_gain_usd=taxd.gain_usd,
    )
    before = out.temporary_difference_usd[0, retire - 1]
    carrying = 1e6 - book.depreciation_usd[0, :retire].sum()
    basis = 1e6 - taxd.depreciation_usd[0, :retire].sum()
    assert before == pytest.approx(carrying - basis, abs=1e-6)
    assert out.liability_usd[0, retire:] == pytest.approx(np.zeros(80 - retire), abs=1e-6)


def test_impairment_is_a_deductible_temporary_difference():
    m = np.arange(25)
    book = dep.straight_line([1200.0], [0.0], [2.0], m)
    impairment = np.zeros((1, 25))
    impairment[0, 6] = 300.0
    out = dt.deferred_tax(book, book, 0.25, impairment_usd=impairment)
    assert out.liability_usd[0, 6] == pytest.approx(-75.0)  # a deferred tax asset
    assert out.expense_usd[0, 6] == pytest.approx(-75.0)


@given(
    ebitda=st.lists(st.floats(-3e5, 6e5), min_size=6, max_size=6),
    rate=st.floats(0.05, 0.4),
    bonus=st.floats(0, 1),
)
@SETTINGS
def test_total_tax_expense_is_rate_times_book_income(ebitda, rate, bonus):
    # ASC 740: current tax (losses carried forward, econ.tax) + deferred tax on the depreciation
    # difference - the change in the loss carryforward asset = rate x book pre-tax income.
    m = np.arange(73)
    monthly_ebitda = np.zeros((1, 73))
    for year, value in enumerate(ebitda):
        monthly_ebitda[0, 1 + 12 * year : 13 + 12 * year] = value / 12
    book = dep.straight_line([1e6], [0.0], [6.0], m)
    taxd = dep.macrs_gds([1e6], m, 5, "half-year", bonus, tables=TABLES)
    taxable = tax.annual_sums(monthly_ebitda - taxd)
    book_income = tax.annual_sums(monthly_ebitda - book)
    current = tax.tax_with_loss_carryforward(taxable, [rate])
    deferred = tax.annual_sums(dt.deferred_tax(book, taxd, rate).expense_usd)
    nol = dt.loss_carryforward_usd(taxable)
    nol_asset_change = rate * np.diff(nol, axis=1, prepend=0.0)
    np.testing.assert_allclose(current + deferred - nol_asset_change, rate * book_income, atol=1e-4)


def test_loss_carryforward_balance():
    taxable = np.array([[-100.0, 30.0, 50.0, 40.0, -10.0, 5.0]])
    np.testing.assert_allclose(dt.loss_carryforward_usd(taxable), [[100, 70, 20, 0, 10, 5]])


def test_bad_input():
    x = np.zeros((2, 5))
    with pytest.raises(DeferredTaxError, match=r"tax_rate = 1: expected a rate") as info:
        dt.deferred_tax(x, x, 1.0)
    assert isinstance(info.value, InputError)
    with pytest.raises(DeferredTaxError, match=r"shape \(2, 5\)"):
        dt.deferred_tax(x, np.zeros((2, 4)), 0.2)
    with pytest.raises(DeferredTaxError, match="both book_gain_usd and tax_gain_usd"):
        dt.deferred_tax(x, x, 0.2, book_gain_usd=x)
    with pytest.raises(DeferredTaxError, match="finite"):
        dt.deferred_tax(x, np.full((2, 5), np.nan), 0.2)
    with pytest.raises(DeferredTaxError, match="one rate per scenario"):
        dt.deferred_tax(x, x, [0.1, 0.2, 0.3])
    with pytest.raises(DeferredTaxError, match=r"array \(n, Y\)"):
        dt.loss_carryforward_usd([1.0, 2.0])
