"""Operating points: the Pareto frontier, interpolation inside the measured range only, SLO
limits, clamping, the closest point when nothing fits, and the cost from the throughput."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.cli import main
from econ.errors import InputError
from econ.throughput.curve import Curve
from econ.throughput.importers import import_file, import_files
from econ.throughput.operating_point import (
    NoFeasiblePointError,
    OperatingPointError,
    cost_usd_per_mtok,
    feasible_position,
    interpolate_at,
    operating_point,
    operating_points,
    pareto_frontier,
)
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "throughput"
HAND = DATA / "generic_curve_hand_example.csv"
# The hand example (2 GPUs): conc, tokens/s/GPU, tokens/s/user, TPOT p99 [s], TTFT p99 [s]
#   1: 45, 100, 0.012, 0.10 | 4: 150, 80, 0.015, 0.15 | 8 (alt): 300, 45, 0.024, 0.30
#  16: 360, 50, 0.025, 0.40 | 64: 720, 25, 0.050, 1.20 | 128: 760, 12.5, 0.090, 3.00


@pytest.fixture(scope="module")
def hand() -> Curve:
    return import_file(HAND)


def test_frontier_of_the_hand_example(hand):
    mask = pareto_frontier(
        hand.points["tokens_per_s_per_user"], hand.points["output_tokens_per_s_per_gpu"]
    )
    # conc 8 ("alt": 45 tok/s/user, 300 tok/s/GPU) is beaten by conc 16 (50, 360)
    assert mask.tolist() == [True, True, False, True, True, True]


@pytest.mark.parametrize(
    "limits, per_gpu, binding, bracket",
    [
        # TPOT p99 40 ms: between conc 16 (25 ms) and 64 (50 ms), s = 15/25 = 0.6
        ({"tpot_p99_s": 0.040}, 360 + 0.6 * 360, "tpot_s_p99", (3, 4)),
        # TTFT 2 s binds before TPOT 80 ms between conc 64 and 128: s = 0.8/1.8
        ({"ttft_p99_s": 2.0, "tpot_p99_s": 0.080}, 720 + 0.8 / 1.8 * 40, "ttft_s_p99", (4, 5)),
        # 40 tokens/s per user: between 50 (conc 16) and 25 (conc 64), s = 10/25
        ({"min_tokens_per_s_per_user": 40.0}, 360 + 0.4 * 360, "tokens_per_s_per_user", (3, 4)),
        # exactly a measured point: TPOT p99 15 ms is conc 4
        ({"tpot_p99_s": 0.015}, 150.0, "tpot_s_p99", (1, 1)),
        ({"latency_limits": {"ttft_s_p99": 0.15}}, 150.0, "ttft_s_p99", (1, 1)),
    ],
)
def test_hand_example_operating_points(hand, limits, per_gpu, binding, bracket):
    point = operating_point(hand, **limits)
    assert point.tokens_per_s_per_gpu == pytest.approx(per_gpu)
    assert point.binding == binding
    assert point.bracket == bracket
    assert not point.clamped
    assert point.interpolated == (bracket[0] != bracket[1])


def test_loose_slo_is_clamped_to_the_highest_measured_point(hand):
    point = operating_point(hand, ttft_p99_s=60.0, tpot_p99_s=1.0)
    assert point.tokens_per_s_per_gpu == 760.0
    assert point.clamped and point.binding == "highest measured load"
    assert any("not extrapolated" in w for w in point.warnings)


def test_no_point_meets_the_slo_names_the_closest(hand):
    with pytest.raises(NoFeasiblePointError) as info:
        operating_point(hand, tpot_p99_s=0.010)
    error = info.value
    assert isinstance(error, InputError)
    assert error.closest["row"] == 0 and error.closest["tpot_s_p99"] == 0.012
    assert "closest is row 0 (concurrency 1" in str(error)
    assert "tpot_s_p99 = 0.012 (limit 0.01)" in str(error)


def test_vectorized_points_match_the_scalar_form(hand):
    tpot = np.array([0.012, 0.02, 0.04, 0.08, np.nan, 0.005])
    batch = operating_points(hand, tpot_p99_s=tpot, ttft_p99_s=2.0)
    for i, limit in enumerate(tpot):
        if i == 5:
            assert not batch["feasible"][i] and np.isnan(batch["output_tokens_per_s_per_gpu"][i])
            continue
        kwargs = {"ttft_p99_s": 2.0} | ({} if np.isnan(limit) else {"tpot_p99_s": limit})
        assert batch["output_tokens_per_s_per_gpu"][i] == pytest.approx(
            operating_point(hand, **kwargs).tokens_per_s_per_gpu
        )
    assert batch["clamped"].tolist() == [False] * 6


def test_input_output_split_and_cost(hand):
    point = operating_point(hand, tpot_p99_s=0.040)
    assert point.total_tokens_per_s_per_gpu != point.tokens_per_s_per_gpu or np.isnan(
        point.total_tokens_per_s_per_gpu
    )
    # seed case price (DESIGN.md §8): USD 4.00 per GPU-hour at 4,867.7 tokens/s/GPU -> 0.2283
    assert cost_usd_per_mtok(4.0, 4867.7) == pytest.approx(0.2283, abs=5e-5)
    assert np.allclose(cost_usd_per_mtok([2.0, 4.0], [1000.0, 1000.0]), [2 / 3.6, 4 / 3.6])
    assert np.isnan(cost_usd_per_mtok(2.0, 0.0))


def test_input_split_from_a_real_sample(shared_data: Path):
    curve = import_file(
        shared_data / "samples/inferencex/inferencex-app-supplemental-bmk-glm4.7-gaudi3.json"
    )
    point = operating_point(curve, ttft_p99_s=2.0, tpot_p99_s=0.080)
    # between conc 8 (15.80, TPOT p99 64.84 ms) and conc 16 (23.31, 88.68 ms)
    s = (0.080 - 0.06484) / (0.08868 - 0.06484)
    assert point.tokens_per_s_per_gpu == pytest.approx(15.80 + s * (23.31 - 15.80))
    assert point.input_tokens_per_s_per_gpu == pytest.approx(21.73 + s * (32.64 - 21.73))
    data = point.to_dict()
    assert 0 < data["input_share_of_total_tokens"] < 1
    json.dumps(data, allow_nan=False)


def test_curves_without_per_user_speed_use_measured_points_only():
    curve = import_file(DATA / "mlperf_log_summary_offline.txt", gpu_count=8)
    point = operating_point(curve)
    assert point.tokens_per_s_per_gpu == 29000 / 8
    assert not point.interpolated
    assert any("no frontier" in w for w in point.warnings)


DOMINATED = (
    "concurrency,output_tokens_per_s,gpu_count,tpot_s_mean,ttft_s_p99,config\n"
    "8,100,1,0.020,0.5,a\n64,200,1,0.025,5.0,a\n32,180,1,0.0333,0.6,b\n"
)
"""Config b at concurrency 32 (180 tokens/s per GPU, 30 per user, TTFT p99 0.6 s) lies below the
frontier of config a (100 at 50 per user, 200 at 40) but has the better TTFT."""


def test_a_point_off_the_frontier_that_meets_the_slo_is_not_lost(tmp_path):
    path = tmp_path / "dominated.csv"
    path.write_text(DOMINATED)
    curve = import_file(path)
    point = operating_point(curve, ttft_p99_s=1.0)
    # the frontier alone: s = (1 - 0.5) / (5 - 0.5) between 100 and 200, 111.1 tokens/s per GPU
    assert point.tokens_per_s_per_gpu == 180.0
    assert not point.interpolated and point.bracket == (2, 2) and not point.clamped
    assert point.binding == "ttft_s_p99"  # the next measured point (200, 5 s) breaks it
    assert any("the frontier allows only 111.1 by interpolation" in w for w in point.warnings)
    step = operating_point(curve, ttft_p99_s=1.0, reading="step")
    assert point.tokens_per_s_per_gpu == step.tokens_per_s_per_gpu
    batch = operating_points(curve, ttft_p99_s=np.array([1.0, 0.55, 10.0, 0.4]))
    expected = [180.0, 100 + 0.05 / 4.5 * 100, 200.0, np.nan]
    np.testing.assert_allclose(batch["output_tokens_per_s_per_gpu"], expected)
    assert batch["from_measured"].tolist() == [True, False, False, False]
    assert batch["feasible"].tolist() == [True, True, True, False]
    assert batch["clamped"].tolist() == [False, False, True, False]
    assert batch["measured_row"][0] == 2 and np.isnan(batch["measured_row"][1:]).all()


def test_the_real_sample_point_is_the_measured_one_meeting_ttft(shared_data: Path):
    curve = import_file(shared_data / "samples/vllm/nerdalert-llmd-llama3.2-3b-l40s-results.jsonl")
    point = operating_point(curve, ttft_p99_s=0.172)
    step = operating_point(curve, ttft_p99_s=0.172, reading="step")
    # no-features at 30 req/s: TTFT p99 0.1717 s, 1,460.34 tokens/s per GPU; the frontier
    # interpolation between rows 7 and 4 gave 1,456.70
    assert point.tokens_per_s_per_gpu == step.tokens_per_s_per_gpu == pytest.approx(1460.34, 1e-5)
    assert point.bracket == (1, 1) and not point.interpolated
    assert "deployment=no-features" in curve.points.loc[1, "config"]
    assert any("the frontier allows only 1,456.7 by interpolation" in w for w in point.warnings)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.tuples(
            st.floats(1, 1000), st.floats(1, 200), st.floats(0.01, 10), st.floats(0.005, 0.2)
        ),
        min_size=1,
        max_size=7,
        unique_by=lambda v: v[0],
    ),
    ttft=st.floats(0.01, 12),
    tpot=st.one_of(st.none(), st.floats(0.005, 0.25)),
)
def test_the_operating_point_is_never_below_a_measured_point_meeting_the_slo(
    hand, values, ttft, tpot
):
    gpu, user, ttft_p99, tpot_p99 = (np.asarray(v) for v in zip(*values, strict=True))
    frame = hand.points.iloc[[0] * len(values)].reset_index(drop=True)
    frame["output_tokens_per_s_per_gpu"] = gpu
    frame["output_tokens_per_s"] = gpu * frame["gpu_count"]
    frame["tokens_per_s_per_user"] = user
    frame["ttft_s_p99"], frame["tpot_s_p99"] = ttft_p99, tpot_p99
    frame["concurrency"] = np.arange(1, len(values) + 1, dtype=float)
    curve = Curve(frame, hand.provenance)
    meets = (ttft_p99 <= ttft) & (tpot_p99 <= (np.inf if tpot is None else tpot))
    batch = operating_points(curve, ttft_p99_s=ttft, tpot_p99_s=tpot)
    assert batch["feasible"][0] == meets.any()
    if meets.any():
        assert batch["output_tokens_per_s_per_gpu"][0] >= gpu[meets].max() * (1 - 1e-12)
        assert batch["ttft_s_p99"][0] <= ttft * (1 + 1e-9)
        point = operating_point(curve, ttft_p99_s=ttft, tpot_p99_s=tpot)
        assert point.tokens_per_s_per_gpu == pytest.approx(batch["output_tokens_per_s_per_gpu"][0])


def test_bad_requests(hand):
    with pytest.raises(OperatingPointError, match="expected a positive finite number"):
        operating_point(hand, tpot_p99_s=-0.04)
    with pytest.raises(OperatingPointError, match="unknown latency limit 'tpot_p99'"):
        operating_point(hand, latency_limits={"tpot_p99": 0.04})
    with pytest.raises(OperatingPointError, match="given twice"):
        operating_point(hand, tpot_p99_s=0.04, latency_limits={"tpot_s_p99": 0.05})
    with pytest.raises(OperatingPointError, match="reports no ttft_s_p95.*ttft_s_p99"):
        operating_point(hand, latency_limits={"ttft_s_p95": 1.0})
    no_gpus = import_file(DATA / "aiperf_profile_export.json")
    with pytest.raises(OperatingPointError, match="GPU count is unknown.*--gpus"):
        operating_point(no_gpus, tpot_p99_s=0.1)


def test_mixed_groups_must_be_chosen():
    both = import_files([DATA / "vllm_bench_serve_sweep.jsonl", DATA / "inferencex_agg_fixed.json"])
    with pytest.raises(OperatingPointError, match="mixes 2 model/hardware/workload groups"):
        operating_point(both, tpot_p99_s=0.02)
    point = operating_point(both, tpot_p99_s=0.02, workload="tiny-llm-70b")
    assert "h200" in point.group
    with pytest.raises(OperatingPointError, match="matches 0 of the curve's groups"):
        operating_point(both, workload="nothing-like-this")


def test_interpolation_between_configurations_is_flagged():
    nerd = import_file(ROOT / "tests" / "data" / "throughput" / "vllm_bench_serve_sweep.jsonl")
    frame = nerd.points.copy()
    frame.loc[2, "config"] = "other"
    point = operating_point(Curve(frame, nerd.provenance), tpot_p99_s=0.0175)
    assert any("different serving configurations" in w for w in point.warnings)


@st.composite
def frontiers(draw):
    k = draw(st.integers(1, 8))
    user = np.sort(draw(st.lists(st.floats(1, 500), min_size=k, max_size=k, unique=True)))[::-1]
    gpu = np.sort(draw(st.lists(st.floats(1, 5000), min_size=k, max_size=k, unique=True)))
    tpot = np.sort(draw(st.lists(st.floats(1e-3, 1.0), min_size=k, max_size=k)))
    return user, gpu, tpot


@settings(max_examples=50, deadline=None)
@given(
    user=st.lists(st.floats(0.1, 1e3), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_frontier_invariants(user, seed):
    rng = np.random.default_rng(seed)
    u = np.asarray(user)
    x = rng.uniform(1, 1000, len(u))
    mask = pareto_frontier(u, x)
    assert mask.any()
    for i in np.flatnonzero(~mask):
        beaten = (u[mask] >= u[i]) & (x[mask] >= x[i])
        assert beaten.any(), "every point off the frontier is weakly beaten by one on it"
    f = np.flatnonzero(mask)
    for i in f:
        for j in f:
            if i != j:
                assert not (u[j] >= u[i] and x[j] >= x[i]), "frontier points do not beat each other"
    order = rng.permutation(len(u))
    permuted = pareto_frontier(u[order], x[order])
    assert sorted(order[permuted]) == sorted(f), "the frontier does not depend on point order"


@settings(max_examples=50, deadline=None)
@given(data=frontiers(), limits=st.lists(st.floats(1e-3, 1.2), min_size=1, max_size=6))
def test_feasible_position_meets_the_limit_and_grows_with_it(data, limits):
    _, gpu, tpot = data
    lim = np.sort(np.asarray(limits))
    position = feasible_position(tpot[None, :], lim[:, None])
    value = interpolate_at(tpot, position)
    ok = ~np.isnan(position)
    assert (value[ok] <= lim[ok] * (1 + 1e-9) + 1e-15).all()
    assert (ok == (lim >= tpot[0] * (1 - 1e-9))).all(), "feasible exactly when the first point is"
    p = position[ok]
    assert (np.diff(p) >= -1e-12).all(), "a looser limit never lowers the operating point"
    throughput = interpolate_at(gpu, position)
    assert (np.diff(throughput[ok]) >= -1e-9).all()


@settings(max_examples=50, deadline=None)
@given(data=frontiers(), t=st.floats(0, 1))
def test_interpolation_stays_between_neighbours(data, t):
    _, gpu, _ = data
    k = len(gpu)
    position = np.array([t * (k - 1)])
    value = interpolate_at(gpu, position)[0]
    lo = int(np.floor(position[0]))
    hi = min(lo + 1, k - 1)
    assert min(gpu[lo], gpu[hi]) - 1e-9 <= value <= max(gpu[lo], gpu[hi]) + 1e-9
    assert np.allclose(interpolate_at(gpu, np.arange(k, dtype=float)), gpu)


def test_cli_point_table_json_and_errors(capsys):
    args = ["throughput", "point", str(HAND), "--ttft-p99-s", "2", "--tpot-p99-ms", "80"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "737.78" in out and "ttft_s_p99" in out
    assert main([*args, "--format", "json", "--usd-per-gpu-hour", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens_per_s_per_gpu"] == pytest.approx(720 + 0.8 / 1.8 * 40)
    assert data["cost_usd_per_mtok"] == pytest.approx(
        2 / (data["tokens_per_s_per_gpu"] * 3600 / 1e6)
    )
    assert main(["throughput", "point", str(HAND), "--tpot-p99-ms", "5"]) == 3
    assert "closest is row 0" in capsys.readouterr().err
    assert main(["throughput", "point", str(HAND), "--limit", "tpot_s_p99"]) == 3
    assert "expected NAME=SECONDS" in capsys.readouterr().err
    assert main(["throughput", "point", str(HAND), "--limit", "ttft_s_p99=0.4"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--ttft-p99-s", "nan"),
        ("--tpot-p99-ms", "inf"),
        ("--ttft-p95-s", "nan"),
        ("--min-tokens-per-s-per-user", "nan"),
        ("--limit", "ttft_s_p99=nan"),
    ],
)
def test_a_non_finite_limit_is_refused_not_read_as_no_limit(capsys, option, value):
    # nan used to pass as "no limit" (exit 0 with the unconstrained point)
    assert main(["throughput", "point", str(HAND), option, value, "--format", "json"]) == 3
    out, err = capsys.readouterr()
    shown = option if option != "--limit" else "--limit ttft_s_p99"
    assert out == "" and f"{shown} = {value.split('=')[-1]}" in err
    assert "expected a positive finite number" in err and "Traceback" not in err


def test_the_one_scenario_form_refuses_a_nan_limit(hand):
    # NaN means "no limit" row by row in operating_points only; here None says that
    with pytest.raises(OperatingPointError, match="limit ttft_s_p99 = nan"):
        operating_point(hand, ttft_p99_s=float("nan"))
    assert operating_points(hand, ttft_p99_s=[np.nan, 2.0])["feasible"].all()


def test_points_frame_is_not_modified(hand):
    before = hand.points.copy()
    operating_point(hand, tpot_p99_s=0.04)
    pd.testing.assert_frame_equal(hand.points, before)


def _frontier_by_definition(u, x):
    """Pareto optimality checked pair by pair, O(K^2): the definition the sort must reproduce."""
    finite = np.isfinite(u) & np.isfinite(x)
    ge = (u[None, :] >= u[:, None]) & (x[None, :] >= x[:, None])
    gt = (u[None, :] > u[:, None]) | (x[None, :] > x[:, None])
    dominated = (ge & gt & finite[None, :]).any(axis=1)
    same = (u[None, :] == u[:, None]) & (x[None, :] == x[:, None]) & finite[None, :]
    earlier_twin = np.tril(same, k=-1).any(axis=1)
    return finite & ~dominated & ~earlier_twin


@given(
    u=st.lists(st.sampled_from([0.5, 1.0, 2.0, np.nan, np.inf, -np.inf, 3.0]), max_size=14),
    seed=st.integers(0, 2**16),
)
def test_the_sorted_frontier_equals_the_pairwise_definition(u, seed):
    # Few distinct values, so ties, twins and non-finite points are common.
    rng = np.random.default_rng(seed)
    u = np.asarray(u, dtype=float)
    x = rng.choice([1.0, 2.0, 5.0, np.nan, -np.inf], len(u))
    assert pareto_frontier(u, x).tolist() == _frontier_by_definition(u, x).tolist()
