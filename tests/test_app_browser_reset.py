"""A browser reset is not an edit (econ.ui.form.settle_commits).

Seen in headless Chromium on a loaded machine: a click that landed while the Scenario page was still
being drawn made Streamlit's browser side draw every input anew from its default, which is empty in
this app (values come from session state), and send them all back: one run committed 94 fields as
empty and the scenario was wiped. Here AppTest sends several widget changes in one run, as that
browser did."""

from __future__ import annotations

import copy

from econ.ui import state
from tests.test_app import errors, go, widget
from tests.test_app_review2 import open_app

RESET_WARNING = "fields back empty at once"


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_a_run_that_empties_several_fields_is_undone_with_a_warning():
    at = open_app("deepseek-r1-gb200-nvl72")
    before = copy.deepcopy(at.session_state[state.DATA])
    for label in (
        "Fleet › GPU count [GPUs]",
        "Utilization › Share [%]",
        "Power › Price [USD/kWh]",
    ):
        widget(at.sidebar.number_input, label).set_value(None)
    at.run()
    assert not at.exception
    assert at.session_state[state.DATA] == before  # nothing applied, no edit cited
    assert any("The browser sent 3 fields back empty at once" in w for w in warnings(at))
    assert not errors(at), errors(at)
    # the inputs are drawn anew with the scenario's values
    assert (
        widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").value
        == before["fleet"]["gpu_count"]
    )
    # the warning is said once
    at.run()
    assert not any(RESET_WARNING in w for w in warnings(at))


def test_one_emptied_field_is_an_edit():
    at = open_app("deepseek-r1-gb200-nvl72")
    widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(None).run()
    assert not at.exception
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] is None
    assert any("empty; expected a number" in e for e in errors(at)), errors(at)
    assert not any(RESET_WARNING in w for w in warnings(at))


def test_the_other_edits_of_an_undone_run_stay():
    at = open_app("deepseek-r1-gb200-nvl72")
    before = copy.deepcopy(at.session_state[state.DATA])
    widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(144)
    widget(at.sidebar.number_input, "Utilization › Share [%]").set_value(None)
    widget(at.sidebar.number_input, "Financing › Debt rate [%/year]").set_value(None)
    at.run()
    data = at.session_state[state.DATA]
    assert data["fleet"]["gpu_count"] == 144  # the edit, cited as one
    assert "edited in the app" in data["sources"]["fleet.gpu_count"]
    assert data["utilization"] == before["utilization"]
    assert data["financing"] == before["financing"]
    assert data["sources"]["utilization.share"] == before["sources"]["utilization.share"]
    assert any("The browser sent 2 fields back empty at once" in w for w in warnings(at))
    assert widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").value == 144


def test_toggles_turned_off_count_as_emptied():
    # a toggle drawn anew is off: two switched off with one run are a reset too
    at = open_app("deepseek-r1-gb200-nvl72", page="scenario")
    before = copy.deepcopy(at.session_state[state.DATA])
    for t in at.toggle:
        if t.label == "Switch to straight line":
            t.set_value(False)
    at.run()
    assert at.session_state[state.DATA] == before
    assert any("The browser sent 2 fields back empty at once" in w for w in warnings(at))
    # one toggle switched off is an edit
    go(at, "scenario")
    widget(at.toggle, "Switch to straight line").set_value(False).run()
    assert not any(RESET_WARNING in w for w in warnings(at))
    switched = at.session_state[state.DATA]["depreciation"]
    assert False in (
        switched.get("switch_to_straight_line"),
        switched["tax"].get("switch_to_straight_line"),
    )
