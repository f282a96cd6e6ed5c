"""Plain-text tables of the batch commands (econ.analysis.output.format_frame)."""

import numpy as np
import pandas as pd
import pytest

from econ.analysis.output import format_frame
from tests.conftest import ROOT


def test_amounts_of_a_thousand_and_more_have_separators_and_no_exponent():
    frame = pd.DataFrame({"npv_usd": [70312.4, -102283.2, 5631.0, -28720.9, 1e9, 999.5]})
    body = format_frame(frame).splitlines()[2:]
    cells = [line.strip() for line in body]
    assert cells == ["70,312", "-102,283", "5,631", "-28,721", "1,000,000,000", "999.5"]
    assert not any("e+" in c for c in cells)


def test_small_figures_keep_four_significant_digits_and_nan_reads_n_a():
    frame = pd.DataFrame({"x": [0.137215, 33.94, 1.5e-5, np.nan]})
    cells = [line.strip() for line in format_frame(frame).splitlines()[2:]]
    assert cells == ["0.1372", "33.94", "1.5e-05", "n/a"]


def test_counts_carry_their_noun_in_the_right_number():
    from econ.labels import counted

    assert counted(1, "point") == "1 point"
    assert counted(3, "point") == "3 points"
    assert counted(1024, "GPU") == "1,024 GPUs"
    assert counted(1, "measured point") == "1 measured point"
    assert counted(2, "inquiry", "inquiries") == "2 inquiries"


def test_input_values_as_headings_are_short():
    from econ.ui.fmt import short_number

    assert [short_number(v) for v in (0.26088, 0.3261, 70.0, 43000.0, 1.5e-5)] == [
        "0.2609",
        "0.3261",
        "70",
        "43,000",
        "1.5e-05",
    ]


def test_an_out_path_without_a_known_extension_says_what_it_is(tmp_path):
    """`--out DIR` said "unknown output format ''" (a data scientist's review)."""
    from econ.analysis.output import OutputError, output_files

    expected = "expected a file named with one of: .parquet, .csv"
    for path, what in (
        (tmp_path, "a folder"),
        (tmp_path / "rows", "no extension"),
        (tmp_path / "rows.xlsx", "unknown output format '.xlsx'"),
    ):
        with pytest.raises(OutputError) as info:
            output_files(path)
        assert str(info.value) == f"{path}: {what}; {expected}"


def test_a_vary_that_leaves_its_field_says_so_in_its_options_words(capsys):
    from econ.cli import main

    seed = str(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    assert main(["sensitivity", seed, "--vary", "utilization.share", "--pct", "200"]) == 3
    assert capsys.readouterr().err.startswith(
        "error: --vary utilization.share --pct 200: range utilization.share, value 1: "
    )
    assert main(["sensitivity", seed, "--vary", "market.price_usd_per_mtk"]) == 3
    assert capsys.readouterr().err.startswith(
        "error: --vary path 'market.price_usd_per_mtk' is not a field of the scenario; did you mean "
        "market.price_usd_per_mtok"
    )
