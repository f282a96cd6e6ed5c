"""Differences between two scenario versions: inputs by dotted field path with their units, and
the change of every summary metric.

Inputs are compared as validated scenarios (defaults filled in), so spelling out a default or
reordering a file is no change. A field's unit is the bracketed end of its pydantic description
("GPUs bought at month 0 [GPUs]" -> "GPUs"); fields without one have unit null.
"""

from __future__ import annotations

import math
import re
import typing
from typing import Any

from pydantic import BaseModel

from econ.labels import bracketed
from econ.scenario import Scenario

METRIC_TOLERANCE = 1e-9
"""Relative change of a metric below which `differs` counts it as none: floating-point noise of
two projections (min_dscr 1.3 and 1.3 - 7.1e-15), never an input change, which is exact."""


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


def unit_of(path: str, scenario: Scenario | None = None) -> str | None:
    """The unit of a dotted field path from the field's description, or None.

    With `scenario`, the path is followed through its values, so a field of a capital-stack
    tranche takes the description of that tranche's own type; without it, through the models
    (the first model of a union that has the field). A vintage's sections are plain tables whose
    fields are the scenario's own: vintages[i].fleet.gpu_count has fleet.gpu_count's unit."""
    vintage = re.match(
        r"^vintages\[\d+\]\.(fleet|capex|throughput|depreciation|power)\.(.+)$", path
    )
    if vintage:
        return unit_of(f"{vintage.group(1)}.{vintage.group(2)}")
    candidates: list[type[BaseModel]] = [Scenario]
    node: Any = scenario
    description = None
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            node = node[int(part[1:-1])] if isinstance(node, tuple | list) else None
            continue
        if isinstance(node, BaseModel):
            candidates = [type(node)]
        model = next((m for m in candidates if part in m.model_fields), None)
        if model is None:
            return None
        info = model.model_fields[part]
        description = info.description
        candidates = _models_in(info.annotation)
        node = getattr(node, part, None)
    # The unit is the last bracketed word that is not a [section] of the scenario file.
    units = [u for u in bracketed(description) if u not in Scenario.model_fields]
    return units[-1] if units else None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def input_changes(old: Scenario, new: Scenario) -> list[dict[str, Any]]:
    """[{path, old, new, unit}] for every field whose value differs (absent: null), by path."""
    a, b = flatten(old.model_dump(mode="json")), flatten(new.model_dump(mode="json"))
    paths = sorted(set(a) | set(b))
    return [
        {"path": p, "old": a.get(p), "new": b.get(p), "unit": unit_of(p, new if p in b else old)}
        for p in paths
        if a.get(p) != b.get(p)
    ]


def metric_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{metric: {old, new, change}} for every numeric summary metric; change = new - old, null
    when either is null, and null for a metric whose value is a category's code
    (econ.engine.CODED_METRICS: a difference of two codes is no quantity). Component costs appear
    as cost_usd_per_mtok_by_component.<name>."""
    a, b = flatten(_numbers(old)), flatten(_numbers(new))
    out = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        change = None if x is None or y is None or is_coded(key) else y - x
        out[key] = {"old": x, "new": y, "change": change}
    return out


def is_coded(metric: str) -> bool:
    """Whether a summary metric's value is a category's code (econ.engine.CODED_METRICS)."""
    from econ.engine import CODED_METRICS

    return metric in CODED_METRICS


def differs(metric: str, change: dict[str, Any]) -> bool:
    """Whether a metric of `metric_changes` changed: a code that is another code, a quantity
    whose change is more than METRIC_TOLERANCE of the larger of old and new (in magnitude), or
    one that is null (undefined) on one side only; null on both sides is no change."""
    if is_coded(metric) or change["change"] is None:
        return change["old"] != change["new"]
    return not math.isclose(change["old"], change["new"], rel_tol=METRIC_TOLERANCE, abs_tol=0.0)


def code_name(metric: str, value: Any) -> str:
    """A coded metric's value with its category's name: '3 (ltv)'; the value alone when it is
    no code of the metric."""
    from econ.engine import CODED_METRICS

    names = CODED_METRICS.get(metric, ())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return f"{value} ({names[value]})"
    return "null" if value is None else str(value)


def _numbers(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "warnings" and not isinstance(v, str | list)}
