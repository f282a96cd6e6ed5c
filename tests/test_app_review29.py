"""Found by an infrastructure engineer's and a finance analyst's review of the Scenario and Power
pages with bad input (session 29): refresh month boxes that kept a 0 on screen while the page
went on with the month before, an IT power envelope refused in kW for a box in MW, and density
tiles reading "n/a" with no reason."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests import test_app
from tests.test_app import errors, go, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario

REFRESH = "h200-fleet-gb300-refresh"


@pytest.mark.parametrize(("box", "month"), [("From month", 0), ("To month", -5)])
def test_a_refresh_month_below_1_is_refused_naming_the_box_and_kept(app: AppTest, box, month):
    """The boxes had min_value=1: in the browser a 0 typed in "From month" stayed on screen while
    the page showed the refresh from month 18 and said nothing (AppTest: the box emptied and
    "Give the first and last candidate months." named neither box nor value)."""
    app.sidebar.selectbox[0].set_value(REFRESH).run()
    go(app, "power")
    widget(app.number_input, box).set_value(month).run()
    assert not app.exception
    expected = f"{box} {month} is before month 1; expected a month from 1 to 71."
    assert expected in errors(app), errors(app)
    assert widget(app.number_input, box).value == month  # what the user typed stays
    assert not [m for m in app.metric if m.label == "Best refresh month"]
