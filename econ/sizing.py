"""Sizing a hall from its power budget: how many racks and GPUs fit, which limit binds, what is
left; and the other way, the hall a number of GPUs needs.

Three limits can bind: power (MW of IT load, or MW at the utility meter divided by PUE), floor space
(m² of white space at m² per rack including aisles), and a capex budget (racks at their price, after
any fixed facility build cost). The number of racks is the smallest of the three; the others leave
stranded capacity. A rack the hall cannot take (above its kW-per-rack limit, or liquid-cooled in an
air-only hall) is refused with a message, never silently placed; so is a budget too small for one rack.
`hall_for_gpus` goes from GPUs to whole racks (rounded up) and their power with the same formula
(`placed_power_kw`), so a hall sized for the power those racks draw places the same racks.

The power budget is usable critical IT capacity: what the hall feeds after its N+1 or 2N
redundancy, with no derating beyond it. Every rack is counted at its maximum draw, all at once;
`max_load_share` keeps headroom by loading only that share of the budget (1 = all of it).

Vectorized over a leading scenario axis: every argument broadcasts to (n,).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.arrays import snap_to_zero
from econ.density import racks_in_service
from econ.errors import InputError
from econ.facility import HALL_COOLING, RACK_COOLING, check_racks_fit_hall
from econ.units import KW_PER_MW

POWER_BASES = ("it", "utility")
"""What a power budget in MW measures: IT (critical) load, or power at the utility meter."""
LIMITS = ("power", "floor", "budget")
"""Limits in the order ties are reported: with equal rack counts the first one binds."""

_EPS = 1e-9  # so that 10,000 kW / 125 kW is 80 racks, not 79.999... racks


class SizingError(InputError):
    """A hall that cannot take one rack: power, floor or budget too small, or missing figures."""


@dataclass(frozen=True)
class Sizing:
    """Racks and GPUs that fit a hall, with the limit that binds and the capacity left over.

    Every attribute is an array (n,). Stranded figures are what the binding rack count leaves unused
    of each limit; NaN where the limit was not given.

    Attributes
    ----------
    racks, gpus : [racks], [GPUs]
    it_kw, utility_kw : full-load power of the racks placed (at `it_kw_per_rack` of size_hall), IT
        and at the meter (IT * PUE) [kW]
    floor_m2 : white space the racks take [m²]
    capex_usd : racks at their price plus the fixed facility cost [USD]
    binding_limit : str array  'power', 'floor' or 'budget'
    racks_by_limit : {limit: array (n,)}  racks each limit alone allows (inf where not given)
    it_budget_kw, utility_budget_kw : the power budget on both bases [kW]
    stranded_it_kw, stranded_utility_kw : power budget not used, below the share the racks may
        load (`max_load_share` of size_hall; the headroom above it is kept, not stranded) [kW]
    stranded_floor_m2 : [m²]
    stranded_budget_usd : [USD]
    power_basis : str array  'it' or 'utility', as the budget was given
    """

    racks: np.ndarray
    gpus: np.ndarray
    it_kw: np.ndarray
    utility_kw: np.ndarray
    floor_m2: np.ndarray
    capex_usd: np.ndarray
    binding_limit: np.ndarray
    racks_by_limit: dict[str, np.ndarray]
    it_budget_kw: np.ndarray
    utility_budget_kw: np.ndarray
    stranded_it_kw: np.ndarray
    stranded_utility_kw: np.ndarray
    stranded_floor_m2: np.ndarray
    stranded_budget_usd: np.ndarray
    power_basis: np.ndarray


def _basis_codes(power_basis) -> np.ndarray:
    values = np.atleast_1d(np.asarray(power_basis))
    if values.dtype.kind in "iu":
        codes = values
    else:
        unknown = sorted({str(v) for v in values.ravel()} - set(POWER_BASES))
        if unknown:
            raise SizingError(
                f"power_basis {unknown[0]!r} is not known; expected one of {', '.join(POWER_BASES)}"
            )
        codes = np.array([POWER_BASES.index(str(v)) for v in values.ravel()]).reshape(values.shape)
    return codes


def it_budget_kw(power_mw, pue, power_basis="it"):
    """IT power available from a power budget [kW].

    IT basis: P_IT = MW * 1000. Utility basis: P_IT = MW * 1000 / PUE, since the meter sees IT * PUE
    (The Green Grid, White Paper #49).

    Parameters
    ----------
    power_mw : array (n,)  power budget [MW]
    pue : array (n,)  [ratio]
    power_basis : str or array (n,)  'it' / 'utility', or codes into POWER_BASES
    """
    kw = np.asarray(power_mw, float) * KW_PER_MW
    utility = _basis_codes(power_basis) == POWER_BASES.index("utility")
    return np.where(utility, kw / np.asarray(pue, float), kw)


def placed_power_kw(racks, it_kw_per_rack, pue):
    """Full-load power of the racks placed, IT and at the utility meter [kW]:

        P_IT = racks * kW_rack;   P_meter = P_IT * PUE   (The Green Grid, White Paper #49)

    The one formula both ways: `size_hall` (a power budget in, racks out) and `hall_for_gpus`
    (GPUs in, the power their racks need out).

    Parameters
    ----------
    racks : array (n,)  [racks]
    it_kw_per_rack : array (n,)  IT load a placed rack adds to the hall [kW/rack]
    pue : array (n,)  [ratio]
    """
    it_kw = np.asarray(racks, float) * np.asarray(it_kw_per_rack, float)
    return it_kw, it_kw * np.asarray(pue, float)


def racks_within(budget, per_rack):
    """Whole racks a budget allows: floor(budget / per_rack); inf where the budget is inf [racks].

    Parameters
    ----------
    budget : array (n,)  kW, m² or USD available; inf = unlimited
    per_rack : array (n,)  the same unit per rack, > 0
    """
    budget = np.asarray(budget, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = budget / np.asarray(per_rack, float)
    return np.where(np.isinf(budget), np.inf, np.floor(np.maximum(ratio, 0.0) + _EPS))


def size_hall(
    power_mw,
    *,
    pue,
    kw_per_rack,
    gpus_per_rack,
    power_basis="it",
    m2_per_rack=np.nan,
    floor_m2=np.inf,
    capex_budget_usd=np.inf,
    capex_usd_per_rack=np.nan,
    fixed_capex_usd=0.0,
    hall_max_kw_per_rack=np.inf,
    rack_cooling=None,
    hall_cooling=None,
    strict=True,
    names=None,
    it_kw_per_rack=None,
    figures=None,
    max_load_share=1.0,
) -> Sizing:
    """Racks and GPUs that fit a power budget, floor space and capex budget.

    racks = min( floor(s * P_IT / kW_rack), floor(A / a_rack), floor((B - F) / C_rack) )

    with P_IT the IT budget (`it_budget_kw`): usable critical IT capacity, after the hall's
    N+1 or 2N redundancy, which every rack may draw at its maximum at once; s the share of it
    the racks may load (1 = all of it; planners leave headroom and fill 80-90%), A the floor space
    and a_rack the white space per rack (aisles included), B the capex budget, F a fixed facility
    cost (e.g. an owned build at USD/MW of critical load, Cushman & Wakefield 2025) and C_rack the
    capex per rack (hardware, any per-rack liquid retrofit, and per GPU what a caller adds:
    econ.racks.capex_per_rack). Placed racks draw racks * kW_rack of IT power and racks * kW_rack * PUE
    at the meter.

    kW_rack in the power limit and the power drawn is `it_kw_per_rack` where given: what a placed rack
    adds to the hall's IT load, which exceeds the rack itself by its share of the scale-out network
    outside it (models/racks.toml: GB200 NVL72 120 + 14.64 = 134.64 kW, 72 x the all-in 1.87 kW).
    The hall's kW-per-rack limit is a density limit and is checked against `kw_per_rack`, the
    physical rack.

    Parameters
    ----------
    power_mw : array (n,)  power budget [MW], on `power_basis`
    pue : array (n,)  [ratio], >= 1
    kw_per_rack : array (n,)  IT power of the physical rack at full load, checked against the
        hall's kW-per-rack limit [kW/rack]
    gpus_per_rack : array (n,)  [GPUs/rack]
    power_basis : str or array (n,)  'it' (critical load) or 'utility' (at the meter)
    m2_per_rack : array (n,)  white space per rack incl. aisles; needed when floor_m2 is given [m²]
    floor_m2 : array (n,)  white space available; inf = unlimited [m²]
    capex_budget_usd : array (n,)  inf = unlimited [USD]
    capex_usd_per_rack : array (n,)  needed when a budget is given [USD/rack]
    fixed_capex_usd : array (n,)  cost paid before any rack, counted against the budget [USD]
    hall_max_kw_per_rack : array (n,)  inf or NaN = no limit [kW/rack]
    rack_cooling, hall_cooling : str or int arrays (n,), optional  see econ.facility
    strict : bool  raise SizingError where not one rack fits (else report 0 racks)
    names : sequence of str, optional  labels of the rows in messages
    it_kw_per_rack : array (n,), optional  IT load a placed rack adds to the hall, for the power
        limit and the power drawn; default `kw_per_rack` [kW/rack]
    figures : sequence of str, optional  which figure each row's `kw_per_rack` is, named where
        a rack is above the hall's limit (econ.facility.over_limit_message)
    max_load_share : array (n,)  share of the IT budget the racks may draw at full load, in
        (0, 1] [ratio]

    Raises
    ------
    HallLimitError  a rack above the hall's limit, or a liquid rack in an air-only hall
    SizingError  invalid figures, or (strict) a hall that takes no rack
    """
    arrays = np.broadcast_arrays(
        *(
            np.atleast_1d(np.asarray(a, float))
            for a in (
                power_mw,
                pue,
                kw_per_rack,
                gpus_per_rack,
                m2_per_rack,
                floor_m2,
                capex_budget_usd,
                capex_usd_per_rack,
                fixed_capex_usd,
                hall_max_kw_per_rack,
                kw_per_rack if it_kw_per_rack is None else it_kw_per_rack,
                max_load_share,
            )
        )
    )
    (mw, pue_, kw_rack, gpus_rack, m2_rack, floor, budget, per_rack, fixed, hall_max, it_rack) = (
        arrays[:-1]
    )
    share = arrays[-1]
    n = mw.shape[0]
    basis = np.broadcast_to(_basis_codes(power_basis), (n,))
    label = _labeller(names, n)

    _require(mw > 0, mw, "power budget", "MW", "a power budget above 0", label)
    _check_racks(pue_, kw_rack, it_rack, gpus_rack, label)
    _check_share(share, label)
    floor_given = np.isfinite(floor)
    budget_given = np.isfinite(budget)
    _require(~floor_given | (floor >= 0), floor, "floor space", "m²", "0 or more", label)
    _require(~budget_given | (budget >= 0), budget, "capex budget", "USD", "0 or more", label)
    _require(
        ~floor_given | (m2_rack > 0),
        m2_rack,
        "m² per rack",
        "m²",
        "a floor area per rack above 0 when floor space is given",
        label,
    )
    _require(
        ~budget_given | (per_rack > 0),
        per_rack,
        "capex per rack",
        "USD",
        "a price per rack above 0 when a capex budget is given",
        label,
    )

    _check_hall(kw_rack, hall_max, rack_cooling, hall_cooling, names, figures, n)

    it_budget = it_budget_kw(mw, pue_, basis)
    loadable = it_budget * share
    by_limit = {
        "power": racks_within(loadable, it_rack),
        "floor": racks_within(np.where(floor_given, floor, np.inf), m2_rack),
        "budget": racks_within(np.where(budget_given, budget - fixed, np.inf), per_rack),
    }
    stacked = np.stack([by_limit[k] for k in LIMITS])
    racks = stacked.min(axis=0)
    binding = np.array(LIMITS, dtype=object)[np.argmin(stacked, axis=0)]

    if strict and (racks < 1).any():
        _raise_no_rack(
            racks,
            binding,
            it_budget,
            share,
            basis,
            mw,
            it_rack,
            pue_,
            floor,
            m2_rack,
            budget,
            fixed,
            per_rack,
            label,
        )

    it_kw, utility_kw = placed_power_kw(racks, it_rack, pue_)
    capex = np.where(budget_given | np.isfinite(per_rack), racks * per_rack + fixed, np.nan)
    # An exact fit leaves 0 in exact arithmetic and +-1e-12 in floating point (10 MW at the meter
    # / PUE 1.1 is 9,090.909... kW): residues within _EPS of the limit read 0, never -2.8e-14 kW.
    stranded_it = _snapped(loadable - it_kw, loadable)
    stranded_floor = _snapped(floor - racks * m2_rack, floor)
    stranded_budget = _snapped(budget - fixed - racks * per_rack, budget)
    return Sizing(
        racks=racks,
        gpus=racks * gpus_rack,
        it_kw=it_kw,
        utility_kw=utility_kw,
        floor_m2=racks * m2_rack,
        capex_usd=capex,
        binding_limit=binding,
        racks_by_limit=by_limit,
        it_budget_kw=it_budget,
        utility_budget_kw=it_budget * pue_,
        stranded_it_kw=stranded_it,
        stranded_utility_kw=stranded_it * pue_,
        stranded_floor_m2=np.where(floor_given, stranded_floor, np.nan),
        stranded_budget_usd=np.where(budget_given, stranded_budget, np.nan),
        power_basis=np.array(POWER_BASES, dtype=object)[basis],
    )


@dataclass(frozen=True)
class FleetHall:
    """The hall a number of GPUs needs: whole racks, their power, floor and capex. Arrays (n,).

    Attributes
    ----------
    racks : whole racks, ceil(GPUs / GPUs per rack) [racks]
    gpus : GPU positions in them, racks * GPUs per rack [GPUs]
    spare_gpus : positions beyond the GPUs asked for, 0 for a whole number of racks [GPUs]
    it_kw, utility_kw : full-load power of the racks (`placed_power_kw`), IT and at the meter [kW]
    floor_m2 : white space the racks take; NaN without m² per rack [m²]
    capex_usd : racks at their price plus the facility build; NaN without a price [USD]
    fixed_capex_usd : the facility build, USD per MW x the hall's IT MW [USD]
    hall_it_kw : the usable critical IT capacity the racks need, their IT kW / max load share [kW]
    """

    racks: np.ndarray
    gpus: np.ndarray
    spare_gpus: np.ndarray
    it_kw: np.ndarray
    utility_kw: np.ndarray
    floor_m2: np.ndarray
    capex_usd: np.ndarray
    fixed_capex_usd: np.ndarray
    hall_it_kw: np.ndarray


def hall_for_gpus(
    gpus,
    *,
    pue,
    kw_per_rack,
    gpus_per_rack,
    it_kw_per_rack=None,
    m2_per_rack=np.nan,
    capex_usd_per_rack=np.nan,
    facility_usd_per_mw=0.0,
    hall_max_kw_per_rack=np.inf,
    rack_cooling=None,
    hall_cooling=None,
    names=None,
    figures=None,
    max_load_share=1.0,
) -> FleetHall:
    """The racks, power, floor and capex a number of GPUs needs: `size_hall` the other way.

    racks = ceil(N / GPUs_rack)   (a part-filled rack takes a whole one: econ.density)
    P_IT, P_meter = placed_power_kw(racks, kW_rack, PUE);   P_hall = P_IT / s
    capex = racks * C_rack + F

    with s the max load share (size_hall) and F = USD/MW x P_hall / 1000, the build of a hall for
    the racks' IT load and its headroom. `size_hall` with P_hall as its IT budget places the
    same racks, and a power budget sized so holds at least N
    GPUs: the two directions agree to the rack.

    Parameters
    ----------
    gpus : array (n,)  GPUs to place, a whole number of at least 1 [GPUs]
    pue, kw_per_rack, gpus_per_rack, it_kw_per_rack, m2_per_rack, hall_max_kw_per_rack,
    rack_cooling, hall_cooling, names, figures : as `size_hall`
    capex_usd_per_rack : array (n,)  NaN = not priced [USD/rack]
    facility_usd_per_mw : array (n,)  owned build per MW of critical IT load [USD/MW]
    max_load_share : array (n,)  as `size_hall` [ratio]

    Raises
    ------
    HallLimitError  a rack above the hall's limit, or a liquid rack in an air-only hall
    SizingError  invalid figures
    """
    arrays = np.broadcast_arrays(
        *(
            np.atleast_1d(np.asarray(a, float))
            for a in (
                gpus,
                pue,
                kw_per_rack,
                gpus_per_rack,
                m2_per_rack,
                capex_usd_per_rack,
                facility_usd_per_mw,
                hall_max_kw_per_rack,
                kw_per_rack if it_kw_per_rack is None else it_kw_per_rack,
                max_load_share,
            )
        )
    )
    (wanted, pue_, kw_rack, gpus_rack, m2_rack, per_rack, usd_per_mw, hall_max, it_rack) = arrays[
        :-1
    ]
    share = arrays[-1]
    n = wanted.shape[0]
    label = _labeller(names, n)
    _require(
        np.isfinite(wanted) & (wanted >= 1) & (wanted == np.floor(wanted)),
        wanted,
        "GPUs",
        "",
        "a whole number of GPUs of at least 1",
        label,
    )
    _check_racks(pue_, kw_rack, it_rack, gpus_rack, label)
    _check_share(share, label)
    _require(
        np.isfinite(usd_per_mw) & (usd_per_mw >= 0),
        usd_per_mw,
        "facility build",
        "USD/MW",
        "0 or more",
        label,
    )
    _check_hall(kw_rack, hall_max, rack_cooling, hall_cooling, names, figures, n)
    racks = racks_in_service(wanted, gpus_rack)
    it_kw, utility_kw = placed_power_kw(racks, it_rack, pue_)
    hall_it_kw = it_kw / share
    fixed = usd_per_mw * hall_it_kw / KW_PER_MW
    return FleetHall(
        racks=racks,
        gpus=racks * gpus_rack,
        spare_gpus=racks * gpus_rack - wanted,
        it_kw=it_kw,
        utility_kw=utility_kw,
        floor_m2=racks * m2_rack,
        capex_usd=racks * per_rack + fixed,
        fixed_capex_usd=fixed,
        hall_it_kw=hall_it_kw,
    )


def _check_racks(pue, kw_rack, it_rack, gpus_rack, label) -> None:
    """SizingError where a PUE or a rack's figures cannot size a hall (both directions)."""
    _require(pue >= 1.0, pue, "PUE", "", _PUE_EXPECTED, label)
    _require(kw_rack > 0, kw_rack, "kW per rack", "kW", "a rack power above 0", label)
    _require(
        it_rack >= kw_rack,
        it_rack,
        "IT kW per rack",
        "kW",
        "at least the rack's own kW per rack (the rack plus its share of the hall's IT load)",
        label,
    )
    _require(
        (gpus_rack >= 1) & (gpus_rack == np.floor(gpus_rack)),
        gpus_rack,
        "GPUs per rack",
        "",
        "a whole number of at least 1",
        label,
    )


def _check_share(share, label) -> None:
    """SizingError where a load share is not in (0, 1]."""
    _require(
        (share > 0) & (share <= 1),
        share,
        "max load share",
        "",
        "a share of the IT capacity above 0 and at most 1",
        label,
    )


def _check_hall(kw_rack, hall_max, rack_cooling, hall_cooling, names, figures, n) -> None:
    """HallLimitError where the hall cannot take the rack (econ.facility.check_racks_fit_hall)."""
    check_racks_fit_hall(
        kw_rack,
        np.where(np.isnan(hall_max), np.inf, hall_max),
        _codes(rack_cooling, RACK_COOLING, "rack cooling", n),
        _codes(hall_cooling, HALL_COOLING, "hall cooling", n),
        names=list(names) if names is not None else None,
        figures=figures,
    )


_PUE_EXPECTED = (
    "a PUE greater than or equal to 1: PUE is total facility power over IT power "
    "(The Green Grid WP#49)"
)


def _snapped(left, limit):
    """What a limit leaves unused, 0 where within _EPS of the limit (a floating-point residue)."""
    # a limit not given (inf) snaps nothing; its stranded figure is masked to NaN by the caller
    return snap_to_zero(left, _EPS * np.abs(np.where(np.isfinite(limit), limit, 0.0)))


def _labeller(names, n):
    def label(i: int) -> str:
        if names is not None:
            return f"{names[i]}: "
        return f"row {i}: " if n > 1 else ""

    return label


def _require(ok, values, what, unit, expected, label) -> None:
    bad = np.flatnonzero(~np.asarray(ok))
    if bad.size:
        i = int(bad[0])
        unit_text = f" {unit}" if unit else ""
        more = f" (and {bad.size - 1} more rows)" if bad.size > 1 else ""
        raise SizingError(
            f"{label(i)}{what} is {values[i]:g}{unit_text}; expected {expected}{more}"
        )


def _codes(values, choices, what, n):
    if values is None:
        return None
    array = np.atleast_1d(np.asarray(values))
    if array.dtype.kind not in "iu":
        unknown = sorted({str(v) for v in array.ravel()} - set(choices))
        if unknown:
            raise SizingError(
                f"{what} {unknown[0]!r} is not known; expected one of {', '.join(choices)}"
            )
        array = np.array([choices.index(str(v)) for v in array.ravel()])
    return np.broadcast_to(array, (n,))


def _raise_no_rack(
    racks,
    binding,
    it_budget,
    share,
    basis,
    mw,
    kw_rack,
    pue,
    floor,
    m2_rack,
    budget,
    fixed,
    per_rack,
    label,
):
    i = int(np.flatnonzero(racks < 1)[0])
    limit = binding[i]
    if limit == "power":
        on = POWER_BASES[int(basis[i])]
        where = "of IT load" if on == "it" else "at the utility meter"
        # the racks may load `share` of the IT power, not all of it: name both, so that the
        # message does not read "10 MW of IT load gives 100.0 kW" at a share of 0.01
        loaded = (
            f", {it_budget[i] * share[i]:,.1f} kW of it at a max load share of {share[i]:g},"
            if share[i] < 1
            else ","
        )
        detail = (
            f"a power budget of {mw[i]:,g} MW {where} gives {it_budget[i]:,.1f} kW of IT "
            f"power{loaded} below one rack of {kw_rack[i]:g} kW"
        )
        if on == "utility":
            detail += f" at PUE {pue[i]:g} ({kw_rack[i] * pue[i]:,.1f} kW at the meter)"
        expected = "a power budget of at least one rack" + (
            " at that share" if share[i] < 1 else ""
        )
    elif limit == "floor":
        detail = f"floor space of {floor[i]:g} m² is below one rack's {m2_rack[i]:g} m²"
        expected = "floor space for at least one rack"
    else:
        if budget[i] < fixed[i]:
            detail = (
                f"a capex budget of {_usd(budget[i])} USD does not cover the fixed facility cost "
                f"of {_usd(fixed[i])} USD"
            )
        else:
            detail = (
                f"a capex budget of {_usd(budget[i])} USD leaves {_usd(budget[i] - fixed[i])} USD "
                f"for racks, below the cost of one rack ({_usd(per_rack[i])} USD)"
            )
        expected = "a budget that buys at least one rack"
    raise SizingError(f"{label(i)}{detail}; expected {expected}")


__all__ = [
    "LIMITS",
    "POWER_BASES",
    "FleetHall",
    "Sizing",
    "SizingError",
    "hall_for_gpus",
    "it_budget_kw",
    "placed_power_kw",
    "racks_within",
    "size_hall",
]


def _usd(value: float) -> str:
    """An amount in a message, to the cent (a budget a cent short of a rack must not read as the
    rack's price), and in exponent form where the digits would run past a quadrillion."""
    return f"{value:,.2f}" if abs(value) < 1e15 else f"{value:.6g}"
