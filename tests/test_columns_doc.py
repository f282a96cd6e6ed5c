"""docs/glossary.md's "Monthly columns" table: generated from econ.labels.COLUMN_NOTES
(scripts/columns_doc.py), current, and naming every column a projection's monthly table has."""

from __future__ import annotations

import re

import pytest

from econ import load_scenario, project
from scripts import columns_doc
from tests.conftest import ROOT


def listed_columns() -> list[str]:
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    part = page[page.index(columns_doc.BEGIN) : page.index(columns_doc.END)]
    return re.findall(r"^\| `([^`]+)` \|", part, flags=re.M)


def test_committed_table_is_what_the_notes_give():
    assert columns_doc.main(["--check"]) == 0, "run scripts/columns_doc.py and commit the glossary"


def test_the_check_fails_on_a_stale_table(tmp_path, monkeypatch):
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    stale = tmp_path / "glossary.md"
    stale.write_text(page.replace("| `dscr_test` |", "| `dscr_tested` |"), encoding="utf-8")
    monkeypatch.setattr(columns_doc, "TARGET", stale)
    monkeypatch.setattr(columns_doc, "ROOT", tmp_path)
    assert columns_doc.main(["--check"]) == 1
    assert columns_doc.main([]) == 0
    assert "| `dscr_test` |" in stale.read_text(encoding="utf-8")
    assert stale.read_text(encoding="utf-8").count(columns_doc.BEGIN) == 1


@pytest.mark.parametrize(
    "name", ["deepseek-r1-gb200-nvl72", "deepseek-r1-gb200-nvl72-capital-stack"]
)
def test_every_monthly_column_is_listed_in_table_order(name):
    monthly = project(load_scenario(name)).monthly
    columns = [*monthly.index.names, *monthly.columns]
    assert columns == listed_columns()
