"""Integers beyond a float at the input boundary (DESIGN.md §5-6): TOML, --set and benchmark JSON
give integers of any size (10**400, a hexadecimal literal of thousands of digits, or more digits
than Python converts from text, 4,300 by default); each is refused with exit 3, naming the file,
the field and what was expected, never with a traceback (OverflowError, ValueError)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from econ.cli import main
from econ.scenario import ScenarioError, apply_overrides, parse_override, read_toml, validate_dict
from econ.scenario.power_models import Facility, Power, check_fleet_in_hall
from econ.strict_json import (
    OverlongNumberError,
    beyond_float,
    digits_shown,
    integer_shown,
    load_json,
)
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
OVERLONG = "1" * 5000  # more digits than int() converts from text (a ValueError in the parser)
BIG = {
    "int400": "1" + "0" * 400,  # converts, but beyond a float (OverflowError in float arithmetic)
    "overlong": OVERLONG,
    "hex": "0x" + "f" * 5000,  # a power-of-two base converts without limit: 6,021 digits
    "negative": "-" + "9" * 350,
}
FINITE = "expected a finite number"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def refused(code: int, err: str, *names: str) -> None:
    assert code == 3, err
    assert "Traceback" not in err and FINITE in err, err
    for name in names:
        assert name in err, (name, err)
    assert len(err) < 2_000  # the number is shown by its leading digits, never whole
    assert OVERLONG[:100] not in err


def seed_with(tmp_path: Path, old: str, new: str) -> Path:
    text = SEED.read_text()
    assert old in text
    path = tmp_path / "big.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("name", ["int400", "hex", "negative"])
def test_a_huge_integer_in_a_scenario_file_is_refused_by_field(capsys, tmp_path, name):
    path = seed_with(tmp_path, "gpu_count = 72", f"gpu_count = {BIG[name]}")
    code, _, err = run(capsys, "validate", str(path))
    refused(code, err, str(path), "fleet.gpu_count")


def test_an_integer_too_long_to_read_names_the_file_and_the_limit(capsys, tmp_path):
    """More digits than Python reads from text: tomllib fails without saying where, so the
    message names the file and the limit (not the field)."""
    path = seed_with(tmp_path, "gain = 0.198", f"gain = {OVERLONG}")
    code, _, err = run(capsys, "project", str(path))
    refused(code, err, str(path), "an integer of more than 4,300 digits")


@pytest.mark.parametrize("literal", BIG.values(), ids=BIG.keys())
def test_a_huge_integer_given_with_set_is_refused(capsys, literal):
    code, _, err = run(capsys, "project", str(SEED), "--set", f"fleet.gpu_count={literal}")
    refused(code, err, "fleet.gpu_count")


def test_a_huge_integer_inside_a_set_list_is_named(capsys):
    code, _, err = run(
        capsys, "project", str(SEED), "--set", f"throughput.steps=[{{month=5, gain={10**400}}}]"
    )
    refused(code, err, "throughput.steps[0].gain")
    code, _, err = run(
        capsys, "project", str(SEED), "--set", f"throughput.steps=[{{month=5, gain={OVERLONG}}}]"
    )
    refused(code, err, "throughput.steps", "an integer of more than 4,300 digits")


def test_a_sweep_value_is_parsed_by_the_same_rule():
    with pytest.raises(ScenarioError, match=FINITE) as info:
        parse_override(f"capex.system_price_usd={OVERLONG}")
    assert info.value.path == "capex.system_price_usd"


@pytest.mark.parametrize(
    "value", [10**400, -(10**5000), 16**5000], ids=["int400", "negative-5001-digits", "hex"]
)
def test_the_shared_validation_refuses_them_for_the_app(value):
    """The app's forms and links build dicts and validate them: no TOML text on the way."""
    data = read_toml(SEED)
    data["fleet"]["gpu_count"] = value
    with pytest.raises(ScenarioError, match=FINITE) as info:
        validate_dict(data, file="link")
    assert info.value.path == "fleet.gpu_count" and "Traceback" not in str(info.value)
    data = read_toml(SEED)
    data["financing"]["debt_term_months"] = [1, {"x": value}]  # wherever in the data
    with pytest.raises(ScenarioError, match=FINITE) as info:
        validate_dict(data)
    assert info.value.path == "financing.debt_term_months[1].x"
    with pytest.raises(ScenarioError, match=FINITE):
        apply_overrides(read_toml(SEED), {"fleet.gpu_count": value})


def test_racks_times_gpus_per_rack_beyond_a_float_is_refused():
    data = read_toml(SEED)
    data["fleet"] = {**data["fleet"], "racks": 10**200, "gpus_per_rack": 10**200}
    del data["fleet"]["gpu_count"]
    with pytest.raises(ScenarioError, match=FINITE):
        validate_dict(data)


def test_check_fleet_in_hall_refuses_instead_of_overflowing():
    with pytest.raises(ValueError, match="fleet.gpu_count = 1e\\+400"):
        check_fleet_in_hall(10**400, 72, Power(), Facility())
    check_fleet_in_hall(10**300, 72, Power(), Facility())  # large, but a float: no error here


def test_largest_float_integers_pass_the_bound():
    assert not beyond_float(int(1.7e308)) and beyond_float(10**309) and not beyond_float(True)
    data = read_toml(SEED)
    # large, finite: the sections accept it (fleet.gpu_count has a bound of its own, MAX_GPUS)
    data["capex"]["system_price_usd"] = 10**20
    assert validate_dict(data).capex.system_price_usd == 10**20


@pytest.mark.parametrize(
    ("setting", "field", "bound"),
    [
        ("fleet.gpu_count=" + "1" + "0" * 300, "fleet.gpu_count = 1000", "100000000"),
        ("fleet.gpu_count=100000001", "fleet.gpu_count = 100000001", "100000000"),
        ("fleet.gpus_per_rack=10001", "fleet.gpus_per_rack = 10001", "10000"),
        ("capex.gpus_per_system=10001", "capex.gpus_per_system = 10001", "10000"),
        ("fleet.racks=100000001", "fleet.racks = 100000001", "100000000"),
    ],
)
def test_a_count_past_any_fleet_is_refused_naming_the_bound(capsys, setting, field, bound):
    """Found by review: fleet.gpu_count = 10**300 validated, and every figure of its projection
    was inf or NaN (null); the counts now have bounds past any real fleet or rack."""
    code, out, err = run(capsys, "project", str(SEED), "--set", setting)
    assert code == 3 and not out, err
    assert field in err and f"less than or equal to {bound}" in err, err
    assert "Traceback" not in err and len(err) < 2_000


def test_a_file_of_a_gpu_count_past_any_fleet_fails_validate(capsys, tmp_path):
    path = seed_with(tmp_path, "gpu_count = 72", "gpu_count = 1" + "0" * 300)
    code, out, err = run(capsys, "validate", str(path))
    assert code == 3 and "ok" not in out, out
    assert f"{path}: fleet.gpu_count = 1000" in err and "equal to 100000000" in err, err
    assert "Traceback" not in err and len(err) < 2_000


def test_a_vintage_of_a_gpu_count_past_any_fleet_is_refused_naming_it():
    data = read_toml(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    data["vintages"][0]["fleet"]["gpu_count"] = 10**300
    with pytest.raises(
        ScenarioError, match=r"vintages\[0\] \(gb300\): fleet.gpu_count = 1000"
    ) as info:
        validate_dict(data)
    assert "less than or equal to 100000000" in str(info.value) and len(str(info.value)) < 400


def test_racks_whose_gpus_pass_the_bound_are_refused_naming_both():
    from econ.scenario.models import MAX_GPUS

    data = read_toml(SEED)
    data["fleet"] = {**data["fleet"], "racks": 2_000_000, "gpus_per_rack": 72}
    del data["fleet"]["gpu_count"]
    with pytest.raises(
        ScenarioError, match="racks x gpus_per_rack is 2,000,000 x 72 = 144,000,000"
    ):
        validate_dict(data)
    data["fleet"]["racks"] = MAX_GPUS // 72
    assert validate_dict(data).fleet.gpu_count == MAX_GPUS // 72 * 72


def test_numbers_are_shown_by_their_leading_digits():
    assert integer_shown(10**400) == "1e+400 (an integer of 401 digits)"
    assert integer_shown(-(10**400) * 123) == "-1.23e+402 (an integer of 403 digits)"
    assert integer_shown(72) == "72" and repr(integer_shown(72)) == "72"
    assert integer_shown(16**60000).endswith("(an integer of 72,248 digits)")
    assert digits_shown("1_234" + "0" * 5000) == "1.23e+5003 (an integer of 5,004 digits)"


# --- benchmark JSON -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"output_throughput": %s}', "field 'output_throughput'"),
        ('[{"concurrency": 1, "output_throughput": %s, "mean_tpot_ms": 3}]', "record 1"),
        ('{"concurrency": 1, "output_throughput": 5}\n{"output_throughput": %s}\n', "line 2"),
    ],
    ids=["object", "list", "jsonl"],
)
def test_an_overlong_integer_in_a_benchmark_file_exits_3(capsys, tmp_path, text, where):
    path = tmp_path / "result.json"
    path.write_text(text % OVERLONG)
    code, _, err = run(capsys, "throughput", "import", str(path))
    refused(code, err, str(path), where, "output_throughput")


def test_an_overlong_integer_in_an_mlperf_detail_log_exits_3(capsys, tmp_path):
    path = tmp_path / "mlperf_log_detail.txt"
    record = {"key": "result_completed_tokens_per_second", "value": 0}
    line = ":::MLLOG " + json.dumps(record).replace(": 0}", f": {OVERLONG}}}")
    path.write_text(line + "\n")
    code, _, err = run(capsys, "throughput", "import", str(path), "--format", "mlperf-detail")
    refused(code, err, str(path), "line 1", "'value'")


def test_load_json_names_the_path_and_keeps_the_rest():
    with pytest.raises(OverlongNumberError) as info:
        load_json(f'[1, {{"a": [2, {OVERLONG}]}}]')
    assert info.value.field == "[1].a[1]" and isinstance(info.value, ValueError)
    assert load_json(f'{{"a": [1, 2.5, {"9" * 400}]}}')["a"][2] == 10**400 - 1
    assert re.search("finite", str(info.value))
