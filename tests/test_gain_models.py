"""Scenario sections for gain trajectories and markets: today's fields, new fields, bad input."""

from __future__ import annotations

import datetime as dt
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from econ.scenario.gain_models import (
    STEP_PADDING_MONTH,
    Throughput,
    compile_throughput,
    months_after,
)
from econ.scenario.market_models import Market, Utilization, compile_market
from econ.scenario.models import Market as CurrentMarket
from econ.scenario.models import Throughput as CurrentThroughput
from tests.conftest import ROOT, SCENARIOS

START = dt.date(2026, 4, 1)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_todays_sections_validate_unchanged(path):
    data = tomllib.loads(path.read_text())
    for section, new, current in (
        ("throughput", Throughput, CurrentThroughput),
        ("market", Market, CurrentMarket),
    ):
        raw = data.get(section, {})
        ours, theirs = new.model_validate(raw), current.model_validate(raw)
        for name in type(theirs).model_fields:
            mine, today = getattr(ours, name), getattr(theirs, name)
            if name == "steps":
                mine = [(s.month, s.gain, s.label) for s in mine]
                today = [(s.month, s.gain, s.label) for s in today]
            assert mine == today, name


def test_defaults_mean_no_gain_and_flat_prices():
    t, m, u = Throughput(), Market(), Utilization()
    assert t.trajectory == "compound" and t.gain_rate_annual == 0 and t.ceiling_ratio == np.inf
    assert m.price_decline_annual == 0 and m.contract_share == 0 and m.spot_sells == "tokens"
    assert u.churn_annual == 0


def test_fall_factor_becomes_the_decline():
    market = Market(price_fall_factor_annual=10.0)
    assert market.price_decline_annual == pytest.approx(0.9)
    assert (
        Market(price_fall_factor_annual=10.0, price_decline_annual=0.9).price_decline_annual == 0.9
    )


def test_without_gains_keeps_the_ceiling():
    t = Throughput(
        tokens_per_s_per_gpu=5000,
        trajectory="logistic",
        gain_rate_annual=0.3,
        ceiling_tokens_per_s_per_gpu=9000,
        steps=[{"month": 5, "gain": 0.198}],
    )
    plain = t.without_gains()
    assert plain.trajectory == "compound" and plain.steps == () and plain.gain_rate_annual == 0
    assert plain.ceiling_tokens_per_s_per_gpu == 9000
    assert t.ceiling_ratio == pytest.approx(1.8)


def test_compile_throughput_pads_steps_and_resolves_dates():
    sections = [
        Throughput(
            steps=[{"month": 5, "gain": 0.198, "ramp_months": 3}, {"month": 9, "gain": 0.1}]
        ),
        Throughput(
            trajectory="table",
            table=[
                {"date": "2026-05-01", "multiplier": 1.0},
                {"date": "2027-05-01", "multiplier": 1.5},
            ],
            ceiling_tokens_per_s_per_gpu=2000,
        ),
    ]
    out = compile_throughput(sections, [START, START])
    assert out["trajectory"].tolist() == [0, 2]
    assert out["ceiling_ratio"].tolist() == [np.inf, 2.0]
    assert out["step_months"].tolist() == [[5, 9], [STEP_PADDING_MONTH, STEP_PADDING_MONTH]]
    assert out["step_gains"].tolist() == [[0.198, 0.1], [0.0, 0.0]]
    assert out["step_ramp_months"].tolist() == [[3, 0], [0, 0]]
    assert out["table_months"][1].tolist() == [1.0, 13.0]
    assert np.isnan(out["table_months"][0]).all()


def test_compile_market_tables_by_date_and_month():
    markets = [
        Market(
            price_table=[
                {"date": "2025-04-01", "price_usd_per_mtok": 1.0},
                {"date": "2027-04-01", "price_usd_per_mtok": 0.5},
            ]
        ),
        Market(
            spot_sells="gpu_hours",
            rental_table=[
                {"month": 1, "price_usd_per_gpu_hour": 4.0},
                {"month": 25, "price_usd_per_gpu_hour": 2.0},
            ],
        ),
    ]
    out = compile_market(markets, [START, START])
    assert out["price_table_months"][0].tolist() == [-12.0, 12.0]
    assert out["price_table_usd_per_mtok"][0].tolist() == [1.0, 0.5]
    assert out["rental_table_months"][1].tolist() == [1.0, 25.0]
    assert out["spot_sells_gpu_hours"].tolist() == [False, True]
    assert months_after(START, dt.date(2026, 9, 30)) == 5


def test_horizon_problems_name_steps_beyond_the_horizon():
    t = Throughput(steps=[{"month": 5, "gain": 0.1}, {"month": 80, "gain": 0.1}])
    problems = t.horizon_problems(72)
    assert len(problems) == 1 and "steps[1] at month 80" in problems[0]
    late = Throughput(trajectory="table", table=[{"date": "2040-01-01", "multiplier": 1.2}])
    assert "beyond the horizon" in late.horizon_problems(72, START)[0]


def test_schema_documents_every_new_field():
    for model in (Throughput, Market, Utilization):
        schema = model.model_json_schema()
        for name, spec in schema["properties"].items():
            assert spec.get("description"), f"{model.__name__}.{name} has no description"


THROUGHPUT_ERRORS = [
    ({"steps": [{"month": 9, "gain": 0.1}, {"month": 5, "gain": 0.1}]}, "month order"),
    ({"steps": [{"month": 5, "gain": -1.0}]}, "greater than -1"),
    ({"steps": [{"month": 5, "gain": -1.5}]}, "greater than -1"),
    ({"steps": [{"month": 0, "gain": 0.1}]}, "greater than or equal to 1"),
    ({"steps": [{"month": 5, "gain": 0.1, "ramp_months": -1}]}, "greater than or equal to 0"),
    ({"gain_rate_annual": -1.0}, "greater than -1"),
    # 15 meant 15% projected an NPV of 9.3e11 USD
    ({"gain_rate_annual": 15}, "a compound gain of 15 a year (16x) is above 4 (5x a year)"),
    ({"gain_rate_annual": 15}, "expected a fraction (0.15 for 15%)"),
    ({"gain_rate_annual": 4.5}, "MLPerf history (3.0x)"),
    ({"tokens_per_s_per_gpu": 5000, "ceiling_tokens_per_s_per_gpu": 4000}, "below today's"),
    (
        {"trajectory": "logistic", "gain_rate_annual": 0.3},
        "ceiling_tokens_per_s_per_gpu is not set",
    ),
    (
        {"trajectory": "logistic", "gain_rate_annual": -0.1, "ceiling_tokens_per_s_per_gpu": 2000},
        "initial rate of 0 or more",
    ),
    (
        {"trajectory": "logistic", "rate_decay_annual": 0.2, "ceiling_tokens_per_s_per_gpu": 2000},
        "compound trajectory only",
    ),
    ({"rate_decay_annual": 1.0}, "less than 1"),
    ({"trajectory": "table"}, "table is empty"),
    ({"table": [{"month": 1, "multiplier": 1.0}]}, "set trajectory = 'table'"),
    (
        {
            "trajectory": "table",
            "table": [{"month": 1, "multiplier": 1.0}],
            "gain_rate_annual": 0.1,
        },
        "expected gain_rate_annual = 0",
    ),
    (
        {
            "trajectory": "table",
            "table": [{"month": 9, "multiplier": 1}, {"month": 3, "multiplier": 2}],
        },
        "strictly increasing time order",
    ),
    (
        {
            "trajectory": "table",
            "table": [{"month": 1, "multiplier": 1}, {"date": "2027-01-01", "multiplier": 2}],
        },
        "mixes months and dates",
    ),
    (
        {"trajectory": "table", "table": [{"month": 1, "date": "2027-01-01", "multiplier": 1}]},
        "exactly one of month and date",
    ),
    ({"trajectory": "table", "table": [{"month": 1, "multiplier": 0.0}]}, "greater than 0"),
    ({"trajectory": "exponential"}, "'compound', 'logistic' or 'table'"),
    ({"speed": 3}, "Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("data", "expected"), THROUGHPUT_ERRORS)
def test_bad_throughput(data, expected):
    with pytest.raises(ValidationError) as info:
        Throughput.model_validate(data)
    assert expected in str(info.value)


MARKET_ERRORS = [
    ({"contract_share": 0.5}, "expected a price above 0 for contracted GPUs"),
    (
        {"contract_share": 0.6, "contract_usd_per_gpu_hour": 4, "spot_share": 0.5},
        "add up to 1.1",
    ),
    ({"contract_share": 1.2, "contract_usd_per_gpu_hour": 4}, "less than or equal to 1"),
    ({"price_fall_factor_annual": 10, "price_decline_annual": 0.3}, "give one of the two"),
    ({"price_fall_factor_annual": 0.5}, "greater than or equal to 1"),
    ({"price_table": [{"month": 1, "price_usd_per_mtok": 0.0}]}, "greater than 0"),
    ({"price_table": [{"month": 1, "price_usd_per_mtok": -0.2}]}, "greater than 0"),
    ({"rental_table": [{"month": 1, "price_usd_per_gpu_hour": 0}]}, "greater than 0"),
    (
        {"price_table": [{"month": 1, "price_usd_per_mtok": 1}], "price_decline_annual": 0.3},
        "expected one of the two",
    ),
    (
        {"price_table": [{"month": 1, "price_usd_per_mtok": 1}], "price_usd_per_mtok": 2.0},
        "expected one of the two",
    ),
    (
        {
            "price_table": [
                {"date": "2027-01-01", "price_usd_per_mtok": 1},
                {"date": "2026-01-01", "price_usd_per_mtok": 2},
            ]
        },
        "strictly increasing time order",
    ),
    (
        {"rental_table": [{"month": 1, "price_usd_per_gpu_hour": 2}], "rental_usd_per_gpu_hour": 3},
        "expected one of the two",
    ),
    ({"rental_usd_per_gpu_hour": 2.0, "rental_floor_usd_per_gpu_hour": 3.0}, "at or below"),
    (
        {"contract_share": 0.5, "contract_usd_per_gpu_hour": 4, "contract_term_months": 12},
        "renew at the market rental price",
    ),
    ({"spot_sells": "gpu_hours"}, "market price of the spot GPU-hours"),
    ({"contract_term_months": -3}, "greater than or equal to 0"),
]


@pytest.mark.parametrize(("data", "expected"), MARKET_ERRORS)
def test_bad_market(data, expected):
    with pytest.raises(ValidationError) as info:
        Market.model_validate(data)
    assert expected in str(info.value)


def test_bad_utilization():
    with pytest.raises(ValidationError, match="less than 1"):
        Utilization(churn_annual=1.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 72), min_size=1, max_size=5))
def test_steps_are_accepted_exactly_when_in_month_order(months):
    steps = [{"month": m, "gain": 0.1} for m in months]
    if months == sorted(months):
        assert [s.month for s in Throughput(steps=steps).steps] == months
    else:
        with pytest.raises(ValidationError, match="month order"):
            Throughput(steps=steps)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_contract_and_spot_shares_must_add_up(contract, spot):
    data = {"contract_share": contract, "contract_usd_per_gpu_hour": 3.0, "spot_share": spot}
    if abs(contract + spot - 1.0) <= 1e-9:
        Market.model_validate(data)
    else:
        with pytest.raises(ValidationError, match="add up to"):
            Market.model_validate(data)


def test_the_gain_rate_bound_is_above_every_year_of_the_mlperf_history():
    """MAX_GAIN_RATE_ANNUAL's reason, from the catalog shipped: the best tokens/s per GPU of each
    round on the same silicon, rounds a year apart (v5.0 -> v6.0, v5.1 -> v6.1), never grew more
    than 3.02x (DeepSeek-R1 Server on B200); no fit over every round (`throughput.history` by
    hardware key) exceeds +204% a year, and those above doubling are the ones the warning is for."""
    import datetime as dt

    from econ.benchmarks import PUBLISHED, load_catalog
    from econ.scenario.gain_models import GAIN_RATE_WARN_ANNUAL, MAX_GAIN_RATE_ANNUAL
    from econ.throughput.history import HistoryError, gain_history

    catalog = load_catalog()
    rows = catalog[
        (catalog["kind"] == PUBLISHED)
        & catalog["tokens_per_s_per_gpu"].notna()
        & (catalog["duplicate_of"] == "")
        & (catalog["division"].str.lower() == "closed")
    ]
    yearly = []
    for _, group in rows.groupby(["benchmark_family", "scenario", "accelerator"]):
        best = group.sort_values("tokens_per_s_per_gpu").drop_duplicates("round", keep="last")
        rounds = best["round"].tolist()
        dates = dict(zip(rounds, map(dt.date.fromisoformat, best["published"]), strict=True))
        value = dict(zip(rounds, best["tokens_per_s_per_gpu"], strict=True))
        for a in value:
            for b in value:
                if 0.9 < (dates[b] - dates[a]).days / 365.25 < 1.1:
                    yearly.append(value[b] / value[a])
    assert max(yearly) == pytest.approx(3.0185, abs=1e-4)
    assert max(yearly) < 1 + MAX_GAIN_RATE_ANNUAL
    fitted = []
    for (family, scenario, hardware), _ in rows[rows["hardware_key"] != ""].groupby(
        ["benchmark_family", "scenario", "hardware_key"]
    ):
        try:
            fitted.append(gain_history(model=family, scenario=scenario, hardware=hardware))
        except HistoryError:
            continue
    rates = [h.rate_annual for h in fitted]
    assert len(rates) > 30 and max(rates) == pytest.approx(2.0375, abs=1e-4)
    assert max(rates) < MAX_GAIN_RATE_ANNUAL
    above = sorted({h.description.split()[0] for h in fitted if h.rate_annual > 1})
    assert above == ["deepseek-r1"] and GAIN_RATE_WARN_ANNUAL == 1.0


def test_a_rate_above_doubling_is_projected_with_a_warning_and_a_fitted_one_too():
    """A fit over one submitter's two rounds can exceed the bound (Google's GB200 DeepSeek-R1
    Server, v6.0 -> v6.1: +619% a year): it is the engine's column, not a file's value, so it is
    projected, with the warning a typed rate above doubling gets."""
    from econ import load_scenario, project

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    said = "more than doubles tokens/s per GPU every year"
    fast = project(load_scenario(seed, {"throughput.gain_rate_annual": 1.5})).warnings[0]
    assert any(w.startswith(f"throughput.gain_rate_annual = +150% a year {said}") for w in fast)
    slow = project(load_scenario(seed, {"throughput.gain_rate_annual": 1.0})).warnings[0]
    assert not any(said in w for w in slow)
    one_submitter = {"throughput.history": {"model": "deepseek-r1", "submitter": "Google"}}
    fitted = project(load_scenario(seed, one_submitter)).warnings[0]
    assert any("+619% a year" in w and said in w for w in fitted)
