"""Issue 19 leftovers checked in Streamlit's AppTest: the description of an edited scenario says
it was edited and names the fields, tables labelled with units in the money setting, choices shown
as words, the compare inputs' tranches one labelled row per field, fixed scenario colours."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from econ.scenario import dumps
from econ.ui import state
from tests import test_app
from tests.test_app import go, shown, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario


# --- 4. the description of an edited scenario ---------------------------------------------------


def test_the_downloaded_toml_description_names_the_edited_fields(app: AppTest):
    base = app.session_state[state.BASE]["description"]
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    widget(app.sidebar.number_input, "Financing › Debt share [%]").set_value(50.0).run()
    assert not app.exception
    scenario = state.validate(app.session_state[state.DATA]).scenario  # what Export downloads
    description = tomllib.loads(dumps(scenario))["description"]
    today = dt.date.today().isoformat()
    assert description.startswith(base)
    note = description.removeprefix(base)
    assert note.strip() == (
        f"(Edited in the app on {today}: Financing › Debt share [%], Utilization › Share [%]; "
        "the text before describes the values before these edits.)"
    )
    assert note in " ".join(shown(c.value) for c in app.sidebar.caption)  # the sidebar too
    # one edit undone: one field named; both undone: the base's description again
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(70.0).run()
    description = app.session_state[state.DATA]["description"]
    assert description == (
        f"{base} (Edited in the app on {today}: Financing › Debt share [%]; "
        "the text before describes the values before these edits.)"
    )
    widget(app.sidebar.number_input, "Financing › Debt share [%]").set_value(70.0).run()
    assert app.session_state[state.DATA]["description"] == base
    assert not state.diff(app.session_state[state.DATA], app.session_state[state.BASE])


def test_the_description_note_is_replaced_not_repeated():
    from econ.ui.form import EDITED, mark_description

    today = dt.date.today().isoformat()
    data = {
        "description": "Seed.",
        "sources": {"utilization.share": f"{EDITED} {today} (was: 70 %)"},
    }
    mark_description(data)
    mark_description(data)
    assert data["description"] == (
        f"Seed. (Edited in the app on {today}: Utilization › Share [%]; "
        "the text before describes the values before these edits.)"
    )
    old_style = {**data, "description": f"Seed. Edited in the app on {today}: Utilization."}
    mark_description(old_style)  # a note of the earlier form is replaced too
    assert old_style["description"] == data["description"]
    data["sources"]["utilization.share"] = "a report"
    mark_description(data)
    assert data["description"] == "Seed."


# --- 10, 11. compare: tranches as labelled rows, one colour per scenario ------------------------

STACK = "deepseek-r1-gb200-nvl72-capital-stack"


def _compare(app: AppTest, picked: list[str]) -> AppTest:
    go(app, "compare")
    app.multiselect[0].set_value(picked).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def _colour_scales(spec) -> list[dict]:
    """Every colour scale with a fixed domain in a Vega-Lite spec (layers included)."""
    found = []
    if isinstance(spec, dict):
        colour = spec.get("encoding", {}).get("color", {})
        if isinstance(colour, dict) and "domain" in colour.get("scale", {}):
            found.append(colour["scale"])
        for value in spec.values():
            found += _colour_scales(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _colour_scales(value)
    return found


def test_compare_shows_each_tranche_field_on_its_own_labelled_row(app: AppTest):
    _compare(app, ["current scenario", STACK])
    table = app.dataframe[1].value
    rows = dict(zip(table["input"], table[STACK], strict=True))
    assert rows["Financing › Tranches › ddtl › Share of capex [%]"] == "55"
    assert rows["Financing › Tranches › senior_notes › Coupon [%/year]"] == "9.25"
    assert rows["Financing › Tranches › ddtl › Type"] == "Delayed draw term loan"
    assert rows["Financing › Repayment"] == "Level payment"  # a choice as words, not a code
    assert not any(str(v).startswith(("[{", "{")) for v in table[STACK])  # no raw JSON


def test_compare_charts_give_each_scenario_one_colour(app: AppTest):
    import json

    other = "deepseek-r1-gb200-nvl72-macrs"
    picked = ["current scenario", STACK, other]
    from econ.catalog import ready_made_scenarios

    if other not in ready_made_scenarios():
        other = next(n for n in ready_made_scenarios() if n not in picked)
        picked[2] = other
    _compare(app, picked)
    charts = app.get("vega_lite_chart")
    assert len(charts) >= 2
    scales = [s for c in charts for s in _colour_scales(json.loads(c.proto.spec))]
    assert len(scales) >= 2
    domains = {tuple(s["domain"]) for s in scales}
    ranges = {tuple(s["range"]) for s in scales}
    assert len(domains) == 1 and len(ranges) == 1, scales
    (domain,) = domains
    assert domain[1:] == (STACK, other) and domain[0].endswith("(current)")
    assert len(set(next(iter(ranges)))) == 3  # three scenarios, three colours


# --- 18. a spinner around every library call --------------------------------------------------------


def test_library_calls_run_under_a_spinner_named_for_the_step(monkeypatch):
    """compute.attempt wraps each call in st.spinner (which Streamlit shows only past 0.5 s)."""
    import contextlib

    from econ.ui import compute

    shown = []

    @contextlib.contextmanager
    def spinner(text):
        shown.append(text)
        yield

    monkeypatch.setattr(compute.st, "spinner", spinner)
    assert compute.attempt(lambda: 42, "Monte Carlo") == 42
    assert compute.attempt(lambda: 1, "Data table", busy="Projecting 25 scenarios...") == 1
    assert shown == ["Monte Carlo...", "Projecting 25 scenarios..."]


# --- 10. number boxes: large values repeated with thousands separators ---------------------------


def test_large_numbers_are_repeated_with_thousands_separators_under_their_box(app: AppTest):
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(1_000_000).run()
    assert not app.exception
    captions = [c.value for c in app.sidebar.caption]
    assert "= 1,000,000 GPUs" in captions
    widget(app.sidebar.number_input, "Fleet › GPU count [GPUs]").set_value(72).run()
    assert not any(c.value.startswith("= ") for c in app.sidebar.caption)  # small: no repeat


def test_grouped_text_of_a_number():
    from econ.ui.form import grouped

    assert grouped(3535600.0, "USD") == "= 3,535,600 USD"
    assert grouped(12345.678, "kW") == "= 12,345.68 kW"
    assert grouped(9999, "USD") is None
    assert grouped(None) is None
    assert grouped(-25000, "USD") == "= -25,000 USD"


# --- 12. "1 month", not "1 months" ---------------------------------------------------------------


def test_a_partial_year_of_one_month_is_one_month():
    import datetime as dt

    from econ import load_scenario, project
    from econ.ui.pages.results import year_labels
    from tests.test_app import SEED

    # bought in November (month 0), in service from December: 2026 holds one month
    monthly = project(load_scenario(SEED, {"start_date": dt.date(2026, 11, 1)})).monthly
    labels = year_labels(monthly, "calendar")
    assert labels[0] == "2026 (1 month)", labels
    assert all("(1 months)" not in label for label in labels)


# --- 12. one warning box for one benchmark upload -----------------------------------------------


def test_an_mlperf_upload_gives_one_warning_box_with_each_warning_once(app: AppTest):
    from tests.conftest import SHARED_DATA
    from tests.test_app import upload_curve

    path = (
        SHARED_DATA
        / "samples"
        / "mlperf"
        / "v4.1-nvidia-h200x8-trt-llama2-70b-99-Server-mlperf_log_summary.txt"
    )
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    upload_curve(app, path.name, path.read_bytes())
    (tab,) = [t for t in app.tabs if t.label == "Measured curve"]
    boxes = [w.value for w in tab.warning]
    lines = [line for box in boxes for line in box.splitlines() if line.strip()]
    assert len(lines) == len(set(lines)), boxes  # no warning twice
    # the file's and the operating point's warnings in one box, the model mismatch in another
    assert len(boxes) == 2, boxes
    assert "clamped" in boxes[0] and "LoadGen version" in boxes[0]
    assert "not of the scenario's model and hardware" in boxes[1]
    (catalog,) = [t for t in app.tabs if t.label == "Benchmark catalog"]
    assert len(catalog.warning) <= 1  # the catalog row's checks in one box


def test_a_calendar_year_holding_only_the_purchase_month_says_so():
    import datetime as dt

    from econ import load_scenario, project
    from econ.ui.pages.results import year_labels
    from tests.test_app import SEED

    # bought in December (month 0), in service from January: 2026 has no month of service
    monthly = project(load_scenario(SEED, {"start_date": dt.date(2026, 12, 1)})).monthly
    labels = year_labels(monthly, "calendar")
    assert labels[0] == "2026 (purchase only)", labels
    assert labels[1] == "2027"
    assert all("(0 months)" not in label for label in labels)
