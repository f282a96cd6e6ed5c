"""Write the "Monthly columns" table of docs/glossary.md from econ.labels.COLUMN_NOTES.

    .venv/bin/python scripts/columns_doc.py [--check]

The table lists every column of the monthly schedule (`Projection.monthly`, the CSV and Parquet
monthly tables, the workbook's Monthly sheet) with its unit and meaning, in the order the tables
give them; the same notes label the workbook's headers, so the page and the workbook cannot say
different things. It sits between two HTML comments in the glossary; nothing else there is
touched. With --check, exit 1 instead of writing when the page differs (tests/test_columns_doc.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: this checkout's econ
    sys.path.insert(0, str(ROOT))

from econ.engine import MONTHLY_COLUMNS  # noqa: E402
from econ.labels import COLUMN_NOTES  # noqa: E402

TARGET = ROOT / "docs" / "glossary.md"
BEGIN = "<!-- monthly columns: written by scripts/columns_doc.py -->"
END = "<!-- end of monthly columns -->"


def table() -> str:
    """The columns' table: `scenario`, `month`, `date`, then the engine's lines in engine order."""
    names = ["scenario", "month", "date", *MONTHLY_COLUMNS]
    rows = ["| column | unit | meaning |", "|---|---|---|"]
    for name in names:
        unit, meaning = COLUMN_NOTES[name]
        rows.append(f"| `{name}` | {_cell(unit)} | {_cell(meaning)} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(page: str) -> str:
    """`page` with the text between BEGIN and END replaced by the table."""
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    return page[:start] + "\n" + table() + "\n" + page[end:]


def main(argv: list[str] | None = None) -> int:
    """Write the table into docs/glossary.md; with --check, exit 1 instead if it is stale."""
    args = sys.argv[1:] if argv is None else argv
    page = TARGET.read_text(encoding="utf-8")
    text = render(page)
    if "--check" in args:
        if text == page:
            return 0
        print(f"{TARGET.relative_to(ROOT)} is stale: run scripts/columns_doc.py", file=sys.stderr)
        return 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
