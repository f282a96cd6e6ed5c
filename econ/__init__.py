"""econ: GPU inference economics, from tokens per second to cost per token and asset-life value.

Public API (re-exports only):

- load_scenario(path, overrides=None) -> Scenario
- project(scenario | [scenarios] | ScenarioBatch) -> Projection (.summary, .monthly)
"""

__version__ = "0.1.0"

from econ.batch import ScenarioBatch  # noqa: E402
from econ.engine import Projection, project  # noqa: E402
from econ.scenario import Scenario, ScenarioError, load_scenario, save_scenario  # noqa: E402

__all__ = [
    "Projection",
    "Scenario",
    "ScenarioBatch",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "project",
    "save_scenario",
]
