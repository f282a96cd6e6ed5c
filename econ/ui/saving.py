"""Saving the scenario being edited to the scenario library (Library and Scenario pages).

A save is made against the library version the edits started from (state.LIBRARY_BASE: the
version loaded, opened from a link, or last saved in this session), as `econ library save --base`
does: when a colleague has saved a newer version since, nothing is saved and the page says so,
naming both versions, with a button to save anyway as a new version. Nothing a colleague saved is
ever undone without the user being asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import streamlit as st

from econ.ui import state
from econ.ui.fmt import literal

CONFLICT = "econ.library_conflict"
"""The stale save waiting for the user's answer: Stale's fields as a dict."""


@dataclass(frozen=True)
class Stale:
    """A save refused because the library moved on since the edits' version."""

    name: str
    base: int
    """The version the edits started from."""
    latest: int
    """The newest version in the library now."""
    author: str
    saved_utc: str

    def message(self, diff_where: str = "on the Library page") -> str:
        changed = (
            f"version {self.latest}"
            if self.latest == self.base + 1
            else f"versions {self.base + 1} to {self.latest}"
        )
        when = self.saved_utc.replace("T", " ").removesuffix("Z")
        return (
            f"Nothing was saved: {self.name} is now at version {self.latest} in the library "
            f"(saved by {self.author} at {when} UTC), but your edits "
            f"started from version {self.base}. Saved now, your copy would become version "
            f"{self.latest + 1} and undo what {changed} changed. Compare versions {self.base} "
            f"and {self.latest} {diff_where} (Diff two versions) and bring those changes into "
            "your edits, or save anyway as a new version."
        )


def _name(data) -> str | None:
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _origin(name: str | None) -> int | None:
    """The library version the edits of scenario `name` started from, if known."""
    origin = st.session_state.get(state.LIBRARY_BASE)
    if name and isinstance(origin, dict) and origin.get("name") == name:
        return origin.get("version")
    return None


def _newest(library, name: str):
    """The newest VersionInfo of `name` in the library, or None when it holds no such name (or
    only a deleted one: saving brings it back as a new version). A database failure raises."""
    return next((info for info in library.list() if info.name == name), None)


def _stale(name: str, base: int, newest) -> Stale:
    stale = Stale(name, base, newest.version, newest.author, newest.created_utc)
    st.session_state[CONFLICT] = asdict(stale)
    return stale


def save(
    library,
    data: dict,
    *,
    message: str = "",
    tags: Sequence[str] = (),
    anyway: bool = False,
):
    """Save `data` (the scenario being edited) as a new version of its name in `library`: the
    VersionInfo saved, or Stale (nothing saved) when the library holds a newer version than the
    one the edits started from. `anyway`: the user has seen the pending Stale and saves over it
    (still refused if yet another version arrived since). Raises InputError when the library
    refuses the text."""
    from econ.library import LibraryError

    ss = st.session_state
    name = _name(data)
    base = _origin(name)
    pending = ss.get(CONFLICT)
    if anyway and pending and (pending["name"], pending["base"]) == (name, base):
        base = pending["latest"]  # the version the user was told of
    newest = _newest(library, name) if name and base is not None else None
    if newest is None:
        base = None  # a name the library does not hold (any more): a new scenario
    elif newest.version != base:
        return _stale(name, _origin(name), newest)
    try:
        info = library.save_text(
            state.toml_text(data),
            origin="the current scenario",
            message=message,
            tags=list(tags),
            base=base,
        )
    except LibraryError:
        newest = _newest(library, name) if base is not None else None
        if newest is not None and newest.version != base:  # saved by someone in between
            return _stale(name, _origin(name), newest)
        raise
    ss.pop(CONFLICT, None)
    ss[state.LIBRARY_BASE] = {"name": info.name, "version": info.version}
    return info


def pending() -> Stale | None:
    """The stale save of the scenario being edited that waits for an answer, if any."""
    ss = st.session_state
    conflict = ss.get(CONFLICT)
    if not conflict:
        return None
    name = _name(ss.get(state.DATA))
    if (conflict["name"], conflict["base"]) != (name, _origin(name)):
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
        help=f"Saves your copy as version {stale.latest + 1} of {stale.name}; versions "
        f"{stale.base} to {stale.latest} stay in its history.",
    )


__all__ = ["CONFLICT", "Stale", "pending", "save", "show_stale"]
