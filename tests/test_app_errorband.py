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
