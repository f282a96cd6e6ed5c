"""Depreciation under a deployment ramp: each month's GPUs are depreciated from the month they
enter service (ASC 360-10-35-4 and IAS 16.55: from when the asset is available for use; IRS Pub
946 ch. 1 and 4, IRC §168: from when it is placed in service), book and tax, bonus included.

Reference schedules are computed here from the inputs, batch by batch, with plain loops: straight
line as the spreadsheet's SLN per month, MACRS with the percentages of IRS Pub 946 Tables A-1
(half-year) and A-2/A-3 (mid-quarter, quarters 1 and 2) typed from the publication, spread over
tax years as econ.depreciation's module docstring states.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import depreciation as dep
from econ import load_scenario, project
from econ.catalog import macrs_gds_tables
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
MACRS_SEED = SCENARIOS / "deepseek-r1-gb200-nvl72-macrs.toml"
LLAMA = SCENARIOS / "llama2-70b-h200.toml"
LIQUID = SCENARIOS / "hall-10mw-gb300-nvl72-liquid.toml"
TABLES = macrs_gds_tables()
LEVEL = {  # a level loan, not sized (a construction period takes no sized loan)
    "financing.repayment": "level_payment",
    "financing.size_to_min_dscr": None,
    "financing.max_ltv": None,
}
# IRS Pub 946 (2024), Appendix A, 5-year property [percent of the basis by tax year].
HALF_YEAR_5 = (20.00, 32.00, 19.20, 11.52, 11.52, 5.76)  # Table A-1
MID_QUARTER_5 = {
    1: (35.00, 26.00, 15.60, 11.01, 11.01, 1.38),  # Table A-2, placed in service in quarter 1
    2: (25.00, 30.00, 18.00, 11.37, 11.37, 4.26),  # Table A-3, quarter 2
}


def straight_line_batches(base_usd, life_months, batches, months):
    """SLN per month of each batch (share, first month), summed: base x share / life in each
    month of the batch's life, a fractional last month taking its covered share."""
    out = np.zeros(months)
    for share, first in batches:
        for m in range(first, months):
            covered = min(1.0, max(0.0, life_months - (m - first)))
            out[m] += base_usd * share / life_months * covered
    return out


def macrs_batches(cost_usd, bonus, batches, months):
    """MACRS of each batch (share, first month, table percentages), purchased in month 0: the
    bonus in its month; the table's k-th percentage in the k-th tax year from the one holding
    that month (tax years: months 1-12, 13-24, ...), spread evenly over the year's months from
    the first month on."""
    out = np.zeros(months)
    for share, first, percent in batches:
        basis = cost_usd * share
        out[first] += basis * bonus
        year = (first - 1) // 12
        for k, pct in enumerate(percent):
            start = first if k == 0 else 12 * (year + k) + 1
            end = 12 * (year + k) + 12
            for m in range(start, min(end, months - 1) + 1):
                out[m] += basis * (1 - bonus) * pct / 100 / (end - start + 1)
    return out


def ramp_batches(gpus_in_service):
    """(share, first month) of each month's newly in-service GPUs, from the engine's line."""
    gpus = np.asarray(gpus_in_service, dtype=float)
    new = np.diff(gpus, prepend=0.0) / gpus.max()
    return [(share, m) for m, share in enumerate(new) if share > 0]


# --- The review's cases ---------------------------------------------------------------------------


def test_llama2_h200_depreciates_the_64_gpus_in_service_in_month_1():
    """128 H200s over a 2-month ramp: 64 serve in month 1 and are depreciated from it, the other
    64 from month 2 (was: all 128 from month 1), book and tax (tax follows the book)."""
    scenario = load_scenario(LLAMA)
    result = project(scenario)
    lines = {k: v[0] for k, v in result.lines.items()}
    assert lines["gpus_in_service"][:3].tolist() == [0, 64, 128]
    cost = result.metrics["capex_usd_total"][0]
    expected = straight_line_batches(cost, 60.0, [(0.5, 1), (0.5, 2)], 61)
    np.testing.assert_allclose(lines["depreciation_usd"], expected, rtol=1e-12)
    np.testing.assert_allclose(lines["tax_depreciation_usd"], expected, rtol=1e-12)
    assert lines["depreciation_usd"][1] == pytest.approx(cost / 60 / 2, rel=1e-12)
    # sold at the horizon at book value: the second half's last month is left
    assert lines["disposal_usd"][60] == pytest.approx(cost / 60 / 2, rel=1e-9)
    warning = next(w for w in result.warnings[0] if w.startswith("sold in month 60"))
    assert "for the GPUs depreciated last, from month 2" in warning
    assert f"{cost / 120:,.0f} USD is assumed sold at book value" in warning


def test_gb300_hall_depreciates_a_third_of_the_racks_in_month_1():
    """The shipped hall over its ramp (3 months: a third of its GPUs a month): the GPUs in
    service and each batch's depreciation from its own month follow from the file's GPU count,
    capex per GPU, life and ramp. The liquid retrofit's (the site's, from the hall's opening) is
    the same with or without the ramp."""
    scenario = load_scenario(LIQUID)
    ramped = project(scenario)
    flat = project(load_scenario(LIQUID, {"fleet.deployment_ramp_months": 0}))
    fleet, capex = scenario.fleet, scenario.capex
    ramp, count = fleet.deployment_ramp_months, fleet.gpu_count
    gpus = ramped.lines["gpus_in_service"][0]
    in_service = [count * min(1.0, m / ramp) for m in range(ramp + 2)]
    np.testing.assert_allclose(gpus[: ramp + 2], in_service, rtol=1e-12)
    per_gpu = (
        capex.system_price_usd / capex.gpus_per_system
        + capex.networking_usd_per_gpu
        + capex.installation_usd_per_gpu
    )
    gpu_cost = count * per_gpu  # the file's capex per GPU
    life = scenario.depreciation.life_years * 12
    batches = ramp_batches(gpus)
    assert batches == [(pytest.approx(1 / ramp), m) for m in range(1, ramp + 1)]
    for line in ("depreciation_usd", "tax_depreciation_usd"):
        moved = ramped.lines[line][0] - flat.lines[line][0]
        months = len(gpus)
        expected = straight_line_batches(gpu_cost, life, batches, months) - straight_line_batches(
            gpu_cost, life, [(1.0, 1)], months
        )
        np.testing.assert_allclose(moved, expected, rtol=1e-9, atol=1e-6)
    site = flat.lines["depreciation_usd"][0][1] - gpu_cost / life
    assert ramped.lines["depreciation_usd"][0][1] == pytest.approx(gpu_cost / life / ramp + site)


@pytest.mark.parametrize("bonus", [1.0, 0.4])
def test_macrs_bonus_lands_in_each_batchs_month(bonus):
    """MACRS 5-year half-year with bonus, GPUs over a 3-month ramp: each third's bonus in its
    own in-service month, its table deductions from its own months (Pub 946 Table A-1)."""
    changes = {"fleet.deployment_ramp_months": 3, "depreciation.tax.bonus_share": bonus}
    result = project(load_scenario(MACRS_SEED, changes))
    cost = result.metrics["capex_usd_total"][0]
    third = 1 / 3
    expected = macrs_batches(
        cost, bonus, [(third, 1, HALF_YEAR_5), (third, 2, HALF_YEAR_5), (third, 3, HALF_YEAR_5)], 73
    )
    tax = result.lines["tax_depreciation_usd"][0]
    np.testing.assert_allclose(tax, expected, rtol=1e-9, atol=1e-6)
    assert tax[1] == pytest.approx(cost * third * (bonus + (1 - bonus) * 0.20 / 12), rel=1e-12)
    assert tax.sum() == pytest.approx(cost, rel=1e-12)


def test_mid_quarter_batches_take_their_own_quarters_table():
    """A 6-month ramp from month 1 places GPUs in service in quarters 1 and 2 of the first tax
    year: with the mid-quarter convention (chosen for the first batch's quarter, Q1), those of
    months 4-6 take Table A-3 (Q2), those of months 1-3 Table A-2 (Q1)."""
    changes = {
        "fleet.deployment_ramp_months": 6,
        "depreciation.tax.convention": "mid-quarter Q1",
        "depreciation.tax.bonus_share": 0.0,
    }
    result = project(load_scenario(MACRS_SEED, changes))
    cost = result.metrics["capex_usd_total"][0]
    batches = [(1 / 6, m, MID_QUARTER_5[1 if m <= 3 else 2]) for m in range(1, 7)]
    expected = macrs_batches(cost, 0.0, batches, 73)
    tax = result.lines["tax_depreciation_usd"][0]
    np.testing.assert_allclose(tax, expected, rtol=1e-9, atol=1e-6)
    assert tax.sum() == pytest.approx(cost, rel=1e-12)


def test_a_mid_quarter_convention_of_another_quarter_than_the_first_batchs_is_refused():
    changes = {"fleet.deployment_ramp_months": 6, "depreciation.tax.convention": "mid-quarter Q2"}
    with pytest.raises(dep.DepreciationError, match="expected 'mid-quarter Q1' or 'half-year'"):
        project(load_scenario(MACRS_SEED, changes))


def test_units_of_production_by_gpu_hours_is_straight_line_per_batch():
    """Every GPU in service runs 730 hours a month, so each batch's usage over its own life is
    even: units of production by GPU-hours is straight line from each batch's month."""
    changes = {
        "fleet.deployment_ramp_months": 4,
        "depreciation.method": "units_of_production",
        "depreciation.usage_driver": "gpu_hours",
        "depreciation.life_years": 5.0,
    }
    result = project(load_scenario(SEED, changes))
    cost = result.metrics["capex_usd_total"][0]
    expected = straight_line_batches(cost, 60.0, [(0.25, m) for m in (1, 2, 3, 4)], 73)
    np.testing.assert_allclose(result.lines["depreciation_usd"][0], expected, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize(
    ("changes", "batches"),
    [
        # depreciation.in_service_month later than the first GPUs: those start then
        (
            {"depreciation.in_service_month": 3},
            [(0.25, 3), (0.25, 3), (0.25, 3), (0.25, 4)],
        ),
        # a purchase in month 2 and a construction period to month 5: months since purchase
        (
            {"fleet.purchase_month": 2, "fleet.service_start_month": 5},
            [(0.25, 5), (0.25, 6), (0.25, 7), (0.25, 8)],
        ),
        # retired in month 2: the GPUs of months 3 and 4 never serve and are not depreciated
        ({"fleet.retire_month": 2}, [(0.25, 1), (0.25, 2)]),
    ],
)
def test_each_batch_starts_in_its_own_month(changes, batches):
    scenario = load_scenario(SEED, {"fleet.deployment_ramp_months": 4, **LEVEL, **changes})
    result = project(scenario)
    lines = {k: v[0] for k, v in result.lines.items()}
    # (interest capitalized during a construction period is part of the GPUs' cost)
    cost = result.metrics["capex_usd_total"][0] + lines["capitalized_interest_usd"].sum()
    held = scenario.fleet.retire_month or scenario.horizon
    expected = straight_line_batches(cost, 72.0, batches, scenario.horizon + 1)
    expected[held + 1 :] = 0.0
    np.testing.assert_allclose(lines["depreciation_usd"], expected, rtol=1e-9, atol=1e-6)


# --- Properties -----------------------------------------------------------------------------------


def test_without_a_ramp_the_schedule_is_unchanged_bit_for_bit():
    """No ramp, a ramp of 1 month, and an unramped scenario batched with a ramped one: the
    seed's book depreciation is econ.depreciation's straight line of its cost, exactly."""
    seed = load_scenario(SEED)
    alone = project(seed)
    cost = alone.metrics["capex_usd_total"][0]
    months = np.arange(seed.horizon + 1)
    direct = dep.straight_line(cost, 0.0, 6.0, months)[0]
    assert np.array_equal(alone.lines["depreciation_usd"][0], direct)
    one = project(load_scenario(SEED, {"fleet.deployment_ramp_months": 1}))
    ramped = load_scenario(SEED, {"fleet.deployment_ramp_months": 5, "name": "ramped"})
    together = project([seed, ramped])
    for line in ("depreciation_usd", "tax_depreciation_usd", "disposal_usd", "net_income_usd"):
        assert np.array_equal(one.lines[line][0], alone.lines[line][0]), line
        assert np.array_equal(together.lines[line][0], alone.lines[line][0]), line
    macrs = load_scenario(MACRS_SEED)
    alone, together = project(macrs), project([macrs, ramped])
    assert np.array_equal(
        together.lines["tax_depreciation_usd"][0], alone.lines["tax_depreciation_usd"][0]
    )


METHODS = ("straight_line", "declining_balance", "sum_of_years_digits", "custom", "macrs_gds")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.sampled_from(METHODS),
    cost=st.floats(1e3, 1e9),
    salvage_share=st.floats(0.0, 0.4),
    life_years=st.floats(1.0, 7.0),
    ramp=st.integers(1, 24),
    first=st.integers(1, 14),
    purchase=st.integers(0, 11),
)
def test_batches_depreciate_the_base_once_and_nothing_before_service(
    method, cost, salvage_share, life_years, ramp, first, purchase
):
    """Over months that reach the last batch's end, the batches' schedule sums to the base
    (MACRS: the cost); through any month it has depreciated at most the base of the GPUs in
    service by then; nothing before the first batch's month."""
    salvage_share = 0.0 if method == "macrs_gds" else salvage_share
    months = np.arange(first + ramp + 12 * 8 + 2)
    shares = np.full((1, ramp), 1.0 / ramp)
    starts = first + np.arange(ramp)[None, :]
    params = {
        "life_years": life_years,
        "salvage_share": salvage_share,
        "custom_percent": np.array([[40.0, 30.0, 20.0, 10.0]]),
        "purchase_month": purchase,
        "convention": "half-year",
        "bonus_share": 0.5,
    }
    out = dep.schedule_batches([method], [cost], months, shares, starts, tables=TABLES, **params)[0]
    base = cost * (1 - salvage_share)
    assert out.sum() == pytest.approx(base, rel=1e-9)
    assert np.all(out[:first] == 0.0)
    in_service = np.clip((months - first + 1) / ramp, 0.0, 1.0)
    assert np.all(np.cumsum(out) <= base * in_service * (1 + 1e-9) + 1e-9 * base)


def test_a_single_batch_is_the_schedule_exactly():
    months = np.arange(80)
    kwargs = {"life_years": 5.5, "salvage_share": 0.1, "purchase_month": 3}
    one = dep.schedule_batches(["sum_of_years_digits"], [1e6], months, [[1.0]], [[2]], **kwargs)
    direct = dep.schedule_mixed(
        ["sum_of_years_digits"], [1e6], months, in_service_month=[2], **kwargs
    )
    assert np.array_equal(one, direct)


def test_a_change_of_estimate_before_a_batch_enters_service_is_its_life():
    """A new life of 3 years from month 3: the batch placed in service in month 1 changes there
    (ASC 250: prospectively, its book value over the remaining 3 years less the 2 months
    elapsed); the one placed in service in month 4 is depreciated over 3 years from month 4."""
    months = np.arange(60)
    settings_ = {"life_years": 5.0, "change_month": 3, "change_life_years": 3.0}
    out = dep.schedule_batches(
        ["straight_line"], [1200.0], months, [[0.5, 0.5]], [[1, 4]], **settings_
    )[0]
    first = np.zeros(60)
    first[1:3] = 600.0 / 60
    first[3:37] = (600.0 - 2 * 600.0 / 60) / 34  # 36 months from month 1, 34 left
    later = np.zeros(60)
    later[4:40] = 600.0 / 36
    np.testing.assert_allclose(out, first + later, rtol=1e-12)


def test_economic_batches_follow_the_value_from_their_own_month():
    """Value falling 2% of cost a month: a batch placed in service in month 4 is carried at its
    cost until then, and follows the value's fall relative to month 3's from then."""
    months = np.arange(40)
    value = np.clip(1.0 - 0.02 * months, 0.0, None)[None, :]
    out = dep.schedule_batches(
        ["economic"], [1000.0], months, [[0.5, 0.5]], [[1, 4]], value_curve=value, life_years=3.0
    )[0]
    expected = np.zeros(40)
    for share, first in ((0.5, 1), (0.5, 4)):
        book = [share * 1000.0 * min(1.0, value[0, m] / value[0, first - 1]) for m in range(40)]
        book = [share * 1000.0 if m < first else b for m, b in enumerate(book)]
        book[first - 1 + 36 :] = [0.0] * len(book[first - 1 + 36 :])
        expected += -np.diff(book, prepend=share * 1000.0)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_bad_batches_are_refused_naming_the_argument():
    with pytest.raises(dep.DepreciationError, match="shares"):
        dep.schedule_batches(["straight_line"], [1.0], np.arange(10), [[1.5]], [[1]])
    with pytest.raises(dep.DepreciationError, match=r"must both have shape \(1, batches\)"):
        dep.schedule_batches(["straight_line"], [1.0], np.arange(10), [[0.5, 0.5]], [[1]])


@pytest.mark.parametrize(
    ("horizon", "retire", "said"),
    [
        (64, None, "sold in month 64, before the end of its useful life of 60 months for the GPUs "
         "depreciated last, from month 6: the remaining book value {left} USD"),
        (65, None, None),  # the last sixth's 60 months end in month 65
        (65, 4, "sold in month 4, before the end of its useful life of 60 months for the GPUs "
         "depreciated last, from month 4"),  # those of months 5 and 6 never serve
    ],
)  # fmt: skip
def test_a_sale_before_the_last_batchs_life_has_run_is_said(horizon, retire, said):
    changes = {
        "fleet.deployment_ramp_months": 6,
        "depreciation.life_years": 5.0,
        "horizon_months": horizon,
        **LEVEL,
    }
    if retire is not None:
        changes["fleet.retire_month"] = retire
    result = project(load_scenario(SEED, changes))
    cost = result.metrics["capex_usd_total"][0]
    sold = [w for w in result.warnings[0] if "before the end of its useful life" in w]
    if said is None:
        assert sold == []
    else:
        assert len(sold) == 1 and sold[0].startswith(said.format(left=f"{cost / 6 / 60:,.0f}"))
