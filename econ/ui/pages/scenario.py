"""Scenario: start from a ready-made scenario or an uploaded TOML file, edit every section (widgets
generated from the scenario models, with units and help from their descriptions), see validation
messages next to the fields, reset, keep in the session, or download as TOML.
"""

from __future__ import annotations

import hashlib
from functools import partial

import streamlit as st

from econ.files import size_text
from econ.scenario import Scenario, ScenarioError
from econ.scenario.io import MAX_SCENARIO_BYTES
from econ.ui import common, saving, state
from econ.ui.fmt import humanize, literal
from econ.ui.form import Form, fields_of, find, path_label

UPLOAD = "econ.scenario_upload"
UPLOAD_ERROR = "econ.scenario_upload_error"
SAVE_NAME = "econ.save_name"
TOML_ERROR = "econ.toml_error"
SAVE_ERROR = "econ.save_error"
TOO_DEEP = (
    f"tables nested more than {state.MAX_DEPTH} levels deep; expected a scenario's tables, which "
    "nest about six (e.g. [financing.covenants])"
)


def _field(exc: ScenarioError) -> str:
    """The field of an error named as the form labels it, with its path and the value ("Fleet ›
    GPU count [GPUs] (fleet.gpu_count) = 1.11e+4999 (an integer of 5,000 digits)")."""
    from econ.scenario.errors import shortened

    name = f"{path_label(exc.path)} ({exc.path})" if find(exc.path) is not None else exc.path
    return name + (f" = {shortened(exc.value)}" if exc.value is not None else "")


def _uploaded() -> None:
    ss = st.session_state
    file = ss.get(UPLOAD)
    if file is None:
        return
    problem = common.upload_problem(file, MAX_SCENARIO_BYTES, "scenario files", (".toml",))
    if problem:
        ss[UPLOAD_ERROR] = f"{problem}. The current scenario is unchanged."
        return
    content = file.getvalue()
    if not content.strip():
        problem = "the file is empty; expected a TOML scenario"
    else:
        try:
            data = state.parse_scenario_text(content)
        except ScenarioError as exc:
            problem = f"{_field(exc)}: {exc.expected}" if exc.path else exc.expected
        else:
            problem = TOO_DEEP if state.too_deep(data) else None
    if problem:
        ss[UPLOAD_ERROR] = f"{file.name}: {problem}. The current scenario is unchanged."
        return
    state.keep_edits()
    state.load_data(data, state.UPLOAD_PREFIX + file.name)


def _reset() -> None:
    ss = st.session_state
    state.load_data(ss[state.BASE], ss[state.BASE_NAME])


def _save(anyway: bool = False) -> None:
    """Save the scenario being edited as a new version in the scenario library, against the
    version it was edited from (econ.ui.saving); `anyway`: over a newer one the user was told of."""
    from econ.errors import InputError
    from econ.library import open_library

    ss = st.session_state
    v = common.validation()
    if not v.ok:
        ss[SAVE_ERROR] = (
            "The scenario is not valid, so it is not saved; your inputs are kept. " + v.message
        )
        return
    try:
        with open_library() as library:
            info = saving.save(
                library,
                ss[state.DATA],
                message=(ss.get(SAVE_NAME) or "").strip(),
                anyway=anyway,
            )
    except InputError as exc:
        ss[SAVE_ERROR] = saving.library_message(exc, [ss[state.DATA].get("name") or ""])
        return
    if isinstance(info, saving.Stale):
        return  # nothing saved: the page shows why, with a button to save anyway
    ss[state.NOTICE] = (
        f"{saving.saved(info)} (its history, diffs and restore are on the Library page)."
    )


def _apply_toml(key: str) -> None:
    ss = st.session_state
    text = ss.get(key, "")
    size = len(text.encode())
    try:
        # the limit of an uploaded file: pasted here, 20 MB of TOML reached the parser
        if size > MAX_SCENARIO_BYTES:
            raise ScenarioError(
                None,
                "",
                None,
                f"{size_text(size)} of text is larger than the {size_text(MAX_SCENARIO_BYTES)} "
                "limit for scenario files",
            )
        if not text.strip():  # parse_toml's "file is empty" names no file here
            raise ScenarioError(None, "", None, "the text is empty; expected a TOML scenario")
        data = state.parse_scenario_text(text)
        if state.too_deep(data):
            raise ScenarioError(None, "", None, TOO_DEEP)
    except ScenarioError as exc:
        where = f"{_field(exc)}: " if exc.path else ""
        ss[TOML_ERROR] = f"The TOML text was not applied: {where}{exc.expected}"
        ss["econ.toml_draft"] = text
        return
    ss.pop("econ.toml_draft", None)
    # an edit of the same scenario: it descends from the same library version as before
    state.load_data(
        data, ss[state.BASE_NAME], base=ss[state.BASE], library=ss.get(state.LIBRARY_BASE)
    )


TAB_KEY = "econ.scenario_tabs"
WARNING_MARK = "⚠️"


def _has_errors(fields, errors) -> bool:
    return any(
        p == f.path or p.startswith((f.path + ".", f.path + "[")) for f in fields for p in errors
    )


def _tab_marks(marked: list[int]) -> str:
    """CSS that marks the tabs at these positions "⚠️" after their labels.

    The labels themselves never change: Streamlit draws tabs with other labels anew, on their
    first tab, so a label that gained a mark with an edit took the user away from the field."""
    rules = "\n".join(
        f'.st-key-{TAB_KEY.replace(".", "-")} [data-testid="stTab"][data-key="{i}"] p::after '
        f'{{ content: " {WARNING_MARK}"; }}'
        for i in marked
    )
    return f"<style>\n{rules}\n</style>"


def render() -> None:
    ss = st.session_state
    v = common.validation()
    st.title("Scenario")
    name = ss.get(state.BASE_NAME, "")
    st.caption(
        f"Editing **{literal(name)}**"
        + (" (edited)" if state.edited() else "")
        + ". Every change applies "
        "at once to every page; values that do not validate are kept as you typed them."
    )
    if v.ok:
        st.success("The scenario is valid.", icon=":material/check_circle:")
    else:
        st.error("The scenario is not valid:\n\n" + literal(v.message), icon=":material/error:")

    with st.container(border=True):
        up, actions = st.columns([3, 2])
        with up:
            st.file_uploader(
                f"Start from a TOML scenario file ({size_text(MAX_SCENARIO_BYTES)} at most)",
                key=UPLOAD,
                on_change=_uploaded,
                help="A scenario file (.toml) as written by `econ` or by the Download button. "
                "Invalid files load too, so you can fix them here.",
            )
            if UPLOAD_ERROR in ss:
                st.error(literal(ss.pop(UPLOAD_ERROR)), icon=":material/error:")
        with actions:
            st.text_input(
                "Message for the library",
                key=SAVE_NAME,
                placeholder="what changed and why",
                help="Every save is a new version of the scenario's name in the scenario "
                "library, never overwritten (the Library page shows its history).",
            )
            saving.author_box("scenario")
            a, b = st.columns(2)
            a.button("Save to library", on_click=_save, icon=":material/save:", width="stretch")
            b.button(
                "Reset edits",
                on_click=_reset,
                disabled=not state.edited(),
                icon=":material/undo:",
                width="stretch",
            )
            if SAVE_ERROR in ss:
                st.error(literal(ss.pop(SAVE_ERROR)), icon=":material/error:")
            saving.show_stale("on the Library page", partial(_save, True), key="scenario")
            if v.ok:
                st.download_button(
                    "Download TOML",
                    state.scenario_text(v.scenario),
                    file_name=f"{common.export_stem(v.scenario)}.toml",
                    mime="application/toml",
                    icon=":material/download:",
                    width="stretch",
                )
            else:
                st.download_button(
                    "Download as entered (not valid)",
                    state.toml_text(ss[state.DATA]),
                    file_name="scenario-draft.toml",
                    mime="application/toml",
                    icon=":material/download:",
                    width="stretch",
                )

    form = Form("ed", v.errors)
    fields = fields_of(Scenario)
    general = [f for f in fields if f.scalar]
    others = [f for f in fields if not f.scalar]
    sections = [general] + [[f] for f in others]
    labels = ["General"] + [humanize(f.name) for f in others] + ["TOML"]
    marked = [i for i, part in enumerate(sections) if _has_errors(part, v.errors)]
    # Stateless tabs: a click opens a tab in the browser and runs nothing. The labels never
    # change (the stylesheet draws the marks) and the elements before the tabs are the same in
    # every run, so an edit keeps the open tab open.
    st.html(_tab_marks(marked))
    st.caption(
        f"{WARNING_MARK} marks the tabs with fields to fix: "
        + ", ".join(labels[i] for i in marked)
        + "."
        if marked
        else f"Each tab holds a section of the scenario; {WARNING_MARK} would mark one with "
        "fields to fix."
    )
    tabs = st.tabs(labels, key=TAB_KEY)
    with tabs[0]:
        form.fields(general)
    for tab, f in zip(tabs[1:-1], others, strict=True):
        with tab:
            if f.help:
                st.caption(f.help)
            if f.kind == "section":
                form.fields(f.children)
                for message in v.errors.get(f.path, []):
                    st.error(literal(message), icon=":material/error:")
            else:
                form.widget(f)
    with tabs[-1]:
        text = state.toml_text(ss[state.DATA])
        key = "econ.toml." + hashlib.sha1(text.encode()).hexdigest()[:12]
        if key not in ss:
            ss[key] = ss.get("econ.toml_draft", text)
        st.text_area(
            "The whole scenario as TOML",
            key=key,
            height=480,
            help="Edit any field, including ones the form shows as TOML, then apply. Unknown "
            "fields are reported by name with the valid ones.",
        )
        st.button("Apply the TOML", on_click=_apply_toml, args=(key,), icon=":material/check:")
        if TOML_ERROR in ss:
            st.error(literal(ss.pop(TOML_ERROR)), icon=":material/error:")


if __name__ == "__main__":
    common.run_page(render)
