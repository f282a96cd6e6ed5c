"""Implausible inputs (econ.plausibility): unit slips the scenario models take, warned of with the
reading that would fit, each band held to the data econ ships (models/)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from econ import load_scenario, project
from econ import plausibility as pl
from econ.batch import ScenarioBatch
from econ.catalog import ready_made_scenarios
from econ.scenario import apply_overrides, scenario_to_dict, validate_dict
from econ.scenario.power_models import CBRE_COLO_USD_PER_KW_MONTH
from tests.conftest import ROOT

LLAMA = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
REFERENCE = ROOT / "models" / "reference_figures.csv"


def _warnings(overrides: dict, path=LLAMA) -> list[str]:
    return project(load_scenario(path, overrides), monthly=False).warnings[0]


def _about(prefix: str, warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith(prefix)]


def _reference_row(item: str) -> dict[str, str]:
    with open(REFERENCE, newline="", encoding="utf-8") as fh:
        (row,) = [row for row in csv.DictReader(fh) if row["item"] == item]
    return row


def _reference(item: str) -> float:
    return float(_reference_row(item)["value"])


def _reference_text(item: str) -> str:
    return _reference_row(item)["value"]


def _reference_unit(item: str) -> str:
    return _reference_row(item)["unit"]


def test_no_ready_made_scenario_is_implausible():
    for name, path in ready_made_scenarios().items():
        scenario = load_scenario(path)
        rows, sites = pl.input_warnings(ScenarioBatch.from_scenarios(scenario))
        assert not any(rows) and not any(sites), name
        assert not any(pl.rack_size_warnings(scenario)), name


# --- token price ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("price", "reading", "meant"),
    [
        (600.0, "a price per billion tokens", 600.0 / 1000),
        (6e-7, "a price per token", 6e-7 * 1e6),
        (0.0006, "a price per thousand tokens", 0.0006 * 1000),
    ],
)
def test_a_token_price_in_another_unit_is_warned_of_with_its_reading(price, reading, meant):
    (warning,) = _about(
        "market.price_usd_per_mtok", _warnings({"market.price_usd_per_mtok": price})
    )
    assert f"was it {reading} ({meant:g} USD per million)?" in warning


def test_the_token_price_band_is_drawn_from_the_prices_econ_ships():
    cost = _reference("DeepSeek-R1 FP8 on H200 cost")  # 0.53 USD per million tokens
    prices = [load_scenario(p).market.price_usd_per_mtok for p in ready_made_scenarios().values()]
    # the docstrings' "a fourteenth" and "189 times" (and "307 times" the highest ready-made)
    assert pl.MIN_PLAUSIBLE_USD_PER_MTOK * 14 <= min(prices) < pl.MIN_PLAUSIBLE_USD_PER_MTOK * 15
    assert round(pl.MAX_PLAUSIBLE_USD_PER_MTOK / cost) == 189
    assert round(pl.MAX_PLAUSIBLE_USD_PER_MTOK / max(prices)) == 307
    gpt4o = "GPT-4o at USD 2.50 input, 1.25 cached input and 10.00"
    assert gpt4o in " ".join((ROOT / "docs" / "market.md").read_text().split())
    # tokens given away are a choice, not a slip
    assert not _about("market.price_usd_per_mtok", _warnings({"market.price_usd_per_mtok": 0}))


def test_each_row_of_a_sweep_is_checked_on_its_own_price_and_throughput():
    batch = ScenarioBatch.repeat(
        load_scenario(LLAMA),
        3,
        {
            "market.price_usd_per_mtok": [0.3, 600.0, 0.3],
            "throughput.tokens_per_s_per_gpu": [4000.0, 4000.0, 2_700_700.0],
        },
    )
    warnings = project(batch, monthly=False).warnings
    price = [bool(_about("market.price_usd_per_mtok", w)) for w in warnings]
    tokens = [bool(_about("throughput.tokens_per_s_per_gpu", w)) for w in warnings]
    assert price == [False, True, False] and tokens == [False, False, True]


# --- hardware price -------------------------------------------------------------------------------

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"  # a 3.1 million USD rack


@pytest.mark.parametrize(
    ("overrides", "said", "reading"),
    [
        (  # three zeros too many: no warning before, an NPV of -1.1e10 USD
            {"capex.system_price_usd": 3.1e9},
            "capex.system_price_usd = 3,100,000,000 USD for a system of 72 GPUs is 43,055,556 USD "
            "per GPU, above 700,000",
            "a price with three zeros too many (43,055.6 USD per GPU)",
        ),
        (  # typed in thousands of USD
            {"capex.system_price_usd": 3100},
            "is 43.0556 USD per GPU, below 1,000",
            "a price in thousands of USD (43,055.6 USD per GPU)",
        ),
        (  # the price per GPU the seed's source gives, typed as the rack's
            {"capex.system_price_usd": 43056},
            "is 598 USD per GPU, below 1,000",
            "one GPU's price typed as the system's (43,056 USD per GPU)",
        ),
        (  # the rack's price typed per GPU
            {"capex.system_price_usd": None, "capex.gpu_price_usd": 3.1e6},
            "capex.gpu_price_usd = 3,100,000 USD per GPU is above 700,000",
            "the price of a 72-GPU rack typed per GPU (43,055.6 USD per GPU)",
        ),
    ],
)
def test_a_hardware_price_in_another_unit_is_warned_of_with_its_reading(overrides, said, reading):
    (warning,) = _about("capex.", _warnings(overrides, SEED))
    assert said in warning
    assert "; expected the hardware's price in USD: was it " in warning
    assert reading in warning.rsplit(": was it ", 1)[1]


def test_the_hardware_band_is_drawn_from_the_prices_econ_ships():
    h100 = 25_000  # USD per GPU, the low end of the reference's 25000-30000
    assert _reference_text("H100 GPU price").startswith(f"{h100}-")
    assert "some quote 5 million" in _reference_unit("GB200 NVL72 rack")
    assert pl.MIN_PLAUSIBLE_HARDWARE_USD_PER_GPU * 25 == h100  # "a twenty-fifth"
    assert round(pl.MAX_PLAUSIBLE_HARDWARE_USD_PER_GPU / (5e6 / 72)) == 10  # "ten times"
    low, high = pl.LIKELY_HARDWARE_USD_PER_GPU
    assert low * 5 == h100 and round(high / (5e6 / 72), 2) == 1.44
    # every price a ready-made scenario gives lies inside the band
    for path in ready_made_scenarios().values():
        assert not _about("capex.", _warnings({}, path)), path


def test_each_row_and_vintage_is_checked_on_its_own_hardware_price():
    batch = ScenarioBatch.repeat(
        load_scenario(SEED), 3, {"capex.system_price_usd": [3.1e6, 3.1e9, 999.0 * 72]}
    )
    warnings = project(batch, monthly=False).warnings
    assert [len(_about("capex.system_price_usd", w)) for w in warnings] == [0, 1, 1]
    data = scenario_to_dict(load_scenario(REFRESH))
    data["vintages"][0]["capex"] = {"system_price_usd": 3e9}
    rows, _ = pl.input_warnings(ScenarioBatch.from_scenarios(validate_dict(data)))
    assert [len(_about("capex.", r)) for r in rows] == [0, 1]


# --- GPU-hour prices ------------------------------------------------------------------------------


def test_a_monthly_rent_typed_as_hourly_is_warned_of():
    overrides = {"market.contract_share": 1, "market.contract_usd_per_gpu_hour": 1460}
    (warning,) = _about("market.contract_usd_per_gpu_hour", _warnings(overrides))
    hourly = 1460 / (8760 / 12)  # 730 hours in an average month
    assert f"was it a price per month ({hourly:g} USD/GPU-hour at 730 hours a month)" in warning
    market = {"market.rental_usd_per_gpu_hour": 2.9, "market.rental_floor_usd_per_gpu_hour": 0.05}
    (low,) = _about("market.rental_floor_usd_per_gpu_hour", _warnings(market))
    assert f"was it a price per GPU-minute ({0.05 * 60:g} USD/GPU-hour)?" in low
    assert not _about("market.rental_usd_per_gpu_hour", _warnings(market))


def test_the_rental_band_is_drawn_from_the_rental_index_econ_ships():
    from econ.rental_index import MAX_PLAUSIBLE_USD_PER_GPU_HOUR, load_catalog

    prices = [p.usd_per_gpu_hour for p in load_catalog()]
    assert MAX_PLAUSIBLE_USD_PER_GPU_HOUR is pl.MAX_PLAUSIBLE_USD_PER_GPU_HOUR  # one bound
    assert max(prices) == 13.52 and pl.MAX_PLAUSIBLE_USD_PER_GPU_HOUR > 7 * max(prices)
    assert min(prices) == 1.70
    assert round(min(prices) / pl.MIN_PLAUSIBLE_USD_PER_GPU_HOUR) == 17


# --- throughput -----------------------------------------------------------------------------------


def test_a_fixed_throughput_far_above_the_catalogs_best_is_warned_of():
    overrides = {"fleet.hardware": "h100-sxm", "throughput.tokens_per_s_per_gpu": 2_700_700}
    (warning,) = _about("throughput.tokens_per_s_per_gpu", _warnings(overrides))
    catalog = _catalog_best()
    assert f"{2_700_700 / catalog['h100-sxm']:,.1f} times" in warning
    assert f"on h100-sxm ({catalog['h100-sxm']:,.0f}:" in warning
    just_below = {**overrides, "throughput.tokens_per_s_per_gpu": 3 * catalog["h100-sxm"] * 0.999}
    assert not _about("throughput.tokens_per_s_per_gpu", _warnings(just_below))
    own = {**overrides, "fleet.hardware": "my-gpu"}
    (warning,) = _about("throughput.tokens_per_s_per_gpu", _warnings(own))
    assert f"on any hardware ({catalog['']:,.0f}:" in warning


def _catalog_best() -> dict[str, float]:
    from econ.benchmarks import load_catalog

    rows = load_catalog().dropna(subset=["tokens_per_s_per_gpu"])
    best = rows.groupby("hardware_key")["tokens_per_s_per_gpu"].max().to_dict()
    best[""] = float(rows["tokens_per_s_per_gpu"].max())  # any hardware
    return best


def test_the_catalogs_best_read_without_pandas_is_the_catalogs():
    found = {key: value for key, (value, _) in pl.best_measured().items()}
    expected = _catalog_best()
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, rel=1e-12), key
    lowest = min(v for k, v in found.items() if k)
    assert pl.LOWEST_BEST_TOKENS_PER_S_PER_GPU <= lowest


def test_a_measured_throughput_is_not_held_to_the_catalog():
    measured = validate_dict(
        apply_overrides(
            {"name": "s", "horizon_months": 24, "capex": {"gpu_price_usd": 40000.0}},
            {
                "fleet.hardware": "gb200-nvl72",
                "throughput.measured": {"catalog_id": "v6.0-6f6e7f09"},
            },
        )
    )
    fixed = load_scenario(LLAMA)
    codes = ScenarioBatch.from_scenarios([measured, fixed]).extras["throughput.catalog_reference"]
    assert codes[0] == -1 and pl.reference_keys()[codes[1]] == "h200-sxm"


# --- SLO ------------------------------------------------------------------------------------------


def test_an_slo_in_milliseconds_is_warned_of():
    limits = pd.read_csv(ROOT / "models" / "benchmarks" / "mlperf_latency_constraints.csv")
    assert pl.MAX_PLAUSIBLE_TPOT_P99_S == 5 * limits["tpot_p99_limit_ms"].max() / 1000
    assert pl.MAX_PLAUSIBLE_TTFT_P99_S == 10 * limits["ttft_p99_limit_ms"].max() / 1000
    warnings = _warnings({"throughput.slo.tpot_p99_s": 80, "throughput.slo.ttft_p99_s": 2000})
    (tpot,) = _about("throughput.slo.tpot_p99_s", warnings)
    (ttft,) = _about("throughput.slo.ttft_p99_s", warnings)
    assert tpot.endswith("was it 80 ms (0.08 s)?") and ttft.endswith("was it 2,000 ms (2 s)?")
    fine = _warnings({"throughput.slo.tpot_p99_s": 0.2, "throughput.slo.ttft_p99_s": 6})
    assert not _about("throughput.slo", fine)


# --- facility -------------------------------------------------------------------------------------


def test_a_colocation_price_per_mw_is_warned_of_and_cbres_figures_are_inside():
    assert _reference("Colocation price North America 250-500 kW") == CBRE_COLO_USD_PER_KW_MONTH
    for item in ("Colocation price North America", "Colocation price global average"):
        assert _reference(item) / CBRE_COLO_USD_PER_KW_MONTH < 1.2
    (warning,) = _about(
        "facility.colo_usd_per_kw_month", _warnings({"facility.colo_usd_per_kw_month": 150000})
    )
    assert "was it a price per MW-month (150 USD/kW-month)?" in warning
    yearly = _warnings({"facility.colo_usd_per_kw_month": 184.06 * 12})
    (warning,) = _about("facility.colo_usd_per_kw_month", yearly)
    assert "was it a price per kW-year (184.06 USD/kW-month)?" in warning


def test_a_colocation_hall_at_no_price_is_warned_of():
    data = scenario_to_dict(load_scenario(LLAMA))
    data["facility"] = {"mode": "colocation"}
    warnings = project(validate_dict(data), monthly=False).warnings[0]
    (warning,) = [w for w in warnings if w.startswith("facility.mode is 'colocation'")]
    assert "facility.colo_usd_per_kw_month is 0" in warning and "CBRE's 184.06" in warning
    owned = {"mode": "owned", "maintenance_share_of_capex_annual": 0.01}
    data["facility"] = owned
    assert not [
        w
        for w in project(validate_dict(data), monthly=False).warnings[0]
        if w.startswith("facility.mode is 'colocation'")
    ]


def test_a_contract_in_watts_is_warned_of():
    scenario = load_scenario(LLAMA)
    load_kw = scenario.fleet.gpu_count * scenario.power.kw_per_gpu  # chip plus host share
    (warning,) = _about("facility.contracted_kw", _warnings({"facility.contracted_kw": 701440}))
    assert f"{701440 / load_kw:,.1f} times the full-load IT power of the fleet" in warning
    assert warning.endswith("was it 701,440 W (701.44 kW)?")
    assert not _about("facility.contracted_kw", _warnings({"facility.contracted_kw": 9 * load_kw}))


# --- GPUs per rack --------------------------------------------------------------------------------


def test_a_rack_size_left_at_its_default_is_warned_of_with_the_catalogs():
    from econ.racks import load_racks

    catalog = load_racks().get("h200-sxm").gpus_per_rack
    data = scenario_to_dict(load_scenario(LLAMA))
    del data["fleet"]["gpus_per_rack"]
    data["fleet"].pop("gpu_count")
    data["fleet"]["racks"] = 4
    (warning,) = [
        w
        for w in project(validate_dict(data), monthly=False).warnings[0]
        if w.startswith("fleet.gpus_per_rack")
    ]
    assert f"h200-sxm racks of {catalog} GPUs" in warning
    assert f"fleet.racks = 4 buys {4 * 72} GPUs at 72 a rack, {4 * catalog} in the catalog's" in (
        warning
    )
    data["fleet"]["gpu_count"] = data["fleet"].pop("racks") * 72
    scenario = validate_dict(data)
    assert any("fleet.gpus_per_rack" in w for w in project(scenario, monthly=False).warnings[0])
    swept = ScenarioBatch.repeat(scenario, 2, {"fleet.gpus_per_rack": [16, 32]})
    assert not any("fleet.gpus_per_rack" in w for row in swept.row_warnings for w in row)


HALL_B200 = ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml"
HALL_GB300 = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"


def _with_rack(path, gpus_per_rack: int, **facility):
    data = scenario_to_dict(load_scenario(path))
    data["fleet"].pop("racks", None)
    data["fleet"]["gpus_per_rack"] = gpus_per_rack
    data["fleet"]["gpu_count"] = gpus_per_rack * 10
    data["facility"].update(facility)
    return validate_dict(data)


def test_a_rack_econ_size_bounds_or_warns_of_is_warned_of_in_project_and_validate():
    # An infrastructure review: 128 B200 per air-cooled rack (16 systems, 228.8 kW) and a GB300
    # NVL72 split or doubled were projected without a word, while `econ size` refuses more than
    # 12 systems per rack and warns above the 58 kW densest air-cooled rack.
    from econ.racks import MAX_SYSTEMS_PER_RACK, load_racks, size

    catalog = load_racks()
    b200 = catalog.get("b200-sxm")
    densest = catalog.halls["air"]["max_kw_per_rack"]
    assert 128 // b200.gpus_per_system > MAX_SYSTEMS_PER_RACK
    assert 16 * b200.kw_per_system > densest  # 228.8 kW
    scenario = _with_rack(HALL_B200, 128, hall_max_kw_per_rack=None)
    (row,) = pl.scenario_warnings(scenario)
    ours = [w for w in row if w.startswith("fleet.gpus_per_rack = 128")]
    assert len(ours) == 2
    assert "16 b200-sxm systems of 8 GPUs: 16 systems take at least 64U" in ours[0]
    assert "expected at most 12" in ours[0]
    assert "a 228.8 kW rack in an air-cooled hall, above the 58 kW" in ours[1]
    # 4 x 14.3 = 57.2 kW is within 58
    assert ours[1].endswith(
        "expected fewer systems per rack (fleet.gpus_per_rack = 32, or facility.rack_cooling = "
        "'liquid' in a liquid-cooled hall for a liquid-cooled variant of the server)"
    )
    assert set(ours) <= set(project(scenario, monthly=False).warnings[0])
    # the same words as `econ size` (one source): its refusal of 16 systems, its air warning
    with pytest.raises(Exception, match="16 systems take at least 64U") as refused:
        size(mw=10.0, hardware="b200-sxm", systems_per_rack=16)
    assert str(refused.value).split(": ", 1)[1] in ours[0]
    sized = size(mw=10.0, hardware="b200-sxm", systems_per_rack=12, hall_max_kw_per_rack=200.0)
    said = next(w for w in sized["warnings"] if "densest air-cooled rack" in w)
    same = "kW rack in an air-cooled hall, above the 58 kW of the densest air-cooled rack"
    assert same in said and same in ours[1]
    # a liquid hall takes the dense rack; 32 GPUs (4 systems, 57.2 kW) is within both
    liquid = _with_rack(
        HALL_B200, 128, hall_cooling="liquid", rack_cooling="liquid", hall_max_kw_per_rack=None
    )
    assert [w for w in pl.scenario_warnings(liquid)[0] if "fleet.gpus_per_rack" in w] == [ours[0]]
    assert not any(
        "fleet.gpus_per_rack" in w
        for w in pl.scenario_warnings(_with_rack(HALL_B200, 32, hall_max_kw_per_rack=None))[0]
    )
    # part of a system
    (part,) = [
        w
        for w in pl.scenario_warnings(_with_rack(HALL_B200, 12, hall_max_kw_per_rack=None))[0]
        if "= 12" in w
    ]
    assert "is not a whole number of b200-sxm systems (8 GPUs each" in part
    # a rack-scale system split or doubled
    for per_rack in (144, 4):
        (w,) = [
            w
            for w in pl.scenario_warnings(_with_rack(HALL_GB300, per_rack))[0]
            if w.startswith("fleet.gpus_per_rack")
        ]
        assert f"= {per_rack}, but gb300-nvl72 is a rack-scale system of 72 GPUs per rack" in w
        assert w.endswith("expected fleet.gpus_per_rack = 72")
    # a sweep that varies the rack size gives each row its own and drops the base's warnings
    swept = ScenarioBatch.repeat(scenario, 2, {"fleet.gpus_per_rack": [16, 32]})
    assert not any("fleet.gpus_per_rack = 128" in w for row in swept.row_warnings for w in row)


def test_a_vintage_on_other_hardware_taking_the_fleets_rack_size_is_warned_of():
    data = scenario_to_dict(load_scenario(REFRESH))
    del data["vintages"][0]["fleet"]["gpus_per_rack"]
    found = pl.rack_size_warnings(validate_dict(data))
    assert found[0] is None
    assert "32 GPUs per rack from the scenario's fleet (h200-sxm)" in found[1]
    assert "gb300-nvl72 racks of 72 GPUs" in found[1]


def test_docs_quote_the_warnings():
    doc = " ".join((ROOT / "docs" / "inputs.md").read_text().split())
    for overrides, prefix in (
        ({"market.price_usd_per_mtok": 600}, "market.price_usd_per_mtok"),
        ({"facility.colo_usd_per_kw_month": 150000}, "facility.colo_usd_per_kw_month"),
        ({"facility.contracted_kw": 701440}, "facility.contracted_kw"),
        ({"throughput.slo.tpot_p99_s": 80}, "throughput.slo.tpot_p99_s"),
        ({"capex.system_price_usd": 3.1e8}, "capex.system_price_usd"),
    ):
        (warning,) = _about(prefix, _warnings(overrides))
        assert warning in doc, prefix


def test_a_scenarios_warnings_row_by_row_are_the_projections():
    data = scenario_to_dict(load_scenario(REFRESH))
    data["market"]["price_usd_per_mtok"] = 600.0
    data["facility"]["contracted_kw"] = 1e7
    del data["vintages"][0]["fleet"]["gpus_per_rack"]
    scenario = validate_dict(data)
    base, gb300 = pl.scenario_warnings(scenario)
    assert [w.split(" =")[0] for w in base] == [
        "facility.contracted_kw",
        "market.price_usd_per_mtok",
    ]
    assert [w.split(" ")[0] for w in gb300] == ["market.price_usd_per_mtok", "fleet.gpus_per_rack"]
    projected = project(scenario, monthly=False).warnings[0]
    for w in base:
        assert w in projected or f"[base] {w}" in projected
    for w in gb300:
        assert f"[gb300] {w}" in projected


def test_validate_warns_of_the_slips_the_projection_warns_of(tmp_path, capsys):
    # econ validate listed the catalog's, borrowed figures' and unused inputs' warnings only
    from econ.cli import main
    from econ.scenario import save_scenario

    data = scenario_to_dict(load_scenario(REFRESH))
    data["market"]["price_usd_per_mtok"] = 600.0
    del data["vintages"][0]["fleet"]["gpus_per_rack"]
    path = save_scenario(validate_dict(data), tmp_path / "refresh.toml")
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    name = data["name"]
    assert f"warning [{name}/base]: market.price_usd_per_mtok = 600 USD per million" in err
    assert f"warning [{name}/gb300]: market.price_usd_per_mtok = 600 USD per million" in err
    assert f"warning [{name}/gb300]: fleet.gpus_per_rack is not given" in err
