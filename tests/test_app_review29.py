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
NONE = "(none: the installed fleet's)"


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


@pytest.mark.parametrize(
    ("mw", "message"),
    [
        (-1.0, f"an IT power envelope of -1 MW; expected an envelope above 0 MW {NONE}"),
        (0.0, f"an IT power envelope of 0 MW; expected an envelope above 0 MW {NONE}"),
        (
            0.1,
            "an IT power envelope of 0.1 MW (100 kW) holds no whole rack of 'gb300' (72 GPUs x "
            "1.8333 kW of IT load, 131.998 kW); expected at least 0.131998 MW",
        ),
    ],
)
def test_an_it_power_envelope_is_refused_in_mw_as_it_was_given(mw, message):
    """-1 MW typed in the Power page's "IT power envelope [MW]" box read "an IT power envelope of
    -1,000 kW holds no whole rack of 'gb300' ...; expected at least 132 kW": neither the value
    typed nor its unit, and a negative envelope refused as too small for a rack."""
    from econ import load_scenario
    from econ.fleet import RefreshError, refresh_analysis
    from tests.conftest import ROOT

    scenario = load_scenario(ROOT / "models" / "scenarios" / f"{REFRESH}.toml")
    with pytest.raises(RefreshError) as caught:
        refresh_analysis(scenario, "gb300", months=[20], power_mw=mw)
    assert str(caught.value) == message


def test_the_envelope_box_answers_a_negative_envelope_in_its_unit(app: AppTest):
    app.sidebar.selectbox[0].set_value(REFRESH).run()
    go(app, "power")
    widget(app.number_input, "IT power envelope [MW]").set_value(-1.0).run()
    assert not app.exception
    found = [e for e in errors(app) if "IT power envelope of -1 MW" in e]
    assert found and "expected an envelope above 0 MW" in found[0], errors(app)
    assert widget(app.number_input, "IT power envelope [MW]").value == -1.0


def test_density_tiles_that_read_n_a_say_why(app: AppTest):
    """At 0 % utilization the Power page's energy-per-token and power-cost tiles read "n/a" and a
    token price of 1e300 USD/M tokens its revenue tiles, with nothing on the page saying why: the
    engine's warnings naming them (no tokens served; an overflow) were on Results only."""
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(0.0).run()
    go(app, "power")
    assert [m.value for m in app.metric if m.label == "Power cost [USD/M tokens]"] == ["n/a"]
    said = [test_app.shown(w.value) for w in app.main.warning]
    assert any("Power cost are n/a: no tokens are served" in w for w in said), said
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(70.0).run()
    widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(1e300).run()
    said = [test_app.shown(w.value) for w in app.main.warning]
    assert any(
        "Revenue per rack-year" in w and "n/a: the inputs overflow floating point" in w
        for w in said
    ), said


def test_why_missing_takes_only_the_warnings_naming_a_missing_tile():
    from econ.ui.pages.power import why_missing

    summary = {
        "joules_per_token_it": None,
        "power_cost_usd_per_mtok": 0.01,
        "warnings": ["joules_per_token_it is null: no tokens", "power_cost_usd_per_mtok is odd"],
    }
    keys = ["joules_per_token_it", "power_cost_usd_per_mtok"]
    assert why_missing(summary, keys) == ["joules_per_token_it is null: no tokens"]
    assert why_missing({"warnings": ["x"], "power_cost_usd_per_mtok": 1.0}, keys[1:]) == []


def _apply_toml(app: AppTest, text: str) -> AppTest:
    box = widget(app.text_area, "The whole scenario as TOML")
    box.set_value(text).run()
    widget(app.button, "Apply the TOML").click().run()
    assert not app.exception
    return app


def test_toml_text_over_the_upload_limit_is_refused_as_an_upload_is_and_kept(app: AppTest):
    """The upload box refuses a scenario file over 1 MB; the TOML box took any size: 18 MB pasted
    (the seed and 90,000 sources) cost the server 4.4 s to parse and validate, and again on every
    rerun while the invalid scenario stayed loaded."""
    from econ.scenario.io import MAX_SCENARIO_BYTES

    go(app, "scenario")
    text = widget(app.text_area, "The whole scenario as TOML").value
    text += "\n# " + "x" * MAX_SCENARIO_BYTES + "\n"
    _apply_toml(app, text)
    found = [e for e in errors(app) if e.startswith("The TOML text was not applied: ")]
    assert found and "MB of text is larger than the 1 MB limit for scenario files" in found[0]
    assert widget(app.text_area, "The whole scenario as TOML").value == text
    assert "uploaded" not in app.caption[0].value and "(edited)" not in app.caption[0].value


def test_empty_toml_text_is_refused_as_text_not_as_a_file(app: AppTest):
    go(app, "scenario")
    _apply_toml(app, "  \n")
    assert "The TOML text was not applied: the text is empty; expected a TOML scenario" in errors(
        app
    ), errors(app)


def test_the_sized_capex_help_names_every_part_the_tile_adds(app: AppTest):
    """The Capex tile's help listed networking, storage and installation, not the spares share
    nor the rest of the scenario's capex, which the tile (the projection's capex) and the
    caption's parts both add."""
    go(app, "power")
    tile = [m for m in app.metric if m.label.startswith("Capex")][0]
    for part in ("spares", "networking", "storage", "installation", "retrofit", "owned hall"):
        assert part in tile.proto.help, (part, tile.proto.help)


def test_a_percent_box_help_says_its_unit_where_the_description_gives_fractions(app: AppTest):
    """ "Market › Price decline [%/year]" showed 30.00 with the help "Annual fall of the token
    price, e.g. 0.3; 0.9 is 10x a year [fraction/year]": typed as the help says, 0.3 is
    0.3 %/year. Every percent box's help now says its unit and the factor."""
    box = widget(app.sidebar.number_input, "Market › Price decline [%/year]")
    assert box.value == 30.0
    assert "This box is in %/year: the description's fractions times 100" in box.help
    share = widget(app.sidebar.number_input, "Utilization › Share [%]")
    assert "This box is in %: the description's fractions times 100" in share.help
    life = widget(app.sidebar.number_input, "Depreciation › Life [years]")
    assert "This box is in" not in life.help


def test_a_scenario_from_a_newer_econ_is_refused_as_the_command_line_refuses_it(app: AppTest):
    """`econ validate` says "schema_version = 2: this file was written by a newer econ; ...
    (upgrade econ to read it)"; the upload loaded it and said "2 is above 1; expected a whole
    number from 1 to 1", in a field the form does not show."""
    from tests.conftest import ROOT

    text = (ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml").read_text()
    newer = text.replace("schema_version = 1", "schema_version = 2").encode()
    go(app, "scenario")
    app.get("file_uploader")[0].upload("newer.toml", newer, "application/toml").run()
    assert not app.exception
    assert (
        "newer.toml: schema_version = 2: this file was written by a newer econ; expected "
        "schema_version 1 or older (upgrade econ to read it). The current scenario is unchanged."
    ) in errors(app), errors(app)
    assert "uploaded" not in app.caption[0].value


@pytest.mark.parametrize(
    ("month", "said"), [(0, "0 is below 1"), (40, "40 is above 36"), (73, "73 is above 36")]
)
def test_the_gains_step_month_is_refused_in_words_and_kept(app: AppTest, month, said):
    """The Gains page's "Step month" box had min_value=1, as the refresh boxes had: a 0 typed in
    it stayed on screen while the page went on with the month before, saying nothing; one past the
    seed's 72-month horizon was refused as the solver's "throughput.steps[0] at month 85". The
    box ends at the shortest life solved (3 years, month 36, review 31): a month 40 was taken and
    the whole chart refused as "row 0: the base scenario's throughput step at month 40 is beyond
    the horizon of 36 months (horizon_months / depreciation.life_years)"."""
    go(app, "gains")
    widget(app.toggle, "Solve the break-even gains").set_value(True).run()
    widget(app.selectbox, "Gain as").set_value("step").run()
    widget(app.number_input, "Step month").set_value(month).run()
    assert not app.exception
    expected = f"“Step month”: {said}; expected a whole number from 1 to 36"
    assert expected in errors(app), errors(app)
    assert widget(app.number_input, "Step month").value == month
    widget(app.number_input, "Step month").set_value(5).run()
    assert not errors(app), errors(app)
    widget(app.selectbox, "Gain as").set_value("rate").run()
    widget(app.toggle, "Solve the break-even gains").set_value(False).run()
