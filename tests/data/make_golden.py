"""Record the summaries of the ready-made scenarios as golden files for tests/test_engine.py, and
the warnings of batches of them with varied inputs for tests/test_warning_texts.py.

Run after an intended change to the engine or to models/scenarios, then review the diff:
    .venv/bin/python tests/data/make_golden.py
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from econ import load_scenario, project  # noqa: E402
from tests.test_warning_texts import GOLDEN, recorded, warnings_of_batches  # noqa: E402

for path in sorted((ROOT / "models" / "scenarios").glob("*.toml")):
    summary = project(load_scenario(path)).summary_records()[0]["summary"]
    target = ROOT / "tests" / "data" / "golden" / f"{path.stem}.json"
    target.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(f"wrote {target.relative_to(ROOT)}")

GOLDEN.write_text(json.dumps(recorded(warnings_of_batches()), indent=1) + "\n")
print(f"wrote {GOLDEN.relative_to(ROOT)}")
