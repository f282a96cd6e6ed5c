"""Scenario file versions: migrations to the current schema, and exact TOML round trips."""

from __future__ import annotations

import datetime as dt
import typing
from typing import Literal

import annotated_types
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import econ
from econ.provenance import scenario_sha256
from econ.scenario import SCHEMA_VERSION, Scenario, ScenarioError, dumps, loads, validate_dict
from econ.scenario.migrations import (
    FIRST_VERSION,
    MIGRATIONS,
    Migration,
    migrate,
    register_migration,
)
from tests.conftest import SCENARIOS

# --- Migrations ------------------------------------------------------------------------------------


def _v0_to_v1(data: dict) -> dict:
    """A fake version 0: capex.price_per_gpu (USD) became capex.gpu_price_usd, and the
    utilization was a percentage."""
    capex = data.setdefault("capex", {})
    if "price_per_gpu" in capex:
        capex["gpu_price_usd"] = capex.pop("price_per_gpu")
    if "utilization_percent" in data:
        data["utilization"] = {"share": data.pop("utilization_percent") / 100.0}
    return data


@pytest.fixture
def fake_v0(monkeypatch):
    monkeypatch.setitem(MIGRATIONS, 0, Migration(0, "capex.price_per_gpu renamed", _v0_to_v1))


V0 = {
    "schema_version": 0,
    "name": "old",
    "capex": {"price_per_gpu": 25000.0},
    "utilization_percent": 60.0,
}


def test_current_version_is_unchanged():
    data = {"schema_version": SCHEMA_VERSION, "name": "x"}
    assert migrate(data) == data
    assert migrate({"name": "x"}) == {"name": "x"}  # absent: the first versioned format
    assert FIRST_VERSION == 1


def test_fake_migration_from_version_0(fake_v0):
    applied: list[Migration] = []
    migrated = migrate(V0, "old.toml", applied=applied)
    assert migrated == {
        "schema_version": 1,
        "name": "old",
        "capex": {"gpu_price_usd": 25000.0},
        "utilization": {"share": 0.6},
    }
    assert [m.from_version for m in applied] == [0]
    assert V0["capex"] == {"price_per_gpu": 25000.0}  # the input is not changed
    scenario = validate_dict(migrated)
    assert scenario.capex.gpu_price_usd == 25000.0 and scenario.schema_version == SCHEMA_VERSION
    assert migrate(migrated) == migrated  # idempotent
    # Saving writes the current version, which reads back without any migration.
    assert loads(dumps(scenario)) == scenario


def test_chain_of_migrations_with_own_registry():
    registry: dict[int, Migration] = {}

    @register_migration(1, "add b", registry=registry)
    def _one(data):
        return {**data, "b": 1}

    @register_migration(2, "b to c", registry=registry)
    def _two(data):
        data["c"] = data.pop("b") + 1
        return data

    applied: list[Migration] = []
    out = migrate({"a": 0}, target=3, registry=registry, applied=applied)
    assert out == {"a": 0, "c": 2, "schema_version": 3}
    assert [m.description for m in applied] == ["add b", "b to c"]
    with pytest.raises(ValueError, match="already registered"):
        register_migration(1, "again", registry=registry)(_one)


def test_without_fake_migration_version_0_is_refused():
    with pytest.raises(ScenarioError) as info:
        migrate(V0, "old.toml")
    message = str(info.value)
    assert "old.toml" in message and "schema_version = 0" in message
    assert message.endswith("below 1, the first version; expected schema_version 1")


def test_newer_file_is_refused():
    with pytest.raises(ScenarioError, match="newer econ; expected schema_version 1 or older"):
        migrate({"schema_version": SCHEMA_VERSION + 1}, "new.toml")


@pytest.mark.parametrize("version", ["1", 1.0, True, None])
def test_version_must_be_a_whole_number(version):
    with pytest.raises(ScenarioError, match="expected a whole number"):
        migrate({"schema_version": version}, "x.toml")


def test_failing_migration_names_the_step(monkeypatch):
    def broken(data):
        return data["missing"]

    monkeypatch.setitem(MIGRATIONS, 0, Migration(0, "needs a field", broken))
    with pytest.raises(ScenarioError, match=r"migrating to version 1 \(needs a field\) failed"):
        migrate({"schema_version": 0}, "x.toml")


# --- TOML round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_ready_made_scenarios_round_trip(path):
    scenario = econ.load_scenario(path)
    text = dumps(scenario)
    again = loads(text)
    assert again == scenario
    assert dumps(again) == text
    assert scenario_sha256(again) == scenario_sha256(scenario)


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20
)  # any Unicode, control characters, quotes and newlines included


def _bounds(info) -> dict[str, float]:
    out = {}
    for item in info.metadata:
        for attribute in ("gt", "ge", "lt", "le"):
            value = getattr(item, attribute, None)
            if value is not None and isinstance(item, annotated_types.BaseMetadata):
                out[attribute] = float(value)
    return out


def _scalar_strategy(annotation, info):
    """A strategy for a scalar field within its declared bounds, or None for other kinds."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is not None and typing.get_origin(annotation) is not Literal:
        if len(args) == 1:  # Optional[X]
            return _scalar_strategy(args[0], info)
        return None
    if typing.get_origin(annotation) is Literal:
        return st.sampled_from(typing.get_args(annotation))
    bounds = _bounds(info)
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        low = int(bounds.get("ge", bounds.get("gt", -1) + 1))
        high = int(bounds.get("le", bounds.get("lt", low + 121) - 1))
        return st.integers(min_value=low, max_value=min(high, low + 120))
    if annotation is float:
        low = bounds.get("ge", bounds.get("gt", -1e6))
        high = min(bounds.get("le", bounds.get("lt", 1e6)), 1e7)
        return st.floats(
            min_value=low,
            max_value=high,
            exclude_min="gt" in bounds,
            exclude_max="lt" in bounds and high == bounds["lt"],
            allow_nan=False,
            allow_infinity=False,
        )
    if annotation is str:
        return _TEXT
    if annotation is dt.date:
        return st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2100, 12, 31))
    return None


def _section_strategies() -> dict[str, dict[str, st.SearchStrategy]]:
    out: dict[str, dict[str, st.SearchStrategy]] = {}
    for section, info in Scenario.model_fields.items():
        model = info.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        fields = {}
        for name, field_info in model.model_fields.items():
            strategy = _scalar_strategy(field_info.annotation, field_info)
            if strategy is not None:
                fields[name] = strategy
        out[section] = fields
    return out


SECTIONS = _section_strategies()


@st.composite
def scenario_dicts(draw):
    data: dict = {
        "name": draw(_TEXT),
        "description": draw(st.one_of(st.just(""), _TEXT)),
        "start_date": draw(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2100, 1, 1))),
        "horizon_months": draw(st.integers(min_value=24, max_value=120)),
    }
    for section in draw(st.lists(st.sampled_from(sorted(SECTIONS)), max_size=4, unique=True)):
        fields = SECTIONS[section]
        if not fields:
            continue
        names = draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=2, unique=True))
        data[section] = {name: draw(fields[name]) for name in names}
    if draw(st.booleans()):
        months = sorted(draw(st.lists(st.integers(1, 24), max_size=3)))
        data.setdefault("throughput", {})["steps"] = [
            {"month": m, "gain": draw(st.floats(-0.5, 2.0)), "label": draw(_TEXT)} for m in months
        ]
    sourced = [f"{s}.{f}" for s in SECTIONS if isinstance(data.get(s), dict) for f in data[s]]
    if sourced:
        data["sources"] = {path: draw(_TEXT) for path in sourced[:2]}
    return data


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(scenario_dicts())
def test_toml_round_trip_is_exact(data):
    try:
        scenario = validate_dict(data)
    except ScenarioError:
        assume(False)
    text = dumps(scenario)
    again = loads(text)
    assert again == scenario
    assert dumps(again) == text  # text-identical, not only equal
    assert scenario_sha256(again) == scenario_sha256(scenario)


def test_a_migration_failing_on_malformed_old_data_names_the_file_without_a_traceback():
    """Only KeyError, TypeError and ValueError were caught: a migration calling .get on a list
    (`financing = [1]` in an old file) ended in an AttributeError traceback."""
    registry: dict = {}

    @register_migration(1, "rename a field", registry=registry)
    def _rename(data):
        data["financing"].get("discount_rate")
        return data

    with pytest.raises(ScenarioError) as info:
        migrate({"financing": [1]}, "old.toml", target=2, registry=registry)
    assert str(info.value).startswith(
        "old.toml: schema_version = 1: migrating to version 2 (rename a field) failed: "
        "AttributeError("
    )


def test_a_version_below_the_first_says_where_versions_start():
    """With one version it said "expected schema_version from 1 to 1"."""
    with pytest.raises(ScenarioError) as info:
        migrate({"schema_version": -1}, "s.toml")
    assert SCHEMA_VERSION == 1
    assert str(info.value) == (
        "s.toml: schema_version = -1: below 1, the first version; expected schema_version 1"
    )
    with pytest.raises(ScenarioError) as info:  # versions 1 to 3: a range
        migrate({"schema_version": 0}, "s.toml", target=3, registry={1: None, 2: None})
    assert str(info.value).endswith("; expected schema_version from 1 to 3")
