"""`econ refresh`: the month at which replacing a fleet with a new GPU generation maximizes NPV."""

from __future__ import annotations

import json

from econ import strict_json  # standard library only
from econ.commands import (
    SCENARIO_HELP,
    Number,
    add_format,
    add_overrides,
    say_warnings,
    scenario_path,
)

# (a refresh month is from 1: in month 0 the old fleet has not served; the horizon's bound is
# checked once the scenario is read, naming the option)
_MONTH = Number(int, field="financing_models:RateStep.month", ge=1, what="a month")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "refresh",
        help="when to replace the scenario's GPUs with one of its vintages (NPV by refresh month)",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="scenario with the new generation as a vintage (" + SCENARIO_HELP + ")",
    )
    p.add_argument("--vintage", required=True, help="name of the vintage that replaces the fleet")
    p.add_argument(
        "--mw",
        type=Number(what="a power envelope", gt=0, unit=" [MW]"),
        help="IT power envelope [MW]; default the installed fleet's",
    )
    p.add_argument(
        "--from-month",
        type=_MONTH,
        help="first candidate month (default: the vintage's purchase month, taken as when it "
        "becomes available, or the old fleet's first month in service where that is later; "
        "months before the vintage's purchase month are warned of)",
    )
    p.add_argument(
        "--to-month",
        type=_MONTH,
        help="last candidate month (default: horizon - 1, or the month before the vintage's "
        "own fleet.retire_month where that is earlier)",
    )
    add_overrides(
        p,
        "override a field of the scenario by dotted path (TOML value; repeat for several)",
    )
    add_format(p)
    p.set_defaults(run=run)


def _check_months(args, scenario) -> None:
    """Refuse --from-month or --to-month outside the months a refresh can fall in, by name."""
    from econ.fleet import RefreshError, first_retire_input, first_retire_month

    horizon = scenario.horizon
    for option, month in (("--from-month", args.from_month), ("--to-month", args.to_month)):
        if month is not None and not 1 <= month <= horizon - 1:
            raise RefreshError(
                f"{option} = {month}: expected a month from 1 to {horizon - 1} (the horizon is "
                f"{horizon} months: the old fleet serves before the refresh month, the new one "
                "after)"
            )
    first = first_retire_month(scenario)
    for option, month in (("--from-month", args.from_month), ("--to-month", args.to_month)):
        if month is not None and month < first:
            raise RefreshError(
                f"{option} = {month}: expected a month from {first}, the first the old fleet "
                f"can retire in ({first_retire_input(scenario)})"
            )


def run(args) -> int:
    from econ.fleet import first_refresh_month, last_refresh_month, refresh_analysis
    from econ.scenario import load_scenario

    scenario = load_scenario(scenario_path(args.file), args.overrides)
    _check_months(args, scenario)
    months = None
    if args.from_month is not None or args.to_month is not None:
        first = args.from_month
        if first is None:
            first = first_refresh_month(scenario, args.vintage)
        last = args.to_month
        if last is None:
            last = last_refresh_month(scenario, args.vintage)
        if first > last:
            from econ.fleet import RefreshError

            to = (
                "--to-month"
                if args.to_month is not None
                else (
                    "the last candidate month (the horizon - 1, or the month before the vintage's "
                    "own fleet.retire_month)"
                )
            )
            raise RefreshError(
                f"--from-month {first} is after {to}, {last}; expected a first candidate month "
                "at or before the last"
            )
        months = range(first, last + 1)
    result = refresh_analysis(scenario, args.vintage, months=months, power_mw=args.mw)
    table = result.table
    if args.format == "json":
        from econ.provenance import stamp

        payload = {
            **stamp([scenario]).json_header(),
            "scenario": scenario.name,
            "vintage": args.vintage,
            "best_month": result.best_month,
            "npv_keep_usd": result.npv_keep_usd,
            "npv_best_usd": result.npv_best_usd,
            "gain_usd": result.gain_usd,
            "months": json.loads(table.reset_index().to_json(orient="records")),
            "warnings": list(result.warnings),
        }
        print(strict_json.dumps(payload, indent=2))
        return 0
    say_warnings(f"warning: {w}" for w in result.warnings)
    if args.format == "csv":
        from econ.export import csv_text

        print(csv_text(table.reset_index()), end="")
    else:
        print(f"keep to the horizon:   NPV {result.npv_keep_usd:,.0f} USD")
        print(
            f"refresh in month {result.best_month}: NPV {result.npv_best_usd:,.0f} USD "
            f"({result.gain_usd:+,.0f} USD), {int(table['new_gpu_count'].iloc[0]):,} new GPUs; "
            f"the old fleet sells for {table.sale_proceeds_usd.loc[result.best_month]:,.0f} USD"
        )
        print()
        shown = table.assign(
            npv_usd=table.npv_usd.map("{:,.0f}".format),
            gain_usd=table.gain_usd.map("{:+,.0f}".format),
            irr_project_annual=table.irr_project_annual.map("{:.1%}".format),
            lcot_usd_per_mtok=table.lcot_usd_per_mtok.map("{:.4f}".format),
            sale_proceeds_usd=table.sale_proceeds_usd.map("{:,.0f}".format),
        )
        print(shown.to_string())
    return 0
