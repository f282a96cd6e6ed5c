"""What is live in the workbook: a blue input on Assumptions drives every figure that depends on it
in the engine (with the exported loan held where the loan is sized, as the workbook holds it), and
no formula combines a changed input with columns written as the engine's values (docs/exports.md,
"Live inputs").

Each wrong figure a finance review found by editing inputs is a LibreOffice recalculation here
(the review's cases: a vintage fleet's capex, a liquid retrofit's rack price and life, the sale
value share and in-service month of a level loan, the sized loan's rate, IRRs the engine reports
null or finds). The property over every live input of every ready-made scenario evaluates the
written formulas with numpy (`econ.workbook._recalculate`: the expression trees that render the
cells, whose recalculation LibreOffice matches: tests/test_workbook.py); LibreOffice recalculates
one changed input per section of the seed as shipped, as a representative subset.
"""

from __future__ import annotations

import io
import math
import shutil

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

import econ
from econ import workbook
from econ.analysis.committed import LOAN_TERMS, hold, sized_loan
from econ.scenario import ScenarioError, scenario_to_dict, validate_dict
from econ.scenario.io import apply_overrides
from tests.conftest import ROOT, SCENARIOS
from tests.test_workbook import (
    LEVEL_LOAN,
    SEED,
    _with_input,
    build,
    compare_with_engine,
    recalculate,
)
from tests.workbook_helpers import summary_cells

REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
LIQUID = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"
AIR = ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml"
GPT_OSS = ROOT / "models" / "scenarios" / "gpt-oss-120b-b200.toml"
STACK = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
LLAMA = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
GREY = "EDEDED"

CASES = {
    # name: (scenario file, overrides of the export, inputs changed in the workbook)
    "a1_refresh_capex": (REFRESH, {}, {"capex.system_price_usd": 263_500.0}),
    "a2_liquid_price": (LIQUID, {}, {"capex.system_price_usd": 2_550_000.0}),
    "a2_liquid_life": (LIQUID, {}, {"depreciation.life_years": 3.0}),
    "a3_sale_share": (SEED, LEVEL_LOAN, {"depreciation.sale_value_share": 0.3}),
    "a3_in_service": (SEED, LEVEL_LOAN, {"depreciation.in_service_month": 3}),
    "a4_sized_rate": (SEED, {}, {"financing.debt_rate_annual": 0.12}),
    # (all racks in service from month 1: with the shipped 3-month ramp the IRR is -49% a year)
    "b5_null_then_rate": (
        AIR,
        {"fleet.deployment_ramp_months": 0},
        {"market.price_usd_per_mtok": 0.1408 * 1.3},
    ),
    "b5_beyond_bound": (SEED, {}, {"market.price_usd_per_mtok": 0.8}),
    # inputs typed as econ refuses them, and a held loan left above a smaller fleet's capex
    "c1_fewer_gpus": (AIR, {}, {"fleet.gpu_count": 960}),
    "c2_both_loan_sizes": (
        GPT_OSS,
        {},
        {"financing.debt_share": 0.5, "financing.debt_usd": 1_000_000.0},
    ),
    "c3_both_prices": (GPT_OSS, {}, {"capex.gpu_price_usd": 30_000.0}),
    # each month's GPUs of a deployment ramp depreciated from their own month, the ramp changed
    "ramp_longer": (LLAMA, {}, {"fleet.deployment_ramp_months": 4}),
}
"""The review's cases. The LibreOffice subset of the property: one live input per section of the
seed as shipped (its loan sized and held), in SUBSET."""
SUBSET = {
    "fleet.deployment_ramp_months": 2,
    "throughput.tokens_per_s_per_gpu": 5200.0,
    "utilization.share": 0.6,
    "capex.system_price_usd": 2_900_000.0,
    "depreciation.life_years": 5.0,
    "power.pue": 1.2,
    "facility.colo_usd_per_kw_month": 210.0,
    "opex.staff_usd_per_month": 5000.0,
    "financing.tax_rate": 0.25,
    "market.price_decline_annual": 0.2,
}


def held(path, overrides: dict, changes: dict):
    """The scenario with `changes`, as the workbook of `path` + `overrides` computes it: the
    exported loan held where the export sizes it (`econ project --hold-debt`)."""
    base = econ.load_scenario(path, overrides)
    _, loan = sized_loan(base)
    scenario = econ.load_scenario(path, {**overrides, **changes})
    if loan is None or any(k == t or k.startswith(t + ".") for k in changes for t in LOAN_TERMS):
        return scenario
    return validate_dict(hold(scenario_to_dict(scenario), loan))


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """Each case exported, its inputs changed (openpyxl, as tools/edit.py did), and recalculated
    in one LibreOffice run: {name: (written, changed, recalculated)}."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    folder = tmp_path_factory.mktemp("live")
    cases = dict(CASES) | {
        f"subset_{key}": (SEED, {}, {key: value}) for key, value in SUBSET.items()
    }
    cases["named_command"] = (SEED, {}, {"market.price_usd_per_mtok": 0.25})
    cases["two_racks"] = (SEED, {}, {"fleet.gpu_count": 144})
    cases["stack_price"] = (STACK, {}, {"market.price_usd_per_mtok": 0.4})
    return exported_changed_recalculated(folder, cases)


def exported_changed_recalculated(folder, cases) -> dict:
    """{name: (written, changed, recalculated)} of `cases` ({name: (path, overrides, changes)}):
    each exported into `folder`, its named inputs changed, all recalculated in one LibreOffice
    run (folder/lo)."""
    out = {}
    for name, (path, overrides, changes) in cases.items():
        written = folder / f"{name}_written.xlsx"
        build([econ.load_scenario(path, overrides)], written)
        changed = folder / f"{name}.xlsx"
        source = written
        for key, value in changes.items():
            _with_input(source, changed, key, value)
            source = changed
        out[name] = (written, changed, folder / "lo" / changed.name)
    (folder / "lo").mkdir()
    recalculate([changed for _, changed, _ in out.values()], folder / "lo")
    return out


def _input_cell(book, path: str, column: str = "value"):
    """The Assumptions cell of input `path` in `column` (value, source, provenance, live)."""
    name = path.replace(".", "_") if "." in path else f"scenario_{path}"
    sheet, ref = book.defined_names[name].attr_text.split("!")
    cell = book[sheet][ref.replace("$", "")]
    offset = workbook.PER_SCENARIO.index(column)
    return book[sheet].cell(row=cell.row, column=cell.column + offset)


def _validation(book, cell):
    for check in book["Assumptions"].data_validations.dataValidation:
        if cell.coordinate in check.sqref:
            return check
    return None


def _summary(path) -> dict:
    book = load_workbook(path, data_only=True)
    return {key: cells[0].value for key, cells in summary_cells(book["Summary"]).items()}


def _monthly(path, column: str) -> np.ndarray:
    sheet = load_workbook(path, data_only=True)["Monthly"]
    header = [c.value for c in sheet[1]]
    j = header.index(column)
    return np.array([row[j] for row in sheet.iter_rows(min_row=2, values_only=True)], float)


def _not_live(book, path: str, because: str) -> None:
    """The input is written grey (not blue), says why, and is held at its value."""
    cell = _input_cell(book, path)
    assert cell.fill.fgColor.rgb.endswith(GREY), path
    assert cell.font.color is None or not str(cell.font.color.rgb).endswith("0000FF"), path
    live = _input_cell(book, path, "live").value
    assert live.startswith("no: ") and because in live, (path, live)
    check = _validation(book, cell)
    if cell.value is not None:
        assert check is not None and check.operator == "equal", path
        assert path in check.error and "not live" in check.error


# --- The review's wrong figures ------------------------------------------------------------------


def test_a1_a_vintage_fleets_capex_is_not_live_and_a_change_to_it_moves_no_figure(books):
    """Capex, depreciation and sale of a fleet with vintages are values: the rack price is not
    live, and the fleet's capex is written as its value, so the gain on sale (a formula over
    the capex and the depreciation) cannot jump by the price change (it did: 0 -> 5,952,000)."""
    written, _, recalculated = books["a1_refresh_capex"]
    for column in ("gain_on_disposal_usd", "tax_gain_on_disposal_usd", "tax_usd"):
        np.testing.assert_allclose(
            _monthly(recalculated, column), _monthly(written, column), rtol=1e-9, atol=1e-6
        )
    exported, shown = econ.project(econ.load_scenario(REFRESH)).metrics, _summary(recalculated)
    for key in ("npv_usd", "min_dscr", "irr_equity_annual"):  # (was 7.56M, 0.27x, 19.0%)
        assert shown[key] == pytest.approx(exported[key][0], rel=1e-9), key
    book = load_workbook(written)
    _not_live(book, "capex.system_price_usd", "written as values here and moving with it in econ")
    _not_live(book, "capex.system_price_usd", "Monthly!capex_usd (vintages")
    assert isinstance(_input_cell(book, "calc.fleet_capex_usd").value, int | float)  # a value


@pytest.mark.parametrize(
    ("case", "path", "because"),
    [
        ("a2_liquid_price", "capex.system_price_usd", "a liquid retrofit of the hall"),
        ("a2_liquid_life", "depreciation.life_years", "no formula of this workbook reads it"),
    ],
)
def test_a2_a_liquid_retrofits_capex_inputs_are_not_live(books, case, path, because):
    """Capex, depreciation and sale of a liquid retrofit are values: the rack price moved the
    insurance alone (NPV 28.81M -> 30.66M, econ 60.23M) and the life nothing; both are grey,
    and a change to either moves no figure."""
    written, _, recalculated = books[case]
    exported = econ.project(econ.load_scenario(LIQUID)).metrics
    shown = _summary(recalculated)
    for key in ("npv_usd", "ebitda_usd_total", "net_income_usd_total", "lcot_usd_per_mtok"):
        assert shown[key] == pytest.approx(exported[key][0], rel=1e-9), key
    _not_live(load_workbook(written), path, because)


@pytest.mark.parametrize(
    ("case", "path"),
    [
        ("a3_sale_share", "depreciation.sale_value_share"),
        ("a3_in_service", "depreciation.in_service_month"),
    ],
)
def test_a3_the_sale_share_and_the_in_service_month_are_live(books, case, path):
    """The sale at a share of cost was chosen in Python at export (a blank share: book value),
    and the in-service month was read by no formula: both are live formulas now, and every
    formula recalculates as the engine gives it."""
    written, changed, recalculated = books[case]
    _, _, changes = CASES[case]
    scenario = econ.load_scenario(SEED, {**LEVEL_LOAN, **changes})
    assert compare_with_engine(changed, recalculated, [scenario]) > 2000
    book = load_workbook(written)
    assert _input_cell(book, path, "live").value.startswith("yes: ")
    assert str(_input_cell(book, path).font.color.rgb).endswith("0000FF")


def test_a_ramped_fleets_depreciation_is_live_over_its_ramp(books):
    """llama2-70b-h200's GPUs enter service over 2 months and each month's are depreciated from
    it: the straight-line depreciation is a formula of the ramp, and a ramp of 4 months typed in
    the workbook recalculates in LibreOffice as econ gives it (a quarter of the fleet's monthly
    depreciation in month 1), with every other formula."""
    written, changed, recalculated = books["ramp_longer"]
    scenario = held(LLAMA, {}, CASES["ramp_longer"][2])
    assert compare_with_engine(changed, recalculated, [scenario]) > 2000
    book = load_workbook(written)
    assert _input_cell(book, "fleet.deployment_ramp_months", "live").value.startswith("yes: ")
    sheet = book["Monthly"]
    column = [c.value for c in sheet[1]].index("depreciation_usd") + 1
    assert sheet.cell(row=3, column=column).data_type == "f"  # month 1: a formula
    cost = econ.project(scenario).metrics["capex_usd_total"][0]
    assert _monthly(recalculated, "depreciation_usd")[1] == pytest.approx(cost / 60 / 4, rel=1e-9)


def test_a3_inputs_no_formula_follows_are_not_live_and_say_why(books):
    book = load_workbook(books["a3_sale_share"][0])
    for path in ("depreciation.change_month", "depreciation.change_life_years", "horizon_months"):
        _not_live(book, path, "no formula of this workbook reads it")
    # econ capitalizes the interest before service; the formulas charge it
    _not_live(book, "fleet.service_start_month", "Monthly!capitalized_interest_usd")


def test_a4_the_sized_loans_rate_is_live_over_the_held_balances(books):
    """The seed's loan is sized (sculpted): its balances are the engine's, held; interest on
    them at the loan's rate is a formula, so a rate of 12% moves the interest, tax, cash flows,
    cost of debt and the MIRR's finance rate together, as the engine with the loan held."""
    _, changed, recalculated = books["a4_sized_rate"]
    scenario = held(SEED, {}, {"financing.debt_rate_annual": 0.12})
    assert compare_with_engine(changed, recalculated, [scenario]) > 2000
    shown, engine = _summary(recalculated), econ.project(scenario).metrics
    for key in ("npv_usd", "cost_of_debt_annual", "mirr_equity_annual", "irr_equity_annual"):
        assert shown[key] == pytest.approx(engine[key][0], rel=1e-9), key


def test_b5_an_irr_the_engine_reported_null_follows_a_change(books):
    """The air hall's equity IRR, all racks serving from month 1, is null at export (no rate in
    range): the cell is a live formula of the IRR rule, and with a dearer token it shows the
    rate econ gives."""
    written, _, recalculated = books["b5_null_then_rate"]
    assert str(_summary(written)["irr_equity_annual"]).startswith("n/a")
    _, overrides, changes = CASES["b5_null_then_rate"]
    scenario = held(AIR, overrides, changes)
    expected = econ.project(scenario).metrics["irr_equity_annual"][0]
    assert not math.isnan(expected)
    assert _summary(recalculated)["irr_equity_annual"] == pytest.approx(expected, rel=1e-9)


def test_b5_an_irr_beyond_the_range_is_not_shown(books):
    """At 0.8 USD/M tokens the equity's IRR is 1,794% a year, beyond the +1,000% the summary
    reports (econ: null): the cell says n/a, not the rate."""
    _, _, recalculated = books["b5_beyond_bound"]
    scenario = held(SEED, {}, CASES["b5_beyond_bound"][2])
    assert math.isnan(econ.project(scenario).metrics["irr_equity_annual"][0])
    assert str(_summary(recalculated)["irr_equity_annual"]).startswith("n/a")


@pytest.mark.parametrize("path", list(SUBSET))
def test_libreoffice_follows_one_live_input_per_section(books, path):
    """The LibreOffice subset of the property below: the seed as shipped (a sized loan, held),
    one live input per section changed; every formula cell against the engine."""
    written, changed, recalculated = books[f"subset_{path}"]
    assert compare_with_engine(changed, recalculated, [held(SEED, {}, {path: SUBSET[path]})])
    assert _input_cell(load_workbook(written), path, "live").value.startswith("yes: ")


def test_an_edit_matches_the_command_the_workbook_names(books, tmp_path, capsys):
    """The seed's loan is sized: at 0.25 USD/M tokens the workbook keeps the exported loan
    (min DSCR -40.23), where `econ project --set` sizes another (1.30). The price's live cell
    names the command that gives the edit, and the grey notes name it too: run as written (the
    Notes sheet's scenario saved as SCENARIO), it gives every formula row LibreOffice shows."""
    from econ.cli import main

    written, _, recalculated = books["named_command"]
    book = load_workbook(written)
    live = _input_cell(book, "market.price_usd_per_mtok", "live").value
    command = live.removeprefix("yes: ").removesuffix(" gives a change made here").split()
    assert command == (
        "econ project SCENARIO --hold-debt --set market.price_usd_per_mtok=VALUE".split()
    )
    notes = book["Notes"]
    toml = next(r[3] for r in notes.iter_rows(values_only=True) if r[2] == "scenario_toml")
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(toml, encoding="utf-8")
    args = [str(scenario) if a == "SCENARIO" else a.replace("VALUE", "0.25") for a in command[1:]]
    assert main([*args, "--format", "csv"]) == 0  # the flat summary: the Summary sheet's keys
    engine = pd.read_csv(io.StringIO(capsys.readouterr().out), comment="#").iloc[0]
    shown, cells = _summary(recalculated), summary_cells(book["Summary"])
    compared = 0
    for key, (cell,) in cells.items():
        if cell.data_type != "f" or not isinstance(shown[key], int | float):
            if cell.data_type != "f" and cell.comment is not None:
                assert workbook.REPRODUCED in cell.comment.text, key
            continue
        assert shown[key] == pytest.approx(engine[key], rel=1e-9, abs=1e-6), key
        compared += 1
    assert compared > 40
    assert engine["min_dscr"] == pytest.approx(-40.23, abs=0.005)


DENSITY_ROWS = (
    "rack_count",
    "tokens_per_s_per_mw",
    "tokens_per_s_per_mw_it",
    "tokens_per_s_per_mw_utility",
    "revenue_usd_per_mw_year",
    "revenue_usd_per_mw_year_utility",
    "revenue_usd_per_rack_year",
    "revenue_usd_per_m2_year",
    "joules_per_token_it",
    "joules_per_token_utility",
)


def test_the_density_rows_and_the_rack_count_follow_the_fleet(books):
    """Revenue per MW-, rack- and m2-year, tokens per second per MW, joules per token and the
    rack count are formulas over the live rows: 144 GPUs of 72 a rack are 2 racks, and each row
    is econ's (they stayed the exported values: rack_count 1)."""
    written, _, recalculated = books["two_racks"]
    cells = summary_cells(load_workbook(written)["Summary"])
    shown = _summary(recalculated)
    engine = econ.project(held(SEED, {}, {"fleet.gpu_count": 144})).metrics
    assert shown["rack_count"] == 2
    for key in DENSITY_ROWS:
        assert cells[key][0].data_type == "f", key
        assert shown[key] == pytest.approx(engine[key][0], rel=1e-9), key
    assert shown["revenue_usd_per_rack_year"] == pytest.approx(
        shown["revenue_usd_total"] / (2 * 72 / 12), rel=1e-12
    )


def test_a_capital_stacks_equity_npv_follows_an_edit_at_the_cost_of_equity(books):
    """The capital stack's equity NPV is a formula: the equity cash flow discounted monthly at
    the equity tranche's required return (15% a year), as econ discounts it; at 0.4 USD/M
    tokens it is econ's (it stayed the exported value beside a live equity IRR)."""
    written, _, recalculated = books["stack_price"]
    cell = summary_cells(load_workbook(written)["Summary"])["npv_equity_usd"][0]
    assert cell.data_type == "f" and "(1+0.15)^(1/const_months_per_year)-1" in cell.value
    projection = econ.project(held(STACK, {}, {"market.price_usd_per_mtok": 0.4}))
    flows = projection.lines["cash_flow_equity_usd"][0]
    by_hand = np.sum(flows / 1.15 ** (np.arange(flows.size) / 12))
    assert projection.metrics["npv_equity_usd"][0] == pytest.approx(by_hand, rel=1e-12)
    assert _summary(recalculated)["npv_equity_usd"] == pytest.approx(by_hand, rel=1e-9)


# --- Property: every live input of every ready-made scenario --------------------------------------


def _changed(scenario, path: str, value, loan):
    """The scenario with one input changed as `econ project --set` does (the loan held), or
    None where econ refuses the change alone."""
    data = apply_overrides(scenario_to_dict(scenario), {path: value})
    if loan is not None and not any(path == t or path.startswith(t + ".") for t in LOAN_TERMS):
        data = hold(data, loan)
    try:
        return validate_dict(data)
    except ScenarioError:
        return None


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_live_input_moves_the_figures_as_the_engine(path):
    """For each input written live (blue), a small change (econ.workbook._changed_values: 0.1%,
    one month, another choice, a value for a blank) recalculated in the workbook's formulas
    gives the engine's NPV, levelized cost, net income, minimum DSCR and the covenant rows and
    payback to 1e-6 relative (the engine with the exported loan held where it is sized); IRRs
    to 1e-6 or both null. A change
    econ refuses alone (a price per GPU beside a price per system) is not compared."""
    scenario = econ.load_scenario(path)
    projection = econ.project(scenario)
    resolved = workbook._resolve(projection, 0, scenario)
    _, loan = sized_loan(scenario)
    runs = []
    for key in sorted(resolved.live):
        for value in workbook._changed_values(key, resolved.env.inputs.get(key), scenario):
            case = _changed(scenario, key, value, loan)
            if case is not None:
                runs.append((key, value, case))
                break
    assert len(runs) >= 2 / 3 * len(resolved.live) and len(runs) >= 10
    # (one name each: names are the keys of a projection)
    cases = [case.model_copy(update={"name": f"case {i}"}) for i, (_, _, case) in enumerate(runs)]
    engine = econ.project(cases).metrics
    failures = []
    # the covenant rows and payback where they are formulas (a capital stack's LLCR is values)
    covenants = [
        metric
        for metric in ("covenant_breach_months", "first_breach_month", "months_of_headroom")
        + ("min_llcr", "payback_months")
        if resolved.summary[metric][0] == "formula"
    ]
    assert len(covenants) >= 4
    for i, (key, value, _) in enumerate(runs):
        shown = workbook._recalculate(resolved, {key: value})
        for metric in ("npv_usd", "lcot_usd_per_mtok", "net_income_usd_total", "min_dscr") + (
            "irr_project_annual",
            "irr_equity_annual",
            *covenants,
        ):
            expected, got = float(engine[metric][i]), shown.get(metric)
            if isinstance(got, str):
                ok = math.isnan(expected)
            else:
                ok = not math.isnan(expected) and abs(got - expected) <= 1e-6 * max(
                    abs(expected), 1e-3
                )
            if not ok:
                failures.append((key, value, metric, got, expected))
    assert not failures, failures[:5]


# --- Without LibreOffice: what cannot follow says so; validation; formats -------------------------


@pytest.fixture(scope="module")
def shipped():
    """The seed as shipped (its loan sized) and its level-loan variant, written."""
    out = {}
    for name, overrides in (("sized", {}), ("level", LEVEL_LOAN)):
        scenario = econ.load_scenario(SEED, overrides)
        data = workbook.workbook_bytes(econ.project(scenario), [scenario])
        out[name] = load_workbook(io.BytesIO(data))
    return out


def test_b6_figures_at_the_exported_inputs_are_grey_and_say_so(shipped):
    """The break-even price cannot follow an edit (econ solves for it): grey italic, with a note
    to re-run econ; the covenant rows and payback, values so before, are formulas
    (tests/test_workbook_covenants.py); the horizon is not live; the Debt schedule is values,
    noted."""
    book = shipped["sized"]
    cells = summary_cells(book["Summary"])
    cell = cells["breakeven_price_usd_per_mtok"][0]
    assert cell.data_type != "f" and cell.fill.fgColor.rgb.endswith(GREY) and cell.font.i
    assert cell.comment.text.startswith("As exported: re-run econ after changing inputs")
    for key in (
        "npv_usd",
        "min_dscr",
        "irr_equity_annual",
        "covenant_breach_months",
        "first_breach_month",
        "months_of_headroom",
        "min_llcr",
        "payback_months",
    ):
        assert cells[key][0].data_type == "f" and cells[key][0].comment is None, key
    _not_live(book, "horizon_months", "no formula of this workbook reads it")
    schedule = book["Debt schedule"]
    assert schedule["A1"].comment.text.startswith("As exported: re-run econ")
    assert schedule["D2"].fill.fgColor.rgb.endswith(GREY) and schedule["D2"].font.i


def test_d_live_inputs_are_held_to_the_scenarios_bounds_and_choices(shipped):
    """A life of -1, a tax payment of "yearly" or a blank price are refused where they are typed,
    with a message naming the field and what it takes."""
    book = shipped["level"]
    life = _validation(book, _input_cell(book, "depreciation.life_years"))
    assert life.type == "decimal" and float(life.formula1) > 0 and not life.allow_blank
    assert life.error.startswith("depreciation.life_years: a number, at least 0.0833333 and at")
    assert life.errorStyle == "stop" and life.showErrorMessage
    payment = _validation(book, _input_cell(book, "financing.tax_payment"))
    assert payment.type == "list" and payment.formula1 == '"quarterly,annual,monthly"'
    assert "financing.tax_payment: one of quarterly, annual, monthly" in payment.error
    price = _validation(book, _input_cell(book, "market.price_usd_per_mtok"))
    assert price.type == "decimal" and not price.allow_blank
    share = _validation(book, _input_cell(book, "depreciation.sale_value_share"))
    assert share.allow_blank and "(or blank)" in share.error  # blank: sold at book value
    months = _validation(book, _input_cell(book, "opex.warranty_months"))
    assert months.type == "whole"
    assert all(
        len(c.error) <= workbook.VALIDATION_TEXT
        for c in book["Assumptions"].data_validations.dataValidation
    )


def test_e_formats_of_counts_months_shares_ratios_and_money(shipped):
    book = shipped["sized"]
    cells = summary_cells(book["Summary"])
    formats = {key: cells[key][0].number_format for key in cells}
    assert formats["gpu_count"] == formats["covenant_breach_months"] == "#,##0"
    assert formats["dscr_headroom"] == formats["min_dscr"] == '0.00"x"'
    assert formats["revenue_usd_per_mw_year"].startswith('"$"#,##0.00;')  # cents, not 4 places
    assert formats["lcot_usd_per_mtok"] == workbook.CURRENCY_PER_MTOK
    monthly = book["Monthly"]
    header = {c.value: c.column for c in monthly[1]}
    assert monthly.cell(row=10, column=header["utilization"]).number_format == "0.00%"
    assert monthly.cell(row=10, column=header["covenant_breach"]).number_format == "0"  # a flag
    assert _input_cell(book, "fleet.gpu_count").number_format == "#,##0"


def test_e_a_repaid_level_loan_shows_zero_not_minus_zero():
    """A level loan repaid within the horizon: the balance is 0 (not -2.8e-9, shown as a red
    -$0.00), as the engine's snapped line."""
    scenario = econ.load_scenario(SEED, {**LEVEL_LOAN, "financing.debt_term_months": 36})
    resolved = workbook._resolve(econ.project(scenario), 0, scenario)
    # the formula's own value (the cells cache the engine's line)
    balance = resolved.formulas[("Debt", "scheduled_balance_usd")].evaluate(resolved.env)
    assert np.all(balance[36:] == 0.0) and np.all(balance[:36] > 0)


def test_e_notes_say_why_a_line_is_values_in_words():
    scenario = econ.load_scenario(REFRESH)
    report = workbook.formula_report(econ.project(scenario), [scenario])[0]
    tokens = next(v for v in report["values"] if v.startswith("tokens:"))
    assert "needs Monthly!tokens_per_s_per_gpu, which is not written" in tokens
    assert "vintages (fleets bought at other times)" in tokens
    assert not any("the formula no column" in v for v in report["values"])


# --- Inputs econ refuses, and checks of what a change leaves -------------------------------------


def test_c_inputs_econ_refuses_to_change_are_not_live():
    """A change econ refuses is not live (grey, held at its value): a construction period with
    a capital stack (the stack's fleet.service_start_month was blue), a GPU price beside a
    system price (gpt-oss: typed, it gave figures econ never gives)."""
    for path, key, because in (
        (STACK, "fleet.service_start_month", "is given with financing.tranches"),
        (GPT_OSS, "capex.gpu_price_usd", "give exactly one of gpu_price_usd and system_price_usd"),
    ):
        scenario = econ.load_scenario(path)
        book = load_workbook(
            io.BytesIO(workbook.workbook_bytes(econ.project(scenario), [scenario]))
        )
        _not_live(book, key, "econ refuses this scenario with it changed")
        _not_live(book, key, because)
        assert "0.5" not in _input_cell(book, key, "live").value  # (not the value tried)
        check = _validation(book, _input_cell(book, key))  # held blank
        assert check is not None and check.type == "textLength" and check.formula1 == "0"


@pytest.mark.parametrize(
    ("case", "check", "says"),
    [
        ("c1_fewer_gpus", "check.debt_within_capex", "the debt exceeds the capex"),
        ("c2_both_loan_sizes", "check.one_term_loan_size", "econ refuses these inputs"),
        ("c3_both_prices", "check.one_hardware_price", "econ refuses these inputs"),
    ],
)
def test_c_a_check_row_flags_what_econ_would_refuse_or_the_loan_left_above_capex(
    books, case, check, says
):
    """The Summary's check rows are "ok" as exported; LibreOffice recalculating a change shows
    the check it fails, red: the 10 MW hall with 960 GPUs instead of 5,584 held its sized loan
    of 141.0M USD against 67.4M USD of capex (209%) without a word (the hall of 5,008 GPUs sized
    with its network share holds 119.0M, 176%)."""
    written, _, recalculated = books[case]
    keys = [key for key, _, _ in workbook.CHECKS]
    assert all(_summary(written)[key] == workbook.CHECK_OK for key in keys)
    shown = _summary(recalculated)
    assert str(shown[check]).startswith(says), shown[check]
    assert all(shown[key] == workbook.CHECK_OK for key in keys if key != check)
    if case == "c1_fewer_gpus":  # the held loan against the smaller fleet's capex
        assert shown["debt_usd"] > 1.7 * shown["capex_usd_total"]
    rules = load_workbook(written)["Summary"].conditional_formatting
    assert any(r.dxf.fill.fgColor.rgb.endswith("FFC7CE") for cf in rules for r in cf.rules)


def test_c_power_cost_and_the_trailing_dscr_headroom_follow_a_live_change(books):
    """power_cost_usd_per_mtok and dscr_headroom (the seed's trailing 12-month test) were grey
    values: live formulas now, recalculated as the engine gives them with the loan held."""
    written, _, recalculated = books["subset_power.pue"]
    cells = summary_cells(load_workbook(written)["Summary"])
    for key in ("power_cost_usd_per_mtok", "dscr_headroom"):
        assert cells[key][0].data_type == "f", key
    scenario = held(SEED, {}, {"power.pue": SUBSET["power.pue"]})
    engine, shown = econ.project(scenario).metrics, _summary(recalculated)
    for key in ("power_cost_usd_per_mtok", "dscr_headroom"):
        assert shown[key] == pytest.approx(engine[key][0], rel=1e-9), key
    assert shown["power_cost_usd_per_mtok"] != _summary(written)["power_cost_usd_per_mtok"]


def test_c_a_derived_figure_no_formula_reads_is_its_value():
    """The seed's loan is sized: calc.debt_usd (debt_share of the capex, before sizing) was a
    live formula over debt_share, which its own row says no formula reads; it is its value."""
    scenario = econ.load_scenario(SEED)
    book = load_workbook(io.BytesIO(workbook.workbook_bytes(econ.project(scenario), [scenario])))
    cell = _input_cell(book, "calc.debt_usd")
    assert isinstance(cell.value, int | float) and cell.fill.fgColor.rgb.endswith(GREY)
    assert (
        "no formula of this workbook reads it" in _input_cell(book, "calc.debt_usd", "live").value
    )
    _not_live(book, "financing.debt_share", "no formula of this workbook reads it")


@pytest.mark.parametrize(
    "overrides", [{"fleet.retire_month": 72}, {"horizon_months": 12, "fleet.retire_month": 12}]
)
def test_a_fleet_retired_at_the_horizon_exports_and_verifies(overrides, tmp_path, capsys):
    """A retirement in the horizon's last month: the live-input check tried one month later
    (13 of 12), which econ refuses, and projected it unvalidated: `econ export --set
    fleet.retire_month=72 --xlsx` of the seed ended in an IndexError. The change tried is now
    the first econ accepts (one month earlier)."""
    from econ.cli import main

    scenario = econ.load_scenario(SEED, overrides)
    retire = scenario.fleet.retire_month
    tries = workbook._changed_values("fleet.retire_month", retire, scenario)
    assert tries == [retire + 1, retire - 1]
    assert workbook._accepted_change(scenario, "fleet.retire_month", tries) == (retire - 1, "")
    assert workbook._accepted_change(scenario, "fleet.retire_month", tries[:1])[0] is None
    out = tmp_path / "retired.xlsx"
    sets = [x for k, v in overrides.items() for x in ("--set", f"{k}={v}")]
    assert main(["export", str(SEED), *sets, "--xlsx", str(out)]) == 0
    assert main(["verify", str(out)]) == 0
    assert "ok," in capsys.readouterr().out
