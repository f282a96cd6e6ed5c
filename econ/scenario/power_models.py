"""Scenario sections for power and the facility: the `[power]` and `[facility]` tables.

They extend the foundation's sections without renaming a field (kw_per_gpu, idle_power_share, pue,
price_usd_per_kwh, escalation_annual, colo_usd_per_kw_month) and add: the boundary of the power figure
(chip only, chip plus host share, at the utility meter), a measured energy per token, a time-of-day
price shape folded into a monthly average factor, contracted vs drawn colocation capacity, an owned
facility (capex per MW of critical load, its own life and maintenance), rack and hall cooling with a
liquid retrofit, the hall's kW-per-rack limit and floor space.

Choices are Literals whose order is the code stored in a ScenarioBatch column; the domain modules
(econ.power, econ.facility) list the same names in the same order (tests check this). Like the rest
of econ.scenario, this module imports nothing of econ beyond units.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from econ.scenario.errors import BoundError
from econ.scenario.section import Section
from econ.strict_json import EXPECTED_FINITE, beyond_float, integer_shown

PowerBoundary = Literal["chip_plus_host", "chip_only", "utility_meter"]
FacilityMode = Literal["colocation", "owned"]
RackCooling = Literal["air", "liquid"]
HallCooling = Literal["air", "liquid", "air_retrofit_liquid"]

PUE_MESSAGE = (
    "PUE must be greater than or equal to 1: it is total facility power over IT power "
    "(The Green Grid WP#49), so the facility cannot draw less than its IT load; got {value}"
)


MAX_POWER_PRICE_USD_PER_KWH = 5.0
"""The highest electricity price a scenario takes [USD/kWh]: ERCOT's high system-wide offer cap
(HCAP), USD 5,000/MWh from 2022-01-01 (Public Utility Commission of Texas, 16 TAC §25.505(g), as
amended 2021-12-02; ERCOT market notice M-A120721-01), the ceiling of any price the US
scarcity-priced market clears at, so a time-averaged price cannot exceed it. A price above it is
a price per MWh typed as per kWh (80 for 0.08)."""


CBRE_COLO_USD_PER_KW_MONTH = 184.06
"""Colocation price per kW of IT capacity per month, North America, 250-500 kW requirements
(CBRE, North America Data Center Trends H2 2024; models/reference_figures.csv) [USD/kW-month]:
the figure facility.colo_usd_per_kw_month's description cites, and the centre of the band
econ.plausibility warns outside of."""


MAX_ESCALATION_ANNUAL = 1.0
"""The largest annual escalation a scenario takes [fraction/year]: a price doubling every year of
the horizon (32x in five years). Above it is a percent typed as a whole number (3 for 3%)."""


def _escalation(value, what: str):
    """Refuse an escalation above MAX_ESCALATION_ANNUAL with a message saying what was meant,
    before pydantic's bound check."""
    if _number(value) and value > MAX_ESCALATION_ANNUAL:
        limit = f"{what} doubling every year of the horizon"
        percent = f"{value:.0%}" if value < 1e10 else f"{value * 100:.4g}%"  # not 300 digits
        raise BoundError(
            f"{value:g} is {percent} a year, above {MAX_ESCALATION_ANNUAL:.0%} a year ({limit}); "
            f"expected a fraction ({value:g}% is {value / 100:g})",
            ("le", MAX_ESCALATION_ANNUAL),
            limit,
        )
    return value


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


ELECTRICITY_NOT_NEGATIVE = (
    "negative wholesale hours belong in the time-of-day shape, whose average stays positive"
)
FACILITY_NOT_NEGATIVE = "a facility's rent or build cost is paid, never earned; 0 for none"


def _no_negative_price(value, what: str, why: str = ELECTRICITY_NOT_NEGATIVE):
    """Reject a negative price with a message saying why, before pydantic's bound check."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        raise BoundError(
            f"{what} must be greater than or equal to 0; a negative price of {value} is not "
            f"supported ({why})",
            ("ge", 0),
            why,
        )
    return value


def weighted_price_factor(price_shape, load_shape=()) -> float:
    """Load-weighted mean of a price shape over its time mean [ratio].

    The same formula as econ.power.time_of_day_factor (tests check they agree); repeated here because
    scenario models import nothing of econ beyond units.
    """
    price = [float(p) for p in price_shape]
    load = [float(x) for x in load_shape] if load_shape else [1.0] * len(price)
    weighted = sum(p * w for p, w in zip(price, load, strict=True)) / sum(load)
    return weighted / (sum(price) / len(price))


MAX_KW_PER_GPU = 20.0
"""The largest power per GPU a scenario takes [kW/GPU]: about ten times today's densest (GB300
NVL72: 132 kW / 72 = 1.83 kW with its host share) and room for the utility-meter boundary's PUE;
a larger figure is a typo or a system's power entered as a GPU's."""


MAX_KW_PER_RACK = 2000.0
"""The largest IT power per rack a scenario takes, as a rack's figure or a hall's limit [kW/rack]:
above the densest racks announced, NVIDIA's Rubin Ultra NVL576 "Kyber" rack at up to 600 kW
(GTC 2025; Tom's Hardware, 2025-03) and the 1.2-1.3 MW TrendForce expects of later systems
(via cloudnews.tech, 2025), and 15 times today's densest (GB300 NVL72, 132 kW, models/racks.toml).
No source gives a ceiling, so this is a sanity bound: a larger figure is a typo, a hall's or a
row's power entered as a rack's, or a "no limit" that is written by leaving the field out."""

KW_PER_RACK_DEPARTURE = 0.2
"""How far facility.kw_per_rack may depart from GPUs per rack x IT kW per GPU [fraction]. The
physical rack can differ from that product by its share of networking outside the rack: 11% in
models/racks.toml (GB200 NVL72, 120 kW against 72 x 1.87 = 134.64 kW); 20%, the tolerance
econ.racks gives a power figure against the rack catalog's, leaves room for it. Further off, the
rack figure describes another rack than the fleet's GPUs make, and it would decide the hall's
kW-per-rack check in their place."""


class Power(Section):
    """Power drawn by the GPUs and its price."""

    kw_per_gpu: float = Field(
        1.5,
        gt=0,
        le=MAX_KW_PER_GPU,
        description="Power per GPU at full load, on the boundary kw_per_gpu_definition "
        "(default: chip plus its host share) [kW/GPU]",
    )
    kw_per_gpu_definition: PowerBoundary = Field(
        "chip_plus_host",
        description="What kw_per_gpu includes: chip_plus_host (GPU and its share of CPUs, memory, "
        "NICs, fans and rack switches: the IT load, e.g. SemiAnalysis all-in power), chip_only "
        "(board power/TDP; host_overhead_share is added), or utility_meter (IT x PUE; PUE is "
        "divided out)",
    )
    host_overhead_share: float = Field(
        0.0,
        ge=0,
        le=2,
        description="Host IT power per unit of chip power, added when kw_per_gpu_definition is "
        "chip_only, e.g. 0.3 for 30% [fraction]",
    )
    idle_power_share: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Power drawn while not serving as a share of full load; 1 = always full "
        "(linear power model, Fan et al. 2007) [fraction]",
    )
    pue: float = Field(
        1.3,
        ge=1.0,
        le=3.0,
        description="Power usage effectiveness: total facility power over IT power "
        "(The Green Grid WP#49) [ratio]",
    )
    price_usd_per_kwh: float = Field(
        0.08,
        gt=0,
        le=MAX_POWER_PRICE_USD_PER_KWH,
        description="Electricity price in month 1, time-averaged; at most 5 USD/kWh, ERCOT's "
        "high system-wide offer cap of 5,000 USD/MWh (PUCT, 16 TAC §25.505), the highest price "
        "a US wholesale market clears at, so a price per MWh typed here is refused [USD/kWh]",
    )
    escalation_annual: float = Field(
        0.0,
        gt=-1,
        le=MAX_ESCALATION_ANNUAL,
        description="Annual change of the electricity price, at most 1 (doubling every year) "
        "[fraction/year]",
    )
    time_of_day_factor: float = Field(
        1.0,
        gt=0,
        le=5,
        description="Load-weighted over time-averaged electricity price, a monthly average; "
        "computed from hourly_price_shape when that is given [ratio]",
    )
    hourly_price_shape: tuple[float, ...] = Field(
        (),
        description="Electricity price in each hour of a typical day (24 values, absolute or "
        "relative: only ratios matter); empty = flat",
    )
    hourly_load_shape: tuple[float, ...] = Field(
        (),
        description="IT load in each hour of a typical day (24 values, only ratios matter); "
        "empty = flat",
    )
    measured_joules_per_token: float | None = Field(
        None,
        gt=0,
        description="Measured energy per output token at full load, used instead of kw_per_gpu "
        "(MLPerf Power, InferenceX power data, a user CSV) [J/token]",
    )
    measured_tokens_per_s_per_gpu: float | None = Field(
        None,
        gt=0,
        description="Throughput of the energy measurement; default: throughput.tokens_per_s_per_gpu "
        "[tokens/s/GPU]",
    )
    measured_boundary: PowerBoundary = Field(
        "chip_plus_host",
        description="What the measurement includes (MLPerf Power: wall power of the system under "
        "test, chip_plus_host)",
    )
    measured_source: str = Field("", description="Where the measured energy comes from")

    @field_validator("pue", mode="before")
    @classmethod
    def _pue_at_least_one(cls, value):
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 1:
            raise ValueError(PUE_MESSAGE.format(value=value))
        return value

    @field_validator("escalation_annual", mode="before")
    @classmethod
    def _escalation_as_fraction(cls, value):
        return _escalation(value, "the electricity price")

    @field_validator("price_usd_per_kwh", mode="before")
    @classmethod
    def _price_not_negative(cls, value):
        value = _no_negative_price(value, "the electricity price")
        if _number(value) and value > MAX_POWER_PRICE_USD_PER_KWH:
            raise ValueError(
                f"{value:g} USD/kWh is above {MAX_POWER_PRICE_USD_PER_KWH:g} USD/kWh, ERCOT's "
                "offer cap of 5,000 USD/MWh (PUCT, 16 TAC §25.505), the highest price a US "
                "wholesale market clears at; expected a price per kWh (a price per MWh divided "
                f"by 1,000: {value:g} USD/MWh is {value / 1000:g} USD/kWh)"
            )
        return value

    @field_validator("hourly_price_shape", "hourly_load_shape")
    @classmethod
    def _day_shape(cls, shape: tuple[float, ...]) -> tuple[float, ...]:
        if shape and len(shape) != 24:
            raise ValueError(f"expected 24 hourly values or none, got {len(shape)} values")
        if any(not math.isfinite(v) or v < 0 for v in shape):
            raise ValueError(f"expected hourly values of 0 or more, got {list(shape)}")
        if shape and sum(shape) <= 0:
            raise ValueError("expected hourly values that are not all 0")
        return shape

    @model_validator(mode="before")
    @classmethod
    def _factor_from_shape(cls, data):
        # The factor becomes a batch column, so it is derived here, once, from the shapes.
        if not isinstance(data, dict) or not data.get("hourly_price_shape"):
            if isinstance(data, dict) and data.get("hourly_load_shape"):
                raise ValueError(
                    "hourly_load_shape is given without hourly_price_shape; expected both, or a "
                    "price shape alone (flat load)"
                )
            return data
        price, load = data["hourly_price_shape"], data.get("hourly_load_shape") or ()
        try:
            ok = len(price) == 24 and (not load or len(load) == 24)
            ok = ok and all(float(p) >= 0 for p in price) and all(float(x) >= 0 for x in load)
            ok = ok and sum(map(float, price)) > 0 and (not load or sum(map(float, load)) > 0)
        except (TypeError, ValueError):
            return data  # the field validators report the malformed shape
        if not ok:
            return data
        factor = weighted_price_factor(price, load)
        given = data.get("time_of_day_factor")
        if given is not None and abs(float(given) - factor) > 1e-9 * max(1.0, factor):
            raise ValueError(
                f"time_of_day_factor is {given} but hourly_price_shape gives {factor:.6g}; "
                "expected one or the other"
            )
        return {**data, "time_of_day_factor": factor}

    @model_validator(mode="after")
    def _measurement_complete(self) -> Power:
        if (
            self.measured_joules_per_token is None
            and self.measured_tokens_per_s_per_gpu is not None
        ):
            raise ValueError(
                "measured_tokens_per_s_per_gpu is given without measured_joules_per_token; "
                "expected both or neither"
            )
        return self


class Facility(Section):
    """Where the racks live and what it costs: colocation or an owned hall, and its limits."""

    mode: FacilityMode = Field(
        "colocation",
        description="colocation (rent per contracted kW-month) or owned (capex per MW of critical "
        "load, depreciated over life_years, plus maintenance)",
    )
    colo_usd_per_kw_month: float = Field(
        0.0,
        ge=0,
        description="Colocation price per contracted kW of IT capacity [USD/kW-month] "
        f"(CBRE North America H2 2024: {CBRE_COLO_USD_PER_KW_MONTH:g})",
    )
    escalation_annual: float = Field(
        0.0,
        gt=-1,
        le=MAX_ESCALATION_ANNUAL,
        description="Annual change of the colocation price and of facility maintenance, at most "
        "1 (doubling every year) [fraction/year]",
    )
    contracted_kw: float | None = Field(
        None,
        ge=0,
        description="Contracted colocation IT capacity, billed every service month whether drawn "
        "or not; default: the full-load IT power of the GPUs in service [kW]",
    )
    overage_multiplier: float = Field(
        1.0,
        ge=0,
        description="Price of IT capacity above the contract relative to the contract price [ratio]",
    )
    capex_usd_per_mw: float = Field(
        11_700_000.0,
        ge=0,
        description="Owned facility construction cost per MW of critical (IT) load, excluding IT, "
        "land, design and soft costs, owner-furnished equipment and owner-held contingencies "
        "(Cushman & Wakefield 2025: 11.7 million, range 9.3-15.0) [USD/MW]",
    )
    critical_kw: float | None = Field(
        None,
        gt=0,
        description="Critical (IT) capacity of an owned facility (mode 'owned' only), at least "
        "the most IT power the fleet and its vintages draw at full load; default: that "
        "power [kW]",
    )
    life_years: float = Field(
        20.0, ge=1, le=50, description="Useful life of an owned facility (15-20 typical) [years]"
    )
    maintenance_share_of_capex_annual: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Owned facility maintenance per year as a share of its capex [fraction]",
    )
    rack_cooling: RackCooling = Field(
        "air", description="How the racks are cooled: air, or liquid (direct-to-chip)"
    )
    hall_cooling: HallCooling = Field(
        "air",
        description="What the hall offers: air, liquid, or air_retrofit_liquid (an air hall "
        "retrofitted for liquid racks at liquid_retrofit_usd_per_rack)",
    )
    liquid_retrofit_usd_per_rack: float = Field(
        50_000.0,
        ge=0,
        description="Capex of liquid cooling per rack in a retrofitted air hall "
        "(Morgan Stanley via secondary, 2025: 50,000 per GB300 NVL72 rack) [USD/rack]",
    )
    retrofit_life_years: float = Field(
        15.0,
        ge=1,
        le=50,
        description="Depreciation life of a liquid retrofit; in a colocation hall at most the "
        "months from the site's opening to the horizon (a tenant's improvement, ASC 842-20-35-12) "
        "[years]",
    )
    kw_per_rack: float | None = Field(
        None,
        gt=0,
        le=MAX_KW_PER_RACK,
        description="Rack IT power at full load, within 20% of GPUs per rack x IT kW per GPU; "
        "default: that product [kW/rack]",
    )
    hall_max_kw_per_rack: float | None = Field(
        None,
        gt=0,
        le=MAX_KW_PER_RACK,
        description="The hall's limit per rack (legacy air halls 15-20), at most 2,000; none = "
        "no limit [kW/rack]",
    )
    m2_per_rack: float = Field(
        2.5,
        gt=0,
        description="White space per rack including its share of aisles (industry: 25-30 sq ft) "
        "[m²/rack]",
    )
    floor_m2: float | None = Field(
        None, gt=0, description="White space of the hall; none = not limiting [m²]"
    )

    @field_validator(
        "colo_usd_per_kw_month", "capex_usd_per_mw", "liquid_retrofit_usd_per_rack", mode="before"
    )
    @classmethod
    def _prices_not_negative(cls, value, info):
        return _no_negative_price(value, info.field_name, FACILITY_NOT_NEGATIVE)

    @field_validator("escalation_annual", mode="before")
    @classmethod
    def _escalation_as_fraction(cls, value):
        return _escalation(value, "the colocation price")

    @field_validator("kw_per_rack", "hall_max_kw_per_rack", mode="before")
    @classmethod
    def _rack_power_bounded(cls, value, info):
        if _number(value) and value > MAX_KW_PER_RACK:
            why = "above the densest rack announced (about 600 kW to 1.3 MW)"
            expected = (
                "a hall's limit in kW per rack, or none (leave it out) for a hall without one"
                if info.field_name == "hall_max_kw_per_rack"
                else "a rack's IT power in kW"
            )
            raise BoundError(
                f"{value:,g} kW per rack is more than {MAX_KW_PER_RACK:,g} kW per rack, {why}; "
                f"expected {expected}",
                ("le", MAX_KW_PER_RACK),
                why,
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Facility:
        if self.mode == "owned" and self.colo_usd_per_kw_month > 0:
            raise ValueError(
                f"mode is 'owned' but colo_usd_per_kw_month is {self.colo_usd_per_kw_month}; "
                "expected 0 (an owned facility pays no colocation rent) or mode 'colocation'"
            )
        if self.mode == "owned" and self.contracted_kw is not None:
            raise ValueError(
                "contracted_kw is a colocation term but mode is 'owned'; expected critical_kw"
            )
        if self.mode == "colocation" and self.critical_kw is not None:
            raise ValueError(
                f"critical_kw ({self.critical_kw:,g} kW) is an owned hall's capacity but mode is "
                "'colocation', where it changes nothing; expected contracted_kw (the capacity "
                "the colocation contract bills) or mode 'owned'"
            )
        if self.rack_cooling == "liquid" and self.hall_cooling == "air":
            raise ValueError(
                "rack_cooling is 'liquid' but hall_cooling is 'air': a liquid-cooled rack needs "
                "facility water (ASHRAE TC 9.9 liquid classes); expected hall_cooling 'liquid' or "
                "'air_retrofit_liquid' (paying liquid_retrofit_usd_per_rack)"
            )
        if (
            self.kw_per_rack is not None
            and self.hall_max_kw_per_rack is not None
            and self.kw_per_rack > self.hall_max_kw_per_rack
        ):
            from econ.facility import over_limit_message  # numpy, loaded only on a refusal

            raise ValueError(
                over_limit_message(
                    self.kw_per_rack, self.hall_max_kw_per_rack, "facility.kw_per_rack"
                )
            )
        return self


def it_kw_per_gpu(power: Power) -> float:
    """IT power per GPU at full load from the scenario's nameplate figure and its boundary
    (`econ.power.it_kw_per_gpu` for one scenario) [kW/GPU]."""
    from econ import power as power_mod  # numpy, loaded only where a figure is checked

    boundary = power_mod.POWER_BOUNDARIES.index(power.kw_per_gpu_definition)
    return float(
        power_mod.it_kw_per_gpu(power.kw_per_gpu, boundary, power.host_overhead_share, power.pue)
    )


def host_share_warning(power: Power) -> str | None:
    """A warning where the power per GPU is the chip's alone and no host share is added (the
    IT load is then the GPUs' board power: CPUs, memory, NICs, fans and switches count nothing),
    else None."""
    if power.kw_per_gpu_definition != "chip_only" or power.host_overhead_share > 0:
        return None
    return (
        f"power.kw_per_gpu_definition is 'chip_only' and power.host_overhead_share is 0: the "
        f"{power.kw_per_gpu:g} kW per GPU is counted as the whole IT load, with nothing for the "
        "host (CPUs, memory, NICs, fans, switches); expected the host's share, e.g. 0.3 for 30%"
    )


def check_fleet_in_hall(
    gpu_count: int,
    gpus_per_rack: int,
    power: Power,
    facility: Facility,
    hardware: str | None = None,
) -> None:
    """Cross-section rules for Scenario's model validator: racks within the hall's kW and floor.

    Raises ValueError (pydantic turns it into a ScenarioError) when the rack's IT power, derived
    from gpus_per_rack x IT kW per GPU unless facility.kw_per_rack is given, exceeds
    hall_max_kw_per_rack, or when the racks need more than facility.floor_m2. Where that product
    exceeds the catalog's physical rack of the same `hardware` (a per-GPU figure with a share of
    networking outside the rack), that share and no more is taken off: the physical rack up to
    the rack with its share, the product less the share above (econ.racks.density_kw_per_rack).
    """
    # (the sections refuse such a count first; the float division below would overflow on it)
    for name, count in (("fleet.gpu_count", gpu_count), ("fleet.gpus_per_rack", gpus_per_rack)):
        if beyond_float(count):
            raise ValueError(f"{name} = {integer_shown(count)}: {EXPECTED_FINITE}")
    limit = facility.hall_max_kw_per_rack
    if facility.kw_per_rack is not None:
        _check_rack_figure(facility.kw_per_rack, gpus_per_rack, it_kw_per_gpu(power))
    if limit is not None and facility.kw_per_rack is not None:
        kw_rack, figure = facility.kw_per_rack, "facility.kw_per_rack"
    elif limit is not None:
        from econ.racks import density_kw_per_rack  # the rack catalog, read only for a limit

        kw_rack, figure = density_kw_per_rack(
            hardware, gpus_per_rack, gpus_per_rack * it_kw_per_gpu(power)
        )
    if limit is not None and kw_rack > limit:
        from econ.facility import over_limit_message  # as `econ size` words it

        raise ValueError(over_limit_message(kw_rack, limit, figure))
    racks = math.ceil(gpu_count / gpus_per_rack - 1e-9)
    if facility.floor_m2 is not None and racks * facility.m2_per_rack > facility.floor_m2 + 1e-9:
        raise ValueError(
            f"{gpu_count} GPUs need {racks} racks x {facility.m2_per_rack:g} m² = "
            f"{racks * facility.m2_per_rack:g} m², more than facility.floor_m2 = "
            f"{facility.floor_m2:g} m²; expected a fleet that fits the floor"
        )


def _check_rack_figure(kw_per_rack: float, gpus_per_rack: int, kw_per_gpu: float) -> None:
    """Refuse a facility.kw_per_rack more than KW_PER_RACK_DEPARTURE from GPUs per rack x IT kW
    per GPU: it would decide the hall's kW-per-rack check for a rack the fleet does not have."""
    from_gpus = gpus_per_rack * kw_per_gpu
    departure = kw_per_rack / from_gpus - 1.0
    if abs(departure) <= KW_PER_RACK_DEPARTURE:
        return
    raise ValueError(
        f"facility.kw_per_rack = {kw_per_rack:,g} kW but a rack of {gpus_per_rack:,} GPUs x "
        f"{kw_per_gpu:g} kW per GPU draws {_kw(from_gpus)} kW ({departure:+.0%}); expected the "
        f"rack's IT power within {KW_PER_RACK_DEPARTURE:.0%} of it (a physical rack can differ "
        "by its share of networking outside the rack), or no kw_per_rack"
    )


def _kw(value: float) -> str:
    """A power in a message: thousands separated, at most 2 decimals (9,899.82; 132) [kW]."""
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def check_hall_capacity(
    facility: Facility, loads: list[tuple[str, float, float]], month: int
) -> None:
    """Refuse an owned hall whose facility.critical_kw is below the most IT power its fleet (and
    vintages) draws at full load in any month: the hall's critical capacity feeds every rack at
    full load, as facility.floor_m2 holds every rack.

    Parameters
    ----------
    facility : the scenario's [facility]
    loads : (name, GPUs in service, IT kW per GPU at full load) of the fleet and each vintage in
        the month of the peak [-, GPUs, kW/GPU]
    month : int  the month of the peak [month index]
    """
    critical = facility.critical_kw
    peak = sum(gpus * kw_per_gpu for _, gpus, kw_per_gpu in loads)
    # (within half the message's last digit, 5 W: the figure it shows is accepted)
    if facility.mode != "owned" or critical is None or critical >= peak - 0.005:
        return
    terms = [f"{gpus:,.6g} GPUs x {kw_per_gpu:g} kW per GPU" for _, gpus, kw_per_gpu in loads]
    if len(loads) == 1:
        load = terms[0]
    else:
        rows = ", ".join(f"{name} {term}" for (name, *_), term in zip(loads, terms, strict=True))
        load = f"the fleet and its vintages in month {month}: {rows}"
    raise ValueError(
        f"facility.critical_kw = {critical:,g} kW is below the fleet's full-load IT power of "
        f"{_kw(peak)} kW ({load}); expected at least the fleet's IT load (the hall's critical "
        "capacity feeds every rack at full load), or no critical_kw (a hall built for that load)"
    )


def check_hall_floor(facility: Facility, racks: list[tuple[str, int]], month: int) -> None:
    """Refuse a facility.floor_m2 below the racks the fleet and its vintages have in service at
    once (`racks`: name and racks of each row in `month`, the month of the most): a vintage
    bought before the fleet it replaces retires stands beside it on the same floor (each row's
    racks alone are checked by `check_fleet_in_hall`).

    Parameters
    ----------
    facility : the scenario's [facility]
    racks : (name, racks in service) of the fleet and each vintage in `month` [-, racks]
    month : int  the month of the most racks [month index]
    """
    total = sum(count for _, count in racks)
    need = total * facility.m2_per_rack
    if facility.floor_m2 is None or need <= facility.floor_m2 + 1e-9:
        return
    rows = ", ".join(f"{name} {count:,}" for name, count in racks)
    raise ValueError(
        f"facility.floor_m2 = {facility.floor_m2:g} m² is below the floor the fleet and its "
        f"vintages need in month {month}: {total:,} racks in service ({rows}) x "
        f"{facility.m2_per_rack:g} m² = {need:,g} m²; expected a floor that holds every rack in "
        "service at once (or vintages that overlap fewer months: a retire_month at the new "
        "one's purchase month)"
    )


__all__ = [
    "KW_PER_RACK_DEPARTURE",
    "MAX_KW_PER_RACK",
    "Facility",
    "FacilityMode",
    "HallCooling",
    "Power",
    "PowerBoundary",
    "RackCooling",
    "check_fleet_in_hall",
    "check_hall_capacity",
    "check_hall_floor",
    "it_kw_per_gpu",
    "weighted_price_factor",
]
