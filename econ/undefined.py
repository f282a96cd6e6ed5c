"""Why a summary metric is null: every undefined figure carries its reason into the warnings.

A summary metric that cannot be computed for a scenario is NaN in `Projection.metrics` and null in
every output, and a warning names its key and says why (docs/glossary.md, "Summary keys"). The
engine's own warnings explain the common cases (no tokens, no IRR, no debt, ...); this module fills
in the rest from one table of reasons, so that no null goes unexplained, and turns infinities from
inputs that overflow floating point into nulls with a warning of their own (outputs are strict JSON:
no inf, no NaN).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

REASONS: dict[str, str] = {
    "lcot_usd_per_mtok": "the present value of tokens is not positive (no tokens served)",
    "tokens_total": "no tokens could be counted",
    "lcot_usd_per_mtok_all_tokens": "the present value of input and output tokens is not "
    "positive (no tokens served), or the input tokens per output token are unknown "
    "(throughput.input_tokens_per_output_token)",
    "input_tokens_total": "the input tokens per output token are unknown "
    "(throughput.input_tokens_per_output_token)",
    "npv_usd": "the project cash flows could not be discounted",
    "npv_equity_usd": "the equity cash flows could not be discounted",
    "npv_usd_per_gpu": "no GPUs, or no NPV",
    "npv_usd_per_rack": "no racks, or no NPV",
    "irr_project_annual": "the project cash flows have no internal rate of return",
    "irr_equity_annual": "the equity cash flows have no internal rate of return",
    "payback_months": "the cumulative project cash flow never turns positive within the horizon",
    "breakeven_price_usd_per_mtok": "no token price sets the NPV to zero",
    "min_dscr": "no month has debt service to cover",
    "min_llcr": "no month has debt outstanding to cover",
    "moic_equity": "the equity put in is at most 5% of capex (MIN_EQUITY_SHARE_FOR_IRR), too little to judge",
    "first_breach_month": "no covenant is breached",
    "cost_of_debt_annual": "there is no debt, so no cost of debt",
    "wacc_after_tax_annual": "the capital has no cost to weigh (no debt and no equity cost)",
    "dilution_shares": "an equity tranche issues shares with no share price to count them by "
    "(its reference_share_price_usd is not set)",
    "accounting_cost_usd_per_mtok": "no tokens are served",
    "tokens_per_s_per_mw": "the fleet draws no power",
    "tokens_per_s_per_mw_it": "the fleet draws no IT power",
    "tokens_per_s_per_mw_utility": "the fleet draws no utility power",
    "revenue_usd_per_mw_year": "the fleet draws no power",
    "revenue_usd_per_mw_year_utility": "the fleet draws no utility power",
    "revenue_usd_per_rack_year": "the fleet has no racks",
    "revenue_usd_per_m2_year": "the fleet takes no floor space",
    "joules_per_token_it": "no tokens are served",
    "joules_per_token_utility": "no tokens are served",
    "power_cost_usd_per_mtok": "no tokens are served",
    "mirr_project_annual": "the project cash flows lack an inflow or an outflow",
    "mirr_equity_annual": "the equity cash flows lack an inflow or an outflow, or equity is too "
    "thin to judge",
    "profitability_index": "there is no capital expenditure to divide by",
    "dscr_headroom": "there is no debt service or no DSCR covenant (financing.covenants.dscr_floor)",
    "months_of_headroom": "there is no debt service or no DSCR covenant "
    "(financing.covenants.dscr_floor)",
    "cost_usd_per_gpu_hour": "no GPU is in service (the present value of GPU-hours is 0)",
    **{
        f"cost_usd_per_gpu_hour_{part}": "no GPU is in service (the present value of GPU-hours "
        "is 0)"
        for part in ("depreciation", "financing", "power", "facility", "opex")
    },
    **{
        key: "the scenario gives no market rental price (market.rental_usd_per_gpu_hour, "
        "rental_table or rental_series) in its first year in service"
        for key in (
            "rental_earnings_usd_per_gpu_year",
            "resale_loss_usd_per_gpu_year",
            "rental_resale_spread_usd_per_gpu_year",
        )
    },
}
"""Reason a metric is null when the engine gave none: metric key -> why."""

OVERFLOW = (
    "the inputs overflow floating point (a value too large or too small for the arithmetic to "
    "stay finite); check the scenario's extreme values"
)


def mask_infinite(metrics: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Set every ±inf of the metric arrays to NaN in place; key -> rows that were infinite."""
    overflowed = {}
    for key, values in metrics.items():
        values = np.asarray(values)
        if values.dtype.kind != "f":
            continue
        bad = np.isinf(values)
        if bad.any():
            values[bad] = np.nan
            overflowed[key] = bad
    return overflowed


def explain(
    warnings: Sequence[list[str]],
    metrics: Mapping[str, np.ndarray],
    overflowed: Mapping[str, np.ndarray] | None = None,
    components: Mapping[str, np.ndarray] | None = None,
) -> list[list[str]]:
    """`warnings` with one more line per reason for every null metric that no warning names.

    Parameters
    ----------
    warnings : per scenario, the warnings so far
    metrics : key -> array (n,) of summary metrics, NaN where undefined
    overflowed : key -> bool array (n,), rows whose value was infinite (see `mask_infinite`)
    components : component -> array (n,) of the levelized cost's parts (named together as
        cost_usd_per_mtok_by_component)
    """
    overflowed = overflowed or {}
    nulls = {key: np.isnan(np.asarray(v, dtype=float)) for key, v in metrics.items()}
    if components:
        parts = np.column_stack([np.asarray(v, dtype=float) for v in components.values()])
        nulls["cost_usd_per_mtok_by_component"] = np.isnan(parts).any(axis=1)
    out = [list(w) for w in warnings]
    if not nulls:
        return out
    keys = list(nulls)
    null = np.column_stack([nulls[key] for key in keys])
    rows = np.flatnonzero(null.any(axis=1))
    if not rows.size:
        return out
    # NaN downstream of an overflow (inf - inf) is the overflow's doing as well.
    overflow = np.zeros(len(out), bool)
    for flagged in overflowed.values():
        overflow |= np.asarray(flagged, bool)
    # Rows with the same null keys, overflow and keys their warnings name get the same lines:
    # each such case is worded once (a batch of 100,000 scenarios has a handful).
    packed = np.packbits(null[rows], axis=1)
    width = packed.shape[1]
    packed_bytes = packed.tobytes()
    null_keys: dict[bytes, tuple[str, ...]] = {}
    worded: dict[tuple, list[str]] = {}
    named_in: dict[bytes, dict[str, tuple[str, ...]]] = {}
    overflowed_rows = overflow[rows].tolist()
    for j, (i, overflowed_i) in enumerate(zip(rows.tolist(), overflowed_rows, strict=True)):
        pattern = packed_bytes[j * width : (j + 1) * width]
        keys_null = null_keys.get(pattern)
        if keys_null is None:
            keys_null = null_keys[pattern] = tuple(
                key for key, is_null in zip(keys, null[i], strict=True) if is_null
            )
        # A key (a name, no space in it) is a whole name in the row's messages where it is one in
        # one of them; each message is read once for the null keys of its rows (most messages
        # recur across rows: their texts quote no figure, or the same ones).
        named: set[str] = set()
        known = named_in.get(pattern)
        if known is None:
            known = named_in[pattern] = {}
        for message in out[i]:
            found = known.get(message)
            if found is None:
                found = known[message] = tuple(
                    key for key in keys_null if key in message and _named(key, message)
                )
            named.update(found)
        case = (pattern, overflowed_i, frozenset(named))
        lines = worded.get(case)
        if lines is None:
            lines = worded[case] = _reasons([k for k in keys_null if k not in named], overflowed_i)
        out[i].extend(lines)
    return out


def _reasons(keys: Sequence[str], overflow: bool) -> list[str]:
    """One line per reason naming the null `keys` it explains, in the order of `keys`."""
    by_reason: dict[str, list[str]] = {}
    for key in keys:
        if overflow:
            reason = OVERFLOW
        elif key == "cost_usd_per_mtok_by_component":
            reason = REASONS["lcot_usd_per_mtok"]
        else:
            reason = REASONS.get(key, "it is not defined for this scenario's inputs")
        by_reason.setdefault(reason, []).append(key)
    return [
        f"{', '.join(named)} {'is' if len(named) == 1 else 'are'} null: {reason}"
        for reason, named in by_reason.items()
    ]


def _named(key: str, text: str) -> bool:
    """Whether `key` stands in `text` as a whole name (not as part of a longer key)."""
    start = text.find(key)
    while start >= 0:
        end = start + len(key)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(key, end)
    return False
