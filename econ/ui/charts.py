"""Altair charts of the app: axis titles with units, tooltips with formatted numbers, and colours
from Streamlit's theme so that light and dark themes both read well.

Presentation only: the numbers come from the library; here they are reshaped for plotting.
The builders return Altair charts and import no Streamlit (only `show` does), so the investment
memo (econ.memo) renders the very same specifications to SVG and the memo and the app agree.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from econ.ui.fmt import COUNT_WORDS, MONEY_SCALES


def show(chart, key: str | None = None) -> None:
    import streamlit as st  # here, so the builders below load without Streamlit (econ.memo)

    st.altair_chart(chart, width="stretch", key=key)


def money(frame: pd.DataFrame, columns, money_unit: str) -> pd.DataFrame:
    """Copy of `frame` with money columns divided by the display scale."""
    scale = MONEY_SCALES.get(money_unit, 1.0)
    out = frame.copy()
    for c in columns:
        out[c] = out[c] / scale
    return out


def usd_format(money_unit: str) -> str:
    return ",.0f" if money_unit == "USD" else ",.2f"


SCENARIO_COLOURS = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#eeca3b",
    "#9d755d",
)
"""One colour per compared scenario, in the order picked (Vega's tableau10 without its greys)."""


def scenario_scale(labels) -> alt.Scale:
    """A fixed scenario -> colour scale, so that every chart of one comparison colours each
    scenario alike (Vega would otherwise assign colours in each chart's own sort order)."""
    labels = list(labels)
    colours = [SCENARIO_COLOURS[i % len(SCENARIO_COLOURS)] for i in range(len(labels))]
    return alt.Scale(domain=labels, range=colours)


LABEL_CHARACTERS = 36
"""Characters of a legend label's line: about 220 px, which a chart at a phone's 390 px holds."""
WRAPPED_LABEL = (
    f"split(trim(replace(datum.label, regexp('.{{1,{LABEL_CHARACTERS}}}(?:[ /·-]|$)', 'g'), "
    "'$&\\n')), '\\n')"
)
"""A legend label broken into lines of at most LABEL_CHARACTERS at spaces, slashes, middle dots
and hyphens (Vega draws an array as lines): a long scenario or series name wraps instead of
running past the chart's edge, which cut it at a phone's width. A fixed count, not one from the
chart's width: Vega lays the legend out once, before the width is known, and a label wrapped
again afterwards ran into the next."""


def wrapped_legend(**kwargs) -> alt.Legend:
    """A legend whose labels wrap to the chart's width (WRAPPED_LABEL), never cut."""
    # lines from the top down (a label's lines centred on its symbol would climb into the
    # label above), the first level with the symbol
    return alt.Legend(
        labelLimit=0, labelExpr=WRAPPED_LABEL, labelBaseline="top", labelOffset=4, **kwargs
    )


def _legend(columns: int | None) -> alt.Legend:
    """A legend under the chart; one label a line when `columns` is 1 (long scenario names would
    otherwise run past the chart's edge and be cut), wrapped to the chart's width."""
    extra = {"columns": columns} if columns else {}
    return wrapped_legend(orient="bottom", **extra)


def lines(
    frame: pd.DataFrame,
    x: str,
    series: dict[str, str],
    x_title: str,
    y_title: str,
    y_format: str = ",.0f",
    x_type: str = "T",
    dash: dict[str, bool] | None = None,
    scale: alt.Scale | None = None,
    legend_columns: int | None = None,
    x_domain: tuple[float, float] | None = None,
) -> alt.Chart:
    """One line per column in `series` (column -> legend label); `scale` fixes the colours;
    `x_domain` ends a quantitative x axis at the data's own ends (Vega would round 72 months
    up to 80)."""
    long = frame[[x, *series]].melt(id_vars=x, var_name="series", value_name="value")
    long["series"] = long["series"].map(series)
    chart = (
        alt.Chart(long)
        .mark_line(point=len(frame) <= 24)
        .encode(
            x=alt.X(
                f"{x}:{x_type}",
                title=x_title,
                **(
                    {"scale": alt.Scale(domain=list(x_domain), nice=False)}
                    if x_domain is not None
                    else {}
                ),
            ),
            y=alt.Y("value:Q", title=y_title, axis=alt.Axis(format=y_format)),
            color=alt.Color(
                "series:N",
                title=None,
                sort=list(series.values()),
                legend=_legend(legend_columns),
                **({"scale": scale} if scale is not None else {}),
            ),
            tooltip=[
                alt.Tooltip(f"{x}:{x_type}", title=x_title),
                alt.Tooltip("series:N", title="Series"),
                alt.Tooltip("value:Q", title=y_title, format=y_format),
            ],
        )
    )
    if dash:
        dashed = [series[c] for c, on in dash.items() if on and c in series]
        chart = chart.encode(
            strokeDash=alt.condition(
                alt.FieldOneOfPredicate(field="series", oneOf=dashed),
                alt.value([6, 4]),
                alt.value([1, 0]),
            )
        )
    return chart


def stacked_costs_and_revenue(
    frame: pd.DataFrame, costs: dict[str, str], revenue: str, x_title: str, y_title: str, fmt: str
) -> alt.LayerChart:
    """Costs as stacked areas, revenue as a line over them. The areas stack in the order of
    `costs`, the first at the bottom, and the legend lists them in that order: put the steady
    costs first and the lumpy ones (tax paid by quarter) last, so that a tax payment does not
    lift every layer above it."""
    long = frame[["date", *costs]].melt(id_vars="date", var_name="line", value_name="value")
    long["stack"] = long["line"].map({c: i for i, c in enumerate(costs)})
    long["line"] = long["line"].map(costs)
    area = (
        alt.Chart(long)
        .mark_area(opacity=0.75)
        .encode(
            x=alt.X("date:T", title=x_title),
            y=alt.Y("value:Q", stack=True, title=y_title, axis=alt.Axis(format=fmt)),
            color=alt.Color("line:N", title="Costs", sort=list(costs.values())),
            order=alt.Order("stack:Q", sort="ascending"),
            tooltip=[
                alt.Tooltip("date:T", title="Month"),
                alt.Tooltip("line:N", title="Line"),
                alt.Tooltip("value:Q", title=y_title, format=fmt),
            ],
        )
    )
    rev = frame[["date", revenue]].rename(columns={revenue: "value"}).assign(line="Revenue")
    line = (
        alt.Chart(rev)
        .mark_line(strokeWidth=3, strokeDash=[6, 3])
        .encode(
            x="date:T",
            y=alt.Y("value:Q", title=y_title),
            detail="line:N",
            tooltip=[
                alt.Tooltip("date:T", title="Month"),
                alt.Tooltip("value:Q", title="Revenue", format=fmt),
            ],
        )
    )
    return alt.layer(area, line)


def waterfall(parts: dict[str, float], total_label: str, y_title: str, fmt: str = ".4f"):
    """Bars that build up to a total, each starting where the previous one ended."""
    rows, start = [], 0.0
    for name, value in parts.items():
        rows.append({"step": name, "start": start, "end": start + value, "value": value})
        start += value
    rows.append({"step": total_label, "start": 0.0, "end": start, "value": start})
    frame = pd.DataFrame(rows)
    frame["kind"] = ["part"] * (len(rows) - 1) + ["total"]
    order = list(frame["step"])
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            # angled and never dropped: at 800 px every other label was left out
            x=alt.X(
                "step:N",
                sort=order,
                title=None,
                axis=alt.Axis(labelAngle=-30, labelAlign="right", labelOverlap=False),
            ),
            y=alt.Y("start:Q", title=y_title, axis=alt.Axis(format=fmt)),
            y2="end:Q",
            color=alt.Color(
                "kind:N",
                legend=None,
                scale=alt.Scale(domain=["part", "total"], range=["#4c78a8", "#f58518"]),
            ),
            tooltip=[
                alt.Tooltip("step:N", title="Component"),
                alt.Tooltip("value:Q", title=y_title, format=fmt),
            ],
        )
    )


def bridge(
    frame: pd.DataFrame, y_title: str, fmt: str, total_label: str = "Total change"
) -> alt.Chart:
    """Signed waterfall of changes (columns driver, value) ending in their total."""
    rows, start = [], 0.0
    for driver, value in zip(frame["driver"], frame["value"], strict=True):
        rows.append(
            {
                "driver": driver,
                "start": start,
                "end": start + value,
                "value": value,
                "sign": "increase" if value >= 0 else "decrease",
            }
        )
        start += value
    rows.append({"driver": total_label, "start": 0.0, "end": start, "value": start})
    rows[-1]["sign"] = "total"
    data = pd.DataFrame(rows)
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("driver:N", sort=list(data["driver"]), title=None),
            y=alt.Y("start:Q", title=y_title, axis=alt.Axis(format=fmt)),
            y2="end:Q",
            color=alt.Color(
                "sign:N",
                title=None,
                scale=alt.Scale(
                    domain=["increase", "decrease", "total"],
                    range=["#54a24b", "#e45756", "#4c78a8"],
                ),
            ),
            tooltip=[
                alt.Tooltip("driver:N", title="Driver"),
                alt.Tooltip("value:Q", title=y_title, format=fmt),
            ],
        )
    )


def bars(
    frame: pd.DataFrame,
    x: str,
    y: str,
    x_title: str,
    y_title: str,
    fmt: str,
    color: str | None = None,
    scale: alt.Scale | None = None,
    legend_columns: int | None = None,
) -> alt.Chart:
    enc = {
        "x": alt.X(f"{x}:N", title=x_title, sort=None, axis=alt.Axis(labelAngle=0)),
        "y": alt.Y(f"{y}:Q", title=y_title, axis=alt.Axis(format=fmt)),
        "tooltip": [alt.Tooltip(f"{x}:N", title=x_title), alt.Tooltip(f"{y}:Q", format=fmt)],
    }
    if color:
        enc["color"] = alt.Color(
            f"{color}:N",
            title=None,
            legend=_legend(legend_columns),
            **({"scale": scale} if scale is not None else {}),
        )
        enc["xOffset"] = alt.XOffset(
            f"{color}:N", **({"scale": alt.Scale(domain=scale.domain)} if scale else {})
        )
        enc["tooltip"].insert(0, alt.Tooltip(f"{color}:N", title=color.capitalize()))
    return alt.Chart(frame).mark_bar().encode(**enc)


RULE_COLOUR = "#f58518"
ZERO_COLOUR = "#8a8a8a"


def count_scale(largest: float) -> tuple[float, str]:
    """(divisor, word) to show counts as the tiles do ("55.10 trillion"), not as SI ("800G")."""
    for size, word in COUNT_WORDS:
        if largest >= size:
            return size, word
    return 1.0, ""


def rule(
    value: float,
    label: str,
    axis: str = "y",
    dash=(4, 4),
    colour: str = RULE_COLOUR,
    size: float = 2,
    below: bool = False,
) -> alt.Chart:
    """A dashed reference line with its label written beside it (the line's legend): above a
    horizontal line, or under it where `below` (two close lines keep both labels readable)."""
    frame = pd.DataFrame({"value": [value], "label": [label]})
    enc = {axis: alt.Y("value:Q") if axis == "y" else alt.X("value:Q"), "tooltip": ["label:N"]}
    line = alt.Chart(frame).mark_rule(strokeDash=list(dash), color=colour, size=size)
    line = line.encode(**enc)
    if axis == "y":
        text = (
            alt.Chart(frame)
            .mark_text(
                align="left",
                baseline="top" if below else "bottom",
                dx=4,
                dy=3 if below else -3,
                color=colour,
                fontWeight="bold",
            )
            .encode(y="value:Q", x=alt.value(0), text="label:N")
        )
    else:
        text = (
            alt.Chart(frame)
            .mark_text(align="left", baseline="top", dx=4, dy=4, color=colour, fontWeight="bold")
            .encode(x="value:Q", y=alt.value(0), text="label:N")
        )
    return alt.layer(line, text)


def zero_line(label: str = "zero") -> alt.Chart:
    """The zero of a money axis: a thin grey rule, unlike any series' line."""
    return rule(0.0, label, dash=(1, 0), colour=ZERO_COLOUR, size=1)


DSCR_MONTH_COLOUR = "#b9b9b9"
"""A month's own DSCR beside the tested one: lighter, read against the tested line."""


def dscr_test_window(covenants) -> int | None:
    """The trailing months a DSCR covenant sums (`debt_and_dscr` draws that test beside each
    month's own DSCR), or None where no DSCR covenant is tested or it tests each month alone."""
    if covenants.dscr_floor is None or covenants.test_months <= 1:
        return None
    return covenants.test_months


def debt_and_dscr(
    monthly: pd.DataFrame,
    money_unit: str,
    dscr_floor: float | None = None,
    test_months: int | None = None,
    legend_columns: int | None = None,
) -> alt.LayerChart:
    """Debt balance at month end (area, left axis) and DSCR (line, right axis), with the
    covenant's DSCR floor as a dashed rule when the scenario has one.

    `monthly` holds date, debt_balance_usd [USD] and dscr [x]; money is scaled to `money_unit`.
    With `test_months`, it also holds dscr_test [x], the ratio the covenant tests (CFADS and debt
    service summed over the trailing `test_months`): that is the line the floor is read against,
    each month's own DSCR drawn beside it, lighter, both named in a legend (one label a line
    with `legend_columns` 1: side by side they run past a phone's width).
    """
    fmt = usd_format(money_unit)
    columns = ["date", "debt_balance_usd", "dscr", *(["dscr_test"] if test_months else [])]
    debt = money(monthly[columns], ["debt_balance_usd"], money_unit)
    tips = [alt.Tooltip("dscr:Q", title="DSCR", format=".2f")]
    if test_months:
        tips.append(alt.Tooltip("dscr_test:Q", title="DSCR tested", format=".2f"))
    balance = (
        alt.Chart(debt)
        .mark_area(opacity=0.5)
        .encode(
            x=alt.X("date:T", title="Month"),
            y=alt.Y(
                "debt_balance_usd:Q",
                title=f"Debt balance [{money_unit}]",
                axis=alt.Axis(format=fmt),
            ),
            tooltip=[
                alt.Tooltip("date:T", title="Month"),
                alt.Tooltip("debt_balance_usd:Q", title="Debt balance", format=fmt),
                *tips,
            ],
        )
    )
    dscr_y = alt.Y("dscr:Q", title="DSCR [x]", axis=alt.Axis(format=".2f"))
    if test_months:
        lines = {
            "dscr_test": f"DSCR tested (trailing {test_months} months)",
            "dscr": "DSCR of the month",
        }
        colour = alt.Color(
            "line:N",
            scale=alt.Scale(domain=list(lines.values()), range=["#e45756", DSCR_MONTH_COLOUR]),
            # labels never cut ("trailing 12 m…")
            legend=wrapped_legend(
                title=None, orient="top", **({"columns": legend_columns} if legend_columns else {})
            ),
        )
        y = alt.Y("ratio:Q", title="DSCR [x]", axis=alt.Axis(format=".2f"))
        layers = []
        for column in ("dscr", "dscr_test"):  # (the tested line drawn over the month's)
            one = debt[["date", column]].dropna().rename(columns={column: "ratio"})
            one = one.assign(line=lines[column])
            layers.append(
                alt.Chart(one).mark_line(point=True).encode(x="date:T", y=y, color=colour)
            )
        dscr = alt.layer(*layers)
    else:
        coverage = alt.Chart(debt.dropna(subset=["dscr"])).mark_line(
            color="#e45756", point=alt.OverlayMarkDef(color="#e45756")
        )
        dscr = coverage.encode(x="date:T", y=dscr_y)
    if dscr_floor is not None:
        dscr = alt.layer(dscr, rule(dscr_floor, f"covenant floor {dscr_floor:.2f}x"))
    return alt.layer(balance, dscr).resolve_scale(y="independent")


TORNADO_COLOURS = ("#4c78a8", "#e45756")
"""A tornado's bars with the input low and high (blue, red)."""
TORNADO_BASE_COLOUR = "#333333"
"""A tornado's base line: dark, not the orange the low bars had, over which the base line was lost."""


def tornado(rows: pd.DataFrame, swing_pct: float, title: str, fmt: str) -> alt.LayerChart:
    """Tornado bars from the base result to the result with each input low and high.

    `rows` holds input, swing, output_low, output_high and output_base (already in display units),
    one row per input, as econ.analysis.tornado's table for one output; in its rank's order when
    it has one (an input with no effect after those that make the output undefined).
    """
    base_value = float(rows["output_base"].iloc[0])
    if "rank" in rows:
        order = list(rows.sort_values("rank")["input"])
    else:
        order = list(rows.sort_values("swing", ascending=False)["input"])
    cases = [f"input −{swing_pct:g}%", f"input +{swing_pct:g}%"]
    long = pd.concat(
        [
            rows.assign(case=cases[0], value=rows["output_low"]),
            rows.assign(case=cases[1], value=rows["output_high"]),
        ]
    )
    long["base"] = base_value
    # The longer bar of an input first, the shorter over it: where both ends fall on one side of
    # the base (the seed's life -20% and +20% both raise its NPV) the high bar, drawn last, hid
    # the low one, and the input read as moving the output one way only.
    long["reach"] = (long["value"] - base_value).abs()
    bars_ = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("input:N", sort=order, title=None, axis=alt.Axis(labelLimit=320)),
            x=alt.X("base:Q", title=title, axis=alt.Axis(format=fmt)),
            x2="value:Q",
            # low then high in the legend, each its own colour, neither the base line's
            color=alt.Color(
                "case:N",
                title=None,
                sort=cases,
                scale=alt.Scale(domain=cases, range=TORNADO_COLOURS),
            ),
            order=alt.Order("reach:Q", sort="descending"),
            tooltip=["input:N", "case:N", alt.Tooltip("value:Q", format=fmt, title=title)],
        )
    )
    return alt.layer(bars_, rule(base_value, "base", axis="x", colour=TORNADO_BASE_COLOUR))
