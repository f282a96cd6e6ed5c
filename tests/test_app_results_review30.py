"""Results page review 30: what a credit officer reads on it (the DSCR chart against the covenant
the scenario tests, the tables' units in their downloads)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.catalog import ready_made_scenarios
from tests.conftest import ROOT

STACK = "deepseek-r1-gb200-nvl72-capital-stack"


def results(name: str = STACK) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["scenario"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_dscr_chart_draws_the_ratio_the_covenant_tests_against_its_floor():
    """The capital stack's covenant tests the DSCR over a trailing 12 months: its lowest, -1.20x,
    is what the headroom tile (-2.40x) measures from the 1.20x floor. The chart drew only each
    month's own DSCR (lowest -0.36x) against that floor, as the memo does not: the line the floor
    is read against is the tested one, drawn beside the month's own."""
    at = results()
    specs = [c.proto.spec for c in at.get("vega_lite_chart") if "DSCR [x]" in c.proto.spec]
    assert len(specs) == 1
    assert "DSCR tested (trailing 12 months)" in specs[0]
    assert "DSCR of the month" in specs[0]
    caption = " ".join(c.value for c in at.caption)
    assert "trailing 12 months" in caption
    # the legend's labels whole ("12 m…" was cut), one a line: side by side they ran past a
    # phone's width ("DSCR o")
    legend = json.loads(specs[0])["layer"][1]["layer"][0]["layer"][0]["encoding"]["color"]["legend"]
    assert legend["labelLimit"] == 0 and legend["columns"] == 1
    result = project(load_scenario(ready_made_scenarios()[STACK]))
    tested = result.monthly["dscr_test"].min()
    assert tested - 1.2 == result.summary["dscr_headroom"].iloc[0]  # the line the tile measures


def test_a_covenant_tested_month_by_month_draws_one_dscr_line():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    from econ.ui import state

    at.query_params["scenario"] = STACK
    at.query_params["edits"] = state.encode({"financing": {"covenants": {"test_months": 1}}})
    at.run()
    assert not at.exception, at.exception
    specs = [c.proto.spec for c in at.get("vega_lite_chart") if "DSCR [x]" in c.proto.spec]
    assert len(specs) == 1 and "DSCR tested" not in specs[0]
    assert '"rule"' in specs[0]  # the floor, read against the month's own DSCR


def test_the_annual_pnl_names_its_money_unit_in_the_table_its_csv_download_writes():
    """The P&L's unit was only in the heading above it: its toolbar's CSV held 2.42 for a
    revenue of 2,420,870 USD in "million USD" with no unit in any cell. The corner of the
    table (its index's name, the CSV's first cell) now names it, as the debt schedule's rows do."""
    from econ.ui import state

    at = results()
    at.sidebar.radio(key=state.MONEY).set_value("million USD").run()
    assert not at.exception, at.exception
    pnl = [d.value for d in at.dataframe if "EBITDA" in list(d.value.index)]
    assert len(pnl) == 1
    assert pnl[0].index.name == "Line item [million USD]"
    assert pnl[0].loc["Revenue"].iloc[0] == __import__("pytest").approx(2.4208696, abs=1e-6)


def test_download_names_are_neither_hidden_nor_longer_than_a_file_system_takes():
    """A scenario named ".." was downloaded as "..toml", which the browser saved as
    "-edited-9d9f53c0.toml" (leading dots stripped: a hidden file's name); 200 "名" made
    names of 640 bytes, over the 255 bytes of a file name on ext4, APFS and NTFS, which the
    browser cuts, the edited hash and the kind first."""
    from econ.ui.compute import file_stem

    assert file_stem("..") == "scenario"
    assert file_stem("../x") == "_x"
    assert file_stem(".hidden name") == "hidden_name"
    assert file_stem("deepseek-r1-gb200-nvl72") == "deepseek-r1-gb200-nvl72"
    long = file_stem("名" * 200)
    assert long == "名" * 50 and len(long.encode()) <= 150  # whole characters, never a half
    # the longest name a file gets: the stem, "-edited-" and 8 hex digits, the longest suffix
    assert len((long + "-edited-12345678.tranches.summary.parquet").encode()) <= 255
    assert file_stem("a" * 200) == "a" * 150


def test_the_export_page_says_as_many_memo_pages_as_econ_memo_and_its_docs():
    """The Export page promised "one to four pages"; the capital stack's memo prints six, as
    `econ memo --help` and docs/memo.md say ("one to six")."""
    at = results()
    at.switch_page("econ/ui/pages/export.py").run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "one to six pages" in text and "one to four" not in text
    assert "one to\nsix A4 pages" in (ROOT / "docs" / "memo.md").read_text()


def test_a_prepared_export_shows_its_downloads_not_its_prepare_button_again():
    """Clicking "Prepare the JSON" drew the download under a "Prepare the JSON" button still
    there, as if not yet done (until the next click anywhere redrew the page without it)."""
    at = results()
    at.switch_page("econ/ui/pages/export.py").run()
    assert "Prepare the JSON" in [b.label for b in at.button]
    next(b for b in at.button if b.label == "Prepare the JSON").click().run()
    assert not at.exception, at.exception
    labels = [b.label for b in at.button]
    assert "Prepare the JSON" not in labels
    assert "Summary (JSON)" in [b.label for b in at.get("download_button")]
