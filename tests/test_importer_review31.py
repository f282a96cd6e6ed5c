"""Importer defects found in review 31: each test fails on the code before its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from econ.throughput.importers import CurveError, import_file
from tests.conftest import SHARED_DATA, needs_shared_data
from tests.test_importer_defects import trtllm_json

SAMPLES = SHARED_DATA / "samples"
AIPERF_JSON = SAMPLES / "aiperf" / "mlx-qwen3-0.6b-conc4_profile_export_aiperf.json"
AIPERF_CSV = SAMPLES / "aiperf" / "mlx-qwen3-0.6b-conc4_profile_export_aiperf.csv"
GENAI_CSV = SAMPLES / "genai-perf" / "nim-llama3-8b-streaming-conc10_profile_export_genai_perf.csv"
VLLM_SWEEP = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
TRT_REPORT = SAMPLES / "trtllm-bench" / "nvidia-blog-v0.21.0rc0-pytorch-streaming-full-report.txt"
INFERENCEX_FIXED = "agg_kimik2.5_1k1k_int4_vllm_tp8_mtp_conc4_mi355x.json"
INFERENCEX_AGENTIC = "agg_bmk-agentic-qwen3.5-397b-mi300x-conc128.json"


@needs_shared_data
@pytest.mark.parametrize("metric", ["output_token_throughput", "request_throughput"])
def test_a_rate_per_minute_in_a_json_export_is_refused(tmp_path: Path, metric: str):
    # read as per second, 53.35 tokens/min was 53.35 tokens/s: 60x the real rate
    data = json.loads(AIPERF_JSON.read_text())
    data[metric]["unit"] = data[metric]["unit"].replace("/sec", "/min")
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    with pytest.raises(
        CurveError, match=rf"{metric} has unit '\w+/min'; expected a rate per second"
    ):
        import_file(path)


@needs_shared_data
@pytest.mark.parametrize(
    ("source", "cell"),
    [
        (AIPERF_CSV, "Output Token Throughput (tokens/sec)"),
        (GENAI_CSV, "Output Token Throughput (per sec)"),
    ],
)
def test_a_rate_per_minute_in_a_csv_export_is_refused(tmp_path: Path, source: Path, cell: str):
    text = source.read_text()
    assert cell in text
    path = tmp_path / source.name
    path.write_text(text.replace(cell, cell.replace("sec)", "min)")))
    with pytest.raises(CurveError, match="output_token_throughput has unit '.*min'"):
        import_file(path)
    assert import_file(source).points["output_tokens_per_s"].iloc[0] > 0  # the sample is read


@needs_shared_data
@pytest.mark.parametrize("version", ["2.0", "9", 2, ""])
def test_an_aiperf_export_of_another_schema_major_version_is_refused(tmp_path: Path, version):
    data = json.loads(AIPERF_JSON.read_text())
    assert data["schema_version"] == "1.4"
    data["schema_version"] = version
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CurveError, match=r"field schema_version is .*; expected 1\.x"):
        import_file(path)
    data["schema_version"] = "1.9"  # a newer minor version adds fields only
    path.write_text(json.dumps(data))
    assert import_file(path).points["output_tokens_per_s"].iloc[0] > 0


@needs_shared_data
def test_a_total_rate_below_the_output_rate_names_both_fields(tmp_path: Path):
    # before: "input_tokens_per_s is negative (-43.75)", a figure the file does not hold
    data = json.loads(VLLM_SWEEP.read_text())
    record = data[0] if isinstance(data, list) else data
    record["total_token_throughput"] = 50.0
    path = tmp_path / "result.json"
    path.write_text(json.dumps(record))
    output = record["output_throughput"]
    with pytest.raises(
        CurveError,
        match=rf"total_tokens_per_s is 50, below output_tokens_per_s {output:.6g}; expected the "
        r"total \(input \+ output tokens/s\) to be at least the output rate",
    ):
        import_file(path)


@needs_shared_data
@pytest.mark.parametrize(("completed", "failed"), [(80, 0), (8, 1)])
def test_more_requests_completed_than_sent_is_refused(tmp_path: Path, completed, failed):
    # before: imported, the mean ISL and OSL (total tokens / completed) 10x too low (3.2 and 1.6)
    data = json.loads(VLLM_SWEEP.read_text())
    record = data[0] if isinstance(data, list) else data
    assert record["num_prompts"] == 8
    record.update(completed=completed, failed=failed)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(record))
    with pytest.raises(
        CurveError,
        match=rf"field completed is {completed}.*, more than num_prompts 8 \(the requests sent\)",
    ):
        import_file(path)


@needs_shared_data
@pytest.mark.parametrize(
    "label", ["Total Output Throughput (tokens/sec)", "Per GPU Output Throughput (tps/gpu)"]
)
def test_a_nan_throughput_line_in_a_trtllm_report_is_refused(tmp_path: Path, label: str):
    # before: 'nan' read as not measured; the output rate was rebuilt from the other line and a
    # warning blamed a missing per-GPU line
    lines = TRT_REPORT.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith(label))
    lines[index] = f"{label}: nan\n"
    path = tmp_path / "report.txt"
    path.write_text("".join(lines))
    with pytest.raises(CurveError, match=rf"field '{re.escape(label)}' is NaN"):
        import_file(path)


@pytest.mark.parametrize(
    "key",
    [
        "system_output_throughput_tok_s",
        "system_total_throughput_tok_s",
        "output_throughput_per_gpu_tok_s",
    ],
)
def test_a_nan_rate_in_a_trtllm_report_json_is_refused(tmp_path: Path, key: str):
    # before: NaN read as not measured and the curve built from the other rates, no warning
    report = trtllm_json()
    report["performance"][key] = float("nan")
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(CurveError, match=rf"field '{key}' is NaN"):
        import_file(path)


@needs_shared_data
@pytest.mark.parametrize(
    ("name", "key"),
    [
        (INFERENCEX_FIXED, "conc"),  # before: the point lost its load level, no warning
        (INFERENCEX_FIXED, "mean_tpot"),  # before: "no mean TPOT in the file", 1 / median
        (INFERENCEX_FIXED, "p99_ttft"),  # before: TTFT p99 left empty, no warning
        (INFERENCEX_AGENTIC, "output_tput_tps"),  # before: rebuilt from the per-GPU rate
    ],
)
def test_a_nan_in_an_inferencex_record_is_refused(tmp_path: Path, name: str, key: str):
    data = json.loads((SAMPLES / "inferencex" / name).read_text())
    record = data[0] if isinstance(data, list) else data
    assert isinstance(record[key], int | float)
    record[key] = float("nan")
    path = tmp_path / name
    path.write_text(json.dumps(data))
    with pytest.raises(CurveError, match=rf"field '{key}' is NaN"):
        import_file(path)
