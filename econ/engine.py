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
from econ import capital as capital_mod
from econ import deferred_tax as deferred_tax_mod
from econ import density, market, tax
from econ import depreciation as dep
from econ import facility as facility_mod
from econ import impairment as impairment_mod
from econ import power as power_mod
from econ.arrays import cumsum_months
from econ.batch import ScenarioBatch, field_kinds
from econ.capital import stack_schedule
from econ.excel import irr_batch, several_sign_changes
from econ.financing import level_payment_schedule
from econ.memory import keep_freed_memory
from econ.scenario.depreciation_models import METHOD_ARRAY_FIELDS
from econ.scenario.financing_models import MAX_MONTHS
from econ.scenario.models import Scenario
from econ.throughput.trajectory import throughput_multiplier
from econ.undefined import explain, mask_infinite
from econ.units import (
    HOURS_PER_MONTH,
    MONTHS_PER_YEAR,
    SECONDS_PER_MONTH,
    TOKENS_PER_MTOK,
    annual_rate,
    monthly_rate,
    power_path,
)

MONTHLY_COLUMNS = (
    "gpus_in_service",
    "tokens",
    "revenue_usd",
    "token_revenue_usd",
    "contract_revenue_usd",
    "spot_revenue_usd",
    "power_usd",
    "facility_usd",
    "opex_usd",
    "capex_usd",
    "disposal_usd",
    "gain_on_disposal_usd",
    "depreciation_usd",
    "impairment_usd",
    "tax_depreciation_usd",
    "interest_usd",
    "cash_interest_usd",
    "principal_usd",
    "debt_service_usd",
    "tax_usd",
    "deferred_tax_usd",
    "deferred_tax_liability_usd",
    "ebitda_usd",
    "net_income_usd",
    "cash_flow_project_usd",
    "cash_flow_equity_usd",
    "debt_balance_usd",
    "dscr",
    "llcr",
    "ltv",
    "covenant_breach",
)
"""Monthly line items (DESIGN.md §5 names the core; `scenario`, `month` and `date` index them).

disposal_usd is the sale proceeds; interest_usd is interest expense (cash interest plus amortized
fees and discount); tax_usd is the income tax paid; deferred_tax_usd the deferred tax expense."""

BALANCE_LINES = ("debt_balance_usd", "deferred_tax_liability_usd", "gpus_in_service")
"""Monthly lines that are levels at month end, not flows: yearly figures take the year's last."""

RATIO_LINES = ("dscr", "llcr", "ltv")
"""Monthly lines that are ratios: undefined (NaN, null) where there is nothing to divide."""

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
    "npv_usd_per_gpu",
    "npv_usd_per_rack",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    *DENSITY_COLUMNS,
    "gpu_count",
    "capex_usd_total",
    "discount_rate_annual",
    "horizon_months",
    "ebit_usd_total",
    "net_income_usd_total",
    "accounting_cost_usd_per_mtok",
    "impairment_usd_total",
    "moic_equity",
    "min_llcr",
    "covenant_breach_months",
    "first_breach_month",
    "wacc_after_tax_annual",
    "cost_of_debt_annual",
    "debt_usd",
    "dilution_shares",
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

    overflowed: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # Inputs that overflow give inf; outputs are strict JSON, so inf becomes a named null.
        self.overflowed = mask_infinite(self.metrics)
        for key, rows in mask_infinite(self.components).items():
            self.overflowed[f"component:{key}"] = rows

    @cached_property
    def warnings(self) -> list[list[str]]:
        """Per-scenario warnings, formatted on first use (batch runs that keep only metrics skip it).

        Every null metric is named in one of them, with its reason (econ.undefined)."""
        found = self.warning_source() if self.warning_source else [[] for _ in self.names]
        return explain(found, self.metrics, self.overflowed, self.components)

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
        if not self.lines:
            raise ValueError("this projection kept only its summary (project(..., monthly=False))")
        keep = self.months[None, :] <= self.horizon_months[:, None]
        rows, cols = np.nonzero(keep)
        dates = (self.start_dates[rows] + cols.astype("timedelta64[M]")).astype("datetime64[D]")
        data = {"scenario": self.names[rows], "month": self.months[cols], "date": dates}
        for name in MONTHLY_COLUMNS:
            data[name] = self.lines[name][rows, cols]
        return pd.DataFrame(data).set_index(["scenario", "month"])

    @property
    def annual(self) -> pd.DataFrame:
        """Yearly totals indexed by (scenario, year): year 1 is months 0-12, year k months
        12k-11..12k. Flows are summed; balances (debt, deferred tax) are taken at year end;
        ratios are left out."""
        monthly = self.monthly.drop(columns=["date", *RATIO_LINES, "covenant_breach"])
        months = monthly.index.get_level_values("month")
        year = np.maximum(months - 1, 0) // MONTHS_PER_YEAR + 1
        keys = [monthly.index.get_level_values("scenario"), pd.Index(year, name="year")]
        grouped = monthly.groupby(keys, sort=False)
        annual = grouped.sum()
        for name in BALANCE_LINES:
            annual[name] = grouped[name].last()
        return annual

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


CHUNK_SCENARIOS = 4096
"""Scenarios projected at once. A chunk's (scenarios x months) arrays (2.4 MB at 73 months) stay
in the CPU caches far more than a whole batch's would, which makes a large batch several times
faster than one pass; 4,096 is as fast as 8,192 in one process and loses less to the other
process when two share the caches, as two Dask workers do (measured, docs/benchmarks.md)."""
KEEP_MEMORY_FROM_SCENARIOS = 1024
"""Batches this large switch on `econ.memory.keep_freed_memory` (once per process)."""


def project(
    scenarios: Scenario | ScenarioBatch | Iterable[Scenario], monthly: bool = True
) -> Projection:
    """Project scenarios month by month and summarize them.

    Accepts one Scenario, several, or a ScenarioBatch; one scenario is a batch of one. Large
    batches are projected in chunks of CHUNK_SCENARIOS and joined. With `monthly=False` only the
    summary is kept (memory grows with scenarios, not scenarios x months), as for sweeps and
    Monte Carlo; `.monthly` then raises.
    """
    batch = (
        scenarios
        if isinstance(scenarios, ScenarioBatch)
        else ScenarioBatch.from_scenarios(scenarios)
    )
    if batch.n >= KEEP_MEMORY_FROM_SCENARIOS:
        keep_freed_memory()
    # Overflow and 0/0 from extreme inputs become named nulls (econ.undefined), not console noise.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if batch.n <= CHUNK_SCENARIOS:
            return _project(batch, monthly)
        parts = [
            _project(batch.slice(start, min(start + CHUNK_SCENARIOS, batch.n)), monthly)
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
            k: np.concatenate([pad(p.lines[k], np.nan if k in RATIO_LINES else 0.0) for p in parts])
            for k in parts[0].lines
        },
        metrics={k: np.concatenate([p.metrics[k] for p in parts]) for k in parts[0].metrics},
        components={
            k: np.concatenate([p.components[k] for p in parts]) for k in parts[0].components
        },
        vintages=pd.concat(vintages) if vintages else None,
        warning_source=lambda: [w for p in parts for w in p.warnings],
    )


def _project(b: ScenarioBatch, monthly: bool = True) -> Projection:
    """One chunk; `monthly=False` keeps no monthly lines (nor computes those only they show)."""
    horizon = b.horizon_months
    T = int(horizon.max())
    months = np.arange(T + 1)
    m = months[None, :]
    col = _column

    # Stage 1: each row (a scenario's fleet or one of its vintages) from purchase to retirement.
    sc = b.row_scenario
    row_horizon = horizon[sc]
    purchase = b["fleet.purchase_month"].astype(np.int64)
    retire_given = b["fleet.retire_month"]
    retire = np.where(np.isnan(retire_given), row_horizon, retire_given).astype(np.int64)
    held = retire - purchase
    since = m - purchase[:, None]  # months since purchase
    service = (since >= 1) & (m <= retire[:, None])

    racks = b["fleet.racks"]
    gpu_count = np.where(np.isnan(racks), b["fleet.gpu_count"], racks * b["fleet.gpus_per_rack"])
    # Ramps and churn count from each row's purchase: computed on months since purchase, shifted.
    gpus = col(gpu_count) * _delay(
        market.utilization_path(
            np.ones(b.rows), b["fleet.deployment_ramp_months"], np.zeros(b.rows), months
        ),
        purchase,
    )
    gpus = gpus * service
    utilization = _delay(
        market.utilization_path(
            b["utilization.share"],
            b["utilization.ramp_months"],
            b["utilization.churn_annual"],
            months,
        ),
        purchase,
    )
    utilization = utilization * service
    tps = col(b["throughput.tokens_per_s_per_gpu"]) * _throughput_multiplier(b, months)
    tokens = gpus * tps * utilization * SECONDS_PER_MONTH

    token_price = market.token_price_usd_per_mtok(
        b["market.price_usd_per_mtok"],
        b["market.price_decline_annual"],
        months,
        b.extras["market.price_table_months"],
        b.extras["market.price_table_usd_per_mtok"],
    )
    rental = market.rental_price_usd_per_gpu_hour(
        b["market.rental_usd_per_gpu_hour"],
        b["market.rental_decline_annual"],
        b["market.rental_floor_usd_per_gpu_hour"],
        months,
        b.extras["market.rental_table_months"],
        b.extras["market.rental_table_usd_per_gpu_hour"],
    )
    contract = b["market.contract_usd_per_gpu_hour"]  # its price matters only under contract
    if np.any(b["market.contract_share"] > 0):
        contract = market.contract_price_path(
            contract, rental, b["market.contract_term_months"].astype(np.int64), months
        )
    spot_sells_hours = b.extras["market.spot_sells_gpu_hours"]
    revenue_by = market.revenue_by_source(
        tokens,
        gpus,
        utilization,
        token_price,
        b["market.contract_share"],
        contract,
        rental,
        spot_sells_hours,
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
    contract_share = col(b["market.contract_share"])
    rows = {
        "gpus_in_service": gpus,
        "tokens": tokens,
        "token_revenue_usd": revenue_by["token_usd"],
        "contract_revenue_usd": revenue_by["contract_usd"],
        "spot_revenue_usd": revenue_by["spot_rental_usd"],
        "power_usd": power,
        "opex_usd": opex,
        "capex_usd": capex,
        # NPV gained per USD/Mtok of month-1 token price (for the break-even price)
        "spot_units": np.where(
            col(spot_sells_hours) > 0,
            0.0,
            (1.0 - contract_share)
            * tokens
            * token_price
            / np.where(token_price[:, 1:2] > 0, token_price[:, 1:2], 1.0)
            / TOKENS_PER_MTOK,
        ),
        "it_kw": gpus * col(kw_per_gpu),
        "it_drawn_kw": it_drawn_kw,
        "it_energy_kwh": power_mod.energy_kwh_per_month(it_drawn_kw),
        "racks_in_service": density.racks_in_service(gpus, b["fleet.gpus_per_rack"]),
    }

    # Stage 2: a scenario is the sum of its rows; the site (facility) belongs to the scenario.
    if b.one_row_per_scenario:
        first = np.arange(b.n)
    else:
        first = np.flatnonzero(first_row)
    add = (lambda x: x) if b.one_row_per_scenario else (lambda x: np.add.reduceat(x, first, axis=0))
    total = lambda x: np.add.reduceat(x, first) if len(first) != len(x) else x  # noqa: E731
    at_first = lambda x: np.asarray(x)[first]  # noqa: E731
    it_kw_site = add(rows["it_kw"])
    site = facility_mod.facility_costs(
        mode=at_first(b["facility.mode"]),
        months=months,
        horizon_months=horizon,
        nameplate_it_kw=it_kw_site,
        drawn_it_kw=add(rows["it_drawn_kw"]),
        racks=add(rows["racks_in_service"]).max(axis=1),
        **{name: at_first(b[f"facility.{name}"]) for name in FACILITY_INPUTS},
    )

    def row_facility():
        # The site's rent is shared among rows by their IT load in service each month.
        with np.errstate(divide="ignore", invalid="ignore"):
            load_share = np.nan_to_num(rows["it_kw"] / it_kw_site[sc])
        return site.facility_usd[sc] * load_share

    if not b.one_row_per_scenario:  # (one row: the site's figures are the row's)
        rows["facility_usd"] = row_facility()

    def ebitda_row():  # each row's, for impairment tests only
        revenue_row = (
            rows["token_revenue_usd"] + rows["contract_revenue_usd"] + rows["spot_revenue_usd"]
        )
        facility_row = rows["facility_usd"] if "facility_usd" in rows else row_facility()
        return revenue_row - rows["power_usd"] - facility_row - rows["opex_usd"]

    # Stage 3: each row's depreciation (book and tax), impairment and sale.
    discount_annual_row = b["financing.discount_rate_annual"]
    capital = _capital_rows(
        b,
        months,
        purchase,
        held,
        capex_row,
        tokens,
        gpus,
        token_price,
        rental,
        ebitda_row,
        discount_annual_row,
    )
    rows.update(capital.lines)

    lines = {k: add(v) for k, v in rows.items()}

    # Stage 4: financing, tax, cash flows and summary per scenario.
    active = m <= horizon[:, None]
    facility = site.facility_usd
    revenue = lines["token_revenue_usd"] + lines["contract_revenue_usd"] + lines["spot_revenue_usd"]
    ebitda = revenue - lines["power_usd"] - facility - lines["opex_usd"]
    capex, proceeds = lines["capex_usd"], lines["proceeds_usd"]
    book_depreciation, tax_depreciation = lines["depreciation_usd"], lines["tax_depreciation_usd"]
    capex_total = total(capex_row)
    if np.any(site.capex_usd):  # an owned hall or a liquid retrofit: the site's capital too
        capex = capex + site.capex_usd
        proceeds = proceeds + np.where(m == horizon[:, None], col(site.book_value_end_usd), 0.0)
        book_depreciation = book_depreciation + site.depreciation_usd
        tax_depreciation = tax_depreciation + site.depreciation_usd
        capex_total = capex_total + site.capex_usd.sum(axis=1)
    impairment = lines["impairment_usd"]
    impaired = bool(impairment.any())

    tax_rate = at_first(b["financing.tax_rate"])
    discount_annual = at_first(discount_annual_row)
    stack = _finance(b, first, horizon, months, capex, tax_rate, discount_annual)
    debt = stack.lines
    interest = debt["interest_expense_usd"]

    taxable = ebitda - tax_depreciation - interest + lines["tax_gain_usd"]
    income_tax = tax.income_tax_with_loss_carryforward(taxable, tax_rate, horizon)
    same = lambda x, y: x is y or np.array_equal(x, y)  # noqa: E731
    same_books = (
        same(book_depreciation, tax_depreciation)
        and same(lines["gain_usd"], lines["tax_gain_usd"])
        and not impaired
    )
    if same_books:  # no temporary differences, no deferred tax
        none = np.zeros_like(ebitda)
        deferred = deferred_tax_mod.DeferredTax(none, none, none)
    else:
        deferred = deferred_tax_mod.deferred_tax(
            book_depreciation,
            tax_depreciation,
            tax_rate,
            book_gain_usd=lines["gain_usd"],
            tax_gain_usd=lines["tax_gain_usd"],
            impairment_usd=impairment,
        )
    consumed = book_depreciation + impairment if impaired else book_depreciation
    pre_tax_income = ebitda - consumed - interest + lines["gain_usd"]
    net_income = pre_tax_income - income_tax - deferred.expense_usd

    cash_flow_project = ebitda - capex + proceeds - income_tax
    cash_flow_equity = cash_flow_project + debt["financing_cash_flow_usd"]
    cfads = ebitda - income_tax
    covenants = (
        at_first(b["financing.covenants.dscr_floor"]),
        at_first(b["financing.covenants.llcr_floor"]),
    )
    coverage = capital_mod.coverage_ratios(
        cfads,
        debt["debt_service_usd"],
        debt["balance_usd"],
        stack.metrics["debt_rate_monthly"],
        horizon,
        dscr_floor=covenants[0],
        llcr_floor=covenants[1],
        # The trailing test window matters only to a DSCR covenant.
        test_months=int(np.max(b["financing.covenants.test_months"]))
        if not np.isnan(covenants[0]).all()
        else 1,
    )
    dscr = coverage["dscr"]

    # Discounting at the cost of capital, monthly compounding of the annual rate.
    discount = power_path(1.0 + monthly_rate(discount_annual), -months) * active
    pv = lambda x: np.einsum("ij,ij->i", x, discount)  # noqa: E731

    pv_tokens = pv(lines["tokens"])
    pv_consumed = pv(consumed)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_mtok = TOKENS_PER_MTOK / np.where(pv_tokens > 0, pv_tokens, np.nan)
    components = {
        "depreciation": pv_consumed * per_mtok,
        "financing": (pv(capex) - pv(proceeds) - pv_consumed) * per_mtok,
        "power": pv(lines["power_usd"]) * per_mtok,
        "facility": pv(facility) * per_mtok,
        "opex": pv(lines["opex_usd"]) * per_mtok,
    }
    lcot = sum(components.values())

    npv = pv(cash_flow_project)
    irr_project = annual_rate(irr_batch(cash_flow_project))
    equity_in = stack.metrics["equity_usd"]
    equity_share = np.where(capex_total > 0, equity_in / capex_total, 0.0)
    equity = capital_mod.equity_returns(cash_flow_equity, MIN_EQUITY_SHARE_FOR_IRR * capex_total)
    equity_too_thin = equity_share < MIN_EQUITY_SHARE_FOR_IRR
    irr_equity = np.where(equity_too_thin, np.nan, equity["irr_annual"])
    moic = np.where(equity_too_thin, np.nan, equity["moic"])

    payback = _payback_months(cash_flow_project, active)
    breakeven = _breakeven_price(
        fixed=ebitda - lines["token_revenue_usd"],
        spot_units=lines["spot_units"],
        deductions=tax_depreciation + interest - lines["tax_gain_usd"],
        tax_rate=tax_rate,
        last_month=horizon,
        capital=proceeds - capex,
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
        "npv_usd_per_gpu": npv / total(gpu_count),
        "npv_usd_per_rack": npv * at_first(b["fleet.gpus_per_rack"]) / total(gpu_count),
        "irr_project_annual": irr_project,
        "irr_equity_annual": irr_equity,
        "payback_months": payback,
        "breakeven_price_usd_per_mtok": breakeven,
        "min_dscr": coverage["min_dscr"],
        **{name: densities[name] for name in DENSITY_COLUMNS},
        "gpu_count": total(gpu_count),
        "capex_usd_total": capex_total,
        "discount_rate_annual": discount_annual,
        "horizon_months": horizon.astype(float),
        "ebit_usd_total": (ebitda - consumed).sum(axis=1),
        "net_income_usd_total": net_income.sum(axis=1),
        "accounting_cost_usd_per_mtok": _per_mtok(
            (lines["power_usd"] + facility + lines["opex_usd"] + consumed + interest).sum(axis=1),
            lines["tokens"].sum(axis=1),
        ),
        "impairment_usd_total": impairment.sum(axis=1),
        "moic_equity": moic,
        "min_llcr": coverage["min_llcr"],
        "covenant_breach_months": coverage["breach_months"].astype(float),
        "first_breach_month": coverage["first_breach_month"],
        "wacc_after_tax_annual": stack.metrics["wacc_after_tax_annual"],
        "cost_of_debt_annual": stack.metrics["cost_of_debt_annual"],
        "debt_usd": stack.metrics["debt_usd"],
        "dilution_shares": stack.metrics["dilution_shares"],
    }
    monthly_lines = {}
    if monthly:
        monthly_lines = {
            "gpus_in_service": lines["gpus_in_service"],
            "tokens": lines["tokens"],
            "revenue_usd": revenue,
            "token_revenue_usd": lines["token_revenue_usd"],
            "contract_revenue_usd": lines["contract_revenue_usd"],
            "spot_revenue_usd": lines["spot_revenue_usd"],
            "power_usd": lines["power_usd"],
            "facility_usd": facility,
            "opex_usd": lines["opex_usd"],
            "capex_usd": capex,
            "disposal_usd": proceeds,
            "gain_on_disposal_usd": lines["gain_usd"],
            "depreciation_usd": book_depreciation,
            "impairment_usd": impairment,
            "tax_depreciation_usd": tax_depreciation,
            "interest_usd": interest,
            "cash_interest_usd": debt["cash_interest_usd"],
            "principal_usd": debt["principal_usd"],
            "debt_service_usd": debt["debt_service_usd"],
            "tax_usd": income_tax,
            "deferred_tax_usd": deferred.expense_usd,
            "deferred_tax_liability_usd": deferred.liability_usd,
            "ebitda_usd": ebitda,
            "net_income_usd": net_income,
            "cash_flow_project_usd": cash_flow_project,
            "cash_flow_equity_usd": cash_flow_equity,
            "debt_balance_usd": debt["balance_usd"],
            "dscr": dscr,
            "llcr": coverage["llcr"],
            "ltv": capital_mod.loan_to_value(
                debt["balance_usd"], capex_total[:, None] - cumsum_months(consumed)
            )[0],
            "covenant_breach": (coverage["dscr_breach"] | coverage["llcr_breach"]).astype(float),
        }
    flags = {
        "no_tokens": ~(pv_tokens > 0),
        "no_irr_project": np.isnan(irr_project),
        "thin_equity": equity_too_thin,
        "no_irr_equity": np.isnan(irr_equity) & ~equity_too_thin,
        "no_payback": np.isnan(payback),
        "no_breakeven": np.isnan(breakeven),
        "no_debt": stack.metrics["debt_usd"] <= 0,
        "dscr_below_1": coverage["min_dscr"] < 1.0,
        "covenant_breach": coverage["breach_months"] > 0,
        "irr_project_not_unique": ~np.isnan(irr_project) & several_sign_changes(cash_flow_project),
        "irr_equity_not_unique": ~np.isnan(irr_equity) & several_sign_changes(cash_flow_equity),
    }
    flags["debt_settled_at_end"] = debt["settlement_usd"].sum(axis=1) > 0.005
    contracted_kw, peak_it_kw = at_first(b["facility.contracted_kw"]), lines["it_kw"].max(axis=1)
    flags["over_contract"] = ~np.isnan(contracted_kw) & (peak_it_kw > contracted_kw + 1e-9)
    row_flags = {
        "sold_before_life": (held < np.ceil(b["depreciation.life_years"] * MONTHS_PER_YEAR - 1e-9))
        & np.isnan(b["depreciation.sale_value_share"]),
        "measured_energy": measured_energy,
        "impaired": capital.impairment_month >= 0,
    }
    context = {
        "equity_share": equity_share,
        "min_dscr": coverage["min_dscr"],
        "months_below_1": (dscr < 1.0).sum(axis=1),
        "breach_months": coverage["breach_months"],
        "first_breach_month": coverage["first_breach_month"],
        "dscr_floor": covenants[0],
        "life_months": b["depreciation.life_years"] * MONTHS_PER_YEAR,
        "retire": retire,
        "purchase": purchase,
        "carrying_at_sale": capital.carrying_at_sale,
        "impairment_month": capital.impairment_month,
        "impairment_loss": capital.impairment_loss,
        "contracted_kw": contracted_kw,
        "peak_it_kw": peak_it_kw,
        "kw_per_gpu": kw_per_gpu,
        "nameplate_kw": nameplate_kw,
        "joules_per_token": b["power.measured_joules_per_token"],
        "settled_at_end": debt["settlement_usd"].sum(axis=1),
    }

    def warnings() -> list[list[str]]:
        out = _warnings(flags, context, b.n)
        prefix = (lambda r: "") if b.one_row_per_scenario else (lambda r: f"[{b.row_names[r]}] ")
        for key, rows_flagged in row_flags.items():
            for r in np.flatnonzero(rows_flagged):
                out[sc[r]].append(prefix(r) + ROW_MESSAGES[key](context, r))
        for r, messages in enumerate(b.row_warnings):
            out[sc[r]].extend(prefix(r) + w for w in messages)
        return out

    vintage_table = None
    if not b.one_row_per_scenario:
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


FACILITY_INPUTS = (
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
"""Facility fields passed to econ.facility.facility_costs under their own names."""


def _per_mtok(usd, tokens):
    """USD per million tokens; NaN where no tokens."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tokens > 0, usd / tokens * TOKENS_PER_MTOK, np.nan)


def _column(values):
    return np.asarray(values, dtype=float)[:, None]


def _throughput_multiplier(b: ScenarioBatch, months):
    """Software-gain multiplier by calendar month; 1 where a batch has no gains at all."""
    rate = b["throughput.gain_rate_annual"]
    extras = b.extras
    steps = b.step_gains.any()
    table = np.isfinite(extras["throughput.table_months"]).any()
    ceiling = b["throughput.ceiling_tokens_per_s_per_gpu"] / b["throughput.tokens_per_s_per_gpu"]
    if not (steps or table or rate.any() or np.isfinite(ceiling).any()):
        return 1.0
    return throughput_multiplier(
        months,
        rate,
        trajectory=b["throughput.trajectory"],
        rate_decay_annual=b["throughput.rate_decay_annual"],
        ceiling_ratio=np.where(np.isnan(ceiling), np.inf, ceiling),
        step_months=b.step_months,
        step_gains=b.step_gains,
        step_ramp_months=extras["throughput.step_ramp_months"],
        table_months=extras["throughput.table_months"],
        table_multipliers=extras["throughput.table_multipliers"],
    )


@dataclass(frozen=True)
class _Capital:
    """Per-row asset lines on the calendar grid, and facts for warnings."""

    lines: dict[str, np.ndarray]
    impairment_month: np.ndarray
    impairment_loss: np.ndarray
    carrying_at_sale: np.ndarray


def _capital_rows(
    b, months, purchase, held, cost, tokens, gpus, token_price, rental, ebitda, discount_annual
) -> _Capital:
    """Book and tax depreciation, impairment and sale of each row's GPUs.

    Schedules run on months since purchase (econ.depreciation's month 0 is the purchase month)
    and are shifted to the calendar at the end; market curves and usage are shifted the other way.
    `ebitda` is a function giving each row's EBITDA (computed only for impairment tests).
    """
    n = b.rows
    since = lambda x: _advance(x, purchase)  # noqa: E731
    in_service = b["depreciation.in_service_month"].astype(np.int64)
    salvage = b["depreciation.salvage_share"] * cost
    book_method = _choice(b, "depreciation.method")
    tax_method = _choice(b, "depreciation.tax.method")
    used = set(book_method.tolist()) | set(tax_method.tolist())
    usage = {"book": None, "tax": None}
    if "units_of_production" in used:
        tokens_since, hours_since = since(tokens), since(gpus * HOURS_PER_MONTH)
        for side, path in (("book", "depreciation"), ("tax", "depreciation.tax")):
            by_tokens = _choice(b, f"{path}.usage_driver") == "tokens"
            usage[side] = np.where(by_tokens[:, None], tokens_since, hours_since)
    value_table = dep.value_share_from_table(
        b.extras["market_value_months"], b.extras["market_value_shares"], months
    )
    curves = {
        "market_value_table": value_table,
        "token_price": since(token_price),
        "rental_price": since(rental),
    }
    value = {"book": None, "tax": None}
    if "economic" in used:
        for side, path in (("book", "depreciation"), ("tax", "depreciation.tax")):
            source = _choice(b, f"{path}.value_source")
            value[side] = np.select(
                [(source == name)[:, None] for name in curves], list(curves.values())
            )

    book = dep.schedule_mixed(
        book_method,
        cost,
        months,
        usage=usage["book"],
        value_curve=value["book"],
        in_service_month=in_service,
        **_method_params(b, "depreciation", "book"),
    )
    tax_dep = book.copy()
    own = np.flatnonzero(tax_method != "book")
    if own.size:
        params = _method_params(b, "depreciation.tax", "tax")
        tax_dep[own] = dep.schedule_mixed(
            tax_method[own],
            cost[own],
            months,
            usage=None if usage["tax"] is None else usage["tax"][own],
            value_curve=None if value["tax"] is None else value["tax"][own],
            in_service_month=in_service[own],
            **{k: np.asarray(v)[own] for k, v in params.items()},
        )

    # Impairment of the book value where a price drop triggers a test (ASC 360 / IAS 36).
    impairment = np.zeros_like(book)
    impairment_month = np.full(n, -1)
    impairment_loss = np.zeros(n)
    threshold = b["depreciation.impairment.price_drop_threshold"]
    tested = np.flatnonzero(~np.isnan(threshold))
    if tested.size:
        trigger_price = _choice(b, "depreciation.impairment.trigger_price")[tested]
        price = np.select(
            [(trigger_price == name)[:, None] for name in curves],
            [curve[tested] for curve in curves.values()],
        )
        trigger = impairment_mod.price_drop_trigger(price, threshold[tested], in_service[tested])
        m = np.asarray(months)[None, :]
        sale_share = b["depreciation.sale_value_share"][tested]
        expected_sale = np.where(
            np.isnan(sale_share), b["depreciation.salvage_share"][tested], sale_share
        )
        flows = since(ebitda())[tested] * (m <= held[tested, None]) + np.where(
            m == held[tested, None], (expected_sale * cost[tested])[:, None], 0.0
        )
        value_in_use = impairment_mod.remaining_present_value_usd(
            flows, monthly_rate(discount_annual[tested])
        )
        by_market = (
            _choice(b, "depreciation.impairment.fair_value_source")[tested] == "market_value"
        )
        fair_value = np.where(
            by_market[:, None], value_table[tested] * cost[tested, None], value_in_use
        )
        result = impairment_mod.impair(
            book[tested],
            cost[tested],
            salvage[tested],
            _choice(b, "depreciation.impairment.standard")[tested],
            trigger,
            fair_value,
            undiscounted_usd=impairment_mod.remaining_undiscounted_usd(flows),
            value_in_use_usd=value_in_use,
            costs_of_disposal_usd=b["depreciation.impairment.costs_of_disposal_share"][tested, None]
            * fair_value,
        )
        book[tested] = result.depreciation_usd
        impairment[tested] = result.impairment_usd
        impairment_month[tested] = np.where(result.month >= 0, result.month + purchase[tested], -1)
        impairment_loss[tested] = result.loss_usd

    # Sale when the row retires: at book value, or at the given share of cost.
    carrying = dep.book_value(cost, book, impairment)
    carrying_at_sale = carrying[np.arange(n), held]
    sale_share = b["depreciation.sale_value_share"]
    # (the carrying amount can round to a hair below 0 when fully depreciated)
    sale = np.maximum(np.where(np.isnan(sale_share), carrying_at_sale, sale_share * cost), 0.0)
    booked = dep.dispose(book, cost, months, held, sale, impairment, in_service, carrying)
    if own.size or tested.size:  # tax schedule differs from the book's somewhere
        taxed = dep.dispose(tax_dep, cost, months, held, sale, None, in_service)
    else:
        taxed = booked
    kept = np.asarray(months)[None, :] <= held[:, None]
    lines = {
        "depreciation_usd": booked.depreciation_usd,
        "impairment_usd": np.where(kept, impairment, 0.0),
        "tax_depreciation_usd": taxed.depreciation_usd,
        "proceeds_usd": booked.proceeds_usd,
        "gain_usd": booked.gain_usd,
        "tax_gain_usd": taxed.gain_usd,
    }
    return _Capital(
        lines={k: _delay(v, purchase) for k, v in lines.items()},
        impairment_month=impairment_month,
        impairment_loss=impairment_loss,
        carrying_at_sale=carrying_at_sale,
    )


def _choice(b: ScenarioBatch, path: str) -> np.ndarray:
    """A choice column as its names (or values, e.g. MACRS recovery years)."""
    choices = np.array(field_kinds()[path][1] + (None,), dtype=object)
    return choices[b[path].astype(np.int64)]  # -1 (section left out) maps to None


def _method_params(b: ScenarioBatch, path: str, side: str) -> dict[str, np.ndarray]:
    """MethodSettings keyword arrays for one side (book or tax): columns where the batch has them
    (so sweeps reach them), compiled extras for tuples and flags."""
    params = {}
    for name in METHOD_ARRAY_FIELDS:
        column = f"{path}.{name}"
        if column in b.columns:
            kind = field_kinds()[column][0]
            params[name] = _choice(b, column) if kind == "choice" else b[column]
        else:
            params[name] = b.extras[f"{side}.{name}"]
    params["change_month"] = np.nan_to_num(params["change_month"], nan=0.0).astype(np.int64)
    params["first_year_months"] = np.asarray(params["first_year_months"]).astype(np.int64)
    params["recovery_years"] = np.asarray(params["recovery_years"]).astype(np.int64)
    return params


def _finance(b, first, horizon, months, capex, tax_rate, discount_annual):
    """The capital stack's schedules: the general stack, or the closed form of its common case.

    When the only debt is financing.debt_share's loan and all capex is paid in month 0, the loan
    is one level-payment draw, whose schedule has a closed form (econ.financing) that is several
    times faster than the general stack; tests check the two agree.
    """
    if not b.stack and _only_month_zero_capex(capex) and FAST_SINGLE_LOAN:
        return _single_loan(b, first, horizon, months, capex[:, 0], tax_rate, discount_annual)
    with np.errstate(divide="ignore", invalid="ignore"):
        draw_profile = np.nan_to_num(capex / capex.sum(axis=1, keepdims=True))
    return stack_schedule(
        _stack_specs(b, first, horizon),
        capex.sum(axis=1),
        draw_profile,
        months,
        horizon,
        tax_rate=tax_rate,
        equity_cost_annual=discount_annual,
    )


FAST_SINGLE_LOAN = True
"""Use the closed form for a single debt_share loan drawn in month 0 (tests switch it off)."""


def _only_month_zero_capex(capex) -> bool:
    return not np.any(capex[:, 1:])


def _single_loan(b, first, horizon, months, capex_usd, tax_rate, discount_annual):
    """financing.debt_share's loan drawn in month 0: level payments over debt_term_months, the
    balance left repaid in the last month; the StackSchedule lines and metrics the engine reads."""
    share = b["financing.debt_share"][first]
    rate = b["financing.debt_rate_annual"][first]
    effective = b["financing.debt_rate_quote"][first] == 1
    rate_monthly = np.where(effective, monthly_rate(rate), rate / MONTHS_PER_YEAR)
    debt_usd = share * capex_usd
    interest, scheduled, balance, settlement = level_payment_schedule(
        debt_usd, rate_monthly, b["financing.debt_term_months"][first], months, last_month=horizon
    )
    principal = scheduled + settlement
    financing = -(interest + principal)
    financing[:, 0] += debt_usd  # drawn in month 0
    lines = {
        "interest_expense_usd": interest,
        "cash_interest_usd": interest,
        "principal_usd": principal,
        "settlement_usd": settlement,
        "debt_service_usd": interest + scheduled,
        "balance_usd": balance,
        "financing_cash_flow_usd": financing,
    }
    cost_of_debt = np.where(debt_usd > 0, annual_rate(rate_monthly), 0.0)
    equity_usd = capex_usd - debt_usd
    metrics = {
        "debt_usd": debt_usd,
        "equity_usd": equity_usd,
        "cost_of_debt_annual": np.where(debt_usd > 0, cost_of_debt, np.nan),
        "debt_rate_monthly": np.where(debt_usd > 0, rate_monthly, np.nan),
        "wacc_after_tax_annual": capital_mod.wacc_after_tax(
            debt_usd[:, None], cost_of_debt[:, None], equity_usd, discount_annual, tax_rate
        ),
        "dilution_shares": np.zeros(len(first)),
    }
    return capital_mod.StackSchedule(lines=lines, tranches={}, metrics=metrics)


DEBT_SHARE_LOAN = "debt_share loan"
"""Name of the loan that financing.debt_share stands for in the capital stack."""


def _stack_specs(b: ScenarioBatch, first, horizon) -> list[dict]:
    """The scenarios' tranches, plus financing.debt_share as a delayed-draw term loan.

    The debt_share loan is built from batch columns (so sweeps of debt_share, its rate and term
    reach it): it draws pro rata to capex, each draw amortizing over debt_term_months with level
    payments from the month after it; what is owed when the projection ends is repaid then.
    """
    specs = [dict(t) for t in b.stack]
    share = b["financing.debt_share"][first]
    if not np.any(share > 0):
        return specs
    n = len(first)
    rate = b["financing.debt_rate_annual"][first]
    effective = b["financing.debt_rate_quote"][first] == 1
    nominal = np.where(effective, MONTHS_PER_YEAR * monthly_rate(rate), rate)
    term = b["financing.debt_term_months"][first]
    text = lambda value: np.full(n, value, dtype=object)  # noqa: E731
    specs.append(
        {
            "type": "delayed_draw_term_loan",
            "name": DEBT_SHARE_LOAN,
            "amount_usd": np.where(share > 0, np.nan, 0.0),
            "share_of_capex": np.where(share > 0, share, np.nan),
            "issue_month": np.zeros(n),
            "maturity_month": np.minimum(MAX_MONTHS, horizon + term),
            "upfront_fee_share": np.zeros(n),
            "issue_discount_share": np.zeros(n),
            "repayment": text("level_payment"),
            "amortization_months": term,
            "interest_only_months": np.zeros(n),
            "balloon_share": np.zeros(n),
            "rate_annual": nominal,
            "day_count": text("30/360"),
            "spread_annual": np.zeros(n),
            "floor_annual": np.full(n, np.nan),
            "index_interpolation": text("step"),
            "availability_months": np.full(n, np.nan),
            "commitment_fee_annual": np.zeros(n),
        }
    )
    return specs


def _advance(values, start_month):
    """Shift each row left by its start month: out[:, j] = values[:, j + start], the last value
    held beyond the end (the inverse of _delay)."""
    if not np.any(start_month):
        return values
    last = values.shape[1] - 1
    source = np.minimum(
        np.arange(values.shape[1])[None, :] + np.asarray(start_month)[:, None], last
    )
    return np.take_along_axis(values, source, axis=1)


ROW_MESSAGES = {
    "measured_energy": lambda c, r: (
        f"power from measured energy, "
        f"{c['joules_per_token'][r]:g} J/token = {c['kw_per_gpu'][r]:.3f} kW per GPU while serving, "
        f"instead of the nameplate {c['nameplate_kw'][r]:.3f} kW"
    ),
    "sold_before_life": lambda c, r: (
        f"sold in month {c['retire'][r]}, before the end of its "
        f"useful life of {c['life_months'][r]:g} months: the remaining book value "
        f"{c['carrying_at_sale'][r]:,.0f} USD is assumed sold at book value"
    ),
    "impaired": lambda c, r: (
        f"impaired in month {c['impairment_month'][r]}: a loss of "
        f"{c['impairment_loss'][r]:,.0f} USD writes the GPUs down, and depreciation continues "
        "from the lower carrying amount"
    ),
}


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
    revenue = rows["token_revenue_usd"] + rows["contract_revenue_usd"] + rows["spot_revenue_usd"]
    costs = rows["power_usd"] + rows["facility_usd"] + rows["opex_usd"]
    pv_tokens = pv(rows["tokens"])
    with np.errstate(divide="ignore", invalid="ignore"):
        lcot = (
            pv(rows["capex_usd"] - rows["proceeds_usd"] + costs)
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
            "npv_pre_tax_usd": pv(revenue - costs - rows["capex_usd"] + rows["proceeds_usd"]),
            "lcot_usd_per_mtok": lcot,
        }
    ).set_index(["scenario", "vintage"])


def _payback_months(cash_flow, active):
    """Months until cumulative project cash flow turns non-negative, interpolated within the month.

    NaN when it never does within the horizon.
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
        "covenant_breach": lambda i: (
            f"covenant breached in {ctx['breach_months'][i]} months, first in month "
            f"{ctx['first_breach_month'][i]:.0f} (DSCR floor {ctx['dscr_floor'][i]:g}x over the "
            "test window)"
        ),
        "debt_settled_at_end": lambda i: (
            f"the debt outlives the projection: {ctx['settled_at_end'][i]:,.0f} USD is repaid in "
            "the last month"
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
