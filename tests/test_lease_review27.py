"""A lender's credit officer's review of `econ lease-vs-own` and `econ loan`: convertible notes
settled in shares are a cost of owning, the projection's warnings reach the reader, the after-tax
cost of debt discounts every debt-like flow (Brealey, Myers & Allen ch. 25.4-25.5), a lease term
longer than the service is said, and contradictory loan and renter options are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.lease import shares_settling_debt_usd
from tests.conftest import SCENARIOS

STACK = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72-capital-stack")
SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


def converting_stack(tmp_path, settlement="physical", growth=0.5):
    """The capital stack with its convertible notes maturing in month 36 and the share price
    growing `growth` a year from 100 USD: above the 125 USD conversion price then (at 50%,
    337.50 USD), so the notes convert."""
    text = STACK.read_text()
    assert text.count("maturity_month = 84\n") == 1  # the convertible notes'
    terms = f'share_price_growth_annual = {growth}\nsettlement = "{settlement}"\n'
    path = tmp_path / f"stack-{settlement}-{growth}.toml"
    path.write_text(text.replace("maturity_month = 84\n", "maturity_month = 36\n" + terms))
    return path


def lease_json(capsys, *args):
    assert main(["lease-vs-own", *map(str, args), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- 1. Convertible notes repaid in shares are a cost of owning --------------------------------


def test_the_shares_that_settle_convertible_notes_are_a_cost_of_owning(tmp_path, capsys):
    # Reviewer's repro: physical settlement repays the 353,560 USD face (10% of capex 3,535,600)
    # with 2,200 new shares worth 742,476 USD, and owning cost 4,107,175 (break-even 1.8339)
    # against 4,358,832 (1.9505) for the same notes not converting: the face repaid in shares
    # counted as free. By hand: conversion price K = 100 x 1.25 = 125, share price in month 36
    # S = 100 x 1.5^3 = 337.50, face / K = 2,828.48 shares delivered; the capped call (cap 200)
    # returns (200 - 125) x 2,828.48 / 337.50 = 628.55 of them: net 2,199.93 shares x 337.50 =
    # 742,476 USD, a cost of the debt in month 36, discounted at 12% a year: 1.12^-3.
    face = 0.10 * 3_535_600.0
    gross = face / 125.0
    net = gross - (200.0 - 125.0) * gross / 337.5
    value = net * 337.5
    assert value == pytest.approx(742_476.0, abs=0.5)
    path = converting_stack(tmp_path)
    projection = project(load_scenario(path))
    settled = shares_settling_debt_usd(projection)
    assert settled[0, 36] == pytest.approx(value, rel=1e-12)
    assert np.count_nonzero(settled) == 1
    physical = lease_json(capsys, path, "--price", "4")
    assert physical["settled_in_shares_usd"] == pytest.approx(value, rel=1e-12)
    # the same stack, owning as before less that cost (the reviewer's 4,107,175)
    reviewed = 4_107_175.385
    assert physical["pv_cost_own_usd"] == pytest.approx(reviewed + value / 1.12**3, abs=0.01)
    assert physical["breakeven_usd_per_gpu_hour"] > 1.8339 + 0.2
    # Net share settlement pays the face in cash and only the 388,916 USD above it in shares:
    # the same notes cost the owner the same, however they settle.
    net_share = lease_json(capsys, converting_stack(tmp_path, "net_share"), "--price", "4")
    assert net_share["settled_in_shares_usd"] == pytest.approx(value - face, rel=1e-9)
    assert net_share["pv_cost_own_usd"] == pytest.approx(physical["pv_cost_own_usd"], rel=1e-12)
    # notes that do not convert (the share price flat) are repaid in cash, at face
    flat = lease_json(capsys, converting_stack(tmp_path, growth=0.0), "--price", "4")
    assert flat["settled_in_shares_usd"] == 0.0


def test_the_table_says_what_the_shares_settling_debt_are_worth(tmp_path, capsys):
    assert main(["lease-vs-own", str(converting_stack(tmp_path)), "--price", "4"]) == 0
    out = capsys.readouterr().out
    assert "with the shares that settle convertible notes, worth 742,476 USD when issued" in out


def test_the_projections_warnings_reach_the_reader(tmp_path, capsys):
    # Reviewer's finding: econ project gives 11 warnings on the converting stack (the covenant
    # breach, the conversion's dilution...), lease-vs-own none.
    path = converting_stack(tmp_path)
    expected = project(load_scenario(path)).warnings[0]
    assert len(expected) >= 10
    assert main(["lease-vs-own", str(path), "--price", "4"]) == 0
    said = capsys.readouterr()
    name = load_scenario(path).name
    for warning in expected:
        assert f"warning [{name}]: {warning}" in said.err
    assert "warning" not in said.out
    printed = lease_json(capsys, path, "--price", "4")
    assert printed["warnings"] == expected
    assert any("covenant breached" in w for w in printed["warnings"])


# --- 2. At the after-tax cost of debt, every flow as safe as debt (Brealey, Myers & Allen) -----


def hand_ledger():
    """A small fleet by hand, months 0-6: 2 GPUs in service in months 1-6 bought for 1,000 USD
    in month 0, depreciated for tax over 6 months, sold for 100 in month 6 (basis 0: all gain);
    power 10, facility 5 and opex 3 USD a month; 600 USD borrowed in month 0, bullet, 1% a month
    interest, repaid in month 6 (equity CF = project CF 0 + financing CF)."""
    months = np.arange(7)
    serving = (months >= 1).astype(float)
    financing = np.where(months == 0, 600.0, -6.0 * serving)
    financing[6] -= 600.0
    one = {
        "tokens": 1e6 * serving,
        "gpus_in_service": 2.0 * serving,
        "capex_usd": np.where(months == 0, 1_000.0, 0.0),
        "tax_depreciation_usd": 1_000.0 / 6 * serving,
        "disposal_usd": np.where(months == 6, 100.0, 0.0),
        "tax_gain_on_disposal_usd": np.where(months == 6, 100.0, 0.0),
        "power_usd": 10.0 * serving,
        "facility_usd": 5.0 * serving,
        "opex_usd": 3.0 * serving,
        "interest_usd": 6.0 * serving,
        "cash_flow_project_usd": np.zeros(7),
        "cash_flow_equity_usd": financing,
    }
    return {name: line[None, :] for name, line in one.items()}


def test_the_after_tax_cost_of_debt_discounts_the_lease_and_the_owners_fixed_flows():
    # Brealey, Myers & Allen ch. 25.4-25.5: the lease's debt-equivalent flows (its payments
    # after tax, the depreciation tax shields given up, the capex saved) at the after-tax
    # borrowing rate, r_D (1 - T_c) = 1% x 0.75 a month; the operating costs and the sale at the
    # discount rate, 12% a year. By hand, t = 25%, rent 0.5 USD/GPU-hour: 2 x 0.5 x 730 = 730
    # USD a month in months 1-6, no upfront, the renter paying nothing else.
    from econ.lease import lease_vs_own_of_projection

    t, price = 0.25, 0.5
    k = 1.0075**12 - 1  # the bullet loan's after-tax cost, annual
    own_safe = own_risky = lease = per_price = debt = 0.0
    for m in range(7):
        at_debt, at_r = 1.0075**-m, 1.12 ** (-m / 12)
        capex, shield = (1_000.0 if m == 0 else 0.0), (t * 1_000.0 / 6 if m else 0.0)
        loan = -600.0 if m == 0 else 6.0 * (1 - t) + (600.0 if m == 6 else 0.0)
        operating = (10.0 + 5.0 + 3.0) * (1 - t) if m else 0.0
        sale = -100.0 * (1 - t) if m == 6 else 0.0  # proceeds less the tax on the gain
        own_safe += (capex - shield + loan) * at_debt
        own_risky += (operating + sale) * at_r
        lease += (730.0 * (1 - t) if m else 0.0) * at_debt
        per_price += (2 * 730.0 * (1 - t) if m else 0.0) * at_debt
        debt += loan * at_debt
    assert debt == pytest.approx(0.0, abs=1e-9)  # a bullet loan at its after-tax cost
    r = lease_vs_own_of_projection(
        hand_ledger(), price, 3, 0.0, [t], [0.12], debt_discount_rate_annual=[k]
    )
    assert r["pv_cost_own_usd"][0] == pytest.approx(own_safe + own_risky, rel=1e-12)
    assert r["pv_cost_lease_usd"][0] == pytest.approx(lease, rel=1e-12)
    assert r["breakeven_usd_per_gpu_hour"][0] == pytest.approx(
        (own_safe + own_risky) / per_price, rel=1e-12
    )
    assert r["pv_debt_flows_usd"][0] == pytest.approx(0.0, abs=1e-9)
    # without the rate every flow is discounted at 12%, the loan's included
    r = lease_vs_own_of_projection(hand_ledger(), price, 3, 0.0, [t], [0.12])
    everything = 0.0
    for m in range(7):
        flows = (1_000.0 if m == 0 else 0.0) - (t * 1_000.0 / 6 if m else 0.0)
        flows += -600.0 if m == 0 else 6.0 * (1 - t) + (600.0 if m == 6 else 0.0)
        flows += ((10.0 + 5.0 + 3.0) * (1 - t) if m else 0.0) - (75.0 if m == 6 else 0.0)
        everything += flows * 1.12 ** (-m / 12)
    assert r["pv_cost_own_usd"][0] == pytest.approx(everything, rel=1e-12)


def seed_by_hand(price):
    """The seed from its file's figures, not econ's lines (the reviewer's ledger): capex
    3,100,000 + 72 x (4,300 + 1,750) = 3,535,600 USD in month 0, 72 GPUs in months 1-72, power
    72 x 1.87 kW x PUE 1.1 x 730 h x 0.0806 USD/kWh, facility 72 x 1.87 kW x 194.95 USD/kW,
    staff 3,600 and insurance 1.6% of capex a year, straight-line tax depreciation over 72
    months; rent with 36-month terms, a quarter upfront (paid in months 0 and 36), the renter
    paying the staff. Owning without the loan: at its after-tax cost the loan is worth nothing.
    Capex, the depreciation tax shield and the rent after tax at r_D (1 - t) = (1 + 10.75%/12 x
    0.79)^12 - 1 = 8.83%; the operating costs at 12%. Returns PV own, PV lease [USD]."""
    t, m = 0.21, np.arange(73)
    capex = 3_100_000.0 + 72 * (4_300.0 + 1_750.0)
    gpus = np.where(m >= 1, 72.0, 0.0)
    staff = np.where(m >= 1, 3_600.0, 0.0)
    operating = gpus * 1.87 * 1.1 * 730 * 0.0806 + gpus * 1.87 * 194.95
    operating += staff + np.where(m >= 1, capex * 0.016 / 12, 0.0)
    at_debt = (1 + 0.1075 / 12 * (1 - t)) ** -m
    at_r = 1.12 ** (-m / 12)
    shield = t * np.where(m >= 1, capex / 72, 0.0)
    own = capex - shield @ at_debt + (1 - t) * operating @ at_r
    accrued = gpus * price * 730
    paid = 0.75 * accrued
    paid[0] += 0.25 * accrued[1:37].sum()
    paid[36] += 0.25 * accrued[37:73].sum()
    lease = (paid - t * accrued) @ at_debt + (1 - t) * staff @ at_r
    return own, lease


def test_the_seed_at_the_after_tax_cost_of_debt(capsys):
    # Reviewer's figures, `--price 4 --upfront-share 0.25`: econ gave a break-even of 2.0255
    # USD/GPU-hour, discounting only the loan at 8.83% (where it is worth nothing) and the rest,
    # rent included, at 12%; Brealey, Myers & Allen's treatment gives 1.8816.
    own, lease = seed_by_hand(4.0)
    per_price = seed_by_hand(1.0)[1] - seed_by_hand(0.0)[1]
    breakeven = (own - seed_by_hand(0.0)[1]) / per_price
    assert breakeven == pytest.approx(1.8816, abs=5e-5)
    args = [SEED, "--price", "4", "--upfront-share", "0.25"]
    r = lease_json(capsys, *args, "--discount-debt-at", "after-tax-cost-of-debt")
    assert r["pv_cost_own_usd"] == pytest.approx(own, rel=1e-9)
    assert r["pv_cost_lease_usd"] == pytest.approx(lease, rel=1e-9)
    assert r["breakeven_usd_per_gpu_hour"] == pytest.approx(breakeven, rel=1e-9)
    assert round(own) == 4_733_058 and round(lease) == 9_895_094
    # at the break-even rent, leasing costs what owning does
    at = lease_json(
        capsys, SEED, "--price", repr(float(breakeven)), "--upfront-share", "0.25",
        "--discount-debt-at", "after-tax-cost-of-debt",
    )  # fmt: skip
    assert at["lease_advantage_usd"] == pytest.approx(0.0, abs=1e-6 * own)
    # the default, every flow at 12%, the loan's included, is unchanged: 1.9825
    assert lease_json(capsys, *args)["breakeven_usd_per_gpu_hour"] == pytest.approx(
        1.9825, abs=5e-5
    )


def test_the_after_tax_cost_of_debt_needs_debt(capsys):
    # Without debt there is no borrowing rate to discount the rent and capex at; the option
    # used to fall back to the discount rate, silently.
    args = ["lease-vs-own", str(SEED), "--price", "4", "--set", "financing.debt_share=0"]
    assert main([*args, "--discount-debt-at", "after-tax-cost-of-debt"]) == 3
    err = capsys.readouterr().err
    assert "--discount-debt-at after-tax-cost-of-debt:" in err and "borrows nothing" in err
    assert "--discount-debt-at discount-rate" in err and "Traceback" not in err
    assert main(args) == 0


# --- 3. A term longer than the service is said -------------------------------------------------


def test_a_term_longer_than_the_service_is_warned_of(capsys):
    # Reviewer's repro: --term-months 72, 100 and 600 gave the same figures, the header saying
    # "600-month terms", with no word that rent after the 72 months of service is not counted.
    said = "is longer than the 72 months the GPUs are in service (months 1-72)"
    figures = {}
    for term in ("72", "100", "600"):
        assert main(["lease-vs-own", str(SEED), "--price", "4", "--term-months", term]) == 0
        err = capsys.readouterr().err
        assert (f"warning: the {term}-month term {said}" in err) == (term != "72")
        printed = lease_json(capsys, SEED, "--price", "4", "--term-months", term)
        figures[term] = printed["pv_cost_lease_usd"]
        term_warnings = [w for w in printed["warnings"] if said in w]
        assert len(term_warnings) == (term != "72")
    assert figures["72"] == figures["100"] == figures["600"]
    assert "rent after it, which a lessee bound to the term would owe, is not counted" in err


def test_the_term_warning_names_the_months_in_service():
    from econ.lease import term_warning

    # the seed retired at month 36: 36 months in service, months 1-36
    assert term_warning(36, 1, 36) is None
    text = term_warning(48, 1, 36)
    assert text.startswith("the 48-month term is longer than the 36 months the GPUs are in ")
    assert "(months 1-36): the contract is cut at month 36" in text
    assert "any term from 36 months gives these figures" in text


# --- 4. Loan options that contradict the repayment type are refused ----------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # matured at month 24 of a 60-month term, silently
        (
            ["--type", "bullet", "--amortization-months", "24"],
            "--amortization-months = 24: expected none with --type bullet, which repays the "
            "whole amount at --term-months (60); for a bullet in month 24, give --term-months 24",
        ),
        (
            ["--type", "bullet", "--amortization-months", "72"],
            "--amortization-months = 72: expected none with --type bullet",
        ),
        # ran as a plain level loan, silently
        (
            ["--type", "balloon"],
            "--type = 'balloon': expected --balloon-share above 0 with it, the share of the "
            "amount left for the balloon (without one it is a level loan: --type level_payment)",
        ),
        (["--type", "balloon", "--balloon-share", "0"], "--type = 'balloon': expected"),
    ],
)
def test_a_loan_option_the_repayment_does_not_use_is_refused(extra, message, capsys):
    args = ["loan", "--amount", "1000", "--rate", "0.1", "--term-months", "60", *extra]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1  # one line


def test_a_bullet_over_its_term_and_a_balloon_with_a_share_still_run(capsys):
    base = ["loan", "--amount", "1000", "--rate", "0.1", "--term-months", "60", "--format", "json"]
    assert main([*base, "--type", "bullet", "--amortization-months", "60"]) == 0
    schedule = json.loads(capsys.readouterr().out)["schedule"]
    assert [row["principal_usd"] for row in schedule[1:]] == pytest.approx([0.0] * 59 + [1000])
    assert main([*base, "--type", "balloon", "--balloon-share", "0.3"]) == 0
    assert json.loads(capsys.readouterr().out)["schedule"][-1]["principal_usd"] > 300.0


def test_a_scenario_files_loan_refuses_them_too():
    from pydantic import ValidationError

    from econ.scenario.financing_models import DelayedDrawTermLoan, TermLoan

    loan = {"name": "loan", "amount_usd": 1e6, "rate_annual": 0.1, "maturity_month": 60}
    with pytest.raises(ValidationError, match="repayment = 'balloon' with balloon_share 0"):
        TermLoan.model_validate({**loan, "repayment": "balloon"})
    with pytest.raises(
        ValidationError,
        match="repayment = 'bullet' with amortization_months 24: expected none, a bullet repays "
        "at maturity_month \\(60, 60 months after issue\\); for a bullet 24 months after issue, "
        "set maturity_month to 24",
    ):
        TermLoan.model_validate({**loan, "repayment": "bullet", "amortization_months": 24})
    TermLoan.model_validate({**loan, "repayment": "balloon", "balloon_share": 0.2})
    TermLoan.model_validate({**loan, "repayment": "bullet", "amortization_months": 60})
    # a delayed-draw loan's draws each repay their amortization period after they are drawn
    DelayedDrawTermLoan.model_validate({**loan, "repayment": "bullet", "amortization_months": 24})


# --- 5. An empty --renter-pays is refused; none is said so ---------------------------------------


@pytest.mark.parametrize("value", ["", " , ", ",", "  "])
def test_an_empty_renter_pays_is_refused(value, capsys):
    # read as none (exit 0) before
    assert main(["lease-vs-own", str(SEED), "--price", "4", "--renter-pays", value]) == 3
    err = capsys.readouterr().err
    assert f"--renter-pays {value!r}: no cost named; expected 'none' or a comma-separated" in err
    assert "Traceback" not in err


def test_none_still_means_the_rent_covers_everything(capsys):
    for value in ("none", " None "):
        assert lease_json(capsys, SEED, "--price", "4", "--renter-pays", value)["renter_pays"] == []
