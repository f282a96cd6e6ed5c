"""The app's global state: the scenario being edited, where it came from, and the shareable link.

The scenario lives in `st.session_state` as the plain dict the user is editing (TOML data, possibly
invalid), so nothing the user typed is lost when validation fails; every page validates it with the
scenario models and either projects it or shows the reason it is invalid. The link in the address
bar carries the ready-made scenario's name and the user's edits (compressed JSON), so a copied URL
restores the same scenario in a new session.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import logging
import math
import re
import tomllib
import typing
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import tomli_w
from pydantic import BaseModel, ValidationError

from econ.catalog import DEFAULT_SCENARIO, models_dir, ready_made_scenarios
from econ.scenario import (
    Scenario,
    ScenarioError,
    parse_toml,
    read_toml,
    toml_ready,
    validate_dict,
)
from econ.scenario.errors import shortened
from econ.scenario.io import (
    EMPTY_NUMBER,
    MAX_NESTING,
    check_complete,
    expected_message,
    same_value,
    too_deep,
)
from econ.scenario.io import get_path as _get_path
from econ.scenario.paths import resolve_paths
from econ.text import problem_lines

LOG = logging.getLogger("econ.ui")

DATA = "econ.data"
BASE = "econ.base"
BASE_NAME = "econ.base_name"
VERSION = "econ.version"
RAW = "econ.raw"
SHOWN = "econ.shown"
SAVED = "econ.saved"
MONEY = "econ.money"
NOTICE = "econ.notice"
BROWSER_RESET = "econ.browser_reset"
"""Session key: how many fields a browser reset emptied (form.settle_commits), to warn of."""
LINK_ERROR = "econ.link_error"
LIBRARY_BASE = "econ.library_base"
"""The scenario library version the scenario being edited descends from, {"name", "version"}
(loaded from the library or a link to it, or last saved to it in this session): a save passes
it as the base, so that saving an edit of a stale version never silently undoes a colleague's
newer one."""
SAVED_LIBRARY = "econ.saved_library_base"
"""LIBRARY_BASE of each copy kept in the session (SAVED), by its name."""

MAX_LINK_CHARS = 6000
"""Longest encoded scenario the link carries; browsers and proxies cut URLs near 8 kB."""
MAX_LINK_JSON_BYTES = 64 * 1024
"""Most bytes a link's edits may inflate to: a whole ready-made scenario is 6 to 9 kB of JSON
(under 5,000 characters of link), and the bound stops a short link that inflates to megabytes
from costing the server seconds at every rerun."""
MAX_DEPTH = MAX_NESTING
"""Levels of tables and lists that edits from a link or a file may nest, as a scenario file may
(econ.scenario.io.MAX_NESTING; a scenario nests about six, e.g. financing.covenants.dscr_floor)."""
MAX_TEXT_CHARS = {"name": 200, "description": 5_000, "sources": 2_000}
"""Longest name, description and source (each entry of [sources]) a link may carry."""
MAX_SOURCE_KEY_CHARS = 200
"""Longest key of [sources] a link may carry (a field's dotted path)."""

SAVED_PREFIX = "saved: "
UPLOAD_PREFIX = "uploaded: "
LIBRARY_PREFIX = "library:"  # a version of the scenario library (a link may name one)
LINK_NAME = "from a shared link"
MISSING = object()


class LinkError(ScenarioError):
    """A shared link whose scenario cannot be read; `part` names the link's parameter at fault
    (`scenario`, the base's name, or `edits`), or is empty where the message names it."""

    def __init__(self, expected: str, part: str = "edits"):
        super().__init__("the shared link", part, None, expected)


UNREADABLE = "the edits in the link are not readable (damaged or cut short)"
"""Why edits that do not decode are refused: the decoder's own words (zlib's "Error -3 while
decompressing data", base64's padding) say nothing to the reader; the log keeps them."""


def _unreadable(exc: Exception | None = None) -> LinkError:
    if exc is not None:
        LOG.info("a shared link's edits could not be decoded: %s: %s", type(exc).__name__, exc)
    return LinkError(UNREADABLE, part="")


# --- plain-dict helpers ---------------------------------------------------------------------------


def get_path(data: Mapping, path: str, default: Any = MISSING) -> Any:
    """Value at a dotted path of nested dicts, or `default` when a part is absent."""
    return _get_path(data, path, default)


def set_path(data: dict, path: str, value: Any) -> None:
    """Set a dotted path, creating tables on the way (a non-table in the way is replaced)."""
    *parents, leaf = path.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value


def plain(value: Any) -> Any:
    """JSON/TOML-friendly deep copy: tuples to lists, models to dicts."""
    if isinstance(value, BaseModel):
        return plain(value.model_dump())
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def drop_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [drop_none(v) for v in value]
    return value


REMOVED = {"$removed": True}
"""The edit of a field the base gives and the data no longer does (a line deleted in the TOML
tab): the field is then the models' default. Not None, which `merge` keeps as the value an
emptied box holds (refused as empty); no scenario field is a table with this key."""


def diff(data: Mapping, base: Mapping) -> dict:
    """The entries of `data` that differ from `base` (tables compared key by key; values as
    `same_value` compares them: a NaN the file gave is the NaN it still holds, not an edit), and
    REMOVED for each entry of `base` that `data` no longer has."""
    out = {}
    for key, value in data.items():
        if key not in base:
            out[key] = value
        elif isinstance(value, Mapping) and isinstance(base[key], Mapping):
            inner = diff(value, base[key])
            if inner:
                out[key] = inner
        elif not same_value(value, base[key]):
            out[key] = value
    for key in base:
        if key not in data:
            out[key] = dict(REMOVED)
    return out


def merge(base: Mapping, edits: Mapping) -> dict:
    """`base` with `edits` applied table by table (a None edit clears the field, as an emptied
    box does; REMOVED takes it out, so that the models' default applies)."""
    out = copy.deepcopy(dict(base))
    for key, value in edits.items():
        if isinstance(value, Mapping) and dict(value) == REMOVED:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def toml_text(data: Mapping) -> str:
    """TOML text of a (possibly invalid) scenario dict (`econ.scenario.toml_ready`: None values
    left out, a covenant turned off written "none")."""
    return tomli_w.dumps(toml_ready(plain(data)))


# --- validation -----------------------------------------------------------------------------------


@dataclass
class Validation:
    """The current scenario: valid (`scenario`) or not (`message` and the errors by field path)."""

    scenario: Scenario | None
    message: str = ""
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.scenario is not None


def error_path(loc) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif str(item).startswith("function-") or "[" in str(item):
            continue  # pydantic's names of validators and union members, not fields
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


FINITE = "expected a finite number (at most about 1.8e308)"


def _digits(value: int) -> int:
    """Decimal digits of an integer, counted without converting it to text (Python refuses to
    write an integer of more than 4,300 digits)."""
    return 1 if value == 0 else math.floor(math.log10(abs(value))) + 1


def huge_integers(data: Any) -> list[tuple[str, int]]:
    """(dotted path, digits) of every integer in `data` too large to be a float (beyond 1.8e308,
    which no field of a scenario can hold), found without recursion."""
    found = []
    stack = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            try:
                float(value)
            except OverflowError:
                found.append((path, _digits(value)))
    return sorted(found)


def huge_integer_message(digits: int) -> str:
    return f"an integer of {digits:,} digits; {FINITE}"


OVERLONG = f"an integer of more than 4,300 digits; {FINITE}"
"""An integer Python refuses to read (more than 4,300 digits), where its field is not known."""
_LONG_INTEGER = re.compile(r"(?<![\w.])[+-]?\d(?:_?\d){4000,}(?![\w.])")
"""An integer literal of TOML (or JSON) text too long for Python to read (it refuses more than
4,300 digits; a little shorter is matched too, all are beyond the float range)."""
_MARK = "econ: an integer too long to read #"


def _overlong_integer(text: str, loads=tomllib.loads) -> tuple[str, int] | None:
    """(field path, digits) of the first integer literal of TOML text (JSON with `loads` =
    json.loads) too long to read, found by reading the text again with each such literal
    replaced by a marked string; None when none can be placed (the marked text does not read
    either)."""
    literals = list(_LONG_INTEGER.finditer(text))
    if not literals:
        return None
    numbers = iter(range(len(literals)))
    marked = _LONG_INTEGER.sub(lambda _: f'"{_MARK}{next(numbers)}"', text)
    try:
        data = loads(marked)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
    found = []
    stack = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else k, v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, str) and value.startswith(_MARK):
            found.append((int(value.removeprefix(_MARK)), path))
    if not found:
        return None
    index, path = min(found)
    digits = literals[index].group().lstrip("+-").replace("_", "")
    return path, len(digits)


def parse_scenario_text(content: bytes | str, file: str | None = None) -> dict:
    """`econ.scenario.parse_toml` for text that arrives in the app (an upload, the TOML box),
    with the field named of an integer too long for Python to read (parse_toml names the file
    only: tomllib does not say where the literal is), and never Python's own ValueError;
    brought to today's schema version as `econ` reads a file (econ.scenario.migrations: an
    upload from a newer econ read "schema_version = 2: 2 is above 1; expected a whole number
    from 1 to 1", not that a newer econ wrote it)."""
    from econ.scenario.migrations import migrate

    try:
        return migrate(parse_toml(content, file), file)
    except ScenarioError as exc:
        if exc.path or "digits" not in exc.expected:
            raise
        error = exc
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        error = ScenarioError(file, "", None, OVERLONG)
    text = content.decode("utf-8-sig") if isinstance(content, bytes) else content
    found = _overlong_integer(text.removeprefix("\ufeff"))
    if found is None:
        raise error from None
    path, digits = found
    raise ScenarioError(file, path, None, huge_integer_message(digits)) from None


APP_PATHS = (
    "the models/ folder shipped with econ: a scenario opened in the app (from a link, an upload or "
    "a saved copy) cannot make the server open any other file; take a measured curve from the "
    "Throughput page instead"
)


def validate_in_app(data: Mapping, file: str | None = None) -> Scenario:
    """Validate scenario data that arrived in the app (link, upload, edits), or ScenarioError.

    Paths inside it resolve against the ready-made scenarios' folder and may point only into
    models/: a link or an upload never makes the server open a file of its choosing. It must give
    the sections `econ project` requires (`check_complete`): the app projects and exports no
    scenario that the command line refuses.
    """
    huge = huge_integers(data)
    if huge:  # before validation, which cannot even compare such a number with a bound
        path, digits = huge[0]
        raise ScenarioError(file, path, None, huge_integer_message(digits))
    check_complete(data, file)
    data = copy.deepcopy(dict(data))
    folder = models_dir()
    resolve_paths(data, folder / "scenarios", [folder], file=file, where=APP_PATHS)
    return validate_dict(data, file=file)


EMPTY_BOX = (
    f"{EMPTY_NUMBER} (a number box holds digits only: the browser drops letters typed in it "
    "before the app sees them)"
)
"""An emptied number box: the browser sends the app no text of letters typed in a number box
(its value is then empty), so that no message can quote them."""


def validate(data: Mapping, raw_errors: Mapping[str, str] | None = None) -> Validation:
    """Validate a scenario dict with the scenario models; errors keyed by dotted field path."""
    errors: dict[str, list[str]] = {}
    for path, message in (raw_errors or {}).items():
        errors.setdefault(path, []).append(message)
    huge = huge_integers(data)
    if huge:  # each named; validation would fail on them with Python's words (OverflowError)
        from econ.ui.form import find, path_label

        lines = []
        for path, digits in huge:
            message = huge_integer_message(digits)
            errors.setdefault(path, []).append(message)
            lines.append(f"{path_label(path) if find(path) is not None else path}: {message}")
        lines += kept_as_typed(raw_errors)
        text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
        return Validation(None, text, errors)
    try:
        scenario = validate_in_app(data)
    except ScenarioError as exc:
        listed: list[str] = []
        try:
            Scenario.model_validate(data)
        except ValidationError as detail:
            from econ.scenario.section import FIELD_ERRORS
            from econ.ui.form import app_message, find, path_label, unit_message

            for err in detail.errors(include_url=False):
                path = error_path(err["loc"])
                given = err.get("input", MISSING)
                if err["type"] in FIELD_ERRORS:  # raised by the section for one of its fields
                    path = f"{path}.{err['ctx']['field']}" if path else err["ctx"]["field"]
                    given = err["ctx"]["value"]
                if path in (raw_errors or {}):
                    continue  # the box shows the text typed, and its reason; not what it replaced
                shown = unit_message(path, err)
                # in the field's displayed unit where there is one; an unknown field lists names
                unknown = err["type"] == "extra_forbidden"
                message = shown if shown and not unknown else expected_message(err)
                if not (unknown or shown):  # the fields it names by the form's labels (a
                    message = app_message(path, message)  # bound's own words name none)
                typed = as_typed_message(path, given)
                if typed is not None:  # as refused where it was typed (a link carries it)
                    shown, message = typed, typed
                if given is None and message == EMPTY_NUMBER:
                    message = EMPTY_BOX
                errors.setdefault(path, []).append(message)
                # named as the form labels it; a section's or list's value is never quoted whole
                name = path_label(path) if find(path) is not None else path
                whole = isinstance(given, Mapping | list | tuple)
                if given is None and message.startswith(EMPTY_NUMBER):
                    listed.append(f"{name} is {message}")  # an emptied box: "... is empty; ..."
                    continue
                # (a boolean where a number belongs has no value to quote: its message spells it)
                spelled = given is None and err["type"] in FIELD_ERRORS
                quoted = not (shown or whole or spelled or given is MISSING)
                value = f" = {shortened(given)}" if quoted else ""
                # a rule between fields of different sections (the scenario's own) names them
                listed.append(f"{name}{value}: {message}" if path else message)
        except Exception as detail:  # noqa: BLE001 - any failure is reported, never raised
            errors.setdefault("", []).append(str(detail))
        kept = kept_as_typed(raw_errors)
        lines = problem_lines(listed + kept) if listed or kept else [str(exc)]
        # one problem a line, in the units the fields are shown in
        text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
        return Validation(None, text, errors)
    except Exception as exc:  # noqa: BLE001 - e.g. a value pydantic cannot even compare
        return Validation(None, f"{type(exc).__name__}: {exc}", {"": [str(exc)]})
    if raw_errors:
        return Validation(None, "\n".join(kept_as_typed(raw_errors)), errors)
    unopened = measured_file_problem(scenario)
    if unopened is not None:
        path, message = unopened
        return Validation(None, message, {path: [message]})
    return Validation(scenario)


MEASURED_CURVE = "throughput.measured.curve"


def measured_file_problem(scenario: Scenario) -> tuple[str, str] | None:
    """The check of a valid scenario's measured curve files (its fleet's and each
    vintage's, `econ.throughput.resolve.check_measured_file`: missing, unreadable, not a file it
    can open, too large; the content is read when projecting): the field path and the message of
    the first that fails, in the form's words, else None."""
    from econ.throughput.resolve import MEASURED, ThroughputSourceError, check_measured_file
    from econ.ui.compute import app_text
    from econ.ui.form import path_label

    for index, row in enumerate(scenario.expand()):
        try:
            check_measured_file(row.throughput)
        except ThroughputSourceError as exc:
            detail = app_text(str(exc).removeprefix(f"{MEASURED}: "))
            label = path_label(MEASURED_CURVE)
            if index == 0:
                return MEASURED_CURVE, f"{label}: {detail}"
            vintage = scenario.vintages[index - 1].name
            return "vintages", f"Vintages › {vintage} › {label}: {detail}"
    return None


def as_typed_message(path: str, given: Any) -> str | None:
    """The message a value had where it was typed, for one that a link or a file holds in its
    place: a number a whole-number box refuses (2.5, 1e30: econ.ui.form.whole_number's words),
    text in a list or TOML field that does not parse (the parser's words); else None, and the
    models' own message stands."""
    from econ.ui.form import find, parse_numbers, parse_toml_field, whole_number

    f = find(path)
    try:
        if f is None:
            return None
        if f.kind == "int" and isinstance(given, float):
            whole_number(given)
        elif f.kind == "numbers" and isinstance(given, str):
            parse_numbers(given)
        elif f.kind == "toml" and isinstance(given, str):
            parse_toml_field(f.name, given, f)
    except ValueError as exc:
        return str(exc)
    return None


def kept_as_typed(raw_errors: Mapping[str, str] | None) -> list[str]:
    """A line for each value kept as typed, the field named as the form labels it."""
    from econ.ui.form import find, path_label

    return [
        f"{path_label(p) if find(p) is not None else p}: {m}" for p, m in (raw_errors or {}).items()
    ]


# --- session state --------------------------------------------------------------------------------


def ready_made() -> dict[str, str]:
    """Name -> path of the ready-made scenarios."""
    return {name: str(path) for name, path in ready_made_scenarios().items()}


def library_version(name: str) -> dict | None:
    """{"name", "version"} of a library label ("library:NAME@VERSION"), else None."""
    if not name.startswith(LIBRARY_PREFIX):
        return None
    scenario, _, version = name.removeprefix(LIBRARY_PREFIX).rpartition("@")
    if not scenario or not version.isdigit() or len(version) > 18:
        return None
    return {"name": scenario, "version": int(version)}


def load_data(
    data: Mapping, name: str, base: Mapping | None = None, library: Any = MISSING
) -> None:
    """Make `data` the scenario being edited; edits are measured against `base` (default: data).

    library : the library version it descends from (LIBRARY_BASE; None: none); by default the
        one its name gives ("library:NAME@VERSION"), else none
    """
    ss = st.session_state
    ss[DATA] = copy.deepcopy(dict(data))
    ss[BASE] = copy.deepcopy(dict(base if base is not None else data))
    ss[BASE_NAME] = name
    ss[VERSION] = ss.get(VERSION, 0) + 1
    ss[RAW] = {}
    ss.pop(SHOWN, None)
    origin = library_version(name) if library is MISSING else library
    if origin:
        ss[LIBRARY_BASE] = dict(origin)
    else:
        ss.pop(LIBRARY_BASE, None)


def load_ready_made(name: str) -> None:
    """Load a ready-made scenario by name (ScenarioError if its file cannot be read)."""
    paths = ready_made()
    if name not in paths:
        raise ScenarioError(
            None,
            "scenario",
            name,
            "unknown ready-made scenario; expected one of: " + ", ".join(paths),
        )
    keep_edits()
    load_data(read_toml(paths[name]), name)


def load_saved(name: str) -> None:
    keep_edits()
    ss = st.session_state
    text = ss.get(SAVED, {})[name]
    origin = ss.get(SAVED_LIBRARY, {}).get(name)
    load_data(parse_toml(text, name), SAVED_PREFIX + name, library=origin)


def edited() -> bool:
    ss = st.session_state
    return bool(diff(ss.get(DATA, {}), ss.get(BASE, {}))) or bool(ss.get(RAW))


_EDITED = re.compile(r" \(edited(?: \d+)?\)$")


def keep_edits() -> None:
    """Before another scenario replaces the current one, keep the user's edits in the session.

    A copy kept earlier is never replaced: the edits go under the next free name ("NAME
    (edited)", "NAME (edited 2)", ...), unless a kept copy holds exactly the same scenario; the
    notice says which."""
    ss = st.session_state
    if DATA not in ss or not edited():
        return
    name = ss.get(BASE_NAME, "scenario").removeprefix(SAVED_PREFIX).removeprefix(UPLOAD_PREFIX)
    name = _EDITED.sub("", name) or name
    saved = ss.setdefault(SAVED, {})
    text = toml_text(ss[DATA])
    same = next((label for label, kept in saved.items() if kept == text), None)
    if same is not None:
        ss[NOTICE] = f"Your edits to {name} were already kept in this session as '{same}'."
        return
    label, number = f"{name} (edited)", 1
    while label in saved:
        number += 1
        label = f"{name} (edited {number})"
    saved[label] = text
    origin = ss.get(LIBRARY_BASE)
    if origin:  # a kept copy of a library version is saved against that version later
        ss.setdefault(SAVED_LIBRARY, {})[label] = dict(origin)
    earlier = [other for other in saved if other != label and _EDITED.sub("", other) == name]
    also = ""
    if earlier:
        copies = ", ".join(f"'{o}'" for o in earlier)
        also = f"; the copy kept earlier, {copies}, is unchanged"
        if len(earlier) > 1:
            also = f"; the copies kept earlier, {copies}, are unchanged"
    ss[NOTICE] = f"Your edits to {name} are kept in this session as '{label}'{also}."


def ensure() -> None:
    """First run of a session: the scenario from the link, else the default ready-made one."""
    ss = st.session_state
    if DATA in ss:
        return
    ss.setdefault(SAVED, {})
    ss.setdefault(MONEY, "USD")
    params = st.query_params
    name = params.get("scenario")
    edits = params.get("edits")
    try:
        for part in ("scenario", "edits"):
            if len(given := params.get_all(part)) > 1:  # .get() reads the last
                raise LinkError(f"is given {len(given)} times; expected it once", part=part)
            if given == [""]:  # the app writes neither empty: a link cut short, or edited
                raise LinkError(f"is empty; expected {LINK_PARTS[part]}", part=part)
        if name or edits:
            restore_link(name, edits)
            return
    except ScenarioError as exc:
        ss[LINK_ERROR] = str(exc)
    except Exception as exc:  # noqa: BLE001 - a link opens the default with a reason, never a traceback
        LOG.exception("the shared link could not be read")
        ss[LINK_ERROR] = f"The shared link cannot be read ({type(exc).__name__})"
    names = ready_made()
    default = DEFAULT_SCENARIO if DEFAULT_SCENARIO in names else next(iter(names), None)
    if default is None:
        load_data(Scenario().model_dump(mode="json", exclude_none=True), "defaults")
    else:
        load_data(read_toml(names[default]), default)


LINK_PARTS = {
    "scenario": "the name of a ready-made scenario or library:NAME@VERSION",
    "edits": "the edits as the app writes them (the link may be cut short)",
}
"""What each parameter of a shared link holds, for a link that gives one empty."""


def restore_link(name: str | None, edits: str | None) -> None:
    names = ready_made()
    if name and name.startswith(LIBRARY_PREFIX):
        base = _library_base(name)
        load_data(merge(base, decode(edits) if edits else {}), name, base=base)
        return
    if name and name not in names:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise LinkError(
            f"names the ready-made scenario {shown!r}, which is not here; expected one of: "
            + ", ".join(names),
            part="scenario",
        )
    if not name:  # a scenario given whole (an upload, a saved copy): not edits of an empty one
        load_data(decode(edits) if edits else {}, LINK_NAME)
        return
    base = read_toml(names[name])
    load_data(merge(base, decode(edits) if edits else {}), name, base=base)


def _library_base(name: str) -> dict:
    """The TOML data of a scenario-library version named by a link (library:NAME@VERSION)."""
    from econ.library import LibraryError, open_library, parse_ref

    shown = shortened(name)
    try:
        ref = parse_ref(name, need_version=True)
    except LibraryError:
        raise LinkError(
            f"names {shown}, which is not a scenario library version; expected "
            f"{LIBRARY_PREFIX}NAME@VERSION with VERSION = 1, 2, ...",
            part="scenario",
        ) from None
    try:
        with open_library(create=False) as library:
            text = library.get(ref).text
    except LibraryError:
        # the library's message names its database (a server file or URL): the log keeps it
        LOG.warning("the shared link's %s could not be read", shown, exc_info=True)
        raise LinkError(
            f"names {shown}: no such scenario version in this app's scenario library (or the "
            "library cannot be read now)",
            part="scenario",
        ) from None
    return parse_toml(text, name)


def current() -> Validation:
    """The current scenario, validated (computed once per run)."""
    ss = st.session_state
    raw = {p: e for p, (_text, e) in ss.get(RAW, {}).items()}
    result = validate(ss[DATA], raw)
    if result.ok:
        ss[SHOWN] = result.scenario
    return result


def shown() -> Scenario:
    """The last valid scenario (for values the user has not given), or the defaults."""
    return st.session_state.get(SHOWN) or _defaults()


def _defaults() -> Scenario:
    return Scenario()


def scenario_text(scenario: Scenario) -> str:
    """TOML text of a scenario as given: the fields its file, link or edits set, none of the
    models' defaults (`model_dump(exclude_unset=True)`); the cache key of every library call and
    the text of its downloads. Loading it gives the same scenario with the same fields given, so
    what the library tells apart by them (the workbook's "default" and "no source", the rack
    size warning) reads as for the file: `dumps` would write every default as given."""
    return toml_text(scenario.model_dump(mode="python", exclude_unset=True))


# --- shareable link -------------------------------------------------------------------------------


def _json_default(value):
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    raise TypeError(f"cannot put {type(value).__name__} in a link")


def encode(edits: Mapping) -> str:
    """URL-safe text of the edits: compressed JSON in base64."""
    text = json.dumps(plain(edits), separators=(",", ":"), default=_json_default, sort_keys=True)
    return base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")


def decode(text: str) -> dict:
    """Edits from a link, or LinkError saying why they cannot be read.

    Every bound is checked before the edits go further: the link's length, the size its
    compressed JSON inflates to (read no further than MAX_LINK_JSON_BYTES), how deep its tables
    nest and how long its name, description and sources are (`check_link_edits`).
    """
    if len(text) > MAX_LINK_CHARS * 2:
        raise LinkError(f"is {len(text)} characters long; expected at most {MAX_LINK_CHARS * 2}")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflate = zlib.decompressobj()
        payload = inflate.decompress(raw, MAX_LINK_JSON_BYTES + 1)
    except (ValueError, zlib.error) as exc:
        raise _unreadable(exc) from None
    if len(payload) > MAX_LINK_JSON_BYTES or inflate.unconsumed_tail:
        raise LinkError(
            f"holds more than {MAX_LINK_JSON_BYTES:,} bytes of edits once decompressed; expected "
            f"at most {MAX_LINK_JSON_BYTES:,} (a larger scenario is shared as a TOML file)"
        )
    if not inflate.eof:
        raise _unreadable()  # cut short
    try:
        json_text = payload.decode()
    except UnicodeDecodeError as exc:
        raise _unreadable(exc) from None
    if _json_too_deep(json_text):  # before json.loads, which recurses once per level
        raise LinkError(TOO_DEEP)
    try:
        data = json.loads(json_text)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise _unreadable(exc) from None
        # readable edits with a number Python will not read: named as an upload's is
        found = _overlong_integer(json_text, json.loads)
        if found is None:
            raise LinkError(OVERLONG, part="") from None
        path, digits = found
        raise LinkError(huge_integer_message(digits), part=path) from None
    if not isinstance(data, dict):
        raise LinkError(f"holds a {type(data).__name__}; expected a table of scenario fields")
    check_link_edits(data)
    return data


TOO_DEEP = (
    f"is not an encoded scenario: its tables or lists nest more than {MAX_DEPTH} levels deep; "
    "expected a scenario's tables, which nest about six (e.g. financing.covenants.dscr_floor)"
)
_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def _json_too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of JSON text nest more than `limit` levels, counted in one
    pass over its quotes, escapes and brackets (brackets inside strings do not count)."""
    depth, in_string = 0, False
    for token in _JSON_TOKEN.findall(text):
        if token == '"':
            in_string = not in_string
        elif in_string or token[0] == "\\":
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def check_link_edits(data: Mapping) -> None:
    """LinkError when a link's edits nest deeper than MAX_DEPTH or carry a name, description or
    source longer than MAX_TEXT_CHARS allows (the edits the app writes in links pass)."""
    if too_deep(data):
        raise LinkError(TOO_DEEP)
    texts = [(key, data.get(key)) for key in ("name", "description")]
    sources = data.get("sources")
    if isinstance(sources, Mapping):
        for path, source in sources.items():
            if len(path) > MAX_SOURCE_KEY_CHARS:
                raise LinkError(
                    f"names a source of a field path {len(path):,} characters long; expected a "
                    f"field's dotted path (at most {MAX_SOURCE_KEY_CHARS} characters)"
                )
            texts.append(("sources", source))
    for key, value in texts:
        limit = MAX_TEXT_CHARS[key]
        if isinstance(value, str) and len(value) > limit:
            what = "a source" if key == "sources" else f"a {key}"
            raise LinkError(
                f"carries {what} of {len(value):,} characters; expected at most {limit:,}"
            )


def link_params() -> dict[str, str]:
    """The link's query parameters for the current state: the ready-made (or library) base and
    the edits, or the whole scenario when it has no named base."""
    ss = st.session_state
    name = ss.get(BASE_NAME, "")
    if name in ready_made() or name.startswith(LIBRARY_PREFIX):
        params = {"scenario": name}
        changes = diff(ss[DATA], ss[BASE])
    else:
        params = {}
        changes = ss[DATA]
    typed = typed_edits(ss.get(RAW, {}))
    if typed:  # a value refused where it was typed travels too, and is refused when opened
        changes = merge(changes, typed)
    if changes:
        try:
            text = encode(changes)
            decode(text)  # the app never writes a link it would refuse to open
        except (TypeError, LinkError):
            text = ""
        if text and len(text) <= MAX_LINK_CHARS:
            params["edits"] = text
    return params


def typed_edits(raw: Mapping[str, tuple[str, str]]) -> dict:
    """The values kept as typed (`RAW`: 2.5 or 1e30 in a whole-number box, "seventy", TOML that
    does not parse) as link edits: a number as the number typed (in the stored unit: a percent
    box's 150 as 1.5), anything else as its text. Opened, each is refused with the message it
    had where it was typed (`validate`), so a link holds what its page shows, valid or not."""
    from econ.ui.form import _is_number, find, parse_value

    out: dict = {}
    for path, (text, _error) in raw.items():
        f = find(path)
        value: Any = text
        if f is not None and f.kind in ("float", "int"):
            number = parse_value(text)
            if _is_number(number):
                value = number / f.scale if f.scale != 1 else number
        set_path(out, path, value)
    return out


def share_url(page_path: str, params: Mapping[str, str], url: str | None = None) -> str:
    """The address of page `page_path` (its url_path; "" for the landing page) with `params`.

    `url` is the address the browser opened (st.context.url; any page of the app): its last part
    is dropped when it names a page, so the link points at the page shown now.
    """
    from urllib.parse import urlencode, urlsplit, urlunsplit

    from econ.ui.streamlit_app import PAGES

    parts = urlsplit(url if url is not None else (st.context.url or ""))
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1] in {stem for stem, _, _ in PAGES}:
        segments.pop()
    if page_path:
        segments.append(page_path)
    path = "/" + "/".join(segments)
    query = urlencode({k: v for k, v in params.items() if v})
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def sync_link() -> dict[str, str]:
    """Put the scenario in the address bar (name of the ready-made base and the edits)."""
    params = link_params()
    current_params = {k: st.query_params.get(k) for k in ("scenario", "edits")}
    wanted = {k: params.get(k) for k in ("scenario", "edits")}
    if current_params != wanted:
        st.query_params.from_dict(params)
    return params


# --- typing helpers shared with the form ------------------------------------------------------------


def is_model(annotation) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def unwrap_optional(annotation) -> tuple[Any, bool]:
    """(inner annotation, optional) for `X | None`."""
    args = typing.get_args(annotation)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
        return typing.Union[tuple(rest)], True  # noqa: UP007 - a runtime union of the rest
    return annotation, False
