"""Sensitivity: tornado, Sobol indices and Morris effects against analytic functions and the engine."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import load_scenario, project
from econ.analysis.distributions import Uniform
from econ.analysis.sampling import SamplingError
from econ.analysis.sensitivity import (
    SWING_FINITE,
    SWING_NONE,
    SWING_UNDEFINED,
    analyze_function,
    ishigami,
    ishigami_indices,
    morris,
    morris_effects,
    morris_trajectories,
    percent_ranges,
    sobol,
    sobol_indices,
    tornado,
    tornado_ranks,
)
from econ.analysis.validation import BatchInputError
from econ.cli import main
from econ.errors import InputError
from econ.scenario import validate_dict
from tests.conftest import ROOT

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
BASE = validate_dict(
    {
        "name": "sens",
        "horizon_months": 24,
        "fleet": {"gpu_count": 8},
        "capex": {"gpu_price_usd": 30000.0},
        "depreciation": {"life_years": 2.0},
        "throughput": {"tokens_per_s_per_gpu": 2000.0},
        "utilization": {"share": 0.7},
        "market": {"price_usd_per_mtok": 1.0},
    }
)
PI = np.pi


def test_ishigami_closed_form_reference_values():
    # Published indices for a = 7, b = 0.1 (Saltelli et al., Global Sensitivity Analysis: The
    # Primer, 2008, section 4.7): S = 0.3139, 0.4424, 0; ST = 0.5576, 0.4424, 0.2437.
    first, total = ishigami_indices()
    np.testing.assert_allclose(first, [0.3139, 0.4424, 0.0], atol=1e-4)
    np.testing.assert_allclose(total, [0.5576, 0.4424, 0.2437], atol=1e-4)


@pytest.mark.parametrize("sampling, n, tol", [("sobol", 2**13, 0.02), ("random", 2**13, 0.05)])
def test_sobol_estimators_recover_the_ishigami_indices(sampling, n, tol):
    dists = [Uniform(-PI, PI)] * 3
    first, total = analyze_function(ishigami, dists, n=n, seed=1, sampling=sampling)
    ref_first, ref_total = ishigami_indices()
    np.testing.assert_allclose(first, ref_first, atol=tol)
    np.testing.assert_allclose(total, ref_total, atol=tol)


@settings(max_examples=30, deadline=None)
@given(a=st.lists(st.floats(-5, 5).filter(lambda v: abs(v) > 0.1), min_size=2, max_size=4))
def test_sobol_indices_of_a_linear_function(a):
    # y = sum a_i x_i, independent U(0, 1): S_i = ST_i = a_i^2 / sum a_j^2 (no interactions).
    coef = np.asarray(a)
    first, total = analyze_function(lambda x: x @ coef, [Uniform(0, 1)] * len(a), n=2**11, seed=2)
    expected = coef**2 / np.sum(coef**2)
    np.testing.assert_allclose(first, expected, atol=0.03)
    np.testing.assert_allclose(total, expected, atol=0.03)


def test_sobol_indices_of_a_constant_output_are_undefined():
    first, total = sobol_indices(np.ones(8), np.ones(8), np.ones((2, 8)))
    assert np.isnan(first).all() and np.isnan(total).all()


def test_morris_effects_of_a_linear_function_are_its_coefficients():
    u = morris_trajectories(3, 12, levels=4, seed=5)
    mu, mu_star, sigma = morris_effects(u, 2 * u[:, 0] - 3 * u[:, 1], 3)
    np.testing.assert_allclose(mu, [2, -3, 0], atol=1e-12)
    np.testing.assert_allclose(mu_star, [2, 3, 0], atol=1e-12)
    np.testing.assert_allclose(sigma, 0, atol=1e-12)


def test_morris_trajectories_move_one_input_at_a_time_on_the_grid():
    u = morris_trajectories(4, 10, levels=6, seed=1).reshape(10, 5, 4)
    assert np.all((u >= 0) & (u <= 1))
    steps = np.abs(np.diff(u, axis=1))
    assert np.all(np.count_nonzero(steps > 1e-12, axis=2) == 1)
    np.testing.assert_allclose(steps.max(axis=2), 6 / (2 * 5))
    np.testing.assert_allclose(u * 5, np.round(u * 5), atol=1e-12)  # on the 6-level grid


def test_ishigami_morris_ranks_x3_above_zero_effect():
    u = morris_trajectories(3, 50, seed=3)
    _, mu_star, _ = morris_effects(u, ishigami(-PI + 2 * PI * u), 3)
    assert mu_star.min() > 0  # every input matters (x3 through its interaction)


# --- on the engine --------------------------------------------------------------------------


def test_tornado_swing_of_a_linear_output_is_exact():
    k = float(project(BASE).metrics["revenue_usd_total"][0])  # revenue at 1 USD/Mtok
    ranges = {"market.price_usd_per_mtok": (0.5, 2.0), "power.pue": (1.1, 1.5)}
    result = tornado(BASE, ranges, outputs=("revenue_usd_total", "npv_usd"))
    table = result.table
    revenue = table[table.output == "revenue_usd_total"].set_index("input")
    assert revenue.loc["market.price_usd_per_mtok", "swing"] == pytest.approx(1.5 * k, rel=1e-12)
    assert revenue.loc["power.pue", "swing"] == 0.0
    assert revenue.loc["market.price_usd_per_mtok", "rank"] == 1
    npv = table[table.output == "npv_usd"]
    assert npv["swing"].is_monotonic_decreasing
    assert (npv["output_base"] == float(project(BASE).metrics["npv_usd"][0])).all()


def test_percent_ranges_around_the_base():
    ranges = percent_ranges(BASE, ["market.price_usd_per_mtok", "fleet.gpu_count"], 25)
    assert ranges["market.price_usd_per_mtok"] == pytest.approx((0.75, 1.25))
    assert ranges["fleet.gpu_count"] == (6, 10)
    with pytest.raises(BatchInputError, match="not set in the base"):
        percent_ranges(BASE, ["capex.system_price_usd"], 10)
    with pytest.raises(BatchInputError, match="above 0"):
        percent_ranges(BASE, ["market.price_usd_per_mtok"], 0)


def test_percent_ranges_are_the_decimal_products_not_their_binary_error(capsys):
    # The seed's price 0.3261 and life 6 years at +-10% printed as 0.29349000000000003 and
    # 6.6000000000000005 in the tornado's CSV: the ends are the decimal products.
    from decimal import Decimal

    seed = load_scenario(SEED_FILE)
    paths = ["market.price_usd_per_mtok", "depreciation.life_years"]
    ranges = percent_ranges(seed, paths, 10)
    for path in paths:
        value = Decimal(repr(_value(seed, path)))
        assert ranges[path] == (float(value * Decimal("0.9")), float(value * Decimal("1.1")))
    assert ranges["market.price_usd_per_mtok"] == (0.29349, 0.35871)
    args = ["sensitivity", str(SEED_FILE), "--output", "npv_usd", "--format", "csv"]
    assert main([*args, *(f"--vary={p}" for p in paths)]) == 0
    rows = {r["input"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert (rows[paths[0]]["low"], rows[paths[0]]["high"]) == ("0.29349", "0.35871")
    assert (rows[paths[1]]["low"], rows[paths[1]]["high"]) == ("5.4", "6.6")


def _value(scenario, path: str):
    node = scenario
    for part in path.split("."):
        node = getattr(node, part)
    return node


def test_engine_sobol_indices_of_a_product_match_closed_forms():
    # tokens_total = c X Y with X ~ U(1000, 3000) tokens/s and Y ~ U(0.4, 0.8) utilization:
    # V_X = Var X (E Y)^2, V_Y = Var Y (E X)^2, V = E[X^2] E[Y^2] - (E X E Y)^2.
    x, y = Uniform(1000, 3000), Uniform(0.4, 0.8)
    ex2, ey2 = x.var() + x.mean() ** 2, y.var() + y.mean() ** 2
    v = ex2 * ey2 - (x.mean() * y.mean()) ** 2
    first_ref = [x.var() * y.mean() ** 2 / v, y.var() * x.mean() ** 2 / v]
    total_ref = [1 - y.var() * x.mean() ** 2 / v, 1 - x.var() * y.mean() ** 2 / v]
    result = sobol(
        BASE,
        {"throughput.tokens_per_s_per_gpu": (1000, 3000), "utilization.share": (0.4, 0.8)},
        n=2**11,
        seed=4,
        outputs=("tokens_total",),
        chunk_size=1000,
    )
    table = result.table
    np.testing.assert_allclose(table["first_order"], first_ref, atol=0.02)
    np.testing.assert_allclose(table["total"], total_ref, atol=0.02)
    assert (table["used"] == 2**11).all()
    assert (table["total_conf"] > 0).all()


def test_an_output_undefined_at_some_design_points_gets_no_sobol_indices(capsys):
    # The seed's project IRR is undefined at some of these points: the samples where it is
    # defined everywhere gave first-order indices summing to 1.20 (a variance share above 1, so
    # no Sobol index), printed as such. Now its indices are null and a note says why; the NPV,
    # defined at every point, keeps the indices of the design's rows.
    ranges = {"utilization.share": (0.5, 0.9), "market.price_decline_annual": (0.15, 0.5)}
    seed = load_scenario(SEED_FILE)
    result = sobol(seed, ranges, n=256, outputs=("irr_project_annual", "npv_usd"), resamples=20)
    y = result.run.rows["irr_project_annual"].to_numpy().reshape(4, 256)
    ok = np.isfinite(y).all(axis=0)
    assert 0 < ok.sum() < 256
    assert sobol_indices(y[0, ok], y[1, ok], y[2:, ok])[0].sum() > 1  # what was printed
    table = result.table.set_index("output")
    irr = table.loc["irr_project_annual"]
    assert irr[["first_order", "first_order_conf", "total", "total_conf"]].isna().all().all()
    assert (irr["used"] == ok.sum()).all()
    assert any(
        f"irr_project_annual has a value at every point of the Sobol design in {ok.sum()} of "
        "the 256 base samples only: its Sobol indices are null"
        in note
        and "such as npv_usd or mirr_project_annual" in note
        for note in result.run.notes
    )
    npv = result.run.rows["npv_usd"].to_numpy().reshape(4, 256)
    first, total = sobol_indices(npv[0], npv[1], npv[2:])
    np.testing.assert_array_equal(table.loc["npv_usd", "first_order"], first)
    np.testing.assert_array_equal(table.loc["npv_usd", "total"], total)
    assert (table.loc["npv_usd", "used"] == 256).all()
    assert not any(note.startswith("npv_usd") for note in result.run.notes)
    args = ["sensitivity", str(SEED_FILE), "--method", "sobol", "-n", "64"]
    args += [f"--range={p}={lo},{hi}" for p, (lo, hi) in ranges.items()]
    assert main([*args, "--output", "irr_project_annual", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    shown = ("first_order", "first_order_conf", "total", "total_conf")
    assert [[r[k] for k in shown] for r in rows] == [["", "", "", ""]] * 2
    assert "its Sobol indices are null" in err
    assert "n/a: irr_project_annual is undefined (null) at some points of the Sobol design" in err


def test_engine_morris_on_a_linear_output():
    k = float(project(BASE).metrics["revenue_usd_total"][0])
    result = morris(
        BASE,
        {"market.price_usd_per_mtok": (0.5, 1.5), "power.pue": (1.1, 1.5)},
        trajectories=6,
        outputs=("revenue_usd_total",),
    )
    table = result.table.set_index("input")
    assert table.loc["market.price_usd_per_mtok", "mu_star"] == pytest.approx(k, rel=1e-9)
    assert table.loc["power.pue", "mu_star"] == 0.0


def test_bad_sensitivity_inputs():
    with pytest.raises(BatchInputError, match="bounded distribution"):
        morris(BASE, {"market.price_usd_per_mtok": "lognormal(0, 1)"})
    with pytest.raises(SamplingError, match="at least 2 base samples"):
        sobol(BASE, {"utilization.share": (0.2, 0.8)}, n=1)
    with pytest.raises(BatchInputError, match="at least one input"):
        sobol(BASE, {})
    with pytest.raises(InputError, match="'npv' is not an engine output"):
        tornado(BASE, {"utilization.share": (0.2, 0.8)}, outputs=("npv",))
    with pytest.raises(BatchInputError, match="utilization.share = 1.5"):
        tornado(BASE, {"utilization.share": (0.2, 1.5)})


def test_cli_tornado_json_and_sobol_table(capsys):
    code = main(
        [
            "sensitivity",
            str(SEED_FILE),
            "--vary",
            "market.price_usd_per_mtok",
            "--range",
            "financing.discount_rate_annual=0.08,0.16",
            "--output",
            "npv_usd",
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "tornado"
    assert [r["rank"] for r in data["results"]] == [1, 2]
    code = main(
        [
            "sensitivity",
            str(SEED_FILE),
            "--method",
            "sobol",
            "-n",
            "64",
            "--range",
            "market.price_usd_per_mtok=0.2,0.4",
            "--dist",
            "market.price_decline_annual=triangular(0.15,0.3,0.5)",
            "--output",
            "npv_usd",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "sobol: npv_usd" in out and "first_order" in out
    assert main(["sensitivity", str(SEED_FILE), "--range", "utilization.share=0.5"]) == 3


def test_reports_write_markdown_and_png(tmp_path):
    pytest.importorskip("matplotlib")
    from econ.analysis.report import sensitivity_report

    result = tornado(BASE, {"market.price_usd_per_mtok": (0.5, 2.0), "power.pue": (1.1, 1.5)})
    md, png = sensitivity_report(result, tmp_path / "tornado")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "market.price_usd_per_mtok" in md.read_text()
    with pytest.raises(InputError, match=r"tornado-tornado\.png exist; use --force"):
        sensitivity_report(result, tmp_path / "tornado")


def test_morris_effects_of_an_output_null_along_one_input_are_nan_without_warnings():
    import warnings

    u = morris_trajectories(2, 6, levels=4, seed=3)
    y = np.where(np.diff(np.r_[0.0, u[:, 1]]) != 0, np.nan, u[:, 0])  # NaN after each move of x1
    y[::3] = u[::3, 0]  # each trajectory's start point is finite
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mu, mu_star, sigma = morris_effects(u, y, 2)
    assert np.isnan(mu[1]) and np.isnan(mu_star[1]) and np.isnan(sigma[1])


def test_morris_statistics_equal_numpys_nan_statistics_where_effects_are_missing():
    rng = np.random.default_rng(11)
    u = morris_trajectories(3, 40, levels=4, seed=2)
    y = np.sin(3 * u[:, 0]) + u[:, 1] * u[:, 2]
    y[rng.random(len(y)) < 0.2] = np.nan  # outputs null at some points
    mu, mu_star, sigma = morris_effects(u, y, 3)
    # the same effects, by hand, and numpy's NaN-skipping statistics of them
    grid = u.reshape(-1, 4, 3)
    steps = np.diff(grid, axis=1)
    moved = np.abs(steps).argmax(axis=2)
    effect = (
        np.diff(y.reshape(-1, 4), axis=1) / np.take_along_axis(steps, moved[..., None], 2)[..., 0]
    )
    table = np.full((40, 3), np.nan)
    table[np.arange(40)[:, None], moved] = effect
    np.testing.assert_allclose(mu, np.nanmean(table, axis=0), rtol=1e-12)
    np.testing.assert_allclose(mu_star, np.nanmean(np.abs(table), axis=0), rtol=1e-12)
    np.testing.assert_allclose(sigma, np.nanstd(table, axis=0, ddof=1), rtol=1e-12)
    # one finite effect: its mean, and no spread
    unit = np.array([[0.0], [0.5], [0.5], [0.0]])  # two trajectories of one input
    mu, mu_star, sigma = morris_effects(unit, np.array([0.0, 1.0, np.nan, 0.0]), 1)
    assert mu[0] == mu_star[0] == 2.0 and np.isnan(sigma[0])


# --- inputs given twice, ranges that do not move, what each figure rests on ----------------


@pytest.mark.parametrize(
    "args, by",
    [
        (["--range", "utilization.share=0.5,0.9", "--range", "utilization.share=0.6,0.8"], "--range"),
        (["--vary", "utilization.share", "--range", "utilization.share=0.5,0.9"], "by --range and --vary"),
        (
            ["--method", "sobol", "-n", "8", "--range", "utilization.share=0.5,0.9",
             "--dist", "utilization.share=uniform(0.6,0.8)"],
            "by --range and --dist",
        ),
        (["--vary", "utilization.share", "--vary", "utilization.share"], "--vary"),
    ],
)  # fmt: skip
def test_cli_refuses_an_input_given_twice(capsys, args, by):
    """The later one silently replaced the earlier (0.6..0.8 used, 0.5..0.9 dropped), where
    econ sweep --grid and econ montecarlo --dist refuse a path given twice."""
    assert main(["sensitivity", str(SEED_FILE), *args, "--output", "npv_usd"]) == 3
    err = capsys.readouterr().err
    assert "utilization.share is given twice" in err and by in err and "Traceback" not in err


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--vary", "power.escalation_annual"],
            "power.escalation_annual is 0 in the base scenario, and +-10% of 0 is 0, so it would "
            "not move; give its range instead: --range power.escalation_annual=LOW,HIGH",
        ),
        (
            ["--vary", "fleet.gpu_count", "--pct", "0.1"],
            "fleet.gpu_count is 72 in the base scenario, and +-0.1% of it rounds to 72 both ways",
        ),
        (
            ["--range", "utilization.share=0.7,0.7"],
            "range utilization.share=0.7,0.7: LOW equals HIGH, so utilization.share would not "
            "move; expected LOW < HIGH",
        ),
        (
            ["--range", "utilization.share=0.9,0.5"],
            "range utilization.share=0.9,0.5: LOW is above HIGH; expected LOW < HIGH",
        ),
        (  # named the distribution only: "uniform(low=0.9, high=0.5): expected low < high"
            ["--method", "sobol", "--range", "utilization.share=0.9,0.5"],
            "range utilization.share=0.9,0.5: LOW is above HIGH",
        ),
        (
            ["--method", "morris", "--range", "financing.debt_rate_quote=nominal,nominal"],
            "the same choice twice",
        ),
        (  # as --set and --grid refuse it
            ["--range", 'utilization.share="0.5",0.9'],
            '--range utilization.share: "0.5" is a number written as text',
        ),
    ],
)
def test_cli_refuses_a_range_that_does_not_move_its_input(capsys, args, message):
    assert main(["sensitivity", str(SEED_FILE), *args, "--output", "npv_usd"]) == 3
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_ranges_that_do_not_move_are_refused_by_the_python_api():
    with pytest.raises(BatchInputError, match="LOW equals HIGH"):
        tornado(BASE, {"utilization.share": (0.7, 0.7)})
    with pytest.raises(BatchInputError, match="range utilization.share=0.9,0.5: LOW is above"):
        sobol(BASE, {"utilization.share": (0.9, 0.5)}, n=8)
    with pytest.raises(BatchInputError, match="fleet.gpu_count=4,4"):
        morris(BASE, {"fleet.gpu_count": (4, 4)})
    with pytest.raises(BatchInputError, match="power.escalation_annual is 0 in the base"):
        percent_ranges(BASE, ["power.escalation_annual"], 10)
    with pytest.raises(BatchInputError, match="rounds to 8 both ways"):
        percent_ranges(BASE, ["fleet.gpu_count"], 5)
    with pytest.raises(BatchInputError, match="--vary utilization.share is given twice"):
        percent_ranges(BASE, ["utilization.share", "utilization.share"], 5)


def test_a_tornado_input_that_moves_no_output_is_noted(capsys):
    result = tornado(
        BASE,
        {"depreciation.factor": (1.5, 2.5), "market.price_usd_per_mtok": (0.5, 2.0)},
        outputs=("npv_usd", "revenue_usd_total"),
    )
    assert result.run.metadata["notes"] == [
        "depreciation.factor moves no output (npv_usd, revenue_usd_total) between 1.5 and 2.5: "
        "it has no effect on sens"
    ]
    args = [
        "sensitivity",
        str(SEED_FILE),
        "--range",
        "depreciation.factor=1.5,2.5",
        "--format",
        "json",
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "note: depreciation.factor moves no output" in captured.err
    assert json.loads(captured.out)["metadata"]["notes"][0].startswith("depreciation.factor moves")


def test_morris_says_how_many_effects_each_figure_uses():
    """Sobol's `used` had no Morris counterpart: mu* = 0.978, sigma = 0 for the seed's IRR came
    from 4 of 20 effects, with nothing to say so."""
    u = morris_trajectories(2, 10, levels=4, seed=5)
    y = u[:, 0] + 2 * u[:, 1]
    y[[3, 7, 12]] = np.nan
    mu, mu_star, sigma, used = morris_effects(u, y, 2, counts=True)
    effects = np.diff(y.reshape(-1, 3), axis=1)  # each NaN point spoils the moves on either side
    assert used.sum() == np.isfinite(effects).sum() and used.max() <= 10
    np.testing.assert_array_equal((mu, mu_star, sigma), morris_effects(u, y, 2))
    result = morris(
        BASE,
        {"market.price_usd_per_mtok": (0.5, 1.5), "power.pue": (1.1, 1.5)},
        trajectories=6,
        outputs=("revenue_usd_total",),
    )
    assert result.table["used"].tolist() == [6, 6]


def test_cli_morris_table_shows_used_and_says_what_it_counts(capsys):
    args = [
        "sensitivity", str(SEED_FILE), "--method", "morris", "--trajectories", "20",
        "--range", "utilization.share=0.5,0.9", "--range", "market.price_decline_annual=0.15,0.5",
        "--output", "irr_project_annual",
    ]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("input"))
    assert header.split()[-1] == "used"
    assert "used: of each input's 20 elementary effects (one per trajectory)" in out
    assert main([*args, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert all(0 <= r["used"] <= 20 for r in rows) and min(r["used"] for r in rows) < 20


# The review's tornado of the seed's project IRR: price and utilization leave the IRR undefined
# at their low ends (NaN swings) and the discount rate does not move it (swing 0), which used to
# rank first, read as the input that drives the IRR.
IRR_RANGES = {
    "market.price_usd_per_mtok": (0.1, 0.5),
    "utilization.share": (0.3, 0.9),
    "financing.discount_rate_annual": (0.06, 0.14),
}


def test_a_tornado_ranks_undefined_swings_after_finite_ones_and_no_effect_last():
    seed = load_scenario(SEED_FILE)
    table = tornado(
        seed, {**IRR_RANGES, "depreciation.life_years": (4, 6)}, outputs=["irr_project_annual"]
    ).table
    assert list(table["input"]) == [
        "depreciation.life_years",
        "market.price_usd_per_mtok",
        "utilization.share",
        "financing.discount_rate_annual",
    ]
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert list(table["note"]) == ["", "undefined at low", "undefined at low", "no effect"]
    assert table["swing"].iloc[0] > 0 and table["swing"].iloc[1:3].isna().all()
    assert table["swing"].iloc[3] == 0


def test_the_cli_tornado_does_not_rank_a_flat_input_first(capsys):
    args = ["sensitivity", str(SEED_FILE), "--output", "irr_project_annual"]
    for path, (low, high) in IRR_RANGES.items():
        args += ["--range", f"{path}={low},{high}"]
    assert main([*args, "--format", "json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    ranked = {r["input"]: (r["rank"], r["swing"], r["note"]) for r in results}
    assert ranked == {
        "market.price_usd_per_mtok": (1, None, "undefined at low"),
        "utilization.share": (2, None, "undefined at low"),
        "financing.discount_rate_annual": (3, 0.0, "no effect"),
    }
    assert main(args) == 0  # the table (text) shows the notes beside the ranks
    shown = capsys.readouterr().out
    assert "undefined at low" in shown and "no effect" in shown


def test_tornado_names_a_base_that_is_not_a_scenario():
    # Found by review: tornado("path.toml", ...) failed with AttributeError inside
    from econ.errors import InputError

    with pytest.raises(InputError, match=r"base is str 'x\.toml'; expected a Scenario"):
        tornado("x.toml", {"utilization.share": (0.5, 0.9)})


def test_sensitivity_names_paths_given_without_ranges_and_options_it_does_not_take():
    """tornado(base, ["utilization.share"]) was a TypeError (list indices must be integers or
    slices, not str), sobol's and morris's an AttributeError ('list' object has no attribute
    'items'); an unknown run option named run(), which the caller never called."""
    from econ.analysis.sensitivity import morris, sobol

    with pytest.raises(
        BatchInputError,
        match=r"ranges is list \['utilization\.share'\]; expected a mapping of dotted path to "
        r"\(low, high\), e\.g\. \{'utilization\.share': \(0\.5, 0\.9\)\}, or "
        r"percent_ranges\(base, \['utilization\.share'\], 10\)",
    ):
        tornado(BASE, ["utilization.share"])
    for method in (sobol, morris):
        with pytest.raises(
            BatchInputError,
            match=rf"distributions is list \['utilization\.share'\]; {method.__name__}\(\) "
            r"expects a mapping of dotted path to a distribution",
        ):
            method(BASE, ["utilization.share"])
    with pytest.raises(InputError, match=r"tornado\(\) takes no option 'chunk' \(did you mean"):
        tornado(BASE, {"utilization.share": (0.5, 0.9)}, chunk=16)
    with pytest.raises(InputError, match=r"tornado\(\) sets keep_rows itself"):
        tornado(BASE, {"utilization.share": (0.5, 0.9)}, keep_rows=False)


# --- tornado ties -------------------------------------------------------------------------------
# On the seed, price, utilization and throughput each scale revenue by the same +-10%: their NPV
# swings were 1007093.0872375495, ...483 and ...481 USD (equal but for the engine's last bits) and
# ranked 1, 2, 3 in an order that changed between outputs (utilization first for the NPV, price
# first for the IRR).
TIED_RANGES = {
    "market.price_usd_per_mtok": (0.29349, 0.35871),
    "utilization.share": (0.63, 0.77),
    "throughput.tokens_per_s_per_gpu": (4380.93, 5354.47),
}


def test_equal_swings_share_a_rank_in_the_order_given():
    # Competition ranking: three tied at the top, the next input fourth.
    noise = 1007093.0872375495 * np.array([1.0, 1 - 1.2e-15, 1 + 1.2e-15, 0.1])
    order, ranks = tornado_ranks(noise, np.zeros(4, dtype=int))
    assert list(order) == [0, 1, 2, 3]
    assert list(ranks) == [1, 1, 1, 4]
    # A difference above the tolerance (1e-9 of the largest swing) is a rank.
    order, ranks = tornado_ranks(np.array([1.0, 1.0 + 1e-6, 0.5]), np.zeros(3, dtype=int))
    assert list(order) == [1, 0, 2] and list(ranks) == [1, 2, 3]


def test_tied_ranks_keep_the_other_rules():
    # finite, finite (tied), undefined, no effect, undefined, no effect, finite
    swings = np.array([5.0, 5.0, np.nan, 0.0, np.nan, 1e-12, 2.0])
    kinds = np.array(
        [SWING_FINITE, SWING_FINITE, SWING_UNDEFINED, SWING_NONE]
        + [SWING_UNDEFINED, SWING_NONE, SWING_FINITE]
    )
    order, ranks = tornado_ranks(swings, kinds)
    assert list(order) == [0, 1, 6, 2, 4, 3, 5]
    # undefined swings rank apart, after every finite one; inputs with no effect tie, last
    assert list(ranks) == [1, 1, 3, 4, 5, 6, 6]


def test_the_seed_tornado_ties_price_utilization_and_throughput():
    seed = load_scenario(SEED_FILE)
    outputs = ("npv_usd", "irr_project_annual")
    result = tornado(seed, {**TIED_RANGES, "depreciation.life_years": (5.4, 6.6)}, outputs)
    table = result.table
    for name in outputs:
        part = table[table["output"] == name]
        assert list(part["input"]) == [*TIED_RANGES, "depreciation.life_years"]
        assert list(part["rank"]) == [1, 1, 1, 4]
        assert list(part["note"].iloc[:3]) == ["tied"] * 3
    notes = result.run.metadata["notes"]
    assert any("share rank 1" in n and "npv_usd" in n for n in notes)
    # The order among ties is the order given, whichever output and whatever the last bits.
    backwards = dict(reversed(TIED_RANGES.items()))
    table = tornado(seed, backwards, ("npv_usd",)).table
    assert list(table["input"]) == list(backwards) and list(table["rank"]) == [1, 1, 1]


def test_the_cli_tornado_json_gives_tied_inputs_one_rank(capsys):
    args = ["sensitivity", str(SEED_FILE), "--output", "npv_usd", "--format", "json"]
    for path, (low, high) in TIED_RANGES.items():
        args += ["--range", f"{path}={low},{high}"]
    assert main(args) == 0
    captured = capsys.readouterr()
    results = json.loads(captured.out)["results"]
    assert [(r["input"], r["rank"], r["note"]) for r in results] == [
        (path, 1, "tied") for path in TIED_RANGES
    ]
    assert "they share rank 1, in the order given" in captured.err


def test_a_tornado_end_that_sells_at_book_value_is_noted():
    # The seed's horizon is its 6-year book life: at 6.6 years the GPUs are sold in month 72
    # with 321,418 USD of book value left, taken as the sale price; the NPV rises from -162,599
    # to -28,004 USD, and to -190,844 only if nothing is recovered (econ project warns of it).
    seed = load_scenario(SEED_FILE)
    table = tornado(seed, {"depreciation.life_years": (5.4, 6.6)}, ("npv_usd",)).table
    note = "at high, the remaining book value is assumed sold at book value"
    assert table["note"].iloc[0] == note
    assert table["output_high"].iloc[0] == pytest.approx(-28003.63, abs=0.01)
    price = tornado(seed, {"market.price_usd_per_mtok": (0.3, 0.35)}, ("npv_usd",)).table
    assert price["note"].iloc[0] == ""


def test_a_base_that_sells_at_book_value_is_said_once():
    seed = load_scenario(SEED_FILE, ["depreciation.life_years=7"])
    result = tornado(seed, {"depreciation.life_years": (6.5, 7.5)}, ("npv_usd",))
    assert result.table["note"].iloc[0] == ""
    notes = result.run.metadata["notes"]
    assert any("remaining book value is assumed sold at book value" in n for n in notes)


@settings(max_examples=25, deadline=None)
@given(shift=st.floats(-1e9, 1e9), scale=st.floats(0.1, 10.0))
def test_sobol_indices_do_not_change_with_a_constant_added_to_the_output(shift, scale):
    """Indices are ratios of variances, which a constant leaves alone; the uncentred first-order
    estimator moved with the output's mean (EBITDA = revenue - a constant: 0.458 and 0.347 for
    the same input, an outside review)."""
    rng = np.random.default_rng(3)
    a, b = rng.random((2, 512, 2))
    ab = np.stack([np.where(np.arange(2) == i, b, a) for i in range(2)])

    def f(x):
        return scale * x[..., 0] * (0.5 + x[..., 1])

    base = sobol_indices(f(a), f(b), f(ab))
    shifted = sobol_indices(f(a) + shift, f(b) + shift, f(ab) + shift)
    np.testing.assert_allclose(shifted[0], base[0], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(shifted[1], base[1], rtol=1e-6, atol=1e-9)


def test_first_order_indices_of_a_product_from_random_points_near_closed_forms():
    """f = 1e6 + X (0.5 + Y), X and Y ~ U(0, 1) independent (Sobol 1993, a product's variance
    decomposition): V = E[X^2] E[(0.5 + Y)^2] - (E X)^2 (E(0.5 + Y))^2 = (1/3)(13/12) - 1/4 = 1/9,
    S_X = Var X (E(0.5 + Y))^2 / V = 9/12, S_Y = Var Y (E X)^2 / V = 9/48."""
    rng = np.random.default_rng(11)
    a, b = rng.random((2, 2**14, 2))
    ab = np.stack([np.where(np.arange(2) == i, b, a) for i in range(2)])

    def f(x):
        return 1e6 + x[..., 0] * (0.5 + x[..., 1])

    first, _ = sobol_indices(f(a), f(b), f(ab))
    np.testing.assert_allclose(first, [(1 / 12) * 9, (1 / 48) * 9], atol=0.02)


def test_the_help_names_the_default_outputs(capsys):
    """It said "the main ones"; docs/batch.md listed only the Monte Carlo defaults."""
    from econ.analysis.sensitivity import DEFAULT_OUTPUTS
    from econ.cli import main

    with pytest.raises(SystemExit):
        main(["sensitivity", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"(default: {', '.join(DEFAULT_OUTPUTS)})" in shown


@pytest.mark.parametrize(("pct", "warned"), [("0.1", True), ("1", False), ("10", False)])
def test_cli_warns_of_a_pct_typed_as_a_fraction(capsys, pct, warned):
    # every rate of a scenario is a fraction, --pct a percent: --pct 0.1 ran +-0.1% in silence
    args = ["--vary", "utilization.share", "--pct", pct, "--output", "npv_usd"]
    assert main(["sensitivity", str(SEED_FILE), *args]) == 0
    err = capsys.readouterr().err
    said = "warning: --pct 0.1 varies each input by +-0.1%, not +-10%; for +-10% give --pct 10"
    assert (said in err) is warned and ("--pct" in err) is warned
