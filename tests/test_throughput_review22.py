"""Throughput importers: defects an outside infrastructure review found (review 22). A CSV of
any length read row by row with a per-point catalog lookup (minutes and gigabytes for 1.3 million
rows); an MLPerf Endpoints curve whose reading rules were lost on a CSV round trip, and mixed
per-user definitions merged without a word; old SGLang files without input and total rates; a
LoadGen summary marked VALID beside a p99 above its own limit; v6.1 catalog rows without their
latency limits; vague refusals; a 100,000-character model name carried through. Real samples are
read where they lie (../shared/data/samples); edited copies and small files are written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from econ.benchmarks import load_catalog
from econ.cli import main
from econ.throughput.importers import (
    CurveError,
    import_file,
    import_files,
    write_curve_csv,
)
from econ.throughput.importers._common import MAX_NAME_CHARS, MAX_POINTS_PER_FILE
from econ.throughput.operating_point import operating_point
from tests.conftest import SHARED_DATA, needs_shared_data
from tests.endpoints_tree import build_submission

SAMPLES = SHARED_DATA / "samples"
ENDPOINTS_RUN = (
    SAMPLES
    / "mlperf-endpoints"
    / "v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-performance-result_summary.json"
)
LLMD = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"
VLLM_RUN = SAMPLES / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
SGLANG_OLD = SAMPLES / "sglang" / "datacrunch-h200-llama3.3-70b-online.jsonl"
SGLANG_NEW = (
    SAMPLES / "sglang" / "bowenwan6-sglang-dev-qwen3vl8b-image-conc1-with-server_info.jsonl"
)
SERVER_SUMMARY = (
    SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
)
NS_PER_MS = 1e6


def curve_rows(count: int) -> str:
    """A generic curve CSV of `count` plausible rows (8 GPUs, 1 token/s more per row)."""
    rows = [f"{i},{i}.0,0.1,0.05,8" for i in range(1, count + 1)]
    return "\n".join(["concurrency,output_tokens_per_s,ttft_s_p99,tpot_s_p99,gpu_count", *rows])


# --- 1. a row cap, refused before the file is read through; checks at array speed -------------


def test_a_csv_over_the_row_cap_is_refused_before_its_rows_are_read(tmp_path: Path):
    # a cell that is not a number stands after the cap: the refusal is the cap's, read no further
    text = curve_rows(MAX_POINTS_PER_FILE + 1) + "\nabc,1.0,0.1,0.05,8\n" + "1,2,3,4,5\n" * 20
    path = tmp_path / "sweep.csv"
    path.write_text(text)
    with pytest.raises(CurveError) as info:
        import_file(path)
    message = str(info.value)
    lines = text.count("\n")
    assert message.startswith(f"{path}: more than 10,000 data rows")
    assert f"counted to line 10,002 of the file's {lines:,}" in message
    assert "at most 10,000 points" in message and "abc" not in message


def test_a_csv_at_the_row_cap_imports(tmp_path: Path):
    path = tmp_path / "sweep.csv"
    path.write_text(curve_rows(MAX_POINTS_PER_FILE) + "\n\n\n")  # blank lines are not rows
    points = import_file(path).points
    assert len(points) == MAX_POINTS_PER_FILE
    assert points["output_tokens_per_s_per_gpu"].iloc[-1] == MAX_POINTS_PER_FILE / 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{}\n" * (MAX_POINTS_PER_FILE + 1), "more than 10,000 JSON Lines records (counted to line "
         "10,001 of the file's 10,001)"),
        # (record 10,001 starts after "[" and 10,000 "{}," at character 30,002 of 1 + 10,005
        # "{}" + 10,004 "," + 1: the list is not read through, so its length is in characters)
        ("[" + ",".join(["{}"] * (MAX_POINTS_PER_FILE + 5)) + "]", "more than 10,000 records in "
         "the JSON list (counted to record 10,001, at character 30,002 of the file's 30,016)"),
    ],
)  # fmt: skip
def test_json_records_over_the_cap_are_refused(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "runs.json"
    path.write_text(text)
    with pytest.raises(CurveError, match=re.escape(expected)):
        import_file(path)


def test_the_first_point_out_of_bounds_is_named_with_the_bound_it_breaks(tmp_path: Path):
    # line 3 breaks the input bound (10 x 1e7 tokens/s per GPU x 1 GPU), line 4 the per-GPU
    # ceiling of an unknown model (1e7); the first line is named, as a row-by-row check did
    path = tmp_path / "c.csv"
    path.write_text(
        "concurrency,output_tokens_per_s,input_tokens_per_s,gpu_count\n"
        "1,10,10,1\n2,20,2e8,1\n3,2e7,30,1\n"
    )
    with pytest.raises(CurveError, match=r"line 3: input_tokens_per_s is 2e\+08; expected at most"):
        import_file(path)


# --- 2. MLPerf Endpoints curves keep their reading rules through a CSV -------------------------


@needs_shared_data
def test_an_endpoints_run_keeps_its_rules_and_columns_through_the_curve_csv(tmp_path: Path):
    summary = json.loads(ENDPOINTS_RUN.read_text())
    original = import_file(ENDPOINTS_RUN)
    again = import_file(write_curve_csv(original, tmp_path / "run.csv"))
    for key, value in {
        "curve_reading": "step",
        "tokens_per_s_per_user_definition": "MLPerf Endpoints v1.0: 1000 / TPOT p90 [ms]",
        "throughput_window": "legacy_loadgen_window_duration_ns",
    }.items():
        assert original.provenance[key] == again.provenance[key] == value
    point = again.points.iloc[0]
    assert point["achieved_request_rate_per_s"] == pytest.approx(summary["qps"], rel=1e-12)
    latency = summary["latency"]["percentiles"]
    for stat, key in (("p50", "50.0"), ("p90", "90.0"), ("p95", "95.0"), ("p99", "99.0")):
        assert point[f"e2e_s_{stat}"] == pytest.approx(latency[key] / 1e9, rel=1e-12)
    tpot_p90_ms = summary["tpot"]["percentiles"]["90.0"] / NS_PER_MS
    assert point["tokens_per_s_per_user"] == pytest.approx(1000 / tpot_p90_ms, rel=1e-12)


def test_a_submission_keeps_its_power_basis_and_step_reading_through_the_curve_csv(
    tmp_path: Path,
):
    tree = build_submission(tmp_path / "submission")
    original = import_file(tree)
    path = tmp_path / "rt.csv"
    assert main(["throughput", "import", str(tree), "--out", str(path)]) == 0
    again = import_file(path)
    for key in (
        "curve_reading",
        "tokens_per_s_per_user_definition",
        "throughput_window",
        "power_basis",
    ):
        assert again.provenance[key] == original.provenance[key]
    assert (
        again.provenance["power_basis"] == "provisioned (MLPerf Endpoints Appendix E), not measured"
    )
    limits = {"ttft_s_p90": 1.0}
    assert (
        operating_point(again, latency_limits=limits).to_dict()["values"]
        == (operating_point(original, latency_limits=limits).to_dict()["values"])
    )


def test_a_curve_reading_other_than_step_or_interpolate_is_refused(tmp_path: Path):
    path = tmp_path / "c.csv"
    path.write_text("concurrency,output_tokens_per_s,curve_reading\n1,10,step\n2,20,stairs\n")
    with pytest.raises(CurveError, match="line 3, column 'curve_reading': 'stairs'; expected one "
                       "of interpolate, step"):  # fmt: skip
        import_file(path)


@needs_shared_data
def test_endpoints_and_vllm_merged_are_warned_of_their_per_user_definitions():
    merged = import_files([ENDPOINTS_RUN, LLMD])
    (warning,) = [w for w in merged.warnings if "define tokens/s per user differently" in w]
    assert (
        f"MLPerf Endpoints v1.0: 1000 / TPOT p90 [ms] in {ENDPOINTS_RUN.name}" in warning
        and f"1 / mean TPOT (every tool but MLPerf Endpoints) in {LLMD.name}" in warning
        and "not comparable on one frontier" in warning
    )
    assert "curve_reading" not in merged.provenance  # vLLM's points are interpolated
    same = import_files([LLMD, VLLM_RUN])
    assert not [w for w in same.warnings if "per user differently" in w]


# --- 3. old SGLang files: input and total rates from the token counts --------------------------


@needs_shared_data
def test_old_sglang_rates_come_from_total_input_tokens_over_duration():
    records = [json.loads(line) for line in SGLANG_OLD.read_text().splitlines()]
    assert "input_throughput" not in records[0] and "total_throughput" not in records[0]
    curve = import_file(SGLANG_OLD)
    for record, (_, point) in zip(records, curve.points.iterrows(), strict=True):
        inputs = record["total_input_tokens"] / record["duration"]
        assert point["input_tokens_per_s"] == pytest.approx(inputs, rel=1e-12)
        assert point["total_tokens_per_s"] == pytest.approx(
            inputs + record["output_throughput"], rel=1e-12
        )
    first = curve.points.iloc[0]  # 152,612 / 298.37 s; + 537.41 output tokens/s
    assert round(first["input_tokens_per_s"], 1) == 511.5
    assert round(first["total_tokens_per_s"], 1) == 1048.9
    assert any("total_input_tokens / duration" in n for n in curve.provenance["notes"])


@needs_shared_data
def test_the_new_sglang_schema_keeps_its_own_rates():
    record = json.loads(SGLANG_NEW.read_text().splitlines()[0])
    point = import_file(SGLANG_NEW).points.iloc[0]
    assert point["input_tokens_per_s"] == pytest.approx(record["input_throughput"])
    assert point["total_tokens_per_s"] == pytest.approx(record["total_throughput"])


@needs_shared_data
def test_no_input_rate_when_the_output_rate_is_not_over_the_same_duration(tmp_path: Path):
    record = json.loads(SGLANG_OLD.read_text().splitlines()[0])
    record["duration"] *= 1.5  # total_output_tokens / duration no longer the output rate
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n")
    point = import_file(path).points.iloc[0]
    assert pd.isna(point["input_tokens_per_s"]) and pd.isna(point["total_tokens_per_s"])


# --- 4. a LoadGen summary whose own p99 breaks its stated limit --------------------------------


def summary_ns(text: str, label: str) -> int:
    return int(re.search(rf"^{re.escape(label)}\s*: (\d+)", text, re.M | re.I)[1])


@needs_shared_data
@pytest.mark.parametrize(
    ("limit", "p99_label", "what"),
    [
        ("tpot_latency (ns)", "99.00 percentile time to output token (ns)", "time per output token"),
        ("ttft_latency (ns)", "99.00 percentile first token latency (ns)", "first token latency"),
    ],
)  # fmt: skip
def test_a_valid_summary_whose_p99_breaks_its_own_limit_is_refused(
    tmp_path: Path, limit: str, p99_label: str, what: str
):
    text = SERVER_SUMMARY.read_text()
    p99 = summary_ns(text, p99_label)
    below = p99 - 1  # LoadGen: a p99 above the limit (even by 1 ns) fails PerfConstraintsMet
    edited = re.sub(rf"{re.escape(limit)}: \d+", f"{limit}: {below}", text)
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(edited)
    assert "Result is : VALID" in edited
    with pytest.raises(CurveError) as info:
        import_file(path)
    message = str(info.value)
    # the digits that tell the two apart: 146.040006 ms above a limit of 146.040005 ms
    assert message.startswith(f"{path}: the 99th percentile {what} is {p99 / 1e6:.9g} ms")
    assert f"limit of {below / 1e6:.9g} ms" in message
    assert "yet the log says the run is VALID" in message and "INVALID" in message
    # a p99 exactly at its limit meets it
    path.write_text(re.sub(rf"{re.escape(limit)}: \d+", f"{limit}: {p99}", text))
    assert len(import_file(path).points) == 1


@needs_shared_data
def test_the_reviewers_interactive_limits_on_a_server_run_are_refused(tmp_path: Path):
    text = SERVER_SUMMARY.read_text()
    text = re.sub(r"ttft_latency \(ns\): \d+", "ttft_latency (ns): 450000000", text)
    text = re.sub(r"tpot_latency \(ns\): \d+", "tpot_latency (ns): 40000000", text)
    path = tmp_path / "mlperf_log_summary.txt"
    path.write_text(text)
    with pytest.raises(CurveError, match="first token latency is 452.7 ms, above its ttft_latency "
                       "limit of 450 ms and the 99th percentile time per output token is 146 ms, "
                       "above its tpot_latency limit of 40 ms"):  # fmt: skip
        import_file(path)
    assert import_file(SERVER_SUMMARY).points["tpot_s_p99"].iloc[0] < 0.2  # the real run: met


# --- 5. v6.1 catalog rows carry the limits their source states ---------------------------------


@needs_shared_data
def test_v61_rows_take_the_limits_the_constraints_table_states_for_v61(capsys):
    constraints = pd.read_csv(SHARED_DATA / "mlperf_latency_constraints.csv")
    stated = constraints[constraints["rounds_observed"].str.split(";").map(lambda r: "v6.1" in r)]
    assert list(zip(stated["benchmark_family"], stated["scenario"], strict=True)) == [
        ("deepseek-r1", "Server")
    ]
    catalog = load_catalog()
    v61 = catalog[catalog["round"] == "v6.1"]
    server = (v61["benchmark_family"] == "deepseek-r1") & (v61["scenario"] == "Server")
    assert server.sum() == 33
    assert (v61.loc[server, "ttft_limit_ms"] == stated["ttft_p99_limit_ms"].iloc[0]).all()
    assert (v61.loc[server, "tpot_limit_ms"] == stated["tpot_p99_limit_ms"].iloc[0]).all()
    assert v61.loc[~server, ["ttft_limit_ms", "tpot_limit_ms"]].isna().all().all()
    # the headline rows' measured p99s meet them
    measured = v61[server & v61["tpot_p99_ms"].notna()]
    assert len(measured) and (measured["tpot_p99_ms"] <= measured["tpot_limit_ms"]).all()
    assert main(["benchmarks", "show", "v6.1-48ef0995"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ttft_limit_ms\s+2000(\.0)?$", out, re.M)
    assert re.search(r"^tpot_limit_ms\s+80(\.0)?$", out, re.M)


# --- 6. refusals that say what the file is -----------------------------------------------------


@pytest.mark.parametrize(
    ("content", "kind"),
    [("null", "null"), ('"abc"', "a string of 3 characters"), ("12", "a number"),
     ("-1.5e3\n", "a number"), ("true", "a boolean")],
)  # fmt: skip
def test_json_holding_one_value_is_said_to_be_json(tmp_path: Path, content: str, kind: str):
    path = tmp_path / "x.json"
    path.write_text(content)
    expected = f"{path}: JSON, but {kind} where an object or a list of results was expected"
    for fmt in ("auto", "vllm"):
        with pytest.raises(CurveError, match=re.escape(expected)):
            import_file(path, fmt)


def test_a_list_of_numbers_names_the_record(tmp_path: Path):
    path = tmp_path / "x.json"
    path.write_text("[12]")
    with pytest.raises(CurveError, match="record 1 is a number, expected an object of results"):
        import_file(path)


def test_a_file_of_only_a_byte_order_mark_is_empty(tmp_path: Path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf")
    with pytest.raises(CurveError, match="the file is empty .a byte-order mark and nothing else."):
        import_file(path)


@needs_shared_data
@pytest.mark.parametrize("depth", [5_000, 1_200])
def test_nesting_too_deep_is_refused_with_its_depth(tmp_path: Path, depth: int):
    record = json.loads(LLMD.read_text().splitlines()[0])
    record["server"] = "{LEVELS}"
    nested = "[" * (depth - 1) + "]" * (depth - 1)  # under the record's own level
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record).replace('"{LEVELS}"', nested) + "\n")
    with pytest.raises(CurveError) as info:
        import_file(path)
    assert f"nested too deeply to parse: {depth:,} levels of objects and lists" in str(info.value)
    assert "thousands" not in str(info.value)


def test_the_depth_counts_no_bracket_inside_a_string(tmp_path: Path):
    path = tmp_path / "run.json"
    path.write_text('{"a": "[[[[\\"[[{{", "b": ' + "[" * 3_000 + "]" * 3_000 + "}")
    with pytest.raises(CurveError, match="3,001 levels"):
        import_file(path)


def test_a_submission_system_desc_points_to_the_submission_folder(tmp_path: Path):
    desc = next(build_submission(tmp_path / "sub").glob("results/*/*/r*/system_desc.json"))
    with pytest.raises(CurveError, match="an MLPerf Endpoints system_desc.json, not a result.*the "
                       "submission folder .*result_summary.json with --gpus N"):  # fmt: skip
        import_file(desc)


# --- 7. names longer than any real one ---------------------------------------------------------


@needs_shared_data
def test_a_model_name_over_the_limit_is_refused_without_quoting_it(tmp_path: Path):
    run = json.loads(VLLM_RUN.read_text())
    path = tmp_path / "run.json"
    path.write_text(json.dumps(dict(run, model_id="m" * 100_000)))
    with pytest.raises(CurveError) as info:
        import_file(path)
    message = str(info.value)
    assert message == (
        f"{path}: the run: the model name is 100,000 characters long; expected at most "
        f"{MAX_NAME_CHARS:,} (a Hugging Face model id is at most 96)"
    )


@needs_shared_data
def test_a_long_model_name_is_clipped_in_the_import_table_and_kept_in_json(tmp_path, capsys):
    run = json.loads(VLLM_RUN.read_text())
    path = tmp_path / "run.json"
    name = "m" * MAX_NAME_CHARS
    path.write_text(json.dumps(dict(run, model_id=name)))
    assert main(["throughput", "import", str(path)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert f"model: {'m' * 80}... (1,000 characters);" in header and "m" * 81 not in header
    assert main(["throughput", "import", str(path), "--show", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["provenance"]["model"] == name
