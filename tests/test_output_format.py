"""Plain-text tables of the batch commands (econ.analysis.output.format_frame)."""

import numpy as np
import pandas as pd

from econ.analysis.output import format_frame


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
