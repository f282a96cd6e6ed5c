"""Reading the market index files of models/market/ (rental and resale): the text, the header,
the data rows; errors name the file, the line and what was expected, never the file's content."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from econ.errors import InputError


def read_text(path: str | os.PathLike, what: str, error: type[InputError]) -> str:
    """The file's text (UTF-8, a BOM allowed), or `error` naming the file and why not."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise error(f"{path}: cannot read the {what} ({why})") from None


def data_rows(
    text: str, name: str, columns: Sequence[str], what: str, error: type[InputError]
) -> Iterator[tuple[int, list[str]]]:
    """(line, stripped cells) of each data row of a CSV whose header must be `columns` exactly;
    blank rows are skipped, a row with a missing or an extra field is refused."""
    expected = ", ".join(columns)
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        raise error(
            f"{name}: not a CSV file; expected a {what} with the columns {expected}"
        ) from None
    if not rows:
        raise error(f"{name}: empty file; expected a CSV header {expected}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in columns if c not in header]
    if missing or tuple(header) != tuple(columns):
        problem = (
            f"column {missing[0]} is missing"
            if missing
            else f"{len(header)} columns"
            if len(header) != len(columns)
            else "the columns are in another order"
        )
        raise error(
            f"{name}: line 1 (header): {problem}; expected a {what} with the columns {expected}"
        )
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise error(
                f"{name}: line {line}: {len(row)} fields; expected {len(columns)} ({expected})"
            )
        yield line, [cell.strip() for cell in row]


def modified_stamp(path: Path):
    """The file's modification time [ns] (a cache key: an edited file is read again), or None."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None
