"""Income tax with net operating losses carried forward, vectorized over scenarios.

Tax years are 12-month blocks from month 1 (months 1-12, 13-24, ...); month 0 joins the first, and
each scenario's last month closes a possibly short final year. Monthly arrays are (n, T) over months
0..T-1; annual arrays are (n, Y).

When the tax is paid is a choice (TAX_PAYMENTS): quarterly estimated payments (IRC §6655, the
default), annual payment after the year ends, or equal monthly parts; in every case nothing is paid
before the first month whose cumulative taxable income is positive (the first taxable income).
"""

from __future__ import annotations

import numpy as np

from econ.arrays import cumsum_months, running_max_months
from econ.units import MONTHS_PER_YEAR


def tax_years(months: int) -> int:
    """Number of tax years covering months 0..months-1."""
    return max(1, -(-(months - 1) // MONTHS_PER_YEAR))


def annual_sums(monthly):
    """Sum of each tax year's months [same unit, array (n, Y)].

    Months after a scenario's last month must hold 0 (the engine zeroes them).
    """
    monthly = np.asarray(monthly, dtype=float)
    n, t = monthly.shape
    if t == 1:
        return monthly.copy()
    annual = np.add.reduceat(monthly[:, 1:], np.arange(0, t - 1, MONTHS_PER_YEAR), axis=1)
    annual[:, 0] += monthly[:, 0]
    return annual


def year_end_values(monthly):
    """Each tax year's last month of a level (a balance, a carrying amount) [same unit, (n, Y)].

    Months after a scenario's last month must repeat or zero it as the caller wants; the year's
    last column is min(12 k, T - 1).
    """
    monthly = np.asarray(monthly, dtype=float)
    t = monthly.shape[1]
    last = np.minimum(MONTHS_PER_YEAR * np.arange(1, tax_years(t) + 1), t - 1)
    return monthly[:, last]


def months_in_year(last_month, years: int):
    """Service months of each tax year, 0 to 12 [months, array (n, Y)]."""
    last = np.asarray(last_month)[:, None]
    return np.clip(last - MONTHS_PER_YEAR * np.arange(years)[None, :], 0, MONTHS_PER_YEAR)


def income_before_tax_usd(ebitda_usd, depreciation_usd, interest_usd, gain_usd):
    """Income before tax: EBITDA - depreciation - interest + gain on disposal [USD].

    With the tax schedule's depreciation and gain it is taxable income; with the book's (and any
    impairment in the depreciation) it is pre-tax book income.
    """
    return ebitda_usd - depreciation_usd - interest_usd + gain_usd


def tax_with_loss_carryforward(annual_taxable_usd, tax_rate):
    """Tax due for each year, losses carried forward without limit [USD, array (n, Y)].

    With C_k the cumulative taxable income at the end of year k, the income taxed up to year k is
    T_k = max(0, max_{j<=k} C_j): a loss reduces later taxable income until it is used up, and tax
    already paid is not refunded (no carry-back, as for US losses since 2018, IRC §172(b)). The
    80%-of-income limit of §172(a)(2) is not applied.

    Parameters
    ----------
    annual_taxable_usd : array (n, Y)  taxable income of each year [USD]
    tax_rate : array (n,)  [fraction]
    """
    taxed = np.maximum(running_max_months(cumsum_months(annual_taxable_usd)), 0.0)
    return np.diff(taxed, axis=1, prepend=0.0) * np.asarray(tax_rate, dtype=float)[:, None]


def spread_over_months(annual_usd, last_month, months: int):
    """Each year's amount paid in equal parts over its service months [USD, array (n, T)].

    Equal monthly payments stand for estimated tax payments (IRC §6655), so no single month carries
    a year's tax. Month 0 and months after `last_month` pay nothing.
    """
    annual = np.asarray(annual_usd, dtype=float)
    n, years = annual.shape
    last = np.asarray(last_month)[:, None]
    per_month = annual / np.maximum(months_in_year(last_month, years), 1)
    spread = np.repeat(per_month, MONTHS_PER_YEAR, axis=1)[:, : months - 1]
    paying = np.arange(1, months)[None, :] <= last
    return np.concatenate([np.zeros((n, 1)), np.where(paying, spread, 0.0)], axis=1)


TAX_PAYMENTS = ("quarterly", "annual", "monthly")
"""Payment schedules of a tax year's income tax (codes 0, 1, 2 in that order)."""

QUARTER_MONTHS = 3


def first_taxable_month(taxable_income_usd):
    """First month whose cumulative taxable income (from month 0) is positive [month index, (n,)].

    Before it every loss so far still exceeds all income so far, so no tax can be due. Where the
    cumulative income never turns positive it is T (no month).
    """
    positive = cumsum_months(np.asarray(taxable_income_usd, dtype=float)) > 0
    return np.where(positive.any(axis=1), positive.argmax(axis=1), positive.shape[1])


def tax_payments_usd(annual_tax_usd, first_taxable, last_month, months: int, schedule):
    """When each tax year's tax is paid [USD, array (n, T)].

    Year y (1-based) covers months 12(y-1)+1 .. 12y (month 0 joins year 1), cut at `last_month`.
    A year's tax is paid

    - quarterly (code 0): in equal estimated installments at the ends of its quarters (months
      12(y-1)+3, +6, +9, +12; IRC §6655), the last month standing for quarter ends beyond it;
    - annual (code 1): in one payment in the month after the year ends, or in the last month for
      the final year (the projection settles what it owes when it ends);
    - monthly (code 2): in equal parts over its months;

    counting for quarterly and monthly only the months from `first_taxable` on, so no tax is paid
    before the first taxable income. A year with tax to pay has cumulative taxable income above
    0 at its end, so it always has such a month.

    Parameters
    ----------
    annual_tax_usd : array (n, Y)  tax due of each year [USD]
    first_taxable : int array (n,)  first month with cumulative taxable income above 0
    last_month : int array (n,)  final month of each projection
    months : int  columns T of the result (months 0..T-1)
    schedule : int array (n,)  index into TAX_PAYMENTS
    """
    annual = np.asarray(annual_tax_usd, dtype=float)
    n, years = annual.shape
    m = np.arange(months)[None, :]
    last = np.asarray(last_month)[:, None]
    year = (np.maximum(m - 1, 0) // MONTHS_PER_YEAR) + np.zeros((n, 1), dtype=np.int64)
    year = np.minimum(year, years - 1)
    code = np.asarray(schedule)[:, None]
    open_month = (m >= 1) & (m <= last) & (m >= np.asarray(first_taxable)[:, None])
    quarter_end = (m % QUARTER_MONTHS == 0) | (m == last)
    weight = np.where(code == 0, open_month & quarter_end, open_month).astype(float)
    due = np.take_along_axis(annual, year, axis=1)
    total = np.take_along_axis(annual_sums(weight)[:, :years], year, axis=1)
    paid = np.where(weight > 0, due * weight / np.where(total > 0, total, 1.0), 0.0)
    if not np.any(code == 1):
        return paid
    # Annual payment: each year's tax in the month after it ends (the last month at the latest).
    pay_month = np.minimum(MONTHS_PER_YEAR * np.arange(1, years + 1)[None, :] + 1, last)
    after = np.zeros((n, months))
    np.add.at(after, (np.arange(n)[:, None], np.minimum(pay_month, months - 1)), annual)
    return np.where(code == 1, after, paid)


def income_tax_with_loss_carryforward(taxable_income_usd, tax_rate, last_month):
    """Monthly income tax: yearly tax with losses carried forward, paid evenly [USD, array (n, T)].

    Parameters
    ----------
    taxable_income_usd : array (n, T)  monthly taxable income; 0 after `last_month`
    tax_rate : array (n,)  [fraction]
    last_month : int array (n,)  final month of each projection
    """
    taxable = np.asarray(taxable_income_usd, dtype=float)
    annual_tax = tax_with_loss_carryforward(annual_sums(taxable), tax_rate)
    return spread_over_months(annual_tax, last_month, taxable.shape[1])
