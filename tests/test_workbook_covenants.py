"""The workbook's covenant rows and payback are live formulas (docs/exports.md, "Live formulas").

A lender's analyst set the covenant floor of the seed's workbook to 1.4x and recalculated it in
LibreOffice: the minimum DSCR and the DSCR headroom moved, but the breach months stayed 0 and the
first breach "n/a" (`econ project --set financing.covenants.dscr_floor=1.4`: 52 months, the first
in month 1), and a token price of 0.25 left the payback at 35.4 months where econ says never.
Each case here changes a named input of an exported workbook, recalculates it in LibreOffice and
compares every formula cell of Monthly, Annual and Summary with `econ project` of the same change
(the exported loan held where econ sized it, as the workbook holds it); the covenant rows are
also counted off the workbook's own tested DSCR column, as the analyst counted them.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
from openpyxl import load_workbook

import econ
from econ import workbook
from econ.scenario import ScenarioError
from tests.test_workbook import (
    LEVEL_LOAN,
    SEED,
    compare_with_engine,
)
from tests.test_workbook_live import STACK, _summary, exported_changed_recalculated, held

COVENANTS = {
    **LEVEL_LOAN,
    "financing.covenants.llcr_floor": 1.3,
    "financing.covenants.ltv_ceiling": 0.75,
    "financing.covenants.first_test_month": 6,
}
"""The seed's loan as a level loan with all three covenants, the DSCR and LLCR tested from
month 6: every part of the breach test is a formula."""
CASES = {
    # name: (scenario file, overrides of the export, inputs changed in the workbook)
    "floor_1_4": (SEED, {}, {"financing.covenants.dscr_floor": 1.4}),
    "floor_1_37": (SEED, {}, {"financing.covenants.dscr_floor": 1.37}),
    "price_0_25": (SEED, {}, {"market.price_usd_per_mtok": 0.25}),
    "price_0_3": (SEED, {}, {"market.price_usd_per_mtok": 0.3}),
    "level_price": (SEED, LEVEL_LOAN, {"market.price_usd_per_mtok": 0.17}),
    "ltv_ceiling": (SEED, COVENANTS, {"financing.covenants.ltv_ceiling": 0.55}),
    "llcr_floor": (SEED, COVENANTS, {"financing.covenants.llcr_floor": 0.5, "power.pue": 1.3}),
    "retire_80": (SEED, {}, {"fleet.retire_month": 80}),
    # the capital stack's notes pay coupons twice a year: tested between them too
    "stack_floor_1_1": (STACK, {}, {"financing.covenants.dscr_floor": 1.1}),
    "stack_untested": (STACK, {}, {"financing.covenants.first_test_month": 73}),
}
ROWS = (
    "covenant_breach_months",
    "first_breach_month",
    "months_of_headroom",
    "min_llcr",
    "payback_months",
)
"""The Summary rows written as the engine's values before, formulas now."""


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """{name: (written, changed, recalculated)}: each case exported, changed and recalculated
    in one LibreOffice run."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    folder = tmp_path_factory.mktemp("covenants")
    return exported_changed_recalculated(folder, CASES)


def _engine(name: str) -> dict[str, float]:
    path, overrides, changes = CASES[name]
    metrics = econ.project(held(path, overrides, changes)).metrics
    return {key: float(metrics[key][0]) for key in ROWS}


def _agrees(shown, expected: float) -> bool:
    if math.isnan(expected):
        return isinstance(shown, str) and shown.startswith("n/a: ")
    return isinstance(shown, int | float) and shown == pytest.approx(expected, rel=1e-9)


def _tested(path) -> np.ndarray:
    """The recalculated Debt!dscr_test column (NaN where a month is not tested)."""
    sheet = load_workbook(path, data_only=True)["Debt"]
    header = [c.value for c in sheet[1]]
    j = header.index("dscr_test")
    cells = [row[j] for row in sheet.iter_rows(min_row=2, values_only=True)]
    return np.array([c if isinstance(c, int | float) else np.nan for c in cells], dtype=float)


@pytest.mark.parametrize("name", [n for n in CASES if n != "retire_80"])
def test_every_formula_recalculates_as_econ_with_the_same_change(books, name):
    """Every formula cell (the covenant rows, LLCR, LTV, the breach flags and payback among
    them) against `econ project` with the change, the loan held as exported."""
    path, overrides, changes = CASES[name]
    _, changed, recalculated = books[name]
    assert compare_with_engine(changed, recalculated, [held(path, overrides, changes)]) > 2000
    shown, expected = _summary(recalculated), _engine(name)
    for key in ROWS:
        assert _agrees(shown[key], expected[key]), (key, shown[key], expected[key])


def test_the_reviewers_floor_of_1_4_breaches_in_52_months_from_month_1(books):
    """The review's case: the floor typed in the workbook moves the breach rows as econ does,
    and they count the workbook's own tested DSCR below the floor."""
    written, _, recalculated = books["floor_1_4"]
    before, after = _summary(written), _summary(recalculated)
    assert before["covenant_breach_months"] == 0 and before["first_breach_month"].startswith("n/a")
    expected = _engine("floor_1_4")
    assert expected["covenant_breach_months"] > 0  # (econ: 52 months, the first in month 1)
    tested = _tested(recalculated)
    below = np.flatnonzero(tested < 1.4)
    assert after["covenant_breach_months"] == below.size == expected["covenant_breach_months"]
    assert after["first_breach_month"] == below[0] == expected["first_breach_month"]
    assert after["months_of_headroom"] == expected["months_of_headroom"]


@pytest.mark.parametrize("name", ["floor_1_37", "level_price", "price_0_3"])
def test_some_months_in_breach_and_some_of_headroom(books, name):
    """Breaches from a month after the first tested, with headroom before them: the first
    breach and the months of headroom read the breach flags, not the breach count alone."""
    _, _, recalculated = books[name]
    shown, expected = _summary(recalculated), _engine(name)
    tested = _tested(recalculated)
    assert 0 < shown["covenant_breach_months"] < np.count_nonzero(~np.isnan(tested))
    for key in ("first_breach_month", "months_of_headroom", "covenant_breach_months"):
        assert shown[key] == expected[key], key


def test_the_stacks_notes_are_tested_between_coupons_in_the_workbook(books):
    """The capital stack's covenant rows after the floor is typed as 1.1x and recalculated:
    the breaches counted off the workbook's own tested DSCR, months without a coupon among
    them, as econ counts them; a first test month after the horizon tests no month, and the
    headroom cells say so."""
    _, _, recalculated = books["stack_floor_1_1"]
    shown, expected = _summary(recalculated), _engine("stack_floor_1_1")
    tested = _tested(recalculated)
    below = np.flatnonzero(tested < 1.1)
    service = load_workbook(recalculated, data_only=True)["Debt"]
    header = [c.value for c in service[1]]
    j = header.index("debt_service_usd")
    paid = np.array([r[j] for r in service.iter_rows(min_row=2, values_only=True)], dtype=float)
    assert (paid[below] <= 1e-6).any()  # a month between coupons is in breach
    assert shown["covenant_breach_months"] == below.size == expected["covenant_breach_months"]
    assert shown["first_breach_month"] == below[0] == expected["first_breach_month"]
    assert shown["months_of_headroom"] == expected["months_of_headroom"]
    untested = _summary(books["stack_untested"][2])
    assert untested["covenant_breach_months"] == 0
    for key in ("months_of_headroom", "dscr_headroom", "first_breach_month"):
        assert isinstance(untested[key], str) and untested[key].startswith("n/a: "), key
    assert untested["months_of_headroom"] == workbook.UNTESTED


def test_payback_follows_the_token_price(books):
    """The review's case: at 0.25 USD/M tokens the cumulative project cash flow never turns
    positive (econ, the loan held: null), so the cell says n/a; at 0.30 it is econ's month."""
    written, _, recalculated = books["price_0_25"]
    exported = _summary(written)["payback_months"]
    assert isinstance(exported, float) and exported > 0
    assert math.isnan(_engine("price_0_25")["payback_months"])
    assert _summary(recalculated)["payback_months"].startswith("n/a: the cumulative project")
    later = _summary(books["price_0_3"][2])["payback_months"]
    assert later == pytest.approx(_engine("price_0_3")["payback_months"], rel=1e-9)
    assert later > exported + 1


@pytest.mark.parametrize(("name", "changed"), [("ltv_ceiling", "ltv"), ("llcr_floor", "llcr")])
def test_llcr_and_ltv_covenants_are_tested_by_formulas(books, name, changed):
    """With an LLCR floor and an LTV ceiling, the breach flag tests all three covenants as
    econ does (the LTV from month 0, the LLCR from the first test month): changing either in
    the workbook moves the breach rows as econ gives them."""
    written, _, recalculated = books[name]
    formulas = load_workbook(written)["Monthly"]
    header = [c.value for c in formulas[1]]
    flag = formulas.cell(row=10, column=header.index("covenant_breach") + 1).value
    assert f"financing_covenants_{changed}" in flag
    for column in ("llcr", "ltv"):
        assert formulas.cell(row=10, column=header.index(column) + 1).data_type == "f"
    before, after = _summary(written), _summary(recalculated)
    expected = _engine(name)
    assert after["covenant_breach_months"] == expected["covenant_breach_months"]
    assert after["covenant_breach_months"] != before["covenant_breach_months"] or (
        after["first_breach_month"] != before["first_breach_month"]
    )


def test_a_month_beyond_the_horizon_is_flagged(books):
    """fleet.retire_month 80 in a 72-month workbook (pasted past the data validation): econ
    refuses it, and the Summary's check row says so, red."""
    written, _, recalculated = books["retire_80"]
    with pytest.raises(ScenarioError, match="retire_month is 80"):
        econ.load_scenario(SEED, {"fleet.retire_month": 80})
    assert _summary(written)["check.months_within_horizon"] == workbook.CHECK_OK
    assert _summary(recalculated)["check.months_within_horizon"].startswith(
        "econ refuses these inputs"
    )


def test_a_capital_stacks_llcr_is_values_and_its_minimum_says_as_exported():
    """A capital stack's LLCR discounts at the stack's blended rate, which no formula models:
    the line is values, so the minimum LLCR is the engine's value, grey italic with the note
    "as exported" (no formula over values that would not follow a change)."""
    from tests.test_workbook_live import STACK
    from tests.workbook_helpers import summary_cells

    scenario = econ.load_scenario(STACK)
    resolved = workbook._resolve(econ.project(scenario), 0, scenario)
    assert resolved.modes[("Monthly", "llcr")] == "values"
    assert resolved.summary["min_llcr"][0] == "values"
    assert resolved.summary["covenant_breach_months"][0] == "formula"
    book = load_workbook(io_bytes(scenario))
    cell = summary_cells(book["Summary"])["min_llcr"][0]
    assert cell.font.i and workbook.AS_EXPORTED in cell.comment.text.lower()


def io_bytes(scenario):
    import io

    return io.BytesIO(workbook.workbook_bytes(econ.project(scenario), [scenario]))
