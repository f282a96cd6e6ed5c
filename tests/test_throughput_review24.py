"""Throughput importers and the benchmark catalog: defects an outside infrastructure review found
(review 24). Unit-less TTFT and TPOT columns decided together (a TTFT of 0.5 s read as 0.5 ms); an
MLPerf Offline curve said to be "at the SLO"; Arc Pro B60 Dual boards counted as one GPU each;
duplicate LoadGen figures read silently; `throughput point` errors without the file; NaN
latencies taken as absent; `--gpus` checked as data; MLPerf's inferred flag over-explained; a
multi-configuration file that could not be narrowed. Real samples are read where they lie
(../shared/data/samples); edited copies and small files are written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from econ.benchmarks import OFFLINE_CAVEAT
from econ.cli import main
from econ.scenario.gain_models import ServiceLevel
from econ.throughput.importers import CurveError, import_file
from econ.throughput.operating_point import operating_point
from econ.throughput.resolve import at_slo
from tests.conftest import ROOT, SHARED_DATA

SAMPLES = SHARED_DATA / "samples"

# --- 1. unit-less latency columns: a unit per column ------------------------------------------

MIXED_UNITS = (
    "concurrency,output_tokens_per_s,gpu_count,ttft_p99,tpot_p99\n"
    "1,100,8,0.5,20\n4,300,8,0.9,30\n16,800,8,2.0,60\n"
)


def test_unitless_ttft_in_seconds_beside_tpot_in_ms_is_read_per_column(tmp_path: Path):
    path = tmp_path / "g1.csv"
    path.write_text(MIXED_UNITS)
    curve = import_file(path)
    # TTFT 0.5 is plausible only as seconds (0.5 ms is below any served LLM's first token);
    # TPOT 60 only as milliseconds (60 s per token is beyond 30 s, and Little's law)
    assert curve.points["ttft_s_p99"].tolist() == [0.5, 0.9, 2.0]
    assert curve.points["tpot_s_p99"].tolist() == pytest.approx([0.020, 0.030, 0.060])
    assert any("'ttft_p99' has no unit" in w and "read as s." in w for w in curve.warnings)
    assert any("'tpot_p99' has no unit" in w and "read as ms." in w for w in curve.warnings)
    assert "s and ms (detected per column" in curve.provenance["latency_unit"]


def test_a_ttft_limit_excludes_the_point_above_it_when_the_unit_was_detected(tmp_path: Path):
    path = tmp_path / "g1.csv"
    path.write_text(MIXED_UNITS)
    point = operating_point(import_file(path), ttft_p99_s=1.0)
    # no per-user speed: no frontier; the best measured point within TTFT p99 1 s is the 0.9 s
    # one, 300 tokens/s over 8 GPUs (the 2.0 s point, 100 per GPU, breaks the limit)
    assert point.tokens_per_s_per_gpu == pytest.approx(300 / 8)


def test_the_same_ttft_column_alone_is_read_as_seconds_too(tmp_path: Path):
    path = tmp_path / "g2.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count,ttft_p99\n1,100,8,0.5\n")
    assert import_file(path).points["ttft_s_p99"].tolist() == [0.5]


# --- 2. an MLPerf Offline log: no latency bound, and no "at the SLO" without one ----------------

OFFLINE = SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Offline-mlperf_log_summary.txt"


def test_an_offline_log_carries_the_catalogs_caveat():
    warnings = import_file(OFFLINE).warnings
    # the words `econ benchmarks show` gives an Offline row, from one place
    assert OFFLINE_CAVEAT in warnings
    assert OFFLINE_CAVEAT.startswith("Offline scenario: no latency bound")


def _offline_scenario(folder: Path) -> Path:
    """The ready-made llama2-70b-h200 scenario reading the Offline log (copied beside it), as the
    reviewer's scenario did, with no SLO."""
    (folder / OFFLINE.name).write_bytes(OFFLINE.read_bytes())
    text = (ROOT / "models" / "scenarios" / "llama2-70b-h200.toml").read_text()
    text = text.replace(
        "[throughput]\n", f'[throughput]\nmeasured = {{ curve = "{OFFLINE.name}" }}\n', 1
    )
    path = folder / "offline.toml"
    path.write_text(text)
    return path


def test_a_scenario_on_an_offline_log_with_no_slo_is_not_said_to_be_at_the_slo(tmp_path: Path):
    import econ

    result = econ.project(econ.load_scenario(_offline_scenario(tmp_path)))
    warnings = result.warnings[0]
    figure = [w for w in warnings if w.startswith("throughput from measured curve")]
    # 31,302.7 tokens/s (the log's 'Tokens per second') over the 8 GPUs of 'h200x8'
    assert figure == [
        f"throughput from measured curve {tmp_path / OFFLINE.name}: {31302.7 / 8:,.1f} tokens/s "
        "per GPU with no latency limit (no SLO given)"
    ]
    assert f"throughput: {OFFLINE_CAVEAT}" in warnings


def test_a_scenario_with_a_latency_limit_is_at_the_slo():
    assert at_slo(ServiceLevel(tpot_p99_s=0.05)) == "at the SLO"
    assert at_slo(ServiceLevel(latency_limits={"ttft_s_p95": 5.77})) == "at the SLO"
    assert at_slo(ServiceLevel()) == "with no latency limit (no SLO given)"


# --- 3. Arc Pro B60 Dual boards: two GPUs per accelerator ---------------------------------------

B60_DUAL = "1-node-4x-BMG-Pro-B60-Dual"


def test_a_dual_gpu_board_counts_two_gpus_without_editing_the_copied_values():
    import pandas as pd

    from econ.benchmarks import accelerators, catalog_throughput, load_catalog, row_checks

    catalog = load_catalog()
    rows = catalog[catalog["system_name"] == B60_DUAL]
    source = pd.read_csv(SHARED_DATA / "mlperf_inference_llm.csv")
    source = source[source["system_name"] == B60_DUAL]
    assert len(rows) == len(source) == 14  # v5.1 and v6.0
    # the copied source columns are unchanged: 4 accelerators, result / 4 per accelerator
    assert sorted(rows["accelerator_count"]) == sorted(source["accelerator_count"]) == [4.0] * 14
    assert sorted(rows["per_accelerator"]) == sorted(source["per_accelerator"])
    # accelerators.csv: "two B60 GPUs per board", so 4 boards are 8 GPUs
    table = accelerators().set_index("accelerator")
    for name in set(rows["accelerator"]):
        assert "two B60 GPUs per board" in table.loc[name, "notes"]
    assert (rows["gpu_count"] == 8).all()
    assert list(rows["tokens_per_s_per_gpu"]) == list(rows["result"] / 8)
    row = catalog[catalog["id"] == "v6.0-929e6908"].iloc[0]
    assert (row["system_name"], row["result"], row["scenario"]) == (B60_DUAL, 3270.66, "Offline")
    value, prov, checks = catalog_throughput("v6.0-929e6908")
    assert value == 3270.66 / 8 and prov["gpu_count"] == 8 and prov["accelerator_count"] == 4
    assert prov["per_gpu_basis"] == "derived: result / accelerator_count x GPUs per accelerator"
    (derived,) = [c for c in checks if c.startswith("per-GPU figure derived")]
    assert f"3,270.66 tokens/s system total / 8 GPUs = {3270.66 / 8:,.1f} tokens/s" in derived
    assert "4 accelerators of 2 GPUs each, as accelerators.csv notes: two B60 GPUs" in derived
    assert not any("differs from result" in c for c in row_checks(row))
    # a single-GPU card keeps the accelerator count (Intel's own 4x B60 system, same round)
    single = catalog[catalog["system_name"] == "1-node-4x-BMG-B60"]
    assert (single["gpu_count"] == single["accelerator_count"]).all() and len(single) > 0


# --- 4. a LoadGen summary whose two throughput lines disagree ----------------------------------

SERVER = SAMPLES / "mlperf" / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"


def test_two_different_completed_tokens_lines_are_refused_naming_both(tmp_path: Path):
    text = SERVER.read_text()
    # the real summary prints the figure in both sections, equal
    assert text.count("Completed tokens per second") == 2 and text.count("29228.22") == 2
    assert import_file(SERVER).points["output_tokens_per_s"].iloc[0] == 29228.22
    head, tail = text.rsplit("29228.22", 1)
    path = tmp_path / "dup-h200x8-mlperf_log_summary.txt"
    path.write_text(head + "31000.00" + tail)  # the Additional Stats line edited
    with pytest.raises(CurveError) as info:
        import_file(path)
    assert str(info.value).startswith(
        f"{path}: the 'Completed tokens per second' line is printed twice with different "
        "values, '29228.22' and '31000.00'"
    )


# --- 5. `throughput point` errors name the file; group labels quoted short ----------------------

SGLANG_ONLINE = SAMPLES / "sglang" / "datacrunch-h200-llama3.3-70b-online.jsonl"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([str(SGLANG_ONLINE)], "the curve mixes 2 model/hardware/workload groups"),
        ([str(OFFLINE), "--ttft-p99-s", "1"], "the curve reports no ttft_s_p99 on its frontier"),
    ],
    ids=["groups", "no-statistic"],
)
def test_point_errors_name_the_file(arguments, message, capsys):
    assert main(["throughput", "point", *arguments]) == 3
    err = capsys.readouterr().err
    assert f"error: {arguments[0]}: {message}" in err


def test_point_without_a_gpu_count_names_the_file(tmp_path: Path, capsys):
    path = tmp_path / "nogpus.csv"
    path.write_text("concurrency,output_tokens_per_s\n1,100\n")
    assert main(["throughput", "point", str(path)]) == 3
    assert f"error: {path}: the curve has no per-GPU throughput" in capsys.readouterr().err


def test_point_errors_quote_many_long_group_labels_short(tmp_path: Path, capsys):
    rows = [f"1,100,8,{'w' * 500}{i}" for i in range(15)]
    path = tmp_path / "groups.csv"
    path.write_text("\n".join(["concurrency,output_tokens_per_s,gpu_count,workload", *rows]))
    assert main(["throughput", "point", str(path)]) == 3
    err = capsys.readouterr().err
    assert f"error: {path}: the curve mixes 15 model/hardware/workload groups" in err
    # each label cut to 80 characters of its repr (509 long), the first ten, then a count
    assert "w" * 100 not in err and "(509 characters)" in err and "... and 5 more;" in err


# --- 6. a NaN latency statistic in a vLLM JSON is refused as Infinity is -----------------------

VLLM_SPEC = SAMPLES / "vllm" / "er0080-vllm-bench-serve-v0.25.1-speculative-qwen-fp8.json"


@pytest.mark.parametrize("field", ["mean_tpot_ms", "p99_tpot_ms", "p99_ttft_ms"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["NaN", "Infinity"])
def test_a_non_finite_latency_statistic_is_refused_naming_the_field(tmp_path, field, value):
    import json

    record = json.loads(VLLM_SPEC.read_text())
    assert import_file(VLLM_SPEC).points["tpot_s_p99"].iloc[0] == record["p99_tpot_ms"] / 1000
    record[field] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))  # Python's json writes the bare NaN / Infinity tokens
    assert ("NaN" if value != value else "Infinity") in path.read_text()
    with pytest.raises(CurveError, match=f"field '{field}' is .*expected a finite number"):
        import_file(path)


def test_a_statistic_left_out_or_null_is_still_not_measured(tmp_path):
    import json

    record = json.loads(VLLM_SPEC.read_text())
    record["p99_tpot_ms"] = None
    del record["mean_tpot_ms"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    points = import_file(path).points
    assert points["tpot_s_p99"].isna().all() and points["tpot_s_mean"].isna().all()


# --- 7. `--gpus` is checked as the option's value, not blamed on the file -----------------------


@pytest.mark.parametrize("action", ["import", "point"])
@pytest.mark.parametrize(
    ("given", "shown"), [("2.5", "2.5"), ("0", "0"), ("-8", "-8"), ("100001", "100001")]
)
def test_a_gpu_count_that_is_not_one_is_the_options_error(action, given, shown, capsys):
    assert main(["throughput", action, str(VLLM_SPEC), "--gpus", given]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: --gpus = {shown}: expected a whole number of GPUs from 1 to 100,000"
    )
    assert str(VLLM_SPEC) not in err


def test_a_whole_gpu_count_is_taken(capsys):
    assert main(["throughput", "import", str(VLLM_SPEC), "--gpus", "8.0", "--show", "json"]) == 0
    assert '"gpu_count": 8' in capsys.readouterr().out


# --- 8. MLPerf's inferred flag said as what it is -----------------------------------------------


def test_the_inferred_flag_says_only_what_mlperf_sets_it_for():
    from econ.benchmarks import get_row, load_catalog, row_checks

    row = get_row("v6.1-ff14b795")
    # the v6.1 summary.json row as copied: 'inferred 1' beside number_of_nodes
    assert "number_of_nodes 18; inferred 1" in row["source"] and row["inferred_flag"] == 1
    checks = row_checks(row)
    assert (
        "MLPerf's results summary flags this row as inferred: the scenario it is listed under "
        "(Server) is not the one its performance log records; the flag does not say how the "
        "figure was obtained"
    ) in checks
    assert not any("not measured" in c for c in checks)
    catalog = load_catalog()
    interactive = catalog[
        (catalog["inferred_flag"] == 1) & (catalog["scenario_normalized"] == "Interactive")
    ].iloc[0]
    assert any("(LoadGen logs an Interactive run as Server)" in c for c in row_checks(interactive))


# --- 9. a file of several serving configurations narrowed to one --------------------------------

LLMD = SAMPLES / "vllm" / "nerdalert-llmd-llama3.2-3b-l40s-results.jsonl"


def _best_per_gpu(deployment: str) -> float:
    """The highest output rate of one deployment's runs over the 4 L40S of 'gpu: 4xNVIDIA_L40S',
    read from the file here."""
    import json

    runs = [json.loads(line) for line in LLMD.read_text().splitlines() if line.strip()]
    assert {r["gpu"] for r in runs} == {"4xNVIDIA_L40S"}
    return max(r["output_throughput"] for r in runs if r["deployment"] == deployment) / 4


@pytest.mark.parametrize("deployment", ["no-features", "base", "kvcache"])
def test_a_serving_configuration_narrows_the_curve(deployment):
    point = operating_point(import_file(LLMD), workload=deployment)
    assert point.tokens_per_s_per_gpu == pytest.approx(_best_per_gpu(deployment), rel=1e-12)
    assert f"deployment={deployment}," in point.group
    assert point.group.startswith("meta-llama/Llama-3.2-3B-Instruct | NVIDIA L40S | ")


def test_a_text_of_the_group_label_still_takes_every_configuration():
    point = operating_point(import_file(LLMD), workload="input_len=1000")
    best = max(_best_per_gpu(d) for d in ("no-features", "base", "kvcache"))
    assert point.tokens_per_s_per_gpu == pytest.approx(best, rel=1e-12)
    assert "deployment=" not in point.group


def test_a_text_of_nothing_lists_the_groups_and_the_configurations():
    from econ.throughput.operating_point import OperatingPointError

    with pytest.raises(OperatingPointError) as info:
        operating_point(import_file(LLMD), workload="no-such-thing")
    message = str(info.value)
    assert message.startswith("workload 'no-such-thing' matches 0 of the curve's groups")
    assert "(or of a serving configuration: " in message and "deployment=kvcache" in message


def test_a_scenario_reads_one_configuration(tmp_path: Path):
    import econ

    (tmp_path / LLMD.name).write_bytes(LLMD.read_bytes())
    text = (ROOT / "models" / "scenarios" / "llama2-70b-h200.toml").read_text()
    measured = f'measured = {{ curve = "{LLMD.name}", workload = "base" }}'
    path = tmp_path / "llmd.toml"
    path.write_text(text.replace("[throughput]\n", f"[throughput]\n{measured}\n", 1))
    warnings = econ.project(econ.load_scenario(path)).warnings[0]
    assert (
        f"throughput from measured curve {tmp_path / LLMD.name}: {_best_per_gpu('base'):,.1f} "
        "tokens/s per GPU with no latency limit (no SLO given)"
    ) in warnings


def test_a_file_of_per_gpu_rates_without_a_count_says_only_the_system_total_is_unknown(
    tmp_path: Path,
):
    """A file giving tokens/s per GPU and no GPU count was told "per-GPU throughput is unknown
    (pass --gpus N)" while the curve offered its per-GPU figure, and the app said to type a
    count that changes nothing a scenario reads."""
    from econ.ui.compute import app_text

    per_gpu = tmp_path / "pergpu.csv"
    per_gpu.write_text("output_tokens_per_s_per_gpu,concurrency\n1000,1\n2000,2\n")
    curve = import_file(per_gpu)
    assert list(curve.points["output_tokens_per_s_per_gpu"]) == [1000.0, 2000.0]
    (said,) = [w for w in curve.warnings if "GPUs served the run" in w]
    assert said == (
        "the file gives the output rate per GPU but not how many GPUs served the run: the "
        "system's total rate is unknown (pass --gpus N to have it)"
    )
    assert app_text(said).endswith(
        '(type the GPU count in the "GPUs that served it" box above the chart to have it)'
    )
    system = tmp_path / "system.csv"
    system.write_text("output_tokens_per_s,concurrency\n1000,1\n2000,2\n")
    assert any(
        "per-GPU throughput is unknown (pass --gpus N)" in w for w in import_file(system).warnings
    )
