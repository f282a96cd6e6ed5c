"""Cases that stress a committed loan: the base case's sized debt held, not sized again.

A lender stresses the loan it is asked to make, not the loan each case could carry. Where the
base case sizes financing.debt_share's loan (to a minimum DSCR, a maximum LTV, or sculpted to its
cash flow), a case holds that loan: debt_share becomes the sized debt over capex, sizing is
switched off, and a sculpted loan keeps the base case's closing balances as a
financing.balance_schedule (a level-payment loan keeps its level schedule). The case's own
cash flow then meets the base case's debt service, so its DSCR is the committed loan's cover.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

LOAN_TERMS = (
    "financing.debt_share",
    "financing.size_to_min_dscr",
    "financing.max_ltv",
    "financing.repayment",
    "financing.balance_schedule",
    "financing.debt_term_months",
    "financing.tranches",
)
"""Paths a case may set to choose its own loan: such a case is sized as it says, not held."""


def committed_loan(scenario, summary: Mapping, balance_usd: Sequence[float]) -> dict | None:
    """The financing fields that hold the base case's sized loan, or None where it sizes none.

    Parameters
    ----------
    scenario : econ.scenario.Scenario  the base case
    summary : its summary (``debt_usd``, ``capex_usd_total``)
    balance_usd : its monthly ``debt_balance_usd``, month 0 first [USD]
    """
    financing = scenario.financing
    sized = (
        financing.size_to_min_dscr is not None
        or financing.max_ltv is not None
        or financing.repayment == "sculpted"
    )
    if financing.tranches or not sized:
        return None
    debt, capex = float(summary["debt_usd"]), float(summary["capex_usd_total"])
    fields: dict = {
        "debt_share": debt / capex if capex > 0 else 0.0,
        "size_to_min_dscr": None,
        "max_ltv": None,
    }
    if financing.repayment == "sculpted":
        closing = np.asarray(balance_usd, dtype=float)[1:] / debt if debt > 0 else np.zeros(1)
        owed = np.flatnonzero(closing > 0)
        end = int(owed[-1]) + 2 if owed.size else 1  # through the first month owing nothing
        if end > closing.size:  # (a sculpted loan is repaid within the horizon)
            return None
        fields["repayment"] = "balance_schedule"
        fields["balance_schedule"] = [float(b) for b in closing[:end]]
    return fields


def holds(overrides: Sequence[str]) -> bool:
    """Whether a case with these overrides (PATH=VALUE) holds the base case's loan: unless it
    sets the loan's own terms (LOAN_TERMS)."""
    paths = {item.split("=", 1)[0].strip() for item in overrides}
    return not any(
        path == term or path.startswith(term + ".") for path in paths for term in LOAN_TERMS
    )


def hold(data: Mapping, fields: Mapping) -> dict:
    """Scenario data (a plain dict) with the financing fields of `committed_loan` put in."""
    out = dict(data)
    financing = dict(out.get("financing", {}))
    for name, value in fields.items():
        if value is None:
            financing.pop(name, None)
        else:
            financing[name] = value
    out["financing"] = financing
    return out


__all__ = ["LOAN_TERMS", "committed_loan", "hold", "holds"]
