"""Checks the app makes before it takes a figure into the scenario: does a measured curve stand
for the scenario's model and hardware, and are the inputs within sane ranges (warnings, not
refusals: the scenario models already refuse what is impossible).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

import pandas as pd

from econ.scenario import Scenario
from econ.throughput.match import curve_mismatches as match_curve
from econ.throughput.match import served_model
from econ.ui.fmt import number_format


def scenario_model(scenario: Scenario) -> str | None:
    """The model the scenario serves: its simulated or history model, else the one its name,
    description or throughput source names; None when it names none (`match.served_model`)."""
    t = scenario.throughput
    return served_model(
        t.simulated.model if t.simulated is not None else "",
        t.history.model if t.history is not None else "",
        scenario.name,
        scenario.description,
        t.source,
    )


def curve_mismatches(
    provenance: Mapping, points: pd.DataFrame, scenario: Scenario
) -> tuple[list[str], list[str]]:
    """(differences, unknowns) between a measured curve and the scenario it would go into: the
    comparison `econ project` makes of a scenario's curve file (`match.curve_mismatches`)."""
    return match_curve(provenance, points, scenario.fleet.hardware, scenario_model(scenario))


def joined(items: Iterable[str]) -> str:
    return " and ".join(items)


# --- sanity warnings: values the models accept but no real deployment has ---------------------------

MAX_PLAUSIBLE_GPUS = 2_000_000
"""More GPUs than any operator runs (the largest announced fleets are a few hundred thousand)."""

MAX_PLAUSIBLE_MW = 5_000.0
"""More IT power than any campus (the largest announced are 1-5 GW)."""


PLAUSIBLE_SPEEDUP = 10
"""How far above the highest per-GPU throughput MLPerf measured a figure may be before it is
questioned: a new generation and its software have not yet gained 10x in one step."""


@cache
def highest_measured() -> tuple[float, str]:
    """The highest per-GPU output throughput in econ's MLPerf catalog and what it is ("llama3.1-8b
    Offline on b200-sxm, v6.1-f9bd6d4a")."""
    from econ.benchmarks import load_catalog

    rows = load_catalog().dropna(subset=["tokens_per_s_per_gpu"])
    top = rows.loc[rows["tokens_per_s_per_gpu"].idxmax()]
    what = f"{top['benchmark_family']} {top['scenario']} on {top['hardware_key']}, {top['id']}"
    return float(top["tokens_per_s_per_gpu"]), what


def power_budget_warning(mw: float) -> str | None:
    """A hall power budget beyond any campus."""
    if mw > MAX_PLAUSIBLE_MW:
        return (
            f"{mw:,.6g} MW is more than any data-centre campus (the largest announced are 1-5 GW, "
            f"{MAX_PLAUSIBLE_MW:,.0f} MW at most here); check the unit (MW, not kW)"
        )
    return None


def sanity_warnings(scenario: Scenario) -> list[str]:
    """Values the scenario models accept but no real deployment has: a typo or a unit slip."""
    out = []
    gpus = scenario.fleet.gpu_count
    if gpus > MAX_PLAUSIBLE_GPUS:
        out.append(
            f"{gpus:,} GPUs is more than any operator runs (the largest fleets are a few hundred "
            "thousand); check the GPU or rack count"
        )
    tokens = scenario.throughput.tokens_per_s_per_gpu
    highest, what = highest_measured()
    if tokens > PLAUSIBLE_SPEEDUP * highest:
        out.append(
            f"{number_format(tokens)} tokens/s per GPU is more than {PLAUSIBLE_SPEEDUP} times the "
            f"highest per-GPU throughput MLPerf measured ({highest:,.0f} tokens/s, {what}); check "
            "the figure and that it is per GPU, not per system"
        )
    it_mw = gpus * scenario.power.kw_per_gpu / 1000
    if it_mw > MAX_PLAUSIBLE_MW:
        out.append(f"the fleet draws {it_mw:,.0f} MW of IT power: " + power_budget_warning(it_mw))
    facility = scenario.facility
    for name in ("critical_kw", "contracted_kw"):
        kw = getattr(facility, name, None)
        if kw is not None and kw / 1000 > MAX_PLAUSIBLE_MW:
            out.append(f"facility {name.replace('_', ' ')}: " + power_budget_warning(kw / 1000))
    financing = scenario.financing
    for name, label in (
        ("discount_rate_annual", "discount rate"),
        ("debt_rate_annual", "loan rate"),
    ):
        rate = getattr(financing, name, None)
        if rate is None:
            continue
        if rate < 0:
            out.append(
                f"the {label} is {rate * 100:g} %/year: negative, so money later is worth more "
                "than money now; check the sign"
            )
        elif rate > 1:
            out.append(f"the {label} is {rate * 100:,.4g} %/year, above 100 %; check the unit (%)")
    return out


# --- the model a scenario says it serves --------------------------------------------------------------

_SIMULATED_SOURCE = re.compile(r"^simulated: (\S+) on ")
"""The source the Throughput page writes when a simulated figure is used ("simulated: MODEL on
HARDWARE at PRECISION, WORKLOAD")."""


def catalog_row_of(scenario: Scenario, catalog: pd.DataFrame) -> pd.Series | None:
    """The MLPerf catalog row the scenario's throughput came from: the row its measured source or
    throughput source names by id, else the one row of its hardware whose tokens/s per GPU is
    the scenario's (to 0.05); None when no row is found or several are."""
    t = scenario.throughput
    ids = catalog["id"].astype(str)
    named = t.measured.catalog_id if t.measured is not None else ""
    if named and (ids == named).any():
        return catalog[ids == named].iloc[0]
    source = t.source or ""
    for row_id in ids:
        if row_id and row_id in source:
            return catalog[ids == row_id].iloc[0]
    close = catalog[
        ((catalog["tokens_per_s_per_gpu"] - t.tokens_per_s_per_gpu).abs() < 0.05)
        & (catalog["hardware_key"] == scenario.fleet.hardware)
    ]
    families = set(close["benchmark_family"].dropna())
    return close.iloc[0] if len(families) == 1 else None


def stated_model(
    scenario: Scenario, catalog: pd.DataFrame | None = None, curve_model: str = ""
) -> tuple[str | None, str]:
    """(model, where the scenario says it): the model of its simulated or history section, of
    the simulated source the app wrote, of the catalog row its throughput came from (or its
    measured source's catalog query), or `curve_model` (its measured curve file's); (None, "")
    when it says none. Its name, description and free-text source are not read: a guess there
    could put another model's throughput into the scenario with one click."""
    t = scenario.throughput
    if t.simulated is not None and t.simulated.model:
        return t.simulated.model, "its simulated throughput"
    if t.history is not None and t.history.model:
        return t.history.model, "its MLPerf history"
    found = _SIMULATED_SOURCE.match(t.source or "")
    if found:
        return found.group(1), "its throughput source (simulated)"
    if t.measured is not None and t.measured.catalog_query.get("model"):
        return str(t.measured.catalog_query["model"]), "its measured source's catalog query"
    if catalog is not None and len(catalog):
        row = catalog_row_of(scenario, catalog)
        if row is not None and str(row.get("benchmark_family") or ""):
            return str(row["benchmark_family"]), f"its catalog row {row['id']}"
    if curve_model:
        return curve_model, "its measured curve"
    return None, ""
