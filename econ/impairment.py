"""Impairment of the asset under US GAAP (ASC 360-10) or IFRS (IAS 36), vectorized over scenarios.

This module owns the impairment indicator (a fall in a market price past a threshold), the two
tests, and the book schedule after an impairment: the month, the loss, the new depreciation and
carrying amount. Cash-flow inputs (what the asset will earn, its fair value) come from the caller;
the measures of the cash flows still to come count a disposal from the end of its own month on,
so the test of the month of a sale recovers its proceeds.

* **US GAAP, two steps** (ASC 360-10-35-17): when an indicator exists, the carrying amount is not
  recoverable if it exceeds the undiscounted cash flows the asset is expected to generate over its
  remaining use and disposal; the loss is then the carrying amount less fair value. The written-
  down amount is the new cost basis, depreciated over the remaining life (35-20); a loss is never
  reversed.
* **IFRS** (IAS 36.59): the loss is the carrying amount less the recoverable amount, the higher of
  fair value less costs of disposal and value in use (IAS 36.18). A loss is reversed when the
  recoverable amount recovers, up to the carrying amount the asset would have had without the
  impairment (IAS 36.117).

After an impairment the rest of the original schedule is scaled so that it depreciates the new
carrying amount down to salvage over the same remaining months (the method's pattern is kept): if
``C⁰_m`` is the carrying amount without impairment, ``S`` the salvage and ``k`` the factor set by
the last test, the carrying amount is ``S + k (C⁰_m - S)`` and depreciation ``k · D_m``. When the
recoverable amount falls below salvage, the residual value is revised down to it.

Monthly arrays are ``(n, T)`` over months ``0..T-1`` (amounts at the end of each month), per-
scenario values ``(n,)``.

References
----------
.. [1] FASB ASC 360-10-35-17 to 35-23 (recognition and measurement of an impairment loss of a
   long-lived asset to be held and used), 35-21 (indicators, e.g. a significant decrease in the
   market price).
.. [2] IASB IAS 36 *Impairment of Assets*, paragraphs 9, 12, 18, 59, 63, 110, 114, 117.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.arrays import cumsum_months, remaining_sum_months
from econ.errors import InputError
from econ.units import HALF_CENT_USD

__all__ = [
    "STANDARDS",
    "ImpairmentError",
    "ImpairmentResult",
    "ifrs_loss",
    "impair",
    "price_drop_trigger",
    "remaining_present_value_usd",
    "remaining_undiscounted_usd",
    "us_gaap_loss",
]

STANDARDS = ("us_gaap", "ifrs")
"""Accounting standards of the impairment test."""

_TINY = 1e-9  # relative size under which a remaining depreciable amount counts as none


class ImpairmentError(InputError):
    """Invalid impairment input: names the argument, the value and what was expected."""


def _money(x, name: str, shape=None) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if shape is not None:
        try:
            a = np.broadcast_to(a, shape)
        except ValueError:
            raise ImpairmentError(f"{name} must have shape {shape}, got {a.shape}") from None
    if not np.all(np.isfinite(a)):
        raise ImpairmentError(f"{name} must hold finite amounts [USD]")
    return a


def _standard(standard, n: int) -> np.ndarray:
    """True for IFRS rows, False for US GAAP rows."""
    names = np.broadcast_to(np.asarray(standard, dtype=object), (n,))
    unknown = [s for s in set(names.tolist()) if s not in STANDARDS]
    if unknown:
        raise ImpairmentError(
            f"unknown impairment standard {unknown[0]!r}; valid standards: {', '.join(STANDARDS)}"
        )
    return names == "ifrs"


# ---------------------------------------------------------------------------------------------
# indicator and cash-flow measures
# ---------------------------------------------------------------------------------------------


def price_drop_trigger(price, threshold, in_service_month=1):
    """Months in which a market price has fallen by at least ``threshold`` [bool, array (n, T)].

    The indicator of ASC 360-10-35-21(a) and IAS 36.12(a)-(b): the price of month ``m`` is at most
    ``(1 - threshold)`` times the price in the in-service month ``s``. Months before ``s`` never
    trigger.

    Parameters
    ----------
    price : array (n, T)  market price path: token price, GPU rental price or asset value [any]
    threshold : array (n,)  fall that triggers a test, e.g. 0.3 for a 30% drop [fraction, 0..1)
    in_service_month : array (n,)  [month index]
    """
    p = np.asarray(price, dtype=float)
    if p.ndim != 2:
        raise ImpairmentError(f"price must be an array (n, T), got shape {p.shape}")
    n, t = p.shape
    th = np.broadcast_to(np.asarray(threshold, dtype=float), (n,))
    if np.any(~((th > 0) & (th < 1))):
        bad = th[~((th > 0) & (th < 1))][0]
        raise ImpairmentError(
            f"price drop threshold = {bad:g}: expected a fall from above 0 to below 1 [fraction]"
        )
    s = np.broadcast_to(np.asarray(in_service_month), (n,)).astype(np.int64)
    if np.any((s < 0) | (s >= t)):
        raise ImpairmentError(
            f"in_service_month = {int(s[(s < 0) | (s >= t)][0])}: expected a month within the "
            f"price path (0..{t - 1})"
        )
    reference = p[np.arange(n), s]
    months = np.arange(t)[None, :]
    return (months >= s[:, None]) & (p <= (1.0 - th)[:, None] * reference[:, None])


def _flows(cash_flow_usd, disposal_usd):
    """The operating cash flows and disposal proceeds as arrays (n, T) [USD]."""
    cf = _money(cash_flow_usd, "cash_flow_usd")
    if cf.ndim != 2:
        raise ImpairmentError(f"cash_flow_usd must be an array (n, T), got shape {cf.shape}")
    if disposal_usd is None:
        return cf, np.zeros(cf.shape)
    return cf, _money(disposal_usd, "disposal_usd", cf.shape)


def remaining_undiscounted_usd(cash_flow_usd, disposal_usd=None):
    """Undiscounted cash flows still to come at the end of each month [USD, array (n, T)].

    ``U_m = Σ_{j>m} cf_j + Σ_{j>=m} d_j``: the recoverability measure of ASC 360-10-35-17 at the
    end of month ``m``, after that month's operating cash flow. Disposal proceeds ``d`` are
    received when the asset is sold at the end of their month, after that month's test, so the
    test of the sale month still counts them: the remaining use ends in the disposal (35-17,
    35-29). Without them the sale month's test would find nothing to recover and write the
    asset off, only for the sale to book its whole price as a gain.

    Parameters
    ----------
    cash_flow_usd : array (n, T)  operating cash flows of each month [USD]
    disposal_usd : array (n, T), optional  proceeds of the disposal in the month of the sale [USD]
    """
    cf, disposal = _flows(cash_flow_usd, disposal_usd)
    return remaining_sum_months(cf) - cf + remaining_sum_months(disposal)


def remaining_present_value_usd(cash_flow_usd, rate_monthly, disposal_usd=None):
    """Present value at the end of each month of the cash flows still to come [USD, array (n, T)].

    ``V_m = Σ_{j>m} cf_j (1 + i)^-(j - m) + Σ_{j>=m} d_j (1 + i)^-(j - m)``, computed backwards
    as ``V_m = (V_{m+1} + cf_{m+1}) / (1 + i) + d_m``: value in use (IAS 36.30-31, with the net
    disposal proceeds of 36.39(c) and 36.52) or a discounted-cash-flow fair value (ASC
    820-10-55-5). Disposal proceeds count from the end of their own month on, as in
    `remaining_undiscounted_usd`.

    Parameters
    ----------
    cash_flow_usd : array (n, T)  operating cash flows of each month [USD]
    rate_monthly : array (n,)  discount rate [1/month, > -1]
    disposal_usd : array (n, T), optional  proceeds of the disposal in the month of the sale [USD]
    """
    cf, disposal = _flows(cash_flow_usd, disposal_usd)
    n, t = cf.shape
    i = np.broadcast_to(np.asarray(rate_monthly, dtype=float), (n,))
    if np.any(~(i > -1)):
        raise ImpairmentError(f"rate_monthly = {float(i[~(i > -1)][0]):g}: expected above -1")
    value = disposal.copy()  # the last month's value: its own disposal
    for m in range(t - 2, -1, -1):  # a loop over months, vectorized over scenarios
        value[:, m] += (value[:, m + 1] + cf[:, m + 1]) / (1.0 + i)
    return value


# ---------------------------------------------------------------------------------------------
# the tests, one date at a time
# ---------------------------------------------------------------------------------------------


def us_gaap_loss(carrying_amount_usd, undiscounted_cash_flows_usd, fair_value_usd):
    """US GAAP impairment loss of a long-lived asset held and used [USD, >= 0].

    Step 1 (recoverability): impaired only if the carrying amount exceeds the undiscounted cash
    flows. Step 2 (measurement): the loss is the carrying amount less fair value, if positive.

    References
    ----------
    ASC 360-10-35-17.
    """
    carrying = np.asarray(carrying_amount_usd, dtype=float)
    undiscounted = np.asarray(undiscounted_cash_flows_usd, dtype=float)
    fair = np.asarray(fair_value_usd, dtype=float)
    return np.where(carrying > undiscounted, np.maximum(carrying - fair, 0.0), 0.0)


def ifrs_loss(
    carrying_amount_usd,
    fair_value_less_costs_usd,
    value_in_use_usd,
    carrying_without_impairment_usd=None,
):
    """IFRS impairment loss (positive) or reversal (negative) [USD].

    Recoverable amount ``R = max(fair value less costs of disposal, value in use)`` (IAS 36.18).
    A loss ``carrying - R`` when positive (IAS 36.59). Given the carrying amount the asset would
    have had without any impairment, a reversal ``carrying - min(R, that amount)`` when negative
    (IAS 36.117); without it no reversal is computed.
    """
    carrying = np.asarray(carrying_amount_usd, dtype=float)
    recoverable = np.maximum(
        np.asarray(fair_value_less_costs_usd, dtype=float),
        np.asarray(value_in_use_usd, dtype=float),
    )
    loss = np.maximum(carrying - recoverable, 0.0)
    if carrying_without_impairment_usd is None:
        return loss
    ceiling = np.asarray(carrying_without_impairment_usd, dtype=float)
    reversal = np.minimum(carrying - np.minimum(recoverable, ceiling), 0.0)
    return np.where(loss > 0, loss, reversal)


# ---------------------------------------------------------------------------------------------
# the schedule with impairment
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImpairmentResult:
    """Book schedule after impairment tests.

    Attributes
    ----------
    month : int array (n,)  first month with an impairment loss; -1 if none
    loss_usd : array (n,)  that first loss [USD]
    net_loss_usd : array (n,)  all losses less reversals [USD]
    impairment_usd : array (n, T)  loss of each month, negative for a reversal (IFRS) [USD]
    depreciation_usd : array (n, T)  depreciation after the impairments [USD]
    carrying_amount_usd : array (n, T)  book value at the end of each month [USD]
    """

    month: np.ndarray
    loss_usd: np.ndarray
    net_loss_usd: np.ndarray
    impairment_usd: np.ndarray
    depreciation_usd: np.ndarray
    carrying_amount_usd: np.ndarray


def impair(
    depreciation_usd,
    cost_usd,
    salvage_usd,
    standard,
    trigger,
    fair_value_usd,
    undiscounted_usd=None,
    value_in_use_usd=None,
    costs_of_disposal_usd=0.0,
) -> ImpairmentResult:
    """Apply US GAAP or IFRS impairment tests month by month to a book schedule.

    In each month (after that month's depreciation):

    * US GAAP rows are tested where ``trigger`` holds: if the carrying amount exceeds
      ``undiscounted_usd`` and fair value, it is written down to fair value.
    * IFRS rows are tested where ``trigger`` holds: if the carrying amount exceeds the
      recoverable amount ``max(fair value - costs of disposal, value in use)`` it is written down
      to it. In months without the indicator, after an impairment, a loss is reversed as far as
      the recoverable amount allows, up to the carrying amount without impairment.

    Parameters
    ----------
    depreciation_usd : array (n, T)  book schedule without impairment, summing to at most
        ``cost - salvage`` [USD]
    cost_usd, salvage_usd : arrays (n,)  [USD]
    standard : str or array (n,) of str  "us_gaap" or "ifrs"
    trigger : bool array (n, T)  months with an impairment indicator (see price_drop_trigger)
    fair_value_usd : array (n, T)  fair value of the asset at the end of each month [USD]
    undiscounted_usd : array (n, T)  undiscounted remaining cash flows (US GAAP rows) [USD]
    value_in_use_usd : array (n, T)  present value of remaining cash flows (IFRS rows) [USD]
    costs_of_disposal_usd : array (n, T) or (n,)  costs to sell (IFRS) [USD]

    Returns
    -------
    ImpairmentResult
    """
    dep = _money(depreciation_usd, "depreciation_usd")
    if dep.ndim != 2:
        raise ImpairmentError(f"depreciation_usd must be an array (n, T), got shape {dep.shape}")
    n, t = dep.shape
    cost = _money(cost_usd, "cost_usd", (n,))
    salvage = _money(salvage_usd, "salvage_usd", (n,))
    if np.any(cost < 0):
        raise ImpairmentError(f"cost_usd = {cost[cost < 0][0]:g}: expected at least 0 [USD]")
    if np.any((salvage < 0) | (salvage > cost)):
        bad = salvage[(salvage < 0) | (salvage > cost)][0]
        raise ImpairmentError(f"salvage_usd = {bad:g}: expected from 0 to the cost [USD]")
    ifrs = _standard(standard, n)
    trig = np.broadcast_to(np.asarray(trigger, dtype=bool), (n, t))
    fair = _money(fair_value_usd, "fair_value_usd", (n, t))
    gaap_rows = ~ifrs & trig.any(axis=1)
    if gaap_rows.any() and undiscounted_usd is None:
        raise ImpairmentError("US GAAP rows need undiscounted_usd, the remaining cash flows")
    if ifrs.any() and value_in_use_usd is None:
        raise ImpairmentError(
            "IFRS rows need value_in_use_usd, the discounted remaining cash flows"
        )
    undiscounted = (
        np.full((n, t), np.inf)
        if undiscounted_usd is None
        else _money(undiscounted_usd, "undiscounted_usd", (n, t))
    )
    in_use = (
        np.full((n, t), -np.inf)
        if value_in_use_usd is None
        else _money(value_in_use_usd, "value_in_use_usd", (n, t))
    )
    costs = _money(costs_of_disposal_usd, "costs_of_disposal_usd")
    costs = np.broadcast_to(costs if costs.ndim != 1 else costs[:, None], (n, t))

    base = cumsum_months(dep)
    carrying0 = cost[:, None] - base  # without impairment
    factor = np.ones((n, t))
    impairment = np.zeros((n, t))
    rows = np.flatnonzero(trig.any(axis=1))
    if rows.size:
        k = np.ones(rows.size)
        rho = salvage[rows].copy()
        s = salvage[rows]
        impaired = np.zeros(rows.size, dtype=bool)
        is_ifrs = ifrs[rows]
        for m in range(t):  # a loop over months, vectorized over the rows with an indicator
            c0 = carrying0[rows, m]
            room = c0 - s
            before = rho + k * room
            fv = fair[rows, m]
            test = trig[rows, m]
            # IFRS: the loss (> 0) or reversal (< 0) of IAS 36 as ifrs_loss defines it.
            ifrs_change = ifrs_loss(before, fv - costs[rows, m], in_use[rows, m], c0)
            # A write-down or reversal of less than half a cent is rounding, not an event: a
            # carrying amount that follows fair value after a write-down (straight line down a
            # linear market value table) tested 2.3e-10 USD above it and booked that as a loss.
            gaap_loss = (before - fv >= HALF_CENT_USD) & (before > undiscounted[rows, m])
            loss = test & np.where(is_ifrs, ifrs_change >= HALF_CENT_USD, gaap_loss)
            reverse = is_ifrs & ~test & impaired & (ifrs_change <= -HALF_CENT_USD)
            target = np.where(is_ifrs, before - ifrs_change, fv)
            target = np.maximum(target, 0.0)
            event = loss | reverse
            new_rho = np.where(event, np.minimum(s, target), rho)
            with np.errstate(divide="ignore", invalid="ignore"):
                new_k = np.where(
                    room > _TINY * np.maximum(cost[rows], 1.0),
                    np.clip((target - new_rho) / room, 0.0, 1.0),
                    0.0,
                )
            k_next = np.where(event, new_k, k)
            rho = new_rho
            after = rho + k_next * room
            change = before - after
            # a loss never raises the carrying amount: where the write-down is within rounding
            # of nothing (a US GAAP test at the end of the life, room ~ 0) the difference was
            # -8.6e-10 USD, reported as "0 USD of it reversed later"
            impairment[rows, m] = np.where(
                loss, np.maximum(change, 0.0), np.where(reverse, change, 0.0)
            )
            impaired |= loss
            # The month's depreciation ran at the factor in force before the test.
            factor[rows, m] = k
            k = k_next
    depreciation = factor * dep
    carrying = cost[:, None] - cumsum_months(depreciation + impairment)
    losses = impairment > 0
    first = np.where(losses.any(axis=1), np.argmax(losses, axis=1), -1)
    first_loss = np.where(first >= 0, impairment[np.arange(n), np.maximum(first, 0)], 0.0)
    return ImpairmentResult(
        month=first,
        loss_usd=first_loss,
        net_loss_usd=impairment.sum(axis=1),
        impairment_usd=impairment,
        depreciation_usd=depreciation,
        carrying_amount_usd=carrying,
    )
