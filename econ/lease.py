"""Lease versus own: renting GPUs by the GPU-hour against buying them with a capital stack.

This module owns the rental side (contract payments with an upfront share, renewed term after
term) and the comparison: present value of each alternative's after-tax costs, its cost per
million tokens, the advantage of leasing, and the break-even rental price at which both cost the
same. The owning side's costs come from the projection (capex, its financing cash flow, power,
facility, opex, residual value), so both alternatives produce the same tokens.

Arrays are (n, T) over months 0..T-1 with a leading scenario axis; costs are positive.
"""

from __future__ import annotations

import numpy as np

from econ.arrays import refuse_outside
from econ.errors import InputError
from econ.labels import counted
from econ.units import HOURS_PER_MONTH, TOKENS_PER_MTOK, annual_rate, monthly_rate


def rent_accrued_usd(gpus_rented, price_usd_per_gpu_hour):
    """Rent of each month's service [USD], array (n, T): gpus_m * price * HOURS_PER_MONTH.

    Every hour of a rented GPU is billed (reserved capacity, whatever the utilization). This is
    the rent a month's use costs, whenever it is paid: the renter's deduction for the month.

    Parameters
    ----------
    gpus_rented : array (n, T)  GPUs rented in each month, 0 outside service [GPUs]
    price_usd_per_gpu_hour : array (n,) or scalar  rental price [USD/GPU-hour]
    """
    return np.asarray(gpus_rented, dtype=float) * _col(price_usd_per_gpu_hour) * HOURS_PER_MONTH


def rent_paid_usd(gpus_rented, price_usd_per_gpu_hour, term_months, upfront_share, first_month):
    """Rent paid each month under back-to-back rental contracts [USD], array (n, T).

    Contracts of `term_months` start at `first_month` and renew at the same terms, one after the
    other. Each month's rent is `rent_accrued_usd`; a share of a contract's rent (the rent of the
    GPUs it covers in its months) is paid upfront, in the month before the contract starts
    (month 0 for a contract starting in month 0), the rest as each month is served:

        upfront of contract k = upfront_share * sum of its months' rent
        paid in month m       = (1 - upfront_share) * rent_m + upfront of a contract starting
                                in m + 1

    A fleet that leaves service pays no rent after it, and the upfront of a contract cut short
    covers only the months with GPUs in service, so rent paid sums to the rent of the months
    served (both alternatives are charged for the same GPU-months).

    Parameters
    ----------
    gpus_rented : array (n, T)  GPUs rented in each month, 0 outside service [GPUs]
    price_usd_per_gpu_hour : array (n,) or scalar  rental price [USD/GPU-hour]
    term_months : array (n,) or scalar  contract term, e.g. 36 [months]
    upfront_share : array (n,) or scalar  share of a contract's rent paid upfront, 0 to 1
        (1: fully prepaid, no monthly rent) [fraction]
    first_month : array (n,) or scalar  first month of the first contract [month index]

    References
    ----------
    FASB ASC 842-20 (lessee accounting: lease payments, prepaid rent); Brealey, Myers & Allen,
    *Principles of Corporate Finance*, 13th ed., ch. 25.2 (lease payments in advance).
    """
    refuse_outside(
        "price_usd_per_gpu_hour",
        price_usd_per_gpu_hour,
        lambda x: np.isfinite(x) & (x >= 0),
        "a finite rental price of at least 0 [USD/GPU-hour]",
    )
    refuse_outside(
        "term_months",
        term_months,
        lambda x: (x >= 1) & (x == np.floor(x)) & np.isfinite(x),
        "a whole number of months, at least 1 [months]",
    )
    refuse_outside(
        "upfront_share", upfront_share, lambda x: (x >= 0) & (x <= 1), "a share from 0 to 1"
    )
    accrued = rent_accrued_usd(gpus_rented, price_usd_per_gpu_hour)
    n, T = accrued.shape
    months = np.arange(T)[None, :]
    term = np.broadcast_to(_col(term_months), (n, 1)).astype(np.int64)
    first = np.broadcast_to(_col(first_month), (n, 1)).astype(np.int64)
    upfront = _col(upfront_share)
    # Month s starts a contract when (s - first) is a multiple of the term; its rent is the sum
    # of months s..s+term-1 within the grid, from the running sum.
    starts = (months >= first) & (np.mod(months - first, term) == 0)
    total = np.concatenate([np.zeros((n, 1)), np.cumsum(accrued, axis=1)], axis=1)
    end = np.minimum(months + term, T)
    contract_rent = np.take_along_axis(total, end, axis=1) - total[:, :T]
    due = np.where(starts, upfront * contract_rent, 0.0)  # by the month the contract starts
    prepaid = np.concatenate([due[:, 1:], np.zeros((n, 1))], axis=1)  # paid the month before
    prepaid[:, 0] += due[:, 0]
    return (1.0 - upfront) * accrued + prepaid


def lease_payments_usd(
    gpu_count,
    price_usd_per_gpu_hour,
    term_months,
    upfront_share,
    months,
    last_month,
    first_month=1,
):
    """Rent paid each month for a constant fleet [USD], array (n, T): `rent_paid_usd` with
    `gpu_count` GPUs rented from `first_month` to `last_month`.

        total rent of a contract = gpus * price * HOURS_PER_MONTH * term
        monthly instalment       = (1 - upfront_share) * gpus * price * HOURS_PER_MONTH

    Parameters
    ----------
    gpu_count : array (n,)  GPUs rented [GPUs]
    price_usd_per_gpu_hour : array (n,)  rental price [USD/GPU-hour]
    term_months : array (n,)  contract term, e.g. 36 [months]
    upfront_share : array (n,)  share of the contract's rent paid upfront, e.g. 0.25 [fraction]
    months : array (T,)  0..T-1
    last_month : array (n,)  last service month [month index]
    first_month : int or array (n,)  first service month (1: the month after purchase would be)
    """
    months = np.asarray(months)[None, :]
    serving = (months >= _col(first_month)) & (months <= _col(last_month))
    gpus = np.where(serving, _col(gpu_count), 0.0)
    return rent_paid_usd(gpus, price_usd_per_gpu_hour, term_months, upfront_share, first_month)


def first_service_month(gpus_rented):
    """First month with GPUs in service in each row [month index], int array (n,); the grid's
    length where there is none."""
    serving = np.asarray(gpus_rented) > 0
    return np.where(serving.any(axis=1), serving.argmax(axis=1), serving.shape[1])


def term_warning(term_months, first_month, last_month):
    """Why a contract the GPUs leave service during gives the figures of a shorter one (a
    string), or None: rent is charged for the months with GPUs in service only
    (`rent_paid_usd`), so a contract that runs past the last of them is cut there, and the rent
    of its months after it, which a lessee bound to the term would owe, is not counted. So it is
    with a term longer than the months in service (one contract, cut: any term from that many
    months gives the same figures) and with a last renewal that starts fewer than a term's
    months before the service ends (a 60-month term over 72 months in service renews in month
    61 for 12 of its 60 months).

    Parameters
    ----------
    term_months : int  contract term [months]
    first_month, last_month : int  first and last month with GPUs in service [month index]
    """
    first, last, term = int(first_month), int(last_month), int(term_months)
    served = last - first + 1
    if term > served:
        return (
            f"the {term}-month term is longer than the {counted(served, 'month')} the GPUs are "
            f"in service (months {first}-{last}): the contract is cut at month {last} and rent "
            f"after it, which a lessee bound to the term would owe, is not counted, so any "
            f"term from {counted(served, 'month')} gives these figures"
        )
    runs = served % term
    if runs == 0:
        return None
    return (
        f"the last {term}-month contract, renewed in month {last - runs + 1}, runs {runs} of "
        f"its {term} months: the GPUs are in service in months {first}-{last}, so it is cut "
        f"at month {last} and the rent of its other {counted(term - runs, 'month')}, which a lessee bound "
        f"to the term would owe, is not counted (a term that divides the {served} months in "
        f"service leaves no contract cut short)"
    )


def ownership_cost_usd(
    capex_usd, financing_cash_flow_usd, operating_usd, residual_usd, settled_in_shares_usd=0.0
):
    """Monthly cost of owning the GPUs with borrowed money, before tax [USD], array (n, T).

    capex - financing cash flow + shares settling debt + operating costs - residual value: what
    the owner's equity puts in each month, revenue aside. The financing cash flow is the
    projection's own (signed, cash in positive; `financing_cash_flow_usd`): debt drawn (proceeds
    net of issue discount) less upfront and commitment fees, capped calls, cash interest and
    principal. Debt repaid in new shares is no cash, but the owner gives up what the shares are
    worth (`shares_settling_debt_usd`).

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 25.5 (the cash flows
    of buying with borrowed money against leasing).
    """
    return (
        np.asarray(capex_usd, dtype=float)
        - np.asarray(financing_cash_flow_usd, dtype=float)
        + np.asarray(settled_in_shares_usd, dtype=float)
        + np.asarray(operating_usd, dtype=float)
        - np.asarray(residual_usd, dtype=float)
    )


def financing_cash_flow_usd(cash_flow_equity_usd, cash_flow_project_usd):
    """A projection's financing cash flow from its monthly lines [USD], array (n, T), signed
    (cash in positive): equity cash flow - project cash flow.

    The engine builds the equity cash flow as the project cash flow plus the capital stack's
    financing cash flow (econ.cashflow.equity_cash_flow_usd), so this is that line, as the
    workbook's Debt sheet reads it: debt drawn less upfront and commitment fees, capped calls
    and at-the-market commissions, cash interest and principal (what is repaid at the
    projection's end included). Interest added to a loan's balance (deferred, or capitalized
    during construction) is no cash, and is not in it.
    """
    return np.asarray(cash_flow_equity_usd, dtype=float) - np.asarray(
        cash_flow_project_usd, dtype=float
    )


def shares_settling_debt_usd(projection):
    """What the shares that settle a projection's convertible notes are worth when issued, by
    month [USD], array (n, T) over its months: the shares issued on conversion, net of a capped
    call's, x the share price then, as the projection's warning quotes them ("2,200 shares
    issued (net of the capped call's 629), worth 742,476 USD").

    Physical settlement repays the face in these shares; net share settlement pays the face in
    cash (in the financing cash flow) and only the conversion value above it in shares. Either
    way the notes cost the owner the face plus the conversion value above it (above a capped
    call's cap), whatever the settlement; the financing cash flow holds none of the shares,
    which the equity cash flow never pays. 0 without convertible notes, or where they do not
    convert.

    Parameters
    ----------
    projection : econ.engine.Projection  with its monthly lines and capital-stack tranches

    References
    ----------
    Hull, J. C., *Options, Futures, and Other Derivatives*, 10th ed., ch. 26.6 (a convertible's
    holder receives the greater of the face and the conversion value); FASB ASC 260-10-45-40
    (if-converted dilution).
    """
    n, T = np.shape(projection.lines["tokens"])
    value = np.zeros((n, T))
    for part in projection.tranche_arrays:
        rows = slice(part.first, part.first + len(part.names))
        for name, metrics in part.metrics.items():
            if "net_shares" not in metrics:  # not convertible notes
                continue
            shares = part.lines[name]["shares_issued"][:, :T]
            price = metrics["share_price_at_settlement_usd"][:, None]
            # (the price is NaN in a scenario of the batch without the notes: no shares there)
            value[rows, : shares.shape[1]] += np.where(shares != 0.0, shares * price, 0.0)
    return value


def after_tax_cost_of_debt_annual(cost_of_debt_annual, tax_rate):
    """After-tax cost of debt [1/year], array (n,): the debt's monthly effective yield less the
    tax its interest saves each month, annualized, annual_rate(monthly_rate(k_d) * (1 - t)).

    At this rate a loan's after-tax flows (draws, less cash interest and principal, plus the tax
    saved on its interest expense) are worth nothing when its interest expense is its yield i on
    its carrying amount C (the balance net of unamortized fees and discount), whatever its
    repayment: each month's flow is C_m - (1 + i (1 - t)) C_(m-1), which telescopes. A stack
    of tranches at several yields, or a floating rate, comes near nothing, not to it.

    Parameters
    ----------
    cost_of_debt_annual : array (n,)  effective annual yield of the debt, fees included
        (a projection's `cost_of_debt_annual`) [1/year]
    tax_rate : array (n,)  [fraction]

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 25.4-25.5 (lease
    and debt flows discounted at the after-tax borrowing rate, r_D (1 - T_c)).
    """
    k = np.asarray(cost_of_debt_annual, dtype=float)
    return annual_rate(monthly_rate(k) * (1.0 - np.asarray(tax_rate, dtype=float)))


def after_tax_cost_usd(cost_usd, deductible_usd, tax_rate):
    """Cost net of the tax it saves: cost - t * deductible [USD], array (n, T).

    Assumes, as lease-versus-buy analysis does, that the operator has taxable income to absorb
    the deductions when they arise (no loss carry-forward).

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 25.4-25.5 (lease
    versus buy on after-tax cash flows).
    """
    t = np.asarray(tax_rate, dtype=float)
    t = t[:, None] if t.ndim == 1 else t
    return np.asarray(cost_usd, dtype=float) - t * np.asarray(deductible_usd, dtype=float)


def lease_vs_own(
    tokens,
    own_cost_usd,
    lease_cost_usd,
    discount_rate_monthly,
    lease_cost_per_price_usd=None,
    lease_other_cost_usd=None,
    own_debt_cost_usd=None,
    debt_discount_rate_monthly=None,
    own_fixed_cost_usd=None,
):
    """Present value and cost per million tokens of owning and of leasing the same capacity.

    PV_x = sum_m cost_x,m / (1 + r)^m (month 0 undiscounted); cost per million tokens
    = PV_x / PV(tokens) * 1e6 (levelized, tokens discounted at r); advantage of leasing
    = PV_own - PV_lease. Rent is linear in its price p: lease cost = a_m * p + b_m, so the
    break-even price is p* = (PV_own - PV(b)) / PV(a), from a and b alone: it does not depend on
    the price behind lease_cost_usd (subtracting PV(a) * p from PV_lease to find PV(b) would lose
    PV(b) to rounding at a large p).

    Lease-versus-buy analysis discounts the flows fixed by contract or by tax law, as safe as
    the debt, at the after-tax cost of debt r_d (`debt_discount_rate_monthly`), and the others at
    r: with r_d given, the owner's debt flows (`own_debt_cost_usd`) and its other fixed flows
    (`own_fixed_cost_usd`: capex, the depreciation tax shield), and the rent after tax (the lease
    cost less `lease_other_cost_usd`, all of it without), are discounted at r_d, the rest (the
    operating costs of either, the sale) at r:

        PV_own   = PV_r(own - debt - fixed) + PV_rd(debt + fixed)
        PV_lease = PV_r(b) + PV_rd(lease - b),   p* = (PV_own - PV_r(b)) / PV_rd(a)

    Without r_d all are discounted at r, where debt whose after-tax cost is below r lowers
    PV_own by the spread's present value: a value of the rate chosen, not of owning.

    Parameters
    ----------
    tokens : array (n, T)  tokens produced (the same under both) [tokens]
    own_cost_usd : array (n, T)  costs of owning: capex less the financing cash flow (debt
        drawn less fees, capped calls, interest and principal), plus the shares settling debt,
        operating costs, less residual value, after tax [USD]
    lease_cost_usd : array (n, T)  costs of leasing: rent and the costs the renter still bears,
        after tax [USD]
    discount_rate_monthly : array (n,)  [1/month]
    lease_cost_per_price_usd : array (n, T), optional  a_m = d(lease cost)/d(price): the lease
        cost per USD/GPU-hour of rental price, after tax, for the break-even price
        [USD per USD/GPU-hour]
    lease_other_cost_usd : array (n, T), optional  b_m: the lease's costs besides the rent (the
        operating costs the renter bears), after tax, for the break-even price [USD]
    own_debt_cost_usd : array (n, T), optional  the part of own_cost_usd that is the debt's:
        minus the financing cash flow, plus the shares settling debt, less the tax saved on
        interest expense [USD]
    debt_discount_rate_monthly : array (n,), optional  r_d, the rate of the debt-like flows
        (own_debt_cost_usd, own_fixed_cost_usd, the rent); default: none, all at
        discount_rate_monthly [1/month]
    own_fixed_cost_usd : array (n, T), optional  the owner's other flows fixed by contract or
        by tax law, part of own_cost_usd: capex less the tax saved by its tax depreciation
        [USD]; used with debt_discount_rate_monthly

    Returns
    -------
    dict of arrays (n,)
        ``pv_cost_own_usd``, ``pv_cost_lease_usd``, ``lease_advantage_usd`` [USD],
        ``cost_own_usd_per_mtok``, ``cost_lease_usd_per_mtok``: the after-tax cost per million
        tokens, PV of the cost given (after tax in `lease_vs_own_of_projection`) / PV(tokens),
        not the before-tax LCOT [USD/Mtok] (NaN without tokens),
        ``breakeven_usd_per_gpu_hour`` (NaN unless lease_cost_per_price_usd and
        lease_other_cost_usd are given), and with own_debt_cost_usd ``pv_debt_flows_usd``: its
        present value, part of pv_cost_own_usd (negative: borrowing lowers the cost of owning).

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 25.4-25.5 (value
    of a lease as the difference of present values; its debt-equivalent flows, the lease
    payments and the depreciation tax shields given up, discounted at the after-tax borrowing
    rate r_D (1 - T_c)); U.S. DOE/NREL, "Levelized cost of energy" (levelized cost = PV of
    costs / PV of output), applied to tokens.
    """
    tokens = np.asarray(tokens, dtype=float)
    n, T = tokens.shape

    def discounting(rate_monthly):
        rate = np.broadcast_to(np.asarray(rate_monthly, dtype=float), (n,))[:, None]
        factors = np.exp(-np.arange(T)[None, :] * np.log1p(rate))
        return lambda x: np.einsum("ij,ij->i", np.asarray(x, dtype=float), factors)

    pv = discounting(discount_rate_monthly)
    pv_tokens = pv(tokens)
    own_cost_usd = np.asarray(own_cost_usd, dtype=float)
    lease_cost_usd = np.asarray(lease_cost_usd, dtype=float)
    debt = 0.0 if own_debt_cost_usd is None else np.asarray(own_debt_cost_usd, dtype=float)
    if debt_discount_rate_monthly is None:
        pv_safe = pv
        pv_own, pv_lease = pv(own_cost_usd), pv(lease_cost_usd)
    else:
        pv_safe = discounting(debt_discount_rate_monthly)
        fixed = 0.0 if own_fixed_cost_usd is None else np.asarray(own_fixed_cost_usd, float)
        other = 0.0 if lease_other_cost_usd is None else np.asarray(lease_other_cost_usd, float)
        safe = np.broadcast_to(debt + fixed, own_cost_usd.shape)
        other = np.broadcast_to(other, lease_cost_usd.shape)
        pv_own = pv(own_cost_usd - safe) + pv_safe(safe)
        pv_lease = pv(other) + pv_safe(lease_cost_usd - other)
    extra = {}
    if own_debt_cost_usd is not None:
        extra["pv_debt_flows_usd"] = pv_safe(debt)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_mtok = np.where(pv_tokens > 0, TOKENS_PER_MTOK / pv_tokens, np.nan)
    breakeven = np.full(n, np.nan)
    if lease_cost_per_price_usd is not None and lease_other_cost_usd is not None:
        slope = pv_safe(lease_cost_per_price_usd)
        kept = pv(lease_other_cost_usd)
        with np.errstate(invalid="ignore", divide="ignore"):
            breakeven = np.where(slope > 0, (pv_own - kept) / slope, np.nan)
    return {
        "pv_cost_own_usd": pv_own,
        "pv_cost_lease_usd": pv_lease,
        "lease_advantage_usd": pv_own - pv_lease,
        "cost_own_usd_per_mtok": pv_own * per_mtok,
        "cost_lease_usd_per_mtok": pv_lease * per_mtok,
        "breakeven_usd_per_gpu_hour": breakeven,
        **extra,
    }


RENTER_COSTS = ("power", "facility", "opex")
"""Operating costs a renter may still bear (monthly lines `<name>_usd` of a projection; for opex
the renter's part, `renter_opex_usd`)."""

RENTER_OPEX = "staff, software per GPU and SG&A"
"""The opex a renter bears: the opex line less the costs tied to the owner's capex."""

TAX_TIMING = (
    "every deduction, the owner's and the renter's, saves tax at the tax rate in the month it "
    "arises: no loss carry-forward, no limit on the losses used (financing.tax_loss_limit), no "
    "payment schedule (financing.tax_payment), as lease-versus-buy analysis assumes; the tax of "
    "econ project (tax_usd) has them"
)
"""The tax simplification of lease versus own (`after_tax_cost_usd`), as the reports state it."""

OWNER_OPEX_SHARES = ("maintenance_share_of_capex_annual", "insurance_share_of_capex_annual")
"""Opex fields (`[opex]`) charged as shares of the owner's capex: maintenance and insurance of the
owner's hardware, the owner's costs, which the rent covers, not a renter's."""


def renter_opex_usd(scenario):
    """The opex a renter of the scenario's GPUs bears [USD], array (1, T): the scenario's opex
    line with the shares of capex (maintenance, insurance: OWNER_OPEX_SHARES) at 0, so staff,
    software per GPU and SG&A. Insuring and maintaining the hardware is the owner's, paid from
    the rent: charging the renter for it would raise the lease's cost with the owner's capex."""
    from econ import project

    opex = scenario.opex.model_copy(update=dict.fromkeys(OWNER_OPEX_SHARES, 0.0))
    return project(scenario.model_copy(update={"opex": opex})).lines["opex_usd"]


def lease_vs_own_of_projection(
    lines,
    price_usd_per_gpu_hour,
    term_months,
    upfront_share,
    tax_rate,
    discount_rate_annual,
    renter_pays=(),
    debt_discount_rate_annual=None,
    renter_opex_usd=None,
    settled_in_shares_usd=None,
):
    """Leasing the fleet of a projection against owning it as projected [dict of arrays (n,)].

    Owning costs capex less the projection's financing cash flow (`financing_cash_flow_usd`: debt
    drawn less fees, capped calls, cash interest and principal), plus the shares that settle
    convertible notes (`settled_in_shares_usd`), operating costs (power, facility, opex) and
    less the sale proceeds, after tax with the scenario's tax depreciation
    (`depreciation.tax`, not the book's), interest expense and operating costs deductible and the
    sale's gain over the tax basis taxed (a loss deducted). Leasing rents the GPUs the owner has
    in service each month (`gpus_in_service`: its deployment ramp, service start and retirement),
    in contracts from the first month of service (`rent_paid_usd`), plus the operating costs in
    `renter_pays` (for opex the renter's part, `renter_opex_usd`), all deductible: the operating
    costs when paid, the rent in the months it pays for (`rent_accrued_usd`), so prepaid rent is
    deducted over the months of its contract.
    Both are compared by `lease_vs_own` at the discount rate, compounded monthly. With
    `debt_discount_rate_annual` (the after-tax cost of debt, `after_tax_cost_of_debt_annual`, as
    lease-versus-buy analysis takes it), the flows fixed by contract or by tax law are discounted
    at it instead: the owner's debt flows (minus the financing cash flow plus the shares settling
    debt, less the tax saved on interest expense), its capex less the tax its tax depreciation
    saves, and the rent after tax (paid less the tax saved on the rent accrued); the operating
    costs of either, after tax, and the sale, less the tax on its gain, stay at the discount
    rate. Without it, all are at the discount rate, where debt cheaper than the discount rate
    after tax lowers the cost of owning by the spread's present value.

    The lines are one fleet's: a projection with vintages sums GPUs of several generations in
    `gpus_in_service`, which one rent per GPU-hour does not price.

    Parameters
    ----------
    lines : name -> array (n, T)  the projection's monthly lines (econ.engine.MONTHLY_COLUMNS)
    price_usd_per_gpu_hour : float  rent [USD/GPU-hour]
    term_months : int  contract term [months]
    upfront_share : float  share of each contract's rent paid the month before it starts, 0 to 1
        [fraction]
    tax_rate : array (n,)  [fraction]
    discount_rate_annual : array (n,)  [fraction/year]
    renter_pays : names from RENTER_COSTS
    debt_discount_rate_annual : array (n,), optional  rate discounting the flows fixed by
        contract or tax law (the debt's, capex and its tax depreciation's tax saving, the rent
        after tax); default: none, all at discount_rate_annual [fraction/year]
    renter_opex_usd : array (n, T)  the opex a renter bears (RENTER_OPEX): the projection's
        opex line less maintenance and insurance, shares of the owner's capex (OWNER_OPEX_SHARES)
        that the rent covers; the same scenario's opex line with those shares at 0 [USD];
        needed when renter_pays names opex
    settled_in_shares_usd : array (n, T), optional  what the shares settling convertible notes
        are worth when issued (`shares_settling_debt_usd` of the projection) [USD]; needed where
        notes convert: without it the face they repay in shares (physical settlement) and the
        conversion value above the face cost the owner nothing

    Returns
    -------
    the dict of `lease_vs_own`, with ``pv_debt_flows_usd``

    References
    ----------
    Brealey, Myers & Allen, *Principles of Corporate Finance*, 13th ed., ch. 25.4-25.5 (the
    lease's flows, its payments after tax and the depreciation tax shields given up, discounted
    at the after-tax borrowing rate, being as safe as debt); 26 U.S.C. §168 (MACRS, bonus
    depreciation) and §1245 (gain on the sale of depreciated equipment taxed as ordinary income
    up to the depreciation taken); Brealey, Myers & Allen, *Principles of Corporate Finance*,
    13th ed., ch. 25.5 (the owner's depreciation tax shield);
    Treas. Reg. §1.461-4(d)(3) (an accrual-method taxpayer's rent is incurred ratably as the
    property is used), §1.263(a)-4(f) (the 12-month rule does not reach rent prepaid for longer)
    and 26 U.S.C. §467 (rent accrues over the periods it covers).
    """
    renter_pays = tuple(renter_pays)
    unknown = [name for name in renter_pays if name not in RENTER_COSTS]
    repeated = [x for i, x in enumerate(renter_pays) if x in renter_pays[:i]]
    if unknown or repeated:
        what = f"unknown cost {unknown[0]!r}" if unknown else f"{repeated[0]!r} given twice"
        raise InputError(
            f"renter_pays: {what}; expected names from {', '.join(RENTER_COSTS)}, each once"
        )
    if "opex" in renter_pays and renter_opex_usd is None:
        raise ValueError(
            "renter_pays names opex: expected renter_opex_usd, the opex a renter bears "
            f"({RENTER_OPEX}; not the owner's maintenance and insurance, shares of its capex)"
        )
    refuse_outside("tax_rate", tax_rate, lambda x: (x >= 0) & (x < 1), "a rate from 0 to below 1")
    rates = {"discount_rate_annual": discount_rate_annual}
    if debt_discount_rate_annual is not None:
        rates["debt_discount_rate_annual"] = debt_discount_rate_annual
    for name, rate in rates.items():
        refuse_outside(
            name, rate, lambda x: np.isfinite(x) & (x > -1), "a finite rate above -1 [1/year]"
        )
    renter_lines = {**lines, "opex_usd": renter_opex_usd}
    tax_rate = np.asarray(tax_rate, dtype=float)
    operating = lines["power_usd"] + lines["facility_usd"] + lines["opex_usd"]
    # The debt's cash is the projection's own financing cash flow, the line the equity cash flow
    # adds: fees, capped calls and commitment fees included, deferred interest excluded.
    financing = financing_cash_flow_usd(
        lines["cash_flow_equity_usd"], lines["cash_flow_project_usd"]
    )
    # Notes repaid in shares: no cash, but the owner gives up the shares' value (the face and,
    # physical or net share settled, the conversion value above it), a flow of the debt's.
    settled = 0.0 if settled_in_shares_usd is None else np.asarray(settled_in_shares_usd, float)
    own = ownership_cost_usd(
        lines["capex_usd"], financing, operating, lines["disposal_usd"], settled
    )
    # The owner's tax follows the tax books, not the financial statements: tax depreciation (MACRS,
    # bonus) and, on the sale, the gain over the tax basis taxed (recapture) or the loss deducted.
    own_deductible = (
        lines["tax_depreciation_usd"]
        + lines["interest_usd"]
        + operating
        - lines["tax_gain_on_disposal_usd"]
    )
    own_after_tax = after_tax_cost_usd(own, own_deductible, tax_rate)
    debt_after_tax = after_tax_cost_usd(settled - financing, lines["interest_usd"], tax_rate)
    # Fixed when the GPUs are bought: their price and the tax saving of their tax depreciation.
    fixed_after_tax = after_tax_cost_usd(
        lines["capex_usd"], lines["tax_depreciation_usd"], tax_rate
    )

    gpus = np.asarray(lines["gpus_in_service"], dtype=float)
    first = first_service_month(gpus)

    def rent(price):
        return rent_paid_usd(gpus, price, term_months, upfront_share, first)

    # Rent is deducted for the months it pays for, prepaid rent as those months are served
    # (accrual method: economic performance as the property is used), not when it is paid.
    kept = sum((renter_lines[f"{c}_usd"] for c in renter_pays), np.zeros_like(own))
    price = price_usd_per_gpu_hour
    lease_after_tax = after_tax_cost_usd(
        rent(price) + kept, rent_accrued_usd(gpus, price) + kept, tax_rate
    )
    per_price = after_tax_cost_usd(rent(1.0), rent_accrued_usd(gpus, 1.0), tax_rate)
    return lease_vs_own(
        lines["tokens"],
        own_after_tax,
        lease_after_tax,
        monthly_rate(np.asarray(discount_rate_annual, dtype=float)),
        lease_cost_per_price_usd=per_price,
        lease_other_cost_usd=after_tax_cost_usd(kept, kept, tax_rate),
        own_debt_cost_usd=debt_after_tax,
        own_fixed_cost_usd=fixed_after_tax,
        debt_discount_rate_monthly=(
            None
            if debt_discount_rate_annual is None
            else monthly_rate(np.asarray(debt_discount_rate_annual, dtype=float))
        ),
    )


def _col(x):
    x = np.asarray(x, dtype=float)
    return x[:, None] if x.ndim == 1 else x


__all__ = [
    "OWNER_OPEX_SHARES",
    "RENTER_COSTS",
    "RENTER_OPEX",
    "TAX_TIMING",
    "after_tax_cost_of_debt_annual",
    "after_tax_cost_usd",
    "financing_cash_flow_usd",
    "first_service_month",
    "lease_payments_usd",
    "lease_vs_own",
    "lease_vs_own_of_projection",
    "ownership_cost_usd",
    "rent_accrued_usd",
    "rent_paid_usd",
    "renter_opex_usd",
    "shares_settling_debt_usd",
    "term_warning",
]
