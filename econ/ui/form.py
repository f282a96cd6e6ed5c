"""Scenario widgets generated from the pydantic models: one widget per field, labels and units from
the field descriptions, values read from and written to the scenario dict in session state.

Nothing here lists the scenario's fields: `fields_of(Scenario)` walks `model_fields`, so a field the
engine's owners add shows up with its description as help text. Each kind of field gets a widget:
numbers (fractions shown as percentages), choices, switches, text, dates, lists of numbers, tables
of small models (an editable grid), optional sub-sections (a switch), and TOML text for anything
richer (a capital stack, vintages). A value that does not parse is kept as typed, with the reason.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import math
import re
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import pandas as pd
import streamlit as st
import tomli_w
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from econ.bounds import BOUND_WORDS, past_bound
from econ.labels import FIELD_LABELS, description_unit, field_label, field_unit, input_label
from econ.scenario.errors import QUOTED_LIMIT, BoundError, shortened
from econ.scenario.io import cited_change
from econ.ui import state
from econ.ui.fmt import humanize, literal, number_format
from econ.units import MONTHS_PER_YEAR

SCALAR_KINDS = ("float", "int", "bool", "choice", "text", "date")
HIDDEN = ("schema_version",)
"""Fields the editor does not show (the file format version is not an input)."""

_GROUP_SPLIT = re.compile(r",\s*|\s+or\s+|\s+and\s+")


@dataclass(frozen=True)
class FieldInfo:
    """One scenario field as the form sees it.

    kind : float, int, bool, choice, text, date, numbers (list of numbers), table (list of small
        models), mapping (table of text or numbers by name), section, toml (anything else)
    scale : shown value = stored value x scale (100 for fractions shown as percentages)
    group : (sibling choice field, its values) for fields used by some choices only
    """

    path: str
    name: str
    kind: str
    optional: bool
    choices: tuple
    unit: str
    scale: float
    label: str
    help: str
    default: Any
    group: tuple[str, tuple[str, ...]] | None = None
    children: tuple[FieldInfo, ...] = ()
    text_values: bool = True

    @property
    def scalar(self) -> bool:
        return self.kind in SCALAR_KINDS


def _default(info) -> Any:
    if info.default is not PydanticUndefined:
        return state.plain(info.default)
    if info.default_factory is not None:
        try:
            return state.plain(info.default_factory())
        except TypeError:
            return None
    return None


def _kind(annotation) -> tuple[str, tuple, Any]:
    """(kind, choices, item model) of an annotation without its `| None`."""
    origin = typing.get_origin(annotation)
    if state.is_model(annotation):
        return "section", (), annotation
    if annotation is bool:
        return "bool", (), None
    if annotation is int:
        return "int", (), None
    if annotation is float:
        return "float", (), None
    if annotation is str:
        return "text", (), None
    if annotation is dt.date:
        return "date", (), None
    if origin is Literal:
        return "choice", typing.get_args(annotation), None
    if origin in (tuple, list):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        item = args[0] if len(args) == 1 else None
        if item in (float, int):
            return "numbers", (), None
        if state.is_model(item) and all(
            _kind(state.unwrap_optional(f.annotation)[0])[0] in SCALAR_KINDS
            for f in item.model_fields.values()
        ):
            return "table", (), item
        return "toml", (), None
    if origin is dict:
        args = typing.get_args(annotation)
        value = args[1] if len(args) == 2 else None
        parts = typing.get_args(value) or (value,)
        if all(p in (str, int, float) for p in parts):
            return "mapping", (), None
    return "toml", (), None


def unit_and_scale(name: str, kind: str, description: str) -> tuple[str, float]:
    """Unit shown in the label, and the factor from stored to shown value (fractions as %): the
    description's last bracketed unit as econ.labels.field_unit shows it."""
    return field_unit(name, kind, description_unit(description))


def _groups(fields: list[FieldInfo]) -> list[FieldInfo]:
    """Mark fields whose description starts with the choices they apply to ("macrs_gds: ...")."""
    choices = {f.name: [str(c).lower() for c in f.choices] for f in fields if f.kind == "choice"}
    out = []
    for f in fields:
        head, sep, _ = f.help.partition(":")
        group = None
        if sep and len(head) < 60:
            tokens = tuple(t.strip().lower() for t in _GROUP_SPLIT.split(head) if t.strip())
            for owner, values in choices.items():
                if owner != f.name and tokens and all(t in values for t in tokens):
                    group = (owner, tokens)
                    break
        out.append(f if group is None else _replace(f, group=group))
    return out


def _replace(f: FieldInfo, **changes) -> FieldInfo:
    from dataclasses import replace

    return replace(f, **changes)


@cache
def fields_of(model: type[BaseModel], prefix: str = "") -> tuple[FieldInfo, ...]:
    """The fields of a model (recursively for sub-sections) in declaration order."""
    fields = []
    for name, info in model.model_fields.items():
        if name in HIDDEN:
            continue
        annotation, optional = state.unwrap_optional(info.annotation)
        kind, choices, item = _kind(annotation)
        path = prefix + name
        description = info.description or ""
        unit, scale = unit_and_scale(name, kind, description)
        children: tuple[FieldInfo, ...] = ()
        if kind == "section":
            children = fields_of(item, path + ".")
        elif kind == "table":
            children = fields_of(item, "")
        label = field_label(name, unit) if kind != "section" else humanize(name)
        label = FIELD_LABELS.get(path, label)
        values = typing.get_args(annotation)[1:] if kind == "mapping" else ()
        text_values = all(v is str for v in values)
        fields.append(
            FieldInfo(
                path=path,
                name=name,
                kind=kind,
                optional=optional,
                choices=tuple(choices),
                unit=unit,
                scale=scale,
                label=label,
                help=description,
                default=_default(info),
                children=children,
                text_values=text_values,
            )
        )
    return tuple(_groups(fields))


def find(path: str, model: type[BaseModel] | None = None) -> FieldInfo | None:
    """The field at a dotted path, or None when the scenario has no such field."""
    from econ.scenario import Scenario

    fields = fields_of(model or Scenario)
    found = None
    for depth, part in enumerate(path.split(".")):
        found = next((f for f in fields if f.name == part), None)
        if found is None:
            return None
        if depth < len(path.split(".")) - 1:
            if found.kind != "section":
                return None
            fields = found.children
    return found


def path_label(path: str) -> str:
    """A field's label for tables and charts: its section and the form's label with the unit
    ("Utilization › Share [%]"); the dotted path when the form does not know it."""
    f = find(path)
    if f is None:
        return path
    if f.kind == "section":
        return " › ".join(humanize(part) for part in path.split("."))
    return input_label(path, f.unit)  # (the memo's Key assumptions label inputs alike)


_INPUT_PATH = re.compile(
    r"(?<![\w./-])([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)(?![\w/-])(?:( = | is )'([a-z0-9_]+)')?"
)
"""A scenario input named by its dotted path in an engine's message, and a choice it quotes."""


def field_words(text: str) -> str:
    """An engine's message with the scenario inputs it names by their paths in the form's words,
    as validation messages name them: "with financing.tax_valuation_allowance = 'none'" reads
    "with “Financing › Tax valuation allowance” = None", "an earlier fleet.retire_month" reads "an
    earlier “Fleet › Retire month”". Other dotted words (file names, summary keys) stay."""

    def named(match: re.Match) -> str:
        f = find(match.group(1))
        if f is None or f.kind == "section":
            return match.group(0)
        told = f"“{path_label(f.path)}”"
        said, choice = match.group(2, 3)
        if choice is None:
            return told
        return f"{told}{said}{choice_label(choice) if choice in f.choices else repr(choice)}"

    return _INPUT_PATH.sub(named, text)


def stored_path_label(path: str) -> str:
    """`path_label` with the unit the value is stored and typed in where the form shows it
    scaled ("Utilization › Share [fraction]", not "[%]"): for tables whose cells hold stored
    values, such as the Monte Carlo distributions (uniform(0.6, 0.9) of a share)."""
    label = path_label(path)
    f = find(path)
    if f is None or f.scale == 1 or not label.endswith(f"[{f.unit}]"):
        return label
    stored = "fraction/year" if f.unit.endswith("/year") else "fraction"
    return label[: -len(f.unit) - 2] + f"[{stored}]"


def shown_value(path: str, value: Any) -> Any:
    """A stored value as the form shows it (fractions as percentages)."""
    f = find(path)
    return to_widget(f, value) if f is not None else value


BOUND_KEYS = {
    "greater_than_equal": "ge",
    "greater_than": "gt",
    "less_than_equal": "le",
    "less_than": "lt",
}
"""pydantic's bound errors -> the bound's key in their context."""


def unit_message(path: str, error: Mapping) -> str | None:
    """A bound error in the unit the field is shown in (percent fields in %): pydantic's, "150 %
    is above 100 % (expected at most 100 %)", "0 months is below 1 month (expected at least 1
    month)", or a field validator's BoundError with what its bound stands for ("150 %/year is
    above 100 %/year (the electricity price doubling every year of the horizon); expected at
    most 100 %/year"); None for other errors."""
    f = find(path)
    if f is None or not _is_number(error.get("input")):
        return None
    context = error.get("ctx") or {}
    refused = context.get("error")
    reason = ""
    if isinstance(refused, BoundError):
        key, bound = refused.bound
        reason = refused.reason
    else:
        key = BOUND_KEYS.get(str(error.get("type")), "")
        bound = context.get(key)
    if key not in BOUND_WORDS or not _is_number(bound):
        return None
    value, limit = _shown(to_widget(f, error["input"])), _shown(to_widget(f, bound))
    value, limit = _with_unit(value, f.unit), _with_unit(limit, f.unit)
    months = _in_months(to_widget(f, bound), f.unit)
    if months:  # a life's shortest, 1/12 year: "0 years is below 1 month (0.0833 years)"
        past = past_bound(value, key, f"{months} ({to_widget(f, bound):.3g} {f.unit})")
        return f"{past}; expected {BOUND_WORDS[key]} {months}"
    past, expected = past_bound(value, key, limit), f"{BOUND_WORDS[key]} {limit}"
    if reason:
        return f"{past} ({reason}); expected {expected}"
    return f"{past} (expected {expected})"


def _in_months(years: float, unit: str) -> str:
    """A bound in years that is a whole number of months but not of years, in months ("1
    month" for 1/12 year, written 0.08333333333333333); "" for any other."""
    if unit != "years" or float(years).is_integer():
        return ""
    months = years * MONTHS_PER_YEAR
    whole = round(months)
    return _with_unit(f"{whole:,}", "months") if math.isclose(months, whole) and whole else ""


def _with_unit(number: str, unit: str) -> str:
    """A number and its unit, a counted unit in the singular for one: "1 month", "1 GPU", "1
    GPU/rack", "2 months" (units of measure stay: "1 kW", "1 %", "1 USD/GPU")."""
    if not unit:
        return number
    counted, per, rest = unit.partition("/")
    if number in ("1", "-1") and counted.isalpha() and counted.endswith("s") and len(counted) > 2:
        unit = counted[:-1] + per + rest
    return f"{number} {unit}"


def _shown(number: float) -> str:
    """A bound or a value in a message: whole numbers in full (1,000,000,000 GPUs, not 1e+09),
    others to 6 significant digits."""
    if float(number).is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    return f"{number:,.6g}"


# econ.scenario.section.exactly_one's words, the values given in brackets
_EXACTLY_ONE = re.compile(
    r"give exactly one of (\w+) and (\w+); (?:both are given \((.*)\)|neither is given)$", re.DOTALL
)
# a name with an underscore, or of letters only, then its value. The part before the first
# underscore holds none, so a failed match backtracks once over the name, not once per underscore
# (`[a-z0-9_]*_[a-z0-9_]*` took seconds on a 60,000-character "a_a_..." from a link).
# A value is a number with thousands separators ("2,000,000") or anything up to a comma, a
# semicolon, a space or a closing bracket; a product of named fields ("racks x gpus_per_rack is
# 2 x 72") is one match, a few factors at most so that a failed match backtracks a bounded time.
_NAME = r"(?:[a-z][a-z0-9]*_[a-z0-9_]*|[a-z]+)"
_VALUE = r"(?:-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d.])|[^,;\s)]+)"
_NAMED_VALUE = re.compile(
    rf"\b({_NAME}(?: x {_NAME}){{0,3}})(=| is )({_VALUE}(?: x {_VALUE}){{0,3}})"
)
_GROUPED_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_FIELD_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:[._][a-z0-9]+)+\b")
# a label the message already quotes; an opening quote without its closing one stops at the next
# opening one, so that a text of many “ is read once
_LABEL = re.compile(r"(“[^“”]*”)")
_QUOTE_OPENS = re.compile(r"(?<!\w)['\"]")


def quoted_values_shortened(message: str) -> str:
    """`message` with each value it quotes ('...' or "...", as repr writes them) cut to
    QUOTED_LIMIT characters, saying how long it was, as ScenarioError cuts the value it names:
    a 63,000-character choice from a link is not read whole by app_message's patterns nor shown
    whole. Linear in the message's length; a message quoting only short values is unchanged."""
    parts: list[str] = []
    done = 0  # message[:done] is in parts
    unclosed: set[str] = set()  # quote characters with no closing one after `done`
    for opening in _QUOTE_OPENS.finditer(message):
        start, quote = opening.start(), opening.group()
        if start < done or quote in unclosed:
            continue
        end = _closing(message, start + 1, quote)
        if end < 0:
            unclosed.add(quote)
            continue
        if end + 1 - start > QUOTED_LIMIT:
            parts.append(message[done:start])
            parts.append(
                f"{message[start : start + QUOTED_LIMIT]}... ({end + 1 - start:,} characters)"
            )
        else:
            parts.append(message[done : end + 1])
        done = end + 1
    return "".join(parts) + message[done:] if parts else message


def _closing(message: str, start: int, quote: str) -> int:
    """Index of the quote that closes a value opened before `start` (not escaped, not followed
    by a letter as an apostrophe is), or -1."""
    end = message.find(quote, start)
    while end >= 0:
        before = end
        while before > start and message[before - 1] == "\\":
            before -= 1
        after = message[end + 1 : end + 2]
        if (end - before) % 2 == 0 and not (after.isalnum() or after == "_"):
            return end
        end = message.find(quote, end + 1)
    return -1


def _section_of(path: str) -> FieldInfo | None:
    """The section a message at `path` speaks of: the path's own if a section, else its parent."""
    f = find(path) if path else None
    if f is not None and f.kind == "section":
        return f
    parent = path.rpartition(".")[0]
    return find(parent) if parent else None


def _named(section: FieldInfo | None, name: str) -> FieldInfo | None:
    """The field a message names: a child of `section` by name, or a scenario field by path."""
    if section is not None:
        child = next((c for c in section.children if c.name == name), None)
        if child is not None:
            return child
    return find(name) if "." in name else None


def _stated_value(f: FieldInfo, text: str) -> str:
    """A value a validator wrote ("0.5", "None") in the form's unit ("50 %", "empty")."""
    if text in ("None", "none"):
        return "empty"
    try:
        value = float(text.replace(",", "") if _GROUPED_NUMBER.fullmatch(text) else text)
    except ValueError:
        return text
    return _described(f, int(value) if f.kind == "int" and value.is_integer() else value)


def app_message(path: str, message: str) -> str:
    """A validator's message in the form's words: the fields it names by their labels (in quotes),
    values in the form's units, and for two fields of which exactly one is wanted which to clear
    ("“Capex › GPU price [USD/GPU]” and “Capex › System price [USD]” are both given (40,000
    USD/GPU and 3,100,000 USD); give exactly one: clear one of them")."""
    message = quoted_values_shortened(message)
    section = _section_of(path)
    one = _EXACTLY_ONE.search(message)
    if one:
        first, second = _named(section, one.group(1)), _named(section, one.group(2))
        if first is not None and second is not None:
            both = one.group(3) or ""
            got = dict((m.group(1), m.group(3)) for m in _NAMED_VALUE.finditer(both))
            values = [got.get(f.name, "") for f in (first, second)]
            labels = f"“{path_label(first.path)}” and “{path_label(second.path)}”"
            if all(v and v != "None" for v in values):
                shown = " and ".join(
                    _stated_value(f, v) for f, v in zip((first, second), values, strict=True)
                )
                told = f"{labels} are both given ({shown}); give exactly one: clear one of them"
            else:
                told = f"{labels} are both empty; give exactly one of them"
            return message[: one.start()] + told

    def value(match: re.Match) -> str:
        names, values = match.group(1).split(" x "), match.group(3).split(" x ")
        fields = [_named(section, n) for n in names]
        if len(names) > 1 and len(names) == len(values) and None not in fields:
            # a product, each factor in its field's unit: "2 racks x 72 GPUs/rack"
            labels = " x ".join(f"“{path_label(f.path)}”" for f in fields)
            shown = " x ".join(_stated_value(f, v) for f, v in zip(fields, values, strict=True))
            return f"{labels}{match.group(2)}{shown}"
        f = fields[-1]
        if f is None:
            return match.group(0)
        before = "".join(n + " x " for n in names[:-1])
        after = "".join(" x " + v for v in values[1:])
        told = _stated_value(f, values[0])
        return f"{before}“{path_label(f.path)}”{match.group(2)}{told}{after}"

    def name(match: re.Match) -> str:
        f = _named(section, match.group(1))
        if f is None or f.kind == "section":
            return match.group(0)
        if match.group(2) is None:
            return f"“{path_label(f.path)}”"
        # an item of a list by its place, as the grid numbers its rows ("steps[0]": row 1)
        item = "row" if f.kind == "table" else "entry"
        return f"“{path_label(f.path)}” {item} {int(match.group(2)) + 1:,}"

    # one-word names of list and table fields ("tranches", "vintages") too; not of numbers or
    # choices, whose names ("share", "method") are also the message's own words
    words = [c.name for c in (section.children if section else ()) if not c.scalar]
    core = _FIELD_NAME.pattern
    if words:
        core = f"{core}|\\b(?:{'|'.join(words)})\\b"
    pattern = re.compile(f"({core})(?:\\[(\\d{{1,9}})\\])?")
    parts = _LABEL.split(_NAMED_VALUE.sub(value, message))
    return "".join(p if p.startswith("“") else pattern.sub(name, p) for p in parts)


def fraction_hint(f: FieldInfo, value: Any, base: Any) -> str | None:
    """For a percent field holding a small value the user typed (0 < shown <= 1, not the base's):
    "did you mean 70 %?" (a fraction typed where a percentage is expected)."""
    if f.scale != 100 or not _is_number(value) or value == base:
        return None
    shown = to_widget(f, value)
    if not 0 < abs(shown) <= 1:
        return None
    return (
        f"{shown:g} {f.unit} is taken as {shown:g} percent; did you mean {shown * 100:g} {f.unit}? "
        "This field is in percent."
    )


# --- values between the scenario dict and the widgets ---------------------------------------------


def _round(value: float) -> float:
    return float(f"{value:.12g}")


def to_widget(f: FieldInfo, value: Any) -> Any:
    """The widget's value for a stored value; None when the field is empty."""
    if value is None:
        return None
    if f.kind == "float" and _is_number(value):
        return _round(float(value) * f.scale)
    if f.kind == "int" and _is_number(value) and float(value).is_integer():
        return int(value)
    if f.kind == "date":
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError:
            return None
    if f.kind == "bool" and isinstance(value, bool):
        return value
    return value


MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer a browser's number box holds exactly (JavaScript's Number.MAX_SAFE_INTEGER)."""


def _is_number(value) -> bool:
    """A finite int or float a number box can hold; False for an integer beyond the float range
    (10**400 from a link), which is shown as text, not converted."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def from_widget(f: FieldInfo, value: Any) -> Any:
    """The stored value of a widget's value (percentages back to fractions, a whole number's
    as an int: ValueError saying why for 2.5 or a number beyond what a box holds exactly)."""
    if value is None:
        return None
    if f.kind == "float":
        return _round(float(value) / f.scale) if f.scale != 1 else float(value)
    if f.kind == "int":
        return whole_number(value)
    return value


def whole_number(value: Any) -> int:
    """A whole-number box's value as an int. The box takes decimals and exponents (Streamlit's
    whole-number box reads "1e12" as 1, so the app's are decimal boxes that show no decimals);
    ValueError for 2.5 ("is not a whole number") or a number beyond MAX_SAFE_INTEGER, which a
    browser's box does not hold exactly."""
    if isinstance(value, int) and not isinstance(value, bool):
        number, shown = value, f"{value:,}"
        if abs(value) >= 10**15:  # as a float writes it; beyond the float range, by its digits
            big = abs(value) >= 10**300
            shown = f"an integer of {len(str(abs(value))):,} digits" if big else f"{value:.6g}"
    else:
        number = float(value)
        if not _is_number(number):
            raise ValueError(f"{value!r} is not a number; expected a whole number")
        if not number.is_integer():
            raise ValueError(f"{_shown(number)} is not a whole number; expected a whole number")
        shown = _shown(number)
    if abs(number) > MAX_SAFE_INTEGER:
        raise ValueError(
            f"{shown} is beyond {MAX_SAFE_INTEGER:,}, the largest whole number a box holds "
            "exactly; expected a smaller number"
        )
    return int(number)


def typed_text(value: Any) -> str:
    """A number box's value as the text it is kept as when refused: "2.5", "1e+300", "72"."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def fits_widget(f: FieldInfo, value: Any) -> bool:
    """False when a stored value cannot be shown by the field's own widget (e.g. text in a number
    field from an uploaded file); such a value is shown as text so that it is not lost."""
    if value is None:
        return f.kind not in ("bool", "choice")
    if f.kind in ("float", "int"):
        if f.kind == "float":
            return _is_number(value)
        # an integer box holds what the browser counts exactly; a larger one would come back empty
        return _is_number(value) and float(value).is_integer() and abs(value) <= MAX_SAFE_INTEGER
    if f.kind == "bool":
        return isinstance(value, bool)
    if f.kind == "text":
        return isinstance(value, str)
    if f.kind == "date":
        return to_widget(f, value) is not None
    return True


def parse_numbers(text: str) -> list[float]:
    """'1, 2.5, 3' -> [1.0, 2.5, 3.0]; ValueError naming the part that is not a number."""
    out = []
    for part in re.split(r"[,;\s]+", text.strip()):
        if not part:
            continue
        try:
            out.append(float(part))
        except ValueError:
            raise ValueError(
                f"{part!r} is not a number; expected numbers separated by commas"
            ) from None
    return out


def numbers_text(values) -> str:
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values or ())


def parse_value(text: str) -> Any:
    """A TOML value typed as text (a number, a quoted string, a list); bare words (and lists
    nested deeper than a scenario's fields go, state.MAX_DEPTH) stay text."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):  # (an integer of 4,300+ digits)
        return text
    return text if state.too_deep(value) else value


def toml_of(name: str, value: Any) -> str:
    if value in (None, (), [], {}):
        return ""
    try:
        return tomli_w.dumps({name: state.drop_none(state.plain(value))})
    except (TypeError, ValueError):
        return json.dumps({name: state.plain(value)}, default=str)


def parse_toml_field(name: str, text: str, f: FieldInfo) -> Any:
    """The value of `name` in TOML text; ValueError with the reason when it cannot be read."""
    if not text.strip():
        return None if f.optional else f.default
    try:
        parsed = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    if state.too_deep(parsed):
        raise ValueError(
            f"tables or lists nested more than {state.MAX_DEPTH} levels deep; expected the "
            "field's own tables"
        )
    extra = sorted(set(parsed) - {name})
    if extra:
        raise ValueError(
            f"unexpected key(s) {', '.join(extra)}; expected only {name} (as `{name} = ...` or "
            f"`[[{name}]]` tables)"
        )
    return parsed.get(name, f.default)


# --- rendering --------------------------------------------------------------------------------------


class Form:
    """Widgets bound to the scenario dict in session state.

    prefix : distinguishes copies of one field's widget on one page (sidebar and editor)
    errors : validation messages by dotted path, shown under the widgets they concern
    """

    def __init__(self, prefix: str, errors: dict[str, list[str]] | None = None):
        ss = st.session_state
        self.prefix = prefix
        self.errors = errors or {}
        self.data = ss[state.DATA]
        self.raw = ss.setdefault(state.RAW, {})
        self.version = ss.get(state.VERSION, 0)
        self.shown = state.plain(state.shown().model_dump())

    def key(self, path: str) -> str:
        return f"{self.prefix}.{self.version}.{path}"

    def value(self, f: FieldInfo) -> Any:
        """What the field holds: the user's value, else the last valid scenario's, else default."""
        value = state.get_path(self.data, f.path)
        if value is state.MISSING:
            value = state.get_path(self.shown, f.path)
        if value is state.MISSING:
            value = f.default
        return value

    def help(self, f: FieldInfo) -> str:
        text = f.help or f.label
        if f.scale == 100:
            # the description is the file's, in fractions ("e.g. 0.3 ... [fraction/year]"): a
            # reader typing its example here got 0.3 %
            text += (
                f"\n\nThis box is in {f.unit}: the description's fractions times 100 (0.3 in a "
                "scenario file is 30 here)."
            )
        source = state.shown().sources.get(f.path)
        if source:
            text += f"\n\nSource: {literal(source)}"
        return text + f"\n\nField: `{f.path}`"

    def field_errors(self, f: FieldInfo) -> list[str]:
        out = []
        for path, messages in self.errors.items():
            if path == f.path or (
                f.kind != "section" and path.startswith((f.path + ".", f.path + "["))
            ):
                where = "" if path == f.path else f"{path.removeprefix(f.path)}: "
                out += [where + m for m in messages]
        return out

    def _seed(self, key: str, value: Any) -> None:
        ss = st.session_state
        if key not in ss or ss[key] != value:
            ss[key] = value

    # one widget ---------------------------------------------------------------------------------

    def widget(self, f: FieldInfo, where=None, label: str | None = None) -> None:
        """The field's widget in `where` (a container; default the main area), with its errors."""
        where = where if where is not None else st.container()
        label = label or f.label
        key = self.key(f.path)
        stored = self.value(f)
        args = (key, f.path)
        if f.path in self.raw and f.kind in SCALAR_KINDS:
            text_key = key + ".t"
            self._seed(text_key, self.raw[f.path][0])
            where.text_input(
                label + " (as typed)",
                key=text_key,
                help=self.help(f),
                on_change=_commit_text,
                args=(text_key, f.path),
            )
        elif f.kind in ("float", "int") and fits_widget(f, stored):
            self._seed(key, to_widget(f, stored))
            integer = f.kind == "int"
            # a whole number too in a decimal box: Streamlit's whole-number box reads "1e12" as 1
            where.number_input(
                label,
                value=None,
                step=1.0 if integer else _step(f, stored),
                format="%.0f" if integer else _format(f, stored),
                key=key,
                help=self.help(f),
                placeholder="none" if f.optional else "required",
                on_change=_commit_widget,
                args=args,
            )
            grouped_caption(where, st.session_state.get(key), f.unit, integer)
        elif f.kind == "bool" and fits_widget(f, stored):
            self._seed(key, bool(stored))
            where.toggle(label, key=key, help=self.help(f), on_change=_commit_widget, args=args)
        elif f.kind == "choice" and (stored in f.choices or stored is None):
            options = list(f.choices)
            self._seed(key, stored if stored is not None else None)
            where.selectbox(
                label,
                options,
                index=None,
                key=key,
                format_func=choice_label,
                help=self.help(f),
                placeholder="none",
                on_change=_commit_widget,
                args=args,
            )
        elif f.kind == "date" and fits_widget(f, stored):
            self._seed(key, to_widget(f, stored))
            where.date_input(
                label,
                value=None,
                key=key,
                help=self.help(f),
                on_change=_commit_widget,
                args=args,
            )
        elif f.kind == "text" and fits_widget(f, stored):
            self._seed(key, "" if stored is None else stored)
            where.text_input(label, key=key, help=self.help(f), on_change=_commit_widget, args=args)
        elif f.kind == "numbers":
            # text kept as typed: in this session, or from a link (`state.typed_edits`)
            typed = stored if isinstance(stored, str) else numbers_text(stored)
            self._seed(key, self.raw[f.path][0] if f.path in self.raw else typed)
            where.text_input(
                label + " (numbers separated by commas)",
                key=key,
                help=self.help(f),
                on_change=_commit_text,
                args=args,
            )
        elif f.kind in ("table", "mapping"):
            self.table(f, where, label)
        elif f.kind == "section":
            self.section(f, where)
            return
        elif f.kind == "toml" or f.kind in SCALAR_KINDS:
            self._toml(f, where, label, stored)
        for message in self.field_errors(f):
            where.error(literal(message), icon=":material/error:")
        if f.kind == "float" and f.path not in self.raw:
            base = state.get_path(st.session_state.get(state.BASE, {}), f.path, None)
            hint = fraction_hint(f, stored, base)
            if hint:
                where.warning(hint, icon=":material/percent:")

    def _toml(self, f: FieldInfo, where, label: str, stored: Any) -> None:
        key = self.key(f.path)
        if f.kind in SCALAR_KINDS:  # a value the field's widget cannot show, kept as typed
            text = stored if isinstance(stored, str) else toml_of("v", stored).removeprefix("v = ")
            key += ".t"
            self._seed(key, text.strip())
            where.text_input(
                label + " (as typed)",
                key=key,
                help=self.help(f),
                on_change=_commit_text,
                args=(key, f.path),
            )
            return
        # text kept as typed: in this session, or from a link (`state.typed_edits`)
        typed = stored if isinstance(stored, str) else toml_of(f.name, stored)
        self._seed(key, self.raw[f.path][0] if f.path in self.raw else typed)
        where.text_area(
            label + " (TOML)",
            key=key,
            height=160,
            help=self.help(f)
            + f"\n\nWrite it as TOML, e.g. `{f.name} = ...` or `[[{f.name}]]` tables; empty = none.",
            on_change=_commit_text,
            args=(key, f.path),
        )

    def table(self, f: FieldInfo, where, label: str) -> None:
        """An editable grid for a list of small models (or a table by name)."""
        stored = self.value(f)
        empty: dict | list = {} if f.kind == "mapping" else []
        if stored is not None and not isinstance(stored, type(empty)):
            # a list where a table by name belongs, or the reverse (from a link or a file): the
            # grid starts empty and the value stays as it was until the grid is edited
            expected = "a table of names and values" if f.kind == "mapping" else "a list of rows"
            where.error(
                literal(
                    f"“{path_label(f.path)}” holds a {type(stored).__name__}; expected "
                    f"{expected} (shown as an empty table until it is edited)"
                ),
                icon=":material/error:",
            )
        held = stored if isinstance(stored, type(empty)) else empty
        if f.kind == "mapping":
            rows = [{"name": k, "value": str(v)} for k, v in held.items()]
            columns = {
                "name": st.column_config.TextColumn("Name", required=True),
                "value": st.column_config.TextColumn("Value"),
            }
            frame = pd.DataFrame(rows, columns=["name", "value"]).astype(object)
        else:
            rows = [dict(r) if isinstance(r, dict) else {} for r in held]
            columns = {}
            shown_rows = []
            for row in rows:
                shown_rows.append({c.name: to_widget(c, row.get(c.name)) for c in f.children})
            for c in f.children:
                columns[c.name] = _column(c)
            frame = pd.DataFrame(shown_rows, columns=[c.name for c in f.children])
        digest = hashlib.sha1(
            json.dumps(state.plain(stored), default=str, sort_keys=True).encode()
        ).hexdigest()[:10]
        where.markdown(f"**{label}**", help=self.help(f))
        edited = where.data_editor(
            frame,
            column_config=columns,
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            key=f"{self.key(f.path)}.{digest}",
        )
        problems: list[str] = []
        new = _rows_from_frame(f, edited, problems)
        for problem in problems:
            where.error(literal(problem), icon=":material/error:")
        if new != state.plain(held):
            state.set_path(self.data, f.path, new)
            mark_edited(f.path)
            st.rerun()

    # a section --------------------------------------------------------------------------------

    def section(self, f: FieldInfo, where=None, columns: int = 3) -> None:
        """A sub-section: an on/off switch when optional, then its fields in a grid."""
        where = where if where is not None else st.container()
        if f.optional:
            key = self.key(f.path) + ".on"
            on = self.value(f) is not None
            self._seed(key, on)
            where.toggle(
                f"Use {f.label.lower()}",
                key=key,
                help=self.help(f),
                on_change=_toggle_section,
                args=(key, f.path),
            )
            for message in self.field_errors(f):
                where.error(literal(message), icon=":material/error:")
            if not on:
                return
        else:
            where.markdown(f"**{f.label}**", help=f.help or None)
            for message in self.errors.get(f.path, []):
                where.error(literal(message), icon=":material/error:")
        self.fields(f.children, where, columns)

    def fields(self, fields, where=None, columns: int = 3) -> None:
        """Scalar fields in a grid; fields used by other choices in an expander; the rest below."""
        where = where if where is not None else st.container()
        active, other = [], []
        for f in fields:
            if f.group is not None:
                owner = next((g for g in fields if g.name == f.group[0]), None)
                chosen = str(self.value(owner)).lower() if owner is not None else ""
                if chosen not in f.group[1]:
                    other.append(f)
                    continue
            active.append(f)
        self._grid([f for f in active if f.scalar or f.kind == "numbers"], where, columns)
        for f in active:
            if not (f.scalar or f.kind == "numbers"):
                self.widget(f, where)
        if other:
            owners = sorted({f.group[0] for f in other})
            with where.expander(
                "Fields used only with other choices of " + ", ".join(humanize(o) for o in owners)
            ):
                self._grid(other, st.container(), columns)

    def _grid(self, fields, where, columns: int) -> None:
        if not fields:
            return
        cols = where.columns(columns)
        for i, f in enumerate(fields):
            self.widget(f, cols[i % columns])


GROUPED_FROM = 10_000
"""From this size a number box's value is repeated under it with thousands separators (Streamlit's
number box cannot group digits: "3535600" is hard to read as 3.5 million)."""


def grouped(value: Any, unit: str = "", integer: bool = False) -> str | None:
    """ "3,535,600 USD" for a number of GROUPED_FROM or more, else None; from 10^15 on, where
    a float's last digits are noise, in exponent form ("= 1e+23", not "= 99,999,999,999,999,
    991,611,392")."""
    if not _is_number(value) or abs(value) < GROUPED_FROM:
        return None
    digits = 0 if integer or float(value).is_integer() else 2
    text = f"{value:,.6g}" if abs(value) >= 1e15 else f"{value:,.{digits}f}"
    return f"= {text}" + (f" {unit}" if unit else "")


def grouped_caption(where, value: Any, unit: str = "", integer: bool = False) -> None:
    text = grouped(value, unit, integer)
    if text:
        where.caption(text)


def choice_label(value: Any) -> str:
    """A choice as words: straight_line -> "Straight line", us_gaap -> "US GAAP"."""
    return humanize(value) if isinstance(value, str) else str(value)


def _step(f: FieldInfo, value) -> float:
    if f.scale != 1:
        return 0.5
    magnitude = abs(float(value)) if _is_number(value) and value else abs(_num(f.default) or 1.0)
    return float(10 ** math.floor(math.log10(magnitude) - 1)) if magnitude else 0.1


def _num(value) -> float | None:
    return float(value) if _is_number(value) else None


def _format(f: FieldInfo, value) -> str:
    """printf format as wide as the value shown needs, in the box's unit (a percent field's
    9.125 % as "9.125", not "9.13"), up to 6 decimals and at least 2 below 100: "0.00", "6.00",
    "0.0806", "4867.7"; a whole amount of 100 or more (not a percentage) with none, "3100000"
    (a keyed widget keeps its value when its format changes)."""
    number = _num(value) if _is_number(value) else _num(f.default)
    if number is None or number == 0 or not math.isfinite(number):
        return "%.2f"
    shown = float(number) * f.scale
    if shown.is_integer():
        return "%.0f" if abs(shown) >= 100 and f.scale == 1 else "%.2f"
    text = f"{shown:.10g}"  # 10 digits: 0.09125 x 100 is 9.125000000000002
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 6
    return f"%.{min(max(decimals, 2 if abs(shown) < 100 else 1), 6)}f"


def box_format(f: FieldInfo, value) -> str:
    """The printf format of a number box for the field holding `value`: as many decimals as
    its values need ("%.4f" for a token price of 0.1447, "%.2f" for a percentage)."""
    return _format(f, value)


def _column(c: FieldInfo):
    help_text = c.help or None
    label = c.label
    if c.kind in ("float", "int"):
        return st.column_config.NumberColumn(
            label, help=help_text, step=1 if c.kind == "int" else None, required=not c.optional
        )
    if c.kind == "bool":
        return st.column_config.CheckboxColumn(label, help=help_text)
    if c.kind == "choice":
        return st.column_config.SelectboxColumn(
            label, help=help_text, options=list(c.choices), required=not c.optional
        )
    if c.kind == "date":
        return st.column_config.DateColumn(label, help=help_text)
    return st.column_config.TextColumn(label, help=help_text)


def _clean(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    if hasattr(value, "item"):
        return _clean(value.item())
    return value


def _rows_from_frame(f: FieldInfo, frame: pd.DataFrame, problems: list[str] | None = None):
    """The stored value of a grid: its rows (a table by name for a mapping field). A number cell
    that is not a number (text from a link or a file) is kept as it is, and `problems` gets a
    message naming the field, the row, the column and the value."""
    records = frame.to_dict("records")
    if f.kind == "mapping":
        out = {}
        for r in records:
            name = _clean(r.get("name"))
            if name in (None, ""):
                continue
            value = _clean(r.get("value"))
            value = "" if value is None else str(value)
            out[str(name)] = value if f.text_values else parse_value(value)
        return state.plain(out)
    rows = []
    for i, r in enumerate(records):
        row = {}
        for c in f.children:
            value = _clean(r.get(c.name))
            if value is None or value == "":
                continue
            if c.kind in ("float", "int"):
                try:
                    value = from_widget(c, value)
                except (ValueError, TypeError, OverflowError) as exc:
                    if problems is not None:
                        number = "a whole number" if c.kind == "int" else "a number"
                        said = (  # 2.5 in a whole-number column says so
                            str(exc)
                            if _is_number(value)
                            else f"{shortened(value)} is not a number; expected {number}"
                        )
                        problems.append(f"“{path_label(f.path)}”, row {i + 1}, {c.label}: {said}")
            row[c.name] = value
        if row:
            rows.append(row)
    return state.plain(rows)


# --- callbacks: run before the script, write the widget's value into the scenario dict ----------------


def _field(path: str) -> FieldInfo:
    found = find(path)
    if found is None:  # the scenario models changed under a running session
        raise KeyError(path)
    return found


EDITED = "edited in the app on"


def _described(f: FieldInfo | None, value: Any) -> str:
    if value is None:
        return "none"
    if f is not None and f.kind == "float" and _is_number(value):
        return number_format(to_widget(f, value), digits=12) + (f" {f.unit}" if f.unit else "")
    if f is not None and f.kind == "int" and _is_number(value):
        return f"{value:,}" + (f" {f.unit}" if f.unit else "")
    text = value if isinstance(value, str) else json.dumps(state.plain(value), default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def mark_edited(path: str, how: str = "") -> None:
    """Cite an edit in the scenario's [sources]: "edited in the app on DATE (was: OLD VALUE;
    source: OLD SOURCE)", or with `how` (a page's action and what it took the value from)
    "edited in the app on DATE from the Power and fleet page: ... (was: ...)"; an edit back to
    the base value restores the base's source."""
    ss = st.session_state
    data, base = ss[state.DATA], ss.get(state.BASE, {})
    if path.startswith("sources") or find(path) is None:
        return
    old = state.get_path(base, path, None)
    new = state.get_path(data, path, None)
    base_sources = base.get("sources") if isinstance(base.get("sources"), dict) else {}
    sources = data.get("sources")
    if not isinstance(sources, dict):
        sources = data["sources"] = {}
    original = base_sources.get(path)
    if new == old:
        if original is None:
            sources.pop(path, None)
        else:
            sources[path] = original
    else:
        done = f"{EDITED} {dt.date.today().isoformat()}" + (f" {how}" if how else "")
        sources[path] = cited_change(done, _described(find(path), old), original)
    mark_description(data)


BEFORE_EDITS = "the text before describes the values before these edits."
"""The end of the note that an edited scenario's description gets."""
EDITED_NOTE = re.compile(r"\s*\(?Edited in the app on \d{4}-\d{2}-\d{2}: .*$", re.DOTALL)


def mark_description(data: dict) -> None:
    """The description was written for the base's values: after an edit it says so and names
    the edited fields ("... (Edited in the app on DATE: Utilization › Share [%]; the text before
    describes the values before these edits.)"), from the
    [sources] entries marked as edited; with no edit left, the description is the user's again."""
    if not isinstance(data.get("description", ""), str):
        return
    text = EDITED_NOTE.sub("", data.get("description", ""))
    sources = data.get("sources") if isinstance(data.get("sources"), dict) else {}
    edited = sorted(
        p
        for p, v in sources.items()
        if isinstance(v, str) and v.startswith(EDITED) and p not in ("name", "description")
    )
    if edited:
        fields = ", ".join(path_label(p) for p in edited)
        note = f"Edited in the app on {dt.date.today().isoformat()}: {fields}"
        # apart from the user's text, which describes the values before the edit
        text = f"{text} ({note}; {BEFORE_EDITS})" if text else f"{note}."
    if text or "description" in data:
        data["description"] = text


COMMITS = "econ.commits_this_run"
"""Session key: the scenario and kept text before this run's first widget commit, and the
commits (path, value, emptied) since; `settle_commits` reads and drops it as each run starts."""
BROWSER_RESET = 2
"""Fields emptied by one run's commits from which they are taken for a browser reset, not
edits: a person empties one field per edit (two quick edits sent in one run are undone too, with
the same warning)."""


def _record(path: str, value: Any, cited: bool = True) -> None:
    """Note a widget's commit for `settle_commits` before it is applied: whether it takes the
    field from a value to what a widget holds when drawn anew (None, "" or off)."""
    ss = st.session_state
    data = ss[state.DATA]
    if COMMITS not in ss:
        ss[COMMITS] = (copy.deepcopy(data), copy.deepcopy(ss[state.RAW]), [])
    before = state.get_path(data, path)
    if before is state.MISSING:
        before = getattr(find(path), "default", None)
    ss[COMMITS][2].append((path, value, _blank(value) and not _blank(before), cited))


def _blank(value: Any) -> bool:
    """What a widget drawn anew holds: none, no text, off."""
    return value is None or value is False or (isinstance(value, str) and not value)


def _commit(path: str, value: Any) -> None:
    """Set a field from its widget (a user's edit) and cite the edit."""
    ss = st.session_state
    _record(path, value)
    state.set_path(ss[state.DATA], path, value)
    ss[state.RAW].pop(path, None)
    mark_edited(path)


def settle_commits() -> None:
    """Undo a browser reset, as a run starts (after its widget callbacks).

    Under load, a click that lands while the page is still being drawn can make Streamlit's
    browser side redraw every input from its default, which is empty here (the value comes from
    session state), and send all those empty values back as if the user had cleared every field:
    the whole scenario would be wiped. A person clears one field per edit; where one run's
    commits empty BROWSER_RESET fields or more (toggles turned off count), they are undone (the
    scenario and the kept text as before the run's first commit, then the run's other commits
    applied again) and the inputs are drawn anew from the scenario (a new widget version), with
    a warning.
    """
    ss = st.session_state
    if COMMITS not in ss:
        return
    data, raw, commits = ss.pop(COMMITS)
    emptied = sum(was_emptied for _, _, was_emptied, _ in commits)
    if emptied < BROWSER_RESET:
        return
    ss[state.DATA], ss[state.RAW] = data, raw
    for path, value, was_emptied, cited in commits:
        if not was_emptied:
            state.set_path(data, path, value)
            raw.pop(path, None)
            if cited:
                mark_edited(path)
    ss[state.VERSION] = ss.get(state.VERSION, 0) + 1
    ss[state.BROWSER_RESET] = emptied


def _commit_widget(key: str, path: str) -> None:
    ss = st.session_state
    f = _field(path)
    try:
        value = from_widget(f, ss[key])
    except ValueError as exc:  # 2.5 in a whole-number box: kept as typed, with the reason
        ss[state.RAW][path] = (typed_text(ss[key]), str(exc))
        return
    if f.kind == "text" and value == "" and f.optional:
        value = None
    _commit(path, value)


def _commit_text(key: str, path: str) -> None:
    """Text widgets (lists of numbers, TOML, values kept as typed): parse, or keep the text."""
    ss = st.session_state
    f = _field(path)
    text = ss[key]
    try:
        if f.kind == "numbers":
            value = parse_numbers(text)
        elif f.kind in SCALAR_KINDS:
            value = parse_value(text) if text.strip() else None
            if f.kind in ("float", "int") and not (value is None or _is_number(value)):
                raise ValueError(f"{text!r} is not a number")
            if f.kind in ("float", "int") and value is not None:
                value = from_widget(f, value)
        else:
            value = parse_toml_field(f.name, text, f)
    except ValueError as exc:
        ss[state.RAW][path] = (text, str(exc))
        return
    _commit(path, value)


def _toggle_section(key: str, path: str) -> None:
    ss = st.session_state
    value = {} if ss[key] else None
    _record(path, value, cited=False)
    state.set_path(ss[state.DATA], path, value)
