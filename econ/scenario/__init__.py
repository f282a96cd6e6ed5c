"""Scenario files: pydantic models, TOML I/O, dotted-path overrides and the JSON schema."""

from econ.scenario.gain_models import GainStep
from econ.scenario.io import (
    ScenarioError,
    apply_overrides,
    check_path,
    dumps,
    json_schema,
    load_scenario,
    loads,
    parse_override,
    parse_toml,
    read_toml,
    save_scenario,
    scenario_to_dict,
    toml_ready,
    validate_dict,
)
from econ.scenario.models import SCHEMA_VERSION, Scenario

__all__ = [
    "SCHEMA_VERSION",
    "GainStep",
    "Scenario",
    "ScenarioError",
    "apply_overrides",
    "check_path",
    "dumps",
    "json_schema",
    "load_scenario",
    "loads",
    "parse_override",
    "parse_toml",
    "read_toml",
    "save_scenario",
    "scenario_to_dict",
    "toml_ready",
    "validate_dict",
]
