"""Record the summaries of the ready-made scenarios as golden files for tests/test_engine.py.

Run after an intended change to the engine or to models/scenarios, then review the diff:
    .venv/bin/python tests/data/make_golden.py
"""

import json
from pathlib import Path

from econ import load_scenario, project

ROOT = Path(__file__).resolve().parents[2]

for path in sorted((ROOT / "models" / "scenarios").glob("*.toml")):
    summary = project(load_scenario(path)).summary_records()[0]["summary"]
    target = ROOT / "tests" / "data" / "golden" / f"{path.stem}.json"
    target.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(f"wrote {target.relative_to(ROOT)}")
