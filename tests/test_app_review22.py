"""The twenty-second review of the app (its report's items by number), through Streamlit's
AppTest; what needs a browser is in tests/test_browser_review22.py.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.scenario import read_toml
from econ.ui.pages import risk as risk_page
from tests.conftest import ROOT
from tests.test_app import errors, go, prepare, widget
from tests.test_app_review2 import open_app
from tests.test_app_review3 import downloads  # noqa: F401 - the download spy fixture

MONTECARLO = risk_page.MONTECARLO


@pytest.fixture
def app() -> AppTest:
    return open_app()


def run_monte_carlo(at: AppTest) -> None:
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception, at.exception


# --- 1. a seed beyond 2^53 - 1 is refused, and nothing runs ---------------------------------------

MAX_SEED_TEXT = f"{2**53 - 1:,}"  # 9,007,199,254,740,991: JavaScript's Number.MAX_SAFE_INTEGER


@pytest.mark.parametrize(
    ("typed", "value"),
    [(1e20, "1e+20"), (float(2**53), "9.0072e+15")],  # 9007199254740993 typed: 2^53 in a browser
)
def test_a_seed_beyond_what_a_browser_holds_is_refused_and_nothing_runs(app: AppTest, typed, value):
    go(app, "risk")
    widget(app.number_input, "Seed").set_value(typed).run()
    said = (
        f"“Seed”: {value} is beyond {MAX_SEED_TEXT}, the largest whole number a box holds "
        f"exactly; expected a whole number from 0 to {MAX_SEED_TEXT}"
    )
    assert errors(app) == [said]
    run_monte_carlo(app)
    assert errors(app) == [said]  # once, under the box
    assert MONTECARLO not in app.session_state  # not run with another seed


def test_the_largest_seed_a_browser_holds_runs_and_is_named(app: AppTest):
    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(100).run()
    widget(app.number_input, "Seed").set_value(float(2**53 - 1)).run()
    run_monte_carlo(app)
    assert not errors(app), errors(app)
    assert app.session_state[MONTECARLO][6][2] == 2**53 - 1
    assert any(f"seed {2**53 - 1}," in c.value for c in app.caption)


# --- 5. no stale hint under a small run -----------------------------------------------------------


def test_a_small_run_is_warned_of_without_the_stale_exponent_hint(app: AppTest):
    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(50).run()
    run_monte_carlo(app)
    few = [w.value for w in app.warning if "Only 50 scenarios" in w.value]
    assert few == [
        "Only 50 scenarios: quantiles, value at risk and the probability of loss from so few "
        "draws say little."
    ]
    widget(app.number_input, "Scenarios").set_value(1e3).run()  # "1e3" typed: 1,000 scenarios
    run_monte_carlo(app)
    assert len(app.session_state[MONTECARLO][1]) == 1000


# --- 6. one clear error for a fraction of a scenario, no "None" -----------------------------------


@pytest.mark.parametrize(
    ("label", "typed", "said"),
    [
        (
            "Scenarios",
            2.5,
            "“Scenarios”: 2.5 is not a whole number; expected a whole number from 1 to 100,000",
        ),
        (
            "Scenarios",
            100_001,
            "“Scenarios”: 100,001 is above 100,000; expected a whole number from 1 to 100,000",
        ),
        (
            "Scenarios",
            None,
            "“Scenarios” is empty; expected a whole number from 1 to 100,000",
        ),
        ("Seed", None, f"“Seed” is empty; expected a whole number from 0 to {MAX_SEED_TEXT}"),
    ],
)
def test_a_monte_carlo_box_it_cannot_take_gives_one_error(app: AppTest, label, typed, said):
    go(app, "risk")
    widget(app.number_input, label).set_value(typed).run()
    run_monte_carlo(app)
    assert errors(app) == [said]
    assert not any("None" in e for e in errors(app))
    assert MONTECARLO not in app.session_state


# --- 2. the Scenario page runs `econ validate`'s check of the measured curve file -----------------

SEED_TEXT = (ROOT / "models" / "scenarios" / f"{DEFAULT_SCENARIO}.toml").read_text()


def with_curve(curve: str) -> str:
    return SEED_TEXT + f'\n[throughput.measured]\ncurve = "{curve}"\n'


@pytest.mark.parametrize("curve", ["<script>alert(1)</script>.csv", "gone.csv"])
def test_a_missing_measured_curve_is_not_valid_as_econ_validate_says(curve, tmp_path, capsys):
    from econ.cli import main

    file = tmp_path / "mine.toml"
    file.write_text(with_curve(curve))
    assert main(["validate", str(file)]) == 3
    said = capsys.readouterr().err
    assert f"throughput.measured: {tmp_path / curve}: no such file" in said, said

    at = open_app(None, "scenario")
    at.get("file_uploader")[0].upload("mine.toml", file.read_bytes(), "application/toml").run()
    assert not at.exception
    assert not [s.value for s in at.success if "is valid" in s.value]
    reason = f"Throughput › Measured › Curve: models/scenarios/{curve}: no such file"
    assert f"The scenario is not valid:\n\n{reason}" in errors(at), errors(at)
    go(at, "results")  # the same reason, before any projection
    assert any(reason in e for e in errors(at)) and not [e for e in errors(at) if "Projection" in e]


def test_a_link_to_a_missing_curve_in_a_vintage_names_the_vintage():
    from econ.ui import state

    data = read_toml(ready_made_scenarios()[DEFAULT_SCENARIO])
    vintage = {"name": "later", "fleet": {"gpu_count": 72, "purchase_month": 12}}
    vintage["throughput"] = {"measured": {"curve": "gone.csv"}}
    checked = state.validate({**data, "vintages": [vintage]})
    assert not checked.ok
    assert checked.message == (
        "Vintages › later › Throughput › Measured › Curve: models/scenarios/gone.csv: no such file"
    )


# --- 3. what a link may make the server open (README, docs/app.md) --------------------------------


def seed_with_curve(curve: str) -> dict:
    data = read_toml(ready_made_scenarios()[DEFAULT_SCENARIO])
    return {**data, "throughput": {**data["throughput"], "measured": {"curve": curve}}}


@pytest.mark.parametrize("curve", ["../../README.md", "/etc/hostname", "/nowhere/x.csv"])
def test_a_path_leaving_models_is_refused_whether_or_not_it_exists(curve):
    from econ.ui import state

    checked = state.validate(seed_with_curve(curve))
    assert not checked.ok
    assert checked.message == (
        f"throughput.measured.curve = {curve!r}: a path in a scenario must stay inside "
        f"{state.APP_PATHS}"
    )


def test_a_path_inside_models_is_opened_as_econ_validate_opens_it():
    from econ.ui import state

    assert (ROOT / "models" / "benchmarks" / "mlperf_inference_v6.1.csv").is_file()
    assert state.validate(seed_with_curve("../benchmarks/mlperf_inference_v6.1.csv")).ok


# --- 7. the gains page's warnings by the tiles' labels, ids found in the app ----------------------

STEPS_BOX = "Try other steps instead (one per line: WHEN:GAIN or WHEN:GAIN:LABEL)"


def test_figures_a_huge_step_leaves_undefined_are_named_by_their_labels(app: AppTest):
    from econ.gains import VALUE_KEYS
    from econ.labels import SUMMARY_METRICS
    from econ.ui.pages.gains import VALUE_LABELS
    from tests.test_app import shown

    assert set(VALUE_KEYS) <= set(VALUE_LABELS)  # every figure the library may call n/a
    go(app, "gains")
    # (a step's gain is at most +10,000%: 160 of them in one month overflow, as 1e308 did)
    widget(app.text_area, STEPS_BOX).set_value("\n".join(["5:100"] * 160)).run()
    assert not app.exception
    # (the cases' own warnings, a list in a box of their own, may say "are n/a" too)
    warned = [
        shown(w.value) for w in app.warning if "are n/a" in w.value and not w.value.startswith("- ")
    ]
    assert warned == [
        "“NPV of the gain, fleet”, NPV of the gain per GPU, NPV of the gain per rack, Change in "
        "levelized cost [%], Change in tokens, GPUs not bought for the same tokens, Racks not "
        "bought for the same tokens, Capex avoided are n/a: the gain case's NPV, Output over the "
        "horizon, Levelized cost are n/a (see its warnings)"
    ]
    keys = {*VALUE_KEYS, *SUMMARY_METRICS}
    assert not [w.value for w in app.warning if any(k in w.value.split() for k in keys)]


def test_an_unknown_catalog_id_points_to_where_the_app_lists_the_ids(app: AppTest):
    from econ.ui.pages.throughput import CATALOG_COLUMNS

    go(app, "gains")
    widget(app.text_input, "Or a step from two catalog rows: earlier row id").set_value("bogus")
    widget(app.text_input, "later row id").set_value("v6.1-48ef0995").run()
    assert not app.exception
    assert errors(app) == [
        "Step from the catalog: no catalog row has id 'bogus'; find ids in the Row ID column of "
        "the Throughput page's Benchmark catalog (ids look like v4.0-ad62d2be)"
    ]
    assert CATALOG_COLUMNS["id"] == "Row ID"
    assert not [w.help for w in app.text_input if "econ " in (w.help or "")]
    go(app, "throughput")
    assert [t.label for t in app.tabs][0] == "Benchmark catalog"


# --- 8. one label per field, one unit per quantity ------------------------------------------------


def every_field():
    from econ.scenario import Scenario
    from econ.ui.form import fields_of

    pending = list(fields_of(Scenario))
    while pending:
        f = pending.pop()
        pending += f.children
        yield f


def test_every_field_writes_its_units_as_the_tiles_and_the_sidebar_do():
    from econ.labels import SUMMARY_METRICS

    assert SUMMARY_METRICS["lcot_usd_per_mtok"][1] == "USD/M tokens"  # the tiles' unit
    units = {f.path: f.unit for f in every_field()}
    assert units["market.price_usd_per_mtok"] == "USD/M tokens"
    assert units["throughput.tokens_per_s_per_gpu"] == "tokens/s per GPU"
    labels = " ".join(f.label for f in every_field())
    assert "per million" not in labels and "tokens/s/GPU" not in labels
    assert "per s per GPU" not in labels


def test_the_sidebar_levers_carry_the_form_s_label_and_unit():
    from econ.ui.common import MAIN_INPUTS
    from econ.ui.form import find, path_label

    for path in MAIN_INPUTS:
        # each lever's label is the one name messages give it (tests/test_app_review23.py)
        f = find(path)
        assert path_label(path).endswith(f.label), (path, f.label)


def test_the_risk_page_names_throughput_and_prices_as_the_sidebar_does(app: AppTest):
    from econ.ui.form import path_label, stored_path_label

    go(app, "risk")
    inputs = widget(app.multiselect, "Inputs")
    sidebar = [w.label for w in app.sidebar.number_input]
    assert "Throughput › Output tokens/s per GPU" in sidebar
    assert "Market › Price [USD/M tokens]" in sidebar
    shown = list(inputs.options)  # as the box shows them
    assert "Throughput › Output tokens/s per GPU" in shown, shown
    assert "Market › Price [USD/M tokens]" in shown, shown
    assert stored_path_label("throughput.tokens_per_s_per_gpu") == (
        path_label("throughput.tokens_per_s_per_gpu")
    )


def test_a_validation_message_writes_usd_per_million_tokens_as_the_tiles_do(app: AppTest):
    widget(app.sidebar.number_input, "Market › Price [USD/M tokens]").set_value(-1.0).run()
    assert (
        "Market › Price [USD/M tokens]: -1 USD/M tokens is below 0 USD/M tokens (expected at "
        "least 0 USD/M tokens)"
    ) in " ".join(errors(app))


# --- 9. the comparison workbook: payback to one decimal, n/a cells with their reason --------------


def test_the_comparison_workbook_writes_payback_as_the_app_and_n_a_with_its_reason(
    downloads,  # noqa: F811 - the fixture imported above
):
    import io

    from openpyxl import load_workbook

    import econ
    from econ.ui.fmt import readable_warning

    at = open_app(None, "compare")
    widget(at.multiselect, at.multiselect[0].label).set_value(
        ["current scenario", "gpt-oss-120b-b200"]
    ).run()
    assert not at.exception and not errors(at), errors(at)
    sheet = load_workbook(io.BytesIO(downloads["Download the comparison (workbook)"]))["Results"]
    header = [c.value for c in sheet[1]]
    rows = {row[1].value: row for row in sheet.iter_rows(min_row=2)}
    seed = econ.project(econ.load_scenario(ready_made_scenarios()[DEFAULT_SCENARIO]))
    other = econ.project(econ.load_scenario(ready_made_scenarios()["gpt-oss-120b-b200"]))
    seed_payback = seed.summary.iloc[0].payback_months
    other_summary = other.summary_records()[0]["summary"]
    current = rows["payback_months"][header.index(f"{DEFAULT_SCENARIO} (current)")]
    assert current.value == pytest.approx(seed_payback)  # 35.36...
    assert current.number_format == "#,##0.0"  # shown 35.4, as the app and the CLI write it
    assert other_summary["payback_months"] is None
    # the reason the engine gives, in the app's words ("payback_months" -> "Payback")
    said = [w for w in other_summary["warnings"] if "payback_months" in w]
    assert rows["payback_months"][header.index("gpt-oss-120b-b200")].value == (
        readable_warning(said[0])
    )
    assert "Payback" in readable_warning(said[0]) and "payback_months" not in sheet_text(sheet)
    change = rows["payback_months"][
        header.index(f"gpt-oss-120b-b200 - {DEFAULT_SCENARIO} (current)")
    ]
    assert change.value == "n/a"
    assert rows["npv_usd"][header.index("gpt-oss-120b-b200")].value == pytest.approx(
        other_summary["npv_usd"]
    )


def sheet_text(sheet) -> str:
    return " ".join(str(c.value) for row in sheet.iter_rows(min_row=2) for c in row[2:])


# --- 12. a value refused where it was typed is kept in the link, and refused when opened ---------


def link_edits(at: AppTest) -> dict:
    from econ.ui import state

    edits = at.query_params.get("edits")
    edits = edits[0] if isinstance(edits, list) else edits
    return state.decode(edits) if edits else {}


def reopened(at: AppTest, page: str | None = None) -> AppTest:
    from tests.test_app_links import opened

    edits = at.query_params.get("edits")
    return opened(edits[0] if isinstance(edits, list) else edits, page=page)


@pytest.mark.parametrize(
    ("label", "typed", "path", "stored", "said"),
    [
        (
            "Fleet › GPU count [GPUs]",
            2.5,
            ("fleet", "gpu_count"),
            2.5,
            "Fleet › GPU count [GPUs]: 2.5 is not a whole number; expected a whole number",
        ),
        (
            "Fleet › GPU count [GPUs]",
            1e30,
            ("fleet", "gpu_count"),
            1e30,
            "Fleet › GPU count [GPUs]: 1e+30 is beyond 9,007,199,254,740,991, the largest whole "
            "number a box holds exactly; expected a smaller number",
        ),
        (
            "Utilization › Share [%]",
            -10.0,
            ("utilization", "share"),
            -0.1,
            "Utilization › Share [%]: -10 % is below 0 % (expected at least 0 %)",
        ),
    ],
)
def test_an_invalid_sidebar_value_is_kept_in_the_link_and_refused_when_opened(
    app: AppTest, label, typed, path, stored, said
):
    widget(app.sidebar.number_input, label).set_value(typed).run()
    assert not app.exception
    assert any(said in e for e in errors(app)), errors(app)
    edits = link_edits(app)
    assert edits[path[0]][path[1]] == pytest.approx(stored)  # not the base's 72 GPUs or 70 %
    shared = reopened(app)
    assert any(said in e for e in errors(shared)), errors(shared)  # the same words
    assert link_edits(shared) == edits  # and the same link


def test_toml_that_does_not_parse_is_kept_in_the_link_as_typed():
    at = open_app(None, "scenario")
    box = [w for w in at.text_area if w.label == "Tranches (TOML)"][0]
    box.set_value("[[tranches]\nname = 'x'").run()
    assert not at.exception
    said = [e for e in errors(at) if "\n\nFinancing › Tranches: not valid TOML: " in e]
    assert said, errors(at)
    assert link_edits(at)["financing"]["tranches"] == "[[tranches]\nname = 'x'"
    shared = reopened(at, page="scenario")
    assert [w.value for w in shared.text_area if w.label == "Tranches (TOML)"] == [
        "[[tranches]\nname = 'x'"
    ]
    assert said[0] in errors(shared), errors(shared)


# --- 13. an edited scenario's downloads are named apart from the unedited one's --------------------


@pytest.fixture
def file_names(monkeypatch) -> dict[str, tuple[str, bytes]]:
    """Each download button of a run, by label: the file name it offers and its bytes."""
    from streamlit.elements.widgets import button

    captured: dict[str, tuple[str, bytes]] = {}
    original = button.ButtonMixin.download_button

    def spy(self, label, data, *args, **kwargs):
        captured[label] = (
            kwargs.get("file_name"),
            data.encode() if isinstance(data, str) else data,
        )
        return original(self, label, data, *args, **kwargs)

    monkeypatch.setattr(button.ButtonMixin, "download_button", spy)
    # st.download_button is the main area's method, bound before the patch
    monkeypatch.setattr(st, "download_button", lambda *a, **k: spy(st._main, *a, **k))
    return captured


def test_an_edited_scenario_s_downloads_carry_edited_and_the_start_of_its_stamp(file_names):
    import csv
    import io

    at = prepare(open_app(None, "export"))
    names = {name for name, _ in file_names.values()}
    assert {f"{DEFAULT_SCENARIO}.toml", f"{DEFAULT_SCENARIO}.xlsx"} <= names, names

    widget(at.sidebar.number_input, "Utilization › Share [%]").set_value(80.0).run()
    file_names.clear()
    prepare(go(at, "export"))
    assert not errors(at), errors(at)
    summary_name, summary = next(v for v in file_names.values() if v[0].endswith(".summary.csv"))
    stamped = next(csv.DictReader(io.StringIO(summary.decode())))["scenario_sha256"]
    stem = f"{DEFAULT_SCENARIO}-edited-{stamped[:8]}"  # the hash stamped inside the file
    assert summary_name == f"{stem}.summary.csv"
    names = {name for name, _ in file_names.values()}
    assert {f"{stem}.toml", f"{stem}.xlsx", f"{stem}.csv", f"{stem}.json"} <= names, names
    assert not any(n.startswith(f"{DEFAULT_SCENARIO}.") for n in names)
    assert any(f"named {stem}" in c.value for c in at.caption)
    go(at, "scenario")
    assert file_names["Download TOML"][0] == f"{stem}.toml"
