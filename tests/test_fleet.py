"""Fleet refresh: the best month to replace a fleet with a new generation, by brute force."""

from __future__ import annotations

import json

import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.fleet import RefreshError, gpus_for_power, refresh_analysis
from econ.scenario import apply_overrides, read_toml, validate_dict
from tests.conftest import ROOT

FILE = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"


def case_by_hand(k: int):
    """The refresh at month k written out as a scenario file would say it."""
    data = read_toml(FILE)
    data = apply_overrides(data, {"fleet.retire_month": k, "name": f"k{k}"})
    data["vintages"][0]["fleet"]["purchase_month"] = k
    return validate_dict(data)


def test_gpus_for_power_fills_whole_racks():
    # 1,024 H200 at 1.37 kW = 1,402.9 kW; GB300 NVL72 racks draw 72 x 1.8333 = 132 kW: 10 racks.
    assert gpus_for_power(1024 * 1.37, 1.8333, 72) == 720
    assert gpus_for_power(131.9, 1.8333, 72) == 0


def test_refresh_matches_brute_force_over_months():
    scenario = load_scenario(FILE)
    months = [18, 19, 24, 36, 60, 71]
    result = refresh_analysis(scenario, "gb300", months=months)
    brute = project([case_by_hand(k) for k in months]).metrics["npv_usd"]
    assert result.table.npv_usd.to_numpy() == pytest.approx(brute, rel=1e-12)
    kept = read_toml(FILE)
    kept["vintages"] = []
    del kept["fleet"]["retire_month"]  # the H200s serve to the horizon
    assert result.npv_keep_usd == pytest.approx(
        project(validate_dict(kept)).metrics["npv_usd"][0], rel=1e-12
    )
    assert result.best_month == months[int(brute.argmax())]
    assert result.gain_usd == pytest.approx(brute.max() - result.npv_keep_usd)


def test_default_months_start_at_the_vintage_availability():
    result = refresh_analysis(load_scenario(FILE), "gb300")
    assert result.table.index[0] == 18 and result.table.index[-1] == 71


def test_power_envelope_sizes_the_new_vintage():
    result = refresh_analysis(load_scenario(FILE), "gb300", months=[20], power_mw=2.0)
    assert result.table.new_gpu_count.iloc[0] == 15 * 72


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"vintage": "b300"},
            "vintage 'b300' is not in scenario 'h200-fleet-gb300-refresh'; expected one of: gb300",
        ),
        ({"vintage": "gb300", "months": [0]}, "refresh months must lie in 1..71"),
        ({"vintage": "gb300", "power_mw": 0.1}, "holds no whole rack of 'gb300'"),
        (  # two cases of one name would meet in one batch, which refuses them
            {"vintage": "gb300", "months": [24, 12, 24]},
            "refresh month 24 is given more than once; expected distinct months",
        ),
    ],
)
def test_bad_refresh_requests(kwargs, message):
    with pytest.raises(RefreshError, match=message.replace("(", r"\(").replace(")", r"\)")):
        refresh_analysis(load_scenario(FILE), **kwargs)


def test_refresh_cli(capsys):
    assert (
        main(["refresh", str(FILE), "--vintage", "gb300", "--to-month", "24", "--format", "json"])
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["best_month"] == 18
    assert [row["refresh_month"] for row in payload["months"]] == list(range(18, 25))
    assert main(["refresh", str(FILE), "--vintage", "nope"]) == 3
    assert "expected one of: gb300" in capsys.readouterr().err
