"""The app's entry: page set-up, global state, the sidebar and the navigation between pages.

`streamlit run app.py` (or `econ app`, which runs this file) builds the navigation here; each page
is a script in econ/ui/pages/. The current scenario lives in session state (econ.ui.state), so it
survives page switches, and the address bar carries it, so a link restores it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from econ.ui import common, compute, form, state

PAGES_DIR = Path(__file__).resolve().parent / "pages"

# (file stem in econ/ui/pages, title, icon); the first page is the landing page. No bare strings
# here: when `econ app` runs this file as the main script, Streamlit's magic would draw them.
PAGES = (
    ("results", "Results", ":material/monitoring:"),
    ("scenario", "Scenario", ":material/tune:"),
    ("throughput", "Throughput", ":material/speed:"),
    ("gains", "Software gains", ":material/trending_up:"),
    ("power", "Power and fleet", ":material/bolt:"),
    ("market", "Market", ":material/storefront:"),
    ("compare", "Compare", ":material/compare_arrows:"),
    ("library", "Library", ":material/library_books:"),
    ("risk", "Risk", ":material/casino:"),
    ("export", "Export", ":material/download:"),
)


PAGE_ICON = "🧮"
"""The browser tab's icon (tests/test_browser_review22.py: no request leaves the app's host)."""


def main() -> None:
    st.set_page_config(
        page_title="econ: GPU inference economics",
        # an emoji, drawn by the browser as a data: URL; a ":material/...:" icon made every page
        # load fetch its SVG from fonts.gstatic.com (a third-party request, failing air-gapped)
        page_icon=PAGE_ICON,
        layout="wide",
        initial_sidebar_state="auto",
    )
    st.session_state["econ.run"] = object()  # marks this run: validation is computed once per run
    compute.drop_stale_caches()  # figures of catalogs since changed are not shown
    state.ensure()
    form.settle_commits()  # before anything reads the scenario
    common.style()
    pages = [
        st.Page(
            PAGES_DIR / f"{stem}.py",
            title=title,
            icon=icon,
            url_path=stem,
            default=(i == 0),
        )
        for i, (stem, title, icon) in enumerate(PAGES)
    ]
    common.PAGES = {stem: page for (stem, _, _), page in zip(PAGES, pages, strict=True)}
    page = st.navigation(pages)
    common.sidebar()
    common.notices()
    st.session_state[common.ROUTING] = True  # the page's script renders (common.run_page)
    try:
        # the page script's own imports run here too: one that fails (econ's code changed while
        # the server ran) is a reason on the page, never Streamlit's traceback; st.rerun and
        # st.stop (BaseExceptions) pass through
        page.run()
    except Exception as exc:  # noqa: BLE001 - a reason on the page, never a traceback
        compute.failed(exc, "Showing this page")
    finally:
        st.session_state.pop(common.ROUTING, None)
    common.remember_all()
    common.share_box(page.url_path, state.sync_link())


if __name__ == "__main__":
    main()
