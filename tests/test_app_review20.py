"""The twentieth review of the app (its report's items by number): amounts cut at their first
thousands separator in messages, percent boxes answered in fractions, exponents in whole-number
boxes, a cost tile's change coloured as a gain, the measured curve's GPU count and SLO boxes,
facility prices told about electricity, and messages in command-line words.
"""

from __future__ import annotations

import copy
import re

import pytest
from streamlit.proto.Metric_pb2 import Metric as MetricProto
from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.scenario import ScenarioError, read_toml
from econ.scenario.io import validate_dict
from econ.ui import compute, state
from econ.ui.fmt import HEADLINE
from econ.ui.pages import results
from econ.ui.streamlit_app import PAGES
from tests.conftest import ROOT
from tests.test_app import DATA, errors, go, upload_curve, widget
from tests.test_app_links import opened, raw_link
from tests.test_app_review2 import open_app


@pytest.fixture
def app() -> AppTest:
    return open_app()


def seed() -> dict:
    return copy.deepcopy(read_toml(ready_made_scenarios()[DEFAULT_SCENARIO]))


def message_with(**edits) -> str:
    """The scenario's validation message with fields set by dotted path ("fleet__racks")."""
    data = seed()
    for path, value in edits.items():
        state.set_path(data, path.replace("__", "."), value)
    return state.validate(data).message


# --- 1. an amount with thousands separators, a product of two fields ------------------------------


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


# --- 2. a percent box's limit in percent ----------------------------------------------------------


def test_an_escalation_typed_in_percent_is_answered_in_percent():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    widget(at.number_input, "Escalation [%/year]").set_value(150.0).run()  # the Power tab's
    assert not at.exception
    text = " ".join(errors(at))
    assert (
        "150 %/year is above 100 %/year (the electricity price doubling every year of the "
        "horizon); expected at most 100 %/year" in text
    ), text
    assert "expected a fraction" not in text and "1.5" not in text


@pytest.mark.parametrize(
    ("path", "shown", "said"),
    [
        (
            "facility.escalation_annual",
            250,
            "Facility › Escalation [%/year]: 250 %/year is above 100 %/year (the colocation "
            "price doubling every year of the horizon); expected at most 100 %/year",
        ),
        (
            "throughput.gain_rate_annual",
            500,
            "Throughput › Gain rate [%/year]: 500 %/year is above 400 %/year (5x a year, beyond "
            "any same-hardware gain a year apart in the MLPerf history, 3.0x); expected at most "
            "400 %/year",
        ),
    ],
)
def test_a_rate_typed_in_percent_is_answered_in_percent(path, shown, said):
    assert message_with(**{path.replace(".", "__"): shown / 100}) == said


def test_the_scenario_file_keeps_its_fraction_hint():
    # a file holds the fraction: 1.5 there is 150%, and the message says what 1.5% would be
    with pytest.raises(ScenarioError, match=r"expected a fraction \(1.5% is 0.015\)"):
        validate_dict(state.merge(seed(), {"power": {"escalation_annual": 1.5}}))


# --- 3. whole-number boxes take exponents, and refuse what is not a whole number ------------------


def whole_number_boxes(at: AppTest) -> list:
    """The number boxes of whole-number fields: their values step by 1 and show no decimals."""
    return [w for w in at.number_input if w.proto.format == "%.0f"]


def test_whole_number_boxes_read_exponents_as_numbers(app: AppTest):
    # Streamlit's whole-number box (data type INT) reads "1e12" as 1 in the browser: the app's
    # are decimal boxes (tests/test_browser_review20.py types it)
    boxes = whole_number_boxes(app)
    assert [w.label for w in boxes] == ["Fleet › GPU count [GPUs]"]
    assert all(w.proto.data_type == NumberInputProto.FLOAT for w in boxes)
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(1e12).run()
    assert not app.exception
    text = " ".join(errors(app))
    assert "1,000,000,000,000 GPUs is above 100,000,000 GPUs" in text, text
    assert app.session_state[state.DATA]["fleet"]["gpu_count"] == 10**12


def test_every_whole_number_field_is_a_decimal_box_on_the_scenario_page():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    int_boxes = [w for w in at.number_input if w.proto.data_type == NumberInputProto.INT]
    assert not int_boxes, [w.label for w in int_boxes]
    assert {"Racks", "GPUs per rack", "Debt term [months]"} <= {
        w.label for w in whole_number_boxes(at)
    }


def test_a_fraction_in_a_whole_number_box_is_refused_and_kept_as_typed(app: AppTest):
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(2.5).run()
    assert not app.exception
    said = "Fleet › GPU count [GPUs]: 2.5 is not a whole number; expected a whole number"
    assert any(said in e for e in errors(app)), errors(app)
    assert app.session_state[state.DATA]["fleet"]["gpu_count"] == 72  # not cut to 2
    kept = widget(app.sidebar.text_input, "Fleet › GPU count [GPUs] (as typed)")
    assert kept.value == "2.5"
    kept.set_value("80").run()
    assert not errors(app), errors(app)
    assert widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").value == 80


def test_a_number_beyond_what_a_box_holds_is_refused():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    widget(at.number_input, "Horizon [months]").set_value(1e300).run()
    assert not at.exception
    said = "Horizon [months]: 1e+300 is beyond 9,007,199,254,740,991, the largest whole number"
    assert any(said in e for e in errors(at)), errors(at)
    assert widget(at.text_input, "Horizon [months] (as typed)").value == "1e+300"


@pytest.mark.parametrize("page", [name for name, _, _ in PAGES])
def test_no_page_has_a_box_that_reads_an_exponent_as_its_first_digit(app: AppTest, page):
    go(app, page)
    int_boxes = [w.label for w in app.number_input if w.proto.data_type == NumberInputProto.INT]
    assert not int_boxes, int_boxes


def test_a_page_box_for_a_whole_number_takes_an_exponent_and_refuses_a_fraction(app: AppTest):
    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(1e3).run()  # "1e3" typed
    assert not app.exception and not errors(app), errors(app)
    widget(app.number_input, "Seed").set_value(2.5).run()
    said = "“Seed”: 2.5 is not a whole number; expected a whole number from 0 to 9,007,199,"
    assert any(e.startswith(said) for e in errors(app)), errors(app)


# --- 4. a cost tile's rise is drawn red -----------------------------------------------------------

LOWER_WORDS = re.compile(r"cost|lcot|breakeven|payback|joules|loss")
"""Names of summary metrics whose rise is bad (econ.labels.SUMMARY_METRICS)."""


def test_every_cost_tile_is_lower_is_better():
    tiles = set(HEADLINE) | set(results.SECOND_ROW)
    costs = {k for k in tiles if LOWER_WORDS.search(k)}
    assert "cost_usd_per_gpu_hour" in costs  # the levelized cost per GPU-hour tile
    assert costs <= results.LOWER_IS_BETTER, costs - results.LOWER_IS_BETTER
    assert results.LOWER_IS_BETTER | results.NEITHER <= tiles  # no stale names


def test_a_rising_cost_per_gpu_hour_is_drawn_red(app: AppTest):
    widget(app.sidebar.number_input, "Facility › Colocation [USD/kW-month]").set_value(250.0).run()
    assert not app.exception
    tiles = {m.label: m.proto for m in app.metric if m.proto.delta}
    label = results.metric_label("cost_usd_per_gpu_hour", "USD")
    assert tiles[label].delta.startswith("+"), tiles[label].delta  # colocation is a cost
    assert tiles[label].color == MetricProto.MetricColor.RED
    npv = results.metric_label("npv_usd", "USD")
    assert tiles[npv].delta.startswith("-") and tiles[npv].color == MetricProto.MetricColor.RED
    capex = results.metric_label("capex_usd_total", "USD")
    assert capex not in tiles  # unchanged by the colocation price


# --- 5. the measured curve's GPU count ------------------------------------------------------------


def measured_tab(app: AppTest) -> AppTest:
    upload_curve(app, "sample_curve.csv", (DATA / "sample_curve.csv").read_bytes())
    assert not errors(app), errors(app)
    return app


def operating_point(at: AppTest) -> str | None:
    found = [m.value for m in at.metric if m.label.startswith("Measured operating point")]
    return found[0] if found else None


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        (0.0, "“GPUs that served it”: 0 is below 1; expected a whole number from 1 to 100,000"),
        (-3.0, "“GPUs that served it”: -3 is below 1; expected a whole number from 1 to 100,000"),
        (
            2.5,
            "“GPUs that served it”: 2.5 is not a whole number; expected a whole number "
            "from 1 to 100,000",
        ),
        (
            1e11,
            "“GPUs that served it”: 100,000,000,000 is above 100,000; expected a whole number "
            "from 1 to 100,000",
        ),
    ],
)
def test_a_gpu_count_the_box_cannot_take_is_refused_naming_the_box(app: AppTest, typed, said):
    measured_tab(app)
    assert operating_point(app) is not None
    widget(app.number_input, "GPUs that served it").set_value(typed).run()
    assert not app.exception
    assert errors(app) == [said]  # not "Reading the file: ...", nor the file's count instead
    assert operating_point(app) is None
    assert not [b for b in app.button if b.key == "econ.use_measured"]


def test_a_whole_gpu_count_typed_as_an_exponent_is_taken(app: AppTest):
    measured_tab(app)
    by_file = operating_point(app)
    widget(app.number_input, "GPUs that served it").set_value(1e1).run()  # "1e1" typed
    assert not errors(app), errors(app)
    assert operating_point(app) not in (None, by_file)


# --- 6. the measured curve's SLO messages in the boxes' words -------------------------------------


@pytest.mark.parametrize("box", ["TTFT p99 limit [s]", "TPOT p99 limit [ms]"])
@pytest.mark.parametrize("typed", [0.0, -1.0])
def test_a_limit_of_zero_or_less_is_refused_in_its_box(app: AppTest, box, typed):
    measured_tab(app)
    widget(app.number_input, box).set_value(typed).run()
    assert not app.exception
    assert errors(app) == [
        f"“{box}”: {typed:g} is not above 0; expected a limit above 0, or empty for no limit"
    ]
    assert operating_point(app) is None


def test_an_slo_no_point_meets_is_told_in_the_boxes_words_and_units(app: AppTest):
    from econ.throughput.importers import import_files
    from econ.throughput.operating_point import NoFeasiblePointError
    from econ.throughput.operating_point import operating_point as point

    measured_tab(app)
    widget(app.number_input, "TTFT p99 limit [s]").set_value(0.001).run()
    widget(app.number_input, "Minimum tokens/s per user").set_value(100_000.0).run()
    [said] = errors(app)
    assert "ttft_s_p99" not in said and "tokens_per_s_per_user" not in said, said
    assert "(TTFT p99 ≤ 0.001 s, tokens/s per user ≥ 100,000)" in said, said
    # the closest point, as the library finds it, in the page's words
    curve = import_files([DATA / "sample_curve.csv"], "auto", None)
    with pytest.raises(NoFeasiblePointError) as caught:
        point(curve, ttft_p99_s=0.001, min_tokens_per_s_per_user=100_000)
    closest = caught.value.closest
    per_gpu = closest["output_tokens_per_s_per_gpu"]
    assert f"{float(f'{per_gpu:.4g}'):,g} tokens/s per GPU with TTFT p99 = " in said, said
    speed = closest["tokens_per_s_per_user"]
    assert f"tokens/s per user = {speed:.4g} (limit 100,000)" in said, said


def test_the_library_limit_names_are_translated():
    assert compute.app_text("ttft_s_p99 = 0.4527 (limit 0.3).") == (
        "TTFT p99 = 0.4527 s (limit 0.3 s)."
    )
    assert compute.app_text("(tokens_per_s_per_user >= 1e+05)") == "(tokens/s per user ≥ 100,000)"
    assert compute.app_text("row 0: 3654 tokens/s per GPU") == "row 0: 3,654 tokens/s per GPU"
    assert compute.app_text("4,867.7 tokens/s per GPU") == "4,867.7 tokens/s per GPU"
    assert compute.app_text(
        "limit ttft_s_p99 = 0.0; expected a positive finite number (or NaN "
        "for no limit) per scenario"
    ) == ("limit TTFT p99 = 0 s; expected a positive finite number (or empty for no limit)")


def test_the_binding_limit_tile_groups_thousands():
    from econ.ui.pages.throughput import binding_label

    limits = {"tokens_per_s_per_user": 1e5}
    assert binding_label("tokens_per_s_per_user", limits) == "Tokens/s per user ≥ 100,000"


# --- 7. the source of a count typed in the box ----------------------------------------------------


def test_the_source_of_a_count_typed_in_the_box_reads_as_words(app: AppTest):
    measured_tab(app)
    widget(app.number_input, "GPUs that served it").set_value(4.0).run()
    confirm = [c for c in app.checkbox if c.label.startswith("Use it anyway")]
    if confirm:
        confirm[0].check().run()
    app.button(key="econ.use_measured").click().run()
    source = app.session_state[state.DATA]["throughput"]["source"]
    assert source.endswith(', GPU count 4 typed in "GPUs that served it"'), source
    assert "from given" not in source


# --- 8. a negative facility price is told about facilities ----------------------------------------


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("facility.colo_usd_per_kw_month", "Facility › Colocation [USD/kW-month]"),
        ("facility.capex_usd_per_mw", "Facility › Capex [USD/MW]"),
        ("facility.liquid_retrofit_usd_per_rack", "Facility › Liquid retrofit [USD/rack]"),
    ],
)
def test_a_negative_facility_price_has_its_own_reason(path, label):
    message = message_with(**{path.replace(".", "__"): -5})
    unit = label.rpartition("[")[2].rstrip("]")
    assert message == (
        f"{label}: -5 {unit} is below 0 {unit} (a facility's rent or build cost is paid, never "
        f"earned; 0 for none); expected at least 0 {unit}"
    )
    assert "wholesale" not in message


def test_a_negative_electricity_price_keeps_its_reason():
    assert "negative wholesale hours belong in the time-of-day shape" in message_with(
        power__price_usd_per_kwh=-0.05
    )


# --- 9. racks below 1 -----------------------------------------------------------------------------


@pytest.mark.parametrize(("racks", "shown"), [(0, "0 racks"), (-1, "-1 rack")])
def test_racks_below_one_are_refused_as_below_one(racks, shown):
    assert message_with(fleet__racks=racks) == (
        f"Fleet › Racks: {shown} is below 1 rack (expected at least 1 rack)"
    )
    with pytest.raises(ScenarioError) as caught:
        validate_dict(state.merge(seed(), {"fleet": {"racks": racks}}))
    assert caught.value.path == "fleet.racks" and "gpu_count" not in str(caught.value)


def test_racks_of_zero_typed_in_the_box_are_refused_under_it():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    widget(at.number_input, "Racks").set_value(0.0).run()
    assert not at.exception
    assert "0 racks is below 1 rack (expected at least 1 rack)" in errors(at), errors(at)


def test_a_count_per_rack_of_one_is_singular():
    assert message_with(fleet__racks=2, fleet__gpus_per_rack=0) == (
        "Fleet › GPUs per rack: 0 GPUs/rack is below 1 GPU/rack (expected at least 1 GPU/rack)"
    )


# --- 10. rules between sections: no bare ": ", no raw index, "1 month" ----------------------------


def test_a_step_beyond_the_horizon_is_named_by_its_row():
    step = seed()["throughput"]["steps"][0]["month"]
    assert message_with(horizon_months=3) == (
        f"“Throughput › Steps” row 1 at month {step} is beyond the horizon of 3 months; expected "
        "a month from 1 to 3"
    )
    assert message_with(horizon_months=1) == (
        f"“Throughput › Steps” row 1 at month {step} is beyond the horizon of 1 month; expected "
        "month 1"
    )


def test_a_rule_of_the_whole_scenario_names_every_field_by_its_label():
    message = message_with(fleet__service_start_month=50)
    assert message.startswith(
        "debt sizing (“Financing › Size to min DSCR [x]”, “Financing › "
        "Max LTV [%]” or “Financing › Repayment” = 'sculpted'"
    ), message
    assert "max_ltv" not in message and "repayment =" not in message


def test_the_scenario_page_shows_a_rule_of_the_whole_scenario_without_a_bare_colon():
    at = open_app(DEFAULT_SCENARIO, "scenario")
    widget(at.number_input, "Horizon [months]").set_value(3.0).run()
    assert not at.exception
    said = [e for e in errors(at) if "beyond the horizon" in e]
    assert said and all("\n\n“Throughput › Steps” row 1 at month" in e for e in said), said
    assert not any("[0]" in e for e in said), said


# --- 11. the Power page's sizing messages in its boxes' words -------------------------------------

SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b|--[a-z]")


@pytest.mark.parametrize(
    ("box", "typed", "said"),
    [
        ("PUE", 0.5, "Sizing: the PUE = 0.5: expected a PUE from 1 to 3"),
        (
            "Hall limit per rack [kW]",
            0.0,
            "Sizing: the hall limit per rack = 0: expected a limit above 0 and at most 2000 kW per "
            "rack; empty the box for a hall without a limit",
        ),
        ("Hall limit per rack [kW]", 20.0, "(raise the hall limit per rack, e.g. a liquid-cooled"),
    ],
)
def test_the_sizing_messages_speak_of_the_pages_boxes(app: AppTest, box, typed, said):
    go(app, "power")
    widget(app.number_input, box).set_value(typed).run()
    assert not app.exception
    [message] = [e for e in errors(app) if e.startswith("Sizing: ")]
    assert said in message, message
    assert "scenario file" not in message and "option" not in message, message
    assert not SNAKE.search(message), message


# --- 12. a link's edit of the wrong type ----------------------------------------------------------


def test_a_boolean_gpu_count_from_a_link_is_not_quoted_as_none():
    at = opened(raw_link('{"fleet":{"gpu_count":true}}'), page="scenario")
    said = " ".join(errors(at))
    assert (
        "Fleet › GPU count [GPUs]: true is a boolean; expected the number (or text) the field "
        "takes, not true or false" in said
    ), said
    assert "None" not in said


def test_text_where_a_section_belongs_is_told_in_words():
    at = opened(raw_link('{"fleet":"oops"}'), page="scenario")
    said = " ".join(errors(at))
    assert "Fleet = 'oops': text, not a table; expected one table ([fleet])" in said, said
    assert "Input should be" not in said and "instance of" not in said
    with pytest.raises(ScenarioError, match=r"fleet = 'oops': text, not a table"):
        validate_dict(state.merge(seed(), {"fleet": "oops"}))


# --- 13. absurd figures: a warning, and tiles and messages that stay short ------------------------


def test_an_absurd_throughput_is_warned_of_against_the_catalogs_highest(app: AppTest):
    from econ.benchmarks import load_catalog

    highest = load_catalog()["tokens_per_s_per_gpu"].max()  # (NaN rows skipped)
    widget(app.sidebar.number_input, "Throughput › Output tokens/s per GPU").set_value(1e23).run()
    assert not app.exception
    said = " ".join(w.value for w in app.sidebar.warning)
    assert "1e+23 tokens/s per GPU is more than 10 times the highest per-GPU throughput" in said
    assert f"({highest:,.0f} tokens/s, " in said, said
    tiles = {m.label: m.value for m in app.metric}
    assert all(len(v) <= 14 for v in tiles.values()), tiles  # one line on a tile
    assert re.fullmatch(r"\d\.\d{3}e\+\d\dx", tiles["Minimum DSCR [x]"]), tiles
    shown = [c.value for c in app.caption] + [w.value for w in app.warning]
    assert not any(re.search(r"\d[\d,]{18,}", t) for t in shown), shown


def test_a_throughput_within_ten_times_the_catalog_is_not_warned_of():
    from econ import load_scenario
    from econ.ui.checks import highest_measured, sanity_warnings

    scenario = load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO])
    highest, _ = highest_measured()
    fast = scenario.model_copy(
        update={
            "throughput": scenario.throughput.model_copy(
                update={"tokens_per_s_per_gpu": 9.9 * highest}
            )
        }
    )
    assert not sanity_warnings(fast)


def test_huge_figures_are_written_in_exponent_form():
    from econ.ui.fmt import format_change, format_value

    assert format_value(38051075456631373824.0, "ratio") == "3.805e+19x"
    assert format_value(-1.2e20, "usd") == "-1.2e+20"
    assert format_value(1.2e20, "usd", "million USD") == "1.2e+14"
    assert format_change(1.2e20, "usd") == "+1.2e+20"
    assert format_value(999e9, "usd") == "999,000,000,000"  # below a trillion: in full
    assert format_value(4.6e13, "tokens") == "46.00 trillion"  # tokens keep their words
    # A review: 1,000 racks of the seed (72,000 GPUs) showed "5.51e+16" tokens over the horizon.
    from econ import project

    fleet = validate_dict(state.merge(seed(), {"fleet": {"gpu_count": 72_000}}))
    tokens = float(project(fleet).summary.iloc[0]["tokens_total"])
    words = f"{tokens / 1e15:.2f} quadrillion"
    assert format_value(tokens, "tokens") == words
    assert format_change(tokens, "tokens").endswith(words)
    # docs/app.md quotes it (it said "55.05" where the projection gives 5.5101e16)
    page = " ".join((ROOT / "docs" / "app.md").read_text(encoding="utf-8").split())
    assert f'("{words}" for 72,000 GB200s' in page
    assert format_value(2e21, "tokens") == "2e+21"


def test_a_huge_escalation_is_not_written_out_in_full():
    with pytest.raises(ScenarioError) as caught:
        validate_dict(state.merge(seed(), {"power": {"escalation_annual": 1e300}}))
    assert "1e+302% a year" in str(caught.value) and "0" * 20 not in str(caught.value)
    assert "1e+302 %/year is above 100 %/year" in message_with(power__escalation_annual=1e300)


def test_a_refused_number_in_an_emptied_box_is_the_one_problem_named(app: AppTest):
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(None).run()
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(1e21).run()
    said = [e for e in errors(app) if e.startswith("The scenario is not valid")]
    assert len(said) == 1 and "is empty" not in said[0], said
    assert "Fleet › GPU count [GPUs]: 1e+21 is beyond 9,007,199,254,740,991" in said[0], said
