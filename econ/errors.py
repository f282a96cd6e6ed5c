"""The error every bad input raises: a ValueError whose message names where, what and what was expected.

The CLI turns any InputError into exit code 3 with its message and no traceback; the app shows it
with st.error. Feature modules subclass it (ScenarioError, CurveError, ExportError, ...).
"""

from __future__ import annotations


class InputError(ValueError):
    """Invalid input (scenario, data file, argument value or output path)."""


def in_file(exc: InputError, file: str | None) -> InputError:
    """The same error (same class and attributes) with the file it concerns in front of its
    message, as the importers name theirs; `exc` itself when it already starts with it."""
    message = str(exc)
    if file is None or message.startswith(file):
        return exc
    return with_message(exc, f"{file}: {message}")


def with_message(exc: InputError, message: str) -> InputError:
    """The same error (same class and attributes) with `message` as its message."""
    # (not copy.copy: it calls __init__ again, which an error with more arguments refuses)
    named = type(exc).__new__(type(exc))
    named.__dict__.update(exc.__dict__)
    named.args = (message,)
    return named
