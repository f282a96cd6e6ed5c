"""The Risk page as an outside reviewer drove it (review 27)."""

from __future__ import annotations

import pandas as pd
import pytest

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


def test_data_table_steps_out_of_range_are_refused_in_words_and_nothing_is_computed():
    for steps, past in ((1, "below 2"), (51, "above 50")):
        at = open_app(page="risk")
        [w for w in at.number_input if w.label == "steps"][0].set_value(steps).run()
        widget(at.button, "Compute the data table").click().run()
        assert not at.exception
        text = " ".join(errors(at))
        assert f"“steps”: {steps} is {past}; expected a whole number from 2 to 50" in text, text
        assert "econ.data_table" not in at.session_state


def test_the_data_table_follows_a_new_scenario_value_and_computes_what_its_boxes_show():
    at = open_app(page="risk")
    widget(at.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(0.35).run()
    column = [w for w in at.number_input if w.label in ("from", "to")][2:]  # the column's
    decimals = [int(w.proto.format[2:-1]) for w in column]
    low, high = (round(w.value, d) for w, d in zip(column, decimals, strict=True))
    assert (low, high) == (0.28, 0.42), (column[0].value, column[1].value)  # +-20% of 0.35
    widget(at.button, "Compute the data table").click().run()
    assert not at.exception
    table = at.session_state["econ.data_table"][-1]
    assert list(table.columns)[0] == low and list(table.columns)[-1] == high


def test_a_typed_data_table_value_is_taken_to_the_decimals_its_box_shows():
    at = open_app(page="risk")
    column = [w for w in at.number_input if w.label in ("from", "to")][2:]
    assert column[0].proto.format == "%.4f"
    column[0].set_value(0.300049).run()
    widget(at.button, "Compute the data table").click().run()
    assert list(at.session_state["econ.data_table"][-1].columns)[0] == 0.3


def test_sobol_sampling_of_other_than_a_power_of_2_is_noted_as_the_cli_notes_it():
    from econ.analysis.sampling import sobol_balance_note

    at = open_app(page="risk")
    at.selectbox(key="econ.mc_sampling").set_value("sobol").run()
    widget(at.number_input, "Scenarios").set_value(300).run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception and not errors(at), errors(at)
    text = " ".join(i.value for i in at.info)
    assert sobol_balance_note(300, "sobol")[1:] in text, text
    widget(at.number_input, "Scenarios").set_value(256).run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert "not a power of 2" not in " ".join(i.value for i in at.info)


def test_an_empty_swing_box_is_called_empty_not_none():
    at = open_app(page="risk")
    widget(at.number_input, "Swing [± %]").set_value(None).run()
    widget(at.button, "Run the tornado").click().run()
    text = " ".join(errors(at))
    assert "“Swing [± %]” is empty; expected a percentage above 0" in text, text
    assert "None" not in text


def test_a_garbage_distribution_lists_only_what_the_app_takes():
    at = _run_table([("utilization.share", "garbage")])
    text = " ".join(errors(at))
    assert "expected NAME(ARGS), one of: uniform(...)" in text, text
    assert "empirical" not in text, text


def test_undefined_scenarios_are_named_by_the_outputs_label():
    at = _run_table([("market.price_usd_per_mtok", "uniform(1e307, 1e308)")])
    text = " ".join(w.value for w in at.warning)
    assert "200 scenarios: NPV" in text and "undefined (not counted)" in text, text
    assert "npv_usd" not in text, text


def test_at_a_price_of_1e308_the_data_table_boxes_hold_its_range_not_the_old_one():
    at = open_app(page="risk")
    widget(at.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(1e308).run()
    column = [w for w in at.number_input if w.label in ("from", "to")][2:]
    assert [w.proto.format for w in column] == ["%.0f", "%.0f"]
    assert [w.value for w in column] == [round(0.8 * 1e308), round(1.2 * 1e308)]
    widget(at.button, "Compute the data table").click().run()
    assert not at.exception
    table = at.session_state["econ.data_table"][-1]
    ends = [list(table.columns)[0], list(table.columns)[-1]]
    assert ends == pytest.approx([w.value for w in column], rel=1e-12)  # (10 digits kept)


def test_the_fan_of_draws_no_month_defines_is_empty_without_numpy_warnings():
    """Every draw undefined (a price near the float limit): numpy warned "All-NaN slice" from
    the fan's quantiles; the months no draw defines now have no band, the others theirs."""
    import warnings

    import numpy as np

    from econ.scenario import load_scenario
    from econ.ui.risk import FAN_QUANTILES, fan
    from tests.conftest import ROOT

    base = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    rows = pd.DataFrame({"market.price_usd_per_mtok": [1e308, 2e307, 0.5, 0.6]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        undefined = fan(base, rows.head(2), ["market.price_usd_per_mtok"], "cash_flow_project_usd")
        mixed = fan(base, rows, ["market.price_usd_per_mtok"], "cash_flow_project_usd")
    bands = [f"p{round(q * 100)}" for q in FAN_QUANTILES]
    in_service = undefined["month"] >= 1
    assert undefined.loc[in_service, bands].isna().all().all()
    assert np.isfinite(mixed.loc[in_service, bands].to_numpy()).all()
