"""Revenue and the markets behind it: token prices, GPU-hour rental prices, utilization, contracts.

This module owns
- token price curves: a constant annual decline (constant-capability deflation, e.g. the roughly
  10x a year of a16z's "LLMflation", 2024, is a decline of 0.9) or a table of dated prices;
- GPU-hour rental price curves: a decline towards a floor, or a table (e.g. H100 rentals from about
  USD 8 in 2023 to USD 1.70-2.60 in 2025-26);
- utilization: a linear ramp, then churn (booked capacity lost each year and not re-let);
- the token mix: input and cached input token prices beside the output price, and the revenue
  of the input tokens a workload sends per output token;
- contracts: a share of GPUs rented at a fixed price per GPU-hour, renewed at the market rental
  price every term; the rest (spot) sell tokens at the token price, or GPU-hours at the market;
- the monotone interpolation (Fritsch-Carlson PCHIP) that turns tables into curves.

Time runs from month 1: `t = max(m - 1, 0) / 12` years. Functions are pure and vectorized over a
leading scenario axis (n,) and a month axis (T,); tables are (n, k) arrays padded with NaN.
"""

from __future__ import annotations

import numpy as np

from econ.errors import InputError
from econ.units import HOURS_PER_MONTH, TOKENS_PER_MTOK, power_path


class MarketError(InputError):
    """Invalid market input (a non-positive price in a curve, shares that do not add up, ...)."""


def _col(values):
    return np.asarray(values, dtype=float).reshape(-1)[:, None]


def _first_bad(name, values, bad, expected):
    flat_bad = np.asarray(bad).reshape(-1)
    if np.any(flat_bad):
        index = np.unravel_index(int(np.flatnonzero(flat_bad)[0]), np.shape(bad))
        where = ", ".join(str(int(i)) for i in index)
        value = np.asarray(values)[index] if np.ndim(values) else values
        value = value.item() if isinstance(value, np.generic) else value
        raise MarketError(f"{name}[{where}] = {value!r}: expected {expected}")


def price_path(price_decline_annual, months):
    """Token price relative to month 1: (1 - d)^((m - 1) / 12), 1 in months 0 and 1 [fraction].

    Parameters
    ----------
    price_decline_annual : array (n,)  annual fall of the price, 0 <= d < 1 [fraction/year]
    months : array (T,)  month indices
    """
    d = np.asarray(price_decline_annual, dtype=float).reshape(-1)
    # a decline of 1 or more gives no price (or NaN), a negative one a rising price
    _first_bad("price_decline_annual", d, ~((d >= 0) & (d < 1)), "a decline in [0, 1)")
    return power_path(1.0 - d, np.maximum(np.asarray(months) - 1, 0) / 12.0)


def revenue_usd_per_month(
    tokens, gpus, price_usd_per_mtok, price_factor, contract_share, contract_usd_per_gpu_hour
):
    """Revenue per month: uncontracted tokens at the token price plus contracted GPU-hours [USD].

    Contracted GPUs earn their hourly rate whether or not they serve; the other GPUs earn only for the
    tokens they produce, so utilization lowers token revenue but not contract revenue.

    Parameters
    ----------
    tokens, gpus, price_factor : arrays (n, T)  tokens produced, GPUs in service, price path
    price_usd_per_mtok, contract_share, contract_usd_per_gpu_hour : arrays (n,)
    """
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731
    share = col(contract_share)
    tokens_revenue = (
        (1.0 - share) * tokens * col(price_usd_per_mtok) * price_factor / TOKENS_PER_MTOK
    )
    contract_revenue = share * gpus * HOURS_PER_MONTH * col(contract_usd_per_gpu_hour)
    return tokens_revenue, contract_revenue


def decline_from_fall_factor(fall_factor_annual):
    """Annual price decline of a price that falls by a factor F a year: 1 - 1/F [fraction/year].

    a16z's "LLMflation" (G. Appenzeller, 2024) finds the price of a constant capability falling
    about 10x a year, a decline of 0.9; F = 1 is no decline.

    Parameters
    ----------
    fall_factor_annual : array  factor by which the price falls each year, >= 1 [ratio]
    """
    factor = np.asarray(fall_factor_annual, dtype=float)
    _first_bad("fall_factor_annual", factor, ~(factor >= 1.0), "a factor >= 1 (1 = flat)")
    return 1.0 - 1.0 / factor


def monotone_interpolate(knot_x, knot_y, x):
    """Shape-preserving piecewise cubic Hermite interpolation (PCHIP), row by row [same as y (n, T)].

    Slopes at interior knots are the weighted harmonic mean of the neighbouring secants, 0 where
    they differ in sign (F. N. Fritsch and R. E. Carlson, SIAM J. Numer. Anal. 17(2), 1980, 238-246,
    doi:10.1137/0717021; the weights of F. N. Fritsch and J. Butland, SIAM J. Sci. Stat. Comput.
    5(2), 1984, 300-304); end slopes use the shape-preserving three-point formula (C. Moler,
    Numerical Computing with MATLAB, SIAM 2004, section 3.4). The result is monotone wherever the
    data are, never overshoots, and equals scipy's PchipInterpolator inside the table. Outside the
    table the nearest knot's value is held. Two knots interpolate linearly; one knot is constant.

    Parameters
    ----------
    knot_x : array (n, k)  knot positions, strictly increasing; unused trailing slots NaN
    knot_y : array (n, k)  values at the knots, finite; unused slots ignored
    x : array (T,) or (n, T)  where to evaluate
    """
    kx = np.atleast_2d(np.asarray(knot_x, dtype=float))
    ky = np.atleast_2d(np.asarray(knot_y, dtype=float))
    if kx.shape != ky.shape:
        raise MarketError(
            f"knot_x {kx.shape} and knot_y {ky.shape}: expected arrays of the same shape"
        )
    n, k = kx.shape
    xq = np.asarray(x, dtype=float)
    xq = np.broadcast_to(xq[None, :] if xq.ndim == 1 else xq, (n, xq.shape[-1]))
    used = ~np.isnan(kx)
    count = used.sum(axis=1)
    slots = np.arange(k)[None, :]
    _first_bad("knot_x", count, count < 1, "at least one point in each table")
    _first_bad("knot_x", kx, used != (slots < count[:, None]), "unused slots only after the points")
    _first_bad("knot_y", ky, used & ~np.isfinite(ky), "a finite value at each point")
    last = count - 1
    rows = np.arange(n)
    x_last, y_last = kx[rows, last][:, None], ky[rows, last][:, None]
    # Unused slots continue the table flat, one unit apart, so every row has k ordered knots.
    fx = np.where(used, kx, x_last + (slots - last[:, None]))
    fy = np.where(used, ky, y_last)
    if k == 1:
        return np.broadcast_to(fy, xq.shape).copy()
    h = np.diff(fx, axis=1)
    unordered = np.zeros(kx.shape, dtype=bool)
    unordered[:, 1:] = used[:, 1:] & ~(h > 0)
    _first_bad("knot_x", kx, unordered, "positions strictly increasing from the previous point")
    delta = np.diff(fy, axis=1) / h

    slope = np.zeros((n, k))
    if k >= 3:
        h_prev, h_next = h[:, :-1], h[:, 1:]
        m_prev, m_next = delta[:, :-1], delta[:, 1:]
        w1, w2 = 2.0 * h_next + h_prev, h_next + 2.0 * h_prev
        same_sign = np.sign(m_prev) * np.sign(m_next) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            harmonic = (w1 + w2) / (w1 / m_prev + w2 / m_next)
        slope[:, 1:-1] = np.where(same_sign, harmonic, 0.0)
        left = _edge_slope(h[:, 0], h[:, 1], delta[:, 0], delta[:, 1])
        j1, j2 = np.maximum(last - 1, 0), np.maximum(last - 2, 0)
        right = _edge_slope(h[rows, j1], h[rows, j2], delta[rows, j1], delta[rows, j2])
    else:
        left = right = delta[:, 0]
    slope[:, 0] = np.where(count >= 3, left, np.where(count == 2, delta[:, 0], 0.0))
    slope[rows, last] = np.where(count >= 3, right, np.where(count == 2, delta[:, 0], 0.0))

    interval = np.zeros(xq.shape, dtype=np.int64)
    for j in range(k):  # loop over knot slots, not scenarios
        interval += (xq >= kx[:, j : j + 1]) & used[:, j : j + 1]
    interval = np.clip(interval - 1, 0, np.maximum(count - 2, 0)[:, None])
    take = lambda a, offset: np.take_along_axis(a, interval + offset, axis=1)  # noqa: E731
    x0, x1, y0, y1 = take(fx, 0), take(fx, 1), take(fy, 0), take(fy, 1)
    d0, d1 = take(slope, 0), take(slope, 1)
    width = x1 - x0
    t = np.clip((xq - x0) / width, 0.0, 1.0)
    t2, t3 = t * t, t * t * t
    return (
        (2 * t3 - 3 * t2 + 1) * y0
        + (t3 - 2 * t2 + t) * width * d0
        + (-2 * t3 + 3 * t2) * y1
        + (t3 - t2) * width * d1
    )


def _edge_slope(h0, h1, m0, m1):
    """Three-point end slope, kept monotone (Moler 2004, section 3.4)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    wrong_sign = np.sign(d) != np.sign(m0)
    too_steep = (np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3.0 * np.abs(m0))
    return np.where(wrong_sign, 0.0, np.where(too_steep, 3.0 * m0, d))


def table_price_path(table_months, table_prices, months, name="table_prices"):
    """Prices from a table of (month, price) points, interpolated monotonically [price unit (n, T)].

    ln(price) follows `monotone_interpolate` between the points, so a price that falls between two
    quotes falls at a smooth rate with no overshoot (and a constant rate of decline reproduces that
    exponential), prices stay positive, and the first and last prices are held outside the table.

    Parameters
    ----------
    table_months : array (n, k)  month of each price point relative to month 0 (may be negative:
        quotes from before the purchase shape the curve); unused slots NaN
    table_prices : array (n, k)  price at each point, > 0 (USD/Mtok or USD/GPU-hour); unused NaN
    months : int array (T,)  month indices
    """
    prices = np.atleast_2d(np.asarray(table_prices, dtype=float))
    used = ~np.isnan(np.atleast_2d(np.asarray(table_months, dtype=float)))
    _first_bad(name, prices, used & ~(prices > 0), "a price above 0")
    logs = np.where(used, np.log(np.where(used & (prices > 0), prices, 1.0)), np.nan)
    return np.exp(monotone_interpolate(table_months, logs, months))


def token_price_usd_per_mtok(
    price_usd_per_mtok, price_decline_annual, months, table_months=None, table_prices=None
):
    """Token price each month: a constant annual decline, or a table where one is given [USD/Mtok (n, T)].

        p_m = p_1 * (1 - d)^((m - 1) / 12)        or        p_m = PCHIP(table)(m)

    A row uses its table when its table has at least one point (a non-NaN month).

    Parameters
    ----------
    price_usd_per_mtok : array (n,)  price in month 1 [USD/Mtok]
    price_decline_annual : array (n,)  annual decline, 0 <= d < 1 (0.9 = 10x a year) [fraction/year]
    months : int array (T,)  month indices
    table_months, table_prices : arrays (n, k), optional  dated prices [month, USD/Mtok]; NaN padded
    """
    price = np.asarray(price_usd_per_mtok, dtype=float).reshape(-1)
    decline = np.broadcast_to(np.asarray(price_decline_annual, dtype=float), price.shape)
    _first_bad("price_usd_per_mtok", price, ~(price >= 0), "a price of 0 or more")
    path = _col(price) * price_path(decline, months)  # (which checks the decline)
    if table_months is None:
        return path
    has_table = ~np.all(np.isnan(np.atleast_2d(np.asarray(table_months, dtype=float))), axis=1)
    rows = np.flatnonzero(has_table)
    if rows.size:
        path[rows] = table_price_path(
            np.asarray(table_months, dtype=float)[rows],
            np.asarray(table_prices, dtype=float)[rows],
            months,
            name="token_price_table_usd_per_mtok",
        )
    return path


def rental_price_usd_per_gpu_hour(
    start_usd_per_gpu_hour,
    decline_annual,
    floor_usd_per_gpu_hour,
    months,
    table_months=None,
    table_prices=None,
):
    """Market rental price of a GPU-hour each month [USD/GPU-hour (n, T)].

        P_m = F + (P_1 - F) * (1 - d)^((m - 1) / 12)        or        P_m = PCHIP(table)(m)

    The premium over a floor F (e.g. the hourly total cost of ownership below which owners stop
    renting out) decays at d a year, so prices fall fast after launch and flatten, as H100 rentals
    did (above USD 8 in 2023, USD 2.99 in 2024-10, USD 1.70-2.60 in 2025-26; Latent Space,
    SemiAnalysis, Silicon Data). A row uses its table when its table has points.

    Parameters
    ----------
    start_usd_per_gpu_hour : array (n,)  market price in month 1; 0 where a scenario has no rental
        market [USD/GPU-hour]
    decline_annual : array (n,)  annual decline of the premium over the floor, in [0, 1)
        [fraction/year]
    floor_usd_per_gpu_hour : array (n,)  floor, 0 <= F <= P_1 [USD/GPU-hour]
    months : int array (T,)  month indices
    table_months, table_prices : arrays (n, k), optional  dated prices [month, USD/GPU-hour]
    """
    start = np.asarray(start_usd_per_gpu_hour, dtype=float).reshape(-1)
    decline = np.broadcast_to(np.asarray(decline_annual, dtype=float), start.shape)
    floor = np.broadcast_to(np.asarray(floor_usd_per_gpu_hour, dtype=float), start.shape)
    _first_bad(
        "rental_decline_annual", decline, ~((decline >= 0) & (decline < 1)), "a decline in [0, 1)"
    )
    if table_months is None:
        no_table = np.ones(start.shape, dtype=bool)
    else:
        no_table = np.all(np.isnan(np.atleast_2d(np.asarray(table_months, dtype=float))), axis=1)
    _first_bad(
        "rental_usd_per_gpu_hour", start, no_table & ~(start >= 0), "a price of 0 or more (0: none)"
    )
    _first_bad(
        "rental_floor_usd_per_gpu_hour",
        floor,
        no_table & ~((floor >= 0) & (floor <= start)),
        "a floor between 0 and the month-1 rental price",
    )
    path = _col(floor) + _col(start - floor) * price_path(decline, months)
    rows = np.flatnonzero(~no_table)
    if rows.size:
        path[rows] = table_price_path(
            np.asarray(table_months, dtype=float)[rows],
            np.asarray(table_prices, dtype=float)[rows],
            months,
            name="rental_table_usd_per_gpu_hour",
        )
    return path


def utilization_path(share, ramp_months, churn_annual, months):
    """Share of hours the GPUs serve, by month: a ramp, then churn [fraction (n, T)].

        u_m = u * min(1, m / R) * (1 - c)^((m - 1) / 12)        for m >= 1, 0 in month 0

    The ramp is the engine's linear fill over R months (R = 0: full from month 1). Churn c is the
    share of booked capacity lost each year and not re-let, e.g. customers moving to newer GPUs as
    the fleet ages; its geometric form is the constant-hazard retention of customer-lifetime
    models (S. Gupta, D. R. Lehmann and J. A. Stuart, J. Marketing Research 41(1), 2004, 7-18).

    Parameters
    ----------
    share : array (n,)  target share of hours serving, 0-1 [fraction]
    ramp_months : array (n,)  months to reach the share linearly; 0 = no ramp [months]
    churn_annual : array (n,)  share of booked capacity lost per year, 0 <= c < 1 [fraction/year]
    months : int array (T,)  month indices
    """
    u = np.asarray(share, dtype=float).reshape(-1)
    ramp = np.broadcast_to(np.asarray(ramp_months, dtype=float), u.shape)
    churn = np.broadcast_to(np.asarray(churn_annual, dtype=float), u.shape)
    _first_bad("utilization.share", u, ~((u >= 0) & (u <= 1)), "a share in [0, 1]")
    _first_bad("utilization.ramp_months", ramp, ~(ramp >= 0), "0 or more months")
    _first_bad(
        "utilization.churn_annual", churn, ~((churn >= 0) & (churn < 1)), "a share in [0, 1)"
    )
    m = np.asarray(months, dtype=float)[None, :]
    path = _col(u) * (m >= 1)
    if np.any(ramp > 0):  # (the ramp and churn factors are 1 where absent: skipped if all are)
        r = _col(ramp)
        path *= np.where(r > 0, np.minimum(1.0, m / np.maximum(r, 1.0)), 1.0)
    if np.any(churn > 0):
        path *= price_path(churn, months)
    return path


def contract_price_path(
    contract_usd_per_gpu_hour,
    market_usd_per_gpu_hour,
    term_months,
    months,
    first_service_month=1,
):
    """Price per GPU-hour of the contracted share, renewed at the market every term [USD/GPU-hour (n, T)].

    The term counts from the first month of service s (the contract is signed for the GPUs'
    service, not for the months they are being bought or built): the first contract runs from
    month s at its fixed price; renewal j starts in month s + j * K (K = term) at the market price
    of that month and stays fixed for K months:

        P_m = P_c                                  for m < s + K
        P_m = market_{s + K * floor((m - s) / K)}  otherwise

    A term of 0 means one contract for the whole horizon.

    Parameters
    ----------
    contract_usd_per_gpu_hour : array (n,)  price of the first contract [USD/GPU-hour]
    market_usd_per_gpu_hour : array (n, T)  market rental price by month, columns aligned with
        `months` [USD/GPU-hour]
    term_months : int array (n,)  contract term, 0 = no renewal [months]
    months : int array (T,)  consecutive month indices (e.g. 0..H)
    first_service_month : int or int array (n,)  first month of service s (default 1) [month index]
    """
    contract = np.asarray(contract_usd_per_gpu_hour, dtype=float).reshape(-1)
    market = np.asarray(market_usd_per_gpu_hour, dtype=float)
    term = np.broadcast_to(np.asarray(term_months), contract.shape).astype(np.int64)
    m = np.asarray(months, dtype=np.int64)
    _first_bad("contract_usd_per_gpu_hour", contract, ~(contract >= 0), "a price of 0 or more")
    _first_bad("contract_term_months", term, term < 0, "0 (no renewal) or a term in months")
    if market.shape != (contract.shape[0], m.shape[0]):
        raise MarketError(
            f"market_usd_per_gpu_hour has shape {market.shape}: expected (scenarios, months) = "
            f"({contract.shape[0]}, {m.shape[0]})"
        )
    if m.size > 1 and np.any(np.diff(m) != 1):
        raise MarketError("months: expected consecutive month indices, e.g. 0..H")
    start = np.broadcast_to(np.asarray(first_service_month), contract.shape).astype(np.int64)
    _first_bad("first_service_month", start, start < 0, "a month index of 0 or more")
    k = np.maximum(term, 1)[:, None]
    s = start[:, None]
    renewal = s + k * ((np.maximum(m[None, :], s) - s) // k)
    column = np.clip(renewal - m[0], 0, m.shape[0] - 1)
    at_renewal = np.take_along_axis(market, column, axis=1)
    renewed = (term[:, None] > 0) & (renewal > s)
    return np.where(renewed, at_renewal, contract[:, None])


def revenue_by_source(
    tokens,
    gpus,
    utilization,
    token_price_usd_per_mtok,
    contract_share,
    contract_price_usd_per_gpu_hour,
    spot_rental_usd_per_gpu_hour=None,
    spot_sells_gpu_hours=False,
):
    """Revenue per month by source: tokens, contracted GPU-hours, spot GPU-hours [USD (n, T) each].

        token_m    = (1 - c) * tokens_m * p_m / 10^6                  (spot sells tokens)
        spot_m     = (1 - c) * N_m * 730 h * u_m * P_spot_m            (spot sells GPU-hours)
        contract_m = c * N_m * 730 h * P_contract_m

    Contracted GPUs earn their hourly price whether or not they serve; spot capacity earns only
    what it sells, so utilization scales it. Only token sales capture a throughput gain: a lessor of
    GPU-hours sees it only if the market price of GPU-hours reflects it at renewal.

    Parameters
    ----------
    tokens, gpus, utilization : arrays (n, T)  tokens produced (by all GPUs), GPUs in service,
        share of hours serving
    token_price_usd_per_mtok : array (n, T)  token price by month [USD/Mtok]
    contract_share : array (n,)  share of GPUs under contract, 0-1 [fraction]
    contract_price_usd_per_gpu_hour : array (n,) or (n, T)  contract price [USD/GPU-hour]
    spot_rental_usd_per_gpu_hour : array (n, T), optional  market rental price for spot GPU-hours
    spot_sells_gpu_hours : bool array (n,)  True where spot capacity rents GPU-hours, not tokens

    Returns
    -------
    dict with "token_usd", "contract_usd", "spot_rental_usd": arrays (n, T) [USD/month]
    """
    selling = token_selling_share(contract_share, spot_sells_gpu_hours)  # (checks the share)
    share = np.asarray(contract_share, dtype=float).reshape(-1)
    c = share[:, None]
    spot_hours = np.broadcast_to(np.asarray(spot_sells_gpu_hours, dtype=bool), share.shape)[:, None]
    contract_price = np.asarray(contract_price_usd_per_gpu_hour, dtype=float)
    if contract_price.ndim == 1:
        contract_price = contract_price[:, None]
    token = selling[:, None] * tokens * token_price_usd_per_mtok / TOKENS_PER_MTOK
    any_spot_hours = np.any(spot_hours)
    if any_spot_hours and spot_rental_usd_per_gpu_hour is None:
        raise MarketError(
            "spot_sells_gpu_hours is set but no spot_rental_usd_per_gpu_hour was given: expected "
            "a market rental price curve for the spot GPU-hours"
        )
    spot = (
        np.zeros(np.shape(tokens))
        if spot_rental_usd_per_gpu_hour is None or not any_spot_hours
        else np.where(
            spot_hours,
            (1.0 - c) * gpus * HOURS_PER_MONTH * utilization * spot_rental_usd_per_gpu_hour,
            0.0,
        )
    )
    if np.any(share > 0):
        contract = c * gpus * HOURS_PER_MONTH * contract_price
    else:  # nothing under contract (whatever its price)
        contract = np.zeros(np.shape(tokens))
    return {"token_usd": token, "contract_usd": contract, "spot_rental_usd": spot}


def token_selling_share(contract_share, spot_sells_gpu_hours=False) -> np.ndarray:
    """Share of the GPUs that sell tokens, the only ones a throughput gain earns on [fraction (n,)].

        s = 1 - c        (0 where spot capacity sells GPU-hours)

    as `revenue_by_source` prices them: contracted GPUs earn their hourly price, and spot
    capacity that rents GPU-hours earns its hourly price, whatever tokens they serve.

    Parameters
    ----------
    contract_share : array (n,)  share of GPUs under contract, 0-1 [fraction]
    spot_sells_gpu_hours : bool array (n,)  True where spot capacity rents GPU-hours, not tokens
    """
    share = np.asarray(contract_share, dtype=float).reshape(-1)
    _first_bad("contract_share", share, ~((share >= 0) & (share <= 1)), "a share in [0, 1]")
    hours = np.broadcast_to(np.asarray(spot_sells_gpu_hours, dtype=bool), share.shape)
    return np.where(hours, 0.0, 1.0 - share)


__all__ = [
    "MarketError",
    "contract_price_path",
    "decline_from_fall_factor",
    "input_price_paths",
    "input_tokens_served",
    "monotone_interpolate",
    "price_path",
    "relative_price_path",
    "rental_price_usd_per_gpu_hour",
    "revenue_by_source",
    "revenue_usd_per_month",
    "table_price_path",
    "token_mix_revenue",
    "token_price_usd_per_mtok",
    "token_selling_share",
    "utilization_path",
]


def revenue_per_token_price_usd(
    tokens,
    token_price_usd_per_mtok,
    contract_share,
    spot_sells_gpu_hours,
    price_decline_annual=None,
):
    """Token revenue per USD/Mtok of month-1 token price [USD per USD/Mtok, array (n, T)].

        u_m = (1 - c) * tokens_m * (p_m / p_1) / 10^6

    Token revenue is p_1 * u_m when the price follows its path from a month-1 price p_1, so u is
    how much a unit of that price adds each month (the break-even price's slope); 0 where spot
    capacity sells GPU-hours (token price moves nothing there). Where p_1 = 0 the path's shape
    p_m / p_1 is that of the annual decline, (1 - d)^((m - 1) / 12) (`price_path`), so that the
    slope, and the break-even price, do not depend on the scenario's own price; without
    `price_decline_annual` such rows get u = 0.

    Parameters
    ----------
    tokens : array (n, T)  tokens produced [tokens]
    token_price_usd_per_mtok : array (n, T)  token price path [USD/Mtok]
    contract_share : array (n,)  [fraction]
    spot_sells_gpu_hours : bool array (n,)
    """
    shape = relative_price_path(token_price_usd_per_mtok, price_decline_annual)
    return np.where(
        _col(spot_sells_gpu_hours) > 0,
        0.0,
        (1.0 - _col(contract_share)) * tokens * shape / TOKENS_PER_MTOK,
    )


def relative_price_path(token_price_usd_per_mtok, price_decline_annual=None):
    """The output token price path relative to its month-1 price, p_m / p_1 [fraction (n, T)].

    Where p_1 = 0 the path has no shape of its own, so it is that of the annual decline,
    (1 - d)^((m - 1) / 12) (`price_path`); without `price_decline_annual` such rows are 0.

    Parameters
    ----------
    token_price_usd_per_mtok : array (n, T)  output token price path, month 0 first [USD/Mtok]
    price_decline_annual : array (n,), optional  the output price's annual decline [fraction/year]
    """
    first = token_price_usd_per_mtok[:, 1:2]
    shape = token_price_usd_per_mtok / np.where(first > 0, first, 1.0)
    unpriced = np.flatnonzero(~(first[:, 0] > 0))
    if price_decline_annual is not None and unpriced.size:
        months = np.arange(token_price_usd_per_mtok.shape[1])
        decline = np.broadcast_to(np.asarray(price_decline_annual, dtype=float), first[:, 0].shape)
        shape[unpriced] = price_path(decline[unpriced], months)
    return shape


def input_price_paths(
    input_price_usd_per_mtok,
    cached_input_price_usd_per_mtok,
    input_decline_annual,
    cached_decline_annual,
    output_relative_path,
    months,
):
    """Input and cached input token prices each month [USD/Mtok (n, T) each].

        p_in_m = p_in_1 * s_m        or  p_in_1 * (1 - d_in)^((m - 1) / 12)  with its own decline
        p_c_m  = p_c_1 * s_m         or  p_c_1 * (1 - d_c)^((m - 1) / 12);   p_c = p_in if absent

    where s_m = p_m / p_1 is the output price's path relative to month 1 (`relative_price_path`):
    API price lists cut input and output prices of a model together, so by default input prices
    follow the output price's decline or table. NaN in a decline means "follow the output price";
    NaN in the cached price means cached tokens pay the input price (and follow its path).

    Parameters
    ----------
    input_price_usd_per_mtok : array (n,)  uncached input price in month 1, >= 0 [USD/Mtok]
    cached_input_price_usd_per_mtok : array (n,)  cached input price in month 1, >= 0, or NaN
        [USD/Mtok]
    input_decline_annual, cached_decline_annual : arrays (n,)  own annual declines in [0, 1), or
        NaN [fraction/year]
    output_relative_path : array (n, T)  the output price relative to month 1 [fraction]
    months : int array (T,)  month indices, aligned with the path's columns
    """
    price = np.asarray(input_price_usd_per_mtok, dtype=float).reshape(-1)
    cached = np.broadcast_to(np.asarray(cached_input_price_usd_per_mtok, dtype=float), price.shape)
    _first_bad(
        "market.input_price_usd_per_mtok", price, ~(price >= 0), "a finite price of 0 or more"
    )
    _first_bad(
        "market.cached_input_price_usd_per_mtok",
        cached,
        ~(np.isnan(cached) | (cached >= 0)),
        "a finite price of 0 or more, or absent (the input price)",
    )

    def path(start, decline, name):
        decline = np.broadcast_to(np.asarray(decline, dtype=float), price.shape)
        own = ~np.isnan(decline)
        _first_bad(name, decline, own & ~((decline >= 0) & (decline < 1)), "a decline in [0, 1)")
        shape = output_relative_path
        if own.any():
            shape = np.where(own[:, None], price_path(np.where(own, decline, 0.0), months), shape)
        return _col(start) * shape

    input_path = path(price, input_decline_annual, "market.input_price_decline_annual")
    given = ~np.isnan(cached)
    if not given.any():
        return input_path, input_path
    cached_path = path(
        np.where(given, cached, 0.0),
        cached_decline_annual,
        "market.cached_input_price_decline_annual",
    )
    return input_path, np.where(given[:, None], cached_path, input_path)


def input_tokens_served(tokens, input_tokens_per_output_token):
    """Input (prompt) tokens sent with the output tokens produced, I_m = r * Q_m [tokens (n, T)].

    No output is no input: months with Q_m = 0 have I_m = 0 even where r is unknown (NaN), so
    only months that produce tokens are NaN for an unknown ratio.

    Parameters
    ----------
    tokens : array (n, T)  output tokens produced [tokens]
    input_tokens_per_output_token : array (n,)  r >= 0, or NaN (unknown) [ratio]
    """
    with np.errstate(invalid="ignore"):
        return np.where(tokens == 0, 0.0, _col(input_tokens_per_output_token) * tokens)


def token_mix_revenue(
    tokens,
    input_tokens_per_output_token,
    cache_hit_share,
    input_price_usd_per_mtok,
    cached_input_price_usd_per_mtok,
    contract_share,
    spot_sells_gpu_hours=False,
):
    """Input tokens and the revenue of uncached and cached input tokens [tokens, USD (n, T) each].

        I_m        = r * Q_m
        input_m    = (1 - c) * (1 - h) * I_m * p_in_m / 10^6
        cached_m   = (1 - c) * h * I_m * p_c_m / 10^6

    with Q the output tokens produced (by all GPUs, at the utilization), r the input tokens per
    output token of the served workload, h the share of input tokens served from the prompt cache
    and c the contracted share: token APIs bill prompt, cached prompt and generated tokens at
    separate prices per million (e.g. OpenAI's and Anthropic's API price lists), and the output
    tokens' revenue is `revenue_by_source`'s token line. Contracted GPUs and spot GPU-hours sell
    no tokens, so they earn no input revenue either. Where r is NaN (unknown) the input tokens are
    NaN and the revenue 0, which is allowed only where both prices are 0.

    Parameters
    ----------
    tokens : array (n, T)  output tokens produced [tokens]
    input_tokens_per_output_token : array (n,)  r >= 0, or NaN (unknown) [ratio]
    cache_hit_share : array (n,)  h in [0, 1] [fraction]
    input_price_usd_per_mtok, cached_input_price_usd_per_mtok : arrays (n, T)  price paths
        (`input_price_paths`) [USD/Mtok]
    contract_share : array (n,)  [fraction]
    spot_sells_gpu_hours : bool array (n,)  True where spot capacity rents GPU-hours, not tokens

    Returns
    -------
    dict with "input_tokens" [tokens], "input_usd", "cached_input_usd" [USD/month]: arrays (n, T)
    """
    ratio = np.asarray(input_tokens_per_output_token, dtype=float).reshape(-1)
    hit = np.broadcast_to(np.asarray(cache_hit_share, dtype=float), ratio.shape)
    _first_bad(
        "throughput.input_tokens_per_output_token",
        ratio,
        ~(np.isnan(ratio) | ((ratio >= 0) & np.isfinite(ratio))),
        "a finite ratio of 0 or more",
    )
    _first_bad("market.cache_hit_share", hit, ~((hit >= 0) & (hit <= 1)), "a share in [0, 1]")
    charged = np.any(input_price_usd_per_mtok > 0, axis=1) | np.any(
        cached_input_price_usd_per_mtok > 0, axis=1
    )
    _first_bad(
        "throughput.input_tokens_per_output_token",
        ratio,
        charged & ~(ratio > 0),
        "a ratio above 0 where input tokens are priced (market.input_price_usd_per_mtok > 0)",
    )
    input_tokens = input_tokens_served(tokens, ratio)
    sold = np.where(
        _col(np.broadcast_to(spot_sells_gpu_hours, ratio.shape)) > 0,
        0.0,
        (1.0 - _col(contract_share)) * np.nan_to_num(input_tokens) / TOKENS_PER_MTOK,
    )
    h = _col(hit)
    return {
        "input_tokens": input_tokens,
        "input_usd": sold * (1.0 - h) * input_price_usd_per_mtok,
        "cached_input_usd": sold * h * cached_input_price_usd_per_mtok,
    }
