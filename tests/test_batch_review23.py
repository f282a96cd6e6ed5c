"""Defects an outside data scientist's review of `econ sweep`, `econ montecarlo` and `econ
sensitivity` found (round 23): each test fails on the code before its fix."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from econ import load_scenario
from econ.analysis.sensitivity import (
    SWING_FINITE,
    SWING_NONE,
    SWING_UNDEFINED,
    SWING_UNDEFINED_BOTH,
    tornado_ranks,
)
from econ.analysis.stats import CONSTANT_BIN_RELATIVE, SummaryAccumulator, summarize_chunk
from econ.cli import main
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
HALL = SCENARIOS / "hall-10mw-gb300-nvl72-liquid.toml"


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


# --- 2, 8: a constant output --------------------------------------------------------------------


def _summary(values: np.ndarray, exact: bool):
    """The summary of one output `values` computed in three sampling blocks, as a run makes it."""
    n = len(values)
    blocks = np.array([0, n // 3, 2 * n // 3])
    accumulator = SummaryAccumulator(n)
    accumulator.add(summarize_chunk({"tokens_total": values}, 0, n, blocks, exact))
    return accumulator.result()


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("value", [1e19, 5.6e15, 7634810245405824.0, 0.1, 0.0, -2.5])
def test_a_constant_output_has_std_0_and_one_bin_around_its_value(value, exact):
    """np.histogram of a constant 1e19 or 5.6e15 raised "Too many bins for data range" (its
    fallback range v +- 0.5 rounds to v above 2^52): a traceback after all the run's work."""
    summary = _summary(np.full(20, value), exact)
    metric = summary.metrics["tokens_total"]
    assert metric.std == 0.0  # 0.1 in three blocks merged to m2 = 3.9e-33: std 1.4e-17
    assert metric.minimum == metric.maximum == value
    counts, edges = summary.histograms["tokens_total"]
    assert list(counts) == [20]
    half = abs(value) * CONSTANT_BIN_RELATIVE if value else 0.5
    # a sketch's bin is around its bucket's value, within its relative accuracy (1e-4) of value
    np.testing.assert_allclose(edges, [value - half, value + half], rtol=1e-9 if exact else 2e-4)
    assert edges[0] < value < edges[1]


@pytest.mark.parametrize("value", [5.6e15, 1e19])
def test_a_nearly_constant_output_keeps_its_spread_and_every_value_in_its_bins(value):
    # two neighbouring doubles: too close for 60 bins of finite width, not equal
    values = np.array([value, np.nextafter(value, np.inf)] * 10)
    summary = _summary(values, exact=True)
    metric = summary.metrics["tokens_total"]
    assert metric.std > 0
    counts, edges = summary.histograms["tokens_total"]
    assert counts.sum() == 20 and edges[0] == values.min() and edges[-1] == values.max()


def test_montecarlo_of_an_output_that_no_draw_moves_ends_with_its_summary(tmp_path, capsys):
    # tokens_total of the 10 MW hall does not depend on the token price: 7.6e15 in every draw
    out = tmp_path / "r.parquet"
    args = ["montecarlo", str(HALL), "-n", "20", "--out", str(out), "--report", str(tmp_path / "r")]
    code = main([*args, "--dist", "market.price_usd_per_mtok=triangular(0.2,0.3,0.45)"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    row = next(line for line in captured.out.splitlines() if line.startswith("tokens_total"))
    assert row.split()[4] == "0"  # the std column
    assert out.exists() and not (tmp_path / "r.parquet.chunks").exists()


# --- 5: a tornado input undefined at both ends --------------------------------------------------


def test_an_input_undefined_at_both_ends_ranks_after_those_undefined_at_one(capsys):
    """The capital stack's equity IRR is undefined at the base and at both ends of the discount
    rate, which does not enter it: the discount rate ranked 1, "undefined at low and high",
    above the inputs that give the IRR a value at their high end."""
    kinds = [SWING_UNDEFINED_BOTH, SWING_NONE, SWING_UNDEFINED, SWING_FINITE, SWING_UNDEFINED]
    order, ranks = tornado_ranks(np.array([np.nan, 0.0, np.nan, 3.0, np.nan]), np.array(kinds))
    assert list(order) == [3, 2, 4, 0, 1] and list(ranks) == [1, 2, 3, 4, 5]

    args = ["sensitivity", str(SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml")]
    args += ["--vary", "market.price_usd_per_mtok", "--vary", "utilization.share"]
    args += ["--range", "financing.discount_rate_annual=0.08,0.16"]
    assert main([*args, "--output", "irr_equity_annual", "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table["input"]) == [
        "market.price_usd_per_mtok",
        "utilization.share",
        "financing.discount_rate_annual",
    ]
    assert list(table["rank"]) == [1, 2, 3]
    assert table["note"].tolist() == [
        "undefined at low",
        "undefined at low",
        "undefined at low and high",
    ]


# --- 8: schema_version is not an input ----------------------------------------------------------


def test_schema_version_is_neither_offered_nor_varied(base, capsys):
    from econ.analysis.validation import BatchInputError, field_specs
    from econ.batch import ScenarioBatch

    assert "schema_version" not in field_specs()
    refused = "'schema_version' is the scenario file's format version, not an input"
    assert main(["sweep", str(SEED), "--grid", "schema_version=1"]) == 3
    assert refused in capsys.readouterr().err
    assert main(["sweep", str(SEED), "--grid", "xyz=0.5"]) == 3
    assert "schema_version" not in capsys.readouterr().err  # no longer listed as a field
    args = ["sensitivity", str(SEED), "--range", "schema_version=1,1"]
    assert main(args) == 3 and refused in capsys.readouterr().err
    with pytest.raises(BatchInputError, match=refused):
        ScenarioBatch.repeat(base, 2, {"schema_version": 1})


# --- 7: -n 1e6, the chunk size recorded, Sobol's 2^m -------------------------------------------

DIST = ["--dist", "utilization.share=uniform(0.5,0.9)"]


def test_a_whole_number_written_as_a_float_is_refused_with_how_to_write_it(capsys):
    assert main(["montecarlo", str(SEED), "-n", "1e6", *DIST]) == 3
    assert "-n = '1e6': expected a whole number >= 1 (write 1000000)" in capsys.readouterr().err
    args = ["sensitivity", str(SEED), "--method", "sobol", "-n", "1024.0", *DIST]
    assert main(args) == 3
    assert "expected a whole number >= 2 (write 1024)" in capsys.readouterr().err
    for text in ("0.5", "1e400", "-1e3", "ten"):  # no whole number to suggest
        assert main(["montecarlo", str(SEED), "-n", text, *DIST]) == 3
        assert "(write" not in capsys.readouterr().err


def test_the_run_records_the_chunk_size_it_used_and_the_one_asked(base, tmp_path, capsys):
    from econ.analysis import montecarlo
    from econ.analysis.output import read_rows_metadata

    out = tmp_path / "r.csv"
    args = ["montecarlo", str(SEED), "-n", "5000", *DIST, "--chunk-size", "100"]
    assert main([*args, "--out", str(out), "--output", "npv_usd"]) == 0
    assert "--chunk-size 100 (chunk_size= from Python) is rounded up to 4,096 rows" in (
        capsys.readouterr().err
    )
    metadata = read_rows_metadata(out)
    # 5,000 rows in chunks of 100 would be 50 files; the run made 2 of whole 4,096-row blocks
    assert (metadata["chunk_size"], metadata["chunk_size_asked"]) == (4096, 100)
    run = montecarlo(base, {"utilization.share": "uniform(0.5,0.9)"}, 10, chunk_size=8192)
    assert run.metadata["chunk_size"] == 8192 and "chunk_size_asked" not in run.metadata


def test_a_sobol_run_of_other_than_2_to_the_m_points_says_so(base, capsys):
    from econ.analysis import montecarlo, sobol

    dist = {"utilization.share": "uniform(0.5,0.9)"}
    run = montecarlo(base, dist, 1000, sampling="sobol", outputs="npv_usd")
    assert run.notes == [
        "sobol sampling of 1,000 scenarios, not a power of 2: Sobol points are balanced only in "
        "runs of 2^m, such as 512 or 1,024"
    ]
    for n, sampling in ((1024, "sobol"), (1000, "random")):
        assert montecarlo(base, dist, n, sampling=sampling, outputs="npv_usd").notes == []
    assert sobol(base, dist, 96, outputs=["npv_usd"], resamples=0).run.notes == [
        "sobol sampling of 96 base samples, not a power of 2: Sobol points are balanced only in "
        "runs of 2^m, such as 64 or 128"
    ]
    args = ["montecarlo", str(SEED), "-n", "100", "--sampling", "sobol-plain", *DIST]
    assert main([*args, "--output", "npv_usd"]) == 0
    assert "note: sobol-plain sampling of 100 scenarios, not a power of 2" in (
        capsys.readouterr().err
    )


# --- 6: a chunk folder that cannot be created --------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_chunk_folder_that_cannot_be_created_is_not_read_as_a_full_disk(base, capsys):
    """statvfs of /proc says 0 bytes free: --chunks /proc/x was "the disk is full"."""
    from econ.analysis import montecarlo
    from econ.files import WriteError

    args = ["montecarlo", str(SEED), "-n", "100", *DIST, "--chunks", "/proc/econ-x"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "/proc/econ-x: cannot create the folder" in err and "disk is full" not in err
    with pytest.raises(WriteError, match="cannot create the folder"):
        montecarlo(base, {"utilization.share": "uniform(0.5,0.9)"}, 10, store="/proc/econ-x")


def test_the_check_of_a_new_chunk_folder_leaves_none_behind_when_the_run_is_refused(
    base, tmp_path, monkeypatch
):
    import shutil
    from collections import namedtuple

    from econ.analysis import montecarlo
    from econ.errors import InputError

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6, 1000))
    with pytest.raises(InputError, match="more than the 1000 bytes free"):
        montecarlo(base, {"utilization.share": "uniform(0.5,0.9)"}, 100, store=tmp_path / "ck")
    assert list(tmp_path.iterdir()) == []


# --- 1: --out never deletes what econ did not write ---------------------------------------------

COMMANDS = {
    "sweep": ["sweep", str(SEED), "--grid", "utilization.share=0.5,0.6"],
    "montecarlo": ["montecarlo", str(SEED), "-n", "100", *DIST, "--output", "npv_usd"],
    "sensitivity": ["sensitivity", str(SEED), "--vary", "utilization.share", "--output", "npv_usd"],
}


def _user_folder(folder: Path) -> None:
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.txt").write_text("important")
    (folder / "sub" / "data.csv").write_text("a,b\n")


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_out_refuses_a_chunk_folder_of_the_users_files_and_keeps_them(command, tmp_path, capsys):
    """--out r.parquet ran in r.parquet.chunks and then removed it with everything in it (exit
    0): a user's notes.txt and sub/ were gone."""
    out, folder = tmp_path / "r.parquet", tmp_path / "r.parquet.chunks"
    _user_folder(folder)
    for force in ([], ["--force"]):
        assert main([*COMMANDS[command], "--out", str(out), *force]) == 3
        err = capsys.readouterr().err
        assert (
            f"{folder}, a folder that exists and holds files econ did not write (notes.txt, sub)"
            in err
            and "--chunks DIR" in err
        )
        assert _tree(folder) == ["notes.txt", "sub", "sub/data.csv"] and not out.exists()


def test_out_removes_only_what_the_run_wrote_in_its_chunk_folder(tmp_path, capsys):
    args, out = COMMANDS["montecarlo"], tmp_path / "r.parquet"
    folder = tmp_path / "r.parquet.chunks"
    # a folder econ makes is removed with its files
    assert main([*args, "--out", str(out)]) == 0
    assert out.exists() and not folder.exists()
    # an empty folder made by someone else is used, and left (empty) as it was
    out.unlink()
    folder.mkdir()
    assert main([*args, "--out", str(out)]) == 0
    assert out.exists() and folder.is_dir() and _tree(folder) == []
    # a run's chunk folder (kept by --chunks here, as a stopped run keeps it) with a user's file
    # put beside its chunk files: the rerun resumes from it and removes its files, not the user's
    out.unlink()
    folder.rmdir()
    assert main([*args, "--chunks", str(folder)]) == 0
    (folder / "notes.txt").write_text("important")
    capsys.readouterr()
    assert main([*args, "--out", str(out)]) == 0
    assert "resumed: reused 1 finished chunk of 1" in capsys.readouterr().err
    assert out.exists() and _tree(folder) == ["notes.txt"]


def test_discard_leaves_the_files_of_others(tmp_path):
    from econ.analysis.chunks import ChunkStore

    store = ChunkStore(tmp_path / "ck", {"fingerprint": "a"})
    for index in range(3):
        store.write(index, index, index + 1, {"x": np.zeros(1)}, {})
    (tmp_path / "ck" / "mine.txt").write_text("kept")
    store.discard(2)  # a run of two chunks: chunk 2 is not its own
    assert _tree(tmp_path / "ck") == ["chunk-000002.parquet", "mine.txt"]
    made = ChunkStore(tmp_path / "new", {"fingerprint": "b"})
    made.write(0, 0, 1, {"x": np.zeros(1)}, {})
    made.discard(1)
    assert not (tmp_path / "new").exists()


# --- 4: --report's files are announced ----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "chart"),
    [("sweep", "histogram"), ("montecarlo", "histogram"), ("sensitivity", "tornado")],
)
def test_report_files_are_announced_as_out_files_are(command, chart, tmp_path, capsys):
    prefix, out = tmp_path / "rep", tmp_path / "r.csv"
    assert main([*COMMANDS[command], "--report", str(prefix), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"wrote {out}, {tmp_path / 'r.meta.json'}\n" in err
    assert f"wrote {prefix}.md, {prefix}-{chart}.png\n" in err
    assert Path(f"{prefix}.md").exists() and Path(f"{prefix}-{chart}.png").exists()


# --- 3: ScenarioBatch.repeat's memory ------------------------------------------------------------


def _allocating(*args, **kwargs):
    raise AssertionError("the batch's arrays were being made")


def test_repeat_refuses_a_batch_beyond_its_memory_before_making_it(base, monkeypatch):
    """ScenarioBatch.repeat(base, 10**9, ...) grew to 22 GB and was killed by the kernel."""
    import tracemalloc

    from econ.analysis import validation
    from econ.batch import ScenarioBatch, check_repeat_size
    from econ.errors import InputError
    from econ.memory import MAX_BATCH_BYTES

    # the columns are prepared first thing after the checks: the refusal comes before
    monkeypatch.setattr(validation, "prepare_columns", _allocating)
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as refused:
            ScenarioBatch.repeat(base, 10**9, {"utilization.share": 0.5})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    message = str(refused.value)
    assert message.startswith(f"a batch of 1,000,000,000 scenarios of '{base.name}' (")
    assert "GB in memory; expected at most 2 GB (about " in message
    assert "run it with econ.analysis (sweep, montecarlo), which runs in chunks" in message
    # the bytes per scenario are those of a batch built: 1,000 scenarios of the seed
    monkeypatch.undo()
    tracemalloc.start()
    try:
        batch = ScenarioBatch.repeat(base, 1000, {"utilization.share": 0.5})
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    per = int(message.split("' (")[1].split(" bytes each")[0].replace(",", ""))
    assert batch.n == 1000 and per == pytest.approx(held / 1000, rel=0.1)
    assert "such scenarios): " in message and f"{MAX_BATCH_BYTES // per:,}" in message
    check_repeat_size(base, MAX_BATCH_BYTES // per)  # a batch at the limit is taken


def test_a_chunk_too_large_to_hold_is_refused_before_the_run(monkeypatch, capsys):
    from econ.analysis import runner

    monkeypatch.setattr(runner, "run_chunk", _allocating)
    args = ["montecarlo", str(SEED), "-n", "3000000", *DIST, "--chunk-size", "2000000"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "error: a chunk of 2,002,944 scenarios of 'deepseek-r1-gb200-nvl72' (" in err
    assert "expected at most 2 GB" in err and "give a smaller chunk size (--chunk-size" in err
