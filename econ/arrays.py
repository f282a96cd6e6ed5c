"""Running sums and maxima along the month axis of (scenarios, months) arrays, a test of
whether a batch's rows share their inputs, and the check of an array argument's values
(`refuse_outside`).

numpy's ``cumsum(x, axis=1)`` on a C-ordered (8192, 73) array walks one short row at a time and
costs about as much as twenty elementwise operations on the whole array. The same sums taken a
month at a time (one vectorized add over all scenarios per month) cost about six, and are the
same numbers bit for bit: each element is still the running sum in month order. Below
``_MANY_ROWS`` rows the per-month Python loop costs more than it saves, and numpy's own
routine is used.
"""

from __future__ import annotations

import numpy as np

from econ.bounds import number_text
from econ.errors import InputError
from econ.units import HALF_CENT_USD

_MANY_ROWS = 256


def _running(x, ufunc, reverse: bool) -> np.ndarray:
    out = np.array(x, dtype=float)  # a C-ordered copy, accumulated in place month by month
    T = out.shape[-1]
    if out.ndim != 2 or out.shape[0] < _MANY_ROWS:
        if reverse:
            return ufunc.accumulate(out[..., ::-1], axis=-1)[..., ::-1].copy()
        return ufunc.accumulate(out, axis=-1)
    steps = range(T - 2, -1, -1) if reverse else range(1, T)
    prior = 1 if reverse else -1
    for t in steps:
        ufunc(out[:, t], out[:, t + prior], out=out[:, t])
    return out


def cumsum_months(x) -> np.ndarray:
    """Running total over months: ``np.cumsum(x, axis=-1)`` as floats, bit for bit.

    Parameters
    ----------
    x : array_like (n, T)  or any shape; months on the last axis

    Returns
    -------
    numpy.ndarray  same shape, float64, C-ordered
    """
    return _running(x, np.add, reverse=False)


def remaining_sum_months(x) -> np.ndarray:
    """Sum of each month and all later ones: ``cumsum(x[..., ::-1])[..., ::-1]`` bit for bit."""
    return _running(x, np.add, reverse=True)


def running_max_months(x) -> np.ndarray:
    """Largest value so far over months: ``np.maximum.accumulate(x, axis=-1)`` as floats."""
    return _running(x, np.maximum, reverse=False)


def running_min_months(x) -> np.ndarray:
    """Smallest value so far over months: ``np.minimum.accumulate(x, axis=-1)`` as floats."""
    return _running(x, np.minimum, reverse=False)


def snap_to_zero(x, tolerance: float = HALF_CENT_USD) -> np.ndarray:
    """Amounts within `tolerance` of 0 set to exactly 0 [same unit as x].

    Sums that are 0 in exact arithmetic (cost less its accumulated depreciation, a loan's balance
    after its last payment) come out of floating point as +-1e-9 USD; left alone they show up as
    a disposal of 0.000000003 USD or interest of -3e-8 USD every month. Half a cent
    (econ.units.HALF_CENT_USD) is far above such residues and far below any real amount.
    """
    a = np.asarray(x, dtype=float)
    return np.where(np.abs(a) < tolerance, 0.0, a)


def add_at_months(target, months, values) -> None:
    """Add ``values`` (n, K) into ``target`` (n, T) in place, each at its row's month ``months``
    (n, K) or (1, K) [month index]: ``np.add.at(target, (rows, months), values)`` bit for bit,
    the columns added in order (a month that several take adds them left to right), at a
    fraction of np.add.at's cost (K fancy-indexed additions over the rows)."""
    values = np.asarray(values)
    months = np.broadcast_to(months, values.shape)
    rows = np.arange(values.shape[0])
    for k in range(values.shape[1]):
        target[rows, months[:, k]] += values[:, k]


def trailing_sum_months(x, w: int) -> np.ndarray:
    """Sum over the last ``w`` months, each month included (fewer at the start).

    Built from windows of 1, 2, 4, ... months, each the sum of two of the one before
    (S_2k[t] = S_k[t] + S_k[t-k]), and w's binary digits joined end to end: log2(w) + popcount(w)
    passes over the array instead of w - 1. Only additions, never a difference of running
    totals, which cancels to 0 where a small month follows large ones.
    """
    x = np.ascontiguousarray(x, dtype=float)
    months = x.shape[-1] if x.ndim else 1
    w = max(min(int(w), months), 1)
    if w == 1 or x.size == 0:
        return x.copy()
    # Each shift of k months is one of k places in the flat C-ordered array: one contiguous
    # pass over all rows (three times as fast as a pass over (rows, months - k) slices), whose
    # first k months of each row, read from the row before, are then put back.
    rows = x.reshape(-1, months)
    out, span, window, length = None, 0, rows, 1  # `out` sums the `span` months before any t
    while True:
        if w & length:
            if out is None:
                out = window.copy()
            else:
                head = out[:, :span].copy()
                out.reshape(-1)[span:] += window.reshape(-1)[:-span]
                out[:, :span] = head
            span += length
        if 2 * length > w:
            return out.reshape(x.shape)
        doubled = np.empty_like(window)
        flat = window.reshape(-1)
        np.add(flat[length:], flat[:-length], out=doubled.reshape(-1)[length:])
        doubled[:, :length] = window[:, :length]
        window, length = doubled, 2 * length


def trailing_sum_rows(x, windows) -> np.ndarray:
    """`trailing_sum_months` of each row (first axis) over its own window ``windows`` (n,) or
    one for all [months]: one computation per distinct window (a sweep over a covenant's test
    window has a few)."""
    x = np.asarray(x, dtype=float)
    windows = np.maximum(np.broadcast_to(np.asarray(windows, dtype=np.int64), x.shape[:1]), 1)
    if x.shape[0] == 0 or (windows == windows[0]).all():
        return trailing_sum_months(x, windows[0] if x.shape[0] else 1)
    out = x.copy()
    for w in np.unique(windows[windows > 1]):
        rows = windows == w
        out[rows] = trailing_sum_months(x[rows], w)
    return out


def rows_alike(*arrays) -> bool:
    """Whether every row (first axis) of each array equals its first row, NaN equal to NaN.

    A batch from a sweep or Monte Carlo run varies a few inputs; a stage whose inputs all pass
    this test can compute one row and repeat it.
    """
    for a in arrays:
        a = np.asarray(a)
        if a.ndim == 0 or a.shape[0] <= 1:
            continue
        if not np.array_equal(a, np.broadcast_to(a[:1], a.shape), equal_nan=a.dtype.kind == "f"):
            return False
    return True


def refuse_outside(name: str, value, within, expected: str) -> None:
    """Raise InputError naming `name`, its first value that `within` (a test over a float array,
    which NaN fails) rejects, and what was `expected`: a domain function called from Python
    refuses what the scenario models and the command line refuse, rather than compute with it."""
    values = np.asarray(value, dtype=float)
    bad = ~within(values)
    if np.any(bad):
        raise InputError(f"{name} = {number_text(values[bad].flat[0])}: expected {expected}")
