"""Review 31 (finance team and lender) of `econ gains`, econ.gains and the Software gains page: the
break-even rates of a scenario whose growth is a table or its MLPerf history, or whose prices are
a table or a fall factor; a step month after the shortest life; a catalog step's date, a gain
that is no finite number, a percentage typed without its sign and a control character in a
label, each named as the user gave it; --out of another format; a year the horizon cuts short."""

from __future__ import annotations

import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.gains import (
    GainsError,
    gain_rate_to_hold_margin,
    gain_to_earn_cost_of_capital,
    parse_step,
    rate_case,
    value_grid,
    year_label,
)
from econ.scenario import scenario_to_dict, validate_dict
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
TABLE = {
    "throughput.trajectory": "table",
    "throughput.table": [{"month": 1, "multiplier": 1.0}, {"month": 24, "multiplier": 2.0}],
}
HISTORY = {"throughput.history": {"model": "deepseek-r1"}}


# --- 1. a solved annual rate replaces a table or the MLPerf history ----------------------------


@pytest.mark.parametrize("growth", [TABLE, HISTORY], ids=["table", "history"])
def test_the_rate_that_holds_margin_is_solved_over_a_table_or_a_history(growth):
    """A table trajectory leaves throughput.gain_rate_annual unused: every rate tried changed
    nothing, so the rate holding margin at 30% and 60% deflation read 'unreachable' (NaN) and at
    0% 'met_at_lower_bound'; a history scenario was refused ('gain_rate_annual cannot be
    varied'). The solved rate replaces them, the steps kept: d / (1 - d), as for the seed."""
    scenario = load_scenario(SEED, growth)
    solution = gain_rate_to_hold_margin(scenario, [0.3, 0.6])
    assert list(solution.status) == ["solved", "solved"]
    assert solution.value == pytest.approx([0.3 / 0.7, 0.6 / 0.4], rel=1e-6)


def test_the_rate_to_earn_the_cost_of_capital_on_top_of_a_tables_steps():
    """keep_gains=True solves the rate on top of the steps; with a table trajectory it read
    'met_at_lower_bound' (NaN) though the seed's 6-year life needs 1.7%/year on top of its step
    (docs/gains.md, section 4): the table gave its own growth whatever the rate."""
    table = load_scenario(SEED, TABLE)
    seed = load_scenario(SEED)
    solved = gain_to_earn_cost_of_capital(table, [6], keep_gains=True)
    expected = gain_to_earn_cost_of_capital(seed, [6], keep_gains=True)
    assert list(solved.status) == ["solved"]
    assert solved.value == pytest.approx(expected.value, abs=1e-8)
    held = rate_case(table).model_copy(deep=True)
    assert held.throughput.trajectory == "compound" and not held.throughput.table
    assert held.throughput.steps == seed.throughput.steps


def test_the_rate_case_of_a_scenario_without_a_table_or_history_is_itself():
    seed = load_scenario(SEED)
    assert rate_case(seed) is seed
    history = rate_case(load_scenario(SEED, HISTORY))
    assert history.throughput.history is None
    assert not any(path.startswith("throughput.history") for path in history.sources)
    assert project(history).metrics["npv_usd"][0] == pytest.approx(
        project(seed).metrics["npv_usd"][0], rel=1e-12
    )


# --- 2. a step month after the shortest life ----------------------------------------------------


def test_a_step_after_the_shortest_life_is_refused_by_name():
    """A step in month 40 for lives of 3 to 7 years was refused for every life at once as the
    batch's "row 0: the base scenario's throughput step at month 40 is beyond the horizon of 36
    months (horizon_months / depreciation.life_years)", naming no input the caller gave."""
    seed = load_scenario(SEED)
    with pytest.raises(GainsError) as refused:
        gain_to_earn_cost_of_capital(seed, [3, 4, 5], variable="step", step_month=40)
    assert str(refused.value) == (
        "step_month = 40 is after the end of the 3-year life (month 36); expected a step month "
        "from 1 to 36, within every life solved"
    )
    solved = gain_to_earn_cost_of_capital(seed, [3, 4], variable="step", step_month=36)
    assert list(solved.status) == ["solved", "solved"]


# --- 3. a catalog step's date is named as the user gave it ---------------------------------------

FROM_ID, TO_ID = "v6.0-6f6e7f09", "v6.1-48ef0995"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--step-at", "2026-13"],
            "error: --step-at '2026-13': '2026-13' is not a date; expected a month YYYY-MM from "
            "2000-01 to 2100-12",
        ),
        (
            ["--step-at", "99"],
            "error: --step-at '99': 99 is month 99, beyond the horizon of 72 months (last month "
            "2032-04); expected a date within the projection",
        ),
        (
            ["--set", "start_date=2030-01-01"],
            f"error: the step from catalog row {FROM_ID} to {TO_ID}, dated 2026-09 (the later "
            "row's publication): 2026-09 is month -40, before the first service month (2030-02, "
            "month 1); expected a later date",
        ),
    ],
)
def test_a_catalog_steps_date_is_refused_in_the_users_words(args, said, capsys):
    """The refusals quoted a --step the user never typed: "--step '2026-13:0.19774918065938873:
    CoreWeave GB200 deepseek-r1 Server, v6.0 to v6.1': '2026-13' is not a date"."""
    code = main(["gains", str(SEED), "--step-from-catalog", FROM_ID, TO_ID, *args])
    assert code == 3
    assert capsys.readouterr().err.strip() == said


# --- 4. a gain that is no finite number is called so --------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("12:nan%", "gain 'nan%' is not a finite number"),  # "is at or below -100% (or not finite)"
        ("12:inf", "gain 'inf' is not a finite number"),  # "is above +10,000% (or not finite)"
        ("12:1e400%", "gain '1e400%' is not a finite number"),
        ("12:-100%", "gain '-100%' is at or below -100%"),
        ("12:100.5", "gain '100.5' is above +10,000%"),
    ],
)
def test_a_gain_that_is_no_finite_number_is_called_so(text, said):
    with pytest.raises(GainsError) as refused:
        parse_step(text, load_scenario(SEED).start_date, 72)
    assert str(refused.value) == (
        f"--step '{text}': {said}; expected a gain above -100% and at most +10,000%"
    )


# --- 5. a price table takes no imposed decline ----------------------------------------------------


def _priced_by_table():
    data = scenario_to_dict(load_scenario(SEED))
    del data["market"]["price_usd_per_mtok"]
    data["market"]["price_decline_annual"] = 0.0
    data["market"]["price_table"] = [
        {"month": 1, "price_usd_per_mtok": 0.3261},
        {"month": 36, "price_usd_per_mtok": 0.15},
    ]
    data["sources"] = {k: v for k, v in data["sources"].items() if "market.price" not in k}
    return validate_dict(data)


@pytest.mark.parametrize(
    ("solve", "what"),
    [
        (
            lambda s: gain_rate_to_hold_margin(s, [0.0, 0.3]),
            "the rate that holds margin under a token price decline",
        ),
        (
            lambda s: gain_to_earn_cost_of_capital(s, [4, 6], price_decline_annual=0.3),
            "price_decline_annual",
        ),
    ],
)
def test_a_decline_imposed_on_a_price_table_is_refused_by_name(solve, what):
    """The batch refused it as "row 1: market: price_table is given together with a price
    decline", a decline the caller never set (the Software gains page's break-even chart for
    any scenario priced by a table); the docstring said the solver covers price tables."""
    scenario = _priced_by_table()
    with pytest.raises(GainsError) as refused:
        solve(scenario)
    assert str(refused.value) == (
        f"{what}: scenario 'deepseek-r1-gb200-nvl72' gives its token prices as a table "
        "(market.price_table), which sets every month's price, so no annual price decline can "
        "be imposed on it; expected a scenario with market.price_usd_per_mtok and "
        "market.price_decline_annual"
    )
    solved = gain_to_earn_cost_of_capital(scenario, [4, 6])  # its own prices: solved
    assert list(solved.status) == ["solved", "solved"]


def test_a_fall_factor_gives_way_to_the_declines_imposed():
    """A scenario whose decline is written as a fall factor (2x a year) was refused as "row 0:
    market: price_fall_factor_annual 2 means a decline of 0.5, but price_decline_annual is 0.0;
    give one of the two": the same answers as the scenario written with the decline."""
    data = scenario_to_dict(load_scenario(SEED))
    del data["market"]["price_decline_annual"]
    data["market"]["price_fall_factor_annual"] = 2.0
    factor = validate_dict(data)
    decline = load_scenario(SEED, {"market.price_decline_annual": 0.5})
    held = gain_rate_to_hold_margin(factor, [0.0, 0.3])
    assert held.value[1] == pytest.approx(0.3 / 0.7, rel=1e-6)
    needed = gain_to_earn_cost_of_capital(factor, [4, 6], price_decline_annual=[0.3, 0.6])
    expected = gain_to_earn_cost_of_capital(decline, [4, 6], price_decline_annual=[0.3, 0.6])
    assert needed.value == pytest.approx(expected.value, abs=1e-9)
    own = gain_to_earn_cost_of_capital(factor, [6])  # its own decline, 2x a year
    assert own.value == pytest.approx(gain_to_earn_cost_of_capital(decline, [6]).value, abs=1e-9)
    grid = value_grid(factor, {"market.price_decline_annual": [0.3, 0.6]})
    expected_grid = value_grid(decline, {"market.price_decline_annual": [0.3, 0.6]})
    assert grid["npv_usd_fleet"].to_numpy() == pytest.approx(
        expected_grid["npv_usd_fleet"].to_numpy(), rel=1e-12
    )


# --- 6. a percentage typed without its sign is warned of ------------------------------------------


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        (
            "12:30",
            "--step '12:30': a gain without % is a fraction, so 30 is +3000.0%; write 30% "
            "for +30.0%",
        ),
        (
            "12:2",
            "--step '12:2': a gain without % is a fraction, so 2 is +200.0%; write 2% for +2.0%",
        ),
        ("12:0.3", None),
        ("12:30%", None),
        ("12:0.99:v2", None),
    ],
)
def test_a_percentage_typed_without_its_sign_is_warned_of(text, warned, capsys):
    """`econ gains SEED --step 12:30` valued +3,000% (NPV of the gain 76,387,976 USD per rack)
    and "12:2" +200% with no word that 30 and 2 were read as fractions; only the engine's note
    of a step beyond 3.02x, among fifteen case warnings, hinted at the first."""
    assert main(["gains", str(SEED), "--step", text]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "a gain without %" in line]
    assert said == ([f"warning: {warned}"] if warned else [])


# --- 7. --out names a file of the format written --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "format", "said"),
    [
        (
            "gains.xlsx",
            "table",
            "econ gains writes text (--format table), not a .xlsx file; expected a .txt file "
            "(econ project --out writes workbooks and Parquet)",
        ),
        (
            "gains.parquet",
            "csv",
            "econ gains writes text (--format csv), not a .parquet file; expected a .csv file "
            "(econ project --out writes workbooks and Parquet)",
        ),
        (
            "gains.json",
            "table",
            "a .json file, but --format is table; expected --format json, or a .txt file",
        ),
        (
            "gains.csv",
            "json",
            "a .csv file, but --format is json; expected --format csv, or a .json file",
        ),
    ],
)
def test_out_names_a_file_of_the_format_written(tmp_path, capsys, name, format, said):
    """`econ gains SEED --out gains.xlsx` wrote the table's text into gains.xlsx, exit 0, a file
    no spreadsheet opens (`econ project --out gains.xlsx` writes a workbook); --out gains.json
    without --format json wrote the table into it."""
    out = tmp_path / name
    assert main(["gains", str(SEED), "--format", format, "--out", str(out)]) == 3
    assert capsys.readouterr().err == f"error: --out {out}: {said}\n"
    assert not out.exists()


@pytest.mark.parametrize(("name", "format"), [("g.txt", "table"), ("G.CSV", "csv"), ("g", "json")])
def test_out_takes_a_file_of_the_format_written(tmp_path, name, format):
    assert main(["gains", str(SEED), "--format", format, "--out", str(tmp_path / name)]) == 0
    assert (tmp_path / name).stat().st_size > 0


# --- 8. a control character in a step's label is refused as the --step's ------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "12:+30%:a\x1b[31mred",
            "--step '12:+30%:a\\x1b[31mred': the label holds a control character ('\\x1b') at "
            "character 2",
        ),
        (
            "12:+30%:a\nb",
            "--step '12:+30%:a\\nb': the label holds a control character ('\\n') at character 2",
        ),
    ],
)
def test_a_control_character_in_a_steps_label_is_refused_as_the_steps(text, said, capsys):
    """The escape was refused as the scenario file's: "models/scenarios/deepseek-r1-gb200-
    nvl72.toml: throughput.steps[0].label = ...", a field the file does not hold; a line feed
    read "expected WHEN:GAIN[:LABEL]" of a step written so."""
    assert main(["gains", str(SEED), "--step", text]) == 3
    assert capsys.readouterr().err == (
        f"error: {said}; expected a name or one-line text of printable characters: no control "
        "characters such as ESC, CR or LF\n"
    )


# --- 9. a year the horizon cuts short says so ----------------------------------------------------


def test_a_year_the_horizon_cuts_short_says_how_many_months_it_holds(capsys):
    """With a 30-month horizon the EBITDA table's last row read "year 3  314,942  428,713", a
    third of year 2's, as if the rack earned a third as much in a whole year."""
    assert main(["gains", str(SEED), "--set", "horizon_months=30"]) == 0
    table = capsys.readouterr().out
    assert "\nyear 2  " in table
    assert "\nyear 3 (6 months)  " in table
    assert year_label(3, 30) == "year 3 (6 months)"
    assert year_label(2, 13) == "year 2 (1 month)"
    assert year_label(6, 72) == "year 6" and year_label(2, 72, prefix="") == "2"
