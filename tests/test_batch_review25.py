"""Defects an outside data scientist's review of `econ sweep`, `econ montecarlo` and `econ
sensitivity` found (round 25): each test fails on the code before its fix."""

from __future__ import annotations

import io
import json

import pytest

from econ import load_scenario
from econ.cli import main
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
DIST = ["--dist", "utilization.share=uniform(0.5,0.9)"]


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


# --- 2: the seed is bounded by what the app and JSON readers hold exactly -----------------------

LARGEST_SEED = 9_007_199_254_740_991  # JavaScript's Number.MAX_SAFE_INTEGER, 2^53 - 1 (ECMA-262)


@pytest.mark.parametrize("seed", [2**53, 2**64, "1" * 101, "9" * 5000])
def test_a_seed_beyond_2_53_is_refused(seed):
    """2^64 and a 101-digit seed were taken, and a run's JSON metadata held a 50-digit number
    that a browser or a JSON reader rounds; a 5,000-digit text was Python's ValueError."""
    from econ.analysis.sampling import SamplingError, check_seed

    with pytest.raises(
        SamplingError,
        match=r"expected a non-negative integer up to "
        r"9,007,199,254,740,991 \(2\^53 - 1\)",
    ):
        check_seed(seed)


def test_the_largest_seed_is_taken_and_is_the_apps():
    from econ.analysis.sampling import MAX_SEED, check_seed

    assert MAX_SEED == LARGEST_SEED == float(2**53) - 1  # a double holds it exactly
    assert check_seed(str(LARGEST_SEED)) == check_seed(LARGEST_SEED) == LARGEST_SEED
    assert check_seed("+0007") == 7


@pytest.mark.parametrize(
    "command",
    [
        ["montecarlo", str(SEED), "-n", "10", *DIST],
        ["sensitivity", str(SEED), "--method", "sobol", "-n", "8", *DIST],
        ["sensitivity", str(SEED), "--method", "morris", "--trajectories", "2", *DIST],
    ],
    ids=["montecarlo", "sobol", "morris"],
)
def test_the_commands_refuse_a_seed_beyond_2_53(command, capsys):
    assert main([*command, "--seed", str(2**64)]) == 3
    err = capsys.readouterr().err
    assert err == (
        "error: seed = 18446744073709551616: expected a non-negative integer up to "
        "9,007,199,254,740,991 (2^53 - 1)\n"
    )


def test_the_python_api_refuses_a_seed_beyond_2_53(base):
    from econ.analysis import montecarlo, morris, sobol
    from econ.analysis.sampling import SamplingError

    dists = {"utilization.share": "uniform(0.5,0.9)"}
    with pytest.raises(SamplingError, match="up to 9,007,199,254,740,991"):
        montecarlo(base, dists, 10, seed=2**53)
    with pytest.raises(SamplingError, match="up to 9,007,199,254,740,991"):
        sobol(base, {"utilization.share": (0.5, 0.9)}, 8, seed=2**53)
    with pytest.raises(SamplingError, match="up to 9,007,199,254,740,991"):
        morris(base, {"utilization.share": (0.5, 0.9)}, 2, seed=2**53)


def test_the_largest_seed_runs_and_is_written_as_given(capsys):
    args = ["montecarlo", str(SEED), "-n", "8", *DIST, "--output", "npv_usd"]
    assert main([*args, "--seed", str(LARGEST_SEED), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metadata"]["seed"] == LARGEST_SEED


# --- 6: local workers are bounded by the CPUs ----------------------------------------------------


@pytest.fixture
def two_cpus(monkeypatch):
    from econ.analysis import executors

    monkeypatch.setattr(executors, "usable_cpus", lambda: 2)


@pytest.mark.parametrize("engine", ["process", "dask"])
def test_an_absurd_worker_count_is_refused_before_any_worker_starts(engine, two_cpus, capsys):
    """--workers 100000 was taken, and the pool set out to start 100,000 processes."""
    args = ["montecarlo", str(SEED), "-n", "10", *DIST, "--engine", engine]
    assert main([*args, "--workers", "100000"]) == 3
    assert capsys.readouterr().err == (
        "error: workers = 100,000: expected at most 8 (4 per CPU; this process may use 2 CPUs): "
        "each worker is a process of its own, and workers beyond the CPUs make a run no faster; "
        "for more, run a Dask cluster over several machines (--scheduler ADDRESS)\n"
    )
    assert main([*args, "--workers", "9"]) == 3
    assert "workers = 9: expected at most 8" in capsys.readouterr().err


def test_more_workers_than_cpus_get_a_note(two_cpus, capsys):
    import warnings

    from econ.analysis import make_executor
    from econ.analysis.executors import ExecutorNote

    # from Python a warning (ExecutorNote); the CLI prints it as a `note: ...` line
    with pytest.warns(ExecutorNote) as said, make_executor("process", workers=3) as executor:
        assert executor.workers == 3
    assert [str(w.message) for w in said] == [
        "3 workers share this process's 2 CPUs: the run is no faster than with 2, and each "
        "worker takes memory of its own"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExecutorNote)
        with make_executor("process", workers=2), make_executor("process"):
            pass
    assert capsys.readouterr().err == ""


def test_usable_cpus_follows_the_affinity_mask():
    import os

    from econ.analysis.executors import _workers, usable_cpus

    assert usable_cpus() == len(os.sched_getaffinity(0)) >= 1
    assert _workers(None) == usable_cpus()


# --- 3: --force discards another run's chunks and reuses this run's, and says so ----------------

MC_CHUNKED = ["montecarlo", str(SEED), "-n", "8192", "--chunk-size", "4096", *DIST, "--no-progress"]


def test_force_reuses_the_chunks_of_the_same_run_and_says_so(tmp_path, capsys):
    """The help said "discard old chunks"; a run with --force reused them ("resumed: reused 2
    finished chunks") without a word of why."""
    with pytest.raises(SystemExit):
        main(["montecarlo", "--help"])
    help_text = capsys.readouterr().out
    assert "discard old chunks" not in help_text
    assert "this run's own finished chunks are reused" in " ".join(help_text.split())

    chunks = tmp_path / "ck"
    args = [*MC_CHUNKED, "--chunks", str(chunks), "--format", "json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*args, "--force"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["metrics"] == first["metrics"]
    assert captured.err == (
        f"resumed: reused 2 finished chunks of 2 from {chunks}, computed 0; --force discards "
        "only another run's chunk files, and these are this run's (same scenario, plan, seed, "
        f"size and econ version): delete {chunks} to recompute them\n"
    )
    assert main([*args, "--seed", "1", "--force"]) == 0  # another run's: discarded, recomputed
    captured = capsys.readouterr()
    assert "resumed" not in captured.err
    assert json.loads(captured.out)["metadata"]["seed"] == 1


# --- 4: Ctrl-C or SIGTERM while --out is written ------------------------------------------------


def _stopped_while_writing(monkeypatch, stop) -> None:
    """The --out write is stopped by `stop()` after its first chunk's rows are in the file."""
    from econ.analysis import output

    real = output._frames

    def frames(result):
        for k, frame in enumerate(real(result)):
            if k == 1:
                stop()
            yield frame

    monkeypatch.setattr(output, "_frames", frames)


def _sigterm():
    """What SIGTERM does in the process now: the handler installed, or the default (the process
    ends; raised here as a plain interrupt, so the test fails rather than the test run ending)."""
    import signal

    handler = signal.getsignal(signal.SIGTERM)
    if callable(handler):
        handler(signal.SIGTERM, None)
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("stop", "said", "code"),
    [
        (lambda: (_ for _ in ()).throw(KeyboardInterrupt), "interrupted", 130),
        (_sigterm, "terminated (SIGTERM)", 143),
    ],
    ids=["ctrl-c", "sigterm"],
)
@pytest.mark.parametrize("store_given", [False, True])
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # a writer's __del__
def test_a_stopped_out_write_says_the_chunks_are_kept_and_writes_no_half_file(
    stop, said, code, store_given, tmp_path, monkeypatch, capsys
):
    """Ctrl-C during the write said only "interrupted (Ctrl-C)"; SIGTERM ended the process with
    nothing said."""
    out = tmp_path / "mc.parquet"
    folder = tmp_path / "ck" if store_given else tmp_path / "mc.parquet.chunks"
    extra = ["--chunks", str(folder)] if store_given else []
    _stopped_while_writing(monkeypatch, stop)
    assert main([*MC_CHUNKED, "--out", str(out), *extra]) == code
    size = _size_of(folder)
    assert capsys.readouterr().err == (
        f"{said} while writing {out}: nothing was written; the run's 2 chunk files ({size}) are "
        f"kept in {folder}: rerun the same command to write {out} from them"
        + ("" if store_given else f", or delete {folder}")
        + "\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]  # no half file
    monkeypatch.undo()
    assert main([*MC_CHUNKED, "--out", str(out), *extra]) == 0
    assert capsys.readouterr().err.startswith("resumed: reused 2 finished chunks of 2")
    import pyarrow.parquet as pq

    assert pq.read_metadata(out).num_rows == 8192


def _size_of(folder) -> str:
    from econ.files import size_text

    return size_text(sum(p.stat().st_size for p in folder.glob("chunk-*.parquet")))


# --- 5: integer fields are written as whole numbers in JSON and CSV -----------------------------

GPU_GRID = ["sweep", str(SEED), "--grid", "fleet.gpu_count=72,144"]


def test_a_sweep_over_an_integer_field_writes_it_as_whole_numbers_in_json(capsys):
    """ "inputs": {"fleet.gpu_count": 72.0} and "grid": [72.0, 144.0], where the tornado's JSON
    wrote 72 (fleet.gpu_count is an int field of the scenario: econ.scenario.models)."""
    assert main([*GPU_GRID, "--format", "json"]) == 0
    text = capsys.readouterr().out
    data = json.loads(text)
    inputs = [s["inputs"]["fleet.gpu_count"] for s in data["scenarios"]]
    grid = data["metadata"]["plan"]["grid"]["fleet.gpu_count"]
    assert inputs == grid == [72, 144]
    assert all(type(v) is int for v in [*inputs, *grid])  # (72 == 72.0 in Python)
    assert "72.0" not in text and "144.0" not in text


def test_an_optional_integer_field_left_unset_is_null_in_the_grid(capsys):
    assert main(["sweep", str(SEED), "--grid", "horizon_months=60,none", "--format", "json"]) == 0
    grid = json.loads(capsys.readouterr().out)["metadata"]["plan"]["grid"]["horizon_months"]
    assert grid == [60, None] and type(grid[0]) is int


def test_a_sweep_over_an_integer_field_writes_it_as_whole_numbers_in_csv(tmp_path, capsys):
    import pandas as pd
    import pyarrow.parquet as pq

    assert main([*GPU_GRID, "--format", "csv"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    assert printed["fleet.gpu_count"].tolist() == ["72", "144"]  # as written, not 72.0
    assert main([*GPU_GRID, "--out", str(tmp_path / "r.csv")]) == 0
    written = pd.read_csv(tmp_path / "r.csv")
    assert written["fleet.gpu_count"].dtype.kind == "i"  # read back as integers
    assert written["fleet.gpu_count"].tolist() == [72, 144]
    # Parquet keeps float64 for every numeric column (docs/exports.md: one dataset across runs)
    assert main([*GPU_GRID, "--out", str(tmp_path / "r.parquet")]) == 0
    field = pq.read_schema(tmp_path / "r.parquet").field("fleet.gpu_count")
    assert str(field.type) == "double"


def test_rows_csv_writes_an_unset_optional_integer_as_an_empty_field():
    import numpy as np
    import pandas as pd

    from econ.analysis.output import rows_csv_text, whole_number_columns

    frame = pd.DataFrame(
        {"fleet.racks": [1.0, np.nan], "utilization.share": [0.5, 0.6], "npv_usd": [3.0, -2.5]}
    )
    assert whole_number_columns(frame.columns) == ["fleet.racks"]
    assert rows_csv_text(frame) == ("fleet.racks,utilization.share,npv_usd\n1,0.5,3.0\n,0.6,-2.5\n")
    assert frame["fleet.racks"].dtype == float  # the caller's frame is left as it was


# --- 1: the --out file's disk is checked before the run, and a write it cannot take says why -----

MC_OUT = [*MC_CHUNKED[:3], "12288", *MC_CHUNKED[4:]]  # three chunks of 4,096


def _chunk_bytes(tmp_path) -> int:
    """The bytes of the run's chunk files, written by the run itself (a folder of their own)."""
    probe = tmp_path / "probe"
    assert main([*MC_OUT, "--chunks", str(probe), "--format", "json"]) == 0
    return sum(p.stat().st_size for p in probe.glob("chunk-*.parquet"))


def _free(monkeypatch, free: int, only=None) -> None:
    """The disk of every folder has `free` bytes free; or, with `only`, that folder is on a
    disk of its own with `free` bytes free."""
    import dataclasses
    import shutil

    from econ.analysis import runner

    if only is None:
        real_usage = shutil.disk_usage
        monkeypatch.setattr(shutil, "disk_usage", lambda p: real_usage(p)._replace(free=free))
        return
    real = runner._disk

    def disk(folder):
        found = real(folder)
        return dataclasses.replace(found, free=free, device=-1) if folder == only else found

    monkeypatch.setattr(runner, "_disk", disk)


def test_an_out_file_that_would_not_fit_beside_its_chunk_files_is_refused(
    tmp_path, monkeypatch, capsys
):
    """The chunk files alone were checked: 300,000 scenarios on a 40 MB disk ran 16 s, then
    the --out file (about as large as the chunk files) found the disk full, and a rerun could
    never succeed (the chunk files it is written from filled the disk)."""
    size = _chunk_bytes(tmp_path)
    capsys.readouterr()
    free = size * 3 // 2  # room for the chunk files, not for them and the Parquet file
    _free(monkeypatch, free)
    out = tmp_path / "mc.parquet"
    assert main([*MC_OUT, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: the Monte Carlo run writes its 12,288 rows to chunk files in {out}.chunks: about "
    )
    assert f" bytes per row), and then to {out} from them, about " in err
    assert ", on the same disk: " in err and " in all, more than the " in err
    assert "free on that disk; free some space, put --out or the chunk files (--chunks DIR) " in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probe"]  # nothing run, nothing left


def test_an_out_file_on_another_disk_is_checked_before_the_run(tmp_path, monkeypatch, capsys):
    """With --chunks on another disk the --out disk was not checked: on a 64 kB disk every row
    was computed before the write failed."""
    (tmp_path / "small").mkdir()
    out, chunks = tmp_path / "small" / "mc.parquet", tmp_path / "ck"
    _free(monkeypatch, 65_536, only=out.parent)
    assert main([*MC_OUT, "--chunks", str(chunks), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: the Monte Carlo run writes its 12,288 rows to {out} after the run, from its "
        f"chunk files in {chunks} (on another disk): about "
    )
    assert err.endswith(
        " kB, more than the 64.0 kB free on that disk; free some space there, give --out a file "
        "on another disk (out_file= from Python), or run fewer scenarios\n"
    )
    assert not chunks.exists()  # refused before any chunk ran


def test_a_rerun_whose_out_file_cannot_fit_beside_its_chunk_files_is_refused(
    tmp_path, monkeypatch, capsys
):
    size = _chunk_bytes(tmp_path)
    capsys.readouterr()
    chunks = tmp_path / "probe"
    _free(monkeypatch, size // 2)
    out = tmp_path / "mc.parquet"
    assert main([*MC_OUT, "--chunks", str(chunks), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: the Monte Carlo run writes its 12,288 rows to {out} after the run, from its "
        f"chunk files in {chunks} (all written, on the same disk): about "
    )
    assert not out.exists()


def test_the_python_api_checks_the_out_files_disk(base, tmp_path, monkeypatch):
    from econ.analysis import montecarlo
    from econ.errors import InputError

    (tmp_path / "small").mkdir()
    _free(monkeypatch, 1000, only=tmp_path / "small")
    dists = {"utilization.share": "uniform(0.5,0.9)"}
    with pytest.raises(InputError, match=r"more than the 1000 bytes free on that disk; "):
        montecarlo(base, dists, 4096, store=tmp_path / "ck", out_file=tmp_path / "small" / "mc.csv")


@pytest.mark.parametrize("store_given", [False, True])
def test_an_out_file_the_disk_cannot_take_says_how_much_it_needs(
    store_given, tmp_path, monkeypatch, capsys
):
    """The advice was "rerun the same command to write mc.parquet from them", which fails the
    same way while the chunk files fill the disk."""
    import shutil

    from econ.analysis import output
    from econ.files import WriteError

    out = tmp_path / "mc.parquet"
    folder = tmp_path / "ck" if store_given else tmp_path / "mc.parquet.chunks"
    real = shutil.disk_usage

    def full(payloads, overwrite=False):  # the disk fills during the run, by others' files
        monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=1000))
        raise WriteError(
            f"{out}: cannot write it: the disk is full (no space left on device); nothing was "
            "written"
        )

    monkeypatch.setattr(output, "write_files", full)
    extra = ["--chunks", str(folder)] if store_given else []
    assert main([*MC_OUT, "--out", str(out), *extra]) == 3
    err = capsys.readouterr().err
    files = sorted(folder.glob("chunk-*.parquet"))
    size = sum(p.stat().st_size for p in files)  # a Parquet --out takes about as much
    from econ.analysis.runner import _compared_sizes
    from econ.files import size_text

    need, free = _compared_sizes(size, 1000)
    elsewhere = (
        "rerun it with --out on another disk (the chunk files are reused)"
        if store_given
        else f"write it on another disk from them: rerun it with --chunks {folder} --out "
        f"OTHER_DISK/mc.parquet (the chunk files are reused; delete {folder} after)"
    )
    assert err == (
        f"error: {out}: cannot write it: the disk is full (no space left on device); nothing was "
        f"written; {out} needs about {need}, more than the {free} free on its disk; the run's 3 "
        f"chunk files ({size_text(size)}) are kept in {folder}, on the same disk: free at least "
        f"{size_text(size - 1000)} more there and rerun the same command, or {elsewhere}\n"
    )
    assert len(files) == 3 and not out.exists()


def test_the_csv_out_file_estimate_is_near_the_file_written(base, tmp_path):
    """A CSV rows file takes about twice its chunk files (numbers as text): its estimate is
    measured from the run's own rows, written as the file writes them."""
    from econ.analysis import montecarlo
    from econ.analysis.output import rows_file_bytes, write_rows

    dists = {"utilization.share": "uniform(0.5,0.9)", "fleet.gpu_count": "discrete(72,144)"}
    result = montecarlo(base, dists, 12_288, store=tmp_path / "ck", chunk_size=4096)
    written = write_rows(result, tmp_path / "mc.csv")
    size = sum(p.stat().st_size for p in written)
    assert 0.9 < rows_file_bytes(result, tmp_path / "mc.csv") / size < 1.1
    chunks = sum(p.stat().st_size for p in (tmp_path / "ck").glob("chunk-*.parquet"))
    assert size > 1.5 * chunks
