"""The token mix: input and cached input token prices beside the output price (issue 21, part 1).

Reference prices: OpenAI's API price list (platform.openai.com/docs/pricing, GPT-4o, standard
tier, from 2024-10): input USD 2.50, cached input USD 1.25, output USD 10.00 per million tokens.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import load_scenario, market, project
from econ.batch import ScenarioBatch
from econ.cli import main
from econ.errors import InputError
from econ.scenario import apply_overrides, validate_dict
from econ.scenario.gain_models import Throughput
from econ.throughput.importers import import_files
from econ.throughput.operating_point import operating_point
from econ.throughput.resolve import input_ratio_at, resolve_throughput
from econ.units import SECONDS_PER_MONTH
from tests.conftest import ROOT

GPT_4O = {"output": 10.00, "input": 2.50, "cached": 1.25}
"""OpenAI API pricing, GPT-4o [USD per million tokens] (platform.openai.com/docs/pricing)."""

FIXTURES = ROOT / "tests" / "data" / "throughput"

# One GPU serving all hours at the speed that makes exactly 1 million output tokens a month.
ONE_MTOK_A_MONTH = {
    "name": "mix",
    "horizon_months": 12,
    "fleet": {"gpu_count": 1, "gpus_per_rack": 1},
    "utilization": {"share": 1.0},
    "throughput": {
        "tokens_per_s_per_gpu": 1e6 / SECONDS_PER_MONTH,
        "input_tokens_per_output_token": 3.0,
    },
    "capex": {"gpu_price_usd": 30000.0},
    "market": {
        "price_usd_per_mtok": GPT_4O["output"],
        "input_price_usd_per_mtok": GPT_4O["input"],
        "cached_input_price_usd_per_mtok": GPT_4O["cached"],
        "cache_hit_share": 0.5,
    },
}

SEED = {
    "name": "seed",
    "horizon_months": 48,
    "fleet": {"gpu_count": 72},
    "throughput": {"tokens_per_s_per_gpu": 4867.7, "input_tokens_per_output_token": 0.213},
    "capex": {"gpu_price_usd": 43000.0},
    "market": {"price_usd_per_mtok": 0.40, "price_decline_annual": 0.3},
}


def scenario(base=SEED, **changes):
    return validate_dict(apply_overrides(base, changes))


def summary(s):
    return project(s).summary_records()[0]["summary"]


# --- a hand-computed month ----------------------------------------------------------------------


def test_one_month_by_hand():
    # 1M output tokens with 3 input tokens each, half from the cache, at GPT-4o's list prices:
    #   output        1.0M x 10.00 = 10.000 USD
    #   input         1.5M x  2.50 =  3.750 USD
    #   cached input  1.5M x  1.25 =  1.875 USD        token revenue 15.625 USD
    m = project(scenario(ONE_MTOK_A_MONTH)).monthly.loc["mix"].iloc[1]
    assert m.tokens == pytest.approx(1e6, rel=1e-12)
    assert m.input_tokens == pytest.approx(3e6, rel=1e-12)
    assert m.output_token_revenue_usd == pytest.approx(10.0, rel=1e-12)
    assert m.input_token_revenue_usd == pytest.approx(3.75, rel=1e-12)
    assert m.cached_input_token_revenue_usd == pytest.approx(1.875, rel=1e-12)
    assert m.token_revenue_usd == pytest.approx(15.625, rel=1e-12)
    assert m.revenue_usd == pytest.approx(15.625, rel=1e-12)


def test_domain_function_by_hand():
    tokens = np.array([[0.0, 1e6, 2e6]])
    mix = market.token_mix_revenue(
        tokens,
        [3.0],
        [0.5],
        np.full((1, 3), GPT_4O["input"]),
        np.full((1, 3), GPT_4O["cached"]),
        [0.25],  # a quarter of the GPUs under contract sell no tokens
    )
    np.testing.assert_allclose(mix["input_tokens"], [[0.0, 3e6, 6e6]])
    np.testing.assert_allclose(mix["input_usd"], [[0.0, 0.75 * 3.75, 0.75 * 7.5]])
    np.testing.assert_allclose(mix["cached_input_usd"], [[0.0, 0.75 * 1.875, 0.75 * 3.75]])
    sold_as_hours = market.token_mix_revenue(
        tokens, [3.0], [0.5], np.ones((1, 3)), np.ones((1, 3)), [0.0], [True]
    )
    assert not sold_as_hours["input_usd"].any() and not sold_as_hours["cached_input_usd"].any()


# --- cost per token both ways -------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(ratio=st.floats(0.0, 50.0), decline=st.floats(0.0, 0.9))
def test_all_tokens_lcot_is_output_lcot_over_one_plus_ratio(ratio, decline):
    s = summary(
        scenario(
            **{
                "throughput.input_tokens_per_output_token": ratio,
                "market.price_decline_annual": decline,
            }
        )
    )
    lcot, lcot_all = s["lcot_usd_per_mtok"], s["lcot_usd_per_mtok_all_tokens"]
    assert lcot_all <= lcot * (1 + 1e-12)
    assert lcot_all == pytest.approx(lcot / (1.0 + ratio), rel=1e-12)
    assert s["input_tokens_total"] == pytest.approx(ratio * s["tokens_total"], rel=1e-12)


def test_all_tokens_lcot_present_values_the_input_tokens_of_each_vintage():
    # Two vintages serving different workloads: the all-tokens LCOT is PV(costs) over the PV of
    # every row's output plus input tokens, as LCOT is over output tokens alone.
    s = scenario(
        vintages=[
            {
                "name": "long-prompts",
                "fleet": {"purchase_month": 12},
                "throughput": {"input_tokens_per_output_token": 8.0},
            }
        ]
    )
    result = project(s)
    monthly = result.monthly.loc["seed"]
    rate = (1 + 0.10) ** (1 / 12) - 1  # the default discount rate, compounded monthly
    factors = (1 + rate) ** -monthly.index.to_numpy(dtype=float)
    pv_out = (monthly.tokens * factors).sum()
    pv_all = ((monthly.tokens + monthly.input_tokens) * factors).sum()
    got = result.summary_records()[0]["summary"]
    assert got["discount_rate_annual"] == pytest.approx(0.10)
    assert got["lcot_usd_per_mtok_all_tokens"] == pytest.approx(
        got["lcot_usd_per_mtok"] * pv_out / pv_all, rel=1e-9
    )
    assert 0.213 < monthly.input_tokens.sum() / monthly.tokens.sum() < 8.0


def test_unknown_ratio_is_null_with_a_warning():
    s = summary(scenario(**{"throughput.input_tokens_per_output_token": None}))
    assert s["lcot_usd_per_mtok_all_tokens"] is None and s["input_tokens_total"] is None
    assert s["lcot_usd_per_mtok"] is not None
    assert any("lcot_usd_per_mtok_all_tokens" in w for w in s["warnings"])
    text = json.dumps(s, allow_nan=False)  # strict JSON: nulls, no NaN
    assert "NaN" not in text


# --- revenue: linear in each price, cache limits, price paths -----------------------------------


@pytest.mark.parametrize("kind", ["input", "cached_input"])
def test_revenue_is_linear_in_each_price(kind):
    base = {**ONE_MTOK_A_MONTH["market"]}
    field = f"market.{kind}_price_usd_per_mtok"
    line = f"{kind}_token_revenue_usd"
    revenue = {}
    for factor in (0.5, 1.0, 3.0):
        s = scenario(ONE_MTOK_A_MONTH, **{field: factor * base[f"{kind}_price_usd_per_mtok"]})
        revenue[factor] = project(s).monthly.loc["mix"][line].to_numpy()
    np.testing.assert_allclose(revenue[3.0], 3.0 * revenue[1.0], rtol=1e-12)
    np.testing.assert_allclose(revenue[0.5], 0.5 * revenue[1.0], rtol=1e-12)
    out = [
        project(scenario(ONE_MTOK_A_MONTH, **{"market.price_usd_per_mtok": p}))
        .monthly.loc["mix"]
        .output_token_revenue_usd.to_numpy()
        for p in (5.0, 10.0)
    ]
    np.testing.assert_allclose(out[1], 2.0 * out[0], rtol=1e-12)


def test_cache_share_limits():
    none = project(scenario(ONE_MTOK_A_MONTH, **{"market.cache_hit_share": 0.0}))
    m = none.monthly.loc["mix"].iloc[1]
    assert m.cached_input_token_revenue_usd == 0.0
    assert m.input_token_revenue_usd == pytest.approx(3e6 * GPT_4O["input"] / 1e6, rel=1e-12)
    every = project(scenario(ONE_MTOK_A_MONTH, **{"market.cache_hit_share": 1.0}))
    m = every.monthly.loc["mix"].iloc[1]
    assert m.input_token_revenue_usd == 0.0
    assert m.cached_input_token_revenue_usd == pytest.approx(3e6 * GPT_4O["cached"] / 1e6)


def test_input_prices_follow_the_output_price_unless_given_their_own_decline():
    months = np.arange(37)
    output = market.token_price_usd_per_mtok([10.0], [0.5], months)
    shape = market.relative_price_path(output, [0.5])
    follow, cached = market.input_price_paths([2.5], [np.nan], [np.nan], [np.nan], shape, months)
    np.testing.assert_allclose(follow, output * 0.25, rtol=1e-14)
    np.testing.assert_array_equal(cached, follow)  # no cached price: cached tokens pay input
    own, cached = market.input_price_paths([2.5], [1.25], [0.2], [np.nan], shape, months)
    assert own[0, 13] == pytest.approx(2.5 * 0.8, rel=1e-14)  # a year after month 1
    np.testing.assert_allclose(cached, output * 0.125, rtol=1e-14)
    # A price table: the input price keeps its ratio to the table's month-1 output price.
    table = market.token_price_usd_per_mtok(
        [0.0], [0.0], months, np.array([[1.0, 25.0]]), np.array([[10.0, 2.5]])
    )
    follow, _ = market.input_price_paths(
        [2.5], [np.nan], [np.nan], [np.nan], market.relative_price_path(table, [0.0]), months
    )
    np.testing.assert_allclose(follow, table * 0.25, rtol=1e-14)


def test_default_inputs_change_nothing():
    plain = {k: v for k, v in SEED["throughput"].items() if k != "input_tokens_per_output_token"}
    with_mix = project(scenario(**{"throughput.input_tokens_per_output_token": 2.0}))
    without = project(scenario(**{"throughput": plain}))
    for key, values in without.metrics.items():
        if key not in ("lcot_usd_per_mtok_all_tokens", "input_tokens_total"):
            np.testing.assert_array_equal(with_mix.metrics[key], values, err_msg=key)
    assert with_mix.lines["input_token_revenue_usd"].sum() == 0.0


# --- break-even output price at the scenario's input prices --------------------------------------


def test_breakeven_output_price_falls_as_the_input_price_rises():
    prices = [0.0, 0.02, 0.05, 0.1]
    breakeven = [
        summary(scenario(**{"market.input_price_usd_per_mtok": p}))["breakeven_price_usd_per_mtok"]
        for p in prices
    ]
    assert all(b is not None for b in breakeven)
    assert all(a > b for a, b in zip(breakeven, breakeven[1:], strict=False))


def test_breakeven_output_price_zeroes_the_npv_at_the_input_prices():
    changes = {
        "market.input_price_usd_per_mtok": 0.05,
        "market.cached_input_price_usd_per_mtok": 0.01,
        "market.cache_hit_share": 0.4,
    }
    p = summary(scenario(**changes))["breakeven_price_usd_per_mtok"]
    at = summary(scenario(**changes, **{"market.price_usd_per_mtok": p}))
    assert abs(at["npv_usd"]) < 1e-6 * at["capex_usd_total"]


# --- where the ratio comes from ------------------------------------------------------------------


def test_ratio_from_a_measured_curve_prefers_token_rates():
    curve = import_files([FIXTURES / "vllm_bench_serve_sweep.jsonl"], "auto", 8)
    point = operating_point(curve)
    ratio, source = input_ratio_at(point)
    assert ratio == pytest.approx(point.input_tokens_per_s_per_gpu / point.tokens_per_s_per_gpu)
    assert "token rates" in source
    lengths_only = operating_point(import_files([FIXTURES / "generic_curve_hand_example.csv"]))
    ratio, source = input_ratio_at(lengths_only)
    assert ratio == pytest.approx(1000 / 250) and "lengths" in source


def test_ratio_from_the_simulator_lengths():
    section = Throughput(
        simulated={"model": "llama2-70b", "input_tokens": 2000, "output_tokens": 500}
    )
    resolved = resolve_throughput(section, "h200-sxm")
    assert resolved.input_tokens_per_output_token == pytest.approx(4.0)
    s = scenario(
        **{
            "fleet.hardware": "h200-sxm",
            "throughput": {
                "simulated": {"model": "llama2-70b", "input_tokens": 2000, "output_tokens": 500},
                # (a table for a section merges into it: the seed's own ratio would stay)
                "input_tokens_per_output_token": None,
            },
            "market.input_price_usd_per_mtok": 0.1,
        }
    )
    batch = ScenarioBatch.from_scenarios(s)
    assert batch["throughput.input_tokens_per_output_token"][0] == pytest.approx(4.0)
    got = summary(s)
    assert got["input_tokens_total"] == pytest.approx(4.0 * got["tokens_total"], rel=1e-12)
    assert any("prefill and decode lengths" in w for w in got["warnings"])


def test_curve_without_input_tokens_cannot_price_them(tmp_path):
    rows = Path(FIXTURES / "generic_curve_hand_example.csv").read_text().splitlines()
    header = rows[0].split(",")
    keep = [i for i, c in enumerate(header) if c != "input_tokens_mean"]
    (tmp_path / "run.csv").write_text(
        "\n".join(",".join(r.split(",")[i] for i in keep) for r in rows) + "\n"
    )
    s = scenario(
        **{
            "throughput": {
                "measured": {"curve": str(tmp_path / "run.csv"), "gpus": 2},
                "input_tokens_per_output_token": None,  # (the seed's own ratio would stay)
            },
            "market.input_price_usd_per_mtok": 0.1,
        }
    )
    with pytest.raises(InputError, match="throughput.input_tokens_per_output_token"):
        ScenarioBatch.from_scenarios(s)


# --- batches ------------------------------------------------------------------------------------


def test_batch_columns_vary_the_token_mix():
    base = scenario(ONE_MTOK_A_MONTH)
    batch = ScenarioBatch.repeat(
        base,
        3,
        {
            "market.input_price_usd_per_mtok": np.array([1.0, 2.5, 4.0]),
            "market.cache_hit_share": np.array([0.0, 0.5, 1.0]),
            "throughput.input_tokens_per_output_token": np.array([1.0, 3.0, 2.0]),
        },
    )
    lines = project(batch).lines
    np.testing.assert_allclose(lines["input_token_revenue_usd"][:, 1], [1.0, 3.75, 0.0])
    np.testing.assert_allclose(lines["cached_input_token_revenue_usd"][:, 1], [0.0, 1.875, 2.5])
    alone = project(scenario(ONE_MTOK_A_MONTH)).metrics
    assert project(batch).metrics["npv_usd"][1] == pytest.approx(alone["npv_usd"][0], rel=1e-12)


def test_batch_checks_the_token_mix_rules():
    from econ.analysis.validation import BatchInputError, check_columns

    base = scenario(ONE_MTOK_A_MONTH)
    with pytest.raises(BatchInputError, match=r"market\.cache_hit_share"):
        check_columns(base, {"market.cache_hit_share": np.array([0.5, 1.5])}, 2)
    with pytest.raises(BatchInputError, match="input_tokens_per_output_token = 0"):
        check_columns(base, {"throughput.input_tokens_per_output_token": np.array([0.0])}, 1)
    with pytest.raises(BatchInputError, match=r"market\.input_price_usd_per_mtok"):
        check_columns(base, {"market.input_price_usd_per_mtok": np.array([-1.0])}, 1)
    unpriced = scenario(
        {**ONE_MTOK_A_MONTH, "market": {"price_usd_per_mtok": 1.0}},
        **{"throughput.input_tokens_per_output_token": None},
    )
    with pytest.raises(BatchInputError, match="fixed figure"):
        check_columns(unpriced, {"market.input_price_usd_per_mtok": np.array([0.5])}, 1)


def test_engine_rejects_an_unchecked_negative_price():
    batch = ScenarioBatch.repeat(
        scenario(ONE_MTOK_A_MONTH),
        1,
        {"market.input_price_usd_per_mtok": np.array([-1.0])},
        validate=False,  # as repeat checks it by default (econ.analysis.validation)
    )
    with pytest.raises(InputError, match="market.input_price_usd_per_mtok"):
        project(batch)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        (
            {"market.input_price_usd_per_mtok": -1.0},
            "market.input_price_usd_per_mtok",
            "-1 is below 0; expected a number at least 0 [USD/M tokens]",
        ),
        ({"market.cached_input_price_usd_per_mtok": -0.5}, "cached_input_price", "-0.5 is below 0"),
        ({"market.cache_hit_share": 1.5}, "market.cache_hit_share", "1.5 is above 1; expected"),
        ({"market.cache_hit_share": math.nan}, "market.cache_hit_share", "finite"),
        ({"market.input_price_usd_per_mtok": math.inf}, "input_price_usd_per_mtok", "finite"),
        ({"market.input_price_decline_annual": 1.0}, "input_price_decline_annual", "not below 1"),
        ({"throughput.input_tokens_per_output_token": -2.0}, "input_tokens_per_output", "-2 is "),
        ({"throughput.input_tokens_per_output_token": 0.0}, "is 0", "above 0"),
        (
            {"throughput.input_tokens_per_output_token": None},
            "input_tokens_per_output_token is not set",
            "expected the input tokens",
        ),
        (
            {"market.cached_input_price_usd_per_mtok": None},
            "cache_hit_share is 0.5",
            "expected the price of input tokens served from the cache",
        ),
        (
            {"market.input_price_usd_per_mtok": 0.0},
            "cached_input_price_usd_per_mtok is 1.25",
            "expected an input price above 0",
        ),
    ],
)
def test_bad_token_mix_is_named(changes, field, expected):
    with pytest.raises(InputError) as info:
        scenario(ONE_MTOK_A_MONTH, **changes)
    text = str(info.value)
    assert field in text and expected in text


@pytest.mark.parametrize(
    ("throughput", "market", "named"),
    [
        ("", "cache_hit_share = 1.5", ("market.cache_hit_share = 1.5: 1.5 is above 1; expected",)),
        ("", "cache_hit_share = nan", ("market.cache_hit_share", "finite")),
        ("", "input_price_usd_per_mtok = -2.5", ("input_price_usd_per_mtok", "-2.5")),
        (
            "input_tokens_per_output_token = 0",
            "input_price_usd_per_mtok = 2.5",
            ("throughput.input_tokens_per_output_token is 0", "above 0"),
        ),
        ("", "input_price_usd_per_mtok = 2.5", ("input_tokens_per_output_token is not set",)),
    ],
)
def test_cli_exits_3_on_a_bad_token_mix(tmp_path, capsys, throughput, market, named):
    path = tmp_path / "bad.toml"
    path.write_text(
        f"[fleet]\ngpu_count = 8\n[throughput]\ntokens_per_s_per_gpu = 1000.0\n{throughput}\n"
        "[capex]\ngpu_price_usd = 30000.0\n"
        f"[market]\nprice_usd_per_mtok = 10.0\n{market}\n"
    )
    assert main(["project", str(path)]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
    for text in named:
        assert text in err, (text, err)


def test_cli_shows_the_token_mix(tmp_path, capsys):
    path = tmp_path / "mix.toml"
    path.write_text(
        "[fleet]\ngpu_count = 8\n"
        "[throughput]\ntokens_per_s_per_gpu = 1000.0\ninput_tokens_per_output_token = 3.0\n"
        "[capex]\ngpu_price_usd = 30000.0\n"
        "[market]\nprice_usd_per_mtok = 10.0\ninput_price_usd_per_mtok = 2.5\n"
        "cached_input_price_usd_per_mtok = 1.25\ncache_hit_share = 0.5\n"
    )
    assert main(["project", str(path), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    assert got["revenue_usd_total"] == pytest.approx(
        got["output_token_revenue_usd_total"]
        + got["input_token_revenue_usd_total"]
        + got["cached_input_token_revenue_usd_total"],
        rel=1e-12,
    )
    # Per output token 10.00, per input token 1.875 on average: 10 + 3 x 1.875 = 15.625 USD
    # per million output tokens.
    assert got["revenue_usd_total"] == pytest.approx(15.625 * got["tokens_total"] / 1e6)
    assert main(["project", str(path)]) == 0
    table = capsys.readouterr().out
    assert "Levelized cost per input and output token [USD/M tokens]" in table
    assert "Cached-input-token revenue over the horizon [USD]" in table


# --- sweeps and Monte Carlo from the command line ------------------------------------------------

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


def test_cli_sweep_over_the_input_price_and_cache_share(capsys):
    base = ["market.input_price_usd_per_mtok=0.05", "market.cached_input_price_usd_per_mtok=0.01"]
    args = ["sweep", str(SEED_FILE), "--set", base[0], "--set", base[1]]
    args += ["--grid", "market.input_price_usd_per_mtok=0.05,0.1"]
    args += ["--grid", "market.cache_hit_share=0,0.8", "--format", "json"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)["scenarios"]
    assert len(rows) == 4
    for row in rows:
        inputs = row["inputs"]
        sets = [f"{k}={v!r}" for k, v in inputs.items()]
        alone = project(load_scenario(SEED_FILE, [*base, *sets])).summary_records()[0]["summary"]
        for key in ("npv_usd", "input_token_revenue_usd_total", "breakeven_price_usd_per_mtok"):
            assert row["summary"][key] == pytest.approx(alone[key], rel=1e-12), (inputs, key)
    assert main([*args[:-4], "--grid", "market.cache_hit_share=0.5,1.5"]) == 3
    assert "market.cache_hit_share" in capsys.readouterr().err


def test_cli_montecarlo_samples_the_token_mix(capsys):
    args = ["montecarlo", str(SEED_FILE), "-n", "16", "--seed", "1", "--format", "json"]
    args += ["--set", "market.input_price_usd_per_mtok=0.05"]
    args += ["--set", "market.cached_input_price_usd_per_mtok=0.01"]
    args += ["--dist", "market.input_price_usd_per_mtok=uniform(0.02, 0.2)"]
    args += ["--dist", "market.cache_hit_share=uniform(0, 1)"]
    args += ["--dist", "throughput.input_tokens_per_output_token=uniform(0.1, 4)"]
    assert main([*args, "--no-progress"]) == 0
    revenue = json.loads(capsys.readouterr().out)["metrics"]["revenue_usd_total"]
    assert revenue["count"] == 16 and revenue["undefined"] == 0 and revenue["std"] > 0
    # Every draw lies between the projections at the corners of the sampled ranges.
    corners = [
        [
            "market.cached_input_price_usd_per_mtok=0.01",
            f"market.input_price_usd_per_mtok={price}",
            f"market.cache_hit_share={hit}",
            f"throughput.input_tokens_per_output_token={ratio}",
        ]
        for price, hit, ratio in ((0.02, 1, 0.1), (0.2, 0, 4))
    ]
    low, high = (
        project(load_scenario(SEED_FILE, c)).metrics["revenue_usd_total"][0] for c in corners
    )
    assert low <= revenue["min"] <= revenue["max"] <= high


def test_a_row_without_a_month_1_price_takes_the_declines_shape_and_others_their_own():
    months = np.arange(25)
    prices = market.token_price_usd_per_mtok([10.0, 0.0, 4.0], [0.5, 0.3, 0.0], months)
    shape = market.relative_price_path(prices, [0.5, 0.3, 0.0])
    np.testing.assert_array_equal(shape[0], prices[0] / 10.0)
    np.testing.assert_array_equal(shape[1], market.price_path([0.3], months)[0])
    np.testing.assert_array_equal(shape[2], np.ones(25))
    assert shape[1, 13] == pytest.approx(0.7, rel=1e-14)  # (1 - 0.3) a year after month 1
    # without a decline such a row keeps the path it was given (zero prices: no shape)
    np.testing.assert_array_equal(market.relative_price_path(prices)[1], np.zeros(25))
