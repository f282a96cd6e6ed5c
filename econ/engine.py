"""The batch projection: ScenarioBatch -> Projection, all scenarios at once.

Composition only: each line item comes from a domain module (capex, depreciation, power, market,
financing, tax, throughput); this module lines them up month by month as arrays shaped
(scenarios, months) and reduces them to summary metrics. There is no Python loop over scenarios.
Month 0 is the purchase month; month m runs to each scenario's horizon H, and columns after H are 0.

`_project` runs the stages in order, each a function of explicit arrays returning a small frozen
dataclass: fleet and throughput (`_fleet`), revenue (`_revenue`), capex (`_capex`), operating costs
(`_operating_costs`), the site (`_site`), capital (`_capital_rows`: depreciation, impairment,
disposal), then per scenario the ledger (`_ledger`: financing, tax, cash flows) and its metrics
(`_summary_metrics`). docs/architecture.md draws them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from econ import capex as capex_mod
from econ import capital as capital_mod
from econ import (
    cashflow,
    catalog,
    density,
    market,
    memory,
    plausibility,
    strict_json,
    tax,
    tranche_tables,
)
from econ import deferred_tax as deferred_tax_mod
from econ import depreciation as dep
from econ import facility as facility_mod
from econ import financing as financing_mod
from econ import metrics as metrics_mod
from econ import opex as opex_mod
from econ import power as power_mod
from econ import resale as resale_mod
from econ.arrays import cumsum_months, remaining_sum_months, snap_to_zero
from econ.batch import ScenarioBatch, field_kinds, in_file
from econ.bounds import number_text
from econ.capital import stack_schedule
from econ.errors import InputError
from econ.financing import level_payment_schedule
from econ.labels import counted, first_names, whole
from econ.memory import keep_freed_memory
from econ.scenario.depreciation_models import METHOD_ARRAY_FIELDS
from econ.scenario.financing_models import MAX_MONTHS
from econ.scenario.gain_models import GAIN_RATE_WARN_ANNUAL, STEPS_WARN_FACTOR, TRAJECTORIES
from econ.scenario.models import CONSTRUCTION_SIZING, Scenario
from econ.text import WARNING_SEPARATOR, single_line
from econ.throughput.trajectory import throughput_multiplier
from econ.undefined import OVERFLOW, explain, mask_infinite
from econ.units import (
    HALF_CENT_USD,
    HOURS_PER_MONTH,
    MONTHS_PER_YEAR,
    SECONDS_PER_MONTH,
    TOKENS_PER_MTOK,
    annual_rate,
    monthly_rate,
    nominal_monthly_rate,
)

TOKEN_KINDS = ("output_token", "input_token", "cached_input_token")
"""Kinds of tokens billed at their own prices; token_revenue_usd is their sum."""

# pandas loads for the frames (Projection.summary, .monthly, the vintage table), not for a
# projection; construction loans and impairment tests load when a scenario has one.
if TYPE_CHECKING:
    import pandas as pd

    from econ import construction

MONTHLY_COLUMNS = (
    "gpus_in_service",
    "tokens",
    "input_tokens",
    "revenue_usd",
    "token_revenue_usd",
    *(f"{kind}_revenue_usd" for kind in TOKEN_KINDS),
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
    "tax_gain_on_disposal_usd",
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
    "current_tax_usd",
    "capitalized_interest_usd",
    "commitment_fee_usd",
    "dscr_test",
)
"""Monthly line items (docs/glossary.md names them; `scenario`, `month` and `date` index them).

tokens are output tokens and input_tokens the input (prompt) tokens sent with them (NaN where the
workload's input tokens per output token are unknown); token_revenue_usd is the revenue of tokens
of every kind, output_token_revenue_usd, input_token_revenue_usd (uncached) and
cached_input_token_revenue_usd its parts.

disposal_usd is the sale proceeds, gain_on_disposal_usd their gain over the carrying amount (a
loss negative) and tax_gain_on_disposal_usd their gain over the tax basis (cost less tax
depreciation): the gain taxed (depreciation recapture, IRC §1245) or the loss deducted, a line of
taxable income; interest_usd is interest expense (cash interest plus amortized fees and discount);
tax_usd is the income tax paid (financing.tax_payment), current_tax_usd the current tax expense and
deferred_tax_usd the deferred tax expense (ASC 740); capitalized_interest_usd is loan interest of
the construction period, added to the GPUs' cost instead of expensed. cash_interest_usd is the
interest and coupons paid and commitment_fee_usd a capital stack's fees on undrawn commitments
(0 for financing.debt_share's loan): debt_service_usd = cash_interest_usd + commitment_fee_usd +
the scheduled principal (econ.capital). dscr_test is the DSCR the covenant tests, on its trailing
financing.covenants.test_months window (NaN in months it does not test, and throughout without a
DSCR covenant). Lines added later go
last, so that the workbook's Monthly columns keep their letters."""

BALANCE_LINES = ("debt_balance_usd", "deferred_tax_liability_usd", "gpus_in_service")
"""Monthly lines that are levels at month end, not flows: yearly figures take the year's last."""

RATIO_LINES = ("dscr", "llcr", "ltv", "dscr_test")
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
"""Power-density summary metrics (econ.density; docs/glossary.md, "Summary keys")."""

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
    "mirr_project_annual",
    "mirr_equity_annual",
    "profitability_index",
    "debt_usd_total",
    "construction_interest_usd",
    "debt_at_conversion_usd",
    "debt_sizing_constraint",
    "dscr_headroom",
    "months_of_headroom",
    "cost_usd_per_gpu_hour",
    *(f"cost_usd_per_gpu_hour_{c}" for c in COMPONENTS),
    "lcot_usd_per_mtok_all_tokens",
    "input_tokens_total",
    *(f"{kind}_revenue_usd_total" for kind in TOKEN_KINDS),
    *resale_mod.SPREAD_KEYS,
    "rack_count",
    "npv_equity_usd",
)

CODED_METRICS = {"debt_sizing_constraint": financing_mod.SIZING_CONSTRAINTS}
"""Summary metrics whose value is the code of a category, not a quantity: their categories'
names, by code. A difference of two codes means nothing (econ.gains.summary_delta leaves them
out)."""

MIN_EQUITY_SHARE_FOR_IRR = 0.05
"""Below this equity share of capex an equity IRR is reported as null: returns on almost no equity
are arithmetic, not information (the 10,000% IRR error of GPU-cloud models)."""


class MonthlyNotKeptError(InputError):
    """`Projection.monthly`, `.yearly()` or `.tranches` of a projection made with
    `monthly=False`, which kept its summary only."""


MONTHLY_NOT_KEPT = (
    "this projection kept only its summary (project(..., monthly=False)); project the scenarios "
    "with monthly=True (the default) for the monthly lines"
)


def _one_line_each(warnings: list[list[str]]) -> list[list[str]]:
    """`warnings` with every warning one line (econ.text.single_line): a warning may quote what a
    file holds (a curve's caveats). Only the lists that change are copied."""
    for k, found in enumerate(warnings):
        if any("\n" in w or "\r" in w for w in found):
            warnings[k] = [single_line(w) for w in found]
    return warnings


@dataclass(eq=False)
class Projection:
    """Result of a projection: monthly arrays (n, T+1) and summary arrays (n,).

    A projection is a finished result, treated as immutable: its warnings and its frames
    (`summary`, `monthly`, `yearly`) are built on first use and kept, so a later change to its
    arrays or dicts does not reach them. Each access gives a shallow copy of the kept frame, under
    pandas' copy-on-write: changing the frame you got (a column, its index names) leaves the kept
    one as it was, at no cost until you write. The object columns' dicts and lists of `summary`
    are shared with `warnings`. Two projections compare equal only if they are the same object.

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
    scenarios : the Scenarios projected, in order, where the batch was built from them
        (`project([a, b])`); empty for a batch of columns (`ScenarioBatch.repeat`). The writers
        check the scenarios they are given against these (econ.reporting.check_projected).
    tranche_arrays : the capital-stack tranches' own schedules (econ.tranche_tables), a part
        per chunk with tranches, kept with the monthly lines: `tranches`, `tranche_summary`
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
    """metric key -> bool (n,): scenarios that do not give the metric's input (the resale spread
    without a resale table), whose null is by design and not a warning (docs/market.md)"""

    explained: bool = field(default=False, repr=False)
    """whether warning_source's warnings already name every null (a join of chunks, each
    explained): explaining them again would add nothing, at some cost per scenario"""
    scenarios: tuple = field(default=(), repr=False)
    tranche_arrays: tuple[tranche_tables.TrancheArrays, ...] = field(default=(), repr=False)

    overflowed: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)
    _yearly: dict[str, pd.DataFrame] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # Inputs that overflow give inf; outputs are strict JSON, so inf becomes a named null.
        self.overflowed = mask_infinite(self.metrics)
        for key, rows in mask_infinite(self.components).items():
            self.overflowed[f"component:{key}"] = rows

    def __repr__(self) -> str:
        # The dataclass repr printed every array (tens of thousands of characters for one
        # scenario), flooding a notebook cell.
        kept = "monthly lines" if self.lines else "summary only (monthly=False)"
        return (
            f"<Projection: {counted(len(self), 'scenario')}, months 0-{int(self.months[-1])}, "
            f"{kept}; [{first_names(self.names, len(self))}]; "
            "see .summary, .monthly, .yearly(), .warnings, .metrics>"
        )

    @cached_property
    def warnings(self) -> list[list[str]]:
        """Per-scenario warnings, formatted on first use (batch runs that keep only metrics skip it).

        Every null metric is named in one of them, with its reason (econ.undefined). Each is one
        line (WARNING_SEPARATOR)."""
        found = self.warning_source() if self.warning_source else [[] for _ in self.names]
        if not self.explained:
            found = explain(found, self.metrics, self.overflowed, self.components)
        return _one_line_each(list(found))

    def __getstate__(self) -> dict:
        """What pickle keeps (a result back from a process pool, a cache on disk): the warnings
        formatted, in place of the function that formats them (a closure over the chunk's
        ledger, which pickle refuses), and none of the frames built from the arrays (`summary`,
        `monthly`, `yearly()`, `tranches`: rebuilt from them on first use, they would only
        double the bytes). An unpickled projection gives the same frames and warnings."""
        state = dict(self.__dict__)
        state["warnings"] = self.warnings
        state["warning_source"] = None
        state["explained"] = True
        state["_yearly"] = {}
        for name in ("_summary", "_monthly", "_tranche_frames"):
            state.pop(name, None)
        return state

    def __len__(self) -> int:
        return len(self.names)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per scenario, the summary metrics (keys in docs/glossary.md, "Summary keys"): a
        float64 column per metric (NaN where undefined, the reason in the row's warnings), so that
        `describe`, `select_dtypes("number")` and plotting work; the components (dicts) and the
        warnings (lists) are object columns. `summary_records` and `econ.reporting.flat_summary`
        give None for undefined values, as JSON and the files do.

        Built on first use and kept; each access is a shallow copy (see the class). For the
        numbers alone, `pd.DataFrame(projection.metrics, index=projection.names)` skips the
        warnings."""
        return self._summary.copy(deep=False)

    @cached_property
    def _summary(self) -> pd.DataFrame:
        import pandas as pd

        columns: dict[str, object] = {}
        for name in SUMMARY_COLUMNS:
            if name == "cost_usd_per_mtok_by_component":
                columns[name] = self.component_dicts()
            elif name == "warnings":
                columns[name] = self.warnings
            else:
                columns[name] = np.asarray(self.metrics[name], dtype=float)
        return pd.DataFrame(columns, index=pd.Index(self.names, name="scenario"))

    def component_dicts(self) -> list[dict[str, float | None]]:
        rows = np.column_stack([self.components[c] for c in COMPONENTS]).tolist()
        # (v != v: NaN, tested on Python floats, far faster than np.isnan on each)
        return [
            {c: (None if v != v else v) for c, v in zip(COMPONENTS, row, strict=True)}
            for row in rows
        ]

    @property
    def monthly(self) -> pd.DataFrame:
        """Monthly schedule indexed by (scenario, month), each scenario to its own horizon.

        Built on first use and kept; each access is a shallow copy (see the class)."""
        if not self.lines:
            raise MonthlyNotKeptError(MONTHLY_NOT_KEPT)
        return self._monthly.copy(deep=False)

    @cached_property
    def _monthly(self) -> pd.DataFrame:
        import pandas as pd

        width = len(self.months)
        keep = self.months[None, :] <= self.horizon_months[:, None]
        flat = np.flatnonzero(keep)  # (row-major: scenario, then month)
        rows, cols = np.divmod(flat, width)
        dates = (self.start_dates[rows] + cols.astype("timedelta64[M]")).astype("datetime64[D]")
        # One float block filled column by column: pandas keeps it as it is, where a dict of
        # columns is copied into a block again (most of the time at 100,000 scenarios).
        values = np.empty((len(MONTHLY_COLUMNS), len(flat))).T
        for j, name in enumerate(MONTHLY_COLUMNS):
            np.take(np.asarray(self.lines[name], dtype=float).reshape(-1), flat, out=values[:, j])
        # The index as MultiIndex.from_arrays builds it (levels sorted), from the codes of the n
        # names rather than by factorizing one name per month.
        codes, levels = pd.factorize(self.names, sort=True)
        index = pd.MultiIndex(
            levels=[pd.Index(levels), pd.Index(self.months)],
            codes=[codes[rows], cols],
            names=["scenario", "month"],
            verify_integrity=False,
        )
        frame = pd.DataFrame(values, index=index, columns=list(MONTHLY_COLUMNS), copy=False)
        frame.insert(0, "date", dates)
        return frame

    @property
    def tranches(self) -> pd.DataFrame:
        """Each capital-stack tranche's monthly lines, indexed by (scenario, tranche, month), each
        scenario to its own horizon: `kind` (the tranche's type), `date`, and the lines of
        econ.tranche_tables.TRANCHE_COLUMNS (econ.capital's own schedules of each tranche, which
        the monthly schedule's debt lines add up). Only scenarios with `financing.tranches` have
        rows: financing.debt_share's loan is the monthly schedule's debt lines.

        Built on first use and kept; each access is a shallow copy (see the class)."""
        return self._tranche_frames[0].copy(deep=False)

    @property
    def tranche_summary(self) -> pd.DataFrame:
        """One row per scenario and tranche (as `tranches`): `kind`, then the figures of
        econ.tranche_tables.TRANCHE_METRICS: amount, effective rate, the lines summed over the
        horizon, the peak balance, and a convertible's settlement (month, share price,
        converted, shares) or an equity tranche's shares."""
        return self._tranche_frames[1].copy(deep=False)

    @property
    def tranche_counts(self) -> np.ndarray:
        """How many capital-stack tranches each scenario has (int (n,)): the rows per month it
        has in `tranches` (0 without `financing.tranches`, or where the monthly lines were not
        kept)."""
        counts = np.zeros(len(self), np.int64)
        for part in self.tranche_arrays:
            counts[part.first : part.first + len(part.names)] += part.counts()
        return counts

    @cached_property
    def _tranche_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        if not self.lines:
            raise MonthlyNotKeptError(MONTHLY_NOT_KEPT)
        return tranche_tables.tranche_frames(self.tranche_arrays)

    @property
    def annual(self) -> pd.DataFrame:
        """Yearly totals by asset year (`yearly("asset")`)."""
        return self.yearly("asset")

    def yearly(self, years: str = "asset") -> pd.DataFrame:
        """Yearly totals indexed by (scenario, year), by asset or calendar year (annual_table).

        Built on first use for each `years` and kept; each access is a shallow copy."""
        if years not in self._yearly:
            self._yearly[years] = annual_table(self.monthly, years)
        return self._yearly[years].copy(deep=False)

    def summary_records(self) -> list[dict]:
        """JSON-ready summaries: [{name, summary: {...}}] with None for undefined metrics."""
        records = []
        for i, name in enumerate(self.names):
            summary = {}
            for key in SUMMARY_COLUMNS:
                if key == "cost_usd_per_mtok_by_component":
                    summary[key] = {
                        c: strict_json.number(self.components[c][i]) for c in COMPONENTS
                    }
                elif key == "warnings":
                    summary[key] = list(self.warnings[i])
                else:
                    summary[key] = strict_json.number(self.metrics[key][i])
            records.append({"name": str(name), "summary": summary})
        return records


YEARS = ("asset", "calendar")
"""How annual outputs group months: asset years (year 1 is months 0-12, year k months
12k-11..12k, counted from the purchase month) or calendar years (January to December)."""


def annual_table(monthly: pd.DataFrame, years: str = "asset") -> pd.DataFrame:
    """Yearly totals of a monthly schedule indexed by (scenario, year), with an EBIT row.

    Flows are summed; balances (debt, deferred tax) are taken at year end; ratios are left out.
    ebit_usd = EBITDA - depreciation - impairment + gain on disposal (earnings before interest
    and tax: operating income, in which ASC 360-10-45-5 reports a gain or loss on the sale of a
    long-lived asset).

    Parameters
    ----------
    monthly : the frame of Projection.monthly (indexed by scenario and month, or with those as
        columns)
    years : "asset" (year 1 = months 0-12, the workbook's and the gains page's year) or
        "calendar" (the year of each month's date; year 1 then starts at the start date)
    """
    import pandas as pd

    if years not in YEARS:
        raise InputError(f"years: unknown value {years!r}; expected one of: {', '.join(YEARS)}")
    frame = monthly.reset_index() if "month" not in monthly.columns else monthly
    frame = frame.drop(columns=[c for c in (*RATIO_LINES, "covenant_breach") if c in frame])
    keys = [frame["scenario"].to_numpy(), pd.Index(_years(frame, years), name="year")]
    values = frame.drop(columns=["scenario", "month", "date"])
    grouped = values.groupby(keys, sort=False)
    annual = grouped.sum()
    annual.index.names = ["scenario", "year"]
    for name in BALANCE_LINES:
        if name in annual:
            annual[name] = grouped[name].last()
    annual["ebit_usd"] = (
        annual["ebitda_usd"]
        - annual["depreciation_usd"]
        - annual["impairment_usd"]
        + annual["gain_on_disposal_usd"]
    )
    return annual


DEBT_SCHEDULE = {
    "months": "Months of service",
    "opening_balance_usd": "Opening balance [USD]",
    "draws_and_added_usd": "Draws and interest added [USD]",
    "interest_usd": "Interest [USD]",
    "cash_interest_usd": "Cash interest [USD]",
    "commitment_fee_usd": "Commitment fees [USD]",
    "principal_usd": "Principal [USD]",
    "principal_outside_service_usd": "Principal outside the service: balloons, settlement [USD]",
    "closing_balance_usd": "Closing balance [USD]",
    "debt_service_usd": "Debt service [USD]",
    "cfads_usd": "Cash available for debt service, months with service [USD]",
    "dscr": "DSCR, year [x]",
    "min_dscr_in_year": "Lowest monthly DSCR [x]",
    "llcr": "LLCR, year end [x]",
    "dscr_less_floor": "DSCR, year, less the covenant floor [x]",
}
"""Columns of debt_schedule_table, in order, and their labels with units (Results, workbook)."""


def debt_schedule_table(
    monthly: pd.DataFrame,
    years: str = "asset",
    dscr_floor: float | Mapping[str, float | None] | None = None,
) -> pd.DataFrame:
    """Yearly debt schedule of a monthly schedule, indexed by (scenario, year).

    closing_balance_usd is the debt outstanding at the year's last month; opening_balance_usd the
    previous year's closing (0 in the first year, before the month-0 draw); draws_and_added_usd
    is what the financing identity closing = opening + additions - principal leaves (loan draws,
    and interest added to the balance rather than paid). interest_usd (interest expense, with
    interest added to the loan and fees amortized), cash_interest_usd (interest and coupons
    paid), commitment_fee_usd (a capital stack's fees on undrawn commitments, paid in cash),
    principal_usd and debt_service_usd are summed; principal_outside_service_usd is the principal
    the debt service leaves out (balloons, bullets, the balance settled at the projection's end,
    as econ.capital's DSCR does): cash interest + commitment fees + principal less debt service,
    never negative, since debt service is cash interest + commitment fees + scheduled principal.
    cfads_usd = EBITDA - income tax paid, summed over the year's months with debt service (the
    months the monthly DSCR tests; NaN in a year without any), so that dscr = cfads_usd /
    debt_service_usd (annual DSCR) never counts months after the debt is repaid;
    min_dscr_in_year the lowest monthly DSCR; llcr the LLCR at the year's last month;
    dscr_less_floor = dscr - dscr_floor (NaN without a floor; the covenant's
    own headroom is the summary's dscr_headroom, over its test windows). months counts the year's
    months of service (month 1 on), so a year with fewer than 12 is partial.

    Parameters
    ----------
    monthly : the frame of Projection.monthly
    years : "asset" or "calendar", as annual_table
    dscr_floor : the covenant's DSCR floor [x], optional; or one per scenario, by name
    """
    import pandas as pd

    annual = annual_table(monthly, years)
    frame = monthly.reset_index() if "month" not in monthly.columns else monthly
    keys = [frame["scenario"].to_numpy(), pd.Index(_years(frame, years), name="year")]
    grouped = frame.groupby(keys, sort=False)
    closing = annual["debt_balance_usd"]
    opening = closing.groupby(level="scenario", sort=False).shift(1, fill_value=0.0)
    service = annual["debt_service_usd"]
    served = frame["debt_service_usd"] > 1e-6
    cfads_served = (frame["ebitda_usd"] - frame["tax_usd"]).where(served, 0.0)
    cfads = pd.Series(
        cfads_served.groupby(keys, sort=False).sum().to_numpy(), index=annual.index
    ).where(service > 1e-6)
    dscr = cfads / service
    if isinstance(dscr_floor, Mapping):
        names = annual.index.get_level_values("scenario")
        floor = np.array([np.nan if dscr_floor.get(s) is None else dscr_floor[s] for s in names])
    else:
        floor = np.nan if dscr_floor is None else float(dscr_floor)
    table = pd.DataFrame(
        {
            "months": grouped["month"].agg(lambda m: int((m >= 1).sum())).to_numpy(),
            "opening_balance_usd": opening,
            # (half-cent residues of the subtraction are zero: no "-0" draws in years without any)
            "draws_and_added_usd": snap_to_zero(closing - opening + annual["principal_usd"]),
            "interest_usd": annual["interest_usd"],
            "cash_interest_usd": annual["cash_interest_usd"],
            "commitment_fee_usd": annual["commitment_fee_usd"],
            "principal_usd": annual["principal_usd"],
            "principal_outside_service_usd": snap_to_zero(
                annual["cash_interest_usd"]
                + annual["commitment_fee_usd"]
                + annual["principal_usd"]
                - service
            ),
            "closing_balance_usd": closing,
            "debt_service_usd": service,
            "cfads_usd": cfads,
            "dscr": dscr,
            "min_dscr_in_year": grouped["dscr"].min().to_numpy(),
            "llcr": grouped["llcr"].agg(lambda v: v.iloc[-1]).to_numpy(),
            "dscr_less_floor": dscr - floor,
        },
        index=annual.index,
    )
    return table


def _years(frame: pd.DataFrame, years: str) -> np.ndarray:
    """The asset or calendar year of each month of a monthly frame with month and date columns."""
    import pandas as pd

    if years == "asset":
        return np.maximum(frame["month"].to_numpy() - 1, 0) // MONTHS_PER_YEAR + 1
    return pd.to_datetime(frame["date"]).dt.year.to_numpy()


CHUNK_SCENARIOS = 4096
"""Scenarios projected at once. A chunk's (scenarios x months) arrays (2.4 MB at 73 months) stay
in the CPU caches far more than a whole batch's would, which makes a large batch several times
faster than one pass; 4,096 is as fast as 8,192 in one process and loses less to the other
process when two share the caches, as two Dask workers do (measured, docs/benchmarks.md)."""
CHUNK_ROW_MONTHS = CHUNK_SCENARIOS * 73
"""Rows x months a chunk projects at most (a chunk holds one scenario at least): the arrays of
CHUNK_SCENARIOS scenarios of one row over the seed's 73 months. Each vintage of a scenario is a
row of its own and a longer horizon makes every row longer: a refresh of a scenario with 40
vintages over 600 months, 600 cases of 41 rows in one chunk, took 5 GB (each (rows, months) array
118 MB), where a chunk of this size holds some 80 to 350 MB of working arrays
(`chunk_working_bytes`)."""
KEEP_MEMORY_FROM_SCENARIOS = 1024
"""Batches this large switch on `econ.memory.keep_freed_memory` (once per process)."""


def project(
    scenarios: Scenario | ScenarioBatch | Iterable[Scenario], monthly: bool = True
) -> Projection:
    """Project scenarios month by month and summarize them.

    Accepts one Scenario, several (distinct names: they key the frames), or a ScenarioBatch; one
    scenario is a batch of one. Large batches are projected in chunks of CHUNK_SCENARIOS and
    joined. With `monthly=False` only the summary is kept (memory grows with scenarios, not
    scenarios x months), as for sweeps and Monte Carlo; `.monthly` then raises
    MonthlyNotKeptError. Bad input raises econ.InputError (a ValueError) saying what was
    expected.

    The Projection returned holds pandas frames, built on first use:

    - `.summary`: one row per scenario (indexed by name), a float column per summary metric,
      its unit in its name (`npv_usd` [USD], `lcot_usd_per_mtok` [USD per million output
      tokens], `irr_project_annual` [fraction a year, 0.12 for 12%], `payback_months`
      [months]); NaN where undefined, the reason in the row's `warnings`.
    - `.monthly`: the monthly lines by (scenario, month), month 0 the purchase month, each line
      for that month (`revenue_usd`, `ebitda_usd`, `cash_flow_project_usd` [USD]; `tokens`
      [output tokens]; `dscr` [x]) and its `date`.
    - `.annual`: the monthly lines by (scenario, asset year), flows summed and balances at
      year end, with `ebit_usd`; `.yearly("calendar")` by calendar year.
    - `.warnings`: one list of messages per scenario.

    docs/glossary.md defines every summary key with its unit ("Summary keys") and the monthly
    lines (its first table); docs/methodology.md gives the formulas. A Projection pickles (a result
    back from a process pool), its warnings formatted.
    """
    if not isinstance(monthly, bool | np.bool_):
        raise InputError(
            f"monthly = {monthly!r}: expected True (keep the monthly lines) or False (the "
            "summary only)"
        )
    batch = (
        scenarios
        if isinstance(scenarios, ScenarioBatch)
        else ScenarioBatch.from_scenarios(scenarios)
    )
    if monthly:
        _check_monthly_size(batch)
    if batch.n >= KEEP_MEMORY_FROM_SCENARIOS:
        keep_freed_memory()
    # Overflow and 0/0 from extreme inputs become named nulls (econ.undefined), not console noise.
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            bounds = chunk_bounds(batch)
            apart = _construction_apart(batch)
            if apart.any():
                bounds = _runs(bounds, apart)
            if len(bounds) == 1:
                result = _project(batch, monthly)
            else:
                result = _join(
                    [_project(_chunk(batch, *chunk, apart), monthly) for chunk in bounds]
                )
    except InputError as exc:  # an input found wrong only while projecting: name its file
        raise in_file(exc, batch.source_file or _refused_file(batch, monthly)) from None
    if len(batch.scenarios) == batch.n:
        result.scenarios = tuple(batch.scenarios)
    return result


def chunk_bounds(batch: ScenarioBatch) -> list[tuple[int, int]]:
    """(start, stop) of the scenarios of each chunk a batch is projected in: whole scenarios, at
    most CHUNK_SCENARIOS of them and at most CHUNK_ROW_MONTHS rows x months (the batch's longest
    horizon), one scenario at least; [(0, n)] for a batch of one chunk."""
    n = batch.n
    months = int(np.max(batch.horizon_months)) + 1 if n else 1
    rows_per_chunk = max(1, CHUNK_ROW_MONTHS // months)
    if batch.one_row_per_scenario:
        per = min(CHUNK_SCENARIOS, rows_per_chunk)
        return [(start, min(start + per, n)) for start in range(0, n, per)] or [(0, 0)]
    ends = np.cumsum(np.bincount(batch.row_scenario, minlength=n))  # rows up to each scenario
    bounds, start = [], 0
    while start < n:
        before = int(ends[start - 1]) if start else 0
        fit = int(np.searchsorted(ends, before + rows_per_chunk, side="right"))
        stop = min(max(fit, start + 1), start + CHUNK_SCENARIOS, n)
        bounds.append((start, stop))
        start = stop
    return bounds


def _construction_apart(batch: ScenarioBatch) -> np.ndarray:
    """Scenarios (bool (n,)) projected apart from the rest of their batch, as each would be on
    its own: those with a construction period (fleet.service_start_month, or capex.payments
    after the purchase month) in a batch with a capital stack or vintages; in a batch where
    some scenario sizes or shapes its debt, those whose capex is paid after month 0.

    econ.construction's loan is built only in a batch of neither (_construction_loan), so there
    such a scenario lost it: `econ project built.toml stack.toml` paid the loan's interest from
    the first draw, capitalized none and depreciated the capex alone. Those scenarios have
    neither (the scenario checks refuse both with a construction period), so they are projected
    without the stack (`_chunk`). Beside a scenario that sizes its debt, that loan (not sized)
    made _sizing refuse the whole batch ("project it apart")."""
    shares = batch.extras["capex.payment_shares"]
    later = np.nan_to_num(batch.extras["capex.payment_months"]) > 0
    row = ~np.isnan(batch["fleet.service_start_month"]) | np.any((shares > 0) & later, axis=1)
    if not batch.stack and batch.one_row_per_scenario:
        sizes = (
            ~np.isnan(batch["financing.size_to_min_dscr"])
            | ~np.isnan(batch["financing.max_ltv"])
            | np.isin(batch["financing.repayment"], SHAPED)
        )
        if not sizes.any():
            return np.zeros(batch.n, bool)
        return row | (batch["fleet.purchase_month"] > 0)
    rows = np.bincount(batch.row_scenario, minlength=batch.n)
    flagged = np.bincount(batch.row_scenario, weights=row, minlength=batch.n) > 0
    return flagged & (rows == 1)


def _runs(bounds: list[tuple[int, int]], apart: np.ndarray) -> list[tuple[int, int]]:
    """The chunks `bounds` cut where `apart` (bool (n,)) changes from a scenario to the next, so
    that each chunk's scenarios are all apart or none are (in order: the join keeps it)."""
    out = []
    for start, stop in bounds:
        cuts = start + 1 + np.flatnonzero(apart[start + 1 : stop] != apart[start : stop - 1])
        edges = [start, *cuts.tolist(), stop]
        out += list(zip(edges[:-1], edges[1:], strict=True))
    return out


def _chunk(batch: ScenarioBatch, start: int, stop: int, apart: np.ndarray) -> ScenarioBatch:
    """Scenarios start..stop-1 of `batch`, without the capital stack where they are `apart`
    (_construction_apart: none of them has a tranche)."""
    part = batch.slice(start, stop)
    return replace(part, stack=()) if apart[start] else part


def _refused_file(batch: ScenarioBatch, monthly: bool) -> str | None:
    """The file of the scenarios a batch read from several files was refused for, found by
    projecting each file's scenarios on their own until one is refused again: the error itself
    names a scenario at most (`econ project a.toml b.toml` said which, not where). Runs only on
    that error's path; a batch of no files (a sweep's, a Monte Carlo's) is left as it is."""
    if len(batch.scenarios) != batch.n:
        return None
    files = [s.source_file for s in batch.scenarios]
    start = 0
    while start < batch.n:
        stop = start + 1
        while stop < batch.n and files[stop] == files[start] and stop - start < CHUNK_SCENARIOS:
            stop += 1
        if files[start] is not None:
            try:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    _project(batch.slice(start, stop), monthly)
            except InputError:
                return files[start]
        start = stop
    return None


MONTHLY_COPIES = 2
"""Copies of the monthly lines a multi-chunk projection holds at its peak: the chunks' and
their join (the chunks' are freed once joined, but the C allocator keeps their pages: they
count in the process's memory all the same)."""
MONTHLY_FRAME_ARRAYS = 6
"""8-byte arrays per month of a scenario that `Projection.monthly` holds or builds beside its
MONTHLY_COLUMNS: its date column, and the positions, scenario rows, months, month dates and
scenario codes it is built from."""
SUMMARY_SCENARIO_BYTES = 4_000
"""Memory of one scenario's row of `Projection.summary` [bytes]: Python objects (its warnings'
text, the components' dict), not arrays to count (2,400 bytes measured on the seed, whose
warnings are 874 characters)."""
MONTHLY_MEMORY_MARGIN = 1.2
"""Margin over the counted bytes, for what the count leaves out (a chunk's working arrays, the
allocator's rounding): 100,000 seed scenarios of 73 months peaked at 7.2 GB (resident memory,
`.monthly` and `.summary` built), counted 7.4 GB, 8.9 GB with the margin."""


TRANCHE_ARRAYS = 12
"""Arrays a capital-stack tranche keeps for `Projection.tranches`, each as long as the later of
the horizon and its maturity: 47 for the 4 tranches of the capital-stack scenario (measured), its
other lines sharing one array of zeros."""
TRANCHE_FRAME_ARRAYS = 6
"""8-byte arrays per tranche and month of the horizon that `Projection.tranches` holds or builds
beside its lines: its kind and date columns, its index's codes, and the positions it is built
from."""


def monthly_memory_bytes(n: int, months: int, tranches: int = 0, tranche_months: int = 0) -> int:
    """Memory a projection of n scenarios of `months` months (month 0 included) with its monthly
    lines takes once its `monthly`, `summary` and tranche frames are built [bytes], margin
    included.

    Per scenario and month: the lines (MONTHLY_COPIES copies of MONTHLY_COLUMNS, 8 bytes each),
    the monthly frame (MONTHLY_COLUMNS again, and MONTHLY_FRAME_ARRAYS more); per scenario, its
    summary row (SUMMARY_SCENARIO_BYTES); with a capital stack of `tranches` tranches, their
    lines (TRANCHE_ARRAYS over `tranche_months`, the months they are scheduled for, each to the
    later of the horizon and its maturity) and the `tranches` frame (its lines and
    TRANCHE_FRAME_ARRAYS per tranche and month).
    """
    return math.ceil(_monthly_bytes_per_scenario(months, tranches, tranche_months) * n)


def _monthly_bytes_per_scenario(months: int, tranches: int = 0, tranche_months: int = 0) -> float:
    """`monthly_memory_bytes` of one scenario, unrounded [bytes]."""
    per_month = 8 * ((MONTHLY_COPIES + 1) * len(MONTHLY_COLUMNS) + MONTHLY_FRAME_ARRAYS)
    per_tranche_month = 8 * (len(tranche_tables.TRANCHE_LINES) + TRANCHE_FRAME_ARRAYS)
    kept = 8 * TRANCHE_ARRAYS * tranche_months + per_tranche_month * tranches * months
    return MONTHLY_MEMORY_MARGIN * (per_month * months + kept + SUMMARY_SCENARIO_BYTES)


def _tranche_months(batch: ScenarioBatch, months: int) -> int:
    """Months of the schedules of a batch's tranches, each to the later of `months` and its
    maturity."""
    total = 0
    for spec in batch.stack:
        maturity = np.asarray(spec.get("maturity_month", np.nan), dtype=float)
        last = np.nanmax(maturity, initial=0.0) if maturity.size else 0.0
        total += max(months, int(min(last, MAX_MONTHS)) + 1)
    return total


ROW_MONTH_WORKING_BYTES = 260
"""Memory the working arrays of a chunk take per row and month [bytes], freed once the chunk is
projected: some 32 float arrays (rows, months). With SCENARIO_MONTH_WORKING_BYTES, fitted to the
peaks of refresh batches over 601 months (tracemalloc, monthly=False): 201 cases of 11 rows took
434 MB, 600 cases of 2 rows 494 MB; 4,096 seed scenarios of one row over 73 months took 152 MB
(535 bytes a month)."""
SCENARIO_MONTH_WORKING_BYTES = 920
"""Memory the working arrays of a chunk take per scenario and month besides its rows' [bytes]
(the site, the ledger, the loan's schedule: see ROW_MONTH_WORKING_BYTES)."""


def chunk_rows(batch: ScenarioBatch, bounds: list[tuple[int, int]]) -> np.ndarray:
    """Rows of each chunk of `bounds` (`chunk_bounds`): each vintage of a scenario is a row of
    its own."""
    if batch.one_row_per_scenario:
        return np.array([stop - start for start, stop in bounds], dtype=np.int64)
    starts = np.searchsorted(batch.row_scenario, [start for start, _ in bounds] + [batch.n])
    return np.diff(starts)


def chunk_working_bytes(batch: ScenarioBatch) -> tuple[int, int]:
    """Memory the working arrays of a batch's largest chunk take while it is projected [bytes]
    (ROW_MONTH_WORKING_BYTES per row and month, SCENARIO_MONTH_WORKING_BYTES per scenario and
    month, over the batch's longest horizon), and that chunk's rows."""
    if batch.n == 0:
        return 0, 0
    bounds = chunk_bounds(batch)
    rows = chunk_rows(batch, bounds)
    scenarios = np.array([stop - start for start, stop in bounds], dtype=np.int64)
    per_month = ROW_MONTH_WORKING_BYTES * rows + SCENARIO_MONTH_WORKING_BYTES * scenarios
    largest = int(np.argmax(per_month))
    months = int(np.max(batch.horizon_months)) + 1
    return int(per_month[largest]) * months, int(rows[largest])


def _check_monthly_size(batch: ScenarioBatch) -> None:
    """Refuse monthly lines larger than this machine's memory, before projecting (1,000,000
    scenarios of 6 years take some 90 GB with their frames): the message says how to run such a
    batch. The count holds the monthly lines and frames of every scenario and the working arrays
    of its largest chunk, which has a row for each scenario and each of its vintages
    (`chunk_working_bytes`)."""
    if batch.n == 0:
        return
    months = int(np.max(batch.horizon_months)) + 1
    tranches = (len(batch.stack), _tranche_months(batch, months))
    working, rows = chunk_working_bytes(batch)
    need = monthly_memory_bytes(batch.n, months, *tranches) + working
    have = memory.physical_bytes()
    if have is not None and need > have:
        from econ.files import size_text

        fit = math.floor(max(0, have - working) / _monthly_bytes_per_scenario(months, *tranches))
        raise InputError(
            f"the monthly lines of {batch.n:,} scenarios of up to {months} months, with their "
            f"monthly and summary frames and the working arrays of a chunk of {rows:,} rows (a "
            f"row for each scenario and each of its vintages), would take about "
            f"{size_text(need)} ({size_text(need // batch.n)} per scenario), more than this "
            f"machine's {size_text(have)} of memory (about {fit:,} such scenarios fit); expected "
            "a batch whose monthly lines fit: project(..., monthly=False) keeps the summary only "
            "(memory grows with scenarios, not months), and econ.analysis (econ sweep, econ "
            "montecarlo) runs large batches in chunks streamed to a file"
        )


def _join(parts: list[Projection]) -> Projection:
    """One Projection of consecutive chunks (monthly arrays padded to the longest horizon)."""
    import pandas as pd

    months = max((p.months for p in parts), key=len)

    def pad(array, fill=0.0):
        return np.pad(array, ((0, 0), (0, len(months) - array.shape[1])), constant_values=fill)

    vintages = [p.vintages for p in parts if p.vintages is not None]
    starts = itertools.accumulate([len(p) for p in parts[:-1]], initial=0)  # each part's first
    joined = Projection(
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
        explained=True,
        tranche_arrays=tuple(
            arrays.moved(first)
            for first, p in zip(starts, parts, strict=True)
            for arrays in p.tranche_arrays
        ),
    )
    # The parts stay alive for their warnings (built on first use), but their lines are joined:
    # kept, they held a second copy of every monthly line for as long as the projection lived.
    for part in parts:
        part.lines = {}
    return joined


def _project(b: ScenarioBatch, monthly: bool = True) -> Projection:
    """One chunk through the stages; `monthly=False` keeps no monthly lines (nor computes those
    only they show)."""
    horizon = b.horizon_months
    months = np.arange(int(horizon.max()) + 1)
    fleet = _fleet(b, months)
    revenue = _revenue(b, months, fleet)
    capex_row, capex = _capex(b, fleet, months)
    costs = _operating_costs(b, months, fleet, capex_row, revenue)
    rows = {
        "gpus_in_service": fleet.gpus,
        "tokens": fleet.tokens,
        "input_tokens": revenue.input_tokens,
        "token_revenue_usd": revenue.by_source["token_usd"],
        "output_token_revenue_usd": revenue.by_source["output_token_usd"],
        "input_token_revenue_usd": revenue.by_source["input_token_usd"],
        "cached_input_token_revenue_usd": revenue.by_source["cached_input_token_usd"],
        "contract_revenue_usd": revenue.by_source["contract_usd"],
        "spot_revenue_usd": revenue.by_source["spot_rental_usd"],
        "power_usd": costs.power_usd,
        "opex_usd": costs.opex_usd,
        "capex_usd": capex,
        "spot_units": revenue.spot_units * _column(1.0 - b["opex.sga_share_of_revenue"]),
        # (the break-even solves for the output price: input tokens' revenue stays in `fixed`)
        "token_revenue_after_sga_usd": revenue.by_source["output_token_usd"]
        * _column(1.0 - b["opex.sga_share_of_revenue"]),
        "it_kw": fleet.gpus * _column(costs.kw_per_gpu),
        "it_drawn_kw": costs.it_drawn_kw,
        "it_energy_kwh": power_mod.energy_kwh_per_month(costs.it_drawn_kw),
        "racks_in_service": density.racks_in_service(fleet.gpus, b["fleet.gpus_per_rack"]),
    }
    to = _Scenarios(np.arange(b.n) if b.one_row_per_scenario else np.flatnonzero(fleet.first_row))
    site = _site(b, months, rows, to, costs.site_open)
    built, site_interest = _construction_loan(b, months, fleet, capex, site.capex_usd)
    if np.any(site_interest):  # the site's share of the interest is part of its cost
        site = _site(b, months, rows, to, costs.site_open, site_interest)
    if not b.one_row_per_scenario:  # (one row: the site's figures are the row's)
        rows["facility_usd"] = _row_facility(rows, site, to, fleet.scenario)
    capital = _capital_rows(
        b,
        months,
        fleet,
        capex_row if built is None else capex_row + built.capitalized_total_usd - site_interest,
        capex_row,
        revenue,
        lambda: _row_ebitda(rows, site, to, fleet.scenario),
        b["financing.discount_rate_annual"],
    )
    rows.update(capital.lines)
    ledger = _ledger(
        b, months, {k: to.lines(v) for k, v in rows.items()}, site, to, capex_row, built
    )
    metrics, components, facts = _summary_metrics(b, ledger, to, fleet, costs)
    row_spread = _resale_spread(b, months, fleet, revenue, capital.resale)
    spread, no_table = _spread_metrics(b, fleet, row_spread)
    metrics.update(spread)
    monthly_lines = _monthly_lines(ledger) if monthly else {}
    warning_source = _with_no_resale(
        _warning_source(b, ledger, metrics, facts, fleet, costs, capital, site), no_table
    )
    tranches = None  # the tranches' own lines, laid out when asked for (econ.tranche_tables)
    if monthly and b.stack:
        tranches = tranche_tables.tranche_arrays(
            b.names, b.start_dates, horizon, ledger.stack, b.stack
        )
    vintage_table = None
    if not b.one_row_per_scenario:
        vintage_table = _vintage_table(
            b, rows, fleet.gpu_count, fleet.retire, ledger.discount[fleet.scenario], row_spread
        )
    return Projection(
        names=b.names,
        months=months,
        start_dates=b.start_dates,
        horizon_months=horizon,
        lines=monthly_lines,
        metrics=metrics,
        components=components,
        vintages=vintage_table,
        warning_source=warning_source,
        tranche_arrays=() if tranches is None else (tranches,),
    )


SIZED_DSCR_TOLERANCE = 1e-9
"""Relative shortfall of the lowest DSCR below the sizing target that is rounding, not a miss."""

NO_RESALE = f"{', '.join(resale_mod.SPREAD_KEYS)} are null: no resale curve (market.resale_*)"


def _with_no_resale(warning_source, no_table):
    """The warnings, with NO_RESALE for each scenario without a resale curve."""

    def source():
        found = warning_source()
        for i in np.flatnonzero(no_table).tolist():
            found[i].append(NO_RESALE)
        return found

    return source


@dataclass(frozen=True)
class _Fleet:
    """Fleet and throughput: each row (a scenario's fleet or one of its vintages) from purchase to
    retirement, on the calendar grid (rows, T+1)."""

    scenario: np.ndarray  # (rows,) the scenario of each row
    first_row: np.ndarray  # bool (rows,) a scenario's first row
    purchase: np.ndarray  # int (rows,) purchase month
    start: np.ndarray  # int (rows,) first month in service
    retire: np.ndarray  # int (rows,) last month in service
    held: np.ndarray  # int (rows,) months from purchase to retirement
    since: np.ndarray  # (rows, T+1) months since purchase
    service: np.ndarray  # bool (rows, T+1) months in service
    gpu_count: np.ndarray  # (rows,)
    gpus: np.ndarray  # (rows, T+1) GPUs in service
    utilization: np.ndarray  # (rows, T+1) share of hours serving
    tokens: np.ndarray  # (rows, T+1) tokens produced


def _fleet(b: ScenarioBatch, months) -> _Fleet:
    m = months[None, :]
    sc = b.row_scenario
    purchase = b["fleet.purchase_month"].astype(np.int64)
    retire_given = b["fleet.retire_month"]
    retire = np.where(np.isnan(retire_given), b.horizon_months[sc], retire_given).astype(np.int64)
    since = m - purchase[:, None]
    start_given = b["fleet.service_start_month"]
    start = np.where(np.isnan(start_given), purchase + 1, start_given).astype(np.int64)
    service = (m >= start[:, None]) & (m <= retire[:, None])
    racks = b["fleet.racks"]
    gpu_count = np.where(np.isnan(racks), b["fleet.gpu_count"], racks * b["fleet.gpus_per_rack"])
    # Ramps and churn count from each row's service start: computed from month 1, shifted.
    gpus = _column(gpu_count) * _delay(
        market.utilization_path(
            np.ones(b.rows), b["fleet.deployment_ramp_months"], np.zeros(b.rows), months
        ),
        start - 1,
    )
    gpus = gpus * service
    utilization = _delay(
        market.utilization_path(
            b["utilization.share"],
            b["utilization.ramp_months"],
            b["utilization.churn_annual"],
            months,
        ),
        start - 1,
    )
    utilization = utilization * service
    tps = _column(b["throughput.tokens_per_s_per_gpu"]) * _throughput_multiplier(b, months)
    return _Fleet(
        scenario=sc,
        first_row=np.r_[True, sc[1:] != sc[:-1]],
        purchase=purchase,
        start=start,
        retire=retire,
        held=retire - purchase,
        since=since,
        service=service,
        gpu_count=gpu_count,
        gpus=gpus,
        utilization=utilization,
        tokens=gpus * tps * utilization * SECONDS_PER_MONTH,
    )


REVENUE_SOURCES = ("token_usd", "contract_usd", "spot_rental_usd")
"""The keys of _Revenue.by_source that sum to a row's revenue (token revenue of every kind)."""


@dataclass(frozen=True)
class _Revenue:
    """Revenue: price paths and each row's revenue by source (rows, T+1)."""

    token_price: np.ndarray  # USD/Mtok
    rental: np.ndarray  # USD/GPU-hour
    by_source: dict[str, np.ndarray]  # econ.market.revenue_by_source, token_usd of every kind
    spot_units: np.ndarray  # output token revenue per USD/Mtok of month-1 price (break-even)
    input_tokens: np.ndarray  # input tokens of the output tokens produced; NaN where unknown


def _revenue(b: ScenarioBatch, months, fleet: _Fleet) -> _Revenue:
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
            contract,
            rental,
            b["market.contract_term_months"].astype(np.int64),
            months,
            first_service_month=fleet.start,
        )
    spot_sells_hours = b.extras["market.spot_sells_gpu_hours"]
    by_source = market.revenue_by_source(
        fleet.tokens,
        fleet.gpus,
        fleet.utilization,
        token_price,
        b["market.contract_share"],
        contract,
        rental,
        spot_sells_hours,
    )
    spot_units = market.revenue_per_token_price_usd(
        fleet.tokens,
        token_price,
        b["market.contract_share"],
        spot_sells_hours,
        b["market.price_decline_annual"],
    )
    # The token mix: input and cached input tokens beside the output tokens; token_usd holds
    # every kind, so the sums of revenue are unchanged, and output_token_usd the output's alone.
    output = by_source["token_usd"]
    ratio = b["throughput.input_tokens_per_output_token"]
    input_price = b["market.input_price_usd_per_mtok"]
    by_source["output_token_usd"] = output
    cached = b["market.cached_input_price_usd_per_mtok"]
    if np.any(input_price != 0) or np.any(np.nan_to_num(cached) != 0):  # (else all 0: skipped)
        input_path, cached_path = market.input_price_paths(
            input_price,
            cached,
            b["market.input_price_decline_annual"],
            b["market.cached_input_price_decline_annual"],
            market.relative_price_path(token_price, b["market.price_decline_annual"]),
            months,
        )
        mix = market.token_mix_revenue(
            fleet.tokens,
            ratio,
            b["market.cache_hit_share"],
            input_path,
            cached_path,
            b["market.contract_share"],
            spot_sells_hours,
        )
        input_tokens = mix["input_tokens"]
        by_source["input_token_usd"] = mix["input_usd"]
        by_source["cached_input_token_usd"] = mix["cached_input_usd"]
        by_source["token_usd"] = output + mix["input_usd"] + mix["cached_input_usd"]
    else:
        input_tokens = market.input_tokens_served(fleet.tokens, ratio)
        by_source["input_token_usd"] = by_source["cached_input_token_usd"] = np.zeros_like(output)
    return _Revenue(token_price, rental, by_source, spot_units, input_tokens)


def _capex(b: ScenarioBatch, fleet: _Fleet, months):
    """Each row's capitalized cost (rows,) and its payments (rows, T+1): in the purchase month,
    or by capex.payments' schedule."""
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
    capex_row = capex_per_gpu * fleet.gpu_count
    shares = b.extras["capex.payment_shares"]
    if shares.shape[1] == 1:  # one payment, in the purchase month
        return capex_row, np.where(fleet.since == 0, _column(capex_row), 0.0)
    from econ import construction

    paid = construction.payment_schedule_usd(
        capex_row, fleet.purchase, b.extras["capex.payment_months"], shares, len(months)
    )
    return capex_row, paid


def _construction_loan(b: ScenarioBatch, months, fleet: _Fleet, capex, site_capex):
    """financing.debt_share's loan drawn with the capex payments, its interest capitalized until
    service starts (econ.construction), where a scenario has a construction period; else None;
    and the part of that interest accrued on the site's capex (n,), 0 without one.

    The loan funds the site's capex (an owned hall, a liquid retrofit, paid in month 0) in the
    same share as the GPUs', as the loan of a scenario without a construction period does, so
    the interest on the site's draws is capitalized into the site's cost, not the GPUs'.
    Only the debt_share loan of a scenario without vintages has one (the scenario models refuse
    a construction period with tranches or vintages), so rows are scenarios here."""
    built = (fleet.start > fleet.purchase + 1) | np.any(capex[:, 1:] > 0, axis=1)
    if b.stack or not b.one_row_per_scenario or not built.any():
        return None, 0.0
    from econ import construction

    share = _column(_loan_share(b, slice(None), capex.sum(axis=1) + site_capex.sum(axis=1)))
    rate = _debt_share_rate_monthly(b)
    loan = construction.construction_loan(
        (capex + site_capex) * share,
        rate,
        fleet.start,
        b["financing.debt_term_months"],
        b.horizon_months,
    )
    if not np.any(site_capex):
        return loan, 0.0
    return loan, construction.capitalized_interest_usd(site_capex * share, rate, fleet.start)


@dataclass(frozen=True)
class _Costs:
    """Operating costs of each row but the facility's, and the power figures behind them."""

    nameplate_kw: np.ndarray  # (rows,) kW per GPU on the IT boundary, from the nameplate
    kw_per_gpu: np.ndarray  # (rows,) kW per GPU while serving (nameplate or measured energy)
    measured_energy: np.ndarray  # bool (rows,) power from measured energy per token
    it_drawn_kw: np.ndarray  # (rows, T+1)
    power_usd: np.ndarray  # (rows, T+1)
    opex_usd: np.ndarray  # (rows, T+1)
    site_open: np.ndarray  # int (n,) month each scenario's site opens


def _debt_share_rate_monthly(b: ScenarioBatch):
    """financing.debt_share's loan rate per month, as quoted (nominal: r/12) [1/month]."""
    rate = b["financing.debt_rate_annual"]
    effective = b["financing.debt_rate_quote"] == 1
    return np.where(effective, monthly_rate(rate), nominal_monthly_rate(rate))


def _last_month(mask, none: int = -1) -> np.ndarray:
    """Each row's last month where `mask` (n, T) holds, `none` where it never does [month index,
    int (n,)]."""
    end = mask.shape[1] - 1
    return np.where(mask.any(axis=1), end - np.argmax(mask[:, ::-1], axis=1), none)


def _operating_costs(b: ScenarioBatch, months, fleet: _Fleet, capex_row, revenue) -> _Costs:
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
    it_drawn_kw = power_mod.it_power_kw(
        fleet.gpus, kw_per_gpu, fleet.utilization, b["power.idle_power_share"]
    )
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
    # Staff run the fleet: paid from the site's opening (opex.site_open_month, or the first GPUs in
    # service) to the last month any of its rows (the fleet or a vintage) is in service, so not
    # after the whole fleet is retired; charged once a scenario, shared among its rows by their
    # GPUs in service each month (on the first row in months none serves: before service, a gap
    # between vintages). All on the first row, a fleet retired in month 18 of 72 carried the
    # GB300s' staff for 54 more months in Projection.vintages and its impairment tests.
    m = months[None, :]
    first = np.flatnonzero(fleet.first_row)
    open_given = b["opex.site_open_month"][first]
    site_open = np.where(
        np.isnan(open_given), np.minimum.reduceat(fleet.start, first), open_given
    ).astype(np.int64)
    # (a scenario of one row is in service where its row is: no reduction over rows)
    in_service = (
        fleet.service
        if len(first) == len(fleet.service)
        else np.logical_or.reduceat(fleet.service, first, axis=0)
    )
    last = np.minimum(_last_month(in_service), b.horizon_months)
    staffed = (m >= site_open[fleet.scenario][:, None]) & (m <= last[fleet.scenario][:, None])
    if len(first) == len(fleet.service):
        staff_share = staffed
    else:
        site_gpus = np.add.reduceat(fleet.gpus, first, axis=0)[fleet.scenario]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(site_gpus > 0, fleet.gpus / site_gpus, fleet.first_row[:, None])
        staff_share = staffed * share
    opex = opex_mod.opex_usd_per_month(
        b["opex.staff_usd_per_month"],
        staff_share,
        b["opex.maintenance_share_of_capex_annual"],
        b["opex.insurance_share_of_capex_annual"],
        capex_row,
        fleet.service,
        fleet.gpus,
        b["opex.software_usd_per_gpu_month"],
        b["opex.warranty_months"],
        fleet.start,
    )
    sga = b["opex.sga_share_of_revenue"]
    if np.any(sga > 0):
        revenue_row = sum(revenue.by_source[k] for k in REVENUE_SOURCES)
        opex = opex + opex_mod.sga_usd_per_month(revenue_row, sga)
    return _Costs(nameplate_kw, kw_per_gpu, measured_energy, it_drawn_kw, power, opex, site_open)


@dataclass(frozen=True)
class _Scenarios:
    """Rows to scenarios: a scenario is the sum of its rows (`first` is each one's first row)."""

    first: np.ndarray

    def lines(self, x):
        """Monthly lines (rows, T+1) summed to (n, T+1)."""
        return x if len(self.first) == len(x) else np.add.reduceat(x, self.first, axis=0)

    total = lines  # (the same sum on (rows,) figures)

    def at_first(self, x):
        """A scenario-level field, read on each scenario's first row."""
        return np.asarray(x)[self.first]


def _site(b: ScenarioBatch, months, rows, to: _Scenarios, open_month, capitalized_interest=0.0):
    """The site (facility) belongs to the scenario: its costs from the rows' summed IT load, from
    the month it opens; `capitalized_interest` (n,) is construction-loan interest on its capex.

    Rack cooling is each row's (a vintage may give its own): the site holds liquid-cooled racks
    where any row has them, and a liquid retrofit is for the most liquid-cooled racks in service
    at once."""
    cooling = b["facility.rack_cooling"]
    liquid = cooling == facility_mod.RACK_COOLING.index("liquid")
    return facility_mod.facility_costs(
        mode=to.at_first(b["facility.mode"]),
        months=months,
        horizon_months=b.horizon_months,
        nameplate_it_kw=to.lines(rows["it_kw"]),
        drawn_it_kw=to.lines(rows["it_drawn_kw"]),
        racks=to.lines(rows["racks_in_service"] * liquid[:, None]).max(axis=1),
        open_month=open_month,
        capitalized_interest_usd=capitalized_interest,
        **{name: to.at_first(b[f"facility.{name}"]) for name in FACILITY_INPUTS},
        rack_cooling=np.maximum.reduceat(cooling, to.first),
    )


def _row_facility(rows, site, to: _Scenarios, scenario):
    """The site's rent shared among rows by their IT load in service each month."""
    it_kw_site = to.lines(rows["it_kw"])
    with np.errstate(divide="ignore", invalid="ignore"):
        load_share = np.nan_to_num(rows["it_kw"] / it_kw_site[scenario])
    return site.facility_usd[scenario] * load_share


def _row_ebitda(rows, site, to: _Scenarios, scenario):
    """Each row's EBITDA (for impairment tests only)."""
    revenue_row = (
        rows["token_revenue_usd"] + rows["contract_revenue_usd"] + rows["spot_revenue_usd"]
    )
    facility_row = (
        rows["facility_usd"] if "facility_usd" in rows else _row_facility(rows, site, to, scenario)
    )
    return revenue_row - rows["power_usd"] - facility_row - rows["opex_usd"]


@dataclass(frozen=True)
class _Capital:
    """Capital: per-row asset lines on the calendar grid, and facts for warnings."""

    lines: dict[str, np.ndarray]
    impairment_month: np.ndarray
    impairment_loss: np.ndarray
    carrying_at_sale: np.ndarray
    resale: _Resale | None = None
    revenue_undepreciated: np.ndarray | None = None  # (rows,) earned before depreciation [USD]
    batches: _Batches | None = None  # the GPUs by the month they enter service
    # (rows, 2) first tax year's MACRS deduction, half-year and mid-quarter Q4 [USD]: NaN but
    # where all GPUs enter service in quarter 4 under the half-year convention; None: no row
    half_year_q4: np.ndarray | None = None


@dataclass(frozen=True)
class _Resale:
    """Each row's resale value by age (market.resale_value_table or resale_series)."""

    has: np.ndarray  # bool (rows,) the row has a resale table
    share: np.ndarray  # (rows, T+1) share of the new hardware price by age in months (1: none)
    hardware_usd: np.ndarray  # (rows,) hardware cost with spares: what resells [USD]

    def proceeds_usd(self, held):
        """Sale proceeds at retirement after `held` months (NaN where no table)."""
        value = resale_mod.proceeds_at_retirement_usd(self.hardware_usd, self.share, held)
        return np.where(self.has, value, np.nan)


def _resale_rows(b: ScenarioBatch, months, fleet: _Fleet) -> _Resale | None:
    """The rows' resale curves at market.resale_band, or None where no row has a table."""
    ages = b.extras.get("market.resale_table_ages")
    if ages is None or np.isnan(ages).all():
        return None
    has = ~np.isnan(ages).all(axis=1)
    curves = [
        resale_mod.resale_share(ages, b.extras[f"market.resale_table_{name}"], months)
        for name in ("share", "share_low", "share_high")
    ]
    share = np.where(has[:, None], resale_mod.band_shares(*curves, b["market.resale_band"]), 1.0)
    hardware = capex_mod.hardware_usd_per_gpu(
        b["capex.gpu_price_usd"], b["capex.system_price_usd"], b["capex.gpus_per_system"]
    ) * (1.0 + b["capex.spares_share"])
    return _Resale(has, share, hardware * fleet.gpu_count)


def _capital_rows(b, months, fleet: _Fleet, cost, paid, revenue: _Revenue, ebitda, discount_annual):
    """Book and tax depreciation, impairment and sale of each row's GPUs.

    `cost` (rows,) is what is depreciated: `paid` (rows,), the capex, with any construction
    interest capitalized into it. depreciation.sale_value_share prices the sale on `paid`: a
    buyer pays a share of what the GPUs cost, not of the seller's construction-loan interest.

    Schedules run on months since purchase (econ.depreciation's month 0 is the purchase month)
    and are shifted to the calendar at the end; market curves and usage are shifted the other way.
    `ebitda` is a function giving each row's EBITDA (computed only for impairment tests).
    """
    purchase, held = fleet.purchase, fleet.held
    since = lambda x: _advance(x, purchase)  # noqa: E731
    # Depreciation starts when the GPUs serve, after any construction period (months since
    # purchase); under a deployment ramp each month's GPUs from their own month (_ramp_batches).
    batches = _ramp_batches(b, fleet)
    in_service = batches.in_service[:, 0]
    value_table = dep.value_share_from_table(
        b.extras["market_value_months"], b.extras["market_value_shares"], months
    )
    curves = {
        "market_value_table": value_table,
        "token_price": since(revenue.token_price),
        "rental_price": since(revenue.rental),
    }
    resale = _resale_rows(b, months, fleet)
    if resale is not None:
        curves["resale_value"] = resale.share
    book, tax_dep, own, quarter_4 = _depreciation_rows(
        b, months, fleet, cost, batches, curves, since
    )
    # Sale when the row retires: at the given share of cost, at the resale value of its hardware
    # at its age then, or else at book value: the carrying amount the schedule gives then before
    # any impairment, so that an accounting test never changes the cash the sale brings (the
    # disposal books a gain over the written-down amount instead; docs/depreciation.md).
    rows = np.arange(b.rows)
    scheduled = dep.book_value(cost, book)
    carrying_at_sale = scheduled[rows, held]
    sale_value = b["depreciation.sale_value_share"] * paid
    if resale is not None:
        sale_value = np.where(resale.has, resale.proceeds_usd(held), sale_value)
    sale = dep.sale_proceeds_usd(carrying_at_sale, sale_value)
    impairment = _impairment_rows(
        b,
        months,
        fleet,
        cost,
        book,
        in_service,
        curves,
        since,
        ebitda,
        discount_annual,
        sale,
        resale,
    )
    book = impairment.depreciation_usd
    carrying = scheduled  # (no row tested: no write-down, the same book value)
    if impairment.tested.size:
        carrying = dep.book_value(cost, book, impairment.impairment_usd)
    booked = dep.dispose(
        book, cost, months, held, sale, impairment.impairment_usd, in_service, carrying
    )
    if own.size or impairment.tested.size:  # tax schedule differs from the book's somewhere
        taxed = dep.dispose(tax_dep, cost, months, held, sale, None, in_service)
    else:
        taxed = booked
    kept = np.asarray(months)[None, :] <= held[:, None]
    lines = {
        "depreciation_usd": booked.depreciation_usd,
        "impairment_usd": np.where(kept, impairment.impairment_usd, 0.0),
        "tax_depreciation_usd": taxed.depreciation_usd,
        "proceeds_usd": booked.proceeds_usd,
        "gain_usd": booked.gain_usd,
        "tax_gain_usd": taxed.gain_usd,
    }
    calendar = {k: _delay(v, purchase) for k, v in lines.items()}
    if resale is not None:  # the lenders' collateral at market value (financing.max_ltv)
        calendar["resale_collateral_usd"] = resale_mod.collateral_value_usd(
            resale.hardware_usd, resale.share, fleet.since, held
        )
    return _Capital(
        lines=calendar,
        impairment_month=impairment.month,
        impairment_loss=impairment.loss_usd,
        carrying_at_sale=carrying_at_sale,
        resale=resale,
        revenue_undepreciated=_undepreciated(b, months, fleet, revenue),
        batches=batches,
        half_year_q4=quarter_4,
    )


def _undepreciated(b, months, fleet: _Fleet, revenue: _Revenue) -> np.ndarray:
    """Revenue each row earns in service before depreciation starts [USD, (rows,)]: non-zero
    where depreciation.in_service_month falls after the service start (computed for those
    rows alone)."""
    out = np.zeros(b.rows)
    late = np.flatnonzero(b["depreciation.in_service_month"] > fleet.start - fleet.purchase)
    if late.size:
        first = fleet.purchase[late] + b["depreciation.in_service_month"][late]
        before = fleet.service[late] & (months[None, :] < first[:, None])
        earned = sum(revenue.by_source[k][late] for k in REVENUE_SOURCES)
        out[late] = np.where(before, earned, 0.0).sum(axis=1)
    return out


@dataclass(frozen=True)
class _Batches:
    """The GPUs of each row by the month they enter service (its deployment ramp's months)."""

    shares: np.ndarray  # (rows, J) share of the fleet entering service in ramp month j
    in_service: np.ndarray  # int (rows, J) its first month depreciated, months since purchase

    @property
    def ramped(self) -> bool:
        """Whether some row's GPUs enter service in more than one month."""
        return self.shares.shape[1] > 1

    def last_in_service(self, held) -> np.ndarray:
        """The first month depreciated of each row's last GPUs to serve (rows,): its last batch
        depreciated by its retirement, `held` months after purchase (the first always is)."""
        served = (self.shares > 0) & (self.in_service <= np.asarray(held)[:, None])
        last = self.shares.shape[1] - 1 - np.argmax(served[:, ::-1], axis=1)
        return self.in_service[np.arange(self.shares.shape[0]), last]


def _ramp_batches(b: ScenarioBatch, fleet: _Fleet) -> _Batches:
    """Each row's GPUs by the month they enter service, and when each batch is depreciated from.

    The ramp is the fleet's (econ.market.utilization_path over fleet.deployment_ramp_months,
    from the service start, as _fleet counts GPUs in service): batch j holds the GPUs that enter
    service in its j-th month of service, and is depreciated from then, or from
    depreciation.in_service_month where that is later (an asset is depreciated from when it is
    available for use, ASC 360 / IAS 16.55, placed in service for tax, IRS Pub 946). Without a
    ramp every row has one batch, the whole fleet."""
    ramp = b["fleet.deployment_ramp_months"]
    width = max(1, math.ceil(float(ramp.max(initial=0.0))))
    path = market.utilization_path(np.ones(b.rows), ramp, np.zeros(b.rows), np.arange(width + 1))
    entering = _column(fleet.start - fleet.purchase) + np.arange(width)[None, :]
    in_service = np.maximum(_column(b["depreciation.in_service_month"]), entering)
    return _Batches(np.diff(path, axis=1), in_service.astype(np.int64))


def _depreciation_rows(b, months, fleet: _Fleet, cost, batches: _Batches, curves, since):
    """Book and tax schedules on months since purchase, and the rows whose tax method is their own.

    Each row's GPUs are depreciated batch by batch, each from the month it enters service
    (econ.depreciation.schedule_batches); a row without a ramp is one batch."""
    book_method = _choice(b, "depreciation.method")
    tax_method = _choice(b, "depreciation.tax.method")
    used = set(book_method.tolist()) | set(tax_method.tolist())
    usage = {"book": None, "tax": None}
    if "units_of_production" in used:
        tokens, hours = fleet.tokens, fleet.gpus * HOURS_PER_MONTH
        if batches.ramped:  # each batch's usage is a share of the whole fleet's
            with np.errstate(divide="ignore", invalid="ignore"):
                whole = np.where(fleet.gpus > 0, _column(fleet.gpu_count) / fleet.gpus, 0.0)
            tokens, hours = tokens * whole, hours * whole
        tokens_since, hours_since = since(tokens), since(hours)
        for side, path in (("book", "depreciation"), ("tax", "depreciation.tax")):
            by_tokens = _choice(b, f"{path}.usage_driver") == "tokens"
            usage[side] = np.where(by_tokens[:, None], tokens_since, hours_since)
    tables = catalog.macrs_gds_tables() if "macrs_gds" in used else None
    value = {"book": None, "tax": None}
    if "economic" in used:
        for side, path in (("book", "depreciation"), ("tax", "depreciation.tax")):
            value[side] = _pick_curve(curves, _choice(b, f"{path}.value_source"))
    in_service = batches.in_service[:, 0]
    book_params = _method_params(b, "depreciation", "book")
    # sold when held ends (at the latest at the horizon): a MACRS schedule, book or tax, takes
    # Pub 946's year-of-disposal convention
    book_params["disposal_month"] = fleet.held
    _refuse_mid_quarter(b, "depreciation", book_method, book_params, in_service, fleet.purchase)
    book = dep.schedule_batches(
        book_method,
        cost,
        months,
        batches.shares,
        batches.in_service,
        usage=usage["book"],
        value_curve=value["book"],
        tables=tables,
        purchase_month=fleet.purchase,
        **book_params,
    )
    tax_dep = book.copy()
    own = np.flatnonzero(tax_method != "book")
    if own.size:
        params = _method_params(b, "depreciation.tax", "tax")
        params["disposal_month"] = fleet.held
        _refuse_mid_quarter(
            b, "depreciation.tax", tax_method, params, in_service, fleet.purchase, own
        )
        tax_dep[own] = dep.schedule_batches(
            tax_method[own],
            cost[own],
            months,
            batches.shares[own],
            batches.in_service[own],
            usage=None if usage["tax"] is None else usage["tax"][own],
            value_curve=None if value["tax"] is None else value["tax"][own],
            tables=tables,
            purchase_month=fleet.purchase[own],
            **{k: np.asarray(v)[own] for k, v in params.items()},
        )
        quarter_4 = _half_year_last_quarter(
            b, tax_method, params, own, fleet, cost, months, batches, tables, tax_dep
        )
    else:
        quarter_4 = None
    return book, tax_dep, own, quarter_4


def _half_year_last_quarter(b, method, params, own, fleet, cost, months, batches, tables, taxed):
    """The first tax year's MACRS deduction under the half-year convention the row chose and
    under 'mid-quarter Q4', (rows, 2) [USD], NaN but where all of a row's GPUs are placed in
    service in quarter 4 of their tax years (econ.depreciation.half_year_in_last_quarter) and
    the two differ; None where no row is. For a warning: the 40% test (IRC §168(d)(3)) is the
    scenario's choice, but GPUs alone in quarter 4 would fail it."""
    rows = own[method[own] == "macrs_gds"]
    rows = rows[
        dep.half_year_in_last_quarter(
            np.asarray(params["convention"])[rows],
            batches.in_service[rows],
            fleet.purchase[rows],
            batches.shares[rows],
        )
    ]
    if not rows.size:
        return None
    mid = dep.schedule_batches(
        method[rows],
        cost[rows],
        months,
        batches.shares[rows],
        batches.in_service[rows],
        tables=tables,
        purchase_month=fleet.purchase[rows],
        **{k: np.asarray(v)[rows] for k, v in params.items() if k != "convention"},
        convention=np.full(rows.size, "mid-quarter Q4", dtype=object),
    )
    first = batches.in_service[rows, 0]
    figures = np.stack(
        [dep.first_tax_year_usd(d, first, fleet.purchase[rows]) for d in (taxed[rows], mid)],
        axis=1,
    )
    out = np.full((b.rows, 2), np.nan)
    differ = ~np.isclose(figures[:, 0], figures[:, 1])  # (all of it bonus: the same)
    out[rows[differ]] = figures[differ]
    return None if not differ.any() else out


def _refuse_mid_quarter(b, path, method, params, in_service, purchase, rows=None):
    """Refuse, naming the scenario and vintage, a MACRS mid-quarter convention that is not the
    quarter of the tax year its GPUs enter service in (econ.depreciation refuses it too, by row
    number only). `method` and `params` hold every row; `rows` are those to check (all)."""
    rows = np.arange(b.rows) if rows is None else rows
    chosen = rows[method[rows] == "macrs_gds"]
    if not chosen.size:
        return
    naming = _naming(b)
    dep.refuse_mid_quarter_mismatch(
        np.asarray(params["convention"])[chosen],
        in_service[chosen],
        purchase[chosen],
        field=f"{path}.convention",
        where=lambda i: naming(chosen[i]),
    )


def _naming(b):
    """A function giving the words that start a refusal for a row: "scenario 'NAME': ", with the
    vintage's name where the scenario has several rows."""
    several = np.bincount(b.row_scenario, minlength=b.n) > 1

    def where(row):
        scenario = b.row_scenario[row]
        vintage = f" (vintage {b.row_names[row]})" if several[scenario] else ""
        return f"scenario '{b.names[scenario]}'{vintage}: "

    return where


def _pick_curve(curves, names):
    """Each row's curve (rows, T+1) from the curve named in `names` (rows,).

    A name with no curve is a programming error (a caller's name that differs from the key, or
    a curve not built): it raises a KeyError rather than give those rows a curve of zeros."""
    missing = sorted(set(np.asarray(names).tolist()) - set(curves))
    if missing:
        raise KeyError(f"no price curve named {missing}; the curves are {sorted(curves)}")
    return np.select([(names == name)[:, None] for name in curves], list(curves.values()))


TRIGGER_CURVES = {"market_value": "market_value_table"}
"""depreciation.impairment.trigger_price names whose curve `_capital_rows` keys otherwise."""

_TRIGGER_PRICES = {
    "token_price": ("token price", "market.price_usd_per_mtok or market.price_table"),
    "rental_price": (
        "GPU-rental price",
        "market.rental_usd_per_gpu_hour, market.rental_table or market.rental_series",
    ),
    "market_value": ("market value", "depreciation.market_value_table"),
    "resale_value": ("resale value", "market.resale_value_table or market.resale_series"),
}
"""Each trigger price's words and the fields that give it, for `_refuse_no_trigger_price`."""


def _refuse_no_trigger_price(b, tested, price, in_service, purchase):
    """Refuse a trigger price of 0 in the in-service month: a price of 0 cannot fall, and every
    month would be at or below the threshold, so the test would run and write down every month
    (ASC 360-10-35-21(a) and IAS 36.12 look for a fall in a price the scenario gives).
    `price` (tested rows, T+1) and `in_service` are on months since purchase."""
    reference = price[np.arange(tested.size), in_service]
    bad = np.flatnonzero(~(reference > 0))
    if not bad.size:
        return
    i = int(bad[0])
    name = str(_choice(b, "depreciation.impairment.trigger_price")[tested[i]])
    words, fields = _TRIGGER_PRICES[name]
    others = ", ".join(k for k in _TRIGGER_PRICES if k != name)
    raise InputError(
        f"{_naming(b)(int(tested[i]))}depreciation.impairment.trigger_price = '{name}', but the "
        f"{words} is {float(reference[i]):g} in the in-service month (month "
        f"{int(purchase[i] + in_service[i])}): a price of 0 cannot fall, and the test would run "
        f"every month; expected a {words} the scenario gives ({fields}) or another "
        f"trigger_price ({others})"
    )


@dataclass(frozen=True)
class _Impairment:
    """Book schedule after impairment tests, on months since purchase (rows, T+1)."""

    depreciation_usd: np.ndarray
    impairment_usd: np.ndarray
    month: np.ndarray  # (rows,) calendar month of the impairment, -1 where none
    loss_usd: np.ndarray  # (rows,)
    tested: np.ndarray  # rows with an impairment test


def _impairment_rows(
    b, months, fleet, cost, book, in_service, curves, since, ebitda, discount, sale, resale=None
):
    """Impairment of the book value where a price drop triggers a test (ASC 360 / IAS 36).

    The test's cash flows are the row's EBITDA while held and its sale at retirement, `sale`
    (rows,) [USD]: the proceeds the projection books (at the sale value, at the resale proceeds,
    or at book value before impairment), counted by the sale month's test too. Fair value may
    be the resale value (fair_value_source 'resale_value': hardware cost x share at the age)."""
    n = b.rows
    impairment = np.zeros_like(book)
    impairment_month = np.full(n, -1)
    impairment_loss = np.zeros(n)
    threshold = b["depreciation.impairment.price_drop_threshold"]
    tested = np.flatnonzero(~np.isnan(threshold))
    if not tested.size:
        return _Impairment(book, impairment, impairment_month, impairment_loss, tested)
    from econ import impairment as impairment_mod

    book = book.copy()
    held, purchase = fleet.held[tested], fleet.purchase[tested]
    cost_t = cost[tested]
    trigger_price = _choice(b, "depreciation.impairment.trigger_price")[tested]
    for name, curve in TRIGGER_CURVES.items():
        trigger_price = np.where(trigger_price == name, curve, trigger_price)
    price = _pick_curve({k: v[tested] for k, v in curves.items()}, trigger_price)
    _refuse_no_trigger_price(b, tested, price, in_service[tested], purchase)
    trigger = impairment_mod.price_drop_trigger(price, threshold[tested], in_service[tested])
    m = np.asarray(months)[None, :]
    # The cash flows: each month's EBITDA while held, and the sale at the end of the retirement
    # month, which that month's test still counts (econ.impairment.remaining_undiscounted_usd).
    # The sale is the projection's own (ASC 360-10-35-30: the test's estimates agree with the
    # entity's projections; IAS 36.33): a sale at book value fetches the book value before
    # impairment, which the schedule fixes at the purchase, so no test depends on itself.
    sold = m == held[:, None]
    flows = since(ebitda())[tested] * (m <= held[:, None])
    disposal = np.where(sold, sale[tested, None], 0.0)
    value_in_use = impairment_mod.remaining_present_value_usd(
        flows, monthly_rate(discount[tested]), disposal
    )
    source = _choice(b, "depreciation.impairment.fair_value_source")[tested]
    fair_value = np.where(
        (source == "market_value")[:, None],
        curves["market_value_table"][tested] * cost_t[:, None],
        value_in_use,
    )
    if resale is not None:
        fair_value = np.where(
            (source == "resale_value")[:, None],
            resale_mod.resale_value_usd(resale.hardware_usd[tested], resale.share[tested]),
            fair_value,
        )
    # In the month of the sale the asset's fair value is the price it is sold for, the exit price
    # of ASC 820-10-35-3 (the discounted cash flows are that price already): a market-value table
    # that says less would impair more than the sale then gives back as a gain.
    fair_value = np.where(sold, disposal, fair_value)
    result = impairment_mod.impair(
        book[tested],
        cost_t,
        (b["depreciation.salvage_share"] * cost)[tested],
        _choice(b, "depreciation.impairment.standard")[tested],
        trigger,
        fair_value,
        undiscounted_usd=impairment_mod.remaining_undiscounted_usd(flows, disposal),
        value_in_use_usd=value_in_use,
        costs_of_disposal_usd=b["depreciation.impairment.costs_of_disposal_share"][tested, None]
        * fair_value,
    )
    book[tested] = result.depreciation_usd
    impairment[tested] = result.impairment_usd
    impairment_month[tested] = np.where(result.month >= 0, result.month + purchase, -1)
    impairment_loss[tested] = result.loss_usd
    return _Impairment(book, impairment, impairment_month, impairment_loss, tested)


@dataclass(frozen=True)
class _Ledger:
    """A chunk's scenario lines (n, T+1), filled in stage by stage after the rows are summed."""

    lines: dict[str, np.ndarray]  # the rows' lines summed per scenario
    facility: np.ndarray
    revenue: np.ndarray
    ebitda: np.ndarray
    capex: np.ndarray  # capital: the GPUs' and the site's
    proceeds: np.ndarray
    book_depreciation: np.ndarray
    tax_depreciation: np.ndarray
    impairment: np.ndarray
    consumed: np.ndarray  # book depreciation plus impairment
    capex_total: np.ndarray  # (n,)
    stack: capital_mod.StackSchedule  # financing
    tax_rate: np.ndarray  # (n,)
    loss_limit: np.ndarray  # (n,) share of a year's income losses carried forward may offset
    income_tax: np.ndarray  # tax: paid
    current_tax: np.ndarray  # current tax expense
    deferred: deferred_tax_mod.DeferredTax
    net_income: np.ndarray
    cash_flow_project: np.ndarray  # cash flows
    cash_flow_equity: np.ndarray
    coverage: dict[str, np.ndarray]
    covenants: tuple[np.ndarray, np.ndarray, np.ndarray]  # DSCR, LLCR floors, LTV ceiling (n,)
    discount_annual: np.ndarray  # (n,)
    active: np.ndarray  # bool (n, T+1) months up to each horizon
    discount: np.ndarray  # discount factors (n, T+1), 0 after each horizon
    factors: np.ndarray  # the same, not cut at the horizon (`discount_factors`)
    # what the ltv line divides by (`_collateral`) [USD, (n, T+1)], computed on first use
    collateral: Callable[[], np.ndarray]

    def factors_at(self, rate_annual) -> np.ndarray:
        """`metrics.discount_factors` of `rate_annual` (n,) over the months (n, T+1), not cut
        at the horizon: those of the discount rate kept, where the rates are the same."""
        if np.array_equal(rate_annual, self.discount_annual):
            return self.factors
        return metrics_mod.discount_factors(rate_annual, np.arange(self.discount.shape[1]))


def _ledger(b: ScenarioBatch, months, lines, site, to: _Scenarios, capex_row, built) -> _Ledger:
    """Operating lines, then capital, financing, tax and cash flows of each scenario."""
    horizon = b.horizon_months
    active = months[None, :] <= horizon[:, None]
    facility = site.facility_usd
    revenue = lines["token_revenue_usd"] + lines["contract_revenue_usd"] + lines["spot_revenue_usd"]
    ebitda = revenue - lines["power_usd"] - facility - lines["opex_usd"]
    capital = _scenario_capital(lines, site, months, horizon, to.total(capex_row))
    capex, proceeds, book_depreciation, tax_depreciation, capex_total = capital
    impairment = lines["impairment_usd"]
    tax_rate = to.at_first(b["financing.tax_rate"])
    loss_limit = to.at_first(b["financing.tax_loss_limit"])
    discount_annual = to.at_first(b["financing.discount_rate_annual"])
    depreciation = (book_depreciation, tax_depreciation)
    market_collateral = _market_collateral(b, to.first, capex, book_depreciation, impairment, lines)
    sizing = _sizing(
        b,
        to.first,
        horizon,
        capex,
        proceeds,
        ebitda,
        lines,
        depreciation,
        impairment,
        built is not None,
        market_collateral,
    )
    payment = to.at_first(b["financing.tax_payment"])

    def taxes(stack):
        return _tax(
            ebitda,
            book_depreciation,
            tax_depreciation,
            impairment,
            stack.lines["interest_expense_usd"],
            lines["gain_usd"],
            lines["tax_gain_usd"],
            tax_rate,
            horizon,
            payment,
            to.at_first(b["financing.tax_valuation_allowance"]),
            loss_limit,
        )

    stack = _finance(b, to.first, horizon, months, capex, tax_rate, discount_annual, built, sizing)
    taxed = taxes(stack)
    cfads = cashflow.cash_flow_available_for_debt_service_usd(ebitda, taxed[0])
    short = _sized_short(sizing, cfads, stack.lines["debt_service_usd"])
    if short is not None:  # sized again on the CFADS realised, those scenarios only
        r = np.flatnonzero(short)
        part = _sized_again(
            b,
            to.first[r],
            months,
            (horizon[r], capex[r], tax_rate[r], discount_annual[r], payment[r], loss_limit[r]),
            (ebitda[r], tax_depreciation[r], lines["tax_gain_usd"][r]),
            sizing.rows(r),
            cfads[r],
        )
        stack = _with_rows(stack, part, r)
        taxed = taxes(stack)
    income_tax, current_tax, deferred, consumed, net_income = taxed
    cash_flow_project = cashflow.project_cash_flow_usd(ebitda, capex, proceeds, income_tax)
    cfads = cashflow.cash_flow_available_for_debt_service_usd(ebitda, income_tax)
    collateral = _kept_collateral(
        sizing, stack, capex, consumed, proceeds, lines["gain_usd"], market_collateral
    )
    covenants, coverage = _coverage(b, to, horizon, cfads, stack, collateral)
    factors = metrics_mod.discount_factors(discount_annual, months)
    return _Ledger(
        lines=lines,
        facility=facility,
        revenue=revenue,
        ebitda=ebitda,
        capex=capex,
        proceeds=proceeds,
        book_depreciation=book_depreciation,
        tax_depreciation=tax_depreciation,
        impairment=impairment,
        consumed=consumed,
        capex_total=capex_total,
        stack=stack,
        tax_rate=tax_rate,
        loss_limit=loss_limit,
        income_tax=income_tax,
        current_tax=current_tax,
        deferred=deferred,
        net_income=net_income,
        cash_flow_project=cash_flow_project,
        cash_flow_equity=cashflow.equity_cash_flow_usd(
            cash_flow_project, stack.lines["financing_cash_flow_usd"]
        ),
        coverage=coverage,
        covenants=covenants,
        discount_annual=discount_annual,
        active=active,
        discount=factors * active,  # (`discount_factors` with `active`)
        factors=factors,
        collateral=collateral,
    )


def _kept_collateral(sizing, stack, capex, consumed, proceeds, gain, market_collateral):
    """A function giving `_collateral`, computed on first use and kept (the LTV covenant, the
    ltv line and the warnings each ask for it): the debt sizing's collateral where that is the
    same sum (no interest capitalized into the assets' cost)."""
    kept = []

    def collateral() -> np.ndarray:
        if not kept:
            same = sizing is not None and not np.any(
                stack.lines.get("capitalized_interest_usd", 0.0)
            )
            kept.append(
                sizing.value
                if same
                else _collateral(stack, capex, consumed, proceeds, gain, market_collateral)
            )
        return kept[0]

    return collateral


def _coverage(b, to: _Scenarios, horizon, cfads, stack, collateral):
    """The covenants' floors and ceiling (DSCR, LLCR, LTV; each (n,), NaN: none) and the coverage
    ratios they test (econ.capital.coverage_ratios); `collateral()` gives the LTV's collateral,
    computed only where an LTV covenant tests it."""
    covenants = (
        to.at_first(b["financing.covenants.dscr_floor"]),
        to.at_first(b["financing.covenants.llcr_floor"]),
        to.at_first(b["financing.covenants.ltv_ceiling"]),
    )
    coverage = capital_mod.coverage_ratios(
        cfads,
        stack.lines["debt_service_usd"],
        stack.lines["balance_usd"],
        stack.metrics["debt_rate_monthly"],
        horizon,
        dscr_floor=covenants[0],
        llcr_floor=covenants[1],
        # The trailing test window matters only to a DSCR covenant.
        test_months=np.where(
            np.isnan(covenants[0]), 1, to.at_first(b["financing.covenants.test_months"])
        ),
        collateral_usd=None if np.isnan(covenants[2]).all() else collateral(),
        ltv_ceiling=covenants[2],
        first_test_month=to.at_first(b["financing.covenants.first_test_month"]),
    )
    return covenants, coverage


def _scenario_capital(lines, site, months, horizon, capex_total):
    """Capex, sale proceeds and depreciation of the GPUs, plus the site's own capital (an owned
    hall or a liquid retrofit) where it has some."""
    capex, proceeds = lines["capex_usd"], lines["proceeds_usd"]
    book_depreciation, tax_depreciation = lines["depreciation_usd"], lines["tax_depreciation_usd"]
    if np.any(site.capex_usd):
        m = months[None, :]
        capex = capex + site.capex_usd
        proceeds = proceeds + np.where(m == horizon[:, None], _column(site.book_value_end_usd), 0.0)
        book_depreciation = book_depreciation + site.depreciation_usd
        tax_depreciation = tax_depreciation + site.depreciation_usd
        capex_total = capex_total + site.capex_usd.sum(axis=1)
    return capex, proceeds, book_depreciation, tax_depreciation, capex_total


def _tax(
    ebitda,
    book,
    tax_depreciation,
    impairment,
    interest,
    gain,
    tax_gain,
    tax_rate,
    horizon,
    payment,
    allowance,
    loss_limit,
):
    """Income tax with losses carried forward (paid by financing.tax_payment's schedule, each
    year's offset up to financing.tax_loss_limit), current and deferred tax expense under ASC 740,
    and net income."""
    taxable = tax.income_before_tax_usd(ebitda, tax_depreciation, interest, tax_gain)
    income_tax = _income_tax(taxable, tax_rate, horizon, payment, loss_limit)
    consumed = book + impairment if impairment.any() else book
    pre_tax_income = tax.income_before_tax_usd(ebitda, consumed, interest, gain)
    current_tax, deferred = deferred_tax_mod.deferred_tax_with_losses(
        pre_tax_income, taxable, tax_rate, horizon, allowance, loss_limit
    )
    net_income = cashflow.net_income_usd(pre_tax_income, current_tax, deferred.expense_usd)
    return income_tax, current_tax, deferred, consumed, net_income


def _income_tax(taxable, tax_rate, horizon, payment, loss_limit):
    """Income tax paid each month on monthly taxable income, losses carried forward [USD]."""
    annual_tax = tax.tax_with_loss_carryforward(tax.annual_sums(taxable), tax_rate, loss_limit)
    first = tax.first_taxable_month(taxable, loss_limit)
    return tax.tax_payments_usd(annual_tax, first, horizon, taxable.shape[1], payment)


def _summary_metrics(b: ScenarioBatch, ledger: _Ledger, to: _Scenarios, fleet, costs):
    """Metrics: levelized cost, NPV, IRRs, payback, break-even, densities (n,) each; and the
    facts the warnings quote."""
    lines = ledger.lines
    pv = lambda x: metrics_mod.present_value(x, ledger.discount)  # noqa: E731
    pv_tokens = pv(lines["tokens"])
    # capital consumed: book depreciation and impairment, and a sale's loss (less its gain) below
    # the carrying amount, so that `financing` is the time value alone (0 at a zero rate)
    pv_consumed = pv(ledger.consumed) - pv(ledger.lines["gain_usd"])
    pv_capex = pv(ledger.capex)
    pv_parts = {
        "depreciation": pv_consumed,
        "financing": pv_capex - pv(ledger.proceeds) - pv_consumed,
        "power": pv(lines["power_usd"]),
        "facility": pv(ledger.facility),
        "opex": pv(lines["opex_usd"]),
    }
    lcot, components = metrics_mod.levelized_cost(pv_parts, pv_tokens)
    # Per input plus output token, discounted alike; NaN where the input tokens are unknown.
    pv_input_tokens = pv(lines["input_tokens"])
    lcot_all_tokens, _ = metrics_mod.levelized_cost(pv_parts, pv_tokens + pv_input_tokens)
    returns, facts = _returns(b, ledger, pv)
    breakeven = _breakeven(b, ledger, to)
    gpu_count = to.total(fleet.gpu_count)
    rack_count = to.total(fleet.gpu_count / b["fleet.gpus_per_rack"])
    npv = returns["npv_usd"]
    coverage = ledger.coverage
    negative_breakeven = breakeven < 0  # NPV > 0 at a zero token price
    payback = metrics_mod.payback(ledger.cash_flow_project, ledger.active)
    metrics = {
        "lcot_usd_per_mtok": lcot,
        "lcot_usd_per_mtok_all_tokens": lcot_all_tokens,
        **_totals(ledger),
        **returns,
        "npv_usd_per_gpu": npv / gpu_count,
        "npv_usd_per_rack": npv / rack_count,
        "payback_months": payback.months,
        "breakeven_price_usd_per_mtok": np.where(negative_breakeven, np.nan, breakeven),
        "min_dscr": coverage["min_dscr"],
        **_densities(b, ledger, to, fleet, costs),
        "gpu_count": gpu_count,
        "rack_count": rack_count,
        "capex_usd_total": ledger.capex_total,
        "discount_rate_annual": ledger.discount_annual,
        "horizon_months": b.horizon_months.astype(float),
        "min_llcr": coverage["min_llcr"],
        "covenant_breach_months": coverage["breach_months"].astype(float),
        "first_breach_month": coverage["first_breach_month"],
        **{name: ledger.stack.metrics[name] for name in STACK_METRICS},
        "profitability_index": metrics_mod.profitability_index(npv, pv_capex),
        **_debt_metrics(ledger),
        **_cost_per_gpu_hour(pv, lines["gpus_in_service"], pv_parts),
    }
    # A null break-even where the token price does move the NPV is no "fully contracted": the
    # figures are past what floats hold (an overflow, or costs lost in the revenue's rounding).
    price_effect = pv(lines["spot_units"])  # NPV per USD/Mtok of price, before tax
    facts.update(
        pv_tokens=pv_tokens,
        no_input_ratio=np.isnan(pv_input_tokens) & (pv_tokens > 0),
        negative_breakeven=negative_breakeven,
        breakeven_unresolved=np.isnan(breakeven) & ~(price_effect <= 0),
        breakeven_overflow=~(np.isfinite(price_effect) & np.isfinite(npv)),
        payback=payback,
    )
    return metrics, components, facts


def _totals(ledger: _Ledger) -> dict[str, np.ndarray]:
    """Sums over the horizon (n,): tokens, revenue, EBITDA, EBIT, net income, impairment, and the
    accounting cost per token (costs as booked, interest included, undiscounted).

    EBIT and the accounting cost count the gain or loss on disposal with depreciation and
    impairment: the capital consumed is the carrying amount given up less what the sale brings
    (ASC 360-10-45-5 reports the gain or loss in operating income; IAS 16.68 in profit)."""
    lines = ledger.lines
    tokens = lines["tokens"].sum(axis=1)
    consumed = ledger.consumed - lines["gain_usd"]
    booked = lines["power_usd"] + ledger.facility + lines["opex_usd"] + consumed
    return {
        "tokens_total": tokens,
        "input_tokens_total": lines["input_tokens"].sum(axis=1),
        "revenue_usd_total": ledger.revenue.sum(axis=1),
        **{
            f"{kind}_revenue_usd_total": lines[f"{kind}_revenue_usd"].sum(axis=1)
            for kind in TOKEN_KINDS
        },
        "ebitda_usd_total": ledger.ebitda.sum(axis=1),
        "ebit_usd_total": (ledger.ebitda - consumed).sum(axis=1),
        "net_income_usd_total": ledger.net_income.sum(axis=1),
        "accounting_cost_usd_per_mtok": metrics_mod.cost_usd_per_mtok(
            (booked + ledger.stack.lines["interest_expense_usd"]).sum(axis=1), tokens
        ),
        "impairment_usd_total": ledger.impairment.sum(axis=1),
    }


def _returns(b: ScenarioBatch, ledger: _Ledger, pv):
    """NPV, project and equity IRR and MIRR, equity MOIC (n,) each, and the facts the warnings
    quote about them. Equity returns are NaN where equity is under MIN_EQUITY_SHARE_FOR_IRR of
    capex (too little to judge)."""
    stack, capex_total = ledger.stack, ledger.capex_total
    project_irr = metrics_mod.unique_irr_annual(ledger.cash_flow_project)
    equity_share = np.where(capex_total > 0, stack.metrics["equity_usd"] / capex_total, 0.0)
    equity = capital_mod.equity_returns(
        ledger.cash_flow_equity, MIN_EQUITY_SHARE_FOR_IRR * capex_total, irr=False
    )
    equity_too_thin = equity_share < MIN_EQUITY_SHARE_FOR_IRR
    equity_irr = metrics_mod.unique_irr_annual(ledger.cash_flow_equity)
    equity_counted = equity_too_thin | np.isnan(equity["moic"])  # too little equity to judge
    cost_of_debt = stack.metrics["cost_of_debt_annual"]
    has_debt = (stack.metrics["debt_usd"] > 0) & np.isfinite(cost_of_debt)
    finance_rate = np.where(has_debt, cost_of_debt, ledger.discount_annual)
    finance_factors = ledger.factors_at(finance_rate)
    mirr = {
        name: metrics_mod.mirr_of_factors(flows, finance_factors, ledger.discount, b.horizon_months)
        for name, flows in (
            ("project", ledger.cash_flow_project),
            ("equity", ledger.cash_flow_equity),
        )
    }
    # The equity's flows at the equity's own required return (the WACC's k_e: the equity
    # tranches' required_return_annual, else the discount rate).
    equity_factors = ledger.factors_at(stack.metrics["cost_of_equity_annual"])
    returns = {
        "npv_usd": pv(ledger.cash_flow_project),
        "npv_equity_usd": metrics_mod.present_value(ledger.cash_flow_equity, equity_factors),
        "irr_project_annual": project_irr["irr_annual"],
        "irr_equity_annual": np.where(equity_counted, np.nan, equity_irr["irr_annual"]),
        "moic_equity": np.where(equity_too_thin, np.nan, equity["moic"]),
        "mirr_project_annual": mirr["project"],
        "mirr_equity_annual": np.where(equity_counted, np.nan, mirr["equity"]),
    }
    facts = {
        "equity_share": equity_share,
        "thin": equity_too_thin,
        "equity_counted": equity_counted,
        "irr": {"project": project_irr, "equity": equity_irr},
    }
    return returns, facts


def _breakeven(b: ScenarioBatch, ledger: _Ledger, to: _Scenarios) -> np.ndarray:
    """The token price at which NPV is 0 (n,) [USD/Mtok]: negative where NPV > 0 at price 0."""
    lines = ledger.lines
    return metrics_mod.breakeven_price_usd_per_mtok(
        fixed=ledger.ebitda - lines["token_revenue_after_sga_usd"],
        spot_units=lines["spot_units"],
        deductions=ledger.tax_depreciation
        + ledger.stack.lines["interest_expense_usd"]
        - lines["tax_gain_usd"],
        tax_rate=ledger.tax_rate,
        last_month=b.horizon_months,
        capital=ledger.proceeds - ledger.capex,
        discount=ledger.discount,
        tax_payment=to.at_first(b["financing.tax_payment"]),
        loss_limit=ledger.loss_limit,
    )


def _densities(b: ScenarioBatch, ledger: _Ledger, to: _Scenarios, fleet, costs):
    """The DENSITY_COLUMNS metrics (n,) each: per MW, per rack, per m2 (econ.density)."""
    lines = ledger.lines
    densities = density.density_metrics(
        tokens=lines["tokens"],
        revenue_usd=ledger.revenue,
        power_usd=lines["power_usd"],
        it_energy_kwh=lines["it_energy_kwh"],
        it_kw_in_service=lines["it_kw"],
        racks_in_service=lines["racks_in_service"],
        m2_per_rack=to.at_first(b["facility.m2_per_rack"]),
        pue=to.at_first(b["power.pue"]),
        rated_tokens_per_s=to.total(fleet.gpu_count * b["throughput.tokens_per_s_per_gpu"]),
        installed_it_kw=to.total(fleet.gpu_count * costs.kw_per_gpu),
    )
    return {name: densities[name] for name in DENSITY_COLUMNS}


def _resale_spread(b: ScenarioBatch, months, fleet: _Fleet, revenue: _Revenue, resale):
    """The rental-versus-resale spread of each row (generation) over its first 12 months in
    service (fewer where the horizon ends sooner), per GPU (econ.resale.rental_resale_spread),
    NaN where the row has no resale table or no market rental price; None without any table."""
    if resale is None:
        return None
    start, purchase = fleet.start, fleet.purchase
    calendar = start[:, None] + np.arange(MONTHS_PER_YEAR)[None, :]
    inside = calendar <= b.horizon_months[fleet.scenario][:, None]
    at = np.minimum(calendar, len(months) - 1)
    price = np.where(inside, np.take_along_axis(revenue.rental, at, 1), 0.0)
    utilization = np.where(inside, np.take_along_axis(fleet.utilization, at, 1), 0.0)
    age_start = np.maximum(start - 1 - purchase, 0)  # age at the end of the month before service
    age_end = np.minimum(age_start + inside.sum(axis=1), resale.share.shape[1] - 1)
    rows = np.arange(b.rows)
    spread = resale_mod.rental_resale_spread(
        price,
        utilization,
        resale.share[rows, age_start],
        resale.share[rows, age_end],
        resale.hardware_usd / fleet.gpu_count,
    )
    priced = (price > 0).any(axis=1) & resale.has
    return {key: np.where(priced, value, np.nan) for key, value in spread.items()}


def _spread_metrics(b: ScenarioBatch, fleet: _Fleet, spread):
    """The spread keys of each scenario (its own fleet's row), and the scenarios without a
    resale table, whose spread is null by design."""
    first = np.flatnonzero(fleet.first_row)
    if spread is None:
        nulls = {key: np.full(b.n, np.nan) for key in resale_mod.SPREAD_KEYS}
        return nulls, np.ones(b.n, bool)
    no_table = np.isnan(b.extras["market.resale_table_ages"][first]).all(axis=1)
    return {key: spread[key][first] for key in resale_mod.SPREAD_KEYS}, no_table


def _debt_metrics(ledger: _Ledger) -> dict[str, np.ndarray]:
    """Debt drawn, what sized it, what is owed when service starts, and the headroom under the
    DSCR covenant (n,) each.

    construction_interest_usd is the loan interest capitalized during a construction period
    (econ.construction: added to the balance, not paid) and debt_at_conversion_usd the balance
    when service starts and the term repayment begins, the draws plus that interest: what the
    lender is owed at conversion. Without a construction period they are 0 and the debt drawn.

    dscr_headroom = the lowest DSCR the covenant tests (on its trailing test window, as the
    breach) - its floor, so that it is negative exactly where the DSCR covenant is breached; with
    a one-month window it is min_dscr - the floor. months_of_headroom counts the months the
    covenant tests (econ.financing.covenant_test_months, from its first test month) before its
    DSCR first falls below the floor: all of them where it never does, 0 where the first test
    fails; a month before the first test date is no headroom, as it is no test. Both are NaN
    where the covenant tests no month: no debt service, no DSCR covenant, or a first test month
    after the loan's last month to test (a warning says so, `covenants_untested`).
    """
    stack, coverage = ledger.stack, ledger.coverage
    debt = stack.metrics["debt_usd"]
    # (only a construction loan, _built_loan, capitalizes interest and owes more than it drew)
    capitalized = stack.metrics.get("construction_interest_usd", np.zeros_like(debt))
    sized = stack.metrics.get("debt_sizing_constraint")
    constraint = np.where(debt > 0, 1.0, 0.0) if sized is None else sized.astype(float)
    floor = ledger.covenants[0]
    tested = coverage["dscr_tested"]
    measured = tested.any(axis=1) & ~np.isnan(floor)
    # (the DSCR test's own first breach: an LLCR or LTV covenant may be breached sooner)
    dscr_breach = coverage["dscr_breach"]
    first = np.where(dscr_breach.any(axis=1), np.argmax(dscr_breach, axis=1), tested.shape[1])
    before = np.arange(tested.shape[1])[None, :] < first[:, None]
    months = (tested & before).sum(axis=1)
    return {
        "debt_usd_total": debt,
        "construction_interest_usd": capitalized,
        "debt_at_conversion_usd": stack.metrics.get("debt_at_conversion_usd", debt),
        "debt_sizing_constraint": constraint,
        "dscr_headroom": np.where(measured, coverage["min_dscr_test"] - floor, np.nan),
        "months_of_headroom": np.where(measured, months, np.nan),
    }


def _cost_per_gpu_hour(pv, gpus_in_service, pv_parts) -> dict[str, np.ndarray]:
    """Levelized all-in cost per GPU-hour in service: PV(costs) / PV(GPU-hours) [USD/GPU-hour],
    and its parts (the levelized cost's components over GPU-hours instead of tokens)."""
    pv_hours = pv(gpus_in_service * HOURS_PER_MONTH)
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = {
            f"cost_usd_per_gpu_hour_{k}": np.where(pv_hours > 0, v / pv_hours, np.nan)
            for k, v in pv_parts.items()
        }
    return {"cost_usd_per_gpu_hour": sum(parts.values()), **parts}


STACK_METRICS = ("wacc_after_tax_annual", "cost_of_debt_annual", "debt_usd", "dilution_shares")
"""Summary metrics the capital stack computes (econ.capital.StackSchedule.metrics)."""


def _collateral(stack, capex, consumed, proceeds, gain, market_collateral) -> np.ndarray:
    """What the ltv line divides by and an LTV covenant tests [USD, (n, T+1)]: the book value of
    the assets held (`econ.depreciation.held_book_value_usd`: with capitalized interest, less what was
    sold), or the resale collateral where the scenario gives a resale table."""
    capitalized = stack.lines.get("capitalized_interest_usd", 0.0)
    book = dep.held_book_value_usd(capex, consumed, proceeds, gain, capitalized)
    return _or_book(market_collateral, book)


def _monthly_lines(ledger: _Ledger) -> dict[str, np.ndarray]:
    """The MONTHLY_COLUMNS lines of a ledger."""
    lines, debt, coverage = ledger.lines, ledger.stack.lines, ledger.coverage
    # (construction interest is part of the GPUs' book value, as it is of their cost)
    capitalized = debt.get("capitalized_interest_usd", np.zeros_like(ledger.current_tax))
    return {
        "gpus_in_service": lines["gpus_in_service"],
        "tokens": lines["tokens"],
        "input_tokens": lines["input_tokens"],
        "revenue_usd": ledger.revenue,
        "token_revenue_usd": lines["token_revenue_usd"],
        **{f"{kind}_revenue_usd": lines[f"{kind}_revenue_usd"] for kind in TOKEN_KINDS},
        "contract_revenue_usd": lines["contract_revenue_usd"],
        "spot_revenue_usd": lines["spot_revenue_usd"],
        "power_usd": lines["power_usd"],
        "facility_usd": ledger.facility,
        "opex_usd": lines["opex_usd"],
        "capex_usd": ledger.capex,
        "disposal_usd": ledger.proceeds,
        "gain_on_disposal_usd": lines["gain_usd"],
        "depreciation_usd": ledger.book_depreciation,
        "impairment_usd": ledger.impairment,
        "tax_depreciation_usd": ledger.tax_depreciation,
        "tax_gain_on_disposal_usd": lines["tax_gain_usd"],
        "interest_usd": debt["interest_expense_usd"],
        "cash_interest_usd": debt["cash_interest_usd"],
        "principal_usd": debt["principal_usd"],
        "debt_service_usd": debt["debt_service_usd"],
        "tax_usd": ledger.income_tax,
        "deferred_tax_usd": ledger.deferred.expense_usd,
        "deferred_tax_liability_usd": ledger.deferred.liability_usd,
        "ebitda_usd": ledger.ebitda,
        "net_income_usd": ledger.net_income,
        "cash_flow_project_usd": ledger.cash_flow_project,
        "cash_flow_equity_usd": ledger.cash_flow_equity,
        "debt_balance_usd": debt["balance_usd"],
        "dscr": coverage["dscr"],
        "llcr": coverage["llcr"],
        "ltv": capital_mod.loan_to_value(debt["balance_usd"], ledger.collateral())[0],
        "covenant_breach": (
            coverage["dscr_breach"] | coverage["llcr_breach"] | coverage["ltv_breach"]
        ).astype(float),
        "current_tax_usd": ledger.current_tax,
        "capitalized_interest_usd": capitalized,
        # (financing.debt_share's loan has no commitment: no fee line)
        "commitment_fee_usd": debt.get("commitment_fee_usd", np.zeros_like(ledger.current_tax)),
        # (without a DSCR covenant nothing is tested: coverage_ratios' dscr_test is then dscr)
        "dscr_test": np.where(
            np.isnan(ledger.covenants[0])[:, None], np.nan, coverage["dscr_test"]
        ),
    }


def _warning_source(
    b, ledger: _Ledger, metrics, facts, fleet: _Fleet, costs: _Costs, capital, site
):
    """Flags (cheap, now) and a function formatting each scenario's warnings (on first use)."""
    first = np.flatnonzero(fleet.first_row)
    late_flags, late = _late_troubles(ledger)
    stack_flags, stack_facts = _stack_troubles(b, ledger)
    context = (
        _warning_context(b, ledger, facts, fleet, costs, capital, first)
        | _site_context(b, ledger, site, first)
        | late
        | stack_facts
    )
    flags = _scenario_flags(b, ledger, metrics, facts, context, first) | late_flags | stack_flags
    row_flags = {
        # (a ramp's last GPUs reach the end of their life as many months later as they entered)
        "sold_before_life": (
            fleet.held
            < np.ceil(b["depreciation.life_years"] * MONTHS_PER_YEAR - 1e-9)
            + context["ramp_depreciated"]
        )
        & np.isnan(b["depreciation.sale_value_share"])
        & (True if capital.resale is None else ~capital.resale.has),
        "measured_energy": costs.measured_energy,
        "impaired": capital.impairment_month >= 0,
        # (a table trajectory takes no rate)
        "fast_gains": (b["throughput.gain_rate_annual"] > GAIN_RATE_WARN_ANNUAL)
        & (b["throughput.trajectory"] != TRAJECTORIES.index("table")),
        "large_steps": context["steps_factor"] > STEPS_WARN_FACTOR,
        "depreciated_late": context["depreciation_start"] > fleet.start,
        "half_year_q4": (
            False if capital.half_year_q4 is None else ~np.isnan(capital.half_year_q4[:, 0])
        ),
    }
    sc = fleet.scenario
    # The flows of the scenarios whose IRR warnings list roots, cut now: the closure below must
    # not keep the chunk's ledger alive (a batch of many chunks would hold every one of them).
    irr_rows = {}
    for side, flagged, flows in (
        (
            "project",
            flags["no_irr_project"] | flags["irr_project_not_unique"],
            ledger.cash_flow_project,
        ),
        (
            "equity",
            flags["no_irr_equity"] | flags["irr_equity_not_unique"],
            ledger.cash_flow_equity,
        ),
    ):
        rows = np.flatnonzero(flagged)
        # Flows that change sign more than once were scanned for the IRR: the cells where their
        # NPV changes sign are kept (their rows counted among `rows`), and only others are scanned.
        row, *cell = facts["irr"][side]["cells"]
        keep = flagged[row]
        cells = (np.searchsorted(rows, row[keep]), *(c[keep] for c in cell))
        scanned = facts["irr"][side]["several_sign_changes"][rows]
        irr_rows[side] = (rows, flows[rows], scanned, cells)

    def warnings() -> list[list[str]]:
        _irr_root_context(irr_rows, context)
        out = _warnings(flags, _Listed(context), b.n)
        implausible_rows, implausible_sites = plausibility.input_warnings(b)
        for i, messages in enumerate(implausible_sites):
            out[i].extend(messages)
        # A row is named only where its scenario has several (its fleet and vintages), so that a
        # scenario's warnings read the same whatever other scenarios share its batch.
        several = (np.bincount(sc, minlength=b.n)[sc] > 1).tolist()
        prefix = lambda r: f"[{b.row_names[r]}] " if several[r] else ""  # noqa: E731
        scenario = sc.tolist()
        for key, rows_flagged in row_flags.items():
            for r in np.flatnonzero(rows_flagged).tolist():
                out[scenario[r]].append(prefix(r) + ROW_MESSAGES[key](context, r))
        for r, messages in enumerate(implausible_rows):
            out[scenario[r]].extend(prefix(r) + w for w in messages)
        for r, messages in enumerate(b.row_warnings):
            if messages:
                out[scenario[r]].extend(prefix(r) + w for w in messages)
        return out

    return warnings


def _irr_root_context(irr_rows, context) -> None:
    """The roots the IRR warnings list (`context["irr_roots_text_<side>"]`) and why flows without
    a root in the range have none (`irr_outside_<side>`), found for the flagged scenarios only,
    all at once; `irr_rows`: side -> (rows, their flows, scanned?, cells) (`_warning_source`)."""
    for side, (rows, flows, scanned, cells) in irr_rows.items():
        found = metrics_mod.irr_roots_annual(flows, cells)
        scan = np.flatnonzero(~scanned)
        for k, pairs in zip(scan, metrics_mod.irr_roots_annual(flows[scan]), strict=True):
            found[k] = pairs
        # worded from two lists of every rate and direction, converted at once (a call per
        # row costs more, and a list per root keeps the garbage collector busy)
        pairs = np.concatenate(found) if found else np.empty((0, 2))
        rates, directions = pairs[:, 0].tolist(), pairs[:, 1].tolist()
        ends = np.cumsum([0] + [len(roots) for roots in found]).tolist()
        context[f"irr_roots_text_{side}"] = {
            row: _roots_text(rates[a:b], directions[a:b])
            for row, a, b in zip(rows.tolist(), ends[:-1], ends[1:], strict=True)
        }
        # why the flows without a root in the range have none (_no_irr_message)
        empty = np.array([k for k, roots in enumerate(found) if len(roots) == 0], dtype=int)
        context[f"irr_outside_{side}"] = dict(
            zip(
                rows[empty].tolist(),
                zip(
                    metrics_mod.sign_changes(flows[empty]).tolist(),
                    metrics_mod.single_root_annual(flows[empty]).tolist(),
                    strict=True,
                ),
                strict=True,
            )
        )


def _scenario_flags(b, ledger: _Ledger, metrics, facts, context, first) -> dict[str, np.ndarray]:
    """Which scenarios get each SCENARIO warning (n,) bool; `first`: each scenario's first row."""
    coverage, stack = ledger.coverage, ledger.stack
    irr_project, irr_equity = metrics["irr_project_annual"], metrics["irr_equity_annual"]
    irr = facts["irr"]
    sized = (
        ~np.isnan(context["size_to_min_dscr"])
        | ~np.isnan(context["max_ltv"])
        | (b["financing.repayment"][first] == SCULPTED)
    ) & (context["sizing_constraint"] is not None)
    target = context["size_to_min_dscr"]
    contracted_kw = context["contracted_kw"]
    return {
        "no_tokens": ~(facts["pv_tokens"] > 0),
        "no_irr_project": np.isnan(irr_project),
        "thin_equity": facts["thin"],
        "no_irr_equity": np.isnan(irr_equity) & ~facts["equity_counted"],
        "no_payback": np.isnan(metrics["payback_months"]),
        "payback_undone": ~np.isnan(facts["payback"].undone_month),
        "no_breakeven": np.isnan(metrics["breakeven_price_usd_per_mtok"])
        & ~facts["negative_breakeven"]
        & ~facts["breakeven_unresolved"],
        "breakeven_unresolved": facts["breakeven_unresolved"],
        "breakeven_negative": facts["negative_breakeven"],
        "no_debt": stack.metrics["debt_usd"] <= 0,
        "dscr_below_1": coverage["min_dscr"] < 1.0,
        "covenant_breach": coverage["breach_months"] > 0,
        "covenants_untested": _untested(ledger.covenants, context).any(axis=0),
        "dscr_floor_below_1": ledger.covenants[0] < 1.0,  # (NaN: no covenant, False)
        "irr_project_not_unique": ~np.isnan(irr_project) & irr["project"]["several_sign_changes"],
        "irr_equity_not_unique": ~np.isnan(irr_equity) & irr["equity"]["several_sign_changes"],
        "no_input_ratio": facts["no_input_ratio"],
        "debt_settled_at_end": context["settled_at_end"] > 0.005,
        "debt_sized": sized,
        "sized_dscr_missed": sized
        & ~np.isnan(target)
        & (coverage["min_dscr"] < target * (1.0 - SIZED_DSCR_TOLERANCE)),
        "loan_cut_to_capex": context["loan_usd"] > ledger.capex_total + HALF_CENT_USD,
        # (a capital stack's tranche amounts are not cut to the capex as the term loan is)
        "debt_over_capex": stack.metrics["debt_usd"] > ledger.capex_total + HALF_CENT_USD,
        "over_contract": ~np.isnan(contracted_kw) & (context["peak_it_kw"] > contracted_kw + 1e-9),
        "site_value_at_horizon": context["site_value_end"] > HALF_CENT_USD,
        "owned_without_maintenance": context["owned"] & (context["maintenance_share"] == 0),
        "losses_unused": (context["losses_unused"] > HALF_CENT_USD)
        & (ledger.tax_rate > 0)
        & (
            b["financing.tax_valuation_allowance"][first]
            == deferred_tax_mod.VALUATION_ALLOWANCES.index("none")
        ),
    }


def _warning_context(b, ledger: _Ledger, facts, fleet: _Fleet, costs: _Costs, capital, first):
    """The figures the warnings quote, per scenario (n,) or per row; `first`: each scenario's
    first row."""
    coverage, stack = ledger.coverage, ledger.stack
    irr = facts["irr"]
    return {
        "equity_share": facts["equity_share"],
        "payback_months": facts["payback"].months,
        "payback_undone_month": facts["payback"].undone_month,
        "cumulative_cash_end": facts["payback"].cumulative_end_usd,
        "min_dscr": coverage["min_dscr"],
        "months_below_1": (coverage["dscr"] < 1.0).sum(axis=1),
        "breach_months": coverage["breach_months"],
        "first_breach_month": coverage["first_breach_month"],
        "covenants": ledger.covenants,
        # months each covenant test is breached, counted once for all rows
        "breaches": {
            name: coverage[f"{name}_breach"].sum(axis=1) for name in ("dscr", "llcr", "ltv")
        },
        "first_breaches": _first_breaches(ledger),
        "test_months": b["financing.covenants.test_months"][first],
        # the DSCR test that sized the debt (financing.dscr_binding_test), and what it sums
        "dscr_binding": {
            key.removeprefix("dscr_binding_"): values
            for key, values in stack.metrics.items()
            if key.startswith("dscr_binding_")
        },
        "ebitda": ledger.ebitda,
        "income_tax": ledger.income_tax,
        "first_test_month": b["financing.covenants.first_test_month"][first],
        "last_dscr_month": coverage["last_dscr_month"],
        "last_llcr_month": coverage["last_llcr_month"],
        "life_months": b["depreciation.life_years"] * MONTHS_PER_YEAR,
        "retire": fleet.retire,
        "purchase": fleet.purchase,
        "start": fleet.start,
        "depreciation_start": fleet.purchase + b["depreciation.in_service_month"],
        # the month the last GPUs of a deployment ramp are depreciated from, and the months
        # after the first's (rows,)
        "last_depreciated": fleet.purchase + capital.batches.last_in_service(fleet.held),
        "ramp_depreciated": capital.batches.last_in_service(fleet.held)
        - capital.batches.in_service[:, 0],
        "revenue_undepreciated": capital.revenue_undepreciated,
        "half_year_q4": capital.half_year_q4,
        "first_in_service": fleet.purchase + capital.batches.in_service[:, 0],
        "ramped": (capital.batches.shares > 0).sum(axis=1) > 1,
        "losses_unused": ledger.deferred.losses_unused_usd,
        "tax_rate": ledger.tax_rate,
        "held": fleet.held,
        "carrying_at_sale": capital.carrying_at_sale,
        "impairment_month": capital.impairment_month,
        "impairment_loss": capital.impairment_loss,
        **_impairment_figures(capital.lines["impairment_usd"]),
        "contracted_kw": b["facility.contracted_kw"][first],
        "loan_usd": b["financing.debt_usd"][first],
        "peak_it_kw": ledger.lines["it_kw"].max(axis=1),
        "kw_per_gpu": costs.kw_per_gpu,
        "nameplate_kw": costs.nameplate_kw,
        "joules_per_token": b["power.measured_joules_per_token"],
        "gain_rate": b["throughput.gain_rate_annual"],
        "steps_factor": np.prod(1.0 + b.step_gains, axis=1),
        "settled_at_end": stack.lines["settlement_usd"].sum(axis=1),
        "cost_of_equity": stack.metrics["cost_of_equity_annual"],
        "irr_falling": {side: irr[side]["falling"] for side in irr},
        "irr_several": {side: irr[side]["several_sign_changes"] for side in irr},
        "irr_against_npv": {side: irr[side]["against_npv"] for side in irr},
        "irr_flows_sum": {side: irr[side]["flows_sum"] for side in irr},
        "irr_falling_annual": {side: irr[side]["falling_annual"] for side in irr},
        "sizing_constraint": stack.metrics.get("debt_sizing_constraint"),
        "ltv_binding_month": stack.metrics.get("ltv_binding_month"),
        "impairment": ledger.impairment,  # each scenario's write-downs by month (n, T+1)
        "debt_usd": stack.metrics["debt_usd"],
        "capex_total": ledger.capex_total,
        "size_to_min_dscr": b["financing.size_to_min_dscr"][first],
        "max_ltv": b["financing.max_ltv"][first],
        "input_revenue": (
            ledger.lines["input_token_revenue_usd"] + ledger.lines["cached_input_token_revenue_usd"]
        ).any(axis=1),
        "breakeven_overflow": facts["breakeven_overflow"],
        **_breakeven_figures(ledger, facts["breakeven_unresolved"]),
        "resale_collateral": np.zeros(b.n, bool)
        if capital.resale is None
        else capital.resale.has[first],
    }


def _impairment_figures(impairment) -> dict[str, np.ndarray]:
    """Every write-down of each row, not only the first (a test each month can write down
    again): their months, their sum and the sum reversed later (rows,); 0 where none is, and
    summed only for a chunk that has some."""
    if not impairment.any():
        none = np.zeros(len(impairment))
        return {
            "impairment_months": none.astype(np.int64),
            "impairment_written_down": none,
            "impairment_reversed": none,
        }
    return {
        "impairment_months": (impairment > 0).sum(axis=1),
        "impairment_written_down": np.maximum(impairment, 0.0).sum(axis=1),
        "impairment_reversed": np.maximum(-impairment, 0.0).sum(axis=1),
    }


def _first_breaches(ledger: _Ledger) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each covenant test's first breach month and the ratio it tested then, (n,) each: the DSCR
    on its trailing window (`dscr_test`), the LLCR, the LTV (NaN: collateral worth nothing);
    month 0 and NaN where the test is not breached."""
    coverage = ledger.coverage
    out = {}
    for name, ratio in (("dscr", "dscr_test"), ("llcr", "llcr"), ("ltv", None)):
        breach = coverage[f"{name}_breach"]
        first = np.argmax(breach, axis=1)
        hit = breach.any(axis=1)
        if not hit.any():
            out[name] = (first, np.full(len(first), np.nan))
            continue
        if ratio is None:  # (the collateral is computed only where an LTV test is breached)
            balance = ledger.stack.lines["balance_usd"]
            line = capital_mod.loan_to_value(balance, ledger.collateral())[0]
        else:
            line = coverage[ratio]
        tested = np.take_along_axis(line, first[:, None], axis=1)[:, 0]
        out[name] = (first, np.where(hit, tested, np.nan))
    return out


def _breakeven_figures(ledger: _Ledger, unresolved) -> dict[str, np.ndarray]:
    """The revenue and the costs (capex, power, facility, opex) over the horizon (n,) that the
    warning of a break-even price not found quotes; summed only for a batch that has one."""
    if not unresolved.any():
        return {}
    lines = ledger.lines
    costs = (lines["power_usd"] + ledger.facility + lines["opex_usd"]).sum(axis=1)
    return {"revenue_total": ledger.revenue.sum(axis=1), "costs_total": ledger.capex_total + costs}


def _site_context(b, ledger: _Ledger, site, first) -> dict[str, np.ndarray]:
    """The site's figures the warnings quote (n,): its book value at the horizon, counted as
    cash then (an owned hall, a liquid retrofit), and that value's present value; whether the
    hall is owned, its maintenance share and the lives of the hall and of a retrofit."""
    value = site.book_value_end_usd
    at_horizon = np.take_along_axis(ledger.discount, b.horizon_months[:, None], axis=1)[:, 0]
    return {
        "site_value_end": value,
        "site_value_pv": value * at_horizon,
        "owned": b["facility.mode"][first] == facility_mod.FACILITY_MODES.index("owned"),
        "maintenance_share": b["facility.maintenance_share_of_capex_annual"][first],
        "horizon": b.horizon_months,
    }


class _Listed(dict):
    """The warnings' context with its arrays as Python lists, each converted on first use: a
    message reads a figure per flagged scenario, and indexing and formatting a list's float costs
    a fraction of a numpy scalar's (the texts are the same)."""

    def __init__(self, context: Mapping):
        super().__init__()
        self.context = context

    def __missing__(self, key):
        value = self[key] = _listed(self.context[key])
        return value


def _listed(value):
    """Arrays, and arrays in dicts and tuples, as lists; anything else as it is."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_listed(v) for v in value)
    return value


def _late_troubles(ledger: _Ledger) -> tuple[dict[str, np.ndarray], dict[str, tuple]]:
    """What a lender reads in the monthly lines and no summary figure shows: flags (n,) and per
    flag (months, first month, figures...), each (n,), computed on the flagged scenarios only:
    a loan larger than its collateral (peak LTV, months the collateral is worth nothing), a loan
    life cover below 1 (the lowest), interest the service leaves unpaid (the sum [USD], the
    lowest interest cover), EBITDA negative in months with GPUs in service after the first month
    it was positive (its sum), and site costs paid after the last GPU is retired (their sum)."""
    n = len(ledger.capex_total)
    flags: dict[str, np.ndarray] = {}
    facts: dict[str, tuple] = {}

    def note(key, mask, *figures):
        """Flag the rows of `mask` (n, T) and record their facts; `figures(rows, sub)` gives
        figures of those rows from their mask `sub`."""
        flags[key] = hit = mask.any(axis=1)
        rows = np.flatnonzero(hit)
        sub = mask[rows]
        columns = (sub.sum(axis=1), np.argmax(sub, axis=1), *(f(rows, sub) for f in figures))
        facts[key] = tuple(_scatter(n, rows, c) for c in columns)

    _debt_troubles(ledger, note)
    ebitda = ledger.ebitda
    positive = ebitda > 0
    months = np.arange(ebitda.shape[1])[None, :]
    since = np.where(positive.any(axis=1), np.argmax(positive, axis=1), ebitda.shape[1])
    # Only months with GPUs in service: retiring earlier stops the fleet's losses, not the costs
    # of a site kept while none serves (a colocation contract, an owned hall).
    serving = ledger.lines["gpus_in_service"] > 0
    note(
        "ebitda_negative_late",
        (months > since[:, None]) & (ebitda < -HALF_CENT_USD) & ledger.active & serving,
        lambda rows, sub: np.where(sub, ebitda[rows], 0.0).sum(axis=1),
    )
    last = _last_month(serving, none=months.shape[1] - 1)  # (no GPU ever: no month after)
    facility = ledger.facility
    # Only rows whose fleet is retired before their last month have months after it: the masks
    # over those rows alone (seldom any), not over every row and month.
    after_fleet = np.zeros(ebitda.shape, dtype=bool)
    retired = np.flatnonzero(last < months.shape[1] - 1)
    after_fleet[retired] = (
        (months > last[retired, None])
        & (facility[retired] > HALF_CENT_USD)
        & ledger.active[retired]
    )
    note(
        "site_after_fleet",
        after_fleet,
        lambda rows, sub: np.where(sub, facility[rows], 0.0).sum(axis=1),
        lambda rows, sub: last[rows],
    )
    for key in (
        "loan_over_collateral",
        "sold_while_owed",
        "llcr_below_1",
        "interest_deferred",
        "proceeds_ahead_of_capex",
    ):
        flags.setdefault(key, np.zeros(n, bool))
    return flags, facts


def _debt_troubles(ledger: _Ledger, note) -> None:
    """`_late_troubles` of the debt: a loan larger than its collateral, GPUs sold while it is
    owed, a loan life cover below 1, interest deferred, debt proceeds ahead of the capex."""
    lines = ledger.stack.lines
    balance = lines["balance_usd"]
    owed = balance > HALF_CENT_USD
    if owed.any():
        value = ledger.collateral()

        def peak_ltv(rows, sub):
            worth = sub & (value[rows] > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                ltv = np.where(worth, balance[rows] / value[rows], -np.inf).max(axis=1)
            return np.where(worth.any(axis=1), ltv, np.inf)

        def worthless(rows, sub):
            return (sub & (value[rows] <= 0)).sum(axis=1)

        note("loan_over_collateral", owed & (balance > value), peak_ltv, worthless)
        proceeds = ledger.lines["proceeds_usd"]  # the GPUs' sales (before the horizon's)

        def at_first(line):
            return lambda rows, sub: line[rows, np.argmax(sub, axis=1)]

        note(
            "sold_while_owed",
            owed & (proceeds > HALF_CENT_USD),
            at_first(proceeds),
            at_first(balance),
        )
        llcr = ledger.coverage["llcr"]
        note(
            "llcr_below_1",
            owed & (llcr < 1.0),  # a loan owed: alone or in any batch, the same months
            lambda rows, sub: np.where(sub, llcr[rows], np.inf).min(axis=1),
        )
    deferred = lines.get("deferred_interest_usd")
    if deferred is not None:

        def lowest_cover(rows, sub):
            cfads = ledger.ebitda[rows] - ledger.income_tax[rows]
            with np.errstate(divide="ignore", invalid="ignore"):
                cover = cfads / lines["interest_expense_usd"][rows]
            return np.where(sub, cover, np.inf).min(axis=1)

        note(
            "interest_deferred",
            deferred > HALF_CENT_USD,
            lambda rows, sub: deferred[rows].sum(axis=1),
            lowest_cover,
        )
    ahead = lines.get("proceeds_above_uses_usd")
    if ahead is not None and (ahead > HALF_CENT_USD).any():
        # capex still to be paid after the month: the surplus then is borrowed ahead of it
        later = remaining_sum_months(ledger.capex) - ledger.capex

        def capex_next(rows, sub):
            start = np.argmax(sub, axis=1)
            after = (ledger.capex[rows] > HALF_CENT_USD) & (
                np.arange(ledger.capex.shape[1])[None, :] > start[:, None]
            )
            return np.argmax(after, axis=1)

        note(
            "proceeds_ahead_of_capex",
            (ahead > HALF_CENT_USD) & (later > HALF_CENT_USD),
            lambda rows, sub: ahead[rows, np.argmax(sub, axis=1)],
            capex_next,
        )


def _stack_troubles(b, ledger: _Ledger) -> tuple[dict[str, np.ndarray], dict[str, tuple]]:
    """What a capital stack's tranches do that no summary figure says: flags (n,) and the facts
    their warnings quote, a tuple per tranche of its name and arrays (n,): convertible notes
    settled in shares, whose value the equity cash flows never pay (`conversions`: converted?,
    month, net shares, capped-call shares, share price then, face paid in shares, conversion
    value above the face); a floating rate below 0, index + spread with no floor
    (`negative_rates`: below 0?, months, the first, the lowest rate); equity tranches that issue
    shares with no share price to count them (`unpriced_equity`: unpriced?, USD issued), which
    leaves dilution_shares null."""
    stack = ledger.stack
    n = len(ledger.capex_total)
    conversions = []
    for name, metrics in stack.tranche_metrics.items():
        if "converted" not in metrics or not np.any(metrics["converted"] > 0):
            continue
        price = metrics["share_price_at_settlement_usd"]
        conversions.append(
            (
                name,
                metrics["converted"] > 0,
                metrics["settlement_month"],
                metrics["net_shares"],
                metrics["capped_call_shares"],
                price,
                stack.tranches[name]["converted_usd"].sum(axis=1),
                metrics["gross_shares"] * price,
            )
        )
    negative_rates = []
    for name, lines in stack.tranches.items():
        rate = lines.get("rate_annual")
        if rate is None or not np.any(rate < 0.0):  # (NaN outside its months: not below 0)
            continue
        months, first, lowest = financing_mod.negative_rate_months(rate)
        # (a scenario of the batch without the tranche has its terms at an amount of 0)
        lent = stack.tranche_metrics[name]["amount_usd"] > 0
        negative_rates.append((name, (months > 0) & lent, months, first, lowest))
    unpriced = []
    for name, metrics in stack.tranche_metrics.items():
        if "shares" in metrics:  # an equity tranche: its shares are NaN without a share price
            issued = metrics["amount_usd"]
            unpriced.append((name, np.isnan(metrics["shares"]) & (issued > 0), issued))
    flags = {
        "notes_converted": np.zeros(n, bool),
        "negative_rate": np.zeros(n, bool),
        "shares_unpriced": np.zeros(n, bool),
    }
    for conversion in conversions:
        flags["notes_converted"] |= conversion[1]
    for negative in negative_rates:
        flags["negative_rate"] |= negative[1]
    for equity in unpriced:
        flags["shares_unpriced"] |= equity[1]
    outside = _equity_outside_tranches(b, stack, n)
    flags["equity_outside_tranches"] = outside[0]
    return flags, {
        "conversions": tuple(conversions),
        "negative_rates": tuple(negative_rates),
        "unpriced_equity": tuple(unpriced),
        "conversion_shares": stack.metrics.get("conversion_shares", np.zeros(n)),
        "equity_outside_tranches": outside[1:],
    }


def _equity_outside_tranches(b, stack, n) -> tuple[np.ndarray, ...]:
    """Scenarios (n,) whose tranches (`financing.tranches`) leave part of the capex, fees and
    capped calls to equity outside them, no tranche funding the remainder; and the figures
    their warning quotes (n,): what the tranches raise, and that remainder [USD]."""
    given = np.zeros(n, bool)
    for spec in b.stack:
        given |= tranche_tables.present_rows(spec, n)
    if not given.any():  # (financing.debt_share's loan in closed form has no equity lines)
        return given, np.zeros(n), np.zeros(n)
    lines = stack.lines
    issued = lines["equity_issued_usd"].sum(axis=1)
    rest = lines["equity_funding_usd"].sum(axis=1) - issued
    raised = lines["proceeds_usd"].sum(axis=1) + issued
    return given & (rest > HALF_CENT_USD), raised, rest


def _scatter(n: int, rows, values) -> np.ndarray:
    """Values of some rows as an array (n,), 0 elsewhere."""
    out = np.zeros(n, dtype=np.asarray(values).dtype)
    out[rows] = values
    return out


FACILITY_INPUTS = (
    "colo_usd_per_kw_month",
    "escalation_annual",
    "contracted_kw",
    "overage_multiplier",
    "critical_kw",
    "capex_usd_per_mw",
    "life_years",
    "maintenance_share_of_capex_annual",
    "hall_cooling",
    "liquid_retrofit_usd_per_rack",
    "retrofit_life_years",
)
"""Facility fields passed to econ.facility.facility_costs under their own names, read on each
scenario's first row (rack_cooling is each row's: `_site`)."""


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


def _finance(b, first, horizon, months, capex, tax_rate, discount_annual, built=None, sizing=None):
    """The capital stack's schedules: the general stack, or the closed form of its common case.

    With a construction period (`built`, econ.construction) the debt_share loan is the
    construction loan: drawn with the capex payments, its interest capitalized until service.

    When the only debt is financing.debt_share's loan and all capex is paid in month 0, the loan
    is one level-payment (or sculpted) draw, whose schedule has a closed form (econ.financing)
    that is several times faster than the general stack; tests check the two agree. `sizing`
    (from _sizing) sizes the debt to a minimum DSCR and a maximum LTV: the single loan in closed
    form, the general stack by one factor on every debt tranche (its schedules scale with it).
    """
    if built is not None:
        return _built_loan(b, built, capex, tax_rate, discount_annual)
    if not b.stack and _only_month_zero_capex(capex) and FAST_SINGLE_LOAN:
        return _single_loan(
            b, first, horizon, months, capex[:, 0], tax_rate, discount_annual, sizing
        )
    sculpted = np.zeros(len(first), bool) if sizing is None else sizing.shaped
    if np.any(sculpted & np.any(capex[:, 1:], axis=1)):
        row = int(np.flatnonzero(sculpted & np.any(capex[:, 1:], axis=1))[0])
        name = REPAYMENT_NAMES[int(b["financing.repayment"][first][row])]
        raise InputError(
            f"scenario '{b.names[row]}': financing.repayment = '{name}' needs all capex paid in "
            "month 0 (one draw); this scenario buys GPUs later (vintages or a deployment "
            "schedule): use repayment = 'level_payment' with size_to_min_dscr"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        draw_profile = np.nan_to_num(capex / capex.sum(axis=1, keepdims=True))
    # Sculpted loans (single loans drawn in month 0) take the closed form, the rest the stack.
    specs = _stack_specs(b, first, horizon, capex.sum(axis=1), leave_out=sculpted)

    def schedule(specs):
        return stack_schedule(
            specs,
            capex.sum(axis=1),
            draw_profile,
            months,
            horizon,
            tax_rate=tax_rate,
            equity_cost_annual=discount_annual,
        )

    stack = schedule(specs)
    if sizing is None:
        return stack
    if sculpted.any():
        rows = np.flatnonzero(sculpted)
        single = _single_loan(
            b,
            first[rows],
            horizon[rows],
            months,
            capex[rows, 0],
            tax_rate[rows],
            discount_annual[rows],
            sizing.rows(rows),
        )
        _put_rows(stack, single, rows)
    if not specs:
        return stack
    given = stack.metrics["debt_usd"]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_usd = {
            k: np.nan_to_num(stack.lines[k] / given[:, None])
            for k in ("debt_service_usd", "balance_usd")
        }
    limits = _dscr_limits(sizing, per_usd["debt_service_usd"], per_usd["balance_usd"])
    debt, constraint = financing_mod.size_debt(
        sizing.cfads,
        per_usd["debt_service_usd"],
        per_usd["balance_usd"],
        sizing.min_dscr,
        given,
        sizing.test_months,
        sizing.value,
        sizing.max_ltv,
        sizing.first_test_month,
        limits=limits,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(given > 0, np.minimum(debt / given, 1.0), 1.0)
    if not np.all(scale == 1.0):
        scaled = [dict(t) for t in specs]
        for spec in scaled:
            if spec["type"] != "equity":
                spec["amount_usd"] = spec["amount_usd"] * scale
                spec["share_of_capex"] = spec["share_of_capex"] * scale
        stack = schedule(scaled)
    stack.metrics["debt_sizing_constraint"] = constraint
    stack.metrics.update(
        _binding_metrics(sizing, per_usd["debt_service_usd"], per_usd["balance_usd"], limits)
    )
    if sculpted.any():  # (their sizing metrics too)
        _put_rows(stack, single, rows)
    return stack


def _put_rows(stack, single, rows) -> None:
    """Write the lines and metrics of some scenarios' single loans into the stack's, in place."""
    n = len(next(iter(stack.metrics.values())))
    for group in ("lines", "metrics"):
        target = getattr(stack, group)
        for key, values in getattr(single, group).items():
            if key not in target:
                target[key] = np.zeros((n, *np.shape(values)[1:]), dtype=np.asarray(values).dtype)
            target[key][rows] = values


def _sized_again(b, first, months, scenario, operating, sizing: _DebtSizing, cfads):
    """The debt schedules of scenarios whose realised DSCR fell short of the target they were
    sized to, sized again on the lower of the CFADS sized on and the CFADS realised, each month,
    until no month falls short (at most RESIZING_ROUNDS rounds; see _sized_short). The debt
    never rises: the CFADS sized on only falls.

    `first`: the scenarios' first rows in b; `scenario`: their horizon, capex (n, T), tax rate,
    discount rate, tax payment schedule and loss limit; `operating`: their EBITDA, tax
    depreciation and taxable gains (n, T); `cfads`: the CFADS realised with the first debt."""
    horizon, capex, tax_rate, discount_annual, payment, loss_limit = scenario
    ebitda, tax_depreciation, tax_gain = operating
    short = np.ones(len(first), bool)
    for _ in range(RESIZING_ROUNDS):
        # only the scenarios still short: each ends as it would alone, whatever its batch
        lower = np.where(short[:, None], np.minimum(sizing.cfads, cfads), sizing.cfads)
        sizing = replace(sizing, cfads=lower)
        stack = _finance(b, first, horizon, months, capex, tax_rate, discount_annual, None, sizing)
        interest = stack.lines["interest_expense_usd"]
        taxable = tax.income_before_tax_usd(ebitda, tax_depreciation, interest, tax_gain)
        income_tax = _income_tax(taxable, tax_rate, horizon, payment, loss_limit)
        cfads = cashflow.cash_flow_available_for_debt_service_usd(ebitda, income_tax)
        short = _sized_short(sizing, cfads, stack.lines["debt_service_usd"])
        if short is None:
            break
    return stack


def _with_rows(stack, part, rows):
    """The stack with the schedules of scenarios `rows` taken from `part` (copied: neither given
    stack changes, and lines the stack shares among its keys stay as they are)."""
    merged = replace(
        stack,
        lines={k: np.array(v) for k, v in stack.lines.items()},
        metrics={k: np.array(v) for k, v in stack.metrics.items()},
        tranches={
            name: {k: np.array(v) for k, v in lines.items()}
            for name, lines in stack.tranches.items()
        },
        tranche_metrics={
            name: {k: np.array(v) for k, v in metrics.items()}
            for name, metrics in stack.tranche_metrics.items()
        },
    )
    _put_rows(merged, part, rows)
    # The tranches' own lines too, so that they still add up to the stack's (a tranche the part
    # has not is one those scenarios do not draw).
    for group, missing in (("tranches", 0.0), ("tranche_metrics", np.nan)):
        for name, own in getattr(merged, group).items():
            given = getattr(part, group).get(name, {})
            for key, target in own.items():
                target[rows] = given.get(key, missing)
    return merged


@dataclass(frozen=True)
class _DebtSizing:
    """What sizes a scenario's debt (n,) and the cash flow it is sized on (n, T+1)."""

    min_dscr: np.ndarray  # target minimum DSCR [x], NaN: not sized by DSCR
    max_ltv: np.ndarray  # [fraction], NaN: no cap
    shaped: np.ndarray  # bool: debt_share's loan sculpted to CFADS or on a balance schedule
    test_months: np.ndarray  # (n,) the DSCR covenant's trailing window [months]
    first_test_month: np.ndarray  # (n,) the covenant's first test, NaN: from the start
    cfads: np.ndarray  # CFADS before financing: EBITDA - tax on income before interest [USD]
    value: np.ndarray  # the GPUs' (and site's) book value at month end [USD]

    def rows(self, rows) -> _DebtSizing:
        """The sizing of some scenarios only."""
        return _DebtSizing(
            self.min_dscr[rows],
            self.max_ltv[rows],
            self.shaped[rows],
            self.test_months[rows],
            self.first_test_month[rows],
            self.cfads[rows],
            self.value[rows],
        )


def _construction_sizing(b, row: int) -> str:
    """Why `row`'s debt sizing is refused: its loan is econ.construction's, drawn with capex paid
    after month 0 (a construction period, or a purchase after month 0), which is not sized."""
    shares = b.extras["capex.payment_shares"][row]
    scheduled = np.any(b.extras["capex.payment_months"][row][shares > 0] > 0)
    if scheduled or not np.isnan(b["fleet.service_start_month"][row]):
        return CONSTRUCTION_SIZING
    sizing = CONSTRUCTION_SIZING.split(" is not available")[0]
    # (a scenario whose capex is paid after month 0 is projected apart from those that size
    # their debt, _construction_apart: the row refused is the one paying after month 0)
    purchase = int(b["fleet.purchase_month"][row])
    return (
        f"{sizing} is not available with capex paid after month 0 yet: fleet.purchase_month "
        f"= {purchase} pays it in month {purchase}, and a loan drawn after month 0 is the "
        "construction loan (drawn with the capex, level payments from the service start), "
        "which is not sized; give the debt as financing.debt_share with level payments, or "
        "fleet.purchase_month = 0"
    )


def _sizing(
    b,
    first,
    horizon,
    capex,
    proceeds,
    ebitda,
    lines,
    depreciation,
    impairment,
    construction=False,
    market_collateral=None,
):
    """The debt sizing inputs, or None where no scenario sizes its debt or sculpts it.

    The debt is sized on CFADS before financing: EBITDA less the income tax the scenario would
    pay with no interest to deduct. Interest lowers the tax of the whole projection, so the
    realised DSCR is mostly at or above the target (the debt's tax shield is the lenders'
    cushion); where the interest moves a year's tax into fewer months and some month falls short,
    _sized_again sizes the scenario again. The collateral value for LTV is the book value:
    capex paid so far less book depreciation and impairment and the book value of what was sold
    (`econ.depreciation.held_book_value_usd`); where the scenario gives a resale
    table (market.resale_value_table or resale_series), the GPUs count at their resale value
    instead (hardware x share at their age, until sold; econ.resale.collateral_value_usd) and the
    site at its book value.
    """
    min_dscr = b["financing.size_to_min_dscr"][first]
    max_ltv = b["financing.max_ltv"][first]
    shaped = np.isin(b["financing.repayment"][first], SHAPED)
    if np.isnan(min_dscr).all() and np.isnan(max_ltv).all() and not shaped.any():
        return None
    if construction:
        row = int(np.flatnonzero(~np.isnan(min_dscr) | ~np.isnan(max_ltv) | shaped)[0])
        raise InputError(f"scenario '{b.names[row]}': {_construction_sizing(b, row)}")
    book_depreciation, tax_depreciation = depreciation  # the scenario's, with the site's
    taxable = tax.income_before_tax_usd(ebitda, tax_depreciation, 0.0, lines["tax_gain_usd"])
    income_tax = _income_tax(
        taxable,
        b["financing.tax_rate"][first],
        horizon,
        b["financing.tax_payment"][first],
        b["financing.tax_loss_limit"][first],
    )
    return _DebtSizing(
        min_dscr=min_dscr,
        max_ltv=max_ltv,
        shaped=shaped,
        test_months=b["financing.covenants.test_months"][first],
        first_test_month=b["financing.covenants.first_test_month"][first],
        cfads=cashflow.cash_flow_available_for_debt_service_usd(ebitda, income_tax),
        value=_or_book(
            market_collateral,
            dep.held_book_value_usd(
                capex, book_depreciation + impairment, proceeds, lines["gain_usd"]
            ),
        ),
    )


RESIZING_ROUNDS = 8
"""Rounds of sizing again where the realised DSCR falls short of the target (see _sized_short)."""


def _sized_short(sizing: _DebtSizing | None, cfads, debt_service) -> np.ndarray | None:
    """Scenarios sized to a minimum DSCR whose realised DSCR falls below it in some month (n,)
    bool, or None where there is none.

    The sizing counts the tax paid without the debt's interest. Interest lowers the tax of the
    whole projection, but it can move the first month with taxable income later and so pay a
    year's tax in fewer installments: a month's CFADS then falls below the one the debt was sized
    on. Such scenarios are sized again on the lower of the two CFADS in each month, which never
    raises the debt, until no month falls short (at most RESIZING_ROUNDS rounds)."""
    if sizing is None:
        return None
    target = sizing.min_dscr[:, None] * (1.0 - SIZED_DSCR_TOLERANCE)
    with np.errstate(invalid="ignore"):
        short = ((debt_service > 0) & (cfads < target * debt_service)).any(axis=1)
    return short if short.any() else None


def _or_book(market_collateral, book):
    """The collateral at market value where a scenario has one, else the book value given."""
    if market_collateral is None:
        return book
    return np.where(np.isnan(market_collateral), book, market_collateral)


def _market_collateral(b, first, capex, book_depreciation, impairment, lines):
    """The collateral the LTV limit and the ltv line test where a scenario gives a resale table
    [USD, (n, T+1)]: the site's book value plus the GPUs at their resale value; NaN in the
    scenarios without a table (their collateral is the book value); None where none has one."""
    if "resale_collateral_usd" not in lines:
        return None
    has = ~np.isnan(b.extras["market.resale_table_ages"][first]).all(axis=1)
    book = cumsum_months(capex - book_depreciation - impairment)
    gpus_book = cumsum_months(
        lines["capex_usd"] - lines["depreciation_usd"] - lines["impairment_usd"]
    )
    return np.where(has[:, None], book - gpus_book + lines["resale_collateral_usd"], np.nan)


REPAYMENT_NAMES = field_kinds()["financing.repayment"][1]
"""financing.repayment by its batch code (the choices in the model's order)."""
SCULPTED, SCHEDULED = REPAYMENT_NAMES.index("sculpted"), REPAYMENT_NAMES.index("balance_schedule")
SHAPED = (SCULPTED, SCHEDULED)
"""Repayment codes whose loan is shaped (to CFADS or to a balance schedule), not level."""

FAST_SINGLE_LOAN = True
"""Use the closed form for a single debt_share loan drawn in month 0 (tests switch it off)."""


def _only_month_zero_capex(capex) -> bool:
    return not np.any(capex[:, 1:])


def _single_loan(b, first, horizon, months, capex_usd, tax_rate, discount_annual, sizing=None):
    """financing.debt_share's loan drawn in month 0: level payments over debt_term_months, the
    balance left repaid in the last month; payments sculpted to CFADS over the term within the
    horizon; or the balances of financing.balance_schedule. Sized by `sizing` where given. The
    StackSchedule lines and metrics the engine reads."""
    share = _loan_share(b, first, capex_usd)
    rate = b["financing.debt_rate_annual"][first]
    effective = b["financing.debt_rate_quote"][first] == 1
    rate_monthly = np.where(effective, monthly_rate(rate), nominal_monthly_rate(rate))
    term = b["financing.debt_term_months"][first]
    debt_usd = share * capex_usd
    repayment = b["financing.repayment"][first]  # the shaped rows are _sizing's
    scheduled = repayment == SCHEDULED
    per_usd = None  # the balance-schedule loan per USD drawn
    if scheduled.any():
        per_usd = financing_mod.scheduled_balance_loan(
            b.extras["financing.balance_schedule"][first], rate_monthly, months, horizon
        )
    if sizing is not None:
        debt_usd, sized, sculpt = _size_single_loan(
            sizing, debt_usd, rate_monthly, term, horizon, months, repayment, per_usd
        )
    parts = []  # (rows, (interest, paid, scheduled principal, balance, settlement)) in USD
    level = ~np.isin(repayment, SHAPED)
    if level.any():  # (the level schedule of the other rows would be thrown away)
        interest, principal, balance, settlement = level_payment_schedule(
            debt_usd, rate_monthly, term, months, last_month=horizon
        )
        parts.append((level, (interest, interest, principal, balance, settlement)))
    if (repayment == SCULPTED).any():
        service = debt_usd[:, None] * sculpt["service_per_usd"]
        sculpted_balance = debt_usd[:, None] * sculpt["balance_per_usd"]
        opening = np.concatenate([debt_usd[:, None], sculpted_balance[:, :-1]], axis=1)
        interest = np.where(months[None, :] >= 1, opening * rate_monthly[:, None], 0.0)
        # Interest the service does not cover is added to the balance (deferred), not paid.
        paid = np.minimum(interest, service)
        no_settlement = np.zeros_like(sculpted_balance)
        parts.append(
            (
                repayment == SCULPTED,
                (interest, paid, service - paid, sculpted_balance, no_settlement),
            )
        )
    if per_usd is not None:
        usd = {k: debt_usd[:, None] * v for k, v in per_usd.items()}
        lines = ("interest", "paid", "principal", "balance", "settlement")
        parts.append((scheduled, tuple(usd[k] for k in lines)))
    interest, paid, scheduled_principal, balance, settlement = (
        parts[0][1] if len(parts) == 1 else _by_rows(parts)
    )
    principal = scheduled_principal + settlement
    financing = -(paid + principal)
    financing[:, 0] += debt_usd  # drawn in month 0
    lines = {
        "interest_expense_usd": interest,
        "cash_interest_usd": paid,
        "principal_usd": principal,
        "settlement_usd": settlement,
        "debt_service_usd": paid + scheduled_principal,
        "balance_usd": balance,
        "financing_cash_flow_usd": financing,
    }
    if not level.all():  # a level loan pays all its interest
        lines["deferred_interest_usd"] = interest - paid
    metrics = _loan_metrics(debt_usd, rate_monthly, capex_usd, tax_rate, discount_annual)
    if sizing is not None:
        metrics["debt_sizing_constraint"] = sized.pop("constraint")
        metrics.update(sized)
    return capital_mod.StackSchedule(lines=lines, tranches={}, metrics=metrics)


def _by_rows(parts):
    """Lines of loans of several kinds, each kind's rows taken from its own lines."""
    out = [np.zeros_like(line) for line in parts[0][1]]
    for rows, lines in parts:
        for target, line in zip(out, lines, strict=True):
            target[rows] = line[rows]
    return tuple(out)


def _loan_metrics(debt_usd, rate_monthly, capex_usd, tax_rate, discount_annual):
    """The StackSchedule metrics of financing.debt_share's loan, the rest being equity."""
    cost_of_debt = np.where(debt_usd > 0, annual_rate(rate_monthly), 0.0)
    equity_usd = capex_usd - debt_usd
    return {
        "debt_usd": debt_usd,
        "equity_usd": equity_usd,
        "cost_of_debt_annual": np.where(debt_usd > 0, cost_of_debt, np.nan),
        "cost_of_equity_annual": np.broadcast_to(discount_annual, debt_usd.shape).astype(float),
        "debt_rate_monthly": np.where(debt_usd > 0, rate_monthly, np.nan),
        "wacc_after_tax_annual": capital_mod.wacc_after_tax(
            debt_usd[:, None], cost_of_debt[:, None], equity_usd, discount_annual, tax_rate
        ),
        "dilution_shares": np.zeros(len(debt_usd)),
    }


def _built_loan(b, built: construction.ConstructionLoan, capex, tax_rate, discount_annual):
    """The StackSchedule of financing.debt_share's construction loan (one row per scenario)."""
    debt_usd = built.draws_usd.sum(axis=1)
    scheduled = built.principal_usd - built.settlement_usd
    lines = {
        "interest_expense_usd": built.interest_usd,
        "cash_interest_usd": built.interest_usd,
        "principal_usd": built.principal_usd,
        "settlement_usd": built.settlement_usd,
        "debt_service_usd": built.interest_usd + scheduled,
        "balance_usd": built.balance_usd,
        "financing_cash_flow_usd": built.draws_usd - built.interest_usd - built.principal_usd,
        "capitalized_interest_usd": built.capitalized_interest_usd,
    }
    metrics = _loan_metrics(
        debt_usd, _debt_share_rate_monthly(b), capex.sum(axis=1), tax_rate, discount_annual
    )
    metrics["construction_interest_usd"] = built.capitalized_total_usd
    metrics["debt_at_conversion_usd"] = built.owed_at_service_usd
    return capital_mod.StackSchedule(lines=lines, tranches={}, metrics=metrics)


def _size_single_loan(sizing, cap_usd, rate_monthly, term, horizon, months, repayment, per_usd):
    """debt_share's loan sized to the DSCR and LTV limits; the sculpted shape per USD of debt.
    `per_usd`: the balance-schedule loan per USD (rows with repayment SCHEDULED), or None."""
    sculpt = None
    parts = []  # (rows, (service, balance)) per USD of debt
    if (repayment == SCULPTED).any():
        tenor = np.minimum(term, horizon)
        sculpt = financing_mod.sculpted_schedule(sizing.cfads, rate_monthly, tenor)
        rows = repayment == SCULPTED
        parts.append((rows, (sculpt["service_per_usd"], sculpt["balance_per_usd"])))
    if per_usd is not None:
        parts.append((repayment == SCHEDULED, (per_usd["service"], per_usd["balance"])))
    level = ~np.isin(repayment, SHAPED)
    if level.any():  # the level schedule's service (no settlement)
        level_interest, level_principal, level_balance, _ = level_payment_schedule(
            np.ones_like(cap_usd), rate_monthly, term, months, last_month=horizon
        )
        parts.append((level, (level_interest + level_principal, level_balance)))
    service, balance = parts[0][1] if len(parts) == 1 else _by_rows(parts)
    limits = _dscr_limits(sizing, service, balance)
    debt, constraint = financing_mod.size_debt(
        sizing.cfads,
        service,
        balance,
        sizing.min_dscr,
        cap_usd,
        sizing.test_months,
        sizing.value,
        sizing.max_ltv,
        sizing.first_test_month,
        limits=limits,
    )
    binding = _binding_metrics(sizing, service, balance, limits)
    return debt, {**binding, "constraint": constraint}, sculpt


def _dscr_tests(sizing, service_per_usd, balance_per_usd) -> tuple:
    """The arguments of `financing.dscr_limits` and `financing.dscr_binding_test`: the sizing's
    CFADS, the schedule per USD borrowed and the covenant's target and window."""
    return (
        sizing.cfads,
        service_per_usd,
        balance_per_usd,
        sizing.min_dscr,
        sizing.test_months,
        sizing.first_test_month,
    )


def _dscr_limits(sizing, service_per_usd, balance_per_usd):
    """The debt each DSCR test allows (`financing.dscr_limits`), computed once for the sizing
    and the binding test."""
    return financing_mod.dscr_limits(*_dscr_tests(sizing, service_per_usd, balance_per_usd))


def _binding_metrics(sizing, service_per_usd, balance_per_usd, limits) -> dict[str, np.ndarray]:
    """The DSCR test that sized each scenario's debt (`financing.dscr_binding_test`) and the
    month the LTV limit binds in (`financing.ltv_binding_month`), as the StackSchedule metrics
    the sizing warning reads (n,) each; `limits`: `_dscr_limits` of the same."""
    binding = financing_mod.dscr_binding_test(
        *_dscr_tests(sizing, service_per_usd, balance_per_usd), limits=limits
    )
    ltv_month = (
        np.full(len(sizing.max_ltv), np.nan)
        if np.isnan(sizing.max_ltv).all()
        else financing_mod.ltv_binding_month(balance_per_usd, sizing.value, sizing.max_ltv)
    )
    return {
        **{f"dscr_binding_{key}": np.asarray(value, float) for key, value in binding.items()},
        "ltv_binding_month": ltv_month,
    }


DEBT_SHARE_LOAN = "debt_share loan"
"""Name of the loan that financing.debt_share stands for in the capital stack."""


def _loan_share(b: ScenarioBatch, first, capex_usd) -> np.ndarray:
    """The term loan's share of each scenario's capex (n,): financing.debt_share, or where a
    scenario gives the loan as an amount, financing.debt_usd over its capex `capex_usd` (n,),
    at most 1: the loan keeps its dollars whatever the capex."""
    share = b["financing.debt_share"][first]
    amount = b["financing.debt_usd"][first]
    if np.isnan(amount).all():
        return share
    capex = np.asarray(capex_usd, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        given = np.where(capex > 0, np.minimum(amount / capex, 1.0), 0.0)
    return np.where(np.isnan(amount), share, given)


def _stack_specs(b: ScenarioBatch, first, horizon, capex_usd, leave_out=None) -> list[dict]:
    """The scenarios' tranches, plus financing.debt_share as a delayed-draw term loan.

    The debt_share loan is built from batch columns (so sweeps of debt_share, its rate and term
    reach it): it draws pro rata to capex, each draw amortizing over debt_term_months with level
    payments from the month after it; what is owed when the projection ends is repaid then.
    Scenarios in `leave_out` (bool (n,)) get no such loan (their loan is computed elsewhere).
    """
    specs = [dict(t) for t in b.stack]
    share = _loan_share(b, first, capex_usd)
    if leave_out is not None:
        share = np.where(leave_out, 0.0, share)
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


def _factor_text(factor: float) -> str:
    """A multiplying factor in words: 3.5x, 1,000,001.0x, 1e+308x, or beyond floating point."""
    if not np.isfinite(factor):
        return "more than 1.8e308x"
    return f"{factor:,.1f}x" if factor < 1e7 else f"{factor:.3g}x"


def _usd_text(amount: float) -> str:
    """A positive amount in whole USD, "under 1 USD" where that would read 0."""
    text = whole(amount)
    return "under 1 USD" if text == "0" else f"{text} USD"


ROW_MESSAGES = {
    "measured_energy": lambda c, r: (
        f"power from measured energy, "
        f"{c['joules_per_token'][r]:g} J/token = {c['kw_per_gpu'][r]:.3f} kW per GPU while serving, "
        f"instead of the nameplate {c['nameplate_kw'][r]:.3f} kW"
    ),
    "sold_before_life": lambda c, r: (
        f"sold in month {c['retire'][r]}"
        + (f" at {c['held'][r]} months old" if c["purchase"][r] > 0 else "")
        + f", before the end of its useful life of {c['life_months'][r]:g} months"
        + (
            f" for the GPUs depreciated last, from month {c['last_depreciated'][r]}"
            if c["ramp_depreciated"][r] > 0
            else ""
        )
        + ": the remaining book value "
        f"{whole(c['carrying_at_sale'][r])} USD is assumed sold at book value"
        + (
            " (the book value before the impairment: the write-down moves no cash, and the sale "
            "books it back as a gain)"
            if c["impairment_month"][r] >= 0
            else ""
        )
    ),
    "fast_gains": lambda c, r: (
        f"throughput.gain_rate_annual = {c['gain_rate'][r]:+.0%} a year more than doubles "
        f"tokens/s per GPU every year ({whole((1 + c['gain_rate'][r]) ** 5)}x in five years unless "
        "a ceiling caps it), sustained over the whole horizon; the largest same-hardware gain a "
        "year apart in the MLPerf history is 3.0x, in DeepSeek-R1's first year on Blackwell: a "
        "one-off jump is a step (throughput.steps), and a rate is a fraction (0.15 for 15%)"
    ),
    "large_steps": lambda c, r: (
        "throughput.steps multiply tokens/s per GPU by "
        + _factor_text(c["steps_factor"][r])
        + " in all; the "
        "largest same-hardware gain in the MLPerf history is 3.02x a year apart, and its largest "
        "one-off jump 2.78x (v5.1 to v6.0 on B200): a step's gain is a fraction (0.2 for +20%)"
    ),
    "impaired": lambda c, r: (
        f"impaired in month {c['impairment_month'][r]}: a loss of "
        f"{whole(c['impairment_loss'][r])} USD writes the GPUs down"
        + (
            f", and {c['impairment_months'][r]} months in all have a write-down, "
            f"{whole(c['impairment_written_down'][r])} USD in total"
            if c["impairment_months"][r] > 1
            else ""
        )
        + (
            f" ({_usd_text(c['impairment_reversed'][r])} of it reversed later)"
            if c["impairment_reversed"][r] > 0
            else ""
        )
        + "; depreciation continues from the lower carrying amount"
    ),
    "depreciated_late": lambda c, r: (
        f"depreciation.in_service_month = {c['depreciation_start'][r] - c['purchase'][r]:.0f} "
        f"starts depreciation in month {c['depreciation_start'][r]:.0f}, but the GPUs serve from "
        f"month {c['start'][r]}: in the "
        f"{_months(int(c['depreciation_start'][r] - c['start'][r]))} before, they earn "
        f"{whole(c['revenue_undepreciated'][r])} USD of revenue with no depreciation against it; "
        "an asset is depreciated from when it is available for use (IAS 16.55; placed in "
        "service, IRS Pub 946): expected depreciation.in_service_month at most "
        f"{c['start'][r] - c['purchase'][r]} (months from the purchase to the first month of "
        "service)"
    ),
    "half_year_q4": lambda c, r: _half_year_q4_message(c, r),
}


def _half_year_q4_message(c, r) -> str:
    year = int(tax.tax_year_index(c["first_in_service"][r])) + 1
    half, mid = c["half_year_q4"][r]
    placed = (
        "every batch of the deployment ramp is placed in service in quarter 4 of its tax year"
        if c["ramped"][r]
        else f"the GPUs are placed in service in month {c['first_in_service'][r]}, quarter 4 "
        f"of tax year {year}"
    )
    return (
        f"depreciation.tax.convention = 'half-year', but {placed} (12-month blocks from month "
        "1): where they are more than 40% of the depreciable basis placed in service that year, "
        "IRC §168(d)(3) requires the mid-quarter convention ('mid-quarter Q4', IRS Pub 946 "
        f"Table A-5), which deducts {whole(mid)} USD in tax year {year} instead of {whole(half)} "
        "USD: set depreciation.tax.convention = 'mid-quarter Q4' unless other property placed "
        "in service that year keeps its quarter-4 share at or below 40%"
    )


def _delay(values, start_month):
    """Shift each row right by its start month: out[:, m] = values[:, m - start], 0 before."""
    if not np.any(start_month):
        return values
    source = np.arange(values.shape[1])[None, :] - np.asarray(start_month)[:, None]
    shifted = np.take_along_axis(values, np.maximum(source, 0), axis=1)
    return np.where(source >= 0, shifted, 0.0)


def _vintage_table(
    b: ScenarioBatch, rows: dict, gpu_count, retire, discount, spread=None
) -> pd.DataFrame:
    """Per-vintage operating figures of scenarios with vintages (pre-tax, pre-financing).

    Facility costs are shared by IT load, staff by GPUs in service (`_operating_costs`); site capex
    (an owned hall, a retrofit) stays with the fleet and is not in these figures. Where the
    batch has a resale table, each generation's rental-versus-resale spread (`spread`, per GPU,
    its first year in service) is in the table too.
    """
    import pandas as pd

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
            "rack_count": gpu_count / b["fleet.gpus_per_rack"],
            "capex_usd": rows["capex_usd"].sum(axis=1),
            "tokens": rows["tokens"].sum(axis=1),
            "revenue_usd": revenue.sum(axis=1),
            "ebitda_usd": (revenue - costs).sum(axis=1),
            "npv_pre_tax_usd": pv(revenue - costs - rows["capex_usd"] + rows["proceeds_usd"]),
            "lcot_usd_per_mtok": lcot,
            **(spread or {}),
        }
    ).set_index(["scenario", "vintage"])


PRECISION_RATIO = 1e15
"""Revenue this many times the costs and more holds them in the last of the about 16
significant digits of a float: a break-even price not found then is beyond its precision."""


def _unresolved_breakeven_message(ctx, i) -> str:
    """Why the break-even price is null where the token price moves the NPV: the figures
    overflow floating point, or the revenue is so much larger than the costs that they vanish in
    its rounding and the price (near 0) is not resolved; else the search found no root."""
    if ctx["breakeven_overflow"][i]:
        return f"breakeven_price_usd_per_mtok is null: {OVERFLOW}"
    revenue, costs = float(ctx["revenue_total"][i]), float(ctx["costs_total"][i])
    if costs > 0 and revenue >= PRECISION_RATIO * costs:
        return (
            f"no break-even token price is found: revenue of {revenue:.4g} USD is "
            f"{revenue / costs:.3g} times the costs ({whole(costs)} USD of capex, power, facility "
            "and opex), past the about 16 significant digits a floating-point number holds: the "
            "costs vanish in its rounding and the price that sets the NPV to zero, near 0, "
            "cannot be resolved; breakeven_price_usd_per_mtok is null (check the scenario's "
            "extreme values)"
        )
    return (
        "no token price is found that sets the NPV to zero (the search did not converge): "
        "breakeven_price_usd_per_mtok is null"
    )


@lru_cache(maxsize=4096)
def _months(count) -> str:
    """'1 month', '23 months' (a batch's warnings quote few distinct counts: each worded once)."""
    return counted(count, "month")


def _warnings(flags, ctx, n) -> list[list[str]]:
    """Per-scenario warnings from flag arrays; only flagged rows are formatted."""
    out: list[list[str]] = [[] for _ in range(n)]
    messages = _figure_messages(ctx) | _ledger_messages(ctx) | _stack_messages(ctx)
    for key, message in messages.items():
        for i in np.flatnonzero(flags[key]).tolist():
            out[i].append(message(i))
    return out


def _figure_messages(ctx) -> dict:
    """Why a summary figure is null or means less than it says: flag -> message(row)."""
    return {
        "no_tokens": lambda i: (
            "no tokens are produced (utilization or throughput is 0): "
            "lcot_usd_per_mtok and its components are null"
        ),
        "no_irr_project": lambda i: _no_irr_message("project", ctx, i),
        # Names every key the thin equity nulls, so econ.undefined adds no other reason for them.
        "thin_equity": lambda i: (
            f"equity is {ctx['equity_share'][i]:.1%} of capex, below "
            f"{MIN_EQUITY_SHARE_FOR_IRR:.0%}: irr_equity_annual, mirr_equity_annual and "
            "moic_equity are null rather than meaningless figures"
        ),
        "no_irr_equity": lambda i: _no_irr_message("equity", ctx, i),
        "no_payback": lambda i: (
            "cumulative project cash flow never turns positive within the "
            "horizon: payback_months is null"
        ),
        "payback_undone": lambda i: (
            f"cumulative project cash flow turns non-negative after "
            f"{ctx['payback_months'][i]:.1f} months (payback_months) but is below zero again from "
            f"month {ctx['payback_undone_month'][i]:.0f} to the horizon, where it ends at "
            f"{whole(ctx['cumulative_cash_end'][i])} USD: the investment is not recovered within "
            "the horizon"
        ),
        "no_breakeven": lambda i: (
            "token price does not affect NPV (fully contracted or no tokens): "
            "breakeven_price_usd_per_mtok is null"
        ),
        "breakeven_unresolved": lambda i: _unresolved_breakeven_message(ctx, i),
        "breakeven_negative": lambda i: (
            "NPV is positive at a zero token price: "
            + (
                "contract and input-token revenue cover"
                if ctx["input_revenue"][i]
                else "contract revenue covers"
            )
            + " costs; "
            "breakeven_price_usd_per_mtok is null (the NPV would be zero only at a negative price)"
        ),
        "no_debt": lambda i: "no debt: min_dscr is null",
        "no_input_ratio": lambda i: (
            "throughput.input_tokens_per_output_token is not set and the throughput source "
            "records no input tokens: lcot_usd_per_mtok_all_tokens and input_tokens_total are null"
        ),
        "irr_project_not_unique": lambda i: _several_signs_message("project", ctx, i),
        "irr_equity_not_unique": lambda i: _several_signs_message("equity", ctx, i),
        "over_contract": lambda i: (
            f"peak IT load of {whole(ctx['peak_it_kw'][i])} kW exceeds the contracted "
            f"{whole(ctx['contracted_kw'][i])} kW: the excess is billed at the overage rate"
        ),
    }


def _ledger_messages(ctx) -> dict:
    """What the monthly lines show and the summary does not (covenants, the debt's sizing and
    service, the site, tax losses): flag -> message(row)."""
    return {
        "covenant_breach": lambda i: _breach_message(ctx, i),
        "covenants_untested": lambda i: _untested_message(ctx, i),
        "dscr_floor_below_1": lambda i: financing_mod.dscr_floor_warning(ctx["covenants"][0][i]),
        "debt_settled_at_end": lambda i: (
            f"the debt outlives the projection: {whole(ctx['settled_at_end'][i])} USD is repaid in "
            "the last month"
        ),
        "debt_sized": lambda i: _sizing_message(ctx, i),
        "sized_dscr_missed": lambda i: (
            f"the lowest DSCR is {ctx['min_dscr'][i]:.2f}x, below the "
            f"{ctx['size_to_min_dscr'][i]:g}x the debt was sized to: sized again "
            f"{RESIZING_ROUNDS} times on the cash flow available for debt service realised "
            "after interest, it still falls short (the interest moves the month a year's tax is "
            "first paid; see the dscr and tax_usd lines); a higher financing.size_to_min_dscr "
            "leaves more room"
        ),
        "site_value_at_horizon": lambda i: (
            f"the site's book value at the horizon, {whole(ctx['site_value_end'][i])} USD (an owned "
            "hall or a liquid retrofit, depreciated over its own life), is counted as cash in "
            f"month {ctx['horizon'][i]}, as if sold at book value: {whole(ctx['site_value_pv'][i])} "
            "USD of the NPV; a shorter facility.life_years or retrofit_life_years counts less"
        ),
        "owned_without_maintenance": lambda i: (
            "the hall is owned and facility.maintenance_share_of_capex_annual is 0: it costs "
            "nothing to run beyond its power; expected the share of its capex spent on it a year"
        ),
        "loan_over_collateral": lambda i: _over_collateral_message(ctx, i),
        "losses_unused": lambda i: (
            f"{whole(ctx['losses_unused'][i])} USD of tax losses are still unused at the horizon "
            f"(month {ctx['horizon'][i]}): with financing.tax_valuation_allowance = 'none', net "
            "income keeps their deferred tax asset, "
            f"{whole(ctx['losses_unused'][i] * ctx['tax_rate'][i])} USD at the "
            f"{ctx['tax_rate'][i] * 100:g}% tax rate, as if taxable income beyond the projection "
            "(a group's) will absorb them; a stand-alone fleet projected to end with unused "
            "losses needs a valuation allowance assessed (ASC 740-10-30-5(e)): "
            "financing.tax_valuation_allowance = 'beyond_reversing_liabilities' recognizes the "
            "asset only up to the deferred tax liabilities whose reversal absorbs the losses "
            "(the cash flows give unused losses no value either way)"
        ),
        "loan_cut_to_capex": lambda i: (
            f"financing.debt_usd of {whole(ctx['loan_usd'][i])} USD is more than the capex of "
            f"{whole(ctx['capex_total'][i])} USD: the loan drawn is the capex"
        ),
        "debt_over_capex": lambda i: (
            f"the debt raised, {whole(ctx['debt_usd'][i])} USD, is more than the capex of "
            f"{whole(ctx['capex_total'][i])} USD ({ctx['debt_usd'][i] / ctx['capex_total'][i]:.0%} "
            "loan-to-cost): the lenders finance more than the GPUs and the site cost"
            if ctx["capex_total"][i] > 0
            else f"the debt raised, {whole(ctx['debt_usd'][i])} USD, finances no capex"
        ),
        "proceeds_ahead_of_capex": lambda i: (
            "the debt raised exceeds the capex, fees and capped calls paid to date in {}, first "
            "in month {}: {:,.0f} USD of debt proceeds above the uses to date goes to equity "
            "then (cash_flow_equity_usd), a distribution of borrowed money that equity pays back "
            "when the later capex is spent (from month {:.0f}); a tranche given as a share of "
            "capex is issued at its issue_month on the whole projection's capex: an issue_month "
            "at the later purchase, a tranche of its own for it, or a delayed-draw loan (drawn "
            "with the capex) keeps the borrowed cash out of the equity's returns"
        ).format(*_fact(ctx, "proceeds_ahead_of_capex", i)),
        "sold_while_owed": lambda i: (
            "GPUs are sold with debt outstanding in {}, first in month {} ({:,.0f} USD of "
            "proceeds, {:,.0f} USD of debt): the loan is not prepaid from the proceeds, which go "
            "to the cash flows, and from then the ltv line and an LTV covenant count only the "
            "GPUs still held as collateral"
        ).format(*_fact(ctx, "sold_while_owed", i)),
        "llcr_below_1": lambda i: (
            "the loan life coverage ratio is below 1 in {}, first in month {} (lowest {:.2f}): "
            "from then the cash flow available for debt service over the loan's remaining "
            "life, discounted at its rate, does not repay the balance"
        ).format(*_fact(ctx, "llcr_below_1", i)),
        "ebitda_negative_late": lambda i: (
            "EBITDA is negative in {} after it was positive, from month {} ({:,.0f} USD in "
            "all): the GPUs cost more to run than they earn then; an earlier "
            "fleet.retire_month would stop the loss"
        ).format(*_fact(ctx, "ebitda_negative_late", i)),
        "site_after_fleet": lambda i: _site_after_fleet_message(ctx, i),
        "interest_deferred": lambda i: _deferred_message(ctx, i),
        "dscr_below_1": lambda i: (
            f"debt service not covered in {_months(ctx['months_below_1'][i])} "
            f"(min DSCR {ctx['min_dscr'][i]:.2f})"
        ),
    }


def _stack_messages(ctx) -> dict:
    """What a capital stack's tranches do that no summary figure says (`_stack_troubles`):
    flag -> message(row)."""
    return {
        "notes_converted": lambda i: _conversion_message(ctx, i),
        "shares_unpriced": lambda i: _unpriced_shares_message(ctx, i),
        "equity_outside_tranches": lambda i: (
            "the tranches (financing.tranches) raise {:,.0f} USD, debt proceeds and equity "
            "issued, for a capex of {:,.0f} USD: the other {:,.0f} USD of the capex, fees and "
            "capped calls is equity raised outside the tranches (equity_funding_usd), with no "
            "shares counted for it; an equity tranche without amount_usd or share_of_capex "
            "funds the remainder as a tranche"
        ).format(
            ctx["equity_outside_tranches"][0][i],
            ctx["capex_total"][i],
            ctx["equity_outside_tranches"][1][i],
        ),
        "negative_rate": lambda i: "; ".join(
            financing_mod.negative_rate_warning(
                f"tranche '{name}'", months[i], first[i], lowest[i], "floating.floor_annual = 0"
            )
            for name, below, months, first, lowest in ctx["negative_rates"]
            if below[i]
        ),
    }


IRR_RANGE_TEXT = "(-99%, +1,000%) a year"


NO_ROOTS = "none"
"""The roots' text where irr_roots_annual found none."""


def _roots_text(rates, directions) -> str:
    """'-14.41% (rises), 89.34% (falls)': the roots of irr_roots_annual and how NPV crosses them
    (their rates and directions), or NO_ROOTS."""
    if len(rates) == 0:
        return NO_ROOTS
    return ", ".join(
        f"{rate:.2%} ({'falls' if direction < 0 else 'rises'})"
        for rate, direction in zip(rates, directions, strict=True)
    )


def _no_irr_message(side: str, ctx, i) -> str:
    """Why irr_{side}_annual is null: no root, no falling root, several, or one on the other
    side of 0% from the NPV at 0% (docs/methodology.md, "IRR: which root is reported")."""
    key, roots = f"irr_{side}_annual", ctx[f"irr_roots_text_{side}"][i]
    falling = int(ctx["irr_falling"][side][i])
    if roots == NO_ROOTS and falling == 0:
        return (
            f"{side} cash flows have no internal rate of return in {IRR_RANGE_TEXT}"
            f"{_why_no_root(ctx[f'irr_outside_{side}'][i])}: {key} is null"
        )
    several = (
        f"{side} cash flows change sign more than once; " if ctx["irr_several"][side][i] else ""
    )
    if ctx["irr_against_npv"][side][i]:
        rate, total = (float(ctx[k][side][i]) for k in ("irr_falling_annual", "irr_flows_sum"))
        return (
            f"{several}{key} is null: the one rate at which the NPV falls through zero, "
            f"{rate:.2%}, is {'above' if rate > 0 else 'below'} 0% while the flows sum to "
            f"{whole(total)} USD (the NPV at 0%): the NPV rises through zero between them, so "
            f"against a hurdle rate there the IRR would {'accept' if rate > 0 else 'reject'} "
            f"what the NPV {'rejects' if rate > 0 else 'accepts'} (roots found, NPV as the rate "
            f"rises: {roots}); judge by {_judge_by(side, ctx, i)}"
        )
    count = "no rate" if falling == 0 else f"{falling} rates"
    return (
        f"{several}{key} is null: {count} in {IRR_RANGE_TEXT} make{'s' if falling == 0 else ''} the NPV "
        f"fall through zero as the rate rises (roots found, NPV as the rate rises: "
        f"{roots}); judge by {_judge_by(side, ctx, i)}"
    )


def _why_no_root(outside: tuple[int, float]) -> str:
    """Why flows have no root in IRR_RANGE_ANNUAL, from their sign changes and the one root of
    flows that change sign once (`metrics.single_root_annual`): above the range, or below it."""
    changes, rate = outside
    if changes == 0:
        return ": they never change sign"
    if changes > 1:
        return ": they change sign more than once, but no rate in it zeroes their NPV"
    lower, upper = metrics_mod.IRR_RANGE_ANNUAL
    if not math.isfinite(rate):  # (the solver found no rate: said without a figure)
        return ": they change sign once, so their one rate lies outside it"
    monthly = (1.0 + rate) ** (1 / 12) - 1.0
    where = f"above the {upper:+,.0%} cap" if rate >= upper else f"below {lower:.0%}"
    return (
        f": they change sign once, and their one rate, {rate * 100:+,.4g}% a year "
        f"({monthly:.2%} a month), is {where}"  # 4 figures: past them a rate is noise
    )


def _several_signs_message(side: str, ctx, i) -> str:
    """The warning beside an IRR whose flows change sign more than once."""
    return (
        f"{side} cash flows change sign more than once (roots found, NPV as the rate rises: "
        f"{ctx[f'irr_roots_text_{side}'][i]}): irr_{side}_annual is the only rate in "
        f"{IRR_RANGE_TEXT} at which the NPV falls through zero as the rate rises; judge it "
        f"with {_judge_by(side, ctx, i)}"
    )


def _judge_by(side: str, ctx, i) -> str:
    """The figures that answer the question an IRR cannot: for the project its NPV and MIRR; for
    the equity its flows' NPV at its own cost, since npv_usd is the project's and the equity
    MIRR finances the contributions at the cost of debt, so that it can disagree with that NPV
    (docs/methodology.md, "IRR: which root is reported")."""
    if side == "project":
        return "npv_usd and mirr_project_annual"
    return f"npv_equity_usd (at the {ctx['cost_of_equity'][i]:.2%} cost of equity)"


def _fact(ctx, key: str, i) -> tuple:
    """Scenario i's (months as words, first month, figures...) of a _late_troubles fact."""
    months, first, *figures = ctx[key]
    return (_months(months[i]), int(first[i]), *[float(f[i]) for f in figures])


INTEREST_DEFERRED = "the debt service falls short of the interest due"
"""How the warning of interest added to the loan begins (the memo shows it beside the DSCR)."""
BREAKEVEN_HOLDS_SIZED_DEBT = (
    "breakeven_price_usd_per_mtok holds this debt as sized at the scenario's own token price "
    "(at another price the sizing would give another debt)"
)
"""The clause of the sizing warning on the break-even's debt (the memo shows it beside it)."""


def _site_after_fleet_message(ctx, i) -> str:
    months, first, total, last = _fact(ctx, "site_after_fleet", i)
    what = (
        "the owned hall's maintenance is"
        if ctx["owned"][i]
        else "the colocation contract (facility.contracted_kw) is"
    )
    return (
        f"the site costs {whole(total)} USD in {months} after the last GPU is retired in month "
        f"{last:.0f} (from month {first} to the horizon, month {ctx['horizon'][i]}): {what} "
        "paid whether GPUs serve or not, while the fleet's staff and power and the GPUs' "
        f"insurance, maintenance and software stop with it; horizon_months = {last:.0f} ends "
        "the projection with the fleet"
    )


def _conversion_message(ctx, i) -> str:
    """Convertible notes settled in shares: each tranche's month, shares and their value, and
    what the equity's returns leave out (docs/financing.md, "Convertible notes")."""
    parts = []
    for name, converts, month, net, hedge, price, face, above in ctx["conversions"]:
        if not converts[i]:
            continue
        hedged = f" (net of the capped call's {whole(hedge[i])})" if hedge[i] > 0 else ""
        settled = (
            f"physical settlement: its {whole(face[i])} USD face is repaid in shares, not cash"
            if face[i] > 0
            else f"net-share settlement: its face is repaid in cash and the {whole(above[i])} USD "
            "of conversion value above it in shares"
        )
        parts.append(
            f"the convertible notes '{name}' convert in month {month[i]:.0f}: {whole(net[i])} "
            f"shares issued{hedged}, worth {whole(net[i] * price[i])} USD at the share price of "
            f"{price[i]:,.2f} USD then ({settled})"
        )
    return (
        "; ".join(parts) + ": irr_equity_annual, npv_equity_usd and moic_equity are the returns "
        "of the equity before that dilution (the converted value is paid in shares, not cash, "
        "so the equity cash flows never pay it)"
    )


def _unpriced_shares_message(ctx, i) -> str:
    """Why dilution_shares is null: the equity tranches that issue shares with no share price,
    and the conversion shares counted without them."""
    named = [
        f"'{name}' ({whole(issued[i])} USD)"
        for name, flagged, issued in ctx["unpriced_equity"]
        if flagged[i]
    ]
    converted = ctx["conversion_shares"][i]
    which = (
        f"the equity tranche {named[0]} issues"
        if len(named) == 1
        else f"the equity tranches {' and '.join(named)} issue"
    )
    return (
        f"dilution_shares is null: {which} shares with no share price to count them by "
        f"({'its' if len(named) == 1 else 'their'} reference_share_price_usd is not set)"
        + (
            f"; the convertible notes' conversion alone issues {converted:,.2f} shares (net of "
            "capped calls)"
            if converted > 0
            else ""
        )
    )


def _deferred_message(ctx, i) -> str:
    months, first, total, cover = _fact(ctx, "interest_deferred", i)
    return (
        f"{INTEREST_DEFERRED} in {months} (first in "
        f"month {first}): {whole(total)} USD of interest is added to the loan rather than paid; "
        + (
            "the DSCR counts the service paid, so interest cover (CFADS / interest) is as low "
            f"as {cover:.2f}x"
            + (
                ": the cash flow covers the interest; the sculpted service, shaped to the cash "
                "flow before financing (EBITDA less the tax due with no interest deducted), is "
                "what falls below it"
                if cover >= 1
                else ""
            )
            if cover >= 0
            else "the cash flow available for debt service is negative in some of those months "
            "(the DSCR, counting the service paid, does not show it)"
        )
    )


def _breach_message(ctx, i) -> str:
    """Months in breach, the first, and which covenant each test breached in how many months."""
    (dscr_floor, llcr_floor, ltv_ceiling), breaches = ctx["covenants"], ctx["breaches"]
    tests = {
        "dscr": f"DSCR below its {number_text(dscr_floor[i])}x floor over the "
        f"{ctx['test_months'][i]:.0f}-month test window",
        "llcr": f"LLCR below its {number_text(llcr_floor[i])}x floor",
        "ltv": f"loan-to-value above its {ltv_ceiling[i]:.0%} ceiling",
    }
    floors = {"dscr": dscr_floor[i], "llcr": llcr_floor[i]}
    which = [
        f"{text} in {_months(breaches[name][i])} "
        f"({_first_breach_text(name, ctx, i, floors.get(name))})"
        for name, text in tests.items()
        if breaches[name][i] > 0
    ]
    return (
        f"covenant breached in {_months(ctx['breach_months'][i])}, first in month "
        f"{ctx['first_breach_month'][i]:.0f}: " + "; ".join(which)
    )


def _first_breach_text(name: str, ctx, i, floor=None) -> str:
    """A covenant test's first breach and the ratio it tested then: "first in month 40, at
    1.149x", below its `floor` to as many decimals as show it below (1.363797x against 1.3638);
    an LTV as a percentage, or the collateral worth nothing."""
    month, ratio = (x[i] for x in ctx["first_breaches"][name])
    if name != "ltv":
        return f"first in month {month}, at {_ratio_below(ratio, floor)}x"
    if math.isnan(ratio):
        return f"first in month {month}, with the collateral worth nothing"
    return f"first in month {month}, at {ratio:.1%}"


def _ratio_below(ratio: float, floor: float, places: int = 3) -> str:
    """A ratio that breaches its floor, to `places` decimals or as many more as it takes to read
    below the floor (1.364 would read above a floor of 1.3638 it is below: 1.363797)."""
    for more in range(places, places + 12):
        text = f"{ratio:.{more}f}"
        if not math.isfinite(ratio) or float(text) < floor:
            return text
    return repr(ratio)


def _untested(covenants, ctx, i=slice(None)) -> np.ndarray:
    """(2, n) bool: whether the DSCR covenant (row 0) and the LLCR covenant (row 1) are set but
    never tested, their first test month after the last month each could test; (2,) for the
    scenario `i` alone, where given."""
    first = ctx["first_test_month"][i]
    with np.errstate(invalid="ignore"):  # (NaN: no covenant, no first test, or no debt)
        return np.array(
            [
                ~np.isnan(covenants[0][i]) & (first > ctx["last_dscr_month"][i]),
                ~np.isnan(covenants[1][i]) & (first > ctx["last_llcr_month"][i]),
            ]
        )


def _untested_message(ctx, i) -> str:
    """A first test month after the loan's last month to test: which covenants it leaves
    untested, and the figures that count or measure nothing then."""
    first = ctx["first_test_month"][i]
    dscr, llcr = (bool(off) for off in _untested(ctx["covenants"], ctx, i))
    last = max(ctx["last_dscr_month"][i] if dscr else -1, ctx["last_llcr_month"][i] if llcr else -1)
    which = " and ".join(name for name, off in (("DSCR", dscr), ("LLCR", llcr)) if off)
    one = not (dscr and llcr)
    return (
        f"financing.covenants.first_test_month is {first:.0f}, after month "
        f"{last:.0f}, the last month with debt service or debt outstanding to test (the "
        f"projection ends in month {ctx['horizon'][i]}): the {which} "
        f"{'covenant is' if one else 'covenants are'} never tested, so covenant_breach_months "
        f"and first_breach_month count none of {'its' if one else 'their'} breaches"
        + (", and dscr_headroom and months_of_headroom are null" if dscr else "")
        + f"; expected a first test month within the loan's life (at most month {last:.0f})"
    )


def _over_collateral_message(ctx, i) -> str:
    months, first, peak, worthless = _fact(ctx, "loan_over_collateral", i)
    basis = "resale value" if ctx["resale_collateral"][i] else "book value"
    text = f"the loan is larger than its collateral (the GPUs' {basis}) in {months}, first in month {first}"
    if math.isfinite(peak):
        text += f": LTV up to {peak:,.1%}"  # a percentage, as an LTV covenant's breach says it
    if worthless:
        text += f"; in {_months(worthless)} the collateral is worth nothing (the loan is unsecured)"
    return text


def _sizing_message(ctx, i) -> str:
    debt, capex = ctx["debt_usd"][i], ctx["capex_total"][i]
    min_dscr, max_ltv = ctx["size_to_min_dscr"][i], ctx["max_ltv"][i]
    limits, constraint, why = _sizing_words(
        None if math.isnan(min_dscr) else min_dscr,
        None if math.isnan(max_ltv) else max_ltv,
        ctx["resale_collateral"][i],
        int(ctx["sizing_constraint"][i]),
        debt > 0,
    )
    share = debt / capex if capex > 0 else 0.0
    binding = _dscr_binding_words(ctx, i, debt > 0) if ctx["sizing_constraint"][i] == 2 else ""
    return (
        f"debt sized to {limits}: {whole(debt)} USD ({share:.1%} of capex); {constraint}"
        f"{binding or _impaired_to_nothing(ctx, i, why)}{BREAKEVEN_HOLDS_SIZED_DEBT}"
    )


def _impaired_to_nothing(ctx, i, why: str) -> str:
    """`why` there is no debt, or where the LTV limit left none because a write-down brought
    the GPUs' book value to 0 while the loan would be owed: the month, and the write-downs to
    then. `_why_no_debt` blames a term longer than the book life, which may not be so (a 60-month
    loan on a 72-month life, the book value written down to 0 in month 50)."""
    month = ctx["ltv_binding_month"]
    if (
        ctx["debt_usd"][i] > 0
        or ctx["sizing_constraint"][i] != 3
        or ctx["resale_collateral"][i]
        or not ctx["max_ltv"][i] > 0
        or month is None
        or math.isnan(month[i])
    ):
        return why
    end = int(month[i])
    written = np.maximum(np.asarray(ctx["impairment"][i][: end + 1]), 0.0)
    if not written[end] > 0:  # (the book value ran out as the depreciation ended)
        return why
    first = int(np.argmax(written > 0))
    return (
        f"no debt because impairment write-downs bring the GPUs' book value to 0 in month {end} "
        f"while the loan would still be outstanding ({whole(written.sum())} USD written down in "
        f"{_months(int((written > 0).sum()))} from month {first}); a loan repaid by month "
        f"{end} (financing.debt_term_months), or resale values as collateral (market.resale_*), "
        "allow debt; "
    )


@lru_cache(maxsize=1024)
def _sizing_words(
    min_dscr, max_ltv, resale_collateral, code: int, has_debt
) -> tuple[str, str, str]:
    """The sizing warning's words around its figures: the limits the debt was sized to, its
    binding constraint, and why there is no debt. They follow from inputs a batch's scenarios
    mostly share, so each set is worded once (`min_dscr`, `max_ltv`: None where not set)."""
    limits = []
    if min_dscr is not None:
        limits.append(f"a minimum DSCR of {min_dscr:g}x")
    if max_ltv is not None:
        collateral = "resale value" if resale_collateral else "book value"
        limits.append(f"a maximum LTV of {max_ltv:.0%} of {collateral}")
    return (
        " and ".join(limits) or "the cash flow (sculpted)",
        f"binding constraint: {financing_mod.SIZING_CONSTRAINTS[code]} "
        f"(debt_sizing_constraint = {code}); ",
        _why_no_debt(code, has_debt, max_ltv, resale_collateral),
    )


def _why_no_debt(code: int, has_debt, max_ltv, resale_collateral) -> str:
    """Where a limit sized the loan to nothing: the reason, as financing.size_debt finds it
    (where an impairment empties the collateral first, `_impaired_to_nothing` says so)."""
    if has_debt or code not in (2, 3):
        return ""
    if code == 3 and max_ltv == 0:
        return "no debt because financing.max_ltv is 0; "
    if code == 3:
        if resale_collateral:
            return (
                "no debt because the resale value reaches 0 while the loan would still be "
                "outstanding; a shorter financing.debt_term_months allows debt; "
            )
        return (
            "no debt because the GPUs' book value reaches 0 while the loan would still be "
            "outstanding (its term is longer than the book life); a financing.debt_term_months "
            "within the book life, or resale values as collateral (market.resale_*), allow debt; "
        )
    if code == 2:  # (where no DSCR test binds: `_dscr_binding_words` words the rest)
        return (
            "no debt because the cash flow available for debt service is 0 or negative in a "
            "month with debt service due (for a sculpted loan: in every month of the term, so "
            "nothing would repay it); "
        )
    return ""


def _dscr_binding_words(ctx, i, has_debt) -> str:
    """The DSCR test that sized the debt (`financing.dscr_binding_test`): the month or trailing
    window it tests, and where it leaves no debt, that test's cash flow available for debt
    service and its most negative month (EBITDA less the income tax paid then); "" where no
    test binds (no month of service: `_why_no_debt` says so)."""
    binding = ctx["dscr_binding"]
    month = binding["month"][i] if binding else math.nan
    if math.isnan(month):
        return ""
    end, window = int(month), int(binding["window_months"][i])
    start = max(end - window + 1, 0)
    if window > 1:
        test = (
            f"over the DSCR covenant's {window}-month window ending in month {end} (months "
            f"{start} to {end})"
        )
    else:
        test = f"in month {end}, with debt service due,"
    if has_debt:  # (a month alone, tied with the others, is no news)
        return f"the minimum DSCR binds {test}; " if window > 1 else ""
    ebitda, tax_paid = (np.asarray(ctx[k][i][start : end + 1]) for k in ("ebitda", "income_tax"))
    cfads = ebitda - tax_paid
    worst = int(np.argmin(cfads))
    text = f"no debt: the cash flow available for debt service {test} is {whole(cfads.sum())} USD"
    if window > 1:
        text += ", and the covenant tests that window (it holds debt service)"
    if window == 1:
        text += f" (EBITDA {whole(ebitda[0])} less the income tax paid then, {whole(tax_paid[0])})"
    elif cfads[worst] < 0:
        text += (
            f": month {start + worst}'s is {whole(cfads[worst])} (EBITDA {whole(ebitda[worst])} less "
            f"the income tax paid then, {whole(tax_paid[worst])})"
        )
    if window > 1:
        text += (
            f"; a financing.covenants.first_test_month after month {end} leaves that window "
            "untested"
            + (
                ", as does a 1-month window (financing.covenants.test_months = 1), month "
                f"{end} having no debt service of its own"
                if not binding["served"][i]
                else ""
            )
        )
    return text + "; "


__all__ = [
    "COMPONENTS",
    "MONTHLY_COLUMNS",
    "SUMMARY_COLUMNS",
    "WARNING_SEPARATOR",
    "MonthlyNotKeptError",
    "Projection",
    "ScenarioBatch",
    "project",
]
