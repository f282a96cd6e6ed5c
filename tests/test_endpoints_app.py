"""The app's throughput page on MLPerf Endpoints files: an uploaded result_summary.json and a zipped
submission tree give the library's step-reading operating point, and a hostile archive is refused
with st.error."""

from __future__ import annotations

import io
import zipfile

import pytest

from econ.throughput.importers import import_files
from econ.throughput.operating_point import operating_point
from tests import test_app
from tests.endpoints_tree import build_submission
from tests.test_app import errors, metric, upload_curve, widget

app = test_app.app  # the page fixture: the app on the default scenario

SUMMARY = "v6.1-nvidia-vr-nvl72x72-deepseek-r1-Server-performance-result_summary.json"


def zipped(root) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def test_an_uploaded_result_summary_gives_the_library_point(app, shared_data):
    path = shared_data / "samples" / "mlperf-endpoints" / SUMMARY
    upload_curve(app, path.name, path.read_bytes())
    assert not errors(app), errors(app)
    expected = operating_point(import_files([path]))
    assert metric(app, "Measured operating point [tokens/s per GPU]") == (
        f"{expected.tokens_per_s_per_gpu:,.1f}"
    )
    assert metric(app, "System output tokens/s") == f"{expected.values['output_tokens_per_s']:,.1f}"


def test_a_zipped_submission_tree_reads_in_steps(app, tmp_path):
    root = build_submission(tmp_path / "submission")
    upload_curve(app, "sub_a.zip", zipped(root))
    assert not errors(app), errors(app)
    widget(app.number_input, "TTFT P90 limit [s]").set_value(1.0).run()
    assert not errors(app), errors(app)
    expected = operating_point(import_files([root]), latency_limits={"ttft_s_p90": 1.0})
    assert not expected.interpolated
    assert metric(app, "Measured operating point [tokens/s per GPU]") == (
        f"{expected.tokens_per_s_per_gpu:,.1f}"
    )
    assert metric(app, "Tokens/s per kW (provisioned)") == (
        f"{expected.values['output_tokens_per_s_per_kw_provisioned']:,.1f}"
    )
    assert metric(app, "Interpolated") == "no, measured"


def hostile(member: str, content: bytes = b"{}") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, content)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (hostile("../../etc/evil.json"), "points outside the archive"),
        (hostile("results/x/point.yaml", b"0" * 5_000_000), "zip bomb"),
        (b"PK\x03\x04 not really", "not a zip archive"),
        # and what it should have been (the message said only what it was not)
        (b"PK\x03\x04 not really", "; expected a .zip of an MLPerf Endpoints submission folder"),
    ],
)
def test_a_hostile_archive_is_refused(app, content, reason):
    upload_curve(app, "bad.zip", content)
    assert any(reason in e for e in errors(app)), errors(app)
