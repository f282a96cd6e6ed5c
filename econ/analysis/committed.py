"""Cases that stress a committed loan: the base case's sized debt held, not sized again.

A lender stresses the loan it is asked to make, not the loan each case could carry. Where the
base case sizes financing.debt_share's loan (to a minimum DSCR, a maximum LTV, or sculpted to its
cash flow), a case holds that loan: financing.debt_usd becomes the sized debt (the dollars
committed, whatever the case's capex), sizing is switched off, and a sculpted loan keeps the base case's closing balances as a
financing.balance_schedule (a level-payment loan keeps its level schedule). A sized capital
stack (financing.tranches) is held likewise: the sizing scales every debt tranche by one
factor, and the held stack is the tranches so scaled, sizing off. The case's own cash flow
then meets the base case's debt service, so its DSCR is the committed loan's cover.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

LOAN_TERMS = (
    "financing.debt_share",
    "financing.debt_usd",
    "financing.size_to_min_dscr",
    "financing.max_ltv",
    "financing.repayment",
    "financing.balance_schedule",
    "financing.debt_term_months",
    "financing.tranches",
)
"""Paths a case may set to choose its own loan: such a case is sized as it says, not held."""


def sizes_loan(financing) -> bool:
    """Whether financing.debt_share's loan is sized (to a minimum DSCR, a maximum LTV, or
    sculpted to the cash flow) rather than given."""
    return (
        financing.size_to_min_dscr is not None
        or financing.max_ltv is not None
        or financing.repayment == "sculpted"
    )


def committed_loan(scenario, summary: Mapping, balance_usd: Sequence[float]) -> dict | None:
    """The financing fields that hold the base case's sized loan, or None where it sizes none.

    Parameters
    ----------
    scenario : econ.scenario.Scenario  the base case
    summary : its summary (``debt_usd``, ``capex_usd_total``)
    balance_usd : its monthly ``debt_balance_usd``, month 0 first [USD]
    """
    financing = scenario.financing
    if not sizes_loan(financing):
        return None
    if financing.tranches:
        return _held_stack(scenario, float(summary["debt_usd"]))
    debt = float(summary["debt_usd"])
    fields: dict = {"debt_usd": debt, "debt_share": None, "size_to_min_dscr": None, "max_ltv": None}
    if financing.repayment == "sculpted":
        closing = np.asarray(balance_usd, dtype=float)[1:] / debt if debt > 0 else np.zeros(1)
        owed = np.flatnonzero(closing > 0)
        end = int(owed[-1]) + 2 if owed.size else 1  # through the first month owing nothing
        if end > closing.size:  # (a sculpted loan is repaid within the horizon)
            return None
        fields["repayment"] = "balance_schedule"
        fields["balance_schedule"] = [float(b) for b in closing[:end]]
    return fields


def loan_terms(paths: Iterable[str]) -> list[str]:
    """The paths among `paths` that set the loan's own terms (LOAN_TERMS), in their order."""
    return [
        path
        for path in paths
        if any(path == term or path.startswith(term + ".") for term in LOAN_TERMS)
    ]


def sized_loan(scenario) -> tuple[dict, dict | None]:
    """The scenario projected once: its summary, and the fields that hold its sized loan
    (`committed_loan`; None where it sizes none)."""
    from econ.engine import project

    projection = project([scenario])
    summary = projection.summary_records()[0]["summary"]
    return summary, committed_loan(scenario, summary, projection.lines["debt_balance_usd"][0])


def _held_stack(scenario, debt_usd: float) -> dict:
    """The financing fields that hold a sized capital stack: each debt tranche's amount (or share
    of capex) times the one factor the sizing applied to all of them (econ.engine._finance), the
    sized debt over the debt of the stack as given; a factor of 0 leaves the debt tranches out."""
    from econ.engine import project
    from econ.scenario import scenario_to_dict, validate_dict

    data = scenario_to_dict(scenario)
    unsized = validate_dict(hold(data, {"size_to_min_dscr": None, "max_ltv": None}))
    given = float(project([unsized]).metrics["debt_usd"][0])
    scale = min(debt_usd / given, 1.0) if given > 0 else 1.0
    tranches = []
    for tranche in data["financing"]["tranches"]:
        if tranche["type"] != "equity":
            if scale == 0:
                continue
            tranche = {
                key: value * scale if key in ("amount_usd", "share_of_capex") else value
                for key, value in tranche.items()
            }
        tranches.append(tranche)
    return {"tranches": tranches, "size_to_min_dscr": None, "max_ltv": None}


def holds(overrides: Sequence[str]) -> bool:
    """Whether a case with these overrides (PATH=VALUE) holds the base case's loan: unless it
    sets the loan's own terms (LOAN_TERMS)."""
    return not loan_terms(item.split("=", 1)[0].strip() for item in overrides)


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


def hold_job(job):
    """A batch job whose scenarios hold its base case's sized loan, and a note of what is held.

    The base is projected once; where it sizes financing.debt_share's loan, every scenario of
    the job borrows that loan (`committed_loan`): the same dollars whatever its capex (the loan
    the lender commits, at most the scenario's capex), on the base case's level schedule or
    sculpted closing balances. Each
    scenario's DSCR is then the committed loan's cover under its own inputs: a stress test of the
    loan, where a plain run asks what loan each scenario could carry. Where the base sizes no
    loan, nothing changes (every scenario already borrows its debt_share of capex as given).

    A capital stack (financing.tranches) sized by a covenant is held likewise: its debt tranches
    scaled by the base's sizing factor, sizing off (`_held_stack`).

    Raises BatchInputError where the job varies the loan's own terms (LOAN_TERMS), or its sized
    loan cannot be held (a sculpted loan not repaid within the horizon, a balance schedule the
    scenario refuses).

    Returns
    -------
    (job, held) : the job (a copy with the held base, or the job itself) and a dict: ``note``
        (a sentence), and where a loan is held ``debt_usd``, ``repayment`` and,
        for a sculpted loan, ``schedule_months``.
    """
    base = job.base
    loan, held = held_loan(base, loan_terms(job.inputs(0, min(job.n, 1))))
    if loan is None:
        return job, held
    return _with_base(job, holding(base, loan, f"{base.name} holding its loan")), held


def holding(scenario, loan: Mapping, where: str):
    """The scenario (validated) with the loan fields of `committed_loan` put in; BatchInputError
    where it refuses them (`where` names the scenario in the message)."""
    from econ.analysis.validation import BatchInputError
    from econ.scenario import ScenarioError, scenario_to_dict, validate_dict

    try:
        return validate_dict(hold(scenario_to_dict(scenario), loan), file=where)
    except ScenarioError as exc:
        raise BatchInputError(f"holding the base case's loan: {exc}") from None


def held_loan(
    base, varied: Sequence[str], who: str = "every scenario", whose: str = "each scenario's"
) -> tuple[dict | None, dict]:
    """The fields that hold `base`'s sized loan (None where it sizes none) and a note of what
    is held (`hold_job`'s ``held``), for cases that set the inputs `varied`; `who` and `whose`
    name the cases in the note ("every scenario", "each scenario's").

    Raises BatchInputError where `varied` holds the loan's own terms (`loan_terms`), or the
    sized loan cannot be held (a sculpted loan not repaid within the horizon)."""
    from econ.analysis.validation import BatchInputError

    if varied:
        raise BatchInputError(
            f"holding the base case's loan, a run cannot vary the loan's own terms "
            f"({', '.join(varied)}): leave out --hold-debt to size each scenario's own loan"
        )
    financing = base.financing
    if not sizes_loan(financing):
        if financing.tranches:
            given = "capital stack's tranches"
        elif financing.debt_usd is not None:
            given = f"loan of {financing.debt_usd:,.0f} USD (at most its capex)"
        else:
            given = f"debt_share ({financing.debt_share:.1%}) of its own capex"
        note = (
            f"no loan to hold: {base.name} sizes no loan, and {who} borrows its {given} "
            "as given, as it would without holding a loan"
        )
        return None, {"note": note}
    summary, loan = sized_loan(base)
    if loan is None:
        raise BatchInputError(
            f"holding the base case's loan: {base.name}'s sculpted loan is not repaid within its "
            "horizon, so there are no closing balances to hold: leave out --hold-debt"
        )
    debt = float(summary["debt_usd"])
    if financing.tranches:
        held = {"debt_usd": debt, "tranches": [t["name"] for t in loan["tranches"]]}
        held["note"] = (
            f"{who} holds {base.name}'s sized capital stack ({debt:,.0f} USD of debt): "
            "each debt tranche scaled as the sizing scaled it (a tranche given as a share of "
            f"capex keeps that share of {whose} own capex); {whose} DSCR is that stack's cover"
        )
        return loan, held
    held = {"debt_usd": debt}
    if "balance_schedule" in loan:
        held["repayment"] = "balance_schedule"
        held["schedule_months"] = len(loan["balance_schedule"])
        how = f"on the sculpted schedule's closing balances ({held['schedule_months']} months)"
    else:
        held["repayment"] = financing.repayment
        how = {
            "level_payment": "on level payments",
            "balance_schedule": "on its financing.balance_schedule",
        }[financing.repayment]
    held["note"] = (
        f"{who} holds {base.name}'s sized loan: {debt:,.0f} USD whatever its capex (at "
        f"most its capex), {how}; {whose} DSCR is that loan's cover"
    )
    return loan, held


BREACH_PRICE_SPAN = 4.0
"""covenant_breach_price searches month-1 token prices from 0 to this multiple of the scenario's."""
BREACH_PRICE_STEPS = 64
"""Steps of each of covenant_breach_price's three grids (a step of 1/64^3 of the span at the end)."""


def covenant_breach_price(scenario, loan: Mapping | None = None) -> dict:
    """The month-1 token price below which the loan breaches a covenant: a lender's price cushion.

    The scenario holds its loan as sized (`loan`, from `committed_loan`, found here where not
    given; a loan that is not sized is the debt as given, which no price moves) and only
    ``market.price_usd_per_mtok`` moves, its decline path following.
    Prices from 0 to BREACH_PRICE_SPAN times the scenario's are projected on a grid of
    BREACH_PRICE_STEPS steps; the step from the highest price with a covenant breach
    (covenant_breach_months > 0) to the next is searched again on a grid of as many steps, twice:
    the price returned is the lowest price of the last grid above that highest breach, within
    1/64^3 of the span (1.5e-5 of the scenario's price) of where the breach ends. Where breaches
    come and go with the price (a tax payment month can fall as the price rises), lower prices
    may hold months without a breach: it is the price above which none was found.

    Returns
    -------
    dict: ``price_usd_per_mtok`` (None where there is no such price), ``base_usd_per_mtok``,
    ``cushion_share`` (1 - price / base price: how far the price may fall before a breach,
    negative where the scenario is in breach at its own price; None without a price) and
    ``reason`` (why there is none, else None).
    """
    from econ.batch import ScenarioBatch
    from econ.engine import project
    from econ.scenario import scenario_to_dict, validate_dict

    base_price = scenario.market.price_usd_per_mtok
    out = {
        "price_usd_per_mtok": None,
        "base_usd_per_mtok": base_price,
        "cushion_share": None,
        "reason": None,
    }
    covenants = scenario.financing.covenants
    if all(
        limit is None for limit in (covenants.dscr_floor, covenants.llcr_floor, covenants.ltv_ceiling)
    ):
        out["reason"] = "no covenant (financing.covenants) to breach"
        return out
    if not base_price:
        out["reason"] = "no month-1 token price (market.price_usd_per_mtok) to move"
        return out
    if loan is None and sizes_loan(scenario.financing):
        loan = sized_loan(scenario)[1]
    held = scenario if loan is None else validate_dict(hold(scenario_to_dict(scenario), loan))

    def breached(prices):
        batch = ScenarioBatch.repeat(held, len(prices), {"market.price_usd_per_mtok": prices})
        metrics = project(batch, monthly=False).metrics
        return metrics["covenant_breach_months"] > 0, metrics["debt_usd"]

    low, high = 0.0, BREACH_PRICE_SPAN * base_price
    for depth in range(3):
        prices = np.linspace(low, high, BREACH_PRICE_STEPS + 1)
        breach, debt = breached(prices)
        if depth == 0:
            if not np.any(debt > 0):
                out["reason"] = "no debt to breach a covenant"
                return out
            if breach[-1]:
                out["reason"] = (
                    f"a covenant is breached even at {BREACH_PRICE_SPAN:g} times the scenario's "
                    "price"
                )
                return out
            if not breach.any():
                out["reason"] = "no covenant is breached at any month-1 token price from 0"
                return out
        last = int(np.flatnonzero(breach)[-1])
        low, high = prices[last], prices[last + 1]
    out["price_usd_per_mtok"] = float(high)
    out["cushion_share"] = 1.0 - float(high) / base_price
    return out


def _with_base(job, base):
    out = copy.copy(job)
    out.base = base
    return out


__all__ = [
    "LOAN_TERMS",
    "committed_loan",
    "covenant_breach_price",
    "hold",
    "hold_job",
    "held_loan",
    "holding",
    "holds",
    "loan_terms",
    "sized_loan",
    "sizes_loan",
]
