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


SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


@pytest.mark.parametrize(
    "columns, message",
    [
        (  # a rate in percent: projected an NPV of -2.9M USD without a word
            {"financing.discount_rate_annual": [0.1, 12.0, 12.0]},
            r"row 1: financing.discount_rate_annual = 12: expected a number >= -0.5 and <= 1 "
            r"\(2 of 3 rows\)",
        ),
        ({"financing.tax_rate": 2.0}, r"row 0: financing.tax_rate = 2: expected a number >= 0"),
        ({"fleet.gpu_count": [72, 72.5, 72]}, "row 1: fleet.gpu_count = 72.5: expected a whole"),
        ({"power.pue": 0.5}, "row 0: power.pue = 0.5: expected a number >= 1 and <= 3"),
        (  # numbers as text
            {"utilization.share": ["0.5"] * 3},
            "row 0: utilization.share = '0.5': expected a number >= 0 and <= 1, not text",
        ),
        ({"utilization.share": [0.5, None, 0.6]}, "row 1: utilization.share = empty"),
        (  # "invalid literal for int() with base 10: 'effective'" for a correct name, and
            # a wrong one
            {"financing.debt_rate_quote": ["nominal", "daily", "nominal"]},
            "row 1: financing.debt_rate_quote = 'daily': expected one of: nominal, effective",
        ),
        ({"financing.debt_rate_quote": [0, 1, 2]}, "row 2: financing.debt_rate_quote = 2"),
    ],
)
def test_repeat_checks_replaced_columns_as_a_scenario_file_does(columns, message):
    seed = load_scenario(SEED_FILE)
    with pytest.raises(InputError, match=message):
        ScenarioBatch.repeat(seed, 3, columns)


def test_repeat_takes_choice_names_and_a_dataframe_and_checks_n():
    import pandas as pd

    seed = load_scenario(SEED_FILE)
    batch = ScenarioBatch.repeat(seed, 2, {"financing.debt_rate_quote": ["effective", "nominal"]})
    assert batch["financing.debt_rate_quote"].tolist() == [1, 0]
    frame = pd.DataFrame({"utilization.share": [0.6, 0.7], "fleet.gpu_count": [72, 144]})
    batch = ScenarioBatch.repeat(seed, 2, frame)  # "truth value of a DataFrame is ambiguous"
    assert batch["fleet.gpu_count"].tolist() == [72.0, 144.0]
    with pytest.raises(InputError, match=r"columns is a Series; expected a mapping"):
        ScenarioBatch.repeat(seed, 2, pd.Series({"utilization.share": 0.6}))
    for n in (-1, 2.0, True):  # "negative dimensions are not allowed"
        with pytest.raises(InputError, match=rf"n = {n!r}: expected the number of scenarios"):
            ScenarioBatch.repeat(seed, n)
    # "zero-size array to reduction operation maximum" from the engine, once projected
    none = "a batch needs at least one scenario, got none"
    with pytest.raises(InputError, match=rf"n = 0: {none}; expected the number of scenarios"):
        ScenarioBatch.repeat(seed, 0)
    with pytest.raises(InputError, match=none):
        project([])
    with pytest.raises(InputError, match=r"scenario is str '.*\.toml'; expected a Scenario"):
        ScenarioBatch.repeat(str(SEED_FILE), 2)


def test_repeat_prices_per_gpu_instead_as_a_sweep_does():
    """Overriding the GPU price of a base priced per system clears the system price, as a sweep
    does; `validate=False` (the analysis jobs, whose inputs are checked) builds the same batch."""
    seed = load_scenario(SEED_FILE)
    assert seed.capex.system_price_usd is not None
    for validate in (True, False):
        batch = ScenarioBatch.repeat(seed, 2, {"capex.gpu_price_usd": 30_000.0}, validate=validate)
        assert np.isnan(batch["capex.system_price_usd"]).all()


@pytest.mark.parametrize(
    "given, message",
    [  # each was an AttributeError: 'str' object has no attribute 'expand', or similar
        ("file", r"got str '.*\.toml'; expected a Scenario, a list of Scenarios or a "),
        ("dict", r"got a dict; expected a Scenario.*econ\.scenario\.validate_dict\(data\)"),
        ("frame", r"got a DataFrame; expected a Scenario.*table=frame"),
        ("list", r"item 1 is str '.*\.toml'; expected a Scenario \(econ\.load_scenario\("),
    ],
)
def test_project_names_an_input_that_is_not_a_scenario(given, message):
    import pandas as pd

    seed = load_scenario(SEED_FILE)
    value = {
        "file": str(SEED_FILE),
        "dict": seed.model_dump(),
        "frame": pd.DataFrame({"utilization.share": [0.8]}),
        "list": [seed, str(SEED_FILE)],
    }[given]
    with pytest.raises(InputError, match=message):
        project(value)


def test_a_batch_refuses_two_scenarios_of_one_name():
    """Names are the keys of a projection's output: two scenarios of one name had their years
    added together in `.annual` and shared the monthly index, silently."""
    seed = load_scenario(SEED_FILE)
    cheap = load_scenario(SEED_FILE, {"market.price_usd_per_mtok": 0.2})
    message = (
        r"scenarios 0 and 2 \(counted from 0\) are both named 'deepseek-r1-gb200-nvl72'; "
        r"names are the keys .* expected distinct names \(set `name`, e\.g\. "
        r"load_scenario\(path, \{'name': 'cheap'"
    )
    other = load_scenario(SEED_FILE, {"name": "other"})
    for make in (ScenarioBatch.from_scenarios, project):
        with pytest.raises(InputError, match=message):
            make([seed, other, cheap])
    with pytest.raises(InputError, match=r"scenarios 0, 1 and 2 \(counted from 0\) are all"):
        project([seed, seed, seed])
    with pytest.raises(InputError, match=r"scenarios 0, 1, .*, 9 \.\.\. and 20 more \(counted"):
        project([seed] * 30)  # a message of a few lines, not thirty positions
    renamed = load_scenario(SEED_FILE, {"market.price_usd_per_mtok": 0.2, "name": "cheap"})
    projection = project([seed, renamed])
    assert projection.monthly.index.is_unique
    year_one = projection.annual.xs(1, level="year")["ebitda_usd"]
    alone = project(seed).annual.xs(1, level="year")["ebitda_usd"].iloc[0]
    assert year_one[seed.name] == pytest.approx(alone)
    assert ScenarioBatch.repeat(seed, 3).names.tolist() == [f"{seed.name}#{i}" for i in range(3)]
