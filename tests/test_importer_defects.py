"""Importer defects found on held-out real files (issue 17 §3), each reproduced on a copy of a real
sample from ../shared placed or edited the way the held-out file was; reference values are read
from the file's own fields in the test."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from econ.throughput.importers import CurveError, detect_format, import_file, import_files
from econ.throughput.importers._common import read_source
from econ.throughput.operating_point import group_labels
from tests.conftest import SHARED_DATA, needs_shared_data

SAMPLES = SHARED_DATA / "samples"
pytestmark = needs_shared_data  # every test reads a real sample file
MLPERF = SAMPLES / "mlperf"
SERVER = MLPERF / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
OFFLINE = MLPERF / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Offline-mlperf_log_summary.txt"
TRT_REPORT = SAMPLES / "trtllm-bench" / "nvidia-blog-v0.21.0rc0-pytorch-streaming-full-report.txt"
SYSTEM_JSON = (
    SAMPLES / "mlperf-endpoints" / "v6.1-nvidia-systems-VR-NVL72_VR-288GB_aarch64x72_TRT.json"
)
SGLANG = SAMPLES / "sglang" / "bowenwan6-sglang-dev-qwen3vl8b-image-conc1-with-server_info.jsonl"


def summary_value(text: str, label: str) -> float:
    """The number after `label :` in a LoadGen summary (first occurrence)."""
    match = re.search(rf"^{re.escape(label)}\s*:\s*([0-9.eE+-]+)\s*$", text, re.M | re.I)
    assert match, label
    return float(match.group(1))


def place(tmp_path: Path, source: Path, *parts: str, text: str | None = None) -> Path:
    path = tmp_path.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source.read_text() if text is None else text)
    return path


# --- LoadGen 6.x: "Mean Time per Output Token" ---------------------------------------------------


def test_loadgen_6_time_per_output_token_is_read(tmp_path: Path):
    text = SERVER.read_text().replace("Time to Output Token", "Time per Output Token")
    text = text.replace("time to output token", "time per output token")
    path = place(tmp_path, SERVER, "summary.txt", text=text)
    curve = import_file(path)
    mean_s = summary_value(text, "Mean Time per Output Token (ns)") / 1e9
    p99_s = summary_value(text, "99.00 percentile time per output token (ns)") / 1e9
    point = curve.points.iloc[0]
    assert point["tpot_s_mean"] == pytest.approx(mean_s)
    assert point["tpot_s_p99"] == pytest.approx(p99_s)
    assert point["tokens_per_s_per_user"] == pytest.approx(1 / mean_s)
    assert not any("1 / median TPOT" in w for w in curve.warnings)


def test_per_user_speed_from_the_median_is_warned_about(tmp_path: Path):
    text = "\n".join(
        line for line in SERVER.read_text().splitlines() if not line.startswith("Mean Time to")
    )
    curve = import_file(place(tmp_path, SERVER, "summary.txt", text=text))
    p50_s = summary_value(text, "50.00 percentile time to output token (ns)") / 1e9
    assert curve.points["tokens_per_s_per_user"].iloc[0] == pytest.approx(1 / p50_s)
    assert any("1 / median TPOT" in w for w in curve.warnings)


# --- benchmark and scenario from the log or the results path ------------------------------------


def results(tmp_path: Path, source: Path, platform: str, benchmark: str, scenario: str, text=None):
    return place(
        tmp_path,
        source,
        "closed",
        "Org",
        "results",
        platform,
        benchmark,
        scenario,
        "performance",
        "run_1",
        "mlperf_log_summary.txt",
        text=text,
    )


def test_interactive_scenario_is_labelled_from_the_results_path(tmp_path: Path):
    path = results(tmp_path, SERVER, "H200-SXM-141GBx8_TRT", "llama2-70b-99", "Interactive")
    curve = import_file(path)
    point = curve.points.iloc[0]
    assert point["workload"] == "benchmark=llama2-70b-99, scenario=Interactive"
    assert point["model"] == "llama2-70b-99"
    assert point["hardware"] == "H200-SXM-141GBx8_TRT"
    assert point["gpu_count"] == 8
    tokens = summary_value(SERVER.read_text(), "Completed tokens per second")
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(tokens / 8)
    assert any("guessed from the platform name" in w for w in curve.warnings)


def test_generic_sut_names_never_merge_benchmarks_into_one_curve(tmp_path: Path):
    generic = SERVER.read_text().replace("llama2-70b-Server-SUT", "PySUT")
    a = results(tmp_path / "a", SERVER, "8xMI355X_2xEPYC", "llama2-70b-99", "Server", text=generic)
    b = results(
        tmp_path / "b", SERVER, "8xMI355X_2xEPYC", "gpt-oss-120b", "Server", text=generic + "\n"
    )
    curve = import_files([a, b])
    assert len(set(group_labels(curve.points))) == 2
    # without a results path the benchmark is unknown and said so, never the SUT name
    alone = import_file(place(tmp_path, SERVER, "summary.txt", text=generic))
    assert alone.points["model"].iloc[0] == ""
    assert any("the benchmark is unknown" in w for w in alone.warnings)


def test_benchmark_from_the_sut_name_is_listed_as_a_guess():
    curve = import_file(SERVER)
    assert curve.points["model"].iloc[0] == "llama2-70b"
    assert any("guessed from the SUT name" in w for w in curve.warnings)
    # the log's TPOT limit (tpot_latency) is llama2-70b's Server limit in the catalog
    limit_ms = summary_value(SERVER.read_text(), "tpot_latency (ns)") / 1e6
    assert f"scenario Server from the run's TPOT limit ({limit_ms:g} ms" in " ".join(
        curve.provenance["notes"]
    )


def test_interactive_from_the_logs_tpot_limit(tmp_path: Path):
    from econ.benchmarks import latency_constraints

    table = latency_constraints()
    row = table[
        (table["benchmark_family"] == "llama2-70b")
        & (table["scenario"].str.startswith("Interactive"))
    ]
    limit_ns = int(row["tpot_p99_limit_ms"].iloc[0] * 1e6)
    text = re.sub(r"tpot_latency \(ns\): \d+", f"tpot_latency (ns): {limit_ns}", SERVER.read_text())
    curve = import_file(place(tmp_path, SERVER, "summary.txt", text=text))
    assert curve.points["workload"].iloc[0] == "benchmark=llama2-70b, scenario=Interactive"
    # an unknown limit leaves Server with the warning
    text = re.sub(r"tpot_latency \(ns\): \d+", "tpot_latency (ns): 123000000", SERVER.read_text())
    curve = import_file(place(tmp_path, SERVER, "other.txt", text=text))
    assert curve.points["workload"].iloc[0] == "benchmark=llama2-70b, scenario=Server"
    assert any("LoadGen logs Interactive runs as Server" in w for w in curve.warnings)


# --- GPU count from the results path or the system JSON ------------------------------------------


def test_multi_node_platform_counts_every_node(tmp_path: Path):
    path = results(tmp_path, OFFLINE, "9x8xMI355X_2xEPYC_9575F", "gpt-oss-120b", "Offline")
    point = import_file(path).points.iloc[0]
    assert point["gpu_count"] == 9 * 8
    tokens = summary_value(OFFLINE.read_text(), "Tokens per second")
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(tokens / 72)


def test_system_json_beside_the_results_gives_the_gpu_count(tmp_path: Path):
    platform = "VR-NVL72_VR-288GB_aarch64x72_TRT"
    path = results(tmp_path, SERVER, platform, "deepseek-r1", "Server")
    systems = tmp_path / "closed" / "Org" / "systems"
    systems.mkdir()
    shutil.copy(SYSTEM_JSON, systems / f"{platform}.json")
    system = json.loads(SYSTEM_JSON.read_text())
    expected = system["number_of_nodes"] * system["accelerators_per_node"]
    curve = import_file(path)
    point = curve.points.iloc[0]
    assert point["gpu_count"] == expected
    assert "system description" in curve.provenance["gpu_count_basis"]
    assert system["accelerator_model_name"] in point["hardware"]
    assert not any("guessed from the platform name" in w for w in curve.warnings)


# --- trtllm-bench: console logs and --report_json -----------------------------------------------


def test_trtllm_report_after_four_hundred_log_lines(tmp_path: Path):
    log = "".join(
        f"[11/18/2025-10:{i // 60:02d}:{i % 60:02d}] [TRT-LLM] [I] Model: step {i}: ok\n"
        for i in range(400)
    )
    path = place(tmp_path, TRT_REPORT, "console.log", text=log + TRT_REPORT.read_text())
    assert detect_format(read_source(path)) == "trtllm-bench"
    point = import_file(path).points.iloc[0]
    reference = import_file(TRT_REPORT).points.iloc[0]
    assert point["model"] == "meta-llama/Llama-3.1-8B-Instruct"  # not a log line's "Model:"
    assert point["output_tokens_per_s"] == reference["output_tokens_per_s"] == 11076.77


def trtllm_json(**changes) -> dict:
    """A --report_json object with the figures of the blog's console report (same run)."""
    report = {
        "engine": {"model": "meta-llama/Llama-3.1-8B-Instruct", "version": "0.21.0rc0",
                   "backend": "Pytorch", "dtype": "bfloat16", "quantization": None},
        "world_info": {"tp_size": 1, "pp_size": 1, "ep_size": None, "world_size": 1,
                       "max_batch_size": 3840, "max_num_tokens": 7680, "issue_rate": 1.0526e15},
        "request_info": {"num_requests": 100, "avg_num_concurrent_requests": 94.605,
                         "avg_input_length": 128.0, "avg_output_length": 128.0},
        "performance": {"total_latency_ms": 1155.5715, "avg_request_latency_ms": 1093.2284,
                        "request_throughput_req_s": 86.5373,
                        "system_output_throughput_tok_s": 11076.77,
                        "system_total_throughput_tok_s": 22153.5399,
                        "output_throughput_per_user_tok_s": 117.1544,
                        "output_throughput_per_gpu_tok_s": 11076.77,
                        "request_latency_percentiles_ms": {"p50": 1100.0, "p99": 1150.0}},
        "streaming_metrics": {"avg_ttft_ms": 162.6706, "avg_tpot_ms": 7.3272,
                              "tpot_percentiles": {"p50": 7.3, "p90": 7.5, "p95": 7.6, "p99": 7.9},
                              "ttft_percentiles": {"p50": 160.0, "p90": 200.0, "p95": 210.0,
                                                   "p99": 230.0}},
    }  # fmt: skip
    report.update(changes)
    return report


def test_trtllm_report_json(tmp_path: Path):
    report = trtllm_json()
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    assert detect_format(read_source(path)) == "trtllm-bench-json"
    curve = import_file(path)
    point = curve.points.iloc[0]
    perf, streaming = report["performance"], report["streaming_metrics"]
    assert point["output_tokens_per_s"] == perf["system_output_throughput_tok_s"]
    assert point["gpu_count"] == report["world_info"]["world_size"]
    assert point["tpot_s_mean"] == pytest.approx(streaming["avg_tpot_ms"] / 1000)
    assert point["ttft_s_p99"] == pytest.approx(streaming["ttft_percentiles"]["p99"] / 1000)
    assert point["duration_s"] == pytest.approx(perf["total_latency_ms"] / 1000)
    assert point["request_rate_per_s"] == float("inf")
    assert point["precision"] == "bfloat16"
    assert curve.provenance["tool_version"] == "0.21.0rc0"
    # the console report of the same run gives the same figures
    text = import_file(TRT_REPORT).points.iloc[0]
    for column in ("output_tokens_per_s", "tpot_s_mean", "ttft_s_mean", "gpu_count"):
        assert point[column] == pytest.approx(text[column])


# --- refusals that say what is wrong ------------------------------------------------------------


def test_singlestream_summary_with_inferred_tokens_per_second(tmp_path: Path):
    text = OFFLINE.read_text().replace("Scenario : Offline", "Scenario : SingleStream")
    text = text.replace("Tokens per second:", "Tokens per second (inferred):")
    text = text.replace("Samples per second:", "Samples per second (inferred):")
    curve = import_file(place(tmp_path, OFFLINE, "summary.txt", text=text))
    point = curve.points.iloc[0]
    assert point["output_tokens_per_s"] == summary_value(text, "Tokens per second (inferred)")
    assert point["concurrency"] == 1
    assert any("inferred figure" in w for w in curve.warnings)
    # with samples/s only the refusal says so
    only_samples = "\n".join(ln for ln in text.splitlines() if not ln.startswith("Tokens per"))
    with pytest.raises(CurveError, match="samples/s only"):
        import_file(place(tmp_path, OFFLINE, "samples.txt", text=only_samples))


def test_vllm_without_output_throughput_is_named_as_vllm(tmp_path: Path):
    record = json.loads(
        (SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json").read_text()
    )
    record = record[0] if isinstance(record, list) else record
    record.pop("output_throughput")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    with pytest.raises(
        CurveError, match="vLLM/SGLang bench_serving result without output_throughput"
    ):
        import_file(path)


def test_unknown_csv_lists_the_required_columns_without_quoting_the_file(tmp_path: Path):
    path = tmp_path / "curve.csv"
    path.write_text("secret_header_a,secret_b\n1,2\n")
    with pytest.raises(CurveError) as info:
        import_file(path)
    assert "output_tokens_per_s" in str(info.value) and "secret" not in str(info.value)


def test_sglang_prefill_decode_server_info(tmp_path: Path):
    record = json.loads(SGLANG.read_text().splitlines()[0])
    info = record["server_info"]
    prefill = dict(info, tp_size=4, dp_size=1, enable_dp_attention=False, dtype="auto")
    decode = dict(info, tp_size=8, dp_size=8, enable_dp_attention=True, dtype="auto")
    record["server_info"] = {"prefill": [prefill], "decode": [decode, decode]}
    path = tmp_path / "pd.jsonl"
    path.write_text(json.dumps(record))
    curve = import_file(path)
    point = curve.points.iloc[0]
    assert point["gpu_count"] == 4 + 8 + 8  # DP attention runs inside the TP group
    assert point["precision"] == ""  # "auto": the server chose, the file does not say
    assert curve.provenance["tool_version"] == info["version"]
    assert "summed over 3 prefill/decode servers" in curve.provenance["gpu_count_basis"]


def test_inferencex_gpu_count_from_the_rate_ratio_is_a_whole_number(tmp_path: Path):
    source = SAMPLES / "inferencex" / "agg_bmk-agentic-qwen3.5-397b-mi300x-conc128.json"
    records = json.loads(source.read_text())
    record = records[0]
    assert "num_gpus" not in record
    # the file's own rates: system / per GPU is 8 (printed rounded); a 0.4% mismatch still is 8
    ratio = record["output_tput_tps"] / record["output_tput_per_gpu"]
    assert round(ratio) == 8
    record["output_tput_per_gpu"] = record["output_tput_tps"] / 8 * 1.004
    path = tmp_path / "agg.json"
    path.write_text(json.dumps([record]))
    curve = import_file(path)
    assert curve.points["gpu_count"].iloc[0] == 8
    # a ratio that is no whole number (6.15 GPUs) is not a count: TP size, warned
    record["output_tput_per_gpu"] = record["output_tput_tps"] / 6.15
    path.write_text(json.dumps([record]))
    curve = import_file(path)
    assert curve.points["gpu_count"].iloc[0] == record["tp"]
    assert any("GPU count taken as the TP size" in w for w in curve.warnings)


def test_summary_and_detail_log_of_one_run_agree_on_per_user_speed():
    detail = (
        MLPERF / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.TAIL-excerpt.txt"
    )
    a = import_file(SERVER).points.iloc[0]
    b = import_file(detail).points.iloc[0]
    assert a["tokens_per_s_per_user"] == pytest.approx(b["tokens_per_s_per_user"], rel=1e-6)
    assert a["tokens_per_s_per_user"] == pytest.approx(
        1e9 / summary_value(SERVER.read_text(), "Mean Time to Output Token (ns)")
    )
