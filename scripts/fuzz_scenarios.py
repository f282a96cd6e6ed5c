"""Generated scenarios at the input boundary: each one is refused with an InputError or projects to
strict JSON in which every null metric is named in a warning.

Each case starts from a ready-made scenario and sets one to three fields, drawn from every field of
the scenario models, to a value drawn for its type: ordinary and extreme numbers (0, negative,
1e300, 1e-310, inf, NaN), wrong types, odd strings, hostile paths. Run it directly for the counts
that the input-boundary issue asks for:

    .venv/bin/python scripts/fuzz_scenarios.py --cases 10000

The test suite runs a few hundred cases of the same generator (tests/test_boundary.py).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import traceback
import typing
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from econ.engine import project
from econ.errors import InputError
from econ.export import make_stamp, projection_json
from econ.scenario import Scenario, apply_overrides, read_toml, validate_dict

ROOT = Path(__file__).resolve().parents[1]
BASES = sorted((ROOT / "models" / "scenarios").glob("*.toml"))

NUMBERS = (0, 1, -1, 0.5, 2, 12, 1e-12, -1e-12, 1e-310, 1e300, -1e300, 1e18, 0.999999999,
           -0.999999999, 72, 600, 100000, float("inf"), float("-inf"), float("nan"))
ODD = ("", " ", "x", "/etc/passwd", "../../../../etc/shadow", "a\x00b", "=1+1", "\ufeffname",
       "straight_line", "nominal", "2026-01-01", True, False, [], {}, [1, 2], {"a": 1})


def leaf_fields(model: type[BaseModel] = Scenario, prefix: str = "") -> list[tuple[str, object]]:
    """(dotted path, annotation) of every field that holds a value rather than a section."""
    out = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        nested = _model_of(info.annotation)
        if nested is not None and typing.get_origin(info.annotation) not in (tuple, list, dict):
            out += leaf_fields(nested, path + ".")
        else:
            out.append((path, info.annotation))
    return out


def _model_of(annotation):
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def draw_value(rng: random.Random, annotation) -> object:
    """A value for a field: mostly of its own type, extreme or not, sometimes of another."""
    text = str(annotation)
    if rng.random() < 0.2:
        return rng.choice(ODD)
    if "Literal" in text:
        choices = [a for a in typing.get_args(annotation) if isinstance(a, str)] or ["x"]
        return rng.choice([*choices, "no-such-choice"])
    if "bool" in text and "float" not in text and "int" not in text:
        return rng.choice([True, False, 0, "yes"])
    if "float" in text or "int" in text:
        value = rng.choice(NUMBERS)
        if rng.random() < 0.3 and math.isfinite(value):
            value *= rng.uniform(0.1, 10)
        return value
    if "date" in text:
        return rng.choice(["2026-01-01", "1900-01-01", "9999-12-31", "not a date", 5])
    return rng.choice(ODD)


def one_case(rng: random.Random, fields, bases) -> tuple[str, dict]:
    """A scenario (as plain data) with one to three fields changed, and its description."""
    base_path = rng.choice(bases)
    data = read_toml(base_path)
    changes = {}
    given = [(p, a) for p, a in fields if _get(data, p) is not None]
    for _ in range(rng.randint(1, 3)):
        # Mostly fields the scenario gives, where real edits happen; sometimes any field.
        path, annotation = rng.choice(given if given and rng.random() < 0.7 else fields)
        current = _get(data, path)
        if isinstance(current, int | float) and not isinstance(current, bool) and rng.random() < 0.5:
            # Near the scenario's own value, where most real edits are.
            changes[path] = current * rng.choice((0, 0.5, 0.9, 1.1, 2, 10, -1, 1e6))
        else:
            changes[path] = draw_value(rng, annotation)
    return f"{base_path.name} {changes!r}", {"data": data, "changes": changes}


def _get(data: dict, path: str):
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def check(case: dict) -> str:
    """'refused', 'projected', or a description of the contract it broke."""
    try:
        data = apply_overrides(case["data"], case["changes"], file="case.toml")
        scenario = validate_dict(data, file="case.toml")
    except InputError:
        return "refused"
    try:
        projection = project(scenario)
        text = projection_json(projection, make_stamp(projection, [scenario]))
    except InputError:
        return "refused"
    try:
        payload = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        return f"non-strict JSON: {exc}"
    for record in payload["scenarios"]:
        summary = record["summary"]
        said = " ".join(summary["warnings"])
        nulls = [k for k, v in summary.items() if v is None and k not in said]
        nulls += [
            f"cost_usd_per_mtok_by_component.{c}"
            for c, v in summary["cost_usd_per_mtok_by_component"].items()
            if v is None and "cost_usd_per_mtok_by_component" not in said
            and "lcot_usd_per_mtok and its components" not in said
        ]
        if nulls:
            return f"unexplained nulls: {', '.join(nulls)}"
    return "projected"


def _no_constant(name: str):
    raise ValueError(f"{name} token")


def run(cases: int, seed: int = 0) -> tuple[Counter, list[str]]:
    """Counts of outcomes over `cases` generated scenarios, and the first failures in full."""
    rng = random.Random(seed)
    fields = leaf_fields()
    counts: Counter = Counter()
    failures: list[str] = []
    for _ in range(cases):
        label, case = one_case(rng, fields, BASES)
        try:
            outcome = check(case)
        except Exception:  # noqa: BLE001 - an escaped exception is what this harness counts
            outcome = "escaped exception"
            failures.append(f"{label}\n{traceback.format_exc()}")
        else:
            if outcome not in ("refused", "projected"):
                failures.append(f"{label}: {outcome}")
                outcome = outcome.split(":")[0]
        counts[outcome] += 1
    return counts, failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts, failures = run(args.cases, args.seed)
    for outcome, n in sorted(counts.items()):
        print(f"{outcome}: {n}")
    for failure in failures[:20]:
        print("---\n" + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
