"""Density metrics: hand-computed figures, a cited rack figure, agreement with the engine, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import density, power
from econ.engine import project
from econ.scenario import validate_dict

SECONDS_PER_MONTH = 8760 / 12 * 3600


def one_rack(**over):
    """One rack of 72 GPUs at 2.0 kW, serving half the hours at 1,000 tok/s, for 12 months.

    Hand-computed: 36,000 tok/s on average; IT draw 144 kW x (0.5 + 0.5 x 0.5) = 108 kW;
    PUE 1.25; 0.10 USD/kWh; 2 USD/Mtok.
    """
    p = {
        "gpus": 72.0,
        "kw": 2.0,
        "u": 0.5,
        "idle": 0.5,
        "tps": 1000.0,
        "pue": 1.25,
        "price": 0.10,
        "usd_per_mtok": 2.0,
        "months": 12,
        "m2": 2.5,
        "per_rack": 72,
    }
    p.update(over)
    months = np.arange(p["months"] + 1)
    service = (months >= 1)[None, :]
    gpus = p["gpus"] * service
    u = p["u"] * service
    tokens = gpus * p["tps"] * u * SECONDS_PER_MONTH
    it_kw = power.it_power_kw(gpus, [p["kw"]], u, [p["idle"]])
    bill = power.power_usd_per_month(
        gpus, [p["kw"]], u, [p["idle"]], [p["pue"]], [p["price"]], [0.0], months
    )
    return density.density_metrics(
        tokens=tokens,
        revenue_usd=tokens * p["usd_per_mtok"] / 1e6,
        power_usd=bill,
        it_energy_kwh=power.energy_kwh_per_month(it_kw),
        it_kw_in_service=gpus * p["kw"],
        racks_in_service=density.racks_in_service(gpus, [p["per_rack"]]),
        m2_per_rack=[p["m2"]],
        pue=[p["pue"]],
        rated_tokens_per_s=[p["gpus"] * p["tps"]],
        installed_it_kw=[p["gpus"] * p["kw"]],
    )


def test_hand_computed_density():
    d = {k: float(v[0]) for k, v in one_rack().items()}
    assert d["mw_years_it"] == pytest.approx(0.144) and d["mw_years_utility"] == pytest.approx(0.18)
    assert d["rack_years"] == 1 and d["m2_years"] == pytest.approx(2.5)
    assert d["tokens_per_s_per_mw"] == pytest.approx(500_000.0)  # 1,000 x 1,000 / 2.0
    assert d["tokens_per_s_per_mw_it"] == pytest.approx(250_000.0)  # 36,000 / 0.144
    assert d["tokens_per_s_per_mw_utility"] == pytest.approx(200_000.0)  # 36,000 / 0.18
    revenue_year = 36_000 * SECONDS_PER_MONTH * 12 * 2.0 / 1e6  # 2,270,592 USD
    assert revenue_year == pytest.approx(2_270_592.0)
    assert d["revenue_usd_per_mw_year"] == pytest.approx(revenue_year / 0.144)  # 15,768,000
    assert d["revenue_usd_per_mw_year"] == pytest.approx(15_768_000.0)
    assert d["revenue_usd_per_mw_year_utility"] == pytest.approx(12_614_400.0)
    assert d["revenue_usd_per_rack_year"] == pytest.approx(2_270_592.0)
    assert d["revenue_usd_per_m2_year"] == pytest.approx(908_236.8)
    assert d["joules_per_token_it"] == pytest.approx(3.0)  # 108,000 J/s / 36,000 tok/s
    assert d["joules_per_token_utility"] == pytest.approx(3.75)
    assert d["power_cost_usd_per_mtok"] == pytest.approx(3.75 / 3.6 * 0.10)  # 0.1041667


def test_gb300_rack_density_from_coreweave_figures():
    # CoreWeave (2026-09): GB300 NVL72 GPT-OSS-120B server 1,160,000 tok/s per rack; rack power
    # 132 kW (Supermicro): 1.16e6 / 0.132 MW = 8,787,879 tok/s per MW of IT at full load.
    rated = density.rated_tokens_per_s_per_mw(1.16e6 / 72, 132.0 / 72)
    assert rated == pytest.approx(1.16e6 / 0.132, rel=1e-12)
    assert rated == pytest.approx(8_787_878.79, rel=1e-9)
    # And its energy per token at full load: 132,000 W / 1,160,000 tok/s = 0.11379 J/token.
    assert power.joules_per_token_at_load(132.0, 1.16e6) == pytest.approx(0.113793, rel=1e-5)


def test_racks_in_service_round_up():
    np.testing.assert_array_equal(density.racks_in_service([144, 73, 64, 1], 72), [2, 2, 1, 1])
    np.testing.assert_array_equal(
        density.racks_in_service(np.array([[0.0, 48.0, 144.0]]), [72]), [[0, 1, 2]]
    )


def test_ramp_counts_only_the_capacity_in_service():
    # Half the GPUs in month 1, all in month 2: 1.5 GPU-months of capacity, not 2.
    tokens = np.array([[0.0, 1.0, 2.0]]) * 1e9
    d = density.density_metrics(
        tokens=tokens,
        revenue_usd=tokens / 1e6,
        power_usd=np.zeros((1, 3)),
        it_energy_kwh=np.zeros((1, 3)),
        it_kw_in_service=np.array([[0.0, 500.0, 1000.0]]),
        racks_in_service=np.array([[0.0, 1.0, 2.0]]),
        m2_per_rack=[2.0],
        pue=[1.0],
    )
    assert d["mw_years_it"][0] == pytest.approx(1.5 / 12)
    assert d["revenue_usd_per_mw_year"][0] == pytest.approx(3000.0 / (1.5 / 12))
    assert d["revenue_usd_per_rack_year"][0] == pytest.approx(3000.0 / (3 / 12))
    assert d["revenue_usd_per_m2_year"][0] == pytest.approx(3000.0 / (6 / 12))
    assert np.isnan(d["tokens_per_s_per_mw"][0])  # rated figures not given


def test_undefined_metrics_are_nan():
    d = one_rack(u=0.0, m2=np.nan)
    for name in (
        "joules_per_token_it",
        "joules_per_token_utility",
        "power_cost_usd_per_mtok",
        "revenue_usd_per_m2_year",
    ):
        assert np.isnan(d[name][0]), name
    assert d["revenue_usd_per_mw_year"][0] == 0.0  # defined: nothing earned per MW


def test_every_named_metric_is_returned():
    assert tuple(one_rack()) == density.DENSITY_METRICS


def test_agrees_with_the_engine():
    scenario = validate_dict(
        {
            "name": "d",
            "horizon_months": 24,
            "fleet": {"gpu_count": 144, "gpus_per_rack": 72, "deployment_ramp_months": 3},
            "throughput": {"tokens_per_s_per_gpu": 2000.0},
            "utilization": {"share": 0.6, "ramp_months": 2},
            "capex": {"gpu_price_usd": 40000.0},
            "power": {
                "kw_per_gpu": 1.8,
                "idle_power_share": 0.4,
                "pue": 1.2,
                "price_usd_per_kwh": 0.09,
            },
            "market": {"price_usd_per_mtok": 0.5},
        }
    )
    result = project(scenario)
    lines = result.lines
    gpus, tokens = lines["gpus_in_service"], lines["tokens"]
    utilization = np.where(
        gpus > 0, tokens / np.maximum(gpus, 1e-300) / 2000 / SECONDS_PER_MONTH, 0
    )
    it_kw = power.it_power_kw(gpus, [1.8], utilization, [0.4])
    d = density.density_metrics(
        tokens=tokens,
        revenue_usd=lines["revenue_usd"],
        power_usd=lines["power_usd"],
        it_energy_kwh=power.energy_kwh_per_month(it_kw),
        it_kw_in_service=gpus * 1.8,
        racks_in_service=density.racks_in_service(gpus, [72]),
        m2_per_rack=[2.5],
        pue=[1.2],
        rated_tokens_per_s=[144 * 2000.0],
        installed_it_kw=[144 * 1.8],
    )
    for name in ("revenue_usd_per_mw_year", "tokens_per_s_per_mw"):
        assert d[name][0] == pytest.approx(result.metrics[name][0], rel=1e-12)
    # The engine's power bill divided by the energy at the meter is the price: energy is consistent.
    kwh_meter = power.energy_kwh_per_month(it_kw).sum() * 1.2
    assert lines["power_usd"].sum() / kwh_meter == pytest.approx(0.09, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    gpus=st.integers(1, 1000),
    kw=st.floats(0.5, 3.0),
    u=st.floats(0.05, 1.0),
    idle=st.floats(0.0, 1.0),
    pue=st.floats(1.0, 2.0),
    price=st.floats(0.01, 0.5),
    months=st.integers(1, 48),
)
def test_density_invariants(gpus, kw, u, idle, pue, price, months):
    d = one_rack(gpus=float(gpus), kw=kw, u=u, idle=idle, pue=pue, price=price, months=months)
    d = {k: float(v[0]) for k, v in d.items()}
    assert d["joules_per_token_utility"] == pytest.approx(pue * d["joules_per_token_it"])
    assert d["tokens_per_s_per_mw_it"] == pytest.approx(pue * d["tokens_per_s_per_mw_utility"])
    assert d["revenue_usd_per_mw_year"] == pytest.approx(pue * d["revenue_usd_per_mw_year_utility"])
    # Flat price: cost per Mtok is energy per token at the meter times the price.
    assert d["power_cost_usd_per_mtok"] == pytest.approx(
        float(power.energy_cost_usd_per_mtok(d["joules_per_token_utility"], price)), rel=1e-9
    )
    # Delivered density never beats the nameplate at full load.
    assert d["tokens_per_s_per_mw_it"] <= d["tokens_per_s_per_mw"] * (1 + 1e-12)
    # Energy per token is at least the full-load figure (idle hours only add energy).
    assert d["joules_per_token_it"] >= kw * 1000 / 1000.0 * (1 - 1e-12)
    # Per-MW revenue does not depend on fleet size.
    twice = one_rack(gpus=2.0 * gpus, kw=kw, u=u, idle=idle, pue=pue, price=price, months=months)
    assert float(twice["revenue_usd_per_mw_year"][0]) == pytest.approx(d["revenue_usd_per_mw_year"])
