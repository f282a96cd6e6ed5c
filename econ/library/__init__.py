"""The scenario library: every saved version of a team's scenarios, with history, diffs and cached
results, in SQLite (a per-user file, the default) or PostgreSQL (shared by a team).

Which library: `--library URL` on the command line, else the ECON_LIBRARY environment variable,
else the SQLite file `$XDG_DATA_HOME/econ/library.db` (`~/.local/share/econ/library.db` when
XDG_DATA_HOME is unset). URLs: `sqlite:///PATH.db`, `postgresql+psycopg://USER@HOST/DB`.

This module is light (no SQLAlchemy import) so that every command can accept `library:NAME[@V]`
without paying for the database layer until a library scenario is actually named; the store lives
in econ.library.store.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from econ.errors import InputError
from econ.text import clipped, shortened

if TYPE_CHECKING:
    from econ.library.store import Library
    from econ.scenario import Scenario

PREFIX = "library:"
"""How a scenario argument names a library scenario: library:NAME or library:NAME@VERSION."""

ENV_VAR = "ECON_LIBRARY"

_USERINFO_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*:/{1,2}[^\s:/?#@]*:)\S*@")
"""SCHEME://USER:PASSWORD@: the password runs to the last '@' before a blank, so that one holding an
unescaped '@' or '/' is hidden whole; also after one slash, as a URL typed where a file belongs
is quoted back as a path (which writes '//' as '/')."""
_QUERY_PASSWORD = re.compile(r"(password=)[^&#\s]*?(?=[:'\"),;.]*(?:[&#\s]|$))", re.IGNORECASE)
"""?password=... (and sslpassword=...), which libpq also reads from a URL's query: up to the next
parameter or blank, leaving the punctuation of the message that follows a URL at its end
(`URL: opening failed`, `'URL'`)."""

_URL: contextvars.ContextVar[str | None] = contextvars.ContextVar("econ_library_url", default=None)


class LibraryError(InputError):
    """A library that cannot be opened or used as asked, or a name/version it does not hold."""


def default_path() -> Path:
    """The per-user SQLite file: $XDG_DATA_HOME/econ/library.db, else ~/.local/share/econ/."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "econ" / "library.db"


def resolve_url(url: str | None = None) -> tuple[str, str]:
    """The library URL to use and where it came from (for messages).

    Order: the argument, then `using_url` (the CLI's --library), then ECON_LIBRARY, then the
    per-user SQLite file. An empty URL given (`--library ""`, a variable that was not set) is
    refused, not read as none: it would silently open another library.
    """
    for given in (url, _URL.get()):
        if given is not None:
            _refuse_empty(given)
            return given, "--library"
    if os.environ.get(ENV_VAR):
        return os.environ[ENV_VAR], ENV_VAR
    return f"sqlite:///{default_path()}", "the default location"


def hide_credentials(text: str) -> str:
    """`text` with every password it holds written as *** (in a URL's user part, and in a
    password=... parameter): for any message that may quote a library URL, econ's own or one
    argparse or the database driver writes."""
    return _QUERY_PASSWORD.sub(r"\1***", _USERINFO_PASSWORD.sub(r"\1***@", text))


def command_line(verb: str, *refs: str, library: str | None = None) -> str:
    """`econ library VERB [--library URL] REF...` as a message suggests it, ready to paste: the
    URL and each name quoted for the shell where it holds a space or other special character, and
    `--` (after every option) before the names where one starts with '-' (which the command line
    would read as an option). A name holding a character that is not printable (a no-break space,
    U+2028, stored before names were checked) is written as $'...' with escapes (bash, zsh),
    never raw. `library`: the library to name (None: the one ECON_LIBRARY or the default gives);
    a URL holding a password is the caller's to withhold (`Library.suggest`)."""
    import shlex

    def quoted(ref: str) -> str:
        if ref.isprintable():
            return shlex.quote(ref)
        body = "".join(c if c.isprintable() and c not in "\\'" else _shell_escape(c) for c in ref)
        return f"$'{body}'"

    options = [] if library is None else ["--library", quoted(library)]
    dashes = ["--"] if any(str(r).startswith("-") for r in refs) else []
    return " ".join(["econ", "library", verb, *options, *dashes, *(quoted(str(r)) for r in refs)])


def _shell_escape(char: str) -> str:
    code = ord(char)
    if char in "\\'":
        return "\\" + char
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _refuse_empty(url: str) -> None:
    if not url.strip():
        raise LibraryError(
            f"--library = {url!r}: an empty URL; expected a library URL, sqlite:///PATH.db or "
            "postgresql+psycopg://USER@HOST/DATABASE (leave --library out for ECON_LIBRARY, else "
            "the per-user library)"
        )


@contextlib.contextmanager
def using_url(url: str | None) -> Iterator[None]:
    """Within the block, library: names and library commands use `url` (None: no change;
    LibraryError for an empty one)."""
    if url is not None:
        _refuse_empty(url)
    token = _URL.set(url) if url is not None else None
    try:
        yield
    finally:
        if token is not None:
            _URL.reset(token)


@dataclass(frozen=True)
class Ref:
    """NAME or NAME@VERSION (version None: the latest)."""

    name: str
    version: int | None = None

    def __str__(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"


HEADER = "# econ library: "
"""How the first line `econ library show` writes starts: `# econ library: NAME@V`, V the version
shown. `save` and `import` read it as the version the file was edited from."""
_HEADER_LINE = re.compile(r"# econ library: ([^@\r\n]+)@([0-9]{1,12})[ \t]*\r?\n")


def split_header(text: str) -> tuple[Ref | None, str]:
    """(NAME@V of a first line `# econ library: NAME@V`, or None; the text after that line).
    The line is `show`'s, not the scenario's: the text after it is what a save or an import
    stores, so a file `show` wrote and stored unedited stores the version's text exactly."""
    match = _HEADER_LINE.match(text)
    if match is None:
        return None, text
    return Ref(match.group(1), int(match.group(2))), text[match.end() :]


def parse_ref(text: str, *, need_version: bool = False) -> Ref:
    """Parse NAME[@VERSION] (a leading library: is allowed); VERSION is a whole number >= 1."""
    body = text.removeprefix(PREFIX)
    name, at, version = body.rpartition("@")
    if not at:
        name, version = body, ""
    if not name:
        raise LibraryError(
            f"{shortened(text)}: expected NAME or NAME@VERSION, e.g. deepseek-r1-gb200-nvl72@3"
        )
    # ASCII digits only ('²' is a digit to str.isdigit, not to int), and at most 100 of them
    # (int() refuses more than 4,300); a number beyond every stored version is "no version N"
    digits = version.isascii() and version.isdigit() and len(version) <= 100
    if at and not (digits and int(version) >= 1):
        shown = (
            version if len(version) <= 40 else f"{version[:40]}... ({len(version):,} characters)"
        )
        raise LibraryError(
            f"{text[:80]!r}: version {shown!r} is not a version number; expected NAME@N with "
            "N = 1, 2, ... (see `econ library history NAME`)"
        )
    if need_version and not at:
        raise LibraryError(f"{shortened(text)}: expected NAME@VERSION, e.g. {clipped(name)}@1")
    return Ref(name, int(version) if at else None)


def open_library(url: str | None = None, **options: Any) -> Library:
    """Open the library at `url` (see resolve_url): to write it (the default; an older library
    is upgraded, a new one created by its first write), or only to read it (create=False:
    nothing is ever written; see econ.library.store.Library)."""
    from econ.library.store import Library

    return Library(url, **options)


def load_library_scenario(
    text: str, overrides: Mapping[str, Any] | Iterable[str] | None = None
) -> Scenario:
    """The Scenario named by `library:NAME[@VERSION]`, with dotted-path overrides applied (a
    library that does not exist yet is not created: it holds no scenario)."""
    with open_library(create=False) as library:  # closed here: a CLI run may load several refs
        return library.load(parse_ref(text), overrides)


__all__ = [
    "ENV_VAR",
    "HEADER",
    "PREFIX",
    "LibraryError",
    "Ref",
    "command_line",
    "default_path",
    "hide_credentials",
    "load_library_scenario",
    "open_library",
    "parse_ref",
    "resolve_url",
    "split_header",
    "using_url",
]
