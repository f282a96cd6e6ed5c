"""Where the data the product ships lives (models/), and the ready-made scenarios in it."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_SCENARIO = "deepseek-r1-gb200-nvl72"


def models_dir() -> Path:
    """The models/ folder: $ECON_MODELS_DIR, else the one beside the econ package."""
    override = os.environ.get("ECON_MODELS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[1] / "models"


def ready_made_scenarios() -> dict[str, Path]:
    """Name (file stem) -> path of each ready-made scenario, sorted by name."""
    return {p.stem: p for p in sorted((models_dir() / "scenarios").glob("*.toml"))}
