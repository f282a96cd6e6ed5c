"""The twentieth review of the app (its report's items by number): amounts cut at their first
thousands separator in messages, percent boxes answered in fractions, exponents in whole-number
boxes, a cost tile's change coloured as a gain, the measured curve's GPU count and SLO boxes,
facility prices told about electricity, and messages in command-line words.
"""

from __future__ import annotations

import copy

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.scenario import read_toml
from econ.ui import state
from tests.test_app import errors, widget
from tests.test_app_review2 import open_app


def seed() -> dict:
    return copy.deepcopy(read_toml(ready_made_scenarios()[DEFAULT_SCENARIO]))


def message_with(**edits) -> str:
    """The scenario's validation message with fields set by dotted path ("fleet__racks")."""
    data = seed()
    for path, value in edits.items():
        state.set_path(data, path.replace("__", "."), value)
    return state.validate(data).message


# --- 1. an amount with thousands separators, a product of two fields -------------------------------


def test_an_amount_with_thousands_separators_keeps_its_unit_after_the_whole_number():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    widget(at.number_input, "Debt [USD]").set_value(2_000_000.0).run()
    assert not at.exception
    text = " ".join(errors(at))
    assert "“Financing › Debt [USD]” is 2,000,000 USD and" in text, text
    assert "USD,000" not in text


def test_a_product_of_two_fields_puts_each_unit_on_its_own_factor():
    per_rack = seed()["fleet"]["gpus_per_rack"]
    message = message_with(fleet__racks=2)
    assert (
        f"“Fleet › Racks” x “Fleet › GPUs per rack” is 2 racks x {per_rack} GPUs/rack = "
        f"{2 * per_rack:,} GPUs" in message
    ), message
    assert "racks x “" not in message


def test_a_gpu_count_against_racks_is_written_with_separators():
    message = message_with(fleet__racks=2, fleet__gpu_count=100_000)
    assert "“Fleet › GPU count [GPUs]” is 100,000 GPUs but" in message, message
