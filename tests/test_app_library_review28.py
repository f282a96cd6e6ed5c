"""The Library page as a finance analyst uses it (review 28): a diff in the units of the inputs,
the version boxes after a save or a restore, and names and values shown as typed."""

from __future__ import annotations

from test_app_library import SEED_NAME, by_label, library_page, save

from econ.ui import state


def inputs_frame(at):
    return next(f.value for f in at.dataframe if "input" in f.value.columns)


def test_the_diff_shows_inputs_in_the_units_the_form_shows(library_url):
    """The diff showed a share as 0.7 and a rate as 0.1075 (stored fractions, unit "fraction"
    and "1/year") where the Scenario page shows 70 % and 10.75 %/year; and a GPU count beside
    them as 72.0."""
    at = library_page()
    save(at, "baseline")
    data = at.session_state[state.DATA]
    data["utilization"]["share"] = 0.8
    data["financing"]["debt_rate_annual"] = 0.09
    data["fleet"]["gpu_count"] = 144
    at.run()
    save(at, "busier, cheaper debt, two racks")
    assert inputs_frame(at).to_dict("records") == [
        {
            "input": "Financing › Debt rate [%/year]",
            "old": "10.75",
            "new": "9",
            "path": "financing.debt_rate_annual",
        },
        {"input": "Fleet › GPU count [GPUs]", "old": "72", "new": "144", "path": "fleet.gpu_count"},
        {"input": "Utilization › Share [%]", "old": "70", "new": "80", "path": "utilization.share"},
    ]


def test_a_difference_below_six_digits_is_shown(library_url):
    at = library_page()
    save(at, "baseline")
    at.session_state[state.DATA]["market"]["price_usd_per_mtok"] = 0.32610001
    at.run()
    save(at, "a hair dearer")
    [row] = inputs_frame(at).to_dict("records")
    assert (row["old"], row["new"]) == ("0.3261", "0.32610001")


def test_after_a_save_the_version_box_shows_the_new_version(library_url):
    """The Version box kept version 1 picked after version 2 was saved (a keyed box keeps its
    choice), and the diff stayed at versions 1 and 2 after version 3."""
    at = library_page()
    save(at, "baseline")
    for count in (144, 216):
        at.session_state[state.DATA]["fleet"]["gpu_count"] = count
        at.run()
        save(at, f"{count} GPUs")
    assert by_label(at.selectbox, "Version").value == 3
    assert [by_label(at.selectbox, b).value for b in ("Old", "New")] == [2, 3]
    # a restore is the newest version too
    by_label(at.selectbox, "Version").select(1).run()
    by_label(at.button, "Restore as newest").click().run()
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Version").value == 4
    assert [by_label(at.selectbox, b).value for b in ("Old", "New")] == [3, 4]


def test_a_save_under_another_name_picks_that_name(library_url):
    at = library_page()
    save(at, "baseline")
    at.session_state[state.DATA]["name"] = "b-variant"
    at.run()
    save(at, "a variant")
    assert by_label(at.selectbox, "Scenario").value == "b-variant"
    assert by_label(at.selectbox, "Version").value == 1
    assert SEED_NAME in by_label(at.selectbox, "Scenario").options


def test_a_refused_tag_is_named_not_hidden_as_a_location(library_url):
    """A tag typed as `q3 </b>` was refused with a message the page withheld as one naming where
    the library is ("/b>'" read as a path): the analyst was told the library cannot be used."""
    at = library_page()
    by_label(at.text_input, "Tags").input("q3 </b>")
    save(at, "tagged")
    [error] = at.error
    assert "tag 'q3 \\</b>': expected a label of letters" in error.value
    assert "--tag" not in error.value  # (the page has a Tags box, no option)
    assert "cannot be used" not in error.value
    assert by_label(at.text_input, "Tags").value == "q3 </b>"  # kept, to correct
    assert [i.value for i in at.info] == ["The library is empty."]


def test_a_quoted_path_beside_a_typed_tag_is_still_withheld(tmp_path):
    from econ.library.store import hide_location

    url = f"sqlite:///{tmp_path / 'library.db'}"
    text = "--tag 'q3 </b>': refused; see '/srv/other/secret.db'"
    assert hide_location(text, url, ["q3 </b>"]) is None
    assert hide_location("--tag 'q3 </b>': refused", url) is None
    assert hide_location("--tag 'q3 </b>': refused", url, ["q3 </b>"]) is not None


def test_a_floating_rate_curve_point_is_in_percent_with_its_unit():
    """A floating rate curve's point (a union the form edits as TOML) was labelled "Rate
    annual" with no unit and shown as stored, 0.043, in the Library page's diff and the Compare
    page's inputs, beside tranche shares in % and spreads in %/year."""
    from conftest import ROOT

    from econ import load_scenario
    from econ.ui.pages.compare import inputs

    scenario = load_scenario(ROOT / "models" / "scenarios" / f"{SEED_NAME}-capital-stack.toml")
    shown = inputs(state.plain(scenario.model_dump()))
    label, text, number = shown["financing.tranches[0].floating.curve.points[0].rate_annual"]
    assert (
        label == "Financing › Tranches › ddtl › Floating › Curve › Points › row 1 › Rate [%/year]"
    )
    assert (text, number) == ("4.3", 4.3)
    label, text, _ = shown["financing.tranches[0].floating.spread_annual"]
    assert label.endswith("Spread [%/year]") and text == "2.25"  # as the form's own fields


def test_a_list_that_differs_beyond_six_digits_is_a_difference(library_url):
    """A list of numbers is one text of 6-digit numbers: two schedules alike to 6 digits read as
    no difference, which `econ library diff` lists."""
    at = library_page()
    at.session_state[state.DATA]["depreciation"]["method"] = "custom"
    at.session_state[state.DATA]["depreciation"]["custom_percent"] = [40.0, 30.0, 20.0, 10.0]
    at.run()
    save(at, "custom schedule")
    at.session_state[state.DATA]["depreciation"]["custom_percent"] = [
        40.0000001,
        29.9999999,
        20.0,
        10.0,
    ]
    at.run()
    save(at, "a hair earlier")
    [row] = inputs_frame(at).to_dict("records")
    assert row["path"] == "depreciation.custom_percent"
    assert (row["old"], row["new"]) == ("40, 30, 20, 10", "40.0000001, 29.9999999, 20, 10")
