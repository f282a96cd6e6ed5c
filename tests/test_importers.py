"""Importers: every format from our own fixtures and from the real samples in ../shared, the
figures each file states, provenance, unit detection, and every kind of bad input."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.cli import main
from econ.files import WriteError
from econ.throughput.curve import CURVE_COLUMNS, OPTIONAL_COLUMNS
from econ.throughput.importers import (
    FORMATS,
    CurveError,
    LatencyUnitError,
    detect_format,
    import_file,
    import_files,
    latency_unit_findings,
    load_curve,
    write_curve_csv,
)
from econ.throughput.importers._common import gpu_count_from_text, read_source
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "throughput"

# fixture -> (format, points, {column: value of point 0}, {provenance: value})
FIXTURES = {
    "vllm_bench_serve_sweep.jsonl": (
        "vllm", 3,
        {"concurrency": 1, "output_tokens_per_s": 95.0, "output_tokens_per_s_per_gpu": 47.5,
         "gpu_count": 2, "ttft_s_p99": 0.1, "tpot_s_mean": 0.01, "tokens_per_s_per_user": 100.0,
         "input_tokens_mean": 512.0, "total_tokens_per_s": (18944 + 9500) / 100},
        {"tool": "vllm bench serve", "model": "example-org/tiny-llm-8b", "hardware": "NVIDIA H100"},
    ),
    "vllm_old_with_arrays.json": (
        "vllm", 1,
        # TTFT from the arrays without the request that produced nothing: mean(50, 52, 54, 56) ms
        {"ttft_s_mean": 0.053, "tpot_s_p90": np.percentile([0.011, 0.011, 0.012, 0.010], 90),
         "input_tokens_per_s": 2500.0, "total_tokens_per_s": 2585.0},
        {"tool": "vllm benchmark_serving"},
    ),
    "sglang_bench_serving.jsonl": (
        "sglang", 2,
        {"concurrency": 4, "request_rate_per_s": math.inf, "output_tokens_per_s": 380.0,
         "gpu_count": 2, "ttft_s_p95": 0.096, "e2e_s_mean": (60 + 10 * 255) / 1000},
        {"tool": "sglang.bench_serving", "tool_version": "0.4.6", "precision": "fp8",
         "model": "example-org/tiny-llm-8b"},
    ),
    "sglang_old_schema.jsonl": (
        "sglang", 2,
        {"request_rate_per_s": 2.0, "tpot_s_p50": 0.012, "ttft_s_p50": 0.07, "ttft_s_mean": math.nan},
        {"tool": "sglang.bench_serving"},
    ),
    "genai_perf_profile_export.json": (
        "genai-perf-json", 1,
        {"concurrency": 8, "ttft_s_p99": 0.26, "tpot_s_mean": 0.01, "output_tokens_per_s": 640.0,
         "input_tokens_per_s": 5.0 * 512},
        {"tool": "genai-perf", "model": "example-org/tiny-llm-8b"},
    ),
    "genai_perf_profile_export_concurrency8.csv": (
        "genai-perf-csv", 1,
        {"concurrency": 8, "e2e_s_mean": 1.4, "e2e_s_p99": 1.7, "ttft_s_p99": 0.26},
        {"tool": "genai-perf"},
    ),
    "aiperf_profile_export.json": (
        "aiperf-json", 1,
        {"concurrency": 4, "total_tokens_per_s": 1112.0, "duration_s": 69.0, "tpot_s_p95": 0.0108},
        {"tool": "aiperf", "tool_version": "0.12.0"},
    ),
    "aiperf_profile_export_conc4.csv": (
        "aiperf-csv", 1,
        {"concurrency": 4, "input_tokens_per_s": 742.0, "ttft_s_mean": 0.08},
        {"tool": "aiperf"},
    ),
    "mlperf_log_summary_server_8gpu.txt": (
        "mlperf-summary", 1,
        {"output_tokens_per_s": 24000.0, "gpu_count": 8, "output_tokens_per_s_per_gpu": 3000.0,
         "ttft_s_p99": 0.9, "tpot_s_p99": 0.16, "request_rate_per_s": 80.5,
         "output_tokens_mean": 300.0},
        {"tool": "mlperf loadgen (summary)", "model": "llama2-70b"},
    ),
    "mlperf_log_summary_offline.txt": (
        "mlperf-summary", 1,
        {"output_tokens_per_s": 29000.0, "request_rate_per_s": math.inf, "e2e_s_mean": math.nan},
        {"tool": "mlperf loadgen (summary)"},
    ),
    "mlperf_log_detail_server_8gpu.txt": (
        "mlperf-detail", 1,
        {"output_tokens_per_s": 24000.0, "gpu_count": 8, "ttft_s_p99": 0.9, "tpot_s_mean": 0.1},
        {"tool": "mlperf loadgen (detail)", "tool_version": "5.0 @ fixture"},
    ),
    "inferencex_agg_fixed.json": (
        "inferencex", 3,
        {"concurrency": 4, "output_tokens_per_s_per_gpu": 30.0, "output_tokens_per_s": 240.0,
         "gpu_count": 8, "ttft_s_p99": 0.5, "input_tokens_per_s": 240.0},
        {"hardware": "h200", "precision": "fp8", "model": "example-org/tiny-llm-70b"},
    ),
    "inferencex_agentic_nested.json": (
        "inferencex", 1,
        {"concurrency": 8, "output_tokens_per_s": 320.0, "output_tokens_per_s_per_gpu": 40.0,
         "ttft_s_p95": 10.0, "ttft_s_p99": math.nan, "input_tokens_per_s": 24000.0},
        {"hardware": "b200", "precision": "fp4"},
    ),
    "trtllm_bench_report.txt": (
        "trtllm-bench", 1,
        {"output_tokens_per_s": 2500.0, "gpu_count": 2, "tpot_s_p99": 0.0146, "ttft_s_mean": 0.3,
         "request_rate_per_s": math.inf, "concurrency": 31.5, "duration_s": 51.2},
        {"tool": "trtllm-bench throughput", "tool_version": "1.0.0", "precision": "FP8"},
    ),
    "generic_curve_hand_example.csv": (
        "generic-csv", 6,
        {"concurrency": 1, "output_tokens_per_s_per_gpu": 45.0, "tpot_s_p99": 0.012,
         "tokens_per_s_per_user": 100.0},
        {"tool": "generic csv"},
    ),
}  # fmt: skip


def close(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_fixture_imports_with_its_figures(name):
    fmt, count, values, prov = FIXTURES[name]
    path = DATA / name
    assert detect_format(read_source(path)) == fmt
    curve = import_file(path)
    assert len(curve.points) == count
    assert set(CURVE_COLUMNS + OPTIONAL_COLUMNS) <= set(curve.points.columns)
    first = curve.points.iloc[0]
    for column, expected in values.items():
        assert close(float(first[column]), float(expected)), (column, first[column], expected)
    assert curve.provenance["format"] == fmt
    assert curve.provenance["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    for key, expected in prov.items():
        assert curve.provenance[key] == expected, key
    assert (curve.points["file_sha256"] == curve.provenance["file_sha256"]).all()
    assert (curve.points["source_file"] == name).all()
    assert curve.provenance["latency_unit"], "the latency unit is always stated"


def test_no_importer_returns_a_zero_or_negative_measurement():
    for name in FIXTURES:
        points = import_file(DATA / name).points
        for column in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "tpot_s_p99"):
            values = points[column].dropna()
            assert (values > 0).all(), (name, column)


def test_gpu_count_override_rederives_per_gpu():
    curve = import_file(DATA / "inferencex_agg_fixed.json", gpu_count=16)
    assert curve.points["output_tokens_per_s"].iloc[0] == 240.0
    assert curve.points["output_tokens_per_s_per_gpu"].iloc[0] == 15.0
    assert curve.provenance["gpu_count_basis"] == "given by the user"


def test_unknown_gpu_count_is_said():
    curve = import_file(DATA / "aiperf_profile_export.json")
    assert curve.points["output_tokens_per_s_per_gpu"].isna().all()
    assert any("--gpus" in w for w in curve.warnings)


def test_csv_and_json_exports_agree():
    for a, b in (
        ("genai_perf_profile_export.json", "genai_perf_profile_export_concurrency8.csv"),
        ("aiperf_profile_export.json", "aiperf_profile_export_conc4.csv"),
        ("mlperf_log_summary_server_8gpu.txt", "mlperf_log_detail_server_8gpu.txt"),
    ):
        x, y = import_file(DATA / a).points.iloc[0], import_file(DATA / b).points.iloc[0]
        for column in ("output_tokens_per_s", "ttft_s_p99", "tpot_s_p99", "concurrency"):
            assert close(float(x[column]), float(y[column])), (a, column)


# --- the real samples in ../shared/data/samples ---------------------------------------------

SAMPLES = {
    "vllm/nerdalert-llmd-llama3.2-3b-l40s-results.jsonl": ("vllm", 9),
    "vllm/er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json": ("vllm", 1),
    "vllm/er0080-vllm-bench-serve-v0.25.1-speculative-qwen-fp8.json": ("vllm", 1),
    "vllm/er0080-vllm-bench-serve-v0.25.1-all-failed.json": ("error", "every request failed"),
    "vllm/inferencex-atom-qwen3.5-397b-fp8-mtp-tp4-conc64-8k1k-with-lens.json": ("vllm", 1),
    "vllm/lambdalabs-sep2024-llama3.1-8b-fp8-h100-10prompts-with-per-request-arrays.json": (
        "vllm",
        1,
    ),
    "sglang/datacrunch-h200-llama3.3-70b-online.jsonl": ("sglang", 7),
    "sglang/datacrunch-h200-llama3.3-70b-offline.jsonl": ("sglang", 7),
    "sglang/datacrunch-h200-deepseek-dp-mla.jsonl": ("sglang", 1),
    "sglang/bowenwan6-sglang-dev-qwen3vl8b-image-conc1-with-server_info.jsonl": ("sglang", 1),
    "genai-perf/nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json": (
        "genai-perf-json",
        1,
    ),
    "genai-perf/nim-llama3-8b-streaming-conc10_profile_export_genai_perf.csv": (
        "genai-perf-csv",
        1,
    ),
    "genai-perf/openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf.json": (
        "genai-perf-json",
        1,
    ),
    "genai-perf/openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf.csv": (
        "genai-perf-csv",
        1,
    ),
    "aiperf/mlx-qwen3-0.6b-conc4_profile_export_aiperf.json": ("aiperf-json", 1),
    "aiperf/mlx-qwen3-0.6b-conc4_profile_export_aiperf.csv": ("aiperf-csv", 1),
    "aiperf/inferencex-agentic-kimik2.5-mi355x-conc1_profile_export_aiperf-v0.8.0.json": (
        "aiperf-json",
        1,
    ),
    "aiperf/inferencex-agentic-kimik2.5-mi355x-conc1_profile_export_aiperf-v0.8.0.csv": (
        "aiperf-csv",
        1,
    ),
    "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt": (
        "mlperf-summary",
        1,
    ),
    "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Offline-mlperf_log_summary.txt": (
        "mlperf-summary",
        1,
    ),
    "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.HEAD-excerpt.txt": (
        "error",
        r"no result_\* records",
    ),
    "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.TAIL-excerpt.txt": (
        "mlperf-detail",
        1,
    ),
    "inferencex/agg_kimik2.5_1k1k_int4_vllm_tp8_mtp_conc4_mi355x.json": ("inferencex", 1),
    "inferencex/agg_bmk-agentic-qwen3.5-397b-mi300x-conc128.json": ("inferencex", 2),
    "inferencex/inferencex-app-etl-fixture-agentic-nested-h100-attempt1.json": ("inferencex", 1),
    "inferencex/inferencex-app-supplemental-bmk-glm4.7-gaudi3.json": ("inferencex", 8),
    "inferencex/raw-bench-serving-gptoss120b-multinode-conc4.json": ("vllm", 1),
    "inferencex/raw-vllm-gaudi-glm4.7-conc1-source-of-supplemental.json": ("vllm", 1),
    "trtllm-bench/docs-perf-overview-streaming-report-newer-labels.txt": ("trtllm-bench", 1),
    "trtllm-bench/docs-perf-benchmarking-multimodal-full-report-nonstreaming.txt": (
        "trtllm-bench",
        1,
    ),
    "trtllm-bench/docs-perf-benchmarking-v0.17-pytorch-legacy-overview.txt": ("trtllm-bench", 1),
    "trtllm-bench/nvidia-blog-v0.21.0rc0-pytorch-streaming-full-report.txt": ("trtllm-bench", 1),
    "mlperf-endpoints/v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-performance-result_summary.json": (
        "mlperf-endpoints",
        1,
    ),
    # Beside the run: its report, its configuration and the system JSON are not result files.
    "mlperf-endpoints/v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-report.txt": (
        "error",
        "report.txt, a summary for people .*expected the run's performance/result_summary.json",
    ),
    "mlperf-endpoints/v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-config.yaml": (
        "error",
        "unrecognized format",
    ),
    "mlperf-endpoints/v6.1-nvidia-systems-VR-NVL72_VR-288GB_aarch64x72_TRT.json": (
        "error",
        "an MLPerf system description .*not a result.*with --gpus N",
    ),
    # MLCommons' synthetic submission tree (a folder; its complete parts: test_mlperf_endpoints.py).
    "mlperf-endpoints/synthetic-submission": ("error", "no result_summary.json beside point.yaml"),
}


def test_every_sample_is_listed(shared_data: Path):
    on_disk = {
        str(p.relative_to(shared_data / "samples"))
        for p in (shared_data / "samples").glob("*/*")
        if p.suffix != ".md"
    }
    assert on_disk == set(SAMPLES), "a sample was added or removed: list it in SAMPLES"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_imports_or_is_refused_clearly(shared_data: Path, name: str):
    path = shared_data / "samples" / name
    fmt, expected = SAMPLES[name]
    if fmt == "error":
        with pytest.raises(CurveError, match=expected) as info:
            import_file(path)
        assert str(path) in str(info.value)
        return
    curve = import_file(path)
    assert curve.provenance["format"] == fmt
    assert len(curve.points) == expected
    assert (curve.points["output_tokens_per_s"] > 0).all()
    assert curve.provenance["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def sample(shared_data: Path, name: str):
    return import_file(shared_data / "samples" / name)


def test_mlperf_sample_figures(shared_data: Path):
    summary = sample(
        shared_data, "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
    ).points.iloc[0]
    # mlperf_log_summary.txt: "Completed tokens per second: 29228.22", 8 GPUs (H200-SXM-141GBx8)
    assert summary["output_tokens_per_s"] == 29228.22
    assert summary["gpu_count"] == 8
    assert summary["output_tokens_per_s_per_gpu"] == pytest.approx(29228.22 / 8)
    assert summary["ttft_s_p99"] == pytest.approx(0.452744202)
    assert summary["tpot_s_p99"] == pytest.approx(0.146040006)
    tail = sample(
        shared_data,
        "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.TAIL-excerpt.txt",
    ).points.iloc[0]
    # the detail log's result_completed_tokens_per_second, never the bogus result_token_throughput
    assert tail["output_tokens_per_s"] == 29228.2
    assert tail["ttft_s_p99"] == summary["ttft_s_p99"]


def test_inferencex_aggregate_matches_its_raw_source(shared_data: Path):
    """The InferenceX-app record for conc 1 was made from the raw vLLM file: 18.52 tok/s / 8."""
    agg = sample(shared_data, "inferencex/inferencex-app-supplemental-bmk-glm4.7-gaudi3.json")
    raw = import_file(
        shared_data / "samples/inferencex/raw-vllm-gaudi-glm4.7-conc1-source-of-supplemental.json",
        gpu_count=8,
    )
    assert agg.points["output_tokens_per_s_per_gpu"].iloc[0] == pytest.approx(2.32)
    assert raw.points["output_tokens_per_s_per_gpu"].iloc[0] == pytest.approx(2.32, abs=0.005)
    assert raw.points["ttft_s_mean"].iloc[0] == pytest.approx(
        agg.points["ttft_s_mean"].iloc[0], rel=1e-3
    )


def test_lambdalabs_arrays_drop_empty_requests(shared_data: Path):
    curve = sample(
        shared_data,
        "vllm/lambdalabs-sep2024-llama3.1-8b-fp8-h100-10prompts-with-per-request-arrays.json",
    )
    data = json.loads(
        (
            shared_data
            / "samples/vllm/lambdalabs-sep2024-llama3.1-8b-fp8-h100-10prompts-with-per-request-arrays.json"
        ).read_text()
    )
    ttfts = [t for t, n in zip(data["ttfts"], data["output_lens"], strict=True) if n > 0]
    assert curve.points["ttft_s_mean"].iloc[0] == pytest.approx(np.mean(ttfts))
    assert data["mean_ttft_ms"] / 1000 < np.mean(ttfts), "the file's mean counts the zeros"
    assert any("no output token" in w for w in curve.warnings)


def test_sample_quirks_are_reported(shared_data: Path):
    nonstreaming = sample(
        shared_data,
        "genai-perf/openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf.json",
    )
    assert nonstreaming.points["ttft_s_mean"].isna().all()
    assert any("non-streaming" in w for w in nonstreaming.warnings)
    invalid = sample(
        shared_data,
        "aiperf/inferencex-agentic-kimik2.5-mi355x-conc1_profile_export_aiperf-v0.8.0.json",
    )
    assert any("not a valid submission" in w for w in invalid.warnings)
    tp = sample(shared_data, "inferencex/agg_kimik2.5_1k1k_int4_vllm_tp8_mtp_conc4_mi355x.json")
    assert any("TP size" in w for w in tp.warnings)
    # tput_per_gpu counts input + output; the curve takes the output-only figure
    assert tp.points["output_tokens_per_s_per_gpu"].iloc[0] == pytest.approx(27.678011491816765)
    legacy = sample(
        shared_data, "trtllm-bench/docs-perf-benchmarking-v0.17-pytorch-legacy-overview.txt"
    )
    assert legacy.points["output_tokens_per_s"].iloc[0] == pytest.approx(20685.5510)
    offline = sample(shared_data, "sglang/datacrunch-h200-llama3.3-70b-offline.jsonl")
    assert any("repeat runs" in w for w in offline.warnings)
    assert offline.points["workload"].nunique() == 6


# --- bad input ------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_truncated_files_are_refused(tmp_path: Path, name: str):
    text = (DATA / name).read_text()
    cut = write(tmp_path, name, text[: len(text) * 2 // 5])
    with pytest.raises(CurveError) as info:
        import_file(cut, fmt=FIXTURES[name][0])
    assert str(cut) in str(info.value)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_file_from_another_tool_is_refused_by_each_importer(tmp_path: Path, name: str):
    fmt = FIXTURES[name][0]
    family = {"vllm": "bench", "sglang": "bench", "genai": "perf", "aiperf": "perf"}
    kind = family.get(fmt.split("-")[0], fmt.split("-")[0])
    other = next(
        n for n, f in FIXTURES.items() if family.get(f[0].split("-")[0], f[0].split("-")[0]) != kind
    )
    with pytest.raises(CurveError):
        import_file(DATA / other, fmt=fmt)


def test_empty_binary_unknown_and_missing_files(tmp_path: Path):
    with pytest.raises(CurveError, match="empty"):
        import_file(write(tmp_path, "empty.json", "  \n"))
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01" * 10)
    with pytest.raises(CurveError, match="UTF-8|binary"):
        import_file(binary)
    with pytest.raises(CurveError, match="unsupported tool.*expected a result file") as info:
        import_file(write(tmp_path, "other.json", '{"foo": 1, "bar": [1, 2]}'))
    assert "foo" not in str(info.value)  # names the formats, never the file's content
    with pytest.raises(CurveError, match="unrecognized format"):
        import_file(write(tmp_path, "notes.txt", "hello world\n"))
    with pytest.raises(CurveError, match="no such file"):
        import_file(tmp_path / "absent.json")
    with pytest.raises(CurveError, match="unknown format 'bogus'.*vllm"):
        import_file(DATA / "trtllm_bench_report.txt", fmt="bogus")
    with pytest.raises(CurveError, match="no input files"):
        import_files([])


def vllm_run(**changes) -> str:
    record = json.loads((DATA / "vllm_bench_serve_sweep.jsonl").read_text().splitlines()[0])
    record.update(changes)
    return json.dumps({k: v for k, v in record.items() if v != "DROP"})


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"duration": 0.0}, "duration_s is zero"),
        ({"max_concurrency": -4}, "concurrency is negative"),
        ({"output_throughput": "DROP"}, "without output_throughput"),
        # a NaN, like Infinity, is a broken measurement (null or no key: not measured)
        ({"output_throughput": float("nan")}, "field 'output_throughput' is NaN"),
        ({"mean_tpot_ms": 0.0}, "tpot_s_mean is zero"),
        ({"completed": 0, "failed": 37}, "every request failed"),
    ],
)
def test_vllm_bad_values(tmp_path: Path, changes: dict, message: str):
    with pytest.raises(CurveError, match=message):
        import_file(write(tmp_path, "run.json", vllm_run(**changes)), fmt="vllm")


def test_gpu_count_must_be_positive():
    with pytest.raises(CurveError, match=r"GPU count \(--gpus\) is 0; expected a whole number"):
        import_file(DATA / "vllm_bench_serve_sweep.jsonl", gpu_count=0)


def test_seconds_stored_under_ms_keys_is_detected(tmp_path: Path):
    # a wrapper that wrote seconds into the *_ms keys: TPOT 0.01 "ms" = 10 us per token
    stats = {k: v / 1000 for k, v in json.loads(vllm_run()).items() if k.endswith("_ms")}
    with pytest.raises(LatencyUnitError, match="like seconds while the file states milliseconds"):
        import_file(write(tmp_path, "run.json", vllm_run(**stats)))


def test_all_failed_fixture_is_refused():
    with pytest.raises(CurveError, match="every request failed.*not a measurement"):
        import_file(DATA / "vllm_all_failed.json")


def test_mlperf_invalid_and_accuracy_runs_are_refused(tmp_path: Path):
    text = (DATA / "mlperf_log_summary_server_8gpu.txt").read_text()
    with pytest.raises(CurveError, match="INVALID"):
        import_file(
            write(tmp_path, "a.txt", text.replace("Result is : VALID", "Result is : INVALID"))
        )
    with pytest.raises(CurveError, match="AccuracyOnly"):
        import_file(write(tmp_path, "b.txt", text.replace("PerformanceOnly", "AccuracyOnly")))
    no_tokens = "\n".join(line for line in text.splitlines() if "tokens per second" not in line)
    with pytest.raises(CurveError, match="samples/s only"):
        import_file(write(tmp_path, "c.txt", no_tokens))
    detail = (DATA / "mlperf_log_detail_server_8gpu.txt").read_text().splitlines()
    only_bogus = [line for line in detail if "completed_tokens_per_second" not in line]
    with pytest.raises(CurveError, match="result_token_throughput is not a valid figure"):
        import_file(write(tmp_path, "d.txt", "\n".join(only_bogus)))


def test_text_and_csv_formats_with_missing_figures(tmp_path: Path):
    report = (DATA / "trtllm_bench_report.txt").read_text()
    no_output = "".join(line for line in report.splitlines(True) if "Output Throughput" not in line)
    with pytest.raises(CurveError, match="no output-token throughput"):
        import_file(write(tmp_path, "r.txt", no_output))
    genai = (DATA / "genai_perf_profile_export_concurrency8.csv").read_text()
    with pytest.raises(CurveError, match="Output Token Throughput"):
        import_file(write(tmp_path, "g.csv", genai.replace("Output Token Throughput", "Other")))
    aiperf = (DATA / "aiperf_profile_export_conc4.csv").read_text()
    with pytest.raises(CurveError, match="unit ''"):
        import_file(
            write(
                tmp_path, "a.csv", aiperf.replace("Time to First Token (ms)", "Time to First Token")
            )
        )
    nested = json.loads((DATA / "inferencex_agentic_nested.json").read_text())
    nested["num_requests_successful"] = 0
    with pytest.raises(CurveError, match="no request succeeded"):
        import_file(write(tmp_path, "n.json", json.dumps(nested)))


GENERIC = DATA / "generic_curve_hand_example.csv"


def generic(tmp_path: Path, transform) -> Path:
    lines = GENERIC.read_text().splitlines()
    return write(tmp_path, "curve.csv", "\n".join(transform(lines)) + "\n")


def test_generic_csv_bad_cells(tmp_path: Path):
    def cell(lines, row, column, value):
        cells = lines[row].split(",")
        cells[column] = value
        lines[row] = ",".join(cells)
        return lines

    with pytest.raises(CurveError, match="line 3.*NaN"):
        import_file(generic(tmp_path, lambda ls: cell(ls, 2, 1, "NaN")))
    with pytest.raises(CurveError, match="line 2.*'fast' is not a number"):
        import_file(generic(tmp_path, lambda ls: cell(ls, 1, 1, "fast")))
    with pytest.raises(CurveError, match="concurrency is negative"):
        import_file(generic(tmp_path, lambda ls: cell(ls, 1, 0, "-1")))
    with pytest.raises(CurveError, match="duplicate load level: line 2, line 3"):
        import_file(generic(tmp_path, lambda ls: cell(ls, 2, 0, "1")))
    with pytest.raises(CurveError, match="line 4: no output-token throughput"):
        import_file(generic(tmp_path, lambda ls: cell(ls, 3, 1, "")))
    with pytest.raises(CurveError, match="no data rows"):
        import_file(generic(tmp_path, lambda ls: ls[:1]))
    with pytest.raises(CurveError, match="requires an output_tokens_per_s"):
        import_file(
            generic(tmp_path, lambda ls: [ls[0].replace("output_tokens_per_s", "speed")] + ls[1:]),
            fmt="generic-csv",
        )


def test_generic_csv_ms_labelled_as_seconds(tmp_path: Path):
    def relabel(lines):
        return [lines[0].replace("tpot_ms_", "tpot_s_"), *lines[1:]]

    with pytest.raises(LatencyUnitError, match="look like milliseconds while the file states"):
        import_file(generic(tmp_path, relabel))


def test_generic_csv_unitless_latency_is_detected_and_stated(tmp_path: Path):
    def unitless(lines):
        # drop the TTFT column and the unit of the TPOT columns
        header = lines[0].replace("tpot_ms_", "tpot_").replace("ttft_s_p99,", "")
        body = [",".join(c for i, c in enumerate(r.split(",")) if i != 5) for r in lines[1:]]
        return [header, *body]

    curve = import_file(generic(tmp_path, unitless))
    assert curve.points["tpot_s_mean"].iloc[0] == pytest.approx(0.010)
    assert "ms (detected" in curve.provenance["latency_unit"]
    assert any("plausible only as ms" in w for w in curve.warnings)


def test_generic_csv_ambiguous_unit_is_refused(tmp_path: Path):
    # a TTFT of 20 is plausible as 20 s (a queue) and as 20 ms; 0.4 fits seconds only (0.4 ms
    # is below the 1 ms a served LLM takes to its first token)
    text = "output_tokens_per_s,gpu_count,ttft_p99\n100,1,20\n"
    with pytest.raises(CurveError, match="no unit.*'ttft_p99' fit both seconds and milli"):
        import_file(write(tmp_path, "c.csv", text))


@settings(max_examples=50, deadline=None)
@given(
    tpot=st.floats(1e-3, 1.0),
    conc=st.floats(1, 4096),
    ratio=st.floats(0.05, 1.5),
)
def test_unit_check_accepts_consistent_points_and_catches_ms_read_as_s(tpot, conc, ratio):
    point = pd.DataFrame(
        {
            "tpot_s_mean": [tpot],
            "ttft_s_mean": [20 * tpot],
            "concurrency": [conc],
            "output_tokens_per_s": [ratio * conc / tpot],
        }
    )
    assert latency_unit_findings(point) == []
    as_if_ms = point.assign(tpot_s_mean=tpot * 1000, ttft_s_mean=20 * tpot * 1000)
    findings = latency_unit_findings(as_if_ms)
    assert len(findings) == 1 and findings[0][2] == 1e3


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 9999), gpu=st.sampled_from(["NVIDIA_H100", "L40S", "B200-SXM"]))
def test_gpu_count_patterns(n, gpu):
    assert gpu_count_from_text(f"{n}x{gpu}")[0] == n
    assert gpu_count_from_text(f"{gpu}x{n}_TRT")[0] == n
    assert gpu_count_from_text(f"run_gpus_{n}.json")[0] == n


# --- merging, the curve CSV and the CLI -----------------------------------------------------


def test_merge_files_and_refuse_the_same_file_twice(tmp_path: Path):
    curve = import_files(
        [DATA / "vllm_bench_serve_sweep.jsonl", DATA / "sglang_bench_serving.jsonl"]
    )
    assert len(curve.points) == 5
    assert set(curve.points["source_file"]) == {
        "vllm_bench_serve_sweep.jsonl",
        "sglang_bench_serving.jsonl",
    }
    mixed = import_files(
        [DATA / "vllm_bench_serve_sweep.jsonl", DATA / "inferencex_agg_fixed.json"]
    )
    assert any("different models" in w for w in mixed.warnings)
    assert any("different hardware (NVIDIA H100; h200)" in w for w in mixed.warnings)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((DATA / "vllm_bench_serve_sweep.jsonl").read_bytes())
    with pytest.raises(CurveError, match="same content as"):
        import_files([DATA / "vllm_bench_serve_sweep.jsonl", copy])


def test_curve_csv_round_trip_keeps_values_and_provenance(tmp_path: Path):
    original = import_file(DATA / "sglang_bench_serving.jsonl")
    path = write_curve_csv(original, tmp_path / "curve.csv")
    again = load_curve(path)
    assert again.provenance["format"] == "generic-csv"
    numeric = [c for c in CURVE_COLUMNS if c in original.points]
    pd.testing.assert_frame_equal(
        again.points[numeric].astype(float), original.points[numeric].astype(float)
    )
    assert (again.points["tool"] == "sglang.bench_serving").all()
    assert (again.points["file_sha256"] == original.provenance["file_sha256"]).all()
    with pytest.raises(WriteError, match="exists; use --force to overwrite"):
        write_curve_csv(original, path)
    write_curve_csv(original, path, overwrite=True)
    with pytest.raises(CurveError, match="ending in .csv"):
        write_curve_csv(original, tmp_path / "curve.json")


def test_formats_registry_is_documented():
    assert {"vllm", "sglang", "mlperf-summary", "inferencex", "trtllm-bench", "generic-csv"} <= set(
        FORMATS
    )


def test_cli_import_writes_and_refuses_to_overwrite(tmp_path: Path, capsys):
    out = tmp_path / "curve.csv"
    assert (
        main(["throughput", "import", str(DATA / "inferencex_agg_fixed.json"), "--out", str(out)])
        == 0
    )
    assert len(pd.read_csv(out)) == 3
    assert (
        main(["throughput", "import", str(DATA / "inferencex_agg_fixed.json"), "--out", str(out)])
        == 3
    )
    assert "exists; use --force to overwrite" in capsys.readouterr().err
    assert main(["throughput", "import", str(DATA / "vllm_all_failed.json")]) == 3
    assert "every request failed" in capsys.readouterr().err
    assert (
        main(["throughput", "import", str(DATA / "trtllm_bench_report.txt"), "--show", "json"]) == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["points"][0]["request_rate_per_s"] == "inf"
    assert payload["provenance"]["tool_version"] == "1.0.0"


@pytest.mark.parametrize(
    "name", ["scenarios/deepseek-r1-gb200-nvl72.toml", "calibration/b200-sxm.toml"]
)
def test_a_toml_file_of_econ_own_is_named_so_not_called_a_csv(name: str):
    path = ROOT / "models" / name
    with pytest.raises(CurveError, match="a TOML file, not a serving benchmark's result") as err:
        import_file(path)
    assert "CSV" not in str(err.value)


@pytest.mark.parametrize(
    "text",
    ["[fleet]\ngpu_count = 72\n", "[fleet]  # the rack\ngpu_count = 72\n", 'name = "x"\n'],
)
def test_a_toml_file_that_opens_with_a_table_or_a_key_is_named_so(tmp_path, text: str):
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    with pytest.raises(CurveError, match="a TOML file, not a serving benchmark's result"):
        import_file(path)


def test_no_real_benchmark_output_reads_as_toml(shared_data: Path):
    from econ.throughput.importers import _looks_like_toml

    for name in SAMPLES:
        path = shared_data / "samples" / name
        if path.is_file():
            text = path.read_text(errors="replace").lstrip()
            assert not _looks_like_toml(text), name


# --- pathological cells and lines: parsed in linear time or refused with file and line ----------
# Each input took minutes with the regexes these parsers used; a regression shows as a hang.

GENAI_CSV = DATA / "genai_perf_profile_export_concurrency8.csv"
TRT_REPORT = DATA / "trtllm_bench_report.txt"
UNCLOSED = 120_000  # "[" or "(" without their closing bracket: ~4 min for the old regexes
OVER_CSV_LIMIT = 200_000  # characters of one field; the csv module's limit is 131,072


def refused_by_the_cli(capsys, path: Path) -> str:
    """The CLI's message for a file it refuses: exit 3 and no traceback."""
    assert main(["throughput", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(path) in err
    return err


@pytest.mark.parametrize(
    "header, key",
    [
        ("ttft p99 [ms]", "ttft_p99_ms"),
        ("TTFT [ms] p99", "ttft_ms_p99"),
        ("Output-Tokens/s", "output_tokens_s"),
        ("[[ms]", "[ms"),
        ("a[b]c[d", "a_b_c[d"),
        ("x]y[z]", "x]y_z"),
        ("a" + "[" * UNCLOSED, "a" + "[" * UNCLOSED),
    ],
)
def test_generic_csv_headers_normalize_in_one_pass(header: str, key: str):
    from econ.throughput.importers.generic_csv import _norm

    assert _norm(header) == key


def test_generic_csv_overlong_header_and_field_are_refused_with_their_place(tmp_path, capsys):
    lines = GENERIC.read_text().splitlines()
    header = write(
        tmp_path,
        "header.csv",
        "\n".join([lines[0] + ",x" + "[" * UNCLOSED, *[line + "," for line in lines[1:]]]) + "\n",
    )
    column = len(lines[0].split(",")) + 1
    with pytest.raises(
        CurveError, match=rf"header column {column} is 120,001 characters long; expected"
    ):
        import_file(header)
    field = write(
        tmp_path, "field.csv", "\n".join([*lines[:2], '"' + "x" * OVER_CSV_LIMIT + '"']) + "\n"
    )
    with pytest.raises(CurveError, match=r"line 3: not a well-formed CSV record \(field larger"):
        import_file(field, fmt="generic-csv")
    assert "line 3: not a well-formed CSV record" in refused_by_the_cli(capsys, field)
    refused_by_the_cli(capsys, header)


@pytest.mark.parametrize(
    "cell, name, unit",
    [
        ("Time To First Token (ms)", "Time To First Token ", "ms"),
        ("Request Throughput (per sec)", "Request Throughput ", "per sec"),
        ("Request Count", "Request Count", ""),
        ("a (b) (ms)", "a (b) ", "ms"),
        ("a (b)) (ms)", "a (b)) ", "ms"),
        ("a ((ms)", "a ", "(ms"),
        ("a (ms) x", "a (ms) x", ""),
        ("x" + " " * UNCLOSED + "y", "x" + " " * UNCLOSED + "y", ""),
        ("(" * UNCLOSED + ")", "", "(" * (UNCLOSED - 1)),
    ],
)
def test_genai_perf_metric_name_and_unit_in_one_pass(cell: str, name: str, unit: str):
    from econ.throughput.importers.genai_perf import _name_unit

    assert _name_unit(cell) == (name, unit)


def test_genai_perf_csv_overlong_cell_and_field_are_refused_with_their_place(tmp_path, capsys):
    lines = GENAI_CSV.read_text().splitlines()
    wide = write(
        tmp_path,
        "wide_concurrency8.csv",
        "\n".join([*lines[:3], "x" + " " * UNCLOSED + "y,1"]) + "\n" + "\n".join(lines[3:]) + "\n",
    )
    with pytest.raises(CurveError, match=r"line 4, column 1: a cell of 120,002 characters"):
        import_file(wide)
    field = write(
        tmp_path,
        "field_concurrency8.csv",
        "\n".join([*lines[:2], '"' + "x" * OVER_CSV_LIMIT + '",1', *lines[2:]]) + "\n",
    )
    with pytest.raises(CurveError, match=r"line 3: not a well-formed CSV record \(field larger"):
        import_file(field)
    assert "line 3: not a well-formed CSV record" in refused_by_the_cli(capsys, field)
    assert "a cell of 120,002 characters" in refused_by_the_cli(capsys, wide)


@pytest.mark.parametrize(
    "text, dashes, inside",
    [
        ("-- Per-Request Time-per-Output-Token [TPOT] Breakdown (ms)", True, "ms"),
        ("-- Request Latency Breakdown (ms) -----------------------", True, "ms"),
        ("-- Request Latency Breakdown (ms) - -", True, None),
        ("Total Latency (ms)", False, "ms"),
        ("Total Latency (ms) --", False, None),
        ("Issue Rate (req/sec) (x)", False, "x"),
        ("Rate ((req/sec)", False, "(req/sec"),
        ("No unit", False, None),
        ("--" + "(" * UNCLOSED, True, None),
        ("(" * UNCLOSED + "x", False, None),
    ],
)
def test_trtllm_trailing_parentheses_in_one_pass(text: str, dashes: bool, inside: str | None):
    from econ.throughput.importers.trtllm import _trailing_parens

    assert _trailing_parens(text, dashes=dashes) == inside


def test_trtllm_overlong_block_header_is_refused_with_its_line(tmp_path, capsys):
    log = "".join(f"[TRT-LLM] [I] step {i}\n" for i in range(3))
    report = TRT_REPORT.read_text()
    text = log + report + "--" + "(" * UNCLOSED + "\n"
    path = write(tmp_path, "report.txt", text)
    line = text.count("\n")
    with pytest.raises(CurveError, match=rf"line {line}: a block header of 120,002 characters"):
        import_file(path)
    assert f"line {line}: a block header" in refused_by_the_cli(capsys, path)
    # the unit of a block header is still read, rules of dashes after it or not
    assert (
        import_file(write(tmp_path, "plain.txt", log + report)).points.iloc[0]["tpot_s_p99"]
        == import_file(TRT_REPORT).points.iloc[0]["tpot_s_p99"]
    )
