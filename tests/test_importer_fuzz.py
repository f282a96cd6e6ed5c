"""Mutated copies of every real sample (issue 15): each import either raises an InputError or
returns a curve with finite, plausible values; no other exception escapes. The full run of at
least 1,000 mutations is `python scripts/fuzz_importers.py`; the suite runs a seeded 200."""

from __future__ import annotations

import importlib.util
import json
import random
import sys

import pytest

from tests.conftest import ROOT, SHARED_DATA, needs_shared_data

SPEC = importlib.util.spec_from_file_location(
    "fuzz_importers", ROOT / "scripts" / "fuzz_importers.py"
)
fuzz = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = fuzz  # dataclasses look their module up by name
SPEC.loader.exec_module(fuzz)


@needs_shared_data
def test_every_sample_is_mutated():
    files = fuzz.sample_files(SHARED_DATA / "samples")
    assert len(files) >= 30
    assert {p.parent.name for p in files} >= {"vllm", "sglang", "mlperf", "trtllm-bench", "aiperf"}


@needs_shared_data
def test_two_hundred_mutations_escape_nothing_and_accept_nothing_absurd():
    report = fuzz.run(200, seed=15, samples=fuzz.sample_files(SHARED_DATA / "samples"))
    assert report.imports == 200
    assert report.escaped == []
    assert report.absurd == []
    # the harness must exercise both outcomes, or it proves nothing
    assert report.refused > 50 and report.accepted > 10


@needs_shared_data
def test_mutations_are_seeded():
    path = SHARED_DATA / "samples" / "vllm" / "er0080-vllm-bench-sweep-v0.25.1-opt125m-run0.json"
    first = [fuzz.mutate(path, rng) for rng in [random.Random(3)] for _ in range(5)]
    again = [fuzz.mutate(path, rng) for rng in [random.Random(3)] for _ in range(5)]
    assert first == again
    assert len({m[1] for m in first}) > 1  # different mutations, not one repeated


def test_the_absurdity_check_can_fail(tmp_path):
    """An accepted curve with an absurd value is reported (the check is not vacuous)."""
    from econ.throughput.importers import import_file

    record = json.loads(
        (ROOT / "tests" / "data" / "throughput" / "vllm_bench_serve_sweep.jsonl")
        .read_text()
        .splitlines()[0]
    )
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    curve = import_file(path)
    assert fuzz.absurd_values(curve) == []
    curve.points.loc[0, "output_tokens_per_s_per_gpu"] = 1e15
    curve.points.loc[0, "gpu_count"] = 2.5
    curve.points.loc[0, "ttft_s_p99"] = curve.points.loc[0, "ttft_s_p50"] / 2
    problems = fuzz.absurd_values(curve)
    assert any("output_tokens_per_s_per_gpu" in p for p in problems)
    assert any("gpu_count" in p for p in problems)
    assert any("ttft_s percentiles out of order" in p for p in problems)


@pytest.mark.parametrize("depth", [5000])
def test_deeply_nested_json_is_an_input_error(tmp_path, depth):
    from econ.throughput.importers import CurveError, import_file

    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "1" + "]" * depth)
    with pytest.raises(CurveError, match="nested too deeply"):
        import_file(path)
