"""Software-gain trajectories: how tokens/s per GPU on installed hardware changes over time.

This module owns the throughput multiplier `g[i, m]`: tokens/s per GPU in month `m` relative to the
scenario's `tokens_per_s_per_gpu`, for scenario `i`. It is built from

- a base trajectory, one of `TRAJECTORIES`: a compound annual rate whose rate may decay over time
  (a Gompertz curve), a logistic approach to a ceiling such as the simulator's speed of light, or a
  table of multipliers (e.g. a trajectory fitted to benchmark history), interpolated monotonically;
- dated steps (releases), each reaching its full effect linearly over a rollout ramp;
- a cap at a ceiling.

Time runs from month 1, the first service month: `t = max(m - 1, 0) / 12` years, so every
trajectory is 1 in months 0 and 1 (tables excepted: they give absolute multipliers). All functions
are pure and vectorized over a leading scenario axis (n,) and a month axis (T,); padded step and
table slots let scenarios with different numbers of steps share one array.
"""

from __future__ import annotations

import numpy as np

from econ.arrays import rows_alike
from econ.errors import InputError
from econ.market import monotone_interpolate
from econ.units import MONTHS_PER_YEAR, annual_growth_factor

TRAJECTORIES = ("compound", "logistic", "table")
"""Base trajectory choices, in the order of their integer codes in a ScenarioBatch column."""

STEP_PADDING_MONTH = 10**6
"""Month held by unused step slots: beyond any horizon, so the slot never takes effect."""


class TrajectoryError(InputError):
    """Invalid trajectory input (a gain at or below -100%, a ceiling below today's throughput, ...)."""


def _col(values):
    return np.asarray(values, dtype=float).reshape(-1)[:, None]


def years_in_service(months):
    """Years since the start of month 1, 0 in months 0 and 1 [years (T,)].

    Parameters
    ----------
    months : int array (T,)  month indices (0 = purchase month)
    """
    return np.maximum(np.asarray(months) - 1, 0) / MONTHS_PER_YEAR


def _check_rate(gain_rate_annual, name="gain_rate_annual"):
    rate = np.asarray(gain_rate_annual, dtype=float)
    bad = ~(rate > -1.0)
    if np.any(bad):
        first = int(np.flatnonzero(bad.reshape(-1))[0])
        raise TrajectoryError(
            f"{name}[{first}] = {rate.reshape(-1)[first]!r}: expected a rate above -1 "
            "(-100% a year would take throughput to zero)"
        )
    return rate


def gain_multiplier(gain_rate_annual, step_months, step_gains, months):
    """Throughput relative to month 1 under a compound rate and dated steps [fraction (n, T)].

    g_m = (1 + r)^((m - 1) / 12) * prod over steps k with month_k <= m of (1 + gain_k).

    The engine's original trajectory, kept with this signature; `throughput_multiplier` adds rate
    decay, logistic ceilings, tables, rollout ramps and caps.

    Parameters
    ----------
    gain_rate_annual : array (n,)  compound annual gain [fraction/year]
    step_months : int array (n, k)  month each step takes effect; padding rows hold a month beyond the
        horizon (or any month with gain 0)
    step_gains : array (n, k)  relative change at each step [fraction]
    months : array (T,)  month indices
    """
    m = np.asarray(months)
    compound = annual_growth_factor(
        np.asarray(gain_rate_annual, dtype=float)[:, None], np.maximum(m - 1, 0)[None, :]
    )
    log_steps = np.zeros(compound.shape)
    step_months = np.asarray(step_months)
    log_gain = np.log1p(np.asarray(step_gains, dtype=float))
    for k in range(step_months.shape[1]):  # loop over step slots, not scenarios
        log_steps += np.where(m[None, :] >= step_months[:, k : k + 1], log_gain[:, k : k + 1], 0.0)
    return compound * np.exp(log_steps)


def compound_multiplier(gain_rate_annual, months, rate_decay_annual=0.0):
    """Compound gain whose annual rate may decay geometrically over time [fraction (n, T)].

    With rho = ln(1 + r) the initial continuous rate and lambda = -ln(1 - delta) the decay of that
    rate (the rate falls by a share delta each year), the log multiplier after t years is

        ln g(t) = rho * (1 - exp(-lambda * t)) / lambda        (rho * t when delta = 0)

    the Gompertz growth curve (B. Gompertz, Phil. Trans. R. Soc. 115, 1825, 513-583; C. P. Winsor,
    PNAS 18(1), 1932, 1-8). Gains slow down and level off at g_inf = (1 + r)^(1 / lambda) instead
    of compounding for ever. With delta = 0 it is exactly (1 + r)^t.

    Parameters
    ----------
    gain_rate_annual : array (n,)  initial compound annual gain r [fraction/year], > -1
    months : int array (T,)  month indices
    rate_decay_annual : array (n,)  share delta of the rate lost each year, 0 <= delta < 1
        [fraction/year]
    """
    rate = _check_rate(gain_rate_annual)
    decay = np.broadcast_to(np.asarray(rate_decay_annual, dtype=float), rate.shape)
    bad = ~((decay >= 0.0) & (decay < 1.0))
    if np.any(bad):
        first = int(np.flatnonzero(bad.reshape(-1))[0])
        raise TrajectoryError(
            f"rate_decay_annual[{first}] = {decay.reshape(-1)[first]!r}: expected a share of the "
            "rate lost per year in [0, 1)"
        )
    t = years_in_service(months)[None, :]
    lam = -np.log1p(-_col(decay))
    # Below 1e-9 a year the two-term series is exact to double precision (error ~ (lam t)^2 / 6)
    # and avoids dividing denormal numbers.
    tiny = lam < 1e-9
    safe = np.where(tiny, 1.0, lam)
    effective_years = np.where(tiny, t * (1.0 - 0.5 * lam * t), -np.expm1(-safe * t) / safe)
    # Without decay this is (1 + r)^t computed as the engine always has, bit for bit.
    return np.power(1.0 + _col(rate), effective_years)


def logistic_multiplier(gain_rate_annual, ceiling_ratio, months):
    """Logistic approach to a ceiling, starting at the compound rate r [fraction (n, T)].

    With C the ceiling over today's throughput (C >= 1) and k chosen so that the initial growth of
    ln g is ln(1 + r) per year, k = ln(1 + r) / (1 - 1/C):

        g(t) = C / (1 + (C - 1) * exp(-k * t))

    Verhulst's logistic (P.-F. Verhulst, Corresp. Math. Phys. 10, 1838, 113-121) with g(0) = 1. It
    grows like (1 + r)^t while far below the ceiling and levels off at C, the speed of light of the
    hardware. C = inf gives (1 + r)^t; C = 1 gives 1 (no headroom).

    Parameters
    ----------
    gain_rate_annual : array (n,)  initial compound annual gain r [fraction/year], >= 0
    ceiling_ratio : array (n,)  ceiling / today's tokens/s per GPU, >= 1 (inf: no ceiling) [ratio]
    months : int array (T,)  month indices
    """
    rate = _check_rate(gain_rate_annual)
    if np.any(rate < 0):
        first = int(np.flatnonzero(rate.reshape(-1) < 0)[0])
        raise TrajectoryError(
            f"gain_rate_annual[{first}] = {rate.reshape(-1)[first]!r}: a logistic approach to a "
            "ceiling needs a rate >= 0"
        )
    ceiling = _check_ceiling(ceiling_ratio, rate.shape)
    t = years_in_service(months)[None, :]
    c = _col(ceiling)
    rho = np.log1p(_col(rate))
    finite = np.isfinite(c) & (c > 1.0)
    c_safe = np.where(finite, c, 2.0)
    k = rho / (1.0 - 1.0 / c_safe)
    logistic = c_safe / (1.0 + (c_safe - 1.0) * np.exp(-k * t))
    with np.errstate(over="ignore"):  # rows with a finite ceiling never use this branch
        unbounded = np.exp(rho * t)
    return np.where(finite, logistic, np.where(np.isinf(c), unbounded, 1.0))


def _check_ceiling(ceiling_ratio, shape):
    ceiling = np.broadcast_to(np.asarray(ceiling_ratio, dtype=float), shape)
    bad = ~(ceiling >= 1.0)  # NaN fails too
    if np.any(bad):
        first = int(np.flatnonzero(bad.reshape(-1))[0])
        raise TrajectoryError(
            f"ceiling_ratio[{first}] = {ceiling.reshape(-1)[first]!r}: expected a ceiling at or "
            "above today's throughput (ratio >= 1; inf for no ceiling)"
        )
    return ceiling


def step_multiplier(step_months, step_gains, months, step_ramp_months=None):
    """Dated steps, each rolled out linearly over its ramp [fraction (n, T)].

    A step k of relative gain G_k released in month M_k reaches a share
    s_k(m) = clip((m - M_k + 1) / R_k, 0, 1) of the fleet (R_k = max(ramp_k, 1) months), and the
    fleet-average throughput is the share-weighted mean of old and new, 1 + s_k * G_k:

        g_m = prod_k (1 + G_k * s_k(m))

    With no ramp (0 or 1 month) the step takes full effect in month M_k, as in `gain_multiplier`.

    Parameters
    ----------
    step_months : int array (n, k)  month each step is released; unused slots hold
        STEP_PADDING_MONTH (or gain 0)
    step_gains : array (n, k)  relative change at full rollout, > -1 [fraction]
    months : int array (T,)  month indices
    step_ramp_months : int array (n, k), optional  months to full rollout; None = no ramp [months]
    """
    step_months = np.asarray(step_months)
    gains = np.asarray(step_gains, dtype=float)
    if step_months.ndim != 2 or gains.shape != step_months.shape:
        raise TrajectoryError(
            f"step_months {step_months.shape} and step_gains {gains.shape}: expected two arrays "
            "of the same shape (scenarios, step slots)"
        )
    bad = ~(gains > -1.0)
    if np.any(bad):
        row, slot = (int(i[0]) for i in np.nonzero(bad))
        raise TrajectoryError(
            f"step_gains[{row}, {slot}] = {gains[row, slot]!r}: expected a gain above -1 "
            "(-100% would stop the GPU)"
        )
    ramps = (
        np.zeros(gains.shape)
        if step_ramp_months is None
        else np.broadcast_to(np.asarray(step_ramp_months, dtype=float), gains.shape)
    )
    if np.any(~(ramps >= 0)):
        row, slot = (int(i[0]) for i in np.nonzero(~(ramps >= 0)))
        raise TrajectoryError(
            f"step_ramp_months[{row}, {slot}] = {ramps[row, slot]!r}: expected 0 or more months"
        )
    m = np.asarray(months, dtype=float)[None, :]
    log_total = np.zeros((gains.shape[0], m.shape[1]))
    for k in range(gains.shape[1]):  # loop over step slots, not scenarios
        ramp = np.maximum(ramps[:, k : k + 1], 1.0)
        share = np.clip((m - step_months[:, k : k + 1] + 1.0) / ramp, 0.0, 1.0)
        log_total += np.log1p(gains[:, k : k + 1] * share)
    return np.exp(log_total)


def table_multiplier(table_months, table_multipliers, months):
    """Multipliers given as a table, interpolated monotonically in log space [fraction (n, T)].

    Between table months, ln g follows the shape-preserving piecewise cubic Hermite interpolant of
    Fritsch and Carlson (SIAM J. Numer. Anal. 17(2), 1980, 238-246, doi:10.1137/0717021), so a
    rising table gives a rising trajectory with no overshoot; a table with a constant growth rate
    gives that exponential. Before the first and after the last table month the nearest value is
    held. Use it for trajectories fitted to benchmark history.

    Parameters
    ----------
    table_months : array (n, k)  months of the points, strictly increasing; unused slots NaN
    table_multipliers : array (n, k)  throughput relative to tokens_per_s_per_gpu at each point,
        > 0 [ratio]; unused slots NaN
    months : int array (T,)  month indices
    """
    values = np.asarray(table_multipliers, dtype=float)
    used = ~np.isnan(np.asarray(table_months, dtype=float))
    bad = used & ~(values > 0)
    if np.any(bad):
        row, slot = (int(i[0]) for i in np.nonzero(bad))
        raise TrajectoryError(
            f"table_multipliers[{row}, {slot}] = {values[row, slot]!r}: expected a throughput "
            "multiplier above 0"
        )
    logs = np.where(used, np.log(np.where(used, values, 1.0)), np.nan)
    return np.exp(monotone_interpolate(table_months, logs, months))


def cap_at_ceiling(multiplier, ceiling_ratio):
    """Throughput multiplier capped at the ceiling [fraction (n, T)].

    Parameters
    ----------
    multiplier : array (n, T)  uncapped multiplier [ratio]
    ceiling_ratio : array (n,)  ceiling / today's tokens/s per GPU, >= 1; inf or NaN: no cap [ratio]
    """
    ceiling = np.asarray(ceiling_ratio, dtype=float).reshape(-1)
    ceiling = np.where(np.isnan(ceiling), np.inf, ceiling)
    _check_ceiling(ceiling, ceiling.shape)
    return np.minimum(np.asarray(multiplier, dtype=float), ceiling[:, None])


def throughput_multiplier(
    months,
    gain_rate_annual,
    *,
    trajectory=0,
    rate_decay_annual=0.0,
    ceiling_ratio=np.inf,
    step_months=None,
    step_gains=None,
    step_ramp_months=None,
    table_months=None,
    table_multipliers=None,
):
    """Tokens/s per GPU relative to the scenario's figure, month by month [fraction (n, T)].

        g_m = min(C, base_m * steps_m)

    where base_m is the scenario's trajectory (`compound_multiplier`, `logistic_multiplier` or
    `table_multiplier`, chosen per scenario by `trajectory`), steps_m is `step_multiplier` and C the
    ceiling ratio (`cap_at_ceiling`). Every model is computed only for the scenarios that use it.

    Parameters
    ----------
    months : int array (T,)  month indices
    gain_rate_annual : array (n,)  compound annual gain, or the logistic's initial rate
        [fraction/year]
    trajectory : int array (n,)  index into TRAJECTORIES (0 compound, 1 logistic, 2 table)
    rate_decay_annual : array (n,)  share of the compound rate lost per year [fraction/year]
    ceiling_ratio : array (n,)  speed-of-light ceiling / tokens_per_s_per_gpu; inf or NaN = none
        [ratio]
    step_months, step_gains, step_ramp_months : arrays (n, k), optional  see `step_multiplier`
    table_months, table_multipliers : arrays (n, k2), optional  see `table_multiplier`
    """
    rate = np.asarray(gain_rate_annual, dtype=float).reshape(-1)
    n = rate.shape[0]
    m = np.asarray(months)
    code = np.broadcast_to(np.asarray(trajectory), (n,))
    unknown = ~np.isin(code, np.arange(len(TRAJECTORIES)))
    if np.any(unknown):
        first = int(np.flatnonzero(unknown)[0])
        raise TrajectoryError(
            f"trajectory[{first}] = {code[first]!r}: expected a code 0-{len(TRAJECTORIES) - 1} "
            "for one of: " + ", ".join(TRAJECTORIES)
        )
    decay = np.broadcast_to(np.asarray(rate_decay_annual, dtype=float), (n,))
    ceiling = np.broadcast_to(np.asarray(ceiling_ratio, dtype=float), (n,))
    ceiling = np.where(np.isnan(ceiling), np.inf, ceiling)
    inputs = (code, rate, decay, np.where(code == 1, ceiling, 0.0))  # the logistic's own ceiling
    inputs += tuple(
        np.asarray(a) for a in (step_months, step_gains, step_ramp_months) if a is not None
    )
    if np.any(code == 2) and table_months is not None and table_multipliers is not None:
        inputs += (np.asarray(table_months), np.asarray(table_multipliers))
    if n > 1 and rows_alike(*inputs):
        # A sweep or Monte Carlo run seldom varies the trajectory: one row computed, repeated.
        def first(a):
            return None if a is None else np.asarray(a)[:1]

        one = throughput_multiplier(
            m,
            rate[:1],
            trajectory=code[:1],
            rate_decay_annual=decay[:1],
            ceiling_ratio=np.where(code[:1] == 1, ceiling[:1], np.inf),
            step_months=first(step_months),
            step_gains=first(step_gains),
            step_ramp_months=first(step_ramp_months),
            table_months=first(table_months),
            table_multipliers=first(table_multipliers),
        )
        return cap_at_ceiling(np.repeat(one, n, axis=0), ceiling)
    base = np.ones((n, m.shape[0]))
    rows = np.flatnonzero(code == 0)
    if rows.size:
        base[rows] = compound_multiplier(rate[rows], m, decay[rows])
    rows = np.flatnonzero(code == 1)
    if rows.size:
        base[rows] = logistic_multiplier(rate[rows], ceiling[rows], m)
    rows = np.flatnonzero(code == 2)
    if rows.size:
        if table_months is None or table_multipliers is None:
            raise TrajectoryError(
                f"trajectory[{int(rows[0])}] is 'table' but no table_months/table_multipliers "
                "were given: expected a table of (month, multiplier) points"
            )
        table_m = np.asarray(table_months, dtype=float)[rows]
        table_v = np.asarray(table_multipliers, dtype=float)[rows]
        base[rows] = table_multiplier(table_m, table_v, m)
    if step_months is not None:
        base = base * step_multiplier(step_months, step_gains, m, step_ramp_months)
    return cap_at_ceiling(base, ceiling)


def deflation_months_offset(gain, price_decline_annual):
    """Months of token price deflation a one-time throughput gain offsets [months].

    Revenue per GPU is tokens times price; a gain G restores it after a price fall of the same
    factor, which a price declining at d per year takes 12 * ln(1 + G) / -ln(1 - d) months to reach
    (from (1 + G) * (1 - d)^(t) = 1). inf when prices do not fall.

    Parameters
    ----------
    gain : array  one-time relative throughput gain, > -1 [fraction]
    price_decline_annual : array  annual fall of the token price, 0 <= d < 1 [fraction/year]
    """
    g = np.asarray(gain, dtype=float)
    d = np.asarray(price_decline_annual, dtype=float)
    if np.any(~(g > -1)) or np.any(~((d >= 0) & (d < 1))):
        raise TrajectoryError(
            f"gain = {g!r}, price_decline_annual = {d!r}: expected gains above -1 and declines "
            "in [0, 1)"
        )
    with np.errstate(divide="ignore"):
        return np.where(d > 0, MONTHS_PER_YEAR * np.log1p(g) / -np.log1p(-np.maximum(d, 0)), np.inf)


def rate_to_hold_revenue(price_decline_annual):
    """Compound annual throughput gain that keeps token revenue per GPU flat [fraction/year].

    (1 + a)^t * (1 - d)^t = 1 for all t gives a = d / (1 - d): 42.9% a year against a 30% annual
    price decline, 150% against 60%, 900% against the 10x a year of a16z's "LLMflation" (2024).

    Parameters
    ----------
    price_decline_annual : array  annual fall of the token price, 0 <= d < 1 [fraction/year]
    """
    d = np.asarray(price_decline_annual, dtype=float)
    if np.any(~((d >= 0) & (d < 1))):
        raise TrajectoryError(f"price_decline_annual = {d!r}: expected an annual decline in [0, 1)")
    return d / (1.0 - d)


__all__ = [
    "STEP_PADDING_MONTH",
    "TRAJECTORIES",
    "TrajectoryError",
    "cap_at_ceiling",
    "compound_multiplier",
    "deflation_months_offset",
    "gain_multiplier",
    "logistic_multiplier",
    "rate_to_hold_revenue",
    "step_multiplier",
    "table_multiplier",
    "throughput_multiplier",
    "years_in_service",
]
