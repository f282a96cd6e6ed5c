"""Throughput importers on the real sample files: defects a new user found (review 29). A format
forced on another tool's file was refused in the forced format's words only ("the run did not
finish or the file is truncated" of a good summary log, "invalid or truncated JSON" of valid
JSON Lines); files merged into one curve where one records the model and another does not were
not warned of. Real samples are read where they lie (../shared/data/samples).
"""

from __future__ import annotations

import json

import pytest

from econ.cli import main
from econ.throughput.importers import CurveError, import_file, import_files
from tests.conftest import SHARED_DATA, needs_shared_data
from tests.endpoints_tree import build_submission

SAMPLES = SHARED_DATA / "samples"
VLLM_RUN = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
SGLANG_RUN = SAMPLES / "sglang" / "datacrunch-h200-llama3.3-70b-online.jsonl"
MLPERF = SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
VLLM_ONE_LINE = (
    SAMPLES / "vllm" / "inferencex-atom-qwen3.5-397b-fp8-mtp-tp4-conc64-8k1k-with-lens.json"
)

# --- 1. A format forced on another tool's file names the format that reads it ----------------


@needs_shared_data
@pytest.mark.parametrize(
    ("path", "forced", "reads"),
    [
        # "the detail log has no result_* records: the run did not finish or ... truncated"
        (MLPERF, "mlperf-detail", "mlperf-summary"),
        # "invalid or truncated JSON at line 2 column 1: Extra data" of valid JSON Lines
        (SGLANG_RUN, "mlperf-endpoints", "sglang"),
        # "the CSV has a header but no data rows" of a one-line JSON result
        (VLLM_ONE_LINE, "generic-csv", "vllm"),
        (VLLM_RUN, "inferencex", "vllm"),
    ],
)
def test_a_format_forced_on_another_tools_file_names_the_format_that_reads_it(path, forced, reads):
    with pytest.raises(CurveError) as refused:
        import_file(path, forced)
    message = str(refused.value)
    assert message.startswith(f"{path}: ")
    assert f"format {forced!r} was forced" in message
    assert f"format {reads!r} reads it" in message
    assert import_file(path, reads).points["output_tokens_per_s"].iloc[0] > 0


@needs_shared_data
def test_the_cli_refusal_is_one_line_with_exit_3(capsys):
    assert main(["throughput", "import", str(MLPERF), "--format", "mlperf-detail"]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert "format 'mlperf-summary' reads it" in err


@needs_shared_data
def test_a_bad_value_in_the_forced_formats_own_file_is_not_blamed_on_the_format(tmp_path):
    run = json.loads(VLLM_RUN.read_text())
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run | {"output_throughput": "fast"}))
    for forced in ("vllm", "sglang"):  # (one parser reads both: the value, not the format)
        with pytest.raises(CurveError) as refused:
            import_file(path, forced)
        assert "output_throughput" in str(refused.value)
        assert "was forced" not in str(refused.value)


def test_a_forced_format_on_a_file_no_importer_recognizes_keeps_its_refusal(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(CurveError) as refused:
        import_file(path, "mlperf-summary")
    assert "was forced" not in str(refused.value)
    assert "MLPerf Results Summary" in str(refused.value)


# --- 2. Merged files of which only some record the model or hardware -------------------------


@needs_shared_data
def test_a_file_without_the_model_merged_with_one_that_names_it_is_warned_of():
    curve = import_files([VLLM_RUN, SGLANG_RUN])
    assert curve.provenance["model"] == "facebook/opt-125m"  # the vLLM file's, alone
    assert (
        f"{SGLANG_RUN.name} does not record the model (the other files: facebook/opt-125m), so "
        "its points may be of another model; an operating point must be taken within one model"
    ) in curve.warnings


@needs_shared_data
def test_files_that_all_name_their_model_are_not_warned_of_a_missing_one():
    curve = import_files([VLLM_RUN, VLLM_ONE_LINE])
    assert not [w for w in curve.warnings if "does not record the model" in w]
    assert any("describe different models" in w for w in curve.warnings)


# --- 3. The count of points written ------------------------------------------------------------


@needs_shared_data
def test_a_curve_of_one_point_is_written_as_one_point(tmp_path, capsys):
    out = tmp_path / "curve.csv"
    assert main(["throughput", "import", str(VLLM_RUN), "--out", str(out)]) == 0
    assert f"wrote {out} (1 point)\n" in capsys.readouterr().err  # was "(1 points)"


# --- 4. --format mlperf-endpoints on a submission folder ---------------------------------------


def test_the_endpoints_format_forced_on_a_submission_folder_reads_the_folder(tmp_path, capsys):
    tree = build_submission(tmp_path / "submission")
    detected = import_file(tree)
    forced = import_file(tree, "mlperf-endpoints")  # was "is a folder, expected a ... file"
    assert forced.provenance["format"] == detected.provenance["format"]
    assert forced.points["output_tokens_per_s"].tolist() == (
        detected.points["output_tokens_per_s"].tolist()
    )
    assert main(["throughput", "import", str(tree), "--format", "mlperf-endpoints"]) == 0


def test_another_format_forced_on_a_folder_is_still_refused(tmp_path):
    tree = build_submission(tmp_path / "submission")
    with pytest.raises(CurveError, match="is a folder"):
        import_file(tree, "vllm")


# --- 5. Every request-latency statistic a file gives ---------------------------------------------


@needs_shared_data
@pytest.mark.parametrize(
    ("relative", "expected_s"),
    [
        # vLLM: median_e2el_ms, p90_e2el_ms (no p95: --metric-percentiles 90,99)
        (VLLM_ONE_LINE.relative_to(SAMPLES), {"p50": 30.51444219693076, "p90": 35.58864737702534}),
        # SGLang: median_e2e_latency_ms of the old compact schema
        ("sglang/datacrunch-h200-deepseek-dp-mla.jsonl", {"p50": 374.5595875820145}),
        # LoadGen summary: "50.00 percentile latency (ns)" ...
        (
            MLPERF.relative_to(SAMPLES),
            {"p50": 31.107282906, "p90": 65.052046419, "p95": 80.054591099},
        ),
        (
            "mlperf/v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_detail.TAIL-excerpt.txt",
            {"p50": 31.107282906, "p90": 65.052046419, "p95": 80.054591099},
        ),
        # GenAI-Perf request_latency p50/p90/p95, JSON and CSV (ms)
        (
            "genai-perf/nim-llama3-8b-streaming-conc10_profile_export_genai_perf.json",
            {"p50": 0.876681518, "p90": 0.8878156607, "p95": 0.89033214125},
        ),
        (
            "genai-perf/nim-llama3-8b-streaming-conc10_profile_export_genai_perf.csv",
            {"p50": 0.87668, "p90": 0.88782, "p95": 0.89033},
        ),
        # trtllm-bench "[Latency] P50 : 1091.7905" ...
        (
            "trtllm-bench/nvidia-blog-v0.21.0rc0-pytorch-streaming-full-report.txt",
            {"p50": 1.0917905, "p90": 1.13072, "p95": 1.1330074},
        ),
        # InferenceX aggregate (s): median_e2el, p90_e2el; agentic nested: p50, p90, p95
        (
            "inferencex/agg_kimik2.5_1k1k_int4_vllm_tp8_mtp_conc4_mi355x.json",
            {"p50": 16.2612041993998, "p90": 17.897407873393966},
        ),
        (
            "inferencex/inferencex-app-etl-fixture-agentic-nested-h100-attempt1.json",
            {"p50": 2.78754, "p90": 417.23579, "p95": 469.68257},
        ),
    ],
)
def test_every_request_latency_percentile_the_file_gives_is_kept(relative, expected_s):
    point = import_file(SAMPLES / relative).points.iloc[0]  # they were all NaN (not measured)
    for stat, seconds in expected_s.items():
        assert point[f"e2e_s_{stat}"] == pytest.approx(seconds, rel=1e-9)
