"""Differences between two scenario versions: inputs by dotted field path with their units, and
the change of every summary metric.

Inputs are compared as validated scenarios (defaults filled in), so spelling out a default or
reordering a file is no change. A field's unit is the bracketed end of its pydantic description
("GPUs bought at month 0 [GPUs]" -> "GPUs"); fields without one have unit null.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel

from econ.scenario import Scenario

_UNIT = re.compile(r"\[([^\[\]]+)\]\s*$")


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of nested dicts and lists by dotted path: a.b, a.list[0].c. Empty ones stay whole."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def unit_of(path: str) -> str | None:
    """The unit of a dotted field path from the field's description, or None."""
    model: type[BaseModel] | None = Scenario
    description = None
    for part in re.sub(r"\[\d+\]", "", path).split("."):
        if model is None or part not in model.model_fields:
            return None
        info = model.model_fields[part]
        description = info.description
        model = _model_in(info.annotation)
    match = _UNIT.search(description or "")
    return match.group(1) if match else None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def input_changes(old: Scenario, new: Scenario) -> list[dict[str, Any]]:
    """[{path, old, new, unit}] for every field whose value differs (absent: null), by path."""
    a, b = flatten(old.model_dump(mode="json")), flatten(new.model_dump(mode="json"))
    paths = sorted(set(a) | set(b))
    return [
        {"path": p, "old": a.get(p), "new": b.get(p), "unit": unit_of(p)}
        for p in paths
        if a.get(p) != b.get(p)
    ]


def metric_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{metric: {old, new, change}} for every numeric summary metric; change = new - old, null
    when either is null. Component costs appear as cost_usd_per_mtok_by_component.<name>."""
    a, b = flatten(_numbers(old)), flatten(_numbers(new))
    out = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        change = None if x is None or y is None else y - x
        out[key] = {"old": x, "new": y, "change": change}
    return out


def _numbers(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "warnings" and not isinstance(v, str | list)}
