"""Income tax with net operating losses carried forward, vectorized over scenarios.

Tax years are 12-month blocks from month 1 (months 1-12, 13-24, ...); month 0 joins the first, and
each scenario's last month closes a possibly short final year. Monthly arrays are (n, T) over months
0..T-1; annual arrays are (n, Y).

When the tax is paid is a choice (TAX_PAYMENTS): quarterly estimated payments in the months they are
due (IRC §6655(c), the default), annual payment after the year ends, or equal monthly parts; in
every case nothing is paid before the first taxable income: the first month whose cumulative taxable
income is positive, or, where losses carried forward may offset only part of a year's income (the
US 80% limit), whose taxable income so far in its tax year is positive.
"""

from __future__ import annotations

import numpy as np

from econ.arrays import (
    add_at_months,
    cumsum_months,
    refuse_outside,
    rows_alike,
    running_max_months,
    running_min_months,
)
from econ.units import MONTHS_PER_YEAR


def tax_years(months: int) -> int:
    """Number of tax years covering months 0..months-1."""
    return max(1, -(-(months - 1) // MONTHS_PER_YEAR))


def tax_year_index(month):
    """Tax year of each month, 0-based [array like `month`]: months 0-12 are year 0 (the first),
    months 12y+1 .. 12y+12 year y.

    >>> tax_year_index([0, 1, 12, 13, 24, 25]).tolist()
    [0, 0, 0, 1, 1, 2]
    """
    return np.maximum((np.asarray(month, dtype=np.int64) - 1) // MONTHS_PER_YEAR, 0)


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


def income_before_tax_usd(ebitda_usd, depreciation_usd, interest_usd, gain_usd):
    """Income before tax: EBITDA - depreciation - interest + gain on disposal [USD].

    With the tax schedule's depreciation and gain it is taxable income; with the book's (and any
    impairment in the depreciation) it is pre-tax book income.
    """
    return ebitda_usd - depreciation_usd - interest_usd + gain_usd


def income_taxed_to_date_usd(annual_taxable_usd, loss_limit=None):
    """Income taxed from the first year to the end of each year, losses carried forward [USD,
    array (n, Y)].

    A loss is carried forward (not back: tax paid is not refunded, as for US losses since 2018,
    IRC §172(b)(1)(A)) and offsets later income. Without a limit the income taxed up to year k is
    T_k = max(0, max_{j<=k} C_j), with C_k the cumulative taxable income at the end of year k.
    With a limit L < 1 (0.8 for US federal losses arising in tax years after 2017, IRC
    §172(a)(2)) a year's deduction for carried-forward losses is at most L times its income:
    with P the losses not yet used at the start of year k and I_k its income,

        used_k = min(P, L max(0, I_k)),   taxed_k = max(0, I_k) - used_k,
        P <- P - used_k + max(0, -I_k),

    and T_k is the sum of taxed_j for j <= k. With L = 1 the two agree; rows without a limit
    take the closed form.

    Parameters
    ----------
    annual_taxable_usd : array (n, Y)  taxable income of each year, losses negative [USD]
    loss_limit : array (n,) or None  share of a year's income that losses carried forward may
        offset, 0 < L <= 1 [fraction]; None: no limit
    """
    annual = np.asarray(annual_taxable_usd, dtype=float)
    taxed = np.maximum(running_max_months(cumsum_months(annual)), 0.0)
    limited = _limited_rows(loss_limit, annual.shape[0])
    if limited.size == 0:
        return taxed
    share = np.asarray(loss_limit, dtype=float)[limited]
    income = annual[limited]
    unused = np.zeros(limited.size)
    total = np.zeros(limited.size)
    for k in range(income.shape[1]):
        gain = np.maximum(income[:, k], 0.0)
        used = np.minimum(unused, share * gain)
        total = total + (gain - used)
        unused = unused - used + np.maximum(-income[:, k], 0.0)
        taxed[limited, k] = total
    return taxed


def _limited_rows(loss_limit, n: int) -> np.ndarray:
    """Rows whose losses carried forward may offset less than all of a year's income.

    Refuses a limit outside (0, 1] (InputError naming it): a negative one taxed more than the
    year's income (-0.5 taxed 150% of it) and NaN ran as no limit."""
    if loss_limit is None:
        return np.zeros(0, dtype=np.int64)
    limit = np.broadcast_to(np.asarray(loss_limit, dtype=float), (n,))
    refuse_outside(
        "loss_limit",
        limit,
        lambda x: (x > 0) & (x <= 1),
        "a share above 0 and at most 1 [fraction]",
    )
    return np.flatnonzero(limit < 1.0)


def tax_with_loss_carryforward(annual_taxable_usd, tax_rate, loss_limit=None):
    """Tax due for each year, losses carried forward [USD, array (n, Y)]: the rate times the
    year's increase of `income_taxed_to_date_usd` (with `loss_limit`, the US 80% limit).

    Parameters
    ----------
    annual_taxable_usd : array (n, Y)  taxable income of each year [USD]
    tax_rate : array (n,)  [fraction]
    loss_limit : array (n,) or None  as `income_taxed_to_date_usd`
    """
    rate = np.asarray(tax_rate, dtype=float)
    refuse_outside(
        "tax_rate", rate, lambda x: (x >= 0) & (x < 1), "a rate from 0 to below 1 [fraction]"
    )
    taxed = income_taxed_to_date_usd(annual_taxable_usd, loss_limit)
    return np.diff(taxed, axis=1, prepend=0.0) * rate[:, None]


TAX_PAYMENTS = ("quarterly", "annual", "monthly")
"""Payment schedules of a tax year's income tax (codes 0, 1, 2 in that order)."""

ANNUAL_PAYMENT_DELAY = 4
"""Months after a tax year's end in which its return, and the tax left unpaid, are due: the 15th
day of the 4th month (IRC §6072(a) for corporations, tax years beginning after 2015; §6151(a))."""

INSTALLMENT_MONTHS = (4, 6, 9, 12)
"""Months of a tax year in which a corporation's estimated tax is due: the 15th day of its 4th,
6th, 9th and 12th months (IRC §6655(c)(1)), each month standing for its 15th."""


def first_taxable_month(taxable_income_usd, loss_limit=None):
    """First month with taxable income so far [month index, (n,)]: whose cumulative taxable
    income (from month 0) is positive, or, for rows with a `loss_limit` below 1, whose income so
    far in its own tax year is positive (losses carried forward then leave part of it taxed).

    Before it no tax can be due. Where there is no such month it is T (no month).
    """
    taxable = np.asarray(taxable_income_usd, dtype=float)
    cumulative = cumsum_months(taxable)
    positive = cumulative > 0
    limited = _limited_rows(loss_limit, taxable.shape[0])
    if limited.size:
        positive[limited] |= year_to_date(cumulative[limited]) > 0
    return np.where(positive.any(axis=1), positive.argmax(axis=1), positive.shape[1])


def year_to_date(cumulative):
    """A running sum from month 0 restarted at each tax year: the year's months so far [(n, T)].

    Month 0 and months 1-12 are year 1; months 12(y-1)+1 .. 12y year y.
    """
    cumulative = np.asarray(cumulative, dtype=float)
    months = cumulative.shape[1]
    year_start = tax_year_index(np.arange(months)) * MONTHS_PER_YEAR
    before = np.where(year_start > 0, cumulative[:, year_start], 0.0)
    return cumulative - before


def tax_payments_usd(annual_tax_usd, first_taxable, last_month, months: int, schedule):
    """When each tax year's tax is paid [USD, array (n, T)].

    Year y (1-based) covers months 12(y-1)+1 .. 12y (month 0 joins year 1), cut at `last_month`.
    A year's tax is paid

    - quarterly (code 0): in equal estimated installments in the months they are due (months
      12(y-1)+4, +6, +9, +12; IRC §6655(c)), the last month standing for those beyond it;
    - annual (code 1): in one payment when the year's return is due, the 15th day of the 4th
      month after the year ends (IRC §6072(a), §6151(a): month 12y + ANNUAL_PAYMENT_DELAY), or
      in the last month where that is beyond it (the projection settles what it owes when it
      ends);
    - monthly (code 2): in equal parts over its months;

    counting for quarterly and monthly only the months from `first_taxable` on, so no tax is paid
    before the first taxable income. A year with tax to pay has taxable income so far above 0 by
    its end (`first_taxable_month`), so it always has such a month.

    Parameters
    ----------
    annual_tax_usd : array (n, Y)  tax due of each year [USD]
    first_taxable : int array (n,)  first month with taxable income so far (`first_taxable_month`)
    last_month : int array (n,)  final month of each projection
    months : int  columns T of the result (months 0..T-1)
    schedule : int array (n,)  index into TAX_PAYMENTS
    """
    annual = np.asarray(annual_tax_usd, dtype=float)
    n, years = annual.shape
    code = np.asarray(schedule)[:, None]
    weight = _payment_weights(first_taxable, last_month, years, code)
    total = weight.sum(axis=2)
    paid = annual[:, :, None] * weight / np.where(total > 0, total, 1.0)[:, :, None]
    out = np.zeros((n, months))
    out[:, 1:] = paid.reshape(n, -1)[:, : months - 1]
    rows = np.flatnonzero(code[:, 0] == 1)
    if rows.size == 0:
        return out
    # Annual payment: each year's tax when its return is due (the last month at the latest),
    # for the rows paying so.
    pay_month = np.minimum(_annual_pay_month(np.asarray(last_month)[rows], years), months - 1)
    after = np.zeros((rows.size, months))
    add_at_months(after, pay_month, annual[rows])
    out[rows] = after
    return out


def _payment_weights(first_taxable, last_month, years: int, code):
    """Which months 1..12Y pay a share of their year's tax (1.0) [array (n, Y, 12)].

    Quarterly (code 0): the INSTALLMENT_MONTHS and the last month; monthly (2): every month; both
    from `first_taxable` to `last_month`. The annual schedule (1) is handled apart
    (`_annual_pay_month`).
    """
    m = np.arange(1, MONTHS_PER_YEAR * years + 1)[None, :]
    last = np.asarray(last_month)[:, None]
    open_month = (m <= last) & (m >= np.asarray(first_taxable)[:, None])
    due = np.isin((m - 1) % MONTHS_PER_YEAR + 1, INSTALLMENT_MONTHS) | (m == last)
    weight = np.where(code == 0, open_month & due, open_month).astype(float)
    return weight.reshape(len(weight), years, MONTHS_PER_YEAR)


def _annual_pay_month(last_month, years: int):
    """Month of each year's single payment: its return's due month, or the last [(n, Y)]."""
    due = MONTHS_PER_YEAR * np.arange(1, years + 1)[None, :] + ANNUAL_PAYMENT_DELAY
    return np.minimum(due, np.asarray(last_month)[:, None])


class LinearTaxValue:
    """Present value of the tax paid on taxable income A + p B, as a function of the number p.

    The break-even price solves NPV(p) = 0 where token revenue p B adds to fixed taxable income
    A. Evaluating `tax_payments_usd` on (n, T) months for every trial p costs dozens of passes over
    the months; here the months are summed once. Per tax year k (`annual_sums`), the tax due is
    `tax_with_loss_carryforward(A_k + p B_k)`, and it is paid in months whose discount factors
    weigh it by W_k: the mean factor of the year's payment months from the first taxable month f
    on (quarterly, monthly), or the factor of its payment month (annual). W_k depends on p only
    through f and only in the year holding f; years before f owe nothing. f(p) is the first month
    whose cumulative income C_m = CA_m + p CB_m is positive: with B >= 0, C_m > 0 exactly where
    p exceeds t_m = -CA_m / CB_m, so f(p) is the count of leading months whose running minimum
    of t_m is at least p. With a loss limit below 1, a month whose income so far in its tax year
    is positive counts too (`first_taxable_month`): t_m is then the lower of the two thresholds.

    The value equals `tax_payments_usd(...) @ discount` up to rounding (tests compare them).
    Requires B >= 0 in every month (`usable` says where that holds).

    Parameters
    ----------
    fixed, per_unit : arrays (n, T)  taxable income A and its change per unit of p, B [USD]
    tax_rate : array (n,)  [fraction]
    last_month : int array (n,)
    discount : array (n, T)  discount factors
    schedule : int array (n,)  index into TAX_PAYMENTS
    loss_limit : array (n,) or None  as `income_taxed_to_date_usd`
    """

    def __init__(self, fixed, per_unit, tax_rate, last_month, discount, schedule, loss_limit=None):
        fixed, per_unit = np.asarray(fixed, dtype=float), np.asarray(per_unit, dtype=float)
        n, months = fixed.shape
        years = tax_years(months)
        self.usable = np.all(per_unit >= 0, axis=1)
        self.tax_rate = np.asarray(tax_rate, dtype=float)
        self.loss_limit = loss_limit
        self.annual_fixed, self.annual_unit = annual_sums(fixed), annual_sums(per_unit)
        cum_fixed, cum_unit = cumsum_months(fixed), cumsum_months(per_unit)
        threshold = _threshold(cum_fixed, cum_unit)
        limited = _limited_rows(loss_limit, n)
        if limited.size:
            in_year = _threshold(year_to_date(cum_fixed[limited]), year_to_date(cum_unit[limited]))
            threshold[limited] = np.minimum(threshold[limited], in_year)
        self.running_min = running_min_months(threshold)
        self.months = months
        last_month = np.broadcast_to(np.asarray(last_month), (n,))
        code = np.broadcast_to(np.asarray(schedule), (n,))[:, None]
        # Weights of every month of each year from the year's first month on ("from f"), summed
        # from each position to the year's end: (n, Y, 13), the last slot 0. They depend on the
        # horizon and the schedule only: one row serves a batch that shares them.
        rows = slice(0, 1) if n and rows_alike(last_month, code) else slice(None)
        weight = _payment_weights(
            np.ones(n, dtype=np.int64)[rows], last_month[rows], years, code[rows]
        )
        factor = np.zeros((n, MONTHS_PER_YEAR * years))
        factor[:, : months - 1] = np.asarray(discount, dtype=float)[:, 1:]
        factor = factor.reshape(n, years, MONTHS_PER_YEAR)
        self.from_weight = np.broadcast_to(_suffix_sums(weight), (n, years, MONTHS_PER_YEAR + 1))
        self.from_value = _suffix_sums(weight * factor)
        # the mean factor of each whole year's payments (0 where it has none)
        year_weight, year_value = self.from_weight[:, :, 0], self.from_value[:, :, 0]
        paying = year_weight > 0
        self.year_mean = np.where(paying, year_value / np.where(paying, year_weight, 1.0), 0.0)
        annual = code[:, 0] == 1
        self.annual_rows = np.flatnonzero(annual)
        pay = np.minimum(_annual_pay_month(last_month, years), months - 1)
        self.annual_value = np.take_along_axis(np.asarray(discount, dtype=float), pay, axis=1)

    def first_taxable(self, p, rows):
        """First month with cumulative taxable income above 0 at p [(len(rows),)].

        The count of leading months whose running minimum threshold is at least p, found by
        binary search over each row's non-increasing thresholds (log2 T steps over the rows, not
        a pass over every month): the count grows by each power of two, largest first, where
        the month it would reach still has a threshold of at least p.
        """
        flat, months = self.running_min.ravel(), self.months
        last = np.asarray(rows) * months + months - 1  # each row's last month in `flat`
        count = np.zeros(len(last), dtype=np.int64)
        step = 1 << (months.bit_length() - 1)
        while step:  # invariant: the first `count` months are >= p
            wider = count + step
            at_least = (wider <= months) & (flat[last - np.maximum(months - wider, 0)] >= p)
            count = np.where(at_least, wider, count)
            step >>= 1
        return count

    def __call__(self, p, rows):
        """Present value of the tax paid at p, for the given rows [USD, (len(rows),)]."""
        p, rows = np.asarray(p, dtype=float), np.asarray(rows)
        limit = None if self.loss_limit is None else np.asarray(self.loss_limit)[rows]
        due = tax_with_loss_carryforward(
            self.annual_fixed[rows] + p[:, None] * self.annual_unit[rows],
            self.tax_rate[rows],
            limit,
        )
        years = due.shape[1]
        first = np.maximum(self.first_taxable(p, rows), 1)
        year = (first - 1) // MONTHS_PER_YEAR
        # The mean factor of each year's payments: none before f's year, from f in its year
        # (where f falls within the years), the whole year's after.
        mean = np.where(np.arange(years)[None, :] > year[:, None], self.year_mean[rows], 0.0)
        within = np.flatnonzero(year < years)
        at = (rows[within], year[within], (first[within] - 1) % MONTHS_PER_YEAR)
        value, count = self.from_value[at], self.from_weight[at]
        paying = count > 0
        mean[within, year[within]] = np.where(paying, value / np.where(paying, count, 1.0), 0.0)
        if self.annual_rows.size:
            annual = np.isin(rows, self.annual_rows)
            mean[annual] = self.annual_value[rows[annual]]
        return np.einsum("ij,ij->i", due, mean)


def _threshold(fixed, per_unit):
    """The p above which A + p B > 0, elementwise, B >= 0: -A / B; -inf or +inf where B = 0."""
    out = np.negative(fixed)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(out, per_unit, out=out)
    # (the infinities written over the quotients where B = 0: two nested np.where over every
    # month cost ten times the division)
    zero = ~(per_unit > 0)
    np.copyto(out, np.inf, where=zero)
    np.copyto(out, -np.inf, where=zero & (fixed > 0))
    return out


def _suffix_sums(blocks):
    """Sums from each position of the last axis to its end, with a final 0 [(..., L + 1)].

    The same additions in the same order as ``cumsum(blocks[..., ::-1])[..., ::-1]``, one slot
    at a time over all rows and years: numpy's cumsum along a reversed 12-wide axis walks each
    short run alone and cost twice as much.
    """
    length = blocks.shape[-1]
    # Each slot a contiguous array of all rows and years (a view of them is returned): adding
    # slots strided through (n, Y, 13) cost more than the additions.
    out = np.zeros((length + 1,) + blocks.shape[:-1])
    slots = np.moveaxis(blocks, -1, 0)
    if length:
        out[length - 1] = slots[length - 1]
    for j in range(length - 2, -1, -1):
        np.add(out[j + 1], slots[j], out=out[j])
    return np.moveaxis(out, 0, -1)
