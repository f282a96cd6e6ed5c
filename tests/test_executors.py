"""Executors (serial, local processes, a real Dask LocalCluster) and chunk files with resume."""

from __future__ import annotations

import importlib
import json
import logging
import socket
import time

import numpy as np
import pandas as pd
import pytest

from econ.analysis import executors
from econ.analysis.chunks import ChunkStoreError, read_metadata
from econ.analysis.executors import ExecutorError, SerialExecutor, make_executor
from econ.analysis.montecarlo import MonteCarlo, MonteCarloPlan
from econ.analysis.runner import run
from econ.analysis.sweeps import sweep
from econ.cli import main
from econ.scenario import validate_dict
from tests.conftest import ROOT

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
BASE = validate_dict(
    {
        "name": "exec",
        "horizon_months": 36,
        "fleet": {"gpu_count": 8},
        "capex": {"gpu_price_usd": 30000.0},
        "depreciation": {"life_years": 3.0},
        "throughput": {"tokens_per_s_per_gpu": 2000.0},
        "financing": {"debt_share": 0.5},
        "market": {"price_usd_per_mtok": 1.0},
    }
)
DISTS = {
    "market.price_usd_per_mtok": "triangular(0.4, 1, 2)",
    "utilization.share": "uniform(0.4, 0.9)",
    "financing.debt_rate_quote": "discrete(nominal, effective)",
}
N, BLOCK, CHUNK = 1200, 100, 300


def plan(seed: int = 7) -> MonteCarloPlan:
    from econ.analysis.montecarlo import parse_dists

    dists = parse_dists([f"{k}={v}" for k, v in DISTS.items()])
    return MonteCarloPlan(dists, N, seed, block_size=BLOCK)


def reference():
    return run(MonteCarlo(BASE, plan()), chunk_size=CHUNK, keep_rows=True, summarize=True)


@pytest.fixture(scope="module")
def serial_result():
    return reference()


@pytest.fixture(scope="module")
def dask_executor():
    pytest.importorskip("distributed")
    executor = make_executor("dask", workers=2)
    yield executor
    executor.close()


def assert_same_result(a, b):
    pd.testing.assert_frame_equal(a.rows, b.rows, check_exact=True)
    assert json.dumps(a.summary.as_dict()) == json.dumps(b.summary.as_dict())


def test_local_processes_give_identical_results(serial_result):
    with make_executor("process", workers=2) as executor:
        result = run(MonteCarlo(BASE, plan()), executor, CHUNK, keep_rows=True, summarize=True)
    assert_same_result(serial_result, result)
    assert result.metadata["engine"] == {"engine": "process", "workers": 2}


def test_dask_local_cluster_with_two_worker_processes(serial_result, dask_executor):
    info = dask_executor._client.scheduler_info()
    assert len(info["workers"]) == 2
    result = run(MonteCarlo(BASE, plan()), dask_executor, CHUNK, keep_rows=True, summarize=True)
    assert_same_result(serial_result, result)
    assert result.metadata["engine"]["engine"] == "dask"


def _malloc_environment():
    import os

    return {k: os.environ.get(k) for k in ("MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_")}


def _quiet_settings():
    import dask

    from econ.analysis.executors import QUIET_CLUSTER

    return {key: dask.config.get(key) for key in QUIET_CLUSTER}


def test_dask_local_workers_get_one_malloc_arena_and_no_trim_threshold(dask_executor):
    seen = dask_executor._client.run(_malloc_environment)
    assert len(seen) == 2
    for environment in seen.values():
        assert environment == {"MALLOC_ARENA_MAX": "1", "MALLOC_TRIM_THRESHOLD_": None}


def test_dask_local_workers_run_without_profiler_and_stealing(dask_executor):
    from econ.analysis.executors import QUIET_CLUSTER

    seen = dask_executor._client.run(_quiet_settings)
    assert len(seen) == 2
    for settings in seen.values():
        assert settings == QUIET_CLUSTER
    assert QUIET_CLUSTER["distributed.worker.profile.enabled"] is False


def test_a_local_cluster_listens_on_this_host_only_and_never_on_port_8787(dask_executor):
    """Two clusters at once (two runs, or port 8787 taken by anything) printed "Port 8787 is
    already in use" (dask/distributed#8136: dashboard_address=None still binds 8787)."""
    import socket
    import warnings

    held = socket.socket()
    try:
        held.bind(("127.0.0.1", 8787))
    except OSError:
        held.close()
        held = None  # something else holds it: the check below stands all the same
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            second = make_executor("dask", workers=1)
            second.close()
    finally:
        if held is not None:
            held.close()
    assert not [w for w in caught if "8787" in str(w.message)], [str(w.message) for w in caught]
    sockets = dask_executor._cluster.scheduler.http_server._sockets.values()
    assert {s.getsockname()[0] for s in sockets} == {"127.0.0.1"}
    assert 8787 not in {s.getsockname()[1] for s in sockets}


def test_dask_sweep_and_errors_raised_in_workers(dask_executor):
    grid = {"depreciation.life_years": [2, 3], "utilization.share": [0.5, 0.7, 0.9]}
    local = sweep(BASE, grid=grid, chunk_size=2)
    remote = sweep(BASE, grid=grid, chunk_size=2, executor=dask_executor)
    pd.testing.assert_frame_equal(local.rows, remote.rows, check_exact=True)


@pytest.mark.parametrize("engine", ["serial", "process", "dask"])
def test_a_closed_executor_is_refused_as_closed(engine, tmp_path):
    # The process engine answered "RuntimeError: cannot schedule new futures after shutdown".
    if engine == "dask":
        pytest.importorskip("distributed")
    with make_executor(engine, workers=1) as executor:
        pass
    store = tmp_path / "chunks"
    with pytest.raises(ExecutorError) as caught:
        run(MonteCarlo(BASE, plan()), executor, CHUNK, store=store)
    assert str(caught.value) == (
        f"this {engine} executor is closed (by close(), or at the end of its `with` block); "
        f'expected an open one: run inside the block, or make a new one with make_executor("'
        f'{engine}", ...)'
    )
    assert not store.exists()  # refused before the run made anything
    with pytest.raises(ExecutorError, match=f"this {engine} executor is closed"):
        next(executor.map_unordered(abs, [-3]))


def test_unreachable_scheduler_fails_fast_with_a_clear_error():
    pytest.importorskip("distributed")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    began = time.monotonic()
    with pytest.raises(
        ExecutorError, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"
    ):
        make_executor("dask", scheduler=f"tcp://127.0.0.1:{port}", timeout_s=2)
    assert time.monotonic() - began < 60  # bounded by the timeout, not a hang


def test_missing_dask_says_how_to_install(monkeypatch):
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name == "distributed":
            raise ImportError("No module named 'distributed'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(executors.importlib, "import_module", fake)
    with pytest.raises(ExecutorError, match=r"pip install 'econ\[distributed\]'"):
        make_executor("dask")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"engine": "spark"}, "expected one of: serial, process, dask"),
        ({"engine": "process", "workers": 0}, "expected a positive integer"),
        ({"engine": "serial", "scheduler": "tcp://x:1"}, "needs --engine dask"),
    ],
)
def test_bad_executor_arguments(kwargs, message):
    with pytest.raises(ExecutorError, match=message):
        make_executor(**kwargs)


def test_cli_unreachable_scheduler_exits_3(capsys):
    pytest.importorskip("distributed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkey_timeout = executors.CONNECT_TIMEOUT_S
    executors.CONNECT_TIMEOUT_S = 2
    try:
        code = main(
            [
                "montecarlo",
                str(SEED_FILE),
                "--dist",
                "utilization.share=uniform(0.5,0.9)",
                "-n",
                "10",
                "--engine",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{port}",
            ]
        )
    finally:
        executors.CONNECT_TIMEOUT_S = monkey_timeout
    assert code == 3
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


# --- schedulers that accept a connection but are not (working) Dask schedulers ---------------


class Server:
    """A TCP server in a thread on a free port of this host: "silent" accepts connections and
    never answers (a stopped process, a service waiting for its client to speak first);
    "http" answers HTTP text and hangs up (another service on the port)."""

    def __init__(self, kind: str):
        import threading

        self.kind = kind
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            if self.kind == "silent":
                self.held.append(conn)
            else:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
                conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()
        for conn in self.held:
            conn.close()


def _outcome(func, guard_s: float = 120.0):
    """What func() raised (or returned), from a thread joined for at most guard_s: a hang is
    a failure of the test, never a test that runs forever."""
    import threading

    box = {}

    def target():
        try:
            box["value"] = func()
        except BaseException as exc:  # noqa: BLE001 - what the test looks at
            box["value"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(guard_s)
    assert not thread.is_alive(), f"still running after {guard_s} s: a hang"
    return box["value"]


def _econ(*argv: str, guard_s: float = 120.0):
    """`python -m econ ARGV` in a process of its own (its exit shows what lingers)."""
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "econ", *argv], cwd=ROOT, capture_output=True, text=True,
        timeout=guard_s, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


MC_ARGS = (
    "montecarlo", str(SEED_FILE), "--dist", "utilization.share=uniform(0.5,0.9)", "-n", "10",
    "--engine", "dask",
)  # fmt: skip


def test_a_server_that_accepts_and_never_answers_is_an_error_not_a_hang():
    """Client(address, timeout=...) bounded the TCP connection only: a server that accepted it
    and never answered held the handshake (and `econ montecarlo`) for good."""
    pytest.importorskip("distributed")
    with Server("silent") as server:
        got = _outcome(lambda: make_executor("dask", scheduler=server.address, timeout_s=1))
    assert isinstance(got, ExecutorError), got
    assert str(got).startswith(
        f"cannot reach the Dask scheduler at {server.address} within 1 s: nothing answered"
    )


def test_a_scheduler_without_workers_is_an_error_not_a_hang():
    """The worker count was max(1, 0): tasks were sent to a cluster without workers and waited
    forever."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        scheduler_kwargs={"dashboard": False},
    ) as cluster:  # fmt: skip
        address = cluster.scheduler_address
        got = _outcome(lambda: make_executor("dask", scheduler=address, timeout_s=1))
    assert isinstance(got, ExecutorError), got
    assert str(got) == (
        f"the Dask scheduler at {address} has no workers (waited 1 s); start some with "
        f"`dask worker {address}`"
    )


def test_a_service_that_is_not_dask_is_one_line_and_exit_3():
    """HTTP text read as Dask's protocol: "Unable to allocate 3.07 EiB", a traceback, exit 1,
    and a Client.__del__ TimeoutError traceback at exit."""
    pytest.importorskip("distributed")
    with Server("http") as server:
        done = _econ(*MC_ARGS, "--scheduler", server.address)
    assert done.returncode == 3, done.stderr
    assert done.stderr == (
        f"error: cannot connect to the Dask scheduler at {server.address}: what answers there "
        "does not speak Dask's protocol (another service on that port?); expected a running "
        "Dask scheduler, e.g. started with `dask scheduler`, and workers connected to it\n"
    )


@pytest.mark.parametrize(
    "address, reason",
    [
        ("foo://bar", "unknown address scheme 'foo'"),
        ("tcp://127.0.0.1", "missing port number"),
        ("http://127.0.0.1:8786", "unknown address scheme 'http'"),
    ],
)
def test_a_scheduler_address_dask_cannot_use_is_refused_before_connecting(address, reason):
    pytest.importorskip("distributed")
    got = _outcome(lambda: make_executor("dask", scheduler=address, timeout_s=30))
    assert isinstance(got, ExecutorError), got
    assert str(got).startswith(f"scheduler address {address!r} is not valid (")
    assert reason in str(got) and str(got).endswith("expected e.g. tcp://host:8786")


def test_cli_bad_scheduler_scheme_is_one_line_and_nothing_at_exit():
    """`--scheduler foo://bar` was exit 3, with a Client.__del__ TimeoutError traceback."""
    pytest.importorskip("distributed")
    done = _econ(*MC_ARGS, "--scheduler", "foo://bar")
    assert done.returncode == 3
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: scheduler address 'foo://bar' is not valid")


CLIENT_STALLS = """import sys
from econ.analysis import executors

# The scheduler answered the probe, then (the servers here) stops answering or answers garbage
# while the client connects.
executors._probe = lambda address, timeout_s: {{"workers": {{"w": {{"status": "running"}}}}}}
try:
    executors.make_executor("dask", scheduler={address!r}, timeout_s=1)
except executors.ExecutorError as exc:
    print(exc)
"""


@pytest.mark.parametrize("kind", ["silent", "http"])
def test_a_client_that_cannot_connect_leaves_nothing_behind(tmp_path, kind):
    """The client is discarded: no thread holds the process at exit, and its __del__ prints no
    TimeoutError traceback."""
    import os
    import subprocess
    import sys

    pytest.importorskip("distributed")
    script = tmp_path / "stalls.py"
    with Server(kind) as server:
        script.write_text(CLIENT_STALLS.format(address=server.address))
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith(f"cannot connect to the Dask scheduler at {server.address}")


@pytest.mark.parametrize("timeout_s", [0, -1, float("nan"), "10"])
def test_a_connection_timeout_must_be_a_positive_number(timeout_s):
    pytest.importorskip("distributed")
    with pytest.raises(ExecutorError, match="expected a positive number of seconds"):
        make_executor("dask", scheduler="tcp://127.0.0.1:1", timeout_s=timeout_s)


def test_workers_beside_a_scheduler_are_noted_as_ignored(capsys):
    from econ.analysis.executors import ExecutorNote

    pytest.importorskip("distributed")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    note = (
        f"the Dask cluster at {address} runs the workers connected to it; --workers "
        "(workers= from Python) is ignored"
    )
    # from Python a warning (ExecutorNote), which the CLI prints as a note line (tests of
    # econ.commands.batch in test_api_review25b.py)
    with pytest.warns(ExecutorNote) as said, pytest.raises(ExecutorError):
        make_executor("dask", workers=4, scheduler=address, timeout_s=1)
    assert [str(w.message) for w in said] == [note]
    assert capsys.readouterr().err == ""


# --- chunk files and resume -----------------------------------------------------------------


class Interrupting(SerialExecutor):
    """Serial executor that is 'interrupted' (Ctrl-C) after `after` chunks."""

    def __init__(self, after: int):
        self.after = after
        self.calls = 0

    def map_unordered(self, func, tasks):
        for task in tasks:
            if self.calls == self.after:
                raise KeyboardInterrupt
            self.calls += 1
            yield func(task)


class Counting(SerialExecutor):
    def __init__(self):
        self.computed = []

    def map_unordered(self, func, tasks):
        for task in tasks:
            self.computed.append(task.index)
            yield func(task)


def test_interrupted_run_resumes_from_its_chunk_files(tmp_path, serial_result):
    store = tmp_path / "chunks"
    job = MonteCarlo(BASE, plan())
    with pytest.raises(KeyboardInterrupt):
        run(job, Interrupting(after=2), CHUNK, store=store, keep_rows=True, summarize=True)
    assert sorted(p.name for p in store.glob("chunk-*.parquet")) == [
        "chunk-000000.parquet",
        "chunk-000001.parquet",
    ]
    counting = Counting()
    resumed = run(job, counting, CHUNK, store=store, keep_rows=True, summarize=True)
    assert counting.computed == [2, 3]
    assert resumed.resumed == 2
    assert_same_result(serial_result, resumed)
    meta = read_metadata(store / "chunk-000003.parquet")
    assert meta["seed"] == 7 and meta["chunk"] == [3, 900, 1200]
    assert meta["plan"]["distributions"]["utilization.share"]["dist"] == "uniform"
    assert len(meta["scenario_hash"]) == 64


def test_a_damaged_chunk_file_is_recomputed(tmp_path):
    store = tmp_path / "chunks"
    job = MonteCarlo(BASE, plan())
    first = run(job, chunk_size=CHUNK, store=store, keep_rows=True)
    (store / "chunk-000001.parquet").write_bytes(b"not parquet")
    counting = Counting()
    again = run(job, counting, CHUNK, store=store, keep_rows=True)
    assert counting.computed == [1]
    pd.testing.assert_frame_equal(first.rows, again.rows, check_exact=True)


def test_a_chunk_folder_of_another_run_is_refused(tmp_path):
    store = tmp_path / "chunks"
    run(MonteCarlo(BASE, plan(seed=1)), chunk_size=CHUNK, store=store, keep_rows=False)
    with pytest.raises(ChunkStoreError, match="holds chunks of another run.*seed 1"):
        run(MonteCarlo(BASE, plan(seed=2)), chunk_size=CHUNK, store=store, keep_rows=False)
    counting = Counting()
    run(
        MonteCarlo(BASE, plan(seed=2)),
        counting,
        CHUNK,
        store=store,
        keep_rows=False,
        overwrite=True,
    )
    assert counting.computed == [0, 1, 2, 3]


def test_cli_montecarlo_writes_rows_and_resumes_with_chunks(tmp_path, capsys):
    out = tmp_path / "mc.parquet"
    chunks = tmp_path / "parts"
    args = [
        "montecarlo",
        str(SEED_FILE),
        "--dist",
        "utilization.share=uniform(0.5,0.9)",
        "--dist",
        "market.price_decline_annual=pert(0.1,0.3,0.5)",
        "-n",
        "5000",
        "--seed",
        "3",
        "--chunk-size",
        "4096",
        "--chunks",
        str(chunks),
        "--format",
        "json",
    ]
    assert main([*args, "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    frame = pd.read_parquet(out)
    assert len(frame) == 5000 and frame["scenario"].tolist() == list(range(5000))
    assert read_metadata(out)["seed"] == 3
    assert (
        summary["metrics"]["npv_usd"]["count"] + summary["metrics"]["npv_usd"]["undefined"] == 5000
    )
    assert np.mean(frame["npv_usd"] < 0) == pytest.approx(
        summary["npv_risk"]["probability_of_loss"]
    )
    assert chunks.is_dir()  # kept: the user named it
    # A rerun reads every chunk back and prints the same summary.
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == summary["metrics"]


def test_cli_seed_and_size_errors(capsys):
    base = ["montecarlo", str(SEED_FILE), "--dist", "utilization.share=uniform(0.5,0.9)"]
    assert main([*base, "--seed", "abc"]) == 3
    assert "seed = 'abc': expected a non-negative integer" in capsys.readouterr().err
    assert main([*base, "-n", "0"]) == 3
    assert main([*base[:2], "--dist", "utilization.share=normal(0.7,-1)"]) == 3
    assert "sd > 0" in capsys.readouterr().err


def _state_machine_log_level() -> int:
    import logging

    return logging.getLogger("distributed.worker.state_machine").getEffectiveLevel()


def test_our_local_workers_do_not_warn_of_tasks_cancelled_by_ctrl_c(dask_executor):
    """A cancelled task's "ended with CancelledError" warning could reach the terminal after
    Ctrl-C's one line, before close() quieted the workers; the local cluster's workers keep that
    logger at ERROR from the start (and nothing else quieter)."""
    import logging

    levels = dask_executor._client.run(_state_machine_log_level)
    assert len(levels) == 2 and set(levels.values()) == {logging.ERROR}
    worker_log = dask_executor._client.run(
        lambda: logging.getLogger("distributed.worker").getEffectiveLevel()
    )
    assert set(worker_log.values()) != {logging.CRITICAL}  # the workers' other logs still speak


UNGUARDED = """\
from econ.analysis import make_executor
print("top level ran")
executor = make_executor({engine!r}, workers=1)
"""
GUARDED = """\
from econ.analysis import make_executor

if __name__ == "__main__":
    with make_executor("process", workers=1) as executor:
        print(list(executor.map_unordered(abs, [-3])))
"""


@pytest.mark.parametrize("engine", ["process", "dask"])
def test_an_unguarded_script_gets_one_clear_error_before_any_worker_starts(tmp_path, engine):
    """docs/batch.md's snippet pasted into a script: each Dask worker ran the script again and
    failed with "An attempt has been made to start a new process before the current process has
    finished its bootstrapping phase", and the run with "Nanny failed to start"."""
    import os
    import subprocess
    import sys

    script = tmp_path / "batch_script.py"
    script.write_text(UNGUARDED.format(engine=engine))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == "top level ran\n"  # once: no worker ran the script again
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"econ.analysis.executors.ExecutorError: make_executor({engine!r}) is called at the top "
        f'level of {script}, line 3, outside `if __name__ == "__main__":`: the {engine} engine '
        "starts its workers by running that script again, and each would start workers of its "
        'own; put the code that runs the batch under `if __name__ == "__main__":` '
        "(docs/batch.md, Python API), or run it in a notebook"
    )
    assert "bootstrapping" not in done.stderr and "Nanny" not in done.stderr


def test_a_guarded_script_starts_its_workers(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "batch_script.py"
    script.write_text(GUARDED)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[3]\n"


def test_a_chunk_folder_of_another_run_names_what_differs(tmp_path):
    """Not every field of the other run (scenario, seed, n, chunk size, version: all the same),
    but the one that differs, and the Python argument beside the CLI's flag."""
    from econ.analysis.montecarlo import parse_dists

    store = tmp_path / "chunks"
    run(MonteCarlo(BASE, plan()), chunk_size=CHUNK, store=store, keep_rows=False)
    other = {**DISTS, next(iter(DISTS)): "uniform(0.1, 0.2)"}
    changed = MonteCarloPlan(
        parse_dists([f"{k}={v}" for k, v in other.items()]), N, 7, block_size=BLOCK
    )
    with pytest.raises(ChunkStoreError) as caught:
        run(MonteCarlo(BASE, changed), chunk_size=CHUNK, store=store, keep_rows=False)
    message = str(caught.value)
    assert f"which differs in plan: distributions of {next(iter(DISTS))};" in message
    assert "seed" not in message and "chunk size" not in message
    assert "use --force to discard them (overwrite=True from Python)" in message


@pytest.mark.parametrize(
    "command",
    [
        ["sweep", str(SEED_FILE), "--grid", "utilization.share=0.6,0.7"],
        list(MC_ARGS[:-2]),
        ["sensitivity", str(SEED_FILE), "--vary", "utilization.share"],
    ],
    ids=["sweep", "montecarlo", "sensitivity"],
)
def test_ctrl_c_while_connecting_to_a_scheduler_exits_130_quietly(monkeypatch, capsys, command):
    """Found by review: Ctrl-C while the probe waited for a slow scheduler printed a traceback
    (threading's join); it is answered in one line, as a Ctrl-C during the run is."""
    pytest.importorskip("distributed")

    def interrupted(address, timeout_s):
        raise KeyboardInterrupt

    monkeypatch.setattr(executors, "_probe", interrupted)
    # A slow scheduler: the port takes the connection (nothing listens on port 1 here).
    monkeypatch.setattr(executors, "_refuse_closed_port", lambda address, timeout_s: None)
    address = "tcp://127.0.0.1:1"
    capsys.readouterr()
    try:
        code = main([*command, "--engine", "dask", "--scheduler", address])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C left econ.cli.main (a traceback on the command line)")
    captured = capsys.readouterr()
    assert code == 130 and not captured.out
    assert captured.err == (
        f"interrupted while connecting to the Dask scheduler at {address}; nothing was run\n"
    )


def test_a_client_interrupted_while_it_connects_is_discarded(monkeypatch):
    """Ctrl-C while the client connects (in its thread) leaves that thread running: the client
    it makes then is discarded, not left connected with no owner (in a notebook, for one)."""
    import threading

    entered, release = threading.Event(), threading.Event()
    made, threads = [], []

    class Runner:
        stopped = False

        def stop(self, timeout):
            self.stopped = True

    class Client:
        def __init__(self, address, timeout, set_as_default):
            self.status = "running"
            self._loop_runner = Runner()
            made.append(self)
            entered.set()
            release.wait(60)

    class Distributed:
        pass

    Distributed.Client = Client

    def in_thread(func, timeout_s):
        thread = threading.Thread(target=func, daemon=True)
        threads.append(thread)
        thread.start()
        assert entered.wait(60)
        raise KeyboardInterrupt  # as Ctrl-C does while the main thread waits for it

    monkeypatch.setattr(executors, "_in_thread", in_thread)
    with pytest.raises(KeyboardInterrupt):
        executors._client(Distributed, "tcp://127.0.0.1:1", 5)
    release.set()  # the connection succeeds after all
    threads[0].join(60)
    assert not threads[0].is_alive()
    assert made[0].status == "closed" and made[0]._loop_runner.stopped


# --- a disk that fills in the middle of a run ----------------------------------------------------

MC_SMALL = (
    "montecarlo", str(SEED_FILE), "-n", "12288", "--chunk-size", "4096", "--no-progress",
    "--dist", "utilization.share=uniform(0.5,0.9)",
)  # fmt: skip


def _disk_fills_after(monkeypatch, writes: int) -> None:
    """Every file written after the first `writes` (the manifest, then chunk files) finds the
    disk full."""
    import errno

    from econ import files

    real = files._write_payload
    count = {"n": 0}

    def write(handle, payload):
        count["n"] += 1
        if count["n"] > writes:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(handle, payload)

    monkeypatch.setattr(files, "_write_payload", write)


def test_a_disk_full_mid_run_says_the_finished_chunks_are_kept_and_a_rerun_resumes(
    tmp_path, monkeypatch, capsys
):
    """It said "...; nothing was written" while chunks 0-1 were kept and resumable."""
    chunks = tmp_path / "ck"
    _disk_fills_after(monkeypatch, 3)  # the manifest and two chunk files
    assert main([*MC_SMALL, "--chunks", str(chunks)]) == 3
    err = capsys.readouterr().err
    assert err == (
        f"error: {chunks}/chunk-000002.parquet: cannot write it: the disk is full (no space "
        f"left on device); the 2 finished chunks ({_size_of(chunks)}) are kept in {chunks}; "
        "rerun the same command to resume once there is space\n"
    )
    monkeypatch.undo()
    assert main([*MC_SMALL, "--chunks", str(chunks), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metadata"]["n"] == 12288
    assert len(list(chunks.glob("chunk-*.parquet"))) == 3


def _size_of(folder) -> str:
    from econ.files import size_text

    return size_text(sum(p.stat().st_size for p in folder.glob("chunk-*.parquet")))


def test_a_disk_full_mid_run_with_out_says_where_its_chunk_files_are_left(
    tmp_path, monkeypatch, capsys
):
    """The ~2 MB FILE.chunks folder was left filling the disk, the message saying "nothing was
    written"."""
    out = tmp_path / "mc.parquet"
    folder = tmp_path / "mc.parquet.chunks"
    _disk_fills_after(monkeypatch, 2)
    assert main([*MC_SMALL, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err == (
        f"error: {folder}/chunk-000001.parquet: cannot write it: the disk is full (no space "
        f"left on device); the 1 finished chunk ({_size_of(folder)}) is kept in {folder}, the "
        f"chunk files of --out {out}; rerun the same command to resume once there is space, "
        f"or delete {folder}\n"
    )
    assert not out.exists()


def test_an_out_file_the_disk_cannot_take_says_where_the_chunk_files_are_kept(
    tmp_path, monkeypatch, capsys
):
    from econ.analysis import output
    from econ.files import WriteError

    out = tmp_path / "mc.parquet"
    folder = tmp_path / "mc.parquet.chunks"

    def full(payloads, overwrite=False):
        raise WriteError(
            f"{out}: cannot write it: the disk is full (no space left on device); nothing was "
            "written"
        )

    monkeypatch.setattr(output, "write_files", full)
    assert main([*MC_SMALL, "--out", str(out)]) == 3
    assert capsys.readouterr().err == (
        f"error: {out}: cannot write it: the disk is full (no space left on device); nothing "
        f"was written; the run's 3 chunk files ({_size_of(folder)}) are kept in {folder}: "
        f"rerun the same command to write {out} from them, or delete {folder}\n"
    )


def test_sizes_against_the_free_space_are_printed_so_that_they_compare():
    """ "about 2.0 MB ... more than the 2 MB free" read as no more than the free space."""
    from econ.analysis.runner import _compared_sizes

    assert _compared_sizes(2_140_000, 2 << 20) == ("2.04 MB", "2.00 MB")
    assert _compared_sizes(2_098_000, 2 << 20) == ("2.001 MB", "2.000 MB")
    assert _compared_sizes((2 << 20) + 1, 2 << 20) == ("2,097,153 bytes", "2,097,152 bytes")
    assert _compared_sizes(3 << 30, 10_000) == ("3,145,728.0 kB", "9.8 kB")
    assert _compared_sizes(900, 500) == ("900 bytes", "500 bytes")


# --- scheduler addresses refused at once ----------------------------------------------------------


def test_a_refused_port_is_said_as_such_without_waiting_for_the_timeout():
    """Dask's connect retried the refused port until the timeout (11-16 s where 10 s was
    documented) and said "nothing answered there as a Dask scheduler does"."""
    pytest.importorskip("distributed")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    got = _outcome(lambda: make_executor("dask", scheduler=address, timeout_s=600), guard_s=120)
    assert isinstance(got, ExecutorError), got
    assert str(got).startswith(
        f"cannot reach the Dask scheduler at {address}: connection refused (nothing listens on "
        f"port {port} of 127.0.0.1); expected a running Dask scheduler"
    )


def test_a_host_name_that_does_not_resolve_is_said_as_such_without_waiting():
    """Dask's connect retried the name until the timeout, then said "nothing answered there as
    a Dask scheduler does" (12 s at the default 10 s), as if a server were silent there."""
    pytest.importorskip("distributed")
    address = "tcp://no-such-host.invalid:8786"  # .invalid never resolves (RFC 2606)
    got = _outcome(lambda: make_executor("dask", scheduler=address, timeout_s=600), guard_s=120)
    assert isinstance(got, ExecutorError), got
    assert str(got).startswith(
        f"cannot reach the Dask scheduler at {address}: the host name 'no-such-host.invalid' "
        "does not resolve ("
    )
    assert str(got).endswith(
        "); expected a running Dask scheduler, e.g. started with `dask "
        "scheduler`, and workers connected to it"
    )


@pytest.mark.parametrize("port", ["99999", "0", "65536"])
def test_a_port_beyond_the_port_numbers_is_refused_at_once(port):
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{port}"
    got = _outcome(lambda: make_executor("dask", scheduler=address, timeout_s=600), guard_s=120)
    assert isinstance(got, ExecutorError), got
    assert str(got) == (
        f"scheduler address {address!r} is not valid (port {port} is not a port number: "
        "expected 1 to 65535); expected e.g. tcp://host:8786"
    )


@pytest.mark.parametrize("engine", ["dask", "process"])
def test_an_empty_scheduler_address_is_refused_not_a_local_cluster(engine, capsys):
    """`--scheduler ""` (an unset variable in a script) started a local cluster."""
    if engine == "dask":
        pytest.importorskip("distributed")
    assert main([*MC_ARGS[:-1], engine, "--scheduler", ""]) == 3
    err = capsys.readouterr().err
    if engine == "dask":
        assert err == (
            "error: scheduler address '' is empty; expected the address of a Dask scheduler, "
            "e.g. tcp://host:8786, or no scheduler address to start a local cluster\n"
        )
    else:
        assert err == "error: a scheduler address needs --engine dask, got engine 'process'\n"


def test_a_lost_cluster_leaves_distributed_quiet_for_the_rest_of_the_process():
    """The closed client's background sender logged the closed connection with a traceback
    after close() had returned and restored the levels: printed after the run's one-line error
    (one CI run in many). Interrupted runs restore the levels; lost ones keep them quiet."""
    parent, child = logging.getLogger("econtest"), logging.getLogger("econtest.batched")
    child.setLevel(logging.INFO)
    try:
        with executors._quiet_logger("econtest"):
            assert not child.isEnabledFor(logging.ERROR)
        assert child.isEnabledFor(logging.INFO) and parent.level == logging.NOTSET
        with executors._quiet_logger("econtest", restore=False):
            pass
        assert not child.isEnabledFor(logging.ERROR) and not parent.isEnabledFor(logging.ERROR)
    finally:
        parent.setLevel(logging.NOTSET)
        child.setLevel(logging.NOTSET)


def test_the_closed_connection_traceback_of_a_lost_scheduler_is_dropped_while_a_run_is_open():
    """The client's background sender logged "Batched Comm Closed" with a traceback the moment
    the scheduler went, before the run's own one-line error (a CI run in many); a Dask run
    installs this filter for its life, and a second install needs a second removal."""
    assert executors._CLOSED_COMM.messages == (("distributed.batched", "Batched Comm Closed"),)
    # (a filter of its own: a Dask run of another test may hold the process's one installed)
    closed = executors._MessageFilter(executors._CLOSED_COMM.messages)
    logger = logging.getLogger("distributed.batched")

    def record(name: str, msg: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.INFO, "batched.py", 122, msg, ("<TCP>",), None)

    assert not closed.filter(record("distributed.batched", "Batched Comm Closed %r"))
    assert closed.filter(record("distributed.batched", "another message %r"))
    assert closed.filter(record("distributed.client", "Batched Comm Closed %r"))
    try:
        closed.install()
        closed.install()
        closed.remove()
        assert closed in logger.filters
        closed.remove()
        assert closed not in logger.filters
    finally:
        logger.removeFilter(closed)
