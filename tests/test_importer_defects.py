"""Importer defects found on held-out real files (issue 17 §3), each reproduced on a copy of a real
sample from ../shared placed or edited the way the held-out file was; reference values are read
from the file's own fields in the test."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from econ.throughput.importers import (
    CurveError,
    LatencyUnitError,
    detect_format,
    import_file,
    import_files,
)
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
    # the run's TPOTs a quarter of the Server run's (p99 146 ms -> 36.5 ms), within either limit:
    # LoadGen marks a run whose p99 breaks its limit INVALID, and such a log is refused
    faster = re.sub(
        r"(time to output token \(ns\)\s*: )(\d+)",
        lambda m: f"{m[1]}{int(m[2]) // 4}",
        SERVER.read_text(),
        flags=re.I,
    )
    text = re.sub(r"tpot_latency \(ns\): \d+", f"tpot_latency (ns): {limit_ns}", faster)
    curve = import_file(place(tmp_path, SERVER, "summary.txt", text=text))
    assert curve.points["workload"].iloc[0] == "benchmark=llama2-70b, scenario=Interactive"
    # an unknown limit leaves Server with the warning
    text = re.sub(r"tpot_latency \(ns\): \d+", "tpot_latency (ns): 123000000", faster)
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


# --- review of the throughput side (infrastructure benchmarking) --------------------------------

GENAI_CSV = SAMPLES / "genai-perf" / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.csv"
AIPERF_CSV = SAMPLES / "aiperf" / "mlx-qwen3-0.6b-conc4_profile_export_aiperf.csv"
NERDALERT = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"
GLM_GAUDI = SAMPLES / "inferencex" / "inferencex-app-supplemental-bmk-glm4.7-gaudi3.json"
GLM_RAW = SAMPLES / "inferencex" / "raw-vllm-gaudi-glm4.7-conc1-source-of-supplemental.json"


def cli_error(capsys, argv: list[str]) -> str:
    """The message of a command that must exit 3 without a traceback."""
    from econ.cli import main

    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def cut_after(text: str, marker: str) -> str:
    """The text up to and including the line holding `marker` (a cut at a line end)."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if marker in line)
    return "".join(lines[: index + 1])


def test_trtllm_report_cut_in_the_middle_of_a_number_is_refused(tmp_path: Path, capsys):
    # head -c 1600 ends "Per GPU Output Throughput (tps/gpu):   11" (of 11076.7700): it imported
    # as 1,007 GPUs at 11 tokens/s each, "run without --streaming"
    text = TRT_REPORT.read_text()[:1600]
    assert text.endswith(": 11") or text.rstrip().endswith("11")
    path = place(tmp_path, TRT_REPORT, "cut.txt", text=text)
    with pytest.raises(CurveError, match="ends without a line break") as info:
        import_file(path)
    message = str(info.value)
    line = text.count("\n") + 1
    assert str(path) in message and f"line {line}" in message
    assert "'Per GPU Output Throughput (tps/gpu)'" in message and "value '11'" in message
    assert "cut off" in cli_error(capsys, ["throughput", "import", str(path)])


@pytest.mark.parametrize(
    "marker, what",
    [
        ("Total Output Throughput (tokens/sec)", "no Request Latency Breakdown block"),
        ("Per GPU Output Throughput", "no Request Latency Breakdown block"),
        ("[TPOT] P90", r"the \[TPOT\] breakdown block has 5 of its 7 statistics \(no P95, P99\)"),
        ("Per-Request Time-to-First-Token", r"the \[TTFT\] breakdown block has 0 of its 7"),
        ("[Latency] P95", "the Request Latency Breakdown block has 3 of its 7"),
    ],
)
def test_trtllm_report_cut_at_a_line_end_is_refused(tmp_path: Path, marker: str, what: str):
    path = place(tmp_path, TRT_REPORT, "cut.txt", text=cut_after(TRT_REPORT.read_text(), marker))
    with pytest.raises(CurveError, match=f"the report looks cut off: {what}"):
        import_file(path)


def test_trtllm_report_cut_after_its_performance_overview_keeps_its_figures(tmp_path: Path):
    text = cut_after(TRT_REPORT.read_text(), "[Latency] AVERAGE")  # the dataset details cut off
    point = import_file(place(tmp_path, TRT_REPORT, "cut.txt", text=text)).points.iloc[0]
    whole = import_file(TRT_REPORT).points.iloc[0]
    for column in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "gpu_count", "tpot_s_p99"):
        assert point[column] == whole[column]


def test_legacy_trtllm_overview_cut_before_total_latency_is_refused(tmp_path: Path):
    legacy = SAMPLES / "trtllm-bench" / "docs-perf-benchmarking-v0.17-pytorch-legacy-overview.txt"
    text = cut_after(legacy.read_text(), "Token Throughput (tokens/sec)")
    with pytest.raises(CurveError, match="no 'Total Latency \\(ms\\)' line"):
        import_file(place(tmp_path, legacy, "cut.txt", text=text))
    # the whole excerpt: TP x PP, said to be a guess because the report has no per-GPU rate
    curve = import_file(legacy)
    assert curve.points["gpu_count"].iloc[0] == 1
    assert any("the report has no per-GPU output rate" in w for w in curve.warnings)
    assert not any("does not give a whole world size" in w for w in curve.warnings)


def test_trtllm_world_size_that_disagrees_with_tp_x_pp_is_refused(tmp_path: Path, capsys):
    text = TRT_REPORT.read_text()
    # a per-GPU rate of a tenth: 10 GPUs by the ratio, but TP Size 1 x PP Size 1
    tenth = re.sub(
        r"(Per GPU Output Throughput \(tps/gpu\):\s+)11076.7700", r"\g<1>1107.6770", text
    )
    path = place(tmp_path, TRT_REPORT, "tenth.txt", text=tenth)
    with pytest.raises(CurveError, match="gives 10 GPUs but the report's TP x PP size is 1"):
        import_file(path)
    # a per-GPU rate that divides into no whole number of GPUs
    odd = re.sub(r"(Per GPU Output Throughput \(tps/gpu\):\s+)11076.7700", r"\g<1>4000.0000", text)
    with pytest.raises(CurveError, match="does not divide the total output rate 11076.8"):
        import_file(place(tmp_path, TRT_REPORT, "odd.txt", text=odd))
    # --gpus states the count: per-GPU recomputed from it, the disagreement warned
    curve = import_file(path, gpu_count=10)
    point = curve.points.iloc[0]
    assert point["gpu_count"] == 10
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(11076.77 / 10)
    assert any(
        "(--gpus) 10 overrides the 1 GPU of the report's TP x PP" in w for w in curve.warnings
    )
    assert "import it with the GPU count" in cli_error(capsys, ["throughput", "import", str(path)])


def test_gpus_recomputes_the_per_gpu_rate_of_a_trtllm_report():
    curve = import_file(TRT_REPORT, gpu_count=2)  # the report says 1 GPU, 11,076.77 per GPU
    point = curve.points.iloc[0]
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(11076.77 / 2)
    assert any("overrides the 1 GPU of the report's" in w for w in curve.warnings)
    assert import_file(TRT_REPORT, gpu_count=1).warnings == import_file(TRT_REPORT).warnings


def test_trtllm_json_world_size_is_checked_against_the_rates_and_tp_pp(tmp_path: Path):
    report = trtllm_json()
    report["world_info"] = dict(report["world_info"], world_size=2)  # per-GPU rate of 1 GPU
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(CurveError, match="world_size is 2 but the total output rate / per-GPU"):
        import_file(path)
    report["performance"] = dict(
        report["performance"], output_throughput_per_gpu_tok_s=11076.77 / 2
    )
    path.write_text(json.dumps(report))
    curve = import_file(path)  # TP 1 x PP 1 against world size 2: used, and said
    assert curve.points["gpu_count"].iloc[0] == 2
    assert any("world_size 2 is not the TP x PP size (1)" in w for w in curve.warnings)


@pytest.mark.parametrize("sample", [GENAI_CSV, AIPERF_CSV], ids=["genai-perf", "aiperf"])
def test_genai_perf_and_aiperf_csv_cut_off_are_refused(tmp_path: Path, sample: Path):
    raw = sample.read_bytes()
    # the last line without its end: the GenAI-Perf file then ends "Request Throughput (per
    # sec),11" (of 11.38) and imported an input rate of 2,200.3 tokens/s (11 x 200.03)
    cut = place(tmp_path, sample, "cut.csv", text=raw[:-5].decode())
    with pytest.raises(CurveError, match="ends without a line break") as info:
        import_file(cut)
    assert str(cut) in str(info.value) and "line " in str(info.value)
    text = sample.read_text()
    # cut at a line end before the Request Throughput row, and before the Metric,Value table
    before = text[: text.index("Request Throughput")]
    with pytest.raises(CurveError, match="no 'Request Throughput' row.*looks cut off"):
        import_file(place(tmp_path, sample, "before.csv", text=before))
    table = text[: text.index("Metric,Value")]
    with pytest.raises(CurveError, match="no 'Metric,Value' table.*looks cut off"):
        import_file(place(tmp_path, sample, "table.csv", text=table))
    import_file(sample)  # the whole export still imports


def test_seconds_in_ms_keys_of_request_rate_runs_are_refused(tmp_path: Path, capsys):
    # the nerdalert runs at 30 req/s and all at once (max_concurrency null: no Little's law) with
    # every *_ms value divided by 1000: 16,000-42,000 tokens/s per user, TPOT of 24-62 us
    runs = []
    for line in NERDALERT.read_text().splitlines():
        record = json.loads(line)
        if record["request_rate"] == 10.0:
            continue
        assert record["max_concurrency"] is None
        for key, value in list(record.items()):
            if key.endswith("_ms") and isinstance(value, int | float):
                record[key] = value / 1000
        runs.append(json.dumps(record))
    path = place(tmp_path, NERDALERT, "seconds.jsonl", text="\n".join(runs) + "\n")
    with pytest.raises(LatencyUnitError, match="look like seconds while the file states milli"):
        import_file(path)
    message = cli_error(capsys, ["throughput", "import", str(path)])
    assert "line 1: mean TPOT" in message and "tokens/s per user" in message
    # the real file imports, its fastest user at 73.7 tokens/s
    assert import_file(NERDALERT).points["tokens_per_s_per_user"].max() < 100


def test_inferencex_requested_lengths_are_not_measured_means():
    curve = import_file(GLM_GAUDI)
    points = curve.points
    assert points["output_tokens_mean"].isna().all() and points["input_tokens_mean"].isna().all()
    assert (points["workload"] == "isl=1024, osl=1024").all()  # the requested lengths stay
    assert any("requested lengths, not measured means" in n for n in curve.provenance["notes"])
    # the raw vLLM file of the conc-1 run measured 6,739 tokens over 10 requests; merged, the
    # aggregate no longer claims 1,024 for the same run
    both = import_files([GLM_GAUDI, GLM_RAW]).points
    raw = json.loads(GLM_RAW.read_text())
    lengths = set(both["output_tokens_mean"].dropna())
    assert lengths == {raw["total_output_tokens"] / raw["completed"]}


def test_forced_trtllm_formats_say_what_they_expected(capsys):
    vllm = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
    with pytest.raises(CurveError, match="not a trtllm-bench throughput report: no '= PERF"):
        import_file(SERVER, fmt="trtllm-bench")
    with pytest.raises(CurveError, match="not a trtllm-bench --report_json file: no 'perf"):
        import_file(vllm, fmt="trtllm-bench-json")
    err = cli_error(capsys, ["throughput", "import", "--format", "trtllm-bench-json", str(vllm)])
    assert str(vllm) in err and "no output-token throughput" not in err


def test_unrecognized_json_gives_its_key_count_not_its_keys(tmp_path: Path):
    path = tmp_path / "other.json"
    path.write_text('{"alpha": 1, "beta": 2, "gamma": 3}')
    with pytest.raises(CurveError, match="an object with 3 keys") as info:
        import_file(path)
    assert "alpha" not in str(info.value)
    path.write_text('{"alpha": 1}\n{"beta": 2}\n')
    with pytest.raises(CurveError, match="2 records, the first with 1 key,"):
        import_file(path)


def test_latency_unit_message_names_the_units(tmp_path: Path):
    text = (
        "concurrency,output_tokens_per_s,gpu_count,tpot_s_mean\n"
        "1,90,1,10\n4,300,1,12.5\n16,800,1,20\n"
    )
    path = tmp_path / "ms_as_s.csv"
    path.write_text(text)
    with pytest.raises(LatencyUnitError) as info:
        import_file(path)
    message = str(info.value)
    assert "the latencies look like milliseconds while the file states seconds." in message
    assert "states stated" not in message and "in stated" not in message


def test_json_lines_messages_give_the_file_line(tmp_path: Path):
    offline = import_file(SAMPLES / "sglang" / "datacrunch-h200-llama3.3-70b-offline.jsonl")
    # the repeated runs are the file's lines 4 and 5 (they were "record 3, record 4")
    assert any(w.startswith("line 4, line 5 measure the same load level") for w in offline.warnings)
    lines = NERDALERT.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["duration"] = 0.0
    text = "\n".join([lines[0], "", lines[1], json.dumps(bad)]) + "\n"  # a blank line 2
    with pytest.raises(CurveError, match="line 4: duration_s is zero"):
        import_file(place(tmp_path, NERDALERT, "runs.jsonl", text=text))
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([json.loads(lines[0]), bad]))
    with pytest.raises(CurveError, match="record 2: duration_s is zero"):
        import_file(listed)
