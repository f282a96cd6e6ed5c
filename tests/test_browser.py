"""End-to-end: the app in a real headless Chromium (Debian's), driven by Playwright.

Few and robust on purpose (the machine is shared): one test moves an input and follows the
shareable link, one switches pages, uploads a benchmark file and downloads the Excel workbook.
"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterator

import pytest

from scripts.screenshot import CHROMIUM_ARGS, start_server
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TIMEOUT_MS = 90_000


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    # The same start-up as the README screenshot script: one way to serve the app.
    process, url = start_server()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM) and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
        )
        yield browser
        browser.close()


def settle(page) -> None:
    """Wait until the script run has finished (Streamlit's running indicator is gone)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=TIMEOUT_MS
    )


def open_tab(page, name: str) -> None:
    """Select a tab and wait until it is selected: on a loaded machine a click can land before
    the tabs take clicks, and what follows then went to the hidden tab's widgets (a CI run's
    upload showed its message in a hidden panel)."""
    from playwright.sync_api import expect

    tab = page.get_by_role("tab", name=name)
    for _ in range(3):
        tab.click()
        try:
            expect(tab).to_have_attribute("aria-selected", "true", timeout=TIMEOUT_MS // 3)
            return
        except AssertionError:
            continue
    expect(tab).to_have_attribute("aria-selected", "true", timeout=1)


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def wait_for_metric_change(page, label: str, before: str) -> None:
    page.wait_for_function(
        """([label, before]) => {
            const boxes = [...document.querySelectorAll('[data-testid="stMetric"]')];
            const box = boxes.find(b => b.innerText.includes(label));
            const value = box && box.querySelector('[data-testid="stMetricValue"]');
            return value && value.innerText !== before;
        }""",
        arg=[label, before],
        timeout=TIMEOUT_MS,
    )


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page.goto(url)
    page.get_by_text("Levelized cost [USD/M tokens]").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    return page


def test_change_an_input_see_the_metric_move_and_share_the_link(server: str, browser, tmp_path):
    page = open_page(browser, server)
    before = metric_value(page, "Levelized cost")
    assert before not in ("", "n/a")
    utilization = page.get_by_role("spinbutton", name="Utilization › Share [%]")
    utilization.fill("90.0")
    utilization.press("Enter")
    wait_for_metric_change(page, "Levelized cost", before)
    after = metric_value(page, "Levelized cost")
    assert after != before
    page.wait_for_function("() => location.search.includes('edits=')", timeout=TIMEOUT_MS)
    link = page.url
    page.screenshot(path=str(tmp_path / "results.png"))
    page.close()

    shared = open_page(browser, link)  # a new session restores the scenario from the link
    assert metric_value(shared, "Levelized cost") == after
    # (on a loaded machine the box can be drawn a moment after the metric: wait for its value)
    from playwright.sync_api import expect

    box = shared.get_by_role("spinbutton", name="Utilization › Share [%]")
    expect(box).to_have_value("90.00", timeout=TIMEOUT_MS)
    assert metric_value(shared, "Levelized cost") == after
    shared.close()


def test_switch_pages_upload_a_benchmark_and_download_the_workbook(server: str, browser, tmp_path):
    page = open_page(browser, server)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Throughput").click()
    page.get_by_role("heading", name="Throughput").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    open_tab(page, "Measured curve")
    page.locator('input[type="file"]').first.set_input_files(
        str(ROOT / "tests" / "data" / "app" / "sample_curve.csv")
    )
    page.get_by_text("Measured operating point [tokens/s per GPU]").wait_for(timeout=TIMEOUT_MS)
    settle(page)
    assert metric_value(page, "Measured operating point") == "700.0"

    page.locator('[data-testid="stSidebarNav"] a', has_text="Export").click()
    prepare = page.get_by_role("button", name="Prepare the Excel workbook")
    prepare.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    prepare.click()  # the page builds a file only when asked
    button = page.get_by_role("button", name="Excel workbook", exact=True)
    button.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    with page.expect_download(timeout=TIMEOUT_MS) as download:
        button.click()
    target = tmp_path / download.value.suggested_filename
    download.value.save_as(target)
    assert target.suffix == ".xlsx"
    with zipfile.ZipFile(target) as book:  # an Office Open XML workbook is a zip of parts
        assert "xl/workbook.xml" in book.namelist()
    from openpyxl import load_workbook

    sheets = load_workbook(target, read_only=True).sheetnames
    assert any(name.lower().startswith("summary") for name in sheets), sheets
    page.close()


def test_a_link_naming_a_server_file_shows_no_content(server: str, browser):
    """A shared link whose scenario names /etc/passwd as its curve: refused, nothing of it shown."""
    from econ.catalog import DEFAULT_SCENARIO
    from econ.ui import state

    edits = state.encode({"throughput": {"measured": {"curve": "/etc/passwd"}}})
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}?scenario={DEFAULT_SCENARIO}&edits={edits}")
    page.get_by_text("throughput.measured.curve").first.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    text = page.inner_text("body")
    assert "models/" in text
    assert "root:x:" not in text and "/bin/bash" not in text and "nologin" not in text
    page.close()
