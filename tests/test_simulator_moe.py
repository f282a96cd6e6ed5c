"""Mixture-of-experts handling and the per-model efficiency of the throughput simulator.

- the expected share of experts a batch touches against a Monte Carlo of uniform routing (each token
  draws k distinct experts of E) and its limits (one token: k / E; many tokens: all experts);
- the per-model efficiency: step times divided by it exactly, the fit's update step (the median
  log miss of a model's targets), the stored file (its reader, and that the held-out one never saw
  MLPerf v6.1) and that every calibrated prediction carries it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.hardware import get_hardware
from econ.llms import get_llm
from econ.throughput import calibration as cal
from econ.throughput import errorbands as eb
from econ.throughput import simulator as sim
from econ.throughput.efficiency import (
    CalibrationError,
    load_efficiency,
    load_model_efficiencies,
    load_model_efficiency,
)

# ---------------------------------------------------------------------------------------------------
# Distinct experts touched by a batch


def distinct_experts_monte_carlo(tokens: int, k: int, experts: int, trials: int, seed: int):
    """Distinct experts per trial when each of `tokens` tokens routes to k distinct experts drawn
    uniformly from `experts` (the uniform-routing assumption of the closed form)."""
    rng = np.random.default_rng(seed)
    # k distinct experts per token: the first k of a random permutation (argsort of uniforms)
    picks = np.argsort(rng.random((trials, tokens, experts)), axis=-1)[..., :k]
    hit = np.zeros((trials, experts), dtype=bool)
    np.put_along_axis(hit, picks.reshape(trials, -1), True, axis=1)
    return hit.sum(axis=1)


@pytest.mark.parametrize(
    ("tokens", "k", "experts"),
    [(1, 4, 128), (8, 2, 8), (16, 4, 128), (64, 8, 256), (200, 4, 128), (3, 1, 1)],
)
def test_distinct_experts_match_a_monte_carlo_of_uniform_routing(tokens, k, experts):
    trials = 4000
    counts = distinct_experts_monte_carlo(tokens, k, experts, trials, seed=tokens * 1000 + k)
    expected = experts * float(sim.experts_touched_share(tokens, k, experts))
    standard_error = counts.std(ddof=1) / math.sqrt(trials)
    # five standard errors (and a floor where every trial gives the same count)
    assert abs(counts.mean() - expected) <= 5 * standard_error + 1e-9


def test_distinct_experts_limits():
    # one token touches exactly its k experts
    assert sim.experts_touched_share(1, 4, 128) == pytest.approx(4 / 128)
    assert sim.experts_touched_share(1, 8, 256) * 256 == pytest.approx(8)
    # a large batch touches every expert; no token touches none
    assert sim.experts_touched_share(1e6, 4, 128) == pytest.approx(1.0)
    assert sim.experts_touched_share(0, 4, 128) == 0.0
    # k = E: every token uses every expert
    assert sim.experts_touched_share(1, 8, 8) == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(
    experts=st.integers(1, 512),
    share=st.floats(0.0, 1.0),
    tokens=st.floats(1.0, 1e5),
)
def test_distinct_experts_between_one_token_and_all_experts(experts, share, tokens):
    k = max(1, round(share * experts))
    f = float(sim.experts_touched_share(tokens, k, experts))
    # at least one token's k experts, at most all, at most k per token
    assert k / experts - 1e-12 <= f <= 1.0 + 1e-12
    assert f * experts <= tokens * k + 1e-9


# ---------------------------------------------------------------------------------------------------
# Per-model efficiency


def _offline(eff, model="gpt-oss-120b", hw="b200-sxm"):
    return sim.operating_point(
        hw, model, input_tokens=1500, output_tokens=1312, max_gpus=8, efficiency=eff
    ).tokens_per_s_per_gpu


def test_model_efficiency_divides_every_step_time():
    system = sim.system_arrays(get_hardware("b200-sxm"), get_llm("gpt-oss-120b"), "fp4")
    eff = cal.PRIOR
    args = (system, 512.0, 2000.0, 600.0, 750.0, 512.0, 1.0, 8.0)
    base = sim.forward_time(*args, eff)
    half = sim.forward_time(*args, replace(eff, model_efficiency=0.5))
    assert half[0] == pytest.approx(2.0 * base[0], rel=1e-12)
    # the roofline terms themselves do not change: the efficiency is the stack's, not physics
    assert half[1:] == pytest.approx(base[1:], rel=1e-12)


@pytest.mark.parametrize("factor", [0.5, 0.8, 1.25])
def test_offline_throughput_scales_with_the_model_efficiency(factor):
    """Without latency limits every time of every layout and concurrency scales by 1 / eta, so the
    best tokens/s per GPU scales by eta (Little's law: X = B / R)."""
    eff = cal.PRIOR
    assert _offline(replace(eff, model_efficiency=factor)) == pytest.approx(
        factor * _offline(eff), rel=1e-9
    )


def test_update_model_efficiencies_reference():
    models = ["a", "a", "a", "b", "b", "c"]
    measured = [100.0, 90.0, 200.0, 50.0, 50.0, 10.0]
    predicted = [200.0, 100.0, 200.0, 25.0, 100.0, np.nan]
    out = cal.update_model_efficiencies(models, measured, predicted, {"a": 1.0, "b": 2.0, "c": 0.7})
    # a: ln ratios ln 0.5, ln 0.9, 0 -> median ln 0.9; b: median of ln 2 and ln 0.5 = 0
    assert out["a"] == pytest.approx(0.9)
    assert out["b"] == pytest.approx(2.0)
    assert out["c"] == 0.7, "no finite prediction: unchanged"


def test_update_makes_the_median_miss_of_each_model_zero_offline():
    """One update with the hardware coefficients held: each model's predictions (Offline, which
    scale exactly with eta) then miss by a median of zero in log space."""
    targets = cal.calibration_targets(cal.load_rows())
    targets = targets[targets["scenario"] == "Offline"].reset_index(drop=True)
    fits = cal.load_all_efficiencies()
    ones = dict.fromkeys(set(targets["model"]), 1.0)
    batch = cal.PredictionBatch.build(targets)
    before = batch.predict(cal.efficiency_by_row(targets, fits, model_efficiencies=ones))
    updated = cal.update_model_efficiencies(targets["model"], targets["measured"], before, ones)
    after = batch.predict(cal.efficiency_by_row(targets, fits, model_efficiencies=updated))
    log_miss = pd.Series(np.log(targets["measured"] / after)).groupby(targets["model"]).median()
    assert np.abs(log_miss.to_numpy()) == pytest.approx(0.0, abs=1e-9)


def test_model_efficiency_file_reader(tmp_path):
    assert load_model_efficiencies(tmp_path) == {}
    value, info = load_model_efficiency("gpt-oss-120b", tmp_path)
    assert value == 1.0 and "none stored" in info["model_efficiency"]
    cal.save_model_efficiencies(
        {"gpt-oss-120b": {"efficiency": 0.6, "source": "fit", "rows": 3}}, tmp_path
    )
    value, info = load_model_efficiency("gpt-oss-120b", tmp_path)
    assert value == 0.6 and info["model_efficiency_rows"] == 3


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[model.x]\nefficiency = -1.0\n", "model.x.efficiency must be a positive number"),
        ("[model.x]\nefficiency = true\n", "must be a positive number"),
        ("[model.x]\nsource = 'fit'\n", "must be a positive number, got None"),
        ("[model.x]\nefficiency = 0.5\nspeedup = 2\n", "unknown fields speedup"),
        ("[model.x\n", "not valid TOML"),
    ],
)
def test_bad_model_efficiency_file(tmp_path, body, message):
    (tmp_path / "models.toml").write_text(body)
    with pytest.raises(CalibrationError, match=message) as info:
        load_model_efficiencies(tmp_path)
    assert "models.toml" in str(info.value)


def test_stored_model_efficiencies_cover_the_calibrated_models_and_held_out_never_saw_v61():
    stored = load_model_efficiencies()
    targets = cal.calibration_targets(cal.load_rows())
    assert set(targets["model"]) <= set(stored)
    for value, info in stored.values():
        assert 0.05 < value < 20.0
        assert info["source"] == "fit"
    held = load_model_efficiencies(cal.holdout_dir(eb.TEST_ROUND))
    assert set(held) == set(stored)
    assert all(eb.TEST_ROUND not in info["data"] for _, info in held.values())
    # the mixture-of-experts model the shared coefficients over-predicted most runs slowest
    assert stored["gpt-oss-120b"][0] == min(v for v, _ in stored.values())


def test_calibrated_predictions_carry_the_stored_model_efficiency():
    factor = load_model_efficiencies()["gpt-oss-120b"][0]
    eff, _ = load_efficiency("b200-sxm", "fp4")
    point = sim.operating_point(
        "b200-sxm", "gpt-oss-120b", input_tokens=1500, output_tokens=1312, max_gpus=8
    )
    assert point.tokens_per_s_per_gpu == pytest.approx(
        _offline(replace(eff, model_efficiency=factor)), rel=1e-9
    )
    curve = sim.simulate_curve("b200-sxm", "gpt-oss-120b", input_tokens=1500, output_tokens=1312)
    assert curve.provenance["model_efficiency"] == factor
    # given coefficients (the speed of light among them) are used as they are
    light = sim.speed_of_light(
        "b200-sxm", "gpt-oss-120b", input_tokens=1500, output_tokens=1312, max_gpus=8
    )
    assert light == pytest.approx(_offline(sim.SPEED_OF_LIGHT), rel=1e-9)
    targets = cal.calibration_targets(cal.load_rows())
    by_row = cal.efficiency_by_row(targets, cal.load_all_efficiencies())
    gpt = (targets["model"] == "gpt-oss-120b").to_numpy()
    assert np.all(by_row.model_efficiency[gpt] == factor)


def test_a_partial_calibration_keeps_the_stored_model_efficiencies(tmp_path):
    cal.calibrate(["h100-sxm"], directory=tmp_path, starts=1)
    assert not (tmp_path / "models.toml").exists()


def test_a_hardware_file_cannot_hold_a_model_efficiency(tmp_path):
    (tmp_path / "h100-sxm.toml").write_text(
        'hardware = "h100-sxm"\n[precision.fp8]\nmodel_efficiency = 0.5\n'
    )
    with pytest.raises(CalibrationError, match="unknown fields model_efficiency"):
        load_efficiency("h100-sxm", "fp8", tmp_path)


def test_cli_simulate_names_the_model_efficiency(capsys):
    from econ.cli import main

    argv = ["throughput", "simulate", "--hardware", "b200-sxm", "--model", "gpt-oss-120b"]
    argv += ["--isl", "1500", "--osl", "1312", "--points", "16"]
    assert main(argv) == 0
    factor = load_model_efficiencies()["gpt-oss-120b"][0]
    assert f"model efficiency {factor:.3f} (fitted across hardware)" in capsys.readouterr().out
