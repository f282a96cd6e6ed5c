"""Monte Carlo: distributions, Sobol points, Iman-Conover, streaming statistics, closed forms."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import ScenarioBatch, project
from econ.analysis.distributions import (
    U_MIN,
    Discrete,
    DistributionError,
    LogNormal,
    Normal,
    Pert,
    Triangular,
    Uniform,
    beta_ppf,
    parse_distribution,
)
from econ.analysis.montecarlo import MonteCarloPlan, montecarlo, parse_correlations, parse_dists
from econ.analysis.sampling import (
    SamplingError,
    block_generator,
    check_correlation,
    check_seed,
    iman_conover,
    random_unit,
    sobol_unit,
    spearman,
)
from econ.analysis.stats import (
    SKETCH_RELATIVE_ACCURACY,
    BlockMoments,
    QuantileSketch,
    SummaryAccumulator,
    combine,
    summarize_chunk,
)
from econ.analysis.validation import BatchInputError
from econ.cli import main
from econ.scenario import validate_dict
from tests.conftest import ROOT

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"

SETTINGS = settings(max_examples=50, deadline=None)

# Two-year, one-rack scenario: quick to project, no debt, so every output is defined.
BASE = validate_dict(
    {
        "name": "mc",
        "horizon_months": 24,
        "fleet": {"gpu_count": 8},
        "capex": {"gpu_price_usd": 30000.0},
        "depreciation": {"life_years": 2.0},
        "throughput": {"tokens_per_s_per_gpu": 2000.0},
        "market": {"price_usd_per_mtok": 1.0},
    }
)
IRR_COLUMNS = ("irr_project_annual", "irr_equity_annual")


def assert_same(a, b):
    """Identical frames; IRR to 1e-12 relative or 1e-14 absolute, as docs/batch.md says (the IRR
    solver's last bits depend on its batch)."""
    assert list(a.columns) == list(b.columns)
    for name in a.columns:
        x, y = a[name].to_numpy(), b[name].to_numpy()
        if name in IRR_COLUMNS:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
        elif x.dtype == object:
            assert (x == y).all(), name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)


# --- distributions ------------------------------------------------------------------------


def test_normal_quantile_reference_value():
    # Standard normal 97.5% quantile, 1.959963984540054 (Abramowitz & Stegun, table 26.5).
    assert Normal(0.0, 1.0).ppf(np.array([0.975]))[0] == pytest.approx(1.959963984540054, rel=1e-14)


def test_triangular_inverse_cdf_closed_form():
    # Triangular(0, 1, 4): F(1) = 1/4, so the 25% quantile is the mode; F^-1(0.5) = 4 - sqrt(6).
    t = Triangular(0.0, 1.0, 4.0)
    assert t.ppf(np.array([0.25]))[0] == pytest.approx(1.0, rel=1e-15)
    assert t.ppf(np.array([0.5]))[0] == pytest.approx(4 - math.sqrt(6), rel=1e-14)
    assert t.mean() == pytest.approx(5 / 3)


def test_pert_mean_and_variance_reference():
    # PERT(0, 1, 10), lambda 4: mean (0 + 4 + 10)/6 = 7/3 (Vose 2008); alpha 1.4, beta 4.6.
    p = Pert(0.0, 1.0, 10.0)
    assert p.mean() == pytest.approx(7 / 3)
    assert (p.alpha, p.beta) == pytest.approx((1.4, 4.6))
    assert p.var() == pytest.approx(100 * 1.4 * 4.6 / (36 * 7))
    u = sobol_unit(0, 0, 2**14, 1)[:, 0]
    x = p.ppf(u)
    assert x.mean() == pytest.approx(7 / 3, rel=1e-3)
    assert x.var() == pytest.approx(p.var(), rel=1e-2)


@pytest.mark.parametrize(
    ("low", "mode", "high", "lamb"),
    [
        (30e3, 43e3, 60e3, 4),
        (0, 1, 10, 4),
        (0, 0, 1, 4),
        (0, 1, 1, 4),
        (0, 3, 9, 20),
        (0, 3, 9, 0.1),
    ],
)
def test_pert_quantile_table_matches_the_inverse_incomplete_beta(low, mode, high, lamb):
    from scipy import special

    p = Pert(float(low), float(mode), float(high), float(lamb))
    u = random_unit(block_generator(5, 0), 20_000, 1)[:, 0]
    u = np.concatenate([u, 2.0 ** -np.arange(1, 54), 1 - 2.0 ** -np.arange(2, 54), [U_MIN, 0.5]])
    exact = special.betaincinv(p.alpha, p.beta, u)
    x = beta_ppf(p.alpha, p.beta, u)
    assert np.array_equal(p.ppf(u), p.low + (p.high - p.low) * x)
    assert np.all(np.abs(x - exact) <= 1e-13 * np.minimum(exact, 1 - exact) + 2.0**-50)
    # Each value depends on its point only (not on the array it comes in): chunking-proof.
    assert np.array_equal(p.ppf(u), np.concatenate([p.ppf(u[:7]), p.ppf(u[7:])]))
    # Outside the samplers' range: the ends, and NaN stays NaN.
    assert np.array_equal(p.ppf(np.array([0.0, 1.0])), [p.low, p.high])
    assert np.isnan(p.ppf(np.array([np.nan, 0.3])))[0]


def test_lognormal_from_mean_and_sd_round_trips():
    d = LogNormal.from_mean_sd(0.5, 0.15)
    assert d.mean() == pytest.approx(0.5, rel=1e-13)
    assert math.sqrt(d.var()) == pytest.approx(0.15, rel=1e-13)
    assert d.ppf(np.array([0.5]))[0] == pytest.approx(math.exp(d.mu), rel=1e-14)


def test_truncated_normal_stays_in_range_and_has_its_mean():
    d = Normal(0.7, 0.2, low=0.0, high=1.0)
    u = sobol_unit(1, 0, 2**14, 1)[:, 0]
    x = d.ppf(u)
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert x.mean() == pytest.approx(d.mean(), rel=1e-3)
    assert x.var() == pytest.approx(d.var(), rel=1e-2)


@SETTINGS
@given(
    low=st.floats(-1e6, 1e6),
    width=st.floats(1e-3, 1e6),
    mode_share=st.floats(0, 1),
    u=st.lists(st.floats(0, 1), min_size=2, max_size=20),
)
def test_bounded_quantiles_are_monotone_and_in_range(low, width, mode_share, u):
    high = low + width
    mode = low + mode_share * width
    u = np.sort(np.asarray(u))
    for dist in (Uniform(low, high), Triangular(low, mode, high), Pert(low, mode, high)):
        x = dist.ppf(u)
        assert np.all(np.diff(x) >= -1e-9 * max(1.0, abs(high)))
        assert np.all(x >= low - 1e-9 * max(1, abs(low))) and np.all(
            x <= high + 1e-9 * max(1, abs(high))
        )


def test_parse_distribution_forms():
    assert parse_distribution("triangular(0.15, 0.3, 0.5)") == Triangular(0.15, 0.3, 0.5)
    assert parse_distribution("pert(1, 2, 3, lambda=6)").lamb == 6
    assert parse_distribution("normal(mean=1, sd=2, low=0)").low == 0
    d = parse_distribution("discrete(0.08:0.5, 0.1:0.3, 0.12:0.2)")
    assert d.values == (0.08, 0.1, 0.12)
    freq = np.bincount(d.index(sobol_unit(0, 0, 4096, 1)[:, 0]), minlength=3) / 4096
    np.testing.assert_allclose(freq, [0.5, 0.3, 0.2], atol=1e-3)


def test_empirical_resamples_a_column(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("price\n0.2\n0.3\n0.4\n0.5\n")
    d = parse_distribution(f"empirical({path}, price)")
    x = d.ppf(sobol_unit(0, 0, 4096, 1)[:, 0])
    assert set(np.unique(x)) == {0.2, 0.3, 0.4, 0.5}
    assert x.mean() == pytest.approx(0.35, rel=1e-3)
    with pytest.raises(DistributionError, match="no column 'cost'"):
        parse_distribution(f"empirical({path}, cost)")
    path.write_text("price\n0.2\nabc\n")
    with pytest.raises(DistributionError, match="row 2, column price"):
        parse_distribution(f"empirical({path}, price)")


def test_empirical_refuses_a_row_wider_than_the_header(tmp_path):
    # read with pandas' defaults, the extra first field became the row's index and column
    # price held the cost's values (0.9 and 0.8) without a word
    path = tmp_path / "prices.csv"
    path.write_text("price,cost\n0.2,0.9,x\n0.3,0.8,y\n")
    with pytest.raises(DistributionError, match="prices.csv: line 2 has 3 fields; expected 2"):
        parse_distribution(f"empirical({path}, price)")


def test_empirical_messages_name_the_file_never_quote_it(tmp_path):
    """The file may not be the user's (a server's, in the app): a message names the file, the
    column and the row, and quotes none of its header or cells."""
    path = tmp_path / "secrets.csv"
    path.write_text("root:x:0:0\nDB_PASSWORD=hunter2\n")
    for text in (f"empirical({path})", f"empirical({path}, root:x:0:0)"):
        with pytest.raises(DistributionError) as caught:
            parse_distribution(text, path="market.price_decline_annual")
        assert str(path) in str(caught.value)
        assert "hunter2" not in str(caught.value)
        if "root:x:0:0)" not in text:
            assert "root:x" not in str(caught.value)


def test_empirical_is_refused_where_files_are_not_allowed(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("price\n0.2\n")
    with pytest.raises(DistributionError, match="reads a file on this machine"):
        parse_distribution(f"empirical({path}, price)", files=False)
    assert parse_distribution("uniform(0, 1)", files=False).ppf(np.array([0.5]))[0] == 0.5
    # nor offered in the kinds a bad one is told to use
    for text in ("garbage", "gamma(1, 2)"):
        with pytest.raises(DistributionError) as caught:
            parse_distribution(text, files=False)
        assert "uniform" in str(caught.value) and "empirical" not in str(caught.value)
        with pytest.raises(DistributionError, match="empirical"):
            parse_distribution(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("uniform(2, 1)", "low < high"),
        ("triangular(1, 5, 3)", "low <= mode <= high"),
        ("normal(1, -0.5)", "sd > 0"),
        ("lognormal(0, -1)", "sigma > 0"),
        ("lognormal(mean=-1, sd=1)", "mean > 0"),
        ("gamma(1, 2)", "unknown distribution 'gamma'"),
        ("uniform(1)", "missing high"),
        ("uniform(a, 2)", "expected a number"),
        ("discrete(1:0.5, 2:0.2)", "sum to 1"),
        ("discrete(1:0.5, 2)", "for every value"),
        ("pert 1 2 3", "expected NAME(ARGS)"),
        ("normal(0, 1, width=3)", "unknown argument 'width'"),
        ("uniform(0, nan)", "finite number"),
        ("discrete(0.5, nan)", "discrete: value 2 is nan; expected finite numbers"),
        ("discrete(0.2, inf)", "discrete: value 2 is inf; expected finite numbers"),
        ("discrete(-inf:0.5, 1:0.5)", "discrete: value 1 is -inf; expected finite numbers"),
        ("discrete(1:nan, 2:1)", "the probability of value 1 is nan; expected finite numbers"),
        ("discrete(1:inf, 2:1)", "the probability of value 1 is inf; expected finite numbers"),
        ("pert(0, 1, 2, lambda=nan)", "pert: lambda = nan; expected a finite number"),
        ("normal(1, 2, low=nan)", "normal: truncation low = nan; expected a finite number"),
        ("normal(1, 2, low=inf)", "normal: truncation low = inf; expected a finite number"),
        ("lognormal(0, 1, high=nan)", "lognormal: truncation high = nan"),
        ("lognormal(mean=inf, sd=1)", "lognormal: mean = inf; expected a finite number"),
        ("lognormal(mean=1, sd=inf)", "lognormal: sd = inf; expected a finite number"),
        ("lognormal(mean=1e-100, sd=1e100)", "sd / mean is too large for a log-normal"),
        ("normal(0.5, 0.01, low=0.9, high=1)", "the truncation range has no probability"),
        # found by review: the last of a repeated keyword won; a repeated value weighed double;
        # a sum of 1.0000001 read "probabilities sum to 1; expected them to sum to 1"
        ("normal(mean=0.7, mean=0.6, sd=0.05)", "argument 'mean' given twice"),
        ("pert(0.5, 0.7, 0.9, lambda=4, lambda=100)", "argument 'lambda' given twice"),
        ("discrete(0.5, 0.6, 0.5)", "value 0.5 given twice; expected each value once"),
        (
            "discrete(0.5:0.3, 0.7:0.7000001)",
            "probabilities sum to 1.0000001; expected them to sum to 1 (within 1e-09)",
        ),
    ],
)
def test_bad_distributions_say_what_is_wrong(text, message):
    with pytest.raises(DistributionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_distribution(text, path="market.price_usd_per_mtok")


def test_a_discrete_of_nan_names_the_value_typed():
    # Found by review: discrete(0.5,nan) passed its checks (Python's min and max skip NaN) and
    # was refused as "utilization.share = None: Input should be a valid number"; discrete(0.2,inf)
    # with the advice to truncate a normal(...).
    with pytest.raises(DistributionError, match="value 2 is nan"):
        Discrete((0.5, math.nan), (0.5, 0.5))
    with pytest.raises(DistributionError, match="value 2 is inf"):
        Discrete((0.2, math.inf), (0.5, 0.5))
    with pytest.raises(DistributionError, match="probability of value 2 is nan"):
        Discrete((0.2, 0.4), (1.0, math.nan))
    assert Discrete(("nominal", "effective"), (0.5, 0.5)).values == ("nominal", "effective")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("discrete(0.5,nan)", "value 2 is nan; expected finite numbers"),
        ("discrete(0.2,inf)", "value 2 is inf; expected finite numbers"),
    ],
)
def test_the_cli_refuses_a_non_finite_discrete_value_naming_it(capsys, text, shown):
    args = ["montecarlo", str(SEED_FILE), "--dist", f"utilization.share={text}", "-n", "10"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert f"utilization.share={text}: discrete: {shown}" in err
    assert "None" not in err and "normal(" not in err


def test_a_discrete_value_outside_the_field_is_named_without_truncation_advice(capsys):
    # A discrete's values are given one by one: the advice to truncate a normal does not apply.
    args = ["montecarlo", str(SEED_FILE), "--dist", "utilization.share=discrete(0.2,2)", "-n", "9"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "2 is one of its values; expected a number >= 0 and <= 1 for every value" in err
    assert "normal(" not in err and "Traceback" not in err


# --- sampling -----------------------------------------------------------------------------


def test_sobol_points_depend_only_on_their_index():
    whole = sobol_unit(5, 0, 1000, 3)
    parts = np.vstack([sobol_unit(5, a, b, 3) for a, b in ((0, 7), (7, 500), (500, 1000))])
    np.testing.assert_array_equal(whole, parts)
    assert not np.array_equal(whole, sobol_unit(6, 0, 1000, 3))  # the seed scrambles


@pytest.mark.parametrize("scramble", [True, False])
def test_sobol_points_are_balanced_in_every_dimension(scramble):
    # A (0, m, 1)-net: 2^m points of each coordinate fall one in each interval [k/2^m, (k+1)/2^m).
    # The plain sequence skips its origin, so it is checked on points 2^m .. 2^(m+1) - 1 (the
    # second net of the sequence), which start at index 2^m - 1 after the skip.
    m = 10
    start = 0 if scramble else 2**m - 1
    u = sobol_unit(3, start, start + 2**m, 4, scramble=scramble)
    cells = np.floor(u * 2**m).astype(int)
    for j in range(4):
        assert np.array_equal(np.sort(cells[:, j]), np.arange(2**m))
    assert u.min() > 0 and u.max() < 1


def test_random_unit_points_are_inside_the_open_interval():
    u = random_unit(block_generator(0, 0), 10000, 2)
    assert u.min() > 0 and u.max() < 1
    assert np.array_equal(u, random_unit(block_generator(0, 0), 10000, 2))
    assert not np.array_equal(u, random_unit(block_generator(0, 1), 10000, 2))


def test_iman_conover_reaches_the_target_and_keeps_the_marginals():
    target = np.array([[1.0, 0.7, -0.3], [0.7, 1.0, 0.0], [-0.3, 0.0, 1.0]])
    u = random_unit(block_generator(2, 0), 4096, 3)
    v = iman_conover(u, target, block_generator(2, 1))
    np.testing.assert_allclose(spearman(v), target, atol=0.03)
    np.testing.assert_array_equal(np.sort(u, axis=0), np.sort(v, axis=0))


@SETTINGS
@given(rho=st.floats(-0.9, 0.9), seed=st.integers(0, 2**32))
def test_iman_conover_pairs_follow_the_sign_of_the_target(rho, seed):
    u = random_unit(block_generator(seed, 0), 512, 2)
    v = iman_conover(u, np.array([[1, rho], [rho, 1]]), block_generator(seed, 1))
    assert abs(spearman(v)[0, 1] - rho) < 0.12


def test_inconsistent_correlations_are_refused():
    c = np.array([[1, 0.9, 0.9], [0.9, 1, -0.9], [0.9, -0.9, 1]])
    with pytest.raises(SamplingError, match="not positive semi-definite") as caught:
        check_correlation(c, ["a", "b", "c"])
    assert "bring some of them closer to 0: a~b=0.9, a~c=0.9, b~c=-0.9" in str(caught.value)
    with pytest.raises(SamplingError, match="expected -1..1"):
        check_correlation(np.array([[1, 1.5], [1.5, 1]]), ["a", "b"])


@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_a_correlation_of_exactly_one_is_refused_as_singular(rho):
    """It read "not positive definite, smallest eigenvalue 1.11e-16" (a positive number) and
    advised to "lower some of them"."""
    with pytest.raises(SamplingError) as caught:
        check_correlation(np.array([[1, rho], [rho, 1]]), ["a", "b"])
    assert str(caught.value) == (
        f"rank correlation of a and b is {rho:g}: a correlation of exactly -1 or 1 makes the "
        "correlation matrix singular (only positive semi-definite), which rank correlation "
        f"cannot impose; expected a value strictly between -1 and 1 (e.g. {0.99 * rho:g} for "
        "inputs that move almost in lockstep)"
    )


def test_a_singular_set_of_correlations_is_called_singular():
    """Correlations below 1 that fix a third pair exactly: the matrix is singular."""
    c = np.array([[1, 0.5, 0.5], [0.5, 1, -0.5], [0.5, -0.5, 1]])  # eigenvalues 0, 1.5, 1.5
    with pytest.raises(SamplingError) as caught:
        check_correlation(c, ["a", "b", "c"])
    assert "inconsistent: the correlation matrix is singular (only positive semi-definite" in str(
        caught.value
    )


def test_rank_correlations_iman_conover_cannot_impose_are_told_apart_from_inconsistent_ones():
    """Rank correlations whose matrix is positive definite (eigenvalues 0.0038, 0.37, 2.63) were
    called "not positive semi-definite (smallest eigenvalue -0.000387)": the eigenvalue of the
    normal scores' matrix 2 sin(pi rho / 6), which Iman-Conover factors. Each matrix is named
    with its own smallest eigenvalue."""
    c = np.array([[1, 0.9, 0.9], [0.9, 1, 0.63], [0.9, 0.63, 1]])
    scores = 2 * np.sin(np.pi * c / 6)
    np.fill_diagonal(scores, 1)
    typed_min, scores_min = np.linalg.eigvalsh(c).min(), np.linalg.eigvalsh(scores).min()
    assert typed_min > 0 > scores_min
    with pytest.raises(SamplingError) as caught:
        check_correlation(c, ["a", "b", "c"])
    message = str(caught.value)
    assert message.startswith(
        "rank correlations a~b=0.9, a~c=0.9, b~c=0.63 form a positive definite matrix "
        f"(smallest eigenvalue {typed_min:.3g}), but Iman-Conover imposes them as correlations "
        "2 sin(pi rho / 6) of normal scores, and the normal scores' correlation matrix is not "
        f"positive semi-definite (smallest eigenvalue {scores_min:.3g}): this method cannot "
        "impose these rank correlations"
    )
    assert "inconsistent" not in message
    # rank correlations of normal scores correlated 0.5, 0.5, -0.5 (a singular scores' matrix)
    target = 6 / np.pi * np.arcsin(0.25)
    c = np.array([[1, target, target], [target, 1, -target], [target, -target, 1]])
    with pytest.raises(SamplingError) as caught:
        check_correlation(c, ["a", "b", "c"])
    assert "the normal scores' correlation matrix is singular (only positive semi-definite" in str(
        caught.value
    )


@pytest.mark.parametrize("seed", ["abc", 1.5, -1, True, None])
def test_seed_must_be_a_non_negative_integer(seed):
    with pytest.raises(SamplingError, match="expected a non-negative integer"):
        check_seed(seed)


# --- streaming statistics -------------------------------------------------------------------


@SETTINGS
@given(
    values=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=200),
    cuts=st.lists(st.integers(1, 199), max_size=6),
)
def test_block_moments_merge_to_the_moments_of_all_values(values, cuts):
    x = np.asarray(values)
    starts = np.array(sorted({0, *[c for c in cuts if c < len(x)]}))
    n, mean, m2, lo, hi, below = BlockMoments.of(x, starts).total()
    assert n == len(x)
    assert mean == pytest.approx(x.mean(), rel=1e-9, abs=1e-6)
    assert m2 / (n - 1) == pytest.approx(x.var(ddof=1), rel=1e-8, abs=1e-3)
    assert (lo, hi, below) == (x.min(), x.max(), np.count_nonzero(x < 0))


@SETTINGS
@given(
    values=st.lists(st.floats(-1e9, 1e9).filter(lambda v: abs(v) > 1e-6), min_size=1, max_size=300),
    q=st.floats(0, 1),
)
def test_sketch_quantiles_are_within_the_relative_accuracy(values, q):
    x = np.asarray(values)
    half = len(x) // 2
    sketch = QuantileSketch(1e-3).add(x[:half]).merge(QuantileSketch(1e-3).add(x[half:]))
    got = sketch.quantile(q)[0]
    ordered = np.sort(x)
    rank = q * (len(x) - 1)
    lo, hi = ordered[int(np.floor(rank))], ordered[int(np.ceil(rank))]
    tol = 1e-3 * max(abs(lo), abs(hi)) * 1.0001
    assert min(lo, hi) - tol <= got <= max(lo, hi) + tol


# --- runs on the engine ---------------------------------------------------------------------


def revenue_per_price() -> float:
    """Revenue over the horizon at 1 USD/Mtok: revenue is linear in the price."""
    return float(project(BASE).metrics["revenue_usd_total"][0])


def test_moments_of_a_linear_output_match_closed_forms():
    k = revenue_per_price()
    tri = Triangular(0.5, 1.0, 2.0)
    result = montecarlo(
        BASE,
        {"market.price_usd_per_mtok": tri},
        2**13,
        seed=4,
        sampling="sobol",
        block_size=1024,
        chunk_size=2048,
    )
    revenue = result.summary.metrics["revenue_usd_total"]
    assert revenue.mean == pytest.approx(k * tri.mean(), rel=1e-4)
    assert revenue.std == pytest.approx(k * math.sqrt(tri.var()), rel=1e-3)
    for q in (0.05, 0.5, 0.95):
        assert revenue.quantiles[q] == pytest.approx(k * tri.ppf(np.array([q]))[0], rel=2e-3)
    assert revenue.undefined == 0 and revenue.count == 2**13


def test_random_sampling_moments_match_closed_forms_within_sampling_error():
    k = revenue_per_price()
    dist = Uniform(0.5, 1.5)
    n = 20000
    result = montecarlo(BASE, {"market.price_usd_per_mtok": dist}, n, seed=9, block_size=2048)
    revenue = result.summary.metrics["revenue_usd_total"]
    sd = k * math.sqrt(dist.var())
    assert abs(revenue.mean - k * dist.mean()) < 4 * sd / math.sqrt(n)
    assert revenue.std == pytest.approx(sd, rel=0.03)


def test_results_do_not_depend_on_the_chunk_size():
    dists = {
        "market.price_usd_per_mtok": "triangular(0.5, 1, 2)",
        "utilization.share": "pert(0.4, 0.7, 0.9)",
        "throughput.tokens_per_s_per_gpu": "normal(2000, 200, low=1000)",
    }
    corr = {("market.price_usd_per_mtok", "utilization.share"): -0.5}
    runs = [
        montecarlo(
            BASE,
            dists,
            1000,
            seed=11,
            correlation=corr,
            block_size=128,
            chunk_size=size,
            keep_rows=True,
        )
        for size in (128, 384, 5000)
    ]
    for other in runs[1:]:
        assert_same(runs[0].rows, other.rows)
        for name, m in runs[0].summary.metrics.items():
            o = other.summary.metrics[name]
            if name in IRR_COLUMNS:
                continue
            assert m.as_dict() == o.as_dict(), name
    rows = runs[0].rows
    rho = spearman(rows[["market.price_usd_per_mtok", "utilization.share"]].to_numpy())[0, 1]
    assert rho == pytest.approx(-0.5, abs=0.06)


def test_sampled_rows_equal_direct_projection_of_the_same_inputs():
    result = montecarlo(
        BASE,
        {"capex.gpu_price_usd": "uniform(20000, 40000)"},
        64,
        seed=1,
        block_size=32,
        keep_rows=True,
        outputs=("npv_usd",),
    )
    price = result.rows["capex.gpu_price_usd"].to_numpy()
    direct = project(ScenarioBatch.repeat(BASE, 64, {"capex.gpu_price_usd": price}))
    np.testing.assert_array_equal(result.rows["npv_usd"].to_numpy(), direct.metrics["npv_usd"])


def test_npv_risk_figures_follow_their_definitions():
    result = montecarlo(
        BASE,
        {"market.price_usd_per_mtok": "uniform(0.2, 2)"},
        4000,
        seed=3,
        keep_rows=True,
        block_size=1000,
    )
    npv = result.rows["npv_usd"].to_numpy()
    risk = result.summary.risk
    p5 = np.quantile(npv, 0.05)
    assert risk["probability_of_loss"] == pytest.approx(np.mean(npv < 0))
    assert risk["value_at_risk_95_usd"] == pytest.approx(-p5)
    assert risk["expected_shortfall_95_usd"] == pytest.approx(-npv[npv <= p5].mean())
    assert 0 < risk["probability_of_loss"] < 1


def test_sketch_summary_agrees_with_exact_quantiles():
    options = {"seed": 5, "block_size": 500}
    dists = {"market.price_usd_per_mtok": "uniform(0.2, 2)"}
    exact = montecarlo(BASE, dists, 3000, **options).summary
    sketch = montecarlo(BASE, dists, 3000, exact_limit=0, **options).summary
    assert sketch.quantile_method.startswith("sketch")
    for name in ("npv_usd", "revenue_usd_total"):
        a, b = exact.metrics[name], sketch.metrics[name]
        assert (a.mean, a.std) == (b.mean, b.std)
        for q in a.quantiles:
            assert b.quantiles[q] == pytest.approx(a.quantiles[q], rel=2e-4, abs=1.0)


def test_sketched_quantiles_stay_within_the_exact_minimum_and_maximum():
    # A sketch answers with its bucket's value: min_dscr P5 1.299916 under a minimum of 1.3 (a
    # DSCR sized to 1.3 in most scenarios), and value at risk past the worst NPV. Clamped to the
    # exact [min, max] the run keeps, as no quantile of the values can fall outside it.
    low, high = 1.2999999999999996, 123456.0
    x = np.where(np.arange(1000) % 10 == 0, high, low)  # 90% at the minimum, 10% at the maximum
    sketch = QuantileSketch(SKETCH_RELATIVE_ACCURACY).add(x)
    assert sketch.quantile(0.05)[0] < low and sketch.quantile(0.95)[0] > high  # the bucket values
    metrics = {"min_dscr": x, "npv_usd": -x}
    chunk = summarize_chunk(metrics, 0, 1000, np.array([0]), exact=False)
    summary = combine([chunk], 1000)
    dscr = summary.metrics["min_dscr"]
    assert (dscr.minimum, dscr.maximum) == (low, high)
    assert dscr.quantiles[0.05] == low and dscr.quantiles[0.5] == low
    assert dscr.quantiles[0.95] == high
    assert summary.metrics["npv_usd"].quantiles[0.05] == -high
    exact = combine([summarize_chunk(metrics, 0, 1000, np.array([0]), exact=True)], 1000)
    assert summary.risk == exact.risk  # VaR and expected shortfall: the worst NPV, -high


def test_summary_json_is_plain_json():
    from econ.analysis.montecarlo import summary_json

    result = montecarlo(BASE, {"utilization.share": "uniform(0.5, 0.9)"}, 200, block_size=50)
    text = json.dumps(summary_json(result), allow_nan=False)
    data = json.loads(text)
    assert data["metadata"]["plan"]["distributions"]["utilization.share"]["dist"] == "uniform"
    assert set(data["metrics"]["npv_usd"]) >= {"mean", "std", "p5", "p50", "p95", "undefined"}


# --- bad plans ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dists, message",
    [
        (
            {"utilization.share": "normal(0.7, 0.2)"},
            "utilization.share = normal.*expected a number >= 0",
        ),
        ({"fleet.gpu_count": "uniform(4, 12)"}, "takes whole numbers"),
        ({"financing.debt_rate_quote": "discrete(nominal, fixed)"}, "'fixed' is not a choice"),
        # the closest field alone, not every field of the section (econ.text.closest_names)
        ({"utilization.shar": "uniform(0, 1)"}, r"did you mean utilization.share\? expected"),
        ({"name": "uniform(0, 1)"}, "not a numeric one"),
        ({"capex.gpu_price_usd": "uniform(-5, 10)"}, "expected a number > 0"),
    ],
)
def test_bad_plans_name_the_field(dists, message):
    with pytest.raises(BatchInputError, match=message):
        montecarlo(BASE, dists, 10)


def test_cross_field_rule_at_the_support_is_checked_before_running():
    # The ramp bound (<= horizon) is a rule between fields, not a field bound.
    with pytest.raises(BatchInputError, match="utilization.ramp_months = 30 months, longer than"):
        montecarlo(BASE, {"utilization.ramp_months": "discrete(0, 30)"}, 10)


def test_correlation_arguments_are_checked():
    paths = ["market.price_usd_per_mtok", "utilization.share"]
    c = parse_correlations(["market.price_usd_per_mtok,utilization.share=0.4"], paths)
    assert c[0, 1] == c[1, 0] == 0.4
    with pytest.raises(BatchInputError, match="has no distribution"):
        parse_correlations(["market.price_usd_per_mtok,power.pue=0.4"], paths)
    with pytest.raises(BatchInputError, match="expected PATH1,PATH2=RHO"):
        parse_correlations(["market.price_usd_per_mtok=0.4"], paths)
    with pytest.raises(BatchInputError, match="given twice"):
        parse_dists(["utilization.share=uniform(0,1)", "utilization.share=uniform(0,1)"])


def test_plan_rejects_bad_sizes_and_samplings():
    dists = {"utilization.share": Uniform(0.1, 0.9)}
    with pytest.raises(SamplingError, match="expected a positive number"):
        MonteCarloPlan(dists, 0)
    # n=1e4 is a float: it was "expected a positive number of scenarios"
    with pytest.raises(
        SamplingError,
        match=r"n = 10000\.0: expected a whole number of scenarios, 1 or more \(10000, not ",
    ):
        MonteCarloPlan(dists, 1e4)
    with pytest.raises(SamplingError, match=r"n = 2\.5: expected a whole number of scenarios"):
        MonteCarloPlan(dists, 2.5)
    with pytest.raises(SamplingError, match="expected one of: random, sobol"):
        MonteCarloPlan(dists, 10, sampling="lhs")

    with pytest.raises(SamplingError, match=r"sobol sampling draws at most 1,073,741,824 points"):
        MonteCarloPlan(dists, 2**30 + 1, sampling="sobol")
    with pytest.raises(SamplingError, match="1,073,741,823 points"):
        MonteCarloPlan(dists, 2**30, sampling="sobol-plain")
    MonteCarloPlan(dists, 2**30 + 1)  # random sampling has no such limit


def test_cli_refuses_more_scenarios_than_can_run_naming_the_size(capsys):
    """-n 10^13 allocated 18.2 GiB of block starts at setup and ended in a numpy traceback."""
    args = ["montecarlo", str(SEED_FILE), "--dist", "utilization.share=uniform(0.5,0.9)"]
    assert main([*args, "-n", "10000000000000"]) == 3
    err = capsys.readouterr().err
    assert (
        "the Monte Carlo run has 10,000,000,000,000 scenarios; expected at most 10,000,000,000 in "
        "one run" in err
    )
    assert "years on one core" in err and "Traceback" not in err


def test_chunks_of_a_large_run_are_made_from_their_index():
    """The last chunk of a 10^10-scenario plan draws its inputs without the run's other blocks."""
    import tracemalloc

    from econ.analysis.montecarlo import MonteCarlo
    from econ.analysis.runner import chunk_bounds

    plan = MonteCarloPlan({"utilization.share": Uniform(0.5, 0.9)}, 10**10, seed=1)
    job = MonteCarlo(BASE, plan)
    tracemalloc.start()
    try:
        bounds = chunk_bounds(job, 16_384)
        start, stop, blocks = bounds[-1]
        values = job.inputs(start, stop)["utilization.share"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stop == 10**10 and len(values) == stop - start and list(blocks)[0] == start
    assert peak < 5_000_000  # one chunk's draws, not the run's 2.4 million block starts
    # the same rows whichever chunk they are drawn in
    np.testing.assert_array_equal(
        values[-4096:], job.inputs(stop - 4096 - stop % 4096, stop)["utilization.share"][-4096:]
    )


def test_the_summary_merges_chunks_as_they_arrive_in_bounded_memory():
    """Per-block moments used to be kept for every chunk until the end (a few kB each: 2.4
    million blocks at 10^10 scenarios); they are merged in block order as soon as the chunks
    before them are in, with the same bits as merging all at once, in any arrival order."""
    import tracemalloc

    rng = np.random.default_rng(4)
    values = rng.normal(size=60_000)
    values[rng.random(60_000) < 0.01] = np.nan
    block = 100
    chunks = [
        summarize_chunk(
            {"npv_usd": values[a : a + 300]}, a, a + 300, np.arange(a, a + 300, block), False
        )
        for a in range(0, 60_000, 300)
    ]
    in_order = combine(chunks, 60_000)
    shuffled = [chunks[i] for i in rng.permutation(len(chunks))]
    assert combine(shuffled, 60_000).metrics["npv_usd"] == in_order.metrics["npv_usd"]
    count, mean, m2, lo, hi, below = BlockMoments.of(values, np.arange(0, 60_000, block)).total()
    m = in_order.metrics["npv_usd"]
    assert (m.count, m.mean, m.minimum, m.maximum, m.below_zero) == (count, mean, lo, hi, below)
    assert m.std == np.sqrt(m2 / (count - 1))

    # memory: chunks added in order keep nothing per chunk (the first ones set up the sketch's
    # buckets, whose size depends on the values' spread, and warm allocator caches)
    def add(accumulator, k):  # a chunk as a worker would send it, dropped once added
        accumulator.add(
            summarize_chunk({"npv_usd": values[:8]}, 8 * k, 8 * k + 8, np.array([8 * k]), False)
        )

    accumulator = SummaryAccumulator(32_000)
    tracemalloc.start()
    try:
        for k in range(2_500):
            add(accumulator, k)
        before = tracemalloc.get_traced_memory()[0]
        for k in range(2_500, 4_000):
            add(accumulator, k)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 50_000, grown  # was about 1 kB per chunk
    assert accumulator.result().metrics["npv_usd"].count == 4_000 * np.isfinite(values[:8]).sum()


def test_cli_csv_summary_carries_the_risk_figures(capsys):
    """--format csv printed only the per-output table: probability of loss, VaR, ES and the
    probability of a covenant breach were in the table format and JSON only."""
    import io

    import pandas as pd

    args = [
        "montecarlo", str(SEED_FILE), "--hold-debt", "-n", "300", "--seed", "2",
        "--dist", "market.price_usd_per_mtok=triangular(0.15,0.3,0.4)",
    ]  # fmt: skip
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main([*args, "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("output")
    risk = {
        **data["npv_risk"],
        "probability_of_covenant_breach": data["probability_of_covenant_breach"],
    }
    assert list(frame.index[-4:]) == list(risk)
    for key, value in risk.items():
        assert frame.loc[key, "value"] == pytest.approx(value, rel=1e-15)
    assert frame.loc["npv_usd", "count"] == 300 and np.isnan(frame.loc["npv_usd", "value"])
    assert frame.loc["npv_usd", "p50"] == pytest.approx(data["metrics"]["npv_usd"]["p50"])


def test_a_run_in_which_no_output_moves_says_so(capsys):
    """depreciation.factor is read only by declining-balance depreciation: every draw gives the
    same outputs on a straight-line scenario, and the run says so (stderr and metadata)."""
    from econ.analysis.montecarlo import summary_json

    result = montecarlo(
        BASE, {"depreciation.factor": "uniform(1.5, 2.5)"}, 50, outputs=("npv_usd",)
    )
    assert summary_json(result)["metadata"]["notes"] == [
        "none of the outputs (npv_usd) changes across the 50 scenarios: depreciation.factor has "
        "no effect on them in mc"
    ]
    moved = montecarlo(BASE, {"utilization.share": "uniform(0.5, 0.9)"}, 50, outputs=("npv_usd",))
    assert "notes" not in moved.metadata
    args = [
        "montecarlo",
        str(SEED_FILE),
        "-n",
        "20",
        "--dist",
        "depreciation.factor=uniform(1.5,2.5)",
    ]
    assert main([*args, "--output", "npv_usd"]) == 0
    assert (
        "note: none of the outputs (npv_usd) changes across the 20 scenarios"
        in capsys.readouterr().err
    )


def test_montecarlo_names_inputs_of_the_wrong_kind():
    """Each was an AttributeError ('str' object has no attribute 'capex', 'tuple' object has no
    attribute 'support', 'Client' object has no attribute 'describe')."""
    from econ.analysis.executors import ExecutorError
    from econ.errors import InputError

    dist = {"utilization.share": "uniform(0.5, 0.9)"}
    with pytest.raises(InputError, match=r"base is str '.*\.toml'; expected a Scenario"):
        montecarlo(str(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"), dist, 8)
    with pytest.raises(
        BatchInputError,
        match=r"utilization.share = \(0.5, 0.9\): expected a distribution, its text form "
        r"\(e.g. 'uniform\(0.5, 0.9\)'\)",
    ):
        montecarlo(BASE, {"utilization.share": (0.5, 0.9)}, 8)
    with pytest.raises(BatchInputError, match="distributions is list; expected a mapping"):
        montecarlo(BASE, [dist], 8)

    # TypeError: run() got an unexpected keyword argument 'chunksize' (montecarlo was called)
    with pytest.raises(
        InputError,
        match=r"montecarlo\(\) takes no option 'chunksize' \(did you mean chunk_size\?\); its "
        r"run options are: executor, chunk_size, ",
    ):
        montecarlo(BASE, dist, 8, chunksize=10)
    with pytest.raises(InputError, match=r"montecarlo\(\) sets summarize itself"):
        montecarlo(BASE, dist, 8, summarize=False)

    class Client:  # a dask.distributed.Client, say
        pass

    with pytest.raises(ExecutorError, match=r'executor is .*Client; .*make_executor\("dask", '):
        montecarlo(BASE, dist, 8, executor=Client())


def test_the_header_names_no_seed_where_sobol_plain_uses_none(capsys):
    """sobol-plain points are the same for every seed; the header said "seed 7" all the same.
    With --corr the seed draws the rank-correlation permutations, and is named."""
    args = ["montecarlo", str(SEED_FILE), "-n", "16", "--sampling", "sobol-plain", "--seed", "7"]
    args += ["--dist", "utilization.share=uniform(0.5,0.9)"]
    assert main(args) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "seed 7" not in header
    assert "sobol-plain sampling (no seed: the same points for every seed)" in header
    corr = ["--dist", "market.price_decline_annual=uniform(0.1,0.5)"]
    corr += ["--corr", "utilization.share,market.price_decline_annual=0.5"]
    assert main([*args, *corr]) == 0
    assert "seed 7, sobol-plain sampling" in capsys.readouterr().out.splitlines()[0]


def test_a_chunk_size_rounded_up_to_whole_sampling_blocks_is_said(capsys):
    # --chunk-size 100 ran chunks of 4,096 rows (one sampling block) unsaid.
    from econ.analysis.montecarlo import BLOCK_SIZE

    args = ["montecarlo", str(SEED_FILE), "-n", str(2 * BLOCK_SIZE), "--no-progress"]
    args += ["--dist", "utilization.share=uniform(0.5,0.9)", "--format", "csv"]
    assert main([*args, "--chunk-size", "100"]) == 0
    assert capsys.readouterr().err == (
        f"note: --chunk-size 100 (chunk_size= from Python) is rounded up to {BLOCK_SIZE:,} rows, "
        f"whole sampling blocks of {BLOCK_SIZE:,} rows, so that the draws do not depend on the "
        "chunk size\n"
    )
    assert main([*args, "--chunk-size", str(BLOCK_SIZE + 1)]) == 0
    assert f"rounded up to {2 * BLOCK_SIZE:,} rows" in capsys.readouterr().err
    for whole in (str(BLOCK_SIZE), str(4 * BLOCK_SIZE)):  # whole blocks; one chunk holds the run
        assert main([*args, "--chunk-size", whole]) == 0
        assert capsys.readouterr().err == ""


def test_rows_of_a_run_that_kept_none_say_how_to_get_them(tmp_path):
    """`result.rows` was None, so `result.rows["npv_usd"]` failed as "'NoneType' object is not
    subscriptable"."""
    import re

    import pandas as pd

    from econ.analysis.output import write_rows
    from econ.analysis.runner import RowsNotKeptError

    dist = {"utilization.share": "uniform(0.5, 0.9)"}
    mc = montecarlo(BASE, dist, 64, 1)
    assert mc.kept_rows is None
    with pytest.raises(RowsNotKeptError) as caught:
        mc.rows["npv_usd"]  # noqa: B018
    assert str(caught.value) == (
        "this montecarlo run kept no rows (keep_rows=False); its summary is .summary; rerun "
        "with keep_rows=True (or with store=DIR to keep them on disk)"
    )
    stored = montecarlo(BASE, dist, 64, 1, store=tmp_path / "chunks")
    folder = re.escape(str(tmp_path / "chunks"))
    with pytest.raises(RowsNotKeptError, match=f"its chunk files in {folder} hold them"):
        stored.rows  # noqa: B018
    write_rows(stored, tmp_path / "mc.csv")  # as the message says: from the chunk files
    kept = montecarlo(BASE, dist, 64, 1, keep_rows=True)
    assert kept.rows is kept.kept_rows and len(kept.rows) == 64
    assert pd.read_csv(tmp_path / "mc.csv")["npv_usd"].tolist() == pytest.approx(
        kept.rows["npv_usd"].tolist(), rel=1e-15
    )


def test_run_results_and_summaries_have_a_short_repr():
    """repr(RunResult) of a Monte Carlo run was some 17,800 characters (its summary 16,800)."""
    from econ.analysis import sweep

    dist = {"utilization.share": "uniform(0.5, 0.9)"}
    mc = montecarlo(BASE, dist, 64, 1)
    assert repr(mc) == (
        "<RunResult: montecarlo, 64 scenarios, 10 outputs [npv_usd, lcot_usd_per_mtok, "
        "irr_project_annual, irr_equity_annual, ... (6 more)]; no rows kept (keep_rows=False), "
        "summary; 0 notes; see .summary, .metadata>"
    )
    assert repr(mc.summary).startswith(
        "<RunSummary: 64 scenarios, 10 metrics [npv_usd, lcot_usd_per_mtok, irr_project_annual, "
        "irr_equity_annual, ... (6 more)], exact"
    )
    assert len(repr(mc.summary)) < 300
    swept = sweep(BASE, grid={"utilization.share": [0.5, 0.6]})
    assert repr(swept).startswith("<RunResult: sweep, 2 scenarios, ")
    assert "; 2 rows kept; 0 notes; see .rows, .metadata>" in repr(swept)
    assert len(repr(swept)) < 300
    # A run's notes (the CLI's `note:` lines) are on the result and its repr, not only deep in
    # .metadata: a notebook user saw no sign that an input moved nothing.
    idle = sweep(BASE, grid={"depreciation.factor": [1.5, 2.0]})
    assert idle.notes == idle.metadata["notes"]
    assert "changes across the 2 scenarios: depreciation.factor has no effect" in idle.notes[0]
    assert "; 1 note (.notes); see .rows, .metadata>" in repr(idle)


def test_a_mistyped_output_gets_the_nearest_name(capsys):
    """`--output npv_us` listed every output without the "did you mean" a mistyped path gets."""
    from econ.cli import main

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    argv = ["montecarlo", str(seed), "-n", "10", "--dist", "utilization.share=uniform(0.5,0.9)",
            "--output", "npv_us"]  # fmt: skip
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        "error: output 'npv_us' is not an engine output (did you mean npv_usd?); expected one "
        "of: "
    )


def test_the_docs_snippet_reading_a_projections_results_runs_as_pasted(monkeypatch):
    """It raised NameError: project and batch were not defined in it."""
    import re

    text = (ROOT / "docs" / "batch.md").read_text()
    section = text[text.index("### Reading a projection's results") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(ROOT)
    names: dict = {}
    exec(compile(block, "docs/batch.md", "exec"), names)
    assert len(names["frame"]) == 3 and "npv_usd" in names["frame"].columns


def test_an_output_file_says_which_fields_were_set(tmp_path):
    """A Parquet file of `--set utilization.share=0.8` held only the scenario's hash: nothing
    said what was set (a data scientist's review)."""
    import pyarrow.parquet as pq

    out = tmp_path / "mc.parquet"
    args = ["montecarlo", str(SEED_FILE), "-n", "8", "--no-progress", "--out", str(out)]
    args += ["--dist", "market.price_usd_per_mtok=uniform(0.2,0.4)"]
    assert main([*args, "--set", "utilization.share=0.8"]) == 0
    metadata = json.loads(pq.read_schema(out).metadata[b"econ"])
    assert list(metadata["overridden"]) == ["utilization.share"]
    assert metadata["overridden"]["utilization.share"]["value"] == 0.8
    assert metadata["overridden"]["utilization.share"]["source"].startswith("overridden (was: 0.7")


@pytest.mark.parametrize("sampling", ["random", "sobol"])
def test_the_order_distributions_are_given_in_draws_nothing_different(sampling):
    """A sampling dimension is a path's place among the sorted paths: the run's fingerprint (its
    plan hashed with sorted keys, which a resumed run matches) and a memo's stamp record the
    plan that ran whatever order --dist gave, and a correlation follows its paths."""
    from econ.analysis.montecarlo import MonteCarlo

    dists = {
        "utilization.share": Uniform(0.5, 0.9),
        "market.price_usd_per_mtok": Triangular(0.5, 1.0, 2.0),
        "capex.gpu_price_usd": Uniform(20000.0, 40000.0),
    }
    pair = ("utilization.share", "market.price_usd_per_mtok")
    jobs = []
    for paths in (list(dists), sorted(dists)):
        corr = parse_correlations([f"{pair[0]},{pair[1]}=-0.6"], paths)
        plan = MonteCarloPlan({p: dists[p] for p in paths}, 512, 7, sampling, corr, block_size=256)
        jobs.append(MonteCarlo(BASE, plan))
    given, ordered = (job.inputs(0, 512) for job in jobs)
    for path in dists:
        np.testing.assert_array_equal(given[path], ordered[path])
    assert spearman(np.column_stack([given[p] for p in pair]))[0, 1] == pytest.approx(-0.6, abs=0.1)
    assert jobs[0].plan_.paths == tuple(sorted(dists))
    assert jobs[0].metadata(512)["fingerprint"] == jobs[1].metadata(512)["fingerprint"]
