"""The first app page through Streamlit's AppTest: loads, reacts to inputs, reports bad input."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def number_input(at: AppTest, label: str):
    return next(w for w in at.sidebar.number_input if w.label == label)


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_loads_on_default_scenario_with_library_values(app: AppTest):
    assert app.sidebar.selectbox[0].value == DEFAULT_SCENARIO
    expected = project(load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO])).summary.iloc[0]
    assert metric(app, "Levelized cost [USD/M tokens]") == f"{expected.lcot_usd_per_mtok:.4f}"
    assert metric(app, "NPV [USD]") == f"{expected.npv_usd:,.0f}"
    assert not app.error


def test_changing_an_input_changes_the_metric(app: AppTest):
    lcot_before = metric(app, "Levelized cost [USD/M tokens]")
    npv_before = metric(app, "NPV [USD]")
    number_input(app, "Useful life [years]").set_value(4.0).run()
    assert not app.exception
    scenario = load_scenario(
        ready_made_scenarios()[DEFAULT_SCENARIO], {"depreciation.life_years": 4.0}
    )
    expected = project(scenario).summary.iloc[0]
    # A shorter book life moves tax, so NPV, but not the levelized cost of the same service life.
    assert metric(app, "NPV [USD]") == f"{expected.npv_usd:,.0f}" != npv_before
    assert metric(app, "Levelized cost [USD/M tokens]") == lcot_before
    number_input(app, "Utilization [%]").set_value(90.0).run()
    assert metric(app, "Levelized cost [USD/M tokens]") != lcot_before


def test_invalid_input_shows_error_and_keeps_the_value(app: AppTest):
    number_input(app, "Token price, month 1 [USD/M tokens]").set_value(-1.0).run()
    assert not app.exception
    assert app.error and "market.price_usd_per_mtok" in app.error[0].value
    assert number_input(app, "Token price, month 1 [USD/M tokens]").value == -1.0


@pytest.mark.parametrize("name", sorted(ready_made_scenarios()))
def test_every_ready_made_scenario_renders(app: AppTest, name: str):
    app.sidebar.selectbox[0].set_value(name).run()
    assert not app.exception
    assert not app.error
    assert metric(app, "Capex [USD]") != "n/a"
