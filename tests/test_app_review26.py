"""The twenty-sixth review of the app (its report's items by number), through Streamlit's
AppTest.
"""

from __future__ import annotations

import base64
import re
import zlib

import pytest
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.scenario import read_toml
from econ.ui import state
from tests import test_app_review24
from tests.test_app import APP, errors, go, prepare, widget

SEED = ready_made_scenarios()[DEFAULT_SCENARIO]

app = test_app_review24.app  # the app run once on the seed, 120 s a run


def opened(params: dict[str, str], page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    return at


# --- 1. a field deleted in the TOML tab is an edit ------------------------------------------------


def test_a_removed_field_is_an_edit_that_a_link_carries_and_merge_restores():
    base = {"market": {"price_usd_per_mtok": 0.3, "price_decline_annual": 0.3}, "name": "x"}
    data = {"market": {"price_usd_per_mtok": 0.3}, "name": "x"}
    changes = state.diff(data, base)
    assert changes == {"market": {"price_decline_annual": state.REMOVED}}
    assert state.merge(base, state.decode(state.encode(changes))) == data
    # an emptied box (None) stays what it was: a value the page refuses as empty
    emptied = {"market": {"price_usd_per_mtok": None, "price_decline_annual": 0.3}, "name": "x"}
    assert state.merge(base, state.diff(emptied, base)) == emptied


def test_deleting_a_line_in_the_toml_tab_is_tracked_as_an_edit(app: AppTest):
    go(app, "scenario")
    area = widget(app.text_area, "The whole scenario as TOML")
    text = re.sub(r"\nprice_decline_annual = [^\n]*", "", area.value, count=1)
    assert text != area.value
    area.set_value(text).run()
    widget(app.button, "Apply the TOML").click().run()
    assert not app.exception and not errors(app), errors(app)
    assert "price_decline_annual" not in app.session_state[state.DATA]["market"]
    assert any("(edited)" in c.value for c in app.caption)
    assert not widget(app.button, "Reset edits").disabled
    # the link carries the removal: a colleague opening it sees the same scenario
    params = {k: app.query_params[k] for k in ("scenario", "edits")}
    assert params["scenario"] == DEFAULT_SCENARIO
    other = opened(params)
    assert other.session_state[state.DATA] == app.session_state[state.DATA]
    assert any("edited" in c.value for c in other.sidebar.caption)
    # and Reset edits gives the field back
    widget(app.button, "Reset edits").click().run()
    market = app.session_state[state.DATA]["market"]
    assert market["price_decline_annual"] == read_toml(SEED)["market"]["price_decline_annual"]
    assert "edits" not in app.query_params


def test_the_downloads_of_a_scenario_with_a_removed_field_are_named_edited(app: AppTest):
    from econ.ui.common import EDITED_SUFFIX

    go(app, "scenario")
    area = widget(app.text_area, "The whole scenario as TOML")
    area.set_value(re.sub(r"\nprice_decline_annual = [^\n]*", "", area.value, count=1)).run()
    widget(app.button, "Apply the TOML").click().run()
    prepare(go(app, "export"))
    assert not errors(app), errors(app)
    names = " ".join(c.value for c in app.caption)
    assert f"{DEFAULT_SCENARIO}{EDITED_SUFFIX}" in names, names


# --- 2. a link to an uploaded scenario gives it whole, not as edits of an empty one --------------


def test_a_link_to_an_uploaded_scenario_opens_it_unedited(app: AppTest):
    go(app, "scenario")
    content = SEED.read_text().replace(f'name = "{DEFAULT_SCENARIO}"', 'name = "my-upload"')
    assert 'name = "my-upload"' in content
    app.get("file_uploader")[0].upload("mine.toml", content.encode(), "application/toml").run()
    assert not errors(app), errors(app)
    assert "scenario" not in app.query_params and app.query_params["edits"]
    sender = go(app, "results")
    other = opened({"edits": app.query_params["edits"]}, page="results")
    assert not errors(other), errors(other)
    assert not any("edited" in c.value for c in other.sidebar.caption)
    assert [m.value for m in other.metric] == [m.value for m in sender.metric]
    prepare(go(other, "export"))
    prepare(go(sender, "export"))
    # the downloads are named from the scenario's own name, as the sender's are
    assert [c.value for c in other.caption] == [c.value for c in sender.caption]
    assert not any("edited" in c.value for c in other.caption)


# --- 3. a scenario without the sections `econ project` requires is refused ------------------------

INCOMPLETE = "no [fleet] or [throughput] or [capex] or [market] table"


def test_an_uploaded_scenario_without_its_sections_is_refused_as_the_command_line_does(
    app: AppTest,
):
    go(app, "scenario")
    app.get("file_uploader")[0].upload("only.toml", b'name = "onlyname"\n', "application/toml")
    app.run()
    assert not app.exception
    assert not app.success, [s.value for s in app.success]
    said = " ".join(errors(app))
    assert INCOMPLETE in said and "Is the file complete?" in said, said
    go(app, "results")
    assert not app.metric
    assert errors(app), "the Results page says why it shows no figures"


def test_a_link_giving_only_a_name_is_refused(tmp_path, capsys):
    from econ.cli import main

    at = opened({"edits": state.encode({"name": "x"})}, page="scenario")
    said = " ".join(errors(at))
    assert INCOMPLETE in said, said
    go(at, "results")
    assert not at.metric
    # the same words as `econ project` gives for the file
    path = tmp_path / "x.toml"
    path.write_text('name = "x"\n')
    assert main(["project", str(path)]) == 3
    refused = capsys.readouterr().err.strip().removeprefix(f"error: {path}: ")
    assert refused in said, (refused, said)


# --- 4. a link's integer too long to read is named as an upload's is -----------------------------


def test_a_link_s_integer_of_5000_digits_is_named_not_called_unreadable():
    text = '{"fleet":{"gpu_count":' + "9" * 5000 + "}}"  # as state.encode writes edits
    edits = base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")
    with pytest.raises(state.LinkError) as refused:
        state.decode(edits)
    assert str(refused.value) == (
        "the shared link: fleet.gpu_count: an integer of 5,000 digits; " + state.FINITE
    )
    at = opened({"scenario": DEFAULT_SCENARIO, "edits": edits})
    said = " ".join(errors(at))
    assert "an integer of 5,000 digits" in said and state.UNREADABLE not in said, said
