"""Process memory settings and limits for large batches.

A projection chunk allocates and frees a few hundred (4096, 73) float arrays of 2.4 MB each. By
default glibc maps each such array fresh from the kernel (its mmap threshold starts at 128 kB
and adapts only up to the last freed size) and gives memory at the top of the heap back when
more than twice that is free, so most new arrays arrive unmapped and every 4 kB page faults on
first write: the engine runs about 1.2x as fast without those faults on the project's machine
(benchmarks/bench_engine.py measures both, docs/benchmarks.md).
`keep_freed_memory` asks glibc (mallopt, see mallopt(3)) to serve blocks up to 32 MB from the
heap and to keep up to 512 MB of freed heap for reuse: the same arrays then reuse pages already
mapped. The cost is that a process that ran a large batch holds up to 512 MB more than it uses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

from econ.errors import InputError

MMAP_THRESHOLD_BYTES = 32 << 20
"""Blocks below this come from the heap (glibc's largest allowed value on 64-bit)."""
TRIM_THRESHOLD_BYTES = 512 << 20
"""Freed heap kept for reuse before glibc returns it to the kernel."""
ENV_SWITCH = "ECON_KEEP_FREED_MEMORY"
"""Set to 0 to leave the C allocator's settings alone."""

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_done: bool | None = None


MAX_BATCH_BYTES = 2_000_000_000
"""Most memory [bytes] a batch held whole may take: the rows a run keeps in memory
(econ.analysis.runner.check_size: about 1.3 million sweep rows) and a `ScenarioBatch.repeat`
batch (about 1.3 million scenarios of one row each). Larger runs go in chunks."""


def check_batch_memory(subject: str, n: int, item_bytes: float, items: str, advice: str) -> None:
    """Refuse, before anything is allocated, n items of `item_bytes` each beyond
    MAX_BATCH_BYTES: InputError "{subject} would take about 15.4 GB in memory; expected at most
    2 GB (about 129,870 such {items}): {advice}" (a 10^9-scenario batch grew to 22 GB and was
    killed by the kernel's out-of-memory killer, with no message)."""
    size = n * item_bytes
    if size > MAX_BATCH_BYTES:
        most = int(MAX_BATCH_BYTES // item_bytes)
        raise InputError(
            f"{subject} would take about {size / 1e9:,.1f} GB in memory; expected at most "
            f"{MAX_BATCH_BYTES / 1e9:g} GB (about {most:,} such {items}): {advice}"
        )


def physical_bytes() -> int | None:
    """This machine's physical memory [bytes], or None where the system does not say (sysconf's
    page count, as on Linux and macOS)."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * size if pages > 0 and size > 0 else None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator for large array batches, once per process.

    Returns True when the settings are in effect (glibc found and both accepted), False where
    the C library is not glibc, ``ECON_KEEP_FREED_MEMORY=0`` is set, or a setting was refused.
    """
    global _done
    if _done is None:
        _done = _apply()
    return _done


def _apply() -> bool:
    if os.environ.get(ENV_SWITCH, "1").strip() == "0":
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018  (present in glibc only)
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
