"""Found by a finance analyst's and an infrastructure engineer's review of the Power, Gains,
Library and Export pages in a real browser (session 19): the refresh table's IRR as a raw
fraction, refresh month boxes answered in the library's words, "+nan%" tiles, a catalog step
from one id or from the same row twice, and the Library diff's mixed column."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from econ.ui.fmt import readable
from tests import test_app
from tests.test_app import errors, go, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario

REFRESH = "h200-fleet-gb300-refresh"


def test_the_refresh_table_shows_the_irr_as_the_summary_does():
    table = pd.DataFrame(
        {"refresh_month": [18], "npv_usd": [8.6e6], "irr_project_annual": [0.1817]}
    )
    shown = readable(table, "million USD")
    assert list(shown.data.columns) == [
        "Refresh month",
        "NPV [million USD]",
        "Project IRR [%/year]",
    ]
    assert "18.2%" in shown.to_html() and "8.60" in shown.to_html()


def test_the_compare_table_is_sized_to_its_rows(app: AppTest):
    """It was a 375 px box showing 10 of its 13 rows (Capex, GPUs and Revenue per MW-year behind
    an inner scroll): sized tables set rows of a known height (common.table)."""
    from econ.ui.common import ROW_PX

    go(app, "compare")
    app.multiselect[0].set_value(["current scenario", "llama2-70b-h200"]).run()
    assert app.dataframe[0].proto.row_height == ROW_PX


def test_refresh_month_boxes_are_answered_in_their_own_words(app: AppTest):
    app.sidebar.selectbox[0].set_value(REFRESH).run()
    go(app, "power")
    widget(app.number_input, "From month").set_value(40).run()
    widget(app.number_input, "To month").set_value(30).run()
    assert (
        "From month 40 is after To month 30; expected the first candidate month at or before "
        "the last." in errors(app)
    )
    widget(app.number_input, "From month").set_value(18).run()
    widget(app.number_input, "To month").set_value(500).run()
    assert (
        "To month 500 is after the horizon's last month, 71; expected a month from 1 to 71."
        in errors(app)
    )


def test_gain_tiles_read_n_a_where_a_figure_is_undefined(app: AppTest):
    """At 0% utilization the base serves no tokens: the tiles read "+nan%"."""
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(0.0).run()
    go(app, "gains")
    tiles = {m.label: m.value for m in app.metric}
    shares = [v for k, v in tiles.items() if "Change in" in k]
    assert shares and all(v == "n/a" for v in shares), tiles
    assert not [v for v in tiles.values() if "nan" in v]


def test_a_catalog_step_needs_two_different_rows(app: AppTest):
    go(app, "gains")
    earlier = widget(app.text_input, "Or a step from two catalog rows: earlier row id")
    earlier.input("v6.0-6f6e7f09").run()
    assert (
        "Give both catalog row ids, the earlier and the later, for a step from the catalog."
        in errors(app)
    )
    widget(app.text_input, "later row id").input("v6.0-6f6e7f09").run()
    assert any(
        "catalog row v6.0-6f6e7f09 is given as both the earlier and the later row" in e
        for e in errors(app)
    ), errors(app)
