"""Found by an infrastructure engineer's review of the Throughput and Power pages (session 18):
a GPU count typed for one benchmark file divided the next file's throughput; the source recorded
with a measured throughput did not say how the point was chosen; the Power page garbled a large
budget's message and printed a 309-digit number; messages showed numpy's repr."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ.ui import state
from tests import test_app
from tests.test_app import DATA, errors, go, upload_curve, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario

GPUS = "GPUs that served it"


def _point(at: AppTest) -> str:
    (metric,) = [m for m in at.metric if m.label.startswith("Measured operating point")]
    return metric.value


def test_a_gpu_count_typed_for_one_file_does_not_divide_the_next(app: AppTest):
    content = (DATA / "sample_curve.csv").read_bytes()  # 8 GPUs, said by the file
    upload_curve(app, "first.csv", content)
    by_file = _point(app)
    widget(app.number_input, GPUS).set_value(1.0).run()
    assert _point(app) != by_file  # 8 times the file's figure per GPU
    upload_curve(app, "second.csv", content)
    assert widget(app.number_input, GPUS).value is None
    assert _point(app) == by_file
    widget(app.number_input, GPUS).set_value(1.0).run()
    app.button(key=next(b.key for b in app.button if b.label == "Forget this file")).click().run()
    upload_curve(app, "third.csv", content)
    assert widget(app.number_input, GPUS).value is None and _point(app) == by_file
    go(app, "results")  # and back: the page's kept value is the cleared one
    go(app, "throughput")
    assert widget(app.number_input, GPUS).value is None


def test_the_source_of_a_measured_throughput_says_how_the_point_was_chosen(app: AppTest):
    upload_curve(app, "gb200.csv", (DATA / "sample_curve.csv").read_bytes())
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(20.0).run()
    confirm = [c for c in app.checkbox if c.label.startswith("Use it anyway")]
    if confirm:
        confirm[0].check().run()
    app.button(key="econ.use_measured").click().run()
    source = app.session_state[state.DATA]["throughput"]["source"]
    assert source.startswith("measured: gb200.csv (sha256 ")
    assert "at the SLO operating point (" in source and "TPOT p99 ≤ 20 ms" in source
    assert "GPU count from " in source


def test_the_power_budget_s_messages_read_right(app: AppTest):
    go(app, "power")
    budget = widget(app.number_input, "Power budget [MW]")
    for value in (1e12, 1e308):
        budget.set_value(value).run()
        assert not app.exception
        shown = " ".join(errors(app) + [w.value for w in app.warning])
        assert "of = MW" not in shown and "000,000,000,000,000,000" not in shown, shown
        assert "1e+12" in shown or "1e+308" in shown, shown


def test_a_negative_throughput_in_a_csv_is_quoted_as_a_number(tmp_path):
    from econ.throughput.importers import import_file
    from econ.throughput.importers._common import CurveError

    path = tmp_path / "neg.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count\n1,-300,1\n")
    with pytest.raises(CurveError) as caught:
        import_file(path)
    message = str(caught.value)
    assert "np.float64" not in message and "(-300.0)" in message, message


def test_a_bad_curve_is_named_once_and_the_app_names_its_own_controls(app: AppTest):
    from econ.ui.compute import app_text

    upload_curve(app, "neg.csv", b"concurrency,output_tokens_per_s,gpu_count\n1,-300,1\n")
    (shown,) = [e for e in errors(app) if "neg.csv" in e]
    assert shown.startswith("Reading the file: neg.csv: line 2: output_tokens_per_s is negative")
    assert shown.count("neg.csv") == 1
    assert "--interpolate" not in app_text("a step (--interpolate reads between them)")


# --- the Risk page (a finance analyst's review, session 18) -----------------------------------------


def test_the_data_table_defaults_stay_within_the_field_and_keep_their_values(app: AppTest):
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(90.0).run()
    go(app, "risk")
    row = [w for w in app.number_input if w.label in ("from", "to")][:2]
    assert [w.value for w in row] == [72.0, 100.0]  # 90% +-20%, within 100%
    widget(app.button, "Compute the data table").click().run()
    assert not app.exception and not errors(app), errors(app)
    row[1].set_value(95.0).run()
    steps = [w for w in app.number_input if w.label == "steps"][1]
    steps.set_value(3).run()
    go(app, "results")
    go(app, "risk")
    assert [w for w in app.number_input if w.label in ("from", "to")][1].value == 95.0
    assert [w for w in app.number_input if w.label == "steps"][1].value == 3


def test_a_monte_carlo_of_a_few_scenarios_says_so_and_names_its_seed(app: AppTest):
    go(app, "risk")
    widget(app.number_input, "Scenarios").set_value(1).run()
    widget(app.button, "Run the Monte Carlo").click().run()
    assert not app.exception and not errors(app), errors(app)
    assert any(c.value.startswith("1 scenario, seed 0, in ") for c in app.caption)
    assert any("Only 1 scenario" in w.value for w in app.warning)



def test_the_output_boxes_name_money_in_the_display_scale(app: AppTest):
    """In million USD the charts drew million USD under an "NPV [USD]" Output box."""
    from econ.ui import state

    app.session_state[state.MONEY] = "million USD"
    go(app, "risk")
    boxes = [w for w in app.selectbox if w.label == "Output"]
    assert len(boxes) == 3
    for box in boxes:
        assert "NPV [million USD]" in box.options and "NPV [USD]" not in box.options
