"""The facility around the racks: colocation rent, an owned hall, liquid-cooling retrofit, hall limits.

This module owns:

- colocation priced per contracted kW-month (CBRE's unit): the contracted IT capacity is billed
  whether or not it is drawn, draw above the contract is billed as overage, and the unused part is
  stranded capacity;
- an owned facility: capex per MW of critical (IT) load (Cushman & Wakefield's unit), straight-line
  depreciation over the facility's own 15-20-year life from the site's opening, maintenance as a
  share of its capex;
- the capex of retrofitting liquid cooling into an air-cooled (legacy) hall, per rack, written
  off by the horizon in a rented hall (a tenant's improvement);
- the hall's limits: maximum kW per rack and cooling type, checked with errors that say which rack
  failed and why.

Functions are pure and vectorized over a leading scenario axis: per-scenario parameters (n,),
monthly quantities (n, T). Electricity is not billed here (econ.power): colocation rent is for space,
cooling and power capacity; metered energy is passed through at the utility price times PUE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from econ.arrays import snap_to_zero
from econ.errors import InputError
from econ.units import KW_PER_MW, MONTHS_PER_YEAR, annual_growth_factor

FACILITY_MODES = ("colocation", "owned")
"""How the facility is paid for; the order is the code stored in a ScenarioBatch column."""
RACK_COOLING = ("air", "liquid")
"""How a rack rejects its heat; the order is the batch code."""
HALL_COOLING = ("air", "liquid", "air_retrofit_liquid")
"""What the hall offers: air only, liquid (built for it), or an air hall retrofitted for liquid
(coolant distribution units and manifolds added, at `liquid_retrofit_usd_per_rack`)."""


class HallLimitError(InputError):
    """A rack does not fit the hall: too many kW per rack, or liquid cooling in an air-only hall."""


def _per_scenario(values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[:, None] if array.ndim == 1 else array


def _escalation(escalation_annual, months) -> np.ndarray:
    """Price factor (1 + e)^(max(m - 1, 0) / 12): the month-1 price escalates annually [ratio]."""
    m = np.maximum(np.asarray(months) - 1, 0)[None, :]
    return annual_growth_factor(_per_scenario(escalation_annual), m)


# --- Colocation -----------------------------------------------------------------------------------


def contracted_kw_by_month(contracted_kw, nameplate_it_kw, service):
    """Contracted IT capacity in each month [kW].

    A contract (a number) holds for every service month whether or not GPUs are installed; where no
    contract is given (NaN), the capacity follows the nameplate IT power of the GPUs in service, the
    pay-as-you-deploy convention of the foundation engine.

    Parameters
    ----------
    contracted_kw : array (n,)  contracted IT capacity, NaN = follow the nameplate [kW]
    nameplate_it_kw : array (n, T)  full-load IT power of the GPUs in service [kW]
    service : bool array (n, T)  months in service (1..horizon)
    """
    contract = _per_scenario(contracted_kw)
    return np.where(np.isnan(contract), nameplate_it_kw, contract * service)


def colocation_usd_per_month(
    contracted_kw, peak_it_kw, usd_per_kw_month, escalation_annual, months, overage_multiplier=1.0
):
    """Colocation rent per month [USD/month].

    rent_m = r (1 + e)^((m-1)/12) * (K_m + x * max(P_m - K_m, 0))

    with K the contracted kW, P the peak (full-load) IT kW of the installed racks and x the overage
    multiplier. Wholesale colocation is quoted per kW of contracted critical capacity per month
    (CBRE, "North America Data Center Trends H2 2024": USD 184.06/kW-month for 250-500 kW); metered
    energy is billed on top (econ.power).

    Parameters
    ----------
    contracted_kw : array (n, T)  from `contracted_kw_by_month` [kW]
    peak_it_kw : array (n, T)  full-load IT power of the racks installed [kW]
    usd_per_kw_month : array (n,)  price in month 1 [USD/kW-month]
    escalation_annual : array (n,)  [1/year]
    months : array (T,)  month indices
    overage_multiplier : array (n,)  price of kW above the contract relative to the contract [ratio]
    """
    contracted = np.asarray(contracted_kw, dtype=float)
    overage = np.maximum(np.asarray(peak_it_kw, dtype=float) - contracted, 0.0)
    rate = _per_scenario(usd_per_kw_month) * _escalation(escalation_annual, months)
    return rate * (contracted + _per_scenario(overage_multiplier) * overage)


def stranded_kw(contracted_kw, drawn_kw):
    """Contracted capacity not drawn [kW]: max(K - P_drawn, 0).

    Parameters
    ----------
    contracted_kw, drawn_kw : arrays of one shape [kW]
    """
    return np.maximum(np.asarray(contracted_kw, float) - np.asarray(drawn_kw, float), 0.0)


def capacity_used_share(contracted_kw, drawn_kw):
    """Average drawn kW over contracted kW, summed over months [fraction]; NaN without a contract.

    Parameters
    ----------
    contracted_kw, drawn_kw : arrays (n, T)  [kW]
    """
    contracted = np.asarray(contracted_kw, float).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            contracted > 0, np.asarray(drawn_kw, float).sum(axis=-1) / contracted, np.nan
        )


# --- Owned facility -------------------------------------------------------------------------------


def owned_facility_capex_usd(critical_kw, capex_usd_per_mw):
    """Build cost of an owned facility [USD]: critical MW * cost per MW.

    Cushman & Wakefield, "Data Center Development Cost Guide 2025": USD 11.7 million per MW of
    critical load on average (range 9.3-15.0), excluding IT equipment and land; AI-optimized halls
    about USD 20 million per MW (secondary sources).

    Parameters
    ----------
    critical_kw : array (n,)  critical (IT) capacity built [kW]
    capex_usd_per_mw : array (n,)  [USD/MW]
    """
    return np.asarray(critical_kw, float) / KW_PER_MW * np.asarray(capex_usd_per_mw, float)


def straight_line_usd_per_month(cost_usd, life_years, months, first_month=1):
    """Straight-line depreciation of a facility asset per month [USD/month].

    The spreadsheet's SLN(cost, 0, life) per month from `first_month`, with a fractional last month
    when the life is not a whole number of months, so the schedule sums to the cost over the life.
    Facilities carry their own life (15-20 years; ASC 360-10-35-4, depreciation over the asset's
    useful life), independent of the GPUs'.

    Parameters
    ----------
    cost_usd : array (n,)  capitalized cost [USD]
    life_years : array (n,)  useful life [years]
    months : array (T,)  month indices
    first_month : int or array (n,)  first month of depreciation (placed in service) [month]

    Returns
    -------
    array (n, T)  [USD/month]
    """
    life = _per_scenario(np.asarray(life_years, float) * MONTHS_PER_YEAR)
    elapsed = np.asarray(months, float)[None, :] - _per_scenario(first_month)
    share = np.clip(life - elapsed, 0.0, 1.0) * (elapsed >= 0)
    return _per_scenario(cost_usd) / life * share


def book_value_usd(cost_usd, depreciation_usd):
    """Net book value after a depreciation schedule [USD]: cost - sum of depreciation, a float
    residue within half a cent of 0 (a retrofit written off by the horizon) snapped to 0.

    Parameters
    ----------
    cost_usd : array (n,)  [USD]
    depreciation_usd : array (n, T)  depreciation of the months elapsed [USD/month]
    """
    return snap_to_zero(np.asarray(cost_usd, float) - np.asarray(depreciation_usd, float).sum(-1))


def maintenance_usd_per_month(capex_usd, share_annual, escalation_annual, months, service):
    """Facility maintenance per month: a share of its capex per year, escalating [USD/month].

    maint_m = s * C / 12 * (1 + e)^((m-1)/12) in service months.

    Parameters
    ----------
    capex_usd : array (n,)  facility capex [USD]
    share_annual : array (n,)  maintenance per year as a share of capex [fraction]
    escalation_annual : array (n,)  [1/year]
    months : array (T,)  month indices
    service : bool array (n, T)  months the facility operates
    """
    base = _per_scenario(np.asarray(capex_usd, float) * np.asarray(share_annual, float))
    return base / MONTHS_PER_YEAR * _escalation(escalation_annual, months) * service


# --- Cooling and hall limits ----------------------------------------------------------------------


def needs_liquid_retrofit(rack_cooling, hall_cooling):
    """True where a liquid-cooled rack goes into an air hall retrofitted for liquid.

    Parameters
    ----------
    rack_cooling : int array (n,)  index into RACK_COOLING
    hall_cooling : int array (n,)  index into HALL_COOLING
    """
    return (np.asarray(rack_cooling) == RACK_COOLING.index("liquid")) & (
        np.asarray(hall_cooling) == HALL_COOLING.index("air_retrofit_liquid")
    )


def cooling_compatible(rack_cooling, hall_cooling):
    """False where a liquid-cooled rack would go into an air-only hall.

    Direct-to-chip liquid cooling needs facility water (ASHRAE TC 9.9, "Liquid Cooling Guidelines for
    Datacom Equipment Centers", 2nd ed., classes W17-W45/W+); an air-only hall has none until it is
    retrofitted. Air-cooled racks fit any hall.

    Parameters
    ----------
    rack_cooling : int array (n,)  index into RACK_COOLING
    hall_cooling : int array (n,)  index into HALL_COOLING
    """
    return ~(
        (np.asarray(rack_cooling) == RACK_COOLING.index("liquid"))
        & (np.asarray(hall_cooling) == HALL_COOLING.index("air"))
    )


def liquid_retrofit_capex_usd(racks, usd_per_rack, rack_cooling, hall_cooling):
    """Capex of retrofitting liquid cooling for the racks that need it [USD].

    C = racks * c_rack where a liquid rack goes into an air hall marked for retrofit, else 0.
    Morgan Stanley (2025, via secondary) puts liquid cooling at about USD 50,000 per GB300 NVL72 rack.

    Parameters
    ----------
    racks : array (n,)  racks installed [racks]
    usd_per_rack : array (n,)  [USD/rack]
    rack_cooling, hall_cooling : int arrays (n,)  codes into RACK_COOLING and HALL_COOLING
    """
    needed = needs_liquid_retrofit(rack_cooling, hall_cooling)
    return np.where(needed, np.asarray(racks, float) * np.asarray(usd_per_rack, float), 0.0)


def over_limit_message(
    kw_per_rack: float, hall_max_kw_per_rack: float, figure: str | None = None
) -> str:
    """A rack above the hall's kW-per-rack limit, in the one wording `econ size` and a scenario's
    check (econ.scenario.power_models) both use: the rack's kW, which figure it is (the physical
    rack of models/racks.toml, facility.kw_per_rack, or GPUs per rack x IT kW per GPU), the
    limit, and what to change.

    Parameters
    ----------
    kw_per_rack : float  the rack's IT power at full load, as checked [kW/rack]
    hall_max_kw_per_rack : float  the hall's limit [kW/rack]
    figure : str, optional  which figure `kw_per_rack` is, named in brackets after it
    """
    which = f" ({figure})" if figure else ""
    return (
        f"a rack draws {kw_per_rack:g} kW{which}, above the hall's limit of "
        f"{hall_max_kw_per_rack:g} kW per rack; expected a hall rated for the rack (raise "
        "hall_max_kw_per_rack, e.g. a liquid-cooled hall) or a less dense rack (fewer GPUs or "
        "systems per rack)"
    )


def check_racks_fit_hall(
    kw_per_rack,
    hall_max_kw_per_rack,
    rack_cooling=None,
    hall_cooling=None,
    names=None,
    figures=None,
):
    """Raise HallLimitError naming every rack that exceeds the hall's kW limit or cooling.

    A rack is never silently placed where it cannot run: a 132 kW GB300 NVL72 rack in a legacy
    air-cooled hall built for 15-20 kW per rack is refused, with the limit and a way out in the message.

    Parameters
    ----------
    kw_per_rack : array (n,)  rack IT power at full load [kW/rack]
    hall_max_kw_per_rack : array (n,)  the hall's limit; NaN or inf = no limit [kW/rack]
    rack_cooling, hall_cooling : int arrays (n,), optional  codes into RACK_COOLING, HALL_COOLING
    names : sequence of str, optional  scenario names for the message
    figures : sequence of str, optional  which figure each row's kW per rack is
        (`over_limit_message`)
    """
    kw = np.atleast_1d(np.asarray(kw_per_rack, float))
    limit = np.broadcast_to(np.asarray(hall_max_kw_per_rack, float), kw.shape)
    over = np.isfinite(limit) & (kw > limit)
    problems = []
    for i in np.flatnonzero(over)[:5]:
        label = f"{names[i]}: " if names is not None else (f"row {i}: " if kw.size > 1 else "")
        figure = figures[i] if figures is not None else None
        problems.append(label + over_limit_message(kw[i], limit[i], figure))
    if rack_cooling is not None and hall_cooling is not None:
        bad = ~np.broadcast_to(cooling_compatible(rack_cooling, hall_cooling), kw.shape)
        for i in np.flatnonzero(bad)[:5]:
            label = f"{names[i]}: " if names is not None else (f"row {i}: " if kw.size > 1 else "")
            problems.append(
                f"{label}the rack is liquid-cooled but the hall is air-cooled; expected "
                "hall_cooling 'liquid' or 'air_retrofit_liquid' (with a retrofit capex per rack)"
            )
        over = over | bad
    if problems:
        more = int(over.sum()) - len(problems)
        suffix = f"\n  ... and {more} more" if more > 0 else ""
        raise HallLimitError("\n  ".join(problems) + suffix)


# --- Composition ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FacilityCosts:
    """Facility line items of a projection.

    Attributes
    ----------
    facility_usd : array (n, T)  operating cost: colocation rent, or owned-facility maintenance [USD]
    capex_usd : array (n, T)  owned build and liquid retrofit, paid in month 0 [USD]
    depreciation_usd : array (n, T)  straight line of that capex over its own lives [USD]
    book_value_end_usd : array (n,)  capex less depreciation to the horizon [USD]
    contracted_kw : array (n, T)  colocation capacity billed (0 for an owned facility) [kW]
    stranded_kw : array (n, T)  capacity paid for (contracted, or built) and not drawn [kW]

    The capacity lines are computed when first read (the projection engine does not read them).
    """

    facility_usd: np.ndarray
    capex_usd: np.ndarray
    depreciation_usd: np.ndarray
    book_value_end_usd: np.ndarray
    _capacity: Callable[[], tuple[np.ndarray, np.ndarray]] = field(repr=False)

    @cached_property
    def _capacity_lines(self) -> tuple[np.ndarray, np.ndarray]:
        return self._capacity()

    @property
    def contracted_kw(self) -> np.ndarray:
        return self._capacity_lines[0]

    @property
    def stranded_kw(self) -> np.ndarray:
        return self._capacity_lines[1]


def facility_costs(
    *,
    mode,
    months,
    horizon_months,
    nameplate_it_kw,
    drawn_it_kw,
    colo_usd_per_kw_month,
    escalation_annual,
    contracted_kw,
    overage_multiplier,
    critical_kw,
    capex_usd_per_mw,
    life_years,
    maintenance_share_of_capex_annual,
    racks,
    rack_cooling,
    hall_cooling,
    liquid_retrofit_usd_per_rack,
    retrofit_life_years,
    open_month=1,
    capitalized_interest_usd=0.0,
) -> FacilityCosts:
    """Facility line items for colocation or an owned hall, plus any liquid retrofit.

    Colocation (mode 0): rent = `colocation_usd_per_month` on the contracted kW.
    Owned (mode 1): capex = critical MW * USD/MW in month 0, straight-line depreciation over the
    facility life from the month the site opens (placed in service, ASC 360-10-35-4),
    maintenance = share * capex / 12 per month from then. A liquid retrofit (either mode) is
    capitalized in month 0 and depreciated from the opening over its own life; in a colocation
    hall, a tenant's improvement to a site it does not own, over at most the months from the
    opening to the horizon (the shorter of its life and the lease, ASC 842-20-35-12; the contract
    runs to the horizon), so none of it is left at the horizon to count as sold.

    Parameters
    ----------
    mode : int array (n,)  index into FACILITY_MODES
    months : array (T,)  month indices 0..T-1
    horizon_months : int array (n,)  last month of each scenario
    nameplate_it_kw : array (n, T)  full-load IT power of the GPUs in service [kW]
    drawn_it_kw : array (n, T)  average IT power drawn [kW]
    colo_usd_per_kw_month, escalation_annual : array (n,)  [USD/kW-month], [1/year]
    contracted_kw : array (n,)  NaN = follow the nameplate [kW]
    overage_multiplier : array (n,)  [ratio]
    critical_kw : array (n,)  owned facility capacity; NaN = peak nameplate IT kW [kW]
    capex_usd_per_mw : array (n,)  [USD/MW]
    life_years : array (n,)  facility life [years]
    maintenance_share_of_capex_annual : array (n,)  [fraction]
    racks : array (n,)  racks installed [racks]
    rack_cooling, hall_cooling : int arrays (n,)  codes into RACK_COOLING, HALL_COOLING
    liquid_retrofit_usd_per_rack : array (n,)  [USD/rack]
    retrofit_life_years : array (n,)  [years]
    open_month : int array (n,) or int  month the site opens: contracted kW and an owned hall's
        maintenance are charged from it and the site's capex depreciated from it (default 1)
        [month index]
    capitalized_interest_usd : array (n,) or float  construction-loan interest capitalized on
        the site's capex (econ.construction), added to the cost of the hall and the retrofit in
        proportion to their capex (both paid in month 0) [USD]
    """
    months = np.asarray(months)
    m = months[None, :]
    horizon = _per_scenario(horizon_months)
    active = m <= horizon
    service = active & (m >= _per_scenario(open_month))
    owned = np.asarray(mode) == FACILITY_MODES.index("owned")
    owned_col = owned[:, None] if owned.ndim == 1 else owned
    shape = np.shape(nameplate_it_kw)
    # Each block below is skipped where no scenario of the batch has it (it would be all 0).
    contracted = contracted_kw_by_month(contracted_kw, nameplate_it_kw, service)
    rent = np.zeros(shape)
    if not owned.all():
        rent = colocation_usd_per_month(
            contracted,
            nameplate_it_kw,
            colo_usd_per_kw_month,
            escalation_annual,
            months,
            overage_multiplier,
        )

    peak_kw = np.asarray(nameplate_it_kw, float).max(axis=-1)
    critical = np.where(np.isnan(np.asarray(critical_kw, float)), peak_kw, critical_kw)
    build = np.where(owned, owned_facility_capex_usd(critical, capex_usd_per_mw), 0.0)
    maintenance = np.zeros(shape)
    if owned.any():
        maintenance = maintenance_usd_per_month(
            build, maintenance_share_of_capex_annual, escalation_annual, months, service
        )
    retrofit = liquid_retrofit_capex_usd(
        racks, liquid_retrofit_usd_per_rack, rack_cooling, hall_cooling
    )
    capex_total = build + retrofit
    open_at = np.broadcast_to(np.asarray(open_month), np.shape(capex_total))
    with np.errstate(divide="ignore", invalid="ignore"):
        interest = np.where(capex_total > 0, capitalized_interest_usd / capex_total, 0.0)
    cost = 1.0 + interest  # the site's cost per USD of its capex
    # A tenant's retrofit is amortized by the horizon, where the colocation contract ends.
    to_horizon = np.maximum(np.asarray(horizon_months) - open_at + 1, 1) / MONTHS_PER_YEAR
    retrofit_life = np.where(
        owned, retrofit_life_years, np.minimum(retrofit_life_years, to_horizon)
    )
    depreciation = np.zeros(shape)
    if np.any(capex_total != 0):
        depreciation = (
            straight_line_usd_per_month(build * cost, life_years, months, open_at)
            + straight_line_usd_per_month(retrofit * cost, retrofit_life, months, open_at)
        ) * active

    def capacity():
        built_kw = np.where(owned_col, _per_scenario(critical) * service, contracted)
        return (
            np.where(owned_col, 0.0, contracted),
            stranded_kw(built_kw, drawn_it_kw) * service,
        )

    return FacilityCosts(
        facility_usd=np.where(owned_col, maintenance, rent) if owned.any() else rent,
        capex_usd=np.where(m == 0, _per_scenario(capex_total), 0.0),
        depreciation_usd=depreciation,
        book_value_end_usd=book_value_usd(capex_total * cost, depreciation),
        _capacity=capacity,
    )


__all__ = [
    "FACILITY_MODES",
    "HALL_COOLING",
    "RACK_COOLING",
    "FacilityCosts",
    "HallLimitError",
    "book_value_usd",
    "capacity_used_share",
    "check_racks_fit_hall",
    "colocation_usd_per_month",
    "contracted_kw_by_month",
    "cooling_compatible",
    "facility_costs",
    "liquid_retrofit_capex_usd",
    "maintenance_usd_per_month",
    "needs_liquid_retrofit",
    "over_limit_message",
    "owned_facility_capex_usd",
    "stranded_kw",
    "straight_line_usd_per_month",
]
