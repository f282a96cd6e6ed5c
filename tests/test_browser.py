"""End-to-end: the app in a real headless Chromium (Debian's), driven by Playwright."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
            "--browser.gatherUsageStats=false",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start within 60 s")
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
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


def metric_value(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


def test_change_an_input_and_see_the_metric_move(server: str, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    page.get_by_text("Levelized cost [USD/M tokens]").wait_for(timeout=60_000)
    before = metric_value(page, "Levelized cost")
    assert before not in ("", "n/a")
    utilization = page.get_by_role("spinbutton", name="Utilization [%]")
    utilization.fill("90.0")
    utilization.press("Enter")
    page.wait_for_function(
        """([label, before]) => {
            const boxes = [...document.querySelectorAll('[data-testid="stMetric"]')];
            const box = boxes.find(b => b.innerText.includes(label));
            const value = box && box.querySelector('[data-testid="stMetricValue"]');
            return value && value.innerText !== before;
        }""",
        arg=["Levelized cost", before],
        timeout=30_000,
    )
    assert metric_value(page, "Levelized cost") != before
    page.screenshot(path=str(tmp_path / "app.png"), full_page=True)
    page.close()
