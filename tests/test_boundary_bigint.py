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
        ("fleet.gpu_count=" + "1" + "0" * 300, "--set fleet.gpu_count=1000", "100,000,000"),
        ("fleet.gpu_count=100000001", "--set fleet.gpu_count=100000001 (", "100,000,000"),
        ("fleet.gpus_per_rack=10001", "--set fleet.gpus_per_rack=10001 (", "10000"),
        ("capex.gpus_per_system=10001", "--set capex.gpus_per_system=10001 (", "10000"),
        ("fleet.racks=100000001", "--set fleet.racks=100000001 (", "100,000,000"),
    ],
)
def test_a_count_past_any_fleet_is_refused_naming_the_bound(capsys, setting, field, bound):
    """Found by review: fleet.gpu_count = 10**300 validated, and every figure of its projection
    was inf or NaN (null); the counts now have bounds past any real fleet or rack."""
    code, out, err = run(capsys, "project", str(SEED), "--set", setting)
    assert code == 3 and not out, err
    assert field in err and f" is above {bound}; expected a whole number from 1 to {bound}" in err
    assert "Traceback" not in err and len(err) < 2_000


def test_a_file_of_a_gpu_count_past_any_fleet_fails_validate(capsys, tmp_path):
    path = seed_with(tmp_path, "gpu_count = 72", "gpu_count = 1" + "0" * 300)
    code, out, err = run(capsys, "validate", str(path))
    assert code == 3 and "ok" not in out, out
    assert (  # (the value by its leading digits, not 301 of them)
        f"{path}: fleet.gpu_count = 1e+300 (an integer of 301 digits): 1e+300 is above "
        "100,000,000; expected a whole number from 1 to 100,000,000 [GPUs]" in err
    ), err
    assert "Traceback" not in err and len(err) < 2_000


def test_a_vintage_of_a_gpu_count_past_any_fleet_is_refused_naming_it():
    data = read_toml(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    data["vintages"][0]["fleet"]["gpu_count"] = 10**300
    with pytest.raises(
        ScenarioError, match=r"vintages\[0\] \(gb300\): fleet.gpu_count = 1e\+300 \(an integer"
    ) as info:
        validate_dict(data)
    assert "1e+300 is above 100,000,000; expected" in str(info.value)
    assert len(str(info.value)) < 400


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


# --- floats past a 64-bit integer in a whole-number field ----------------------------------------


def _integer_fields(model=None, prefix="") -> list[tuple[str, type, str]]:
    """(dotted path, section model, field) of every whole-number field reached through single
    sections (not lists) from the Scenario: where a float of 1e20 goes into it."""
    import typing

    from pydantic import BaseModel

    from econ.scenario.models import Scenario

    found = []
    model = model or Scenario
    for name, info in model.model_fields.items():
        args = [a for a in typing.get_args(info.annotation) if a is not type(None)]
        inner = args[0] if len(args) == 1 else info.annotation
        if inner is int:
            found.append((f"{prefix}{name}", model, name))
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            found += _integer_fields(inner, f"{prefix}{name}.")
    return found


def _seed_with_value(path: str, value) -> dict:
    data = read_toml(SEED)
    *sections, name = path.split(".")
    node = data
    for section in sections:
        node = node.setdefault(section, {})
    node[name] = value
    return data


def _bound_numbers(model, name: str) -> list[str]:
    """The field's bounds as a message writes them, read off the model's own Field arguments
    (pydantic's metadata): 100,000,000 with separators; 2**63 where there is no upper bound."""
    bounds = {}
    for item in model.model_fields[name].metadata:
        for key in ("ge", "gt", "le", "lt"):
            if getattr(item, key, None) is not None:
                bounds[key] = getattr(item, key)
    if "le" not in bounds and "lt" not in bounds:
        bounds["lt"] = "9.22337e+18"
    return [f"{b:,}" if isinstance(b, int) and b >= 100_000 else str(b) for b in bounds.values()]


INTEGER_FIELDS = [f for f in _integer_fields() if f[0] != "schema_version"]
"""(schema_version is read by econ.scenario.migrations first, in words of its own)"""


def test_the_scenario_has_whole_number_fields_of_each_kind():
    paths = [p for p, _, _ in INTEGER_FIELDS]
    assert {"fleet.gpu_count", "horizon_months", "fleet.purchase_month"} <= set(paths), paths
    assert "financing.covenants.test_months" in paths and len(paths) > 15, paths


@pytest.mark.parametrize(
    ("path", "model", "name"), INTEGER_FIELDS, ids=[p for p, _, _ in INTEGER_FIELDS]
)
@pytest.mark.parametrize("value", [1e20, -1e308])
def test_a_float_past_any_whole_number_is_refused_with_the_field_s_bounds(path, model, name, value):
    """Found by review: fleet.gpu_count = 1e20 was refused in pydantic's words, "Unable to
    parse input string as an integer, exceeded maximum size" (of a number that is no string,
    with no bound), where 1e18 named the bound: pydantic reads no float past 2**63 into an int."""
    with pytest.raises(ScenarioError) as info:
        validate_dict(_seed_with_value(path, value), file="big.toml")
    message = str(info.value)
    line = next((x for x in message.splitlines() if f"{path} = {value:g}: " in x), None)
    assert line is not None, message
    assert "too large in size for a whole number" in line, line
    expected = line.split("expected a whole number ", 1)[1]
    assert all(f" {number}" in f" {expected}" for number in _bound_numbers(model, name)), line
    assert "Unable to parse" not in message and "input string" not in message


def test_a_float_past_any_whole_number_on_the_command_line_names_the_bound(capsys):
    from econ.scenario.models import MAX_GPUS

    code, out, err = run(capsys, "project", str(SEED), "--set", "fleet.gpu_count=1e20")
    assert code == 3 and not out and "Traceback" not in err, err
    assert (
        f"--set fleet.gpu_count=1e20 (over {SEED.name}): too large in size for a whole number"
        in err
    ), err
    assert f"expected a whole number from 1 to {MAX_GPUS:,}" in err, err
    assert "Unable to parse" not in err


def test_a_float_past_any_whole_number_in_a_list_or_a_vintage_is_named():
    data = read_toml(SEED)
    data["capex"]["payments"] = [{"month": 1e20, "share": 1.0}]
    with pytest.raises(ScenarioError, match=r"capex.payments\[0\].month = 1e\+20: too large") as e:
        validate_dict(data)
    assert "expected a whole number from 0 to 600" in str(e.value)
    data = read_toml(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    data["vintages"][0]["fleet"]["gpu_count"] = 1e308
    with pytest.raises(
        ScenarioError, match=r"vintages\[0\] \(gb300\): fleet.gpu_count = 1e\+308: too"
    ):
        validate_dict(data)


def test_the_app_names_the_bound_of_a_link_s_huge_float():
    """The app's validation of a link's edits ({"fleet": {"gpu_count": 1e308}})."""
    from econ.ui import state

    data = state.merge(read_toml(SEED), {"fleet": {"gpu_count": 1e308}})
    message = state.validate(data).message
    assert "GPU count" in message and "1e+308" in message, message
    # the box's own bound comes first (a browser's box holds whole numbers exactly to 2^53 - 1);
    # the scenario's, 1 to 100,000,000, is the file's and the CLI's (tests above)
    assert "beyond 9,007,199,254,740,991, the largest whole number a box holds" in message
    assert "Unable to parse" not in message


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
