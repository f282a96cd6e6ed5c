"""Library: save the current scenario as a version with a message, browse and search the scenario
library (econ.library), load a version, see its history, diff two versions with their metric
changes, restore one. The library is ECON_LIBRARY or the per-user SQLite file (docs/library.md).
"""

from __future__ import annotations

import re
import tomllib
from functools import partial

import pandas as pd
import streamlit as st

from econ.errors import InputError
from econ.library import LibraryError, Ref, open_library, resolve_url
from econ.library.diff import code_name, differs, is_coded, metric_changes
from econ.text import neutralize
from econ.ui import common, saving, state
from econ.ui.fmt import (
    format_change,
    format_value,
    humanize,
    literal,
    metric_kind,
    metric_label,
    number_format,
)
from econ.ui.form import shown_value
from econ.ui.pages.compare import inputs as shown_inputs

MESSAGE, TAGS, SEARCH = "econ.library.message", "econ.library.tags", "econ.library.search"
PICK, VERSION, OLD, NEW = (
    "econ.library.pick",
    "econ.library.version",
    "econ.library.old",
    "econ.library.new",
)
DONE = "econ.library.done"
SAVE_ERROR = "econ.library.save_error"
SAVED = "econ.library.saved"
"""The name a save or a restore just made a version of: the page picks it, at its newest."""


def _versions_frame(infos, *, with_name: bool) -> pd.DataFrame:
    rows = [
        {
            **({"name": i.name} if with_name else {}),
            "version": i.version,
            "saved (UTC)": i.created_utc.replace("T", " ").removesuffix("Z"),  # ISO 8601 as read
            "author": i.author,
            "message": i.message,
            "tags": ", ".join(i.tags),
            "hardware": i.hardware or "",
            "model": i.model or "",
        }
        for i in infos
    ]
    return pd.DataFrame(rows)


def _as_stored(frame: pd.DataFrame):
    """`frame` for common.table, its text shown as stored (a scenario named `-rf` as -rf):
    common.table writes formula-like text with an apostrophe for the table's "Download as CSV",
    which takes the cells' values; this Styler gives those cells their own text as what the
    screen draws (the cells neutralize leaves alone are drawn as their value)."""
    styler = frame.style
    for column in frame.columns:
        for label, value in frame[column].items():
            if isinstance(value, str) and neutralize(value) != value:
                styler = styler.format(lambda _, text=value: text, subset=([label], [column]))
    return styler


def _save(anyway: bool = False) -> None:
    """Save the current scenario as a new version, against the version it was edited from
    (econ.ui.saving); `anyway`: over a newer one the user was told of."""
    ss = st.session_state
    tags = [t.strip() for t in ss.get(TAGS, "").split(",") if t.strip()]
    try:
        with open_library() as library:
            info = saving.save(
                library,
                ss[state.DATA],
                message=ss.get(MESSAGE, ""),
                tags=tags,
                anyway=anyway,
            )
    except InputError as exc:
        typed = [ss[state.DATA].get("name") or "", *tags]
        ss[SAVE_ERROR] = saving.library_message(exc, typed)
        return
    if not isinstance(info, saving.Stale):  # (a stale save is shown by the section, with a button)
        ss[DONE] = f"{saving.saved(info)}."
        _show_newest(info.name)
        # (a callback: the boxes may be cleared) the next save says its own message and tags
        ss[MESSAGE], ss[TAGS] = "", ""


def _show_newest(name: str) -> None:
    """After a save or a restore of `name`: the page picks it, its version box and diff at the
    newest version (keyed boxes keep an earlier choice however their options change)."""
    ss = st.session_state
    ss[SAVED] = name
    for key in (VERSION, OLD, NEW):
        ss.pop(f"{key}:{name}", None)


def _save_section() -> None:
    with st.container(border=True):
        st.markdown("**Save the current scenario** as a new version of its name")
        v = common.validation()
        if not v.ok:
            st.error(
                "The current scenario is not valid, so it cannot be saved; your inputs are kept. "
                f"Fix them here or on the Scenario page.\n\n{literal(v.message)}",
                icon=":material/error:",
            )
            return
        st.text_input("Message", key=MESSAGE, placeholder="what changed and why")
        st.text_input("Tags", key=TAGS, placeholder="comma separated, e.g. board-2026q3")
        saving.author_box("library")
        st.button("Save as a new version", on_click=_save, icon=":material/save:")
        if SAVE_ERROR in st.session_state:
            st.error(literal(st.session_state.pop(SAVE_ERROR)), icon=":material/error:")
        saving.show_stale("below", partial(_save, True), key="library")


def _version_actions(library, name: str, numbers: list[int]) -> None:
    left, middle, right = st.columns([2, 1, 1], vertical_alignment="bottom")
    # keyed by scenario: another scenario picked starts at its own newest version
    version = left.selectbox("Version", numbers[::-1], key=f"{VERSION}:{name}")
    if middle.button("Load into the editor", icon=":material/upload:"):
        stored = library.get(Ref(name, version))
        state.keep_edits()
        state.load_data(tomllib.loads(stored.text), stored.label)
        st.session_state[DONE] = f"Loaded {stored.label}; the other pages now show it."
        st.rerun()
    if right.button("Restore as newest", icon=":material/history:"):
        info = library.restore(Ref(name, version), author=saving.author())
        st.session_state[DONE] = f"Restored version {version} of {name} as version {info.version}."
        _show_newest(info.name)
        st.rerun()


def _metric(key: str, money: str) -> tuple[str, str]:
    """(label with unit, format kind) of a summary metric in a diff; a component cost is
    "cost_usd_per_mtok_by_component.NAME"."""
    if "." in key:
        part = key.split(".", 1)[1]
        return f"Levelized cost, {humanize(part).lower()} [USD/M tokens]", "usd_per_mtok"
    return metric_label(key, money), metric_kind(key)


def _input_changes(old, new) -> pd.DataFrame:
    """The inputs that differ between two scenarios, labelled with their units and written as
    the form and the Compare page show them (a share of 0.7 as 70 [%]), with the dotted path
    `econ library diff` names them by; a value not set reads "not set". Values that differ
    beyond the 6 digits shown are written to 12."""
    dumps = [state.plain(s.model_dump()) for s in (old, new)]
    a, b = (shown_inputs(d) for d in dumps)
    rows = []
    for path in sorted(set(a) | set(b)):
        raw = [_at(d, path) for d in dumps]
        if raw[0] == raw[1]:
            continue
        label = (a.get(path) or b[path])[0]
        texts = [(shown.get(path) or (label, ""))[1] for shown in (a, b)]
        if texts[0] == texts[1]:  # alike to the 6 digits shown
            numbers = [(shown.get(path) or ("", "", None))[2] for shown in (a, b)]
            texts = [_precise(path, v, n) for v, n in zip(raw, numbers, strict=True)]
        old_text, new_text = (t or "not set" for t in texts)
        rows.append({"input": label, "old": old_text, "new": new_text, "path": path})
    return pd.DataFrame(rows, columns=["input", "old", "new", "path"])


def _at(data, path: str):
    """The value at a dotted path of `shown_inputs` (a.b[0].c) in a plain scenario, or None."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            index = int(part[1:-1])
            data = data[index] if isinstance(data, list) and index < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data


def _precise(path: str, value, number) -> str:
    """A value in the unit the form shows to 12 digits: `number`, the value in that unit
    (`shown_inputs`), or each number of a list."""
    if isinstance(number, int | float) and not isinstance(number, bool):
        return number_format(number, 12)
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "" if value is None else str(value)
    return ", ".join(number_format(shown_value(path, v), 12) for v in values)


def _diff_section(library, name: str, numbers: list[int]) -> None:
    st.markdown("**Diff two versions**")
    left, right = st.columns(2)
    # keyed by scenario, as the version: another scenario's diff starts at its last two versions
    old = left.selectbox("Old", numbers, index=max(0, len(numbers) - 2), key=f"{OLD}:{name}")
    new = right.selectbox("New", numbers, index=len(numbers) - 1, key=f"{NEW}:{name}")
    old_ref, new_ref = Ref(name, old), Ref(name, new)
    frame = _input_changes(library.load(old_ref), library.load(new_ref))
    if not frame.empty:
        common.table(_as_stored(frame), hide_index=True, width="stretch")
    else:
        st.caption("No input differs.")
    with st.spinner(f"Projecting versions {old} and {new}..."):
        metrics = metric_changes(library.summary(old_ref), library.summary(new_ref))
    money = common.money()
    rows = []
    for key, v in metrics.items():
        if not differs(key, v):  # as `econ library diff`: defined on one side only is a change
            continue
        label, kind = _metric(key, money)
        if is_coded(key):  # a category's code (what sizes the debt): a difference means nothing
            shown = [code_name(key, v["old"]), code_name(key, v["new"]), ""]
        else:
            shown = [format_value(v[side], kind, money) for side in ("old", "new")]
            shown.append(format_change(v["change"], kind, money))
        rows.append(dict(zip(("metric", "old", "new", "change"), [label, *shown], strict=True)))
    frame = pd.DataFrame(rows)
    if frame.empty:
        st.caption("No metric changes.")
    else:
        common.table(frame, hide_index=True, width="stretch")


def render() -> None:
    st.title("Library")
    _, source = resolve_url()
    try:
        library = open_library(create=False)  # reading creates no file; a save does
    except LibraryError as exc:
        st.error(literal(saving.library_message(exc)), icon=":material/error:")
        return
    # (not where it is: the URL or file locates the library on the server)
    st.caption(
        f"The library is {saving.library_kind(library.display)} ({literal(source)}). Every save "
        "is a new version, never overwritten; `econ library` on the command line reads the same "
        "library."
    )
    if st.session_state.get(DONE):
        st.success(literal(st.session_state.pop(DONE)))
    try:
        with library:
            _save_section()
            search = st.text_input("Search", key=SEARCH, placeholder="name, message, tag, ...")
            with st.spinner("Reading the library..."):
                listed = library.list()
            infos = [
                i
                for i in listed
                if search.lower()
                in " ".join([i.name, i.message, *i.tags, i.hardware or "", i.model or ""]).lower()
            ]
            if search.strip():  # a tag of an older version, as `econ library list --tag` finds
                found = {i.name for i in infos}
                with st.spinner("Reading the library..."):
                    tagged = library.list(tag=search.strip())
                infos += [i for i in tagged if i.name not in found]
            if not infos:
                st.info(
                    "No scenario in the library matches." if search else "The library is empty."
                )
                return
            common.table(
                _as_stored(_versions_frame(infos, with_name=True)),
                hide_index=True,
                width="stretch",
            )
            names = [i.name for i in infos]
            if st.session_state.get(SAVED) in names:  # (one the search hides stays unpicked)
                st.session_state[PICK] = st.session_state[SAVED]
            st.session_state.pop(SAVED, None)
            name = st.selectbox("Scenario", names, key=PICK)
            with st.spinner(f"Reading the history of {literal(name)}..."):
                history = library.history(name)
            st.markdown(f"**History of {literal(name)}** (oldest first)")
            common.table(
                _as_stored(_versions_frame(history, with_name=False)),
                hide_index=True,
                width="stretch",
            )
            numbers = [v.version for v in history]
            _version_actions(library, name, numbers)
            if len(numbers) > 1:
                _diff_section(library, name, numbers)
    except InputError as exc:
        st.error(literal(saving.library_message(exc)), icon=":material/error:")


if __name__ == "__main__":
    common.run_page(render)
