"""A batch row is the scenario with that override, for every numeric field.

Sweeps, Monte Carlo and sensitivity runs vary columns of a compiled batch
(`ScenarioBatch.repeat`) instead of validating a scenario per row. Each row must still be the
scenario file with the field set as `--set` sets it: for every numeric field of the ready-made
scenarios, the base value and 10% either side are projected in one batch and each row against the
scenario with the override, projected alone. This found a DSCR covenant tested (and a loan sized)
on the chunk's longest window, and a column written over every vintage of the refresh scenario.
"""

from __future__ import annotations

import numpy as np
import pytest

from econ import ScenarioBatch, load_scenario, project
from econ.batch import field_kinds
from econ.errors import InputError
from econ.scenario import ScenarioError, apply_overrides, scenario_to_dict, validate_dict
from tests.conftest import ROOT

SCENARIOS = (
    "deepseek-r1-gb200-nvl72",
    "deepseek-r1-gb200-nvl72-capital-stack",
    "h200-fleet-gb300-refresh",
)
COMPARED = (
    "npv_usd",
    "irr_equity_annual",
    "debt_usd",
    "covenant_breach_months",
    "breakeven_price_usd_per_mtok",
    "lcot_usd_per_mtok",
    "dscr_headroom",
)


def _values(base: float, kind: str) -> list[float]:
    values = [base, base * 0.9 if base else 0.1, base * 1.1 if base else 0.2]
    return [float(round(v)) for v in values] if kind == "int" else values


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_numeric_column_gives_each_row_what_the_override_gives(name):
    scenario = load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")
    data = scenario_to_dict(scenario)
    columns = ScenarioBatch.from_scenarios(scenario).columns
    compared = 0
    for path, (kind, _) in field_kinds().items():
        base = columns[path][0]
        if kind == "choice" or np.isnan(base) or path == "schema_version":
            continue
        values = _values(float(base), kind)
        try:
            together = project(
                ScenarioBatch.repeat(scenario, len(values), {path: np.array(values)}),
                monthly=False,
            ).metrics
        except InputError:  # a column a batch refuses to vary (its message says why)
            continue
        for row, value in enumerate(values):
            try:
                alone = validate_dict(
                    apply_overrides(data, {path: int(value) if kind == "int" else value})
                )
            except ScenarioError:  # outside the field's bounds: a sweep refuses it too
                continue
            expected = project(alone, monthly=False).metrics
            for key in COMPARED:
                got, want = together[key][row], expected[key][0]
                assert got == pytest.approx(want, rel=1e-9, abs=1e-6, nan_ok=True), (
                    path,
                    value,
                    key,
                )
            compared += 1
    assert compared > 100  # the fields were compared, not skipped


MEASURED = {"throughput.measured.catalog_id": "v6.0-6f6e7f09"}
"""The seed with its throughput read from the MLPerf catalog row it cites."""


@pytest.mark.parametrize(
    "name, overrides, path, source",
    [
        ("deepseek-r1-gb200-nvl72", MEASURED, "throughput.tokens_per_s_per_gpu", "measured"),
        ("deepseek-r1-gb200-nvl72-capital-stack", {}, "financing.debt_rate_annual", "tranches"),
    ],
)
def test_a_field_another_input_replaces_is_refused_not_ignored(name, overrides, path, source):
    """A field the scenario takes from another input: `--set` of it changed nothing (the
    measured point replaced it) while a sweep of it used it, so the two disagreed (NPV -163,291
    against -2,172,206 at 3,000 tokens/s). Both now refuse it, and the tornado leaves it out."""
    from econ.memo.build import tornado_paths

    file = ROOT / "models" / "scenarios" / f"{name}.toml"
    scenario = load_scenario(file, overrides)
    assert path in scenario.set_elsewhere()
    with pytest.raises(
        ScenarioError, match=f"not used: this scenario takes {path} from .*{source}"
    ):
        load_scenario(file, {**overrides, path: 0.05 if "rate" in path else 3000.0})
    with pytest.raises(InputError, match=f"{path} cannot be varied"):
        ScenarioBatch.repeat(scenario, 2, {path: np.array([0.05, 0.2])})
    assert path not in tornado_paths(scenario)
    plain = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    assert plain.set_elsewhere() == {}


@pytest.mark.parametrize(
    "columns, message",
    [
        (  # numpy's "operands could not be broadcast together with shapes (2,) (3,)"
            {"utilization.share": np.array([0.3, 0.4])},
            r"column utilization.share has 2 values; expected 3 \(one per scenario\) or a single "
            "value for all",
        ),
        (
            {"utilization.share": np.zeros((3, 2))},
            r"column utilization.share has an array of shape \(3, 2\); expected 3",
        ),
        (  # a bare KeyError
            {"utilization.shar": np.array([0.3, 0.4, 0.5])},
            "column 'utilization.shar' is not a numeric scenario field; did you mean "
            "utilization.share?",
        ),
        ({"nothing.like.it": 1.0}, "expected the dotted path of one, e.g. utilization.share"),
    ],
)
def test_repeat_names_a_column_of_the_wrong_length_or_path(columns, message):
    seed = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    with pytest.raises(InputError, match=message):
        ScenarioBatch.repeat(seed, 3, columns)
    # one value for all, or one per scenario
    for share in (0.5, np.array([0.5]), np.array([0.4, 0.5, 0.6])):
        batch = ScenarioBatch.repeat(seed, 3, {"utilization.share": share})
        assert batch.columns["utilization.share"].shape == (3,)
