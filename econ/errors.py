"""The error every bad input raises: a ValueError whose message names where, what and what was expected.

The CLI turns any InputError into exit code 3 with its message and no traceback; the app shows it
with st.error. Feature modules subclass it (ScenarioError, CurveError, ExportError, ...).
"""

from __future__ import annotations


class InputError(ValueError):
    """Invalid input (scenario, data file, argument value or output path)."""
