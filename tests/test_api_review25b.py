"""Defects an outside review of econ as a Python library found in the batch layer (round 25,
econ.batch, econ.analysis.executors, econ.analysis.runner): each test fails on the code before
its fix."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import types
import warnings

import pytest

from econ import load_scenario
from econ.cli import main
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
DIST = {"utilization.share": "uniform(0.5,0.9)"}
CLI_DIST = ["--dist", "utilization.share=uniform(0.5,0.9)"]


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


# --- 1: a batch's repr is one short line ------------------------------------------------------


def test_the_repr_of_a_large_batch_is_one_short_line(base):
    """repr(ScenarioBatch.repeat(base, 100_000)) was 413,642 characters, 400,000 of them the
    row warnings (100,000 empty tuples)."""
    from econ.batch import ScenarioBatch

    batch = ScenarioBatch.repeat(base, 100_000)
    text = repr(batch)
    assert "\n" not in text and len(text) < 300, len(text)
    names = ", ".join(repr(str(name)) for name in batch.names[:3])
    assert text == (
        f"<ScenarioBatch: 100,000 scenarios, 100,000 rows, horizon {base.horizon} months; "
        f"[{names}, ... (99,997 more)]; {len(batch.columns)} columns; "
        "see .names, .columns, .row_warnings>"
    )


def test_the_repr_counts_the_rows_of_vintages_and_spans_the_horizons(base):
    from econ.batch import ScenarioBatch

    refresh = load_scenario(REFRESH)
    one = ScenarioBatch.from_scenarios(refresh)
    rows = 1 + len(refresh.vintages)  # its own fleet and each vintage
    assert rows == 2 and one.rows == rows
    assert repr(one).startswith(
        f"<ScenarioBatch: 1 scenario, 2 rows, horizon {refresh.horizon} months; "
        f"['{refresh.name}']; "
    )
    varied = ScenarioBatch.repeat(base, 3, {"horizon_months": [36, 60, 48]})
    assert ", horizon 36-60 months; " in repr(varied)
    assert "(" not in repr(varied).split("]")[0]  # three names: all shown, none "more"
