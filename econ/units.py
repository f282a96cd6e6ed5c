"""Constants and unit conversions shared by every module.

Nothing else in econ hard-codes these numbers: a month is 1/12 of a 365-day year, a million tokens is
the unit prices are quoted in, and annual rates become monthly rates by compounding.
"""

from __future__ import annotations

import numpy as np

HOURS_PER_YEAR = 8760.0
"""Hours in a 365-day year [h]."""
MONTHS_PER_YEAR = 12
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR
"""Average hours in a month, 730 [h]."""
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_MONTH = HOURS_PER_MONTH * SECONDS_PER_HOUR
TOKENS_PER_MTOK = 1_000_000.0
"""Prices are quoted per million tokens [tokens/Mtok]."""
KW_PER_MW = 1000.0

HALF_CENT_USD = 0.005
"""Amounts smaller than this are float residues of sums that are 0 exactly (a loan balance once
repaid, the book value of a fully depreciated asset); domain functions snap them to 0 [USD]."""


def monthly_rate(rate_annual):
    """Effective monthly rate of an effective annual rate: (1 + r)^(1/12) - 1 [fraction]."""
    return np.power(1.0 + np.asarray(rate_annual, dtype=float), 1.0 / MONTHS_PER_YEAR) - 1.0


def annual_rate(rate_monthly):
    """Effective annual rate of a monthly rate: (1 + m)^12 - 1 [fraction]."""
    return np.power(1.0 + np.asarray(rate_monthly, dtype=float), MONTHS_PER_YEAR) - 1.0


def nominal_monthly_rate(rate_annual):
    """Monthly rate of a nominal annual rate quoted with monthly compounding (APR): r / 12."""
    return np.asarray(rate_annual, dtype=float) / MONTHS_PER_YEAR


def annual_growth_factor(rate_annual, months):
    """Growth factor after `months` at a compound annual rate: (1 + r)^(months / 12).

    `rate_annual` (n, 1) and `months` (1, T) give an (n, T) path (see `power_path`); other
    shapes broadcast as numpy's power does.
    """
    rate = np.asarray(rate_annual, dtype=float)
    years = np.asarray(months) / MONTHS_PER_YEAR
    if rate.ndim == 2 and rate.shape[1] == 1 and years.ndim == 2 and years.shape[0] == 1:
        return power_path(1.0 + rate[:, 0], years[0])
    return np.power(1.0 + rate, years)


def power_path(base, exponent):
    """``base[:, None] ** exponent[None, :]``: a per-scenario base raised to per-month powers (n, T).

    Computed as exp(log(base) * exponent), which equals numpy's power to about 1e-15 relative
    and costs a third of it on (8192, 73) arrays; where all scenarios share one base, the one
    row is computed by power and repeated. Bases must be positive (rates above -100%).

    Parameters
    ----------
    base : array (n,)  e.g. 1 + r, or 1 - d for a decline
    exponent : array (T,)  e.g. months / 12
    """
    b = np.asarray(base, dtype=float).reshape(-1)
    e = np.asarray(exponent, dtype=float).reshape(-1)
    if b.size and np.all(b == b[0]):
        return np.repeat(np.power(b[0], e)[None, :], b.size, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.multiply.outer(np.log(b), e)
    np.exp(out, out=out)
    # log(0) * 0 is NaN where numpy's power gives 0**0 = 1 (and NaN bases stay NaN): redo those.
    bad = ~(b > 0)
    if bad.any():
        out[bad] = np.power(b[bad, None], e[None, :])
    return out
