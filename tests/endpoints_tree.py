"""Writes the MLPerf Endpoints synthetic submission tree (tests/data/mlperf_endpoints) to a folder.

The MLCommons case file keeps per-file `defaults`, per-point overrides (`points`) and other files
(`files`); a point's file is its defaults with the overrides merged in, mappings key by key, as the
partial tree in ../shared/data/samples/mlperf-endpoints/synthetic-submission shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import ROOT

CASES = ROOT / "tests" / "data" / "mlperf_endpoints" / "cases-sub_a.yaml"


def merged(base, override):
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = merged(base.get(key), value) if key in base else value
        return out
    return override


def write_file(path: Path, content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(content, indent=2), encoding="utf-8")
    elif path.suffix in (".yaml", ".yml"):
        path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    else:
        path.write_text(str(content), encoding="utf-8")


def cases() -> dict:
    return yaml.safe_load(CASES.read_text(encoding="utf-8"))


def build_submission(dest: Path) -> Path:
    """The sub_a tree under `dest`; returns `dest` (which then holds results/)."""
    case = cases()
    for name, content in case["files"].items():
        write_file(dest / name, content)
    for folder, files in case["points"].items():
        for name in set(case["defaults"]) | set(files):
            content = merged(case["defaults"].get(name, {}), files.get(name, {}))
            write_file(dest / folder / name, content)
    return dest
