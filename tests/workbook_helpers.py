"""Reading the workbook's Summary sheet (one metric per row, a value column per scenario, the
summary key in the last column) in tests."""

from __future__ import annotations

from econ.workbook import SUMMARY_KEY


def summary_cells(ws) -> dict[str, list]:
    """Summary key -> the value cells of that row, one per scenario, in scenario order."""
    header = [c.value for c in ws[1]]
    key_column = header.index(SUMMARY_KEY) + 1
    out = {}
    for row in ws.iter_rows(min_row=2):
        key = row[key_column - 1].value
        if key is not None:
            out[str(key)] = list(row[2 : key_column - 1])
    return out


def summary_cell(ws, key: str, scenario: int = 0):
    """The Summary cell of `key` for scenario number `scenario` (0-based)."""
    return summary_cells(ws)[key][scenario]
