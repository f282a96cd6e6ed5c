"""Sizing a hall from its power budget, the rack catalog (models/racks.toml) and `econ size`."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.cli import main
from econ.errors import InputError
from econ.facility import HallLimitError
from econ.racks import RackCatalogError, load_racks, size, with_systems_per_rack
from econ.sizing import SizingError, it_budget_kw, racks_within, size_hall
from tests.conftest import ROOT

GB300 = {"kw_per_rack": 132.0, "gpus_per_rack": 72}  # Supermicro 132-140 kW; reference_figures.csv


# --- Power budget examples ------------------------------------------------------------------------


def test_ten_mw_utility_at_pue_1_1_gb300():
    # 10 MW at the meter / PUE 1.1 = 9,090.9 kW of IT; floor(9,090.9 / 132) = 68 racks = 4,896 GPUs,
    # drawing 8,976 kW IT and 9,873.6 kW at the meter; 114.9 kW IT (126.4 kW at the meter) stranded.
    s = size_hall(10.0, pue=1.1, power_basis="utility", **GB300)
    assert s.racks[0] == 68 and s.gpus[0] == 4896
    assert s.it_kw[0] == pytest.approx(8976.0)
    assert s.utility_kw[0] == pytest.approx(9873.6)
    assert s.stranded_it_kw[0] == pytest.approx(10_000 / 1.1 - 8976.0)
    assert s.stranded_utility_kw[0] == pytest.approx(126.4)
    assert s.binding_limit[0] == "power" and s.power_basis[0] == "utility"
    assert np.isnan(s.stranded_floor_m2[0]) and np.isnan(s.stranded_budget_usd[0])


def test_ten_mw_it_gb300():
    # 10,000 kW IT / 132 = 75.76 -> 75 racks, 5,400 GPUs, 9,900 kW IT, 10,890 kW at PUE 1.1.
    s = size_hall(10.0, pue=1.1, power_basis="it", **GB300)
    assert (s.racks[0], s.gpus[0]) == (75, 5400)
    assert s.utility_kw[0] == pytest.approx(10_890.0)
    assert s.utility_budget_kw[0] == pytest.approx(11_000.0)


def test_ten_mw_hgx_b200_air():
    # DGX B200 14.3 kW x 2 per rack = 28.6 kW; 10,000 / 28.6 = 349.65 -> 349 racks, 5,584 GPUs.
    s = size_hall(10.0, pue=1.3, kw_per_rack=28.6, gpus_per_rack=16)
    assert (s.racks[0], s.gpus[0]) == (349, 5584)
    assert s.stranded_it_kw[0] == pytest.approx(10_000 - 349 * 28.6)


def test_exact_division_is_not_lost_to_rounding():
    assert size_hall(10.0, pue=1.2, kw_per_rack=125.0, gpus_per_rack=72).racks[0] == 80
    assert racks_within(0.3, 0.1) == 3  # 0.3 / 0.1 = 2.9999999999999996 in floating point


def test_floor_binds():
    s = size_hall(10.0, pue=1.1, m2_per_rack=2.5, floor_m2=100.0, **GB300)
    assert s.racks[0] == 40 and s.binding_limit[0] == "floor"
    assert s.racks_by_limit["power"][0] == 75
    assert s.stranded_floor_m2[0] == pytest.approx(0.0)
    assert s.stranded_it_kw[0] == pytest.approx(10_000 - 40 * 132)


def test_budget_binds_after_the_facility_build():
    # 200 M USD, less a 10 MW build at 11.7 M USD/MW (Cushman & Wakefield 2025) = 83 M USD,
    # buys floor(83 / 3.0) = 27 GB300 racks at 3.0 M USD (Bizety).
    s = size_hall(
        10.0,
        pue=1.1,
        capex_budget_usd=200e6,
        capex_usd_per_rack=3.0e6,
        fixed_capex_usd=117e6,
        **GB300,
    )
    assert s.racks[0] == 27 and s.binding_limit[0] == "budget"
    assert s.capex_usd[0] == pytest.approx(117e6 + 81e6)
    assert s.stranded_budget_usd[0] == pytest.approx(2e6)


def test_ties_report_the_first_limit():
    s = size_hall(1.0, pue=1.0, kw_per_rack=100.0, gpus_per_rack=8, m2_per_rack=1.0, floor_m2=10.0)
    assert s.racks[0] == 10 and s.binding_limit[0] == "power"


def test_batch_equals_separate_calls():
    mw = np.array([10.0, 5.0, 20.0])
    pue = np.array([1.1, 1.3, 1.2])
    kw = np.array([132.0, 28.6, 120.0])
    gpus = np.array([72, 16, 72])
    basis = np.array(["utility", "it", "utility"])
    floor = np.array([np.inf, 300.0, 150.0])
    batch = size_hall(
        mw,
        pue=pue,
        kw_per_rack=kw,
        gpus_per_rack=gpus,
        power_basis=basis,
        m2_per_rack=2.5,
        floor_m2=floor,
    )
    for i in range(3):
        one = size_hall(
            mw[i],
            pue=pue[i],
            kw_per_rack=kw[i],
            gpus_per_rack=gpus[i],
            power_basis=basis[i],
            m2_per_rack=2.5,
            floor_m2=floor[i],
        )
        assert batch.racks[i] == one.racks[0]
        assert batch.binding_limit[i] == one.binding_limit[0]
        assert batch.utility_kw[i] == pytest.approx(one.utility_kw[0])


# --- The rack and what it adds to the hall ---------------------------------------------------------

GB200_RACK_KW = 120.0  # NVIDIA GB200 NVL72 spec (models/racks.toml kw_per_rack)
GB200_ALL_IN_KW = 1.87  # SemiAnalysis all-in per GPU, with a share of networking outside the rack
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


# GB200 NVL72's network share, the one source that separates it from the rack: SemiAnalysis'
# all-in 1.87 kW x 72 GPUs - the 120 kW rack = 14.64 kW, 0.20333 kW per GPU.
NETWORK_KW_PER_GPU = (GB200_ALL_IN_KW * 72 - GB200_RACK_KW) / 72


@pytest.mark.parametrize(
    ("hardware", "rack_kw", "network_kw"),
    [
        # rack-scale: 72 GPUs x 0.20333 = 14.64 kW
        ("gb200-nvl72", 120.0, 14.64),
        ("gb300-nvl72", 132.0, 14.64),  # 800 Gb/s per GPU, counted per GPU (racks.toml)
        # 8-GPU systems: 8 x 0.20333 = 1.6267 rounded up to 1.63 kW a system
        ("b200-sxm", 2 * 14.3, 2 * 1.63),
        ("b300-sxm", 4 * 14.5, 4 * 1.63),
        ("h100-sxm", 4 * 10.2, 4 * 1.63),
        ("h200-sxm", 4 * 10.2, 4 * 1.63),
        ("mi355x", 4 * (8 * 2.09 - 1.63), 4 * 1.63),  # the all-in figure less the network
    ],
)
def test_every_rack_is_the_rack_and_its_share_of_the_network(hardware, rack_kw, network_kw):
    # A facilities review: GB200 counted 14.64 kW of network outside the rack (1.87 x 72 against
    # 120 kW) and GB300 none, so 10 MW placed 75 GB300 racks of 132 kW and 74 GB200 of 120 kW.
    rack = load_racks().get(hardware)
    assert rack.kw_per_rack == pytest.approx(rack_kw)
    assert rack.network_kw_per_rack == pytest.approx(network_kw)
    assert rack.it_kw_per_rack == pytest.approx(rack_kw + network_kw, abs=1e-9)
    # the same allowance per GPU everywhere, rounded up to 10 W a system at most
    per_gpu = NETWORK_KW_PER_GPU * rack.gpus_per_rack
    assert per_gpu - 1e-9 <= rack.network_kw_per_rack <= per_gpu + 0.01 * rack.systems_per_rack
    # the figure per GPU is the rack's IT load per GPU, rounded down at most 0.01%
    it_per_gpu = (rack_kw + network_kw) / rack.gpus_per_rack
    assert it_per_gpu * (1 - 1e-4) <= rack.kw_per_gpu_all_in <= it_per_gpu * (1 + 1e-12)


def test_a_denser_rack_of_as_many_gpus_fills_a_hall_with_no_more_racks():
    # The review's figures: GB300 NVL72 draws 132 kW to GB200's 120 and has twice its scale-out
    # bandwidth, yet took 75 racks of 10 MW to GB200's 74. By hand: 10,000 / 146.64 = 68.2 -> 68
    # racks, 4,896 GPUs; 10,000 / 134.64 = 74.3 -> 74 racks.
    gb300, gb200 = size(mw=10.0, hardware="gb300-nvl72"), size(mw=10.0, hardware="gb200-nvl72")
    assert (gb300["racks"], gb300["gpus"]) == (68, 4896)
    assert gb300["it_kw"] == pytest.approx(68 * (132.0 + 14.64))
    assert gb200["racks"] == 74
    catalog = load_racks().racks
    for a in catalog.values():
        for b in catalog.values():
            if a.gpus_per_rack == b.gpus_per_rack and a.kw_per_rack > b.kw_per_rack:
                assert (
                    size(mw=10.0, hardware=a.key)["racks"] <= size(mw=10.0, hardware=b.key)["racks"]
                ), (a.key, b.key)


def test_size_hall_counts_the_it_load_for_power_and_the_rack_for_density():
    # 10,000 kW / 134.64 = 74.27 -> 74 racks drawing 9,963.36 kW; the 120 kW rack passes 125 kW.
    s = size_hall(
        10.0,
        pue=1.1,
        kw_per_rack=GB200_RACK_KW,
        it_kw_per_rack=72 * GB200_ALL_IN_KW,
        gpus_per_rack=72,
        hall_max_kw_per_rack=125.0,
    )
    assert (s.racks[0], s.gpus[0]) == (74, 5328)
    assert s.it_kw[0] == pytest.approx(74 * 134.64)
    assert s.utility_kw[0] == pytest.approx(74 * 134.64 * 1.1)
    assert s.stranded_it_kw[0] == pytest.approx(10_000 - 74 * 134.64)
    default = size_hall(10.0, pue=1.1, kw_per_rack=GB200_RACK_KW, gpus_per_rack=72)
    assert default.racks[0] == 83  # without it_kw_per_rack the rack's own 120 kW, as before
    with pytest.raises(SizingError, match="IT kW per rack is 100 kW; expected at least"):
        size_hall(10.0, pue=1.1, kw_per_rack=120.0, it_kw_per_rack=100.0, gpus_per_rack=72)
    with pytest.raises(SizingError, match="below one rack of 134.64 kW"):
        size_hall(0.1, pue=1.1, kw_per_rack=120.0, it_kw_per_rack=134.64, gpus_per_rack=72)


@pytest.mark.parametrize("hardware", sorted(load_racks().racks))
def test_a_sized_hall_draws_at_most_its_mw_at_the_all_in_figure(hardware):
    # Before, GB200 NVL72 was sized at 120 kW a rack: 83 racks x 72 x 1.87 kW = 11,175 kW in 10 MW.
    result = size(mw=10.0, hardware=hardware)
    rack = load_racks().get(hardware)
    assert result["gpus"] * rack.kw_per_gpu_all_in <= 10_000.0 + 1e-6
    assert result["it_kw"] <= 10_000.0 + 1e-6
    assert result["rack"]["it_kw_per_rack"] == rack.it_kw_per_rack


def test_size_states_both_rack_figures(capsys):
    result = size(mw=10.0, hardware="gb200-nvl72")
    assert (result["racks"], result["gpus"]) == (74, 5328)  # 83 racks, 5,976 GPUs before
    assert result["it_kw"] == pytest.approx(9963.36)
    assert result["rack"]["kw_per_rack"] == 120.0
    assert result["rack"]["network_kw_per_rack"] == pytest.approx(14.64)
    assert result["rack"]["it_kw_per_rack"] == pytest.approx(134.64)
    assert main(["size", "--mw", "10", "--hardware", "gb200-nvl72"]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[0]  # the header says both, and a note what each is for
    assert "120 kW per rack (134.64 kW with its share of the scale-out network)" in head
    assert (
        "gb200-nvl72: 120 kW in the rack, 134.64 kW with its share of the scale-out network "
        "(14.64 kW, models/racks.toml network_kw_per_rack): the power counts 134.64 kW per rack, "
        "the hall's kW-per-rack limit is checked against the 120 kW rack"
    ) in out
    assert "9,963.4" in out
    # The legacy-hall H100 example of docs/power.md: 10.2 kW systems and their 1.63 kW share of
    # the network, 11.83 kW a rack; floor(10,000 / 11.83) = 845 racks.
    legacy = size(mw=10.0, hardware="h100-sxm", systems_per_rack=1, hall_max_kw_per_rack=20.0)
    assert (legacy["racks"], legacy["gpus"]) == (845, 6760)  # 912 and 980 racks before
    assert legacy["it_kw"] == pytest.approx(845 * 11.83)
    assert legacy["rack"]["network_kw_per_rack"] == pytest.approx(1.63)
    assert legacy["rack"]["sources"]["network_kw_per_rack"].startswith(
        "derived: 1 / 4 of the catalog's 6.52 kW"
    )


@pytest.mark.parametrize(("limit", "fits"), [(125.0, True), (134.0, True), (115.0, False)])
def test_size_and_project_agree_on_the_hall_limit(limit, fits):
    # Both compare the hall's limit with the physical 120 kW rack, not 72 x 1.87 = 134.64 kW; before,
    # econ size took the rack in a 125 kW hall and the projection refused it.
    from econ import load_scenario
    from econ.scenario import ScenarioError

    overrides = {"facility.hall_max_kw_per_rack": limit}
    if fits:
        assert size(mw=1.0, hardware="gb200-nvl72", hall_max_kw_per_rack=limit)["racks"] == 7
        load_scenario(SEED, overrides)
        return
    with pytest.raises(HallLimitError) as sized:
        size(mw=1.0, hardware="gb200-nvl72", hall_max_kw_per_rack=limit)
    with pytest.raises(ScenarioError) as projected:
        load_scenario(SEED, overrides)
    # One message, the physical rack (models/racks.toml) named with the GPUs' 72 x 1.87 kW
    seed = load_scenario(SEED)
    rack = load_racks().get("gb200-nvl72")
    from_gpus = seed.fleet.gpus_per_rack * seed.power.kw_per_gpu
    named = (
        f"a rack draws {rack.kw_per_rack:g} kW (the physical gb200-nvl72 rack, models/racks.toml "
        f"kw_per_rack; {from_gpus:g} kW from the GPUs' power includes networking outside it), "
        "above the hall's limit of 115 kW per rack"
    )
    assert named in str(sized.value) and named in str(projected.value)


def test_size_and_project_refuse_a_rack_above_the_hall_in_the_same_words(capsys):
    # A review: `econ size` said only "a rack draws 120 kW, above the hall's limit ...", where the
    # projection named the figure, and docs/power.md promised the same message in both.
    said = {}
    commands = {
        "size": "size --mw 10 --hardware gb200-nvl72 --hall-max-kw-per-rack 115".split(),
        "project": ["project", str(SEED), "--set", "facility.hall_max_kw_per_rack=115"],
    }
    for name, args in commands.items():
        assert main(args) == 3
        err = " ".join(capsys.readouterr().err.split())
        found = re.search(r"a rack draws .*? \(fewer GPUs or systems per rack\)", err)
        assert found, err
        said[name] = found.group(0)
    assert said["size"] == said["project"]
    page = " ".join((ROOT / "docs" / "power.md").read_text(encoding="utf-8").split())
    assert f'"{said["size"]}"' in page


def test_projecting_a_hall_sized_by_econ_size_stays_within_its_mw():
    # Contract the hall's 10 MW and fill it with what econ size places: no IT load above it.
    from econ import load_scenario, project

    result = size(mw=10.0, hardware="gb200-nvl72")
    overrides = {
        "fleet.gpu_count": result["gpus"],
        "facility.contracted_kw": result["it_budget_kw"],
    }
    warned = project(load_scenario(SEED, overrides)).summary.iloc[0]["warnings"]
    assert not any("exceeds the contracted" in w for w in warned), warned
    # 83 racks (the old sizing) is over: 83 x 72 x 1.87 = 11,175 kW in a 10,000 kW contract.
    overrides["fleet.gpu_count"] = 83 * 72
    warned = project(load_scenario(SEED, overrides)).summary.iloc[0]["warnings"]
    assert any("peak IT load of 11,175 kW exceeds the contracted 10,000 kW" in w for w in warned)


# --- Bad input ------------------------------------------------------------------------------------


def test_rack_above_hall_limit_is_refused():
    with pytest.raises(HallLimitError, match="132 kW, above the hall's limit of 40 kW"):
        size_hall(10.0, pue=1.1, hall_max_kw_per_rack=40.0, **GB300)


def test_liquid_rack_in_air_hall_is_refused():
    with pytest.raises(HallLimitError, match="liquid-cooled"):
        size_hall(10.0, pue=1.3, rack_cooling="liquid", hall_cooling="air", **GB300)
    size_hall(10.0, pue=1.3, rack_cooling="liquid", hall_cooling="air_retrofit_liquid", **GB300)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"capex_budget_usd": 1e6, "capex_usd_per_rack": 3e6}, "below the cost of one rack"),
        (
            {"capex_budget_usd": 50e6, "capex_usd_per_rack": 3e6, "fixed_capex_usd": 117e6},
            "does not cover the fixed facility cost",
        ),
        ({"floor_m2": 2.0, "m2_per_rack": 2.5}, "below one rack's 2.5 m²"),
        ({"pue": 0.9}, "PUE is 0.9; expected a PUE greater than or equal to 1"),
        ({"capex_budget_usd": -1.0, "capex_usd_per_rack": 3e6}, "capex budget is -1"),
        ({"capex_budget_usd": 1e8}, "a price per rack above 0"),
        ({"floor_m2": 100.0}, "a floor area per rack above 0"),
        ({"power_basis": "grid"}, "'grid' is not known; expected one of it, utility"),
        ({"gpus_per_rack": 7.5}, "a whole number"),
    ],
)
def test_bad_sizing_input(kwargs, expected):
    args = {"pue": 1.1, **GB300, **kwargs}
    with pytest.raises(SizingError) as info:
        size_hall(10.0, **args)
    assert expected in str(info.value)
    assert isinstance(info.value, InputError)


def test_power_budget_too_small_for_one_rack():
    with pytest.raises(
        SizingError, match=r"0.1 MW at the utility meter gives 90.9 kW of IT power, below one"
    ):
        size_hall(0.1, pue=1.1, power_basis="utility", **GB300)
    with pytest.raises(SizingError, match="power budget is 0 MW"):
        size_hall(0.0, pue=1.1, **GB300)
    relaxed = size_hall(0.1, pue=1.1, strict=False, **GB300)
    assert relaxed.racks[0] == 0 and relaxed.binding_limit[0] == "power"


def test_a_load_share_too_small_for_one_rack_names_the_budget_and_the_share(capsys):
    # A review (31): at --max-load-share 0.01 the refusal read "a power budget of 10 MW of IT
    # load gives 100.0 kW of IT power", arithmetic that is false as stated (10 MW is 10,000 kW).
    argv = ["size", "--mw", "10", "--hardware", "gb300-nvl72", "--max-load-share", "0.01"]
    assert main(argv) == 3
    assert capsys.readouterr().err == (
        "error: a power budget of 10 MW of IT load gives 10,000.0 kW of IT power, 100.0 kW of it "
        "at a max load share of 0.01, below one rack of 146.64 kW; expected a power budget of at "
        "least one rack at that share\n"
    )


def test_a_rack_refused_for_its_power_and_its_cooling_is_one_line_with_both_ways_out(capsys):
    # A review (31): a GB300 NVL72 rack in a 100 kW air hall was refused on two lines, the second
    # without the hardware, and the command-line hint named the cooling way out alone.
    argv = ["size", "--mw", "10", "--hardware", "gb300-nvl72", "--cooling", "air"]
    assert main([*argv, "--hall-max-kw-per-rack", "100"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: gb300-nvl72: a rack draws 132 kW")
    assert "per rack); and the rack is liquid-cooled but the hall is air-cooled;" in err
    assert err.endswith(
        "(command line: a higher --hall-max-kw-per-rack; --cooling liquid, or --retrofit-liquid "
        "for an air hall)\n"
    )


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--mw", "-1", "--mw = -1: expected a power budget above 0 MW"),
        ("--mw", "0", "--mw = 0: expected a power budget above 0 MW"),
        ("--floor-m2", "-5", "--floor-m2 = -5: expected floor space of 0 m² or more"),
        ("--budget-usd", "-1", "--budget-usd = -1: expected a capex budget of 0 USD or more"),
    ],
)
def test_size_names_the_option_of_a_negative_budget(capsys, option, value, expected):
    # A review (31): "error: power budget is -1 MW; expected a power budget above 0" named no
    # option, nor did "floor space is -5 m²" or "capex budget is -1 USD".
    args = ["size", "--hardware", "gb300-nvl72"] + ([] if option == "--mw" else ["--mw", "10"])
    assert main([*args, option, value]) == 3
    err = capsys.readouterr().err
    assert err == f"error: {expected}\n"


# --- Invariants ---------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(
    mw=st.floats(0.2, 200.0),
    pue=st.floats(1.0, 2.0),
    kw=st.floats(5.0, 200.0),
    gpus=st.integers(1, 72),
    utility=st.booleans(),
    floor=st.one_of(st.just(math.inf), st.floats(0.0, 5000.0)),
    budget=st.one_of(st.just(math.inf), st.floats(0.0, 1e9)),
)
def test_sizing_invariants(mw, pue, kw, gpus, utility, floor, budget):
    s = size_hall(
        mw,
        pue=pue,
        kw_per_rack=kw,
        gpus_per_rack=gpus,
        power_basis="utility" if utility else "it",
        m2_per_rack=2.5,
        floor_m2=floor,
        capex_budget_usd=budget,
        capex_usd_per_rack=3e6,
        strict=False,
    )
    racks = s.racks[0]
    it_budget = mw * 1000 / (pue if utility else 1.0)
    assert racks == min(v[0] for v in s.racks_by_limit.values())
    assert racks * kw <= it_budget * (1 + 1e-9)
    assert s.stranded_it_kw[0] >= -1e-6
    assert s.utility_kw[0] == pytest.approx(s.it_kw[0] * pue)
    assert s.gpus[0] == racks * gpus
    if s.binding_limit[0] == "power":
        assert (racks + 1) * kw > it_budget * (1 - 1e-9)  # one more rack would not fit
    if math.isfinite(floor):
        assert racks * 2.5 <= floor + 1e-9
    if math.isfinite(budget):
        assert racks * 3e6 <= budget + 1e-6


def test_it_budget_basis():
    np.testing.assert_allclose(
        it_budget_kw([10.0, 10.0], [1.25, 1.25], ["it", "utility"]), [10_000.0, 8_000.0]
    )


# --- The rack catalog ---------------------------------------------------------------------------


def test_rack_catalog_loads_and_is_consistent():
    catalog = load_racks()
    assert {"gb300-nvl72", "gb200-nvl72", "b200-sxm", "h100-sxm"} <= set(catalog.racks)
    for rack in catalog.racks.values():
        assert rack.kw_per_gpu_definition in ("chip_only", "chip_plus_host", "utility_meter")
        assert rack.gpus_per_rack == rack.gpus_per_system * rack.systems_per_rack
        assert rack.sources["network_kw_per_rack"] and rack.sources["kw_per_gpu_all_in"]
    assert catalog.halls["liquid"]["pue"] == 1.1 and catalog.halls["air"]["pue"] == 1.3
    assert catalog.halls["air_retrofit_liquid"]["pue"] == 1.3


def _reference(shared_data) -> dict[str, str]:
    with open(shared_data / "reference_figures.csv", newline="", encoding="utf-8") as f:
        return {row["item"]: row["value"] for row in csv.DictReader(f)}


def test_rack_figures_match_the_reference_data(shared_data):
    ref = _reference(shared_data)
    racks = load_racks().racks
    assert racks["gb300-nvl72"].kw_per_rack == float(ref["GB300 NVL72 rack power"])
    assert racks["gb200-nvl72"].kw_per_rack == float(ref["GB200 NVL72 rack power"])
    assert racks["b200-sxm"].kw_per_system == float(ref["DGX B200 system maximum power"])
    assert racks["b300-sxm"].kw_per_system == float(ref["DGX B300 system power"])
    assert racks["h100-sxm"].kw_per_system == float(ref["DGX H100/H200 system maximum power"])
    gb200_all_in = float(ref["All-in power per GPU GB200 (chip + host share)"])
    assert racks["gb200-nvl72"].kw_per_gpu_all_in == gb200_all_in
    gb200_rack = float(ref["GB200 NVL72 rack power"])
    assert racks["gb200-nvl72"].network_kw_per_rack == pytest.approx(gb200_all_in * 72 - gb200_rack)
    assert racks["mi355x"].kw_per_gpu_all_in == float(
        ref["All-in power per GPU MI355X (chip + host share)"]
    )
    # SemiAnalysis' typical all-in figures are below the rack maximum and its network share
    for key, item in (("h100-sxm", "H100"), ("b200-sxm", "B200")):
        published = float(ref[f"All-in power per GPU {item} (chip + host share)"])
        assert published < racks[key].kw_per_gpu_all_in
        assert str(published) in racks[key].sources["kw_per_gpu_all_in"]
    assert racks["gb300-nvl72"].capex_usd_per_rack == float(ref["GB300 NVL72 rack"])
    assert racks["gb300-nvl72"].liquid_cooling_usd_per_rack == float(
        ref["Liquid cooling per GB300 NVL72 rack"]
    )


def test_bad_catalog_names_file_and_field(tmp_path):
    bad = tmp_path / "racks.toml"
    bad.write_text(
        "[halls.air]\npue = 1.3\n[halls.liquid]\npue = 1.1\n"
        '[racks.x]\nname = "x"\ngpus_per_system = 8\nsystems_per_rack = 2\ngpus_per_rack = 16\n'
        'kw_per_rack = -3.0\nkw_per_gpu_all_in = 1.0\nkw_per_gpu_definition = "chip_plus_host"\n'
        'cooling = "air"\nm2_per_rack = 2.5\n'
    )
    with pytest.raises(
        RackCatalogError, match=r"racks.x.kw_per_rack = -3.0: expected a number above 0 and at"
    ):
        load_racks(bad)
    with pytest.raises(RackCatalogError, match="not found"):
        load_racks(tmp_path / "missing.toml")


def test_systems_per_rack_for_a_legacy_hall():
    h100 = load_racks().get("h100-sxm")
    one = with_systems_per_rack(h100, 1)
    assert (one.gpus_per_rack, one.kw_per_rack) == (8, 10.2)
    assert one.capex_usd_per_rack == pytest.approx(h100.capex_usd_per_rack / 4)
    with pytest.raises(RackCatalogError, match="rack-scale system"):
        with_systems_per_rack(load_racks().get("gb300-nvl72"), 2)


def test_systems_per_rack_renames_the_rack(capsys):
    # The catalog names the H100 rack "..., 4 systems per rack"; with --systems-per-rack 1 the
    # header said 4 systems beside the figures of 1 (8 GPUs, 10.2 kW).
    h100 = load_racks().get("h100-sxm")
    assert h100.name.endswith("4 systems per rack")
    assert with_systems_per_rack(h100, 1).name == "NVIDIA HGX/DGX H100, 1 system per rack"
    assert with_systems_per_rack(h100, 2).name == "NVIDIA HGX/DGX H100, 2 systems per rack"
    unnamed = dataclasses.replace(h100, name="my rack")
    assert with_systems_per_rack(unnamed, 3).name == "my rack, 3 systems per rack"
    argv = ["size", "--mw", "10", "--hardware", "h100-sxm", "--systems-per-rack", "1"]
    argv += ["--hall-max-kw-per-rack", "20", "--cooling", "air"]
    assert main(argv) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("h100-sxm (NVIDIA HGX/DGX H100, 1 system per rack): 8 GPUs and 10.2 kW")
    assert "4 systems" not in head
    result = size(mw=10.0, hardware="h100-sxm", systems_per_rack=1, hall_max_kw_per_rack=20.0)
    assert result["rack"]["name"] == "NVIDIA HGX/DGX H100, 1 system per rack"


def test_size_with_retrofit_counts_its_capex():
    result = size(
        mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True, budget_usd=100e6
    )
    # Each rack costs 3.0 M + 50,000 retrofit + 72 GPUs x (4,200 network + 1,750 installation)
    # = 3,478,400; 100 M / 3,478,400 = 28.7 racks.
    assert result["racks"] == 28 and result["binding_limit"] == "budget"
    assert result["retrofit_capex_usd"] == pytest.approx(28 * 50_000)
    # the retrofitted hall's own PUE in racks.toml, with its source
    assert (result["pue"], result["pue_source"]) == (
        1.3,
        "racks.toml halls.air_retrofit_liquid.pue",
    )
    assert (
        "chillers and air handlers" in load_racks().halls["air_retrofit_liquid"]["sources"]["pue"]
    )


# --- The command line -------------------------------------------------------------------------


def test_cli_json(capsys):
    code = main(
        [
            "size",
            "--mw",
            "10",
            "--basis",
            "utility",
            "--hardware",
            "gb300-nvl72",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("racks", "gpus", "it_kw", "utility_kw", "binding_limit", "stranded"):
        assert key in out
    # 10,000 / 1.1 = 9,090.9 kW of IT; / 146.64 = 61.99 -> 61 racks
    assert (out["racks"], out["gpus"], out["binding_limit"]) == (61, 4392, "power")
    assert out["utility_kw"] == pytest.approx(61 * 146.64 * 1.1)
    assert out["rack"]["sources"]["kw_per_rack"].startswith("GB300 NVL72 rack power 132 kW")


def test_cli_table(capsys):
    assert main(["size", "--mw", "10", "--hardware", "b200-sxm", "--floor-m2", "500"]) == 0
    out = capsys.readouterr().out
    assert "Binding limit" in out and "floor" in out and "200" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--hardware", "gb300-nvl72", "--hall-max-kw-per-rack", "40"], "above the hall's limit"),
        (["--hardware", "gb300-nvl72", "--cooling", "air"], "--retrofit-liquid"),
        (["--hardware", "gb300-nvl72", "--budget-usd", "1000000"], "below the cost of one rack"),
        (
            ["--hardware", "gb300-nvl72", "--pue", "0.95"],
            "--pue = 0.95: expected a PUE from 1 to 3",
        ),
        # the bounds of power.pue and facility.hall_max_kw_per_rack in a scenario file: a PUE of
        # 1e9 was sized, and a limit of 0 or -1 kW read as a rack "above the hall's limit"
        (
            ["--hardware", "gb300-nvl72", "--pue", "1e9"],
            "--pue = 1e+09: expected a PUE from 1 to 3",
        ),
        (
            ["--hardware", "gb300-nvl72", "--hall-max-kw-per-rack", "0"],
            "--hall-max-kw-per-rack = 0: expected a limit above 0 and at most 2000 kW per rack",
        ),
        (
            ["--hardware", "gb300-nvl72", "--hall-max-kw-per-rack", "-1"],
            "--hall-max-kw-per-rack = -1: expected a limit above 0 and at most 2000 kW per rack",
        ),
        # no rack is near 1e9 kW (econ.scenario.power_models.MAX_KW_PER_RACK)
        (
            ["--hardware", "gb300-nvl72", "--hall-max-kw-per-rack", "1e9"],
            "--hall-max-kw-per-rack = 1e+09: expected a limit above 0 and at most 2000 kW per rack",
        ),
        (["--hardware", "h200-sxm", "--budget-usd", "1e8"], "--capex-usd-per-rack"),
        (["--hardware", "nope"], "expected one of b200-sxm"),
        (["--hardware", "gb300-nvl72", "--facility-usd-per-mw", "-1"], "negative prices"),
        (["--hardware", "gb300-nvl72", "--budget-usd", "nan"], "expected a finite number"),
        # finite inputs whose products overflow (a TypeError traceback before)
        (["--hardware", "gb300-nvl72", "--mw", "1e308"], "--mw = 1e+308: expected a power budget"),
        (["--hardware", "gb300-nvl72", "--mw", "1e6", "--capex-usd-per-rack", "1e308"], "capex"),
        (["--hardware", "gb300-nvl72", "--facility-usd-per-mw", "1e308"], "facility build"),
        (["--hardware", "gb300-nvl72", "--pue", "1e308"], "--pue = 1e+308: expected a PUE"),
        (["--hardware", "h100-sxm", "--systems-per-rack", "0"], "expected 1 or more"),
        (
            ["--hardware", "h100-sxm", "--retrofit-liquid"],
            "applies to liquid-cooled racks in an air hall",
        ),
    ],
)
def test_cli_bad_input_exits_3(capsys, argv, expected):
    # (the bounds quoted are econ.scenario's: test_size_takes_the_scenario_bounds)
    mw = [] if "--mw" in argv else ["--mw", "10"]  # (an option given twice is refused)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning on the way to the message
        assert main(["size", *mw, *argv]) == 3
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_the_largest_power_budget_sizes_finitely(capsys):
    assert main(["size", "--mw", "1e6", "--hardware", "gb300-nvl72", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["racks"] == 6_819_421  # floor(1e9 kW / 146.64 kW)


def test_an_air_cooled_rack_of_liquid_only_hardware_is_warned_of():
    from econ import load_scenario, project
    from econ.racks import cooling_warning

    note = cooling_warning("gb200-nvl72", "air")
    assert note.startswith("facility.rack_cooling is 'air' but gb200-nvl72 racks are liquid-cooled")
    assert "NVIDIA DGX GB rack scale user guide" in note  # the catalog's source, named
    assert cooling_warning("gb200-nvl72", "liquid") is None
    assert cooling_warning("b200-sxm", "air") is None  # an air-cooled rack
    assert cooling_warning("my-own-asic", "air") is None  # no rack figures to compare
    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    shipped = project(load_scenario(seed)).summary.iloc[0]["warnings"]
    assert not any("rack_cooling" in w for w in shipped)  # the seed says liquid
    air = {"facility.rack_cooling": "air", "facility.hall_cooling": "air"}
    warned = project(load_scenario(seed, air)).summary.iloc[0]["warnings"]
    assert sum("facility.rack_cooling is 'air' but gb200-nvl72" in w for w in warned) == 1


def test_the_gb200_rack_power_is_labelled_by_the_sources_that_state_it():
    # The 120 kW figure was marked "primary" citing "NVIDIA spec; Introl", but only a blog and the
    # press state it: the label says secondary and names them, the figure stays.
    from econ.hardware import get_hardware

    rack = load_racks().get("gb200-nvl72")
    assert rack.kw_per_rack == 120.0
    for source in (rack.sources["kw_per_rack"], get_hardware("gb200-nvl72").power.system_source):
        assert "secondary" in source and "primary" not in source and "Introl" in source
    with open(ROOT / "models" / "reference_figures.csv", newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["item"] == "GB200 NVL72 rack power")
    assert (row["value"], row["quality"]) == ("120", "secondary")


def test_an_exact_fit_strands_exactly_nothing(capsys):
    # 16.1304 MW at the meter / PUE 1.1 = 14,664 kW = 100 GB300 racks of 146.64 kW exactly;
    # floating point left -1.8e-12 kW stranded (and -2.0e-12 kW at the meter) in the JSON.
    argv = ["size", "--mw", "16.1304", "--basis", "utility", "--hardware", "gb300-nvl72"]
    argv += ["--networking-usd-per-gpu", "0", "--installation-usd-per-gpu", "0"]  # 3e8: 100 racks
    assert main([*argv, "--floor-m2", "250", "--budget-usd", "3e8", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["racks"] == 100
    assert result["stranded"] == {"it_kw": 0, "utility_kw": 0, "floor_m2": 0, "budget_usd": 0}
    s = size_hall(10.0, pue=1.1, power_basis="utility", **GB300)  # not a fit: left as it is
    assert s.stranded_it_kw[0] == pytest.approx(10_000 / 1.1 - 8976.0)


def test_size_takes_the_scenario_bounds():
    from econ.scenario.power_models import Facility, Power
    from econ.scenario.section import field_bounds

    assert field_bounds(Power, "pue") == {"ge": 1.0, "le": 3.0}
    assert field_bounds(Facility, "hall_max_kw_per_rack") == {"gt": 0, "le": 2000.0}
    assert size(mw=10.0, hardware="gb300-nvl72", pue=3.0)["pue"] == 3.0  # the bound is inside
    with pytest.raises(InputError, match="as power.pue takes in a scenario file"):
        size(mw=10.0, hardware="gb300-nvl72", pue=3.01)


# --- Air halls and physical bounds (an infrastructure review) ---------------------------------


def test_an_air_hall_warns_of_a_rack_above_the_catalogs_air_limit(capsys):
    # models/racks.toml halls.air.legacy_max_kw_per_rack = 20 was never read: a 58 kW B300 rack
    # in an air hall was sized without a word.
    limit = load_racks().halls["air"]["legacy_max_kw_per_rack"]
    assert limit == 20.0
    assert main(["size", "--mw", "10", "--hardware", "b300-sxm"]) == 0
    out = capsys.readouterr().out
    note = next(line for line in out.splitlines() if "air-cooled hall" in line)
    assert "a 58 kW rack in an air-cooled hall, above the 20 kW per rack" in note
    assert "halls.air.legacy_max_kw_per_rack" in note and "--systems-per-rack 1" in note
    h100 = size(mw=10.0, hardware="h100-sxm")  # 4 systems, 40.8 kW
    assert any("a 40.8 kW rack in an air-cooled hall" in w for w in h100["warnings"])
    quiet = (
        size(mw=10.0, hardware="h100-sxm", systems_per_rack=1),  # 10.2 kW
        size(mw=10.0, hardware="b200-sxm", hall_max_kw_per_rack=30.0),  # the hall's own limit
        size(mw=10.0, hardware="h100-sxm", cooling="liquid"),
        size(mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True),
    )
    for result in quiet:
        assert not any("air-cooled hall" in w for w in result["warnings"]), result["warnings"]


def test_air_cooled_racks_above_what_air_cools_are_warned_of_whatever_the_hall_limit(capsys):
    # An infrastructure review: --hall-max-kw-per-rack 1e6 placed 57 air-cooled B300 racks of
    # 12 systems (174 kW) with no warning, where NVIDIA's air-cooled B300 layout is about 56 kW.
    air = load_racks().halls["air"]
    assert air["max_kw_per_rack"] == 4 * 14.5  # four DGX B300, the catalog's b300-sxm rack
    assert "~56 kW per rack" in air["sources"]["max_kw_per_rack"]
    argv = ["size", "--mw", "10", "--hardware", "b300-sxm", "--systems-per-rack", "12"]
    assert main([*argv, "--hall-max-kw-per-rack", "1e6"]) == 3  # bounded now
    err = capsys.readouterr().err
    assert "--hall-max-kw-per-rack = 1e+06: expected a limit above 0 and at most 2000 kW" in err
    assert "Traceback" not in err
    dense = size(mw=10.0, hardware="b300-sxm", systems_per_rack=12, hall_max_kw_per_rack=200.0)[
        "warnings"
    ]
    (note,) = [w for w in dense if "air-cooled hall" in w]
    assert note.startswith("b300-sxm: a 174 kW rack in an air-cooled hall, above the 58 kW")
    assert "the hall limit of 200 kW per rack given says what the hall feeds" in note
    # a liquid hall does not cool air-cooled servers (review 26): fewer systems is the remedy
    assert note.endswith("expected fewer systems per rack (command line: --systems-per-rack 4)")
    unlimited = size(mw=10.0, hardware="b300-sxm", systems_per_rack=12)["warnings"]
    assert any("a 174 kW rack in an air-cooled hall, above the 58 kW" in w for w in unlimited)
    # at the ceiling, a hall rated for the rack takes it quietly
    quiet = size(mw=10.0, hardware="b300-sxm", hall_max_kw_per_rack=60.0)
    assert not any("air-cooled hall" in w for w in quiet["warnings"]), quiet["warnings"]
    assert size(mw=10.0, hardware="gb300-nvl72", hall_max_kw_per_rack=2000.0)["racks"] == 68


def _catalog_with(tmp_path, old: str, new: str):
    text = (ROOT / "models" / "racks.toml").read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / "racks.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a review: nan and a 13,200 kW rack loaded, and size() failed later with "kW per rack
        # is nan kW", naming neither file nor field
        (
            "kw_per_rack = 132.0\n",
            "kw_per_rack = nan\n",
            "racks.gb300-nvl72.kw_per_rack = nan: expected a number above 0 and at most 2,000 kW",
        ),
        (
            "kw_per_rack = 132.0\n",
            "kw_per_rack = 13200.0\n",
            "racks.gb300-nvl72.kw_per_rack = 13200.0: expected a number above 0 and at most "
            "2,000 kW",
        ),
        (
            "kw_per_rack = 132.0\n",
            "kw_per_rack = inf\n",
            "racks.gb300-nvl72.kw_per_rack = inf: expected a number above 0",
        ),
        (
            "network_kw_per_rack = 14.64\n",
            "network_kw_per_rack = -1.0\n",
            "racks.gb300-nvl72.network_kw_per_rack = -1.0: expected a number from 0 to 2,000 kW",
        ),
        (
            "network_kw_per_rack = 14.64\nkw_per_gpu_all_in = 2.03666\n",
            "kw_per_gpu_all_in = 2.03666\n",
            "racks.gb300-nvl72.network_kw_per_rack = None: expected a number",
        ),
        (
            "kw_per_gpu_all_in = 2.03666\n",
            "kw_per_gpu_all_in = 1.8333\n",
            "racks.gb300-nvl72.kw_per_gpu_all_in = 1.8333: expected (kw_per_rack + "
            "network_kw_per_rack) / gpus_per_rack = (132 + 14.64) / 72 = 2.03667 kW per GPU",
        ),
        (
            "m2_per_rack = 2.5\n",
            "m2_per_rack = 250.0\n",
            "racks.gb300-nvl72.m2_per_rack = 250.0: expected a number above 0 and at most 28 m²",
        ),
        (
            "capex_usd_per_rack = 3000000.0\n",
            "capex_usd_per_rack = 1e300\n",
            "racks.gb300-nvl72.capex_usd_per_rack = 1e+300: expected a number above 0 and at most",
        ),
        (
            "gpus_per_system = 72\n",
            "gpus_per_system = 72.0\n",
            "racks.gb300-nvl72.gpus_per_system = 72.0: expected a whole number from 1 to 720 GPUs",
        ),
        (
            "[halls.liquid]\npue = 1.1\n",
            "[halls.liquid]\npue = nan\n",
            "halls.liquid.pue = nan: expected a PUE from 1 to 3, as power.pue takes",
        ),
        (
            "[halls.air_retrofit_liquid]\npue = 1.3\n",
            "[halls.air_retrofit_liquid]\npue = 30.0\n",
            "halls.air_retrofit_liquid.pue = 30.0: expected a PUE from 1 to 3",
        ),
        (
            "max_kw_per_rack = 58.0\n",
            "max_kw_per_rack = 10.0\n",
            "halls.air.legacy_max_kw_per_rack = 20.0: expected at most halls.air.max_kw_per_rack",
        ),
    ],
)
def test_a_bad_catalog_figure_is_refused_on_load_naming_file_rack_field_and_value(
    tmp_path, capsys, old, new, expected
):
    path = _catalog_with(tmp_path, old, new)
    with pytest.raises(RackCatalogError) as info:
        load_racks(path)
    message = str(info.value)
    assert message.startswith(str(path)) and expected in message, message


def test_the_shipped_catalog_is_within_its_bounds():
    # every figure of models/racks.toml passes the checks a bad one fails (above), and no rack
    # is denser than the bound a hall's limit takes
    from econ.racks import MAX_KW_PER_RACK

    for rack in load_racks().racks.values():
        assert 0 < rack.kw_per_rack < rack.it_kw_per_rack <= MAX_KW_PER_RACK / 9


# --- The other way: the hall a number of GPUs needs (econ size --gpus) ------------------------


@pytest.mark.parametrize(
    ("hardware", "gpus", "racks", "it_kw_per_rack", "pue"),
    [
        # by hand from models/racks.toml: ceil(GPUs / GPUs per rack) racks of rack + network kW
        ("gb300-nvl72", 5000, 70, 132.0 + 14.64, 1.1),  # 5,000 / 72 = 69.4 -> 70
        ("gb300-nvl72", 72, 1, 132.0 + 14.64, 1.1),
        ("gb200-nvl72", 1, 1, 120.0 + 14.64, 1.1),
        ("b200-sxm", 100, 7, 28.6 + 3.26, 1.3),  # 100 / 16 = 6.25 -> 7
        ("h100-sxm", 1024, 32, 40.8 + 6.52, 1.3),  # 1,024 / 32 = 32 exactly
    ],
)
def test_gpus_in_racks_and_power_out(hardware, gpus, racks, it_kw_per_rack, pue):
    result = size(gpus=gpus, hardware=hardware)
    rack = load_racks().get(hardware)
    assert result["racks"] == racks
    assert result["gpus"] == racks * rack.gpus_per_rack
    assert result["spare_gpus"] == racks * rack.gpus_per_rack - gpus
    assert result["it_kw"] == pytest.approx(racks * it_kw_per_rack)
    assert result["utility_kw"] == pytest.approx(racks * it_kw_per_rack * pue)
    assert result["utility_mw"] == pytest.approx(racks * it_kw_per_rack * pue / 1000)
    assert result["floor_m2"] == pytest.approx(racks * 2.5)
    assert result["pue"] == pue
    rounded = [w for w in result["warnings"] if "not a whole number of" in w]
    assert bool(rounded) == (gpus % rack.gpus_per_rack != 0)


def test_gpus_not_filling_racks_are_rounded_up_and_said_so(capsys):
    argv = ["size", "--gpus", "100", "--hardware", "gb300-nvl72"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("for 100 GPUs")
    assert (
        "warning: --gpus 100 is not a whole number of gb300-nvl72 racks (72 GPUs each): rounded "
        "up to 2 racks, which hold 144 GPUs (44 positions more than asked" in out
    )
    assert "Utility power [MW]                  0.323" in out  # 2 x 146.64 x 1.1 = 322.6 kW
    assert main([*argv, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["gpus_requested"], result["racks"], result["spare_gpus"]) == (100, 2, 44)


def test_gpus_with_a_retrofit_and_a_build_price_the_hall():
    result = size(
        gpus=720,
        hardware="gb300-nvl72",
        cooling="air",
        retrofit_liquid=True,
        facility_usd_per_mw=11.7e6,
    )
    # 10 racks of 146.64 kW = 1.4664 MW of IT; 10 x (3.0 M + 50,000) + 720 GPUs x (4,200 network
    # + 1,750 installation) + 1.4664 x 11.7 M
    assert result["racks"] == 10 and result["pue"] == 1.3
    assert result["fixed_capex_usd"] == pytest.approx(1.4664 * 11.7e6)
    assert result["capex_usd"] == pytest.approx(10 * 3.05e6 + 720 * 5_950 + 1.4664 * 11.7e6)
    assert result["retrofit_capex_usd"] == pytest.approx(10 * 50_000)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--gpus", "0"], "--gpus = 0: expected a whole number of GPUs of at least 1"),
        (["--gpus", "-72"], "--gpus = -72: expected a whole number of GPUs of at least 1"),
        (["--gpus", "72.5"], "--gpus = 72.5: expected a whole number of GPUs of at least 1"),
        (["--gpus", "nan"], "--gpus = nan: expected a finite number"),
        (["--gpus", "inf"], "--gpus = inf: expected a finite number"),
        (["--gpus", "1e300"], "--gpus = 1e+300: gb300-nvl72 racks for them draw"),
        (["--gpus", "72", "--floor-m2", "100"], "--floor-m2 limits a hall sized from its power"),
        (["--gpus", "72", "--budget-usd", "1e9"], "--budget-usd limits a hall sized from its"),
        (["--gpus", "72", "--basis", "utility"], "--basis says what --mw measures"),
        (["--gpus", "72", "--hall-max-kw-per-rack", "100"], "above the hall's limit of 100 kW"),
        (["--gpus", "72", "--cooling", "air"], "--retrofit-liquid"),
    ],
)
def test_bad_gpus_input_exits_3(capsys, argv, expected):
    assert main(["size", "--hardware", "gb300-nvl72", *argv]) == 3
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_gpus_and_mw_are_one_or_the_other(capsys):
    with pytest.raises(SystemExit) as both:
        main(["size", "--hardware", "gb300-nvl72", "--gpus", "72", "--mw", "1"])
    assert both.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(InputError, match="neither of --mw and --gpus given; expected one"):
        size(hardware="gb300-nvl72")
    with pytest.raises(InputError, match="both of --mw and --gpus given"):
        size(hardware="gb300-nvl72", mw=1.0, gpus=72)


@settings(max_examples=60, deadline=None)
@given(
    hardware=st.sampled_from(sorted(load_racks().racks)),
    mw=st.floats(0.5, 500.0),  # at least one rack of each at PUE 3
    gpus=st.integers(1, 200_000),
    pue=st.floats(1.0, 3.0),
)
def test_mw_and_gpus_round_trip_within_one_rack(hardware, mw, gpus, pue):
    # Sized from a power budget, the GPUs placed need exactly those racks and no more power.
    forward = size(mw=mw, hardware=hardware, cooling="liquid", pue=pue, basis="utility")
    if forward["racks"]:
        back = size(gpus=forward["gpus"], hardware=hardware, cooling="liquid", pue=pue)
        assert back["racks"] == forward["racks"] and back["spare_gpus"] == 0
        assert back["it_kw"] == pytest.approx(forward["it_kw"])
        assert back["utility_kw"] <= mw * 1000 * (1 + 1e-9)
    # GPUs in, racks out; that power as a budget places the same racks, holding every GPU, and
    # one rack less would not hold them
    need = size(gpus=gpus, hardware=hardware, cooling="liquid", pue=pue)
    again = size(
        mw=need["utility_kw"] / 1000, hardware=hardware, cooling="liquid", pue=pue, basis="utility"
    )
    assert again["racks"] == need["racks"] and again["gpus"] >= gpus
    assert (need["racks"] - 1) * need["rack"]["gpus_per_rack"] < gpus


def test_more_systems_than_a_rack_holds_are_refused(capsys):
    # 100 H100 systems per rack made one air-cooled rack of 800 GPUs and 1,020 kW
    argv = ["size", "--mw", "10", "--hardware", "h100-sxm", "--systems-per-rack"]
    assert main([*argv, "100"]) == 3
    err = capsys.readouterr().err
    assert "--systems-per-rack = 100" in err and "48U rack" in err and "at most 12" in err
    assert "Traceback" not in err
    assert size(mw=10.0, hardware="h100-sxm", systems_per_rack=12)["rack"]["gpus_per_rack"] == 96
    with pytest.raises(RackCatalogError, match="rack-scale system"):  # not an 8-GPU system
        size(mw=10.0, hardware="gb300-nvl72", systems_per_rack=100)


def test_liquid_cooling_stated_for_an_air_cooled_rack_is_warned_of_too():
    # cooling_warning caught only liquid racks stated as air; an H100 fleet stated as liquid-cooled
    # took the liquid hall's PUE without a word.
    from econ import load_scenario, project
    from econ.racks import cooling_warning

    note = cooling_warning("h100-sxm", "liquid")
    assert note.startswith("facility.rack_cooling is 'liquid' but h100-sxm racks are air-cooled")
    assert "air-cooled DGX/HGX H100" in note and "liquid-cooled variant" in note
    assert cooling_warning("h100-sxm", "air") is None
    assert cooling_warning("my-own-asic", "liquid") is None
    h200 = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
    liquid = {"facility.rack_cooling": "liquid", "facility.hall_cooling": "liquid"}
    warned = project(load_scenario(h200, liquid)).summary.iloc[0]["warnings"]
    assert sum("facility.rack_cooling is 'liquid' but h200-sxm" in w for w in warned) == 1
    shipped = project(load_scenario(h200)).summary.iloc[0]["warnings"]
    assert not any("rack_cooling" in w for w in shipped)


def test_size_warns_of_air_cooled_racks_in_a_liquid_hall(capsys):
    # --cooling liquid gave H100 racks the liquid hall's PUE of 1.1 silently
    assert main(["size", "--mw", "10", "--hardware", "h100-sxm", "--cooling", "liquid"]) == 0
    out = capsys.readouterr().out
    note = next(line for line in out.splitlines() if "liquid-cooled hall" in line)
    assert "h100-sxm: air-cooled racks" in note and "PUE 1.1" in note and "PUE 1.3" in note
    given = size(mw=10.0, hardware="h100-sxm", cooling="liquid", pue=1.25)["warnings"]
    assert any("the PUE given should count the air handling" in w for w in given)
    for quiet in (
        size(mw=10.0, hardware="h100-sxm"),
        size(mw=10.0, hardware="gb300-nvl72"),
        size(mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True),
    ):
        assert not any("in a liquid-cooled hall;" in w for w in quiet["warnings"])


def test_a_gpu_count_that_is_not_whole_systems_is_warned_of(capsys, tmp_path):
    # 5,401 GPUs of GB200 NVL72 (72 GPUs per rack-scale system) were projected without a word,
    # paying 1/72 of a rack's price for the odd GPU.
    from econ import load_scenario, project
    from econ.racks import whole_systems_warning

    assert whole_systems_warning("gb200-nvl72", 5401) == (
        "fleet.gpu_count = 5401 is not a whole number of gb200-nvl72 systems (72 GPUs each, "
        "models/racks.toml gpus_per_system): 75.01 systems, the fraction priced at its share of "
        "a system; expected 5,400 or 5,472 (75 or 76 systems)"
    )
    assert whole_systems_warning("gb200-nvl72", 5).endswith("expected 72 (1 system)")
    assert whole_systems_warning("h100-sxm", 100).endswith("expected 96 or 104 (12 or 13 systems)")
    assert whole_systems_warning("gb200-nvl72", 5400) is None
    assert whole_systems_warning("my-own-asic", 5401) is None
    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    warned = project(load_scenario(seed, {"fleet.gpu_count": 5401})).summary.iloc[0]["warnings"]
    assert sum("fleet.gpu_count = 5401 is not a whole number" in w for w in warned) == 1
    assert not any(
        "whole number" in w for w in project(load_scenario(seed)).summary.iloc[0]["warnings"]
    )
    odd = tmp_path / "odd.toml"
    odd.write_text(seed.read_text().replace("gpu_count = 72\n", "gpu_count = 5401\n", 1))
    assert main(["validate", str(odd)]) == 0
    assert "fleet.gpu_count = 5401 is not a whole number" in capsys.readouterr().err


def test_a_sized_fleet_of_other_hardware_brings_its_catalog_figures():
    # The review's case: B200 air racks used on the GB300 hall kept its liquid retrofit, the
    # GB300 price per GPU and kW per GPU.
    from econ import load_scenario
    from econ.racks import sized_fleet_fields

    hall = load_scenario(ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml")
    fields, stays = sized_fleet_fields(size(mw=10.0, hardware="b200-sxm"), hall)
    # floor(10,000 / 31.86) = 313 racks of 16; (28.6 + 3.26) / 16 = 1.99125 kW per GPU
    assert fields["fleet.hardware"] == "b200-sxm" and fields["fleet.gpu_count"] == 5008
    assert fields["facility.rack_cooling"] == "air" and fields["facility.hall_cooling"] == "air"
    assert fields["power.kw_per_gpu"] == 1.99125
    assert "power.pue" not in fields and hall.power.pue == 1.3  # the air hall's, as before
    assert fields["capex.gpu_price_usd"] == 1_000_000 / 16
    assert any(s.startswith("throughput.tokens_per_s_per_gpu (of gb300-nvl72)") for s in stays)
    loaded = hall.model_dump()
    for path, value in fields.items():
        section, name = path.split(".")
        loaded[section][name] = value
    assert type(hall).model_validate(loaded).fleet.gpu_count == 5008  # a valid scenario
    sized = size(mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True)
    same, nothing = sized_fleet_fields(sized, hall)
    assert same == {"fleet.racks": None} and nothing == ()  # 68 racks of 72: the same fleet

    b200_hall = load_scenario(ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml")
    _, stays = sized_fleet_fields(size(mw=10.0, hardware="gb300-nvl72"), b200_hall)
    assert "facility.hall_max_kw_per_rack (30 kW, below the 132 kW gb300-nvl72 rack" in stays[-1]


def test_the_same_hardware_sized_in_another_hall_takes_that_hall_and_pue():
    # A review (31): the GB300 hall (air retrofitted for liquid, PUE 1.3) sized on the Power page
    # in a liquid hall at 10 MW at the meter: 61 racks at PUE 1.1, floor(10,000 / 1.1 / 146.64).
    # "Use" set the GPUs and kept the retrofitted hall at PUE 1.3: 61 x 146.64 x 1.3 = 11,628.6
    # kW at the meter, 16% over the 10 MW sized, said nowhere.
    from econ import load_scenario
    from econ.racks import sized_fleet_fields

    scenarios = ROOT / "models" / "scenarios"
    retrofit = "facility.liquid_retrofit_usd_per_rack"
    hall = load_scenario(scenarios / "hall-10mw-gb300-nvl72-liquid.toml")
    sized = size(mw=10.0, hardware="gb300-nvl72", basis="utility", cooling="liquid")
    assert (sized["racks"], sized["gpus"], sized["pue"]) == (61, 4392, 1.1)
    fields, _ = sized_fleet_fields(sized, hall)
    assert fields["facility.hall_cooling"] == "liquid" and fields["power.pue"] == 1.1
    assert sized["it_kw"] * fields["power.pue"] <= 10_000.0
    # a PUE typed for the scenario's own hall is the one its racks were counted at; the
    # retrofitted hall keeps its own retrofit price
    typed = size(
        mw=10.0,
        hardware="gb300-nvl72",
        basis="utility",
        cooling="air",
        retrofit_liquid=True,
        pue=1.2,
    )
    own_price = load_scenario(scenarios / "hall-10mw-gb300-nvl72-liquid.toml", {retrofit: 6e4})
    fields, _ = sized_fleet_fields(typed, own_price)
    assert fields["power.pue"] == 1.2 and "facility.hall_cooling" not in fields
    assert retrofit not in fields
    # a liquid hall become a retrofitted air hall takes the catalog's retrofit price with it
    seed = load_scenario(scenarios / "deepseek-r1-gb200-nvl72.toml", {retrofit: 0.0})
    aired = size(mw=10.0, hardware="gb200-nvl72", cooling="air", retrofit_liquid=True)
    fields, _ = sized_fleet_fields(aired, seed)
    assert fields["facility.hall_cooling"] == "air_retrofit_liquid" and fields["power.pue"] == 1.3
    assert fields[retrofit] == 50_000.0


def test_a_kept_power_at_the_meter_is_counted_at_the_pue_the_hall_takes():
    # A review (31): 1.9 kW per H200 at the utility meter is 1.9 / 1.3 = 1.4615 kW of IT load in
    # llama's PUE 1.3 hall, below the 1.47875 the budget counts; sized at PUE 1.2, which "Use"
    # now sets, it is 1.5833 kW: 6,752 x 1.5833 = 10,691 kW in a 10 MW hall, which went unsaid.
    from econ import load_scenario
    from econ.racks import sized_fleet_fields

    meter = {"power.kw_per_gpu": 1.9, "power.kw_per_gpu_definition": "utility_meter"}
    llama = load_scenario(ROOT / "models" / "scenarios" / "llama2-70b-h200.toml", meter)
    fields, stays = sized_fleet_fields(size(mw=10.0, hardware="h200-sxm", pue=1.2), llama)
    assert fields["power.pue"] == 1.2
    (note,) = [s for s in stays if s.startswith("power.kw_per_gpu")]
    assert "the 6,752 GPUs draw 10,691 kW of IT load, 7.1% more" in note, note
    _, stays = sized_fleet_fields(size(mw=10.0, hardware="h200-sxm"), llama)  # PUE 1.3 kept
    assert not any(s.startswith("power.kw_per_gpu") for s in stays)


def test_a_power_per_gpu_far_from_the_catalogs_is_warned_of(capsys, tmp_path):
    # An infrastructure review: 1.4 kW per GB300 GPU (its TDP alone) raised the hall's NPV from
    # 28.8 to 52.3 M USD, and as chip-only power with no host share it did the same, silently.
    from econ import load_scenario, project
    from econ.racks import POWER_DEPARTURE, power_warning
    from econ.scenario.power_models import MAX_KW_PER_GPU, Power, host_share_warning

    # 1.4 / 2.03666 - 1 = -31%
    assert power_warning("gb300-nvl72", 1.4).startswith(
        "power.kw_per_gpu gives 1.4 kW of IT load per GPU, 31% below the 2.03666 kW the rack "
        "catalog gives gb300-nvl72 (GPU with its share of the host and of the scale-out network; "
        "derived: (132 kW rack"
    )
    assert "25% above" in power_warning("gb300-nvl72", 2.03666 * 1.25)
    edge = 2.03666 * (1 + POWER_DEPARTURE) * (1 - 1e-12)
    assert power_warning("gb300-nvl72", edge) is None
    assert power_warning("my-own-asic", 9.0) is None
    assert host_share_warning(Power(kw_per_gpu=1.4, kw_per_gpu_definition="chip_only")) == (
        "power.kw_per_gpu_definition is 'chip_only' and power.host_overhead_share is 0: the 1.4 "
        "kW per GPU is counted as the whole IT load, with nothing for the host (CPUs, memory, "
        "NICs, fans, switches); expected the host's share, e.g. 0.3 for 30%"
    )
    chip = Power(kw_per_gpu=1.4, kw_per_gpu_definition="chip_only", host_overhead_share=0.3)
    assert host_share_warning(chip) is None
    hall = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"
    low = {"power.kw_per_gpu": 1.4, "power.kw_per_gpu_definition": "chip_only"}
    warned = project(load_scenario(hall, low)).warnings[0]
    assert sum(w.startswith("power.kw_per_gpu gives 1.4 kW") for w in warned) == 1
    assert sum(w.startswith("power.kw_per_gpu_definition is 'chip_only'") for w in warned) == 1
    # the ready-made cases' sourced figures are within the tolerance
    for path in sorted((ROOT / "models" / "scenarios").glob("*.toml")):
        said = project(load_scenario(path), monthly=False).warnings[0]
        assert not any(w.startswith("power.kw_per_gpu") for w in said), path.name
    typo = tmp_path / "typo.toml"
    typo.write_text(hall.read_text().replace("kw_per_gpu = 2.03666", "kw_per_gpu = 18333.0", 1))
    assert main(["validate", str(typo)]) == 3
    err = capsys.readouterr().err
    assert "power.kw_per_gpu = 18333.0" in err and f"{MAX_KW_PER_GPU:g}" in err


def test_h200_racks_count_the_power_the_h200_cases_bill():
    # A CLI review: racks.toml gave H200 10.2 kW / 8 = 1.275 kW per GPU while both H200 cases
    # bill the H100-class all-in 1.37 (the same 700 W chip in the same DGX system), so a 10 MW
    # hall sized for H200 placed 7,840 GPUs that drew 7,840 x 1.37 = 10,741 kW. By hand: a rack of
    # 4 systems adds 40.8 + 6.52 = 47.32 kW; floor(10,000 / 47.32) = 211 racks, 6,752 GPUs.
    from econ import load_scenario
    from econ.scenario.power_models import it_kw_per_gpu

    h200 = size(mw=10.0, hardware="h200-sxm")
    assert (h200["racks"], h200["gpus"]) == (211, 6752)
    assert h200["gpus"] == size(mw=10.0, hardware="h100-sxm")["gpus"]
    for name in ("llama2-70b-h200", "h200-fleet-gb300-refresh"):
        case = load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")
        assert h200["gpus"] * it_kw_per_gpu(case.power) <= 10_000.0


def test_a_kept_power_figure_above_the_budgets_is_named():
    # The same hardware keeps the scenario's power per GPU; where it is above what the power
    # budget counted, the sized hall draws more than its MW, and the page is told how much.
    from econ import load_scenario
    from econ.racks import sized_fleet_fields

    llama = load_scenario(ROOT / "models" / "scenarios" / "llama2-70b-h200.toml")
    sized = size(mw=10.0, hardware="h200-sxm")
    _, stays = sized_fleet_fields(sized, llama)
    assert not any(s.startswith("power.kw_per_gpu") for s in stays)  # 1.37: below 1.47875
    hotter = llama.model_copy(update={"power": llama.power.model_copy(update={"kw_per_gpu": 1.5})})
    _, stays = sized_fleet_fields(sized, hotter)
    (note,) = [s for s in stays if s.startswith("power.kw_per_gpu")]
    # 6,752 x 1.5 = 10,128 kW; 1.5 / 1.47875 - 1 = 1.4%
    assert "the 6,752 GPUs draw 10,128 kW of IT load, 1.4% more" in note
    b200_hall = load_scenario(ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml")
    _, stays = sized_fleet_fields(size(mw=10.0, hardware="b200-sxm"), b200_hall)
    assert not any(s.startswith("power.kw_per_gpu") for s in stays)  # 1.99125: as counted


def test_a_rack_of_other_systems_cites_its_own_derivation():
    # A CLI review: --systems-per-rack 1 gave kw_per_rack 10.2 and 313,500 USD with the sources
    # of the 4-system rack ("derived: 4 x 10.2 kW", "4 x HGX H100 ...").
    result = size(mw=10.0, hardware="h100-sxm", systems_per_rack=1)
    rack = result["rack"]
    assert rack["kw_per_rack"] == 10.2 and rack["capex_usd_per_rack"] == 1_254_000 / 4
    assert rack["sources"]["kw_per_rack"] == "derived: 1 x 10.2 kW (kw_per_system)"
    assert rack["sources"]["capex_usd_per_rack"].startswith(
        "derived: 1 / 4 of the catalog's 4-system rack (derived: 4 x HGX H100"
    )


def test_a_budget_a_cent_short_of_a_rack_is_worded_to_the_cent():
    # A CLI review: 2,999,999.99 USD read "leaves 3,000,000 USD ... below ... (3,000,000 USD)";
    # 1e300 USD printed 300 digits.
    with pytest.raises(
        SizingError,
        match=r"leaves 2,999,999\.99 USD for racks, below the cost "
        r"of one rack \(3,000,000\.00 USD\)",
    ):
        size(
            mw=10.0,
            hardware="gb300-nvl72",
            budget_usd=2_999_999.99,
            networking_usd_per_gpu=0.0,
            installation_usd_per_gpu=0.0,
        )
    with pytest.raises(SizingError, match=r"capex budget of 1e\+300 USD does not cover"):
        size(mw=10.0, hardware="gb300-nvl72", budget_usd=1e300, facility_usd_per_mw=1e300)


def _power_page() -> str:
    return (ROOT / "docs" / "power.md").read_text(encoding="utf-8")


def test_the_sizing_table_of_docs_power_md_is_what_econ_size_prints(capsys):
    # The page's table quotes commands and their figures; a change of the catalog must move both.
    page = _power_page()
    table = page[page.index("| command | racks | GPUs |") :].split("\n\n")[0].splitlines()[2:]
    assert len(table) >= 8
    for line in table:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        argv = re.match(r"`econ (size [^`]*)`", cells[0]).group(1).split()
        assert main([*argv, "--format", "json"]) == 0
        result = json.loads(capsys.readouterr().out)
        racks, gpus, it_kw, utility_kw = (float(c.replace(",", "")) for c in cells[1:5])
        assert (racks, gpus) == (result["racks"], result["gpus"]), line
        assert it_kw == pytest.approx(result["it_kw"], abs=0.05), line
        assert utility_kw == pytest.approx(result["utility_kw"], abs=0.05), line
        assert cells[5] == result["binding_limit"], line
        stranded = float(cells[6].replace(",", ""))
        assert stranded == pytest.approx(result["stranded"]["it_kw"], abs=0.05), line


def test_the_gpus_example_of_docs_power_md_is_what_econ_size_prints():
    page = " ".join(_power_page().split())
    result = size(gpus=5000, hardware="gb300-nvl72")
    said = (
        f"needs {result['racks']} racks, {result['gpus']:,} GPU positions "
        f"({result['spare_gpus']} spare), {result['it_kw']:,.1f} kW of IT load, "
        f"{result['utility_mw']:.2f} MW at the meter at PUE {result['pue']:g}, "
        f"{result['floor_m2']:g} m²"
    )
    assert said in page
    (rounded,) = [w for w in result["warnings"] if "rounded up" in w]
    assert f'("{rounded}")' in page


# --- Capex per GPU, load share, credits (an infrastructure review, round 24) -------------------


HALL_GB300 = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"


def test_a_budget_of_the_projected_capex_places_the_projected_racks():
    # A review: --budget-usd 236,531,200, what `econ project` charges the 68-rack GB300 hall
    # (racks, retrofit, and per GPU 4,200 network + 1,750 installation), placed 77 racks: size's
    # capex counted the racks and the retrofit only.
    from econ.engine import project
    from econ.scenario import load_scenario

    scenario = load_scenario(HALL_GB300)
    engine = project(scenario, monthly=False).summary.iloc[0]
    budget = float(engine.capex_usd_total)
    result = size(
        mw=20.0,
        hardware="gb300-nvl72",
        cooling="air",
        retrofit_liquid=True,
        budget_usd=budget,
        networking_usd_per_gpu=scenario.capex.networking_usd_per_gpu,
        installation_usd_per_gpu=scenario.capex.installation_usd_per_gpu,
    )
    assert (result["racks"], result["gpus"]) == (scenario.fleet.racks, scenario.fleet.gpu_count)
    assert result["binding_limit"] == "budget"
    assert result["capex_usd"] == pytest.approx(budget, abs=0.01)
    parts = ("retrofit_capex_usd", "networking_capex_usd", "installation_capex_usd")
    assert result["networking_capex_usd"] == 4896 * scenario.capex.networking_usd_per_gpu
    assert result["installation_capex_usd"] == 4896 * scenario.capex.installation_usd_per_gpu
    assert sum(result[p] for p in parts) + 68 * 3_000_000 == pytest.approx(budget, abs=0.01)
    assert result["capex_includes"][0] == "racks"
    assert "scale-out network (4,200 USD per GPU)" in result["capex_includes"]
    # the catalog's own per-GPU figures are the ready-made hall's: the default gives the same
    default = size(
        mw=20.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True, budget_usd=budget
    )
    assert default["racks"] == 68 and default["capex_usd"] == result["capex_usd"]


def test_the_catalogs_capex_per_gpu_is_the_ready_made_scenarios(shared_data):
    from econ.scenario import load_scenario

    racks = load_racks().racks
    installation = float(_reference(shared_data)["Installation and integration"])
    for key, name in (
        ("gb300-nvl72", "hall-10mw-gb300-nvl72-liquid"),
        ("gb200-nvl72", "deepseek-r1-gb200-nvl72"),
        ("b200-sxm", "hall-10mw-hgx-b200-air"),
    ):
        capex = load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml").capex
        assert racks[key].networking_usd_per_gpu == capex.networking_usd_per_gpu, key
        assert racks[key].installation_usd_per_gpu == capex.installation_usd_per_gpu, key
    assert all(r.installation_usd_per_gpu == installation for r in racks.values())


def test_a_rack_without_a_network_price_says_its_capex_is_racks_only(capsys):
    argv = ["size", "--mw", "10", "--hardware", "b300-sxm", "--capex-usd-per-rack", "2e6"]
    argv += ["--installation-usd-per-gpu", "0"]
    assert main([*argv, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["capex_includes"] == ["racks"]
    assert result["capex_usd"] == result["racks"] * 2e6
    (note,) = [w for w in result["warnings"] if w.startswith("capex counts")]
    assert note.startswith(
        "capex counts no scale-out network: models/racks.toml has no networking_usd_per_gpu for "
        "b300-sxm"
    )
    assert note.endswith("expected --networking-usd-per-gpu to count it")
    assert main(argv) == 0
    assert "  includes                          racks only" in capsys.readouterr().out
    given = size(mw=10.0, hardware="b300-sxm", capex_usd_per_rack=2e6, networking_usd_per_gpu=500)
    assert not any(w.startswith("capex counts") for w in given["warnings"])
    assert given["rack"]["sources"]["networking_usd_per_gpu"] == "--networking-usd-per-gpu"
    with pytest.raises(InputError, match="--networking-usd-per-gpu = -1: expected a price from 0"):
        size(mw=10.0, hardware="b300-sxm", networking_usd_per_gpu=-1.0)


def test_a_load_share_keeps_headroom_both_ways():
    # 10 MW loaded to 85%: floor(8,500 / 146.64) = 57 racks, 1,500 kW of headroom kept
    result = size(mw=10.0, hardware="gb300-nvl72", max_load_share=0.85)
    assert result["racks"] == math.floor(8_500 / 146.64) == 57
    assert result["headroom_it_kw"] == pytest.approx(1_500.0)
    assert result["stranded"]["it_kw"] == pytest.approx(8_500 - 57 * 146.64)
    assert "N+1 or 2N redundancy" in result["sizing_basis"]
    assert "loaded to 85% of it (--max-load-share 0.85)" in result["sizing_basis"]
    assert "loaded to 100% of it" in size(mw=10.0, hardware="gb300-nvl72")["sizing_basis"]
    # the other way: 57 racks' IT load over 0.85 is the hall they need, and its build
    fleet = size(gpus=57 * 72, hardware="gb300-nvl72", max_load_share=0.85, facility_usd_per_mw=1e7)
    assert fleet["hall_it_mw"] == pytest.approx(57 * 146.64 / 0.85 / 1000)
    assert fleet["fixed_capex_usd"] == pytest.approx(fleet["hall_it_mw"] * 1e7)
    again = size(mw=fleet["hall_it_mw"], hardware="gb300-nvl72", max_load_share=0.85)
    assert again["racks"] == 57
    for bad in (0.0, 1.2, float("nan")):
        with pytest.raises(InputError, match="--max-load-share"):
            size(mw=10.0, hardware="gb300-nvl72", max_load_share=bad)


def test_a_price_given_or_with_a_retrofit_is_credited_to_what_it_is():
    # A review: --capex-usd-per-rack 2,500,000 was credited to "GB300 NVL72 rack USD 3.0 million,
    # Bizety"; with a retrofit, 3,050,000 was credited to the same source.
    catalog = load_racks().get("gb300-nvl72").sources
    given = size(mw=10.0, hardware="gb300-nvl72", capex_usd_per_rack=2_500_000)["rack"]
    assert given["capex_usd_per_rack"] == 2_500_000
    assert given["sources"]["capex_usd_per_rack"] == "--capex-usd-per-rack"
    retrofit = size(mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True)["rack"]
    assert retrofit["capex_usd_per_rack"] == 3_050_000
    assert retrofit["sources"]["capex_usd_per_rack"] == (
        f"rack USD 3,000,000 ({catalog['capex_usd_per_rack']}) + liquid retrofit USD 50,000 "
        f"({catalog['liquid_cooling_usd_per_rack']})"
    )
    assert retrofit["capex_usd_per_placed_rack"] == 3_050_000 + 72 * (4_200 + 1_750)


def test_hardware_list_names_each_power_per_gpu_by_what_it_is(capsys):
    # A review: "kW/GPU all-in" showed 1.71 for b200-sxm (SemiAnalysis, a typical load) while
    # econ size counts 1.99125 (racks.toml: the rack's maximum and its network share).
    from econ.hardware import load_hardware_catalog

    assert main(["hardware", "list"]) == 0
    out = capsys.readouterr().out
    assert "kW/GPU all-in" not in out
    assert "kW/GPU published" in out and "kW/GPU max+net" in out
    (b200,) = [line.split() for line in out.splitlines() if line.startswith("b200-sxm ")]
    published = load_hardware_catalog()["b200-sxm"].power.all_in_kw_per_gpu
    assert [f"{published:g}", f"{load_racks().get('b200-sxm').kw_per_gpu_all_in:g}"] == b200[-3:-1]
    assert main(["hardware", "list", "--format", "json"]) == 0
    records = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert records["b200-sxm"]["rack_kw_per_gpu_all_in"] == 1.99125
    assert records["mi300x"]["rack_kw_per_gpu_all_in"] is None


@pytest.mark.parametrize(
    ("hardware", "meant"),
    [
        ("gb300", "did you mean 'gb300-nvl72' or 'b300-sxm'? "),
        ("GB300-NVL72", "did you mean 'gb300-nvl72'? "),
        ("gb300_nvl72", "did you mean 'gb300-nvl72'? "),
        ("b200", "did you mean 'b200-sxm'? "),
    ],
)
def test_a_hardware_key_misspelt_gets_a_did_you_mean(hardware, meant, capsys):
    # A review: `econ size --hardware gb300` listed the keys with no hint, as scenarios give one.
    assert main(["size", "--mw", "10", "--hardware", hardware]) == 3
    err = capsys.readouterr().err
    assert f"hardware {hardware!r} has no rack figures in models/racks.toml; {meant}expected" in err


def test_a_key_of_the_hardware_catalog_without_rack_figures_says_why(capsys):
    from econ.hardware import catalog_keys

    assert "mi300x" in catalog_keys() and "mi300x" not in load_racks().racks
    assert main(["size", "--mw", "10", "--hardware", "mi300x"]) == 3
    err = capsys.readouterr().err
    assert "hardware 'mi300x' is in models/hardware.toml, but the rack catalog" in err
    assert "has no system or rack power for it" in err and "did you mean" not in err


def test_the_size_table_says_why_capex_is_missing_and_writes_huge_amounts_short(capsys):
    """b300-sxm (no price in models/racks.toml) read 'Capex [USD] n/a' on six rows with no word
    why; --budget-usd 1e308 left '100,000,...' (309 digits) of budget stranded."""
    assert main(["size", "--mw", "10", "--hardware", "b300-sxm"]) == 0
    out = capsys.readouterr().out
    assert "note: models/racks.toml gives no price for a b300-sxm rack, so no capex is " in out
    assert "give --capex-usd-per-rack for it" in out
    args = ["size", "--mw", "10", "--hardware", "b300-sxm", "--capex-usd-per-rack", "2e6"]
    assert main(args) == 0
    assert "note:" not in capsys.readouterr().out
    assert main(["size", "--mw", "10", "--hardware", "gb300-nvl72", "--budget-usd", "1e308"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Stranded budget \[USD\] +1e\+308\n", out), out
    assert not re.search(r"\d{1,3}(,\d{3}){5,}", out)
    assert re.search(r"Capex \[USD\] +233,131,200\n", out)  # below a trillion, as before
