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
