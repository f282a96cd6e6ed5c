"""Scenarios that take their throughput from a measured curve, the MLPerf catalog or the simulator."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from econ import load_scenario, project
from econ.errors import InputError
from econ.scenario import apply_overrides, dumps, validate_dict
from econ.throughput.importers import import_files
from econ.throughput.operating_point import operating_point
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "data" / "throughput"
BASE = {"name": "s", "horizon_months": 24, "capex": {"gpu_price_usd": 40000.0}}


def scenario(**changes):
    return validate_dict(apply_overrides(BASE, changes))


def test_catalog_row_gives_the_derived_figure_and_its_caveats():
    s = scenario(
        **{"fleet.hardware": "gb200-nvl72", "throughput.measured": {"catalog_id": "v6.0-6f6e7f09"}}
    )
    result = project(s)
    monthly = result.monthly.loc["s"]
    per_gpu_s = monthly.tokens.iloc[1] / (monthly.gpus_in_service.iloc[1] * 0.7 * 730 * 3600)
    assert per_gpu_s == pytest.approx(311531 / 64, rel=1e-12)
    warnings = " ".join(result.warnings[0])
    assert "throughput from MLPerf catalog v6.0-6f6e7f09" in warnings
    assert "derived, not submitted" in warnings


def test_measured_curve_file_relative_to_the_scenario(tmp_path):
    curve_file = tmp_path / "run.csv"
    shutil.copy(FIXTURES / "generic_curve_hand_example.csv", curve_file)
    toml = tmp_path / "s.toml"
    data = apply_overrides(
        BASE,
        {
            "throughput.measured": {"curve": "run.csv"},
            "throughput.slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.08},
        },
    )
    toml.write_text(dumps(validate_dict(data)))
    loaded = load_scenario(toml)
    expected = operating_point(import_files([curve_file]), ttft_p99_s=2.0, tpot_p99_s=0.08)
    m = project(loaded).monthly.loc["s"]
    per_gpu_s = m.tokens.iloc[1] / (m.gpus_in_service.iloc[1] * 0.7 * 730 * 3600)
    assert per_gpu_s == pytest.approx(expected.tokens_per_s_per_gpu, rel=1e-12)


def test_simulated_throughput_is_capped_at_the_speed_of_light():
    s = scenario(
        **{
            "fleet.hardware": "gb200-nvl72",
            "throughput.simulated": {"model": "deepseek-r1", "mlperf_scenario": "server"},
            "throughput.gain_rate_annual": 3.0,
        }
    )
    result = project(s)
    m = result.monthly.loc["s"]
    per_gpu_s = (m.tokens / (m.gpus_in_service * 0.7 * 730 * 3600)).iloc[1:]
    warnings = " ".join(result.warnings[0])
    assert "speed of light" in warnings and "simulated throughput" in warnings
    ceiling = float(warnings.split("speed of light ")[1].split(" tokens/s")[0].replace(",", ""))
    assert per_gpu_s.iloc[0] < ceiling
    assert per_gpu_s.max() == pytest.approx(ceiling, rel=1e-3)  # the 300%/year gain hits the cap
    assert np.all(np.diff(per_gpu_s.to_numpy()) >= -1e-9)


def test_bad_sources():
    with pytest.raises(InputError, match="throughput.measured: .*no-such-row"):
        project(scenario(**{"throughput.measured": {"catalog_id": "no-such-row"}}))
    with pytest.raises(InputError, match="throughput.simulated: .*"):
        project(
            scenario(**{"throughput.simulated": {"model": "gpt-5", "mlperf_scenario": "server"}})
        )
    with pytest.raises(InputError, match="measured or simulated throughput, not both"):
        scenario(
            **{
                "throughput.measured": {"catalog_id": "x"},
                "throughput.simulated": {"model": "deepseek-r1", "mlperf_scenario": "server"},
            }
        )


def test_history_sets_the_compound_gain_rate():
    from econ.throughput.history import gain_history

    s = scenario(**{"fleet.hardware": "gb200-nvl72", "throughput.history": {"model": "deepseek-r1"}})
    fitted = gain_history(model="deepseek-r1", scenario="Server", hardware="gb200-nvl72")
    m = project(s).monthly.loc["s"]
    per_gpu = m.tokens / m.gpus_in_service.where(m.gpus_in_service > 0)
    assert per_gpu.iloc[13] / per_gpu.iloc[1] == pytest.approx(1 + fitted.rate_annual, rel=1e-12)
    with pytest.raises(InputError, match="history sets the compound gain rate"):
        scenario(**{"throughput.history": {"model": "deepseek-r1"}, "throughput.gain_rate_annual": 0.1})
