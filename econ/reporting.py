"""Tables of a projection that every writer and screen shares: the flat summary (one column per
scalar) and the provenance stamp of a projection's outputs.

The writers (econ.export for CSV, Parquet and JSON; econ.workbook for Excel) and the app read
these from here, so no writer imports another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from econ.errors import InputError
from econ.provenance import ProvenanceError, Stamp, canonical_json, stamp
from econ.scenario.models import Scenario

if TYPE_CHECKING:
    import pandas as pd

    from econ.engine import Projection


def flat_summary(projection: Projection) -> pd.DataFrame:
    """Summary with one column per scalar: object-valued metrics are spread into
    `<metric>_<key>` columns (`cost_usd_per_mtok_<component>`), lists one item a line
    (econ.text.WARNING_SEPARATOR: the warnings, one line each, split back at line feeds).

    Undefined metrics stay empty (None), never NaN strings. Metrics the engine adds later are
    written as they come.
    """
    import pandas as pd

    from econ.text import WARNING_SEPARATOR

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
                lambda v: WARNING_SEPARATOR.join(map(str, v)) if isinstance(v, list | tuple) else v
            )
    return summary.reset_index()


def make_stamp(
    projection: Projection,
    scenarios: Sequence[Scenario] | None = None,
    seed: int | None = None,
    created=None,
) -> Stamp:
    """The provenance stamp of a projection's outputs (hashes need the scenarios themselves,
    which must be those projected: `check_projected`)."""
    if scenarios is not None:
        scenarios = list(scenarios)
        check_projected(projection, scenarios, ProvenanceError)
        return stamp(scenarios, seed=seed, created=created)
    return stamp(names=[str(n) for n in projection.names], seed=seed, created=created)


MADE_FROM = "expected the scenarios the projection was made from, in order"


def check_projected(
    projection: Projection, scenarios: Sequence[Scenario], error: type[InputError] = InputError
) -> None:
    """`error` unless `scenarios` are the scenarios `projection` was made from, in order: as
    many, of the same names, and, where the projection keeps its scenarios (`project` of a list),
    of the same inputs. A writer given others would stamp one scenario's hash on another's
    figures, or show inputs beside figures they did not give (`econ verify` then finds every
    figure differing)."""
    if len(scenarios) != len(projection):
        raise error(
            f"{len(scenarios)} scenarios given for a projection of {len(projection)}; {MADE_FROM}"
        )
    names = [str(n) for n in projection.names]
    for k, (given, name) in enumerate(zip(scenarios, names, strict=True)):
        if given.name != name:
            found = f" (the projection's {names.index(given.name)})" if given.name in names else ""
            raise error(
                f"scenario {k} given is {given.name!r}{found}, but the projection's scenario {k} "
                f"is {name!r}; {MADE_FROM}"
            )
    kept = projection.scenarios
    if len(kept) != len(scenarios):
        return  # a batch of columns keeps none: its names are all there is to check
    for k, (given, projected) in enumerate(zip(scenarios, kept, strict=True)):
        if given is projected or canonical_json(given) == canonical_json(projected):
            continue
        raise error(
            f"scenario {k} given, {given.name!r}, is not the one projected under that name: "
            f"{_first_change(projected, given)}; {MADE_FROM}"
        )


def _first_change(projected: Scenario, given: Scenario) -> str:
    from econ.library.diff import input_changes  # (light: no database)

    changes = input_changes(projected, given)
    if not changes:
        return "its inputs differ"
    first = changes[0]
    more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
    return f"{first['path']} is {first['new']!r} in it, {first['old']!r} in the projection{more}"
