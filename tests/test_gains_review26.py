"""Review 26 (finance lead) of `econ gains` and `econ market import`: the base case leaves out the
MLPerf history and the vintages' own gains, --step replaces every vintage's steps, the heading
says a step's rollout, a gain that changes no tokens is warned of, --step replaces the file's
steps before the file is validated, and future-dated index rows are warned of once."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.commands.gains import format_table
from econ.gains import (
    gain_to_earn_cost_of_capital,
    has_gains,
    solve_gain,
    step_text,
    value_gain,
    vintage_steps_replaced,
    with_steps,
    without_gains,
)
from econ.rental_index import POINT_WARNINGS_LIMIT, parse_index, price_warnings
from econ.scenario import save_scenario, scenario_to_dict, validate_dict
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
HISTORY = {"throughput.history": {"model": "deepseek-r1"}, "throughput.steps": []}
NO_GAIN = "there is no gain to value"


def _npv(scenario) -> float:
    return float(project(scenario).metrics["npv_usd"][0])


def _vintage_steps(scenario, steps, top=None):
    """The scenario with `steps` given in its first vintage's [vintages.throughput] (and
    `top` as its own steps)."""
    data = scenario_to_dict(scenario)
    data["vintages"][0]["throughput"]["steps"] = steps
    if top is not None:
        data["throughput"]["steps"] = top
    return validate_dict(data)


# --- 1. the MLPerf history ----------------------------------------------------------------------


def test_the_base_case_leaves_out_the_mlperf_history():
    """With throughput.history alone, base and gain case were the same (2.135e15 tokens, NPV
    58,280,848 both) and the gain +0 with "no gain to value", though the history grows the
    throughput 154% a year: without_gains kept `history`."""
    history = load_scenario(SEED, HISTORY)
    flat = load_scenario(SEED, {"throughput.steps": []})
    assert without_gains(history).throughput.history is None
    assert history.throughput.without_gains().history is None
    assert has_gains(history) and not has_gains(flat)
    result = value_gain(history)
    assert result.base["tokens_total"] == pytest.approx(project(flat).metrics["tokens_total"][0])
    assert result.base["npv_usd"] == pytest.approx(_npv(flat), rel=1e-12)
    assert result.delta["npv_usd"] == pytest.approx(_npv(history) - _npv(flat), rel=1e-12)
    assert result.delta["npv_usd"] > 50e6
    assert not any(NO_GAIN in w for w in result.warnings)


def test_the_seeds_step_on_top_of_the_history_is_valued_against_no_gains():
    """History plus the seed's +19.8% step was worth +12,329,553 against a base that kept the
    history; against one with no gains it is the whole difference."""
    both = load_scenario(SEED, {"throughput.history": {"model": "deepseek-r1"}})
    flat = load_scenario(SEED, {"throughput.steps": []})
    result = value_gain(both)
    assert result.delta["npv_usd"] == pytest.approx(_npv(both) - _npv(flat), rel=1e-12)


def test_the_gain_to_earn_the_cost_of_capital_is_solved_without_the_history():
    """The one-time step a life needs was solved on top of the history's growth."""
    history = load_scenario(SEED, HISTORY)
    flat = load_scenario(SEED, {"throughput.steps": []})
    needed = gain_to_earn_cost_of_capital(history, [6.0], variable="step", step_month=5)
    plain = gain_to_earn_cost_of_capital(flat, [6.0], variable="step", step_month=5)
    assert needed.status.tolist() == plain.status.tolist() == ["solved"]
    assert needed.value[0] == pytest.approx(plain.value[0], abs=1e-7)


# --- 2. the vintages' own gains -----------------------------------------------------------------


def test_a_vintages_own_step_is_valued_against_the_fleet_without_it():
    """The GB300 vintage's own +30% step at month 30 is worth about 7.97M (NPV 16,593,741 with
    it, 8,623,866 without); `econ gains` showed base = gain and "no gain to value"."""
    refresh = load_scenario(REFRESH)
    stepped = _vintage_steps(refresh, [{"month": 30, "gain": 0.3}])
    assert has_gains(stepped) and not has_gains(refresh)
    result = value_gain(stepped)
    assert result.base["npv_usd"] == pytest.approx(_npv(refresh), rel=1e-12)
    assert result.delta["npv_usd"] == pytest.approx(_npv(stepped) - _npv(refresh), rel=1e-12)
    assert result.delta["npv_usd"] > 7e6
    assert not any(NO_GAIN in w for w in result.warnings)
    assert result.vintage_gains == [
        {
            "vintage": "gb300",
            "steps": [{"month": 30, "gain": 0.3, "label": "", "ramp_months": 0}],
            "trajectory": "",
        }
    ]
    assert result.to_json()["vintage_gains"] == result.vintage_gains
    assert format_table(result).splitlines()[0] == (
        "Value of the gains of h200-fleet-gb300-refresh: vintage gb300: +30.0% at month 30"
    )


def test_a_vintages_own_rate_is_left_out_of_the_base_case_too():
    refresh = load_scenario(REFRESH)
    data = scenario_to_dict(refresh)
    data["vintages"][0]["throughput"]["gain_rate_annual"] = 0.2
    growing = validate_dict(data)
    base = without_gains(growing)
    assert [row.throughput.gain_rate_annual for row in base.expand()] == [0.0, 0.0]
    assert value_gain(growing).base["npv_usd"] == pytest.approx(_npv(refresh), rel=1e-12)


def test_steps_given_replace_every_vintages_own_steps():
    """--step 40:+10% left the vintage's own steps in place (they replace the scenario's) and
    reached only the H200s, retired at month 18: every figure +0, with no warning."""
    stepped = _vintage_steps(load_scenario(REFRESH), [{"month": 30, "gain": 0.3}])
    replaced = with_steps(stepped, [{"month": 40, "gain": 0.1}])
    assert [[(s.month, s.gain) for s in row.throughput.steps] for row in replaced.expand()] == [
        [(40, 0.1)],
        [(40, 0.1)],
    ]
    assert value_gain(replaced).delta["npv_usd"] > 0
    assert vintage_steps_replaced(load_scenario(REFRESH)) is None
    assert vintage_steps_replaced(stepped) == (
        "the steps given replace the steps of every vintage too, and reach each vintage's GPUs "
        "in service in their months; replaced: vintages[0] (gb300): +30.0% at month 30"
    )


def test_the_cli_says_which_vintage_steps_a_step_replaces(tmp_path, capsys):
    stepped = _vintage_steps(load_scenario(REFRESH), [{"month": 30, "gain": 0.3}])
    path = save_scenario(stepped, tmp_path / "refresh.toml")
    assert main(["gains", str(path), "--step", "40:+10%", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "replaced: vintages[0] (gb300): +30.0% at month 30" in err
    assert NO_GAIN not in err
    assert json.loads(out)["delta"]["npv_usd"] > 0


def test_a_solved_step_reaches_a_vintage_with_steps_of_its_own():
    """The solved step went into the scenario's steps only, and its slot of the batch was the
    vintage's own +30% step, which the solver overwrote."""
    refresh = load_scenario(REFRESH)
    stepped = _vintage_steps(refresh, [{"month": 30, "gain": 0.3}])
    step = {"month": 20, "gain": 0.2}
    both = _vintage_steps(refresh, [step, {"month": 30, "gain": 0.3}], top=[step])
    solved = solve_gain(stepped, None, _npv(both), variable="step", step_month=20)
    assert solved.status.tolist() == ["solved"]
    assert solved.value[0] == pytest.approx(0.2, abs=1e-6)


# --- 4. the heading says a step's rollout -------------------------------------------------------


def test_the_heading_says_a_steps_rollout():
    seed = load_scenario(SEED)
    ramped = with_steps(seed, [{"month": 5, "gain": 0.2, "ramp_months": 6}])
    heading = format_table(value_gain(ramped)).splitlines()[0]
    assert heading.endswith(": +20.0% at month 5 rolled out over months 5 to 10")
    assert step_text({"month": 5, "gain": 0.2, "ramp_months": 1}) == "+20.0% at month 5"
    assert step_text({"month": 5, "gain": 0.2, "label": "v2", "ramp_months": 2}) == (
        "+20.0% at month 5 (v2) rolled out over months 5 to 6"
    )


# --- 5. a gain that changes no tokens -----------------------------------------------------------


def test_a_step_of_zero_is_warned_of():
    result = value_gain(with_steps(load_scenario(SEED), [{"month": 5, "gain": 0.0}]))
    assert result.delta["npv_usd"] == 0
    assert any(NO_GAIN in w and "serves the same tokens" in w for w in result.warnings)
    assert not any(NO_GAIN in w for w in value_gain(load_scenario(SEED)).warnings)


def test_a_step_after_the_fleet_retires_is_warned_of():
    """The H200 fleet retires at month 18: a step at month 40 changes nothing."""
    h200 = load_scenario(REFRESH, {"vintages": []})
    result = value_gain(with_steps(h200, [{"month": 40, "gain": 0.1}]))
    assert result.delta["npv_usd"] == 0
    assert any(NO_GAIN in w for w in result.warnings)


# --- 6. --step replaces the file's steps before the file is validated ---------------------------


def test_step_replaces_a_file_step_beyond_a_shortened_horizon(capsys):
    """The file's step at month 5, which --step replaces, refused a horizon of 4 months."""
    args = ["gains", str(SEED), "--set", "horizon_months=4"]
    assert main([*args, "--step", "3:+10%", "--format", "json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [(s["month"], s["gain"]) for s in steps] == [(3, 0.1)]
    assert main(args) == 3  # without --step the file's own step still counts
    assert "throughput.steps[0] at month 5 is beyond the horizon" in capsys.readouterr().err


# --- 7. market import: future-dated rows warned of once -----------------------------------------

HEADER = "date,series,gpu,term_months,usd_per_gpu_hour,source\n"


def _future_rows(count: int) -> str:
    first = dt.date(2030, 1, 1)
    return HEADER + "".join(
        f"{first + dt.timedelta(days=i)},Big/Daily,H100,0,5.0,s\n" for i in range(count)
    )


def test_many_future_dated_points_make_one_warning():
    points = parse_index(_future_rows(20))
    (warning,) = price_warnings(points, "big.csv", today=dt.date(2026, 12, 1))
    assert warning == (
        "big.csv: 20 points are dated after today (2026-12-01): line 2, 2030-01-01 Big/Daily "
        "H100 term 0 months; line 3, 2030-01-02 Big/Daily H100 term 0 months; line 4, "
        "2030-01-03 Big/Daily H100 term 0 months ... and 17 more; expected the date the price "
        "was published or quoted (a mistyped year?)"
    )
    few = parse_index(_future_rows(POINT_WARNINGS_LIMIT))
    assert len(price_warnings(few, "few.csv", today=dt.date(2026, 12, 1))) == POINT_WARNINGS_LIMIT


def test_many_jumps_make_one_warning():
    rows = "".join(
        f"2024-{m:02d}-01,Syn/Typo,H100,0,{25 if m % 2 else 2.5},s\n" for m in range(1, 11)
    )
    (warning,) = price_warnings(parse_index(HEADER + rows), "t.csv", today=dt.date(2026, 1, 1))
    assert warning.startswith(
        "t.csv: 9 points are 5x or more above or below the point before them: line 3, "
        "2024-02-01 Syn/Typo H100 term 0 months: 2.5 after 25; line 4,"
    )
    assert warning.endswith(
        "... and 6 more; expected no jump of 5x or more between consecutive points (a mistyped "
        "price?)"
    )


def test_market_import_of_a_long_future_file_prints_one_warning(tmp_path, capsys):
    path = tmp_path / "future.csv"
    path.write_text(_future_rows(2000))
    assert main(["market", "import", str(path)]) == 0
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "2,000 points are dated after today" in err and "... and 1,997 more" in err
