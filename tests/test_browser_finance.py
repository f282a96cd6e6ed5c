"""End-to-end checks of issue 19 (the app for a finance team) in headless Chromium: the share box
equals the address bar, a mismatched measured curve needs a confirmation, the tornado clips swings.

One server and one browser for the module (the machine is shared); the helpers are those of
tests/test_browser.py.
"""

from __future__ import annotations

import pytest

from tests import test_browser
from tests.conftest import ROOT
from tests.test_browser import TIMEOUT_MS, open_page, open_tab, settle

browser = test_browser.browser  # the module-scoped Chromium and server fixtures of test_browser
server = test_browser.server

pytestmark = pytest.mark.browser


def share_box(page) -> str:
    box = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first
    box.wait_for(timeout=TIMEOUT_MS)
    return box.inner_text().strip()


def test_the_share_box_equals_the_address_bar_after_edits_and_page_switches(server, browser):
    page = open_page(browser, server)
    page.get_by_text("Display and sharing").click()
    settle(page)
    assert share_box(page) == page.url
    utilization = page.get_by_role("spinbutton", name="Utilization › Share [%]")
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


def test_tiles_wrap_instead_of_cutting_and_print_hides_the_sidebar(server, browser):
    page = browser.new_page(viewport={"width": 800, "height": 1000})
    page.goto(server.rstrip("/") + "/power")
    page.get_by_role("heading", name="Power and fleet").wait_for(timeout=TIMEOUT_MS)
    page.locator('[data-testid="stMetric"]').first.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    cut = page.evaluate(
        """() => [...document.querySelectorAll(
                '[data-testid="stMetricValue"] p, [data-testid="stMetricLabel"] p, [data-testid="stMetricValue"] .stMarkdownEllipsis')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""
    )
    assert cut == [], cut
    page.emulate_media(media="print")
    hidden = page.evaluate(
        """() => getComputedStyle(document.querySelector('section[data-testid="stSidebar"]'))
            .display"""
    )
    assert hidden == "none"
    page.close()


def test_a_mismatched_curve_and_an_oversized_file_in_the_browser(server, browser, tmp_path):
    lines = (ROOT / "tests" / "data" / "app" / "sample_curve.csv").read_text().splitlines()
    rows = [lines[0] + ",model,hardware"] + [
        f"{line},Llama-3.2-3B,NVIDIA L40S" for line in lines[1:]
    ]
    curve = tmp_path / "l40s.csv"
    curve.write_text("\n".join(rows) + "\n")
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * (6 * 1024 * 1024))
    page = open_page(browser, server)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Throughput").click()
    page.get_by_role("heading", name="Throughput").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    open_tab(page, "Measured curve")
    page.locator('input[type="file"]').first.set_input_files(str(curve))
    page.get_by_text("This curve is not of the scenario's model and hardware").wait_for(
        timeout=TIMEOUT_MS
    )
    settle(page)
    use = page.locator("button:visible", has_text="tokens/s per GPU in the scenario")
    assert use.is_disabled()
    page.get_by_text("Use it anyway").click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('button')].some(b => b.offsetParent !== null
            && b.innerText.includes('tokens/s per GPU in the scenario') && !b.disabled)""",
        timeout=TIMEOUT_MS,
    )
    page.locator('input[type="file"]').first.set_input_files(str(big))
    # the box takes it (the server's limit), and the app refuses it with the box's 5 MB limit
    page.locator(
        '[data-testid="stAlert"]', has_text="big.csv: 6 MB is larger than the 5 MB"
    ).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    assert "l40s.csv" not in page.locator('[data-testid="stAlert"]').all_inner_texts().__str__()
    page.close()


def test_the_default_tornado_runs_at_90_percent_utilization(server, browser):
    page = open_page(browser, server)
    utilization = page.get_by_role("spinbutton", name="Utilization › Share [%]")
    utilization.fill("90.0")
    utilization.press("Enter")
    settle(page)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Risk").click()
    # The page's first run must finish first: a click while it still draws can be lost.
    page.get_by_role("heading", name="Risk").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    page.get_by_role("button", name="Run the tornado").click()
    page.get_by_text("Swings clipped to what the field accepts").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    assert "expected ≤ 1" not in page.inner_text("body")
    page.close()
