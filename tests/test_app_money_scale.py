"""The sidebar's "Money in" scale applies to amounts (NPV, capex, revenue, debt), never to an
amount per unit: per GPU, per rack, per MW-year or per GPU-year figures stay in whole USD, as
prices per M tokens or per GPU-hour do, and their labels say USD (a review found the seed's NPV
of the gain per GPU, 10,395 USD, shown as "0.01" million USD on the Software gains page).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ import load_scenario
from econ.gains import value_gain
from econ.ui import state
from econ.ui.fmt import USD_PER_UNIT, format_metric, metric_kind, metric_label
from tests.test_app import APP, SEED, go, metric, summary_of

MILLION = "million USD"


def in_millions() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[state.MONEY] = MILLION
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("npv_usd_per_gpu", "NPV per GPU [USD]"),
        ("npv_usd_per_rack", "NPV per rack [USD]"),
        ("revenue_usd_per_rack_year", "Revenue per rack-year [USD]"),
        (
            "rental_earnings_usd_per_gpu_year",
            "Rental earnings, first year in service [USD/GPU-year]",
        ),
        ("npv_usd_per_mw", "NPV per MW [USD]"),  # a key the engine adds later
    ],
)
def test_an_amount_per_unit_keeps_usd_in_any_scale(key, label):
    assert metric_kind(key) == USD_PER_UNIT
    assert metric_label(key, MILLION) == label
    assert format_metric(key, {key: 10_395.4}, MILLION) == "10,395"
    assert format_metric(key, {key: -162_599.2}, "thousand USD") == "-162,599"


def test_the_gains_page_in_million_usd_shows_the_gain_per_gpu_in_usd():
    value = value_gain(load_scenario(SEED)).value
    at = go(in_millions(), "gains")
    assert metric(at, "NPV of the gain per GPU [USD]") == f"{value['npv_usd_per_gpu']:,.0f}"
    assert metric(at, "NPV of the gain per rack [USD]") == f"{value['npv_usd_per_rack']:,.0f}"
    fleet = metric(at, "NPV of the gain, fleet [million USD]")
    assert fleet == f"{value['npv_usd_fleet'] / 1e6:,.2f}"
    assert metric(at, "Capex avoided [million USD]") == f"{value['capex_avoided_usd'] / 1e6:,.2f}"
    table = next(df.value for df in at.dataframe if "with the gains" in df.value.columns)
    rows = dict(zip(table["metric"], table["with the gains"], strict=True))
    assert "NPV [million USD]" in rows and "Revenue per MW-year IT [USD]" in rows, list(rows)
    assert float(rows["Revenue per MW-year IT [USD]"].replace(",", "")) > 1e6  # whole USD


def test_the_results_page_in_million_usd_shows_the_npv_per_rack_in_usd():
    summary = summary_of()
    at = in_millions()
    assert metric(at, "NPV per rack [USD]") == f"{summary['npv_usd_per_rack']:,.0f}"
    assert metric(at, "NPV [million USD]") == f"{summary['npv_usd'] / 1e6:,.2f}"
    assert metric(at, "Capex [million USD]") == f"{summary['capex_usd_total'] / 1e6:,.2f}"
    every = next(df.value for df in at.dataframe if list(df.value.columns)[-1] == "key")
    shown = every.set_index("key")
    assert shown.loc["npv_usd_per_gpu", "metric"] == "NPV per GPU [USD]"
    assert shown.loc["npv_usd_per_gpu", "value"] == f"{summary['npv_usd_per_gpu']:,.0f}"
    assert shown.loc["npv_usd", "metric"] == "NPV [million USD]"


def test_a_monte_carlo_output_per_gpu_is_drawn_in_usd():
    import pandas as pd

    from econ.ui.pages.risk import _display

    values, axis, title = _display(pd.Series([10_395.4]), "npv_usd_per_gpu", MILLION)
    assert values.tolist() == [10_395.4] and axis == ",.0f" and title == "NPV per GPU [USD]"
    values, axis, title = _display(pd.Series([2.5e6]), "npv_usd", MILLION)
    assert values.tolist() == [2.5] and title == "NPV [million USD]"
