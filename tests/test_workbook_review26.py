"""Review 26 of the workbook: inputs marked live (blue) where a column written as values moves
with them in econ (docs/exports.md, "Live inputs")."""

from __future__ import annotations

import pytest

import econ
from econ import workbook
from tests.conftest import ROOT

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
