"""Text that spreadsheets open: formula-injection neutralization for every writer of text cells.

A CSV cell that a spreadsheet reads as a formula can run code or leak data when the file is opened
(OWASP, "CSV Injection"). A cell is treated as formula-like when it starts with `=`, `+`, `-`, `@`,
a tab or a carriage return, or when it does so after leading characters an application may drop or
fold before reading the cell: Unicode whitespace (space, no-break space, ideographic space, line
and paragraph separators), zero-width and other format characters (zero-width space, joiners, word
joiner, soft hyphen, byte-order mark), control characters, and compatibility forms of the four
signs (full-width `＝＋－＠`, small `﹦﹢﹣﹫`: compared after NFKC normalization). LibreOffice's CSV
import with "trim spaces" turns `" =1+1"` into a formula; other readers trim or fold other
characters. Such text gets a leading apostrophe; nothing else changes, so a reader that knows the
convention removes one apostrophe to get the text back.

This module imports nothing of econ: the importers, the table writers and the workbook all use it.
"""

from __future__ import annotations

import unicodedata

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""Characters that start a formula (or, tab and CR, hide one) when a cell begins with them."""

FORMULA_SIGNS = ("=", "+", "-", "@")
"""Characters that start a formula once leading ignorable characters are dropped."""

_IGNORABLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def _ignorable(char: str) -> bool:
    """A character a reader may drop before the cell's first visible one: whitespace, control
    and format characters (zero-width space U+200B, BOM U+FEFF, soft hyphen U+00AD, ...)."""
    return char.isspace() or unicodedata.category(char) in _IGNORABLE_CATEGORIES


def looks_like_formula(text: str) -> bool:
    """True when a spreadsheet could read `text` as a formula (see the module docstring)."""
    if text.startswith(FORMULA_PREFIXES):
        return True
    for char in text:
        if _ignorable(char):
            continue
        return unicodedata.normalize("NFKC", char).startswith(FORMULA_SIGNS)
    return False


def neutralize(value):
    """`value` with a leading apostrophe when it is formula-like text; anything else unchanged."""
    if isinstance(value, str) and looks_like_formula(value):
        return "'" + value
    return value


def restore(text: str) -> str:
    """The text `neutralize` was given: one leading apostrophe removed when what follows is
    formula-like, so a reader of a file econ wrote gets back the text it read before writing."""
    if text.startswith("'") and looks_like_formula(text[1:]):
        return text[1:]
    return text


__all__ = ["FORMULA_PREFIXES", "FORMULA_SIGNS", "looks_like_formula", "neutralize", "restore"]
