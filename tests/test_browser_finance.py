"""End-to-end checks of issue 19 (the app for a finance team) in headless Chromium: the share box
equals the address bar, a mismatched measured curve needs a confirmation, the tornado clips swings.

One server and one browser for the module (the machine is shared); the helpers are those of
tests/test_browser.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripts.screenshot import start_server
from tests import test_browser
from tests.test_browser import TIMEOUT_MS, open_page, settle

browser = test_browser.browser  # the module's Chromium fixture

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    process, url = start_server()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def share_box(page) -> str:
    box = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first
    box.wait_for(timeout=TIMEOUT_MS)
    return box.inner_text().strip()


def test_the_share_box_equals_the_address_bar_after_edits_and_page_switches(server, browser):
    page = open_page(browser, server)
    page.get_by_text("Display and sharing").click()
    settle(page)
    assert share_box(page) == page.url
    utilization = page.get_by_role("spinbutton", name="Utilization [%]")
    utilization.fill("90.0")
    utilization.press("Enter")
    page.wait_for_function("() => location.search.includes('edits=')", timeout=TIMEOUT_MS)
    settle(page)
    assert share_box(page) == page.url  # the same run's link, not the previous one
    page.locator('[data-testid="stSidebarNav"] a', has_text="Risk").click()
    page.get_by_role("heading", name="Risk").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    page.wait_for_function("() => location.pathname.endsWith('/risk')", timeout=TIMEOUT_MS)
    assert "edits=" in share_box(page) and share_box(page) == page.url  # still open, whole link
    page.close()
