"""Screenshots of the app's main pages in Debian's headless Chromium, for the README and docs/app.md.

.venv/bin/python scripts/screenshot.py [OUT_DIR] [--theme light|dark] [--pages results,gains,...]

Writes OUT_DIR/app.png (the Results page, the README's screenshot) and OUT_DIR/app-<page>.png for
the other pages (default OUT_DIR: docs/). With --theme dark the files are app-dark*.png.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from econ.memo.render import BROWSER_ARGS

ROOT = Path(__file__).resolve().parents[1]
PAGES = (
    "results",
    "scenario",
    "throughput",
    "gains",
    "power",
    "market",
    "compare",
    "library",
    "risk",
    "export",
)
CHROMIUM_ARGS = list(BROWSER_ARGS)


def start_server(app: Path | None = None, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run` on `app` (default: the econ app) on a free port; (process, url).
    `env`: the server's environment (default: this process's)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(app or ROOT / "app.py"),
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
            "--browser.gatherUsageStats=false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    # polled every 0.05 s: at 0.5 s the wait added up to half a second at random to a cold start
    # that benchmarks/bench_cold.py times from the server's start
    for _ in range(2400):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return server, url
        except OSError:
            time.sleep(0.05)
    server.terminate()
    raise SystemExit("streamlit did not start within 120 s")


def wait_until_idle(page, timeout_ms: int = 90_000) -> None:
    """Wait for the script run to finish (no running indicator) and the charts to draw."""
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    for _ in range(2):  # twice: a run can start right after the first one settles
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
            "!document.querySelector('[data-testid=\"stSkeleton\"]') && "
            "!document.querySelector('.stale-element, [data-stale=\"true\"]')",
            timeout=timeout_ms,
        )
        time.sleep(1.5)


def market_query() -> str:
    """The Market page on a GPU-hour scenario priced from a series (the H200 one, its spot
    GPU-hours and renewals at CCIR's tier-2 index), where its own price lines show best."""
    from econ.ui.state import encode

    edits = {"market": {"spot_sells": "gpu_hours", "contract_term_months": 12,
                        "rental_series": "CCIR/CRI-T2IF"}}  # fmt: skip
    return f"?scenario=llama2-70b-h200&edits={encode(edits)}"


def shoot(page, url: str, name: str, target: Path) -> None:
    query = market_query() if name == "market" else ""
    page.goto(f"{url}/{'' if name == 'results' else name}{query}")
    wait_until_idle(page)
    if name == "throughput":
        page.get_by_role("tab", name="Simulated curve").click()
        wait_until_idle(page)
    if name == "gains":
        page.get_by_text("Solve the break-even gains").click()
        wait_until_idle(page)
    if name == "risk":
        page.get_by_text("Hold the base case's loan").click()  # a lender's stress test
        wait_until_idle(page)
        page.get_by_role("button", name="Run the tornado").click()
        wait_until_idle(page)
        page.get_by_role("button", name="Run the Monte Carlo").click()
        wait_until_idle(page)
    if name != "results":  # the main area scrolls inside the page: grow the window to fit it
        height = page.evaluate(
            '() => Math.max(...[...document.querySelectorAll(\'[data-testid="stMain"], '
            '[data-testid="stMainBlockContainer"]\')].map(e => e.scrollHeight))'
        )
        page.set_viewport_size({"width": 1500, "height": min(max(1000, int(height) + 80), 7000)})
        time.sleep(1.5)
    page.screenshot(path=str(target))
    page.set_viewport_size({"width": 1500, "height": 1000})
    print(f"wrote {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs"))
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    parser.add_argument("--pages", default=",".join(PAGES))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prefix = "app" if args.theme == "light" else "app-dark"
    server, url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            # the app follows the viewer's colour scheme (config.toml has light and dark themes)
            page = browser.new_page(
                viewport={"width": 1500, "height": 1000}, color_scheme=args.theme
            )
            for name in args.pages.split(","):
                suffix = "" if name == "results" else f"-{name}"
                shoot(page, url, name, out / f"{prefix}{suffix}.png")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
