"""Scenario file format versions: migrations that bring an older file to the current schema.

A scenario file carries `schema_version` (absent means version 1, the first versioned format). Each
format change that would break old files registers a migration: a function from a plain dict of
version k (as read from TOML) to a plain dict of version k + 1. `migrate` applies them in order
before validation, so old files keep loading and the validated Scenario is always current; saving it
writes the current version. Today the current version is SCHEMA_VERSION = 1 and no migration is
registered.

Writing a migration: it receives a deep copy (it may change it in place or build a new dict), must
not read anything beyond the dict (no files, no clock), and returns the dict of the next version;
`migrate` sets `schema_version` afterwards. Register it with
``@register_migration(k, "what changed")``.

Errors are ScenarioError (an InputError: exit 3 on the command line, and `econ validate` reports
them like any other invalid file). Like the rest of econ.scenario this module imports nothing of econ
beyond units and errors.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from econ.errors import InputError
from econ.scenario.errors import ScenarioError
from econ.scenario.models import SCHEMA_VERSION

FIRST_VERSION = 1
"""Version of a file that has no `schema_version` field (files written before versioning began)."""


def _error(file, value, expected: str) -> InputError:
    return ScenarioError(file, "schema_version", value, expected)


@dataclass(frozen=True)
class Migration:
    """One step from `from_version` to `from_version + 1`."""

    from_version: int
    description: str
    apply: Callable[[dict[str, Any]], dict[str, Any]]


MIGRATIONS: dict[int, Migration] = {}
"""Registered migrations keyed by the version they start from."""


def register_migration(
    from_version: int, description: str, registry: MutableMapping[int, Migration] | None = None
) -> Callable[[Callable[[dict], dict]], Callable[[dict], dict]]:
    """Decorator registering a migration from `from_version` to `from_version + 1`."""
    target = MIGRATIONS if registry is None else registry

    def decorate(function: Callable[[dict], dict]) -> Callable[[dict], dict]:
        if from_version in target:
            raise ValueError(
                f"a migration from schema_version {from_version} is already registered "
                f"({target[from_version].description!r})"
            )
        target[from_version] = Migration(from_version, description, function)
        return function

    return decorate


def file_version(data: Mapping[str, Any], file: str | os.PathLike | None = None) -> int:
    """The schema version a dict says it has (FIRST_VERSION when absent)."""
    version = data.get("schema_version", FIRST_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise _error(file, version, "expected a whole number such as 1")
    return version


def _versions(first: int, last: int) -> str:
    """The schema versions from `first` to `last` as a message says them: "1", "from 1 to 3"."""
    return f"{first}" if first == last else f"from {first} to {last}"


def migrate(
    data: Mapping[str, Any],
    file: str | os.PathLike | None = None,
    *,
    target: int = SCHEMA_VERSION,
    registry: Mapping[int, Migration] | None = None,
    applied: list[Migration] | None = None,
) -> dict[str, Any]:
    """Bring a scenario dict (as read from TOML) to schema version `target`.

    Returns a new dict (the input is not changed); a dict already at `target` comes back as an
    equal copy, so calling this twice is harmless. Steps applied are appended to `applied`.

    Raises ScenarioError when the file is newer than this package, or older with no registered
    path to `target`; the message names the file, the version and what was expected.
    """
    steps = MIGRATIONS if registry is None else registry
    version = file_version(data, file)
    if version > target:
        raise _error(
            file,
            version,
            f"this file was written by a newer econ; expected schema_version {target} or older "
            "(upgrade econ to read it)",
        )
    result = copy.deepcopy(dict(data))
    while version < target:
        step = steps.get(version)
        if step is None and version < FIRST_VERSION:
            raise _error(
                file,
                version,
                f"below {FIRST_VERSION}, the first version; expected schema_version "
                + _versions(FIRST_VERSION, target),
            )
        if step is None:
            known = ", ".join(f"{k} -> {k + 1}" for k in sorted(steps)) or "none"
            raise _error(
                file,
                version,
                f"no migration from version {version} to {version + 1}; expected schema_version "
                f"{target} (registered migrations: {known})",
            )
        try:
            result = step.apply(result)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure on the old data: the file's
            raise _error(
                file,
                version,
                f"migrating to version {version + 1} ({step.description}) failed: {exc!r}; "
                f"expected a valid version-{version} file",
            ) from None
        if not isinstance(result, dict):
            raise TypeError(
                f"migration from version {version} returned {type(result).__name__}, not a dict"
            )
        version += 1
        result["schema_version"] = version
        if applied is not None:
            applied.append(step)
    if "schema_version" in data or version != FIRST_VERSION:
        result["schema_version"] = version
    return result


__all__ = [
    "FIRST_VERSION",
    "MIGRATIONS",
    "Migration",
    "file_version",
    "migrate",
    "register_migration",
]
