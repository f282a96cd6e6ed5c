"""Throughput importers and measured-curve scenarios: defects a second outside review found (a
GPU count given that left a curve CSV's per-GPU rates as they were, a broken system description
that was fatal beside --gpus, a quadratic GPU-count rule, tokenizer warnings by name family, a
vintage's own throughput replaced by the base fleet's curve). Files are built from the real
samples in ../shared (copied into tmp_path) or written small here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from econ.throughput.importers import CurveError, import_file, write_curve_csv
from econ.throughput.importers._common import (
    _COUNT_PATTERNS,
    _GPU_X_N,
    MAX_COUNT_TEXT_CHARS,
    _after_a_number,
    gpu_count_from_text,
)
from econ.throughput.importers.genai_perf import tokenizer_differs
from tests.conftest import SHARED_DATA, needs_shared_data

SAMPLES = SHARED_DATA / "samples"
LLMD = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"
VLLM_RUN = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
NESTED = SAMPLES / "inferencex" / "inferencex-app-etl-fixture-agentic-nested-h100-attempt1.json"


# --- 1. a GPU count given: per-GPU = measured system rate / count, for every importer ----------


@needs_shared_data
@pytest.mark.parametrize("given", [8, 4, 1])
def test_a_given_gpu_count_divides_the_system_rate_of_econs_own_curve_csv(tmp_path, given):
    system = [json.loads(line)["output_throughput"] for line in LLMD.read_text().splitlines()]
    csv = write_curve_csv(import_file(LLMD), tmp_path / "c.csv")  # the file's 4 GPUs in it
    for path in (LLMD, csv):
        points = import_file(path, gpu_count=given).points
        assert list(points["output_tokens_per_s"]) == pytest.approx(system)
        assert list(points["output_tokens_per_s_per_gpu"]) == pytest.approx(
            [s / given for s in system]
        )
    warnings = import_file(csv, gpu_count=8).warnings
    assert (
        "the GPU count (--gpus) 8 overrides the file's 4 GPUs; the per-GPU rates are the "
        "system output rates divided by 8" in warnings
    )


@needs_shared_data
def test_a_given_gpu_count_divides_inferencexs_system_rate_not_its_per_gpu_figure():
    data = json.loads(NESTED.read_text())
    text = json.dumps(data)
    assert '"num_gpus": 8' in text  # the file's count; its per-GPU figure is system / 8
    point = import_file(NESTED, gpu_count=16).points.iloc[0]
    system = point["output_tokens_per_s"]
    assert system == pytest.approx(import_file(NESTED).points["output_tokens_per_s"].iloc[0])
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(system / 16)


def test_a_given_count_replaces_a_per_gpu_column_that_implies_another_count(tmp_path: Path):
    path = tmp_path / "run.csv"
    # 1,000 tokens/s per GPU of 2,000 system: 2 GPUs implied, no gpu_count column
    path.write_text("concurrency,output_tokens_per_s,output_tokens_per_s_per_gpu\n8,2000,1000\n")
    curve = import_file(path, gpu_count=4)
    assert curve.points["output_tokens_per_s_per_gpu"].iloc[0] == 2000 / 4
    assert (
        "the file's output_tokens_per_s_per_gpu of 1 point is not its system output rate / the "
        "GPU count (--gpus) 4; the per-GPU rates are the system output rates divided by 4"
        in curve.warnings
    )
    # only per-GPU figures and no count of the file's: they are the measurement, kept
    path.write_text("concurrency,output_tokens_per_s_per_gpu\n8,1000\n")
    point = import_file(path, gpu_count=4).points.iloc[0]
    assert (point["output_tokens_per_s_per_gpu"], point["output_tokens_per_s"]) == (1000, 4000)


def test_the_per_gpu_contradiction_check_sees_the_count_from_the_file_name(tmp_path: Path):
    path = tmp_path / "8xH100.csv"  # the count is the file name's: 8 x 1,000 is not 2,000
    path.write_text("concurrency,output_tokens_per_s,output_tokens_per_s_per_gpu\n8,2000,1000\n")
    curve = import_file(path)
    assert curve.points["gpu_count"].iloc[0] == 8
    assert any("1000 x gpu_count 8 = 8000, but output_tokens_per_s is 2000" in w
               for w in curve.warnings)  # fmt: skip


# --- 2. with a GPU count given, a broken system description is a warning, not fatal -----------

MLPERF_SERVER = (
    SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
)
ENDPOINTS_SUMMARY = (
    SAMPLES / "mlperf-endpoints" / "v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-performance-"
    "result_summary.json"
)


@needs_shared_data
def test_a_broken_mlperf_system_description_beside_gpus_is_warned_of(tmp_path: Path):
    log = tmp_path / "mlperf_log_summary.txt"
    log.write_bytes(MLPERF_SERVER.read_bytes())
    (tmp_path / "system_desc.json").write_text(
        json.dumps({"accelerators_per_node": "eight", "number_of_nodes": 1})
    )
    with pytest.raises(CurveError, match="'accelerators_per_node' is 'eight'; expected a number"):
        import_file(log)
    curve = import_file(log, gpu_count=8)
    assert curve.points["gpu_count"].iloc[0] == 8
    assert any(
        "'accelerators_per_node' is 'eight'" in w and "the system description is not used" in w
        for w in curve.warnings
    )


@needs_shared_data
def test_a_broken_endpoints_system_description_beside_gpus_is_warned_of(tmp_path: Path):
    results = tmp_path / "sub" / "results" / "PlatX" / "deepseek-r1" / "Server" / "performance"
    results.mkdir(parents=True)
    summary = results / "result_summary.json"
    summary.write_bytes(ENDPOINTS_SUMMARY.read_bytes())
    (tmp_path / "sub" / "systems").mkdir()
    (tmp_path / "sub" / "systems" / "PlatX.json").write_text(
        json.dumps({"system_name": "X", "number_of_nodes": 0, "accelerators_per_node": 8})
    )
    with pytest.raises(CurveError, match="number_of_nodes × accelerators_per_node is 0"):
        import_file(summary)
    curve = import_file(summary, gpu_count=72)
    assert curve.points["gpu_count"].iloc[0] == 72
    assert any(
        "accelerators_per_node is 0; the system description is not used" in w
        for w in curve.warnings
    )


# --- 3. the GPU-count rule of names and metadata runs in linear time, on a bounded text --------


class _CountingText(str):
    """A str that counts the characters read from it by indexing or slicing."""

    read = 0

    def __getitem__(self, key):
        part = str.__getitem__(self, key)
        _CountingText.read += len(part)
        return part


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_the_model_size_rule_reads_each_character_a_bounded_number_of_times(n):
    text = _CountingText("1x1-" * n)  # a '<GPU>x<N>' candidate after a bare number, n times
    pattern = next(p for p, how in _COUNT_PATTERNS if how == _GPU_X_N)
    _CountingText.read = 0
    matches = list(pattern.finditer(text))
    assert len(matches) == n and all(_after_a_number(m) for m in matches)
    assert _CountingText.read <= len(text)  # splitting each prefix read n^2 / 2 x 4 characters


def test_a_gpu_count_is_read_from_the_first_characters_of_a_text_only():
    assert gpu_count_from_text("-" * (MAX_COUNT_TEXT_CHARS - 6) + "8xH100") == (
        8.0,
        "a '<N>x<GPU>' pattern",
    )
    assert math.isnan(gpu_count_from_text("-" * MAX_COUNT_TEXT_CHARS + "8xH100")[0])
    assert MAX_COUNT_TEXT_CHARS > 255  # a file name's longest (NAME_MAX bytes, Linux)


@needs_shared_data
def test_a_long_gpu_field_is_clipped_in_the_gpus_warning(tmp_path: Path):
    run = json.loads(VLLM_RUN.read_text())
    path = tmp_path / "run.json"
    # (as long as a name may be: MAX_NAME_CHARS; a longer hardware name is refused)
    path.write_text(json.dumps(dict(run, gpu="4xNVIDIA_L40S " + "z" * 980)))
    curve = import_file(path, gpu_count=8)
    (warning,) = [w for w in curve.warnings if "overrides the file's 4 GPUs" in w]
    assert "z" * 100 not in warning and "(994 characters)" in warning
    assert len(warning) < 300


# --- 4. the tokenizer check compares vocabularies, not name families ---------------------------


@pytest.mark.parametrize(
    ("tokenizer", "model", "differs"),
    [
        # GenAI-Perf's default is LLaMA's tokenizer (Llama 2 kept it); Llama 3 has its own
        ("hf-internal-testing/llama-tokenizer", "meta/llama3-8b-instruct", True),
        # shared vocabularies: Mixtral's is Mistral 7B's, OPT's GPT-2's, Phi-3-mini's Llama 2's
        ("mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1", False),
        ("gpt2", "facebook/opt-125m", False),
        ("hf-internal-testing/llama-tokenizer", "microsoft/Phi-3-mini-4k-instruct", False),
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", False),
        # an organization is not a model: Qwen3.5's vocabulary is not listed, so not judged
        ("gpt2", "Qwen/Qwen3.5-397B-A17B", False),
        ("hf-internal-testing/llama-tokenizer", "amd/Kimi-K2.5-MXFP4", False),
    ],
)
def test_the_tokenizer_check_compares_vocabularies(tokenizer, model, differs):
    assert tokenizer_differs(tokenizer, model) is differs


@needs_shared_data
def test_the_nim_sample_counted_with_genai_perfs_default_tokenizer_is_warned_of():
    path = SAMPLES / "genai-perf" / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json"
    data = json.loads(path.read_text())
    config = data["input_config"]
    assert (config["tokenizer"], config["model"]) == (
        "hf-internal-testing/llama-tokenizer",
        ["meta/llama3-8b-instruct"],
    )
    # 50 output tokens forced, 58.67 counted: the Llama 2 vocabulary splits Llama 3's text finer
    assert config["output_tokens_mean"] == 50
    assert data["output_sequence_length"]["avg"] == pytest.approx(58.67, abs=0.01)
    (warning,) = [w for w in import_file(path).warnings if "tokenizer" in w]
    assert warning.startswith(
        "the client counted tokens with the hf-internal-testing/llama-tokenizer tokenizer "
        "(GenAI-Perf's default), the Llama 2 vocabulary"
    )
    assert "(meta/llama3-8b-instruct, the Llama 3 vocabulary" in warning


@needs_shared_data
def test_no_real_sample_raises_a_false_tokenizer_alarm():
    warned = set()
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file()):
        try:
            curve = import_file(path)
        except CurveError:
            continue
        if any("tokenizer" in w and "counted tokens" in w for w in curve.warnings):
            warned.add(path.name)
    # both are real mismatches: gpt2 for Llama 3.1 (OpenRouter), Llama 2's for Llama 3 (NIM)
    assert warned == {
        "openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf.json",
        "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json",
    }


# --- 5. a vintage's own throughput is not replaced by the base fleet's measured curve ----------


def test_a_vintages_own_throughput_is_not_the_base_fleets_curve(tmp_path: Path):
    from econ import project
    from econ.scenario import apply_overrides, validate_dict
    from tests.test_vintages import BASE, NEW

    curve = tmp_path / "curve.csv"  # the base fleet's: 720 tokens/s per GPU at best
    curve.write_text(
        "concurrency,output_tokens_per_s,gpu_count,tpot_s_mean\n128,2880,4,0.03\n256,4320,6,0.05\n"
    )
    measured = {**BASE["throughput"], "measured": {"curve": str(curve)}}
    fleet = validate_dict({**BASE, "throughput": measured, "vintages": [NEW]})
    assert NEW["throughput"] == {"tokens_per_s_per_gpu": 9000.0}
    old_alone = validate_dict({**BASE, "name": "old", "throughput": measured})
    new_alone = validate_dict(
        apply_overrides(
            {
                **BASE,
                "name": "new",
                **{k: {**BASE.get(k, {}), **v} for k, v in NEW.items() if k != "name"},
            },
            {"capex.gpu_price_usd": None},
        )
    )
    assert new_alone.throughput.measured is None
    monthly = project([fleet, old_alone, new_alone]).monthly
    tokens = {name: monthly.loc[name, "tokens"].to_numpy() for name in ("hall", "old", "new")}
    assert tokens["new"][-1] > 0 and tokens["old"][1] > 0
    assert tokens["hall"] == pytest.approx(tokens["old"] + tokens["new"], rel=1e-12)
    vintage = fleet.expand()[1]
    assert vintage.throughput.measured is None
    assert vintage.throughput.tokens_per_s_per_gpu == 9000.0
