"""The command line: output formats, files, exit codes, bad input.

The commands run in-process through `econ.cli.main` (a fresh interpreter per test costs seconds);
a few smoke tests start the real entry points (`python -m econ`, the `econ` console script) to
check that they reach the same code with the same exit codes and no traceback.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from econ.cli import main
from econ.engine import MONTHLY_COLUMNS, SUMMARY_COLUMNS
from econ.workbook import read_summary
from tests.conftest import ROOT, SCENARIOS, econ_in_process

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


def entry_point(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "econ", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process (`tests.conftest.econ_in_process`)."""
    return functools.partial(econ_in_process, capsys)


def test_console_script_and_module_agree():
    script = shutil.which("econ", path=str(Path(sys.executable).parent))
    assert script, "the econ console script is installed"
    by_script = subprocess.run(
        [script, "project", str(SEED), "--format", "json"], capture_output=True, text=True
    )
    by_module = entry_point("project", str(SEED), "--format", "json")
    assert by_script.returncode == by_module.returncode == 0
    assert json.loads(by_script.stdout)["scenarios"] == json.loads(by_module.stdout)["scenarios"]


def test_json_contract(capsys):
    assert main(["project", *map(str, SCENARIOS), "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in payload["scenarios"]] == [p.stem for p in SCENARIOS]
    stamped = payload["provenance"]["scenarios"]
    assert [s["name"] for s in stamped] == [p.stem for p in SCENARIOS]
    assert all(len(s["sha256"]) == 64 for s in stamped)
    for scenario in payload["scenarios"]:
        assert list(scenario["summary"]) == list(SUMMARY_COLUMNS)
        assert set(scenario["summary"]["cost_usd_per_mtok_by_component"]) == {
            "depreciation",
            "financing",
            "power",
            "facility",
            "opex",
        }


def test_table_is_default_and_shows_warnings(capsys):
    assert main(["project", str(SEED), "--set", "financing.debt_share=0"]) == 0
    out = capsys.readouterr().out
    assert "Levelized cost [USD/M tokens]" in out
    assert "warning [deepseek-r1-gb200-nvl72]: no debt" in out


def test_set_changes_the_result(capsys):
    main(["project", str(SEED), "--format", "json"])
    base = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    main(["project", str(SEED), "--format", "json", "--set", "utilization.share=0.9"])
    busier = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    assert busier["lcot_usd_per_mtok"] < base["lcot_usd_per_mtok"]


def test_set_of_a_table_merges_into_its_section_and_cites_itself(tmp_path: Path, capsys):
    """`--set financing={discount_rate_annual=0.08}` replaced the whole financing section (debt
    share 0.7 -> 0, NPV 6,042 -> -69,318 USD) where the dotted path changed one field; and the
    workbook showed an overridden value with the source of the value it replaced."""
    from openpyxl import load_workbook

    def npv(*sets):
        args = [a for s in sets for a in ("--set", s)]
        assert main(["project", str(SEED), "--format", "json", *args]) == 0
        return json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]["npv_usd"]

    dotted = npv("financing.discount_rate_annual=0.08")
    assert npv("financing={discount_rate_annual=0.08}") == dotted
    assert npv("financing.covenants={test_months=6}") == npv("financing.covenants.test_months=6")
    out = tmp_path / "ov.xlsx"
    set_price = ["--set", "market.price_usd_per_mtok=0.2", "--out", str(out)]
    assert main(["project", str(SEED), *set_price]) == 0
    rows = {r[0].value: r for r in load_workbook(out)["Assumptions"].iter_rows(min_row=2)}
    price = rows["market.price_usd_per_mtok"]
    assert price[3].value == 0.2
    assert price[4].value.startswith("overridden (was: 0.3261; source: derived: ")
    assert price[5].value == "overridden"
    assert rows["utilization.share"][5].value != "overridden"


def test_csv_to_stdout(capsys):
    assert main(["project", str(SEED), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("scenario,lcot_usd_per_mtok,cost_usd_per_mtok_depreciation")


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx"])
def test_out_files(tmp_path: Path, suffix: str, capsys):
    out = tmp_path / f"seed{suffix}"
    assert main(["project", str(SEED), "--out", str(out)]) == 0
    # the warnings are said on stderr too, not only written into the summary file
    said = capsys.readouterr()
    assert said.out == "" and "warning [deepseek-r1-gb200-nvl72]: debt sized to" in said.err
    if suffix == ".csv":
        monthly = pd.read_csv(out)
        summary = pd.read_csv(tmp_path / "seed.summary.csv")
    elif suffix == ".parquet":
        monthly = pd.read_parquet(out)
        summary = pd.read_parquet(tmp_path / "seed.summary.parquet")
    else:
        monthly = pd.read_excel(out, sheet_name="Monthly")
        summary = read_summary(pd.read_excel(out, sheet_name="Summary"))
    assert list(monthly.columns[:3]) == ["scenario", "month", "date"]
    assert set(MONTHLY_COLUMNS) <= set(monthly.columns)
    assert len(monthly) == 73
    assert summary.loc[0, "scenario"] == "deepseek-r1-gb200-nvl72"
    # Existing files are kept unless --force.
    before = out.read_bytes()
    assert main(["project", str(SEED), "--out", str(out), "--set", "utilization.share=0.2"]) == 3
    assert out.read_bytes() == before
    assert (
        main(["project", str(SEED), "--out", str(out), "--force", "--set", "utilization.share=0.2"])
        == 0
    )
    assert out.read_bytes() != before


def test_hostile_scenario_names_are_neutralized_in_csv(tmp_path: Path):
    out = tmp_path / "x.csv"
    assert main(["project", str(SEED), "--set", 'name="=HYPERLINK(1)"', "--out", str(out)]) == 0
    assert "'=HYPERLINK(1)" in out.read_text()


def test_validate_and_schema(capsys):
    assert main(["validate", *map(str, SCENARIOS)]) == 0
    assert "ok" in capsys.readouterr().out
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "capex" in schema["properties"]


def test_a_typo_in_the_hardware_key_is_warned_of_by_validate_and_project(run, tmp_path: Path):
    typo = tmp_path / "typo.toml"
    typo.write_text(SEED.read_text().replace('hardware = "gb200-nvl72"', 'hardware = "gb200-nv72"'))
    assert 'hardware = "gb200-nv72"' in typo.read_text()
    checked = run("validate", str(typo))
    assert checked.returncode == 0 and "ok" in checked.stdout
    assert "hardware 'gb200-nv72' is not in the hardware catalog" in checked.stderr
    assert "did you mean 'gb200-nvl72'" in checked.stderr
    projected = run("project", str(typo), "--format", "json")
    assert projected.returncode == 0
    warnings = json.loads(projected.stdout)["scenarios"][0]["summary"]["warnings"]
    assert any("'gb200-nv72' is not in the hardware catalog" in w for w in warnings)
    vintage = tmp_path / "vintage.toml"  # a typo in a vintage is found too, by both
    vintage.write_text(
        SEED.read_text()
        + '\n[[vintages]]\nname = "next"\n[vintages.fleet]\nhardware = "gb300-nv72"\n'
    )
    checked = run("validate", str(vintage))
    assert checked.returncode == 0, checked.stderr
    assert "warning [deepseek-r1-gb200-nvl72/next]: hardware 'gb300-nv72'" in checked.stderr
    warned = run("project", str(vintage), "--format", "json")
    assert warned.returncode == 0, warned.stderr
    assert "'gb300-nv72' is not in the hardware catalog" in warned.stdout
    plain = run("project", str(SEED), "--format", "json")
    assert not any(
        "hardware catalog" in w
        for w in json.loads(plain.stdout)["scenarios"][0]["summary"]["warnings"]
    )


def test_validate_gives_the_power_warnings_project_gives(run, tmp_path: Path):
    """Both read one list (econ.racks.catalog_warnings): validate once left out the power per GPU
    far from the rack catalog's and the chip-only power with no host share."""
    far = tmp_path / "far.toml"
    far.write_text(SEED.read_text().replace("kw_per_gpu = 1.87", "kw_per_gpu = 3.5"))
    chip = tmp_path / "chip.toml"
    chip.write_text(
        SEED.read_text().replace(
            "kw_per_gpu = 1.87", 'kw_per_gpu = 1.2\nkw_per_gpu_definition = "chip_only"'
        )
    )
    for path, expected in (
        (far, "power.kw_per_gpu gives 3.5 kW of IT load per GPU, 87% above the 1.87 kW"),
        (chip, "power.kw_per_gpu_definition is 'chip_only' and power.host_overhead_share is 0"),
    ):
        checked = run("validate", str(path))
        assert checked.returncode == 0, checked.stderr
        assert expected in checked.stderr
        projected = run("project", str(path), "--format", "json")
        warnings = json.loads(projected.stdout)["scenarios"][0]["summary"]["warnings"]
        assert any(expected in w for w in warnings)
    plain = run("validate", str(SEED))
    assert plain.returncode == 0 and "warning" not in plain.stderr


def test_a_negative_number_in_scientific_notation_reaches_the_check_of_its_value(run):
    done = run("loan", "--amount", "-1e6", "--rate", "0.1", "--term-months", "12")
    assert done.returncode == 3
    # named as typed (econ.commands.Number), not as the float read: -1000000.0
    assert "--amount = -1e6: expected a principal above 0" in done.stderr
    assert "expected one argument" not in done.stderr


BAD = {
    "unknown key": (
        "[capex]\ngpu_price_usd = 1.0\ngpu_prise = 2\n",
        "capex.gpu_prise = 2: unknown field",
    ),
    "wrong type": ('[capex]\ngpu_price_usd = "a lot"\n', "capex.gpu_price_usd = 'a lot'"),
    "negative price": (
        "[capex]\ngpu_price_usd = -100.0\n",
        "capex.gpu_price_usd = -100.0: -100 is not above 0; expected a number above 0 [USD/GPU]",
    ),
    "zero price": ("[capex]\ngpu_price_usd = 0\n", "capex.gpu_price_usd = 0"),
    "life of zero": (
        "[capex]\ngpu_price_usd = 1.0\n[depreciation]\nlife_years = 0\n",
        "depreciation.life_years = 0",
    ),
    "utilization above 1": (
        "[capex]\ngpu_price_usd = 1.0\n[utilization]\nshare = 1.5\n",
        "utilization.share = 1.5",
    ),
    "ramp beyond horizon": (
        "horizon_months = 12\n[capex]\ngpu_price_usd = 1.0\n[fleet]\ndeployment_ramp_months = 24\n",
        "fleet.deployment_ramp_months is 24 months, longer than the horizon of 12 months",
    ),
    "malformed TOML": ("[capex\n", "malformed TOML"),
    "empty file": ("", "file is empty"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_input_exits_3_with_a_message(tmp_path: Path, case: str, run):
    text, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    for command in ("project", "validate"):
        result = run(command, str(path))
        assert result.returncode == 3, result.stderr
        assert "Traceback" not in result.stderr
        assert str(path) in result.stderr
        assert expected in result.stderr


def test_missing_file_and_bad_set_path(run):
    missing = run("project", "nope.toml")
    assert missing.returncode == 3 and "nope.toml: file not found" in missing.stderr
    bad_path = run("project", str(SEED), "--set", "capex.gpu_prise=1")
    assert bad_path.returncode == 3
    assert (
        "error: --set capex.gpu_prise=1 (over deepseek-r1-gb200-nvl72.toml): no field 'gpu_prise' "
        "in capex; did you mean 'gpu_price_usd' or 'gpus_per_system'? expected one of: "
        "gpu_price_usd" in bad_path.stderr
    )
    assert "Traceback" not in bad_path.stderr + missing.stderr


@pytest.mark.parametrize("command", [("project",), ("sweep", "--grid", "power.pue=1.2,1.3")])
def test_a_value_past_a_bound_given_by_set_is_named_as_the_command_line_s(run, command):
    """It said "error: .../deepseek-r1-gb200-nvl72.toml: utilization.share = 2: Input should be
    less than or equal to 1": pydantic's words, the value blamed on the file."""
    name, *options = command
    done = run(name, str(SEED), *options, "--set", "utilization.share=2")
    assert done.returncode == 3
    assert done.stderr.strip() == (
        "error: --set utilization.share=2 (over deepseek-r1-gb200-nvl72.toml): 2 is above 1; "
        "expected a fraction from 0 to 1 (1 = 100%)"
    )
    done = run(name, str(SEED), *options, "--set", "financing.debt_term_months=0")
    assert done.stderr.strip().endswith(
        "(over deepseek-r1-gb200-nvl72.toml): 0 is below 1; expected a whole number from 1 to "
        "600 [months]"
    )


def test_bad_output_path_and_format(tmp_path: Path, run):
    unknown = run("project", str(SEED), "--out", str(tmp_path / "x.docx"))
    assert unknown.returncode == 3 and "unknown output format '.docx'" in unknown.stderr
    nowhere = run("project", str(SEED), "--out", str(tmp_path / "no" / "x.csv"))
    assert nowhere.returncode == 3 and "does not exist" in nowhere.stderr


def test_usage_errors_exit_2(run):
    assert run().returncode == 2
    assert run("project").returncode == 2
    assert run("project", str(SEED), "--format", "yaml").returncode == 2
    assert run("frobnicate").returncode == 2


def test_entry_point_exit_codes_and_messages(tmp_path: Path):
    """`python -m econ`: 0 with output, 2 on usage errors, 3 with a message and no traceback."""
    ok = entry_point("validate", str(SEED))
    assert ok.returncode == 0 and "ok" in ok.stdout
    assert entry_point().returncode == 2
    assert entry_point("frobnicate").returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD["unknown key"][0])
    invalid = entry_point("project", str(bad))
    assert invalid.returncode == 3
    assert BAD["unknown key"][1] in invalid.stderr and str(bad) in invalid.stderr
    assert "Traceback" not in invalid.stderr


def test_the_table_shows_what_a_lender_reads_first(capsys):
    assert main(["project", str(SEED)]) == 0
    out = capsys.readouterr().out
    for label in ("Equity multiple (MOIC)", "Minimum LLCR", "Covenant breach [months]",
                  "First covenant breach", "Debt sized by"):  # fmt: skip
        assert label in out, label


@pytest.mark.parametrize("setting", ["fleet.gpu_count=true", "power.kw_per_gpu=false"])
def test_set_with_a_boolean_for_a_number_exits_3_naming_it(run, setting):
    path, value = setting.split("=")
    done = run("project", str(SEED), "--set", setting)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert f"--set {setting} (over {SEED.name}): {value} is a boolean; expected the number" in (
        done.stderr
    )


def test_an_input_refused_only_while_projecting_names_its_file(run):
    # Found by review: 15 of 15 projection-time refusals among 4,000 random scenarios named no
    # file (here: economic depreciation of a token price of 0, which has no value to fall from)
    done = run(
        "project",
        str(SEED),
        "--set",
        "market.price_usd_per_mtok=0",
        "--set",
        'depreciation.method="economic"',
        "--set",
        'depreciation.value_source="token_price"',
    )
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert done.stderr.startswith(
        f"error: {SEED}: value_share = 0: expected a market value above 0"
    )
    assert "depreciation.value_source" in done.stderr


def _scenario_file(path: Path, base: Path, overrides: list[str]) -> None:
    from econ.scenario import apply_overrides, dumps, read_toml, validate_dict

    path.write_text(dumps(validate_dict(apply_overrides(read_toml(base), overrides))))


@pytest.mark.parametrize("order", ["refused last", "refused first"])
def test_a_refusal_while_projecting_several_files_names_the_file(run, tmp_path, monkeypatch, order):
    # Found by review: `econ project a.toml b.toml` named the scenario refused, or nothing at
    # all, but not its file; the file is named as given on the command line, not resolved
    refresh = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    shutil.copy(SEED, tmp_path / "a.toml")
    _scenario_file(
        tmp_path / "sub" / "b.toml",
        refresh,
        [
            'financing.repayment="balance_schedule"',
            "financing.balance_schedule=[0.5, 0.0]",
            'financing.size_to_min_dscr="none"',
            'financing.max_ltv="none"',
        ],
    )
    _scenario_file(
        tmp_path / "c.toml",
        SEED,
        [
            'name="c"',  # a.toml has the seed's name: two scenarios of one name are refused
            "market.price_usd_per_mtok=0",
            'depreciation.method="economic"',
            'depreciation.value_source="token_price"',
        ],
    )
    cases = [
        ("sub/b.toml", "scenario 'h200-fleet-gb300-refresh': financing.repayment"),
        ("c.toml", "value_share = 0: expected a market value above 0"),
    ]
    for refused, message in cases:
        files = ["a.toml", refused] if order == "refused last" else [refused, "a.toml"]
        for command in (["project", *files], ["export", *files, "--json", "out.json"]):
            done = run(*command)
            assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
            assert done.stderr.startswith(f"error: {refused}: {message}"), done.stderr
            assert str(tmp_path) not in done.stderr
    assert not (tmp_path / "out.json").exists()


REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
CURVE = ROOT / "tests" / "data" / "throughput" / "generic_curve_hand_example.csv"
LOAN = ("loan", "--amount", "100", "--term-months", "12", "--format", "json")
NON_FINITE_OR_HUGE = [
    # (command, option, value): each used to crash (a traceback) or print nan/inf with exit 0
    ((*LOAN, "--rate"), "--rate", "inf"),
    ((*LOAN, "--rate"), "--rate", "1e308"),
    ((*LOAN, "--rate"), "--rate", "-inf"),
    (("loan", "--term-months", "12", "--rate", "0.05", "--amount"), "--amount", "1e308"),
    ((*LOAN, "--sofr"), "--sofr", "nan"),
    ((*LOAN, "--sofr", "0.04", "--spread"), "--spread", "inf"),
    ((*LOAN, "--sofr", "0.04", "--floor"), "--floor", "nan"),
    ((*LOAN, "--rate", "0.05", "--type", "balloon", "--balloon-share"), "--balloon-share", "nan"),
    ((*LOAN, "--rate", "0.05", "--upfront-fee-share"), "--upfront-fee-share", "nan"),
    ((*LOAN, "--rate", "0.05", "--amortization-months"), "--amortization-months", "10" * 12),
    (("lease-vs-own", str(SEED), "--price"), "--price", "inf"),
    (("lease-vs-own", str(SEED), "--price"), "--price", "1e308"),
    (("lease-vs-own", str(SEED), "--price", "4", "--discount-rate"), "--discount-rate", "inf"),
    (("refresh", str(REFRESH), "--vintage", "gb300", "--mw"), "--mw", "nan"),
    (("refresh", str(REFRESH), "--vintage", "gb300", "--mw"), "--mw", "inf"),
    (("refresh", str(REFRESH), "--vintage", "gb300", "--to-month"), "--to-month", "9" * 30),
    (("throughput", "point", str(CURVE), "--usd-per-gpu-hour"), "--usd-per-gpu-hour", "inf"),
    (
        ("depreciation", "--cost", "1000", "--retirement-month", "12", "--sale-value"),
        "--sale-value",
        "nan",
    ),
    (("depreciation", "--cost", "1000", "--months"), "--months", "10000000"),
    (("depreciation", "--method", "sum_of_years_digits", "--cost"), "--cost", "1.7e308"),
]


@pytest.mark.parametrize(("argv", "option", "value"), NON_FINITE_OR_HUGE)
def test_non_finite_or_huge_numbers_in_options_exit_3_naming_them(run, argv, option, value):
    done = run(*argv, value)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {option} = ") and "expected" in line


def test_a_port_out_of_range_is_refused_before_the_app_starts():
    from econ.cli import _parser
    from econ.errors import InputError

    with pytest.raises(InputError, match="--port = 0: expected a port from 1 to 65535"):
        _parser(features=False).parse_args(["app", "--port", "0"])


def test_a_refresh_envelope_beyond_a_fleets_bound_is_refused(run):
    done = run("refresh", str(REFRESH), "--vintage", "gb300", "--mw", "1e300")
    assert done.returncode == 3
    assert "1e+300 MW holds more than 100,000,000 'gb300' GPUs" in done.stderr


def test_every_number_option_goes_through_the_shared_number_type():
    """No option reads a bare float or int: NaN, infinity and overflowing numbers would pass."""
    import argparse

    from econ.cli import _parser
    from econ.commands import Number

    def actions(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from actions(sub)
            else:
                yield action

    bare = [a.option_strings for a in actions(_parser()) if a.type in (float, int)]
    assert bare == []
    numbers = [a for a in actions(_parser()) if isinstance(a.type, Number)]
    assert len(numbers) > 50
    for action in numbers:
        action.type.expected()  # every field a bound names exists


def _econ(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "econ", *args],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        **kwargs,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize(
    "args", [("project", str(SEED), "--format", "json"), ("schema",), ("--version",)]
)
def test_a_full_disk_on_stdout_exits_3_with_one_line(args):
    with open("/dev/full", "w") as full:
        done = _econ(*args, stdout=full)
    assert done.returncode == 3
    assert done.stderr == (
        "error: cannot write to standard output: the disk is full (no space left on device)\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="closes file descriptor 1 of the child")
def test_a_closed_stdout_exits_3_unless_nothing_is_printed(tmp_path):
    import os

    def close_stdout():
        os.close(1)

    done = _econ("project", str(SEED), "--format", "json", preexec_fn=close_stdout)
    assert done.returncode == 3
    assert done.stderr == "error: cannot write to standard output: it is closed\n"
    out = tmp_path / "p.csv"
    done = _econ("project", str(SEED), "--out", str(out), preexec_fn=close_stdout)
    assert done.returncode == 0, done.stderr
    assert out.exists()


def test_a_closed_pipe_still_exits_0_quietly():
    head = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = _econ("benchmarks", "list", "--format", "csv", stdout=head.stdin)
    head.stdin.close()
    head.wait()
    assert done.returncode == 0
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("module", "function", "args"),
    [
        ("econ.cli", "_cmd_project", ("project", str(SEED))),
        ("econ.commands.memo", "run_memo", ("memo", str(SEED), "--out", "x.html")),
        ("econ.commands.memo", "run_verify", ("verify", "x.html")),
        ("econ.commands.gains", "run", ("gains", str(SEED))),
    ],
)
def test_ctrl_c_in_any_command_exits_130_with_one_line(run, monkeypatch, module, function, args):
    import importlib

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(module), function, interrupted)
    try:
        done = run(*args)
    except KeyboardInterrupt:  # it would stop pytest itself
        pytest.fail("KeyboardInterrupt came out of econ.cli.main")
    assert done.returncode == 130
    assert done.stderr == "interrupted (Ctrl-C)\n"


@pytest.mark.parametrize("args", [("--allow-paths",), ("--allow-paths", "--force")])
def test_allow_paths_without_a_folder_is_a_usage_error(run, args):
    done = run("project", str(SEED), *args)
    assert done.returncode == 2
    assert "argument --allow-paths: expected one argument" in done.stderr
    assert done.stderr.startswith("usage: econ")


@pytest.mark.parametrize("limit", ["-1", "0"])
def test_benchmarks_list_refuses_a_limit_below_one_row(run, limit):
    done = run("benchmarks", "list", "--limit", limit)
    assert done.returncode == 3 and done.stdout == ""
    assert f"--limit = {limit}: expected a whole number of rows at least 1" in done.stderr
    assert run("benchmarks", "list", "--limit", "2", "--format", "json").returncode == 0


def test_two_scenarios_with_one_name_are_refused_as_keys_of_the_output(run, tmp_path):
    twin = tmp_path / "twin.toml"
    shutil.copy(SEED, twin)  # the same `name` in another file
    for command in (
        ("project", str(SEED), str(twin), "--format", "json"),
        ("export", str(SEED), str(twin), "--csv", str(tmp_path / "o.csv")),
    ):
        done = run(*command)
        assert done.returncode == 3 and done.stdout == ""
        line = done.stderr.strip()
        assert line.startswith(f"error: {twin}: name = 'deepseek-r1-gb200-nvl72' is also the name")
        assert str(SEED) in line and "names are the keys of the output" in line
        assert "expected distinct names" in line
    assert not (tmp_path / "o.csv").exists()
    done = run("project", str(SEED), str(SEED))
    assert done.returncode == 3
    assert f"error: {SEED} is given twice" in done.stderr


def _actions(parser, path=("econ",)):
    """Every argument of the command line, with the command it belongs to."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, (*path, name))
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(path), parser, action


def _shown(default) -> set[str]:
    return {str(default), f"{default:g}"} if isinstance(default, float) else {str(default)}


def test_every_option_has_a_help_text_that_states_its_default():
    """Every argument says what it is for; one with a default says it: "(default X)"."""
    from argparse import SUPPRESS

    from econ.cli import _parser

    missing = []
    for command, parser, action in _actions(_parser()):
        name = "/".join(action.option_strings) or action.dest
        text = parser._get_formatter()._expand_help(action) if action.help else ""
        if not text.strip():
            missing.append(f"{command} {name}: no help")
        elif action.default in (None, False, [], "", SUPPRESS):
            continue
        elif not any(f"default {shown}" in text for shown in _shown(action.default)):
            missing.append(f"{command} {name}: help does not say the default {action.default!r}")
    assert missing == []


def test_bounds_are_worded_and_tested_as_a_field_declares_them():
    from econ.bounds import bounds_words, within_bounds

    assert bounds_words({"ge": 1.0, "le": 3.0}) == "from 1 to 3"
    assert bounds_words({"ge": 0.0, "lt": 1.0}) == "from 0 to below 1"
    assert bounds_words({"gt": 0.0}) == "above 0"
    assert bounds_words({"ge": 0.0, "le": 2e6}, "{:,.0f}".format) == "from 0 to 2,000,000"
    assert within_bounds(1.0, {"ge": 1.0, "le": 3.0}) and within_bounds(2.0, {})
    assert not within_bounds(0.0, {"gt": 0.0}) and not within_bounds(1.0, {"ge": 0.0, "lt": 1.0})
    assert not within_bounds(float("nan"), {"ge": 0.0})


@pytest.mark.parametrize(
    "args",
    [
        ("export", str(SEED), "--csv", "a.csv", "--csv", "b.csv"),
        ("project", str(SEED), "--format", "json", "--format", "csv"),
        ("montecarlo", str(SEED), "-n", "10", "-n", "20", "--dist", "utilization.share=0.7"),
    ],
)
def test_an_option_given_twice_is_a_usage_error_not_a_silent_replacement(run, args, tmp_path):
    """Found by a finance review: `econ export --csv y.csv --csv y.summary.csv` wrote only the
    second (and its summary beside it), exit 0."""
    result = run(*(a if not a.endswith(".csv") else str(tmp_path / a) for a in args))
    assert result.returncode == 2
    assert "is given twice; expected it once" in result.stderr
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("command", [("project",), ("sweep", "--grid", "power.pue=1.2,1.3")])
def test_a_field_set_twice_is_a_usage_error(run, command):
    """Found by a data scientist's review: `--set utilization.share=0.5 --set
    utilization.share=0.6` projected 0.6 in silence; two fields are fine."""
    name, *rest = command
    twice = ["--set", "utilization.share=0.5", "--set", " utilization.share =0.6"]
    result = run(name, str(SEED), *rest, *twice)
    assert result.returncode == 2
    assert "--set utilization.share is given twice; expected each field once" in result.stderr
    ok = run(name, str(SEED), *rest, "--set", "utilization.share=0.5", "--set", "power.pue=1.3")
    assert ok.returncode == 0


@pytest.mark.parametrize("command", [("project",), ("sweep", "--grid", "power.pue=1.2,1.3")])
def test_a_set_with_no_value_is_a_usage_error(run, command):
    # `--set utilization.share` exited 3 as if the scenario file were invalid, naming the file
    name, *rest = command
    result = run(name, str(SEED), *rest, "--set", "utilization.share")
    assert result.returncode == 2 and str(SEED) not in result.stderr
    assert "--set 'utilization.share' gives no value; expected PATH=VALUE" in result.stderr


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["market", "list", "--bogus"], "usage: econ market list "),
        (["benchmarks", "list", "--bogus"], "usage: econ benchmarks list "),
        (["size", "--mw", "1", "--hardware", "h100-sxm", "extra"], "usage: econ size "),
        (["--bogus"], "usage: econ [-h]"),
    ],
)
def test_an_unknown_argument_shows_the_usage_of_the_command_it_follows(argv, usage, capsys):
    # A CLI review: `econ market list --bogus` printed the top level's usage.
    with pytest.raises(SystemExit) as caught:  # argparse exits; the console script returns 2
        main(argv)
    err = capsys.readouterr().err
    assert caught.value.code == 2
    assert err.startswith(usage) and f"error: unrecognized arguments: {argv[-1]}" in err


def _help_examples() -> list[str]:
    """Every example line at the end of a command's --help (econ.commands.examples)."""
    import argparse

    from econ.cli import _parser
    from econ.commands import EXAMPLES_HEADING

    found, parsers = [], [_parser()]
    while parsers:
        parser = parsers.pop()
        if (parser.epilog or "").startswith(EXAMPLES_HEADING):
            found += [line.strip() for line in parser.epilog.splitlines()[1:]]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += list(action.choices.values())
    return sorted(found)


def test_the_help_examples_cover_the_catalog_commands():
    # A CLI review: no --help of size, hardware, llms, benchmarks, schema or validate had one.
    examples = _help_examples()
    for command in (
        "econ project ",
        "econ validate ",
        "econ schema",
        "econ size ",
        "econ hardware list",
        "econ llms list",
        "econ benchmarks list ",
        "econ benchmarks show ",
    ):
        assert any(line.startswith(command) for line in examples), command


@pytest.mark.parametrize("example", _help_examples())
def test_each_help_example_works_when_pasted(example, capsys, monkeypatch):
    """Run as a shell would from the repository's root: globs expanded, `> FILE` redirected
    (the command's own output is what is checked)."""
    import shlex

    monkeypatch.chdir(ROOT)
    words = shlex.split(example)
    assert words[0] == "econ"
    if ">" in words:
        words = words[: words.index(">")]
    argv = []
    for word in words[1:]:
        argv += (
            [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob(word))] if "*" in word else [word]
        )
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()


# --- a ready-made scenario's name wherever a scenario is taken ------------------------------------

READY = "deepseek-r1-gb200-nvl72"
REFRESH = "h200-fleet-gb300-refresh"
TAKING_A_SCENARIO = {  # (arguments, the file it writes, or None for standard output)
    "project": (["project", READY, "--format", "json"], None),
    "validate": (["validate", READY], None),
    "export": (["export", READY, "--json", "out.json"], "out.json"),
    "gains": (["gains", READY, "--format", "json"], None),
    "lease-vs-own": (["lease-vs-own", READY, "--price", "4", "--term-months", "36"], None),
    "sweep": (["sweep", READY, "--grid", "depreciation.life_years=4,5"], None),
    "refresh": (["refresh", REFRESH, "--vintage", "gb300", "--format", "json"], None),
    "memo": (["memo", READY, "--out", "memo.html"], "memo.html"),
    "library save": (["--library", "sqlite:///lib.db", "library", "save", READY], None),
}


@pytest.mark.parametrize(
    ("argv", "written"), TAKING_A_SCENARIO.values(), ids=TAKING_A_SCENARIO.keys()
)
def test_every_command_taking_a_scenario_takes_a_ready_made_name(
    argv, written, tmp_path, monkeypatch, capsys
):
    """Found by review: `econ project deepseek-r1-gb200-nvl72` said "file not found" where
    `econ export deepseek-r1-gb200-nvl72` read the ready-made scenario; every command reads
    its argument as export does (econ.commands.scenario_path)."""
    monkeypatch.chdir(tmp_path)  # no file of that name here
    assert main(argv) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "file not found" not in err and "Traceback" not in err
    text = out + ((tmp_path / written).read_text(encoding="utf-8") if written else "")
    assert (REFRESH if REFRESH in argv else READY) in text, text[:2000]


def test_a_ready_made_name_projects_as_its_file(tmp_path, monkeypatch, capsys):
    by_path = _summary(capsys, "project", str(SEED), "--format", "json")
    monkeypatch.chdir(tmp_path)
    assert _summary(capsys, "project", READY, "--format", "json") == by_path


def test_a_file_of_a_ready_made_name_in_the_working_folder_wins(tmp_path, monkeypatch, capsys):
    mine = SEED.read_text(encoding="utf-8").replace(f'name = "{READY}"', 'name = "mine"', 1)
    (tmp_path / READY).write_text(mine, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _summary(capsys, "project", READY, "--format", "json")["name"] == "mine"
    assert main(["export", READY, "--json", "mine.json"]) == 0
    written = json.loads((tmp_path / "mine.json").read_text(encoding="utf-8"))
    assert written["scenarios"][0]["name"] == "mine"


@pytest.mark.parametrize("name", ["deepseek-r1-gb200-nvl73", f"{READY}.toml", f"x/{READY}"])
def test_a_name_that_is_no_ready_made_one_is_a_missing_file(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["project", name]) == 3
    err = capsys.readouterr().err
    assert f"{name}: file not found" in err and "Traceback" not in err, err


def _summary(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)["scenarios"][0]


# --- econ validate refuses the MACRS mid-quarter table of another quarter, as econ project does ----

MACRS = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml"
REFRESH_FILE = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
LEVEL_DEBT = {  # no debt sizing: econ project sizes no debt with a construction period yet
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "financing.repayment": "level_payment",
}


def _quarter(month: int) -> int:
    """The quarter of its 12-month tax year (from month 1) a projection month falls in."""
    return (month - 1) % 12 // 3 + 1


MID_QUARTER_CASES = {
    # (file, overrides, projection month placed in service, field, row named, convention)
    "tax Q4 in month 1": (MACRS, {}, 1, "depreciation.tax.convention", "", "mid-quarter Q4"),
    "tax Q1 in month 1": (MACRS, {}, 1, "depreciation.tax.convention", "", "mid-quarter Q1"),
    "tax Q1 served from month 5": (
        MACRS,
        {**LEVEL_DEBT, "fleet.service_start_month": 5},
        5,
        "depreciation.tax.convention",
        "",
        "mid-quarter Q1",
    ),
    "tax Q2 served from month 5": (
        MACRS,
        {**LEVEL_DEBT, "fleet.service_start_month": 5},
        5,
        "depreciation.tax.convention",
        "",
        "mid-quarter Q2",
    ),
    "book Q3 in month 1": (
        SEED,
        {"depreciation.method": "macrs_gds", "depreciation.recovery_years": 5},
        1,
        "depreciation.convention",
        "",
        "mid-quarter Q3",
    ),
    "a vintage bought in month 18": (
        REFRESH_FILE,
        {"depreciation.tax.method": "macrs_gds"},
        19,
        "depreciation.tax.convention",
        " (vintage gb300)",
        "mid-quarter Q1",
    ),
}


@pytest.mark.parametrize(
    ("source", "overrides", "month", "field", "row", "convention"),
    MID_QUARTER_CASES.values(),
    ids=MID_QUARTER_CASES.keys(),
)
def test_validate_refuses_a_mid_quarter_table_as_project_does(
    source, overrides, month, field, row, convention, tmp_path, capsys
):
    """Found by review: econ validate passed depreciation.tax.convention = 'mid-quarter Q4' for
    GPUs in service in month 1 (quarter 1), which econ project refuses; validate calls the same
    check (econ.depreciation.refuse_mid_quarter_mismatch), in the same words, exit 3."""
    from econ.scenario import load_scenario
    from econ.scenario.io import dumps

    scenario = load_scenario(source, {**overrides, field: convention})
    path = tmp_path / "case.toml"
    path.write_text(dumps(scenario), encoding="utf-8")
    validated = main(["validate", str(path)])
    said = capsys.readouterr()
    projected = main(["project", str(path), "--format", "json"])
    project_err = capsys.readouterr().err
    expected = f"mid-quarter Q{_quarter(month)}"
    if convention == expected:
        assert validated == projected == 0, said.err + project_err
        assert f"{path}: ok" in said.out
        return
    assert validated == projected == 3 and "ok" not in said.out
    assert "Traceback" not in said.err
    assert said.err == project_err  # the same message, naming the file, the row and the field
    assert said.err.startswith(
        f"error: {path}: scenario '{scenario.name}'{row}: {field} = '{convention}': "
        f"expected '{expected}' or 'half-year': placed in service in month {month}, "
    ), said.err


def test_export_prints_the_warnings_project_prints(run, tmp_path):
    # econ export wrote the files and said nothing of a covenant breach or a null figure, where
    # `econ project --out` of the same scenario prints its warnings on stderr
    sets = ("--set", "financing.covenants.dscr_floor=1.5")
    exported = run("export", str(SEED), *sets, "--json", str(tmp_path / "e.json"))
    projected = run("project", str(SEED), *sets, "--out", str(tmp_path / "p.json"))
    assert exported.returncode == projected.returncode == 0
    warned = [line for line in exported.stderr.splitlines() if line.startswith("warning [")]
    assert any("covenant" in line for line in warned)
    assert warned == [line for line in projected.stderr.splitlines() if line.startswith("warn")]
