"""Gain trajectories fitted from benchmark history: the compound annual rate, dated steps, the
caveats, and the scenario steps they turn into."""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.benchmarks import load_catalog
from econ.cli import main
from econ.throughput.history import (
    HistoryError,
    compound_annual_rate,
    fit_history,
    gain_history,
    months_between,
    rate_interval,
    step_gains,
)


def test_cagr_textbook_value():
    # 100 -> 121 in two years is 10% a year compounded: (121/100)^(1/2) - 1
    assert compound_annual_rate([0.0, 2.0], [100.0, 121.0]) == pytest.approx(0.10)
    # vectorized over a leading axis
    rates = compound_annual_rate([[0.0, 1.0], [0.0, 0.5]], [[100.0, 150.0], [100.0, 150.0]])
    assert rates == pytest.approx([0.5, 1.25])


def _through_v60():
    catalog = load_catalog()
    return catalog[catalog["catalog_file"] == "mlperf_inference_llm.csv"]


def test_gb200_nvl72_deepseek_r1_server_v51_to_v60():
    """NVIDIA's 72-GPU GB200 NVL72 submissions: 167,578 tok/s (v5.1) and 336,106 tok/s (v6.0)."""
    history = gain_history(
        model="deepseek-r1",
        scenario="Server",
        hardware="gb200-nvl72",
        submitter="NVIDIA",
        catalog=_through_v60(),
    )
    assert history.points["tokens_per_s_per_gpu"].tolist() == pytest.approx(
        [167578 / 72, 336106 / 72]
    )
    (step,) = history.steps
    assert step["gain"] == pytest.approx(336106 / 167578 - 1)
    assert step["date"] == "2026-04-01" and step["months_after_first"] == 7
    days = (dt.date(2026, 4, 1) - dt.date(2025, 9, 9)).days
    assert history.rate_annual == pytest.approx((336106 / 167578) ** (365.25 / days) - 1)
    assert math.isnan(history.rate_annual_low)
    assert any("two points 204 days apart" in c for c in history.caveats)
    json.dumps(history.to_dict(), allow_nan=False)


def test_v61_extends_the_history_and_a_vendor_claim_is_no_round():
    history = gain_history(
        model="deepseek-r1", scenario="Server", hardware="gb200-nvl72", submitter="NVIDIA"
    )
    assert history.points["round"].tolist() == ["v5.1", "v6.0", "v6.1"]
    catalog = load_catalog()
    v61 = catalog[
        (catalog["round"] == "v6.1")
        & (catalog["submitter"] == "NVIDIA")
        & (catalog["benchmark"] == "deepseek-r1")
        & (catalog["scenario"] == "Server")
        & (catalog["hardware_key"] == "gb200-nvl72")
    ]
    best = (v61["result"] / v61["accelerator_count"]).max()
    assert history.points["tokens_per_s_per_gpu"].iloc[-1] == pytest.approx(best)
    assert history.steps[-1]["gain"] == pytest.approx(best / (336106 / 72) - 1)
    assert history.steps[-1]["date"] == "2026-09-16"
    coreweave = gain_history(
        model="deepseek-r1", scenario="Server", hardware="gb200-nvl72", submitter="CoreWeave"
    )
    assert "MLPerf Endpoints" not in coreweave.points["round"].tolist()
    assert coreweave.points["tokens_per_s_per_gpu"].tolist() == pytest.approx(
        [311531 / 64, 419778 / 72]
    )


def test_best_row_per_round_lists_size_and_submitter_caveats():
    history = gain_history(
        model="deepseek-r1", scenario="Server", accelerator="GB200", catalog=_through_v60()
    )
    assert history.points["submitter"].tolist() == ["NVIDIA", "CoreWeave"]
    assert history.points["accelerator_count"].tolist() == [72, 64]
    assert any("different system sizes (72, 64)" in c for c in history.caveats)
    assert any("different submitters (NVIDIA, CoreWeave)" in c for c in history.caveats)


def test_longer_history_has_a_range_and_reports_previews():
    history = gain_history(model="llama2-70b", scenario="Server", hardware="h200-sxm")
    assert len(history.points) >= 3
    assert history.rate_annual_low <= history.rate_annual <= history.rate_annual_high
    assert any("preview rows left out" in c for c in history.caveats)
    with_preview = gain_history(
        model="llama2-70b", scenario="Server", hardware="h200-sxm", include_preview=True
    )
    assert not with_preview.excluded


def test_scenario_steps_calendar_and_replayed():
    history = fit_history(
        ["2025-01-01", "2025-06-01", "2026-01-01"], [100.0, 110.0, 121.0], ["a", "b", "c"]
    )
    assert [s["gain"] for s in history.steps] == pytest.approx([0.10, 0.10])
    calendar = history.scenario_steps(dt.date(2025, 3, 1))
    assert [(s["month"], round(s["gain"], 6)) for s in calendar] == [(3, 0.1), (10, 0.1)]
    assert history.scenario_steps(dt.date(2026, 2, 1)) == []
    replayed = history.scenario_steps(dt.date(2030, 1, 1), replay=True)
    assert [s["month"] for s in replayed] == [5, 12]
    assert months_between(dt.date(2026, 4, 1), dt.date(2026, 9, 1)) == 5


@settings(max_examples=50, deadline=None)
@given(
    rate=st.floats(-0.5, 3.0),
    years=st.lists(st.floats(0, 6), min_size=2, max_size=8, unique=True),
)
def test_exponential_series_recovers_its_rate(rate, years):
    t = np.sort(np.asarray(years))
    if t[-1] - t[0] < 0.05:
        return
    values = 1000.0 * (1 + rate) ** t
    assert compound_annual_rate(t, values) == pytest.approx(rate, rel=1e-6, abs=1e-9)
    if len(t) >= 3:
        low, high = rate_interval(t, values)
        assert low == pytest.approx(rate, abs=1e-6) and high == pytest.approx(rate, abs=1e-6)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.floats(1.0, 1e5), min_size=2, max_size=10))
def test_steps_compound_to_the_total_change(values):
    v = np.asarray(values)
    assert np.prod(1 + step_gains(v)) == pytest.approx(v[-1] / v[0], rel=1e-9)


def test_bad_histories():
    with pytest.raises(HistoryError, match="at least two"):
        fit_history(["2025-01-01"], [100.0])
    with pytest.raises(HistoryError, match="positive"):
        fit_history(["2025-01-01", "2026-01-01"], [100.0, 0.0])
    with pytest.raises(HistoryError, match="ISO dates"):
        fit_history(["Jan 2025", "2026-01-01"], [100.0, 120.0])
    with pytest.raises(HistoryError, match="share a date"):
        fit_history(["2025-01-01", "2025-01-01"], [100.0, 120.0])
    with pytest.raises(HistoryError, match="not a benchmark family; expected one of .*deepseek-r1"):
        gain_history(model="gpt-5", scenario="Server", hardware="h200-sxm")
    with pytest.raises(HistoryError, match="give the silicon"):
        gain_history(model="deepseek-r1", scenario="Server")
    with pytest.raises(HistoryError, match="one round only"):
        gain_history(
            model="gpt-oss-120b", scenario="Server", hardware="b200-sxm", catalog=_through_v60()
        )
    falling = fit_history(["2025-01-01", "2026-01-01"], [100.0, 90.0])
    assert any("fell" in c for c in falling.caveats)


def test_cli_history(capsys):
    args = ["throughput", "history", "--model", "deepseek-r1", "--scenario", "Server",
            "--hardware", "gb200-nvl72", "--submitter", "NVIDIA"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    history = gain_history(
        model="deepseek-r1", scenario="Server", hardware="gb200-nvl72", submitter="NVIDIA"
    )
    assert "+100.6%" in captured.out, "the v5.1 -> v6.0 step"
    assert f"{history.steps[-1]['gain']:+.1%}" in captured.out, "the v6.0 -> v6.1 step"
    assert f"compound annual rate: {history.rate_annual:+.1%}" in captured.out
    assert main([*args, "--format", "json", "--start-date", "2026-04-01"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenario_steps_replayed"][0]["month"] == 7
    assert main([*args, "--start-date", "April"]) == 3
    assert "YYYY-MM-DD" in capsys.readouterr().err
