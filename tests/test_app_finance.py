"""Issue 19 (the app for a finance team) through AppTest and the helpers behind it: the share
link, checks of a measured curve against the scenario, tornado swings within bounds, edited
sources, messages in the displayed unit, upload limits and sanity warnings.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from econ.ui import state
from tests import test_app
from tests.test_app import APP, DATA, SEED, errors, upload_curve, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario


def test_share_url_points_at_the_page_shown_with_this_runs_parameters():
    params = {"scenario": "seed", "edits": "abc"}
    url = state.share_url("risk", params, "http://host:8501/results?scenario=old")
    assert url == "http://host:8501/risk?scenario=seed&edits=abc"
    assert state.share_url("", params, "http://host:8501/risk") == (
        "http://host:8501/?scenario=seed&edits=abc"
    )
    # a base path in front of the app is kept
    assert state.share_url("power", {}, "https://h/apps/econ/") == "https://h/apps/econ/power"


def test_link_params_follow_the_edit_of_the_same_run():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    widget(at.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    assert not at.exception
    edits = at.query_params["edits"]
    edits = edits[0] if isinstance(edits, list) else edits
    assert state.decode(edits)["utilization"]["share"] == 0.9
    url = state.share_url("", {"edits": edits}, "http://h/")
    assert state.decode(parse_qs(urlsplit(url).query)["edits"][0]) == state.decode(edits)


# --- 2. a measured curve of another model or GPU ----------------------------------------------------


def _curve_with(model: str, hardware: str) -> bytes:
    lines = (DATA / "sample_curve.csv").read_text().splitlines()
    rows = [lines[0] + ",model,hardware"] + [f"{line},{model},{hardware}" for line in lines[1:]]
    return ("\n".join(rows) + "\n").encode()


def test_a_curve_of_another_model_and_gpu_needs_an_explicit_confirmation(app: AppTest):
    upload_curve(app, "l40s.csv", _curve_with("meta-llama/Llama-3.2-3B-Instruct", "NVIDIA L40S"))
    text = " ".join(w.value for w in app.warning)
    assert "NVIDIA L40S" in text and "gb200-nvl72" in text
    assert "Llama-3.2-3B" in text and "deepseek-r1" in text
    use = app.button(key="econ.use_measured")
    assert use.disabled
    before = app.session_state[state.DATA]["throughput"]["tokens_per_s_per_gpu"]
    widget(app.checkbox, "Use it anyway: I confirm this curve stands for the scenario's deployment")
    next(c for c in app.checkbox if c.label.startswith("Use it anyway")).check().run()
    use = app.button(key="econ.use_measured")
    assert not use.disabled
    use.click().run()
    throughput = app.session_state[state.DATA]["throughput"]
    assert throughput["tokens_per_s_per_gpu"] != before
    assert "confirmed in the app" in throughput["source"]


def test_a_curve_of_the_scenarios_model_and_gpu_is_used_without_question(app: AppTest):
    upload_curve(app, "gb200.csv", _curve_with("deepseek-ai/DeepSeek-R1", "NVIDIA GB200"))
    assert not [w for w in app.warning if "not of the scenario's" in w.value]
    use = app.button(key="econ.use_measured")
    assert not use.disabled


def test_curve_mismatches_name_both_sides_and_what_the_file_does_not_state():
    from econ import load_scenario
    from econ.throughput.match import hardware_key_of, model_key_of
    from econ.ui.checks import curve_mismatches

    scenario = load_scenario(SEED)
    assert hardware_key_of("NVIDIA GB200 NVL72") == "gb200-nvl72"  # not b200 (longest chip first)
    assert hardware_key_of("NVIDIA H200-SXM-141GB") == "h200-sxm"
    assert hardware_key_of("NVIDIA L40S") is None
    assert model_key_of("meta-llama/Llama-2-70b-chat-hf") == "llama2-70b"
    differences, unknowns = curve_mismatches(
        {"model": "meta-llama/Llama-2-70b-chat-hf", "hardware": "NVIDIA H200"},
        pd.DataFrame(),
        scenario,
    )
    assert len(differences) == 2 and not unknowns
    assert curve_mismatches({}, pd.DataFrame(), scenario) == ([], ["hardware", "model"])


# --- 3. the tornado within each field's bounds ------------------------------------------------------


def test_tornado_swings_are_clipped_to_the_fields_bounds():
    from econ import load_scenario
    from econ.ui.risk import bounded_ranges

    base = load_scenario(SEED, {"utilization.share": 0.9})
    ranges, clipped = bounded_ranges(base, ["utilization.share", "market.price_usd_per_mtok"], 20)
    assert ranges["utilization.share"] == pytest.approx((0.72, 1.0))  # 1.08 is above the le=1
    assert clipped == ["utilization.share"]
    assert ranges["market.price_usd_per_mtok"][1] == pytest.approx(
        base.market.price_usd_per_mtok * 1.2
    )


def test_the_default_tornado_runs_above_83_percent_utilization_and_labels_by_form(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    app.switch_page("econ/ui/pages/risk.py").run()
    widget(app.button, "Run the tornado").click().run()
    assert not app.exception and not [e.value for e in app.error], [e.value for e in app.error]
    notes = " ".join(i.value for i in app.info)
    assert "clipped" in notes and "Utilization › Share [%] 72 to 100" in notes
    table = app.session_state["econ.tornado_result"][2]
    low = table[(table["input"] == "utilization.share") & (table["output"] == "npv_usd")]
    assert len(low) == 1
    options = widget(app.multiselect, "Inputs").options
    assert "Utilization › Share [%]" in options


# --- 4. edits cited in [sources] ---------------------------------------------------------------------


def test_edited_inputs_are_cited_in_sources_of_the_downloaded_toml(app: AppTest):
    import datetime as dt
    import tomllib

    from econ.scenario import dumps

    original = app.session_state[state.BASE]["sources"]["utilization.share"]
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    widget(app.sidebar.number_input, "Financing › Debt share [%]").set_value(50.0).run()
    assert not app.exception
    scenario = state.validate(app.session_state[state.DATA]).scenario  # what Export downloads
    sources = tomllib.loads(dumps(scenario))["sources"]
    today = dt.date.today().isoformat()
    assert sources["utilization.share"] == (
        f"edited in the app on {today} (was: 70 %; source: {original})"
    )
    assert sources["financing.debt_share"].startswith(f"edited in the app on {today} (was: 70 %")
    # back to the base value: the base's own source again
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(70.0).run()
    assert app.session_state[state.DATA]["sources"]["utilization.share"] == original


# --- 5. messages in the unit the field is shown in ---------------------------------------------------


def test_a_percent_field_out_of_bounds_is_reported_in_percent(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(150.0).run()
    assert not app.exception
    text = " ".join(errors(app))
    assert "150 % is above 100 %" in text and "less than or equal to 1" not in text


def test_validation_problems_are_listed_one_a_line():
    from econ.scenario import read_toml

    data = read_toml(SEED)
    data["utilization"]["share"] = 1.5
    data["market"]["price_usd_per_mtok"] = -1
    lines = state.validate(data).message.splitlines()
    assert lines == [
        "- Utilization › Share [%]: 150 % is above 100 % (expected at most 100 %)",
        "- Market › Price [USD/M tokens]: -1 USD/M tokens is below 0 USD/M tokens (expected at "
        "least 0 USD/M tokens)",
    ]


def test_a_count_out_of_bounds_is_written_in_full():
    # "1e+09 GPUs is above 1e+08 GPUs": six significant digits wrote large counts in exponents
    from econ.scenario import read_toml

    data = read_toml(SEED)
    data["fleet"]["gpu_count"] = 1_000_000_000
    assert state.validate(data).message.splitlines() == [
        "Fleet › GPU count [GPUs]: 1,000,000,000 GPUs is above 100,000,000 GPUs (expected at "
        "most 100,000,000 GPUs)"
    ]


def test_a_fraction_typed_into_a_percent_field_gets_a_did_you_mean(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(0.7).run()
    hints = [w.value for w in app.sidebar.warning]
    assert any("did you mean 70 %?" in h for h in hints), hints
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(75.0).run()
    assert not any("did you mean" in w.value for w in app.sidebar.warning)


def test_a_tpot_limit_no_point_meets_is_reported_in_ms(app: AppTest):
    upload_curve(app, "sample_curve.csv", (DATA / "sample_curve.csv").read_bytes())
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(1.0).run()
    text = " ".join(errors(app))
    assert "TPOT p99 ≤ 1 ms" in text and "tpot_s_p99" not in text, text


# --- 7. no command-line wording, no server paths ---------------------------------------------------


def test_app_text_speaks_of_the_apps_controls_and_the_uploaded_files_name():
    import tempfile

    from econ.throughput.importers import CurveError
    from econ.ui.compute import app_text, curve

    # the message of an upload names the temporary folder the app wrote it into
    with pytest.raises(CurveError) as refused:
        curve("run.csv", b"concurrency,output_tokens_per_s\nabc,1\n")
    temp = tempfile.gettempdir()
    assert str(refused.value).startswith(f"{temp}/econ-upload-")
    assert app_text(refused.value).startswith("run.csv: line 2, column 'concurrency': 'abc'")
    # a path in the user's own text is kept: a zip member's name (it lost its folders)
    member = f"slip.zip: member '../../../..{temp}/shared/pwned.txt' points outside the archive"
    assert app_text(member) == member
    assert app_text(f"{temp}/tmpk3j_x9ab/run.csv: x") == f"{temp}/tmpk3j_x9ab/run.csv: x"
    text = app_text("per-GPU throughput is unknown (pass --gpus N)")
    assert "--gpus" not in text and '"GPUs that served it" box' in text
    assert (
        app_text("--step '5:x': gain 'x' is not a number") == "step '5:x': gain 'x' is not a number"
    )
    assert app_text("tpot_s_p99 = 0.0123 (limit 0.005)") == "TPOT p99 = 12.3 ms (limit 5 ms)"


def test_a_curve_without_a_gpu_count_points_at_the_gpus_box(app: AppTest):
    import tempfile

    frame = pd.read_csv(DATA / "sample_curve.csv").drop(columns=["gpu_count"])
    upload_curve(app, "no_gpus.csv", frame.to_csv(index=False).encode())
    shown = " ".join([w.value for w in app.warning] + errors(app))
    assert "GPUs that served it" in shown, shown
    assert "--gpus" not in shown and tempfile.gettempdir() not in shown


# --- 6. uploads above the limit ---------------------------------------------------------------------


def test_an_oversized_benchmark_file_names_itself_and_the_limit_and_clears_the_last_file(app):
    from econ.ui.pages.throughput import CURVE_FILE

    upload_curve(app, "sample_curve.csv", (DATA / "sample_curve.csv").read_bytes())
    assert CURVE_FILE in app.session_state
    app.get("file_uploader")[0].upload("big.json", b"x" * (6 * 1024 * 1024), "text/csv").run()
    shown = errors(app)
    assert any("big.json" in e and "5 MB limit" in e for e in shown), shown
    assert not any("sample_curve" in e for e in shown)
    assert CURVE_FILE not in app.session_state
    assert not [m for m in app.metric if m.label.startswith("Measured operating point")]


def test_an_oversized_scenario_file_names_the_limit(app: AppTest):
    app.switch_page("econ/ui/pages/scenario.py").run()
    content = b"# padding\n" * 120_000
    app.get("file_uploader")[0].upload("big.toml", content, "application/toml").run()
    assert any("big.toml" in e and "1 MB limit" in e for e in errors(app)), errors(app)


# --- 8. sanity warnings -----------------------------------------------------------------------------


def test_extreme_values_get_sanity_warnings_and_ordinary_ones_none():
    from econ import load_scenario
    from econ.ui.checks import power_budget_warning, sanity_warnings

    assert sanity_warnings(load_scenario(SEED)) == []
    odd = sanity_warnings(
        load_scenario(
            SEED,
            {"fleet.gpu_count": 50_000_000, "financing.discount_rate_annual": -0.05},
        )
    )
    text = " ".join(odd)
    assert "50,000,000 GPUs" in text and "-5 %/year" in text and "MW of IT power" in text
    assert "100,000 MW" in power_budget_warning(100_000)
    assert power_budget_warning(10) is None


def test_the_sidebar_warns_of_fifty_million_gpus_and_the_power_page_of_a_huge_hall(app: AppTest):
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(50_000_000).run()
    assert any("50,000,000 GPUs" in w.value for w in app.sidebar.warning)
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(72).run()
    app.switch_page("econ/ui/pages/power.py").run()
    widget(app.number_input, "Power budget [MW]").set_value(100_000.0).run()
    assert not app.exception
    assert any("100,000 MW" in w.value for w in app.warning)


def test_the_sidebar_checks_inputs_after_the_page_shows_its_figures(monkeypatch):
    """The input checks read the whole MLPerf catalog on a server's first run (0.1-0.2 s): the
    sidebar leaves them a slot under the scenario's description, filled once the page is drawn."""
    from econ.ui import checks, fmt

    order = []
    check, metric = checks.sanity_warnings, fmt.format_metric
    monkeypatch.setattr(checks, "sanity_warnings", lambda s: order.append("check") or check(s))
    monkeypatch.setattr(fmt, "format_metric", lambda *a: order.append("metric") or metric(*a))
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception
    assert order[0] == "metric" and order.count("check") == 1, order
    widget(at.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(50_000_000).run()
    nodes = list(at.sidebar)
    warned = next(i for i, n in enumerate(nodes) if "50,000,000 GPUs" in getattr(n, "value", ""))
    assert nodes[warned - 1].type == "caption", nodes  # under the scenario's description


def test_the_liquid_retrofit_toggle_is_off_where_it_cannot_apply(app: AppTest):
    """GB200 NVL72 racks in their own (liquid) hall: nothing to retrofit, so the toggle is
    disabled and says why, instead of an error box naming a command-line flag."""
    app.switch_page("econ/ui/pages/power.py").run()
    toggle = widget(app.toggle, "Retrofit liquid cooling in an air hall")
    assert (
        toggle.disabled and "racks are liquid-cooled and the hall is liquid-cooled" in toggle.help
    )
    widget(app.selectbox, "Hall cooling").set_value("air").run()
    toggle = widget(app.toggle, "Retrofit liquid cooling in an air hall")
    assert not toggle.disabled
    toggle.set_value(True).run()
    assert not app.exception and not errors(app), errors(app)
    assert not any("--retrofit-liquid" in e for e in errors(app))
    shown = [w.value for w in app.warning]
    assert any(w.startswith("The budget of 10 MW is read as IT (critical) load") for w in shown)
    assert not any("--mw" in w or "--basis" in w for w in shown)  # no command-line flags


# --- 12. wording ------------------------------------------------------------------------------------


def test_one_month_is_singular_in_the_projection_warnings():
    from econ.engine import _months

    assert (_months(1), _months(23)) == ("1 month", "23 months")


# --- 14. the two-way data table ---------------------------------------------------------------------


def test_the_data_table_equals_projecting_each_pair():
    from econ import load_scenario, project
    from econ.ui.risk import axis_values, data_table

    base = load_scenario(SEED)
    rows, cols = [0.5, 0.9], [0.2, 0.4, 0.6]
    table = data_table(
        base, "utilization.share", rows, "market.price_usd_per_mtok", cols, "npv_usd"
    )
    assert table.shape == (2, 3)
    for r in rows:
        for c in cols:
            one = project(
                load_scenario(SEED, {"utilization.share": r, "market.price_usd_per_mtok": c})
            ).summary.iloc[0]
            assert table.loc[r, c] == pytest.approx(one.npv_usd, rel=1e-9, abs=1e-6)
    assert axis_values(1, 3, 5, integer=True) == [1, 2, 3]


def test_the_risk_page_computes_and_exports_the_data_table(app: AppTest):
    app.switch_page("econ/ui/pages/risk.py").run()
    widget(app.button, "Compute the data table").click().run()
    assert not app.exception and not errors(app), errors(app)
    text, row_path, col_path, output, table = app.session_state["econ.data_table"]
    assert (row_path, col_path, output) == (
        "utilization.share",
        "market.price_usd_per_mtok",
        "npv_usd",
    )
    assert table.shape == (5, 5)
    assert list(table.index) == pytest.approx([56, 63, 70, 77, 84])  # shown in %
    assert app.get("download_button")


# --- 13. compare up to 8, differences from the base, export ------------------------------------------


def test_compare_takes_eight_scenarios_with_differences_from_the_base_and_exports(app: AppTest):

    from econ import load_scenario, project
    from econ.catalog import ready_made_scenarios

    names = list(ready_made_scenarios())
    picked = ["current scenario", *[n for n in names if n != "deepseek-r1-gb200-nvl72"]][:8]
    assert len(picked) == 8
    app.switch_page("econ/ui/pages/compare.py").run()
    app.multiselect[0].set_value(picked).run()
    assert not app.exception and not errors(app), errors(app)
    table = app.dataframe[0].value
    npv = table[table["metric"] == "NPV [USD]"].iloc[0]
    other = picked[1]
    expected = project(load_scenario(ready_made_scenarios()[other])).summary.iloc[0]
    base = project(load_scenario(SEED)).summary.iloc[0]
    assert npv[f"{other} − base"] == f"{expected.npv_usd - base.npv_usd:+,.0f}"
    inputs = app.dataframe[1].value
    assert "Utilization › Share [%]" in list(inputs["input"]) or "Fleet › Gpu count [GPUs]" in list(
        inputs["input"]
    )
    downloads = {b.proto.label: b for b in app.get("download_button")}
    assert "Download the comparison (workbook)" in downloads
    assert "Download the results (CSV)" in downloads


def test_the_comparison_workbook_has_results_and_inputs_sheets():
    import io

    import pandas as pd
    from openpyxl import load_workbook

    from econ.ui.pages.compare import difference, workbook_bytes

    results = pd.DataFrame({"metric": ["npv_usd"], "a": [2.0], "b": [5.0], "b - a": [3.0]})
    inputs = pd.DataFrame({"input": ["=cmd()"], "a": ["1"], "path": ["x"]})
    book = load_workbook(io.BytesIO(workbook_bytes(results, inputs)))
    assert book.sheetnames == ["Results", "Inputs"]
    assert book["Results"]["D2"].value == 3.0
    assert not str(book["Inputs"]["A2"].value).startswith("=")  # formula text neutralized
    assert difference(5.0, 2.0) == 3.0 and difference(None, 2.0) is None


def test_the_comparison_workbook_holds_numbers_formatted_by_metric_and_labelled():
    # Found by a browser review: inputs were text ('40,000'), rows raw keys, IRRs bare fractions
    # and one difference -2.886579864025407e-15.
    import io

    from openpyxl import load_workbook

    from econ.ui.pages.compare import difference, inputs, workbook_bytes
    from econ.workbook import CURRENCY, PERCENT

    results = pd.DataFrame(
        {
            "metric": ["NPV [USD]", "Project IRR [%/year]"],
            "key": ["npv_usd", "irr_project_annual"],
            "a": [2.0, 0.0813],
            "b": [5.0, 0.0813],
            "b - a": [difference(5.0, 2.0), difference(0.0813, 0.0813 + 2.9e-15)],
        }
    )
    assert results["b - a"].tolist() == [3.0, 0.0]  # rounding, not a difference
    given = inputs({"capex": {"gpu_price_usd": 40000.0}, "utilization": {"share": 0.7}})
    frame = pd.DataFrame(
        {"input": [v[0] for v in given.values()], "a": [v[2] for v in given.values()]}
    )
    book = load_workbook(io.BytesIO(workbook_bytes(results, frame)))
    sheet = book["Results"]
    assert sheet["A2"].value == "NPV [USD]" and sheet["B2"].value == "npv_usd"
    assert sheet["C2"].number_format == CURRENCY and sheet["C3"].number_format == PERCENT
    assert sheet["E3"].value == 0
    cells = {row[0].value: row[1].value for row in book["Inputs"].iter_rows(min_row=2)}
    price = next(k for k in cells if "GPU price" in k)
    share = next(k for k in cells if "Share" in k)
    assert cells[price] == 40000 and isinstance(cells[price], int | float)
    assert "[%]" in share and cells[share] == pytest.approx(70.0)  # in the label's unit


# --- 10. tables with labels and units --------------------------------------------------------------


def test_readable_tables_have_labels_dates_and_the_money_scale():
    from econ.ui.fmt import readable

    frame = pd.DataFrame(
        {
            "date": pd.to_datetime(["2026-04-01"]),
            "capex_usd": [130523316019200.03],
            "gpu_count": [72],
            "share": [0.123456789],
        }
    )
    styled = readable(frame, "million USD")
    shown = styled.data
    assert shown.iloc[0, 0] == "2026-04-01"
    assert "[million USD]" in shown.columns[1] and "_" not in "".join(shown.columns)
    html = styled.to_html()
    assert "130,523,316.02" in html and "0.123457" in html and "2026-04-01 00:00:00" not in html


def test_rates_are_not_money_amounts_and_ratios_read_as_ratios():
    """A vintage's levelized cost [USD/M tokens] is neither scaled to million USD nor rounded to
    whole dollars (it showed 0); DSCR and LLCR to 2 decimals, LTV in percent, breaches yes/no."""
    from econ.ui.fmt import readable

    frame = pd.DataFrame(
        {
            "lcot_usd_per_mtok": [0.2295561],
            "revenue_usd": [30_680_000.0],
            "dscr": [9.10998],
            "llcr": [float("nan")],
            "ltv": [0.0931751],
            "covenant_breach": [1.0],
            "spot_revenue_usd": [5.0],
        }
    )
    styled = readable(frame, "million USD")
    assert list(styled.data.columns) == [
        "Levelized cost [USD/M tokens]",
        "Revenue [million USD]",
        "DSCR",
        "LLCR",
        "LTV",
        "Covenant breach",
        "Of which spot rentals [million USD]",
    ]
    html = styled.to_html()
    for text in ("0.2296", "30.68", "9.11", "n/a", "9.3%", "yes"):
        assert f">{text}<" in html, text


def test_results_tables_are_readable_in_the_app(app: AppTest):
    app.switch_page("econ/ui/pages/results.py").run()
    assert not app.exception
    frames = [d.value for d in app.dataframe]
    assert not any("gpus_in_service" in map(str, f.columns) for f in frames)


def test_choices_are_shown_as_words():
    from econ.ui.form import choice_label

    assert choice_label("straight_line") == "Straight line"
    assert choice_label("us_gaap") == "US GAAP"


def test_the_catalog_row_defaults_to_the_scenarios_own(app: AppTest):
    app.switch_page("econ/ui/pages/throughput.py").run()
    assert not app.exception
    row = widget(app.selectbox, "Row")
    chosen = row.format_func(row.value) if hasattr(row, "format_func") else str(row.value)
    assert "4,867.7" in chosen and "(the scenario's)" in chosen, chosen


# --- 11. charts ----------------------------------------------------------------------------------


def test_reference_lines_carry_their_label_and_the_dscr_chart_its_covenant_floor(app: AppTest):
    from econ.ui import charts

    spec = charts.rule(1.2, "covenant floor 1.2x").to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rule", "text"]
    import json

    specs = [json.loads(c.proto.spec) for c in app.get("vega_lite_chart")]
    dscr = [s for s in specs if "DSCR [x]" in json.dumps(s)]
    assert dscr and '"rule"' in json.dumps(dscr[0]) and '"text"' in json.dumps(dscr[0])


def test_counts_are_scaled_in_words_as_the_tiles_do():
    from econ.ui.charts import count_scale

    assert count_scale(8e11) == (1e9, "billion")
    assert count_scale(5.5e13) == (1e12, "trillion")
    assert count_scale(10.0) == (1.0, "")


def test_the_gains_caption_follows_the_steps_typed(app: AppTest):
    app.switch_page("econ/ui/pages/gains.py").run()
    assert any("+19.8% at month 5" in c.value for c in app.caption)
    widget(app.text_area, "Try other steps instead (one per line: WHEN:GAIN or WHEN:GAIN:LABEL)")
    app.text_area[0].set_value("12:+10%").run()
    assert not app.exception
    captions = [c.value for c in app.caption]
    assert any("+10.0% at month 12" in c for c in captions), captions
    assert not any("+19.8% at month 5" in c for c in captions)


def test_the_sizing_capex_is_the_one_results_shows_after_use(app: AppTest):
    app.switch_page("econ/ui/pages/power.py").run()
    assert not app.exception
    gpus = int(next(m.value for m in app.metric if m.label == "GPUs").replace(",", ""))
    capex = [m.value for m in app.metric if m.label == "Capex [USD]"]
    per_gpu = 3_100_000 / 72 + 4300 + 1750  # the seed scenario's prices per GPU
    assert capex == [f"{gpus * per_gpu:,.0f}"]
    assert any("networking" in c.value and "installation" in c.value for c in app.caption)
    use = next(b for b in app.button if b.label.startswith(f"Use {gpus:,} GPUs"))
    use.click().run()
    app.switch_page("econ/ui/pages/results.py").run()
    assert [m.value for m in app.metric if m.label == "Capex [USD]"] == capex


def test_a_difference_is_signed_and_a_change_of_a_percentage_is_in_points():
    from econ.ui.fmt import format_change, header

    assert format_change(16520.4, "usd") == "+16,520"
    assert format_change(-0.0011, "usd_per_mtok") == "-0.0011"
    assert (
        format_change(0.004, "pct") == "+0.4 pts" and format_change(-4.373, "pct") == "-437.3 pts"
    )
    assert format_change(0.0, "usd") == "0"
    assert format_change(-0.2, "usd") == "0" and format_change(-1e-5, "pct") == "0.0 pts"
    from econ.ui.fmt import format_value

    assert format_value(-1e-5, "pct") == "0.0%" and format_value(-0.3, "usd") == "0"  # no "-0"
    assert format_value(-0.0012, "pct") == "-0.1%" and format_value(-2e-7, "number") == "-2e-07"
    assert format_change(None, "usd") == "n/a"
    assert format_change(2_500_000.0, "usd", "million USD") == "+2.50"
    # headers: plain lowercase words in sentence case; keys, labels and scenario names kept
    assert header("metric") == "Metric" and header("saved (UTC)") == "Saved (UTC)"
    assert header("racks it allows") == "Racks it allows"
    for kept in ("deepseek-r1-gb200-nvl72", "npv_usd", "NPV [USD]", "Year 1", 2027):
        assert header(kept) == str(kept)


def test_field_labels_spell_abbreviations_as_finance_does():
    from econ.ui.form import path_label

    assert path_label("opex.sga_share_of_revenue") == "Opex › SG&A share of revenue [%]"


def test_warnings_read_in_labels_and_the_credit_ones_come_first():
    from econ.ui.fmt import readable_warning, severe_first

    irr = (
        "equity cash flows change sign more than once (roots found, NPV as the rate rises: 6.66% "
        "(rises), 436.37% (falls)): irr_equity_annual is the only rate in (-99%, +1,000%) a year "
        "at which the NPV falls through zero as the rate rises; judge it with npv_usd and "
        "mirr_equity_annual"
    )
    shown = readable_warning(irr)
    assert shown.startswith("Equity cash flows change sign")
    assert "Equity IRR is the only rate" in shown and "judge it with NPV and Equity MIRR" in shown
    assert "_annual" not in shown and "npv_usd" not in shown
    sized = (
        "debt sized to a minimum DSCR of 1.3x: 0 USD (0.0% of capex); binding constraint: ltv "
        "(debt_sizing_constraint = 3); no debt because ..."
    )
    assert "debt_sizing_constraint" not in readable_warning(sized)
    # dotted input paths are not summary keys (gpu_count is one; fleet.gpu_count an input): the
    # form's labels name them, as validation messages do
    said = readable_warning("x: set fleet.gpu_count lower")
    assert said == "X: set “Fleet › GPU count [GPUs]” lower", said
    assert readable_warning("judge it with npv_usd.") == "Judge it with NPV."  # a sentence's end
    path_first = "facility.rack_cooling is 'air' but gb200-nvl72 racks are liquid-cooled"
    said = readable_warning(path_first)  # not "Facility.rack_cooling"
    assert said == "“Facility › Rack cooling” is Air but gb200-nvl72 racks are liquid-cooled", said
    no_debt = "binding constraint: ltv; no debt because ... (its term is longer than the book life)"
    assert severe_first(["x", no_debt]) == ["x", no_debt]
    breach = "covenant breached in 23 months, first in month 40"
    assert severe_first([irr, breach, "no resale curve"]) == [breach, irr, "no resale curve"]
    calm = "first_breach_month is null: no covenant is breached"
    assert severe_first([irr, calm]) == [irr, calm]  # good news is not a credit warning


def test_choice_fields_of_one_method_are_grouped_under_it():
    """Usage driver, recovery years, convention and value source apply to one depreciation
    method each; with another method the Scenario page shows them apart, as other parameters."""
    from econ.scenario import Scenario
    from econ.ui.form import fields_of

    depreciation = next(f for f in fields_of(Scenario) if f.name == "depreciation")
    groups = {f.name: f.group for f in depreciation.children}
    assert groups["usage_driver"] == ("method", ("units_of_production",))
    assert groups["recovery_years"] == groups["convention"] == ("method", ("macrs_gds",))
    assert groups["value_source"] == ("method", ("economic",))
    assert groups["method"] is None and groups["life_years"] is None


def test_costs_stack_in_the_order_given_with_tax_on_top():
    # Found by a browser review: quarterly tax sat at the bottom of the stack and lifted every
    # layer above it; the stack order differed from the legend's.
    from econ.ui import charts

    frame = pd.DataFrame(
        {
            "date": pd.to_datetime(["2026-02-01", "2026-03-01"]),
            "power_usd": [1.0, 1.0],
            "depreciation_usd": [2.0, 2.0],
            "tax_usd": [0.0, 5.0],
            "revenue_usd": [9.0, 9.0],
        }
    )
    costs = {"power_usd": "Power", "depreciation_usd": "Depreciation", "tax_usd": "Tax"}
    spec = charts.stacked_costs_and_revenue(frame, costs, "revenue_usd", "Month", "USD", ",.0f")
    area = spec.layer[0]
    encoding = area.to_dict()["encoding"]
    assert encoding["order"] == {"field": "stack", "type": "quantitative", "sort": "ascending"}
    assert encoding["color"]["sort"] == ["Power", "Depreciation", "Tax"]  # the legend, alike
    stack = area.data.drop_duplicates("line").set_index("line")["stack"].to_dict()
    assert stack == {"Power": 0, "Depreciation": 1, "Tax": 2}  # tax last: on top


def test_the_tornado_chart_orders_its_bars_by_rank():
    # Sorted by swing, the NaN swings (output undefined at an end) went last and a flat input
    # (swing 0) above them, the chart telling what the table's ranks no longer do.
    from econ.ui import charts

    rows = pd.DataFrame(
        {
            "input": ["price", "utilization", "discount"],
            "swing": [float("nan"), float("nan"), 0.0],
            "rank": [1, 2, 3],
            "output_low": [float("nan"), float("nan"), 8.1],
            "output_high": [67.3, 40.0, 8.1],
            "output_base": [8.1, 8.1, 8.1],
        }
    )
    spec = charts.tornado(rows, 20.0, "IRR [%]", ".1f").to_dict()
    sorts = [
        layer["encoding"]["y"].get("sort")
        for layer in spec["layer"]
        if "y" in layer.get("encoding", {})
    ]
    assert sorts and all(s == ["price", "utilization", "discount"] for s in sorts)
