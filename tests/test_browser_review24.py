"""The twenty-fourth review's browser-side items in headless Chromium: a file too large or of the
wrong type for its upload box was refused by the browser with only a red mark and a tooltip (the
app's own message never came), and /results opened a "Page not found" dialog. The AppTest checks
are in tests/test_app_review24.py.
"""

from __future__ import annotations

import pytest

from econ.catalog import DEFAULT_SCENARIO
from tests.test_browser import (  # noqa: F401
    TIMEOUT_MS,
    browser,
    open_page,
    open_tab,
    server,
    settle,
)

pytestmark = pytest.mark.browser

OTHER = "llama2-70b-h200"
"""A ready-made scenario other than the default, for a link to name."""


def go(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)


# --- 3. a file the app does not read reaches it, and its message names the file and why ----------


@pytest.mark.parametrize(
    ("title", "name", "size", "said"),
    [
        ("Scenario", "big2mb.toml", 2 << 20, "big2mb.toml: 2 MB is larger than the 1 MB limit"),
        ("Scenario", "seed.json", 100, "seed.json: a .json file; expected .toml"),
        ("Throughput", "big25mb.csv", 25 << 20, "big25mb.csv: 25 MB is larger than the 5 MB limit"),
    ],
)
def test_a_file_too_large_or_of_the_wrong_type_gets_the_apps_message(
    server,  # noqa: F811
    browser,  # noqa: F811
    tmp_path,
    title,
    name,
    size,
    said,
):
    path = tmp_path / name
    path.write_bytes(b"#" * size)
    page = open_page(browser, server)
    go(page, title)
    if title == "Throughput":
        open_tab(page, "Measured curve")
    page.locator('input[type="file"]').first.set_input_files(str(path))
    page.locator('[data-testid="stAlert"]', has_text=said).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    # no file the browser refused unsent: Streamlit's red mark and its tooltip's reason
    assert page.locator('[data-testid="stFileUploaderFileErrorMessage"]').count() == 0
    assert "or smaller" not in page.inner_text("body")
    page.close()


# --- 4. /results is the landing page, as / is -----------------------------------------------------


def test_the_landing_pages_own_address_opens_it_with_its_scenario(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server.rstrip('/')}/results?scenario={OTHER}")
    page.get_by_role("heading", name="Results", exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    page.wait_for_timeout(1000)  # a dialog comes after the first run
    body = page.inner_text("body")
    assert "Page not found" not in body and "not found" not in body.lower(), body[:400]
    assert OTHER in body and DEFAULT_SCENARIO not in page.url  # the link's scenario, kept
    assert f"scenario={OTHER}" in page.url
    # the navigation marks Results as the page shown, and lists each page once
    active = page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]').all_inner_texts()
    assert [text.split("\n")[-1] for text in active] == ["Results"], active
    page.close()
