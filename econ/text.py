"""Text from outside that econ writes: neutralized for spreadsheets, escaped for terminals and
for markdown, cut short for messages.

Spreadsheets: formula-injection neutralization for every writer of text cells.

A CSV cell that a spreadsheet reads as a formula can run code or leak data when the file is opened
(OWASP, "CSV Injection"). A cell is treated as formula-like when it starts with `=`, `+`, `-`, `@`,
a tab or a carriage return, or when it does so after leading characters an application may drop or
fold before reading the cell: Unicode whitespace (space, no-break space, ideographic space, line
and paragraph separators), zero-width and other format characters (zero-width space, joiners, word
joiner, soft hyphen, byte-order mark), control characters, and compatibility forms of the four
signs (full-width `＝＋－＠`, small `﹦﹢﹣﹫`: compared after NFKC normalization). LibreOffice's CSV
import with "trim spaces" turns `" =1+1"` into a formula; other readers trim or fold other
characters. Such text gets a leading apostrophe, and so does text that would read as such text
once written (apostrophes before formula-like text: `'=1` is written `''=1`, or it would be read
back as `=1`, and a name `'=1` written as the name `=1` is); nothing else changes, so a reader
that knows the convention removes one apostrophe to get the text back (`restore`), and no two
texts are written alike.

Terminals: text read from a file someone else wrote (a scenario's keys, a benchmark file's model
name, a market index's source column, a file name) must not reach a terminal raw, where an
escape sequence (ESC, CSI U+009B, OSC) can erase a line, print a fake one, set the window title
or hide what follows, a carriage return can overwrite what was printed, and a bidirectional
override (U+202E) can show a name backwards. `printable` writes such characters as Python
escapes (`\\x1b`, `\\u202e`); what was printable stays as it is, so escaping twice changes
nothing. Messages name a value with `shortened` (repr, cut to QUOTED_LIMIT characters), a name
with `clipped` and a list of names with `listed` (the first few, then how many more), so that a
file of a million columns does not make a message of megabytes.

Cells: `single_line` writes a text's line feeds and carriage returns as escapes, so that texts
joined one a line in one cell (a scenario's warnings) split back into exactly those texts.

Markdown: `markdown_text` escapes text so that a markdown renderer (the app's Streamlit, a viewer
of a `--report` file) shows it as typed, with no image, link, HTML, style or table cell made of it.

This module imports nothing of econ: the importers, the table writers, the workbook, the command
line and the scenario errors all use it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

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


def _prefixed(text: str) -> bool:
    """Whether `neutralize` prefixes `text`: formula-like once its leading apostrophes are dropped
    (none: the formula-like text; some: text that would read as a neutralized one)."""
    return looks_like_formula(text.lstrip("'"))


def neutralize(value):
    """`value` with a leading apostrophe when it is formula-like text, or apostrophes before
    formula-like text (`'=1` is `''=1`: two texts are never written alike); anything else
    unchanged."""
    if isinstance(value, str) and _prefixed(value):
        return "'" + value
    return value


def restore(text: str) -> str:
    """The text `neutralize` was given: one leading apostrophe removed when what follows it is
    one `neutralize` prefixes, so a reader of a file econ wrote gets back the text it read before
    writing (`restore(neutralize(t)) == t` for every text)."""
    if text.startswith("'") and _prefixed(text[1:]):
        return text[1:]
    return text


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The bidirectional embeddings, overrides and isolates: invisible, they reorder the text after
them (U+202E shows `safe-\u202egnp.exe` as safe-exe.png), on a terminal, in a table, in a memo."""


def control_character(text: str, allowed: str = "") -> tuple[int, str] | None:
    """The first control character of `text` not in `allowed` (a C0 control, DEL, a C1 control,
    one of BIDI_CONTROLS) and its 1-based position, or None: what scenario sections and market
    index files refuse in text."""
    found = _controls(allowed).search(text)
    return None if found is None else (found.start() + 1, found.group())


@functools.cache
def _controls(allowed: str) -> re.Pattern:
    """A pattern of the characters `control_character` looks for but those in `allowed`: Unicode's
    Cc category is exactly U+0000-U+001F and U+007F-U+009F."""
    chars = "".join(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))) + "".join(
        sorted(BIDI_CONTROLS)
    )
    return re.compile("[" + re.escape("".join(c for c in chars if c not in allowed)) + "]")


def control_kind(char: str) -> str:
    """What a character `control_character` found is, in words."""
    return "a bidirectional control character" if char in BIDI_CONTROLS else "a control character"


TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What `printable` escapes in text of several lines: the control characters of
`control_character` but line feed and tab, i.e. the C0 controls, DEL, the C1 controls
(U+0080-U+009F: U+009B is a CSI, U+009D an OSC on terminals that take 8-bit controls) and
BIDI_CONTROLS."""


def _escaped(char: str) -> str:
    """A character as Python writes it in a string literal: ESC as \\x1b, U+202E as \\u202e."""
    return char.encode("unicode_escape").decode("ascii")


def printable(text: Any, *, line: bool = False) -> str:
    """`text` (str() of it) safe to write to a terminal: the characters of TERMINAL_CONTROLS
    written as Python escapes (ESC as \\x1b, CR as \\r, U+009B as \\x9b, U+202E as \\u202e);
    line feeds and tabs stay. `line=True`, for one line (a table cell, a name): every character
    Python does not count as printable is escaped, line feeds and tabs too, and also the
    invisible ones (format characters such as a zero-width space, line and paragraph separators,
    spaces other than ' ', private-use and unassigned code points), so that what a name is can
    be seen. Backslashes are kept, so escaping what was escaped changes nothing."""
    text = str(text)
    if line:
        if text.isprintable():
            return text
        return "".join(c if c.isprintable() or c == " " else _escaped(c) for c in text)
    return TERMINAL_CONTROLS.sub(lambda match: _escaped(match.group()), text)


WARNING_SEPARATOR = "\n"
"""Between a scenario's warnings where they share one cell: the summary's `warnings` column in CSV
and Parquet (econ.reporting.flat_summary) and in a sweep's rows. No warning holds a line break
(`econ.engine.Projection.warnings` writes one as an escape, `single_line`), so the cell split at
its line feeds gives the warnings back, one for one; many hold "; "."""


def single_line(text: str) -> str:
    """`text` as one line: line feeds and carriage returns written as Python escapes (`\\n`,
    `\\r`), everything else as it is. A warning is one line (WARNING_SEPARATOR joins a scenario's
    warnings in one cell), whatever a file it quotes holds."""
    if "\n" not in text and "\r" not in text:
        return text
    return text.replace("\n", "\\n").replace("\r", "\\r")


QUOTED_LIMIT = 80
"""Characters of a value or a name a message quotes; a longer one is cut, saying how long it was."""
PATH_LIMIT = 4096
"""Characters of a file's name a message quotes (Linux's PATH_MAX: no real path is cut)."""
LISTED_LIMIT = 10
"""Items of a list a message names; the others are counted ("... and 999,990 more")."""


def clipped(text: Any, limit: int = QUOTED_LIMIT) -> str:
    """`text` (str() of it) as one printable line of at most `limit` characters: cut, saying how
    long it was ("aaaa... (100,000 characters)")."""
    text = str(text)
    if len(text) > limit:
        return f"{printable(text[:limit], line=True)}... ({len(text):,} characters)"
    return printable(text, line=True)


def shortened(value: Any, limit: int = QUOTED_LIMIT) -> str:
    """repr(value), cut to `limit` characters (a 20 MB string is not a message)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


_MARKUP = re.compile(r"[\\`*\[\]<$~|]")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_LOOSE_UNDERSCORE = re.compile(r"_(?![^\W_])|(?<![^\W_])_")
_LINE_START = re.compile(r"^( {0,3})([#>])", re.MULTILINE)  # a heading, a quote
_SCHEME = re.compile(r"(https?|ftp|mailto|xmpp)(?=:)", re.IGNORECASE)
_WWW = re.compile(r"(www)(?=\.)", re.IGNORECASE)
_AT = re.compile(r"(?<=[\w.+-])@(?=[\w-]+\.[\w-])")  # a mail address, not NAME@VERSION
_DIRECTIVE = re.compile(r":(?=[^\s!-/:-@\[-`{-~]|[+-][\w+-]*:)")
"""A colon that may start a directive (`:red[...]`, `:foo{...}`: a directive's name starts with
anything but a space or a punctuation mark), an icon (`:material/warning:`, `:streamlit:`) or an
emoji shortcode (`:smile:`, `:+1:`)."""
_TYPOGRAPHIC = re.compile(r"(?:^|(?<=[\s\ufeff]))(?:<->|->|<-|--|>=|<=|~=)(?=\s|$)", re.MULTILINE)
"""What Streamlit's markdown turns into a symbol between spaces: "a -> b" into "a → b", "--"
into an em dash, ">=" into "≥"."""
_SHORTCODE = re.compile(r"\\:(?=[+-]?[\w/+-]*:)")
"""An escaped colon that opens an icon (`:material/warning:`) or an emoji shortcode (`:smile:`,
`:+1:`): the plugins that draw them read past the escape, and a word joiner keeps them apart."""
WORD_JOINER = "\u2060"
"""An invisible character that keeps a web or mail address, a directive or an emoji shortcode
in text from becoming a link, a style or a picture."""


def markdown_text(text: Any, *, line: bool = False) -> str:
    """`text` (str() of it) made safe to show through markdown exactly as typed: no image, link,
    HTML, code, emphasis, heading, maths, strikethrough or table cell comes out of it, and
    none of what Streamlit and GitHub add (`:red[...]` colours, `:material/icon:` icons,
    `:smile:` emoji, "->" drawn as an arrow).

    Markdown's characters are escaped with a backslash (an underscore inside a word, such as a
    field's path, needs none; a colon where a directive, an icon or an emoji shortcode could
    start), and an invisible word joiner goes into "https:", "www." and "@", after a colon
    that opens an icon or an emoji shortcode, and between the two characters of an arrow:
    GitHub-flavoured markdown turns such addresses into links even when escaped, and Streamlit
    reads icons, emoji and arrows in the text an escape leaves. A line starting "- " stays a list item (the app's own lists of messages).
    Control characters and bidirectional overrides are written as escapes first (`printable`):
    a browser shows no terminal escape, but an override reorders what follows it. `line=True`,
    for a table cell or a heading: one line, line feeds and tabs written as escapes too
    (`printable`'s `line`), so that no cell breaks its row.
    """
    out = printable(text, line=line)
    out = _TYPOGRAPHIC.sub(lambda m: m.group()[0] + WORD_JOINER + m.group()[1:], out)
    out = _MARKUP.sub(lambda m: "\\" + m.group(), out)
    out = _ENTITY.sub("\\&", out)
    out = _LOOSE_UNDERSCORE.sub("\\_", out)
    out = _LINE_START.sub(r"\1\\\2", out)
    out = _SCHEME.sub(lambda m: m.group(1) + WORD_JOINER, out)
    out = _WWW.sub(lambda m: m.group(1) + WORD_JOINER, out)
    out = _AT.sub(WORD_JOINER + "@", out)
    # escaped, a colon starts no directive (a name, a label and {attributes} are text); where it
    # opens an icon or an emoji, which their plugins read past the escape, a joiner follows (only
    # there: text copied from the app, such as library:NAME@2, keeps no invisible character)
    out = _DIRECTIVE.sub(lambda m: "\\:", out)
    return _SHORTCODE.sub(lambda m: "\\:" + WORD_JOINER, out)


PROBLEM_LINES_LIMIT = 20
"""Problems a message lists one a line at most: a file of 20,000 unknown keys printed 20,000 lines
(3.5 MB) on the command line and in the app."""


def problem_lines(lines: Sequence[str], limit: int = PROBLEM_LINES_LIMIT) -> list[str]:
    """The first `limit` of a message's problems, one a line, then how many more there are."""
    more = len(lines) - limit
    if more <= 0:
        return list(lines)
    return [
        *lines[:limit],
        f"... and {more:,} more problem{'s' if more > 1 else ''} (fix these first)",
    ]


def listed(items: Iterable[Any], limit: int = LISTED_LIMIT) -> str:
    """The items, comma-separated, each `clipped`: the first `limit`, then how many more
    ("c0, c1, ..., c9 ... and 999,990 more")."""
    items = list(items)
    shown = ", ".join(clipped(item) for item in items[:limit])
    more = len(items) - limit
    return f"{shown} ... and {more:,} more" if more > 0 else shown


CLOSE_RATIO = 0.6
"""How alike (difflib's ratio, 0 to 1) a valid name must be to one misspelt to be suggested:
difflib.get_close_matches' own cutoff."""
CLOSEST_MARGIN = 0.1
"""How far below the closest name another may rate and still be suggested with it: a slip of a
letter (utilization.shar) rates its field 0.97 and the section's other fields, which share the
prefix, 0.7 or less; they are not suggested."""
CLOSE_LENGTH = 200
"""Characters of a misspelt name compared at most (difflib takes time quadratic in them)."""


def closest_names(name: str, valid: Iterable[str], n: int = 3) -> list[str]:
    """The names in `valid` clearly close to a misspelt `name`, closest first, at most `n`: those
    rated at least CLOSE_RATIO and within CLOSEST_MARGIN of the closest; none where no name is
    close, or where `name` is longer than CLOSE_LENGTH characters."""
    import difflib

    if len(name) > CLOSE_LENGTH:
        return []
    rated = [(difflib.SequenceMatcher(None, name, v).ratio(), v) for v in dict.fromkeys(valid)]
    rated = sorted((r for r in rated if r[0] >= CLOSE_RATIO), key=lambda r: -r[0])
    return [v for ratio, v in rated[:n] if ratio >= rated[0][0] - CLOSEST_MARGIN]


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """The hint "did you mean 'gpu_count'? " (or two, three names joined by "or") for the
    `closest_names` to `name`; "" where none is close."""
    close = closest_names(name, valid)
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


__all__ = [
    "BIDI_CONTROLS",
    "FORMULA_PREFIXES",
    "FORMULA_SIGNS",
    "LISTED_LIMIT",
    "PATH_LIMIT",
    "PROBLEM_LINES_LIMIT",
    "QUOTED_LIMIT",
    "TERMINAL_CONTROLS",
    "WORD_JOINER",
    "clipped",
    "closest_names",
    "control_character",
    "control_kind",
    "did_you_mean",
    "listed",
    "looks_like_formula",
    "markdown_text",
    "neutralize",
    "printable",
    "problem_lines",
    "restore",
    "shortened",
    "single_line",
    "WARNING_SEPARATOR",
]
