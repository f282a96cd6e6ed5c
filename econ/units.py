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
    """Growth factor after `months` at a compound annual rate: (1 + r)^(months / 12)."""
    return np.power(
        1.0 + np.asarray(rate_annual, dtype=float), np.asarray(months) / MONTHS_PER_YEAR
    )
