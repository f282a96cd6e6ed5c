"""Start-up: a CLI command imports what it uses and no more.

`econ --help` and `econ project` run in a fresh interpreter (a test process has imported
everything already) and report which heavy libraries ended up in sys.modules. Also checked: the
lazy pieces that make this possible (`econ`'s names, the command modules' deferred imports and
choices) behave like the eager ones did.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from econ.cli import main
from econ.commands import LazyChoices, lazy
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
HEAVY = (
    "streamlit",
    "dask",
    "distributed",
    "scipy",
    "matplotlib",
    "sqlalchemy",
    "alembic",
    "openpyxl",
    "xlsxwriter",
)
# econ's own modules that a plain `econ project` of the seed has no use for: the scenario library
# (no --library, no library:NAME), the writers (the table needs none), construction loans and
# impairment tests (the seed has neither), the memo, the rental index (the seed names no series),
# the analysis runner, the workbook, the app.
UNUSED_BY_PROJECT = (
    "econ.library",
    "econ.export",
    "econ.provenance",
    "econ.construction",
    "econ.impairment",
    "econ.memo",
    "econ.rental_index",
    "econ.analysis",
    "econ.workbook",
    "econ.ui",
)
UNUSED_PACKAGES = tuple(f"{name}." for name in UNUSED_BY_PROJECT)

PROBE = """
import contextlib, io, json, sys
from econ.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded_by(*args: str, packages: bool = True) -> tuple[int, set[str]]:
    """Exit code of `econ ARGS` in a fresh interpreter, and the modules it loaded (their
    top-level packages, or with packages=False every module by its full name)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    modules = set(report["modules"])
    return report["code"], {m.split(".")[0] for m in modules} if packages else modules


@pytest.mark.parametrize(
    "args", [("--help",), ("project", str(SEED)), ("project", str(SEED), "--format", "json")]
)
def test_command_imports_no_heavy_library(args):
    code, modules = loaded_by(*args)
    assert code == 0
    assert not modules & set(HEAVY), f"econ {' '.join(args)} imported {modules & set(HEAVY)}"


def test_project_loads_no_command_module_and_no_unused_econ_module():
    code, modules = loaded_by("project", str(SEED), packages=False)
    assert code == 0
    assert not {m for m in modules if m.startswith("econ.commands.")}
    unused = {m for m in modules if m in UNUSED_BY_PROJECT or m.startswith(UNUSED_PACKAGES)}
    assert not unused, f"econ project imported {unused}"


def test_help_lists_the_feature_commands_too(capsys):
    from econ import commands

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("project", "montecarlo", "export", "memo", "library"))
    assert "econ.commands.batch" in sys.modules and commands.__name__ == "econ.commands"


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["project", "a.toml"], "project"),
        (["--library", "sqlite:///x.db", "project", "a.toml"], "project"),
        (["--lib", "project", "sweep", "a.toml"], "sweep"),  # argparse's abbreviation
        (["--library=sqlite:///x.db", "validate", "a.toml"], "validate"),
        (["montecarlo", "a.toml"], "montecarlo"),
        (["--help", "project"], None),  # the top-level help lists every command
        (["--version"], None),
        ([], None),
    ],
)
def test_command_of_finds_the_command_argparse_will_run(argv, command):
    from econ.cli import _command_of

    assert _command_of(argv) == command


def test_a_feature_command_after_a_built_in_name_as_option_value_still_runs(capsys):
    # `--library project`: "project" is the option's value, the command is `hardware list`.
    assert main(["--library", "project", "hardware", "list"]) == 0
    assert "gb200-nvl72" in capsys.readouterr().out


def test_unknown_command_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    assert "'montecarlo'" in capsys.readouterr().err


@pytest.mark.parametrize("args", [(), ("--format", "json")])
def test_project_table_and_json_load_no_pandas(args):
    # The engine is numpy arrays; pandas loads for the frames (Projection.summary, .monthly, the
    # per-vintage table) and the table writers (CSV, Parquet), not for the table or the JSON.
    code, modules = loaded_by("project", str(SEED), *args)
    assert code == 0 and "pandas" not in modules


def test_project_csv_still_gets_pandas():
    code, modules = loaded_by("project", str(SEED), "--format", "csv")
    assert code == 0 and "pandas" in modules


def test_a_projection_with_vintages_loads_pandas_for_its_vintage_table():
    # The lazy import is reached: the refresh scenario's per-vintage figures are a DataFrame.
    fleet = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
    code, modules = loaded_by("project", str(fleet))
    assert code == 0 and "pandas" in modules


def test_help_does_not_load_the_engine():
    code, modules = loaded_by("--help")
    assert code == 0
    assert "pandas" not in modules and "pydantic_core" not in modules


@pytest.mark.parametrize(
    ("dist", "loaded"),
    [
        ("utilization.share=uniform(0.5,0.9)", False),  # inverse CDFs in closed form
        ("market.price_decline_annual=triangular(0.1,0.3,0.6)", False),
        ("utilization.share=pert(0.5,0.7,0.9)", True),  # the inverse incomplete beta function
        ("utilization.share=normal(0.7,0.05,low=0.5,high=0.9)", True),  # ndtr and ndtri
    ],
)
def test_monte_carlo_loads_scipy_for_the_distributions_that_need_it(dist, loaded):
    # Also the probe's own check: it sees a heavy import, or the tests above prove nothing.
    code, modules = loaded_by("montecarlo", str(SEED), "--dist", dist, "-n", "8")
    assert code == 0
    assert ("scipy" in modules) is loaded


def test_a_sweep_loads_no_scipy():
    code, modules = loaded_by("sweep", str(SEED), "--grid", "depreciation.life_years=4,5,6")
    assert code == 0 and "scipy" not in modules


@pytest.mark.parametrize(("sampling", "loaded"), [("random", False), ("sobol", True)])
def test_monte_carlo_loads_scipy_stats_for_sobol_points_only(sampling, loaded):
    # scipy.stats takes about half a second to import; random sampling needs only scipy.special.
    code, modules = loaded_by(
        "montecarlo",
        str(SEED),
        "--dist",
        "utilization.share=uniform(0.5,0.9)",
        "-n",
        "8",
        "--sampling",
        sampling,
        packages=False,
    )
    assert code == 0
    assert ("scipy.stats" in modules) is loaded


def test_package_names_load_on_first_use():
    import econ

    assert econ.project is __import__("econ.engine", fromlist=["project"]).project
    assert econ.engine.COMPONENTS  # submodules as attributes, as before
    assert set(econ.__all__) <= set(dir(econ))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        econ.nothing_here  # noqa: B018


def test_lazy_module_imports_on_attribute_access():
    units = lazy("econ.units")
    from econ import units as real

    assert units.MONTHS_PER_YEAR == real.MONTHS_PER_YEAR
    assert "econ.units" in repr(units)
    with pytest.raises(AttributeError):
        units.no_such_name  # noqa: B018


def test_lazy_choices_load_once_and_act_as_a_sequence():
    calls = []

    def load():
        calls.append(1)
        return ("b", "c")

    choices = LazyChoices(load, first=("a",))
    assert not calls  # nothing read when built
    assert "b" in choices and "z" not in choices
    assert list(choices) == ["a", "b", "c"] and len(choices) == 3 and choices[0] == "a"
    assert str(choices) == "a, b, c"
    assert len(calls) == 1


def test_throughput_format_choices_are_checked_and_listed(capsys, monkeypatch):
    from econ.throughput.importers import FORMATS

    monkeypatch.setenv("COLUMNS", "1000")  # help on one line: argparse wraps at hyphens
    with pytest.raises(SystemExit) as exc:
        main(["throughput", "import", "x.json", "--format", "bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'bogus'" in err
    assert all(repr(name) in err for name in ["auto", *FORMATS])
    with pytest.raises(SystemExit):
        main(["throughput", "point", "--help"])
    out = capsys.readouterr().out
    assert "input format: auto, " + ", ".join(FORMATS) in out
    assert "ttft_s_p95, ttft_s_p99" in out  # --limit lists the latency columns


def test_defaults_named_in_help_are_the_library_defaults(capsys, monkeypatch):
    # The parsers state these defaults without importing the modules that own them.
    from econ.analysis.runner import DEFAULT_CHUNK_SIZE
    from econ.throughput.simulator import DEFAULT_POINTS

    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert f"rows per chunk (default {DEFAULT_CHUNK_SIZE:,}," in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["throughput", "simulate", "--help"])
    assert f"concurrency points (default {DEFAULT_POINTS}," in capsys.readouterr().out


def test_summary_rows_are_the_table_rows(capsys):
    from econ import cli
    from econ.engine import COMPONENTS

    keys = [key for key, _, _ in cli.SUMMARY_ROWS]
    assert cli.SUMMARY_ROWS == cli.summary_rows()
    assert [k for k in keys if k.startswith("component:")] == [f"component:{c}" for c in COMPONENTS]
    assert main(["project", str(SEED)]) == 0
    out = capsys.readouterr().out
    assert all(label in out for _, label, _ in cli.SUMMARY_ROWS)
