"""An outside lender's credit reviewer on the memos (review 26): what the memo shows, honestly.

Monte Carlo percentiles of an IRR or the payback taken over the draws that have them (the losing
draws left out, unsaid), a case name or a case's path given twice and the last silently used,
case names that read as "base" or as a formula, a minimum DSCR below 1 with no note where no
covenant is tested, the tornado chart's dotted paths, the page count of `econ memo --help`, an
override error that does not name its case, and verify's words for a text the stamp gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from econ.cli import main
from econ.memo.build import MemoError, build_memo, draw_percentiles, parse_case, parse_montecarlo
from econ.memo.render import charts, html, stamp_json
from econ.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
CREATED = "2026-01-01T00:00:00Z"

UNCOVERED = (
    # the seed with a 90% level-payment loan over 24 months and no covenant: the debt service is
    # not covered in 24 months, which no covenant row says
    "financing.debt_share=0.9",
    "financing.debt_term_months=24",
    "financing.repayment='level_payment'",
    "financing.size_to_min_dscr=none",
    "financing.max_ltv=none",
    "financing.covenants.dscr_floor=none",
    "market.price_usd_per_mtok=0.2",
)


def _stamp_of(text: str) -> dict:
    return json.loads(re.search(r'id="econ-stamp">(.*?)</script>', text, re.S).group(1))


def _with_stamp(text: str, stamp: dict) -> str:
    start = text.index('id="econ-stamp">') + len('id="econ-stamp">')
    end = text.index("</script>", start)
    return text[:start] + stamp_json(stamp) + text[end:]


def _verify(capsys, path: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture(scope="module")
def montecarlo_memo():
    """The seed's memo over 40 draws of a month-1 token price of uniform(0.1, 0.4): most draws
    lose, and their IRRs and paybacks are undefined."""
    spec = parse_montecarlo(40, ["market.price_usd_per_mtok=uniform(0.1,0.4)"], 3)
    memo = build_memo(load_scenario(SEED), montecarlo=spec, created=CREATED)
    return memo, html(memo)


@pytest.fixture(scope="module")
def uncovered(tmp_path_factory):
    """A memo with one named case of a scenario whose debt service is not covered, no covenant
    tested: (memo, document, path of the HTML)."""
    memo = build_memo(
        load_scenario(SEED, list(UNCOVERED)),
        {"d": ["utilization.share=0.6"]},
        created=CREATED,
    )
    text = html(memo)
    path = tmp_path_factory.mktemp("memo") / "uncovered.html"
    path.write_text(text, encoding="utf-8")
    return memo, text, path


# 1. Monte Carlo percentiles over every draw, the draws a figure has said


def test_a_figure_fewer_than_half_the_draws_have_gets_no_percentiles():
    values = np.array([0.1, np.nan, np.nan, 0.3, np.nan])
    assert draw_percentiles(values, "irr_equity_annual") == ([None, None, None], 2)
    shown, count = draw_percentiles(np.array([0.1, np.nan, 0.2, 0.3]), "irr_equity_annual")
    assert count == 3 and shown == pytest.approx(np.quantile([0.1, 0.2, 0.3], [0.1, 0.5, 0.9]))


def test_a_draw_that_never_pays_back_counts_as_paying_back_after_the_horizon():
    # 10 draws, 5 never pay back: P10 lies among those that do (12 and 14 months); P50 between
    # the last that does (25) and the first that does not, P90 among those: beyond the horizon
    months = np.array([12.0, np.nan, np.nan, 14.0, np.nan, 20.0, 25.0, np.nan, 16.0, np.nan])
    shown, count = draw_percentiles(months, "payback_months")
    assert count == 5
    assert shown[0] == pytest.approx(12 + 0.9 * (14 - 12))
    assert shown[1:] == [None, None]
    every = np.array([12.0, 30.0, 14.0])  # (all pay back: the percentiles of all)
    assert draw_percentiles(every, "payback_months")[0] == pytest.approx(
        np.quantile(every, [0.1, 0.5, 0.9])
    )


def test_montecarlo_memo_says_how_many_draws_have_each_figure(montecarlo_memo, tmp_path, capsys):
    memo, text = montecarlo_memo
    defined = memo.cases["p50"]["defined"]
    n = memo.cases["p50"]["draws"]
    assert n == 40 and 2 * defined["irr_equity_annual"] < n
    assert 0 < defined["payback_months"] < n / 2
    for q in ("p10", "p50", "p90"):  # before: the percentiles of the 10 draws that had one
        assert memo.figures[f"{q}.irr_equity_annual"] is None
    assert memo.figures["p10.payback_months"] is not None
    assert memo.figures["p50.payback_months"] is None  # before: the median of those that pay
    assert memo.figures["p50.npv_usd"] < 0
    notes = re.search(r'id="case-notes">(.*?)</p>', text, re.S).group(1)
    assert (
        f"Equity IRR: defined in only {defined['irr_equity_annual']} of 40 draws, fewer than half"
        in notes
    )
    never = n - defined["payback_months"]
    assert f"Payback: {never} of 40 draws never pay back within the 72-month horizon" in notes
    assert "draws where a figure is undefined left out" not in text
    out = tmp_path / "mc.html"
    out.write_text(text, encoding="utf-8")
    code, report = _verify(capsys, out)  # econ verify recomputes the counts and notes alike
    assert code == 0, report


def test_a_figure_most_draws_have_is_footnoted_with_its_count(montecarlo_memo):
    from econ.memo.render import _draws_note

    memo, _ = montecarlo_memo
    case = {**memo.cases["p50"], "defined": {"irr_project_annual": 30}}
    assert _draws_note(case, "irr_project_annual", memo) == (
        "percentiles over the 30 of 40 draws where it is defined"
    )
    whole = {**memo.cases["p50"], "defined": {"npv_usd": 40}}
    assert _draws_note(whole, "npv_usd", memo) is None


# 2, 3, 7. Case names and paths given twice, names that read as base, errors that name the case


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        (
            ["stress=utilization.share=0.4", "stress=utilization.share=0.9"],
            "--case stress is given twice; expected each case name once",
        ),
        (
            ["d=utilization.share=0.4;utilization.share=0.9"],
            "--case d: utilization.share is given twice; expected each path once in a case",
        ),
        (["BASE=utilization.share=0.4"], "'BASE' is the scenario itself (base)"),
        (["b\u0430se=utilization.share=0.4"], "case name 'b\u0430se': expected ASCII letters"),
        (["-x=utilization.share=0.4"], "case name '-x': expected ASCII letters"),
        (["_x=utilization.share=0.4"], "case name '_x': expected ASCII letters"),
        (["d=market.price_usd_per_mtok"], "--case d: market.price_usd_per_mtok: expected an"),
        (["d=utilization.share=0.4;bogus"], "--case d: bogus: expected an override of the form"),
    ],
)
def test_memo_refuses_a_case_econ_would_misread(cases, message, tmp_path, capsys):
    out = tmp_path / "m.html"
    args = [a for case in cases for a in (f"--case={case}",)]
    assert main(["memo", str(SEED), "--out", str(out), *args]) == 3
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not out.exists()


def test_a_case_name_of_ascii_letters_digits_dash_and_underscore_is_taken():
    assert parse_case("Rate-up_2=utilization.share=0.6") == (
        "Rate-up_2",
        ["utilization.share=0.6"],
    )
    with pytest.raises(MemoError, match="scenario itself"):
        parse_case("Base=utilization.share=0.6")


@pytest.mark.parametrize("name", ["BASE", "b\u0430se", "-x", "\u00e9t\u00e9"])
def test_verify_refuses_a_stamp_case_name_memo_would_refuse(name, uncovered, tmp_path, capsys):
    _, text, _ = uncovered
    stamp = _stamp_of(text)
    stamp["cases"][name] = stamp["cases"].pop("d")
    path = tmp_path / "renamed.html"
    path.write_text(_with_stamp(text, stamp), encoding="utf-8")
    code, out = _verify(capsys, path)
    assert code == 3 and "case name" in out and "Traceback" not in out, out


def test_verify_refuses_a_stamp_case_giving_a_path_twice(uncovered, tmp_path, capsys):
    _, text, _ = uncovered
    stamp = _stamp_of(text)
    stamp["cases"]["d"]["overrides"] = ["utilization.share=0.6", "utilization.share=0.9"]
    path = tmp_path / "twice.html"
    path.write_text(_with_stamp(text, stamp), encoding="utf-8")
    code, out = _verify(capsys, path)
    assert code == 3 and "case d gives utilization.share twice" in out, out


# 4. The minimum DSCR's note where the debt service is not covered


def test_min_dscr_says_the_debt_service_is_not_covered(uncovered):
    memo, text, _ = uncovered
    assert memo.figures["base.covenant_breach_months"] is None  # (no covenant tested)
    assert memo.summary["min_dscr"] < 1
    row = re.search(r"<td>Minimum DSCR<div class=\"note\">(.*?)</div>", text, re.S)
    assert row and row.group(1).startswith("Debt service not covered in ")


# 5. The tornado chart names each input by its label


def test_tornado_chart_names_inputs_by_label(uncovered):
    memo, _, _ = uncovered
    svg = charts(memo)["tornado"]
    shown = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "Market › Price [USD/M tokens]" in shown
    assert not [t for t in shown if re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", t)], shown


# 6. The help's page count


def test_memo_help_says_one_to_six_pages(capsys):
    with pytest.raises(SystemExit):
        main(["memo", "--help"])
    assert "One to six pages" in " ".join(capsys.readouterr().out.split())


# 8. Verify's words for a text the stamp gives


def test_verify_says_an_edited_creation_time_comes_from_the_stamp(uncovered, tmp_path, capsys):
    _, text, _ = uncovered
    stamp = _stamp_of(text)
    stamp["created_utc"] = "2020-01-01T00:00:00Z"
    path = tmp_path / "time.html"
    path.write_text(_with_stamp(text, stamp), encoding="utf-8")
    code, out = _verify(capsys, path)
    assert code == 1, out
    assert f"shown '{CREATED}', the memo recomputed from its stamp reads '2020-01-01" in out
    assert "scenario gives" not in out
