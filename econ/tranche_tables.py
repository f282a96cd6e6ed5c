"""Per-tranche tables of a capital stack: each tranche's monthly lines and its summary.

econ.capital schedules every tranche of a capital stack (`stack_schedule`: its
`StackSchedule.tranches` lines and `tranche_metrics`) and sums them into the stack's lines, which
the monthly schedule shows (`interest_usd` is the stack's `interest_expense_usd`, ...). This module
only lays the tranches' own arrays out as frames, for the scenarios whose capital stack has
tranches (`financing.tranches`), so that a lender reads each tranche's draws, interest, fees,
principal and balance beside the totals they sum to. Nothing is computed again here: the summary
adds up the lines over each scenario's horizon and takes the balance's peak, nothing more.

A scenario whose debt is `financing.debt_share`'s loan (or that has no debt) has no tranche rows:
its loan is the monthly schedule's debt lines. Frames are indexed by (scenario, tranche, month)
and (scenario, tranche), scenarios in the projection's order and tranches in the file's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from econ.capital import LINES, StackSchedule

if TYPE_CHECKING:  # (pandas loads for the frames, not for a projection)
    import pandas as pd

TRANCHE_COLUMNS: dict[str, tuple[str, str]] = {
    "draw_usd": ("Drawn, face [USD]", "principal drawn or issued, at face"),
    "proceeds_usd": ("Proceeds [USD]", "cash received for the draws: face less issue discount"),
    "discount_usd": ("Issue discount [USD]", "original issue discount"),
    "fees_usd": (
        "Fees [USD]",
        "cash fees: upfront fees, commitment fees, at-the-market commissions",
    ),
    "commitment_fee_usd": (
        "Commitment fees [USD]",
        "fee on the undrawn commitment (part of the fees)",
    ),
    "capped_call_usd": ("Capped call premium [USD]", "premium of the capped calls bought at issue"),
    "cash_interest_usd": ("Cash interest [USD]", "interest and coupons paid"),
    "interest_expense_usd": (
        "Interest expense [USD]",
        "effective-interest expense: cash interest, amortized discount and issuance costs, "
        "commitment fees, and the unamortized costs written off on early repayment",
    ),
    "amortization_usd": (
        "Non-cash interest expense [USD]",
        "the interest expense less cash interest and commitment fees: issue discount and "
        "issuance costs amortized, the write-off on early repayment, and coupons accrued less "
        "coupons paid (negative in a coupon month, which pays what earlier months accrued); "
        "summed to a debt tranche's settlement, its issue discount and upfront fees",
    ),
    "extinguishment_usd": (
        "Write-off on repayment [USD]",
        "unamortized discount and costs written off to interest expense when the debt is "
        "repaid before its maturity (ASC 470-50-40-2)",
    ),
    "scheduled_principal_usd": ("Scheduled principal [USD]", "regular instalments"),
    "balloon_usd": ("Balloons and maturities [USD]", "bullet, balloon and maturity repayments"),
    "settlement_usd": (
        "Settled at the horizon [USD]",
        "what is still owed in the scenario's last month, repaid then",
    ),
    "principal_usd": (
        "Principal [USD]",
        "all cash principal: scheduled, balloons, maturities and the settlement",
    ),
    "converted_usd": ("Converted to shares [USD]", "face settled in shares"),
    "balance_usd": ("Balance, face [USD]", "face owed at the month's end"),
    "carrying_usd": (
        "Carrying amount [USD]",
        "balance net of unamortized discount and costs (ASC 835-30-45-1A)",
    ),
    "debt_service_usd": (
        "Debt service [USD]",
        "cash interest + commitment fees + scheduled principal (the DSCR's denominator)",
    ),
    "equity_issued_usd": ("Equity issued [USD]", "equity raised, gross"),
    "shares_issued": (
        "Shares issued [shares]",
        "new shares: on conversion net of the capped call, and sold by equity tranches",
    ),
    "rate_annual": (
        "Contractual rate [%/year]",
        "the debt's rate that month: fixed rate or coupon, or index + spread (floored); "
        "blank for equity",
    ),
}
"""The monthly lines of a tranche (econ.capital.LINES and its contractual rate): key -> (label
with unit, meaning)."""
TRANCHE_LINES = tuple(TRANCHE_COLUMNS)

STOCK_LINES = ("balance_usd", "carrying_usd", "rate_annual")
"""Lines that are a state at the month's end, not a flow: the summary does not add them up."""
FLOW_LINES = tuple(line for line in LINES if line not in STOCK_LINES)

TRANCHE_METRICS: dict[str, tuple[str, str]] = {
    "amount_usd": ("Amount [USD]", "commitment or face"),
    "drawn_usd": ("Drawn or issued [USD]", "face drawn or issued (equity: raised)"),
    "effective_rate_annual": (
        "Effective rate [%/year]",
        "effective-interest yield to the contractual maturity, issue discount and fees "
        "included; blank for equity",
    ),
    "max_balance_usd": ("Peak balance [USD]", "largest face owed at a month's end"),
    **{
        f"{line}_total": (
            TRANCHE_COLUMNS[line][0].replace(" [", ", total [", 1),
            f"{TRANCHE_COLUMNS[line][1]}, summed over months 0 to the horizon",
        )
        for line in FLOW_LINES
    },
    "settlement_month": (
        "Settlement month [month]",
        "convertible notes: the month they settle (maturity, or the horizon if earlier)",
    ),
    "share_price_at_settlement_usd": (
        "Share price at settlement [USD/share]",
        "convertible notes: the share price the conversion is decided at",
    ),
    "converted": (
        "Converted [1 or 0]",
        "convertible notes: 1 settled in shares (share price above the conversion price), "
        "0 repaid in cash",
    ),
    "gross_shares": ("Conversion shares [shares]", "convertible notes: shares owed on conversion"),
    "capped_call_shares": (
        "Capped call shares [shares]",
        "convertible notes: shares the capped call delivers back",
    ),
    "net_shares": (
        "Net conversion shares [shares]",
        "convertible notes: shares issued on conversion net of the capped call",
    ),
    "shares": ("Shares sold [shares]", "equity: shares sold (blank without a share price)"),
}
"""The summary of a tranche: econ.capital's `tranche_metrics`, the lines' sums over the horizon
and the peak balance: key -> (label with unit, meaning). A figure a tranche's kind has not (a
loan's conversion shares) is NaN."""

INDEX = ("scenario", "tranche", "month")
SUMMARY_INDEX = ("scenario", "tranche")


def present_rows(spec: Mapping, n: int) -> np.ndarray:
    """Scenarios (bool (n,)) whose capital stack has this compiled tranche: a scenario without
    it has an amount of 0 and no share of capex (econ.scenario.financing_models.compile_tranches),
    where a tranche given has an amount above 0, a share, or neither (equity that funds the
    rest)."""
    amount = np.broadcast_to(np.asarray(spec.get("amount_usd", np.nan), dtype=float), (n,))
    share = np.broadcast_to(np.asarray(spec.get("share_of_capex", np.nan), dtype=float), (n,))
    return ~((amount == 0.0) & np.isnan(share))


@dataclass(frozen=True)
class TrancheArrays:
    """The tranches of consecutive scenarios of a projection (a chunk's), as econ.capital
    scheduled them: what `tranche_frames` lays out. It holds the tranches' arrays and nothing
    else of the projection.

    Attributes
    ----------
    first : position of the first of these scenarios in the projection
    names, start_dates, horizons : arrays (n,)  name, month 0 (datetime64[M]), horizon
    tranches : (name, kind, present bool (n,)) per tranche, in the stack's order
    lines : tranche name -> line -> array (n, T+1)  (StackSchedule.tranches)
    metrics : tranche name -> metric -> array (n,)  (StackSchedule.tranche_metrics)
    """

    first: int
    names: np.ndarray
    start_dates: np.ndarray
    horizons: np.ndarray
    tranches: tuple[tuple[str, str, np.ndarray], ...]
    lines: Mapping[str, Mapping[str, np.ndarray]]
    metrics: Mapping[str, Mapping[str, np.ndarray]]

    def counts(self) -> np.ndarray:
        """How many tranches each of these scenarios has (int (n,))."""
        return sum((t[2].astype(np.int64) for t in self.tranches), np.zeros(len(self.names), int))

    def moved(self, offset: int) -> TrancheArrays:
        """The same tranches, their scenarios `offset` places later (a chunk joined after
        others)."""
        return replace(self, first=self.first + offset)


def tranche_arrays(
    names, start_dates, horizons, stack: StackSchedule, specs: Sequence[Mapping]
) -> TrancheArrays | None:
    """The tranches a batch of scenarios gives (`specs`, ScenarioBatch.stack, compiled from
    their files) as econ.capital scheduled them (`stack`); None where no scenario has one.
    Tranches the engine adds (financing.debt_share's loan, in a batch with tranches) are not
    among them: that loan is the monthly schedule's."""
    n = len(names)
    kept = tuple(
        (spec["name"], spec["type"], present_rows(spec, n))
        for spec in specs
        if spec["name"] in stack.tranches
    )
    if not any(t[2].any() for t in kept):
        return None
    return TrancheArrays(
        first=0,
        names=np.asarray(names, dtype=object),
        start_dates=np.asarray(start_dates, dtype="datetime64[M]"),
        horizons=np.asarray(horizons, dtype=np.int64),
        tranches=kept,
        lines={name: stack.tranches[name] for name, _, _ in kept},
        metrics={name: stack.tranche_metrics.get(name, {}) for name, _, _ in kept},
    )


def tranche_frames(chunks: Sequence[TrancheArrays]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The monthly table and the summary of the tranches of a projection's chunks.

    Returns
    -------
    monthly : frame indexed by (scenario, tranche, month), each scenario to its horizon: `kind`,
        `date`, TRANCHE_LINES
    summary : frame indexed by (scenario, tranche): `kind`, TRANCHE_METRICS

    Rows are in the projection's order of scenarios, then the stack's order of tranches, then
    months; one float block holds the lines, each gathered where its rows land (as
    Projection.monthly is built), so that the table is not copied again.
    """
    import pandas as pd

    names = np.concatenate([c.names for c in chunks] or [np.zeros(0, object)])
    codes, levels = pd.factorize(names, sort=True)
    tranche_names = list(dict.fromkeys(t[0] for c in chunks for t in c.tranches))
    kinds = np.array(
        [next(t[1] for c in chunks for t in c.tranches if t[0] == name) for name in tranche_names],
        dtype=object,
    )
    parts = []  # (chunk, its first name code, tranche, position, rows, months), rows in horizon
    summary_parts = []  # (chunk, tranche, position, rows)
    offset = 0
    for chunk in chunks:
        width = _width(chunk)
        in_horizon = np.arange(width)[None, :] <= chunk.horizons[:, None]
        for name, _, present in chunk.tranches:
            k = tranche_names.index(name)
            row, month = np.divmod(np.flatnonzero(in_horizon & present[:, None]), width)
            parts.append((chunk, offset, name, k, row, month))
            summary_parts.append((chunk, offset, name, k, np.flatnonzero(present), in_horizon))
        offset += len(chunk.names)
    monthly = _monthly_frame(parts, codes, levels, tranche_names, kinds)
    summary = _summary_frame(summary_parts, codes, levels, tranche_names, kinds)
    return monthly, summary


def _width(chunk: TrancheArrays) -> int:
    """Months 0..T of a chunk's lines."""
    return max(
        (np.shape(next(iter(lines.values())))[1] for lines in chunk.lines.values()), default=0
    )


def _joined(parts, dtype=np.int64) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def _monthly_frame(parts, codes, levels, tranche_names, kinds) -> pd.DataFrame:
    import pandas as pd

    place = _joined([p[0].first + p[4] for p in parts])
    month = _joined([p[5] for p in parts])
    j = _joined([np.full(len(p[4]), p[3]) for p in parts])
    sort = np.lexsort((month, j, place))
    lands = np.empty(len(sort), np.int64)
    lands[sort] = np.arange(len(sort))
    values = np.empty((len(TRANCHE_LINES), len(sort))).T
    code = np.empty(len(sort), np.int64)
    start = np.empty(len(sort), "datetime64[M]")
    first = 0
    for chunk, offset, name, _, row, m in parts:
        where, first = lands[first : first + len(row)], first + len(row)
        code[where] = codes[offset + row]
        start[where] = chunk.start_dates[row]
        for column, line in enumerate(TRANCHE_LINES):
            own = chunk.lines[name].get(line)
            values[where, column] = np.nan if own is None else np.asarray(own, float)[row, m]
    month, j = month[sort], j[sort]
    width = max((_width(p[0]) for p in parts), default=0)
    index = pd.MultiIndex(
        levels=[pd.Index(levels), pd.Index(tranche_names, dtype=object), pd.RangeIndex(width)],
        codes=[code, j, month],
        names=INDEX,
        verify_integrity=False,
    )
    frame = pd.DataFrame(values, index=index, columns=list(TRANCHE_LINES), copy=False)
    frame.insert(0, "date", (start + month.astype("timedelta64[M]")).astype("datetime64[D]"))
    frame.insert(0, "kind", kinds[j])
    return frame


def _summary_frame(parts, codes, levels, tranche_names, kinds) -> pd.DataFrame:
    import pandas as pd

    place = _joined([p[0].first + p[4] for p in parts])
    j = _joined([np.full(len(p[4]), p[3]) for p in parts])
    sort = np.lexsort((j, place))
    figures = {
        key: _joined(
            [
                _metric(key, chunk.lines[name], chunk.metrics[name], in_horizon)[rows]
                for chunk, _, name, _, rows, in_horizon in parts
            ],
            float,
        )[sort]
        for key in TRANCHE_METRICS
    }
    code = _joined([codes[p[1] + p[4]] for p in parts])[sort]
    j = j[sort]
    index = pd.MultiIndex(
        levels=[pd.Index(levels), pd.Index(tranche_names, dtype=object)],
        codes=[code, j],
        names=SUMMARY_INDEX,
        verify_integrity=False,
    )
    return pd.DataFrame({"kind": kinds[j], **figures}, index=index)


def _metric(key: str, lines, metrics, in_horizon) -> np.ndarray:
    """One summary figure of a tranche for every scenario (n,): a metric of econ.capital's, a
    line summed over the horizon, or the peak balance; NaN where its kind has none."""
    n = in_horizon.shape[0]
    if key in metrics:
        return np.asarray(metrics[key], dtype=float)
    if key == "max_balance_usd":
        return np.where(in_horizon, lines["balance_usd"], 0.0).max(axis=1, initial=0.0)
    if key.endswith("_total") and key.removesuffix("_total") in lines:
        return np.where(in_horizon, lines[key.removesuffix("_total")], 0.0).sum(axis=1)
    return np.full(n, np.nan)


__all__ = [
    "FLOW_LINES",
    "TRANCHE_COLUMNS",
    "TRANCHE_LINES",
    "TRANCHE_METRICS",
    "TrancheArrays",
    "present_rows",
    "tranche_arrays",
    "tranche_frames",
]
