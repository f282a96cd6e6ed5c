"""econ as a Python library (review 25): projections that pickle, the errors a caller catches,
a scenario from a dict, numpy booleans in overrides, the workbook's scenarios by default, charts
drawn without pyplot, arguments of the wrong type, typing and the docs of the entry points."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import econ
from econ import engine
from econ.batch import ScenarioBatch
from econ.errors import InputError
from econ.export import write_projection
from econ.scenario import scenario_to_dict, validate_dict
from tests.conftest import ROOT, SCENARIOS

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
READY = "deepseek-r1-gb200-nvl72"


def _frames(projection) -> tuple:
    return projection.summary, projection.monthly, projection.annual, projection.warnings


def _same(a, b) -> None:
    for x, y in zip(_frames(a), _frames(b), strict=True):
        assert x == y if isinstance(x, list) else x.equals(y)
    assert a.scenarios == b.scenarios


# --- 1. a Projection pickles, its warnings formatted ------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_ready_made_projection_survives_a_pickle_round_trip(path):
    projection = econ.project(econ.load_scenario(path))
    _same(pickle.loads(pickle.dumps(projection)), projection)


def test_a_projection_pickles_after_its_frames_are_built_and_carries_none_of_them():
    projection = econ.project(econ.load_scenario(SEED))
    fresh = len(pickle.dumps(projection))
    _frames(projection)
    projection.tranches  # noqa: B018 (built and kept)
    assert len(pickle.dumps(projection)) == fresh  # the frames are rebuilt, not carried
    _same(pickle.loads(pickle.dumps(projection)), projection)


def test_a_joined_summary_only_projection_pickles(monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_SCENARIOS", 2)  # 5 scenarios: 3 chunks joined
    base = econ.load_scenario(SEED)
    batch = ScenarioBatch.repeat(base, 5, {"utilization.share": np.linspace(0.2, 0.9, 5)})
    projection = econ.project(batch, monthly=False)
    back = pickle.loads(pickle.dumps(projection))
    assert back.summary.equals(projection.summary)
    assert back.warnings == projection.warnings


def _project_in_worker(path: str):
    """Run in a worker process: module-level, so the pool can pickle it."""
    return econ.project(econ.load_scenario(path))


def test_a_projection_comes_back_from_a_process_pool():
    with ProcessPoolExecutor(1) as pool:
        back = pool.submit(_project_in_worker, str(SEED)).result()
    _same(back, econ.project(econ.load_scenario(SEED)))


# --- 2. the errors a caller catches -----------------------------------------------------------


def test_input_error_is_exported_and_catches_what_project_and_load_raise():
    assert econ.InputError is InputError and "InputError" in econ.__all__
    base = econ.load_scenario(SEED)
    with pytest.raises(econ.InputError, match="both named"):
        econ.project([base, base])
    with pytest.raises(econ.InputError, match="no field 'shar'"):
        econ.load_scenario(SEED, {"utilization.shar": 0.5})


def test_monthly_of_a_summary_only_projection_is_an_input_error_saying_how():
    projection = econ.project(econ.load_scenario(SEED), monthly=False)
    for read in (lambda: projection.monthly, lambda: projection.annual):
        with pytest.raises(econ.InputError, match="monthly=True") as caught:
            read()
        assert isinstance(caught.value, engine.MonthlyNotKeptError)
    with pytest.raises(engine.MonthlyNotKeptError):
        projection.tranches  # noqa: B018
    error = engine.MonthlyNotKeptError(engine.MONTHLY_NOT_KEPT)
    assert str(pickle.loads(pickle.dumps(error))) == str(error)  # (back from a pool too)


# --- 3. a scenario from a dict ----------------------------------------------------------------


def test_validate_dict_gives_the_scenario_or_econs_error():
    base = econ.load_scenario(SEED)
    data = scenario_to_dict(base)
    assert validate_dict(data) == base
    data["utilization"]["share"] = 1.5
    with pytest.raises(econ.InputError, match=r"utilization\.share = 1\.5"):
        econ.scenario.validate_dict(data)


def test_the_advice_for_a_dict_names_a_function_that_raises_econs_error():
    with pytest.raises(InputError) as caught:
        econ.project({"name": "x"})
    assert "econ.scenario.validate_dict(data)" in str(caught.value)


# --- 4. numpy booleans in overrides -----------------------------------------------------------


@pytest.mark.parametrize("value", [np.bool_(True), np.bool_(False), [np.bool_(True)]])
def test_a_numpy_boolean_is_refused_where_a_number_goes_as_a_python_one_is(value):
    word = "false" if value is np.False_ else "true"
    with pytest.raises(econ.ScenarioError, match=f"{word} is a boolean; expected the number"):
        econ.load_scenario(SEED, {"utilization.share": value})


def test_numpy_numbers_and_numpy_booleans_for_switches_still_load():
    assert econ.load_scenario(SEED, {"utilization.share": np.float64(0.5)}).utilization.share == 0.5
    loaded = econ.load_scenario(SEED, {"depreciation.switch_to_straight_line": np.False_})
    assert loaded.depreciation.switch_to_straight_line is False


# --- 5. the workbook's scenarios default to the projection's ----------------------------------


def _formulas(path) -> tuple[list[str], int]:
    """A workbook's sheets and the live formulas of its Monthly sheet."""
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    cells = (c.value for row in book["Monthly"].iter_rows() for c in row)
    return book.sheetnames, sum(isinstance(v, str) and v.startswith("=") for v in cells)


def test_write_projection_takes_the_projections_scenarios_by_default(tmp_path):
    base = econ.load_scenario(SEED)
    projection = econ.project([base, econ.load_scenario(SEED, {"name": "other"})])
    (given,) = write_projection(projection, tmp_path / "given.xlsx", scenarios=projection.scenarios)
    (default,) = write_projection(projection, tmp_path / "default.xlsx")
    sheets, formulas = _formulas(given)
    assert formulas > 0 and _formulas(default) == (sheets, formulas)


def test_a_batch_of_columns_still_writes_a_values_only_workbook(tmp_path):
    batch = ScenarioBatch.repeat(econ.load_scenario(SEED), 2, {"utilization.share": [0.5, 0.6]})
    (path,) = write_projection(econ.project(batch), tmp_path / "columns.xlsx")
    assert _formulas(path)[1] == 0


# --- 6. charts without pyplot -----------------------------------------------------------------

REPORT = f"""
import json, sys
import matplotlib
import econ, econ.analysis as ea
from econ.analysis.report import sensitivity_report
base = econ.load_scenario({str(SEED)!r})
result = ea.tornado(base, {{"utilization.share": (0.5, 0.9)}})
md, png = sensitivity_report(result, sys.argv[1])
print(json.dumps([matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules,
                  open(png, "rb").read(8).hex()]))
"""


def test_a_report_leaves_the_backend_as_it_was_and_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    env = {**os.environ, "MPLBACKEND": "svg", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", REPORT, str(tmp_path / "t")],
        capture_output=True, text=True, cwd=ROOT, env=env, check=True,
    )  # fmt: skip
    backend, pyplot, head = json.loads(done.stdout.strip().splitlines()[-1])
    assert backend == "svg" and not pyplot
    assert head == b"\x89PNG\r\n\x1a\n".hex()


# --- 7. arguments of the wrong type -----------------------------------------------------------


@pytest.mark.parametrize("monthly", ["no", 0, 1, None])
def test_project_refuses_a_monthly_that_is_not_a_bool(monthly):
    with pytest.raises(econ.InputError, match=f"monthly = {monthly!r}: expected True"):
        econ.project(econ.load_scenario(SEED), monthly=monthly)


def test_import_files_refuses_one_path_given_alone(tmp_path):
    from econ.throughput.importers import import_files

    for path in ("tp/x.jsonl", tmp_path / "x.jsonl"):
        with pytest.raises(econ.InputError, match="expected a list of paths"):
            import_files(path)


# --- 8. typing, docs, a ready-made scenario by name -------------------------------------------


def test_the_package_ships_its_py_typed_marker():
    assert (ROOT / "econ" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["econ"]


def test_project_says_what_its_frames_hold_and_where_the_keys_are_defined():
    doc = econ.project.__doc__
    for said in (".summary", ".monthly", ".annual", "[USD]", "docs/glossary.md"):
        assert said in doc


def test_the_module_docstring_lists_every_public_name():
    for name in set(econ.__all__) - {"__version__"}:
        assert name in econ.__doc__


def test_load_scenario_reads_a_ready_made_scenario_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{READY}.toml").write_text(  # NAME.toml here does not win, as in the CLI
        SEED.read_text(encoding="utf-8").replace(f'name = "{READY}"', 'name = "mine"', 1),
        encoding="utf-8",
    )
    assert econ.load_scenario(READY) == econ.load_scenario(SEED)
    assert econ.load_scenario(READY, {"utilization.share": 0.5}).utilization.share == 0.5


def test_a_file_of_the_exact_name_wins_over_the_ready_made_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / READY).write_text(
        SEED.read_text(encoding="utf-8").replace(f'name = "{READY}"', 'name = "mine"', 1),
        encoding="utf-8",
    )
    assert econ.load_scenario(READY).name == "mine"
