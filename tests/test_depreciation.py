"""Tests of econ.depreciation and `econ depreciation`: published spreadsheet examples and IRS
tables, LibreOffice-recalculated schedules, textbook values, invariants and bad input."""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ import depreciation as dep
from econ import excel, load_scenario, project
from econ.catalog import macrs_gds_tables
from econ.cli import main as cli_main
from econ.depreciation import DepreciationError, MethodSettings
from econ.errors import InputError
from tests.conftest import ROOT

TABLES = macrs_gds_tables()

DATA = Path(__file__).resolve().parent / "data" / "depreciation"
MODELS = Path(__file__).resolve().parents[1] / "models"
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def months_for(years: float, start: int = 1, extra: int = 12) -> np.ndarray:
    return np.arange(start + int(np.ceil(years * 12)) + extra)


def annual(x: np.ndarray, start: int = 1) -> np.ndarray:
    """Sums of the asset's years from the in-service month (first row of x)."""
    return dep.yearly_totals(np.atleast_2d(x), start)[0]


def fractional_sum(monthly: np.ndarray, start: int, end_years: float) -> float:
    """Depreciation from the in-service month to a fractional age [years] (linear in a month)."""
    months = end_years * 12
    whole = int(np.floor(months))
    part = months - whole
    return monthly[start : start + whole].sum() + part * monthly[start + whole]


# ---------------------------------------------------------------------------------------------
# published spreadsheet examples (../shared/data/spreadsheet_function_examples.csv)
# ---------------------------------------------------------------------------------------------


def _examples(shared: Path) -> list[dict]:
    rows = []
    with (shared / "spreadsheet_function_examples.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["function"] in ("SLN", "SYD", "DB", "DDB", "VDB"):
                args = {}
                for part in row["arguments"].split(","):
                    key, value = part.split("=")
                    value = value.strip()
                    args[key.strip()] = value.upper() == "TRUE" if value.isalpha() else float(value)
                rows.append({**row, "args": args})
    return rows


def _through_schedule(function: str, a: dict) -> float | None:
    """The example's value read off an econ schedule; None where the schedule differs by design."""
    cost, salvage, life = a["cost"], a["salvage"], a["life"]
    if function == "SLN":
        x = dep.straight_line([cost], [salvage], [life], months_for(life))[0]
        return x[1:13].sum()  # one year of the monthly schedule
    if function == "SYD":
        x = dep.sum_of_years_digits([cost], [salvage], [life], months_for(life))[0]
        return annual(x)[int(a["per"]) - 1]
    if function == "DB":
        month, period = int(a["month"]), int(a["period"])
        if period == int(life) + (month < 12):
            return None  # the final period absorbs DB's rounding (checked separately)
        x = dep.fixed_declining_balance([cost], [salvage], [life], months_for(life + 1), month)[0]
        bounds = [0, month] + [month + 12 * k for k in range(1, int(life) + 1)]
        return x[1 + bounds[period - 1] : 1 + bounds[period]].sum()
    if function == "DDB":
        period = int(a["period"])
        if period == life:
            return None  # without the switch the final period writes off the rest
        months = np.arange(1 + 12 * (period + 1))
        x = dep.declining_balance(
            [cost], [salvage], [life], months, a.get("factor", 2.0), switch_to_straight_line=False
        )[0]
        return annual(x)[period - 1]
    if function == "VDB":
        start, end = a["start"], a["end"]
        months = np.arange(1 + int(np.ceil(12 * end)) + 1)
        x = dep.declining_balance(
            [cost],
            [salvage],
            [life],
            months,
            a.get("factor", 2.0),
            switch_to_straight_line=not a.get("no_switch", False),
        )[0]
        return fractional_sum(x, 1, end) - fractional_sum(x, 1, start)
    raise AssertionError(function)


def test_every_spreadsheet_depreciation_example_through_the_schedules(shared_data):
    rows = _examples(shared_data)
    assert len(rows) >= 20
    checked = 0
    for row in rows:
        got = _through_schedule(row["function"], row["args"])
        if got is None:
            continue
        assert got == pytest.approx(float(row["expected"]), abs=float(row["tolerance"])), row
        checked += 1
    assert checked >= len(rows) - 3


def test_db_final_period_takes_the_rounding_difference(shared_data):
    # Excel's DB example: 1,000,000 cost, 100,000 salvage, 6 years, 7 months in the first year.
    cost, salvage, life, month = 1_000_000.0, 100_000.0, 6, 7
    x = dep.fixed_declining_balance([cost], [salvage], [life], months_for(7), month)[0]
    published = [186083.33, 259639.42, 176814.44, 120410.64, 81999.64, 55841.76, 15845.10]
    bounds = [0, 7] + [7 + 12 * k for k in range(1, 7)]
    periods = [x[1 + bounds[p] : 1 + bounds[p + 1]].sum() for p in range(7)]
    np.testing.assert_allclose(periods[:6], published[:6], atol=0.005)
    # DB's rounded rate (0.319) leaves 3,365.67 above salvage; the last period takes it.
    assert periods[6] == pytest.approx(cost - salvage - sum(periods[:6]))
    assert periods[6] == pytest.approx(15845.10 + (900_000 - sum(published)), abs=0.02)
    assert x.sum() == pytest.approx(cost - salvage)


# ---------------------------------------------------------------------------------------------
# LibreOffice-recalculated schedules (tests/data/depreciation)
# ---------------------------------------------------------------------------------------------


def _libreoffice_cases() -> list[list[dict]]:
    by_case: dict[str, list[dict]] = defaultdict(list)
    with (DATA / "schedule_libreoffice_cases.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            by_case[row["case"]].append(row)
    return list(by_case.values())


LIBREOFFICE = _libreoffice_cases()


def test_libreoffice_cases_cover_every_spreadsheet_method():
    assert sum(len(c) for c in LIBREOFFICE) >= 300
    assert {c[0]["method"] for c in LIBREOFFICE} == {
        "declining_balance",
        "sum_of_years_digits",
        "fixed_declining_balance",
        "straight_line",
    }
    assert all(r["source"].startswith("LibreOffice") for c in LIBREOFFICE for r in c)


@pytest.mark.parametrize("rows", LIBREOFFICE, ids=lambda c: f"case{c[0]['case']}")
def test_schedule_matches_libreoffice(rows):
    first = rows[0]
    method, s = first["method"], int(first["in_service_month"])
    cost, salvage, life = float(first["cost"]), float(first["salvage"]), float(first["life_years"])
    kw = {"method": method, "life_years": life, "salvage_share": salvage / cost}
    if method == "declining_balance":
        kw["factor"] = float(first["factor"])
        kw["switch_to_straight_line"] = first["no_switch"] == "FALSE"
    if method == "fixed_declining_balance":
        kw["first_year_months"] = int(first["first_year_months"])
    months = np.arange(s + 12 * int(np.ceil(life)) + 13)
    x = dep.schedule(MethodSettings(in_service_month=s, **kw), [cost], months, tables=TABLES)[0]
    last_period = max(int(r["index"]) for r in rows)
    for row in rows:
        i, unit, expected = int(row["index"]), row["unit"], float(row["expected"])
        if unit == "year":
            got = x[s + 12 * (i - 1) : s + 12 * i].sum()
        elif unit == "month":
            got = x[s + i - 1]
        else:
            f = int(first["first_year_months"])
            bounds = [0] + [f + 12 * k for k in range(int(life) + 1)]
            got = x[s + bounds[i - 1] : s + bounds[i]].sum()
        true_up = i == last_period and (
            method == "fixed_declining_balance" or first["no_switch"] == "TRUE"
        )
        if not true_up:
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9 * cost), row["formula"]
    assert x.sum() == pytest.approx(cost - salvage, rel=1e-12)
    assert x[:s].sum() == 0.0


# ---------------------------------------------------------------------------------------------
# MACRS GDS: the IRS tables exactly
# ---------------------------------------------------------------------------------------------


def _read_table(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_shipped_macrs_table_holds_the_shared_rows_unchanged(shared_data):
    shipped = _read_table(MODELS / "macrs_gds_tables.csv")
    shared = _read_table(shared_data / "macrs_gds_tables.csv")
    assert shipped[: len(shared)] == shared
    assert all(r["source"].startswith("IRS Publication 946 Table A-") for r in shipped)


def test_every_macrs_table_sums_to_100_00_exactly():
    tables = macrs_gds_tables()
    assert set(tables) == {(y, c) for y in (3, 5, 7) for c in dep.MACRS_CONVENTIONS}
    for key, pct in tables.items():
        assert round(sum(round(p * 100) for p in pct)) == 10_000, key
        assert len(pct) == key[0] + 1, key  # the convention spills into one more year


def test_macrs_published_values():
    # IRS Pub 946 Table A-1, 5-year: 20.00, 32.00, 19.20, 11.52, 11.52, 5.76; A-5 5-year Q4.
    np.testing.assert_array_equal(
        dep.macrs_percent(5, "half-year", tables=TABLES), [20.00, 32.00, 19.20, 11.52, 11.52, 5.76]
    )
    np.testing.assert_array_equal(
        dep.macrs_percent(5, "mid-quarter Q4", tables=TABLES),
        [5.00, 38.00, 22.80, 13.68, 10.94, 9.58],
    )
    np.testing.assert_array_equal(
        dep.macrs_percent(7, "half-year", tables=TABLES),
        [14.29, 24.49, 17.49, 12.49, 8.93, 8.92, 8.93, 4.46],
    )


def _recompute_200db(years: int, first_year_fraction: float) -> list[float]:
    """200% declining balance switching to straight line, by the method IRS Pub 946 describes."""
    rate, basis, left, out = 2.0 / years, 100.0, years - first_year_fraction, []
    d = basis * rate * first_year_fraction
    out.append(d)
    basis -= d
    while basis > 1e-9:
        d = basis if left <= 1 else max(basis * rate, basis / left)
        out.append(min(d, basis))
        basis -= out[-1]
        left -= 1
    return out


@pytest.mark.parametrize(
    "convention, fraction",
    [
        ("half-year", 0.5),
        ("mid-quarter Q1", 10.5 / 12),
        ("mid-quarter Q2", 7.5 / 12),
        ("mid-quarter Q3", 4.5 / 12),
        ("mid-quarter Q4", 1.5 / 12),
    ],
)
@pytest.mark.parametrize("years", [3, 5, 7])
def test_macrs_tables_agree_with_the_200db_method(years, convention, fraction):
    # An independent check of every transcribed table against the method of Pub 946 ch. 4.
    # Rounding and its carry-over move a published year by at most 0.015 from the exact value.
    exact = _recompute_200db(years, fraction)
    np.testing.assert_allclose(
        dep.macrs_percent(years, convention, tables=TABLES), exact, atol=0.015
    )


def _pub946_percent(years: int, convention: str) -> np.ndarray:
    """A table's percentages read from the shipped CSV itself (not through econ.catalog)."""
    rows = [
        r
        for r in _read_table(MODELS / "macrs_gds_tables.csv")
        if r["convention"] == convention and int(r["recovery_years"]) == years
    ]
    return np.array([float(r["percent"]) for r in sorted(rows, key=lambda r: int(r["year"]))])


def _tax_year_sums(monthly: np.ndarray, purchase_month: int = 0) -> np.ndarray:
    """Sums over econ's tax years of a schedule whose month 0 is projection month
    `purchase_month`: projection months 0-12 are tax year 1, 12y+1 .. 12y+12 tax year y+1."""
    calendar = np.concatenate([np.zeros(purchase_month), monthly])
    month = np.arange(calendar.size)
    return np.bincount(np.where(month == 0, 0, (month - 1) // 12), weights=calendar)


def _quarter(projection_month: int) -> int:
    """Quarter of its tax year of a projection month >= 1 (months 1-3 of the year: 1, ...)."""
    return (projection_month - 1) % 12 // 3 + 1


# (convention, in-service month, purchase month): the in-service month is projection month
# purchase + in-service; the mid-quarter ones in the quarter they name.
TAX_YEAR_CASES = [
    ("half-year", 1, 0),
    ("half-year", 7, 0),
    ("half-year", 12, 0),
    ("half-year", 13, 0),
    ("half-year", 1, 18),  # a refresh vintage bought in month 18: in service in month 19
    ("half-year", 4, 30),
    ("mid-quarter Q1", 3, 0),
    ("mid-quarter Q1", 2, 11),  # month 13: the first month of tax year 2
    ("mid-quarter Q2", 4, 0),
    ("mid-quarter Q3", 9, 0),
    ("mid-quarter Q4", 10, 0),
    ("mid-quarter Q4", 12, 0),
    ("mid-quarter Q4", 5, 29),  # month 34: the 10th month of tax year 3
]


@pytest.mark.parametrize("convention, in_service, purchase", TAX_YEAR_CASES)
@pytest.mark.parametrize("years", dep.MACRS_RECOVERY_YEARS)
def test_macrs_table_year_k_is_the_kth_tax_year(years, convention, in_service, purchase):
    # IRS Pub 946 ch. 4: the table's year-k percentage is the deduction of the k-th tax year,
    # the tax year holding the placed-in-service date being year 1 (its convention makes it
    # partial). econ's tax years: projection months 1-12, 13-24, ... (month 0 joins the first).
    cost = 3_535_600.0
    pct = _pub946_percent(years, convention)
    service = purchase + in_service  # projection month placed in service
    first = (service - 1) // 12  # its tax year, 0-based
    months = np.arange(in_service + 12 * (len(pct) + 1))
    x = dep.macrs_gds([cost], months, years, convention, 0.0, in_service, TABLES, purchase)[0]
    expected = np.zeros(first + len(pct) + 2)
    expected[first : first + len(pct)] = cost * pct / 100.0
    sums = _tax_year_sums(x, purchase)
    np.testing.assert_allclose(sums, expected[: sums.size], rtol=0, atol=1e-6)
    assert x[:in_service].sum() == 0.0  # nothing before the asset is placed in service
    assert x.sum() == pytest.approx(cost, rel=1e-12)
    # The first tax year's deduction is spread evenly over its months in service, from the
    # in-service month to the year's end; each later one over its 12 months.
    in_first = 12 * (first + 1) - service + 1
    np.testing.assert_allclose(x[in_service : in_service + in_first], expected[first] / in_first)
    later = x[in_service + in_first : in_service + in_first + 12]
    np.testing.assert_allclose(later, expected[first + 1] / 12.0)


def test_macrs_pub946_examples_by_tax_year():
    # 1,000,000 of 5-year property placed in service in month 7 (the 7th month of tax year 1),
    # half-year: Table A-1 gives 20.00, 32.00, 19.20, 11.52, 11.52, 5.76 % of the basis in
    # tax years 1-6 and nothing in a 7th (econ gave 10, 26, 25.6, 15.36, 11.52, 8.64, 2.88 %
    # when it counted recovery years from the in-service month).
    cost, months = 1_000_000.0, np.arange(90)
    x = dep.macrs_gds([cost], months, 5, "half-year", 0.0, 7, TABLES)[0]
    a1 = _pub946_percent(5, "half-year")
    np.testing.assert_array_equal(a1, [20.00, 32.00, 19.20, 11.52, 11.52, 5.76])
    np.testing.assert_allclose(_tax_year_sums(x)[:8], [*(cost * a1 / 100), 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(x[7:13], cost * 0.20 / 6)  # 20% over months 7-12
    # Placed in service in month 10 (quarter 4 of tax year 1), mid-quarter: Table A-5 gives
    # 5.00 and 38.00 %: 50,000 and 380,000 in tax years 1 and 2 (econ gave 12,500, 132,500).
    x = dep.macrs_gds([cost], months, 5, "mid-quarter Q4", 0.0, 10, TABLES)[0]
    a5 = _pub946_percent(5, "mid-quarter Q4")
    assert a5[:2].tolist() == [5.00, 38.00]
    np.testing.assert_allclose(_tax_year_sums(x)[:7], [*(cost * a5 / 100), 0.0], atol=1e-6)
    # In quarter 1 the same property takes Table A-2: 35 % in tax year 1.
    x = dep.macrs_gds([cost], months, 5, "mid-quarter Q1", 0.0, 1, TABLES)[0]
    a2 = _pub946_percent(5, "mid-quarter Q1")
    assert a2[0] == 35.00
    assert _tax_year_sums(x)[0] == pytest.approx(cost * 0.35, rel=1e-12)


@pytest.mark.parametrize(
    "convention, in_service, purchase, quarter",
    [
        ("mid-quarter Q4", 1, 0, 1),
        ("mid-quarter Q1", 4, 0, 2),
        ("mid-quarter Q3", 12, 0, 4),
        ("mid-quarter Q4", 1, 18, 3),  # projection month 19: the 7th of tax year 2
    ],
)
def test_a_mid_quarter_table_must_be_the_in_service_quarter(
    convention, in_service, purchase, quarter
):
    assert quarter == _quarter(purchase + in_service)
    assert dep.macrs_quarter(in_service, purchase) == quarter
    with pytest.raises(DepreciationError) as err:
        dep.macrs_gds([1000.0], np.arange(90), 5, convention, 0.0, in_service, TABLES, purchase)
    message = str(err.value)
    assert message.startswith(f"convention = '{convention}': expected 'mid-quarter Q{quarter}'")
    assert f"placed in service in month {purchase + in_service}, month " in message
    assert f"it is in quarter {quarter}," in message
    # The half-year convention applies in any quarter (the 40% test is the scenario's choice).
    dep.macrs_gds([1000.0], np.arange(90), 5, "half-year", 0.0, in_service, TABLES, purchase)


def test_a_mid_quarter_mismatch_names_the_row_of_several():
    with pytest.raises(DepreciationError, match=r"^scenario row 1: convention = 'mid-quarter Q2'"):
        dep.macrs_gds(
            [1.0, 1.0], np.arange(90), 5, ["mid-quarter Q1", "mid-quarter Q2"], 0.0, 1, TABLES
        )
    with pytest.raises(DepreciationError, match="purchase_month = -1: expected a whole"):
        dep.macrs_gds([1.0], np.arange(90), 5, "half-year", 0.0, 1, TABLES, -1)


def test_macrs_bonus_in_service_month_then_table_on_the_rest():
    cost = np.array([1000.0, 1000.0, 1000.0])
    x = dep.macrs_gds(cost, np.arange(80), 5, "half-year", [0.0, 0.4, 1.0], tables=TABLES)
    assert x[:, 1] == pytest.approx([200 / 12, 400 + 0.6 * 200 / 12, 1000.0])
    np.testing.assert_allclose(annual(x[1:2])[:6], [400 + 120, 192, 115.2, 69.12, 69.12, 34.56])
    assert x[2, 2:].sum() == 0.0
    np.testing.assert_allclose(x.sum(axis=1), 1000.0)


def test_macrs_rows_may_use_different_tables():
    x = dep.macrs_gds(
        [100.0, 100.0],
        np.arange(120),
        [3, 7],
        ["half-year", "mid-quarter Q4"],
        in_service_month=[1, 10],
        tables=TABLES,
    )
    np.testing.assert_allclose(_tax_year_sums(x[0])[:4], [33.33, 44.45, 14.81, 7.41])
    np.testing.assert_allclose(_tax_year_sums(x[1])[:8], _pub946_percent(7, "mid-quarter Q4"))


# ---------------------------------------------------------------------------------------------
# other methods: reference values
# ---------------------------------------------------------------------------------------------


def test_straight_line_matches_the_engine_function_and_sln():
    m = np.arange(80)
    cost, salvage = np.array([3_535_600.0, 1000.0]), np.array([0.0, 100.0])
    life = np.array([6.0, 5.55])
    x = dep.straight_line(cost, salvage, life, m)
    np.testing.assert_allclose(x, dep.straight_line_monthly(cost, salvage, life * 12, m))
    assert x[0, 1] == pytest.approx(float(excel.sln(3_535_600.0, 0.0, 72)))  # 49,105.56
    assert x[0, 1] == pytest.approx(49_105.555555, abs=1e-5)
    # 5.55 years = 66.6 months: the 67th month takes 0.6 of a month.
    assert x[1, 67] == pytest.approx(0.6 * 900 / 66.6)


def test_units_of_production_textbook_example():
    # Kieso, Weygandt & Warfield, Intermediate Accounting, ch. 11 (activity method): a crane
    # costing 500,000 with 50,000 salvage and a life of 30,000 hours, used 800 hours in year 1,
    # is depreciated (500,000 - 50,000) / 30,000 x 800 = 12,000.
    usage = np.zeros((1, 61))
    usage[0, 1:13] = 800 / 12
    x = dep.units_of_production(
        [500_000.0], [50_000.0], usage, np.arange(61), [5.0], lifetime_usage=[30_000.0]
    )
    assert x[0, 1:13].sum() == pytest.approx(12_000.0)
    assert x.sum() == pytest.approx(450_000.0)  # the unused hours are written off at the end


def test_units_of_production_follows_tokens():
    m = np.arange(49)
    tokens = np.where(m >= 1, 1.0 + m, 0.0)[None, :].repeat(2, axis=0)
    x = dep.units_of_production([1000.0, 1000.0], [0.0, 100.0], tokens, m, [4.0, 4.0])
    np.testing.assert_allclose(x[:, 1:] / x[:, 1:2], tokens[:, 1:] / tokens[:, 1:2])
    np.testing.assert_allclose(x.sum(axis=1), [1000.0, 900.0])


def test_units_of_production_without_usage_falls_back_to_straight_line():
    m = np.arange(30)
    x = dep.units_of_production([1200.0], [0.0], np.zeros((1, 30)), m, [2.0])
    np.testing.assert_allclose(x, dep.straight_line([1200.0], [0.0], [2.0], m))


def test_units_of_production_past_the_months_given_continues_the_last_months_usage():
    # A 6-year life over 60 projected months with even usage is straight line: 100 a month of a
    # 7,200 base, 1,200 left after month 60 (IAS 16.62: the base over the usage expected over the
    # life). The 12 months of the life after the grid were counted as no usage, so the 60 months
    # took it all, 120 a month (llama2-70b-h200 with units_of_production over GPU-hours and a
    # 6-year life: sold in month 60 at a book value of 0 where straight line leaves 1,061,667).
    m = np.arange(61)
    usage = np.where(m >= 1, 3.0, 0.0)[None, :]
    x = dep.units_of_production([7_200.0], [0.0], usage, m, [6.0])
    np.testing.assert_allclose(x, dep.straight_line([7_200.0], [0.0], [6.0], m))
    assert 7_200.0 - x.sum() == pytest.approx(1_200.0)
    # Usage that stops within the months given stops the depreciation with it.
    stops = np.where((m >= 1) & (m <= 30), 3.0, 0.0)[None, :]
    y = dep.units_of_production([7_200.0], [0.0], stops, m, [6.0])
    assert y.sum() == pytest.approx(7_200.0)
    assert y[0, 31:].sum() == 0.0
    # A given lifetime usage is used as given.
    z = dep.units_of_production([7_200.0], [0.0], usage, m, [6.0], lifetime_usage=[720.0])
    assert z[0, 1] == pytest.approx(30.0)


def test_cli_units_of_production_change_of_estimate_does_not_restate_the_past(capsys):
    # ASC 250-10-45-17: 5 units a month over a 6-year life (360 units) is 166.67 a year of 1,000;
    # re-estimated from month 25 to 4 years, the 666.67 left goes over the 24 months left. The
    # command's months end with the new life (48), and the usage of the original life was
    # counted over them only (240 units): 250 a year from year 1, the past restated.
    argv = ["--cost", "1000", "--method", "units_of_production", "--usage", "5"]
    argv += ["--change-month", "25", "--change-life-years", "4", "--format", "json"]
    assert cli_main(["depreciation", *argv]) == 0
    yearly = json.loads(capsys.readouterr().out)["yearly"]
    got = [row["book_depreciation_usd"] for row in yearly]
    assert got == pytest.approx([166.666667, 166.666667, 333.333333, 333.333333], abs=1e-6)


def test_economic_depreciation_follows_the_market_value():
    # A GPU worth 50% of cost after 24 months (GPU lease index, secondary: 45-55%), 10% at 72.
    m = np.arange(73)
    value = dep.value_share_from_table([0, 24, 72], [1.0, 0.5, 0.1], m)
    x = dep.economic([1000.0], [0.0], value, m, [6.0])[0]
    book = 1000.0 - np.cumsum(x)
    assert book[24] == pytest.approx(500.0)
    assert book[48] == pytest.approx(300.0)
    assert x[1] == pytest.approx(500.0 / 24)
    assert x[-1] == pytest.approx(100 + 400.0 / 48)  # the last month writes off to salvage 0
    assert x.sum() == pytest.approx(1000.0)


def test_economic_never_books_a_rise_in_value_and_stops_at_salvage():
    m = np.arange(37)
    price = np.where(m < 12, 1.0 - m / 24, np.where(m < 20, 1.2, 0.05))[None, :]
    x = dep.economic([1000.0], [200.0], price, m, [3.0])[0]
    assert (x >= 0).all()
    book = 1000.0 - np.cumsum(x)
    assert book.min() == pytest.approx(200.0)
    assert x[12:20].sum() == 0.0
    assert x.sum() == pytest.approx(800.0)


def test_custom_schedule():
    x = dep.custom([1000.0], [100.0], [40, 30, 20, 10], np.arange(60), in_service_month=3)[0]
    np.testing.assert_allclose(annual(x, 3)[:4], [360, 270, 180, 90])
    assert x[:3].sum() == 0.0


def test_declining_balance_without_switch_writes_off_the_rest_in_the_last_month():
    m = np.arange(62)
    x = dep.declining_balance([2400.0], [300.0], [5.0], m, 2.0, False)[0]
    years = annual(x)
    for k in range(1, 5):
        assert years[k - 1] == pytest.approx(float(excel.ddb(2400, 300, 5, k)))
    assert x.sum() == pytest.approx(2100.0)


# ---------------------------------------------------------------------------------------------
# change of estimate, disposal
# ---------------------------------------------------------------------------------------------


def test_change_of_estimate_straight_line_six_to_four_years():
    # A 6-year asset re-estimated at the start of year 3 to a 4-year life: the book value of
    # 2/3 of cost is depreciated over the 24 months left (ASC 250-10-45-17, prospective).
    m = np.arange(80)
    settings_ = MethodSettings(life_years=6.0, change_month=25, change_life_years=4.0)
    x = dep.schedule(settings_, [720.0], m, tables=TABLES)[0]
    assert x[1:25] == pytest.approx(np.full(24, 10.0))
    assert x[25:49] == pytest.approx(np.full(24, 480.0 / 24))
    assert x[49:].sum() == 0.0
    assert x.sum() == pytest.approx(720.0)


def test_change_of_estimate_longer_life_and_other_methods():
    m = np.arange(130)
    for method in dep.CHANGE_OF_ESTIMATE_METHODS:
        settings_ = MethodSettings(
            method=method,
            life_years=4.0,
            salvage_share=0.1,
            in_service_month=3,
            change_month=20,
            change_life_years=8.0,
        )
        usage = np.ones((1, 130))
        x = dep.schedule(settings_, [1000.0], m, usage=usage, tables=TABLES)[0]
        unchanged = dep.schedule(
            MethodSettings(method=method, life_years=4.0, salvage_share=0.1, in_service_month=3),
            [1000.0],
            m,
            usage=usage,
            tables=TABLES,
        )[0]
        assert x[:20] == pytest.approx(unchanged[:20]), method
        assert x.sum() == pytest.approx(900.0), method
        assert x[3 + 96 :].sum() == pytest.approx(0.0, abs=1e-9), method
        if method != "declining_balance":  # a declining balance may reach salvage earlier
            assert x[3 + 95] > 0, method


@given(
    life=st.floats(1.0, 10.0),
    new_life=st.floats(0.5, 12.0),
    change=st.integers(2, 150),
    salvage=st.floats(0.0, 0.5),
    method=st.sampled_from(dep.CHANGE_OF_ESTIMATE_METHODS),
)
@SETTINGS
def test_change_of_estimate_keeps_the_total_equal_to_the_base(
    life, new_life, change, salvage, method
):
    last = int(np.ceil(life * 12 - 1e-9))
    elapsed = (change - 1) / 12
    if change > last or new_life <= elapsed + 1e-6:
        return
    m = np.arange(1 + int(np.ceil(max(life, new_life) * 12)) + 2)
    settings_ = MethodSettings(
        method=method,
        life_years=life,
        salvage_share=salvage,
        change_month=change,
        change_life_years=new_life,
    )
    x = dep.schedule(settings_, [1000.0], m, usage=np.ones((1, m.size)), tables=TABLES)[0]
    assert x.sum() == pytest.approx(1000.0 * (1 - salvage), rel=1e-9)
    assert (x >= -1e-9).all()
    assert (1000.0 - np.cumsum(x)).min() >= 1000.0 * salvage - 1e-6


def test_disposal_gain_and_loss():
    m = np.arange(73)
    x = dep.straight_line([7200.0], [0.0], [6.0], m)
    out = dep.dispose(x, [7200.0], m, [24], [5000.0])
    assert out.depreciation_usd[0, 25:].sum() == 0.0
    assert out.depreciation_usd[0].sum() == pytest.approx(2400.0)
    assert out.gain_usd[0, 24] == pytest.approx(5000.0 - 4800.0)
    assert out.proceeds_usd[0].sum() == 5000.0
    assert out.carrying_amount_usd[0, 23] == pytest.approx(4900.0)
    assert out.carrying_amount_usd[0, 24:].sum() == 0.0
    loss = dep.dispose(x, [7200.0], m, [24], [1000.0])
    assert loss.gain_usd[0, 24] == pytest.approx(-3800.0)
    same = dep.dispose(x, [7200.0], m, [np.nan], [0.0])
    np.testing.assert_array_equal(same.depreciation_usd, x)
    assert same.gain_usd.sum() == 0.0


def test_disposal_rows_in_any_month_as_masks_over_every_month():
    # Rows sold within the months, in the last one, after them and never: each line as the
    # masks over every month give it (the sale month is set alone), bit for bit.
    m = np.arange(1, 73)
    cost = np.array([7200.0, 7200.0, 7200.0, 7200.0, 7200.0])
    x = dep.straight_line(cost, np.zeros(5), np.full(5, 10.0), m)
    retire, sale = np.array([24.0, 72.0, 90.0, np.nan, 1.0]), np.array([5e3, 1e3, 2e3, 0.0, 7e3])
    out = dep.dispose(x, cost, m, retire, sale)
    r = np.where(retire > 0, retire, np.inf)[:, None]
    carrying = cost[:, None] - np.cumsum(np.where(m <= r, x, 0.0), axis=1)
    np.testing.assert_array_equal(out.depreciation_usd, np.where(m <= r, x, 0.0))
    np.testing.assert_array_equal(out.proceeds_usd, np.where(m == r, sale[:, None], 0.0))
    np.testing.assert_array_equal(out.gain_usd, np.where(m == r, sale[:, None] - carrying, 0.0))
    np.testing.assert_array_equal(out.carrying_amount_usd, np.where(m >= r, 0.0, carrying))
    assert out.carrying_amount_usd[1, -1] == 0.0 and out.carrying_amount_usd[2, -1] > 0.0


@given(
    r=st.integers(1, 80),
    sale=st.floats(0, 2000),
    method=st.sampled_from(["straight_line", "declining_balance", "sum_of_years_digits"]),
)
@SETTINGS
def test_disposal_accounts_for_the_whole_cost(r, sale, method):
    m = np.arange(85)
    x = dep.schedule(
        MethodSettings(method=method, life_years=5.0, salvage_share=0.1), [1000.0], m, tables=TABLES
    )
    out = dep.dispose(x, [1000.0], m, [r], [sale])
    # cost = depreciation + carrying amount derecognized = depreciation + proceeds - gain
    total = out.depreciation_usd.sum() + out.proceeds_usd.sum() - out.gain_usd.sum()
    assert total == pytest.approx(1000.0)


# ---------------------------------------------------------------------------------------------
# invariants of every method
# ---------------------------------------------------------------------------------------------

LIFE_METHODS = [
    "straight_line",
    "declining_balance",
    "fixed_declining_balance",
    "sum_of_years_digits",
    "units_of_production",
    "economic",
]


@given(
    method=st.sampled_from(LIFE_METHODS),
    cost=st.floats(1.0, 1e8),
    salvage=st.floats(0.0, 0.9),
    life=st.floats(0.5, 12.0),
    start=st.integers(1, 13),
    factor=st.floats(0.3, 4.0),
    switch=st.booleans(),
    first=st.integers(1, 12),
    data=st.data(),
)
@SETTINGS
def test_every_schedule_sums_to_the_base_and_keeps_book_value_above_salvage(
    method, cost, salvage, life, start, factor, switch, first, data
):
    if method == "fixed_declining_balance":
        life = float(max(1, round(life)))
    m = np.arange(start + int(np.ceil(life * 12)) + 14)
    usage = np.asarray(data.draw(st.lists(st.floats(0, 1e6), min_size=m.size, max_size=m.size)))
    value = np.cumprod(data.draw(st.lists(st.floats(0.8, 1.1), min_size=m.size, max_size=m.size)))
    settings_ = MethodSettings(
        method=method,
        life_years=life,
        salvage_share=salvage,
        in_service_month=start,
        factor=factor,
        switch_to_straight_line=switch,
        first_year_months=first,
    )
    x = dep.schedule(
        settings_, [cost], m, usage=usage[None, :], value_curve=value[None, :], tables=TABLES
    )[0]
    base = cost * (1 - salvage)
    assert x.sum() == pytest.approx(base, rel=1e-9, abs=1e-9 * cost)
    assert (x >= -1e-9 * cost).all()
    assert x[:start].sum() == 0.0
    book = cost - np.cumsum(x)
    assert book.min() >= cost * salvage - 1e-7 * cost
    end = start + int(np.ceil(life * 12 - 1e-9))
    assert x[end:].sum() == pytest.approx(0.0, abs=1e-9 * cost)


@given(
    percent=st.lists(st.floats(0.0, 100.0), min_size=1, max_size=8),
    start=st.integers(1, 6),
)
@SETTINGS
def test_custom_sums_to_the_base(percent, start):
    total = sum(percent)
    if total <= 0:
        return
    p = [100.0 * x / total for x in percent]
    p[-1] = 100.0 - sum(p[:-1])
    if p[-1] < 0:
        return
    m = np.arange(start + 12 * len(p) + 3)
    x = dep.custom([500.0], [50.0], p, m, start)[0]
    assert x.sum() == pytest.approx(450.0)
    np.testing.assert_allclose(annual(x, start)[: len(p)], 4.5 * np.array(p), atol=1e-9)


@given(
    years=st.sampled_from(dep.MACRS_RECOVERY_YEARS),
    mid_quarter=st.booleans(),
    bonus=st.floats(0, 1),
    cost=st.floats(0, 1e9),
    in_service=st.integers(1, 40),
    purchase=st.integers(0, 40),
)
@SETTINGS
def test_macrs_tax_years_hold_the_table(years, mid_quarter, bonus, cost, in_service, purchase):
    # Whatever the months: each tax year from the in-service one deducts cost x its table
    # percentage (bonus in the first), the whole schedule the basis, nothing before service.
    service = purchase + in_service
    convention = f"mid-quarter Q{_quarter(service)}" if mid_quarter else "half-year"
    pct = _pub946_percent(years, convention)
    months = np.arange(in_service + 12 * (years + 2))
    x = dep.macrs_gds([cost], months, years, convention, bonus, in_service, TABLES, purchase)[0]
    first = (service - 1) // 12
    expected = np.zeros(first + years + 4)
    expected[first : first + len(pct)] = (1 - bonus) * cost * pct / 100.0
    expected[first] += bonus * cost
    sums = _tax_year_sums(x, purchase)
    np.testing.assert_allclose(sums, expected[: sums.size], rtol=1e-12, atol=1e-6)
    assert x.sum() == pytest.approx(cost, rel=1e-12, abs=1e-6)
    assert (x >= 0).all()
    assert not x[:in_service].any()


def test_in_service_month_shifts_the_schedule():
    m = np.arange(100)
    for method in ["straight_line", "declining_balance", "sum_of_years_digits"]:
        a = dep.schedule(MethodSettings(method=method, life_years=5.5), [1000.0], m, tables=TABLES)[
            0
        ]
        b = dep.schedule(
            MethodSettings(method=method, life_years=5.5, in_service_month=7),
            [1000.0],
            m,
            tables=TABLES,
        )[0]
        np.testing.assert_allclose(b[7:], a[1:-6])


def test_schedules_are_vectorized_over_scenarios():
    m = np.arange(90)
    life = np.array([3.0, 4.5, 6.0, 7.0])
    salvage = np.array([0.0, 0.1, 0.2, 0.05])
    cost = np.array([1e6, 2e6, 3e6, 4e6])
    factor = np.array([2.0, 1.5, 2.5, 1.0])
    together = dep.declining_balance(cost, salvage * cost, life, m, factor)
    for i in range(4):
        alone = dep.declining_balance(
            cost[i : i + 1], salvage[i : i + 1] * cost[i], life[i : i + 1], m, factor[i]
        )
        np.testing.assert_allclose(together[i], alone[0])


def test_all_registered_methods_dispatch():
    m = np.arange(100)
    for method in dep.METHOD_NAMES:
        kw = {"custom_percent": [50, 30, 20]} if method == "custom" else {}
        x = dep.schedule(
            MethodSettings(method=method, life_years=5.0, **kw),
            [1000.0, 2000.0],
            m,
            usage=np.ones((2, 100)),
            value_curve=np.linspace(1, 0, 100)[None, :].repeat(2, 0),
            tables=TABLES,
        )
        assert x.shape == (2, 100)
        np.testing.assert_allclose(x.sum(axis=1), [1000.0, 2000.0], err_msg=method)


@pytest.mark.parametrize(
    "settings_",
    [
        MethodSettings(),
        MethodSettings(salvage_share=0.1),
        MethodSettings(method="declining_balance"),
        MethodSettings(method="sum_of_years_digits", life_years=5.5),
        MethodSettings(method="fixed_declining_balance", salvage_share=0.1, first_year_months=7),
        MethodSettings(method="macrs_gds", bonus_share=0.4),
        MethodSettings(method="custom", custom_percent=(50, 30, 20, 0)),
        MethodSettings(method="economic", salvage_share=0.1),
        MethodSettings(change_month=25, change_life_years=4.0),
    ],
    ids=lambda s: s.method,
)
def test_schedules_of_huge_costs_end_exactly_at_salvage(settings_):
    # 6-year straight line on 1e300 USD takes 1e300 / 72 a month, each rounded by ~1e284; the
    # 72 rounded months summed to more than the cost and left a book value of -1.8e284. The
    # last month of depreciation takes the remainder, so the running total is cost - salvage
    # to the last bit: the book value ends at 0 exactly, or at cost - (cost - salvage) with a
    # salvage (1e299 here: cost - 0.9 cost is exact). (1e308 overflows some methods' products:
    # the command refuses it, test_cli_costs_whose_figures_overflow_are_refused.)
    cost = np.array([1e300, 3_535_600.0])
    m = np.arange(80)
    value = np.linspace(1.0, 0.0, 80)[None, :].repeat(2, 0)
    x = dep.schedule(settings_, cost, m, value_curve=value, tables=TABLES, exact_end=True)
    salvage = settings_.salvage_share * cost
    book = dep.book_value(cost, x)
    np.testing.assert_array_equal(book[:, -1], cost - (cost - salvage))
    assert np.all(x >= 0) and np.all(book >= salvage[:, None] * (1 - 1e-12))
    if settings_.salvage_share == 0.1:
        assert book[0, -1] == 1e299
    # At ordinary costs the remainder is the month it replaces, to rounding: 3,535,600 / 72 =
    # 49,105.555... in the last month of straight line.
    if settings_ == MethodSettings():
        assert x[1, 72] == pytest.approx(3_535_600 / 72, rel=1e-12)


def test_a_schedule_cut_short_by_the_months_keeps_its_last_month():
    # 72 months of 6-year straight line shown through month 40 only: 40 x 1000 / 72, no
    # remainder put into month 40 (the schedule has not ended).
    x = dep.schedule(MethodSettings(), [1000.0], np.arange(41), exact_end=True)
    assert x[0, 40] == pytest.approx(1000 / 72, rel=1e-15)
    assert x[0].sum() == pytest.approx(40 * 1000 / 72, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------

M = np.arange(80)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dep.straight_line([-1.0], [0.0], [5.0], M), r"cost_usd = -1: expected a cost"),
        (lambda: dep.straight_line([100.0], [150.0], [5.0], M), r"salvage_usd = 150: .*at most"),
        (lambda: dep.straight_line([100.0], [-1.0], [5.0], M), r"salvage_usd = -1"),
        (lambda: dep.straight_line([100.0], [0.0], [0.0], M), r"life_years = 0: expected a useful"),
        (lambda: dep.sum_of_years_digits([100.0], [0.0], [-2.0], M), r"life_years = -2"),
        (lambda: dep.straight_line([100.0], [0.0], [5.0], M, 0), r"in_service_month = 0"),
        (
            lambda: dep.fixed_declining_balance([100.0], [10.0], [5.0], M, 13),
            r"first_year_months = 13: expected a whole number of months from 1 to 12",
        ),
        (
            lambda: dep.fixed_declining_balance([100.0], [10.0], [5.0], M, 0),
            r"first_year_months = 0",
        ),
        (lambda: dep.fixed_declining_balance([100.0], [10.0], [5.5], M), r"whole number of years"),
        (lambda: dep.declining_balance([100.0], [10.0], [5.0], M, 0.0), r"factor = 0"),
        (
            lambda: dep.custom([100.0], [0.0], [50, 40], M),
            r"sum of custom_percent = 90: .*sum to 100",
        ),
        (lambda: dep.custom([100.0], [0.0], [120, -20], M), r"custom_percent = -20"),
        (
            lambda: dep.macrs_gds([100.0], M, 4, tables=TABLES),
            r"recovery_years = 4.*valid tables: 3-year",
        ),
        (
            lambda: dep.macrs_gds([100.0], M, 5, "mid-month", tables=TABLES),
            r"convention = 'mid-month'",
        ),
        (
            lambda: dep.macrs_gds([100.0], M, 5, "half-year", 1.5, tables=TABLES),
            r"bonus_share = 1.5",
        ),
        (lambda: dep.units_of_production([100.0], [0.0], None, M, [5.0]), r"needs usage"),
        (
            lambda: dep.units_of_production([100.0], [0.0], -np.ones((1, 80)), M, [5.0]),
            r"usage = -1",
        ),
        (lambda: dep.economic([100.0], [0.0], None, M, [5.0]), r"needs a value curve"),
        (lambda: dep.straight_line([100.0], [0.0], [5.0], [0, 2, 3]), r"consecutive"),
        (lambda: dep.value_share_from_table([0, 24, 12], [1, 0.5, 0.2], M), r"increasing"),
    ],
)
def test_bad_input_raises_a_clear_input_error(call, message):
    with pytest.raises(DepreciationError, match=message) as info:
        call()
    assert isinstance(info.value, InputError)


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(DepreciationError) as info:
        MethodSettings(method="straigth_line")
    text = str(info.value)
    assert "'straigth_line'" in text
    for name in dep.METHOD_NAMES:
        assert name in text


@pytest.mark.parametrize(
    "settings_, message",
    [
        (
            MethodSettings(life_years=6.0, change_month=80, change_life_years=8.0),
            r"change_month = 80: .*beyond the life",
        ),
        (
            MethodSettings(
                life_years=6.0, in_service_month=10, change_month=5, change_life_years=8.0
            ),
            r"change_month = 5: expected a month after the in-service month",
        ),
        (
            MethodSettings(life_years=6.0, change_month=37, change_life_years=2.0),
            r"change_life_years = 2: .*longer than the time already in service \(3 years\)",
        ),
        (
            MethodSettings(method="macrs_gds", change_month=13, change_life_years=2.0),
            r"change_month = 13: expected 0 .* for macrs_gds",
        ),
        (MethodSettings(method="macrs_gds", salvage_share=0.1), r"salvage_share = 0.1"),
        (MethodSettings(salvage_share=1.5), r"salvage_share = 1.5: expected a share"),
    ],
)
def test_bad_settings(settings_, message):
    with pytest.raises(DepreciationError, match=message):
        dep.schedule(settings_, [1000.0], np.arange(120), tables=TABLES)


def test_bad_row_is_named():
    with pytest.raises(DepreciationError, match=r"scenario row 2"):
        dep.straight_line([1.0, 2.0, -3.0], 0.0, 5.0, M)


def test_disposal_with_the_carrying_amount_given_is_the_same():
    m = np.arange(73)
    x = dep.straight_line([7200.0, 1000.0], [0.0, 0.1], [6.0, 3.0], m)
    impairment = np.zeros_like(x)
    impairment[1, 10] = 50.0
    args = (x, [7200.0, 1000.0], m, [24, 40], [5000.0, 0.0], impairment)
    given_ = dep.dispose(*args, carrying_usd=dep.book_value([7200.0, 1000.0], x, impairment))
    plain = dep.dispose(*args)
    for name in ("depreciation_usd", "carrying_amount_usd", "proceeds_usd", "gain_usd"):
        np.testing.assert_array_equal(getattr(given_, name), getattr(plain, name))
    with pytest.raises(DepreciationError, match=r"carrying_usd has shape \(2, 72\)"):
        dep.dispose(*args, carrying_usd=np.zeros((2, 72)))


def test_disposal_before_service_is_refused():
    x = dep.straight_line([100.0], [0.0], [5.0], M, 6)
    with pytest.raises(DepreciationError, match=r"retirement_month = 3: .*start after end"):
        dep.dispose(x, [100.0], M, [3], [10.0], in_service_month=6)


def test_macrs_needs_tables_passed_in():
    # econ.depreciation reads no file: the tables come from econ.catalog (or the caller).
    with pytest.raises(DepreciationError, match=r"tables=econ.catalog.macrs_gds_tables\(\)"):
        dep.macrs_gds([100.0], M, 5)
    own = {(5, "half-year"): np.array([50.0, 50.0])}
    x = dep.macrs_gds([100.0], np.arange(30), 5, tables=own)[0]
    assert x[1:13].sum() == pytest.approx(50.0) and x.sum() == pytest.approx(100.0)


def test_macrs_table_file_errors(tmp_path):
    with pytest.raises(DepreciationError, match="cannot read the MACRS tables"):
        macrs_gds_tables(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("table,convention,recovery_years,year,percent,source\nA-1,half-year,5,x,1,s\n")
    with pytest.raises(DepreciationError, match=r"bad.csv, line 2"):
        macrs_gds_tables(bad)


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------


def test_cli_book_tax_and_deferred_tax_by_year(capsys):
    code = cli_main(
        [
            "depreciation",
            "--cost",
            "3535600",
            "--method",
            "straight_line",
            "--life-years",
            "6",
            "--tax-method",
            "macrs_gds",
            "--recovery-years",
            "5",
            "--convention",
            "half-year",
            "--bonus-share",
            "0",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    years = out["yearly"]
    assert [y["year"] for y in years] == [1, 2, 3, 4, 5, 6]
    assert years[0]["book_depreciation_usd"] == pytest.approx(589_266.666667)
    assert years[0]["tax_depreciation_usd"] == pytest.approx(707_120.0)  # 20.00% (Table A-1)
    # Deferred tax liability = 21% x (tax - book) depreciation to date.
    assert years[0]["deferred_tax_liability_usd"] == pytest.approx(
        0.21 * (707_120 - 589_266.67), abs=0.01
    )
    assert years[-1]["deferred_tax_liability_usd"] == pytest.approx(0.0, abs=1e-6)
    assert len(out["monthly"]) == 73


@pytest.mark.parametrize(
    "convention, in_service", [("half-year", 7), ("mid-quarter Q4", 10), ("mid-quarter Q2", 17)]
)
def test_cli_macrs_by_tax_year(capsys, convention, in_service):
    # The command's years are econ's tax years (months 1-12, 13-24, ...): the k-th from the one
    # the asset is placed in service in takes the table's year k (IRS Pub 946).
    argv = ["--cost", "1000000", "--tax-method", "macrs_gds", "--convention", convention]
    argv += ["--in-service-month", str(in_service), "--by", "year", "--format", "json"]
    assert cli_main(["depreciation", *argv]) == 0
    years = json.loads(capsys.readouterr().out)["yearly"]
    tax = np.array([y["tax_depreciation_usd"] for y in years])
    first = (in_service - 1) // 12
    pct = _pub946_percent(5, convention)
    expected = np.zeros(tax.size)
    expected[first : first + pct.size] = 10_000.0 * pct
    np.testing.assert_allclose(tax, expected, rtol=0, atol=1e-6)
    assert years[-1]["tax_basis_usd"] == 0.0


def test_cli_table_and_csv(capsys):
    assert cli_main(["depreciation", "--cost", "1000", "--life-years", "2", "--by", "year"]) == 0
    text = capsys.readouterr().out
    assert "By year" in text and "book_depreciation" in text and "500.00" in text
    assert cli_main(["depreciation", "--cost", "1000", "--life-years", "1", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("month,book_depreciation_usd")
    assert len(lines) == 14


def test_cli_retirement_and_change_of_estimate(capsys):
    code = cli_main(
        [
            "depreciation",
            "--cost",
            "7200",
            "--life-years",
            "6",
            "--change-month",
            "25",
            "--change-life-years",
            "4",
            "--retirement-month",
            "40",
            "--sale-value",
            "2000",
            "--format",
            "json",
            "--by",
            "year",
        ]
    )
    assert code == 0
    years = json.loads(capsys.readouterr().out)["yearly"]
    assert years[0]["book_depreciation_usd"] == pytest.approx(1200.0)
    assert years[2]["book_depreciation_usd"] == pytest.approx(12 * 200.0)  # 4800 / 24 a month
    assert years[3]["book_gain_usd"] == pytest.approx(2000 - (4800 - 16 * 200))


def test_cli_retirement_in_month_0_is_refused_naming_the_first_month_allowed(capsys):
    # Month 0 is the purchase month, before the in-service month (default 1), and a retirement
    # before service is refused (as month 3 is for an asset in service from month 5). It used to
    # print proceeds 0, book value 1,000,000 and gain 0: no sale at all.
    assert cli_main(["depreciation", "--cost", "1e6", "--retirement-month", "0"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "error: --retirement-month = 0: expected a month from 1 to 600 at or after the "
        "in-service month (month 0 is the purchase month, before service)"
    )
    # The first month allowed: 6-year straight line takes 1e6 / 72 = 13,888.89 in month 1, so
    # the sale at book value brings 1e6 - 13,888.89 = 986,111.11, no gain, book value 0 after.
    code = cli_main(
        ["depreciation", "--cost", "1e6", "--retirement-month", "1", "--format", "json"]
    )
    assert code == 0
    month_1 = json.loads(capsys.readouterr().out)["monthly"][1]
    assert month_1["proceeds_usd"] == pytest.approx(1e6 - 1e6 / 72, abs=1e-6)
    assert month_1["book_gain_usd"] == 0.0 and month_1["book_value_usd"] == 0.0


def test_cli_sale_value_without_retirement_month_is_refused(capsys):
    # Without a retirement month there is no sale, and --sale-value was silently ignored.
    assert cli_main(["depreciation", "--cost", "1e6", "--sale-value", "5"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "error: --sale-value = 5.0: expected it with --retirement-month, the month of the sale "
        "(without one the asset is not sold)"
    )
    # With one it is the proceeds: 12 months of 6-year straight line leave 1e6 - 12 x 1e6 / 72
    # = 833,333.33 of book value, so selling for 5 is a loss of 833,328.33.
    argv = ["--cost", "1e6", "--sale-value", "5", "--retirement-month", "12", "--format", "json"]
    assert cli_main(["depreciation", *argv]) == 0
    month_12 = json.loads(capsys.readouterr().out)["monthly"][12]
    assert month_12["proceeds_usd"] == 5.0
    assert month_12["book_gain_usd"] == pytest.approx(5 - (1e6 - 12 * 1e6 / 72), abs=1e-6)


def test_cli_months_before_the_retirement_month_are_refused(capsys):
    # The sale in month 40 lies beyond 10 months shown: it raised an IndexError (exit 1).
    argv = ["--cost", "1e6", "--retirement-month", "40", "--months", "10"]
    assert cli_main(["depreciation", *argv]) == 3
    assert capsys.readouterr().err.strip() == (
        "error: --months = 10: expected at least --retirement-month (40), so the months shown "
        "include the sale"
    )
    # Month 10 itself is shown: 1e6 - 10 x 1e6 / 72 = 861,111.11 of proceeds at book value.
    argv = ["--cost", "1e6", "--retirement-month", "10", "--months", "10", "--format", "json"]
    assert cli_main(["depreciation", *argv]) == 0
    month_10 = json.loads(capsys.readouterr().out)["monthly"][10]
    assert month_10["proceeds_usd"] == pytest.approx(1e6 - 10 * 1e6 / 72, abs=1e-6)


@pytest.mark.parametrize("cost", [1e300, 1e308])
def test_cli_huge_cost_ends_its_schedule_at_0(capsys, cost):
    # 6-year straight line: year k ends at cost (6 - k) / 6, and year 6 at 0 exactly (it printed
    # -1.78e284 for 1e300 and 1.6e293 for 1e308, the rounding of 72 monthly amounts).
    code = cli_main(["depreciation", "--cost", repr(cost), "--by", "year", "--format", "json"])
    assert code == 0
    years = json.loads(capsys.readouterr().out)["yearly"]
    assert [y["book_value_usd"] for y in years[:-1]] == pytest.approx(
        [cost / 6 * (6 - k) for k in range(1, 6)], rel=1e-12
    )
    assert years[-1]["book_value_usd"] == 0.0 and years[-1]["tax_basis_usd"] == 0.0


@pytest.mark.parametrize(
    "argv",
    [
        ["--method", "sum_of_years_digits"],  # base x 2 (life - k + 1) = 12 x 1.7e308
        ["--method", "fixed_declining_balance", "--salvage-share", "0.1"],
        ["--tax-method", "macrs_gds"],  # cost x 32 (percent of year 2)
        ["--method", "custom", "--custom-percent", "50,50"],  # base x 50
    ],
)
def test_cli_costs_whose_figures_overflow_are_refused(capsys, argv):
    # The command refuses a cost whose figures overflow, as econ loan refuses such a principal;
    # it printed numpy's RuntimeWarnings and "book_depreciation_usd must hold finite amounts".
    assert cli_main(["depreciation", "--cost", "1.7e308", *argv]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "error: --cost = 1.7e+308: expected a smaller cost: the schedules' figures overflow "
        "floating point [USD]"
    )
    # Straight line at the same cost stays finite (1.7e308 / 72 a month) and is shown.
    assert cli_main(["depreciation", "--cost", "1.7e308", "--by", "year"]) == 0
    assert "Warning" not in capsys.readouterr().err


def test_cli_usage_whose_total_overflows_is_refused_naming_usage(capsys):
    # 1e308 in each of 72 months sums to infinity, and units of production's shares of it to
    # NaN: the usage is at fault, not the cost.
    argv = ["--cost", "1e6", "--method", "units_of_production", "--usage", "1e308"]
    assert cli_main(["depreciation", *argv]) == 3
    assert capsys.readouterr().err.strip() == (
        "error: --usage = '1e308': expected smaller usage figures: their total over the months "
        "overflows floating point"
    )


@pytest.mark.parametrize(
    "usage, where, value",
    [
        ("nan", "every month", "nan"),
        ("inf", "every month", "inf"),
        ("1,-2,3", "value 2 (month 2)", "-2.0"),
        ("1,2,nan", "value 3 (month 3)", "nan"),
    ],
)
def test_cli_usage_not_a_finite_amount_of_at_least_0_is_named(capsys, usage, where, value):
    # NaN and inf were told "expected smaller usage figures: their total over the months
    # overflows floating point"; a negative month was told "usage = -2 (scenario row 2)", the
    # flat index of a one-scenario array read as a row, without the flag's name.
    argv = ["--cost", "1e6", "--method", "units_of_production", f"--usage={usage}"]
    assert cli_main(["depreciation", *argv]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"error: --usage = {usage!r}, {where}: {value}; expected a finite usage of at least 0 "
        "[tokens or GPU-hours]"
    )


@pytest.mark.parametrize(
    "flag, text, empty",
    [
        ("--custom-percent", "50,,50", 2),
        ("--custom-percent", ",100", 1),
        ("--tax-custom-percent", "100,", 2),
        ("--usage", "1,,2", 2),
    ],
)
def test_cli_an_empty_value_in_a_list_is_refused_not_skipped(capsys, flag, text, empty):
    # The values are years or months in order, and an empty one was skipped: '50,,50' was the
    # 2-year schedule 50, 50 (exit 0), '--usage 1,,2' put month 3's 2 in month 2.
    method = {"--custom-percent": "custom", "--usage": "units_of_production"}.get(flag)
    argv = ["--cost", "1000", f"{flag}={text}"]
    argv += ["--method", method] if method else ["--tax-method", "custom"]
    assert cli_main(["depreciation", *argv]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"error: {flag} = {text!r}, value {empty}: empty; expected a number in each place, "
        "separated by commas (the values are years or months in order: 0 for none)"
    )
    # Spaces and semicolons still separate values.
    assert (
        cli_main(
            [
                "depreciation",
                "--cost",
                "1000",
                "--method",
                "custom",
                "--custom-percent=50; 50",
                "--format",
                "json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["yearly"][1]["book_depreciation_usd"] == 500.0


def test_bad_value_of_a_monthly_array_is_located_by_row_and_month():
    # The flat index of an (n, T) array was quoted as the scenario row: "scenario row 2" for
    # month 2 of the only scenario, "scenario row 7" for month 2 of the second.
    m = np.arange(5)
    one = [[0.0, 1.0, -2.0, 1.0, 1.0]]
    with pytest.raises(DepreciationError, match=r"^usage = -2 \(month 2\): expected"):
        dep.units_of_production(1000.0, 0.0, one, m, 5.0)
    two = [[0.0, 1.0, 1.0, 1.0, 1.0], one[0]]
    with pytest.raises(DepreciationError, match=r"^usage = -2 \(scenario row 1, month 2\)"):
        dep.units_of_production([1000.0, 1000.0], 0.0, two, m, 5.0)
    with pytest.raises(DepreciationError, match=r"^custom_percent = -10 \(year 2\)"):
        dep.custom([100.0], 0.0, [50.0, -10.0, 60.0], np.arange(30))
    with pytest.raises(DepreciationError, match=r"^shares = 1.5 \(scenario row 1, batch 2\)"):
        dep.schedule_batches(
            "straight_line", [1.0, 1.0], m, [[0.5, 0.5], [0.5, 1.5]], [[1, 2], [1, 2]]
        )
    with pytest.raises(DepreciationError, match=r"^table_months = 12 \(table point 3\)"):
        dep.value_share_from_table([0, 24, 12], [1.0, 0.5, 0.2], np.arange(30))
    with pytest.raises(DepreciationError, match=r"^table_shares = -0.5 \(table point 2\)"):
        dep.value_share_from_table([0, 12, 24], [1.0, -0.5, 0.2], np.arange(30))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--cost", "-5"], r"--cost = -5"),
        (["--cost", "100", "--salvage", "200"], r"--salvage = 200"),
        (
            ["--cost", "100", "--life-years", "0"],
            r"--life-years = 0.0: expected a useful life of at least one month",
        ),
        (
            ["--cost", "100", "--method", "straigth"],
            r"unknown depreciation method 'straigth'; "
            r"valid methods: straight_line, declining_balance",
        ),
        (
            ["--cost", "100", "--method", "custom", "--custom-percent", "50,40"],
            r"sums to 90; expected percentages that sum to 100",
        ),
        (
            ["--cost", "100", "--method", "fixed_declining_balance", "--first-year-months", "13"],
            r"--first-year-months = 13",
        ),
        (
            ["--cost", "100", "--change-month", "90", "--change-life-years", "8"],
            r"beyond the useful life",
        ),
        (
            ["--cost", "100", "--in-service-month", "5", "--retirement-month", "3"],
            r"--retirement-month = 3: expected a month at or after the in-service month \(5;",
        ),
        (
            ["--cost", "100", "--tax-method", "macrs", "--recovery-years", "5"],
            r"unknown tax depreciation method 'macrs'",
        ),
        (["--cost", "100", "--method", "units_of_production"], r"needs --usage"),
        (  # it was accepted and sold for 0: a loss of the whole book value, with exit 0
            ["--cost", "100", "--retirement-month", "4", "--sale-value", "-5"],
            r"--sale-value = -5: expected proceeds of at least 0 \[USD\]",
        ),
        (  # it was accepted and took Table A-5's 5% for a month-1 asset, not A-2's 35%
            ["--cost", "100", "--tax-method", "macrs_gds", "--convention", "mid-quarter Q4"],
            # named by its option, as the models' refusals are (it said "convention = ...")
            r"^error: --convention = 'mid-quarter Q4': expected 'mid-quarter Q1' or 'half-year': "
            r"placed in service in month 1, month 1 of tax year 1",
        ),
    ],
)
def test_cli_bad_input_exits_3_with_the_message(capsys, argv, message):
    assert cli_main(["depreciation", *argv]) == 3
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Traceback" not in err


# --- The command names its methods, and a year cut short --------------------------------------


def test_cli_names_its_methods_and_tax_rate(capsys):
    # A reviewer's finding: the table named neither the MACRS class, its convention and table,
    # the bonus share nor the tax rate. IRS Pub 946 Appendix A: Table A-1 is the half-year
    # convention's, A-2 to A-5 the mid-quarter convention's by the quarter placed in service.
    argv = ["depreciation", "--cost", "100000", "--tax-method", "macrs_gds", "--by", "year"]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "book: straight line over 6 years, salvage 0%\n" in out
    assert (
        "tax: MACRS GDS 5-year, half-year convention (IRS Pub 946 Table A-1), bonus 0%, "
        "tax rate 21%\n"
    ) in out
    argv += ["--convention", "mid-quarter Q4", "--bonus-share", "0.4", "--in-service-month", "10"]
    assert cli_main([*argv, "--tax-rate", "0.25", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["methods"] == {
        "book": "straight line over 6 years, salvage 0%",
        "tax": "MACRS GDS 5-year, mid-quarter Q4 convention (IRS Pub 946 Table A-5), bonus 40%",
        "tax_rate": 0.25,
    }
    assert cli_main(["depreciation", "--cost", "1000", "--salvage", "100", "--by", "year"]) == 0
    assert "tax: the book schedule (straight line over 6 years, salvage 10%)" in (
        capsys.readouterr().out
    )


def test_cli_marks_a_year_cut_short(capsys):
    # --months 20 shows months 0-20: year 1 is months 1-12, year 2 months 13-20, 8 of them.
    argv = ["depreciation", "--cost", "100000", "--tax-method", "macrs_gds", "--months", "20"]
    assert cli_main([*argv, "--by", "year"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[-1].lstrip().startswith("2 (8 months) ")
    assert rows[-2].lstrip().startswith("1 ")
    assert cli_main([*argv, "--by", "year", "--format", "json"]) == 0
    years = json.loads(capsys.readouterr().out)["yearly"]
    assert [(y["year"], y["months"]) for y in years] == [(1, 12), (2, 20 - 12)]
    # year 2's book depreciation: 8 months of 100,000 / 72
    assert years[1]["book_depreciation_usd"] == pytest.approx(8 * 100_000 / 72, abs=1e-6)


# --- MACRS year of disposal (IRS Pub 946 ch. 4) ---------------------------------------------


def _macrs_disposed(r, convention="half-year", s=1, bonus=0.0, months=90):
    return dep.macrs_gds(
        [1_000_000.0],
        np.arange(months),
        5,
        convention,
        bonus,
        in_service_month=s,
        tables=TABLES,
        disposal_month=r,
    )[0]


def test_macrs_half_year_disposal_deducts_half_the_years_amount():
    """Pub 946 ch. 4 (half-year convention, year of disposal: half of the full year's
    depreciation) with Table A-1, 5-year, year 3 = 19.20%: sold in month 27, 3 months into tax
    year 3, the year deducts 1,000,000 x 19.20% / 2 = 96,000 USD (it was 48,000, prorated by
    months held), spread over months 25-27; nothing after the sale."""
    d = _macrs_disposed(27)
    assert d[1:13].sum() == pytest.approx(200_000.0, abs=1e-6)  # A-1 year 1, 20.00%
    assert d[13:25].sum() == pytest.approx(320_000.0, abs=1e-6)  # A-1 year 2, 32.00%
    assert d[25:28] == pytest.approx([32_000.0] * 3, abs=1e-6)
    assert not d[28:].any()
    # In the table's last year (A-1 year 6, 5.76%, already half a year) the whole amount.
    assert _macrs_disposed(64)[61:65].sum() == pytest.approx(57_600.0, abs=1e-6)
    # Without a disposal (0), the schedule is the table's.
    full = _macrs_disposed(0)
    assert full.sum() == pytest.approx(1_000_000.0, abs=1e-6)
    assert np.array_equal(full[:25], d[:25])


def test_macrs_mid_quarter_disposal_takes_the_quarters_midpoint():
    """Pub 946 ch. 4 (mid-quarter convention: disposed of at the midpoint of the quarter) with
    Table A-5 (5-year, placed in service in quarter 4: 5.00, 38.00, 22.80, 13.68, 10.94, 9.58):
    placed in service in month 11, sold in month 41 (quarter 2 of tax year 4): 13.68% x 4.5/12 =
    51,300 USD; sold in month 64 (quarter 2 of year 6, the table's last, which recovers what is
    left over the 10.5 months to the middle of quarter 4): 9.58% x 4.5/10.5 = 41,057.14 USD."""
    d = _macrs_disposed(41, "mid-quarter Q4", s=11)
    assert d[37:42].sum() == pytest.approx(51_300.0, abs=1e-6)
    assert d[1:37].sum() == pytest.approx(50_000.0 + 380_000.0 + 228_000.0, abs=1e-6)
    late = _macrs_disposed(64, "mid-quarter Q4", s=11)
    assert late[61:65].sum() == pytest.approx(95_800.0 * 4.5 / 10.5, abs=1e-6)
    assert not late[65:].any()


def test_macrs_placed_in_service_and_disposed_of_in_one_tax_year_takes_nothing():
    """Treas. Reg. §1.168(d)-1(b)(3)(ii) (no depreciation for property placed in service and
    disposed of in the same taxable year) and §1.168(k)-2(g)(1)(i) (nor bonus): 100% bonus,
    sold in month 6 of tax year 1, deducted the whole 1,000,000 USD before."""
    assert not _macrs_disposed(6, bonus=1.0).any()
    assert not _macrs_disposed(12, bonus=0.4).any()
    assert _macrs_disposed(13, bonus=1.0)[1] == pytest.approx(1_000_000.0)


def test_cli_macrs_sale_splits_depreciation_and_gain_as_the_return_does(capsys):
    """Pub 946 ch. 4: 5-year half-year property of 1,000,000 USD sold for 400,000 in month 27
    deducts 96,000 in tax year 3 and its tax basis is 384,000: a gain of 16,000 USD (IRC §1245
    recapture); econ said 48,000 and a loss of 32,000. The year's taxable income is the same."""
    argv = ["--cost", "1e6", "--tax-method", "macrs_gds", "--retirement-month", "27"]
    argv += ["--sale-value", "400000", "--by", "year", "--format", "json"]
    assert cli_main(["depreciation", *argv]) == 0
    last = json.loads(capsys.readouterr().out)["yearly"][-1]
    assert last["tax_depreciation_usd"] == pytest.approx(96_000.0, abs=1e-6)
    assert last["tax_gain_usd"] == pytest.approx(16_000.0, abs=1e-6)
    assert last["tax_basis_usd"] == 0.0
    # A book schedule on the MACRS tables, taxed as booked ("tax: the book schedule"), takes the
    # same convention: the two stay equal.
    argv[argv.index("--tax-method")] = "--method"
    assert cli_main(["depreciation", *argv]) == 0
    last = json.loads(capsys.readouterr().out)["yearly"][-1]
    assert last["book_depreciation_usd"] == last["tax_depreciation_usd"] == pytest.approx(96_000.0)


def test_projection_sold_mid_recovery_takes_the_year_of_disposal_convention():
    """Pub 946 ch. 4, Table A-1 (5-year, year 3 = 19.20%): the MACRS seed rack (3,535,600 USD)
    without bonus, projected 27 months and sold then, deducts half of year 3's amount,
    339,417.60 USD over months 25-27 (it deducted 169,708.80, 3 months of 12)."""
    scenario = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-macrs.toml")
    tax = scenario.depreciation.tax.model_copy(update={"bonus_share": 0.0})
    depreciation = scenario.depreciation.model_copy(update={"tax": tax})
    scenario = scenario.model_copy(update={"horizon_months": 27, "depreciation": depreciation})
    taxed = np.asarray(project(scenario).lines["tax_depreciation_usd"])[0]
    assert taxed[25:28] == pytest.approx([3_535_600 * 0.192 / 2 / 3] * 3, rel=1e-12)
    assert taxed[:28].sum() == pytest.approx(3_535_600 * (0.20 + 0.32 + 0.096), rel=1e-12)
