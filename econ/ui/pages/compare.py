"""Compare: two to eight scenarios side by side (the current one, ready-made ones, ones kept in the
session), projected in one batch, with each one's difference from the first (the base), the
inputs that differ highlighted (by label, in the units the form shows), and the comparison as CSV
and as a workbook.
"""

from __future__ import annotations

from typing import get_args

import pandas as pd
import streamlit as st

from econ.labels import field_label, field_unit
from econ.scenario import ScenarioError, parse_toml, read_toml
from econ.ui import charts, common, compute, state
from econ.ui.fmt import (
    format_change,
    format_metric,
    humanize,
    is_missing,
    literal,
    metric_kind,
    metric_label,
    null_reason,
    number_format,
    readable_warning,
)
from econ.ui.form import FieldInfo, choice_label, fields_of, find, path_label, to_widget

CURRENT = "current scenario"
MAX_COMPARED = 8
PICK = "econ.compare_pick"
HIGHLIGHT = "background-color: rgba(255, 171, 0, 0.28); font-weight: 600"
METRIC_ROWS = (
    "lcot_usd_per_mtok",
    "breakeven_price_usd_per_mtok",
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "min_dscr",
    "tokens_total",
    "revenue_usd_total",
    "ebitda_usd_total",
    "capex_usd_total",
    "gpu_count",
    "revenue_usd_per_mw_year",
)


PLOT_HEIGHT = 260
"""Height of each chart's plot [px]."""
LEGEND_LINE = 20
"""Height of a line of the legend under a chart [px]: a chart's height (axes and legend
included, as Streamlit fits it) grows by one per scenario, so that eight scenarios leave the plot
its height (it was squashed to 40 px)."""


def _row_fields(path: str, row: dict) -> dict[str, FieldInfo]:
    """The form's fields of one row of a list of tables: a tranche's by its type, else the
    table's columns."""
    if path == "financing.tranches":
        from econ.scenario.financing_models import Tranche

        for model in get_args(get_args(Tranche)[0]):
            if row.get("type") in get_args(model.model_fields["type"].annotation):
                return {f.name: f for f in fields_of(model)}
        return {}
    table = find(path)
    return {c.name: c for c in table.children} if table is not None else {}


def _model_field(path: str, name: str, value) -> FieldInfo | None:
    """A number the form has no field for (a floating rate curve's points, a field of a union
    the form edits as TOML) as a field of its own, its unit from the model's description as
    the form takes one (econ.library.diff.unit_of, econ.labels.field_unit): a point's
    rate_annual of 0.043 in "Rate [%/year]" as 4.3, not 0.043 without a unit."""
    from econ.library.diff import unit_of

    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    kind = "int" if isinstance(value, int) else "float"
    unit, scale = field_unit(name, kind, unit_of(path) or "")
    label = field_label(name, unit)
    return FieldInfo(path, name, kind, True, (), unit, scale, label, "", None)


def _text(f: FieldInfo | None, value) -> str:
    """An input's text as the form shows it: percentages for fractions, thousands separators,
    choices as words."""
    if value is None:
        return ""
    if f is not None:
        value = to_widget(f, value)
        if f.kind == "choice":
            return choice_label(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return number_format(value)
    if isinstance(value, list | tuple):
        return ", ".join(_text(None, v) for v in value) if value else ""
    return str(value)


def _number(f: FieldInfo | None, value):
    """An input as a number in the unit its label shows (50 for a 50 % share), for the CSV and
    the workbook; text where it is no number."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        shown = to_widget(f, value) if f is not None else value
        if isinstance(shown, int | float) and not isinstance(shown, bool):
            return shown
    return _text(f, value)


def _tables(value) -> bool:
    return (
        isinstance(value, list | tuple) and bool(value) and all(isinstance(v, dict) for v in value)
    )


def inputs(
    value, path: str = "", label: str = "", fields=None
) -> dict[str, tuple[str, str, object]]:
    """Dotted path -> (label with unit, text as the form shows it, the number in that unit or the
    text) of every input. A list of tables (a capital stack's tranches, a rental table) gives one
    row per field of each table, labelled by the table's name ("Financing › Tranches › ddtl ›
    Share of capex [%]").

    fields : inside a table, its fields by name (None: the scenario's, found by path)
    """
    if _tables(value):
        out = {}
        for i, row in enumerate(value):
            title = f"{label} › {row.get('name') or f'row {i + 1}'}"
            out |= inputs(row, f"{path}[{i}]", title, _row_fields(path.split("[")[0], row))
        return out
    if not isinstance(value, dict):
        f = find(path) if fields is None else None
        return {path: (label, _text(f, value), _number(f, value))}
    out = {}
    for key, item in value.items():
        child = f"{path}.{key}" if path else key
        if fields is None:  # the scenario's own sections: each field found by its path
            f = find(child)
            name = path_label(child) if f is not None else " › ".join(filter(None, (label, key)))
            inner = None
        else:  # inside a table: its model's fields (a tranche's floating rate, say)
            f = fields.get(key) or _model_field(child, key, item)
            name = f"{label} › {f.label if f is not None else humanize(key)}"
            inner = {c.name: c for c in f.children} if f is not None else {}
        if isinstance(item, dict) or _tables(item):
            out |= inputs(item, child, name, inner)
        else:
            out[child] = (name, _text(f, item), _number(f, item))
    return out


def load(choice: str):
    """The scenario behind a choice, validated (ScenarioError when it is not valid)."""
    if choice == CURRENT:
        v = common.validation()
        if not v.ok:
            raise ScenarioError("the current scenario", "", None, v.message)
        return v.scenario
    if choice.startswith(state.SAVED_PREFIX):
        name = choice.removeprefix(state.SAVED_PREFIX)
        text = st.session_state.get(state.SAVED, {}).get(name, "")
        return state.validate_in_app(parse_toml(text, name), file=name)
    paths = state.ready_made()
    return state.validate_in_app(read_toml(paths[choice]), file=choice)


def difference(value, base):
    """value - base for two numbers, else None; 0 where the two agree to rounding (a difference
    of 1e-9 of their size or less is floating point's, not the scenarios')."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, base))
    if not numbers:
        return None
    change = float(value) - float(base)
    return 0.0 if abs(change) <= 1e-9 * max(abs(float(value)), abs(float(base))) else change


def horizon_note(labels: list[str], scenarios: list) -> str | None:
    """What the differences mix where the scenarios' horizons or start dates differ: totals,
    NPV and IRR are each over its scenario's own horizon, NPV at its own start date (the
    seed's 72 months against gpt-oss-120b-b200's 48: its revenue 3.1 million USD less, in part
    for two years fewer). None where they agree."""
    parts = []
    months = [s.horizon_months for s in scenarios]
    if len(set(months)) > 1:
        each = ", ".join(f"{label} {m} months" for label, m in zip(labels, months, strict=True))
        parts.append(
            f"The horizons differ ({each}): totals, NPV and IRR are each over its "
            "scenario's own horizon, so a difference is partly the horizon's length"
        )
    starts = [s.start_date for s in scenarios]
    if len(set(starts)) > 1:
        each = ", ".join(f"{label} {d:%Y-%m-%d}" for label, d in zip(labels, starts, strict=True))
        parts.append(f"The start dates differ ({each}): each NPV is at its scenario's own start")
    return ". ".join(parts) + "." if parts else None


def in_label_units(results: pd.DataFrame) -> pd.DataFrame:
    """The Results rows for the CSV, each number in the unit its label states, as the inputs'
    CSV gives them: a percentage as a percentage (the seed's project IRR under "Project IRR
    [%/year]" as 8.136, its difference in points; it read 0.08136). The workbook keeps the
    fractions, which its percent format shows as 8.1%."""
    out = results.copy()
    pct = out["key"].map(lambda key: metric_kind(str(key)) == "pct")
    for column in out.columns.drop(["metric", "key"]):
        values = pd.to_numeric(out[column], errors="coerce")
        out[column] = out[column].where(~pct, values * 100)
    return out


MONTHS_FORMAT = "#,##0.0"
"""Months in the comparison workbook as the app writes them (econ.ui.fmt: payback 35.4, not 35)."""


def workbook_format(key: str) -> str:
    """A Results row's number format: econ's workbook's for the metric, months to one decimal."""
    from econ.workbook import number_format

    return MONTHS_FORMAT if metric_kind(key) == "months" else number_format(key)


def with_reasons(raw: list[dict], summaries: list, labels: list[str]) -> pd.DataFrame:
    """The Results rows for the workbook: a metric that is n/a for a scenario gets the reason the
    app gives ("Payback is n/a: the cumulative project cash flow never turns positive ..."),
    its differences "n/a", rather than an empty cell."""
    rows = []
    for row in raw:
        out = dict(row)
        for label, summary in zip(labels, summaries, strict=True):
            if is_missing(row[label]):
                out[label] = null_reason(row["key"], summary) or "n/a"
        for label in labels[1:]:
            column = f"{label} - {labels[0]}"
            if column in row and is_missing(row[column]):
                out[column] = "n/a"
        rows.append(out)
    return pd.DataFrame(rows)


def workbook_bytes(results: pd.DataFrame, inputs: pd.DataFrame) -> bytes:
    """The comparison as an Excel workbook: Results (a row per metric: its label with unit, its
    key, each scenario's number and the differences from the base, formatted by the metric as
    econ's workbook formats it: percentages, USD, USD per million tokens; months to one decimal,
    as the app shows them; an n/a cell holds its reason, `with_reasons`) and Inputs (numbers in
    the unit of their label). Text the user controls (scenario names head the columns) is
    neutralized as in the CSV (econ.export) and every text cell, header or not, is stored as text,
    never as a formula."""
    import io

    from openpyxl.utils import get_column_letter

    from econ.export import safe_text

    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        safe_text(results).to_excel(writer, sheet_name="Results", index=False)
        safe_text(inputs).to_excel(writer, sheet_name="Inputs", index=False)
        sheet = writer.sheets["Results"]
        keys = list(results["key"]) if "key" in results else []
        first = 1 + sum(1 for c in results.columns if c in ("metric", "key"))
        for r, key in enumerate(keys, start=2):
            for c in range(first, len(results.columns) + 1):
                sheet.cell(r, c).number_format = workbook_format(str(key))
        for ws, frame in ((sheet, results), (writer.sheets["Inputs"], inputs)):
            for row in ws.iter_rows():  # headers included: every text cell stays text
                for cell in row:
                    if isinstance(cell.value, str):
                        cell.data_type = "s"
            for c, column in enumerate(frame.columns, start=1):
                width = max([len(str(column))] + [len(str(v)) for v in frame[column][:200]])
                ws.column_dimensions[get_column_letter(c)].width = min(max(width, 12), 60)
    return buffer.getvalue()


def export_buttons(results: pd.DataFrame, inputs: pd.DataFrame, book: pd.DataFrame) -> None:
    """The comparison's downloads: `results` (numbers, empty where n/a) and `inputs` as CSV,
    `book` (the results with the reasons for n/a) and `inputs` as a workbook."""
    from econ.export import csv_text

    # one row that wraps, each button as wide as its label (in three equal columns the
    # workbook's label was cut at 800 px)
    row = st.container(horizontal=True)
    for what, frame in (("results", results), ("inputs", inputs)):
        row.download_button(
            f"Download the {what} (CSV)",
            csv_text(frame).encode(),
            file_name=f"comparison-{what}.csv",
            mime="text/csv",
            icon=":material/csv:",
            on_click="ignore",
        )
    row.download_button(
        "Download the comparison (workbook)",
        workbook_bytes(book, inputs),
        file_name="comparison.xlsx",
        mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        icon=":material/table_view:",
        on_click="ignore",
    )


def render() -> None:
    st.title("Compare")
    money = common.money()
    options = [CURRENT, *state.ready_made()]
    options += [state.SAVED_PREFIX + n for n in st.session_state.get(state.SAVED, {})]
    base_name = st.session_state.get(state.BASE_NAME, "")
    default = [CURRENT] + [o for o in options[1:] if o != base_name][:1]
    if state.edited() and base_name in options:
        default = [CURRENT, base_name]
    key = common.keep(PICK, default)
    # scenarios no longer offered (a kept copy gone) drop out, and where none is left the
    # default comes back; a selection the visitor emptied stays empty (it came back as the
    # default pair, compared, and the visitor had to remove both again to pick afresh)
    picks = st.session_state[key]
    st.session_state[key] = [c for c in picks if c in options] or (default if picks else [])
    picked = st.multiselect(
        f"Scenarios to compare (2 to {MAX_COMPARED}; the first is the base)",
        options,
        key=key,
        max_selections=MAX_COMPARED,
        help="The current scenario (with your edits), ready-made ones, and ones kept in this "
        "session (Scenario page, Keep).",
    )
    if len(picked) < 2:
        st.info("Pick at least two scenarios.", icon=":material/compare_arrows:")
        return
    scenarios, labels = [], []
    for choice in picked:
        scenario = compute.attempt(lambda c=choice: load(c), f"Scenario '{choice}'")
        if scenario is None:
            return
        label = f"{scenario.name} (current)" if choice == CURRENT else choice
        scenarios.append(scenario.model_copy(update={"name": label}))
        labels.append(label)
    if len(set(labels)) < len(labels):
        st.error("Each scenario can be picked once.", icon=":material/error:")
        return
    texts = tuple(state.scenario_text(s) for s in scenarios)
    result = compute.attempt(lambda: compute.projections(texts), "Projection")
    if result is None:
        return

    st.subheader("Results")
    summaries = result["summaries"]
    rows, raw = [], []
    for key_ in METRIC_ROWS:
        if key_ not in summaries[0]:
            continue
        row = {"metric": metric_label(key_, money)}
        numbers = {"metric": metric_label(key_), "key": key_}  # (exports: USD, not scaled)
        for label, summary in zip(labels, summaries, strict=True):
            row[label] = format_metric(key_, summary, money)
            numbers[label] = summary.get(key_)
        for label, summary in zip(labels[1:], summaries[1:], strict=True):
            change = difference(summary.get(key_), summaries[0].get(key_))
            row[f"{label} − base"] = format_change(change, metric_kind(key_), money)
            numbers[f"{label} - {labels[0]}"] = change
        rows.append(row)
        raw.append(numbers)
    common.table(pd.DataFrame(rows), rows=len(rows), keep=labels, hide_index=True, width="stretch")
    st.caption(
        f"Base: {literal(labels[0])} (the first scenario picked); '− base' columns are differences."
    )
    note = horizon_note(labels, scenarios)
    if note:
        st.info(literal(note), icon=":material/date_range:")
    warnings = [
        f"- **{literal(label)}**: {literal(readable_warning(w))}"
        for label, summary in zip(labels, result["summaries"], strict=True)
        for w in summary.get("warnings", [])
    ]
    if warnings:
        with st.expander(f"Warnings ({len(warnings)})", icon=":material/warning:"):
            st.markdown("\n".join(warnings))

    left, right = st.columns(2)
    monthly = result["monthly"]
    colours = charts.scenario_scale(labels)  # one colour per scenario in every chart
    with left:
        st.subheader("Cumulative project cash")
        frame = monthly.pivot_table(
            index="month", columns="scenario", values="cash_flow_project_usd"
        )
        frame = charts.money(frame.cumsum(), list(frame.columns), money).reset_index()
        charts.show(
            charts.lines(
                frame,
                "month",
                {c: c for c in labels if c in frame.columns},
                "Month (0 = purchase)",
                f"Cumulative {money}",
                charts.usd_format(money),
                x_type="Q",
                scale=colours,
                legend_columns=1,
                x_domain=(0, float(frame["month"].max())),
            ).properties(height=PLOT_HEIGHT + LEGEND_LINE * len(labels))
        )
    with right:
        st.subheader("Cost per million tokens by component")
        parts = []
        for label, summary in zip(labels, result["summaries"], strict=True):
            for part, value in (summary.get("cost_usd_per_mtok_by_component") or {}).items():
                parts.append(
                    {"component": humanize(part), "scenario": label, "usd_per_mtok": value or 0.0}
                )
        if parts:
            charts.show(
                charts.bars(
                    pd.DataFrame(parts),
                    "component",
                    "usd_per_mtok",
                    "Component",
                    "USD/M output tokens",
                    ".4f",
                    color="scenario",
                    scale=colours,
                    legend_columns=1,
                ).properties(height=PLOT_HEIGHT + LEGEND_LINE * len(labels))
            )

    st.subheader("Inputs")
    flat = [
        inputs(state.plain(s.model_dump(exclude={"name", "description", "sources"})))
        for s in scenarios
    ]
    paths = sorted(set().union(*flat))
    names = {p: label for f in flat for p, (label, *_) in f.items()}

    def column(at: int) -> pd.DataFrame:  # 1: the text shown, 2: the numbers exported
        frame = pd.DataFrame(
            {
                label: [f.get(p, ("", "", ""))[at] for p in paths]
                for label, f in zip(labels, flat, strict=True)
            }
        )
        frame.insert(0, "input", [names[p] for p in paths])
        return frame

    table = column(1)
    differs = table[labels].nunique(axis=1) > 1
    only = st.toggle("Only the inputs that differ", key=common.keep("econ.compare_only", True))
    shown = table[differs] if only else table
    st.caption(f"{int(differs.sum())} of {len(paths)} inputs differ (highlighted).")
    styled = shown.style.apply(
        lambda row: [HIGHLIGHT if differs.loc[row.name] else "" for _ in row], axis=1
    )
    common.table(
        styled,
        keep=labels,
        hide_index=True,
        width="stretch",
        height=min(600, common.table_height(len(shown))),
    )
    export_buttons(
        in_label_units(pd.DataFrame(raw)),
        column(2).assign(path=paths),
        with_reasons(raw, result["summaries"], labels),
    )
    with st.expander("Sources of the inputs", icon=":material/menu_book:"):
        sources = sorted(set().union(*(s.sources for s in scenarios)))
        common.table(
            pd.DataFrame(
                {"input": sources}
                | {
                    label: [s.sources.get(p, "") for p in sources]
                    for label, s in zip(labels, scenarios, strict=True)
                }
            ),
            keep=labels,
            hide_index=True,
            width="stretch",
        )


if __name__ == "__main__":
    common.run_page(render)
