"""The error every scenario check raises (kept apart so that reading, migrating and validating
scenario files can all raise it without importing each other)."""

from __future__ import annotations

import os
from typing import Any

from econ.errors import InputError


class ScenarioError(InputError):
    """Invalid scenario input; names the file, the field path, the value and what was expected."""

    def __init__(self, file: str | os.PathLike | None, path: str, value: Any, expected: str):
        self.file = str(file) if file is not None else None
        self.path = path
        self.value = value
        self.expected = expected
        where = f"{self.file}: " if self.file else ""
        field = (
            f"{path} = {shortened(value)}: " if value is not None else (f"{path}: " if path else "")
        )
        super().__init__(f"{where}{field}{expected}")


QUOTED_LIMIT = 80
"""Characters of a value a message quotes; a longer one is cut, saying how long it was."""


def shortened(value: Any) -> str:
    """repr(value), cut to QUOTED_LIMIT characters (a 20 MB string is not a message)."""
    text = repr(value)
    if len(text) <= QUOTED_LIMIT:
        return text
    return f"{text[:QUOTED_LIMIT]}... ({len(text):,} characters)"
