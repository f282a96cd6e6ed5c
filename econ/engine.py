"""The batch projection: ScenarioBatch -> Projection, all scenarios at once.

Composition only: each line item comes from a domain module (capex, depreciation, power, market,
financing, tax, throughput); this module lines them up month by month as arrays shaped
(scenarios, months) and reduces them to summary metrics. There is no Python loop over scenarios.
Month 0 is the purchase month; month m runs to each scenario's horizon H, and columns after H are 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from econ import capex as capex_mod
from econ import density, tax
from econ import facility as facility_mod
from econ import power as power_mod
from econ.batch import ScenarioBatch
from econ.depreciation import straight_line_monthly
from econ.excel import irr_batch
from econ.financing import level_payment_schedule
from econ.market import price_path, revenue_usd_per_month
from econ.scenario.models import Scenario
from econ.throughput import gain_multiplier
from econ.units import (
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

DENSITY_COLUMNS = (
    "tokens_per_s_per_mw",
    "revenue_usd_per_mw_year",
    "tokens_per_s_per_mw_it",
    "tokens_per_s_per_mw_utility",
    "revenue_usd_per_mw_year_utility",
    "revenue_usd_per_rack_year",
    "revenue_usd_per_m2_year",
    "joules_per_token_it",
    "joules_per_token_utility",
    "power_cost_usd_per_mtok",
)
"""Power-density summary metrics (econ.density); DESIGN.md §5 names the first two."""

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
    "tokens_per_s_per_mw_it",
    "tokens_per_s_per_mw_utility",
    "revenue_usd_per_mw_year_utility",
    "revenue_usd_per_rack_year",
    "revenue_usd_per_m2_year",
    "joules_per_token_it",
    "joules_per_token_utility",
    "power_cost_usd_per_mtok",
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
    vintages : per-vintage figures (scenario, vintage) of scenarios that have vintages, else None
    """

    names: np.ndarray
    months: np.ndarray
    start_dates: np.ndarray
    horizon_months: np.ndarray
    lines: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    components: dict[str, np.ndarray]
    vintages: pd.DataFrame | None = None
    warning_source: Callable[[], list[list[str]]] | None = field(default=None, repr=False)

    @cached_property
    def warnings(self) -> list[list[str]]:
        """Per-scenario warnings, formatted on first use (batch runs that keep only metrics skip it)."""
        return self.warning_source() if self.warning_source else [[] for _ in self.names]

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


CHUNK_SCENARIOS = 8192
"""Scenarios projected at once: the (scenarios x months) arrays of a chunk stay in cache, which
makes a large batch about four times faster than one pass (benchmarks/bench_engine.py)."""


def project(scenarios: Scenario | ScenarioBatch | Iterable[Scenario]) -> Projection:
    """Project scenarios month by month and summarize them.

    Accepts one Scenario, several, or a ScenarioBatch; one scenario is a batch of one. Large
    batches are projected in chunks of CHUNK_SCENARIOS and joined.
    """
    batch = (
        scenarios
        if isinstance(scenarios, ScenarioBatch)
        else ScenarioBatch.from_scenarios(scenarios)
    )
    if batch.n <= CHUNK_SCENARIOS:
        return _project(batch)
    parts = [
        _project(batch.slice(start, min(start + CHUNK_SCENARIOS, batch.n)))
        for start in range(0, batch.n, CHUNK_SCENARIOS)
    ]
    return _join(parts)


def _join(parts: list[Projection]) -> Projection:
    """One Projection of consecutive chunks (monthly arrays padded to the longest horizon)."""
    months = max((p.months for p in parts), key=len)

    def pad(array, fill=0.0):
        return np.pad(array, ((0, 0), (0, len(months) - array.shape[1])), constant_values=fill)

    vintages = [p.vintages for p in parts if p.vintages is not None]
    return Projection(
        names=np.concatenate([p.names for p in parts]),
        months=months,
        start_dates=np.concatenate([p.start_dates for p in parts]),
        horizon_months=np.concatenate([p.horizon_months for p in parts]),
        lines={
            k: np.concatenate([pad(p.lines[k], np.nan if k == "dscr" else 0.0) for p in parts])
            for k in parts[0].lines
        },
        metrics={k: np.concatenate([p.metrics[k] for p in parts]) for k in parts[0].metrics},
        components={
            k: np.concatenate([p.components[k] for p in parts]) for k in parts[0].components
        },
        vintages=pd.concat(vintages) if vintages else None,
        warning_source=lambda: [w for p in parts for w in p.warnings],
    )


def _project(b: ScenarioBatch) -> Projection:
    horizon = b.horizon_months
    T = int(horizon.max())
    months = np.arange(T + 1)
    m = months[None, :]
    col = lambda a: np.asarray(a, dtype=float)[:, None]  # noqa: E731

    # Stage 1: each row (a scenario's fleet or one of its vintages) from purchase to retirement.
    sc = b.row_scenario
    row_horizon = horizon[sc]
    purchase = b["fleet.purchase_month"].astype(np.int64)
    retire_given = b["fleet.retire_month"]
    retire = np.where(np.isnan(retire_given), row_horizon, retire_given).astype(np.int64)
    since = m - purchase[:, None]  # months since purchase
    service = (since >= 1) & (m <= retire[:, None])

    racks = b["fleet.racks"]
    gpu_count = np.where(np.isnan(racks), b["fleet.gpu_count"], racks * b["fleet.gpus_per_rack"])
    deploy = col(b["fleet.deployment_ramp_months"])
    gpus = col(gpu_count) * _ramp(since, deploy) * service
    utilization = col(b["utilization.share"]) * _ramp(since, col(b["utilization.ramp_months"]))
    utilization = utilization * service
    tps = col(b["throughput.tokens_per_s_per_gpu"])
    if b.step_gains.any() or b["throughput.gain_rate_annual"].any():
        tps = tps * gain_multiplier(
            b["throughput.gain_rate_annual"], b.step_months, b.step_gains, months
        )
    tokens = gpus * tps * utilization * SECONDS_PER_MONTH

    price_factor = price_path(b["market.price_decline_annual"], months)
    token_revenue, contract_revenue = revenue_usd_per_month(
        tokens,
        gpus,
        b["market.price_usd_per_mtok"],
        price_factor,
        b["market.contract_share"],
        b["market.contract_usd_per_gpu_hour"],
    )

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
    capex_row = capex_per_gpu * gpu_count
    capex = np.where(since == 0, col(capex_row), 0.0)

    # Power: the nameplate figure on the IT boundary, or measured energy per token where given.
    nameplate_kw = power_mod.it_kw_per_gpu(
        b["power.kw_per_gpu"],
        b["power.kw_per_gpu_definition"],
        b["power.host_overhead_share"],
        b["power.pue"],
    )
    measured_tps = b["power.measured_tokens_per_s_per_gpu"]
    kw_per_gpu, measured_energy = power_mod.serving_kw_per_gpu(
        nameplate_kw,
        b["power.measured_joules_per_token"],
        np.where(np.isnan(measured_tps), b["throughput.tokens_per_s_per_gpu"], measured_tps),
        b["power.measured_boundary"],
        b["power.host_overhead_share"],
        b["power.pue"],
    )
    it_drawn_kw = power_mod.it_power_kw(gpus, kw_per_gpu, utilization, b["power.idle_power_share"])
    power = power_mod.power_cost_usd_per_month(
        it_drawn_kw,
        b["power.pue"],
        power_mod.price_usd_per_kwh_path(
            b["power.price_usd_per_kwh"],
            b["power.escalation_annual"],
            months,
            b["power.time_of_day_factor"],
        ),
    )
    capex_share_monthly = (
        b["opex.maintenance_share_of_capex_annual"] + b["opex.insurance_share_of_capex_annual"]
    ) / MONTHS_PER_YEAR
    # Staff run the site for the whole horizon, so they are charged once, on a scenario's first row.
    first_row = np.r_[True, sc[1:] != sc[:-1]]
    site_open = (m >= 1) & (m <= row_horizon[:, None]) & first_row[:, None]
    opex = (
        col(b["opex.staff_usd_per_month"]) * site_open
        + col(capex_share_monthly * capex_row) * service
        + gpus * col(b["opex.software_usd_per_gpu_month"])
    )

    # Depreciation from the month after purchase; sale at book value when the row retires.
    life_months = b["depreciation.life_years"] * MONTHS_PER_YEAR
    salvage = b["depreciation.salvage_share"] * capex_row
    held = retire - purchase
    depreciation = _delay(straight_line_monthly(capex_row, salvage, life_months, months), purchase)
    depreciation = depreciation * (m <= retire[:, None])
    book_value_end = capex_row - depreciation.sum(axis=1)
    disposal = np.where(m == retire[:, None], col(book_value_end), 0.0)

    # A term loan per row, drawn at purchase, repaid by a balloon if the row retires first.
    fin_rate = b["financing.debt_rate_annual"]
    loan_rate = np.where(
        b["financing.debt_rate_quote"] == 0, nominal_monthly_rate(fin_rate), monthly_rate(fin_rate)
    )
    debt_row = b["financing.debt_share"] * capex_row
    interest, scheduled_principal, balance, balloon = (
        _delay(x, purchase)
        for x in level_payment_schedule(
            debt_row, loan_rate, b["financing.debt_term_months"], months, last_month=held
        )
    )
    draws = np.where(since == 0, col(debt_row), 0.0)

    rows = {
        "gpus_in_service": gpus,
        "tokens": tokens,
        "token_revenue_usd": token_revenue,
        "contract_revenue_usd": contract_revenue,
        "power_usd": power,
        "opex_usd": opex,
        "capex_usd": capex,
        "disposal_usd": disposal,
        "depreciation_usd": depreciation,
        "interest_usd": interest,
        "scheduled_principal_usd": scheduled_principal,
        "balloon_usd": balloon,
        "debt_balance_usd": balance,
        "draws_usd": draws,
        "spot_units": (1.0 - col(b["market.contract_share"]))
        * tokens
        * price_factor
        / TOKENS_PER_MTOK,
        "it_kw": gpus * col(kw_per_gpu),
        "it_drawn_kw": it_drawn_kw,
        "it_energy_kwh": power_mod.energy_kwh_per_month(it_drawn_kw),
        "racks_in_service": density.racks_in_service(gpus, b["fleet.gpus_per_rack"]),
    }

    # Stage 2: a scenario is the sum of its rows.
    if b.one_row_per_scenario:
        lines = rows
        first = np.arange(b.n)
    else:
        first = np.flatnonzero(first_row)
        lines = {k: np.add.reduceat(v, first, axis=0) for k, v in rows.items()}
    total = lambda x: np.add.reduceat(x, first) if len(first) != len(x) else x  # noqa: E731
    at_first = lambda x: np.asarray(x)[first]  # noqa: E731

    # Stage 3: the site (facility), financing, tax, cash flows and summary per scenario.
    active = m <= horizon[:, None]
    site = facility_mod.facility_costs(
        mode=at_first(b["facility.mode"]),
        months=months,
        horizon_months=horizon,
        nameplate_it_kw=lines["it_kw"],
        drawn_it_kw=lines["it_drawn_kw"],
        racks=lines["racks_in_service"].max(axis=1),
        **{
            name: at_first(b[f"facility.{name}"])
            for name in (
                "colo_usd_per_kw_month",
                "escalation_annual",
                "contracted_kw",
                "overage_multiplier",
                "critical_kw",
                "capex_usd_per_mw",
                "life_years",
                "maintenance_share_of_capex_annual",
                "rack_cooling",
                "hall_cooling",
                "liquid_retrofit_usd_per_rack",
                "retrofit_life_years",
            )
        },
    )
    facility = site.facility_usd
    revenue = lines["token_revenue_usd"] + lines["contract_revenue_usd"]
    ebitda = revenue - lines["power_usd"] - facility - lines["opex_usd"]
    depreciation = lines["depreciation_usd"] + site.depreciation_usd
    interest = lines["interest_usd"]
    scheduled_principal = lines["scheduled_principal_usd"]
    principal = scheduled_principal + lines["balloon_usd"]
    tax_rate = at_first(b["financing.tax_rate"])
    taxable = ebitda - depreciation - interest
    income_tax = tax.income_tax_with_loss_carryforward(taxable, tax_rate, horizon)
    net_income = taxable - income_tax

    capex = lines["capex_usd"] + site.capex_usd
    disposal = lines["disposal_usd"] + np.where(
        m == horizon[:, None], col(site.book_value_end_usd), 0.0
    )
    cash_flow_project = ebitda - capex + disposal - income_tax
    cash_flow_equity = cash_flow_project + lines["draws_usd"] - interest - principal
    scheduled_service = interest + scheduled_principal
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Below a millionth of a dollar there is no debt service to cover.
        dscr = np.where(scheduled_service > 1e-6, (ebitda - income_tax) / scheduled_service, np.nan)

    # Discounting at the cost of capital, monthly compounding of the annual rate.
    discount_annual = at_first(b["financing.discount_rate_annual"])
    discount = np.power(1.0 + col(monthly_rate(discount_annual)), -m) * active
    pv = lambda x: np.einsum("ij,ij->i", x, discount)  # noqa: E731

    capex_total = total(capex_row) + site.capex_usd.sum(axis=1)
    pv_tokens = pv(lines["tokens"])
    pv_depreciation = pv(depreciation)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_mtok = TOKENS_PER_MTOK / np.where(pv_tokens > 0, pv_tokens, np.nan)
    components = {
        "depreciation": pv_depreciation * per_mtok,
        "financing": (pv(capex) - pv(disposal) - pv_depreciation) * per_mtok,
        "power": pv(lines["power_usd"]) * per_mtok,
        "facility": pv(facility) * per_mtok,
        "opex": pv(lines["opex_usd"]) * per_mtok,
    }
    lcot = sum(components.values())

    npv = pv(cash_flow_project)
    irr_project = annual_rate(irr_batch(cash_flow_project))
    debt_total = total(debt_row)
    equity_share = 1.0 - debt_total / capex_total
    irr_equity = annual_rate(irr_batch(cash_flow_equity))
    equity_too_thin = equity_share < MIN_EQUITY_SHARE_FOR_IRR
    irr_equity = np.where(equity_too_thin, np.nan, irr_equity)

    payback = _payback_months(cash_flow_project, active)
    min_dscr = np.nanmin(np.where(np.isnan(dscr), np.inf, dscr), axis=1)
    min_dscr = np.where(np.isinf(min_dscr), np.nan, min_dscr)

    breakeven = _breakeven_price(
        fixed=ebitda - lines["token_revenue_usd"],
        spot_units=lines["spot_units"],
        deductions=depreciation + interest,
        tax_rate=tax_rate,
        last_month=horizon,
        capital=disposal - capex,
        discount=discount,
    )

    rated_tokens_per_s = total(gpu_count * b["throughput.tokens_per_s_per_gpu"])
    installed_kw = total(gpu_count * kw_per_gpu)
    revenue_total = revenue.sum(axis=1)
    densities = density.density_metrics(
        tokens=lines["tokens"],
        revenue_usd=revenue,
        power_usd=lines["power_usd"],
        it_energy_kwh=lines["it_energy_kwh"],
        it_kw_in_service=lines["it_kw"],
        racks_in_service=lines["racks_in_service"],
        m2_per_rack=at_first(b["facility.m2_per_rack"]),
        pue=at_first(b["power.pue"]),
        rated_tokens_per_s=rated_tokens_per_s,
        installed_it_kw=installed_kw,
    )
    metrics = {
        "lcot_usd_per_mtok": lcot,
        "tokens_total": lines["tokens"].sum(axis=1),
        "revenue_usd_total": revenue_total,
        "ebitda_usd_total": ebitda.sum(axis=1),
        "npv_usd": npv,
        "irr_project_annual": irr_project,
        "irr_equity_annual": irr_equity,
        "payback_months": payback,
        "breakeven_price_usd_per_mtok": breakeven,
        "min_dscr": min_dscr,
        **{name: densities[name] for name in DENSITY_COLUMNS},
        "gpu_count": total(gpu_count),
        "capex_usd_total": capex_total,
        "discount_rate_annual": discount_annual,
        "horizon_months": horizon.astype(float),
    }
    monthly_lines = {
        "gpus_in_service": lines["gpus_in_service"],
        "tokens": lines["tokens"],
        "revenue_usd": revenue,
        "power_usd": lines["power_usd"],
        "facility_usd": facility,
        "opex_usd": lines["opex_usd"],
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
        "debt_balance_usd": lines["debt_balance_usd"],
        "dscr": dscr,
    }
    flags = {
        "no_tokens": ~(pv_tokens > 0),
        "no_irr_project": np.isnan(irr_project),
        "thin_equity": equity_too_thin,
        "no_irr_equity": np.isnan(irr_equity) & ~equity_too_thin,
        "no_payback": np.isnan(payback),
        "no_breakeven": np.isnan(breakeven),
        "no_debt": debt_total <= 0,
        "dscr_below_1": min_dscr < 1.0,
        "irr_project_not_unique": ~np.isnan(irr_project) & _several_sign_changes(cash_flow_project),
        "irr_equity_not_unique": ~np.isnan(irr_equity) & _several_sign_changes(cash_flow_equity),
    }
    contracted_kw, peak_it_kw = at_first(b["facility.contracted_kw"]), lines["it_kw"].max(axis=1)
    flags["over_contract"] = ~np.isnan(contracted_kw) & (peak_it_kw > contracted_kw + 1e-9)
    row_flags = {
        "sold_before_life": held < np.ceil(life_months - 1e-9),
        "balloon": balloon.sum(axis=1) > 0.005,
        "measured_energy": measured_energy,
    }
    context = {
        "equity_share": equity_share,
        "min_dscr": min_dscr,
        "months_below_1": (dscr < 1.0).sum(axis=1),
        "life_months": life_months,
        "retire": retire,
        "book_value_end": book_value_end,
        "balloon": balloon.sum(axis=1),
        "contracted_kw": contracted_kw,
        "peak_it_kw": peak_it_kw,
        "kw_per_gpu": kw_per_gpu,
        "nameplate_kw": nameplate_kw,
        "joules_per_token": b["power.measured_joules_per_token"],
    }

    def warnings() -> list[list[str]]:
        out = _warnings(flags, context, b.n)
        prefix = (lambda r: "") if b.one_row_per_scenario else (lambda r: f"[{b.row_names[r]}] ")
        for key, rows_flagged in row_flags.items():
            for r in np.flatnonzero(rows_flagged):
                out[sc[r]].append(prefix(r) + ROW_MESSAGES[key](context, r))
        return out

    vintage_table = None
    if not b.one_row_per_scenario:
        # The site's costs are shared among vintages by their IT load in service each month.
        with np.errstate(divide="ignore", invalid="ignore"):
            load_share = np.nan_to_num(rows["it_kw"] / lines["it_kw"][sc])
        rows["facility_usd"] = facility[sc] * load_share
        vintage_table = _vintage_table(b, rows, gpu_count, retire, discount[sc])
    return Projection(
        names=b.names,
        months=months,
        start_dates=b.start_dates,
        horizon_months=horizon,
        lines=monthly_lines,
        metrics=metrics,
        components=components,
        vintages=vintage_table,
        warning_source=warnings,
    )


ROW_MESSAGES = {
    "measured_energy": lambda c, r: (
        f"power from measured energy, "
        f"{c['joules_per_token'][r]:g} J/token = {c['kw_per_gpu'][r]:.3f} kW per GPU while serving, "
        f"instead of the nameplate {c['nameplate_kw'][r]:.3f} kW"
    ),
    "sold_before_life": lambda c, r: (
        f"sold in month {c['retire'][r]}, before the end of its "
        f"useful life of {c['life_months'][r]:g} months: the remaining book value "
        f"{c['book_value_end'][r]:,.0f} USD is assumed sold at book value"
    ),
    "balloon": lambda c, r: (
        f"the loan outlives the GPUs: {c['balloon'][r]:,.0f} USD is repaid "
        f"as a balloon in month {c['retire'][r]}"
    ),
}


def _ramp(since, ramp_months):
    """Linear ramp from 0 to 1 over `ramp_months` after purchase; 1 when there is no ramp."""
    if not np.any(ramp_months):
        return 1.0
    return np.where(ramp_months > 0, np.minimum(1.0, since / np.maximum(ramp_months, 1)), 1.0)


def _delay(values, start_month):
    """Shift each row right by its start month: out[:, m] = values[:, m - start], 0 before."""
    if not np.any(start_month):
        return values
    source = np.arange(values.shape[1])[None, :] - np.asarray(start_month)[:, None]
    shifted = np.take_along_axis(values, np.maximum(source, 0), axis=1)
    return np.where(source >= 0, shifted, 0.0)


def _vintage_table(b: ScenarioBatch, rows: dict, gpu_count, retire, discount) -> pd.DataFrame:
    """Per-vintage operating figures of scenarios with vintages (pre-tax, pre-financing).

    Facility costs are shared by IT load; staff are charged to the first row; site capex
    (an owned hall, a retrofit) stays with the fleet and is not in these figures.
    """
    pv = lambda x: np.einsum("ij,ij->i", x, discount)  # noqa: E731
    revenue = rows["token_revenue_usd"] + rows["contract_revenue_usd"]
    costs = rows["power_usd"] + rows["facility_usd"] + rows["opex_usd"]
    pv_tokens = pv(rows["tokens"])
    with np.errstate(divide="ignore", invalid="ignore"):
        lcot = (
            pv(rows["capex_usd"] - rows["disposal_usd"] + costs)
            / np.where(pv_tokens > 0, pv_tokens, np.nan)
            * TOKENS_PER_MTOK
        )
    return pd.DataFrame(
        {
            "scenario": b.names[b.row_scenario],
            "vintage": b.row_names,
            "purchase_month": b["fleet.purchase_month"].astype(int),
            "retire_month": retire,
            "gpu_count": gpu_count.astype(int),
            "capex_usd": rows["capex_usd"].sum(axis=1),
            "tokens": rows["tokens"].sum(axis=1),
            "revenue_usd": revenue.sum(axis=1),
            "ebitda_usd": (revenue - costs).sum(axis=1),
            "npv_pre_tax_usd": pv(revenue - costs - rows["capex_usd"] + rows["disposal_usd"]),
            "lcot_usd_per_mtok": lcot,
        }
    ).set_index(["scenario", "vintage"])


def _several_sign_changes(cash_flow):
    """True where a row's cash flow changes sign more than once, zeros skipped [bool (n,)].

    Then the IRR need not be unique (Descartes' rule of signs). A row changes sign at most once
    exactly when all its negative flows come before all its positive ones, or the reverse.
    """
    positive, negative = cash_flow > 0, cash_flow < 0
    last = cash_flow.shape[1] - 1
    first_positive, first_negative = positive.argmax(axis=1), negative.argmax(axis=1)
    last_positive = last - positive[:, ::-1].argmax(axis=1)
    last_negative = last - negative[:, ::-1].argmax(axis=1)
    both = positive.any(axis=1) & negative.any(axis=1)
    once = (last_negative < first_positive) | (last_positive < first_negative)
    return both & ~once


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
        "over_contract": lambda i: (
            f"peak IT load of {ctx['peak_it_kw'][i]:,.0f} kW exceeds the contracted "
            f"{ctx['contracted_kw'][i]:,.0f} kW: the excess is billed at the overage rate"
        ),
        "dscr_below_1": lambda i: (
            f"debt service not covered in {ctx['months_below_1'][i]} months "
            f"(min DSCR {ctx['min_dscr'][i]:.2f})"
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
