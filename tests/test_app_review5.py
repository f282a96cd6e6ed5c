"""The fifth review of the app (its report's defects by number): a cost chart that read as a
profitable project, fleet-wide token figures of contract-heavy scenarios, fixed costs left at the
old fleet's size by "Use N GPUs", amounts shown as "0.00", a covenant already breached that the
Risk page did not name, stale Monte Carlo results, link and library messages, and wording.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from tests.test_app import APP, errors, go, shown

CONTRACT = "llama2-70b-h200"


def open_app(scenario: str | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if scenario is not None:
        at.query_params["scenario"] = scenario
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    return at


def summary(name: str = DEFAULT_SCENARIO):
    return project(load_scenario(ready_made_scenarios()[name])).summary.iloc[0]


def chart_rows(at: AppTest, text: str) -> list[dict]:
    """The data rows of the one chart whose specification holds `text`."""
    protos = [c.proto for c in at.get("vega_lite_chart") if text in c.proto.spec]
    assert len(protos) == 1, len(protos)
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in protos[0].datasets]
    return [row for frame in frames for row in frame.to_dict("records")]


def captions(at: AppTest) -> list[str]:
    return [shown(c.value) for c in at.caption]


# --- A1. the cost waterfall against a price of the same basis -------------------------------------


def test_the_cost_waterfall_draws_the_break_even_price_beside_the_token_price():
    at = open_app()
    values = {
        row["label"]: row["value"]
        for row in chart_rows(at, "USD per million output tokens")
        if "label" in row
    }
    expected = summary()
    assert values["Break-even price, month 1"] == pytest.approx(
        expected.breakeven_price_usd_per_mtok
    )
    assert values["Token price, month 1"] == pytest.approx(0.3261)
    caption = next(c for c in captions(at) if c.startswith("Bars: levelized cost"))
    assert "before income tax" in caption
    assert "falls 30% a year" in caption
    assert "The token price is below the break-even price: NPV < 0." in caption


# --- A2. contract-heavy scenarios: whose tokens the fleet's figures count -------------------------


def test_a_contract_scenario_labels_its_fleet_wide_tokens_and_levelized_cost():
    at = open_app(CONTRACT)
    note = "all GPUs' tokens, 80% of them on contract at 2.90 USD/GPU-hour"
    texts = captions(at)
    assert f"A{note[1:]}" in texts  # under "Output over the horizon"
    assert f"The whole fleet's costs over {note}" in texts  # under "Levelized cost"
    caption = next(c for c in texts if c.startswith("Bars: levelized cost"))
    assert f"Costs of the whole fleet over {note}" in caption
    assert "No break-even price" in caption


def test_a_scenario_without_contracts_has_no_fleet_note():
    at = open_app()
    assert not any("on contract" in c for c in captions(at))
    assert not errors(at)
