"""A construction period (issue 16 §4): capex paid by a schedule, service from
fleet.service_start_month, the loan's interest of those months capitalized into the GPUs' cost and
counted once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import cli, project
from econ.construction import construction_loan, payment_schedule_usd
from econ.scenario import apply_overrides, validate_dict
from tests.test_engine import SMALL

RATE_ANNUAL = 0.12  # nominal: 1% a month


def scenario(**changes):
    return validate_dict(apply_overrides(SMALL, changes))


def built(start=4, payments=None, debt_share=0.6, term=12, horizon=24, **more):
    changes = {
        "horizon_months": horizon,
        "depreciation.life_years": 1.0,
        "fleet.service_start_month": start,
        "financing.debt_share": debt_share,
        "financing.debt_rate_annual": RATE_ANNUAL,
        "financing.debt_term_months": term,
        **more,
    }
    if payments is not None:
        changes["capex.payments"] = [{"month": m, "share": s} for m, s in payments]
    return scenario(**changes)


def test_capitalized_interest_closed_form():
    # A loan D drawn in month 0 at r a month, service from month s: the k = s - 1 construction
    # months capitalize D ((1+r)^k - 1) (ASC 835-20-30-2: interest on accumulated expenditures).
    d, r, s = 6000.0, 0.01, 7
    loan = construction_loan(np.r_[d, np.zeros(24)][None, :], [r], [s], [12], [24])
    k = s - 1
    assert loan.capitalized_total_usd[0] == pytest.approx(d * ((1 + r) ** k - 1), rel=1e-12)
    assert loan.balance_usd[0, s - 1] == pytest.approx(d * (1 + r) ** k, rel=1e-12)
    assert loan.interest_usd[0, :s].sum() == 0  # no interest expense while building
    # From month s: level payments of PMT(r, 12, B) on the balance then owed.
    owed = d * (1 + r) ** k
    payment = owed * r / (1 - (1 + r) ** -12)
    service = loan.interest_usd[0, s : s + 12] + loan.principal_usd[0, s : s + 12]
    assert service == pytest.approx(np.full(12, payment), rel=1e-12)


@given(
    draws=st.lists(st.floats(0.0, 1e6), min_size=1, max_size=8),
    rate=st.floats(0.0, 0.03),
    extra=st.integers(1, 6),
)
@settings(max_examples=100, deadline=None)
def test_capitalized_interest_of_several_draws(draws, rate, extra):
    # Each draw d_j capitalizes d_j ((1+r)^(s-1-j) - 1); the principal repaid is what was drawn
    # plus what was capitalized (the interest is counted once, as principal, never as expense).
    s = len(draws) + extra - 1
    s = max(s, len(draws))
    months = s + 30
    schedule = np.zeros((1, months + 1))
    schedule[0, : len(draws)] = draws
    loan = construction_loan(schedule, [rate], [s], [24], [months])
    expected = sum(d * ((1 + rate) ** (s - 1 - j) - 1) for j, d in enumerate(draws))
    assert loan.capitalized_total_usd[0] == pytest.approx(expected, rel=1e-9, abs=1e-6)
    assert loan.principal_usd.sum() == pytest.approx(
        sum(draws) + loan.capitalized_total_usd[0], rel=1e-9, abs=1e-6
    )
    assert loan.balance_usd[0, -1] == 0


def test_payment_schedule():
    paid = payment_schedule_usd(
        [1000.0], [2], np.array([[0.0, 3.0, 5.0]]), np.array([[0.1, 0.3, 0.6]]), 10
    )
    assert paid[0].tolist() == [0, 0, 100, 0, 0, 300, 0, 600, 0, 0]


def test_engine_capitalizes_construction_interest_once():
    s = built(start=7)
    m = project(s).monthly.loc["small"]
    debt = 0.6 * 10000.0
    k = 7 - 1
    capitalized = debt * ((1 + RATE_ANNUAL / 12) ** k - 1)
    assert m.capitalized_interest_usd.sum() == pytest.approx(capitalized, rel=1e-12)
    # Depreciated with the GPUs, from the service start: cost + capitalized interest.
    assert m.depreciation_usd.iloc[:7].sum() == 0
    assert m.depreciation_usd.sum() == pytest.approx(10000.0 + capitalized, rel=1e-12)
    # Not interest expense while building; repaid once as principal.
    assert m.interest_usd.iloc[:7].sum() == 0
    assert m.principal_usd.sum() == pytest.approx(debt + capitalized, rel=1e-12)
    assert m.gpus_in_service.iloc[:7].sum() == 0 and m.gpus_in_service.iloc[7] == 1
    assert m.tokens.iloc[:7].sum() == 0


def test_equity_and_debt_draws_follow_the_payments():
    s = built(start=5, payments=[(0, 0.1), (2, 0.3), (4, 0.6)])
    m = project(s).monthly.loc["small"]
    assert m.capex_usd.iloc[:5].tolist() == [1000.0, 0.0, 3000.0, 0.0, 6000.0]
    # Equity pays its 40% of each payment; the loan the rest (nothing is paid on it yet).
    assert m.cash_flow_equity_usd.iloc[:5].tolist() == pytest.approx(
        [-400.0, 0.0, -1200.0, 0.0, -2400.0]
    )
    r = RATE_ANNUAL / 12
    capitalized = 600 * ((1 + r) ** 4 - 1) + 1800 * ((1 + r) ** 2 - 1)
    assert m.capitalized_interest_usd.sum() == pytest.approx(capitalized, rel=1e-12)
    summary = project(s).summary.iloc[0]
    assert summary.capex_usd_total == pytest.approx(10000.0)
    assert summary.debt_usd == pytest.approx(6000.0)


def test_sale_value_share_prices_the_capex_not_the_capitalized_interest():
    # A credit review (fix-construction-28): the sale at depreciation.sale_value_share of cost
    # took the cost with the construction interest capitalized into it, so the cash the GPUs
    # fetch rose with the loan's rate. Ledger: 6,000 drawn in month 0 at 1% a month, service
    # from month 4: 6,000 (1.01^3 - 1) = 181.8060 capitalized; sold at the end of month 12 at
    # 50% of the 10,000 paid = 5,000 (the old code: 50% of 10,181.806 = 5,090.903). The book
    # value then: 10,181.806 less 9 of 12 months' straight line = 2,545.4515, a gain of
    # 5,000 - 2,545.4515 = 2,454.5485.
    m = project(
        built(**{"fleet.retire_month": 12, "depreciation.sale_value_share": 0.5})
    ).monthly.loc["small"]
    capitalized = 6000.0 * (1.01**3 - 1)
    assert m.capitalized_interest_usd.sum() == pytest.approx(181.806, abs=1e-9)
    assert m.disposal_usd.iloc[12] == pytest.approx(5000.0, abs=1e-9)
    book = (10000.0 + capitalized) * 3 / 12
    assert m.gain_on_disposal_usd.iloc[12] == pytest.approx(5000.0 - book, abs=1e-9)
    assert 5000.0 - book == pytest.approx(2454.5485, abs=1e-9)
    # The same cash at any loan rate (before: 5,090.90 at 12% and 5,045.25 at 6%).
    other = built(
        **{
            "fleet.retire_month": 12,
            "depreciation.sale_value_share": 0.5,
            "financing.debt_rate_annual": 0.06,
        }
    )
    assert project(other).monthly.loc["small"].disposal_usd.iloc[12] == pytest.approx(5000.0)


def test_construction_loan_kept_in_a_batch_with_a_capital_stack_or_vintages():
    # A credit review (fix-construction-28): projected with a scenario that has tranches or
    # vintages, a construction scenario lost its construction loan (interest paid from month 1,
    # none capitalized, the capex alone depreciated); on the ready-made files its equity NPV
    # went from -382,433.76 alone to -383,215.61 beside the capital-stack scenario. Ledger:
    # 6,000 drawn in month 0 at 1% a month, service from month 4: 6,000 (1.01^3 - 1) = 181.806
    # capitalized in months 1-3, then owed 6,181.806, no interest expense before month 4.
    notes = {
        "name": "notes",
        "financing.debt_share": 0.0,
        "financing.tranches": [
            {
                "type": "senior_notes",
                "name": "n",
                "share_of_capex": 0.2,
                "coupon_annual": 0.09,
                "maturity_month": 24,
            }
        ],
        "horizon_months": 24,
    }
    vintages = {
        "name": "vintages",
        "horizon_months": 24,
        "vintages": [{"name": "later", "fleet": {"purchase_month": 6}}],
    }
    alone = project(built()).summary.iloc[0]
    for other in (notes, vintages):
        result = project([scenario(**other), built(), scenario(**{**other, "name": "again"})])
        m = result.monthly.loc["small"]
        assert m.capitalized_interest_usd.sum() == pytest.approx(181.806, abs=1e-9)
        assert m.interest_usd.iloc[:4].sum() == 0
        assert m.debt_balance_usd.iloc[3] == pytest.approx(6181.806, abs=1e-9)
        assert m.depreciation_usd.sum() == pytest.approx(10181.806, abs=1e-9)
        s = result.summary.loc["small"]
        assert s.npv_equity_usd == pytest.approx(alone.npv_equity_usd, rel=1e-12)
        assert s.npv_usd == pytest.approx(alone.npv_usd, rel=1e-12)
        assert result.summary.index.tolist() == [other["name"], "small", "again"]


def test_construction_projected_apart_from_a_scenario_that_sizes_its_debt():
    # `econ project built.toml deepseek-r1-gb200-nvl72.toml` (the seed sizes its debt to a
    # DSCR) was refused: "not available in a batch with a scenario whose capex is paid after
    # month 0 ... project it apart". econ now projects them apart itself; the figures are
    # those of each alone (the construction ledger as in the test above: 181.806 capitalized).
    sized = scenario(
        **{
            "name": "sized",
            "horizon_months": 24,
            "financing.debt_share": 0.6,
            "financing.size_to_min_dscr": 1.3,
        }
    )
    later = scenario(
        **{
            "name": "later",
            "horizon_months": 24,
            "fleet.purchase_month": 2,
            "financing.debt_share": 0.6,
        }
    )
    result = project([sized, built(), later, scenario(**{**SIZED_AGAIN, "name": "again"})])
    assert result.summary.index.tolist() == ["sized", "small", "later", "again"]
    m = result.monthly.loc["small"]
    assert m.capitalized_interest_usd.sum() == pytest.approx(181.806, abs=1e-9)
    for one in (sized, built(), later):
        alone = project(one).summary.iloc[0]
        together = result.summary.loc[one.name]
        assert together.npv_equity_usd == pytest.approx(alone.npv_equity_usd, rel=1e-12)
        assert together.debt_usd == pytest.approx(alone.debt_usd, rel=1e-12)


SIZED_AGAIN = {"horizon_months": 24, "financing.debt_share": 0.6, "financing.max_ltv": 0.5}


def test_default_service_start_is_the_month_after_purchase():
    default = project(scenario(**{"fleet.purchase_month": 2, "horizon_months": 24}))
    explicit = project(
        scenario(
            **{"fleet.purchase_month": 2, "fleet.service_start_month": 3, "horizon_months": 24}
        )
    )
    assert default.summary.npv_usd.iloc[0] == explicit.summary.npv_usd.iloc[0]


def test_equity_only_construction():
    m = project(built(start=4, debt_share=0.0)).monthly.loc["small"]
    assert m.capitalized_interest_usd.sum() == 0
    assert m.depreciation_usd.sum() == pytest.approx(10000.0)
    assert m.contract_revenue_usd.iloc[:4].sum() + m.token_revenue_usd.iloc[:4].sum() == 0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"capex.payments": [{"month": 0, "share": 0.5}, {"month": 1, "share": 0.4}],
             "fleet.service_start_month": 3},
            "capex.payments shares sum to 0.9; expected 1",
        ),
        (
            {"capex.payments": [{"month": 2, "share": 0.5}, {"month": 1, "share": 0.5}],
             "fleet.service_start_month": 4},
            "expected strictly increasing months",
        ),
        (
            {"capex.payments": [{"month": 0, "share": 0.5}, {"month": 3, "share": 0.5}],
             "fleet.service_start_month": 3},
            "a payment 3 months after fleet.purchase_month (0), in or after the service start",
        ),
        ({"fleet.service_start_month": 13}, "fleet.service_start_month is 13"),
        (
            {"fleet.purchase_month": 4, "fleet.service_start_month": 4},
            "expected a month after the purchase month (4)",
        ),
        (
            {"fleet.service_start_month": 3, "financing.debt_share": 0.0,
             "financing.tranches": [{"type": "equity", "name": "sponsor"}]},
            "a construction period (fleet.service_start_month or capex.payments) is given with "
            "financing.tranches",
        ),
    ],
)  # fmt: skip
def test_bad_construction_inputs_are_named(changes, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scenario(**changes)


def test_cli_rejects_a_schedule_that_does_not_sum_to_one(tmp_path, capsys):
    path = tmp_path / "built.toml"
    path.write_text(
        "[fleet]\nservice_start_month = 3\n[throughput]\ntokens_per_s_per_gpu = 1000.0\n"
        "[capex]\ngpu_price_usd = 10000.0\n"
        "[[capex.payments]]\nmonth = 0\nshare = 0.3\n"
        "[[capex.payments]]\nmonth = 1\nshare = 0.3\n"
        "[market]\nprice_usd_per_mtok = 2.0\n"
    )
    assert cli.main(["validate", str(path)]) == 3
    err = capsys.readouterr().err
    assert "built.toml" in err and "sum to 0.6" in err and "Traceback" not in err


def test_a_batch_of_service_starts_matches_each_scenario():
    # Sweeps override fleet.service_start_month as a batch column: the same figures as one by one.
    from econ import ScenarioBatch

    base = built(start=2)
    starts = np.array([2, 4, 7])
    batch = project(ScenarioBatch.repeat(base, 3, {"fleet.service_start_month": starts}))
    for i, start in enumerate(starts):
        alone = project(built(start=int(start))).summary.iloc[0]
        assert batch.summary.npv_usd.iloc[i] == pytest.approx(alone.npv_usd, rel=1e-12)
        assert batch.summary.net_income_usd_total.iloc[i] == pytest.approx(
            alone.net_income_usd_total, rel=1e-12
        )


def test_ltv_counts_the_capitalized_interest_in_the_book_value():
    m = project(built(start=7)).monthly.loc["small"]
    capitalized = m.capitalized_interest_usd.cumsum()
    book_value = 10000.0 + capitalized - m.depreciation_usd.cumsum()
    month = 9
    assert m.ltv.iloc[month] == pytest.approx(
        m.debt_balance_usd.iloc[month] / book_value.iloc[month], rel=1e-12
    )


def test_tax_expense_is_rate_times_book_income_with_construction():
    s = built(
        start=5,
        payments=[(0, 0.3), (3, 0.7)],
        **{"depreciation.tax": {"method": "macrs_gds", "recovery_years": 5, "bonus_share": 1}},
    )
    m = project(s).monthly
    pre_tax = m.ebitda_usd - m.depreciation_usd - m.interest_usd + m.gain_on_disposal_usd
    year = np.maximum(m.index.get_level_values("month") - 1, 0) // 12
    expense = (m.current_tax_usd + m.deferred_tax_usd).groupby(year).sum().to_numpy()
    assert expense == pytest.approx(0.25 * pre_tax.groupby(year).sum().to_numpy(), abs=1e-6)
    # Tax depreciation (100% bonus) deducts the capitalized interest with the cost.
    assert m.tax_depreciation_usd.sum() == pytest.approx(
        10000.0 + m.capitalized_interest_usd.sum(), rel=1e-12
    )


OWNED_HALL = {
    "facility.mode": "owned",
    "facility.colo_usd_per_kw_month": 0.0,
    "facility.capex_usd_per_mw": 5e6,  # 1 GPU at 1 kW: a 5,000 USD hall, paid in month 0
    "facility.life_years": 20.0,
}


def test_the_owned_hall_is_in_the_construction_loan():
    # An infrastructure review: with a construction period the debt_share loan funded the GPUs
    # alone (60% of the GPUs' capex instead of 60% of GPUs and hall), and its interest ignored
    # the hall. The loan is now drawn on both; the interest on each one's draws is capitalized
    # into that asset's cost (ASC 835-20-30-2) and depreciated over that asset's life.
    gpu, hall, share, s = 10_000.0, 1.0 / 1000 * 5e6, 0.6, 7
    r = RATE_ANNUAL / 12
    result = project(built(start=s, **OWNED_HALL))
    summary, m = result.summary.iloc[0], result.monthly.loc["small"]
    assert summary.debt_usd == pytest.approx(share * (gpu + hall), rel=1e-12)
    no_construction = project(built(start=1, **OWNED_HALL)).summary.iloc[0]
    assert no_construction.debt_usd == pytest.approx(summary.debt_usd, rel=1e-12)
    gpu_interest = share * gpu * ((1 + r) ** (s - 1) - 1)
    hall_interest = share * hall * ((1 + r) ** (s - 1) - 1)
    assert m.capitalized_interest_usd.sum() == pytest.approx(
        gpu_interest + hall_interest, rel=1e-12
    )
    assert m.principal_usd.sum() == pytest.approx(
        share * (gpu + hall) + gpu_interest + hall_interest, rel=1e-12
    )
    # The GPUs (1-year life) and the hall (20 years) depreciate from the first month in service.
    assert m.depreciation_usd.iloc[:s].sum() == 0
    assert m.depreciation_usd.iloc[s] == pytest.approx(
        (gpu + gpu_interest) / 12 + (hall + hall_interest) / 240, rel=1e-12
    )
    # At the horizon (24) the GPUs are written off and the hall counts at its book value.
    assert m.disposal_usd.iloc[24] == pytest.approx(
        (hall + hall_interest) * (1 - (24 - s + 1) / 240), rel=1e-12
    )


def test_the_hall_depreciates_from_the_sites_opening():
    # The hall is placed in service when the site opens (ASC 360-10-35-4): the first month in
    # service by default, or opex.site_open_month. It depreciated from month 1 before.
    hall = 1.0 / 1000 * 5e6
    for changes, opened in (({}, 7), ({"opex.site_open_month": 4}, 4)):
        m = project(built(start=7, debt_share=0.0, **OWNED_HALL, **changes)).monthly.loc["small"]
        assert m.depreciation_usd.iloc[:opened].sum() == 0
        assert m.depreciation_usd.iloc[opened:7].tolist() == pytest.approx(
            [hall / 240] * (7 - opened), rel=1e-12
        )
        assert m.disposal_usd.iloc[24] == pytest.approx(
            hall * (1 - (24 - opened + 1) / 240), rel=1e-12
        )
