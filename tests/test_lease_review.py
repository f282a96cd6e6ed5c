"""A lender's review of `econ lease-vs-own` and `econ loan`: the owner's debt cash flows are the
projection's financing cash flow (fees, capped calls and commitment fees in; interest added to a
sculpted loan's balance out), the rate that discounts them, and the loan's all-in rates."""

from __future__ import annotations

import json
import os

import numpy as np
import numpy_financial as npf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import load_scenario, project
from econ.cli import main
from econ.commands.financing import renter_opex_usd
from econ.lease import after_tax_cost_of_debt_annual, lease_vs_own, lease_vs_own_of_projection
from tests.conftest import SCENARIOS

SETTINGS = settings(
    max_examples=int(os.environ.get("ECON_HYPOTHESIS_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def scenario_path(stem):
    return next(p for p in SCENARIOS if p.stem == stem)


STACK = scenario_path("deepseek-r1-gb200-nvl72-capital-stack")
SEED = scenario_path("deepseek-r1-gb200-nvl72")


def compare(scenario, price, term_months=36, upfront_share=0.0, renter_pays=("opex",), **kw):
    """The command's comparison (its defaults: the renter pays opex, at the scenario's tax and
    discount rates) of a scenario, and its projection."""
    projection = project(scenario)
    result = lease_vs_own_of_projection(
        projection.lines,
        price,
        term_months,
        upfront_share,
        np.array([scenario.financing.tax_rate]),
        np.array([scenario.financing.discount_rate_annual]),
        renter_pays=renter_pays,
        renter_opex_usd=renter_opex_usd(scenario) if "opex" in renter_pays else None,
        **kw,
    )
    return projection, result


def present_value(x, scenario, rate_annual=None):
    rate = scenario.financing.discount_rate_annual if rate_annual is None else rate_annual
    v = (1.0 + rate) ** (-np.arange(x.shape[-1]) / 12.0)
    return float(np.sum(np.asarray(x)[0] * v))


def asset_cost_usd(lines, t):
    """Owning without its debt, after tax, by hand: capex + operating costs - sale proceeds
    - t x (tax depreciation + operating costs - the sale's gain over the tax basis)."""
    operating = lines["power_usd"] + lines["facility_usd"] + lines["opex_usd"]
    deductible = lines["tax_depreciation_usd"] + operating - lines["tax_gain_on_disposal_usd"]
    return lines["capex_usd"] + operating - lines["disposal_usd"] - t * deductible


def debt_cost_usd(lines, t):
    """The debt's part, by hand: minus the financing cash flow (equity cash flow less project
    cash flow, the line the equity cash flow adds) less t x interest expense."""
    financing = lines["cash_flow_equity_usd"] - lines["cash_flow_project_usd"]
    return -financing - t * lines["interest_usd"]


def old_debt_cost_usd(lines, t):
    """The debt's part as the reviewed version computed it: draws B_m - B_(m-1) + P_m, less cash
    interest and principal; no fees, no capped call, deferred interest counted as drawn."""
    drawn = np.diff(lines["debt_balance_usd"], prepend=0.0, axis=1) + lines["principal_usd"]
    paid = lines["cash_interest_usd"] + lines["principal_usd"]
    return -drawn + paid - t * lines["interest_usd"]


# --- 1. Fees, commitment fees and the capped call are costs of owning ---------------------------


def test_the_capital_stacks_fees_and_capped_call_are_costs_of_owning():
    # Reviewer's repro: `--price 4 --term-months 36 --upfront-share 0.25` printed 4,204,036.11
    # (break-even 1.6900); with the projection's financing cash flow the cost of owning is
    # 4,295,077.81. The gap is paid at close: upfront fees 1.5% of the DDTL (55% of capex),
    # 1.25% of the senior notes (20%), 2% of the convertible notes (10%), and the capped call,
    # 13% of the convertible notes: 2.575% of capex 3,535,600 = 91,041.70.
    scenario = load_scenario(STACK)
    projection, r = compare(scenario, 4.0, upfront_share=0.25)
    lines, t = projection.lines, scenario.financing.tax_rate
    expected = present_value(asset_cost_usd(lines, t) + debt_cost_usd(lines, t), scenario)
    assert r["pv_cost_own_usd"][0] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(4_295_077.81, abs=0.01)
    assert r["pv_debt_flows_usd"][0] == pytest.approx(
        present_value(debt_cost_usd(lines, t), scenario), rel=1e-12
    )
    capex = lines["capex_usd"].sum()
    at_close = capex * (0.55 * 0.015 + 0.20 * 0.0125 + 0.10 * 0.02 + 0.10 * 0.13)
    assert at_close == pytest.approx(91_041.70, abs=0.01)
    old = present_value(asset_cost_usd(lines, t) + old_debt_cost_usd(lines, t), scenario)
    assert old == pytest.approx(4_204_036.11, abs=0.01)
    assert r["pv_cost_own_usd"][0] - old == pytest.approx(at_close, rel=1e-9)
    assert r["breakeven_usd_per_gpu_hour"][0] > 1.6900 + 0.03


def test_a_ddtl_drawn_in_steps_pays_its_commitment_fees():
    # Half the DDTL drawn at close and half in month 6: the undrawn half pays 0.5% a year, act/360
    # (365/360/12 of a year a month), in months 1-6. Owning costs the reviewed version's figure
    # plus the fees at close and the PV of those commitment fees.
    base = load_scenario(STACK)
    tranches = [t.model_dump(mode="json", exclude_unset=True) for t in base.financing.tranches]
    tranches[0]["draw_schedule"] = [{"month": 0, "share": 0.5}, {"month": 6, "share": 0.5}]
    scenario = load_scenario(STACK, {"financing.tranches": tranches})
    projection, r = compare(scenario, 4.0, upfront_share=0.25)
    lines, t = projection.lines, scenario.financing.tax_rate
    capex = lines["capex_usd"].sum()
    at_close = capex * (0.55 * 0.015 + 0.20 * 0.0125 + 0.10 * 0.02 + 0.10 * 0.13)
    fee = np.zeros_like(lines["capex_usd"])
    fee[0, 1:7] = 0.005 * 365 / 360 / 12 * 0.5 * 0.55 * capex
    old = present_value(asset_cost_usd(lines, t) + old_debt_cost_usd(lines, t), scenario)
    gap = at_close + present_value(fee, scenario)
    assert present_value(fee, scenario) > 2_000.0
    assert r["pv_cost_own_usd"][0] - old == pytest.approx(gap, rel=1e-9)


# --- 2. Interest added to a sculpted loan's balance is not cash drawn ---------------------------


@pytest.mark.parametrize(
    ("stem", "reviewed", "fixed", "breakeven"),
    [
        # reviewer's repro at --price 3.7: printed 446,494,215 (break-even 2.7776) for the halls
        # of 5,584 and 5,400 GPUs; the figures below are of the halls sized with their share of
        # the scale-out network (5,008 and 4,896 GPUs, the GB300 one at PUE 1.3), the old
        # formula's beside the fixed one's; each ramp month's GPUs depreciated from the month
        # they enter service (410,474,953, 411,372,623 and 2.8589 while every GPU was
        # depreciated from month 1)
        ("hall-10mw-hgx-b200-air", 408_068_524, 408_959_322, 2.8410),
        # (its retrofit written off by the horizon since a facilities review, a tenant's
        # improvement: 306,193,867 and 306,864,973 while it counted as sold at book value;
        # 307,223,187 and 307,894,703 before depreciation by in-service batch)
        ("hall-10mw-gb300-nvl72-liquid", 305_611_001, 306_281_235, None),
    ],
)
def test_deferred_interest_of_a_sculpted_loan_is_no_draw(stem, reviewed, fixed, breakeven):
    # The methodology's draws identity, B_m = B_(m-1) + draw_m + A_m - P_m, with A_m = interest
    # expense - cash interest (debt_share's loan has no fees): drawn only in month 0, the
    # amount of the loan.
    scenario = load_scenario(scenario_path(stem))
    projection, r = compare(scenario, 3.7)
    lines, t = projection.lines, scenario.financing.tax_rate
    added = lines["interest_usd"] - lines["cash_interest_usd"]
    assert added.sum() > 1e5  # the sculpted service leaves interest unpaid
    drawn = np.diff(lines["debt_balance_usd"], prepend=0.0, axis=1) + lines["principal_usd"]
    drawn -= added
    np.testing.assert_allclose(drawn[0, 1:], 0.0, atol=1e-4)
    assert drawn[0, 0] == pytest.approx(projection.metrics["debt_usd"][0], rel=1e-12)
    debt = -drawn + lines["cash_interest_usd"] + lines["principal_usd"] - t * lines["interest_usd"]
    expected = present_value(asset_cost_usd(lines, t) + debt, scenario)
    assert r["pv_cost_own_usd"][0] == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(fixed, abs=1.0)
    old = present_value(asset_cost_usd(lines, t) + old_debt_cost_usd(lines, t), scenario)
    assert old == pytest.approx(reviewed, abs=1.0)
    if breakeven is not None:
        # the reviewed break-even charged the renter the owner's insurance and maintenance
        # (shares of its capex, which the rent covers): now the rent recovers them too, by
        # PV((1 - t) x those costs) / PV(the after-tax lease per USD/GPU-hour)
        _, per_price = compare(scenario, 1.0, renter_pays=())
        owners = (1 - t) * (lines["opex_usd"] - renter_opex_usd(scenario))
        shift = present_value(owners, scenario) / per_price["pv_cost_lease_usd"][0]
        assert shift > 0.05
        got = r["breakeven_usd_per_gpu_hour"][0]
        assert got == pytest.approx(breakeven + shift, abs=5e-5)


# --- Properties: no debt, fees ------------------------------------------------------------------


@pytest.mark.parametrize("stem", ["deepseek-r1-gb200-nvl72", "hall-10mw-hgx-b200-air"])
def test_without_debt_owning_costs_the_asset_alone(stem):
    scenario = load_scenario(scenario_path(stem), {"financing.debt_share": 0.0})
    projection, r = compare(scenario, 2.0)
    lines = projection.lines
    np.testing.assert_array_equal(lines["cash_flow_equity_usd"], lines["cash_flow_project_usd"])
    expected = present_value(asset_cost_usd(lines, scenario.financing.tax_rate), scenario)
    assert r["pv_cost_own_usd"][0] == pytest.approx(expected, rel=1e-12)
    assert r["pv_debt_flows_usd"][0] == 0.0


def term_loan(fee_share, repayment="level_payment"):
    return {
        "financing.tranches": [
            {
                "type": "term_loan",
                "name": "loan",
                "share_of_capex": 0.5,
                "rate_annual": 0.09,
                "maturity_month": 60,
                "upfront_fee_share": fee_share,
                "repayment": repayment,
            }
        ]
    }


@pytest.mark.parametrize("fee_share", [0.01, 0.03])
def test_an_upfront_fee_raises_the_cost_of_owning_by_its_present_value(fee_share):
    # The fee is paid at close, fee x 50% of capex, and amortized into interest expense, whose
    # tax saving returns t x PV(the amortization) of it.
    free_scenario = load_scenario(STACK, term_loan(0.0))
    free, r_free = compare(free_scenario, 4.0)
    scenario = load_scenario(STACK, term_loan(fee_share))
    paid, r = compare(scenario, 4.0)
    t = scenario.financing.tax_rate
    fee = fee_share * 0.5 * paid.lines["capex_usd"].sum()
    amortized = paid.lines["interest_usd"] - free.lines["interest_usd"]
    assert amortized.sum() == pytest.approx(fee, rel=1e-9)
    expected = fee - t * present_value(amortized, scenario)
    assert r["pv_cost_own_usd"][0] - r_free["pv_cost_own_usd"][0] == pytest.approx(
        expected, rel=1e-9
    )


# --- 3. The rate that discounts the debt flows --------------------------------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # the seed's sculpted loan, sized to its DSCR
        term_loan(0.02),
        term_loan(0.02, "bullet"),
    ],
)
def test_at_the_after_tax_cost_of_debt_borrowing_is_worth_nothing(overrides):
    # Brealey, Myers & Allen ch. 25: debt flows discounted at r_D (1 - T_c). A loan's after-tax
    # flows, C_m - (1 + y (1 - t)) C_(m-1) with y its monthly yield on the carrying amount C,
    # telescope to nothing; so owning costs what it costs without the debt, its fixed flows
    # (capex less the tax its tax depreciation saves) at that rate too, the rest at 12%.
    path = SEED if not overrides else STACK
    scenario = load_scenario(path, overrides)
    projection, r_default = compare(scenario, 4.0)
    t = scenario.financing.tax_rate
    k = after_tax_cost_of_debt_annual(projection.metrics["cost_of_debt_annual"], [t])
    _, r = compare(scenario, 4.0, debt_discount_rate_annual=k)
    debt = projection.metrics["debt_usd"][0]
    assert r["pv_debt_flows_usd"][0] == pytest.approx(0.0, abs=1e-9 * debt)
    lines = projection.lines
    fixed = lines["capex_usd"] - t * lines["tax_depreciation_usd"]
    asset = present_value(asset_cost_usd(lines, t) - fixed, scenario)
    asset += present_value(fixed, scenario, float(k[0]))
    assert r["pv_cost_own_usd"][0] == pytest.approx(asset, rel=1e-12)
    # at the discount rate (the default), debt cheaper after tax lowers the cost of owning
    assert float(k[0]) < scenario.financing.discount_rate_annual
    assert r_default["pv_debt_flows_usd"][0] < -1e4


def test_the_after_tax_cost_of_debt_of_the_seed():
    # The seed's loan: 10.75% a year quoted nominal, 10.75%/12 a month; after tax each month
    # 10.75%/12 x (1 - 0.21), annualized.
    scenario = load_scenario(SEED)
    assert scenario.financing.debt_rate_annual == 0.1075
    assert scenario.financing.debt_rate_quote == "nominal"
    projection = project(scenario)
    k = after_tax_cost_of_debt_annual(projection.metrics["cost_of_debt_annual"], [0.21])
    assert k[0] == pytest.approx((1 + 0.1075 / 12 * 0.79) ** 12 - 1, rel=1e-12)


@SETTINGS
@given(
    rate=st.floats(0.0, 0.3),
    tax=st.floats(0.0, 0.5),
    term=st.integers(1, 120),
    discount=st.floats(0.0, 0.3),
)
def test_a_level_loan_at_its_after_tax_cost_is_worth_nothing(rate, tax, term, discount):
    # A level loan of 1 at monthly rate i = rate / 12 drawn in month 0, by hand: balances of an
    # annuity, interest i B_(m-1) deducted; its flows discounted at after_tax_cost_of_debt.
    i = rate / 12
    # (1 - (1 + i)^-n as -expm1(-n log1p(i)): exact for a rate near 0, where it cancels)
    payment = 1 / term if i == 0 else i / -np.expm1(-term * np.log1p(i))
    balance = np.empty(term + 1)
    balance[0] = 1.0
    for m in range(1, term + 1):
        balance[m] = balance[m - 1] * (1 + i) - payment
    interest = np.concatenate([[0.0], i * balance[:-1]])
    flows = np.concatenate([[-1.0], np.full(term, payment)]) - tax * interest
    k = after_tax_cost_of_debt_annual([(1 + i) ** 12 - 1], [tax])
    zeros = np.zeros((1, term + 1))
    r = lease_vs_own(
        np.ones((1, term + 1)),
        flows[None, :],
        zeros,
        [discount / 12],
        own_debt_cost_usd=flows[None, :],
        debt_discount_rate_monthly=[(1 + k[0]) ** (1 / 12) - 1],
    )
    assert r["pv_debt_flows_usd"][0] == pytest.approx(0.0, abs=1e-9)
    assert r["pv_cost_own_usd"][0] == pytest.approx(0.0, abs=1e-9)


def test_the_command_says_which_rate_discounts_the_debt(capsys):
    args = ["lease-vs-own", str(SEED), "--price", "4", "--term-months", "36"]
    assert main([*args, "--format", "json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["discount_debt_at"] == "discount-rate"
    assert default["debt_discount_rate_annual"] == default["discount_rate_annual"] == 0.12
    assert default["after_tax_cost_of_debt_annual"] == pytest.approx(
        (1 + 0.1075 / 12 * 0.79) ** 12 - 1, rel=1e-12
    )
    assert main([*args, "--discount-debt-at", "after-tax-cost-of-debt", "--format", "json"]) == 0
    at_cost = json.loads(capsys.readouterr().out)
    assert at_cost["debt_discount_rate_annual"] == at_cost["after_tax_cost_of_debt_annual"]
    assert at_cost["pv_debt_flows_usd"] == pytest.approx(0.0, abs=1e-6)
    # the default's debt flows lower the cost of owning by what they are worth at 12%: without
    # them the seed costs 4,777,038 USD, all at 12%; at the after-tax cost of debt, capex, the
    # tax its depreciation saves and the rent at 8.83% too (tests/test_lease_review27.py), 4,733,058
    assert default["pv_cost_own_usd"] - default["pv_debt_flows_usd"] == pytest.approx(
        4_777_038, abs=1.0
    )
    assert at_cost["pv_cost_own_usd"] == pytest.approx(4_733_058, abs=1.0)
    assert main(args) == 0
    out = capsys.readouterr().out
    pv_debt = round(default["pv_debt_flows_usd"])
    assert f"PV {pv_debt:,} USD at 12.00% a year, the discount rate" in out
    assert "the debt costs 8.83% a year after tax" in out
    assert "borrowing lowers the cost of owning" in out
    assert "--discount-debt-at after-tax-cost-of-debt" in out
    assert main([*args, "--set", "financing.debt_share=0", "--format", "json"]) == 0
    unlevered = json.loads(capsys.readouterr().out)
    assert unlevered["after_tax_cost_of_debt_annual"] is None
    assert unlevered["pv_debt_flows_usd"] == 0.0
    assert unlevered["pv_cost_own_usd"] == pytest.approx(
        default["pv_cost_own_usd"] - default["pv_debt_flows_usd"], rel=1e-9
    )


def test_an_unknown_debt_discount_is_a_usage_error(capsys):
    args = ["lease-vs-own", str(SEED), "--price", "4", "--discount-debt-at", "wacc"]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert "after-tax-cost-of-debt" in capsys.readouterr().err


# --- 4. The loan's all-in rates -----------------------------------------------------------------


def test_the_loan_prints_its_all_in_rates_effective_and_nominal(capsys):
    # Reviewer's repro: 1e6 at 9.25% for 60 months, 1% fee. The borrower receives 990,000 and pays
    # PMT(0.0925/12, 60, 1e6) monthly; y = their IRR a month: 12 y = 9.682% (nominal, as the
    # 9.25% contract rate is quoted), (1 + y)^12 - 1 = 10.1232% (effective).
    args = ["loan", "--amount", "1e6", "--rate", "0.0925", "--term-months", "60"]
    args += ["--upfront-fee-share", "0.01"]
    payment = -npf.pmt(0.0925 / 12, 60, 1e6)
    y = npf.irr([-990_000.0, *[payment] * 60])
    assert 12 * y == pytest.approx(0.09682, abs=5e-6)
    assert main([*args, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["nominal_rate_annual"] == pytest.approx(12 * y, rel=1e-9)
    assert summary["effective_rate_annual"] == pytest.approx((1 + y) ** 12 - 1, rel=1e-9)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"all-in rate, effective annual [per year]      {(1 + y) ** 12 - 1:.4%}" in out
    assert f"all-in rate, nominal annual (APR) [per year]  {12 * y:.4%}" in out
    assert "effective rate [per year]" not in out


def test_without_fees_the_nominal_all_in_rate_is_the_contract_rate(capsys):
    args = ["loan", "--amount", "1e6", "--rate", "0.0925", "--term-months", "60"]
    assert main([*args, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["nominal_rate_annual"] == pytest.approx(0.0925, rel=1e-9)
