"""Tables of a projection that every writer and screen shares: the flat summary (one column per
scalar), the provenance stamp of a projection's outputs, and calendar-year totals.

The writers (econ.export for CSV, Parquet and JSON; econ.workbook for Excel) and the app read
these from here, so no writer imports another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from econ.provenance import ProvenanceError, Stamp, stamp
from econ.scenario.models import Scenario

if TYPE_CHECKING:
    from econ.engine import Projection


def flat_summary(projection: Projection) -> pd.DataFrame:
    """Summary with one column per scalar: object-valued metrics are spread into
    `<metric>_<key>` columns (`cost_usd_per_mtok_<component>`), lists joined with "; ".

    Undefined metrics stay empty (None), never NaN strings. Metrics the engine adds later are
    written as they come.
    """
    summary = projection.summary.copy()
    for name in list(summary.columns):
        values = summary[name]
        if values.map(lambda v: isinstance(v, Mapping)).any():
            keys = list(dict.fromkeys(k for v in values if isinstance(v, Mapping) for k in v))
            if name == "cost_usd_per_mtok_by_component":
                prefix = "cost_usd_per_mtok"
            else:
                prefix = name
            position = summary.columns.get_loc(name)
            parts = {
                f"{prefix}_{k}": pd.Series(
                    [v.get(k) if isinstance(v, Mapping) else None for v in values],
                    index=summary.index,
                    dtype=object,
                )
                for k in keys
            }
            summary = summary.drop(columns=name)
            for offset, (column, part) in enumerate(parts.items()):
                summary.insert(position + offset, column, part)
        elif values.map(lambda v: isinstance(v, list | tuple)).any():
            summary[name] = values.map(
                lambda v: "; ".join(map(str, v)) if isinstance(v, list | tuple) else v
            )
    return summary.reset_index()


def make_stamp(
    projection: Projection,
    scenarios: Sequence[Scenario] | None = None,
    seed: int | None = None,
    created=None,
) -> Stamp:
    """The provenance stamp of a projection's outputs (hashes need the scenarios themselves)."""
    if scenarios is not None:
        scenarios = list(scenarios)
        if len(scenarios) != len(projection):
            raise ProvenanceError(
                f"{len(scenarios)} scenarios given for a projection of {len(projection)}; "
                "expected the scenarios the projection was made from, in order"
            )
        return stamp(scenarios, seed=seed, created=created)
    return stamp(names=[str(n) for n in projection.names], seed=seed, created=created)


def calendar_year_totals(monthly: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Flows of a projection's monthly schedule summed by calendar year [unit of each line].

    Months are placed in the calendar year of their `date` (the purchase month included), unlike
    `Projection.annual`, which counts years of 12 months from the first service month as tax does.
    Balances and ratios (econ.engine.BALANCE_LINES, RATIO_LINES) do not add over a year and are
    refused.

    Parameters
    ----------
    monthly : `Projection.monthly` of one or more scenarios (a `date` column)
    columns : flow lines to total

    Returns
    -------
    DataFrame indexed by (scenario, year) where the index holds scenarios, else by year
    """
    from econ.engine import BALANCE_LINES, RATIO_LINES

    levels = [c for c in columns if c in BALANCE_LINES or c in RATIO_LINES]
    if levels:
        raise ValueError(
            f"{levels[0]} is a balance or a ratio, not a flow: it has no yearly total; expected "
            "flow lines such as revenue_usd"
        )
    year = pd.Index(pd.to_datetime(monthly["date"]).dt.year, name="year")
    keys = [year]
    if "scenario" in (monthly.index.names or []):
        keys = [monthly.index.get_level_values("scenario"), year]
    return monthly[list(columns)].groupby(keys, sort=True).sum()
