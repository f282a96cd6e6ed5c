"""The app's throughput page shows the simulated operating point's out-of-sample error band."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from econ.throughput import errorbands as eb
from tests.test_app import APP, errors, go, metric


def test_throughput_page_shows_the_error_band():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "throughput")
    assert not errors(at), errors(at)
    captions = [c.value for c in at.caption if "Out-of-sample error band:" in c.value]
    assert len(captions) == 1, (
        "the default scenario (GB200 NVL72, DeepSeek-R1) is a calibrated pair"
    )
    low, high = (
        float(x.replace(",", "")) for x in re.findall(r"([\d,]+) to ([\d,]+)", captions[0])[0]
    )
    point = float(metric(at, "Simulated operating point [tokens/s per GPU]").replace(",", ""))
    ratios = eb.band_ratios(calibrated_pair=True)
    expected = point * np.quantile(ratios, [0.05, 0.95])
    assert [low, high] == pytest.approx(expected, rel=2e-3)
    assert "throughput.tokens_per_s_per_gpu=lognormal(" in captions[0]


def test_the_simulated_limits_of_0_or_less_are_refused_under_their_boxes():
    # A browser review: the Measured curve's SLO boxes refused 0 and negatives in their own
    # words; the Simulated tab's said "tpot_limit_s: expected a limit above 0, got -1".
    from tests.test_app import widget

    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "throughput")
    widget(at.selectbox, "Workload").set_value("custom lengths").run()
    assert not errors(at), errors(at)
    widget(at.number_input, "TPOT p99 limit [ms]").set_value(-1.0).run()
    (message,) = errors(at)
    assert message.startswith("“TPOT p99 limit [ms]”: -1 is not above 0") and "_s" not in message
    assert not any(m.label.startswith("Simulated operating point") for m in at.metric)
    widget(at.number_input, "TPOT p99 limit [ms]").set_value(50.0).run()
    assert not errors(at), errors(at)
    assert any(m.label.startswith("Simulated operating point") for m in at.metric)
