"""econ: GPU inference economics, from tokens per second to cost per token and asset-life value.

Public API (the names below load on first use):

- load_scenario(path, overrides=None) -> Scenario: a TOML scenario file, a ready-made scenario
  by name ("deepseek-r1-gb200-nvl72", as the CLI takes it; econ.catalog.ready_made_scenarios()
  lists them) or `library:NAME[@VERSION]`; overrides by dotted path ({"utilization.share": 0.8})
- save_scenario(scenario, path, overwrite=False): the scenario as a TOML file
- project(scenario | [scenarios] | ScenarioBatch, monthly=True) -> Projection: `.summary` (one
  row per scenario), `.monthly` (by scenario and month), `.annual` / `.yearly("calendar")`,
  `.warnings` (units in the names; keys in docs/glossary.md); it pickles
- Scenario (the validated pydantic model), ScenarioBatch (scenarios as numpy columns:
  ScenarioBatch.repeat(base, n, {path: values}))
- InputError: what every bad input raises, a ValueError whose message names the value and what
  was expected; ScenarioError (a scenario file or override) is one of them

Beside them: econ.scenario.validate_dict(data) (a dict of a scenario's fields -> Scenario, or
ScenarioError), econ.export.write_projection(projection, path) (CSV, Parquet, Excel, JSON),
econ.analysis (sweep, montecarlo, tornado, sobol, morris). docs/architecture.md, "The Python
API", says more.

The names load on first use (PEP 562), so `import econ` and a CLI command that needs none of them
(`econ --help`) do not pay for pandas, the pydantic models and the engine.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_IMPORTED_NS = time.time_ns()
"""When this process imported econ [ns since 1970]: every econ module it runs was read from disk
after this, so a source file modified since may not be the code running
(econ.library.store.engine_version)."""

_EXPORTS = {
    "InputError": "econ.errors",
    "Projection": "econ.engine",
    "project": "econ.engine",
    "ScenarioBatch": "econ.batch",
    "Scenario": "econ.scenario",
    "ScenarioError": "econ.scenario",
    "load_scenario": "econ.scenario",
    "save_scenario": "econ.scenario",
}

__all__ = [
    "InputError",
    "Projection",
    "Scenario",
    "ScenarioBatch",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "project",
    "save_scenario",
]

if TYPE_CHECKING:
    from econ.batch import ScenarioBatch
    from econ.engine import Projection, project
    from econ.errors import InputError
    from econ.scenario import Scenario, ScenarioError, load_scenario, save_scenario


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # once loaded, a plain module attribute
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"econ.{name}") is not None:
        return importlib.import_module(f"econ.{name}")  # `import econ; econ.engine...` as before
    raise AttributeError(f"module 'econ' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
