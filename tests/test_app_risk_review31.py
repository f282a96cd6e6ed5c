"""The Risk and Compare pages as an outside reviewer drove them (review 31)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO
from tests.test_app import APP, errors, shown, widget
from tests.test_app_review2 import open_app


def _data_table(row_from=None, row_to=None):
    at = open_app(page="risk")
    boxes = {
        w.key.split(".")[1]: w
        for w in at.number_input
        if w.key and w.key.startswith("econ.dt_Row_")
    }
    if row_from is not None:
        boxes["dt_Row_lo"].set_value(row_from).run()
    if row_to is not None:
        boxes["dt_Row_hi"].set_value(row_to).run()
    widget(at.button, "Compute the data table").click().run()
    assert not at.exception
    return at


def test_a_data_table_end_past_the_fields_bound_is_refused_in_the_boxs_unit():
    """A "from" of 150 in "Utilization › Share [%]" was refused by the grid's check in stored
    units and dotted paths: "utilization.share = 1.5: expected a number >= 0 and <= 1"."""
    at = _data_table(row_from=150.0)
    text = " ".join(errors(at))
    assert "Utilization › Share [%], “from”: 150 % is above 100 % (expected at most 100 %)" in (
        text
    ), text
    assert "utilization.share" not in text and "1.5" not in text, text
    assert "econ.data_table" not in at.session_state


def test_data_table_ends_that_are_equal_are_refused_as_such():
    """A "to" equal to the "from" gave "grid utilization.share: value 2 (0.56) repeats value 1
    (0.56); expected each value once"."""
    at = _data_table(row_to=56.0)
    text = " ".join(errors(at))
    assert "Utilization › Share [%], “from” and “to” are both 56.00; expected two different" in (
        text
    ), text
    assert "repeats" not in text, text
    assert "econ.data_table" not in at.session_state


def test_a_data_table_within_the_bounds_is_computed():
    at = _data_table(row_from=50.0, row_to=100.0)
    assert not errors(at), errors(at)
    assert list(at.session_state["econ.data_table"][-1].index) == [50.0, 62.5, 75.0, 87.5, 100.0]


def test_a_compare_selection_emptied_by_the_visitor_stays_empty():
    """Clearing the Compare box brought the default pair back at once and compared it."""
    at = open_app(page="compare")
    at.multiselect[0].set_value([]).run()
    assert not at.exception
    assert at.multiselect[0].value == []
    assert "Pick at least two scenarios." in [i.value for i in at.info]
    assert not at.dataframe  # nothing compared
    at.multiselect[0].set_value(["gpt-oss-120b-b200", "llama2-70b-h200"]).run()
    assert at.multiselect[0].value == ["gpt-oss-120b-b200", "llama2-70b-h200"]
    assert at.dataframe


def test_compare_picks_no_longer_offered_give_way_to_the_default():
    at = open_app(page="compare")
    at.session_state["econ.compare_pick"] = ["saved: gone"]
    at.run()
    assert at.multiselect[0].value == ["current scenario", "deepseek-r1-gb200-nvl72-capital-stack"]


@pytest.mark.parametrize(
    ("params", "said"),
    [
        (
            {"scenario": "gpt-oss-120b-b200", "edits": ""},
            "the shared link: edits: is empty; expected the edits as the app writes them",
        ),
        (
            {"scenario": ""},
            "the shared link: scenario: is empty; expected the name of a ready-made",
        ),
    ],
)
def test_a_link_with_an_empty_parameter_is_refused_not_opened_as_if_whole(params, said):
    """A link cut short after "edits=" opened gpt-oss-120b-b200 without its edits, and a lender
    read the unedited scenario as the one shared, with no word."""
    at = AppTest.from_file(APP, default_timeout=90)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception
    assert any(said in e for e in errors(at)), errors(at)
    assert at.session_state["econ.base_name"] == DEFAULT_SCENARIO


def test_the_tornados_run_notes_name_inputs_and_outputs_by_their_labels():
    """The run's notes under the chart named them by dotted path and key ("market.price_usd_per_mtok,
    utilization.share, throughput.tokens_per_s_per_gpu move npv_usd by the same swing") under
    lines that name them by label."""
    at = open_app(page="risk")
    widget(at.button, "Run the tornado").click().run()
    assert not at.exception and not errors(at), errors(at)
    text = " ".join(shown(i.value) for i in at.info)
    assert (
        "Market › Price [USD/M tokens], Utilization › Share [fraction], Throughput › Output "
        "tokens/s per GPU move NPV [USD] by the same swing" in text
    ), text
    assert "npv_usd" not in text and "utilization.share" not in text, text


def test_a_swing_too_small_to_move_an_input_is_refused_in_the_pages_words():
    """±1e-14% of 0.3261 is 0.3261 both ways: the run refused it in `--range`'s words, "range
    market.price_usd_per_mtok=0.3261,0.3261: LOW equals HIGH ...; expected LOW < HIGH"."""
    at = open_app(page="risk")
    widget(at.multiselect, "Inputs").set_value(["utilization.share"]).run()
    widget(at.number_input, "Swing [± %]").set_value(1e-14).run()
    widget(at.button, "Run the tornado").click().run()
    assert not at.exception
    text = " ".join(errors(at))
    assert (
        "Utilization › Share [%] is 70 in the scenario, and ±1e-14% of it rounds to it both "
        "ways, so the tornado cannot swing it; give a wider swing, or take it out of Inputs"
    ) in text, text
    assert "LOW" not in text and "utilization.share" not in text, text


def test_draws_that_never_pay_back_are_said_to_be_so_and_the_statistics_of_the_others():
    """185 of 200 draws of gpt-oss-120b-b200 never pay back within its 48 months: the page showed
    a P50 payback of 47.1 months under "185 scenarios: Payback [months] undefined (not counted)",
    as if those draws had no figure rather than the worst one."""
    at = open_app("gpt-oss-120b-b200", page="risk")
    widget(at.number_input, "Scenarios").set_value(200).run()
    at.selectbox(key="econ.mc_output").set_value("payback_months").run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception and not errors(at), errors(at)
    summary = at.session_state["econ.mc_result"][2].metrics["payback_months"]
    undefined = summary.undefined
    assert 0 < undefined < 200
    text = " ".join(w.value for w in at.warning)
    assert (
        f"{undefined} scenarios: Payback [months] undefined (not counted): the cumulative project "
        "cash flow never turns positive within the horizon in them, the worst outcome, not a "
        f"missing one. The statistics are of the other {200 - undefined} scenarios of 200 only."
    ) in text, text


def test_a_whole_number_swing_clipped_to_its_bound_stays_a_whole_number():
    """depreciation.first_year_months (12, at most 12) swung ±20%: its run note read "between 10
    and 12.0"."""
    at = open_app(page="risk")
    widget(at.multiselect, "Inputs").set_value(["depreciation.first_year_months"]).run()
    widget(at.button, "Run the tornado").click().run()
    assert not at.exception and not errors(at), errors(at)
    table = at.session_state["econ.tornado_result"][2]
    assert {type(v) for v in table["high"]} == {int}, table["high"]
    text = " ".join(shown(i.value) for i in at.info)
    assert "between 10 and 12:" in text and "12.0" not in text, text
