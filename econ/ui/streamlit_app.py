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


LANDING_NAME = "home"
"""The name the landing page reserves (Streamlit serves it at /; /home opens it too)."""

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
            # the landing page is served at / and reserves a name of its own: its stem is the
            # hidden alias's (_landing_alias), which a default page's name would clash with
            url_path=LANDING_NAME if i == 0 else stem,
            default=(i == 0),
        )
        for i, (stem, title, icon) in enumerate(PAGES)
    ]
    common.PAGES = {stem: page for (stem, _, _), page in zip(PAGES, pages, strict=True)}
    page = st.navigation([*pages, _landing_alias(pages[0])])
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
    common.input_checks()
    common.remember_all()
    common.share_box(page.url_path, state.sync_link())
    st.session_state[common.PAINTED] = True


def _landing_alias(landing) -> st.Page:
    """A page hidden from the navigation at the landing page's stem (/results): Streamlit serves
    the landing page at / (and its reserved LANDING_NAME) only, and /results?scenario=... opened
    a "Page not found" dialog. The alias moves to the landing page, the address's parameters kept (the scenario it
    names is already loaded: state.ensure reads them before the navigation)."""
    stem = PAGES[0][0]

    def landing_page() -> None:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        st.switch_page(landing, query_params=params)

    return st.Page(landing_page, title=PAGES[0][1], url_path=stem, visibility="hidden")


if __name__ == "__main__":
    main()
