"""Operating points on MLPerf Endpoints curves: the step-function reading (measured points only,
Endpoints rules v1.0 §5.2) checked against a brute-force search over the measured points, the
interpolation asked for with --interpolate, and the CLI in-process."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.cli import main
from econ.throughput.importers import import_files
from econ.throughput.operating_point import (
    OperatingPointError,
    operating_point,
    operating_points,
    step_position,
)
from tests.conftest import ROOT
from tests.endpoints_tree import build_submission

NS = 1e9


def vary_tpot(root):
    """Give the synthetic points a TPOT that grows with load (the fixture's is the same at all)."""
    for summary in sorted(root.glob("results/*/*/r*/result_summary.json")):
        data = json.loads(summary.read_text())
        concurrency = int(summary.parent.name[1:])
        scale = (concurrency / 4) ** 0.35
        data["tpot"]["percentiles"] = {k: v * scale for k, v in data["tpot"]["percentiles"].items()}
        data["tpot"]["total"] *= scale
        data.pop("tps_per_user", None)
        summary.write_text(json.dumps(data))
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return vary_tpot(build_submission(tmp_path_factory.mktemp("endpoints") / "submission"))


@pytest.fixture(scope="module")
def curve(tree):
    return import_files([tree])


def measured(tree):
    """(per-GPU, system tokens/s, TTFT p90, TTFT p95, TPOT p90, per user) of every point, from the files."""
    rows = []
    for summary in tree.glob("results/*/*/r*/result_summary.json"):
        data = json.loads(summary.read_text())
        desc = json.loads((summary.parent / "system_desc.json").read_text())
        gpus = sum(
            n["number_of_nodes"] * sum(a["accelerators_per_node"] for a in n["accelerator_info"])
            for n in desc["node_types"]
        )
        tps = data["output_sequence_lengths"]["total"] / (data["duration_ns"] / NS)
        p = {float(k): v / NS for k, v in data["ttft"]["percentiles"].items()}
        tpot90 = {float(k): v for k, v in data["tpot"]["percentiles"].items()}[90.0] / NS
        rows.append((tps / gpus, tps, p[90.0], p[95.0], tpot90, 1.0 / tpot90))
    return rows


def brute_force(tree, ttft_p90=None, ttft_p95=None, tpot_p90=None, min_user=None):
    ok = [
        r
        for r in measured(tree)
        if (ttft_p90 is None or r[2] <= ttft_p90)
        and (ttft_p95 is None or r[3] <= ttft_p95)
        and (tpot_p90 is None or r[4] <= tpot_p90)
        and (min_user is None or r[5] >= min_user)
    ]
    return max(ok) if ok else None


def limits(ttft_p90=None, ttft_p95=None, tpot_p90=None):
    named = {"ttft_s_p90": ttft_p90, "ttft_s_p95": ttft_p95, "tpot_s_p90": tpot_p90}
    return {k: v for k, v in named.items() if v is not None}


def test_the_curve_reads_in_steps_by_default(tree, curve):
    point = operating_point(curve, latency_limits={"ttft_s_p90": 1.0})
    best = brute_force(tree, ttft_p90=1.0)
    assert point.tokens_per_s_per_gpu == pytest.approx(best[0], rel=1e-12)
    assert point.values["output_tokens_per_s"] == pytest.approx(best[1], rel=1e-12)
    assert not point.interpolated
    assert point.bracket[0] == point.bracket[1]
    assert point.values["concurrency"] == 128
    assert point.binding == "ttft_s_p90"  # the next point (concurrency 512) breaks it
    assert point.values["j_per_output_token_provisioned"] == pytest.approx(14_700 / best[1])
    assert any("step reading" in w for w in point.warnings)


@settings(max_examples=40, deadline=None)
@given(
    ttft=st.one_of(st.none(), st.floats(0.1, 500.0)),
    tpot=st.one_of(st.none(), st.floats(0.004, 0.05)),
    user=st.one_of(st.none(), st.floats(20.0, 250.0)),
)
def test_the_step_point_is_the_best_measured_point_meeting_the_slo(tree, curve, ttft, tpot, user):
    best = brute_force(tree, ttft_p90=ttft, tpot_p90=tpot, min_user=user)
    if best is None:
        with pytest.raises(OperatingPointError):
            operating_point(
                curve, min_tokens_per_s_per_user=user, latency_limits=limits(ttft, tpot_p90=tpot)
            )
        return
    point = operating_point(
        curve, min_tokens_per_s_per_user=user, latency_limits=limits(ttft, tpot_p90=tpot)
    )
    assert point.tokens_per_s_per_gpu == pytest.approx(best[0], rel=1e-12)
    assert point.tokens_per_s_per_gpu in list(curve.points["output_tokens_per_s_per_gpu"])


def test_many_slos_at_once_match_one_at_a_time(curve):
    ttft = np.array([0.2, 1.0, 20.0, 200.0, np.nan])
    batch = operating_points(curve, latency_limits={"ttft_s_p95": ttft})
    for i, limit in enumerate(ttft):
        one = operating_point(
            curve, latency_limits={} if np.isnan(limit) else {"ttft_s_p95": limit}
        )
        assert batch["output_tokens_per_s_per_gpu"][i] == pytest.approx(one.tokens_per_s_per_gpu)


def test_interpolation_is_asked_for_and_lies_between_measured_points(tree, curve):
    step = operating_point(curve, latency_limits={"ttft_s_p90": 5.0})
    between = operating_point(curve, latency_limits={"ttft_s_p90": 5.0}, reading="interpolate")
    assert between.interpolated
    assert between.values["ttft_s_p90"] == pytest.approx(5.0)
    low, high = sorted(curve.points["output_tokens_per_s_per_gpu"].iloc[list(between.bracket)])
    assert low < between.tokens_per_s_per_gpu < high
    assert step.tokens_per_s_per_gpu == pytest.approx(low)
    assert between.values["provisioned_power_kw"] == pytest.approx(14.7)


def test_other_curves_keep_interpolating_unless_asked():
    path = ROOT / "tests" / "data" / "app" / "sample_curve.csv"
    curve = import_files([path])
    default = operating_point(curve, tpot_p99_s=0.03)
    explicit = operating_point(curve, tpot_p99_s=0.03, reading="interpolate")
    assert default.to_dict() == explicit.to_dict()
    step = operating_point(curve, tpot_p99_s=0.03, reading="step")
    assert step.tokens_per_s_per_gpu in list(curve.points["output_tokens_per_s_per_gpu"])
    assert step.tokens_per_s_per_gpu <= default.tokens_per_s_per_gpu
    with pytest.raises(OperatingPointError, match="reading 'steps'; expected one of"):
        operating_point(curve, reading="steps")


def test_step_position_takes_the_last_point_meeting_every_limit():
    knots = np.array([[1.0, 2.0, 3.0, 2.5], [0.1, 0.1, 0.1, np.nan]])
    upper = np.array([[2.5, np.nan], [2.5, 1.0], [0.5, np.nan], [np.nan, np.nan]])
    # row 0: point 3 (2.5) meets the limit again after point 2 broke it; row 1: its NaN fails
    assert list(step_position(knots, upper)[:2]) == [3.0, 1.0]
    assert math.isnan(step_position(knots, upper)[2])
    assert step_position(knots, upper)[3] == 3.0


# --- the command line, in-process ---------------------------------------------------------------


def test_import_takes_the_submission_folder(tree, capsys):
    assert main(["throughput", "import", str(tree)]) == 0
    out, err = capsys.readouterr()
    assert "mlperf-endpoints-submission" in out and "TTFT p90 s" in out and "tok/s/kW prov." in out
    assert "provisioned" in err
    assert main(["throughput", "import", str(tree), "--show", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["points"]) == 7
    assert data["provenance"]["power_basis"].startswith("provisioned")


def test_point_with_endpoints_limits(tree, capsys):
    code = main(
        [
            "throughput",
            "point",
            str(tree),
            "--ttft-p95-s",
            "1",
            "--tpot-p90-ms",
            "12",
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    best = brute_force(tree, ttft_p95=1.0, tpot_p90=0.012)
    assert data["tokens_per_s_per_gpu"] == pytest.approx(best[0])
    assert data["interpolated"] is False
    assert data["limits"] == {"ttft_s_p95": 1.0, "tpot_s_p90": 0.012}
    assert main(["throughput", "point", str(tree), "--ttft-p90-s", "5", "--interpolate"]) == 0
    out = capsys.readouterr().out
    assert "J per output token (provisioned)" in out
    assert any("interpolated" in line and "yes" in line for line in out.splitlines())


def test_cli_refuses_an_interrupted_run_unless_allowed(tmp_path, capsys):
    root = vary_tpot(build_submission(tmp_path / "s"))
    path = root / "results/system_a/gpt-oss-120b/r64/result_summary.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "state": "interrupted"}))
    assert main(["throughput", "import", str(root)]) == 3
    err = capsys.readouterr().err
    assert "r64/result_summary.json: field state" in err and "--allow-incomplete" in err
    assert "Traceback" not in err
    assert main(["throughput", "point", str(root), "--allow-incomplete", "--format", "json"]) == 0


def test_cli_refuses_a_limit_given_twice(tree, capsys):
    args = ["throughput", "point", str(tree), "--ttft-p90-s", "1", "--limit", "ttft_s_p90=2"]
    assert main(args) == 3
    assert "ttft_s_p90 is limited twice" in capsys.readouterr().err


def test_the_curve_csv_keeps_the_endpoints_columns(curve, tmp_path, capsys):
    from econ.throughput.importers import write_curve_csv

    path = write_curve_csv(curve, tmp_path / "curve.csv")
    again = import_files([path])
    for column in (
        "provisioned_power_kw",
        "output_tokens_per_s_per_kw_provisioned",
        "j_per_output_token_provisioned",
        "tokens_per_s_per_user_by_concurrency",
    ):
        assert list(again.points[column]) == pytest.approx(list(curve.points[column]))
    # the CSV keeps the reading rules: read back, the curve is still read in steps
    assert again.provenance["curve_reading"] == "step"
    step = operating_point(again, latency_limits={"ttft_s_p90": 1.0})
    assert not step.interpolated
    assert (
        step.to_dict()["values"]
        == operating_point(curve, latency_limits={"ttft_s_p90": 1.0}).to_dict()["values"]
    )


def test_several_endpoints_files_still_read_in_steps(tree):
    runs = sorted(tree.glob("results/*/*/r*/result_summary.json"))[:3]
    merged = import_files(runs, gpu_count=8)
    assert merged.provenance["curve_reading"] == "step"
    point = operating_point(merged)
    assert not point.interpolated
    assert point.tokens_per_s_per_gpu == max(merged.points["output_tokens_per_s_per_gpu"])


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The synthetic tree as built (the same TPOT at every concurrency): its frontier on
    1000 / TPOT P90 and per-GPU throughput holds one point."""
    return build_submission(tmp_path_factory.mktemp("plain") / "submission")


def test_interpolate_never_falls_below_the_step_reading(plain, capsys):
    # With TTFT P90 <= 1 s the step reading takes concurrency 128, but the frontier read with
    # --interpolate had no feasible point and the error pointed at the lower concurrency 16
    # (236 tokens/s per GPU) "below the frontier".
    root = plain
    curve = import_files([root])
    step = operating_point(curve, latency_limits={"ttft_s_p90": 1.0})
    between = operating_point(curve, latency_limits={"ttft_s_p90": 1.0}, reading="interpolate")
    assert step.values["concurrency"] == 128
    assert between.tokens_per_s_per_gpu == step.tokens_per_s_per_gpu == pytest.approx(710.88, 1e-4)
    assert between.bracket == step.bracket and not between.interpolated
    assert any("the best measured point meeting the SLO" in w for w in between.warnings)
    assert main(["throughput", "point", str(root), "--ttft-p90-s", "1", "--interpolate"]) == 0
    assert "710.88" in capsys.readouterr().out


@settings(max_examples=30, deadline=None)
@given(
    ttft=st.floats(0.05, 20.0),
    tpot_ms=st.one_of(st.none(), st.floats(5.0, 60.0)),
    varied=st.booleans(),
)
def test_interpolated_point_is_at_least_the_step_point(curve, plain, ttft, tpot_ms, varied):
    chosen = curve if varied else import_files([plain])
    named = {"ttft_s_p90": ttft} | ({} if tpot_ms is None else {"tpot_s_p90": tpot_ms / 1000})
    step = operating_points(chosen, latency_limits=named, reading="step")
    between = operating_points(chosen, latency_limits=named, reading="interpolate")
    assert step["feasible"][0] == between["feasible"][0]
    if step["feasible"][0]:
        gpu = "output_tokens_per_s_per_gpu"
        assert between[gpu][0] >= step[gpu][0] * (1 - 1e-12)
        for name, limit in named.items():
            assert between[name][0] <= limit * (1 + 1e-9)
