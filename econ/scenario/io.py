"""Reading, writing and overriding scenario files (TOML), and the errors they raise.

A scenario file is TOML whose tables mirror the pydantic sections. Overrides use dotted paths
(`capex.gpu_price_usd=35000`) with TOML values, applied before validation so the same rules apply.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ValidationError

from econ.errors import InputError
from econ.scenario.migrations import migrate
from econ.scenario.models import Scenario


class ScenarioError(InputError):
    """Invalid scenario input; names the file, the field path, the value and what was expected."""

    def __init__(self, file: str | os.PathLike | None, path: str, value: Any, expected: str):
        self.file = str(file) if file is not None else None
        self.path = path
        self.value = value
        self.expected = expected
        where = f"{self.file}: " if self.file else ""
        field = f"{path} = {value!r}: " if value is not None else (f"{path}: " if path else "")
        super().__init__(f"{where}{field}{expected}")


def _format_loc(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in ("function-after", "function-before") or str(item).startswith("function-"):
            continue
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _errors_from_validation(exc: ValidationError, file: str | os.PathLike | None) -> ScenarioError:
    messages = []
    first = None
    for err in exc.errors(include_url=False):
        path = _format_loc(err["loc"])
        value = err.get("input")
        if isinstance(value, Mapping):  # a whole table: the message says what is wrong with it
            value = None
        expected = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            expected = "unknown field; " + _valid_names_hint(err["loc"])
        error = ScenarioError(file, path, value, expected)
        first = first or error
        messages.append(
            str(error) if not messages else str(ScenarioError(None, path, value, expected))
        )
    combined = ScenarioError(first.file, first.path, first.value, first.expected)
    combined.args = ("\n  ".join(messages),)
    return combined


def _section_model(loc: Iterable[Any]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Scenario
    for part in list(loc)[:-1]:
        if model is None or isinstance(part, int) or part not in model.model_fields:
            return None
        model = _model_of(model.model_fields[part].annotation)
    return model


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _valid_names_hint(loc: Iterable[Any]) -> str:
    model = _section_model(loc)
    if model is None:
        return "check the spelling"
    return "expected one of: " + ", ".join(model.model_fields)


def validate_dict(data: Mapping[str, Any], file: str | os.PathLike | None = None) -> Scenario:
    """Validate a plain dict (as read from TOML) into a Scenario, or raise ScenarioError."""
    try:
        return Scenario.model_validate(migrate(data, file))
    except ValidationError as exc:
        raise _errors_from_validation(exc, file) from None


def read_toml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a TOML file into a dict, with ScenarioError for missing files and bad syntax."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError(path, "", None, "file not found") from None
    except IsADirectoryError:
        raise ScenarioError(
            path, "", None, "is a directory; expected a TOML scenario file"
        ) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(path, "", None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ScenarioError(path, "", None, f"cannot be read ({exc.strerror})") from None
    if not text.strip():
        raise ScenarioError(path, "", None, "file is empty; expected a TOML scenario")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(path, "", None, f"malformed TOML: {exc}") from None
    return migrate(data, path)  # older schema versions to today's, before any override


def load_scenario(
    path: str | os.PathLike, overrides: Mapping[str, Any] | Iterable[str] | None = None
) -> Scenario:
    """Load and validate a scenario file, applying dotted-path overrides first.

    Parameters
    ----------
    path : path of a TOML scenario file
    overrides : mapping of dotted path to value, or strings "path=value" (value in TOML syntax)

    `library:NAME[@VERSION]` names a version in the scenario library (econ.library) instead.
    """
    if str(path).startswith("library:"):
        from econ.library import load_library_scenario  # the database layer loads only here

        return load_library_scenario(str(path), overrides)
    data = read_toml(path)
    if overrides:
        data = apply_overrides(data, overrides, file=path)
    return validate_dict(_resolve_relative_paths(data, Path(path).parent), file=path)


def _resolve_relative_paths(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Measured-curve files named relative to the scenario file become paths from here."""
    sections = [data.get("throughput")] + [
        v.get("throughput") for v in data.get("vintages", []) if isinstance(v, dict)
    ]
    for section in sections:
        measured = section.get("measured") if isinstance(section, dict) else None
        curve = measured.get("curve") if isinstance(measured, dict) else None
        if isinstance(curve, str) and curve and not Path(curve).is_absolute():
            measured["curve"] = str(folder / curve)
    return data


def parse_override(text: str) -> tuple[str, Any]:
    """Parse "path=value" with the value in TOML syntax; bare words are taken as strings."""
    if "=" not in text:
        raise ScenarioError(None, text, None, "expected an override of the form path=value")
    path, raw = (s.strip() for s in text.split("=", 1))
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return path, value


def apply_overrides(
    data: Mapping[str, Any],
    overrides: Mapping[str, Any] | Iterable[str],
    file: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Return a copy of `data` with each dotted path set; unknown paths raise ScenarioError."""
    items = overrides.items() if isinstance(overrides, Mapping) else map(parse_override, overrides)
    result = json.loads(json.dumps(data, default=str))  # deep copy of plain TOML data
    for path, value in items:
        check_path(path, file=file)
        if path.startswith("sources."):
            result.setdefault("sources", {})[path.removeprefix("sources.")] = value
            continue
        node = result
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ScenarioError(file, path, node, "cannot set a field inside a non-table value")
        node[leaf] = value
    return result


def check_path(path: str, file: str | os.PathLike | None = None) -> None:
    """Raise ScenarioError unless `path` names a field of Scenario (listing the valid names)."""
    model: type[BaseModel] | None = Scenario
    parts = path.split(".")
    if parts[0] == "sources" and len(parts) > 1:  # sources is a table keyed by field path
        return
    for i, part in enumerate(parts):
        if model is None:
            raise ScenarioError(file, path, None, f"'{parts[i - 1]}' has no sub-fields")
        if part not in model.model_fields:
            where = ".".join(parts[:i]) or "the scenario"
            raise ScenarioError(
                file,
                path,
                None,
                f"no field '{part}' in {where}; expected one of: " + ", ".join(model.model_fields),
            )
        annotation = model.model_fields[part].annotation
        # Lists and tables (throughput.steps, sources) are set whole, in TOML syntax.
        nested = typing.get_origin(annotation) not in (tuple, list, dict)
        model = _model_of(annotation) if nested else None


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """Plain TOML-ready dict of a scenario, None values dropped (TOML has no null)."""
    return _drop_none(scenario.model_dump(mode="python"))


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_drop_none(v) for v in value]
    return value


def dumps(scenario: Scenario) -> str:
    """TOML text of a scenario; loads(dumps(s)) == s."""
    return tomli_w.dumps(scenario_to_dict(scenario))


def loads(text: str, file: str | os.PathLike | None = None) -> Scenario:
    """Validate a scenario from TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(file, "", None, f"malformed TOML: {exc}") from None
    return validate_dict(data, file=file)


def atomic_write(path: str | os.PathLike, data: bytes | str, overwrite: bool = False) -> Path:
    """Write a file through a temporary file and a rename, so a failure leaves no partial file.

    Raises FileExistsError when the file exists and `overwrite` is False.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; refusing to overwrite it")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_scenario(scenario: Scenario, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a scenario as TOML, atomically; never overwrites unless asked."""
    return atomic_write(path, dumps(scenario), overwrite=overwrite)


def json_schema() -> dict[str, Any]:
    """JSON schema of a scenario file, generated from the models."""
    return Scenario.model_json_schema()
