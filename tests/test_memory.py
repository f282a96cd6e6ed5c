"""The allocator settings for large batches: applied once, switchable off, results unchanged."""

import subprocess
import sys

import numpy as np

from econ import memory


def _run(code: str, **env) -> str:
    import os

    full = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full, check=True
    ).stdout.strip()


def test_applied_on_glibc_and_once():
    out = _run("from econ import memory; print(memory.keep_freed_memory(), memory._done)")
    assert out == "True True"  # this project's machines run glibc (Debian)


def test_switched_off_by_environment():
    out = _run(
        "from econ import memory; print(memory.keep_freed_memory())", ECON_KEEP_FREED_MEMORY="0"
    )
    assert out == "False"


def test_large_projection_turns_it_on_and_matches_small_chunks(monkeypatch):
    from econ import ScenarioBatch, engine, project
    from econ.scenario import validate_dict

    base = validate_dict({"name": "m", "throughput": {"tokens_per_s_per_gpu": 3000.0}})
    prices = np.linspace(0.2, 2.0, engine.KEEP_MEMORY_FROM_SCENARIOS)
    batch = ScenarioBatch.repeat(base, prices.size, {"market.price_usd_per_mtok": prices})
    monkeypatch.setattr(memory, "_done", None)
    whole = project(batch, monthly=False)
    assert memory._done is not None
    monkeypatch.setattr(engine, "CHUNK_SCENARIOS", 100)
    chunked = project(batch, monthly=False)
    np.testing.assert_array_equal(whole.metrics["npv_usd"], chunked.metrics["npv_usd"])
