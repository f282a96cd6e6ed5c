"""Depreciation schedules, monthly and vectorized over a leading scenario axis.

This module owns the depreciation methods (book and tax), their registry, how annual methods are
prorated to months, assets placed in service in batches, the change of estimate (a new useful life
from a given month), retirement and disposal, and the IRS MACRS GDS percentage tables it reads
from ``models/``.

Shapes and conventions
----------------------
* Schedules are arrays ``(n, T)`` over months ``0..T-1``; month 0 is the purchase month. An asset
  is depreciated from its in-service month ``s`` (default 1): month ``m`` is the asset's month of
  age ``a = m - s`` (0-based), and its ``k``-th year (1-based) is ages ``12(k-1) .. 12k - 1``.
* Every per-scenario argument broadcasts to ``(n,)``; costs are positive [USD].
* The depreciable base is ``cost - salvage``. Each schedule sums to it over the useful life
  (MACRS: to the cost, as the IRS tables ignore salvage).
* **Monthly proration of annual methods**: the amount of the asset's year ``k`` is spread evenly
  over the 12 months of that year; a fractional final year (a life of 5.5 years) is spread over
  the months it covers, with a fractional last month when the life is not a whole number of
  months. This is what the spreadsheet's VDB returns for fractional periods (the covered share of
  each period), so ``VDB(cost, salvage, life, a/12, (a+1)/12)`` equals the declining-balance
  schedule of month ``a``.
* **MACRS follows tax years** (IRS Pub 946 ch. 4): the table's year-``k`` percentage is the
  deduction of the ``k``-th tax year, the one holding the in-service month being the first (its
  half-year or mid-quarter convention is what makes that year partial). Tax years are econ.tax's,
  12-month blocks of projection months from month 1 (month 0 joins the first), located by the
  projection month of the purchase (``purchase_month``). A tax year's deduction is spread evenly
  over its months in service: from the in-service month to the year's end in the first, all 12
  later. A bonus share is deducted in the in-service month.
* **Assets placed in service in batches** (a fleet's deployment ramp, :func:`schedule_batches`):
  each batch, a share of the cost, is depreciated from its own in-service month, and the
  schedule is the sum of the batches'.
* Bad arguments raise :class:`DepreciationError` (an :class:`econ.errors.InputError`) naming the
  argument, the row, the value received and what was expected.

References
----------
.. [1] Microsoft Support, Excel functions SLN, SYD, DB, DDB, VDB; OpenFormula v1.2 Part 2, 6.12.
.. [2] IRS Publication 946 (2024), *How To Depreciate Property*, ch. 4 and Appendix A, Tables A-1
   to A-5.
.. [3] FASB ASC 360-10-35 (depreciation, impairment of long-lived assets); ASC 250-10-45-17
   (a change in accounting estimate is accounted for prospectively).
.. [4] Hotelling, H. (1925), "A general mathematical theory of depreciation", *Journal of the
   American Statistical Association* 20(151), 340-353 (economic depreciation as the fall in the
   asset's market value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from econ import excel
from econ.arrays import cumsum_months, snap_to_zero
from econ.errors import InputError
from econ.tax import tax_year_index
from econ.units import MONTHS_PER_YEAR

__all__ = [
    "CHANGE_OF_ESTIMATE_METHODS",
    "MACRS_CONVENTIONS",
    "MACRS_RECOVERY_YEARS",
    "METHODS",
    "METHOD_NAMES",
    "DepreciationError",
    "Disposal",
    "MethodSettings",
    "book_value",
    "custom",
    "declining_balance",
    "describe_method",
    "dispose",
    "economic",
    "first_tax_year_usd",
    "fixed_declining_balance",
    "half_year_in_last_quarter",
    "macrs_gds",
    "macrs_percent",
    "macrs_quarter",
    "refuse_mid_quarter_mismatch",
    "schedule",
    "schedule_batches",
    "schedule_mixed",
    "straight_line",
    "straight_line_monthly",
    "sum_of_years_digits",
    "units_of_production",
    "value_share_from_table",
    "yearly_totals",
]

METHODS: dict[str, str] = {
    "straight_line": "equal amounts over the useful life (spreadsheet SLN)",
    "declining_balance": "factor / life of the remaining book value per year, switching to "
    "straight line when that is larger unless switch_to_straight_line is false (spreadsheet VDB)",
    "fixed_declining_balance": "fixed rate 1 - (salvage/cost)^(1/life) rounded to 3 decimals, "
    "first year of first_year_months months (spreadsheet DB)",
    "sum_of_years_digits": "(life - k + 1) / (life (life + 1) / 2) of the base in year k "
    "(spreadsheet SYD)",
    "units_of_production": "base x this month's usage / usage over the life (tokens or GPU-hours)",
    "macrs_gds": "IRS MACRS GDS percentage tables (3, 5, 7-year; half-year or mid-quarter), "
    "with a bonus share",
    "economic": "fall in the asset's market value (a value table or a price path)",
    "custom": "a list of annual percentages of the base that sums to 100",
}
"""Registry of depreciation methods: name -> one-line description."""

METHOD_NAMES: tuple[str, ...] = tuple(METHODS)
"""Method names in registry order (the scenario's Literal choices follow this order)."""

CHANGE_OF_ESTIMATE_METHODS = (
    "straight_line",
    "declining_balance",
    "sum_of_years_digits",
    "units_of_production",
)
"""Methods whose useful life can be changed prospectively (ASC 250); the others have no life to
change (MACRS recovery periods are statutory, custom and economic schedules carry their own)."""

MACRS_RECOVERY_YEARS = (3, 5, 7)
"""GDS property classes the tables cover [years]; computers and GPUs are 5-year property."""

MACRS_CONVENTIONS = (
    "half-year",
    "mid-quarter Q1",
    "mid-quarter Q2",
    "mid-quarter Q3",
    "mid-quarter Q4",
)
"""Conventions of IRS Pub 946 Tables A-1 (half-year) and A-2 to A-5 (mid-quarter, by the quarter
of the tax year the property is placed in service)."""


_REL_TOL = 1e-9  # relative tolerance for "equal" money amounts and "whole" numbers


class DepreciationError(InputError):
    """Invalid depreciation input: the message names the argument, the value and what was expected."""


# ---------------------------------------------------------------------------------------------
# argument handling
# ---------------------------------------------------------------------------------------------


def _rows(value, n: int, name: str, dtype=float) -> np.ndarray:
    """``value`` broadcast to ``(n,)``."""
    arr = np.asarray(value, dtype=dtype)
    try:
        return np.broadcast_to(arr, (n,)).copy()
    except ValueError:
        raise DepreciationError(
            f"{name} must be a scalar or one value per scenario ({n}), got shape {arr.shape}"
        ) from None


def _refuse(bad, name: str, values, expected: str, column: str = "month", first: int = 0) -> None:
    """Raise DepreciationError quoting the first place where ``bad`` holds.

    ``bad`` of shape (n,) is located by its scenario row; of shape (n, K) by its row and its
    column, named ``column`` and numbered from ``first`` (month 0 of an (n, T) schedule, year 1
    of annual percentages). (The flat index was quoted as a scenario row before: a negative usage
    in month 2 of one scenario read "usage = -2 (scenario row 2)".)
    """
    bad = np.asarray(bad)
    if bad.any():
        flat = int(np.flatnonzero(bad.reshape(-1))[0])
        value = np.broadcast_to(np.asarray(values), bad.shape).reshape(-1)[flat]
        places = []
        if bad.ndim == 2:
            row, col = divmod(flat, bad.shape[1])
            if bad.shape[0] > 1:
                places.append(f"scenario row {row}")
            places.append(f"{column} {first + col}")
        elif bad.size > 1:
            places.append(f"scenario row {flat}")
        where = f" ({', '.join(places)})" if places else ""
        raise DepreciationError(f"{name} = {_fmt(value)}{where}: expected {expected}")


def _fmt(value) -> str:
    try:
        return f"{float(value):.12g}"
    except (TypeError, ValueError):
        return repr(value)


def _months(months) -> np.ndarray:
    m = np.asarray(months)
    if m.ndim != 1 or m.size == 0:
        raise DepreciationError(f"months must be a non-empty 1-d array, got shape {m.shape}")
    if not np.all(m == np.rint(m)):
        raise DepreciationError("months must be whole month indices (0 = purchase month)")
    m = m.astype(np.int64)
    if m.size > 1 and not np.all(np.diff(m) == 1):
        raise DepreciationError("months must be consecutive month indices, e.g. 0, 1, ..., T-1")
    return m


def _check_cost(cost: np.ndarray) -> None:
    _refuse(~np.isfinite(cost), "cost_usd", cost, "a finite amount [USD]")
    _refuse(cost < 0, "cost_usd", cost, "a cost of at least 0 [USD]")


def _check_salvage(salvage: np.ndarray, cost: np.ndarray) -> None:
    _refuse(~np.isfinite(salvage), "salvage_usd", salvage, "a finite amount [USD]")
    _refuse(salvage < 0, "salvage_usd", salvage, "a salvage value of at least 0 [USD]")
    _refuse(
        salvage > cost * (1 + _REL_TOL),
        "salvage_usd",
        salvage,
        "a salvage value at most the cost [USD]",
    )


def _check_life(life_years: np.ndarray) -> None:
    _refuse(~(life_years > 0), "life_years", life_years, "a useful life above 0 [years]")
    _refuse(~np.isfinite(life_years), "life_years", life_years, "a finite useful life [years]")


def _check_in_service(in_service: np.ndarray) -> None:
    _refuse(
        ~(in_service >= 1) | (in_service != np.rint(in_service)),
        "in_service_month",
        in_service,
        "a whole month of at least 1 (month 0 is the purchase month)",
    )


def _prepare(cost_usd, salvage_usd, life_years, in_service_month):
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    if cost.ndim != 1:
        raise DepreciationError(f"cost_usd must be one value per scenario, got shape {cost.shape}")
    n = cost.shape[0]
    salvage = _rows(salvage_usd, n, "salvage_usd")
    life = _rows(life_years, n, "life_years")
    s = _rows(in_service_month, n, "in_service_month")
    _check_cost(cost)
    _check_salvage(salvage, cost)
    _check_life(life)
    _check_in_service(s)
    return cost, np.minimum(salvage, cost), life, s.astype(np.int64)


def _ages(months: np.ndarray, in_service: np.ndarray) -> np.ndarray:
    """Age of each month since the in-service month, (n, T): 0 in the in-service month [months]."""
    return months[None, :] - in_service[:, None]


# ---------------------------------------------------------------------------------------------
# proration: from period amounts to months
# ---------------------------------------------------------------------------------------------


def _interp_rows(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Row-wise piecewise-linear interpolation, constant outside ``xp`` (np.interp per row).

    x : (n, T); xp, fp : (n, K) with each row of xp non-decreasing.
    """
    k = xp.shape[1]
    if k == 1:
        return np.broadcast_to(fp, x.shape).copy()
    # Index of the last breakpoint <= x, counted column by column to keep memory at (n, T).
    j = np.full(x.shape, -1, dtype=np.int64)
    for col in range(k):
        j += xp[:, col : col + 1] <= x
    j = np.clip(j, 0, k - 2)
    x0 = np.take_along_axis(xp, j, axis=1)
    x1 = np.take_along_axis(xp, j + 1, axis=1)
    f0 = np.take_along_axis(fp, j, axis=1)
    f1 = np.take_along_axis(fp, j + 1, axis=1)
    width = x1 - x0
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(width > 0, (x - x0) / np.where(width > 0, width, 1.0), 1.0)
    return f0 + np.clip(frac, 0.0, 1.0) * (f1 - f0)


def _spread(amounts, ages, covered_months, offset=None) -> np.ndarray:
    """Spread period amounts evenly over the months of each period.

    Periods are 12 months long in a shifted age ``a' = age + offset``: period ``k`` (0-based)
    covers ``[12k, 12k + 12)`` intersected with ``[offset, offset + covered_months)``, so the
    first period has ``12 - offset`` months (DB's short first year) and the last is cut where the
    covered months end (a fractional life). A month partly inside takes its covered share.

    Parameters
    ----------
    amounts : (n, P)  amount of each period [USD]
    ages : (n, T)  age of each month since the in-service month [months]
    covered_months : (n,)  months the periods cover in total [months]
    offset : (n,) or None  months missing from the first period, 0 to 11 [months]

    Returns
    -------
    (n, T)  the amount falling in each month [USD]
    """
    n, periods = amounts.shape
    o = np.zeros((n, 1)) if offset is None else np.asarray(offset, dtype=float)[:, None]
    end = o + np.asarray(covered_months, dtype=float)[:, None]
    shifted = ages + o
    inside = np.clip(np.minimum(shifted + 1.0, end) - np.maximum(shifted, o), 0.0, 1.0)
    k = np.clip(np.floor(shifted / MONTHS_PER_YEAR), 0, periods - 1).astype(np.int64)
    first_month = MONTHS_PER_YEAR * k
    months_in_period = np.clip(
        np.minimum(first_month + MONTHS_PER_YEAR, end) - np.maximum(first_month, o),
        0.0,
        MONTHS_PER_YEAR,
    )
    amount = np.take_along_axis(amounts, k, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(inside > 0, amount * inside / months_in_period, 0.0)


def _n_years(life_years: np.ndarray) -> int:
    return max(1, int(math.ceil(float(np.max(life_years)) - _REL_TOL)))


def _life_months(life_years: np.ndarray) -> np.ndarray:
    return life_years * MONTHS_PER_YEAR


# ---------------------------------------------------------------------------------------------
# methods
# ---------------------------------------------------------------------------------------------


def straight_line_monthly(cost_usd, salvage_usd, life_months, months):
    """Straight-line depreciation per month, starting in month 1 [USD/month].

    The spreadsheet's SLN((cost), (salvage), (life)) per period, with a fractional last month when the
    life is not a whole number of months, so the schedule always sums to cost - salvage.

    Parameters
    ----------
    cost_usd, salvage_usd, life_months : array (n,)  [USD], [USD], [months]
    months : array (T,)  month indices, 0 = purchase month (no depreciation)

    Returns
    -------
    array (n, T)  depreciation of each month [USD]
    """
    cost = np.asarray(cost_usd, dtype=float)[:, None]
    salvage = np.asarray(salvage_usd, dtype=float)[:, None]
    life = np.asarray(life_months, dtype=float)[:, None]
    m = np.asarray(months, dtype=float)[None, :]
    # Share of month m that lies inside the life (months 1..life); 0 for month 0.
    share = np.clip(life - (m - 1.0), 0.0, 1.0) * (m >= 1)
    return (cost - salvage) / life * share


def straight_line(cost_usd, salvage_usd, life_years, months, in_service_month=1):
    """Straight-line depreciation by month [USD, array (n, T)].

    ``(cost - salvage) / (12 life)`` in each month of the life from the in-service month, with a
    fractional last month when ``12 life`` is not whole: the monthly SLN of the spreadsheet.

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    life_years : array (n,)  useful life [years]
    months : array (T,)  consecutive month indices, 0 = purchase month
    in_service_month : array (n,)  first month depreciated [month index], default 1

    References
    ----------
    Microsoft Support, "SLN function"; ASC 360-10-35-4 (systematic and rational allocation).
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    return _straight_line(cost, salvage, life, s, _months(months))


def _straight_line(cost, salvage, life, s, months):
    ages = _ages(months, s).astype(float)
    share = np.clip(_life_months(life)[:, None] - ages, 0.0, 1.0) * (ages >= 0)
    return ((cost - salvage) / _life_months(life))[:, None] * share


def declining_balance(
    cost_usd,
    salvage_usd,
    life_years,
    months,
    factor=2.0,
    switch_to_straight_line=True,
    in_service_month=1,
):
    """Declining-balance depreciation by month, switching to straight line as VDB does [USD, (n, T)].

    Year ``k`` of the asset takes ``VDB(cost, salvage, life, k - 1, min(k, life), factor,
    no_switch)``: ``factor / life`` of the book value left, never below salvage, switching for good
    to straight line over the remaining life when that is larger (unless
    ``switch_to_straight_line`` is false). Each year's amount is spread evenly over its months.
    Without the switch a declining balance never reaches salvage; the book value left above
    salvage is then written off in the last month of the life, so the schedule still sums to
    ``cost - salvage``.

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    life_years : array (n,)  useful life [years]
    months : array (T,)  consecutive month indices, 0 = purchase month
    factor : array (n,)  rate multiplier: 2 for double declining, 1.5 for 150% [1]
    switch_to_straight_line : array (n,) of bool
    in_service_month : array (n,)  first month depreciated [month index], default 1

    References
    ----------
    Microsoft Support, "VDB function" and "DDB function"; LibreOffice ``ScVDB``.
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    n = cost.shape[0]
    f = _rows(factor, n, "factor")
    _refuse(~(f > 0) | ~np.isfinite(f), "factor", f, "a declining-balance factor above 0")
    switch = _rows(switch_to_straight_line, n, "switch_to_straight_line", dtype=bool)
    return _declining_balance(cost, salvage, life, s, _months(months), f, switch)


def _declining_balance(cost, salvage, life, s, months, factor, switch):
    n, years = cost.shape[0], _n_years(life)
    k = np.arange(1, years + 1, dtype=float)[None, :]
    start = np.minimum(k - 1.0, life[:, None])
    end = np.minimum(k, life[:, None])
    annual = excel.vdb(
        cost[:, None],
        salvage[:, None],
        life[:, None],
        start,
        end,
        factor[:, None],
        ~switch[:, None],
    )
    annual = np.asarray(annual, dtype=float).reshape(n, years)
    _true_up_last_year(annual, cost - salvage, life)
    return _spread(annual, _ages(months, s), _life_months(life))


def _true_up_last_year(annual: np.ndarray, base: np.ndarray, life: np.ndarray) -> None:
    """Put what is left of the base into the final (possibly partial) year, in place."""
    last = np.ceil(life - _REL_TOL).astype(np.int64) - 1
    rows = np.arange(annual.shape[0])
    before = np.where(np.arange(annual.shape[1])[None, :] < last[:, None], annual, 0.0).sum(1)
    annual[rows, last] = base - before
    annual[np.arange(annual.shape[1])[None, :] > last[:, None]] = 0.0


def fixed_declining_balance(
    cost_usd, salvage_usd, life_years, months, first_year_months=12, in_service_month=1
):
    """Fixed-declining-balance depreciation by month (spreadsheet DB) [USD, array (n, T)].

    The asset's periods follow DB: the first has ``first_year_months`` months and takes
    ``DB(cost, salvage, life, 1, first_year_months)``; the next ``life - 1`` are 12 months each;
    when ``first_year_months < 12`` a final period of ``12 - first_year_months`` months follows
    (DB's period ``life + 1``). Each period is spread evenly over its months. Because DB rounds its
    rate to three decimals its periods do not sum to ``cost - salvage``; the final period absorbs
    the difference so the book value ends at salvage (the only departure from the spreadsheet).

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD], cost > 0
    life_years : array (n,)  useful life, a whole number of years [years]
    months : array (T,)  consecutive month indices, 0 = purchase month
    first_year_months : array (n,)  months in the first period, 1 to 12 [months]
    in_service_month : array (n,)  first month depreciated [month index], default 1

    References
    ----------
    Microsoft Support, "DB function"; OpenFormula v1.2 Part 2, 6.12.14 DB.
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    first = _rows(first_year_months, cost.shape[0], "first_year_months")
    _refuse(
        ~((first >= 1) & (first <= 12) & (first == np.rint(first))),
        "first_year_months",
        first,
        "a whole number of months from 1 to 12",
    )
    _refuse(cost <= 0, "cost_usd", cost, "a cost above 0 for fixed_declining_balance [USD]")
    _refuse(
        np.abs(life - np.rint(life)) > _REL_TOL,
        "life_years",
        life,
        "a whole number of years for fixed_declining_balance (DB periods are years)",
    )
    return _fixed_declining_balance(cost, salvage, np.rint(life), s, _months(months), first)


def _fixed_declining_balance(cost, salvage, life, s, months, first):
    n = cost.shape[0]
    periods = int(np.max(life)) + 1
    p = np.arange(1, periods + 1, dtype=float)[None, :]
    lifec, firstc = life[:, None], first[:, None]
    # Periods past DB's last (life, or life + 1 when the first year is short) are masked to 0.
    valid = p <= lifec + (firstc < 12)
    amounts = np.asarray(
        excel.db(cost[:, None], salvage[:, None], lifec, np.where(valid, p, 1.0), firstc),
        dtype=float,
    )
    amounts = np.where(valid, amounts, 0.0)
    last = (life + (first < 12)).astype(np.int64) - 1
    # DB's rate is rounded, possibly up: cap the running total at the base so the book value
    # never falls below salvage, then let the final period take what is left.
    earlier = np.arange(periods)[None, :] < last[:, None]
    capped = np.minimum(cumsum_months(np.where(earlier, amounts, 0.0)), (cost - salvage)[:, None])
    amounts = np.where(earlier, np.diff(capped, axis=1, prepend=0.0), 0.0)
    amounts[np.arange(n), last] = cost - salvage - amounts.sum(axis=1)
    return _spread(amounts, _ages(months, s), _life_months(life), MONTHS_PER_YEAR - first)


def sum_of_years_digits(cost_usd, salvage_usd, life_years, months, in_service_month=1):
    """Sum-of-years'-digits depreciation by month [USD, array (n, T)].

    Year ``k`` takes ``SYD(cost, salvage, life, k) = (cost - salvage)(life - k + 1) /
    (life (life + 1) / 2)``, spread evenly over its months. With a fractional life the years
    ``k <= life`` follow SYD and the final partial year takes the rest of the base (the digits do
    not sum to the base then).

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    life_years : array (n,)  useful life [years]
    months : array (T,)  consecutive month indices, 0 = purchase month
    in_service_month : array (n,)  first month depreciated [month index], default 1

    References
    ----------
    Microsoft Support, "SYD function"; OpenFormula v1.2 Part 2, 6.12.44 SYD.
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    return _sum_of_years_digits(cost, salvage, life, s, _months(months))


def _sum_of_years_digits(cost, salvage, life, s, months):
    n, years = cost.shape[0], _n_years(life)
    k = np.arange(1, years + 1, dtype=float)[None, :]
    inside = k <= life[:, None] * (1 + _REL_TOL)
    # min(): a life a hair below a whole number still counts that year as inside it.
    per = np.where(inside, np.minimum(k, life[:, None]), life[:, None])
    annual = np.asarray(excel.syd(cost[:, None], salvage[:, None], life[:, None], per), float)
    annual = np.where(inside, annual.reshape(n, years), 0.0)
    _true_up_last_year(annual, cost - salvage, life)
    return _spread(annual, _ages(months, s), _life_months(life))


def units_of_production(
    cost_usd,
    salvage_usd,
    usage,
    months,
    life_years,
    in_service_month=1,
    lifetime_usage=None,
):
    """Units-of-production depreciation: the base in proportion to usage [USD, array (n, T)].

    ``(cost - salvage) · usage_m / U`` where ``usage_m`` is the month's usage (tokens or
    GPU-hours) within the useful life and ``U`` the usage expected over the life: by default the
    usage the array holds over the life, the months of the life after its last month each taking
    that month's usage, else ``lifetime_usage``. Cumulative depreciation is
    capped at the base; if the usage falls short of ``U`` the book value left above salvage is
    written off in the last month of the life. A row without usage over its life is depreciated
    straight line, so every schedule still sums to the base.

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    usage : array (n, T)  usage of each month, >= 0 [tokens or GPU-hours]
    months : array (T,)  consecutive month indices, 0 = purchase month
    life_years : array (n,)  window of months whose usage counts [years]
    in_service_month : array (n,)  first month depreciated [month index], default 1
    lifetime_usage : array (n,) or None  expected usage over the life; NaN or None: the usage
        the array holds over the life, continued at its last month's past it [same unit as usage]

    References
    ----------
    Kieso, Weygandt & Warfield, *Intermediate Accounting*, 17th ed., ch. 11 (activity method);
    IAS 16.62 (units of production method).
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    m = _months(months)
    u = _usage(usage, cost.shape[0], m.size)
    total = _rows(
        np.nan if lifetime_usage is None else lifetime_usage, cost.shape[0], "lifetime_usage"
    )
    _refuse(total <= 0, "lifetime_usage", total, "expected usage over the life above 0")
    return _units_of_production(cost, salvage, life, s, m, u, total)


def _usage(usage, n: int, t: int) -> np.ndarray:
    if usage is None:
        raise DepreciationError(
            "units_of_production needs usage: an array (n, T) of tokens or GPU-hours per month"
        )
    u = np.asarray(usage, dtype=float)
    try:
        u = np.broadcast_to(u, (n, t))
    except ValueError:
        raise DepreciationError(
            f"usage must have shape ({n}, {t}) (scenarios, months), got {u.shape}"
        ) from None
    _refuse(~np.isfinite(u) | (u < 0), "usage", u, "finite usage of at least 0 per month")
    return u


def _last_life_month(life, s):
    """Month index of the last (possibly partial) month of the life."""
    return s - 1 + np.ceil(_life_months(life) - _REL_TOL).astype(np.int64)


def _units_of_production(cost, salvage, life, s, months, usage, lifetime_usage):
    base = cost - salvage
    end = _last_life_month(life, s)
    window = (months[None, :] >= s[:, None]) & (months[None, :] <= end[:, None])
    used = np.where(window, usage, 0.0)
    # The months of the life after the last one given (a horizon, or the months a command shows,
    # shorter than the life) are not projected: they take the last month's usage. Counted as no
    # usage, a 6-year life over a 60-month projection was depreciated in full by month 60.
    beyond = np.maximum(end - months[-1], 0)
    expected = used.sum(axis=1) + beyond * used[:, -1]
    total = np.where(np.isnan(lifetime_usage), expected, lifetime_usage)
    with np.errstate(divide="ignore", invalid="ignore"):
        cumulative = np.minimum(cumsum_months(used) / total[:, None], 1.0) * base[:, None]
    cumulative = np.where(months[None, :] >= end[:, None], base[:, None], cumulative)
    schedule = np.diff(cumulative, axis=1, prepend=0.0)
    idle = ~(total > 0)
    if idle.any():
        schedule[idle] = _straight_line(cost[idle], salvage[idle], life[idle], s[idle], months)
    return schedule


def _need_tables(tables) -> dict[tuple[int, str], np.ndarray]:
    if tables is None:
        raise DepreciationError(
            "MACRS GDS depreciation needs the IRS percentage tables: pass "
            "tables=econ.catalog.macrs_gds_tables() (or tables of your own, same shape)"
        )
    return tables


def macrs_percent(recovery_years, convention, tables=None) -> np.ndarray:
    """Percentages of one MACRS GDS table [percent, array (years,)].

    `tables` as from econ.catalog.macrs_gds_tables(). Raises DepreciationError listing the valid
    recovery periods and conventions when the pair is not published in the tables.
    """
    tables = _need_tables(tables)
    key = (int(recovery_years), str(convention))
    if key not in tables:
        valid = ", ".join(f"{y}-year {c}" for y, c in sorted(tables))
        raise DepreciationError(
            f"no MACRS GDS table for recovery_years = {recovery_years!r}, convention = "
            f"{convention!r}; valid tables: {valid}"
        )
    return tables[key]


def macrs_gds(
    cost_usd,
    months,
    recovery_years=5,
    convention="half-year",
    bonus_share=0.0,
    in_service_month=1,
    tables=None,
    purchase_month=0,
    disposal_month=0,
):
    """MACRS GDS tax depreciation by month from the IRS tables, with bonus [USD, array (n, T)].

    ``bonus_share · cost`` is deducted in the in-service month (special depreciation allowance,
    IRC §168(k)); the ``k``-th tax year from the one holding the in-service month then deducts
    ``(1 - bonus_share) · cost · percent_k / 100`` from the published table (Pub 946 Table A-1
    for the half-year convention, A-2 to A-5 for the mid-quarter convention of quarters 1-4), as
    Pub 946 applies the percentages: to tax years, the convention accounting for the partial
    first year. Each tax year's deduction is spread evenly over its months in service: from the
    in-service month to the end of the first tax year, the 12 months of each later one. Tax years
    are econ.tax's (months 1-12 of the projection, 13-24, ...; month 0 joins the first); month 0
    of the schedule is projection month ``purchase_month``. A mid-quarter convention must name
    the quarter of the tax year the property is placed in service (`macrs_quarter`); another is
    refused. Salvage value is ignored, as MACRS requires.

    A disposal (``disposal_month`` ``r``, the last month of service, before the table ends) takes
    the year-of-disposal convention of Pub 946 ch. 4: the tax year holding ``r`` deducts its
    full-year amount times the part of the year the convention holds the property, half a year
    under the half-year convention, ``(3 q - 1.5) / 12`` under the mid-quarter one (disposed of in
    quarter ``q``; in the table's last year, the part of what is left to recover), spread evenly
    over that year's months to ``r``; nothing after ``r``. Property placed in service and disposed
    of in the same tax year takes no depreciation and no bonus (Treas. Reg. §1.168(d)-1(b)(3)(ii),
    §1.168(k)-2(g)(1)(i)). The year's taxable income is the same either way (the gain moves by
    what the deduction does); the split between depreciation and gain is the return's.

    Parameters
    ----------
    cost_usd : array (n,)  unadjusted basis [USD]
    months : array (T,)  consecutive month indices, 0 = purchase month
    recovery_years : int or array (n,)  3, 5 or 7 [years]; GPUs and servers are 5-year property
    convention : str or array (n,) of str  one of MACRS_CONVENTIONS
    bonus_share : array (n,)  share of the basis taken as bonus depreciation [fraction, 0..1]
    in_service_month : array (n,)  [month index], default 1
    tables : dict  (recovery_years, convention) -> percentages, as from
        econ.catalog.macrs_gds_tables() (this module reads no file)
    purchase_month : array (n,)  projection month of the schedule's month 0, which places the
        tax years [month index >= 0], default 0
    disposal_month : array (n,)  last month of service of a disposed asset; 0 = not disposed of
        within the months given [month index], default 0

    References
    ----------
    IRS Publication 946 (2024), ch. 3 (special depreciation allowance), ch. 4 ("Which Convention
    Applies?", "Using the MACRS Percentage Tables": the table's year is the tax year) and Tables
    A-1 to A-5; IRC §168(b), (c), (d), (k).
    """
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    n = cost.shape[0]
    _check_cost(cost)
    s = _rows(in_service_month, n, "in_service_month")
    _check_in_service(s)
    purchase = _rows(purchase_month, n, "purchase_month")
    _check_purchase(purchase)
    bonus = _rows(bonus_share, n, "bonus_share")
    _refuse(~((bonus >= 0) & (bonus <= 1)), "bonus_share", bonus, "a share from 0 to 1")
    years = _rows(recovery_years, n, "recovery_years", dtype=object)
    conv = _rows(convention, n, "convention", dtype=object)
    refuse_mid_quarter_mismatch(conv, s, purchase)
    disposal = _rows(disposal_month, n, "disposal_month")
    _refuse(
        ~(disposal >= 0) | (disposal != np.rint(disposal)),
        "disposal_month",
        disposal,
        "a whole month index of at least 0 (0 = not disposed of)",
    )
    return _macrs_gds(
        cost,
        s.astype(np.int64),
        _months(months),
        years,
        conv,
        bonus,
        tables,
        purchase.astype(np.int64),
        disposal.astype(np.int64),
    )


def _check_purchase(purchase: np.ndarray) -> None:
    _refuse(
        ~(purchase >= 0) | (purchase != np.rint(purchase)),
        "purchase_month",
        purchase,
        "a whole projection month of at least 0",
    )


def _months_before_in_service(in_service_month, purchase_month) -> np.ndarray:
    """Months of its tax year before the in-service month, 0 to 11 [months, array (n,)].

    The in-service month is projection month ``purchase_month + in_service_month`` (>= 1); tax
    year ``y`` (0-based) holds projection months ``12y+1 .. 12y+12`` (econ.tax).
    """
    month = np.asarray(purchase_month, dtype=np.int64) + np.asarray(in_service_month, np.int64)
    return month - 1 - MONTHS_PER_YEAR * tax_year_index(month)


def macrs_quarter(in_service_month, purchase_month=0) -> np.ndarray:
    """Quarter of its tax year in which the property is placed in service, 1 to 4 [array (n,)].

    The quarter names the mid-quarter table (IRS Pub 946 Tables A-2 to A-5): months 1-3 of the
    tax year are quarter 1, 4-6 quarter 2, and so on (econ.tax's tax years).

    Parameters
    ----------
    in_service_month : array (n,)  months since purchase [month index >= 1]
    purchase_month : array (n,)  projection month of the purchase [month index >= 0]
    """
    return _months_before_in_service(in_service_month, purchase_month) // 3 + 1


def refuse_mid_quarter_mismatch(
    convention, in_service_month, purchase_month=0, field="convention", where=None
) -> None:
    """Refuse a mid-quarter convention whose quarter is not the one the property is placed in
    service in (IRS Pub 946: the property placed in service in quarter q of the tax year takes
    Table A-(q+1)); the half-year convention applies in any quarter.

    Which convention applies (the 40% test of Pub 946 ch. 4) is the caller's choice; the quarter
    is a fact of the in-service month, so a contradiction is an input error, not a choice.

    Parameters
    ----------
    convention : array (n,) of str  names of MACRS_CONVENTIONS
    in_service_month, purchase_month : array (n,)  as for `macrs_quarter`
    field : str  the field named in the message
    where : callable row -> str, optional  text naming the row (a scenario, a vintage) that
        starts the message; default: the row number when there are several
    """
    conv = np.atleast_1d(np.asarray(convention, dtype=object))
    n = conv.shape[0]
    s = np.broadcast_to(np.asarray(in_service_month, dtype=np.int64), (n,))
    purchase = np.broadcast_to(np.asarray(purchase_month, dtype=np.int64), (n,))
    quarter = macrs_quarter(s, purchase)
    expected = np.array([f"mid-quarter Q{q}" for q in quarter.tolist()], dtype=object)
    # (an unknown name is left to macrs_percent, which lists the tables)
    mid = np.array([c != "half-year" and c in MACRS_CONVENTIONS for c in conv.tolist()], bool)
    bad = np.flatnonzero(mid & (conv != expected))
    if not bad.size:
        return
    row = int(bad[0])
    month = int(purchase[row] + s[row])
    prefix = where(row) if where is not None else (f"scenario row {row}: " if n > 1 else "")
    raise DepreciationError(
        f"{prefix}{field} = {conv[row]!r}: expected {expected[row]!r} or 'half-year': placed in "
        f"service in month {month}, month "
        f"{int(_months_before_in_service(s[row], purchase[row])) + 1} of tax year "
        f"{int(tax_year_index(month)) + 1} (12-month blocks from month 1), it is in quarter "
        f"{int(quarter[row])}, and IRS Pub 946 takes the mid-quarter table of the quarter placed "
        "in service (Tables A-2 to A-5)"
    )


def half_year_in_last_quarter(
    convention, in_service_month, purchase_month=0, shares=None
) -> np.ndarray:
    """Where the half-year convention is chosen although all of the basis is placed in service
    in the last quarter of its tax year [bool, array (n,)].

    The mid-quarter convention applies to all the property placed in service in a tax year when
    more than 40% of its depreciable basis is placed in service in the last three months of that
    year (IRC §168(d)(3); IRS Pub 946 ch. 4, "Mid-quarter convention"). This module sees one
    asset, not the taxpayer's other property of the year, so the test is not applied; but where
    every batch of the asset is placed in service in quarter 4 of its tax year, the asset alone
    would call for 'mid-quarter Q4' (Table A-5), which a caller should say.

    Parameters
    ----------
    convention : array (n,) of str  names of MACRS_CONVENTIONS
    in_service_month : array (n,) or (n, J)  each batch's in-service month, months since
        purchase [month index >= 1]
    purchase_month : array (n,)  as for `macrs_quarter`
    shares : array (n, J), optional  share of the basis in each batch; batches of share 0 are
        ignored; default: one batch, all of it
    """
    conv = np.atleast_1d(np.asarray(convention, dtype=object))
    n = conv.shape[0]
    starts = np.atleast_1d(np.asarray(in_service_month, dtype=np.int64))
    if starts.ndim == 1:
        starts = starts[:, None]
    starts = np.broadcast_to(starts, (n, starts.shape[1]))
    share = np.ones(starts.shape) if shares is None else np.asarray(shares, dtype=float)
    purchase = np.broadcast_to(np.asarray(purchase_month, dtype=np.int64), (n,))[:, None]
    placed = share > 0
    last = (macrs_quarter(starts, purchase) == 4) | ~placed
    return (conv == "half-year") & last.all(axis=1) & placed.any(axis=1)


def first_tax_year_usd(depreciation_usd, in_service_month, purchase_month=0) -> np.ndarray:
    """Deduction of the tax year holding the in-service month [USD, array (n,)].

    `depreciation_usd` (n, T) on months since purchase (month 0 = projection month
    ``purchase_month``); tax years are econ.tax's.
    """
    d = np.atleast_2d(np.asarray(depreciation_usd, dtype=float))
    purchase = np.broadcast_to(np.asarray(purchase_month, dtype=np.int64), (d.shape[0],))
    first = tax_year_index(purchase + np.asarray(in_service_month, dtype=np.int64))
    year = tax_year_index(purchase[:, None] + np.arange(d.shape[1])[None, :])
    return np.where(year == first[:, None], d, 0.0).sum(axis=1)


def _macrs_gds(cost, s, months, years, conv, bonus, tables, purchase, disposal=None):
    tables = _need_tables(tables)
    n = cost.shape[0]
    keys = list(zip(years.tolist(), conv.tolist(), strict=True))
    percents = {key: macrs_percent(key[0], key[1], tables) for key in set(keys)}
    width = max(len(p) for p in percents.values())
    table = np.zeros((n, width))
    table_years = np.zeros(n, dtype=np.int64)
    for key, pct in percents.items():  # one pass per distinct table, not per scenario
        rows = np.array([k == key for k in keys])
        table[rows, : len(pct)] = pct
        table_years[rows] = len(pct)
    annual = (cost * (1.0 - bonus))[:, None] * table / 100.0
    ages = _ages(months, s)
    # Table year k is the k-th tax year: the first holds the months from the in-service month to
    # its end (DB's short first period in _spread), each later one 12 months.
    before = _months_before_in_service(s, purchase)
    out = _spread(annual, ages, MONTHS_PER_YEAR * width - before, before)
    out += np.where(ages == 0, (cost * bonus)[:, None], 0.0)
    if disposal is not None:
        out = _macrs_disposal_year(out, annual, table_years, s, months, conv, purchase, disposal)
    return out


def _macrs_disposal_year(out, annual, table_years, s, months, conv, purchase, r):
    """The year-of-disposal convention (Pub 946 ch. 4) on MACRS schedules [USD, array (n, T)].

    Before, a disposal cut the schedule at the retirement month, prorating the year by months
    held: 5-year half-year property sold in month 27 (3 months into tax year 3) deducted 48,000
    USD of 1,000,000 where Pub 946 deducts half of year 3's 19.20%, 96,000 USD.
    """
    disposed = (r > 0) & (r >= s)
    if not disposed.any():
        return out
    last = tax_year_index(purchase + r)
    k = last - tax_year_index(purchase + s)  # 0-based table year of the disposal
    half = np.array([c == "half-year" for c in conv.tolist()])
    quarter_out = (purchase + r - 1 - MONTHS_PER_YEAR * last) // 3 + 1
    held = np.where(half, 6.0, 3.0 * quarter_out - 1.5)  # months of the year the convention holds
    placed = np.where(half, 6.0, 3.0 * macrs_quarter(s, purchase) - 1.5)
    # In the table's last year the recovery period ends at the convention's point of the
    # quarter (half-year: mid-year) it began in: that year's amount is what is left to recover.
    share = np.where(k == table_years - 1, np.minimum(1.0, held / placed), held / 12.0)
    full_year = np.take_along_axis(annual, np.clip(k, 0, annual.shape[1] - 1)[:, None], axis=1)
    amount = np.where(k >= 1, full_year[:, 0] * share, 0.0)  # the same tax year: nothing
    start = MONTHS_PER_YEAR * last + 1 - purchase  # the disposal year's first month
    m = months[None, :]
    in_year = (m >= start[:, None]) & (m <= r[:, None])
    spread = amount / (r - start + 1)
    changed = disposed & (k < table_years)  # (after the table's end nothing is left to deduct)
    disposal_year = np.where(in_year, spread[:, None], np.where(m < start[:, None], out, 0.0))
    return np.where(changed[:, None], disposal_year, out)


def economic(cost_usd, salvage_usd, value_share, months, life_years, in_service_month=1):
    """Economic depreciation: the fall in the asset's market value [USD, array (n, T)].

    The book value follows ``cost · v_m / v_{s-1}``, with ``v`` the market-value curve (a share of
    cost, or any price index such as the token or GPU-rental price path) and ``s`` the in-service
    month; it never rises (a recovery of market value is not booked: ASC 360-10-35-20) and never
    falls below salvage, and at the end of the life what is left above salvage is written off, so
    the schedule sums to ``cost - salvage``. Depreciation of month ``m`` is the fall of that book
    value during the month.

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    value_share : array (n, T)  market value at the end of each month, relative to any base
        (share of cost, or a price index); the value at month ``s - 1`` is the cost [fraction]
    months : array (T,)  consecutive month indices starting at 0
    life_years : array (n,)  useful life, after which the book value is salvage [years]
    in_service_month : array (n,)  [month index], default 1

    References
    ----------
    Hotelling (1925); Hulten & Wykoff (1981), "The measurement of economic depreciation", in
    *Depreciation, Inflation, and the Taxation of Income from Capital*, Urban Institute.
    """
    cost, salvage, life, s = _prepare(cost_usd, salvage_usd, life_years, in_service_month)
    m = _months(months)
    return _economic(cost, salvage, life, s, m, _value_curve(value_share, cost.shape[0], m, s))


def _value_curve(value_share, n: int, months: np.ndarray, s: np.ndarray) -> np.ndarray:
    if value_share is None:
        raise DepreciationError(
            "economic depreciation needs a value curve: an array (n, T) of market value shares "
            "or a price path"
        )
    v = np.asarray(value_share, dtype=float)
    try:
        v = np.broadcast_to(v, (n, months.size))
    except ValueError:
        raise DepreciationError(
            f"value_share must have shape ({n}, {months.size}) (scenarios, months), got {v.shape}"
        ) from None
    _refuse(~np.isfinite(v) | (v < 0), "value_share", v, "finite market values of at least 0")
    if months[0] != 0:
        raise DepreciationError("economic depreciation needs months starting at 0")
    _refuse(s - 1 >= months.size, "in_service_month", s, "a month inside the value curve")
    ref = v[np.arange(n), s - 1]
    _refuse(
        ~(ref > 0),
        "value_share",
        ref,
        "a market value above 0 in the month before service: economic depreciation follows the "
        "value's fall from then (depreciation.value_source: the token or rental price there, or "
        "market_value_table)",
    )
    return v


def _economic(cost, salvage, life, s, months, value):
    n = cost.shape[0]
    ref = value[np.arange(n), s - 1]
    ratio = np.where(months[None, :] >= s[:, None], value / ref[:, None], 1.0)
    book = cost[:, None] * np.minimum.accumulate(np.minimum(ratio, 1.0), axis=1)
    book = np.maximum(book, salvage[:, None])
    book = np.where(months[None, :] >= _last_life_month(life, s)[:, None], salvage[:, None], book)
    return np.diff(book, axis=1, prepend=cost[:, None]) * -1.0


def value_share_from_table(table_months, table_shares, months) -> np.ndarray:
    """Market-value curve from a table of (month, share of cost) points [fraction, array (n, T)].

    Linear between the points, flat before the first and after the last. Rows may be padded by
    repeating their last point.

    Parameters
    ----------
    table_months : array (k,) or (n, k)  increasing month indices (0 = purchase month)
    table_shares : array (k,) or (n, k)  market value at those months as a share of cost
    months : array (T,)  month indices
    """
    tm = np.atleast_2d(np.asarray(table_months, dtype=float))
    ts = np.atleast_2d(np.asarray(table_shares, dtype=float))
    if tm.shape != ts.shape or tm.shape[1] == 0:
        raise DepreciationError(
            f"table_months {tm.shape} and table_shares {ts.shape} must have the same non-empty shape"
        )
    _refuse(
        np.diff(tm, axis=1) < 0,
        "table_months",
        tm[:, 1:],
        "months in increasing order",
        column="table point",
        first=2,
    )
    _refuse(
        ~np.isfinite(ts) | (ts < 0),
        "table_shares",
        ts,
        "shares of at least 0",
        column="table point",
        first=1,
    )
    m = _months(months).astype(float)
    return _interp_rows(np.broadcast_to(m, (tm.shape[0], m.size)), tm, ts)


def custom(cost_usd, salvage_usd, percent, months, in_service_month=1):
    """A custom schedule: year ``k`` takes ``percent_k`` of the base [USD, array (n, T)].

    Each year's amount ``(cost - salvage) · percent_k / 100`` is spread evenly over the 12 months
    of that year from the in-service month. The percentages must sum to 100 (within 1e-6); rows
    of an ``(n, K)`` array may be padded with zeros.

    Parameters
    ----------
    cost_usd, salvage_usd : array (n,)  [USD]
    percent : array (K,) or (n, K)  annual percentages of the base [percent]
    months : array (T,)  consecutive month indices, 0 = purchase month
    in_service_month : array (n,)  [month index], default 1
    """
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    n = cost.shape[0]
    cost, salvage, _, s = _prepare(cost, salvage_usd, 1.0, in_service_month)
    return _custom(cost, salvage, s, _months(months), _percent(percent, n))


def _percent(percent, n: int) -> np.ndarray:
    p = np.asarray(percent, dtype=float)
    if p.ndim == 0 or p.shape[-1] == 0:
        raise DepreciationError("custom_percent must list at least one annual percentage")
    try:
        p = np.broadcast_to(p, (n, p.shape[-1]))
    except ValueError:
        raise DepreciationError(
            f"custom_percent must have shape (K,) or ({n}, K), got {p.shape}"
        ) from None
    _refuse(
        ~np.isfinite(p) | (p < 0),
        "custom_percent",
        p,
        "percentages of at least 0",
        column="year",
        first=1,
    )
    total = p.sum(axis=1)
    _refuse(
        np.abs(total - 100.0) > 1e-6,
        "sum of custom_percent",
        total,
        "percentages that sum to 100",
    )
    return p


def _custom(cost, salvage, s, months, percent):
    n = cost.shape[0]
    annual = (cost - salvage)[:, None] * percent / percent.sum(axis=1, keepdims=True)
    return _spread(annual, _ages(months, s), np.full(n, MONTHS_PER_YEAR * percent.shape[1]))


# ---------------------------------------------------------------------------------------------
# settings and the dispatcher
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodSettings:
    """One depreciation method with its parameters: scalars, or arrays of one value per scenario.

    Plain data (no pydantic): the engine builds it from a batch's columns for a group of scenarios
    that share ``method``. Parameters a method does not use are ignored.

    Attributes
    ----------
    method : str  a name of METHODS
    life_years : useful life [years] (all but macrs_gds and custom)
    salvage_share : residual value as a share of cost [fraction, 0 <= share <= 1]
    in_service_month : first month depreciated [month index >= 1]
    purchase_month : projection month of the schedule's month 0, which places the tax years of
        macrs_gds [month index >= 0]
    factor, switch_to_straight_line : declining_balance
    first_year_months : fixed_declining_balance, months in the first period [1..12]
    recovery_years, convention, bonus_share : macrs_gds
    custom_percent : custom, (K,) or (n, K) annual percentages summing to 100
    lifetime_usage : units_of_production, NaN = the usage over the life
    change_month : first month depreciated on the new life; 0 = no change of estimate
    change_life_years : the new useful life, counted from the in-service month [years]
    disposal_month : macrs_gds, the last month of service of an asset sold or retired, for the
        year-of-disposal convention; 0 = not disposed of [month index]
    """

    method: str = "straight_line"
    life_years: Any = 6.0
    salvage_share: Any = 0.0
    in_service_month: Any = 1
    purchase_month: Any = 0
    factor: Any = 2.0
    switch_to_straight_line: Any = True
    first_year_months: Any = 12
    recovery_years: Any = 5
    convention: Any = "half-year"
    bonus_share: Any = 0.0
    custom_percent: Any = ()
    lifetime_usage: Any = np.nan
    change_month: Any = 0
    change_life_years: Any = np.nan
    disposal_month: Any = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise DepreciationError(
                f"unknown depreciation method {self.method!r}; valid methods: "
                + ", ".join(METHOD_NAMES)
            )


def describe_method(settings: MethodSettings) -> str:
    """A schedule's method in words, for a report's note: MACRS with its property class,
    convention, IRS table and bonus share ("MACRS GDS 5-year, half-year convention (IRS Pub 946
    Table A-1), bonus 0%"); another method with its life and salvage share; a custom one with
    its percentages."""
    s = settings
    if s.method == "macrs_gds":
        table = MACRS_CONVENTIONS.index(s.convention) + 1  # Tables, in that order
        return (
            f"MACRS GDS {s.recovery_years:g}-year, {s.convention} convention (IRS Pub 946 Table "
            f"A-{table}), bonus {100 * s.bonus_share:g}%"
        )
    if s.method == "custom":
        return "custom percentages " + ", ".join(f"{p:g}" for p in s.custom_percent)
    name = s.method.replace("_", " ")
    if s.method == "declining_balance":
        name += f" x{s.factor:g}" + ("" if s.switch_to_straight_line else ", no switch")
    return f"{name} over {s.life_years:g} years, salvage {100 * s.salvage_share:g}%"


def schedule(
    settings: MethodSettings,
    cost_usd,
    months,
    usage=None,
    value_curve=None,
    tables=None,
    exact_end: bool = False,
):
    """Monthly depreciation of one method for many scenarios [USD, array (n, T)].

    Dispatches on ``settings.method`` and applies a change of estimate where ``change_month > 0``:
    from that month, the book value left (cost less depreciation to date) less salvage is
    depreciated by the same method over the remaining new life, ``12 · change_life_years -
    (change_month - in_service_month)`` months, as if a new asset with that cost were placed in
    service then. This is the prospective treatment of ASC 250-10-45-17 (and IAS 8.36): past
    periods are not restated, and the schedule still sums to ``cost - salvage``.

    With ``exact_end``, where the months given reach the end of a row's schedule, its last month
    of depreciation takes what is left of the base (:func:`_end_at_base`), so the running total,
    and with it the book value ``cost - running total``, ends at salvage without floating-point
    residue (a cost of 1e300 ended 1.8e284 below a salvage of 0). `econ depreciation` shows a
    schedule so; the engine does not (two more passes over its arrays, for a residue of about
    1e-15 of the cost).

    Parameters
    ----------
    settings : MethodSettings
    cost_usd : array (n,)  capitalized cost [USD]
    months : array (T,)  month indices 0, 1, ..., T-1 (0 = purchase month)
    usage : array (n, T) or None  usage per month, for units_of_production [tokens or GPU-hours]
    value_curve : array (n, T) or None  market value share or price path, for economic [fraction]
    tables : MACRS tables as from econ.catalog.macrs_gds_tables(); needed by macrs_gds only
    exact_end : bool  end each finished schedule exactly at salvage (above)

    Returns
    -------
    array (n, T)  depreciation of each month [USD]
    """
    m = _months(months)
    if m[0] != 0:
        raise DepreciationError(f"months must start at 0 (the purchase month), got {m[0]}")
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    if cost.ndim != 1:
        raise DepreciationError(f"cost_usd must be one value per scenario, got shape {cost.shape}")
    n = cost.shape[0]
    _check_cost(cost)
    share = _rows(settings.salvage_share, n, "salvage_share")
    _refuse(
        ~((share >= 0) & (share <= 1)),
        "salvage_share",
        share,
        "a share of cost from 0 to 1 (a salvage value above cost is not depreciation)",
    )
    depreciation = _schedule(settings, cost, share, m, usage, value_curve, tables)
    if not exact_end:
        return depreciation
    return _end_at_base(depreciation, cost - np.minimum(share * cost, cost))


def _end_at_base(depreciation: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The last month of depreciation takes the base less the running total before it, in place.

    Only rows whose months reach the end of their schedule change: those whose total is the base
    within _REL_TOL (a schedule cut short by the months given is left as it is). Monthly amounts
    of a huge cost carry rounding errors of ~1e-16 of it each, and 72 of them summed left a book
    value of -1.8e284 USD for a cost of 1e300. With the remainder the running total ends exactly
    at the base: where the last month is at most half the base (all but a units-of-production
    month holding most of the usage), ``base - before`` is exact (Sterbenz's lemma), and so is
    its sum with ``before``. DB's and SYD's final periods take their rounding the same way.
    """
    n, t = depreciation.shape
    if n == 0 or t == 0:
        return depreciation
    running = cumsum_months(depreciation)
    total = running[:, -1]
    paid = depreciation != 0
    last = t - 1 - np.argmax(paid[:, ::-1], axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf of an overflowing row: left as it is
        ended = paid.any(axis=1) & (np.abs(total - base) <= _REL_TOL * base)
    rows = np.flatnonzero(ended)
    if rows.size:
        before = np.where(last[rows] > 0, running[rows, np.maximum(last[rows] - 1, 0)], 0.0)
        depreciation[rows, last[rows]] = base[rows] - before
    return depreciation


def _schedule(settings, cost, share, m, usage, value_curve, tables):
    n = cost.shape[0]
    method = settings.method
    if method == "macrs_gds":
        _refuse_change(settings, n, method)
        _refuse(share != 0, "salvage_share", share, "0 for macrs_gds (MACRS ignores salvage)")
        return macrs_gds(
            cost,
            m,
            settings.recovery_years,
            settings.convention,
            settings.bonus_share,
            settings.in_service_month,
            tables,
            settings.purchase_month,
            settings.disposal_month,
        )
    if method == "custom":
        depreciation = custom(
            cost, share * cost, settings.custom_percent, m, settings.in_service_month
        )
        _refuse_change(settings, n, method)
        return depreciation
    cost, salvage, life, s = _prepare(
        cost, share * cost, settings.life_years, settings.in_service_month
    )
    params = _method_params(settings, n, m, s, usage, value_curve)
    depreciation = _run(method, cost, salvage, life, s, m, params)
    change = _rows(settings.change_month, n, "change_month")
    if not np.any(change > 0):
        return depreciation
    if method not in CHANGE_OF_ESTIMATE_METHODS:
        _refuse_change(settings, n, method)
    new_life = _rows(settings.change_life_years, n, "change_life_years")
    rows = np.flatnonzero(change > 0)
    c = change[rows]
    _refuse(c != np.rint(c), "change_month", c, "a whole month index")
    c = c.astype(np.int64)
    _refuse(
        c <= s[rows],
        "change_month",
        c,
        "a month after the in-service month (a change cannot start before depreciation does)",
    )
    _refuse(
        c > _last_life_month(life[rows], s[rows]),
        "change_month",
        c,
        "a month within the original useful life (the period is beyond the life)",
    )
    elapsed_years = (c - s[rows]) / MONTHS_PER_YEAR
    remaining = new_life[rows] - elapsed_years
    _refuse(
        ~(remaining > 0),
        "change_life_years",
        new_life[rows],
        "a new useful life longer than the time already in service "
        f"({_fmt(elapsed_years[np.argmin(remaining)] if rows.size else 0)} years)",
    )
    inside = c <= m[-1]  # a change after the last month given changes nothing shown
    rows, c, remaining = rows[inside], c[inside], remaining[inside]
    if rows.size == 0:
        return depreciation
    carrying = cost[rows] - cumsum_months(depreciation[rows])[np.arange(rows.size), c - 1]
    sub = {
        k: (v[rows] if isinstance(v, np.ndarray) and v.shape[:1] == (n,) else v)
        for k, v in params.items()
    }
    if method == "units_of_production":
        sub["lifetime_usage"] = np.full(rows.size, np.nan)  # re-estimated over the new window
    restarted = _run(method, carrying, np.minimum(salvage[rows], carrying), remaining, c, m, sub)
    after = m[None, :] >= c[:, None]
    depreciation[rows] = np.where(after, restarted, depreciation[rows])
    return depreciation


def schedule_mixed(
    method, cost_usd, months, usage=None, value_curve=None, tables=None, **params
) -> np.ndarray:
    """Monthly depreciation when scenarios use different methods [USD, array (n, T)].

    Groups the rows by method name and calls :func:`schedule` once per distinct method (a loop
    over methods, not scenarios).

    Parameters
    ----------
    method : array (n,) of str  method of each scenario (names of METHODS)
    cost_usd : array (n,)  [USD]
    months : array (T,)  month indices 0..T-1
    usage, value_curve : arrays (n, T) or None  as for :func:`schedule`
    **params : the other MethodSettings fields, scalars or arrays with a leading axis n
        (``custom_percent`` (n, K) padded with zeros), e.g. from
        ``econ.scenario.depreciation_models.compile_methods``
    """
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    n = cost.shape[0]
    names = _rows(method, n, "method", dtype=object)
    distinct = list(dict.fromkeys(names.tolist()))  # in order of appearance
    unknown = sorted({str(x) for x in distinct} - set(METHOD_NAMES))
    if unknown:
        raise DepreciationError(
            f"unknown depreciation method {unknown[0]!r}; valid methods: " + ", ".join(METHOD_NAMES)
        )
    m = _months(months)
    out = np.zeros((n, m.size)) if len(distinct) != 1 else None
    take = lambda value, rows: _take(value, rows, n)  # noqa: E731

    for name in distinct:
        rows = None if len(distinct) == 1 else np.flatnonzero(names == name)  # None: all
        kwargs = {k: take(v, rows) for k, v in params.items()}
        if name == "custom" and "custom_percent" in kwargs:
            pct = np.atleast_2d(np.asarray(kwargs["custom_percent"], dtype=float))
            keep = max(1, int(np.max(np.flatnonzero(pct.any(axis=0)), initial=0)) + 1)
            kwargs["custom_percent"] = pct[:, :keep]
        schedule_rows = schedule(
            MethodSettings(method=name, **kwargs),
            take(cost, rows),
            m,
            usage=take(usage, rows),
            value_curve=take(value_curve, rows),
            tables=tables,
        )
        if rows is None:
            return schedule_rows
        out[rows] = schedule_rows
    return out


def _take(value, rows, n: int):
    """The rows `rows` of a per-scenario argument (leading axis n); others as they are."""
    if value is None or rows is None:
        return value
    arr = np.asarray(value)
    return arr[rows] if arr.ndim >= 1 and arr.shape[0] == n else value


def schedule_batches(
    method,
    cost_usd,
    months,
    shares,
    in_service_month,
    usage=None,
    value_curve=None,
    tables=None,
    **params,
) -> np.ndarray:
    """Monthly depreciation of assets placed in service in batches [USD, array (n, T)].

    A fleet deployed over several months (a deployment ramp) is depreciated batch by batch:
    batch ``j``, a share ``shares[:, j]`` of the cost, is depreciated by its row's method from
    its own in-service month ``in_service_month[:, j]``, as an asset is from when it is
    available for use (IAS 16.55; ASC 360: over its useful life, from placement in service) or,
    for tax, placed in service (IRS Pub 946 ch. 1 and 4; IRC §168). The schedule is the sum of the batches' schedules, each the schedule of the
    whole cost scaled by the batch's share (every method is linear in the cost):

        D_m = sum_j shares_j · schedule(cost, in_service_month = s_j)_m

    so the whole fleet's base is depreciated once every batch's life has run, and nothing of a
    batch before its month. What each method takes from the batch's month:

    * macrs_gds: the batch's bonus share in its own in-service month, its tax years from the
      one holding it. A mid-quarter convention (which must name the first batch's quarter:
      :func:`refuse_mid_quarter_mismatch`) applies to every batch, each with the table of the
      quarter it is placed in service in (Pub 946: under the mid-quarter convention, property
      is treated as placed in service at the midpoint of its own quarter); whether the 40% test
      calls for it, in each tax year the batches span, is the caller's choice.
    * a change of estimate (``change_month``): a later batch placed in service at or after the
      change month is depreciated over the new life (``change_life_years``) from its own month;
      one placed in service before it changes there, as the first does.
    * units_of_production: ``usage`` is the usage of the whole cost (all of the fleet, e.g. the
      GPUs in service scaled up to the fleet), each batch's window from its own month.
    * economic: each batch follows the value curve from the month before its own month.

    Batches placed in service after the last month given add nothing to the months shown. A
    single batch holding the whole cost (``shares`` of one column of 1) is
    :func:`schedule_mixed` exactly.

    Parameters
    ----------
    method : array (n,) of str  method of each row (names of METHODS)
    cost_usd : array (n,)  the whole cost [USD]
    months : array (T,)  month indices 0..T-1 (0 = purchase month)
    shares : array (n, J)  share of the cost placed in service in each batch, each row summing
        to at most 1 [fraction]
    in_service_month : array (n, J)  each batch's first month depreciated [month index >= 1]
    usage, value_curve, tables : as for :func:`schedule_mixed`
    **params : the other MethodSettings fields, as for :func:`schedule_mixed`
    """
    cost = np.atleast_1d(np.asarray(cost_usd, dtype=float))
    n = cost.shape[0]
    share = np.asarray(shares, dtype=float)
    starts = np.asarray(in_service_month)
    if share.ndim != 2 or share.shape[0] != n or starts.shape != share.shape:
        raise DepreciationError(
            f"shares {share.shape} and in_service_month {starts.shape} must both have shape "
            f"({n}, batches): one column per batch, one row per scenario"
        )
    _refuse(
        ~((share >= 0) & (share <= 1)),
        "shares",
        share,
        "shares of the cost from 0 to 1",
        column="batch",
        first=1,
    )
    m = _months(months)
    if share.shape[1] == 1 and np.all(share == 1.0):
        return schedule_mixed(
            method, cost, m, usage, value_curve, tables, in_service_month=starts[:, 0], **params
        )
    names = _rows(method, n, "method", dtype=object)
    out = np.zeros((n, m.size))
    for j in range(share.shape[1]):  # a loop over batches (ramp months), not over rows
        rows = np.flatnonzero((share[:, j] > 0) & (starts[:, j] <= m[-1]))
        if not rows.size:
            continue
        s = starts[rows, j]
        kwargs = {k: _take(v, rows, n) for k, v in params.items()}
        if j:  # (the first batch is the asset's own start: its inputs are checked as given)
            kwargs = _later_batch(kwargs, s, rows.size)
        out[rows] += share[rows, j, None] * schedule_mixed(
            names[rows],
            cost[rows],
            m,
            _take(usage, rows, n),
            _take(value_curve, rows, n),
            tables,
            in_service_month=s,
            **kwargs,
        )
    return out


def _later_batch(params: dict, in_service: np.ndarray, n: int) -> dict:
    """A later batch's method inputs (`schedule_batches`): the mid-quarter table of its own
    quarter, and the new life where the estimate changed before it entered service."""
    params, default = dict(params), MethodSettings()
    if "convention" in params:
        given = _rows(params["convention"], n, "convention", dtype=object)
        purchase = params.get("purchase_month", default.purchase_month)
        purchase = _rows(purchase, n, "purchase_month", dtype=np.int64)
        quarter = macrs_quarter(in_service, purchase)
        mid = np.array([c != "half-year" and c in MACRS_CONVENTIONS for c in given.tolist()])
        own = np.array([f"mid-quarter Q{q}" for q in quarter.tolist()], dtype=object)
        params["convention"] = np.where(mid, own, given)
    if "change_month" in params:
        change = _rows(params["change_month"], n, "change_month")
        before = (change > 0) & (change <= in_service)
        if before.any():
            new_life = params.get("change_life_years", default.change_life_years)
            life = _rows(params.get("life_years", default.life_years), n, "life_years")
            new_life = _rows(new_life, n, "change_life_years")
            params["life_years"] = np.where(before, new_life, life)
            params["change_month"] = np.where(before, 0, change)
    return params


def _refuse_change(settings: MethodSettings, n: int, method: str) -> None:
    change = _rows(settings.change_month, n, "change_month")
    _refuse(
        change > 0,
        "change_month",
        change,
        f"0 (no change of estimate) for {method}; a change of useful life applies to "
        + ", ".join(CHANGE_OF_ESTIMATE_METHODS),
    )


def _method_params(settings, n, months, s, usage, value_curve) -> dict:
    method = settings.method
    if method == "declining_balance":
        f = _rows(settings.factor, n, "factor")
        _refuse(~(f > 0) | ~np.isfinite(f), "factor", f, "a declining-balance factor above 0")
        switch = _rows(settings.switch_to_straight_line, n, "switch_to_straight_line", bool)
        return {"factor": f, "switch": switch}
    if method == "fixed_declining_balance":
        first = _rows(settings.first_year_months, n, "first_year_months")
        _refuse(
            ~((first >= 1) & (first <= 12) & (first == np.rint(first))),
            "first_year_months",
            first,
            "a whole number of months from 1 to 12",
        )
        return {"first": first}
    if method == "units_of_production":
        total = _rows(settings.lifetime_usage, n, "lifetime_usage")
        _refuse(total <= 0, "lifetime_usage", total, "expected usage over the life above 0")
        return {"usage": _usage(usage, n, months.size), "lifetime_usage": total}
    if method == "economic":
        return {"value": _value_curve(value_curve, n, months, s)}
    return {}


def _run(method, cost, salvage, life, s, months, params):
    if method == "straight_line":
        return _straight_line(cost, salvage, life, s, months)
    if method == "declining_balance":
        return _declining_balance(
            cost, salvage, life, s, months, params["factor"], params["switch"]
        )
    if method == "fixed_declining_balance":
        _refuse(cost <= 0, "cost_usd", cost, "a cost above 0 for fixed_declining_balance [USD]")
        _refuse(
            np.abs(life - np.rint(life)) > _REL_TOL,
            "life_years",
            life,
            "a whole number of years for fixed_declining_balance (DB periods are years)",
        )
        return _fixed_declining_balance(cost, salvage, np.rint(life), s, months, params["first"])
    if method == "sum_of_years_digits":
        return _sum_of_years_digits(cost, salvage, life, s, months)
    if method == "units_of_production":
        return _units_of_production(
            cost, salvage, life, s, months, params["usage"], params["lifetime_usage"]
        )
    if method == "economic":
        return _economic(cost, salvage, life, s, months, params["value"])
    raise DepreciationError(  # pragma: no cover - MethodSettings checks the name
        f"unknown depreciation method {method!r}; valid methods: " + ", ".join(METHOD_NAMES)
    )


# ---------------------------------------------------------------------------------------------
# book value, retirement and disposal
# ---------------------------------------------------------------------------------------------


def book_value(cost_usd, depreciation_usd, impairment_usd=None):
    """Carrying amount at the end of each month: cost less accumulated depreciation and impairment.

    Parameters
    ----------
    cost_usd : array (n,)  [USD]
    depreciation_usd, impairment_usd : arrays (n, T)  [USD]; impairment negative for a reversal

    Returns
    -------
    array (n, T)  [USD]; within half a cent of 0 it is 0 (econ.arrays.snap_to_zero)
    """
    dep = np.asarray(depreciation_usd, dtype=float)
    if impairment_usd is not None:
        dep = dep + np.asarray(impairment_usd, dtype=float)
    # (a fully depreciated asset's carrying amount is 0, not the 3e-9 USD of rounding)
    return snap_to_zero(np.asarray(cost_usd, dtype=float)[:, None] - cumsum_months(dep))


def held_book_value_usd(capex_usd, consumed_usd, proceeds_usd, gain_usd, capitalized_usd=0.0):
    """Carrying amount of the assets still held at each month end [USD, array (n, T)].

        B_m = sum_(k<=m) (capex_k + capitalized_k - consumed_k - (proceeds_k - gain_k))

    Capex paid so far, with capitalized interest, less accumulated depreciation and impairment
    (`consumed`), less the carrying amount of what was sold: proceeds less the gain on disposal
    is the amount derecognized at the sale (ASC 360-10-40-5, IAS 16.67-16.71). A fleet that sells
    its first generation and keeps the second counts only the second (before, the sold GPUs'
    32.6M USD stayed in the LTV's denominator of h200-fleet-gb300-refresh).

    Parameters
    ----------
    capex_usd, consumed_usd, proceeds_usd, gain_usd : arrays (n, T)  [USD]
    capitalized_usd : array (n, T) or 0  interest added to the assets' cost [USD]

    Returns
    -------
    array (n, T)  [USD]; within half a cent of 0 it is 0 (econ.arrays.snap_to_zero)
    """
    derecognized = np.asarray(proceeds_usd, dtype=float) - gain_usd
    return snap_to_zero(cumsum_months(capex_usd + capitalized_usd - consumed_usd - derecognized))


def sale_proceeds_usd(carrying_at_sale_usd, sale_value_usd):
    """Proceeds of a sale at retirement: the sale value where one is given, else the carrying
    amount (sold at book value, no gain or loss) [USD, array (n,)].

    A carrying amount that rounds to a hair below 0 when fully depreciated sells for 0.

    Parameters
    ----------
    carrying_at_sale_usd : array (n,)  carrying amount at the retirement month (`book_value`)
    sale_value_usd : array (n,)  agreed sale price; NaN where none is given [USD]
    """
    sale = np.asarray(sale_value_usd, dtype=float)
    return np.maximum(np.where(np.isnan(sale), carrying_at_sale_usd, sale), 0.0)


@dataclass(frozen=True)
class Disposal:
    """An asset schedule cut at its retirement month, with the sale.

    Attributes (arrays (n, T) unless noted) [USD]
    ----------
    depreciation_usd : depreciation, 0 after the retirement month
    carrying_amount_usd : book value at the end of each month, 0 from the retirement month on
    proceeds_usd : sale value, in the retirement month
    gain_usd : proceeds less the carrying amount derecognized (negative = loss), in that month
    """

    depreciation_usd: np.ndarray
    carrying_amount_usd: np.ndarray
    proceeds_usd: np.ndarray
    gain_usd: np.ndarray


def dispose(
    depreciation_usd,
    cost_usd,
    months,
    retirement_month,
    sale_value_usd,
    impairment_usd=None,
    in_service_month=1,
    carrying_usd=None,
):
    """Retire and sell the asset at the end of its retirement month; gain or loss on disposal.

    The asset is depreciated through its retirement month ``r`` and sold at its end for
    ``sale_value_usd``; the gain is the proceeds less the carrying amount then (ASC 360-10-40-5,
    IAS 16.68 and 16.71). Rows whose ``retirement_month`` is NaN or 0 are not retired within the
    months given (nothing changes). A MACRS tax schedule takes the year-of-disposal convention of
    IRS Pub 946 ch. 4 before the cut (``macrs_gds``'s ``disposal_month``); any other schedule is
    cut at the retirement month, its year of disposal prorated by months held.

    Parameters
    ----------
    depreciation_usd : array (n, T)  [USD]
    cost_usd : array (n,)  [USD]
    months : array (T,)  month indices 0..T-1
    retirement_month : array (n,)  last month of service; NaN or 0 = not retired [month index]
    sale_value_usd : array (n,)  proceeds of the sale [USD, >= 0]
    impairment_usd : array (n, T) or None  impairment losses (negative = reversals) [USD]
    in_service_month : array (n,)  [month index]; the retirement may not come before it
    carrying_usd : array (n, T), optional  ``book_value(cost, depreciation, impairment)`` where
        the caller has it already (saves recomputing it)
    """
    dep = np.asarray(depreciation_usd, dtype=float)
    n = dep.shape[0]
    m = _months(months)
    cost = _rows(cost_usd, n, "cost_usd")
    r = _rows(retirement_month, n, "retirement_month")
    sale = _rows(sale_value_usd, n, "sale_value_usd")
    s = _rows(in_service_month, n, "in_service_month")
    retired = r > 0
    _refuse(retired & (r != np.rint(r)), "retirement_month", r, "a whole month index")
    _refuse(
        retired & (r < s),
        "retirement_month",
        r,
        "a month at or after the in-service month (start after end)",
    )
    _refuse(~np.isfinite(sale) | (sale < 0), "sale_value_usd", sale, "proceeds of at least 0")
    r_idx = np.where(retired, r, np.inf)[:, None]
    kept = m[None, :] <= r_idx
    everywhere = kept.all()  # (no retirement within the months: nothing cut)
    dep_kept = dep.copy() if everywhere else np.where(kept, dep, 0.0)
    if carrying_usd is None:
        spent = dep_kept
        if impairment_usd is not None:
            spent = spent + np.where(kept, np.asarray(impairment_usd, dtype=float), 0.0)
        carrying = cost[:, None] - cumsum_months(spent)
    else:  # the same through the retirement month, which is all that is used
        carrying = np.asarray(carrying_usd, dtype=float)
        if carrying.shape != dep.shape:
            raise DepreciationError(
                f"carrying_usd has shape {carrying.shape}: expected the depreciation's "
                f"(scenarios, months) = {dep.shape}"
            )
    # One month of sale at most per row: set there, where np.where would pass over every month.
    rows = np.flatnonzero(retired & (r >= m[0]) & (r <= m[-1]))
    at_sale = (rows, (r[rows] - m[0]).astype(np.int64))
    proceeds, gain = np.zeros(dep.shape), np.zeros(dep.shape)
    proceeds[at_sale] = sale[rows]
    gain[at_sale] = sale[rows] - carrying[at_sale]
    if (retired & (r <= m[-1])).any():  # sold within the months: nothing carried after
        carrying = np.where(m[None, :] >= r_idx, 0.0, carrying)
    else:
        carrying = carrying.copy()
    return Disposal(dep_kept, carrying, proceeds, gain)


def yearly_totals(monthly, in_service_month=1):
    """Sums over the asset's years: year k = the 12 months from ``s + 12(k-1)`` [array (n, Y)].

    Months before the in-service month are added to year 1 (they hold no depreciation).
    """
    x = np.asarray(monthly, dtype=float)
    n, t = x.shape
    s = _rows(in_service_month, n, "in_service_month").astype(np.int64)
    age = np.arange(t)[None, :] - s[:, None]
    year = np.maximum(age, 0) // MONTHS_PER_YEAR
    years = int(year.max()) + 1
    out = np.zeros((n, years))
    np.add.at(out, (np.repeat(np.arange(n), t), year.reshape(-1)), x.reshape(-1))
    return out
