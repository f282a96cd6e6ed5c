"""The twenty-third review of the app (its report's items by number), through Streamlit's
AppTest; what needs a browser is in tests/test_browser_review23.py.
"""

from __future__ import annotations

import io

import pytest
from openpyxl import load_workbook
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.cli import main
from tests.conftest import ROOT
from tests.test_app import APP, errors, go, metric, prepare, widget
from tests.test_app_review3 import downloads  # noqa: F401 - the download spy fixture

HALL = "hall-10mw-gb300-nvl72-liquid"
"""68 GB300 NVL72 racks in a 10 MW air hall retrofitted for liquid cooling, at PUE 1.3."""


def open_scenario(name: str, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["scenario"] = name
    at.run()
    assert not at.exception, at.exception
    return go(at, page) if page else at


def caption_text(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


# --- 1. the capex of a sized fleet counts the liquid retrofit, as Results does --------------------


def test_the_sized_capex_counts_the_liquid_retrofit_and_equals_results_after_use():
    from econ.racks import size

    at = open_scenario(HALL, "power")
    # the scenario's own figures: 68 racks x 3,000,000 USD, and per GPU 4,200 networking and
    # 1,750 installation, plus the retrofit `econ size --retrofit-liquid` prices per rack
    sized = size(mw=10.0, hardware="gb300-nvl72", cooling="air", retrofit_liquid=True)
    assert (sized["racks"], sized["gpus"], sized["retrofit_capex_usd"]) == (68, 4896, 3_400_000)
    expected = 68 * 3_000_000 + 4896 * (4200 + 1750) + sized["retrofit_capex_usd"]
    assert metric(at, "GPUs") == "4,896"
    assert metric(at, "Capex [USD]") == f"{expected:,.0f}" == "236,531,200"
    assert "liquid retrofit 3,400,000" in caption_text(at), caption_text(at)
    # the ready-made scenario already is that fleet: the engine's capex is the same figure
    engine = project(load_scenario(ready_made_scenarios()[HALL])).summary.iloc[0]
    assert engine.capex_usd_total == expected
    next(b for b in at.button if b.label.startswith("Use 4,896 GPUs")).click().run()
    assert not at.exception
    go(at, "results")
    assert metric(at, "Capex [USD]") == "236,531,200"


def test_a_retrofit_chosen_on_the_page_for_new_hardware_is_in_its_capex(app_seed: AppTest):
    # the seed's GB200 liquid hall; GB300 racks sized into an air hall with a retrofit: Use sets
    # the hall and the retrofit price per rack, so Results counts it and so must the page
    at = app_seed
    go(at, "power")
    widget(at.selectbox, "Hardware").set_value("gb300-nvl72").run()
    widget(at.selectbox, "Hall cooling").set_value("air").run()
    widget(at.toggle, "Retrofit liquid cooling in an air hall").set_value(True).run()
    assert not at.exception and not errors(at), errors(at)
    shown = metric(at, "Capex [USD]")
    assert "liquid retrofit" in caption_text(at)
    next(b for b in at.button if b.label.startswith("Use ")).click().run()
    go(at, "results")
    assert metric(at, "Capex [USD]") == shown


@pytest.fixture
def app_seed() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


# --- 2. the sizing starts from the scenario's own hall ------------------------------------------


def test_the_sizing_starts_from_the_scenarios_hall_cooling_and_pue():
    at = open_scenario(HALL, "power")
    assert widget(at.selectbox, "Hall cooling").value == "air"
    assert widget(at.toggle, "Retrofit liquid cooling in an air hall").value is True
    assert widget(at.number_input, "PUE").value == 1.3  # the scenario's power.pue
    said = [w.value for w in at.warning if "is read as IT (critical) load" in w.value]
    assert said and "the meter sees 13 MW at PUE 1.3" in said[0], said
    assert "hall air-cooled, retrofitted for liquid racks, PUE 1.3 (the scenario's)" in (
        caption_text(at)
    )


def test_another_hall_on_the_page_takes_its_own_pue_and_the_scenarios_comes_back():
    at = open_scenario(HALL, "power")
    widget(at.selectbox, "Hall cooling").set_value("liquid").run()
    assert widget(at.number_input, "PUE").value is None  # the catalog's for a liquid hall
    assert "PUE 1.1 (racks.toml halls.liquid.pue)" in caption_text(at)
    widget(at.selectbox, "Hall cooling").set_value("air").run()
    assert widget(at.number_input, "PUE").value == 1.3


def test_the_sizing_follows_a_switch_to_another_scenario(app_seed: AppTest):
    at = app_seed
    go(at, "power")
    assert widget(at.selectbox, "Hall cooling").value == "liquid"  # the seed's hall
    assert widget(at.number_input, "PUE").value == 1.1
    widget(at.sidebar.selectbox, "Ready-made scenario").set_value(HALL).run()
    go(at, "power")
    assert widget(at.selectbox, "Hardware").value == "gb300-nvl72"
    assert widget(at.selectbox, "Hall cooling").value == "air"
    assert widget(at.toggle, "Retrofit liquid cooling in an air hall").value is True


# --- 3. the app's workbook marks defaults as the command line's does ------------------------------


def provenance(book: bytes | str) -> dict[str, str]:
    sheet = load_workbook(io.BytesIO(book) if isinstance(book, bytes) else book)["Assumptions"]
    rows = sheet.iter_rows(values_only=True)
    header = next(rows)
    at = header.index("provenance")
    return {row[0]: row[at] for row in rows if row[0]}


@pytest.mark.parametrize("name", [DEFAULT_SCENARIO, HALL])
def test_the_apps_workbook_says_default_where_the_command_lines_does(
    name,
    tmp_path,
    downloads,  # noqa: F811 - the fixture imported above
):
    out = tmp_path / f"{name}.xlsx"
    assert main(["project", str(ready_made_scenarios()[name]), "--out", str(out)]) == 0
    cli = provenance(str(out))
    at = prepare(open_scenario(name, "export"), "Excel workbook")
    assert not errors(at), errors(at)
    app = provenance(downloads["Excel workbook"])
    assert list(app) == list(cli)
    differ = {path: (cli[path], app[path]) for path in cli if cli[path] != app[path]}
    assert not differ, differ
    assert "default" in cli.values()  # the comparison has defaults to compare (71 in the seed's)


def test_the_scenarios_text_gives_the_fields_the_file_gives():
    from econ.scenario import loads
    from econ.ui import state
    from econ.workbook import _explicit_paths  # the fields the workbook counts as given

    for path in ready_made_scenarios().values():
        scenario = load_scenario(path)
        again = loads(state.scenario_text(scenario))
        assert again == scenario
        assert _explicit_paths(again) == _explicit_paths(scenario), path


# --- 4. the export buttons say what each file holds -----------------------------------------------


def test_each_export_button_says_what_its_file_holds():
    at = prepare(open_scenario("deepseek-r1-gb200-nvl72-capital-stack", "export"), "CSV", "Parquet")
    assert not errors(at), errors(at)
    stem = "deepseek-r1-gb200-nvl72-capital-stack"
    helps = {b.label: b.proto.help for b in at.get("download_button")}
    for kind, label in (("csv", "CSV"), ("parquet", "Parquet")):
        for what, middle in (
            ("Monthly schedule", ""),
            ("Summary", ".summary"),
            ("Tranches", ".tranches"),
            ("Tranche summary", ".tranches.summary"),
        ):
            assert helps[f"{what} ({label})"] == f"Downloads {stem}{middle}.{kind}", helps
    text = "\n".join(m.value for m in at.markdown)
    assert text.count("each tranche's monthly lines and the tranche summary") == 2, text
    assert f"Files: {stem}.csv, {stem}.summary.csv, {stem}.tranches.csv" in caption_text(at)


# --- 5. the Equity NPV an equity IRR's note points to has a tile ---------------------------------


def test_the_equity_npv_the_irr_note_names_is_a_tile_beside_the_equity_irr():
    from econ.labels import label_with_unit

    name = "deepseek-r1-gb200-nvl72-capital-stack"
    at = open_scenario(name)
    label = label_with_unit("npv_equity_usd")
    assert label == "Equity NPV [USD]"
    note = [m.proto.help for m in at.metric if m.label == "Equity IRR [%/year]"]
    assert note and "judge by Equity NPV (at the 15.00% cost of equity)" in note[0], note
    expected = project(load_scenario(ready_made_scenarios()[name])).summary.iloc[0]
    assert metric(at, label) == f"{expected.npv_equity_usd:,.0f}"
    labels = [m.label for m in at.metric]
    assert labels.index(label) == labels.index("Equity MIRR [%/year]") + 1


# --- 7. a useful life below a month, in the form's words -------------------------------------


@pytest.mark.parametrize(("typed", "said"), [(0.0, "0 years"), (0.05, "0.05 years")])
def test_a_useful_life_below_a_month_is_worded_as_other_bounds(app_seed: AppTest, typed, said):
    at = app_seed
    widget(at.sidebar.number_input, "Depreciation › Life [years]").set_value(typed).run()
    assert not at.exception
    told = f"{said} is below 1 month (0.0833 years); expected at least 1 month"
    assert told in [e.value for e in at.sidebar.error], [e.value for e in at.sidebar.error]
    assert any(f"› Life [years]: {told}" in e for e in errors(at)), errors(at)
    assert not any("0.08333333" in e for e in errors(at))


def test_a_useful_life_below_a_month_keeps_its_words_in_a_scenario_file():
    from econ.scenario import ScenarioError, validate_dict

    # (it offered 0.0833333 years, a life it refuses: a controller's review 25, item 6)
    words = r"at least one month \(1/12 year: 0\.0833333333333333 to 16 digits, or 0\.0834 "
    with pytest.raises(ScenarioError, match=words):
        validate_dict({"depreciation": {"life_years": 0}})


# --- 8. letters typed in a number box never reach the app: its message says so -----------------


def test_an_emptied_number_box_says_that_letters_typed_in_it_are_dropped(app_seed: AppTest):
    # Chromium sends a number box's value or nothing: "abc" cannot be typed, "seventy" leaves
    # the box empty (tests/test_browser_review23.py types them)
    at = app_seed
    widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(None).run()
    assert not at.exception
    said = (
        "empty; expected a number (a number box holds digits only: the browser drops letters "
        "typed in it before the app sees them)"
    )
    assert said in [e.value for e in at.sidebar.error], [e.value for e in at.sidebar.error]
    assert any(f"Fleet › GPU count [GPUs] is {said}" in e for e in errors(at)), errors(at)


# --- 11. a page whose import fails says why, without a server path -----------------------------


def test_a_page_whose_import_fails_shows_why_without_a_server_path(app_seed, monkeypatch):
    # a server running while econ's code changed: the Risk page imports a name econ's modules
    # in memory lack
    import econ.labels

    at = app_seed
    monkeypatch.delattr(econ.labels, "counted")
    at.switch_page("econ/ui/pages/risk.py").run()
    assert not at.exception, at.exception  # not Streamlit's traceback ("Ask Google")
    said = [e for e in errors(at) if e.startswith("Showing this page failed (ImportError)")]
    assert said and "cannot import name 'counted' from 'econ.labels'; " in said[0], errors(at)
    assert "restart the server (econ app)" in said[0]
    assert ".py" not in said[0] and "/" not in said[0].split("econ.labels")[1], said[0]


def test_an_import_failure_names_no_server_file():
    from econ.ui.compute import import_failure

    with pytest.raises(ImportError) as caught:
        from econ.files import NO_SUCH_NAME  # noqa: F401
    assert str(ROOT) in str(caught.value)  # Python's message names the module's file
    told = import_failure(caught.value, "Excel export")
    assert told.startswith(
        "Excel export failed (ImportError): cannot import name 'NO_SUCH_NAME' from 'econ.files'; "
    )
    assert str(ROOT) not in told and "files.py" not in told


# --- 9. Results' warnings name inputs by the form's labels ---------------------------------------


def test_results_warnings_name_inputs_by_the_forms_labels(app_seed: AppTest):
    from econ.ui.form import path_label

    at = app_seed
    engine = str(project(load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO])).warnings)
    assert "financing.tax_valuation_allowance = 'none'" in engine  # the engine's words
    assert "fleet.retire_month" in engine
    shown = "\n".join(w.value for w in at.warning)
    valuation = path_label("financing.tax_valuation_allowance")
    assert f"with “{valuation}” = None, net income keeps" in shown, shown
    assert f"“{valuation}” = Beyond reversing liabilities recognizes" in shown, shown
    assert f"an earlier “{path_label('fleet.retire_month')}” would stop the loss" in shown, shown
    assert "financing.tax_valuation_allowance" not in shown and "fleet.retire_month" not in shown


# --- 10. one name per field: the sidebar's levers are named as messages name them ------------------


def test_each_sidebar_lever_is_named_as_the_messages_name_its_field(app_seed: AppTest):
    from econ.ui.common import MAIN_INPUTS
    from econ.ui.form import path_label

    at = app_seed
    boxes = [w.label for w in at.sidebar.number_input]
    shown = [p for p in MAIN_INPUTS if p != "fleet.racks"]  # (the seed gives GPUs, not racks)
    assert boxes == [path_label(p) for p in shown], boxes
    assert "Depreciation › Life [years]" in boxes and "Market › Price [USD/M tokens]" in boxes
    for label, bad in (("Depreciation › Life [years]", 0.0), ("Market › Price [USD/M tokens]", -1)):
        box = widget(at.sidebar.number_input, label)
        before = box.value
        box.set_value(bad).run()
        # the page's message names the field as its box does
        assert any(f"\n\n{label}: " in e for e in errors(at)), errors(at)
        widget(at.sidebar.number_input, label).set_value(before).run()
        assert not errors(at), errors(at)
