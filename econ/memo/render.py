"""The memo as HTML (Jinja2 templates, charts as inline SVG) and as PDF (headless Chromium's print
to PDF of the same HTML, the stamp attached as an embedded file and in the document metadata).

The charts are the app's own Altair specifications (econ.ui.charts), rendered to SVG by
vl-convert, so the memo and the app draw the same thing. Heavy imports stay in the functions.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from econ import engine
from econ.errors import InputError
from econ.labels import counted, field_unit, input_label, plain_number, readable_warning
from econ.memo.build import PAYBACK, Memo
from econ.memo.figures import (
    BREACH_PRICE,
    CONSTRUCTION_KEYS,
    RESIDUAL_NPV,
    RETURN_KEYS,
    breach_price_text,
    builds,
    case_rows,
    cushion_words,
    figure_text,
    format_figure,
    shown,
)
from econ.scenario.io import OVERRIDDEN, is_default, source_at
from econ.scenario.section import NONE_WORD
from econ.undefined import REASONS

STAMP_ID = "econ-stamp"
STAMP_FILE = "econ-stamp.json"
"""Name of the stamp in the HTML (script id) and in the PDF (embedded file)."""

PDF_STAMP_KEY = "/EconStamp"
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
BROWSER_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
"""Flags for Debian's Chromium on this closed network, as root (also the screenshots' and the
browser tests' through Playwright): no sandbox, GPU or background connections."""
CHROMIUM_ARGS = ("--headless", *BROWSER_ARGS, "--no-pdf-header-footer")
CHART_MONEY = "million USD"
CHART_WIDTH = 600


NO_CHROMIUM = (
    "no Chromium found for the PDF (tried $ECON_CHROMIUM, " + ", ".join(CHROMIUM) + "); "
    "install Debian's chromium or write the memo as .html"
)


class RenderError(InputError):
    """The memo cannot be rendered (no Chromium for a PDF, a renderer that failed)."""


def stamp_json(stamp: dict) -> str:
    """The stamp as strict JSON safe inside <script>: <, > and & escaped as \\u003c etc."""
    text = json.dumps(stamp, ensure_ascii=False, allow_nan=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _svg(chart) -> str:
    import vl_convert

    svg = vl_convert.vegalite_to_svg(chart.to_json())
    return svg[svg.index("<svg") :]  # drop the XML declaration: the SVG is inline


def charts(memo: Memo) -> dict[str, str]:
    """The memo's charts as SVG text: dscr, cost (levelized cost waterfall), cash (cash-flow
    waterfall), tornado. A chart with nothing to show is left out."""
    from econ.ui import charts as ui

    out = {}
    monthly = memo.monthly
    if "debt_balance_usd" in monthly and monthly["debt_balance_usd"].abs().sum() > 0:
        covenants = memo.scenario.financing.covenants
        window = _test_window(memo)
        if window:
            monthly = monthly.assign(dscr_test=tested_dscr(monthly, memo.scenario))
        chart = ui.debt_and_dscr(monthly, CHART_MONEY, covenants.dscr_floor, window)
        # (a legend above the plot where two lines are drawn: the plot is lower by its height)
        out["dscr"] = _svg(chart.properties(width=CHART_WIDTH, height=150 if window else 170))
    parts = memo.summary.get("cost_usd_per_mtok_by_component") or {}
    cost = ui.waterfall(
        {k.capitalize(): (v or 0.0) for k, v in parts.items()},
        "Levelized cost",
        "USD per million output tokens",
    )
    out["cost"] = _svg(cost.properties(width=CHART_WIDTH // 2 - 40, height=170))
    out["cash"] = _svg(
        ui.bridge(
            cash_waterfall(monthly),
            f"{CHART_MONEY} over the horizon",
            ",.2f",
            total_label="Project cash flow",
        ).properties(width=CHART_WIDTH // 2 - 40, height=170)
    )
    rows = pd.DataFrame(memo.tornado["rows"])
    if len(rows):
        scale = 1e6
        shown_rows = rows.assign(
            # each input by its label, as the tornado table names it
            input=[input_name(row["input"], row["low"]) for row in memo.tornado["rows"]],
            output_low=rows["output_low"] / scale,
            output_high=rows["output_high"] / scale,
            output_base=rows["output_base"] / scale,
        )
        chart = ui.tornado(shown_rows, memo.tornado["swing_pct"], f"NPV [{CHART_MONEY}]", ",.2f")
        out["tornado"] = _svg(chart.properties(width=CHART_WIDTH - 200, height=18 * len(rows)))
    return out


def _test_window(memo: Memo) -> int | None:
    """The trailing months the DSCR covenant sums (the chart draws that test beside each month's
    own DSCR), or None where no DSCR covenant is tested or it tests each month alone."""
    from econ.ui.charts import dscr_test_window

    return dscr_test_window(memo.scenario.financing.covenants)


def tested_dscr(monthly: pd.DataFrame, scenario) -> np.ndarray:
    """The DSCR the covenant tests each month [x]: CFADS (EBITDA less the income tax paid) over
    debt service, each summed over the trailing `financing.covenants.test_months` (fewer in the
    first months), NaN in months the covenant does not test (outside the loan's life, or whose
    window holds no debt service) or before `first_test_month`: the
    engine's own test (econ.capital.coverage_ratios, `dscr_test`), whose lowest value less the
    floor is the summary's dscr_headroom."""
    from econ.capital import coverage_ratios

    covenants = scenario.financing.covenants

    def row(column: str) -> np.ndarray:
        return monthly[column].to_numpy(dtype=float)[None, :]

    first = covenants.first_test_month
    ratios = coverage_ratios(
        row("ebitda_usd") - row("tax_usd"),
        row("debt_service_usd"),
        row("debt_balance_usd"),
        np.zeros(1),  # (the LLCR's discount rate: the DSCR needs none)
        last_month=np.array([scenario.horizon_months]),
        dscr_floor=np.array([covenants.dscr_floor or np.nan]),
        test_months=covenants.test_months if covenants.dscr_floor is not None else 1,
        first_test_month=np.array([np.nan if first is None else first]),
    )
    return ratios["dscr_test"][0]


CASH_PARTS = (
    ("revenue_usd", "Revenue", 1.0),
    ("power_usd", "Power", -1.0),
    ("facility_usd", "Facility", -1.0),
    ("opex_usd", "Opex", -1.0),
    ("capex_usd", "Capex", -1.0),
    ("tax_usd", "Tax", -1.0),
    ("disposal_usd", "Sale of assets", 1.0),
)


def cash_waterfall(monthly: pd.DataFrame) -> pd.DataFrame:
    """Project cash flow over the horizon built up from its lines [million USD]: revenue less
    power, facility, opex, capex and tax; what else moves the cash flow (a sale at the end,
    working capital) is one more bar, so the bars always end at the total."""
    total = float(monthly["cash_flow_project_usd"].sum())
    rows, built = [], 0.0
    for column, label, sign in CASH_PARTS:
        if column in monthly:
            value = sign * float(monthly[column].sum())
            if value:
                rows.append((label, value / 1e6))
                built += value
    if abs(total - built) >= 0.5:  # half a dollar: rounding is not a line
        rows.append(("Other", (total - built) / 1e6))
    return pd.DataFrame(rows, columns=["driver", "value"])


NO_BREACH = f"first_breach_month is null: {REASONS['first_breach_month']}"
"""The engine's line for a scenario whose covenants hold: not a warning. The memo says it beside
the first month in breach, where covenants are shown, and leaves it out of the warnings."""


NOT_COVERED = "debt service not covered in "
"""The start of the engine's warning that the cash flow falls short of the debt service in some
months (its `dscr_below_1`), which stands beside the minimum DSCR: where no covenant is tested,
nothing else on the first page says so."""


def _row_notes(
    warnings, key: str, value=None, tested: bool = False, raw: bool = False, debt: bool = True
) -> list[str]:
    """The warnings shown beside one headline figure, in readable words (readable_warning). A
    return figure: those whose first return key is `key` (an IRR's warning ends "judge it with
    npv_usd and mirr_...": it belongs to the IRR, not the MIRR). The minimum DSCR: interest added
    to the loan (the DSCR counts the service paid, so the note says how thin the interest cover
    is), and the months the debt service is not covered (NOT_COVERED). The break-even price:
    why it is n/a where it is, else the debt it holds, where the debt is sized. The first month
    in breach: that no covenant is, where one is `tested`. `raw`: in the engine's words."""
    if key in RETURN_KEYS:
        pattern = re.compile(r"\b(" + "|".join(RETURN_KEYS) + r")\b")
        notes = [w for w in warnings if (m := pattern.search(w)) and m.group(1) == key]
    elif key == "min_dscr":
        notes = [w for w in warnings if w.startswith((engine.INTEREST_DEFERRED, NOT_COVERED))]
    elif key == "breakeven_price_usd_per_mtok":
        if value is None or not math.isfinite(value):
            notes = [w for w in warnings if f"{key} is null" in w]
        else:
            held = debt and any(engine.BREAKEVEN_HOLDS_SIZED_DEBT in w for w in warnings)
            notes = [engine.BREAKEVEN_HOLDS_SIZED_DEBT.removeprefix(key + " ")] if held else []
    elif key == "first_breach_month":
        notes = [NO_BREACH.partition(": ")[2]] if tested and NO_BREACH in warnings else []
    else:
        notes = []
    return notes if raw else [readable_warning(note) for note in notes]


def _shown_warnings(warnings) -> list[str]:
    """The projection's warnings as the memo lists them: in readable words (the app's:
    econ.labels.readable_warning), without the line saying no covenant is breached (NO_BREACH),
    which is no warning."""
    return [readable_warning(w) for w in warnings if w != NO_BREACH]


SEVERAL_ROOTS = re.compile(
    r"^\w+ cash flows change sign more than once \(roots found, NPV as the rate rises: "
    r"(?P<roots>(?:[^()]|\([^()]*\))*)\): \w+ is the only rate in "
)
"""An IRR reported beside other roots (engine._several_signs_message): its roots, so that a
cases table footnote says them in a line and the rule once (CASE_ROOTS_RULE)."""
CASE_ROOTS_RULE = (
    f"Where NPV is zero at several rates, the IRR shown is the only one in {engine.IRR_RANGE_TEXT} "
    "at which it falls through zero as the rate rises (docs/methodology.md, IRR: which root is "
    "reported): judge such a case by its NPV and MIRR."
)


def _case_notes(memo: Memo, cases: list[str]) -> tuple[dict[str, list[int]], list[str], str | None]:
    """The footnotes of the cases table: a return figure shown in a case whose warnings speak of
    it, as the headline shows the base case's beside it: an IRR whose NPV is zero at other rates
    too in a line naming them, the rule said once after the notes (CASE_ROOTS_RULE); not one
    whose flows change sign more than once with one root in the range, unique there. Returns
    the footnotes' numbers by figure key (`<case>.<metric>`), their texts in order, and the rule
    where a note needs it."""
    labels = {key: label for key, label, *_ in case_rows(memo.summary)}
    numbers: dict[str, list[int]] = {}
    notes: list[str] = []
    several = False
    for key in labels:
        for name in cases:
            summary = memo.summary if name == "base" else memo.cases[name]["summary"]
            value = memo.figures[f"{name}.{key}"]
            drawn = None if name == "base" else _draws_note(memo.cases[name], key, memo)
            if drawn:
                note = f"{labels[key]}: {drawn}"
                if note not in notes:
                    notes.append(note)
                numbers.setdefault(f"{name}.{key}", []).append(notes.index(note) + 1)
                continue
            if value is None:
                reason = _undefined_reason(summary, key)
                note = f"{labels[key]} is n/a: {reason}" if reason else None
                if note and note not in notes:
                    notes.append(note)
                if note:
                    numbers.setdefault(f"{name}.{key}", []).append(notes.index(note) + 1)
                continue
            if key not in RETURN_KEYS:
                continue
            for warning in _row_notes(summary.get("warnings") or (), key, value, raw=True):
                roots = SEVERAL_ROOTS.match(warning)
                if roots and "), " not in roots["roots"]:
                    continue  # (the one root found: the rate is unique in the range)
                if roots:
                    several = True
                    note = f"NPV is zero at {roots['roots']} a year"
                else:
                    note = readable_warning(warning)
                notes.append(f"{name}, {labels[key]}: {note}")
                numbers.setdefault(f"{name}.{key}", []).append(len(notes))
    return numbers, notes, CASE_ROOTS_RULE if several else None


def _draws_note(case: dict, key: str, memo: Memo) -> str | None:
    """How many draws of a Monte Carlo case (econ.memo.build.montecarlo_cases) have the figure
    `key`, where some lack it, and what its percentiles then are (build.draw_percentiles); None
    for a named case or a figure every draw has."""
    if not case.get("montecarlo") or case["defined"][key] == case["draws"]:
        return None
    n, count = case["draws"], case["defined"][key]
    if key == PAYBACK:
        return (
            f"{n - count:,} of {n:,} draws never pay back within the "
            f"{memo.scenario.horizon_months}-month horizon: each counts as paying back after it, "
            "so a percentile that falls among them is n/a (beyond the horizon)"
        )
    if not count:
        return f"undefined in every one of the {n:,} draws"
    if 2 * count < n:
        return (
            f"defined in only {count:,} of {n:,} draws, fewer than half: percentiles over those "
            "alone would leave out the draws without it (often the losing ones), so none is given"
        )
    return f"percentiles over the {count:,} of {n:,} draws where it is defined"


NO_COVENANT_TESTED = (
    "no covenant is tested (no debt, or neither a DSCR nor an LLCR floor: financing.covenants)"
)
"""Why the months in covenant breach are n/a (econ.memo.build._figure), which no warning says."""


def _undefined_reason(summary, key: str) -> str | None:
    """Why a summary's figure is n/a, in the engine's words (the warning that names it null, its
    reason after "is null: "; an IRR's warning from the return policy whole) as the app says them
    (readable_warning), or None where no warning says."""
    warnings = [w for w in summary.get("warnings") or () if w != NO_BREACH]
    if key == "covenant_breach_months" and summary.get(key) is not None:
        return NO_COVENANT_TESTED  # (the engine's 0, shown n/a: no covenant is tested)
    null = re.compile(rf"\b{re.escape(key)}( and [\w, ]+)? (is|are) null\b")
    for warning in warnings:
        found = null.search(warning)
        if not found:
            continue
        said = warning
        if warning[found.end() :].startswith(": "):  # "[what; ]KEY is null: why"
            before = warning[: found.start()].rstrip(";: ")
            said = (before + ": " if before else "") + warning[found.end() + 2 :]
        elif found.end() == len(warning):
            said = warning[: found.start()].rstrip(":; ")  # "why: KEY is null"
        said = readable_warning(said).rstrip(".")
        return said[:1].lower() + said[1:] if said[1:2].islower() else said
    return REASONS.get(key)


def _definitions(memo: Memo) -> list[tuple[str, str]]:
    """How the lender's figures are defined, for a scenario with debt (empty without)."""
    if not memo.summary.get("debt_usd"):
        return []
    fin = memo.scenario.financing
    covenants = fin.covenants
    window = covenants.test_months
    words = {"dscr_floor": "DSCR floor", "test_months": "test window"}
    defaults = [
        words.get(row["path"].rsplit(".", 1)[1], row["label"])
        for row in _covenant_rows(memo)
        if row["source"] == COVENANT_DEFAULT
    ]
    tests = []
    if covenants.dscr_floor is not None:
        tests.append(
            f"the DSCR at or above {covenants.dscr_floor:.2f}x on the sums of CFADS and of debt "
            f"service over the trailing {window} month{'s' if window != 1 else ''}"
            + (
                " (fewer in the first months: the window starts at month 0)"
                if window > 1 and (covenants.first_test_month or 0) < window
                else ""
            )
        )
    if covenants.llcr_floor is not None:
        tests.append(f"the LLCR at or above {covenants.llcr_floor:.2f}x")
    if covenants.ltv_ceiling is not None:
        tests.append(f"the loan-to-value at or below {covenants.ltv_ceiling:.0%}")
    covenant = (
        "Tested in each month of the loan: "
        + "; ".join(tests)
        + (
            f". The DSCR and LLCR tests start in month {covenants.first_test_month} (the "
            "facility's first test date)"
            if covenants.first_test_month is not None
            else ""
        )
        + ". DSCR headroom is the lowest DSCR test less its floor; a month that fails any test "
        "is in breach."
        + (
            f" The {_listed(defaults)} "
            + ("is econ's default" if len(defaults) == 1 else "are econ's defaults")
            + ", not a term sheet's (Key assumptions)."
            if defaults
            else ""
        )
        if tests
        else "None: the scenario sets no covenant floor (dscr_floor = none)."
    )
    return [
        (
            "CFADS",
            "Cash flow available for debt service: EBITDA less the income tax paid, monthly.",
        ),
        (
            "DSCR",
            "CFADS over the month's debt service (cash interest, fees and scheduled principal). "
            "Balloons, bullets and the balance settled at the projection's end are left out, as "
            "a lender refinancing them would; the equity cash flow pays them in their month. "
            "Minimum DSCR is the lowest month. Interest the service does not pay is added to the "
            "loan and stated beside the minimum DSCR.",
        ),
        ("Covenant", covenant),
        (
            "LLCR",
            "Present value of CFADS to the loan's last month, at the loan's rate (a capital "
            "stack: its tranches' average cash rate), over the debt outstanding at month end.",
        ),
        (
            "Project cash flow",
            "EBITDA less capex and the income tax paid, interest deducted from taxable income: the "
            "capital cash flow (Ruback, 2002), which carries the interest tax shield and is "
            "discounted at a pre-tax rate, so project NPV, IRR and the break-even price move a "
            "little with the debt. Equity cash flow: project cash flow plus the financing cash flow "
            "(debt drawn less fees, capped calls, cash interest and principal repaid, including "
            "what is repaid when the projection ends).",
        ),
        (
            "Not modelled",
            "A debt service reserve account, a cash sweep and a distribution lock-up "
            "(docs/methodology.md, what is simplified).",
        ),
    ]


def _listed(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _held_loan(memo) -> str | None:
    """The sentence saying which cases hold the base case's loan, or None."""
    names = [name for name, c in memo.cases.items() if c.get("holds_loan")]
    if not names:
        return None
    sculpted = memo.scenario.financing.repayment == "sculpted"
    if not memo.summary.get("debt_usd"):
        return (
            f"{_listed(names).capitalize()} hold the base case's financing: its sizing raises no "
            "debt, and the cases are not sized again, so they too are all equity."
        )
    return (
        f"{_listed(names).capitalize()} hold the base case's loan: the debt sized there "
        f"({format_figure('{:,.0f}', memo.summary.get('debt_usd'))} USD) and its "
        + ("repayment schedule (its closing balances month by month)" if sculpted else "terms")
        + ", not sized again, so their DSCR is the cover of the loan proposed."
    )


RATE_TAX_SHIELD = (
    "the project NPV and IRR are of the project's cash flow after the tax actually paid, which "
    "counts the tax saved on interest, so a higher rate raises them where tax is paid "
    "(docs/methodology.md, Cash flows, NPV, IRR, payback; Ruback, Financial Management 31(2), "
    "2002)"
)
"""Why a loan's higher rate raises the project NPV, for a credit committee that reads it."""


def _rate_notes(memo: Memo) -> dict[str, str | None]:
    """The notes under the cases table and the tornado where a case or a tornado input moves a
    loan's interest rate (None where none does): the project NPV counts the tax saved on
    interest, so it rises with the rate; the equity IRR row shows what the rate costs."""
    from econ.memo.build import rate_input

    labels = {key: label for key, label, *_ in case_rows(memo.summary)}
    equity, dscr = labels["irr_equity_annual"], labels["min_dscr"]
    names = [name for name, c in memo.cases.items() if c.get("moves_rate")]
    cases = None
    if names:
        cases = (
            f"{_listed(names).capitalize()} {'moves' if len(names) == 1 else 'move'} a loan's "
            f"interest rate: {RATE_TAX_SHIELD}. The equity pays the interest: the {equity} row "
            f"shows what the rate costs it, the {dscr} row what it costs the loan's cover."
        )
    inputs = [r["input"] for r in memo.tornado["rows"] if rate_input(r["input"], memo.scenario)]
    tornado = None
    if inputs:
        names = [input_name(path, _value_at(memo.scenario, path)) for path in inputs]
        tornado = f"{_listed(names)}: " + (
            "a higher rate raises the NPV, as the note under the cases table says."
            if cases
            else f"a loan's interest rate: {RATE_TAX_SHIELD}. The equity pays the interest: a "
            f"case on the rate shows what it costs in its {equity} (econ memo --case "
            f"NAME={inputs[0]}=VALUE)."
        )
    return {"cases": cases, "tornado": tornado}


def _cushion(memo: Memo) -> dict | None:
    """The ask's price-cushion row: the breach price as a verified figure and its words."""
    breach = memo.breach
    if breach is None:
        return None
    price, base = breach["price_usd_per_mtok"], breach["base_usd_per_mtok"]
    held = "the loan held as sized" if breach["holds_loan"] else "the debt as given"
    if price is None:
        words = f"({breach['reason']})"
    else:
        where = cushion_words(breach["cushion_share"], base, "the base case's")
        words = (
            f"USD/Mtok: below this month-1 token price a covenant is breached, {where} ({held}; "
            "the price path's decline kept)"
        )
    return {
        "key": f"base.{BREACH_PRICE[0]}",
        "value": _value_attr(price),
        "text": breach_price_text(price),
        "words": words,
    }


def _value_attr(value) -> str:
    return "" if value is None else repr(float(value))


def _repaid_by(memo: Memo) -> str:
    """ ", repaid by month N" for a loan whose balance is 0 before the projection ends."""
    balance = memo.monthly["debt_balance_usd"].to_numpy(dtype=float)
    owed = np.flatnonzero(balance > 0)
    if owed.size == 0 or owed[-1] + 1 >= balance.size - 1:
        return ""
    return f", repaid by month {owed[-1] + 1}"


def _rate(fraction: float) -> str:
    """A contract rate as the term sheet states it: a percentage with two decimals or as many
    more (up to four) as it has, so 9.125% is not shown as 9.12% (0.0925 -> 9.25%)."""
    digits = f"{fraction * 100:.4f}".rstrip("0")
    whole, _, decimals = digits.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}%"


def _tranche_terms(t, horizon: int) -> str:
    """A tranche as the ask states it: type, size, rate, repayment and maturity (a maturity after
    the projection's end said so: the balance left then is settled in the last month)."""
    terms = [t.type.replace("_", " ")]
    if t.amount_usd is not None:
        terms.append(f"{t.amount_usd:,.0f} USD")
    elif t.share_of_capex is not None:
        terms.append(f"{t.share_of_capex:.0%} of capex")
    else:  # (equity without a size: what the other tranches leave)
        terms.append("the rest of the capex")
    if t.type == "equity":
        return f"{t.name} ({', '.join(terms)})"
    if getattr(t, "coupon_annual", None) is not None:
        often = {1: "annual", 2: "semi-annual", 4: "quarterly", 12: "monthly"}[t.coupons_per_year]
        terms.append(f"{_rate(t.coupon_annual)} {often} coupon, bullet")
    elif t.rate_annual is not None:
        terms.append(f"{_rate(t.rate_annual)} fixed")
    else:
        rate = t.floating
        floor = (
            f" (index floor {_rate(rate.floor_annual)})" if rate.floor_annual is not None else ""
        )
        curve = rate.curve
        level = f"flat {_rate(curve.rate_annual)}" if curve.kind == "flat" else "its forward curve"
        terms.append(f"{rate.index} ({level}) + {_rate(rate.spread_annual)}{floor}")
    if hasattr(t, "repayment"):
        repayment = t.repayment.replace("_", " ")
        if t.amortization_months:
            repayment += f" over {t.amortization_months} months"
        if t.interest_only_months:
            repayment += f" after {t.interest_only_months} months interest only"
        if t.balloon_share:
            repayment += f", {t.balloon_share:.0%} balloon"
        terms.append(repayment)
    maturity = f"matures in month {t.maturity_month}"
    if t.maturity_month > horizon:
        maturity += (
            f", after the projection's month {horizon}: the balance left then is repaid in month "
            f"{horizon} from the equity cash flow and left out of the DSCR"
        )
    terms.append(maturity)
    return f"{t.name} ({', '.join(terms)})"


def _draws(memo: Memo) -> str:
    """ "; drawn with the capex: A USD in month 0 and B USD in month 18" for a loan drawn in
    more than one month (a later vintage's purchase draws its share too), else "": the draws
    (`econ.financing.draws_usd`) in the months capex is paid."""
    from econ.financing import draws_usd

    m = memo.monthly
    draws = draws_usd(
        m["debt_balance_usd"].to_numpy(dtype=float),
        m["principal_usd"].to_numpy(dtype=float),
        m["capitalized_interest_usd"].to_numpy(dtype=float),
    )
    months = np.flatnonzero((m["capex_usd"].to_numpy(dtype=float) > 0) & (draws > 0.5))
    if months.size < 2:
        return ""
    parts = [f"{draws[k]:,.0f} USD in month {k}" for k in months]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"; drawn with the capex: {listed}"


def _construction(memo: Memo) -> str:
    """ "; service from month 4: 35,653 USD of interest capitalized during construction (added to
    the loan, not paid), so 2,510,573 USD is owed when service starts, repaid by month 63" for a
    loan drawn before service (econ.construction), else "": the debt raised is what is drawn, not
    what is owed."""
    if not builds(memo.summary):
        return ""
    serving = np.flatnonzero(memo.monthly["gpus_in_service"].to_numpy(dtype=float) > 0)
    start = f" from month {serving[0]}" if serving.size else ""
    interest, owed = (
        figure_text(f"base.{key}", memo.figures[f"base.{key}"]) for key in CONSTRUCTION_KEYS
    )
    return (
        f"; service{start}: {interest} USD of interest capitalized during construction (added "
        f"to the loan, not paid), so {owed} USD is owed when service starts"
        + _repaid_by(memo)  # (the term runs from service: past the month a term from 0 gives)
    )


def _fleet_text(memo: Memo) -> str:
    """'1,024 NVIDIA H200 SXM GPUs (32 racks of 32), held to the projection's end (month 60)':
    the hardware by its catalog name (its key where the catalog has none), each vintage after the
    first with the month it is bought, a rack partly filled as '1.50 racks', and how long each is
    held (`_held`)."""
    from econ.hardware import load_hardware_catalog

    names = {key: hardware.name for key, hardware in load_hardware_catalog().items()}
    s = memo.scenario
    parts = []
    for i, one in enumerate(s.expand()):
        fleet = one.fleet
        racks = fleet.gpu_count / fleet.gpus_per_rack
        count = counted(racks, "rack") if racks.is_integer() else f"{racks:,.2f} racks"
        parts.append(
            f"{fleet.gpu_count:,} {names.get(fleet.hardware, fleet.hardware)} GPUs ({count} of "
            f"{fleet.gpus_per_rack})"
            + (f" bought in month {fleet.purchase_month}" if i else "")
            + _held(memo, fleet.retire_month)
        )
    return "; then ".join(parts)


def _held(memo: Memo, retire_month: int | None) -> str:
    """How long GPUs are held, from `fleet.retire_month`: to the projection's end, or to their
    last month in service, when they are sold; the sale does not prepay the loan (the engine
    models no mandatory prepayment: docs/financing.md), so what is still owed then is said."""
    horizon = memo.scenario.horizon_months
    if retire_month is None or retire_month >= horizon:
        return f", held to the projection's end (month {horizon})"
    text = f", in service to month {retire_month} of {horizon}, then sold"
    months = memo.monthly["month"].to_numpy()
    owed = memo.monthly["debt_balance_usd"].to_numpy(dtype=float)[months == retire_month]
    if owed.size and owed[0] > 0.5:
        text += (
            f" (the sale does not prepay the loan: {owed[0]:,.0f} USD is still owed then, "
            "its service running on to its term, paid from the equity cash flow)"
        )
    return text


def _ask(memo: Memo) -> list[tuple[str, str]]:
    s = memo.scenario
    fin = s.financing
    if fin.tranches:
        horizon = s.horizon_months
        debt = "capital stack: " + "; ".join(_tranche_terms(t, horizon) for t in fin.tranches)
    elif fin.debt_share or fin.debt_usd:
        # a loan given in USD is drawn up to the capex (the engine warns where it is cut)
        capex = memo.summary.get("capex_usd_total") or 0.0
        loan = (
            f"{fin.debt_share:.0%}"
            if fin.debt_usd is None
            else f"{min(fin.debt_usd, capex):,.0f} USD of"
        )
        debt = f"{loan} debt at {_rate(fin.debt_rate_annual)} a year over {fin.debt_term_months} months"
        limits = []
        if fin.size_to_min_dscr:
            limits.append(f"a minimum DSCR of {fin.size_to_min_dscr:g}x")
        if fin.max_ltv:
            limits.append(f"a maximum LTV of {fin.max_ltv:.0%}")
        if limits or fin.repayment != "level_payment":
            sizing = (
                f"up to {loan} debt at {_rate(fin.debt_rate_annual)} a year over "
                f"{fin.debt_term_months} months, "
                + fin.repayment.replace("_", " ")
                + (f", sized to {' and '.join(limits)}" if limits else "")
            )
            debt = (
                f"{sizing}: {format_figure('{:,.0f}', memo.summary.get('debt_usd'))} USD"
                + _repaid_by(memo)
                if memo.summary.get("debt_usd")
                else f"all equity: no debt raised (the sizing of {sizing} gives none)"
            )
        debt += _draws(memo) + _construction(memo)
    else:
        debt = "all equity"
    residual = _residual_text(memo)
    return [
        ("Fleet", _fleet_text(memo)),
        ("Capex", format_figure("{:,.0f} USD", memo.summary.get("capex_usd_total"))),
        *((("Residual value", residual),) if residual else ()),
        ("Financing", debt),
        (
            "Projection",
            f"{s.horizon_months} months from {s.start_date:%Y-%m}; discount rate "
            f"{_rate(fin.discount_rate_annual)} a year",
        ),
    ]


def _residual_text(memo: Memo):
    """The ask's residual value: the proceeds of what is sold at retirement or when the
    projection ends, their pre-tax present value at the discount rate
    (econ.metrics.discount_factors, as the NPV discounts), whether an input gives them or they
    are the book value, with no source (`_residual_at_book`), and the NPV without them: that of
    the projection with nothing sold (`econ.memo.build.without_sale`, the tax on the sale's gain
    counted), a verified figure (markup). None where nothing is sold."""
    from markupsafe import Markup, escape

    from econ.metrics import discount_factors

    m = memo.monthly
    sold = m["disposal_usd"].to_numpy(dtype=float)
    if sold.sum() <= 0.5:
        return None
    rate = memo.scenario.financing.discount_rate_annual
    factors = discount_factors(np.array([rate]), m["month"].to_numpy())[0]
    present = float(sold @ factors)
    npv = memo.summary.get("npv_usd")
    text = f"{sold.sum():,.0f} USD from the sale of what is retired or held at the end"
    if _residual_at_book(memo) is not None:
        text += " at its book value, assumed with no source (Key assumptions)"
    else:
        text += ", at the value the scenario's resale input gives (Key assumptions)"
    text += f"; present value {present:,.0f} USD at {_rate(rate)} a year, before tax"
    if npv is not None and math.isfinite(npv) and npv > 0:
        text += f", {present / npv:.0%} of the NPV"
    key = f"base.{RESIDUAL_NPV[0]}"
    if key not in memo.figures or npv is None or not math.isfinite(npv):
        return text
    unsold = memo.figures[key]
    words = (
        "; with the GPUs sold for nothing (the tax on the sale's gain over its tax basis "
        + ("gone, the loan held as sized" if memo.breach and memo.breach["holds_loan"] else "gone")
        + ") the NPV would be "
    )
    span = Markup('<span class="figure" data-key="{}" data-value="{}">{}</span>').format(
        key, _value_attr(unsold), figure_text(key, unsold)
    )
    return escape(text + words) + span + escape(f" USD, not {npv:,.0f}")


def _shown_unit(path: str, value) -> tuple[str, float]:
    """The unit an input's label shows and the factor from its value to the shown one
    (econ.labels.field_unit of the field's description unit): one rule for the label and the
    value, so a field labelled [%] is always shown as a percentage ("fraction of cost" too)."""
    from econ.library.diff import unit_of

    kind = ""
    if isinstance(value, float):
        kind = "float"
    elif isinstance(value, int) and not isinstance(value, bool):
        kind = "int"
    return field_unit(path.rsplit(".", 1)[-1], kind, unit_of(path) or "")


def input_text(path: str, value) -> str:
    """An input's value as the memo shows it: a fraction as a percentage, as the Ask states
    rates (0.1075 of unit 1/year is '10.75% a year'), a large amount whole (6 significant
    digits wrote 3,100,000 as 3.1e+06). Other units are in the field's name (_usd, _years).
    A value is a percentage exactly where its label says [%] or [%/year] (`_shown_unit`)."""
    if value is None:
        return NONE_WORD  # (as a scenario file writes an unset value)
    if isinstance(value, tuple | list):
        return counted(len(value), "entry", "entries")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    unit, scale = _shown_unit(path, value)
    if scale == 100:
        return _rate(value) + (" a year" if unit.endswith("/year") else "")
    return plain_number(value)


def _value_at(scenario, path: str):
    node: object = scenario
    for part in path.split("."):
        node = getattr(node, part, None)
    return node


def input_name(path: str, value) -> str:
    """An input's label as the memo shows it: econ.labels.input_label, its unit that of the
    field's description as the app's form shows it (a fraction as "%": its value is shown as a
    percentage), e.g. "Capex › Installation [USD/GPU]" for capex.installation_usd_per_gpu."""
    return input_label(path, _shown_unit(path, value)[0])


COVENANTS = "financing.covenants"
COVENANT_TERMS = ("dscr_floor", "test_months", "first_test_month", "llcr_floor", "ltv_ceiling")
"""The covenant's terms Key assumptions lists (those set, or cited: a DSCR floor always, its
window where there is one): they decide the months in breach and the price cushion."""


COVENANT_DEFAULT = "default: econ's, with no source (a loan agreement's term sheet sets it)"
UNSOURCED = "no source: set in the scenario, which names none for it"
"""Key assumptions' provenance of a covenant term without a source, at econ's default or not
(the embedded scenario writes every field, so a default spelled out in the file reads as one)."""


def _covenant_rows(memo: Memo) -> list[dict]:
    """Key assumptions' rows of the covenant's terms, where there is debt (or the scenario names
    a source for them), each with its provenance: the source the scenario names for it or its
    section, else econ's default or a value given without a source."""
    s = memo.scenario
    cited = any(p == COVENANTS or p.startswith(COVENANTS + ".") for p in s.sources)
    if not memo.summary.get("debt_usd") and not cited:
        return []
    covenants = s.financing.covenants
    rows = []
    for term in COVENANT_TERMS:
        value, path = getattr(covenants, term), f"{COVENANTS}.{term}"
        unused = value is None and term != "dscr_floor"
        unused |= term == "test_months" and covenants.dscr_floor is None  # (no DSCR test)
        if unused and path not in s.sources:
            continue
        source = source_at(path, s.sources)
        if source is None:
            source = COVENANT_DEFAULT if is_default(path, value) else UNSOURCED
        rows.append(
            {
                "path": path,
                "label": input_name(path, value),
                "value": input_text(path, value),
                "number": _is_number(value),
                "source": source,
            }
        )
    return rows


WORDS_NOT_INPUTS = ("schema_version", "name", "description", "throughput.source")
"""Fields of words about the scenario, not inputs to a figure: Key assumptions lists them only
where [sources] cites them (a renamed scenario's "overridden (was: ...)")."""

TAX_TERMS = (
    "financing.tax_rate",
    "financing.tax_payment",
    "financing.tax_loss_limit",
    "financing.tax_valuation_allowance",
)
"""Terms every projection's income tax applies, at econ's default or not: Key assumptions lists
them whatever the scenario sets (the tax paid moves NPV, IRR and the DSCR)."""
LOAN_ONLY_TERMS = (
    "financing.debt_rate_annual",
    "financing.debt_rate_quote",
    "financing.debt_term_months",
    "financing.repayment",
)
"""Terms of debt_share's loan that nothing reads where no debt is raised: Key assumptions leaves
them out then (the debt share and the sizing limits, which say why none is, stay)."""

DEFAULT_USED = "econ's default, with no source"
"""Key assumptions' provenance of an input at econ's default that moves a headline figure."""


def _section_fields(path: str, value) -> list[tuple[str, object]]:
    """A cited input as Key assumptions lists it: a value as itself; a section (a settings group,
    e.g. depreciation.tax) as its fields one a row, those its method reads where it is a
    depreciation method (econ.scenario.depreciation_models.METHOD_INPUTS), unset ones left out."""
    from pydantic import BaseModel

    from econ.scenario.depreciation_models import METHOD_INPUTS

    if not isinstance(value, BaseModel):
        return [(path, value)]
    method = getattr(value, "method", None)
    out: list[tuple[str, object]] = []
    for name in type(value).model_fields:
        if method is not None and name in METHOD_INPUTS and method not in METHOD_INPUTS[name]:
            continue  # (the method does not read it)
        field = getattr(value, name)
        if field is None or field == ():
            continue
        out.extend(_section_fields(f"{path}.{name}", field))
    return out


def _listed_inputs(memo: Memo) -> dict[str, object]:
    """The inputs Key assumptions lists, by path, with their value: each the scenario's [sources]
    names (a section by its fields), each it sets away from econ's default (a list, such as
    throughput.steps or vintages, as one row), and the inputs at econ's default that move a
    headline figure: those the tornado swings (`econ.memo.build.tornado_paths`), the fleet's
    size and the tax terms (TAX_TERMS); the covenant's terms are `_covenant_rows`'. Where no
    debt is raised, the loan's own terms (LOAN_ONLY_TERMS) are left out."""
    from econ.memo.build import tornado_paths
    from econ.workbook import scenario_inputs

    s = memo.scenario
    listed: dict[str, object] = {}
    for path in s.sources:
        listed.update(_section_fields(path, _value_at(s, path)))
    for leaf, value in scenario_inputs(s):
        path = leaf.split("[", 1)[0]  # (a list of tables is one input: its entries)
        if path in listed or path in WORDS_NOT_INPUTS:
            continue
        if "[" in leaf or not is_default(path, value):
            listed[path] = _value_at(s, path)
    for path in (*tornado_paths(s), "fleet.gpu_count", *TAX_TERMS):
        listed.setdefault(path, _value_at(s, path))
    maintenance = s.opex.maintenance_share_of_capex_annual
    if maintenance:  # (the months maintenance waits for: a warranty of 0 charges it at once)
        listed.setdefault("opex.warranty_months", s.opex.warranty_months)
    covenants = [p for p in listed if p == COVENANTS or p.startswith(COVENANTS + ".")]
    moot = LOAN_ONLY_TERMS if not memo.summary.get("debt_usd") and not s.financing.tranches else ()
    for path in (*covenants, *moot):
        listed.pop(path, None)
    return listed


def _assumptions(memo: Memo) -> list[dict]:
    """The inputs that move a headline figure (`_listed_inputs`), by label and path, with their
    value and provenance: the source the scenario names for it or its section, else "no source"
    (set in the scenario without one: UNSOURCED) or econ's default (DEFAULT_USED); the covenant's
    terms with theirs (`_covenant_rows`); then the residual value where none is given."""
    s = memo.scenario
    rows = []
    for path, value in sorted(_listed_inputs(memo).items()):
        source = source_at(path, s.sources)
        cited = _cited_section(path, s.sources)
        if source is None:
            source = DEFAULT_USED if is_default(path, value) else UNSOURCED
        elif cited and rows and _cited_section(rows[-1]["path"], s.sources) == cited:
            # a section's fields, one a row: its source said once, on the first
            source = f"as above ({input_name(cited, None)})"
        rows.append(
            {
                "path": path,
                "label": input_name(path, value),
                "value": input_text(path, value),
                "number": _is_number(value),
                "source": source,
            }
        )
    rows = sorted(rows + _covenant_rows(memo), key=lambda row: row["path"])
    residual = _residual_at_book(memo)
    if residual is not None:
        rows.append(residual)
    return rows


def _cited_section(path: str, sources) -> str | None:
    """The section of `path` whose [sources] entry is its source (`source_at`), or None where
    the path has its own entry or none."""
    parts = path.split(".")
    for end in range(len(parts) - 1, 0, -1):
        if sources.get(".".join(parts[:end])):
            return None if sources.get(path) else ".".join(parts[:end])
    return None


def _is_number(value) -> bool:
    """Whether a Key assumptions value is shown as a number (right-aligned, never wrapped)."""
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _description_note(memo: Memo) -> str | None:
    """The note under the description where overrides changed the scenario (`--set`: [sources]
    entries "overridden (...)") but not its description: the description is the file's, and
    may not say what the overrides changed (a renamed scenario, a fleet retired early)."""
    sources = memo.scenario.sources
    if sources.get("description", "").startswith(OVERRIDDEN + " ("):
        return None
    changed = [p for p, source in sorted(sources.items()) if source.startswith(OVERRIDDEN + " (")]
    if not changed:
        return None
    names = [input_name(p, _value_at(memo.scenario, p)) for p in changed]
    return (
        "This description is the scenario file's, written before the "
        f"{counted(len(names), 'override')} listed under Key assumptions ({'; '.join(names)}): "
        "it may not describe them."
    )


def _residual_at_book(memo: Memo) -> dict | None:
    """The Key assumptions row of a residual value no input gives: GPUs sold at retirement (or at
    the horizon's end) at their book value, for want of a resale table or a sale value; None
    where nothing is sold that way."""
    s = memo.scenario
    sold = float(memo.monthly["disposal_usd"].sum())
    given = s.market.has_resale or all(
        row.depreciation.sale_value_share is not None for row in s.expand()
    )
    if given or sold <= 0:
        return None
    salvage = any(row.depreciation.salvage_share for row in s.expand())
    return {
        "path": "",
        "label": "Residual value",
        "value": f"{sold:,.0f} USD",
        "number": True,
        "source": "none given: what is on the books when retired, or still held when the "
        "projection ends (the GPUs, and a site's build-out or liquid retrofit), is assumed sold "
        "at its book value"
        + (", which holds the salvage value depreciation.salvage_share leaves" if salvage else "")
        + ", as no resale table (market.resale_value_table or resale_series) or "
        "depreciation.sale_value_share is set; a lender haircuts residual value (a distressed "
        "sale near 0.45 of an orderly one, SpotWire 2026: docs/financing.md)",
    }


def html(memo: Memo) -> str:
    """The memo as one self-contained HTML document."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("econ.memo", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    warnings = memo.summary.get("warnings", [])
    # a covenant is tested where its months in breach are a figure (econ.memo.build._figure)
    tested = memo.figures.get("base.covenant_breach_months") is not None
    headline = [
        {
            "key": key,
            "label": label,
            "unit": unit,
            "text": figure_text(f"base.{key}", memo.figures[f"base.{key}"]),
            "value": _value_attr(memo.figures[f"base.{key}"]),
            "notes": _row_notes(
                warnings,
                key,
                memo.figures[f"base.{key}"],
                tested,
                debt=bool(memo.summary.get("debt_usd")),
            ),
        }
        for key, label, unit, _fmt in shown(summary=memo.summary)
    ]
    cases = ["base", *memo.cases]
    footnotes, case_notes, roots_rule = _case_notes(memo, cases)
    case_table = []
    for key, label, unit, _fmt in case_rows(memo.summary):
        cells = []
        for name in cases:
            value = memo.figures[f"{name}.{key}"]
            cells.append(
                {
                    "key": f"{name}.{key}",
                    "text": figure_text(f"{name}.{key}", value),
                    "value": _value_attr(value),
                    # the base case's cells repeat the headline figure: verify checks them alike
                    "verify": name != "base",
                    "notes": ",".join(map(str, footnotes.get(f"{name}.{key}", ()))),
                }
            )
        case_table.append({"label": label, "unit": unit, "cells": cells})
    tornado_rows = [
        {
            "input": row["input"],
            "label": input_name(row["input"], row["low"]),
            "low": input_text(row["input"], row["low"]),
            "high": input_text(row["input"], row["high"]),
            "note": row.get("note", ""),
            "cells": [
                {
                    "key": f"tornado.{row['input']}.{side}",
                    "text": figure_text(
                        f"tornado.{row['input']}.{side}",
                        memo.figures[f"tornado.{row['input']}.{side}"],
                    ),
                    "value": _value_attr(memo.figures[f"tornado.{row['input']}.{side}"]),
                }
                for side in ("low", "high")
            ],
        }
        for row in memo.tornado["rows"]
    ]
    return env.get_template("memo.html.j2").render(
        memo=memo,
        scenario=memo.scenario,
        stamp=memo.stamp,
        stamp_json=stamp_json(memo.stamp),
        stamp_id=STAMP_ID,
        ask=_ask(memo),
        cushion=_cushion(memo),
        definitions=_definitions(memo),
        headline=headline,
        cases=cases,
        case_overrides={
            name: c["overrides"] for name, c in memo.cases.items() if not c.get("montecarlo")
        },
        montecarlo=memo.stamp.get("montecarlo"),
        held=_held_loan(memo),
        rate_notes=_rate_notes(memo),
        case_table=case_table,
        case_notes=case_notes,
        roots_rule=roots_rule,
        tornado_rows=tornado_rows,
        tornado=memo.tornado,
        charts=charts(memo),
        dscr_window=_test_window(memo),
        assumptions=_assumptions(memo),
        description_note=_description_note(memo),
        warnings=_shown_warnings(warnings),
    )


def chromium() -> str | None:
    """Path of a headless Chromium, or None."""
    for name in (os.environ.get("ECON_CHROMIUM"), *CHROMIUM):
        if name and (path := shutil.which(name)):
            return path
    return None


def pdf(html_text: str, stamp: dict) -> bytes:
    """Print the HTML to PDF with headless Chromium and attach the stamp."""
    browser = chromium()
    if browser is None:
        raise RenderError(NO_CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="econ-memo-") as folder:
        source, target = Path(folder) / "memo.html", Path(folder) / "memo.pdf"
        source.write_text(html_text, encoding="utf-8")
        command = [
            browser,
            *CHROMIUM_ARGS,
            f"--user-data-dir={folder}/profile",
            f"--print-to-pdf={target}",
            source.as_uri(),
        ]
        try:
            done = subprocess.run(command, capture_output=True, timeout=180, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RenderError(f"{browser} could not print the memo to PDF: {exc}") from None
        if not target.is_file() or target.stat().st_size == 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise RenderError(
                f"{browser} exited with {done.returncode} without writing the PDF"
                + (f": {tail[0]}" if tail else "")
            )
        return attach_stamp(target.read_bytes(), stamp)


def attach_stamp(pdf_bytes: bytes, stamp: dict) -> bytes:
    """The PDF with the stamp as an embedded file and in the document information."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes)))
    text = json.dumps(stamp, ensure_ascii=False, allow_nan=False, sort_keys=True)
    writer.add_attachment(STAMP_FILE, text.encode("utf-8"))
    # Chromium dates the PDF by the clock; the stamp's creation time (which SOURCE_DATE_EPOCH
    # fixes) dates it instead, so a rerun can be identical byte for byte.
    date = "D:" + stamp["created_utc"].replace("-", "").replace(":", "").replace("T", "")
    date = date.removesuffix("Z") + "+00'00'"
    writer.add_metadata(
        {
            "/Title": f"Investment memo: {stamp['scenario_name']}",
            "/Creator": f"econ {stamp['econ_version']}",
            "/CreationDate": date,
            "/ModDate": date,
            "/EconScenarioSha256": stamp["scenario_sha256"],
            PDF_STAMP_KEY: text,
        }
    )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
