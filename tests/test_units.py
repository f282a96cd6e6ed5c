"""Unit conversions and the per-scenario power paths."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.units import annual_growth_factor, annual_rate, monthly_rate, power_path


def test_monthly_and_annual_rates_invert():
    # 12.6825% a year is 1% a month: (1.01)^12 - 1 = 0.126825030131970
    assert monthly_rate(0.12682503013197) == pytest.approx(0.01, rel=1e-12)
    assert annual_rate(0.01) == pytest.approx(0.12682503013197, rel=1e-12)


def test_power_path_by_hand():
    out = power_path([1.1, 0.5], [0.0, 1.0, 2.0])
    np.testing.assert_allclose(out, [[1.0, 1.1, 1.21], [1.0, 0.5, 0.25]], rtol=1e-15)


def test_power_path_shared_base_is_numpy_power_bit_for_bit():
    e = np.arange(73) / 12.0
    out = power_path(np.full(5, 0.8), e)
    assert out.shape == (5, 73)
    assert np.array_equal(out, np.broadcast_to(np.power(0.8, e), (5, 73)))
    out[0, 0] = 7.0  # a writable array of its own
    assert out[1, 0] == 1.0


def test_power_path_edge_bases_follow_numpy():
    out = power_path([0.0, np.nan, 2.0], [0.0, 1.0])
    np.testing.assert_array_equal(out[0], [1.0, 0.0])
    np.testing.assert_array_equal(out[1], np.power(np.nan, [0.0, 1.0]))  # pow(NaN, 0) = 1
    np.testing.assert_array_equal(out[2], [1.0, 2.0])


@settings(max_examples=50, deadline=None)
@given(
    bases=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=20),
    months=st.integers(1, 400),
)
def test_power_path_matches_numpy_power(bases, months):
    b = np.array(bases)
    e = -np.arange(months) / 12.0
    np.testing.assert_allclose(power_path(b, e), np.power(b[:, None], e[None, :]), rtol=1e-13)


def test_annual_growth_factor_shapes():
    r = np.array([0.0, 0.03])
    m = np.arange(25)
    path = annual_growth_factor(r[:, None], m[None, :])
    assert path.shape == (2, 25)
    assert path[1, 12] == pytest.approx(1.03, rel=1e-14)
    assert annual_growth_factor(0.03, 24) == pytest.approx(1.0609, rel=1e-14)
