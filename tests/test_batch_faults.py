"""Faults of batch runs, with real processes: a killed worker, a killed parent, Ctrl-C.

A worker killed in the middle of `econ montecarlo --engine process` ends the run with exit code 3
and one line saying to rerun the same command (which resumes from the finished chunks), not a
BrokenProcessPool traceback. A killed parent leaves no worker, forkserver or resource tracker
behind. Ctrl-C (SIGINT to the whole process group, as a terminal sends it) under the Dask engine
prints one line and exits 130. Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from econ.analysis import executors
from tests.conftest import ROOT

psutil = pytest.importorskip("psutil")

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
TIMEOUT_S = 300.0


def command(chunks: Path, out: Path | None = None, engine: str = "process") -> list[str]:
    cmd = [
        sys.executable, "-m", "econ", "montecarlo", str(SEED_FILE), "-n", "200000",
        "--dist", "market.price_decline_annual=triangular(0.15,0.3,0.5)",
        "--engine", engine, "--workers", "2", "--chunk-size", "4096",
        "--chunks", str(chunks), "--no-progress", "--format", "json",
    ]  # fmt: skip
    return cmd + (["--out", str(out)] if out else [])


def _interruptible() -> None:
    """SIGINT as a terminal leaves it: a test suite started in the background by a
    non-interactive shell (`make test &`) inherits SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler, so the run would finish with exit 0 instead of stopping."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(cmd: list[str], stderr: Path) -> subprocess.Popen:
    with open(stderr, "wb") as err:
        return subprocess.Popen(
            cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True, preexec_fn=_interruptible,
        )  # fmt: skip


def wait_for(condition, what: str, timeout_s: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def chunk_files(folder: Path) -> list[Path]:
    return list(folder.glob("*.parquet")) if folder.exists() else []


def family(pid: int) -> tuple[list, list]:
    """(every descendant, the pool's workers): the resource tracker and the forkserver are the
    parent's children, the workers the forkserver's."""
    everyone = psutil.Process(pid).children(recursive=True)
    workers = [
        p for p in everyone
        if p.ppid() != pid and "forkserver" in " ".join(p.cmdline())
    ]  # fmt: skip
    return everyone, workers


def running(procs) -> list:
    alive = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.fixture
def started():
    """Processes the test started; any still running at the end are killed, by pid."""
    procs: list = []
    yield procs
    for p in running(procs):
        p.kill()


def run_until_workers_compute(tmp_path, started, out=None):
    chunks = tmp_path / "chunks"
    stderr = tmp_path / "stderr.txt"
    proc = start(command(chunks, out), stderr)
    started.append(psutil.Process(proc.pid))
    wait_for(lambda: len(family(proc.pid)[1]) == 2 and chunk_files(chunks), "a finished chunk")
    everyone, workers = family(proc.pid)
    started.extend(everyone)
    return proc, chunks, stderr, everyone, workers


def test_a_killed_worker_ends_the_run_with_exit_3_and_a_rerun_resumes(tmp_path, started):
    out = tmp_path / "mc.parquet"
    proc, chunks, stderr, everyone, workers = run_until_workers_compute(tmp_path, started, out)
    workers[0].send_signal(signal.SIGKILL)
    assert proc.wait(timeout=TIMEOUT_S) == 3
    text = stderr.read_text()
    assert "Traceback" not in text and "BrokenProcessPool" not in text
    assert text.count("\n") == 1, text
    assert "a worker process of the process engine ended" in text
    assert f"finished chunks are saved in {chunks}; rerun the same command to resume" in text
    wait_for(lambda: not running(everyone), "the pool's processes to end", 60)
    kept = len(chunk_files(chunks))
    assert kept >= 1

    again = start(command(chunks, out), tmp_path / "stderr2.txt")
    started.append(psutil.Process(again.pid))
    assert again.wait(timeout=TIMEOUT_S) == 0, (tmp_path / "stderr2.txt").read_text()
    rows = pd.read_parquet(out)
    assert len(rows) == 200_000 and rows["scenario"].is_monotonic_increasing
    assert rows["npv_usd"].notna().all()


def test_workers_forkserver_and_resource_tracker_end_when_the_parent_is_killed(
    tmp_path, started
):
    proc, chunks, stderr, everyone, workers = run_until_workers_compute(tmp_path, started)
    kinds = " ".join(" ".join(p.cmdline()) for p in everyone)
    assert "resource_tracker" in kinds and "forkserver" in kinds and len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    wait_for(lambda: not running(everyone), "the orphaned pool processes to end", 60)


def test_the_watch_tells_a_live_parent_from_a_dead_or_reused_pid():
    me = os.getpid()
    assert executors._parent_alive(me, executors._start_time(me))
    assert not executors._parent_alive(me, "0")  # same pid, another start time: another process
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=60)
    assert not executors._parent_alive(child.pid, executors._start_time(me))
    assert executors._parent_alive(me, None)  # no /proc: os.kill(pid, 0)


@pytest.mark.parametrize("engine", ["dask", "process"])
def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_process(tmp_path, started, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    chunks = tmp_path / "chunks"
    stderr = tmp_path / "stderr.txt"
    proc = start(command(chunks, engine=engine), stderr)
    started.append(psutil.Process(proc.pid))
    wait_for(lambda: chunk_files(chunks), "a finished chunk")
    everyone = psutil.Process(proc.pid).children(recursive=True)
    started.extend(everyone)
    assert len(everyone) >= 2  # the workers (and their helpers) share the process group
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=TIMEOUT_S) == 130
    text = stderr.read_text()
    assert text == (
        f"interrupted: finished chunks are saved in {chunks}; rerun the same command to resume\n"
    )
    wait_for(lambda: not running(everyone), "the workers to end", 60)


def test_a_lost_worker_without_chunk_files_says_how_to_keep_them(monkeypatch, capsys):
    from econ.cli import main

    def lost(self, func, tasks):
        raise executors.WorkerLostError("a worker process of the process engine ended")
        yield

    monkeypatch.setattr(executors.SerialExecutor, "map_unordered", lost)
    argv = ["montecarlo", str(SEED_FILE), "-n", "100", "--no-progress",
            "--dist", "market.price_decline_annual=triangular(0.15,0.3,0.5)"]  # fmt: skip
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err == (
        "error: a worker process of the process engine ended; rerun the same command "
        "(with --chunks DIR to keep finished chunks)\n"
    )
