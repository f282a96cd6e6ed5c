"""The app through Streamlit's AppTest: every page loads, reacts to inputs with the library's values,
and answers bad input with st.error (never an exception); plus the state helpers behind the
shareable link and the generated scenario form.
"""

from __future__ import annotations

import datetime as dt
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.scenario import Scenario, read_toml
from econ.ui import state
from econ.ui.fmt import literal
from econ.ui.form import (
    FieldInfo,
    fields_of,
    find,
    from_widget,
    path_label,
    stored_path_label,
    to_widget,
)
from econ.ui.streamlit_app import PAGES
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
DATA = ROOT / "tests" / "data" / "app"
SEED = ready_made_scenarios()[DEFAULT_SCENARIO]


def page_path(name: str) -> str:
    return f"econ/ui/pages/{name}.py"


def metric(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r}; have {[m.label for m in at.metric]}"
    return values[0]


def widget(elements, label: str):
    found = [w for w in elements if w.label == label]
    assert found, f"no widget {label!r}; have {[w.label for w in elements]}"
    return found[0]


def shown(markdown: str) -> str:
    """Markdown text as the reader sees it: escaped characters as themselves, without the word
    joiners that keep addresses from becoming links (econ.ui.fmt.literal)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def errors(at: AppTest) -> list[str]:
    """The page's st.error messages as the reader sees them."""
    return [shown(e.value) for e in at.error]


def summary_of(overrides=None):
    return project(load_scenario(SEED, overrides or {})).summary.iloc[0]


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(page_path(page)).run()
    assert not at.exception, at.exception
    return at


EXPORT_KINDS = ("Excel workbook", "CSV", "Parquet", "JSON")
"""The Export page's table formats, each built on request by its "Prepare the ..." button."""


def prepare(at: AppTest, *kinds: str) -> AppTest:
    """Click the Export page's "Prepare the KIND" buttons (default: every table format) that it
    shows; a kind already prepared for this scenario shows none."""
    for kind in kinds or EXPORT_KINDS:
        for button in at.button:
            if button.label == f"Prepare the {kind}":
                button.click().run()
                assert not at.exception, at.exception
                break
    return at


# --- every page -----------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [name for name, _, _ in PAGES])
def test_every_page_loads_on_the_default_scenario(app: AppTest, page: str):
    go(app, page)
    assert not errors(app), errors(app)
    assert app.title and app.title[0].value


@pytest.mark.parametrize("page", [name for name, _, _ in PAGES if name != "compare"])
def test_every_page_reports_an_invalid_scenario_with_st_error(app: AppTest, page: str):
    widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(-1.0).run()
    go(app, page)
    assert any("Market › Price [USD/M tokens]" in e for e in errors(app)), errors(app)
    # the value the user typed is still there
    assert widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").value == -1.0


# --- results --------------------------------------------------------------------------------------


def test_results_show_the_library_values(app: AppTest):
    assert app.sidebar.selectbox[0].value == DEFAULT_SCENARIO
    expected = summary_of()
    assert metric(app, "Levelized cost [USD/M tokens]") == f"{expected.lcot_usd_per_mtok:.4f}"
    assert metric(app, "NPV [USD]") == f"{expected.npv_usd:,.0f}"
    assert metric(app, "Project IRR [%/year]") == f"{expected.irr_project_annual:.1%}"
    assert not errors(app)


def test_changing_an_input_changes_the_metric_to_the_library_value(app: AppTest):
    lcot_before = metric(app, "Levelized cost [USD/M tokens]")
    npv_before = metric(app, "NPV [USD]")
    widget(app.sidebar.number_input, "Depreciation › Life [years]").set_value(4.0).run()
    assert not app.exception
    expected = summary_of({"depreciation.life_years": 4.0})
    # A shorter book life moves tax, so NPV, but not the levelized cost of the same service life.
    assert metric(app, "NPV [USD]") == f"{expected.npv_usd:,.0f}" != npv_before
    assert metric(app, "Levelized cost [USD/M tokens]") == lcot_before
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    expected = summary_of({"depreciation.life_years": 4.0, "utilization.share": 0.9})
    assert metric(app, "Levelized cost [USD/M tokens]") == f"{expected.lcot_usd_per_mtok:.4f}"
    assert metric(app, "Levelized cost [USD/M tokens]") != lcot_before


def test_invalid_input_shows_error_and_keeps_the_value(app: AppTest):
    widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(-1.0).run()
    assert not app.exception
    assert "Market › Price [USD/M tokens]" in errors(app)[0]
    assert widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").value == -1.0
    # fixing it brings the results back
    widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(0.5).run()
    assert not errors(app)
    assert (
        metric(app, "NPV [USD]") == f"{summary_of({'market.price_usd_per_mtok': 0.5}).npv_usd:,.0f}"
    )


@pytest.mark.parametrize("name", sorted(ready_made_scenarios()))
def test_every_ready_made_scenario_renders(app: AppTest, name: str):
    app.sidebar.selectbox[0].set_value(name).run()
    assert not app.exception
    assert not errors(app), errors(app)
    expected = project(load_scenario(ready_made_scenarios()[name])).summary.iloc[0]
    assert metric(app, "Capex [USD]") == f"{expected.capex_usd_total:,.0f}"
    go(app, "scenario")  # every section of every ready-made scenario has its widgets
    assert not errors(app), errors(app)


def test_the_entry_that_econ_app_runs_builds_the_same_navigation():
    at = AppTest.from_file(str(ROOT / "econ" / "ui" / "streamlit_app.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert metric(at, "NPV [USD]") == f"{summary_of().npv_usd:,.0f}"
    at.switch_page("pages/scenario.py").run()
    assert not at.exception and at.title[0].value == "Scenario"


def test_the_scenario_survives_page_switches(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(85.0).run()
    go(app, "throughput")
    go(app, "results")
    assert widget(app.sidebar.number_input, "Utilization › Share [%]").value == 85.0
    expected = summary_of({"utilization.share": 0.85})
    assert metric(app, "Levelized cost [USD/M tokens]") == f"{expected.lcot_usd_per_mtok:.4f}"


def test_switching_scenarios_keeps_the_edits_in_the_session(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(85.0).run()
    other = next(n for n in sorted(ready_made_scenarios()) if n != DEFAULT_SCENARIO)
    app.sidebar.selectbox[0].set_value(other).run()
    assert not app.exception
    kept = f"{state.SAVED_PREFIX}{DEFAULT_SCENARIO} (edited)"
    assert kept in app.sidebar.selectbox[0].options
    app.sidebar.selectbox[0].set_value(kept).run()
    assert widget(app.sidebar.number_input, "Utilization › Share [%]").value == 85.0


# --- shareable link -------------------------------------------------------------------------------


def test_a_shared_link_restores_the_scenario():
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = DEFAULT_SCENARIO
    at.query_params["edits"] = state.encode({"depreciation": {"life_years": 4.0}})
    at.run()
    assert not at.exception
    expected = summary_of({"depreciation.life_years": 4.0})
    assert metric(at, "NPV [USD]") == f"{expected.npv_usd:,.0f}"
    assert widget(at.sidebar.number_input, "Depreciation › Life [years]").value == 4.0


@pytest.mark.parametrize(
    ("scenario", "edits", "reason"),
    [
        ("no-such-scenario", None, "no-such-scenario"),
        (DEFAULT_SCENARIO, "not*base64!", "edits in the link are not readable"),
    ],
)
def test_a_broken_link_shows_why_and_falls_back_to_the_default(scenario, edits, reason):
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["scenario"] = scenario
    if edits:
        at.query_params["edits"] = edits
    at.run()
    assert not at.exception
    assert any(reason in e for e in errors(at)), errors(at)
    assert metric(at, "NPV [USD]") == f"{summary_of().npv_usd:,.0f}"


# --- scenario page --------------------------------------------------------------------------------


def test_editing_a_generated_field_changes_the_results(app: AppTest):
    go(app, "scenario")
    widget(app.number_input, "Debt term [months]").set_value(48).run()
    assert not app.exception
    go(app, "results")
    expected = summary_of({"financing.debt_term_months": 48})
    assert metric(app, "NPV [USD]") == f"{expected.npv_usd:,.0f}"


def test_an_invalid_field_shows_its_error_next_to_it(app: AppTest):
    go(app, "scenario")
    widget(app.number_input, "PUE [ratio]").set_value(0.5).run()
    assert not app.exception
    assert any("Power › PUE [ratio]" in e for e in errors(app)), errors(app)
    assert any("greater than or equal to 1" in e for e in errors(app))
    assert widget(app.number_input, "PUE [ratio]").value == 0.5


def test_a_list_of_numbers_that_does_not_parse_is_kept_with_the_reason(app: AppTest):
    go(app, "scenario")
    box = widget(app.text_input, "Hourly load shape (numbers separated by commas)")
    box.set_value("1, 2, lots").run()
    assert not app.exception
    assert any("'lots' is not a number" in e for e in errors(app)), errors(app)
    box = widget(app.text_input, "Hourly load shape (numbers separated by commas)")
    assert box.value == "1, 2, lots"


def test_uploading_a_scenario_file_loads_it(app: AppTest):
    go(app, "scenario")
    text = (ROOT / "models" / "scenarios" / "llama2-70b-h200.toml").read_bytes()
    app.get("file_uploader")[0].upload("mine.toml", text, "application/toml").run()
    assert not app.exception
    assert not errors(app), errors(app)
    go(app, "results")
    expected = project(load_scenario(ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"))
    assert metric(app, "NPV [USD]") == f"{expected.summary.iloc[0].npv_usd:,.0f}"


def test_an_uploaded_scenario_holding_nan_is_not_edited_until_edited(app: AppTest):
    # `share = nan` made the page say "(edited)" at once, and Reset could not clear it
    go(app, "scenario")
    text = SEED.read_text().replace("\nshare = 0.7\n", "\nshare = nan\n", 1)
    assert "share = nan" in text
    app.get("file_uploader")[0].upload("nan.toml", text.encode(), "application/toml").run()
    assert not app.exception

    def caption() -> str:
        return next(c.value for c in app.caption if c.value.startswith("Editing "))

    reset = lambda: widget(app.button, "Reset edits")  # noqa: E731
    assert caption().startswith(f"Editing **{state.UPLOAD_PREFIX}nan.toml**. "), caption()
    assert any("not a number (NaN)" in e for e in errors(app)), errors(app)  # shown, not edited
    assert reset().disabled
    widget(app.text_input, "Name").set_value("nan-edited").run()
    assert "(edited)" in caption() and not reset().disabled
    reset().click().run()
    assert "(edited)" not in caption() and reset().disabled
    assert widget(app.text_input, "Name").value == load_scenario(SEED).name


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b"name = [unclosed", "malformed TOML"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_a_bad_scenario_upload_shows_why_and_keeps_the_current_one(app, content, reason):
    go(app, "scenario")
    app.get("file_uploader")[0].upload("bad.toml", content, "application/toml").run()
    assert not app.exception
    assert any(reason in e for e in errors(app)), errors(app)
    go(app, "results")
    assert metric(app, "NPV [USD]") == f"{summary_of().npv_usd:,.0f}"


def test_an_uploaded_scenario_with_an_unknown_field_names_the_valid_ones(app: AppTest):
    go(app, "scenario")
    content = SEED.read_bytes() + b"\n[fleet2]\ngpu_count = 8\n"
    app.get("file_uploader")[0].upload("typo.toml", content, "application/toml").run()
    assert not app.exception
    assert any("fleet2" in e and "expected one of" in e for e in errors(app)), errors(app)


def test_the_toml_editor_applies_text_and_reports_bad_toml(app: AppTest):
    go(app, "scenario")
    area = widget(app.text_area, "The whole scenario as TOML")
    area.set_value(area.value.replace("life_years = 6.0", "life_years = 5.0")).run()
    widget(app.button, "Apply the TOML").click().run()
    assert not app.exception
    assert widget(app.sidebar.number_input, "Depreciation › Life [years]").value == 5.0
    area = widget(app.text_area, "The whole scenario as TOML")
    area.set_value("this is = not toml =").run()
    widget(app.button, "Apply the TOML").click().run()
    assert any("malformed TOML" in e for e in errors(app)), errors(app)
    assert widget(app.sidebar.number_input, "Depreciation › Life [years]").value == 5.0


# --- throughput -----------------------------------------------------------------------------------


def upload_curve(app: AppTest, name: str, content: bytes) -> AppTest:
    go(app, "throughput")
    app.get("file_uploader")[0].upload(name, content, "text/csv").run()
    assert not app.exception
    return app


def test_an_uploaded_benchmark_gives_the_library_operating_point(app: AppTest):
    from econ.throughput.importers import import_files
    from econ.throughput.operating_point import operating_point

    path = DATA / "sample_curve.csv"
    upload_curve(app, path.name, path.read_bytes())
    assert not errors(app), errors(app)
    expected = operating_point(import_files([path]))
    assert metric(app, "Measured operating point [tokens/s per GPU]") == (
        f"{expected.tokens_per_s_per_gpu:,.1f}"
    )
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(30.0).run()
    expected = operating_point(import_files([path]), tpot_p99_s=0.03)
    assert metric(app, "Measured operating point [tokens/s per GPU]") == (
        f"{expected.tokens_per_s_per_gpu:,.1f}"
    )
    widget(app.button, "Use 405.4 tokens/s per GPU in the scenario").click().run()
    go(app, "results")
    # the figure replaced the scenario's throughput
    assert widget(
        app.sidebar.number_input, "Throughput › Output tokens/s per GPU"
    ).value == pytest.approx(expected.tokens_per_s_per_gpu)


def test_an_slo_no_point_meets_shows_the_closest_point(app: AppTest):
    path = DATA / "sample_curve.csv"
    upload_curve(app, path.name, path.read_bytes())
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(1.0).run()
    assert not app.exception
    assert any("no measured point meets the SLO" in e for e in errors(app)), errors(app)


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("not_a_benchmark.json", (DATA / "not_a_benchmark.json").read_bytes(), "unsupported tool"),
        ("empty.csv", b"", "empty"),
        ("huge.csv", b"x" * (5 * 1024 * 1024 + 1), "limit"),
    ],
)
def test_a_bad_benchmark_file_shows_why(app: AppTest, name, content, reason):
    upload_curve(app, name, content)
    assert any(reason in e for e in errors(app)), errors(app)


def test_the_catalog_shows_provenance_checks_of_a_row(app: AppTest):
    go(app, "throughput")
    assert any("derived, not submitted" in w.value for w in app.warning)
    assert metric(app, "Simulated operating point [tokens/s per GPU]") != "n/a"


# --- software gains -------------------------------------------------------------------------------


def test_gains_show_the_library_value_and_reject_bad_steps(app: AppTest):
    from econ.gains import value_gain

    go(app, "gains")
    result = value_gain(load_scenario(SEED))
    assert metric(app, "NPV of the gain per rack [USD]") == (
        f"{result.value['npv_usd_per_rack']:,.0f}"
    )
    app.toggle(key="econ.breakevens_on").set_value(True).run()
    assert not app.exception and not errors(app), errors(app)
    widget(
        app.text_area, "Try other steps instead (one per line: WHEN:GAIN or WHEN:GAIN:LABEL)"
    ).set_value("banana").run()
    assert not app.exception
    assert any("Gain steps" in e for e in errors(app)), errors(app)


# --- power and fleet ------------------------------------------------------------------------------


def test_sizing_gives_the_library_result_and_rejects_a_bad_budget(app: AppTest):
    from econ.racks import size

    go(app, "power")
    expected = size(mw=10.0, hardware="gb200-nvl72")
    assert metric(app, "Racks") == f"{expected['racks']:,}"
    widget(app.number_input, "Power budget [MW]").set_value(25.0).run()
    assert metric(app, "GPUs") == f"{size(mw=25.0, hardware='gb200-nvl72')['gpus']:,}"
    widget(app.number_input, "Power budget [MW]").set_value(-3.0).run()
    assert not app.exception
    assert any("Sizing" in e for e in errors(app)), errors(app)


def test_the_refresh_analysis_of_a_scenario_with_vintages(app: AppTest):
    from econ.fleet import refresh_analysis

    name = "h200-fleet-gb300-refresh"
    app.sidebar.selectbox[0].set_value(name).run()
    go(app, "power")
    scenario = load_scenario(ready_made_scenarios()[name])
    result = refresh_analysis(scenario, scenario.vintages[0].name)
    assert metric(app, "Best refresh month") == str(result.best_month)
    assert result.warnings and literal(result.warnings[0]) in [w.value for w in app.warning]


# --- compare --------------------------------------------------------------------------------------


def test_compare_projects_the_picked_scenarios(app: AppTest):
    go(app, "compare")
    other = "llama2-70b-h200"
    app.multiselect[0].set_value(["current scenario", other]).run()
    assert not app.exception
    assert not errors(app), errors(app)
    table = app.dataframe[0].value
    npv = table[table["metric"] == "NPV [USD]"].iloc[0]
    expected = project(load_scenario(ready_made_scenarios()[other])).summary.iloc[0]
    assert npv[other] == f"{expected.npv_usd:,.0f}"
    assert npv[f"{DEFAULT_SCENARIO} (current)"] == f"{summary_of().npv_usd:,.0f}"


def test_compare_reports_an_invalid_current_scenario(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(150.0).run()
    go(app, "compare")
    assert any("Utilization › Share [%]" in e for e in errors(app)), errors(app)


# --- risk -----------------------------------------------------------------------------------------


HELD_OUTPUTS = ("npv_usd", "covenant_breach_months", "first_breach_month")
"""`econ montecarlo --hold-debt`'s outputs beside NPV: the loan's breach figures."""


def starting_distributions(base: Scenario) -> dict[str, str]:
    """The Risk page's starting Monte Carlo rows as docs/app.md states them, built here: the
    scenario's own value as the mode, the price decline -0.15 and +0.30 (within 0 to 0.95),
    utilization -0.15 and +0.10 (within 0 to 1), throughput -20% and +25%; every number in
    full (repr), as `econ montecarlo --dist` would be typed from the scenario's values."""
    decline = base.market.price_decline_annual
    share = base.utilization.share
    tokens = base.throughput.tokens_per_s_per_gpu
    return {
        "market.price_decline_annual": (
            f"pert({max(0.0, decline - 0.15)!r}, {decline!r}, {min(0.95, decline + 0.3)!r})"
        ),
        "utilization.share": f"uniform({max(0.0, share - 0.15)!r}, {min(1.0, share + 0.1)!r})",
        "throughput.tokens_per_s_per_gpu": (
            f"triangular({tokens * 0.8!r}, {tokens!r}, {tokens * 1.25!r})"
        ),
    }


@pytest.mark.parametrize(
    "overrides",
    [{}, {"market.price_decline_annual": 0.325, "throughput.tokens_per_s_per_gpu": 1234.567891}],
)
def test_the_starting_distributions_keep_the_scenarios_values(overrides):
    """Each starting row draws around the scenario's own value, not a rounding of it: a decline
    of 0.325 is the mode (the rows once wrote "0.33"), 1,234.567891 tokens/s stays whole."""
    from econ.analysis.distributions import parse_distribution
    from econ.ui import risk
    from econ.ui.pages.risk import default_distributions

    base = load_scenario(SEED, overrides)
    rows = default_distributions(base, risk.numeric_paths(base)).to_dict("records")
    shown = {
        (r["path"], k): v
        for r in rows
        for k, v in parse_distribution(r["distribution"]).params().items()
    }
    wanted = {
        (p, k): v
        for p, text in starting_distributions(base).items()
        for k, v in parse_distribution(text).params().items()
    }
    assert shown == pytest.approx(wanted, rel=1e-12, abs=0)
    decline, tokens = "market.price_decline_annual", "throughput.tokens_per_s_per_gpu"
    assert shown[decline, "mode"] == base.market.price_decline_annual
    assert shown[tokens, "mode"] == base.throughput.tokens_per_s_per_gpu


def test_monte_carlo_runs_on_demand_with_the_library_figures(app: AppTest):
    from econ.analysis import montecarlo

    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(500).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception
    assert not errors(app), errors(app)
    base = load_scenario(SEED)
    run = montecarlo(base, starting_distributions(base), 500, seed=0)
    expected = run.summary.risk["probability_of_loss"]
    assert metric(app, "Probability of loss (NPV < 0)") == f"{expected:.1%}"


def test_monte_carlo_holding_the_base_loan_shows_the_breach_probability(app: AppTest):
    from econ.analysis import montecarlo

    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(300).run()
    widget(app.toggle, "Hold the base case's loan").set_value(True).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception
    assert not errors(app), errors(app)
    base = load_scenario(SEED)
    held = montecarlo(
        base, starting_distributions(base), 300, seed=0, outputs=HELD_OUTPUTS, hold_debt=True
    )
    expected = held.summary.covenant_breach_probability
    assert metric(app, "Probability of a covenant breach") == f"{expected:.1%}"
    assert any("Every scenario holds" in i.value for i in app.info), [i.value for i in app.info]


def test_the_monte_carlo_summary_is_the_command_lines_to_the_cent(app: AppTest):
    """The screenshot's run (the seed, its loan held, 2,000 draws, seed 0): every figure the
    page shows is econ.analysis.montecarlo's (what `econ montecarlo --hold-debt` prints) on the
    scenario's own distributions, to the cent. The starting rows once rounded the throughput's
    +25% (6,084.625 tokens/s per GPU) to 6084.62, which moved the mean by 1.58 USD."""
    from econ.analysis import montecarlo
    from econ.ui.fmt import format_value

    go(app, "risk")
    widget(app.toggle, "Hold the base case's loan").set_value(True).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception and not errors(app), errors(app)
    base = load_scenario(SEED)
    expected = montecarlo(
        base, starting_distributions(base), 2000, seed=0, outputs=HELD_OUTPUTS, hold_debt=True
    ).summary
    summary = app.session_state["econ.mc_result"][2]

    def usd(s) -> dict[str, float]:
        """The run's money figures to the cent: NPV's mean, deviation and quantiles, value at
        risk and expected shortfall."""
        m = s.metrics["npv_usd"]
        out = {"mean": m.mean, "std": m.std}
        out |= {f"p{round(q * 100)}": v for q, v in m.quantiles.items()}
        out |= {k: v for k, v in s.risk.items() if k.endswith("_usd")}
        return {k: round(float(v), 2) for k, v in out.items()}

    want = usd(expected)
    assert len(want) == 9 and usd(summary) == want
    assert summary.risk["probability_of_loss"] == expected.risk["probability_of_loss"]
    assert summary.covenant_breach_probability == expected.covenant_breach_probability
    shown = dict(app.dataframe[-1].value.to_numpy().tolist())
    assert shown["Mean"] == format_value(want["mean"], "usd")
    assert shown["P5"] == format_value(want["p5"], "usd")
    assert metric(app, "Expected shortfall, 95% [USD]") == format_value(
        want["expected_shortfall_95_usd"], "usd"
    )


def test_the_risk_page_shows_the_price_cushion_of_the_loan_held(app: AppTest):
    from econ.analysis.committed import committed_loan, covenant_breach_price

    go(app, "risk")
    assert not errors(app), errors(app)
    seed = load_scenario(SEED)
    base = project(seed)
    loan = committed_loan(
        seed, base.summary_records()[0]["summary"], base.lines["debt_balance_usd"][0]
    )
    expected = covenant_breach_price(seed, loan)["price_usd_per_mtok"]
    # rounded up, as the memo shows it (docs/memo.md): the price named is not itself in breach
    shown = math.ceil(expected * 1e4) / 1e4
    assert metric(app, "Covenant breached below [USD/M tokens]") == f"{shown:,.4f}"
    app.sidebar.selectbox[0].set_value("gpt-oss-120b-b200").run()  # all equity: no cushion
    assert not any(m.label.startswith("Covenant breached") for m in app.metric)


def test_the_tornado_and_data_table_hold_the_base_loan_when_asked(app: AppTest):
    from econ.analysis import sweep, tornado
    from econ.analysis.sensitivity import percent_ranges

    go(app, "risk")
    widget(app.toggle, "Hold the base case's loan").set_value(True).run()
    widget(app.button, "Run the tornado").click().run()
    widget(app.button, "Compute the data table").click().run()
    assert not app.exception and not errors(app), errors(app)
    table = app.session_state["econ.tornado_result"][2]
    shown = table[table["output"] == "min_dscr"].set_index("input")["output_low"]
    base = load_scenario(SEED)
    held = tornado(
        base, percent_ranges(base, list(shown.index), 20.0), outputs=("min_dscr",), hold_debt=True
    ).table.set_index("input")["output_low"]
    assert shown.to_dict() == pytest.approx(held.to_dict())
    assert min(shown) < 1.0  # a 20% lower input breaks the committed loan's cover
    # the held loan is said above the results, not again among the tornado's notes (the run's
    # notes begin with it: "held loan: every scenario holds ...")
    said = [t.value for t in [*app.info, *app.caption, *app.markdown]]
    assert not any("held loan: every scenario holds" in t.lower() for t in said)
    assert any(t.startswith("Every scenario holds") for t in said)
    cells = app.session_state["econ.data_table"][4]
    debt = project(base).summary.iloc[0].debt_usd
    assert cells.attrs["held_loan"]["debt_usd"] == pytest.approx(debt)
    grid = sweep(base, grid={"market.price_usd_per_mtok": [0.3]}, hold_debt=True).rows
    assert grid["debt_usd"].iloc[0] == pytest.approx(debt)
    assert sum("Every scenario holds" in i.value for i in app.info) == 2


def test_holding_the_loan_while_drawing_its_terms_names_the_toggle_not_a_flag(app: AppTest):
    import pandas as pd

    go(app, "risk")
    app.session_state["econ.mc_table"] = pd.DataFrame(
        [("financing.debt_share", "uniform(0.5, 0.7)")], columns=["path", "distribution"]
    )
    app.run()
    widget(app.number_input, "Scenarios").set_value(100).run()
    widget(app.toggle, "Hold the base case's loan").set_value(True).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception
    assert any(
        "Financing › Debt share [fraction]" in e and 'turn off "Hold the base case\'s loan"' in e
        for e in errors(app)
    ), errors(app)
    assert not any("--hold-debt" in e or "0.65 for 65 %" in e for e in errors(app))


@pytest.mark.parametrize(
    ("label", "value", "reason"),
    [
        ("Scenarios", 0, "“Scenarios”: 0 is below 1; expected a whole number from 1 to 100,000"),
        ("Seed", -1, "“Seed”: -1 is below 0; expected a whole number from 0 to 9,007,"),
    ],
)
def test_monte_carlo_parameters_out_of_range_show_st_error(app: AppTest, label, value, reason):
    go(app, "risk")
    widget(app.number_input, label).set_value(value).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception
    assert any(reason in e for e in errors(app)), errors(app)


def test_a_bad_distribution_shows_the_library_message(app: AppTest):
    import pandas as pd

    go(app, "risk")
    app.session_state["econ.mc_table"] = pd.DataFrame(
        [("utilization.share", "uniform(0.9, 0.1)")], columns=["path", "distribution"]
    )
    app.run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception
    assert any("Monte Carlo" in e and "uniform" in e for e in errors(app)), errors(app)


def test_the_tornado_runs_and_a_bad_swing_is_refused(app: AppTest):
    go(app, "risk")
    widget(app.button, "Run the tornado").click().run()
    assert not app.exception
    assert not errors(app), errors(app)
    from econ.analysis import tornado
    from econ.analysis.sensitivity import percent_ranges

    table = app.session_state["econ.tornado_result"][2]
    shown = table[table["output"] == "npv_usd"].set_index("input")["swing"]
    base = load_scenario(SEED)
    expected = tornado(base, percent_ranges(base, list(shown.index), 20.0), outputs=("npv_usd",))
    assert shown.to_dict() == pytest.approx(expected.table.set_index("input")["swing"].to_dict())
    widget(app.number_input, "Swing [± %]").set_value(150.0).run()
    widget(app.button, "Run the tornado").click().run()
    assert any(
        "“Swing [± %]”: 150 is out of range; expected a percentage above 0" in e
        for e in errors(app)
    ), errors(app)


# --- export ---------------------------------------------------------------------------------------


def test_export_offers_every_format(app: AppTest):
    prepare(go(app, "export"))
    buttons = {b.label: b.proto.help for b in app.get("download_button")}
    assert "Download the scenario (TOML)" in buttons
    # each named by what it holds, its file named in its help
    for label, suffix in (
        ("Excel workbook", ".xlsx"),
        ("Monthly schedule (CSV)", ".csv"),
        ("Summary (CSV)", ".summary.csv"),
        ("Monthly schedule (Parquet)", ".parquet"),
        ("Summary (Parquet)", ".summary.parquet"),
        ("Summary (JSON)", ".json"),
    ):
        assert buttons.get(label, "").endswith(f"{DEFAULT_SCENARIO}{suffix}"), (label, buttons)
    assert not errors(app)


def test_export_builds_each_file_on_request_once_and_never_for_another_scenario(
    app: AppTest, monkeypatch
):
    from econ.ui import compute

    built: list[tuple[str, str]] = []
    export_bytes = compute.export_bytes

    def counted(text, kind, stem=None):
        built.append((kind, stem))
        return export_bytes(text, kind, stem)

    monkeypatch.setattr(compute, "export_bytes", counted)
    go(app, "export")
    # opening the page builds nothing but the TOML (a link to 50 vintages over 600 months cost
    # every visitor 5 s and 100 MB for files nobody asked for)
    assert built == []
    assert [b.label for b in app.get("download_button")] == ["Download the scenario (TOML)"]
    prepares = [b.label for b in app.button if b.label.startswith("Prepare the ")]
    assert prepares == ["Prepare the memo"] + [f"Prepare the {k}" for k in EXPORT_KINDS]
    prepare(app, "Excel workbook")
    assert built == [("xlsx", DEFAULT_SCENARIO)]
    helps = {b.label: b.proto.help for b in app.get("download_button")}
    assert helps["Excel workbook"] == f"Downloads {DEFAULT_SCENARIO}.xlsx", helps
    # kept for the session: a rerun, another page and back offer it without building it again
    app.run()
    assert "Prepare the Excel workbook" not in [b.label for b in app.button]
    go(go(app, "results"), "export")
    assert built == [("xlsx", DEFAULT_SCENARIO)]
    assert "Excel workbook" in [b.label for b in app.get("download_button")]
    # another scenario: the workbook of the one before is dropped, never offered
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(80.0).run()
    go(app, "export")
    assert "Excel workbook" not in [b.label for b in app.get("download_button")]
    assert "econ.export.xlsx" not in app.session_state
    prepare(app, "Excel workbook")
    [(kind, stem)] = built[1:]
    assert kind == "xlsx" and stem.startswith(f"{DEFAULT_SCENARIO}-edited-"), stem
    helps = {b.label: b.proto.help for b in app.get("download_button")}
    assert helps["Excel workbook"] == f"Downloads {stem}.xlsx", helps
    assert not errors(app)


# --- state and form helpers -----------------------------------------------------------------------

scalars = hs.one_of(
    hs.integers(-(10**6), 10**6),
    hs.floats(allow_nan=False, allow_infinity=False, width=32),
    hs.text(max_size=8),
    hs.booleans(),
)
tables = hs.recursive(
    hs.dictionaries(hs.text(min_size=1, max_size=6), scalars, max_size=4),
    lambda inner: hs.dictionaries(hs.text(min_size=1, max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=50, deadline=None)
@given(base=tables, data=tables)
def test_merging_the_diff_restores_the_data(base, data):
    merged = state.merge(base, state.diff(data, base))
    for key, value in data.items():
        assert merged[key] == value or (
            isinstance(value, dict) and state.merge(base.get(key, {}), value) == merged[key]
        )


@settings(max_examples=50, deadline=None)
@given(edits=tables)
def test_a_link_decodes_to_the_edits_it_encodes(edits):
    assert state.decode(state.encode(edits)) == edits


def test_a_link_keeps_dates_as_text_the_models_accept():
    edits = {"start_date": dt.date(2027, 1, 1)}
    restored = state.merge(read_toml(SEED), state.decode(state.encode(edits)))
    assert state.validate(restored).scenario.start_date == dt.date(2027, 1, 1)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("%%%", "edits in the link are not readable"),
        ("a" * 20_000, "characters long"),
        (state.encode([1, 2]), "holds a list"),  # type: ignore[arg-type]
    ],
)
def test_a_link_that_is_not_a_scenario_raises_a_link_error(text, reason):
    with pytest.raises(state.LinkError, match=reason):
        state.decode(text)


def _walk(model, prefix=""):
    for name, info in model.model_fields.items():
        yield prefix + name, info
        inner, _ = state.unwrap_optional(info.annotation)
        if state.is_model(inner):
            yield from _walk(inner, prefix + name + ".")


def test_the_form_has_a_widget_for_every_scenario_field():
    paths = {p for p, _ in _walk(Scenario) if p != "schema_version"}
    assert {p for p in paths if find(p) is not None} == paths
    for path, info in _walk(Scenario):
        f = find(path)
        if f is not None and info.description:
            assert f.help == info.description


@settings(max_examples=50, deadline=None)
@given(value=hs.floats(0, 1, allow_nan=False))
def test_percent_widgets_round_trip_the_stored_fraction(value):
    f = find("utilization.share")
    assert f.scale == 100 and f.unit == "%"
    assert math.isclose(from_widget(f, to_widget(f, value)), value, rel_tol=1e-11, abs_tol=1e-15)


def test_table_rows_come_back_from_the_grid_in_stored_units():
    import pandas as pd

    from econ.ui.form import _rows_from_frame

    steps = find("throughput.steps")
    gain = next(c for c in steps.children if c.name == "gain")
    assert gain.scale == 100  # shown in percent
    frame = pd.DataFrame([{"month": 5, "gain": 19.8, "label": "v6.1"}, {"month": None}])
    assert _rows_from_frame(steps, frame) == [{"month": 5, "gain": 0.198, "label": "v6.1"}]
    sources = find("sources")
    frame = pd.DataFrame([{"name": "fleet.gpu_count", "value": "a quote"}, {"name": None}])
    assert _rows_from_frame(sources, frame) == {"fleet.gpu_count": "a quote"}


def test_toml_fields_round_trip_and_report_stray_keys():
    from econ.ui.form import parse_toml_field, toml_of

    vintages = find("vintages")
    value = [{"name": "gb300", "fleet": {"gpu_count": 72, "purchase_month": 18}}]
    assert parse_toml_field("vintages", toml_of("vintages", value), vintages) == value
    assert parse_toml_field("vintages", "", vintages) == []
    with pytest.raises(ValueError, match="unexpected key"):
        parse_toml_field("vintages", "fleet = 1", vintages)
    with pytest.raises(ValueError, match="not valid TOML"):
        parse_toml_field("vintages", "[[vintages]", vintages)


def test_fraction_fields_are_shown_as_percentages_and_units_come_from_descriptions():
    assert find("financing.discount_rate_annual").unit == "%/year"
    assert find("power.price_usd_per_kwh").label == "Price [USD/kWh]"
    assert find("fleet.gpu_count").kind == "int"
    assert find("throughput.steps").kind == "table"
    assert isinstance(find("depreciation.method"), FieldInfo)
    assert find("depreciation.factor").group == ("method", ("declining_balance",))
    assert fields_of(Scenario)[0].name == "name"


def test_labels_give_the_unit_once():
    # The unit in brackets unless the words already say it; percent as %.
    assert find("depreciation.custom_percent").label == "Custom [%]"
    assert find("fleet.racks").label == "Racks"
    assert find("throughput.tokens_per_s_per_gpu").label == "Output tokens/s per GPU"
    assert find("power.measured_tokens_per_s_per_gpu").label == "Measured tokens/s per GPU"
    assert find("power.kw_per_gpu").label == "kW per GPU"
    assert find("capex.gpu_price_usd").label == "GPU price [USD/GPU]"
    assert find("horizon_months").label == "Horizon [months]"
    assert find("utilization.share").label == "Share [%]"


def test_stored_path_label_names_the_unit_values_are_typed_in():
    # The Monte Carlo grid holds stored values (a share as 0.6): its labels say so, where the
    # form, which shows shares as percentages, says [%].
    assert path_label("utilization.share") == "Utilization › Share [%]"
    assert stored_path_label("utilization.share") == "Utilization › Share [fraction]"
    assert stored_path_label("market.price_decline_annual") == (
        "Market › Price decline [fraction/year]"
    )
    for unscaled in ("capex.gpu_price_usd", "throughput.tokens_per_s_per_gpu"):
        assert stored_path_label(unscaled) == path_label(unscaled)
    assert stored_path_label("no.such.field") == "no.such.field"
