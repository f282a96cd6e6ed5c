"""Pydantic models of a scenario file: one model per section, strict, frozen, units in names.

Every field has a default, bounds and a description with its unit, so a scenario file only needs to
say what differs from the defaults, and `econ schema` documents the format.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from econ.labels import counted
from econ.scenario.depreciation_models import DepreciationPolicy as Depreciation
from econ.scenario.errors import shortened
from econ.scenario.financing_models import (
    MAX_MONTHS,
    CapitalStack,
    Covenants,
    Tranche,
    check_stack_fits_horizon,
)
from econ.scenario.gain_models import Throughput
from econ.scenario.market_models import Market, Utilization
from econ.scenario.power_models import (
    Facility,
    Power,
    check_fleet_in_hall,
    check_hall_capacity,
    check_hall_floor,
    it_kw_per_gpu,
)
from econ.scenario.section import PRINTABLE, Section, exactly_one
from econ.strict_json import beyond_float

SCHEMA_VERSION = 1

EARLIEST_START = dt.date(1900, 1, 1)
"""The earliest start_date: spreadsheets (Excel's and LibreOffice's default 1900 date system)
show no earlier date, and every export writes month dates."""
LATEST_YEAR = 9999
"""The last year a projection's month may fall in: the last year spreadsheets (and Python's
datetime) can show."""


MAX_GPUS = 100_000_000
"""The most GPUs a fleet (or a vintage) may count: at about 1.5 kW each, 100 million draw some
150 GW, more than all the world's data centres; a count past it is a typo, and one near a float's
limit (10**300) would turn every figure into inf or NaN."""
MAX_GPUS_PER_RACK = 10_000
"""The most GPUs a rack or a priced system may hold: the densest racks hold 576 (NVL576) and a
whole TPU v5p pod 8,960 chips, so a figure past it is a typo."""
MAX_VINTAGES = MAX_MONTHS // 12
"""The most vintages a scenario may hold (50): one GPU generation a year over the longest horizon
(600 months). NVIDIA's data-centre GPUs came every two years (Volta 2017, Ampere 2020, Hopper
2022, Blackwell 2024) and are announced yearly since (Blackwell Ultra 2025, Rubin 2026, Rubin
Ultra 2027: NVIDIA's roadmap, Computex 2024 keynote). Each vintage is a row every projection runs
month by month, and a refresh projects the scenario once per candidate month: a 232-character
link of 40 vintages over 600 months made `econ refresh` take 84 s and 5 GB, one of 3,600 took
20 s to validate."""


class Fleet(Section):
    hardware: str = Field(
        "generic-gpu", min_length=1, description="Hardware key, e.g. gb200-nvl72 (see models/)"
    )
    gpu_count: int = Field(72, ge=1, le=MAX_GPUS, description="GPUs bought at month 0 [GPUs]")
    gpus_per_rack: int = Field(
        72,
        ge=1,
        le=MAX_GPUS_PER_RACK,
        description="GPUs per rack, for per-rack figures [GPUs/rack]",
    )
    racks: int | None = Field(
        None,
        ge=1,
        le=MAX_GPUS,
        description="Racks bought; sets gpu_count = racks x gpus_per_rack [racks]",
    )
    deployment_ramp_months: int = Field(
        0,
        ge=0,
        description="Months over which GPUs enter service linearly after purchase; 0 = all in "
        "service from the month after purchase [months]",
    )
    purchase_month: int = Field(
        0,
        ge=0,
        description="Month the GPUs are bought (the first capex payment, capex.payments counts "
        "from it) [month index]",
    )
    service_start_month: int | None = Field(
        None,
        ge=1,
        le=600,
        description="First month the GPUs serve; the months from the purchase to it are a "
        "construction period whose loan interest is capitalized into the GPUs' cost. Default: "
        "the month after purchase_month [month index]",
    )
    retire_month: int | None = Field(
        None,
        ge=1,
        description="Last month in service; the GPUs are sold at its end (at book value unless "
        "depreciation.sale_value_share or a resale table prices them). The sale does not repay "
        "the loan: its schedule runs on to its term. Default: the end of the horizon [month]",
    )

    @model_validator(mode="before")
    @classmethod
    def _gpus_from_racks(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("racks") is None:
            return data
        racks, per_rack = data["racks"], data.get("gpus_per_rack", 72)
        if not (isinstance(racks, int) and isinstance(per_rack, int)):
            return data  # the field validators report the types
        if racks < 1 or per_rack < 1:
            return data  # the field validators name the one below its bound of 1
        implied = racks * per_rack
        within = racks <= MAX_GPUS and per_rack <= MAX_GPUS_PER_RACK
        if not within and not beyond_float(implied):
            return data  # the field validators name the one past its bound
        if within and implied > MAX_GPUS:
            # (each within its bound: the product is what exceeds gpu_count's)
            raise ValueError(
                f"racks x gpus_per_rack is {racks:,} x {per_rack:,} = {implied:,} GPUs, more "
                f"than gpu_count's bound of {MAX_GPUS:,}; expected fewer racks"
            )
        if data.get("gpu_count", implied) != implied:
            count = data["gpu_count"]
            count = f"{count:,}" if type(count) is int else shortened(count)
            raise ValueError(
                f"gpu_count is {count} but racks x gpus_per_rack is "
                f"{racks:,} x {per_rack:,} = {implied:,} GPUs; give one of them, or both "
                "consistently"
            )
        return {**data, "gpu_count": implied}


class CapexPayment(Section):
    """One payment of the GPUs' capex: a deposit, a progress payment or the balance on delivery."""

    month: int = Field(
        ...,
        ge=0,
        le=600,
        description="Months after fleet.purchase_month the payment is made (0 = the purchase "
        "month); before the service start month [months]",
    )
    share: float = Field(..., gt=0, le=1, description="Share of the capex paid [fraction]")


class Capex(Section):
    gpu_price_usd: float | None = Field(
        None, gt=0, description="Price per GPU, including its share of the server [USD/GPU]"
    )
    system_price_usd: float | None = Field(
        None,
        gt=0,
        description="Price per system (server or rack); use instead of gpu_price_usd [USD]",
    )
    gpus_per_system: int = Field(
        8, ge=1, le=MAX_GPUS_PER_RACK, description="GPUs per priced system [GPUs]"
    )
    networking_usd_per_gpu: float = Field(0.0, ge=0, description="Network fabric per GPU [USD/GPU]")
    storage_usd_per_gpu: float = Field(0.0, ge=0, description="Storage per GPU [USD/GPU]")
    installation_usd_per_gpu: float = Field(
        0.0, ge=0, description="Installation and integration, capitalized [USD/GPU]"
    )
    spares_share: float = Field(
        0.0, ge=0, le=1, description="Spares as a share of hardware cost [fraction]"
    )
    payments: tuple[CapexPayment, ...] = Field(
        (),
        description="Schedule of capex payments (deposits, progress payments, the balance on "
        "delivery), months counted from fleet.purchase_month, shares summing to 1. Default: all "
        "paid in the purchase month",
    )

    @model_validator(mode="after")
    def _one_price(self) -> Capex:
        if (self.gpu_price_usd is None) == (self.system_price_usd is None):
            raise ValueError(
                exactly_one(
                    {"gpu_price_usd": self.gpu_price_usd, "system_price_usd": self.system_price_usd}
                )
            )
        months = [p.month for p in self.payments]
        if any(b <= a for a, b in zip(months, months[1:], strict=False)):
            raise ValueError(
                f"capex.payments months are {months}; expected strictly increasing months"
            )
        total = sum(p.share for p in self.payments)
        if self.payments and abs(total - 1.0) > PAYMENT_SHARE_TOLERANCE:
            raise ValueError(
                f"capex.payments shares sum to {total:.6g}; expected 1 (100% of the capex)"
            )
        return self


PAYMENT_SHARE_TOLERANCE = 1e-9
"""How far the shares of capex.payments may sum from 1 (rounding of decimal shares)."""


class Opex(Section):
    staff_usd_per_month: float = Field(0.0, ge=0, description="Operations staff [USD/month]")
    maintenance_share_of_capex_annual: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Maintenance and support per year as a share of capex [fraction]",
    )
    warranty_months: int = Field(
        0,
        ge=0,
        le=600,
        description="Vendor warranty from each fleet's first month in service: maintenance is "
        "charged only after it; 0 charges it from the first month [months]",
    )
    insurance_share_of_capex_annual: float = Field(
        0.0, ge=0, le=1, description="Insurance per year as a share of capex [fraction]"
    )
    software_usd_per_gpu_month: float = Field(
        0.0, ge=0, description="Software licences per GPU in service [USD/GPU-month]"
    )
    site_open_month: int | None = Field(
        None,
        ge=0,
        le=600,
        description="Month the site opens and its staff are first paid; default: the first "
        "month any GPU is in service [month index]",
    )
    sga_share_of_revenue: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Selling, general and administrative costs as a share of revenue [fraction]",
    )


class Financing(Section):
    debt_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="One term loan as a share of capex, drawn as the GPUs are bought; or give "
        "tranches [fraction]",
    )
    debt_usd: float | None = Field(
        None,
        ge=0,
        description="The term loan as an amount instead of debt_share: drawn with the capex, at "
        "most the capex (a committed loan keeps its dollars whatever the capex) [USD]",
    )
    debt_rate_annual: float = Field(
        0.09, ge=0, le=1, description="Term loan interest rate [1/year]"
    )
    debt_rate_quote: Literal["nominal", "effective"] = Field(
        "nominal",
        description="How the loan rate is quoted: nominal (monthly rate = rate/12, as loans are) or "
        "effective ((1+rate)^(1/12)-1)",
    )
    debt_term_months: int = Field(
        60, ge=1, le=600, description="Loan term, level monthly payments from month 1 [months]"
    )
    repayment: Literal["level_payment", "sculpted", "balance_schedule"] = Field(
        "level_payment",
        description="Repayment of debt_share's loan: level monthly payments, sculpted to the "
        "cash flow available for debt service (constant DSCR over the term), or to the "
        "balances of balance_schedule (a profile agreed at close)",
    )
    balance_schedule: tuple[float, ...] = Field(
        (),
        description="balance_schedule: debt_share's loan balance at the end of months 1, 2, ... "
        "as shares of the amount drawn, ending at 0 (repaid); each month's service is the "
        "opening balance with its interest less the closing one, so a balance may rise by at "
        "most the month's interest; debt_term_months does not apply [fraction]",
    )
    size_to_min_dscr: float | None = Field(
        None,
        gt=0,
        le=10,
        description="Size the debt to this minimum DSCR, as lenders do (e.g. 1.30): the largest "
        "debt, up to debt_share of capex (or the tranches as given), whose service it covers in "
        "every month and covenant test window [x]; none: the debt as given",
    )
    max_ltv: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Cap the sized debt so that its balance stays within this share of the GPUs' "
        "book value in every month [fraction]; none: no cap",
    )
    tax_rate: float = Field(0.21, ge=0, lt=1, description="Income tax rate [fraction]")
    tax_payment: Literal["quarterly", "annual", "monthly"] = Field(
        "quarterly",
        description="When each tax year's income tax is paid: quarterly estimates in the months "
        "they are due, the 4th, 6th, 9th and 12th of the tax year (IRC §6655(c)), annual when the "
        "return is due, the 4th month after the year ends (IRC §6072(a)), or monthly in equal "
        "parts; never before the first month with taxable income",
    )
    tax_loss_limit: float = Field(
        1.0,
        gt=0,
        le=1,
        description="Share of a tax year's taxable income that losses carried forward may offset: "
        "1 (no limit) or 0.8, the US federal limit for losses arising in tax years after 2017 "
        "(IRC §172(a)(2)), which leaves a fifth of a profitable year's income taxed while losses "
        "remain [fraction]",
    )
    tax_valuation_allowance: Literal["none", "beyond_reversing_liabilities"] = Field(
        "none",
        description="Deferred tax asset for losses carried forward (ASC 740-10-30-5): none (the "
        "whole asset is recognized) or beyond_reversing_liabilities (an allowance on the part "
        "the deferred tax liabilities do not cover)",
    )
    discount_rate_annual: float = Field(
        0.10,
        ge=-0.5,
        le=1,
        description="Cost of capital for NPV and levelized cost [1/year]; from -50% (below it "
        "discount factors grow so fast that present values mean nothing) to 100%",
    )
    tranches: tuple[Tranche, ...] = Field(
        (),
        description="The capital stack: term loans, delayed-draw term loans, senior notes, "
        "convertible notes, equity. Instead of debt_share and its loan",
    )
    covenants: Covenants = Field(Covenants(), description="Lenders' covenants (DSCR, LLCR, LTV)")

    @model_validator(mode="after")
    def _one_debt_model(self) -> Financing:
        if self.tranches and self.debt_share > 0:
            raise ValueError(
                f"debt_share is {self.debt_share} and tranches are given; give the debt either as "
                "debt_share (one term loan) or as tranches"
            )
        if self.debt_usd is not None and (self.tranches or self.debt_share > 0):
            other = "tranches are" if self.tranches else f"debt_share is {self.debt_share}"
            raise ValueError(
                f"debt_usd is {self.debt_usd:,.0f} and {other} given; give the term loan either "
                "as debt_usd (an amount) or as debt_share (a share of capex), and no tranches"
            )
        if self.repayment != "level_payment" and self.tranches:
            raise ValueError(
                f"repayment = '{self.repayment}' shapes debt_share's loan; tranches have their "
                "own repayment: give debt_share instead, or repayment = 'level_payment'"
            )
        self._check_balance_schedule()
        self.stack  # noqa: B018  (the stack's own rules: names, shares, residual equity)
        return self

    def _check_balance_schedule(self) -> None:
        schedule = self.balance_schedule
        if (self.repayment == "balance_schedule") != bool(schedule):
            raise ValueError(
                "repayment = 'balance_schedule' and balance_schedule go together: give both "
                "(the balances at the end of months 1, 2, ...) or neither"
            )
        if not schedule:
            return
        from econ.financing import balance_schedule_error

        problem = balance_schedule_error(
            schedule, self.debt_rate_annual, self.debt_rate_quote == "effective"
        )
        if problem:
            raise ValueError(f"balance_schedule {problem}")

    @property
    def stack(self) -> CapitalStack:
        """The tranches and covenants as a capital stack (debt_share's loan is built by the engine)."""
        return CapitalStack(tranches=self.tranches, covenants=self.covenants)


VINTAGE_SECTIONS = (
    "fleet",
    "throughput",
    "utilization",
    "capex",
    "depreciation",
    "power",
    "facility",
)
VINTAGE_FACILITY_FIELDS = ("rack_cooling",)
"""The [facility] fields a vintage may give: its racks' own cooling (GB300 NVL72 racks on liquid
beside air-cooled H200 racks). The hall, its cooling, price and contract are the site's, one for
the scenario."""


class Vintage(Section):
    """Another generation of GPUs in the same scenario, bought at its own month.

    Each section given here is merged field by field over the scenario's own section (a price given
    here replaces both of the scenario's price fields, a GPU count or rack count both of its size
    fields); the sections not given are the scenario's. Purchase and retirement months are the
    vintage's own (default: bought in month 0, kept to the horizon).
    """

    name: str = Field(
        ...,
        min_length=1,
        description=f"Short name of the vintage, e.g. gb300-2026 ({PRINTABLE})",
    )
    fleet: dict[str, Any] = Field({}, description="Fields of [fleet] for this vintage")
    throughput: dict[str, Any] = Field({}, description="Fields of [throughput] for this vintage")
    utilization: dict[str, Any] = Field({}, description="Fields of [utilization] for this vintage")
    capex: dict[str, Any] = Field({}, description="Fields of [capex] for this vintage")
    depreciation: dict[str, Any] = Field(
        {}, description="Fields of [depreciation] for this vintage"
    )
    power: dict[str, Any] = Field({}, description="Fields of [power] for this vintage")
    facility: dict[str, Any] = Field(
        {},
        description="Fields of [facility] for this vintage: rack_cooling alone, how its racks "
        "are cooled where they differ from the scenario's (the hall is the site's)",
    )

    @field_validator("facility")
    @classmethod
    def _racks_only(cls, given: dict[str, Any]) -> dict[str, Any]:
        other = [name for name in given if name not in VINTAGE_FACILITY_FIELDS]
        if other:
            raise ValueError(
                f"{shortened(other[0])} is a field of the site: a vintage's [facility] takes "
                f"{', '.join(VINTAGE_FACILITY_FIELDS)} alone (its racks' cooling); expected the "
                "hall, its cooling, price and contract in the scenario's [facility]"
            )
        return given


SECTIONS = (
    "fleet",
    "throughput",
    "utilization",
    "capex",
    "depreciation",
    "power",
    "facility",
    "opex",
    "financing",
    "market",
)
"""The sections of a scenario file, in file order."""

REQUIRED_SECTIONS = ("fleet", "throughput", "capex", "market")
"""Sections a scenario file must give: without them a file (e.g. one cut short) would project on
defaults that describe no real fleet."""


NAME_MAX_CHARS = 200
"""Most characters of a scenario's name: it heads tables, sheets and messages (a name of 33,000
characters was cut in the workbook's cells and quoted whole in `econ verify`'s message); the
scenario library's name column holds as many (econ.library.tables.NAME_LENGTH)."""


class Scenario(Section):
    MULTILINE = frozenset({"description"})
    schema_version: int = Field(SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION, description="File format")
    name: str = Field(
        "scenario",
        min_length=1,
        max_length=NAME_MAX_CHARS,
        description=f"Short name shown in outputs ({PRINTABLE})",
    )
    description: str = Field("", description="What the scenario represents")
    start_date: dt.date = Field(
        dt.date(2026, 1, 1),
        description="Date of month 0, the purchase month (day is ignored); from 1900-01-01, with "
        "the horizon's last month in 9999 at the latest (the dates spreadsheets show)",
    )
    horizon_months: int | None = Field(
        None,
        ge=1,
        le=600,
        description="Months projected after month 0; default: the useful life [months]",
    )
    fleet: Fleet = Fleet()
    throughput: Throughput = Throughput()
    utilization: Utilization = Utilization()
    capex: Capex = Capex(gpu_price_usd=30000.0)
    depreciation: Depreciation = Depreciation()
    power: Power = Power()
    facility: Facility = Facility()
    opex: Opex = Opex()
    financing: Financing = Financing()
    market: Market = Market()
    vintages: tuple[Vintage, ...] = Field(
        (),
        max_length=MAX_VINTAGES,
        description="Further GPU generations bought at their own months (fleet vintages); at most "
        f"{MAX_VINTAGES}, one a year over the longest horizon",
    )
    sources: dict[str, str] = Field(
        {},
        description="Source of each input, keyed by dotted field path, e.g. 'capex.gpu_price_usd'",
    )

    @field_validator("name")
    @classmethod
    def _not_blank(cls, name: str) -> str:
        """Refuse a name of spaces only: it keys the frames and names the files and library
        entries, where it would read as no name (an empty one is refused by min_length)."""
        if name and not name.strip():
            raise ValueError(
                f"{counted(len(name), 'space')} and nothing else; expected a name with a character other "
                "than a space"
            )
        return name

    @field_validator("vintages", mode="before")
    @classmethod
    def _few_enough_vintages(cls, given):
        """Refuse more than MAX_VINTAGES before any is validated (the words of the bound, where
        pydantic's max_length said "51 items")."""
        if isinstance(given, list | tuple) and len(given) > MAX_VINTAGES:
            raise ValueError(
                f"{len(given):,} vintages; expected at most {MAX_VINTAGES} (one GPU generation a "
                f"year over the longest horizon, {MAX_MONTHS} months)"
            )
        return given

    # The file the scenario was read from, for messages raised after validation (not a field:
    # it is not saved, compared or part of the schema).
    _file: str | None = PrivateAttr(None)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    @property
    def default_sections(self) -> tuple[str, ...]:
        """Sections the scenario did not give, so they hold their defaults (e.g. ('opex',))."""
        return tuple(name for name in SECTIONS if name not in self.model_fields_set)

    @property
    def source_file(self) -> str | None:
        """The scenario file this scenario was read from, if any."""
        return self._file

    @property
    def horizon(self) -> int:
        """Months projected after month 0 [months]."""
        if self.horizon_months is not None:
            return self.horizon_months
        return max(1, round(self.depreciation.life_years * 12))

    @model_validator(mode="after")
    def _fits_horizon(self) -> Scenario:
        horizon = self.horizon
        _check_dates(self.start_date, horizon)
        ramps = {
            "fleet.deployment_ramp_months": self.fleet.deployment_ramp_months,
            "utilization.ramp_months": self.utilization.ramp_months,
        }
        for path, months in ramps.items():
            if months > horizon:
                raise ValueError(
                    f"{path} is {months} months, longer than the horizon of {horizon} "
                    f"month{'s' if horizon != 1 else ''}; "
                    "expected a ramp that ends within the horizon"
                )
        problems = self.throughput.horizon_problems(horizon, self.start_date)
        if problems:
            raise ValueError(problems[0])
        _check_service_window(self.fleet, horizon, "fleet")
        _check_depreciation_start(self.depreciation.in_service_month, self.fleet, horizon)
        _check_resale(self)
        _check_payments(self.capex, self.fleet, "fleet")
        _check_construction_financing(self)
        _check_token_mix(self)
        check_stack_fits_horizon(self.financing.stack, horizon)
        check_fleet_in_hall(
            self.fleet.gpu_count,
            self.fleet.gpus_per_rack,
            self.power,
            self.facility,
            self.fleet.hardware,
        )
        for path in self.sources:
            if not _has_path(self, path):
                raise ValueError(
                    f"sources names {shortened(path)}, which is not a field of the scenario"
                )
        _check_vintage_names(self.vintages)
        rows = self.expand()  # validates every vintage as a scenario of its own
        if self.facility.mode == "owned" and self.facility.critical_kw is not None:
            check_hall_capacity(self.facility, *_peak_it_load(rows, horizon))
        if self.facility.floor_m2 is not None and len(rows) > 1:  # (each row is checked alone)
            check_hall_floor(self.facility, *_peak_racks(rows, horizon))
        return self

    def expand(self) -> tuple[Scenario, ...]:
        """The scenario's own fleet and each vintage as complete single-fleet scenarios.

        Vintage i is this scenario with the vintage's sections merged over its own, named
        "<scenario>/<vintage>"; errors name the vintage and the field.
        """
        if not self.vintages:
            return (self,)
        base = self.model_dump(exclude={"vintages", "sources"})
        expanded = [Scenario.model_validate({**base, "name": f"{self.name}/base"})]
        for i, vintage in enumerate(self.vintages):
            data = {**base, "name": f"{self.name}/{vintage.name}"}
            for section in VINTAGE_SECTIONS:
                given = getattr(vintage, section)
                merged = dict(base[section])
                for group in _REPLACED_TOGETHER.get(section, ()):
                    if group & set(given):
                        for name in group:
                            merged.pop(name, None)
                if section == "fleet":  # a vintage has its own dates
                    merged.pop("purchase_month", None)
                    merged.pop("retire_month", None)
                    merged.pop("service_start_month", None)
                data[section] = {**merged, **given}
            try:
                expanded.append(Scenario.model_validate(data))
            except ValidationError as exc:
                raise VintageError(i, vintage.name, exc) from None
        return tuple(expanded)

    def borrowed_figures(self) -> tuple[str | None, ...]:
        """For each row of `expand`, a warning where a vintage runs on other hardware than the
        scenario's own fleet yet gives no throughput, price or power per GPU of its own, so it
        takes the fleet's: figures of other GPUs (a GB300 vintage at an H200's tokens/s); else
        None."""
        out: list[str | None] = [None]
        own = self.fleet.hardware
        for vintage in self.vintages:
            hardware = vintage.fleet.get("hardware", own)
            taken = {
                section: borrowed
                for section, names in _PER_GPU_FIGURES.items()
                if hardware != own and not names & set(getattr(vintage, section))
                for borrowed in [_borrowed(section, getattr(self, section), names)]
                if borrowed
            }
            out.append(
                f"this vintage runs on {hardware}, not the scenario's {own}, but takes "
                f"the scenario's {', '.join(taken.values())}: "
                f"{'a figure' if len(taken) == 1 else 'figures'} of the other GPUs; expected "
                f"the vintage's own in {', '.join(f'[vintages.{s}]' for s in taken)}"
                if taken
                else None
            )
        return tuple(out)

    def set_elsewhere(self) -> dict[str, str]:
        """Numeric fields of the scenario's own fleet whose value comes from another input, as
        {dotted path: that input}: an override or a batch column of one would change nothing
        (a measured curve or the simulator replaces throughput.tokens_per_s_per_gpu, the MLPerf
        history replaces gain_rate_annual, and tranches carry their own rates)."""
        out = {}
        throughput = self.throughput
        source = (
            "throughput.measured"
            if throughput.measured is not None
            else "throughput.simulated"
            if throughput.simulated is not None
            else None
        )
        if source is not None:
            out["throughput.tokens_per_s_per_gpu"] = source
        if throughput.history is not None:
            out["throughput.gain_rate_annual"] = "throughput.history"
        if self.financing.tranches:
            out["financing.debt_rate_annual"] = "financing.tranches (each carries its own rate)"
        return out

    def takes_own_value(self, path: str) -> tuple[bool, ...]:
        """For each scenario of `expand`, whether its `path` is this scenario's own value (what an
        override of the file's field sets): always for the scenario's own fleet; for a vintage,
        unless it gives the field itself (or one that says the same thing, _REPLACED_TOGETHER) or
        the field is a fleet date, which a vintage always has of its own."""
        section, _, name = path.partition(".")
        out = [True]
        for vintage in self.vintages:
            given = set(getattr(vintage, section)) if section in VINTAGE_SECTIONS else set()
            for group in _REPLACED_TOGETHER.get(section, ()):
                if group & given:
                    given |= group
            if section == "fleet":
                given |= {"purchase_month", "retire_month", "service_start_month"}
            out.append(name not in given)
        return tuple(out)


def set_elsewhere_message(path: str, source: str) -> str:
    """What to say of a change to `path`, which the scenario takes from `source`
    (`Scenario.set_elsewhere`)."""
    return (
        f"not used: this scenario takes {path} from {source}, so a value set here would change "
        f"nothing; expected a change to {source.split(' ')[0]}, or a scenario without it"
    )


_REPLACED_TOGETHER = {
    "capex": ({"gpu_price_usd", "system_price_usd"},),
    "fleet": ({"gpu_count", "racks"},),
    # today's throughput: a vintage's own figure is not replaced by the base fleet's curve
    "throughput": ({"tokens_per_s_per_gpu", "measured", "simulated"},),
}
"""Fields that say the same thing two ways: a vintage giving one replaces all of them."""

_PER_GPU_FIGURES = {
    "throughput": {"tokens_per_s_per_gpu", "measured", "simulated"},
    "capex": {"gpu_price_usd", "system_price_usd"},
    "power": {"kw_per_gpu"},
}
"""Figures of one kind of GPU: a vintage on other hardware that gives none of a section's names
takes the scenario's (`Scenario.borrowed_figures`)."""


def _borrowed(path: str, section, names: set[str]) -> str | None:
    """The field of `names` that `section` sets, with its value, e.g. 'power.kw_per_gpu = 1.37'
    (a measured or simulated source by its name alone), else None."""
    for name in sorted(names):
        value = getattr(section, name)
        if value is None:
            continue
        label = f"{path}.{name}"
        return label if not isinstance(value, int | float) else f"{label} = {value:,.6g}"
    return None


def _check_dates(start: dt.date, horizon: int) -> None:
    """ValueError unless every month of the projection (start_date to start_date + horizon) has
    a date spreadsheets show: the exports write one per month."""
    if start < EARLIEST_START:
        raise ValueError(
            f"start_date = {start}: expected a date from {EARLIEST_START} on (spreadsheets show "
            "no earlier date, and every export writes the month dates)"
        )
    last = start.year * 12 + start.month - 1 + horizon
    if last // 12 > LATEST_YEAR:
        raise ValueError(
            f"start_date = {start} with a horizon of {horizon} months ends in "
            f"{last // 12}-{last % 12 + 1:02d}; expected a start_date whose last month falls in "
            f"{LATEST_YEAR} at the latest (spreadsheets show no later date)"
        )


def _gpus_in_service(rows: tuple[Scenario, ...], horizon: int) -> list[list[float]]:
    """GPUs in service of each row (`rows`, from Scenario.expand) in each month [month][row]:
    every row in service from its first month of service to its retirement, its GPUs entering
    service linearly over fleet.deployment_ramp_months, as the engine counts them."""

    def in_service(fleet: Fleet, month: int) -> float:
        start = fleet.service_start_month
        start = fleet.purchase_month + 1 if start is None else start
        retire = horizon if fleet.retire_month is None else fleet.retire_month
        if not start <= month <= retire:
            return 0.0
        ramp = fleet.deployment_ramp_months
        return fleet.gpu_count * (min(1.0, (month - start + 1) / ramp) if ramp else 1.0)

    return [[in_service(row.fleet, m) for row in rows] for m in range(horizon + 1)]


def _peak_racks(rows: tuple[Scenario, ...], horizon: int):
    """The month the fleet and its vintages (`rows`) have the most racks in service, and each
    row's (name, racks) then (a rack part-filled by a ramp counted whole)."""
    gpus = _gpus_in_service(rows, horizon)
    per_rack = [row.fleet.gpus_per_rack for row in rows]
    racks = [
        [math.ceil(g / n - 1e-9) for g, n in zip(month, per_rack, strict=True)] for month in gpus
    ]
    month = max(range(horizon + 1), key=lambda m: sum(racks[m]))
    names = [row.name.rpartition("/")[2] for row in rows]
    return [(n, r) for n, r in zip(names, racks[month], strict=True) if r > 0], month


def _peak_it_load(rows: tuple[Scenario, ...], horizon: int):
    """The month the fleet and its vintages (`rows`, from Scenario.expand) draw the most IT power
    at full load, and each row's (name, GPUs in service, IT kW per GPU) then: every row in
    service from its first month of service to its retirement, its GPUs entering service
    linearly over fleet.deployment_ramp_months, as the engine counts them."""

    kw_per_gpu = [it_kw_per_gpu(row.power) for row in rows]
    gpus = _gpus_in_service(rows, horizon)
    month = max(
        range(horizon + 1),
        key=lambda m: sum(g * k for g, k in zip(gpus[m], kw_per_gpu, strict=True)),
    )
    names = [row.name.rpartition("/")[2] for row in rows]
    loads = [
        (name, count, kw) for name, count, kw in zip(names, gpus[month], kw_per_gpu, strict=True)
    ]
    return [load for load in loads if load[1] > 0] or loads[:1], month


def _check_vintage_names(vintages) -> None:
    """Refuse a vintage named as another, or as the scenario's own fleet ("base"): the vintage
    table, warnings and `econ refresh --vintage` tell rows apart by name (two named 'gb300'
    were both dropped from the refresh's cases, which replaced the first)."""
    names = [v.name for v in vintages]
    if "base" in names:
        raise ValueError(
            f"vintages[{names.index('base')}].name = 'base': the name of the scenario's own "
            "fleet in the vintage table and warnings; expected another name"
        )
    duplicates = sorted({x for x in names if names.count(x) > 1})
    if duplicates:
        places = " and ".join(f"vintages[{i}]" for i, x in enumerate(names) if x == duplicates[0])
        raise ValueError(
            f"vintage name '{duplicates[0]}' is used more than once ({places}); expected a "
            "distinct name for each vintage (the vintage table, warnings and econ refresh "
            "--vintage name them)"
        )


def _check_service_window(fleet: Fleet, horizon: int, where: str) -> None:
    if fleet.purchase_month >= horizon:
        raise ValueError(
            f"{where}.purchase_month is {fleet.purchase_month}, at or after the end of the horizon "
            f"({horizon} months); expected a purchase before month {horizon}"
        )
    retire = fleet.retire_month
    if retire is not None and not fleet.purchase_month < retire <= horizon:
        raise ValueError(
            f"{where}.retire_month is {retire}; expected a month after the purchase month "
            f"({fleet.purchase_month}) and no later than the horizon ({horizon})"
        )
    start = fleet.service_start_month
    last = horizon if retire is None else retire
    if start is not None and not fleet.purchase_month < start <= last:
        raise ValueError(
            f"{where}.service_start_month is {start}; expected a month after the purchase month "
            f"({fleet.purchase_month}) and no later than the "
            + ("horizon" if retire is None else f"{where}.retire_month")
            + f" ({last})"
        )


def _check_depreciation_start(in_service: int, fleet: Fleet, horizon: int) -> None:
    """Depreciation starts (months after purchase) no later than the GPUs retire."""
    last = horizon if fleet.retire_month is None else fleet.retire_month
    held = last - fleet.purchase_month
    if in_service > held:
        end = "the horizon" if fleet.retire_month is None else "fleet.retire_month"
        raise ValueError(
            f"depreciation.in_service_month is {in_service}, after the GPUs retire ({end}, "
            f"month {last}, {held} months after their purchase); expected at most {held}"
        )


def _check_payments(capex: Capex, fleet: Fleet, where: str) -> None:
    """Capex payments fall from the purchase month to the month before service starts."""
    start = fleet.service_start_month
    construction = (fleet.purchase_month + 1 if start is None else start) - fleet.purchase_month
    late = [p.month for p in capex.payments if p.month >= construction]
    if late:
        raise ValueError(
            f"capex.payments has a payment {late[0]} months after {where}.purchase_month "
            f"({fleet.purchase_month}), in or after the service start month "
            f"({fleet.purchase_month + construction}); expected every payment before service "
            "starts (set fleet.service_start_month later)"
        )


def _check_resale(scenario: Scenario) -> None:
    """A resale table sets the sale proceeds, so it excludes depreciation.sale_value_share; the
    impairment test's 'resale_value' needs one."""
    has_resale = scenario.market.has_resale
    if has_resale and scenario.depreciation.sale_value_share is not None:
        raise ValueError(
            f"depreciation.sale_value_share is {scenario.depreciation.sale_value_share} and a "
            "market resale table (market.resale_value_table or resale_series) is given; both set "
            "the sale proceeds at retirement, expected one of the two"
        )
    impairment = scenario.depreciation.impairment
    uses = [
        name
        for name in ("trigger_price", "fair_value_source")
        if getattr(impairment, name) == "resale_value"
    ]
    if uses and impairment.price_drop_threshold is not None and not has_resale:
        raise ValueError(
            f"depreciation.impairment.{uses[0]} is 'resale_value' but the scenario gives no "
            "market.resale_value_table or market.resale_series; expected one of them"
        )


def _check_construction_financing(scenario: Scenario) -> None:
    """A construction period's interest is capitalized on financing.debt_share's loan only."""
    built = scenario.fleet.service_start_month is not None or bool(scenario.capex.payments)
    built = built or any(
        "service_start_month" in v.fleet or "payments" in v.capex for v in scenario.vintages
    )
    if built and (scenario.financing.tranches or scenario.vintages):
        what = "financing.tranches" if scenario.financing.tranches else "vintages"
        raise ValueError(
            f"a construction period (fleet.service_start_month or capex.payments) is given with "
            f"{what}; expected it with financing.debt_share's loan and no vintages (the "
            "interest capitalized during construction is modelled for that loan only)"
        )
    f = scenario.financing
    if built and (
        f.size_to_min_dscr is not None or f.max_ltv is not None or f.repayment != "level_payment"
    ):
        raise ValueError(CONSTRUCTION_SIZING)


CONSTRUCTION_SIZING = (
    "debt sizing (financing.size_to_min_dscr, financing.max_ltv or financing.repayment = "
    "'sculpted' or 'balance_schedule') is not available with a construction period "
    "(fleet.service_start_month or capex.payments) yet; give the debt as financing.debt_share "
    "with level payments"
)
"""Refused by the scenario's check and, for a batch whose columns set either, by the engine."""


def _check_token_mix(scenario: Scenario) -> None:
    """Input prices need the workload's input tokens per output token, given or from its source."""
    market, throughput = scenario.market, scenario.throughput
    if not market.charges_input_tokens:
        return
    ratio = throughput.input_tokens_per_output_token
    price = f"market.input_price_usd_per_mtok is {market.input_price_usd_per_mtok:g}"
    if ratio == 0:
        raise ValueError(
            f"{price} but throughput.input_tokens_per_output_token is 0; expected the input "
            "tokens served per output token above 0 (no input tokens earn no input revenue: "
            "set the input price to 0)"
        )
    if ratio is None and throughput.measured is None and throughput.simulated is None:
        raise ValueError(
            f"{price} but throughput.input_tokens_per_output_token is not set and the throughput "
            "is a fixed figure; expected the input tokens served per output token (e.g. mean "
            "input length / mean output length), or a measured or simulated source that "
            "records them"
        )


def _has_path(model: BaseModel, path: str) -> bool:
    node: object = model
    for part in path.split("."):
        fields = type(node).model_fields if isinstance(node, BaseModel) else {}
        if part not in fields:
            return False
        node = getattr(node, part)
    return True


class VintageError(ValueError):
    """A vintage that does not validate as a scenario of its own: which one, and pydantic's
    errors, which econ.scenario.io words as a file's (the field, its value, what was expected)."""

    def __init__(self, index: int, name: str, error: ValidationError):
        self.index, self.name, self.error = index, name, error
        err = error.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        what = f": {loc} = {shortened(err.get('input'))}" if loc else ""
        super().__init__(f"{self.where}{what}: {err['msg'].removeprefix('Value error, ')}")

    @property
    def where(self) -> str:
        return f"vintages[{self.index}] ({self.name})"


def model_of(annotation) -> type[BaseModel] | None:
    """The pydantic section model inside a field's annotation (``Foo | None``, ``tuple[Foo, ...]``),
    or None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = model_of(arg)
        if found is not None:
            return found
    return None
