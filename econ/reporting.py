"""Tables of a projection that every writer and screen shares: the flat summary (one column per
scalar) and the provenance stamp of a projection's outputs.

The writers (econ.export for CSV, Parquet and JSON; econ.workbook for Excel) and the app read
these from here, so no writer imports another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from econ.provenance import ProvenanceError, Stamp, stamp
from econ.scenario.models import Scenario

if TYPE_CHECKING:
    import pandas as pd

    from econ.engine import Projection


def flat_summary(projection: Projection) -> pd.DataFrame:
    """Summary with one column per scalar: object-valued metrics are spread into
    `<metric>_<key>` columns (`cost_usd_per_mtok_<component>`), lists joined with "; ".

    Undefined metrics stay empty (None), never NaN strings. Metrics the engine adds later are
    written as they come.
    """
    import pandas as pd

    summary = projection.summary.copy()
    for name in list(summary.columns):
        values = summary[name]
        if values.dtype.kind == "f":  # undefined: None, not NaN, in every file
            summary[name] = values.astype(object).where(values.notna(), None)
        elif values.map(lambda v: isinstance(v, Mapping)).any():
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
