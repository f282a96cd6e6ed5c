"""Throughput importers and the benchmark catalog: defects an outside infrastructure review found
(review 24). Unit-less TTFT and TPOT columns decided together (a TTFT of 0.5 s read as 0.5 ms); an
MLPerf Offline curve said to be "at the SLO"; Arc Pro B60 Dual boards counted as one GPU each;
duplicate LoadGen figures read silently; `throughput point` errors without the file; NaN
latencies taken as absent; `--gpus` checked as data; MLPerf's inferred flag over-explained; a
multi-configuration file that could not be narrowed. Real samples are read where they lie
(../shared/data/samples); edited copies and small files are written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from econ.cli import main
from econ.throughput.importers import CurveError, import_file
from econ.throughput.operating_point import operating_point
from tests.conftest import SHARED_DATA

SAMPLES = SHARED_DATA / "samples"

# --- 1. unit-less latency columns: a unit per column ------------------------------------------

MIXED_UNITS = (
    "concurrency,output_tokens_per_s,gpu_count,ttft_p99,tpot_p99\n"
    "1,100,8,0.5,20\n4,300,8,0.9,30\n16,800,8,2.0,60\n"
)


def test_unitless_ttft_in_seconds_beside_tpot_in_ms_is_read_per_column(tmp_path: Path):
    path = tmp_path / "g1.csv"
    path.write_text(MIXED_UNITS)
    curve = import_file(path)
    # TTFT 0.5 is plausible only as seconds (0.5 ms is below any served LLM's first token);
    # TPOT 60 only as milliseconds (60 s per token is beyond 30 s, and Little's law)
    assert curve.points["ttft_s_p99"].tolist() == [0.5, 0.9, 2.0]
    assert curve.points["tpot_s_p99"].tolist() == pytest.approx([0.020, 0.030, 0.060])
    assert any("'ttft_p99' has no unit" in w and "read as s." in w for w in curve.warnings)
    assert any("'tpot_p99' has no unit" in w and "read as ms." in w for w in curve.warnings)
    assert "s and ms (detected per column" in curve.provenance["latency_unit"]


def test_a_ttft_limit_excludes_the_point_above_it_when_the_unit_was_detected(tmp_path: Path):
    path = tmp_path / "g1.csv"
    path.write_text(MIXED_UNITS)
    point = operating_point(import_file(path), ttft_p99_s=1.0)
    # no per-user speed: no frontier; the best measured point within TTFT p99 1 s is the 0.9 s
    # one, 300 tokens/s over 8 GPUs (the 2.0 s point, 100 per GPU, breaks the limit)
    assert point.tokens_per_s_per_gpu == pytest.approx(300 / 8)


def test_the_same_ttft_column_alone_is_read_as_seconds_too(tmp_path: Path):
    path = tmp_path / "g2.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count,ttft_p99\n1,100,8,0.5\n")
    assert import_file(path).points["ttft_s_p99"].tolist() == [0.5]
