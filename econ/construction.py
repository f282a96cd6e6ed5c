"""A construction period: capex paid by a schedule before service, and the loan interest of those
months capitalized into the asset's cost (ASC 835-20; IAS 23), vectorized over scenarios.

The GPUs are bought in month p (their capex paid by a schedule of deposits, progress payments and
a balance on delivery, months p..s-1) and serve from month s. The loan is drawn with each payment
(the loan's share of it); during construction its interest is not paid but added to the balance
(capitalized into the loan and into the asset, so it is counted once: as part of the cost that is
depreciated, never as interest expense nor again as principal). From month s the balance then owed
amortizes with level monthly payments over the loan's term.

Monthly arrays are (n, T) over months 0..T-1; per-scenario arrays (n,).

References
----------
.. [1] FASB ASC 835-20 (Interest: Capitalization of Interest), 25-5 (assets constructed for use),
   30-2 (amount: interest on accumulated expenditures), 25-8 (the period ends when the asset is
   ready for use).
.. [2] IASB IAS 23 *Borrowing Costs*, paragraphs 8 and 22.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.financing import level_payment_schedule


@dataclass(frozen=True)
class ConstructionLoan:
    """A loan drawn during construction, interest capitalized until service starts.

    Attributes (arrays (n, T), [USD])
    ----------
    draws_usd : loan drawn each month
    capitalized_interest_usd : interest added to the balance (and to the asset's cost)
    interest_usd : interest expense (and paid) from the service start month on
    principal_usd : principal repaid, including what is left when the projection ends
    settlement_usd : the balance repaid in the last month, where the loan outlives the projection
    balance_usd : balance at the end of each month
    capitalized_total_usd : (n,) interest capitalized over the construction period
    owed_at_service_usd : (n,) the balance when service starts (at the end of month s-1), which
        the level payments amortize: the draws plus the interest capitalized on them
    """

    draws_usd: np.ndarray
    capitalized_interest_usd: np.ndarray
    interest_usd: np.ndarray
    principal_usd: np.ndarray
    settlement_usd: np.ndarray
    balance_usd: np.ndarray
    capitalized_total_usd: np.ndarray
    owed_at_service_usd: np.ndarray


def construction_loan(draws_usd, rate_monthly, service_start_month, term_months, last_month):
    """Balances, capitalized interest and repayment of a loan drawn during construction [USD].

    With d_m the draws, r the monthly rate and s the first month of service:

        B_m = B_{m-1} (1 + r) + d_m        for m < s   (B_{-1} = 0)
        capitalized interest_m = r B_{m-1}, for 1 <= m < s

    so a single draw D in month 0 is owed D (1 + r)^(s-1) when service starts, having capitalized
    D ((1 + r)^(s-1) - 1). From month s the balance B_{s-1} is repaid with level payments over
    `term_months` (first payment in month s); what is owed in `last_month` is repaid then.

    Parameters
    ----------
    draws_usd : array (n, T)  loan drawn each month, 0 from month s on [USD]
    rate_monthly : array (n,)  [1/month]
    service_start_month : int array (n,)  s >= 1 [month index]
    term_months : array (n,)  amortization term from the service start [months]
    last_month : int array (n,)  final month of each projection, >= s
    """
    draws = np.asarray(draws_usd, dtype=float)
    n, months = draws.shape
    rate = np.asarray(rate_monthly, dtype=float)
    start = np.asarray(service_start_month, dtype=np.int64)
    building = np.arange(months)[None, :] < start[:, None]
    balance_built, capitalized = _built(draws, rate, start)
    owed = balance_built[np.arange(n), start - 1]
    # Amortization from month s: a level-payment loan of B_{s-1} drawn in month s-1, shifted.
    shift = start - 1
    relative = np.arange(months)
    interest, scheduled, balance, settlement = level_payment_schedule(
        owed, rate, term_months, relative, last_month=np.asarray(last_month) - shift
    )
    interest, scheduled, balance, settlement = (
        _delay(x, shift) for x in (interest, scheduled, balance, settlement)
    )
    balance = np.where(building, balance_built, balance)
    return ConstructionLoan(
        draws_usd=np.where(building, draws, 0.0),
        capitalized_interest_usd=capitalized,
        interest_usd=interest,
        principal_usd=scheduled + settlement,
        settlement_usd=settlement,
        balance_usd=balance,
        capitalized_total_usd=capitalized.sum(axis=1),
        owed_at_service_usd=owed,
    )


def _built(draws, rate, start):
    """The balance (n, T) while building (months before `start`, 0 after) and the interest
    capitalized each month (n, T) of a loan drawn `draws` (n, T) at monthly `rate` (n,)."""
    n, months = draws.shape
    m = np.arange(months)[None, :]
    building = m < start[:, None]
    # Compounded to the end of month s-1 and back: the balance in month m < s is
    # sum_{j<=m} d_j (1+r)^(m-j), i.e. (1+r)^m * cumulative sum of d_j (1+r)^-j.
    growth = np.power.outer(1.0 + rate, np.arange(months, dtype=float))
    balance = growth * np.cumsum(np.where(building, draws, 0.0) / growth, axis=1)
    balance = np.where(building, balance, 0.0)
    opening = np.concatenate([np.zeros((n, 1)), balance[:, :-1]], axis=1)
    return balance, np.where(building & (m >= 1), opening * rate[:, None], 0.0)


def capitalized_interest_usd(draws_usd, rate_monthly, service_start_month):
    """Interest capitalized on some of a construction loan's draws [USD, array (n,)].

    The loan's balance is linear in its draws, so the interest `construction_loan` capitalizes
    is the sum of what each asset's draws accrue: this gives one asset's share (an owned hall
    paid in month 0, say), to be added to that asset's cost and depreciated over its own life.

    Parameters
    ----------
    draws_usd : array (n, T)  the asset's draws on the loan [USD]
    rate_monthly : array (n,)  [1/month]
    service_start_month : int array (n,)  s >= 1 [month index]
    """
    draws = np.asarray(draws_usd, dtype=float)
    start = np.asarray(service_start_month, dtype=np.int64)
    return _built(draws, np.asarray(rate_monthly, dtype=float), start)[1].sum(axis=1)


def _delay(values, shift):
    """Each row shifted right by its `shift` months, 0 before (month j moves to month j + shift)."""
    source = np.arange(values.shape[1])[None, :] - np.asarray(shift)[:, None]
    shifted = np.take_along_axis(values, np.maximum(source, 0), axis=1)
    return np.where(source >= 0, shifted, 0.0)


def payment_schedule_usd(capex_usd, purchase_month, payment_months, payment_shares, months: int):
    """Capex paid each month by a schedule of payments [USD, array (n, T)].

        paid_m = K * sum_k share_k [m = p + month_k]

    Parameters
    ----------
    capex_usd : array (n,)  K, the capex paid over the schedule [USD]
    purchase_month : int array (n,)  p [month index]
    payment_months : array (n, k)  months after p of each payment; padding NaN
    payment_shares : array (n, k)  share of K of each payment, summing to 1; padding 0 [fraction]
    months : int  columns T
    """
    k_months = np.asarray(payment_months, dtype=float)
    shares = np.asarray(payment_shares, dtype=float)
    n = k_months.shape[0]
    at = np.nan_to_num(k_months, nan=0.0).astype(np.int64) + np.asarray(purchase_month)[:, None]
    paid = np.zeros((n, months))
    np.add.at(
        paid,
        (np.repeat(np.arange(n), at.shape[1]), np.minimum(at, months - 1).reshape(-1)),
        (shares * np.asarray(capex_usd, dtype=float)[:, None]).reshape(-1),
    )
    return paid
