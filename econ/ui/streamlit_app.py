"""The scenario page: pick a ready-made scenario, change the main inputs, see the economics.

Holds no formulas: it turns widgets into dotted-path overrides, validates them with the scenario
models, projects with the engine and shows what comes back.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.engine import COMPONENTS, project
from econ.scenario import ScenarioError, apply_overrides, dumps, read_toml, validate_dict

# (dotted path, label, step, format, scale): scale converts the stored fraction to the shown number.
INPUTS = (
    ("fleet.gpu_count", "GPUs", 8, "%d", 1),
    ("throughput.tokens_per_s_per_gpu", "Output tokens/s per GPU", 100.0, "%.1f", 1),
    ("utilization.share", "Utilization [%]", 5.0, "%.1f", 100),
    ("depreciation.life_years", "Useful life [years]", 0.5, "%.1f", 1),
    ("power.price_usd_per_kwh", "Electricity [USD/kWh]", 0.005, "%.4f", 1),
    ("facility.colo_usd_per_kw_month", "Colocation [USD/kW-month]", 5.0, "%.2f", 1),
    ("market.price_usd_per_mtok", "Token price, month 1 [USD/M tokens]", 0.01, "%.4f", 1),
    ("market.price_decline_annual", "Token price decline [%/year]", 5.0, "%.1f", 100),
    ("financing.debt_share", "Debt share of capex [%]", 5.0, "%.1f", 100),
    ("financing.debt_rate_annual", "Loan rate [%/year]", 0.25, "%.2f", 100),
    ("financing.discount_rate_annual", "Discount rate [%/year]", 0.5, "%.2f", 100),
)


COST_LABELS = {
    "power_usd": "Power",
    "facility_usd": "Facility",
    "opex_usd": "Opex",
    "depreciation_usd": "Depreciation",
    "interest_usd": "Interest",
    "tax_usd": "Tax",
}


@st.cache_data(max_entries=64, show_spinner=False)
def run(scenario_toml: str) -> tuple[dict, pd.DataFrame]:
    """Project one scenario given as TOML text (hashable, so results are cached)."""
    from econ.scenario import loads

    projection = project(loads(scenario_toml))
    return projection.summary_records()[0]["summary"], projection.monthly.reset_index()


def _value(data: dict, path: str):
    node = data
    for part in path.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if node != {} else None


def _fmt(value, spec: str, suffix: str = "") -> str:
    return "n/a" if value is None else spec.format(value) + suffix


def main() -> None:
    st.set_page_config(page_title="econ: GPU inference economics", layout="wide")
    st.title("GPU inference economics")
    st.caption("Cost per million output tokens and asset-life value of a GPU fleet.")

    choices = ready_made_scenarios()
    if not choices:
        st.error("No ready-made scenarios found in models/scenarios.")
        return
    names = list(choices)
    name = st.sidebar.selectbox(
        "Ready-made scenario",
        names,
        index=names.index(DEFAULT_SCENARIO) if DEFAULT_SCENARIO in names else 0,
    )
    try:
        base = read_toml(choices[name])
        base_scenario = validate_dict(base, file=choices[name])
    except ScenarioError as exc:
        st.error(str(exc))
        return
    st.sidebar.caption(base_scenario.description)

    overrides = {}
    st.sidebar.subheader("Main inputs")
    for path, label, step, fmt, scale in INPUTS:
        stored = _value(base_scenario.model_dump(), path)
        shown = st.sidebar.number_input(
            label,
            value=type(step)(stored * scale),
            step=step,
            format=fmt,
            key=f"{name}:{path}",
            help=base_scenario.sources.get(path),
        )
        overrides[path] = shown / scale if scale != 1 else shown

    try:
        scenario = validate_dict(apply_overrides(base, overrides), file=f"{name} (edited)")
    except ScenarioError as exc:
        st.error(f"These inputs are not valid: {exc}")
        return
    summary, monthly = run(dumps(scenario))

    if summary["warnings"]:
        st.warning("\n".join(f"- {w}" for w in summary["warnings"]))
    top = st.columns(4)
    top[0].metric("Levelized cost [USD/M tokens]", _fmt(summary["lcot_usd_per_mtok"], "{:.4f}"))
    top[1].metric(
        "Break-even price [USD/M tokens]", _fmt(summary["breakeven_price_usd_per_mtok"], "{:.4f}")
    )
    top[2].metric("NPV [USD]", _fmt(summary["npv_usd"], "{:,.0f}"))
    top[3].metric("Payback [months]", _fmt(summary["payback_months"], "{:.1f}"))
    bottom = st.columns(4)
    bottom[0].metric("Project IRR", _fmt(summary["irr_project_annual"], "{:.1%}"))
    bottom[1].metric("Equity IRR", _fmt(summary["irr_equity_annual"], "{:.1%}"))
    bottom[2].metric("Minimum DSCR", _fmt(summary["min_dscr"], "{:.2f}", "x"))
    bottom[3].metric("Capex [USD]", _fmt(summary["capex_usd_total"], "{:,.0f}"))

    left, right = st.columns(2)
    with left:
        st.subheader("Monthly revenue against costs")
        in_service = monthly[monthly["month"] >= 1].rename(columns=COST_LABELS)
        costs = in_service.melt(
            id_vars="date", value_vars=list(COST_LABELS.values()), var_name="cost", value_name="usd"
        )
        area = (
            alt.Chart(costs)
            .mark_area(opacity=0.7)
            .encode(
                x=alt.X("date:T", title="Month"),
                y=alt.Y("usd:Q", stack=True, title="USD per month"),
                color=alt.Color("cost:N", title="Cost"),
            )
        )
        line = (
            alt.Chart(in_service)
            .mark_line(color="black", strokeWidth=2)
            .encode(x="date:T", y=alt.Y("revenue_usd:Q", title="USD per month"))
        )
        st.altair_chart(area + line, use_container_width=True)
        st.caption("Black line: revenue. Areas: costs, stacked.")
    with right:
        st.subheader("Cost per million tokens by component")
        parts = summary["cost_usd_per_mtok_by_component"]
        frame = pd.DataFrame(
            {"component": list(COMPONENTS), "usd_per_mtok": [parts[c] for c in COMPONENTS]}
        )
        bar = (
            alt.Chart(frame)
            .mark_bar()
            .encode(
                x=alt.X("component:N", sort=list(COMPONENTS), title="Component"),
                y=alt.Y("usd_per_mtok:Q", title="USD per million output tokens"),
                tooltip=["component", alt.Tooltip("usd_per_mtok:Q", format=".4f")],
            )
        )
        st.altair_chart(bar, use_container_width=True)

    with st.expander("Monthly schedule"):
        st.dataframe(monthly, hide_index=True)
    with st.expander("Sources of the inputs"):
        st.table(pd.DataFrame(sorted(scenario.sources.items()), columns=["input", "source"]))
    st.download_button(
        "Download scenario (TOML)",
        dumps(scenario),
        file_name=f"{scenario.name}.toml",
        mime="application/toml",
    )


if __name__ == "__main__":
    main()
