"""Numeric bounds as pydantic declares them on a field ({'ge': 1.0, 'le': 3.0}; see
`econ.scenario.section.field_bounds`): whether a value meets them, and how a message says them.

Standard library only: command-line option types use it while the parser is built, before any
scenario model (pydantic) loads.
"""

from __future__ import annotations

from collections.abc import Callable

BOUND_WORDS = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
_BOUND_TESTS = {
    "ge": lambda x, b: x >= b,
    "gt": lambda x, b: x > b,
    "le": lambda x, b: x <= b,
    "lt": lambda x, b: x < b,
}


def within_bounds(value: float, bounds: dict[str, float]) -> bool:
    """Whether `value` meets every bound of `field_bounds`' form ({'ge': 1.0, 'le': 3.0})."""
    return all(_BOUND_TESTS[bound](value, limit) for bound, limit in bounds.items())


def bound_text(bound: float) -> str:
    """A bound as a message reads it: 100,000,000 rather than 1e+08, 0.5 as 0.5, 600 as 600."""
    if float(bound).is_integer() and abs(bound) < 1e15:
        return f"{int(bound):,}" if abs(bound) >= 100_000 else f"{int(bound)}"
    return f"{bound:g}"


def bounds_words(bounds: dict[str, float], number: Callable[[float], str] = "{:g}".format) -> str:
    """The bounds as a message says them: 'from 1 to 3', 'from 0 to below 1', 'above 0', 'at
    least 0 and at most 5'; `number` writes each bound."""
    if set(bounds) == {"ge", "le"}:
        return f"from {number(bounds['ge'])} to {number(bounds['le'])}"
    if set(bounds) == {"ge", "lt"}:
        return f"from {number(bounds['ge'])} to below {number(bounds['lt'])}"
    return " and ".join(f"{BOUND_WORDS[b]} {number(limit)}" for b, limit in bounds.items())
