"""Market curves: token and rental prices, PCHIP tables, utilization, contracts, revenue by source."""

from __future__ import annotations

import csv
import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.errors import InputError
from econ.market import (
    contract_price_path,
    decline_from_fall_factor,
    monotone_interpolate,
    price_path,
    rental_price_usd_per_gpu_hour,
    revenue_by_source,
    revenue_usd_per_month,
    table_price_path,
    token_price_usd_per_mtok,
    utilization_path,
)

MONTHS = np.arange(0, 49)
HOURS_PER_MONTH = 8760 / 12


def test_llmflation_tenfold_a_year_is_a_decline_of_ninety_percent():
    # a16z "LLMflation" (2024): the price of a constant capability falls about 10x a year.
    decline = decline_from_fall_factor(10.0)
    assert decline == pytest.approx(0.9)
    prices = token_price_usd_per_mtok([2.0], [decline], np.array([1, 13, 25]))
    assert prices[0] == pytest.approx([2.0, 0.2, 0.02])


def test_price_path_and_revenue_keep_their_engine_semantics():
    factor = price_path(np.array([0.3]), np.array([0, 1, 13]))
    assert factor[0] == pytest.approx([1.0, 1.0, 0.7])
    tokens = np.array([[0.0, 2e9]])
    gpus = np.array([[0.0, 2.0]])
    token_rev, contract_rev = revenue_usd_per_month(
        tokens, gpus, [3.0], np.array([[1.0, 1.0]]), [0.25], [2.0]
    )
    assert token_rev[0, 1] == pytest.approx(0.75 * 2e9 * 3.0 / 1e6)
    assert contract_rev[0, 1] == pytest.approx(0.25 * 2 * HOURS_PER_MONTH * 2.0)


def test_pchip_hand_value():
    # Knots (0, 0), (1, 1), (2, 1): the interior slope is 0 (a flat neighbour), the left end slope
    # is ((2h + h) * 1 - h * 0) / 2h = 1.5; the Hermite cubic at 0.5 is 0.125 * 1.5 + 0.5 = 0.6875.
    y = monotone_interpolate([[0.0, 1.0, 2.0]], [[0.0, 1.0, 1.0]], np.array([0.5, 1.5, -1, 3]))
    assert y[0] == pytest.approx([0.6875, 1.0, 0.0, 1.0])


def test_pchip_matches_scipy_inside_the_table_for_every_row_length():
    interpolate = pytest.importorskip("scipy.interpolate")
    rng = np.random.default_rng(7)
    lengths = [1, 2, 3, 4, 6]
    knot_x = np.full((len(lengths), 6), np.nan)
    knot_y = np.full((len(lengths), 6), np.nan)
    for row, length in enumerate(lengths):
        knot_x[row, :length] = np.cumsum(rng.uniform(0.5, 4.0, length))
        knot_y[row, :length] = rng.normal(size=length)
    query = np.linspace(0.0, 25.0, 301)
    ours = monotone_interpolate(knot_x, knot_y, query)
    for row, length in enumerate(lengths):
        x, y = knot_x[row, :length], knot_y[row, :length]
        inside = (query >= x[0]) & (query <= x[-1])
        if length >= 2:
            reference = interpolate.PchipInterpolator(x, y)(query[inside])
            assert ours[row, inside] == pytest.approx(reference, abs=1e-12)
        assert np.all(ours[row, query < x[0]] == y[0])
        assert np.all(ours[row, query > x[-1]] == y[-1])


def test_geometric_price_table_is_a_constant_rate_of_decline():
    prices = table_price_path([[0.0, 12.0, 24.0]], [[10.0, 5.0, 2.5]], np.array([6, 18, 30]))
    assert prices[0] == pytest.approx([10 / 2**0.5, 5 / 2**0.5, 2.5], rel=1e-13)


def test_h100_rental_curve_from_reference_quotes(shared_data):
    # H100 GPU-hour rentals: USD 8 peak (2023), 2.99 (2024-10), 1.70 (2025-10), 2.35 (2026-03).
    quotes = {}
    with open(shared_data / "reference_figures.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["category"] == "market" and row["item"].startswith("H100"):
                quotes[row["item"]] = (row["as_of"], float(row["value"]))
    dated = [
        (dt.date(2023, 6, 1), quotes["H100 rental price 2023 peak"][1]),
        (dt.date(2024, 10, 1), quotes["H100 on-demand SXM rental"][1]),
        (dt.date(2025, 10, 1), quotes["H100 1-year rental low"][1]),
        (dt.date(2026, 3, 1), quotes["H100 1-year rental"][1]),
    ]
    start = dt.date(2024, 1, 1)
    months = [[(d.year - start.year) * 12 + d.month - start.month for d, _ in dated]]
    prices = [[p for _, p in dated]]
    curve = rental_price_usd_per_gpu_hour([0.0], [0.0], [0.0], np.arange(0, 40), months, prices)[0]
    for month, price in zip(months[0], prices[0], strict=True):
        if month >= 0:
            assert curve[month] == pytest.approx(price)
    between = curve[months[0][1] : months[0][2] + 1]
    assert np.all(np.diff(between) <= 1e-12)  # falls monotonically from 2.99 to 1.70
    assert between.min() == pytest.approx(1.70) and between.max() == pytest.approx(2.99)
    assert curve[-1] == pytest.approx(2.35)  # held after the last quote


def test_rental_decline_to_a_floor_hand_value():
    curve = rental_price_usd_per_gpu_hour([4.0], [0.5], [2.0], np.array([1, 13, 25]))
    assert curve[0] == pytest.approx([4.0, 3.0, 2.5])


def test_utilization_ramp_and_churn_hand_values():
    u = utilization_path([0.7, 0.7], [0, 4], [0.2, 0.0], np.array([0, 1, 2, 13, 25]))
    assert u[0] == pytest.approx([0.0, 0.7, 0.7 * 0.8 ** (1 / 12), 0.56, 0.448])
    assert u[1] == pytest.approx([0.0, 0.175, 0.35, 0.7, 0.7])


def test_contracts_renew_at_the_market_price():
    market = np.tile(np.arange(0, 40, dtype=float), (2, 1)) + 1.0  # price m + 1 in month m
    price = contract_price_path([4.0, 4.0], market, [12, 0], np.arange(0, 40))
    assert np.all(price[0, 1:13] == 4.0)
    assert np.all(price[0, 13:25] == 14.0)  # the market in month 13
    assert np.all(price[0, 25:37] == 26.0)
    assert np.all(price[1] == 4.0)  # no renewal


def test_revenue_by_source_hand_values():
    tokens = np.array([[0.0, 1e9], [0.0, 1e9]])
    gpus = np.array([[0.0, 10.0], [0.0, 10.0]])
    u = np.array([[0.0, 0.5], [0.0, 0.5]])
    out = revenue_by_source(
        tokens,
        gpus,
        u,
        np.full((2, 2), 2.0),
        [0.4, 0.4],
        [3.0, 3.0],
        spot_rental_usd_per_gpu_hour=np.full((2, 2), 2.5),
        spot_sells_gpu_hours=[False, True],
    )
    assert out["token_usd"][:, 1] == pytest.approx([0.6 * 1e9 * 2.0 / 1e6, 0.0])
    assert out["spot_rental_usd"][:, 1] == pytest.approx(
        [0.0, 0.6 * 10 * HOURS_PER_MONTH * 0.5 * 2.5]
    )
    assert out["contract_usd"][:, 1] == pytest.approx([0.4 * 10 * HOURS_PER_MONTH * 3.0] * 2)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 0.95), st.floats(0.0, 0.95))
def test_steeper_decline_never_raises_a_price(d1, d2):
    low, high = sorted((d1, d2))
    prices = token_price_usd_per_mtok([1.0, 1.0], [low, high], MONTHS)
    assert np.all(prices[1] <= prices[0] * (1 + 1e-12))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.1, 100.0), min_size=2, max_size=6),
    st.lists(st.floats(0.5, 12.0), min_size=6, max_size=6),
)
def test_pchip_keeps_monotone_data_monotone_and_in_range(values, gaps):
    values = sorted(values, reverse=True)  # a falling price table
    x = np.cumsum(gaps[: len(values)])
    y = monotone_interpolate([x], [values], np.linspace(0, 80, 400))[0]
    assert np.all(np.diff(y) <= 1e-9)
    assert y.min() >= min(values) - 1e-9 and y.max() <= max(values) + 1e-9


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 0.9), st.integers(0, 24))
def test_utilization_never_exceeds_its_share(share, churn, ramp):
    u = utilization_path([share], [ramp], [churn], MONTHS)[0]
    assert u[0] == 0.0 and np.all(u <= share + 1e-15) and np.all(u >= 0)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: decline_from_fall_factor(0.5), "factor >= 1"),
        (lambda: table_price_path([[0.0, 12.0]], [[2.0, 0.0]], MONTHS), "price above 0"),
        (lambda: table_price_path([[0.0, 12.0]], [[2.0, -1.0]], MONTHS), "price above 0"),
        (lambda: table_price_path([[12.0, 0.0]], [[2.0, 1.0]], MONTHS), "strictly increasing"),
        (lambda: monotone_interpolate([[np.nan, 1.0]], [[1.0, 2.0]], MONTHS), "only after"),
        (lambda: monotone_interpolate([[np.nan]], [[1.0]], MONTHS), "at least one point"),
        (lambda: monotone_interpolate([[0.0, 1.0]], [[1.0]], MONTHS), "same shape"),
        (lambda: token_price_usd_per_mtok([-1.0], [0.1], MONTHS), "price of 0 or more"),
        (lambda: token_price_usd_per_mtok([1.0], [1.0], MONTHS), "decline in [0, 1)"),
        # an outside review: price_path([1.5]) gave NaN with a RuntimeWarning, [-0.5] a rise
        (lambda: price_path([1.5], range(4)), "price_decline_annual[0] = 1.5: expected a decl"),
        (lambda: price_path([-0.5], range(4)), "price_decline_annual[0] = -0.5: expected a dec"),
        (lambda: price_path([0.1, np.nan], range(4)), "price_decline_annual[1] = nan"),
        (lambda: rental_price_usd_per_gpu_hour([2.0], [0.1], [3.0], MONTHS), "floor between"),
        (lambda: rental_price_usd_per_gpu_hour([-1.0], [0.1], [0.0], MONTHS), "0 or more"),
        (lambda: utilization_path([1.2], [0], [0.0], MONTHS), "share in [0, 1]"),
        (lambda: utilization_path([0.5], [0], [1.0], MONTHS), "share in [0, 1)"),
        (
            lambda: contract_price_path([4.0], np.ones((1, 3)), [12], MONTHS),
            "expected (scenarios, months)",
        ),
        (lambda: contract_price_path([4.0], np.ones((1, 3)), [12], [0, 2, 3]), "consecutive"),
        (lambda: contract_price_path([4.0], np.ones((1, 3)), [-1], [0, 1, 2]), "no renewal"),
        (
            lambda: revenue_by_source(
                np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)), [1.5], [1.0]
            ),
            "share in [0, 1]",
        ),
        (
            lambda: revenue_by_source(
                np.ones((1, 2)),
                np.ones((1, 2)),
                np.ones((1, 2)),
                np.ones((1, 2)),
                [0.5],
                [1.0],
                spot_sells_gpu_hours=[True],
            ),
            "spot_rental_usd_per_gpu_hour",
        ),
    ],
)
def test_bad_input_is_an_input_error(call, expected):
    with pytest.raises(InputError) as info:
        call()
    assert expected in str(info.value)


def test_integration_recipe_reproduces_todays_engine():
    # With default new fields, composing these functions as the integration notes describe gives
    # the engine's tokens and revenue for today's scenarios (contract and ramps included).
    from econ import load_scenario, project
    from econ.throughput.trajectory import throughput_multiplier
    from tests.conftest import ROOT

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    scenario = load_scenario(
        seed,
        {
            "market.contract_share": 0.4,
            "market.contract_usd_per_gpu_hour": 3.1,
            "utilization.ramp_months": 5,
            "throughput.gain_rate_annual": 0.2,
        },
    )
    result = project(scenario)
    months = result.months
    horizon = result.horizon_months[:, None]
    service = (months[None, :] >= 1) & (months[None, :] <= horizon)
    t, u, m = scenario.throughput, scenario.utilization, scenario.market
    gpus = result.lines["gpus_in_service"]
    util = utilization_path([u.share], [u.ramp_months], [0.0], months) * service
    steps = ([[s.month for s in t.steps]], [[s.gain for s in t.steps]])
    tps = t.tokens_per_s_per_gpu * throughput_multiplier(
        months, [t.gain_rate_annual], step_months=steps[0], step_gains=steps[1]
    )
    tokens = gpus * tps * util * HOURS_PER_MONTH * 3600
    assert tokens == pytest.approx(result.lines["tokens"], rel=1e-12)
    price = token_price_usd_per_mtok([m.price_usd_per_mtok], [m.price_decline_annual], months)
    contract = contract_price_path(
        [m.contract_usd_per_gpu_hour], np.zeros((1, months.size)), [0], months
    )
    revenue = revenue_by_source(tokens, gpus, util, price, [m.contract_share], contract)
    total = revenue["token_usd"] + revenue["contract_usd"] + revenue["spot_rental_usd"]
    assert total == pytest.approx(result.lines["revenue_usd"], rel=1e-12)
