"""The app's gains page takes a step from two catalog rows, with the caveats as warnings."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from econ import load_scenario
from econ.benchmarks import catalog_step
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.gains import step_from_catalog, value_gain, with_steps
from econ.ui.fmt import literal
from tests.test_app import APP, errors, go, metric, widget

FROM_ID, TO_ID = "v6.0-6f6e7f09", "v6.1-48ef0995"  # CoreWeave GB200 deepseek-r1 Server


def test_gains_page_takes_a_step_from_two_catalog_rows():
    seed = load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO])
    step, caveats = step_from_catalog(seed, FROM_ID, TO_ID)
    assert step["gain"] == catalog_step(FROM_ID, TO_ID).gain
    expected = value_gain(with_steps(seed, [step]))
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "gains")
    widget(at.text_input, "Or a step from two catalog rows: earlier row id").set_value(FROM_ID)
    widget(at.text_input, "later row id").set_value(TO_ID).run()
    assert not at.exception and not errors(at), errors(at)
    assert metric(at, "NPV of the gain per rack [USD]") == (
        f"{expected.value['npv_usd_per_rack']:,.0f}"
    )
    shown = [w.value for w in at.warning]
    assert "the compared rows have different system sizes: 64, 72" in shown
    assert all(c in shown for c in caveats)
    widget(at.text_input, "later row id").set_value("v6.1-zzzzzzzz").run()
    assert not at.exception
    assert any("Step from the catalog" in e and "no catalog row" in e for e in errors(at))


def test_gain_trajectory_of_a_scenario_named_base():
    """The gains page projects the scenario without its gains (named "base") beside it in one
    batch: a scenario itself named "base" must not share that name (a batch refuses it)."""
    from econ.scenario import dumps
    from econ.ui import compute

    seed = load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO], {"name": "base"})
    monthly = compute.gain_monthly(dumps(seed))
    assert sorted(monthly["scenario"].unique()) == ["base", "gains"]
    with_gains = monthly[monthly["scenario"] == "gains"]["tokens"].sum()
    assert with_gains > monthly[monthly["scenario"] == "base"]["tokens"].sum()


def test_gains_page_warns_of_a_percentage_typed_without_its_sign():
    """A step typed "12:30" was valued as +3,000% with no word that 30 is read as a fraction
    (review 31); the page says so as `econ gains --step 12:30` does."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "gains")
    box = "Try other steps instead (one per line: WHEN:GAIN or WHEN:GAIN:LABEL)"
    widget(at.text_area, box).set_value("12:30\n18:+10%").run()
    assert not at.exception and not errors(at), errors(at)
    assert literal(
        "--step '12:30': a gain without % is a fraction, so 30 is +3000.0%; write 30% for +30.0%"
    ) in [w.value for w in at.warning]
    widget(at.text_area, box).set_value("12:30%").run()
    assert not any("a gain without %" in w.value for w in at.warning)
