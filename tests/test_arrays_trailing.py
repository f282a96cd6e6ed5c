"""econ.arrays.trailing_sum_months, built from doubled windows: every window length against the
sum written out, and no cancellation where small months follow large ones (the reason it never
subtracts running totals); trailing_sum_rows, each row over its own window."""

import numpy as np
import pytest

from econ.arrays import trailing_sum_months, trailing_sum_rows


def _written_out(x, w):
    return np.array(
        [[row[max(0, t - w + 1) : t + 1].sum() for t in range(row.size)] for row in x]
    )


@pytest.mark.parametrize("w", [*range(1, 26), 36, 48, 64, 72, 73, 100])
def test_every_window_is_the_sum_of_its_months(w):
    x = np.random.default_rng(w).normal(0, 1e6, (7, 73))
    np.testing.assert_allclose(trailing_sum_months(x, w), _written_out(x, w), rtol=1e-12, atol=1e-6)


def test_a_quarter_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    assert trailing_sum_months(x, 3).tolist() == [[1.0, 3.0, 6.0, 9.0, 12.0]]


def test_small_months_after_large_ones_keep_their_exact_sum():
    x = np.array([[1e12, 1e12, 0.0, 0.0, 0.0, 0.01, 0.02]])
    out = trailing_sum_months(x, 3)
    assert out[0, 4] == 0.0  # months 2-4 hold nothing
    assert abs(out[0, 6] - 0.03) < 1e-15  # a difference of running totals errs by ~1e-4 here


def test_the_input_is_left_alone():
    x = np.arange(12.0)[None, :]
    before = x.copy()
    trailing_sum_months(x, 5)
    np.testing.assert_array_equal(x, before)


def test_each_row_sums_over_its_own_window():
    x = np.random.default_rng(3).normal(0, 1e6, (6, 40))
    windows = np.array([1, 12, 3, 12, 1, 40])
    before = x.copy()
    out = trailing_sum_rows(x, windows)
    for row, w in enumerate(windows):
        np.testing.assert_allclose(out[row], _written_out(x[row : row + 1], w)[0], atol=1e-6)
    np.testing.assert_array_equal(x, before)  # the input is left alone
    # one window for all rows (the usual batch) is trailing_sum_months itself
    np.testing.assert_array_equal(trailing_sum_rows(x, 12), trailing_sum_months(x, 12))
    np.testing.assert_array_equal(trailing_sum_rows(x, np.full(6, 5)), trailing_sum_months(x, 5))


@pytest.mark.parametrize("w", [2, 3, 5, 12, 24, 72])
def test_each_row_sums_as_alone_whatever_rows_come_before_it(w):
    # Rows of very different sizes, one after another: no month reads the row before (shifts
    # run over the flat array), and any shape or memory order gives the same sums bit for bit.
    rng = np.random.default_rng(w)
    x = rng.normal(0, 1, (6, 73)) * 10.0 ** rng.integers(-3, 12, (6, 1))
    out = trailing_sum_months(x, w)
    for row in range(6):
        np.testing.assert_array_equal(out[row], trailing_sum_months(x[row : row + 1], w)[0])
    np.testing.assert_array_equal(trailing_sum_months(x[2], w), out[2])
    np.testing.assert_array_equal(trailing_sum_months(np.asfortranarray(x), w), out)
    np.testing.assert_array_equal(
        trailing_sum_months(x.reshape(2, 3, 73), w), out.reshape(2, 3, 73)
    )
