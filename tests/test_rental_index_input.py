"""Issue 21 §4's bad input for rental index files and series choices, beyond tests/test_rental_index.py:
exit 3 naming the file, the row (by the line it starts on) and the column, never the content,
never a traceback; records that are not well-formed CSV; files of another schema; a term or a GPU
the series does not have, asked for by a scenario file or `econ market show`.
"""

from __future__ import annotations

import pytest

from econ import rental_index as ri
from econ.cli import main
from tests.conftest import ROOT

HEADER = ",".join(ri.COLUMNS) + "\n"
H200 = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
SECRET = "SECRET-CONTENT-42"


def _write(tmp_path, text: str, name: str = "index.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _refused(path, capsys) -> str:
    assert main(["market", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
    assert SECRET not in err
    return err


def test_rows_are_named_by_the_line_they_start_on_when_a_quoted_field_spans_lines(tmp_path, capsys):
    body = (
        f'2026-01-01,Pub/Idx,H100,0,3.0,"{SECRET}\nquoted over two lines"\n'
        "2026-01-01,Pub/Idx,H100,0,2.0,second\n"
    )
    err = _refused(_write(tmp_path, HEADER + body), capsys)
    assert "line 4, column date" in err and "the date on line 2" in err
    # a multi-line source is otherwise fine, and kept whole
    good = _write(tmp_path, HEADER + body.replace("2026-01-01,Pub/Idx,H100,0,2.0", "2026-02-01,Pub/Idx,H100,0,2.0"), "good.csv")  # fmt: skip
    points = ri.read_index(good)
    assert len(points) == 2 and points[0].source.endswith("quoted over two lines")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (f'2026-01-01,Pub/Idx,H100,0,3.0,"{SECRET}\n2026-02-01,Pub/Idx,H100,0,2.9,b\n', "line 2:"),
        (f"2026-01-01,Pub/Idx,H100,0,3.0,{SECRET}\x00\n", "line 2: a NUL character"),
        ('2026-01-01,Pub/Idx,H100,0,3.0,"' + "x" * 200_000 + '"\n', "line 2:"),
        (
            f'2026-01-01,Pub/Idx,H100,0,3.0,src\n2026-02-01,Pub/Idx,H100,0,"2.9"{SECRET},b\n',
            "line 3:",
        ),
    ],
    ids=["unclosed quote", "NUL", "field over the csv limit", "text after a quote"],
)
def test_a_record_that_is_not_well_formed_csv_is_refused_with_its_line(
    body, where, tmp_path, capsys
):
    err = _refused(_write(tmp_path, HEADER + body), capsys)
    assert where in err
    # an unclosed quote never swallows the rows after it into one source
    with pytest.raises(ri.RentalIndexError):
        ri.parse_index(HEADER + body, "index.csv")


@pytest.mark.parametrize(
    ("header", "where"),
    [
        ("a,b,c,d,e,f\n", "column date is missing"),
        ("date,series,gpu,term,usd_per_gpu_hour,source\n", "column term_months is missing"),
        ("Date,Series,GPU,Term_Months,USD_per_GPU_hour,Source\n", "column date is missing"),
    ],
)
def test_a_header_of_six_other_columns_is_another_schema(header, where, tmp_path, capsys):
    err = _refused(_write(tmp_path, header + f"2026-01-01,Pub/Idx,H100,0,3.0,{SECRET}\n"), capsys)
    assert "line 1 (header)" in err and where in err
    assert "expected a rental index file with the columns date, series, gpu" in err


@pytest.mark.parametrize(
    "path",
    [
        ROOT / "models" / "benchmarks" / "mlperf_inference_llm.csv",
        ROOT / "models" / "benchmarks" / "accelerators.csv",
        ROOT / "models" / "scenarios" / "llama2-70b-h200.toml",
    ],
    ids=lambda p: p.name,
)
def test_the_products_own_files_of_other_schemas_are_refused_at_the_header(path, capsys):
    assert main(["market", "import", str(path)]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and "line 1 (header)" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("series", "term", "expected"),
    [
        ("CCIR/CRI-T2IF", 12, "no term of 12 months; its terms are 0 months"),
        ("SiliconData/RentalIndex", 0, "has no points for gpu H200; it has: B200, H100"),
    ],
    ids=["a term", "a GPU"],
)
def test_a_scenario_naming_what_the_series_lacks_exits_3_naming_what_it_has(
    series, term, expected, capsys
):
    overrides = [
        'market.spot_sells="gpu_hours"',
        f'market.rental_series="{series}"',
        f"market.rental_series_term_months={term}",
    ]
    code = main(["project", str(H200), *(a for o in overrides for a in ("--set", o))])
    assert code == 3
    err = capsys.readouterr().err
    assert str(H200) in err and "market.rental_series" in err
    assert expected in err and "Traceback" not in err


def test_market_show_a_gpu_the_series_lacks_lists_the_gpus_it_has(capsys):
    assert main(["market", "show", "SiliconData/RentalIndex", "--gpu", "GB200"]) == 3
    err = capsys.readouterr().err
    assert "no points for gpu GB200" in err and "B200, H100" in err and "Traceback" not in err
