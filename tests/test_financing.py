"""Tests of econ.financing (one tranche's arithmetic) and the `econ loan` command: published
spreadsheet examples, numpy-financial and econ.excel cross-checks, a textbook bond amortization,
hand-computed schedules, Hypothesis invariants and bad input."""

from __future__ import annotations

import csv
import json
import os
import re

import numpy as np
import numpy_financial as npf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import excel
from econ.cli import main
from econ.errors import InputError
from econ.financing import (
    choice_codes,
    coupon_schedule,
    effective_interest,
    floating_rate_annual,
    index_rate_annual,
    level_payment_balance,
    level_payment_schedule,
    loan_schedule,
)
from tests.conftest import ROOT

SETTINGS = settings(
    max_examples=int(os.environ.get("ECON_HYPOTHESIS_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
EXAMPLES = ROOT / "tests" / "data" / "spreadsheet_function_examples.csv"


def one_draw(amount, T, month=0, n=1):
    draws = np.zeros((n, T))
    draws[:, month] = amount
    return draws


def payment(schedule):
    return schedule["interest_usd"] + schedule["scheduled_principal_usd"] + schedule["balloon_usd"]


# ---------------------------------------------------------------------------------------------
# published spreadsheet examples (Microsoft Excel documentation): PMT, IPMT, PPMT
# ---------------------------------------------------------------------------------------------


def _loan_examples():
    """Rows of PMT/IPMT/PPMT for a loan in arrears (no fv, type 0): what loan_schedule models."""
    cases = []
    with EXAMPLES.open() as handle:
        for row in csv.DictReader(handle):
            if row["function"] not in ("PMT", "IPMT", "PPMT"):
                continue
            args = dict(part.strip().split("=") for part in row["arguments"].split(","))
            if float(args.get("fv", 0)) or float(args.get("type", 0)) or float(args["pv"]) <= 0:
                continue
            rate = _arith(args["rate"])
            cases.append(
                pytest.param(
                    row["function"],
                    rate,
                    int(args["nper"]),
                    float(args["pv"]),
                    int(args.get("per", 1)),
                    float(row["expected"]),
                    float(row["tolerance"]),
                    id=f"{row['function']}({row['arguments']})",
                )
            )
    return cases


def _arith(text):
    match = re.fullmatch(r"\s*([0-9.]+)\s*(?:/\s*([0-9.]+))?\s*", text)
    return float(match[1]) / (float(match[2]) if match[2] else 1.0)


def test_every_loan_row_of_the_examples_is_used():
    assert len(_loan_examples()) == 5  # PMT x1, IPMT x2, PPMT x2 (the others have fv or type)


@pytest.mark.parametrize(("func", "rate", "nper", "pv", "per", "expected", "tol"), _loan_examples())
def test_published_examples(func, rate, nper, pv, per, expected, tol):
    # Spreadsheet results are signed from the borrower's side (payments negative).
    s = loan_schedule(one_draw(pv, nper + 1), [rate], [nper])
    value = {
        "PMT": payment(s)[0, per],
        "IPMT": s["interest_usd"][0, per],
        "PPMT": (s["scheduled_principal_usd"] + s["balloon_usd"])[0, per],
    }[func]
    assert -value == pytest.approx(expected, abs=tol)


# ---------------------------------------------------------------------------------------------
# level payment, cross-checked with numpy-financial and econ.excel
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    # numpy-financial's pmt overflows for denormal rates; econ.excel does not (tested there).
    rate=st.one_of(st.just(0.0), st.floats(1e-7, 0.03)),
    nper=st.integers(1, 120),
    pv=st.floats(1.0, 1e9),
)
def test_level_payment_matches_numpy_financial_and_excel(rate, nper, pv):
    s = loan_schedule(one_draw(pv, nper + 1), [rate], [nper])
    per = np.arange(1, nper + 1)
    principal = (s["scheduled_principal_usd"] + s["balloon_usd"])[0, 1:]
    np.testing.assert_allclose(
        -s["interest_usd"][0, 1:], excel.ipmt(rate, per, nper, pv), rtol=1e-9, atol=1e-6 * pv / nper
    )
    np.testing.assert_allclose(
        -principal, excel.ppmt(rate, per, nper, pv), rtol=1e-9, atol=1e-6 * pv / nper
    )
    np.testing.assert_allclose(-payment(s)[0, 1:], npf.pmt(rate, nper, pv), rtol=1e-9)
    if rate > 0:  # numpy-financial's ipmt divides by the rate
        np.testing.assert_allclose(
            -s["interest_usd"][0, 1:],
            npf.ipmt(rate, per, nper, pv),
            rtol=1e-8,
            atol=1e-6 * pv / nper,
        )
    # Balances end at zero and the principal repaid is the amount drawn.
    assert s["balance_usd"][0, -1] == pytest.approx(0.0, abs=1e-6 * pv)
    assert principal.sum() == pytest.approx(pv, rel=1e-12)


def test_existing_level_payment_functions_agree_with_loan_schedule():
    months = np.arange(61)
    rate = np.array([0.0925 / 12, 0.0])
    interest, principal, balance, balloon = level_payment_schedule(
        [1e6, 1e6], rate, [60, 60], months
    )
    s = loan_schedule(one_draw(1e6, 61, n=2), rate, [60, 60])
    np.testing.assert_allclose(interest, s["interest_usd"], atol=1e-6)
    np.testing.assert_allclose(
        principal, s["scheduled_principal_usd"] + s["balloon_usd"], atol=1e-6
    )
    np.testing.assert_allclose(balance, s["balance_usd"], atol=1e-6)
    np.testing.assert_allclose(
        level_payment_balance([1e6], [0.0], [60], months)[0, 30], 5e5, rtol=1e-12
    )
    # A balloon when the horizon ends first (the engine's use).
    _, _, balance, balloon = level_payment_schedule([1e6], [0.01], [60], months, last_month=[24])
    assert balloon[0, 24] == pytest.approx(-excel.fv(0.01, 24, excel.pmt(0.01, 60, 1e6), 1e6))
    assert balance[0, 24:].max() == 0


# ---------------------------------------------------------------------------------------------
# other repayment profiles, hand-computed
# ---------------------------------------------------------------------------------------------


def test_straight_line_hand_computed():
    # 1,200 over 12 months at 1%/month: principal 100 a month, interest 1% of the opening balance.
    s = loan_schedule(one_draw(1200.0, 13), [0.01], [12], "straight_line")
    np.testing.assert_allclose(s["scheduled_principal_usd"][0, 1:], 100.0)
    np.testing.assert_allclose(s["interest_usd"][0, 1:], 0.01 * (1200.0 - 100.0 * np.arange(12)))
    assert s["balloon_usd"].sum() == pytest.approx(0.0, abs=1e-9)


def test_bullet_pays_interest_then_everything_at_maturity():
    s = loan_schedule(one_draw(1000.0, 25), [0.005], [24], "bullet")
    np.testing.assert_allclose(s["interest_usd"][0, 1:], 5.0)
    assert s["scheduled_principal_usd"].sum() == 0
    assert s["balloon_usd"][0, 24] == 1000.0
    assert s["balance_usd"][0, 24] == 0


def test_balloon_payment_is_pmt_with_a_future_value():
    # PMT(r, N, pv=A, fv=-F): level payments leaving F for the balloon.
    r, n, a, share = 0.0075, 60, 5e6, 0.3
    s = loan_schedule(one_draw(a, n + 1), [r], [n], "balloon", balloon_share=share)
    expected = -excel.pmt(r, n, a, -share * a)
    np.testing.assert_allclose(payment(s)[0, 1:n], expected, rtol=1e-10)
    final_regular = s["interest_usd"][0, n] + s["scheduled_principal_usd"][0, n]
    assert final_regular == pytest.approx(expected, rel=1e-10)
    assert s["balloon_usd"][0, n] == pytest.approx(share * a, rel=1e-10)


def test_interest_only_then_level_payments():
    r, n, k, a = 0.01, 48, 12, 1e6
    s = loan_schedule(
        one_draw(a, n + 1), [r], [n], "interest_only_then_amortizing", interest_only_months=k
    )
    np.testing.assert_allclose(s["interest_usd"][0, 1 : k + 1], r * a)
    assert s["scheduled_principal_usd"][0, : k + 1].sum() == 0
    np.testing.assert_allclose(payment(s)[0, k + 1 :], -excel.pmt(r, n - k, a), rtol=1e-10)


def test_amortization_longer_than_maturity_leaves_a_balloon():
    # 30-year amortization, due in 5 years: the 5-year balance is the FV of the 30-year loan.
    r, a = 0.005, 1e6
    s = loan_schedule(one_draw(a, 61), [r], [60], amortization_months=[360])
    balloon = -excel.fv(r, 59, excel.pmt(r, 360, a), a) - (-excel.ppmt(r, 60, 360, a))
    assert s["balloon_usd"][0, 60] == pytest.approx(balloon, rel=1e-9)


@SETTINGS
@given(
    rate=st.floats(0.0, 0.02),
    first=st.integers(0, 10),
    gap=st.integers(1, 10),
    term=st.integers(12, 60),
    a1=st.floats(1.0, 1e8),
    a2=st.floats(1.0, 1e8),
    repayment=st.sampled_from(["level_payment", "straight_line", "bullet", "balloon"]),
)
def test_each_draw_amortizes_from_its_own_month(rate, first, gap, term, a1, a2, repayment):
    """A delayed-draw loan is the sum of one loan per draw (linearity), each over its own term."""
    T = first + gap + term + 1
    draws = np.zeros((1, T))
    draws[0, first], draws[0, first + gap] = a1, a2
    kw = dict(amortization_months=[term], balloon_share=0.2 if repayment == "balloon" else 0.0)
    both = loan_schedule(draws, [rate], [T - 1], repayment, **kw)
    one = loan_schedule(one_draw(a1, T, first), [rate], [T - 1], repayment, **kw)
    two = loan_schedule(one_draw(a2, T, first + gap), [rate], [T - 1], repayment, **kw)
    for key in both:
        np.testing.assert_allclose(both[key], one[key] + two[key], rtol=1e-9, atol=1e-6)
    principal = both["scheduled_principal_usd"] + both["balloon_usd"]
    assert principal.sum() == pytest.approx(a1 + a2, rel=1e-12)
    assert both["balance_usd"][0, -1] == pytest.approx(0.0, abs=1e-6)
    assert (both["balance_usd"] >= -1e-6).all()


def test_floating_level_payment_is_recast_at_each_rate():
    # 1% for 12 months, then 2%: from month 13 the payment is PMT(2%, 24, balance after 12).
    rates = np.where(np.arange(37) <= 12, 0.01, 0.02)[None, :]
    s = loan_schedule(one_draw(1e6, 37), rates, [36])
    balance_12 = -excel.fv(0.01, 12, excel.pmt(0.01, 36, 1e6), 1e6)
    np.testing.assert_allclose(payment(s)[0, 1:13], -excel.pmt(0.01, 36, 1e6), rtol=1e-10)
    np.testing.assert_allclose(payment(s)[0, 13:], -excel.pmt(0.02, 24, balance_12), rtol=1e-10)


def test_vectorized_rows_match_single_runs():
    draws = np.zeros((3, 40))
    draws[:, 0] = [1e6, 2e6, 0.0]
    draws[1, 5] = 5e5
    rates = np.array([0.01, 0.005, 0.02])
    codes = ["level_payment", "straight_line", "bullet"]
    batch = loan_schedule(draws, rates, [36, 30, 39], codes)
    for i in range(3):
        single = loan_schedule(draws[i : i + 1], rates[i : i + 1], [[36, 30, 39][i]], codes[i])
        for key in batch:
            np.testing.assert_allclose(batch[key][i], single[key][0], rtol=1e-12)


def test_draw_at_maturity_is_an_error():
    with pytest.raises(InputError, match="at or after the maturity month 12"):
        loan_schedule(one_draw(1.0, 20, month=12), [0.01], [12])


def test_unknown_repayment_lists_valid_names():
    with pytest.raises(InputError, match="unknown value 'annuity'; expected one of: level_payment"):
        loan_schedule(one_draw(1.0, 5), [0.01], [4], "annuity")
    with pytest.raises(InputError, match="is not one of 0..4"):
        choice_codes([7], ("a", "b", "c", "d", "e"), "repayment")


# ---------------------------------------------------------------------------------------------
# index curves and floating rates
# ---------------------------------------------------------------------------------------------


def test_stepped_and_linear_curves_hand_computed():
    months = np.arange(8)
    step = index_rate_annual([2, 5], [0.04, 0.03], months, "step")
    np.testing.assert_allclose(step[0], [0.04, 0.04, 0.04, 0.04, 0.04, 0.03, 0.03, 0.03])
    linear = index_rate_annual([2, 5], [0.04, 0.03], months, "linear")
    expected = [0.04, 0.04, 0.04, 0.04 - 0.01 / 3, 0.04 - 0.02 / 3, 0.03, 0.03, 0.03]
    np.testing.assert_allclose(linear[0], expected)
    # Rows with different knots and padding (+inf months) for the shorter curve.
    rows = index_rate_annual([[0, 3], [0, np.inf]], [[0.05, 0.01], [0.02, 0.0]], months, "step")
    np.testing.assert_allclose(rows[1], 0.02)
    np.testing.assert_allclose(rows[0, 3:], 0.01)


def test_floor_applies_to_the_index():
    index = np.array([[0.001, 0.02]])
    np.testing.assert_allclose(floating_rate_annual(index, [0.0225], [0.005]), [[0.0275, 0.0425]])
    np.testing.assert_allclose(floating_rate_annual(index, [0.0225], [np.nan]), index + 0.0225)
    np.testing.assert_allclose(floating_rate_annual(index, [0.01]), index + 0.01)


# ---------------------------------------------------------------------------------------------
# coupons and the effective interest method
# ---------------------------------------------------------------------------------------------


def test_semi_annual_coupons_with_a_short_last_period():
    s = coupon_schedule([1e6], [0.0925], [2], [0], [61], 62)
    paid = np.flatnonzero(s["interest_usd"][0])
    assert paid.tolist() == [6, 12, 18, 24, 30, 36, 42, 48, 54, 60, 61]
    np.testing.assert_allclose(s["interest_usd"][0, 6], 1e6 * 0.0925 / 2)
    np.testing.assert_allclose(s["interest_usd"][0, 61], 1e6 * 0.0925 / 12)
    np.testing.assert_allclose(s["accrued_usd"][0, 3], 3 * 1e6 * 0.0925 / 12)
    assert s["balloon_usd"][0, 61] == 1e6 and s["balance_usd"][0, 61] == 0


def test_bond_discount_amortization_textbook_example():
    """Kieso, Weygandt & Warfield, *Intermediate Accounting*, ch. 14 (Evermaster Corporation):
    100,000 of 8% bonds, interest semi-annually, 5 years, sold to yield 10%: price 92,278;
    first-period interest expense 4,614 (92,278 x 5%), discount amortized 614, carrying amount
    92,892."""
    price = 100_000 * (1.05**-10) + 4_000 * (1 - 1.05**-10) / 0.05
    assert price == pytest.approx(92_278, abs=1)
    s = coupon_schedule([100_000.0], [0.08], [2], [0], [60], 61)
    net = one_draw(price, 61)
    eir = effective_interest(net, s["interest_usd"] + s["balloon_usd"], 0.0, [0.08 / 12])
    assert (1 + eir["margin_monthly"][0]) ** 6 == pytest.approx(1.05, rel=1e-12)
    assert eir["expense_usd"][0, 1:7].sum() == pytest.approx(4_614, abs=1)
    assert eir["carrying_usd"][0, 6] == pytest.approx(92_892, abs=1)
    assert eir["carrying_usd"][0, 60] == 0.0


@SETTINGS
@given(
    rate=st.floats(0.0, 0.015),
    nper=st.integers(2, 120),
    fee=st.floats(0.0, 0.05),
    oid=st.floats(0.0, 0.05),
    amount=st.floats(1e3, 1e9),
)
def test_effective_interest_totals_and_yield(rate, nper, fee, oid, amount):
    """Over the life, expense = cash interest + discount + fees; the monthly yield b + y is the
    IRR of the loan's cash flows (net proceeds in, payments out)."""
    s = loan_schedule(one_draw(amount, nper + 1), [rate], [nper])
    net = one_draw(amount * (1 - oid - fee), nper + 1)
    pay = payment(s)
    eir = effective_interest(net, pay, [rate], [0.0])
    total = eir["expense_usd"].sum()
    # Exact up to the solver's tolerance on the final carrying amount (1e-12 of the flows).
    expected = s["interest_usd"].sum() + amount * (oid + fee)
    assert total == pytest.approx(expected, rel=1e-9, abs=1e-11 * amount)
    assert eir["carrying_usd"][0, -1] == pytest.approx(0.0, abs=1e-6 * amount)
    flows = net - pay
    irr = excel.irr_batch(flows)[0]
    assert rate + eir["margin_monthly"][0] == pytest.approx(irr, rel=1e-8, abs=1e-11)
    npv = excel.npv_batch(irr, flows)[0]
    assert npv == pytest.approx(0.0, abs=1e-6 * amount)


def test_no_fees_means_expense_equals_cash_interest():
    rates = np.linspace(0.003, 0.012, 37)[None, :]  # a rising floating rate
    s = loan_schedule(one_draw(1e6, 37), rates, [36])
    eir = effective_interest(one_draw(1e6, 37), payment(s), rates)
    assert eir["margin_monthly"][0] == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(eir["expense_usd"], s["interest_usd"], atol=1e-6)
    np.testing.assert_allclose(eir["carrying_usd"], s["balance_usd"], atol=1e-6)


def test_effective_interest_on_a_floating_loan_with_fees():
    rates = np.linspace(0.003, 0.012, 37)[None, :]
    s = loan_schedule(one_draw(1e6, 37), rates, [36])
    eir = effective_interest(one_draw(0.97e6, 37), payment(s), rates)
    assert eir["margin_monthly"][0] > 0
    assert eir["expense_usd"].sum() == pytest.approx(s["interest_usd"].sum() + 3e4, rel=1e-10)


# ---------------------------------------------------------------------------------------------
# econ loan
# ---------------------------------------------------------------------------------------------


def test_cli_loan_table(capsys):
    assert main(["loan", "--amount", "1e6", "--rate", "0.0925", "--term-months", "60"]) == 0
    out = capsys.readouterr().out
    assert "20,879.90" in out  # -PMT(0.0925/12, 60, 1e6) = 20,879.898
    assert re.search(r"^\s+60\s.*\s0\.00\s", out, re.M)


@pytest.mark.parametrize(
    ("day_count", "years_per_month", "said"),
    [
        # ISDA 2006 Definitions §4.16: 30/360 counts 30 days a month over 360; Actual/360 the
        # actual days (365/12 in an average month) over 360; Actual/365 (Fixed) over 365
        ("30/360", 30 / 360, "rate x 30/360 a month"),
        ("act/360", 365 / 12 / 360, "rate x (365/12)/360 a month"),
        ("act/365", 365 / 12 / 365, "rate x (365/12)/365 = rate/12 a month"),
    ],
)
def test_cli_loan_states_its_day_count(day_count, years_per_month, said, capsys):
    # A controller's finding: the schedule did not say how interest accrues (30/360 by default).
    args = ["loan", "--amount", "1e6", "--rate", "0.09", "--term-months", "12"]
    args += ["--day-count", day_count]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"day count {day_count}: interest = {said}" in out
    assert main([*args, "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["day_count"]["day_count"] == day_count
    assert printed["day_count"]["accrual"].startswith(said)
    assert printed["day_count"]["accrual_years_per_month"] == pytest.approx(years_per_month)
    # the first month's interest is the one stated: 1e6 x 9% x the year fraction
    first = printed["schedule"][1]["interest_usd"]
    assert first == pytest.approx(1e6 * 0.09 * years_per_month, rel=1e-12)


def test_cli_loan_json_and_csv(capsys):
    args = ["loan", "--amount", "1e6", "--rate", "0.0925", "--term-months", "60"]
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["first_payment_usd"] == pytest.approx(-npf.pmt(0.0925 / 12, 60, 1e6))
    assert len(data["schedule"]) == 61
    assert main([*args, "--format", "csv", "--type", "bullet"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert float(rows[60]["principal_usd"]) == 1e6
    assert float(rows[1]["interest_usd"]) == pytest.approx(1e6 * 0.0925 / 12)


def test_cli_floating_loan_with_fee(capsys):
    args = [
        "loan",
        "--amount",
        "1e6",
        "--sofr",
        "0.043",
        "--spread",
        "0.0225",
        "--term-months",
        "36",
        "--day-count",
        "act/360",
        "--upfront-fee-share",
        "0.01",
        "--format",
        "json",
    ]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    rate = (0.043 + 0.0225) * 365 / 360 / 12
    assert data["schedule"][1]["interest_usd"] == pytest.approx(1e6 * rate)
    extra = data["summary"]["interest_expense_usd"] - data["summary"]["total_interest_usd"]
    assert extra == pytest.approx(1e4, rel=1e-9)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--amount", "-5", "--rate", "0.1", "--term-months", "12"], "--amount = -5:"),
        (["--amount", "5", "--rate", "-0.1", "--term-months", "12"], "--rate = -0.1: expected"),
        (["--amount", "5", "--rate", "0.1", "--term-months", "0"], "--term-months = 0"),
        # options the repayment type does not use were silently ignored
        (
            ["--amount", "5", "--rate", "0.1", "--term-months", "12", "--balloon-share", "0.3"],
            "--balloon-share = 0.3: expected --type balloon with it, the repayment that leaves a "
            "balloon (--type is level_payment)",
        ),
        (
            [*"--amount 5 --rate 0.1 --term-months 12 --type bullet".split()]
            + ["--interest-only-months", "3"],
            "--interest-only-months = 3: expected --type interest_only_then_amortizing with it "
            "(--type is bullet)",
        ),
        # interest only to (or past) maturity silently became a bullet
        *(
            (
                [*"--amount 5 --rate 0.1 --term-months 12".split()]
                + ["--type", "interest_only_then_amortizing", "--interest-only-months", months],
                f"--interest-only-months = {months}: expected fewer months than --term-months "
                "(12), to leave months to amortize; for interest only to maturity, use --type "
                "bullet",
            )
            for months in ("12", "13")
        ),
        (
            [*"--amount 5 --rate 0.1 --term-months 12 --amortization-months 6".split()]
            + ["--type", "interest_only_then_amortizing", "--interest-only-months", "6"],
            "--interest-only-months = 6: expected fewer months than --amortization-months (6)",
        ),
    ],
)
def test_cli_loan_bad_input_exits_3(extra, message, capsys):
    assert main(["loan", *extra]) == 3
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_loan_interest_only_to_the_month_before_maturity(capsys):
    # 11 interest-only months of a 12-month loan: interest 1,000 x 0.10 / 12 = 8.3333 each month,
    # all principal in month 12 (the longest interest-only period --type takes with this term).
    args = ["loan", "--amount", "1000", "--rate", "0.1", "--term-months", "12", "--format", "json"]
    args += ["--type", "interest_only_then_amortizing", "--interest-only-months", "11"]
    assert main(args) == 0
    schedule = json.loads(capsys.readouterr().out)["schedule"]
    assert [row["interest_usd"] for row in schedule[1:]] == pytest.approx([1000 * 0.1 / 12] * 12)
    assert [row["principal_usd"] for row in schedule[1:]] == pytest.approx([0.0] * 11 + [1000])


def test_draws_follow_the_financing_identity():
    from econ.financing import draws_usd

    # 1,000 drawn in month 0, repaid 200, 200, 600; then 500 more drawn in month 2
    balance = np.array([1000.0, 800.0, 1100.0, 500.0])
    principal = np.array([0.0, 200.0, 200.0, 600.0])
    assert draws_usd(balance, principal).tolist() == [1000.0, 0.0, 500.0, 0.0]
    # interest of 50 added to the balance in month 1 is no draw
    added = np.array([0.0, 50.0, 0.0, 0.0])
    grown = np.array([1000.0, 1050.0, 850.0, 0.0])
    paid = np.array([0.0, 0.0, 200.0, 850.0])
    assert draws_usd(grown, paid, added).tolist() == [1000.0, 0.0, 0.0, 0.0]


def test_the_engine_s_draws_sum_to_the_debt_raised():
    from econ import load_scenario, project
    from econ.financing import draws_usd

    scenarios = ROOT / "models" / "scenarios"
    for name in ("deepseek-r1-gb200-nvl72", "h200-fleet-gb300-refresh"):
        result = project(load_scenario(scenarios / f"{name}.toml"))
        m = result.monthly
        draws = draws_usd(
            m["debt_balance_usd"].to_numpy(),
            m["principal_usd"].to_numpy(),
            m["capitalized_interest_usd"].to_numpy(),
        )
        debt = result.summary.iloc[0]["debt_usd"]
        assert draws.sum() == pytest.approx(debt, rel=1e-12), name
        assert np.all(draws > -0.005), name  # no negative draw


def test_every_day_count_has_its_accrual_in_words_with_its_year_fraction():
    """`econ loan` states its day count from DAY_COUNT_ACCRUAL: a convention added to DAY_COUNTS
    without words would fail there; each text's fraction is the convention's own."""
    from econ.financing import DAY_COUNT_ACCRUAL, DAY_COUNTS

    assert set(DAY_COUNT_ACCRUAL) == set(DAY_COUNTS)
    written = {"30/360": 30 / 360, "act/360": (365 / 12) / 360, "act/365": (365 / 12) / 365}
    for name, words in DAY_COUNT_ACCRUAL.items():
        assert words.startswith("rate x ") and DAY_COUNTS[name] == pytest.approx(written[name])
