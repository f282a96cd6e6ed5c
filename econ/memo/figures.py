"""The figures the investment memo shows, in one table: (summary key, label, unit, format).

A row whose key the engine does not compute (not in econ.engine.SUMMARY_COLUMNS) is left out, so
metrics the engine adds later (MIRR, profitability index, cost per GPU-hour, covenant headroom,
debt sized) appear in the memo as soon as the projection has them, with no change elsewhere.
`econ verify` formats the recomputed figures with the same rows, so what a memo shows is checked
against what this econ computes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from econ.engine import SUMMARY_COLUMNS
from econ.labels import count_in_words

Row = tuple[str, str, str, str]
WORDS = "words"
"""The format of a count written in words (econ.labels.count_in_words: "55.10 trillion")."""

HEADLINES: tuple[Row, ...] = (
    ("lcot_usd_per_mtok", "Levelized cost per million output tokens", "USD/Mtok", "{:,.4f}"),
    (
        "lcot_usd_per_mtok_all_tokens",
        "Levelized cost per million input and output tokens",
        "USD/Mtok",
        "{:,.4f}",
    ),
    ("cost_usd_per_gpu_hour", "Levelized cost per GPU-hour", "USD/GPU-h", "{:,.3f}"),
    ("breakeven_price_usd_per_mtok", "Break-even token price", "USD/Mtok", "{:,.4f}"),
    ("npv_usd", "NPV at the discount rate", "USD", "{:,.0f}"),
    ("npv_equity_usd", "Equity NPV at the cost of equity", "USD", "{:,.0f}"),
    ("profitability_index", "Profitability index", "x", "{:,.2f}"),
    ("irr_project_annual", "Project IRR", "per year", "{:.2%}"),
    ("mirr_project_annual", "Project MIRR", "per year", "{:.2%}"),
    ("irr_equity_annual", "Equity IRR", "per year", "{:.2%}"),
    ("mirr_equity_annual", "Equity MIRR", "per year", "{:.2%}"),
    ("moic_equity", "Equity multiple (MOIC)", "x", "{:,.2f}"),
    ("payback_months", "Payback", "months", "{:,.1f}"),
    ("min_dscr", "Minimum DSCR", "x", "{:,.2f}"),
    ("min_llcr", "Minimum LLCR", "x", "{:,.2f}"),
    ("dscr_headroom", "DSCR headroom over the covenant floor", "x", "{:+,.2f}"),
    ("llcr_headroom", "LLCR headroom over the covenant floor", "x", "{:+,.2f}"),
    ("covenant_breach_months", "Months in covenant breach", "months", "{:,.0f}"),
    ("first_breach_month", "First month in covenant breach", "month", "{:,.0f}"),
    ("debt_usd", "Debt raised", "USD", "{:,.0f}"),  # (debt_usd_total: the same figure)
    ("construction_interest_usd", "Interest capitalized during construction", "USD", "{:,.0f}"),
    ("debt_at_conversion_usd", "Debt owed when service starts", "USD", "{:,.0f}"),
    ("capex_usd_total", "Capex", "USD", "{:,.0f}"),
    ("revenue_usd_total", "Revenue over the horizon", "USD", "{:,.0f}"),
    ("output_token_revenue_usd_total", "Revenue from output tokens", "USD", "{:,.0f}"),
    ("input_token_revenue_usd_total", "Revenue from uncached input tokens", "USD", "{:,.0f}"),
    ("cached_input_token_revenue_usd_total", "Revenue from cached input tokens", "USD", "{:,.0f}"),
    ("ebitda_usd_total", "EBITDA over the horizon", "USD", "{:,.0f}"),
    ("tokens_total", "Output tokens over the horizon", "tokens", WORDS),
)
"""Every figure the memo's headline table can show, in the order shown."""

CASE_KEYS = (
    "lcot_usd_per_mtok",
    "cost_usd_per_gpu_hour",
    "npv_usd",
    "irr_project_annual",
    "mirr_project_annual",
    "irr_equity_annual",
    "npv_equity_usd",
    "payback_months",
    "min_dscr",
    "dscr_headroom",
    "covenant_breach_months",
    "debt_usd",
)
"""Headline keys shown for each case (base, downside, upside), same labels and formats. The
equity IRR beside the project's: the project NPV and IRR count the tax saved on interest, so a
case on a loan's rate moves them up; the equity IRR shows what the rate costs the equity, and the
equity NPV judges the equity where its IRR is n/a (the engine's warning points to it)."""

TORNADO_OUTPUT = "npv_usd"
TORNADO_FORMAT = "{:,.0f}"
RETURN_KEYS = (
    "irr_project_annual",
    "irr_equity_annual",
    "mirr_project_annual",
    "mirr_equity_annual",
)
"""Keys whose warnings (the return policy's: several roots, little equity) stand beside them."""


TOKEN_MIX_KEYS = (
    "lcot_usd_per_mtok_all_tokens",
    "output_token_revenue_usd_total",
    "input_token_revenue_usd_total",
    "cached_input_token_revenue_usd_total",
)
"""Rows shown only for a scenario that bills input tokens (the memo of an output-only scenario
keeps its length)."""

CONSTRUCTION_KEYS = ("construction_interest_usd", "debt_at_conversion_usd")
"""Rows shown only for a scenario that capitalizes interest during a construction period: the
debt raised is what is drawn, these what the lender is owed when service starts (elsewhere 0 and
the debt raised again, left out as `econ project`'s table leaves them out)."""


def builds(summary: Mapping | None) -> bool:
    """Whether `summary` capitalizes loan interest during a construction period."""
    return summary is not None and (summary.get("construction_interest_usd") or 0) > 0


def shown(rows: tuple[Row, ...] = HEADLINES, summary: Mapping | None = None) -> tuple[Row, ...]:
    """The rows whose metric the engine computes; the token mix's where `summary` bills input
    tokens, the construction loan's where it capitalizes interest (`builds`)."""
    mix = summary is not None and any(
        summary.get(key)
        for key in ("input_token_revenue_usd_total", "cached_input_token_revenue_usd_total")
    )
    left_out = (() if mix else TOKEN_MIX_KEYS) + (() if builds(summary) else CONSTRUCTION_KEYS)
    return tuple(row for row in rows if row[0] in SUMMARY_COLUMNS and row[0] not in left_out)


def case_rows(summary: Mapping | None = None) -> tuple[Row, ...]:
    """The rows of CASE_KEYS the engine computes, and the debt owed when service starts where
    the base case's `summary` capitalizes construction interest (`builds`): a case on the rate
    moves it, not the debt raised."""
    by_key = {row[0]: row for row in shown(summary=summary)}
    keys = CASE_KEYS + (("debt_at_conversion_usd",) if builds(summary) else ())
    return tuple(by_key[key] for key in keys if key in by_key)


BREACH_PRICE: Row = (
    "covenant_breach_price_usd_per_mtok",
    "Token price below which the loan breaches a covenant",
    "USD/Mtok",
    "{:,.4f}",
)
"""The memo's price cushion (`econ.analysis.committed.covenant_breach_price`): a figure of the
memo, not an engine metric, shown in the ask beside the financing. It is shown rounded up (at
0.144232 the text reads 0.1443, not 0.1442): "below this price a covenant is breached" must not
name a price that is itself in breach."""

RESIDUAL_NPV: Row = (
    "npv_without_sale_usd",
    "NPV with nothing sold at retirement or at the projection's end",
    "USD",
    "{:,.0f}",
)
"""The NPV without the residual value (`econ.memo.build.without_sale`): a figure of the memo, not
an engine metric, shown in the ask's residual value row where something is sold."""

ROUNDED_UP = (BREACH_PRICE[0],)
"""Figures shown rounded up to their last decimal, toward the side a lender can rely on."""


def format_of(figure_key: str) -> str:
    """Format of a figure key: `<case>.<metric>` or `tornado.<path>.<low|high|base>`."""
    if figure_key.startswith("tornado."):
        return TORNADO_FORMAT
    metric = figure_key.split(".", 1)[1]
    for key, _label, _unit, fmt in (*HEADLINES, BREACH_PRICE, RESIDUAL_NPV):
        if key == metric:
            return fmt
    raise KeyError(figure_key)


def format_figure(fmt: str, value) -> str:
    """The text a figure is shown as; n/a for an undefined metric."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if fmt == WORDS:
        return count_in_words(value)
    return fmt.format(value)


def figure_text(figure_key: str, value) -> str:
    """The text of a memo figure (`<case>.<metric>` or `tornado...`), rounded up where ROUNDED_UP
    says so (to the decimals of its format, e.g. 4 for "{:,.4f}")."""
    fmt = format_of(figure_key)
    if figure_key.split(".", 1)[-1] in ROUNDED_UP and value is not None and math.isfinite(value):
        decimals = int(fmt.split(".")[1].split("f")[0])
        scaled = value * 10.0**decimals
        # (a value on the grid to within the breach search's precision, 1e-9 relative, stays)
        value = math.ceil(scaled - 1e-9 * max(1.0, abs(scaled))) / 10.0**decimals
    return format_figure(fmt, value)


def breach_price_text(price_usd_per_mtok) -> str:
    """The price cushion's breach price as the memo shows it: rounded up to its fourth decimal
    (0.603745 reads 0.6038), so the price named is never itself in breach."""
    return figure_text(f"base.{BREACH_PRICE[0]}", price_usd_per_mtok)


def cushion_words(cushion_share: float, base_usd_per_mtok: float, base: str) -> str:
    """Where the breach price stands against the price it is the cushion of, as the memo says
    it: "1.9% under the base case's 0.3261", or, where that price is below the breach price,
    "85.1% above the base case's 0.3261, which is in breach".

    Parameters
    ----------
    cushion_share : float  1 - breach price / base price (`covenant_breach_price`); its
        negative is how far the breach price is above the base price [fraction]
    base_usd_per_mtok : float  the month-1 token price compared with [USD/M tokens]
    base : str  what that price is, possessive ("the base case's", "the scenario's")
    """
    if cushion_share >= 0:
        return f"{cushion_share:.1%} under {base} {base_usd_per_mtok:,.4f}"
    return f"{-cushion_share:.1%} above {base} {base_usd_per_mtok:,.4f}, which is in breach"
