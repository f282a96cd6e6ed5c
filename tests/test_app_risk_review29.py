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


def test_the_starting_rows_follow_the_scenario_until_edited():
    """Switching the scenario kept the seed's starting rows: gpt-oss-120b-b200 (11,232
    tokens/s per GPU) drew its throughput from triangular(3894.16, 4867.7, 6084.625)."""
    import pandas as pd

    from econ.scenario import load_scenario
    from econ.ui.pages.risk import default_distributions
    from econ.ui.risk import numeric_paths
    from tests.conftest import ROOT
    from tests.test_app_review2 import open_app

    at = open_app(page="risk")
    at.sidebar.selectbox[0].set_value("gpt-oss-120b-b200").run()
    other = load_scenario(ROOT / "models" / "scenarios" / "gpt-oss-120b-b200.toml")
    table = at.session_state["econ.mc_table"]
    assert table.equals(default_distributions(other, numeric_paths(other))), table
    assert "triangular(8985.632, 11232.04, 14040.05)" in list(table["distribution"])
    typed = pd.DataFrame([("utilization.share", "uniform(0.5, 0.6)")], columns=table.columns)
    at.session_state["econ.mc_table"] = typed
    at.run()
    at.sidebar.selectbox[0].set_value("deepseek-r1-gb200-nvl72").run()
    assert at.session_state["econ.mc_table"].equals(typed)  # what was typed is kept


def test_a_whole_number_field_is_not_offered_a_file_the_app_refuses():
    at = _run_table([("fleet.gpu_count", "uniform(100, 200.5)")])
    text = " ".join(errors(at))
    assert "Fleet › GPU count [GPUs] takes whole numbers; expected discrete(...) of whole" in text
    assert "empirical" not in text, text


def test_an_incomplete_row_reaches_the_page_to_be_named():
    """Streamlit's browser side leaves out of the table it sends an added row whose `required`
    cell is empty (its DataFrame editing state: such a row is not pushed to added_rows), so a
    row typed without its input or its distribution was dropped before the page's checks saw
    it and the run went ahead without it. Neither column is required: the row is sent, and
    named (tests above)."""
    import json

    from tests.test_app_review2 import open_app

    at = open_app(page="risk")
    grid = next(d for d in at.dataframe if '"path"' in d.proto.columns)
    columns = json.loads(grid.proto.columns)
    assert not columns["path"].get("required") and not columns["distribution"].get("required")


def test_a_share_typed_in_percent_signs_is_told_to_be_a_fraction():
    at = _run_table([("utilization.share", "uniform(55%, 80%)")])
    text = " ".join(errors(at))
    assert "low = '55%'; expected a number" in text, text
    assert "Utilization › Share [fraction] is typed in the distribution as a fraction" in text
