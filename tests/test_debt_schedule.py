"""The yearly debt schedule (engine.debt_schedule_table) against the monthly lines it sums."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from econ import load_scenario, project
from econ.engine import DEBT_SCHEDULE, debt_schedule_table
from econ.errors import InputError
from tests.conftest import ROOT, SCENARIOS

SEEDS = ("deepseek-r1-gb200-nvl72", "deepseek-r1-gb200-nvl72-capital-stack")
SUMMED = (
    "interest_usd",
    "cash_interest_usd",
    "commitment_fee_usd",
    "principal_usd",
    "debt_service_usd",
)
"""Columns of the schedule that are the year's sums of the monthly lines of the same name."""


@pytest.fixture(scope="module", params=SEEDS)
def monthly(request) -> pd.DataFrame:
    return project(
        load_scenario(ROOT / "models" / "scenarios" / f"{request.param}.toml")
    ).monthly.reset_index()


def year_of(frame: pd.DataFrame, years: str) -> np.ndarray:
    if years == "asset":
        return np.maximum(frame["month"].to_numpy() - 1, 0) // 12 + 1
    return pd.to_datetime(frame["date"]).dt.year.to_numpy()


@pytest.mark.parametrize("years", ["asset", "calendar"])
def test_schedule_sums_the_months_and_keeps_the_balance_identity(monthly, years):
    table = debt_schedule_table(monthly, years, dscr_floor=1.25).droplevel("scenario")
    assert list(table.columns) == list(DEBT_SCHEDULE)
    year = year_of(monthly, years)
    assert list(table.index) == list(dict.fromkeys(year))
    assert monthly["debt_balance_usd"].max() > 0  # both seeds borrow
    opening = 0.0
    for y, row in table.iterrows():
        months = monthly[year == y]
        assert row["months"] == (months["month"] >= 1).sum()
        for line in SUMMED:
            assert row[line] == pytest.approx(months[line].sum(), rel=1e-12, abs=1e-6)
        # The service foots: cash interest + commitment fees + principal - what it leaves out.
        outside = row["principal_outside_service_usd"]
        assert 0.0 <= outside <= row["principal_usd"] + 1e-6
        assert row["debt_service_usd"] == pytest.approx(
            row["cash_interest_usd"] + row["commitment_fee_usd"] + row["principal_usd"] - outside,
            rel=1e-12,
            abs=1e-6,
        )
        assert row["closing_balance_usd"] == months["debt_balance_usd"].iloc[-1]
        assert row["opening_balance_usd"] == opening
        assert abs(
            row["opening_balance_usd"]
            + row["draws_and_added_usd"]
            - row["principal_usd"]
            - row["closing_balance_usd"]
        ) <= 1e-9 * max(1.0, row["opening_balance_usd"])
        cfads = (months["dscr"] * months["debt_service_usd"]).where(months["dscr"].notna())
        served = months["debt_service_usd"] > 1e-6
        # CFADS = EBITDA - tax paid, the DSCR's numerator month by month.
        assert cfads[served].sum() == pytest.approx(
            (months["ebitda_usd"] - months["tax_usd"])[served].sum(), rel=1e-9
        )
        if row["debt_service_usd"] > 1e-6:
            # CFADS of the months the DSCR tests: none after the debt is repaid
            assert row["cfads_usd"] == pytest.approx(
                (months["ebitda_usd"] - months["tax_usd"])[served].sum(), rel=1e-12, abs=1e-6
            )
            assert row["dscr"] == pytest.approx(row["cfads_usd"] / row["debt_service_usd"])
            # A ratio of sums over the tested months is a weighted mean of their ratios.
            assert row["min_dscr_in_year"] <= row["dscr"] + 1e-12 * abs(row["dscr"])
            assert row["dscr_less_floor"] == pytest.approx(row["dscr"] - 1.25)
            assert row["min_dscr_in_year"] == pytest.approx(months["dscr"].min())
        else:
            assert np.isnan(row["cfads_usd"]) and np.isnan(row["dscr"])
            assert np.isnan(row["dscr_less_floor"])
        last_llcr = months["llcr"].iloc[-1]
        assert row["llcr"] == pytest.approx(last_llcr, nan_ok=True)
        opening = row["closing_balance_usd"]
    # Draws over the life equal the principal repaid plus what is still owed at the end.
    assert table["draws_and_added_usd"].sum() == pytest.approx(
        table["principal_usd"].sum() + table["closing_balance_usd"].iloc[-1], rel=1e-12
    )
    assert table["draws_and_added_usd"].iloc[0] > 0  # the month-0 draw


def test_asset_years_are_whole_and_calendar_years_mark_the_partial_ends(monthly):
    asset = debt_schedule_table(monthly, "asset")
    assert (asset["months"] == 12).all()  # the 72-month seeds: six whole asset years
    calendar = debt_schedule_table(monthly, "calendar")
    # Start in April 2026: month 1 is May, so 2026 has 8 months of service and 2032 the rest.
    assert calendar["months"].iloc[0] == 8
    assert calendar["months"].iloc[-1] == 4
    assert calendar["months"].sum() == asset["months"].sum() == 72
    assert calendar["interest_usd"].sum() == pytest.approx(asset["interest_usd"].sum())


def test_without_a_floor_there_is_no_headroom_and_bad_years_are_refused(monthly):
    table = debt_schedule_table(monthly)
    assert table["dscr_less_floor"].isna().all()
    with pytest.raises(InputError, match="years"):
        debt_schedule_table(monthly, "fiscal")


def test_a_hand_worked_schedule():
    """A 1,200 loan drawn in month 0, 100 of principal a month at 1% a month on the opening
    balance, CFADS 150 a month: the loan is repaid over asset year 1."""
    months = np.arange(13)
    balance = np.where(months == 0, 1200.0, 1200.0 - 100.0 * months)
    principal = np.where(months == 0, 0.0, 100.0)
    interest = np.where(months == 0, 0.0, 0.01 * (balance + principal))
    service = principal + interest
    frame = pd.DataFrame(
        {
            "scenario": "hand",
            "month": months,
            "date": pd.date_range("2026-04-01", periods=13, freq="MS"),
            "debt_balance_usd": balance,
            "principal_usd": principal,
            "interest_usd": interest,
            "cash_interest_usd": interest,
            "commitment_fee_usd": 0.0,
            "debt_service_usd": service,
            "ebitda_usd": np.where(months == 0, 0.0, 160.0),
            "tax_usd": np.where(months == 0, 0.0, 10.0),
            "depreciation_usd": 0.0,
            "impairment_usd": 0.0,
            "gain_on_disposal_usd": 0.0,
            "dscr": np.where(months == 0, np.nan, 150.0 / np.maximum(service, 1.0)),
            "llcr": np.where(balance > 0, 1.5, np.nan),
        }
    )
    row = debt_schedule_table(frame, "asset", dscr_floor=1.2).iloc[0]
    # Interest: 1% of 1,200, 1,100, ..., 100 = 0.01 * 7,800 = 78.
    assert row["interest_usd"] == pytest.approx(78.0)
    assert (row["opening_balance_usd"], row["draws_and_added_usd"], row["principal_usd"]) == (0, 1200, 1200)
    assert row["closing_balance_usd"] == 0
    assert row["dscr"] == pytest.approx(1800.0 / 1278.0)  # 12 x 150 over 1,200 + 78
    assert row["min_dscr_in_year"] == pytest.approx(150.0 / 112.0)  # month 1: 100 + 12
    assert row["dscr_less_floor"] == pytest.approx(1800.0 / 1278.0 - 1.2)
    assert np.isnan(row["llcr"])  # repaid: no LLCR at year end
    calendar = debt_schedule_table(frame, "calendar")
    assert list(calendar["months"]) == [8, 4]  # May-December 2026, January-April 2027
    assert list(calendar["closing_balance_usd"]) == [400.0, 0.0]
    assert list(calendar["opening_balance_usd"]) == [0.0, 400.0]
    assert list(calendar["draws_and_added_usd"]) == [1200.0, 0.0]


def test_the_annual_dscr_counts_only_the_months_with_debt_service():
    """Yescombe (2014, §12.3): the ADSCR is the CFADS of the period's debt service dates over
    that debt service. A 600 loan repaid over months 1-6 at 100 a month (no interest), CFADS 150
    a month while it is served and -500 a month after: asset year 1's DSCR is 6 x 150 / 600 =
    1.5, as every month's; with the six later months it would read (900 - 3,000) / 600 = -3.5."""
    months = np.arange(13)
    principal = np.where((months >= 1) & (months <= 6), 100.0, 0.0)
    balance = 600.0 - np.cumsum(principal)
    cfads = np.where(months == 0, 0.0, np.where(months <= 6, 150.0, -500.0))
    frame = pd.DataFrame(
        {
            "scenario": "hand",
            "month": months,
            "date": pd.date_range("2026-04-01", periods=13, freq="MS"),
            "debt_balance_usd": balance,
            "principal_usd": principal,
            "interest_usd": 0.0,
            "cash_interest_usd": 0.0,
            "commitment_fee_usd": 0.0,
            "debt_service_usd": principal,
            "ebitda_usd": cfads,
            "tax_usd": 0.0,
            "depreciation_usd": 0.0,
            "impairment_usd": 0.0,
            "gain_on_disposal_usd": 0.0,
            "dscr": np.where(principal > 0, cfads / np.maximum(principal, 1.0), np.nan),
            "llcr": np.nan,
        }
    )
    row = debt_schedule_table(frame, "asset", dscr_floor=1.2).iloc[0]
    assert row["cfads_usd"] == pytest.approx(900.0)
    assert row["dscr"] == pytest.approx(1.5)
    assert row["min_dscr_in_year"] == pytest.approx(1.5)
    assert row["dscr_less_floor"] == pytest.approx(0.3)
    assert row["draws_and_added_usd"] == pytest.approx(600.0)
    assert row["closing_balance_usd"] == 0


def _by_hand(principal, service, ebitda, dscr, fee=0.0) -> pd.DataFrame:
    """A 13-month monthly frame of a 1,200 loan at no interest (months 0-12), repaid by
    `principal`, with `service` and `fee` (commitment fees) as given: the lines
    debt_schedule_table reads."""
    months = np.arange(13)
    return pd.DataFrame(
        {
            "scenario": "hand",
            "month": months,
            "date": pd.date_range("2026-04-01", periods=13, freq="MS"),
            "debt_balance_usd": 1200.0 - np.cumsum(principal),
            "principal_usd": principal,
            "interest_usd": fee,
            "cash_interest_usd": 0.0,
            "commitment_fee_usd": fee,
            "debt_service_usd": service,
            "ebitda_usd": np.where(months == 0, 0.0, ebitda),
            "tax_usd": 0.0,
            "depreciation_usd": 0.0,
            "impairment_usd": 0.0,
            "gain_on_disposal_usd": 0.0,
            "dscr": np.where(months == 0, np.nan, dscr),
            "llcr": np.nan,
        }
    )


def test_a_balloon_is_principal_outside_the_service():
    """A 1,200 loan at no interest, 50 a month over months 1-12 and the 600 left repaid in month
    12 as a balloon, which the debt service leaves out (a lender refinances it; Yescombe 2014,
    §12.5): year 1's principal is 1,200, its service 600, and 600 is outside the service."""
    months = np.arange(13)
    scheduled = np.where(months >= 1, 50.0, 0.0)
    principal = scheduled + np.where(months == 12, 600.0, 0.0)
    frame = _by_hand(principal, scheduled, ebitda=100.0, dscr=2.0)
    row = debt_schedule_table(frame, "asset").iloc[0]
    assert (row["principal_usd"], row["debt_service_usd"]) == (1200.0, 600.0)
    assert row["principal_outside_service_usd"] == 600.0
    assert row["dscr"] == pytest.approx(2.0)  # 1,200 of CFADS over 600 of service


def test_the_capital_stack_s_settlement_is_outside_the_service():
    """The capital-stack seed's notes outlive its 72 months: the balance settled in month 72 is
    principal of asset year 6 that its debt service leaves out (the engine's warning's figure)."""
    result = project(load_scenario(ROOT / "models" / "scenarios" / f"{SEEDS[1]}.toml"))
    table = debt_schedule_table(result.monthly).droplevel("scenario")
    (warning,) = [w for w in result.warnings[0] if w.startswith("the debt outlives")]
    settled = float(warning.split(": ")[1].split(" USD")[0].replace(",", ""))
    outside = table["principal_outside_service_usd"]
    assert outside.iloc[-1] == pytest.approx(settled, abs=0.5)
    assert (outside.iloc[:-1] == 0).all()


def test_a_floor_per_scenario_by_name():
    scenarios = [load_scenario(ROOT / "models" / "scenarios" / f"{n}.toml") for n in SEEDS]
    monthly = project(scenarios).monthly
    table = debt_schedule_table(monthly, "asset", {SEEDS[0]: None, SEEDS[1]: 1.2})
    assert table.loc[SEEDS[0], "dscr_less_floor"].isna().all()
    second = table.loc[SEEDS[1]]
    assert list(second["dscr_less_floor"]) == pytest.approx(list(second["dscr"] - 1.2))
    alone = debt_schedule_table(monthly.loc[[SEEDS[1]]], "asset", 1.2).loc[SEEDS[1]]
    pd.testing.assert_frame_equal(second, alone)


def test_commitment_fees_are_in_the_service_and_never_make_the_outside_negative():
    """A 1,200 loan at no interest repaid at 100 a month, its lender paid a commitment fee of 3 a
    month in months 1-6 (debt service = cash interest + commitment fees + scheduled principal,
    econ.capital): year 1's service is 1,200 + 18 = 1,218, and no principal is outside it (it
    read 1,200 - 1,218 = -18 when the fees were left out of the footing)."""
    months = np.arange(13)
    principal = np.where(months >= 1, 100.0, 0.0)
    fee = np.where((months >= 1) & (months <= 6), 3.0, 0.0)
    dscr = 150.0 / (principal + fee + (months == 0))
    frame = _by_hand(principal, principal + fee, ebitda=150.0, dscr=dscr, fee=fee)
    row = debt_schedule_table(frame, "asset").iloc[0]
    assert (row["cash_interest_usd"], row["commitment_fee_usd"]) == (0.0, 18.0)
    assert (row["principal_usd"], row["debt_service_usd"]) == (1200.0, 1218.0)
    assert row["principal_outside_service_usd"] == 0.0


STACK = ROOT / "models" / "scenarios" / f"{SEEDS[1]}.toml"
STEPS = [{"month": 0, "share": 0.5}, {"month": 6, "share": 0.3}]
"""The capital-stack seed's DDTL drawn in steps, as a lender's review did: half its commitment at
close, 30% in month 6, the last 20% never drawn."""


def stepped_ddtl():
    """The capital-stack seed with its DDTL drawn in STEPS."""
    base = load_scenario(STACK)
    tranches = [t.model_dump(mode="json", exclude_unset=True) for t in base.financing.tranches]
    assert tranches[0]["type"] == "delayed_draw_term_loan"
    tranches[0]["draw_schedule"] = STEPS
    return load_scenario(STACK, {"financing.tranches": tranches, "name": "stepped-ddtl"})


def test_a_ddtl_drawn_in_steps_shows_its_commitment_fees_month_by_month_and_by_year():
    """docs/financing.md: the fee of month m is commitment_fee_annual x the day count's year
    fraction of a month x what was undrawn at the end of month m-1, over the availability
    period (months 1 to issue + availability_months). ACT/360 counts 365/12 days a month over a
    360-day year. Undrawn: half the commitment (55% of capex) in months 1-6, a fifth in months
    7-12, nothing after month 12. A lender's review read 410.75 and 164.30 as the gap between
    debt service and cash interest + principal, which no line showed."""
    scenario = stepped_ddtl()
    ddtl = scenario.financing.tranches[0]
    assert (ddtl.day_count, ddtl.availability_months) == ("act/360", 12)
    projection = project(scenario)
    lines = {k: v[0] for k, v in projection.lines.items()}
    capex = scenario.capex.system_price_usd + scenario.fleet.gpu_count * (
        scenario.capex.networking_usd_per_gpu + scenario.capex.installation_usd_per_gpu
    )
    assert lines["capex_usd"].sum() == pytest.approx(capex, rel=1e-12)  # one rack at close
    commitment = ddtl.share_of_capex * capex
    per_month = ddtl.commitment_fee_annual * (365.0 / 12.0) / 360.0
    months = np.arange(len(lines["commitment_fee_usd"]))
    undrawn = np.select(
        [(months >= 1) & (months <= 6), (months >= 7) & (months <= 12)],
        [(1 - 0.5) * commitment, (1 - 0.5 - 0.3) * commitment],
        0.0,
    )
    np.testing.assert_allclose(lines["commitment_fee_usd"], per_month * undrawn, rtol=1e-12)
    assert lines["commitment_fee_usd"][1] == pytest.approx(410.75, abs=0.005)
    assert lines["commitment_fee_usd"][7] == pytest.approx(164.30, abs=0.005)
    # The monthly service is cash interest + fees + principal (no balloon before the last month).
    served = lines["cash_interest_usd"] + lines["commitment_fee_usd"] + lines["principal_usd"]
    np.testing.assert_allclose(lines["debt_service_usd"][:-1], served[:-1], atol=1e-6)
    table = debt_schedule_table(projection.monthly).droplevel("scenario")
    first = table.iloc[0]
    assert first["commitment_fee_usd"] == pytest.approx(per_month * undrawn.sum(), rel=1e-12)
    assert first["commitment_fee_usd"] == pytest.approx(3450.28, abs=0.005)  # the review's gap
    assert first["principal_outside_service_usd"] == 0.0  # it read -3,450.28
    assert (table["commitment_fee_usd"].iloc[1:] == 0).all()


@pytest.fixture(scope="module", params=[p.stem for p in SCENARIOS] + ["stepped-ddtl"])
def ready_made(request) -> pd.DataFrame:
    name = request.param
    if name == "stepped-ddtl":
        return project(stepped_ddtl()).monthly.reset_index()
    return project(load_scenario(STACK.parent / f"{name}.toml")).monthly.reset_index()


@pytest.mark.parametrize("years", ["asset", "calendar"])
def test_every_schedule_foots_and_leaves_no_negative_principal_outside(ready_made, years):
    """Every ready-made scenario and the stepped DDTL: a year's debt service is its cash interest
    + commitment fees + principal - the principal outside the service, which is never negative
    (at most the year's principal), and the fees are the months' sums."""
    table = debt_schedule_table(ready_made, years)
    year = year_of(ready_made, years)
    outside = table["principal_outside_service_usd"].to_numpy()
    np.testing.assert_allclose(
        table["debt_service_usd"],
        table["cash_interest_usd"] + table["commitment_fee_usd"] + table["principal_usd"] - outside,
        rtol=1e-12,
        atol=1e-6,
    )
    assert (outside >= 0).all()
    assert (outside <= table["principal_usd"].to_numpy() + 1e-6).all()
    fees = ready_made.groupby(year, sort=False)["commitment_fee_usd"].sum().to_numpy()
    np.testing.assert_allclose(table["commitment_fee_usd"], fees, rtol=1e-12, atol=1e-9)
