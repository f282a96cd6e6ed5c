"""Software gains: what a throughput gain on installed GPUs is worth. Base against gain trajectory,
the value per GPU, rack and fleet, the NPV bridge by driver, and the break-even gains (the rate that
holds margin under token price deflation, the gain an asset needs to earn its cost of capital).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd
import streamlit as st

from econ.gains import (
    COMPARED_METRICS,
    FINANCING_DRIVER,
    bare_fraction_note,
    steps_text,
    trajectory_text,
    vintage_gains,
    vintage_steps_replaced,
    year_label,
)
from econ.ui import charts, common, compute
from econ.ui.fmt import (
    USD_PER_UNIT,
    format_change,
    format_value,
    is_missing,
    literal,
    metric_kind,
    metric_label,
    money_label,
    readable_warning,
    scaled_money,
    severe_first,
)

STEPS = "econ.gain_steps"
FROM_ROW = "econ.gain_from_row"
TO_ROW = "econ.gain_to_row"
VALUE_ROWS = (
    ("npv_usd_per_gpu", "NPV of the gain per GPU [USD]", USD_PER_UNIT),
    ("npv_usd_per_rack", "NPV of the gain per rack [USD]", USD_PER_UNIT),
    ("npv_usd_fleet", "NPV of the gain, fleet [USD]", "usd"),
    ("lcot_change_usd_per_mtok", "Change in levelized cost [USD/M tokens]", "usd_per_mtok"),
    ("lcot_change_share", "Change in levelized cost [%]", "pct"),
    ("tokens_change_share", "Change in tokens [%]", "pct"),
    ("irr_project_change", "Change in project IRR [pts]", "pct"),
    ("payback_change_months", "Change in payback [months]", "months"),
    ("gpus_avoided", "GPUs not bought for the same tokens [GPUs]", "decimal"),
    ("capex_avoided_usd", "Capex avoided [USD]", "usd"),
)
_BARE = [label.rsplit(" [", 1)[0] for _, label, _ in VALUE_ROWS]
VALUE_LABELS = {
    # without the unit, unless two tiles share the rest ("Change in levelized cost [%]")
    **{
        key: bare if _BARE.count(bare) == 1 else label
        for (key, label, _), bare in zip(VALUE_ROWS, _BARE, strict=True)
    },
    "racks_avoided": "Racks not bought for the same tokens",  # not a tile (GPUs are)
}
"""The gain's figures by the tiles' labels, for the warnings that name them."""
_VALUE_KEY = re.compile(
    r"(?<![\w.])(" + "|".join(sorted(map(re.escape, VALUE_LABELS), key=len, reverse=True)) + r")\b"
)


def gain_warning(text: str) -> str:
    """A warning of the gain's valuation in the app's words: the gain's figures by the tiles'
    labels ("npv_usd_fleet" -> "“NPV of the gain, fleet”", a label with a comma in quotes, as
    `readable_warning` writes one), then the cases' summary keys by theirs."""

    def label(match: re.Match) -> str:
        name = VALUE_LABELS[match.group(1)]
        return f"“{name}”" if "," in name else name

    return readable_warning(_VALUE_KEY.sub(label, text))


CASES = {"base": "Base case", "gain": "Gain case"}
"""How the warnings of the projections without and with the gains are labelled."""


def case_warnings(result) -> list[str]:
    """The warnings of the projections without the gains and with them, each labelled with its
    case ("Base case: ...", "Gain case: ...", as `econ gains` prints "warning [base]: ..."),
    severe ones first, in the app's words: a figure on the tiles, such as the change in
    payback, may be n/a because a case's own figure is null, and they say why."""
    return [
        f"{label}: {readable_warning(warning)}"
        for case, label in CASES.items()
        for warning in severe_first(getattr(result, case)["warnings"])
    ]


STATUS = {
    "solved": "",
    "met_at_lower_bound": "met even at the lowest gain tried",
    "unreachable": "not reachable",
}


def _steps(text: str):
    lines = [line for line in (st.session_state.get(STEPS) or "").splitlines() if line.strip()]
    if not lines:
        return None
    return compute.attempt(lambda: compute.parse_steps(lines, text), "Gain steps")


def value_section(result, money: str) -> None:
    value = result.value
    keys = [row for row in VALUE_ROWS if row[0] in value]
    for start in range(0, len(keys), 5):
        cols = st.columns(5)
        for col, (key, label, kind) in zip(cols, keys[start : start + 5], strict=False):
            number = value[key]
            number = float(number) if number is not None else None
            text = format_value(number, kind, money)  # n/a where undefined (None, NaN)
            if kind == "pct" and not is_missing(number):
                text = f"{number:+.1%}" if "IRR" not in label else f"{number * 100:+.1f}"
            col.metric(money_label(label, kind, money), text, border=True)


def compare_table(result, money: str) -> pd.DataFrame:
    rows = []
    for key in COMPARED_METRICS:
        if key not in result.base:
            continue
        kind = metric_kind(key)
        rows.append(
            {
                "metric": metric_label(key, money),
                "without the gains": format_value(result.base.get(key), kind, money),
                "with the gains": format_value(result.gain.get(key), kind, money),
                "change": format_change(result.delta.get(key), kind, money),
            }
        )
    return pd.DataFrame(rows)


def breakevens(current) -> None:
    scenario = current.scenario
    st.subheader("Break-even gains")
    on = st.toggle(
        "Solve the break-even gains",
        key=common.keep("econ.breakevens_on", False),
        help="Each curve is solved by bisection over a batch of scenarios (about half a second "
        "each); once on, they follow every change of the scenario.",
    )
    if not on:
        st.caption(
            "The annual gain that holds margin under token price deflation, and the gain the "
            "asset needs to earn its cost of capital over its life: switch on to solve them."
        )
        return
    left, right = st.columns(2)
    with left:
        st.markdown("**Annual gain that holds margin under token price deflation**")
        metric = st.selectbox(
            "Margin measure",
            ["ebitda_usd_total", "npv_usd"],
            format_func=lambda k: metric_label(k),
            key=common.keep("econ.hold_metric", "ebitda_usd_total"),
        )
        declines = tuple(np.round(np.linspace(0.0, 0.8, 9), 2))
        solution = compute.attempt(
            lambda: compute.hold_margin(current.text, declines, metric), "Break-even gain rate"
        )
        if solution is not None:
            frame = pd.DataFrame(
                {
                    "decline": np.asarray(declines) * 100,
                    "gain": np.asarray(solution.value) * 100,
                    "status": [STATUS.get(s, s) for s in solution.status],
                }
            )
            chart = charts.lines(
                frame,
                "decline",
                {"gain": "Annual gain needed"},
                "Token price decline [%/year]",
                "Throughput gain needed [%/year]",
                ",.1f",
                x_type="Q",
            )
            charts.show(chart)
            st.caption(
                "The compound annual gain in tokens/s per GPU at which the margin equals the "
                "margin at flat prices and no gain (the scenario's steps kept). Scenario's own "
                f"decline: {scenario.market.price_decline_annual:.0%}/year."
            )
            odd = frame[frame["status"] != ""]
            if len(odd):
                common.table(odd, hide_index=True)
    with right:
        st.markdown("**Gain the asset needs to earn its cost of capital**")
        cols = st.columns(2)
        variable = cols[0].selectbox(
            "Gain as",
            ["rate", "step"],
            format_func=lambda v: {"rate": "Compound annual rate", "step": "One step"}[v],
            key=common.keep("econ.coc_variable", "rate"),
        )
        step_month = None
        lives = (3.0, 4.0, 5.0, 6.0, 7.0)
        if variable == "step":
            # (the range checked in words, not by a min_value: a box given one kept a 0 typed in
            # it on screen while the page went on with the month before, saying nothing)
            last = int(min(lives) * 12)  # the shortest life's last month: the step is in each
            step_month = common.whole_number_input(
                cols[1],
                "Step month",
                within=(1, last),
                key=common.keep("econ.coc_month", 5),
                help=f"Month of the one-time step (1 = the first service month), within the "
                f"shortest life solved ({min(lives):g} years, month {last}).",
            )
            if step_month is None:
                if st.session_state.get("econ.coc_month") is None:  # (empty: else refused above)
                    st.error(f"Give the month of the step (1 to {last}).", icon=":material/error:")
                return
        solution = compute.attempt(
            lambda: compute.cost_of_capital_gain(current.text, lives, None, variable, step_month),
            "Gain to earn the cost of capital",
        )
        if solution is not None:
            frame = pd.DataFrame(
                {
                    "life": lives,
                    "gain": np.asarray(solution.value) * 100,
                    "status": [STATUS.get(s, s) for s in solution.status],
                }
            )
            title = "Gain needed [%/year]" if variable == "rate" else "Step needed [%]"
            charts.show(
                charts.lines(
                    frame,
                    "life",
                    {"gain": title},
                    "Service and book life [years]",
                    title,
                    ",.1f",
                    x_type="Q",
                )
            )
            st.caption(
                "The gain at which NPV is zero at the scenario's discount rate "
                f"({scenario.financing.discount_rate_annual:.1%}/year) when the GPUs serve and "
                "depreciate over the life shown, without the scenario's own gains. Below zero: "
                "headroom, the asset earns its cost of capital even if throughput falls."
            )
            odd = frame[frame["status"] != ""]
            if len(odd):
                common.table(odd, hide_index=True)


def _described(what: str, steps, scenario, typed: bool = False) -> str:
    """The gains valued in words: the steps (typed ones as (month, gain, label), or the
    scenario's with their rollout), the trajectory, and each vintage's own gains (its steps,
    unless typed steps replace them)."""
    rows = [dict(zip(("month", "gain", "label"), s, strict=True)) if typed else s for s in steps]
    parts = [steps_text(rows) or "no steps", trajectory_text(scenario.throughput)]
    for vintage in vintage_gains(scenario):
        own = [steps_text([] if typed else vintage["steps"]), vintage["trajectory"]]
        if any(own):
            parts.append(f"vintage {vintage['vintage']}: " + "; ".join(p for p in own if p))
    return literal(
        f"{what}: "
        + "; ".join(part for part in parts if part)
        + ". Valued against the same scenario without them."
    )


def render() -> None:
    st.title("Software gains")
    current = common.require_scenario("the value of software gains")
    if current is None:
        return
    scenario, money = current.scenario, common.money()
    caption = st.empty()  # filled once the steps being valued are known (typed or the scenario's)
    caption.caption(_described("The scenario's gains", scenario.throughput.steps, scenario))
    st.text_area(
        "Try other steps instead (one per line: WHEN:GAIN or WHEN:GAIN:LABEL)",
        key=common.keep(STEPS, ""),
        placeholder="2026-09:+19.8%:serving stack v2\n18:+10%",
        height=90,
        help="WHEN is a date (YYYY-MM) or a month number (1 = the first service month); GAIN a "
        "percentage or a fraction. Empty = the scenario's own gains.",
    )
    steps = _steps(current.text)
    if steps is None and st.session_state.get(STEPS, "").strip():
        return
    cols = st.columns(2)
    from_id = cols[0].text_input(
        "Or a step from two catalog rows: earlier row id",
        key=common.keep(FROM_ROW, ""),
        placeholder="v6.0-6f6e7f09",
        help="Ids from the Row ID column of the Throughput page's Benchmark catalog; the step is "
        "the later row's per-GPU throughput over the earlier's, in the month the later was "
        "published.",
    )
    to_id = cols[1].text_input(
        "later row id", key=common.keep(TO_ROW, ""), placeholder="v6.1-48ef0995"
    )
    typed = (st.session_state.get(STEPS) or "").splitlines()
    caveats = [note for note in map(bare_fraction_note, typed) if note]  # "12:30" is +3,000%
    if bool(from_id.strip()) != bool(to_id.strip()):
        st.error(
            "Give both catalog row ids, the earlier and the later, for a step from the catalog.",
            icon=":material/error:",
        )
        return
    if from_id.strip() and to_id.strip():
        found = compute.attempt(
            lambda: compute.catalog_step(current.text, from_id, to_id), "Step from the catalog"
        )
        if found is None:
            return
        step, catalog = found
        caveats += catalog
        steps = tuple(sorted((*(steps or ()), step)))
    if steps is not None:
        caption.caption(
            _described("The gains valued (instead of the scenario's)", steps, scenario, True)
        )
        replaced = vintage_steps_replaced(scenario)
        caveats = [*caveats, *([replaced] if replaced else [])]
    result = compute.attempt(lambda: compute.gain_value(current.text, steps), "Value of the gains")
    if result is None:
        return
    # the catalog's caveats as written; the valuation's warnings in the app's words
    for warning in [*caveats, *map(gain_warning, result.warnings)]:
        st.warning(literal(warning), icon=":material/warning:")
    cases = case_warnings(result)
    if cases:  # the projections' own, as `econ gains` prints them ("warning [base]: ...")
        st.warning("\n".join(f"- {literal(w)}" for w in cases), icon=":material/warning:")
    value_section(result, money)

    monthly = compute.attempt(lambda: compute.gain_monthly(current.text, steps), "Gain trajectory")
    left, right = st.columns(2)
    with left:
        st.subheader("Output tokens per month: without and with the gains")
        if monthly is not None:
            frame = monthly[monthly["month"] >= 1].pivot(
                index="date", columns="scenario", values="tokens"
            )
            frame.columns = [
                "without the gains" if c == "base" else "with the gains" for c in frame.columns
            ]
            frame = frame.reset_index()
            columns = [c for c in frame.columns if c != "date"]
            size, word = charts.count_scale(float(frame[columns].abs().max().max()))
            frame[columns] = frame[columns] / size
            charts.show(
                charts.lines(
                    frame,
                    "date",
                    {c: c for c in columns},
                    "Month",
                    f"Output tokens per month [{word}]" if word else "Output tokens per month",
                    ",.2f",
                    dash={"without the gains": True},
                )
            )
    with right:
        st.subheader(f"NPV bridge by driver [{money}]")
        bridge = pd.DataFrame(result.bridge).rename(columns={"npv_usd": "value"})
        if len(bridge):
            bridge["value"] = charts.money(bridge, ["value"], money)["value"]
            bridge["driver"] = bridge["driver"].str.capitalize()
            charts.show(charts.bridge(bridge, f"Change in NPV [{money}]", charts.usd_format(money)))
            resized = any(e["driver"] == FINANCING_DRIVER for e in result.bridge)
            st.caption(
                "Present value of the change in each line; the bars sum to the change in NPV."
                + (
                    " The loan is sized to each case's cash flow, so the cases borrow different "
                    "amounts (Debt, in the table below): the other bars hold the base case's "
                    "loan, and Financing is what the re-sized loan changes (the tax its "
                    "interest saves)."
                    if resized
                    else ""
                )
            )
    left, right = st.columns(2)
    with left:
        st.subheader("Without and with the gains")
        compared = compare_table(result, money)
        common.table(compared, rows=len(compared), hide_index=True, width="stretch")
    with right:
        st.subheader(f"EBITDA by year [{money}]")
        years = charts.money(result.ebitda_by_year, ["base_usd", "gain_usd", "delta_usd"], money)
        years.columns = ["Year", "Without the gains", "With the gains", "Change"]
        horizon = result.base.get("horizon_months")  # a year the horizon cuts short says so
        years["Year"] = [year_label(year, horizon, prefix="") for year in years["Year"]]
        common.table(
            years.style.format(
                {c: functools.partial(scaled_money, money=money) for c in years.columns[1:]}
            ),
            hide_index=True,
            width="stretch",
        )
    breakevens(current)


if __name__ == "__main__":
    common.run_page(render)
