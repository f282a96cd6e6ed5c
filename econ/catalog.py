"""Where the data the product ships lives (models/), and the ready-made scenarios in it."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

DEFAULT_SCENARIO = "deepseek-r1-gb200-nvl72"


def models_dir() -> Path:
    """The models/ folder: $ECON_MODELS_DIR, else the one beside the econ package."""
    override = os.environ.get("ECON_MODELS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[1] / "models"


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
