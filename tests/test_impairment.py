"""Tests of econ.impairment: textbook examples of the US GAAP and IFRS tests, monthly schedules
after impairment, properties and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import depreciation as dep
from econ import impairment as imp
from econ.errors import InputError
from econ.impairment import ImpairmentError

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# the tests at one date: textbook values
# ---------------------------------------------------------------------------------------------


def test_us_gaap_two_step_textbook_example():
    # Kieso, Weygandt & Warfield, Intermediate Accounting, ch. 11 "Impairments": equipment with a
    # carrying amount of 600,000 and expected undiscounted cash flows of 650,000 passes the
    # recoverability test (no loss); with cash flows of 580,000 and a fair value of 525,000 the
    # loss is 600,000 - 525,000 = 75,000 (ASC 360-10-35-17).
    assert imp.us_gaap_loss(600_000.0, 650_000.0, 525_000.0) == 0.0
    assert imp.us_gaap_loss(600_000.0, 580_000.0, 525_000.0) == pytest.approx(75_000.0)
    # Recoverable on an undiscounted basis means no loss even when fair value is lower.
    assert imp.us_gaap_loss(600_000.0, 600_000.0, 100.0) == 0.0


def test_ifrs_recoverable_amount_textbook_example():
    # Kieso et al., Intermediate Accounting: IFRS Edition, ch. 11: carrying amount 200,000, fair
    # value less costs to sell 180,000, value in use 205,000: recoverable amount 205,000, no
    # loss; with value in use 175,000 the recoverable amount is 180,000 and the loss 20,000
    # (IAS 36.18, 36.59).
    assert imp.ifrs_loss(200_000.0, 180_000.0, 205_000.0) == 0.0
    assert imp.ifrs_loss(200_000.0, 180_000.0, 175_000.0) == pytest.approx(20_000.0)


def test_ifrs_reversal_is_capped_at_the_carrying_amount_without_impairment():
    # IAS 36.117: carrying 90,000 after an impairment, 100,000 had none been recognized,
    # recoverable amount 120,000: the reversal is 10,000, not 30,000.
    assert imp.ifrs_loss(90_000.0, 120_000.0, 0.0, 100_000.0) == pytest.approx(-10_000.0)
    assert imp.ifrs_loss(90_000.0, 95_000.0, 0.0, 100_000.0) == pytest.approx(-5_000.0)
    assert imp.ifrs_loss(90_000.0, 80_000.0, 0.0, 100_000.0) == pytest.approx(10_000.0)


def test_tan_company_schedule_impairment_then_reversal():
    # The same textbook's reversal example by month: equipment costing 300,000, 3-year life, no
    # salvage. At the end of year 1 (carrying 200,000) the recoverable amount is 180,000: loss
    # 20,000, then 90,000 a year. At the end of year 2 the recoverable amount is 120,000: the
    # reversal is capped at the carrying amount without impairment, 100,000 (10,000 reversed).
    m = np.arange(37)
    schedule = dep.straight_line([300_000.0], [0.0], [3.0], m)
    trigger = (m == 12)[None, :]
    value_in_use = np.zeros((1, 37))
    value_in_use[0, 12] = 180_000.0
    value_in_use[0, 24] = 120_000.0
    out = imp.impair(
        schedule,
        [300_000.0],
        [0.0],
        "ifrs",
        trigger,
        np.zeros((1, 37)),
        value_in_use_usd=value_in_use,
    )
    assert out.month[0] == 12
    assert out.loss_usd[0] == pytest.approx(20_000.0)
    assert out.impairment_usd[0, 24] == pytest.approx(-10_000.0)
    assert out.net_loss_usd[0] == pytest.approx(10_000.0)
    assert out.carrying_amount_usd[0, 12] == pytest.approx(180_000.0)
    assert out.depreciation_usd[0, 13:25].sum() == pytest.approx(90_000.0)
    assert out.carrying_amount_usd[0, 24] == pytest.approx(100_000.0)
    assert out.depreciation_usd[0, 25:].sum() == pytest.approx(100_000.0)
    assert out.carrying_amount_usd[0, -1] == pytest.approx(0.0, abs=1e-6)


def test_us_gaap_schedule_written_down_to_fair_value_never_reversed():
    m = np.arange(73)
    cost, salvage = 7_200.0, 720.0
    schedule = dep.straight_line([cost], [salvage], [6.0], m)
    price = np.where(m < 24, 1.0, np.where(m < 40, 0.4, 1.0))[None, :]
    trigger = imp.price_drop_trigger(price, 0.5)
    assert trigger[0].nonzero()[0].tolist() == list(range(24, 40))
    fair = np.full((1, 73), 2_000.0)
    undiscounted = np.full((1, 73), 3_000.0)
    out = imp.impair(schedule, [cost], [salvage], "us_gaap", trigger, fair, undiscounted)
    carrying_before = cost - schedule[0, :25].sum()  # 7,200 - 25 x 90 = 4,950
    assert out.month[0] == 24
    assert out.loss_usd[0] == pytest.approx(carrying_before - 2_000.0)
    # The new basis less salvage is depreciated over the 48 months left, evenly (straight line).
    assert out.depreciation_usd[0, 25:] == pytest.approx(np.full(48, (2_000.0 - 720.0) / 48))
    assert (out.impairment_usd[0] >= 0).all()  # no reversal under US GAAP
    assert out.carrying_amount_usd[0, -1] == pytest.approx(salvage)


def test_us_gaap_recoverable_asset_is_not_impaired():
    m = np.arange(25)
    schedule = dep.straight_line([1000.0], [0.0], [2.0], m)
    trigger = np.ones((1, 25), dtype=bool)
    out = imp.impair(
        schedule, [1000.0], [0.0], "us_gaap", trigger, np.zeros((1, 25)), np.full((1, 25), 1e9)
    )
    assert out.month[0] == -1
    np.testing.assert_array_equal(out.depreciation_usd, schedule)
    assert out.net_loss_usd[0] == 0.0


def test_write_down_below_salvage_lowers_the_residual_value():
    m = np.arange(25)
    schedule = dep.straight_line([1000.0], [400.0], [2.0], m)
    trigger = (m == 6)[None, :]
    out = imp.impair(
        schedule, [1000.0], [400.0], "us_gaap", trigger, np.full((1, 25), 100.0), np.zeros((1, 25))
    )
    assert out.carrying_amount_usd[0, 6] == pytest.approx(100.0)
    assert out.depreciation_usd[0, 7:].sum() == pytest.approx(0.0)
    assert out.carrying_amount_usd[0, -1] == pytest.approx(100.0)


def test_rows_mix_standards_and_only_triggered_rows_change():
    m = np.arange(49)
    schedule = dep.straight_line([1000.0] * 3, [0.0] * 3, [4.0] * 3, m)
    trigger = np.zeros((3, 49), dtype=bool)
    trigger[:2, 10] = True
    fair = np.full((3, 49), 100.0)
    out = imp.impair(
        schedule,
        [1000.0] * 3,
        [0.0] * 3,
        ["us_gaap", "ifrs", "ifrs"],
        trigger,
        fair,
        np.zeros((3, 49)),
        np.zeros((3, 49)),
    )
    assert out.month.tolist() == [10, 10, -1]
    np.testing.assert_array_equal(out.depreciation_usd[2], schedule[2])


# ---------------------------------------------------------------------------------------------
# measures
# ---------------------------------------------------------------------------------------------


def test_remaining_cash_flow_measures_against_brute_force():
    # U_m = sum_{j>m} cf_j + sum_{j>=m} d_j and V_m the same discounted to the end of month m:
    # a disposal at the end of month j still counts in month j's test (ASC 360-10-35-29;
    # IAS 36.39(c)), a month's own operating cash flow does not.
    rng = np.random.default_rng(3)
    cf = rng.normal(10, 5, (3, 20))
    disposal = np.zeros((3, 20))
    disposal[[0, 1, 2], [19, 11, 0]] = [50.0, 70.0, 30.0]
    rate = np.array([0.0, 0.01, 0.05])
    for d in (None, disposal):
        pv = imp.remaining_present_value_usd(cf, rate, d)
        und = imp.remaining_undiscounted_usd(cf, d)
        sold = np.zeros((3, 20)) if d is None else d
        for i in range(3):
            for m in range(20):
                later = cf[i, m + 1 :]
                gone = sold[i, m:]
                assert und[i, m] == pytest.approx(later.sum() + gone.sum())
                assert pv[i, m] == pytest.approx(
                    (later / (1 + rate[i]) ** np.arange(1, later.size + 1)).sum()
                    + (gone / (1 + rate[i]) ** np.arange(gone.size)).sum()
                )
    # in the sale month the measures are the proceeds themselves
    assert imp.remaining_undiscounted_usd(cf, disposal)[1, 11] == pytest.approx(
        70.0 + cf[1, 12:].sum()
    )
    assert imp.remaining_present_value_usd(cf, rate, disposal)[0, 19] == 50.0


def test_a_sale_month_test_recovers_the_proceeds():
    # Kieso's equipment (see test_us_gaap_two_step_textbook_example) sold for 650,000 at the end
    # of the month it is tested, carrying 600,000: the recoverability test counts the sale, so no
    # loss, and the sale books the 50,000 gain. Sold for 525,000 instead: written down to the
    # proceeds, its fair value then (loss 75,000), and no gain.
    schedule = np.zeros((2, 3))
    trigger = np.array([[False, False, True]] * 2)
    disposal = np.zeros((2, 3))
    disposal[:, 2] = [650_000.0, 525_000.0]
    flows = np.zeros((2, 3))
    out = imp.impair(
        schedule,
        [600_000.0] * 2,
        [0.0] * 2,
        "us_gaap",
        trigger,
        disposal,
        imp.remaining_undiscounted_usd(flows, disposal),
    )
    assert out.impairment_usd[:, 2].tolist() == [0.0, 75_000.0]
    assert out.carrying_amount_usd[:, 2].tolist() == [600_000.0, 525_000.0]


def test_price_drop_trigger_from_the_in_service_month():
    price = np.array([[5.0, 1.0, 0.8, 0.7, 0.69, 0.9], [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]])
    out = imp.price_drop_trigger(price, [0.3, 0.5], in_service_month=[1, 2])
    assert out.tolist() == [
        [False, False, False, True, True, False],
        [False, False, False, True, True, True],
    ]


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------


@given(
    standard=st.sampled_from(imp.STANDARDS),
    life=st.floats(1.0, 6.0),
    salvage=st.floats(0.0, 0.5),
    data=st.data(),
)
@SETTINGS
def test_impairment_accounts_for_the_whole_cost(standard, life, salvage, data):
    t = int(np.ceil(life * 12)) + 3
    m = np.arange(t)
    schedule = dep.straight_line([1000.0], [1000.0 * salvage], [life], m)
    trigger = np.array(data.draw(st.lists(st.booleans(), min_size=t, max_size=t)))[None, :]
    fair = np.array(data.draw(st.lists(st.floats(0, 1500), min_size=t, max_size=t)))[None, :]
    use = np.array(data.draw(st.lists(st.floats(0, 1500), min_size=t, max_size=t)))[None, :]
    out = imp.impair(schedule, [1000.0], [1000.0 * salvage], standard, trigger, fair, use, use)
    carrying = out.carrying_amount_usd[0]
    without = 1000.0 - np.cumsum(schedule[0])
    # Depreciation plus net impairment is what left the books.
    total = out.depreciation_usd.sum() + out.net_loss_usd[0]
    assert total == pytest.approx(1000.0 - carrying[-1], abs=1e-6)
    assert (carrying <= without + 1e-6).all()  # never above the no-impairment amount
    assert (carrying >= -1e-9).all()
    assert (out.depreciation_usd >= -1e-9).all()
    if standard == "us_gaap":
        assert (out.impairment_usd >= -1e-9).all()
    if not trigger.any():
        np.testing.assert_array_equal(out.depreciation_usd, schedule)


@pytest.mark.parametrize("standard", imp.STANDARDS)
def test_a_carrying_amount_that_follows_fair_value_books_no_rounding_write_downs(standard):
    """Written down to a fair value that then falls as the scaled straight line does (a market
    value table linear from month 12 to 0 at the end of a 60-month life), the carrying amount
    equals fair value every later month, to rounding: those tests booked write-downs of
    2.3e-10, 5.8e-11 and 1.5e-10 USD in months 29, 52 and 55 (econ project on llama2-70b-h200
    with this table and a 50% market-value trigger: "5 months in all have a write-down" for
    the 2 of months 11 and 12). Half a cent (econ.units.HALF_CENT_USD) is no write-down."""
    from econ.units import HALF_CENT_USD

    cost = 6_115_200.0
    m = np.arange(61)
    schedule = dep.straight_line([cost], [0.0], [5.0], m)
    share = dep.value_share_from_table([0, 12, 60], [1.0, 0.4, 0.0], m)  # as the engine's
    trigger = imp.price_drop_trigger(share, 0.5)
    fair = cost * share
    low = np.full((1, 61), -1e9)  # cash flows recover nothing: fair value decides
    out = imp.impair(schedule, [cost], [0.0], standard, trigger, fair, low, low)
    # Month 11 (share 0.45, the first at or below half the in-service month's 0.95): the
    # carrying amount 6,115,200 x 49/60 = 4,994,080 less fair value 2,751,840; month 12: after
    # 56,160 of depreciation at the new basis, 2,695,680 less 2,446,080.
    assert out.impairment_usd[0].nonzero()[0].tolist() == [11, 12]
    assert out.impairment_usd[0, 11] == pytest.approx(2_242_240.0, abs=HALF_CENT_USD)
    assert out.impairment_usd[0, 12] == pytest.approx(249_600.0, abs=HALF_CENT_USD)
    assert out.carrying_amount_usd[0, 13:] == pytest.approx(fair[0, 13:], abs=1e-6)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


def test_bad_input():
    m = np.arange(13)
    schedule = dep.straight_line([100.0], [0.0], [1.0], m)
    trig = np.ones((1, 13), bool)
    zeros = np.zeros((1, 13))
    with pytest.raises(
        ImpairmentError,
        match=r"unknown impairment standard 'gaap'; valid "
        r"standards: us_gaap, ifrs",
    ) as info:
        imp.impair(schedule, [100.0], [0.0], "gaap", trig, zeros, zeros, zeros)
    assert isinstance(info.value, InputError)
    with pytest.raises(ImpairmentError, match="need undiscounted_usd"):
        imp.impair(schedule, [100.0], [0.0], "us_gaap", trig, zeros)
    with pytest.raises(ImpairmentError, match="need value_in_use_usd"):
        imp.impair(schedule, [100.0], [0.0], "ifrs", trig, zeros)
    with pytest.raises(ImpairmentError, match=r"salvage_usd = 200"):
        imp.impair(schedule, [100.0], [200.0], "ifrs", trig, zeros, zeros, zeros)
    with pytest.raises(ImpairmentError, match=r"cost_usd = -1"):
        imp.impair(schedule, [-1.0], [0.0], "ifrs", trig, zeros, zeros, zeros)
    with pytest.raises(ImpairmentError, match=r"threshold = 1\.5"):
        imp.price_drop_trigger(np.ones((1, 5)), 1.5)
    with pytest.raises(ImpairmentError, match=r"in_service_month = 9"):
        imp.price_drop_trigger(np.ones((1, 5)), 0.5, 9)
    with pytest.raises(ImpairmentError, match=r"rate_monthly = -2"):
        imp.remaining_present_value_usd(np.ones((1, 5)), -2.0)
    with pytest.raises(ImpairmentError, match="finite"):
        imp.remaining_undiscounted_usd(np.array([[1.0, np.nan]]))
    with pytest.raises(ImpairmentError, match=r"disposal_usd must have shape \(1, 5\)"):
        imp.remaining_undiscounted_usd(np.ones((1, 5)), np.ones((2, 5)))
    with pytest.raises(ImpairmentError, match="disposal_usd must hold finite"):
        imp.remaining_present_value_usd(np.ones((1, 2)), 0.01, np.array([[0.0, np.inf]]))


@pytest.mark.parametrize(
    ("reversed_usd", "text"),
    [
        (0.3, "(under 1 USD of it reversed later)"),
        (0.5, "(under 1 USD"),
        (1_234.6, "(1,235 USD of"),
    ],
)
def test_the_impaired_warning_never_says_0_usd_reversed(reversed_usd, text):
    """A reversal under 0.5 USD read "(0 USD of it reversed later)"."""
    from econ.engine import ROW_MESSAGES

    context = {
        "impairment_month": [12],
        "impairment_loss": [1_000_000.0],
        "impairment_months": [1],
        "impairment_written_down": [1_000_000.0],
        "impairment_reversed": [reversed_usd],
    }
    message = ROW_MESSAGES["impaired"](context, 0)
    assert text in message and "(0 USD" not in message, message


def test_a_us_gaap_write_down_at_the_end_of_the_life_is_never_negative():
    """The seed on a 4-year book life with a 20% price-drop test: month 50's test (nothing left
    to write down) booked -8.6e-10 USD, which US GAAP cannot (no reversals, ASC 360-10-35-20)
    and the warning read as "(0 USD of it reversed later)"."""
    import numpy as np

    from econ.batch import ScenarioBatch
    from econ.engine import project
    from econ.scenario import load_scenario
    from tests.conftest import ROOT

    seed = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    assert seed.depreciation.impairment.standard == "us_gaap"
    columns = {
        "depreciation.impairment.price_drop_threshold": np.array([0.2]),
        "depreciation.life_years": np.array([4.0]),
    }
    result = project(ScenarioBatch.repeat(seed, 1, columns))
    impairment = result.lines["impairment_usd"][0]
    assert impairment.max() > 0  # written down
    assert impairment.min() >= 0.0, impairment[impairment < 0]
    assert not any("reversed" in w for w in result.warnings[0])
