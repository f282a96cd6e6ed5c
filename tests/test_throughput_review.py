"""Throughput importers, operating points and measured-curve scenarios: defects an outside review
found (warnings copied into every point, model names read as GPU counts, a speed exactly at its
limit refused, curves of other hardware accepted silently, percentile-only latencies in the wrong
unit, a stale curve cache, --gpus overriding the file in silence, MLPerf's nan). Each test builds
its file from a real sample in ../shared (copied into tmp_path) or writes a small one of its own.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.labels import counted
from econ.reporting import make_stamp
from econ.scenario import apply_overrides, dumps, validate_dict
from econ.throughput.importers import (
    CurveError,
    LatencyUnitError,
    import_file,
    load_curve,
    write_curve_csv,
)
from econ.throughput.importers._common import gpu_count_from_text
from econ.throughput.importers.genai_perf import tokenizer_differs
from econ.throughput.match import curve_mismatches, served_model
from econ.throughput.operating_point import NoFeasiblePointError, operating_point
from tests.conftest import ROOT, SHARED_DATA, needs_shared_data

SAMPLES = SHARED_DATA / "samples"
VLLM_RUN = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"


def vllm_lines(tmp_path: Path, n: int, name: str = "runs.jsonl") -> Path:
    """n runs of the real vLLM sample appended as JSON Lines, one per client concurrency (1..n),
    each with the sample's 8 completed requests (fewer than 10: a warning of its own)."""
    run = json.loads(VLLM_RUN.read_text())
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps(dict(run, max_concurrency=c)) + "\n" for c in range(1, n + 1))
    )
    return path


# --- 1. each point holds its own warnings; the curve's are said once ----------------------------


@needs_shared_data
def test_a_point_holds_only_its_own_warnings(tmp_path: Path):
    n = 60
    curve = import_file(vllm_lines(tmp_path, n))
    assert json.loads(VLLM_RUN.read_text())["completed"] == 8  # < 10: each run is warned about
    cells = list(curve.points["warnings"])
    assert cells == [
        f"line {i}: only 8 completed requests; the statistics are noisy" for i in range(1, n + 1)
    ]
    # the file's warnings (no GPU count) are on the curve once, not on its points
    file_level = [w for w in curve.warnings if "how many GPUs" in w]
    assert len(file_level) == 1 and not any("how many GPUs" in c for c in cells)
    assert set(cells) <= set(curve.warnings) and len(curve.warnings) == len(set(curve.warnings))


@needs_shared_data
def test_point_warnings_grow_linearly_with_the_runs(tmp_path: Path):
    """Each line's warning was copied into every point: n runs held n^2 warnings (4,000 runs in
    4.7 MB took 4.8 GB). The cells' total size now grows as n."""
    sizes = {}
    for n in (20, 80):
        curve = import_file(vllm_lines(tmp_path, n, f"runs{n}.jsonl"))
        sizes[n] = sum(map(len, curve.points["warnings"]))
    assert sizes[80] / sizes[20] < 4.5  # 4x the runs; n^2 would be 16x


@needs_shared_data
def test_the_curve_csv_keeps_the_curve_warnings_once(tmp_path: Path):
    original = import_file(vllm_lines(tmp_path, 5))
    path = write_curve_csv(original, tmp_path / "curve.csv")
    frame = pd.read_csv(path, keep_default_na=False)
    said = frame["curve_warnings"].tolist()
    assert "how many GPUs" in said[0] and said[1:] == [""] * 4
    assert frame["warnings"].tolist() == list(original.points["warnings"])
    again = load_curve(path)
    assert set(original.warnings) <= set(again.warnings)
    assert list(again.points["warnings"].str.split(" | ", regex=False).str[0]) == list(
        original.points["warnings"]
    )


# --- 2. a model's size in a file name is not a GPU count -----------------------------------------

MLPERF_SERVER = (
    SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
)


@needs_shared_data
@pytest.mark.parametrize(
    ("sample", "name"),
    [
        (MLPERF_SERVER, "mixtral-8x7b-Server-mlperf_log_summary.txt"),
        (VLLM_RUN, "mixtral-8x22b-instruct-vllm.json"),
    ],
)
def test_a_mixture_of_experts_name_is_not_a_gpu_count(tmp_path: Path, sample: Path, name: str):
    path = tmp_path / name
    path.write_bytes(sample.read_bytes())
    curve = import_file(path)
    assert curve.points["gpu_count"].isna().all()
    assert curve.provenance["gpu_count_basis"] == "unknown"
    assert any("does not say how many GPUs" in w for w in curve.warnings)


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("mixtral-8x7b", None),
        ("mixtral-8x22b-instruct", None),
        ("Mixtral-8x7B-v0.1", None),
        ("mixtral-8x7b-8xH100", 8),  # the model's 8x7b skipped, the GPUs' 8xH100 read
        ("mixtral_8x7B_h100x8", 8),
        ("4xNVIDIA_L40S", 4),
        ("4x_L40S", 4),
        ("H200-SXM-141GBx8_TRT", 8),
        ("B200x8", 8),
        ("run-3x-faster", None),
    ],
)
def test_gpu_counts_need_a_gpu_name(name: str, count: int | None):
    found, how = gpu_count_from_text(name)
    if count is None:
        assert math.isnan(found) and how == ""
    else:
        assert found == count


# --- 3. a point exactly at the minimum per-user speed meets it ----------------------------------


def one_point_curve(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "curve.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count,tokens_per_s_per_user\n" + rows)
    return path


@pytest.mark.parametrize("reading", ["interpolate", "step"])
def test_a_point_exactly_at_the_minimum_speed_meets_it(tmp_path: Path, reading: str):
    curve = import_file(one_point_curve(tmp_path, "8,800,8,50\n16,1600,8,20\n"))
    at_limit = curve.points.iloc[0]  # 50 tokens/s per user, 800 / 8 = 100 per GPU
    point = operating_point(
        curve, min_tokens_per_s_per_user=float(at_limit["tokens_per_s_per_user"]), reading=reading
    )
    assert point.tokens_per_s_per_gpu == at_limit["output_tokens_per_s_per_gpu"] == 100.0
    alone = import_file(one_point_curve(tmp_path, "8,800,8,50\n"))
    assert operating_point(alone, min_tokens_per_s_per_user=50.0).tokens_per_s_per_gpu == 100.0


def test_no_point_message_names_the_broken_limit(tmp_path: Path):
    curve = import_file(one_point_curve(tmp_path, "8,800,8,50\n"))
    with pytest.raises(NoFeasiblePointError) as caught:
        operating_point(curve, min_tokens_per_s_per_user=50.001)
    message = str(caught.value)
    assert "100 tokens/s per GPU with tokens_per_s_per_user = 50 (limit 50.001)" in message
    assert " with . " not in message


# --- 4. a scenario's measured curve is compared with its model and hardware -------------------

GLM_GAUDI3 = SAMPLES / "inferencex" / "inferencex-app-supplemental-bmk-glm4.7-gaudi3.json"
LLAMA_H200 = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"


def scenario_with_curve(tmp_path: Path, sample: Path, name: str, **extra) -> Path:
    """The ready-made H200 llama2-70b scenario with its throughput from a measured curve file."""
    (tmp_path / name).write_bytes(sample.read_bytes())
    data = apply_overrides(
        tomllib.loads(LLAMA_H200.read_text()),
        {"throughput.measured": {"curve": name, **extra}, "throughput.slo": {"ttft_p99_s": 2.0}},
    )
    path = tmp_path / "s.toml"
    path.write_text(dumps(validate_dict(data)))
    return path


@needs_shared_data
def test_a_curve_of_other_hardware_and_model_is_warned_of(tmp_path: Path):
    path = scenario_with_curve(tmp_path, GLM_GAUDI3, "glm.json")
    sample = json.loads(GLM_GAUDI3.read_text())[0]
    assert (sample["hw"], sample["model"]) == ("gaudi3", "zai-org/GLM-4.7")
    warnings = project(load_scenario(path)).warnings[0]
    assert (
        "throughput: the measured curve "
        f"{tmp_path / 'glm.json'} is not the scenario's: hardware: the curve ran on gaudi3; "
        "the scenario's fleet is h200-sxm"
    ) in warnings
    assert any(
        "model: the curve served zai-org/GLM-4.7; the scenario serves llama2-70b" in w
        for w in warnings
    )


@needs_shared_data
def test_a_curve_that_states_no_hardware_is_said_not_compared(tmp_path: Path):
    path = scenario_with_curve(tmp_path, MLPERF_SERVER, "server.txt", gpus=8)
    warnings = project(load_scenario(path)).warnings[0]
    assert any(
        "server.txt does not state its hardware: not compared with the fleet's h200-sxm" in w
        for w in warnings
    )
    assert not any("is not the scenario's" in w for w in warnings)  # llama2-70b, as the scenario


def test_the_comparison_names_both_sides():
    points = pd.DataFrame({"model": ["meta-llama/Llama-2-70b-chat-hf"], "hardware": ["H200"]})
    assert curve_mismatches({}, points, "h200-sxm", "llama2-70b") == ([], [])
    assert curve_mismatches({}, points, "gb300-nvl72", "deepseek-r1") == (
        [
            "hardware: the curve ran on H200; the scenario's fleet is gb300-nvl72",
            "model: the curve served meta-llama/Llama-2-70b-chat-hf; the scenario serves "
            "deepseek-r1",
        ],
        [],
    )
    assert curve_mismatches({}, points.iloc[:0], "h200-sxm", None) == ([], ["hardware", "model"])
    (long,), _ = curve_mismatches({"model": "m" * 100_000}, points, "h200-sxm", "llama2-70b")
    assert len(long) < 400 and long.endswith("(100,000 characters); the scenario serves llama2-70b")
    assert served_model("", "", "llama2-70b-h200", "H200s serving Llama-2-70B") == "llama2-70b"
    assert served_model("deepseek-r1", "", "llama2-70b") == "deepseek-r1"


# --- 5. the latency-unit checks read every TPOT and TTFT statistic present ----------------------

PERCENTILES_ONLY = "concurrency,output_tokens_per_s,gpu_count,{ttft},{tpot}\n8,800,1,{a},{b}\n"


def test_percentiles_only_in_the_wrong_unit_are_refused(tmp_path: Path):
    """Seconds under *_ms headers: TPOT p99 0.025 ms is 25 us, 40,000 tokens/s per user."""
    path = tmp_path / "run.csv"
    path.write_text(PERCENTILES_ONLY.format(ttft="ttft_ms_p99", tpot="tpot_ms_p99", a=0.5, b=0.025))
    with pytest.raises(LatencyUnitError, match=r"p99 TPOT 2\.5e-05 s \(40,000 tokens/s per user\)"):
        import_file(path)
    path.write_text(PERCENTILES_ONLY.format(ttft="ttft_s_p99", tpot="tpot_s_p99", a=0.5, b=0.025))
    assert import_file(path).points["tpot_s_p99"].iloc[0] == 0.025  # the same values, in s


def test_percentiles_only_in_ms_under_s_headers_break_littles_law(tmp_path: Path):
    """800 tokens/s from 8 requests in flight at a TPOT of 25 s would be 2,500 times the most
    they can emit (8 / 25 = 0.32 tokens/s)."""
    path = tmp_path / "run.csv"
    path.write_text(PERCENTILES_ONLY.format(ttft="ttft_s_p99", tpot="tpot_s_p99", a=500, b=25))
    with pytest.raises(LatencyUnitError, match=r"concurrency 8 / p99 TPOT 25 s = 0\.32 .* 2500x"):
        import_file(path)


@pytest.mark.parametrize("stat", ["p90", "p95", "p99"])
def test_a_ttft_percentile_of_more_than_a_day_is_a_unit_error(tmp_path: Path, stat: str):
    path = tmp_path / "run.csv"
    path.write_text(
        PERCENTILES_ONLY.format(ttft=f"ttft_s_{stat}", tpot="tpot_s_mean", a=90_000, b=0.03)
    )
    with pytest.raises(LatencyUnitError, match=f"{stat} TTFT 9e\\+04 s is above a day"):
        import_file(path)


# --- 6. an edited curve file is read again; its hash is in the projection's provenance ---------

BASE = {"name": "s", "horizon_months": 24, "capex": {"gpu_price_usd": 40000.0}}
CURVE_CSV = "concurrency,output_tokens_per_s,gpu_count,ttft_s_p99\n8,{system},8,0.5\n"


def curve_scenario(tmp_path: Path, system: int) -> Path:
    (tmp_path / "run.csv").write_text(CURVE_CSV.format(system=system))
    path = tmp_path / "s.toml"
    data = apply_overrides(
        BASE,
        {"throughput.measured": {"curve": "run.csv"}, "throughput.slo": {"ttft_p99_s": 2.0}},
    )
    path.write_text(dumps(validate_dict(data)))
    return path


def per_gpu(path: Path) -> float:
    m = project(load_scenario(path)).monthly.loc["s"]
    return m.tokens.iloc[1] / (m.gpus_in_service.iloc[1] * 0.7 * 730 * 3600)


def test_an_edited_curve_file_is_read_again(tmp_path: Path):
    path = curve_scenario(tmp_path, 800)
    assert per_gpu(path) == pytest.approx(800 / 8, rel=1e-12)
    curve_scenario(tmp_path, 1600)
    assert per_gpu(path) == pytest.approx(1600 / 8, rel=1e-12)
    # the same size and modification time: the change time still tells the edit apart
    run = tmp_path / "run.csv"
    before = run.stat()
    run.write_text(CURVE_CSV.format(system=1200))
    os.utime(run, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert run.stat().st_size == before.st_size and run.stat().st_mtime_ns == before.st_mtime_ns
    assert per_gpu(path) == pytest.approx(1200 / 8, rel=1e-12)


def test_the_curve_files_hash_is_in_the_projections_provenance(tmp_path: Path, capsys):
    path = curve_scenario(tmp_path, 800)
    assert main(["project", str(path), "--format", "json"]) == 0
    (stamped,) = json.loads(capsys.readouterr().out)["provenance"]["scenarios"]
    digest = hashlib.sha256((tmp_path / "run.csv").read_bytes()).hexdigest()
    assert stamped["curves"] == [{"file": "run.csv", "sha256": digest}]
    assert set(stamped) == {"name", "sha256", "curves"}
    # the content the projection read, not what the file holds by the time it is stamped
    projected = project(load_scenario(path))
    (tmp_path / "run.csv").write_text(CURVE_CSV.format(system=1600))
    stamp = make_stamp(projected, [load_scenario(path)])
    assert stamp.fields()["scenarios"][0]["curves"][0]["sha256"] == digest


# --- 7. --gpus that differs from the count a file states is warned of --------------------------

LLMD = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"
NESTED = SAMPLES / "inferencex" / "inferencex-app-etl-fixture-agentic-nested-h100-attempt1.json"
SGLANG = SAMPLES / "sglang" / "bowenwan6-sglang-dev-qwen3vl8b-image-conc1-with-server_info.jsonl"
SYSTEM_JSON = (
    SAMPLES / "mlperf-endpoints" / "v6.1-nvidia-systems-VR-NVL72_VR-288GB_aarch64x72_TRT.json"
)


def first_line(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


@needs_shared_data
@pytest.mark.parametrize(
    ("sample", "stated", "given", "basis"),
    [
        (
            LLMD,
            lambda p: int(first_line(p)["gpu"].split("x")[0]),
            2,
            "metadata gpu='4xNVIDIA_L40S'",
        ),
        (NESTED, lambda p: int(re.search(r'"num_gpus": (\d+)', p.read_text())[1]), 16, "num_gpus"),
        (
            SGLANG,
            lambda p: first_line(p)["server_info"]["tp_size"],
            4,
            "server_info tp_size x dp_size x pp_size",
        ),
    ],
)
def test_gpus_that_differ_from_the_files_count_are_warned_of(sample, stated, given, basis):
    in_file = stated(sample)  # the count as the file writes it, read here on its own
    assert import_file(sample).points["gpu_count"].iloc[0] == in_file
    curve = import_file(sample, gpu_count=given)
    assert [w for w in curve.warnings if "overrides" in w] == [
        f"the GPU count (--gpus) {given} overrides the file's {counted(in_file, 'GPU')}, from "
        f"{basis}; the per-GPU rates are the system output rates divided by {given}"
    ]
    assert (curve.points["gpu_count"] == given).all()
    assert not any("overrides" in w for w in import_file(sample, gpu_count=in_file).warnings)


@needs_shared_data
def test_gpus_that_differ_from_the_mlperf_system_description_are_warned_of(tmp_path: Path):
    platform = "VR-NVL72_VR-288GB_aarch64x72_TRT"
    path = tmp_path.joinpath(
        "closed", "Org", "results", platform, "deepseek-r1", "Server", "performance", "run_1",
        "mlperf_log_summary.txt",
    )  # fmt: skip
    path.parent.mkdir(parents=True)
    path.write_bytes(MLPERF_SERVER.read_bytes())
    systems = tmp_path / "closed" / "Org" / "systems"
    systems.mkdir()
    (systems / f"{platform}.json").write_bytes(SYSTEM_JSON.read_bytes())
    system = json.loads(SYSTEM_JSON.read_text())
    described = system["number_of_nodes"] * system["accelerators_per_node"]
    curve = import_file(path, gpu_count=8)
    assert curve.points["gpu_count"].iloc[0] == 8
    assert any(
        f"(--gpus) 8 overrides the file's {described} GPUs, from system description" in w
        for w in curve.warnings
    )


@needs_shared_data
def test_a_scenarios_gpus_is_named_as_the_scenario_sets_it(tmp_path: Path):
    path = scenario_with_curve(tmp_path, LLMD, "llmd.jsonl", gpus=2)
    warnings = project(load_scenario(path)).warnings[0]
    assert any(
        "GPU count (throughput.measured.gpus) 2 overrides the file's 4 GPUs" in w for w in warnings
    )
    assert not any("--gpus" in w for w in warnings)


# --- 8. a throughput line that holds nan is said to, not called missing -------------------------


@needs_shared_data
@pytest.mark.parametrize(
    ("value", "said"), [("nan", "holds 'nan', not a finite number"), ("", "holds no value")]
)
def test_an_mlperf_summary_with_a_nan_throughput_says_so(tmp_path: Path, value: str, said: str):
    text = MLPERF_SERVER.read_text()
    line = re.search(r"^Completed tokens per second\s*:.*$", text, re.M)[0]
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text.replace(line, f"Completed tokens per second: {value}"))
    with pytest.raises(CurveError) as caught:
        import_file(path)
    assert f"the 'Completed tokens per second' line {said}" in str(caught.value)
    assert "no 'Completed tokens per second'" not in str(caught.value)


def test_an_mlperf_detail_log_with_a_nan_throughput_says_so(tmp_path: Path):
    source = ROOT / "tests" / "data" / "throughput" / "mlperf_log_detail_server_8gpu.txt"
    text = source.read_text()
    assert '"key": "result_completed_tokens_per_second", "value": 24000.0' in text
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_text(
        text.replace('_tokens_per_second", "value": 24000.0', '_tokens_per_second", "value": NaN')
    )
    with pytest.raises(
        CurveError, match="the 'result_completed_tokens_per_second' record holds nan, not a finite"
    ):
        import_file(path)


# --- (more) a GenAI-Perf tokenizer that is obviously not the model's ---------------------------

GENAI = SAMPLES / "genai-perf"


@needs_shared_data
def test_a_gpt2_tokenizer_for_a_llama_model_is_warned_of():
    path = GENAI / "openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf.json"
    config = json.loads(path.read_text())["input_config"]
    assert (config["tokenizer"], config["model"]) == ("gpt2", ["meta-llama/llama-3.1-8b-instruct"])
    assert any(
        w.startswith("the client counted tokens with the gpt2 tokenizer, the GPT-2 vocabulary "
                     "(byte-level BPE, 50,257 tokens), not the model's "
                     "(meta-llama/llama-3.1-8b-instruct, the Llama 3 vocabulary")
        for w in import_file(path).warnings
    )  # fmt: skip


@pytest.mark.parametrize(
    ("tokenizer", "model", "differs"),
    [
        ("gpt2", "meta-llama/llama-3.1-8b-instruct", True),
        ("Qwen/Qwen2.5-7B", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", True),
        ("hf-internal-testing/llama-tokenizer", "meta/llama3-8b-instruct", True),
        ("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B", False),
        ("/models/tok", "meta-llama/llama-3.1-8b-instruct", False),  # a path: not judged
        ("gpt2", "my-finetune", False),
    ],
)
def test_tokenizer_families(tokenizer: str, model: str, differs: bool):
    assert tokenizer_differs(tokenizer, model) is differs


# --- (more) generic-CSV rows whose columns contradict each other --------------------------------


def test_a_per_gpu_rate_that_contradicts_the_system_rate_is_warned_of(tmp_path: Path):
    path = tmp_path / "run.csv"
    path.write_text(
        "concurrency,output_tokens_per_s_per_gpu,gpu_count,output_tokens_per_s\n"
        "8,100,8,900\n16,150,8,1200.5\n"  # 100 x 8 = 800, not 900; 150 x 8 = 1,200 (rounding)
    )
    curve = import_file(path)
    said = [w for w in curve.warnings if "output_tokens_per_s_per_gpu" in w]
    assert said == [
        "line 2: output_tokens_per_s_per_gpu 100 x gpu_count 8 = 800, but output_tokens_per_s "
        "is 900 (-11.1%); the per-GPU column is used as given"
    ]
    assert curve.points["warnings"].iloc[0] == said[0] and curve.points["warnings"].iloc[1] == ""


@pytest.mark.parametrize(("user", "warned"), [(80, True), (20, True), (60, False), (30, False)])
def test_a_per_user_speed_that_contradicts_the_tpot_is_warned_of(
    tmp_path: Path, user: float, warned: bool
):
    """1 / 0.025 s = 40 tokens/s; 60 (1.5x, as the mean of 1 / TPOT can be) and 30 are kept
    quietly, 80 (2x) and 20 (0.5x) are contradictions."""
    path = tmp_path / "run.csv"
    path.write_text(
        f"concurrency,output_tokens_per_s,gpu_count,tpot_s_mean,tokens_per_s_per_user\n"
        f"8,800,1,0.025,{user}\n"
    )
    curve = import_file(path)
    said = [w for w in curve.warnings if "contradict" in w]
    assert bool(said) is warned
    if warned:
        assert said[0].startswith(f"line 2: tokens_per_s_per_user {user} is {user / 40:g} times")
    assert curve.points["tokens_per_s_per_user"].iloc[0] == user
