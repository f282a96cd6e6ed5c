"""Saving the scenario being edited to the scenario library (Library and Scenario pages).

A save is made against the library version the edits started from (state.LIBRARY_BASE: the version
loaded, opened from a link, or last saved in this session), as `econ library save --base` does: when
a colleague has saved a newer version since, nothing is saved and the page says so, naming both
versions, with a button to save anyway as a new version. Edits that started from no version of a
name the library holds (a ready-made scenario, an upload, a kept copy of either, a scenario renamed
to a stored name) are refused the same way: saved unasked, they would become the newest version over
what is there; a name that was free when the page looked is saved with `new`, so that a colleague's
save of it in between is refused by the library too. Nothing a colleague saved is ever undone
without the user being asked. Names are compared in NFC, as the library stores them, however a file
spells them.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import streamlit as st

from econ.ui import state
from econ.ui.fmt import literal

CONFLICT = "econ.library_conflict"
"""The stale save waiting for the user's answer: Stale's fields as a dict."""

AUTHOR = "econ.library_author"
"""The name a save or restore records as its author, from the author boxes (kept in the
session)."""

LOG = logging.getLogger("econ.ui")

UNSAYABLE = (
    "The app's library cannot be used as asked just now; the server's log says why (its "
    "message names where the library is, which the app does not show)."
)


def library_message(error: Exception | str, typed: Sequence[str] = ()) -> str:
    """A library error as the app shows it: the library named "the app's library", never by the
    URL, file or folder that locate it on the server, and no password (a visitor may not know
    where the server keeps its data). Where a location would still show, UNSAYABLE is shown and
    the message goes to the server's log. `typed`: what the visitor typed (the scenario's name,
    a tag), which the message may quote however much it looks like a path."""
    from econ.library import hide_credentials, resolve_url
    from econ.library.store import hide_location

    text = str(error)
    shown = hide_location(text, resolve_url()[0], typed)
    if shown is None:
        LOG.warning("a library message not shown in the app: %s", hide_credentials(text))
        return UNSAYABLE
    return shown


def library_kind(display: str) -> str:
    """What the library is, said without where: for the Library page's caption."""
    return (
        "a SQLite file on the server" if display.startswith("sqlite") else "a PostgreSQL database"
    )


@dataclass(frozen=True)
class Stale:
    """A save refused because the library moved on since the edits' version."""

    name: str
    base: int | None
    """The version the edits started from; None: no version of this name."""
    latest: int
    """The newest version in the library now."""
    author: str
    saved_utc: str

    def message(self, diff_where: str = "on the Library page") -> str:
        when = self.saved_utc.replace("T", " ").removesuffix("Z")
        newest = (
            f"Nothing was saved: {self.name} is now at version {self.latest} in the library "
            f"(saved by {self.author} at {when} UTC)"
        )
        if self.base is None or self.base > self.latest:
            started = (
                "did not start from a version of it in the library (they started from a "
                "ready-made scenario, an uploaded file or another name)"
                if self.base is None
                else f"started from version {self.base}, which this library does not hold"
            )
            return (
                f"{newest}, but your edits {started}. Saved now, your copy would become version "
                f"{self.latest + 1} and replace what version {self.latest} holds as the newest. "
                f"See version {self.latest} {diff_where} (History, Diff two versions) and bring "
                "your edits into it, save under another name, or save anyway as a new version."
            )
        changed = (
            f"version {self.latest}"
            if self.latest == self.base + 1
            else f"versions {self.base + 1} to {self.latest}"
        )
        return (
            f"{newest}, but your edits "
            f"started from version {self.base}. Saved now, your copy would become version "
            f"{self.latest + 1} and undo what {changed} changed. Compare versions {self.base} "
            f"and {self.latest} {diff_where} (Diff two versions) and bring those changes into "
            "your edits, or save anyway as a new version."
        )

    def kept(self) -> str:
        """What an answer of "save anyway" keeps in the history."""
        if self.base is None or self.base > self.latest:
            return f"versions 1 to {self.latest} stay" if self.latest > 1 else "version 1 stays"
        return f"versions {self.base} to {self.latest} stay"


def _name(data) -> str | None:
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _same(a, b) -> bool:
    """Whether two scenario names are one name to the library: equal in NFC (how it stores
    names), so a name a file spells decomposed (NFD) is the name stored composed."""
    return (
        isinstance(a, str)
        and isinstance(b, str)
        and unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
    )


def _origin(name: str | None) -> int | None:
    """The library version the edits of scenario `name` started from, if known."""
    origin = st.session_state.get(state.LIBRARY_BASE)
    if name and isinstance(origin, dict) and _same(origin.get("name"), name):
        version = origin.get("version")
        return version if isinstance(version, int) else None
    return None


def _newest(library, name: str):
    """The newest VersionInfo of `name` in the library, or None when it holds no such name (or
    only a deleted one: saving brings it back as a new version). A database failure raises.

    The name is looked up as the library saves to it: as typed, else in NFC, else in NFD."""
    found = {info.name: info for info in library.list() if _same(info.name, name)}
    spellings = [name, *(unicodedata.normalize(form, name) for form in ("NFC", "NFD"))]
    return next((found[s] for s in spellings if s in found), None)


def _stale(base: int | None, newest) -> Stale:
    stale = Stale(newest.name, base, newest.version, newest.author, newest.created_utc)
    st.session_state[CONFLICT] = asdict(stale)
    return stale


def default_author() -> str:
    """Who the library records when the author box is empty (Library.recorded_author):
    ECON_AUTHOR, else on SQLite the account the server runs under; on PostgreSQL the database
    role the app connects as, beside ECON_AUTHOR where that is given ('ada (role bob)'). Where
    the library cannot be opened (the page and a save say why): ECON_AUTHOR, else the account."""
    import os

    from econ.library import LibraryError, resolve_url
    from econ.library.store import given_author, login_name

    recorded = _recorded_author(resolve_url()[0], os.environ.get("ECON_AUTHOR"))
    if recorded is not None:
        return recorded
    try:
        return given_author() or login_name()
    except LibraryError:  # (an ECON_AUTHOR the library refuses)
        return login_name()


AUTHOR_TTL_S = 300
"""How long the app keeps what a library records as the author [s]: a server that does not
answer is not waited for at every rerun of a page with an author box."""


@st.cache_data(max_entries=8, ttl=AUTHOR_TTL_S, show_spinner=False)
def _recorded_author(url: str, given: str | None) -> str | None:
    """Library.recorded_author of the library at `url` (None where it cannot be opened), asked
    once per URL and ECON_AUTHOR in AUTHOR_TTL_S."""
    from econ.library import LibraryError, open_library

    try:
        with open_library(url, create=False) as library:
            return library.recorded_author(given)
    except LibraryError:
        return None


def author_box(page: str) -> None:
    """The author box of a page that saves to the library: one name for the session, empty for
    the server's account, as before the box (a shared app's saves were all credited to that one
    account, and their authors could not be told apart).

    Each page's box has a key of its own (`page`), seeded from the session's name (AUTHOR) and
    writing to it: two boxes of one key on two pages lost the name at a page switch, the new
    page's box starting empty while the old one's state was still in the session."""
    ss = st.session_state
    key = f"{AUTHOR}.{page}"
    if key not in ss:
        ss[key] = ss.get(AUTHOR, "")
    default = default_author()
    st.text_input(
        "Author",
        key=key,
        on_change=lambda: ss.__setitem__(AUTHOR, ss[key]),
        placeholder=default,
        help="Recorded as the author of what you save or restore in the library (its History "
        f"shows it). Empty: {default}, as the library records it (ECON_AUTHOR, else the "
        "server's own account; on a PostgreSQL library, the database role the app connects "
        "as, which is also kept beside a name given here).",
    )


def author() -> str | None:
    """The author box's name, or None (the library's default) when it is empty."""
    given = st.session_state.get(AUTHOR)
    return given.strip() if isinstance(given, str) and given.strip() else None


def save(
    library,
    data: dict,
    *,
    message: str = "",
    tags: Sequence[str] = (),
    anyway: bool = False,
):
    """Save `data` (the scenario being edited) as a new version of its name in `library`: the
    VersionInfo saved, or Stale (nothing saved) when the library holds a version of the name
    newer than the one the edits started from, or any version when they started from none.
    `anyway`: the user has seen the pending Stale and saves over it (still refused if yet
    another version arrived since). Raises InputError when the library refuses the text."""
    from econ.library import LibraryError

    ss = st.session_state
    name = _name(data)
    origin = base = _origin(name)
    pending = ss.get(CONFLICT)
    if anyway and pending and _same(pending["name"], name) and pending["base"] == origin:
        base = pending["latest"]  # the version the user was told of
    newest = _newest(library, name) if name else None
    if newest is None:
        base = None  # a name the library does not hold (any more): a new scenario
    elif newest.version != base:
        return _stale(origin, newest)
    try:
        info = library.save_text(
            state.toml_text(data),
            origin="the current scenario",
            message=message,
            tags=list(tags),
            author=author(),
            base=base,
            new=newest is None,  # refused if a colleague saves the name in between
        )
    except LibraryError:
        newest = _newest(library, name) if name else None
        if newest is not None and newest.version != base:  # saved by someone in between
            return _stale(origin, newest)
        raise
    ss.pop(CONFLICT, None)
    ss[state.LIBRARY_BASE] = {"name": info.name, "version": info.version}
    return info


def saved(info) -> str:
    """What a save says: the name and version, and that the save brought back a deleted
    scenario (as `econ library save` says), which whoever saves may not know of."""
    back = "; it had been deleted, and is restored by this save" if info.undeleted else ""
    return f"Saved {info.name} version {info.version}{back}"


def pending() -> Stale | None:
    """The stale save of the scenario being edited that waits for an answer, if any."""
    ss = st.session_state
    conflict = ss.get(CONFLICT)
    if not conflict:
        return None
    name = _name(ss.get(state.DATA))
    if not _same(conflict["name"], name) or conflict["base"] != _origin(name):
        return None  # another scenario, or another version of it, is being edited now
    return Stale(**conflict)


def show_stale(diff_where: str, on_anyway: Callable[[], None] | None = None, key: str = "") -> bool:
    """The warning of a pending stale save, naming both versions, and its "Save anyway as a new
    version" button (`on_anyway` its callback); True when the button was clicked in this run."""
    stale = pending()
    if stale is None:
        return False
    st.warning(literal(stale.message(diff_where)), icon=":material/warning:")
    return st.button(
        "Save anyway as a new version",
        key=f"econ.save_anyway.{key}",
        on_click=on_anyway,
        icon=":material/save_as:",
        help=f"Saves your copy as version {stale.latest + 1} of {literal(stale.name)}; "
        f"{stale.kept()} in its history.",
    )


__all__ = ["AUTHOR", "CONFLICT", "Stale", "author", "author_box", "pending", "save", "show_stale"]
