"""End-to-end, in Debian's headless Chromium: a freshly started `econ app` server whose first
request is a page address shows that page (not a KeyError), and text from a shared link reaches
the page as typed, with no image fetched and no link to follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from econ.catalog import DEFAULT_SCENARIO
from econ.ui import state
from econ.ui.streamlit_app import PAGES
from scripts.screenshot import start_server
from tests.conftest import ROOT
from tests.test_browser import TIMEOUT_MS, browser, settle  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.browser

ENTRY = ROOT / "econ" / "ui" / "streamlit_app.py"
"""What `econ app` runs: Streamlit finds econ/ui/pages/ beside it (app.py has no such folder)."""


@pytest.fixture
def fresh_server() -> Iterator[str]:
    """A server started as `econ app` starts it, that no session has asked anything yet."""
    process, url = start_server(ENTRY)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def wait_for_page(page, heading: str) -> None:
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)


def test_a_page_address_is_a_fresh_servers_first_request(fresh_server: str, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{fresh_server}/scenario?scenario=llama2-70b-h200")
    wait_for_page(page, "Scenario")
    body = page.inner_text("body")
    assert "KeyError" not in body and "Traceback" not in body and "session_state" not in body
    assert "Editing llama2-70b-h200" in body  # the link's scenario, on the page it names
    nav = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    titles = [text.split("\n")[-1] for text in nav]
    assert titles == [title for _, title, _ in PAGES]  # the app's pages, not the folder's files
    page.close()


IMAGE = "![x](http://127.0.0.1:9/pixel.png?leak=1)"
LINK = "[re-enter your SSO password](https://evil.example/login)"
DESCRIPTION = (
    f"Plan {IMAGE} **Action required:** {LINK} https://evil.example/bare www.evil.example "
    "mail@evil.example <https://evil.example/auto> `code` $x$ "
    # Streamlit's own markdown: a colour, an icon, emoji, a badge, an arrow
    "A :red[redtext] B :material/warning: C :smile: D :+1: E :blue-badge[bb] F a -> b -- c "
    "G :foo{bar} library:red@2"
)


def no_image_or_link_from(page, where: str = "body") -> None:
    """No image from the link's address and no link to evil.example anywhere on the page."""
    scope = page.locator(where)
    assert scope.locator('img[src*="127.0.0.1:9"]').count() == 0
    hrefs = [a.get_attribute("href") or "" for a in scope.locator("a").all()]
    assert not [h for h in hrefs if "evil.example" in h or "127.0.0.1:9" in h], hrefs


def shown(page) -> str:
    """The page's text as the reader sees it (the invisible word joiners left out)."""
    return page.inner_text("body").replace("\u2060", "")


def test_markdown_in_a_shared_link_is_shown_as_typed(fresh_server: str, browser):  # noqa: F811
    edits = state.encode(
        {
            "name": "evil [n](https://evil.example/name)",
            "description": DESCRIPTION,
            "sources": {"market.price_usd_per_mtok": f"{IMAGE} {LINK}"},
        }
    )
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{fresh_server}/?scenario={DEFAULT_SCENARIO}&edits={edits}")
    wait_for_page(page, "Results")
    page.get_by_text("Action required", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    text = shown(page)
    assert DESCRIPTION in text  # in the caption under the title and in the sidebar, as typed
    assert "evil [n](https://evil.example/name)" in text
    no_image_or_link_from(page)
    assert page.locator('[data-testid="stCaptionContainer"] strong', has_text="Action").count() == 0
    caption = page.locator('[data-testid="stCaptionContainer"]', has_text="redtext").first
    drawn = ".stMarkdownColoredText, .stMarkdownBadge, [role=img], img"
    assert caption.locator(drawn).count() == 0, caption.inner_html()

    invalid = state.encode({"market": {"price_usd_per_mtok": f"{IMAGE} {LINK}"}})
    page.goto(f"{fresh_server}/scenario?scenario={DEFAULT_SCENARIO}&edits={invalid}")
    wait_for_page(page, "Scenario")
    alerts = page.locator('[data-testid="stAlert"]')
    # (the value is quoted cut to its first 80 characters, the image's markdown among them)
    alerts.filter(has_text="pixel.png?leak=1").first.wait_for(timeout=TIMEOUT_MS)
    assert re.search(r"!\[x\]\(http://127\.0\.0\.1:9/pixel\.png\?leak=1\)", shown(page))
    no_image_or_link_from(page)
    page.close()
