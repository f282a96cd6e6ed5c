"""Debt schedules, monthly and vectorized over a leading scenario axis.

Sign convention: interest, principal and balances are positive amounts; the engine turns them into
cash-flow signs.
"""

from __future__ import annotations

import numpy as np


def level_payment_balance(principal_usd, rate_monthly, term_months, months):
    """Balance after each month of a level-payment (annuity) loan drawn at month 0 [USD].

    B_m = P * ((1+i)^N - (1+i)^m) / ((1+i)^N - 1) for 0 <= m <= N, and P * (1 - m/N) when i = 0;
    zero after the term. This is the balance implied by the spreadsheet's PMT/IPMT/PPMT.

    Parameters
    ----------
    principal_usd, rate_monthly, term_months : array (n,)  [USD], [1/month], [months]
    months : array (T,)  month indices, 0 = draw month
    """
    p = np.asarray(principal_usd, dtype=float)[:, None]
    i = np.asarray(rate_monthly, dtype=float)[:, None]
    n = np.asarray(term_months, dtype=float)[:, None]
    m = np.minimum(np.asarray(months, dtype=float)[None, :], n)
    # expm1/log1p keep full precision for tiny rates, where (1+i)^n - 1 would round to 0.
    log_growth = np.log1p(i)
    with np.errstate(divide="ignore", invalid="ignore"):
        growth_n = np.expm1(n * log_growth)
        annuity = (growth_n - np.expm1(m * log_growth)) / growth_n
    share = np.where(i == 0.0, 1.0 - m / n, annuity)
    return p * share


def level_payment_schedule(principal_usd, rate_monthly, term_months, months, last_month=None):
    """Interest, principal and closing balance per month of a level-payment loan [USD].

    Payments start in month 1. When `last_month` (array (n,)) falls before the end of the term, the
    balance left then is repaid in that month as a balloon, reported separately.

    Returns
    -------
    interest, principal, balance, balloon : arrays (n, T)  [USD]
    """
    balance = level_payment_balance(principal_usd, rate_monthly, term_months, months)
    opening = np.concatenate([balance[:, :1], balance[:, :-1]], axis=1)
    started = np.asarray(months)[None, :] >= 1
    interest = opening * np.asarray(rate_monthly, dtype=float)[:, None] * started
    principal = (opening - balance) * started
    balloon = np.zeros_like(balance)
    if last_month is not None:
        m = np.asarray(months)[None, :]
        last = np.asarray(last_month)[:, None]
        balloon = np.where(m == last, balance, 0.0)
        after = m >= last
        balance = np.where(after, 0.0, balance)
        interest = np.where(m > last, 0.0, interest)
        principal = np.where(m > last, 0.0, principal)
    return interest, principal, balance, balloon
