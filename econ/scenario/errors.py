"""The error every scenario check raises (kept apart so that reading, migrating and validating
scenario files can all raise it without importing each other)."""

from __future__ import annotations

import os
import sys
from pathlib import PurePath
from typing import Any, NamedTuple

from econ.errors import InputError
from econ.strict_json import integer_shown
from econ.text import PATH_LIMIT, QUOTED_LIMIT, clipped, printable, shortened

FIELD_PATH_LIMIT = 200
"""Characters of a field path a message quotes (the longest of econ's is under 60)."""


class Given(NamedTuple):
    """A value given over a scenario file rather than by it: the override's field path and how
    it was written ("--set utilization.share=2")."""

    path: str
    text: str


class ScenarioError(InputError):
    """Invalid scenario input; names the file, the field path, the value and what was expected.

    A value an override gave (`given`) is named as the override, over the file's name: "--set
    utilization.share=2 (over deepseek-r1-gb200-nvl72.toml): 2 is above 1; ...", and the field
    path only where it lies inside the value given (a table or list set whole).

    The message is for a terminal: the file's name and the field path (a table key of the file,
    a column of an overrides CSV) are written `clipped` and the value `shortened` (true and
    false as TOML writes them): a control character in any of them is written as an escape
    (\\x1b), a name of 100,000 characters is cut, saying how long it was; the whole message is
    `printable`."""

    def __init__(
        self,
        file: str | os.PathLike | None,
        path: str,
        value: Any,
        expected: str,
        given: Given | None = None,
    ):
        self.file = str(file) if file is not None else None
        self.path = path
        self.value = value
        self.expected = expected
        self.given = given
        where = f"{clipped(self.file, limit=PATH_LIMIT)}: " if self.file else ""
        if given is not None:
            over = f" (over {clipped(_file_name(self.file))})" if self.file else ""
            where = f"{given.text}{over}: "  # (cut where it was made: `set_given`)
            if path == given.path:  # the override's text names the field and the value
                path, value = "", None
        shown = clipped(path, limit=FIELD_PATH_LIMIT)
        if value is not None:
            field = f"{shown} = {value_text(value)}: "
        else:
            field = f"{shown}: " if path else ""
        super().__init__(printable(f"{where}{field}{expected}"))


def _file_name(file: str) -> str:
    """A scenario file by its name, the file the override is applied to being the command's
    own (deepseek-r1-gb200-nvl72.toml); a library version by its label (library:NAME@3)."""
    return file if file.startswith("library:") else PurePath(file).name


def is_boolean(value: Any) -> bool:
    """True or false, Python's or numpy's (np.bool_, what a comparison of arrays gives, is no
    bool subclass: pydantic reads it as 1 or 0 where a number goes). numpy is not imported for
    this: a numpy boolean exists only if numpy was."""
    if isinstance(value, bool):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.bool_)


def toml_boolean(value: bool) -> str:
    """A boolean as TOML and the scenario file write it: true or false, not Python's True and
    False (every message, note and [sources] entry that quotes one writes it so)."""
    return "true" if value else "false"


def value_text(value: Any) -> str:
    """A value as a message quotes it: `shortened` (text quoted, cut), true and false as TOML
    and the scenario file write them (`toml_boolean`), an integer of thousands of digits by
    its leading ones (`integer_shown`: Python writes none past 4,300)."""
    if is_boolean(value):
        return toml_boolean(value)
    if isinstance(value, int) and value.bit_length() > 256:
        return integer_shown(value)
    return shortened(value)


class BoundError(ValueError):
    """A number past a field's bound, refused by the field's own validator with a message for
    the scenario file (in the unit the field is stored in: "1.5 is 150% a year, ...; expected a
    fraction"). `bound` is the bound as pydantic's bound errors carry it (("le", 1.0)) and
    `reason` what the bound stands for, so that a form showing the field in another unit can
    say it in its own ("150 %/year is above 100 %/year (the electricity price doubling every
    year of the horizon)")."""

    def __init__(self, message: str, bound: tuple[str, float], reason: str = ""):
        super().__init__(message)
        self.bound = bound
        self.reason = reason


__all__ = [
    "QUOTED_LIMIT",
    "BoundError",
    "Given",
    "ScenarioError",
    "is_boolean",
    "shortened",
    "toml_boolean",
    "value_text",
]
