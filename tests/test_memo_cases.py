"""The memo's cases table shows the equity IRR, and a note where a case or a tornado input moves
a loan's interest rate.

Found by a lender's review: in the seed's memo the rate-up case (debt_rate_annual 0.1275) shows a
higher NPV than the base case (-149,174 against -162,599), as the project cash flow counts the tax
saved on interest (docs/methodology.md, Cash flows, NPV, IRR, payback; Ruback, Financial
Management 31(2), 2002), and no figure of the table showed what the rate costs the equity.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import econ
from econ.cli import main
from econ.memo.verify import _Figures

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
STACK = SEED.with_name("deepseek-r1-gb200-nvl72-capital-stack.toml")
CASES_NOTE = 'id="rate-note-cases"'
TORNADO_NOTE = 'id="rate-note-tornado"'


@pytest.fixture(scope="module")
def memo_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("memo") / "memo.html"
    assert main(["memo", str(SEED), "--out", str(out)]) == 0
    return out


def _figures(path: Path) -> dict[str, tuple[str, str]]:
    parser = _Figures()
    parser.feed(path.read_text(encoding="utf-8"))
    return {key: (value, text) for key, value, text in parser.figures}


def _verify(capsys, path: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _held_case(overrides: list[str]):
    """The seed with `overrides`, holding the seed's loan as sized, projected."""
    from econ import load_scenario, project
    from econ.analysis.committed import committed_loan
    from econ.memo.build import with_overrides
    from econ.scenario import dumps

    seed = load_scenario(SEED)
    base = project(seed)
    loan = committed_loan(seed, base.summary.iloc[0], base.monthly["debt_balance_usd"].to_numpy())
    return base, project(with_overrides(dumps(seed), overrides, "case", loan))


def test_the_rate_up_case_shows_the_equity_irr_the_projection_gives(memo_html):
    base, rate_up = _held_case(["financing.debt_rate_annual=0.1275"])  # 10.75% + 200 bp
    figures = _figures(memo_html)
    expected = rate_up.summary["irr_equity_annual"].iloc[0]
    value, text = figures["rate-up.irr_equity_annual"]
    assert float(value) == expected
    assert text == f"{expected:.2%}" == "-6.12%"
    # what the lender read: the NPV rises with the rate, the equity IRR falls
    npv, base_npv = rate_up.summary["npv_usd"].iloc[0], base.summary["npv_usd"].iloc[0]
    assert float(figures["rate-up.npv_usd"][0]) == npv > base_npv
    assert expected < base.summary["irr_equity_annual"].iloc[0]
    # the base column repeats the headline's figure
    assert "base.irr_equity_annual" in figures
    # an undefined equity IRR (the downside's equity flows never turn positive for good) is n/a
    _base, downside = _held_case(["market.price_usd_per_mtok=0.26088"])
    assert math.isnan(downside.summary["irr_equity_annual"].iloc[0])
    assert figures["downside.irr_equity_annual"] == ("", "n/a")
    # the minimum DSCR was already a row of the table, and stays one
    assert float(figures["rate-up.min_dscr"][0]) == rate_up.summary["min_dscr"].iloc[0]


def test_the_notes_stand_under_the_tables_where_a_rate_moves(memo_html):
    text = memo_html.read_text(encoding="utf-8")
    cases = text.split('<section id="cases">')[1].split("</section>")[0]
    tornado = text.split('<section id="tornado">')[1].split("</section>")[0]
    assert CASES_NOTE in cases and TORNADO_NOTE in tornado
    assert (
        "Rate-up moves a loan&#39;s interest rate: the project NPV and IRR are of the project&#39;s "
        "cash flow after the tax actually paid, which counts the tax saved on interest, so a "
        "higher rate raises them"
    ) in cases
    assert "Cash flows, NPV, IRR, payback" in cases and "Ruback" in cases
    assert "The equity pays the interest: the Equity IRR row shows what the rate costs it" in cases
    assert "Financing › Debt rate [%/year]: a higher rate raises the NPV, as the note under" in (
        tornado
    )


def test_the_memo_with_its_notes_verifies_and_a_note_cut_or_a_figure_edited_fails(
    memo_html, tmp_path, capsys
):
    code, out = _verify(capsys, memo_html)
    assert code == 0, out
    text = memo_html.read_text(encoding="utf-8")
    start = text.index(f'<p class="note" {CASES_NOTE}>')
    cut = tmp_path / "cut.html"
    cut.write_text(text[:start] + text[text.index("</p>", start) + 4 :], encoding="utf-8")
    code, out = _verify(capsys, cut)
    assert code == 1 and "Rate-up moves" in out, out
    edited = tmp_path / "edited.html"
    figure = 'data-key="rate-up.irr_equity_annual" data-value="'
    assert text.count(">-6.12%</span>") == 1
    edited.write_text(text.replace(">-6.12%</span>", ">6.12%</span>"), encoding="utf-8")
    code, out = _verify(capsys, edited)
    assert code == 1 and "rate-up.irr_equity_annual: shown as '6.12%'" in out, out
    assert figure in text


def test_no_note_where_no_rate_moves(tmp_path, capsys):
    out = tmp_path / "prices.html"
    args = ["memo", str(SEED), "--out", str(out)]
    assert main([*args, "--case", "downside=market.price_usd_per_mtok=0.26088"]) == 0
    text = out.read_text(encoding="utf-8")
    assert CASES_NOTE not in text  # no case moves a rate
    # the tornado still swings the loan's rate: its note stands, pointing to a case on it
    tornado = text.split('<section id="tornado">')[1].split("</section>")[0]
    assert TORNADO_NOTE in tornado
    assert "econ memo --case NAME=financing.debt_rate_annual=VALUE" in tornado
    code, report = _verify(capsys, out)
    assert code == 0, report

    from econ import load_scenario
    from econ.memo.build import compute
    from econ.memo.render import _rate_notes

    seed = load_scenario(SEED)
    prices = compute(seed, {"up": ["market.price_usd_per_mtok=0.4"]}, ["utilization.share"])
    assert _rate_notes(prices) == {"cases": None, "tornado": None}
    # a case that sets the rate the scenario has moves nothing
    same = compute(seed, {"same": ["financing.debt_rate_annual=0.1075"]}, [])
    assert _rate_notes(same)["cases"] is None
    # without a loan the rate reaches nothing: no rate-up case, no tornado row, no note
    equity = load_scenario(SEED, {"financing.debt_share": 0.0})
    memo = compute(equity, {"r": ["financing.debt_rate_annual=0.2"]})
    assert "financing.debt_rate_annual" not in [r["input"] for r in memo.tornado["rows"]]
    assert _rate_notes(memo) == {"cases": None, "tornado": None}


def test_a_tranche_s_rate_and_a_monte_carlo_draw_of_the_rate_move_it():
    import copy

    from econ import load_scenario
    from econ.memo.build import compute, moves_rate
    from econ.memo.render import _rate_notes
    from econ.scenario.io import scenario_to_dict, validate_dict

    stack = load_scenario(STACK)  # a DDTL at SOFR + 2.25%, senior notes at 9.25%, equity

    def changed(name: str, **fields):
        data = copy.deepcopy(scenario_to_dict(stack))
        [tranche] = [t for t in data["financing"]["tranches"] if t["name"] == name]
        for key, value in fields.items():
            if isinstance(value, dict):
                tranche[key].update(value)
            else:
                tranche[key] = value
        return validate_dict(data)

    assert moves_rate(stack, changed("ddtl", floating={"spread_annual": 0.0425}))
    assert moves_rate(stack, changed("senior_notes", coupon_annual=0.1125))
    assert not moves_rate(stack, changed("ddtl", upfront_fee_share=0.03))  # a fee, not a rate
    assert not moves_rate(stack, changed("equity", required_return_annual=0.3))

    seed = load_scenario(SEED)
    spec = {
        "n": 10,
        "seed": 3,
        "distributions": {"financing.debt_rate_annual": "uniform(0.1,0.13)"},
    }
    memo = compute(seed, {}, [], montecarlo=spec)
    assert _rate_notes(memo)["cases"].startswith("P10, p50 and p90 move a loan's interest rate")
    spec["distributions"] = {"utilization.share": "uniform(0.6,0.8)"}
    assert _rate_notes(compute(seed, {}, [], montecarlo=spec))["cases"] is None


def test_the_memo_writes_a_token_count_in_words():
    """The memo wrote the seed's output over the horizon as "5.51e+13", where the app's tile
    reads "55.10 trillion": one rule (econ.labels.count_in_words) for both."""
    from econ.labels import count_in_words
    from econ.memo.figures import figure_text
    from econ.ui.fmt import format_value

    assert [count_in_words(v) for v in (999_999, 1e6, 5.5101e13, 5.5101e16, 2.5e18)] == [
        "999,999", "1.00 million", "55.10 trillion", "55.10 quadrillion", "2.50 quintillion"
    ]  # fmt: skip
    tokens = econ.project(econ.load_scenario(SEED)).metrics["tokens_total"][0]
    shown = figure_text("base.tokens_total", tokens)
    assert shown == f"{tokens / 1e12:,.2f} trillion" == format_value(tokens, "tokens")
