"""The lenders' covenants in the engine: a loan-to-value ceiling tested month by month against the
collateral the ltv line shows, and each scenario of a batch tested (and sized) on its own DSCR
window, as it is alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import ScenarioBatch, load_scenario, project
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
GIVEN_LOAN = {  # a level loan of 60% of capex, as given: no sizing moves it
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
    "financing.repayment": "level_payment",
    "financing.debt_share": 0.6,
}


def seed(**overrides):
    return load_scenario(SEED, {**GIVEN_LOAN, **overrides})


def test_an_ltv_ceiling_is_breached_where_the_ltv_line_is_above_it():
    """Only an LTV covenant: the months in breach are exactly the months with debt outstanding
    whose ltv line is above the ceiling; the loan of 60% of capex breaches a 55% ceiling at close."""
    result = project(
        seed(**{"financing.covenants.dscr_floor": "none", "financing.covenants.ltv_ceiling": 0.55})
    )
    monthly = result.monthly
    ltv, owed = monthly["ltv"].to_numpy(), monthly["debt_balance_usd"].to_numpy() > 1e-6
    expected = owed & (ltv > 0.55)
    assert ltv[0] == pytest.approx(0.6, rel=1e-12)  # the loan over its cost at close
    assert monthly["covenant_breach"].to_numpy().astype(bool).tolist() == expected.tolist()
    summary = result.summary.iloc[0]
    assert summary["covenant_breach_months"] == expected.sum() > 0
    assert summary["first_breach_month"] == 0
    assert pd.isna(summary["dscr_headroom"])  # no DSCR covenant, no DSCR headroom
    warning = next(w for w in result.warnings[0] if w.startswith("covenant breached"))
    assert f"loan-to-value above its 55% ceiling in {expected.sum()} months" in warning
    assert "DSCR" not in warning


def test_the_ltv_divides_by_the_gpus_still_held_not_those_sold():
    """Found by a credit review: h200-fleet-gb300-refresh sells its H200s in month 18 at their
    book value (32,614,400 USD then; 33,689,600 since the H200s' networking follows its source);
    month 19's ltv divided by a book value that still held them (0.1555 where the GB300s alone
    gave 0.3055; 0.3051 now)."""
    refresh = load_scenario(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    m = project(refresh).monthly.reset_index()
    sold = m["disposal_usd"].to_numpy() - m["gain_on_disposal_usd"].to_numpy()  # book sold
    assert sold[18] == pytest.approx(33_689_600.0, rel=1e-12)  # 1,024 GPUs x 47,000 x 42/60
    held = (
        m["capex_usd"] + m["capitalized_interest_usd"] - m["depreciation_usd"] - m["impairment_usd"]
    ).cumsum().to_numpy() - np.cumsum(sold)
    balance, ltv = m["debt_balance_usd"].to_numpy(), m["ltv"].to_numpy()
    owed = balance > 1e-6
    np.testing.assert_allclose(ltv[owed], balance[owed] / held[owed], rtol=1e-10)
    assert ltv[19] == pytest.approx(0.3051, abs=5e-5)


def test_held_book_value_is_cost_less_what_is_consumed_and_what_is_sold():
    from econ.depreciation import held_book_value_usd

    # 1,000 bought in month 0, 100 a month consumed; sold in month 3 for 750 (book 700: gain 50)
    capex = np.array([[1000.0, 0, 0, 0, 0]])
    consumed = np.array([[0.0, 100, 100, 100, 0]])
    proceeds = np.array([[0.0, 0, 0, 750, 0]])
    gain = np.array([[0.0, 0, 0, 50, 0]])
    assert held_book_value_usd(capex, consumed, proceeds, gain).tolist() == [
        [1000.0, 900.0, 800.0, 0.0, 0.0]
    ]
    # sold at a loss (proceeds 600, loss 100): the same 700 leaves the books
    book = held_book_value_usd(capex, consumed, proceeds * 0.8, np.where(gain, -100.0, 0.0))
    assert book[0, 3] == 0.0
    # nothing sold: capex less what is consumed, with capitalized interest on top
    none = np.zeros_like(capex)
    assert held_book_value_usd(capex, consumed, none, none, capitalized_usd=capex * 0.1)[
        0
    ].tolist() == [1100.0, 1000.0, 900.0, 800.0, 800.0]


@settings(max_examples=80, deadline=None)
@given(
    cost=st.floats(1.0, 1e9),
    life=st.integers(1, 72),
    sold=st.integers(1, 72),
    price_share=st.floats(0.0, 2.0),
)
def test_held_book_value_is_0_after_the_sale_and_never_negative(cost, life, sold, price_share):
    from econ.depreciation import held_book_value_usd

    months = 80
    capex = np.zeros((1, months))
    capex[0, 0] = cost
    consumed = np.where((np.arange(months) >= 1) & (np.arange(months) <= min(life, sold)), 1, 0)
    consumed = consumed[None, :] * cost / life
    carrying = cost - consumed[0, : sold + 1].sum()
    proceeds, gain = np.zeros((1, months)), np.zeros((1, months))
    proceeds[0, sold] = price_share * cost
    gain[0, sold] = proceeds[0, sold] - carrying
    book = held_book_value_usd(capex, consumed, proceeds, gain)
    assert np.all(book[0, sold:] == 0.0)
    assert np.all(book >= 0.0)
    before = np.cumsum(capex - consumed)[:sold]
    np.testing.assert_allclose(book[0, :sold], before, rtol=1e-12, atol=1e-6)


def test_a_higher_ltv_ceiling_never_breaches_more_months():
    ceilings = np.array([0.3, 0.5, 0.6, 0.7, 0.9, 1.5])
    batch = ScenarioBatch.repeat(
        seed(**{"financing.covenants.ltv_ceiling": 0.5}),
        ceilings.size,
        {"financing.covenants.ltv_ceiling": ceilings},
    )
    months = project(batch, monthly=False).metrics["covenant_breach_months"]
    assert np.all(np.diff(months) <= 0) and months[0] > months[-1]
    # a ceiling the ledger never reaches leaves the DSCR test's breaches alone
    plain = project(seed(), monthly=False).metrics["covenant_breach_months"][0]
    assert months[-1] == plain


def test_each_scenario_is_tested_on_its_own_dscr_window():
    """A sweep over the covenant's test window: each row as it is alone (the chunk used to test
    every row on the longest window)."""
    windows = np.array([1.0, 3.0, 12.0])
    base = seed(**{"market.price_usd_per_mtok": 0.26})
    together = project(
        ScenarioBatch.repeat(base, 3, {"financing.covenants.test_months": windows}), monthly=False
    ).metrics
    for row, window in enumerate(windows):
        alone = project(
            seed(
                **{
                    "market.price_usd_per_mtok": 0.26,
                    "financing.covenants.test_months": int(window),
                }
            ),
            monthly=False,
        )
        for key in ("covenant_breach_months", "first_breach_month", "dscr_headroom"):
            assert together[key][row] == alone.metrics[key][0], (key, window)
    assert together["covenant_breach_months"][0] > together["covenant_breach_months"][2]


def test_each_scenario_sizes_its_loan_on_its_own_dscr_window():
    windows = np.array([1.0, 12.0])
    sized = {"financing.size_to_min_dscr": 1.3, "financing.repayment": "level_payment"}
    together = project(
        ScenarioBatch.repeat(seed(**sized), 2, {"financing.covenants.test_months": windows}),
        monthly=False,
    ).metrics["debt_usd"]
    alone = [
        project(
            seed(**sized, **{"financing.covenants.test_months": int(w)}), monthly=False
        ).metrics["debt_usd"][0]
        for w in windows
    ]
    np.testing.assert_array_equal(together, alone)


def test_months_of_headroom_count_to_the_dscr_tests_own_breach():
    """An LTV breach at close does not end the DSCR covenant's headroom: months_of_headroom
    counts the months of debt service before the DSCR test first fails, with or without it."""
    dscr_only = project(seed(**{"market.price_usd_per_mtok": 0.26}), monthly=False).metrics
    both = project(
        seed(**{"market.price_usd_per_mtok": 0.26, "financing.covenants.ltv_ceiling": 0.55}),
        monthly=False,
    ).metrics
    assert both["first_breach_month"][0] == 0 < dscr_only["first_breach_month"][0]
    assert both["months_of_headroom"][0] == dscr_only["months_of_headroom"][0] > 0
    assert both["covenant_breach_months"][0] > dscr_only["covenant_breach_months"][0]


def test_a_loan_outliving_its_collateral_breaches_any_ltv_ceiling():
    """Book life 3 years, loan 5: from month 36 the GPUs are worth nothing on the books while
    debt is outstanding. The ltv line is undefined there (NaN), and every such month breaches
    even a 100% ceiling: a lender reads the loan as unsecured."""
    result = project(
        seed(
            **{
                "depreciation.life_years": 3,
                "financing.covenants.dscr_floor": "none",
                "financing.covenants.ltv_ceiling": 1.0,
            }
        )
    )
    monthly = result.monthly
    ltv, owed = monthly["ltv"].to_numpy(), monthly["debt_balance_usd"].to_numpy() > 1e-6
    unsecured = owed & np.isnan(ltv)
    assert unsecured[37:60].all()  # book value 0 from month 36, debt to month 60
    expected = unsecured | (owed & (ltv > 1.0))
    assert monthly["covenant_breach"].to_numpy().astype(bool).tolist() == expected.tolist()
    assert result.summary.iloc[0]["covenant_breach_months"] == expected.sum()


def test_a_sweep_compares_a_covenant_with_none():
    """ "none" in a grid is the covenant turned off, as `--set ...=none` is."""
    from econ.analysis.sweeps import sweep

    base = seed(**{"market.price_usd_per_mtok": 0.26})
    rows = sweep(base, grid={"financing.covenants.dscr_floor": [1.2, "none"]}).rows
    for row, value in enumerate([1.2, "none"]):
        alone = project(
            seed(**{"market.price_usd_per_mtok": 0.26, "financing.covenants.dscr_floor": value}),
            monthly=False,
        )
        assert (
            rows["covenant_breach_months"].iloc[row] == alone.metrics["covenant_breach_months"][0]
        )
    assert rows["covenant_breach_months"].iloc[0] > 0 == rows["covenant_breach_months"].iloc[1]


def test_a_sale_with_debt_outstanding_is_said_with_its_figures():
    """The refresh scenario sells its H200s in month 18 while its loans run on: the warning gives
    the month, the proceeds and the debt from the monthly lines; the seed, sold at the horizon
    with its loan repaid, has none."""
    refresh = project(
        load_scenario(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    )
    month = refresh.monthly.xs(18, level="month").iloc[0]
    said = [w for w in refresh.warnings[0] if w.startswith("GPUs are sold with debt outstanding")]
    assert said == [
        f"GPUs are sold with debt outstanding in 1 month, first in month 18 "
        f"({month['disposal_usd']:,.0f} USD of proceeds, {month['debt_balance_usd']:,.0f} USD of "
        "debt): the loan is not prepaid from the proceeds, which go to the cash flows, and from "
        "then the ltv line and an LTV covenant count only the GPUs still held as collateral"
    ]
    assert not any("sold with debt" in w for w in project(load_scenario(SEED)).warnings[0])


def test_a_stack_that_lends_more_than_the_capex_is_said():
    """Tranche amounts are not cut to the capex as the term loan is: a stack raising more debt
    than the GPUs cost is projected, and a warning gives the loan-to-cost."""
    from econ.scenario import scenario_to_dict, validate_dict

    stack = load_scenario(
        ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    )
    data = scenario_to_dict(stack)
    first = data["financing"]["tranches"][0]
    first.pop("share_of_capex", None)
    first["amount_usd"] = 9e6
    result = project(validate_dict(data), monthly=False)
    debt, capex = result.metrics["debt_usd"][0], result.metrics["capex_usd_total"][0]
    assert debt > capex
    assert (
        f"the debt raised, {debt:,.0f} USD, is more than the capex of {capex:,.0f} USD "
        f"({debt / capex:.0%} loan-to-cost)"
    ) in " ".join(result.warnings[0])
    assert not any("debt raised" in w for w in project(stack, monthly=False).warnings[0])


def test_no_covenant_test_before_the_first_test_date():
    """financing.covenants.first_test_month: the DSCR (and LLCR) covenant is tested from that
    month on, as a facility's first test date; earlier months are no breach, later ones the same
    as without it (the loan given, so the debt does not move)."""
    low = {"market.price_usd_per_mtok": 0.2}  # breaches the DSCR covenant from early on
    plain = project(seed(**low)).monthly["covenant_breach"].to_numpy().astype(bool)
    assert plain[:24].any() and plain[24:].any()
    later = project(seed(**low, **{"financing.covenants.first_test_month": 24}))
    breach = later.monthly["covenant_breach"].to_numpy().astype(bool)
    assert not breach[:24].any()
    assert breach[24:].tolist() == plain[24:].tolist()
    summary = later.summary.iloc[0]
    assert summary["covenant_breach_months"] == plain[24:].sum()
    assert summary["first_breach_month"] == 24 + np.argmax(plain[24:])
    # an LTV covenant is tested from the first month whatever the first test date
    ltv = seed(
        **{
            "financing.covenants.dscr_floor": "none",
            "financing.covenants.ltv_ceiling": 0.55,
            "financing.covenants.first_test_month": 24,
        }
    )
    assert project(ltv).summary.iloc[0]["first_breach_month"] == 0


def test_coverage_ratios_leave_months_before_the_first_test_untested():
    from econ.capital import coverage_ratios

    cfads = np.array([[0.0, 50.0, 150.0, 150.0, 150.0, 150.0]] * 2)
    service = np.array([[0.0, 100.0, 100.0, 100.0, 100.0, 100.0]] * 2)
    balance = np.array([[400.0, 300.0, 200.0, 100.0, 0.0, 0.0]] * 2)
    out = coverage_ratios(
        cfads, service, balance, 0.0, dscr_floor=1.2, first_test_month=np.array([np.nan, 2.0])
    )
    assert out["dscr_breach"][0].tolist() == [False, True, False, False, False, False]
    assert not out["dscr_breach"][1].any()  # month 1's 0.5x comes before the first test
    assert out["min_dscr_test"].tolist() == [0.5, 1.5]
    assert out["min_dscr"].tolist() == [0.5, 0.5]  # the monthly DSCR itself is every month's


@settings(max_examples=40, deadline=None)
@given(first=st.integers(1, 30), window=st.integers(1, 12), seed_=st.integers(0, 2**31))
def test_a_later_first_test_never_sizes_less_debt(first, window, seed_):
    from econ.financing import size_debt

    rng = np.random.default_rng(seed_)
    cfads = rng.uniform(-50.0, 200.0, (3, 40))
    service = np.where(np.arange(40) >= 1, 1.0 / 39, 0.0)[None, :].repeat(3, axis=0)
    balance = np.clip(1.0 - np.arange(40) / 39, 0.0, None)[None, :].repeat(3, axis=0)
    args = (cfads, service, balance, np.full(3, 1.3), np.full(3, 1e6), window)
    always, _ = size_debt(*args)
    later, _ = size_debt(*args, first_test_month=np.full(3, float(first)))
    assert np.all(later >= always)
    same, _ = size_debt(*args, first_test_month=np.full(3, np.nan))
    assert same.tolist() == always.tolist()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0 is below 1; expected a whole number from 1 to 600"),
        (-12, "-12 is below 1; expected a whole number from 1 to 600"),
        (601, "601 is above 600; expected a whole number from 1 to 600"),
        (12.5, "12.5 is not a whole number; expected a whole number from 1 to 600"),
        ("12", "a number written as text"),
    ],
)
def test_a_bad_first_test_month_is_refused_naming_the_field(value, expected, tmp_path, capsys):
    import tomli_w

    from econ.cli import main
    from econ.scenario import read_toml

    data = read_toml(SEED)
    data["financing"].setdefault("covenants", {})["first_test_month"] = value
    path = tmp_path / "bad.toml"
    path.write_text(tomli_w.dumps(data))
    assert main(["validate", str(path)]) == 3
    err = capsys.readouterr().err
    assert "financing.covenants.first_test_month" in err and expected in err
    assert "Traceback" not in err


STACK = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"


def _tested_by_hand(monthly: pd.DataFrame, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The months a trailing-window DSCR covenant tests and the ratio there, from the monthly
    lines alone (pandas rolling sums): each month of the loan's life (debt service in it, or
    debt owed at its start) whose window holds debt service."""
    cfads = monthly["ebitda_usd"] - monthly["tax_usd"]
    service = monthly["debt_service_usd"]
    opening = monthly["debt_balance_usd"].shift(1, fill_value=0.0)
    held = service.rolling(window, min_periods=1).sum()
    tested = (held > 1e-6) & ((service > 1e-6) | (opening > 1e-6))
    ratio = cfads.rolling(window, min_periods=1).sum() / held
    return tested.to_numpy(), ratio.to_numpy()


def test_notes_are_tested_between_their_coupons():
    """Found by a lender's review: the capital stack's notes pay coupons every six months, and
    the 12-month DSCR below 1.20x in every month from 40 to 72 was a breach only in the months
    with a coupon (23 months: 40-60, 66, 72). A trailing window is a ratio in every month of
    the loan's life whose window holds debt service: each such month below the floor is a
    breach, whenever the coupons fall."""
    result = project(load_scenario(STACK))
    monthly = result.monthly.reset_index()
    tested, ratio = _tested_by_hand(monthly, 12)
    expected = tested & (ratio < 1.2)
    breach = monthly["covenant_breach"].to_numpy().astype(bool)
    assert breach.tolist() == expected.tolist()
    months = monthly["month"].to_numpy()
    no_coupon = monthly["debt_service_usd"].to_numpy() <= 1e-6
    assert (breach & no_coupon).any()  # (months 61-65 and 67-71)
    summary = result.summary.iloc[0]
    assert summary["covenant_breach_months"] == expected.sum() > 23
    assert summary["first_breach_month"] == months[expected][0]
    assert summary["months_of_headroom"] == (tested & (months < months[expected][0])).sum()
    assert summary["dscr_headroom"] == pytest.approx(np.nanmin(ratio[tested]) - 1.2, rel=1e-12)


def test_coverage_ratios_test_each_month_of_the_loan_whose_window_holds_service():
    """Semi-annual coupons of 6 on 100 drawn in month 0, repaid with the coupon of month 12: a
    6-month window is tested from month 6 (the first window with a coupon) to month 12; months
    1-5 hold no coupon in their window, and month 13 comes after the loan is repaid, though its
    window still holds month 12's coupon. A one-month window tests the coupon months only."""
    from econ.capital import coverage_ratios

    T = 16
    service = np.zeros((1, T))
    service[0, [6, 12]] = 6.0
    balance = np.where(np.arange(T) < 12, 100.0, 0.0)[None, :]
    cfads = np.full((1, T), 1.5)  # 9 a window against 6 of service: 1.5x
    out = coverage_ratios(cfads, service, balance, 0.0, dscr_floor=1.6, test_months=6)
    assert np.flatnonzero(out["dscr_tested"][0]).tolist() == list(range(6, 13))
    assert np.flatnonzero(out["dscr_breach"][0]).tolist() == list(range(6, 13))
    np.testing.assert_allclose(out["dscr_test"][0, 6:13], 1.5)
    assert out["last_dscr_month"][0] == 12 and out["last_llcr_month"][0] == 11
    monthly = coverage_ratios(cfads, service, balance, 0.0, dscr_floor=1.6, test_months=1)
    assert np.flatnonzero(monthly["dscr_breach"][0]).tolist() == [6, 12]


def test_notes_are_sized_to_the_windows_between_their_coupons():
    """Coupons of 5% of the amount in months 6 and 12, a 6-month covenant at 1.25x: the cash
    flow dips in months 7-9, between the coupons. The window ending in month 9 (months 4-9)
    holds 10 + 10 + 100 - 30 - 30 - 30 = 30 USD against the month-6 coupon, so the notes can be
    at most 30 / (1.25 x 0.05) = 480 USD; sized on the coupon months' windows alone they were
    1,600 (month 6's own 100 / (1.25 x 0.05))."""
    from econ.financing import size_debt

    cfads = np.array([[0.0, 10, 10, 10, 10, 10, 100, -30, -30, -30, 50, 50, 100]])
    m = np.arange(13)
    service = np.where(np.isin(m, [6, 12]), 0.05, 0.0)[None, :]
    balance = np.where(m < 12, 1.0, 0.0)[None, :]  # (the bullet in month 12 is no service)
    debt, code = size_debt(cfads, service, balance, np.array([1.25]), np.array([1e6]), 6)
    assert debt[0] == pytest.approx(30 / (1.25 * 0.05), rel=1e-12) and code[0] == 2


@settings(max_examples=40, deadline=None)
@given(
    seed_=st.integers(0, 2**31),
    window=st.sampled_from([1, 3, 6, 12]),
    target=st.floats(1.05, 2.0),
)
def test_a_loan_sized_to_a_dscr_is_not_in_breach_of_it(seed_, window, target):
    """Sizing and testing follow one rule (econ.financing.covenant_test_months): notes with
    semi-annual coupons sized to a DSCR target pass a covenant at that floor in every month
    tested, between coupons too; any larger amount breaches it, or the monthly DSCR the sizing
    also holds at the target in each month with service."""
    from econ.capital import coverage_ratios
    from econ.financing import size_debt

    rng = np.random.default_rng(seed_)
    T = 49
    cfads = rng.uniform(-2e5, 1e6, (1, T)) * np.linspace(1.0, 0.2, T)  # [USD]
    m = np.arange(T)
    service = np.where((m > 0) & (m % 6 == 0), 0.045, 0.0)[None, :]  # 9% a year, per USD
    balance = np.where(m < 48, 1.0, 0.0)[None, :]  # the bullet at 48 is no debt service
    debt, code = size_debt(cfads, service, balance, np.array([target]), np.array([1e9]), window)

    def breaches(amount, floor):
        lines = (amount * service, amount * balance)
        out = coverage_ratios(cfads, *lines, 0.0, dscr_floor=floor, test_months=window)
        return out["dscr_breach"].any(), (out["dscr"] < floor[0]).any()

    assert breaches(debt[0], np.array([target * (1 - 1e-9)])) == (False, False)
    if debt[0] > 0 and code[0] == 2:  # (sized by the DSCR: a larger loan breaches)
        assert any(breaches(debt[0] * 1.001, np.array([target])))


def test_the_service_s_trailing_sums_are_computed_once_for_the_test_and_the_ratios(monkeypatch):
    """The covenant's tested months and its window ratio read one trailing sum of the service
    (it was summed twice: in covenant_test_months and again beside it), with the same months
    and ratios as the sum computed inside."""
    from econ import arrays, capital, financing

    sums = []

    def counted(x, windows):
        sums.append(np.asarray(x).shape)
        return arrays.trailing_sum_rows(x, windows)

    rng = np.random.default_rng(7)
    cfads = rng.uniform(-2e5, 1e6, (2, 49))
    service = np.where(np.arange(49) % 6 == 0, 0.045, 0.0)[None, :].repeat(2, axis=0)
    balance = np.where(np.arange(49) < 48, 1.0, 0.0)[None, :].repeat(2, axis=0)
    window = np.array([12, 3])
    tested = financing.covenant_test_months(service, balance, window)
    given = financing.covenant_test_months(
        service, balance, window, window_service_usd=arrays.trailing_sum_rows(service, window)
    )
    assert (tested == given).all() and tested.any() and not tested.all()
    for module in (capital, financing):
        monkeypatch.setattr(module, "trailing_sum_rows", counted)
    financing.size_debt(cfads, service, balance, np.array([1.3, 1.3]), np.array([1e9, 1e9]), window)
    assert len(sums) == 2  # CFADS and service, once each
    sums.clear()
    capital.coverage_ratios(cfads, 1e6 * service, 1e6 * balance, 0.0, test_months=window)
    assert len(sums) == 2


def test_a_first_test_after_the_horizon_is_said_and_measures_nothing():
    """Found by a lender's review: first_test_month = 73 (or 600) on the 72-month capital stack
    switched the DSCR covenant off in silence: no breach, "no covenant is breached", the DSCR
    headroom null for want of "debt service or a DSCR covenant", and 62 months of headroom,
    though no month was tested."""
    for first in (73, 600):
        result = project(load_scenario(STACK, {"financing.covenants.first_test_month": first}))
        summary = result.summary.iloc[0]
        assert summary["covenant_breach_months"] == 0
        for key in ("first_breach_month", "dscr_headroom", "months_of_headroom"):
            assert pd.isna(summary[key]), key
        warnings = result.warnings[0]
        said = [w for w in warnings if w.startswith("financing.covenants.first_test_month")]
        assert said == [
            f"financing.covenants.first_test_month is {first}, after month 72, the last month "
            "with debt service or debt outstanding to test (the projection ends in month 72): "
            "the DSCR covenant is never tested, so covenant_breach_months and first_breach_month "
            "count none of its breaches, and dscr_headroom and months_of_headroom are null; "
            "expected a first test month within the loan's life (at most month 72)"
        ]
        assert not any("no covenant is breached" in w for w in warnings)
        assert not any("no debt service or no DSCR covenant" in w for w in warnings)


def test_a_first_test_after_the_last_month_with_debt_service_is_said():
    """The seed's loan is repaid in month 60 of 72: a first test in month 61 tests nothing, and
    the warning names month 60; with an LLCR floor too, both covenants are named."""
    plain = project(seed()).monthly.reset_index()
    last = int(plain["month"][plain["debt_service_usd"] > 1e-6].max())
    result = project(seed(**{"financing.covenants.first_test_month": last + 1}))
    said = [w for w in result.warnings[0] if "first_test_month" in w]
    assert len(said) == 1 and f"after month {last}, the last month" in said[0]
    assert "ends in month 72" in said[0] and "the DSCR covenant is never tested" in said[0]
    both = project(
        seed(
            **{
                "financing.covenants.first_test_month": last + 1,
                "financing.covenants.llcr_floor": 1.1,
            }
        )
    )
    said = [w for w in both.warnings[0] if "first_test_month" in w]
    assert "the DSCR and LLCR covenants are never tested" in said[0]
    # tested in its last month: no warning
    once = project(seed(**{"financing.covenants.first_test_month": last}))
    assert not any("first_test_month" in w for w in once.warnings[0])
    assert once.summary.iloc[0]["months_of_headroom"] in (0, 1)


def test_months_before_the_first_test_are_no_headroom():
    """months_of_headroom counts the months the covenant tests before its first breach: with a
    first test in month 24, the months of debt service before it are not headroom."""
    first = 24
    result = project(seed(**{"financing.covenants.first_test_month": first}))
    monthly = result.monthly.reset_index()
    tested, ratio = _tested_by_hand(monthly, 12)
    months = monthly["month"].to_numpy()
    tested = tested & (months >= first)
    breach = months[tested & (ratio < 1.2)][0]
    assert result.summary.iloc[0]["months_of_headroom"] == (tested & (months < breach)).sum()
    assert result.summary.iloc[0]["first_breach_month"] == breach
    # from month 24 to the same first breach: 23 fewer months of headroom than from month 1
    plain = project(seed()).summary.iloc[0]
    assert plain["first_breach_month"] == breach
    assert plain["months_of_headroom"] == (tested & (months < breach)).sum() + first - 1


def test_a_dscr_floor_below_1_is_warned_of_in_project_and_validate(tmp_path, capsys):
    """Found by a lender's review: dscr_floor = 0.5 passed without comment, a covenant that
    passes months whose cash flow does not cover their service. `econ project` and `econ
    validate` say so, naming the field, its value and the typical floors of
    models/reference_figures.csv; each row of a sweep over the floor is judged on its own."""
    import csv

    import tomli_w

    from econ.analysis.sweeps import sweep
    from econ.cli import main
    from econ.financing import DSCR_FLOOR_TYPICAL
    from econ.scenario import read_toml

    with open(ROOT / "models" / "reference_figures.csv", newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["item"] == "Typical DSCR covenant floor")
    assert tuple(float(x) for x in row["value"].split("-")) == DSCR_FLOOR_TYPICAL
    expected = (
        "financing.covenants.dscr_floor is 0.5x, below 1.0x: the covenant passes months whose "
        "cash flow does not cover their debt service; lenders' floors are typically 1.20-1.25x "
        "(models/reference_figures.csv)"
    )
    low = project(load_scenario(STACK, {"financing.covenants.dscr_floor": 0.5}), monthly=False)
    assert [w for w in low.warnings[0] if "dscr_floor is" in w] == [expected]
    for floor in (1.0, 1.2, "none"):
        fine = load_scenario(STACK, {"financing.covenants.dscr_floor": floor})
        assert not any("dscr_floor is" in w for w in project(fine, monthly=False).warnings[0])
    rows = sweep(seed(), grid={"financing.covenants.dscr_floor": [0.5, 1.2]}).rows
    said = ["dscr_floor is 0.5x" in w for w in rows["warnings"]]  # (one text a row)
    assert said == [True, False]

    data = read_toml(STACK)
    data["financing"]["covenants"]["dscr_floor"] = 0.5
    path = tmp_path / "low.toml"
    path.write_text(tomli_w.dumps(data))
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"warning [{data['name']}]: {expected}" in err.splitlines()


def _stack_with_a_second_rack():
    """The capital stack with a second rack bought in month 6 (the review's case)."""
    from econ.scenario import scenario_to_dict, validate_dict

    data = scenario_to_dict(load_scenario(STACK))
    data["vintages"] = [
        {
            "name": "second",
            "fleet": {
                "hardware": "gb200-nvl72",
                "gpu_count": 72,
                "gpus_per_rack": 72,
                "purchase_month": 6,
            },
            "capex": {
                "system_price_usd": 3_100_000.0,
                "gpus_per_system": 72,
                "networking_usd_per_gpu": 4_300.0,
                "installation_usd_per_gpu": 1_750.0,
            },
        }
    ]
    return validate_dict(data)


def test_debt_raised_ahead_of_a_later_vintages_capex_is_said():
    """Found by a lender's review: with a second rack bought in month 6, the notes and
    convertibles (shares of capex, issued at close) are issued on both racks' capex in month 0,
    and what exceeds month 0's uses went to equity as a distribution of borrowed money with no
    word. The warning gives the month, the amount (the month-0 equity cash flow: no equity is
    issued then) and the month the later capex is spent; the stack alone, whose capex is all in
    month 0, has none."""
    result = project(_stack_with_a_second_rack())
    monthly = result.monthly.reset_index()
    surplus = monthly["cash_flow_equity_usd"].iloc[0]
    capex = monthly["capex_usd"].to_numpy()
    later = int(np.flatnonzero(capex[1:] > 0)[0]) + 1
    assert surplus > 300_000 and later == 6
    said = [w for w in result.warnings[0] if w.startswith("the debt raised exceeds")]
    assert len(said) == 1
    assert said[0].startswith(
        f"the debt raised exceeds the capex, fees and capped calls paid to date in 6 months, "
        f"first in month 0: {surplus:,.0f} USD of debt proceeds above the uses to date goes to "
        f"equity then (cash_flow_equity_usd), a distribution of borrowed money that equity pays "
        f"back when the later capex is spent (from month {later})"
    )
    alone = project(load_scenario(STACK), monthly=False).warnings[0]
    assert not any(w.startswith("the debt raised exceeds") for w in alone)
