"""Table outputs and safe writes: formula injection in CSV, flat summaries, atomic writes, refusal
to overwrite, interrupted writes, unwritable paths and a full disk, and `econ export`."""

from __future__ import annotations

import csv
import errno
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import econ
from econ import export, files
from econ.cli import main
from econ.export import (
    ExportError,
    csv_text,
    flat_summary,
    write_outputs,
    write_projection,
)
from econ.files import write_files
from econ.text import FORMULA_PREFIXES, WARNING_SEPARATOR, neutralize, restore
from tests.conftest import ROOT, SCENARIOS

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
HOSTILE = ["=cmd|'/c calc'!A1", "+1", "-1", "@SUM(1)", "\tx", "\rx", '=HYPERLINK("http://x")']


@pytest.fixture(scope="module")
def seed():
    scenario = econ.load_scenario(SEED)
    return scenario, econ.project(scenario)


# --- Formula injection -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_neutralize_prefixes_formula_text(text):
    # OWASP "CSV Injection": cells starting with = + - @ tab or CR get a leading apostrophe.
    assert neutralize(text) == "'" + text


@pytest.mark.parametrize("value", ["plain", "", "a=b", " a=1", 1.5, -2, None])
def test_neutralize_leaves_other_values(value):
    assert neutralize(value) == value


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_no_csv_cell_starts_like_a_formula(text):
    frame = pd.DataFrame({"scenario": [text], "value": [1.0]})
    rows = list(csv.reader(io.StringIO(csv_text(frame), newline="")))
    cell = rows[1][0]
    assert not cell.startswith(FORMULA_PREFIXES)
    assert cell in (text, "'" + text)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_in_csv_outputs(tmp_path: Path, name: str):
    if any(ord(c) < 32 for c in name):  # a control character: refused in a name before any write
        with pytest.raises(econ.ScenarioError, match="control character"):
            econ.load_scenario(SEED, {"name": name})
        return
    scenario = econ.load_scenario(SEED, {"name": name, "description": name})
    out = tmp_path / "x.csv"
    write_outputs(econ.project(scenario), {"csv": out}, scenarios=[scenario])
    for path in (out, tmp_path / "x.summary.csv"):
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
        column = rows[0].index("scenario")
        assert {row[column] for row in rows[1:]} == {"'" + name}
        text_cells = [cell for row in rows[1:] for cell in row if cell and not _is_number(cell)]
        assert not any(cell.startswith(FORMULA_PREFIXES) for cell in text_cells)


def test_names_that_differ_stay_apart_once_written(tmp_path: Path):
    """`=1` and `'=1` were one key once neutralized, `'=1`: the monthly file had 146 rows under it
    (found by review). Written apart (`''=1`), each reads back as its own name."""
    scenarios = [econ.load_scenario(SEED, {"name": name}) for name in ("=1", "'=1")]
    out = tmp_path / "x.csv"
    write_outputs(econ.project(scenarios), {"csv": out}, scenarios=scenarios)
    monthly = pd.read_csv(out, keep_default_na=False)
    rows = monthly.groupby("scenario", sort=False).size()
    assert rows.to_dict() == {"'=1": 73, "''=1": 73}
    summary = pd.read_csv(tmp_path / "x.summary.csv", keep_default_na=False)
    assert [restore(name) for name in summary["scenario"]] == ["=1", "'=1"]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- Tables ----------------------------------------------------------------------------------------


def test_flat_summary_spreads_objects_and_joins_lists(seed):
    _, projection = seed
    frame = flat_summary(projection)
    assert list(frame.columns[:3]) == [
        "scenario",
        "lcot_usd_per_mtok",
        "cost_usd_per_mtok_depreciation",
    ]
    parts = [f"cost_usd_per_mtok_{c}" for c in econ.engine.COMPONENTS]
    assert np.isclose(frame[parts].sum(axis=1)[0], frame["lcot_usd_per_mtok"][0], rtol=1e-12)
    assert isinstance(frame["warnings"][0], str)


def test_flat_summary_adapts_to_new_metrics():
    class Stub:
        summary = pd.DataFrame(
            {
                "scenario": ["a", "b"],
                "new_metric_by_kind": [{"x": 1.0, "y": None}, {"x": 2.0, "z": 3.0}],
                "notes": [["one", "two"], []],
                "plain": [1.0, None],
            }
        ).set_index("scenario")

    frame = flat_summary(Stub())
    assert list(frame.columns) == [
        "scenario",
        "new_metric_by_kind_x",
        "new_metric_by_kind_y",
        "new_metric_by_kind_z",
        "notes",
        "plain",
    ]
    assert frame["new_metric_by_kind_z"].tolist() == [None, 3.0]
    assert frame["notes"].tolist() == ["one\ntwo", ""]


def test_the_warnings_cell_splits_back_into_the_warnings(tmp_path: Path):
    """The summary's `warnings` cell joined the warnings with "; ", which many hold: the seed's 7
    warnings split into 13 pieces (found by review). One a line, no warning holding a line
    break, every ready-made scenario's cell in CSV and Parquet splits back into its JSON list."""
    import json

    import pyarrow.parquet as pq

    projection = econ.project([econ.load_scenario(path) for path in SCENARIOS])
    names = ("csv", "parquet", "json")
    write_outputs(projection, {kind: tmp_path / f"a.{kind}" for kind in names})
    records = json.loads((tmp_path / "a.json").read_text())["scenarios"]
    csv_cells = pd.read_csv(tmp_path / "a.summary.csv", keep_default_na=False)["warnings"]
    parquet_cells = pq.read_table(tmp_path / "a.summary.parquet")["warnings"].to_pylist()
    assert sum("; " in w for r in records for w in r["summary"]["warnings"]) > len(records)
    for record, in_csv, in_parquet in zip(records, csv_cells, parquet_cells, strict=True):
        expected = record["summary"]["warnings"]
        assert expected and in_csv == in_parquet == "\n".join(expected)
        assert restore(in_csv).split(WARNING_SEPARATOR) == expected, record["name"]


def test_a_warning_is_one_line_whatever_a_file_holds():
    """A warning quoting a file's text (a curve's caveat) keeps its line breaks as escapes, so
    that the cell splits back into the warnings."""
    from dataclasses import replace

    batch = econ.ScenarioBatch.from_scenarios(econ.load_scenario(SEED))
    quoted = "the curve's hardware is 'gb200\nnvl72\r'; not compared"
    projection = econ.project(replace(batch, row_warnings=((quoted,),)))
    assert "the curve's hardware is 'gb200\\nnvl72\\r'; not compared" in projection.warnings[0]
    cell = flat_summary(projection)["warnings"][0]
    assert cell.split(WARNING_SEPARATOR) == projection.warnings[0]


def test_monthly_csv_has_every_engine_column_and_reads_back_exactly(tmp_path: Path, seed):
    scenario, projection = seed
    out = tmp_path / "m.csv"
    write_projection(projection, out, scenarios=[scenario])
    frame = pd.read_csv(out)
    assert list(frame.columns[:3]) == ["scenario", "month", "date"]
    engine = projection.monthly.reset_index()
    for name in econ.engine.MONTHLY_COLUMNS:
        np.testing.assert_array_equal(frame[name].to_numpy(float), engine[name].to_numpy(float))
    assert list(frame.columns[-4:]) == list(export.STAMP_COLUMNS)
    assert len(frame) == scenario.horizon + 1


def test_json_output_holds_the_summaries(tmp_path: Path, seed):
    scenario, projection = seed
    out = tmp_path / "s.json"
    write_projection(projection, out, scenarios=[scenario])
    import json

    payload = json.loads(out.read_text())
    assert payload["scenarios"] == projection.summary_records()
    assert list(payload) == ["econ_version", "provenance", "created_utc", "scenarios"]


def test_xlsx_path_writes_the_workbook(tmp_path: Path, seed):
    scenario, projection = seed
    out = tmp_path / "w.xlsx"
    assert write_projection(projection, out, scenarios=[scenario]) == [out]
    sheets = pd.ExcelFile(out).sheet_names
    assert sheets == [
        "Summary",
        "Charts",
        "Assumptions",
        "Monthly",
        "Annual",
        "Depreciation",
        "Debt",
        "Debt schedule",
        "Tranches",
        "Tranche summary",
        "Notes",
    ]


def test_unknown_format(tmp_path: Path, seed):
    _, projection = seed
    with pytest.raises(ExportError, match=r"unknown output format '\.txt'; expected one of: .csv"):
        write_projection(projection, tmp_path / "x.txt")
    with pytest.raises(ExportError, match="expected a file name ending in .xlsx"):
        write_outputs(projection, {"xlsx": tmp_path / "x.csv"})


# --- Safe writes -----------------------------------------------------------------------------------


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_existing_file_is_kept_without_overwrite(tmp_path: Path, seed):
    scenario, projection = seed
    out = tmp_path / "x.csv"
    out.write_text("keep me")
    with pytest.raises(ExportError, match=r"x\.csv exists; use --force to overwrite"):
        write_projection(projection, out, scenarios=[scenario])
    assert out.read_text() == "keep me"
    assert _leftovers(tmp_path) == ["x.csv"]  # the summary was not written either
    write_projection(projection, out, overwrite=True, scenarios=[scenario])
    assert out.read_text().startswith("scenario,month,date")


class Interrupted(Exception):
    pass


def _fail_midway(handle, payload):
    handle.write(payload[: len(payload) // 2])
    raise Interrupted


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx", ".json"])
def test_interrupted_write_leaves_nothing(tmp_path: Path, monkeypatch, seed, suffix):
    scenario, projection = seed
    monkeypatch.setattr(files, "_write_payload", _fail_midway)
    with pytest.raises(Interrupted):
        write_projection(projection, tmp_path / f"x{suffix}", scenarios=[scenario])
    assert _leftovers(tmp_path) == []


def test_interrupted_second_file_keeps_the_old_first(tmp_path: Path, monkeypatch):
    first, second = tmp_path / "a.csv", tmp_path / "a.summary.csv"
    first.write_text("old a")
    second.write_text("old summary")
    calls = []

    def fail_on_second(handle, payload):
        calls.append(payload)
        if len(calls) == 2:
            raise KeyboardInterrupt
        handle.write(payload)

    monkeypatch.setattr(files, "_write_payload", fail_on_second)
    with pytest.raises(KeyboardInterrupt):
        write_files({first: b"new a", second: b"new summary"}, overwrite=True)
    assert first.read_text() == "old a" and second.read_text() == "old summary"
    assert _leftovers(tmp_path) == ["a.csv", "a.summary.csv"]


def test_disk_full_is_a_clear_error(tmp_path: Path, monkeypatch, seed):
    scenario, projection = seed

    def full(handle, payload):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_write_payload", full)
    with pytest.raises(ExportError) as info:
        write_projection(projection, tmp_path / "x.xlsx", scenarios=[scenario])
    assert str(info.value) == (
        f"{tmp_path / 'x.xlsx'}: cannot write it: the disk is full (no space left on device); "
        "nothing was written"
    )
    assert _leftovers(tmp_path) == []


def test_unwritable_paths(tmp_path: Path, monkeypatch, seed):
    scenario, projection = seed
    with pytest.raises(ExportError, match="folder .*missing does not exist"):
        write_projection(projection, tmp_path / "missing" / "x.csv")
    (tmp_path / "file").write_text("")
    with pytest.raises(ExportError, match="is not a folder"):
        write_projection(projection, tmp_path / "file" / "x.csv")
    with pytest.raises(ExportError, match="is a folder"):
        (tmp_path / "d.csv").mkdir()
        write_projection(projection, tmp_path / "d.csv")
    # a folder named without a suffix is a folder, not an unknown format '' (found by review)
    folder = tmp_path / "reports"
    folder.mkdir()
    expected = f"{folder}: is a folder; expected a file path ending in .xlsx, such as "
    with pytest.raises(ExportError, match=re.escape(expected + str(folder / "projection.xlsx"))):
        write_outputs(projection, {"xlsx": folder}, scenarios=[scenario])
    with pytest.raises(ExportError, match=re.escape(f"{folder}: is a folder; expected a file")):
        write_projection(projection, folder)
    # a path ending with a separator names a folder, though pathlib drops it (found by review)
    with pytest.raises(ExportError, match=r"x\.csv/: names a folder \(it ends with '/'\)"):
        write_projection(projection, f"{folder}/x.csv/", scenarios=[scenario])
    assert _leftovers(folder) == []

    def denied(*args, **kwargs):  # tests may run as root, where chmod does not deny anything
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    with pytest.raises(ExportError, match="cannot write it: permission denied"):
        write_projection(projection, tmp_path / "x.json", scenarios=[scenario])


def test_a_stale_file_is_removed_only_once_every_target_is_in_place(tmp_path: Path, monkeypatch):
    """`remove`: a file of an earlier output of the name, kept when the write fails, and named
    with what was written when it cannot be removed."""
    target, stale = tmp_path / "a.csv", tmp_path / "a.tranches.csv"
    stale.write_text("earlier")

    def full(handle, payload):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(files, "_write_payload", full)
        with pytest.raises(ExportError, match="the disk is full"):
            write_files({target: b"new"}, overwrite=True, remove=[stale])
    assert stale.read_text() == "earlier" and not target.exists()

    def denied(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    with monkeypatch.context() as patched:
        patched.setattr(files.os, "unlink", denied)
        with pytest.raises(ExportError) as info:
            write_files({target: b"new"}, overwrite=True, remove=[stale])
    assert str(info.value) == (
        f"{stale}: cannot remove it: permission denied; {target} was written, and {stale} is "
        "left from another output of this name: remove it before reading them together"
    )
    assert target.read_text() == "new" and stale.read_text() == "earlier"
    written = write_files({target: b"newer"}, overwrite=True, remove=[stale, target])
    assert written == [target] and written.removed == [stale] and not stale.exists()
    assert target.read_text() == "newer"  # a target named in `remove` too is written, not removed


def test_written_files_are_ordinary_files(tmp_path: Path):
    import os

    umask = os.umask(0o022)
    try:
        write_files({tmp_path / "a.csv": b"x"})
    finally:
        os.umask(umask)
    assert (tmp_path / "a.csv").stat().st_mode & 0o777 == 0o644


# --- econ export -----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_export_help_names_every_file_written_beside_a_table(suffix, capsys):
    """It named the summary alone; a capital stack writes its tranche tables there too."""
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # (argparse wraps the help)
    for name in ("summary", "tranches", "tranches.summary"):
        assert f"(<stem>.{name}{suffix})" in shown


def test_cli_export_writes_every_format(tmp_path: Path, capsys):
    targets = ["--xlsx", "a.xlsx", "--csv", "a.csv", "--parquet", "a.parquet", "--json", "a.json"]
    args = [str(tmp_path / t) if t.startswith("a.") else t for t in targets]
    assert main(["export", "deepseek-r1-gb200-nvl72", *args]) == 0
    assert "wrote" in capsys.readouterr().err
    assert _leftovers(tmp_path) == [
        "a.csv",
        "a.json",
        "a.parquet",
        "a.summary.csv",
        "a.summary.parquet",
        "a.xlsx",
    ]
    before = (tmp_path / "a.csv").read_bytes()
    overrides = ["--set", "market.price_usd_per_mtok=0.5"]
    assert main(["export", str(SEED), *overrides, "--csv", str(tmp_path / "a.csv")]) == 3
    err = capsys.readouterr().err
    assert "a.summary.csv exist; use --force to overwrite" in err and "Traceback" not in err
    assert (tmp_path / "a.csv").read_bytes() == before
    assert main(["export", str(SEED), *overrides, "--csv", str(tmp_path / "a.csv"), "--force"]) == 0
    assert (tmp_path / "a.csv").read_bytes() != before


def test_cli_export_errors(tmp_path: Path, monkeypatch, capsys):
    assert main(["export", str(SEED)]) == 2
    assert "give at least one of --xlsx" in capsys.readouterr().err
    assert main(["export", "no-such-scenario", "--xlsx", str(tmp_path / "x.xlsx")]) == 3
    assert "no-such-scenario: file not found" in capsys.readouterr().err

    def full(handle, payload):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_write_payload", full)
    assert main(["export", str(SEED), "--xlsx", str(tmp_path / "x.xlsx")]) == 3
    err = capsys.readouterr().err
    assert "the disk is full" in err and "Traceback" not in err
    assert _leftovers(tmp_path) == []


OUTPUT_PATHS = [
    # (command, option, path, message after "error: "); {d} is the test's folder
    (
        "export",
        "--json",
        "{d}/rep.json/",
        "--json {d}/rep.json/: names a folder (it ends with '/'), and there is no folder "
        "{d}/rep.json; expected a file path ending in .json, such as {d}/rep.json",
    ),
    (
        "project",
        "--out",
        "{d}/x.csv/",
        "--out {d}/x.csv/: names a folder (it ends with '/'), and there is no folder {d}/x.csv; "
        "expected a file path ending in one of: .csv, .parquet, .xlsx, .json, such as {d}/x.csv",
    ),
    (
        "export",
        "--csv",
        "{d}/missing/",
        "--csv {d}/missing/: names a folder (it ends with '/'), and there is no folder "
        "{d}/missing; expected a file path ending in .csv",
    ),
    (
        "export",
        "--csv",
        "{d}/missing",
        "--csv {d}/missing: expected a file name ending in .csv for the csv output, got no "
        "extension",
    ),
    ("export", "--csv", "", "--csv '': an empty path; expected a file path ending in .csv"),
    (
        "project",
        "--out",
        "",
        "--out '': an empty path; expected a file path ending in one of: .csv, .parquet, .xlsx, "
        ".json",
    ),
    (
        "export",
        "--out",
        "{d}/.csv",
        "--out {d}/.csv: the file name is empty ('.csv' is the suffix alone); expected a name "
        "before the suffix, such as {d}/projection.csv",
    ),
    (
        "export",
        "--json",
        "{d}/.json",
        "--json {d}/.json: the file name is empty ('.json' is the suffix alone); expected a name "
        "before the suffix, such as {d}/projection.json",
    ),
]


@pytest.mark.parametrize(
    ("command", "option", "path", "said"),
    OUTPUT_PATHS,
    ids=[f"{c} {o} {p.replace('{d}', 'd') or repr(p)}" for c, o, p, _ in OUTPUT_PATHS],
)
def test_an_output_path_naming_no_file_is_refused_in_one_line(
    tmp_path: Path, capsys, command, option, path, said
):
    """Found by review: `--json d/rep.json/` wrote the file rep.json (pathlib drops the slash);
    `--csv d/missing/` said "unknown output format ''" though --csv names the format; `--csv ""`
    was taken for no --csv ("nothing to write", exit 2) and `project --out ""` for no --out
    (the table printed, exit 0); `--out .csv` said "unknown output format ''". Each is exit 3,
    one line naming the option, and nothing is written."""
    d = str(tmp_path)
    assert main([command, str(SEED), option, path.format(d=d)]) == 3
    captured = capsys.readouterr()
    assert captured.err == f"error: {said.format(d=d)}\n" and captured.out == ""
    assert _leftovers(tmp_path) == []


def test_cli_export_takes_out_with_the_format_by_its_suffix(tmp_path: Path, capsys):
    """`econ export --out x.xlsx` was "unrecognized arguments" where `econ project --out x.xlsx`
    writes the workbook: --out chooses the format by the suffix (econ.export.output_kind), as the
    option of that format does."""
    by_out, by_option = tmp_path / "out.xlsx", tmp_path / "option.xlsx"
    assert main(["export", str(SEED), "--out", str(by_out)]) == 0
    assert main(["export", str(SEED), "--xlsx", str(by_option)]) == 0
    from openpyxl import load_workbook

    assert load_workbook(by_out).sheetnames == load_workbook(by_option).sheetnames
    csv_and_json = ["--out", str(tmp_path / "a.csv"), "--json", str(tmp_path / "a.json")]
    assert main(["export", str(SEED), *csv_and_json]) == 0
    assert sorted(p.name for p in tmp_path.glob("a.*")) == ["a.csv", "a.json", "a.summary.csv"]
    capsys.readouterr()
    assert main(["export", str(SEED), "--out", str(tmp_path / "b.xlsx"), "--xlsx", "c.xlsx"]) == 2
    assert "both ask for the xlsx output" in capsys.readouterr().err
    assert main(["export", str(SEED), "--out", str(tmp_path / "b.txt")]) == 3
    err = capsys.readouterr().err
    assert "unknown output format '.txt'" in err and "Traceback" not in err
