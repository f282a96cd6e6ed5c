"""The Market page's resale section: published used-GPU resale curves by series and GPU, the
scenario's own curve at its band, and its rental-versus-resale spread (docs/market.md,
"Resale value"). Figures come from econ.resale_index and the projection's summary."""

from __future__ import annotations

import streamlit as st

from econ.ui import charts, common, compute, fmt

SPREAD = (
    "rental_earnings_usd_per_gpu_year",
    "resale_loss_usd_per_gpu_year",
    "rental_resale_spread_usd_per_gpu_year",
)
OWN_CURVE = "This scenario"


def curve_name(series: str, gpu: str) -> str:
    return f"{series} · {gpu}"


def shipped_frames():
    """(curve frames with a 'line' column, points table) of the shipped resale index."""
    import pandas as pd

    from econ.resale_index import curve_frame, curves, load_catalog

    found = curves(load_catalog())
    frames = [curve_frame(curve).assign(line=curve_name(*key)) for key, curve in found.items()]
    points = pd.DataFrame(
        [
            {
                "Series": p.series,
                "GPU": p.gpu,
                "Age [months]": p.age_months,
                "Share of new price [%]": 100 * p.share,
                "Low [%]": None if p.share_low is None else 100 * p.share_low,
                "High [%]": None if p.share_high is None else 100 * p.share_high,
                "As of": p.as_of,
                "Source": p.source,
            }
            for curve in found.values()
            for p in curve.points
        ]
    )
    return frames, points


def resale_chart(frames):
    import altair as alt
    import pandas as pd

    data = pd.concat(frames, ignore_index=True)
    order = list(dict.fromkeys(data["line"]))
    colour = alt.Color(
        "line:N",
        title="Curve",
        sort=order,
        scale=alt.Scale(domain=order),
        legend=charts.wrapped_legend(orient="bottom", columns=1),
    )
    x = alt.X("age_months:Q", title="Age [months]")
    title = "Resale value [share of the new price]"
    y = alt.Y("share:Q", title=title, axis=alt.Axis(format="%"))
    tooltip = [
        alt.Tooltip("line:N", title="Curve"),
        alt.Tooltip("age_months:Q", title="Age [months]"),
        alt.Tooltip("share:Q", title="Mid", format=".1%"),
        alt.Tooltip("share_low:Q", title="Low", format=".1%"),
        alt.Tooltip("share_high:Q", title="High", format=".1%"),
    ]
    band = (
        alt.Chart(data)
        .mark_area(opacity=0.15)
        .encode(x=x, y=alt.Y("share_low:Q", title=title), y2="share_high:Q", color=colour)
    )
    line = alt.Chart(data).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour, tooltip=tooltip)
    return alt.layer(line, band).properties(height=420)


def render_section(current) -> None:
    """The resale section (under the rental index on the Market page)."""
    st.subheader("Resale value")
    st.caption(
        "What used GPUs resell for, as a share of the new hardware price by age: each published "
        "curve with its low–high range (shaded), straight between its points and flat after the "
        "last. A scenario with a resale table or series sells its GPUs at this value when it "
        "retires them, tests impairment against it, and its lender counts the GPUs at it."
    )
    shipped = compute.attempt(shipped_frames, "Shipped resale index")
    if shipped is None:
        return
    frames, points = shipped
    scenario = current.scenario if current is not None else None
    own = None
    if scenario is not None:
        from econ.resale_index import scenario_curve_frame

        own = compute.attempt(lambda: scenario_curve_frame(scenario), "The scenario's resale curve")
    if own is not None:
        own = own.assign(share=own["share_at_band"], line=OWN_CURVE)
        frames = [*frames, own]
    st.altair_chart(resale_chart(frames), width="stretch")
    if own is not None:
        st.caption(
            f"{OWN_CURVE}: the scenario's resale curve at its band position "
            f"({scenario.market.resale_band:+.2f}: −1 the low end, 0 the mid, +1 the high end)."
        )
    with st.expander("Resale points and their sources", icon=":material/format_quote:"):
        common.table(points, hide_index=True, width="stretch")
    if scenario is None:
        return
    if own is None:
        st.info(
            "This scenario has no resale curve: it sells its GPUs at the sale value share of "
            "its depreciation policy. Set a resale value table or a resale series on the "
            "Scenario page to price them from a curve.",
            icon=":material/info:",
        )
        return
    spread_section(current)


def spread_section(current) -> None:
    """The scenario's first-year rental earnings against the resale value it loses (tiles)."""
    result = compute.attempt(lambda: compute.projection(current.text), "Projection")
    if result is None:
        return
    summary = result["summary"]
    st.markdown("**Renting against ageing, the first year in service (per GPU)**")
    tiles = st.columns(len(SPREAD))
    for tile, name in zip(tiles, SPREAD, strict=True):
        # Per GPU-year figures stay in USD whatever the money scale (thousands of USD each).
        tile.metric(fmt.metric_label(name), fmt.format_metric(name, summary))
    if fmt.is_missing(summary.get(SPREAD[0])):
        st.caption(
            "Rental earnings need a market rental price (a GPU-hour scenario, or one priced "
            "from a rental series above)."
        )
    else:
        st.caption(
            "Rental earnings: the market rental price × 730 hours × utilization, summed over "
            "the year; resale value lost: hardware price per GPU × (share at the start − share "
            "at the end of the year). A positive spread says a year of renting earns more than "
            "the year of ageing costs."
        )


if __name__ == "__main__":  # not a page of its own (the Market page draws it): the router runs
    common.run_page(None)
