"""Tests of econ.lease (renting GPUs by the hour against owning them) and `econ lease-vs-own`:
hand-computed rent schedules, present values, the break-even price, invariants and bad input."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ.cli import main
from econ.lease import (
    after_tax_cost_usd,
    financing_cash_flow_usd,
    lease_payments_usd,
    lease_vs_own,
    ownership_cost_usd,
    rent_accrued_usd,
    rent_paid_usd,
)
from econ.units import HOURS_PER_MONTH
from tests.conftest import SCENARIOS

SETTINGS = settings(
    max_examples=int(os.environ.get("ECON_HYPOTHESIS_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_rent_schedule_hand_computed():
    # 2 GPUs at 2 USD/GPU-hour: 2 * 2 * 730 = 2,920 a month. 3-month terms, 25% upfront:
    # 0.25 * 2,920 * 3 = 2,190 before each term (months 0 and 3), 0.75 * 2,920 = 2,190 monthly.
    rent = lease_payments_usd([2.0], [2.0], [3], [0.25], np.arange(8), [6])
    np.testing.assert_allclose(rent[0], [2190, 2190, 2190, 4380, 2190, 2190, 2190, 0])
    assert rent.sum() == pytest.approx(2 * 2 * HOURS_PER_MONTH * 6)


def test_last_contract_upfront_is_scaled_to_the_horizon():
    # A 36-month contract and a 40-month horizon: the second upfront covers months 37-40 only.
    rent = lease_payments_usd([1.0], [1.0], [36], [0.5], np.arange(41), [40])
    assert rent[0, 36] == pytest.approx(0.5 * HOURS_PER_MONTH * 4 + 0.5 * HOURS_PER_MONTH)
    assert rent.sum() == pytest.approx(HOURS_PER_MONTH * 40)


@SETTINGS
@given(
    gpus=st.integers(1, 10_000),
    price=st.floats(0.1, 20.0),
    term=st.integers(1, 60),
    upfront=st.floats(0.0, 0.99),
    last=st.integers(1, 96),
)
def test_rent_paid_equals_rent_for_the_months_served(gpus, price, term, upfront, last):
    rent = lease_payments_usd([gpus], [price], [term], [upfront], np.arange(last + 1), [last])
    assert rent.sum() == pytest.approx(gpus * price * HOURS_PER_MONTH * last, rel=1e-12)
    assert (rent >= 0).all()


def test_present_values_cost_per_mtok_and_break_even():
    tokens = np.array([[0.0, 1e9, 1e9]])
    own = np.array([[100.0, 10.0, 10.0]])
    per_price = np.array([[0.0, 50.0, 50.0]])
    lease = 1.0 * per_price
    r = lease_vs_own(tokens, own, lease, [0.0], per_price, np.zeros((1, 3)))
    assert r["pv_cost_own_usd"][0] == 120.0 and r["pv_cost_lease_usd"][0] == 100.0
    assert r["lease_advantage_usd"][0] == 20.0
    assert r["cost_own_usd_per_mtok"][0] == pytest.approx(120.0 / 2e3)
    assert r["breakeven_usd_per_gpu_hour"][0] == pytest.approx(1.2)
    discounted = lease_vs_own(tokens, own, lease, [0.1])
    assert discounted["pv_cost_own_usd"][0] == pytest.approx(100 + 10 / 1.1 + 10 / 1.21)


@SETTINGS
@given(st.floats(0.1, 10.0), st.floats(0.0, 0.02), st.floats(0.0, 0.9))
def test_at_the_break_even_price_both_cost_the_same(price, rate, upfront):
    months = np.arange(37)
    tokens = np.full((1, 37), 1e9)
    own = np.full((1, 37), 5e4)
    own[0, 0] = 3e6
    per_price = lease_payments_usd([72], [1.0], [36], [upfront], months, [36])
    r = lease_vs_own(tokens, own, price * per_price, [rate], per_price, np.zeros((1, 37)))
    p = r["breakeven_usd_per_gpu_hour"][0]
    at_breakeven = lease_vs_own(tokens, own, p * per_price, [rate])
    assert at_breakeven["lease_advantage_usd"][0] == pytest.approx(0.0, abs=1e-6 * 3e6)


def test_helpers():
    np.testing.assert_allclose(after_tax_cost_usd([[100.0]], [[40.0]], [0.25]), [[90.0]])
    # 60 drawn net of fees in month 0, 70 of interest and principal paid in month 1
    financing = financing_cash_flow_usd([[-40.0, -70.0]], [[-100.0, 0.0]])
    np.testing.assert_allclose(financing, [[60.0, -70.0]])
    cost = ownership_cost_usd([[100.0, 0]], financing, [[0, 5.0]], [[0, 10.0]])
    np.testing.assert_allclose(cost, [[40.0, 65.0]])


def test_no_tokens_gives_nan_cost_per_mtok():
    r = lease_vs_own(np.zeros((1, 3)), np.ones((1, 3)), np.ones((1, 3)), [0.0])
    assert np.isnan(r["cost_own_usd_per_mtok"][0]) and np.isnan(r["breakeven_usd_per_gpu_hour"][0])


# ---------------------------------------------------------------------------------------------
# econ lease-vs-own
# ---------------------------------------------------------------------------------------------


def scenario_file():
    return str(next(p for p in SCENARIOS if "deepseek" in p.name))


def test_cli_lease_vs_own_json_and_break_even(capsys):
    args = [
        "lease-vs-own",
        scenario_file(),
        "--price",
        "4.0",
        "--term-months",
        "36",
        "--upfront-share",
        "0.25",
        "--format",
        "json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["pv_cost_own_usd"] > 0 and first["cost_lease_usd_per_mtok"] > 0
    breakeven = first["breakeven_usd_per_gpu_hour"]
    assert main([*args[:3], f"{breakeven!r}", *args[4:]]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["lease_advantage_usd"] == pytest.approx(0.0, abs=1e-6 * first["pv_cost_own_usd"])
    assert second["pv_cost_own_usd"] == pytest.approx(first["pv_cost_own_usd"])


def test_cli_lease_vs_own_table(capsys):
    assert main(["lease-vs-own", scenario_file(), "--price", "4.0", "--renter-pays", "none"]) == 0
    out = capsys.readouterr().out
    assert "cost per million tokens [USD/Mtok]" in out and "break-even rent" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--price", "-1"], "--price = -1:"),  # as typed
        (["--price", "2", "--upfront-share", "1.5"], "--upfront-share = 1.5"),
        (["--price", "2", "--renter-pays", "tax"], "unknown cost 'tax'; expected 'none' or"),
        # a cost named twice would be charged twice: refused as an unknown one is
        (["--price", "2", "--renter-pays", "power,power"], "'power,power': 'power' given twice"),
        (["--price", "2", "--renter-pays", "opex, opex"], "'opex, opex': 'opex' given twice"),
        (["--price", "2", "--term-months", "0"], "--term-months = 0"),
    ],
)
def test_cli_lease_vs_own_bad_input(extra, message, capsys):
    assert main(["lease-vs-own", scenario_file(), *extra]) == 3
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# Rent of a fleet that changes over time: the GPUs in service each month
# ---------------------------------------------------------------------------------------------


def test_rent_of_a_changing_fleet_hand_computed():
    # GPUs [0, 1, 2, 2, 0, 0] at 1 USD/GPU-hour: rent accrued 0, 730, 1,460, 1,460, 0, 0.
    # 2-month terms from month 1, half upfront: contract 1 (months 1-2) 2,190, half (1,095) paid
    # in month 0; contract 3 (months 3-4) 1,460, half (730) in month 2; contract 5 has no GPUs.
    # The other half as served: 365, 730, 730.
    gpus = np.array([[0.0, 1.0, 2.0, 2.0, 0.0, 0.0]])
    np.testing.assert_allclose(rent_accrued_usd(gpus, 1.0)[0], [0, 730, 1460, 1460, 0, 0])
    paid = rent_paid_usd(gpus, [1.0], [2], [0.5], [1])
    np.testing.assert_allclose(paid[0], [1095, 365, 1460, 730, 0, 0])
    # a contract starting in month 0 has its upfront paid in month 0 (no month before it)
    np.testing.assert_allclose(rent_paid_usd(gpus, 1.0, 6, 1.0, 0)[0], [3650, 0, 0, 0, 0, 0])


def test_rent_of_a_constant_fleet_is_the_contract_schedule():
    gpus = np.where((np.arange(8) >= 1) & (np.arange(8) <= 6), 2.0, 0.0)[None, :]
    np.testing.assert_array_equal(
        rent_paid_usd(gpus, [2.0], [3], [0.25], [1]),
        lease_payments_usd([2.0], [2.0], [3], [0.25], np.arange(8), [6]),
    )


@SETTINGS
@given(
    gpus=st.lists(st.floats(0.0, 1e4), min_size=1, max_size=60),
    lead=st.integers(0, 5),
    term=st.integers(1, 40),
    upfront=st.floats(0.0, 1.0),
)
def test_rent_of_any_fleet_is_paid_in_full_and_never_late(gpus, lead, term, upfront):
    # Rent paid sums to the rent of the GPU-months served, and by any month at least the rent
    # accrued so far has been paid (upfront rent is paid before the months it covers).
    rented = np.array([[0.0] * lead + gpus])
    accrued = rent_accrued_usd(rented, 3.0)
    paid = rent_paid_usd(rented, 3.0, term, upfront, lead)
    assert paid.sum() == pytest.approx(accrued.sum(), rel=1e-12, abs=1e-6)
    assert (paid >= -1e-9).all()
    assert (np.cumsum(paid) >= np.cumsum(accrued) - 1e-6 * (1 + accrued.sum())).all()


def test_cli_lease_vs_own_refuses_a_scenario_with_vintages(capsys):
    refresh = next(p for p in SCENARIOS if p.stem == "h200-fleet-gb300-refresh")
    assert main(["lease-vs-own", str(refresh), "--price", "4"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "[[vintages]] (gb300): lease-vs-own compares one fleet" in err
    assert "--set 'vintages=[]'" in err
    # without the vintage, the first fleet alone is compared
    assert main(["lease-vs-own", str(refresh), "--price", "4", "--set", "vintages=[]"]) == 0


@SETTINGS
@given(
    upfront=st.floats(0.0, 1.0),
    term=st.integers(1, 48),
    rate=st.floats(0.0, 0.05),
    tax=st.floats(0.0, 0.5),
)
def test_deducting_rent_as_it_accrues_never_costs_less_than_when_paid(upfront, term, rate, tax):
    # Rent is paid no later than it accrues, so its deduction, taken as the months are served,
    # comes no earlier than the payment: the after-tax cost is at least that of deducting it when
    # paid, equal without discounting or without an upfront share.
    rented = lease_payments_usd([72], [1.0], [term], [upfront], np.arange(61), [60])
    accrued = rent_accrued_usd(np.where(np.arange(61) >= 1, 72.0, 0.0)[None, :], 1.0)
    tokens = np.ones((1, 61))
    spread = lease_vs_own(tokens, rented, after_tax_cost_usd(rented, accrued, [tax]), [rate])
    at_once = lease_vs_own(tokens, rented, after_tax_cost_usd(rented, rented, [tax]), [rate])
    gap = spread["pv_cost_lease_usd"][0] - at_once["pv_cost_lease_usd"][0]
    assert gap >= -1e-6
    if rate == 0.0 or upfront == 0.0 or tax == 0.0:
        assert gap == pytest.approx(0.0, abs=1e-6)


def test_cli_lease_vs_own_takes_fully_prepaid_rent(capsys):
    args = ["lease-vs-own", scenario_file(), "--price", "4", "--format", "json"]
    assert main([*args, "--upfront-share", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["upfront_share"] == 1.0


@SETTINGS
@given(price=st.floats(0.0, 1e300), upfront=st.floats(0.0, 1.0), other=st.floats(0.0, 1e5))
def test_the_break_even_does_not_depend_on_the_price(price, upfront, other):
    # p* = (PV_own - PV(other costs)) / PV(rent per unit price), whatever price the lease cost
    # was computed at: 3e6 + 36 x 5e4 - 36 x other over 72 GPUs x 730 h x 36 months undiscounted.
    months = np.arange(37)
    own = np.full((1, 37), 5e4)
    own[0, 0] = 3e6
    kept = np.where(months >= 1, other, 0.0)[None, :]
    per_price = lease_payments_usd([72], [1.0], [36], [upfront], months, [36])
    tokens = np.full((1, 37), 1e9)
    r = lease_vs_own(tokens, own, price * per_price + kept, [0.0], per_price, kept)
    expected = (3e6 + 36 * 5e4 - 36 * other) / (72 * HOURS_PER_MONTH * 36)
    assert r["breakeven_usd_per_gpu_hour"][0] == pytest.approx(expected, rel=1e-12)


def test_cli_a_huge_rent_gives_the_same_break_even(capsys):
    # The reviewer's --price 1e300 printed a break-even of -4.3e290 USD/GPU-hour: the fixed costs
    # were found as PV_lease - PV(rent per unit price) x price, all lost to rounding.
    args = ["lease-vs-own", scenario_file(), "--format", "json"]
    assert main([*args, "--price", "4"]) == 0
    at_4 = json.loads(capsys.readouterr().out)["breakeven_usd_per_gpu_hour"]
    assert main([*args, "--price", "1e300"]) == 0
    huge = json.loads(capsys.readouterr().out)
    assert huge["breakeven_usd_per_gpu_hour"] == at_4
    assert 0.5 < at_4 < 5.0
    assert huge["lease_advantage_usd"] < -1e305


def test_cli_lease_vs_own_table_says_its_cost_per_token_is_after_tax(capsys):
    # The seed's after-tax own cost per million tokens (0.1180) is not its LCOT (0.1459, before
    # tax): the row says after-tax, and the JSON keys stay cost_own_usd_per_mtok and
    # cost_lease_usd_per_mtok.
    seed = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")
    args = ["lease-vs-own", str(seed), "--price", "4", "--term-months", "36"]
    assert main([*args, "--upfront-share", "0.25"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "per million tokens [USD/Mtok]" in line)
    assert row.startswith("after-tax cost per million tokens [USD/Mtok]")
    # (lease: 0.2391 while the renter paid the owner's insurance in its opex)
    assert row.split()[-2:] == ["0.1180", "0.2342"]
    assert "the LCOT of econ project is before tax" in out
