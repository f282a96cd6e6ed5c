"""The base of every scenario section: what any section refuses.

A section forbids unknown keys, inf and NaN, and is frozen. It also refuses a number written as
text (`gpu_price_usd = "310000"` in TOML, `--set 'x="0.5"'`), which pydantic would otherwise read
as the number: a quoted value is a string in TOML, and quoting a number is more often a slip
(a value pasted from elsewhere, a cell of a spreadsheet) than a choice. The one word an
optional number takes is NONE_WORD, for None (TOML has no null): it turns off a field that is on
by default.
"""

from __future__ import annotations

import types
import typing
from functools import cache

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

NUMBER_AS_TEXT = "number_as_text"
"""The pydantic error type of a number written as text."""
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
                )
                # the field and value go in the context: econ.scenario.io names them
                raise PydanticCustomError(NUMBER_AS_TEXT, expected, {"field": name, "value": value})
        return data


__all__ = ["NONE_WORD", "NUMBER_AS_TEXT", "Section", "none_word_fields"]
