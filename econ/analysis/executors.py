"""Executors: one interface to run chunk tasks serially, in local processes, or on Dask.

`executor.map_unordered(func, tasks)` yields `func(task)` for every task as tasks finish, keeping
at most a few tasks in flight per worker, so a run of ten million scenarios never queues ten
million scenarios' inputs or results. Results carry their chunk index; callers put them in order,
so every executor gives the same numbers.

Dask (`dask.distributed`) is an optional dependency, imported only when the dask engine is asked
for. A scheduler that cannot be reached, does not answer, is not a Dask scheduler or has no
worker raises ExecutorError within `timeout_s` (about twice that at worst), never hangs; so does
a run whose scheduler is lost, whose workers are all gone for `timeout_s`, or whose chunk Dask
gives up on (KilledWorker): a WorkerLostError, after which the finished chunks are kept. A
worker of a cluster of its own (`scheduler`) that runs other econ code than this process
(`econ.sources.code_fingerprint`, checked by each chunk's task before it computes) ends the run
with WorkerCodeError, the finished chunks kept alike.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from econ.errors import InputError
from econ.labels import counted
from econ.sources import code_fingerprint, short

ENGINES = ("serial", "process", "dask")
CONNECT_TIMEOUT_S = 10.0
IN_FLIGHT_PER_WORKER = 2
SAME_ECON = "install this econ on them, or run them with this checkout on PYTHONPATH"
"""What to do when a Dask cluster runs other econ code than the client."""
UNREAD_GRAPH = "Error during deserialization of the task graph"
"""How a Dask scheduler's RuntimeError starts when it cannot unpickle a task (its message, as
distributed 2024-2026 words it; the cause is the ImportError or AttributeError)."""


class ExecutorError(InputError):
    """An executor that cannot be set up: unknown engine, missing Dask, unreachable scheduler."""


class WorkerLostError(ExecutorError):
    """A worker process ended in the middle of a run (killed, out of memory), or a Dask run lost
    its scheduler or every worker: the chunks in flight are lost, the finished ones are not.
    The CLI answers exit code 3 and says how to resume."""


class SchedulerLostError(WorkerLostError):
    """The connection to the Dask scheduler was lost in the middle of a run (the scheduler
    stopped, or the network failed)."""


class WorkerCodeError(ExecutorError):
    """A Dask worker runs other econ code than the client (another version, or the same version
    changed): its chunks would be computed with that code. The run ends; the chunks finished by
    workers running this client's code are kept."""


class ExecutorNote(UserWarning):
    """What `make_executor` says of the workers asked for: an option it ignores, or more local
    workers than CPUs. From Python a warning (`warnings.simplefilter("ignore", ExecutorNote)`
    silences it); the CLI prints it as a `note: ...` line."""


def _note(text: str, stacklevel: int = 3) -> None:
    """Warn ExecutorNote `text`, naming the line that called make_executor (`stacklevel` counts
    the calls between it and this)."""
    warnings.warn(text, ExecutorNote, stacklevel=stacklevel)


class Executor:
    """Base executor: context manager with `map_unordered` and `close`."""

    name = "executor"
    workers = 1
    closed = False

    def map_unordered(self, func: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True

    def check_open(self) -> None:
        """ExecutorError for an executor already closed (the end of its `with` block closes it),
        where a process pool answered "cannot schedule new futures after shutdown"."""
        if self.closed:
            raise ExecutorError(
                f"this {self.name} executor is closed (by close(), or at the end of its `with` "
                "block); expected an open one: run inside the block, or make a new one with "
                f'make_executor("{self.name}", ...)'
            )

    def describe(self) -> dict:
        return {"engine": self.name, "workers": self.workers}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SerialExecutor(Executor):
    """Runs tasks one after another in this process."""

    name = "serial"

    def map_unordered(self, func, tasks):
        self.check_open()
        for task in tasks:
            yield func(task)


class ProcessExecutor(Executor):
    """Runs tasks in `workers` local processes (forkserver start method where available, so
    threads of the calling process are never forked), each with a pipe of its own
    (`econ.analysis.workers`): a worker that ends at any point of a task ends the run with
    WorkerLostError at once, never a hang. The workers are daemon processes: a task cannot start
    processes of its own (Python raises "daemonic processes are not allowed to have children")."""

    name = "process"

    def __init__(self, workers: int | None = None):
        from econ.analysis.workers import WorkerPool

        self.workers = _workers(workers)
        methods = multiprocessing.get_all_start_methods()
        method = "forkserver" if "forkserver" in methods else "spawn"
        self._pool = WorkerPool(
            self.workers,
            multiprocessing.get_context(method),
            initializer=_watch_parent,
            initargs=(os.getpid(), _start_time(os.getpid())),
        )

    def map_unordered(self, func, tasks):
        from econ.analysis.workers import PoolInUse, WorkerDied

        self.check_open()
        try:
            yield from self._pool.map_unordered(func, tasks)
        except PoolInUse:
            raise ExecutorError(
                "this process executor is running another batch (in another thread, or a "
                "map_unordered not finished); expected one at a time: give each thread an "
                'executor of its own (make_executor("process", ...))'
            ) from None
        except WorkerDied as died:
            raise WorkerLostError(
                f"a worker process of the process engine ended in the middle of the run "
                f"({_in_flight(died.in_flight)}); it was killed or ran out of memory"
            ) from None

    def close(self):
        super().close()
        self._pool.close()


def _in_flight(count: int) -> str:
    """'1 chunk was in flight', '4 chunks were in flight'."""
    return f"{counted(count, 'chunk')} {'was' if count == 1 else 'were'} in flight"


WATCH_INTERVAL_S = 1.0
"""How often a worker process checks that the process that started it is alive [s]."""


def _start_time(pid: int) -> str | None:
    """The process's start time from /proc (Linux), which tells it apart from a later process
    given the same pid; None where there is no /proc, or no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == b"Z" else fields[19].decode()  # a zombie has ended


def _parent_alive(pid: int, started: str | None) -> bool:
    if started is not None:
        return _start_time(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(pid: int, started: str | None) -> None:
    """Worker initializer: end this worker when the process that started the pool is gone.

    A forkserver's workers are its children, not the caller's, and each holds the forkserver's
    "alive" pipe open, so when the caller is killed nothing tells them (a parent-death signal
    would come from the forkserver, which they keep alive): they, the forkserver and the
    resource tracker would run on as orphans. A daemon thread polls the caller instead."""

    def watch():
        while _parent_alive(pid, started):
            time.sleep(WATCH_INTERVAL_S)
        os._exit(1)

    threading.Thread(target=watch, name="econ-parent-watch", daemon=True).start()


class DaskExecutor(Executor):
    """Runs tasks on a Dask cluster: the scheduler at `scheduler` (e.g. tcp://host:8786), or a
    LocalCluster of `workers` single-threaded worker processes started here."""

    name = "dask"

    def __init__(
        self,
        workers: int | None = None,
        scheduler: str | None = None,
        timeout_s: float | None = None,
    ):
        distributed = _import_distributed()
        timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not 0 < timeout_s < float("inf")
        ):
            raise ExecutorError(f"timeout_s = {timeout_s!r}: expected a positive number of seconds")
        self.scheduler = scheduler
        self._cluster = None
        self._environ: dict[str, tuple[str | None, str]] = {}
        # The code each chunk's worker must run (None: not checked). The workers of a local
        # cluster are started here from this econ; those of a cluster of its own import
        # whatever econ their machine has.
        self._code: str | None = None
        if scheduler is not None:
            self._code = _client_code()
            self._client, self.workers = _connect(distributed, scheduler, timeout_s)
        else:
            self.workers = _workers(workers)
            dask = importlib.import_module("dask")
            # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in workers, which turns off glibc's
            # adaptive mmap threshold: every large temporary array of the engine is then mapped
            # and unmapped, and a worker runs about half as fast as this process. Workers started
            # here keep the other settings (one BLAS thread) without it. Tasks run in a worker
            # thread, whose own glibc arena (heaps of at most 64 MB) maps and unmaps the
            # engine's arrays whatever econ.memory asks: one arena for the whole process
            # (MALLOC_ARENA_MAX=1) lets the task thread reuse the heap (13% faster, measured).
            environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
            environ.pop("MALLOC_TRIM_THRESHOLD_", None)
            environ.setdefault("MALLOC_ARENA_MAX", "1")
            settings = {"distributed.nanny.pre-spawn-environ": environ, **QUIET_CLUSTER}
            # The nannies put their pre-spawn environment (the variables above, Dask's
            # PYTHONHASHSEED) into this process's os.environ before they start a worker, and
            # leave it there: put back at close() (`_environ_changes`).
            before = dict(os.environ)
            try:
                with dask.config.set(settings), _sigint_ignored():
                    self._cluster = distributed.LocalCluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        # No dashboard; its HTTP server (health routes) still starts, and with
                        # dashboard_address=None it takes port 8787 or warns that a second
                        # cluster found it taken (dask/distributed#8136): a free port on this
                        # host instead.
                        dashboard_address="127.0.0.1:0",
                        scheduler_kwargs={"dashboard": False},
                        host="127.0.0.1",
                    )
            finally:
                self._environ = _environ_changes(before)
            self._client = distributed.Client(self._cluster, set_as_default=False)
            # This process runs the cluster's scheduler and nannies: a worker that dies logs
            # here, and the run reports that itself, in one line (WorkerLostError).
            _WORKER_DEATH.install()
            # A task cancelled by Ctrl-C makes its worker warn "Async instruction ... ended with
            # CancelledError"; close() quiets the workers first, but a worker can cancel before
            # that reaches it. Only our own workers, and only that logger, from the start.
            self._client.run(_quiet_cancellations)
        _CLOSED_COMM.install()
        _install_once(_SYNC_CANCEL_BUG)
        self._distributed = distributed
        self._timeout_s = timeout_s
        self._interrupted = False
        self._lost = False

    def describe(self):
        return {
            "engine": self.name,
            "workers": self.workers,
            "scheduler": self.scheduler or "local cluster",
        }

    def map_unordered(self, func, tasks):
        self.check_open()
        limit = self.workers * IN_FLIGHT_PER_WORKER
        pending: set = set()
        try:
            for task in tasks:
                self._check_client(len(pending))
                if self._code is None:
                    pending.add(self._client.submit(func, task, pure=False))
                else:
                    pending.add(self._client.submit(_checked, self._code, func, task, pure=False))
                if len(pending) >= limit:
                    done, pending = self._wait(pending)
                    yield from self._results(done, len(pending))
            while pending:
                done, pending = self._wait(pending)
                yield from self._results(done, len(pending))
        except KeyboardInterrupt:
            # Closing the client drops the tasks; cancelling each running one makes its worker
            # log a warning per task, and a local worker busy in a chunk outlives the nanny's
            # grace period (another warning): Ctrl-C answers one line, so close quietly.
            self._interrupted = True
            pending = set()
            raise
        except WorkerLostError:
            self._lost = True
            pending = set()  # the cluster has lost them, or lost us
            raise
        finally:
            for future in pending:
                future.cancel()

    def _wait(self, pending):
        """The finished and the pending futures once one has finished. Every WORKER_CHECK_S
        without one, the cluster is asked whether it still has a worker: a run whose workers
        are all gone (killed, or unable to import econ, which ends a worker as it unpickles a
        task) would otherwise wait for one forever."""
        alone_since = None
        while True:
            try:
                with self._client.as_current():  # this client, not a process-wide default one
                    done, pending = self._distributed.wait(
                        pending, timeout=WORKER_CHECK_S, return_when="FIRST_COMPLETED"
                    )
                return done, set(pending)
            except TimeoutError:
                alone_since = self._check_workers(alone_since, len(pending))
            except self._cancelled_errors() as exc:
                raise self._cancelled(exc, len(pending)) from None

    def _results(self, done, still_pending: int):
        killed = importlib.import_module("distributed.scheduler").KilledWorker
        for handed, future in enumerate(done):
            in_flight = len(done) - handed + still_pending
            try:
                result = self._result(future, in_flight)
            except killed as exc:
                raise self._killed(exc, in_flight) from None
            except self._cancelled_errors() as exc:
                raise self._cancelled(exc, in_flight) from None
            except RuntimeError as exc:
                if not str(exc).startswith(UNREAD_GRAPH):
                    raise
                raise self._unread(exc) from None
            future.release()
            yield result if self._code is None else self._checked_result(result)

    def _checked_result(self, result):
        """The chunk's result from `_checked`, or WorkerCodeError when its worker runs other
        econ code (each chunk says so: a worker that joins in the middle of the run is checked
        as the first were)."""
        code, address, value = result
        if code != self._code:
            raise WorkerCodeError(
                f"the Dask worker at {address} runs other econ code ({short(code)}) than this "
                f"client ({short(self._code)}): workers must run the same econ as this client: "
                f"{SAME_ECON}"
            )
        return value

    def _result(self, future, in_flight: int):
        """A finished future's result, fetched from the worker that holds it. A worker lost
        in between makes Dask compute the chunk again, which needs a worker, and
        `future.result()` waits for that with no limit (it waited past a test's 300 s): so the
        fetch is bounded as `_wait` is. errors="skip" keeps a fetch cut off quiet (with
        "raise", Dask warns "Couldn't gather" and leaves a waiter that raises at close); a
        future that erred or was cancelled is skipped, and its own result() raises. Each try
        has twice the time of the last (a slow network's fetch, cut off, starts over)."""
        alone_since = None
        wait_s = RESULT_CHECK_S
        while True:
            try:
                fetched = self._client.sync(
                    self._client.gather, [future], errors="skip", callback_timeout=wait_s
                )
            except TimeoutError:
                alone_since = self._check_workers(alone_since, in_flight)
                wait_s = min(2 * wait_s, 60.0)
                continue
            return fetched[0] if fetched else future.result()

    def _unread(self, exc: RuntimeError) -> WorkerCodeError:
        """The error of a chunk task the scheduler could not unpickle: it imports other econ
        code (one without this client's task functions), or none."""
        cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
        return WorkerCodeError(
            f"{self._where()} could not read the run's chunk tasks{cause}: the scheduler and "
            f"its workers must run the same econ as this client: {SAME_ECON}"
        )

    def _cancelled_errors(self) -> tuple[type, ...]:
        client = importlib.import_module("distributed.client")
        return (client.FutureCancelledError, client.FuturesCancelledError)

    def _where(self) -> str:
        return (
            f"the Dask scheduler at {self.scheduler}"
            if self.scheduler is not None
            else "the scheduler of the local Dask cluster"
        )

    def _scheduler_lost(self, in_flight: int, silent: bool = False) -> SchedulerLostError:
        """`silent`: the scheduler holds the connection open but has not answered for
        `timeout_s` (a stopped process, a network that drops packets without closing it)."""
        unanswered = f"; no answer for {self._timeout_s:g} s" if silent else ""
        return SchedulerLostError(
            f"lost the connection to {self._where()} in the middle of the run ("
            f"{_in_flight(in_flight)}{unanswered}); the scheduler stopped or the network failed"
        )

    def _check_client(self, in_flight: int) -> None:
        """SchedulerLostError once the client has lost its scheduler (it reconnects for
        `timeout_s`, having cancelled every future, then closes)."""
        if self._client.status != "running":
            raise self._scheduler_lost(in_flight)

    def _check_workers(self, alone_since: float | None, in_flight: int) -> float | None:
        """When the cluster was first seen without a worker (None while it has some), or
        WorkerLostError once that is `timeout_s` ago."""
        self._check_client(in_flight)
        try:
            # Bounded: a scheduler that keeps its connection open and never answers (stopped
            # with SIGSTOP, a network that drops packets) held this call, and the run, forever.
            workers = len(self._client.nthreads(callback_timeout=self._timeout_s))
        except TimeoutError:
            raise self._scheduler_lost(in_flight, silent=True) from None
        except OSError:  # the comm closed (CommClosedError), the scheduler is gone
            raise self._scheduler_lost(in_flight) from None
        if workers:
            return None
        now = time.monotonic()
        if alone_since is None:
            return now
        if now - alone_since < self._timeout_s:
            return alone_since
        start = (
            f"; start some with `dask worker {self.scheduler}`"
            if self.scheduler is not None
            else ""
        )
        raise WorkerLostError(
            f"{self._where()} has had no workers for {self._timeout_s:g} s in the middle of "
            f"the run ({_in_flight(in_flight)}): they ended, were killed, or could not import "
            f"econ{start}"
        )

    def _cancelled(self, exc, in_flight: int) -> WorkerLostError:
        """The error of futures the cluster cancelled: the scheduler's connection lost (the
        client cancels every future then), or another reason Dask gives."""
        groups = getattr(exc, "error_groups", None)
        reasons = [g.reason for g in groups] if groups else [getattr(exc, "reason", "unknown")]
        if "scheduler-connection-lost" in reasons or self._client.status != "running":
            return self._scheduler_lost(in_flight)
        return WorkerLostError(
            f"{self._where()} cancelled chunks in the middle of the run ({_in_flight(in_flight)}; "
            f"reason: {', '.join(sorted(set(map(str, reasons))))})"
        )

    def _killed(self, exc, in_flight: int) -> WorkerLostError:
        """The error of a chunk Dask gave up on (KilledWorker): the workers computing it ended
        more often than `distributed.scheduler.allowed-failures` allows."""
        allowed = exc.args[2] if len(exc.args) > 2 else None
        tries = (
            f" after {counted(allowed + 1, 'worker')} ended computing it"
            f" (distributed.scheduler.allowed-failures = {allowed})"
            if isinstance(allowed, int)
            else ""
        )
        return WorkerLostError(
            f"a worker process of the Dask cluster ended in the middle of the run "
            f"({_in_flight(in_flight)}), and Dask gave up on its chunk{tries}; it was killed "
            "or ran out of memory"
        )

    def close(self):
        if self.closed:  # (closed already: its log filters are removed once)
            return
        super().close()
        # After a lost scheduler the client logs that it failed to reconnect as it closes:
        # the run has said so in one line already. Its background sender can still log the
        # closed connection, with a traceback, after close() returns (printed after the run's
        # error line, one CI run in many): a lost cluster leaves distributed's log quiet.
        quiet = (
            _quiet_logger("distributed", restore=not self._lost)
            if self._interrupted or self._lost
            else contextlib.nullcontext()
        )
        with quiet:
            if self._interrupted and self._cluster is not None:
                # Our own workers write to this terminal: quiet their logs too (this runs in
                # each worker's event loop, beside the chunk it may still be computing). A
                # SIGTERM sent to the process group has ended them: the scheduler, in this
                # process, logs that it could not reach them, under `quiet`.
                with contextlib.suppress(Exception):  # a worker already gone has nothing to say
                    self._client.run(_silence_distributed_log)
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()
                _WORKER_DEATH.remove()
                _restore_environ(self._environ)
        _CLOSED_COMM.remove()


def _client_code() -> str:
    """This process's `code_fingerprint`, which the workers of a cluster of its own must
    match; ExecutorError when econ's files changed after this process imported econ."""
    code = code_fingerprint()
    if code is None:
        raise ExecutorError(
            "econ's source files changed after this process imported econ: the code it runs "
            "cannot be named, so no Dask worker can be checked against it; start it again"
        )
    return code


def _checked(expected: str, func: Callable[[Any], Any], task: Any) -> tuple:
    """On a Dask worker: (its `code_fingerprint`, None, func(task)), or (its fingerprint, its
    address, None) without running the task when the fingerprint is not `expected`."""
    code = code_fingerprint()
    if code != expected:
        return code, importlib.import_module("distributed").get_worker().address, None
    return code, None, func(task)


def _environ_changes(before: Mapping[str, str]) -> dict[str, tuple[str | None, str]]:
    """The variables of os.environ set since `before` (added or changed): name -> (its value
    before, None where it had none; its value now)."""
    return {
        name: (before.get(name), value)
        for name, value in os.environ.items()
        if before.get(name) != value
    }


def _restore_environ(changes: Mapping[str, tuple[str | None, str]]) -> None:
    """Put back the variables of `changes` (`_environ_changes`) as they were, each only where it
    still holds the value set then: one the caller has set since is theirs."""
    for name, (before, value) in changes.items():
        if os.environ.get(name) != value:
            continue
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


WORKER_CHECK_S = 1.0
"""How often a run waiting for a chunk asks the Dask cluster whether it still has a worker [s]."""
RESULT_CHECK_S = 5.0
"""How long a finished chunk's result is first fetched before the cluster is asked whether it
still has a worker [s]: longer than WORKER_CHECK_S, as a fetch cut off starts over."""
WORKER_POLL_S = 0.2
"""How often a connection asks a scheduler without workers whether one has arrived [s]."""
THREAD_GRACE_S = 2.0
"""Time beyond the timeout given to the thread that connects to end by itself [s]."""
REACH_ADVICE = (
    "expected a running Dask scheduler, e.g. started with `dask scheduler`, and workers "
    "connected to it"
)


def _connect(distributed, address: str, timeout_s: float):
    """A client of the Dask scheduler at `address` and its number of running workers.

    `distributed.Client(address, timeout=...)` bounds only the TCP connection: a server that
    accepts it and never answers (any service but Dask's on that port, a stopped scheduler)
    holds the handshake, and the client, forever; a server that answers something else makes
    Dask read a message length from its first bytes ("Unable to allocate 3.07 EiB"). So the
    address is checked first, then a probe in a thread of its own (its own event loop, so a
    caller's running loop, e.g. a notebook's, is no obstacle) connects, reads the scheduler's
    identity and waits for a worker, all within `timeout_s`; only a scheduler that answered is
    given a Client, itself created within `timeout_s`. Every failure is an ExecutorError naming
    the address, and nothing keeps running after it.
    """
    _check_address(address)
    _refuse_closed_port(address, timeout_s)
    try:
        info = _probe(address, timeout_s)
    except ExecutorError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever failed, the connection did
        raise _connection_error(address, timeout_s, exc) from None
    return _client(distributed, address, timeout_s), max(1, _running_workers(info))


def _check_address(address) -> None:
    """Refuse at once an address Dask cannot connect to: not text, a scheme that is not in
    distributed.comm's registry (tcp, tls, inproc, ws, wss, ...; none means tcp), or a host
    without a port."""
    comm = importlib.import_module("distributed.comm")
    if not isinstance(address, str) or not address.strip():
        raise ExecutorError(
            f"scheduler address {address!r} is not valid; expected e.g. tcp://host:8786"
        )
    try:
        scheme, location = comm.parse_address(address)
        comm.registry.get_backend(scheme)
        if scheme != "inproc":  # inproc://ADDRESS names a scheduler in this process
            _, port = comm.addressing.parse_host_port(location)
            if not 0 < port < 65536:
                raise ValueError(f"port {port} is not a port number: expected 1 to 65535")
    except (ValueError, TypeError) as exc:
        raise ExecutorError(
            f"scheduler address {address!r} is not valid ({exc}); expected e.g. tcp://host:8786"
        ) from None


def _refuse_closed_port(address: str, timeout_s: float) -> None:
    """ExecutorError at once where a TCP address refuses the connection (nothing listens on
    that port): Dask's own connect retries a refused port until its timeout, then says it
    timed out. A host name that does not resolve is refused at once too (Dask retried it until
    the timeout, then said nothing answered there). A connection that takes `timeout_s` is the
    probe's error too; any other failure is left to the probe, which words it."""
    import socket

    comm = importlib.import_module("distributed.comm")
    scheme, location = comm.parse_address(address)
    if scheme != "tcp":
        return
    host, port = comm.addressing.parse_host_port(location)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except ConnectionRefusedError:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {address}: connection refused (nothing "
            f"listens on port {port} of {host}); {REACH_ADVICE}"
        ) from None
    except TimeoutError:
        raise _connection_error(address, timeout_s, TimeoutError()) from None
    except socket.gaierror as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {address}: the host name {host!r} does not "
            f"resolve ({exc.strerror}); {REACH_ADVICE}"
        ) from None
    except OSError:
        return


def _probe(address: str, timeout_s: float) -> dict:
    """The identity of the scheduler at `address` once it has a running worker, all within
    `timeout_s` (TimeoutError otherwise); ExecutorError for a server that is not a scheduler,
    or a scheduler that got no worker in that time."""
    import asyncio

    comm_module = importlib.import_module("distributed.comm")
    core = importlib.import_module("distributed.core")
    answers: list[dict] = []

    async def identity():
        comm = await comm_module.connect(address, timeout=timeout_s)
        try:
            while True:
                info = await core.send_recv(comm, op="identity")
                answers.append(info)
                if not isinstance(info, dict) or "workers" not in info:
                    return info
                if _running_workers(info):
                    return info
                await asyncio.sleep(WORKER_POLL_S)
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(identity(), timeout_s)

    try:
        info = _in_thread(lambda: asyncio.run(bounded()), timeout_s + THREAD_GRACE_S)
    except TimeoutError:
        if not answers:
            raise
        info = answers[-1]
    if not isinstance(info, dict) or "workers" not in info:
        kind = info.get("type") if isinstance(info, dict) else None
        raise ExecutorError(
            f"{address} is {'a Dask ' + str(kind) if kind else 'not a Dask scheduler'}, not a "
            "scheduler; expected the address of the scheduler, e.g. tcp://host:8786 "
            "(`dask scheduler` prints it)"
        )
    if not _running_workers(info):
        connected = len(info["workers"] or {})
        if connected:  # paused (memory) or closing: they take no task
            raise ExecutorError(
                f"none of the {connected} workers of the Dask scheduler at {address} is running "
                f"(waited {timeout_s:g} s); expected at least one that takes tasks"
            )
        raise ExecutorError(
            f"the Dask scheduler at {address} has no workers (waited {timeout_s:g} s); start "
            f"some with `dask worker {address}`"
        )
    return info


def _running_workers(info: dict) -> int:
    workers = info.get("workers") or {}
    return sum(1 for w in workers.values() if w.get("status", "running") == "running")


def _client(distributed, address: str, timeout_s: float):
    """`distributed.Client` of a scheduler that has just answered, created in a thread within
    `timeout_s`. Were the server to stop answering, or answer garbage, in between, the client is
    discarded (`_discard`): neither it nor its event loop outlives the error."""
    lock = threading.Lock()
    made: dict[str, Any] = {"abandoned": False}

    def create():
        # Made in two steps so the object is held even when its __init__ fails or never ends.
        client = distributed.Client.__new__(distributed.Client)
        made["client"] = client
        try:
            client.__init__(address, timeout=f"{timeout_s}s", set_as_default=False)
        except BaseException:
            _discard(client)
            raise
        with lock:
            if made["abandoned"]:
                _discard(client)
                return None
            return client

    try:
        return _in_thread(create, timeout_s + THREAD_GRACE_S)
    except KeyboardInterrupt:  # Ctrl-C while it connects: left half made, it would print at exit
        with lock:
            made["abandoned"] = True
        if "client" in made:
            _discard(made["client"])
        raise
    except TimeoutError:
        with lock:
            made["abandoned"] = True
        if "client" in made:
            _discard(made["client"])
        raise ExecutorError(
            f"cannot connect to the Dask scheduler at {address} within {timeout_s:g} s: it "
            f"answered, then stopped answering; {REACH_ADVICE}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - whatever failed, the connection did
        raise _connection_error(address, timeout_s, exc) from None


def _connection_error(address: str, timeout_s: float, exc: Exception) -> ExecutorError:
    """The error of a connection to `address` that failed with `exc`, in words."""
    if isinstance(exc, TimeoutError):
        return ExecutorError(
            f"cannot reach the Dask scheduler at {address} within {timeout_s:g} s: nothing "
            f"answered there as a Dask scheduler does; {REACH_ADVICE}"
        )
    if isinstance(exc, OSError):
        return ExecutorError(
            f"cannot reach the Dask scheduler at {address} within {timeout_s:g} s "
            f"({type(exc).__name__}: {exc}); {REACH_ADVICE}"
        )
    if isinstance(exc, MemoryError):
        # Dask read a message length from the first bytes of another protocol's answer.
        return ExecutorError(
            f"cannot connect to the Dask scheduler at {address}: what answers there does not "
            f"speak Dask's protocol (another service on that port?); {REACH_ADVICE}"
        )
    return ExecutorError(
        f"cannot connect to the Dask scheduler at {address} ({type(exc).__name__}: {exc}); "
        f"{REACH_ADVICE}"
    )


def _discard(client) -> None:
    """Stop a client that never connected. Its close() (also called by its __del__, at the
    latest when the process exits) would wait for the connection that failed, then print a
    TimeoutError traceback: marked closed, it returns at once, and its event loop is stopped."""
    with contextlib.suppress(Exception):  # a client that failed early has less to stop
        client.status = "closed"
    with contextlib.suppress(Exception):
        client._loop_runner.stop(timeout=1)


def _in_thread(func: Callable[[], Any], timeout_s: float) -> Any:
    """`func()` in a daemon thread: its result or its exception, or TimeoutError when it has not
    returned after `timeout_s` (the thread, blocked, is left to end with the process)."""
    outcome: dict[str, Any] = {}

    def target():
        try:
            outcome["result"] = func()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="econ-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


@contextlib.contextmanager
def _quiet_logger(name: str, restore: bool = True):
    """Silence a library's log (all but critical) for the duration of the block (for the
    rest of the process if not `restore`): the logger and those below it that set a level of
    their own (Dask's config sets one for distributed.client)."""
    loggers = [logging.getLogger(name)] + [
        logging.getLogger(child)
        for child in list(logging.root.manager.loggerDict)
        if child.startswith(name + ".") and logging.getLogger(child).level
    ]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            if restore:
                logger.setLevel(level)


class _MessageFilter(logging.Filter):
    """Drops the records of `messages` ((logger, start of the message) pairs), which a run
    reports itself in one line. Installed once per process however many executors use it, and
    removed with the last."""

    def __init__(self, messages: tuple[tuple[str, str], ...]):
        super().__init__()
        self.messages = messages
        self.users = 0
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return not any(
            record.name == name and text.startswith(start) for name, start in self.messages
        )

    def install(self) -> None:
        with self.lock:
            self.users += 1
            if self.users == 1:
                for name, _ in self.messages:
                    logging.getLogger(name).addFilter(self)

    def remove(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0:
                for name, _ in self.messages:
                    logging.getLogger(name).removeFilter(self)


_WORKER_DEATH = _MessageFilter(
    (
        ("distributed.scheduler", "Task %s marked as failed because %d workers died"),
        ("distributed.nanny", "Restarting worker"),
    )
)
"""What the local cluster's scheduler and nannies (in this process) log of a worker that died:
Dask's "Task ... marked as failed because N workers died while trying to run it" (the run's
WorkerLostError says it) and the nanny's "Restarting worker"."""
_CLOSED_COMM = _MessageFilter((("distributed.batched", "Batched Comm Closed"),))
"""What the client's background sender logs, with a traceback, the moment its scheduler's
connection closes: the run says it lost the scheduler, in one line (SchedulerLostError); the
traceback came before that line in one CI run in many."""


class _SyncCancelBug(logging.Filter):
    """Drops the traceback distributed's `sync` makes its event loop log when Ctrl-C reaches
    a waiting call before the call has started: the callback that should cancel it reads a
    variable not yet set ("NameError: cannot access free variable 'future'", distributed
    2026.8.0, `distributed/utils.py`, `sync.<locals>.cancel`). Tornado logs it from the loop's
    thread, at any moment after the interrupt, so a run that answered Ctrl-C in one line
    printed fourteen more below it (one CI run in many). Only that NameError from that
    function is dropped; every other error of the loop is logged as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, NameError):
            return True
        frames = exc.__traceback__
        while frames is not None and frames.tb_next is not None:
            frames = frames.tb_next
        code = frames.tb_frame.f_code if frames is not None else None
        return not (
            code is not None
            and code.co_name == "cancel"
            and code.co_filename.replace("\\", "/").endswith("distributed/utils.py")
        )


_SYNC_CANCEL_BUG = _SyncCancelBug()
"""Installed on `tornado.application` by the first Dask executor and kept for the process: the
record can come after the executor has closed."""


def _install_once(log_filter: logging.Filter, logger: str = "tornado.application") -> None:
    """Add `log_filter` to `logger` unless it is there already."""
    target = logging.getLogger(logger)
    if log_filter not in target.filters:
        target.addFilter(log_filter)


def _quiet_cancellations() -> None:
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


def _silence_distributed_log() -> None:
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore SIGINT while the local cluster starts its worker processes, which inherit that.

    Ctrl-C in a terminal signals the whole foreground process group: without this each worker
    would raise KeyboardInterrupt in its event loop and print some thirty lines of traceback,
    while this process stops the run cleanly (one line) and closes the cluster, which ends the
    workers. Only the main thread may set signal handlers; elsewhere (the app) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.work-stealing": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
}
"""Settings of the local cluster econ starts. It has no dashboard, so the workers' statistical
profiler (a stack sample every 10 ms) and the system monitor's samples serve no one; chunks are
equal, so work stealing has nothing to balance; the event loops' health tick every 20 ms is
relaxed to 200 ms. On a machine where the scheduler and client share the workers' cores, this
background work is taken from the computation: with these settings two workers on two cores
measured 84-88% scaling efficiency against 80-82% without (benchmarks/bench_batch.py)."""


MAX_WORKERS_PER_CPU = 4
"""Local worker processes (process engine, a local Dask cluster) allowed per CPU this process may
use: each is a process with memory of its own, and a batch is CPU-bound, so workers beyond the
CPUs make no run faster (`--workers 100000` was taken)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where the system has one: a
    container or `taskset` may allow fewer than the machine's), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (no affinity call on macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _workers(workers: int | None) -> int:
    """The number of local worker processes: `workers`, or by default one per usable CPU;
    ExecutorError for a count that is not a whole number from 1 to MAX_WORKERS_PER_CPU per CPU."""
    cpus = usable_cpus()
    if workers is None:
        return cpus
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ExecutorError(f"workers = {workers!r}: expected a positive integer")
    if workers > MAX_WORKERS_PER_CPU * cpus:
        raise ExecutorError(
            f"workers = {workers:,}: expected at most {MAX_WORKERS_PER_CPU * cpus:,} "
            f"({MAX_WORKERS_PER_CPU} per CPU; this process may use {counted(cpus, 'CPU')}): "
            "each worker is a process of its own, and workers beyond the CPUs make a run no "
            "faster; for more, run a Dask cluster over several machines (--scheduler ADDRESS)"
        )
    return workers


def _say_shared_cpus(workers: int | None) -> None:
    """A note (ExecutorNote) where more local workers are asked for than there are CPUs to run
    them."""
    cpus = usable_cpus()
    if workers is not None and workers > cpus:
        _note(
            f"{workers} workers share this process's {counted(cpus, 'CPU')}: the run is no "
            f"faster than with {cpus}, and each worker takes memory of its own",
            stacklevel=4,
        )


def _import_distributed():
    try:
        return importlib.import_module("distributed")
    except ImportError as exc:
        raise ExecutorError(
            "the dask engine needs the optional packages dask and distributed "
            f"({exc}); install them with: pip install 'econ[distributed]'"
        ) from None


def _refuse_unguarded_start(engine: str) -> None:
    """Refuse to start local worker processes from a script's top level, outside
    `if __name__ == "__main__":`.

    The process engine and a local Dask cluster start workers with the forkserver and spawn
    methods, which run the main script again in each worker (as `__mp_main__`). Unguarded, every
    worker would reach this call again and start workers of its own: Python stops that with
    "An attempt has been made to start a new process before the current process has finished
    its bootstrapping phase", which Dask reports as "Nanny failed to start" after every
    preceding line of the script has run once more in each worker. One clear error instead, in
    the script and (should a worker get here all the same) in the worker.
    """
    guard = 'if __name__ == "__main__":'
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise ExecutorError(
            f"the {engine} engine was started by a worker process while it was importing the "
            f"main script: put the code that runs the batch under `{guard}`"
        )
    script = _unrunnable_main()
    if script is not None:
        # Each worker failed to run it ("No such file or directory: '.../<stdin>'"): the
        # process engine said a worker was killed or ran out of memory, Dask "Nanny failed to
        # start", after a traceback per worker.
        raise ExecutorError(
            f"make_executor({engine!r}) is called from {script}: the {engine} engine starts its "
            "workers by running the main script again, and only a script saved in a file can "
            f"be; save it to a file, with the code that runs the batch under `{guard}` "
            '(docs/batch.md, Python API), or use the serial engine (make_executor("serial"))'
        )
    where = _unguarded_main_line()
    if where is not None:
        raise ExecutorError(
            f"make_executor({engine!r}) is called at the top level of {where}, outside "
            f"`{guard}`: the {engine} engine starts its workers by running that script again, "
            f"and each would start workers of its own; put the code that runs the batch under "
            f"`{guard}` (docs/batch.md, Python API), or run it in a notebook"
        )


def _unrunnable_main() -> str | None:
    """The main script, where the workers would have to run it again and cannot: "a script read
    from standard input" (`python - < x.py`, `python - <<EOF`), or a script file that no longer
    exists. None where they can, or run nothing again (a script file, `python -m`, `python -c`,
    the REPL, a notebook: a main module without a file is not run again). Found as
    multiprocessing finds the file it runs (`multiprocessing.spawn.get_preparation_data`)."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None  # imported again by its name
    path = getattr(main, "__file__", None)
    if not isinstance(path, str):
        return None
    if os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None  # (multiprocessing runs IPython's own script in no worker)
    original = multiprocessing.process.ORIGINAL_DIR
    full = path if os.path.isabs(path) or original is None else os.path.join(original, path)
    if os.path.isfile(os.path.normpath(full)):
        return None
    if path == "<stdin>":
        return "a script read from standard input"
    return f"{path}, which no longer exists"


def _unguarded_main_line() -> str | None:
    """`file, line N` of the main script's top-level statement this call comes from, where the
    workers would run it again: not under an `if __name__ == "__main__":` guard. None where
    they run nothing again (an interactive session, a notebook, `python -m package`)."""
    import ast

    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return None  # multiprocessing does not run a package's __main__ again
    path = getattr(main, "__file__", None)
    frame = sys._getframe(1)
    while frame is not None and not (
        frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"
    ):
        frame = frame.f_back
    if not path or frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and _is_main_test(node.test)
            and node.body[0].lineno <= line <= (node.body[-1].end_lineno or line)
        ):
            return None
    return f"{path}, line {line}"


def _is_main_test(test) -> bool:
    """Whether an `if` test is `__name__ == "__main__"` (either way round)."""
    import ast

    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    texts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(texts) == 1


IGNORED_WORKERS = "--workers (workers= from Python) is ignored"


def make_executor(
    engine: str = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
    timeout_s: float | None = None,
) -> Executor:
    """An executor by name: "serial", "process" (local processes) or "dask".

    `workers` applies to process and local Dask runs (default: one per CPU this process may use,
    `usable_cpus`; at most MAX_WORKERS_PER_CPU per CPU, a note above one); `scheduler` (dask
    only) connects to an existing cluster instead of starting one (its own workers: a `workers`
    given beside it is ignored, with a note), failing after `timeout_s` (default
    CONNECT_TIMEOUT_S) when it cannot be reached, does not answer as a Dask scheduler or has no
    worker. The notes are ExecutorNote warnings, which the CLI prints as `note: ...` lines.
    """
    if engine not in ENGINES:
        raise ExecutorError(f"engine = {engine!r}: expected one of: " + ", ".join(ENGINES))
    if scheduler is not None and engine != "dask":
        raise ExecutorError(f"a scheduler address needs --engine dask, got engine {engine!r}")
    if isinstance(scheduler, str) and not scheduler.strip():
        # An empty --scheduler "" (an unset variable in a script) started a local cluster.
        raise ExecutorError(
            f"scheduler address {scheduler!r} is empty; expected the address of a Dask "
            "scheduler, e.g. tcp://host:8786, or no scheduler address to start a local cluster"
        )
    if engine != "serial" and scheduler is None:
        _refuse_unguarded_start(engine)
    if engine == "serial":
        if workers not in (None, 1):
            _note(f"the serial engine uses one worker; {IGNORED_WORKERS}")
        return SerialExecutor()
    if scheduler is None:  # local workers: refused beyond the limit before any starts
        _workers(workers)
        _say_shared_cpus(workers)
    if engine == "process":
        return ProcessExecutor(workers)
    if scheduler is not None and workers is not None:
        _note(
            f"the Dask cluster at {scheduler} runs the workers connected to it; {IGNORED_WORKERS}"
        )
    return DaskExecutor(workers, scheduler, timeout_s)
