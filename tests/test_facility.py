"""Facility: colocation per contracted kW-month, owned hall capex and depreciation, liquid retrofit,
hall limits, and the [facility] scenario section."""

from __future__ import annotations

import math
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from econ import facility as fac
from econ.errors import InputError
from econ.scenario.power_models import (
    Facility,
    FacilityMode,
    HallCooling,
    Power,
    RackCooling,
    check_fleet_in_hall,
)

CBRE_NA_2024H2 = 184.06  # USD per kW-month, 250-500 kW, CBRE North America H2 2024 (primary)
CUSHMAN_2025 = 11.7e6  # USD per MW of critical load, Cushman & Wakefield 2025 (primary)
MS_LIQUID = 50_000.0  # USD per GB300 NVL72 rack, Morgan Stanley via secondary (2025)
AIR, LIQUID = fac.RACK_COOLING.index("air"), fac.RACK_COOLING.index("liquid")
HALL_AIR, HALL_LIQUID, HALL_RETROFIT = (fac.HALL_COOLING.index(c) for c in fac.HALL_COOLING)


# --- Colocation -----------------------------------------------------------------------------------


def test_colocation_rent_cbre_reference():
    # 1 MW contracted at CBRE's 184.06 USD/kW-month is 184,060 USD a month; +3% a year from month 13.
    months = np.arange(14)
    contracted = np.full((1, 14), 1000.0)
    rent = fac.colocation_usd_per_month(contracted, contracted, [CBRE_NA_2024H2], [0.03], months)
    assert rent[0, 1] == pytest.approx(184_060.0, rel=1e-12)
    assert rent[0, 13] == pytest.approx(184_060.0 * 1.03, rel=1e-12)


def test_contract_billed_whether_drawn_or_not():
    service = np.array([[False, True, True]])
    nameplate = np.array([[0.0, 50.0, 100.0]])  # ramping deployment
    contracted = fac.contracted_kw_by_month([150.0], nameplate, service)
    np.testing.assert_allclose(contracted, [[0.0, 150.0, 150.0]])
    rent = fac.colocation_usd_per_month(contracted, nameplate, [200.0], [0.0], np.arange(3))
    np.testing.assert_allclose(rent, [[0.0, 30_000.0, 30_000.0]])
    np.testing.assert_allclose(fac.stranded_kw(contracted, [[0, 40.0, 75.0]]), [[0, 110.0, 75.0]])


def test_no_contract_follows_the_nameplate_as_the_foundation_did():
    # Foundation engine: facility = GPUs in service x kW per GPU x colo price.
    months = np.arange(4)
    gpus = np.array([[0.0, 72.0, 72.0, 72.0]])
    nameplate = gpus * 1.87
    service = months[None, :] >= 1
    contracted = fac.contracted_kw_by_month([np.nan], nameplate, service)
    rent = fac.colocation_usd_per_month(contracted, nameplate, [194.95], [0.02], months)
    escalation = 1.02 ** (np.maximum(months - 1, 0) / 12)
    np.testing.assert_allclose(rent, gpus * 1.87 * 194.95 * escalation, rtol=1e-13)


def test_overage_above_the_contract():
    # 120 kW drawn peak on a 100 kW contract at 200 USD/kW-month, overage at 1.5x:
    # 200 * (100 + 1.5 * 20) = 26,000 USD.
    rent = fac.colocation_usd_per_month(
        np.array([[0.0, 100.0]]), np.array([[0.0, 120.0]]), [200.0], [0.0], np.arange(2), [1.5]
    )
    assert rent[0, 1] == pytest.approx(26_000.0)


def test_capacity_used_share():
    share = fac.capacity_used_share(np.array([[100.0, 100.0], [0.0, 0.0]]), [[70, 80], [0, 0]])
    assert share[0] == pytest.approx(0.75)
    assert np.isnan(share[1])


# --- Owned facility -------------------------------------------------------------------------------


def test_owned_facility_cushman_reference():
    # 10 MW of critical load at 11.7 million USD/MW = 117 million USD; 20-year straight line is
    # 487,500 USD a month; book value after 6 years = 117e6 - 72 * 487,500 = 81.9 million USD.
    capex = fac.owned_facility_capex_usd([10_000.0], [CUSHMAN_2025])
    assert capex[0] == pytest.approx(117e6)
    months = np.arange(73)
    dep = fac.straight_line_usd_per_month(capex, [20.0], months)
    assert dep[0, 0] == 0.0
    assert dep[0, 1] == pytest.approx(487_500.0)
    assert fac.book_value_usd(capex, dep)[0] == pytest.approx(81.9e6)
    maint = fac.maintenance_usd_per_month(capex, [0.02], [0.0], months, months[None, :] >= 1)
    assert maint[0, 1] == pytest.approx(195_000.0)  # 2% of 117 million / 12


def test_fractional_life_ends_with_a_partial_month():
    dep = fac.straight_line_usd_per_month([1200.0], [1.0 / 12 * 2.5], np.arange(5))
    np.testing.assert_allclose(dep, [[0.0, 480.0, 480.0, 240.0, 0.0]])


@settings(max_examples=50, deadline=None)
@given(
    cost=st.floats(1.0, 1e9),
    life=st.floats(1.0, 20.0),
    first=st.integers(0, 12),
)
def test_straight_line_sums_to_cost_over_its_life(cost, life, first):
    months = np.arange(int(np.ceil(life * 12)) + first + 2)
    dep = fac.straight_line_usd_per_month([cost], [life], months, first_month=first)
    assert dep.sum() == pytest.approx(cost, rel=1e-9)
    assert (dep >= 0).all() and (dep[0, :first] == 0).all()


# --- Liquid retrofit and hall limits --------------------------------------------------------------


def test_liquid_retrofit_only_for_liquid_racks_in_a_retrofitted_air_hall():
    capex = fac.liquid_retrofit_capex_usd(
        [68, 68, 68, 68],
        [MS_LIQUID] * 4,
        [LIQUID, LIQUID, AIR, LIQUID],
        [HALL_RETROFIT, HALL_LIQUID, HALL_RETROFIT, HALL_AIR],
    )
    np.testing.assert_allclose(capex, [3.4e6, 0.0, 0.0, 0.0])  # 68 x 50,000


def test_rack_above_hall_limit_is_refused():
    with pytest.raises(fac.HallLimitError) as info:
        fac.check_racks_fit_hall([132.0], [20.0])
    message = str(info.value)
    assert "132 kW" in message and "20 kW per rack" in message
    assert isinstance(info.value, InputError)


def test_batch_names_the_failing_rows():
    with pytest.raises(fac.HallLimitError, match="b: a rack draws 132 kW"):
        fac.check_racks_fit_hall([28.6, 132.0], [40.0, 40.0], names=["a", "b"])
    fac.check_racks_fit_hall([28.6, 132.0], [40.0, np.nan])  # NaN: no limit
    fac.check_racks_fit_hall([132.0], [132.0])  # at the limit fits


def test_liquid_rack_in_air_hall_is_refused():
    assert not fac.cooling_compatible(LIQUID, HALL_AIR)
    assert fac.cooling_compatible(AIR, HALL_LIQUID) and fac.cooling_compatible(
        LIQUID, HALL_RETROFIT
    )
    with pytest.raises(fac.HallLimitError, match="liquid-cooled but the hall is air-cooled"):
        fac.check_racks_fit_hall([132.0], [np.inf], [LIQUID], [HALL_AIR])


# --- Composition ----------------------------------------------------------------------------------


def _costs(mode, **over):
    months = np.arange(13)
    service = (months >= 1)[None, :].repeat(2, axis=0)
    nameplate = 720.0 * service
    args = dict(
        mode=np.array([mode, mode]),
        months=months,
        horizon_months=np.array([12, 12]),
        nameplate_it_kw=nameplate,
        drawn_it_kw=0.75 * nameplate,
        colo_usd_per_kw_month=np.array([200.0, 200.0]),
        escalation_annual=np.zeros(2),
        contracted_kw=np.array([np.nan, 1000.0]),
        overage_multiplier=np.ones(2),
        critical_kw=np.array([np.nan, 1000.0]),
        capex_usd_per_mw=np.full(2, 12e6),
        life_years=np.full(2, 20.0),
        maintenance_share_of_capex_annual=np.full(2, 0.03),
        racks=np.array([10.0, 10.0]),
        rack_cooling=np.array([LIQUID, LIQUID]),
        hall_cooling=np.array([HALL_LIQUID, HALL_RETROFIT]),
        liquid_retrofit_usd_per_rack=np.full(2, MS_LIQUID),
        retrofit_life_years=np.full(2, 10.0),
    )
    args.update(over)
    return fac.facility_costs(**args)


def test_facility_costs_colocation():
    costs = _costs(fac.FACILITY_MODES.index("colocation"))
    # Row 0 follows the nameplate (720 kW), row 1 pays its 1,000 kW contract.
    assert costs.facility_usd[0, 1] == pytest.approx(720 * 200.0)
    assert costs.facility_usd[1, 1] == pytest.approx(1000 * 200.0)
    assert costs.facility_usd[:, 0].tolist() == [0.0, 0.0]
    # Only row 1 retrofits: 10 racks x 50,000 in month 0. A tenant's improvement is amortized
    # over the shorter of its life (10 years) and the lease, which runs to the horizon (months
    # 1-12; ASC 842-20-35-12), so nothing of it is left to count as sold at the horizon.
    assert costs.capex_usd[:, 0].tolist() == [0.0, 500_000.0]
    np.testing.assert_allclose(costs.depreciation_usd[1, 1:], 500_000.0 / 12, rtol=1e-12)
    assert costs.book_value_end_usd[1] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(costs.stranded_kw[:, 1], [720 * 0.25, 1000 - 540])


def test_facility_costs_owned():
    costs = _costs(fac.FACILITY_MODES.index("owned"))
    # Row 0 builds its peak nameplate 720 kW, row 1 its 1,000 kW critical load, at 12 M USD/MW.
    build = np.array([0.72 * 12e6, 12e6])
    np.testing.assert_allclose(costs.capex_usd[:, 0], build + [0.0, 500_000.0])
    np.testing.assert_allclose(costs.facility_usd[:, 1], build * 0.03 / 12)
    np.testing.assert_allclose(
        costs.depreciation_usd[:, 1], build / 240 + [0.0, 500_000.0 / 120], rtol=1e-12
    )
    assert (costs.contracted_kw == 0).all()
    assert costs.stranded_kw[1, 1] == pytest.approx(1000 - 540)


def test_the_hall_depreciates_from_the_sites_opening():
    # An infrastructure review: an owned hall whose site opens in month 12 depreciated from
    # month 1. Placed in service at the opening (ASC 360-10-35-4), it depreciates over months
    # 12-60 of a 20-year life: book value cost x (1 - 49/240) at month 60, and a retrofit too.
    months = np.arange(61)
    service = (months >= 12)[None, :].repeat(2, axis=0)
    nameplate = 9_899.82 * service
    owned = fac.FACILITY_MODES.index("owned")
    costs = _costs(
        owned,
        months=months,
        horizon_months=np.array([60, 60]),
        nameplate_it_kw=nameplate,
        drawn_it_kw=nameplate,
        critical_kw=np.array([np.nan, np.nan]),
        capex_usd_per_mw=np.full(2, CUSHMAN_2025),
        open_month=np.array([12, 12]),
    )
    build = 9_899.82 / 1000 * CUSHMAN_2025  # 115.83 M USD
    retrofit = np.array([0.0, 10 * MS_LIQUID])
    assert (costs.depreciation_usd[:, :12] == 0).all()
    np.testing.assert_allclose(
        costs.depreciation_usd[:, 12], build / 240 + retrofit / 120, rtol=1e-12
    )
    np.testing.assert_allclose(
        costs.book_value_end_usd, build * (1 - 49 / 240) + retrofit * (1 - 49 / 120), rtol=1e-12
    )


def test_interest_capitalized_on_the_site_is_part_of_its_cost():
    # Construction-loan interest on the site's capex (ASC 835-20-30-2) is added to the hall and
    # the retrofit in proportion to their capex (both paid in month 0) and depreciated with them;
    # the cash capex stays what was paid.
    owned = fac.FACILITY_MODES.index("owned")
    plain = _costs(owned)
    interest = np.array([1_000.0, 30_000.0])
    costs = _costs(owned, capitalized_interest_usd=interest)
    capex = plain.capex_usd[:, 0]
    np.testing.assert_array_equal(costs.capex_usd, plain.capex_usd)
    np.testing.assert_allclose(
        costs.depreciation_usd, plain.depreciation_usd * (1 + interest / capex)[:, None]
    )
    np.testing.assert_allclose(
        costs.book_value_end_usd, plain.book_value_end_usd * (1 + interest / capex)
    )


@settings(max_examples=50, deadline=None)
@given(
    horizon=st.integers(1, 120),
    opened=st.integers(0, 120),
    life=st.floats(1.0, 50.0),
    owned=st.booleans(),
)
def test_a_tenants_retrofit_is_written_off_by_the_horizon(horizon, opened, life, owned):
    # In a colocation hall the retrofit is amortized from the opening over at most the months
    # left to the horizon: its book value at the horizon is 0 whatever its life. An owner keeps
    # its own life: cost x (1 - months depreciated / life months), at least 0.
    opened = min(opened, horizon)
    months = np.arange(horizon + 1)
    service = (months >= opened)[None, :]
    mode = fac.FACILITY_MODES.index("owned" if owned else "colocation")
    costs = fac.facility_costs(
        mode=np.array([mode]),
        months=months,
        horizon_months=np.array([horizon]),
        nameplate_it_kw=100.0 * service,
        drawn_it_kw=100.0 * service,
        colo_usd_per_kw_month=np.array([0.0]),
        escalation_annual=np.zeros(1),
        contracted_kw=np.array([np.nan]),
        overage_multiplier=np.ones(1),
        critical_kw=np.array([np.nan]),
        capex_usd_per_mw=np.zeros(1),
        life_years=np.full(1, 20.0),
        maintenance_share_of_capex_annual=np.zeros(1),
        racks=np.array([4.0]),
        rack_cooling=np.array([LIQUID]),
        hall_cooling=np.array([HALL_RETROFIT]),
        liquid_retrofit_usd_per_rack=np.full(1, MS_LIQUID),
        retrofit_life_years=np.array([life]),
        open_month=np.array([opened]),
    )
    cost = 4 * MS_LIQUID
    left = max(cost * (1 - (horizon - opened + 1) / (12 * life)), 0.0) if owned else 0.0
    assert costs.book_value_end_usd[0] == pytest.approx(left, abs=1e-6)
    assert (costs.depreciation_usd[0, :opened] == 0).all()
    assert costs.depreciation_usd[0].sum() == pytest.approx(cost - left, rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(
    contracted=st.floats(0.0, 1e4),
    peak=st.floats(0.0, 1e4),
    rate=st.floats(0.0, 500.0),
    overage=st.floats(1.0, 3.0),
)
def test_rent_at_least_the_contract_and_monotone_in_peak(contracted, peak, rate, overage):
    k = np.array([[0.0, contracted]])
    rent = fac.colocation_usd_per_month(
        k, np.array([[0.0, peak]]), [rate], [0.0], np.arange(2), [overage]
    )
    assert rent[0, 1] >= rate * contracted - 1e-6
    more = fac.colocation_usd_per_month(
        k, np.array([[0.0, peak + 1.0]]), [rate], [0.0], np.arange(2), [overage]
    )
    assert more[0, 1] >= rent[0, 1] - 1e-9


# --- The [facility] scenario section --------------------------------------------------------------


def test_literal_orders_match_the_domain_codes():
    assert typing.get_args(FacilityMode) == fac.FACILITY_MODES
    assert typing.get_args(RackCooling) == fac.RACK_COOLING
    assert typing.get_args(HallCooling) == fac.HALL_COOLING


def test_foundation_fields_still_work():
    section = Facility(colo_usd_per_kw_month=194.95, escalation_annual=0.0)
    assert section.mode == "colocation" and section.contracted_kw is None


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"colo_usd_per_kw_month": -1.0}, "negative price of -1.0"),
        ({"capex_usd_per_mw": -5.0}, "negative price"),
        ({"mode": "owned", "colo_usd_per_kw_month": 100.0}, "pays no colocation rent"),
        ({"mode": "owned", "contracted_kw": 100.0}, "expected critical_kw"),
        ({"rack_cooling": "liquid"}, "needs facility water"),
        ({"kw_per_rack": 132.0, "hall_max_kw_per_rack": 20.0}, "above the hall's limit of 20 kW"),
        ({"life_years": 0.5}, "greater than or equal to 1"),
        ({"hall_cooling": "immersion"}, "'air', 'liquid' or 'air_retrofit_liquid'"),
    ],
)
def test_bad_facility_input(fields, expected):
    with pytest.raises(ValidationError) as info:
        Facility(**fields)
    assert expected in str(info.value)


def test_fleet_checked_against_the_hall():
    power = Power(kw_per_gpu=1.8333)
    liquid = {"rack_cooling": "liquid", "hall_cooling": "liquid"}
    # 72 x 1.8333 = 132 kW per rack against a 40 kW legacy limit.
    with pytest.raises(ValueError, match="above the hall's limit of 40 kW"):
        check_fleet_in_hall(72, 72, power, Facility(hall_max_kw_per_rack=40.0, **liquid))
    check_fleet_in_hall(72, 72, power, Facility(hall_max_kw_per_rack=140.0, **liquid))
    # Two racks of 2.5 m² need 5 m².
    with pytest.raises(ValueError, match="2 racks"):
        check_fleet_in_hall(144, 72, power, Facility(floor_m2=4.0))
    check_fleet_in_hall(144, 72, power, Facility(floor_m2=5.0))
    # A chip-only figure gets its host share before the check: 16 x 1.0 x 1.3 = 20.8 kW > 20.
    chip = Power(kw_per_gpu=1.0, kw_per_gpu_definition="chip_only", host_overhead_share=0.3)
    with pytest.raises(ValueError, match="20.8 kW"):
        check_fleet_in_hall(16, 16, chip, Facility(hall_max_kw_per_rack=20.0))


def test_hall_limit_checks_the_physical_rack_of_catalog_hardware():
    # GB200 NVL72 at SemiAnalysis' all-in 1.87 kW per GPU: 72 x 1.87 = 134.64 kW carries a share of
    # networking outside the rack; the hall's limit applies to the 120 kW rack (models/racks.toml),
    # as in econ size. Energy keeps the per-GPU figure.
    power = Power(kw_per_gpu=1.87)
    liquid = {"rack_cooling": "liquid", "hall_cooling": "liquid"}
    check_fleet_in_hall(
        72, 72, power, Facility(hall_max_kw_per_rack=125.0, **liquid), "gb200-nvl72"
    )
    with pytest.raises(ValueError, match=r"120 kW \(the physical gb200-nvl72 rack, models/racks"):
        check_fleet_in_hall(
            72, 72, power, Facility(hall_max_kw_per_rack=115.0, **liquid), "gb200-nvl72"
        )
    # Without the hardware, or another rack than the catalog's: GPUs x kW per GPU, named as such.
    for hardware, gpus_per_rack in ((None, 72), ("my-own-asic", 72), ("gb200-nvl72", 36)):
        limit = 0.9 * gpus_per_rack * 1.87
        with pytest.raises(
            ValueError, match=f"draws {gpus_per_rack * 1.87:g} kW \\({gpus_per_rack} GPUs x"
        ):
            check_fleet_in_hall(
                72, gpus_per_rack, power, Facility(hall_max_kw_per_rack=limit, **liquid), hardware
            )
    # A rack of one 8-GPU DGX H100 is 10.2 kW (not 8 x 1.37 = 10.96), as econ size --systems-per-rack 1.
    h100 = Power(kw_per_gpu=1.37)
    check_fleet_in_hall(8, 8, h100, Facility(hall_max_kw_per_rack=10.5), "h100-sxm")
    with pytest.raises(ValueError, match="kw_per_system x 1"):
        check_fleet_in_hall(8, 8, h100, Facility(hall_max_kw_per_rack=10.0), "h100-sxm")
    # A rack figure the scenario gives is checked as given, catalog or not.
    given = Facility(kw_per_rack=130.0, hall_max_kw_per_rack=131.0, **liquid)
    check_fleet_in_hall(72, 72, power, given, None)
    # A per-GPU figure below the catalog's rack is checked as it is (the scenario's own figure).
    check_fleet_in_hall(
        72, 72, Power(kw_per_gpu=1.6), Facility(hall_max_kw_per_rack=116.0, **liquid), "gb200-nvl72"
    )


def test_the_sites_value_at_the_horizon_and_an_owned_hall_without_upkeep_are_said():
    # An infrastructure review: the 10 MW GB300 hall owned instead of rented had NPV 52.0 M USD,
    # of which 53.9 M was its hall's book value counted as cash at month 60, and it cost nothing
    # to run (maintenance 0 by default); no warning said either.
    from econ import load_scenario, project
    from tests.conftest import ROOT

    hall = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"
    owned = {"facility.mode": "owned", "facility.colo_usd_per_kw_month": 0.0}
    owned["facility.hall_cooling"] = "liquid"
    scenario = load_scenario(hall, owned)
    result = project(scenario)
    # built for the GPUs' full-load IT power at 11.7 M USD per MW (Cushman & Wakefield 2025)
    site_capex = scenario.fleet.gpu_count * scenario.power.kw_per_gpu * 11_700.0
    value = site_capex * (1 - 60 / 240)  # 5 of 20 years depreciated
    rate = (1 + result.metrics["discount_rate_annual"][0]) ** (1 / 12) - 1
    said = [w for w in result.warnings[0] if w.startswith("the site's book value")]
    assert said == [
        f"the site's book value at the horizon, {value:,.0f} USD (an owned hall or a liquid "
        "retrofit, depreciated over its own life), is counted as cash in month 60, as if sold at "
        f"book value: {value / (1 + rate) ** 60:,.0f} USD of the NPV; a shorter "
        "facility.life_years or retrofit_life_years counts less"
    ]
    assert (
        "the hall is owned and facility.maintenance_share_of_capex_annual is 0: it costs nothing "
        "to run beyond its power; expected the share of its capex spent on it a year"
    ) in result.warnings[0]
    upkeep = project(
        load_scenario(hall, {**owned, "facility.maintenance_share_of_capex_annual": 0.02})
    )
    assert not any("maintenance_share" in w for w in upkeep.warnings[0])
    # written off by the horizon: nothing counted, nothing said
    short = project(load_scenario(hall, {**owned, "facility.life_years": 5.0}))
    assert not any(w.startswith("the site's book value") for w in short.warnings[0])
    # the shipped case rents its hall: its retrofit, a tenant's improvement, is written off by
    # the horizon (it counted 2,500,000 USD, 1,552,303 of the NPV, before an infrastructure
    # review), so nothing is counted nor said: exactly 0 (on 68 racks cost less its 60 months
    # of depreciation left 4.66e-10 USD of floating-point residue, which econ.facility's
    # book_value_usd now snaps as econ.depreciation's book value does: econ.arrays.snap_to_zero)
    # The last month's disposal also sells the GPUs' book value: the ramp's last batch, in
    # service from month 3, has life left at the horizon (depreciation by in-service batch). The
    # site's part is the disposal less that of the same hall without a retrofit (a liquid hall:
    # the same GPUs, depreciated alike), and the retrofit's depreciation is its whole capex.
    shipped = project(load_scenario(hall))
    bare = project(load_scenario(hall, {"facility.hall_cooling": "liquid"}))
    assert bare.monthly.disposal_usd.iloc[-1] > 0  # the GPUs' book value
    assert shipped.monthly.disposal_usd.iloc[-1] - bare.monthly.disposal_usd.iloc[-1] == 0
    racks = scenario.fleet.gpu_count / scenario.fleet.gpus_per_rack
    retrofit = scenario.facility.liquid_retrofit_usd_per_rack * racks
    written_off = shipped.monthly.depreciation_usd.sum() - bare.monthly.depreciation_usd.sum()
    assert written_off == pytest.approx(retrofit, rel=1e-12)
    assert not any(w.startswith("the site's book value") for w in shipped.warnings[0])
    seed = project(load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"))
    assert not any(w.startswith("the site's book value") for w in seed.warnings[0])


# --- An owned hall's capacity, and the rack figures (an infrastructure review) -----------------

HALL = "hall-10mw-gb300-nvl72-liquid.toml"
OWNED = {
    "facility.mode": "owned",
    "facility.colo_usd_per_kw_month": 0.0,
    "facility.hall_cooling": "liquid",
}


def _scenario_file(name):
    from tests.conftest import ROOT

    return ROOT / "models" / "scenarios" / name


def _refused(path, overrides) -> str:
    from econ import load_scenario
    from econ.scenario import ScenarioError

    with pytest.raises(ScenarioError) as info:
        load_scenario(path, overrides)
    return str(info.value)


def _it_kw(gpus, kw_per_gpu):
    return f"{gpus * kw_per_gpu:,.2f}".rstrip("0").rstrip(".")


@pytest.mark.parametrize(("critical_kw", "racks"), [(1.0, 75), (10_000.0, 150)])
def test_an_owned_hall_below_the_fleets_it_load_is_refused(critical_kw, racks):
    # A 1 kW hall ran 5,400 GPUs (NPV 51.96 M -> 108.04 M USD as the hall's capex fell to
    # 11,700 USD), and a 10,000 kW hall 150 racks drawing 19,800 kW (at the 1.8333 kW per GPU
    # of the case then); both exited 0.
    from econ import load_scenario

    path = _scenario_file(HALL)
    base = load_scenario(path)
    gpus, kw_per_gpu = racks * base.fleet.gpus_per_rack, base.power.kw_per_gpu
    overrides = {**OWNED, "facility.critical_kw": critical_kw, "fleet.racks": racks}
    overrides["fleet.gpu_count"] = gpus
    message = _refused(path, overrides)
    assert HALL in message
    assert (
        f"facility.critical_kw = {critical_kw:,g} kW is below the fleet's full-load IT power of "
        f"{_it_kw(gpus, kw_per_gpu)} kW ({gpus:,} GPUs x {kw_per_gpu:g} kW per GPU); expected "
        "at least the fleet's IT load"
    ) in message


def test_a_hall_built_for_the_fleet_is_the_default_hall():
    from econ import load_scenario, project

    path = _scenario_file(HALL)
    base = load_scenario(path)
    it_kw = base.fleet.gpu_count * base.power.kw_per_gpu
    default = project(load_scenario(path, OWNED)).summary.iloc[0]
    given = project(load_scenario(path, {**OWNED, "facility.critical_kw": it_kw}))
    assert given.summary.npv_usd.iloc[0] == pytest.approx(default.npv_usd, rel=1e-12)
    larger = project(load_scenario(path, {**OWNED, "facility.critical_kw": 2 * it_kw}))
    hall_capex = it_kw / 1000 * CUSHMAN_2025
    assert larger.summary.capex_usd_total.iloc[0] == pytest.approx(
        default.capex_usd_total + hall_capex, rel=1e-12
    )


def test_the_hall_holds_the_peak_of_the_fleet_and_its_vintages():
    # The H200 fleet retired at 20 and the GB300 vintage bought at 18 (in service from 19) share
    # months 19-20: the hall must hold both.
    path = _scenario_file("h200-fleet-gb300-refresh.toml")
    owned = {"facility.mode": "owned", "facility.colo_usd_per_kw_month": 0.0}
    both = 1024 * 1.37 + 720 * 1.8333
    message = _refused(path, {**owned, "fleet.retire_month": 20, "facility.critical_kw": 1500.0})
    assert (
        f"facility.critical_kw = 1,500 kW is below the fleet's full-load IT power of "
        f"{_it_kw(1, both)} kW (the fleet and its vintages in month 19: base 1,024 GPUs x 1.37 kW "
        "per GPU, gb300 720 GPUs x 1.8333 kW per GPU); expected at least the fleet's IT load"
    ) in message
    from econ import load_scenario

    load_scenario(path, {**owned, "fleet.retire_month": 20, "facility.critical_kw": both})
    # retired at 18, the peak is the H200s' alone
    load_scenario(path, {**owned, "facility.critical_kw": 1024 * 1.37})


@settings(max_examples=12, deadline=None)
@given(
    retire=st.integers(2, 40),
    purchase=st.integers(1, 40),
    ramp=st.integers(0, 12),
    base_ramp=st.integers(0, 6),
)
def test_the_hall_checked_is_the_hall_the_engine_builds(retire, purchase, ramp, base_ramp):
    # The default hall (facility.critical_kw unset) is built for the peak of the IT load the
    # engine counts month by month; the check refuses a hall just below that and accepts it.
    import tomllib

    from econ import project
    from econ.scenario import ScenarioError, apply_overrides, validate_dict

    data = tomllib.loads(_scenario_file("h200-fleet-gb300-refresh.toml").read_text())
    data["vintages"][0]["fleet"].update(purchase_month=purchase, deployment_ramp_months=ramp)
    changes = {"fleet.retire_month": retire, "fleet.deployment_ramp_months": base_ramp}
    changes |= {"financing.size_to_min_dscr": None, "financing.max_ltv": None}
    owned = {"facility.mode": "owned", "facility.colo_usd_per_kw_month": 0.0}
    owned["facility.capex_usd_per_mw"] = 1000.0  # 1 USD per kW: the hall's capex is its kW
    rented = project(validate_dict(apply_overrides(data, changes))).summary.iloc[0]
    built = project(validate_dict(apply_overrides(data, changes | owned))).summary.iloc[0]
    peak_kw = built.capex_usd_total - rented.capex_usd_total
    validate_dict(apply_overrides(data, changes | owned | {"facility.critical_kw": peak_kw}))
    with pytest.raises(ScenarioError, match="expected at least the fleet's IT load"):
        below = {"facility.critical_kw": peak_kw - 0.01}
        validate_dict(apply_overrides(data, changes | owned | below))


def test_econ_validate_refuses_a_hall_below_the_fleet(tmp_path, capsys):
    # The case owned, in a hall built for its own fleet (whole kW), filled with twice the racks:
    # from the scenario's figures, so it holds whatever the catalog sizes the case to.
    import re

    from econ import cli, load_scenario

    base = load_scenario(_scenario_file(HALL))
    critical_kw = math.ceil(base.fleet.gpu_count * base.power.kw_per_gpu)
    racks = 2 * base.fleet.racks
    gpus = racks * base.fleet.gpus_per_rack
    text = _scenario_file(HALL).read_text()
    for pattern, line in (
        (r"^colo_usd_per_kw_month = .*$", f'mode = "owned"\ncritical_kw = {critical_kw:.1f}'),
        (r"^hall_cooling = .*$", 'hall_cooling = "liquid"'),
        (r"^racks = .*$", f"racks = {racks}"),
        (r"^gpu_count = .*$", f"gpu_count = {gpus}"),
    ):
        text, count = re.subn(pattern, line, text, flags=re.M)
        assert count == 1, pattern
    path = tmp_path / "big-hall.toml"
    path.write_text(text)
    assert cli.main(["validate", str(path)]) == 3
    err = capsys.readouterr().err
    assert "big-hall.toml" in err and f"facility.critical_kw = {critical_kw:,} kW" in err
    assert f"{_it_kw(gpus, base.power.kw_per_gpu)} kW" in err and "Traceback" not in err


def test_critical_kw_in_a_colocation_hall_is_refused():
    # It was ignored: the NPV did not move with facility.critical_kw = 1.
    message = _refused(_scenario_file(HALL), {"facility.critical_kw": 1.0})
    assert (
        "critical_kw (1 kW) is an owned hall's capacity but mode is 'colocation', where it "
        "changes nothing; expected contracted_kw"
    ) in message
    with pytest.raises(ValidationError, match="expected contracted_kw"):
        Facility(critical_kw=500.0)


def test_a_rack_figure_that_contradicts_the_gpus_power_is_refused():
    # 20 kW for 72 GPUs at 1.8333 kW (132 kW, the case's figure then) passed a 30 kW hall.
    from econ import load_scenario

    path = _scenario_file(HALL)
    base = load_scenario(path)
    gpus, kw_per_gpu = base.fleet.gpus_per_rack, base.power.kw_per_gpu
    message = _refused(path, {"facility.kw_per_rack": 20.0, "facility.hall_max_kw_per_rack": 30.0})
    below = round(100 * (20.0 / (gpus * kw_per_gpu) - 1))  # -86% at 72 x 2.03666 = 146.64 kW
    assert (
        f"facility.kw_per_rack = 20 kW but a rack of {gpus} GPUs x {kw_per_gpu:g} kW per GPU "
        f"draws {_it_kw(gpus, kw_per_gpu)} kW ({below:+d}%); expected the rack's IT power within "
        "20% of it"
    ) in message
    power = Power(kw_per_gpu=1.87)
    liquid = {"rack_cooling": "liquid", "hall_cooling": "liquid"}
    # the physical GB200 NVL72 rack, 120 kW against 72 x 1.87 = 134.64 kW: 11% below, accepted
    check_fleet_in_hall(72, 72, power, Facility(kw_per_rack=120.0, **liquid), "gb200-nvl72")
    for kw in (72 * 1.87 * 0.79, 72 * 1.87 * 1.21):
        with pytest.raises(ValueError, match="expected the rack's IT power within 20%"):
            check_fleet_in_hall(72, 72, power, Facility(kw_per_rack=kw, **liquid))


@pytest.mark.parametrize("field", ["kw_per_rack", "hall_max_kw_per_rack"])
@pytest.mark.parametrize("value", [5000.0, 1e9])
def test_rack_power_beyond_any_rack_is_refused(field, value):
    from econ.scenario.power_models import MAX_KW_PER_RACK

    message = _refused(_scenario_file(HALL), {f"facility.{field}": value})
    assert f"overrides['facility.{field}'] = {value!r} (over hall-10mw-" in message
    assert f"{value:,g} kW per rack is more than {MAX_KW_PER_RACK:,g} kW per rack" in message
    Facility(**{field: MAX_KW_PER_RACK, "rack_cooling": "liquid", "hall_cooling": "liquid"})
