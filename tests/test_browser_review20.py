"""End-to-end checks of the twentieth review's browser-only defects, in headless Chromium:
Streamlit's whole-number box read "1e12" as 1 in the browser (parsing the text's leading
digits), so 1e12 GPUs silently became 1; the app's whole-number boxes are decimal boxes."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.test_browser import TIMEOUT_MS, browser, open_page, server, settle  # noqa: F401

pytestmark = pytest.mark.browser


def test_an_exponent_typed_into_a_whole_number_box_is_taken_whole(server, browser):  # noqa: F811
    page = open_page(browser, server)
    box = page.get_by_role("spinbutton", name="Fleet › GPU count [GPUs]", exact=True)
    box.fill("1e12")
    box.press("Enter")
    said = "1,000,000,000,000 GPUs is above 100,000,000 GPUs"
    page.get_by_text(said, exact=False).first.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    box = page.get_by_role("spinbutton", name="Fleet › GPU count [GPUs]", exact=True)
    expect(box).to_have_value("1000000000000", timeout=TIMEOUT_MS)  # not 1
    page.close()
