"""Electricity cost of GPUs in service."""

from __future__ import annotations

import numpy as np

from econ.units import HOURS_PER_MONTH, annual_growth_factor


def power_usd_per_month(
    gpus,
    kw_per_gpu,
    utilization,
    idle_power_share,
    pue,
    price_usd_per_kwh,
    escalation_annual,
    months,
):
    """Electricity bill per month at the utility meter [USD/month].

    energy = gpus * kW * (u + (1 - u) * idle) * PUE * 730 h; the price escalates from month 1 at a
    compound annual rate.

    Parameters
    ----------
    gpus, utilization : array (n, T)  GPUs in service [GPUs], share of hours serving [fraction]
    kw_per_gpu, idle_power_share, pue, price_usd_per_kwh, escalation_annual : array (n,)
    months : array (T,)  month indices
    """
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731
    load = utilization + (1.0 - utilization) * col(idle_power_share)
    price = col(price_usd_per_kwh) * annual_growth_factor(
        col(escalation_annual), np.maximum(months - 1, 0)
    )
    return gpus * col(kw_per_gpu) * load * col(pue) * HOURS_PER_MONTH * price
