"""Where the data the product ships lives (models/), the ready-made scenarios in it, and the caches
of what econ reads from it.

Data read from models/ (the hardware and model catalogs, the MLPerf rows, the racks, the MACRS
tables, and what is computed from them) is cached in-process by the loaders (`catalog_cache`), and
read again once models/ has changed: `catalog_signature`, which `econ.provenance.catalog_versions`
(the catalog versions a result is stamped and cached under) computes, empties every such cache
when the files' sizes or modification times differ from those the cached data was read under. A
result keyed by catalog_versions() is thus computed from the files that version names, in a
long-running process (the app) too.
"""

from __future__ import annotations

import csv
import functools
import itertools
import os
import threading
import tomllib
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

DEFAULT_SCENARIO = "deepseek-r1-gb200-nvl72"


def models_dir() -> Path:
    """The models/ folder: $ECON_MODELS_DIR, else the one beside the econ package."""
    override = os.environ.get("ECON_MODELS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[1] / "models"


IGNORED_NAMES = ("__pycache__", ".DS_Store")
"""Entries of models/ that are no catalog (besides hidden ones, whose names start with '.')."""

_CACHES: list[Any] = []
"""The lru caches of every `catalog_cache` function, emptied together when models/ changes."""
_SIGNATURE_SEEN: tuple | None = None
"""The signature of models/ the cached catalog data was read under (None: none read yet)."""
_SIGNATURE_TICKET = -1
"""The ticket (`_TICKETS`) of the newest look at models/ that gave `_SIGNATURE_SEEN`."""
_TICKETS = itertools.count()
"""Numbers each look at models/ in the order they start: a look that started before the one
that gave `_SIGNATURE_SEEN` saw the folder as it was, and must not put that back."""
_SIGNATURE_LOCK = threading.Lock()
"""Held while `_SIGNATURE_SEEN`, `_SIGNATURE_TICKET` and `_GENERATION` change together."""
_GENERATION = 0
"""How many times models/ was seen to change: part of every `catalog_cache` key, so that data a
call read before a change (in another thread) is never served after it."""


def catalog_cache(maxsize: int) -> Callable[[Callable], Callable]:
    """functools.lru_cache(maxsize) for a function whose result is read from models/, or computed
    from what is read there: registered, so that `catalog_signature` empties it when models/
    changes. The data is then read again on its next use, never served from before the change."""

    def decorate(function: Callable) -> Callable:
        @lru_cache(maxsize=maxsize)
        def by_generation(generation: int, *args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Any:
            return by_generation(_GENERATION, *args, **kwargs)

        cached.cache_clear = by_generation.cache_clear  # type: ignore[attr-defined]
        _CACHES.append(by_generation)
        return cached

    return decorate


def catalog_entries(base: Path) -> list[tuple[str, list[Path]]]:
    """The catalogs of a models/ folder: each top-level entry's name and its files, sorted (a
    folder: every file below it; a file: itself). Hidden files and folders (a name starting with
    '.') and caches (`IGNORED_NAMES`) below `base` are skipped, whatever the folders above it are
    called (an installation under ~/.local or a .venv is read as any other)."""
    entries = []
    for entry in sorted(base.iterdir()):
        if _ignored([entry.name]):
            continue
        if entry.is_dir():
            files = sorted(
                p
                for p in entry.rglob("*")
                if p.is_file() and not _ignored(p.relative_to(base).parts)
            )
        else:
            files = [entry]
        entries.append((entry.name, files))
    return entries


def _ignored(parts: Iterable[str]) -> bool:
    return any(part.startswith(".") or part in IGNORED_NAMES for part in parts)


def catalog_signature(
    root: str | os.PathLike | None = None, entries: list[tuple[str, list[Path]]] | None = None
) -> tuple:
    """What tells one state of a models/ folder (default `models_dir()`) from another without
    reading its files: the folder's resolved path, then each catalog file's path, size and
    modification time [ns] (`catalog_entries`, or the `entries` already listed). For the
    models/ folder econ reads, a signature other than the last one seen empties every
    `catalog_cache`: the data is read again from the files as they are now.

    Safe in threads (the app's sessions): the signature seen, the generation and the caches
    change together under a lock. A signature other than the one seen always empties the caches
    (what it saw may be the newer state: never serve data from before a change), but becomes
    the one seen only if its look started after the look that gave that one, so a thread that
    looked at the files before a change and finishes after it cannot put back the older
    signature (every later look would then count a change that is none)."""
    global _SIGNATURE_SEEN, _SIGNATURE_TICKET, _GENERATION
    base = Path(root) if root is not None else models_dir()
    if not base.is_dir():
        return (str(base),)
    ticket = next(_TICKETS)  # (before the files are looked at)
    listed = catalog_entries(base) if entries is None else entries
    signature: list[tuple | str] = [str(base.resolve())]
    for _, files in listed:
        for path in files:
            stat = path.stat()
            signature.append((str(path), stat.st_size, stat.st_mtime_ns))
    key = tuple(signature)
    if base.resolve() != models_dir().resolve():
        return key
    with _SIGNATURE_LOCK:
        if key != _SIGNATURE_SEEN:
            _GENERATION += 1
            for cached in _CACHES:
                cached.cache_clear()
        if key == _SIGNATURE_SEEN or ticket > _SIGNATURE_TICKET:
            _SIGNATURE_SEEN, _SIGNATURE_TICKET = key, max(ticket, _SIGNATURE_TICKET)
    return key


def catalog_generation() -> int:
    """How many times this process has seen models/ change (its signature taken now): a cache
    kept outside econ's (the app's `st.cache_data`) is stale once this number moves."""
    catalog_signature()
    return _GENERATION


def benchmarks_dir() -> Path:
    """models/benchmarks: the MLPerf catalog (econ.benchmarks reads it with pandas, and
    econ.plausibility its best figure per hardware with the csv module)."""
    return models_dir() / "benchmarks"


RESULTS_FILE = "mlperf_inference_llm.csv"
V61_FILE = "mlperf_inference_v6.1.csv"
CLAIMS_FILE = "vendor_claims.csv"
ACCELERATORS_FILE = "accelerators.csv"
"""Files of models/benchmarks: MLPerf results v4.0-v6.0, v6.1's summary rows, vendor claims, and
the accelerator names each maps to a hardware key."""


MACRS_TABLE_FILE = "macrs_gds_tables.csv"
"""IRS MACRS GDS percentage tables in models/ (Pub 946 Tables A-1 to A-5, with their sources)."""


def macrs_gds_tables(path: str | os.PathLike | None = None) -> dict[tuple[int, str], np.ndarray]:
    """The IRS MACRS GDS percentage tables shipped in ``models/macrs_gds_tables.csv``, for
    econ.depreciation.macrs_gds(..., tables=...).

    Returns
    -------
    dict (recovery_years, convention) -> read-only array of the percentages of recovery years
    1, 2, ... [percent of the unadjusted basis], exactly as published (each table sums to 100.00).

    References
    ----------
    IRS Publication 946 (2024), Appendix A, Tables A-1 (half-year) and A-2 to A-5 (mid-quarter).
    """
    return _read_macrs(str(models_dir() / MACRS_TABLE_FILE if path is None else path))


@catalog_cache(maxsize=4)
def _read_macrs(path: str) -> dict[tuple[int, str], np.ndarray]:
    from econ.depreciation import DepreciationError  # (econ.depreciation imports no catalog)

    rows: dict[tuple[int, str], dict[int, float]] = {}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            for line, rec in enumerate(csv.DictReader(fh), start=2):
                try:
                    key = (int(rec["recovery_years"]), rec["convention"].strip())
                    rows.setdefault(key, {})[int(rec["year"])] = float(rec["percent"])
                except (KeyError, TypeError, ValueError, AttributeError):
                    raise DepreciationError(
                        f"{path}, line {line}: expected columns recovery_years (an integer), "
                        "convention, year (an integer) and percent (a number)"
                    ) from None
    except OSError as exc:
        raise DepreciationError(f"cannot read the MACRS tables {path}: {exc.strerror}") from None
    tables = {}
    for key, years in rows.items():
        if sorted(years) != list(range(1, len(years) + 1)):
            raise DepreciationError(
                f"{path}: table {key} has years {sorted(years)}; expected 1, 2, ... without gaps"
            )
        tables[key] = np.array([years[y] for y in range(1, len(years) + 1)])
        tables[key].setflags(write=False)
    return tables


def ready_made_scenarios() -> dict[str, Path]:
    """Name (file stem) -> path of each ready-made scenario, sorted by name."""
    return {p.stem: p for p in sorted((models_dir() / "scenarios").glob("*.toml"))}


def ready_made_path(name: str | os.PathLike) -> Path | None:
    """The ready-made scenario a bare name names (models/scenarios/NAME.toml), as every command
    and econ.load_scenario read a scenario argument: None for `library:NAME`, for a path that
    exists (a file named NAME in the working folder wins), for a name with a suffix (NAME.toml
    is a file's name, never the ready-made one's) and for a name no ready-made scenario has."""
    path = Path(name)
    if str(name).startswith("library:") or path.suffix or path.exists():
        return None
    return ready_made_scenarios().get(str(name))


def validation_problems(exc: ValidationError) -> str:
    """Pydantic errors as 'field: message (got value)', one per problem, values cut short."""
    parts = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"]) or "(entry)"
        got = "" if e["type"] == "missing" else f" (got {e.get('input')!r:.60})"
        parts.append(f"{where}: {e['msg']}{got}")
    return "; ".join(parts)


def load_toml_table(
    path: str,
    section: str,
    build: Callable[[str, dict[str, Any]], Any],
    error: type[Exception],
    what: str,
) -> tuple[tuple[str, Any], ...]:
    """Entries of a catalog file's [section.<key>] tables, each built (and validated) by `build`.

    Every problem raises `error` naming the file, the entry and the field: a missing file, bad
    TOML, no such tables, an entry that is not a table, or an entry its model rejects.
    """
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise error(f"{what} catalog {path} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} catalog {path} is not valid TOML: {exc}") from exc
    table = raw.get(section)
    if not isinstance(table, dict) or not table:
        raise error(f"{what} catalog {path} has no [{section}.<key>] tables")
    entries = []
    for key, fields in table.items():
        if not isinstance(fields, dict):
            raise error(f"{path}: {section}.{key} must be a table of fields, got {fields!r:.60}")
        try:
            entries.append((key, build(key, fields)))
        except ValidationError as exc:
            raise error(f"{path}: {section}.{key}: {validation_problems(exc)}") from exc
    return tuple(entries)
