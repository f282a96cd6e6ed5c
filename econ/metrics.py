"""Summary metrics of monthly ledgers: discounting, levelized cost, payback, break-even price.

Pure functions over arrays shaped (scenarios, months) with month 0 the purchase month; the engine
passes them its ledger's lines. Cash flows follow DESIGN.md §4: outflows negative.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from econ import tax
from econ.arrays import cumsum_months
from econ.units import TOKENS_PER_MTOK, monthly_rate, power_path


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
    """Multiplier turning a PV of USD into USD per million discounted tokens; NaN without tokens."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return TOKENS_PER_MTOK / np.where(pv_tokens > 0, pv_tokens, np.nan)


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
    """USD per million tokens, undiscounted; NaN where no tokens [USD/Mtok]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tokens > 0, usd / tokens * TOKENS_PER_MTOK, np.nan)


def payback_months(cash_flow, active):
    """Months until cumulative project cash flow turns non-negative, interpolated within the month.

    NaN when it never does within the horizon.

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
    return np.where(ok, first - 1 + fraction, np.nan)


def breakeven_price_usd_per_mtok(
    fixed, spot_units, deductions, tax_rate, last_month, capital, discount
):
    """Month-1 token price (following the price path) at which project NPV after tax is zero.

    Tax depends only on each year's taxable income, which is linear in the price p:
    A_k + p * B_k. So NPV(p) = base + p * a - sum_k w_k * tax_k(A + p B), with w_k the average
    discount factor of year k's (evenly paid) months. NPV is continuous, piecewise linear and
    increasing in p; the root is bracketed from the pre-tax break-even (where NPV after tax <= 0)
    and refined by the Illinois variant of regula falsi, exact on each linear piece, on (n, years)
    arrays. NaN where token sales do not move the NPV (fully contracted, or no tokens).

    Parameters
    ----------
    fixed : array (n, T)  EBITDA without token revenue [USD]
    spot_units : array (n, T)  token revenue per USD/Mtok of month-1 price [USD per USD/Mtok]
    deductions : array (n, T)  tax deductions beyond EBITDA (depreciation, interest, less gains)
    tax_rate : array (n,)  [fraction]
    last_month : int array (n,)
    capital : array (n, T)  capital cash flows (proceeds less capex) [USD]
    discount : array (n, T)  discount factors (`discount_factors`)
    """
    n, months = fixed.shape
    years = tax.tax_years(months)
    a = present_value(spot_units, discount)  # NPV gain per USD/Mtok, before tax
    base = present_value(fixed + capital, discount)
    taxable_fixed = tax.annual_sums(fixed - deductions)
    taxable_per_price = tax.annual_sums(spot_units)
    paying = (np.arange(months)[None, :] >= 1) * discount
    weight = tax.annual_sums(paying) / np.maximum(tax.months_in_year(last_month, years), 1)

    def npv_at(p, rows):
        taxable = taxable_fixed[rows] + p[:, None] * taxable_per_price[rows]
        due = tax.tax_with_loss_carryforward(taxable, tax_rate[rows])
        return base[rows] + p * a[rows] - np.einsum("ij,ij->i", due, weight[rows])

    result = np.full(n, np.nan)
    rows = np.flatnonzero(a > 0)
    if rows.size == 0:
        return result
    lo = np.maximum(-base[rows] / a[rows], 0.0)
    f_lo = npv_at(lo, rows)
    done = f_lo >= 0  # no token revenue needed, or the pre-tax break-even already covers tax
    result[rows[done]] = lo[done]
    rows, lo, f_lo = rows[~done], lo[~done], f_lo[~done]
    hi = np.maximum(lo, 1e-6) * 2.0
    f_hi = npv_at(hi, rows)
    for _ in range(200):  # widen the bracket; NPV rises by at least (1 - tax rate) * a per USD/Mtok
        short = f_hi < 0
        if not short.any():
            break
        lo, f_lo = np.where(short, hi, lo), np.where(short, f_hi, f_lo)
        hi = np.where(short, hi * 2.0, hi)
        f_hi = np.where(short, npv_at(hi, rows), f_hi)
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
