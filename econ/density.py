"""Density metrics: what a hall earns per MW, per rack and per m², and energy and power cost per token.

The engine passes monthly arrays it already has (tokens, revenue, electricity, IT energy) and the
installed capacity; this module reduces them to per-scenario metrics (n,). A metric with no
denominator (no tokens, no floor area given) is NaN, for the engine to report as null with a warning.

Conventions (docs/power.md):
- capacity is what is in service each month, summed to unit-years (sum_m c_m / 12): IT MW = GPUs in
  service * kW per GPU at full load (IT boundary); utility MW = IT MW * PUE (The Green Grid WP#49);
  racks = ceil(GPUs / GPUs per rack), since a part-filled rack still takes a rack position;
  m² = racks * m² per rack (white space including aisles). This is the engine's definition of
  revenue_usd_per_mw_year, and it holds for fleets of several vintages;
- idle hours count against density: capacity in service earns nothing while it waits;
- energy per token divides all energy drawn (idle hours included) by tokens produced, on the IT
  boundary and at the utility meter.
"""

from __future__ import annotations

import numpy as np

from econ.units import (
    KW_PER_MW,
    MONTHS_PER_YEAR,
    SECONDS_PER_HOUR,
    SECONDS_PER_MONTH,
    TOKENS_PER_MTOK,
)

JOULES_PER_KWH = 1000.0 * SECONDS_PER_HOUR
"""Joules in a kilowatt-hour [J/kWh] (1 kW for 3,600 s)."""

DENSITY_METRICS = (
    "tokens_per_s_per_mw",
    "tokens_per_s_per_mw_it",
    "tokens_per_s_per_mw_utility",
    "revenue_usd_per_mw_year",
    "revenue_usd_per_mw_year_utility",
    "revenue_usd_per_rack_year",
    "revenue_usd_per_m2_year",
    "joules_per_token_it",
    "joules_per_token_utility",
    "power_cost_usd_per_mtok",
    "mw_years_it",
    "mw_years_utility",
    "rack_years",
    "m2_years",
)
"""Names `density_metrics` returns, in display order."""


def _ratio(numerator, denominator):
    """numerator / denominator, NaN where the denominator is not positive."""
    den = np.asarray(denominator, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.asarray(numerator, dtype=float) / den, np.nan)


def racks_in_service(gpus_in_service, gpus_per_rack):
    """Rack positions the GPUs in service take: ceil(GPUs / GPUs per rack) [racks].

    A part-filled rack still takes a rack position (its floor, power feed and cooling loop).

    Parameters
    ----------
    gpus_in_service : array (n,) or (n, T)  [GPUs]
    gpus_per_rack : array (n,)  [GPUs/rack]
    """
    gpus = np.asarray(gpus_in_service, float)
    per_rack = np.asarray(gpus_per_rack, float)
    per_rack = per_rack[:, None] if gpus.ndim == 2 and per_rack.ndim == 1 else per_rack
    # A tolerance so 144 / 72 is 2 racks, not 3 after a rounding error upward.
    return np.ceil(gpus / per_rack - 1e-9)


def capacity_years(capacity_by_month):
    """Capacity held over the months, in unit-years: sum_m c_m / 12 [unit-years].

    Parameters
    ----------
    capacity_by_month : array (n, T)  MW, racks or m² in service each month
    """
    return np.asarray(capacity_by_month, float).sum(axis=-1) / MONTHS_PER_YEAR


def tokens_per_s_per_mw(tokens_total, mw_years):
    """Average tokens per second per MW of capacity in service [tokens/s/MW].

    r = sum_m tokens_m / sum_m (MW_m * 2,628,000 s) = tokens / (MW-years * 12 * 2,628,000 s)

    Parameters
    ----------
    tokens_total : array (n,)  tokens over the horizon [tokens]
    mw_years : array (n,)  capacity in service (IT, or at the utility meter) [MW-years]
    """
    mw_seconds = np.asarray(mw_years, float) * MONTHS_PER_YEAR * SECONDS_PER_MONTH
    return _ratio(tokens_total, mw_seconds)


def rated_tokens_per_s_per_mw(tokens_per_s, kw):
    """Tokens per second per MW of IT power at full load and the rated speed [tokens/s/MW].

    r = tps * 1000 / kW: the nameplate density, before utilization, idle hours and gains. Per GPU
    (tps per GPU, kW per GPU) or per fleet (sum of both) alike.

    Parameters
    ----------
    tokens_per_s : array (n,)  rated output tokens per second [tokens/s]
    kw : array (n,)  IT power at full load of the same GPUs [kW]
    """
    return _ratio(np.asarray(tokens_per_s, float) * KW_PER_MW, kw)


def per_unit_year(total, unit_years):
    """A total over the horizon per unit of capacity per year: total / unit-years.

    Parameters
    ----------
    total : array (n,)  e.g. revenue [USD]
    unit_years : array (n,)  MW-years, rack-years or m²-years in service
    """
    return _ratio(total, unit_years)


def joules_per_token(energy_kwh_total, tokens_total):
    """Energy per token [J/token]: kWh * 3.6e6 / tokens, NaN without tokens.

    Parameters
    ----------
    energy_kwh_total, tokens_total : array (n,)  [kWh], [tokens]
    """
    return _ratio(np.asarray(energy_kwh_total, float) * JOULES_PER_KWH, tokens_total)


def power_cost_usd_per_mtok(power_usd_total, tokens_total):
    """Electricity cost per million tokens, undiscounted [USD/Mtok].

    The LCOT's power component discounts both sums; this is the plain ratio of totals, the figure
    operators quote.

    Parameters
    ----------
    power_usd_total, tokens_total : array (n,)  [USD], [tokens]
    """
    return _ratio(np.asarray(power_usd_total, float) * TOKENS_PER_MTOK, tokens_total)


def density_metrics(
    *,
    tokens,
    revenue_usd,
    power_usd,
    it_energy_kwh,
    it_kw_in_service,
    racks_in_service,
    m2_per_rack,
    pue,
    rated_tokens_per_s=None,
    installed_it_kw=None,
):
    """Density metrics of a projection, one value per scenario.

    Capacity is what is in service each month, summed to unit-years, so a deployment ramp or a
    vintage retired early counts for the months it was there (the engine's revenue_usd_per_mw_year).

    Parameters
    ----------
    tokens, revenue_usd, power_usd : arrays (n, T)  monthly line items [tokens], [USD], [USD]
    it_energy_kwh : array (n, T)  IT energy drawn each month, idle hours included [kWh]
    it_kw_in_service : array (n, T)  full-load IT power of the GPUs in service [kW]
    racks_in_service : array (n, T)  racks in service (`racks_in_service`) [racks]
    m2_per_rack : array (n,)  white space per rack incl. aisles; NaN if unknown [m²]
    pue : array (n,)  [ratio]
    rated_tokens_per_s, installed_it_kw : arrays (n,), optional  fleet's rated speed in month 1
        and its full-load IT power, for the nameplate `tokens_per_s_per_mw` (NaN if omitted)

    Returns
    -------
    dict name -> array (n,), the names in DENSITY_METRICS:

    - tokens_per_s_per_mw: rated, full load, per MW IT (the foundation's definition)
    - tokens_per_s_per_mw_it / _utility: delivered average per MW in service
    - revenue_usd_per_mw_year (per MW IT) / _utility, revenue_usd_per_rack_year,
      revenue_usd_per_m2_year
    - joules_per_token_it / _utility: all energy drawn / tokens
    - power_cost_usd_per_mtok: electricity bill / tokens * 1e6
    - mw_years_it, mw_years_utility, rack_years, m2_years: the capacity the ratios divide by
    """
    tokens_total = np.asarray(tokens, float).sum(axis=-1)
    revenue_total = np.asarray(revenue_usd, float).sum(axis=-1)
    it_kwh_total = np.asarray(it_energy_kwh, float).sum(axis=-1)
    pue = np.asarray(pue, float)
    mw_years_it = capacity_years(it_kw_in_service) / KW_PER_MW
    mw_years_utility = mw_years_it * pue
    rack_years = capacity_years(racks_in_service)
    m2_years = rack_years * np.asarray(m2_per_rack, float)
    if rated_tokens_per_s is None or installed_it_kw is None:
        rated = np.full(tokens_total.shape, np.nan)
    else:
        rated = rated_tokens_per_s_per_mw(rated_tokens_per_s, installed_it_kw)
    return {
        "tokens_per_s_per_mw": rated,
        "tokens_per_s_per_mw_it": tokens_per_s_per_mw(tokens_total, mw_years_it),
        "tokens_per_s_per_mw_utility": tokens_per_s_per_mw(tokens_total, mw_years_utility),
        "revenue_usd_per_mw_year": per_unit_year(revenue_total, mw_years_it),
        "revenue_usd_per_mw_year_utility": per_unit_year(revenue_total, mw_years_utility),
        "revenue_usd_per_rack_year": per_unit_year(revenue_total, rack_years),
        "revenue_usd_per_m2_year": per_unit_year(revenue_total, m2_years),
        "joules_per_token_it": joules_per_token(it_kwh_total, tokens_total),
        "joules_per_token_utility": joules_per_token(it_kwh_total * pue, tokens_total),
        "power_cost_usd_per_mtok": power_cost_usd_per_mtok(
            np.asarray(power_usd, float).sum(axis=-1), tokens_total
        ),
        "mw_years_it": mw_years_it,
        "mw_years_utility": mw_years_utility,
        "rack_years": rack_years,
        "m2_years": m2_years,
    }


__all__ = [
    "DENSITY_METRICS",
    "JOULES_PER_KWH",
    "density_metrics",
    "joules_per_token",
    "per_unit_year",
    "power_cost_usd_per_mtok",
    "capacity_years",
    "racks_in_service",
    "rated_tokens_per_s_per_mw",
    "tokens_per_s_per_mw",
]
