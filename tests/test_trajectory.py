"""Gain trajectories: closed forms (Gompertz, logistic, rollout, PCHIP tables), invariants, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.errors import InputError
from econ.throughput.trajectory import (
    STEP_PADDING_MONTH,
    cap_at_ceiling,
    compound_multiplier,
    deflation_months_offset,
    gain_multiplier,
    logistic_multiplier,
    rate_to_hold_revenue,
    step_multiplier,
    table_multiplier,
    throughput_multiplier,
)

MONTHS = np.arange(0, 73)
rates = st.floats(0.0, 2.0)
shares = st.floats(0.0, 0.99)


def test_gain_multiplier_hand_value():
    # 10% a year and +19.8% from month 5: month 13 is one year after month 1.
    g = gain_multiplier([0.1], [[5]], [[0.198]], MONTHS)
    assert g[0, 0] == g[0, 1] == 1.0
    assert g[0, 4] == pytest.approx(1.1 ** (3 / 12))
    assert g[0, 5] == pytest.approx(1.1 ** (4 / 12) * 1.198)
    assert g[0, 13] == pytest.approx(1.1 * 1.198)


def test_compound_without_decay_is_the_compound_rate():
    g = compound_multiplier([0.25], MONTHS)
    assert g[0] == pytest.approx(1.25 ** (np.maximum(MONTHS - 1, 0) / 12), rel=1e-14)


def test_gompertz_hand_value_and_plateau():
    # r = 50%, rate halves each year: ln g(2) = ln 1.5 * (1 - 1/4) / ln 2 (Gompertz closed form).
    g = compound_multiplier([0.5], np.array([25, 10**6]), rate_decay_annual=[0.5])
    assert g[0, 0] == pytest.approx(math.exp(math.log(1.5) * 0.75 / math.log(2)), rel=1e-13)
    assert g[0, 1] == pytest.approx(1.5 ** (1 / math.log(2)), rel=1e-12)


def test_tiny_decay_tends_to_compound():
    g = compound_multiplier([0.3], MONTHS, rate_decay_annual=[1e-12])
    assert g[0] == pytest.approx(compound_multiplier([0.3], MONTHS)[0], rel=1e-9)


def test_logistic_hand_value():
    # C = 2, r = 100%: k = ln 2 / (1 - 1/2) = 2 ln 2, so g(1 year) = 2 / (1 + e^(-2 ln 2)) = 1.6.
    g = logistic_multiplier([1.0], [2.0], np.array([0, 1, 13, 10**5]))
    assert g[0, :2] == pytest.approx([1.0, 1.0])
    assert g[0, 2] == pytest.approx(1.6, rel=1e-14)
    assert g[0, 3] == pytest.approx(2.0)


def test_logistic_limits():
    g = logistic_multiplier([0.4, 0.4], [np.inf, 1.0], MONTHS)
    assert g[0] == pytest.approx(compound_multiplier([0.4], MONTHS)[0], rel=1e-14)
    assert np.all(g[1] == 1.0)


def test_logistic_starts_at_the_compound_rate():
    # Far below the ceiling the logistic grows like the compound rate (slope of ln g at t = 0).
    g = logistic_multiplier([0.3], [1e6], np.array([1, 2]))
    assert math.log(g[0, 1]) * 12 == pytest.approx(math.log(1.3), rel=1e-4)


def test_step_rollout_ramp_hand_values():
    g = step_multiplier([[5]], [[0.2]], np.arange(0, 11), step_ramp_months=[[4]])
    # Months 5-8 roll the release out to 1/4, 2/4, 3/4 and all of the fleet.
    assert g[0, :6] == pytest.approx([1, 1, 1, 1, 1, 1.05])
    assert g[0, 6:11] == pytest.approx([1.10, 1.15, 1.20, 1.20, 1.20])


def test_steps_without_ramp_match_gain_multiplier():
    months = [[3, 9, STEP_PADDING_MONTH]]
    gains = [[0.1, -0.05, 0.0]]
    assert step_multiplier(months, gains, MONTHS) == pytest.approx(
        gain_multiplier([0.0], months, gains, MONTHS), rel=1e-14
    )


def test_table_of_constant_growth_is_that_exponential_and_held_outside():
    # Doubling every 12 months from month 1 to 37: PCHIP in log space is exact for log-linear data.
    table_m = [[1.0, 13.0, 25.0, 37.0, np.nan]]
    table_v = [[1.0, 2.0, 4.0, 8.0, np.nan]]
    g = table_multiplier(table_m, table_v, np.array([0, 1, 7, 19, 37, 60]))
    assert g[0] == pytest.approx([1.0, 1.0, 2**0.5, 2**1.5, 8.0, 8.0], rel=1e-13)


def test_cap_at_ceiling():
    g = cap_at_ceiling(np.array([[1.0, 1.5, 2.5]]), [2.0])
    assert g[0] == pytest.approx([1.0, 1.5, 2.0])
    assert cap_at_ceiling(np.array([[3.0]]), [np.nan])[0, 0] == 3.0


def test_throughput_multiplier_picks_each_rows_model():
    code = np.array([0, 1, 2, 0])
    rate = np.array([0.2, 0.5, 0.0, 0.2])
    ceiling = np.array([np.inf, 1.8, np.inf, 1.1])
    table_m = np.array([[np.nan, np.nan]] * 2 + [[1.0, 25.0]] + [[np.nan, np.nan]])
    table_v = np.array([[np.nan, np.nan]] * 2 + [[1.0, 1.44]] + [[np.nan, np.nan]])
    steps_m = np.array([[5], [5], [5], [STEP_PADDING_MONTH]])
    steps_g = np.array([[0.1], [0.1], [0.1], [0.0]])
    g = throughput_multiplier(
        MONTHS,
        rate,
        trajectory=code,
        rate_decay_annual=[0.3, 0.0, 0.0, 0.0],
        ceiling_ratio=ceiling,
        step_months=steps_m,
        step_gains=steps_g,
        table_months=table_m,
        table_multipliers=table_v,
    )
    step = step_multiplier(steps_m[:1], steps_g[:1], MONTHS)[0]
    assert g[0] == pytest.approx(compound_multiplier([0.2], MONTHS, [0.3])[0] * step)
    assert g[1] == pytest.approx(
        np.minimum(logistic_multiplier([0.5], [1.8], MONTHS)[0] * step, 1.8)
    )
    assert g[2] == pytest.approx(table_multiplier(table_m[2:3], table_v[2:3], MONTHS)[0] * step)
    assert g[3].max() == pytest.approx(1.1)  # capped


def test_rate_to_hold_revenue_and_months_offset():
    assert rate_to_hold_revenue([0.3, 0.6, 0.9]) == pytest.approx([3 / 7, 1.5, 9.0])
    # 19.8% offsets 12 ln 1.198 / -ln 0.7 = 6.08 months of a 30% annual decline.
    assert deflation_months_offset(0.198, 0.3) == pytest.approx(
        12 * math.log(1.198) / -math.log(0.7)
    )
    assert np.isinf(deflation_months_offset(0.198, 0.0))


@settings(max_examples=50, deadline=None)
@given(rates, shares, shares)
def test_compound_rises_and_decay_slows_it(rate, decay_low, extra):
    decay_high = min(decay_low + extra, 0.99)
    slow = compound_multiplier([rate], MONTHS, [decay_high])[0]
    fast = compound_multiplier([rate], MONTHS, [decay_low])[0]
    assert np.all(np.diff(fast) >= -1e-12)
    assert np.all(slow <= fast * (1 + 1e-12))


@settings(max_examples=50, deadline=None)
@given(rates, st.floats(1.0, 10.0))
def test_logistic_rises_and_stays_below_its_ceiling(rate, ceiling):
    g = logistic_multiplier([rate], [ceiling], MONTHS)[0]
    assert np.all(np.diff(g) >= -1e-12)
    assert np.all(g <= ceiling * (1 + 1e-12)) and np.all(g >= 1 - 1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 72), st.floats(0.0, 1.0), st.integers(0, 12)), max_size=4))
def test_positive_steps_rise_to_their_product(steps):
    steps = sorted(steps)
    months = [[s[0] for s in steps] or [STEP_PADDING_MONTH]]
    gains = [[s[1] for s in steps] or [0.0]]
    ramps = [[s[2] for s in steps] or [0]]
    g = step_multiplier(months, gains, np.arange(0, 100), ramps)[0]
    assert np.all(np.diff(g) >= -1e-12)
    assert g[-1] == pytest.approx(np.prod([1 + s[1] for s in steps]))


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: compound_multiplier([-1.0], MONTHS), "above -1"),
        (lambda: compound_multiplier([0.1], MONTHS, [1.0]), "[0, 1)"),
        (lambda: logistic_multiplier([0.1], [0.9], MONTHS), "at or above today's throughput"),
        (lambda: logistic_multiplier([-0.1], [2.0], MONTHS), "rate >= 0"),
        (lambda: step_multiplier([[5]], [[-1.0]], MONTHS), "above -1"),
        (lambda: step_multiplier([[5]], [[0.1]], MONTHS, [[-2]]), "0 or more months"),
        (lambda: step_multiplier([[5, 6]], [[0.1]], MONTHS), "same shape"),
        (lambda: table_multiplier([[1.0, 5.0]], [[1.0, 0.0]], MONTHS), "above 0"),
        (lambda: table_multiplier([[5.0, 1.0]], [[1.0, 2.0]], MONTHS), "strictly increasing"),
        (lambda: cap_at_ceiling(np.ones((1, 3)), [0.5]), "ceiling"),
        (lambda: throughput_multiplier(MONTHS, [0.1], trajectory=[7]), "compound, logistic, table"),
        (lambda: throughput_multiplier(MONTHS, [0.1], trajectory=[2]), "table_months"),
        (lambda: deflation_months_offset(0.1, 1.0), "[0, 1)"),
        (lambda: rate_to_hold_revenue(-0.1), "[0, 1)"),
    ],
)
def test_bad_input_is_an_input_error(call, expected):
    with pytest.raises(InputError) as info:
        call()
    assert expected in str(info.value)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 1), rates, shares, st.floats(1.0, 5.0), st.integers(2, 9),
    st.lists(st.floats(1.0, 8.0), min_size=1, max_size=1),
)
def test_rows_alike_are_computed_once_and_each_row_keeps_its_own_cap(
    code, rate, decay, logistic_ceiling, n, caps
):
    # The trajectory inputs repeated over n rows (as in a sweep of other fields); the cap of a
    # compound row differs per row (a ceiling over each row's own tokens/s).
    ceiling = np.full(n, logistic_ceiling) if code == 1 else np.linspace(caps[0], caps[0] + 3, n)
    kwargs = dict(
        trajectory=np.full(n, code), rate_decay_annual=np.full(n, decay if code == 0 else 0.0),
        ceiling_ratio=ceiling, step_months=np.full((n, 1), 12), step_gains=np.full((n, 1), 0.2),
        step_ramp_months=np.full((n, 1), 6),
    )
    together = throughput_multiplier(MONTHS, np.full(n, rate), **kwargs)
    for i in range(n):
        alone = throughput_multiplier(
            MONTHS, [rate], **{k: np.asarray(v)[i : i + 1] for k, v in kwargs.items()}
        )
        np.testing.assert_array_equal(together[i], alone[0])


def test_rows_that_differ_are_each_computed():
    rates_ = np.array([0.1, 0.1, 0.3])
    g = throughput_multiplier(MONTHS, rates_, rate_decay_annual=np.zeros(3))
    np.testing.assert_array_equal(g[2], compound_multiplier([0.3], MONTHS, [0.0])[0])
    assert not np.array_equal(g[0], g[2])
