"""What the workbook shows besides its figures: which figures do not recalculate and say so, the
DSCR chart's series, number formats and units, a note on every column, the Annual sheet's tax
years dated and reconciled, and data validation bound as econ's scenario validation bounds it
(docs/exports.md). Found by a lender's analyst's review of the exported workbooks."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pytest
from openpyxl import load_workbook

import econ
from econ import workbook
from econ.labels import COLUMN_NOTES
from tests.conftest import SCENARIOS
from tests.test_workbook import LEVEL_LOAN, MACRS_SEED, SEED
from tests.test_workbook_live import _input_cell, _validation
from tests.workbook_helpers import summary_cells


def _book(path=SEED, overrides=None):
    scenario = econ.load_scenario(path, overrides or {})
    data = workbook.workbook_bytes(econ.project(scenario), [scenario])
    return scenario, data, load_workbook(io.BytesIO(data))


@pytest.fixture(scope="module")
def seed():
    return _book()


@pytest.fixture(scope="module")
def every_scenario():
    """All ready-made scenarios in one workbook."""
    scenarios = [econ.load_scenario(p) for p in SCENARIOS]
    data = workbook.workbook_bytes(econ.project(scenarios), scenarios)
    return scenarios, load_workbook(io.BytesIO(data))


# --- What does not recalculate says so -----------------------------------------------------------


def test_every_summary_figure_is_a_formula_or_marked_as_exported(every_scenario):
    """The legend's promise: a live input moves every figure except those marked "as
    exported" (grey, italic, a note saying to re-run econ). Each Summary figure of every
    ready-made scenario is a formula or so marked; the warnings too; break-even is values."""
    _, book = every_scenario
    cells = summary_cells(book["Summary"])
    marked = 0
    for key, row in cells.items():
        if key == "scenario" or key.startswith("check."):
            continue
        for cell in row:
            if cell.data_type == "f":
                assert cell.comment is None and not cell.font.i, (key, cell.coordinate)
                continue
            marked += 1
            assert cell.font.i and cell.fill.fgColor.rgb.endswith("EDEDED"), key
            assert cell.comment.text.startswith("As exported: re-run econ after changing inputs")
    assert marked > 0
    assert all(c.data_type != "f" for c in cells["breakeven_price_usd_per_mtok"])
    legend = {
        row[2]: row[3] for row in book["Notes"].iter_rows(values_only=True) if row[0] == "legend"
    }
    assert workbook.AS_EXPORTED in legend["blue"] and workbook.AS_EXPORTED in legend["grey italic"]
    assert "every formula (black) recalculates" in legend["blue"]


def test_columns_written_as_values_are_marked_as_exported(every_scenario):
    _, book = every_scenario
    monthly = book["Monthly"]
    header = {c.value: c for c in monthly[1]}
    note = header["throughput_multiplier"].comment.text  # values: the software-gain trajectory
    assert "as exported: re-run econ after changing inputs" in note.lower()
    assert monthly.cell(row=3, column=header["throughput_multiplier"].column).font.i


# --- The DSCR chart ------------------------------------------------------------------------------


def test_the_dscr_chart_plots_the_tested_dscr_against_the_floor(seed):
    """The floor is the trailing test's: the chart plots Debt!dscr_test (it plotted the monthly
    DSCR, Debt!H, against it)."""
    _, data, book = seed
    header = {c.value: c.column_letter for c in book["Debt"][1]}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        charts = [
            archive.read(n).decode()
            for n in sorted(archive.namelist())
            if n.startswith("xl/charts/chart")
        ]
    dscr = next(c for c in charts if "Covenant DSCR floor" in c)
    references = re.findall(r"<(?:c:)?f>'Debt'!\$([A-Z]+)\$", dscr)
    assert references == [header["dscr_test"], header["dscr_floor"]]
    assert workbook.DSCR_TESTED in dscr and "Tested DSCR and the covenant floor" in dscr


# --- Number formats and units --------------------------------------------------------------------


def test_counts_and_months_are_whole_numbers_and_flags_plain(seed):
    _, _, book = seed
    for path in (
        "fleet.gpus_per_rack",
        "capex.gpus_per_system",
        "throughput.steps[0].month",
        "fleet.retire_month",  # (blank: a month typed in shows as one)
    ):
        row = next(r for r in book["Assumptions"].iter_rows(min_row=2) if r[0].value == path)
        assert row[3].number_format == workbook.WHOLE, path
    monthly = book["Monthly"]
    header = {c.value: c.column for c in monthly[1]}
    for flag in ("sign_cash_flow_project_usd", "in_service", "covenant_breach", "year_end"):
        assert monthly.cell(row=5, column=header[flag]).number_format == workbook.FLAG, flag


def test_a_rate_shown_as_a_percentage_has_a_percent_unit(seed):
    """financing.debt_rate_annual [1/year] was shown as 9.50% beside the unit "1/year"."""
    _, _, book = seed
    for row in book["Assumptions"].iter_rows(min_row=2):
        if row[3].number_format == workbook.PERCENT:
            assert row[1].value in set(workbook.PERCENT_UNITS.values()), (
                row[0].value,
                row[1].value,
            )
    units = {r[0].value: r[1].value for r in book["Assumptions"].iter_rows(min_row=2)}
    assert units["financing.debt_rate_annual"] == "%/year"
    assert units["utilization.share"] == "%"


# --- Every column explained ----------------------------------------------------------------------


def test_every_column_has_a_note_with_its_unit(every_scenario):
    """Notes explains every column of Monthly, Annual, Depreciation and Debt (the engine's from
    econ.labels.COLUMN_NOTES), and each header's note says the same; headers keep their keys."""
    _, book = every_scenario
    notes = {
        row[2]: row[3] for row in book["Notes"].iter_rows(values_only=True) if row[0] == "column"
    }
    for sheet in ("Monthly", "Annual", "Depreciation", "Debt"):
        for cell in book[sheet][1]:
            text = notes[f"{sheet}!{cell.value}"]
            assert cell.comment.text.startswith(text), (sheet, cell.value)
            assert "see the column name" not in text, (sheet, cell.value)
    for name, unit in (
        ("tokens", "tokens"),
        ("dscr", "x"),
        ("it_drawn_kw", "kW"),
        ("utilization", "%"),
        ("llcr", "x"),
        ("ltv", "%"),
    ):
        assert f"[{unit}]: " in notes[f"Monthly!{name}"], name
    for name in ("deferred_tax_liability_usd", "capitalized_interest_usd", "llcr", "ltv"):
        assert COLUMN_NOTES[name][1] in notes[f"Monthly!{name}"]


def test_every_engine_column_is_described():
    """A line the engine adds needs its unit and meaning in econ.labels.COLUMN_NOTES."""
    from econ.engine import MONTHLY_COLUMNS

    assert set(MONTHLY_COLUMNS) <= set(COLUMN_NOTES)


# --- The Annual sheet ----------------------------------------------------------------------------


def test_the_annual_sheet_reconciles_and_dates_each_tax_year():
    """Year 1 of the MACRS seed: EBIT - interest - tax paid (0) was 1,099,865.36 against a net
    income of 868,893.64; the 230,971.73 is the deferred tax expense. EBIT + gain on disposal -
    interest - current - deferred tax expense is the net income, every year; each year is
    dated by the months it holds (year 1: month 0, the purchase month, to month 12)."""
    scenario = econ.load_scenario(MACRS_SEED, LEVEL_LOAN)
    projection = econ.project(scenario)
    book = load_workbook(
        io.BytesIO(workbook.workbook_bytes(projection, [scenario])), data_only=True
    )
    sheet = book["Annual"]
    header = [c.value for c in sheet[1]]
    rows = [dict(zip(header, r, strict=True)) for r in sheet.iter_rows(min_row=2, values_only=True)]
    yearly = projection.yearly("asset")
    for y, row in enumerate(rows, start=1):
        recomputed = (
            row["ebit_usd"]
            + row["gain_on_disposal_usd"]
            - row["interest_usd"]
            - row["current_tax_usd"]
            - row["deferred_tax_usd"]
        )
        assert recomputed == pytest.approx(row["net_income_usd"], abs=0.005), y
        for column in ("current_tax_usd", "deferred_tax_usd"):
            expected = float(yearly[column].iloc[y - 1])
            assert row[column] == pytest.approx(expected, abs=0.005), (y, column)
    assert rows[0]["deferred_tax_usd"] > 1e5  # the year the review could not reconcile
    dates = projection.monthly["date"].to_numpy()
    horizon = scenario.horizon
    for y, row in enumerate(rows, start=1):
        first, last = (0 if y == 1 else 12 * y - 11), min(12 * y, horizon)
        assert np.datetime64(row["first_month"], "D") == dates[first], y
        assert np.datetime64(row["last_month"], "D") == dates[last], y
    assert str(rows[0]["first_month"].date()) == str(scenario.start_date.replace(day=1))
    assert sheet.cell(row=2, column=header.index("first_month") + 1).number_format == "yyyy-mm"


# --- Data validation as econ validates -----------------------------------------------------------


def test_live_months_are_held_within_the_horizon(seed):
    """fleet.retire_month only had to be at least 1; econ refuses one after the horizon. The
    bounds econ's scenario validation sets by the horizon and other inputs are the validation's
    (formulas over the named cells), with the figures as exported in the message."""
    scenario, _, book = seed
    horizon = scenario.horizon
    retire = _validation(book, _input_cell(book, "fleet.retire_month"))
    assert retire.type == "whole" and retire.formula2 == "calc_horizon_months"
    assert "fleet_purchase_month+1" in retire.formula1
    assert f"1 to {horizon} as exported" in retire.error
    in_service = _validation(book, _input_cell(book, "depreciation.in_service_month"))
    assert "calc_retire_month-fleet_purchase_month" in in_service.formula2
    for path in ("fleet.deployment_ramp_months", "utilization.ramp_months"):
        check = _validation(book, _input_cell(book, path))
        assert check.formula2 == "calc_horizon_months", path
    assert all(
        len(c.error) <= workbook.VALIDATION_TEXT
        for c in book["Assumptions"].data_validations.dataValidation
    )


@pytest.mark.parametrize(
    "path", ["fleet.retire_month", "depreciation.in_service_month", "utilization.ramp_months"]
)
def test_the_bounds_are_those_econ_refuses_beyond(seed, path):
    """At the bound the validation sets (the seed buys in month 0: the horizon for each) econ
    accepts the scenario; one past it, econ refuses it."""
    from econ.scenario import ScenarioError

    scenario, _, book = seed
    bound = scenario.horizon
    assert scenario.fleet.purchase_month == 0
    check = _validation(book, _input_cell(book, path))
    assert f"to {bound} as exported" in check.error or f"up to {bound} as exported" in check.error
    econ.load_scenario(SEED, {path: bound})
    with pytest.raises(ScenarioError):
        econ.load_scenario(SEED, {path: bound + 1})
