"""Power: load-dependent draw, power boundaries, measured energy, price path, time-of-day factor,
energy per token, and the [power] scenario section."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from econ import power
from econ.scenario.power_models import Power, PowerBoundary, weighted_price_factor

HOURS_PER_MONTH = 8760 / 12
fractions = st.floats(0.0, 1.0, allow_nan=False)
positive = st.floats(0.01, 1e4, allow_nan=False)


def old_power_usd_per_month(gpus, kw, u, idle, pue, price, esc, months):
    """The foundation's formula, kept verbatim as the reference for backward compatibility."""
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731
    load = u + (1.0 - u) * col(idle)
    p = col(price) * np.power(1.0 + col(esc), np.maximum(months - 1, 0) / 12)
    return gpus * col(kw) * load * col(pue) * HOURS_PER_MONTH * p


# --- Reference values --------------------------------------------------------------------------


def test_power_bill_hand_computed():
    # One GPU at 1 kW, always serving, PUE 1.2, 0.10 USD/kWh: 1 * 1.2 * 730 * 0.1 = 87.6 USD/month.
    months = np.arange(3)
    gpus = np.array([[0.0, 1.0, 1.0]])
    u = np.array([[0.0, 1.0, 1.0]])
    bill = power.power_usd_per_month(gpus, [1.0], u, [1.0], [1.2], [0.1], [0.0], months)
    np.testing.assert_allclose(bill, [[0.0, 87.6, 87.6]], rtol=1e-12)


def test_seed_power_per_gpu_hour():
    # Seed case: 1.87 kW (SemiAnalysis all-in GB200), PUE 1.1, 0.0806 USD/kWh (EIA 2023):
    # 1.87 * 1.1 * 0.0806 = 0.1657942 USD per GPU-hour at full load.
    bill = power.power_usd_per_month(
        np.ones((1, 2)), [1.87], np.ones((1, 2)), [1.0], [1.1], [0.0806], [0.0], np.arange(2)
    )
    assert bill[0, 1] / HOURS_PER_MONTH == pytest.approx(1.87 * 1.1 * 0.0806, rel=1e-12)


def test_linear_power_model_fan_et_al():
    # Fan, Weber & Barroso (2007): P(u)/P_max = idle + (1 - idle) u; idle 0.5 at u = 0.7 -> 0.85.
    assert power.load_share(np.array([[0.7]]), [0.5])[0, 0] == pytest.approx(0.85)
    assert power.load_share(0.0, 0.3) == pytest.approx(0.3)
    assert power.load_share(1.0, 0.3) == pytest.approx(1.0)


def test_power_boundaries():
    codes = [power.POWER_BOUNDARIES.index(b) for b in power.POWER_BOUNDARIES]
    kw = power.it_kw_per_gpu([1.3, 1.0, 1.43], codes, [0.0, 0.3, 0.0], [1.1, 1.1, 1.1])
    # chip plus host unchanged; chip 1.0 kW + 30% host = 1.3 kW; 1.43 kW at the meter / 1.1 = 1.3 kW.
    np.testing.assert_allclose(kw, [1.3, 1.3, 1.3], rtol=1e-12)


def test_a_scenarios_power_section_converts_by_the_same_boundaries():
    """The scenario-level figure (catalog checks, hall limits) is the engine's, one row."""
    from econ.scenario.power_models import it_kw_per_gpu

    for definition, kw, expected in (
        ("chip_plus_host", 1.3, 1.3),
        ("chip_only", 1.0, 1.3),
        ("utility_meter", 1.43, 1.3),
    ):
        section = Power(
            kw_per_gpu=kw, kw_per_gpu_definition=definition, host_overhead_share=0.3, pue=1.1
        )
        assert it_kw_per_gpu(section) == pytest.approx(expected, rel=1e-12)
        assert type(it_kw_per_gpu(section)) is float


@pytest.mark.parametrize("section", ["power", "facility"])
def test_an_escalation_typed_in_percent_is_refused_saying_what_was_meant(section):
    from conftest import ROOT

    from econ.scenario import ScenarioError, load_scenario

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    path = f"{section}.escalation_annual"
    with pytest.raises(
        ScenarioError, match=r"3 is 300% a year, above 100% a year .*\(3% is 0.03\)"
    ):
        load_scenario(seed, {path: 3})
    doubling = load_scenario(seed, {path: 1})  # the bound itself is taken
    assert getattr(doubling, section).escalation_annual == 1


def test_measured_energy_replaces_nameplate():
    # 1,870 W serving 4,867.7 tok/s (seed GB200 figures) is 0.38417 J/token; back to 1.87 kW.
    joules = power.joules_per_token_at_load(1.87, 4867.7)
    assert joules == pytest.approx(1870 / 4867.7, rel=1e-12)
    kw, measured = power.serving_kw_per_gpu(
        nameplate_kw_per_gpu=np.array([1.5, 1.5]),
        measured_joules_per_token=np.array([joules, np.nan]),
        measured_tokens_per_s_per_gpu=np.array([4867.7, 4867.7]),
    )
    np.testing.assert_allclose(kw, [1.87, 1.5], rtol=1e-12)
    np.testing.assert_array_equal(measured, [True, False])


def test_measured_at_the_meter_is_divided_by_pue():
    meter = power.POWER_BOUNDARIES.index("utility_meter")
    kw, _ = power.serving_kw_per_gpu([1.0], [0.5], [4000.0], [meter], [0.0], [1.25])
    assert kw[0] == pytest.approx(0.5 * 4000 / 1000 / 1.25)


def test_price_path_escalates_annually():
    path = power.price_usd_per_kwh_path([0.1], [0.03], np.arange(26))
    assert path[0, 0] == path[0, 1] == pytest.approx(0.1)
    assert path[0, 13] == pytest.approx(0.103, rel=1e-12)
    assert path[0, 25] == pytest.approx(0.1 * 1.03**2, rel=1e-12)


def test_time_of_day_factor_hand_computed():
    # 12 cheap hours at 0.05 and 12 dear hours at 0.15 (mean 0.10); twice the load in dear hours:
    # (12*2*0.15 + 12*1*0.05) / 36 = 0.116667 -> factor 1.16667.
    price = [0.05] * 12 + [0.15] * 12
    load = [1.0] * 12 + [2.0] * 12
    assert power.time_of_day_factor(price, load) == pytest.approx(7 / 6, rel=1e-12)
    assert power.time_of_day_factor(price) == pytest.approx(1.0, rel=1e-12)
    assert weighted_price_factor(price, load) == pytest.approx(7 / 6, rel=1e-12)


def test_time_of_day_factor_scales_the_bill():
    args = (np.ones((1, 2)), [1.0], np.ones((1, 2)), [1.0], [1.0], [0.1], [0.0], np.arange(2))
    flat = power.power_usd_per_month(*args)
    shaped = power.power_usd_per_month(*args, time_of_day_factor=[1.2])
    assert shaped[0, 1] == pytest.approx(1.2 * flat[0, 1])


def test_energy_per_token_and_cost_per_mtok():
    # 1 kWh for 3.6 million tokens is 1 J/token; 0.36 J/token at 0.10 USD/kWh is 0.01 USD/Mtok.
    assert power.joules_per_token(1.0, 3.6e6) == pytest.approx(1.0)
    assert power.energy_cost_usd_per_mtok(0.36, 0.10) == pytest.approx(0.01)
    assert power.power_cost_usd_per_mtok(5.0, 1e6) == pytest.approx(5.0)
    assert np.isnan(power.joules_per_token(1.0, 0.0))
    assert np.isnan(power.power_cost_usd_per_mtok(1.0, 0.0))
    assert np.isnan(power.joules_per_token_at_load(1.0, 0.0))


def test_cost_per_mtok_two_ways_agree():
    # Monthly bill / tokens equals energy per token at the meter times the price.
    gpus, u = np.full((1, 2), 72.0), np.full((1, 2), 0.6)
    it_kw = power.it_power_kw(gpus, [1.87], u, [0.4])
    tokens = gpus * 4867.7 * u * HOURS_PER_MONTH * 3600
    bill = power.power_cost_usd_per_month(it_kw, [1.1], np.full((1, 2), 0.08))
    joules_meter = power.joules_per_token(power.energy_kwh_per_month(it_kw) * 1.1, tokens)
    np.testing.assert_allclose(
        power.power_cost_usd_per_mtok(bill, tokens),
        power.energy_cost_usd_per_mtok(joules_meter, 0.08),
        rtol=1e-12,
    )


# --- Backward compatibility and vectorization -----------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(1, 4),
    t=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_power_usd_per_month_matches_the_foundation(n, t, seed):
    rng = np.random.default_rng(seed)
    months = np.arange(t)
    gpus = rng.uniform(0, 100, (n, t))
    u = rng.uniform(0, 1, (n, t))
    per = [
        rng.uniform(lo, hi, n) for lo, hi in ((0.5, 3), (0, 1), (1, 2), (0.01, 0.3), (-0.1, 0.2))
    ]
    new = power.power_usd_per_month(gpus, per[0], u, per[1], per[2], per[3], per[4], months)
    old = old_power_usd_per_month(gpus, per[0], u, per[1], per[2], per[3], per[4], months)
    np.testing.assert_allclose(new, old, rtol=1e-13)
    # A batch is the stack of its rows: no scenario sees another's parameters.
    row = power.power_usd_per_month(
        gpus[:1], per[0][:1], u[:1], per[1][:1], per[2][:1], per[3][:1], per[4][:1], months
    )
    np.testing.assert_allclose(new[:1], row, rtol=1e-15)


# --- Invariants ---------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(u=fractions, u2=fractions, idle=fractions)
def test_load_share_between_idle_and_full_and_monotone(u, u2, idle):
    share = power.load_share(u, idle)
    assert min(idle, 1.0) - 1e-12 <= share <= 1.0 + 1e-12
    lo, hi = sorted((u, u2))
    assert power.load_share(lo, idle) <= power.load_share(hi, idle) + 1e-12


@settings(max_examples=50, deadline=None)
@given(
    price=st.lists(st.floats(0.01, 1.0), min_size=24, max_size=24),
    load=st.lists(st.floats(0.0, 10.0), min_size=24, max_size=24).filter(lambda x: sum(x) > 0),
    scale=positive,
)
def test_time_of_day_factor_bounds_and_scale_invariance(price, load, scale):
    f = power.time_of_day_factor(price, load)
    mean = np.mean(price)
    assert min(price) / mean - 1e-9 <= f <= max(price) / mean + 1e-9
    assert power.time_of_day_factor(np.array(price) * scale, load) == pytest.approx(f, rel=1e-9)
    assert power.time_of_day_factor(price, np.array(load) * scale) == pytest.approx(f, rel=1e-9)
    assert weighted_price_factor(price, load) == pytest.approx(f, rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(joules=st.floats(0.01, 100.0), rate=st.floats(1.0, 1e5))
def test_energy_per_token_round_trip(joules, rate):
    kw = power.kw_per_gpu_from_joules_per_token(joules, rate)
    assert power.joules_per_token_at_load(kw, rate) == pytest.approx(joules, rel=1e-12)
    # An hour at that power, over the tokens of that hour, is the same energy per token.
    kwh, tokens = kw * 1.0, rate * 3600.0
    assert power.joules_per_token(kwh, tokens) == pytest.approx(joules, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(pue=st.floats(1.0, 3.0), kw=positive)
def test_utility_power_is_it_times_pue(pue, kw):
    assert power.utility_power_kw(np.array([[kw]]), [pue])[0, 0] == pytest.approx(kw * pue)
    meter = power.POWER_BOUNDARIES.index("utility_meter")
    assert power.it_kw_per_gpu(kw * pue, meter, 0.0, pue) == pytest.approx(kw)


# --- The [power] scenario section -----------------------------------------------------------------


def test_literal_order_matches_the_domain_codes():
    assert typing.get_args(PowerBoundary) == power.POWER_BOUNDARIES


def test_foundation_fields_still_work():
    section = Power(
        kw_per_gpu=1.87,
        idle_power_share=1.0,
        pue=1.1,
        price_usd_per_kwh=0.0806,
        escalation_annual=0,
    )
    assert section.kw_per_gpu == 1.87 and section.time_of_day_factor == 1.0
    assert section.kw_per_gpu_definition == "chip_plus_host"


def test_hourly_shape_sets_the_factor():
    price = [0.05] * 12 + [0.15] * 12
    load = [1.0] * 12 + [2.0] * 12
    section = Power(hourly_price_shape=price, hourly_load_shape=load)
    assert section.time_of_day_factor == pytest.approx(7 / 6)
    assert Power(hourly_price_shape=price).time_of_day_factor == pytest.approx(1.0)
    # Giving the same factor explicitly is accepted; a different one is not.
    Power(hourly_price_shape=price, hourly_load_shape=load, time_of_day_factor=7 / 6)
    with pytest.raises(ValidationError, match="expected one or the other"):
        Power(hourly_price_shape=price, hourly_load_shape=load, time_of_day_factor=1.0)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"pue": 0.9}, "greater than or equal to 1"),
        ({"pue": 0.9}, "WP#49"),
        ({"pue": 0}, "PUE must be"),
        ({"price_usd_per_kwh": -0.02}, "negative price of -0.02"),
        ({"price_usd_per_kwh": 0}, "greater than 0"),
        # a price per MWh typed per kWh was projected (ERCOT's cap is 5,000 USD/MWh)
        ({"price_usd_per_kwh": 80}, "80 USD/kWh is above 5 USD/kWh, ERCOT's offer cap of 5,000"),
        ({"price_usd_per_kwh": 80}, "80 USD/MWh is 0.08 USD/kWh"),
        ({"price_usd_per_kwh": 5.01}, "16 TAC §25.505"),
        ({"hourly_price_shape": [0.1] * 23}, "expected 24 hourly values"),
        ({"hourly_price_shape": [0.1] * 23 + [-0.1]}, "0 or more"),
        ({"hourly_price_shape": [0.0] * 24}, "not all 0"),
        ({"hourly_load_shape": [1.0] * 24}, "without hourly_price_shape"),
        ({"measured_tokens_per_s_per_gpu": 1000.0}, "without measured_joules_per_token"),
        ({"measured_joules_per_token": -1.0}, "greater than 0"),
        ({"kw_per_gpu_definition": "wall"}, "'chip_plus_host', 'chip_only' or 'utility_meter'"),
        ({"time_of_day_factor": 0.0}, "greater than 0"),
    ],
)
def test_bad_power_input(fields, expected):
    with pytest.raises(ValidationError) as info:
        Power(**fields)
    assert expected in str(info.value)
