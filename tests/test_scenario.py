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
    read_toml,
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
        ("capex.gpu_price_usd", -5.0, "-5 is not above 0; expected a number above 0 [USD/GPU]"),
        ("depreciation.life_years", 0, "at least one month (1/12 year: 0.0833333333333333 to"),
        ("depreciation.life_years", 0, "16 digits, or 0.0834 or more)"),
        ("depreciation.life_years", 1e-9, "at least one month"),
        ("depreciation.change_life_years", 0.05, "at least one month"),
        ("depreciation.tax.life_years", -3.0, "at least one month"),
        ("depreciation.life_years", 30.5, "30.5 is above 30; expected a number from 0.0833333 "),
        ("depreciation.life_years", 30.5, "to 30 [years]"),
        ("utilization.share", 1.2, "1.2 is above 1; expected a fraction from 0 to 1 (1 = 100%)"),
        ("power.pue", 0.9, "greater than or equal to 1"),
        ("market.price_usd_per_mtok", -1, "-1 is below 0; expected a number at least 0 [USD/M"),
        ("financing.debt_rate_annual", 1.5, "a yearly rate from 0 to 1 (1 = 100% a year)"),
        ("financing.debt_term_months", 0, "0 is below 1; expected a whole number from 1 to 600"),
        ("fleet.gpu_count", 0, "0 is below 1; expected a whole number from 1 to 100,000,000 "),
        ("fleet.gpu_count", 2.5, "2.5 is not a whole number; expected a whole number from 1 to"),
        ("financing.debt_rate_quote", "monthly", ": expected 'nominal' or 'effective'"),
    ],
)
def test_bad_values_name_field_value_and_expectation(path, value, expected):
    with pytest.raises(ScenarioError) as info:
        validate_dict(with_change(path, value), file="s.toml")
    message = str(info.value)
    assert message.startswith(f"s.toml: {path} = {value!r}")
    assert expected in message


def test_a_name_is_at_most_200_characters_and_a_longer_one_is_quoted_short():
    assert validate_dict({**BASE, "name": "n" * 200}).name == "n" * 200
    with pytest.raises(ScenarioError) as info:
        validate_dict({**BASE, "name": "n" * 33_001}, file="s.toml")
    message = str(info.value)
    assert message.endswith(
        "(33,003 characters): 33,001 characters; expected at most 200 characters"
    )
    assert len(message) < 200


@pytest.mark.parametrize(("name", "said"), [(" ", "1 space"), ("   ", "3 spaces")])
def test_a_name_of_spaces_only_is_refused(name, said):
    """It passed (an empty name did not), and keyed frames, files and library entries that read
    as no name."""
    with pytest.raises(ScenarioError) as info:
        validate_dict({**BASE, "name": name}, file="s.toml")
    assert str(info.value) == (
        f"s.toml: name = {name!r}: {said} and nothing else; expected a name with a character "
        "other than a space"
    )
    assert validate_dict({**BASE, "name": " a "}).name == " a "


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
        match=r"capex.gpu_prise_usd = 2.0: unknown field; did you mean 'gpu_price_usd'\? "
        "expected one of: gpu_price_usd, system_price_usd",
    ):
        validate_dict(data, file="s.toml")


def test_unknown_section():
    with pytest.raises(
        ScenarioError, match=r"capexx: unknown field; did you mean 'capex'\? expected one of: .*op"
    ):
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
    # (load_scenario reads the ready-made scenario of a bare name, as the CLI does:
    # tests/test_api_review25.py; read_toml, which the library's import uses, points to it)
    monkeypatch.chdir(ROOT)
    with pytest.raises(ScenarioError, match="file not found") as err:
        read_toml("deepseek-r1-gb200-nvl72")
    assert str(err.value).endswith(
        "the ready-made scenario of that name is models/scenarios/deepseek-r1-gb200-nvl72.toml"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as err:
        read_toml("deepseek-r1-gb200-nvl72")
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
        ScenarioError,
        match=r"^--set capex.gpu_prise=1 \(over s.toml\): no field 'gpu_prise' in capex; did you "
        r"mean 'gpu_price_usd' or 'gpus_per_system'\? expected one of",
    ):
        load_scenario(path, ["capex.gpu_prise=1"])
    with pytest.raises(
        ScenarioError, match=r"^--set capex.gpu_price_usd=-1 \(over s.toml\): -1 is not above 0;"
    ):
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
        match=r"^overrides\['financing'\] = \{'discount_rate': 0.08\} \(over deepseek-r1-gb200-"
        r"nvl72.toml\): financing\.discount_rate: no field 'discount_rate' in financing; did you "
        r"mean 'discount_rate_annual'\? expected one of",
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
        "s.toml: vintages[0] (gb300): power.kw_per_gpux = 1.8: unknown field; did you mean "
        "'kw_per_gpu'? expected one of: kw_per_gpu, "
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
        "financing.tranches[1].copuon_annual = 0.0925: unknown field; did you mean "
        "'coupon_annual'? expected one of: name, "
    ) and "coupon_annual" in lines[1]


def _bounded_fields(model=Scenario, prefix=""):
    """(dotted path, bound, limit) of every bound a number field reachable by a dotted path
    declares (`field_bounds`, as pydantic reads them)."""
    import typing

    from econ.scenario.models import model_of
    from econ.scenario.section import field_bounds

    for name, info in model.model_fields.items():
        if typing.get_origin(info.annotation) in (tuple, list, dict):
            continue
        section = model_of(info.annotation)
        if section is not None:
            yield from _bounded_fields(section, f"{prefix}{name}.")
        else:
            for bound, limit in field_bounds(model, name).items():
                yield f"{prefix}{name}", bound, limit


@pytest.mark.parametrize(("path", "bound", "limit"), list(_bounded_fields()))
def test_every_bound_of_every_field_is_said_in_econ_s_words(path, bound, limit):
    """A number past a bound was refused in pydantic's words: "utilization.share = 2: Input
    should be less than or equal to 1", without the field's unit or its other bound."""
    from pydantic import ValidationError

    from econ.bounds import number_text, past_bound
    from econ.scenario.io import BOUND_TYPES

    past = {"ge": limit - 1, "gt": limit, "le": limit + 1, "lt": limit}[bound]
    data = with_change(path, past)
    said = _refused(data)
    assert f"{path} = {past!r}: " in said and "Input should" not in said
    with pytest.raises(ValidationError) as raw:
        Scenario.model_validate(data)
    if path != "schema_version" and raw.value.errors()[0]["type"] in BOUND_TYPES:
        # (not a field's own validator, which says what its bound stands for: a PUE below 1)
        words = past_bound(number_text(past), bound, number_text(limit))
        assert f"{path} = {past!r}: {words}; expected " in said


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("utilization.share", 2, "2 is above 1; expected a fraction from 0 to 1 (1 = 100%)"),
        (
            "financing.debt_term_months",
            0,
            "0 is below 1; expected a whole number from 1 to 600 [months]",
        ),
        (
            "market.price_decline_annual",
            1,
            "1 is not below 1; expected a yearly rate from 0 to below 1 (1 = 100% a year)",
        ),
        ("capex.gpu_price_usd", 0, "0 is not above 0; expected a number above 0 [USD/GPU]"),
        (
            "market.price_usd_per_mtok",
            -0.5,
            "-0.5 is below 0; expected a number at least 0 [USD/M tokens]",
        ),
        ("depreciation.factor", 11, "11 is above 10; expected a number above 0 and at most 10"),
        (
            "fleet.gpu_count",
            100_000_001,
            "100,000,001 is above 100,000,000; expected a whole number from 1 to 100,000,000 "
            "[GPUs]",
        ),
        ("utilization.share", 1.0000001, "1.0000001 is above 1; expected a fraction from 0 to 1 "
         "(1 = 100%)"),
    ],
)
def test_a_bound_is_said_with_the_field_s_unit_and_all_its_bounds(path, value, expected):
    assert _refused(with_change(path, value)) == f"s.toml: {path} = {value!r}: {expected}"


def test_a_value_given_by_set_is_named_as_the_command_line_s_and_the_file_s_as_the_file_s(
    tmp_path: Path,
):
    """A value given by --set was blamed on the file: "FILE: utilization.share = 2: ..."."""
    path = tmp_path / "s.toml"
    path.write_text(dumps(validate_dict(BASE)))
    expected = "2 is above 1; expected a fraction from 0 to 1 (1 = 100%)"
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, ["utilization.share=2"])
    assert str(info.value) == f"--set utilization.share=2 (over s.toml): {expected}"
    assert info.value.file == str(path) and info.value.path == "utilization.share"
    with pytest.raises(ScenarioError) as info:  # from Python: as Python spells it
        load_scenario(path, {"utilization.share": 2})
    assert str(info.value) == f"overrides['utilization.share'] = 2 (over s.toml): {expected}"
    with pytest.raises(ScenarioError) as info:  # a table: the field inside it named
        load_scenario(path, ["utilization={share=2, ramp_months=3}"])
    assert str(info.value) == (
        f"--set utilization={{share=2, ramp_months=3}} (over s.toml): utilization.share = 2: "
        f"{expected}"
    )
    # the file's own value is still the file's, beside an override's
    path.write_text(tomli_w.dumps(apply_overrides(BASE, {"fleet.gpu_count": 0})))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, ["utilization.share=2"])
    lines = str(info.value).split("\n  ")
    assert lines[0] == (
        f"{path}: fleet.gpu_count = 0: 0 is below 1; expected a whole number from 1 to "
        "100,000,000 [GPUs]"
    )
    assert lines[1] == f"--set utilization.share=2: {expected}"
    # a schema_version given on the command line, as TOML writes a boolean
    with pytest.raises(ScenarioError) as info:
        load_scenario(SEED, ["schema_version=true"])
    assert str(info.value) == (
        "--set schema_version=true (over deepseek-r1-gb200-nvl72.toml): expected a whole number "
        "such as 1"
    )


def test_a_boolean_is_quoted_as_toml_writes_it():
    """schema_version = true was quoted "schema_version = True", Python's word."""
    said = _refused({**BASE, "schema_version": True})
    assert said == "s.toml: schema_version = true: expected a whole number such as 1"


def test_a_section_refused_whole_names_the_sets_inside_it_not_the_file_s_folder(tmp_path: Path):
    """A review: `--set capex.gpu_price_usd=40000` over the seed (which gives the system price)
    was blamed on the file, by the server's absolute path of the ready-made scenario
    (".../deepseek-r1-gb200-nvl72.toml: capex: give exactly one of ..."). The section's rule refuses
    the section, above the field the override set."""
    over = "(over deepseek-r1-gb200-nvl72.toml)"
    with pytest.raises(ScenarioError) as info:
        load_scenario(SEED, ["capex.gpu_price_usd=40000", "utilization.share=0.5"])
    assert str(info.value) == (
        f"--set capex.gpu_price_usd=40000 {over}: capex: give exactly one of gpu_price_usd and "
        "system_price_usd; both are given (gpu_price_usd=40,000, system_price_usd=3,100,000)"
    )
    assert info.value.path == "capex" and info.value.given.path == "capex.gpu_price_usd"
    with pytest.raises(ScenarioError) as info:  # every override inside the section, in order
        load_scenario(SEED, ["fleet.racks=2", "market.price_usd_per_mtok=1", "fleet.gpu_count=100"])
    assert str(info.value) == (
        f"--set fleet.racks=2, --set fleet.gpu_count=100 {over}: fleet: gpu_count is 100 but "
        "racks x gpus_per_rack is 2 x 72 = 144 GPUs; give one of them, or both consistently"
    )
    with pytest.raises(ScenarioError) as info:  # from Python, as Python spells it
        load_scenario(SEED, {"fleet.racks": 2})
    assert str(info.value).startswith(f"overrides['fleet.racks'] = 2 {over}: fleet: gpu_count")
    # a section the file got wrong itself stays the file's, beside overrides of other sections
    path = tmp_path / "s.toml"
    both = {"gpu_price_usd": 1.0, "system_price_usd": 2.0}
    path.write_text(tomli_w.dumps({**BASE, "capex": both}))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, ["utilization.share=0.5"])
    assert str(info.value).startswith(f"{path}: capex: give exactly one of")
    assert info.value.given is None


def test_exactly_one_of_two_fields_says_neither_or_both_in_words():
    """It said "got gpu_price_usd=None, system_price_usd=None", Python's None."""
    said = _refused({**BASE, "capex": {}})
    assert said == (
        "s.toml: capex: give exactly one of gpu_price_usd and system_price_usd; neither is given"
    )
    said = _refused({**BASE, "capex": {"gpu_price_usd": 40000.0, "system_price_usd": 3.1e6}})
    assert said.endswith(  # one format for both numbers (it wrote 40000 beside 3,100,000)
        "; both are given (gpu_price_usd=40,000, system_price_usd=3,100,000)"
    )
    said = _refused({**BASE, "capex": {"gpu_price_usd": 40000.25, "system_price_usd": 3.1e6}})
    assert said.endswith("(gpu_price_usd=40,000.25, system_price_usd=3,100,000)")  # in full
    data = _shipped("deepseek-r1-gb200-nvl72-capital-stack")
    data["financing"]["tranches"][1].pop("share_of_capex")
    assert _refused(data) == (
        "s.toml: financing.tranches[1]: tranche 'senior_notes': give exactly one of amount_usd "
        "and share_of_capex; neither is given"
    )


def _floating(curve: dict) -> str:
    data = _shipped("deepseek-r1-gb200-nvl72-capital-stack")
    data["financing"]["tranches"][0]["floating"]["curve"] = curve
    return _refused(data)


def test_a_floating_rate_curve_is_named_as_the_file_spells_it():
    """The curve's kind ("table", "stepped") stood in the path as a field would:
    ...floating.curve.table.points[0].rate_annual; an unknown field in it listed no names."""
    where = "s.toml: financing.tranches[0].floating.curve"
    point = {"date": "2026-01-01", "rate_annual": -0.5}
    assert _floating({"kind": "table", "points": [point]}) == (
        f"{where}.points[0].rate_annual = -0.5: -0.5 is below -0.05; expected a yearly rate from "
        "-0.05 to 0.5 (1 = 100% a year)"
    )
    steps = [{"month": 5, "rate_annual": 0.04}, {"month": 3, "rate_annual": 0.03}]
    said = _floating({"kind": "stepped", "steps": steps})
    assert said.startswith(f"{where}.steps = [") and "strictly increasing month order" in said
    assert _floating({"kind": "table", "points": [], "pointz": []}).startswith(
        f"{where}.points"
    )
    said = _floating({"kind": "table", "points": [point | {"rate_annual": 0.04}], "pointz": []})
    assert said == (
        f"{where}.pointz = []: unknown field; did you mean 'points'? expected one of: kind, points"
    )
    assert _floating({"rate_annual": 0.6}).startswith(f"{where}.rate_annual = 0.6: 0.6 is above")
    assert _floating({"kind": "weird"}) == (
        f"{where}: kind is 'weird'; expected one of: 'flat', 'stepped', 'table'"
    )
    data = _shipped("deepseek-r1-gb200-nvl72-capital-stack")
    del data["financing"]["tranches"][1]["type"]
    assert _refused(data) == (
        "s.toml: financing.tranches[1]: no type given; expected one of: 'term_loan', "
        "'delayed_draw_term_loan', 'senior_notes', 'convertible_notes', 'equity'"
    )


@pytest.mark.parametrize(
    ("table", "key", "mean"),
    [
        ("fleet", "gpu_cout", "did you mean 'gpu_count'? expected one of: hardware, gpu_count, "),
        ("utilization", "shar", "did you mean 'share'? expected one of: share, ramp_months, "),
        ("market", "price_usd_per_token", "did you mean 'price_usd_per_mtok'? expected one of: "),
        ("fleet", "colour", "expected one of: hardware, gpu_count, "),
    ],
)
def test_an_unknown_field_names_the_closest_first(table, key, mean):
    """The closest name, where one is clearly close, then the valid names; not every sibling
    of a shared prefix (utilization.shar suggested all three utilization fields)."""
    data = _shipped("deepseek-r1-gb200-nvl72")
    data[table][key] = 1
    assert _refused(data).startswith(f"s.toml: {table}.{key} = 1: unknown field; {mean}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(SEED, [f"{table}.{key}=1"])
    assert str(info.value).startswith(
        f"--set {table}.{key}=1 (over deepseek-r1-gb200-nvl72.toml): no field '{key}' in "
        f"{table}; {mean}"
    )


def test_closest_names_keeps_only_those_clearly_close():
    from econ.text import closest_names

    fields = ["utilization.share", "utilization.ramp_months", "utilization.churn_annual"]
    assert closest_names("utilization.shar", fields) == ["utilization.share"]
    assert closest_names("gpu_prise", ["gpu_price_usd", "gpus_per_system", "payments"]) == [
        "gpu_price_usd",
        "gpus_per_system",
    ]  # difflib rates them 0.73 and 0.67: both a slip away
    assert closest_names("zzz", fields) == []
    assert closest_names("x" * 10_000, ["x"]) == []  # not compared: quadratic in its length


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


def test_is_default_tells_econs_default_from_a_set_value():
    """The memo's Key assumptions marks an input "econ's default" by this rule (one rule for the
    covenant's terms and the other inputs)."""
    from econ.scenario.io import is_default

    assert is_default("financing.covenants.dscr_floor", 1.2)
    assert not is_default("financing.covenants.dscr_floor", 1.3)
    assert is_default("financing.tax_payment", "quarterly")
    assert not is_default("fleet.gpu_count", 144)
    assert not is_default("no_such.field", 1)
