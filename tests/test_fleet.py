"""Fleet refresh: the best month to replace a fleet with a new generation, by brute force."""

from __future__ import annotations

import json

import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.errors import InputError
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
        (
            {"vintage": "gb300", "months": [5, 0, 80]},
            "refresh month 0 is outside 1..71; expected refresh months in that range",
        ),
        ({"vintage": "gb300", "months": []}, "no month in 1..71; expected refresh months"),
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


def test_a_refresh_at_book_value_says_its_answer_rests_on_the_sales():
    """The ready-made case's +28.6M USD gain rests on selling the H200s at book value in month 18
    (and the GB300s at the horizon); with nothing recovered it is a loss. An outside review
    found no word of it."""
    result = refresh_analysis(load_scenario(FILE), "gb300")
    sold = project(case_by_hand(18)).lines["disposal_usd"][0]
    assert result.best_month == 18 and result.gain_usd > 0
    assert result.warnings == (
        f"the old fleet's sale in month 18 ({sold[18]:,.0f} USD) and the new fleet's at the "
        f"horizon ({sold[-1]:,.0f} USD) are at book value: no resale table (market.resale_*) or "
        "depreciation.sale_value_share prices them, and the refresh's NPV rests on them; a "
        "resale table prices a sale by the GPUs' age in the refresh month, while "
        "depreciation.sale_value_share is a share of cost at any age (the same proceeds in every "
        "refresh month); depreciation.sale_value_share = 0 values the refresh with nothing "
        "recovered",
    )
    nothing = load_scenario(FILE, {"depreciation.sale_value_share": 0.0})
    none_recovered = refresh_analysis(nothing, "gb300")
    assert none_recovered.warnings == () and none_recovered.gain_usd < 0


def test_an_envelope_larger_than_the_fleet_says_the_gain_holds_an_expansion():
    result = refresh_analysis(load_scenario(FILE), "gb300", months=[18], power_mw=100.0)
    installed_mw = 1024 * 1.37 / 1000
    assert result.warnings[-1] == (
        f"the envelope of 100 MW is {100 / installed_mw:,.1f}x the installed fleet's 1.4 MW: "
        f"{result.table.new_gpu_count.iloc[0]:,} new GPUs replace 1,024, so the gain holds an "
        "expansion's, not only the refresh's"
    )
    smaller = refresh_analysis(load_scenario(FILE), "gb300", months=[18], power_mw=1.0)
    assert not [w for w in smaller.warnings if "envelope" in w]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--from-month", "30", "--to-month", "20"], "--from-month 30 is after --to-month, 20"),
        (["--from-month", "72"], "--from-month = 72: expected a month from 1 to 71 (the horizon"),
        (["--to-month", "100"], "--to-month = 100: expected a month from 1 to 71 (the horizon"),
    ],
)
def test_a_bad_month_range_names_what_is_wrong(args, said, capsys):
    """They said "must lie in 1..71 ... got []", or listed 72-83 months."""
    assert main(["refresh", str(FILE), "--vintage", "gb300", *args]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1, err


def test_the_cli_says_the_warnings_on_stderr_and_in_json(capsys):
    assert main(["refresh", str(FILE), "--vintage", "gb300", "--to-month", "20"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("warning: the old fleet's sale in month 18") and "warning" not in out
    main(["refresh", str(FILE), "--vintage", "gb300", "--to-month", "20", "--format", "json"])
    payload = json.loads(capsys.readouterr().out)
    assert payload["warnings"][0].startswith("the old fleet's sale in month 18")


def test_an_error_projecting_the_refresh_cases_names_the_file_as_econ_project_does(capsys):
    """The refresh cases were built without the scenario's file, so an error found while
    compiling them (here: a resale series without the H200) named no file."""
    resale = ["--set", 'market.resale_series="GLRI/ResidualGuide"']
    assert main(["project", str(FILE), *resale]) == 3
    said = capsys.readouterr().err
    assert said.startswith(f"error: {FILE}: market.resale_series: ")
    assert main(["refresh", str(FILE), "--vintage", "gb300", *resale]) == 3
    assert capsys.readouterr().err == said
    scenario = load_scenario(FILE, {"market.resale_series": "GLRI/ResidualGuide"})
    with pytest.raises(InputError) as found:
        refresh_analysis(scenario, "gb300", months=[18])
    assert str(found.value).startswith(f"{FILE}: market.resale_series")


def test_candidate_months_before_the_vintages_purchase_month_are_warned_about(capsys):
    """`--from-month 5` bought the GB300s 13 months before the file's purchase month, which the
    refresh takes as when they become available (docs/methodology.md), without a word."""
    available = read_toml(FILE)["vintages"][0]["fleet"]["purchase_month"]
    args = ["refresh", str(FILE), "--vintage", "gb300", "--from-month", "5", "--to-month", "20"]
    assert main([*args, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["best_month"] < available
    assert payload["warnings"][0] == (
        f"refresh months 5 to {available - 1} are before month {available}, the purchase month "
        "of vintage 'gb300' in the file, taken as when its GPUs become available: those cases "
        f"buy them before they can be had (the best month, {payload['best_month']}, is one of "
        f"them); expected candidate months from {available} (the default)"
    )
    assert main(args) == 0
    assert capsys.readouterr().err.startswith(f"warning: refresh months 5 to {available - 1} are")
    scenario = load_scenario(FILE)
    one = refresh_analysis(scenario, "gb300", months=[available + 6, available - 6])
    assert one.warnings[0].startswith(f"refresh month {available - 6} is before month {available}")
    assert "the best month" not in one.warnings[0] or one.best_month < available
    gaps = refresh_analysis(scenario, "gb300", months=[3, 9, available + 2])
    assert gaps.warnings[0].startswith(f"2 refresh months, 3 to 9, are before month {available}")
    for months in (None, [available, available + 1]):  # the default starts at the purchase month
        assert not [
            w for w in refresh_analysis(scenario, "gb300", months).warnings if "before" in w
        ]
