"""The app's Library page as a team's review used it: picking another scenario starts at its own
newest version and its last two for the diff; names and messages are shown as stored, with
formula-like text neutralized only in what the tables download as CSV."""

from __future__ import annotations

from streamlit import dataframe_util
from test_app_library import SEED_NAME, by_label, library_page, library_url, literal_text  # noqa: F401
from test_library import SEED

from econ.library import Ref, open_library
from econ.ui import state

OTHER = "other-plan"


def versions(url: str, name: str, gpu_counts: list[int]) -> None:
    """Save the seed under `name`, once per GPU count (version n has gpu_counts[n - 1])."""
    text = SEED.read_text().replace(f'name = "{SEED_NAME}"', f'name = "{name}"')
    with open_library(url) as library:
        for count in gpu_counts:
            library.save_text(text.replace("gpu_count = 72", f"gpu_count = {count}"))


def test_another_scenario_starts_at_its_newest_version(library_url):  # noqa: F811
    """The review: the Version box kept 2 (and the diff Old 1 / New 2) when another scenario was
    picked, so "Load into the editor" loaded that scenario's version 2, not its newest."""
    versions(library_url, SEED_NAME, [72, 144, 216])
    versions(library_url, OTHER, [72, 288, 360])
    at = library_page()
    by_label(at.selectbox, "Scenario").set_value(SEED_NAME).run()
    by_label(at.selectbox, "Version").set_value(1).run()
    by_label(at.selectbox, "Old").set_value(1).run()
    by_label(at.selectbox, "New").set_value(2).run()
    assert [by_label(at.selectbox, k).value for k in ("Version", "Old", "New")] == [1, 1, 2]

    by_label(at.selectbox, "Scenario").set_value(OTHER).run()
    assert not at.exception, at.exception
    assert [by_label(at.selectbox, k).value for k in ("Version", "Old", "New")] == [3, 2, 3]
    by_label(at.button, "Load into the editor").click().run()
    assert [literal_text(s.value) for s in at.success] == [
        f"Loaded library:{OTHER}@3; the other pages now show it."
    ]
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] == 360


def test_restore_acts_on_the_picked_scenarios_newest_after_a_switch(library_url):  # noqa: F811
    versions(library_url, SEED_NAME, [72, 144, 216])
    versions(library_url, OTHER, [72, 288])
    at = library_page()
    by_label(at.selectbox, "Scenario").set_value(SEED_NAME).run()
    by_label(at.selectbox, "Version").set_value(1).run()
    by_label(at.selectbox, "Scenario").set_value(OTHER).run()
    by_label(at.button, "Restore as newest").click().run()
    assert not at.exception, at.exception
    with open_library(library_url) as library:
        third = library.get(Ref(OTHER, 3)).text
    assert "gpu_count = 288" in third  # version 2, the newest when the scenario was picked


def displayed(element):
    """(the table's values, which its "Download as CSV" writes; the text the screen shows)."""
    shown = dataframe_util.convert_arrow_bytes_to_pandas_df(
        element.proto.arrow_data.styler.display_values
    )
    return element.value, shown


def test_names_and_messages_show_as_stored_and_download_neutralized(library_url):  # noqa: F811
    """The review: a scenario named `-rf` showed as `'-rf` (the CSV's neutralization, on
    screen)."""
    versions(library_url, "-rf", [72])
    with open_library(library_url) as library:
        library.restore(Ref("-rf", 1), message="=1+1 for the board")
    at = library_page()
    by_label(at.selectbox, "Scenario").set_value("-rf").run()
    scenarios, history = at.dataframe[0], at.dataframe[1]

    values, shown = displayed(scenarios)
    assert values["name"].tolist() == ["'-rf"] and shown["name"].tolist() == ["-rf"]
    assert values["message"].tolist() == ["'=1+1 for the board"]
    assert shown["message"].tolist() == ["=1+1 for the board"]
    values, shown = displayed(history)
    assert values["message"].tolist() == ["", "'=1+1 for the board"]
    assert shown["message"].tolist() == ["", "=1+1 for the board"]
    # other cells are shown as their values
    assert shown["author"].tolist() == values["author"].tolist()
