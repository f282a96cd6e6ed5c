"""The Risk page as an outside reviewer drove it (review 27)."""

from __future__ import annotations

import pandas as pd

from tests.test_app import errors, go, widget
from tests.test_app_review2 import open_app


def _run_table(rows: list[tuple]):
    at = open_app()
    go(at, "risk")
    at.session_state["econ.mc_table"] = pd.DataFrame(rows, columns=["path", "distribution"])
    widget(at.number_input, "Scenarios").set_value(200).run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception
    return at


def test_an_input_given_twice_is_refused_by_name_and_nothing_runs():
    at = _run_table(
        [("utilization.share", "uniform(0.5, 0.6)"), ("utilization.share", "uniform(0.7, 0.8)")]
    )
    text = " ".join(errors(at))
    assert "Utilization › Share [fraction] is given twice" in text, text
    assert "econ.mc_result" not in at.session_state


def test_a_row_without_a_distribution_is_named_not_skipped():
    at = _run_table([("utilization.share", "uniform(0.5, 0.6)"), ("market.price_usd_per_mtok", "")])
    text = " ".join(errors(at))
    assert "Row 2, Market › Price" in text and "distribution is empty" in text, text
    assert "econ.mc_result" not in at.session_state
