"""Income tax with net operating losses carried forward, vectorized over scenarios."""

from __future__ import annotations

import numpy as np

from econ.units import MONTHS_PER_YEAR


def income_tax_with_loss_carryforward(taxable_income_usd, tax_rate, last_month):
    """Income tax per month: annual tax with losses carried forward, paid evenly over the year [USD].

    Tax years are 12-month blocks from the first service month (months 1-12, 13-24, ...); month 0
    belongs to the first, and `last_month` closes a possibly short final year. Each tax year's
    taxable income is the sum of its months. The cumulative income taxed after year
    k is max(0, max over j <= k of C_j), with C_j the cumulative taxable income at the end of year j:
    a loss reduces later taxable income until it is used up, and tax already paid is not refunded
    (no carry-back, as for US losses since 2018, IRC §172(b)). The 80%-of-income limit of
    §172(a)(2) is not applied. The year's tax is paid in equal parts in its months 1..12, as
    estimated tax payments would be (IRC §6655), so no month carries a year's tax alone.

    Parameters
    ----------
    taxable_income_usd : array (n, T)  monthly taxable income, months 0..T-1; months after
        `last_month` must be 0
    tax_rate : array (n,)  [fraction]
    last_month : int array (n,)  final month of each projection (closes a possibly short year)

    Returns
    -------
    array (n, T)  tax paid per month [USD], never negative
    """
    income = np.asarray(taxable_income_usd, dtype=float)
    n, t = income.shape
    last = np.asarray(last_month)[:, None]
    years = -(-(t - 1) // MONTHS_PER_YEAR)
    # Months 1..T laid out as (n, years, 12); month 0 joins the first year.
    padded = np.zeros((n, years * MONTHS_PER_YEAR))
    padded[:, : t - 1] = income[:, 1:]
    annual = padded.reshape(n, years, MONTHS_PER_YEAR).sum(axis=2)
    annual[:, 0] += income[:, 0]
    taxed = np.maximum(np.maximum.accumulate(np.cumsum(annual, axis=1), axis=1), 0.0)
    annual_tax = np.diff(taxed, axis=1, prepend=0.0) * np.asarray(tax_rate, dtype=float)[:, None]
    months_in_year = np.clip(last - MONTHS_PER_YEAR * np.arange(years)[None, :], 0, MONTHS_PER_YEAR)
    per_month = annual_tax / np.maximum(months_in_year, 1)
    spread = np.repeat(per_month, MONTHS_PER_YEAR, axis=1)[:, : t - 1]
    paying = np.arange(1, t)[None, :] <= last
    return np.concatenate([np.zeros((n, 1)), np.where(paying, spread, 0.0)], axis=1)
