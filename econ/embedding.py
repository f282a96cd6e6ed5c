"""The scenario a file econ writes for others embeds (a workbook, a memo, CSV, Parquet and JSON
stamps): one that `econ verify` can recompute anywhere and that names no folder of this machine.

A scenario may read its throughput from a measured curve file (`throughput.measured.curve`,
resolved against the scenario file's folder: econ.scenario.paths). Embedded as it is, the file's
absolute path would travel in the workbook's Notes, the warnings and the memo, and `econ verify`
would refuse the file (it opens no file a document names: econ.memo.verify.refuse_files). So the
curve is resolved to the figures the engine takes from it (econ.throughput.resolve) and named by
its file name and SHA-256 in [sources]: the same figures, without the file.

The writers (econ.export, econ.workbook) know the engine only as a type (econ.reporting); this
module projects again where a scenario changes, for econ.export and econ.memo.build.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from econ.scenario.models import Scenario

if TYPE_CHECKING:
    from econ.engine import Projection
    from econ.provenance import Stamp


def embeddable(scenario: Scenario) -> Scenario:
    """The scenario as a file sent elsewhere (a workbook, a memo, a table) embeds and stamps it:
    each measured curve it reads from a file of this machine (`throughput.measured.curve`, the
    scenario's or a vintage's) resolved to the figures the engine takes from it, the tokens/s
    per GPU at the SLO and, where the scenario gives none, the input tokens per output token;
    the curve named by its file name and SHA-256 in [sources] (a vintage's: in its
    `throughput.source`), with the caveats of its operating point. It projects to the same
    figures, names no folder of this machine and opens no file, so `econ verify` recomputes it
    anywhere. The scenario itself where it reads no file."""
    from econ.scenario import scenario_to_dict, validate_dict
    from econ.scenario.paths import path_fields

    data = scenario_to_dict(scenario)
    if not any(table[key] for _, table, key in path_fields(data)):
        return scenario
    rows = scenario.expand()  # the scenario's own fleet, then each vintage as projected
    sources = data.setdefault("sources", {})
    base = _freeze_curve(rows[0], data["throughput"])
    if base is not None:
        # The file's own sources (its curve's, its format's...) name fields the embedded scenario
        # no longer has: they are kept, in the source of the figures read from the file.
        given = [f"{k}: {sources.pop(k)}" for k in list(sources) if _in_measured(k)]
        if given:
            base["throughput.tokens_per_s_per_gpu"] += f"; as the scenario gave {'; '.join(given)}"
        sources.update(base)
    for i, vintage in enumerate(data.get("vintages", ())):
        # Each vintage that reads a curve (its own, or the scenario's at its own SLO) is given
        # its own figures: the scenario's, frozen above, are those of the scenario's SLO.
        given = vintage.get("throughput", {})
        described = _freeze_curve(rows[i + 1], given)
        if described is not None:
            given["source"] = "; ".join(described.values())
            vintage["throughput"] = given
    return validate_dict(data)


def curve_paths(scenario: Scenario) -> list[str]:
    """The measured curve files the scenario's fleet or a vintage's reads, once each, in order."""
    return list(
        dict.fromkeys(
            row.throughput.measured.curve
            for row in scenario.expand()
            if row.throughput.measured is not None and row.throughput.measured.curve
        )
    )


def without_folders(text: str, paths: Sequence[str]) -> str:
    """`text` with each of `paths` (files of this machine) named by its file name alone."""
    from pathlib import Path

    for path in paths:
        given = Path(path)
        text = text.replace(str(given), given.name).replace(str(given.parent) + "/", "")
    return text


def curve_names(scenario: Scenario) -> list[str]:
    """The file names (no folder) of `curve_paths`."""
    from pathlib import Path

    return [Path(path).name for path in curve_paths(scenario)]


def _in_measured(path: str) -> bool:
    """Whether a [sources] key names the measured section or one of its fields."""
    return path.split(".")[:2] == ["throughput", "measured"]


def _freeze_curve(row: Scenario, section: dict) -> dict[str, str] | None:
    """Replace, in `section` (plain throughput data), a measured curve file by the figures
    `row` (the scenario or vintage as projected) takes from it; the sources of those figures
    by dotted path, or None where `row` reads no curve file."""
    from pathlib import Path

    from econ.throughput.resolve import at_slo, resolve_throughput

    measured = row.throughput.measured
    if measured is None or not measured.curve:
        return None
    # (the scenario's name and description as the engine passes them: the same caveats)
    resolved = resolve_throughput(
        row.throughput, row.fleet.hardware, (row.name, row.description)
    )
    curve = Path(measured.curve)
    read = [f"format {measured.format}"]
    read += [f"workload {measured.workload!r}"] if measured.workload else []
    read += [f"{measured.gpus} GPUs"] if measured.gpus else []
    # (the hash of the content the figures were read from, not of the file read again)
    named = f"measured curve {curve.name} (SHA-256 {resolved.curve_sha256}; {', '.join(read)})"
    caveats = "".join(f"; {without_folders(w, [measured.curve])}" for w in resolved.warnings)
    section.pop("measured", None)
    section["tokens_per_s_per_gpu"] = resolved.tokens_per_s_per_gpu
    out = {
        "throughput.tokens_per_s_per_gpu": (
            f"{named}: {resolved.tokens_per_s_per_gpu:,.1f} tokens/s per GPU "
            f"{at_slo(row.throughput.slo)}{caveats}"
        )
    }
    ratio = resolved.input_tokens_per_output_token
    if row.throughput.input_tokens_per_output_token is None and ratio is not None:
        section["input_tokens_per_output_token"] = ratio
        out["throughput.input_tokens_per_output_token"] = (
            f"{named}: {ratio:.4g} input tokens per output token, from "
            f"{resolved.input_ratio_source}"
        )
    return out


def embedded(
    projection: Projection, scenarios: Sequence[Scenario]
) -> tuple[Projection, list[Scenario]]:
    """The projection and scenarios a file `econ verify` recomputes holds (the workbook, the
    memo: `embeddable`): projected again where a scenario reads a curve file (the same figures;
    the curve's caveats in its source, not in the warnings), as given otherwise."""
    made = [embeddable(s) for s in scenarios]
    if all(a is b for a, b in zip(made, scenarios, strict=True)):
        return projection, list(scenarios)
    from econ.engine import project  # (the writers know the engine only as a type: here it runs)

    return project(made), made


def named_by_file(projection: Projection, scenarios: Sequence[Scenario]) -> Projection:
    """The projection as a table (JSON, CSV, Parquet) holds it: the one the scenarios gave, its
    warnings (the curve's caveats among them) naming each measured curve file by its file name
    (`without_folders`); `projection` itself where no scenario reads a curve file."""
    import dataclasses

    paths = [path for scenario in scenarios for path in curve_paths(scenario)]
    if not paths:
        return projection
    warnings = [[without_folders(w, paths) for w in found] for found in projection.warnings]
    return dataclasses.replace(projection, warning_source=lambda: warnings, explained=True)


def embedded_stamp(
    projection: Projection, scenarios: Sequence[Scenario], seed=None, created=None
) -> Stamp:
    """The stamp of the files written of `projection` (made from `scenarios`, as given): each
    scenario's hash that of the scenario as embedded (`embeddable`: the file names no folder, and
    the hash is the one `econ verify` finds in a workbook or memo), the curve files
    (`Stamp.curves`) those the scenarios given read."""
    import dataclasses

    from econ.provenance import scenario_sha256
    from econ.reporting import make_stamp

    st = make_stamp(projection, scenarios, seed=seed, created=created)
    pairs = tuple((s.name, scenario_sha256(embeddable(s))) for s in scenarios)
    return dataclasses.replace(st, scenarios=pairs)
