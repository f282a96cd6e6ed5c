"""Reading, writing and overriding scenario files (TOML), and the errors they raise.

A scenario file is TOML whose tables mirror the pydantic sections. Overrides use dotted paths
(`market.price_usd_per_mtok=0.30`) with TOML values, applied before validation so the same rules apply.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import sys
import tomllib
import typing
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, Tag, ValidationError
from pydantic.fields import FieldInfo

from econ.bounds import bound_text, expected_within, number_text, past_bound
from econ.errors import InputError
from econ.files import ReadError, atomic_write, read_regular
from econ.labels import counted, description_unit, stored_number
from econ.scenario.errors import (
    FIELD_PATH_LIMIT,
    Given,
    ScenarioError,
    is_boolean,
    shortened,
    toml_boolean,
    value_text,
)
from econ.scenario.migrations import migrate
from econ.scenario.models import (
    REQUIRED_SECTIONS,
    Scenario,
    VintageError,
    model_of,
    set_elsewhere_message,
)
from econ.scenario.paths import resolve_paths
from econ.scenario.section import FIELD_ERRORS, NONE_WORD, field_bounds, none_word_fields
from econ.strict_json import (
    EXPECTED_FINITE,
    digit_limit,
    first_beyond_float,
    integer_shown,
)
from econ.text import clipped, did_you_mean, problem_lines


def _walk(loc: Iterable[Any]) -> tuple[list[Any], type[BaseModel] | None]:
    """A pydantic error location as the file spells it, without pydantic's own parts (a
    validator's "function-after", the tag of a tagged union: tranches[1].senior_notes.coupon_annual
    is the file's tranches[1].coupon_annual, floating.curve.table.points the file's
    floating.curve.points), and the section model holding its last field (None where the walk
    leaves the sections)."""
    parts: list[Any] = []
    models: tuple[type[BaseModel], ...] = (Scenario,)
    holder: type[BaseModel] | None = Scenario
    tags: dict[Any, type[BaseModel]] = {}
    for item in loc:
        if isinstance(item, int):
            parts.append(item)
            continue
        if str(item).startswith("function-"):
            continue
        if len(models) > 1 and item in tags:  # the union member pydantic chose: no part of the file
            models = (tags[item],)
            continue
        parts.append(item)
        holder = models[0] if len(models) == 1 else None
        field = holder.model_fields.get(str(item)) if holder is not None else None
        models = _models_in(field.annotation) if field is not None else ()
        tags = _field_tags(field) if field is not None else {}
    return parts, holder


def _field_tags(field: FieldInfo) -> dict[Any, type[BaseModel]]:
    """The members of the tagged unions a field holds, by the tag pydantic names each with in an
    error's location, as the models declare them: a member's `Tag` (the floating rate's curve:
    "flat", "stepped", "table"), or the value of the union's discriminator field (a tranche's
    `type`: "term_loan", "senior_notes", ...)."""
    named = (getattr(item, "discriminator", None) for item in (field, *field.metadata))
    return _union_tags(field.annotation, next((n for n in named if isinstance(n, str)), None))


def _union_tags(annotation: Any, discriminator: str | None) -> dict[Any, type[BaseModel]]:
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        for item in extra:
            if isinstance(item, Tag):
                model = model_of(inner)
                return {item.tag: model} if model is not None else {}
            named = getattr(item, "discriminator", None)  # Field(discriminator=...) in a tuple
            discriminator = named if isinstance(named, str) else discriminator
        return _union_tags(inner, discriminator)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(discriminator) if discriminator else None
        return dict.fromkeys(typing.get_args(field.annotation) if field else (), annotation)
    tags: dict[Any, type[BaseModel]] = {}
    for arg in typing.get_args(annotation):
        tags.update(_union_tags(arg, discriminator))
    return tags


def _tag_message(loc: Iterable[Any], tag: Any) -> str:
    """What a table of a tagged union (a tranche, a floating rate's curve) given an unknown kind,
    or none, expected: the field that tells the kinds apart and its values ("type is 'loan';
    expected one of: 'term_loan', ..."), where pydantic named its discriminator function
    ("Input tag 'x' found using _curve_kind() does not match any of the expected tags")."""
    parts, holder = _walk(loc)
    names = [part for part in parts if isinstance(part, str)]
    field = holder.model_fields.get(names[-1]) if holder is not None and names else None
    tags = _field_tags(field) if field is not None else {}
    first = next(iter(tags.values()), None)
    telling = [  # the field whose value each kind of table names itself by
        name
        for name in (first.model_fields if first is not None else ())
        if all(tag in _literal_values(model, name) for tag, model in tags.items())
    ]
    name = telling[0] if telling else "the kind"
    kinds = "expected one of: " + ", ".join(repr(t) for t in tags) if tags else "check the kind"
    if tag is None:
        return f"no {name} given; {kinds}"
    return f"{name} is {value_text(tag)}; {kinds}"


def _literal_values(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    """The values a Literal field of `model` takes (("term_loan",)); () for any other field."""
    field = model.model_fields.get(name)
    return typing.get_args(field.annotation) if field is not None else ()


def _models_in(annotation) -> tuple[type[BaseModel], ...]:
    """The section models an annotation holds (``Foo | None``, ``tuple[A | B, ...]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return (annotation,)
    return tuple(m for arg in typing.get_args(annotation) for m in _models_in(arg))


def _format_loc(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for item in _walk(loc)[0]:
        parts.append(f"[{item}]" if isinstance(item, int) else ("." if parts else "") + str(item))
    return "".join(parts)


def _tables_at(loc: Iterable[Any]) -> str | None:
    """The path of the list of tables (an array of tables, [[financing.tranches]]) at an error's
    location or holding the item there ("financing.tranches"); None where the field there holds
    no tables."""
    parts, holder = _walk(loc)
    names = [part for part in parts if isinstance(part, str)]
    field = holder.model_fields.get(names[-1]) if holder is not None and names else None
    if field is None or typing.get_origin(field.annotation) not in (tuple, list):
        return None
    if not _models_in(field.annotation):
        return None
    while parts and isinstance(parts[-1], int):  # (an item: the list's own path)
        parts = parts[:-1]
    return _format_loc(parts)


def expected_message(err: Mapping[str, Any]) -> str:
    """What a pydantic error expected, in words; an unknown field lists the valid names."""
    if err["type"] == "extra_forbidden":
        parts, model = _walk(err["loc"])
        unknown = str(parts[-1]) if parts else ""
        return "unknown field; " + (_names_hint(unknown, model) if model else "check the spelling")
    if err["type"] == "missing":  # pydantic's "Field required"
        return "missing; expected this field, which has no default"
    if err["type"] == "date_from_datetime_inexact":
        return "a date with a time of day; expected a date alone (YYYY-MM-DD)"
    tables = _tables_at(err["loc"])
    if tables and err["type"] in ("tuple_type", "list_type"):  # pydantic's "a valid tuple"
        return (
            f"{_kind_of(err.get('input'))}, not a list of tables; expected [[{tables}]] tables "
            "(or an inline list of tables, [{...}, {...}])"
        )
    item = bool(err["loc"]) and isinstance(err["loc"][-1], int)
    if tables and item and err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        # an item of the list that is no table (pydantic's "a valid dictionary or object to
        # extract fields from")
        return (
            f"{_kind_of(err.get('input'))}, not a table; expected each item of {tables} to be a "
            f"table, written [[{tables}]] (or {{...}} in an inline list)"
        )
    if err["type"] == "model_type" and isinstance(err.get("input"), list):
        table = _format_loc(err["loc"])
        return f"an array of tables ([[{table}]]); expected one table ([{table}])"
    if err["type"] == "model_type":  # "oops" where a section belongs
        table = _format_loc(err["loc"])
        return f"{_kind_of(err.get('input'))}, not a table; expected one table ([{table}])"
    given = err.get("input")
    if err["type"] == "finite_number" and given in (math.inf, -math.inf):
        # TOML and JSON read a number beyond the float range (1e400) as inf: say so
        return "expected a finite number (inf written, or a number beyond 1.8e308 such as 1e400)"
    if err["type"] == "finite_number" and isinstance(given, float) and math.isnan(given):
        return "not a number (NaN); expected a finite number"
    if given is None and err["type"] in NUMBER_TYPES:
        # a number field left empty (a form's box, a null in JSON), not a wrong number
        return EMPTY_NUMBER
    lengths = LENGTH_WORDS.get(err["type"])
    if lengths:  # pydantic's "Tuple should have at least 1 item after validation, not 0"
        return _length_words(err, *lengths)
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return _tag_message(err["loc"], (err.get("ctx") or {}).get("tag"))
    if err["type"] == "int_parsing_size":  # pydantic's "Unable to parse input string ..."
        return _beyond_integers(err["loc"])
    bound = BOUND_TYPES.get(err["type"])
    limit = (err.get("ctx") or {}).get(bound)
    if bound and _is_number(given) and _is_number(limit):
        return _past_bound(err["loc"], bound, limit, given)
    if err["type"] == "int_from_float" and _is_number(given):
        bounds, what, unit, _ = _number_field(err["loc"])
        expected = expected_within(bounds, what, unit, whole=True)
        return f"{number_text(given)} is not a whole number; expected {expected}"
    message = err["msg"].removeprefix("Value error, ")
    if message.startswith("Input should be "):  # pydantic's words for what it expected
        return "expected " + message.removeprefix("Input should be ")
    return message


LENGTH_WORDS = {
    "too_short": ("item", "at least", "min_length"),
    "too_long": ("item", "at most", "max_length"),
    "string_too_short": ("character", "at least", "min_length"),
    "string_too_long": ("character", "at most", "max_length"),
}
"""pydantic's error types of a list or a text too short or too long: what it counts, the bound's
words and its key in the error's context."""


def _length_words(err: Mapping[str, Any], noun: str, words: str, key: str) -> str:
    """A list or a text of a length past its bound: "0 items; expected at least 1 item", "empty;
    expected at least 1 character"."""
    limit = (err.get("ctx") or {}).get(key, 0)
    given = err.get("input")
    length = len(given) if isinstance(given, str | list | tuple) else None
    if length is None:
        return f"expected {words} {counted(limit, noun)}"
    said = "empty" if length == 0 else counted(length, noun)
    return f"{said}; expected {words} {counted(limit, noun)}"


BOUND_TYPES = {
    "greater_than": "gt",
    "greater_than_equal": "ge",
    "less_than": "lt",
    "less_than_equal": "le",
}
"""pydantic's error types of a number past a field's bound, by the bound (its context's key)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_field(loc: Iterable[Any]) -> tuple[dict[str, float], str, str, bool]:
    """The bounds a number field at an error's location declares, how a message names the number
    it takes and its unit (`econ.labels.stored_number`: "a fraction", " (1 = 100%)"), read from
    the field's model and description, and whether it takes whole numbers only; for a number in
    a list, those of the list's field."""
    parts, holder = _walk(loc)
    names = [part for part in parts if isinstance(part, str)]
    info = holder.model_fields.get(names[-1]) if holder is not None and names else None
    if info is None:
        return {}, "a number", "", False
    whole = int in (info.annotation, *typing.get_args(info.annotation))
    what, unit = stored_number(names[-1], description_unit(info.description), whole)
    return dict(field_bounds(holder, names[-1])), what, unit, whole


def _past_bound(loc: Iterable[Any], bound: str, limit: float, given: float) -> str:
    """A number past a field's bound, in econ's words with the field's unit and all its bounds:
    "2 is above 1; expected a fraction from 0 to 1 (1 = 100%)", "0 is below 1; expected a whole
    number from 1 to 600 [months]" (pydantic said "Input should be less than or equal to 1")."""
    bounds, what, unit, whole = _number_field(loc)
    if bounds.get(bound) != limit:  # a bound of a list's items, not the field's own
        bounds = {bound: limit}
    past = past_bound(number_text(given), bound, number_text(limit))
    return f"{past}; expected {expected_within(bounds, what, unit, whole=whole)}"


INTEGER_SIZE = 2**63
"""The size from which pydantic reads no number as a whole number (a 64-bit integer): a float
such as 1e20 in a whole-number field is refused there before the field's own bounds."""


def _beyond_integers(loc: Iterable[Any]) -> str:
    """What a whole-number field given a number past INTEGER_SIZE (1e20, 1e308) expected: the
    field's bounds, and the size; pydantic said "Unable to parse input string as an integer,
    exceeded maximum size", of a number that is no string, with no bound."""
    bounds, what, unit, _ = _number_field(loc)
    size = f"below {bound_text(INTEGER_SIZE)} in size"
    reason = "too large in size for a whole number"
    if {"le", "lt"} & set(bounds):
        reason += f" (econ reads them {size})"
    else:
        bounds["lt"] = INTEGER_SIZE
    return f"{reason}; expected {expected_within(bounds, what, unit, whole=True)}"


def _kind_of(value: Any) -> str:
    """What a value that is not a table is, in words: "text", "a number", "a boolean"."""
    if is_boolean(value):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "text" if isinstance(value, str) else f"a {type(value).__name__}"


NUMBER_TYPES = ("float_type", "int_type", "float_parsing", "int_parsing")
"""pydantic's error types of a value that is no number."""
EMPTY_NUMBER = "empty; expected a number"
"""What a number field given nothing (None) expected."""


class _Unquoted(str):
    """Text a message shows as it is (a TOML date, 2025-01-01T10:00:00+05:00), not quoted."""

    def __repr__(self) -> str:
        return str(self)


def _described(exc: ValidationError, where: str = "") -> Iterator[tuple[str, Any, str]]:
    """(field path, value, what was expected) of each of pydantic's errors; a vintage's own
    errors (VintageError) worded alike, after `where` the vintage is ("vintages[0] (gb300): ")."""
    errors = exc.errors(include_url=False)
    inside = {tuple(err["loc"][:n]) for err in errors for n in range(len(err["loc"]))}
    for err in errors:
        if err["type"] == "too_short" and tuple(err["loc"]) in inside:
            continue  # a list whose items were refused: pydantic counts none valid, not 0 given
        vintage = (err.get("ctx") or {}).get("error")
        if isinstance(vintage, VintageError):
            yield from _described(vintage.error, f"{vintage.where}: ")
            continue
        path = _format_loc(err["loc"])
        value = err.get("input")
        if err["type"] in FIELD_ERRORS:  # raised by the section: its field and value
            field = err["ctx"]["field"]
            path, value = f"{path}.{field}" if path else field, err["ctx"]["value"]
        whole = err["type"] == "model_type" and not isinstance(value, str | int | float)
        if isinstance(value, Mapping) or whole:
            value = None  # a whole table (or tables): the message says what is wrong with it
        elif isinstance(value, dt.date | dt.time):  # as TOML writes it, not datetime's repr
            value = _Unquoted(value.isoformat())
        yield f"{where}{path}".removesuffix(": "), value, expected_message(err)


def _errors_from_validation(
    exc: ValidationError, file: str | os.PathLike | None, given_at: Mapping[str, Given]
) -> ScenarioError:
    """One ScenarioError of pydantic's errors, one a line, the file named on the first; an error
    in a value an override set (`given_at`: `_overridden`) is named as the override's."""
    messages = []
    first = None
    for path, value, expected in _described(exc):
        given = _given_at(path, given_at)
        error = ScenarioError(file, path, value, expected, given)
        first = first or error
        messages.append(
            str(error) if not messages else str(ScenarioError(None, path, value, expected, given))
        )
    combined = ScenarioError(first.file, first.path, first.value, first.expected, first.given)
    combined.args = ("\n  ".join(problem_lines(messages)),)
    return combined


def _names_hint(name: str, model: type[BaseModel]) -> str:
    """What a section expected in place of an unknown field `name`: the closest of its fields
    first, where one is clearly close ("did you mean 'gpu_count'? "), then all of them."""
    names = model.model_fields
    return f"{did_you_mean(name, names)}expected one of: {', '.join(names)}"


def _overridden(
    overrides: Mapping[str, Any] | Iterable[str] | None, file: str | os.PathLike | None
) -> dict[str, Given]:
    """How each field path the overrides set was given (`given_overrides`, by `_given_leaves`)."""
    if not overrides:
        return {}
    leaves = _given_leaves(given_overrides(overrides, file), file)
    return {path: given for path, _, given in leaves if given is not None}


def _given_at(path: str, given_at: Mapping[str, Given]) -> Given | None:
    """The override that set the value at `path`: set at the path itself or at a table or list
    holding it (the longest such path); else, for a section or table refused as a whole (its
    fields' rule: "capex: give exactly one of ..."), the overrides that set fields inside it,
    all of them ("--set capex.gpu_price_usd=40000, --set capex.system_price_usd=1"). A refusal
    of the whole scenario (path "") is not laid on them: any field may be at fault."""
    at = path
    while at:
        if at in given_at:
            return given_at[at]
        at = at[: max(at.rfind("."), at.rfind("["), 0)]
    inside = [
        given
        for field, given in given_at.items()
        if path and field.startswith((f"{path}.", f"{path}["))
    ]
    if not inside:
        return None
    texts = dict.fromkeys(given.text for given in inside)  # (a table's fields: one --set)
    return Given(inside[0].path, ", ".join(texts))


def validate_dict(
    data: Mapping[str, Any],
    file: str | os.PathLike | None = None,
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
) -> Scenario:
    """Validate a plain dict (as read from TOML) into a Scenario, or raise ScenarioError naming
    `file`, or, for a value one of the `overrides` applied to `data` gave, that override
    ("--set utilization.share=2 (over FILE)").

    File paths in `data` (throughput.measured.curve) are taken as given, not confined to a
    folder: for text from someone else, call econ.scenario.paths.resolve_paths(data, FOLDER)
    first, as `load_scenario` does (docs/inputs.md, "Files a scenario may name")."""
    try:
        scenario = Scenario.model_validate(migrate(data, file))
    except ValidationError as exc:
        raise _errors_from_validation(exc, file, _overridden(overrides, file)) from None
    except ScenarioError as exc:  # a schema_version an override gave: named as it
        given = _given_at(exc.path, _overridden(overrides, file))
        if given is None:
            raise
        raise ScenarioError(exc.file, exc.path, exc.value, exc.expected, given) from None
    except RecursionError:
        raise ScenarioError(file, "", None, "nested too deeply; expected a scenario") from None
    scenario._file = None if file is None else str(file)
    return scenario


_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)$")


def _twice(message: str, text: str) -> str:
    """What tomllib's "Cannot overwrite a value" and "Cannot declare ('fleet',) twice" mean, with
    the key or table at fault: the key of the line it names (text the user wrote), clipped."""
    found = _AT_LINE.search(message)
    if found is None:
        return ""
    if message.startswith("Cannot declare ("):
        return "; a table given twice: expected each [table] once, its keys together"
    if message.startswith("Cannot overwrite a value"):
        lines = text.splitlines()
        number = int(found.group(1))
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        key = line.split("=", 1)[0].strip() if "=" in line else ""
        if key:
            return f"; {clipped(key)} is set twice: expected each key once in its table"
        return "; a key set twice: expected each key once in its table"
    return ""


def _reads_as_json(text: str) -> bool:
    """Whether `text` is JSON. json.loads stops at about a thousand levels of brackets: text
    nested that deep (RecursionError; TOML nests no bracket so) is taken for JSON too."""
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    except RecursionError:
        return True
    return True


def parse_toml(content: bytes | str, file: str | os.PathLike | None = None) -> dict[str, Any]:
    """TOML text (bytes or str, a UTF-8 byte-order mark allowed) as a dict, or ScenarioError."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ScenarioError(file, "", None, f"not UTF-8 text ({exc.reason})") from None
    text = content.removeprefix("\ufeff")
    if not text.strip():
        raise ScenarioError(file, "", None, "file is empty; expected a TOML scenario")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        hint = _twice(str(exc), text)
        if text.lstrip()[:1] in ("{", "[") and _reads_as_json(text):
            hint = "; this is JSON: a scenario file is TOML (econ schema describes its fields)"
        raise ScenarioError(file, "", None, f"malformed TOML: {exc}{hint}") from None
    except RecursionError:
        raise ScenarioError(
            file, "", None, "nested too deeply to be a scenario; expected TOML tables"
        ) from None
    except ValueError as exc:
        if not digit_limit(exc):
            raise
        # tomllib refuses the literal without saying where it is: the file and the limit
        raise ScenarioError(file, "", None, f"{_TOO_LONG}; {EXPECTED_FINITE}") from None
    if too_deep(data):
        raise ScenarioError(
            file,
            "",
            None,
            f"nested too deeply: tables or arrays more than {MAX_NESTING} levels down; "
            "expected a scenario's tables, which nest about six (e.g. [financing.covenants])",
        )
    refuse_beyond_float(data, file)
    return data


def refuse_beyond_float(
    data: Any, file: str | os.PathLike | None = None, root: str = "", given: Given | None = None
) -> None:
    """ScenarioError naming the first integer in `data` larger than any float (10**400, a
    hexadecimal literal of a thousand digits): refused where TOML text becomes numbers, before an
    override's copy or a migration meets it (the sections refuse it too, for data from elsewhere).
    `root` is the path of `data` itself (an override's field, `given` as it was written)."""
    found = first_beyond_float(data, root)
    if found:
        raise ScenarioError(file, found[0], integer_shown(found[1]), EXPECTED_FINITE, given)


_TOO_LONG = f"an integer of more than {sys.get_int_max_str_digits():,} digits"
"""What Python's int() refuses to read from text (tomllib then raises a bare ValueError)."""

MAX_NESTING = 32
"""Levels of tables and arrays a scenario may nest (its deepest field is about six down)."""
MAX_SCENARIO_BYTES = 1024 * 1024
"""Bytes of a scenario file econ reads, on the command line and in the app (its upload box). The
largest ready-made one is under 20 kB, and a scenario's longest tables (a price, rental or resale
point or a balance for each of 600 months) take tens of kB; a file of 14 MB (one array of 7
million integers) took tomllib 23 s and 640 MB before its unknown field was refused."""
MAX_FILE_BYTES = 16 * 1024 * 1024
"""Bytes of a memo `econ verify` reads (scenario files, and the texts the library stores, had
this limit before MAX_SCENARIO_BYTES)."""


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether tables (dicts) and lists in `value` nest more than `limit` levels, counted without
    recursion: data nested thousands deep must reach a clear message, not exhaust Python's stack
    (in copy.deepcopy, a merge or pydantic) on its way there."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def read_toml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a TOML file into a dict, with ScenarioError for missing files and bad syntax."""
    if not os.fspath(path):  # pathlib reads "" as the current folder: ".: is a directory"
        raise ScenarioError("''", "", None, "an empty path; expected a TOML scenario file")
    if "\x00" in os.fspath(path):
        raise ScenarioError(
            os.fspath(path).replace("\x00", "\\0"),
            "",
            None,
            "a file name may not contain a NUL byte",
        )
    path = Path(path)
    try:
        content = read_bounded(path, MAX_SCENARIO_BYTES, "a TOML scenario file")
    except FileNotFoundError:
        raise ScenarioError(path, "", None, "file not found" + _ready_made_hint(path)) from None
    except IsADirectoryError:
        raise ScenarioError(
            path, "", None, "is a directory; expected a TOML scenario file"
        ) from None
    except OSError as exc:
        raise ScenarioError(path, "", None, f"cannot be read ({exc.strerror})") from None
    data = parse_toml(content, path)
    return migrate(data, path)  # older schema versions to today's, before any override


def read_bounded(path: Path, limit: int, expected: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`econ.files.read_regular`), or
    ScenarioError naming the file and the limit (a device such as /dev/zero, a FIFO, or a file
    too large to be `expected`); other OSErrors pass to the caller."""
    try:
        return read_regular(path, limit, expected)
    except ReadError as exc:
        raise ScenarioError(exc.path, "", None, exc.why) from None


def _ready_made_hint(path: Path) -> str:
    """Where a missing path is the name of a ready-made scenario: its path (econ's own file)."""
    from econ.catalog import models_dir

    if path.suffix == ".toml" or path.parent != Path("."):
        return ""
    shipped = models_dir() / "scenarios" / f"{path.name}.toml"
    if not shipped.is_file():
        return ""
    shown = shipped.relative_to(Path.cwd()) if shipped.is_relative_to(Path.cwd()) else shipped
    return f"; the ready-made scenario of that name is {shown}"


def load_scenario(
    path: str | os.PathLike,
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
    allow_paths: Iterable[str | os.PathLike] = (),
) -> Scenario:
    """Load and validate a scenario file, applying dotted-path overrides first.

    Parameters
    ----------
    path : path of a TOML scenario file, or the name of a ready-made scenario
        ("deepseek-r1-gb200-nvl72": models/scenarios/NAME.toml, as the CLI reads it; a file of
        that exact name, no suffix, wins; econ.catalog.ready_made_scenarios() lists them)
    overrides : mapping of dotted path to value, or strings "path=value" (value in TOML syntax)
    allow_paths : folders besides the scenario's own that paths inside it may point into
        (see `econ.scenario.paths`; the CLI's --allow-paths)

    `library:NAME[@VERSION]` names a version in the scenario library (econ.library) instead.
    """
    overrides = check_overrides(overrides)
    if str(path).startswith("library:"):
        from econ.library import load_library_scenario  # the database layer loads only here

        return load_library_scenario(str(path), overrides)
    from econ.catalog import ready_made_path

    path = ready_made_path(path) or path
    data = read_toml(path)
    if overrides:
        data = apply_overrides(data, overrides, file=path)
    resolve_paths(data, Path(path).parent, allow_paths, file=path)
    scenario = validate_dict(data, file=path, overrides=overrides)
    if overrides:
        refuse_set_elsewhere(scenario, overrides, file=path)
    check_complete(data, path)
    return scenario


def check_overrides(
    overrides: Mapping[str, Any] | Iterable[str] | None,
) -> Mapping[str, Any] | tuple[str, ...] | None:
    """The overrides of `load_scenario` as a mapping or a tuple of "path=value" strings;
    InputError for anything else (a single string would be read character by character, a
    pandas object has no single truth value)."""
    expected = (
        "expected a mapping of dotted path to value, e.g. {'utilization.share': 0.8}, or a "
        "list of 'path=value' strings"
    )
    if overrides is None or isinstance(overrides, Mapping):
        return overrides
    if isinstance(overrides, str | bytes):
        raise InputError(f"overrides is the single string {overrides!r}; {expected}")
    if type(overrides).__module__.startswith("pandas"):
        kind = type(overrides).__name__
        hint = (
            "; series.to_dict() gives a mapping"
            if kind == "Series"
            else "; a table of scenarios, one per row, goes to "
            "econ.analysis.sweep(base, table=frame)"
        )
        raise InputError(f"overrides is a pandas {kind}; {expected}{hint}")
    try:
        items = tuple(overrides)
    except TypeError:
        raise InputError(f"overrides is {type(overrides).__name__}; {expected}") from None
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"overrides item {i} is {type(text).__name__} {text!r}; {expected}")
    return items


def check_complete(data: Mapping[str, Any], file: str | os.PathLike | None) -> None:
    """ScenarioError unless the scenario data gives every REQUIRED_SECTIONS table: a file (or a
    library text) cut short would otherwise be projected on default sections that describe no
    real fleet."""
    missing = [name for name in REQUIRED_SECTIONS if not isinstance(data.get(name), dict)]
    if missing:
        raise ScenarioError(
            file,
            "",
            None,
            f"no {' or '.join(f'[{m}]' for m in missing)} table; a scenario file must give "
            + ", ".join(f"[{m}]" for m in REQUIRED_SECTIONS)
            + " (other sections may be left to their defaults). Is the file complete?",
        )


def parse_override(
    text: str, file: str | os.PathLike | None = None, given: Given | None = None
) -> tuple[str, Any]:
    """Parse "path=value" with the value in TOML syntax; bare words are taken as strings. An
    integer larger than any float (or of more digits than Python reads) is refused with
    ScenarioError naming the path (and `file`, the scenario it is applied to; `given`, the
    override as it was written, `set_given`)."""
    if "=" not in text:  # (the text is the override: named as given, it would say so twice)
        raise ScenarioError(file, text, None, "expected an override of the form path=value")
    path, raw = (s.strip() for s in text.split("=", 1))
    source = f"v = {raw}"
    try:
        value = tomllib.loads(source)["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    except RecursionError:
        raise ScenarioError(file, path, None, "value nested too deeply", given) from None
    except ValueError as exc:
        if not digit_limit(exc):
            raise
        raise ScenarioError(file, path, None, f"{_TOO_LONG}; {EXPECTED_FINITE}", given) from None
    refuse_beyond_float(value, file, root=path, given=given)
    return path, value


def set_given(text: str) -> Given:
    """An override written "path=value" as the command line's `--set` gives it: named so by
    the messages of the values it sets, not by the scenario file's name alone (its value cut
    as a message quotes one, `clipped`: a number of 5,000 digits is not written whole)."""
    path, given, raw = (part.strip() for part in text.partition("="))
    return Given(path, f"--set {clipped(path, FIELD_PATH_LIMIT)}{given}{clipped(raw)}")


def given_overrides(
    overrides: Mapping[str, Any] | Iterable[str], file: str | os.PathLike | None = None
) -> list[tuple[str, Any, Given]]:
    """The (dotted path, value, how it was given) of each override: a "path=value" string as
    `--set path=value`, an item of a mapping as `overrides['path'] = value` (Python's spelling,
    `load_scenario(path, {...})`)."""
    found = []
    if isinstance(overrides, Mapping):
        for path, value in overrides.items():
            key = shortened(path, FIELD_PATH_LIMIT)
            found.append((path, value, Given(path, f"overrides[{key}] = {value_text(value)}")))
        return found
    for text in overrides:
        given = set_given(text)
        path, value = parse_override(text, file, given)
        found.append((path, value, given))
    return found


def apply_overrides(
    data: Mapping[str, Any],
    overrides: Mapping[str, Any] | Iterable[str],
    file: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Return a copy of `data` with each dotted path set; unknown paths raise ScenarioError.

    A table given for a section (`{"financing": {"discount_rate_annual": 0.08}}`, `--set
    financing={discount_rate_annual=0.08}`) sets the fields it names and keeps the others, as
    the same fields given by dotted path do (`override_leaves`); a field that is itself a list
    or a table (`throughput.steps`, `sources`) is replaced whole. Each field changed gets its
    own entry in [sources], "overridden (was: OLD; source: OLD SOURCE)" (`cited_change`), in
    place of the source of the value it replaces, unless the overrides give that entry
    themselves (`sources.<path>`).
    """
    refuse_beyond_float(data, file)  # (json.dumps refuses an integer of 4,300 digits and more)
    items = given_overrides(overrides, file)
    try:
        result = json.loads(json.dumps(data, default=str))  # deep copy of plain TOML data
    except RecursionError:
        raise ScenarioError(file, "", None, "nested too deeply to be a scenario") from None
    sources = result.get("sources") if isinstance(result.get("sources"), dict) else {}
    given_sources = dict(sources)  # the file's, before any override
    cited: set[str] = set()  # the sources the overrides give themselves
    before: dict[str, Any] = {}  # each path set: its value before the first override of it
    for path, value, given in _given_leaves(items, file):
        refuse_beyond_float(value, file, root=path, given=given)
        if path == "sources" or path.startswith("sources."):
            cited.add(path)
            if path == "sources":
                result["sources"] = value
            else:
                result.setdefault("sources", {})[path.removeprefix("sources.")] = value
            continue
        node = result
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ScenarioError(
                    file, path, node, "cannot set a field inside a non-table value", given
                )
        before.setdefault(path, node.get(leaf, _UNSET))
        node[leaf] = value
    if "sources" in cited:
        return result  # a [sources] table given whole is the user's own
    for path, old in before.items():
        if path in UNCITED or f"sources.{path}" in cited:
            continue
        default = _default_at(path)
        if same_value(get_path(result, path), default if old is _UNSET else old):
            continue
        was = shown_value(old)
        if old is _UNSET and isinstance(default, int | float | str) and default != "":
            was += f", the default {shown_value(default)}"
        if not isinstance(result.get("sources"), dict):
            result["sources"] = {}
        result["sources"][path] = cited_change(OVERRIDDEN, was, source_at(path, given_sources))
    return result


OVERRIDDEN = "overridden"
"""How a [sources] entry of a field set by an override begins (`cited_change`)."""
UNCITED = frozenset({"schema_version"})
"""Fields an override sets without a [sources] entry: the file format's version, not an input
of the projection. A name or description set by an override is cited as any field is, so a
renamed scenario says it was renamed, and from what (the memo and the workbook show it)."""
_UNSET = object()


def cited_change(done: str, was: str, source: str | None = None) -> str:
    """The [sources] entry of a value changed from what its scenario gave: "DONE (was: OLD;
    source: OLD SOURCE)". An override writes "overridden (...)"; the app, editing a value,
    "edited in the app on DATE (...)" (econ.ui.form.mark_edited)."""
    note = f"was: {was}" + (f"; source: {source}" if source else "")
    return f"{done} ({note})"


def shown_value(value: Any, limit: int = 80) -> str:
    """A field's value as a [sources] note quotes it: numbers to 12 significant digits, text as
    it is, lists and tables as JSON, cut to `limit` characters; "not set" where the scenario did
    not give it."""
    if value is _UNSET or value is None:
        return "not set"
    if isinstance(value, bool):
        return toml_boolean(value)
    if isinstance(value, float):
        return f"{value:.12g}"
    text = json.dumps(value, default=str) if isinstance(value, list | dict) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def same_value(a: Any, b: Any) -> bool:
    """Whether two values of a field are the same value: equal, or the same as JSON (NaN and NaN,
    a date and its text, lists holding either), "none" and None alike (whether an override leaves
    a value as it was; whether the app's scenario differs from the one it loaded)."""
    a, b = (None if isinstance(v, str) and v == NONE_WORD else v for v in (a, b))
    if a is _UNSET or b is _UNSET:
        return a is b
    return a == b or json.dumps(a, default=str) == json.dumps(b, default=str)


def _default_at(path: str) -> Any:
    """The default of the field at a dotted path (a checked one), or _UNSET where it has none."""
    model: type[BaseModel] | None = Scenario
    *parents, leaf = path.split(".")
    for part in parents:
        model = model_of(model.model_fields[part].annotation) if model is not None else None
    info = model.model_fields.get(leaf) if model is not None else None
    if info is None or info.is_required():
        return _UNSET
    return info.get_default(call_default_factory=True)


def is_default(path: str, value: Any) -> bool:
    """Whether `value` is econ's default for the field at a dotted path (`same_value`); False
    for a required field, or a path that names no field of a scenario."""
    try:
        default = _default_at(path)
    except (KeyError, AttributeError):  # (a path through a list, or past a leaf)
        return False
    return default is not _UNSET and same_value(value, default)


def get_path(data: Mapping[str, Any], path: str, default: Any = _UNSET) -> Any:
    """The value at a dotted path of nested tables (plain scenario data), or `default` where a
    part is absent."""
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def source_at(path: str, sources: Mapping[str, Any]) -> str | None:
    """The source of a path's value: its own [sources] entry, or its nearest section's."""
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        source = sources.get(".".join(parts[:end]))
        if isinstance(source, str) and source:
            return source
    return None


def override_leaves(items: Iterable[tuple[str, Any]], file=None) -> list[tuple[str, Any]]:
    """The (dotted path, value) pairs a list of overrides sets, each path checked (`check_path`):
    a table given for a section is the fields it names, one pair each (and so on down), so that
    it merges into the section as dotted paths do, where the whole section was replaced before
    (`{"financing": {"discount_rate_annual": 0.08}}` set the debt share to its default 0)."""
    return [(path, value) for path, value, _ in _given_leaves(items, file)]


def _given_leaves(items: Iterable[tuple], file=None) -> list[tuple[str, Any, Given | None]]:
    """`override_leaves` of (path, value) or (path, value, how it was given) items, each leaf
    with the override it came from (a table's fields with the table's `--set`)."""
    leaves: list[tuple[str, Any, Given | None]] = []
    pending = [(*item, None)[:3] for item in items][::-1]
    while pending:
        path, value, given = pending.pop()
        section = check_path(path, file=file, given=given)
        if section is not None and isinstance(value, Mapping):
            pending.extend((f"{path}.{key}", sub, given) for key, sub in reversed(value.items()))
        else:
            leaves.append((path, value, given))
    return leaves


def refuse_set_elsewhere(
    scenario: Scenario,
    overrides: Mapping[str, Any] | Iterable[str],
    file: str | os.PathLike | None = None,
) -> None:
    """ScenarioError for an override of a field the scenario takes from another input
    (`Scenario.set_elsewhere`), which would otherwise be ignored without a word."""
    elsewhere = scenario.set_elsewhere()
    for path, value, given in _given_leaves(given_overrides(overrides, file), file):
        if path in elsewhere:
            message = set_elsewhere_message(path, elsewhere[path])
            raise ScenarioError(file, path, value, message, given)


def check_path(
    path: str, file: str | os.PathLike | None = None, given: Given | None = None
) -> type[BaseModel] | None:
    """Raise ScenarioError unless `path` names a field of Scenario (the closest names first,
    `did_you_mean`, then the valid names; `given`: the override that names it); return the
    section model the path names, or None for a field that holds a value (a number, text, a list
    or a table such as `sources`)."""
    model: type[BaseModel] | None = Scenario
    parts = path.split(".")
    if parts[0] == "sources" and len(parts) > 1:  # sources is a table keyed by field path
        return None
    for i, part in enumerate(parts):
        if model is None:
            raise ScenarioError(file, path, None, f"'{parts[i - 1]}' has no sub-fields", given)
        if part not in model.model_fields:
            where = ".".join(parts[:i]) or "the scenario"
            message = f"no field '{clipped(part)}' in {where}; {_names_hint(part, model)}"
            raise ScenarioError(file, path, None, message, given)
        annotation = model.model_fields[part].annotation
        # Lists and tables (throughput.steps, sources) are set whole, in TOML syntax.
        nested = typing.get_origin(annotation) not in (tuple, list, dict)
        model = model_of(annotation) if nested else None
    return model


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """Plain TOML-ready dict of a scenario (`toml_ready`): validate_dict of it is the scenario."""
    return toml_ready(scenario.model_dump(mode="python"))


def toml_ready(data: Mapping[str, Any]) -> dict[str, Any]:
    """A TOML-ready copy of scenario data, valid or not: None values left out (TOML has no
    null), except in fields on by default (`none_word_fields`, e.g. the DSCR covenant), written
    as NONE_WORD so that loading the text does not turn them back on."""
    return _drop_none(data, Scenario)


def _field_model(fields: Mapping[str, Any], name: str) -> type[BaseModel] | None:
    return model_of(fields[name].annotation) if name in fields else None


def _drop_none(value: Any, model: type[BaseModel] | None) -> Any:
    """`value` without its None values; `model` is the section model it follows, if any."""
    if isinstance(value, Mapping):
        fields = model.model_fields if model is not None else {}
        off = none_word_fields(model) if model is not None else frozenset()
        return {
            k: NONE_WORD if v is None else _drop_none(v, _field_model(fields, k))
            for k, v in value.items()
            if v is not None or k in off
        }
    if isinstance(value, list | tuple):  # (a list field's model is its items' model)
        return [_drop_none(v, model) for v in value]
    return value


def dumps(scenario: Scenario) -> str:
    """TOML text of a scenario; loads(dumps(s)) == s."""
    return tomli_w.dumps(scenario_to_dict(scenario))


def loads(text: str, file: str | os.PathLike | None = None) -> Scenario:
    """Validate a scenario from TOML text. Its file paths are taken as given (`validate_dict`):
    a service reading text from others parses it (`parse_toml`), confines its paths
    (econ.scenario.paths.resolve_paths) and then validates it."""
    return validate_dict(parse_toml(text, file), file=file)


def save_scenario(scenario: Scenario, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a scenario as TOML, atomically; never overwrites unless asked (econ.files.WriteError
    naming the file and the reason when it cannot be written)."""
    return atomic_write(path, dumps(scenario), overwrite=overwrite)


def json_schema() -> dict[str, Any]:
    """JSON schema of a scenario file, generated from the models."""
    return Scenario.model_json_schema()
