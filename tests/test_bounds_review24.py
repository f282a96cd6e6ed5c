"""Bounds and text that an outside security review of review 24's changes found unchecked: an
empty unit-less latency column that refused a generic CSV; NaN read as "not measured" in
vLLM/SGLang JSON; long text quoted in full in messages and tables; a throughput step of
+1e308%; look-alike digits and underscores read as numbers; a price jump of 1e620 said as
"inf times" (and one that underflows to 0, a ZeroDivisionError).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pytest

from econ.cli import main
from econ.commands import Number
from econ.gains import GainsError, parse_step
from econ.index_files import cell_number
from econ.rental_index import parse_index, price_warnings
from econ.scenario import load_scenario, scenario_to_dict, validate_dict
from econ.scenario.errors import ScenarioError
from econ.scenario.gain_models import MAX_STEP_GAIN, MAX_STEP_LABEL_CHARS
from econ.throughput.importers import CurveError, import_file
from tests.conftest import ROOT, SHARED_DATA

SCENARIO = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
VLLM_SPEC = (
    SHARED_DATA / "samples" / "vllm" / "er0080-vllm-bench-serve-v0.25.1-speculative-qwen-fp8.json"
)
LONG = 100_000
START = dt.date(2026, 4, 1)  # month 1 is 2026-05


def _lines(text: str) -> list[int]:
    return [len(line) for line in text.splitlines()]


# --- 1. a unit-less latency column with no values needs no unit --------------------------------


def test_an_empty_unitless_latency_column_does_not_refuse_the_file(tmp_path: Path):
    path = tmp_path / "empty.csv"
    path.write_text(
        "concurrency,output_tokens_per_s,gpu_count,ttft_p99,tpot_p99\n"
        "1,100,8,,0.02\n2,180,8,,0.025\n"
    )
    curve = import_file(path)  # refused: "the values of 'ttft_p99' fit both seconds and ms"
    assert curve.points["ttft_s_p99"].isna().all()  # not measured
    # the TPOT column alone is decided: 0.02 ms a token is below any served model's
    assert curve.points["tpot_s_p99"].tolist() == [0.02, 0.025]
    assert not any("ttft_p99" in w for w in curve.warnings)
    assert curve.provenance["latency_unit"] == "s (detected: no unit in the headers)"


def test_a_file_whose_unitless_latency_columns_are_all_empty_states_no_unit(tmp_path: Path):
    path = tmp_path / "none.csv"
    path.write_text("concurrency,output_tokens_per_s,gpu_count,ttft_p99\n1,100,8,\n")
    curve = import_file(path)
    assert curve.points["ttft_s_p99"].isna().all()
    assert curve.provenance["latency_unit"] == "none"


# --- 2. a NaN in a vLLM/SGLang result is refused, naming the key --------------------------------


def _vllm(tmp_path: Path, **changes) -> Path:
    record = json.loads(VLLM_SPEC.read_text())
    record.update(changes)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))  # Python's json writes a float NaN as the bare token
    return path


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("p99_tpot_ms", "NaN"),  # the text, read as "not measured" while "Infinity" was refused
        ("p99_tpot_ms", " nan "),
        ("max_concurrency", float("nan")),  # concurrency became NaN: a request-rate run
        ("max_concurrency", "NaN"),
        ("output_throughput", float("nan")),
        ("duration", float("nan")),
    ],
)
def test_a_nan_is_refused_naming_the_key(tmp_path: Path, key, value):
    with pytest.raises(CurveError, match=f"field '{key}' is NaN .*expected a finite number"):
        import_file(_vllm(tmp_path, **{key: value}))


@pytest.mark.parametrize("key", ["p99_tpot_ms", "max_concurrency"])
def test_infinity_is_refused_there_as_before(tmp_path: Path, key):
    with pytest.raises(CurveError, match=f"field '{key}' is 'Infinity' .*finite"):
        import_file(_vllm(tmp_path, **{key: "Infinity"}))


def test_null_and_the_other_missing_markers_are_still_not_measured(tmp_path: Path):
    points = import_file(_vllm(tmp_path, p99_tpot_ms="n/a", max_concurrency=None)).points
    assert points["tpot_s_p99"].isna().all() and points["concurrency"].isna().all()


# --- 3. long text is cut in messages and tables ----------------------------------------------


def test_a_long_renter_pays_is_quoted_short_once(capsys):
    given = "power," + "x" * LONG
    assert main(["lease-vs-own", str(SCENARIO), "--price", "2", "--renter-pays", given]) == 3
    err = capsys.readouterr().err
    # 200,135 characters before: the value quoted whole, twice
    assert len(err) < 400, len(err)
    assert err.startswith("error: --renter-pays 'power,xxx")
    assert f"({len(given) + 2:,} characters): unknown cost 'xxx" in err  # repr's quotes
    assert "expected 'none' or a comma-separated list of distinct costs from: power" in err


def test_market_import_cuts_a_long_series_name_in_its_warnings_and_summary(tmp_path, capsys):
    series = "Pub/X" + "S" * LONG
    path = tmp_path / "long.csv"
    path.write_text(
        "date,series,gpu,term_months,usd_per_gpu_hour,source\n"
        f"2025-01-01,{series},H100,0,2.0,a\n"
        f"2025-02-01,{series},H100,0,25,b\n"  # a jump of 12.5x
        f"2099-01-01,{series},H100,0,2.5,c\n"  # a jump, and a date after today
    )
    assert main(["market", "import", str(path)]) == 0
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 3 and max(_lines(err) + _lines(out)) < 400
    assert all(f"({len(series):,} characters) H100 term 0 months: " in w for w in err.splitlines())
    assert f"({len(series):,} characters) H100 terms 0 months: 3 points" in out


def test_a_steps_label_is_at_most_200_characters(capsys):
    label = "v" * MAX_STEP_LABEL_CHARS
    assert parse_step(f"5:0.1:{label}", START, 72)["label"] == label
    with pytest.raises(GainsError, match="the label is 201 characters long; expected a label of"):
        parse_step(f"5:0.1:{label}v", START, 72)
    assert main(["gains", str(SCENARIO), "--step", f"5:0.1:{'x' * LONG}"]) == 3
    err = capsys.readouterr().err
    assert len(err) < 400 and "the label is 100,000 characters long" in err
    # a scenario file's steps take the same bound
    data = scenario_to_dict(load_scenario(SCENARIO))
    data["throughput"]["steps"] = [{"month": 5, "gain": 0.1, "label": label + "v"}]
    with pytest.raises(ScenarioError, match="201 characters; expected at most 200 characters"):
        validate_dict(data)


def test_a_long_config_is_cut_in_the_operating_point_table(tmp_path, capsys):
    config = "c" * LONG
    path = tmp_path / "long.csv"
    path.write_text(
        "concurrency,output_tokens_per_s,gpu_count,ttft_s_p99,tpot_s_p99,workload,config\n"
        f"1,100,8,0.5,0.02,w,{config}\n"
    )
    # --workload picks by configuration too, and the group row names the configuration
    assert main(["throughput", "point", str(path), "--workload", "ccc"]) == 0
    out = capsys.readouterr().out
    assert max(_lines(out)) < 200, max(_lines(out))  # every row was padded to 100,000
    group = next(line for line in out.splitlines() if line.startswith("group"))
    assert group.endswith(f"{'c' * 10}... ({len(config) + 10:,} characters)")


# --- 4. a step's gain is at most +10,000% --------------------------------------------------------


def test_a_steps_gain_is_bounded_above(capsys):
    assert MAX_STEP_GAIN == 100.0  # +10,000%: 101 times the throughput before the step
    assert parse_step("5:10000%", START, 72)["gain"] == MAX_STEP_GAIN
    for text in ("5:10000.001%", "5:100.001", "5:1e308%"):
        with pytest.raises(GainsError, match="is above \\+10,000%; .*at most \\+10,000%"):
            parse_step(text, START, 72)
    assert main(["gains", str(SCENARIO), "--step", "5:1e308%"]) == 3  # exit 0 before, all n/a
    assert capsys.readouterr().err == (
        "error: --step '5:1e308%': gain '1e308%' is above +10,000%; expected a "
        "gain above -100% and at most +10,000%\n"
    )
    data = scenario_to_dict(load_scenario(SCENARIO))
    data["throughput"]["steps"] = [{"month": 5, "gain": 100.5}]
    with pytest.raises(ScenarioError, match=r"steps\[0\].gain = 100.5: 100.5 is above 100; "):
        validate_dict(data)


def test_a_month_number_of_thousands_of_digits_is_beyond_any_horizon(capsys):
    # int() refuses 4,300 digits and more: a traceback before
    assert main(["gains", str(SCENARIO), "--step", f"{'1' * 5000}:0.1"]) == 3
    err = capsys.readouterr().err
    assert "is beyond any horizon (at most 600 months)" in err and len(err) < 400


# --- 5. ASCII digits only, no underscores, and the value as typed --------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("２０２５-06:0.1", "'２０２５-06' is neither a date"),  # read as +10% at month 5
        ("2025-06:٠.١", "gain '٠.١' is not a number"),  # Arabic-Indic 0.1
        ("٥:0.1", "is neither a date"),
        ("5:1_0%", "gain '1_0%' is not a number"),
    ],
)
def test_a_step_takes_ascii_digits_only(text, expected):
    assert float("٠.١") == 0.1 and int("２０２５") == 2025  # what Python reads them as
    with pytest.raises(GainsError, match=expected):
        parse_step(text, dt.date(2025, 1, 1), 72)


@pytest.mark.parametrize("text", ["8_0", "８０", "٨٠", "1_000.5"])
def test_a_number_option_takes_ascii_digits_without_underscores(text):
    assert float(text) in (80.0, 1000.5)  # what float() reads
    with pytest.raises(ValueError):
        cell_number(text)
    with pytest.raises(ValueError):  # argparse's usage error (exit 2)
        Number(ge=1)(text)
    assert Number(ge=1)("80") == 80.0 and Number(int, ge=1)(" 80 ") == 80


def test_a_gpu_count_with_an_underscore_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["throughput", "import", str(VLLM_SPEC), "--gpus", "8_0"])
    assert exit_.value.code == 2  # it read 80 GPUs
    assert "argument --gpus: invalid float value: '8_0'" in capsys.readouterr().err


@pytest.mark.parametrize(("given", "shown"), [("1e-400", "1e-400"), ("2.50", "2.50")])
def test_a_refused_option_value_is_named_as_typed(given, shown, capsys):
    assert float(given) in (0.0, 2.5)  # "--gpus = 0" before: the float 1e-400 rounds to
    assert main(["throughput", "import", str(VLLM_SPEC), "--gpus", given]) == 3
    assert capsys.readouterr().err.startswith(
        f"error: --gpus = {shown}: expected a whole number of GPUs from 1 to 100,000"
    )


def test_a_long_option_value_is_cut(capsys):
    given = "1" * 500  # 1e499: not finite
    assert main(["throughput", "import", str(VLLM_SPEC), "--gpus", given]) == 3
    err = capsys.readouterr().err
    assert f"--gpus = {'1' * 80}... (500 characters): expected a finite number" in err


# --- 6. a jump between extreme prices is said in powers of ten ------------------------------------


def _index(*prices: str):
    body = "".join(
        f"2025-0{month}-01,Pub/X,H100,0,{price},src\n" for month, price in enumerate(prices, 1)
    )
    return parse_index("date,series,gpu,term_months,usd_per_gpu_hour,source\n" + body, "t.csv")


def test_extreme_jumps_are_said_as_powers_of_ten():
    points = _index("2.0", "1e-320", "1e300")
    # log10(1e-320 / 2) = -320.3 and log10(1e300 / 1e-320) = 620, beyond any float ratio
    assert points[1].usd_per_gpu_hour / 2.0 > 0 and 1e300 / points[1].usd_per_gpu_hour == math.inf
    warned = [w for w in price_warnings(points, "t.csv", START) if "point before it" in w]
    assert "USD/GPU-hour is about 1e-320 times the point before it (2 on 2025-01-01" in warned[0]
    assert "USD/GPU-hour is about 1e+620 times the point before it (9.9" in warned[1]
    assert not any("inf" in w for w in warned)


def test_a_ratio_that_underflows_to_zero_is_warned_of():
    points = _index("1e300", "1e-320")
    assert points[1].usd_per_gpu_hour / points[0].usd_per_gpu_hour == 0.0  # ZeroDivisionError
    [warned] = [w for w in price_warnings(points, "t.csv", START) if "point before it" in w]
    assert "is about 1e-620 times the point before it" in warned


def test_a_jump_within_a_million_times_is_said_in_figures():
    points = _index("2.0", "2e6", "2.0")
    warned = [w for w in price_warnings(points, "t.csv", START) if "point before it" in w]
    assert "is 1e+06 times the point before it" in warned[0]
    assert "is 1/1e+06 of the point before it" in warned[1]
