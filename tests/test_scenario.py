"""Scenario files: validation, errors that name file/field/value, overrides, TOML and schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.files import WriteError
from econ.scenario import (
    Scenario,
    ScenarioError,
    apply_overrides,
    dumps,
    json_schema,
    load_scenario,
    loads,
    save_scenario,
    validate_dict,
)
from tests.conftest import ROOT, SCENARIOS

BASE = {"name": "base", "capex": {"gpu_price_usd": 30000.0}}


def with_change(path: str, value) -> dict:
    return apply_overrides(BASE, {path: value})


def test_defaults_validate():
    scenario = validate_dict(BASE)
    assert scenario.horizon == 72  # default life of 6 years
    assert scenario.capex.gpu_price_usd == 30000.0


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("capex.gpu_price_usd", -5.0, "greater than 0"),
        ("depreciation.life_years", 0, "at least one month (1/12 = 0.08333333333333333 years)"),
        ("depreciation.life_years", 1e-9, "at least one month"),
        ("depreciation.change_life_years", 0.05, "at least one month"),
        ("depreciation.tax.life_years", -3.0, "at least one month"),
        ("depreciation.life_years", 30.5, "less than or equal to 30"),
        ("utilization.share", 1.2, "less than or equal to 1"),
        ("power.pue", 0.9, "greater than or equal to 1"),
        ("market.price_usd_per_mtok", -1, "greater than or equal to 0"),
        ("fleet.gpu_count", 0, "greater than or equal to 1"),
        ("fleet.gpu_count", 2.5, "valid integer"),
        ("financing.debt_rate_quote", "monthly", "'nominal' or 'effective'"),
    ],
)
def test_bad_values_name_field_value_and_expectation(path, value, expected):
    with pytest.raises(ScenarioError) as info:
        validate_dict(with_change(path, value), file="s.toml")
    message = str(info.value)
    assert message.startswith(f"s.toml: {path} = {value!r}")
    assert expected in message


@pytest.mark.parametrize("value", ["cheap", "310000", "1e3"])
def test_a_number_written_as_text_is_refused_not_read(value):
    # pydantic would read "310000" as the number; in TOML a quoted value is text
    with pytest.raises(ScenarioError) as info:
        validate_dict(with_change("capex.gpu_price_usd", value), file="s.toml")
    said = (
        "a number written as text; expected the number without quotes"
        if value != "cheap"
        else "text, not a number; expected a number"  # words are no number written as text
    )
    assert str(info.value) == f"s.toml: capex.gpu_price_usd = {value!r}: {said}"
    validate_dict(with_change("capex.gpu_price_usd", 310000))  # the number itself is fine
    with pytest.raises(ScenarioError, match="s.toml: horizon_months = '60': a number written as text"):
        validate_dict({**BASE, "horizon_months": "60"}, file="s.toml")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("capex.gpu_price_usd", True),
        ("fleet.gpu_count", True),  # pydantic would read it as 1 GPU
        ("financing.debt_share", False),  # and this as all equity
        ("horizon_months", True),
        ("depreciation.custom_percent", [50.0, True]),  # inside a list too
    ],
)
def test_a_boolean_where_a_number_goes_is_refused_not_read_as_1_or_0(path, value):
    # Found by review: `kw_per_gpu = true` projected as 1.0 kW, exit 0 (NPV +586k for -163k)
    with pytest.raises(ScenarioError) as info:
        validate_dict(with_change(path, value), file="s.toml")
    found = "false" if value is False else "true"
    where = f"{path}[1]" if isinstance(value, list) else path
    assert str(info.value) == (
        f"s.toml: {where}: {found} is a boolean; expected the number (or text) the field takes, "
        "not true or false"
    )


def test_a_switch_still_takes_true_and_false():
    for value in (True, False):
        method = validate_dict(with_change("depreciation.switch_to_straight_line", value))
        assert method.depreciation.switch_to_straight_line is value


def test_the_shortest_life_is_one_month():
    assert validate_dict(with_change("depreciation.life_years", 1 / 12)).depreciation.life_years == (
        1 / 12
    )


@pytest.mark.parametrize("text", ["1e400", "-1e400", "inf"])
def test_a_number_beyond_the_float_range_is_named_as_such(text):
    # TOML reads 1e400 as inf: the message must not leave the user wondering where inf came from
    content = f'name = "s"\n[capex]\ngpu_price_usd = {text}\n'
    with pytest.raises(ScenarioError) as info:
        loads(content, file="s.toml")
    assert str(info.value) == (
        f"s.toml: capex.gpu_price_usd = {float(text)!r}: expected a finite number (inf written, "
        "or a number beyond 1.8e308 such as 1e400)"
    )


def test_unknown_key_lists_valid_names():
    data = {**BASE, "capex": {"gpu_price_usd": 1.0, "gpu_prise_usd": 2.0}}
    with pytest.raises(
        ScenarioError,
        match=r"capex.gpu_prise_usd = 2.0: unknown field; expected one of: gpu_price_usd",
    ):
        validate_dict(data, file="s.toml")


def test_unknown_section():
    with pytest.raises(ScenarioError, match=r"capexx: unknown field; expected one of: .*capex"):
        validate_dict({**BASE, "capexx": {}}, file="s.toml")


def test_ramp_longer_than_horizon():
    data = apply_overrides(BASE, {"horizon_months": 12, "utilization.ramp_months": 13})
    with pytest.raises(
        ScenarioError, match="utilization.ramp_months is 13 months, longer than the horizon"
    ):
        validate_dict(data)


def test_step_beyond_horizon_and_out_of_order():
    late = apply_overrides(
        BASE, {"horizon_months": 12, "throughput.steps": [{"month": 13, "gain": 0.1}]}
    )
    with pytest.raises(ScenarioError, match="beyond the horizon"):
        validate_dict(late)
    unordered = with_change(
        "throughput.steps", [{"month": 5, "gain": 0.1}, {"month": 2, "gain": 0.1}]
    )
    with pytest.raises(ScenarioError, match=r"throughput.steps .*month order"):
        validate_dict(unordered)


def test_exactly_one_price():
    with pytest.raises(ScenarioError, match="exactly one of gpu_price_usd and system_price_usd"):
        validate_dict(with_change("capex.system_price_usd", 1e6))


def test_contract_share_needs_price():
    with pytest.raises(ScenarioError, match="contract_usd_per_gpu_hour"):
        validate_dict(with_change("market.contract_share", 0.5))


def test_sources_must_name_fields():
    with pytest.raises(ScenarioError, match="sources names 'capex.nope'"):
        validate_dict({**BASE, "sources": {"capex.nope": "x"}})


def test_a_missing_file_named_as_a_ready_made_scenario_points_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ScenarioError, match="file not found") as err:
        load_scenario("deepseek-r1-gb200-nvl72")
    assert str(err.value).endswith(
        "the ready-made scenario of that name is models/scenarios/deepseek-r1-gb200-nvl72.toml"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as err:
        load_scenario("deepseek-r1-gb200-nvl72")
    assert str(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml") in str(err.value)
    for other in ("no-such-scenario", "deepseek-r1-gb200-nvl72.toml", "x/deepseek-r1-gb200-nvl72"):
        with pytest.raises(ScenarioError) as err:
            load_scenario(other)
        assert "ready-made" not in str(err.value)


def test_missing_file_malformed_and_empty(tmp_path: Path):
    with pytest.raises(ScenarioError, match="nope.toml: file not found"):
        load_scenario(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[capex\ngpu_price_usd = 1\n")
    with pytest.raises(ScenarioError, match="bad.toml: malformed TOML"):
        load_scenario(bad)
    empty = tmp_path / "empty.toml"
    empty.write_text("  \n")
    with pytest.raises(ScenarioError, match="empty.toml: file is empty"):
        load_scenario(empty)


def test_overrides_apply_before_validation(tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text(dumps(validate_dict(BASE)))
    scenario = load_scenario(
        path, ["capex.gpu_price_usd=35000", 'name="x"', "throughput.steps=[{month=5, gain=0.198}]"]
    )
    assert scenario.capex.gpu_price_usd == 35000
    assert scenario.name == "x"
    assert scenario.throughput.steps[0].gain == pytest.approx(0.198)
    with pytest.raises(
        ScenarioError, match=r"capex.gpu_prise: no field 'gpu_prise' in capex; expected one of"
    ):
        load_scenario(path, ["capex.gpu_prise=1"])
    with pytest.raises(ScenarioError, match=f"{path.name}: capex.gpu_price_usd = -1"):
        load_scenario(path, ["capex.gpu_price_usd=-1"])
    with pytest.raises(ScenarioError, match="path=value"):
        load_scenario(path, ["capex.gpu_price_usd"])


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_ready_made_scenarios_round_trip(path: Path, tmp_path: Path):
    scenario = load_scenario(path)
    assert scenario.sources, "ready-made scenarios document their inputs"
    text = dumps(scenario)
    assert loads(text) == scenario
    assert dumps(loads(text)) == text
    out = save_scenario(scenario, tmp_path / "copy.toml")
    assert load_scenario(out) == scenario


def test_save_never_overwrites_without_asking(tmp_path: Path):
    target = tmp_path / "s.toml"
    target.write_text("keep me")
    with pytest.raises(WriteError, match="s.toml exists; use --force to overwrite"):
        save_scenario(validate_dict(BASE), target)
    assert target.read_text() == "keep me"
    save_scenario(validate_dict(BASE), target, overwrite=True)
    assert load_scenario(target).name == "base"


def test_committed_schema_matches_models():
    committed = json.loads((ROOT / "models" / "scenario.schema.json").read_text())
    assert committed == json_schema(), "run `econ schema > models/scenario.schema.json`"


finite = dict(allow_nan=False, allow_infinity=False)
scenario_dicts = st.fixed_dictionaries(
    {
        # names refuse control characters (test_boundary.py); any other character round-trips
        "name": st.text(
            st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=20
        ),
        "capex": st.fixed_dictionaries({"gpu_price_usd": st.floats(1, 1e6, **finite)}),
        "fleet": st.fixed_dictionaries({"gpu_count": st.integers(1, 10_000)}),
        "throughput": st.fixed_dictionaries(
            {
                "tokens_per_s_per_gpu": st.floats(0.1, 1e5, **finite),
                "steps": st.lists(
                    st.fixed_dictionaries(
                        {"month": st.integers(1, 36), "gain": st.floats(-0.5, 2, **finite)}
                    ),
                    max_size=3,
                ).map(lambda s: sorted(s, key=lambda x: x["month"])),
            }
        ),
        "depreciation": st.fixed_dictionaries({"life_years": st.floats(3, 8, **finite)}),
        "market": st.fixed_dictionaries({"price_usd_per_mtok": st.floats(0, 50, **finite)}),
    }
)


@settings(max_examples=60, deadline=None)
@given(scenario_dicts)
def test_toml_round_trip_property(data):
    scenario = Scenario.model_validate(data)
    assert loads(dumps(scenario)) == scenario


@settings(max_examples=40, deadline=None)
@given(scenario_dicts, st.sampled_from([None, "none", "NONE ", 1.25]))
def test_a_covenant_turned_off_stays_off_through_toml(data, floor):
    """The DSCR covenant is on by default (1.20x): "none" turns it off, and a scenario without
    it is written with "none" (TOML has no null), so loading it does not turn it back on."""
    scenario = Scenario.model_validate(
        {**data, "financing": {"covenants": {"dscr_floor": floor}}}
    )
    expected = 1.25 if floor == 1.25 else None
    assert scenario.financing.covenants.dscr_floor == expected
    text = dumps(scenario)
    assert ('dscr_floor = "none"' in text) == (expected is None)
    assert loads(text) == scenario


def test_data_not_yet_valid_keeps_a_covenant_turned_off():
    """The app saves and downloads what the user entered, valid or not (econ.ui.state.toml_text):
    a DSCR floor cleared there is written "none", a value still wrong is kept as entered."""
    from econ.scenario import toml_ready

    data = {
        **BASE,
        "capex": {"gpu_price_usd": -5.0},
        "financing": {"covenants": {"dscr_floor": None, "llcr_floor": None}},
    }
    ready = toml_ready(data)
    assert ready["financing"]["covenants"] == {"dscr_floor": "none"}
    assert ready["capex"] == {"gpu_price_usd": -5.0}
    fixed = loads(tomli_w.dumps({**ready, "capex": {"gpu_price_usd": 30000.0}}))
    assert fixed.financing.covenants.dscr_floor is None


def test_none_turns_off_any_optional_number_and_only_that():
    scenario = validate_dict(with_change("financing.covenants.llcr_floor", "none"))
    assert scenario.financing.covenants.llcr_floor is None
    assert 'llcr_floor' not in dumps(scenario)  # off by default: nothing to write
    with pytest.raises(ScenarioError) as info:
        validate_dict(with_change("financing.covenants.dscr_floor", "off"), file="s.toml")
    assert str(info.value) == (
        "s.toml: financing.covenants.dscr_floor = 'off': expected a number, or \"none\" to turn "
        "it off"
    )
    with pytest.raises(ScenarioError, match="'none': text, not a number; expected a number"):
        validate_dict(with_change("financing.tax_rate", "none"), file="s.toml")  # never off


def test_racks_set_the_gpu_count():
    scenario = validate_dict(apply_overrides(BASE, {"fleet.racks": 3, "fleet.gpus_per_rack": 72}))
    assert scenario.fleet.gpu_count == 216
    assert loads(dumps(scenario)) == scenario
    with pytest.raises(
        ScenarioError, match=r"fleet: gpu_count is 100 but racks x gpus_per_rack is 3 x 72 = 216"
    ):
        validate_dict(
            apply_overrides(BASE, {"fleet.racks": 3, "fleet.gpu_count": 100}), file="s.toml"
        )


def _shipped(name: str) -> dict:
    import tomllib

    return tomllib.loads((ROOT / "models" / "scenarios" / f"{name}.toml").read_text())


@pytest.mark.parametrize(
    ("name", "changes", "expected"),
    [
        (  # found by review: `econ validate` passed it and `econ project` named no field
            "deepseek-r1-gb200-nvl72",
            {"depreciation": {"in_service_month": 100}},
            "depreciation.in_service_month is 100, after the GPUs retire (the horizon, month 72, "
            "72 months after their purchase); expected at most 72",
        ),
        (
            "h200-fleet-gb300-refresh",
            {"depreciation": {"in_service_month": 19}},
            "depreciation.in_service_month is 19, after the GPUs retire (fleet.retire_month, "
            "month 18, 18 months after their purchase); expected at most 18",
        ),
        (  # found by review: refused only while projecting, naming the scenario, not the file
            "llama2-70b-h200",
            {"fleet": {"service_start_month": 12}},
            "debt sizing (financing.size_to_min_dscr, financing.max_ltv or financing.repayment "
            "= 'sculpted' or 'balance_schedule') is not available with a construction period",
        ),
    ],
)
def test_what_the_engine_would_refuse_is_refused_by_validation_naming_the_file(
    name, changes, expected
):
    data = _shipped(name)
    for section, values in changes.items():
        data[section] = {**data[section], **values}
    with pytest.raises(ScenarioError) as info:
        validate_dict(data, file=f"{name}.toml")
    assert str(info.value).startswith(f"{name}.toml: ") and expected in str(info.value)


def test_the_last_month_of_service_may_start_depreciation():
    data = _shipped("deepseek-r1-gb200-nvl72")
    data["depreciation"] = {**data["depreciation"], "in_service_month": 72}
    assert validate_dict(data).depreciation.in_service_month == 72


@pytest.mark.parametrize(
    "overrides, message",
    [  # a single string was read character by character; pandas objects have no truth value
        ("utilization.share=0.8", "overrides is the single string 'utilization.share=0.8'"),
        ("series", "overrides is a pandas Series; expected a mapping.*series.to_dict"),
        ("frame", "overrides is a pandas DataFrame; expected a mapping.*table=frame"),
        ([0.8], "overrides item 0 is float 0.8; expected a mapping"),
    ],
)
def test_load_scenario_names_overrides_of_the_wrong_kind(overrides, message):
    import pandas as pd

    from econ.errors import InputError

    if overrides == "series":
        overrides = pd.Series({"utilization.share": 0.8})
    elif overrides == "frame":
        overrides = pd.DataFrame({"utilization.share": [0.8]})
    with pytest.raises(InputError, match=message):
        load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml", overrides)


def test_a_refused_save_names_the_python_argument(tmp_path: Path):
    target = tmp_path / "s.toml"
    target.write_text("keep me")
    with pytest.raises(
        WriteError, match=r"use --force to overwrite \(overwrite=True from Python\)"
    ):
        save_scenario(validate_dict(BASE), target)


SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


@pytest.mark.parametrize(
    "given, dotted",
    [  # a table for a section replaced it whole: debt_share 0.7 -> 0.0, NPV 6,042 -> -69,318
        ({"financing": {"discount_rate_annual": 0.08}}, {"financing.discount_rate_annual": 0.08}),
        (["financing={discount_rate_annual=0.08}"], ["financing.discount_rate_annual=0.08"]),
        ({"financing.covenants": {"test_months": 6}}, {"financing.covenants.test_months": 6}),
        (
            {"financing": {"covenants": {"test_months": 6}, "debt_rate_annual": 0.1}},
            {"financing.covenants.test_months": 6, "financing.debt_rate_annual": 0.1},
        ),
        (["financing.covenants={test_months=6}"], ["financing.covenants.test_months=6"]),
    ],
)
def test_a_table_for_a_section_merges_into_it_as_dotted_paths_do(given, dotted):
    seed = load_scenario(SEED)
    merged = load_scenario(SEED, given)
    assert merged == load_scenario(SEED, dotted)
    assert merged.financing.debt_share == seed.financing.debt_share == 0.7
    assert merged.financing.covenants.dscr_floor == seed.financing.covenants.dscr_floor


def test_a_table_for_a_section_checks_each_field_and_a_table_field_is_replaced():
    with pytest.raises(
        ScenarioError,
        match=r"financing\.discount_rate: no field 'discount_rate' in financing; expected one of",
    ):
        load_scenario(SEED, {"financing": {"discount_rate": 0.08}})
    with pytest.raises(ScenarioError, match=r"financing\.discount_rate_annual = 8"):
        load_scenario(SEED, ["financing={discount_rate_annual=8}"])
    # a field the scenario takes from another input is refused inside a table too
    stack = SEED.with_name("deepseek-r1-gb200-nvl72-capital-stack.toml")
    with pytest.raises(ScenarioError, match=r"financing\.debt_rate_annual = 0\.1: .*tranches"):
        load_scenario(stack, {"financing": {"debt_rate_annual": 0.1}})
    # lists and tables that are fields are set whole, as before
    stepped = load_scenario(SEED, {"throughput.steps": [{"month": 5, "gain": 0.1}]})
    assert [s.gain for s in stepped.throughput.steps] == [0.1]
    table = load_scenario(SEED, {"sources": {"utilization.share": "mine"}})
    assert table.sources == {"utilization.share": "mine"}


def test_an_override_replaces_the_source_of_the_value_it_replaces():
    seed = load_scenario(SEED)
    old = seed.sources["market.price_usd_per_mtok"]
    assert old.startswith("derived: ")
    cheap = load_scenario(SEED, {"market.price_usd_per_mtok": 0.2})
    assert cheap.sources["market.price_usd_per_mtok"] == f"overridden (was: 0.3261; source: {old})"
    assert load_scenario(SEED, ["market.price_usd_per_mtok=0.2"]).sources == cheap.sources
    # other sources stay; an override to the file's own value cites nothing
    assert {k: v for k, v in cheap.sources.items() if k != "market.price_usd_per_mtok"} == {
        k: v for k, v in seed.sources.items() if k != "market.price_usd_per_mtok"
    }
    assert load_scenario(SEED, {"market.price_usd_per_mtok": 0.3261}).sources == seed.sources
    # a new name is cited as any field is: a renamed scenario says what it was (the memo and the
    # workbook showed "no source" beside the new name), and so is a new description
    renamed = load_scenario(SEED, {"name": "x"})
    assert renamed.sources == {**seed.sources, "name": f"overridden (was: {seed.name})"}
    described = load_scenario(SEED, {"description": "mine"})
    assert described.sources["description"] == f"overridden (was: {seed.description[:77]}...)"
    # a field the file left to its default; a source given with the override is kept
    grown = load_scenario(SEED, {"financing.covenants": {"test_months": 6}})
    assert grown.sources["financing.covenants.test_months"].startswith(
        "overridden (was: not set"
    )
    mine = load_scenario(
        SEED, {"market.price_usd_per_mtok": 0.2, "sources.market.price_usd_per_mtok": "quote"}
    )
    assert mine.sources["market.price_usd_per_mtok"] == "quote"


# --- errors in a vintage, a tranche or a date, worded as the file's (an outside review) -------


def _refused(data: dict) -> str:
    with pytest.raises(ScenarioError) as info:
        validate_dict(data, file="s.toml")
    return str(info.value)


def test_a_vintage_field_is_named_with_its_value_as_a_top_level_one_is():
    """It quoted the vintage's whole merged table (119 characters of dict) and pydantic's
    "Extra inputs are not permitted" without the valid names."""
    data = _shipped("h200-fleet-gb300-refresh")
    data["vintages"][0]["fleet"]["gpu_count"] = "720"
    assert _refused(data) == (
        "s.toml: vintages[0] (gb300): fleet.gpu_count = '720': a number written as text; "
        "expected the number without quotes"
    )
    data = _shipped("h200-fleet-gb300-refresh")
    data["vintages"][0]["power"]["kw_per_gpux"] = 1.8
    said = _refused(data)
    assert said.startswith(
        "s.toml: vintages[0] (gb300): power.kw_per_gpux = 1.8: unknown field; expected one of: "
        "kw_per_gpu, "
    ), said


def test_a_tranche_field_is_named_without_pydantic_s_union_tag():
    """financing.tranches[1].senior_notes.coupon_annual: Field required, then "check the
    spelling" without the tranche's fields."""
    data = _shipped("deepseek-r1-gb200-nvl72-capital-stack")
    notes = data["financing"]["tranches"][1]
    assert notes["type"] == "senior_notes"
    notes["copuon_annual"] = notes.pop("coupon_annual")
    lines = _refused(data).split("\n  ")
    assert lines[0] == (
        "s.toml: financing.tranches[1].coupon_annual: missing; expected this field, which has no "
        "default"
    )
    assert lines[1].startswith(
        "financing.tranches[1].copuon_annual = 0.0925: unknown field; expected one of: name, "
    ) and "coupon_annual" in lines[1]


def test_a_date_with_a_time_and_an_array_of_tables_are_said_as_toml_writes_them():
    import datetime as dt

    data = _shipped("llama2-70b-h200")
    data["start_date"] = dt.datetime(2025, 1, 1, 10, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    assert _refused(data) == (
        "s.toml: start_date = 2025-01-01T10:00:00+05:00: a date with a time of day; expected a "
        "date alone (YYYY-MM-DD)"
    )
    data = _shipped("deepseek-r1-gb200-nvl72-capital-stack")
    data["financing"]["covenants"] = [data["financing"]["covenants"]]
    assert _refused(data) == (
        "s.toml: financing.covenants: an array of tables ([[financing.covenants]]); expected one "
        "table ([financing.covenants])"
    )


def test_a_key_or_table_given_twice_is_named():
    """tomllib says "Cannot overwrite a value (at line 11, column 16)", naming no key."""
    text = (ROOT / "models" / "scenarios" / "llama2-70b-h200.toml").read_text()
    with pytest.raises(ScenarioError) as info:
        loads(text.replace("[fleet]\n", "[fleet]\ngpu_count = 64\n", 1))
    assert str(info.value).endswith(
        "; gpu_count is set twice: expected each key once in its table"
    )
    with pytest.raises(ScenarioError) as info:
        loads(text + "\n[fleet]\ngpu_count = 8\n")
    assert str(info.value).endswith(
        "; a table given twice: expected each [table] once, its keys together"
    )
