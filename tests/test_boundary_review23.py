"""Review 23 of the input boundary (docs/inputs.md): the files an importer opens beside a curve stay
where the curve itself may point and no link is followed there; an output never replaces what is
not a regular file; MLPerf Endpoints files and sweep tables are bounded before they are parsed;
and a number beyond the float range, a YAML nested too deep and an invisible character in a
scenario's name are said as such.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from econ import files, load_scenario
from econ.analysis.distributions import DistributionError, read_column
from econ.analysis.sweeps import read_table
from econ.cli import main
from econ.errors import InputError
from econ.scenario.paths import allow_paths
from econ.throughput.importers import CurveError, import_file, import_files
from econ.throughput.importers.mlperf_endpoints import MAX_FILE_BYTES, MAX_YAML_DEPTH
from econ.throughput.resolve import resolve_throughput
from tests import test_app
from tests.conftest import ROOT
from tests.endpoints_tree import build_submission
from tests.test_app import errors, upload_curve

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


# --- 3. MLPerf Endpoints files are bounded before they are parsed: size, YAML depth ---------------


def empty_objects(size: int) -> bytes:
    """JSON of about `size` bytes: a list of empty objects with random spaces between them (which
    compress some 10 times, far from the zip-bomb ratio, as the reviewer's 2.5 MB zip did)."""
    draw = random.Random(23)
    parts, length = [], 0
    while length < size:
        part = "{}" + " " * draw.randrange(4) + ","
        parts.append(part)
        length += len(part)
    return ('{"pad": [' + "".join(parts) + "{}]}").encode()


def test_an_oversized_result_summary_in_a_tree_or_a_zip_is_refused_unparsed(capsys, tmp_path):
    root = build_submission(tmp_path / "submission")
    member = "results/system_a/gpt-oss-120b/r4/result_summary.json"
    padded = empty_objects(3 * MAX_FILE_BYTES // 2)
    (root / member).write_bytes(padded)
    limit = f"is larger than the {files.size_text(MAX_FILE_BYTES)} a result summary or descriptor"
    with pytest.raises(CurveError, match=rf"{member}: 1\.5 MB {limit}.*before it is parsed"):
        import_files([root])
    archive = tmp_path / "sub.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(root).as_posix())
    code, _, err = run(capsys, "throughput", "import", str(archive))
    assert code == 3 and f"{archive}: {member}: 1.5 MB {limit}" in err, err


def test_an_oversized_result_summary_alone_is_refused_unparsed(tmp_path):
    tree = build_submission(tmp_path / "tree")
    data = json.loads((tree / "results/system_a/gpt-oss-120b/r4/result_summary.json").read_text())
    path = tmp_path / "result_summary.json"
    path.write_text(json.dumps({**data, "pad": [{}] * (MAX_FILE_BYTES // 3)}))
    size = files.size_text(path.stat().st_size)  # 1.3 MB
    with pytest.raises(CurveError, match=rf"result_summary.json: {size} is larger than the 1 MB"):
        import_file(path)


def test_an_oversized_zip_member_is_refused_in_the_app(app, tmp_path):
    root = build_submission(tmp_path / "submission")
    (root / "results/system_a/gpt-oss-120b/r4/result_summary.json").write_bytes(
        empty_objects(3 * MAX_FILE_BYTES // 2)
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    upload_curve(app, "sub.zip", buffer.getvalue())
    assert any("result_summary.json: 1.5 MB is larger than the 1 MB" in e for e in errors(app))


def test_a_point_yaml_nested_past_the_limit_is_said_to_be(tmp_path):
    root = build_submission(tmp_path / "submission")
    point = root / "results/system_a/gpt-oss-120b/r4/point.yaml"
    base = point.read_text()
    lists = MAX_YAML_DEPTH - 1  # the file's mapping is the first level
    point.write_text(base + "x: " + "[" * lists + "]" * lists + "\n")
    import_files([root])  # at the limit: read
    point.write_text(base + "x: " + "[" * (lists + 1) + "]" * (lists + 1) + "\n")
    line = base.count("\n") + 1
    with pytest.raises(
        CurveError,
        match=rf"point.yaml: the YAML nests more than {MAX_YAML_DEPTH} levels of mappings and "
        rf"lists \(at line {line} column",
    ):
        import_files([root])
    point.write_text(base + "x: " + "[" * 5000 + "]" * 5000 + "\n")  # past the parser's limit
    with pytest.raises(CurveError, match=f"nests more than {MAX_YAML_DEPTH} levels"):
        import_files([root])


# --- 4. sweep and distribution tables are bounded before they are read ----------------------------


def sparse(path: Path, size: int = 2 * 1024**3) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # a sparse file: nothing is written
    return path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["sweep", "deepseek-r1-gb200-nvl72", "--overrides"], "a CSV or Parquet override table"),
        (["montecarlo", "deepseek-r1-gb200-nvl72", "--dist"], "a CSV or Parquet file of values"),
    ],
)
def test_a_2_gb_table_is_refused_before_it_is_read(tmp_path, args, expected):
    """In a subprocess held to 2 GB of address space: reading the file would fail, not swap."""
    big = sparse(tmp_path / "big.csv")
    value = str(big) if args[0] == "sweep" else f"utilization.share=empirical({big})"

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))

    done = subprocess.run(
        [sys.executable, "-m", "econ", *args, value],
        capture_output=True, text=True, timeout=120, preexec_fn=limit_memory, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr[-500:]
    assert f"{big}: larger than 64 MB; expected {expected}" in done.stderr


def test_a_2_gb_parquet_table_is_refused_before_it_is_read(tmp_path):
    big = sparse(tmp_path / "big.parquet")
    with pytest.raises(InputError, match=r"big.parquet: larger than 64 MB; expected a CSV or Par"):
        read_table(big)
    with pytest.raises(DistributionError, match=r"big.parquet: larger than 64 MB; expected a CSV"):
        read_column(big, "x")
    small = tmp_path / "small.csv"
    small.write_text("x\n0.5\n0.7\n")
    assert read_column(small, "x").tolist() == [0.5, 0.7]


# --- 6. messages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("column", ["ttft_s_p99", "request_rate_per_s"])
def test_a_number_beyond_the_float_range_is_said_to_be(tmp_path, column):
    path = tmp_path / "curve.csv"
    path.write_text(f"concurrency,output_tokens_per_s,gpu_count,{column}\n1,100,1,1e400\n")
    with pytest.raises(
        CurveError,
        match=rf"line 2, column '{column}': '1e400' is too large for a float \(beyond the "
        r"largest a double holds\); expected a finite number \(at most about 1.8e308",
    ):
        import_file(path)
    path.write_text("concurrency,output_tokens_per_s,gpu_count,request_rate_per_s\n1,100,1,inf\n")
    assert import_file(path).points["request_rate_per_s"].iloc[0] == float("inf")  # all at once


def test_validate_shows_an_invisible_character_of_a_name_escaped(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SEED.read_text().replace('name = "', 'name = "\u200b=1+1 ', 1))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0 and "\u200b" not in out
    assert f"{path}: ok (\\u200b=1+1 deepseek-r1-gb200-nvl72, " in out
