"""Review 26 of the workbook: inputs marked live (blue) where a column written as values moves
with them in econ (docs/exports.md, "Live inputs")."""

from __future__ import annotations

import io

import pytest
from openpyxl import load_workbook

import econ
from econ import workbook
from tests.conftest import ROOT
from tests.test_workbook import LEVEL_LOAN, build

SCENARIOS = ROOT / "models" / "scenarios"


def _resolved(name: str, overrides: dict):
    scenario = econ.load_scenario(SCENARIOS / f"{name}.toml", overrides)
    return workbook._resolve(econ.project(scenario), 0, scenario)


@pytest.mark.parametrize(
    ("name", "overrides", "key", "column"),
    [
        ("h200-fleet-gb300-refresh", {}, "utilization.ramp_months", "Monthly!tokens"),
        (
            "deepseek-r1-gb200-nvl72",
            {"depreciation.impairment.price_drop_threshold": 0.3},
            "fleet.deployment_ramp_months",
            "Monthly!impairment_usd",
        ),
        (
            "deepseek-r1-gb200-nvl72-macrs",
            {},
            "fleet.deployment_ramp_months",
            "Depreciation!tax_share_of_capex",
        ),
    ],
)
def test_a_ramp_moving_value_columns_is_not_live(name, overrides, key, column):
    """A ramp of 1 month is no ramp in the engine, and a whole number at 0 was tried only at 1:
    the ramp moved nothing, was written live, and the refresh workbook with
    utilization.ramp_months 0 -> 3 kept NPV 8,623,866 where econ gives 5,224,443 (the vintages'
    tokens and power are values; the impairment seed's impairment, the MACRS seed's tax
    schedule the same). Whole numbers are now tried one and two away."""
    resolved = _resolved(name, overrides)
    assert key not in resolved.live
    assert column in resolved.not_live[key]
    assert "written as values here and moving with it in econ" in resolved.not_live[key]


def test_a_ramp_no_value_column_depends_on_stays_live():
    """The seed's formulas make its ramps: they stay live."""
    resolved = _resolved("deepseek-r1-gb200-nvl72", {})
    assert {"fleet.deployment_ramp_months", "utilization.ramp_months"} <= resolved.live


def _validation_of(book, path: str):
    sheet = book["Assumptions"]
    row = next(r for r in range(2, sheet.max_row + 1) if sheet.cell(r, 1).value == path)
    cell = sheet.cell(row, workbook._assumption_column(0))
    return next(c for c in sheet.data_validations.dataValidation if cell.coordinate in c.sqref)


def test_a_hall_bounds_the_power_per_gpu_and_the_gpus_per_rack():
    """hall-10mw-hgx-b200-air with power.kw_per_gpu 2.1 (a rack of 16 x 2.1 - 3.26 = 30.34 kW
    in a 30 kW hall) recalculated with every check "ok" while econ refuses it; its data validation
    only held it to the field's 20 kW. The cell is now held to (30 + 3.26) / 16 = 2.07875, the
    GPUs per rack to 16 (17 draws 33.8 kW), the largest econ accepts."""
    from econ.scenario import ScenarioError, scenario_to_dict, validate_dict
    from econ.scenario.io import apply_overrides

    scenario = econ.load_scenario(SCENARIOS / "hall-10mw-hgx-b200-air.toml")
    book = load_workbook(io.BytesIO(build([scenario])))
    power = _validation_of(book, "power.kw_per_gpu")
    top = float(power.formula2)
    assert top == pytest.approx((30 + 3.26) / 16, rel=1e-8)
    assert "up to 2.07875 beside the other inputs as exported" in power.error
    data = scenario_to_dict(scenario)
    validate_dict(apply_overrides(data, {"power.kw_per_gpu": top}))
    with pytest.raises(ScenarioError, match="above the hall's limit"):
        validate_dict(apply_overrides(data, {"power.kw_per_gpu": top * (1 + 1e-8)}))
    racks = _validation_of(book, "fleet.gpus_per_rack")
    assert (racks.type, racks.formula2) == ("whole", "16")
    # (a scenario without a hall limit keeps the field's bounds)
    seed = econ.load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72.toml")
    assert seed.facility.hall_max_kw_per_rack is None
    assert (
        float(_validation_of(load_workbook(io.BytesIO(build([seed]))), "power.kw_per_gpu").formula2)
        == 20
    )


def test_a_given_loans_terms_name_the_command_without_hold_debt(capsys):
    """A loan that is not sized (the seed as a level-payment loan of its debt_share): its terms
    are live and their cells named `econ project SCENARIO --hold-debt --set
    financing.debt_share=VALUE`, which exits 3 (holding the base case's loan, a run cannot vary
    the loan's own terms). They now name the command without --hold-debt; other inputs keep it."""
    from econ.cli import main

    seed = econ.load_scenario(SCENARIOS / "deepseek-r1-gb200-nvl72.toml", LEVEL_LOAN)
    sheet = load_workbook(io.BytesIO(build([seed])))["Assumptions"]
    live = workbook._assumption_column(0, "live")
    text = {sheet.cell(r, 1).value: sheet.cell(r, live).value for r in range(2, sheet.max_row + 1)}
    for path in ("financing.debt_share", "financing.debt_term_months"):
        assert text[path] == (
            f"yes: econ project SCENARIO --set {path}=VALUE gives a change made here"
        )
    assert text["market.price_usd_per_mtok"].startswith("yes: econ project SCENARIO --hold-debt")
    path = str(SCENARIOS / "deepseek-r1-gb200-nvl72.toml")
    sets = [x for k, v in LEVEL_LOAN.items() for x in ("--set", f"{k}={v or 'none'}")]
    sets += ["--set", "financing.debt_share=0.5"]
    assert main(["project", path, *sets, "--hold-debt"]) == 3
    assert "cannot vary the loan's own terms" in capsys.readouterr().err
    assert main(["project", path, *sets]) == 0
