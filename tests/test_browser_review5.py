"""End-to-end checks of the fifth review's browser-only defects, in headless Chromium: the Scenario
page's tabs, which ignored every other click, and later left the tab being edited or undid a click
made while an edit's run was going (tabs whose labels or state changed with the run)."""

from __future__ import annotations

import re

import pytest

from tests.test_browser import TIMEOUT_MS, browser, server, settle  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def selected_tab(page) -> str:
    return page.locator('[role="tab"][aria-selected="true"]').first.inner_text().strip()


def tab(page, name: str):
    """The tab labelled `name` (its accessible name also has a "⚠️" drawn after the label)."""
    return page.get_by_role("tab", name=re.compile(f"^{re.escape(name)}( ⚠️)?$"))


def click_tab(page, name: str) -> None:
    """Click a tab and wait until it is open (a click opens it in the browser; no run follows)."""
    tab(page, name).click()
    page.wait_for_function(
        """name => {
            const tab = document.querySelector('[role="tab"][aria-selected="true"]');
            return tab !== null && tab.innerText.trim() === name;
        }""",
        arg=name,
        timeout=TIMEOUT_MS,
    )


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


def tab_mark(page, name: str) -> str:
    """What the page's stylesheet draws after the tab's label ("none" where nothing)."""
    return tab(page, name).evaluate(
        "tab => getComputedStyle(tab.querySelector('p'), '::after').content"
    )


def test_the_open_tab_survives_an_edit_that_marks_it(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/scenario")
    page.get_by_role("tab", name="Capex", exact=True).wait_for(timeout=TIMEOUT_MS)
    settle(page)
    click_tab(page, "Capex")
    # an edit reruns the page, and one that makes the scenario invalid marks the tab "⚠️" (drawn
    # by the stylesheet: the labels stay, so the tabs stay): the open tab stays open either way,
    # and clicks still work, also straight after the edit, while its run may still be going
    for value, marked in (("3", False), ("-5", True), ("2", False)):
        box = page.get_by_role("spinbutton", name="Spares share [%]")
        box.fill(value)
        box.press("Enter")
        page.wait_for_function(
            """marked => {
                const tab = [...document.querySelectorAll('[role="tab"]')]
                    .find(t => t.innerText.trim() === "Capex");
                if (tab === undefined) return false;  // the tabs are being drawn
                const after = getComputedStyle(tab.querySelector("p"), "::after").content;
                return after.includes("⚠️") === marked;
            }""",
            arg=marked,
            timeout=TIMEOUT_MS,
        )
        assert selected_tab(page) == "Capex"
        click_tab(page, "Market")
        assert selected_tab(page) == "Market"
        click_tab(page, "Capex")
        assert selected_tab(page) == "Capex"
        assert ("⚠️" in tab_mark(page, "Capex")) is marked
        assert "⚠️" not in tab_mark(page, "Market")
    page.close()
