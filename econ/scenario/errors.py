"""The error every scenario check raises (kept apart so that reading, migrating and validating
scenario files can all raise it without importing each other)."""

from __future__ import annotations

import os
from typing import Any

from econ.errors import InputError
from econ.text import PATH_LIMIT, QUOTED_LIMIT, clipped, printable, shortened

FIELD_PATH_LIMIT = 200
"""Characters of a field path a message quotes (the longest of econ's is under 60)."""


class ScenarioError(InputError):
    """Invalid scenario input; names the file, the field path, the value and what was expected.

    The message is for a terminal: the file's name and the field path (a table key of the file,
    a column of an overrides CSV) are written `clipped` and the value `shortened`: a control
    character in any of them is written as an escape (\\x1b), a name of 100,000 characters is
    cut, saying how long it was; the whole message is `printable`."""

    def __init__(self, file: str | os.PathLike | None, path: str, value: Any, expected: str):
        self.file = str(file) if file is not None else None
        self.path = path
        self.value = value
        self.expected = expected
        where = f"{clipped(self.file, limit=PATH_LIMIT)}: " if self.file else ""
        shown = clipped(path, limit=FIELD_PATH_LIMIT)
        if value is not None:
            field = f"{shown} = {shortened(value)}: "
        else:
            field = f"{shown}: " if path else ""
        super().__init__(printable(f"{where}{field}{expected}"))


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


__all__ = ["QUOTED_LIMIT", "BoundError", "ScenarioError", "shortened"]
