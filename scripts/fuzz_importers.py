"""Seeded mutation harness for the benchmark-file importers (issue 15).

Mutates copies of every real sample in ../shared/data/samples (numbers replaced by huge, negative,
NaN, infinite or non-numeric values; keys and lines dropped; truncation; nesting; a file read as
another tool's format; absurd --gpus values) and imports each copy. Every import must either raise
an `InputError` (a clear refusal) or return a curve whose values are finite and plausible; any
other exception "escapes". Prints the counts; exit status 1 when anything escaped or an absurd
value was accepted.

    python scripts/fuzz_importers.py --mutations 1000 --seed 0
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from econ.errors import InputError  # noqa: E402
from econ.throughput.curve import CURVE_COLUMNS, NUMERIC_OPTIONAL_COLUMNS  # noqa: E402
from econ.throughput.importers import FORMATS, import_file  # noqa: E402
from econ.throughput.importers._common import (  # noqa: E402
    MAX_GPU_COUNT,
    MAX_LATENCY_S,
    ceiling_for,
)

SAMPLES = ROOT.parent / "shared" / "data" / "samples"
BAD_VALUES: tuple = (
    1e15, 1e18, 1e300, -1.0, -1e-300, 1e-300, 0, float("nan"), float("inf"), float("-inf"),
    "abc", "8,2", "many", True, False, None, [], {}, [1.0, 2.0], 10**400, "", "1e999",
)  # fmt: skip
BAD_TEXT = ("1e15", "1e300", "-5", "nan", "inf", "abc", "8,2", "1e-300", "0", "")
BAD_GPUS = (None, None, None, 1e-300, 2.5, 0.0, -8.0, float("nan"), 1e12, 8.0)


def sample_files(root: Path = SAMPLES) -> list[Path]:
    """Every sample file (documentation and licences excluded), in a stable order."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix.lower() != ".md" and p.name != "LICENSE.md"
    )


def _leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))
    else:
        yield path, node


def _containers(node, path=()):
    if isinstance(node, dict | list):
        yield path, node
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            yield from _containers(value, (*path, key))


def _get(node, path):
    for key in path:
        node = node[key]
    return node


def _load_json(text: str):
    try:
        return json.loads(text), False
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()], True
    except (json.JSONDecodeError, RecursionError):
        return None, False


def _dump_json(data, lines: bool) -> str:
    if lines and isinstance(data, list):
        return "\n".join(json.dumps(item) for item in data) + "\n"
    return json.dumps(data, indent=1)


def mutate_json(text: str, rng: random.Random) -> tuple[str, str]:
    data, lines = _load_json(text)
    if data is None:
        return mutate_text(text, rng)
    kind = rng.choice(
        ["number", "number", "number", "any-leaf", "drop", "nest", "wrap-value", "deep", "swap"]
    )
    leaves = list(_leaves(data))
    numeric = [(p, v) for p, v in leaves if isinstance(v, int | float) and not isinstance(v, bool)]
    if kind in ("number", "any-leaf") and (numeric or leaves):
        path, _ = rng.choice(numeric if kind == "number" and numeric else leaves)
        if not path:
            return _dump_json(rng.choice(BAD_VALUES), False), "json: whole document replaced"
        value = rng.choice(BAD_VALUES)
        _get(data, path[:-1])[path[-1]] = value
        return _dump_json(data, lines), f"json: {'/'.join(map(str, path))} = {value!r:.30}"
    if kind == "drop":
        dicts = [(p, c) for p, c in _containers(data) if isinstance(c, dict) and c]
        if dicts:
            path, container = rng.choice(dicts)
            key = rng.choice(list(container))
            del container[key]
            return _dump_json(data, lines), f"json: dropped {'/'.join(map(str, (*path, key)))}"
    if kind == "nest":
        return _dump_json(rng.choice([{"data": data}, [data], {"results": [data]}]), False), (
            "json: nested one level down"
        )
    if kind == "wrap-value" and leaves:
        path, value = rng.choice(leaves)
        if path:
            _get(data, path[:-1])[path[-1]] = rng.choice([[value], {"value": value}])
            return _dump_json(data, lines), f"json: {'/'.join(map(str, path))} wrapped"
    if kind == "deep":
        depth = rng.choice([200, 5000])
        return "[" * depth + "1" + "]" * depth, f"json: nested {depth} deep"
    if kind == "swap" and numeric:
        path, _ = rng.choice(numeric)
        _get(data, path[:-1])[path[-1]] = str(_get(data, path))
        return _dump_json(data, lines), f"json: {'/'.join(map(str, path))} as a string"
    return mutate_text(text, rng)


NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["number", "number", "number", "drop-line", "truncate", "duplicate", "junk"])
    lines = text.splitlines(keepends=True)
    if kind == "number":
        matches = list(NUMBER.finditer(text))
        if matches:
            m = rng.choice(matches)
            value = rng.choice(BAD_TEXT)
            return text[: m.start()] + value + text[
                m.end() :
            ], f"text: number at {m.start()} = {value!r}"
    if kind == "drop-line" and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[:i] + lines[i + 1 :]), f"text: dropped line {i + 1}"
    if kind == "duplicate" and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[: i + 1] + lines[i:]), f"text: duplicated line {i + 1}"
    if kind == "junk" and lines:
        i = rng.randrange(len(lines))
        junk = rng.choice(["\x00\x01", "key : value : more\n", "= SECTION\n", ",,,,\n", "\ufeff"])
        return "".join(lines[:i] + [junk] + lines[i:]), f"text: junk before line {i + 1}"
    cut = rng.randrange(1, max(2, len(text)))
    return text[:cut], f"text: truncated at {cut} of {len(text)} characters"


def mutate(path: Path, rng: random.Random) -> tuple[str, str, str, float | None]:
    """(mutated text, what was done, format to force or "auto", --gpus value)."""
    text = path.read_text(encoding="utf-8-sig")
    stripped = text.lstrip()
    if rng.random() < 0.12:
        return text, "read as another tool's format", rng.choice(list(FORMATS)), None
    gpus = rng.choice(BAD_GPUS)
    if stripped.startswith(("{", "[")) and not stripped.startswith("[TensorRT"):
        mutated, what = mutate_json(text, rng)
    else:
        mutated, what = mutate_text(text, rng)
    return mutated, what, "auto", gpus


@dataclass
class Report:
    imports: int = 0
    refused: int = 0
    accepted: int = 0
    escaped: list[str] = field(default_factory=list)
    absurd: list[str] = field(default_factory=list)
    refusals: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        return (
            f"mutated imports: {self.imports}; refused with InputError: {self.refused}; "
            f"accepted: {self.accepted}; escaped exceptions: {len(self.escaped)}; "
            f"accepted absurd values: {len(self.absurd)}"
        )


def absurd_values(curve) -> list[str]:
    """What in an accepted curve is not a plausible measurement (empty when all is well)."""
    problems = []
    points = curve.points
    for column in CURVE_COLUMNS + NUMERIC_OPTIONAL_COLUMNS:
        values = points[column].to_numpy(dtype=float)
        infinite = np.isinf(values) & (column != "request_rate_per_s")
        if infinite.any():
            problems.append(f"{column} infinite")
        if (values < 0).any():
            problems.append(f"{column} negative")
        if column.startswith(("ttft_s", "tpot_s", "e2e_s")) and (values > MAX_LATENCY_S).any():
            problems.append(f"{column} above {MAX_LATENCY_S:g} s")
    for metric in ("ttft_s", "tpot_s"):
        stats = points[[f"{metric}_{q}" for q in ("p50", "p90", "p95", "p99")]].to_numpy(float)
        for row in stats:
            known_stats = row[~np.isnan(row)]
            if (np.diff(known_stats) < -1e-6 * np.abs(known_stats[1:])).any():
                problems.append(f"{metric} percentiles out of order {known_stats.tolist()}")
    if (points["tokens_per_s_per_user"].to_numpy(dtype=float) > 1e6).any():
        problems.append("tokens_per_s_per_user above 1e6")
    gpus = points["gpu_count"].to_numpy(dtype=float)
    known = gpus[~np.isnan(gpus)]
    if ((known < 1) | (known > MAX_GPU_COUNT) | (known != np.round(known))).any():
        problems.append(f"gpu_count {known.tolist()}")
    for _, point in points.iterrows():
        ceiling, _ = ceiling_for(str(point["hardware"]), str(point["model"]))
        if point["output_tokens_per_s_per_gpu"] > ceiling:
            problems.append(f"output_tokens_per_s_per_gpu {point['output_tokens_per_s_per_gpu']:g}")
        if point["completed_requests"] < 1:
            problems.append(f"completed_requests {point['completed_requests']:g}")
        if math.isnan(point["output_tokens_per_s"]) and math.isnan(
            point["output_tokens_per_s_per_gpu"]
        ):
            problems.append("no output throughput")
    return problems


def run(mutations: int, seed: int = 0, samples: list[Path] | None = None) -> Report:
    """Import `mutations` mutated copies of the samples (round robin, seeded)."""
    rng = random.Random(seed)
    files = samples if samples is not None else sample_files()
    report = Report()
    with tempfile.TemporaryDirectory(prefix="fuzz-importers-") as tmp:
        for i in range(mutations):
            source = files[i % len(files)]
            text, what, fmt, gpus = mutate(source, rng)
            folder = Path(tmp) / f"{i:05d}"
            folder.mkdir()
            target = folder / source.name
            target.write_text(text, encoding="utf-8", errors="surrogatepass")
            label = f"{source.relative_to(SAMPLES) if SAMPLES in source.parents else source.name}: {what} (format {fmt}, gpus {gpus})"
            report.imports += 1
            try:
                curve = import_file(target, fmt=fmt, gpu_count=gpus)
            except InputError as exc:
                report.refused += 1
                report.refusals[type(exc).__name__] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - the harness counts what escapes
                last = traceback.extract_tb(exc.__traceback__)[-1]
                report.escaped.append(
                    f"{label}: {type(exc).__name__}: {str(exc)[:120]} at {last.filename}:{last.lineno}"
                )
                continue
            report.accepted += 1
            problems = absurd_values(curve)
            if problems:
                report.absurd.append(f"{label}: {'; '.join(problems)}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    report = run(args.mutations, args.seed)
    print(f"samples: {len(sample_files())} files in {SAMPLES}")
    print(report.summary())
    print(
        "refusals by error class: "
        + ", ".join(f"{k} {v}" for k, v in report.refusals.most_common())
    )
    for line in report.escaped[:20]:
        print(f"ESCAPED  {line}")
    for line in report.absurd[:20]:
        print(f"ABSURD   {line}")
    return 1 if report.escaped or report.absurd else 0


if __name__ == "__main__":
    raise SystemExit(main())
