"""The Power and fleet page's hall sizing through AppTest, after an infrastructure review: the
bounds of its inputs, the air hall's density limit, cooling that contradicts the rack catalog,
and what "Use N GPUs" changes besides the fleet."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests import test_app
from tests.test_app import errors, go, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario


def warnings_of(at: AppTest) -> list[str]:
    return [test_app.shown(w.value) for w in at.warning]


def test_a_pue_or_hall_limit_outside_the_scenario_bounds_is_an_error_in_the_page_words(app):
    go(app, "power")
    widget(app.number_input, "PUE").set_value(1e9).run()
    assert not app.exception
    assert any("PUE = 1e+09: expected a PUE from 1 to 3" in e for e in errors(app)), errors(app)
    widget(app.number_input, "PUE").set_value(None).run()
    widget(app.number_input, "Hall limit per rack [kW]").set_value(0.0).run()
    assert not app.exception
    found = [e for e in errors(app) if "expected a limit above 0 kW per rack" in e]
    assert found and "--" not in found[0], errors(app)


def test_an_air_hall_warns_of_a_rack_above_its_density_limit(app):
    go(app, "power")
    assert not any("air-cooled hall" in w for w in warnings_of(app))  # GB200 NVL72, liquid
    widget(app.selectbox, "Hardware").set_value("b300-sxm").run()
    assert not app.exception
    found = [w for w in warnings_of(app) if "air-cooled hall" in w]
    assert found and "58 kW rack" in found[0] and "20 kW per rack" in found[0], warnings_of(app)
    assert "--" not in found[0]  # the page's words, not the command line's
    widget(app.number_input, "Hall limit per rack [kW]").set_value(60.0).run()
    assert not any("air-cooled hall" in w for w in warnings_of(app))


def test_air_cooled_racks_in_a_liquid_hall_are_warned_of(app):
    go(app, "power")
    widget(app.selectbox, "Hardware").set_value("h100-sxm").run()
    widget(app.selectbox, "Hall cooling").set_value("liquid").run()
    assert not app.exception
    found = [w for w in warnings_of(app) if "in a liquid-cooled hall" in w]
    assert found and "PUE 1.1" in found[0] and "--" not in found[0], warnings_of(app)
