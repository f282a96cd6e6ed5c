"""Throughput simulator: formulas against hand-computed references, invariants by Hypothesis, Curve
output, the envelope, the speed of light and bad input."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.commands import simulate as cli
from econ.errors import InputError
from econ.hardware import HardwareError, get_hardware
from econ.llms import LLMError, get_llm
from econ.throughput import simulator as sim
from econ.throughput.curve import CURVE_COLUMNS, Curve

SOL = sim.SPEED_OF_LIGHT


# ---------------------------------------------------------------------------------------------------
# Formulas against references


def test_smooth_max_limits():
    assert sim.smooth_max(3.0, 4.0, 1.0) == pytest.approx(7.0)  # p = 1: no overlap, the sum
    assert sim.smooth_max(3.0, 4.0, 2.0) == pytest.approx(5.0)  # p = 2: the Euclidean norm
    assert sim.smooth_max(3.0, 4.0, 64.0) == pytest.approx(4.0, rel=1e-3)  # large p: the maximum


@settings(max_examples=50, deadline=None)
@given(
    st.floats(0, 1e3, allow_nan=False),
    st.floats(0, 1e3, allow_nan=False),
    st.floats(1, 64, allow_nan=False),
)
def test_smooth_max_between_max_and_sum(a, b, p):
    s = sim.smooth_max(a, b, p)
    assert max(a, b) * (1 - 1e-9) <= s <= (a + b) * (1 + 1e-9) + 1e-300


def test_experts_touched_reference_values():
    # Mixtral (top-2 of 8): one token touches 2/8; two tokens 1 - (6/8)^2 = 0.4375
    assert sim.experts_touched_share(1, 2, 8) == pytest.approx(0.25)
    assert sim.experts_touched_share(2, 2, 8) == pytest.approx(0.4375)
    assert sim.experts_touched_share(0, 8, 256) == 0.0
    assert sim.experts_touched_share(1000, 0, 0) == 0.0  # dense model


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 256), st.integers(1, 10_000), st.integers(1, 10_000))
def test_experts_touched_grows_with_tokens_and_stays_a_share(experts, n1, n2):
    k = max(1, experts // 8)
    lo, hi = sorted((n1, n2))
    f_lo, f_hi = (
        sim.experts_touched_share(lo, k, experts),
        sim.experts_touched_share(hi, k, experts),
    )
    assert 0.0 <= f_lo <= f_hi <= 1.0


def test_queue_wait_md1_reference():
    # Pollaczek-Khinchine for M/D/1: W = rho s / (2 (1 - rho)); rho = 0.5, s = 1 -> 0.5
    assert sim.queue_wait(0.5, 1.0) == pytest.approx(0.5)
    assert sim.queue_wait(0.0, 2.0) == 0.0
    assert np.isinf(sim.queue_wait(1.0, 1.0))


def test_link_bandwidth_inside_and_beyond_the_domain():
    up, out = 900e9, 50e9
    assert sim.link_bandwidth(8, 8, up, out) == pytest.approx(up)
    # 16 GPUs on 8-GPU boards: 8 of 15 peers outside -> 1/B = (7/15)/up + (8/15)/out
    expected = 1.0 / ((7 / 15) / up + (8 / 15) / out)
    assert sim.link_bandwidth(16, 8, up, out) == pytest.approx(expected)
    assert sim.link_bandwidth(72, 72, up, out) == pytest.approx(up)


def test_no_communication_on_one_gpu():
    system = sim.system_arrays(get_hardware("h200-sxm"), get_llm("llama3.1-8b"), "fp8")
    assert sim.communication_time(system, 256.0, 1, 1, SOL) == 0.0
    assert sim.communication_time(system, 256.0, 8, 8, SOL) > 0.0


def test_weights_and_kv_per_gpu_reference():
    llama = get_llm("llama2-70b")
    always, experts = llama.weight_bytes("fp8")
    assert sim.weight_bytes_per_gpu(always, experts, 2, 2) == pytest.approx(34.5e9)
    kv = llama.kv_bytes_per_token("bf16")
    # tp 8 splits the 8 KV heads; tp 16 cannot split further (replicated), dp spreads sequences
    assert sim.kv_bytes_per_sequence_per_gpu(1000, kv, 8, 8, 8, 0.0, 1) == pytest.approx(
        1000 * kv / 8
    )
    assert sim.kv_bytes_per_sequence_per_gpu(1000, kv, 8, 16, 16, 0.0, 1) == pytest.approx(
        1000 * kv / 8
    )
    assert sim.kv_bytes_per_sequence_per_gpu(1000, kv, 8, 1, 8, 0.0, 1) == pytest.approx(
        1000 * kv / 8
    )
    # MLA latent: replicated on every TP rank
    ds = get_llm("deepseek-r1").kv_bytes_per_token("fp8")
    assert sim.kv_bytes_per_sequence_per_gpu(1000, ds, 1, 8, 8, 0.0, 1) == pytest.approx(1000 * ds)


def test_sliding_window_caps_cached_tokens():
    # GPT-OSS: half the layers keep a 128-token window: 10,000 tokens -> 5,000 + 64
    assert sim.cached_tokens(10_000, 0.5, 128) == pytest.approx(5064.0)
    assert sim.cached_tokens(100, 0.5, 128) == pytest.approx(100.0)


def test_batch_one_decode_is_weights_over_bandwidth():
    """Memory-bound decode at batch 1: TPOT = weight bytes / HBM bandwidth (Pope et al. 2023, §2)."""
    hw, llm = get_hardware("b200-sxm"), get_llm("llama2-70b")
    system = sim.system_arrays(hw, llm, "bf16")
    out = sim.serve(system, 1.0, 8.0, 8.0, 1, 1, SOL)
    expected = 69e9 * 2 / 8e12  # 138 GB over 8 TB/s = 17.25 ms
    assert out["tpot_s"] == pytest.approx(expected, rel=0.01)


def test_large_batch_is_bounded_by_compute_peak():
    """No layout beats peak / (2 x active parameters) tokens/s per GPU (Kaplan et al. 2020)."""
    hw, llm = get_hardware("h200-sxm"), get_llm("llama3.1-8b")
    ceiling = hw.peak_flops("fp8") / (2 * llm.active_params)
    light = sim.speed_of_light(hw, llm, input_tokens=1, output_tokens=2000)
    assert 0.3 * ceiling < light <= ceiling


def test_max_concurrency_reference():
    # 100 GB free, 1 GB per sequence -> 100 sequences; nothing free -> 0
    assert sim.max_concurrency(100e9, 1e9) == pytest.approx(100.0)
    assert sim.max_concurrency(-5e9, 1e9) == 0.0


# ---------------------------------------------------------------------------------------------------
# Serving invariants


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["llama2-70b", "deepseek-r1", "gpt-oss-120b", "mixtral-8x7b"]),
    st.floats(1, 4000),
    st.floats(1.05, 4),
    st.integers(16, 4000),
    st.integers(16, 4000),
)
def test_tpot_and_throughput_grow_with_concurrency(model, b, ratio, isl, osl):
    hw, llm = get_hardware("gb200-nvl72"), get_llm(model)
    system = sim.system_arrays(hw, llm, "fp4")
    eff = sim.Efficiency()
    lo = sim.serve(system, b, isl, osl, 8, 8, eff)
    hi = sim.serve(system, b * ratio, isl, osl, 8, 8, eff)
    assert hi["tpot_s"] >= lo["tpot_s"] * (1 - 1e-9)
    assert hi["output_tokens_per_s_per_gpu"] >= lo["output_tokens_per_s_per_gpu"] * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(1, 2000), st.integers(16, 4000), st.integers(16, 4000), st.booleans())
def test_littles_law(b, isl, osl, disaggregated):
    system = sim.system_arrays(get_hardware("h200-sxm"), get_llm("llama2-70b"), "fp8")
    out = sim.serve(system, b, isl, osl, 4, 4, sim.Efficiency(), disaggregated=disaggregated)
    assert out["output_tokens_per_s"] == pytest.approx(out["request_rate_per_s"] * osl)
    assert out["output_tokens_per_s_per_gpu"] * out["gpus_total"] == pytest.approx(
        out["output_tokens_per_s"]
    )
    assert out["gpus_total"] >= 4
    assert out["ttft_s_p99"] >= out["ttft_s"] > 0


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["b200-sxm", "h100-sxm", "mi325x", "gb300-nvl72"]),
    st.sampled_from(["llama3.1-8b", "mixtral-8x7b", "gpt-oss-120b"]),
    st.floats(0.1, 1.0),
)
def test_better_efficiency_never_lowers_throughput(hw_key, model, bandwidth):
    hw, llm = get_hardware(hw_key), get_llm(model)
    system = sim.system_arrays(hw, llm, hw.default_precision)
    base = sim.Efficiency(bandwidth=bandwidth)
    better = sim.with_fields(base, bandwidth=min(1.0, bandwidth * 1.5))
    a = sim.serve(system, 64.0, 500, 500, 1, 1, base)["output_tokens_per_s_per_gpu"]
    b = sim.serve(system, 64.0, 500, 500, 1, 1, better)["output_tokens_per_s_per_gpu"]
    assert b >= a * (1 - 1e-12)


def test_speculation_raises_interactivity_at_fixed_concurrency():
    system = sim.system_arrays(get_hardware("gb200-nvl72"), get_llm("deepseek-r1"), "fp4")
    plain = sim.serve(system, 32.0, 800, 3749, 1, 8, sim.Efficiency())
    spec = sim.serve(
        system, 32.0, 800, 3749, 1, 8, sim.Efficiency(), draft_tokens=3, accepted_tokens=2.5
    )
    assert spec["tokens_per_s_per_user"] > plain["tokens_per_s_per_user"]


# ---------------------------------------------------------------------------------------------------
# Curves, envelope, operating point, speed of light


def test_curve_has_contract_columns_and_provenance():
    curve = sim.simulate_curve("h200-sxm", "llama2-70b", input_tokens=120, output_tokens=291)
    assert isinstance(curve, Curve)
    assert set(CURVE_COLUMNS) <= set(curve.points.columns)
    assert len(curve.points) == 64
    p = curve.points
    assert np.allclose(p.output_tokens_per_s_per_gpu * p.gpu_count, p.output_tokens_per_s)
    assert np.allclose(p.tokens_per_s_per_user, 1.0 / p.tpot_s_mean)
    assert p.ttft_s_p90.isna().all()  # not modelled: NaN, never 0
    assert curve.provenance["hardware"] == "h200-sxm" and curve.provenance["precision"] == "fp8"
    assert curve.provenance["efficiency"] == "calibrated"
    assert (np.diff(p.concurrency) > 0).all()


def test_curve_with_explicit_concurrency_drops_points_that_do_not_fit():
    curve = sim.simulate_curve(
        "h100-sxm",
        "llama2-70b",
        input_tokens=1000,
        output_tokens=1000,
        gpus=2,
        concurrency=[1, 10, 1e6],
    )
    assert len(curve.points) == 2 and "exceed" in curve.warnings[0]
    # found by a simulator review: when no value was served the curve came back empty, silently
    with pytest.raises(sim.SimulatorError, match=r"^concurrency 1e\+06: none is served on 2 GPUs"):
        sim.simulate_curve(
            "h100-sxm",
            "llama2-70b",
            input_tokens=1000,
            output_tokens=1000,
            gpus=2,
            concurrency=[1e6],
        )


def test_envelope_is_a_pareto_frontier_over_layouts():
    curve = sim.simulate_envelope(
        "gb200-nvl72", "deepseek-r1", input_tokens=800, output_tokens=3749
    )
    p = curve.points
    assert p.instance_gpus.nunique() > 1
    thr, inter = p.output_tokens_per_s_per_gpu.to_numpy(), p.tokens_per_s_per_user.to_numpy()
    for i in range(len(p)):
        dominated = (thr > thr[i]) & (inter > inter[i])
        assert not dominated.any()


def test_the_envelope_holds_only_points_an_operating_point_can_be():
    """Found by a simulator review: with no latency limit the b200-sxm gpt-oss-120b envelope
    (1,000 in / 200 out) reached 15,287 tokens/s per GPU on points whose TTFT was infinite (the
    prefill queue unstable), above the 9,146 of the operating point printed over it, which never
    takes such points; the 2,742 it could take were hidden behind them."""
    workload = {"input_tokens": 1000, "output_tokens": 200}
    curve = sim.simulate_envelope("b200-sxm", "gpt-oss-120b", **workload)
    p = curve.points
    assert np.isfinite(p.ttft_s_p99).all() and np.isfinite(p.ttft_s_mean).all()
    point = sim.operating_point("b200-sxm", "gpt-oss-120b", points=64, **workload)
    assert p.output_tokens_per_s_per_gpu.max() == pytest.approx(point.tokens_per_s_per_gpu)


def test_a_curve_leaves_out_unsteady_points_so_its_csv_reads_back(tmp_path):
    """Found by a simulator review: `econ throughput simulate --gpus 4 --out curve.csv` (h100-sxm
    llama2-70b, 100 in / 100 out) wrote 27 rows with TTFT 'inf', and `econ throughput point` on
    that file refused it ("line 39, column 'ttft_s_mean': 'inf' is not a number")."""
    from econ.throughput.importers import import_file

    workload = {"input_tokens": 100, "output_tokens": 100}
    curve = sim.simulate_curve("h100-sxm", "llama2-70b", gpus=4, **workload)
    assert np.isfinite(curve.points.ttft_s_p99).all()
    assert any("queue grows without bound" in w for w in curve.warnings)
    target = tmp_path / "curve.csv"
    argv = ["throughput", "simulate", "--hardware", "h100-sxm", "--model", "llama2-70b"]
    assert _run([*argv, "--isl", "100", "--osl", "100", "--gpus", "4", "--out", str(target)]) == 0
    assert len(import_file(target).points) == len(curve.points)


def test_operating_point_meets_the_slo():
    point = sim.operating_point(
        "gb200-nvl72",
        "deepseek-r1",
        input_tokens=800,
        output_tokens=3749,
        tpot_limit_s=0.08,
        ttft_limit_s=2.0,
    )
    assert point.meets_slo
    assert point.tpot_s_p99 <= 0.08 * 1.0001 and point.ttft_s_p99 <= 2.0
    loose = sim.operating_point("gb200-nvl72", "deepseek-r1", input_tokens=800, output_tokens=3749)
    assert loose.tokens_per_s_per_gpu >= point.tokens_per_s_per_gpu


@pytest.mark.parametrize(
    ("hw", "model", "tpot"),
    [
        ("gb200-nvl72", "deepseek-r1", 0.08),
        ("h200-sxm", "llama2-70b", 0.2),
        ("b300-sxm", "gpt-oss-120b", None),
    ],
)
def test_speed_of_light_bounds_calibrated_and_default(hw, model, tpot):
    kw = {"input_tokens": 1000, "output_tokens": 1000, "tpot_limit_s": tpot}
    light = sim.speed_of_light(hw, model, **kw)
    assert light >= sim.operating_point(hw, model, **kw).tokens_per_s_per_gpu
    assert (
        light
        >= sim.operating_point(hw, model, efficiency=sim.Efficiency(), **kw).tokens_per_s_per_gpu
    )


def test_seed_case_measurement_below_speed_of_light():
    # MLPerf v6.0 CoreWeave GB200 NVL72 DeepSeek-R1 Server: 4,867.7 tokens/s per GPU (DESIGN.md §8)
    light = sim.speed_of_light(
        "gb200-nvl72",
        "deepseek-r1",
        input_tokens=800,
        output_tokens=3749,
        tpot_limit_s=0.08,
        ttft_limit_s=2.0,
    )
    assert light > 4867.7


def test_disaggregated_counts_prefill_gpus():
    curve = sim.simulate_curve(
        "gb200-nvl72",
        "deepseek-r1",
        input_tokens=8000,
        output_tokens=1000,
        gpus=8,
        disaggregated=True,
    )
    assert (curve.points.gpu_count > 8).all()


# ---------------------------------------------------------------------------------------------------
# Bad input


def test_unknown_hardware_and_model_list_keys():
    with pytest.raises(HardwareError, match="expected one of .*gb200-nvl72"):
        sim.speed_of_light("tpu-v9", "deepseek-r1", input_tokens=1, output_tokens=1)
    with pytest.raises(LLMError, match="expected one of .*deepseek-r1"):
        sim.speed_of_light("gb200-nvl72", "gpt-5", input_tokens=1, output_tokens=1)


def test_precision_the_hardware_lacks():
    with pytest.raises(HardwareError, match="no native FP4"):
        sim.simulate_curve("h100-sxm", "llama2-70b", "fp4", input_tokens=1, output_tokens=1)


def test_model_that_does_not_fit_says_bytes_needed_and_available():
    with pytest.raises(sim.SimulatorError) as err:
        sim.simulate_envelope(
            "h100-sxm", "llama3.1-405b", "bf16", input_tokens=1000, output_tokens=1000, max_gpus=4
        )
    text = str(err.value)
    assert (
        "does not fit" in text and "needs" in text and "GB per GPU" in text and "available" in text
    )


def test_slo_nobody_meets_reports_the_closest():
    with pytest.raises(sim.SimulatorError, match="closest is .* GPUs .*TPOT .* ms"):
        sim.operating_point(
            "h100-sxm", "llama2-70b", input_tokens=100, output_tokens=100, tpot_limit_s=1e-4
        )
    point = sim.operating_point(
        "h100-sxm",
        "llama2-70b",
        input_tokens=100,
        output_tokens=100,
        tpot_limit_s=1e-4,
        strict=False,
    )
    assert not point.meets_slo and point.tpot_s_p99 > 1e-4


@pytest.mark.parametrize("isl", [0, -5, math.nan, math.inf, "100", True, 1e12])
def test_nonsense_lengths(isl):
    with pytest.raises(sim.SimulatorError, match="input length"):
        sim.simulate_curve("h200-sxm", "llama2-70b", input_tokens=isl, output_tokens=100)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gpus": 8, "tensor_parallel": 3}, "divisor"),
        ({"gpus": 0}, "positive integer"),
        ({"tensor_parallel": 2}, "needs gpus"),
        ({"concurrency": [0.5, 2]}, "concurrency"),
        ({"draft_tokens": 2, "accepted_tokens": 4.0}, "accepted tokens"),
    ],
)
def test_bad_layouts_and_options(kwargs, message):
    with pytest.raises(sim.SimulatorError, match=message):
        sim.simulate_curve("h200-sxm", "llama2-70b", input_tokens=100, output_tokens=100, **kwargs)


def test_bad_limits():
    with pytest.raises(sim.SimulatorError, match="TPOT limit"):
        sim.operating_point(
            "h200-sxm", "llama2-70b", input_tokens=10, output_tokens=10, tpot_limit_s=-1.0
        )


# ---------------------------------------------------------------------------------------------------
# CLI (the command functions through a small parser; the lead wires them into econ's)


def _run(argv):
    parser = argparse.ArgumentParser(prog="econ")
    sub = parser.add_subparsers(dest="command")
    cli.register(sub)
    group = sub.add_parser("throughput").add_subparsers(dest="throughput_command")
    cli.register_throughput(group)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except InputError as exc:
        return 3, str(exc)


def test_cli_simulate_json_scenario(capsys):
    code = _run(
        [
            "throughput",
            "simulate",
            "--hardware",
            "gb200-nvl72",
            "--model",
            "deepseek-r1",
            "--precision",
            "fp4",
            "--scenario",
            "server",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens_per_s_per_gpu"] > 0 and out["meets_slo"]
    assert out["tpot_limit_s"] == 0.08 and out["ttft_limit_s"] == 2.0
    assert out["output_tokens"] == 3749
    assert out["speed_of_light_tokens_per_s_per_gpu"] > out["tokens_per_s_per_gpu"]
    assert out["curve"] and "output_tokens_per_s_per_gpu" in out["curve"][0]


@pytest.mark.parametrize(
    ("hardware", "model", "layout"),
    [("h200-sxm", "llama2-70b", (8, 8)), ("gb200-nvl72", "deepseek-r1", (8, 8))],
)
def test_cli_simulate_fixed_layout_is_the_operating_points_too(hardware, model, layout, capsys):
    """An infrastructure review: `--gpus 8 --tp 8` printed the 8-GPU curve (llama2-70b on H200:
    at most 1,891 tokens/s per GPU) under an operating point of 4,316 on 1 GPU (tp 1), and
    DeepSeek-R1 on GB200 "8 GPUs (tp 1)": the point, the speed of light and the error band with
    its Monte Carlo input searched every layout up to --gpus."""
    from econ.throughput.calibration import get_workload

    gpus, tp = layout
    argv = ["throughput", "simulate", "--hardware", hardware, "--model", model]
    argv += ["--scenario", "server", "--gpus", str(gpus), "--tp", str(tp), "--format", "json"]
    assert _run(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["instance_gpus"], out["tensor_parallel"]) == layout
    assert {(p["instance_gpus"], p["tensor_parallel"]) for p in out["curve"]} == {layout}
    assert out["tokens_per_s_per_gpu"] <= max(
        p["output_tokens_per_s_per_gpu"] for p in out["curve"]
    )
    w = get_workload(model, "server")
    workload = {
        k: out[k] for k in ("input_tokens", "output_tokens", "tpot_limit_s", "ttft_limit_s")
    } | {"draft_tokens": w.draft_tokens, "accepted_tokens": w.accepted_tokens}
    point = sim.operating_point(hardware, model, gpus=gpus, tensor_parallel=tp, **workload)
    light = sim.speed_of_light(hardware, model, gpus=gpus, tensor_parallel=tp, **workload)
    assert out["tokens_per_s_per_gpu"] == pytest.approx(point.tokens_per_s_per_gpu, rel=1e-12)
    assert out["speed_of_light_tokens_per_s_per_gpu"] == pytest.approx(light, rel=1e-12)
    band = out["error_band"]
    assert band["predicted_tokens_per_s_per_gpu"] == out["tokens_per_s_per_gpu"]
    searched = sim.operating_point(hardware, model, max_gpus=gpus, **workload)
    assert searched.instance_gpus != gpus or searched.tensor_parallel != tp  # what it said


def test_cli_simulate_fixed_layout_beyond_the_calibration_names_the_search_without_it(capsys):
    argv = ["throughput", "simulate", "--hardware", "h200-sxm", "--model", "llama2-70b"]
    assert _run([*argv, "--scenario", "server", "--gpus", "16"]) == 0
    out = capsys.readouterr().out
    assert "on 16 GPUs (tp 16)" in out
    assert "limited to 8 GPUs the simulator predicts 4,316 tokens/s per GPU (--max-gpus 8 " in out
    assert out.count("(--max-gpus 8 without --gpus)") == 1


def test_operating_point_on_a_fixed_layout_refuses_a_bad_one():
    workload = {"input_tokens": 128, "output_tokens": 256}
    with pytest.raises(sim.SimulatorError, match="positive divisor of gpus = 8, got 3"):
        sim.operating_point("h200-sxm", "llama2-70b", gpus=8, tensor_parallel=3, **workload)
    with pytest.raises(sim.SimulatorError, match="tensor_parallel needs gpus"):
        sim.speed_of_light("h200-sxm", "llama2-70b", tensor_parallel=8, **workload)
    with pytest.raises(sim.SimulatorError, match=r"^the layout of 8 GPUs \(tp 8\) of 'h200-sxm'"):
        sim.operating_point("h200-sxm", "llama2-70b", gpus=8, tpot_limit_s=1e-4, **workload)


def test_a_tensor_parallel_degree_that_does_not_split_the_heads_is_refused():
    """Found by a simulator review: `--gpus 3` on llama2-70b (64 query heads) printed 2,005
    tokens/s per GPU on 3 GPUs (tp 3), `--gpus 100000000` an operating point of 0 tokens/s per GPU
    (exit 0), though no serving stack runs attention over heads that do not split evenly."""
    workload = {"input_tokens": 128, "output_tokens": 256}
    expected = r"^tensor parallel degree 3 does not split the 64 query heads and 8 KV heads"
    with pytest.raises(sim.SimulatorError, match=expected):
        sim.operating_point("h100-sxm", "llama2-70b", gpus=3, **workload)
    with pytest.raises(sim.SimulatorError, match="expected one of 1, 2, 4, 8, 16, 32, 64 "):
        sim.simulate_curve("h100-sxm", "llama2-70b", gpus=128, **workload)
    with pytest.raises(sim.SimulatorError, match="the 128 query heads of 'deepseek-r1'"):
        sim.operating_point("gb200-nvl72", "deepseek-r1", gpus=72, tensor_parallel=3, **workload)
    argv = ["throughput", "simulate", "--hardware", "h100-sxm", "--model", "llama2-70b"]
    code, message = _run([*argv, "--scenario", "server", "--gpus", "3"])
    assert code == 3 and "does not split the 64 query heads" in message


def test_the_envelope_searches_only_layouts_that_split_the_heads():
    """Found by a simulator review: the NVL72 envelope of llama2-70b (64 query heads) searched 72-way
    tensor parallelism, and at a p99 TPOT limit of 5.55 ms its operating point was that layout
    (3 tokens/s per GPU on 72 GPUs, tp 72); now tp 64 is the most it tries."""
    configs = sim.parallel_configs(get_llm("llama2-70b"), get_hardware("gb200-nvl72"))
    assert [72, 72] not in configs.tolist() and [64, 64] in configs.tolist()
    for key in ("deepseek-r1", "gpt-oss-120b", "mixtral-8x7b", "llama3.1-8b"):
        llm = get_llm(key)
        for hardware in ("gb200-nvl72", "h100-sxm"):
            tps = sim.parallel_configs(llm, get_hardware(hardware))[:, 1]
            assert all(llm.q_heads % tp == 0 for tp in tps), (key, hardware)
    point = sim.operating_point(
        "gb200-nvl72", "llama2-70b", input_tokens=1000, output_tokens=200, tpot_limit_s=5.6e-3
    )
    assert point.tensor_parallel <= 64


@pytest.mark.parametrize(
    ("coefficients", "said"),
    [
        ("default", "coefficients: uncalibrated defaults (the fit's priors; no model efficiency)"),
        ("speed-of-light", "coefficients: speed of light (every efficiency 1, no overheads, "),
    ],
)
def test_cli_simulate_says_which_coefficients_it_used(capsys, coefficients, said):
    """Found by a simulator review: --coefficients default and speed-of-light both printed
    'coefficients: given'."""
    argv = ["throughput", "simulate", "--hardware", "h100-sxm", "--model", "llama2-70b"]
    assert _run([*argv, "--scenario", "server", "--coefficients", coefficients]) == 0
    out = capsys.readouterr().out
    assert said in out and "coefficients: given" not in out


def test_cli_simulate_warns_of_a_ttft_limit_typed_in_milliseconds(capsys):
    """Found by a simulator review: `--ttft-s 2000` (2,000 ms meant) was taken as 2,000 s without a
    word, where `econ throughput point --ttft-p99-s 2000` warns of the slip."""
    argv = ["throughput", "simulate", "--hardware", "h200-sxm", "--model", "llama2-70b"]
    assert _run([*argv, "--isl", "120", "--osl", "291", "--ttft-s", "2000"]) == 0
    assert "warning: --ttft-s = 2,000 s is above 60 s" in capsys.readouterr().out
    assert _run([*argv, "--isl", "120", "--osl", "291", "--ttft-s", "2"]) == 0
    assert "--ttft-s =" not in capsys.readouterr().out


def test_cli_simulate_header_says_when_the_mlperf_workload_was_changed(capsys):
    """Found by a simulator review: `--scenario server --isl 500 --tpot-ms 100` was headed
    'MLPerf server' over a workload that is not MLPerf's (its band is not checked against the
    MLPerf result for that reason)."""
    argv = ["throughput", "simulate", "--hardware", "h200-sxm", "--model", "llama2-70b"]
    assert _run([*argv, "--scenario", "server", "--isl", "500", "--tpot-ms", "100"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("MLPerf server changed by --isl, --tpot-ms (not MLPerf's workload)")
    assert _run([*argv, "--scenario", "server", "--isl", "120", "--tpot-ms", "200"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("at FP8, MLPerf server")


def test_cli_simulate_table_and_out(tmp_path, capsys):
    target = tmp_path / "curve.csv"
    argv = [
        "throughput",
        "simulate",
        "--hardware",
        "h200-sxm",
        "--model",
        "llama2-70b",
        "--isl",
        "128",
        "--osl",
        "256",
        "--tpot-ms",
        "100",
        "--out",
        str(target),
    ]
    assert _run(argv) == 0
    assert "operating point" in capsys.readouterr().out
    assert target.read_text().startswith("concurrency,")
    code, message = _run(argv)
    assert code == 3 and "--force" in message
    # found by a simulator review: --out curve.parquet wrote CSV text under that name (`econ
    # throughput import --out` refuses it)
    code, message = _run([*argv[:-1], str(tmp_path / "curve.parquet")])
    assert code == 3 and message.endswith("expected a path ending in .csv")
    assert not (tmp_path / "curve.parquet").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--hardware", "nope", "--model", "llama2-70b", "--isl", "1", "--osl", "1"],
            "expected one of",
        ),
        (["--hardware", "h100-sxm", "--model", "llama2-70b"], "give --isl and --osl"),
        (
            [
                "--hardware",
                "h100-sxm",
                "--model",
                "llama2-70b",
                "--precision",
                "fp4",
                "--scenario",
                "server",
            ],
            "no native FP4",
        ),
        (
            ["--hardware", "h100-sxm", "--model", "mixtral-8x7b", "--scenario", "interactive"],
            "no 'interactive' scenario",
        ),
        (
            [
                "--hardware",
                "h100-sxm",
                "--model",
                "llama2-70b",
                "--scenario",
                "server",
                "--tpot-ms",
                "0.01",
            ],
            "closest",
        ),
    ],
)
def test_cli_simulate_bad_input_exit_3(argv, message):
    code, text = _run(["throughput", "simulate", *argv])
    assert code == 3 and message in text


def test_cli_catalog_lists(capsys):
    assert _run(["hardware", "list"]) == 0
    assert "gb200-nvl72" in capsys.readouterr().out
    assert _run(["llms", "list", "--format", "json"]) == 0
    assert {r["key"] for r in json.loads(capsys.readouterr().out)} >= {"deepseek-r1", "llama2-70b"}


def test_headroom_to_speed_of_light():
    from econ.throughput.simulator import headroom_to_speed_of_light

    assert headroom_to_speed_of_light(4000.0, 6000.0) == pytest.approx(0.5)
    assert np.isnan(headroom_to_speed_of_light(0.0, 6000.0))
    assert headroom_to_speed_of_light(np.array([1.0, 2.0]), 4.0).tolist() == [3.0, 1.0]
