"""`econ export`: write a scenario's projection as an Excel workbook, CSV, Parquet or JSON.

Thin: loads the scenarios (with --set overrides), projects them and hands the projection and the
scenarios to econ.export, which writes every requested file atomically (all or none) with
provenance stamps. No formulas live here.

    econ export models/scenarios/deepseek-r1-gb200-nvl72.toml --xlsx seed.xlsx
    econ export deepseek-r1-gb200-nvl72 --xlsx seed.xlsx --csv seed.csv --json seed.json --force
    econ export SCENARIO --set market.price_usd_per_mtok=0.5 --parquet out.parquet
    econ export SCENARIO --out seed.xlsx      (the format by the suffix, as `econ project --out`)

A bare name that is not a file is looked up among the ready-made scenarios (models/scenarios).
Exit codes: 0 written, 2 no output asked for, 3 invalid scenario or an output that cannot be
written (a path naming no file of its format: empty, ending with "/", a folder, a suffix alone;
an existing file without --force, missing folder, full disk, permissions).
"""

from __future__ import annotations

import sys

from econ.commands import (
    SCENARIO_HELP,
    add_overrides,
    check_distinct_names,
    say_warnings,
    say_wrote,
    scenario_path,
    warning_lines,
)

EXIT_OK, EXIT_USAGE = 0, 2
FORMAT_OPTIONS = ("xlsx", "csv", "parquet", "json")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a projection as an Excel workbook with live formulas, CSV, Parquet or JSON",
        description="Project scenarios and write them for finance: an Excel workbook whose main "
        "lines are live formulas over an Assumptions sheet, CSV or Parquet schedules, or the JSON "
        "summary. Every output is stamped (econ version, scenario hash, catalog versions, time) "
        "and written atomically; existing files are kept unless --force.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="SCENARIO",
        help=SCENARIO_HELP,
    )
    add_overrides(
        p,
        "override a field by dotted path (TOML value), e.g. market.price_usd_per_mtok=0.5",
    )
    p.add_argument("--xlsx", metavar="PATH", help="Excel workbook with live formulas")
    p.add_argument("--csv", metavar="PATH", help=_beside("monthly schedule CSV", ".csv"))
    p.add_argument(
        "--parquet", metavar="PATH", help=_beside("monthly schedule Parquet", ".parquet")
    )
    p.add_argument("--json", metavar="PATH", help="summary metrics as JSON")
    p.add_argument(
        "--out",
        metavar="PATH",
        help="as `econ project --out`: the format chosen by the suffix (.xlsx, .csv, .parquet, "
        ".json), as the option of that format",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files, and remove the tranche files an earlier output "
        "of the same name left where these scenarios have no tranches",
    )
    p.set_defaults(run=run)


def _beside(what: str, suffix: str) -> str:
    """An option's help for a table output and the files written beside it."""
    return (
        f"{what}; beside it the summary (<stem>.summary{suffix}) and, for scenarios with a "
        f"capital stack's tranches, each tranche's monthly lines (<stem>.tranches{suffix}) and "
        f"their summary (<stem>.tranches.summary{suffix})"
    )


def run(args) -> int:
    from econ.engine import project
    from econ.export import output_kind, write_outputs
    from econ.scenario import load_scenario

    # Each path checked before the projection (ExportError, exit 3, naming the option): an empty
    # one is refused, not taken for an option not given.
    targets = {}
    for kind in FORMAT_OPTIONS:
        if getattr(args, kind) is not None:
            output_kind(getattr(args, kind), kind, option=f"--{kind}")
            targets[kind] = getattr(args, kind)
    if args.out is not None:
        kind = output_kind(args.out, option="--out")
        if kind in targets:
            print(
                f"error: --out {args.out} and --{kind} {targets[kind]} both ask for the {kind} "
                "output; expected one path per format",
                file=sys.stderr,
            )
            return EXIT_USAGE
        targets[kind] = args.out
    if not targets:
        print(
            "error: nothing to write; give at least one of --xlsx, --csv, --parquet, --json "
            "(or --out PATH, the format by its suffix)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    scenarios = [load_scenario(scenario_path(f), args.overrides) for f in args.files]
    check_distinct_names(args.files, scenarios)
    projection = project(scenarios)
    say_wrote(write_outputs(projection, targets, overwrite=args.force, scenarios=scenarios))
    # as `econ project --out` does: a covenant breach or a null figure must not pass unseen
    say_warnings(warning_lines(projection.summary_records()))
    return EXIT_OK
