"""One tranche's debt arithmetic, monthly and vectorized over a leading scenario axis.

This module owns the building blocks the capital stack (econ.capital) composes: interest-rate paths
(fixed, or an index curve plus spread with a floor), loan repayment schedules (level payment,
straight line, bullet, interest only then amortizing, balloon) in which each draw amortizes from its
own month, bond coupon schedules, and the effective interest method that spreads issue discount and
debt issuance costs over the life of a debt as interest expense; and debt sizing as lenders size
it: a loan sculpted to cash flow, and the largest loan a minimum DSCR and a maximum loan-to-value
allow (closed forms, no search).

Arrays are (n, T) over months 0..T-1: n scenarios, T months. Loops run over months or draw cohorts,
never over scenarios. Sign convention: draws, interest, principal and balances are positive amounts;
the engine turns them into cash-flow signs. Interest for month m accrues on the balance at the end
of month m-1 and is paid at the end of month m; a draw in month m earns interest from month m+1.
"""

from __future__ import annotations

import numpy as np

from econ.arrays import remaining_sum_months, trailing_sum_rows
from econ.errors import InputError
from econ.units import HALF_CENT_USD, MONTHS_PER_YEAR

REPAYMENTS = (
    "level_payment",
    "straight_line",
    "bullet",
    "interest_only_then_amortizing",
    "balloon",
)
"""Repayment profiles of a loan; the index of a name is its code in integer arrays."""
LEVEL_PAYMENT, STRAIGHT_LINE, BULLET, INTEREST_ONLY_THEN_AMORTIZING, BALLOON = range(5)

DAY_COUNTS = {"30/360": 30.0 / 360.0, "act/360": 365.0 / 12.0 / 360.0, "act/365": 1.0 / 12.0}
"""Fraction of a year one average month accrues under each day-count convention [years/month].

ACT/360 (the SOFR loan convention) accrues 365/12 actual days per average month over a 360-day
year, so a quoted rate costs 365/360 times as much per year as under 30/360 (ISDA 2006
Definitions, section 4.16)."""

DAY_COUNT_ACCRUAL = {
    "30/360": "rate x 30/360 a month (12 months of 30 days, a 360-day year)",
    "act/360": "rate x (365/12)/360 a month (months of 365/12 days, a 360-day year: 365/360 of "
    "the rate a year)",
    "act/365": "rate x (365/12)/365 = rate/12 a month (months of 365/12 days, a 365-day year)",
}
"""How interest accrues each month under each of DAY_COUNTS, in words."""

INTERPOLATIONS = ("step", "linear")
"""How an index curve fills months between its knots: hold the last knot, or interpolate."""


def choice_codes(value, choices, what: str) -> np.ndarray:
    """Integer codes of a categorical setting given as names or codes.

    Parameters
    ----------
    value : str, int or array of str or int
    choices : sequence of str  the valid names; a name's code is its index
    what : str  the setting's name, for the error message

    Raises
    ------
    InputError  for an unknown name or an out-of-range code, listing the valid names.
    """
    array = np.asarray(value)
    if array.dtype.kind in "US" or array.dtype == object:
        flat = array.reshape(-1).tolist()
        distinct = set(flat)  # a batch column repeats a few names many times
        unknown = sorted({str(v) for v in distinct if str(v) not in choices})
        if unknown:
            raise InputError(
                f"{what}: unknown value {unknown[0]!r}; expected one of: {', '.join(choices)}"
            )
        lookup = {v: choices.index(str(v)) for v in distinct}
        if len(lookup) == 1:
            return np.full(array.shape, lookup[flat[0]], dtype=np.int64)
        return np.array([lookup[v] for v in flat], dtype=np.int64).reshape(array.shape)
    codes = array.astype(np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= len(choices) or (codes != array).any()):
        raise InputError(
            f"{what}: code {array.reshape(-1)[0]!r} is not one of 0..{len(choices) - 1} "
            f"({', '.join(choices)})"
        )
    return codes


def common_row(*columns):
    """The columns cut to their first row when every one of them repeats it in all rows.

    A batch seldom varies a tranche's timing (issue, maturity, coupon period); the month masks
    built from it are then one row (1, T) broadcast over the scenarios instead of an array
    (n, T) per mask, the same values with a fraction of the work.

    Parameters
    ----------
    *columns : arrays (n, ...)  settings per scenario, NaN matching NaN

    Returns
    -------
    tuple of arrays, each (1, ...) when all columns are alike over rows, else the columns as given
    """
    arrays = [np.asarray(c) for c in columns]
    for a in arrays:
        first = a[:1]
        same = a == first
        if a.dtype.kind == "f":
            same |= np.isnan(a) & np.isnan(first)
        if not same.all():
            return tuple(arrays)
    return tuple(a[:1] for a in arrays)


def level_payment_balance(principal_usd, rate_monthly, term_months, months):
    """Balance after each month of a level-payment (annuity) loan drawn at month 0 [USD].

    B_m = P * ((1+i)^N - (1+i)^m) / ((1+i)^N - 1) for 0 <= m <= N, and P * (1 - m/N) when i = 0;
    zero after the term. This is the balance implied by the spreadsheet's PMT/IPMT/PPMT.

    Parameters
    ----------
    principal_usd, rate_monthly, term_months : array (n,)  [USD], [1/month], [months]
    months : array (T,)  month indices, 0 = draw month
    """
    p = np.asarray(principal_usd, dtype=float)[:, None]
    rate = np.asarray(rate_monthly, dtype=float)
    term = np.asarray(term_months, dtype=float)
    if rate.ndim == term.ndim == 1 and rate.size == term.size > 0:
        # (the balance's share of the principal is one row where all loans share rate and term)
        rate, term = common_row(rate, term)
    i, n = rate[:, None], term[:, None]
    months = np.asarray(months, dtype=float)
    # expm1/log1p keep full precision for tiny rates, where (1+i)^n - 1 would round to 0.
    log_growth = np.log1p(i)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        growth_n = np.expm1(n * log_growth)
        growth_m = np.multiply.outer(log_growth[:, 0], months)
        np.expm1(growth_m, out=growth_m)
        # After the term the share is 0: growth_m passes growth_n there, and is clipped.
        share = np.maximum((growth_n - growth_m) / growth_n, 0.0)
        if np.any(i == 0.0):
            share = np.where(i == 0.0, 1.0 - np.minimum(months[None, :], n) / n, share)
    return p * share


def level_payment_schedule(principal_usd, rate_monthly, term_months, months, last_month=None):
    """Interest, principal and closing balance per month of a level-payment loan [USD].

    Payments start in month 1. When `last_month` (array (n,)) falls before the end of the term, the
    balance left then is repaid in that month as a balloon, reported separately.

    Returns
    -------
    interest, principal, balance, balloon : arrays (n, T)  [USD]
    """
    balance = level_payment_balance(principal_usd, rate_monthly, term_months, months)
    opening = np.concatenate([balance[:, :1], balance[:, :-1]], axis=1)
    interest = opening * np.asarray(rate_monthly, dtype=float)[:, None]
    principal = opening - balance
    draw_month = np.asarray(months) < 1  # payments start in month 1
    interest[:, draw_month] = 0.0
    principal[:, draw_month] = 0.0
    balloon = np.zeros_like(balance)
    if last_month is not None:
        m = np.asarray(months)[None, :]
        last = np.asarray(last_month)[:, None]
        balloon = np.where(m == last, balance, 0.0)
        balance = np.where(m >= last, 0.0, balance)
        if np.any(last < m.max()):  # months after the last one carry nothing
            interest = np.where(m > last, 0.0, interest)
            principal = np.where(m > last, 0.0, principal)
    return interest, principal, balance, balloon


def index_rate_annual(knot_months, knot_rates_annual, months, interpolation="step"):
    """An index forward curve (e.g. Term SOFR) month by month [1/year].

    Parameters
    ----------
    knot_months : array (k,) or (n, k)
        Months of the curve's knots, increasing along the last axis; rows with fewer knots are
        padded with +inf [months, fractional allowed].
    knot_rates_annual : array (k,) or (n, k)
        Index rate at each knot [1/year]; padding values are ignored.
    months : array (T,)
        Months to evaluate [months].
    interpolation : {"step", "linear"} or array (n,) of codes
        "step": the rate of the last knot at or before the month (a stepped curve); "linear":
        linear in time between knots. Both hold the first rate before the first knot and the
        last rate after the last knot (flat extrapolation).

    Returns
    -------
    array (n, T)  index rate [1/year]

    References
    ----------
    Hagan, P. S. & West, G., "Interpolation methods for curve construction", Applied Mathematical
    Finance 13(2) (2006) 89-129, sections 2-3 (piecewise-constant forwards and linear
    interpolation).
    """
    km = np.atleast_2d(np.asarray(knot_months, dtype=float))
    kr = np.atleast_2d(np.asarray(knot_rates_annual, dtype=float))
    codes = np.atleast_1d(choice_codes(interpolation, INTERPOLATIONS, "interpolation"))
    n = max(km.shape[0], kr.shape[0], codes.shape[0])
    k = max(km.shape[1], kr.shape[1])
    km, kr = np.broadcast_to(km, (n, k)), np.broadcast_to(kr, (n, k))
    linear = np.broadcast_to(codes, (n,))[:, None] == 1
    m = np.asarray(months, dtype=float)[None, :]
    # Index of the first knot after each month: loops over knots, which are few.
    after = np.zeros((n, m.shape[1]), dtype=np.int64)
    for j in range(k):
        after += km[:, j : j + 1] <= m
    rows = np.arange(n)[:, None]
    lo = np.clip(after - 1, 0, k - 1)
    hi = np.clip(after, 0, k - 1)
    x0, x1 = km[rows, lo], km[rows, hi]
    r0, r1 = kr[rows, lo], kr[rows, hi]
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(np.isfinite(x1) & (x1 > x0), (m - x0) / (x1 - x0), 0.0)
    return np.where(linear, r0 + np.clip(weight, 0.0, 1.0) * (r1 - r0), r0)


def floating_rate_annual(index_annual, spread_annual, floor_annual=None):
    """All-in rate of a floating-rate loan: max(index, floor) + spread [1/year].

    The floor applies to the index, as in leveraged and GPU-backed loan agreements ("Term SOFR,
    but not less than the Floor"); NaN means no floor.

    Parameters
    ----------
    index_annual : array (n, T)  index rate [1/year]
    spread_annual : array (n,)  margin over the index [1/year]
    floor_annual : array (n,), optional  floor on the index [1/year]; NaN or None = none

    References
    ----------
    LSTA, "Model Credit Agreement Provisions", definitions of "Term SOFR" and "Floor" (2021);
    Alternative Reference Rates Committee, "SOFR Starter Kit" (2021).
    """
    index = np.asarray(index_annual, dtype=float)
    spread = _col(spread_annual)
    if floor_annual is None:
        return index + spread
    floor = _col(floor_annual)
    return np.where(np.isnan(floor), index, np.maximum(index, floor)) + spread


def negative_rate_months(rate_annual):
    """The months a loan's contractual rate is below 0 (a floating rate whose index plus spread
    is negative with no floor): their count, the first, and the lowest rate, each (n,).

    Parameters
    ----------
    rate_annual : array (n, T)  contractual rate, NaN outside the loan's months [1/year]

    Returns
    -------
    months : array (n,) of int  months with a negative rate
    first : array (n,) of int  the first of them (0 where none)
    lowest : array (n,)  the lowest rate [1/year] (NaN where none is negative)
    """
    rate = np.asarray(rate_annual, dtype=float)
    with np.errstate(invalid="ignore"):  # (NaN: no rate that month)
        negative = rate < 0.0
    lowest = np.where(negative, rate, np.inf).min(axis=1)
    lowest = np.where(negative.any(axis=1), lowest, np.nan)
    return negative.sum(axis=1), np.argmax(negative, axis=1), lowest


def negative_rate_warning(loan: str, months: int, first: int, lowest: float, floor: str) -> str:
    """What a negative all-in floating rate means, for `loan` (how the message names it) with
    `months` months below 0 from month `first`, the lowest rate `lowest` [1/year], and `floor`
    the setting that floors its index at 0 ("floating.floor_annual = 0", "--floor 0")."""
    count = f"{months} month" if months == 1 else f"{months} months"
    return (
        f"{loan}: the all-in floating rate (index + spread) is below 0 in {count}, first in month "
        f"{first} (lowest {lowest:.2%} a year): the interest is negative, paid to the borrower, "
        "while a negative fixed rate is refused; credit agreements floor the benchmark at 0 "
        f'(LSTA model provisions: "but not less than the Floor"), and {floor} keeps the rate '
        "at or above the spread"
    )


def loan_schedule(
    draws_usd,
    rate_monthly,
    maturity_month,
    repayment="level_payment",
    amortization_months=None,
    interest_only_months=0,
    balloon_share=0.0,
):
    """Repayment schedule of a loan in which each draw amortizes from its own month [USD].

    Each month with a draw starts a cohort. A cohort drawn in month d amortizes over
    ``A = amortization_months`` (default: until maturity, ``maturity_month - d``) from month d+1,
    and whatever is left at ``min(d + A, maturity_month)`` is repaid then as a balloon. With a
    balance B at the start of a month, rate r that month and R payments left in the cohort's
    amortization (this one included), the scheduled principal is

    - level payment: (B - F) * r / ((1+r)^R - 1), or (B - F) / R when r = 0, with F = 0. For a fixed
      rate this is PPMT of the remaining loan, so the payments are level (PMT); for a floating
      rate the payment is recast every month at that month's rate (mortgage-style re-amortization);
    - balloon: the same with F = balloon_share * draw, the amount left for the balloon: the level
      payment of PMT(r, A, -draw, F);
    - interest only then amortizing: 0 for the first ``interest_only_months`` of the cohort, then
      level payments over the remaining A - K months;
    - straight line: draw * (1 - F/draw) / A each month (equal principal);
    - bullet: 0 until the cohort's final month.

    Parameters
    ----------
    draws_usd : array (n, T)
        Principal drawn in each month [USD].
    rate_monthly : array (n,) or (n, T)
        Interest rate per month on the opening balance [1/month].
    maturity_month : array (n,)
        Final maturity: everything still owed is repaid in this month [month index].
    repayment : str, int or array (n,)
        One of REPAYMENTS (names or codes).
    amortization_months : array (n,), optional
        Amortization period of each draw [months]; NaN or None: until maturity.
    interest_only_months : array (n,)
        Interest-only months of each draw, for "interest_only_then_amortizing" [months].
    balloon_share : array (n,)
        Share of each draw left for the balloon, for "balloon" [fraction].

    Returns
    -------
    dict of arrays (n, T) [USD]
        ``interest_usd`` (cash interest), ``scheduled_principal_usd`` (the regular instalments),
        ``balloon_usd`` (bullet, balloon and maturity repayments beyond the regular instalments)
        and ``balance_usd`` (principal owed at the end of each month).

    Raises
    ------
    InputError  if a draw falls in or after the maturity month.

    References
    ----------
    Microsoft Support, "PMT function", "PPMT function" (annuity payment and its principal part);
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 2.5 (annuities);
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.5 (debt-service
    profile: annuity, equal principal, bullet, balloon).
    """
    draws = np.asarray(draws_usd, dtype=float)
    n, T = draws.shape
    rate = np.asarray(rate_monthly, dtype=float)
    rate = np.broadcast_to(rate[:, None] if rate.ndim == 1 else rate, (n, T))
    maturity = np.broadcast_to(np.asarray(maturity_month, dtype=float), (n,))
    code = np.broadcast_to(choice_codes(repayment, REPAYMENTS, "repayment"), (n,))
    amort = _row(amortization_months, n, np.nan)
    interest_only = _row(interest_only_months, n, 0.0)
    balloon = _row(balloon_share, n, 0.0)

    out = {
        key: np.zeros((n, T))
        for key in ("interest_usd", "scheduled_principal_usd", "balloon_usd", "balance_usd")
    }
    drawn = draws != 0
    cohort_months = np.flatnonzero(drawn.any(axis=0))
    if cohort_months.size == 0:
        return out
    late = drawn & (np.arange(T)[None, :] >= maturity[:, None])
    if late.any():
        row, month = np.argwhere(late)[0]
        raise InputError(
            f"loan draw of {draws[row, month]:,.2f} USD in month {month} of scenario {row} is at "
            f"or after the maturity month {maturity[row]:g}; expected draws before maturity"
        )
    d = cohort_months[None, :].astype(float)
    amount = draws[:, cohort_months]
    to_maturity = maturity[:, None] - d
    term = np.where(np.isnan(amort)[:, None], to_maturity, amort[:, None])
    life = np.minimum(term, to_maturity)
    target = np.where(code == BALLOON, balloon, 0.0)[:, None] * amount
    free_months = np.select(
        [code == BULLET, code == INTEREST_ONLY_THEN_AMORTIZING], [np.inf, interest_only], 0.0
    )[:, None]
    straight = (code == STRAIGHT_LINE)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        equal_principal = np.where(term > free_months, (amount - target) / (term - free_months), 0)

    # Month-major (T, n) copies and outputs: each month's values are contiguous (see
    # effective_interest); transposed back at the end.
    given = np.asarray(rate_monthly, dtype=float)
    # One rate path for every row stays one column.
    rate_t = given.T if given.ndim == 2 and given.shape[0] == 1 else np.ascontiguousarray(rate.T)
    lines_t = {key: np.zeros((T, n)) for key in out}
    first, last_draw = int(cohort_months[0]), int(cohort_months[-1])
    # One cohort (all drawn in one month, the common case): its column is the loan, held as
    # arrays (n,), which numpy runs faster than (n, 1); no sums over cohorts.
    one = cohort_months.size == 1
    column = (lambda x: x[..., 0]) if one else (lambda x: x)
    total = (lambda x: x) if one else (lambda x: x.sum(axis=1))
    offset = column(target) if target.any() else None
    straight_rows = column(straight) if straight.any() else None
    equal_principal = column(equal_principal)
    balance = np.zeros_like(column(amount))
    stop = T
    # What does not depend on the balance (the cohorts' ages, payments left, annuity factors
    # and which cohorts amortize or end) is computed for blocks of months at once; the loop
    # carries only the balance from month to month.
    block = max(1, (1 << 20) // max(n * cohort_months.size, 1))
    for start in range(first, T, block):
        months_block = np.arange(start, min(start + block, T))
        age = months_block[:, None, None] - d[None]
        r_block = rate_t[months_block][:, :, None]
        remaining = term[None] - (age - 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            annuity_factor = np.where(
                r_block == 0.0, 1.0 / remaining, r_block / np.expm1(remaining * np.log1p(r_block))
            )
        amortizes = column((age > free_months[None]) & (remaining >= 1))
        ends = column(age >= life[None])
        annuity_factor, r_block = column(annuity_factor), column(r_block)
        for j, m in enumerate(months_block.tolist()):
            if m > first:  # a cohort drawn before this month pays in it
                r = r_block[j]
                opening = balance
                with np.errstate(invalid="ignore"):  # 0 * inf past a cohort's term, masked below
                    level = (opening if offset is None else opening - offset) * annuity_factor[j]
                regular = (
                    level
                    if straight_rows is None
                    else np.where(straight_rows, equal_principal, level)
                )
                owed = opening > 0
                regular = np.where(amortizes[j] & owed, regular, 0.0)
                np.minimum(np.maximum(regular, 0.0, out=regular), opening, out=regular)  # clip
                extra = np.where(ends[j] & owed, opening - regular, 0.0)
                # A balance left within half a cent of 0 is a rounding residue: repay it now, so
                # no interest of 1e-10 USD runs on after the loan is repaid.
                balance = opening - regular - extra
                residue = np.abs(balance) < HALF_CENT_USD
                if residue.any():
                    np.add(regular, balance, out=regular, where=residue)
                    balance[residue] = (opening - regular - extra)[residue]
                lines_t["interest_usd"][m] = total(opening * r)
                lines_t["scheduled_principal_usd"][m] = total(regular)
                lines_t["balloon_usd"][m] = total(extra)
            if one and m == first:
                balance += amount[:, 0]
            elif m <= last_draw:
                arriving = cohort_months == m
                if arriving.any():
                    balance[:, arriving] += amount[:, arriving]
            lines_t["balance_usd"][m] = total(balance)
            # Repaid and nothing more to draw: the months left are all 0 (at a finite rate).
            if m >= last_draw and not balance.any() and np.isfinite(rate_t[m + 1 :]).all():
                stop = m + 1
                break
        if stop < T:
            break
    for key, value in lines_t.items():
        out[key][:, first:stop] = value[first:stop].T
    return out


def coupon_schedule(face_usd, coupon_annual, coupons_per_year, issue_month, maturity_month, T):
    """Cash coupons, bullet repayment and accrued interest of a fixed-coupon note [USD].

    A note issued in month i pays face * c / f every 12/f months after issue and its face at
    maturity, with the coupon accrued since the last payment date (a short final period when the
    term is not a whole number of periods). Coupons accrue month by month between payment dates
    (30/360: each month is 1/12 of a year).

    Parameters
    ----------
    face_usd, coupon_annual : array (n,)  [USD], [1/year]
    coupons_per_year : array (n,)  1, 2, 4 or 12 (2 = semi-annual, the US corporate bond norm)
    issue_month, maturity_month : array (n,)  [month index]
    T : int  months 0..T-1

    Returns
    -------
    dict of arrays (n, T) [USD]
        ``interest_usd`` (coupons paid), ``balloon_usd`` (face repaid at maturity),
        ``balance_usd`` (face outstanding at month end), ``accrued_usd`` (coupon accrued and not
        yet paid at month end).

    References
    ----------
    SIFMA, *Standard Securities Calculation Methods* (1993), vol. 1: 30/360 accrued interest of
    fixed-income securities; Fabozzi, F. J., *Bond Markets, Analysis and Strategies*, 9th ed.,
    ch. 2 (coupon, accrued interest).
    """
    n = np.broadcast_shapes(*(np.shape(x) for x in (face_usd, coupon_annual)), (1,))[0]
    face = _row(face_usd, n, 0.0)[:, None]
    coupon = _row(coupon_annual, n, 0.0)[:, None]
    period = np.rint(MONTHS_PER_YEAR / _row(coupons_per_year, n, 2.0))[:, None]
    issue = _row(issue_month, n, 0.0)[:, None]
    maturity = _row(maturity_month, n, np.nan)[:, None]
    period, issue, maturity = common_row(period, issue, maturity)
    m = np.arange(T)[None, :]
    since = m - issue
    live = (since > 0) & (m <= maturity)
    outstanding = (since >= 0) & (m < maturity)
    months_into_period = np.mod(since, period)
    monthly_coupon = face * coupon / MONTHS_PER_YEAR
    payment_date = live & ((months_into_period == 0) | (m == maturity))
    months_paid = np.where(months_into_period == 0, period, months_into_period)
    return {
        "interest_usd": np.where(payment_date, monthly_coupon * months_paid, 0.0),
        "balloon_usd": np.where(m == maturity, face, 0.0),
        "balance_usd": np.where(outstanding, face, 0.0),
        "accrued_usd": np.where(outstanding, monthly_coupon * months_into_period, 0.0),
    }


def effective_interest(net_proceeds_usd, payments_usd, base_rate_monthly=0.0, guess=0.0):
    """Interest expense by the effective interest method, and the carrying amount [USD].

    The carrying amount C (including interest accrued and unpaid) grows each month at the
    contractual rate plus a constant margin and falls by the payments:

        C_m = C_(m-1) * (1 + b_m + y) + N_m - P_m,    expense_m = (b_m + y) * C_(m-1),

    with N the cash received (draws net of issue discount and issuance costs), P the contractual
    payments (interest and principal) and b the contractual base rate (0 for a fixed-coupon note,
    whose whole yield is then y). y is solved so that the carrying amount ends at 0, so over the
    life the expense equals the payments less the net proceeds: coupons + discount + fees. With a
    fixed rate, b + y is the debt's monthly effective yield (the IRR of its cash flows), the
    "interest method" of ASC 835-30-35-2; with a floating rate, the margin y spreads discount and
    fees as a constant addition to the index-driven rate.

    Parameters
    ----------
    net_proceeds_usd : array (n, T)  cash received each month [USD]
    payments_usd : array (n, T)  contractual interest and principal paid each month [USD]
    base_rate_monthly : array (n,) or (n, T)  contractual rate on the balance [1/month]
    guess : array (n,)  starting margin (e.g. coupon / 12 when the base rate is 0) [1/month]

    Returns
    -------
    dict
        ``expense_usd`` (n, T) [USD], ``carrying_usd`` (n, T) (carrying amount including accrued
        interest) [USD], ``margin_monthly`` (n,) [1/month] (NaN where no margin closes the
        schedule).

    References
    ----------
    FASB ASC 835-30-35-2 and 835-30-45-1A (ASU 2015-03: issuance costs as a deduction from the
    carrying amount, amortized as interest expense); Kieso, Weygandt & Warfield, *Intermediate
    Accounting*, 17th ed., ch. 14 (effective-interest method).
    """
    net = np.asarray(net_proceeds_usd, dtype=float)
    pay = np.asarray(payments_usd, dtype=float)
    n, T = net.shape
    rate_given = np.asarray(base_rate_monthly, dtype=float)
    base = np.broadcast_to(rate_given[:, None] if rate_given.ndim == 1 else rate_given, (n, T))
    margin = np.array(np.broadcast_to(np.asarray(guess, dtype=float), (n,)), dtype=float)
    scale = np.maximum(np.abs(net).sum(axis=1) + np.abs(pay).sum(axis=1), 1.0)
    tolerance = 1e-12 * scale

    # The recurrence runs month by month over all scenarios at once, so the months are the rows
    # here: each month's values are then contiguous in memory (a column of an (n, T) array is
    # strided, and reading it month after month was most of this function's time).
    steady = rate_given.ndim < 2  # the same base rate every month
    if steady:  # a view, nothing to copy
        base_t = np.broadcast_to(rate_given, (T, n)) if rate_given.ndim else base.T
    elif rate_given.shape[0] == 1:  # the same path in every row: one column
        base_t = rate_given.T
    else:
        base_t = np.ascontiguousarray(base.T)
    # Only the months in which some row receives or pays anything are copied, month-major; in
    # the others the carrying amount only grows (adding 0 changes no value), which notes paying
    # twice a year make most months.
    receiving, paying = np.flatnonzero(net.any(axis=0)), np.flatnonzero(pay.any(axis=0))
    net_k, pay_k = net.T[receiving], pay.T[paying]
    slot_net, slot_pay = [-1] * T, [-1] * T
    for slots, months in ((slot_net, receiving), (slot_pay, paying)):
        for j, m in enumerate(months.tolist()):
            slots[m] = j
    everyone = np.arange(n)

    def end_value(rows, y):
        if rows.size == n and (rows == everyone).all():
            b, p, q = base_t, net_k, pay_k
        else:
            b = base_t if base_t.shape[1] == 1 else base_t[:, rows]
            p, q = net_k[:, rows], pay_k[:, rows]
        c = np.zeros(rows.size)
        dc = np.zeros(rows.size)
        growth = 1.0 + b[0] + y if steady else None
        for m in range(T):
            if not steady:
                growth = 1.0 + b[m] + y
            dc *= growth
            dc += c
            c *= growth
            if slot_net[m] >= 0:
                c += p[slot_net[m]]
            if slot_pay[m] >= 0:
                c -= q[slot_pay[m]]
        return c, dc

    # Newton's method on C_end(y); rows whose flows have no fees or discount converge at once.
    rows = np.arange(n)
    for _ in range(60):
        if rows.size == 0:
            break
        c, dc = end_value(rows, margin[rows])
        done = np.abs(c) <= tolerance[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            step = c / dc
        ok = np.isfinite(step)
        margin[rows[ok & ~done]] -= step[ok & ~done]
        rows = rows[~done & ok]
    failed = rows
    if failed.size:
        margin[failed] = _bisect_margin(end_value, failed, tolerance)

    carrying_t = np.empty((T, n))
    c = np.zeros(n)
    # A carrying amount within rounding of zero is zero (the debt is repaid), so no interest of
    # 1e-10 USD runs on it in the months after.
    snap = np.maximum(tolerance, HALF_CENT_USD)
    size, small = np.empty(n), np.empty(n, dtype=bool)
    if steady:
        rate = (base_t[0] + margin)[:, None]
        growth = np.broadcast_to(1.0 + rate[:, 0], (T, n))
    else:
        rate = base + margin[:, None]
        growth = 1.0 + (base_t + margin)
    for m in range(T):
        c = np.multiply(c, growth[m], out=carrying_t[m])
        if slot_net[m] >= 0:
            c += net_k[slot_net[m]]
        if slot_pay[m] >= 0:
            c -= pay_k[slot_pay[m]]
        np.less_equal(np.abs(c, out=size), snap, out=small)
        c[small] = 0.0
    carrying = np.ascontiguousarray(carrying_t.T)
    # The expense of a month is its rate on the carrying amount the month opens with.
    expense = np.empty((n, T))
    expense[:, :1] = rate[:, :1] * 0.0
    expense[:, 1:] = (rate if steady else rate[:, 1:]) * carrying[:, :-1]
    return {"expense_usd": expense, "carrying_usd": carrying, "margin_monthly": margin}


def _bisect_margin(end_value, rows, tolerance):
    """Bisection fallback for effective_interest where Newton leaves the rows unsolved."""
    lo = np.full(rows.size, -0.05)
    hi = np.full(rows.size, 0.05)
    for _ in range(40):  # widen until the end value changes sign (it rises with the margin)
        c_lo, _ = end_value(rows, lo)
        c_hi, _ = end_value(rows, hi)
        need = ~((c_lo <= 0) & (c_hi >= 0))
        if not need.any():
            break
        lo = np.where(need & (c_lo > 0), np.maximum(lo * 2.0, -0.99), lo)
        hi = np.where(need & (c_hi < 0), hi * 2.0, hi)
    bracketed = (c_lo <= 0) & (c_hi >= 0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        c_mid, _ = end_value(rows, mid)
        lo = np.where(c_mid < 0, mid, lo)
        hi = np.where(c_mid < 0, hi, mid)
        if (hi - lo <= 1e-15).all() or (np.abs(c_mid) <= tolerance[rows]).all():
            break
    return np.where(bracketed, 0.5 * (lo + hi), np.nan)


DSCR_FLOOR_TYPICAL = (1.20, 1.25)
"""The DSCR covenant floors of GPU-backed loans [x] (models/reference_figures.csv, "Typical DSCR
covenant floor": 1.20-1.25x, a cash trap near 1.15x; secondary, 2025)."""


def dscr_floor_warning(floor) -> str | None:
    """What a DSCR covenant floor below 1.0x means, or None for a floor of 1.0x or more (or none).

    Below 1.0x the covenant passes months whose cash flow does not cover their debt service: a
    typing slip (0.5 for 1.5) or a floor no lender sets."""
    if floor is None or not floor < 1.0:  # (NaN: no covenant)
        return None
    low, high = DSCR_FLOOR_TYPICAL
    return (
        f"financing.covenants.dscr_floor is {floor:g}x, below 1.0x: the covenant passes months "
        "whose cash flow does not cover their debt service; lenders' floors are typically "
        f"{low:.2f}-{high:.2f}x (models/reference_figures.csv)"
    )


SIZING_CONSTRAINTS = ("none", "debt_share", "dscr", "ltv")
"""What limits a sized loan; the index of a name is its code in the summary's
`debt_sizing_constraint` (0: no debt sized, 1: the debt_share cap on gearing, 2: the minimum DSCR,
3: the maximum loan-to-value)."""


def draws_usd(balance_usd, principal_usd, added_usd=0.0):
    """Loan draws by month from the financing identity B_m = B_(m-1) + draw_m + added_m - P_m:

        draw_m = B_m - B_(m-1) + P_m - added_m      (B_(-1) = 0)

    with `added` the interest added to the balance rather than paid (capitalized during
    construction, or deferred where the service falls short) [USD, array (..., T)].

    Parameters
    ----------
    balance_usd : array (..., T)  debt outstanding at month end [USD]
    principal_usd : array (..., T)  principal repaid [USD]
    added_usd : array (..., T) or 0  interest added to the balance [USD]
    """
    balance = np.asarray(balance_usd, dtype=float)
    return np.diff(balance, axis=-1, prepend=0.0) + principal_usd - added_usd


def cfads_net_of_shortfalls(cfads_usd):
    """CFADS of each month less the shortfalls of earlier months not yet made up [USD].

    A month with negative CFADS leaves a shortfall that the following months make up before any of
    their CFADS counts toward debt service (as a debt service reserve is replenished first):
    A_m = max(0, CFADS_m - S_(m-1)), S_m = max(0, S_(m-1) - CFADS_m), S_0 = 0. Debt service of
    A_m / target then keeps the monthly DSCR, and every trailing-window DSCR ending in a month
    with debt service, at or above the target: over a window, sum CFADS = sum A + S_before - S_m,
    and S_m = 0 where A_m > 0. A window ending in a month still making up a shortfall (S_m > 0,
    no service) can fall below it; the covenant tests such a window too
    (`covenant_test_months`), and `size_debt` sizes the loan to it.

    Parameters
    ----------
    cfads_usd : array (n, T)  cash flow available for debt service [USD]

    Returns
    -------
    array (n, T)  [USD], 0 <= A_m <= max(CFADS_m, 0)
    """
    cfads = np.asarray(cfads_usd, dtype=float)
    out = np.maximum(cfads, 0.0)  # a row never short is its CFADS floored at 0
    short = np.flatnonzero(~(cfads >= 0).all(axis=1))  # (NaN too: it carries forward)
    if short.size == 0:
        return out
    rows = cfads[short]
    made_up = np.zeros_like(rows)
    shortfall = np.zeros(len(short))
    for m in range(rows.shape[1]):
        net = rows[:, m] - shortfall
        made_up[:, m] = np.maximum(net, 0.0)
        shortfall = np.maximum(-net, 0.0)
    out[short] = made_up
    return out


BALANCE_SCHEDULE_MAX_MONTHS = 600
"""Longest financing.balance_schedule [months]."""


def balance_schedule_error(shares, rate_annual: float, effective: bool = False) -> str | None:
    """Why closing balances cannot be a loan's (financing.balance_schedule), or None.

    The balances B_1..B_K are shares of the amount drawn in month 0 (B_0 = 1): at least 0, ending
    at 0, and each at most the opening balance with its interest, B_m <= B_(m-1) (1 + i), since
    the month's service B_(m-1) (1 + i) - B_m cannot be negative. `rate_annual` is quoted nominal
    (i = r / 12) unless `effective` ((1 + r)^(1/12) - 1).
    """
    from econ.units import monthly_rate, nominal_monthly_rate

    b = np.asarray(shares, dtype=float)
    if b.size > BALANCE_SCHEDULE_MAX_MONTHS:
        return f"lists {b.size} months; expected at most {BALANCE_SCHEDULE_MAX_MONTHS}"
    bad = ~np.isfinite(b) | (b < 0)
    if bad.any():
        return (
            f"holds {b[bad][0]} in month {int(np.argmax(bad)) + 1}; expected balances of at least 0"
        )
    if b[-1] != 0:
        return f"ends at {b[-1]:g}; expected 0, the loan repaid by the end of the list"
    i = float(monthly_rate(rate_annual) if effective else nominal_monthly_rate(rate_annual))
    ceiling = np.concatenate([[1.0], b[:-1]]) * (1.0 + i)
    over = b > ceiling * (1 + 1e-12)
    if over.any():
        m = int(np.argmax(over))
        return (
            f"rises to {b[m]:g} in month {m + 1}, above the opening balance with its interest "
            f"({ceiling[m]:.6g} at {i:.6g} a month); expected at most that (no negative service)"
        )
    return None


def balance_schedule_table(schedules) -> np.ndarray:
    """Scenarios' balance schedules as one array (n, K), padded with NaN (K at least 1)."""
    width = max([1] + [len(s) for s in schedules])
    table = np.full((len(schedules), width), np.nan)
    for row, schedule in enumerate(schedules):
        table[row, : len(schedule)] = schedule
    return table


def scheduled_balance_loan(balance_shares, rate_monthly, months, last_month):
    """Per USD of debt drawn in month 0: the lines of a loan that follows given closing balances.

    With B_0 = 1, B_m the schedule's share for months 1..K and 0 after it:

        I_m  = B_(m-1) i                        interest accrued
        DS_m = B_(m-1) (1 + i) - B_m            debt service (>= 0: balance_schedule_error)
        paid_m = min(I_m, DS_m)                 interest paid in cash; I_m - paid_m is added
        principal_m = DS_m - paid_m             to the balance (deferred)

    In `last_month` (the horizon) a balance still owed is repaid as a settlement (not debt
    service), and nothing is owed after it.

    Parameters
    ----------
    balance_shares : array (n, K)  B_1..B_K, padded with NaN [fraction of the amount drawn]
    rate_monthly : array (n,)  [1/month]
    months : array (T,)  0, 1, ..., T-1
    last_month : array (n,)

    Returns
    -------
    dict of arrays (n, T) per USD drawn: ``interest``, ``paid`` (cash interest), ``principal``,
    ``service``, ``balance``, ``settlement``.

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.5 (a debt-service
    profile fixed at financial close, against which cover ratios are then tested).
    """
    shares = np.asarray(balance_shares, dtype=float)
    rate = np.asarray(rate_monthly, dtype=float)[:, None]
    m = np.asarray(months)[None, :]
    n, T = shares.shape[0], m.shape[1]
    balance = np.zeros((n, T))
    balance[:, 0] = 1.0
    k = min(shares.shape[1], T - 1)
    balance[:, 1 : 1 + k] = np.nan_to_num(shares[:, :k])
    opening = np.concatenate([balance[:, :1], balance[:, :-1]], axis=1)
    live = (m >= 1) & (m <= np.asarray(last_month)[:, None])
    interest = np.where(live, opening * rate, 0.0)
    service = np.where(live, opening + interest - balance, 0.0)
    last = m == np.asarray(last_month)[:, None]
    settlement = np.where(last, balance, 0.0)
    balance = np.where(m >= np.asarray(last_month)[:, None], 0.0, balance)
    paid = np.minimum(interest, service)
    return {
        "interest": interest,
        "paid": paid,
        "principal": service - paid,
        "service": service,
        "balance": balance,
        "settlement": settlement,
    }


def sculpted_schedule(cfads_usd, rate_monthly, tenor_months):
    """Debt service and balance of a loan of 1 USD drawn in month 0 and sculpted to CFADS.

    Sculpting sets each month's debt service in proportion to the CFADS available then (net of
    earlier shortfalls, `cfads_net_of_shortfalls`), over months 1..N of the tenor; the loan the
    service repays is its present value at the loan rate:

        DS_m = A_m / DSCR*,   D = sum_(m=1..N) DS_m (1+i)^-m,

    so a loan of D has DSCR = DSCR* in every month with service. Per USD of debt the service is
    A_m / PV(A) and the balance after month m is the PV of the service still to come,
    B_m = sum_(k>m) DS_k (1+i)^-(k-m), exactly 0 from month N on. Where A_m is below the interest
    due, the interest not paid is added to the balance (B_m > B_(m-1), capitalized interest).
    With constant CFADS the service is level and the loan is an annuity (PMT).

    Parameters
    ----------
    cfads_usd : array (n, T)  CFADS by month, month 0 first [USD]
    rate_monthly : array (n,)  loan rate [1/month]
    tenor_months : array (n,)  months of debt service N (from month 1) [months]

    Returns
    -------
    dict
        ``service_per_usd`` (n, T) [USD per USD of debt], ``balance_per_usd`` (n, T),
        ``pv_usd`` (n,): PV of the CFADS available over the tenor (D = pv_usd / DSCR*) [USD].

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.5 (debt-service
    profile; sculpting: the repayment schedule set so that ADSCR is constant); Gatti, S., *Project Finance
    in Theory and Practice*, 3rd ed. (2018), section 5.6.2 (sculpted repayment, debt sized as the
    PV of CFADS / target DSCR at the cost of debt).
    """
    cfads = np.asarray(cfads_usd, dtype=float)
    n, T = cfads.shape
    m = np.arange(T)[None, :]
    (rate,) = common_row(np.broadcast_to(np.asarray(rate_monthly, dtype=float), (n,)))
    tenor = np.broadcast_to(np.asarray(tenor_months, dtype=float), (n,))[:, None]
    available = np.where((m >= 1) & (m <= tenor), cfads_net_of_shortfalls(cfads), 0.0)
    discount = np.exp(-m * np.log1p(rate[:, None]))  # (1+i)^-m, one row where all rates agree
    pv = (available * discount).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        service = np.where(pv[:, None] > 0, available / pv[:, None], 0.0)
        # B_m = (sum_(k>m) DS_k v^k) / v^m: the PV at m of the service still to come.
        weighted = service * discount
        later = remaining_sum_months(weighted) - weighted
        balance = np.where(pv[:, None] > 0, later / discount, 0.0)
    balance = np.where(m >= tenor, 0.0, balance)
    return {"service_per_usd": service, "balance_per_usd": balance, "pv_usd": pv}


SIZING_TIE = 1e-12
"""Relative gap within which two sizing limits are one (`size_debt`'s binding constraint)."""


def covenant_test_months(
    service_usd,
    balance_usd,
    test_months=1,
    first_test_month=None,
    owed_usd=0.0,
    window_service_usd=None,
) -> np.ndarray:
    """The months a DSCR covenant tests (n, T) [bool]: each month of the loan's life (debt
    service paid in it, or debt outstanding at its start) whose trailing window of
    ``test_months`` holds debt service, from ``first_test_month`` on.

    A trailing-window ratio (a facility's "last twelve months" test) is defined in every such
    month whether or not a payment falls in the month itself, so breaches are counted by the
    month and do not depend on when the coupons fall: notes paying semi-annual coupons are
    tested each month on the coupons of their window, as a loan paying monthly is. With a
    one-month window the tested months are the months with debt service. Months after the loan
    is repaid are not tested (no covenant outlives its loan), nor months whose window holds no
    service. The covenant test (`econ.capital.coverage_ratios`) and the sizing to it
    (`size_debt`) both take their months from here.

    Parameters
    ----------
    service_usd : array (n, T)  debt service by month, month 0 first [USD, or USD per USD]
    balance_usd : array (n, T)  debt outstanding at month end [same unit]
    test_months : int or array (n,)  the covenant's trailing window [months]
    first_test_month : array (n,), optional  the first month tested (a facility's first test
        date); NaN or None: from month 0 [month index]
    owed_usd : amounts above it are owed [same unit] (the covenant test: 1e-6 USD; the sizing,
        per USD of debt: 0)
    window_service_usd : array (n, T), optional  the service's trailing sums over
        ``test_months``, `trailing_sum_rows(service_usd, test_months)`, where the caller has
        them for its ratios (computed here otherwise) [same unit]

    Returns
    -------
    array (n, T) of bool

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.3 (cover ratios
    calculated for each calculation period over the debt's life); Gatti (2018), section 5.6.
    """
    service = np.asarray(service_usd, dtype=float)
    balance = np.asarray(balance_usd, dtype=float)
    n, T = service.shape
    owed = service > owed_usd
    opening = np.concatenate([np.zeros((n, 1)), balance[:, :-1]], axis=1)
    windows = np.maximum(np.broadcast_to(np.asarray(test_months, dtype=np.int64), (n,)), 1)
    if (windows == 1).all():
        held = owed
    else:
        if window_service_usd is None:
            window_service_usd = trailing_sum_rows(service, windows)
        held = np.asarray(window_service_usd, dtype=float) > owed_usd
    tested = held & (owed | (opening > owed_usd))
    if first_test_month is not None:
        first = np.broadcast_to(np.asarray(first_test_month, dtype=float), (n,))
        tested &= np.arange(T)[None, :] >= np.nan_to_num(first, nan=0.0)[:, None]
    return tested


def size_debt(
    cfads_usd,
    service_per_usd,
    balance_per_usd,
    min_dscr,
    cap_usd,
    test_months=1,
    value_usd=None,
    max_ltv=None,
    first_test_month=None,
    limits=None,
):
    """The largest loan whose schedule keeps DSCR and LTV within the lenders' limits [USD].

    A loan's service and balance scale with its amount D, so each limit gives D in closed form:

    - DSCR: CFADS_m >= DSCR* x D x s_m in every month m with service s_m > 0, and the same over
      the trailing window of ``test_months`` in every month the covenant tests
      (`covenant_test_months`: each month of the loan's life whose window holds service, from
      ``first_test_month`` on), so
      D_dscr = min_m min(CFADS_m / (DSCR* s_m), sum_w CFADS / (DSCR* sum_w s)), at least 0;
    - LTV: D x b_m <= LTV_max x V_m in every month with a balance b_m > 0 per USD, against the
      collateral value V (the GPUs' book value): D_ltv = min_m LTV_max V_m / b_m;
    - the gearing cap D_cap (financing.debt_share x capex).

    D = min(D_cap, D_dscr, D_ltv), and the binding constraint is the one that gives D (ties, to a
    relative SIZING_TIE, go to the cap, then DSCR). Rows with DSCR* NaN are not sized by DSCR,
    LTV_max NaN not by LTV. A schedule with no month of service (s = 0 throughout: a loan sculpted
    to a cash flow never positive over the term) would never be repaid, so D_dscr = 0 there, DSCR*
    given or not.

    Parameters
    ----------
    cfads_usd : array (n, T)  CFADS by month [USD]
    service_per_usd, balance_per_usd : arrays (n, T)  the loan's debt service and closing balance
        per USD borrowed (level payment: PMT and the annuity balance; sculpted: sculpted_schedule)
    min_dscr : array (n,)  target minimum DSCR [x]; NaN: no DSCR sizing
    cap_usd : array (n,)  largest loan allowed whatever the cover [USD]
    test_months : int or array (n,)  trailing window of the DSCR covenant [months]
    value_usd : array (n, T), optional  collateral value by month [USD]
    max_ltv : array (n,), optional  maximum loan-to-value [fraction]; NaN: none
    first_test_month : array (n,), optional  first month the covenant's window is tested (a
        facility's first test date); NaN or None: every month [month index]
    limits : tuple, optional  `dscr_limits` of these arguments, where the caller has them (it
        passes them to `dscr_binding_test` too)

    Returns
    -------
    debt_usd : array (n,)  [USD]
    constraint : int array (n,)  code in SIZING_CONSTRAINTS (0 where the loan is 0 for want of a
        cap, i.e. cap_usd = 0)

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.3 (debt-cover
    ratios: ADSCR, and the debt they size) and §12.5 (debt-service profile); Gatti (2018),
    section 5.6.
    """
    cfads = np.asarray(cfads_usd, dtype=float)
    service = np.asarray(service_per_usd, dtype=float)
    n, _ = cfads.shape
    target = np.broadcast_to(np.asarray(min_dscr, dtype=float), (n,))[:, None]
    cap = np.array(np.broadcast_to(np.asarray(cap_usd, dtype=float), (n,)), dtype=float)
    owed = service > 0
    if limits is None:
        limits = _dscr_limits(
            cfads, service, balance_per_usd, target, test_months, first_test_month
        )
    by_month, by_window = limits
    d_dscr = np.maximum(np.minimum(by_month, by_window).min(axis=1, initial=np.inf), 0.0)
    d_dscr = np.where(np.isnan(target[:, 0]), np.inf, d_dscr)
    # A schedule with no service at all (sculpted to a cash flow that is never positive over
    # the term) would never repay the loan: it carries none.
    d_dscr = np.where(owed.any(axis=1), d_dscr, 0.0)
    d_ltv = np.full(n, np.inf)
    if value_usd is not None and max_ltv is not None:
        ltv = np.broadcast_to(np.asarray(max_ltv, dtype=float), (n,))
        by_value = _ltv_limits(balance_per_usd, value_usd, ltv)
        d_ltv = np.where(np.isnan(ltv), np.inf, by_value.min(axis=1, initial=np.inf))
    debt = np.minimum(cap, np.minimum(d_dscr, d_ltv))
    # Ties, within rounding (a limit one ulp away in another batch's arithmetic), go to the cap,
    # then DSCR: the constraint named must not depend on which rows share the batch.
    reached = debt * (1.0 + SIZING_TIE)
    constraint = np.select([cap <= 0, reached >= cap, reached >= d_dscr], [0, 1, 2], 3)
    return debt, constraint.astype(np.int64)


def _ltv_limits(balance_per_usd, value_usd, max_ltv):
    """The debt each month's LTV test allows (n, T) [USD]: LTV_max V_m / b_m in the months with
    a balance b_m > 0 per USD owed (the rest inf), against the collateral V floored at 0; NaN
    in those months of a row with no limit (`max_ltv` NaN)."""
    balance = np.asarray(balance_per_usd, dtype=float)
    ltv = np.broadcast_to(np.asarray(max_ltv, dtype=float), (balance.shape[0],))[:, None]
    value = np.maximum(np.asarray(value_usd, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(balance > 0, ltv * value / balance, np.inf)


def ltv_binding_month(balance_per_usd, value_usd, max_ltv):
    """The month whose LTV test gives `size_debt`'s D_ltv (n,) [month index]: the first that
    allows no debt where one does (the collateral worth nothing while the loan is owed), else
    the one that allows least; NaN where no month limits the debt (no LTV limit, or no balance).

    Parameters are `size_debt`'s (`value_usd`, `max_ltv`: the collateral and the limit).
    """
    limit = _ltv_limits(balance_per_usd, value_usd, max_ltv)
    n = limit.shape[0]
    limited = np.where(np.isnan(limit), np.inf, limit)
    none = limited <= 0
    month = np.where(none.any(axis=1), np.argmax(none, axis=1), np.argmin(limited, axis=1))
    binds = np.isfinite(limited[np.arange(n), month])
    return np.where(binds, month, np.nan)


def dscr_limits(
    cfads_usd, service_per_usd, balance_per_usd, min_dscr, test_months=1, first_test_month=None
):
    """The debt each DSCR test allows, (n, T) each [USD]: each month's own and its trailing
    window's (`_dscr_limits`), which `size_debt` and `dscr_binding_test` both read; parameters
    are `size_debt`'s."""
    cfads = np.asarray(cfads_usd, dtype=float)
    target = np.broadcast_to(np.asarray(min_dscr, dtype=float), (cfads.shape[0],))[:, None]
    service = np.asarray(service_per_usd, dtype=float)
    return _dscr_limits(cfads, service, balance_per_usd, target, test_months, first_test_month)


def _dscr_limits(cfads, service, balance, target, test_months, first_test_month):
    """The debt each DSCR test allows (n, T) each [USD]: each month's own, where it has
    service (the rest inf), and its trailing window's, where the covenant tests it; `target`
    (n, 1)."""
    window_cfads = trailing_sum_rows(cfads, test_months)
    window_service = trailing_sum_rows(service, test_months)
    tested = covenant_test_months(
        service, balance, test_months, first_test_month, window_service_usd=window_service
    )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        by_month = np.where(service > 0, cfads / (target * service), np.inf)
        by_window = np.where(tested, window_cfads / (target * window_service), np.inf)
    return by_month, by_window


def dscr_binding_test(
    cfads_usd,
    service_per_usd,
    balance_per_usd,
    min_dscr,
    test_months=1,
    first_test_month=None,
    limits=None,
):
    """The DSCR test that gives `size_debt`'s D_dscr: the month it ends in, its months, and
    whether that month has service of its own (n,) each.

    Parameters are `size_debt`'s (`limits`: its `dscr_limits`, where the caller has them).
    Returns ``month`` (the month tested, the first whose test
    allows no debt where one does; NaN where no test limits the debt: no DSCR target, or no
    month of service), ``window_months`` (``test_months`` where
    the trailing window binds, allowing less debt than any month alone, beyond SIZING_TIE; 1
    where a month alone does, or months and windows tie) and ``served`` (bool: service is due
    in that month itself).
    """
    cfads = np.asarray(cfads_usd, dtype=float)
    service = np.asarray(service_per_usd, dtype=float)
    n, _ = cfads.shape
    target = np.broadcast_to(np.asarray(min_dscr, dtype=float), (n,))[:, None]
    if limits is None:
        limits = _dscr_limits(
            cfads, service, balance_per_usd, target, test_months, first_test_month
        )
    by_month, by_window = limits
    limit = np.where(
        np.isnan(np.minimum(by_month, by_window)), np.inf, np.minimum(by_month, by_window)
    )
    rows = np.arange(n)
    # Where a test allows no debt, the first such: any one of them leaves the loan at 0.
    none = limit <= 0
    month = np.where(none.any(axis=1), np.argmax(none, axis=1), np.argmin(limit, axis=1))
    binds = np.isfinite(limit[rows, month]) & ~np.isnan(target[:, 0])
    windows = np.broadcast_to(np.asarray(test_months, dtype=float), (n,))
    # A window binds where it allows less than any month alone, beyond rounding (a loan sculpted
    # to the CFADS ties every month and window: no one of them binds), or no debt where its
    # month alone allows some.
    lowest = by_month.min(axis=1, initial=np.inf)
    gap = SIZING_TIE * np.maximum(np.abs(lowest), 1.0)
    window = np.where(
        none.any(axis=1),
        by_month[rows, month] > 0,
        by_window[rows, month] < lowest - gap,
    )
    return {
        "month": np.where(binds, month, np.nan),
        "window_months": np.where(window, np.maximum(windows, 1.0), 1.0),
        "served": service[rows, month] > 0,
    }


def _col(x):
    x = np.asarray(x, dtype=float)
    return x[:, None] if x.ndim == 1 else x


def _row(x, n, default):
    if x is None:
        return np.full(n, default, dtype=float)
    return np.array(np.broadcast_to(np.asarray(x, dtype=float), (n,)), dtype=float)


__all__ = [
    "BALANCE_SCHEDULE_MAX_MONTHS",
    "DAY_COUNT_ACCRUAL",
    "DAY_COUNTS",
    "DSCR_FLOOR_TYPICAL",
    "INTERPOLATIONS",
    "REPAYMENTS",
    "balance_schedule_error",
    "balance_schedule_table",
    "SIZING_CONSTRAINTS",
    "cfads_net_of_shortfalls",
    "choice_codes",
    "common_row",
    "coupon_schedule",
    "covenant_test_months",
    "dscr_binding_test",
    "dscr_floor_warning",
    "effective_interest",
    "floating_rate_annual",
    "index_rate_annual",
    "level_payment_balance",
    "level_payment_schedule",
    "loan_schedule",
    "ltv_binding_month",
    "scheduled_balance_loan",
    "sculpted_schedule",
    "size_debt",
]
