"""What a script reading econ's outputs relies on: reproducible stamps, fixed column types,
warnings beside machine-readable output, provenance, JSON types and number text.

The commands run in-process through `econ.cli.main`, as in tests/test_cli.py.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from econ.cli import main
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
STACK = SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process: a CompletedProcess-like result with the exit code."""

    def call(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["econ", *args], code, out, err)

    return call


# --- batch metadata: the creation time of every other output ----------------------------------


BATCH_RUNS = {
    "sweep": ("sweep", SEED, "--grid", "utilization.share=0.5,0.9"),
    "montecarlo": ("montecarlo", SEED, "-n", "8", "--dist", "utilization.share=uniform(0.5,0.9)"),
    "sensitivity": ("sensitivity", SEED, "--range", "utilization.share=0.5,0.9"),
}


@pytest.mark.parametrize("kind", sorted(BATCH_RUNS))
def test_batch_metadata_reproduces_with_source_date_epoch(kind, run, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    outputs = []
    for k in (1, 2):
        printed = run(*BATCH_RUNS[kind], "--format", "json")
        assert printed.returncode == 0, printed.stderr
        written = run(*BATCH_RUNS[kind], "--out", tmp_path / f"rows{k}.csv")
        assert written.returncode == 0, written.stderr
        outputs.append((printed.stdout, (tmp_path / f"rows{k}.meta.json").read_bytes()))
    assert outputs[0] == outputs[1]
    metadata = json.loads(outputs[0][1])
    assert metadata["created_utc"] == "2026-01-01T00:00:00Z"
    assert "created" not in metadata
    assert json.loads(outputs[0][0])["metadata"]["created_utc"] == "2026-01-01T00:00:00Z"
