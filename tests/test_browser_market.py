"""End-to-end: the Market page in headless Chromium (Debian's): it opens, draws its chart of the
rental index and the scenario's price, and shows no error.

The module-scoped server and Chromium of tests/test_browser.py (one way to start them).
"""

from __future__ import annotations

import pytest

from tests import test_browser
from tests.test_browser import TIMEOUT_MS, settle

browser = test_browser.browser
server = test_browser.server

pytestmark = pytest.mark.browser


def test_the_market_page_draws_its_chart_and_no_error(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server.rstrip("/") + "/market")
    page.get_by_role("heading", name="Market").wait_for(timeout=TIMEOUT_MS)
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    chart.wait_for(timeout=TIMEOUT_MS)
    settle(page)
    # vega-embed has drawn the chart: a canvas or an SVG with a size
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] canvas, '
                + '[data-testid="stVegaLiteChart"] svg')].some(e => e.clientWidth > 200
                && e.clientHeight > 200)""",
        timeout=TIMEOUT_MS,
    )
    page.get_by_text("Series shown").wait_for(timeout=TIMEOUT_MS)
    assert page.get_by_text("token price equivalent of a GPU-hour").count() == 1
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
