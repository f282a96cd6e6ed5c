"""Numeric bounds as pydantic declares them on a field ({'ge': 1.0, 'le': 3.0}; see
`econ.scenario.section.field_bounds`): whether a value meets them, and how a message says them.

Standard library only: command-line option types use it while the parser is built, before any
scenario model (pydantic) loads.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_GPU_COUNT = 100_000
"""Largest GPU count accepted for one measured system [GPUs]; the largest MLPerf systems hold a
few hundred and the largest clusters a few hundred thousand, none of which one benchmark serves.
(Here, not in the importers, so that the `--gpus` option of `econ throughput` checks it while the
parser is built.)"""

BOUND_WORDS = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
PAST_WORDS = {"ge": "below", "gt": "not above", "le": "above", "lt": "not below"}
"""How a value past each bound is said: 0 is below a bound `ge` 1, 0 is not above one `gt` 0."""
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


def number_text(value: float, grouped: bool = False) -> str:
    """A value a message names: whole numbers as `bound_text` writes them (100,000,001; 1e+20),
    others in full (1.0000001, not 1: the value given, not a rounding of it). `grouped`: every
    number with its thousands grouped (40,000 as 3,100,000 is; 40,000.5), for a message that
    names several numbers side by side in one format."""
    if grouped:
        value = float(value)
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:,}"
    return bound_text(value) if float(value).is_integer() else repr(float(value))


def past_bound(value: str, bound: str, limit: str) -> str:
    """A value past a bound, as every message of econ says it: "0 months is below 1 month", "2 is
    above 1"; `value` and `limit` as written, `bound` one of ge, gt, le, lt."""
    return f"{value} is {PAST_WORDS[bound]} {limit}"


def expected_within(
    bounds: dict[str, float], what: str = "a number", unit: str = "", whole: bool = False
) -> str:
    """What a number within `bounds` is expected to be, as options and scenario fields say it:
    "a rate from 0 to 1 [1/year]", "a whole number from 1 to 600 [months]"; `what` names the
    number ("a number" becomes "a whole number" when `whole`) and `unit` follows as written
    (" [USD]", " (1 = 100%)"); "a finite number" without bounds ("a finite whole number")."""
    if not bounds:
        return ("a finite whole number" if whole else "a finite number") + unit
    if whole:
        what = what.replace("a number", "a whole number", 1)
    return f"{what} {bounds_words(bounds, bound_text)}{unit}"


def bounds_words(bounds: dict[str, float], number: Callable[[float], str] = "{:g}".format) -> str:
    """The bounds as a message says them: 'from 1 to 3', 'from 0 to below 1', 'above 0', 'at
    least 0 and at most 5'; `number` writes each bound."""
    if set(bounds) == {"ge", "le"}:
        return f"from {number(bounds['ge'])} to {number(bounds['le'])}"
    if set(bounds) == {"ge", "lt"}:
        return f"from {number(bounds['ge'])} to below {number(bounds['lt'])}"
    return " and ".join(f"{BOUND_WORDS[b]} {number(limit)}" for b, limit in bounds.items())
