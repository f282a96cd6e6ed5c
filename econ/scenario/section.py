"""The base of every scenario section: what any section refuses.

A section forbids unknown keys, inf and NaN, and is frozen. It also refuses a number written as
text (`gpu_price_usd = "310000"` in TOML, `--set 'x="0.5"'`), which pydantic would otherwise read
as the number: a quoted value is a string in TOML, and quoting a number is more often a slip
(a value pasted from elsewhere, a cell of a spreadsheet) than a choice.
"""

from __future__ import annotations

import types
import typing
from functools import cache

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

NUMBER_AS_TEXT = "number_as_text"
"""The pydantic error type of a number written as text."""


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


class Section(BaseModel):
    # defer_build: a validator is built when a model first validates, not when econ is imported
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False, defer_build=True
    )

    @model_validator(mode="before")
    @classmethod
    def _no_number_as_text(cls, data):
        if isinstance(data, dict):
            for name in _number_fields(cls):
                value = data.get(name)
                if isinstance(value, str):
                    # the field and value go in the context: econ.scenario.io names them
                    raise PydanticCustomError(
                        NUMBER_AS_TEXT,
                        "a number written as text; expected the number without quotes",
                        {"field": name, "value": value},
                    )
        return data


__all__ = ["NUMBER_AS_TEXT", "Section"]
