"""Review 23 of the input boundary (docs/inputs.md): the files an importer opens beside a curve stay
where the curve itself may point and no link is followed there; an output never replaces what is
not a regular file; MLPerf Endpoints files and sweep tables are bounded before they are parsed;
and a number beyond the float range, a YAML nested too deep and an invisible character in a
scenario's name are said as such.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from econ import files, load_scenario
from econ.cli import main
from econ.scenario.paths import allow_paths
from econ.throughput.importers import import_file
from econ.throughput.resolve import resolve_throughput
from tests import test_app
from tests.conftest import ROOT
from tests.endpoints_tree import build_submission

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
LOG = ROOT / "tests" / "data" / "throughput" / "mlperf_log_summary_server_8gpu.txt"
LOGGED_TOKENS_PER_S = float(
    re.search(r"^Completed tokens per second: ([\d.]+)$", LOG.read_text(), re.M).group(1)
)
"""The log's own system throughput [tokens/s], read from its text."""
CURVE = 'throughput.measured.curve="mlperf_log_summary.txt"'
app = test_app.app  # the page fixture: the app on the default scenario


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def system_json(path: Path, nodes, accelerator: str = "SECRET-ACCEL") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "accelerators_per_node": 8,
                "number_of_nodes": nodes,
                "accelerator_model_name": accelerator,
            }
        )
    )
    return path


# --- 1. files read beside a curve -----------------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A scenario folder whose curve log has beside it a link to a system description elsewhere."""
    folder = tmp_path / "scenario"
    (folder / "run").mkdir(parents=True)
    shutil.copy(SEED, folder / "seed.toml")
    shutil.copy(LOG, folder / "run" / "mlperf_log_summary.txt")
    (folder / "run" / "my_system.json").symlink_to(tmp_path / "outside" / "secret_system.json")
    return folder


@pytest.mark.parametrize("nodes", ["SECRET-TOKEN-abc123", 2])
def test_a_link_beside_a_scenarios_curve_log_is_not_followed(capsys, tmp_path, linked, nodes):
    system_json(tmp_path / "outside" / "secret_system.json", nodes)
    curve = 'throughput.measured.curve="run/mlperf_log_summary.txt"'
    code, out, err = run(capsys, "project", str(linked / "seed.toml"), "--set", curve)
    assert "SECRET" not in out + err
    link = linked / "run" / "my_system.json"
    assert code == 3 and f"{link} is a symbolic link: not followed" in err, err
    code, out, err = run(
        capsys, "project", str(linked / "seed.toml"), "--set", curve,
        "--set", "throughput.measured.gpus=8", "--format", "json",
    )  # fmt: skip
    assert code == 0 and "SECRET" not in out + err  # (stdout names files, not their folders)
    assert "system description not read: my_system.json is a symbolic link: not followed" in out


def test_a_link_beside_a_log_named_on_the_command_line_is_not_followed(tmp_path, linked):
    system_json(tmp_path / "outside" / "secret_system.json", 2)
    curve = import_file(linked / "run" / "mlperf_log_summary.txt")
    assert "SECRET" not in json.dumps(
        [list(curve.warnings), curve.points.astype(str).values.tolist()]
    )
    assert curve.points["gpu_count"].isna().all()
    assert any("my_system.json is a symbolic link: not followed" in w for w in curve.warnings)


@pytest.fixture
def submission(tmp_path: Path) -> tuple[Path, Path]:
    """(submission folder, its results/<Platform>/<benchmark>/Server/ with a scenario and log)."""
    server = tmp_path / "case3" / "results" / "NVIDIA_H200" / "llama2-70b-99" / "Server"
    server.mkdir(parents=True)
    shutil.copy(SEED, server / "seed.toml")
    shutil.copy(LOG, server / "mlperf_log_summary.txt")
    return tmp_path / "case3", server


def test_a_system_description_above_the_scenarios_folder_is_not_read(capsys, submission):
    sub, server = submission
    systems = system_json(sub / "systems" / "NVIDIA_H200.json", "OUTSIDE-SECRET-42", "OUT-ACC")
    code, out, err = run(capsys, "project", str(server / "seed.toml"), "--set", CURVE)
    assert code == 3 and "OUTSIDE-SECRET" not in out + err and "OUT-ACC" not in out + err
    assert "set throughput.measured.gpus; system description not read: " in err
    assert f"{systems} lies outside {server}, where econ reads files beside" in err


def test_allow_paths_lets_a_scenarios_curve_read_its_submissions_description(submission):
    sub, server = submission
    system_json(sub / "systems" / "NVIDIA_H200.json", 2, "H200-SXM")  # 2 x 8 = 16 GPUs
    with allow_paths([sub]):
        scenario = load_scenario(server / "seed.toml", [CURVE])
        found = resolve_throughput(scenario.throughput, scenario.fleet.hardware)
    assert found.tokens_per_s_per_gpu == pytest.approx(LOGGED_TOKENS_PER_S / 16, rel=1e-12)
    scenario = load_scenario(server / "seed.toml", [CURVE, "throughput.measured.gpus=8"])
    found = resolve_throughput(scenario.throughput, scenario.fleet.hardware)
    assert found.tokens_per_s_per_gpu == pytest.approx(LOGGED_TOKENS_PER_S / 8, rel=1e-12)
    assert any("NVIDIA_H200.json lies outside" in w for w in found.warnings)


def test_a_log_named_on_the_command_line_reaches_its_submission(submission):
    sub, server = submission
    system_json(sub / "systems" / "NVIDIA_H200.json", 2, "H200-SXM")
    assert import_file(server / "mlperf_log_summary.txt").points["gpu_count"].iloc[0] == 16
    inside = import_file(server / "mlperf_log_summary.txt", gpu_count=8, within=[server])
    assert any("NVIDIA_H200.json lies outside" in w for w in inside.warnings)


def test_an_endpoints_result_reads_its_systems_json_only_within_reach(tmp_path):
    tree = build_submission(tmp_path / "tree")
    perf = tmp_path / "sub" / "results" / "PlatX" / "deepseek-r1" / "Server" / "performance"
    perf.mkdir(parents=True)
    summary = perf / "result_summary.json"
    shutil.copy(tree / "results/system_a/gpt-oss-120b/r4/result_summary.json", summary)
    systems = tmp_path / "sub" / "systems" / "PlatX.json"
    systems.parent.mkdir()
    systems.write_text(json.dumps({"system_name": "X", "number_of_nodes": 2,
                                   "accelerators_per_node": 8}))  # fmt: skip
    assert import_file(summary).points["gpu_count"].iloc[0] == 16
    curve = import_file(summary, gpu_count=4, within=[perf])
    assert curve.points["gpu_count"].iloc[0] == 4
    assert any(f"{systems} lies outside {perf}" in w for w in curve.warnings)
    systems.unlink()
    systems.symlink_to(tmp_path / "tree" / "results/system_a/gpt-oss-120b/r4/system_desc.json")
    curve = import_file(summary, gpu_count=4)
    assert any(f"{systems} is a symbolic link: not followed" in w for w in curve.warnings)


# --- 2. outputs replace regular files only --------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "said"),
    [("link", "a symbolic link"), ("dangling", "a symbolic link"), ("fifo", "a FIFO (named pipe)")],
)
def test_force_never_replaces_what_is_not_a_regular_file(capsys, tmp_path, kind, said):
    target, kept = tmp_path / "out.csv", tmp_path / "kept.csv"
    kept.write_text("kept\n")
    if kind == "link":
        target.symlink_to(kept)
    elif kind == "dangling":
        target.symlink_to(tmp_path / "absent.csv")
    else:
        os.mkfifo(target)
    before = os.lstat(target).st_mode
    for force in ([], ["--force"]):
        code, _, err = run(capsys, "project", str(SEED), "--out", str(target), *force)
        assert code == 3 and f"{target}: is {said}, not a regular file" in err, err
        assert os.lstat(target).st_mode == before and kept.read_text() == "kept\n"
    assert not (tmp_path / "absent.csv").exists()


def test_a_link_put_in_place_while_writing_is_not_replaced(tmp_path, monkeypatch):
    target, kept = tmp_path / "out.csv", tmp_path / "kept.csv"
    kept.write_text("kept\n")
    target.write_text("old\n")
    write = files._write_payload

    def swap(handle, payload):  # the target becomes a link between the check and the rename
        target.unlink()
        target.symlink_to(kept)
        write(handle, payload)

    monkeypatch.setattr(files, "_write_payload", swap)
    with pytest.raises(files.WriteError, match="out.csv: is a symbolic link, not a regular file"):
        files.atomic_write(target, "new\n", overwrite=True)
    assert target.is_symlink() and kept.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.csv", "out.csv"]  # no temporary
