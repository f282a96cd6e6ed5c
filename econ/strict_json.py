"""Strict JSON for every file and stream econ writes: no NaN or Infinity tokens, whatever the input;
and the bound every number econ reads must keep: finite as a float.

Python's `json` writes NaN and Infinity, which strict parsers (JavaScript's JSON.parse, jq, most
databases) refuse. Undefined figures are null in econ's outputs; the summary's warnings say why.

On reading, TOML and JSON give integers of any size: 10**400 (beyond a float, where arithmetic with
floats overflows), or one of more digits than Python converts from text (4,300 by default, a
ValueError inside the parser). `beyond_float` tells the first kind; `load_json` reads the second
without a traceback and refuses it by field (OverlongNumberError); `integer_shown` and
`digits_shown` write either for a message without converting the whole number to text (which
Python refuses past that limit). Standard library only: scenario, importers and readers share it.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

FLOAT_MAX = sys.float_info.max
"""The largest finite float (about 1.8e308): no number econ reads may exceed it in size."""
EXPECTED_FINITE = "expected a finite number (at most about 1.8e308 in size, the float range)"
"""What a number beyond the float range was expected to be, for messages."""


class Shown(str):
    """Text standing for a value in a message: its repr is the text itself (not quoted), so an
    error that quotes `repr(value)` shows `1.11e+4999 (an integer of 5,000 digits)`."""

    def __repr__(self) -> str:
        return str(self)


def beyond_float(value: Any) -> bool:
    """Whether `value` is an integer (not a bool) larger in size than any finite float."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > FLOAT_MAX


def first_beyond_float(value: Any, path: str = "") -> tuple[str, int] | None:
    """(path, integer) of the first integer in JSON-like data (dicts, lists, tuples) larger than
    any float, or None. Fast when there is none: paths are made only for the one found."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif type(node) is not float and beyond_float(node):
            return next((p, leaf) for p, leaf in leaves(value, path) if beyond_float(leaf))
    return None


def _shown(negative: bool, lead: int, exponent: int) -> Shown:
    """`lead` holds the first three significant digits (100-999) of a number of 10**exponent."""
    mantissa = f"{lead // 100}.{lead % 100:02d}".rstrip("0").rstrip(".")
    sign = "-" if negative else ""
    return Shown(f"{sign}{mantissa}e+{exponent} (an integer of {exponent + 1:,} digits)")


def integer_shown(value: int) -> Shown:
    """An integer of any size for a message: `1e+400 (an integer of 401 digits)`; its leading
    digits are found by arithmetic, never by converting it all to text."""
    magnitude = abs(value)
    if magnitude < 10**30:
        return Shown(str(value))
    logarithm = math.log10(magnitude)  # (exact to about 1e-16 relative, for any size)
    exponent = int(logarithm)
    if magnitude.bit_length() > 200_000:  # 60,000 digits and more: powers of 10 cost seconds
        return _shown(
            value < 0, min(max(int(10 ** (logarithm - exponent + 2)), 100), 999), exponent
        )
    while 10**exponent > magnitude:  # the float logarithm may be one off either way
        exponent -= 1
    while 10 ** (exponent + 1) <= magnitude:
        exponent += 1
    return _shown(value < 0, magnitude * 100 // 10**exponent, exponent)


def digits_shown(literal: str) -> Shown:
    """An integer literal too long to convert (`+1_111...`, decimal) for a message, as
    `integer_shown` writes the integer."""
    text = literal.strip().replace("_", "")
    negative = text.startswith("-")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) <= 30:
        return Shown(("-" if negative else "") + digits)
    return _shown(negative, int(digits[:3]), len(digits) - 1)


def digit_limit(exc: BaseException) -> bool:
    """Whether `exc` is Python's refusal to convert an integer of too many digits from text."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


class OverlongNumberError(ValueError):
    """A JSON integer of more digits than Python converts (far beyond a float). `field` is where it
    is (`[2].output_throughput`; "" at the top), `value` how a message shows it."""

    def __init__(self, field: str, value: Shown):
        self.field = field
        self.value = value
        where = f"field {field!r} is " if field else ""
        super().__init__(f"{where}{value}; {EXPECTED_FINITE}")


class _Overlong(str):
    """The text of a JSON integer too long to convert, kept in place until found by `load_json`."""


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) of every leaf of JSON-like data, in document order, without recursion."""
    stack = [(path, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            items = [(f"{where}.{k}" if where else str(k), v) for k, v in node.items()]
        elif isinstance(node, list | tuple):
            items = [(f"{where}[{i}]", v) for i, v in enumerate(node)]
        else:
            yield where, node
            continue
        stack.extend(reversed(items))


def load_json(text: str | bytes, **kwargs: Any) -> Any:
    """`json.loads`, with an integer of more digits than Python converts refused by field
    (OverlongNumberError, a ValueError) instead of the parser's traceback. Other errors
    (JSONDecodeError, RecursionError) pass as json.loads raises them."""
    seen: list[bool] = []
    parse_int: Callable[[str], Any] = kwargs.pop("parse_int", int)

    def guarded(literal: str) -> Any:
        try:
            return parse_int(literal)
        except ValueError as exc:
            if not digit_limit(exc):
                raise
            seen.append(True)
            return _Overlong(literal)

    data = json.loads(text, parse_int=guarded, **kwargs)
    if seen:
        for path, leaf in leaves(data):
            if isinstance(leaf, _Overlong):
                raise OverlongNumberError(path, digits_shown(leaf))
    return data


def number(value: Any) -> float | int | None:
    """A summary figure as JSON writes it: None for missing or non-finite, an integral value
    below 2**53 as an int (72, not 72.0), else a float."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


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
