"""Bad input at the command line, as a script meets it.

An empty path argument (an unset variable in a script: `econ project "$SCENARIO"`):
pathlib reads "" as the current folder: a scenario argument was refused as ".: is a directory",
`econ verify ""` as ".: a folder", `econ library import ""` imported the working folder's
*.toml files, and an empty --out of `econ gains` and `econ market import` was taken as no --out
(exit 0, nothing written). Each is now refused by name, exit 3, one line.
"""

from __future__ import annotations

import shutil

import pytest

from econ import load_scenario
from econ.files import ReadError, WriteError, check_targets, read_regular
from econ.library import LibraryError, open_library
from econ.scenario.errors import ScenarioError
from tests.conftest import ROOT, econ_in_process

SEED = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
INDEX = ROOT / "models" / "market" / "rental_index.csv"


def run(capsys, *args: str) -> tuple[int, str, str]:
    done = econ_in_process(capsys, *args)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["project", ""],
        ["validate", ""],
        ["gains", ""],
        ["lease-vs-own", "", "--price", "2"],
        ["export", "", "--json", "x.json"],
    ],
)
def test_an_empty_scenario_argument_is_named_not_read_as_the_folder(
    argv, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 3, err
    assert err == "error: '': an empty path; expected a TOML scenario file\n"
    assert out == ""


def test_load_scenario_refuses_an_empty_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match="^'': an empty path; expected a TOML scenario file"):
        load_scenario("")


def test_library_import_of_an_empty_folder_imports_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copy(SEED, tmp_path / SEED.name)  # what an import of the working folder would save
    url = f"sqlite:///{tmp_path / 'lib.db'}"
    code, out, err = run(capsys, "--library", url, "library", "import", "")
    assert code == 3, err
    assert err.startswith("error: '': an empty path; expected a folder of TOML scenario files")
    assert err.count("\n") == 1
    code, out, err = run(capsys, "--library", url, "library", "list", "--format", "json")
    assert "llama2-70b-h200" not in out


def test_library_export_to_an_empty_folder_is_refused(tmp_path):
    with open_library(f"sqlite:///{tmp_path / 'lib.db'}") as library:
        with pytest.raises(LibraryError, match="^'': an empty path; expected a folder to export"):
            library.export("")


def test_an_empty_gains_out_is_refused_not_printed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "gains", str(SEED), "--step", "5:0.1", "--out", "")
    assert code == 3, err
    assert "error: '': an empty path; expected a file path\n" in err
    assert out == ""


def test_an_empty_market_import_out_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "market", "import", str(INDEX), "--out", "")
    assert code == 3, err
    assert err == "error: '': an empty path; expected a file path\n"
    assert out == ""


def test_check_targets_refuses_an_empty_path():
    with pytest.raises(WriteError, match="^'': an empty path; expected a file path$"):
        check_targets([""])


def test_verify_of_an_empty_path_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "verify", "")
    assert code == 3, err
    assert err == (
        "error: '': an empty path; expected a memo (.html, .pdf) or workbook (.xlsx) file\n"
    )


def test_an_empty_memo_out_is_shown_quoted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "memo", str(SEED), "--out", "")
    assert code == 3, err
    assert err == "error: --out '': expected a file ending in .html or .pdf\n"


@pytest.mark.parametrize("n", ["0", "-5", "9"])
def test_memo_montecarlo_below_ten_draws_is_refused_with_the_real_range(
    n, tmp_path, monkeypatch, capsys
):
    """The option said "at least 1" for 0, and then "10 to 100000" for 1: a user fixing the
    first refusal met the second."""
    monkeypatch.chdir(tmp_path)
    dist = "market.price_decline_annual=uniform(0.1,0.5)"
    code, out, err = run(
        capsys, "memo", str(SEED), "--out", "m.html", "--montecarlo", n, "--dist", dist
    )
    assert code == 3, err
    assert err == f"error: --montecarlo {n}: expected a whole number of draws, 10 to 100000\n"
    assert not (tmp_path / "m.html").exists()


def test_an_empty_input_file_is_named_not_left_blank(tmp_path, monkeypatch, capsys):
    """`econ market import ""` said ": cannot read the rental index file (No such file or
    directory)": the name left blank, as os.stat("") words it."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "market", "import", "")
    assert code == 3, err
    assert err == "error: '': an empty path; expected a rental index file\n"
    with pytest.raises(ReadError, match="^'': an empty path; expected a table$"):
        read_regular("", 100, "a table")


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["market", "list", "--index", ""], "a rental index file"),
        (["market", "resale", "--index", ""], "a resale index file"),
        (["sweep", str(SEED), "--overrides", ""], "a CSV or Parquet override table file"),
        (["throughput", "import", ""], "a benchmark result file"),
        (["throughput", "point", ""], "a benchmark result file"),
    ],
)
def test_an_empty_input_path_is_not_read_as_the_current_folder(
    argv, expected, tmp_path, monkeypatch, capsys
):
    """Each was refused as the folder ".": ".: cannot read the rental index file (Is a
    directory)", ".: a folder; ...", ".: no measurement point (r<N>/point.yaml) found"."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 3, err
    assert err == f"error: '': an empty path; expected {expected}\n"
