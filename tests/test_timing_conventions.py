"""Timing conventions (issue 16 §3): contract terms and site costs count from the first month of
service, tax is paid on a chosen schedule never before the first taxable income, deferred tax
follows ASC 740 (losses carried forward are a deferred tax asset), float residues are exact zeros,
and SG&A is a share of revenue."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import load_scenario, project
from econ.arrays import snap_to_zero
from econ.deferred_tax import deferred_tax_with_losses
from econ.market import contract_price_path
from econ.opex import sga_usd_per_month
from econ.scenario import apply_overrides, validate_dict
from econ.tax import TAX_PAYMENTS, annual_sums, first_taxable_month, tax_payments_usd
from econ.units import HALF_CENT_USD
from tests.conftest import ROOT, SCENARIOS
from tests.test_engine import SMALL

QUARTERLY, ANNUAL, MONTHLY = (TAX_PAYMENTS.index(k) for k in ("quarterly", "annual", "monthly"))


def scenario(**changes):
    return validate_dict(apply_overrides(SMALL, changes))


# --- contracts count from the first month of service ---------------------------------------


def test_contract_renewal_counts_from_first_service_month():
    # Bought in month 2, serving from month 3: a 48-month contract covers months 3..50 and is
    # renewed in month 51 (before issue 16 it renewed in month 49, after 46 service months).
    months = np.arange(61)
    market = 10.0 + months[None, :].astype(float)  # a market price that names its month
    price = contract_price_path([4.0], market, [48], months, first_service_month=[3])[0]
    assert np.all(price[3:51] == 4.0)
    assert np.all(price[51:] == market[0, 51])


def test_engine_contract_term_from_service_start():
    s = scenario(
        **{
            "horizon_months": 60,
            "depreciation.life_years": 5.0,
            "fleet.purchase_month": 2,
            "market.contract_share": 1.0,
            "market.contract_usd_per_gpu_hour": 4.0,
            "market.contract_term_months": 48,
            "market.rental_usd_per_gpu_hour": 3.0,
            "market.rental_decline_annual": 0.2,
        }
    )
    m = project(s).monthly.loc["small"]
    per_hour = m.contract_revenue_usd / (8760 / 12)
    assert per_hour.iloc[3:51].to_numpy() == pytest.approx(np.full(48, 4.0), rel=1e-12)
    assert per_hour.iloc[51] < 4.0  # renewed at the lower market price after 48 service months


@given(
    start=st.integers(1, 30),
    term=st.integers(1, 40),
)
@settings(max_examples=60, deadline=None)
def test_contract_renewals_fall_every_term_after_service_start(start, term):
    months = np.arange(120)
    market = 1.0 + months[None, :].astype(float)
    price = contract_price_path([0.5], market, [term], months, first_service_month=[start])[0]
    changes = np.flatnonzero(np.diff(price[start:]) != 0) + start + 1
    assert changes.tolist() == list(range(start + term, 120, term))


# --- site costs from the site's opening -------------------------------------------------------


def test_staff_and_contracted_site_start_with_service():
    s = scenario(
        **{
            "horizon_months": 24,
            "fleet.purchase_month": 3,
            "facility.contracted_kw": 2.0,
            "capex.gpu_price_usd": 10000.0,
        }
    )
    m = project(s).monthly.loc["small"]
    # No hardware serves before month 4: no staff, no contracted colocation.
    assert (m.opex_usd.iloc[:4] == 0).all() and (m.facility_usd.iloc[:4] == 0).all()
    assert m.opex_usd.iloc[4] == pytest.approx(50.0)
    assert m.facility_usd.iloc[4] == pytest.approx(2.0 * 100.0)


def test_site_open_month_is_a_choice():
    s = scenario(**{"horizon_months": 24, "fleet.purchase_month": 3, "opex.site_open_month": 2})
    m = project(s).monthly.loc["small"]
    assert m.opex_usd.iloc[:2].sum() == 0
    assert m.opex_usd.iloc[2:4].tolist() == [50.0, 50.0]  # staff hired before the GPUs serve


# --- income tax payments --------------------------------------------------------------------


def test_tax_payment_schedules_reference():
    annual = np.array([[120.0, 240.0]] * 3)
    paid = tax_payments_usd(annual, [1, 1, 1], [24, 24, 24], 25, [QUARTERLY, ANNUAL, MONTHLY])
    quarterly, yearly, monthly = paid
    # Quarterly: due the 15th of the tax year's 4th, 6th, 9th and 12th months (IRC §6655(c)).
    assert {m: quarterly[m] for m in np.flatnonzero(quarterly)} == {
        4: 30.0, 6: 30.0, 9: 30.0, 12: 30.0, 16: 60.0, 18: 60.0, 21: 60.0, 24: 60.0
    }  # fmt: skip
    # Annual: with the return, the 15th of the 4th month after the year ends (IRC §6072(a));
    # the final year when the projection ends.
    assert {m: yearly[m] for m in np.flatnonzero(yearly)} == {16: 120.0, 24: 240.0}
    assert monthly[1:13] == pytest.approx(np.full(12, 10.0))
    assert monthly[13:25] == pytest.approx(np.full(12, 20.0))


def test_annual_payments_of_years_due_after_the_end_add_up_in_the_last_month():
    # Rows of each schedule mixed, horizons cut short: the years whose return is due after the
    # last month are all paid then, added in year order (as np.add.at adds them).
    annual = np.array([[0.1, 0.2, 0.3, 0.7]] * 4)
    codes, last = [ANNUAL, QUARTERLY, ANNUAL, MONTHLY], [40, 40, 20, 40]
    paid = tax_payments_usd(annual, [1, 1, 1, 1], last, 49, codes)
    assert paid[0].tolist() == [0.1 if m == 16 else 0.2 if m == 28 else 0.0 for m in range(40)] + [
        (0.3 + 0.7) * (m == 40) for m in range(40, 49)
    ]
    assert paid[2, 16] == 0.1 and paid[2, 20] == (0.2 + 0.3) + 0.7
    assert np.flatnonzero(paid[2]).tolist() == [16, 20]
    assert paid[[1, 3]].sum(axis=1) == pytest.approx([1.3, 1.3])


def test_no_tax_paid_before_the_first_taxable_income():
    # Cumulative taxable income first turns positive in month 5: the year's tax is paid in the
    # quarter ends from then (months 6, 9, 12), or monthly from month 5.
    taxable = np.array([[0.0, -40, -40, -40, 100, 50, 50, 50, 50, 50, 50, 50, 50]])
    first = first_taxable_month(taxable)
    assert first.tolist() == [5]
    annual = np.array([[90.0]])
    quarterly = tax_payments_usd(annual, first, [12], 13, [QUARTERLY])[0]
    assert np.flatnonzero(quarterly).tolist() == [6, 9, 12]
    assert quarterly[[6, 9, 12]] == pytest.approx([30.0, 30.0, 30.0])
    monthly = tax_payments_usd(annual, first, [12], 13, [MONTHLY])[0]
    assert np.flatnonzero(monthly).tolist() == list(range(5, 13))


@given(
    taxable=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=61),
    code=st.sampled_from([QUARTERLY, ANNUAL, MONTHLY]),
)
@settings(max_examples=200, deadline=None)
def test_tax_paid_equals_tax_due_and_never_before_first_income(taxable, code):
    from econ.tax import tax_with_loss_carryforward

    monthly = np.array([taxable])
    last = np.array([monthly.shape[1] - 1])
    annual = tax_with_loss_carryforward(annual_sums(monthly), [0.21])
    first = first_taxable_month(monthly)
    paid = tax_payments_usd(annual, first, last, monthly.shape[1], [code])
    assert paid.sum() == pytest.approx(annual.sum(), rel=1e-9, abs=1e-6)
    assert np.all(paid >= 0)
    assert paid[0, : min(int(first[0]), paid.shape[1])].sum() == 0


def test_engine_pays_the_tax_the_chosen_way():
    base = {"horizon_months": 24, "depreciation.life_years": 2.0}
    annual = project(scenario(**base, **{"financing.tax_payment": "annual"})).monthly
    quarterly = project(scenario(**base, **{"financing.tax_payment": "quarterly"})).monthly
    a, q = annual.loc["small"].tax_usd, quarterly.loc["small"].tax_usd
    # annual: year 1's tax with its return, the 15th of the 4th month after the year (IRC
    # §6072(a)): month 16; year 2's in the last month, where the projection settles
    assert np.flatnonzero(a.to_numpy()).tolist() == [16, 24]
    assert np.flatnonzero(q.to_numpy()).tolist() == [4, 6, 9, 12, 16, 18, 21, 24]
    assert a.sum() == pytest.approx(q.sum(), rel=1e-12)
    # The same tax expense whenever it is paid; later payment is worth more.
    assert annual.net_income_usd.sum() == pytest.approx(quarterly.net_income_usd.sum(), rel=1e-12)
    npv = lambda m: project(m).summary.npv_usd.iloc[0]  # noqa: E731
    assert npv(scenario(**base, **{"financing.tax_payment": "annual"})) > npv(
        scenario(**base, **{"financing.tax_payment": "quarterly"})
    )


# --- deferred tax under ASC 740 -------------------------------------------------------------


def _annual_tax_expense(monthly):
    m = monthly
    pre_tax = m.ebitda_usd - m.depreciation_usd - m.impairment_usd - m.interest_usd
    pre_tax = pre_tax + m.gain_on_disposal_usd
    year = np.maximum(m.index.get_level_values("month") - 1, 0) // 12
    expense = (m.current_tax_usd + m.deferred_tax_usd).groupby(year).sum()
    return expense.to_numpy(), pre_tax.groupby(year).sum().to_numpy()


def test_macrs_variant_tax_expense_is_the_statutory_rate():
    # Before issue 16: 53% of book pre-tax income in year 1 and negative later (losses carried
    # forward had no deferred tax asset). ASC 740-10-30-5: expense = rate x book income.
    s = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml")
    expense, pre_tax = _annual_tax_expense(project(s).monthly)
    assert expense == pytest.approx(s.financing.tax_rate * pre_tax, rel=1e-9, abs=1e-6)


@given(
    price=st.floats(0.05, 3.0),
    tax_rate=st.floats(0.0, 0.4),
    life=st.sampled_from([1.0, 2.0, 3.0]),
    tax_method=st.sampled_from(["book", "macrs", "bonus"]),
    debt_share=st.floats(0.0, 0.8),
    sale=st.sampled_from([None, 0.0, 0.3]),
    horizon=st.integers(6, 40),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_tax_expense_is_rate_times_book_income(
    price, tax_rate, life, tax_method, debt_share, sale, horizon
):
    changes = {
        "horizon_months": horizon,
        "depreciation.life_years": life,
        "market.price_usd_per_mtok": price,
        "financing.tax_rate": tax_rate,
        "financing.debt_share": debt_share,
        "depreciation.sale_value_share": sale,
        "fleet.retire_month": min(horizon, 18),
    }
    if tax_method == "macrs":
        changes["depreciation.tax"] = {"method": "macrs_gds", "recovery_years": 5}
    elif tax_method == "bonus":
        changes["depreciation.tax"] = {"method": "macrs_gds", "recovery_years": 5, "bonus_share": 1}
    m = project(scenario(**changes)).monthly
    expense, pre_tax = _annual_tax_expense(m)
    assert expense == pytest.approx(tax_rate * pre_tax, rel=1e-9, abs=1e-6)


def test_deferred_tax_liability_at_year_ends_reference():
    # Year 1: book income 100, taxable -200 (tax depreciation ahead); year 2: book 100, taxable 250.
    book = np.zeros((1, 25))
    taxable = np.zeros((1, 25))
    book[0, 12], taxable[0, 12] = 100.0, -200.0
    book[0, 24], taxable[0, 24] = 100.0, 250.0
    current, deferred = deferred_tax_with_losses(book, taxable, [0.25], [24])
    # TD: 300 then 150; NOL: 200 then 0. DTL = 0.25 (TD - NOL) = 25, then 37.5.
    assert deferred.liability_usd[0, 12] == pytest.approx(25.0)
    assert deferred.liability_usd[0, 24] == pytest.approx(37.5)
    assert current[0, :13].sum() == pytest.approx(0.0)  # no tax due on a loss year
    assert current[0, 13:].sum() == pytest.approx(0.25 * 50)  # 250 less the 200 carried
    assert (current + deferred.expense_usd)[0].sum() == pytest.approx(0.25 * 200)


def test_valuation_allowance_beyond_reversing_liabilities():
    # Losses with no taxable temporary difference to absorb them: a full allowance, so no
    # deferred tax asset and no deferred benefit (the pre-issue-16 figures for such a case).
    book = np.array([[0.0, -100.0, -100.0]])
    current, deferred = deferred_tax_with_losses(book, book, [0.21], [2], allowance=1)
    assert deferred.expense_usd.sum() == 0 and deferred.liability_usd[0, -1] == 0
    _, recognized = deferred_tax_with_losses(book, book, [0.21], [2], allowance=0)
    assert recognized.liability_usd[0, -1] == pytest.approx(-0.21 * 200)
    # A liability of 30 (tax depreciation 142.86 ahead of book) supports 30 of the asset of
    # 0.21 x 342.86 = 72: the allowance is 42 and the net liability 0.
    taxable = book - np.array([[0.0, 0.0, 142.857142857142857]])
    _, partly = deferred_tax_with_losses(book, taxable, [0.21], [2], allowance=1)
    assert partly.liability_usd[0, -1] == pytest.approx(0.0, abs=1e-9)


def test_engine_valuation_allowance_option():
    losing = {"market.price_usd_per_mtok": 0.2, "financing.tax_rate": 0.25}
    none = project(scenario(**losing)).monthly.loc["small"]
    full = project(
        scenario(**losing, **{"financing.tax_valuation_allowance": "beyond_reversing_liabilities"})
    ).monthly.loc["small"]
    assert full.deferred_tax_usd.abs().sum() == 0  # no temporary differences support the asset
    assert none.deferred_tax_liability_usd.iloc[-1] < 0  # the asset, recognized by default


# --- float residues -------------------------------------------------------------------------


def test_snap_to_zero():
    x = np.array([2.8e-9, -3e-8, 0.004999, -0.005, 0.01, 1e6])
    assert snap_to_zero(x).tolist() == [0.0, 0.0, 0.0, -0.005, 0.01, 1e6]
    assert HALF_CENT_USD == 0.005


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_no_float_residues_in_money_lines(path):
    # Before: a disposal of 2.8e-9 USD on fully depreciated GPUs, interest of 5e-10 USD every
    # month after a loan was repaid. Money lines are now exactly 0 or at least half a cent.
    m = project(load_scenario(path)).monthly
    for column in (
        "disposal_usd",
        "interest_usd",
        "cash_interest_usd",
        "debt_balance_usd",
        "deferred_tax_liability_usd",
    ):
        values = m[column].to_numpy(dtype=float)
        assert not np.any((values != 0) & (np.abs(values) < HALF_CENT_USD)), column


# --- SG&A ------------------------------------------------------------------------------------


def test_sga_share_of_revenue():
    assert sga_usd_per_month([[100.0, 250.0]], [0.08]).tolist() == [[8.0, 20.0]]
    base = project(scenario()).monthly.loc["small"]
    with_sga = project(scenario(**{"opex.sga_share_of_revenue": 0.08})).monthly.loc["small"]
    assert (with_sga.opex_usd - base.opex_usd).to_numpy() == pytest.approx(
        0.08 * base.revenue_usd.to_numpy(), rel=1e-12
    )


def test_breakeven_price_holds_with_sga():
    s = scenario(**{"opex.sga_share_of_revenue": 0.1})
    price = project(s).summary.breakeven_price_usd_per_mtok.iloc[0]
    at_breakeven = scenario(
        **{"opex.sga_share_of_revenue": 0.1, "market.price_usd_per_mtok": price}
    )
    assert project(at_breakeven).summary.npv_usd.iloc[0] == pytest.approx(0.0, abs=1e-6)
