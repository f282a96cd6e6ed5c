"""The Market page's resale section through AppTest: the shipped resale curves as the resale index
gives them, the scenario's own curve at its band, and its rental-versus-resale spread tiles equal
to the engine's summary."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from econ.engine import project
from econ.resale_index import curve_frame, curves, load_catalog
from econ.scenario import load_scenario
from econ.ui.fmt import format_metric, metric_label
from econ.ui.pages.market_resale import OWN_CURVE, SPREAD, curve_name
from tests.test_app_market import H200, market_page

RESALE = {
    "market": {
        "resale_series": "GLRI/ResidualGuide",
        "resale_series_gpu": "H100",
        "resale_band": -0.5,
        "rental_usd_per_gpu_hour": 2.9,
    }
}
OVERRIDES = [
    'market.resale_series="GLRI/ResidualGuide"',
    'market.resale_series_gpu="H100"',
    "market.resale_band=-0.5",
    "market.rental_usd_per_gpu_hour=2.9",
]


def resale_chart(at):
    charts = [c for c in at.get("vega_lite_chart") if "share of the new price" in c.proto.spec]
    assert len(charts) == 1, f"{len(charts)} resale charts"
    proto = charts[0].proto
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in proto.datasets]
    return json.loads(proto.spec), frames[0]


def test_shipped_curves_are_drawn_as_the_index_gives_them():
    at = market_page()
    _, data = resale_chart(at)
    found = curves(load_catalog())
    assert set(data["line"]) == {curve_name(*key) for key in found}
    for key, curve in found.items():
        expected = curve_frame(curve)
        got = data[data["line"] == curve_name(*key)].sort_values("age_months")
        np.testing.assert_allclose(got["share"], expected["share"], rtol=1e-12)
        np.testing.assert_allclose(got["share_low"], expected["share_low"], rtol=1e-12)
    # A token scenario without a resale curve is told how to get one, with no dotted field path.
    infos = " ".join(i.value for i in at.info)
    assert "no resale curve" in infos and "market." not in infos
    assert not at.error


def test_a_scenario_with_a_resale_series_shows_its_curve_and_spread():
    at = market_page("llama2-70b-h200", RESALE)
    assert not at.error, [e.value for e in at.error]
    _, data = resale_chart(at)
    own = data[data["line"] == OWN_CURVE].sort_values("age_months")
    scenario = load_scenario(H200, OVERRIDES)
    from econ.resale_index import scenario_curve_frame

    expected = scenario_curve_frame(scenario)
    np.testing.assert_allclose(own["share"], expected["share_at_band"], rtol=1e-12)
    assert (own["share"].to_numpy() <= expected["share"].to_numpy() + 1e-12).all()  # band < 0
    summary = project(scenario).summary_records()[0]["summary"]
    tiles = {m.label: m.value for m in at.metric}
    for name in SPREAD:
        assert tiles[metric_label(name)] == format_metric(name, summary)
    spread = summary["rental_resale_spread_usd_per_gpu_year"]
    assert spread == pytest.approx(
        summary["rental_earnings_usd_per_gpu_year"] - summary["resale_loss_usd_per_gpu_year"]
    )
