"""Tests of econ.capital: the stack's schedules (loans, delayed draws, notes, convertible notes,
equity), settlement at the horizon, coverage ratios, LTV, WACC, equity returns; hand-computed
values, cross-checks with econ.excel and numpy-financial, Hypothesis invariants and bad input."""

from __future__ import annotations

import os

import numpy as np
import numpy_financial as npf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import excel
from econ.capital import (
    LINES,
    convertible_settlement,
    coverage_ratios,
    equity_returns,
    loan_to_value,
    share_price_path,
    stack_schedule,
    wacc_after_tax,
)
from econ.errors import InputError

SETTINGS = settings(
    max_examples=int(os.environ.get("ECON_HYPOTHESIS_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def upfront(n, T):
    profile = np.zeros((n, T))
    profile[:, 0] = 1.0
    return profile


def run(tranches, T=61, n=1, capex=1e6, last=None, profile=None, **kw):
    profile = upfront(n, T) if profile is None else profile
    last = np.full(n, T - 1) if last is None else np.asarray(last)
    return stack_schedule(tranches, np.full(n, capex), profile, np.arange(T), last, **kw)


TERM = {
    "type": "term_loan",
    "name": "tl",
    "amount_usd": 1e6,
    "rate_annual": 0.0925,
    "maturity_month": 60,
}


# ---------------------------------------------------------------------------------------------
# term loans
# ---------------------------------------------------------------------------------------------


def test_term_loan_matches_spreadsheet_pmt_ipmt_ppmt():
    s = run([TERM]).tranches["tl"]
    r = 0.0925 / 12
    per = np.arange(1, 61)
    np.testing.assert_allclose(s["cash_interest_usd"][0, 1:], -excel.ipmt(r, per, 60, 1e6))
    np.testing.assert_allclose(s["principal_usd"][0, 1:], -npf.ppmt(r, per, 60, 1e6), rtol=1e-9)
    np.testing.assert_allclose(s["debt_service_usd"][0, 1:], -excel.pmt(r, 60, 1e6), rtol=1e-12)
    assert s["draw_usd"][0, 0] == 1e6 and s["balance_usd"][0, 60] == pytest.approx(0, abs=1e-6)
    # No fees: expense is the cash interest and the carrying amount the balance.
    np.testing.assert_allclose(s["interest_expense_usd"], s["cash_interest_usd"], atol=1e-6)
    np.testing.assert_allclose(s["carrying_usd"], s["balance_usd"], atol=1e-6)


def test_share_of_capex_and_fees():
    spec = {
        **TERM,
        "amount_usd": None,
        "share_of_capex": 0.6,
        "upfront_fee_share": 0.02,
        "issue_discount_share": 0.01,
    }
    stack = run([spec], capex=2e6)
    s = stack.tranches["tl"]
    assert s["draw_usd"][0, 0] == pytest.approx(1.2e6)
    assert s["proceeds_usd"][0, 0] == pytest.approx(1.2e6 * 0.99)
    assert s["fees_usd"][0, 0] == pytest.approx(1.2e6 * 0.02)
    assert s["carrying_usd"][0, 0] == pytest.approx(1.2e6 * 0.97)
    total = s["interest_expense_usd"].sum()
    assert total == pytest.approx(s["cash_interest_usd"].sum() + 1.2e6 * 0.03, rel=1e-9)
    # The effective rate is the annualized IRR of the borrower's flows.
    flows = s["proceeds_usd"] - s["fees_usd"] - s["cash_interest_usd"] - s["principal_usd"]
    irr = excel.irr_batch(flows)
    eff = stack.tranche_metrics["tl"]["effective_rate_annual"]
    assert eff[0] == pytest.approx(excel.annual_from_monthly(irr)[0], rel=1e-9)
    assert eff[0] > (1 + 0.0925 / 12) ** 12 - 1


def test_horizon_before_maturity_settles_and_writes_off():
    spec = {**TERM, "upfront_fee_share": 0.02}
    s = run([spec], T=61, last=[24]).tranches["tl"]
    owed = -excel.fv(0.0925 / 12, 24, excel.pmt(0.0925 / 12, 60, 1e6), 1e6)
    assert s["settlement_usd"][0, 24] == pytest.approx(owed, rel=1e-10)
    assert s["extinguishment_usd"][0, 24] > 0
    assert s["balance_usd"][0, 24:].max() == 0 and s["interest_expense_usd"][0, 25:].max() == 0
    assert s["principal_usd"].sum() == pytest.approx(1e6, rel=1e-12)
    total = s["interest_expense_usd"].sum()
    assert total == pytest.approx(s["cash_interest_usd"].sum() + 2e4, rel=1e-9)
    # Settlement is not scheduled debt service (DSCR), balloons neither.
    assert s["debt_service_usd"][0, 24] == pytest.approx(
        s["cash_interest_usd"][0, 24] + s["scheduled_principal_usd"][0, 24]
    )


def test_issue_after_month_zero_and_maturity_beyond_the_projection():
    spec = {**TERM, "issue_month": 6, "maturity_month": 120, "repayment": "bullet"}
    s = run([spec], T=37).tranches["tl"]
    assert s["draw_usd"][0, 6] == 1e6 and s["cash_interest_usd"][0, 6] == 0
    assert s["cash_interest_usd"][0, 7] == pytest.approx(1e6 * 0.0925 / 12)
    assert s["settlement_usd"][0, 36] == 1e6


# ---------------------------------------------------------------------------------------------
# delayed-draw term loan and floating rates
# ---------------------------------------------------------------------------------------------

DDTL = {
    "type": "delayed_draw_term_loan",
    "name": "ddtl",
    "amount_usd": 1.2e6,
    "rate_annual": 0.12,
    "maturity_month": 48,
    "amortization_months": 36,
    "availability_months": 12,
    "commitment_fee_annual": 0.006,
    "upfront_fee_share": 0.01,
}


def test_delayed_draws_follow_deployment_and_pay_commitment_fees():
    T = 49
    profile = np.zeros((1, T))
    profile[0, [0, 3, 6]] = [0.5, 0.25, 0.25]
    s = run([DDTL], T=T, profile=profile).tranches["ddtl"]
    np.testing.assert_allclose(s["draw_usd"][0, [0, 3, 6]], [6e5, 3e5, 3e5])
    # Fee on the undrawn amount at the start of each month: 0.006/12 of 600k in months 1-3, of
    # 300k in months 4-6, nothing once fully drawn.
    fee = 0.006 / 12
    np.testing.assert_allclose(s["commitment_fee_usd"][0, 1:4], fee * 6e5)
    np.testing.assert_allclose(s["commitment_fee_usd"][0, 4:7], fee * 3e5)
    assert s["commitment_fee_usd"][0, 7:].sum() == 0
    # Each draw amortizes over 36 months from its own month: the month-6 draw ends in month 42.
    r = 0.01
    np.testing.assert_allclose(
        s["debt_service_usd"][0, 7],
        -excel.pmt(r, 36, 6e5) - excel.pmt(r, 36, 3e5) * 2,
        rtol=1e-10,
    )
    assert s["balance_usd"][0, 42] == pytest.approx(0, abs=1e-6)
    # Upfront fee (1% of commitment) amortized straight-line over 48 months (ASU 2015-15).
    extra = s["interest_expense_usd"] - s["cash_interest_usd"] - s["commitment_fee_usd"]
    np.testing.assert_allclose(extra[0, 1:49], 1.2e4 / 48, rtol=1e-9)


def test_draws_outside_availability_are_an_error():
    T = 49
    profile = np.zeros((1, T))
    profile[0, [0, 20]] = [0.5, 0.5]
    with pytest.raises(InputError, match="outside the availability period, months 0 to 12"):
        stack_schedule([DDTL], [1.2e6], profile, np.arange(T), [T - 1])


def test_explicit_draw_schedule():
    spec = {**DDTL, "draw_months": [0, 5], "draw_shares": [0.25, 0.5]}
    s = run([spec], T=49).tranches["ddtl"]
    np.testing.assert_allclose(s["draw_usd"][0, [0, 5]], [3e5, 6e5])
    assert s["draw_usd"].sum() == pytest.approx(9e5)
    # The quarter never drawn carries the fee until the window closes at month 12.
    assert s["commitment_fee_usd"][0, 12] == pytest.approx(0.006 / 12 * 3e5)
    assert s["commitment_fee_usd"][0, 13:].sum() == 0  # then it is cancelled


def test_floating_rate_with_floor_and_act_360():
    spec = {
        **TERM,
        "rate_annual": None,
        "index_months": [0, 12],
        "index_rates_annual": [0.001, 0.04],
        "spread_annual": 0.0225,
        "floor_annual": 0.005,
        "day_count": "act/360",
        "repayment": "bullet",
    }
    s = run([spec]).tranches["tl"]
    year = 365 / 360 / 12
    assert s["cash_interest_usd"][0, 1] == pytest.approx(1e6 * (0.005 + 0.0225) * year)
    assert s["cash_interest_usd"][0, 12] == pytest.approx(1e6 * (0.04 + 0.0225) * year)
    assert s["rate_annual"][0, 1] == pytest.approx(0.0275)


# ---------------------------------------------------------------------------------------------
# senior notes
# ---------------------------------------------------------------------------------------------

NOTES = {
    "type": "senior_notes",
    "name": "notes",
    "amount_usd": 1e6,
    "coupon_annual": 0.0925,
    "maturity_month": 60,
    "issue_discount_share": 0.01,
    "upfront_fee_share": 0.015,
}


def test_senior_notes_coupons_oid_and_fees():
    stack = run([NOTES])
    s = stack.tranches["notes"]
    coupons = np.flatnonzero(s["cash_interest_usd"][0])
    assert coupons.tolist() == list(range(6, 61, 6))
    np.testing.assert_allclose(s["cash_interest_usd"][0, coupons], 46_250.0)
    assert s["principal_usd"][0, 60] == 1e6 and s["balloon_usd"][0, 60] == 1e6
    assert s["debt_service_usd"][0, 60] == pytest.approx(46_250.0)  # the bullet is refinanced
    assert s["carrying_usd"][0, 0] == pytest.approx(975_000.0)
    total = s["interest_expense_usd"].sum()
    assert total == pytest.approx(10 * 46_250 + 25_000, rel=1e-10)
    flows = s["proceeds_usd"] - s["fees_usd"] - s["cash_interest_usd"] - s["principal_usd"]
    eff = stack.tranche_metrics["notes"]["effective_rate_annual"][0]
    assert eff == pytest.approx(excel.annual_from_monthly(excel.irr_batch(flows)[0]), rel=1e-9)
    # Carrying amount accretes to face (monotone when issued at a discount).
    carrying = s["carrying_usd"][0, :60]
    assert (np.diff(carrying[::6]) > 0).all() and carrying[-1] < 1e6


# ---------------------------------------------------------------------------------------------
# convertible notes
# ---------------------------------------------------------------------------------------------

CONVERT = {
    "type": "convertible_notes",
    "name": "cvt",
    "amount_usd": 1e6,
    "coupon_annual": 0.0175,
    "maturity_month": 60,
    "conversion_price_usd": 125.0,
    "reference_share_price_usd": 100.0,
    "capped_call_cost_share": 0.13,
    "capped_call_cap_price_usd": 200.0,
    "upfront_fee_share": 0.02,
}


def test_convertible_settlement_hand_computed():
    # Face 1,000, K = 125 (8 shares), S = 250, cap 200.
    r = convertible_settlement(
        [1000.0] * 3, [125.0] * 3, [250.0, 150.0, 100.0], [200.0] * 3, "net_share"
    )
    assert r["converts"].tolist() == [True, True, False]
    # Net share: 1,000 in cash, the excess 8 * 250 - 1,000 = 1,000 in shares at 250: 4 shares.
    assert r["gross_shares"][0] == pytest.approx(4.0)
    # Capped call: (min(250, 200) - 125) * 8 = 600 in shares at 250: 2.4 shares back.
    assert r["capped_call_shares"][0] == pytest.approx(2.4)
    assert r["net_shares"][0] == pytest.approx(1.6)
    # At 150, below the cap: (150 - 125) * 8 = 200 hedged, exactly the excess: no dilution.
    assert r["net_shares"][1] == pytest.approx(0.0, abs=1e-12)
    assert r["cash_usd"].tolist() == [1000.0, 1000.0, 1000.0]
    physical = convertible_settlement(1000.0, 125.0, 250.0, None, "physical")
    assert physical["gross_shares"] == pytest.approx(8.0) and physical["cash_usd"] == 0.0


@pytest.mark.parametrize(
    ("growth", "settlement", "converts"),
    [(0.0, "net_share", False), (0.3, "net_share", True), (0.3, "physical", True)],
)
def test_convertible_in_the_stack(growth, settlement, converts):
    spec = {**CONVERT, "share_price_growth_annual": growth, "settlement": settlement}
    stack = run([spec])
    s, metrics = stack.tranches["cvt"], stack.tranche_metrics["cvt"]
    assert s["capped_call_usd"][0, 0] == pytest.approx(1.3e5)
    assert stack.lines["financing_cash_flow_usd"][0, 0] == pytest.approx(1e6 - 2e4 - 1.3e5)
    price = 100 * 1.3**5 if growth else 100.0
    assert metrics["share_price_at_settlement_usd"][0] == pytest.approx(price)
    assert bool(metrics["converted"][0]) is converts
    if converts and settlement == "physical":
        assert s["principal_usd"].sum() == 0 and s["converted_usd"][0, 60] == 1e6
        assert metrics["gross_shares"][0] == pytest.approx(8000.0)
    else:
        assert s["principal_usd"][0, 60] == 1e6
    assert stack.metrics["conversion_shares"][0] == pytest.approx(metrics["net_shares"][0])
    total = s["interest_expense_usd"].sum()
    assert total == pytest.approx(s["cash_interest_usd"].sum() + 2e4, rel=1e-9)


def test_convertible_settles_at_the_horizon_when_it_comes_first():
    spec = {**CONVERT, "share_price_growth_annual": 0.3, "settlement": "physical"}
    stack = run([spec], T=37)
    s, metrics = stack.tranches["cvt"], stack.tranche_metrics["cvt"]
    assert metrics["settlement_month"][0] == 36
    assert s["converted_usd"][0, 36] == 1e6 and s["extinguishment_usd"].sum() == 0
    # Physical conversion moves the unamortized costs to equity: no write-off to expense.
    assert s["interest_expense_usd"].sum() < s["cash_interest_usd"].sum() + 2e4


def test_share_price_path_override():
    price = np.full((2, 61), 100.0)
    price[1, 60] = 300.0
    stack = run([CONVERT], n=2, share_price_usd=price)
    assert stack.tranche_metrics["cvt"]["converted"].tolist() == [0.0, 1.0]
    np.testing.assert_allclose(share_price_path([10.0], [0.1], [0, 12, 24])[0], [10, 11, 12.1])


# ---------------------------------------------------------------------------------------------
# equity, the whole stack, WACC
# ---------------------------------------------------------------------------------------------


def test_residual_equity_funds_the_rest_and_atm_commission():
    equity = {
        "type": "equity",
        "name": "eq",
        "required_return_annual": 0.15,
        "issuance": "at_the_market",
        "atm_commission_share": 0.02,
        "reference_share_price_usd": 50.0,
    }
    stack = run([{**TERM, "amount_usd": 6e5}, equity], capex=1e6, tax_rate=0.21)
    e = stack.tranches["eq"]
    assert e["equity_issued_usd"][0, 0] == pytest.approx(4e5 / 0.98)
    assert e["fees_usd"][0, 0] == pytest.approx(4e5 / 0.98 * 0.02)
    assert e["shares_issued"][0, 0] == pytest.approx(4e5 / 0.98 / 50)
    assert stack.metrics["debt_usd"][0] == 6e5
    expected = wacc_after_tax(
        [[6e5]], [[(1 + 0.0925 / 12) ** 12 - 1]], [4e5 / 0.98], [0.15], [0.21]
    )
    assert stack.metrics["wacc_after_tax_annual"][0] == pytest.approx(expected[0], rel=1e-9)


def test_explicit_equity_and_implicit_remainder():
    stack = run([{**TERM, "amount_usd": 5e5}, {"type": "equity", "name": "eq", "amount_usd": 2e5}])
    assert stack.tranches["eq"]["equity_issued_usd"][0, 0] == 2e5
    assert stack.lines["equity_funding_usd"][0].sum() == pytest.approx(5e5)  # 2e5 + 3e5 implicit


def test_wacc_hand_computed():
    # 60 of debt at 8% and 40 of equity at 15%, 21% tax: 0.6*0.08*0.79 + 0.4*0.15 = 0.09792.
    assert wacc_after_tax([[60.0]], [[0.08]], [40.0], [0.15], [0.21])[0] == pytest.approx(0.09792)
    two = wacc_after_tax([[30.0, 30.0]], [[0.06, 0.10]], [40.0], [0.15], [0.21])
    assert two[0] == pytest.approx(0.09792)
    assert np.isnan(wacc_after_tax([[0.0]], [[0.1]], [0.0], [0.1], [0.2])[0])


def seed_stack():
    return [
        {
            "type": "delayed_draw_term_loan",
            "name": "ddtl",
            "share_of_capex": 0.5,
            "maturity_month": 60,
            "index_months": [0, 12],
            "index_rates_annual": [0.043, 0.036],
            "spread_annual": 0.0225,
            "floor_annual": 0.0,
            "day_count": "act/360",
            "commitment_fee_annual": 0.005,
            "upfront_fee_share": 0.015,
        },
        {
            "type": "senior_notes",
            "name": "notes",
            "share_of_capex": 0.2,
            "coupon_annual": 0.0925,
            "maturity_month": 96,
            "upfront_fee_share": 0.015,
        },
        {**CONVERT, "amount_usd": None, "share_of_capex": 0.1},
        {"type": "equity", "name": "eq", "required_return_annual": 0.15},
    ]


@SETTINGS
@given(
    deploy=st.integers(1, 12),
    last=st.integers(13, 72),
    growth=st.floats(-0.3, 0.8),
    capex=st.floats(1e6, 1e10),
)
def test_stack_invariants(deploy, last, growth, capex):
    T = 73
    profile = np.zeros((1, T))
    profile[0, :deploy] = 1.0 / deploy
    specs = seed_stack()
    specs[2] = {**specs[2], "share_price_growth_annual": growth}
    stack = stack_schedule(specs, [capex], profile, np.arange(T), [last], tax_rate=0.21)
    L = stack.lines
    # Everything drawn is repaid, in cash or in shares, by the last month.
    repaid = (L["principal_usd"] + L["converted_usd"]).sum()
    assert repaid == pytest.approx(L["draw_usd"].sum(), rel=1e-10)
    assert np.abs(L["balance_usd"][0, last:]).max() < 1e-6 * capex
    for name in ("ddtl", "notes"):
        s = stack.tranches[name]
        total = s["interest_expense_usd"].sum()
        costs = s["cash_interest_usd"].sum() + s["discount_usd"].sum() + s["fees_usd"].sum()
        assert total == pytest.approx(costs, rel=1e-9)
    assert (L["balance_usd"] >= -1e-6 * capex).all()
    # Sources and uses: equity funding covers what debt proceeds do not.
    uses = capex + L["fees_usd"].sum() - L["commitment_fee_usd"].sum() + L["capped_call_usd"].sum()
    sources = L["proceeds_usd"].sum() + L["equity_funding_usd"].sum()
    assert sources == pytest.approx(uses, rel=1e-9)
    assert 0 < stack.metrics["wacc_after_tax_annual"][0] < 0.15


def test_batch_rows_are_independent():
    specs = seed_stack()
    specs[0] = {**specs[0], "spread_annual": np.array([0.02, 0.045, 0.13])}
    specs[2] = {**specs[2], "share_price_growth_annual": np.array([0.0, 0.3, 0.6])}
    T = 73
    profile = np.zeros((3, T))
    profile[:, :6] = 1 / 6
    batch = stack_schedule(specs, [1e9, 2e9, 5e8], profile, np.arange(T), [72, 48, 60])
    for i, (capex, last) in enumerate([(1e9, 72), (2e9, 48), (5e8, 60)]):
        one = [{k: (v[i] if isinstance(v, np.ndarray) else v) for k, v in s.items()} for s in specs]
        single = stack_schedule(one, [capex], profile[i : i + 1], np.arange(T), [last])
        for key, value in single.as_dict().items():
            np.testing.assert_allclose(
                batch.as_dict()[key][i], value[0], rtol=1e-9, atol=1e-3, err_msg=key
            )


def test_all_lines_present_for_every_tranche():
    stack = run(seed_stack(), T=73)
    for lines in stack.tranches.values():
        assert set(LINES) <= set(lines)
    assert stack.as_dict()["notes.cash_interest_usd"].shape == (1, 73)


# ---------------------------------------------------------------------------------------------
# coverage, LTV, equity returns
# ---------------------------------------------------------------------------------------------


def test_dscr_hand_computed_and_trailing_test():
    cfads = np.array([[0.0, 120.0, 90.0, 150.0, 60.0]])
    service = np.array([[0.0, 100.0, 100.0, 100.0, 100.0]])
    balance = np.array([[400.0, 300.0, 200.0, 100.0, 0.0]])
    c = coverage_ratios(cfads, service, balance, [0.0], dscr_floor=[1.0], test_months=2)
    np.testing.assert_allclose(c["dscr"][0, 1:], [1.2, 0.9, 1.5, 0.6])
    np.testing.assert_allclose(c["dscr_test"][0, 1:], [1.2, 1.05, 1.2, 1.05])
    assert np.isnan(c["dscr"][0, 0]) and c["min_dscr"][0] == pytest.approx(0.6)
    assert not c["dscr_breach"].any()  # trailing two months never below 1.0
    monthly = coverage_ratios(cfads, service, balance, [0.0], dscr_floor=[1.0])
    assert monthly["dscr_breach"][0].tolist() == [False, False, True, False, True]
    assert monthly["breach_months"][0] == 2 and monthly["first_breach_month"][0] == 2
    # LLCR at a zero rate: remaining CFADS over the balance, e.g. (90+150+60)/300 at month 1.
    np.testing.assert_allclose(c["llcr"][0, :4], [420 / 400, 300 / 300, 210 / 200, 60 / 100])


@SETTINGS
@given(
    rate=st.floats(0.001, 0.02),
    nper=st.integers(6, 120),
    cover=st.floats(0.5, 3.0),
)
def test_llcr_of_a_level_loan_equals_its_cover(rate, nper, cover):
    """CFADS a constant multiple k of a level payment, discounted at the loan rate: the PV of the
    remaining payments is the balance, so LLCR = k in every month, and so is DSCR."""
    s = run([{**TERM, "rate_annual": rate * 12, "maturity_month": nper}], T=nper + 1)
    t = s.tranches["tl"]
    cfads = cover * t["debt_service_usd"]
    c = coverage_ratios(cfads, t["debt_service_usd"], t["balance_usd"], [rate], llcr_floor=[1.0])
    llcr = c["llcr"][0, : nper - 1]
    np.testing.assert_allclose(llcr, cover, rtol=1e-9)
    np.testing.assert_allclose(c["dscr"][0, 1:], cover, rtol=1e-9)
    if abs(cover - 1.0) > 1e-6:  # at exactly 1.0 the breach flag is a coin toss of rounding
        assert c["llcr_breach"].any() == (cover < 1.0)


def test_ltv():
    ltv, breach = loan_to_value([[80.0, 60.0, 0.0]], [[100.0, 50.0, 0.0]], [0.9])
    np.testing.assert_allclose(ltv[0, :2], [0.8, 1.2])
    assert np.isnan(ltv[0, 2]) and breach[0].tolist() == [False, True, False]
    # debt outstanding against collateral worth nothing: unbounded LTV, a breach of any ceiling
    ltv, breach = loan_to_value([[80.0, 60.0, 40.0]], [[100.0, 0.0, -5.0]], [1.5])
    assert np.isnan(ltv[0, 1:]).all() and breach[0].tolist() == [False, True, True]
    assert not loan_to_value([[80.0, 60.0]], [[100.0, 0.0]], [np.nan])[1].any()  # no covenant


def test_an_ltv_covenant_is_tested_in_each_month_with_debt_outstanding():
    """LTV = balance / collateral against the ceiling, by hand: 100/120 = 0.833, 80/90 = 0.889,
    60/70 = 0.857, then no debt (a collateral of 0 with nothing owed is no breach)."""
    balance = np.array([[100.0, 80.0, 60.0, 0.0]])
    collateral = np.array([[120.0, 90.0, 70.0, 0.0]])
    service = np.array([[0.0, 30.0, 30.0, 62.0]])
    cfads = 10 * service  # DSCR 10: only the LTV test can fail
    c = coverage_ratios(
        cfads, service, balance, [0.0], dscr_floor=[1.2], collateral_usd=collateral,
        ltv_ceiling=[0.85],
    )
    assert c["ltv_breach"][0].tolist() == [False, True, True, False]
    assert not c["dscr_breach"].any()
    assert c["breach_months"][0] == 2 and c["first_breach_month"][0] == 1
    # without the covenant (None or NaN) nothing is tested, with or without collateral
    for ceiling in (None, [np.nan]):
        free = coverage_ratios(cfads, service, balance, [0.0], ltv_ceiling=ceiling)
        assert not free["ltv_breach"].any() and free["breach_months"][0] == 0


@SETTINGS
@given(ceiling=st.floats(0.05, 2.0), lower=st.floats(0.0, 1.0))
def test_a_lower_ltv_ceiling_never_breaches_fewer_months(ceiling, lower):
    rng = np.random.default_rng(11)
    balance = np.maximum(np.cumsum(rng.normal(-5, 20, (4, 24)), axis=1) + 100, 0)
    collateral = rng.uniform(0, 200, (4, 24))
    service = np.full((4, 24), 10.0)
    high = coverage_ratios(
        service, service, balance, [0.0] * 4, collateral_usd=collateral, ltv_ceiling=[ceiling] * 4
    )
    low = coverage_ratios(
        service, service, balance, [0.0] * 4, collateral_usd=collateral,
        ltv_ceiling=[ceiling * lower] * 4,
    )
    assert np.all(low["ltv_breach"] >= high["ltv_breach"])
    assert np.all(low["breach_months"] >= high["breach_months"])


def test_each_scenario_is_tested_on_its_own_dscr_window():
    """Rows testing 1, 2 and 3 months in one call give what each gives alone."""
    cfads = np.array([[0.0, 120.0, 90.0, 150.0, 60.0, 110.0]] * 3)
    service = np.array([[0.0, 100.0, 100.0, 100.0, 100.0, 100.0]] * 3)
    balance = np.array([[500.0, 400.0, 300.0, 200.0, 100.0, 0.0]] * 3)
    windows = np.array([1, 2, 3])
    together = coverage_ratios(cfads, service, balance, [0.0] * 3, dscr_floor=[1.0] * 3,
                               test_months=windows)
    for row, w in enumerate(windows):
        alone = coverage_ratios(cfads[:1], service[:1], balance[:1], [0.0], dscr_floor=[1.0],
                                test_months=int(w))
        np.testing.assert_array_equal(together["dscr_test"][row], alone["dscr_test"][0])
        assert together["breach_months"][row] == alone["breach_months"][0]
    # by hand: monthly breaches in months 2 and 4; two-month windows 1.05, 1.2, 1.05, 0.85
    assert together["breach_months"].tolist() == [2, 1, 0]


def test_equity_returns_irr_moic():
    flows = np.array([[-100.0, 10.0, 10.0, 110.0], [-100.0, 0.0, 0.0, 300.0], [0.0, 0.0, 1.0, 2.0]])
    r = equity_returns(flows)
    assert r["irr_annual"][0] == pytest.approx((1.10) ** 12 - 1, rel=1e-9)
    assert r["moic"][0] == pytest.approx(1.3) and r["moic"][1] == pytest.approx(3.0)
    assert np.isnan(r["irr_annual"][2]) and np.isnan(r["moic"][2])
    thin = equity_returns(flows[:1], min_contribution_usd=1000.0)
    assert np.isnan(thin["irr_annual"][0])


@SETTINGS
@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=40), st.floats(1e3, 1e7))
def test_npv_at_equity_irr_is_zero(tail, invest):
    flows = np.array([[-invest, *tail]])
    r = equity_returns(flows)
    # Below -50% a month the root is ill-conditioned (1 + r near 0 magnifies every flow).
    if np.isnan(r["irr_annual"][0]) or r["irr_monthly"][0] <= -0.5:
        return
    monthly = r["irr_monthly"][0]
    assert r["irr_annual"][0] == pytest.approx((1 + monthly) ** 12 - 1, rel=1e-12, abs=1e-15)
    # Near r = -1 the discounted terms dwarf the flows: measure the residual against them.
    scale = excel.npv_batch(monthly, np.abs(flows))[0]
    assert excel.npv_batch(monthly, flows)[0] == pytest.approx(0.0, abs=1e-8 * scale)


@pytest.mark.parametrize(
    ("flows", "root"),
    [([-1000.0, 0.0, 0.0, 10.0], 0.01 ** (1 / 3) - 1), ([-1000.0, 6.0, 5.0, 7.0], None)],
)
def test_equity_irr_with_a_deep_loss(flows, root):
    """Deep losses: Newton must not stop at r = -1, where its steps in r vanish."""
    r = equity_returns(np.array([flows]))
    if root is None:  # the real root of -1000 x^3 + 6 x^2 + 5 x + 7, x = 1 + r
        x = np.roots([-1000.0, 6.0, 5.0, 7.0])
        root = float(x[np.isreal(x)].real[0]) - 1
    assert r["irr_monthly"][0] == pytest.approx(root, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "mezzanine"}, "unknown type 'mezzanine'; expected one of: term_loan"),
        ({**TERM, "rate": 0.1}, "unknown field 'rate'; expected one of: "),
        ({**TERM, "amount_usd": None}, "give amount_usd or share_of_capex"),
        ({**TERM, "share_of_capex": 0.5}, "not both"),
        ({**TERM, "amount_usd": None, "share_of_capex": 1.5}, "between 0 and 1"),
        ({**TERM, "rate_annual": -0.01}, "rate_annual = -0.01 (scenario 0): expected a fixed rate"),
        ({**TERM, "rate_annual": None}, "give rate_annual or an index curve"),
        ({**TERM, "issue_month": 12, "maturity_month": 6}, "maturity before issue"),
        ({**TERM, "maturity_month": None}, "debt needs a maturity_month"),
        ({**NOTES, "maturity_month": 60.5}, "maturity_month = 60.5 (scenario 0): expected a whole"),
        ({**TERM, "repayment": "annuity"}, "unknown value 'annuity'; expected one of"),
        ({**NOTES, "coupon_annual": -0.05}, "negative values are not allowed"),
        ({**NOTES, "coupons_per_year": 3}, "1, 2, 4 or 12"),
        ({**TERM, "upfront_fee_share": 1.2}, "expected a share below 1"),
        ({**CONVERT, "conversion_price_usd": 0.0}, "conversion price must be > 0"),
        ({**CONVERT, "conversion_price_usd": -5.0}, "conversion price must be > 0"),
        ({**CONVERT, "capped_call_cap_price_usd": 100.0}, "cap price above the conversion"),
        ({**CONVERT, "capped_call_cost_share": 0.0}, "offsets dilution for free"),
        (
            {
                **TERM,
                "rate_annual": None,
                "index_months": [0, 12, 6],
                "index_rates_annual": [0.04, 0.03, 0.02],
            },
            "unsorted or duplicate dates",
        ),
        (
            {
                **TERM,
                "rate_annual": None,
                "index_months": [0, 12, 12],
                "index_rates_annual": [0.04, 0.03, 0.02],
            },
            "unsorted or duplicate dates",
        ),
        ({**DDTL, "draw_months": [0, 0], "draw_shares": [0.5, 0.5]}, "strictly increasing"),
        ({**DDTL, "draw_months": [0, 3], "draw_shares": [0.7, 0.5]}, "summing to at most 1"),
    ],
)
def test_bad_tranches(spec, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run([spec])


def test_shares_above_capex_and_duplicate_names():
    a = {**TERM, "amount_usd": None, "share_of_capex": 0.7}
    b = {**NOTES, "amount_usd": None, "share_of_capex": 0.4}
    with pytest.raises(InputError, match="add up to 1.1 .*at most 1"):
        run([a, b])
    with pytest.raises(InputError, match="'tl' is used twice"):
        run([TERM, TERM])
    with pytest.raises(InputError, match="at most one may fund the remainder"):
        run([{"type": "equity", "name": "a"}, {"type": "equity", "name": "b"}])


def test_draws_beyond_the_horizon():
    T = 25
    profile = np.zeros((1, T))
    profile[0, 20] = 1.0
    with pytest.raises(InputError, match="draw schedule beyond the horizon"):
        stack_schedule([TERM], [1e6], profile, np.arange(T), [12])
    with pytest.raises(InputError, match="draw schedule beyond the horizon: draw in month 18"):
        run([{**TERM, "issue_month": 18}], T=25, last=[12])


def test_convertible_without_a_share_price():
    spec = {**CONVERT, "reference_share_price_usd": None}
    with pytest.raises(InputError, match="need a share price path"):
        run([spec])


def test_equity_returns_without_the_irr_keeps_the_multiple():
    flows = np.array([[-100.0, 30.0, 40.0, 50.0], [-10.0, 0.0, 0.0, 12.0]])
    full, moic_only = equity_returns(flows), equity_returns(flows, irr=False)
    assert np.array_equal(full["moic"], moic_only["moic"])
    assert np.isnan(moic_only["irr_annual"]).all() and not np.isnan(full["irr_annual"]).any()
