"""Which files a scenario may make econ open: paths inside a scenario stay inside allowed folders.

A scenario file is data someone else may have written (a colleague's file, an app link, an upload),
so a path inside it (today `throughput.measured.curve`, in the scenario and in each vintage) is
resolved against the scenario file's own folder and must stay inside it or inside a folder the user
allowed on purpose (`econ --allow-paths DIR`). The check is lexical first and then on the resolved
path (symlinks), and its answer never depends on whether the file exists, so a refusal tells nothing
about the server's files (`econ.files.inside_folders`, which also confines the files an importer
opens beside a curve: `econ.throughput.resolve.curve_reach`).

Only file paths are confined: `load_scenario` calls `resolve_paths`. `econ.scenario.loads` and
`validate_dict` take data that is already the caller's and use a path as given (what
`load_scenario` resolved is absolute, and `loads(dumps(s))` must give `s`); confine text from
someone else with `resolve_paths(data, folder)` before `validate_dict` (docs/inputs.md).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from econ.files import inside_folders
from econ.scenario.errors import ScenarioError

# Folders the command-line user allowed with --allow-paths, for every scenario loaded in this context.
_ALLOWED: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "econ_allowed_paths", default=()
)


@contextlib.contextmanager
def allow_paths(folders: Iterable[str | os.PathLike]) -> Iterator[tuple[Path, ...]]:
    """Within the block, scenario paths may also point into `folders` (absolute, resolved)."""
    resolved = tuple(Path(os.path.realpath(os.path.abspath(f))) for f in folders)
    token = _ALLOWED.set(_ALLOWED.get() + resolved)
    try:
        yield resolved
    finally:
        _ALLOWED.reset(token)


def allowed_folders() -> tuple[Path, ...]:
    """The folders allowed in the current context (by `allow_paths`)."""
    return _ALLOWED.get()


def path_fields(data: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(dotted path, table holding it, key) of every file path field in plain scenario data."""
    found = []
    sections = [("throughput", data.get("throughput"))]
    vintages = data.get("vintages")
    if isinstance(vintages, list):
        sections += [(f"vintages[{i}].throughput", v.get("throughput"))
                     for i, v in enumerate(vintages) if isinstance(v, dict)]
    for where, section in sections:
        measured = section.get("measured") if isinstance(section, dict) else None
        if isinstance(measured, dict) and "curve" in measured:
            found.append((f"{where}.measured.curve", measured, "curve"))
    return found


def resolve_inside(
    value: str,
    folder: Path,
    allowed: Sequence[Path],
    *,
    file: str | None,
    field: str,
    where: str | None = None,
) -> str:
    """`value` resolved against `folder`, or ScenarioError unless it stays inside an allowed folder.

    Parameters
    ----------
    value : the path as written in the scenario (relative to `folder`, or absolute)
    folder : the folder relative paths are read from (the scenario file's own folder)
    allowed : folders the path may lie in (the scenario's folder among them)
    file, field : where the value came from, for the message
    where : the allowed places in words, for the message (default: the folders' paths)
    """
    if "\x00" in value:
        raise ScenarioError(file, field, value.replace("\x00", "\\0"),
                            "a path may not contain a NUL byte")
    lexical = Path(os.path.normpath(os.path.join(os.path.abspath(folder), value)))
    if not inside_folders(lexical, allowed):
        where = where or (
            ", ".join(os.path.abspath(a) for a in allowed) + "; econ opens no file outside the "
            "scenario's folder unless you allow that folder (econ --allow-paths DIR ...)"
        )
        raise ScenarioError(file, field, value, f"a path in a scenario must stay inside {where}")
    return str(lexical)


def resolve_paths(
    data: dict[str, Any],
    folder: str | os.PathLike,
    allowed: Iterable[str | os.PathLike] = (),
    file: str | os.PathLike | None = None,
    where: str | None = None,
) -> dict[str, Any]:
    """Resolve every path field of `data` in place against `folder`; refuse any that leaves it.

    `allowed` adds folders besides `folder` (and besides those of `allow_paths`); `where` says
    in words where paths may point, for the message.
    """
    folder = Path(folder)
    roots = [folder, *map(Path, allowed), *allowed_folders()]
    name = None if file is None else str(file)
    for field, table, key in path_fields(data):
        value = table[key]
        if isinstance(value, str) and value:
            table[key] = resolve_inside(value, folder, roots, file=name, field=field, where=where)
    return data
