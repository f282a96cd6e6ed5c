"""Shared fixtures: paths of the repository, its ready-made scenarios and ../shared data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "models" / "scenarios").glob("*.toml"))
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data folder {SHARED_DATA} is absent")
    return SHARED_DATA
