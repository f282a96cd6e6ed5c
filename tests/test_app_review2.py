"""The second browser review of the app (its report's defects by number): the Throughput page
starts on the scenario's own model, page actions cite their edits, a capital stack's financing
levers, validation messages in the form's words, and number formats.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ.ui import state
from tests.test_app import APP, errors, go, widget


def open_app(scenario: str | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    if scenario:
        at.query_params["scenario"] = scenario
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    return at


def buttons(at: AppTest, start: str) -> list[str]:
    return [b.label for b in at.button if b.label.startswith(start)]


# --- 1. the Throughput page starts on the scenario's model -----------------------------------------


@pytest.mark.parametrize(
    ("scenario", "model", "row"),
    [
        ("deepseek-r1-gb200-nvl72", "deepseek-r1", "4,867.7"),
        ("gpt-oss-120b-b200", "gpt-oss-120b", "11,232.0"),
    ],
)
def test_the_catalog_and_simulator_start_on_the_scenarios_model(scenario, model, row):
    at = open_app(scenario, "throughput")
    models = [s for s in at.selectbox if s.label == "Model"]
    assert [s.value for s in models] == [model, model]
    picked = widget(at.selectbox, "Row")
    assert row in picked.format_func(picked.value) and "(the scenario's)" in picked.format_func(
        picked.value
    )
    assert f"Use {row} tokens/s per GPU in the scenario" in buttons(at, "Use")


def test_a_scenario_that_names_no_model_gets_no_model_and_no_use_button():
    # llama2-70b-h200 edited to a throughput no catalog row has, and no simulated section
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = "llama2-70b-h200"
    at.query_params["edits"] = state.encode({"throughput": {"tokens_per_s_per_gpu": 4100.0}})
    at.run()
    assert not at.exception, at.exception
    go(at, "throughput")
    models = [s for s in at.selectbox if s.label == "Model"]
    assert [s.value for s in models] == [None, None]
    assert not buttons(at, "Use "), buttons(at, "Use ")
    hints = [i.value for i in at.info if "does not say which model" in i.value]
    assert len(hints) == 2 and "llama2-70b" in hints[0]
    # the user chooses; then the rows and the simulated figure are those of the model chosen
    models[0].set_value("llama2-70b").run()
    assert not at.exception
    assert buttons(at, "Use ")


def test_the_model_follows_a_switch_to_another_scenario():
    at = open_app("deepseek-r1-gb200-nvl72", "throughput")
    at.sidebar.selectbox[0].set_value("gpt-oss-120b-b200").run()
    assert not at.exception
    assert [s.value for s in at.selectbox if s.label == "Model"] == ["gpt-oss-120b"] * 2
    assert widget(at.selectbox, "Hardware").value == "b200-sxm"


def test_a_simulated_source_names_the_model():
    from econ.scenario import Scenario
    from econ.ui.checks import stated_model

    base = Scenario()
    simulated = base.model_copy(
        update={
            "throughput": base.throughput.model_copy(
                update={"source": "simulated: llama3.1-8b on h200-sxm at fp8, MLPerf server"}
            )
        }
    )
    assert stated_model(simulated)[0] == "llama3.1-8b"
    free_text = base.model_copy(
        update={"throughput": base.throughput.model_copy(update={"source": "a llama2-70b run"})}
    )
    assert stated_model(free_text) == (None, "")


# --- 2. page actions cite their edits as the sidebar does ------------------------------------------


def test_using_the_sized_fleet_cites_it_in_sources_and_the_description():
    at = open_app("deepseek-r1-gb200-nvl72", "power")
    before = at.session_state[state.BASE]["sources"]["fleet.gpu_count"]
    use = next(b for b in at.button if b.label.startswith("Use ") and "GPUs of" in b.label)
    use.click().run()
    assert not at.exception
    data = at.session_state[state.DATA]
    assert data["fleet"]["gpu_count"] > 72
    source = data["sources"]["fleet.gpu_count"]
    assert source.startswith("edited in the app on ") and "from the Power and fleet page" in source
    assert "MW budget" in source and "(was: 72" in source and before in source
    assert "Fleet › GPU count [GPUs]" in data["description"], data["description"]
    assert "Edited in the app on" in data["description"]
    # the sidebar shows the note too
    assert any("Edited in the app on" in c.value for c in at.sidebar.caption)


def test_using_a_simulated_figure_cites_it_and_lists_it_in_the_description():
    at = open_app("gpt-oss-120b-b200", "throughput")
    at.button(key="econ.use_simulated").click().run()
    assert not at.exception
    data = at.session_state[state.DATA]
    source = data["sources"]["throughput.tokens_per_s_per_gpu"]
    assert source.startswith("edited in the app on ")
    assert "from the Throughput page: simulated: gpt-oss-120b on b200-sxm" in source
    assert "(was: 11,232.04 tokens/s" in source and "Nebius" in source
    assert "Throughput › Output tokens/s per GPU" in data["description"]


# --- 11. edit citations write money with separators ----------------------------------------------


def test_an_edit_citation_writes_money_with_separators_not_e_notation():
    at = open_app("hall-10mw-gb300-nvl72-liquid", "scenario")
    widget(at.number_input, "System price [USD]").set_value(3_500_000.0).run()
    assert not at.exception
    source = at.session_state[state.DATA]["sources"]["capex.system_price_usd"]
    assert "(was: 3,000,000 USD" in source, source
    assert "e+06" not in source


# --- 3. a capital stack's financing levers ------------------------------------------------------------


def test_a_capital_stack_hides_the_debt_share_and_loan_rate_and_says_where_to_edit():
    at = open_app("deepseek-r1-gb200-nvl72-capital-stack")
    labels = [w.label for w in at.sidebar.number_input]
    assert "Financing › Debt share [%]" not in labels
    assert "Financing › Debt rate [%/year]" not in labels
    assert "Financing › Discount rate [%/year]" in labels
    text = " ".join(c.value for c in at.sidebar.caption)
    assert "capital stack sets its financing" in text and "ddtl 55% of capex" in text
    assert "Financing tab" in text and "Tranches (TOML)" in text
    # a scenario without tranches keeps both levers
    at.sidebar.selectbox[0].set_value("deepseek-r1-gb200-nvl72").run()
    labels = [w.label for w in at.sidebar.number_input]
    assert "Financing › Debt share [%]" in labels and "Financing › Debt rate [%/year]" in labels


# --- 4. validation messages name the form's fields, never a section's dict ----------------------------


def test_two_prices_given_name_both_fields_and_say_to_clear_one():
    at = open_app("deepseek-r1-gb200-nvl72", "scenario")
    widget(at.number_input, "GPU price [USD/GPU]").set_value(40_000.0).run()
    assert not at.exception
    text = " ".join(errors(at))
    assert "“Capex › GPU price [USD/GPU]” and “Capex › System price [USD]” are both given" in text
    assert "40,000 USD/GPU and 3,100,000 USD" in text and "clear one of them" in text
    assert "{" not in text and "gpu_price_usd" not in text and "system_price_usd" not in text


def test_a_debt_share_beside_tranches_and_a_bound_are_named_by_label_without_a_dict():
    from econ.catalog import ready_made_scenarios
    from econ.scenario import read_toml

    data = read_toml(ready_made_scenarios()["deepseek-r1-gb200-nvl72-capital-stack"])
    data["financing"]["debt_share"] = 0.5
    message = state.validate(data).message
    assert "{" not in message and "'tax_rate'" not in message
    assert "“Financing › Debt share [%]” is 50 % and “Financing › Tranches” are given" in message
    data["financing"]["debt_term_months"] = 0
    message = state.validate(data).message
    assert "Financing › Debt term [months]: 0 months is below 1 month" in message


# --- 5. money in thousand or million USD keeps a loss's sign ---------------------------------------


def test_a_small_loss_in_million_usd_keeps_its_sign_and_digits():
    from econ.ui.fmt import format_change, format_value

    assert format_value(-1_137.0, "usd", "million USD") == "-0.0011"
    assert format_value(1_137.0, "usd", "million USD") == "0.0011"
    assert format_value(-9_054.0, "usd", "million USD") == "-0.01"
    assert format_value(-0.7, "usd", "million USD") == "-0.0000"
    assert format_value(-1e-9, "usd", "million USD") == "0.0000"  # noise is no loss
    assert format_value(-1_137.0, "usd") == "-1,137"
    assert format_change(-1_137.0, "usd", "million USD") == "-0.0011"


def test_the_npv_tile_in_million_usd_shows_a_small_loss():
    # the report's case: the seed at a GPU price of 40,000, 4 years, 50% debt, 0.3190 USD/M tokens
    edits = {
        "capex": {"gpu_price_usd": 40_000.0, "system_price_usd": None},
        "depreciation": {"life_years": 4.0},
        "financing": {"debt_share": 0.5},
        "market": {"price_usd_per_mtok": 0.319},
    }
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = "deepseek-r1-gb200-nvl72"
    at.query_params["edits"] = state.encode(edits)
    at.run()
    usd = next(m.value for m in at.metric if m.label == "NPV [USD]")
    assert -5_000 < float(usd.replace(",", "")) < 0, usd
    at.session_state[state.MONEY] = "million USD"
    at.run()
    npv = next(m.value for m in at.metric if m.label == "NPV [million USD]")
    assert npv.startswith("-0.00") and float(npv) != 0, npv


# --- 12. the binding limit in the SLO boxes' words ----------------------------------------------------


def test_the_binding_limit_is_named_as_the_slo_boxes_name_it():
    from econ.ui.pages.throughput import binding_label

    assert binding_label("tpot_s_p99", {"tpot_s_p99": 0.02}) == "TPOT p99 ≤ 20 ms"
    assert binding_label("ttft_s_p99", {"ttft_s_p99": 0.2}) == "TTFT p99 ≤ 0.2 s"
    assert binding_label("ttft_s_p90, tpot_s_p90", {"ttft_s_p90": 2.0, "tpot_s_p90": 0.04}) == (
        "TTFT P90 ≤ 2 s, TPOT P90 ≤ 40 ms"
    )
    assert binding_label("highest measured load", {}) == "Highest measured load"


def test_the_measured_curve_tile_shows_the_tpot_limit_in_ms():
    from tests.test_app import DATA, upload_curve

    at = open_app()
    path = DATA / "sample_curve.csv"
    upload_curve(at, path.name, path.read_bytes())
    widget(at.number_input, "TPOT p99 limit [ms]").set_value(20.0).run()
    assert not at.exception
    tile = next(m.value for m in at.metric if m.label == "Binding limit")
    assert tile == "TPOT p99 ≤ 20 ms", tile


# --- 16. upload boxes show the limit the app applies -------------------------------------------------


@pytest.mark.parametrize(("page", "limit_mb"), [("scenario", 1), ("throughput", 5), ("market", 1)])
def test_each_upload_box_shows_the_limit_the_app_applies(page, limit_mb):
    at = open_app(None, page)
    boxes = at.get("file_uploader")
    assert boxes
    # in its label; the box itself takes what the server takes, so that a larger file reaches
    # the app, which names it and the limit (the twenty-fourth review, item 3)
    assert all(f"({limit_mb} MB at most)" in b.proto.label for b in boxes)
    import tomllib

    from tests.conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server_mb = config["server"]["maxUploadSize"]
    assert server_mb > 5 * limit_mb  # room for a file well above the box's own limit
    assert [(b.proto.max_upload_size_mb, list(b.proto.type)) for b in boxes] == [
        (server_mb, [])
    ] * len(boxes)


# --- 13. the debt schedule writes n/a, not None ---------------------------------------------------------


def test_the_debt_schedule_shows_n_a_in_years_without_debt_service():
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = "deepseek-r1-gb200-nvl72"
    at.query_params["edits"] = state.encode({"financing": {"debt_term_months": 48}})
    at.run()
    assert not at.exception
    frames = [d.value for d in at.dataframe]
    schedule = next(f for f in frames if "DSCR, year [x]" in list(f.index))
    dscr = list(schedule.loc["DSCR, year [x]"])
    assert dscr[-1] == "n/a" and all(v is not None for v in dscr), dscr
    assert dscr[0].replace(".", "").isdigit()  # a ratio to 2 decimals where there is debt
    assert not schedule.isna().any().any()


# --- 10. the data table's boxes show the values the grid is computed at ---------------------------


def test_the_data_table_is_computed_at_the_values_its_boxes_show():
    at = open_app("hall-10mw-hgx-b200-air", "risk")
    column = [w for w in at.number_input if w.label in ("from", "to")][2:]  # the column's
    assert [w.proto.format for w in column] == ["%.4f", "%.4f"]
    low, high = (w.value for w in column)
    assert (low, high) == (round(low, 4), round(high, 4))
    widget(at.button, "Compute the data table").click().run()
    assert not at.exception
    table = at.session_state["econ.data_table"][-1]
    assert list(table.columns)[0] == low and list(table.columns)[-1] == high
    assert all(len(repr(v)) < 10 for v in table.columns), list(table.columns)  # no float noise


# --- 8/9. Monte Carlo tiles, the sign of value at risk, errors by the form's labels ----------------


def _columns_around(node, label: str, depth: int = 0) -> int | None:
    """How many columns deep the metric `label` sits (1: a row of the page's own columns)."""
    from streamlit.testing.v1.element_tree import Block, Metric

    if isinstance(node, Metric) and node.label == label:
        return depth
    if isinstance(node, Block):
        inner = depth + (node.type == "column")
        for child in node.children.values():
            found = _columns_around(child, label, inner)
            if found is not None:
                return found
    return None


def run_montecarlo(at: AppTest, rows: dict[str, str] | None = None) -> AppTest:
    import pandas as pd

    go(at, "risk")
    if rows is not None:
        at.session_state["econ.mc_table"] = pd.DataFrame(
            list(rows.items()), columns=["path", "distribution"]
        )
    widget(at.number_input, "Scenarios").set_value(200).run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception
    return at


def test_monte_carlo_tiles_span_the_page_and_explain_the_sign_of_value_at_risk():
    at = run_montecarlo(open_app())
    assert not errors(at), errors(at)
    var = next(m for m in at.metric if m.label == "Value at risk, 95% [USD]")
    assert "minus the 5th percentile" in var.help and "Negative: even the worst 5% gain" in (
        var.help
    )
    shortfall = next(m for m in at.metric if m.label == "Expected shortfall, 95% [USD]")
    assert "Negative" in shortfall.help
    # one row of three across the page, not three inside the right-hand column of two
    assert _columns_around(at.main, "Value at risk, 95% [USD]") == 1


def test_a_monte_carlo_distribution_error_names_the_input_as_the_table_does():
    at = run_montecarlo(open_app(), {"utilization.share": "uniform(65, 90)"})
    text = " ".join(errors(at))
    assert "Utilization › Share [fraction]" in text, text
    assert "utilization.share" not in text
    assert "0.65 for 65 %" in text


# --- 6. the Scenario page stays on the tab being edited -------------------------------------------------


def _tabs(at: AppTest) -> list[str]:
    from streamlit.testing.v1.element_tree import Block

    def find(node):
        if isinstance(node, Block):
            if node.type == "tab_container":
                return node
            for child in node.children.values():
                found = find(child)
                if found is not None:
                    return found
        return None

    return [t.label for t in find(at.main).children.values()]


def _marked_tabs(at: AppTest) -> list[int]:
    """Positions the page's stylesheet marks "⚠️" (the tab labels themselves never change)."""
    import re

    html = " ".join(e.proto.body for e in at.get("html"))
    return [int(i) for i in re.findall(r'data-key="(\d+)"\] p::after', html)]


def test_an_edit_that_changes_validity_keeps_the_tabs_and_marks_the_tab():
    # the same labels keep the browser on the open tab (tabs with new labels open on the first);
    # the mark is the stylesheet's, with a caption naming the tab in words
    at = open_app("deepseek-r1-gb200-nvl72")
    go(at, "scenario")
    labels = _tabs(at)
    assert labels[0] == "General" and "Capex" in labels and labels[-1] == "TOML"
    assert _marked_tabs(at) == []
    widget(at.number_input, "GPU price [USD/GPU]").set_value(40_000.0).run()
    assert not at.exception and errors(at)
    assert _tabs(at) == labels
    assert _marked_tabs(at) == [labels.index("Capex")]
    assert any("marks the tabs with fields to fix: Capex." in c.value for c in at.caption)
    widget(at.number_input, "System price [USD]").set_value(None).run()
    assert not at.exception and not errors(at), errors(at)
    assert _tabs(at) == labels and _marked_tabs(at) == []
    assert not any("fields to fix:" in c.value for c in at.caption)


def test_number_format_has_separators_six_digits_and_no_e_notation():
    # one formatter for tables and edit citations (the citations had their own copy)
    from econ.ui.fmt import number_format

    cases = {
        3e6: "3,000,000",
        194.95: "194.95",
        0.000012: "0.000012",
        10930.5: "10,930.5",
        0.123456789: "0.123457",
        999999.95: "1,000,000",  # rounded up: the integer's zeros stay
        123456.7: "123,457",
        -2.5: "-2.5",
        0.0: "0",
        float("nan"): "n/a",
    }
    for value, text in cases.items():
        assert number_format(value) == text, value
    # an edit cites the value it replaced with 12 digits: as typed, without float noise
    exact = {
        11232.04: "11,232.04",
        0.65 * 100: "65",
        1234567.891: "1,234,567.891",
        1e13: "10,000,000,000,000",
    }
    for value, text in exact.items():
        assert number_format(value, digits=12) == text, value
