"""Results: headline metrics, cost per million tokens by component, monthly revenue against costs,
cumulative cash, debt and DSCR, the annual P&L, and every summary metric the engine reports.
"""

from __future__ import annotations

import re

import altair as alt
import pandas as pd
import streamlit as st

from econ.engine import DEBT_SCHEDULE, annual_table, debt_schedule_table
from econ.ui import charts, common, compute, state
from econ.ui.fmt import (
    HEADLINE,
    IRR_KEYS,
    column_label,
    format_metric,
    format_value,
    irr_note,
    is_missing,
    literal,
    metric_kind,
    metric_label,
    readable,
    readable_warning,
    scaled_money,
    severe_first,
)

# Page scripts run with Streamlit's "magic": a bare string would be drawn, so notes are comments.
# Monthly cost lines stacked against revenue (profit-and-loss view; capex enters as depreciation).
COSTS = (
    "power_usd",
    "facility_usd",
    "opex_usd",
    "depreciation_usd",
    "impairment_usd",
    "interest_usd",
    "tax_usd",
)

# Annual P&L rows, summed over each asset year (year 1 = months 0-12, as in the workbook).
# Flows only: balances (debt, deferred tax liability) do not sum over a year.
PNL = (
    "revenue_usd",
    "token_revenue_usd",
    "contract_revenue_usd",
    "spot_revenue_usd",
    "power_usd",
    "facility_usd",
    "opex_usd",
    "ebitda_usd",
    "depreciation_usd",
    "impairment_usd",
    "ebit_usd",
    "gain_on_disposal_usd",
    "interest_usd",
    "tax_usd",
    "deferred_tax_usd",
    "net_income_usd",
    "capex_usd",
    "disposal_usd",
    "principal_usd",
    "debt_service_usd",
    "cash_flow_project_usd",
    "cash_flow_equity_usd",
)

SECOND_ROW = ("capex_usd_total", "revenue_usd_total", "ebitda_usd_total", "tokens_total")
LOWER_IS_BETTER = {
    "lcot_usd_per_mtok",
    "breakeven_price_usd_per_mtok",
    "payback_months",
    "cost_usd_per_gpu_hour",
}
"""Tiles whose rise is drawn red: costs, a break-even price, the months to pay back."""
NEITHER = {"capex_usd_total", "debt_usd_total"}
"""Tiles whose change is drawn grey: more capex or debt is a bigger project, neither better nor
worse by itself. Every other tile's rise is drawn green (tests check each tile is placed)."""


def headline(
    summary: dict, base: dict | None, money: str, notes: dict[str, str] | None = None
) -> None:
    """The headline tiles, with each one's change from `base`; `notes` (key -> text) are shown
    under their tiles."""
    keys = [k for k in HEADLINE if k in summary] + [k for k in SECOND_ROW if k in summary]
    for start in range(0, len(keys), 4):
        cols = st.columns(4)
        for col, key in zip(cols, keys[start : start + 4], strict=False):
            delta = None
            if base is not None:
                now, before = summary.get(key), base.get(key)
                if (
                    isinstance(now, int | float)
                    and isinstance(before, int | float)
                    and now != before
                ):
                    change = now - before
                    kind = metric_kind(key)
                    delta = (
                        f"{change * 100:+.1f} pts"
                        if kind == "pct"
                        else "+" * (change > 0) + format_value(change, kind, money)
                    )
                    if not any(ch in "123456789" for ch in delta):
                        delta = None  # a change too small to show
            note = irr_note(key, summary) or (notes or {}).get(key)
            note = literal(note) if note else None
            col.metric(
                metric_label(key, money),
                format_metric(key, summary, money),
                delta=delta,
                delta_color=delta_colour(key),
                help=note or (None if delta is None else "Change from the unedited scenario"),
                border=True,
            )
            if note:
                col.caption(note)


def delta_colour(key: str) -> str:
    """How a tile's change is coloured: a fall is good for LOWER_IS_BETTER, grey for NEITHER."""
    if key in LOWER_IS_BETTER:
        return "inverse"
    return "off" if key in NEITHER else "normal"


YEARS = {"asset": "Asset years", "calendar": "Calendar years"}


def year_labels(monthly: pd.DataFrame, years: str) -> list[str]:
    """Column headings: "Year 1" or "2026", with "(9 months)" after a partial year and
    "(purchase only)" for a calendar year that holds only the purchase month (no service)."""
    months = debt_schedule_table(monthly, years)["months"].droplevel("scenario")

    def note(n: int) -> str:
        if n >= 12:
            return ""
        return " (purchase only)" if n == 0 else f" ({n} month{'' if n == 1 else 's'})"

    return [(f"Year {y}" if years == "asset" else str(y)) + note(n) for y, n in months.items()]


def annual(monthly: pd.DataFrame, money: str, years: str = "asset") -> pd.DataFrame:
    """Line items summed by asset or calendar year (annual_table), years as columns."""
    frame = annual_table(monthly, years).droplevel("scenario")
    rows = [c for c in PNL if c in frame.columns]
    table = charts.money(frame[rows], rows, money).T
    # the unit in the table's corner, so that its CSV download (the toolbar's) carries it too
    table.index = pd.Index([column_label(c) for c in rows], name=f"Line item [{money}]")
    table.columns = year_labels(monthly, years)
    return table


def debt_schedule(
    monthly: pd.DataFrame, money: str, years: str = "asset", dscr_floor: float | None = None
) -> pd.DataFrame:
    """debt_schedule_table with labelled rows (money in `money`) and years as columns."""
    frame = debt_schedule_table(monthly, years, dscr_floor).droplevel("scenario")
    rows = [c for c in DEBT_SCHEDULE if c != "months"]
    rows = [c for c in rows if dscr_floor is not None or c != "dscr_less_floor"]
    money_rows = [c for c in rows if c.endswith("_usd")]
    table = charts.money(frame[rows], money_rows, money).T
    table.index = [DEBT_SCHEDULE[c].replace("[USD]", f"[{money}]") for c in rows]
    table.columns = year_labels(monthly, years)
    return table


def schedule_text(schedule: pd.DataFrame, money: str) -> pd.DataFrame:
    """The debt schedule as text: money in the display scale (fmt.scaled_money: 4 decimals for an
    amount too small for 2), ratios ([x]) to 2 decimals and "n/a" in a year without debt
    service, as the tiles write it (Streamlit's table shows a missing number as "None" whatever
    a Styler's na_rep says, so the cells are written here)."""
    out = schedule.astype(object)
    for label in schedule.index:
        ratio = label.endswith("[x]")
        out.loc[label] = [
            "n/a" if is_missing(v) else f"{v:.2f}" if ratio else scaled_money(v, money)
            for v in schedule.loc[label]
        ]
    return out


BREAKEVEN_COLOUR = "#e45756"
PRICE_COLOUR = "#54a24b"


def contract_note(market) -> str | None:
    """Where GPUs earn GPU-hour prices (a rental contract, or spot capacity sold as GPU-hours),
    what the fleet's token figures count: every GPU's tokens (docs/glossary.md, `tokens_total`),
    theirs too, though they sell no tokens. None where every GPU sells tokens."""
    share = getattr(market, "contract_share", 0.0)
    hours = getattr(market, "spot_sells", "tokens") == "gpu_hours"
    if not (share > 0 or hours):
        return None
    parts = []
    if share > 0:
        term = market.contract_term_months
        renewal = f", renewed at the market rate every {term} months" if term else ""
        price = f"{market.contract_usd_per_gpu_hour:,.2f} USD/GPU-hour{renewal}"
        parts.append(f"{share * 100:.3g}% of them on contract at {price}")
    if hours and share < 1:
        parts.append(f"{(1 - share) * 100:.3g}% rented as spot GPU-hours")
    return "all GPUs' tokens, " + " and ".join(parts)


def _month_one_price(scenario) -> float | None:
    """The scenario's month-1 output token price where it is one number (not a price table)."""
    market = getattr(scenario, "market", None)
    if market is None or market.price_table:
        return None
    return market.price_usd_per_mtok


def cost_chart(summary: dict, scenario) -> tuple[alt.Chart, str]:
    """The levelized cost waterfall with the break-even price (the month-1 price at which the
    NPV after tax is 0) and the scenario's month-1 price as dashed lines, and its caption.

    The bars are a constant price before income tax; the lines are month-1 prices of a path that
    then falls, after tax: the caption says why a price above the bars can still lose money."""
    parts = summary.get("cost_usd_per_mtok_by_component") or {}
    clean = {k.capitalize(): (v or 0.0) for k, v in parts.items()}
    chart = charts.waterfall(clean, "Levelized cost", "USD per million output tokens")
    breakeven = summary.get("breakeven_price_usd_per_mtok")
    breakeven = None if is_missing(breakeven) else float(breakeven)
    price = _month_one_price(scenario)
    lines = []
    if breakeven is not None:
        lines.append((breakeven, "Break-even price, month 1", BREAKEVEN_COLOUR, (6, 3)))
    if price:
        lines.append((price, "Token price, month 1", PRICE_COLOUR, (2, 3)))
    # The lower line's label goes under it, so that two close prices keep both labels readable.
    low = min((v for v, *_ in lines), default=None)
    for value, label, colour, dash in lines:
        below = len(lines) > 1 and value == low
        chart = alt.layer(chart, charts.rule(value, label, dash=dash, colour=colour, below=below))
    rate = float(summary.get("discount_rate_annual") or 0.0) * 100
    text = (
        "Bars: levelized cost, the present value of each cost over the present value of the "
        f"tokens at the {rate:.3g}% discount rate, before income tax: the one constant price "
        "over the horizon that pays every cost and the return on capital at that rate."
    )
    market = getattr(scenario, "market", None)
    path = "follows its price table"
    if market is not None and not market.price_table:
        decline = market.price_decline_annual * 100
        path = f"falls {decline:.3g}% a year" if decline else "stays flat"
    if breakeven is not None:
        text += (
            " Dashed lines: month-1 prices, each then following the scenario's price path (it "
            f"{path}): the break-even price, at which the NPV after income tax is 0, and the "
            "scenario's token price. A month-1 price above the bars can still lose money: a "
            "falling price ends below the levelized cost, and the break-even price pays income "
            "tax too."
        )
        if price is not None:
            verdict = "below" if price < breakeven else "at or above"
            text += f" The token price is {verdict} the break-even price: NPV "
            text += "< 0." if price < breakeven else "≥ 0."
    else:
        text += (
            " Dashed line: the scenario's token price in month 1 (the price "
            f"{path}). No break-even price: no token price sets the NPV to 0 (the warnings "
            "above say why)."
        )
    note = contract_note(market) if market is not None else None
    if note:
        text += (
            f" Costs of the whole fleet over {note}: GPUs on contract or rented by the hour "
            "earn GPU-hour prices, not the token price; only the other GPUs' tokens earn it."
        )
    return chart, text


_NO_DEBT_BECAUSE = re.compile(r"no debt because (.+?)(?:; \w+ holds this debt|$)")


def no_debt_text(scenario, summary: dict) -> str:
    """Why the Results page has no debt chart: no debt asked for, or a loan sized to zero, with
    the engine's reason (its sizing warning's "no debt because ...")."""
    financing = getattr(scenario, "financing", None)
    asked = financing is not None and (
        getattr(financing, "debt_share", 0) > 0
        or getattr(financing, "debt_usd", None)
        or getattr(financing, "tranches", ())
    )
    if not asked:
        return "No debt in this scenario: no balance and no DSCR."
    for warning in summary.get("warnings") or ():
        found = _NO_DEBT_BECAUSE.search(warning)
        if found:
            share = getattr(financing, "debt_share", 0)
            loan = f"The loan (up to {share:.0%} of capex)" if share else "The loan"
            return (
                f"{loan} sized to zero: no debt because {found.group(1)}. No balance and no DSCR."
            )
    return "The scenario's debt is zero: no balance and no DSCR."


def render() -> None:
    st.title("Results")
    current = common.require_scenario("the results")
    if current is None:
        return
    scenario, money = current.scenario, common.money()
    st.caption(f"**{literal(scenario.name)}**: {literal(scenario.description)}")
    result = compute.attempt(lambda: compute.projection(current.text), "Projection")
    if result is None:
        return
    summary, monthly = result["summary"], result["monthly"]
    base = None
    if state.edited():
        base_check = state.validate(st.session_state[state.BASE])
        if base_check.ok:
            base_result = compute.attempt(
                lambda: compute.projection(state.scenario_text(base_check.scenario)),
                "Projection of the unedited scenario",
            )
            base = None if base_result is None else base_result["summary"]
    fleet_note = contract_note(getattr(scenario, "market", None))
    notes = (
        {
            "tokens_total": fleet_note[0].upper() + fleet_note[1:],
            "lcot_usd_per_mtok": f"The whole fleet's costs over {fleet_note}",
        }
        if fleet_note
        else None
    )
    headline(summary, base, money, notes)
    common.first_figures_drawn()
    # an IRR's note is under its tile already (irr_note): not again in the box
    notes = {irr_note(key, summary) for key in IRR_KEYS if key in HEADLINE}
    warnings = [w for w in summary.get("warnings", []) if readable_warning(w) not in notes]
    if warnings:
        st.warning(
            "\n".join(f"- {literal(readable_warning(w))}" for w in severe_first(warnings)),
            icon=":material/warning:",
        )

    fmt = charts.usd_format(money)
    in_service = charts.money(
        monthly[monthly["month"] >= 1],
        [c for c in monthly.columns if c.endswith("_usd")],
        money,
    )
    left, right = st.columns(2)
    with left:
        st.subheader("Cost per million tokens by component")
        chart, caption = cost_chart(summary, scenario)
        charts.show(chart)
        st.caption(caption)
    with right:
        st.subheader("Monthly revenue against costs")
        costs = {c: column_label(c) for c in COSTS if c in in_service.columns}
        charts.show(
            charts.stacked_costs_and_revenue(
                in_service, costs, "revenue_usd", "Month", f"{money} per month", fmt
            )
        )
        st.caption("Areas: costs, stacked. Dashed line: revenue.")

    left, right = st.columns(2)
    with left:
        st.subheader("Cumulative cash")
        cash = [c for c in ("cash_flow_project_usd", "cash_flow_equity_usd") if c in monthly]
        cumulative = charts.money(monthly[["date", *cash]], cash, money)
        cumulative[cash] = cumulative[cash].cumsum()
        labels = {"cash_flow_project_usd": "Project", "cash_flow_equity_usd": "Equity"}
        chart = charts.lines(
            cumulative, "date", {c: labels[c] for c in cash}, "Month", f"Cumulative {money}", fmt
        )
        charts.show(alt.layer(chart, charts.zero_line()))
        st.caption(
            "Undiscounted cash flows summed from the purchase month (month 0); grey line: zero, "
            "where the cash spent is earned back."
        )
    with right:
        st.subheader("Debt balance and DSCR")
        if "debt_balance_usd" in monthly and monthly["debt_balance_usd"].abs().sum() > 0:
            covenants = scenario.financing.covenants
            # the floor is read against the DSCR the covenant tests (its trailing window, as
            # the headroom tile measures it), each month's own drawn beside it
            window = charts.dscr_test_window(covenants)
            charts.show(
                charts.debt_and_dscr(monthly, money, covenants.dscr_floor, window, legend_columns=1)
            )
            lines = (
                f"Lines: the DSCR the covenant tests, cash available for debt service over "
                f"interest and principal due summed over the trailing {window} months, and each "
                "month's own DSCR, lighter (right axis)"
                if window
                else "Line: debt service coverage, cash available for debt service over interest "
                "and principal due (right axis)"
            )
            floor = "; dashed: the covenant's DSCR floor" if covenants.dscr_floor else ""
            st.caption(f"Area: debt outstanding at month end (left axis). {lines}{floor}.")
        else:
            st.info(no_debt_text(scenario, summary), icon=":material/info:")

    years = st.radio(
        "Years", list(YEARS), format_func=YEARS.get, horizontal=True, key="results_years"
    )
    st.subheader(f"Annual P&L and cash flow [{money}]")
    pnl = annual(monthly, money, years)
    common.table(pnl.style.format(lambda v: scaled_money(v, money)), rows=len(pnl))
    st.caption(
        "Sums over each asset year (year 1 = the purchase month and the first 12 months of "
        "service, as in the workbook) or calendar year; a partial year shows its months of "
        "service. Costs positive, cash-flow outflows negative."
    )
    if monthly["debt_balance_usd"].abs().sum() > 0:
        st.subheader("Debt schedule by year")
        floor = scenario.financing.covenants.dscr_floor
        schedule = debt_schedule(monthly, money, years, floor)
        common.table(
            schedule_text(schedule, money),
            rows=len(schedule),
            column_config={
                "_index": st.column_config.Column(width="large"),  # labels with units uncut
                **{c: st.column_config.TextColumn(c, alignment="right") for c in schedule.columns},
            },
        )
        st.caption(
            "Closing = opening + draws - principal. DSCR, year: the year's cash available for "
            "debt service (EBITDA - tax paid) over its interest and principal due; LLCR at the "
            "year's last month; headroom = DSCR, year - the covenant's floor."
        )

    vintages = result.get("vintages")
    if vintages is not None and len(vintages):
        with st.expander("Fleet vintages", icon=":material/layers:"):
            common.table(readable(vintages, money), hide_index=True)
    with st.expander("Every summary metric", icon=":material/table:"):
        rows = [
            {"metric": metric_label(k, money), "value": format_metric(k, summary, money), "key": k}
            for k in summary
            if k not in ("warnings", "cost_usd_per_mtok_by_component")
        ]
        rows += [
            {
                "metric": f"Cost per million tokens: {part} [USD/M tokens]",
                "value": format_value(value, "usd_per_mtok"),
                "key": f"cost_usd_per_mtok_by_component.{part}",
            }
            for part, value in (summary.get("cost_usd_per_mtok_by_component") or {}).items()
        ]
        common.table(pd.DataFrame(rows), hide_index=True, width="stretch")
    with st.expander("Chart any monthly line", icon=":material/show_chart:"):
        numeric = [c for c in monthly.columns if c not in ("scenario", "month", "date")]
        numeric = [c for c in numeric if pd.api.types.is_numeric_dtype(monthly[c])]
        picked = st.multiselect(
            "Lines",
            numeric,
            default=[c for c in ("ebitda_usd", "net_income_usd") if c in numeric],
            format_func=column_label,
            key="econ.results_lines",
        )
        if picked:
            money_cols = [c for c in picked if c.endswith("_usd")]
            frame = charts.money(monthly[["date", *picked]], money_cols, money)
            unit = money if money_cols and len(money_cols) == len(picked) else "value"
            charts.show(
                charts.lines(
                    frame,
                    "date",
                    {c: column_label(c).strip() for c in picked},
                    "Month",
                    f"{unit} per month",
                    ",.4~s" if unit == "value" else fmt,
                )
            )
    with st.expander("Monthly schedule", icon=":material/calendar_month:"):
        common.table(readable(monthly, money), hide_index=True)
    with st.expander("Sources of the inputs", icon=":material/menu_book:"):
        if scenario.sources:
            common.table(
                pd.DataFrame(sorted(scenario.sources.items()), columns=["input", "source"]),
                hide_index=True,
                width="stretch",
            )
        else:
            st.caption("This scenario names no sources.")


if __name__ == "__main__":
    common.run_page(render)
