"""Rack figures per hardware key (models/racks.toml) and the sizing of a hall for one of them.

The library side of `econ size`: `load_racks` reads and checks the rack catalog with its sources,
`size` sizes a hall from a power budget, or the hall a number of GPUs needs, with econ.sizing and
returns a JSON-ready result.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from econ.bounds import bounds_words, within_bounds
from econ.catalog import catalog_cache, models_dir
from econ.errors import InputError
from econ.facility import HALL_COOLING, HallLimitError
from econ.scenario.power_models import MAX_KW_PER_RACK  # (one bound: catalog, scenario, size)
from econ.sizing import LIMITS, hall_for_gpus, size_hall
from econ.strict_json import FLOAT_MAX

if TYPE_CHECKING:
    from econ.scenario.power_models import Power

COOLING = ("air", "liquid")
"""Rack cooling types, as in models/racks.toml."""
MAX_MW = 1_000_000.0
"""The largest power budget `size` takes [MW]: 1 TW, more than every data centre draws today."""
RACK_UNITS = 48
"""Height of the tallest racks in common use [U] (42U is the usual one)."""
MIN_UNITS_PER_SYSTEM = 4
"""Height of the most compact 8-GPU servers, liquid-cooled HGX systems [U] (air-cooled ones take
8U to 10U)."""
MAX_SYSTEMS_PER_RACK = RACK_UNITS // MIN_UNITS_PER_SYSTEM
"""The most 8-GPU systems `size --systems-per-rack` takes: 12 in a 48U rack at 4U each. The rack
catalog gives no height per system, so this bounds every hardware rather than fitting one."""
MAX_GPUS_PER_RACK = 720
"""The most GPUs a catalog rack holds: ten times the 72 of an NVL72, the largest in the catalog."""
MAX_M2_PER_RACK = 28.0
"""The most white space a catalog rack takes [m²]: ten times the 2.8 m² upper end of the industry
estimate of 25-30 sq ft per rack including aisles (models/racks.toml m2_per_rack)."""
MAX_USD_PER_RACK = 50e6
"""The highest price per rack, or per rack's liquid retrofit, the catalog takes [USD]: ten times
the 5 million some quote for a GB200 NVL72 rack (models/reference_figures.csv)."""
MAX_USD_PER_GPU = 1e6
"""The highest network or installation price per GPU the catalog and `size` take [USD]: about ten
times the 47,000-52,000 USD all-in capex of an H100 with its InfiniBand fabric
(models/reference_figures.csv)."""


class RackCatalogError(InputError):
    """models/racks.toml is missing, malformed, or lacks a figure a command needs."""


@dataclass(frozen=True)
class RackSpec:
    """One hardware key's rack: GPUs, power, cooling, floor, price, and the source of each figure."""

    key: str
    name: str
    gpus_per_system: int
    systems_per_rack: int
    gpus_per_rack: int
    kw_per_rack: float
    kw_per_gpu_all_in: float
    kw_per_gpu_definition: str
    cooling: str
    m2_per_rack: float
    network_kw_per_rack: float = 0.0
    kw_per_system: float | None = None
    capex_usd_per_rack: float | None = None
    liquid_cooling_usd_per_rack: float | None = None
    networking_usd_per_gpu: float | None = None
    installation_usd_per_gpu: float | None = None
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def it_kw_per_rack(self) -> float:
        """What a placed rack adds to the hall's IT load [kW/rack]: the physical rack and its share
        of the scale-out network outside it (models/racks.toml network_kw_per_rack), the one
        boundary of every rack in the catalog (GB200 NVL72: 120 + 14.64 = 134.64 kW)."""
        # rounded so that 40.8 + 6.52 reads 47.32, not 47.319999999999993
        return round(self.kw_per_rack + self.network_kw_per_rack, 9)


@dataclass(frozen=True)
class RackCatalog:
    racks: dict[str, RackSpec]
    halls: dict[str, dict]

    def get(self, key: str) -> RackSpec:
        """The rack of hardware `key`, or RackCatalogError naming the keys: the one meant where
        the key differs only in case or '_' for '-' (GB300_NVL72), the closest otherwise
        (econ.text.did_you_mean, as scenario fields), and why where the hardware catalog knows
        the key but the rack catalog has no power for it (mi300x)."""
        if key in self.racks:
            return self.racks[key]
        from econ.hardware import catalog_keys
        from econ.text import clipped, did_you_mean

        expected = f"expected one of {', '.join(sorted(self.racks))}"
        if key in catalog_keys():
            raise RackCatalogError(
                f"hardware {key!r} is in models/hardware.toml, but the rack catalog "
                "(models/racks.toml) has no system or rack power for it: the reference data "
                f"holds none; {expected}"
            )
        written = key.strip().lower().replace("_", "-")
        hint = f"did you mean {written!r}? " if written in self.racks else ""
        hint = hint or did_you_mean(written, self.racks)
        raise RackCatalogError(
            f"hardware {clipped(key)!r} has no rack figures in models/racks.toml; {hint}{expected}"
        )


_REQUIRED = {
    "name": str,
    "gpus_per_system": int,
    "systems_per_rack": int,
    "gpus_per_rack": int,
    "kw_per_rack": float,
    "network_kw_per_rack": float,
    "kw_per_gpu_all_in": float,
    "kw_per_gpu_definition": str,
    "cooling": str,
    "m2_per_rack": float,
}
_OPTIONAL = (
    "kw_per_system",
    "capex_usd_per_rack",
    "liquid_cooling_usd_per_rack",
    "networking_usd_per_gpu",
    "installation_usd_per_gpu",
)
_DEFINITIONS = ("chip_plus_host", "chip_only", "utility_meter")


def _bounds() -> dict[str, tuple[dict[str, float], str]]:
    """Each numeric catalog field's bounds and unit: finite, positive (a rack's network share may
    be 0), and no larger than a figure ten times today's densest (the MAX_ constants above)."""
    from econ.scenario.power_models import MAX_KW_PER_GPU

    kw = ({"gt": 0, "le": MAX_KW_PER_RACK}, " kW")
    return {
        "gpus_per_system": ({"ge": 1, "le": MAX_GPUS_PER_RACK}, " GPUs"),
        "systems_per_rack": ({"ge": 1, "le": MAX_SYSTEMS_PER_RACK}, " systems"),
        "gpus_per_rack": ({"ge": 1, "le": MAX_GPUS_PER_RACK}, " GPUs"),
        "kw_per_rack": kw,
        "kw_per_system": kw,
        "legacy_max_kw_per_rack": kw,
        "max_kw_per_rack": kw,
        "network_kw_per_rack": ({"ge": 0, "le": MAX_KW_PER_RACK}, " kW"),
        "kw_per_gpu_all_in": ({"gt": 0, "le": MAX_KW_PER_GPU}, " kW per GPU"),
        "m2_per_rack": ({"gt": 0, "le": MAX_M2_PER_RACK}, " m²"),
        "capex_usd_per_rack": ({"gt": 0, "le": MAX_USD_PER_RACK}, " USD"),
        "liquid_cooling_usd_per_rack": ({"gt": 0, "le": MAX_USD_PER_RACK}, " USD"),
        "networking_usd_per_gpu": ({"ge": 0, "le": MAX_USD_PER_GPU}, " USD per GPU"),
        "installation_usd_per_gpu": ({"ge": 0, "le": MAX_USD_PER_GPU}, " USD per GPU"),
    }


def _checked_number(where: str, name: str, value, kind: type = float) -> float | int:
    """`value` of catalog field `name` if it is a finite number of `kind` within the field's
    bounds; else RackCatalogError naming the file, rack, field, value and what was expected."""
    bounds, unit = _bounds()[name]
    number_words = "a whole number" if kind is int else "a number"
    words = f"{number_words} {bounds_words(bounds, '{:,g}'.format)}{unit}"
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int and isinstance(value, float):
        number = False
    if not number or not math.isfinite(value) or not within_bounds(value, bounds):
        raise RackCatalogError(f"{where}.{name} = {value!r}: expected {words}")
    return value if kind is int else float(value)


def load_racks(path: str | Path | None = None) -> RackCatalog:
    """Read and check models/racks.toml (or `path`); errors name the file, key and field.

    Read once per path (as the hardware catalog), and again once models/ has changed
    (econ.catalog.catalog_cache): callers must not change it."""
    return _load_racks(str(Path(path) if path is not None else models_dir() / "racks.toml"))


@catalog_cache(maxsize=8)
def _load_racks(path: str) -> RackCatalog:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RackCatalogError(f"{path}: rack catalog not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RackCatalogError(f"{path}: not valid TOML: {exc}") from exc
    racks = {}
    for key, row in data.get("racks", {}).items():
        racks[key] = _rack(path, key, row)
    halls = data.get("halls", {})
    for cooling in HALL_COOLING:
        _hall_pue(path, cooling, halls.get(cooling, {}).get("pue"))
    air = halls["air"]
    for name in ("legacy_max_kw_per_rack", "max_kw_per_rack"):
        limit = air.get(name)
        if limit is not None:
            _checked_number(f"{path}: halls.air", name, limit)
            if not air.get("sources", {}).get(name):
                raise RackCatalogError(f"{path}: halls.air.sources: expected a source for {name}")
    legacy, most = air.get("legacy_max_kw_per_rack"), air.get("max_kw_per_rack")
    if legacy is not None and most is not None and legacy > most:
        raise RackCatalogError(
            f"{path}: halls.air.legacy_max_kw_per_rack = {legacy!r}: expected at most "
            f"halls.air.max_kw_per_rack = {most!r} kW (the common limit of legacy air halls "
            "cannot exceed the densest rack air cools)"
        )
    return RackCatalog(racks=racks, halls=halls)


def _hall_pue(path: Path, cooling: str, pue) -> None:
    """RackCatalogError unless a hall's PUE is a finite number within the bounds a scenario file
    takes for power.pue (econ.scenario: the same bounds, not a copy of them)."""
    from econ.scenario.power_models import Power
    from econ.scenario.section import field_bounds

    bounds = field_bounds(Power, "pue")
    number = isinstance(pue, int | float) and not isinstance(pue, bool)
    if not number or not math.isfinite(pue) or not within_bounds(pue, bounds):
        raise RackCatalogError(
            f"{path}: halls.{cooling}.pue = {pue!r}: expected a PUE {bounds_words(bounds)}, as "
            "power.pue takes in a scenario file"
        )


def cooling_warning(hardware: str, rack_cooling: str, catalog: RackCatalog | None = None):
    """A warning where a scenario's rack cooling contradicts its rack catalog, either way, else
    None (a hardware key without rack figures: nothing to compare).

    Air for racks that need liquid: they cannot be cooled so. Liquid for air-cooled racks: right
    only for a liquid-cooled variant (its price and power may differ from the catalog's); air
    racks counted as liquid take a liquid hall's PUE without the air handling they need."""
    rack = (catalog or load_racks()).racks.get(hardware)
    if rack is None or rack.cooling == rack_cooling:
        return None
    source = rack.sources.get("cooling", "models/racks.toml")
    if rack_cooling == "air":
        return (
            f"facility.rack_cooling is 'air' but {hardware} racks are liquid-cooled "
            f"({source}); set facility.rack_cooling = 'liquid' and a hall_cooling with facility "
            "water ('liquid', or 'air_retrofit_liquid' with its retrofit capex)"
        )
    return (
        f"facility.rack_cooling is 'liquid' but {hardware} racks are air-cooled ({source}); "
        "right only for a liquid-cooled variant of the system (check its price and power "
        "against the catalog's), otherwise set facility.rack_cooling = 'air' and a PUE that "
        "counts the air handling air-cooled racks need"
    )


def hall_cooling_warning(
    rack: RackSpec, hall_cooling: str, pue_source: str, catalog: RackCatalog | None = None
) -> str | None:
    """A warning where `size` puts air-cooled racks in a liquid hall, else None: the liquid
    hall's PUE assumes the heat leaves in water, and air-cooled servers still need fans and
    air handlers (the air hall's PUE is the catalog's figure for them)."""
    if rack.cooling != "air" or hall_cooling != "liquid":
        return None
    halls = (catalog or load_racks()).halls
    source = rack.sources.get("cooling", "models/racks.toml")
    pue = (
        f"the liquid hall's PUE {halls['liquid']['pue']:g} (racks.toml halls.liquid.pue) "
        "assumes the heat leaves in water, but air-cooled racks need air handling as in an air "
        f"hall (PUE {halls['air']['pue']:g}); expected a PUE for this hall (command line: "
        "--pue) or an air hall"
        if pue_source != "--pue"
        else "the PUE given should count the air handling they need"
    )
    return f"{rack.key}: air-cooled racks ({source}) in a liquid-cooled hall; {pue}"


def air_density_warning(
    rack: RackSpec,
    hall_cooling: str,
    hall_max_kw_per_rack: float | None = None,
    catalog: RackCatalog | None = None,
    scenario: bool = False,
) -> str | None:
    """A warning where an air-cooled rack is denser than air cools, else None.

    Two figures of models/racks.toml halls.air, each with its source. Above max_kw_per_rack (58
    kW: NVIDIA's air-cooled DGX B300 layout, about 56 kW in a rack, the densest air-cooled rack
    a maker's reference layout describes) the warning stands whatever hall limit is given (a
    limit says what the hall's power feed takes, not that air cools the rack) and in any hall: a
    liquid hall's water reaches liquid-cooled racks, while an air-cooled server's heat leaves in
    air, so the remedy is fewer systems per rack, or a liquid-cooled variant of the server, not
    another hall. Above legacy_max_kw_per_rack (20 kW, what air halls commonly cool) it warns, in
    an air hall only, unless a hall limit (`hall_max_kw_per_rack`) says what this hall takes,
    which is then enforced instead. Warnings, not refusals: neither figure is a physical limit. A
    liquid-cooled rack gets neither. For a scenario's rack (`scenario`, `rack_fit_warnings`) only
    the first applies, with the scenario's fields as the remedy: the ready-made air halls hold
    40.8 kW racks at 20 kW's common limit by design.
    """
    if rack.cooling != "air":
        return None
    air = (catalog or load_racks()).halls["air"]
    sources = air.get("sources", {})
    most = air.get("max_kw_per_rack")
    if most is not None and rack.kw_per_rack > most:
        if hall_cooling == "air":
            where = f"a {rack.kw_per_rack:g} kW rack in an air-cooled hall"
            why = (
                f"; the hall limit of {hall_max_kw_per_rack:g} kW per rack given says what the "
                "hall feeds, not that air cools the rack"
                if hall_max_kw_per_rack is not None
                else ""
            )
        else:
            where = (
                f"a {rack.kw_per_rack:g} kW air-cooled rack in "
                f"{_HALL_WORDS.get(hall_cooling, hall_cooling)}"
            )
            why = (
                "; the hall's water cools liquid-cooled racks, not air-cooled servers, whose "
                "heat still leaves in air"
            )
        fit = _systems_that_fit(rack, most, scenario).removeprefix(", or ")
        # the catalog holds no liquid-cooled variant of an air-cooled server; a scenario can
        # state one (cooling_warning then asks for its price and power)
        remedy = (
            f" ({fit + ', or ' if fit else ''}facility.rack_cooling = 'liquid' in a liquid-cooled "
            "hall for a liquid-cooled variant of the server)"
            if scenario
            else f" (command line: {fit})"
            if fit
            else ""
        )
        return (
            f"{rack.key}: {where}, above the {most:g} kW of the densest air-cooled rack a maker's "
            "reference layout describes (models/racks.toml halls.air.max_kw_per_rack: "
            f"{sources.get('max_kw_per_rack', '')}){why}; expected fewer systems per rack{remedy}"
        )
    if scenario or hall_cooling != "air":
        return None
    limit = air.get("legacy_max_kw_per_rack")
    if hall_max_kw_per_rack is not None or limit is None or rack.kw_per_rack <= limit:
        return None
    source = sources.get("legacy_max_kw_per_rack", "")
    return (
        f"{rack.key}: a {rack.kw_per_rack:g} kW rack in an air-cooled hall, above the "
        f"{limit:g} kW per rack that air halls commonly cool (models/racks.toml "
        f"halls.air.legacy_max_kw_per_rack{': ' + source if source else ''}); expected a hall "
        f"rated for it (containment, rear-door heat exchangers: give its limit per rack) or a "
        f"liquid-cooled hall (command line: --hall-max-kw-per-rack"
        f"{_systems_that_fit(rack, limit)})"
    )


def retrofit_power_warning(
    rack: RackSpec,
    hall_cooling: str,
    hall_max_kw_per_rack: float | None = None,
    catalog: RackCatalog | None = None,
) -> str | None:
    """A warning where a liquid retrofit puts racks denser than air halls are commonly built for
    (models/racks.toml halls.air.legacy_max_kw_per_rack, 20 kW) in an air hall, else None.

    The retrofit (liquid_cooling_usd_per_rack) brings water to the racks, not power: a 132 kW
    GB300 NVL72 rack in such a hall needs its power distribution rebuilt too, which nothing
    prices (docs/ready_made.md). As for an air-cooled rack above that figure
    (`air_density_warning`), a hall limit given (`hall_max_kw_per_rack`) says what this hall
    feeds, and is enforced instead."""
    if hall_cooling != "air_retrofit_liquid" or hall_max_kw_per_rack is not None:
        return None
    air = (catalog or load_racks()).halls["air"]
    limit = air.get("legacy_max_kw_per_rack")
    if limit is None or rack.kw_per_rack <= limit:
        return None
    source = air.get("sources", {}).get("legacy_max_kw_per_rack", "")
    return (
        f"{rack.key}: a {rack.kw_per_rack:g} kW rack in an air hall retrofitted for liquid "
        f"cooling, above the {limit:g} kW per rack air halls are commonly built for "
        f"(models/racks.toml halls.air.legacy_max_kw_per_rack{': ' + source if source else ''}): "
        "the retrofit brings water to the racks, not power, so the hall's power distribution "
        "needs rebuilding for them, which the capex does not count; expected a hall rated for "
        "the rack (command line: --hall-max-kw-per-rack) or that rebuild priced in "
        "--facility-usd-per-mw"
    )


_HALL_WORDS = {
    "liquid": "a liquid-cooled hall",
    "air_retrofit_liquid": "an air hall retrofitted for liquid racks",
}
"""How `air_density_warning` names a hall with facility water."""


def _systems_that_fit(rack: RackSpec, limit_kw: float, scenario: bool = False) -> str:
    """', or --systems-per-rack N' (a scenario's: ', or fleet.gpus_per_rack = G') with the most of
    the rack's 8-GPU systems within `limit_kw`, or '' (a rack-scale system, or one system above
    it)."""
    if rack.kw_per_system is None or rack.kw_per_system > limit_kw:
        return ""
    systems = int(limit_kw // rack.kw_per_system + 1e-9)
    if scenario:
        return f", or fleet.gpus_per_rack = {systems * rack.gpus_per_system}"
    return f", or --systems-per-rack {systems}"


def too_many_systems(systems: int) -> str | None:
    """Why `systems` 8-GPU systems do not fit one rack, or None: the bound `size
    --systems-per-rack` refuses and a scenario's fleet.gpus_per_rack is warned at."""
    if systems <= MAX_SYSTEMS_PER_RACK:
        return None
    return (
        f"{systems} systems take at least {systems * MIN_UNITS_PER_SYSTEM}U at "
        f"{MIN_UNITS_PER_SYSTEM}U each (the most compact 8-GPU servers), more than a "
        f"{RACK_UNITS}U rack, the tallest in common use; expected at most {MAX_SYSTEMS_PER_RACK}"
    )


def rack_fit_warnings(
    hardware: str,
    gpus_per_rack: int,
    hall_cooling: str,
    hall_max_kw_per_rack: float | None = None,
    catalog: RackCatalog | None = None,
    rack_cooling: str | None = None,
) -> tuple[str, ...]:
    """What a scenario's fleet.gpus_per_rack contradicts in the rack catalog, as `econ size`
    bounds and warns of it (warnings: the scenario is projected): a rack-scale system split or
    doubled, a rack of part of a system, more systems than a rack holds (`too_many_systems`), an
    air-cooled rack above the densest air cools (`air_density_warning`; `rack_cooling`, the
    scenario's facility.rack_cooling, says whether its racks are air-cooled, the catalog's
    cooling where not given). None for hardware without rack figures."""
    rack = (catalog or load_racks()).racks.get(hardware)
    if rack is None or (gpus_per_rack == rack.gpus_per_rack and rack.kw_per_system is None):
        return ()
    if rack_cooling is not None:
        rack = replace(rack, cooling=rack_cooling)
    given = f"fleet.gpus_per_rack = {gpus_per_rack:,}"
    if rack.kw_per_system is None:
        return (
            f"{given}, but {hardware} is a rack-scale system of {rack.gpus_per_rack} GPUs per "
            f"rack ({rack.name}, models/racks.toml): it is not split across racks nor two put in "
            f"one; racks, power per rack and revenue per rack-year count racks of "
            f"{gpus_per_rack:,}; expected fleet.gpus_per_rack = {rack.gpus_per_rack}",
        )
    size = rack.gpus_per_system
    if gpus_per_rack % size:
        return (
            f"{given} is not a whole number of {hardware} systems ({size} GPUs each, "
            f"models/racks.toml gpus_per_system); expected a multiple of {size}",
        )
    systems = gpus_per_rack // size
    found = []
    too_many = too_many_systems(systems)
    if too_many:
        found.append(f"{given} is {systems} {hardware} systems of {size} GPUs: {too_many}")
    dense = air_density_warning(
        with_systems_per_rack(rack, systems), hall_cooling, hall_max_kw_per_rack, catalog, True
    )
    if dense:
        found.append(f"{given}: {dense}")
    return tuple(found)


def density_kw_per_rack(
    hardware: str | None,
    gpus_per_rack: int,
    kw_per_rack_from_gpus: float,
    catalog: RackCatalog | None = None,
) -> tuple[float, str]:
    """The kW per rack a hall's kW-per-rack limit is checked against, and which figure it is.

    The limit is what a rack position can feed and cool, so it applies to the physical rack. A
    scenario's power per GPU can carry a share of networking outside the rack (GB200 NVL72:
    72 x 1.87 kW = 134.64 kW against the 120 kW rack). Where the hardware's rack is in the catalog
    with the same GPUs per rack (or, for hardware sold as systems, a whole number of systems, as
    `econ size --systems-per-rack`), that share and no more is taken off: up to the rack's IT load
    with its network share (`RackSpec.it_kw_per_rack`) the catalog's rack is checked, as `econ
    size` checks it; above it, GPUs per rack x IT kW per GPU less the rack's network share
    (network_kw_per_rack), so that a power per GPU above the catalog's is checked, not absorbed
    into the catalog's rack (B200: 16 x 2.35 kW = 37.6 kW, 34.34 kW without its 3.26 kW share,
    against a 30 kW hall). Otherwise GPUs per rack x IT kW per GPU. Energy keeps the per-GPU
    figure.

    Parameters
    ----------
    hardware : str or None  the scenario's fleet.hardware
    gpus_per_rack : int  the scenario's fleet.gpus_per_rack [GPUs/rack]
    kw_per_rack_from_gpus : float  GPUs per rack x IT kW per GPU [kW/rack]
    """
    rack = (catalog or load_racks()).racks.get(hardware) if hardware else None
    figure = "models/racks.toml kw_per_rack"
    if (
        rack is not None
        and rack.gpus_per_rack != gpus_per_rack
        and rack.kw_per_system is not None
        and gpus_per_rack % rack.gpus_per_system == 0
    ):
        systems = gpus_per_rack // rack.gpus_per_system
        rack = with_systems_per_rack(rack, systems)
        figure = f"models/racks.toml kw_per_system x {systems}"
    from_gpus = f"{gpus_per_rack} GPUs x IT kW per GPU"
    if rack is None or rack.gpus_per_rack != gpus_per_rack:
        return kw_per_rack_from_gpus, from_gpus
    # (1e-9: 72 x 1.87 is 134.64000000000001, the catalog's own figure)
    if kw_per_rack_from_gpus > rack.it_kw_per_rack * (1 + 1e-9):
        # rounded as it_kw_per_rack is: 37.6 - 3.26 reads 34.34
        kw = round(kw_per_rack_from_gpus - rack.network_kw_per_rack, 9)
        return kw, (
            f"{from_gpus} = {kw_per_rack_from_gpus:g} kW, less the {hardware} rack's "
            f"{rack.network_kw_per_rack:g} kW share of the scale-out network outside it, "
            f"models/racks.toml network_kw_per_rack; the catalog's rack draws "
            f"{rack.kw_per_rack:g} kW"
        )
    if kw_per_rack_from_gpus > rack.kw_per_rack:
        return rack.kw_per_rack, physical_rack_figure(
            hardware, figure, rack.kw_per_rack, kw_per_rack_from_gpus
        )
    return kw_per_rack_from_gpus, from_gpus


def physical_rack_figure(
    hardware: str, source: str, kw_per_rack: float, kw_per_rack_from_gpus: float
) -> str:
    """Which figure a physical rack's kW is, as a hall-limit refusal names it (`econ size` and a
    scenario's check alike): the rack and the catalog field it comes from, and the GPUs' power
    where that is higher ("134.64 kW from the GPUs' power includes networking outside it")."""
    text = f"the physical {hardware} rack, {source}"
    if kw_per_rack_from_gpus > kw_per_rack:
        text += (
            f"; {kw_per_rack_from_gpus:g} kW from the GPUs' power includes networking outside it"
        )
    return text


def can_retrofit(rack_cooling: str, hall_cooling: str) -> bool:
    """Whether a liquid retrofit applies: liquid-cooled racks in an air hall."""
    return rack_cooling == "liquid" and hall_cooling == "air"


def whole_systems_warning(
    hardware: str, gpu_count: int, catalog: RackCatalog | None = None
) -> str | None:
    """A warning where fleet.gpu_count is not a whole number of the hardware's systems (72 GPUs
    of an NVL72 rack, 8 of an HGX server), else None (no rack figures: nothing to compare).

    A warning, not a refusal: capex is priced per GPU, so a fraction of a system costs its share,
    and per-GPU studies (one GPU, or the 64 of an NVL72 that an MLPerf run used) are legitimate;
    but a fleet cannot be bought so, and the warning names the whole counts on either side."""
    rack = (catalog or load_racks()).racks.get(hardware)
    if rack is None or gpu_count % rack.gpus_per_system == 0:
        return None
    size = rack.gpus_per_system
    below, above = gpu_count // size, gpu_count // size + 1
    counts = (
        f"{below * size:,} or {above * size:,} ({below:,} or {above:,} systems)"
        if below
        else f"{above * size:,} (1 system)"
    )
    return (
        f"fleet.gpu_count = {gpu_count} is not a whole number of {hardware} systems "
        f"({size} GPUs each, models/racks.toml gpus_per_system): {gpu_count / size:,.2f} systems, "
        f"the fraction priced at its share of a system; expected {counts}"
    )


POWER_DEPARTURE = 0.2
"""How far a scenario's IT power per GPU may depart from the rack catalog's before a warning
[fraction]. The ready-made cases' sourced figures are within 15% of it (gpt-oss-120b-b200's
SemiAnalysis all-in 1.71 kW, a typical load, against the catalog's 1.99125: the DGX B200 maximum
and its share of the scale-out network)."""


def power_warning(
    hardware: str, it_kw_per_gpu: float, catalog: RackCatalog | None = None
) -> str | None:
    """A warning where a scenario's IT power per GPU (on the chip-plus-host boundary) departs
    from the rack catalog's all-in figure for its hardware by more than POWER_DEPARTURE, else
    None (no rack figures: nothing to compare). The power bill and the colocation rent both
    scale with it, so a figure for the chip alone understates both."""
    rack = (catalog or load_racks()).racks.get(hardware)
    if rack is None:
        return None
    expected = rack.kw_per_gpu_all_in
    departure = it_kw_per_gpu / expected - 1.0
    if abs(departure) <= POWER_DEPARTURE:
        return None
    source = rack.sources.get("kw_per_gpu_all_in", "models/racks.toml")
    return (
        f"power.kw_per_gpu gives {it_kw_per_gpu:g} kW of IT load per GPU, "
        f"{abs(departure):.0%} {'below' if departure < 0 else 'above'} the {expected:g} kW the "
        f"rack catalog gives {hardware} (GPU with its share of the host and of the scale-out "
        f"network; {source}): the power "
        "bill and the colocation rent both scale with it; expected a figure near the catalog's "
        "unless measured on this fleet"
    )


def catalog_warnings(
    hardware: str, rack_cooling: str, gpu_count: int, power: Power
) -> tuple[str, ...]:
    """What a scenario row's hardware key, rack cooling, GPU count and power section contradict
    in the catalogs or leave out: a key outside the hardware catalog, rack cooling other than the
    rack catalog's, a GPU count that is not a whole number of systems, an IT power per GPU far
    from the catalog's, chip-only power with no host share. `econ validate` and projections
    both give these (econ.batch keys them by these four inputs)."""
    from econ.hardware import unknown_key_warning
    from econ.scenario.power_models import host_share_warning, it_kw_per_gpu

    found = (
        unknown_key_warning(hardware),
        cooling_warning(hardware, rack_cooling),
        whole_systems_warning(hardware, gpu_count),
        power_warning(hardware, it_kw_per_gpu(power)),
        host_share_warning(power),
    )
    return tuple(w for w in found if w)


def _rack(path: Path, key: str, row: dict) -> RackSpec:
    where = f"{path}: racks.{key}"
    values = {}
    for name, kind in _REQUIRED.items():
        value = row.get(name)
        if kind is str:
            if not isinstance(value, str):
                raise RackCatalogError(f"{where}.{name} = {value!r}: expected a str")
            values[name] = value
        else:
            values[name] = _checked_number(where, name, value, kind)
    for name in _OPTIONAL:
        value = row.get(name)
        values[name] = None if value is None else _checked_number(where, name, value)
    if values["cooling"] not in COOLING:
        raise RackCatalogError(
            f"{where}.cooling = {values['cooling']!r}: expected one of {', '.join(COOLING)}"
        )
    if values["kw_per_gpu_definition"] not in _DEFINITIONS:
        raise RackCatalogError(
            f"{where}.kw_per_gpu_definition = {values['kw_per_gpu_definition']!r}: expected one "
            f"of {', '.join(_DEFINITIONS)}"
        )
    if values["gpus_per_system"] * values["systems_per_rack"] != values["gpus_per_rack"]:
        raise RackCatalogError(
            f"{where}.gpus_per_rack = {values['gpus_per_rack']}: expected gpus_per_system x "
            f"systems_per_rack = {values['gpus_per_system'] * values['systems_per_rack']}"
        )
    if values["kw_per_system"] is not None and not math.isclose(
        values["kw_per_system"] * values["systems_per_rack"], values["kw_per_rack"], rel_tol=1e-6
    ):
        raise RackCatalogError(
            f"{where}.kw_per_rack = {values['kw_per_rack']}: expected kw_per_system x "
            f"systems_per_rack = {values['kw_per_system'] * values['systems_per_rack']:g}"
        )
    if values["kw_per_gpu_definition"] == "chip_plus_host":
        _check_boundary(where, values)
    sources = row.get("sources", {})
    required = ("kw_per_rack", "network_kw_per_rack", "kw_per_gpu_all_in", "cooling", "m2_per_rack")
    unsourced = [n for n in required if n not in sources] + [
        n for n in _OPTIONAL if values[n] is not None and n not in sources
    ]
    if unsourced:
        raise RackCatalogError(f"{where}.sources: expected a source for {', '.join(unsourced)}")
    return RackSpec(key=key, sources=dict(sources), **values)


BOUNDARY_ROUNDING = 1e-4
"""How far below the rack's IT load per GPU a catalog's kw_per_gpu_all_in may be [fraction]: the
figure written to a few decimals, rounded down (GB300 NVL72: 146.64 / 72 = 2.036667 as 2.03666)."""


def _check_boundary(where: str, values: dict) -> None:
    """RackCatalogError unless kw_per_gpu_all_in is the rack's IT load per GPU, (kw_per_rack +
    network_kw_per_rack) / gpus_per_rack, at most BOUNDARY_ROUNDING below it and never above: the
    one boundary of the catalog, so that a hall sized on the racks is not overdrawn by a fleet
    billed at the figure per GPU."""
    per_gpu = (values["kw_per_rack"] + values["network_kw_per_rack"]) / values["gpus_per_rack"]
    given = values["kw_per_gpu_all_in"]
    if per_gpu * (1 - BOUNDARY_ROUNDING) <= given <= per_gpu * (1 + 1e-12):
        return
    raise RackCatalogError(
        f"{where}.kw_per_gpu_all_in = {given!r}: expected (kw_per_rack + network_kw_per_rack) / "
        f"gpus_per_rack = ({values['kw_per_rack']:g} + {values['network_kw_per_rack']:g}) / "
        f"{values['gpus_per_rack']} = {per_gpu:.6g} kW per GPU (rounded down at most "
        f"{BOUNDARY_ROUNDING:.2%}), the boundary every rack in the catalog is on"
    )


_SYSTEMS_IN_NAME = re.compile(r",?\s*\d+\s+systems?\s+per\s+rack", re.I)


def rack_name(name: str, systems: int) -> str:
    """The catalog's rack name with its systems-per-rack count replaced by `systems` (appended when
    the name states none), so a label never contradicts the figures beside it."""
    count = f"{systems} system{'' if systems == 1 else 's'} per rack"
    if _SYSTEMS_IN_NAME.search(name):
        return _SYSTEMS_IN_NAME.sub(f", {count}", name, count=1)
    return f"{name}, {count}"


def with_systems_per_rack(rack: RackSpec, systems: int) -> RackSpec:
    """The same hardware with another number of systems per rack (power, the network share, price
    and the name's systems count follow it; the figure per GPU stays)."""
    if rack.kw_per_system is None:
        raise RackCatalogError(
            f"{rack.key} is a rack-scale system ({rack.gpus_per_rack} GPUs per rack); expected "
            "--systems-per-rack only for hardware sold as 8-GPU systems"
        )
    if systems < 1:
        raise RackCatalogError(f"--systems-per-rack = {systems}: expected 1 or more")
    scale = systems / rack.systems_per_rack
    return replace(
        rack,
        name=rack_name(rack.name, systems),
        systems_per_rack=systems,
        gpus_per_rack=rack.gpus_per_system * systems,
        kw_per_rack=rack.kw_per_system * systems,
        network_kw_per_rack=rack.network_kw_per_rack * scale,
        capex_usd_per_rack=None
        if rack.capex_usd_per_rack is None
        else rack.capex_usd_per_rack * scale,
        sources={
            **rack.sources,
            "systems_per_rack": f"--systems-per-rack {systems}",
            "kw_per_rack": f"derived: {systems} x {rack.kw_per_system:g} kW (kw_per_system)",
            "network_kw_per_rack": f"derived: {systems} / {rack.systems_per_rack} of the "
            f"catalog's {rack.network_kw_per_rack:g} kW ("
            + rack.sources.get("network_kw_per_rack", "models/racks.toml")
            + ")",
            **(
                {}
                if rack.capex_usd_per_rack is None
                else {
                    "capex_usd_per_rack": f"derived: {systems} / {rack.systems_per_rack} of the "
                    f"catalog's {rack.systems_per_rack}-system rack ("
                    + rack.sources.get("capex_usd_per_rack", "models/racks.toml")
                    + ")"
                }
            ),
        },
    )


@dataclass(frozen=True)
class _Hall:
    """A hall `size` sizes, as its options and the catalog set it up: the rack (with any systems
    per rack), the hall's cooling and PUE, the price per rack and what the limit is checked on."""

    rack: RackSpec
    hall_cooling: str
    pue: float
    pue_source: str
    price_per_rack: float  # all-in per placed rack (`capex_per_rack`); NaN where not priced [USD]
    retrofit_per_rack: float  # [USD]
    figure: str  # which figure the hall's limit is checked against, for its refusal
    rack_price: float = math.nan  # the rack and any retrofit, as priced [USD]
    networking_per_gpu: float = 0.0  # [USD/GPU]
    installation_per_gpu: float = 0.0  # [USD/GPU]
    capex_sources: dict[str, str] = field(default_factory=dict)  # what each price is, its source
    max_load_share: float = 1.0  # share of the IT budget the racks may draw at full load


def capex_per_rack(
    rack_usd: float,
    retrofit_usd_per_rack: float,
    gpus_per_rack: float,
    networking_usd_per_gpu: float,
    installation_usd_per_gpu: float,
) -> float:
    """What one placed rack costs [USD/rack]: the rack, its liquid retrofit, and per GPU the
    scale-out network and the installation, as a scenario's capex section prices a fleet:

        C_rack = rack + retrofit + GPUs_rack * (networking + installation)
    """
    per_gpu = networking_usd_per_gpu + installation_usd_per_gpu
    return rack_usd + retrofit_usd_per_rack + gpus_per_rack * per_gpu


def _hall(
    catalog: RackCatalog,
    hardware: str,
    cooling: str | None,
    retrofit_liquid: bool,
    pue: float | None,
    hall_max_kw_per_rack: float | None,
    capex_usd_per_rack: float | None,
    facility_usd_per_mw: float,
    systems_per_rack: int | None,
    networking_usd_per_gpu: float | None = None,
    installation_usd_per_gpu: float | None = None,
    max_load_share: float = 1.0,
) -> _Hall:
    """The hall both directions of `size` size, or InputError naming the option and what it
    takes."""
    rack = catalog.get(hardware)
    figure = "models/racks.toml kw_per_rack"
    if systems_per_rack is not None and systems_per_rack != rack.systems_per_rack:
        figure = f"models/racks.toml kw_per_system x {systems_per_rack}"
    if systems_per_rack is not None:
        too_many = too_many_systems(systems_per_rack)
        if rack.kw_per_system is not None and too_many:
            raise InputError(f"--systems-per-rack = {systems_per_rack}: {too_many}")
        rack = with_systems_per_rack(rack, systems_per_rack)
    hall = cooling or rack.cooling
    if retrofit_liquid and not can_retrofit(rack.cooling, hall):
        raise InputError(
            f"a liquid retrofit applies to liquid-cooled racks in an air hall; {hardware} racks are "
            f"{rack.cooling}-cooled and the hall is {hall}-cooled"
        )
    hall_cooling = "air_retrofit_liquid" if retrofit_liquid else hall
    if pue is None:
        pue, pue_source = catalog.halls[hall_cooling]["pue"], f"racks.toml halls.{hall_cooling}.pue"
    else:
        pue_source = "--pue"
    _check_hall_options(
        pue,
        pue_source,
        facility_usd_per_mw,
        capex_usd_per_rack,
        hall_max_kw_per_rack,
        max_load_share,
    )
    price = capex_usd_per_rack if capex_usd_per_rack is not None else rack.capex_usd_per_rack
    price_source = (
        "--capex-usd-per-rack"
        if capex_usd_per_rack is not None
        else rack.sources.get("capex_usd_per_rack", "models/racks.toml")
    )
    retrofit_per_rack = 0.0
    if retrofit_liquid:
        if rack.liquid_cooling_usd_per_rack is None:
            raise RackCatalogError(
                f"models/racks.toml has no liquid_cooling_usd_per_rack for {hardware}; expected "
                "one to price --retrofit-liquid"
            )
        retrofit_per_rack = rack.liquid_cooling_usd_per_rack
        retrofit_source = rack.sources.get("liquid_cooling_usd_per_rack", "models/racks.toml")
        price_source = (
            f"rack {_usd_words(price)} ({price_source}) + liquid retrofit "
            f"{_usd_words(retrofit_per_rack)} ({retrofit_source})"
            if price is not None
            else price_source
        )
    sources = {"capex_usd_per_rack": price_source}
    per_gpu = _per_gpu_prices(
        rack, hardware, networking_usd_per_gpu, installation_usd_per_gpu, sources
    )
    networking, installation = (
        per_gpu["networking_usd_per_gpu"],
        per_gpu["installation_usd_per_gpu"],
    )
    rack_price = np.nan if price is None else price + retrofit_per_rack
    return _Hall(
        rack=rack,
        hall_cooling=hall_cooling,
        pue=pue,
        pue_source=pue_source,
        price_per_rack=capex_per_rack(
            np.nan if price is None else price,
            retrofit_per_rack,
            rack.gpus_per_rack,
            networking,
            installation,
        ),
        retrofit_per_rack=retrofit_per_rack,
        figure=figure,
        rack_price=rack_price,
        networking_per_gpu=networking,
        installation_per_gpu=installation,
        capex_sources=sources,
        max_load_share=max_load_share,
    )


def _check_hall_options(
    pue, pue_source, facility_usd_per_mw, capex_usd_per_rack, hall_max_kw_per_rack, max_load_share
) -> None:
    """InputError naming the first of `size`'s hall options outside what it takes."""
    given = (
        ("--pue", pue),
        ("--facility-usd-per-mw", facility_usd_per_mw),
        ("--capex-usd-per-rack", capex_usd_per_rack),
        ("--hall-max-kw-per-rack", hall_max_kw_per_rack),
    )
    for name, value in given:
        if value is not None and not math.isfinite(value):
            raise InputError(f"{name} = {value}: expected a finite number")
    if pue_source == "--pue":
        _within_field_bounds("--pue", pue, "power.pue", "a PUE")
    if hall_max_kw_per_rack is not None:
        _within_field_bounds(
            "--hall-max-kw-per-rack",
            hall_max_kw_per_rack,
            "facility.hall_max_kw_per_rack",
            "a limit",
            " kW per rack",
            "; leave the option out for a hall without a limit",
        )
    if facility_usd_per_mw < 0:
        raise InputError(
            f"--facility-usd-per-mw = {facility_usd_per_mw:g}: expected 0 or more (negative "
            "prices are not supported)"
        )
    if capex_usd_per_rack is not None and not 0 < capex_usd_per_rack <= MAX_USD_PER_RACK:
        raise InputError(
            f"--capex-usd-per-rack = {capex_usd_per_rack:g}: expected a price above 0 and at "
            f"most {MAX_USD_PER_RACK:,.0f} USD per rack (MAX_USD_PER_RACK, the bound "
            "models/racks.toml's capex_usd_per_rack takes: ten times the 5 million some quote "
            "for a GB200 NVL72 rack)"
        )
    if not (math.isfinite(max_load_share) and 0 < max_load_share <= 1):
        raise InputError(
            f"--max-load-share = {max_load_share:g}: expected a share above 0 and at most 1 (the "
            "share of the usable IT capacity the racks may draw at full load; planners fill "
            "halls to 0.8-0.9)"
        )


def _per_gpu_prices(rack, hardware, networking_usd_per_gpu, installation_usd_per_gpu, sources):
    """The scale-out network and installation prices per GPU (given, else the catalog's, else 0
    and said not counted), their sources added to `sources`."""
    per_gpu = {}
    for name, given in (
        ("networking_usd_per_gpu", networking_usd_per_gpu),
        ("installation_usd_per_gpu", installation_usd_per_gpu),
    ):
        option = "--" + name.replace("_", "-")
        if given is not None:
            if not (math.isfinite(given) and 0 <= given <= MAX_USD_PER_GPU):
                raise InputError(
                    f"{option} = {given:g}: expected a price from 0 to {MAX_USD_PER_GPU:,.0f} USD "
                    "per GPU"
                )
            per_gpu[name], sources[name] = given, option
        elif getattr(rack, name) is not None:
            per_gpu[name], sources[name] = getattr(rack, name), rack.sources[name]
        else:
            per_gpu[name] = 0.0
            sources[name] = (
                f"{_NOT_COUNTED}models/racks.toml has no {name} for {hardware} ({option})"
            )
    return per_gpu


_NOT_COUNTED = "not counted: "


def _usd_words(value: float) -> str:
    return f"USD {value:,.0f}"


def _hall_warnings(hall: _Hall, hall_max_kw_per_rack: float | None, catalog) -> list[str]:
    """The warnings of both directions of `size`: what the rack adds to the hall beyond itself (its
    network share, which the power counts and the hall's limit does not), a rack air does not
    cool, air-cooled racks in a liquid hall, figures that rest on assumptions."""
    rack = hall.rack
    found = [
        f"{rack.key}: {rack.kw_per_rack:g} kW in the rack, {rack.it_kw_per_rack:g} kW with its "
        f"share of the scale-out network ({rack.network_kw_per_rack:g} kW, models/racks.toml "
        f"network_kw_per_rack): the power counts {rack.it_kw_per_rack:g} kW per rack, the hall's "
        f"kW-per-rack limit is checked against the {rack.kw_per_rack:g} kW rack"
        if rack.network_kw_per_rack
        else None,
        air_density_warning(rack, hall.hall_cooling, hall_max_kw_per_rack, catalog),
        retrofit_power_warning(rack, hall.hall_cooling, hall_max_kw_per_rack, catalog),
        hall_cooling_warning(rack, hall.hall_cooling, hall.pue_source, catalog),
        *_capex_warning(hall, rack.key),
    ]
    sources = {**rack.sources, **hall.capex_sources}  # a price given on the command line: its own
    assumed = sorted(k for k, v in sources.items() if "assumption" in v)
    if assumed:
        found.append(f"{rack.key}: {', '.join(assumed)} rest on assumptions (see sources)")
    return [w for w in found if w]


def _rack_json(hall: _Hall) -> dict:
    rack = hall.rack
    return {
        "name": rack.name,
        "gpus_per_rack": rack.gpus_per_rack,
        "systems_per_rack": rack.systems_per_rack,
        "kw_per_rack": rack.kw_per_rack,
        "network_kw_per_rack": rack.network_kw_per_rack,
        "it_kw_per_rack": rack.it_kw_per_rack,
        "kw_per_gpu_all_in": rack.kw_per_gpu_all_in,
        "kw_per_gpu_definition": rack.kw_per_gpu_definition,
        "cooling": rack.cooling,
        "m2_per_rack": rack.m2_per_rack,
        "capex_usd_per_rack": _number(hall.rack_price),
        "networking_usd_per_gpu": hall.networking_per_gpu,
        "installation_usd_per_gpu": hall.installation_per_gpu,
        "capex_usd_per_placed_rack": _number(hall.price_per_rack),
        "sources": {**rack.sources, **hall.capex_sources},
    }


def _capex_parts(hall: _Hall, racks: float, gpus: float, fixed_usd: float) -> dict:
    """The parts of `size`'s capex and what it includes, in words (the table's row, JSON's
    `capex_includes`): the racks, any retrofit, and per GPU the network and installation."""
    priced = not math.isnan(hall.price_per_rack)
    parts = ["racks"]
    if hall.retrofit_per_rack:
        parts.append(f"liquid retrofit ({hall.retrofit_per_rack:,.0f} USD per rack)")
    for what, per_gpu in (
        ("scale-out network", hall.networking_per_gpu),
        ("installation", hall.installation_per_gpu),
    ):
        if per_gpu:
            parts.append(f"{what} ({per_gpu:,.0f} USD per GPU)")
    if fixed_usd:
        parts.append("facility build")
    return {
        "retrofit_capex_usd": racks * hall.retrofit_per_rack,
        "networking_capex_usd": gpus * hall.networking_per_gpu if priced else None,
        "installation_capex_usd": gpus * hall.installation_per_gpu if priced else None,
        "capex_includes": parts if priced else [],
    }


def _capex_warning(hall: _Hall, hardware: str) -> list[str]:
    """A warning where the capex leaves out the scale-out network or the installation (no
    catalog figure, no option): the hall's capex would then read low beside a projection's."""
    if math.isnan(hall.price_per_rack):
        return []
    # a 0 given on the command line is the user's, not a figure left out
    missing = [
        name
        for name in ("networking_usd_per_gpu", "installation_usd_per_gpu")
        if hall.capex_sources[name].startswith(_NOT_COUNTED)
    ]
    if not missing:
        return []
    options = " and ".join("--" + name.replace("_", "-") for name in missing)
    words = {
        "networking_usd_per_gpu": "scale-out network",
        "installation_usd_per_gpu": "installation",
    }
    only = "racks only" if len(missing) == 2 else "no " + words[missing[0]]
    return [
        f"capex counts {only}: models/racks.toml has no {' or '.join(missing)} for {hardware}, "
        f"which a scenario's capex section charges per GPU; expected {options} to count "
        f"{'them' if len(missing) == 2 else 'it'}"
    ]


def size(
    *,
    hardware: str,
    mw: float | None = None,
    gpus: float | None = None,
    basis: str = "it",
    cooling: str | None = None,
    retrofit_liquid: bool = False,
    pue: float | None = None,
    hall_max_kw_per_rack: float | None = None,
    floor_m2: float | None = None,
    budget_usd: float | None = None,
    capex_usd_per_rack: float | None = None,
    facility_usd_per_mw: float = 0.0,
    systems_per_rack: int | None = None,
    networking_usd_per_gpu: float | None = None,
    installation_usd_per_gpu: float | None = None,
    max_load_share: float = 1.0,
    catalog: RackCatalog | None = None,
) -> dict:
    """Size one hall from its power budget (`mw`), or the hall a fleet of `gpus` needs (one of the
    two); returns the JSON-ready result (the CLI's `--format json`). Both directions count the
    same rack figures (`RackSpec.it_kw_per_rack`) and PUE with econ.sizing's one formula."""
    if (mw is None) == (gpus is None):
        given = "both" if mw is not None else "neither"
        raise InputError(
            f"{given} of --mw and --gpus given; expected one: a power budget (--mw) to fill, or "
            "a number of GPUs (--gpus) to house"
        )
    catalog = catalog or load_racks()
    hall = _hall(
        catalog,
        hardware,
        cooling,
        retrofit_liquid,
        pue,
        hall_max_kw_per_rack,
        capex_usd_per_rack,
        facility_usd_per_mw,
        systems_per_rack,
        networking_usd_per_gpu,
        installation_usd_per_gpu,
        max_load_share,
    )
    if gpus is not None:
        for option, value in (("--floor-m2", floor_m2), ("--budget-usd", budget_usd)):
            if value is not None:
                raise InputError(
                    f"{option} limits a hall sized from its power budget (--mw); with --gpus the "
                    "floor space and capex the racks need are given instead"
                )
        return _size_for_gpus(
            gpus, hardware, hall, hall_max_kw_per_rack, facility_usd_per_mw, catalog
        )
    return _size_for_mw(
        mw,
        hardware,
        hall,
        basis,
        hall_max_kw_per_rack,
        floor_m2,
        budget_usd,
        capex_usd_per_rack,
        facility_usd_per_mw,
        catalog,
    )


def _size_for_mw(
    mw,
    hardware,
    hall: _Hall,
    basis,
    hall_max_kw_per_rack,
    floor_m2,
    budget_usd,
    capex_usd_per_rack,
    facility_usd_per_mw,
    catalog,
) -> dict:
    rack, pue = hall.rack, hall.pue
    given = (
        ("--mw", mw),
        ("--pue", pue),
        ("--facility-usd-per-mw", facility_usd_per_mw),
        ("--floor-m2", floor_m2),
        ("--budget-usd", budget_usd),
        ("--capex-usd-per-rack", capex_usd_per_rack),
        ("--hall-max-kw-per-rack", hall_max_kw_per_rack),
    )
    for name, value in given[:1] + given[3:5]:  # the others: _hall
        if value is not None and not math.isfinite(value):
            raise InputError(f"{name} = {value}: expected a finite number")
    # named as the options they are (econ.sizing's own checks name the figure, not the option)
    for name, value, ok, expected in (
        ("--mw", mw, mw > 0, "a power budget above 0 MW"),
        ("--floor-m2", floor_m2, floor_m2 is None or floor_m2 >= 0, "floor space of 0 m² or more"),
        (
            "--budget-usd",
            budget_usd,
            budget_usd is None or budget_usd >= 0,
            "a capex budget of 0 USD or more",
        ),
    ):
        if not ok:
            raise InputError(f"{name} = {value:g}: expected {expected}")
    if mw > MAX_MW:  # far beyond any hall; past ~1e305 the arithmetic overflows
        raise InputError(
            f"--mw = {mw:g}: expected a power budget of at most {MAX_MW:,.0f} MW (1 TW, more than "
            "every data centre in the world draws together)"
        )
    if budget_usd is not None and np.isnan(hall.price_per_rack):
        raise RackCatalogError(
            f"--budget-usd needs a price per rack, and models/racks.toml has no "
            f"capex_usd_per_rack for {hardware}; expected --capex-usd-per-rack"
        )
    it_mw_hall = mw if basis == "it" else mw / pue
    fixed = facility_usd_per_mw * it_mw_hall

    hall_max = np.inf if hall_max_kw_per_rack is None else hall_max_kw_per_rack
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
            sized = size_hall(
                mw,
                pue=pue,
                kw_per_rack=rack.kw_per_rack,
                it_kw_per_rack=rack.it_kw_per_rack,
                gpus_per_rack=rack.gpus_per_rack,
                power_basis=basis,
                m2_per_rack=rack.m2_per_rack,
                floor_m2=np.inf if floor_m2 is None else floor_m2,
                capex_budget_usd=np.inf if budget_usd is None else budget_usd,
                capex_usd_per_rack=hall.price_per_rack,
                fixed_capex_usd=fixed,
                hall_max_kw_per_rack=hall_max,
                rack_cooling=rack.cooling,
                hall_cooling=hall.hall_cooling,
                figures=[_figure(hall, hardware)],
                max_load_share=hall.max_load_share,
            )
    except HallLimitError as exc:
        raise _hall_refusal(exc, hardware, hall, hall_max_kw_per_rack) from exc
    _refuse_overflow(sized, fixed, given)
    one = lambda a: _number(np.asarray(a)[0])  # noqa: E731
    racks = one(sized.racks)
    warnings = []
    if basis == "it":
        warnings.append(
            f"--mw {mw:g} is read as IT (critical) load; the meter sees {mw * pue:,g} MW at PUE "
            f"{pue:g} (use --basis utility for a grid connection)"
        )
    warnings += _hall_warnings(hall, hall_max_kw_per_rack, catalog)
    return {
        "hardware": hardware,
        "power_mw": mw,
        "power_basis": basis,
        "sizing_basis": sizing_basis(hall.max_load_share, basis),
        "max_load_share": hall.max_load_share,
        "pue": pue,
        "pue_source": hall.pue_source,
        "hall_cooling": hall.hall_cooling,
        "hall_max_kw_per_rack": hall_max_kw_per_rack,
        "rack": _rack_json(hall),
        "racks": racks,
        "gpus": one(sized.gpus),
        "it_kw": one(sized.it_kw),
        "utility_kw": one(sized.utility_kw),
        "floor_m2": one(sized.floor_m2),
        "capex_usd": one(sized.capex_usd),
        **_capex_parts(hall, racks, one(sized.gpus), fixed),
        "fixed_capex_usd": fixed,
        "binding_limit": str(sized.binding_limit[0]),
        "binding_limits": [k for k in LIMITS if float(sized.racks_by_limit[k][0]) == racks],
        "racks_by_limit": {k: one(v) for k, v in sized.racks_by_limit.items()},
        "it_budget_kw": one(sized.it_budget_kw),
        "utility_budget_kw": one(sized.utility_budget_kw),
        "headroom_it_kw": one(sized.it_budget_kw * (1.0 - hall.max_load_share)),
        "stranded": {
            "it_kw": one(sized.stranded_it_kw),
            "utility_kw": one(sized.stranded_utility_kw),
            "floor_m2": one(sized.stranded_floor_m2),
            "budget_usd": one(sized.stranded_budget_usd),
        },
        "warnings": warnings,
    }


def _size_for_gpus(gpus, hardware, hall: _Hall, hall_max_kw_per_rack, facility_usd_per_mw, catalog):
    """`size` for a fleet: whole racks for `gpus` GPUs (rounded up, and said so), their power at
    the meter, floor and capex (econ.sizing.hall_for_gpus)."""
    rack = hall.rack
    whole = (
        isinstance(gpus, int | float)
        and not isinstance(gpus, bool)
        and abs(gpus) <= FLOAT_MAX
        and math.isfinite(gpus)
        and gpus >= 1
        and float(gpus).is_integer()
    )
    if not whole:
        shown = f"{gpus:g}" if isinstance(gpus, float) else repr(gpus)
        raise InputError(f"--gpus = {shown}: expected a whole number of GPUs of at least 1")
    gpus = int(gpus)
    # the racks' IT MW, bounded as --mw is: past ~1e305 GPUs the arithmetic overflows
    it_mw = math.ceil(gpus / rack.gpus_per_rack) * rack.it_kw_per_rack / 1000.0
    if it_mw > MAX_MW:
        shown = f"{gpus:,}" if gpus < 1e15 else f"{gpus:.6g}"
        raise InputError(
            f"--gpus = {shown}: {rack.key} racks for them draw {it_mw:,.6g} MW of IT load; "
            f"expected GPUs within {MAX_MW:,.0f} MW (1 TW, more than every data centre in the "
            "world draws together)"
        )
    hall_max = np.inf if hall_max_kw_per_rack is None else hall_max_kw_per_rack
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            need = hall_for_gpus(
                gpus,
                pue=hall.pue,
                kw_per_rack=rack.kw_per_rack,
                it_kw_per_rack=rack.it_kw_per_rack,
                gpus_per_rack=rack.gpus_per_rack,
                m2_per_rack=rack.m2_per_rack,
                capex_usd_per_rack=hall.price_per_rack,
                facility_usd_per_mw=facility_usd_per_mw,
                hall_max_kw_per_rack=hall_max,
                rack_cooling=rack.cooling,
                hall_cooling=hall.hall_cooling,
                figures=[_figure(hall, hardware)],
                max_load_share=hall.max_load_share,
            )
    except HallLimitError as exc:
        raise _hall_refusal(exc, hardware, hall, hall_max_kw_per_rack) from exc
    one = lambda a: _number(np.asarray(a)[0])  # noqa: E731
    racks, spare = one(need.racks), one(need.spare_gpus)
    for what, value in (
        ("capex [USD]", need.capex_usd[0]),
        ("facility build", need.fixed_capex_usd[0]),
    ):
        if np.isinf(value):
            raise InputError(
                f"the {what} overflows floating point (beyond 1.8e308) for {gpus:,} GPUs; "
                "expected inputs whose products stay finite (a price of a real rack or hall)"
            )
    warnings = []
    if spare:
        warnings.append(
            f"--gpus {gpus:,} is not a whole number of {hardware} racks ({rack.gpus_per_rack} "
            f"GPUs each): rounded up to {_count(racks, 'rack')}, which "
            f"hold{'s' if racks == 1 else ''} {one(need.gpus):,} GPUs "
            f"({spare:,} positions more than asked, bought and drawing power as full racks)"
            + _spare_systems(rack, gpus, spare)
        )
    warnings += _hall_warnings(hall, hall_max_kw_per_rack, catalog)
    return {
        "hardware": hardware,
        "gpus_requested": gpus,
        "sizing_basis": sizing_basis(hall.max_load_share),
        "max_load_share": hall.max_load_share,
        "pue": hall.pue,
        "pue_source": hall.pue_source,
        "hall_cooling": hall.hall_cooling,
        "hall_max_kw_per_rack": hall_max_kw_per_rack,
        "rack": _rack_json(hall),
        "racks": racks,
        "gpus": one(need.gpus),
        "spare_gpus": spare,
        "it_kw": one(need.it_kw),
        "utility_kw": one(need.utility_kw),
        "it_mw": one(need.it_kw / 1000.0),
        "utility_mw": one(need.utility_kw / 1000.0),
        "hall_it_mw": one(need.hall_it_kw / 1000.0),
        "floor_m2": one(need.floor_m2),
        "capex_usd": one(need.capex_usd),
        **_capex_parts(hall, racks, one(need.gpus), one(need.fixed_capex_usd)),
        "fixed_capex_usd": one(need.fixed_capex_usd),
        "warnings": warnings,
    }


def _spare_systems(rack: RackSpec, gpus: int, spare_gpus: int) -> str:
    """What `size --gpus` adds to its rounding warning where the spare positions hold whole 8-GPU
    systems: capex and power count them as bought and running, and the systems per rack that
    house the GPUs asked for without one ('' for a rack-scale system, bought by the rack, or
    spare positions within one system)."""
    spare = spare_gpus // rack.gpus_per_system
    if rack.kw_per_system is None or not spare:
        return ""
    systems = -(-gpus // rack.gpus_per_system)
    # the most systems per rack, up to the catalog's, that divide the systems asked for
    fit = max(n for n in range(1, rack.systems_per_rack + 1) if systems % n == 0)
    racks = systems // fit
    return (
        f"; the capex and the power count the {_count(spare, rack.key + ' system')} "
        f"({spare * rack.gpus_per_system:,} GPUs) in those positions, which were not asked for; "
        f"expected --systems-per-rack {fit} to buy only the {_count(systems, 'system')} asked "
        f"for ({_count(racks, 'rack')} of {fit})"
    )


def _count(number: int, noun: str) -> str:
    """'1 rack', '2 racks' (thousands separated)."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def sizing_basis(max_load_share: float, basis: str = "it") -> str:
    """What `size`'s power figures mean, in words: the budget is usable critical IT capacity (or,
    `basis` "utility", the power at the meter, of which the racks get the part PUE leaves), each
    rack counted at its maximum draw, loaded to `max_load_share` of it."""
    load = (
        "loaded to 100% of it (--max-load-share 1; planners fill halls to 0.8-0.9)"
        if max_load_share == 1
        else f"loaded to {max_load_share:.0%} of it (--max-load-share {max_load_share:g}), the "
        "rest kept as headroom"
    )
    power = (
        "power is the supply at the meter (--basis utility), power / PUE of it usable critical "
        "IT capacity for the racks"
        if basis == "utility"
        else "power is usable critical IT capacity, after the hall's N+1 or 2N redundancy"
    )
    return f"{power}, with every rack at its maximum draw at once, {load}"


def _figure(hall: _Hall, hardware: str) -> str:
    rack = hall.rack
    return physical_rack_figure(hardware, hall.figure, rack.kw_per_rack, rack.it_kw_per_rack)


def _hall_refusal(
    exc: HallLimitError, hardware: str, hall: _Hall, hall_max_kw_per_rack: float | None
) -> HallLimitError:
    """A hall's refusal of the rack with the options that change it: --systems-per-rack only for
    hardware sold as 8-GPU systems (a rack-scale system refuses it), with the most that fit."""
    rack = hall.rack
    fit = _systems_that_fit(rack, hall_max_kw_per_rack) if hall_max_kw_per_rack is not None else ""
    over = hall_max_kw_per_rack is not None and rack.kw_per_rack > hall_max_kw_per_rack
    hints = [f"a higher --hall-max-kw-per-rack{fit}"] if over else []
    if rack.cooling == "liquid" and hall.hall_cooling == "air":
        hints.append("--cooling liquid, or --retrofit-liquid for an air hall")
    # one hall, one line: a rack both above the limit and liquid-cooled in an air hall is
    # refused for both, with the way out of each
    problems = str(exc).replace("\n  ", "; and ")
    return HallLimitError(f"{hardware}: {problems} (command line: {'; '.join(hints)})")


def _within_field_bounds(
    option: str, value: float, path: str, what: str, unit: str = "", hint: str = ""
) -> None:
    """InputError unless `value` of a command-line option is within the bounds a scenario file
    takes for the field `path` stands for (econ.scenario: the same bounds, not a copy of them)."""
    from econ.bounds import bounds_words, within_bounds
    from econ.scenario.power_models import Facility, Power
    from econ.scenario.section import field_bounds

    section, name = path.split(".")
    bounds = field_bounds({"power": Power, "facility": Facility}[section], name)
    if within_bounds(value, bounds):
        return
    raise InputError(
        f"{option} = {value:g}: expected {what} {bounds_words(bounds)}{unit}, as {path} takes in "
        f"a scenario file{hint}"
    )


def sized_fleet_fields(result: dict, scenario, catalog: RackCatalog | None = None):
    """What using a sized hall (`size`'s result) as a scenario's fleet changes, and what it leaves
    describing the scenario's previous hardware.

    Returns ``(fields, left)``: `fields` maps dotted scenario paths to their new values, only
    those that differ from the scenario's. Always the fleet (hardware, GPUs, GPUs per rack). Where
    the hardware changes, the rack catalog's figures for it: rack cooling, IT power per GPU
    (kw_per_gpu_all_in, on its boundary), and the price per GPU (capex_usd_per_rack / GPUs per
    rack) where the catalog has one; a facility.kw_per_rack of the old rack is cleared. The
    sized hall, its cooling and PUE, becomes the scenario's (for the same hardware too: the 61
    GB300 racks 10 MW at the meter holds at PUE 1.1 draw 11.6 MW there at 1.3), with
    the catalog's liquid retrofit price per rack where the hall becomes a retrofitted one (the
    same hardware in a hall already retrofitted keeps its price); a scenario of the same hardware
    whose rack cooling is not the catalog's keeps its hall. A hall limit given to the sizing
    becomes the scenario's. Amounts sized
    for the old fleet scale with the new one (`scaled_fixed_amounts`: staff, contracted or owned
    kW, a loan or tranche given in USD). `left` names
    the fields that still describe the previous hardware, each with why (throughput, prices the
    catalog lacks, per-GPU costs, a measured energy per token), so that a page can say so.
    """
    catalog = catalog or load_racks()
    rack = catalog.get(result["hardware"])
    if result["rack"]["systems_per_rack"] != rack.systems_per_rack:
        rack = with_systems_per_rack(rack, result["rack"]["systems_per_rack"])
    old = scenario.fleet.hardware
    new_hardware = result["hardware"] != old
    fields: dict[str, object] = {
        "fleet.hardware": result["hardware"],
        "fleet.gpu_count": int(result["gpus"]),
        "fleet.gpus_per_rack": int(rack.gpus_per_rack),
        "fleet.racks": None,
    }
    left: list[str] = []
    if new_hardware:
        fields["facility.rack_cooling"] = rack.cooling
        fields["power.kw_per_gpu"] = rack.kw_per_gpu_all_in
        fields["power.kw_per_gpu_definition"] = rack.kw_per_gpu_definition
        fields["facility.kw_per_rack"] = None
        if rack.capex_usd_per_rack is not None:
            fields["capex.gpu_price_usd"] = rack.capex_usd_per_rack / rack.gpus_per_rack
            fields["capex.system_price_usd"] = None
        else:
            left.append(
                f"capex.{'gpu' if scenario.capex.gpu_price_usd is not None else 'system'}"
                f"_price_usd (the rack catalog has no price for {rack.key})"
            )
        left += _left_from(scenario, old)
    # The sized hall: its racks were counted at its PUE (at the meter, fewer racks the higher it
    # is), so the same hardware sized in another hall or at another PUE takes that hall too; a
    # scenario whose racks are not the catalog's (a liquid-cooled variant) keeps its own hall.
    takes_hall = new_hardware or scenario.facility.rack_cooling == rack.cooling
    if not new_hardware:
        # a power per GPU given at the utility meter is divided by the PUE the hall takes
        power = scenario.power.model_copy(update={"pue": result["pue"]} if takes_hall else {})
        left += _power_above_budget(power, rack, int(result["gpus"]))
    if takes_hall:
        fields["facility.hall_cooling"] = result["hall_cooling"]
        fields["power.pue"] = result["pue"]
        retrofit = result["hall_cooling"] == "air_retrofit_liquid"
        retrofitted = scenario.facility.hall_cooling == "air_retrofit_liquid"
        if retrofit and rack.liquid_cooling_usd_per_rack and (new_hardware or not retrofitted):
            fields["facility.liquid_retrofit_usd_per_rack"] = rack.liquid_cooling_usd_per_rack
    if result.get("hall_max_kw_per_rack") is not None:
        fields["facility.hall_max_kw_per_rack"] = result["hall_max_kw_per_rack"]
    limit = scenario.facility.hall_max_kw_per_rack
    if (
        result.get("hall_max_kw_per_rack") is None
        and limit is not None
        and limit < rack.kw_per_rack
    ):
        left.append(
            f"facility.hall_max_kw_per_rack ({limit:g} kW, below the {rack.kw_per_rack:g} kW "
            f"{rack.key} rack: the scenario is refused until it changes)"
        )
    for path, _, value, _ in scaled_fixed_amounts(scenario, fields):
        fields[path] = value
    current = _current_values(scenario, fields)
    changed = {path: value for path, value in fields.items() if current[path] != value}
    return changed, tuple(left)


def _power_above_budget(power, rack: RackSpec, gpus: int) -> list[str]:
    """The scenario's own IT power per GPU (its power section `power`, at the PUE of the hall it
    takes), kept with its hardware, where it is above what the hall's power budget counted per
    GPU (`RackSpec.it_kw_per_rack`): the sized hall then draws more than the MW it was sized
    for."""
    from econ.scenario.power_models import it_kw_per_gpu

    counted = rack.it_kw_per_rack / rack.gpus_per_rack
    own = it_kw_per_gpu(power)
    if own <= counted * (1 + 1e-9):
        return []
    return [
        f"power.kw_per_gpu ({own:g} kW of IT load per GPU, above the {counted:g} kW per GPU the "
        f"power budget counted for {rack.key}: the {gpus:,} GPUs draw {gpus * own:,.0f} kW of "
        f"IT load, {own / counted - 1:.1%} more than the hall was sized for)"
    ]


def scaled_fixed_amounts(scenario, fields: dict) -> list[tuple[str, object, object, str]]:
    """The scenario's fixed amounts sized for its fleet, scaled to the fleet `fields` set
    (sized_fleet_fields): ``(path, old, new, why)`` for each amount the scenario gives.

    A hall sized from its power budget is a project of another size: staff per month keeps
    its amount per GPU; the contracted or owned facility capacity keeps its ratio to the
    fleet's full-load IT power (with the new hardware's power per GPU and PUE); a loan or a
    tranche given as an amount keeps its share of the GPUs' capex (with the new price per GPU).
    Amounts given as shares (debt_share, a tranche's share_of_capex, insurance) follow the
    fleet by themselves and are not listed."""
    from econ.capex import capex_usd_per_gpu, hardware_usd_per_gpu
    from econ.scenario.power_models import it_kw_per_gpu

    old_gpus = scenario.fleet.gpu_count
    new_gpus = fields.get("fleet.gpu_count", old_gpus)
    if not old_gpus:
        return []
    out: list[tuple[str, object, object, str]] = []
    gpus = new_gpus / old_gpus
    staff = scenario.opex.staff_usd_per_month
    if staff:
        per_gpu = f"{staff / old_gpus:,.4g} USD per GPU-month kept"
        out.append(("opex.staff_usd_per_month", staff, staff * gpus, per_gpu))

    power = scenario.power
    update = {k.split(".")[1]: v for k, v in fields.items() if k.startswith("power.")}
    new_kw = new_gpus * it_kw_per_gpu(power.model_copy(update=update))
    old_kw = old_gpus * it_kw_per_gpu(power)
    for name in ("contracted_kw", "critical_kw"):
        kw = getattr(scenario.facility, name)
        if kw is not None and old_kw > 0:
            why = f"{kw / old_kw:.4g}x the fleet's full-load IT power kept"
            out.append((f"facility.{name}", kw, kw * new_kw / old_kw, why))

    c = scenario.capex

    def per_gpu(gpu_price, system_price) -> float:
        nan = float("nan")
        hardware = hardware_usd_per_gpu(
            nan if gpu_price is None else gpu_price,
            nan if system_price is None else system_price,
            c.gpus_per_system,
        )
        return float(
            capex_usd_per_gpu(
                hardware,
                c.networking_usd_per_gpu,
                c.storage_usd_per_gpu,
                c.installation_usd_per_gpu,
                c.spares_share,
            )
        )

    old_capex = old_gpus * per_gpu(c.gpu_price_usd, c.system_price_usd)
    new_price = fields.get("capex.gpu_price_usd", c.gpu_price_usd)
    new_system = None if "capex.gpu_price_usd" in fields else c.system_price_usd
    new_capex = new_gpus * per_gpu(new_price, new_system)
    if not (old_capex > 0 and math.isfinite(new_capex)):
        return out
    capex = new_capex / old_capex
    financing = scenario.financing
    debt = getattr(financing, "debt_usd", None)
    if debt is not None:
        why = f"{debt / old_capex:.4g} of the GPUs' capex kept"
        out.append(("financing.debt_usd", debt, debt * capex, why))
    tranches = getattr(financing, "tranches", ())
    if capex != 1 and any(t.amount_usd is not None for t in tranches):
        scaled = []
        for t in tranches:
            data = t.model_dump(exclude_unset=True)
            if t.amount_usd is not None:
                data["amount_usd"] = t.amount_usd * capex
            scaled.append(data)
        names = ", ".join(t.name for t in tranches if t.amount_usd is not None)
        why = f"the amounts of {names} keep their shares of the GPUs' capex"
        out.append(("financing.tranches", tranches, tuple(scaled), why))
    return out


def _left_from(scenario, old: str) -> list[str]:
    """Fields of `scenario` that describe its hardware `old` and no catalog figure replaces."""
    throughput = scenario.throughput
    if throughput.measured is not None or throughput.simulated is not None:
        source = "measured" if throughput.measured is not None else "simulated"
        left = [f"throughput.{source} (tokens/s per GPU of {old})"]
    else:
        left = [f"throughput.tokens_per_s_per_gpu (of {old})"]
    capex = scenario.capex
    for name in ("networking_usd_per_gpu", "storage_usd_per_gpu", "installation_usd_per_gpu"):
        if getattr(capex, name):
            left.append(f"capex.{name} ({getattr(capex, name):,.0f} USD, priced for {old})")
    if scenario.power.measured_joules_per_token is not None:
        left.append(f"power.measured_joules_per_token (measured on {old})")
    return left


def _current_values(scenario, fields: dict) -> dict[str, object]:
    out = {}
    for path in fields:
        section, name = path.split(".")
        out[path] = getattr(getattr(scenario, section), name)
    return out


def _refuse_overflow(sized, fixed: float, given) -> None:
    """InputError when finite inputs give a figure beyond the float range (a price of 1e308 per
    rack times thousands of racks): the result would print inf, or null in JSON."""
    figures = {
        "the facility build [USD]": fixed,
        "the capex [USD]": sized.capex_usd[0],
        "the power at the meter [kW]": sized.utility_kw[0],
        "the stranded budget [USD]": sized.stranded_budget_usd[0],
    }
    for what, value in figures.items():
        if np.isinf(value):
            inputs = ", ".join(f"{name} {value:g}" for name, value in given if value is not None)
            raise InputError(
                f"{what} overflows floating point (beyond 1.8e308) with {inputs}; expected "
                "inputs whose products stay finite (a price or PUE of a real hall)"
            )


def _number(value) -> float | int | None:
    """JSON-safe number: None for NaN or infinity (not limiting), int when whole."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value
