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
    found = [e for e in errors(app) if "expected a limit above 0 and at most 2000 kW per rack" in e]
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


def test_using_a_fleet_of_other_hardware_sets_its_catalog_figures_and_names_what_stays(app):
    # The review's case: 10 MW of H100 on the GB200 seed showed a capex of 347.4 M (H100s at the
    # GB200 price per GPU) and "Use" left the seed's liquid cooling, 1.87 kW per GPU and price.
    from econ import load_scenario
    from econ.racks import size
    from econ.ui import state
    from econ.ui.pages.power import fleet_capex_parts

    go(app, "power")
    widget(app.selectbox, "Hardware").set_value("h100-sxm").run()
    assert not app.exception
    result = size(mw=10.0, hardware="h100-sxm")
    gpus = result["gpus"]
    per_gpu = 1_254_000 / 32 + 4300 + 1750  # the catalog's H100 rack price, the seed's per GPU
    capex = f"{gpus * per_gpu:,.0f}"
    assert test_app.metric(app, "Capex [USD]") == capex
    priced = {"capex.gpu_price_usd": 1_254_000 / 32, "capex.system_price_usd": None}
    assert gpus * per_gpu == sum(
        fleet_capex_parts(load_scenario(test_app.SEED, priced), gpus).values()
    )
    before = [w for w in warnings_of(app) if "Still the scenario's" in w]
    assert before and "throughput.tokens_per_s_per_gpu (of gb200-nvl72)" in before[0]
    assert "capex.networking_usd_per_gpu" in before[0] and "power.kw_per_gpu" in before[0]
    next(b for b in app.button if b.label.startswith(f"Use {gpus:,} GPUs")).click().run()
    assert not app.exception
    data = app.session_state[state.DATA]
    assert data["fleet"]["hardware"] == "h100-sxm" and data["fleet"]["gpu_count"] == gpus
    assert data["facility"]["rack_cooling"] == "air" and data["facility"]["hall_cooling"] == "air"
    # the catalog's H100 figure: (40.8 kW rack + 6.52 kW network share) / 32 GPUs
    assert data["power"]["pue"] == 1.3 and data["power"]["kw_per_gpu"] == 1.47875
    assert data["capex"]["gpu_price_usd"] == 1_254_000 / 32
    assert data["capex"].get("system_price_usd") is None
    source = data["sources"]["power.kw_per_gpu"]
    assert "from the Power and fleet page" in source and "(was: 1.87" in source
    after = [w for w in warnings_of(app) if "Still the scenario's" in w]
    assert after and "throughput.tokens_per_s_per_gpu (of gb200-nvl72)" in after[0]
    assert not errors(app), errors(app)
    app.switch_page("econ/ui/pages/results.py").run()
    assert test_app.metric(app, "Capex [USD]") == capex


def test_hardware_without_a_catalog_price_labels_the_capex_by_the_price_it_uses(app):
    go(app, "power")
    widget(app.selectbox, "Hardware").set_value("b300-sxm").run()
    assert not app.exception
    labels = [m.label for m in app.metric]
    assert "Capex at gb200-nvl72's price [USD]" in labels and "Capex [USD]" not in labels
    left = [w for w in warnings_of(app) if "Still the scenario's" in w]
    assert left and "the rack catalog has no price for b300-sxm" in left[0]


def test_the_budget_caption_says_what_the_capex_it_checks_includes(app):
    """`econ size` now counts the scale-out network and installation per GPU: the caption
    called the whole capex "the rack catalog's price"."""
    go(app, "power")
    assert not app.exception
    (caption,) = [c.value for c in app.caption if "capex budget limit" in c.value]
    assert "The rack catalog's price" not in caption
    assert "racks, scale-out network (" in caption and "installation (1,750 USD per GPU)" in caption


def test_use_after_sizing_the_scenarios_hardware_in_another_hall_takes_that_hall():
    # A review (31): the GB300 hall (air retrofitted for liquid, PUE 1.3) sized in a liquid hall
    # at 10 MW at the meter placed 61 racks at PUE 1.1; "Use" kept the hall at 1.3, so Results
    # drew 11.6 MW at the meter, though the button's help said a changed hall is set.
    from econ.ui import state
    from tests.test_app_review23 import HALL, open_scenario

    at = open_scenario(HALL, "power")
    widget(at.selectbox, "Hall cooling").set_value("liquid").run()
    widget(at.selectbox, "Budget measured at").set_value("utility").run()
    assert not at.exception and test_app.metric(at, "GPUs") == "4,392"
    use = next(b for b in at.button if b.label.startswith("Use 4,392 GPUs"))
    assert "the sized hall's cooling and PUE" in use.help
    use.click().run()
    assert not at.exception
    data = at.session_state[state.DATA]
    assert data["facility"]["hall_cooling"] == "liquid" and data["power"]["pue"] == 1.1


def test_the_page_says_what_the_power_budget_is(app):
    # A review (31): `econ size` says on its second line that the budget is usable critical IT
    # capacity after the hall's redundancy, every rack at its maximum draw at once; the page said
    # it nowhere, so a 2N hall's 20 MW installed typed as its budget placed twice the racks.
    from tests.test_app_review23 import caption_text

    go(app, "power")
    shown = caption_text(app)
    assert (
        "Basis: power is usable critical IT capacity, after the hall's N+1 or 2N redundancy, "
        "with every rack at its maximum draw at once, loaded to 100% of it (planners fill halls "
        "to 0.8-0.9)." in shown
    ), shown
    widget(app.selectbox, "Budget measured at").set_value("utility").run()
    shown = caption_text(app)
    assert "Basis: power is the supply at the meter (the utility meter as the budget's " in shown
    assert "--" not in next(line for line in shown.splitlines() if line.startswith("Basis:"))


def test_a_budget_for_hardware_without_a_price_names_what_the_page_can_do(app):
    # A review (31): a capex budget for b300-sxm (no price in the rack catalog) was refused with
    # "expected --capex-usd-per-rack", an option this page has no box for.
    go(app, "power")
    widget(app.selectbox, "Hardware").set_value("b300-sxm").run()
    widget(app.number_input, "Capex budget [USD]").set_value(1e8).run()
    assert not app.exception
    (found,) = [e for e in errors(app) if "needs a price per rack" in e]
    assert found.endswith(
        "expected the capex budget box empty for it (this page takes no price per rack; econ "
        "size --capex-usd-per-rack does)"
    ), found
