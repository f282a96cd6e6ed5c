"""Throughput importers, the operating point and the benchmark catalog: defects an outside
inference engineer found (review 26). GenAI-Perf CSV input rates from a request rate printed to
two decimals; `throughput point` limits in seconds not held to a scenario's SLO band; a forced
format recorded beside another tool; NaN latencies read as not measured (LoadGen, generic CSV);
a request rate of inf between a measured rate and "all at once"; a CPU-only catalog row's
accelerator 'nan'. Real samples are read where they lie (../shared/data/samples); edited copies
and small files are written here.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from econ.cli import main
from econ.throughput.importers import CurveError, import_file
from econ.throughput.operating_point import interpolate_at, operating_point
from tests.conftest import SHARED_DATA, needs_shared_data

SAMPLES = SHARED_DATA / "samples"
GENAI_PERF = SAMPLES / "genai-perf"
VLLM_RUN = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
SGLANG_RUN = SAMPLES / "sglang" / "datacrunch-h200-llama3.3-70b-online.jsonl"
LLMD = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"
MLPERF = SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
MLPERF_DETAIL = (
    SAMPLES
    / "mlperf"
    / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.TAIL-excerpt.txt"
)

# --- 1. GenAI-Perf CSV: input tokens/s from the unrounded figures ------------------------------


@needs_shared_data
@pytest.mark.parametrize(
    "stem",
    [
        "openrouter-llama3.1-8b-nonstreaming-conc1_profile_export_genai_perf",
        "nim-llama3-8b-streaming-conc10_profile_export_genai_perf",
    ],
)
def test_a_csv_export_gives_the_input_rate_of_its_json_export(stem):
    from_csv = import_file(GENAI_PERF / f"{stem}.csv").points["input_tokens_per_s"].iloc[0]
    from_json = import_file(GENAI_PERF / f"{stem}.json").points["input_tokens_per_s"].iloc[0]
    # OpenRouter: 55.52 x 50 / 305.05 = 9.1001 beside the JSON's 9.1004; it was 0.18 x 50 = 9.00
    assert from_csv == pytest.approx(from_json, rel=1e-3)


SLOW_RUN = """Metric,avg,min,max,p99,p95,p90,p75,p50,p25
Time To First Token (ms),412.10,300.20,650.00,640.00,600.00,550.00,450.00,400.00,350.00
Inter Token Latency (ms),65.30,60.10,70.20,70.00,69.00,68.00,66.00,65.00,64.00
Output Sequence Length (tokens),"1,016.00","1,000.00","1,024.00","1,024.00","1,024.00","1,024.00","1,024.00","1,016.00","1,008.00"
Input Sequence Length (tokens),"2,000.00","2,000.00","2,000.00","2,000.00","2,000.00","2,000.00","2,000.00","2,000.00","2,000.00"

Metric,Value
Output Token Throughput (per sec),15.22
Request Throughput (per sec),0.01
Request Count (count),9.00
"""


def test_a_slow_run_gets_its_input_rate_from_the_output_rate_and_the_lengths(tmp_path: Path):
    path = tmp_path / "slow_conc1_profile_export_genai_perf.csv"
    path.write_text(SLOW_RUN)
    point = import_file(path).points.iloc[0]
    # 15.22 / 1,016 = 0.0150 requests/s, printed 0.01: 0.01 x 2,000 = 20.0 was a third low
    assert point["input_tokens_per_s"] == pytest.approx(15.22 * 2000 / 1016)
    assert point["input_tokens_per_s"] / point["output_tokens_per_s"] == pytest.approx(2000 / 1016)


def test_a_run_without_a_mean_output_length_falls_back_on_the_request_rate(tmp_path: Path):
    path = tmp_path / "no_osl_conc1_profile_export_genai_perf.csv"
    text = "\n".join(line for line in SLOW_RUN.splitlines() if "Output Sequence" not in line)
    path.write_text(text + "\n")
    assert import_file(path).points["input_tokens_per_s"].iloc[0] == pytest.approx(0.01 * 2000)


# --- 2. throughput point: limits in seconds held to the scenario's SLO band --------------------

CURVE = (
    "concurrency,output_tokens_per_s,gpu_count,ttft_s_p95,ttft_s_p99,tpot_s_p99,"
    "tokens_per_s_per_user\n"
    "1,100,1,0.1,0.2,0.02,50\n4,300,1,0.4,0.5,0.04,25\n16,800,1,1.2,1.5,0.08,12.5\n"
)


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--tpot-p99-s", "80", "--tpot-p99-s = 80 s is above 1 s, 5 times the loosest p99 limit"),
        ("--ttft-p99-s", "2000", "--ttft-p99-s = 2,000 s is above 60 s, 10 times the loosest"),
        ("--ttft-p95-s", "100", "--ttft-p95-s = 100 s is above 60 s"),
        ("--limit", "tpot_s_p99=5", "--limit tpot_s_p99 = 5 s is above 1 s"),
    ],
)
def test_a_limit_in_seconds_beyond_the_slo_band_is_warned_of(
    tmp_path: Path, capsys, option, value, said
):
    path = tmp_path / "curve.csv"
    path.write_text(CURVE)
    assert main(["throughput", "point", str(path), option, value]) == 0
    err = capsys.readouterr().err
    assert said in err
    assert f"barely limits anything; was it {float(value.split('=')[-1]):,g} ms" in err


def test_the_warning_is_the_scenarios_and_reaches_the_json(tmp_path: Path, capsys):
    from econ.plausibility import slo_warning

    path = tmp_path / "curve.csv"
    path.write_text(CURVE)
    main(["throughput", "point", str(path), "--tpot-p99-s", "80", "--format", "json"])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert warnings[0] == slo_warning("--tpot-p99-s", "tpot", 80.0)
    assert slo_warning("throughput.slo.tpot_p99_s", "tpot", 80.0).startswith(
        "throughput.slo.tpot_p99_s = 80 s is above 1 s"
    )


def test_limits_within_the_band_or_in_milliseconds_are_not_warned_of(tmp_path: Path, capsys):
    path = tmp_path / "curve.csv"
    path.write_text(CURVE)
    main(["throughput", "point", str(path), "--tpot-p99-s", "0.05", "--ttft-p99-ms", "2000"])
    assert "barely limits" not in capsys.readouterr().err


# --- 3. a forced format on its sibling tool's file ---------------------------------------------


@needs_shared_data
@pytest.mark.parametrize(
    ("fmt", "path", "tool", "sibling"),
    [
        ("sglang", VLLM_RUN, "vllm bench serve", "vllm"),
        ("vllm", SGLANG_RUN, "sglang.bench_serving", "sglang"),
        (
            "aiperf-json",
            GENAI_PERF / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json",
            "genai-perf",
            "genai-perf-json",
        ),
        (
            "genai-perf-csv",
            SAMPLES / "aiperf" / "mlx-qwen3-0.6b-conc4_profile_export_aiperf.csv",
            "aiperf",
            "aiperf-csv",
        ),
    ],
)
def test_a_format_forced_on_the_sibling_tools_file_is_refused(fmt, path, tool, sibling):
    with pytest.raises(CurveError) as caught:
        import_file(path, fmt)
    message = str(caught.value)
    assert f"format {fmt!r} was forced, but the file was written by {tool}" in message
    assert f"or format {sibling!r} for this file" in message
    assert import_file(path, sibling).provenance["format"] == sibling


@needs_shared_data
@pytest.mark.parametrize("fmt", ["genai-perf-json", "aiperf-json"])
def test_a_genai_perf_format_on_another_tools_json_says_it_is_not_an_export(fmt, capsys):
    assert main(["throughput", "import", "--format", fmt, str(VLLM_RUN)]) == 3
    err = capsys.readouterr().err
    assert "not a GenAI-Perf/AIPerf profile export" in err
    assert "no output-token throughput" not in err


# --- 4. NaN latencies: refused where the tool never writes them -------------------------------


@needs_shared_data
@pytest.mark.parametrize("limit_ns", ["200000000", "40000000"])
def test_a_nan_p99_tpot_in_a_loadgen_summary_is_refused(tmp_path: Path, limit_ns):
    text = MLPERF.read_text()
    text = text.replace(
        "99.00 percentile time to output token (ns)   : 146040006",
        "99.00 percentile time to output token (ns)   : nan",
    )
    text = text.replace("tpot_latency (ns): 200000000", f"tpot_latency (ns): {limit_ns}")
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text)
    # with a 40 ms limit the NaN escaped the check of the limits and the run became Interactive
    with pytest.raises(CurveError, match=re.escape(
        "the '99.00 percentile time to output token (ns)' line holds 'nan', not a finite number"
    )):  # fmt: skip
        import_file(path, gpu_count=8)


@needs_shared_data
def test_a_nan_latency_record_in_a_loadgen_detail_log_is_refused(tmp_path: Path):
    text = MLPERF_DETAIL.read_text()
    edited = re.sub(
        r'("key": "result_first_token_99.00_percentile_latency_ns", "value": )\d+', r'\1"nan"', text
    )
    assert edited != text
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_text(edited)
    with pytest.raises(CurveError, match="result_first_token_99.00_percentile_latency_ns' record"):
        import_file(path, gpu_count=8)


@needs_shared_data
@pytest.mark.parametrize(
    ("sample", "metric", "stat"),
    [
        (GENAI_PERF / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json",
         "inter_token_latency", "avg"),
        (GENAI_PERF / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json",
         "time_to_first_token", "p99"),
        (SAMPLES / "aiperf" / "mlx-qwen3-0.6b-conc4_profile_export_aiperf.json",
         "output_token_throughput", "avg"),
    ],
)  # fmt: skip
def test_a_nan_statistic_in_a_genai_perf_or_aiperf_json_is_refused(
    tmp_path: Path, sample, metric, stat
):
    """A NaN statistic (neither tool writes one: a metric without values is left out) was read
    as not measured: a NaN ITL average imported with exit 0 and no word."""
    data = json.loads(sample.read_text())
    assert isinstance(data[metric][stat], int | float)
    data[metric][stat] = math.nan
    path = tmp_path / sample.name
    path.write_text(json.dumps(data))  # Python's json writes the bare NaN token
    with pytest.raises(CurveError, match=re.escape(f"field '{metric}.{stat}' is NaN")):
        import_file(path)


@pytest.mark.parametrize("column", ["ttft_s_p99", "tpot_ms_p99", "output_tokens_per_s"])
def test_nan_text_in_any_numeric_cell_of_a_generic_csv_is_refused(tmp_path: Path, column):
    header = ["concurrency", "output_tokens_per_s", "gpu_count", "ttft_s_p99", "tpot_ms_p99"]
    second = {"concurrency": "2", "output_tokens_per_s": "180", "gpu_count": "1"}
    second |= {"ttft_s_p99": "0.3", "tpot_ms_p99": "25", column: "NaN"}
    path = tmp_path / "nan.csv"
    path.write_text(f"{','.join(header)}\n1,100,1,0.2,20\n{','.join(second[c] for c in header)}\n")
    with pytest.raises(CurveError, match=f"line 3, column '{column}': NaN; leave the cell empty"):
        import_file(path)


def test_an_empty_latency_cell_is_still_not_measured(tmp_path: Path):
    path = tmp_path / "empty.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count,ttft_s_p99\n1,100,1,0.2\n2,180,1,\n")
    assert math.isnan(import_file(path).points["ttft_s_p99"].iloc[1])


# --- 5. a request rate between a measured rate and "all at once" -------------------------------


def test_between_a_finite_and_an_infinite_value_is_not_known():
    assert np.isnan(interpolate_at([30.0, math.inf], [0.5]))[0]
    assert np.isnan(interpolate_at([math.inf, 30.0], [0.5]))[0]
    # the knots themselves, and two "all at once" neighbours, keep their value
    assert interpolate_at([30.0, math.inf, math.inf], [0.0, 1.0, 1.5, 2.0]).tolist() == [
        30.0,
        math.inf,
        math.inf,
        math.inf,
    ]


@needs_shared_data
def test_the_llmd_point_between_30_per_s_and_all_at_once_names_both(capsys):
    point = operating_point(import_file(LLMD), ttft_p99_s=0.5, tpot_p99_s=0.040)
    assert point.tokens_per_s_per_gpu == pytest.approx(1637.47, abs=0.01)
    assert math.isnan(point.values["request_rate_per_s"])
    main(["throughput", "point", str(LLMD), "--ttft-p99-s", "0.5", "--tpot-p99-ms", "40"])
    out = capsys.readouterr().out
    assert re.search(r"request rate \[1/s\] +between 30/s and all at once\n", out)
    main(["throughput", "point", str(LLMD), "--ttft-p99-s", "0.5", "--tpot-p99-ms", "40",
          "--format", "json"])  # fmt: skip
    assert json.loads(capsys.readouterr().out)["values"]["request_rate_per_s"] is None


# --- 6. a catalog row that names no accelerator ------------------------------------------------


def test_a_cpu_only_row_is_said_to_name_no_accelerator(capsys):
    assert main(["benchmarks", "show", "v4.1-b2737a41"]) == 0
    out = capsys.readouterr().out
    assert "check: no accelerator named (CPU-only or unknown system): no per-GPU figure" in out
    assert "'nan'" not in out
