"""Defects an outside data scientist's review of `econ sweep`, `econ montecarlo` and `econ
sensitivity` found (round 27): each test fails on the code before its fix."""

from __future__ import annotations

import pytest

from econ import load_scenario
from econ.cli import main
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
DIST = ["--dist", "utilization.share=uniform(0.5,0.9)"]
COMMANDS = {
    "sweep": ["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.2,0.3"],
    "montecarlo": ["montecarlo", str(SEED), "-n", "8", *DIST],
    "sensitivity": ["sensitivity", str(SEED), "--range", "utilization.share=0.5,0.9"],
}


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


# --- 1, 2, 3: an output path that is empty or names a folder -----------------------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("prefix", [".", "..", "/", "sub/", "sub"])
def test_a_report_prefix_that_names_a_folder_is_refused(
    command, prefix, tmp_path, monkeypatch, capsys
):
    """`--report .` and `--report /` were a ValueError traceback (exit 1); `--report sub/` wrote
    sub.md beside the folder and `--report ..` a file named '...md'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert main([*COMMANDS[command], "--report", prefix]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: --report {prefix} (prefix= from Python) names a folder; ")
    assert "expected a file prefix, e.g. " in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]
    assert not any((tmp_path / "sub").iterdir())


@pytest.mark.parametrize(
    ("option", "argument"), [("--report", "prefix"), ("--out", "path"), ("--chunks", "store")]
)
@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_output_path_is_refused(command, option, argument, tmp_path, monkeypatch, capsys):
    """`--chunks ""` wrote chunk-000000.parquet and manifest.json into the current folder, and
    an empty --out or --report was skipped as if not given (exit 0, no file)."""
    monkeypatch.chdir(tmp_path)
    assert main([*COMMANDS[command], option, ""]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option} '' ({argument}= from Python) is an empty path; ")
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_an_out_path_ending_in_a_slash_is_refused(tmp_path, monkeypatch, capsys):
    """`--out x.csv/` wrote x.csv: pathlib drops the slash."""
    monkeypatch.chdir(tmp_path)
    assert main([*COMMANDS["montecarlo"], "--out", "x.csv/"]) == 3
    assert capsys.readouterr().err.startswith("error: x.csv/: a folder; expected a file named")
    assert list(tmp_path.iterdir()) == []


def test_the_python_api_refuses_empty_paths_and_folder_prefixes(base, tmp_path, monkeypatch):
    from econ.analysis import montecarlo
    from econ.analysis.output import OutputError, write_rows
    from econ.analysis.report import montecarlo_report
    from econ.files import WriteError

    monkeypatch.chdir(tmp_path)
    dists = {"utilization.share": "uniform(0.5,0.9)"}
    with pytest.raises(WriteError, match=r"^--chunks '' \(store= from Python\) is an empty path"):
        montecarlo(base, dists, 8, store="")
    result = montecarlo(base, dists, 8, keep_rows=True)
    with pytest.raises(OutputError, match=r"^--out '' \(path= from Python\) is an empty path"):
        write_rows(result, "")
    for prefix in ("", ".", tmp_path):
        with pytest.raises(OutputError, match="expected a file prefix"):
            montecarlo_report(result.summary, result.metadata, prefix)
    assert list(tmp_path.iterdir()) == []


# --- 4: nan is not "none" --------------------------------------------------------------------

FLOOR = "financing.covenants.dscr_floor"  # optional: none removes the covenant
SOBOL = ["sensitivity", str(SEED), "--method", "sobol", "-n", "8"]


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            ["sweep", str(SEED), "--grid", f"{FLOOR}=1.2,nan"],
            f"grid {FLOOR}, value 2: {FLOOR} = nan: not a number (NaN); expected a number, or "
            "none to leave the field empty",
        ),
        (
            ["sensitivity", str(SEED), "--range", f"{FLOOR}=nan,1.3"],
            f"range {FLOOR}=nan,1.3: LOW is nan; expected a number at both ends (a range "
            "cannot leave the field empty)",
        ),
        (
            [*SOBOL, "--range", f"{FLOOR}=1.2,nan"],
            f"range {FLOOR}=1.2,nan: HIGH is nan; expected a number at both ends",
        ),
        (
            ["sensitivity", str(SEED), "--range", f"{FLOOR}=none,1.3"],
            f"range {FLOOR}=none,1.3: LOW is none; expected a number at both ends",
        ),
    ],
    ids=["grid", "tornado-range", "sobol-range", "range-none"],
)
def test_nan_in_a_grid_or_a_range_is_refused_as_set_refuses_it(command, said, capsys):
    """`--grid PATH=1.2,nan` read nan as none and removed the covenant without a word, and
    `--range PATH=nan,1.3` ran, where `--set PATH=nan` and `discrete(1.2,nan)` are refused."""
    assert main(command) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1


def test_none_still_leaves_an_optional_field_empty_in_a_grid(base):
    from econ.analysis import sweep

    for empty in (None, "none"):
        assert sweep(base, grid={FLOOR: [1.2, empty]}).rows[FLOOR].isna().tolist() == [False, True]


def test_the_python_api_refuses_nan_in_a_grid_and_text_nan_in_a_table(base, tmp_path):
    import numpy as np
    import pandas as pd

    from econ.analysis import sweep, tornado
    from econ.analysis.validation import BatchInputError

    with pytest.raises(BatchInputError, match=rf"grid {FLOOR}, value 2: .* not a number \(NaN\)"):
        sweep(base, grid={FLOOR: [1.2, float("nan")]})
    with pytest.raises(BatchInputError, match="HIGH is nan; expected a number at both ends"):
        tornado(base, {FLOOR: (1.2, np.nan)})
    table = tmp_path / "t.csv"
    table.write_text(f"{FLOOR}\n1.2\nNaN\n")
    with pytest.raises(BatchInputError, match=rf"t.csv, row 2: {FLOOR} = 'NaN': not a number"):
        sweep(base, table=table)
    # a table's missing cell (empty in the CSV, NaN in a DataFrame) still leaves it empty
    table.write_text(f"name,{FLOOR}\na,1.2\nb,\n")
    assert sweep(base, table=table).rows[FLOOR].isna().tolist() == [False, True]
    frame = pd.DataFrame({FLOOR: [1.2, np.nan]})
    assert sweep(base, table=frame).rows[FLOOR].isna().tolist() == [False, True]


# --- 5: the metadata files are strict JSON ---------------------------------------------------


def _strict(text) -> dict:
    """JSON as a strict reader (JavaScript's JSON.parse, jq) takes it: NaN and Infinity refused."""
    import json

    def refuse(token):
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_run_metadata_of_a_grid_holding_none_is_strict_json(tmp_path, capsys):
    """The CSV sidecar, the Parquet schema's metadata and the chunk folder's manifest held a bare
    NaN for the grid's none, where stdout's JSON held null."""
    import pyarrow.parquet as pq

    grid = ["sweep", str(SEED), "--grid", f"{FLOOR}=1.2,none"]
    ck = tmp_path / "ck"
    assert main([*grid, "--out", str(tmp_path / "v.csv"), "--chunks", str(ck)]) == 0
    assert main([*grid, "--out", str(tmp_path / "v.parquet")]) == 0
    capsys.readouterr()
    sidecar = _strict((tmp_path / "v.meta.json").read_text())
    assert sidecar["plan"]["grid"][FLOOR] == [1.2, None]
    parquet = _strict(pq.read_schema(tmp_path / "v.parquet").metadata[b"econ"])
    assert parquet["plan"]["grid"][FLOOR] == [1.2, None]
    assert _strict((ck / "manifest.json").read_text())["plan"]["grid"][FLOOR] == [1.2, None]
    chunk = _strict(pq.read_schema(ck / "chunk-000000.parquet").metadata[b"econ"])
    assert chunk["plan"]["grid"][FLOOR] == [1.2, None]
    # the same run resumes from its chunk files (the run's identity is unchanged)
    assert main([*grid, "--chunks", str(ck), "--format", "json"]) == 0
    assert "resumed: reused 1 finished chunk of 1" in capsys.readouterr().err


# --- 6: the tornado's footnotes and whole numbers ------------------------------------------


def test_an_unset_base_input_is_not_said_to_be_an_undefined_output(capsys):
    """The seed is priced per system: its capex.gpu_price_usd is unset, so the tornado's base
    cell is n/a, and the footnote said npv_usd had no value at the sampled points, where every
    NPV was there."""
    gpu = ["--range", "capex.gpu_price_usd=38000,45000", "--output", "npv_usd"]
    assert main(["sensitivity", str(SEED), *gpu]) == 0
    out = capsys.readouterr().out
    assert "has no value (null)" not in out
    assert "base n/a: the base scenario leaves capex.gpu_price_usd unset" in out
    # whole numbers grouped as the other figures are: 38,000, not 38000
    row = next(line for line in out.splitlines() if line.startswith("capex.gpu_price_usd"))
    assert row.split()[1:4] == ["38,000", "45,000", "n/a"]


def test_an_undefined_output_is_still_said(capsys):
    price = ["--range", "market.price_usd_per_mtok=0.2,0.4", "--output", "irr_project_annual"]
    assert main(["sensitivity", str(SEED), *price]) == 0
    assert "n/a: irr_project_annual has no value (null)" in capsys.readouterr().out


def test_table_cells_group_whole_numbers():
    import numpy as np

    from econ.analysis.output import cell_text

    assert [cell_text(v) for v in (38000, np.int64(3_100_000), 7, -12_345)] == [
        "38,000",
        "3,100,000",
        "7",
        "-12,345",
    ]
    assert cell_text(2**60) == f"{2**60:,}"  # exactly, not through a float
    assert cell_text(np.int64(1234), "{:.1f}") == "1234.0"
    assert cell_text(True) == "True"


# --- 7: a --set value a distribution replaces is not recorded as run ---------------------------


def _json_run(command, capsys) -> dict:
    import json

    assert main([*command, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["metadata"]


def test_a_set_value_the_draws_replace_is_marked_replaced_and_noted(capsys):
    """metadata.overridden said 0.5 was the value run, where every draw was 0.6-0.9, and the
    note that the draws replaced it went to stderr alone (metadata.notes null)."""
    share = ["--set", "utilization.share=0.5", "--output", "npv_usd"]
    dist = ["--dist", "utilization.share=uniform(0.6,0.9)"]
    metadata = _json_run(["montecarlo", str(SEED), "-n", "8", *share, *dist], capsys)
    assert metadata["overridden"]["utilization.share"]["replaced"] is True
    assert metadata["overridden"]["utilization.share"]["value"] == 0.5
    assert metadata["notes"] == [
        "utilization.share is set by an override of the base (--set) and varied by the run: "
        "the varied values replace the override in every scenario"
    ]


def test_a_tornado_runs_the_set_value_as_its_base(capsys):
    """A tornado's scenario 0 is the base, at the --set value its range is around: not
    replaced, and not said to be (the note said every scenario replaced it)."""
    share = ["--set", "utilization.share=0.5", "--output", "npv_usd"]
    command = ["sensitivity", str(SEED), *share, "--range", "utilization.share=0.6,0.9"]
    metadata = _json_run(command, capsys)
    assert "replaced" not in metadata["overridden"]["utilization.share"]
    assert not metadata.get("notes")


def test_the_python_api_marks_a_replaced_override(base):
    from econ.analysis import montecarlo, sweep

    set_base = load_scenario(SEED, {"utilization.share": 0.5, "market.price_usd_per_mtok": 0.3})
    result = sweep(set_base, grid={"utilization.share": [0.6, 0.7]})
    entries = result.metadata["overridden"]
    assert entries["utilization.share"]["replaced"] is True
    assert "replaced" not in entries["market.price_usd_per_mtok"]  # run as set
    assert result.notes[0].startswith("utilization.share is set by an override of the base")
    plain = montecarlo(base, {"utilization.share": "uniform(0.6,0.9)"}, 8)
    assert plain.metadata["overridden"] == {} and plain.notes == []


# --- 8: options a sensitivity method does not use are noted -----------------------------------


def test_a_tornado_notes_the_sampling_options_it_ignores(capsys):
    """-n, --seed, --sampling and --trajectories were silently ignored by a tornado."""
    sampled = ["-n", "64", "--seed", "3", "--sampling", "random", "--trajectories", "5"]
    assert main([*COMMANDS["sensitivity"], *sampled, "--pct", "5", "--output", "npv_usd"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "note: --method tornado ignores -n 64 (--method sobol), --seed 3 (--method sobol or "
        "morris), --sampling random (--method sobol), --trajectories 5 (--method morris)",
        "note: --pct 5 is ignored: it is the +-percent of --vary",
    ]


def test_sobol_and_morris_note_the_others_options_and_keep_their_defaults(capsys):
    share = ["--range", "utilization.share=0.5,0.9", "--output", "npv_usd", "--format", "json"]
    assert main(["sensitivity", str(SEED), "--method", "morris", "-n", "64", *share]) == 0
    captured = capsys.readouterr()
    assert captured.err == "note: --method morris ignores -n 64 (--method sobol)\n"
    import json

    plan = json.loads(captured.out)["metadata"]["plan"]
    assert (plan["trajectories"], plan["levels"]) == (20, 4)
    assert main(["sensitivity", str(SEED), "--method", "sobol", "-n", "8", *share]) == 0
    captured = capsys.readouterr()
    assert "ignores" not in captured.err
    plan = json.loads(captured.out)["metadata"]["plan"]
    assert (plan["n_base"], plan["seed"], plan["sampling"]) == (8, 0, "sobol")


# --- 9: a grid point's error counts from 1 and names its values; IRR as a fraction ----------


def test_a_cross_field_error_names_the_grid_point_counted_from_1_with_its_values(capsys):
    """It said `grid, point 2: ...`, counted from 0 where a value's error counts from 1, naming
    neither the point's fields nor their values."""
    contract = ["--grid", "market.contract_share=0,0.5", "--grid", f"{FLOOR}=1.2,none"]
    assert main(["sweep", str(SEED), *contract]) == 3
    assert capsys.readouterr().err == (
        f"error: grid, point 3 of 4 (market.contract_share=0.5, {FLOOR}=1.2): "
        "market.contract_share = 0.5 but market.contract_usd_per_gpu_hour = 0; expected a price "
        "above 0 for contracted GPUs\n"
    )


def test_the_python_api_names_the_grid_point_alike(base):
    from econ.analysis import sweep
    from econ.analysis.validation import BatchInputError

    grid = {"fleet.gpu_count": [72, 144], "market.contract_share": [0.5]}
    with pytest.raises(BatchInputError) as caught:
        sweep(base, grid=grid)
    assert str(caught.value).startswith(
        "grid, point 1 of 2 (fleet.gpu_count=72, market.contract_share=0.5): "
    )


def test_the_sweep_table_writes_the_irr_as_a_fraction_as_the_other_tables(capsys):
    """The sweep's table printed 8.14% where Monte Carlo, the tornado, the reports, CSV and JSON
    write 0.08136 (docs/batch.md: a fraction a year)."""
    assert main(["sweep", str(SEED), "--grid", "market.price_usd_per_mtok=0.3261"]) == 0
    out = capsys.readouterr().out
    row = out.splitlines()[2].split()
    assert row[4] == "0.08136" and "%" not in out
