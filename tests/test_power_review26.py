"""Review 26 of power and sizing (a data-centre engineer): a power per GPU above the catalog's
checked against the hall's kW-per-rack limit, NVIDIA's GB200 design figure cited, the air-cooled
rack warning in any hall, the utility basis named, spare systems of `econ size --gpus` said, a
refusal's hints that apply, and the figures docs/power.md quotes."""

from __future__ import annotations

import csv
import math
import re

import pytest

from econ import load_scenario, project
from econ import plausibility as pl
from econ.cli import main
from econ.facility import HallLimitError
from econ.racks import density_kw_per_rack, load_racks, size
from econ.scenario import ScenarioError
from tests.conftest import ROOT
from tests.test_plausibility import _with_rack

SCENARIOS = ROOT / "models" / "scenarios"
HALL_B200 = SCENARIOS / "hall-10mw-hgx-b200-air.toml"  # b200-sxm, 16 GPUs a rack, 30 kW limit
HALL_GB300 = SCENARIOS / "hall-10mw-gb300-nvl72-liquid.toml"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"  # gb200-nvl72 at 1.87 kW per GPU


def _page(name: str = "power.md") -> str:
    return " ".join((ROOT / "docs" / name).read_text(encoding="utf-8").split())


# --- 1. A power per GPU above the catalog's is checked against the hall's limit --------------


@pytest.mark.parametrize(
    ("path", "overrides", "checked", "limit"),
    [
        # 16 x 2.35 = 37.6 kW, 18% above the catalog's 1.99125 (no power warning either)
        (HALL_B200, {"power.kw_per_gpu": 2.35}, 37.6 - 3.26, 30),
        (HALL_B200, {"power.kw_per_gpu": 20.0}, 320 - 3.26, 30),  # a 320 kW rack
        (
            HALL_GB300,
            {"power.kw_per_gpu": 2.4, "facility.hall_max_kw_per_rack": 140.0},
            72 * 2.4 - 14.64,
            140,
        ),
    ],
)
def test_a_power_per_gpu_above_the_catalogs_is_checked_against_the_hall(
    path, overrides, checked, limit
):
    # Before, a product above the catalog's rack checked the catalog's rack (28.6 or 132 kW), so
    # every such scenario passed its hall; the same figures on hardware without catalog racks
    # (mi300x) were refused.
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path, overrides)
    said = str(refused.value)
    assert f"a rack draws {checked:g} kW" in said, said
    assert "less the" in said and "share of the scale-out network outside it" in said
    assert f"above the hall's limit of {limit} kW per rack" in said


def test_the_cli_refuses_the_review_case_with_exit_3(capsys):
    argv = ["project", str(HALL_B200), "--set", "power.kw_per_gpu=2.35"]
    assert main(argv) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "a rack draws 34.34 kW (16 GPUs x IT kW per GPU = 37.6 kW, less the b200-sxm rack's" in err
    )
    assert "Traceback" not in err
    # the page quotes the refusal
    assert err.split("hall-10mw-hgx-b200-air.toml: ")[1].split("; expected")[0] in _page()


def test_the_network_share_and_no_more_is_taken_off():
    # Up to the rack with its network share the catalog's rack is checked (the seed's 134.64 kW
    # against a 125 kW hall still fits, as `econ size`); above it the figure rises with the
    # power, without a step where the fallback ends.
    load_scenario(SEED, {"facility.hall_max_kw_per_rack": 125.0})
    rack = load_racks().get("gb200-nvl72")
    products = [120.0 + 0.5 * i for i in range(80)]  # 120 to 159.5 kW
    checked = [density_kw_per_rack("gb200-nvl72", 72, p)[0] for p in products]
    assert all(b >= a for a, b in zip(checked, checked[1:], strict=False))
    steps = [b - a for a, b in zip(checked, checked[1:], strict=False)]
    assert max(steps) <= 0.5 + 1e-9  # continuous: no jump at 134.64 kW
    for product, kw in zip(products, checked, strict=True):
        assert kw == pytest.approx(max(rack.kw_per_rack, product - rack.network_kw_per_rack))
    assert density_kw_per_rack("gb200-nvl72", 72, 72 * 1.87)[0] == 120.0
    # a whole number of 8-GPU systems: the scaled rack and its scaled share
    assert density_kw_per_rack("b200-sxm", 8, 8 * 2.35)[0] == pytest.approx(8 * 2.35 - 1.63)
    # hardware without catalog racks: the product
    assert density_kw_per_rack("mi300x", 16, 37.6) == (37.6, "16 GPUs x IT kW per GPU")


# --- 2. NVIDIA's GB200 design figure, cited ------------------------------------------------------


NVIDIA_GB200_RA = (
    "docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200/latest/"
    "dgx-superpod-architecture.html"
)


def test_nvidias_gb200_design_figure_is_cited_and_the_false_statements_are_gone():
    catalog = (ROOT / "models" / "racks.toml").read_text(encoding="utf-8")
    flat = " ".join(line.lstrip("# ") for line in catalog.splitlines())
    assert "No source gives it per rack" not in flat  # NVIDIA's page gives a figure per SU
    assert "no NVIDIA document stating 120 kW" not in catalog
    quote = "Each SU requires a Thermal Design Power (TDP) of 1.2 Megawatts (MW)"
    assert quote in flat
    rack = load_racks().get("gb200-nvl72")
    assert quote in rack.sources["network_kw_per_rack"]
    assert NVIDIA_GB200_RA in rack.sources["network_kw_per_rack"]
    with open(ROOT / "models" / "reference_figures.csv", newline="", encoding="utf-8") as f:
        rows = {r["item"]: r for r in csv.DictReader(f)}
    row = rows["DGX SuperPOD GB200 scalable unit thermal design power"]
    assert (row["value"], row["quality"]) == ("1.2", "primary")
    assert quote in row["source"] and NVIDIA_GB200_RA in row["source"]
    assert "8 DGX GB200 rack systems" in row["source"]
    assert "no NVIDIA document stating 120 kW" not in rows["GB200 NVL72 rack power"]["source"]
    page = _page()
    assert "No source gives a rack's network power," not in page
    assert quote in page and NVIDIA_GB200_RA in page


def test_sizing_on_nvidias_figure_with_existing_options_is_what_the_docs_say():
    # 1.2 MW / 8 racks = 150 kW a rack position; the default (unchanged) counts 134.64 kW
    per_rack_kw = 1200.0 / 8
    rack = load_racks().get("gb200-nvl72")
    assert rack.it_kw_per_rack == 134.64  # the default every ready-made scenario is on
    assert size(mw=10.0, hardware="gb200-nvl72")["racks"] == 74
    share = round(rack.it_kw_per_rack / per_rack_kw, 4)
    assert share == 0.8976
    nvidia = size(mw=10.0, hardware="gb200-nvl72", max_load_share=share)
    assert nvidia["racks"] == math.floor(10_000 / per_rack_kw) == 66
    assert nvidia["headroom_it_kw"] == pytest.approx(1024.0)
    assert size(mw=10.0, hardware="gb200-nvl72", max_load_share=0.9)["racks"] == 66
    page = _page()
    assert (
        "`econ size --mw 10 --hardware gb200-nvl72 --max-load-share 0.8976` (134.64 / 150)" in page
    )
    assert "places 66 racks, ⌊10,000 / 150⌋, and reports the 1,024 kW kept" in page
    # the catalog's header says the same
    assert "`econ size --max-load-share 0.8976` (134.64 / 150) places 66 racks" in " ".join(
        line.lstrip("# ")
        for line in (ROOT / "models" / "racks.toml").read_text(encoding="utf-8").splitlines()
    )


# --- 3. An air-cooled rack denser than air cools, in any hall ------------------------------------


def test_a_liquid_hall_keeps_the_warning_for_air_cooled_racks(capsys):
    # The warning advised --cooling liquid, which silenced it: 51 air-cooled racks of 174 kW
    # were then placed without a word.
    args = {"mw": 10.0, "hardware": "b300-sxm", "systems_per_rack": 12}
    air = size(**args, hall_max_kw_per_rack=200.0)["warnings"]
    (note,) = [w for w in air if "densest air-cooled rack" in w]
    assert "--cooling liquid" not in note
    assert note.endswith("expected fewer systems per rack (command line: --systems-per-rack 4)")
    liquid = size(**args, hall_max_kw_per_rack=200.0, cooling="liquid")
    assert liquid["racks"] == 51
    (note,) = [w for w in liquid["warnings"] if "densest air-cooled rack" in w]
    assert note.startswith("b300-sxm: a 174 kW air-cooled rack in a liquid-cooled hall, above the")
    assert "the hall's water cools liquid-cooled racks, not air-cooled servers" in note
    assert note.endswith("expected fewer systems per rack (command line: --systems-per-rack 4)")
    argv = ["size", "--mw", "10", "--hardware", "b300-sxm", "--systems-per-rack", "12"]
    assert main([*argv, "--hall-max-kw-per-rack", "200", "--cooling", "liquid"]) == 0
    assert "a 174 kW air-cooled rack in a liquid-cooled hall" in capsys.readouterr().out
    # the remedy works; a liquid-cooled rack and the 20 kW legacy figure stay out of liquid halls
    for quiet in (
        size(mw=10.0, hardware="b300-sxm", cooling="liquid", pue=1.3),  # 58 kW, 4 systems
        size(mw=10.0, hardware="h100-sxm", cooling="liquid", pue=1.3),  # 40.8 kW
        size(mw=10.0, hardware="gb300-nvl72"),
    ):
        assert not any("densest air-cooled rack" in w for w in quiet["warnings"])
        assert not any("commonly cool" in w for w in quiet["warnings"])


def test_a_scenarios_air_cooled_rack_in_a_liquid_hall_is_warned_of_unless_stated_liquid():
    liquid_hall = {"hall_cooling": "liquid", "hall_max_kw_per_rack": None}
    # 12 B200 systems, 171.6 kW of air-cooled servers in a liquid hall
    air = _with_rack(HALL_B200, 96, rack_cooling="air", **liquid_hall)
    (row,) = pl.scenario_warnings(air)
    (note,) = [w for w in row if "densest air-cooled rack" in w]
    assert "b200-sxm: a 171.6 kW air-cooled rack in a liquid-cooled hall" in note
    assert note.endswith(
        "expected fewer systems per rack (fleet.gpus_per_rack = 32, or facility.rack_cooling = "
        "'liquid' in a liquid-cooled hall for a liquid-cooled variant of the server)"
    )
    assert note in project(air, monthly=False).warnings[0]
    # a liquid-cooled variant stated by the scenario is not an air-cooled rack
    stated = _with_rack(HALL_B200, 96, rack_cooling="liquid", **liquid_hall)
    assert not any("densest air-cooled rack" in w for w in pl.scenario_warnings(stated)[0])


# --- 4. A utility budget is named as one ------------------------------------------------------


def test_the_basis_line_says_a_utility_budget_is_at_the_meter(capsys):
    result = size(mw=10.0, basis="utility", hardware="gb300-nvl72")
    assert result["it_budget_kw"] == pytest.approx(10_000 / 1.1)
    assert result["racks"] == 61
    assert result["sizing_basis"].startswith(
        "power is the supply at the meter (--basis utility), power / PUE of it usable critical "
        "IT capacity for the racks, with every rack at its maximum draw at once"
    )
    assert "after the hall's N+1 or 2N redundancy" not in result["sizing_basis"]
    assert main(["size", "--mw", "10", "--basis", "utility", "--hardware", "gb300-nvl72"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"Basis: {result['sizing_basis']}"
    it = size(mw=10.0, hardware="gb300-nvl72")["sizing_basis"]
    assert it.startswith("power is usable critical IT capacity, after the hall's N+1 or 2N")


# --- 5. Spare 8-GPU systems of `econ size --gpus` ------------------------------------------------


def test_spare_systems_bought_to_fill_a_rack_are_said_and_the_option_named(capsys):
    result = size(gpus=8, hardware="h100-sxm")
    assert (result["racks"], result["gpus"], result["spare_gpus"]) == (1, 32, 24)
    assert result["capex_usd"] == 1_518_000  # 4 systems, and network and installation for 32
    (note,) = [w for w in result["warnings"] if "rounded up" in w]
    assert "rounded up to 1 rack, which holds 32 GPUs" in note
    assert (
        "the capex and the power count the 3 h100-sxm systems (24 GPUs) in those positions, "
        "which were not asked for; expected --systems-per-rack 1 to buy only the 1 system asked "
        "for (1 rack of 1)"
    ) in note
    one = size(gpus=8, hardware="h100-sxm", systems_per_rack=1)
    assert (one["racks"], one["spare_gpus"], one["capex_usd"]) == (1, 0, 379_500)
    assert not any("rounded up" in w for w in one["warnings"])
    # the most systems per rack, up to the catalog's four, that divide the systems asked for
    six = size(gpus=48, hardware="h100-sxm")  # 6 systems: 2 racks of 4 hold 2 spare
    assert "expected --systems-per-rack 3 to buy only the 6 systems asked for (2 racks of 3)" in (
        " ".join(six["warnings"])
    )
    assert size(gpus=48, hardware="h100-sxm", systems_per_rack=3)["spare_gpus"] == 0
    # a rack-scale system is bought by the rack: its rounding names no systems per rack
    nvl = " ".join(size(gpus=100, hardware="gb300-nvl72")["warnings"])
    assert "bought and drawing power as full racks" in nvl and "--systems-per-rack" not in nvl
    # spare positions within one system are not whole systems
    (within,) = [w for w in size(gpus=28, hardware="h100-sxm")["warnings"] if "rounded up" in w]
    assert within.endswith("(4 positions more than asked, bought and drawing power as full racks)")


# --- 6. A refusal suggests only what applies ----------------------------------------------------


def test_a_refusal_suggests_systems_per_rack_only_where_it_applies():
    with pytest.raises(HallLimitError) as gb200:
        size(mw=10.0, hardware="gb200-nvl72", hall_max_kw_per_rack=115.0)
    assert str(gb200.value).endswith("(command line: a higher --hall-max-kw-per-rack)")
    with pytest.raises(HallLimitError) as h100:
        size(mw=10.0, hardware="h100-sxm", hall_max_kw_per_rack=20.0)
    said = str(h100.value)
    assert said.endswith("(command line: a higher --hall-max-kw-per-rack, or --systems-per-rack 1)")
    assert size(mw=10.0, hardware="h100-sxm", hall_max_kw_per_rack=20.0, systems_per_rack=1)
    # no number of systems fits: only the limit
    with pytest.raises(HallLimitError) as b200:
        size(mw=10.0, hardware="b200-sxm", hall_max_kw_per_rack=10.0)
    assert str(b200.value).endswith("(command line: a higher --hall-max-kw-per-rack)")


# --- 7. The figures docs/power.md quotes are what econ prints --------------------------------


def test_the_b300_example_places_the_racks_the_page_says():
    page = _page()
    racks = size(mw=10.0, hardware="b300-sxm", systems_per_rack=12, hall_max_kw_per_rack=200.0)
    found = re.search(r"--hall-max-kw-per-rack 200` places (\d+) racks of 174 kW", page)
    assert found and int(found.group(1)) == racks["racks"] == 51
    assert "57 racks of 174 kW" not in page


def test_the_owned_hall_figures_of_the_page_are_the_projections():
    overrides = {"facility.mode": "owned", "facility.colo_usd_per_kw_month": 0.0}
    projection = project(load_scenario(HALL_GB300, overrides), monthly=False)
    npv = projection.summary.npv_usd.iloc[0]
    (note,) = [w for w in projection.warnings[0] if "book value at the horizon" in w]
    value, of_npv = re.search(
        r"horizon, ([\d,]+) USD .* as if sold at book value: ([\d,]+) USD of the NPV", note
    ).groups()
    page = _page()
    assert (
        f"counts {value} USD at month 60, 87.5 M of the hall and 2.27 M of its liquid retrofit, "
        f"{of_npv} USD of its {round(npv):,} NPV"
    ) in page
    short = project(
        load_scenario(HALL_GB300, {**overrides, "facility.life_years": 5}), monthly=False
    )
    said = re.search(r"gives −([\d.]+) M\)", page).group(1)
    assert -float(said) == round(short.summary.npv_usd.iloc[0] / 1e6, 1)
