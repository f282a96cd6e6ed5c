"""Review 25 of the input boundary (docs/inputs.md, docs/throughput.md): a sweep's or an
`empirical(FILE)` table is bounded by what it holds, not only by its size on disk (a 218 kB
Parquet file held 50,000,000 rows); a benchmark file's points are counted as they are read, before
the file is parsed whole; and a distribution's text is quoted cut to 80 characters.

The limits are monkeypatched small so that no test reads much: each file here is kilobytes to a
few megabytes, and a refusal is shown to come before the read (pandas' reader is spied on).
"""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ import files
from econ.analysis.distributions import DistributionError, parse_distribution, read_column
from econ.analysis.sweeps import read_table
from econ.analysis.validation import BatchInputError
from econ.cli import main
from econ.text import QUOTED_LIMIT
from econ.throughput.importers import CurveError, import_file
from econ.throughput.importers._common import MAX_POINTS_PER_FILE, file_lines, lines_of
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
PATH = "utilization.share"


@pytest.fixture
def reads(monkeypatch) -> list:
    """The calls of pandas.read_parquet (each its `columns`), which still reads."""
    calls, real = [], pd.read_parquet

    def spy(path, *args, **kwargs):
        calls.append(kwargs.get("columns"))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pd, "read_parquet", spy)
    return calls


def write(path: Path, table: pa.Table, **options) -> Path:
    pq.write_table(table, path, compression="zstd", **options)
    return path


def repeated_text(rows: int, length: int) -> pa.DictionaryArray:
    """One text of `length` characters in every row, stored once (a dictionary of one entry)."""
    indices = pa.array([0] * rows, pa.int32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(["x" * length]))


# --- 1. tables of sweeps and distributions ---------------------------------------------------


def test_a_parquet_table_of_more_values_than_allowed_is_refused_from_its_footer(
    tmp_path, monkeypatch, reads
):
    monkeypatch.setattr(files, "MAX_TABLE_VALUES", 1_000)
    bomb = write(tmp_path / "bomb.parquet", pa.table({PATH: [0.5] * 1_001}))
    expected = "1,001 rows of 1 column are 1,001 values; expected at most 1,000"
    with pytest.raises(BatchInputError, match=f"bomb.parquet: {expected} .* override table$"):
        read_table(bomb)
    with pytest.raises(DistributionError, match=f"bomb.parquet: {expected} .* file of values$"):
        read_column(bomb, PATH)
    assert reads == []  # refused before any column was read
    at_limit = write(tmp_path / "ok.parquet", pa.table({PATH: [0.5] * 1_000}))
    assert read_column(at_limit, PATH).tolist() == [0.5] * 1_000


def test_econ_sweep_refuses_the_table_before_reading_it(tmp_path, monkeypatch, capsys, reads):
    monkeypatch.setattr(files, "MAX_TABLE_VALUES", 1_000)
    bomb = write(tmp_path / "bomb.parquet", pa.table({PATH: [0.5] * 1_001}))
    assert main(["sweep", str(SEED), "--overrides", str(bomb)]) == 3
    err = capsys.readouterr().err
    assert f"error: {bomb}: 1,001 rows of 1 column are 1,001 values" in err
    assert "Traceback" not in err and reads == []


def test_a_csv_table_counts_its_values_as_a_parquet_table_does(tmp_path, monkeypatch):
    """A CSV is bounded by its size on disk, but not what it becomes: 64 MB of one-character
    rows are 33.5 million rows (3.4 GB and 20 s of `econ sweep` before the run's size was
    refused). Every column of a CSV is read, so every column counts."""
    monkeypatch.setattr(files, "MAX_TABLE_VALUES", 1_000)
    table = tmp_path / "t.csv"
    table.write_text(f"{PATH},name\n" + "".join(f"0.5,s{i}\n" for i in range(501)))
    expected = "501 rows of 2 columns are 1,002 values; expected at most 1,000"
    with pytest.raises(BatchInputError, match=f"t.csv: {expected}"):
        read_table(table)
    with pytest.raises(DistributionError, match=f"t.csv: {expected}"):
        read_column(table, PATH)
    table.write_text(f"{PATH},name\n" + "".join(f"0.5,s{i}\n" for i in range(500)))
    assert len(read_table(table)) == 500


def test_an_empirical_column_is_read_alone(tmp_path, monkeypatch, reads):
    """Beside it, a column of 2 MB of text once read (a 1,000-character text in each of 2,000
    rows, stored once) is over the limit: the column asked for reads, the table is refused."""
    monkeypatch.setattr(files, "MAX_TABLE_BYTES", 1 << 20)
    path = write(
        tmp_path / "t.parquet",
        pa.table({PATH: [0.25, 0.75] * 1_000, "note": repeated_text(2_000, 1_000)}),
    )
    assert read_column(path, PATH).tolist() == [0.25, 0.75] * 1_000
    assert reads == [[PATH]]
    with pytest.raises(BatchInputError, match="t.parquet: the text of its columns read is more "):
        read_table(path)
    assert reads == [[PATH]]  # (the table was refused before pandas read it)


@pytest.mark.parametrize(
    "options",
    [{}, {"use_dictionary": False, "column_encoding": {"name": "DELTA_BYTE_ARRAY"}}],
    ids=["dictionary", "delta"],
)
def test_a_long_text_repeated_in_every_row_is_refused_before_it_is_read(
    tmp_path, monkeypatch, reads, options
):
    """Stored once (a dictionary page, or a prefix shared with the row before), read once a
    row: 2,000 rows of a 1,000-character name are 2 MB of text from a file of a few kB."""
    monkeypatch.setattr(files, "MAX_TABLE_BYTES", 1 << 20)
    names = repeated_text(2_000, 1_000)
    if options:
        names = names.cast(pa.string())
    path = write(tmp_path / "t.parquet", pa.table({PATH: [0.5] * 2_000, "name": names}), **options)
    assert path.stat().st_size < 20_000
    with pytest.raises(BatchInputError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}: the text of its columns read is more than 1 MB once read (a text is stored "
        "once and read once a row); expected at most 1 MB of text in a CSV or Parquet override "
        "table"
    )
    assert reads == []


def test_columns_larger_uncompressed_than_allowed_are_refused(tmp_path, monkeypatch, reads):
    monkeypatch.setattr(files, "MAX_TABLE_BYTES", 1 << 20)
    path = write(tmp_path / "t.parquet", pa.table({PATH: [0.5] * 200_000}), use_dictionary=False)
    meta = pq.ParquetFile(path).metadata
    stored = sum(
        meta.row_group(g).column(0).total_uncompressed_size for g in range(meta.num_row_groups)
    )
    assert stored > 8 * 200_000 > path.stat().st_size * 10  # plain doubles, compressed away
    with pytest.raises(DistributionError, match=r"t.parquet: its columns read are 1\.5 MB uncomp"):
        read_column(path, PATH)
    assert reads == []


def test_a_nested_column_is_refused_by_its_position(tmp_path, reads):
    path = write(tmp_path / "t.parquet", pa.table({PATH: [0.5], "secret words": [[1, 2, 3]]}))
    with pytest.raises(BatchInputError) as info:
        read_table(path)
    assert str(info.value) == (
        f"{path}: column 2 holds lists or records; expected a CSV or Parquet override table of "
        "one value per row and column"
    )
    assert reads == []


def test_a_parquet_column_named_twice_is_named_as_in_a_csv(tmp_path):
    table = pa.Table.from_arrays([pa.array([0.5]), pa.array([0.6])], names=[PATH, PATH])
    path = write(tmp_path / "t.parquet", table)
    with pytest.raises(BatchInputError, match=rf"column '{PATH}' is repeated \(columns 1 and 2\)"):
        read_table(path)  # (it was: cannot be read as a table (Multiple matches for FieldRef...))


def test_a_table_within_the_limits_reads_as_pandas_reads_it(tmp_path, reads):
    frame = pd.DataFrame({PATH: [0.5, 0.75], "name": ["a", "b"]}, index=[7, 9])
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    pd.testing.assert_frame_equal(read_table(path), pd.read_parquet(path))


def test_the_table_limit_is_documented():
    inputs = " ".join((ROOT / "docs" / "inputs.md").read_text().split())
    assert f"{files.MAX_TABLE_VALUES:,} values (`econ.files.MAX_TABLE_VALUES`" in inputs


# --- 2. benchmark files: points counted as they are read -------------------------------------


LINE_TEXT = st.text(st.sampled_from("ab,{}\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029 "), max_size=40)


@given(LINE_TEXT)
def test_lines_of_gives_the_lines_splitlines_gives(text):
    assert list(lines_of(text)) == text.splitlines()


@given(LINE_TEXT)
def test_file_lines_gives_the_lines_a_text_stream_gives(text):
    assert list(file_lines(text)) == io.StringIO(text).readlines()


def peak_bytes(path: Path, refusal: str) -> int:
    """Most memory Python held at once [bytes] while importing `path`, refused with `refusal`."""
    tracemalloc.start()
    try:
        with pytest.raises(CurveError, match=refusal):
            import_file(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("name", "text", "refusal"),
    [
        ("list.json", "[" + ",".join(["{}"] * 700_000) + "]", "records in the JSON list"),
        ("lines.jsonl", "{}\n" * 700_000, "JSON Lines records"),
        ("sweep.csv", "concurrency,output_tokens_per_s_per_gpu\n" + "1,1\n" * 350_000, "data rows"),
        ("rows.csv", "1,1\n" * 350_000, "no importer recognizes"),
    ],
)
def test_a_file_of_too_many_points_is_refused_without_parsing_it_whole(
    tmp_path, name, text, refusal
):
    """Its bytes and its text are held (2 times its size); the rest is read a point at a time.
    Parsed or split into lines whole, these took 16 to 25 times their size (an 84 MB CSV 1.68
    GB, a 180 MB JSON list 4.74 GB)."""
    path = tmp_path / name
    path.write_text(text)
    assert peak_bytes(path, refusal) < 3 * path.stat().st_size


def test_a_json_list_is_refused_at_its_10_001st_record_however_long(tmp_path):
    # what follows the first 10,001 records is not read: not even whether it is JSON
    path = tmp_path / "runs.json"
    path.write_text("[" + "{}, " * (MAX_POINTS_PER_FILE + 1) + "not JSON at all")
    with pytest.raises(CurveError, match=r"counted to record 10,001, at character 40,002 of"):
        import_file(path)


# --- 3. a distribution's text in messages ----------------------------------------------------


def test_a_distribution_is_quoted_cut_to_80_characters():
    text = "triangular(" + ",".join(["1"] * 50_000) + ")"
    with pytest.raises(DistributionError) as info:
        parse_distribution(text, path=PATH, files=False)  # (as a memo's stamp is read)
    message = str(info.value)
    assert message.startswith(f"{PATH}={text[:QUOTED_LIMIT]}... ({len(text):,} characters): ")
    assert message.endswith("expected at most 3 arguments (low, mode, high), got 50000")


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("triangular(1, 2, " + "x" * 1_000 + ")", "high = " + repr("x" * 1_000)),
        ("normal(0, 1, " + "k" * 1_000 + "=3)", "unknown argument " + repr("k" * 1_000)),
        ("normal(" + "k" * 1_000 + "=1, " + "k" * 1_000 + "=2)", "argument " + repr("k" * 1_000)),
        ("g" * 1_000 + "(1, 2)", "unknown distribution " + repr("g" * 1_000)),
        ("discrete(" + "a" * 1_000 + ", " + "a" * 1_000 + ")", "value " + repr("a" * 1_000)),
        (
            "discrete(1:-1, " + ", ".join(f"{v}:1" for v in range(2, 400)) + ")",
            "got " + repr([-1.0] + [1.0] * 398),
        ),
    ],
)
def test_an_argument_is_quoted_cut_to_80_characters(text, quoted):
    with pytest.raises(DistributionError) as info:
        parse_distribution(text, path=PATH)
    message = str(info.value)
    assert len(message) < 500, message[:600]
    assert quoted[:QUOTED_LIMIT] in message and quoted not in message


def test_econ_montecarlo_prints_a_long_distribution_cut(capsys):
    text = "triangular(" + ",".join(["1"] * 50_000) + ")"
    assert main(["montecarlo", str(SEED), "-n", "10", "--dist", f"{PATH}={text}"]) == 3
    err = capsys.readouterr().err
    assert f"({len(text):,} characters)" in err and len(err) < 400, err[:500]
