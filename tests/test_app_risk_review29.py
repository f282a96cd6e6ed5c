"""The Risk page's Monte Carlo as an outside reviewer drove it (review 29)."""

from __future__ import annotations

from tests.test_app import errors, shown
from tests.test_app_review27 import _run_table


def test_a_row_with_a_distribution_but_no_input_is_named_and_nothing_runs():
    """The run went ahead without the row, as if its distribution had not been typed."""
    at = _run_table([("utilization.share", "uniform(0.5, 0.6)"), (None, "uniform(0.2, 0.3)")])
    text = " ".join(errors(at))
    assert "Row 2, uniform(0.2, 0.3): the input is empty; pick one or delete the row" in text, text
    assert "econ.mc_result" not in at.session_state
    assert len(at.session_state["econ.mc_table"]) == 2  # the table typed is kept


def test_the_runs_notes_are_shown_in_the_tables_words():
    """`econ montecarlo` notes an input that moves no output; the page showed a one-bar
    histogram and no word why."""
    at = _run_table([("opex.warranty_months", "discrete(12:0.5, 24:0.5)")])
    assert not errors(at), errors(at)
    text = " ".join(shown(i.value) for i in at.info)
    assert "none of the outputs (10) changes across the 200 scenarios" in text, text
    assert "Opex › Warranty [months] has no effect on them" in text, text
    assert "opex.warranty_months" not in text
