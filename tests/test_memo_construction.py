"""The memo of a scenario with a construction period (a lender's review, 2026-12): its debt raised
is what is drawn, while the lender is owed the draws plus the interest capitalized before service
starts. The memo showed the draws only (2,474,920 USD for the seed built over months 0-3) and not
the 2,510,573 USD owed at conversion nor that service starts in month 4 (and the loan is repaid by
month 63, not 60); it now states them in the ask and in the headline figures, which `econ verify`
checks."""

from __future__ import annotations

import json
import re

import pytest

from econ.cli import main
from econ.memo.figures import CONSTRUCTION_KEYS, shown
from tests.test_construction_keys import BUILD_ARGS, SEED
from tests.test_memo import _parsed, _verify


@pytest.fixture(scope="module")
def built_memo(tmp_path_factory):
    out = tmp_path_factory.mktemp("memo") / "built.html"
    assert main(["memo", str(SEED), *BUILD_ARGS, "--out", str(out)]) == 0
    return out


def test_the_headline_figures_show_what_is_owed_when_service_starts(built_memo, capsys):
    assert main(["project", str(SEED), *BUILD_ARGS, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    figures = {key: (value, text) for key, value, text in _parsed(built_memo).figures}
    # the ledger of test_construction_keys: 70% of 3,535,600 drawn, 35,653.14 capitalized
    expected = {
        "debt_usd": "2,474,920",
        "construction_interest_usd": "35,653",
        "debt_at_conversion_usd": "2,510,573",
    }
    for key, text in expected.items():
        value, shown_text = figures[f"base.{key}"]
        assert float(value) == pytest.approx(summary[key], rel=1e-12)
        assert shown_text == text


def test_the_ask_says_when_service_starts_and_what_is_owed_then(built_memo):
    text = " ".join(re.sub(r"<[^>]+>", " ", built_memo.read_text(encoding="utf-8")).split())
    assert (
        "drawn with the capex: 742,476 USD in month 0 and 1,732,444 USD in month 2; service from "
        "month 4: 35,653 USD of interest capitalized during construction (added to the loan, not "
        "paid), so 2,510,573 USD is owed when service starts, repaid by month 63"
    ) in text  # (60 level payments from month 4, not by month 60)


def test_the_memo_verifies_and_an_edited_amount_owed_fails(built_memo, tmp_path, capsys):
    assert _verify(capsys, built_memo)[0] == 0
    edited = tmp_path / "edited.html"
    edited.write_text(
        re.sub(
            r'(data-key="base.debt_at_conversion_usd" data-value="[^"]*">)[^<]*<',
            lambda m: m.group(1) + "2,474,920<",
            built_memo.read_text(encoding="utf-8"),
        ),
        encoding="utf-8",
    )
    code, out = _verify(capsys, edited)
    assert code == 1
    assert "base.debt_at_conversion_usd: shown as '2,474,920', recomputed '2,510,573'" in out
    ask = tmp_path / "ask.html"
    ask.write_text(
        built_memo.read_text(encoding="utf-8").replace("so 2,510,573 USD", "so 2,474,920 USD"),
        encoding="utf-8",
    )
    code, out = _verify(capsys, ask)
    assert code == 1
    assert "shown '2,474,920', the memo recomputed from its stamp reads '2,510,573'" in out


def test_without_construction_the_rows_are_left_out():
    # 0 and the debt raised again: as econ project's table, the memo keeps its length
    seed = {"construction_interest_usd": 0, "debt_at_conversion_usd": 2_474_920.0}
    keys = {key for key, *_ in shown(summary=seed)}
    assert not keys & set(CONSTRUCTION_KEYS)
    built = seed | {"construction_interest_usd": 35_653.14}
    assert set(CONSTRUCTION_KEYS) <= {key for key, *_ in shown(summary=built)}


def test_the_cases_show_what_each_owes_when_service_starts(built_memo):
    # The rate-up case (10.75% + 2 points) capitalizes more interest on the same draws: its debt
    # raised is the base's, what it owes at conversion is not. By hand: 742,476 drawn in month 0
    # and 1,732,444 in month 2, a month's interest at 12.75%/12 added in months 1-3.
    rate = 0.1275 / 12
    owed = 742_476.0 * (1 + rate) ** 2 + 1_732_444.0
    owed *= 1 + rate
    figures = {key: (value, text) for key, value, text in _parsed(built_memo).figures}
    assert figures["rate-up.debt_usd"][1] == figures["base.debt_usd"][1] == "2,474,920"
    assert float(figures["rate-up.debt_at_conversion_usd"][0]) == pytest.approx(owed, rel=1e-12)
    assert figures["rate-up.debt_at_conversion_usd"][1] == "2,517,246"
    assert figures["downside.debt_at_conversion_usd"][1] == "2,510,573"  # (the price: no change)


def test_a_montecarlo_memo_gives_the_percentiles_of_what_is_owed(tmp_path, capsys):
    out = tmp_path / "mc.html"
    dist = "financing.debt_rate_annual=uniform(0.08,0.13)"
    args = ["memo", str(SEED), *BUILD_ARGS, "--out", str(out), "--montecarlo", "12"]
    assert main([*args, "--dist", dist]) == 0
    figures = {key: float(value) for key, value, _ in _parsed(out).figures}
    owed = [figures[f"p{q}.debt_at_conversion_usd"] for q in (10, 50, 90)]
    assert 2_474_920 < owed[0] < owed[1] < owed[2]  # more interest at a dearer rate
    assert _verify(capsys, out)[0] == 0
