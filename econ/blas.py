"""One BLAS thread around matrix products whose results must not depend on the thread count.

The IRR solver (econ.excel) evaluates NPVs on rate grids as matrix products. How a threaded BLAS
splits such a product between threads can change the last bits of some entries, and with them
the last bits of an IRR, so a projection run where BLAS has two threads (a user's machine, a
Dask worker of a cluster of one's own) would not be bit-identical to one where it has one (econ's
local Dask workers). The products are small, so several threads make them slower, not faster
(waking the threads costs more than the work: `irr` on 20,000 series measured 4x slower with two
threads than with one). `one_blas_thread()` sets every loaded BLAS library to one thread for the
duration of a block, through threadpoolctl, and is safe to use from several Python threads at
once (Streamlit sessions, Dask worker threads):

- a process-wide limit (OpenBLAS on pthreads, MKL, BLIS) is set when the first thread enters and
  restored when the last one leaves, so no thread restores it while another is inside;
- a per-thread limit (a BLAS on OpenMP) is set and restored by each thread for itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0  # threads (and nested blocks) inside one_blas_thread
_restore: list[tuple[object, int]] = []  # process-wide libraries changed by the first to enter
_libraries: list | None = None


def _blas_libraries() -> list:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (numpy's and
    any other), looked up once: numpy loads its BLAS when it is imported, before any call here."""
    global _libraries
    if _libraries is None:
        from threadpoolctl import ThreadpoolController

        _libraries = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _libraries


def _set(library, threads: int) -> None:
    # threadpoolctl's OpenBLAS controller lets only the first Python thread that set a limit
    # change it again (others are silently ignored while that thread lives); the lock and the
    # counter above already keep threads from fighting, so set the library directly.
    setter = getattr(library, "_real_set_num_threads", None) or library.set_num_threads
    setter(threads)


def _per_thread(library) -> bool:
    return getattr(library, "threading_layer", None) == "openmp"


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with every BLAS library limited to one thread (see the module docstring)."""
    global _inside
    libraries = _blas_libraries()
    mine = []
    for library in libraries:
        if _per_thread(library) and library.num_threads != 1:
            mine.append((library, library.num_threads))
            _set(library, 1)
    with _lock:
        if _inside == 0:
            for library in libraries:
                if not _per_thread(library) and library.num_threads != 1:
                    _restore.append((library, library.num_threads))
                    _set(library, 1)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                while _restore:
                    library, threads = _restore.pop()
                    _set(library, threads)
        for library, threads in reversed(mine):
            _set(library, threads)


def blas_threads() -> dict[str, int]:
    """Current thread count of each loaded BLAS library, by file name (for tests and reports)."""
    return {lib.filepath: lib.num_threads for lib in _blas_libraries()}
