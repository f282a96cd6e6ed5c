"""The batch projection: ScenarioBatch -> Projection, all scenarios at once.

Composition only: each line item comes from a domain module (capex, depreciation, power, market,
financing, tax, throughput); this module lines them up month by month as arrays shaped
(scenarios, months) and reduces them to summary metrics. There is no Python loop over scenarios.
Month 0 is the purchase month; month m runs to each scenario's horizon H, and columns after H are 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from econ import capex as capex_mod
from econ import tax
from econ.batch import ScenarioBatch
from econ.depreciation import straight_line_monthly
from econ.excel import irr_batch
from econ.financing import level_payment_schedule
from econ.market import price_path, revenue_usd_per_month
from econ.power import power_usd_per_month
from econ.scenario.models import Scenario
from econ.throughput import gain_multiplier
from econ.units import (
    KW_PER_MW,
    MONTHS_PER_YEAR,
    SECONDS_PER_MONTH,
    TOKENS_PER_MTOK,
    annual_rate,
    monthly_rate,
    nominal_monthly_rate,
)

MONTHLY_COLUMNS = (
    "gpus_in_service",
    "tokens",
    "revenue_usd",
    "power_usd",
    "facility_usd",
    "opex_usd",
    "capex_usd",
    "disposal_usd",
    "depreciation_usd",
    "interest_usd",
    "principal_usd",
    "tax_usd",
    "ebitda_usd",
    "net_income_usd",
    "cash_flow_project_usd",
    "cash_flow_equity_usd",
    "debt_balance_usd",
    "dscr",
)
"""Monthly line items (DESIGN.md §5); `scenario`, `month` and `date` index them."""

COMPONENTS = ("depreciation", "financing", "power", "facility", "opex")
"""Parts of the levelized cost per million tokens; they sum to lcot_usd_per_mtok."""

SUMMARY_COLUMNS = (
    "lcot_usd_per_mtok",
    "cost_usd_per_mtok_by_component",
    "tokens_total",
    "revenue_usd_total",
    "ebitda_usd_total",
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    "tokens_per_s_per_mw",
    "revenue_usd_per_mw_year",
    "gpu_count",
    "capex_usd_total",
    "discount_rate_annual",
    "horizon_months",
    "warnings",
)

MIN_EQUITY_SHARE_FOR_IRR = 0.05
"""Below this equity share of capex an equity IRR is reported as null: returns on almost no equity
are arithmetic, not information (the 10,000% IRR error of GPU-cloud models)."""


@dataclass
class Projection:
    """Result of a projection: monthly arrays (n, T+1) and summary arrays (n,).

    Attributes
    ----------
    names : array (n,)  scenario names
    months : int array (T+1,)  0..T
    start_dates : datetime64[M] (n,)
    horizon_months : int array (n,)
    lines : name -> array (n, T+1)  monthly line items (MONTHLY_COLUMNS)
    metrics : name -> array (n,)  scalar summary metrics (NaN where undefined, explained in warnings)
    components : name -> array (n,)  cost per million tokens by component
    warnings : list of lists of str, one list per scenario
    """

    names: np.ndarray
    months: np.ndarray
    start_dates: np.ndarray
    horizon_months: np.ndarray
    lines: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    components: dict[str, np.ndarray]
    warnings: list[list[str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.names)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per scenario, the DESIGN.md §5 summary metrics; undefined values are None."""
        frame = pd.DataFrame({"scenario": self.names})
        for name in SUMMARY_COLUMNS:
            if name == "cost_usd_per_mtok_by_component":
                frame[name] = self.component_dicts()
            elif name == "warnings":
                frame[name] = self.warnings
            else:
                values = self.metrics[name]
                frame[name] = pd.Series(values).astype(object).where(~np.isnan(values), None)
        return frame.set_index("scenario")

    def component_dicts(self) -> list[dict[str, float | None]]:
        rows = np.column_stack([self.components[c] for c in COMPONENTS])
        return [
            {c: (None if np.isnan(v) else float(v)) for c, v in zip(COMPONENTS, row, strict=True)}
            for row in rows
        ]

    @property
    def monthly(self) -> pd.DataFrame:
        """Monthly schedule indexed by (scenario, month), each scenario to its own horizon."""
        keep = self.months[None, :] <= self.horizon_months[:, None]
        rows, cols = np.nonzero(keep)
        dates = (self.start_dates[rows] + cols.astype("timedelta64[M]")).astype("datetime64[D]")
        data = {"scenario": self.names[rows], "month": self.months[cols], "date": dates}
        for name in MONTHLY_COLUMNS:
            data[name] = self.lines[name][rows, cols]
        return pd.DataFrame(data).set_index(["scenario", "month"])

    def summary_records(self) -> list[dict]:
        """JSON-ready summaries: [{name, summary: {...}}] with None for undefined metrics."""
        records = []
        for i, name in enumerate(self.names):
            summary = {}
            for key in SUMMARY_COLUMNS:
                if key == "cost_usd_per_mtok_by_component":
                    summary[key] = {c: _json_number(self.components[c][i]) for c in COMPONENTS}
                elif key == "warnings":
                    summary[key] = list(self.warnings[i])
                else:
                    summary[key] = _json_number(self.metrics[key][i])
            records.append({"name": str(name), "summary": summary})
        return records


def _json_number(value) -> float | int | None:
    value = float(value)
    if np.isnan(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def project(scenarios: Scenario | ScenarioBatch | Iterable[Scenario]) -> Projection:
    """Project scenarios month by month and summarize them.

    Accepts one Scenario, several, or a ScenarioBatch; one scenario is a batch of one.
    """
    batch = (
        scenarios
        if isinstance(scenarios, ScenarioBatch)
        else ScenarioBatch.from_scenarios(scenarios)
    )
    return _project(batch)


def _project(b: ScenarioBatch) -> Projection:
    n = b.n
    horizon = b.horizon_months
    T = int(horizon.max())
    months = np.arange(T + 1)
    m = months[None, :]
    active = m <= horizon[:, None]
    service = active & (m >= 1)
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731

    # Fleet in service and tokens produced.
    gpu_count = b["fleet.gpu_count"]
    deploy = col(b["fleet.deployment_ramp_months"])
    in_service_share = np.where(deploy > 0, np.minimum(1.0, m / np.maximum(deploy, 1)), 1.0)
    gpus = col(gpu_count) * in_service_share * service
    ramp = col(b["utilization.ramp_months"])
    utilization = col(b["utilization.share"]) * np.where(
        ramp > 0, np.minimum(1.0, m / np.maximum(ramp, 1)), 1.0
    )
    utilization = utilization * service
    tps = col(b["throughput.tokens_per_s_per_gpu"]) * gain_multiplier(
        b["throughput.gain_rate_annual"], b.step_months, b.step_gains, months
    )
    tokens = gpus * tps * utilization * SECONDS_PER_MONTH

    # Revenue.
    price_factor = price_path(b["market.price_decline_annual"], months)
    token_revenue, contract_revenue = revenue_usd_per_month(
        tokens,
        gpus,
        b["market.price_usd_per_mtok"],
        price_factor,
        b["market.contract_share"],
        b["market.contract_usd_per_gpu_hour"],
    )
    revenue = token_revenue + contract_revenue

    # Capital cost, paid in month 0.
    hardware = capex_mod.hardware_usd_per_gpu(
        b["capex.gpu_price_usd"], b["capex.system_price_usd"], b["capex.gpus_per_system"]
    )
    capex_per_gpu = capex_mod.capex_usd_per_gpu(
        hardware,
        b["capex.networking_usd_per_gpu"],
        b["capex.storage_usd_per_gpu"],
        b["capex.installation_usd_per_gpu"],
        b["capex.spares_share"],
    )
    capex_total = capex_per_gpu * gpu_count
    capex = np.where(m == 0, col(capex_total), 0.0)

    # Operating costs.
    kw_per_gpu = b["power.kw_per_gpu"]
    power = power_usd_per_month(
        gpus,
        kw_per_gpu,
        utilization,
        b["power.idle_power_share"],
        b["power.pue"],
        b["power.price_usd_per_kwh"],
        b["power.escalation_annual"],
        months,
    )
    colo = col(b["facility.colo_usd_per_kw_month"]) * np.power(
        1.0 + col(b["facility.escalation_annual"]), np.maximum(m - 1, 0) / MONTHS_PER_YEAR
    )
    facility = gpus * col(kw_per_gpu) * colo
    capex_share_monthly = (
        b["opex.maintenance_share_of_capex_annual"] + b["opex.insurance_share_of_capex_annual"]
    ) / MONTHS_PER_YEAR
    opex = col(
        b["opex.staff_usd_per_month"] + capex_share_monthly * capex_total
    ) * service + gpus * col(b["opex.software_usd_per_gpu_month"])
    ebitda = revenue - power - facility - opex

    # Depreciation, and disposal at book value when the projection ends.
    life_months = b["depreciation.life_years"] * MONTHS_PER_YEAR
    salvage = b["depreciation.salvage_share"] * capex_total
    depreciation = straight_line_monthly(capex_total, salvage, life_months, months) * active
    book_value_end = capex_total - depreciation.sum(axis=1)
    disposal = np.where(m == horizon[:, None], col(book_value_end), 0.0)

    # Term loan drawn at month 0, repaid by a balloon if the projection ends first.
    fin_rate = b["financing.debt_rate_annual"]
    loan_rate = np.where(
        b["financing.debt_rate_quote"] == 0, nominal_monthly_rate(fin_rate), monthly_rate(fin_rate)
    )
    debt = b["financing.debt_share"] * capex_total
    interest, scheduled_principal, balance, balloon = level_payment_schedule(
        debt, loan_rate, b["financing.debt_term_months"], months, last_month=horizon
    )
    principal = scheduled_principal + balloon

    # Tax on EBITDA less depreciation and interest, with losses carried forward.
    taxable = ebitda - depreciation - interest
    income_tax = tax.income_tax_with_loss_carryforward(taxable, b["financing.tax_rate"], horizon)
    net_income = taxable - income_tax

    cash_flow_project = ebitda - capex + disposal - income_tax
    draws = np.where(m == 0, col(debt), 0.0)
    cash_flow_equity = cash_flow_project + draws - interest - principal
    scheduled_service = interest + scheduled_principal
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Below a millionth of a dollar there is no debt service to cover.
        dscr = np.where(scheduled_service > 1e-6, (ebitda - income_tax) / scheduled_service, np.nan)

    # Discounting at the cost of capital, monthly compounding of the annual rate.
    discount_annual = b["financing.discount_rate_annual"]
    discount = np.power(1.0 + col(monthly_rate(discount_annual)), -m) * active
    pv = lambda x: np.einsum("ij,ij->i", x, discount)  # noqa: E731

    pv_tokens = pv(tokens)
    pv_depreciation = pv(depreciation)
    pv_disposal = pv(disposal)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_mtok = TOKENS_PER_MTOK / np.where(pv_tokens > 0, pv_tokens, np.nan)
    components = {
        "depreciation": pv_depreciation * per_mtok,
        "financing": (capex_total - pv_disposal - pv_depreciation) * per_mtok,
        "power": pv(power) * per_mtok,
        "facility": pv(facility) * per_mtok,
        "opex": pv(opex) * per_mtok,
    }
    lcot = sum(components.values())

    npv = pv(cash_flow_project)
    irr_project = annual_rate(irr_batch(cash_flow_project))
    equity_share = 1.0 - b["financing.debt_share"]
    irr_equity = annual_rate(irr_batch(cash_flow_equity))
    equity_too_thin = equity_share < MIN_EQUITY_SHARE_FOR_IRR
    irr_equity = np.where(equity_too_thin, np.nan, irr_equity)

    payback = _payback_months(cash_flow_project, active)
    min_dscr = np.nanmin(np.where(np.isnan(dscr), np.inf, dscr), axis=1)
    min_dscr = np.where(np.isinf(min_dscr), np.nan, min_dscr)

    spot_units = (1.0 - col(b["market.contract_share"])) * tokens * price_factor / TOKENS_PER_MTOK
    breakeven = _breakeven_price(
        fixed=ebitda - token_revenue,
        spot_units=spot_units,
        deductions=depreciation + interest,
        tax_rate=b["financing.tax_rate"],
        last_month=horizon,
        capital=disposal - capex,
        discount=discount,
    )

    it_mw = gpu_count * kw_per_gpu / KW_PER_MW
    years = horizon / MONTHS_PER_YEAR
    metrics = {
        "lcot_usd_per_mtok": lcot,
        "tokens_total": tokens.sum(axis=1),
        "revenue_usd_total": revenue.sum(axis=1),
        "ebitda_usd_total": ebitda.sum(axis=1),
        "npv_usd": npv,
        "irr_project_annual": irr_project,
        "irr_equity_annual": irr_equity,
        "payback_months": payback,
        "breakeven_price_usd_per_mtok": breakeven,
        "min_dscr": min_dscr,
        "tokens_per_s_per_mw": b["throughput.tokens_per_s_per_gpu"] * KW_PER_MW / kw_per_gpu,
        "revenue_usd_per_mw_year": revenue.sum(axis=1) / it_mw / years,
        "gpu_count": gpu_count,
        "capex_usd_total": capex_total,
        "discount_rate_annual": discount_annual,
        "horizon_months": horizon.astype(float),
    }
    lines = {
        "gpus_in_service": gpus,
        "tokens": tokens,
        "revenue_usd": revenue,
        "power_usd": power,
        "facility_usd": facility,
        "opex_usd": opex,
        "capex_usd": capex,
        "disposal_usd": disposal,
        "depreciation_usd": depreciation,
        "interest_usd": interest,
        "principal_usd": principal,
        "tax_usd": income_tax,
        "ebitda_usd": ebitda,
        "net_income_usd": net_income,
        "cash_flow_project_usd": cash_flow_project,
        "cash_flow_equity_usd": cash_flow_equity,
        "debt_balance_usd": balance,
        "dscr": dscr,
    }
    flags = {
        "no_tokens": ~(pv_tokens > 0),
        "no_irr_project": np.isnan(irr_project),
        "thin_equity": equity_too_thin,
        "no_irr_equity": np.isnan(irr_equity) & ~equity_too_thin,
        "no_payback": np.isnan(payback),
        "no_breakeven": np.isnan(breakeven),
        "no_debt": debt <= 0,
        "dscr_below_1": min_dscr < 1.0,
        "horizon_before_life": horizon < np.ceil(life_months - 1e-9),
        "balloon": balloon.sum(axis=1) > 0.005,
        "irr_project_not_unique": ~np.isnan(irr_project) & (_sign_changes(cash_flow_project) > 1),
        "irr_equity_not_unique": ~np.isnan(irr_equity) & (_sign_changes(cash_flow_equity) > 1),
    }
    context = {
        "equity_share": equity_share,
        "life_months": life_months,
        "horizon": horizon,
        "book_value_end": book_value_end,
        "balloon": balloon.sum(axis=1),
        "min_dscr": min_dscr,
        "months_below_1": (dscr < 1.0).sum(axis=1),
    }
    return Projection(
        names=b.names,
        months=months,
        start_dates=b.start_dates,
        horizon_months=horizon,
        lines=lines,
        metrics=metrics,
        components=components,
        warnings=_warnings(flags, context, n),
    )


def _sign_changes(cash_flow):
    """How often each row's cash flow changes sign, zeros skipped [count (n,)].

    More than one change means the IRR need not be unique (Descartes' rule of signs).
    """
    sign = np.sign(cash_flow)
    columns = np.arange(sign.shape[1])[None, :]
    last_nonzero = np.maximum.accumulate(np.where(sign != 0, columns, 0), axis=1)
    filled = np.take_along_axis(sign, last_nonzero, axis=1)
    return (filled[:, 1:] * filled[:, :-1] < 0).sum(axis=1)


def _payback_months(cash_flow, active):
    """Months until cumulative project cash flow turns non-negative, interpolated within the month.

    NaN when it never does within the horizon.
    """
    cumulative = np.cumsum(np.where(active, cash_flow, 0.0), axis=1)
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


def _breakeven_price(fixed, spot_units, deductions, tax_rate, last_month, capital, discount):
    """Month-1 token price (following the price path) at which project NPV after tax is zero.

    Tax depends only on each year's taxable income, which is linear in the price p:
    A_k + p * B_k. So NPV(p) = base + p * a - sum_k w_k * tax_k(A + p B), with w_k the average
    discount factor of year k's (evenly paid) months. NPV is continuous, piecewise linear and
    increasing in p; the root is bracketed from the pre-tax break-even (where NPV after tax <= 0)
    and refined by the Illinois variant of regula falsi, exact on each linear piece, on (n, years)
    arrays. NaN where token sales do not move the NPV (fully contracted, or no tokens).
    """
    n, months = fixed.shape
    years = tax.tax_years(months)
    pv = lambda x: np.einsum("ij,ij->i", x, discount)  # noqa: E731
    a = pv(spot_units)  # NPV gain per USD/Mtok, before tax
    base = pv(fixed + capital)
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


def _warnings(flags, ctx, n) -> list[list[str]]:
    """Per-scenario warnings from flag arrays; only flagged rows are formatted."""
    out: list[list[str]] = [[] for _ in range(n)]
    messages = {
        "no_tokens": lambda i: (
            "no tokens are produced (utilization or throughput is 0): "
            "lcot_usd_per_mtok and its components are null"
        ),
        "no_irr_project": lambda i: (
            "project cash flows have no internal rate of return "
            "(no sign change or no root): irr_project_annual is null"
        ),
        "thin_equity": lambda i: (
            f"equity is {ctx['equity_share'][i]:.1%} of capex, below "
            f"{MIN_EQUITY_SHARE_FOR_IRR:.0%}: irr_equity_annual is null rather than a meaningless figure"
        ),
        "no_irr_equity": lambda i: (
            "equity cash flows have no internal rate of return: irr_equity_annual is null"
        ),
        "no_payback": lambda i: (
            "cumulative project cash flow never turns positive within the "
            "horizon: payback_months is null"
        ),
        "no_breakeven": lambda i: (
            "token price does not affect NPV (fully contracted or no tokens): "
            "breakeven_price_usd_per_mtok is null"
        ),
        "no_debt": lambda i: "no debt: min_dscr is null",
        "irr_project_not_unique": lambda i: (
            "project cash flows change sign more than once: "
            "irr_project_annual is one of several rates that zero the NPV; judge by NPV"
        ),
        "irr_equity_not_unique": lambda i: (
            "equity cash flows change sign more than once: "
            "irr_equity_annual is one of several rates that zero the NPV; judge by NPV"
        ),
        "dscr_below_1": lambda i: (
            f"debt service not covered in {ctx['months_below_1'][i]} months "
            f"(min DSCR {ctx['min_dscr'][i]:.2f})"
        ),
        "horizon_before_life": lambda i: (
            f"horizon of {ctx['horizon'][i]} months ends before the "
            f"useful life of {ctx['life_months'][i]:g} months: the remaining book value "
            f"{ctx['book_value_end'][i]:,.0f} USD is assumed sold at book value in the last month"
        ),
        "balloon": lambda i: (
            f"the loan outlives the horizon: {ctx['balloon'][i]:,.0f} USD is repaid "
            "as a balloon in the last month"
        ),
    }
    for key, message in messages.items():
        for i in np.flatnonzero(flags[key]):
            out[i].append(message(i))
    return out


__all__ = [
    "COMPONENTS",
    "MONTHLY_COLUMNS",
    "SUMMARY_COLUMNS",
    "Projection",
    "ScenarioBatch",
    "project",
]
