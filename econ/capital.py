"""The capital stack: debt and equity tranches composed into monthly schedules and metrics.

This module owns what a lender and an equity investor read off a financing: the stack's schedules
(`stack_schedule`: draws, interest expense with amortized discount and fees, cash interest,
principal, balances, fees, convertible settlement and dilution, at-the-market equity), coverage
(`coverage_ratios`: DSCR and LLCR against CFADS, covenant breaches), `loan_to_value`,
`wacc_after_tax` and `equity_returns` (equity IRR and MOIC). One tranche's arithmetic lives in
econ.financing.

Tranches come as plain mappings (the scenario layer compiles its pydantic models into them; tests
and the CLI write them by hand), each field a scalar or an array (n,) so a sweep can vary it per
scenario. Arrays are (n, T) over months 0..T-1; there is no loop over scenarios. Amounts are
positive; `financing_cash_flow_usd` is the one signed line (cash in positive).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from econ.arrays import (
    cumsum_months,
    remaining_sum_months,
    running_max_months,
    trailing_sum_rows,
)
from econ.errors import InputError
from econ.excel import irr_batch
from econ.financing import (
    DAY_COUNTS,
    INTERPOLATIONS,
    REPAYMENTS,
    choice_codes,
    common_row,
    coupon_schedule,
    covenant_test_months,
    effective_interest,
    floating_rate_annual,
    index_rate_annual,
    loan_schedule,
)
from econ.units import MONTHS_PER_YEAR, annual_rate, power_path

TRANCHE_TYPES = (
    "term_loan",
    "delayed_draw_term_loan",
    "senior_notes",
    "convertible_notes",
    "equity",
)
LOANS = ("term_loan", "delayed_draw_term_loan")
NOTES = ("senior_notes", "convertible_notes")
SETTLEMENTS = ("physical", "net_share")
"""How converted notes settle: all in shares, or principal in cash and the excess in shares."""
ISSUANCES = ("upfront", "at_the_market")
"""How equity is raised: all at its issue month, or sold into the market as capex is spent."""

SPEC_FIELDS: dict[str, object] = {
    "name": None,
    "path": None,
    "amount_usd": np.nan,
    "share_of_capex": np.nan,
    "issue_month": 0.0,
    "maturity_month": np.nan,
    # loans
    "repayment": "level_payment",
    "amortization_months": np.nan,
    "interest_only_months": 0.0,
    "balloon_share": 0.0,
    "rate_annual": np.nan,
    "day_count": "30/360",
    "index_months": None,
    "index_rates_annual": None,
    "index_interpolation": "step",
    "spread_annual": 0.0,
    "floor_annual": np.nan,
    "upfront_fee_share": 0.0,
    "issue_discount_share": 0.0,
    "commitment_fee_annual": 0.0,
    "availability_months": np.nan,
    "draw_months": None,
    "draw_shares": None,
    # notes
    "coupon_annual": 0.0,
    "coupons_per_year": 2.0,
    # convertible notes
    "conversion_price_usd": np.nan,
    "reference_share_price_usd": np.nan,
    "share_price_growth_annual": 0.0,
    "capped_call_cost_share": 0.0,
    "capped_call_cap_price_usd": np.nan,
    "settlement": "net_share",
    # equity
    "required_return_annual": np.nan,
    "issuance": "upfront",
    "atm_commission_share": 0.0,
}
"""Fields of a tranche mapping and their defaults (NaN: not given). Besides these, `type` (one of
TRANCHE_TYPES) is required. `path` says where a message finds the tranche (a scenario file's
"financing.tranches[0]"); without it, messages name it "tranche 'NAME'". Units: `_usd` [USD],
`_month(s)` [month index / months], `_annual` [1/year], `_share` [fraction]. `index_months`/`index_rates_annual`/`draw_months`/`draw_shares` are
arrays (k,) or (n, k) padded with +inf months (index) or share 0 (draws)."""

_CATEGORIES = {
    "repayment": REPAYMENTS,
    "day_count": tuple(DAY_COUNTS),
    "index_interpolation": INTERPOLATIONS,
    "settlement": SETTLEMENTS,
    "issuance": ISSUANCES,
}
_DAY_COUNT_FACTORS = np.array([DAY_COUNTS[name] for name in _CATEGORIES["day_count"]])
"""DAY_COUNTS' years per month, indexed by the day count's code."""
_TABLES = ("index_months", "index_rates_annual", "draw_months", "draw_shares")

LINES = (
    "draw_usd",
    "proceeds_usd",
    "discount_usd",
    "fees_usd",
    "commitment_fee_usd",
    "capped_call_usd",
    "cash_interest_usd",
    "interest_expense_usd",
    "amortization_usd",
    "extinguishment_usd",
    "scheduled_principal_usd",
    "balloon_usd",
    "settlement_usd",
    "principal_usd",
    "converted_usd",
    "balance_usd",
    "carrying_usd",
    "debt_service_usd",
    "equity_issued_usd",
    "shares_issued",
)
"""Monthly lines of every tranche, (n, T), and their totals over the stack:

draw_usd: principal (face) drawn or issued; proceeds_usd: cash received for it (draw less issue
discount); discount_usd: original issue discount; fees_usd: cash fees (upfront fees, commitment
fees, at-the-market commissions); commitment_fee_usd: fee on undrawn commitments; capped_call_usd:
premium of capped calls bought at issue; cash_interest_usd: interest and coupons paid;
interest_expense_usd: interest expense (effective interest: cash interest + amortized discount and
issuance costs, commitment fees, and the unamortized costs written off on early repayment);
amortization_usd: its non-cash part, interest expense - cash interest - commitment fees (amortized
discount and issuance costs, the write-off, and coupons accrued less coupons paid: negative in a
coupon month); extinguishment_usd: the write-off; scheduled_principal_usd:
regular instalments; balloon_usd: bullet, balloon and maturity repayments; settlement_usd:
repayment of what is still owed in the scenario's last month; principal_usd: all cash principal;
converted_usd: face settled in shares; balance_usd: face owed at month end; carrying_usd: balance
net of unamortized discount and costs (ASC 835-30-45-1A); debt_service_usd: cash interest +
commitment fees + scheduled principal (the DSCR denominator; balloons are refinanced, and LLCR
sees them); equity_issued_usd: equity raised (gross); shares_issued: new shares (conversion, net
of capped calls, and ATM sales) [shares]."""


@dataclass(frozen=True)
class StackSchedule:
    """What `stack_schedule` returns.

    Attributes
    ----------
    lines : name -> array (n, T)
        Totals over the stack of LINES, plus ``financing_cash_flow_usd`` (signed: add it to the
        project cash flow to get the equity cash flow), ``equity_funding_usd`` (equity needed for
        capex, fees and capped calls that debt does not fund, at least the equity tranches'
        issuance) and ``rate_annual`` (balance-weighted contractual debt rate) [1/year].
    tranches : tranche name -> line name -> array (n, T)
        LINES for each tranche, plus ``rate_annual`` (contractual rate) for debt.
    metrics : name -> array (n,)
        Stack figures: ``debt_usd`` (face drawn), ``equity_usd`` (equity funding),
        ``cost_of_debt_annual`` (draw-weighted effective yield), ``debt_rate_monthly`` (cash
        interest over average balance, the LLCR discount rate), ``wacc_after_tax_annual`` (NaN
        without a tax rate and a cost of equity), ``conversion_shares`` (issued on conversion,
        net of capped calls), ``equity_shares`` (sold by equity tranches; NaN without a share
        price), ``dilution_shares`` (their sum) and ``max_balance_usd``.
    tranche_metrics : tranche name -> name -> array (n,)
        ``amount_usd`` (commitment or face), ``drawn_usd``, ``effective_rate_annual``
        (effective interest yield incl. discount and fees), for convertible notes
        ``settlement_month``, ``share_price_at_settlement_usd``, ``converted`` (1/0),
        ``gross_shares``, ``capped_call_shares``, ``net_shares``, for equity ``shares``.
    """

    lines: dict[str, np.ndarray]
    tranches: dict[str, dict[str, np.ndarray]]
    metrics: dict[str, np.ndarray]
    tranche_metrics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, np.ndarray]:
        """All (n, T) arrays in one flat dict: totals by line name, tranches as 'name.line'."""
        flat = dict(self.lines)
        for name, lines in self.tranches.items():
            flat.update({f"{name}.{key}": value for key, value in lines.items()})
        return flat


def stack_schedule(
    tranches: Sequence[Mapping],
    capex_usd,
    draw_profile,
    months,
    last_month,
    *,
    share_price_usd=None,
    tax_rate=None,
    equity_cost_annual=None,
) -> StackSchedule:
    """Monthly schedules of a capital stack over a batch of scenarios.

    Each debt tranche is scheduled to its contractual maturity (beyond the horizon if need be, so
    that its effective yield is the contractual one); whatever is still owed in a scenario's last
    month is repaid then (``settlement_usd``), with unamortized discount and costs written off to
    interest expense (loss on extinguishment, ASC 470-50-40-2). Convertible notes settle at
    maturity or in the last month, whichever is first: in shares when the share price then is
    above the conversion price (see `convertible_settlement`), else in cash. Equity tranches issue
    their amount; one without an amount funds whatever the debt leaves unfunded.

    Parameters
    ----------
    tranches : sequence of mappings
        Tranche settings, fields as SPEC_FIELDS plus ``type`` (TRANCHE_TYPES). Amounts are
        ``amount_usd`` or ``share_of_capex``. Loans take ``rate_annual`` (fixed) or an index
        curve (``index_months``, ``index_rates_annual``) with ``spread_annual`` and optional
        ``floor_annual``.
    capex_usd : array (n,)
        Capital cost to fund [USD].
    draw_profile : array (n, T)
        Share of capex spent each month (rows sum to 1); delayed-draw loans draw pro rata to it
        and at-the-market equity sells with it [fraction].
    months : array (T,)
        Month indices 0..T-1.
    last_month : array (n,)
        Last month of each scenario; nothing is drawn after it and all debt is settled in it.
    share_price_usd : array (n, T) or (n,), optional
        Share price path; overrides the tranches' reference price and growth [USD/share].
    tax_rate : array (n,), optional
        Income tax rate for the after-tax WACC [fraction].
    equity_cost_annual : array (n,), optional
        Cost of equity when no equity tranche states a required return [1/year].

    Returns
    -------
    StackSchedule
        Its lines are the tranches' totals (LINES), with ``equity_funding_usd``,
        ``financing_cash_flow_usd`` and ``proceeds_above_uses_usd`` (debt proceeds received to
        date above the capex, fees and capped calls paid to date, where positive [USD]).

    Raises
    ------
    InputError
        For an unknown tranche type, field or choice (listing the valid ones), duplicate tranche
        names, missing amounts or rates, negative rates or fees, maturity not after issue, a
        conversion price <= 0, shares of capex above 100% in a scenario, or draws beyond a
        scenario's last month.

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), ch. 12 (financial
    structuring: debt-cover ratios, debt-service profile); FASB ASC 835-30 (interest method), ASC 470-20 as amended by ASU
    2020-06 (convertible debt), ASC 470-50-40-2 (extinguishment).
    """
    profile, capex, last = _checked_schedule_inputs(draw_profile, months, capex_usd, last_month)
    n, T = profile.shape
    specs = [_normalize(spec, i, n) for i, spec in enumerate(tranches)]
    _check_stack(specs, n)
    debt_specs = [s for s in specs if s["type"] in LOANS + NOTES]
    maturities = [s["maturity_month"] for s in debt_specs]
    L = max([T] + [int(np.nanmax(mat)) + 1 for mat in maturities])
    profile_long = np.zeros((n, L))
    profile_long[:, :T] = profile
    price_path = None
    if share_price_usd is not None:
        price = np.asarray(share_price_usd, dtype=float)
        price_path = np.broadcast_to(price[:, None] if price.ndim == 1 else price, (n, T))

    out: dict[str, dict[str, np.ndarray]] = {}
    out_metrics: dict[str, dict[str, np.ndarray]] = {}
    blank = np.zeros((n, T))  # the line of a tranche that has none: one array, read only
    blank.flags.writeable = False
    for spec in debt_specs:
        lines, metrics = _scaled_tranche(spec, capex, profile_long, last, price_path, T, blank)
        out[spec["name"]] = lines
        out_metrics[spec["name"]] = metrics

    debt_names = list(out)
    zeros = np.zeros((n, T))
    totals: dict[tuple, np.ndarray] = {}  # by line and the arrays summed

    def total(line, names):
        given = [out[k][line] for k in names if out[k][line] is not blank]
        key = (line, tuple(map(id, given)))
        if key not in totals:  # sums of the same lines are taken once
            if len(given) < 2:
                totals[key] = np.array(given[0]) if given else np.zeros((n, T))
            else:
                acc = given[0] + given[1]
                for value in given[2:]:  # in place: the lines are large and there are many
                    acc += value
                totals[key] = acc
        return totals[key]

    uses = (
        capex[:, None] * profile
        + total("fees_usd", debt_names)
        - total("commitment_fee_usd", debt_names)
        + total("capped_call_usd", debt_names)
    )
    sources = total("proceeds_usd", debt_names)
    equity_specs = [s for s in specs if s["type"] == "equity"]
    explicit_net = zeros.copy()
    for spec in equity_specs:
        if _residual_rows(spec).all():  # issues only what is needed, computed below
            continue
        lines, metrics, net = _equity_tranche(spec, capex, profile, price_path, T, blank)
        explicit_net += net
        out[spec["name"]], out_metrics[spec["name"]] = lines, metrics
    # Equity funds the running shortfall: cumulative uses not yet covered by debt and equity.
    shortfall = cumsum_months(uses - sources - explicit_net)
    needed = np.diff(running_max_months(np.maximum(shortfall, 0.0)), axis=1, prepend=0)
    for spec in equity_specs:
        residual = _residual_rows(spec)
        if residual.any():
            share = needed if residual.all() else np.where(residual[:, None], needed, 0.0)
            lines, metrics, _ = _equity_tranche(spec, capex, profile, price_path, T, blank, share)
            out[spec["name"]], out_metrics[spec["name"]] = lines, metrics
            needed = needed - share
    equity_names = [s["name"] for s in equity_specs]
    out = {s["name"]: out[s["name"]] for s in specs}  # in the order given
    out_metrics = {s["name"]: out_metrics[s["name"]] for s in specs}

    lines = {line: total(line, list(out)) for line in LINES}
    lines["equity_funding_usd"] = total("equity_issued_usd", equity_names) + needed
    # Debt proceeds received to date above the uses paid to date: cash borrowed ahead of the
    # capex it finances (a note issued at close on a later vintage's capex), which the equity
    # cash flow receives until that capex is spent (econ.engine warns of it).
    lines["proceeds_above_uses_usd"] = np.maximum(cumsum_months(sources - uses), 0.0)
    lines["financing_cash_flow_usd"] = (
        lines["proceeds_usd"]
        - lines["fees_usd"]
        - lines["capped_call_usd"]
        - lines["cash_interest_usd"]
        - lines["principal_usd"]
    )
    metrics = _stack_metrics(
        lines, out, out_metrics, debt_names, equity_specs, equity_cost_annual, tax_rate
    )
    return StackSchedule(lines=lines, tranches=out, metrics=metrics, tranche_metrics=out_metrics)


def _checked_schedule_inputs(draw_profile, months, capex_usd, last_month):
    """stack_schedule's draw profile (n, T), capex (n,) and last months (n,), checked: months
    0..T-1, last months inside them, no negative share and no draw after a last month."""
    profile = np.asarray(draw_profile, dtype=float)
    if profile.ndim != 2:
        raise InputError(f"draw_profile must be an array (n, T), got shape {profile.shape}")
    n, T = profile.shape
    months = np.asarray(months)
    if months.shape != (T,) or (months != np.arange(T)).any():
        raise InputError(f"months must be 0..{T - 1} to match draw_profile, got {months[:5]}...")
    capex = _vector(capex_usd, n, "capex_usd")
    last = np.broadcast_to(np.asarray(last_month), (n,)).astype(np.int64)
    if (last < 0).any() or (last > T - 1).any():
        bad = last[(last < 0) | (last > T - 1)][0]
        raise InputError(f"last_month {bad} is outside months 0..{T - 1}")
    if (profile < 0).any():
        raise InputError("draw_profile has negative shares; expected shares of capex >= 0")
    beyond = (profile > 0) & (np.arange(T)[None, :] > last[:, None])
    if beyond.any():
        row, month = np.argwhere(beyond)[0]
        raise InputError(
            f"draw schedule beyond the horizon: draw_profile is {profile[row, month]:g} in month "
            f"{month} of scenario {row}, after its last month {last[row]}"
        )
    return profile, capex, last


def _stack_metrics(lines, out, out_metrics, debt_names, equity_specs, equity_cost_annual, tax_rate):
    """The stack's metrics (n,) each, and its balance-weighted rate line (set in `lines`): debt
    drawn and its cost (drawn-weighted effective yields), equity and its cost (the WACC's k_e),
    WACC after tax, shares."""
    n, T = lines["balance_usd"].shape
    zeros = np.zeros((n, T))
    equity_names = [s["name"] for s in equity_specs]
    opening = np.concatenate([zeros[:, :1], lines["balance_usd"][:, :-1]], axis=1)
    # Rates weighted by the opening balance; month 0 opens with nothing owed (weight 0).
    weighted = zeros.copy()
    for k in debt_names:
        weighted[:, 1:] += (
            np.nan_to_num(out[k]["rate_annual"][:, 1:]) * out[k]["balance_usd"][:, :-1]
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        lines["rate_annual"] = np.where(opening > 0, weighted / opening, np.nan)
        debt_rate_monthly = lines["cash_interest_usd"].sum(axis=1) / opening.sum(axis=1)

    drawn = np.column_stack([out_metrics[k]["drawn_usd"] for k in debt_names] or [np.zeros(n)])
    yields = np.column_stack(
        [out_metrics[k]["effective_rate_annual"] for k in debt_names] or [np.zeros(n)]
    )
    equity_usd = lines["equity_funding_usd"].sum(axis=1)
    equity_cost = _equity_cost(equity_specs, out, equity_cost_annual, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        cost_of_debt = np.where(drawn > 0, drawn * yields, 0.0).sum(axis=1) / drawn.sum(axis=1)
    wacc = (
        wacc_after_tax(drawn, np.where(drawn > 0, yields, 0.0), equity_usd, equity_cost, tax_rate)
        if tax_rate is not None
        else np.full(n, np.nan)
    )
    metrics = {
        "debt_usd": drawn.sum(axis=1),
        "equity_usd": equity_usd,
        "cost_of_debt_annual": cost_of_debt,
        "cost_of_equity_annual": equity_cost,
        "debt_rate_monthly": debt_rate_monthly,
        "wacc_after_tax_annual": wacc,
        "conversion_shares": _sum_lines(out, debt_names, "shares_issued", n),
        "equity_shares": _sum_lines(out, equity_names, "shares_issued", n),
        "dilution_shares": lines["shares_issued"].sum(axis=1),
        "max_balance_usd": lines["balance_usd"].max(axis=1),
    }
    return metrics


def _sum_lines(out, names, line, n):
    return sum((out[k][line].sum(axis=1) for k in names), np.zeros(n))


def _equity_cost(equity_specs, out, fallback, n):
    """Issuance-weighted required return of the equity tranches, else the fallback [1/year]."""
    weights = np.zeros(n)
    weighted = np.zeros(n)
    for spec in equity_specs:
        issued = out[spec["name"]]["equity_issued_usd"].sum(axis=1)
        known = ~np.isnan(spec["required_return_annual"])
        weights += np.where(known, issued, 0.0)
        weighted += np.where(known, issued * np.nan_to_num(spec["required_return_annual"]), 0.0)
    fallback = np.full(n, np.nan) if fallback is None else _vector(fallback, n, "equity_cost")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weights > 0, weighted / weights, fallback)


# ---------------------------------------------------------------------------------------------
# tranches
# ---------------------------------------------------------------------------------------------


def _debt_tranche(spec, capex, profile, last, price_path, T, blank):
    """Lines (n, T) and metrics (n,) of one loan or note, settled in each scenario's last month.

    The contractual schedule and effective yield are computed to maturity on the long grid of
    `profile` (n, L); the lines are then cut to the projection's T months and settled. Lines
    that are 0 throughout are `blank` (one read-only array), which the totals skip.
    """
    n, L = profile.shape
    kind = spec["type"]
    m = np.arange(L)[None, :]
    amount = _amount(spec, capex)
    # Masks of the tranche's timing: one row when no scenario varies it.
    issue, maturity = (x[:, None] for x in common_row(spec["issue_month"], spec["maturity_month"]))
    at_issue = m == issue
    in_term = (m > issue) & (m <= maturity)
    commitment_fee = None
    fee_amortization = None
    upfront_fee = np.where(at_issue, (spec["upfront_fee_share"] * amount)[:, None], 0.0)

    if kind in LOANS:
        rate_annual = _loan_rate_annual(spec, L)
        (day_count,) = common_row(spec["day_count"])
        rate_monthly = rate_annual * day_count[:, None]
        if kind == "term_loan":
            draws = np.where(at_issue, amount[:, None], 0.0)
        else:
            draws, commitment_fee = _delayed_draws(spec, amount, profile)
            # ASU 2015-15: costs of a line of credit are deferred and amortized ratably over the
            # arrangement, not through the effective yield of draws that may never happen.
            term = np.maximum(maturity - issue, 1.0)
            fee_total = spec["upfront_fee_share"] * amount  # the one month of upfront_fee
            fee_amortization = np.where(in_term, fee_total[:, None] / term, 0.0)
        schedule = loan_schedule(
            draws,
            rate_monthly,
            spec["maturity_month"],
            spec["repayment"],
            spec["amortization_months"],
            spec["interest_only_months"],
            spec["balloon_share"],
        )
        scheduled = schedule["scheduled_principal_usd"]
        accrued = None
        base_rate, guess = rate_monthly, np.zeros(n)
    else:
        rate_annual = spec["coupon_annual"][:, None]
        draws = np.where(at_issue, amount[:, None], 0.0)
        schedule = coupon_schedule(
            amount,
            spec["coupon_annual"],
            spec["coupons_per_year"],
            spec["issue_month"],
            spec["maturity_month"],
            L,
        )
        scheduled = None
        accrued = schedule["accrued_usd"]
        base_rate, guess = 0.0, spec["coupon_annual"] / MONTHS_PER_YEAR
    _check_draws_fit(_tranche_text(spec), draws, last)

    discounted = spec["issue_discount_share"].any()
    discount = draws * spec["issue_discount_share"][:, None] if discounted else None
    proceeds = draws - discount if discounted else draws
    in_yield = kind != "delayed_draw_term_loan"
    net = proceeds - upfront_fee if in_yield else proceeds
    payments = _plus(schedule["interest_usd"], scheduled, schedule["balloon_usd"])
    eir = effective_interest(net, payments, base_rate, guess)
    carrying = eir["carrying_usd"]
    # All-in cost over the contractual life: effective interest, deferred facility fees and
    # commitment fees per dollar-month of carrying amount.
    all_in = _plus(eir["expense_usd"], fee_amortization, commitment_fee)
    with np.errstate(invalid="ignore", divide="ignore"):
        effective_monthly = all_in.sum(axis=1) / (carrying[:, :-1].sum(axis=1))
    metrics = {
        "amount_usd": amount,
        # Drawn at issue, all of it, except a delayed-draw loan.
        "drawn_usd": draws.sum(axis=1) if kind == "delayed_draw_term_loan" else amount.copy(),
        "effective_rate_annual": annual_rate(effective_monthly),
    }

    cut = slice(0, T)
    part = lambda x: blank if x is None else x[:, cut]  # noqa: E731
    lines = {
        "draw_usd": draws[:, cut],
        "proceeds_usd": proceeds[:, cut],
        "discount_usd": part(discount),
        "fees_usd": _plus(upfront_fee[:, cut], part(commitment_fee), blank=blank),
        "commitment_fee_usd": part(commitment_fee),
        "capped_call_usd": blank,
        "cash_interest_usd": schedule["interest_usd"][:, cut],
        "interest_expense_usd": all_in[:, cut],
        "extinguishment_usd": blank,
        "scheduled_principal_usd": part(scheduled),
        "balloon_usd": schedule["balloon_usd"][:, cut],
        "settlement_usd": blank,
        "converted_usd": blank,
        "balance_usd": schedule["balance_usd"][:, cut],
        "carrying_usd": carrying[:, cut] if accrued is None else carrying[:, cut] - accrued[:, cut],
        "equity_issued_usd": blank,
        "shares_issued": blank,
        "rate_annual": np.ascontiguousarray(
            np.broadcast_to(np.where(in_term[:, cut], rate_annual[:, cut], np.nan), (n, T))
        ),
    }
    deferred = blank if in_yield else cumsum_months(upfront_fee[:, cut] - fee_amortization[:, cut])
    accrued = blank if accrued is None else accrued[:, cut]
    if kind == "convertible_notes":
        lines["capped_call_usd"] = np.where(
            at_issue[:, cut], (spec["capped_call_cost_share"] * amount)[:, None], 0.0
        )
        settle = np.minimum(spec["maturity_month"], last).astype(np.int64)
        _settle(lines, settle, accrued, deferred, spec["maturity_month"], blank)
        _convert(lines, spec, amount, settle, price_path, metrics, blank)
    else:
        _settle(lines, last, accrued, deferred, spec["maturity_month"], blank)
    lines["principal_usd"] = _plus(
        lines["scheduled_principal_usd"], lines["balloon_usd"], lines["settlement_usd"], blank=blank
    )
    lines["amortization_usd"] = _minus(
        lines["interest_expense_usd"],
        lines["cash_interest_usd"],
        lines["commitment_fee_usd"],
        blank=blank,
    )
    lines["debt_service_usd"] = _plus(
        lines["cash_interest_usd"],
        lines["commitment_fee_usd"],
        lines["scheduled_principal_usd"],
        blank=blank,
    )
    return lines, metrics


SCALED_METRICS = ("amount_usd", "drawn_usd", "gross_shares", "capped_call_shares", "net_shares")
"""Tranche metrics in proportion to its amount (money, shares); the others (its effective rate,
the settlement month, the share price then, whether it converted) are not."""


def _scaled_tranche(spec, capex, profile, last, price_path, T, blank):
    """`_debt_tranche` of a batch whose scenarios differ in this tranche's amount only.

    A tranche's schedule is linear in its amount: draws, fees, interest, principal, balances and
    the shares a conversion issues all scale with it, while its rates, effective yield and
    conversion (the share price against the conversion price) do not. So where every scenario
    has the same terms, timing, draw profile, last month and share prices, as in a sweep or a
    Monte Carlo run that varies the fleet or the market, the tranche is scheduled once for 1 USD
    and each line multiplied by each scenario's amount: the figures of the general computation
    to rounding. Otherwise, or for one scenario, the general computation.
    """
    n = capex.shape[0]
    cut = None
    if n > 1:
        # (a table given as one row (k,) is every scenario's already)
        fields = [
            k
            for k, v in spec.items()
            if isinstance(v, np.ndarray) and not (k in _TABLES and v.ndim == 1)
        ]
        context = [profile, last] + ([] if price_path is None else [price_path])
        cut = common_row(*(spec[k] for k in fields), *context)
    amount = _amount(spec, capex)
    # (a chunk whose scenarios all lack the tranche carries another scenario's terms with amount
    # 0: scheduled for 1 USD, its draws could break terms that the amount 0 never draws under)
    if cut is None or cut[0].shape[0] == n or not amount.any():
        return _debt_tranche(spec, capex, profile, last, price_path, T, blank)
    unit = {**spec, **dict(zip(fields, cut[: len(fields)], strict=True))}
    unit["amount_usd"], unit["share_of_capex"] = np.ones(1), np.full(1, np.nan)
    unit_profile, unit_last, *unit_prices = cut[len(fields) :]
    unit_blank = np.zeros((1, T))
    unit_blank.flags.writeable = False
    lines, metrics = _debt_tranche(
        unit,
        np.ones(1),
        unit_profile,
        unit_last,
        unit_prices[0] if unit_prices else None,
        T,
        unit_blank,
    )
    scale = amount[:, None]
    # A line of +0 for 1 USD is +0 for any amount >= 0 and finite: zeros, not a product (a third
    # of a tranche's lines, each a pass over (n, T)).
    plain = bool(np.all(np.isfinite(amount) & (amount >= 0)))
    for key, value in lines.items():
        if value is unit_blank:
            lines[key] = blank
        elif plain and not (value.any() or np.signbit(value).any()):
            lines[key] = np.zeros((n, T))
        elif key == "rate_annual":
            lines[key] = np.ascontiguousarray(np.broadcast_to(value, (n, T)))
        else:
            lines[key] = value * scale
    for key, value in metrics.items():
        metrics[key] = value * amount if key in SCALED_METRICS else np.repeat(value, n)
    # A tranche of nothing has no yield (0/0 in the general computation) and converts nothing.
    nothing = amount == 0
    metrics["effective_rate_annual"][nothing] = np.nan
    if "converted" in metrics:
        metrics["converted"][nothing] = 0.0
    return lines, metrics


def _plus(*terms, blank=None):
    """The sum of the terms left to right, leaving out None and `blank` (adding 0 changes no
    value, so the sum is the one with them, bit for bit)."""
    given = [t for t in terms if t is not None and t is not blank]
    if not given:
        return blank
    total = given[0]
    for t in given[1:]:
        total = total + t
    return total


def _minus(first, *terms, blank):
    """first - terms[0] - terms[1] ..., leaving out the terms that are `blank`."""
    total = first
    for t in terms:
        if t is not blank:
            total = total - t
    return total


def _settle(lines, settle, accrued, deferred_fee, maturity, blank):
    """Repay in month `settle` (n,) what is still owed; nothing happens after it.

    The face still owed and the accrued interest are paid in cash; the unamortized discount and
    costs (face less carrying amount, and deferred facility fees) are written off to interest
    expense as a loss on extinguishment (ASC 470-50-40-2).
    """
    n, T = lines["balance_usd"].shape
    rows = np.arange(n)
    early = settle < maturity
    owed = np.where(early, lines["balance_usd"][rows, settle], 0.0)
    write_off = np.where(
        early, owed - lines["carrying_usd"][rows, settle] + deferred_fee[rows, settle], 0.0
    )
    interest_due = np.where(early, accrued[rows, settle], 0.0)
    if (settle < T - 1).any():
        keep = np.arange(T)[None, :] <= settle[:, None]
        for key, value in lines.items():
            if value is not blank and (value.any() if key != "rate_annual" else True):
                lines[key] = np.where(keep, value, np.nan if key == "rate_annual" else 0.0)
    if early.any():
        # Each row settles in one month: set and add there, leaving the other months alone (in
        # place: the lines are the tranche's own arrays).
        at = (rows, settle)
        lines["settlement_usd"] = np.zeros((n, T))
        lines["settlement_usd"][at] = owed
        lines["cash_interest_usd"][at] += interest_due
        lines["extinguishment_usd"] = np.zeros((n, T))
        lines["extinguishment_usd"][at] = write_off
        lines["interest_expense_usd"][at] += write_off
        cleared = (rows[early], settle[early])
        lines["balance_usd"][cleared] = 0.0
        lines["carrying_usd"][cleared] = 0.0


def _convert(lines, spec, face, settle, price_path, metrics, blank):
    """Settle convertible notes in shares where the share price at settlement is above the
    conversion price (ASC 470-20-40-4: conversion per the terms, carrying amount to equity)."""
    n, T = lines["balance_usd"].shape
    rows = np.arange(n)
    if price_path is None:
        growth = np.power(1.0 + spec["share_price_growth_annual"], settle / MONTHS_PER_YEAR)
        price = spec["reference_share_price_usd"] * growth
    else:
        price = price_path[rows, settle]
    if (np.isnan(price) & (face > 0)).any():
        raise InputError(
            f"tranche '{spec['name']}': convertible notes need a share price path; give "
            "reference_share_price_usd (and share_price_growth_annual) or share_price_usd"
        )
    result = convertible_settlement(
        face,
        spec["conversion_price_usd"],
        price,
        spec["capped_call_cap_price_usd"],
        spec["settlement"],
    )
    converts = result["converts"]
    physical = converts & (spec["settlement"] == SETTLEMENTS.index("physical"))
    if physical.any():
        # Settled in shares: no cash principal, and the carrying amount (unamortized costs
        # included) moves to equity instead of being written off.
        at = (rows[physical], settle[physical])
        converted = np.zeros((n, T))
        converted[at] = lines["balloon_usd"][at] + lines["settlement_usd"][at]
        lines["converted_usd"] = converted
        for key in ("balloon_usd", "settlement_usd"):
            if lines[key] is not blank:
                lines[key][at] = 0.0
        if lines["extinguishment_usd"] is not blank:
            lines["interest_expense_usd"][at] -= lines["extinguishment_usd"][at]
            lines["extinguishment_usd"][at] = 0.0
    lines["shares_issued"] = np.zeros((n, T))
    lines["shares_issued"][rows, settle] = result["net_shares"]
    metrics.update(
        settlement_month=settle.astype(float),
        share_price_at_settlement_usd=price,
        converted=converts.astype(float),
        gross_shares=result["gross_shares"],
        capped_call_shares=result["capped_call_shares"],
        net_shares=result["net_shares"],
    )


def _residual_rows(spec):
    """Rows (n,) where an equity tranche has no amount and so funds the remainder."""
    return np.isnan(spec["amount_usd"]) & np.isnan(spec["share_of_capex"])


def _equity_tranche(spec, capex, profile, price_path, T, blank, needed=None):
    """Lines and metrics of an equity tranche, and its net proceeds (n, T).

    Rows without an amount issue `needed` (n, T) gross of commission, or nothing without it.
    """
    m = np.arange(T)[None, :]
    atm = (spec["issuance"] == ISSUANCES.index("at_the_market"))[:, None]
    commission = spec["atm_commission_share"][:, None] * atm
    amount = np.nan_to_num(_amount(spec, capex))
    (issue,) = common_row(spec["issue_month"])
    upfront = np.where(m == issue[:, None], amount[:, None], 0.0)
    gross = upfront if not atm.any() else np.where(atm, amount[:, None] * profile, upfront)
    if needed is not None:
        # Sold to cover the shortfall; an ATM programme sells enough to net it after commission.
        gross = np.where(_residual_rows(spec)[:, None], needed / (1.0 - commission), gross)
    fees = gross * commission if commission.any() else blank
    if price_path is None:
        reference, growth = common_row(
            spec["reference_share_price_usd"], spec["share_price_growth_annual"]
        )
        price = share_price_path(reference, growth, np.arange(T))
    else:
        price = price_path[:, :T]
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(gross > 0, gross / price, 0.0)
    lines = dict.fromkeys(LINES, blank)
    lines.update(equity_issued_usd=gross, fees_usd=fees, shares_issued=shares)
    issued = gross.sum(axis=1)
    metrics = {"amount_usd": issued, "drawn_usd": issued.copy(), "shares": shares.sum(axis=1)}
    return lines, metrics, gross if fees is blank else gross - fees


def _delayed_draws(spec, commitment, profile):
    """Draws of a delayed-draw term loan and the commitment fee on its undrawn amount (n, L)."""
    n, L = profile.shape
    m = np.arange(L)[None, :]
    issue, availability, maturity = (
        x[:, None]
        for x in common_row(
            spec["issue_month"], spec["availability_months"], spec["maturity_month"]
        )
    )
    window_end = np.minimum(
        np.where(np.isnan(availability), np.inf, issue + availability), maturity - 1
    )
    window = (m >= issue) & (m <= window_end)
    if spec["draw_months"] is not None:
        months = np.broadcast_to(
            np.atleast_2d(spec["draw_months"]), (n, spec["draw_months"].shape[-1])
        )
        shares = np.broadcast_to(np.atleast_2d(spec["draw_shares"]), months.shape)
        draws = np.zeros((n, L))
        for j in range(months.shape[1]):  # loops over the schedule's steps, which are few
            draws += np.where(m == months[:, j : j + 1], shares[:, j : j + 1], 0.0)
        draws = draws * commitment[:, None]
    else:
        draws = commitment[:, None] * profile
    outside = (draws > 0) & ~window
    if outside.any():
        row, month = np.argwhere(outside)[0]
        _outside_availability(spec, row, month, np.broadcast_to(window_end, (n, 1))[row, 0], n)
    # Nothing is undrawn outside the availability period: the months after it stay 0.
    open_months = slice(0, int(min(L - 1, max(np.max(window_end), -1.0))) + 1)
    window, m = window[:, open_months], m[:, open_months]
    undrawn = np.where(window, commitment[:, None] - cumsum_months(draws[:, open_months]), 0.0)
    undrawn_before = np.concatenate([np.zeros((n, 1)), undrawn[:, :-1]], axis=1)
    fee_rate = spec["commitment_fee_annual"][:, None] * spec["day_count"][:, None]
    fee = np.zeros((n, L))
    fee[:, open_months] = np.where(
        window & (m > issue), np.maximum(undrawn_before, 0.0) * fee_rate, 0.0
    )
    return draws, fee


def _outside_availability(spec, row, month, end, n) -> None:
    """Refuse a delayed-draw loan's draw in `month`, outside its availability period (scenario
    `row` of n; `end` its last month): an explicit draw, or the default draw with the capex."""
    where = _tranche_text(spec) + (f" (scenario {row})" if n > 1 else "")
    issue = spec["issue_month"][row]
    window = f"the availability period, months {issue:g} to {end:g}"
    if spec["draw_months"] is not None:
        raise InputError(f"{where}: draw in month {month} is outside {window}")
    given = f"issue_month {issue:g}"
    if not np.isnan(spec["availability_months"][row]):
        given += f", availability_months {spec['availability_months'][row]:g}"
    raise InputError(
        f"{where} (delayed_draw_term_loan): it has no draw_schedule, so it draws with the capex "
        f"as it is spent, and capex spent in month {month} is outside {window} ({given}); "
        "expected a draw_schedule of draws within those months, or an issue_month and "
        "availability_months that cover the months the capex is spent"
    )


def _tranche_text(spec) -> str:
    """How a message names a tranche: by its place in the scenario file where it has one
    ("financing.tranches[0] 'ddtl'"), else "tranche 'ddtl'"."""
    path = spec.get("path")
    return f"{path} '{spec['name']}'" if path else f"tranche '{spec['name']}'"


def _loan_rate_annual(spec, L):
    """Contractual annual rate path, (n, L) or (1, L) when every scenario has the same: fixed,
    or index + spread with the index floored."""
    n = spec["rate_annual"].shape[0]
    curve = (
        [] if spec["index_months"] is None else [spec["index_months"], spec["index_rates_annual"]]
    )
    columns = [spec["rate_annual"], spec["spread_annual"], spec["floor_annual"]]
    columns.append(spec["index_interpolation"])
    tables = [np.broadcast_to(np.atleast_2d(x), (n, x.shape[-1])) for x in curve]
    fixed, spread, floor, interpolation, *tables = common_row(*columns, *tables)
    fixed = fixed[:, None]
    if not tables:
        return np.array(np.broadcast_to(fixed, (fixed.shape[0], L)))
    index = index_rate_annual(*tables, np.arange(L), interpolation)
    floating = floating_rate_annual(index, spread, floor)
    return np.where(np.isnan(fixed), floating, fixed)


def _amount(spec, capex):
    return np.where(
        np.isnan(spec["amount_usd"]), spec["share_of_capex"] * capex, spec["amount_usd"]
    )


def _check_draws_fit(where, draws, last):
    after = int(last.min()) + 1  # months before it are within every scenario's horizon
    late = (draws[:, after:] > 0) & (np.arange(after, draws.shape[1])[None, :] > last[:, None])
    if late.any():
        row, month = np.argwhere(late)[0]
        month += after
        scenario = f" of scenario {row}" if draws.shape[0] > 1 else ""
        raise InputError(
            f"{where}: draw schedule beyond the horizon: draw in month {month}{scenario}, after "
            f"its last month {last[row]}"
        )


# ---------------------------------------------------------------------------------------------
# settings: normalization and checks
# ---------------------------------------------------------------------------------------------


def _normalize(spec: Mapping, index: int, n: int) -> dict:
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise InputError(f"tranche {index}: expected a mapping with a 'type' field, got {spec!r}")
    kind = spec["type"]
    if kind not in TRANCHE_TYPES:
        raise InputError(
            f"tranche {index}: unknown type {kind!r}; expected one of: {', '.join(TRANCHE_TYPES)}"
        )
    unknown = sorted(set(spec) - set(SPEC_FIELDS) - {"type"})
    if unknown:
        raise InputError(
            f"tranche {index} ({kind}): unknown field {unknown[0]!r}; expected one of: "
            + ", ".join(sorted(SPEC_FIELDS))
        )
    name = str(spec.get("name") or f"{kind}_{index}")
    out: dict = {"type": kind, "name": name, "path": spec.get("path")}
    for key, default in SPEC_FIELDS.items():
        if key in ("name", "path"):
            continue
        value = spec.get(key, default)
        where = f"tranche '{name}'.{key}"
        if key in _CATEGORIES:
            codes = choice_codes(value, _CATEGORIES[key], where)
            codes = np.broadcast_to(codes, (n,))
            out[key] = _DAY_COUNT_FACTORS[codes] if key == "day_count" else codes
        elif key in _TABLES:
            out[key] = None if value is None else np.asarray(value, dtype=float)
        else:
            out[key] = _vector(np.nan if value is None else value, n, where)
    _check_tranche(out)
    return out


def _check_tranche(s: dict) -> None:
    kind, name = s["type"], s["name"]

    def fail(key, bad, expected):
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"tranche '{name}' ({kind}).{key} = {float(s[key][row])!r} (scenario {row}): {expected}"
        )

    def check(key, bad, expected):
        bad = np.broadcast_to(bad, s[key].shape) if np.ndim(bad) else np.full(s[key].shape, bad)
        if bad.any():
            fail(key, bad, expected)

    given_usd, given_share = ~np.isnan(s["amount_usd"]), ~np.isnan(s["share_of_capex"])
    if kind != "equity":
        check("amount_usd", ~given_usd & ~given_share, "give amount_usd or share_of_capex")
    check("amount_usd", given_usd & given_share, "give amount_usd or share_of_capex, not both")
    check("amount_usd", s["amount_usd"] < 0, "expected an amount >= 0 [USD]")
    check(
        "share_of_capex",
        (s["share_of_capex"] < 0) | (s["share_of_capex"] > 1),
        "expected a share of capex between 0 and 1",
    )
    check("issue_month", s["issue_month"] < 0, "expected a month >= 0")
    for key in (
        "issue_month",
        "maturity_month",
        "amortization_months",
        "interest_only_months",
        "availability_months",
    ):
        fractional = ~np.isnan(s[key]) & (s[key] != np.round(s[key]))
        check(key, fractional, "expected a whole number of months")
    nonnegative = (
        "spread_annual",
        "upfront_fee_share",
        "issue_discount_share",
        "commitment_fee_annual",
        "coupon_annual",
        "capped_call_cost_share",
        "atm_commission_share",
        "balloon_share",
        "interest_only_months",
    )
    for key in nonnegative:
        check(key, s[key] < 0, "negative values are not allowed here; expected >= 0")
    for key in (
        "upfront_fee_share",
        "issue_discount_share",
        "capped_call_cost_share",
        "atm_commission_share",
        "balloon_share",
    ):
        check(key, s[key] >= 1, "expected a share below 1")
    check("rate_annual", s["rate_annual"] < 0, "expected a fixed rate >= 0 [1/year]")
    if kind == "equity":
        check(
            "required_return_annual",
            s["required_return_annual"] < 0,
            "expected a required return >= 0 [1/year]",
        )
        return
    maturity = s["maturity_month"]
    check("maturity_month", np.isnan(maturity), "debt needs a maturity_month")
    check(
        "maturity_month",
        maturity <= s["issue_month"],
        "maturity before issue: expected a month after issue_month",
    )
    if kind in LOANS:
        no_rate = np.isnan(s["rate_annual"]) & (s["index_rates_annual"] is None)
        check("rate_annual", no_rate, "give rate_annual or an index curve (index_rates_annual)")
        if s["index_rates_annual"] is not None:
            _check_curve(s)
        check("amortization_months", s["amortization_months"] < 1, "expected at least 1 month")
    else:
        check(
            "coupons_per_year",
            ~np.isin(s["coupons_per_year"], (1, 2, 4, 12)),
            "expected 1, 2, 4 or 12 coupons per year",
        )
    if kind == "convertible_notes":
        check(
            "conversion_price_usd",
            ~(s["conversion_price_usd"] > 0),
            "conversion price must be > 0 [USD/share]",
        )
        cap = s["capped_call_cap_price_usd"]
        check(
            "capped_call_cap_price_usd",
            cap <= s["conversion_price_usd"],
            "expected a cap price above the conversion price [USD/share]",
        )
        check(
            "capped_call_cost_share",
            ~np.isnan(cap) & (s["capped_call_cost_share"] == 0),
            "a capped call with a cap price and no premium paid offsets dilution for free; "
            "expected a capped_call_cost_share above 0 with capped_call_cap_price_usd",
        )
    if kind == "delayed_draw_term_loan" and s["draw_months"] is not None:
        months, shares = s["draw_months"], s["draw_shares"]
        if shares is None or np.shape(months) != np.shape(shares):
            raise InputError(f"tranche '{name}': draw_months and draw_shares must match in shape")
        finite = np.where(np.isfinite(months), months, np.inf)
        if (np.diff(finite, axis=-1) <= 0).any():
            raise InputError(
                f"tranche '{name}'.draw_months = {months.tolist()}: expected "
                "strictly increasing months (no duplicates)"
            )
        if (shares < 0).any() or (shares.sum(axis=-1) > 1 + 1e-9).any():
            raise InputError(
                f"tranche '{name}'.draw_shares = {shares.tolist()}: expected "
                "shares >= 0 summing to at most 1 of the commitment"
            )


def _check_curve(s: dict) -> None:
    months, rates = s["index_months"], s["index_rates_annual"]
    name = s["name"]
    if months is None or np.shape(months)[-1:] != np.shape(rates)[-1:]:
        raise InputError(
            f"tranche '{name}': index_months and index_rates_annual must have the "
            "same number of knots"
        )
    months = np.asarray(months, dtype=float)
    # Padding (+inf) may only follow the knots; finite knots must strictly increase.
    with np.errstate(invalid="ignore"):  # inf - inf between padding knots
        bad = np.isfinite(months[..., 1:]) & ~(np.diff(months, axis=-1) > 0)
    if bad.any() or np.isnan(months).any():
        raise InputError(
            f"tranche '{name}'.index_months = {months.tolist()}: unsorted or duplicate dates; "
            "expected strictly increasing knots"
        )


def _check_stack(specs: list[dict], n: int) -> None:
    names = [s["name"] for s in specs]
    duplicates = sorted({x for x in names if names.count(x) > 1})
    if duplicates:
        raise InputError(f"tranche name {duplicates[0]!r} is used twice; give each a distinct name")
    shares = sum((np.nan_to_num(s["share_of_capex"]) for s in specs), np.zeros(n))
    if (shares > 1 + 1e-9).any():
        row = int(np.flatnonzero(shares > 1 + 1e-9)[0])
        raise InputError(
            f"tranche shares of capex add up to {shares[row]:.4g} (scenario {row}); expected at "
            "most 1 (100% of capex)"
        )
    residual = sum(
        (_residual_rows(s).astype(int) for s in specs if s["type"] == "equity"),
        np.zeros(n, dtype=int),
    )
    if (residual > 1).any():
        names = [s["name"] for s in specs if s["type"] == "equity" and _residual_rows(s).any()]
        raise InputError(
            f"equity tranches {names} have no amount; at most one may fund the remainder"
        )


def _vector(value, n, what):
    array = np.asarray(value, dtype=float)
    try:
        return np.array(np.broadcast_to(array, (n,)), dtype=float)
    except ValueError:
        raise InputError(
            f"{what}: expected a scalar or an array of {n} values, got shape {array.shape}"
        ) from None


# ---------------------------------------------------------------------------------------------
# convertible notes, share prices, equity
# ---------------------------------------------------------------------------------------------


def share_price_path(reference_usd, growth_annual, months):
    """Deterministic share price path: S_m = S_0 * (1 + g)^(m/12) [USD/share], array (n, T)."""
    s0 = np.atleast_1d(np.asarray(reference_usd, dtype=float))[:, None]
    g = np.atleast_1d(np.asarray(growth_annual, dtype=float))[:, None]
    return s0 * np.power(1.0 + g, np.asarray(months, dtype=float)[None, :] / MONTHS_PER_YEAR)


def convertible_settlement(
    face_usd, conversion_price_usd, share_price_usd, cap_price_usd=None, settlement="net_share"
):
    """Settlement of convertible notes at maturity and the dilution it causes.

    Holders convert when the share price S is above the conversion price K; the conversion rate
    is face / K shares. Physical settlement delivers all of them and no cash; net share settlement
    pays the face in cash and delivers shares worth the conversion value above it,
    face * (S/K - 1) / S shares. A capped call bought at issue on face / K shares pays
    (min(S, cap) - K)^+ per share, delivered in shares, which offsets dilution up to the cap.

    Parameters
    ----------
    face_usd, conversion_price_usd, share_price_usd : array (n,)  [USD], [USD/share], [USD/share]
    cap_price_usd : array (n,), optional  capped call cap; NaN or None: no capped call
    settlement : "physical" | "net_share" or array (n,) of codes

    Returns
    -------
    dict of arrays (n,)
        ``converts`` (bool), ``cash_usd`` (principal paid in cash), ``gross_shares`` (delivered
        to holders), ``capped_call_shares`` (received back from the capped call counterparty),
        ``net_shares`` (dilution) [shares].

    References
    ----------
    FASB ASC 470-20 as amended by ASU 2020-06 (single liability; conversion per terms moves the
    carrying amount to equity, ASC 470-20-40-4) and ASC 260-10-45-40 (if-converted dilution);
    Hull, J. C., *Options, Futures, and Other Derivatives*, 10th ed., ch. 26.6 (convertible
    bonds) and ch. 12 (call spreads, the payoff of a capped call).
    """
    face = np.asarray(face_usd, dtype=float)
    strike = np.asarray(conversion_price_usd, dtype=float)
    price = np.asarray(share_price_usd, dtype=float)
    cap = np.full(face.shape, np.nan) if cap_price_usd is None else np.asarray(cap_price_usd, float)
    code = choice_codes(settlement, SETTLEMENTS, "settlement")
    physical = np.broadcast_to(code, face.shape) == 0
    converts = (price > strike) & (face > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        underlying = face / strike
        gross = np.where(
            converts, np.where(physical, underlying, face * (price / strike - 1.0) / price), 0.0
        )
        capped_value = np.clip(np.fmin(price, cap) - strike, 0.0, None) * underlying
        hedge = np.where(converts & ~np.isnan(cap), capped_value / price, 0.0)
    return {
        "converts": converts,
        "cash_usd": np.where(converts & physical, 0.0, face),
        "gross_shares": gross,
        "capped_call_shares": hedge,
        "net_shares": gross - hedge,
    }


def equity_returns(equity_cash_flow_usd, min_contribution_usd=0.0, irr: bool = True):
    """Equity IRR and multiple of invested capital of monthly equity cash flows.

    IRR: the monthly rate at which the flows' NPV is 0 (``econ.excel.irr_batch``), annualized as
    (1 + m)^12 - 1. MOIC: distributions / contributions, the sum of positive flows over minus the
    sum of negative ones.

    Parameters
    ----------
    equity_cash_flow_usd : array (n, T)  cash to (+) and from (-) equity, month 0 first [USD]
    min_contribution_usd : array (n,)  below this total contribution IRR and MOIC are NaN (a
        return on almost no equity is arithmetic, not information) [USD]
    irr : False skips the IRR (NaN), for callers that take the IRR elsewhere (the engine
        applies the summary's IRR policy, econ.metrics.unique_irr_annual)

    Returns
    -------
    dict of arrays (n,)
        ``irr_monthly`` [1/month], ``irr_annual`` [1/year], ``moic`` [x], ``contributions_usd``,
        ``distributions_usd`` [USD].

    References
    ----------
    Microsoft Support, "IRR function"; Gompers, P. et al., "How do private equity investors make
    decisions?", Journal of Financial Economics 121 (2016) 449-476 (IRR and MOIC as the two
    return measures).
    """
    flows = np.asarray(equity_cash_flow_usd, dtype=float)
    contributions = -np.fmin(flows, 0.0).sum(axis=1)  # (fmin: a NaN flow counts as 0)
    distributions = np.fmax(flows, 0.0).sum(axis=1)
    enough = contributions > np.maximum(np.asarray(min_contribution_usd, dtype=float), 0.0)
    irr_monthly = irr_batch(flows) if irr else np.full(len(flows), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        moic = distributions / contributions
    return {
        "irr_monthly": np.where(enough, irr_monthly, np.nan),
        "irr_annual": np.where(enough, annual_rate(irr_monthly), np.nan),
        "moic": np.where(enough, moic, np.nan),
        "contributions_usd": contributions,
        "distributions_usd": distributions,
    }


# ---------------------------------------------------------------------------------------------
# coverage, leverage, cost of capital
# ---------------------------------------------------------------------------------------------


def coverage_ratios(
    cfads_usd,
    debt_service_usd,
    balance_usd,
    rate_monthly,
    last_month=None,
    dscr_floor=None,
    llcr_floor=None,
    test_months=1,
    collateral_usd=None,
    ltv_ceiling=None,
    first_test_month=None,
):
    """Debt service and loan life coverage ratios by month, and covenant breaches.

    DSCR_m = CFADS_m / DS_m, in months with debt service. The covenant is tested on the trailing
    ``test_months`` (as loan agreements test "last twelve months" or quarterly ratios):
    sum of CFADS / sum of debt service over months m-w+1..m, in every month of the loan's life
    whose window holds debt service (`econ.financing.covenant_test_months`: with semi-annual
    coupons, the months between coupons too), so that a breach is counted by the month whenever
    the payments fall.

    LLCR_m = PV_m(CFADS over months m+1..E) / B_m, with B_m the debt outstanding at the end of
    month m, E the last month any debt is outstanding (or the scenario's last month, if sooner),
    discounted at the stack's monthly debt rate. Defined where B_m > 0.

    Parameters
    ----------
    cfads_usd : array (n, T)  cash flow available for debt service (EBITDA - tax) [USD]
    debt_service_usd : array (n, T)  scheduled interest, fees and principal [USD]
    balance_usd : array (n, T)  debt outstanding at month end [USD]
    rate_monthly : array (n,)  discount rate for LLCR [1/month]
    last_month : array (n,), optional  last month of each scenario
    dscr_floor, llcr_floor : array (n,), optional  covenant floors [x]; NaN or None: no covenant
    test_months : int or array (n,)  length of the trailing DSCR test window [months]
    collateral_usd : array (n, T), optional  the collateral an LTV covenant tests [USD]
    ltv_ceiling : array (n,), optional  covenant maximum loan-to-value (`loan_to_value`), tested
        in each month with debt outstanding [fraction]; NaN or None: no covenant
    first_test_month : array (n,), optional  first month the DSCR and LLCR covenants are tested
        (a facility's first test date): earlier months are neither breaches nor in
        ``min_dscr_test``; NaN or None: from month 0 [month index]

    Returns
    -------
    dict
        (n, T): ``dscr``, ``dscr_test``, ``llcr`` [x] (NaN where undefined), ``dscr_tested``
        (the months the DSCR covenant tests), ``dscr_breach``, ``llcr_breach``, ``ltv_breach``
        [bool]; (n,): ``min_dscr``, ``min_dscr_test`` (the lowest ratio the covenant tests, on
        its trailing window), ``min_llcr`` [x], ``breach_months`` (months with any breach),
        ``first_breach_month`` (NaN: none), ``last_dscr_month`` and ``last_llcr_month`` (the
        last month each ratio is defined to test, whatever the first test month; NaN: none).

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), §12.3 (debt-cover
    ratios: ADSCR, LLCR, and the ratio levels lenders test); Gatti, S., *Project Finance in Theory and
    Practice*, 3rd ed. (2018), section 5.6 (cover ratios).
    """
    cfads = np.asarray(cfads_usd, dtype=float)
    service = np.asarray(debt_service_usd, dtype=float)
    balance = np.asarray(balance_usd, dtype=float)
    n, T = cfads.shape
    m = np.arange(T)[None, :]
    last = np.full(n, T - 1) if last_month is None else np.broadcast_to(last_month, (n,))
    live = m <= np.asarray(last)[:, None]
    owed = (service > OWED_USD) & live
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        dscr = np.where(owed, cfads / service, np.nan)
    windows = np.maximum(np.broadcast_to(np.asarray(test_months, dtype=np.int64), (n,)), 1)
    in_life = (lambda x: x) if live.all() else (lambda x: np.where(live, x, 0.0))
    one_month = (windows == 1).all()  # a one-month window is the month itself
    window_service = None if one_month else trailing_sum_rows(in_life(service), windows)
    testable = (
        covenant_test_months(
            in_life(service),
            in_life(balance),
            windows,
            owed_usd=OWED_USD,
            window_service_usd=window_service,
        )
        & live
    )
    if one_month:
        dscr_test = dscr
    else:
        window_cfads = trailing_sum_rows(in_life(cfads), windows)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            dscr_test = np.where(testable, window_cfads / window_service, np.nan)

    outstanding = (balance > OWED_USD) & live
    end = np.where(outstanding.any(axis=1), T - 1 - np.argmax(outstanding[:, ::-1], axis=1), -1)
    # The last month with debt outstanding is followed by its repayment month.
    end = np.minimum(end + 1, np.asarray(last))
    rate = np.broadcast_to(np.asarray(rate_monthly, dtype=float), (n,))
    rate = np.where(np.isfinite(rate), rate, 0.0)
    discount = power_path(1.0 + rate, -np.arange(T))
    weighted = np.where(m <= end[:, None], cfads * discount, 0.0)
    later = remaining_sum_months(weighted) - weighted
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        llcr = np.where(outstanding, later / discount / balance, np.nan)

    tested_llcr, tested = llcr, testable  # (a facility's first test date: no test before it)
    first = np.nan_to_num(np.asarray(first_test_month, dtype=float), nan=0.0)
    if first_test_month is not None and np.any(first > 0):
        untested = m < np.broadcast_to(first, (n,))[:, None]
        dscr_test = np.where(untested, np.nan, dscr_test)
        tested_llcr = np.where(untested, np.nan, llcr)
        tested = testable & ~untested

    def breach(ratio, floor):
        floor = None if floor is None else np.broadcast_to(np.asarray(floor, dtype=float), (n,))
        if floor is None or np.isnan(floor).all():
            return np.zeros((n, T), dtype=bool)
        return ratio < floor[:, None]  # False where either is NaN

    dscr_breach = breach(dscr_test, dscr_floor)
    llcr_breach = breach(tested_llcr, llcr_floor)
    if ltv_ceiling is None or np.isnan(np.asarray(ltv_ceiling, dtype=float)).all():
        ltv_breach = np.zeros((n, T), dtype=bool)
    else:
        ltv_breach = loan_to_value(balance, collateral_usd, ltv_ceiling)[1] & outstanding
    either = dscr_breach | llcr_breach | ltv_breach
    lowest_dscr = _nanmin(dscr)
    return {
        "dscr": dscr,
        "dscr_test": dscr_test,
        "llcr": llcr,
        "dscr_tested": tested,
        "dscr_breach": dscr_breach,
        "llcr_breach": llcr_breach,
        "ltv_breach": ltv_breach,
        "min_dscr": lowest_dscr,
        "min_dscr_test": lowest_dscr if dscr_test is dscr else _nanmin(dscr_test),
        "min_llcr": _nanmin(llcr),
        "breach_months": either.sum(axis=1),
        "first_breach_month": np.where(either.any(axis=1), np.argmax(either, axis=1), np.nan),
        "last_dscr_month": _last_month(testable),
        "last_llcr_month": _last_month(outstanding),
    }


OWED_USD = 1e-6
"""Debt service or a balance above this is owed, and tested [USD] (`coverage_ratios`)."""


def _last_month(flags):
    """The last month flagged in each row (n,), NaN where none is."""
    T = flags.shape[1]
    return np.where(flags.any(axis=1), T - 1 - np.argmax(flags[:, ::-1], axis=1), np.nan)


def loan_to_value(balance_usd, value_usd, ltv_ceiling=None):
    """Loan-to-value by month: debt outstanding / collateral value [fraction], and breaches.

    Parameters
    ----------
    balance_usd : array (n, T)  debt outstanding [USD]
    value_usd : array (n, T) or (n,)  book or market value of the collateral (the GPUs) [USD]
    ltv_ceiling : array (n,), optional  covenant maximum [fraction]; NaN or None: none

    Returns
    -------
    ltv : array (n, T)  NaN where the value is not positive
    breach : array (n, T) of bool: LTV above the ceiling, or debt outstanding against collateral
        worth nothing (an unsecured loan: its LTV is unbounded)

    References
    ----------
    Yescombe, E. R., *Principles of Project Finance*, 2nd ed. (2014), ch. 12 (financial
    structuring; debt against the value of the assets); Moody's, "Rating Methodology: Equipment and Transportation Lease ABS" (LTV tests).
    """
    balance = np.asarray(balance_usd, dtype=float)
    value = np.asarray(value_usd, dtype=float)
    value = np.broadcast_to(value[:, None] if value.ndim == 1 else value, balance.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        ltv = np.where(value > 0, balance / value, np.nan)
    if ltv_ceiling is None:
        return ltv, np.zeros(balance.shape, dtype=bool)
    ceiling = np.broadcast_to(np.asarray(ltv_ceiling, dtype=float), balance.shape[:1])[:, None]
    unsecured = (balance > 0) & ~(value > 0)
    return ltv, (~np.isnan(ltv) & (ltv > ceiling)) | (unsecured & ~np.isnan(ceiling))


def _nanmin(x):
    return np.fmin.reduce(x, axis=1)  # NaN only where a row is all NaN


def wacc_after_tax(debt_usd, debt_cost_annual, equity_usd, equity_cost_annual, tax_rate):
    """After-tax weighted average cost of capital [1/year].

    WACC = sum_i D_i / V * k_d,i * (1 - t) + E / V * k_e, with V = sum_i D_i + E. Debt costs are
    the tranches' effective yields (issue discount and fees included); weights are the amounts
    raised.

    Parameters
    ----------
    debt_usd : array (n, k)  debt raised per tranche [USD]
    debt_cost_annual : array (n, k)  pre-tax cost of each tranche [1/year]
    equity_usd : array (n,)  equity raised [USD]
    equity_cost_annual : array (n,)  required return on equity [1/year]
    tax_rate : array (n,)  marginal income tax rate [fraction]

    Returns
    -------
    array (n,)  NaN where nothing is raised, or equity is raised without a known cost

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 9.3 and 19.1
    (after-tax WACC); Koller, Goedhart & Wessels, *Valuation*, 7th ed., ch. 15.
    """
    debt = np.atleast_2d(np.asarray(debt_usd, dtype=float))
    cost = np.broadcast_to(np.asarray(debt_cost_annual, dtype=float), debt.shape)
    equity = np.asarray(equity_usd, dtype=float)
    equity_cost = np.broadcast_to(np.asarray(equity_cost_annual, dtype=float), equity.shape)
    t = np.asarray(tax_rate, dtype=float)
    value = debt.sum(axis=1) + equity
    with np.errstate(invalid="ignore", divide="ignore"):
        debt_part = (debt * cost).sum(axis=1) * (1.0 - t)
        equity_part = np.where(equity > 0, equity * equity_cost, 0.0)
        return np.where(value > 0, (debt_part + equity_part) / value, np.nan)


__all__ = [
    "ISSUANCES",
    "LINES",
    "SETTLEMENTS",
    "SPEC_FIELDS",
    "TRANCHE_TYPES",
    "StackSchedule",
    "convertible_settlement",
    "coverage_ratios",
    "equity_returns",
    "loan_to_value",
    "share_price_path",
    "stack_schedule",
    "wacc_after_tax",
]
