"""A lender's credit officer's review of the memos (review 24): what the memo shows, honestly.

Wide Key assumptions (a long text or a settings group kept on one line), inputs without a source
left out of Key assumptions, the equity NPV the memo points to but never showed, an n/a without
its reason, a residual value the NPV rests on unstated, words for a loan of 0 USD, and a heading
left alone at the foot of a page.
"""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path

import pytest

from econ.cli import main
from econ.memo.build import build_memo
from econ.memo.render import DEFAULT_USED, UNSOURCED, _assumptions, html
from econ.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
STACK = SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"
MACRS = SCENARIOS / "deepseek-r1-gb200-nvl72-macrs.toml"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _memo(path: Path, *overrides: str, text: str | None = None):
    if text is not None:
        path = path.parent / "scenario.toml"
        path.write_text(text, encoding="utf-8")
    return build_memo(load_scenario(path, list(overrides)), created="2026-01-01T00:00:00Z")


def _text(document: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", " ", document))


def _project(capsys, path: Path, *sets: str) -> dict:
    capsys.readouterr()
    args = [a for s in sets for a in ("--set", s)]
    assert main(["project", str(path), *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]


@pytest.fixture(scope="module")
def stack():
    memo = _memo(STACK)
    return memo, html(memo)


@pytest.fixture(scope="module")
def no_debt():
    # a 3-year book life: the 70% LTV on book value sizes the loan to 0 USD
    memo = _memo(SEED, "depreciation.life_years=3")
    return memo, html(memo)


def _assumption_cells(document: str) -> list[tuple[str, str, str, str]]:
    """Key assumptions' rows: (path, value cell's class, value, source)."""
    section = document.split('<section id="assumptions">', 1)[1].split("</section>", 1)[0]
    return [
        (path, cls, html_module.unescape(value), html_module.unescape(source))
        for path, cls, value, source in re.findall(
            r'<tr><td(?: title="([^"]*)")?>[^<]*</td><td class="([^"]*)">([^<]*)</td>'
            r"<td>([^<]*)</td></tr>",
            section,
        )
    ]


# 1. Key assumptions fits the page: long text wraps, a settings group is its fields


def test_a_settings_group_is_listed_by_its_fields_and_text_values_wrap():
    memo = _memo(MACRS)
    document = html(memo)
    rows = {path: (cls, value) for path, cls, value, _ in _assumption_cells(document)}
    assert "method='macrs_gds'" not in document  # (the section's Python dump)
    tax = memo.scenario.depreciation.tax
    # the fields MACRS reads, each a row with its value (econ.scenario.depreciation_models)
    assert rows["depreciation.tax.method"] == ("text", "macrs_gds")
    assert rows["depreciation.tax.recovery_years"][1] == f"{tax.recovery_years:g}"
    assert rows["depreciation.tax.convention"] == ("text", tax.convention)
    assert "depreciation.tax.factor" not in rows  # (declining balance's: MACRS reads none)
    # only numbers are kept on one line (td.num: white-space nowrap)
    for path, (cls, value) in rows.items():
        if cls == "num":
            assert re.fullmatch(r"[-\d.,]+( USD)?%?( a year)?|none", value), (path, value)


def test_a_cited_description_wraps(stack):
    _, document = stack
    rows = {path: (cls, value) for path, cls, value, _ in _assumption_cells(document)}
    cls, value = rows["description"]
    assert cls == "text" and len(value) > 150
    css = re.search(r"td\.num, th\.num \{([^}]*)\}", document).group(1)
    assert "nowrap" in css and not re.search(r"td\.text \{[^}]*nowrap", document)


@pytest.mark.browser
def test_every_ready_made_memo_fits_1000_px(tmp_path):
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    from econ.memo.render import BROWSER_ARGS

    files = []
    for scenario in sorted(SCENARIOS.glob("*.toml")):
        out = tmp_path / f"{scenario.stem}.html"
        assert main(["memo", str(scenario), "--out", str(out)]) == 0
        files.append(out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(BROWSER_ARGS))
        page = browser.new_page(viewport={"width": 1000, "height": 800})
        wide = {}
        for out in files:
            page.goto(out.as_uri())
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > 1000:
                wide[out.stem] = width
        browser.close()
    assert not wide, wide


# 2. Key assumptions lists every input that moves a headline figure


def test_inputs_without_a_source_are_listed_as_such(tmp_path):
    text = SEED.read_text(encoding="utf-8")
    for path in (
        "utilization.share",
        "market.price_usd_per_mtok",
        "market.price_decline_annual",
    ):
        text = re.sub(rf'^"{re.escape(path)}" = .*\n', "", text, flags=re.M)
    memo = _memo(tmp_path / "x", text=text)
    rows = {row["path"]: row for row in _assumptions(memo)}
    seed = load_scenario(SEED)
    # set in the scenario without a source; at econ's default (0.7) without one
    assert rows["market.price_usd_per_mtok"]["source"] == UNSOURCED
    assert rows["market.price_usd_per_mtok"]["value"] == f"{seed.market.price_usd_per_mtok:g}"
    assert rows["market.price_decline_annual"]["source"] == UNSOURCED
    assert rows["utilization.share"]["source"] == DEFAULT_USED
    assert rows["utilization.share"]["value"] == f"{seed.utilization.share:.2%}"
    # a default that moves the tax paid, which the file never mentions
    assert rows["financing.tax_payment"]["source"] == DEFAULT_USED


def test_a_scenario_without_sources_lists_its_inputs_not_only_the_covenant(tmp_path):
    text = SEED.read_text(encoding="utf-8").rsplit("\n[sources]", 1)[0]
    memo = _memo(tmp_path / "x", text=text)
    rows = {row["path"]: row["source"] for row in _assumptions(memo)}
    for path in (
        "capex.system_price_usd",
        "financing.debt_rate_annual",
        "market.price_usd_per_mtok",
        "power.price_usd_per_kwh",
    ):
        assert rows[path] == UNSOURCED, path
    for path in ("financing.tax_loss_limit", "financing.tax_valuation_allowance"):
        assert rows[path] == DEFAULT_USED, path
    assert "financing.covenants.dscr_floor" in rows


# 3. and 4. Equity NPV shown; each n/a with its reason


def test_the_equity_npv_is_a_headline_figure_and_a_case_row(stack, capsys):
    memo, document = stack
    summary = _project(capsys, STACK)
    shown = re.search(r'data-key="base\.npv_equity_usd" data-value="([^"]*)">([^<]*)<', document)
    assert float(shown.group(1)) == summary["npv_equity_usd"]
    assert shown.group(2) == f"{summary['npv_equity_usd']:,.0f}"
    downside = _project(capsys, STACK, *memo.cases["downside"]["overrides"])
    case = re.search(r'data-key="downside\.npv_equity_usd" data-value="([^"]*)"', document)
    assert float(case.group(1)) == pytest.approx(downside["npv_equity_usd"], rel=1e-9)


def _case_cells(document: str) -> list[tuple[str, str, str]]:
    """The cases table's cells: (figure key, text, footnote numbers)."""
    section = document.split('<section id="cases">', 1)[1].split("</section>", 1)[0]
    cells = re.findall(
        r'<td class="num">(?:<span class="figure" data-key="([^"]*)"[^>]*>)?([^<]*)(?:</span>)?'
        r"(?:<sup>([^<]*)</sup>)?</td>",
        section,
    )
    return [(key, text, notes) for key, text, notes in cells]


@pytest.mark.parametrize("which", ["stack", "no_debt"])
def test_every_n_a_in_the_cases_table_has_a_footnote_with_its_reason(which, request):
    memo, document = request.getfixturevalue(which)
    cells = _case_cells(document)
    blanks = [(key, notes) for key, text, notes in cells if text == "n/a"]
    assert blanks and all(notes for _, notes in blanks), blanks
    notes = _text(re.search(r'id="case-notes">(.*?)</p>', document, re.S).group(1))
    if which == "stack":
        # the base case's equity IRR: the engine's reason, its roots included
        reason = next(w for w in memo.summary["warnings"] if "irr_equity_annual is null" in w)
        roots = re.search(r"roots found, NPV as the rate rises: ([^)]*\([^)]*\)[^)]*\))", reason)
        assert "Equity IRR is n/a" in notes and roots.group(1) in notes
    else:
        assert "Payback is n/a: cumulative project cash flow never turns positive" in notes


# 5. The residual value the NPV rests on


def test_the_ask_states_the_residual_value_its_present_value_and_its_share_of_npv():
    memo = _memo(SEED, "fleet.retire_month=48")
    text = _text(html(memo))
    monthly = memo.monthly
    sold = monthly["disposal_usd"].to_numpy(dtype=float)
    # independently: (1 + r)^(-m/12), monthly compounding of the annual discount rate
    present = float((sold * 1.12 ** (-monthly["month"].to_numpy() / 12)).sum())
    npv = memo.summary["npv_usd"]
    row = " ".join(re.search(r"Residual value (.*?) Financing", text).group(1).split())
    assert f"{sold.sum():,.0f} USD" in row and "at its book value" in row
    assert "no source" in row
    assert f"present value {present:,.0f} USD" in row
    assert f"{present / npv:.0%} of the NPV" in row
    assert f"the NPV would be {npv - present:,.0f} USD" in row


# 6. A loan sized to 0 USD


def test_a_loan_sized_to_zero_is_said_as_no_debt(no_debt):
    memo, document = no_debt
    assert memo.summary["debt_usd"] == 0
    # the memo's own words (the engine's warnings may say "sized ...: 0 USD")
    text = _text(document.split('<section id="warnings">', 1)[0])
    assert "rate-up" not in memo.cases
    assert "financing.debt_rate_annual" not in [row["input"] for row in memo.tornado["rows"]]
    assert "all equity: no debt raised" in text
    for said in ("debt sized there", "(0 USD)", "loan as sized", "Holds this debt", ": 0 USD"):
        assert said not in text, said
    paths = [row["path"] for row in _assumptions(memo)]
    assert "financing.debt_rate_annual" not in paths and "financing.debt_term_months" not in paths


# 7. A heading stays with its table in the PDF


def test_key_assumptions_heading_is_not_left_alone_at_a_page_foot(tmp_path):
    if not shutil.which("chromium"):
        pytest.skip("no chromium for the PDF")
    from pypdf import PdfReader

    out = tmp_path / "memo.pdf"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    pages = [page.extract_text() for page in PdfReader(out).pages]
    page = next(p for p in pages if "Key assumptions and their sources" in p)
    after = page.split("Key assumptions and their sources", 1)[1]
    # the heading's page holds the header row and at least a row under it
    assert "Input" in after and "Source" in after
    assert re.search(r"›.*\n.*›", after, re.S), after[:300]


def test_each_table_header_is_a_thead(stack):
    _, document = stack
    for section in ("cases", "tornado", "assumptions"):
        part = document.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
        assert "<thead>" in part, section


def test_the_npv_without_the_residual_counts_the_tax_on_the_sale(tmp_path):
    """MACRS over 48 months: the GPUs are sold at book value, all of it a gain over the tax
    basis; with nothing sold that tax is gone too, so the NPV is not NPV - PV(proceeds)."""
    from econ.analysis.committed import committed_loan, hold
    from econ.engine import project
    from econ.memo.verify import verify_html
    from econ.scenario.io import dumps, parse_toml, validate_dict

    memo = _memo(MACRS, "horizon_months=48")
    monthly = memo.monthly
    assert monthly["tax_gain_on_disposal_usd"].sum() > 0
    # independently: the scenario with the sale at 0, holding the loan as sized (as the cases)
    balance = monthly["debt_balance_usd"].to_numpy()
    data = parse_toml(
        dumps(load_scenario(MACRS, ["horizon_months=48", "depreciation.sale_value_share=0"])), "x"
    )
    data = hold(data, committed_loan(memo.scenario, memo.summary, balance))
    unsold = float(project([validate_dict(data, file="x")]).metrics["npv_usd"][0])
    sold = monthly["disposal_usd"].to_numpy(dtype=float)
    present = float((sold * 1.12 ** (-monthly["month"].to_numpy() / 12)).sum())
    npv = memo.summary["npv_usd"]
    assert abs(unsold - (npv - present)) > 100_000  # (the tax on the gain: the old text's error)
    document = html(memo)
    row = " ".join(re.search(r"Residual value (.*?) Financing", _text(document)).group(1).split())
    assert f"present value {present:,.0f} USD at 12.00% a year, before tax" in row
    assert f"the NPV would be {unsold:,.0f} USD, not {npv:,.0f}" in row
    assert f"{npv - present:,.0f}" not in row
    # a figure `econ verify` recomputes
    out = tmp_path / "memo.html"
    out.write_text(document, encoding="utf-8")
    report = verify_html(out)
    assert report.differences == [] and report.checked > 0
    out.write_text(document.replace(f">{unsold:,.0f}<", ">1<"), encoding="utf-8")
    assert any("npv_without_sale_usd" in d for d in verify_html(out).differences)
