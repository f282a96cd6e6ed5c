"""Calibration: workloads and rows match the reference data, the fit recovers known coefficients,
stored coefficients carry their provenance, and the validation target holds."""

from __future__ import annotations

import argparse
import csv
import math
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest

from econ.commands import simulate as cli
from econ.errors import InputError
from econ.hardware import load_hardware_catalog
from econ.throughput import calibration as cal
from econ.throughput.simulator import SPEED_OF_LIGHT, Efficiency


@pytest.fixture(scope="module")
def targets():
    return cal.calibration_targets(cal.load_rows())


def test_workload_limits_match_the_constraints_file(shared_data):
    workloads = cal.load_workloads()
    for r in csv.DictReader(open(shared_data / "mlperf_latency_constraints.csv")):
        family, scenario = r["benchmark_family"], r["scenario"].split(" ")[0]
        if family not in workloads or not r["tpot_p99_limit_ms"]:
            continue
        w = workloads[family][scenario]
        assert w.ttft_limit_s == pytest.approx(float(r["ttft_p99_limit_ms"]) / 1000)
        assert w.tpot_limit_s == pytest.approx(float(r["tpot_p99_limit_ms"]) / 1000)
        if scenario == "Server":
            assert w.output_tokens == float(r["median_output_tokens_per_sample_observed"])
    assert math.isinf(workloads["deepseek-r1"]["Offline"].tpot_limit_s)


def test_shipped_rows_are_a_faithful_copy(shared_data):
    shipped = cal.load_rows()
    source = pd.concat(
        [
            pd.read_csv(shared_data / "mlperf_inference_llm.csv")
            .drop(columns="scenario")
            .rename(columns={"scenario_normalized": "scenario"}),
            # v6.1's summary.json layout names the scenario as the other rounds normalize it
            pd.read_csv(shared_data / "mlperf_inference_v6.1.csv"),
        ]
    )
    key = ["round", "submitter", "system_name", "benchmark", "scenario", "per_accelerator"]
    found = shipped[key].merge(source[key].drop_duplicates(), on=key, how="left", indicator=True)
    assert (found["_merge"] == "both").all()
    assert shipped["source"].str.contains("mlcommons").all()
    assert set(shipped["round"]) == {"v4.0", "v4.1", "v5.0", "v5.1", "v6.0", "v6.1"}
    v61 = shipped[shipped["round"] == "v6.1"]
    # closed, tokens/s, catalog hardware only: no MI350X, no mixed MI300X/MI355X cluster
    assert (v61["division"] == "closed").all() and (v61["metric_unit"] == "tokens/s").all()
    assert not v61["accelerator"].str.contains(" and |MI350|\\+").any()
    # the v6.1 file has no latency limits; its few measured p99s are copied as they are
    assert v61["tpot_limit_ms"].isna().all() and v61["tpot_p99_ms"].notna().any()


def test_targets_include_the_seed_case(targets):
    rows = cal.load_rows()
    seed_row = rows[
        (rows.hardware == "gb200-nvl72")
        & (rows.model == "deepseek-r1")
        & (rows.scenario == "Server")
        & (rows["round"] == "v6.0")
    ]
    # DESIGN.md §8: MLPerf v6.0 CoreWeave, 64 GPUs, 311,531 tok/s = 4,867.7 tok/s/GPU
    assert seed_row.per_accelerator.max() == pytest.approx(4867.67, rel=1e-4)
    seed = targets[
        (targets.hardware == "gb200-nvl72")
        & (targets.model == "deepseek-r1")
        & (targets.scenario == "Server")
    ]
    assert len(seed) == 1
    # the target is the latest round's best: v6.1, Azure's 72-GPU system
    assert seed["round"].iloc[0] == "v6.1"
    assert seed.measured.iloc[0] == pytest.approx(426796 / 72, rel=1e-4)
    assert seed.accelerator_count.iloc[0] == 72
    assert not targets.duplicated(["hardware", "model", "scenario"]).any()
    assert set(targets.precision) <= {"fp8", "fp4"}


def test_targets_include_mi355x_deepseek_r1_server(targets):
    """Crusoe's 512 x MI355X v6.1 Server result, the only MI355X DeepSeek-R1 submission."""
    row = targets[
        (targets.hardware == "mi355x")
        & (targets.model == "deepseek-r1")
        & (targets.scenario == "Server")
    ].iloc[0]
    assert row["round"] == "v6.1" and row.submitter == "Crusoe"
    assert row.measured == pytest.approx(4697.87) and row.accelerator_count == 512


def test_every_measurement_is_below_its_speed_of_light(targets):
    batch = cal.PredictionBatch.build(targets)
    light = batch.predict(SPEED_OF_LIGHT)
    assert np.all(targets.measured.to_numpy() <= light)


def test_fit_recovers_known_coefficients(targets):
    sub = targets[targets.hardware == "h200-sxm"].reset_index(drop=True)
    truth = Efficiency(bandwidth=0.8, compute=0.55, step_overhead_s=3e-3, token_overhead_s=4e-5)
    synthetic = sub.assign(measured=cal.PredictionBatch.build(sub).predict(truth))
    result = cal.fit_targets(synthetic, starts=2)
    assert result.median_abs_error < 0.02
    predicted = cal.PredictionBatch.build(sub).predict(result.efficiency)
    assert np.allclose(predicted, synthetic.measured, rtol=0.05)


def test_fit_without_targets():
    with pytest.raises(cal.CalibrationError, match="no calibration targets"):
        cal.fit_targets(pd.DataFrame(columns=["hardware", "measured"]))


def test_every_catalog_hardware_has_a_labelled_calibration():
    stored = cal.load_all_efficiencies()
    for key, hw in load_hardware_catalog().items():
        assert set(stored[key]) == set(hw.native_precisions)
        for eff, info in stored[key].values():
            assert info["fitted_on"] and info["data"] and info["source"]
            assert 0 < eff.bandwidth <= 1 and 0 < eff.compute <= 1
    # MI355X has MLPerf v6.1 rows of its own; it borrowed MI325X's coefficients before
    assert stored["mi355x"]["fp4"][1]["source"] == "fit"
    assert "deepseek-r1 Server (v6.1)" in stored["mi355x"]["fp4"][1]["data"]
    assert stored["h200-sxm"]["fp8"][1]["source"] == "fit"
    assert "no BF16 measurements" in stored["h200-sxm"]["bf16"][1]["source"]


def test_calibrated_error_meets_the_validation_target(targets):
    """Issue 6: calibrated median absolute error <= 15% over hardware/model pairs."""
    eff = cal.efficiency_by_row(targets, cal.load_all_efficiencies())
    err = cal.PredictionBatch.build(targets).predict(eff) / targets.measured - 1.0
    by_pair = pd.Series(np.abs(err)).groupby([targets.hardware, targets.model]).median()
    assert by_pair.median() <= 0.15


def test_load_efficiency_defaults_are_labelled(tmp_path):
    eff, info = cal.load_efficiency("h100-sxm", "fp8", tmp_path)
    assert eff == cal.PRIOR and "no calibration" in info["efficiency"]


def test_save_and_load_round_trip(tmp_path):
    table = {
        "source": "fit",
        "fitted_on": "2026-01-01",
        "data": "test",
        "rows": 3,
        "median_abs_error": 0.1,
    }
    values = {
        f.name: float(getattr(Efficiency(), f.name))
        for f in fields(Efficiency)
        if f.name != "model_efficiency"  # a model's, stored in models.toml
    }
    cal.save_calibration("h100-sxm", {"fp8": {**table, **values, "bandwidth": 0.77}}, tmp_path)
    eff, info = cal.load_efficiency("h100-sxm", "fp8", tmp_path)
    assert eff.bandwidth == 0.77 and info["calibration_source"] == "fit"


@pytest.mark.parametrize(
    ("line", "message"),
    [("bandwidth = -0.5", "non-negative number"), ("speedup = 2.0", "unknown fields speedup")],
)
def test_bad_calibration_file(tmp_path, line, message):
    (tmp_path / "h100-sxm.toml").write_text(f'hardware = "h100-sxm"\n[precision.fp8]\n{line}\n')
    with pytest.raises(cal.CalibrationError, match=message):
        cal.load_efficiency("h100-sxm", "fp8", tmp_path)


def test_calibrate_writes_fit_and_sibling_transfer(tmp_path):
    written = cal.calibrate(["h100-sxm", "h200-sxm"], directory=tmp_path, starts=1)
    assert written["h100-sxm"]["fp8"]["source"] == "fit"
    assert (tmp_path / "h200-sxm.toml").is_file()
    eff, info = cal.load_efficiency("h200-sxm", "fp8", tmp_path)
    assert info["calibration_rows"] > 0


def _calibrate_command(tmp_path, hardware: str, rows) -> argparse.Namespace:
    """`econ throughput calibrate --hardware HARDWARE --rows ROWS` into tmp_path, parsed."""
    parser = argparse.ArgumentParser()
    group = parser.add_subparsers().add_parser("throughput").add_subparsers()
    cli.register_throughput(group)
    argv = ["throughput", "calibrate", "--hardware", hardware, "--rows", str(rows)]
    return parser.parse_args([*argv, "--out-dir", str(tmp_path), "--starts", "1"])


def test_calibrated_tables_name_the_rows_file_they_were_fitted_on(tmp_path):
    """Found by a simulator review: `econ throughput calibrate --rows my_rows.csv` wrote
    `data = "models/calibration/mlperf_rows.csv (...)"` into every table, naming the shipped rows
    as the source of coefficients fitted on the user's."""
    shipped = cal.load_rows()
    rows = tmp_path / "my_rows.csv"
    shipped[shipped["hardware"] == "mi325x"].to_csv(rows, index=False)
    args = _calibrate_command(tmp_path, "mi325x", rows)
    args.run(args)
    _, info = cal.load_efficiency("mi325x", "fp8", tmp_path)
    assert info["calibration_data"].startswith(f"{rows} (MLPerf Inference closed"), info
    written = cal.calibrate(["mi325x"], rows=shipped, directory=tmp_path, starts=1)
    assert written["mi325x"]["fp8"]["data"].startswith("rows given to calibrate() (")
    written = cal.calibrate(["mi325x"], directory=tmp_path, starts=1)
    assert written["mi325x"]["fp8"]["data"].startswith("models/calibration/mlperf_rows.csv (")


def test_calibrate_on_rows_without_the_hardware_is_refused(tmp_path):
    """Found by a simulator review: `econ throughput calibrate --hardware h100-sxm --rows FILE`
    with no h100-sxm row in FILE printed an empty table, a warning and exited 0, writing
    nothing."""
    shipped = cal.load_rows()
    rows = tmp_path / "mi325x_rows.csv"
    shipped[shipped["hardware"] == "mi325x"].to_csv(rows, index=False)
    args = _calibrate_command(tmp_path, "h100-sxm", rows)
    with pytest.raises(cal.CalibrationError, match=r"holds no calibration target of h100-sxm "):
        args.run(args)
    assert not (tmp_path / "h100-sxm.toml").exists()


def test_calibrate_before_a_round_uses_only_earlier_rows(tmp_path):
    written = cal.calibrate(["mi325x", "mi355x"], directory=tmp_path, starts=1, before_round="v6.1")
    # without its v6.1 rows MI355X has no measurement: it borrows MI325X's fit, as it did
    assert written["mi355x"]["fp4"]["source"] == "transferred from mi325x fp8 (no measurements)"
    data = written["mi325x"]["fp8"]["data"]
    assert "rows of rounds up to v6.0 only" in data and "v6.1" not in data


def test_unknown_workload_scenario():
    with pytest.raises(cal.CalibrationError, match="has offline, server"):
        cal.get_workload("mixtral-8x7b", "interactive")
    with pytest.raises(cal.CalibrationError, match="models with one"):
        cal.get_workload("qwen3-vl-235b-a22b", "server")


def test_bad_rows_file(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("hardware,model\nh100-sxm,llama2-70b\n")
    with pytest.raises(cal.CalibrationError, match="lacks columns"):
        cal.load_rows(path)


ROWS_HEADER = "hardware,model,scenario,round,availability,accelerator_count,per_accelerator\n"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("mi325x,llama2-70b,Server,v5.1,available,0,3969.5", "accelerator_count must be a whole"),
        ("mi325x,llama2-70b,Server,v5.1,available,,3969.5", "accelerator_count must be a whole"),
        ("mi325x,llama2-70b,Server,v5.1,available,1.5,3969.5", "got 1.5"),
        ("mi325x,llama2-70b,Server,v5.1,available,8,-100", "per_accelerator must be a positive"),
        ("mi325x,llama2-70b,Server,v5.1,available,8,0", "per_accelerator must be a positive"),
        ("mi325x,llama2-70b,Server,latest,available,8,3969.5", "round must be a round"),
        ("mi325x,llama2-70b,server,v5.1,available,8,3969.5", "scenario must be one of"),
    ],
)
def test_rows_with_an_impossible_value_are_refused(tmp_path, row, expected):
    """Found by a simulator review: a GPU count of 0, -8 or blank in a --rows file crashed the fit
    with a traceback (math domain error, IntCastingNaNError), 1.5 GPUs was cut to 1, a throughput
    of 0 or -100 tokens/s per GPU, a round 'latest' (read as older than every round) and a
    lower-case scenario (dropped as no workload's) were taken silently."""
    path = tmp_path / "rows.csv"
    path.write_text(ROWS_HEADER + "mi325x,llama2-70b,Server,v5.1,available,8,3969.5\n" + row + "\n")
    with pytest.raises(cal.CalibrationError, match=f"data row 2 .*{expected}"):
        cal.load_rows(path)


def test_open_division_rows_are_never_targets():
    """Found by a simulator review: calibration_targets took the best row whatever its division,
    so a --rows file with open-division results (65 rows of ../shared/data/mlperf_inference_llm
    .csv, modified models) could set a target, while every table says "MLPerf Inference closed"."""
    rows = cal.load_rows()
    best = cal.calibration_targets(rows)
    open_row = rows[(rows["hardware"] == "h100-sxm") & (rows["model"] == "llama2-70b")].copy()
    open_row = open_row[open_row["scenario"] == "Offline"].head(1)
    open_row[["division", "round", "per_accelerator"]] = ["open", "v6.1", 99999.0]
    targets = cal.calibration_targets(pd.concat([rows, open_row], ignore_index=True))
    pd.testing.assert_frame_equal(targets, best)


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"", "is empty; expected a CSV"), (b"\x94\x00\xff,\n", "is not a readable CSV")],
)
def test_an_empty_or_binary_rows_file_is_refused(tmp_path, content, expected):
    """Found by a simulator review: `econ throughput calibrate --rows` on an empty file, a binary
    one or a folder ended in a traceback (EmptyDataError, UnicodeDecodeError, IsADirectoryError)."""
    path = tmp_path / "rows.csv"
    path.write_bytes(content)
    with pytest.raises(cal.CalibrationError, match=expected):
        cal.load_rows(path)
    with pytest.raises(cal.CalibrationError, match="is a folder"):
        cal.load_rows(tmp_path)


def test_cli_calibrate_refuses_to_overwrite(tmp_path):
    (tmp_path / "h100-sxm.toml").write_text("")
    parser = argparse.ArgumentParser()
    group = parser.add_subparsers().add_parser("throughput").add_subparsers()
    cli.register_throughput(group)
    args = parser.parse_args(
        ["throughput", "calibrate", "--hardware", "h100-sxm", "--out-dir", str(tmp_path)]
    )
    with pytest.raises(InputError, match="--force"):
        args.run(args)


def test_a_hash_inside_a_row_is_the_row_s_not_a_comment(tmp_path):
    """Found by a data review: read with pandas' comment="#", 223 of the 240 v6.1 rows lost the
    end of their source ("summary.json#12 (Location ...; Platform ...)" cut at the '#')."""
    rows = cal.load_rows()
    v61 = rows[rows["round"] == "v6.1"]
    assert len(v61) == 240 and v61["source"].str.contains("#").all()
    first = next(
        line for line in cal.rows_path().read_text().splitlines() if not line.startswith("#")
    )
    assert list(rows.columns) == first.split(",")  # the notes above the header are skipped
    path = tmp_path / "rows.csv"
    path.write_text("# a note\n# another\na,b\n1,x#2\n")
    from econ.files import read_noted_csv

    assert read_noted_csv(path).to_dict("records") == [{"a": 1, "b": "x#2"}]
