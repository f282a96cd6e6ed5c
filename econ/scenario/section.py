"""The base of every scenario section: what any section refuses.

A section forbids unknown keys, inf and NaN, and is frozen. It also refuses a number written as
text (`gpu_price_usd = "310000"` in TOML, `--set 'x="0.5"'`), which pydantic would otherwise read
as the number: a quoted value is a string in TOML, and quoting a number is more often a slip
(a value pasted from elsewhere, a cell of a spreadsheet) than a choice. The one word an
optional number takes is NONE_WORD, for None (TOML has no null): it turns off a field that is on
by default. And a section refuses control characters (ESC, CR, DEL, C1 controls, and the
bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069) in any text it is given:
names, keys and descriptions reach terminals, tables, workbooks and memos, where such a
character could rewrite the screen (ANSI and OSC escape sequences), forge a line or show a name
backwards. Only
the fields in `Section.MULTILINE` take line feeds and tabs. A section also refuses an integer
larger than any float (`gpu_count = 10**400`, or a hexadecimal literal of a thousand digits),
anywhere in what it is given: every figure becomes a float on its way to the engine, and one
beyond the float range would overflow there (a traceback) instead of being refused by name.
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from functools import cache
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from econ.bounds import number_text
from econ.scenario.errors import is_boolean, toml_boolean
from econ.strict_json import EXPECTED_FINITE, first_beyond_float, integer_shown
from econ.text import clipped, control_character, control_kind

NUMBER_AS_TEXT = "number_as_text"
BOOLEAN_AS_NUMBER = "boolean_as_number"
"""The pydantic error type of a number written as text."""
CONTROL_CHARACTER = "control_character"
"""The pydantic error type of text holding a control character."""
BEYOND_FLOAT = "integer_beyond_float"
"""The pydantic error type of an integer larger in size than any float (about 1.8e308)."""
FIELD_ERRORS = (NUMBER_AS_TEXT, BOOLEAN_AS_NUMBER, CONTROL_CHARACTER, BEYOND_FLOAT)
"""Error types a section raises for one of its fields, named with its value in the context."""
PRINTABLE = "printable characters: no control characters such as ESC, CR or LF"
"""What a name, key or other one-line text is expected to hold."""
ONE_LINE = f"a name or one-line text of {PRINTABLE}"
"""What a refusal of a control character in a name or other one-line text expects."""
MULTILINE_TEXT = (
    "text of printable characters, line feeds and tabs: no other control characters such as "
    "ESC or CR"
)
"""What a refusal of a control character in a multi-line text (a description) expects."""
NONE_WORD = "none"
"""What a scenario file writes to turn off a field that is on by default, TOML having no null:
``dscr_floor = "none"`` (no DSCR covenant; left out, the floor is 1.20x)."""


@cache
def _optional_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a model that may be None."""
    return frozenset(
        name
        for name, info in model.model_fields.items()
        if type(None) in typing.get_args(info.annotation)
    )


@cache
def none_word_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a model that may be None but are not by default: a file turns them off
    with NONE_WORD (and econ.scenario.io writes them so)."""
    return frozenset(
        name
        for name in _optional_fields(model)
        if model.model_fields[name].default is not None
        and not model.model_fields[name].is_required()
    )


@cache
def _number_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a model that hold one number (int or float, optional or not)."""
    names = set()
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else None
        if annotation in (int, float):
            names.add(name)
    return frozenset(names)


def _none_word_in_schema(schema: dict, model: type[BaseModel]) -> None:
    """The JSON schema of a section: its optional number fields also take NONE_WORD."""
    for name in _number_fields(model) & _optional_fields(model):
        field = schema.get("properties", {}).get(name, {})
        if "anyOf" in field:
            field["anyOf"].append({"const": NONE_WORD})


BOUNDS = ("ge", "gt", "le", "lt")
"""The numeric bounds a field may declare (pydantic's Field arguments), in the order stated."""


@cache
def field_bounds(model: type[BaseModel], name: str) -> dict[str, float]:
    """The numeric bounds a section declares for one field, e.g. {'ge': 1.0, 'le': 3.0} for
    Power.pue: for checks outside a scenario (command-line options that stand for a field) that
    must refuse what a scenario file refuses, without copying the numbers."""
    found = {}
    for constraint in model.model_fields[name].metadata:
        for bound in BOUNDS:
            value = getattr(constraint, bound, None)
            if value is not None:
                found[bound] = value
    return {bound: found[bound] for bound in BOUNDS if bound in found}


def control_problem(text: str, multiline: bool = False) -> str | None:
    """Why `text` is refused as a section refuses text, or None: its first control character
    (ESC, CR, LF, tab, DEL, C1 controls, a bidirectional override or isolate; line feeds and
    tabs pass in a `multiline` text), in the words of every such refusal: "a control character
    ('\\x1b') at character 2; expected a name or one-line text of printable characters: ..."."""
    found = control_character(text, "\n\t" if multiline else "")
    if found is None:
        return None
    what = MULTILINE_TEXT if multiline else ONE_LINE
    return f"{control_kind(found[1])} ({found[1]!r}) at character {found[0]}; expected {what}"


def check_name(value: str) -> str:
    """`value` unless it holds a control character (`control_problem`): a name is printed on
    terminals, in tables and in file names."""
    problem = control_problem(value)
    if problem:
        raise ValueError(problem)
    return value


@cache
def _table_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a model that hold a table (a dict, e.g. sources), not a section."""
    return frozenset(
        name
        for name, info in model.model_fields.items()
        if typing.get_origin(info.annotation) is dict
    )


@cache
def _boolean_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a model whose type admits true or false somewhere (a switch)."""

    def admits(annotation) -> bool:
        return annotation is bool or any(admits(a) for a in typing.get_args(annotation))

    return frozenset(n for n, info in model.model_fields.items() if admits(info.annotation))


def _first_boolean(name: str, value) -> tuple[str, bool] | None:
    """The first true or false in a field's given value, itself or in its lists, as (field,
    value); a table inside is a section, which checks its own fields."""
    if is_boolean(value):
        return name, bool(value)
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _first_boolean(f"{name}[{i}]", item)
            if found:
                return found
    return None


def _texts(name: str, value, table: bool) -> typing.Iterator[tuple[str, str]]:
    """The text in a field's given value, as (field, text): the value itself, or the keys and
    text values of a table (sources, catalog_query). Sections check their own fields."""
    if isinstance(value, str):
        yield name, value
    elif table and isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield f"{name}.{key}", key
            if isinstance(item, str):
                yield f"{name}.{key}", item


class Section(BaseModel):
    # defer_build: a validator is built when a model first validates, not when econ is imported
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_default=True,
        allow_inf_nan=False,
        defer_build=True,
        json_schema_extra=_none_word_in_schema,
    )
    MULTILINE: ClassVar[frozenset[str]] = frozenset()
    """Fields whose text may hold line feeds and tabs (a description)."""

    @model_validator(mode="before")
    @classmethod
    def _printable(cls, data):
        if isinstance(data, dict):
            tables = _table_fields(cls)
            for name, value in data.items():
                multiline = name in cls.MULTILINE
                for field, text in _texts(str(name), value, name in tables):
                    problem = control_problem(text, multiline)
                    if problem:
                        raise PydanticCustomError(
                            CONTROL_CHARACTER,
                            "{problem}",
                            {"field": field, "value": text, "problem": problem},
                        )
        return data

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_as_number(cls, data):
        """true or false where a number goes: pydantic would read them as 1 and 0."""
        if isinstance(data, dict):
            switches = _boolean_fields(cls)
            for name, value in data.items():
                if name not in cls.model_fields or name in switches:
                    continue
                found = _first_boolean(str(name), value)
                if found:
                    raise PydanticCustomError(  # (value None: the message spells it as TOML)
                        BOOLEAN_AS_NUMBER,
                        "{spelled} is a boolean; expected the number (or text) the field takes, "
                        "not true or false",
                        {"field": found[0], "value": None, "spelled": toml_boolean(found[1])},
                    )
        return data

    @model_validator(mode="before")
    @classmethod
    def _finite_integers(cls, data):
        found = first_beyond_float(data) if isinstance(data, dict) else None
        if found:
            # shown by its leading digits: Python refuses str() of 4,300 digits and more
            raise PydanticCustomError(
                BEYOND_FLOAT,
                EXPECTED_FINITE,
                {"field": found[0], "value": integer_shown(found[1])},
            )
        return data

    @model_validator(mode="before")
    @classmethod
    def _no_number_as_text(cls, data):
        if isinstance(data, dict):
            for name in _number_fields(cls):
                value = data.get(name)
                if not isinstance(value, str):
                    continue
                if value.strip().lower() == NONE_WORD and name in _optional_fields(cls):
                    data = {**data, name: None}
                    continue
                expected = (
                    f'expected a number, or "{NONE_WORD}" to turn it off'
                    if name in none_word_fields(cls)
                    else "a number written as text; expected the number without quotes"
                    if _reads_as_number(value)
                    else "text, not a number; expected a number"
                )
                # the field and value go in the context: econ.scenario.io names them
                raise PydanticCustomError(NUMBER_AS_TEXT, expected, {"field": name, "value": value})
        return data


def exactly_one(values: dict[str, typing.Any]) -> str:
    """What a section says when not exactly one of some fields is given (a field is given unless
    None): "give exactly one of month and date; neither is given", "give exactly one of
    gpu_price_usd and system_price_usd; both are given (gpu_price_usd=40,000,
    system_price_usd=3,100,000)", "give exactly one of curve, catalog_id and catalog_query;
    curve and catalog_id are given". Values are shown where all those given are numbers, dates
    or words, numbers all in one format, thousands grouped (`number_text`); the app's form
    reads them (econ.ui.form.app_message)."""
    names = list(values)
    given = [name for name in names if values[name] is not None]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    if not given:
        told = "neither is given" if len(names) == 2 else "none is given"
    else:
        which = "both" if len(given) == len(names) == 2 else " and ".join(given)
        told = f"{which} are given"
        if all(isinstance(values[n], int | float | str | dt.date) for n in given):
            told += " (" + ", ".join(f"{n}={_shown(values[n])}" for n in given) + ")"
    return f"give exactly one of {listed}; {told}"


def _shown(value: typing.Any) -> str:
    if isinstance(value, bool):
        return toml_boolean(value)
    if isinstance(value, int | float):
        return number_text(value, grouped=True)
    return value.isoformat() if isinstance(value, dt.date) else clipped(value)


def _reads_as_number(text: str) -> bool:
    """Whether quoted text holds a number ("0.7", "3e6"), not words ("seventy")."""
    try:
        float(text.replace("_", ""))
    except ValueError:
        return False
    return True


__all__ = [
    "BEYOND_FLOAT",
    "BOUNDS",
    "BOOLEAN_AS_NUMBER",
    "CONTROL_CHARACTER",
    "FIELD_ERRORS",
    "NONE_WORD",
    "MULTILINE_TEXT",
    "NUMBER_AS_TEXT",
    "ONE_LINE",
    "PRINTABLE",
    "Section",
    "check_name",
    "control_character",
    "control_problem",
    "exactly_one",
    "field_bounds",
    "none_word_fields",
]
