"""Reading the market index files of models/market/ (rental and resale): the text, the header,
the data rows, the dates; errors name the file, the line, the column, the cell that cannot be
used (`cell`: the user's own file, quoted short) and what was expected. A cell holding a control
character (ESC, CR, a C1 control, a bidirectional override; a line feed outside
MULTILINE_COLUMNS) is refused without quoting the text around it: the index's text (a series, a
source) is printed by `econ market` and the app."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from econ.errors import InputError
from econ.files import ReadError, read_regular
from econ.text import control_character, control_kind, shortened

MULTILINE_COLUMNS = ("source",)
"""Columns whose text may span lines (a quoted CSV field), as a scenario's description may; no
other control character is taken in any column."""
MAX_INDEX_BYTES = 64 * 1024 * 1024
"""Bytes of a market index file econ reads (the shipped ones are a few kilobytes)."""
FIRST_DATE = dt.date(2000, 1, 1)
LAST_DATE = dt.date(2100, 12, 31)
"""Dates an index point may carry: GPU rental and resale markets are of this century (GPU cloud
instances date from 2010), so a date outside is a typing error (2537 for 2025, 1900 for 2000)."""
DATE_EXPECTED = f"a date YYYY-MM-DD from {FIRST_DATE} to {LAST_DATE}"
CELL_LIMIT = 40
"""Characters of a cell an error quotes (its repr; a longer one is cut, saying how long)."""
POINT_WARNINGS_LIMIT = 3
"""Points of a file warned of one by one for each reason (a price above the bound, a jump, a
date after today); beyond, one warning counts them and names the first of them: a file of
20,000 future-dated rows printed 20,002 lines."""


def cell(text: str) -> str:
    """A cell as an error quotes it: its repr cut to CELL_LIMIT characters, or "empty"."""
    return shortened(text, CELL_LIMIT) if text else "empty"


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def cell_number(text: str, kind: type = float):
    """A cell's number as a spreadsheet or a CSV writes it ("2.5", "-3", "1e3"); ValueError for
    anything else, such as the underscores Python's float() and int() read ("2_5" is 25) and
    digits other than ASCII ones, which they read too (full-width "２５", Arabic-Indic "٢٥")."""
    if "_" in text:
        raise ValueError(f"{text!r} holds an underscore")
    if not text.isascii():
        raise ValueError(f"{text!r} holds a character other than ASCII digits, signs and letters")
    return kind(text)


def index_date(text: str) -> dt.date | None:
    """The date of a cell (YYYY-MM-DD, FIRST_DATE to LAST_DATE), or None. Only that form:
    Python's `fromisoformat` also reads 20240101 and 2024-W01-1."""
    if not _DATE.fullmatch(text):
        return None
    try:
        date = dt.date.fromisoformat(text)
    except ValueError:
        return None
    return date if FIRST_DATE <= date <= LAST_DATE else None


def read_text(
    path: str | os.PathLike, what: str, error: type[InputError], limit: int = MAX_INDEX_BYTES
) -> str:
    """The file's text (UTF-8, a BOM allowed), or `error` naming the file and why not: missing,
    unreadable, a folder, a FIFO or a device, or larger than `limit` bytes."""
    try:
        content = read_regular(path, limit, f"a {what}")
    except ReadError as exc:
        raise error(str(exc)) from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    return decode(content, str(path), what, error)


def decode(content: bytes, name: str, what: str, error: type[InputError]) -> str:
    """An index file's bytes as text (UTF-8, a BOM allowed), or `error` naming the file."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error(f"{name}: cannot read the {what} (not UTF-8 text)") from None


def _records(text: str, name: str, expected: str, error: type[InputError]):
    """(line, fields) of each CSV record in turn, numbered by the line it starts on (a quoted
    field may span lines); a record that is not well-formed CSV (an unclosed quote, a field over
    the csv module's size limit, a NUL character) is refused with its line."""
    reader = csv.reader(io.StringIO(text), strict=True)
    end = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise error(
                f"{name}: line {end + 1}: not a well-formed CSV record ({exc}); expected "
                f"comma-separated fields {expected}"
            ) from None
        if any("\x00" in cell for cell in row):
            raise error(
                f"{name}: line {end + 1}: a NUL character; expected text fields ({expected})"
            )
        yield end + 1, row
        end = reader.line_num


def data_rows(
    text: str, name: str, columns: Sequence[str], what: str, error: type[InputError]
) -> Iterator[tuple[int, list[str]]]:
    """(line, stripped cells) of each data row of a CSV whose header must be `columns` exactly;
    the header is checked before any row is read; blank rows are skipped, a row with a missing
    or an extra field is refused, and so is a cell holding a control character
    (econ.text.control_character; line feeds in MULTILINE_COLUMNS)."""
    expected = ", ".join(columns)
    records = _records(text, name, expected, error)
    first = next(records, None)
    if first is None:
        raise error(f"{name}: empty file; expected a CSV header {expected}")
    header = [h.strip() for h in first[1]]
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
    for line, row in records:
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise error(
                f"{name}: line {line}: {len(row)} fields; expected {len(columns)} ({expected})"
            )
        cells = [cell.strip() for cell in row]
        for column, cell in zip(columns, cells, strict=True):
            multiline = column in MULTILINE_COLUMNS
            found = control_character(cell, "\n" if multiline else "")
            if found:  # (the character is named escaped, the text around it is not quoted)
                lines = "text (line feeds allowed)" if multiline else "one line of text"
                raise error(
                    f"{name}: line {line}, column {column}: {control_kind(found[1])} "
                    f"({found[1]!r}) at character {found[0]}; expected {lines} of printable "
                    "characters: no control characters such as ESC or CR, no bidirectional "
                    "overrides (they would rewrite or reorder what a terminal shows)"
                )
        yield line, cells


def modified_stamp(path: Path):
    """The file's modification time [ns] (a cache key: an edited file is read again), or None."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def point_warnings(name: str, reasons) -> list[str]:
    """The warnings of an index file's points that are read, not refused, as they may be right.

    `reasons` are (found, summary, expected): `found` the points of one reason in file order, each
    (where, what, short); a reason with up to POINT_WARNINGS_LIMIT points warns of each ("name:
    where: what; expected"), one with more counts them ("name: 20,000 points are <summary>: the
    first three where and short ... and 19,997 more; expected")."""
    warnings = []
    for found, summary, expected in reasons:
        if len(found) <= POINT_WARNINGS_LIMIT:
            warnings += [f"{name}: {where}: {what}; {expected}" for where, what, _ in found]
            continue
        first = "; ".join(
            where + (f": {short}" if short else "")
            for where, _, short in found[:POINT_WARNINGS_LIMIT]
        )
        more = len(found) - POINT_WARNINGS_LIMIT
        warnings.append(
            f"{name}: {len(found):,} points are {summary}: {first} ... and {more:,} more; "
            f"{expected}"
        )
    return warnings
