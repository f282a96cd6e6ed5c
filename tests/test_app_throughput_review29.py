"""The Throughput page's measured curve as an infrastructure engineer reads it (review 29): the
operating point showed its tokens/s but none of its latencies, load or GPU count (the CLI's
`econ throughput point` table has them), and a figure used from a file was recorded without the
tool, model and hardware the file states, or that it was interpolated between measured points.
"""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from econ.throughput.importers import import_files
from econ.throughput.operating_point import operating_point
from econ.ui import state
from tests import test_app
from tests.conftest import ROOT
from tests.test_app import DATA, errors, upload_curve, widget

app = test_app.app  # the AppTest fixture: the app run once on the default scenario

CURVES = ROOT / "tests" / "data" / "throughput"
SWEEP = CURVES / "vllm_bench_serve_sweep.jsonl"  # 3 points, example-org/tiny-llm-8b on H100
MLPERF = CURVES / "mlperf_log_summary_server_8gpu.txt"  # llama2-70b, hardware not stated


def _use(app: AppTest) -> str:
    """Click "Use" (confirming a curve of another deployment) and return the source recorded."""
    for box in app.checkbox:
        if box.label.startswith("Use it anyway"):
            box.check().run()
    app.button(key="econ.use_measured").click().run()
    return app.session_state[state.DATA]["throughput"]["source"]


def _at_this_point(app: AppTest) -> str:
    shown = [c.value for c in app.caption if c.value.startswith("At this point")]
    assert len(shown) == 1, [c.value for c in app.caption]
    return shown[0]


def test_the_operating_point_shows_its_latencies_load_and_gpus_as_the_library_gives_them(app):
    upload_curve(app, MLPERF.name, MLPERF.read_bytes())
    v = operating_point(import_files([MLPERF])).values
    text = _at_this_point(app)
    assert f"TTFT p50 {v['ttft_s_p50']:.4g} s" in text, text
    assert f"p99 {v['ttft_s_p99']:.4g} s" in text
    assert f"TPOT p50 {v['tpot_s_p50'] * 1000:.4g} ms" in text
    assert f"p99 {v['tpot_s_p99'] * 1000:.4g} ms" in text
    assert f"E2E p99 {v['e2e_s_p99']:.4g} s" in text
    assert f"offered request rate {v['request_rate_per_s']:.4g}/s; GPUs 8" in text


def test_an_interpolated_point_says_so_beside_its_latencies(app: AppTest):
    upload_curve(app, SWEEP.name, SWEEP.read_bytes())
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(17.5).run()
    point = operating_point(import_files([SWEEP]), tpot_p99_s=0.0175)
    assert point.interpolated
    text = _at_this_point(app)
    assert "TPOT p" in text and "p99 17.5 ms" in text, text
    assert text.endswith("(interpolated between measured points)")


def test_a_used_measured_point_records_the_tool_model_hardware_and_interpolation(app: AppTest):
    upload_curve(app, SWEEP.name, SWEEP.read_bytes())
    widget(app.number_input, "TPOT p99 limit [ms]").set_value(17.5).run()
    source = _use(app)
    assert source.startswith(f"measured: {SWEEP.name} (sha256 "), source
    assert "; vllm bench serve; example-org/tiny-llm-8b on NVIDIA H100)" in source, source
    assert "TPOT p99 ≤ 17.5 ms), interpolated between measured points" in source


def test_a_used_point_says_what_the_file_does_not_state(app: AppTest):
    upload_curve(app, MLPERF.name, MLPERF.read_bytes())
    source = _use(app)
    assert "; mlperf loadgen (summary); model llama2-70b; hardware not stated)" in source, source
    assert "interpolated" not in source  # the one measured point


def test_a_limit_on_a_statistic_the_file_lacks_is_refused_in_the_page_s_terms(app: AppTest):
    # an old SGLang file has TTFT and TPOT medians only: the library's advice, a limit on TTFT
    # p50, names a limit the page has no box for
    old = CURVES / "sglang_old_schema.jsonl"
    upload_curve(app, old.name, old.read_bytes())
    widget(app.number_input, "GPUs that served it").set_value(8).run()
    widget(app.number_input, "TTFT p99 limit [s]").set_value(1.0).run()
    shown = [e for e in errors(app) if e.startswith("Operating point")]
    assert len(shown) == 1, errors(app)
    assert "no TTFT p99" in shown[0] and "set a limit on a statistic" not in shown[0]
    assert "empty that box or limit the tokens/s per user instead" in shown[0]
    assert "the curve reports TTFT p50, TPOT p50, E2E mean)" in shown[0]
    widget(app.number_input, "TTFT p99 limit [s]").set_value(None).run()
    assert not errors(app)  # and emptied, the point is there
    assert _at_this_point(app)


def test_a_used_catalog_row_records_its_model_system_and_the_total_it_was_derived_from(app):
    test_app.go(app, "throughput")
    row = next(s for s in app.selectbox if s.key == "econ.cat_row")
    wanted = next(i for i in row.options if "72x NVIDIA GB200 Server" in i)
    row.set_value(wanted).run()
    row_id = next(s for s in app.selectbox if s.key == "econ.cat_row").value
    next(b for b in app.button if b.label.startswith("Use 2,327.5")).click().run()
    source = app.session_state[state.DATA]["throughput"]["source"]
    assert source == (
        f"MLPerf catalog row {row_id} (v5.1 closed, NVIDIA, deepseek-r1 Server, 72x NVIDIA "
        "GB200, available): 2,327.5 tokens/s per GPU derived from the system's 167,578 tokens/s"
    )
    # the id still finds the row again: the Row box marks it as the scenario's
    row = next(s for s in app.selectbox if s.key == "econ.cat_row")
    assert row.value == row_id
    assert f"{wanted} (the scenario's)" in row.options


def test_an_oversized_file_s_refusal_stays_while_the_box_holds_it(app: AppTest):
    upload_curve(app, "big.json", b"x" * (6 * 1024 * 1024))
    refusal = "big.json: 6 MB is larger than the 5 MB limit for benchmark files; nothing was read"
    assert errors(app) == [refusal]
    # another edit: the box still names big.json, and so does the page (it showed only the
    # "Upload a benchmark result" hint beside it)
    widget(app.sidebar.number_input, "Utilization › Share [%]").set_value(80.0).run()
    assert errors(app) == [refusal]
    upload_curve(app, MLPERF.name, MLPERF.read_bytes())  # the next file replaces it
    assert errors(app) == []
    assert _at_this_point(app)


def _overlaid(app: AppTest, label: str) -> bool:
    """Whether a chart of the page draws a curve labelled `label` (in its data)."""
    charts = app.get("vega_lite_chart")
    return any(label.encode() in d.data.data for c in charts for d in c.proto.datasets)


def test_the_simulated_tab_overlays_the_measured_curve_with_the_gpu_count_typed(app: AppTest):
    frame = pd.read_csv(DATA / "sample_curve.csv").drop(columns=["gpu_count"])
    upload_curve(app, "no_gpus.csv", frame.to_csv(index=False).encode())
    # no GPU count: not drawn, and the tab says why
    assert not _overlaid(app, "measured no_gpus.csv")
    said = [c.value for c in app.caption if c.value.startswith("no_gpus.csv is not drawn here")]
    assert said and "its GPU count is unknown" in said[0], said
    widget(app.number_input, "GPUs that served it").set_value(8).run()
    assert _overlaid(app, "measured no_gpus.csv")  # was read without the typed count: left out
    assert not [c for c in app.caption if c.value.startswith("no_gpus.csv is not drawn")]
