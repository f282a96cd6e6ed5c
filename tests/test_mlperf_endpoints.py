"""MLPerf Endpoints: the endpoint client's result_summary.json (the real v6.1 NVIDIA run in
../shared, read in place) and the v1.0 submission tree (MLCommons' synthetic Apache-2.0 fixture in
tests/data/mlperf_endpoints), with every figure recomputed here from the files' own fields, and
every kind of bad input."""

from __future__ import annotations

import errno
import io
import json
import math
import os
import struct
import warnings
import zipfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.errors import InputError
from econ.throughput.importers import detect_format, import_file, import_files, mlperf_endpoints
from econ.throughput.importers._common import read_source
from econ.throughput.importers.mlperf_endpoints import (
    EndpointsError,
    accelerator_count,
    extract_submission_zip,
    provisioned_power_w,
)
from tests.endpoints_tree import build_submission

SUMMARY = "v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-performance-result_summary.json"
NS = 1e9


@pytest.fixture
def summary_path(shared_data) -> Path:
    return shared_data / "samples" / "mlperf-endpoints" / SUMMARY


@pytest.fixture
def summary(summary_path) -> dict:
    return json.loads(summary_path.read_text())


@pytest.fixture
def tree(tmp_path) -> Path:
    return build_submission(tmp_path / "submission")


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def pct(block: dict, level: float) -> float:
    """A percentile of a stat block by value, whatever the key spelling."""
    return next(v for k, v in block["percentiles"].items() if float(k) == level)


# --- a run's result_summary.json ----------------------------------------------------------------


def test_the_real_run_reads_its_own_fields(summary_path, summary):
    curve = import_file(summary_path)
    point = curve.points.iloc[0]
    window_s = summary["legacy_loadgen_window_duration_ns"] / NS
    total = summary["output_sequence_lengths"]["total"]
    assert point["output_tokens_per_s"] == pytest.approx(total / window_s, rel=1e-12)
    assert point["output_tokens_per_s"] == pytest.approx(summary["tps"], rel=1e-9)
    assert point["output_tokens_per_s"] == pytest.approx(1_175_890.22, abs=0.01)
    full = total / (summary["duration_ns"] / NS)
    assert point["output_tokens_per_s_full_duration"] == pytest.approx(full, rel=1e-12)
    assert round(full) == 981_183
    for block, prefix in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("latency", "e2e_s")):
        for stat, level in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99)):
            column = f"{prefix}_{stat}"
            if column in point:
                assert point[column] == pytest.approx(pct(summary[block], level) / NS, rel=1e-12)
        assert point[f"{prefix}_mean"] == pytest.approx(summary[block]["avg"] / NS, rel=1e-12)
    assert point["tokens_per_s_per_user"] == pytest.approx(NS / pct(summary["tpot"], 90))
    assert point["completed_requests"] == summary["n_samples_completed"]
    assert point["failed_requests"] == summary["n_samples_failed"]
    load = summary["run_config"]["load_pattern"]
    assert point["request_rate_per_s"] == load["target_qps"]
    assert math.isnan(point["concurrency"])  # a Poisson run has no target concurrency
    assert point["output_tokens_mean"] == summary["output_sequence_lengths"]["avg"]
    assert curve.provenance["format"] == "mlperf-endpoints"
    assert curve.provenance["throughput_window"] == "legacy_loadgen_window_duration_ns"
    assert curve.provenance["tool_version"] == summary["version"]
    assert "1000 / TPOT p90" in curve.provenance["tokens_per_s_per_user_definition"]
    said = [w for w in curve.warnings if "LoadGen window" in w]
    assert said and "1,175,890" in said[0] and "981,183" in said[0]
    # 72 GPUs from the file name (the v6.1 CSV row: 16,331.81 tokens/s per GPU), flagged
    assert point["gpu_count"] == 72
    assert point["output_tokens_per_s_per_gpu"] == pytest.approx(total / window_s / 72)
    assert any("file name" in w for w in curve.warnings)


def test_detection_reads_the_content_not_the_name(summary_path, tmp_path):
    copy = tmp_path / "anything.json"
    copy.write_bytes(summary_path.read_bytes())
    assert detect_format(read_source(copy)) == "mlperf-endpoints"


def test_the_duration_window_when_no_loadgen_window(summary, tmp_path):
    summary["legacy_loadgen_window_duration_ns"] = None
    summary["tps"] = summary["output_sequence_lengths"]["total"] / (summary["duration_ns"] / NS)
    curve = import_file(write(tmp_path / "r.json", summary), gpu_count=72)
    assert curve.points["output_tokens_per_s"].iloc[0] == pytest.approx(summary["tps"])
    assert curve.provenance["throughput_window"] == "duration_ns"
    assert curve.provenance["gpu_count_basis"] == "given by the user"


def test_a_tps_that_matches_no_window_is_warned(summary, tmp_path):
    summary["tps"] = summary["tps"] * 1.5
    curve = import_file(write(tmp_path / "r.json", summary))
    assert any("field tps" in w and "matches neither" in w for w in curve.warnings)


def test_percentile_keys_spelled_99_or_99_0_read_alike(summary, tmp_path):
    spelled = json.loads(json.dumps(summary))
    for block in ("ttft", "tpot", "latency"):
        spelled[block]["percentiles"] = {
            f"{float(k):g}": v for k, v in summary[block]["percentiles"].items()
        }
    assert "99" in spelled["tpot"]["percentiles"]
    a = import_file(write(tmp_path / "a.json", summary)).points
    b = import_file(write(tmp_path / "b.json", spelled)).points
    for column in ("ttft_s_p99", "tpot_s_p90", "e2e_s_p95", "tokens_per_s_per_user"):
        assert a[column].iloc[0] == b[column].iloc[0]


def test_the_same_percentile_twice_with_different_values_is_refused(summary, tmp_path):
    summary["ttft"]["percentiles"]["99"] = 1.0
    with pytest.raises(EndpointsError, match=r"ttft.percentiles gives percentile 99"):
        import_file(write(tmp_path / "r.json", summary))


def test_failed_samples_are_counted_and_warned(summary, tmp_path):
    summary["n_samples_failed"] = 600
    summary["n_samples_completed"] = summary["n_samples_issued"] - 600
    curve = import_file(write(tmp_path / "r.json", summary))
    assert curve.points["failed_requests"].iloc[0] == 600
    assert any("600 of 600000 samples failed (0.10%)" in w for w in curve.warnings)
    summary["n_samples_completed"] -= 100
    curve = import_file(write(tmp_path / "r2.json", summary))
    assert any(
        "100 of 600000 issued samples neither completed nor failed" in w for w in curve.warnings
    )


def test_a_concurrency_run_takes_its_concurrency_from_the_load_pattern(summary, tmp_path):
    summary["run_config"]["load_pattern"] = {"type": "concurrency", "target_concurrency": 50_000}
    point = import_file(write(tmp_path / "r.json", summary)).points.iloc[0]
    assert point["concurrency"] == 50_000
    assert point["tokens_per_s_per_user_by_concurrency"] == pytest.approx(
        point["output_tokens_per_s"] / 50_000
    )


def test_an_interrupted_run_is_refused_unless_allowed(summary, tmp_path):
    summary["state"], summary["complete"] = "interrupted", False
    path = write(tmp_path / "run.json", summary)
    with pytest.raises(EndpointsError, match=r"run\.json: field state.*allow_incomplete"):
        import_file(path)
    curve = import_file(path, allow_incomplete=True)
    assert any("did not finish" in w for w in curve.warnings)


BAD_SUMMARIES = {
    "truncated": (lambda s: json.dumps(s)[:500], "invalid or truncated JSON at line 1"),
    "no tokens": (
        lambda s: json.dumps({**s, "output_sequence_lengths": {"avg": 1.0}}),
        "output_sequence_lengths.total is missing",
    ),
    "NaN": (lambda s: json.dumps(s).replace('"qps": 310', '"qps": NaN, "x": 310'), "non-finite"),
    "Infinity": (
        lambda s: json.dumps(s).replace('"qps": 310', '"qps": -Infinity, "x": 310'),
        "non-finite",
    ),
    "overflow": (
        lambda s: json.dumps(s).replace('"qps": 310', '"qps": 1e999, "x": 310'),
        "non-finite",
    ),
    "deep": (
        lambda s: json.dumps({**s, "extra": None}).replace("null", "[" * 5000 + "]" * 5000),
        "nested too deeply",
    ),
    "string duration": (
        lambda s: json.dumps({**s, "duration_ns": "2318"}),
        "field duration_ns is a str; expected a number",
    ),
    "bool count": (
        lambda s: json.dumps({**s, "n_samples_completed": True}),
        "field n_samples_completed is a bool",
    ),
    "zero completed": (
        lambda s: json.dumps({**s, "n_samples_completed": 0}),
        "n_samples_completed is 0",
    ),
    "more completed than issued": (
        lambda s: json.dumps({**s, "n_samples_completed": 600001}),
        "exceeds n_samples_issued",
    ),
    "unknown state": (lambda s: json.dumps({**s, "state": "done"}), "field state is 'done'"),
    "negative duration": (
        lambda s: json.dumps({**s, "duration_ns": -5}),
        "field duration_ns is -5; expected a positive number",
    ),
    "no tpot p90": (
        lambda s: json.dumps({**s, "tpot": {"avg": 1e7, "percentiles": {"50": 1e7}}}),
        "needs tpot.percentiles 90",
    ),
    "a list": (lambda s: json.dumps([s]), "the JSON is a list; expected an object"),
}


@pytest.mark.parametrize("case", BAD_SUMMARIES)
def test_bad_summaries_are_refused_naming_file_and_field(summary, tmp_path, case):
    make, reason = BAD_SUMMARIES[case]
    path = tmp_path / "bad_summary.json"
    path.write_text(make(summary), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        import_file(path, fmt="mlperf-endpoints")
    assert reason in str(raised.value)
    assert "bad_summary.json" in str(raised.value)
    assert '{"' not in str(raised.value)  # names fields and values, never quotes the content


def test_another_tools_file_is_not_read_as_an_endpoints_summary(tmp_path):
    vllm = write(tmp_path / "vllm.json", {"output_throughput": 10.0, "mean_ttft_ms": 5.0})
    with pytest.raises(EndpointsError, match="not an MLPerf Endpoints result_summary.json"):
        import_file(vllm, fmt="mlperf-endpoints")


# --- the submission tree -----------------------------------------------------------------------


def test_the_submission_tree_is_one_curve_with_a_point_per_concurrency(tree):
    curve = import_files([tree])
    points = curve.points
    results = tree / "results" / "system_a" / "gpt-oss-120b"
    folders = sorted(results.iterdir(), key=lambda p: int(p.name[1:]))
    assert list(points["concurrency"]) == [int(p.name[1:]) for p in folders]
    power = json.loads((tree / "results" / "system_a" / "system_power.json").read_text())
    node_set = power["node_sets"][0]
    parts = node_set["components"]
    per_node_w = (
        parts["cpu"]["count_per_node"] * parts["cpu"]["tdp_per_unit"]["value_w"]
        + parts["accelerator"]["count_per_node"] * parts["accelerator"]["tdp_per_unit"]["value_w"]
        + parts["scale_up_network"]["switch_count"]
        * parts["scale_up_network"]["tdp_per_switch"]["value_w"]
    )
    assert power["cooling"] == "air"
    power_w = node_set["nodes_provisioned"] * per_node_w * 1.50  # §4.5.2: air adds 50%
    for (_, row), folder in zip(points.iterrows(), folders, strict=True):
        summary = json.loads((folder / "result_summary.json").read_text())
        desc = json.loads((folder / "system_desc.json").read_text())
        point = yaml.safe_load((folder / "point.yaml").read_text())
        gpus = sum(
            n["number_of_nodes"] * sum(a["accelerators_per_node"] for a in n["accelerator_info"])
            for n in desc["node_types"]
        )
        system_tps = summary["output_sequence_lengths"]["total"] / (summary["duration_ns"] / NS)
        assert system_tps == pytest.approx(summary["system_tps"], abs=5e-5)  # stated to 4 dp
        assert row["output_tokens_per_s"] == pytest.approx(system_tps, rel=1e-12)
        assert row["gpu_count"] == gpus == 8
        assert row["output_tokens_per_s_per_gpu"] == pytest.approx(system_tps / gpus)
        v1 = 1000.0 / (pct(summary["tpot"], 90) / 1e6)
        assert row["tokens_per_s_per_user"] == pytest.approx(v1)
        assert row["tokens_per_s_per_user_p90"] == pytest.approx(summary["tps_per_user"], abs=5e-5)
        assert row["tokens_per_s_per_user_by_concurrency"] == pytest.approx(
            system_tps / point["concurrency"]
        )
        assert row["ttft_s_p90"] == pytest.approx(pct(summary["ttft"], 90) / NS)
        assert row["ttft_s_p95"] == pytest.approx(pct(summary["ttft"], 95) / NS)
        assert row["provisioned_power_kw"] == pytest.approx(power_w / 1000)
        assert row["output_tokens_per_s_per_kw_provisioned"] == pytest.approx(
            system_tps / (power_w / 1000)
        )
        assert row["j_per_output_token_provisioned"] == pytest.approx(power_w / system_tps)
        assert row["model"] == point["model_name"]
        assert row["source_file"].endswith(f"{folder.name}/result_summary.json")
        # the checker's derived tps_utilization: system_tps / the curve's highest
        assert system_tps / points["output_tokens_per_s"].max() == pytest.approx(
            desc["tps_utilization"], abs=5e-6
        )
    assert power_w == 14_700.0
    prov = curve.provenance
    assert prov["format"] == "mlperf-endpoints-submission"
    assert prov["throughput_window"] == "duration_ns"
    assert "not measured" in prov["power_basis"]
    assert prov["curve_reading"] == "step"
    assert any("provisioned power" in w and "not measured" in w for w in curve.warnings)


def test_the_tree_reads_alike_from_results_and_the_system_folder(tree):
    whole = import_files([tree]).points
    for root in (tree / "results", tree / "results" / "system_a"):
        points = import_files([root]).points
        assert list(points["output_tokens_per_s_per_kw_provisioned"]) == pytest.approx(
            list(whole["output_tokens_per_s_per_kw_provisioned"])
        )


def test_power_outside_the_folder_given_is_not_read(tree):
    curve = import_files([tree / "results" / "system_a" / "gpt-oss-120b"])
    assert curve.points["provisioned_power_kw"].isna().all()
    assert any("outside the folder given" in w for w in curve.warnings)


def test_the_v0_7_definition_of_tokens_per_user(tree):
    from econ.throughput.importers.mlperf_endpoints import import_submission

    curve = import_submission(tree, per_user="v0.7")
    points = curve.points
    assert list(points["tokens_per_s_per_user"]) == list(
        points["tokens_per_s_per_user_by_concurrency"]
    )
    assert "v0.7" in curve.provenance["tokens_per_s_per_user_definition"]


def test_a_point_without_its_summary_names_the_folder(tree):
    (tree / "results/system_a/gpt-oss-120b/r64/result_summary.json").unlink()
    with pytest.raises(EndpointsError, match=r"r64: no result_summary.json beside point.yaml"):
        import_files([tree])


def test_an_interrupted_point_is_refused_unless_allowed(tree):
    path = tree / "results/system_a/gpt-oss-120b/r16/result_summary.json"
    data = json.loads(path.read_text())
    write(path, {**data, "state": "interrupted"})
    with pytest.raises(EndpointsError, match=r"r16/result_summary.json: field state"):
        import_files([tree])
    assert len(import_files([tree], allow_incomplete=True).points) == 7


def test_a_point_whose_load_pattern_contradicts_point_yaml_is_refused(tree):
    path = tree / "results/system_a/gpt-oss-120b/r16/result_summary.json"
    data = json.loads(path.read_text())
    write(path, {**data, "run_config": {"load_pattern": {"target_concurrency": 32}}})
    with pytest.raises(
        EndpointsError, match="target_concurrency is 32 but the point declares concurrency 16"
    ):
        import_files([tree])


def test_bad_yaml_and_an_empty_folder_are_refused(tree, tmp_path):
    (tree / "results/system_a/gpt-oss-120b/r4/point.yaml").write_text("concurrency: [4\n")
    with pytest.raises(EndpointsError, match=r"r4/point.yaml: invalid YAML at line"):
        import_files([tree])
    (tree / "results/system_a/gpt-oss-120b/r4/point.yaml").write_text(
        "concurrency: 4\nx: " + "[" * 5000 + "]" * 5000 + "\n"
    )
    with pytest.raises(
        EndpointsError, match=r"r4/point.yaml: the YAML nests more than 32 levels .*at line 2 "
    ):
        import_files([tree])
    desc = tree / "results/system_a/gpt-oss-120b/r16/system_desc.json"
    desc.write_text('{"node_types": ' + "[" * 5000 + "]" * 5000 + "}")
    (tree / "results/system_a/gpt-oss-120b/r4/point.yaml").write_text("concurrency: 4\n")
    with pytest.raises(
        EndpointsError, match=r"r16/system_desc.json: the JSON is nested too deeply"
    ):
        import_files([tree])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EndpointsError, match="no measurement point"):
        import_files([empty])


def test_yaml_aliases_are_refused_before_they_expand(tree):
    """A "billion laughs": each level lists the one before ten times. Here 10^4 copies; at 7 levels
    a 1.6 KB file expands to gigabytes when model_name is turned into text."""
    path = tree / "results/system_a/gpt-oss-120b/r4/point.yaml"
    levels = ['a0: &a0 "lol"'] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 5)
    ]
    path.write_text("\n".join(levels) + "\nconcurrency: 4\nmodel_name: *a4\n")
    with pytest.raises(
        EndpointsError, match=r"r4/point.yaml: YAML aliases are not allowed \(an alias at line 2"
    ):
        import_files([tree])


def test_a_named_field_must_be_short_plain_text(tree):
    path = tree / "results/system_a/gpt-oss-120b/r4/point.yaml"
    point = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**point, "model_name": ["a", "b"]}))
    with pytest.raises(
        EndpointsError, match=r"r4/point.yaml: field model_name is a list; expected a text"
    ):
        import_files([tree])
    path.write_text(yaml.safe_dump({**point, "model_name": "m" * 1001}))
    with pytest.raises(
        EndpointsError, match=r"r4/point.yaml: field model_name is 1,001 characters long"
    ):
        import_files([tree])
    path.write_text(yaml.safe_dump({**point, "model_name": "m" * 1000}))
    assert "m" * 1000 in set(import_files([tree]).points["model"])


def test_an_integer_too_long_to_convert_is_an_endpoints_error(tree):
    path = tree / "results/system_a/gpt-oss-120b/r4/point.yaml"
    path.write_text("concurrency: " + "4" * 5000 + "\n")
    with pytest.raises(
        EndpointsError, match=r"r4/point.yaml: a value cannot be read \(Exceeds the limit"
    ):
        import_files([tree])


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_links_in_the_tree_are_not_followed(tree, tmp_path):
    secret = write(tmp_path / "elsewhere.json", {"n_samples_issued": 1})
    target = tree / "results/system_a/gpt-oss-120b/r4/result_summary.json"
    target.unlink()
    target.symlink_to(secret)
    with pytest.raises(EndpointsError, match="is a symbolic link"):
        import_files([tree])


def test_the_partial_tree_in_shared_is_refused_for_its_missing_summaries(shared_data):
    root = shared_data / "samples" / "mlperf-endpoints" / "synthetic-submission"
    with pytest.raises(EndpointsError, match=r"no (result_summary|system_desc).json beside"):
        import_files([root])


# --- accelerators and provisioned power --------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 64), st.lists(st.integers(0, 16), min_size=1, max_size=3)),
        min_size=1,
        max_size=4,
    )
)
def test_accelerators_are_nodes_times_accelerators_per_node_summed(node_types):
    desc = {
        "node_types": [
            {"number_of_nodes": n, "accelerator_info": [{"accelerators_per_node": a} for a in acc]}
            for n, acc in node_types
        ]
    }
    expected = sum(n * sum(acc) for n, acc in node_types)
    if expected == 0:
        with pytest.raises(EndpointsError, match="no accelerators"):
            accelerator_count(desc, "d.json")
    else:
        assert accelerator_count(desc, "d.json")[0] == expected


def base_power(cooling="liquid"):
    def sourced(watts):
        return {"value_w": watts, "source_type": "vendor_spec", "source": "https://x"}

    return {
        "cooling": cooling,
        "node_sets": [
            {
                "nodes_provisioned": 18,
                "power_method": "component_sum",
                "components": {
                    "cpu": {"count_per_node": 2, "tdp_per_unit": sourced(500)},
                    "accelerator": {"count_per_node": 4, "tdp_per_unit": sourced(1200)},
                    "scale_up_network": {"method": "none"},
                },
            }
        ],
        "scale_out": {"present": False},
    }


def test_liquid_cooling_adds_30_percent_and_declared_power_governs():
    watts, basis = provisioned_power_w(base_power("liquid"), "p.json")
    assert watts == pytest.approx(18 * (2 * 500 + 4 * 1200) * 1.30)
    assert "liquid" in basis
    declared = {**base_power(), "declared_provisioned_power": {"value_kw": 132.0}}
    assert provisioned_power_w(declared, "p.json")[0] == 132_000.0


def test_published_rack_power_scales_by_nodes_and_switches_add():
    power = base_power()
    power["node_sets"].append(
        {
            "nodes_provisioned": 9,
            "power_method": "node_scaling",
            "nodes_in_published_rack": 18,
            "published_power": {"value_kw": 120.0},
        }
    )
    power["scale_out"] = {
        "present": True,
        "switches": [{"count": 2, "power_per_switch": {"value_w": 1500}}],
    }
    watts, _ = provisioned_power_w(power, "p.json")
    assert watts == pytest.approx(18 * 5800 * 1.30 + 120_000 * 9 / 18 + 2 * 1500)


def test_a_bandwidth_estimated_scale_up_network():
    power = base_power()
    power["node_sets"][0]["components"]["scale_up_network"] = {
        "method": "bandwidth_estimate",
        "aggregate_bandwidth_tbps": 14.4,
        "energy_per_bit_pj": {"value_pj": 5.0},
    }
    watts, _ = provisioned_power_w(power, "p.json")
    # Appendix C's worked example: 14.4 TB/s x 8 bit/B x 5 pJ/bit = 576 W per node
    assert watts == pytest.approx(18 * (5800 + 576) * 1.30)


def test_a_figure_left_to_mlcommons_defaults_gives_no_power():
    power = base_power()
    del power["node_sets"][0]["components"]["accelerator"]["tdp_per_unit"]
    watts, why = provisioned_power_w(power, "p.json")
    assert math.isnan(watts)
    assert "accelerator.tdp_per_unit is absent" in why and "Appendix D" in why


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda p: p.update(cooling="immersion"), "field cooling is immersion"),
        (lambda p: p["node_sets"][0].update(power_method="guess"), "power_method is guess"),
        (lambda p: p.update(node_sets=[]), "node_sets is missing or empty"),
        (
            lambda p: p["node_sets"][0]["components"]["cpu"].update(count_per_node=1.5),
            "count_per_node is 1.5; expected a whole number",
        ),
    ],
)
def test_bad_power_descriptors_are_refused(change, reason):
    power = base_power()
    change(power)
    with pytest.raises(EndpointsError, match=reason):
        provisioned_power_w(power, "system_power.json")


# --- a zipped tree (the app's upload) ------------------------------------------------------------


def zip_of(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, content in entries:
            archive.writestr(info, content)
    return buffer.getvalue()


def test_a_zipped_tree_reads_like_the_folder(tree, tmp_path):
    entries = [
        (p.relative_to(tree).as_posix(), p.read_bytes()) for p in tree.rglob("*") if p.is_file()
    ]
    dest = tmp_path / "unpacked"
    dest.mkdir()
    extract_submission_zip(zip_of(entries), dest)
    assert sorted(p.name for p in dest.iterdir()) == sorted({p.split("/")[0] for p, _ in entries})
    a, b = import_files([tree]).points, import_files([dest]).points
    assert list(a["output_tokens_per_s_per_kw_provisioned"]) == list(
        b["output_tokens_per_s_per_kw_provisioned"]
    )


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ("/etc/passwd", "points outside"),
        ("a/../../b.json", "points outside"),
        ("C:/x.json", "points outside"),
    ],
)
def test_zip_members_outside_the_folder_are_refused(tmp_path, member, reason):
    with pytest.raises(EndpointsError, match=reason):
        extract_submission_zip(zip_of([(member, b"{}")]), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_zip_links_and_oversized_contents_are_refused(tmp_path, monkeypatch):
    link = zipfile.ZipInfo("results/x/result_summary.json")
    link.external_attr = (0o120777) << 16  # a symbolic link
    with pytest.raises(EndpointsError, match="is a link or special file"):
        extract_submission_zip(zip_of([(link, b"/etc/passwd")]), tmp_path)
    monkeypatch.setattr(mlperf_endpoints, "MAX_ZIP_BYTES", 1000)
    big = bytes(range(256)) * 8  # incompressible enough to pass the ratio check
    with pytest.raises(EndpointsError, match="more than 0 MB uncompressed"):
        extract_submission_zip(zip_of([("a.json", big)]), tmp_path)


def built_zip(entries, compression=zipfile.ZIP_DEFLATED, flags=None) -> bytes:
    """A zip of (name, bytes) entries; `flags` maps a member to general purpose flag bits set in
    its central directory entry (zipfile clears them while writing)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of a duplicate name
        with zipfile.ZipFile(buffer, "w", compression) as archive:
            for member, content in entries:
                archive.writestr(member, content)
            for info in archive.infolist():
                info.flag_bits |= (flags or {}).get(info.filename, 0)
    return buffer.getvalue()


def patch_headers(data: bytes, member: str, **fields: int) -> bytes:
    """`data` with 2- or 4-byte fields of `member`'s local header and central directory entry
    set: method (both), file_size (central only), by APPNOTE 4.3.7 and 4.3.12."""
    out = bytearray(data)
    local = {"method": (8, "<H")}
    central = {"method": (10, "<H"), "file_size": (24, "<I")}
    for signature, layout, name_at in ((b"PK\x03\x04", local, 30), (b"PK\x01\x02", central, 46)):
        at = out.find(signature)
        while at >= 0:
            if out[at + name_at : at + name_at + len(member)] == member.encode():
                for field, value in fields.items():
                    if field in layout:
                        offset, fmt = layout[field]
                        struct.pack_into(fmt, out, at + offset, value)
            at = out.find(signature, at + 4)
    return bytes(out)


def unzip_refused(content: bytes, dest: Path, match: str) -> str:
    """The EndpointsError message of unpacking `content` into `dest`, which must stay empty."""
    dest.mkdir(exist_ok=True)
    with pytest.raises(EndpointsError, match=match) as caught:
        extract_submission_zip(content, dest, "sub.zip")
    assert list(dest.iterdir()) == [], "a refused archive left files behind"
    assert "Traceback" not in str(caught.value)
    return str(caught.value)


PLAIN = ("results/a.json", b'{"a": 1}')
INCOMPRESSIBLE = bytes(range(256)) * 3


def test_an_encrypted_member_is_refused_before_anything_is_written(tmp_path):
    content = built_zip([PLAIN, ("results/b.json", b"{}")], flags={"results/b.json": 0x1})
    unzip_refused(content, tmp_path / "out", r"^sub\.zip: member 'results/b\.json' is encrypted")


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        ([("r/a", b"x"), ("r/a/b.json", b"{}")], "member 'r/a' is both a file and a folder"),
        ([("r/a/b.json", b"{}"), ("r/a", b"x")], "member 'r/a' is both a file and a folder"),
        ([("r/a/", b""), ("r/a", b"x")], "member 'r/a' is both a file and a folder"),
        ([("r/a", b"x"), ("r/a/", b"")], "member 'r/a/' is both a file and a folder"),
        ([PLAIN, ("results/a.json", b"{}")], "member 'results/a.json' appears twice"),
        ([PLAIN, ("results/./a.json", b"{}")], r"member 'results/\./a.json' appears twice"),
        ([("r/", b""), PLAIN, ("r/", b"")], "member 'r/' appears twice"),
    ],
)
def test_a_path_that_is_two_things_is_refused(tmp_path, entries, reason):
    unzip_refused(built_zip(entries), tmp_path / "out", f"^sub\\.zip: {reason}")


def test_names_and_paths_too_long_for_the_file_system_are_refused(tmp_path):
    long_name = "results/" + "x" * 256 + ".json"
    message = unzip_refused(
        built_zip([PLAIN, (long_name, b"{}")]), tmp_path / "a", "name of 261 bytes"
    )
    assert "at most 255 bytes" in message and len(message) < 300  # the name is cut
    deep = "/".join(["d" * 200] * 25) + "/a.json"
    message = unzip_refused(
        built_zip([PLAIN, (deep, b"{}")]), tmp_path / "b", r"has a path of 5,031 bytes"
    )
    assert "5,031 characters" in message and len(message) < 300
    multibyte = "results/" + "é" * 128  # 256 bytes in UTF-8
    unzip_refused(built_zip([(multibyte, b"{}")]), tmp_path / "c", "name of 256 bytes")


def test_outside_paths_and_links_are_refused_before_anything_is_written(tmp_path):
    link = zipfile.ZipInfo("results/x/result_summary.json")
    link.external_attr = (0o120777) << 16  # a symbolic link
    unzip_refused(built_zip([PLAIN, (link, b"/etc/passwd")]), tmp_path / "a", "is a link")
    unzip_refused(
        built_zip([PLAIN, ("results/../../b.json", b"{}")]), tmp_path / "b", "points outside"
    )


def test_declared_sizes_beyond_the_bound_are_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(mlperf_endpoints, "MAX_ZIP_BYTES", 1000)
    content = built_zip([("a.json", INCOMPRESSIBLE), ("b.json", INCOMPRESSIBLE)])
    unzip_refused(
        content, tmp_path / "out", r"more than 0 MB uncompressed \(as its members declare"
    )
    monkeypatch.setattr(mlperf_endpoints, "MAX_ZIP_MEMBERS", 2)
    content = built_zip([("a", b"1"), ("b", b"2"), ("c", b"3")])
    unzip_refused(content, tmp_path / "count", "3 members; a submission archive holds at most 2")


def test_a_member_giving_more_than_it_declares_is_refused(tmp_path):
    content = patch_headers(built_zip([PLAIN, ("b.json", INCOMPRESSIBLE)]), "b.json", file_size=100)
    assert zipfile.ZipFile(io.BytesIO(content)).getinfo("b.json").file_size == 100
    unzip_refused(content, tmp_path / "out", r"^sub\.zip: member 'b\.json' is damaged")


def test_a_bad_crc_is_refused_naming_the_member(tmp_path):
    data = b'{"concurrency": 4, "model_name": "m"}'
    content = bytearray(built_zip([PLAIN, ("r/point.yaml", data)], zipfile.ZIP_STORED))
    at = content.find(data)
    content[at + 5] ^= 0xFF
    message = unzip_refused(
        bytes(content), tmp_path / "out", r"^sub\.zip: member 'r/point\.yaml' is damaged"
    )
    assert "concurrency" not in message  # the member's content is never quoted


def test_damaged_compressed_data_is_refused_naming_the_member(tmp_path):
    content = bytearray(built_zip([PLAIN, ("b.json", INCOMPRESSIBLE)]))
    info = zipfile.ZipFile(io.BytesIO(bytes(content))).getinfo("b.json")
    start = info.header_offset + 30 + len("b.json")
    content[start] = 0xFF  # deflate block type 3: reserved (an error)
    unzip_refused(bytes(content), tmp_path / "out", r"^sub\.zip: member 'b\.json' is damaged")


def test_an_unsupported_compression_is_refused_naming_the_member(tmp_path):
    content = patch_headers(
        built_zip([PLAIN, ("b.json", b"{}")], zipfile.ZIP_STORED), "b.json", method=99
    )
    unzip_refused(
        content, tmp_path / "a", r"^sub\.zip: member 'b\.json' is compressed with method 99"
    )
    # a member asking for a feature zipfile lacks (flag bit 5: compressed patched data)
    content = built_zip([PLAIN, ("b.json", b"{}")], flags={"b.json": 0x20})
    unzip_refused(content, tmp_path / "b", r"member 'b\.json' uses a zip feature econ cannot")


def test_a_missing_compression_module_is_refused_naming_the_member(tmp_path, monkeypatch):
    content = built_zip([PLAIN, ("b.json", b"{}" * 20)], zipfile.ZIP_BZIP2)
    monkeypatch.setattr(zipfile, "bz2", None)  # zipfile raises RuntimeError without bz2
    unzip_refused(content, tmp_path / "out", r"^sub\.zip: member 'results/a\.json' cannot be read")


def test_a_file_system_error_names_the_member_and_leaves_nothing(tmp_path, monkeypatch):
    def full_disk(path, mode="r", *args, **kwargs):
        if str(path).endswith("b.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(mlperf_endpoints, "open", full_disk, raising=False)
    message = unzip_refused(
        built_zip([PLAIN, ("results/b.json", b"{}")]),
        tmp_path / "out",
        r"^sub\.zip: member 'results/b\.json' could not be unpacked \(No space left on device\)$",
    )
    assert str(tmp_path) not in message  # no server path


def test_a_zip_given_to_the_command_line_exits_3_without_a_traceback(tmp_path, capsys):
    from econ.cli import main

    path = tmp_path / "sub.zip"
    path.write_bytes(built_zip([PLAIN], flags={PLAIN[0]: 0x1}))
    assert main(["throughput", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert "sub.zip" in err and "encrypted" in err and "Traceback" not in err


def test_a_bad_file_inside_a_zip_is_named_inside_the_zip(tree, tmp_path, capsys):
    """Found by review: the message named the temporary folder the zip was unpacked into (a path
    the user never had, gone by the time it was read)."""
    from econ.cli import main

    summary = next(tree.rglob("result_summary.json"))
    summary.write_text("{ truncated")
    entries = [
        (p.relative_to(tree).as_posix(), p.read_bytes()) for p in tree.rglob("*") if p.is_file()
    ]
    path = tmp_path / "sub.zip"
    path.write_bytes(zip_of(entries))
    assert main(["throughput", "import", str(path)]) == 3
    err = capsys.readouterr().err
    inside = summary.relative_to(tree).as_posix()
    assert f"{path}: {inside}" in err, err
    assert "econ-zip-" not in err and "Traceback" not in err


def test_the_command_line_imports_a_zipped_tree_as_the_folder(tree, tmp_path, capsys):
    """`econ throughput import sub.zip` reads what the app's upload reads: the zipped tree,
    unpacked with the same guards; the provenance names the zip and its SHA-256."""
    import hashlib

    from econ.cli import main

    entries = [
        (p.relative_to(tree).as_posix(), p.read_bytes()) for p in tree.rglob("*") if p.is_file()
    ]
    path = tmp_path / "sub.zip"
    path.write_bytes(zip_of(entries))
    assert main(["throughput", "import", str(path), "--out", str(tmp_path / "c.csv")]) == 0
    zipped, folder = import_files([path]), import_files([tree])
    assert zipped.points["output_tokens_per_s"].tolist() == (
        folder.points["output_tokens_per_s"].tolist()
    )
    assert zipped.provenance["file"] == str(path)
    assert zipped.provenance["zip_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert zipped.provenance["file_sha256"] == folder.provenance["file_sha256"]


def test_the_results_layout_gives_benchmark_scenario_and_gpus(shared_data, tmp_path):
    samples = shared_data / "samples" / "mlperf-endpoints"
    platform = "VR-NVL72_VR-288GB_aarch64x72_TRT"
    run = tmp_path / "closed/NVIDIA/results" / platform / "deepseek-r1/Server/performance"
    run.mkdir(parents=True)
    (run / "result_summary.json").write_bytes((samples / SUMMARY).read_bytes())
    systems = tmp_path / "closed/NVIDIA/systems"
    systems.mkdir()
    system = samples / f"v6.1-nvidia-systems-{platform}.json"
    (systems / f"{platform}.json").write_bytes(system.read_bytes())
    desc = json.loads(system.read_text())
    curve = import_file(run / "result_summary.json")
    point = curve.points.iloc[0]
    assert point["gpu_count"] == desc["number_of_nodes"] * desc["accelerators_per_node"] == 72
    assert curve.provenance["model"] == "deepseek-r1"
    assert curve.provenance["hardware"] == desc["system_name"]
    assert point["workload"] == "scenario=Server"
    assert "number_of_nodes × accelerators_per_node" in curve.provenance["gpu_count_basis"]
    assert not any("file name" in w for w in curve.warnings)
