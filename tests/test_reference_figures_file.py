"""models/reference_figures.csv: the public figures the docs compare econ's results with, shipped
so that every citation of them resolves, each with its date and source."""

import csv
import re

from tests.conftest import ROOT

FIGURES = ROOT / "models" / "reference_figures.csv"


def test_every_figure_has_a_date_and_a_source():
    with FIGURES.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    for row in rows:
        assert set(row) == {"category", "item", "value", "unit", "as_of", "source", "quality"}
        assert row["item"] and row["value"] and row["as_of"] and row["source"], row
        assert row["quality"] in {"primary", "secondary"}, row


def test_the_docs_cite_the_shipped_file():
    # A citation of reference_figures.csv names the copy in models/, not a file outside the
    # repository.
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for cited in re.findall(r"[\w./-]*reference_figures\.csv", page.read_text()):
            assert cited == "models/reference_figures.csv", (page.name, cited)


def test_figures_the_docs_quote_are_in_the_file():
    text = FIGURES.read_text()
    # docs/ready_made.md and docs/depreciation.md: residual value at 24 months; the hyperscaler
    # TCO of a GB200 (docs/ready_made.md's comparison table)
    assert "GPU residual value at 24 months,45-55,percent of cost" in text
    assert "Hyperscaler TCO H100 / H200 / B200 / GB200,1.17 / 1.22 / 1.73 / 1.86" in text
