"""The month-axis running sums equal numpy's own routines bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.arrays import add_at_months, cumsum_months, remaining_sum_months, running_max_months


@pytest.mark.parametrize("rows", [1, 3, 255, 256, 1000])
def test_equal_to_numpy_bit_for_bit(rows):
    rng = np.random.default_rng(rows)
    x = rng.normal(size=(rows, 73)) * 10.0 ** rng.integers(-3, 9, size=(rows, 73))
    x[rng.random(x.shape) < 0.05] = np.nan
    assert np.array_equal(cumsum_months(x), np.cumsum(x, axis=1), equal_nan=True)
    assert np.array_equal(
        remaining_sum_months(x), np.cumsum(x[:, ::-1], axis=1)[:, ::-1], equal_nan=True
    )
    assert np.array_equal(running_max_months(x), np.maximum.accumulate(x, axis=1), equal_nan=True)


def test_small_example_by_hand():
    x = np.array([[1.0, 2.0, -4.0, 8.0]])
    assert cumsum_months(x).tolist() == [[1.0, 3.0, -1.0, 7.0]]
    assert remaining_sum_months(x).tolist() == [[7.0, 6.0, 4.0, 8.0]]
    assert running_max_months(x).tolist() == [[1.0, 2.0, 2.0, 8.0]]


def test_input_left_alone_and_bool_counts():
    x = np.tile(np.array([True, False, True]), (300, 1))
    before = x.copy()
    assert cumsum_months(x)[0].tolist() == [1.0, 1.0, 2.0]
    assert np.array_equal(x, before)
    y = np.ones((300, 5))
    cumsum_months(y)
    assert (y == 1.0).all()


@settings(max_examples=40, deadline=None)
@given(
    rows=st.sampled_from([1, 2, 300]),
    months=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_last_month_is_row_total(rows, months, seed):
    x = np.random.default_rng(seed).normal(size=(rows, months))
    total = cumsum_months(x)[:, -1]
    assert np.allclose(total, x.sum(axis=1), rtol=1e-12, atol=1e-12)
    assert np.allclose(remaining_sum_months(x)[:, 0], total, rtol=1e-12, atol=1e-12)
    assert (np.diff(running_max_months(x), axis=1) >= 0).all()


def test_rows_alike():
    from econ.arrays import rows_alike

    nan_rows = np.array([[1.0, np.nan], [1.0, np.nan]])
    assert rows_alike(np.ones(4), nan_rows, np.array([2, 2]), np.float64(3.0))
    assert not rows_alike(np.ones(4), np.array([[1.0, np.nan], [1.0, 2.0]]))
    assert not rows_alike(np.array([0.0, 1e-300]))
    assert rows_alike(np.array([5.0]))  # one row is alike with itself


def test_add_at_months_is_np_add_at_bit_for_bit():
    # Several columns landing on one month (years after a horizon all paid in its last month)
    # add up left to right on what the month held, as np.add.at adds them.
    rng = np.random.default_rng(4)
    target = rng.normal(0, 1e6, (50, 30))
    values = rng.normal(0, 1, (50, 6)) * 10.0 ** rng.integers(-8, 8, (50, 6))
    months = np.minimum(rng.integers(0, 40, (50, 6)), 29)
    expected = target.copy()
    np.add.at(expected, (np.arange(50)[:, None], months), values)
    add_at_months(target, months, values)
    np.testing.assert_array_equal(target, expected)
    # one row of months for all rows
    shared, expected = np.zeros((3, 5)), np.zeros((3, 5))
    np.add.at(expected, (np.arange(3)[:, None], np.array([[4, 4, 1]])), values[:3, :3])
    add_at_months(shared, np.array([[4, 4, 1]]), values[:3, :3])
    np.testing.assert_array_equal(shared, expected)
