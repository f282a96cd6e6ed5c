"""The workbook for a finance reader: the Summary sheet (one metric per row: label, unit, value),
the charts over the workbook's own cells, and the named input cells the formulas read.

LibreOffice recalculation of these sheets (and of a changed named input) is in tests/test_workbook.py.
"""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from openpyxl import load_workbook
from openpyxl.utils import column_index_from_string

import econ
from econ import labels, workbook
from econ.engine import SUMMARY_COLUMNS
from econ.reporting import flat_summary
from econ.workbook import SUMMARY_KEY, excel_name_ok, read_summary, workbook_bytes
from tests.test_workbook import LEVEL_LOAN, SEED, T0
from tests.workbook_helpers import summary_cells

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
LLAMA = SEED.parent / "llama2-70b-h200.toml"


def _book(scenarios):
    data = workbook_bytes(econ.project(scenarios), scenarios, created=T0)
    return data, load_workbook(io.BytesIO(data))


@pytest.fixture(scope="module")
def seed():
    scenario = econ.load_scenario(SEED, LEVEL_LOAN)
    data, book = _book([scenario])
    return scenario, data, book


@pytest.fixture(scope="module")
def pair():
    scenarios = [econ.load_scenario(SEED, LEVEL_LOAN), econ.load_scenario(LLAMA)]
    data, book = _book(scenarios)
    return scenarios, data, book


# --- Labels and units: one table ------------------------------------------------------------------


def test_every_summary_key_of_the_engine_has_a_label_and_unit():
    spread = {c for c in SUMMARY_COLUMNS if c.endswith("_by_component")} | {"warnings"}
    missing = [c for c in SUMMARY_COLUMNS if c not in labels.SUMMARY_METRICS and c not in spread]
    assert missing == []
    for key, (label, unit, kind) in labels.SUMMARY_METRICS.items():
        assert label.strip() and not SNAKE.match(label.strip()), key
        assert "[" not in label and "_" not in unit, key  # the unit is its own field
        assert kind in {"usd", "usd_per_mtok", "pct", "months", "ratio", "tokens", "count"} | {
            "joules",
            "number",
        }


@pytest.mark.parametrize(
    ("key", "label", "unit"),
    [
        ("npv_usd", "NPV", "USD"),
        ("irr_project_annual", "Project IRR", "%/year"),
        ("resale_value_usd", "Resale value", "USD"),
        ("resale_value_usd_total", "Resale value", "USD"),
        ("blended_price_usd_per_mtok", "Blended price", "USD/M tokens"),
        ("npv_usd_per_mw", "NPV per MW", "USD"),
        ("reasoning_token_share", "Reasoning token", "%"),
        ("cost_usd_per_mtok_resale", "  of which resale", "USD/M tokens"),
        ("resale_lag_months", "Resale lag", "months"),
        ("peak_kw", "Peak", "kW"),
        ("min_dscr_sculpted", "Min DSCR sculpted", ""),
        ("mixed", "Mixed", ""),
    ],
)
def test_labels_of_known_and_unknown_keys(key, label, unit):
    assert labels.summary_label(key) == (label, unit)
    assert labels.label_with_unit(key) == (f"{label} [{unit}]" if unit else label)


def test_the_app_reads_the_same_table():
    from econ.ui import fmt

    assert fmt.metric_label("npv_usd") == "NPV [USD]"
    assert fmt.metric_label("npv_usd", "million USD") == "NPV [million USD]"
    assert fmt.metric_label("lcot_usd_per_mtok") == "Levelized cost [USD/M tokens]"
    assert fmt.METRICS["irr_project_annual"] == ("Project IRR [%/year]", "pct")
    assert fmt.column_label("power_usd") == labels.column_label("power_usd") == "Power"


# --- The Summary sheet ----------------------------------------------------------------------------


def test_summary_has_one_metric_per_row_with_label_unit_and_value(seed):
    scenario, data, book = seed
    ws = book["Summary"]
    assert [c.value for c in ws[1]] == ["Metric", "Unit", "Value", SUMMARY_KEY]
    assert [c.value for c in ws[2]] == ["Scenario", None, scenario.name, "scenario"]
    expected = flat_summary(econ.project(scenario))
    rows = list(ws.iter_rows(min_row=3, values_only=True))
    keys = [row[3] for row in rows]
    metrics = [c for c in expected.columns if c not in ("scenario", "warnings")]
    checks = [key for key, _, _ in workbook.CHECKS]
    # every key, in the summary's order; then the warnings and the checks of the inputs
    assert keys == [*metrics, "warnings", *checks]
    assert rows[len(metrics)][0] == "Warnings"
    assert all(str(row[2]).startswith("=IF(") for row in rows[len(metrics) + 1 :])  # formulas
    for label, unit, _, key in rows[: len(metrics)]:
        want_label, want_unit = labels.summary_label(key)
        assert (label, unit or "") == (want_label.strip(), want_unit), key
        assert not SNAKE.match(label), key
    assert ws.freeze_panes == "C3"
    # The parts of the levelized cost are indented under it.
    power = summary_cells(ws)["cost_usd_per_mtok_power"][0]
    assert ws.cell(row=power.row, column=1).alignment.indent == 2
    # The values: cached results equal the engine's metrics; formats by key.
    shown = read_summary(pd.read_excel(io.BytesIO(data), sheet_name="Summary"))
    for key in checks:
        assert shown.loc[0, key] == workbook.CHECK_OK, key
    for key in metrics:
        value = expected.loc[0, key]
        if isinstance(value, float):
            assert shown.loc[0, key] == pytest.approx(value, rel=1e-12, abs=1e-9), key
        elif value is None:
            assert str(shown.loc[0, key]).startswith("n/a"), key
    cells = summary_cells(ws)
    assert cells["npv_usd"][0].value.startswith("=Monthly!")  # a live formula
    assert cells["npv_usd"][0].number_format == workbook.CURRENCY
    assert cells["irr_project_annual"][0].number_format == workbook.PERCENT
    assert cells["min_dscr"][0].number_format == workbook.RATIO


def test_summary_formulas_refer_to_their_own_scenario(pair):
    scenarios, data, book = pair
    ws = book["Summary"]
    assert [c.value for c in ws[1]] == ["Metric", "Unit", "Value (1)", "Value (2)", SUMMARY_KEY]
    assert [c.value for c in ws[2]][2:4] == [s.name for s in scenarios]
    cells = summary_cells(ws)
    monthly = book["Monthly"]
    second_block = 2 + scenarios[0].horizon + 1
    assert f"$AB${second_block}" not in cells["npv_usd"][0].value
    rows = {int(r) for r in re.findall(r"\$[A-Z]+\$(\d+)", cells["tokens_total"][1].value)}
    assert rows == {second_block, second_block + scenarios[1].horizon}
    assert monthly.cell(row=second_block, column=1).value == scenarios[1].name
    # The sum of the parts is a formula over the cells of the same column.
    lcot = cells["lcot_usd_per_mtok"][1].value
    power = cells["cost_usd_per_mtok_power"][1].coordinate
    assert power in lcot and power.startswith("D")
    shown = read_summary(pd.read_excel(io.BytesIO(data), sheet_name="Summary"))
    expected = flat_summary(econ.project(scenarios))
    assert list(shown["scenario"]) == list(expected["scenario"])
    for k in range(2):
        for key in ("npv_usd", "lcot_usd_per_mtok", "tokens_total", "capex_usd_total"):
            assert shown.loc[k, key] == pytest.approx(expected.loc[k, key], rel=1e-12), key


def test_a_summary_key_the_writer_does_not_know_gets_a_readable_row(monkeypatch, seed):
    # A key another part of econ adds later (resale value, token mix) appears with a label and a
    # unit read off its name, as the engine's value.
    scenario, _, _ = seed

    def with_new_keys(projection):
        frame = flat_summary(projection)
        frame.insert(3, "resale_value_usd", 1_234_567.5)
        frame.insert(4, "reasoning_token_share", 0.25)
        return frame

    monkeypatch.setattr(workbook, "flat_summary", with_new_keys)
    _, book = _book([scenario])
    rows = {row[3]: row for row in book["Summary"].iter_rows(min_row=3, values_only=True)}
    assert rows["resale_value_usd"][:3] == ("Resale value", "USD", 1_234_567.5)
    assert rows["reasoning_token_share"][:3] == ("Reasoning token", "%", 0.25)
    cell = summary_cells(book["Summary"])["resale_value_usd"][0]
    assert cell.number_format == workbook.CURRENCY and cell.fill.fgColor.rgb.endswith("EDEDED")


def test_read_summary_refuses_the_old_layout():
    wide = pd.DataFrame({"scenario": ["a"], "npv_usd": [1.0]})
    with pytest.raises(workbook.WorkbookError, match="no Key column"):
        read_summary(wide)


# --- Charts ---------------------------------------------------------------------------------------


def _refs(chart) -> list[str]:
    """Value references of a chart's series, the combined (line) chart's included."""
    out = [s.val.numRef.f for s in chart.series]
    for sub in getattr(chart, "_charts", [])[1:]:
        out += [s.val.numRef.f for s in sub.series]
    return out


def _column_of(ws, name: str) -> str:
    header = {c.value: c.column_letter for c in ws[1]}
    return header[name]


def test_charts_refer_to_the_workbooks_own_cells(seed):
    scenario, _, book = seed
    charts = book["Charts"]._charts
    assert len(charts) == 3
    revenue, dscr, cash = charts
    annual, debt, monthly = book["Annual"], book["Debt"], book["Monthly"]
    years = -(-scenario.horizon // 12)

    def ref(ws, name, first, last):
        letter = _column_of(ws, name)
        return f"'{ws.title}'!${letter}${first}:${letter}${last}"

    assert _refs(revenue) == [
        ref(annual, name, 2, 1 + years)
        for name in (*workbook.REVENUE_COSTS, "revenue_usd")  # costs stacked, revenue a line
    ]
    assert revenue.grouping == "stacked"
    assert [s.tx.v for s in revenue.series] == [
        labels.column_label(c) for c in workbook.REVENUE_COSTS
    ]
    # the DSCR the covenant tests against its floor, over the months tested (the seed tests
    # every month with debt service, on its trailing 12 months)
    assert scenario.financing.covenants.first_test_month is None
    dscr_rows = econ.project(scenario).monthly["dscr"].notna().to_numpy().nonzero()[0]
    first, last = 2 + int(dscr_rows[0]), 2 + int(dscr_rows[-1])
    tested = [ref(debt, "dscr_test", first, last), ref(debt, "dscr_floor", first, last)]
    assert _refs(dscr) == tested
    assert [s.tx.v for s in dscr.series] == [workbook.DSCR_TESTED, "Covenant DSCR floor"]
    last_month = 2 + scenario.horizon
    assert _refs(cash) == [
        ref(monthly, "cumulative_cash_flow_project_usd", 2, last_month),
        ref(monthly, "cumulative_cash_flow_equity_usd", 2, last_month),
    ]
    # The charted cells are live formulas: the covenant floor is the named input.
    floor = debt[f"{_column_of(debt, 'dscr_floor')}10"].value
    assert floor == "=financing_covenants_dscr_floor"
    cumulative = monthly[f"{_column_of(monthly, 'cumulative_cash_flow_project_usd')}10"].value
    assert cumulative.startswith("=SUM(") and "$2:" in cumulative


def test_charts_of_each_scenario_and_none_without_debt(pair):
    scenarios, _, book = pair
    assert len(book["Charts"]._charts) == 6
    second = book["Charts"]._charts[3]
    first_annual_row = 2 + -(-scenarios[0].horizon // 12)
    assert f"${first_annual_row}:" in _refs(second)[0]
    unlevered = econ.load_scenario(SEED, {**LEVEL_LOAN, "financing.debt_share": 0.0})
    _, book = _book([unlevered])
    charts = book["Charts"]._charts
    assert [c.title is not None for c in charts] == [True, True]  # revenue and cash only
    assert book["Charts"]["K3"].value == "no debt service: no DSCR to chart"
    # Without the scenarios the sheets hold values only and lack the charted lines.
    projection = econ.project(scenarios)
    book = load_workbook(io.BytesIO(workbook_bytes(projection, created=T0)))
    assert book["Charts"]._charts == []
    notes = [book["Charts"].cell(row=3, column=c).value for c in (1, 11, 21)]
    assert notes[0].startswith("revenue and costs per tax year: not in this workbook")
    assert notes[1].startswith("DSCR: not in this workbook")
    assert notes[2].startswith("cumulative cash flow: not in this workbook")


# --- Named input cells ----------------------------------------------------------------------------


def test_every_input_cell_the_formulas_can_read_has_its_name(seed):
    _, _, book = seed
    ws = book["Assumptions"]
    named = {}
    for name, defined in book.defined_names.items():
        sheet, ref = defined.attr_text.split("!")
        assert sheet == "Assumptions"
        letter, row = re.fullmatch(r"\$([A-Z]+)\$(\d+)", ref).groups()
        assert column_index_from_string(letter) == 4  # the value column
        named[ws.cell(row=int(row), column=1).value] = name
        assert excel_name_ok(name), name
    for row in ws.iter_rows(min_row=2, max_col=1, values_only=True):
        path = row[0]
        if not path or "[" in path or " " in path or path.startswith("vintages"):
            continue  # section titles and list items (no formula reads them)
        expected = path.replace(".", "_") if "." in path else f"scenario_{path}"
        assert named.get(path) == expected, path
    for key in ("utilization.share", "market.price_usd_per_mtok", "calc.fleet_capex_usd"):
        assert key in named
    # The ledger reads inputs by name.
    monthly = book["Monthly"]
    util = monthly[f"{_column_of(monthly, 'utilization')}10"].value
    assert "utilization_share" in util


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("utilization_share", True),
        ("market_price_usd_per_mtok", True),
        ("_private", True),
        ("a.b", True),
        ("A1", False),
        ("xfd1048576", False),
        ("R1C1", False),
        ("r", False),
        ("C", False),
        ("rc", False),
        ("TRUE", False),
        ("1st", False),
        ("two words", False),
        ("x" * 255, True),
        ("x" * 256, False),
    ],
)
def test_spreadsheet_name_rules(name, ok):
    assert excel_name_ok(name) is ok


def test_money_per_gpu_or_rack_has_cents_and_rates_per_token_more_digits():
    from econ.workbook import CURRENCY, CURRENCY_PER_MTOK, number_format

    assert number_format("npv_usd_per_gpu") == CURRENCY
    assert number_format("npv_usd_per_rack") == CURRENCY
    assert number_format("lcot_usd_per_mtok") == CURRENCY_PER_MTOK
    assert number_format("cost_usd_per_gpu_hour") == '"$"#,##0.0000'


@pytest.mark.parametrize(
    "path, unit",
    [
        ("depreciation.life_years", "years"),  # "... [years] (not used by ...)"
        ("facility.colo_usd_per_kw_month", "USD/kW-month"),
        ("financing.discount_rate_annual", "1/year"),
        ("financing.max_ltv", "fraction"),
        ("utilization.share", "fraction"),
        ("market.contract_share", "fraction"),
        ("financing.debt_rate_annual", "1/year"),
    ],
)
def test_the_unit_column_reads_a_unit_anywhere_in_the_description(path, unit):
    from econ.workbook import _field_info

    assert _field_info(path)[0] == unit


def test_notes_say_a_sized_loan_is_why_its_lines_are_values():
    scenario = econ.load_scenario(SEED)
    book = load_workbook(io.BytesIO(workbook.workbook_bytes(econ.project([scenario]), [scenario])))
    notes = {
        row[2]: row[3] for row in book["Notes"].iter_rows(values_only=True) if row[0] == "values"
    }
    for line in ("principal_usd", "debt_balance_usd"):
        assert notes[line] == f"values: {workbook.SIZED_REASON}"
    # the interest on the balances held is a formula, live in the loan's rate
    assert "interest_usd" not in notes
    monthly = book["Monthly"]
    header = [c.value for c in monthly[1]]
    interest = monthly.cell(row=10, column=header.index("interest_usd") + 1).value
    balance = monthly.cell(row=9, column=header.index("debt_balance_usd") + 1).coordinate
    assert interest == f"=IF(B10-fleet_purchase_month>=1,{balance}*calc_loan_rate_monthly,0)"


def test_dscr_headroom_is_a_live_formula_of_the_dscr_the_covenant_tests():
    # With a one-month window the headroom is min_dscr less the floor; over a trailing window
    # (the seed's 12 months) or from a first test date it is the lowest of the DSCRs the
    # covenant tests (Debt!dscr_test), less the floor: a live formula either way (it was the
    # engine's value, grey, over a trailing window), its cached result the engine's figure.
    def headroom(overrides):
        scenario = econ.load_scenario(SEED, LEVEL_LOAN | overrides)
        data, book = _book([scenario])
        cell = summary_cells(book["Summary"])["dscr_headroom"][0]
        cached = summary_cells(load_workbook(io.BytesIO(data), data_only=True)["Summary"])
        expected = econ.project(scenario).summary.iloc[0]["dscr_headroom"]
        return str(cell.value), cached["dscr_headroom"][0].value, expected

    monthly, _, _ = headroom({"financing.covenants.test_months": 1})
    assert monthly.startswith("=") and "financing_covenants_dscr_floor" in monthly
    for overrides in (
        {},  # the seed's trailing 12 months
        {"financing.covenants.test_months": 1, "financing.covenants.first_test_month": 12},
    ):
        formula, cached, expected = headroom(overrides)
        assert formula.startswith("=MIN(Debt!") or "MIN(Debt!" in formula, formula
        assert "financing_covenants_dscr_floor" in formula
        assert cached == pytest.approx(expected, rel=1e-12)
