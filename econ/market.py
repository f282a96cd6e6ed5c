"""Revenue: tokens sold at a declining price, and GPU-hours rented under contract."""

from __future__ import annotations

import numpy as np

from econ.units import HOURS_PER_MONTH, TOKENS_PER_MTOK


def price_path(price_decline_annual, months):
    """Token price relative to month 1: (1 - d)^((m - 1) / 12), 1 in months 0 and 1 [fraction].

    Parameters
    ----------
    price_decline_annual : array (n,)  annual fall of the price [fraction/year]
    months : array (T,)  month indices
    """
    d = np.asarray(price_decline_annual, dtype=float)[:, None]
    return np.power(1.0 - d, np.maximum(np.asarray(months) - 1, 0)[None, :] / 12.0)


def revenue_usd_per_month(
    tokens, gpus, price_usd_per_mtok, price_factor, contract_share, contract_usd_per_gpu_hour
):
    """Revenue per month: uncontracted tokens at the token price plus contracted GPU-hours [USD].

    Contracted GPUs earn their hourly rate whether or not they serve; the other GPUs earn only for the
    tokens they produce, so utilization lowers token revenue but not contract revenue.

    Parameters
    ----------
    tokens, gpus, price_factor : arrays (n, T)  tokens produced, GPUs in service, price path
    price_usd_per_mtok, contract_share, contract_usd_per_gpu_hour : arrays (n,)
    """
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731
    share = col(contract_share)
    tokens_revenue = (
        (1.0 - share) * tokens * col(price_usd_per_mtok) * price_factor / TOKENS_PER_MTOK
    )
    contract_revenue = share * gpus * HOURS_PER_MONTH * col(contract_usd_per_gpu_hour)
    return tokens_revenue, contract_revenue
