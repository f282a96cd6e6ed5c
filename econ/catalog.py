"""Where the data the product ships lives (models/), and the ready-made scenarios in it."""

from __future__ import annotations

import csv
import os
import tomllib
from collections.abc import Callable
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


@lru_cache(maxsize=4)
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
