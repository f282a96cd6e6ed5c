"""Summary metrics of monthly ledgers: discounting, levelized cost, payback, break-even price.

Pure functions over arrays shaped (scenarios, months) with month 0 the purchase month; the engine
passes them its ledger's lines. Cash flows follow docs/methodology.md ("Time, units and signs"):
outflows negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from econ import tax
from econ.arrays import cumsum_months
from econ.excel import (
    investment_irr_batch,
    irr_batch,
    irr_roots_batch,
    roots_in_cells,
    several_sign_changes,
)
from econ.units import HALF_CENT_USD, TOKENS_PER_MTOK, annual_rate, monthly_rate, power_path

IRR_RANGE_ANNUAL = (-0.99, 10.0)
"""Rates searched for an IRR, -99% to +1,000% a year: an IRR is reported only where exactly one
rate in this range makes the NPV fall through zero as the rate rises [fraction/year]."""


def discount_factors(discount_rate_annual, months, active=None):
    """Discount factor of each month, (1 + r_m)^-m with r_m = (1 + r)^(1/12) - 1 [fraction (n, T)].

    Month 0 (the purchase month) is not discounted; where `active` is given (a bool (n, T) mask of
    each scenario's months), months outside it get factor 0, so sums over them vanish.

    Parameters
    ----------
    discount_rate_annual : array (n,)  annual discount rate, compounded monthly [fraction]
    months : int array (T,)  0..T-1
    active : bool array (n, T), optional
    """
    factors = power_path(1.0 + monthly_rate(discount_rate_annual), -np.asarray(months))
    return factors if active is None else factors * active


def present_value(values, factors):
    """Sum of each row's values times its discount factors [unit of values, array (n,)]."""
    return np.einsum("ij,ij->i", values, factors)


def per_mtok_of_present_tokens(pv_tokens):
    """Multiplier turning a PV of USD into USD per million discounted tokens; NaN without tokens
    and where the token count overflowed to inf (a cost per token of 0 would be false)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return TOKENS_PER_MTOK / np.where((pv_tokens > 0) & (pv_tokens < np.inf), pv_tokens, np.nan)


def levelized_cost(pv_costs_usd: Mapping[str, np.ndarray], pv_tokens):
    """Levelized cost per million tokens and its components [USD/Mtok].

        LCOT = sum_m C_m d_m / sum_m Q_m d_m * 10^6,

    the constant price that recovers the present value of all costs over the present value of the
    tokens (the levelized cost of energy of NREL's and the IEA's method, with tokens for kWh).

    Parameters
    ----------
    pv_costs_usd : component name -> array (n,)  present value of each cost [USD]
    pv_tokens : array (n,)  present value of the tokens produced [tokens]

    Returns
    -------
    (total, components): array (n,) and name -> array (n,); NaN where no tokens are produced.
    """
    per_mtok = per_mtok_of_present_tokens(pv_tokens)
    components = {name: pv * per_mtok for name, pv in pv_costs_usd.items()}
    return sum(components.values()), components


def cost_usd_per_mtok(usd, tokens):
    """USD per million tokens, undiscounted; NaN where no tokens or their count overflowed
    [USD/Mtok]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((tokens > 0) & (tokens < np.inf), usd / tokens * TOKENS_PER_MTOK, np.nan)


def _irr_range_monthly():
    return tuple(float(monthly_rate(np.array(r))) for r in IRR_RANGE_ANNUAL)


def unique_irr_annual(cash_flow):
    """Annual IRR of monthly flows where it is unique as an investment's, else NaN [fraction/year].

    The policy of docs/methodology.md ("IRR: which root is reported"): the IRR is the one rate in
    IRR_RANGE_ANNUAL at which the NPV falls through zero as the rate rises (NPV > 0 just below it,
    < 0 above), found on monthly flows by `econ.excel.investment_irr_batch` and annualized as
    (1 + m)^12 - 1. Where several rates do so, or none, it is NaN. Where the flows change sign more
    than once several rates may zero the NPV (Descartes' rule of signs) even where only one of them
    falls through zero. Then the one falling rate is NaN too where it lies on the other side of 0%
    from the NPV at 0% (the flows' sum beyond half a cent): a rate at which the NPV rises through
    zero lies between, and judged against a hurdle rate there the IRR would accept what the NPV
    rejects, or the reverse (the capital-stack seed's equity pays a large last repayment: its NPV
    is negative below 6.65% a year and positive from there to 446.35%, no return to read).

    Parameters
    ----------
    cash_flow : array (n, T)  monthly cash flows, month 0 first, outflows negative [USD]

    Returns
    -------
    dict of arrays (n,)
        ``irr_annual`` [fraction/year], ``falling`` and ``roots`` (counts of falling and of all
        roots found in the range), ``several_sign_changes`` (bool), ``against_npv`` (bool: the
        one falling rate left out as on the other side of 0% from the NPV at 0%),
        ``falling_annual`` (that rate kept) and ``flows_sum`` [USD]; and ``cells``, where the
        rows that change sign more than once were scanned (for `irr_roots_annual`).
    """
    lower, upper = _irr_range_monthly()
    found = investment_irr_batch(cash_flow, lower, upper)
    rate = found.pop("rate")
    total = np.sum(cash_flow, axis=-1)
    with np.errstate(invalid="ignore"):
        against = ((rate > 0) & (total < -HALF_CENT_USD)) | ((rate < 0) & (total > HALF_CENT_USD))
    found["irr_annual"] = annual_rate(np.where(against, np.nan, rate))
    found["against_npv"], found["flows_sum"] = against, total
    found["falling_annual"] = annual_rate(rate)
    return found


def sign_changes(cash_flow) -> np.ndarray:
    """How often each row's flows change sign, zeros skipped: 0, 1, or 2 for more than once
    [int (n,)]."""
    flows = np.atleast_2d(np.asarray(cash_flow, dtype=float))
    both = (flows > 0).any(axis=1) & (flows < 0).any(axis=1)
    return np.where(both, np.where(several_sign_changes(flows), 2, 1), 0)


def single_root_annual(cash_flow) -> np.ndarray:
    """Each row's one IRR where its flows change sign exactly once, wherever it lies (inside
    IRR_RANGE_ANNUAL or not): such flows have exactly one rate above -100% that zeroes their NPV
    (Descartes' rule of signs), found by `econ.excel.irr_batch` on the monthly flows and
    annualized; NaN for the other rows [fraction/year (n,)].

    Says why a row has no IRR in the range: its one root lies above the range (31.95% a month,
    +2,680% a year) or below it.
    """
    flows = np.atleast_2d(np.asarray(cash_flow, dtype=float))
    out = np.full(flows.shape[0], np.nan)
    once = sign_changes(flows) == 1
    if once.any():
        out[once] = annual_rate(irr_batch(flows[once], 0.01))
    return out


def irr_roots_annual(cash_flow, cells=None) -> list[np.ndarray]:
    """Each row's rates in IRR_RANGE_ANNUAL that zero its NPV, and their direction.

    Per row an array (k, 2): the annual roots ascending [fraction/year] and -1 where the NPV
    falls through zero there as the rate rises, +1 where it rises (`econ.excel.irr_roots_batch`
    on the monthly flows, annualized). `cells`: where the flows were scanned already (the
    `cells` of `unique_irr_annual`, their rows counted in `cash_flow`), the roots are found in
    them (`econ.excel.roots_in_cells`) and no row is scanned again.
    """
    lower, upper = _irr_range_monthly()
    if cells is None:
        out = irr_roots_batch(cash_flow, lower, upper)
    else:
        out = roots_in_cells(np.asarray(cash_flow, dtype=float), cells)
    if not out:
        return out
    # annualized all at once (a call per row cost more than the roots' search)
    pairs = np.concatenate(out)
    pairs[:, 0] = annual_rate(pairs[:, 0])
    ends = np.cumsum([0] + [len(p) for p in out]).tolist()
    return [pairs[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True)]


def mirr_annual(cash_flow, finance_rate_annual, reinvest_rate_annual, last_month):
    """Modified IRR of monthly flows, spreadsheet MIRR semantics, annualized [fraction/year].

        MIRR_m = (FV_H(inflows at r_reinvest) / -PV_0(outflows at r_finance))^(1/H) - 1,
        MIRR = (1 + MIRR_m)^12 - 1,

    over months 0..H of each row (H its `last_month`: the spreadsheet's n = H + 1 values), the
    annual rates converted to monthly as (1 + r)^(1/12) - 1. NaN where a row has no inflow or
    no outflow (the spreadsheet's #DIV/0!). `mirr_of_factors` is the same from discount factors
    a caller already has.

    Parameters
    ----------
    cash_flow : array (n, T)  monthly flows, month 0 first; zero after each row's horizon [USD]
    finance_rate_annual : array (n,)  rate paid on the money invested [fraction/year]
    reinvest_rate_annual : array (n,)  rate earned on the cash returned [fraction/year]
    last_month : int array (n,)  each row's horizon H

    References
    ----------
    Microsoft Support, "MIRR function"; Lin, S. A. Y., "The modified internal rate of return
    and investment criterion", The Engineering Economist 21(4) (1976) 237-247.
    """
    months = np.arange(np.shape(cash_flow)[1])
    return mirr_of_factors(
        cash_flow,
        discount_factors(np.asarray(finance_rate_annual, dtype=float), months),
        discount_factors(np.asarray(reinvest_rate_annual, dtype=float), months),
        last_month,
    )


def mirr_of_factors(cash_flow, finance_factors, reinvest_factors, last_month):
    """`mirr_annual` from the discount factors of its two rates (`discount_factors`, (n, T)).

    The future value at month H of the inflows is their present value at the reinvestment
    rate over that rate's factor of month H: sum_t c_t (1 + r)^(H - t) = sum_t c_t d_t / d_H.
    Factors may be 0 after each row's horizon (the engine's own), not before it.
    """
    flows = np.asarray(cash_flow, dtype=float)
    horizon = np.asarray(last_month)
    within = np.arange(flows.shape[1])[None, :] <= horizon[:, None]
    rows = np.arange(flows.shape[0])
    inflow, outflow = flows > 0, flows < 0
    if not within.all():  # (a batch of one horizon: every month is within it)
        inflow &= within
        outflow &= within
    gains = present_value(np.where(inflow, flows, 0.0), reinvest_factors)
    gains = gains / reinvest_factors[rows, horizon]
    costs = -present_value(np.where(outflow, flows, 0.0), finance_factors)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (gains > 0) & (costs > 0) & (horizon > 0)
        monthly = np.where(ok, np.exp(np.log(gains / costs) / np.where(ok, horizon, 1.0)), np.nan)
    return annual_rate(monthly - 1.0)


def profitability_index(npv_usd, pv_investment_usd):
    """Profitability index: PV of the project's other flows per USD of PV of investment.

        PI = (NPV + PV(capex)) / PV(capex) = 1 + NPV / PV(capex),

    with PV(capex) the present value of the capital expenditure (the investment outflows, at
    the discount rate) and NPV the project NPV, so that the numerator is the PV of every other
    project flow (operating cash flow after tax, disposal proceeds). Where all capex is paid in
    month 0 and nothing else is, this is the textbook ratio of the PV of the cash flows after
    the initial investment to the initial investment. PI > 1 exactly where NPV > 0. NaN where
    there is no capex.

    References
    ----------
    Ross, S. A., Westerfield, R. W. & Jaffe, J., *Corporate Finance*, 12th ed., McGraw-Hill
    (2019), section 5.7 "The profitability index"; Brealey, R. A., Myers, S. C. & Allen, F.,
    *Principles of Corporate Finance*, 13th ed. (2020), section 5.4.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pv_investment_usd > 0, 1.0 + npv_usd / pv_investment_usd, np.nan)


@dataclass(frozen=True)
class Payback:
    """When the cumulative project cash flow is recovered, and whether it stays recovered.

    months : (n,)  months until it turns non-negative, interpolated within the month; NaN when it
        never does within the horizon
    undone_month : (n,)  after a payback, the month from which it stays below 0 to the horizon
        (the investment not recovered at the end); NaN where it ends recovered or never was
    cumulative_end_usd : (n,)  cumulative project cash flow at the horizon [USD]
    """

    months: np.ndarray
    undone_month: np.ndarray
    cumulative_end_usd: np.ndarray


def payback(cash_flow, active) -> Payback:
    """Payback of each scenario's project cash flow (`Payback`). A payback counts the first
    month the cumulative cash flow turns non-negative, as the textbook does (Brealey, Myers &
    Allen, *Principles of Corporate Finance*, §5.3); flows that fall back below zero (late capex,
    a costly exit) can end the horizon under water after it, which `undone_month` says.

    Parameters
    ----------
    cash_flow : array (n, T)  monthly project cash flow, month 0 the purchase [USD]
    active : bool array (n, T)  each scenario's months
    """
    cumulative = cumsum_months(np.where(active, cash_flow, 0.0))
    reached = (cumulative >= 0) & active
    reached[:, 0] = False
    first = np.argmax(reached, axis=1)
    ok = reached.any(axis=1)
    rows = np.arange(len(first))
    before = cumulative[rows, np.maximum(first - 1, 0)]
    flow = cash_flow[rows, first]
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.where(flow > 0, -before / flow, 1.0)
    end = cumulative[:, -1]  # the months after a horizon add 0
    # the month after the last recovered one starts the run below 0 that lasts to the horizon
    last_recovered = reached.shape[1] - 1 - np.argmax(reached[:, ::-1], axis=1)
    undone = ok & (end < -HALF_CENT_USD)
    return Payback(
        months=np.where(ok, first - 1 + fraction, np.nan),
        undone_month=np.where(undone, last_recovered + 1.0, np.nan),
        cumulative_end_usd=end,
    )


def breakeven_price_usd_per_mtok(
    fixed,
    spot_units,
    deductions,
    tax_rate,
    last_month,
    capital,
    discount,
    tax_payment=None,
    loss_limit=None,
):
    """Month-1 token price (following the price path) at which project NPV after tax is zero.

    Tax depends only on each year's taxable income, which is linear in the price p:
    A_k + p * B_k. So NPV(p) = base + p * a - PV(payments of tax_k(A + p B)), the payments made
    on the engine's own schedule (`tax.tax_payments_usd`: quarterly, annual or monthly, none
    before the first taxable income). NPV is increasing in p and piecewise linear between the
    prices at which the first taxable month moves; the root is bracketed from p = 0 (or, where
    NPV(0) > 0, from below) and refined by the Illinois variant of regula falsi. The root is returned even where it is negative (NPV > 0 at a zero price: the other
    revenue covers the costs), for the caller to report; never clamped to 0. NaN where token
    sales do not move the NPV (fully contracted, or no tokens).

    Parameters
    ----------
    fixed : array (n, T)  EBITDA without token revenue [USD]
    spot_units : array (n, T)  token revenue per USD/Mtok of month-1 price [USD per USD/Mtok]
    deductions : array (n, T)  tax deductions beyond EBITDA (depreciation, interest, less gains)
    tax_rate : array (n,)  [fraction]
    last_month : int array (n,)
    capital : array (n, T)  capital cash flows (proceeds less capex) [USD]
    discount : array (n, T)  discount factors (`discount_factors`)
    tax_payment : int array (n,)  payment schedule code (`tax.tax_payments_usd`); default
        quarterly
    loss_limit : array (n,) or None  share of a year's income that losses carried forward may
        offset (`tax.income_taxed_to_date_usd`); None: no limit
    """
    n, months = fixed.shape
    a = present_value(spot_units, discount)  # NPV gain per USD/Mtok, before tax
    base = present_value(fixed + capital, discount)
    taxable_fixed = np.asarray(fixed, dtype=float) - deductions
    last_month = np.broadcast_to(np.asarray(last_month), (n,))
    schedule = np.zeros(n, dtype=np.int64) if tax_payment is None else np.asarray(tax_payment)
    tax_value = tax.LinearTaxValue(
        taxable_fixed, spot_units, tax_rate, last_month, discount, schedule, loss_limit
    )

    def npv_at(p, rows):
        fast = tax_value.usable[rows]
        if fast.all():
            return base[rows] + p * a[rows] - tax_value(p, rows)
        # Negative token revenue in some month (not from the engine): tax month by month.
        taxable = taxable_fixed[rows] + p[:, None] * spot_units[rows]
        limit = None if loss_limit is None else np.asarray(loss_limit)[rows]
        due = tax.tax_with_loss_carryforward(tax.annual_sums(taxable), tax_rate[rows], limit)
        paid = tax.tax_payments_usd(
            due, tax.first_taxable_month(taxable, limit), last_month[rows], months, schedule[rows]
        )
        return base[rows] + p * a[rows] - np.einsum("ij,ij->i", paid, discount[rows])

    result = np.full(n, np.nan)
    rows = np.flatnonzero(a > 0)
    if rows.size == 0:
        return result
    zero = np.zeros(rows.size)
    f_zero = npv_at(zero, rows)
    exact = f_zero == 0
    result[rows[exact]] = 0.0
    rows, f_zero = rows[~exact], f_zero[~exact]
    # The bracket [lo, hi] holds the root. Where NPV(0) < 0 and costs exceed the other revenue
    # (base < 0), the pre-tax break-even -base / a is a lower end (tax only lowers the NPV
    # there) and the same divided by (1 - tax rate) usually an upper one; otherwise from p = 0
    # outwards. Ends that fall short are doubled below.
    below = f_zero > 0
    step = np.maximum(np.abs(base[rows] / a[rows]), 1e-6)
    pretax = (-base[rows] / a[rows] > 0) & ~below
    first = np.where(below, -step, step)
    f_first = npv_at(first, rows)
    keep = 1.0 - np.clip(np.asarray(tax_rate, dtype=float)[rows], 0.0, 0.9)
    lo = np.where(below, first, np.where(pretax, first, 0.0))
    f_lo = np.where(below, f_first, np.where(pretax, f_first, f_zero))
    hi = np.where(below, 0.0, np.where(pretax, first / keep, first))
    f_hi = np.where(below, f_zero, f_first)
    if pretax.any():
        f_hi[pretax] = npv_at(hi[pretax], rows[pretax])
    for _ in range(200):  # widen the bracket
        short_hi, short_lo = f_hi < 0, f_lo > 0
        if not (short_hi.any() or short_lo.any()):
            break
        lo, f_lo = np.where(short_hi, hi, lo), np.where(short_hi, f_hi, f_lo)
        hi, f_hi = np.where(short_lo, lo, hi), np.where(short_lo, f_lo, f_hi)
        hi = np.where(short_hi, np.maximum(hi * 2.0, hi + step), hi)
        lo = np.where(short_lo, np.minimum(lo * 2.0, lo - step), lo)
        # (each row's NPV is its own: only the ends moved are evaluated)
        if short_hi.any():
            f_hi[short_hi] = npv_at(hi[short_hi], rows[short_hi])
        if short_lo.any():
            f_lo[short_lo] = npv_at(lo[short_lo], rows[short_lo])
    on_end = (f_lo == 0) | (f_hi == 0)  # an end is the root (e.g. the pre-tax one, untaxed)
    result[rows[on_end]] = np.where(f_lo == 0, lo, hi)[on_end]
    keep = ~on_end
    rows, lo, hi, f_lo, f_hi = (x[keep] for x in (rows, lo, hi, f_lo, f_hi))
    return _illinois(npv_at, result, rows, lo, hi, f_lo, f_hi, base)


def _illinois(npv_at, result, rows, lo, hi, f_lo, f_hi, base):
    """Regula falsi with the Illinois modification on bracketed rows, written into `result`."""
    side = np.zeros(len(rows), dtype=np.int8)
    for _ in range(100):
        if rows.size == 0:
            break
        p = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        f = npv_at(p, rows)
        converged = (np.abs(f) <= 1e-10 * np.maximum(1.0, np.abs(base[rows]))) | (
            hi - lo <= 1e-13 * np.maximum(1.0, hi)
        )
        result[rows[converged]] = p[converged]
        positive = f > 0
        # Illinois: halve the kept end's value when the same end is kept twice in a row.
        f_lo = np.where(positive & (side == 1), f_lo / 2, f_lo)
        f_hi = np.where(~positive & (side == -1), f_hi / 2, f_hi)
        hi, f_hi = np.where(positive, p, hi), np.where(positive, f, f_hi)
        lo, f_lo = np.where(positive, lo, p), np.where(positive, f_lo, f)
        side = np.where(positive, 1, -1).astype(np.int8)
        keep = ~converged
        rows, lo, hi, f_lo, f_hi, side = (x[keep] for x in (rows, lo, hi, f_lo, f_hi, side))
    return result
