"""Which econ code is running: a fingerprint of the package's Python source.

The version number alone is not bumped by every change (it is 0.1.0 at every commit), so what
must be the same code on two machines (a batch run's client and its Dask workers) is compared
by `code_fingerprint`: econ's version and a hash of the bytes of every *.py file of the package.
It is the value of the library's results key (`econ.library.store.engine_version`), computed
here without the database layer, so that a batch run or a worker can afford it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

HASH_CHARS = 40
"""Hex digits of the source hash kept in a fingerprint (160 bits)."""

SHORT_CHARS = 12
"""Hex digits of the source hash shown in a message (`short`)."""


def source_files(folder: Path) -> list[Path]:
    """Every *.py file below `folder` (caches skipped), in path order."""
    return sorted(
        (p for p in folder.rglob("*.py") if "__pycache__" not in p.parts and p.is_file()),
        key=lambda p: p.relative_to(folder).as_posix(),
    )


def sources_sha256(folder: Path) -> str:
    """SHA-256 over every *.py file below `folder` (caches skipped): each one's path relative to
    `folder` and content, in path order."""
    digest = hashlib.sha256()
    for path in source_files(folder):
        digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@functools.cache
def code_fingerprint() -> str | None:
    """econ's version and the first HASH_CHARS hex digits of `sources_sha256` of the package
    this process imported, e.g. 0.1.0+3f2a...; computed once per process.

    None when a source file was modified at or after the time this process imported econ (a
    `git pull` or an upgrade under a running worker): the code running may then be older than
    the files, and no fingerprint of the files can name it."""
    import econ

    folder = Path(econ.__file__).parent
    if any(p.stat().st_mtime_ns >= econ._IMPORTED_NS for p in source_files(folder)):
        return None
    return f"{econ.__version__}+{sources_sha256(folder)[:HASH_CHARS]}"


def short(fingerprint: str | None) -> str:
    """A fingerprint as a message shows it: the version and SHORT_CHARS hex digits, or
    "unknown (its files changed after it started)" for None."""
    if fingerprint is None:
        return "unknown (its econ files changed after it started)"
    version, _, digest = fingerprint.partition("+")
    return f"{version}+{digest[:SHORT_CHARS]}"
