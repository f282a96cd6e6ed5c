"""Export: the scenario as TOML, its projection as CSV, Parquet, JSON and an Excel workbook
(econ.export: stamped with the econ version and the scenario's hash, formula-injection safe), and
the investment memo (econ.memo: HTML, and PDF where a Chromium is installed).

Only the TOML is written as the page opens; every other file is built when the visitor asks for it
("Prepare ..."), kept for the session while the scenario is unchanged, and dropped once it changes.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from econ.ui import common, compute, state
from econ.ui.fmt import literal

FORMATS = (
    ("xlsx", "Excel workbook", ":material/table_view:", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
     "Summary, monthly schedule and assumptions; line items as live formulas over the assumptions"),
    ("csv", "CSV", ":material/csv:", "text/csv",
     "The monthly schedule and, beside it, the summary, and for a capital stack each tranche's "
     "monthly lines and the tranche summary, one file each (formula-like text neutralized)"),
    ("parquet", "Parquet", ":material/database:", "application/vnd.apache.parquet",
     "The monthly schedule and the summary, and for a capital stack each tranche's monthly lines "
     "and the tranche summary, one file each, with the provenance stamp in the file metadata"),
    ("json", "JSON", ":material/data_object:", "application/json",
     "The summary metrics as `econ project --format json` prints them"),
)  # fmt: skip

CONTENTS = (
    (".tranches.summary.", "Tranche summary"),
    (".tranches.", "Tranches"),
    (".summary.", "Summary"),
)
"""What a table file holds, by what econ.export puts between its stem and its suffix (longest
first); the file named stem and suffix alone holds the monthly schedule."""


def contents(name: str, stem: str, kind: str) -> str:
    """What an export file holds, as its button says: "Monthly schedule", "Summary", "Tranches",
    "Tranche summary" (the workbook is the "Excel workbook", the JSON the "Summary")."""
    middle = name.removeprefix(stem)
    for part, words in CONTENTS:
        if middle.startswith(part):
            return words
    return {"xlsx": "Excel workbook", "json": "Summary"}.get(kind, "Monthly schedule")


def render() -> None:
    st.title("Export")
    current = common.require_scenario("the exports")
    if current is None:
        return
    scenario = current.scenario
    stem = common.export_stem(scenario)
    st.caption(
        f"**{literal(scenario.name)}**. Every table carries the econ version and the scenario's "
        "SHA-256 (of its inputs as canonical JSON, not of the TOML file's bytes: comments and "
        "spacing do not change it), so a file can be traced to the inputs that made it."
    )
    with st.container(border=True):
        st.markdown("**Scenario** (TOML): the inputs, to reload here or run with `econ project`")
        st.download_button(
            "Download the scenario (TOML)",
            state.scenario_text(scenario),
            file_name=f"{stem}.toml",
            mime="application/toml",
            icon=":material/description:",
            on_click="ignore",
        )
    if stem != compute.file_stem(scenario.name):
        st.caption(
            f"Edited: the files are named {literal(stem)}, after the scenario and the start of "
            "its SHA-256, so that they do not replace the unedited scenario's."
        )
    memo(current, stem)
    for kind, label, icon, mime, what in FORMATS:
        with st.container(border=True):
            st.markdown(f"**{label}**: {what}")
            files = prepared(
                kind,
                current.text,
                f"Prepare the {label}",
                icon,
                lambda k=kind: compute.export_bytes(current.text, k, stem),
                f"{label} export",
                busy=f"Writing the {label}...",
            )
            if files is None:
                continue
            # one row that wraps, each button as wide as its label and named by what its file
            # holds (four buttons in equal columns were cut to "Download deepseek-r1-gb200-...")
            row = st.container(horizontal=True)
            for name, data in files.items():
                what = contents(name, stem, kind)
                row.download_button(
                    what if kind == "xlsx" else f"{what} ({label})",
                    data,
                    file_name=name,
                    mime=mime,
                    icon=icon,
                    on_click="ignore",
                    key=f"econ.export.{name}",
                    help=f"Downloads {literal(name)}",
                )
            st.caption("Files: " + ", ".join(literal(name) for name in files))


PREPARED = "econ.export.{}"
"""Session key of the files of one kind built on request ("xlsx", "csv", "parquet", "json",
"memo"): (the scenario's text, name -> bytes)."""


def prepared(
    kind: str,
    text: str,
    label: str,
    icon: str,
    build: Callable[[], dict[str, bytes]],
    what: str,
    busy: str,
) -> dict[str, bytes] | None:
    """The files of `kind` for the scenario `text` (name -> bytes), built by `build` when the
    visitor clicks `label` and kept in the session; None until then, or when the build failed
    (compute.attempt shows why).

    Opening the page builds nothing: a link to the largest scenario (50 vintages over 600
    months) cost every visitor 5 s and over 100 MB of the server's for files nobody had asked
    for. Files of another scenario (the one before an edit) are dropped, never offered."""
    ss = st.session_state
    key = PREPARED.format(kind)
    if key in ss and ss[key][0] != text:  # (the text fixes the stem too)
        del ss[key]
    if key not in ss:
        slot = st.empty()  # the button goes once its files are built: not drawn over them
        if not slot.button(label, icon=icon, key=f"{key}_go"):
            return None
        files = compute.attempt(build, what, busy=busy)
        if files is None:
            return None
        slot.empty()
        ss[key] = (text, files)
    return ss[key][1]


MEMO_MIME = {".html": "text/html", ".pdf": "application/pdf"}


def memo(current, stem: str) -> None:
    """The investment memo, built on request (it projects the cases and the tornado)."""
    from econ.memo.render import chromium

    with st.container(border=True):
        has_pdf = chromium() is not None
        st.markdown(
            "**Investment memo**: one to six pages for a credit or investment committee (the "
            "ask, headline figures, cases, DSCR chart, waterfalls, tornado, sources, warnings), "
            "stamped so that `econ verify` recomputes every figure"
            + ("" if has_pdf else ". No Chromium here: HTML only")
        )
        files = prepared(
            "memo",
            current.text,
            "Prepare the memo",
            ":material/article:",
            lambda: compute.memo_bytes(current.text, has_pdf, stem),
            "Investment memo",
            busy="Projecting the cases and the tornado, writing the memo...",
        )
        if files is None:
            return
        row = st.container(horizontal=True)
        for name, data in files.items():
            suffix = name[name.rindex(".") :]
            row.download_button(
                f"Memo ({suffix[1:].upper()})",
                data,
                file_name=name,
                mime=MEMO_MIME[suffix],
                icon=":material/download:",
                on_click="ignore",
                key=f"econ.export.{name}",
                help=f"Downloads {literal(name)}",
            )
        st.caption("Files: " + ", ".join(literal(name) for name in files))


if __name__ == "__main__":
    common.run_page(render)
