"""Software-gain trajectories: how tokens/s per GPU on installed hardware changes over time."""

from __future__ import annotations

import numpy as np

from econ.units import annual_growth_factor


def gain_multiplier(gain_rate_annual, step_months, step_gains, months):
    """Throughput relative to month 1 under a compound rate and dated steps [fraction (n, T)].

    g_m = (1 + r)^((m - 1) / 12) * prod over steps k with month_k <= m of (1 + gain_k).

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
