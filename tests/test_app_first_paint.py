"""A browser session's first run leaves the browser time to draw the Results page's headline
before the rest of the page is computed (econ.ui.common.first_figures_drawn; cold start in
docs/app.md, measured by benchmarks/bench_cold.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from econ.ui import common
from tests.test_app import errors
from tests.test_app_review2 import APP


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The seconds first_figures_drawn sleeps, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(common.time, "sleep", slept.append)
    return slept


def _session(monkeypatch, url: str, state: dict) -> None:
    monkeypatch.setattr(
        common, "st", SimpleNamespace(context=SimpleNamespace(url=url), session_state=state)
    )


def test_a_browser_sessions_first_run_waits_and_later_runs_do_not(monkeypatch, waits):
    state: dict = {}
    _session(monkeypatch, "http://127.0.0.1:8501/", state)
    common.first_figures_drawn()
    assert waits == [common.FIRST_PAINT_S]
    state[common.PAINTED] = True  # what the router sets once a run has finished
    common.first_figures_drawn()
    assert waits == [common.FIRST_PAINT_S]


@pytest.mark.parametrize("url", ["", None])
def test_a_run_without_a_browser_never_waits(monkeypatch, waits, url):
    _session(monkeypatch, url, {})
    common.first_figures_drawn()
    assert waits == []


def test_the_results_page_calls_it_after_the_headline_and_before_the_charts(monkeypatch):
    """Stopped where it is called: the headline's tiles are drawn, no chart yet."""

    def stop_here() -> None:
        raise RuntimeError("first figures drawn")

    monkeypatch.setattr(common, "first_figures_drawn", stop_here)
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert any("first figures drawn" in e for e in errors(at)), errors(at)
    labels = [m.label for m in at.metric]
    assert "Levelized cost [USD/M tokens]" in labels and len(labels) >= 4, labels
    assert not at.get("vega_lite_chart")
    assert common.PAINTED in at.session_state  # the router ran to its end


def test_the_router_marks_the_session_once_its_first_run_has_finished():
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert not at.exception
    assert at.session_state[common.PAINTED] is True
