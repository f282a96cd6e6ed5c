"""Local worker processes of the process engine, each with a pipe of its own.

`concurrent.futures.ProcessPoolExecutor` shares one result pipe among its workers. A worker
killed while it writes a result there (SIGKILL, the kernel's OOM killer) leaves half a message
in the pipe; the pool's manager thread waits for the rest of it forever, so the run, its shutdown
and even the interpreter's exit (which joins that thread) hang. Here each worker has a pipe that
no other process writes to, and is handed one task at a time: a worker that ends at any point
closes its pipe, the parent reads end of file at once, and the run ends with WorkerDied naming
the tasks in flight. A task's exception comes back raised in the parent, with the worker's
traceback as its `__cause__`, as the standard pool does.
"""

from __future__ import annotations

import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from typing import Any

STOP_WAIT_S = 5.0
"""How long close() lets idle workers end by themselves before it kills them [s]."""


class WorkerDied(Exception):
    """A worker process ended with tasks in flight (`in_flight`, its own included)."""

    def __init__(self, in_flight: int):
        super().__init__(f"a worker process ended with {in_flight} task(s) in flight")
        self.in_flight = in_flight


class PoolInUse(Exception):
    """A map asked of a pool whose previous map has not ended."""


class RemoteTraceback(Exception):
    """The traceback of a task's exception in its worker (that exception's `__cause__`)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


def _serve(conn, initializer: Callable | None, initargs: tuple) -> None:
    """A worker's loop: receive (func, task), send back (True, result) or (False, (exception,
    traceback text)); end at None or when the parent's end of the pipe is closed (the parent
    has ended: killed, its reply can go nowhere)."""
    # Ctrl-C reaches every process of the terminal's group; the parent answers it and ends the
    # workers, which would otherwise each print a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        func, task = message
        try:
            reply = (True, func(task))
        except BaseException as exc:  # noqa: BLE001 - every exception goes back to the caller
            reply = (False, (exc, traceback.format_exc()))
        try:
            data = ForkingPickler.dumps(reply)  # (what conn.send does before it writes)
            if not reply[0]:
                # An exception whose __init__ takes other arguments than its args pickles but
                # cannot be rebuilt: the parent raised that TypeError in its place.
                pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - a result or exception that cannot be pickled
            data = ForkingPickler.dumps((False, _unsendable(reply, exc)))
        try:
            conn.send_bytes(data)
        except OSError:
            # The parent has ended (SIGKILL, the OOM killer): its end of the pipe is closed.
            # Before, the worker took this for a result that cannot be pickled, failed to send
            # that too, and printed both tracebacks, 31 lines per worker, under the run's output.
            return


def _unsendable(reply: tuple, error: Exception) -> tuple:
    """(exception, traceback text) saying that the result or exception of `reply` could not be
    pickled (`error`); a task's exception keeps its type, message and traceback in the text."""
    if reply[0]:
        sent = TypeError(f"the task's result cannot be sent back to the parent: {error}")
        return sent, traceback.format_exc()
    raised, text = reply[1]
    sent = TypeError(
        f"the task raised {type(raised).__name__}: {raised}, which cannot be sent back to the "
        f"parent: {error}"
    )
    return sent, text


class WorkerPool:
    """`workers` processes of multiprocessing context `context`, started at the first map."""

    def __init__(self, workers: int, context, initializer=None, initargs: tuple = ()):
        self.size = workers
        self._context = context
        self._initializer = initializer
        self._initargs = initargs
        self._workers: list = []  # [(process, the parent's end of its pipe)]
        self._busy: dict = {}  # the running map's workers with a task, by their pipe end
        self._mapping = False
        self._lock = threading.Lock()

    def _start(self) -> None:
        # A worker that ended between maps (killed while idle: the OOM killer picks the
        # largest process) held no task: replaced, where the next map said one "ended in the
        # middle of the run".
        self._discard([worker for worker in self._workers if not worker[0].is_alive()])
        while len(self._workers) < self.size:
            mine, theirs = self._context.Pipe()
            process = self._context.Process(
                target=_serve,
                args=(theirs, self._initializer, self._initargs),
                name=f"econ-worker-{len(self._workers) + 1}",
                daemon=True,  # ended by multiprocessing at exit, should close() not be reached
            )
            process.start()
            theirs.close()  # the worker holds the only other end: its death is end of file here
            self._workers.append((process, mine))

    def map_unordered(self, func: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """`func(task)` for every task, as they finish; WorkerDied when a worker ends. Workers
        left with a task when the map stops early (an exception, the caller's, or a generator
        closed) are killed, so the next map starts with fresh ones and no stale reply.
        PoolInUse while another map of this pool has not ended (another thread's, or one not
        finished): each worker holds one task, and the replies of two maps would cross."""
        with self._lock:
            if self._mapping:
                raise PoolInUse
            self._mapping = True
        try:
            yield from self._map(func, tasks)
        finally:
            self._mapping = False

    def _map(self, func: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        self._start()
        idle = list(self._workers)
        busy = self._busy  # the parent's end of a busy worker's pipe -> (process, that end)
        iterator = iter(tasks)
        more = True

        def hand_out() -> None:
            nonlocal more
            while more and idle:
                try:
                    task = next(iterator)
                except StopIteration:
                    more = False
                    return
                worker = idle.pop()
                busy[worker[1]] = worker
                try:
                    worker[1].send((func, task))
                except OSError:  # the worker has ended: its end of the pipe is closed
                    raise WorkerDied(len(busy)) from None

        try:
            while True:
                hand_out()
                if not busy:
                    return
                replies = []
                lost = False
                # A worker's pipe is ready when it sent a reply or ended (end of file).
                for conn in wait(list(busy)):
                    try:
                        replies.append(conn.recv())
                    except (EOFError, OSError):
                        lost = True
                        continue
                    idle.append(busy.pop(conn))
                for ok, value in replies:
                    if not ok:
                        exc, text = value
                        exc.__cause__ = RemoteTraceback(text)
                        raise exc
                if not lost:
                    try:
                        hand_out()  # the workers compute while the caller takes the results
                    except WorkerDied:
                        lost = True
                # The results that came back go to the caller (a run saves their chunks)
                # before the lost worker ends the map.
                for _, result in replies:
                    yield result
                if lost:
                    raise WorkerDied(len(busy))
        finally:
            workers = list(busy.values())
            busy.clear()
            self._discard(workers)

    def _discard(self, workers: list) -> None:
        """Kill `workers` and forget them (close() may have already)."""
        for worker in workers:
            if worker in self._workers:
                self._workers.remove(worker)
        _end(workers, kill=True)

    def close(self, *, kill: bool = False) -> None:
        """End the workers: idle ones asked to stop and given STOP_WAIT_S, then killed (at
        once with `kill`); those holding a task of a map not finished, killed at once (before,
        each was given STOP_WAIT_S it spent blocked sending a reply no one read)."""
        workers, self._workers = self._workers, []
        busy = list(self._busy.values())
        _end(busy, kill=True)
        _end([worker for worker in workers if worker not in busy], kill=kill)


def _end(workers: list, *, kill: bool) -> None:
    """End (process, pipe end) workers: idle ones are asked to stop and given STOP_WAIT_S to
    end by themselves (all killed at once with `kill`); any still running are killed."""
    if not kill:
        for _, conn in workers:
            try:
                conn.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + STOP_WAIT_S
        running = [process.sentinel for process, _ in workers]
        while running and (left := deadline - time.monotonic()) > 0:
            ended = wait(running, timeout=left)
            running = [sentinel for sentinel in running if sentinel not in ended]
    for process, conn in workers:
        if process.is_alive():
            process.kill()
        process.join()
        conn.close()
