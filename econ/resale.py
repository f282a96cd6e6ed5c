"""Resale value of used GPUs: the share of the new hardware price a GPU resells for by its age,
and what it drives (disposal proceeds, collateral value, the rental-versus-resale spread).

A resale table gives points (age a_i [months], share s_i) with 0 <= s_i <= 1, ages strictly
increasing and shares not rising with age. Between points the share is interpolated linearly
(straight line, as a lender's residual-value schedule is read); before the first point the table
starts from (0, 1), the new price at purchase, unless it gives age 0 itself; after the last point
the share is held at its last value:

    s(a) = s_i + (s_{i+1} - s_i) (a - a_i) / (a_{i+1} - a_i)        a_i <= a <= a_{i+1}

A table may give a low and a high share per point (a published range); the band position
b in [-1, 1] picks a curve between them, linearly on each side of the mid:

    s_b = s + b (s_high - s)   for b >= 0,        s_b = s + b (s - s_low)   for b < 0

so b = -1, 0, 1 are the low, mid and high curves (Monte Carlo draws b).

The resale value of a row of GPUs at age a is V(a) = s_b(a) x H, where H is the row's hardware
cost with its spares (capex.gpu_price_usd, or the system price per GPU, x (1 + spares_share) x
GPUs): networking, storage and installation do not resell with the GPUs.

The rental-versus-resale spread of a year of a GPU's life (per GPU, over the 12 months from age
a to a + 12):

    rental earnings  R = sum_m p_m x 730 x u_m        (= p x 8760 x u at a constant price)
    resale loss      L = H_gpu x (s(a) - s(a + 12))
    spread           S = R - L

with p_m the market rental price [USD/GPU-hour], u_m the utilization and 730 = 8760 / 12 the
hours of a month. S > 0: a year of renting earns more than the year's ageing costs in resale
value (before power, facility and opex), so holding and renting beats selling now.

References
----------
GPU Lease Rate Index (GLRI), H100 residual value guide (updated 2026-01-08): residuals of 60-65%,
40-45%, 25-35%, 15-20% and 10-15% of MSRP after years 1 to 5, the shipped GLRI/ResidualGuide
series and the reference values of tests/test_resale.py. SpotWire valuator data v0.6
(CC-BY-4.0, 2026-06-04): vintage curves and liquidation factors. Yescombe, *Principles of
Project Finance*, 2nd ed. (2014), ch. 12 (financial structuring: debt against the value of
the assets). docs/market.md gives every source and what was not found.
"""

from __future__ import annotations

import numpy as np

from econ.units import HOURS_PER_MONTH, MONTHS_PER_YEAR

MAX_AGE_MONTHS = 600
"""Largest age of a resale table point [months] (50 years)."""


def band_shares(share, share_low, share_high, band):
    """The share at band position `band` between the low, mid and high curves [fraction].

    Parameters
    ----------
    share, share_low, share_high : array (n, k)  mid, low and high shares; NaN low or high is
        the mid (no range published)
    band : array (n,)  position: -1 low, 0 mid, +1 high (values outside are clipped)
    """
    mid = np.asarray(share, dtype=float)
    low = np.where(np.isnan(share_low), mid, share_low)
    high = np.where(np.isnan(share_high), mid, share_high)
    b = np.clip(np.asarray(band, dtype=float), -1.0, 1.0)
    b = b.reshape(b.shape + (1,) * (mid.ndim - b.ndim))
    return np.where(b >= 0, mid + b * (high - mid), mid + b * (mid - low))


def resale_share(table_ages, table_shares, ages):
    """Resale share of the new hardware price at each age, from each row's table [fraction].

    Straight-line interpolation between the points, from (0, 1) to the first point where the
    table does not start at age 0, held flat after the last point (module docstring).

    Parameters
    ----------
    table_ages : array (k,) or (n, k)  ages of the points [months], strictly increasing; NaN
        padding at the end of a row
    table_shares : array like table_ages  shares at those ages [fraction]
    ages : array (T,)  ages to evaluate [months]; ages below 0 (before purchase) give 1

    Returns
    -------
    array (T,) or (n, T)  share [fraction]; NaN in rows whose table is empty
    """
    one = np.ndim(table_ages) == 1
    x = np.atleast_2d(np.asarray(table_ages, dtype=float))
    y = np.atleast_2d(np.asarray(table_shares, dtype=float))
    if x.shape != y.shape:
        raise ValueError(f"table_ages {x.shape} and table_shares {y.shape}: expected one shape")
    n = x.shape[0]
    a = np.asarray(ages, dtype=float)
    count = (~np.isnan(x)).sum(axis=1)
    # The point (0, 1) in front: the new price at purchase (a table giving age 0 overrides it).
    x0 = np.concatenate([np.zeros((n, 1)), np.where(np.isnan(x), np.inf, x)], axis=1)
    y0 = np.concatenate([np.ones((n, 1)), y], axis=1)
    at = np.maximum(a, 0.0)
    right = (x0[:, None, :] <= at[None, :, None]).sum(axis=2)  # (n, T), at least 1
    beyond = right > count[:, None]  # at or after the last point: held flat
    right = np.clip(right, 1, np.maximum(count, 1)[:, None])
    left = right - 1
    xl, xr = np.take_along_axis(x0, left, 1), np.take_along_axis(x0, right, 1)
    yl, yr = np.take_along_axis(y0, left, 1), np.take_along_axis(y0, right, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(xr > xl, (at[None, :] - xl) / (xr - xl), 0.0)
    last = y0[np.arange(n), count][:, None]
    share = np.where(beyond, last, yl + np.clip(t, 0.0, 1.0) * (yr - yl))
    share = np.where(a[None, :] < 0, 1.0, share)
    share = np.where((count > 0)[:, None], share, np.nan)
    return share[0] if one else share


def resale_value_usd(hardware_usd, share):
    """Resale value: share x hardware cost [USD] (hardware_usd (n,), share (n, ...))."""
    h = np.asarray(hardware_usd, dtype=float)
    s = np.asarray(share, dtype=float)
    return s * h.reshape(h.shape + (1,) * (s.ndim - h.ndim))


def proceeds_at_retirement_usd(hardware_usd, share, held_months):
    """Sale proceeds when a row retires after `held_months` months: V(held) [USD, array (n,)].

    Parameters
    ----------
    hardware_usd : array (n,)  hardware cost with spares [USD]
    share : array (n, T)  resale share by age 0..T-1 (`resale_share`)
    held_months : int array (n,)  age at retirement [months], 0 <= held < T
    """
    s = np.asarray(share, dtype=float)
    held = np.asarray(held_months, dtype=np.int64)
    return np.asarray(hardware_usd, dtype=float) * s[np.arange(s.shape[0]), held]


def collateral_value_usd(hardware_usd, share, since_purchase, held_months):
    """Market value of a row's GPUs at each month end, as the lenders' collateral [USD, (n, T)].

    V_m = H x s(min(m - purchase, held)) from the purchase month on, 0 before: the GPUs at their
    resale value while held, and after their sale at the end of the retirement month its
    proceeds, which stand in for them (the engine does not model a mandatory prepayment of the
    loan from disposal proceeds; the book value likewise keeps the carrying amount at sale).

    Parameters
    ----------
    hardware_usd : array (n,)  [USD]
    share : array (n, T)  resale share by age 0..T-1 (`resale_share`)
    since_purchase : int array (n, T)  months since each row's purchase on the calendar grid
    held_months : array (n,)  months from purchase to retirement
    """
    s = np.asarray(share, dtype=float)
    age = np.asarray(since_purchase, dtype=np.int64)
    held = np.asarray(held_months, dtype=np.int64)[:, None]
    at = np.take_along_axis(s, np.clip(np.minimum(age, held), 0, s.shape[1] - 1), axis=1)
    return np.where(age >= 0, resale_value_usd(hardware_usd, at), 0.0)


def rental_resale_spread(
    rental_usd_per_gpu_hour, utilization, share_start, share_end, hardware_usd_per_gpu
):
    """What a year of renting earns against what the year's ageing loses in resale value.

    Parameters
    ----------
    rental_usd_per_gpu_hour : array (n, 12)  market rental price in each month of the year
        [USD/GPU-hour]
    utilization : array (n, 12)  share of hours rented [fraction]
    share_start, share_end : array (n,)  resale share at the start and the end of the year
    hardware_usd_per_gpu : array (n,)  hardware cost per GPU with spares [USD/GPU]

    Returns
    -------
    dict of arrays (n,): rental_earnings_usd_per_gpu_year (R), resale_loss_usd_per_gpu_year
    (L) and rental_resale_spread_usd_per_gpu_year (R - L) [USD per GPU per year]
    """
    price = np.asarray(rental_usd_per_gpu_hour, dtype=float)
    earnings = np.sum(price * HOURS_PER_MONTH * np.asarray(utilization, dtype=float), axis=-1)
    loss = np.asarray(hardware_usd_per_gpu, dtype=float) * (
        np.asarray(share_start, dtype=float) - np.asarray(share_end, dtype=float)
    )
    return {
        "rental_earnings_usd_per_gpu_year": earnings,
        "resale_loss_usd_per_gpu_year": loss,
        "rental_resale_spread_usd_per_gpu_year": earnings - loss,
    }


def spread_by_age_year(
    rental_usd_per_gpu_hour, utilization, share, hardware_usd_per_gpu, years: int
):
    """The spread of each year of age 0..years-1 for one generation (one row), for a table.

    Parameters
    ----------
    rental_usd_per_gpu_hour, utilization : array (>= 12 x years,)  monthly price and utilization
        by month of age (month 0 first)
    share : array (>= 12 x years + 1,)  resale share by age in months
    hardware_usd_per_gpu : float  [USD/GPU]
    years : number of whole years

    Returns
    -------
    dict of arrays (years,): age_years (start of each year) and the keys of
    `rental_resale_spread`
    """
    months = MONTHS_PER_YEAR * years
    price = np.asarray(rental_usd_per_gpu_hour, dtype=float)[:months].reshape(years, -1)
    util = np.asarray(utilization, dtype=float)[:months].reshape(years, -1)
    s = np.asarray(share, dtype=float)
    starts = np.arange(years) * MONTHS_PER_YEAR
    out = rental_resale_spread(
        price, util, s[starts], s[starts + MONTHS_PER_YEAR], np.full(years, hardware_usd_per_gpu)
    )
    return {"age_years": np.arange(years), **out}


SPREAD_KEYS = (
    "rental_earnings_usd_per_gpu_year",
    "resale_loss_usd_per_gpu_year",
    "rental_resale_spread_usd_per_gpu_year",
)
"""Summary keys of the rental-versus-resale spread (the first year in service)."""


__all__ = [
    "MAX_AGE_MONTHS",
    "SPREAD_KEYS",
    "band_shares",
    "collateral_value_usd",
    "proceeds_at_retirement_usd",
    "rental_resale_spread",
    "resale_share",
    "resale_value_usd",
    "spread_by_age_year",
]
