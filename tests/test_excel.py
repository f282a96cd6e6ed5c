"""Tests of econ.excel: published spreadsheet examples, LibreOffice-recalculated cases,
cross-checks against numpy-financial and pyxirr, properties, and error cases."""

from __future__ import annotations

import ast
import csv
import datetime as dt
import operator
import os
import re
from pathlib import Path

import numpy as np
import numpy_financial as npf
import pytest
import pyxirr
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from econ import excel
from econ.excel import ExcelFunctionError

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = "spreadsheet_function_examples.csv"
LIBREOFFICE = DATA / "excel_libreoffice_cases.csv"

FUNCTIONS = {
    "SLN": excel.sln, "SYD": excel.syd, "DB": excel.db, "DDB": excel.ddb, "VDB": excel.vdb,
    "PMT": excel.pmt, "IPMT": excel.ipmt, "PPMT": excel.ppmt, "FV": excel.fv, "PV": excel.pv,
    "NPER": excel.nper, "RATE": excel.rate, "NPV": excel.npv, "XNPV": excel.xnpv,
    "IRR": excel.irr, "XIRR": excel.xirr, "MIRR": excel.mirr,
}
# Argument names of the published examples that differ from ours.
RENAMED = {"start": "start_period", "end": "end_period"}
SETTINGS = settings(max_examples=int(os.environ.get("ECON_HYPOTHESIS_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------------------------
# reading the case tables
# ---------------------------------------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.USub: operator.neg, ast.UAdd: operator.pos}


def _arith(text: str) -> float:
    """Evaluate plain arithmetic such as ``0.08/12`` (numbers and + - * / only)."""

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError(f"unsupported argument expression {text!r}")

    return ev(ast.parse(text.strip(), mode="eval").body)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _value(text: str):
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    if text.startswith("["):
        items = [i.strip() for i in text[1:-1].split(",")]
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", items[0]):
            return np.array(items, dtype="datetime64[D]")
        return np.array([_arith(i) for i in items])
    return _arith(text)


def parse_arguments(text: str) -> dict:
    args = {}
    for part in _split_top_level(text):
        name, _, value = part.partition("=")
        args[RENAMED.get(name.strip(), name.strip())] = _value(value.strip())
    return args


def evaluate(function: str, arguments: str):
    args = parse_arguments(arguments)
    plus = args.pop("plus", 0.0)
    return FUNCTIONS[function](**args) + plus


def _read(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _case_id(row: dict) -> str:
    return f"{row['function']}({row['arguments']})"[:90]


# ---------------------------------------------------------------------------------------------
# 1. published examples (Microsoft / Google documentation)
# ---------------------------------------------------------------------------------------------

EXAMPLE_ROWS = _read(DATA / EXAMPLES)


def _check_example(row: dict) -> None:
    got = float(evaluate(row["function"], row["arguments"]))
    assert got == pytest.approx(float(row["expected"]), abs=float(row["tolerance"])), (
        f"{row['function']}({row['arguments']}) = {got!r}, published {row['expected']} "
        f"({row['source']})")


@pytest.mark.parametrize("row", EXAMPLE_ROWS, ids=_case_id)
def test_published_example_fixture(row):
    _check_example(row)


def _shared_rows() -> list:
    path = SHARED / EXAMPLES
    if not path.exists():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"shared reference data not found at {path}"))]
    return [pytest.param(row, id=_case_id(row)) for row in _read(path)]


@pytest.mark.parametrize("row", _shared_rows())
def test_published_example_shared(row):
    _check_example(row)


def test_fixture_copies_every_shared_row():
    path = SHARED / EXAMPLES
    if not path.exists():
        pytest.skip(f"shared reference data not found at {path}")
    assert _read(path) == EXAMPLE_ROWS, f"tests/data/{EXAMPLES} is out of date with {path}"


# ---------------------------------------------------------------------------------------------
# 2. random and edge cases recalculated by LibreOffice Calc (tests/data/generate_excel_cases.py)
# ---------------------------------------------------------------------------------------------

LO_ROWS = _read(LIBREOFFICE)


def test_libreoffice_cases_cover_every_function():
    covered = {row["function"] for row in LO_ROWS if row["kind"] == "random"}
    assert covered == set(FUNCTIONS)
    assert len([r for r in LO_ROWS if r["kind"] == "random"]) >= 300


@pytest.mark.parametrize("row", [r for r in LO_ROWS if r["kind"] != "error"], ids=_case_id)
def test_libreoffice_value(row):
    got = float(evaluate(row["function"], row["arguments"]))
    expected = float(row["expected"])
    tolerance = max(1e-9 * abs(expected), 1e-6)
    if row["function"] in ("IPMT", "PPMT"):
        tolerance = max(tolerance, _spreadsheet_rounding_of_interest(row["arguments"]))
    assert abs(got - expected) <= tolerance, (
        f"{row['formula']}: LibreOffice {expected!r}, econ.excel {got!r}")


def _spreadsheet_rounding_of_interest(arguments: str) -> float:
    """Rounding error of the spreadsheet's own IPMT/PPMT arithmetic.

    The spreadsheet takes the balance as pv*(1+r)**k + pmt*((1+r)**k - 1)/r, the difference of
    two terms that grow as (1+r)**k, and the interest part out of the payment, so its result
    carries an error of a few ulps of those terms. Example: IPMT(0.0740276; 277; 294; -472131;
    66537.4; 1) is 24811.52672 exactly (60-digit arithmetic), 24811.526718 in econ.excel (which
    uses a formula in the remaining periods) and 24811.53546 in LibreOffice.
    """
    args = parse_arguments(arguments)
    per = args.pop("per")
    r, pv_ = args["rate"], args["pv"]
    pay = abs(float(excel.pmt(**args)))
    growth = (1 + r) ** per
    terms = abs(pv_) * growth + pay * (1 + abs(r)) * (abs(growth - 1) / abs(r) if r else per)
    payment_part = 1e-9 * pay
    return max(payment_part, 4e-15 * terms * max(abs(r), 1e-300))


@pytest.mark.parametrize("row", [r for r in LO_ROWS if r["kind"] == "error"], ids=_case_id)
def test_libreoffice_error(row):
    args = parse_arguments(row["arguments"])
    if row["function"] in ("RATE", "NPER") and args.get("nper", 1.0) > 0:
        # No solution (rather than an invalid argument): NaN, as documented.
        assert np.isnan(evaluate(row["function"], row["arguments"]))
    else:
        with pytest.raises(ExcelFunctionError):
            evaluate(row["function"], row["arguments"])


# ---------------------------------------------------------------------------------------------
# 3. cross-checks against numpy-financial and pyxirr
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def loans():
    rng = np.random.default_rng(7)
    n = 400
    return dict(
        rate=np.where(rng.random(n) < 0.1, 0.0, rng.uniform(-0.02, 0.12, n)),
        nper=rng.integers(1, 361, n).astype(float),
        pv=rng.uniform(-1e6, 1e6, n),
        fv=np.where(rng.random(n) < 0.5, 0.0, rng.uniform(-1e5, 1e5, n)),
        type=rng.integers(0, 2, n).astype(float),
        pmt=rng.uniform(-1e4, 1e4, n),
        rng=rng,
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy-financial's own 0/0 at rate 0
def test_pmt_fv_pv_match_numpy_financial(loans):
    r, n, pv, fv, t, pay = (loans[k] for k in ("rate", "nper", "pv", "fv", "type", "pmt"))
    np.testing.assert_allclose(excel.pmt(r, n, pv, fv, t), npf.pmt(r, n, pv, fv, t),
                               rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(excel.fv(r, n, pay, pv, t), npf.fv(r, n, pay, pv, t),
                               rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(excel.pv(r, n, pay, fv, t), npf.pv(r, n, pay, fv, t),
                               rtol=1e-9, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ipmt_ppmt_match_numpy_financial(loans):
    r, n, pv, fv, t = (loans[k] for k in ("rate", "nper", "pv", "fv", "type"))
    per = np.ceil(loans["rng"].uniform(0, 1, n.size) * n)
    # numpy-financial uses the forward balance formula, which loses log10((1+r)**per) digits;
    # compare where it still has 10 (econ.excel stays accurate beyond, see the LibreOffice test).
    fine = (1 + np.abs(r)) ** per < 1e5
    r, n, pv, fv, t, per = (a[fine] for a in (r, n, pv, fv, t, per))
    np.testing.assert_allclose(excel.ipmt(r, per, n, pv, fv, t),
                               npf.ipmt(r, per, n, pv, fv, t), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(excel.ppmt(r, per, n, pv, fv, t),
                               npf.ppmt(r, per, n, pv, fv, t), rtol=1e-9, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nper_matches_numpy_financial(loans):
    r, t = np.abs(loans["rate"]), loans["type"]
    n_true = loans["nper"]
    pv = np.abs(loans["pv"])
    pay = excel.pmt(r, n_true, pv, 0, t)
    got = excel.nper(r, pay, pv, 0, t)
    # Where (1+r)**n is huge the payment is nearly pure interest and n is ill-determined.
    fine = (1 + r) ** n_true < 1e6
    # numpy-financial 1.0's nper mixes up elements when `when` is an array: call it per element.
    reference = np.array([npf.nper(*args) for args in zip(r, pay, pv, 0 * r, t, strict=True)])
    # numpy-financial 1.0 also flips the sign at rate 0: npf.nper(0, -100, 1000) = -10 where
    # Excel and LibreOffice give NPER(0; -100; 1000) = 10.
    fine &= r != 0
    np.testing.assert_allclose(got[fine], reference[fine], rtol=1e-9)
    np.testing.assert_allclose(got[fine], n_true[fine], rtol=1e-8)


def _gpu_like(n: int, periods: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    capex = rng.uniform(1e5, 5e6, n)
    margin = rng.uniform(0.005, 0.06, n)
    flows = np.empty((n, periods))
    flows[:, 0] = -capex
    flows[:, 1:] = capex[:, None] * margin[:, None] * rng.uniform(0.3, 1.7, (n, periods - 1))
    return flows


def test_irr_batch_matches_numpy_financial_and_pyxirr():
    flows = _gpu_like(300, 49, seed=3)
    got = excel.irr_batch(flows)
    reference_npf = np.array([npf.irr(row) for row in flows])
    reference_pyxirr = np.array([pyxirr.irr(row) for row in flows], dtype=float)
    both = np.isfinite(reference_npf) & np.isfinite(got)
    assert both.mean() > 0.95
    np.testing.assert_allclose(got[both], reference_npf[both], rtol=0, atol=1e-9)
    both = np.isfinite(reference_pyxirr) & np.isfinite(got)
    assert both.mean() > 0.95
    np.testing.assert_allclose(got[both], reference_pyxirr[both], rtol=0, atol=1e-9)


def test_xirr_matches_pyxirr():
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(2, 30))
        start = np.datetime64("2015-01-01") + int(rng.integers(0, 3000))
        dates = start + np.concatenate([[0], np.cumsum(rng.integers(1, 120, n - 1))])
        flows = np.concatenate([[-rng.uniform(1e3, 1e6)], rng.uniform(50, 3e5, n - 1)])
        if n > 2 and flows[1:].sum() < flows[0] * -0.5:
            continue
        got = excel.xirr(flows, dates)
        expected = pyxirr.xirr(dates.astype(dt.date), flows)
        if expected is None:
            continue
        assert got == pytest.approx(expected, abs=1e-9, rel=1e-9)


def test_xirr_batch_matches_xirr_and_pyxirr():
    flows = _gpu_like(200, 25, seed=5)
    dates = np.datetime64("2024-01-31") + np.cumsum(np.r_[0, np.full(24, 30)])
    dates = dates + np.arange(25) % 3  # irregular spacing
    got = excel.xirr_batch(flows, dates)
    for i in range(0, 200, 20):
        assert got[i] == pytest.approx(excel.xirr(flows[i], dates), abs=1e-12)
        ref = pyxirr.xirr(dates.astype(dt.date), flows[i])
        assert got[i] == pytest.approx(ref, abs=1e-9, rel=1e-9)
    per_row = excel.xirr_batch(flows, np.broadcast_to(dates, flows.shape))
    np.testing.assert_allclose(per_row, got, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# 4. properties
# ---------------------------------------------------------------------------------------------

costs = st.floats(1e2, 1e8)
fractions = st.floats(0.0, 0.9)
lives = st.integers(1, 40)


@given(cost=costs, frac=fractions, life=lives)
@SETTINGS
def test_straight_line_and_syd_sum_to_depreciable_base(cost, frac, life):
    salvage = cost * frac
    periods = np.arange(1, life + 1)
    assert excel.sln(cost, salvage, life) * life == pytest.approx(cost - salvage, rel=1e-12)
    assert excel.syd(cost, salvage, life, periods).sum() == pytest.approx(cost - salvage,
                                                                          rel=1e-12)


@given(cost=costs, frac=fractions, life=lives, factor=st.floats(0.5, 4.0))
@SETTINGS
def test_vdb_with_switch_depreciates_exactly_to_salvage(cost, frac, life, factor):
    salvage = cost * frac
    total = excel.vdb(cost, salvage, life, 0, life, factor)
    assert total == pytest.approx(cost - salvage, rel=1e-10, abs=1e-6)
    periods = np.arange(life)
    by_period = excel.vdb(cost, salvage, life, periods, periods + 1, factor)
    assert by_period.sum() == pytest.approx(cost - salvage, rel=1e-10, abs=1e-6)
    assert (by_period >= 0).all()


@given(cost=costs, frac=fractions, life=lives, factor=st.floats(0.5, 4.0))
@SETTINGS
def test_ddb_never_goes_below_salvage_and_matches_vdb_without_switch(cost, frac, life, factor):
    salvage = cost * frac
    periods = np.arange(1, life + 1)
    schedule = excel.ddb(cost, salvage, life, periods, factor)
    assert schedule.sum() <= cost - salvage + 1e-9 * cost
    assert (schedule >= 0).all()
    no_switch = excel.vdb(cost, salvage, life, periods - 1, periods, factor, True)
    np.testing.assert_allclose(no_switch, schedule, rtol=1e-12, atol=1e-9)


@given(cost=costs, frac=st.floats(0.0, 1.0), life=st.floats(0.5, 30.0),
       cuts=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6),
       factor=st.floats(0.5, 4.0), no_switch=st.booleans())
@SETTINGS
def test_vdb_is_additive_over_fractional_intervals(cost, frac, life, cuts, factor, no_switch):
    marks = np.sort(np.array(cuts) * life)
    pieces = excel.vdb(cost, cost * frac, life, marks[:-1], marks[1:], factor, no_switch)
    whole = excel.vdb(cost, cost * frac, life, marks[0], marks[-1], factor, no_switch)
    assert pieces.sum() == pytest.approx(whole, rel=1e-9, abs=1e-6)


@given(cost=costs, frac=st.floats(0.001, 0.9), life=st.integers(1, 30),
       month=st.integers(1, 12))
@SETTINGS
def test_db_sums_to_depreciable_base_up_to_the_rounded_rate(cost, frac, life, month):
    salvage = cost * frac
    last = life + 1 if month < 12 else life
    total = excel.db(cost, salvage, life, np.arange(1, last + 1), month).sum()
    rate = np.floor((1 - frac ** (1 / life)) * 1000 + 0.5) / 1000
    if month == 12:
        # Exactly the spreadsheet's arithmetic: book value falls geometrically at the rate.
        assert total == pytest.approx(cost - cost * (1 - rate) ** life, rel=1e-11)
    # The rate is rounded to 3 decimals (|error| <= 0.0005), and a short first year splits
    # one period's rate in two, so the total misses cost - salvage by a bounded amount.
    bound = cost * (life * 0.0005 + 0.25 * rate ** 2) + 1e-9 * cost
    assert abs(total - (cost - salvage)) <= bound


flows_strategy = st.lists(st.floats(1.0, 1e6), min_size=1, max_size=60).flatmap(
    lambda tail: st.floats(1.0, 3.0 * sum(tail)).map(lambda c0: [-c0] + tail))


@given(values=flows_strategy)
@SETTINGS
def test_npv_is_zero_at_the_irr(values):
    values = np.array(values)
    r = excel.irr(values)
    scale = np.abs(values).sum()
    assert abs(excel.npv_batch(r, values)) <= 1e-9 * scale
    assert abs(values[0] + excel.npv(r, values[1:])) <= 1e-9 * scale
    assert excel.irr_batch(values[None, :])[0] == pytest.approx(r, rel=1e-10, abs=1e-12)


dated_strategy = st.lists(st.floats(1.0, 1e6), min_size=1, max_size=60).flatmap(
    lambda tail: st.floats(0.2 * sum(tail), 2.0 * sum(tail)).map(lambda c0: [-c0] + tail))


@given(values=dated_strategy, days=st.lists(st.integers(20, 400), min_size=60, max_size=60))
@SETTINGS
def test_xnpv_is_zero_at_the_xirr(values, days):
    values = np.array(values)
    dates = np.datetime64("2020-02-29") + np.concatenate([[0], np.cumsum(days)])[:values.size]
    r = excel.xirr(values, dates)
    assert abs(excel.xnpv(r, values, dates)) <= 1e-9 * np.abs(values).sum()


@given(rate_=st.floats(-0.05, 0.2), nper_=st.integers(1, 480), pv_=st.floats(1.0, 1e7),
       type_=st.integers(0, 1))
@SETTINGS
def test_principal_repaid_equals_pv_and_payment_splits(rate_, nper_, pv_, type_):
    per = np.arange(1, nper_ + 1)
    principal = excel.ppmt(rate_, per, nper_, pv_, 0, type_)
    interest = excel.ipmt(rate_, per, nper_, pv_, 0, type_)
    payment = excel.pmt(rate_, nper_, pv_, 0, type_)
    assert principal.sum() == pytest.approx(-pv_, rel=1e-9)
    np.testing.assert_allclose(interest + principal, np.full(nper_, payment), rtol=1e-12,
                               atol=1e-12 * pv_)


@given(rate_=st.floats(0.0001, 0.1), nper_=st.integers(1, 480), pv_=st.floats(1.0, 1e7),
       type_=st.integers(0, 1))
@SETTINGS
def test_rate_and_nper_invert_pmt(rate_, nper_, pv_, type_):
    assume(not (nper_ == 1 and type_ == 1))  # one payment up front: any rate fits
    pay = excel.pmt(rate_, nper_, pv_, 0, type_)
    solved_rate = excel.rate(nper_, pay, pv_, 0, type_)
    solved_nper = excel.nper(rate_, pay, pv_, 0, type_)
    # Backward check: the solved term reproduces the payment. (Past (1+r)**n ~ 1e15 the
    # payment equals the interest to machine precision and no term is identified.)
    assert excel.pmt(solved_rate, nper_, pv_, 0, type_) == pytest.approx(pay, rel=1e-10)
    if (1 + rate_) ** nper_ < 1e12:
        assert excel.pmt(rate_, solved_nper, pv_, 0, type_) == pytest.approx(pay, rel=1e-10)
    # Forward check where the problem is well conditioned: when (1+r)**n is huge the payment
    # is almost pure interest and barely depends on n or r.
    if (1 + rate_) ** nper_ < 1e4:
        assert solved_rate == pytest.approx(rate_, rel=1e-8, abs=1e-12)
        assert solved_nper == pytest.approx(nper_, rel=1e-9)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), periods=st.integers(2, 40))
@SETTINGS
def test_batch_equals_row_by_row(seed, n, periods):
    rng = np.random.default_rng(seed)
    flows = rng.normal(0, 1, (n, periods)) + np.linspace(1, -1, periods) * rng.uniform(0, 2)
    flows[:, 0] = -np.abs(flows[:, 0]) - 0.5
    batch = excel.irr_batch(flows)
    rows = np.array([excel.irr_batch(flows[i:i + 1])[0] for i in range(n)])
    # Rows are solved independently; only the scan's matrix product (for rows with several
    # sign changes) may round differently with the batch size, within the 1e-12 tolerance.
    np.testing.assert_allclose(batch, rows, rtol=1e-11, atol=1e-11)
    rate_ = rng.uniform(-0.5, 0.5, n)
    npvs = excel.npv_batch(rate_, flows)
    np.testing.assert_allclose(npvs, [excel.npv_batch(rate_[i], flows[i]) for i in range(n)],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(npvs, flows[:, 0] + excel.npv(rate_, flows[:, 1:]),
                               rtol=1e-10, atol=1e-10)


@given(seed=st.integers(0, 2**32 - 1))
@SETTINGS
def test_scalar_and_array_inputs_agree(seed):
    rng = np.random.default_rng(seed)
    k = 5
    cost = rng.uniform(1e3, 1e6, k)
    salvage = cost * rng.uniform(0, 0.5, k)
    life = rng.integers(2, 15, k).astype(float)
    start = rng.uniform(0, 1, k) * life
    end = start + rng.uniform(0, 1, k) * (life - start)
    r = rng.uniform(0.001, 0.1, k)
    n = rng.integers(2, 100, k).astype(float)
    pv_ = rng.uniform(1e3, 1e6, k)
    per = np.ceil(rng.uniform(0, 1, k) * n)
    calls = [
        (excel.sln, (cost, salvage, life)),
        (excel.syd, (cost, salvage, life, np.ones(k))),
        (excel.db, (cost, salvage, life, np.ones(k) * 2, np.full(k, 7.0))),
        (excel.ddb, (cost, salvage, life, np.ones(k) * 2)),
        (excel.vdb, (cost, salvage, life, start, end)),
        (excel.pmt, (r, n, pv_)),
        (excel.ipmt, (r, per, n, pv_)),
        (excel.ppmt, (r, per, n, pv_)),
        (excel.fv, (r, n, -pv_ / n)),
        (excel.pv, (r, n, -pv_ / n)),
        (excel.nper, (r, -pv_ / n * 1.5, pv_)),
        (excel.rate, (n, -pv_ / n * 1.5, pv_)),
    ]
    for func, args in calls:
        vector = func(*args)
        scalars = [func(*(a[i] for a in args)) for i in range(k)]
        assert np.ndim(scalars[0]) == 0
        np.testing.assert_allclose(vector, scalars, rtol=1e-12, err_msg=func.__name__)


def test_irr_with_two_roots_returns_the_root_nearest_the_guess():
    values = [-100, 230, -132]  # NPV = 0 at 10% and 20%
    assert excel.irr(values, 0.12) == pytest.approx(0.1, abs=1e-12)
    assert excel.irr(values, 0.18) == pytest.approx(0.2, abs=1e-12)
    assert excel.irr(values, -0.5) == pytest.approx(0.1, abs=1e-12)
    assert excel.irr(values, 3.0) == pytest.approx(0.2, abs=1e-12)
    np.testing.assert_allclose(excel.irr_batch(np.tile(values, (3, 1)), [0.0, 0.16, 0.5]),
                               [0.1, 0.2, 0.2], atol=1e-12)


@given(r1=st.floats(-0.6, 1.5), gap=st.floats(0.05, 1.0), extra=st.floats(-0.9, 3.0),
       side=st.floats(-0.2, 0.2), scale=st.floats(1.0, 1e6))
@SETTINGS
def test_multiple_sign_changes_give_a_valid_root_nearest_the_guess(r1, gap, extra, side,
                                                                   scale):
    # Roots at least ~5 scan cells apart (the scan spacing is about 2% of 1 + r).
    gap = gap * (1 + r1)
    r2 = r1 + gap
    assume(min(abs(extra - r1), abs(extra - r2)) > 0.1 * (1 + max(extra, r2)))
    # Flows whose future value is scale * (y - y1)(y - y2)(y - y3), y = 1 + r: three roots.
    poly = scale * np.poly([1 + r1, 1 + r2, 1 + extra])
    guess = r1 + side * gap  # within a fifth of the gap of r1 ...
    assume(abs(guess - extra) > abs(guess - r1) + 0.05 * (1 + extra))  # ... and nearer than extra
    got = excel.irr(poly, guess)
    assert got > -1
    assert got == pytest.approx(r1, abs=1e-9)
    assert abs(excel.npv_batch(got, poly)) <= 1e-8 * np.abs(poly).sum() * max(
        1.0, (1 + got) ** -3)


def test_multiple_sign_change_batch_rows_are_roots():
    rng = np.random.default_rng(2)
    flows = rng.normal(0, 1, (500, 30))
    got = excel.irr_batch(flows, 0.0)
    found = np.isfinite(got)
    assert found.mean() > 0.3
    assert (got[found] > -1).all()
    # The root is a sign change of NPV: a nudge either side flips the sign.
    lo = excel.npv_batch(got[found] - 1e-7, flows[found])
    hi = excel.npv_batch(got[found] + 1e-7, flows[found])
    assert (np.sign(lo) != np.sign(hi)).mean() > 0.99


def test_batch_rows_without_a_root_are_nan_not_errors():
    flows = np.array([[-1.0, -2.0, -3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0],
                      [np.nan, 1.0, -1.0], [-100.0, 110.0, 0.0]])
    got = excel.irr_batch(flows)
    assert np.isnan(got[:4]).all()
    assert got[4] == pytest.approx(0.1, abs=1e-12)
    dates = np.array(["2020-01-01", "2020-06-01", "2021-01-01"], dtype="datetime64[D]")
    assert np.isnan(excel.xirr_batch(flows, dates)[:4]).all()
    bad_dates = np.array([dates, dates[::-1]])
    out = excel.xirr_batch(np.array([[-100.0, 50, 60], [-100.0, 50, 60]]), bad_dates)
    assert np.isfinite(out[0]) and np.isnan(out[1])
    assert np.isnan(excel.npv_batch(-1.0, flows[4]))


def test_irr_batch_handles_roots_near_minus_one_and_long_series():
    flows = np.zeros((2, 600))
    flows[0, 0], flows[0, -1] = -100.0, 1.0  # root (1/100)**(1/599) - 1
    flows[1, 0], flows[1, 1:] = -1000.0, 50.0  # long annuity
    got = excel.irr_batch(flows)
    assert got[0] == pytest.approx(0.01 ** (1 / 599) - 1, rel=1e-10)
    assert abs(excel.npv_batch(got[1], flows[1])) < 1e-6


def test_irr_batch_shapes_and_guesses():
    flows = _gpu_like(12, 10, seed=1).reshape(3, 4, 10)
    got = excel.irr_batch(flows, guess=np.full((3, 4), 0.02))
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got.reshape(-1), excel.irr_batch(flows.reshape(12, 10)))
    assert np.ndim(excel.irr_batch(flows[0, 0])) == 0
    np.testing.assert_allclose(excel.irr(flows), got, atol=1e-12)


def test_rate_conversions():
    assert excel.annual_from_monthly(0.01) == pytest.approx(1.01 ** 12 - 1, rel=1e-15)
    assert excel.monthly_from_annual(0.12) == pytest.approx(1.12 ** (1 / 12) - 1, rel=1e-14)
    r = np.linspace(-0.5, 2.0, 11)
    np.testing.assert_allclose(excel.annual_from_monthly(excel.monthly_from_annual(r)), r,
                               atol=1e-14)


def test_dates_accept_datetime64_dates_strings_and_serials():
    values = [-10000, 2750, 4250, 3250, 2750]
    iso = ["2008-01-01", "2008-03-01", "2008-10-30", "2009-02-15", "2009-04-01"]
    as_dates = [dt.date.fromisoformat(d) for d in iso]
    serials = [(d - dt.date(1899, 12, 30)).days for d in as_dates]
    expected = excel.xnpv(0.09, values, np.array(iso, dtype="datetime64[D]"))
    assert expected == pytest.approx(2086.65, abs=0.005)
    for dates in (iso, as_dates, serials, np.array(serials) + 0.7):
        assert excel.xnpv(0.09, values, dates) == pytest.approx(expected, rel=1e-15)
        assert excel.xirr(values, dates) == pytest.approx(0.373362535, abs=1e-8)


def test_npv_broadcasts_rates_over_series():
    values = np.array([[-10000, 3000, 4200, 6800], [100, 100, 100, 100]])
    got = excel.npv(np.array([0.1, 0.0]), values)
    np.testing.assert_allclose(got, [1188.44, 400.0], atol=0.005)
    assert excel.npv([0.1, 0.2], values[0]).shape == (2,)


# ---------------------------------------------------------------------------------------------
# 5. errors: the argument, the value and what was expected
# ---------------------------------------------------------------------------------------------

ERRORS = [
    (lambda: excel.db(1000, 100, 5, 2, 13), "db: month must be an integer from 1 to 12, got 13"),
    (lambda: excel.db(1000, 100, 5, 2, 6.5), "db: month must be an integer from 1 to 12, got 6.5"),
    (lambda: excel.db(-5, 0, 5, 1), "db: cost must be greater than 0 [USD], got -5"),
    (lambda: excel.db(1000, -1, 5, 1), "db: salvage must be at least 0 [USD], got -1"),
    (lambda: excel.db(1000, 100, 0, 1), "db: life must be greater than 0 [years], got 0"),
    (lambda: excel.db(1000, 100, 5, 7, 7), "db: period must be at most life + 1 [years], got 7"),
    (lambda: excel.db(1000, 100, 5, 0), "db: period must be at least 1 [years], got 0"),
    (lambda: excel.sln(1000, 100, 0), "sln: life must be greater than 0 [periods], got 0"),
    (lambda: excel.syd(1000, 100, 5, 6), "syd: per must be at most life [periods], got 6"),
    (lambda: excel.syd(1000, 100, -1, 1), "syd: life must be greater than 0 [periods], got -1"),
    (lambda: excel.syd(1000, 100, 5, 0), "syd: per must be greater than 0 [periods], got 0"),
    (lambda: excel.ddb(-1, 0, 5, 1), "ddb: cost must be at least 0 [USD], got -1"),
    (lambda: excel.ddb(1000, 100, 5, 1, 0), "ddb: factor must be greater than 0, got 0"),
    (lambda: excel.ddb(1000, 100, 5, 6), "ddb: period must be at most life [periods], got 6"),
    (lambda: excel.ddb(1000, 100, [5, 0], 1), "ddb: life must be greater than 0 [periods], "
                                             "got 0"),
    (lambda: excel.vdb(1000, 100, 5, 3, 2), "vdb: start_period must be at most end_period "
                                           "[periods], got 3"),
    (lambda: excel.vdb(1000, -100, 5, 1, 2), "vdb: salvage must be at least 0 [USD], got -100"),
    (lambda: excel.vdb(1000, 100, 5, 1, 6), "vdb: end_period must be at most life [periods], "
                                           "got 6"),
    (lambda: excel.vdb(1000, 100, 5, -1, 2), "vdb: start_period must be at least 0 [periods], "
                                            "got -1"),
    (lambda: excel.vdb(1000, 100, 5, 1, 2, -2), "vdb: factor must be greater than 0, got -2"),
    (lambda: excel.vdb(1000, 100, -5, 0, 0), "vdb: life must be greater than 0 [periods], "
                                            "got -5"),
    (lambda: excel.pmt(0.01, 10, 100, 0, 2), "pmt: type must be 0 (end of period) or 1 "
                                            "(beginning of period), got 2"),
    (lambda: excel.pmt(0.01, 0, 100), "pmt: nper must be nonzero [periods], got 0"),
    (lambda: excel.ipmt(0.01, 11, 10, 100), "ipmt: per must be at most nper [periods], got 11"),
    (lambda: excel.ppmt(0.01, 0, 10, 100), "ppmt: per must be at least 1 [periods], got 0"),
    (lambda: excel.pv(-1, 10, 100), "pv: rate must be greater than -1 [1/period], got -1"),
    (lambda: excel.rate(0, -100, 1000), "rate: nper must be greater than 0 [periods], got 0"),
    (lambda: excel.npv(-1, [1, 2]), "npv: rate must be different from -1 [1/period], got -1"),
    (lambda: excel.irr([1, 2, 3]), "irr: values must contain at least one positive and one "
                                   "negative cash flow"),
    (lambda: excel.irr([[-1, 2], [-1, -2]]), "irr: values must contain at least one positive "
                                             "and one negative cash flow (series 1)"),
    (lambda: excel.irr([-1, 0.5, -1]), "irr: values must have an internal rate of return above -1 per period"),
    (lambda: excel.xirr([100, 50], ["2020-01-01", "2021-01-01"]), "xirr: values must contain "
                                                                  "at least one positive"),
    (lambda: excel.xirr([-100, 50, 60], ["2020-01-01", "2019-01-01", "2021-01-01"]),
     "xirr: dates must be on or after the first date 2020-01-01, got 2019-01-01"),
    (lambda: excel.xirr([-100, 50, 60], ["2020-01-01", "2021-01-01"]),
     "xirr: dates must have one date per value (3 values), got 2 dates"),
    (lambda: excel.xnpv(0.1, [-100, 50], ["2020-01-01", "2019-01-01"]),
     "xnpv: dates must be on or after the first date"),
    (lambda: excel.xnpv(-1, [-100, 50], ["2020-01-01", "2021-01-01"]),
     "xnpv: rate must be greater than -1 [1/year], got -1"),
    (lambda: excel.mirr([1, 2, 3], 0.1, 0.1), "mirr: values must contain at least one positive"),
    (lambda: excel.mirr([-1, 2, 3], 0.1, -1), "mirr: reinvest_rate must be greater than -1"),
    (lambda: excel.irr_batch(5.0), "irr_batch: cash_flows must have shape (n_series, "
                                   "n_periods), got shape ()"),
    (lambda: excel.xirr_batch([[-1, 2]], ["2020-01-01"]), "xirr_batch: dates must have one date "
                                                          "per period"),
    (lambda: excel.xnpv(0.1, [-100, 50], [object(), object()]), "dates must be numpy "
                                                                "datetime64"),
]


@pytest.mark.parametrize(("call", "message"), ERRORS, ids=[m[:50] for _, m in ERRORS])
def test_error_names_argument_value_and_expectation(call, message):
    with pytest.raises(ExcelFunctionError, match=re.escape(message)):
        call()


def test_error_is_a_value_error():
    assert issubclass(ExcelFunctionError, ValueError)


def test_nan_propagates_and_no_solution_is_nan():
    assert np.isnan(excel.pmt(np.nan, 10, 100))
    assert np.isnan(excel.nper(0.05, -10, 1000))  # payment never covers the interest
    assert np.isnan(excel.rate(10, 100, 1000))  # no rate exists: spreadsheet #NUM!
    assert np.isnan(excel.nper(0, 0, 1000))


def test_irr_batch_does_not_stop_at_minus_one():
    # -1000 now and 10 in three periods: IRR = 0.01 ** (1/3) - 1 = -0.7846 (found while
    # integrating the capital stack; Newton in log(1 + r) once converged falsely at r = -1).
    rates = excel.irr_batch(np.array([[-1000.0, 0.0, 0.0, 10.0]]))
    assert rates[0] == pytest.approx(0.01 ** (1 / 3) - 1, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# irr_batch: the screened scan of the rate grid (several sign changes) and the Newton start
# from the coarse scan (one sign change)
# ---------------------------------------------------------------------------------------------


def _value_form(flows: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """NPV (r >= 0) or NPV compounded to the last period (r < 0), (n, K): the sign of the NPV
    without overflow, evaluated independently of econ.excel."""
    T = flows.shape[1]
    t = np.arange(T, dtype=float)[:, None]
    y = 1.0 + rates[None, :]
    with np.errstate(over="ignore"):
        return flows @ np.where(rates[None, :] < 0, y ** (T - 1 - t), y ** -t)


def _dense_scan_nearest(flows: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Brute force of the documented rule: evaluate every one of the 641 grid rates, take the
    sign change nearest the guess (a zero counts as negative, the left one on a tie) and
    bisect inside that cell."""
    grid = excel._SCAN_RATES
    values = _value_form(flows, grid)
    out = np.full(flows.shape[0], np.nan)
    for i, (row, g) in enumerate(zip(values, np.asarray(guess, dtype=float), strict=True)):
        cells = np.flatnonzero((row[:-1] > 0) != (row[1:] > 0))
        if cells.size == 0:
            continue
        distance = np.where(grid[cells + 1] < g, g - grid[cells + 1],
                            np.maximum(grid[cells] - g, 0.0))
        k = cells[np.argmin(distance)]  # argmin takes the first, i.e. the left, on a tie
        if row[k] == 0 or row[k + 1] == 0:
            out[i] = grid[k] if row[k] == 0 else grid[k + 1]
            continue
        lo, hi, f_lo = grid[k], grid[k + 1], row[k]
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            f_mid = _value_form(flows[i:i + 1], np.array([mid]))[0, 0]
            if (f_mid > 0) == (f_lo > 0):
                lo, f_lo = mid, f_mid
            else:
                hi = mid
        out[i] = 0.5 * (lo + hi)
    return out


def _several_sign_changes(seed: int, n: int, periods: int) -> np.ndarray:
    """Series with two or more sign changes of the kinds the engine and users produce."""
    rng = np.random.default_rng(seed)
    kind = seed % 4
    if kind == 0:  # - + - : capex, operating margins, negative months at the end
        capex = rng.uniform(1e3, 1e7, n)
        flows = capex[:, None] * rng.uniform(0.0, 0.08, (n, periods))
        flows[:, 0] = -capex
        tail = np.arange(periods) >= rng.integers(1, periods, n)[:, None]
        flows[tail] *= -rng.uniform(0.05, 2.0)
    elif kind == 1:  # noise
        flows = rng.normal(0.0, 1.0, (n, periods)) * 10.0 ** rng.uniform(-3, 6)
    elif kind == 2:  # chosen roots, some close together, some near -1 or far out
        flows = np.zeros((n, periods))
        for i in range(n):
            roots = rng.choice([-0.9999, -0.5, -0.01, 0.0, 0.003, 0.1, 0.1004, 0.4, 3.0, 80.0],
                               size=min(periods - 1, 3), replace=False)
            poly = np.poly(1.0 + roots) * 10.0 ** rng.uniform(-2, 6)
            flows[i, :poly.size] = poly
    else:  # - + - with trailing zeros (series of different horizons in one batch)
        flows = _several_sign_changes(seed - 3, n, periods)
        flows[np.arange(periods) >= periods - rng.integers(0, periods // 2 + 1, n)[:, None]] = 0
    return flows


@given(seed=st.integers(0, 2**32 - 1), periods=st.integers(3, 80))
@SETTINGS
def test_irr_batch_several_sign_changes_match_a_dense_scan_of_the_grid(seed, periods):
    flows = _several_sign_changes(seed, 40, periods)
    rng = np.random.default_rng(seed + 1)
    guess = rng.choice([0.01, -0.5, 0.15, 2.0], 40) + rng.uniform(-0.01, 0.01, 40)
    several = excel._sign_structure(flows)[0] & ~excel._sign_structure(flows)[1]
    got = excel.irr_batch(flows, guess)[several]
    expected = _dense_scan_nearest(flows[several], guess[several])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@given(seed=st.integers(0, 2**32 - 1), periods=st.integers(2, 80))
@SETTINGS
def test_screened_cells_have_one_sign_on_every_grid_rate(seed, periods):
    # Soundness of the bound that lets irr_batch skip most of the grid: a coarse cell it
    # clears shows no sign change (and no zero) at any grid rate inside.
    flows = _several_sign_changes(seed, 60, periods)
    rng = np.random.default_rng(seed)
    if periods >= 3:  # nearly a double root
        flows[::7] = 0.0
        flows[::7, :3] = [-100.0, 230.0, -132.25 * (1 + rng.uniform(-1e-9, 1e-9))]
    tables = excel._grid_tables(periods)
    values = _value_form(flows, excel._SCAN_RATES)
    nodes = excel._SCREEN_NODES
    certain = excel._sign_certain(flows, np.arange(flows.shape[0]), values[:, nodes], tables)
    for j in range(nodes.size - 1):
        inside = values[:, nodes[j]:nodes[j + 1] + 1]
        one_sign = (inside > 0).all(axis=1) | (inside < 0).all(axis=1)
        assert one_sign[certain[:, j]].all()


def test_screening_clears_most_cells_of_project_like_series():
    flows = _several_sign_changes(4, 500, 73)  # kind 0: - + -
    tables = excel._grid_tables(73)
    values = flows @ tables.coarse
    assert excel._sign_certain(flows, np.arange(500), values, tables).mean() > 0.9


def test_irr_batch_minus_plus_minus_without_a_root_is_nan():
    # NPV = -100 + 230 x - 133 x**2 with x = 1/(1+r): discriminant 230**2 - 4*100*133 < 0.
    assert np.isnan(excel.irr_batch(np.array([[-100.0, 230.0, -133.0]]))[0])
    with pytest.raises(ExcelFunctionError, match="internal rate of return"):
        excel.irr([-100.0, 230.0, -133.0])
    # A double root (x = 230/264.5, r = 0.15) is no sign change: invisible to the scan.
    assert np.isnan(excel.irr_batch(np.array([[-100.0, 230.0, -132.25]]))[0])


def test_irr_batch_several_roots_returns_the_one_nearest_the_guess():
    cubic = np.poly([1.05, 1.1, 1.3])  # future value (y - 1.05)(y - 1.1)(y - 1.3), y = 1 + r
    got = excel.irr_batch(np.tile(cubic, (4, 1)), [-0.5, 0.08, 0.25, 2.0])
    np.testing.assert_allclose(got, [0.05, 0.1, 0.3, 0.3], atol=1e-12)
    # NPV = (1 - x)(1 - 2x): roots r = 0 (a grid rate, where the NPV is exactly 0) and r = 1.
    got = excel.irr_batch(np.array([[1.0, -3.0, 2.0]] * 2), [0.01, 0.9])
    np.testing.assert_allclose(got, [0.0, 1.0], atol=1e-12)
    # Monthly project flows: capex, 36 months of margin, then 12 months of losses.
    flows = np.r_[-1000.0, np.full(36, 45.0), np.full(12, -30.0)]
    low, high = excel.irr_batch(np.tile(flows, (2, 1)), [-0.05, 0.5])
    for r in (low, high):
        assert abs(excel.npv_batch(r, flows)) <= 1e-9 * np.abs(flows).sum()
    assert low < 0.0 < high
    np.testing.assert_allclose([low, high], _dense_scan_nearest(np.tile(flows, (2, 1)),
                                                                [-0.05, 0.5]), atol=1e-12)


def test_irr_batch_single_sign_change_is_newton_from_any_start():
    # One sign change: one root, whatever start Newton takes (the coarse scan's, or the
    # guess when the root lies beyond the scanned rates).
    flows = _gpu_like(200, 61, seed=5)
    block = excel._PeriodicBlock(np.ascontiguousarray(flows.T))
    from_guess = excel._newton(block, np.full(200, 0.01))
    np.testing.assert_allclose(excel.irr_batch(flows), from_guess, rtol=1e-12, atol=1e-13)
    assert excel.irr_batch(np.array([[-1.0, 5000.0]]))[0] == pytest.approx(4999.0, rel=1e-12)
    # Trailing zeros (a short series in a batch of long ones) change nothing, although the
    # compounded NPV underflows to exactly 0 at the lowest grid rates.
    padded = np.zeros((200, 121))
    padded[:, :61] = flows
    np.testing.assert_allclose(excel.irr_batch(padded), from_guess, rtol=1e-12, atol=1e-13)
    tiny = np.r_[-5000.0, np.full(12, 0.7665), np.zeros(54)]
    assert excel.irr_batch(tiny[None, :])[0] == pytest.approx(
        excel.irr_batch(tiny[None, :13])[0], rel=1e-12)


def test_irr_batch_newton_does_not_stop_where_the_slope_overflows():
    # From r0 ~ -0.99724, x = 1/(1+r0) has x**120 ~ 1e307: the NPV is finite but its slope
    # overflows, and Newton's step f/df = -0 looked like convergence at r0.
    flows = np.zeros((1, 121))
    flows[0, 0], flows[0, -1] = -1.0, 2.0
    r0 = 10.0 ** (-307 / 120) - 1
    block = excel._PeriodicBlock(np.ascontiguousarray(flows.T))
    assert np.isnan(excel._newton(block, np.array([r0]))[0])
    assert excel.irr_batch(flows, r0)[0] == pytest.approx(2 ** (1 / 120) - 1, rel=1e-12)
