"""The twenty-fourth review's browser-side items in headless Chromium: a file too large or of the
wrong type for its upload box was refused by the browser with only a red mark and a tooltip (the
app's own message never came), and /results opened a "Page not found" dialog. The AppTest checks
are in tests/test_app_review24.py.
"""

from __future__ import annotations

import pytest

from tests.test_browser import TIMEOUT_MS, browser, open_page, server, settle  # noqa: F401

pytestmark = pytest.mark.browser


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
        page.get_by_role("tab", name="Measured curve").click()
    page.locator('input[type="file"]').first.set_input_files(str(path))
    page.locator('[data-testid="stAlert"]', has_text=said).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    # no file the browser refused unsent: Streamlit's red mark and its tooltip's reason
    assert page.locator('[data-testid="stFileUploaderFileErrorMessage"]').count() == 0
    assert "or smaller" not in page.inner_text("body")
    page.close()
