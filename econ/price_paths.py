"""A scenario's prices per GPU-hour beside the rental index, and an index curve's fitted extension.

What the app's Market page draws (the page holds no formulas). Per month m of a projection, with
N_m GPUs in service, contract share c and H = 730 hours a month:

    market rental price          P_m  the engine's rental curve (a series, a table or a decline)
    earned per GPU-hour in service, by what the GPUs sell:
        contracts                contract_revenue_m / (c N_m H)        = the contract's price
        spot GPU-hours           spot_revenue_m / ((1 - c) N_m H)      = u_m P_m
        tokens                   token_revenue_m / ((1 - c) N_m H)     = u_m x tokens/s x 3600 p_m / 10^6

so the token figure is the token price equivalent of a GPU-hour, comparable with a rental price: a
GPU-hour rented on contract earns the index price whether or not it serves, a GPU selling tokens
earns only while it serves (utilization u_m included). A month with no GPUs on a side is NaN.

An index curve beyond its last point (t_L, P_L) continues as econ.rental_index extends a series,
P(t) = P_L f(t) / f(t_L), with the band P(t) exp(-/+ 1.645 s) (5th and 95th percentiles).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from econ.units import HOURS_PER_MONTH

PATH_COLUMNS = (
    "market_rental_usd_per_gpu_hour",
    "contract_usd_per_gpu_hour",
    "spot_usd_per_gpu_hour",
    "token_usd_per_gpu_hour",
)
"""Columns of `scenario_price_paths` besides month and date [USD/GPU-hour]."""


def _per_hour(revenue: np.ndarray, gpus: np.ndarray, share: float) -> np.ndarray:
    hours = share * gpus * HOURS_PER_MONTH
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hours > 0, revenue / np.where(hours > 0, hours, 1.0), np.nan)


def scenario_price_paths(scenario, monthly: pd.DataFrame | None = None) -> pd.DataFrame:
    """Month, date and the PATH_COLUMNS of one scenario (months 1..horizon) [USD/GPU-hour].

    `monthly` is the scenario's projected schedule (`Projection.monthly`, reset index), projected
    here when not given. Columns that do not apply are NaN throughout: contracts when the
    contract share is 0, spot GPU-hours or tokens when the uncontracted GPUs sell the other.
    The market rental price is NaN when the scenario uses none (no spot GPU-hours, no renewals).
    """
    from econ import market
    from econ.batch import ScenarioBatch

    if monthly is None:
        from econ.engine import project

        monthly = project(scenario).monthly.reset_index()
    months = monthly["month"].to_numpy(dtype=np.int64)
    b = ScenarioBatch.from_scenarios([scenario])
    rental = market.rental_price_usd_per_gpu_hour(
        b["market.rental_usd_per_gpu_hour"][:1],
        b["market.rental_decline_annual"][:1],
        b["market.rental_floor_usd_per_gpu_hour"][:1],
        months,
        b.extras["market.rental_table_months"][:1],
        b.extras["market.rental_table_usd_per_gpu_hour"][:1],
    )[0]
    m = scenario.market
    uses_rental = uses_market_rental(scenario)
    gpus = monthly["gpus_in_service"].to_numpy(dtype=float)
    c = float(m.contract_share)
    frame = pd.DataFrame(
        {
            "month": months,
            "date": monthly["date"].to_numpy(),
            "market_rental_usd_per_gpu_hour": rental if uses_rental else np.nan,
            "contract_usd_per_gpu_hour": _per_hour(
                monthly["contract_revenue_usd"].to_numpy(dtype=float), gpus, c
            ),
            "spot_usd_per_gpu_hour": _per_hour(
                monthly["spot_revenue_usd"].to_numpy(dtype=float), gpus, 1.0 - c
            )
            if m.spot_sells == "gpu_hours"
            else np.nan,
            "token_usd_per_gpu_hour": _per_hour(
                monthly["token_revenue_usd"].to_numpy(dtype=float), gpus, 1.0 - c
            )
            if m.spot_sells == "tokens"
            else np.nan,
        }
    )
    return frame[frame["month"] >= 1].reset_index(drop=True)


def sells_gpu_hours(scenario) -> bool:
    """True where the scenario earns money per GPU-hour: contracts, or spot GPU-hours."""
    m = scenario.market
    return m.spot_sells == "gpu_hours" or m.contract_share > 0


def uses_market_rental(scenario) -> bool:
    """True where the market rental price earns money: spot GPU-hours, contract renewals, or a
    first contract priced from a rental series."""
    m = scenario.market
    if m.spot_sells == "gpu_hours" and m.contract_share < 1:
        return True
    if m.contract_share > 0 and m.contract_term_months > 0:
        return True
    return m.contract_share > 0 and m.rental_series is not None and m.contract_usd_per_gpu_hour <= 0


# --- an index curve beyond its last point -------------------------------------------------------


@dataclass(frozen=True)
class Extension:
    """A curve's fitted decay from its last point on: dates and low / mid / high [USD/GPU-hour]."""

    fit: object  # econ.rental_index.DecayFit
    dates: tuple[dt.date, ...]
    mid: np.ndarray
    low: np.ndarray
    high: np.ndarray


def month_starts(after: dt.date, until: dt.date) -> tuple[dt.date, ...]:
    """First days of the months after `after` up to `until` (inclusive)."""
    out = []
    year, month = after.year, after.month
    while True:
        month += 1
        if month > 12:
            year, month = year + 1, 1
        day = dt.date(year, month, 1)
        if day > until:
            return tuple(out)
        out.append(day)


def extension(curve, until: dt.date) -> Extension:
    """The curve's fitted decay (econ.rental_index.fit_decay) through its last point, monthly up
    to `until`, with its band; RentalIndexError when the curve has too few points to fit."""
    from econ.rental_index import extend, fit_decay

    fit = fit_decay(curve.years(curve.dates), curve.prices)
    last = curve.points[-1]
    dates = (last.date, *month_starts(last.date, until))
    years = curve.years(dates)
    mid = extend(fit, float(years[0]), last.usd_per_gpu_hour, years)
    factors = fit.band_factors()
    return Extension(fit, dates, mid, mid * factors["low"], mid * factors["high"])


def band_percent(fit) -> tuple[float, float]:
    """The band as percentages of the mid price: (low - 1, high - 1) [fraction]."""
    factors = fit.band_factors()
    return factors["low"] - 1.0, factors["high"] - 1.0


__all__ = [
    "PATH_COLUMNS",
    "Extension",
    "band_percent",
    "extension",
    "month_starts",
    "scenario_price_paths",
    "sells_gpu_hours",
    "uses_market_rental",
]
