"""Spreadsheet-compatible financial functions, vectorized with numpy.

This module owns the functions a finance team checks against Excel or LibreOffice Calc:
depreciation (``sln``, ``syd``, ``db``, ``ddb``, ``vdb``), time value of money (``pmt``,
``ipmt``, ``ppmt``, ``fv``, ``pv``, ``nper``, ``rate``), valuation (``npv``, ``xnpv``,
``irr``, ``xirr``, ``mirr``) and the batch solvers the projection engine calls on
``(n_series, n_periods)`` arrays (``irr_batch``, ``xirr_batch``, ``npv_batch``).

Conventions
-----------
* Names and argument names are the spreadsheet's, lower-case. ``type = 0`` means payments at
  the end of each period, ``type = 1`` at the beginning.
* Sign convention of the spreadsheets: cash paid out is negative, cash received is positive.
* Every function broadcasts its array arguments with numpy rules; 0-d results come back as
  numpy scalars. Cash-flow series lie along the last axis.
* Arguments a spreadsheet answers with ``#NUM!``, ``#VALUE!`` or ``#DIV/0!`` raise
  :class:`ExcelFunctionError` naming the argument, the value received and what was expected.
  NaN inputs are not errors: they propagate. The ``*_batch`` functions never raise for a
  row's data; they return NaN for that row.
* ``npv`` follows the spreadsheet: its FIRST value is discounted one period. ``npv_batch``
  follows the project-finance convention instead: its first column is at time 0.

References
----------
.. [1] Microsoft Support, Excel function reference: SLN, SYD, DB, DDB, VDB, PMT, IPMT, PPMT, FV,
   PV, NPER, RATE, NPV, XNPV, IRR, XIRR, MIRR functions. https://support.microsoft.com/excel
.. [2] OASIS, Open Document Format for Office Applications (OpenDocument) v1.2, Part 2:
   Recalculated Formula (OpenFormula) Format, section 6.12 "Financial Functions".
   https://docs.oasis-open.org/office/v1.2/os/OpenDocument-v1.2-os-part2.html
.. [3] ECMA-376 Office Open XML, Part 1, section 18.17.7 "Predefined Function Definitions".
.. [4] LibreOffice Calc, ``sc/source/core/tools/interpr2.cxx`` (``ScDB``, ``ScDDB``, ``ScVDB``,
   ``ScGetDDB``, ``ScInterVDB``): the reference behaviour for fractional VDB periods.
"""

from __future__ import annotations

import math

import numpy as np

from econ.blas import one_blas_thread

__all__ = [
    "ExcelFunctionError",
    "annual_from_monthly",
    "db",
    "ddb",
    "fv",
    "ipmt",
    "irr",
    "investment_irr_batch",
    "irr_batch",
    "irr_roots_batch",
    "mirr",
    "monthly_from_annual",
    "nper",
    "npv",
    "npv_batch",
    "pmt",
    "ppmt",
    "pv",
    "rate",
    "roots_in_cells",
    "several_sign_changes",
    "sln",
    "syd",
    "vdb",
    "xirr",
    "xirr_batch",
    "xnpv",
]

DAYS_PER_YEAR_XIRR = 365.0
"""Day count of XNPV/XIRR: actual days between dates over a 365-day year [days/year]."""

_RATE_TOL = 1e-12  # absolute tolerance on a solved rate (relative above |rate| = 1)
_NEWTON_MAXIT = 50
_ILLINOIS_MAXIT = 200
_CHUNK_ROWS = 8192  # rows solved together: (8192 x 73) float64 stays in the CPU's L2/L3 cache
_COMPACT_BELOW = 0.6  # share of a block's series still iterating below which it is compacted
_FEW_SERIES = 1024  # below this many series one (T, m) array of discount factors beats Horner

# Rates scanned for a sign change when Newton cannot be trusted (several sign changes in the
# cash flows) or fails. Dense near 0 where real rates live, sparse far out; r = 0 is on the
# grid so that no bracket straddles it (the evaluation form switches there, see _Block.value).
# Rates from -99.9999% to +100,000% per period, evenly spaced in u where
# log(1 + r) = 0.02 sinh(u): the r-spacing is about 0.0004 near r = 0, 0.005 near r = 0.2 and
# 0.05 near r = 1.5, then about 2% of 1 + r.
_SCAN_POINTS = 641
_SCAN_RATES = np.expm1(0.02 * np.sinh(np.linspace(-math.asinh(math.log(1e6) / 0.02),
                                                  math.asinh(math.log(1001.0) / 0.02),
                                                  _SCAN_POINTS)))
_SCAN_RATES[np.argmin(np.abs(_SCAN_RATES))] = 0.0
_BRACKET_CHUNK_ROWS = 2048  # rows scanned together: (2048 x 641) matrices of NPV values


class ExcelFunctionError(ValueError):
    """An argument the spreadsheet would answer with ``#NUM!``, ``#VALUE!`` or ``#DIV/0!``."""


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _out(x):
    x = np.asarray(x)
    return x[()] if x.ndim == 0 else x


def _fmt(value) -> str:
    if isinstance(value, np.datetime64):
        return str(value)
    return f"{float(value):.15g}"


def _raise_if(bad, func: str, name: str, value, expected: str) -> None:
    """Raise ExcelFunctionError when any element of ``bad`` is true, quoting the first one."""
    bad = np.asarray(bad)
    if bad.any():
        offending = np.broadcast_to(np.asarray(value), bad.shape)[bad].flat[0]
        raise ExcelFunctionError(f"{func}: {name} must be {expected}, got {_fmt(offending)}")


def _check_type(func: str, type_) -> np.ndarray:
    type_ = _f(type_)
    # Spreadsheets read any nonzero type as 1; a 2 or 0.5 is almost always a slip, so refuse it.
    _raise_if(~((type_ == 0) | (type_ == 1) | np.isnan(type_)), func, "type", type_,
              "0 (end of period) or 1 (beginning of period)")
    return type_


def _snap(x: np.ndarray) -> np.ndarray:
    # LibreOffice rounds to ~15 significant digits before floor/ceil (rtl::math::approxFloor),
    # so 2.9999999999999996 counts as period 3; do the same.
    r = np.rint(x)
    return np.where(np.abs(x - r) <= 1e-12 * np.maximum(1.0, np.abs(x)), r, x)


def _growth(rate: np.ndarray, nper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(1 + rate)**nper`` and ``(1 + rate)**nper - 1``, accurate for small rates."""
    with np.errstate(all="ignore"):
        above = rate > -1
        lg = np.log1p(np.where(above, rate, 0.0))
        gm1 = np.where(above, np.expm1(nper * lg), np.power(1.0 + rate, nper) - 1.0)
    return gm1 + 1.0, gm1


# ---------------------------------------------------------------------------------------------
# depreciation
# ---------------------------------------------------------------------------------------------


def sln(cost, salvage, life):
    """Straight-line depreciation for one period (spreadsheet ``SLN``).

    ``(cost - salvage) / life``.

    Parameters
    ----------
    cost : array_like
        Initial cost of the asset [USD].
    salvage : array_like
        Value at the end of the depreciation [USD].
    life : array_like
        Number of periods of the useful life [periods].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Depreciation per period [USD/period].

    Raises
    ------
    ExcelFunctionError
        If ``life <= 0`` (the spreadsheet gives ``#DIV/0!`` for 0; it returns a meaningless
        number for a negative life, which this function refuses).

    References
    ----------
    Microsoft Support, "SLN function"; OpenFormula (ODF 1.2 Part 2) section 6.12, SLN.

    Examples
    --------
    >>> float(sln(30000, 7500, 10))
    2250.0
    """
    cost, salvage, life = _f(cost), _f(salvage), _f(life)
    _raise_if(life <= 0, "sln", "life", life, "greater than 0 [periods]")
    return _out((cost - salvage) / life)


def syd(cost, salvage, life, per):
    """Sum-of-years'-digits depreciation for period ``per`` (spreadsheet ``SYD``).

    ``(cost - salvage) * (life - per + 1) * 2 / (life * (life + 1))``.

    Parameters
    ----------
    cost, salvage : array_like
        Initial cost and salvage value [USD].
    life : array_like
        Useful life [periods].
    per : array_like
        Period, 1-based, in the units of ``life`` [periods].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Depreciation for the period [USD].

    Raises
    ------
    ExcelFunctionError
        If ``life <= 0``, ``per <= 0`` or ``per > life`` (Excel ``#NUM!``; LibreOffice returns a
        number for ``per = 0`` and for ``per > life``, which this function refuses).

    References
    ----------
    Microsoft Support, "SYD function"; OpenFormula (ODF 1.2 Part 2) section 6.12, SYD.

    Examples
    --------
    >>> round(float(syd(30000, 7500, 10, 1)), 2)
    4090.91
    """
    cost, salvage, life, per = _f(cost), _f(salvage), _f(life), _f(per)
    _raise_if(life <= 0, "syd", "life", life, "greater than 0 [periods]")
    _raise_if(per <= 0, "syd", "per", per, "greater than 0 [periods]")
    _raise_if(per > life, "syd", "per", per, "at most life [periods]")
    return _out((cost - salvage) * (life - per + 1.0) * 2.0 / (life * (life + 1.0)))


def _ddb_period(cost, salvage, life, period, factor):
    """Declining-balance depreciation of one period, floored so the book value stays >= salvage.

    The book value before the period is ``cost * (1 - factor/life)**(period - 1)``; when a full
    period's depreciation would take the book value below salvage only the part down to salvage
    is taken, and nothing after that.
    """
    with np.errstate(all="ignore"):
        rate_ = factor / life
        full = rate_ >= 1.0
        keep = np.where(full, 0.0, 1.0 - rate_)
        old = np.where(full, np.where(period == 1.0, cost, 0.0),
                       cost * np.power(keep, period - 1.0))
        new = cost * np.power(keep, period)
        dep = np.where(new < salvage, old - salvage, old - new)
    return np.maximum(dep, 0.0)


def db(cost, salvage, life, period, month=12):
    """Fixed-declining-balance depreciation (spreadsheet ``DB``).

    The rate is ``1 - (salvage / cost)**(1 / life)`` rounded to three decimals. The first
    period is prorated by ``month / 12``; when ``month < 12`` there is an extra period
    ``life + 1`` that takes the remaining ``(12 - month) / 12`` of a year. Period ``p`` in
    between takes ``rate`` times the book value left after period ``p - 1``.

    Parameters
    ----------
    cost : array_like
        Initial cost [USD], > 0.
    salvage : array_like
        Salvage value [USD], 0 <= salvage <= cost.
    life : array_like
        Useful life [years].
    period : array_like
        Period, 1-based [years]; a fractional period is truncated as in the spreadsheet.
    month : array_like, optional
        Months in the first year, an integer from 1 to 12 (default 12) [months].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Depreciation for the period [USD]. Because the rate is rounded, the sum over all
        periods differs slightly from ``cost - salvage``, as in the spreadsheet.

    Raises
    ------
    ExcelFunctionError
        If ``month`` is not an integer from 1 to 12, ``cost <= 0``, ``salvage < 0``,
        ``salvage > cost``, ``life <= 0``, ``period < 1`` or ``period > life + 1``
        (spreadsheet ``#NUM!``). LibreOffice also accepts a fractional ``month`` and returns 0
        for ``0 < period < 1``; this function refuses both.

    References
    ----------
    Microsoft Support, "DB function"; OpenFormula (ODF 1.2 Part 2) section 6.12, DB; LibreOffice
    ``ScInterpreter::ScDB``.

    Examples
    --------
    >>> round(float(db(1_000_000, 100_000, 6, 1, 7)), 2)
    186083.33
    """
    cost, salvage, life, period, month = map(_f, (cost, salvage, life, period, month))
    _raise_if(~((month >= 1) & (month <= 12) & (month == np.floor(month))) & ~np.isnan(month),
              "db", "month", month, "an integer from 1 to 12")
    _raise_if(cost <= 0, "db", "cost", cost, "greater than 0 [USD]")
    _raise_if(salvage < 0, "db", "salvage", salvage, "at least 0 [USD]")
    _raise_if(salvage > cost, "db", "salvage", salvage, "at most cost [USD]")
    _raise_if(life <= 0, "db", "life", life, "greater than 0 [years]")
    _raise_if(period < 1, "db", "period", period, "at least 1 [years]")
    _raise_if(period > life + 1, "db", "period", period, "at most life + 1 [years]")
    with np.errstate(all="ignore"):
        exact = 1.0 - np.power(salvage / cost, 1.0 / life)
        # The spreadsheet rounds the rate half up to 3 decimals before using it.
        rate_ = np.floor(_snap(exact * 1000.0 + 0.5)) / 1000.0
        first = cost * rate_ * month / 12.0
        per_int = np.floor(_snap(period))
        # Full periods depreciated before the (optional) short last period.
        n_full = np.floor(_snap(np.minimum(life, period)))
        after_first = cost - first
        middle = np.where(n_full >= 2,
                          after_first * np.power(1.0 - rate_, n_full - 2.0) * rate_, 0.0)
        left = after_first * np.power(1.0 - rate_, np.maximum(n_full - 1.0, 0.0))
        last = left * rate_ * (12.0 - month) / 12.0
        result = np.where(per_int == 1, first, np.where(period > life, last, middle))
    return _out(result)


def ddb(cost, salvage, life, period, factor=2):
    """Declining-balance depreciation at ``factor / life`` per period (spreadsheet ``DDB``).

    Depreciation of period ``p`` is ``min(book * factor / life, book - salvage)`` with
    ``book = cost * (1 - factor/life)**(p - 1)``, never below zero: the asset is never
    depreciated below salvage. There is no switch to straight line (see :func:`vdb`).

    Parameters
    ----------
    cost : array_like
        Initial cost [USD], >= 0.
    salvage : array_like
        Salvage value [USD], 0 <= salvage <= cost.
    life : array_like
        Useful life [periods], > 0.
    period : array_like
        Period, 1 <= period <= life; fractional periods follow the same formula [periods].
    factor : array_like, optional
        Rate multiplier of the declining balance (default 2, double declining), > 0.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Depreciation for the period [USD].

    Raises
    ------
    ExcelFunctionError
        If ``cost < 0``, ``salvage < 0``, ``salvage > cost``, ``life <= 0``, ``factor <= 0``,
        ``period < 1`` or ``period > life`` (spreadsheet ``#NUM!``).

    References
    ----------
    Microsoft Support, "DDB function"; OpenFormula (ODF 1.2 Part 2) section 6.12, DDB; LibreOffice
    ``ScInterpreter::ScGetDDB``.

    Examples
    --------
    >>> float(ddb(2400, 300, 10, 1))
    480.0
    """
    cost, salvage, life, period, factor = map(_f, (cost, salvage, life, period, factor))
    _raise_if(cost < 0, "ddb", "cost", cost, "at least 0 [USD]")
    _raise_if(salvage < 0, "ddb", "salvage", salvage, "at least 0 [USD]")
    _raise_if(salvage > cost, "ddb", "salvage", salvage, "at most cost [USD]")
    _raise_if(life <= 0, "ddb", "life", life, "greater than 0 [periods]")
    _raise_if(factor <= 0, "ddb", "factor", factor, "greater than 0")
    _raise_if(period < 1, "ddb", "period", period, "at least 1 [periods]")
    _raise_if(period > life, "ddb", "period", period, "at most life [periods]")
    return _out(_ddb_period(cost, salvage, life, period, factor))


def vdb(cost, salvage, life, start_period, end_period, factor=2, no_switch=False):
    """Variable-declining-balance depreciation between two period marks (spreadsheet ``VDB``).

    Builds the period schedule of declining-balance depreciation at ``factor / life`` (as in
    :func:`ddb`) and, unless ``no_switch``, switches for good to straight line over the
    remaining life from the first period where straight line,
    ``(book - salvage) / (life - p + 1)``, exceeds the declining-balance amount. The result is
    the depreciation between the marks ``start_period`` and ``end_period`` (period ``p`` runs
    from mark ``p - 1`` to mark ``p``), where a partly covered period contributes the covered
    fraction of that period's depreciation. This is the behaviour of LibreOffice's ``ScVDB``,
    which matches Excel's published examples (``VDB(2400, 300, 10, 0, 0.875, 1.5) = 315``).

    Parameters
    ----------
    cost : array_like
        Initial cost [USD], >= 0.
    salvage : array_like
        Salvage value [USD], 0 <= salvage <= cost.
    life : array_like
        Useful life [periods], > 0.
    start_period, end_period : array_like
        Marks bounding the interval, ``0 <= start_period <= end_period <= life``; fractions
        allowed [periods].
    factor : array_like, optional
        Rate multiplier of the declining balance (default 2), > 0.
    no_switch : array_like of bool, optional
        If true, never switch to straight line (default False).

    Returns
    -------
    numpy.ndarray or numpy.float64
        Depreciation between the two marks [USD].

    Raises
    ------
    ExcelFunctionError
        If ``cost < 0``, ``salvage < 0``, ``salvage > cost``, ``life <= 0``, ``factor <= 0``,
        ``start_period < 0``, ``start_period > end_period`` or ``end_period > life``
        (spreadsheet ``#NUM!``; LibreOffice accepts a negative salvage and, when
        ``start = end = 0``, ``life = 0``, which this function refuses).

    Notes
    -----
    The loop runs over periods (up to ``ceil(max(end_period))``), vectorized over elements.

    References
    ----------
    Microsoft Support, "VDB function"; OpenFormula (ODF 1.2 Part 2) section 6.12, VDB; LibreOffice
    ``ScInterpreter::ScVDB`` and ``ScInterVDB`` (fractional periods).

    Examples
    --------
    >>> float(vdb(2400, 300, 10, 0, 0.875, 1.5))
    315.0
    """
    cost, salvage, life, start, end, factor = map(
        _f, (cost, salvage, life, start_period, end_period, factor))
    no_switch = np.asarray(no_switch, dtype=bool)
    _raise_if(cost < 0, "vdb", "cost", cost, "at least 0 [USD]")
    _raise_if(salvage < 0, "vdb", "salvage", salvage, "at least 0 [USD]")
    _raise_if(salvage > cost, "vdb", "salvage", salvage, "at most cost [USD]")
    _raise_if(life <= 0, "vdb", "life", life, "greater than 0 [periods]")
    _raise_if(factor <= 0, "vdb", "factor", factor, "greater than 0")
    _raise_if(start < 0, "vdb", "start_period", start, "at least 0 [periods]")
    _raise_if(start > end, "vdb", "start_period", start, "at most end_period [periods]")
    _raise_if(end > life, "vdb", "end_period", end, "at most life [periods]")

    cost, salvage, life, start, end, factor, no_switch = np.broadcast_arrays(
        cost, salvage, life, start, end, factor, no_switch)
    first = np.floor(_snap(start))  # periods first+1 .. last are (partly) covered
    last = np.ceil(_snap(end))
    n_loop = int(np.nanmax(last, initial=0.0)) if last.size else 0
    total = np.zeros(cost.shape)
    booked = np.zeros(cost.shape)  # declining-balance depreciation taken before the switch
    switched = np.zeros(cost.shape, dtype=bool)
    straight = np.zeros(cost.shape)
    with np.errstate(all="ignore"):
        for p in range(1, n_loop + 1):
            declining = _ddb_period(cost, salvage, life, float(p), factor)
            line = (cost - salvage - booked) / (life - p + 1.0)
            switch_now = ~switched & ~no_switch & (line > declining)
            straight = np.where(switch_now, line, straight)
            switched = switched | switch_now
            booked = np.where(switched, booked, booked + declining)
            amount = np.where(switched, straight, declining)
            # Covered share of period p: whole periods count 1; the period holding a fractional
            # start loses the elapsed part, the one holding a fractional end the part not reached.
            weight = (1.0 - np.where(p == first + 1, start - first, 0.0)
                      - np.where(p == last, last - end, 0.0))
            inside = (p > first) & (p <= last)
            total = total + np.where(inside, weight * amount, 0.0)
    return _out(total)


# ---------------------------------------------------------------------------------------------
# time value of money
# ---------------------------------------------------------------------------------------------


def _fv_core(rate, nper, pmt_, pv_, type_):
    g, gm1 = _growth(rate, nper)
    with np.errstate(all="ignore"):
        safe = np.where(rate == 0, 1.0, rate)
        general = -(pv_ * g + pmt_ * (1.0 + safe * type_) * gm1 / safe)
    return np.where(rate == 0, -(pv_ + pmt_ * nper), general)


def _pmt_core(rate, nper, pv_, fv_, type_):
    g, gm1 = _growth(rate, nper)
    with np.errstate(all="ignore"):
        safe = np.where(rate == 0, 1.0, rate)
        # rate / ((1+rate)**n - 1) first: the ratio stays exact even for denormal rates.
        general = -(fv_ + pv_ * g) * (safe / gm1) / (1.0 + safe * type_)
        flat = -(pv_ + fv_) / nper
    return np.where(rate == 0, flat, general)


def pmt(rate, nper, pv, fv=0, type=0):
    """Level payment per period of a loan or annuity (spreadsheet ``PMT``).

    Solves ``pv*(1+r)**n + pmt*(1 + r*type)*((1+r)**n - 1)/r + fv = 0`` for ``pmt``; at
    ``rate == 0``, ``pmt = -(pv + fv) / nper``.

    Parameters
    ----------
    rate : array_like
        Interest rate per period [1/period], >= -1.
    nper : array_like
        Number of payments [periods], nonzero.
    pv : array_like
        Present value (principal received is positive) [USD].
    fv : array_like, optional
        Future value left after the last payment (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Payment per period, negative when ``pv`` is positive [USD/period].

    Raises
    ------
    ExcelFunctionError
        If ``nper == 0`` or ``rate < -1`` (spreadsheet ``#NUM!``), or ``type`` is not 0 or 1
        (spreadsheets read any nonzero type as 1; this function refuses it).

    References
    ----------
    Microsoft Support, "PMT function"; OpenFormula (ODF 1.2 Part 2) section 6.12, PMT.

    Examples
    --------
    >>> round(float(pmt(0.08 / 12, 10, 10000)), 2)
    -1037.03
    """
    rate, nper, pv, fv = map(_f, (rate, nper, pv, fv))
    type_ = _check_type("pmt", type)
    _raise_if(nper == 0, "pmt", "nper", nper, "nonzero [periods]")
    _raise_if(rate < -1, "pmt", "rate", rate, "at least -1 [1/period]")
    return _out(_pmt_core(rate, nper, pv, fv, type_))


def fv(rate, nper, pmt, pv=0, type=0):
    """Future value of a present value and level payments (spreadsheet ``FV``).

    ``-(pv*(1+r)**n + pmt*(1 + r*type)*((1+r)**n - 1)/r)``; at ``rate == 0``,
    ``-(pv + pmt*nper)``.

    Parameters
    ----------
    rate : array_like
        Interest rate per period [1/period], >= -1.
    nper : array_like
        Number of periods [periods].
    pmt : array_like
        Payment per period [USD/period].
    pv : array_like, optional
        Present value (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Future value [USD].

    Raises
    ------
    ExcelFunctionError
        If ``rate < -1`` (spreadsheet ``#NUM!``) or ``type`` is not 0 or 1.

    References
    ----------
    Microsoft Support, "FV function"; OpenFormula (ODF 1.2 Part 2) section 6.12, FV.
    """
    rate, nper, pmt_, pv_ = map(_f, (rate, nper, pmt, pv))
    type_ = _check_type("fv", type)
    _raise_if(rate < -1, "fv", "rate", rate, "at least -1 [1/period]")
    return _out(_fv_core(rate, nper, pmt_, pv_, type_))


def pv(rate, nper, pmt, fv=0, type=0):
    """Present value of level payments and a future value (spreadsheet ``PV``).

    ``-(fv + pmt*(1 + r*type)*((1+r)**n - 1)/r) / (1+r)**n``; at ``rate == 0``,
    ``-(fv + pmt*nper)``.

    Parameters
    ----------
    rate : array_like
        Interest rate per period [1/period], > -1.
    nper : array_like
        Number of periods [periods].
    pmt : array_like
        Payment per period [USD/period].
    fv : array_like, optional
        Future value (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Present value [USD].

    Raises
    ------
    ExcelFunctionError
        If ``rate <= -1`` (spreadsheet ``#NUM!``: the discount factor is undefined) or ``type``
        is not 0 or 1.

    References
    ----------
    Microsoft Support, "PV function"; OpenFormula (ODF 1.2 Part 2) section 6.12, PV.
    """
    rate, nper, pmt_, fv_ = map(_f, (rate, nper, pmt, fv))
    type_ = _check_type("pv", type)
    _raise_if(rate <= -1, "pv", "rate", rate, "greater than -1 [1/period]")
    g, gm1 = _growth(rate, nper)
    with np.errstate(all="ignore"):
        safe = np.where(rate == 0, 1.0, rate)
        general = -(fv_ + pmt_ * (1.0 + safe * type_) * gm1 / safe) / g
    return _out(np.where(rate == 0, -(fv_ + pmt_ * nper), general))


def nper(rate, pmt, pv, fv=0, type=0):
    """Number of periods to go from ``pv`` to ``fv`` with level payments (spreadsheet ``NPER``).

    ``log((pmt*(1+r*type) - fv*r) / (pmt*(1+r*type) + pv*r)) / log(1+r)``; at ``rate == 0``,
    ``-(pv + fv) / pmt``.

    Parameters
    ----------
    rate : array_like
        Interest rate per period [1/period], > -1.
    pmt : array_like
        Payment per period [USD/period].
    pv : array_like
        Present value [USD].
    fv : array_like, optional
        Future value (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Number of periods [periods]; NaN where no number of periods exists (the payment never
        covers the interest, or ``pmt == 0`` at ``rate == 0``), which the spreadsheet shows
        as ``#NUM!``.

    Raises
    ------
    ExcelFunctionError
        If ``rate <= -1`` or ``type`` is not 0 or 1.

    References
    ----------
    Microsoft Support, "NPER function"; OpenFormula (ODF 1.2 Part 2) section 6.12, NPER.
    """
    rate, pmt_, pv_, fv_ = map(_f, (rate, pmt, pv, fv))
    type_ = _check_type("nper", type)
    _raise_if(rate <= -1, "nper", "rate", rate, "greater than -1 [1/period]")
    with np.errstate(all="ignore"):
        safe = np.where(rate == 0, 1.0, rate)
        due = pmt_ * (1.0 + safe * type_)
        ratio = (due - fv_ * safe) / (due + pv_ * safe)
        general = np.where(ratio > 0, np.log(np.where(ratio > 0, ratio, 1.0)) / np.log1p(safe),
                           np.nan)
        flat = np.where(pmt_ != 0, -(pv_ + fv_) / np.where(pmt_ != 0, pmt_, 1.0), np.nan)
    return _out(np.where(rate == 0, flat, general))


def _balance_fv(rate, k, nper_, pay, pv_, fv_, type_):
    """``FV(rate, k, pay, pv, type)`` for ``pay = PMT(rate, nper, pv, fv, type)``.

    The spreadsheet's forward formula subtracts two terms of size ``pv * (1+rate)**k``, which
    loses up to ``log10((1+rate)**k)`` digits late in a long loan. For ``rate > 0`` the same
    quantity follows from the remaining ``m = nper - k`` periods,
    ``fv / (1+rate)**m + pay * (1 + rate*type) * (1 - (1+rate)**-m) / rate``, whose terms are
    no larger than the result's inputs.
    """
    forward = _fv_core(rate, k, pay, pv_, type_)
    with np.errstate(all="ignore"):
        positive = rate > 0
        safe = np.where(positive, rate, 1.0)
        lg = -(nper_ - k) * np.log1p(safe)
        backward = (fv_ * np.exp(lg)
                    - pay * (1.0 + safe * type_) * np.expm1(lg) / safe)
    return np.where(positive, backward, forward)


def _ipmt_core(rate, per, nper_, pv_, fv_, type_):
    pay = _pmt_core(rate, nper_, pv_, fv_, type_)
    with np.errstate(all="ignore"):
        # Interest of period `per` is charged on the balance after per-1 periods (per-2 when
        # payments are in advance, the payment of that period having reduced it already).
        zeros, ones = np.zeros_like(type_), np.ones_like(type_)
        arrears = _balance_fv(rate, per - 1.0, nper_, pay, pv_, fv_, zeros) * rate
        advance = (_balance_fv(rate, per - 2.0, nper_, pay, pv_, fv_, ones) - pay) * rate
    return pay, np.where(type_ == 1, np.where(per == 1, 0.0, advance), arrears)


def _check_per(func, rate, per, nper_):
    _raise_if(nper_ == 0, func, "nper", nper_, "nonzero [periods]")
    _raise_if(rate < -1, func, "rate", rate, "at least -1 [1/period]")
    _raise_if(per < 1, func, "per", per, "at least 1 [periods]")
    _raise_if(per > nper_, func, "per", per, "at most nper [periods]")


def ipmt(rate, per, nper, pv, fv=0, type=0):
    """Interest part of payment number ``per`` (spreadsheet ``IPMT``).

    Interest on the balance outstanding before the payment: ``rate * FV(rate, per-1, PMT, pv)``
    for payments in arrears; for payments in advance ``rate * (FV(rate, per-2, PMT, pv, 1) -
    PMT)`` and 0 for the first payment.

    Parameters
    ----------
    rate : array_like
        Interest rate per period [1/period], >= -1.
    per : array_like
        Payment number, ``1 <= per <= nper`` [periods].
    nper : array_like
        Number of payments [periods].
    pv : array_like
        Present value [USD].
    fv : array_like, optional
        Future value (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Interest paid in the period, same sign as the payment [USD].

    Raises
    ------
    ExcelFunctionError
        If ``per < 1``, ``per > nper``, ``nper == 0``, ``rate < -1`` (spreadsheet ``#NUM!``) or
        ``type`` is not 0 or 1.

    References
    ----------
    Microsoft Support, "IPMT function"; OpenFormula (ODF 1.2 Part 2) section 6.12, IPMT; LibreOffice
    ``ScInterpreter::ScGetIpmt``.
    """
    rate, per, nper_, pv_, fv_ = map(_f, (rate, per, nper, pv, fv))
    type_ = _check_type("ipmt", type)
    _check_per("ipmt", rate, per, nper_)
    return _out(_ipmt_core(rate, per, nper_, pv_, fv_, type_)[1])


def ppmt(rate, per, nper, pv, fv=0, type=0):
    """Principal part of payment number ``per``: ``PMT - IPMT`` (spreadsheet ``PPMT``).

    Parameters and errors as :func:`ipmt`.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Principal repaid in the period, same sign as the payment [USD].

    References
    ----------
    Microsoft Support, "PPMT function"; OpenFormula (ODF 1.2 Part 2) section 6.12, PPMT.

    Examples
    --------
    >>> round(float(ppmt(0.10 / 12, 1, 24, 2000)), 2)
    -75.62
    """
    rate, per, nper_, pv_, fv_ = map(_f, (rate, per, nper, pv, fv))
    type_ = _check_type("ppmt", type)
    _check_per("ppmt", rate, per, nper_)
    pay, interest = _ipmt_core(rate, per, nper_, pv_, fv_, type_)
    return _out(pay - interest)


def rate(nper, pmt, pv, fv=0, type=0, guess=0.1):
    """Interest rate per period of an annuity (spreadsheet ``RATE``).

    Solves ``pv*(1+r)**n + pmt*(1 + r*type)*((1+r)**n - 1)/r + fv = 0`` for ``r`` with
    Newton's method from ``guess``, vectorized over all elements.

    Parameters
    ----------
    nper : array_like
        Number of periods [periods], > 0.
    pmt : array_like
        Payment per period [USD/period].
    pv : array_like
        Present value [USD].
    fv : array_like, optional
        Future value (default 0) [USD].
    type : array_like, optional
        0: payments at period end (default); 1: at period start.
    guess : array_like, optional
        Starting rate (default 0.1) [1/period].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Rate per period [1/period]; NaN where Newton does not converge to a rate above -1
        within 100 iterations (the spreadsheet's ``#NUM!``).

    Raises
    ------
    ExcelFunctionError
        If ``nper <= 0`` (spreadsheet ``#NUM!``) or ``type`` is not 0 or 1.

    References
    ----------
    Microsoft Support, "RATE function"; OpenFormula (ODF 1.2 Part 2) section 6.12, RATE.

    Examples
    --------
    >>> round(float(rate(48, -200, 8000)), 10)
    0.0077014725
    """
    n, pay, pv_, fv_, guess_ = map(_f, (nper, pmt, pv, fv, guess))
    type_ = _check_type("rate", type)
    _raise_if(n <= 0, "rate", "nper", n, "greater than 0 [periods]")
    n, pay, pv_, fv_, type_, r = (np.array(a, dtype=np.float64) for a in np.broadcast_arrays(
        n, pay, pv_, fv_, type_, guess_))
    result = np.full(r.shape, np.nan)
    active = np.ones(r.shape, dtype=bool) & (r > -1)
    with np.errstate(all="ignore"):
        for _ in range(100):
            if not active.any():
                break
            ra, na = r[active], n[active]
            pa, pva, fva, ta = pay[active], pv_[active], fv_[active], type_[active]
            g, gm1 = _growth(ra, na)
            zero = ra == 0
            safe = np.where(zero, 1.0, ra)
            annuity = np.where(zero, na, gm1 / safe)
            dg = na * g / (1.0 + ra)
            # d/dr of (g - 1)/r cancels badly near r = 0; use its Taylor series there.
            small = np.abs(ra) < 1e-5
            d_annuity = np.where(
                small,
                na * (na - 1.0) / 2.0 + na * (na - 1.0) * (na - 2.0) / 3.0 * ra,
                (dg * safe - gm1) / (safe * safe))
            f = pva * g + pa * (1.0 + ra * ta) * annuity + fva
            df = pva * dg + pa * (ta * annuity + (1.0 + ra * ta) * d_annuity)
            r_new = np.where(f == 0, ra, ra - f / df)
            ok = np.isfinite(r_new) & (r_new > -1)
            conv = ok & (np.abs(r_new - ra) <= _RATE_TOL * np.maximum(1.0, np.abs(r_new)))
            where = np.flatnonzero(active)
            result.flat[where[conv]] = r_new[conv]
            r.flat[where] = r_new
            active.flat[where[conv | ~ok]] = False
    return _out(result)


# ---------------------------------------------------------------------------------------------
# valuation
# ---------------------------------------------------------------------------------------------


def npv(rate, values):
    """Net present value, spreadsheet convention: the first value is discounted one period.

    ``sum(values[i] / (1 + rate)**(i + 1))`` for ``i = 0 .. n-1`` along the last axis. To value
    a series whose first flow is at time 0, add it outside (``values[0] + npv(r, values[1:])``)
    or use :func:`npv_batch`.

    Parameters
    ----------
    rate : array_like
        Discount rate per period [1/period], broadcast against ``values.shape[:-1]``.
    values : array_like
        Cash flows at the end of periods 1..n, along the last axis [USD].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Net present value one period before the first value [USD].

    Raises
    ------
    ExcelFunctionError
        If ``rate == -1`` (spreadsheet ``#NUM!`` / ``#DIV/0!``).

    References
    ----------
    Microsoft Support, "NPV function"; OpenFormula (ODF 1.2 Part 2) section 6.12, NPV.

    Examples
    --------
    >>> round(float(npv(0.10, [-10000, 3000, 4200, 6800])), 2)
    1188.44
    """
    rate, values = _f(rate), np.atleast_1d(_f(values))
    _raise_if(rate == -1, "npv", "rate", rate, "different from -1 [1/period]")
    t = np.arange(1, values.shape[-1] + 1, dtype=np.float64)
    with np.errstate(all="ignore"):
        discount = np.power(1.0 + rate[..., None], -t)
    return _out(np.sum(values * discount, axis=-1))


def _to_days(dates) -> np.ndarray:
    """Dates as day numbers [days]: datetime64, date/datetime objects, ISO strings or serials."""
    arr = np.asarray(dates)
    if arr.dtype.kind in "iuf":
        # Spreadsheet date serials: the time of day is dropped, as the spreadsheet does.
        return np.floor(arr.astype(np.float64))
    if arr.dtype.kind != "M":
        try:
            arr = arr.astype("datetime64[D]")
        except (TypeError, ValueError) as exc:
            raise ExcelFunctionError(
                f"dates must be numpy datetime64, date objects, ISO date strings or day "
                f"numbers, got an array of {arr.dtype}") from exc
    return arr.astype("datetime64[D]").astype(np.int64).astype(np.float64)


def _year_fractions(func: str, values: np.ndarray, dates) -> np.ndarray:
    days = _to_days(dates)
    if days.ndim == 0 or days.shape[-1] != values.shape[-1]:
        raise ExcelFunctionError(
            f"{func}: dates must have one date per value ({values.shape[-1]} values), got "
            f"{1 if days.ndim == 0 else days.shape[-1]} dates")
    elapsed = days - days[..., :1]
    if (elapsed < 0).any():
        bad = np.broadcast_to(days, elapsed.shape)[elapsed < 0].flat[0]
        first = np.broadcast_to(days[..., :1], elapsed.shape)[elapsed < 0].flat[0]
        raise ExcelFunctionError(
            f"{func}: dates must be on or after the first date "
            f"{np.datetime64(int(first), 'D')}, got {np.datetime64(int(bad), 'D')}")
    return elapsed / DAYS_PER_YEAR_XIRR


def xnpv(rate, values, dates):
    """Net present value of irregularly dated cash flows (spreadsheet ``XNPV``).

    ``sum(values[i] / (1 + rate)**((dates[i] - dates[0]) / 365))`` along the last axis: the
    first value is not discounted, day counts are actual days over a 365-day year.

    Parameters
    ----------
    rate : array_like
        Annual discount rate [1/year], > -1, broadcast against ``values.shape[:-1]``.
    values : array_like
        Cash flows, along the last axis [USD].
    dates : array_like
        One date per value (numpy datetime64, ``datetime.date`` objects, ISO strings or
        spreadsheet day serials), shape ``(n,)`` or broadcastable to ``values``. Later dates
        need not be sorted but none may precede the first.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Net present value at the first date [USD].

    Raises
    ------
    ExcelFunctionError
        If ``rate <= -1``, the number of dates differs from the number of values, or a date
        precedes the first date (Excel ``#NUM!``; LibreOffice computes a value for an earlier
        date, which this function refuses).

    References
    ----------
    Microsoft Support, "XNPV function"; OpenFormula (ODF 1.2 Part 2) section 6.12, XNPV.
    """
    rate, values = _f(rate), np.atleast_1d(_f(values))
    _raise_if(rate <= -1, "xnpv", "rate", rate, "greater than -1 [1/year]")
    years = _year_fractions("xnpv", values, dates)
    return _out(np.sum(values * np.power(1.0 + rate[..., None], -years), axis=-1))


def _require_both_signs(func: str, flat: np.ndarray) -> None:
    both = (flat > 0).any(axis=-1) & (flat < 0).any(axis=-1)
    if not both.all():
        row = int(np.flatnonzero(~both)[0])
        where = f" (series {row})" if flat.shape[0] > 1 else ""
        raise ExcelFunctionError(
            f"{func}: values must contain at least one positive and one negative cash "
            f"flow{where}, got {np.array2string(flat[row], threshold=8, precision=6)}")


def irr(values, guess=0.1):
    """Internal rate of return of equally spaced cash flows (spreadsheet ``IRR``).

    The rate ``r > -1`` at which ``sum(values[t] / (1 + r)**t) = 0``. Solved by
    :func:`irr_batch`: Newton from ``guess`` when the flows change sign once (the root is then
    unique); otherwise the sign change nearest ``guess`` on a scan of rates from -99.9999% to
    +100,000% per period is refined by the Illinois method, i.e. the root nearest the guess
    (see :func:`irr_batch` for the resolution of that scan). A spreadsheet's Newton iteration
    may land on another root when there are several.

    Parameters
    ----------
    values : array_like
        Cash flows along the last axis, first at time 0 [USD]; leading axes are independent
        series.
    guess : array_like, optional
        Rate near which to look (default 0.1) [1/period].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Internal rate of return per period [1/period].

    Raises
    ------
    ExcelFunctionError
        If a series does not hold at least one positive and one negative value, or no rate is
        found (spreadsheet ``#NUM!``).

    References
    ----------
    Microsoft Support, "IRR function"; OpenFormula (ODF 1.2 Part 2) section 6.12, IRR.

    Examples
    --------
    >>> round(float(irr([-70000, 12000, 15000, 18000, 21000, 26000])), 9)
    0.086630948
    """
    values = np.atleast_1d(_f(values))
    flat = values.reshape(-1, values.shape[-1])
    _require_both_signs("irr", flat)
    guess_ = _f(guess)
    _raise_if(guess_ <= -1, "irr", "guess", guess_, "greater than -1 [1/period]")
    guess_flat = np.broadcast_to(guess_, values.shape[:-1]).reshape(-1)
    result = irr_batch(flat, guess_flat)
    if np.isnan(result).any():
        row = int(np.flatnonzero(np.isnan(result))[0])
        raise ExcelFunctionError(
            f"irr: values must have an internal rate of return above -1 per period, got "
            f"none for {np.array2string(flat[row], threshold=8, precision=6)}")
    return _out(result.reshape(values.shape[:-1]))


def xirr(values, dates, guess=0.1):
    """Internal rate of return of irregularly dated cash flows (spreadsheet ``XIRR``).

    The annual rate ``r > -1`` at which :func:`xnpv` is zero. Solved as :func:`irr` (Newton
    when the time-ordered flows change sign once, else the root nearest ``guess``).

    Parameters
    ----------
    values : array_like
        Cash flows along the last axis [USD].
    dates : array_like
        One date per value, none before the first (see :func:`xnpv`).
    guess : array_like, optional
        Rate near which to look (default 0.1) [1/year].

    Returns
    -------
    numpy.ndarray or numpy.float64
        Internal rate of return [1/year].

    Raises
    ------
    ExcelFunctionError
        If a series lacks a positive or a negative value, the number of dates differs from the
        number of values, a date precedes the first date, or no rate is found (spreadsheet
        ``#NUM!``).

    References
    ----------
    Microsoft Support, "XIRR function"; OpenFormula (ODF 1.2 Part 2) section 6.12, XIRR.
    """
    values = np.atleast_1d(_f(values))
    years = _year_fractions("xirr", values, dates)
    flat = values.reshape(-1, values.shape[-1])
    _require_both_signs("xirr", flat)
    guess_ = _f(guess)
    _raise_if(guess_ <= -1, "xirr", "guess", guess_, "greater than -1 [1/year]")
    years = np.broadcast_to(years, values.shape).reshape(flat.shape)
    guess_flat = np.broadcast_to(guess_, values.shape[:-1]).reshape(-1)
    result = _xirr_years(flat, years, guess_flat)
    if np.isnan(result).any():
        row = int(np.flatnonzero(np.isnan(result))[0])
        raise ExcelFunctionError(
            f"xirr: values must have an internal rate of return above -1 per year, got none "
            f"for {np.array2string(flat[row], threshold=8, precision=6)}")
    return _out(result.reshape(values.shape[:-1]))


def mirr(values, finance_rate, reinvest_rate):
    """Modified internal rate of return (spreadsheet ``MIRR``).

    ``(FV(positive flows at reinvest_rate) / -PV(negative flows at finance_rate))**(1/(n-1))
    - 1``, with both values taken over the ``n`` periods of the series along the last axis.

    Parameters
    ----------
    values : array_like
        Cash flows along the last axis, first at time 0 [USD].
    finance_rate : array_like
        Rate paid on the money invested (negative flows) [1/period], > -1.
    reinvest_rate : array_like
        Rate earned on reinvested positive flows [1/period], > -1.

    Returns
    -------
    numpy.ndarray or numpy.float64
        Modified internal rate of return per period [1/period].

    Raises
    ------
    ExcelFunctionError
        If a series lacks a positive or a negative value (spreadsheet ``#DIV/0!``) or a rate is
        ``<= -1``.

    References
    ----------
    Microsoft Support, "MIRR function"; OpenFormula (ODF 1.2 Part 2) section 6.12, MIRR.

    Examples
    --------
    >>> round(float(mirr([-120000, 39000, 30000, 21000, 37000, 46000], 0.10, 0.12)), 9)
    0.12609413
    """
    values = np.atleast_1d(_f(values))
    finance, reinvest = _f(finance_rate), _f(reinvest_rate)
    _require_both_signs("mirr", values.reshape(-1, values.shape[-1]))
    _raise_if(finance <= -1, "mirr", "finance_rate", finance, "greater than -1 [1/period]")
    _raise_if(reinvest <= -1, "mirr", "reinvest_rate", reinvest, "greater than -1 [1/period]")
    n = values.shape[-1]
    t = np.arange(n, dtype=np.float64)
    gains = np.sum(np.where(values > 0, values, 0.0)
                   * np.power(1.0 + reinvest[..., None], n - 1.0 - t), axis=-1)
    costs = np.sum(np.where(values < 0, values, 0.0)
                   * np.power(1.0 + finance[..., None], -t), axis=-1)
    return _out(np.power(-gains / costs, 1.0 / (n - 1.0)) - 1.0)


# ---------------------------------------------------------------------------------------------
# batch solvers
# ---------------------------------------------------------------------------------------------


class _PeriodicBlock:
    """Cash flows at t = 0, 1, ..., T-1 of m series, stored time-major (T, m) for Horner."""

    def __init__(self, flows_tm: np.ndarray):
        self.flows_tm = flows_tm

    def subset(self, keep: np.ndarray) -> _PeriodicBlock:
        return _PeriodicBlock(self.flows_tm[:, keep])

    def npv_and_slope(self, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """NPV and dNPV/drho at rho = log(1+r).

        Many series: Horner's rule in x = exp(-rho) = 1/(1+r), a loop over periods whose steps
        are each one vectorized operation over all series. Few series (where that loop's
        per-step overhead dominates): the discount factors exp(-rho t) as one (T, m) array.
        """
        c = self.flows_tm
        if c.shape[1] <= _FEW_SERIES:
            t = np.arange(c.shape[0], dtype=np.float64)[:, None]
            # A zero flow contributes 0 even where its factor overflows (Horner's rule never
            # forms that factor): no 0 * inf = NaN from trailing zeros near r = -1.
            discount = np.where(c != 0, np.exp(t * -rho), 0.0)
            return (np.einsum("tj,tj->j", c, discount),
                    -np.einsum("tj,tj->j", c * t, discount))
        x = np.exp(-rho)
        p = c[-1].copy()
        dp = np.zeros_like(p)
        for t in range(c.shape[0] - 2, -1, -1):
            dp *= x
            dp += p
            p *= x
            p += c[t]
        # dNPV/drho = dNPV/dx * dx/drho = dp * (-x)
        dp *= x
        np.negative(dp, out=dp)
        return p, dp

    def value(self, r: np.ndarray, fv_form: np.ndarray) -> np.ndarray:
        """A function with the sign and roots of NPV(r) that cannot overflow.

        For r >= 0 the NPV itself; for r < 0 the NPV compounded to the last period,
        sum c_t (1+r)**(T-1-t), whose powers stay <= 1 however close r is to -1.
        """
        c = self.flows_tm
        out = np.empty(r.shape)
        for form in (False, True):
            sel = fv_form == form
            if not sel.any():
                continue
            rows = c[:, sel]
            if form:
                x, order = 1.0 + r[sel], range(1, c.shape[0])
                acc = rows[0].copy()
            else:
                x, order = 1.0 / (1.0 + r[sel]), range(c.shape[0] - 2, -1, -1)
                acc = rows[-1].copy()
            for t in order:
                acc *= x
                acc += rows[t]
            out[sel] = acc
        return out

    def scan(self, rates: np.ndarray) -> np.ndarray:
        """``value`` at each of ``rates`` for every series, as one matrix product (m, K)."""
        T = self.flows_tm.shape[0]
        t = np.arange(T, dtype=np.float64)[:, None]
        base = 1.0 + rates[None, :]
        with np.errstate(over="ignore"):
            powers = np.where(rates[None, :] < 0, base ** (T - 1 - t), base ** (-t))
        return self.flows_tm.T @ powers


class _DatedBlock:
    """Cash flows at times ``years`` (shared (T,) or per series (m, T)) of m series."""

    def __init__(self, flows: np.ndarray, years: np.ndarray):
        self.flows = flows
        self.years = years
        self.flows_years = flows * years
        self.span = np.broadcast_to(years.max(axis=-1), flows.shape[:1])

    def subset(self, keep: np.ndarray) -> _DatedBlock:
        years = self.years if self.years.ndim == 1 else self.years[keep]
        return _DatedBlock(self.flows[keep], years)

    def npv_and_slope(self, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """XNPV and dXNPV/drho at rho = log(1+r)."""
        discount = np.exp(-rho[:, None] * self.years)
        f = np.einsum("ij,ij->i", self.flows, discount)
        df = -np.einsum("ij,ij->i", self.flows_years, discount)
        return f, df

    def value(self, r: np.ndarray, fv_form: np.ndarray) -> np.ndarray:
        # Same idea as _PeriodicBlock.value: compound to the last date when r < 0.
        rho = np.log1p(r)[:, None]
        exponent = np.where(fv_form[:, None], self.span[:, None] - self.years, -self.years)
        return np.einsum("ij,ij->i", self.flows, np.exp(rho * exponent))

    def scan(self, rates: np.ndarray) -> np.ndarray:
        rho = np.log1p(rates)
        if self.years.ndim == 1:
            span = self.years.max()
            exponent = np.where(rates[None, :] < 0, span - self.years[:, None],
                                -self.years[:, None])
            return self.flows @ np.exp(rho[None, :] * exponent)
        m = self.flows.shape[0]
        out = np.empty((m, rates.size))
        for k, rk in enumerate(rates):
            out[:, k] = self.value(np.full(m, rk), np.full(m, rk < 0))
        return out


def _newton(block, r0: np.ndarray) -> np.ndarray:
    """Newton on NPV for all series of a block; NaN where it fails or leaves (-1, inf).

    The iteration runs in rho = log(1 + r): every real rho is a rate above -1, so a long step
    cannot leave the domain (Newton in r overshoots below -1 when the root is near -1, as in
    an annualized XIRR over a few weeks), and the NPV is smoother in rho for large rates.
    """
    out = np.full(r0.shape, np.nan)
    idx = np.arange(r0.size)
    live = np.ones(r0.size, dtype=bool)
    with np.errstate(all="ignore"):
        rho = np.log1p(r0)
        for _ in range(_NEWTON_MAXIT):
            f, df = block.npv_and_slope(rho)
            rho_new = np.where(f == 0, rho, rho - f / df)
            r_new = np.expm1(rho_new)
            # An overflowing slope gives a zero step far from the root: a failure, not
            # convergence.
            ok = np.isfinite(rho_new) & (r_new > -1) & np.isfinite(r_new) & np.isfinite(df)
            # Converged when the step in rho is small: near r = -1 steps in r vanish while rho
            # still runs off to -inf (a false convergence at r = -1).
            step_ok = np.abs(rho_new - rho) <= _RATE_TOL * np.maximum(1.0, np.abs(rho_new))
            conv = live & ok & step_ok
            out[idx[conv]] = r_new[conv]
            live &= ok & ~conv
            n_live = np.count_nonzero(live)
            if n_live == 0:
                break
            if n_live < _COMPACT_BELOW * live.size:
                # Iterate only on the series still moving: compact the working set (a copy,
                # so only once enough series have stopped to pay for it).
                idx, block, rho_new = idx[live], block.subset(live), rho_new[live]
                live = np.ones(n_live, dtype=bool)
            rho = rho_new
    return out


def _illinois(block, a, b, fa, fb, fv_form) -> np.ndarray:
    """Illinois (modified regula falsi) on brackets [a, b] with f(a) * f(b) < 0."""
    out = np.full(a.shape, np.nan)
    idx = np.arange(a.size)
    side = np.zeros(a.shape, dtype=np.int8)
    c_prev = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        for _ in range(_ILLINOIS_MAXIT):
            c = (fa * b - fb * a) / (fa - fb)
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            c = np.where(np.isfinite(c) & (c > lo) & (c < hi), c, 0.5 * (a + b))
            fc = block.value(c, fv_form)
            tol = _RATE_TOL * np.maximum(1.0, np.abs(c))
            conv = (fc == 0) | (hi - lo <= tol) | (np.abs(c - c_prev) <= 0.5 * tol)
            out[idx[conv]] = c[conv]
            # Keep the bracket: replace the end point whose f has the sign of f(c); halve the
            # other end's f when the same end is replaced twice running (the Illinois step).
            same_b = fc * fb > 0
            fa = np.where(same_b & (side == -1), 0.5 * fa, fa)
            fb = np.where(~same_b & (side == 1), 0.5 * fb, fb)
            b, fb = np.where(same_b, c, b), np.where(same_b, fc, fb)
            a, fa = np.where(same_b, a, c), np.where(same_b, fa, fc)
            side = np.where(same_b, -1, 1).astype(np.int8)
            keep = ~conv & np.isfinite(fc)
            if not keep.all():
                idx, block = idx[keep], block.subset(keep)
                a, b, fa, fb, side, fv_form = (v[keep] for v in (a, b, fa, fb, side, fv_form))
                c = c[keep]
            c_prev = c
            if idx.size == 0:
                break
    return out


def _bracket_nearest(block, guess: np.ndarray) -> np.ndarray:
    """Root nearest ``guess``: scan rates for sign changes, pick the nearest, refine it.

    With one guess for all series the scan widens in steps (_WINDOWS grid rates on each side
    of the guess, then the whole grid): where a window shows a bracket nearer than its edges,
    no rate outside can be nearer, so only the other series go on to the wider scan (the same
    answer as scanning the whole grid, several times faster).
    """
    if not (guess.size and np.all(guess == guess[0])):
        return _nearest_in_grid(block, guess, _SCAN_RATES)[0]
    n_grid = _SCAN_RATES.size
    g = guess[0]
    centre = int(np.searchsorted(_SCAN_RATES, g))
    out = np.full(guess.size, np.nan)
    todo = np.arange(guess.size)
    for half in (*_WINDOWS, n_grid):
        lo, hi = max(0, centre - half), min(n_grid, centre + half + 1)
        sub = block if todo.size == guess.size else block.subset(todo)
        found, distance = _nearest_in_grid(sub, guess[todo], _SCAN_RATES[lo:hi])
        edge = min(g - _SCAN_RATES[lo] if lo > 0 else np.inf,
                   _SCAN_RATES[hi - 1] - g if hi < n_grid else np.inf)
        done = np.isfinite(found) & (distance < edge) | (lo == 0) & (hi == n_grid)
        out[todo[done]] = found[done]
        todo = todo[~done]
        if todo.size == 0:
            break
    return out


_WINDOWS = (40, 120)
"""Grid rates scanned on each side of the guess before wider scans, then the whole grid."""


def _nearest_in_grid(block, guess: np.ndarray, grid: np.ndarray):
    """Root nearest ``guess`` among the sign changes on ``grid`` (increasing rates), and the
    distance from the guess to its bracket; NaN and inf where the grid shows no change."""
    values = block.scan(grid)
    m = values.shape[0]
    out = np.full(m, np.nan)
    found_distance = np.full(m, np.inf)
    positive = values > 0
    # Sign changes between neighbouring grid rates (cell k: grid[k]..grid[k+1]); a zero counts
    # as negative, so an exact zero on the grid shows up as a change with the zero at one end.
    change = positive[:, :-1] != positive[:, 1:]
    # Cells left of the guess lie nearer the higher their k, the others the lower their k: the
    # nearest change is the last one on the left or the first one on the right (the left one
    # on a tie, as the lower rate).
    cell = np.arange(change.shape[1])
    split = np.searchsorted(grid[1:], guess, side="left")[:, None]
    left, right = change & (cell < split), change & (cell >= split)
    k_left = change.shape[1] - 1 - left[:, ::-1].argmax(axis=1)
    k_right = right.argmax(axis=1)
    g = guess
    d_left = np.where(left.any(axis=1), g - grid[k_left + 1], np.inf)
    d_right = np.where(right.any(axis=1), np.maximum(grid[k_right] - g, 0.0), np.inf)
    use_left = d_left <= d_right
    distance = np.where(use_left, d_left, d_right)
    rows = np.flatnonzero(np.isfinite(distance))
    if rows.size == 0:
        return out, found_distance
    found_distance[rows] = distance[rows]
    k = np.where(use_left, k_left, k_right)[rows]
    a, b = grid[k], grid[k + 1]
    fa, fb = values[rows, k], values[rows, k + 1]
    out[rows] = np.where(fa == 0, a, np.where(fb == 0, b, np.nan))
    open_ = (fa != 0) & (fb != 0)
    if open_.any():
        sub = block.subset(rows[open_])
        out[rows[open_]] = _refine(sub, a[open_], b[open_], fa[open_], fb[open_])
    return out, found_distance


def _refine(block, a, b, fa, fb) -> np.ndarray:
    """The root inside each grid cell [a, b]: Newton from the middle, which converges in a few
    steps in a cell this narrow; Illinois where Newton fails or leaves the cell."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    root = _newton(block, 0.5 * (a + b))
    bad = ~(np.isfinite(root) & (root >= lo) & (root <= hi))
    if bad.any():
        # 0 is a grid rate, so no bracket straddles it: one evaluation form per bracket.
        root[bad] = _illinois(block.subset(bad), a[bad], b[bad], fa[bad], fb[bad], b[bad] <= 0)
    return root


def _sign_structure(flows_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per series: (has a positive and a negative flow, changes sign exactly once).

    A series whose negative flows all precede its positive ones (or the reverse) has, by
    Descartes' rule of signs (which also holds for sums of exponentials), exactly one rate
    above -1 at which its NPV is zero, so Newton's answer is the answer.
    """
    T = flows_sorted.shape[1]
    pos, neg = flows_sorted > 0, flows_sorted < 0
    first_pos, first_neg = pos.argmax(axis=1), neg.argmax(axis=1)
    rows = np.arange(flows_sorted.shape[0])
    both = pos[rows, first_pos] & neg[rows, first_neg]
    last_pos = T - 1 - pos[:, ::-1].argmax(axis=1)
    last_neg = T - 1 - neg[:, ::-1].argmax(axis=1)
    return both, both & ((last_neg < first_pos) | (last_pos < first_neg))


# Screened scan of equally spaced series (irr_batch). Every series' NPV is computed on a
# coarse subset of the grid (one matrix product). A series whose flows change sign once has
# one root, in the coarse cell where its NPV changes sign. For the other series a rigorous
# bound of the NPV over each coarse cell, from the slopes at the cell's ends, clears the
# cells where the NPV keeps one sign. Only the grid rates of the other cells are scanned,
# and Newton starts inside the grid cell of the sign change nearest the guess.
_FINE = 16
"""Grid cells per fine block: the grid rates scanned together for one series."""
_SCREEN_NODES = np.array([0, 64, 128, 160, 192, 208, 224, 240, 256, 272, 288, 304, 320, 336,
                          352, 368, 384, 400, 416, 432, 448, 464, 480, 496, 512, 544, 576, 640])
"""Grid indices of the coarse scan: multiples of _FINE, _FINE apart where series of monthly
flows have their roots (-20% to +55% per period), wider further out. r = 0 (index 336) and
both ends of the grid are nodes, so each coarse cell lies in one evaluation form."""
_SCREEN_FIRST = _SCREEN_NODES[:-1] // _FINE  # first fine block of each coarse cell
_SCREEN_BLOCKS = np.diff(_SCREEN_NODES) // _FINE  # fine blocks in each coarse cell
_SCREEN_ZERO = int(np.searchsorted(_SCREEN_NODES, np.flatnonzero(_SCAN_RATES == 0.0)[0]))
_SCAN_RHO = np.log1p(_SCAN_RATES)
_SCREEN_RHO = _SCAN_RHO[_SCREEN_NODES]


class _GridTables:
    """Factors of the scan grid shared by all series of ``T`` periods (cached per ``T``).

    ``powers`` (T, 641): the factors of :meth:`_PeriodicBlock.value` at every grid rate
    (compounded to the last period below r = 0, discounted to period 0 from r = 0 on), so
    that ``flows @ powers`` is :meth:`_PeriodicBlock.scan` on the whole grid. ``coarse``:
    its columns at the coarse nodes. ``slopes``: the factors ``|e_t| w_t`` of the slope
    dV/drho = sum_t c_t e_t w_t(rho) at the coarse nodes, e_t = T-1-t at the nodes <= 0
    (compounded form), then e_t = -t at the nodes >= 0 (discounted form), then a column of
    ones (the sums of the flows). ``blocks[j]``: the 17 columns of fine block j (grid rates
    16 j .. 16 j + 16).
    """

    def __init__(self, T: int):
        t = np.arange(T, dtype=np.float64)[:, None]
        base = 1.0 + _SCAN_RATES[None, :]
        with np.errstate(over="ignore"):
            self.powers = np.where(_SCAN_RATES[None, :] < 0, base ** (T - 1 - t), base ** (-t))
        self.coarse = np.ascontiguousarray(self.powers[:, _SCREEN_NODES])
        z = _SCREEN_ZERO
        self.slopes = np.hstack([(T - 1 - t) * self.coarse[:, :z + 1], t * self.coarse[:, z:],
                                 np.ones((T, 1))])
        n_blocks = (_SCAN_POINTS - 1) // _FINE
        self.blocks = np.stack([self.powers[:, j * _FINE:(j + 1) * _FINE + 1]
                                for j in range(n_blocks)])
        # Relative rounding error of a length-T dot product, with a wide margin.
        self.rel_err = 1e-11 + 16.0 * T * np.finfo(np.float64).eps


_GRID_TABLES: dict[int, _GridTables] = {}


def _grid_tables(T: int) -> _GridTables:
    tables = _GRID_TABLES.get(T)
    if tables is None:
        if len(_GRID_TABLES) >= 8:
            _GRID_TABLES.clear()
        tables = _GRID_TABLES[T] = _GridTables(T)
    return tables


def _sign_certain(flows: np.ndarray, rows: np.ndarray, values: np.ndarray,
                  tables: _GridTables) -> np.ndarray:
    """(m, n_cells) True where the NPV of series ``flows[rows]`` (m, T), whose values at the
    coarse nodes are ``values``, provably keeps one sign over a coarse cell.

    On a cell [a, b] in rho = log(1 + r) every factor w_t(rho) is monotone (rising in the
    compounded form, falling in the discounted form), so the slope V' = sum_t c_t e_t w_t
    splits into a rising and a falling sum whose values at a and b bound V' to [lo, hi] on
    the cell. Then V(rho) <= min(V(a) + hi (rho - a), V(b) - lo (b - rho)): V < 0 on the
    whole cell iff -V(a) / hi+ + -V(b) / (-lo)+ > b - a (x / 0 = inf), and the mirror image
    for V > 0. V(a) and V(b) are first moved towards 0 by the rounding allowance of a scanned
    NPV on the cell, so that every grid rate in a certain cell also scans with that sign.
    """
    m, T = rows.size, flows.shape[1]
    z = _SCREEN_ZERO
    parts = np.empty((2, m, T))
    np.take(flows, rows, axis=0, out=parts[1])
    np.maximum(parts[1], 0.0, out=parts[0])
    np.subtract(parts[0], parts[1], out=parts[1])  # the positive and the negative parts
    grow = (parts.reshape(2 * m, T) @ tables.slopes).reshape(2, m, -1)
    p_f, n_f = grow[0, :, :z + 1], grow[1, :, :z + 1]
    p_p, n_p = grow[0, :, z + 1:-1], grow[1, :, z + 1:-1]
    # Compounded form (cells left of r = 0): e_t >= 0, the positive flows make the rising
    # sum. Discounted form: e_t <= 0, the negative flows make the rising sum.
    n_cells = _SCREEN_NODES.size - 1
    hi, fall, tol = np.empty((m, n_cells)), np.empty((m, n_cells)), np.empty((m, n_cells))
    np.subtract(p_f[:, 1:], n_f[:, :-1], out=hi[:, :z])
    np.subtract(n_f[:, 1:], p_f[:, :-1], out=fall[:, :z])
    np.subtract(n_p[:, :-1], p_p[:, 1:], out=hi[:, z:])
    np.subtract(p_p[:, :-1], n_p[:, 1:], out=fall[:, z:])
    # Rounding allowance: sum_t |c_t| w_t <= |c_T-1| + sum_t |c_t| (T-1-t) w_t (compounded,
    # w_T-1 = 1), <= |c_0| + sum_t |c_t| t w_t (discounted, w_0 = 1), largest at b and at a
    # respectively; times rel_err it also bounds the rounding of hi and fall.
    np.add(p_f[:, 1:], n_f[:, 1:], out=tol[:, :z])
    tol[:, :z] += np.abs(flows[rows, -1:])
    np.add(p_p[:, :-1], n_p[:, :-1], out=tol[:, z:])
    tol[:, z:] += np.abs(flows[rows, :1])
    tol *= tables.rel_err
    # Plus the error of terms that underflow: below 1e-300 of sum |c_t| (+ T) no sign counts.
    tol += 1e-300 * (grow[0, :, -1:] + grow[1, :, -1:] + T)
    # hi = max slope, fall = -min slope, widened by their rounding and clipped at +0.0 (so
    # that x / 0 has the sign of x).
    hi += tol
    fall += tol
    np.maximum(hi, 0.0, out=hi)
    np.maximum(fall, 0.0, out=fall)
    va, vb = values[:, :-1], values[:, 1:]
    width = np.diff(_SCREEN_RHO) * (1.0 + 1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):
        ua, ub = va + tol, vb + tol
        below = (ua < 0) & (ub < 0) & (ua / hi + ub / fall < -width)
        ua, ub = va - tol, vb - tol
        above = (ua > 0) & (ub > 0) & (ua / fall + ub / hi > width)
    return below | above


def _inverse_cubic(v: np.ndarray, x: np.ndarray, x_a, x_b, f_a, f_b) -> np.ndarray:
    """Newton's starting point in a cell [x_a, x_b] (rho) where the NPV goes from f_a to f_b:
    x as the cubic in the NPV through four neighbouring nodes (values ``v``, positions ``x``,
    (n, 4)) at NPV = 0; the secant point where that is not inside the cell. Returns a rate."""
    with np.errstate(all="ignore"):
        root = np.zeros(x_a.shape)
        for q in range(4):
            term = x[:, q].copy()
            for p in range(4):
                if p != q:
                    term *= v[:, p] / (v[:, p] - v[:, q])
            root += term
        secant = x_a + (x_b - x_a) * f_a / (f_a - f_b)
        return np.expm1(np.where((root > x_a) & (root < x_b), root, secant))


def _screened_nearest(flows: np.ndarray, rows: np.ndarray, values: np.ndarray,
                      guess: np.ndarray, single: np.ndarray, tables: _GridTables):
    """Grid cell of the root nearest ``guess`` among the sign changes of the NPV on the scan
    grid, for series ``flows[rows]`` with a positive and a negative flow, whose NPVs at the
    coarse nodes are ``values``, and Newton's starting rate in it.

    The cell of :func:`_nearest_in_grid` on the whole grid, from scanning only the fine
    blocks of some coarse cells. For a series whose flows change sign once (``single``: one
    root), those of the coarse cell whose ends differ in sign. For the others, those of the
    coarse cells that :func:`_sign_certain` does not clear: a cleared cell holds no sign
    change of the scanned NPV, so the nearest change among the scanned blocks is the nearest
    on the grid. Newton starts at the inverse cubic through the NPVs at four neighbouring
    grid rates (the secant point where that leaves the cell).

    Returns the rates so far (the grid rate where a several-sign-change series' NPV is 0 on
    the cell's end, else NaN) and, for the series left to refine, their indices, starting
    rates and cells' ends and NPVs (a, b, fa, fb).
    """
    series = rows
    m = series.size
    out = np.full(m, np.nan)
    empty = np.empty(0)
    nothing = (out, empty.astype(np.intp), empty, empty, empty, empty, empty)
    positive = values > 0
    open_ = positive[:, :-1] != positive[:, 1:]
    multi = np.flatnonzero(~single)
    if multi.size:
        with np.errstate(all="ignore"):
            open_[multi] = ~_sign_certain(flows, series[multi], values[multi], tables)
    # Fine blocks to scan: (series, block) pairs in series-major order, blocks ascending.
    rows, cells = np.divmod(np.flatnonzero(open_), open_.shape[1])
    block = _SCREEN_FIRST[cells]
    count = _SCREEN_BLOCKS[cells]
    if count.size and count.max() > 1:
        rows = np.repeat(rows, count)
        block = np.repeat(block, count) + (
            np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count))
    if rows.size == 0:
        return nothing
    # One matrix product per fine block, over the series that scan it.
    order = np.argsort(block.astype(np.uint8), kind="stable")
    bounds = np.searchsorted(block[order], np.arange(tables.blocks.shape[0] + 1))
    fine = np.empty((rows.size, _FINE + 1))
    with np.errstate(all="ignore"):
        for j in np.flatnonzero(np.diff(bounds)):
            pairs = order[bounds[j]:bounds[j + 1]]
            fine[pairs] = flows[series[rows[pairs]]] @ tables.blocks[j]
    # A grid rate shared by two scanned blocks of a series takes one value (two products
    # may round it differently, and a root exactly there would then show no sign change).
    shared = np.flatnonzero((rows[1:] == rows[:-1]) & (block[1:] == block[:-1] + 1))
    fine[shared + 1, 0] = fine[shared, _FINE]
    # The rule of _nearest_in_grid: cell k lies left of the guess when grid[k + 1] < guess,
    # a zero counts as negative, the left change wins a tie. Per pair, then per series. The
    # 16 cells of a pair are bits of an integer: bit i set where the sign changes in cell i.
    bits = (fine > 0).view(np.uint8) @ (1 << np.arange(_FINE + 1, dtype=np.int32))
    change = (bits ^ (bits >> 1)) & ((1 << _FINE) - 1)
    split = np.searchsorted(_SCAN_RATES[1:], guess, side="left")
    left = change & ((1 << np.clip(split[rows] - _FINE * block, 0, _FINE)) - 1)
    right = change & ~left
    # Highest set bit of left (the last change left of the guess), lowest of right.
    last_left = np.frexp(left.astype(np.float64))[1] - 1  # -1 where left == 0
    first_right = np.where(right > 0, np.frexp((right & -right).astype(np.float64))[1] - 1,
                           _FINE)
    none = _SCAN_POINTS
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    row = rows[starts]
    k_left = np.maximum.reduceat(np.where(last_left >= 0, _FINE * block + last_left, -1),
                                 starts)
    k_right = np.minimum.reduceat(np.where(first_right < _FINE, _FINE * block + first_right,
                                           none), starts)
    has_left, has_right = k_left >= 0, k_right < none
    g = guess[row]
    d_left = np.where(has_left, g - _SCAN_RATES[np.where(has_left, k_left + 1, 0)], np.inf)
    d_right = np.where(has_right, np.maximum(_SCAN_RATES[np.where(has_right, k_right, 0)] - g,
                                             0.0), np.inf)
    use_left = d_left <= d_right
    hit = np.isfinite(np.where(use_left, d_left, d_right))
    k, row = np.where(use_left, k_left, k_right)[hit], row[hit]
    if row.size == 0:
        return nothing
    n_blocks = tables.blocks.shape[0]
    pair = np.searchsorted(rows * n_blocks + block, row * n_blocks + k // _FINE)
    i = k % _FINE
    a, b = _SCAN_RATES[k], _SCAN_RATES[k + 1]
    fa, fb = fine[pair, i], fine[pair, i + 1]
    # A zero NPV on the grid is a root, except for a single-sign-change series where it may
    # be an underflow (its compounded NPV near r = -1): Newton starts there instead.
    zero = ~single[row] & ((fa == 0) | (fb == 0))
    out[row[zero]] = np.where(fa == 0, a, b)[zero]
    q0 = np.clip(i - 1, 0, _FINE - 3)[:, None] + np.arange(4)
    start = _inverse_cubic(fine[pair[:, None], q0], _SCAN_RHO[(k - i)[:, None] + q0],
                           _SCAN_RHO[k], _SCAN_RHO[k + 1], fa, fb)
    todo = ~zero
    return out, row[todo], start[todo], a[todo], b[todo], fa[todo], fb[todo]


def several_sign_changes(cash_flows) -> np.ndarray:
    """True where a series changes sign more than once, zeros skipped [bool (n_series,)].

    Its IRR need not then be unique (Descartes' rule of signs): :func:`irr_batch` returns the
    root nearest its guess.

    Parameters
    ----------
    cash_flows : array_like (n_series, n_periods)
    """
    both, single = _sign_structure(np.asarray(cash_flows, dtype=float))
    return both & ~single


def _solve_periodic(flows: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Rates of equally spaced series (irr_batch), chunk by chunk: Newton from inside the
    grid cell that :func:`_screened_nearest` finds; from ``guess`` for a series whose flows
    change sign once but whose root is off the grid or where Newton failed."""
    n, T = flows.shape
    out = np.full(n, np.nan)
    both, single = _sign_structure(flows)
    both &= (guess > -1) & (guess < np.inf)  # as _nearest_in_grid: no distance from +inf
    if not both.any():
        return out
    tables = _grid_tables(T)
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        chunk = flows[start:stop]
        with np.errstate(all="ignore"):
            values = chunk @ tables.coarse
        rows = np.flatnonzero(both[start:stop])
        is_single = single[start:stop][rows]
        out[start + rows], cell, r0, a, b, fa, fb = _screened_nearest(
            chunk, rows, values[rows], guess[start + rows], is_single, tables)
        if cell.size == 0:
            continue
        # Newton for all at once. A single-sign-change series has one root: wherever Newton
        # converges it is the answer. For the others Illinois replaces a Newton root outside
        # the grid cell.
        block = _PeriodicBlock(np.ascontiguousarray(chunk[rows[cell]].T))
        root = _newton(block, r0)
        bad = ~is_single[cell] & ~((root >= np.minimum(a, b)) & (root <= np.maximum(a, b)))
        if bad.any():
            root[bad] = _illinois(block.subset(bad), a[bad], b[bad], fa[bad], fb[bad],
                                  b[bad] <= 0)
        out[start + rows[cell]] = root
    # One sign change but none on the grid (the root lies beyond the scanned rates):
    # Newton from the guess, and the full scan where Newton fails.
    rows = np.flatnonzero(single & both & np.isnan(out))
    if rows.size:
        block = _PeriodicBlock(np.ascontiguousarray(flows[rows].T))
        out[rows] = _newton(block, guess[rows])
        bad = np.isnan(out[rows])
        if bad.any():
            out[rows[bad]] = _bracket_nearest(block.subset(bad), guess[rows[bad]])
    return out


def _solve(make_block, flows_sorted: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Rates for all series: Newton where the root is unique, else the root nearest guess."""
    n = flows_sorted.shape[0]
    out = np.full(n, np.nan)
    both, single = _sign_structure(flows_sorted)
    both &= guess > -1
    single &= both
    rows = np.flatnonzero(single)
    for start in range(0, rows.size, _CHUNK_ROWS):
        chunk = rows[start:start + _CHUNK_ROWS]
        out[chunk] = _newton(make_block(chunk), guess[chunk])
    # Several sign changes (the root is not unique) or Newton failed: scan and bracket.
    rows = np.flatnonzero(both & (~single | np.isnan(out)))
    for start in range(0, rows.size, _BRACKET_CHUNK_ROWS):
        chunk = rows[start:start + _BRACKET_CHUNK_ROWS]
        out[chunk] = _bracket_nearest(make_block(chunk), guess[chunk])
    return out


def _rows_2d(func: str, cash_flows) -> tuple[np.ndarray, tuple[int, ...]]:
    flows = np.asarray(cash_flows, dtype=np.float64)
    if flows.ndim == 0 or flows.shape[-1] < 1:
        raise ExcelFunctionError(
            f"{func}: cash_flows must have shape (n_series, n_periods), got shape {flows.shape}")
    lead = flows.shape[:-1]
    return np.ascontiguousarray(flows.reshape(-1, flows.shape[-1])), lead


def irr_batch(cash_flows, guess=0.01):
    """Per-period IRR of many equally spaced cash-flow series at once.

    Parameters
    ----------
    cash_flows : array_like
        Shape ``(n_series, n_periods)`` (any leading shape works): each row a series of flows
        at periods 0, 1, ..., n_periods - 1, the first at time 0 [USD].
    guess : array_like, optional
        Starting rate, scalar or one per series (default 0.01) [1/period].

    Returns
    -------
    numpy.ndarray
        Shape ``(n_series,)``: rate per period at which each row's NPV is zero
        [1/period]; NaN where a row has no positive or no negative flow, or no root above -1
        is found. Never raises for a row's data.

    Notes
    -----
    The scan grid: 641 rates from -99.9999% to +100,000% per period, spaced about 0.0004 near
    0, 0.005 near 0.2, 0.05 near 1.5 and about 2% of ``1 + r`` further out. Rows are solved
    8192 at a time; the NPV of each row is first evaluated at 28 of the grid rates (the
    coarse nodes, every 16th grid rate from -20% to +55%, sparser outside) in one matrix
    product.

    The matrix products run with one BLAS thread (``econ.blas.one_blas_thread``), so the
    result is the same, bit for bit, whatever the caller's BLAS thread count.

    Rows whose flows change sign once have exactly one root above -1 (Descartes' rule of
    signs); they are solved by Newton's method on the NPV as a function of ``log(1 + r)``
    (so no step can leave r > -1), vectorized across rows: NPV and its derivative come from
    a Horner loop over the period axis on a time-major block of rows, only the rows not yet
    converged are iterated (the working set is compacted), and a row stops when its Newton
    step is below 1e-12 (relative above |r| = 1). Newton starts inside the grid cell where
    the NPV changes sign (found by evaluating only the grid rates of the coarse cell where
    it does), at the inverse cubic interpolation of the NPVs at four neighbouring grid rates;
    two iterations usually suffice. Where the grid shows no sign change (a root beyond it) or
    Newton fails from there, Newton starts from ``guess``, and where that fails too the row
    is solved as below. The root being unique, the start does not change the result.

    Rows whose flows change sign more than once get **the root nearest the guess** among the
    sign changes of the NPV between neighbouring grid rates (e.g. ``[-100, 230, -132]`` has
    roots 0.1 and 0.2: guess 0.12 gives 0.1, guess 0.18 gives 0.2), refined inside that
    grid cell by Newton from the same kind of start (Illinois where Newton fails or leaves
    the cell) to 1e-12. Distances are measured from the guess to the nearer end of a cell,
    a tie goes to the lower rate, and a rate at which the NPV is exactly zero on the grid
    (such as 0 for ``[-100, 100]``) counts as a root.
    The scan sees a root only through a sign change: a pair of roots inside one grid cell
    and a double root are invisible to it, so the nearest *visible* root is returned, or NaN
    when there is none (roots beyond the grid included).

    The grid is not evaluated in full for these rows. On each coarse cell [a, b] (in
    rho = log(1 + r)) every discount factor is monotone, so the slope dNPV/drho splits into a
    rising and a falling sum whose values at a and b bound it to [lo, hi]; then
    NPV(rho) <= min(NPV(a) + hi (rho - a), NPV(b) - lo (b - rho)) (a mean-value enclosure),
    which proves NPV < 0 on the whole cell if NPV(a) < 0, NPV(b) < 0 and
    -NPV(a) / hi + -NPV(b) / (-lo) > b - a, and likewise NPV > 0. The NPVs are first moved
    towards 0 by a rounding allowance (1e-11 of sum |c_t| (1+r)**-t, which bounds the
    rounding of a length-T dot product, with 1e-300 of sum |c_t| for underflow), so a cell
    proven that way has the same sign at every grid rate in it as computed: it holds no
    visible sign change. Only the grid rates of the other cells (for flows like the
    projection engine's, 1.2 to 1.5 of 27 per row) are evaluated, 17 at a time per series
    (one matrix product per block of 16 grid cells), so the result is the one a scan of the
    whole grid would give (up to rounding of NPVs indistinguishable from 0, where the sign
    of a grid NPV is noise either way).

    References
    ----------
    Microsoft Support, "IRR function"; Press et al., *Numerical Recipes*, 3rd ed., chapter 5
    (polynomial evaluation), sections 3.3 (inverse interpolation), 9.2 (false position) and
    9.4 (Newton-Raphson); Dowell & Jarratt, "A modified regula falsi method for computing
    the root of an equation", BIT 11 (1971) 168-174 (Illinois method); Moore, Kearfott &
    Cloud, *Introduction to Interval Analysis*, SIAM (2009), section 6.1 (mean value form);
    Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM (2002), section
    3.1 (rounding error of inner products).
    """
    flows, lead = _rows_2d("irr_batch", cash_flows)
    n = flows.shape[0]
    guess_ = np.broadcast_to(np.broadcast_to(_f(guess), lead).reshape(-1), (n,))
    with one_blas_thread():  # the same bits whatever the machine's BLAS thread count
        return _out(_solve_periodic(flows, guess_).reshape(lead))


def _xirr_years(flows: np.ndarray, years: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """XIRR of each row of ``flows`` (n, T) at times ``years`` ((T,) or (n, T)) [years]."""
    order = np.argsort(years, axis=-1, kind="stable")
    if years.ndim == 1:
        flows_sorted = flows[:, order]
    else:
        flows_sorted = np.take_along_axis(flows, order, axis=-1)

    def make_block(rows: np.ndarray) -> _DatedBlock:
        return _DatedBlock(flows[rows], years if years.ndim == 1 else years[rows])

    with one_blas_thread():  # as irr_batch
        return _solve(make_block, flows_sorted, guess)


def xirr_batch(cash_flows, dates, guess=0.1):
    """Annual XIRR of many dated cash-flow series at once.

    Parameters
    ----------
    cash_flows : array_like
        Shape ``(n_series, n_periods)`` [USD].
    dates : array_like
        Shape ``(n_periods,)`` shared by all rows, or ``(n_series, n_periods)``; numpy
        datetime64, ``datetime.date`` objects, ISO strings or spreadsheet day serials.
    guess : array_like, optional
        Starting rate, scalar or one per series (default 0.1) [1/year].

    Returns
    -------
    numpy.ndarray
        Shape ``(n_series,)``: annual rate at which each row's XNPV (actual days / 365) is
        zero [1/year]. NaN for a row without a positive and a negative flow, with a date
        before its first date, or without a root above -1. Never raises for a row's data.

    Raises
    ------
    ExcelFunctionError
        Only for arguments that do not fit together (the number of dates differs from the
        number of periods).

    Notes
    -----
    Same algorithm as :func:`irr_batch` (Newton where the time-ordered flows change sign
    once, else the root nearest the guess), with ``(1+r)**-t`` evaluated as
    ``exp(-t * log1p(r))`` since the exponents are fractional.

    References
    ----------
    Microsoft Support, "XIRR function"; see :func:`irr_batch`.
    """
    flows, lead = _rows_2d("xirr_batch", cash_flows)
    n = flows.shape[0]
    days = _to_days(dates)
    if days.ndim == 0 or days.shape[-1] != flows.shape[1]:
        raise ExcelFunctionError(
            f"xirr_batch: dates must have one date per period ({flows.shape[1]}), got shape "
            f"{days.shape}")
    if days.ndim > 1:
        days = np.broadcast_to(days, lead + days.shape[-1:]).reshape(n, -1)
    years = (days - days[..., :1]) / DAYS_PER_YEAR_XIRR
    guess_ = np.broadcast_to(np.broadcast_to(_f(guess), lead).reshape(-1), (n,))
    out = np.full(n, np.nan)
    good = ~(years < 0).any(axis=-1) & np.ones(n, dtype=bool)
    if good.any():
        rows = np.flatnonzero(good)
        out[rows] = _xirr_years(flows[rows], years if years.ndim == 1 else years[rows],
                                guess_[rows])
    return _out(out.reshape(lead))


def npv_batch(rate, cash_flows):
    """NPV with the first column at time 0 (NOT the spreadsheet convention of :func:`npv`).

    ``sum(cash_flows[..., t] / (1 + rate)**t)`` for ``t = 0 .. n_periods - 1``. Equals
    ``cash_flows[..., 0] + npv(rate, cash_flows[..., 1:])``.

    Parameters
    ----------
    rate : array_like
        Discount rate per period, scalar or one per series [1/period].
    cash_flows : array_like
        Shape ``(n_series, n_periods)`` (any leading shape works) [USD].

    Returns
    -------
    numpy.ndarray
        Shape ``(n_series,)``: net present value at time 0 [USD]; NaN where ``rate <= -1``.

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, ch. 2 (net present value).
    """
    flows, lead = _rows_2d("npv_batch", cash_flows)
    rate_ = _f(rate)
    T = flows.shape[1]
    with np.errstate(all="ignore"):
        if rate_.ndim == 0:
            powers = np.power(1.0 / (1.0 + rate_), np.arange(T, dtype=np.float64))
            with one_blas_thread():  # as irr_batch
                out = flows @ powers
        else:
            r = np.broadcast_to(np.broadcast_to(rate_, lead).reshape(-1), flows.shape[:1])
            x = 1.0 / (1.0 + r)
            cols = np.ascontiguousarray(flows.T)
            out = cols[-1].copy()
            for t in range(T - 2, -1, -1):
                out *= x
                out += cols[t]
        out = np.where(np.broadcast_to(rate_, lead).reshape(-1) > -1, out, np.nan)
    return _out(out.reshape(lead))


def annual_from_monthly(rate_monthly):
    """Annual rate equivalent to a monthly rate: ``(1 + m)**12 - 1``.

    Parameters
    ----------
    rate_monthly : array_like
        Monthly rate [1/month], > -1 (NaN below).

    Returns
    -------
    numpy.ndarray or numpy.float64
        Effective annual rate [1/year].
    """
    with np.errstate(invalid="ignore"):
        return _out(np.expm1(12.0 * np.log1p(_f(rate_monthly))))


def monthly_from_annual(rate_annual):
    """Monthly rate equivalent to an annual rate: ``(1 + r)**(1/12) - 1``.

    Parameters
    ----------
    rate_annual : array_like
        Effective annual rate [1/year], > -1 (NaN below).

    Returns
    -------
    numpy.ndarray or numpy.float64
        Monthly rate [1/month].
    """
    with np.errstate(invalid="ignore"):
        return _out(np.expm1(np.log1p(_f(rate_annual)) / 12.0))


# ---------------------------------------------------------------------------------------------
# every root in a range of rates (the summary's IRR policy)
# ---------------------------------------------------------------------------------------------


def _crossing_cells(flows: np.ndarray, lower: float, upper: float):
    """Every cell of the scan grid, cut to [lower, upper], where a series' NPV changes sign.

    ``flows`` (m, T). Returns (row, a, b, fa, fb), one entry per sign change, rows ascending
    and rates ascending within a row; fa and fb carry the sign of the NPV at a and b (the
    compounded form below r = 0, as :meth:`_PeriodicBlock.value`). A zero counts as negative,
    so a root exactly on a grid rate is one change.
    """
    m, T = flows.shape
    tables = _grid_tables(T)
    inside = np.flatnonzero((_SCAN_RATES > lower) & (_SCAN_RATES < upper))
    grid = np.concatenate([[lower], _SCAN_RATES[inside], [upper]])
    t = np.arange(T, dtype=np.float64)[:, None]
    edges = np.array([lower, upper])[None, :]
    with np.errstate(over="ignore"):
        edge_powers = np.where(edges < 0, (1.0 + edges) ** (T - 1 - t), (1.0 + edges) ** (-t))
    powers = np.hstack([edge_powers[:, :1], tables.powers[:, inside], edge_powers[:, 1:]])
    parts = []
    for start in range(0, m, _BRACKET_CHUNK_ROWS):
        with np.errstate(all="ignore"):
            values = flows[start:start + _BRACKET_CHUNK_ROWS] @ powers
        positive = values > 0
        # (the flat indices split: np.nonzero of a 2-d mask took ten times as long)
        changed = positive[:, :-1] != positive[:, 1:]
        row, k = np.divmod(np.flatnonzero(changed), changed.shape[1])
        parts.append((row + start, grid[k], grid[k + 1], values[row, k], values[row, k + 1]))
    if not parts:
        empty = np.empty(0)
        return empty.astype(np.intp), empty, empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def _rate_range(func: str, lower, upper) -> tuple[float, float]:
    lower, upper = float(lower), float(upper)
    if not -1.0 < lower < 0.0 < upper < np.inf:
        raise ExcelFunctionError(
            f"{func}: the range of rates must satisfy -1 < lower < 0 < upper, got lower = "
            f"{lower:g}, upper = {upper:g} [1/period]")
    return lower, upper


def _root_in_cell(flows: np.ndarray, row, a, b, fa, fb) -> np.ndarray:
    """The root of series ``flows[row]`` inside each cell [a, b] of :func:`_crossing_cells`."""
    out = np.where(fa == 0, a, np.where(fb == 0, b, np.nan))
    open_ = np.flatnonzero((fa != 0) & (fb != 0))
    if open_.size:
        block = _PeriodicBlock(np.ascontiguousarray(flows[row[open_]].T))
        out[open_] = _refine(block, a[open_], b[open_], fa[open_], fb[open_])
    return out


def irr_roots_batch(cash_flows, lower, upper) -> list[np.ndarray]:
    """Every rate in (lower, upper) at which a series' NPV changes sign, and its direction.

    Parameters
    ----------
    cash_flows : array_like (n_series, n_periods)
        Flows at periods 0, 1, ..., the first at time 0 [USD].
    lower, upper : float
        The range of rates searched, -1 < lower < 0 < upper [1/period].

    Returns
    -------
    list of numpy.ndarray (k, 2)
        Per series its k roots ascending [1/period] and, in the second column, -1 where the
        NPV falls through zero as the rate rises (an investment-type root: NPV > 0 just
        below, < 0 just above) and +1 where it rises.

    Notes
    -----
    Roots are the sign changes of the NPV on the grid of :func:`irr_batch` between ``lower``
    and ``upper`` (both ends added), each refined inside its grid cell to 1e-12. A double root,
    or two roots within one grid cell (about 0.0004 per period apart near r = 0), show no
    sign change and are not seen.
    """
    flows, _ = _rows_2d("irr_roots_batch", cash_flows)
    lower, upper = _rate_range("irr_roots_batch", lower, upper)
    with one_blas_thread():
        cells = _crossing_cells(flows, lower, upper)
    return roots_in_cells(flows, cells)


def roots_in_cells(flows: np.ndarray, cells) -> list[np.ndarray]:
    """:func:`irr_roots_batch`'s answer from the cells of its scan, found already: `cells`
    (row, a, b, fa, fb) as :func:`_crossing_cells` (or :func:`investment_irr_batch`'s
    ``cells``), `flows` (m, T) the series their rows index."""
    row, a, b, fa, fb = cells
    with one_blas_thread():
        roots = _root_in_cell(flows, row, a, b, fa, fb)
    direction = np.where(fa > 0, -1.0, 1.0)
    bounds = np.searchsorted(row, np.arange(flows.shape[0] + 1))
    pairs = np.column_stack([roots, direction])
    return [pairs[bounds[i]:bounds[i + 1]] for i in range(flows.shape[0])]


def investment_irr_batch(cash_flows, lower, upper) -> dict[str, np.ndarray]:
    """The IRR where it is unique in the sense of an investment, of many series at once.

    A series' rate is reported only where exactly one rate in (lower, upper) makes its NPV
    fall through zero as the rate rises (above it NPV < 0, just below it NPV > 0); elsewhere
    NaN. A series whose flows change sign once (negative first) has one root (Descartes' rule
    of signs), solved by :func:`irr_batch`; the others are scanned for every sign change as
    :func:`irr_roots_batch`, and only the cell of a sole falling change is refined.

    Parameters
    ----------
    cash_flows, lower, upper
        As :func:`irr_roots_batch`.

    Returns
    -------
    dict of arrays (n_series,)
        ``rate`` [1/period] (NaN unless unique), ``falling`` (roots where NPV falls through
        zero), ``roots`` (all roots found in the range), ``several_sign_changes`` (bool); and
        ``cells``, the scan's cells (row, a, b, fa, fb) of the series that change sign more
        than once (`row` counts the series in order), from which :func:`roots_in_cells` gives
        their roots as :func:`irr_roots_batch` does.

    References
    ----------
    Lorie, J. H. & Savage, L. J., "Three problems in rationing capital", Journal of Business
    28(4) (1955) 229-239; Hazen, G. B., "A new perspective on multiple internal rates of
    return", The Engineering Economist 48(1) (2003) 31-51.
    """
    flows, lead = _rows_2d("investment_irr_batch", cash_flows)
    lower, upper = _rate_range("investment_irr_batch", lower, upper)
    n = flows.shape[0]
    rate = np.full(n, np.nan)
    falling = np.zeros(n, dtype=np.int64)
    roots = np.zeros(n, dtype=np.int64)
    both, single = _sign_structure(flows)
    several = both & ~single
    rows = np.flatnonzero(single)
    if rows.size:
        once = flows[rows]
        root = irr_batch(once, 0.01)
        first = once[np.arange(rows.size), (once != 0).argmax(axis=1)]
        found = (root > lower) & (root < upper)
        roots[rows] = found
        falling[rows] = found & (first < 0)
        rate[rows] = np.where(found & (first < 0), root, np.nan)
    rows = np.flatnonzero(several)
    empty = np.empty(0)
    cells = (empty.astype(np.intp), empty, empty, empty, empty)
    if rows.size:
        scanned = flows[rows]
        with one_blas_thread():
            row, a, b, fa, fb = _crossing_cells(scanned, lower, upper)
            down = fa > 0
            roots[rows] = np.bincount(row, minlength=rows.size)
            falling[rows] = np.bincount(row[down], minlength=rows.size)
            sole = (falling[rows] == 1)[row] & down
            rate[rows[row[sole]]] = _root_in_cell(
                scanned, row[sole], a[sole], b[sole], fa[sole], fb[sole])
        cells = (rows[row], a, b, fa, fb)
    return {
        "rate": _out(rate.reshape(lead)),
        "falling": falling.reshape(lead),
        "roots": roots.reshape(lead),
        "several_sign_changes": several.reshape(lead),
        "cells": cells,
    }
