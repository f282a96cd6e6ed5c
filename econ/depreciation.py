"""Book depreciation schedules, monthly and vectorized over a leading scenario axis."""

from __future__ import annotations

import numpy as np


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
