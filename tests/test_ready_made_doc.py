"""docs/ready_made.md's headline table says what the engine prints now.

The "after" side of each cell (right of the arrow) is compared with `econ project` of that ready-made
scenario at the rounding the table shows, so the page cannot drift from the code unnoticed (it did
once: the capital stack's equity IRR read 6.7% where the engine gave 436.4%).
"""

from __future__ import annotations

import math
import re

import pytest

from econ import load_scenario, project
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "ready_made.md"
COLUMNS = (
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    "debt_usd",
    "cost_usd_per_gpu_hour",
)


def _rows() -> dict[str, list[str]]:
    text = PAGE.read_text()
    table = text[text.index("| scenario | NPV [USD]"):].split("\n\n")[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = re.match(r"`([^`]+)`", cells[0]).group(1)
        rows[name] = [c.split("→")[-1].strip() for c in cells[1:]]
    return rows


def _parse(cell: str) -> tuple[float | None, float]:
    """A shown figure as (value, half its last digit): 2.47M, -163k, 8.1%, 0.3368, null."""
    if cell in ("null", "n/a"):
        return None, 0.0
    text = cell.replace("−", "-").replace(",", "")
    scale = {"k": 1e3, "M": 1e6, "%": 1e-2}.get(text[-1], 1.0)
    number = text.rstrip("kM%")
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number) * scale, 0.5 * 10.0**-decimals * scale


def test_the_page_lists_every_headline_scenario_once():
    rows = _rows()
    assert len(rows) >= 8
    assert all((ROOT / "models" / "scenarios" / f"{name}.toml").is_file() for name in rows)


@pytest.mark.parametrize("name", sorted(_rows()))
def test_each_after_figure_is_the_engines_at_the_shown_rounding(name):
    shown = _rows()[name]
    summary = project(load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")).summary
    for key, cell in zip(COLUMNS, shown, strict=True):
        value, half = _parse(cell)
        actual = summary[key].iloc[0]
        if value is None:
            assert actual is None or math.isnan(actual), f"{name} {key}: page null, engine {actual}"
        else:
            assert abs(actual - value) <= half * 1.000001, f"{name} {key}: page {cell}, engine {actual}"
