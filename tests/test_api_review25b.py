"""Defects an outside review of econ as a Python library found in the batch layer (round 25,
econ.batch, econ.analysis.executors, econ.analysis.runner): each test fails on the code before
its fix."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import types
import warnings

import pytest

from econ import load_scenario
from econ.cli import main
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
DIST = {"utilization.share": "uniform(0.5,0.9)"}
CLI_DIST = ["--dist", "utilization.share=uniform(0.5,0.9)"]


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


# --- 1: a batch's repr is one short line ------------------------------------------------------


def test_the_repr_of_a_large_batch_is_one_short_line(base):
    """repr(ScenarioBatch.repeat(base, 100_000)) was 413,642 characters, 400,000 of them the
    row warnings (100,000 empty tuples)."""
    from econ.batch import ScenarioBatch

    batch = ScenarioBatch.repeat(base, 100_000)
    text = repr(batch)
    assert "\n" not in text and len(text) < 300, len(text)
    names = ", ".join(repr(str(name)) for name in batch.names[:3])
    assert text == (
        f"<ScenarioBatch: 100,000 scenarios, 100,000 rows, horizon {base.horizon} months; "
        f"[{names}, ... (99,997 more)]; {len(batch.columns)} columns; "
        "see .names, .columns, .row_warnings>"
    )


def test_the_repr_counts_the_rows_of_vintages_and_spans_the_horizons(base):
    from econ.batch import ScenarioBatch

    refresh = load_scenario(REFRESH)
    one = ScenarioBatch.from_scenarios(refresh)
    rows = 1 + len(refresh.vintages)  # its own fleet and each vintage
    assert rows == 2 and one.rows == rows
    assert repr(one).startswith(
        f"<ScenarioBatch: 1 scenario, 2 rows, horizon {refresh.horizon} months; "
        f"['{refresh.name}']; "
    )
    varied = ScenarioBatch.repeat(base, 3, {"horizon_months": [36, 60, 48]})
    assert ", horizon 36-60 months; " in repr(varied)
    assert "(" not in repr(varied).split("]")[0]  # three names: all shown, none "more"


# --- 2: make_executor's notes are warnings from Python, note lines from the CLI -----------------


def quiet_stderr(capsys, call):
    """`call()` with ExecutorNote ignored: what it printed on stderr by itself."""
    from econ.analysis.executors import ExecutorNote

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExecutorNote)
        result = call()
    return result, capsys.readouterr().err


def test_workers_beside_the_serial_engine_are_a_warning_not_a_print(capsys):
    """make_executor("serial", workers=2) printed "note: ...; --workers is ignored" on stderr,
    in the CLI's words, whatever the caller."""
    from econ.analysis import make_executor
    from econ.analysis.executors import ExecutorNote, SerialExecutor

    executor, err = quiet_stderr(capsys, lambda: make_executor("serial", workers=2))
    assert isinstance(executor, SerialExecutor) and err == ""
    with pytest.warns(ExecutorNote) as said:
        make_executor("serial", workers=2)
    assert [str(w.message) for w in said] == [
        "the serial engine uses one worker; --workers (workers= from Python) is ignored"
    ]
    assert issubclass(ExecutorNote, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_executor("serial", workers=1)  # nothing to say
        make_executor("serial")


def closed_port() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def test_workers_beside_a_scheduler_are_a_warning_from_python(capsys):
    pytest.importorskip("distributed")
    from econ.analysis import make_executor
    from econ.analysis.executors import ExecutorError

    address = closed_port()

    def call():
        with pytest.raises(ExecutorError, match="connection refused"):
            make_executor("dask", workers=2, scheduler=address, timeout_s=1)

    assert quiet_stderr(capsys, call)[1] == ""


def test_the_cli_prints_the_executor_notes_as_note_lines(capsys):
    args = ["montecarlo", str(SEED), "-n", "10", *CLI_DIST, "--output", "npv_usd"]
    assert main([*args, "--format", "csv", "--workers", "2"]) == 0
    assert capsys.readouterr().err == (
        "note: the serial engine uses one worker; --workers (workers= from Python) is ignored\n"
    )


def test_the_cli_prints_the_note_of_workers_beside_a_scheduler_before_its_error(capsys):
    pytest.importorskip("distributed")
    address = closed_port()
    args = ["montecarlo", str(SEED), "-n", "10", *CLI_DIST, "--engine", "dask"]
    assert main([*args, "--workers", "4", "--scheduler", address]) == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        f"note: the Dask cluster at {address} runs the workers connected to it; --workers "
        "(workers= from Python) is ignored"
    )
    assert lines[1].startswith(f"error: cannot reach the Dask scheduler at {address}: ")
    assert len(lines) == 2


def test_the_cli_prints_the_note_of_workers_beyond_the_cpus(monkeypatch, capsys):
    from econ.analysis import executors

    monkeypatch.setattr(executors, "usable_cpus", lambda: 1)
    args = ["montecarlo", str(SEED), "-n", "10", *CLI_DIST, "--output", "npv_usd"]
    assert main([*args, "--format", "csv", "--engine", "process", "--workers", "2"]) == 0
    assert capsys.readouterr().err == (
        "note: 2 workers share this process's 1 CPU: the run is no faster than with 1, and each "
        "worker takes memory of its own\n"
    )


def test_other_warnings_pass_through_the_cli_as_they_came(monkeypatch):
    """The CLI records make_executor's warnings to print its notes: any other is warned again,
    not swallowed."""
    from econ.analysis import executors
    from econ.commands import batch as commands

    def make(*args):
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
        return executors.SerialExecutor()

    monkeypatch.setattr(executors, "make_executor", make)
    options = types.SimpleNamespace(engine="serial", workers=None, scheduler=None)
    with pytest.warns(RuntimeWarning, match="something else"):
        commands._make_executor(options)


# --- 3: a run's notes from Python are the CLI's ---------------------------------------------------


def test_a_chunk_size_rounded_up_is_in_the_runs_notes(base, capsys):
    """montecarlo(..., chunk_size=100) ran chunks of 4,096 rows with `notes == []`: only the
    CLI said so, and only the metadata's chunk_size / chunk_size_asked recorded it."""
    from econ.analysis import montecarlo
    from econ.analysis.montecarlo import BLOCK_SIZE

    rows = -(-100 // BLOCK_SIZE) * BLOCK_SIZE  # whole sampling blocks: 1 block of 4,096
    note = (
        f"--chunk-size 100 (chunk_size= from Python) is rounded up to {rows:,} rows, whole "
        f"sampling blocks of {BLOCK_SIZE:,} rows, so that the draws do not depend on the chunk size"
    )
    run = montecarlo(base, DIST, 5000, chunk_size=100, outputs="npv_usd")
    assert run.notes == [note] == run.metadata["notes"]
    assert (run.metadata["chunk_size"], run.metadata["chunk_size_asked"]) == (rows, 100)
    assert "; 1 note (.notes); " in repr(run)
    # whole blocks, or one chunk that holds the run whatever its size: nothing to say
    for size, n in ((BLOCK_SIZE, 5000), (100, 100)):
        assert montecarlo(base, DIST, n, chunk_size=size, outputs="npv_usd").notes == []
    # the command line prints the note from the run's notes, once
    args = ["montecarlo", str(SEED), "-n", "5000", *CLI_DIST, "--output", "npv_usd"]
    assert main([*args, "--format", "csv", "--chunk-size", "100"]) == 0
    assert capsys.readouterr().err == f"note: {note}\n"


def test_the_held_loan_is_in_the_runs_notes(base, capsys):
    """hold_debt=True said what loan it held only in metadata["held_loan"]; repr said 0 notes."""
    from econ.analysis import montecarlo
    from econ.analysis.runner import HELD_NOTE

    dist = {"market.price_usd_per_mtok": "uniform(0.15,0.45)"}
    run = montecarlo(base, dist, 300, hold_debt=True, outputs="npv_usd")
    held = run.metadata["held_loan"]["note"]
    assert held.startswith("every scenario holds deepseek-r1-gb200-nvl72's sized loan: ")
    assert HELD_NOTE == "held loan: "
    assert run.notes == [f"held loan: {held}"] == run.metadata["notes"]
    assert "; 1 note (.notes); " in repr(run)
    # the command line prints it as it did, once, from the run's notes
    args = ["montecarlo", str(SEED), "--dist", "market.price_usd_per_mtok=uniform(0.15,0.45)"]
    assert main([*args, "-n", "300", "--hold-debt", "--output", "npv_usd", "--format", "csv"]) == 0
    assert capsys.readouterr().err == f"held loan: {held}\n"


def test_the_held_loan_comes_before_the_other_notes(base, capsys):
    from econ.analysis import montecarlo

    dist = {"market.price_usd_per_mtok": "uniform(0.15,0.45)"}
    run = montecarlo(base, dist, 5000, hold_debt=True, chunk_size=100, outputs="npv_usd")
    assert [note.split(" ", 2)[:2] for note in run.notes] == [
        ["held", "loan:"],
        ["--chunk-size", "100"],
    ]
    args = ["montecarlo", str(SEED), "--dist", "market.price_usd_per_mtok=uniform(0.15,0.45)"]
    args += ["-n", "5000", "--hold-debt", "--output", "npv_usd", "--format", "csv"]
    assert main([*args, "--chunk-size", "100"]) == 0
    assert capsys.readouterr().err.splitlines() == [run.notes[0], f"note: {run.notes[1]}"]


# --- 4: a script read from standard input gets one clear error -----------------------------------

STDIN_SCRIPT = """\
from econ.analysis import make_executor
if __name__ == "__main__":
    with make_executor({engine!r}, workers=1) as executor:
        print(list(executor.map_unordered(abs, [-3])))
"""


def python(args, tmp_path, stdin=None):
    return subprocess.run(
        [sys.executable, *args], input=stdin, cwd=tmp_path, capture_output=True, text=True,
        timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


@pytest.mark.parametrize("engine", ["process", "dask"])
def test_a_script_read_from_stdin_gets_one_clear_error(tmp_path, engine):
    """`python - <<EOF` with make_executor("process") failed as WorkerLostError "a worker
    process ... was killed or ran out of memory" (each worker tried to run '<stdin>' again),
    and with "dask" as RuntimeError "Nanny failed to start" after a traceback per worker."""
    if engine == "dask":
        pytest.importorskip("distributed")
    done = python(["-"], tmp_path, STDIN_SCRIPT.format(engine=engine))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        f"econ.analysis.executors.ExecutorError: make_executor({engine!r}) is called from a "
        f"script read from standard input: the {engine} engine starts its workers by running the "
        "main script again, and only a script saved in a file can be; save it to a file, with "
        'the code that runs the batch under `if __name__ == "__main__":` (docs/batch.md, '
        'Python API), or use the serial engine (make_executor("serial"))'
    )
    for text in ("No such file", "killed", "Nanny", "<stdin>'"):
        assert text not in done.stderr


def test_python_c_and_python_m_still_start_their_workers(tmp_path):
    """A main module without a file (`python -c`, the REPL, a notebook) and one imported by name
    (`python -m`) run nothing again in the workers: they are not refused."""
    code = STDIN_SCRIPT.format(engine="process")
    done = python(["-c", code], tmp_path)
    assert (done.returncode, done.stdout) == (0, "[3]\n"), done.stderr
    (tmp_path / "batch_module.py").write_text(code)
    done = python(["-m", "batch_module"], tmp_path)
    assert (done.returncode, done.stdout) == (0, "[3]\n"), done.stderr


def test_a_notebooks_main_module_is_not_refused(monkeypatch):
    """A notebook's (ipykernel's) __main__ has neither a file nor a module spec, as `python -c`;
    one whose file is gone is refused as standard input is."""
    from econ.analysis import executors, make_executor

    notebook = types.ModuleType("__main__")
    notebook.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", notebook)
    assert executors._unrunnable_main() is None
    with make_executor("process", workers=1) as executor:
        assert list(executor.map_unordered(abs, [-3])) == [3]
    gone = str(ROOT / "no-such-script.py")
    notebook.__file__ = gone
    with pytest.raises(
        executors.ExecutorError, match=f"called from {gone}, which no longer exists"
    ):
        make_executor("process", workers=1)
    notebook.__file__ = "<stdin>"
    assert executors._unrunnable_main() == "a script read from standard input"


# --- 5: the environment of a local Dask cluster is put back at close -----------------------------

STARTED = ("MALLOC_ARENA_MAX", "OMP_NUM_THREADS", "__DASK_PARENT_PID")


def test_closing_a_local_cluster_puts_back_the_environment(monkeypatch):
    """After `with make_executor("dask", workers=2): ...`, os.environ kept MALLOC_ARENA_MAX=1
    (econ's), Dask's OMP/MKL/OPENBLAS_NUM_THREADS=1 and PYTHONHASHSEED."""
    pytest.importorskip("distributed")
    from econ.analysis import make_executor

    for name in STARTED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # Dask's nanny replaces 0 with its own seed
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # one the caller set: Dask keeps it
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    with make_executor("dask", workers=1):
        inside = {name: os.environ.get(name) for name in (*STARTED, "PYTHONHASHSEED")}
        # set by the caller while the cluster runs: theirs, left as it is
        os.environ["OPENBLAS_NUM_THREADS"] = "2"
    assert inside["MALLOC_ARENA_MAX"] == "1" and inside["OMP_NUM_THREADS"] == "1"
    assert inside["__DASK_PARENT_PID"] == str(os.getpid())
    assert inside["PYTHONHASHSEED"] not in (None, "0")
    assert {name: os.environ.get(name) for name in STARTED} == dict.fromkeys(STARTED)
    assert os.environ["PYTHONHASHSEED"] == "0"
    assert os.environ["MKL_NUM_THREADS"] == "3"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"
