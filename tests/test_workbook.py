"""The Excel workbook: live formulas that reproduce the engine, recalculated by LibreOffice; cached
results for readers that do not recalculate; assumptions with sources; hostile text kept as text."""

from __future__ import annotations

import datetime as dt
import io
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

import econ
from econ import tax, workbook
from econ.export import flat_summary
from econ.workbook import (
    AND,
    IF,
    MAX,
    Cell,
    Name,
    Num,
    Text,
    eq,
    formula_report,
    line_scale,
    workbook_bytes,
)
from tests.conftest import ROOT, SCENARIOS
from tests.workbook_helpers import summary_cell, summary_cells

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
LEVEL_LOAN = {
    "financing.repayment": "level_payment",
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
}
"""The seed's loan as debt_share's level-payment loan, which the workbook writes as formulas (sized
or sculpted debt is written as the engine's values: docs/excel.md)."""
T0 = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)
ALL_EQUITY = ROOT / "models" / "scenarios" / "gpt-oss-120b-b200.toml"
MACRS_SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml"
SIZED_RACK = 2_600_000.0
"""A GB200 NVL72 rack cheaper than the seed's 3.1M, in USD (capex.system_price_usd)."""
MAIN_LINES = (
    "tokens",
    "revenue_usd",
    "power_usd",
    "facility_usd",
    "opex_usd",
    "capex_usd",
    "depreciation_usd",
    "interest_usd",
    "principal_usd",
    "tax_usd",
    "ebitda_usd",
    "net_income_usd",
    "cash_flow_project_usd",
    "cash_flow_equity_usd",
    "dscr",
)
MAIN_METRICS = (
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "lcot_usd_per_mtok",
    "cost_usd_per_mtok_depreciation",
    "cost_usd_per_mtok_financing",
    "cost_usd_per_mtok_power",
    "cost_usd_per_mtok_facility",
    "cost_usd_per_mtok_opex",
)
HOSTILE = "=cmd|'/c calc'!A1"


def build(scenarios, path: Path | None = None) -> bytes:
    scenarios = list(scenarios)
    data = workbook_bytes(econ.project(scenarios), scenarios, created=T0)
    if path is not None:
        path.write_bytes(data)
    return data


@pytest.fixture(scope="module")
def seed_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wb") / "seed.xlsx"
    build([econ.load_scenario(SEED, LEVEL_LOAN)], path)
    return path


# --- Comparing a workbook with the engine --------------------------------------------------------


def _close(value, expected: float, scale: float) -> bool:
    """Relative error at most 1e-9, relative to the larger of the expected value and the scale of
    its line (a month that nets large flows to about 0 carries rounding of the flows' size)."""
    if expected is None or (isinstance(expected, float) and np.isnan(expected)):
        return value is None or value == "" or (isinstance(value, str) and value.startswith("n/a"))
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return abs(value - expected) <= 1e-9 * max(abs(expected), scale)


_BOOKS: dict[tuple[Path, bool], object] = {}


def _load(path: Path, data_only: bool):
    """Workbooks are read once per test session: loading is the slow part of these checks."""
    key = (Path(path), data_only)
    if key not in _BOOKS:
        _BOOKS[key] = load_workbook(path, data_only=data_only)
    return _BOOKS[key]


CHECK_KEYS = {key for key, _, _ in workbook.CHECKS}


def compare_with_engine(formulas_path: Path, values_path: Path, scenarios) -> int:
    """Check every formula cell of Monthly, Annual and Summary in `values_path` against the
    engine's projection of `scenarios`; the other sheets' formulas against the written results.
    Returns the number of formula cells checked."""
    projection = econ.project(scenarios)
    formulas = _load(formulas_path, data_only=False)
    values = _load(values_path, data_only=True)
    checked = 0
    failures = []

    monthly_f, monthly_v = formulas["Monthly"], values["Monthly"]
    header = [c.value for c in monthly_f[1]]
    annual_f, annual_v = formulas["Annual"], values["Annual"]
    annual_header = [c.value for c in annual_f[1]]
    row, annual_row = 2, 2
    for k, scenario in enumerate(scenarios):
        horizon = scenario.horizon
        lines = {name: v[k, : horizon + 1] for name, v in projection.lines.items()}
        for j, name in enumerate(header, start=1):
            for i in range(horizon + 1):
                cell = monthly_f.cell(row=row + i, column=j)
                if cell.data_type != "f" or name not in lines:
                    continue
                checked += 1
                value = monthly_v.cell(row=row + i, column=j).value
                if not _close(value, float(lines[name][i]), line_scale(name, lines)):
                    failures.append(("Monthly", scenario.name, name, i, value, lines[name][i]))
        years = max(1, -(-horizon // 12))
        for j, name in enumerate(annual_header, start=1):
            if name not in lines:
                continue
            sums = tax.annual_sums(lines[name][None, :])[0]
            for y in range(years):
                cell = annual_f.cell(row=annual_row + y, column=j)
                if cell.data_type != "f":
                    continue
                checked += 1
                value = annual_v.cell(row=annual_row + y, column=j).value
                if not _close(value, float(sums[y]), line_scale(name, lines)):
                    failures.append(("Annual", scenario.name, name, y, value, sums[y]))
        row += horizon + 1
        annual_row += years

    summary = flat_summary(projection)
    summary_f, summary_v = formulas["Summary"], values["Summary"]
    shown = summary_cells(summary_v)
    for name, cells in summary_cells(summary_f).items():
        for k, cell in enumerate(cells):
            if cell.data_type != "f":
                continue
            if "n/a: irr_" in str(cell.value) and "IRR(" not in str(cell.value):
                # An IRR the engine reported null when the workbook was written: the summary's
                # IRR policy is no spreadsheet formula, so the cell is a constant note, not live.
                continue
            checked += 1
            if name in CHECK_KEYS:  # the checks of the inputs: ok at the inputs econ took
                if shown[name][k].value != workbook.CHECK_OK:
                    failures.append(("Summary", k, name, shown[name][k].value, "ok"))
                continue
            expected = summary.loc[k, name]
            value = shown[name][k].value
            expected = np.nan if expected is None else float(expected)
            if not _close(value, expected, 0.0):
                failures.append(("Summary", k, name, value, expected))
    assert not failures, failures[:5]
    return checked


def compare_with_written(formulas_path: Path, values_path: Path) -> int:
    """Every formula cell of every sheet: recalculated value against the cached result."""
    formulas = _load(formulas_path, data_only=False)
    written = _load(formulas_path, data_only=True)
    values = _load(values_path, data_only=True)
    failures, checked = [], 0
    for ws in formulas.worksheets:
        name_of = {c.column: c.value for c in ws[1]}
        for row in ws.iter_rows(min_row=2):
            for cell in row:
                if cell.data_type != "f":
                    continue
                checked += 1
                a = written[ws.title][cell.coordinate].value
                b = values[ws.title][cell.coordinate].value
                if isinstance(a, str) or a is None:
                    ok = (a or "") == (b or "")
                else:
                    scale = 1e6 if str(name_of.get(cell.column, "")).endswith("_usd") else 1.0
                    ok = isinstance(b, int | float) and abs(a - b) <= 1e-9 * max(abs(a), scale)
                if not ok:
                    failures.append((ws.title, cell.coordinate, cell.value[:80], a, b))
    assert not failures, failures[:5]
    return checked


# --- Without LibreOffice: structure, cached results, fallbacks ------------------------------------


def test_sheets_names_and_layout(seed_file: Path):
    book = load_workbook(seed_file)
    assert book.sheetnames == list(workbook.SHEETS)
    assert book["Monthly"].freeze_panes == "D2"
    assert book["Summary"].freeze_panes == "C3"
    assert book["Assumptions"].freeze_panes == "D2"
    assert book.calculation.fullCalcOnLoad
    target = book.defined_names["market_price_usd_per_mtok"].attr_text
    sheet, ref = target.split("!")
    assert book[sheet][ref.replace("$", "")].value == 0.3261
    monthly = book["Monthly"]
    header = {c.value: c.column_letter for c in monthly[1]}
    assert monthly[f"{header['revenue_usd']}5"].number_format.startswith('"$"#,##0.00')
    assert monthly[f"{header['tokens']}5"].number_format == "#,##0"
    assert monthly[f"{header['dscr']}20"].number_format == '0.00"x"'
    assert summary_cell(book["Summary"], "irr_project_annual").number_format == "0.00%"


def test_assumptions_show_unit_value_source_and_flag(seed_file: Path):
    frame = pd.read_excel(seed_file, sheet_name="Assumptions")
    rows = frame.set_index("input")
    assert rows.loc["capex.system_price_usd", "unit"] == "USD"
    assert rows.loc["capex.system_price_usd", "value"] == 3_100_000
    assert "SemiAnalysis" in rows.loc["capex.system_price_usd", "source"]
    assert rows.loc["capex.system_price_usd", "provenance"] == "sourced"
    assert rows.loc["utilization.share", "provenance"] == "assumption"
    assert rows.loc["market.price_usd_per_mtok", "provenance"] == "derived"
    # an assumption of econ's own, its arithmetic stated (no published source backs it)
    assert rows.loc["opex.staff_usd_per_month", "provenance"] == "assumption"
    assert rows.loc["power.escalation_annual", "provenance"] == "assumption"  # a flat price
    assert rows.loc["facility.m2_per_rack", "provenance"] == "default"
    steps_source = rows.loc["throughput.steps[0].gain", "source"]
    assert steps_source.startswith("CoreWeave announcement")  # inherited from throughput.steps
    assert rows.loc["calc.fleet_capex_usd", "value"] == pytest.approx(3_535_600.0, rel=1e-12)


@pytest.mark.parametrize(
    ("source", "explicit", "flag"),
    [
        ("assumption: 70% of hours", True, "assumption"),
        ("derived: the price at which ...", True, "derived"),
        ("311,531 tok/s / 64 GPUs (derived, not submitted per GPU)", True, "derived"),
        ("CBRE H2 2025", False, "sourced"),
        ("", True, "no source"),
        ("", False, "default"),
        # read 'derived' and 'sourced' in the source of the value they replaced
        ("overridden (was: 0.3261; source: derived: the price at which ...)", True, "overridden"),
        ("overridden (was: not set)", True, "overridden"),
        ("edited in the app on 2026-01-05 (was: 70 %; source: assumption)", True, "edited"),
    ],
)
def test_provenance_flags(source, explicit, flag):
    assert workbook.provenance_flag(source, explicit) == flag


def test_main_lines_of_the_seed_are_formulas(seed_file: Path):
    book = load_workbook(seed_file)
    monthly = book["Monthly"]
    column = {c.value: c.column for c in monthly[1]}
    for name in MAIN_LINES:
        assert monthly.cell(row=10, column=column[name]).data_type == "f", name
    summary = summary_cells(book["Summary"])
    for name in MAIN_METRICS:
        assert summary[name][0].data_type == "f", name
    column = {c.value: c.column for c in monthly[1]}
    price = monthly.cell(row=10, column=column["token_price_usd_per_mtok"]).value
    assert price.startswith("=market_price_usd_per_mtok*")  # the input, by name


def test_cached_results_match_the_engine_without_recalculation(seed_file: Path):
    # A reader that does not recalculate (pandas here) sees the engine's numbers.
    scenario = econ.load_scenario(SEED, LEVEL_LOAN)
    projection = econ.project(scenario)
    monthly = pd.read_excel(seed_file, sheet_name="Monthly")
    engine = projection.monthly.reset_index()
    assert list(monthly.columns[:3]) == ["scenario", "month", "date"]
    for name in econ.engine.MONTHLY_COLUMNS:
        np.testing.assert_allclose(
            monthly[name].to_numpy(float),
            engine[name].to_numpy(float),
            rtol=1e-12,
            atol=1e-6,
            err_msg=name,
        )
    summary = workbook.read_summary(pd.read_excel(seed_file, sheet_name="Summary"))
    expected = flat_summary(projection)
    for name in MAIN_METRICS:
        if expected.loc[0, name] is None:  # a null metric shows its reason
            assert str(summary.loc[0, name]).startswith("n/a"), name
            continue
        assert summary.loc[0, name] == pytest.approx(expected.loc[0, name], rel=1e-12)


def test_every_formula_cell_has_a_cached_result(seed_file: Path):
    # Charts (charts only), Debt schedule, the tranche sheets (values) and Notes have no formulas
    without = ("Charts", "Debt schedule", "Tranches", "Tranche summary", "Notes")
    with zipfile.ZipFile(seed_file) as archive:
        titles = {part: title for title, part in workbook.sheet_parts(archive).items()}
        for part in archive.namelist():
            if part.startswith("xl/worksheets/sheet"):
                xml = archive.read(part).decode()
                cells = re.findall(r"<c ([^>]*)><f>[^<]*</f><v(?: ?/>|>([^<]*)</v>)", xml)
                assert cells or titles[part] in without, part
                for attributes, value in cells:
                    # a number, or a text result (an empty text is a blank, e.g. DSCR)
                    assert value or 't="str"' in attributes, (part, attributes)
                assert 't="e"' not in xml  # no error values


def test_lines_the_formulas_do_not_model_are_values_with_a_note(tmp_path: Path):
    refresh = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
    scenario = econ.load_scenario(refresh)
    report = formula_report(econ.project(scenario), [scenario])[0]
    assert any(item.startswith("gpus_in_service: values") for item in report["values"])
    assert "npv_usd" in report["formulas"]  # still live over the schedule
    path = tmp_path / "refresh.xlsx"
    build([scenario], path)
    book = load_workbook(path)
    monthly = book["Monthly"]
    column = {c.value: c.column for c in monthly[1]}
    cell = monthly.cell(row=10, column=column["gpus_in_service"])
    assert cell.data_type == "n" and cell.fill.fgColor.rgb.endswith("EDEDED")
    notes = pd.read_excel(path, sheet_name="Notes")
    assert ((notes["section"] == "values") & (notes["item"] == "gpus_in_service")).any()


@pytest.mark.parametrize(
    ("override", "metric", "text"),
    [
        ({"financing.debt_share": 0.0}, "min_dscr", "n/a: no debt service"),
        ({"utilization.share": 0.0}, "lcot_usd_per_mtok", "n/a: no tokens are produced"),
    ],
)
def test_null_metrics_show_the_reason_not_an_error(tmp_path: Path, override, metric, text):
    scenario = econ.load_scenario(SEED, {**LEVEL_LOAN, **override})
    assert np.isnan(econ.project(scenario).summary[metric].iloc[0])
    path = tmp_path / "null.xlsx"
    build([scenario], path)
    summary = workbook.read_summary(pd.read_excel(path, sheet_name="Summary"))
    assert summary.loc[0, metric] == text
    with zipfile.ZipFile(path) as archive:
        for part in archive.namelist():
            if part.startswith("xl/worksheets/"):
                assert 't="e"' not in archive.read(part).decode()


def test_workbook_without_scenarios_holds_values(tmp_path: Path):
    projection = econ.project(econ.load_scenario(SEED, LEVEL_LOAN))
    path = tmp_path / "values.xlsx"
    path.write_bytes(workbook_bytes(projection, created=T0))
    monthly = load_workbook(path)["Monthly"]
    assert all(c.data_type != "f" for row in monthly.iter_rows(min_row=2) for c in row)
    assert len(pd.read_excel(path, sheet_name="Monthly")) == 73


def test_hostile_text_is_stored_as_strings(tmp_path: Path):
    sources = {
        "capex.system_price_usd": "@SUM(1)",
        "market.price_usd_per_mtok": "-1",
        "power.pue": " =1+1",  # a leading space, which a reader may trim
        "utilization.share": "\uff1d1+1",  # a full-width equals sign
    }
    # (a tab, CR or other control character never reaches a writer: a scenario refuses it)
    scenario = econ.load_scenario(
        SEED,
        {"name": HOSTILE, "description": "+1", "throughput.source": "a\u200bb"}
        | {f"sources.{k}": v for k, v in sources.items()},
    )
    path = tmp_path / "hostile.xlsx"
    build([scenario], path)
    with zipfile.ZipFile(path) as archive:
        xml = "".join(
            archive.read(p).decode() for p in archive.namelist() if p.startswith("xl/worksheets/")
        )
    for formula in re.findall(r"<f>([^<]*)</f>", xml):
        assert "cmd" not in formula and "@SUM" not in formula
    book = load_workbook(path)
    names = {c.value for c in book["Monthly"]["A"][1:]}
    assert names == {HOSTILE}
    cell = book["Monthly"]["A2"]
    assert cell.data_type == "s" and cell.quotePrefix
    inputs = {row[0].value: row for row in book["Assumptions"].iter_rows(min_row=2) if row[0].value}
    assert inputs["name"][3].value == HOSTILE and inputs["name"][3].data_type == "s"
    assert inputs["description"][3].value == "+1"
    assert inputs["throughput.source"][3].value == "a\u200bb"
    for path_, text in sources.items():
        assert inputs[path_][4].value == text and inputs[path_][4].data_type == "s"
        assert inputs[path_][4].quotePrefix  # a reader that trims or folds sees no formula
    name = book["Summary"]["C2"]  # the scenario's name heads its value column
    assert name.value == HOSTILE and name.data_type == "s" and name.quotePrefix


# --- The formula language -------------------------------------------------------------------------


class _FakeCtx:
    sheet, row = "Monthly", 5

    def name(self, key):
        return key.replace(".", "_")

    def cell(self, sheet, column, **kwargs):
        return {"a": "C5", "b": "D5"}[column]


class _FakeEnv:
    def input(self, key):
        return {"x.y": 3.0, "blank": None, "word": "Nominal"}[key]

    def column(self, sheet, name):
        return np.array({"a": [1.0, -2.0], "b": [4.0, 0.5]}[name])


@pytest.mark.parametrize(
    ("expr", "text", "value"),
    [
        (Num(2) - (Num(3) - Num(4)), "2-(3-4)", [3.0, 3.0]),
        ((Num(2) - Num(3)) - Num(4), "2-3-4", [-5.0, -5.0]),
        (Num(8) / (Num(2) * Num(2)), "8/(2*2)", [2.0, 2.0]),
        (Num(-2) ** 2, "(-2)^2", [4.0, 4.0]),
        (-(Num(2) ** 2), "-(2^2)", [-4.0, -4.0]),
        ((Num(2) ** 3) ** 2, "(2^3)^2", [64.0, 64.0]),
        (Cell("Monthly", "a") * Name("x.y") + 1e-06, "C5*x_y+1E-06", [3.000001, -5.999999]),
        (IF(eq(Name("word"), "nominal"), 1, 0), 'IF(x_word="nominal",1,0)', [1.0, 1.0]),
        (
            MAX(0, Cell("Monthly", "a") - Cell("Monthly", "b")),
            "MAX(0,C5-D5)",
            [0.0, 0.0],
        ),
        (
            IF(AND(eq(Cell("Monthly", "a"), 1), 1), Text('say "hi"'), 0),
            'IF(AND(C5=1,1),"say ""hi""",0)',
            None,
        ),
    ],
)
def test_expressions_render_and_evaluate_alike(expr, text, value):
    ctx = _FakeCtx()
    ctx.name = lambda key: key.replace(".", "_") if key != "word" else "x_word"
    assert expr.render(ctx) == text
    if value is not None:
        result = np.broadcast_to(np.asarray(expr.evaluate(_FakeEnv()), dtype=float), (2,))
        np.testing.assert_allclose(result, value, rtol=1e-15)


def test_empty_inputs_do_not_become_numbers():
    with pytest.raises(workbook.Missing):
        (Name("blank") + 1).evaluate(_FakeEnv())
    assert workbook.ISBLANK(Name("blank")).evaluate(_FakeEnv()) is True
    # IF with a scalar condition evaluates only the branch taken, as spreadsheets do.
    assert IF(workbook.ISBLANK(Name("blank")), 5, Name("blank") * 2).evaluate(_FakeEnv()) == 5


# --- Property: the formulas reproduce the engine across single-fleet scenarios --------------------


def floats(low: float, high: float):
    """Model inputs: 0 or at least a millionth of the range (values near 1e-308 lose precision
    in any arithmetic, the engine's included, and are not inputs anyone models)."""
    if low == 0.0:
        return st.one_of(st.just(0.0), st.floats(1e-6 * high, high))
    return st.floats(low, high)


@st.composite
def fleets(draw):
    horizon = draw(st.integers(12, 96))
    purchase = draw(st.integers(0, 6))
    retire = draw(st.one_of(st.none(), st.integers(purchase + 1, horizon)))
    overrides = {
        "horizon_months": horizon,
        "fleet.purchase_month": purchase,
        "fleet.gpu_count": draw(st.integers(1, 2000)),
        "fleet.deployment_ramp_months": draw(st.integers(0, min(6, horizon))),
        "utilization.share": draw(floats(0.05, 1.0)),
        "utilization.ramp_months": draw(st.integers(0, min(6, horizon))),
        "market.price_usd_per_mtok": draw(floats(0.01, 5.0)),
        "market.price_decline_annual": draw(floats(0.0, 0.9)),
        "power.kw_per_gpu": draw(floats(0.3, 3.0)),
        "power.kw_per_gpu_definition": draw(
            st.sampled_from(["chip_plus_host", "chip_only", "utility_meter"])
        ),
        "power.host_overhead_share": draw(floats(0.0, 0.5)),
        "power.idle_power_share": draw(floats(0.0, 1.0)),
        "power.pue": draw(floats(1.0, 2.0)),
        "power.price_usd_per_kwh": draw(floats(0.01, 0.3)),
        "power.escalation_annual": draw(floats(-0.05, 0.1)),
        "facility.colo_usd_per_kw_month": draw(floats(0.0, 300.0)),
        "opex.staff_usd_per_month": draw(floats(0.0, 50_000.0)),
        "opex.maintenance_share_of_capex_annual": draw(floats(0.0, 0.1)),
        "opex.warranty_months": draw(st.integers(0, 48)),
        "financing.debt_share": draw(floats(0.0, 0.9)),
        "financing.debt_rate_annual": draw(floats(0.0, 0.2)),
        "financing.debt_rate_quote": draw(st.sampled_from(["nominal", "effective"])),
        "financing.debt_term_months": draw(st.integers(6, 120)),
        "financing.tax_rate": draw(floats(0.0, 0.4)),
        "financing.tax_payment": draw(st.sampled_from(["quarterly", "annual", "monthly"])),
        "financing.discount_rate_annual": draw(floats(0.01, 0.3)),
        "depreciation.life_years": draw(floats(1.0, 8.0)),
        "depreciation.salvage_share": draw(floats(0.0, 0.3)),
    }
    if retire is not None:
        overrides["fleet.retire_month"] = retire
    return overrides


@settings(max_examples=25, deadline=None)
@given(fleets())
def test_formulas_reproduce_the_engine_for_single_fleets(overrides):
    scenario = econ.load_scenario(SEED, {**LEVEL_LOAN, **overrides})
    report = formula_report(econ.project(scenario), [scenario])[0]
    assert report["values"] == []
    assert set(MAIN_LINES) <= set(report["formulas"])
    assert {"npv_usd", "lcot_usd_per_mtok", "cost_usd_per_mtok_power"} <= set(report["formulas"])


@pytest.mark.parametrize("payment", ["quarterly", "annual", "monthly"])
@pytest.mark.parametrize("limit", [1.0, 0.8])
def test_formulas_reproduce_the_tax_of_carried_losses(limit, payment):
    # MACRS with bonus depreciation: losses carried forward, offset up to the limit each year,
    # and paid on each schedule (annual: with the return, the 4th month after the year).
    changes = {"financing.tax_loss_limit": limit, "financing.tax_payment": payment}
    scenario = econ.load_scenario(MACRS_SEED, {**LEVEL_LOAN, **changes})
    report = formula_report(econ.project(scenario), [scenario])[0]
    assert {"tax_usd", "current_tax_usd", "deferred_tax_usd", "net_income_usd"} <= set(
        report["formulas"]
    )
    assert {"npv_usd", "irr_equity_annual"} <= set(report["formulas"])


@pytest.mark.parametrize("amount", [1e6, 9e6])  # within the capex, and above it (cut to it)
def test_formulas_reproduce_a_loan_given_in_usd(amount):
    scenario = econ.load_scenario(
        SEED, {**LEVEL_LOAN, "financing.debt_share": 0.0, "financing.debt_usd": amount}
    )
    projection = econ.project(scenario)
    assert projection.metrics["debt_usd"][0] == min(
        amount, projection.metrics["capex_usd_total"][0]
    )
    report = formula_report(projection, [scenario])[0]
    assert report["values"] == []
    assert {"interest_usd", "principal_usd", "debt_balance_usd"} <= set(report["formulas"])


# --- With LibreOffice: recalculate and compare ----------------------------------------------------

RECALCULATE_ON_LOAD = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""
"""LibreOffice profile setting: always recalculate .xlsx files on load (0), so the cached results
we wrote are replaced by LibreOffice's own."""

CHANGES = {
    "market.price_usd_per_mtok": 0.5,
    "power.price_usd_per_kwh": 0.12,
    "utilization.share": 0.5,
    "financing.debt_rate_annual": 0.12,  # the loan's formulas, and the MIRR's finance rate
}
"""Named input cells changed as an analyst would, then recalculated by LibreOffice."""
WARRANTY = {"opex.maintenance_share_of_capex_annual": 0.10, "opex.warranty_months": 36}
"""Support at 10% of capex a year after a 3-year warranty (docs/ready_made.md's figures)."""


def recalculate(files: list[Path], outdir: Path) -> None:
    """Open each file in LibreOffice Calc headless, recalculate everything, save as .xlsx."""
    profile = Path(tempfile.mkdtemp(prefix="lo-profile-"))
    try:
        (profile / "user").mkdir()
        (profile / "user" / "registrymodifications.xcu").write_text(RECALCULATE_ON_LOAD)
        command = [
            "soffice",
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(outdir),
            *map(str, files),
        ]
        subprocess.run(command, check=True, capture_output=True, timeout=600)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _with_input(source: Path, target: Path, path: str, value: float) -> None:
    """Change one named input cell, as an analyst would (openpyxl drops the cached results)."""
    book = load_workbook(source)
    sheet, ref = book.defined_names[path.replace(".", "_")].attr_text.split("!")
    book[sheet][ref.replace("$", "")].value = value
    book.save(target)


SOLD_AT_30 = {"depreciation.sale_value_share": 0.3}


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory):
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    folder = tmp_path_factory.mktemp("lo")
    seed = econ.load_scenario(SEED, LEVEL_LOAN)
    files = {"seed": folder / "seed.xlsx"}
    build([seed], files["seed"])
    for path, value in CHANGES.items():
        files[path] = folder / f"{path.replace('.', '_')}.xlsx"
        _with_input(files["seed"], files[path], path, value)
    ready_made = [econ.load_scenario(p) for p in SCENARIOS]
    files["all"] = folder / "all.xlsx"
    build(ready_made, files["all"])
    # Maintenance after a 3-year warranty, the warranty shortened to 2 years in the workbook.
    build([econ.load_scenario(SEED, {**LEVEL_LOAN, **WARRANTY})], folder / "warranty.xlsx")
    files["warranty"] = folder / "warranty_24.xlsx"
    _with_input(folder / "warranty.xlsx", files["warranty"], "opex.warranty_months", 24)
    files["hostile"] = folder / "hostile.xlsx"
    build(
        [econ.load_scenario(SEED, {**LEVEL_LOAN, "name": HOSTILE, "description": "@SUM(1)"})],
        files["hostile"],
    )
    files["gain"] = folder / "gain.xlsx"  # sold for 30% of cost when fully depreciated
    build([econ.load_scenario(SEED, {**LEVEL_LOAN, **SOLD_AT_30})], files["gain"])
    files["idle"] = folder / "idle.xlsx"
    build(
        [
            econ.load_scenario(
                SEED, {**LEVEL_LOAN, "utilization.share": 0.0, "financing.debt_share": 0.0}
            )
        ],
        files["idle"],
    )
    # The seed as shipped (its loan sized, written as values) with a cheaper rack: the loan held.
    files["sized_capex"] = folder / "sized_capex.xlsx"
    build([econ.load_scenario(SEED)], folder / "sized.xlsx")
    _with_input(folder / "sized.xlsx", files["sized_capex"], "capex.system_price_usd", SIZED_RACK)
    # An all-equity case given a loan in the workbook: the IRR's first guess (the all-equity
    # root) is too far for the spreadsheet's Newton iteration, the later guesses find the rate.
    files["geared"] = folder / "geared.xlsx"
    build([econ.load_scenario(ALL_EQUITY)], folder / "equity.xlsx")
    _with_input(folder / "equity.xlsx", files["geared"], "financing.debt_share", 0.5)
    # The MACRS seed (bonus depreciation: a first-year tax loss) written without a loss limit,
    # then given the US 80% limit in the workbook.
    unlimited = {**LEVEL_LOAN, "financing.tax_loss_limit": 1.0}
    build([econ.load_scenario(MACRS_SEED, unlimited)], folder / "macrs.xlsx")
    files["loss_limit"] = folder / "loss_limit.xlsx"
    _with_input(folder / "macrs.xlsx", files["loss_limit"], "financing.tax_loss_limit", 0.8)
    # The same with the tax paid once a year, with the return: the limit set to half in the
    # workbook moves the tax paid, the cash flows and the NPV too.
    annual = {**unlimited, "financing.tax_payment": "annual"}
    build([econ.load_scenario(MACRS_SEED, annual)], folder / "macrs_annual.xlsx")
    files["annual_limit"] = folder / "annual_limit.xlsx"
    _with_input(folder / "macrs_annual.xlsx", files["annual_limit"], "financing.tax_loss_limit", 0.5)
    out = folder / "recalculated"
    out.mkdir()
    recalculate(list(files.values()), out)
    return {key: (path, out / path.name) for key, path in files.items()}, ready_made


def test_libreoffice_agrees_with_every_formula(recalculated):
    files, ready_made = recalculated
    seed = econ.load_scenario(SEED, LEVEL_LOAN)
    written, values = files["seed"]
    assert compare_with_engine(written, values, [seed]) > 2000
    assert compare_with_written(written, values) > 2000
    written, values = files["all"]
    assert compare_with_engine(written, values, ready_made) > 10_000
    assert compare_with_written(written, values)
    written, values = files["idle"]
    idle = econ.load_scenario(
        SEED, {**LEVEL_LOAN, "utilization.share": 0.0, "financing.debt_share": 0.0}
    )
    assert compare_with_engine(written, values, [idle])
    assert compare_with_written(written, values)
    # a gain on sale is capital given back (the depreciation part), not financing
    written, values = files["gain"]
    gain = econ.load_scenario(SEED, {**LEVEL_LOAN, **SOLD_AT_30})
    assert econ.project(gain).monthly["gain_on_disposal_usd"].sum() > 1e5
    assert compare_with_engine(written, values, [gain]) > 2000
    live = summary_cells(load_workbook(written)["Summary"])  # formulas, not the engine's values
    for part in ("depreciation", "financing"):
        for key in (f"cost_usd_per_gpu_hour_{part}", f"cost_usd_per_mtok_{part}"):
            assert live[key][0].data_type == "f", key


def test_the_loss_limit_recalculates_like_the_engine(recalculated):
    written, values = recalculated[0]["loss_limit"]
    limited = econ.load_scenario(MACRS_SEED, {**LEVEL_LOAN, "financing.tax_loss_limit": 0.8})
    assert compare_with_engine(written, values, [limited]) > 2000
    unlimited = econ.load_scenario(MACRS_SEED, {**LEVEL_LOAN, "financing.tax_loss_limit": 1.0})
    unlimited = econ.project(unlimited).metrics["npv_usd"][0]
    after = summary_cells(load_workbook(values, data_only=True)["Summary"])["npv_usd"][0].value
    assert after < unlimited - 1000  # the limit moved the NPV: the cells read the input


def test_annual_tax_with_a_changed_limit_recalculates_like_the_engine(recalculated):
    written, values = recalculated[0]["annual_limit"]
    changes = {
        **LEVEL_LOAN,
        "financing.tax_payment": "annual",
        "financing.tax_loss_limit": 0.5,
    }
    assert compare_with_engine(written, values, [econ.load_scenario(MACRS_SEED, changes)]) > 2000
    live = load_workbook(written)["Monthly"]
    header = [c.value for c in live[1]]
    assert live.cell(2, header.index("tax_usd") + 1).data_type == "f"


def test_a_changed_warranty_recalculates_like_the_engine(recalculated):
    written, values = recalculated[0]["warranty"]
    shorter = econ.load_scenario(SEED, {**LEVEL_LOAN, **WARRANTY, "opex.warranty_months": 24})
    assert compare_with_engine(written, values, [shorter]) > 2000
    opex = [c.value for c in load_workbook(values, data_only=True)["Monthly"]["1"]]
    assert "opex_usd" in opex  # the line the warranty moves is on the sheet
    longer = econ.project(econ.load_scenario(SEED, {**LEVEL_LOAN, **WARRANTY})).metrics
    assert econ.project(shorter).metrics["npv_usd"][0] < longer["npv_usd"][0]


@pytest.mark.parametrize("path", list(CHANGES))
def test_changed_input_recalculates_like_the_engine(recalculated, path):
    files, _ = recalculated
    written, values = files[path]
    changed = econ.load_scenario(SEED, {**LEVEL_LOAN, path: CHANGES[path]})
    assert compare_with_engine(written, values, [changed]) > 2000
    # The change moved the result: the check above is not comparing two unchanged files.
    npv_before = econ.project(econ.load_scenario(SEED, LEVEL_LOAN)).metrics["npv_usd"][0]
    after = summary_cells(load_workbook(values, data_only=True)["Summary"])
    assert after["npv_usd"][0].value != pytest.approx(npv_before, rel=1e-6)
    # compare_with_engine above checked every Summary formula against the changed scenario's
    # figures (to 1e-9 relative: below a cent on NPV): the names are wired to the ledger.
    formulas = summary_cells(load_workbook(written)["Summary"])
    assert sum(cells[0].data_type == "f" for cells in formulas.values()) > 25


def test_a_sized_loan_is_held_when_the_capex_changes_in_the_workbook(recalculated):
    """The sized loan's lines are values, its draw too: a cheaper rack leaves the loan as it was
    (draws = repayments, one debt figure), and every formula is the engine's with that loan held
    (econ.analysis.committed), not a loan drawn at debt_share of the new capex and repaid on the
    old schedule."""
    from econ.analysis.committed import committed_loan, hold
    from econ.scenario import scenario_to_dict, validate_dict

    files, _ = recalculated
    written, values = files["sized_capex"]
    book = load_workbook(values, data_only=True)
    summary = {name: cells[0].value for name, cells in summary_cells(book["Summary"]).items()}
    monthly = book["Monthly"]
    header = [c.value for c in monthly[1]]
    principal = sum(
        r[header.index("principal_usd")] for r in monthly.iter_rows(min_row=2, values_only=True)
    )
    assert summary["debt_usd"] == pytest.approx(principal, abs=0.01)
    assert summary["debt_usd"] == pytest.approx(summary["debt_usd_total"], abs=0.01)

    seed = econ.load_scenario(SEED)
    base = econ.project(seed)
    loan = committed_loan(
        seed, base.summary_records()[0]["summary"], base.lines["debt_balance_usd"][0]
    )
    data = scenario_to_dict(econ.load_scenario(SEED, {"capex.system_price_usd": SIZED_RACK}))
    held = validate_dict(hold(data, loan))
    assert compare_with_engine(written, values, [held]) > 2000
    engine_irr = econ.project(held).metrics["irr_equity_annual"][0]
    resized = econ.project(econ.load_scenario(SEED, {"capex.system_price_usd": SIZED_RACK}))
    assert summary["irr_equity_annual"] == pytest.approx(engine_irr, rel=1e-9)
    assert summary["irr_equity_annual"] != pytest.approx(
        resized.metrics["irr_equity_annual"][0], rel=1e-3
    )


def test_an_irr_whose_first_guess_fails_is_found_from_the_next(recalculated):
    files, _ = recalculated
    written, values = files["geared"]
    geared = econ.load_scenario(ALL_EQUITY, {"financing.debt_share": 0.5})
    assert compare_with_engine(written, values, [geared]) > 1000
    cell = summary_cells(load_workbook(values, data_only=True)["Summary"])["irr_equity_annual"][0]
    expected = econ.project(geared).metrics["irr_equity_annual"][0]
    assert cell.value == pytest.approx(expected, rel=1e-9)
    formula = summary_cells(load_workbook(written)["Summary"])["irr_equity_annual"][0].value
    # the engine's root, the middle of the scan's falling crossing, then the fixed guesses
    guesses = set(re.findall(r"IRR\([^,()]+,([^)]+)\)", formula))
    assert {str(g) for g in workbook.IRR_GUESSES} < guesses
    assert len(guesses) == 2 + len(workbook.IRR_GUESSES)
    assert any(g.startswith("SUMPRODUCT(") for g in guesses)


def test_libreoffice_keeps_hostile_text_as_text(recalculated):
    files, _ = recalculated
    book = _load(files["hostile"][1], data_only=True)
    assert book["Monthly"]["A2"].value == HOSTILE
    assert book["Summary"]["C2"].value == HOSTILE
    inputs = {r[0].value: r[3].value for r in book["Assumptions"].iter_rows(min_row=2)}
    assert inputs["description"] == "@SUM(1)"


def test_the_npv_formula_docs_exports_quotes_is_the_seeds():
    # It read `=Monthly!$AB$2+NPV(...)` after the Monthly sheet's columns had moved to AG.
    page = (ROOT / "docs" / "exports.md").read_text(encoding="utf-8")
    quoted = re.search(r"^\| NPV \| USD \| `([^`]+)` \| npv_usd \|$", page, re.MULTILINE)
    assert quoted, "the Summary table's NPV row moved or changed shape"
    book = load_workbook(io.BytesIO(build([econ.load_scenario(SEED)])))
    assert summary_cell(book["Summary"], "npv_usd").value == quoted.group(1)
