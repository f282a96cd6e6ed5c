"""Labels and units of the summary metrics, monthly columns and scenario inputs, for every reader:
the app, the workbook's Summary sheet and charts, the memo; and the projection's warnings in those
labels' words (`readable_warning`).

One table (`SUMMARY_METRICS`: key -> label, unit, format kind) and one fallback for keys that are not
in it: a metric the engine adds later is labelled from its name (`npv_usd_per_mw` -> "NPV per MW",
unit "USD") with the unit read off its suffix (`_usd`, `_usd_per_mtok`, `_annual`, `_months`, ...),
so new outputs appear readable everywhere without a change here. No numbers are formatted here
(econ.ui.fmt formats for the screen, econ.workbook for the spreadsheet).
"""

from __future__ import annotations

import math
import re

SUMMARY_METRICS: dict[str, tuple[str, str, str]] = {
    "lcot_usd_per_mtok": ("Levelized cost", "USD/M tokens", "usd_per_mtok"),
    **{
        f"cost_usd_per_mtok_{part}": (f"  of which {part}", "USD/M tokens", "usd_per_mtok")
        for part in ("depreciation", "financing", "power", "facility", "opex")
    },
    "lcot_usd_per_mtok_all_tokens": (
        "Levelized cost per input and output token",
        "USD/M tokens",
        "usd_per_mtok",
    ),
    "breakeven_price_usd_per_mtok": ("Break-even price", "USD/M tokens", "usd_per_mtok"),
    "npv_usd": ("NPV", "USD", "usd"),
    "npv_equity_usd": ("Equity NPV", "USD", "usd"),
    "npv_usd_per_rack": ("NPV per rack", "USD", "usd"),
    "npv_usd_per_gpu": ("NPV per GPU", "USD", "usd"),
    "irr_project_annual": ("Project IRR", "%/year", "pct"),
    "irr_equity_annual": ("Equity IRR", "%/year", "pct"),
    "payback_months": ("Payback", "months", "months"),
    "min_dscr": ("Minimum DSCR", "x", "ratio"),
    "tokens_total": ("Output over the horizon", "tokens", "tokens"),
    "input_tokens_total": ("Input over the horizon", "tokens", "tokens"),
    "revenue_usd_total": ("Revenue over the horizon", "USD", "usd"),
    "output_token_revenue_usd_total": ("Output-token revenue over the horizon", "USD", "usd"),
    "input_token_revenue_usd_total": ("Input-token revenue over the horizon", "USD", "usd"),
    "cached_input_token_revenue_usd_total": (
        "Cached-input-token revenue over the horizon",
        "USD",
        "usd",
    ),
    "ebitda_usd_total": ("EBITDA over the horizon", "USD", "usd"),
    "capex_usd_total": ("Capex", "USD", "usd"),
    "gpu_count": ("GPUs", "", "count"),
    "rack_count": ("Racks", "", "number"),  # a fraction where GPUs do not fill whole racks
    "discount_rate_annual": ("Discount rate", "%/year", "pct"),
    "horizon_months": ("Horizon", "months", "count"),
    "tokens_per_s_per_mw": ("Rated throughput per MW IT", "tokens/s", "count"),
    "tokens_per_s_per_mw_it": ("Delivered throughput per MW IT", "tokens/s", "count"),
    "tokens_per_s_per_mw_utility": (
        "Delivered throughput per MW at the meter",
        "tokens/s",
        "count",
    ),
    "revenue_usd_per_mw_year": ("Revenue per MW-year IT", "USD", "usd"),
    "revenue_usd_per_mw_year_utility": ("Revenue per MW-year at the meter", "USD", "usd"),
    "revenue_usd_per_rack_year": ("Revenue per rack-year", "USD", "usd"),
    "revenue_usd_per_m2_year": ("Revenue per m²-year", "USD", "usd"),
    "joules_per_token_it": ("Energy per token, IT", "J", "joules"),
    "joules_per_token_utility": ("Energy per token at the meter", "J", "joules"),
    "power_cost_usd_per_mtok": ("Power cost", "USD/M tokens", "usd_per_mtok"),
    "ebit_usd_total": ("EBIT over the horizon", "USD", "usd"),
    "net_income_usd_total": ("Net income over the horizon", "USD", "usd"),
    "accounting_cost_usd_per_mtok": ("Accounting cost", "USD/M tokens", "usd_per_mtok"),
    "impairment_usd_total": ("Impairment over the horizon", "USD", "usd"),
    "moic_equity": ("Equity multiple (MOIC)", "x", "ratio"),
    "min_llcr": ("Minimum LLCR", "x", "ratio"),
    "covenant_breach_months": ("Covenant breach", "months", "count"),
    "first_breach_month": ("First covenant breach", "month", "count"),
    "wacc_after_tax_annual": ("WACC after tax", "%/year", "pct"),
    "cost_of_debt_annual": ("Cost of debt", "%/year", "pct"),
    "debt_usd": ("Debt raised", "USD", "usd"),
    "dilution_shares": ("Dilution", "shares", "count"),
    "mirr_project_annual": ("Project MIRR", "%/year", "pct"),
    "mirr_equity_annual": ("Equity MIRR", "%/year", "pct"),
    "profitability_index": ("Profitability index", "x", "ratio"),
    "debt_usd_total": ("Debt", "USD", "usd"),
    "construction_interest_usd": ("Interest capitalized during construction", "USD", "usd"),
    "debt_at_conversion_usd": ("Debt owed when service starts", "USD", "usd"),
    "debt_sizing_constraint": ("Debt sized by (0 none, 1 debt share, 2 DSCR, 3 LTV)", "", "count"),
    "dscr_headroom": ("DSCR headroom over the covenant", "x", "ratio"),
    "months_of_headroom": ("Months tested within the covenant", "months", "count"),
    "rental_earnings_usd_per_gpu_year": (
        "Rental earnings, first year in service",
        "USD/GPU-year",
        "usd",
    ),
    "resale_loss_usd_per_gpu_year": ("Resale value lost, first year", "USD/GPU-year", "usd"),
    "rental_resale_spread_usd_per_gpu_year": (
        "Rental less resale value lost, first year",
        "USD/GPU-year",
        "usd",
    ),
    "cost_usd_per_gpu_hour": ("Levelized cost per GPU-hour", "USD/GPU-hour", "usd_per_mtok"),
    **{
        f"cost_usd_per_gpu_hour_{part}": (f"  of which {part}", "USD/GPU-hour", "usd_per_mtok")
        for part in ("depreciation", "financing", "power", "facility", "opex")
    },
}
"""Summary metric -> (label, unit, format kind). A label starting with two spaces is a part of the
metric above it ("  of which power"). Kinds: usd, usd_per_mtok, pct, months, ratio, tokens, count,
joules, number."""

COLUMNS: dict[str, str] = {
    "gpus_in_service": "GPUs in service",
    "tokens": "Output tokens",
    "revenue_usd": "Revenue",
    "input_tokens": "Input tokens",
    "token_revenue_usd": "  of which tokens",
    "output_token_revenue_usd": "    output tokens",
    "input_token_revenue_usd": "    input tokens",
    "cached_input_token_revenue_usd": "    cached input tokens",
    "contract_revenue_usd": "  of which contracts",
    "spot_revenue_usd": "  of which spot rentals",
    "gain_on_disposal_usd": "Gain on disposal",
    "impairment_usd": "Impairment",
    "tax_depreciation_usd": "Tax depreciation",
    "tax_gain_on_disposal_usd": "Tax gain on disposal",
    "cash_interest_usd": "Cash interest",
    "commitment_fee_usd": "Commitment fees",
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
    "dscr_test": "DSCR tested",
}
"""Monthly column -> short label (USD columns carry the unit in the axis title)."""

FLAG_UNIT = "1 or 0"
"""The unit of a flag column: 1 where it holds, else 0."""
COLUMN_NOTES: dict[str, tuple[str, str]] = {
    "scenario": ("", "the scenario's name"),
    "month": ("month index", "months since month 0, the purchase month"),
    "date": ("date", "the month's date: month 0 is the scenario's start_date"),
    "gpus_in_service": ("GPUs", "GPUs serving in the month (the deployment ramp included)"),
    "tokens": ("tokens", "output tokens produced in the month by every GPU in service"),
    "input_tokens": (
        "tokens",
        "input (prompt) tokens sent with the output tokens; blank where the workload's input "
        "tokens per output token are unknown",
    ),
    "revenue_usd": ("USD", "revenue: tokens, GPU-hour contracts and spot rentals"),
    "token_revenue_usd": ("USD", "revenue of tokens of every kind (output, input, cached)"),
    "output_token_revenue_usd": ("USD", "revenue of output tokens"),
    "input_token_revenue_usd": ("USD", "revenue of input tokens not served from a cache"),
    "cached_input_token_revenue_usd": ("USD", "revenue of input tokens served from a cache"),
    "contract_revenue_usd": ("USD", "GPU-hours sold under contract (market.contract_share)"),
    "spot_revenue_usd": ("USD", "GPU-hours rented on the spot market"),
    "power_usd": ("USD", "the electricity bill: IT power drawn x PUE x hours x price"),
    "facility_usd": ("USD", "colocation rent, or an owned hall's running costs"),
    "opex_usd": ("USD", "staff, maintenance, insurance, software and SG&A"),
    "capex_usd": ("USD", "capital expenditure paid in the month"),
    "disposal_usd": ("USD", "sale proceeds when the GPUs retire"),
    "gain_on_disposal_usd": ("USD", "the sale's gain over the carrying amount (a loss negative)"),
    "depreciation_usd": ("USD", "book depreciation"),
    "impairment_usd": ("USD", "impairment loss (ASC 360)"),
    "tax_depreciation_usd": ("USD", "tax depreciation (depreciation.tax)"),
    "tax_gain_on_disposal_usd": (
        "USD",
        "the sale's gain over the tax basis: taxed (depreciation recapture, IRC §1245) or, a "
        "loss, deducted",
    ),
    "interest_usd": ("USD", "interest expense: cash interest plus amortized fees and discount"),
    "cash_interest_usd": ("USD", "interest and coupons paid"),
    "principal_usd": ("USD", "principal repaid, balloons and the last month's settlement included"),
    "debt_service_usd": (
        "USD",
        "cash interest + commitment fees + scheduled principal (balloons and the last month's "
        "settlement left out): what the DSCR covers",
    ),
    "tax_usd": ("USD", "income tax paid, in cash (financing.tax_payment)"),
    "deferred_tax_usd": (
        "USD",
        "deferred tax expense (ASC 740): the change in the deferred tax liability; negative a "
        "benefit",
    ),
    "deferred_tax_liability_usd": (
        "USD",
        "deferred tax liability at month end, the deferred tax expense to date: the tax on the "
        "book carrying amount less the tax basis, less that on the losses carried forward; "
        "negative a deferred tax asset (ASC 740)",
    ),
    "ebitda_usd": ("USD", "revenue - power - facility - opex"),
    "net_income_usd": (
        "USD",
        "EBITDA - depreciation - impairment - interest + gain on disposal - current and deferred "
        "tax expense",
    ),
    "cash_flow_project_usd": ("USD", "EBITDA - capex + sale proceeds - tax paid"),
    "cash_flow_equity_usd": (
        "USD",
        "project cash flow + debt drawn - cash interest - commitment fees - principal",
    ),
    "debt_balance_usd": ("USD", "debt outstanding at month end"),
    "dscr": (
        "x",
        "cash available for debt service (EBITDA - tax paid) / debt service, in a month with "
        "debt service (blank otherwise)",
    ),
    "llcr": (
        "x",
        "PV at the debt's rate of the cash available for debt service of the later months of "
        "the loan's life / debt outstanding at month end (blank with none outstanding)",
    ),
    "ltv": (
        "fraction",
        "debt outstanding / the collateral, the GPUs' book value (their resale value with a "
        "resale table); blank where the collateral is worth nothing",
    ),
    "covenant_breach": (
        FLAG_UNIT,
        "1 in a month with any covenant breach: the DSCR on its test window below its floor, "
        "the LLCR below its floor, or the LTV above its ceiling with debt outstanding",
    ),
    "current_tax_usd": (
        "USD",
        "current tax expense: tax on the month's taxable income, the year's change in losses "
        "carried forward taken in its last month",
    ),
    "capitalized_interest_usd": (
        "USD",
        "loan interest of the construction period, added to the GPUs' cost instead of expensed",
    ),
    "commitment_fee_usd": (
        "USD",
        "a capital stack's fees on undrawn commitments (0 for financing.debt_share's loan)",
    ),
    "dscr_test": (
        "x",
        "the DSCR the covenant tests: cash available for debt service over debt service, each "
        "summed over the trailing financing.covenants.test_months, in each month of the loan's "
        "life whose window holds debt service, from financing.covenants.first_test_month on "
        "(blank in months not tested, and throughout without a DSCR covenant)",
    ),
}
"""Column of the monthly schedule (and its index) -> (unit, meaning): what the workbook's Notes
sheet and its header notes say of each engine column (econ.engine.MONTHLY_COLUMNS; the
workbook's own working columns are described where the workbook defines them)."""

_WORDS = {
    "sga": "SG&A",
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
    "cfads": "CFADS",
    "pv": "PV",
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
    if name in SUMMARY_METRICS:
        return SUMMARY_METRICS[name][2]
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


_PARTS = (("cost_usd_per_mtok_", "USD/M tokens"), ("cost_usd_per_gpu_hour_", "USD/GPU-hour"))
_MONEY_SUFFIXES = (
    ("_usd_per_mtok", "USD/M tokens"),
    ("_usd_per_gpu_hour", "USD/GPU-hour"),
    ("_usd_total", "USD"),
    ("_usd", "USD"),
)
_SUFFIXES = (
    ("_annual", "%/year"),
    ("_monthly", "%/month"),
    ("_share", "%"),
    ("_months", "months"),
    ("_kwh", "kWh"),
    ("_kw", "kW"),
    ("_mw", "MW"),
)
"""Name suffix -> unit, for metrics not in SUMMARY_METRICS (money first; first match wins)."""


def summary_label(name: str) -> tuple[str, str]:
    """(label, unit) of a summary metric: from SUMMARY_METRICS, else read off the key
    (`resale_value_usd` -> ("Resale value", "USD"), `npv_usd_per_mw` -> ("NPV per MW", "USD"))."""
    if name in SUMMARY_METRICS:
        label, unit, _ = SUMMARY_METRICS[name]
        return label, unit
    for prefix, unit in _PARTS:  # a component of the levelized cost added later
        if name.startswith(prefix) and len(name) > len(prefix):
            return "  of which " + name.removeprefix(prefix).replace("_", " "), unit
    for suffix, unit in _MONEY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return humanize(name.removesuffix(suffix)), unit
    if "_usd_per_" in name:
        head, tail = name.split("_usd_per_", 1)
        return humanize(f"{head}_per_{tail}"), "USD"
    for suffix, unit in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return humanize(name.removesuffix(suffix)), unit
    if name.endswith(("dscr", "llcr", "_ratio", "_multiple")):
        return humanize(name), "x"
    return humanize(name), ""


def counted(count, noun: str, plural: str | None = None) -> str:
    """'1 point', '3 points', '1,024 GPUs': a count with its noun in the right number."""
    word = noun if int(count) == 1 else (plural or f"{noun}s")
    return f"{int(count):,} {word}"


REPR_NAMES = 3
"""How many scenario names the repr of a Projection or a ScenarioBatch shows."""


def first_names(names, total: int) -> str:
    """"'a', 'b', 'c', ... (97 more)": the first REPR_NAMES of `total` names, for a repr."""
    shown = ", ".join(repr(str(name)) for name in list(names[:REPR_NAMES]))
    return shown + (f", ... ({total - REPR_NAMES:,} more)" if total > REPR_NAMES else "")


def duration(years: float) -> str:
    """'6 weeks', '7 months', '4.3 years': a length of time in the unit that reads best."""
    if years < 0.25:
        return counted(max(round(years * 365.25 / 7), 1), "week")
    if years < 2:
        return counted(max(round(years * 12), 1), "month")
    return f"{years:.1f} years"


HUGE = 1e12
"""From this size (a trillion: no project's NPV, no cover ratio) a figure on a tile or in a table
is written in exponent form ("3.805e+19"): a 20-digit NPV wraps its tile over three lines and is
read by no one digit by digit; beyond it is a typo (1e23 tokens/s per GPU)."""


def compact(value: float) -> str:
    """A huge figure in 4 significant digits and exponent form: 38051075456631373824 ->
    "3.805e+19" (the app's tiles and tables, the command line's tables from HUGE on)."""
    return f"{value:.4g}"


def whole(value: float) -> str:
    """A figure to the unit with thousands separators (1,095,999), in exponent form from HUGE on
    (1.096e+300, not 301 digits: a warning about a typo'd input quotes what it made)."""
    return compact(value) if abs(value) >= HUGE else f"{value:,.0f}"


def short_number(value: float) -> str:
    """A number in a plain table: 4 significant digits, and whole units with separators from
    1,000 on (0.2609, 33.94, 5,631, 1,000 for 999.96), never in exponent form above 1,000."""
    text = f"{value:.4g}"
    if "e" not in text and abs(float(text)) < 1e3:
        return text
    return f"{value:,.0f}" if abs(value) >= 0.5 else text


COUNT_WORDS = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"),
               (1e6, "million"))  # fmt: skip
"""Large counts in words, as the app's tiles and charts and the memo write them."""


def count_in_words(value: float) -> str:
    """A large count in words to 2 decimals, from a million to the quintillions ("55.10
    trillion" for 5.5101e13 tokens; 999,999 as it is): a lender reads "5.51e+13" as a formula's
    output, not a figure."""
    for size, word in COUNT_WORDS:
        if abs(value) >= size:
            return f"{value / size:,.2f} {word}"
    return f"{value:,.0f}"


def plain_number(value: float) -> str:
    """A figure as given, to 6 significant digits, with thousands separators and never in
    exponent form from 100,000 on (1,598,510, not 1.59851e+06; 2,631.93; 0.1075)."""
    if abs(value) >= 1e5 and math.isfinite(value):
        return f"{value:,.0f}"
    return f"{value:,.6g}"


_UNIT_WORDS = ("months", "years", "annual", "kw", "mw", "m2", "s")
"""Last words of a field's name its unit says already (`life_years` [years] is "Life")."""
SHOWN_UNITS = {"USD per million tokens": "USD/M tokens", "tokens/s/GPU": "tokens/s per GPU"}
"""Units of the scenario's descriptions as econ writes them everywhere else (the tiles'
"Levelized cost [USD/M tokens]", the sidebar's "Output tokens/s per GPU"): labels, tables,
charts and validation messages all take the field's shown unit."""
FIELD_LABELS = {"throughput.tokens_per_s_per_gpu": "Output tokens/s per GPU"}
"""Labels a field's name does not give, by path: the app's sidebar, Scenario and Risk pages and
the memo read them here."""
_PER_S_PER_GPU = re.compile(r"\b([Tt])okens per s per GPU\b")


_BRACKETED = re.compile(r"\[([^\[\]]+)\]")


def bracketed(description: str | None) -> list[str]:
    """The words a description holds in square brackets, in order ("Price of one GPU [USD]":
    ["USD"]): a scenario field's unit is the last of them."""
    return _BRACKETED.findall(description or "")


def description_unit(description: str | None) -> str:
    """The unit a scenario field's description ends with in brackets ("Loan term ... [months]":
    "months"), "" where it gives none; the app's labels and econ's messages read it here."""
    found = bracketed(description)
    return found[-1].strip() if found else ""


def stored_number(name: str, unit: str, whole: bool = False) -> tuple[str, str]:
    """How a message names the number a scenario field stores, and its unit, as its file and
    `--set` take it (not as the app shows it): ("a fraction", " (1 = 100%)") for a fraction,
    ("a yearly rate", " (1 = 100% a year)") for a fraction a year, ("a number", " [months]")
    otherwise ("" for a number with no unit); `field_unit` decides which fields are fractions.

    Parameters
    ----------
    name : str  the field's name (`share`, `debt_rate_annual`)
    unit : str  the unit its description ends with (`description_unit`)
    whole : bool  whether the field takes whole numbers only
    """
    shown, scale = field_unit(name, "int" if whole else "float", unit)
    if scale == 100:
        yearly = shown.endswith("/year")
        return ("a yearly rate", " (1 = 100% a year)") if yearly else ("a fraction", " (1 = 100%)")
    return "a number", f" [{shown}]" if shown else ""


def field_unit(name: str, kind: str, unit: str) -> tuple[str, float]:
    """The unit a scenario field's label shows and the factor from its stored value to the shown
    one: a fraction as a percentage ("%", "%/year": 100), "1" as none.

    Parameters
    ----------
    name : str  the field's name (`share`, `price_decline_annual`)
    kind : str  float, int, numbers, choice, ... (econ.ui.form's kinds of field)
    unit : str  the unit its description ends with in brackets ("fraction", "USD/GPU")
    """
    unit = SHOWN_UNITS.get(unit, unit)
    if kind == "choice" and unit and unit != "1":
        return unit, 1.0
    if kind not in ("float", "int", "numbers"):
        return "", 1.0
    if unit == "1":
        unit = ""
    fraction = unit.startswith("fraction") or unit == "1/year"
    if not unit and kind == "float" and ("share" in name or name.endswith("rate")):
        fraction = True
    if fraction and kind == "float":
        per_year = "year" in unit or name.endswith("_annual")
        return ("%/year" if per_year else "%"), 100.0
    return unit, 1.0


def field_label(name: str, unit: str) -> str:
    """A scenario field's label: its name in words and its unit, the unit left out where the
    words already say it ("Racks", "Measured tokens/s per GPU") and percent shown as %."""
    words = name.split("_")
    if "usd" in words[1:]:
        words = words[: words.index("usd", 1)]
    elif len(words) > 1 and words[-1] in _UNIT_WORDS:
        words = words[:-1]
    if unit == "percent":
        unit = "%"
        words = words[:-1] if len(words) > 1 and words[-1] == "percent" else words
    text = humanize("_".join(words))
    if unit == SHOWN_UNITS["tokens/s/GPU"]:  # the words say the unit: in its symbols
        return _PER_S_PER_GPU.sub(r"\1okens/s per GPU", text)
    said = text.lower().replace(" per ", "/")
    if unit and (said == unit.lower() or said.endswith(" " + unit.lower())):
        return text
    return f"{text} [{unit}]" if unit else text


def input_label(path: str, unit: str = "") -> str:
    """A scenario input's label by its dotted path: its sections in words, then the field's label
    with `unit` (`field_unit`): "Capex › Installation [USD/GPU]" for
    capex.installation_usd_per_gpu, as the app's form labels it."""
    *sections, name = path.split(".")
    return " › ".join(
        [humanize(part) for part in sections] + [FIELD_LABELS.get(path, field_label(name, unit))]
    )


_SUMMARY_KEY = re.compile(
    r"(?<![\w.])("
    + "|".join(sorted(map(re.escape, SUMMARY_METRICS), key=len, reverse=True))
    + r")(?!\w|\.\w)"
)
_SIZING_CODE = re.compile(r" \(debt_sizing_constraint = \d\)")


CONSTRAINT_WORDS = {
    "none": "none",
    "debt_share": "the debt share of capex",
    "dscr": "the minimum DSCR",
    "ltv": "the maximum loan-to-value",
}
"""The debt sizing's binding constraints (econ.financing.SIZING_CONSTRAINTS) in words."""
_CONSTRAINT = re.compile(r"binding constraint: (none|debt_share|dscr|ltv)\b")
_NULL = re.compile(r"\b(is|are) null\b")
INPUT_WORDS = {
    "(market.resale_*)": "(the Market section's resale value table or resale series)",
    "cost_usd_per_mtok_by_component": "cost per million tokens by component",
}
"""Engine names of a group of inputs or an object of the summary, as the app words them."""


def null_reason(name: str, summary) -> str | None:
    """Why a summary metric is n/a, in the app's words: the warning that names its key (every
    null's does, econ.undefined), one that calls it null first; None when none names it."""
    named = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    found = [w for w in summary.get("warnings") or () if named.search(w)]
    found.sort(key=lambda w: not _NULL.search(w))
    return readable_warning(found[0]) if found else None


def readable_warning(text: str) -> str:
    """A projection warning in the words of a reader of the app or the memo: summary keys by
    their labels ("judge it with npv_usd" -> "judge it with NPV"; a label with a comma in
    quotes), "is null" as the tiles write it ("is n/a"), the debt sizing's binding constraint in
    words ("debt_share" -> "the debt share of capex"); the CLI and files keep the engine's words
    (tests/test_warning_texts.py), the keys being the names of their columns."""

    def label(match) -> str:
        name = summary_label(match.group(1))[0].strip()
        return f"“{name}”" if "," in name else name

    text = _SUMMARY_KEY.sub(label, _SIZING_CODE.sub("", text))
    text = _CONSTRAINT.sub(lambda m: f"binding constraint: {CONSTRAINT_WORDS[m.group(1)]}", text)
    text = _NULL.sub(lambda m: f"{m.group(1)} n/a", text)  # as the tiles write an undefined one
    for engine, app in INPUT_WORDS.items():
        text = text.replace(engine, app)
    first = text.split(" ", 1)[0]
    # an input's path ("facility.rack_cooling is ...") or a hardware key ("gb200-nvl72: ...")
    # as it is written
    if "." in first or "_" in first or "-" in first or any(c.isdigit() for c in first):
        return text
    return text[:1].upper() + text[1:]


def apart(value: float, limit: float) -> tuple[str, str]:
    """A value and its limit with the digits that tell them apart (4 significant, up to 12):
    50.001 against 50 is not '50 (limit 50)'."""
    for digits in range(4, 13):
        shown = f"{value:.{digits}g}", f"{limit:.{digits}g}"
        if shown[0] != shown[1]:
            break
    return shown


def column_label(name: str) -> str:
    """Short label of a monthly column ("Power"; USD columns carry the unit elsewhere)."""
    return COLUMNS.get(name, humanize(name.removesuffix("_usd")))


def column_unit(name: str) -> str:
    """The unit of a column: COLUMN_NOTES', else read off its name as a summary metric's
    (`_usd` -> USD, `_kw` -> kW, a ratio -> x; summary_label)."""
    if name in COLUMN_NOTES:
        return COLUMN_NOTES[name][0]
    return summary_label(name)[1]


def label_with_unit(name: str) -> str:
    """The label and, when it has one, the unit in brackets: "NPV [USD]"."""
    label, unit = summary_label(name)
    return f"{label} [{unit}]" if unit else label


__all__ = [
    "COLUMNS",
    "COLUMN_NOTES",
    "CONSTRAINT_WORDS",
    "FLAG_UNIT",
    "HUGE",
    "INPUT_WORDS",
    "bracketed",
    "column_unit",
    "compact",
    "SUMMARY_METRICS",
    "column_label",
    "counted",
    "field_label",
    "field_unit",
    "input_label",
    "short_number",
    "humanize",
    "label_with_unit",
    "metric_kind",
    "null_reason",
    "readable_warning",
    "summary_label",
]
