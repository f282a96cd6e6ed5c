"""How the app writes numbers: labels with units and formats for every summary metric and column.

Presentation only. A metric or column the engine adds later gets a label and a format from its
name's unit suffix (`_usd`, `_usd_per_mtok`, `_annual`, `_months`, ...), so new engine outputs show
up readable without a change here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

MONEY_SCALES = {"USD": 1.0, "thousand USD": 1e3, "million USD": 1e6}
"""Display scales for money in charts and tables (the numbers themselves stay in USD)."""

METRICS: dict[str, tuple[str, str]] = {
    "lcot_usd_per_mtok": ("Levelized cost [USD/M tokens]", "usd_per_mtok"),
    "breakeven_price_usd_per_mtok": ("Break-even price [USD/M tokens]", "usd_per_mtok"),
    "npv_usd": ("NPV [USD]", "usd"),
    "npv_usd_per_rack": ("NPV per rack [USD]", "usd"),
    "npv_usd_per_gpu": ("NPV per GPU [USD]", "usd"),
    "irr_project_annual": ("Project IRR [%/year]", "pct"),
    "irr_equity_annual": ("Equity IRR [%/year]", "pct"),
    "payback_months": ("Payback [months]", "months"),
    "min_dscr": ("Minimum DSCR [x]", "ratio"),
    "tokens_total": ("Output tokens over the horizon", "tokens"),
    "revenue_usd_total": ("Revenue over the horizon [USD]", "usd"),
    "ebitda_usd_total": ("EBITDA over the horizon [USD]", "usd"),
    "capex_usd_total": ("Capex [USD]", "usd"),
    "gpu_count": ("GPUs", "count"),
    "discount_rate_annual": ("Discount rate [%/year]", "pct"),
    "horizon_months": ("Horizon [months]", "count"),
    "tokens_per_s_per_mw": ("Rated tokens/s per MW IT", "count"),
    "tokens_per_s_per_mw_it": ("Delivered tokens/s per MW IT", "count"),
    "tokens_per_s_per_mw_utility": ("Delivered tokens/s per MW at the meter", "count"),
    "revenue_usd_per_mw_year": ("Revenue per MW-year IT [USD]", "usd"),
    "revenue_usd_per_mw_year_utility": ("Revenue per MW-year at the meter [USD]", "usd"),
    "revenue_usd_per_rack_year": ("Revenue per rack-year [USD]", "usd"),
    "revenue_usd_per_m2_year": ("Revenue per m²-year [USD]", "usd"),
    "joules_per_token_it": ("Energy per token, IT [J]", "joules"),
    "joules_per_token_utility": ("Energy per token at the meter [J]", "joules"),
    "power_cost_usd_per_mtok": ("Power cost [USD/M tokens]", "usd_per_mtok"),
    "ebit_usd_total": ("EBIT over the horizon [USD]", "usd"),
    "net_income_usd_total": ("Net income over the horizon [USD]", "usd"),
    "accounting_cost_usd_per_mtok": ("Accounting cost [USD/M tokens]", "usd_per_mtok"),
    "impairment_usd_total": ("Impairment over the horizon [USD]", "usd"),
    "moic_equity": ("Equity multiple (MOIC) [x]", "ratio"),
    "min_llcr": ("Minimum LLCR [x]", "ratio"),
    "covenant_breach_months": ("Months in covenant breach", "count"),
    "first_breach_month": ("First covenant breach [month]", "count"),
    "wacc_after_tax_annual": ("WACC after tax [%/year]", "pct"),
    "cost_of_debt_annual": ("Cost of debt [%/year]", "pct"),
    "debt_usd": ("Debt raised [USD]", "usd"),
    "dilution_shares": ("Dilution [shares]", "count"),
    "mirr_project_annual": ("Project MIRR [%/year]", "pct"),
    "mirr_equity_annual": ("Equity MIRR [%/year]", "pct"),
    "profitability_index": ("Profitability index [x]", "ratio"),
    "debt_usd_total": ("Debt [USD]", "usd"),
    "debt_sizing_constraint": ("Debt sized by (0 none, 1 debt share, 2 DSCR, 3 LTV)", "count"),
    "dscr_headroom": ("DSCR headroom over the covenant [x]", "ratio"),
    "months_of_headroom": ("Months of debt service within the covenant", "count"),
    "cost_usd_per_gpu_hour": ("Levelized cost per GPU-hour [USD]", "usd_per_mtok"),
    **{
        f"cost_usd_per_gpu_hour_{part}": (f"  of which {part} [USD/GPU-hour]", "usd_per_mtok")
        for part in ("depreciation", "financing", "power", "facility", "opex")
    },
}
"""Summary metric -> (label with unit, format kind). Others are labelled from their names."""

HEADLINE = (
    "lcot_usd_per_mtok",
    "breakeven_price_usd_per_mtok",
    "npv_usd",
    "npv_usd_per_rack",
    "irr_project_annual",
    "mirr_project_annual",
    "irr_equity_annual",
    "mirr_equity_annual",
    "payback_months",
    "min_dscr",
    "profitability_index",
    "cost_usd_per_gpu_hour",
    "dscr_headroom",
    "debt_usd_total",
)
"""Headline metrics of the Results page, in order (those the engine does not report are skipped)."""

IRR_KEYS = ("irr_project_annual", "irr_equity_annual")
"""Metrics whose tile carries the reason when the IRR is null or not unique (DESIGN.md §5)."""


def irr_note(name: str, summary: Mapping) -> str | None:
    """The warning that explains an IRR tile: why it is null, or the other roots beside it."""
    if name not in IRR_KEYS:
        return None
    for warning in summary.get("warnings") or ():
        if name in warning and ("is null" in warning or "change sign" in warning):
            return warning
    return None


COLUMNS: dict[str, str] = {
    "gpus_in_service": "GPUs in service",
    "tokens": "Output tokens",
    "revenue_usd": "Revenue",
    "token_revenue_usd": "  of which tokens",
    "contract_revenue_usd": "  of which contracts",
    "spot_revenue_usd": "  of which spot rentals",
    "gain_on_disposal_usd": "Gain on disposal",
    "impairment_usd": "Impairment",
    "tax_depreciation_usd": "Tax depreciation",
    "cash_interest_usd": "Cash interest",
    "debt_service_usd": "Debt service",
    "deferred_tax_usd": "Deferred tax",
    "deferred_tax_liability_usd": "Deferred tax liability",
    "llcr": "LLCR",
    "ltv": "LTV",
    "covenant_breach": "Covenant breach",
    "power_usd": "Power",
    "facility_usd": "Facility",
    "opex_usd": "Opex",
    "capex_usd": "Capex",
    "disposal_usd": "Disposal proceeds",
    "depreciation_usd": "Depreciation",
    "interest_usd": "Interest",
    "principal_usd": "Principal",
    "tax_usd": "Tax",
    "ebitda_usd": "EBITDA",
    "ebit_usd": "EBIT",
    "net_income_usd": "Net income",
    "cash_flow_project_usd": "Project cash flow",
    "cash_flow_equity_usd": "Equity cash flow",
    "debt_balance_usd": "Debt balance",
    "dscr": "DSCR",
}
"""Monthly column -> short label (USD columns carry the unit in the axis title)."""

_WORDS = {
    "us": "US",
    "gaap": "GAAP",
    "ifrs": "IFRS",
    "macrs": "MACRS",
    "gds": "GDS",
    "ads": "ADS",
    "usd": "USD",
    "gpu": "GPU",
    "gpus": "GPUs",
    "mtok": "M tokens",
    "kw": "kW",
    "kwh": "kWh",
    "mw": "MW",
    "m2": "m²",
    "pue": "PUE",
    "irr": "IRR",
    "npv": "NPV",
    "lcot": "Levelized cost",
    "dscr": "DSCR",
    "ebitda": "EBITDA",
    "it": "IT",
    "ttft": "TTFT",
    "tpot": "TPOT",
    "p99": "p99",
    "mlperf": "MLPerf",
    "slo": "SLO",
    "colo": "Colocation",
    "capex": "capex",
    "opex": "opex",
    "llcr": "LLCR",
    "ltv": "LTV",
    "sofr": "SOFR",
    "hbm": "HBM",
    "isl": "ISL",
    "osl": "OSL",
    "atm": "ATM",
    "id": "ID",
}


def humanize(name: str) -> str:
    """`price_decline_annual` -> "Price decline annual" with known abbreviations kept."""
    parts = [w for w in name.split("_") if w]
    if not parts:
        return name
    words = [_WORDS.get(w, w) for w in parts]
    if parts[0] not in ("kw", "kwh", "mw", "m2"):  # units keep their case: kW, m²
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def metric_kind(name: str) -> str:
    """Format kind of a metric or column from its name."""
    if name in METRICS:
        return METRICS[name][1]
    if name.endswith("_per_mtok"):
        return "usd_per_mtok"
    if name.endswith(("_usd", "_usd_total")) or "_usd_per_" in name:
        return "usd"
    if name.endswith(("_annual", "_share", "_rate")):
        return "pct"
    if name.endswith("_months"):
        return "months"
    if "dscr" in name or name.endswith("_ratio"):
        return "ratio"
    return "number"


def metric_label(name: str, money: str = "USD") -> str:
    """Label with unit of a summary metric; money in the display scale."""
    if name in METRICS:
        label = METRICS[name][0]
    else:
        kind = metric_kind(name)
        base = name.removesuffix("_usd_per_mtok").removesuffix("_usd_total")
        base = base.removesuffix("_usd").removesuffix("_annual").removesuffix("_months")
        unit = {
            "usd_per_mtok": " [USD/M tokens]",
            "usd": " [USD]",
            "pct": " [%]",
            "months": " [months]",
            "ratio": " [x]",
        }.get(kind, "")
        label = humanize(base) + unit
    if money != "USD" and metric_kind(name) == "usd":
        label = label.replace("[USD]", f"[{money}]")
    return label


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value, kind: str, money: str = "USD") -> str:
    """Text of a value: USD with thousands separators, $/M tokens to 4 decimals, percentages."""
    if is_missing(value):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if kind == "usd":
        scale = MONEY_SCALES.get(money, 1.0)
        return f"{value / scale:,.0f}" if scale == 1.0 else f"{value / scale:,.2f}"
    if kind == "usd_per_mtok":
        return f"{value:.4f}"
    if kind == "pct":
        return f"{value:.1%}"
    if kind == "months":
        return f"{value:.1f}"
    if kind == "ratio":
        return f"{value:.2f}x"
    if kind == "count":
        return f"{value:,.0f}"
    if kind == "tokens":
        for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
            if abs(value) >= size:
                return f"{value / size:,.2f} {word}"
        return f"{value:,.0f}"
    if kind == "decimal":
        return f"{value:,.1f}"
    if kind == "joules":
        return f"{value:.3f}"
    if isinstance(value, int | float):
        return f"{value:,.6g}"
    return str(value)


def format_metric(name: str, summary: Mapping, money: str = "USD") -> str:
    """Text of one summary metric ("n/a" when the engine reports it as undefined)."""
    return format_value(summary.get(name), metric_kind(name), money)


def column_label(name: str) -> str:
    return COLUMNS.get(name, humanize(name.removesuffix("_usd")))


def readable(frame, money: str = "USD"):
    """A table as a finance reader expects it: headers as labels with units, dates as dates,
    money in the display scale, numbers with thousands separators (a pandas Styler)."""
    import pandas as pd

    out = frame.copy()
    scale = MONEY_SCALES.get(money, 1.0)
    formats = {}
    labels = {}
    for name in out.columns:
        column = out[name]
        text = str(name)
        money_column = "_usd" in text
        unit = f" [{money}]" if money_column else ""
        label = column_label(text).strip()
        if money_column and "[" not in label:
            label += unit
        labels[name] = label
        if pd.api.types.is_datetime64_any_dtype(column):
            out[name] = column.dt.strftime("%Y-%m-%d")
        elif pd.api.types.is_bool_dtype(column):
            continue
        elif pd.api.types.is_numeric_dtype(column):
            if money_column:
                out[name] = column / scale
                formats[label] = "{:,.0f}" if money == "USD" else "{:,.2f}"
            elif pd.api.types.is_integer_dtype(column):
                formats[label] = "{:,.0f}"
            else:
                formats[label] = number_format
    out = out.rename(columns=labels)
    return out.style.format(formats, na_rep="n/a")


def number_format(value) -> str:
    """A non-money number: thousands separators, at most 6 significant digits."""
    if is_missing(value):
        return "n/a"
    number = float(value)
    if number.is_integer() and abs(number) < 1e15:
        return f"{number:,.0f}"
    return f"{number:,.6g}" if abs(number) < 1e6 else f"{number:,.0f}"
