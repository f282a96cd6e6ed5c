"""Strict JSON for every file and stream econ writes: no NaN or Infinity tokens, whatever the input.

Python's `json` writes NaN and Infinity, which strict parsers (JavaScript's JSON.parse, jq, most
databases) refuse. Undefined figures are null in econ's outputs; the summary's warnings say why.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """`value` with every non-finite float (NaN, ±inf; numpy's too) replaced by None, recursively."""
    if isinstance(value, float):  # numpy.float64 is a float subclass
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if hasattr(value, "dtype") and getattr(value, "shape", None) == ():  # numpy scalars
        return finite(value.item())
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps` of `value` after `finite`, refusing any non-finite number that is left."""
    kwargs["allow_nan"] = False
    return json.dumps(finite(value), **kwargs)
