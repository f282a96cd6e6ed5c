"""`econ size`: how many racks and GPUs of a hardware type fit a hall's power, floor and budget, or
the racks and power a number of GPUs needs.

Reads rack figures from models/racks.toml (with their sources) through econ.racks.size, which calls
econ.sizing (size_hall, hall_for_gpus), and prints a table or JSON. Holds no formulas.
"""

from __future__ import annotations

import argparse
import json

from econ.commands import LazyChoices, Number, add_format, examples, lazy
from econ.sizing import POWER_BASES

racks = lazy("econ.racks")  # the rack catalog loads when the command runs


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "size",
        help="racks and GPUs that fit a hall's power budget, floor space and capex budget, or "
        "the racks and power a number of GPUs needs",
        description="Size a hall: racks and GPUs that fit a power budget (and optionally floor "
        "space and a capex budget), the limit that binds and the stranded capacity; or, with "
        "--gpus, the whole racks a fleet needs and the IT and utility power they draw. Rack "
        "figures come from models/racks.toml: the rack and its share of the scale-out network. "
        "The power budget is usable critical IT capacity (after the hall's N+1 or 2N "
        "redundancy), every rack counted at its maximum draw at once, loaded to "
        "--max-load-share of it (default 1). Capex: the racks, any liquid retrofit, and per GPU "
        "the scale-out network and installation (models/racks.toml, or the options).",
        **examples(
            "econ size --mw 10 --hardware gb300-nvl72",
            "econ size --mw 10 --basis utility --hardware b200-sxm --floor-m2 600 --format json",
            "econ size --mw 10 --hardware h100-sxm --systems-per-rack 1 "
            "--hall-max-kw-per-rack 20 --cooling air",
            "econ size --gpus 5000 --hardware gb300-nvl72",
        ),
    )
    wanted = p.add_mutually_exclusive_group(required=True)
    wanted.add_argument(
        "--mw",
        type=Number(),
        help="power budget: usable critical IT capacity after N+1/2N redundancy (or, with "
        "--basis utility, power at the meter) [MW]",
    )
    wanted.add_argument(
        "--gpus",
        type=Number(),  # a whole number of at least 1: econ.racks, which says why
        help="GPUs to house: the whole racks they need (rounded up) and their IT and utility "
        "power, the other way round from --mw [GPUs]",
    )
    p.add_argument(
        "--basis",
        choices=POWER_BASES,
        help="what --mw measures: it (critical IT load, the usual data-centre rating) "
        "or utility (at the meter, IT x PUE); default it",
    )
    p.add_argument("--hardware", required=True, help="hardware key, e.g. gb300-nvl72")
    p.add_argument(
        "--cooling",
        choices=LazyChoices(lambda: racks.COOLING),
        metavar="COOLING",
        help="the hall's cooling (%(choices)s); default: the rack's own",
    )
    p.add_argument(
        "--retrofit-liquid",
        action="store_true",
        help="with --cooling air: retrofit liquid cooling for liquid racks, at the rack's "
        "liquid_cooling_usd_per_rack",
    )
    p.add_argument("--pue", type=Number(), help="PUE; default: by the hall's cooling (racks.toml)")
    p.add_argument(
        "--hall-max-kw-per-rack",
        type=Number(),
        help="the hall's limit per rack [kW]; legacy air halls: 15-20; default: no limit",
    )
    p.add_argument("--floor-m2", type=Number(), help="white space available [m²]")
    p.add_argument("--budget-usd", type=Number(), help="capex budget [USD]")
    p.add_argument(
        "--capex-usd-per-rack", type=Number(), help="price per rack; default: from racks.toml"
    )
    p.add_argument(
        "--networking-usd-per-gpu",
        type=Number(),
        help="scale-out network (switches, optics, cables) per GPU placed, added to the capex; "
        "default: from racks.toml, 0 where it has none [USD/GPU]",
    )
    p.add_argument(
        "--installation-usd-per-gpu",
        type=Number(),
        help="installation and integration per GPU placed, added to the capex; default: from "
        "racks.toml, 0 where it has none [USD/GPU]",
    )
    p.add_argument(
        "--max-load-share",
        type=Number(),
        default=1.0,
        help="share of the IT capacity the racks may draw at full load, the rest kept as "
        "headroom; default 1 (all of it); planners fill halls to 0.8-0.9",
    )
    p.add_argument(
        "--facility-usd-per-mw",
        type=Number(),
        default=0.0,
        help="owned build cost per MW of critical IT load, charged to the budget for the whole "
        "hall (Cushman & Wakefield 2025: 11.7e6) [USD/MW]",
    )
    p.add_argument(
        "--systems-per-rack",
        type=Number(int),  # bounds: econ.racks, which says why
        help="8-GPU systems per rack (e.g. 1 or 2 for a legacy air hall)",
    )
    add_format(p, ("table", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.gpus is not None and args.basis is not None:
        from econ.errors import InputError

        raise InputError(
            "--basis says what --mw measures; with --gpus both the IT and the utility power the "
            "racks draw are given: expected --basis only with --mw"
        )
    result = racks.size(
        mw=args.mw,
        gpus=args.gpus,
        hardware=args.hardware,
        basis=args.basis or "it",
        cooling=args.cooling,
        retrofit_liquid=args.retrofit_liquid,
        pue=args.pue,
        hall_max_kw_per_rack=args.hall_max_kw_per_rack,
        floor_m2=args.floor_m2,
        budget_usd=args.budget_usd,
        capex_usd_per_rack=args.capex_usd_per_rack,
        facility_usd_per_mw=args.facility_usd_per_mw,
        systems_per_rack=args.systems_per_rack,
        networking_usd_per_gpu=args.networking_usd_per_gpu,
        installation_usd_per_gpu=args.installation_usd_per_gpu,
        max_load_share=args.max_load_share,
    )
    if args.format == "json":
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print(format_table(result))
    return 0


_ROWS = (
    ("racks", "Racks", "{:,.0f}"),
    ("gpus", "GPUs", "{:,.0f}"),
    ("binding_limits", "Binding limit", "{}"),
    ("it_kw", "IT power [kW]", "{:,.1f}"),
    ("utility_kw", "Utility power [kW]", "{:,.1f}"),
    ("floor_m2", "Floor space [m²]", "{:,.1f}"),
    ("capex_usd", "Capex [USD]", "{:,.0f}"),
    ("capex_includes", "  includes", "{}"),
    ("retrofit_capex_usd", "  of which liquid retrofit [USD]", "{:,.0f}"),
    ("networking_capex_usd", "  of which scale-out network [USD]", "{:,.0f}"),
    ("installation_capex_usd", "  of which installation [USD]", "{:,.0f}"),
    ("fixed_capex_usd", "  of which facility build [USD]", "{:,.0f}"),
    ("headroom_it_kw", "Headroom kept [kW IT]", "{:,.1f}"),
    ("racks_by_limit.power", "Racks the power allows", "{:,.0f}"),
    ("racks_by_limit.floor", "Racks the floor allows", "{:,.0f}"),
    ("racks_by_limit.budget", "Racks the budget allows", "{:,.0f}"),
    ("stranded.it_kw", "Stranded IT power [kW]", "{:,.1f}"),
    ("stranded.utility_kw", "Stranded utility power [kW]", "{:,.1f}"),
    ("stranded.floor_m2", "Stranded floor [m²]", "{:,.1f}"),
    ("stranded.budget_usd", "Stranded budget [USD]", "{:,.0f}"),
)


_GPU_ROWS = (
    ("gpus_requested", "GPUs asked for", "{:,.0f}"),
    ("racks", "Racks", "{:,.0f}"),
    ("gpus", "GPU positions", "{:,.0f}"),
    ("spare_gpus", "  of which spare", "{:,.0f}"),
    ("it_kw", "IT power [kW]", "{:,.1f}"),
    ("utility_kw", "Utility power [kW]", "{:,.1f}"),
    ("it_mw", "IT power [MW]", "{:,.3f}"),
    ("utility_mw", "Utility power [MW]", "{:,.3f}"),
    ("hall_it_mw", "Hall IT capacity needed [MW]", "{:,.3f}"),
    ("floor_m2", "Floor space [m²]", "{:,.1f}"),
    ("capex_usd", "Capex [USD]", "{:,.0f}"),
    ("capex_includes", "  includes", "{}"),
    ("retrofit_capex_usd", "  of which liquid retrofit [USD]", "{:,.0f}"),
    ("networking_capex_usd", "  of which scale-out network [USD]", "{:,.0f}"),
    ("installation_capex_usd", "  of which installation [USD]", "{:,.0f}"),
    ("fixed_capex_usd", "  of which facility build [USD]", "{:,.0f}"),
)


def format_table(result: dict) -> str:
    from econ.labels import whole

    rack = result["rack"]
    it_kw = rack.get("it_kw_per_rack", rack["kw_per_rack"])
    networking = (
        f" ({it_kw:g} kW with its share of the scale-out network)"
        if it_kw != rack["kw_per_rack"]
        else ""
    )
    fleet = "gpus_requested" in result
    wanted = (
        f"for {result['gpus_requested']:,} GPUs"
        if fleet
        else f"budget {result['power_mw']:g} MW ({result['power_basis']})"
    )
    head = (
        f"{result['hardware']} ({rack['name']}): {rack['gpus_per_rack']} GPUs and "
        f"{rack['kw_per_rack']:g} kW per rack{networking}, {rack['cooling']}-cooled; hall "
        f"{result['hall_cooling']}, PUE {result['pue']:g}; {wanted}"
    )
    rows = []
    for key, label, fmt in _GPU_ROWS if fleet else _ROWS:
        value = result
        for part in key.split("."):
            value = value[part]
        if key == "capex_includes":
            value = "n/a" if not value else "racks only" if value == ["racks"] else value
        if isinstance(value, list):
            value = ", ".join(value)
        if key in ("headroom_it_kw", "hall_it_mw") and result["max_load_share"] == 1:
            continue  # no headroom kept: the hall's capacity is the racks' power
        missing = "no limit" if key.startswith("racks_by_limit") else "n/a"
        # (whole: a --budget-usd of 1e308 left 309 digits of budget stranded)
        if value is None:
            rows.append((label, missing))
        else:
            rows.append((label, whole(value) if fmt == "{:,.0f}" else fmt.format(value)))
    width = max(len(label) for label, _ in rows)
    basis = f"Basis: {result['sizing_basis']}"
    lines = [head, basis, ""] + [f"{label.ljust(width)}  {value}" for label, value in rows]
    if result["capex_usd"] is None:  # (every capex row read n/a, with no word why)
        lines.append(
            f"note: models/racks.toml gives no price for a {result['hardware']} rack, so no "
            "capex is counted: give --capex-usd-per-rack for it"
        )
    lines += [f"warning: {w}" for w in result["warnings"]]
    return "\n".join(lines)
