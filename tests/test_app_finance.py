"""Issue 19 (the app for a finance team) through AppTest and the helpers behind it: the share
link, checks of a measured curve against the scenario, tornado swings within bounds, edited
sources, messages in the displayed unit, upload limits and sanity warnings.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from streamlit.testing.v1 import AppTest

from econ.ui import state
from tests.test_app import APP, errors, go, widget  # noqa: F401 - app fixture below


def test_share_url_points_at_the_page_shown_with_this_runs_parameters():
    params = {"scenario": "seed", "edits": "abc"}
    url = state.share_url("risk", params, "http://host:8501/results?scenario=old")
    assert url == "http://host:8501/risk?scenario=seed&edits=abc"
    assert state.share_url("", params, "http://host:8501/risk") == (
        "http://host:8501/?scenario=seed&edits=abc"
    )
    # a base path in front of the app is kept
    assert state.share_url("power", {}, "https://h/apps/econ/") == "https://h/apps/econ/power"


def test_link_params_follow_the_edit_of_the_same_run():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    widget(at.sidebar.number_input, "Utilization [%]").set_value(90.0).run()
    assert not at.exception
    edits = at.query_params["edits"]
    edits = edits[0] if isinstance(edits, list) else edits
    assert state.decode(edits)["utilization"]["share"] == 0.9
    url = state.share_url("", {"edits": edits}, "http://h/")
    assert state.decode(parse_qs(urlsplit(url).query)["edits"][0]) == state.decode(edits)
