"""The fleet's operating costs stop when its last GPU is retired (an outside tax review found
staff paid, and deducted as tax losses, for months with no GPU in service); a site paid for by
contract or owned runs on to the horizon, and the warnings say which is which."""

from __future__ import annotations

import numpy as np
import pytest

from econ import ScenarioBatch, load_scenario, project
from tests.conftest import SCENARIOS

MACRS = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72-macrs")
REFRESH = next(p for p in SCENARIOS if p.stem == "h200-fleet-gb300-refresh")
LATE_LOSS = "EBITDA is negative in"


def seed_monthly_fleet_cost_usd(scenario) -> float:
    """The seed's opex per month in service from its own inputs: staff plus a twelfth of the
    insurance share of the capitalized cost (rack price + networking, storage and installation
    per GPU; no spares, no maintenance, no software) [USD/month]."""
    capex, opex = scenario.capex, scenario.opex
    gpus = scenario.fleet.gpu_count
    cost = capex.system_price_usd / capex.gpus_per_system * gpus + gpus * (
        capex.networking_usd_per_gpu + capex.storage_usd_per_gpu + capex.installation_usd_per_gpu
    )
    assert cost == 3_535_600.0  # 3.1 M rack + 72 x (4,300 + 1,750)
    return opex.staff_usd_per_month + opex.insurance_share_of_capex_annual * cost / 12


@pytest.mark.parametrize("retire", [36, 60])
def test_staff_and_insurance_are_paid_for_the_months_in_service_only(retire):
    # The review's case: retired at 60, the seed paid 12 x 3,600 = 43,200 USD of staff in
    # months 61-72 with no GPU in service (129,600 retired at 36).
    scenario = load_scenario(MACRS, {"fleet.retire_month": retire})
    lines = project(scenario).lines
    per_month = seed_monthly_fleet_cost_usd(scenario)
    assert per_month == pytest.approx(3_600 + 0.016 * 3_535_600 / 12, rel=1e-15)
    opex = lines["opex_usd"][0]
    assert opex[1 : retire + 1] == pytest.approx(np.full(retire, per_month), rel=1e-12)
    assert not opex[retire + 1 :].any()
    assert opex.sum() == pytest.approx(retire * per_month, rel=1e-12)
    after = slice(retire + 1, None)
    for line in ("gpus_in_service", "power_usd", "facility_usd", "revenue_usd", "ebitda_usd"):
        assert not lines[line][0, after].any(), line


def test_retiring_at_60_is_the_projection_that_ends_at_60():
    # Nothing is paid or earned after the fleet is retired (no contracted or owned site): the
    # seed retired at month 60 of 72 has the NPV and totals of the seed run for 60 months
    # (396,304 USD; 373,239 while staff were paid to month 72).
    retired = project(load_scenario(MACRS, {"fleet.retire_month": 60})).summary.iloc[0]
    shorter = project(load_scenario(MACRS, {"horizon_months": 60})).summary.iloc[0]
    for key in ("npv_usd", "ebitda_usd_total", "revenue_usd_total", "net_income_usd_total"):
        assert retired[key] == pytest.approx(shorter[key], rel=1e-12), key
    assert retired["npv_usd"] == pytest.approx(396_304, abs=1.0)


def test_no_loss_warning_advises_retiring_a_fleet_already_retired():
    retired = project(load_scenario(MACRS, {"fleet.retire_month": 60})).warnings[0]
    assert not [w for w in retired if w.startswith(LATE_LOSS)]
    # Kept to month 72 the GPUs themselves lose money from month 61: that warning stays.
    kept = project(load_scenario(MACRS)).warnings[0]
    assert [w for w in kept if w.startswith(LATE_LOSS)] == [
        "EBITDA is negative in 12 months after it was positive, from month 61 (-85,660 USD in "
        "all): the GPUs cost more to run than they earn then; an earlier fleet.retire_month "
        "would stop the loss"
    ]


def test_a_colocation_contract_outlives_the_fleet_and_is_named():
    # 150 kW contracted at 194.95 USD/kW-month (flat) is owed for months 37-72 after the fleet is
    # retired at 36: the contract's cost, not the GPUs', so no advice to retire earlier.
    scenario = load_scenario(MACRS, {"fleet.retire_month": 36, "facility.contracted_kw": 150.0})
    projection = project(scenario)
    lines = projection.lines
    rent = 150.0 * scenario.facility.colo_usd_per_kw_month
    assert lines["facility_usd"][0, 37:] == pytest.approx(np.full(36, rent), rel=1e-12)
    assert not lines["opex_usd"][0, 37:].any() and not lines["power_usd"][0, 37:].any()
    warnings = projection.warnings[0]
    assert not [w for w in warnings if w.startswith(LATE_LOSS)]
    assert (
        f"the site costs {36 * rent:,.0f} USD in 36 months after the last GPU is retired in "
        "month 36 (from month 37 to the horizon, month 72): the colocation contract "
        "(facility.contracted_kw) is paid whether GPUs serve or not, while the fleet's staff "
        "and power and the GPUs' insurance, maintenance and software stop with it; "
        "horizon_months = 36 ends the projection with the fleet"
    ) in warnings
    assert f"{36 * rent:,.0f}" == "1,052,730"


def test_an_owned_hall_is_maintained_after_the_fleet_is_retired():
    scenario = load_scenario(
        MACRS,
        {
            "fleet.retire_month": 36,
            "facility.mode": "owned",
            "facility.colo_usd_per_kw_month": 0.0,
            "facility.maintenance_share_of_capex_annual": 0.02,
        },
    )
    projection = project(scenario)
    # The hall is built for the rack's full-load IT power: 72 x 1.87 kW at 11.7 M USD per MW.
    hall = 72 * 1.87 / 1000 * scenario.facility.capex_usd_per_mw
    maintenance = 0.02 * hall / 12
    assert projection.lines["facility_usd"][0, 37:] == pytest.approx(
        np.full(36, maintenance), rel=1e-12
    )
    assert not projection.lines["opex_usd"][0, 37:].any()
    assert any(
        w.startswith(f"the site costs {36 * maintenance:,.0f} USD in 36 months after the last GPU")
        and "the owned hall's maintenance is paid whether GPUs serve or not" in w
        for w in projection.warnings[0]
    )


def test_staff_stay_while_a_later_vintage_is_to_serve():
    # The H200 fleet retired at month 10, the GB300 vintage bought in month 18 serves from 19:
    # the fleet is not retired until both are, so its staff are paid through months 11-18 with
    # no GPU in service (nothing else is: insurance follows each vintage's own service), and
    # that loss is not the GPUs' to stop by retiring them earlier.
    scenario = load_scenario(REFRESH, {"fleet.retire_month": 10})
    projection = project(scenario)
    lines = projection.lines
    assert not lines["gpus_in_service"][0, 11:19].any()
    staff = scenario.opex.staff_usd_per_month
    assert lines["opex_usd"][0, 11:19] == pytest.approx(np.full(8, staff), rel=1e-15)
    assert lines["ebitda_usd"][0, 11:19] == pytest.approx(np.full(8, -staff), rel=1e-15)
    assert not [w for w in projection.warnings[0] if w.startswith(LATE_LOSS)]


@pytest.mark.parametrize("contracted_kw", [None, 100.0])
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_no_fleet_cost_once_the_last_gpu_is_retired(path, contracted_kw):
    """Property, every ready-made scenario retired in each month 2..H: from the month after the
    last GPU in service to the horizon there is no power, opex (staff, maintenance, insurance,
    software, SG&A) or revenue, and the facility costs only its contract (contracted kW x the
    month's escalated price); from the first to the last month with GPUs, vintages' gaps
    included, the staff are paid."""
    base = load_scenario(path)
    horizon = base.horizon_months
    retire = np.arange(2, horizon + 1)
    columns = {"fleet.retire_month": retire}
    if contracted_kw is not None:
        columns["facility.contracted_kw"] = np.full(retire.size, contracted_kw)
    lines = project(ScenarioBatch.repeat(base, retire.size, columns)).lines
    months = np.arange(lines["opex_usd"].shape[1])
    serving = lines["gpus_in_service"] > 0
    first = np.argmax(serving, axis=1)
    last = months[-1] - np.argmax(serving[:, ::-1], axis=1)
    facility = base.facility
    escalation = (1 + facility.escalation_annual) ** ((months - 1) / 12)
    contract = (contracted_kw or 0.0) * facility.colo_usd_per_kw_month * escalation
    staff = base.opex.staff_usd_per_month
    for i in range(retire.size):
        after = slice(last[i] + 1, horizon + 1)
        for line in ("power_usd", "opex_usd", "revenue_usd"):
            assert not lines[line][i, after].any(), (line, retire[i])
        assert lines["facility_usd"][i, after] == pytest.approx(contract[after], rel=1e-12)
        assert (lines["opex_usd"][i, first[i] : last[i] + 1] >= staff * (1 - 1e-12)).all()
