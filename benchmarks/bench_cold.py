"""App cold start in a real browser: server start to the first metric, and the first rerun, for
the econ app and for a bare Streamlit page that imports the same libraries (so the difference is
econ's own share).

Starts `streamlit run` (scripts/screenshot.py's start_server, the tests' way), opens headless
Debian Chromium with Playwright, and times (1) from the server process's start to the first
`stMetric` drawn, (2) until the sidebar's first input box is drawn too, (3) until the whole page is
drawn (the script has finished and every chart has its canvas), (4) from pressing Enter in a number
input to the metric's new value, at once and (5) again once the page has settled.

    .venv/bin/python benchmarks/bench_cold.py [--repeats 2]

Appends its table to benchmarks/results/bench_app.md (bench_app.py writes the rerun table).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
RESULTS = HERE / "results" / "bench_app.md"
TIMEOUT_MS = 180_000

BARE = """
import altair, numpy, pandas, pyarrow, pydantic, tomli_w
import streamlit as st

st.set_page_config(layout="wide")
value = st.sidebar.number_input("Utilization › Share [%]", value=70.0)
st.title("Bare")
st.metric("Levelized cost [USD/M tokens]", f"{1 / max(value, 1e-9):.4f}")
"""


USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The servers' environment: bytecode written and reused, as in a user's installation (a
PYTHONDONTWRITEBYTECODE=1 environment would compile econ's modules at every start, and the bare
page has none to compile)."""


SETTLE_S = 3.0
"""Seconds left after the first rerun before the settled one: the browser has drawn the page."""


SIDEBAR_INPUT = '[data-testid="stSidebarUserContent"] input'
"""The sidebar's first input box (the econ app draws its sidebar before the page's figures)."""


PAGE_DRAWN = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .every((chart) => chart.querySelector('canvas, svg'))"""
"""The script has finished (no running indicator) and every chart on the page is drawn."""


def cold_start(app: Path | None) -> tuple[float, float, float, float, float]:
    """(seconds from server start to the first metric, until the sidebar's first input box is
    drawn too, until the whole page is drawn, seconds of the first rerun, of a rerun SETTLE_S
    after it)."""
    from playwright.sync_api import sync_playwright

    from scripts.screenshot import CHROMIUM_ARGS, start_server

    began = time.perf_counter()
    process, url = start_server(app, USER_ENV)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            metric = page.locator('[data-testid="stMetricValue"]').first
            metric.wait_for(timeout=TIMEOUT_MS)
            first = time.perf_counter() - began
            page.locator(SIDEBAR_INPUT).first.wait_for(timeout=TIMEOUT_MS)
            inputs = time.perf_counter() - began
            page.wait_for_function(PAGE_DRAWN, timeout=TIMEOUT_MS)
            drawn = time.perf_counter() - began
            rerun = _rerun(page, metric, "83.0")
            time.sleep(SETTLE_S)
            settled = _rerun(page, metric, "84.0")
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    return first, inputs, drawn, rerun, settled


def _rerun(page, metric, value: str) -> float:
    """Seconds from pressing Enter on `value` in the utilization box to the metric's new text,
    once the server has finished its last run."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=TIMEOUT_MS,
    )
    before = metric.inner_text()
    box = page.get_by_role("spinbutton", name="Utilization › Share [%]")
    box.fill(value)
    pressed = time.perf_counter()
    box.press("Enter")
    page.wait_for_function(
        "(before) => document.querySelector('[data-testid=\"stMetricValue\"]')"
        ".innerText !== before",
        arg=before,
        timeout=TIMEOUT_MS,
    )
    return time.perf_counter() - pressed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bare = Path(folder) / "bare.py"
        bare.write_text(BARE, encoding="utf-8")
        runs = {"bare Streamlit page, same libraries": [], "econ app": []}
        cold_start(bare)  # warm-up, not counted: writes the bytecode and fills the file cache
        cold_start(None)
        for _ in range(args.repeats):  # interleaved, so load on the machine hits both alike
            runs["bare Streamlit page, same libraries"].append(cold_start(bare))
            runs["econ app"].append(cold_start(None))
    medians = {
        k: tuple(statistics.median(x[i] for x in v) for i in range(5)) for k, v in runs.items()
    }
    bare = medians["bare Streamlit page, same libraries"]
    app = medians["econ app"]
    lines = [
        "",
        "## App: cold start in a browser (server start to first metric) and first rerun",
        "",
        f"Headless Chromium, median of {args.repeats} interleaved starts each after one warm-up "
        "start of each (bytecode cached, as after installation); the bare page imports "
        "the third-party libraries the app's first run imports (altair, numpy, pandas, pyarrow, "
        "pydantic, tomli_w; scipy, openpyxl and sqlalchemy load later, on demand) and draws one "
        "input and one metric. The first rerun is a value typed as soon as the server has "
        "finished its first run, while the browser may still be drawing the page's charts; the "
        f"settled rerun is typed {SETTLE_S:g} s after the first rerun.",
        "",
        "| page | server start to first metric [s] | and the sidebar's inputs [s] | whole page "
        "drawn [s] | first rerun [s] | settled rerun [s] |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {k} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.2f} | {m[3]:.2f} | {m[4]:.2f} |"
            for k, m in medians.items()
        ),
        "| econ's own share | "
        + " | ".join(f"{a - b:.2f}" for a, b in zip(app, bare, strict=True))
        + " |",
        "",
        "Command: `.venv/bin/python benchmarks/bench_cold.py`",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(text)


if __name__ == "__main__":
    main()
