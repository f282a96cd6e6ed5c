"""How the app writes numbers: labels with units and formats for every summary metric and column.

Presentation only. A metric or column the engine adds later gets a label and a format from its
name's unit suffix (`_usd`, `_usd_per_mtok`, `_annual`, `_months`, ...), so new engine outputs show
up readable without a change here.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

# The tables live in econ.labels (shared with the workbook); re-exported for the app's pages.
from econ.labels import COLUMNS as COLUMNS
from econ.labels import CONSTRAINT_WORDS as CONSTRAINT_WORDS
from econ.labels import COUNT_WORDS as COUNT_WORDS
from econ.labels import HUGE as HUGE
from econ.labels import INPUT_WORDS as INPUT_WORDS
from econ.labels import (
    SUMMARY_METRICS,
    column_label,
    count_in_words,
    label_with_unit,
    summary_label,
)
from econ.labels import compact as compact
from econ.labels import humanize as humanize
from econ.labels import metric_kind as _engine_kind
from econ.labels import null_reason as null_reason
from econ.labels import readable_warning as engine_warning_words
from econ.labels import short_number as short_number
from econ.text import markdown_text

MONEY_SCALES = {"USD": 1.0, "thousand USD": 1e3, "million USD": 1e6}
"""Display scales for money in charts and tables (the numbers themselves stay in USD). They
scale amounts (NPV, capex, revenue, debt), never an amount per unit (USD_PER_UNIT)."""

USD_PER_UNIT = "usd_per_unit"
"""Format kind of an amount per unit in whole USD (NPV per GPU, revenue per rack-year, rental
earnings per GPU-year): a finance reader reads unit figures in USD whatever the "Money in" scale,
as prices per M tokens or per GPU-hour (10,395 USD of NPV per GPU, never "0.01" million USD)."""


def metric_kind(name: str) -> str:
    """Format kind of a metric or column (econ.labels.metric_kind), USD_PER_UNIT for a USD
    amount per unit (`_usd_per_` in its key, or a unit such as "USD/GPU-year")."""
    kind = _engine_kind(name)
    if kind == "usd" and ("_usd_per_" in name or "/" in summary_label(name)[1]):
        return USD_PER_UNIT
    return kind


def _scaled(kind: str, money: str) -> float:
    """The divisor of a value of `kind` shown with money in `money`: the scale for an amount,
    1 for anything else (an amount per unit, a price, a share)."""
    return MONEY_SCALES.get(money, 1.0) if kind == "usd" else 1.0


def money_label(label: str, kind: str, money: str = "USD") -> str:
    """A label with its unit in brackets as shown: "[USD" becomes "[million USD" for an amount
    in that scale; an amount per unit keeps "[USD" ("NPV per GPU [USD]")."""
    if _scaled(kind, money) == 1.0:
        return label
    return label.replace("[USD", f"[{money}")  # also "[USD/GPU-year]"


METRICS: dict[str, tuple[str, str]] = {
    name: (label_with_unit(name), metric_kind(name)) for name in SUMMARY_METRICS
}
"""Summary metric -> (label with unit, format kind), from econ.labels (shared with the workbook).
Others are labelled from their names."""

HEADLINE = (
    "lcot_usd_per_mtok",
    "breakeven_price_usd_per_mtok",
    "npv_usd",
    "npv_usd_per_rack",
    "irr_project_annual",
    "mirr_project_annual",
    "irr_equity_annual",
    "mirr_equity_annual",
    "npv_equity_usd",  # what an equity IRR's note says to judge by, beside it
    "payback_months",
    "min_dscr",
    "profitability_index",
    "cost_usd_per_gpu_hour",
    "dscr_headroom",
    "debt_usd_total",
)
"""Headline metrics of the Results page, in order (those the engine does not report are skipped)."""

IRR_KEYS = ("irr_project_annual", "irr_equity_annual")
"""Metrics whose tile carries the reason when the IRR is null or not unique (docs/methodology.md,
"IRR: which root is reported")."""


def irr_note(name: str, summary: Mapping) -> str | None:
    """The warning that explains an IRR tile: why it is null, or the other roots beside it."""
    if name not in IRR_KEYS:
        return None
    for warning in summary.get("warnings") or ():
        if name in warning and ("is null" in warning or "change sign" in warning):
            return readable_warning(warning)
    return None


SEVERE = ("covenant breached", "debt service not covered", "the debt outlives the projection")
"""Words of the warnings a credit reader must see first (covenants, cover, unpaid debt)."""


def readable_warning(text: str) -> str:
    """A projection warning in the app's words: econ.labels.readable_warning (summary keys by
    their labels, as the memo words them) and the scenario inputs it names by their paths by the
    form's labels (econ.ui.form.field_words), as validation messages name them."""
    from econ.ui.form import field_words  # (the form imports this module)

    return field_words(engine_warning_words(text))


def severe_first(warnings) -> list[str]:
    """Warnings with the severe ones (SEVERE) first, each group in the engine's order."""
    return sorted(warnings, key=lambda w: not any(word in w for word in SEVERE))


def metric_label(name: str, money: str = "USD") -> str:
    """Label with unit of a summary metric; an amount in the display scale (money_label)."""
    return money_label(label_with_unit(name), metric_kind(name), money)


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value, kind: str, money: str = "USD") -> str:
    """Text of a value: USD with thousands separators, $/M tokens to 4 decimals, percentages;
    never a negative zero ("-0.0%" of a tiny negative reads "0.0%"), except for money in
    thousand or million USD that is at least 1 USD below zero: a loss of 1,137 USD reads
    "-0.0011" million USD, and a loss too small for 4 decimals "-0.0000", never "0.00"."""
    text = _format_value(value, kind, money)
    if _scaled(kind, money) != 1.0 and not is_missing(value):
        if value <= -0.5:  # a loss in whole USD keeps its sign at any scale
            return text
    return text[1:] if text.startswith("-") and _is_zero_text(text) else text


def _is_zero_text(text: str) -> bool:
    """Whether a formatted number shows zero ("0", "-0.0%", "0.0000"; not "2e-07")."""
    return not any(c in "123456789" for c in text.split("e")[0])


HUGE_TOKENS = 1e21
"""The same for token counts, which a large fleet makes honestly huge (72,000 GB200s at the
seed's rate serve 5.5e16 tokens in six years: "55.10 quadrillion"); from a thousand quintillion."""


def _format_value(value, kind: str, money: str = "USD") -> str:
    if is_missing(value):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if isinstance(value, int | float) and not isinstance(value, bool):
        shown = value / _scaled(kind, money)
        shown = shown * 100 if kind == "pct" else shown
        if abs(shown) >= (HUGE_TOKENS if kind == "tokens" else HUGE):
            return compact(shown) + {"ratio": "x", "pct": "%"}.get(kind, "")
    if kind == USD_PER_UNIT:
        return f"{value:,.0f}"
    if kind == "usd":
        scale = _scaled(kind, money)
        if scale == 1.0:
            return f"{value:,.0f}"
        scaled = value / scale
        # an amount that would round to 0.00 gets 4 decimals ("-0.0011" million USD)
        return f"{scaled:,.2f}" if abs(scaled) >= 0.005 or scaled == 0 else f"{scaled:,.4f}"
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
        return count_in_words(value)
    if kind == "decimal":
        return f"{value:,.1f}"
    if kind == "joules":
        return f"{value:.3f}"
    if isinstance(value, int | float):
        return f"{value:,.6g}"
    return str(value)


def scaled_money(value, money: str = "USD") -> str:
    """Text of an amount already divided by the display scale of `money` (a table's cell), as
    format_value writes it: 2 decimals, or 4 for an amount too small for 2 ("0.0014" million
    USD for 1,436 USD, never "0.00"), "n/a" when missing."""
    if is_missing(value):
        return "n/a"
    return format_value(value * MONEY_SCALES.get(money, 1.0), "usd", money)


def format_change(value, kind: str, money: str = "USD") -> str:
    """Text of a difference: signed ("+16,520", "-0.0011"), and a change of a percentage in
    percentage points ("+0.4 pts", not "0.4%")."""
    if is_missing(value) or (isinstance(value, float) and math.isinf(value)):
        return format_value(value, kind, money)
    if kind == "pct":
        text = f"{value * 100:+.1f} pts"
        return text[1:] if _is_zero_text(text) else text  # no sign on a zero change
    text = format_value(value, kind, money)
    return f"+{text}" if value > 0 and not _is_zero_text(text) else text


def format_metric(name: str, summary: Mapping, money: str = "USD") -> str:
    """Text of one summary metric ("n/a" when the engine reports it as undefined)."""
    return format_value(summary.get(name), metric_kind(name), money)


COLUMN_FORMATS = {
    "dscr": lambda v: "n/a" if is_missing(v) else f"{v:.2f}",
    "dscr_test": lambda v: "n/a" if is_missing(v) else f"{v:.2f}",
    "llcr": lambda v: "n/a" if is_missing(v) else f"{v:.2f}",
    "ltv": lambda v: "n/a" if is_missing(v) else f"{v:.1%}",
    "covenant_breach": lambda v: "n/a" if is_missing(v) else ("yes" if v else "no"),
}
"""Monthly ratio and flag columns: cover ratios to 2 decimals, LTV in percent, breach yes/no."""


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
        money_column = text.endswith(("_usd", "_usd_total"))  # amounts; not rates (_usd_per_)
        # a summary metric's column (the refresh table's IRR) as the summary shows it
        summary = not money_column and text in SUMMARY_METRICS
        if summary or ("_usd_per_" in text and text not in COLUMNS):
            label = label_with_unit(text)  # "Levelized cost [USD/M tokens]"
        else:
            label = column_label(text).strip()
        if money_column and "[" not in label:
            label += f" [{money}]"
        labels[name] = label = label[:1].upper() + label[1:]  # "  of which ..." -> "Of which"
        if pd.api.types.is_datetime64_any_dtype(column):
            out[name] = column.dt.strftime("%Y-%m-%d")
        elif pd.api.types.is_bool_dtype(column):
            continue
        elif pd.api.types.is_numeric_dtype(column):
            if money_column:
                out[name] = column / scale
                formats[label] = functools.partial(scaled_money, money=money)
            elif pd.api.types.is_integer_dtype(column):
                formats[label] = "{:,.0f}"
            else:
                formats[label] = COLUMN_FORMATS.get(text, number_format)
                if summary or "_usd_per_" in text:  # in its unit, as the summary shows it
                    formats[label] = functools.partial(format_value, kind=metric_kind(text))
    out = out.rename(columns=labels)
    return out.style.format(formats, na_rep="n/a")


def literal(text) -> str:
    """Text from a user, a file or a link, made safe to show through Streamlit's markdown
    (st.caption, st.error, help texts, ...) exactly as typed: `econ.text.markdown_text` (no
    image, link, HTML, code, emphasis, heading, maths or strikethrough comes out of it, nor a
    colour, icon, emoji or arrow of Streamlit's own markdown)."""
    return markdown_text(text)


def header(name) -> str:
    """A table header as the app shows it: a name of plain lowercase words in sentence case
    ("metric" -> "Metric", "saved (UTC)" -> "Saved (UTC)"); others (labels with units, years,
    keys, scenario names such as deepseek-r1-gb200-nvl72) as they are."""
    text = str(name)
    if re.fullmatch(r"[a-z][a-z ]*(\([A-Z]+\))?", text):
        return text[:1].upper() + text[1:]
    return text


def number_format(value, digits: int = 6) -> str:
    """A non-money number: thousands separators, at most `digits` significant digits, no
    e-notation below 1e15 ("3,000,000", "194.95", "0.000012"). An edit's citation of the value it
    replaced takes 12 digits: the value typed, without a float's last-digit noise."""
    if is_missing(value):
        return "n/a"
    number = float(value)
    if not math.isfinite(number) or number == 0 or abs(number) >= 1e15:
        return f"{number:,.{digits}g}"
    if number.is_integer() or abs(number) >= 10**digits:
        return f"{number:,.0f}"
    text = f"{number:,.{max(0, digits - 1 - math.floor(math.log10(abs(number))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
