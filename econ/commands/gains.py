"""`econ gains`: what a software throughput gain is worth for a scenario, against the same without it.

Thin: loads the scenario (with --set overrides), replaces its steps by --step ones if given (those
of every vintage too, `econ.gains.with_steps`), calls econ.gains.value_gain and prints a table,
JSON or CSV. No formulas live here.

    econ gains models/scenarios/deepseek-r1-gb200-nvl72.toml
    econ gains SCENARIO --step 2026-09:+19.8% --set market.price_decline_annual=0.6 --format json
    econ gains SCENARIO --step-from-catalog v6.0-6f6e7f09 v6.1-48ef0995
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from typing import TYPE_CHECKING

from econ.commands import SCENARIO_HELP, add_format, add_overrides, say_warnings, scenario_path
from econ.files import atomic_write  # standard library only

if TYPE_CHECKING:  # the work loads when the command runs (econ/commands/__init__.py)
    import pandas as pd

    from econ.gains import GainValue

_VALUE_ROWS = (
    ("npv_usd_per_gpu", "NPV of the gain per GPU [USD]", "{:,.0f}"),
    ("npv_usd_per_rack", "NPV of the gain per rack [USD]", "{:,.0f}"),
    ("npv_usd_fleet", "NPV of the gain, fleet [USD]", "{:,.0f}"),
    ("lcot_change_share", "Change in levelized cost", "{:+.2%}"),
    ("tokens_change_share", "Change in tokens over the horizon", "{:+.2%}"),
    ("gpus_avoided", "GPUs not bought for the same tokens", "{:,.1f}"),
    ("racks_avoided", "Racks not bought for the same tokens", "{:,.2f}"),
    ("capex_avoided_usd", "Capex avoided [USD]", "{:,.0f}"),
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "gains",
        help="value a software throughput gain (NPV, LCOT, IRR, payback, bridge)",
        description="Value the software gains of a scenario against the same scenario without "
        "them (no steps, growth, table or MLPerf history, in any vintage either). With --step, "
        "the given steps replace the scenario's steps, and those of every vintage: they reach "
        "each vintage's GPUs in service in their months.",
    )
    p.add_argument("file", metavar="SCENARIO", help=SCENARIO_HELP)
    p.add_argument(
        "--step",
        dest="steps",
        action="append",
        default=[],
        metavar="WHEN:GAIN[:LABEL]",
        help="a throughput step, e.g. 2026-02:+19.8%% (a date, month 1 = the month after "
        "start_date) or 5:0.198 (a month number; a gain without %% is a fraction, so 5:30 is "
        "+3,000%%, warned); repeat for several",
    )
    p.add_argument(
        "--step-from-catalog",
        nargs=2,
        metavar=("FROM_ID", "TO_ID"),
        help="a step read from two benchmark catalog rows (econ benchmarks list): per-GPU "
        "throughput of TO over FROM, dated at TO's publication; the caveats become warnings",
    )
    p.add_argument(
        "--step-at",
        metavar="WHEN",
        help="date (YYYY-MM) or month number of the --step-from-catalog step instead of the "
        "later row's publication",
    )
    add_overrides(
        p,
        "override a field by dotted path (TOML value), e.g. market.price_decline_annual=0.6",
    )
    add_format(p)
    p.add_argument("--out", metavar="FILE", help="write the output to FILE instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from econ.export import csv_text
    from econ.gains import (
        GainsError,
        bare_fraction_note,
        parse_step,
        step_from_catalog,
        value_gain,
        vintage_steps_replaced,
        with_steps,
    )
    from econ.scenario import load_scenario

    if args.step_at and not args.step_from_catalog:
        raise GainsError("--step-at dates a --step-from-catalog step; give --step-from-catalog")
    _check_out(args.out, args.format)
    replacing = bool(args.steps or args.step_from_catalog)
    overrides = list(args.overrides)
    if replacing:
        # the file's steps, which the given ones replace, are dropped before it is validated:
        # one beyond a horizon that --set shortens would refuse the run
        overrides.append("throughput.steps=[]")
    scenario = load_scenario(scenario_path(args.file), overrides)
    caveats: list[str] = []
    if replacing:
        steps = [parse_step(text, scenario.start_date, scenario.horizon) for text in args.steps]
        caveats = [note for note in map(bare_fraction_note, args.steps) if note]
        if args.step_from_catalog:
            step, catalog = step_from_catalog(scenario, *args.step_from_catalog, args.step_at)
            steps.append(step)
            caveats += catalog
        steps.sort(key=lambda step: step["month"])
        replaced = vintage_steps_replaced(scenario)
        caveats = [*caveats, *([replaced] if replaced else [])]
        scenario = with_steps(scenario, steps, file=args.file)
    result = value_gain(scenario)
    result = dataclasses.replace(result, warnings=[*caveats, *result.warnings])
    if args.format == "json":
        from econ.provenance import stamp

        header = stamp([scenario]).json_header()  # the scenario valued, its steps included
        text = json.dumps({**header, **result.to_json()}, indent=2, allow_nan=False)
    elif args.format == "csv":
        text = csv_text(result_frame(result))
    else:
        text = format_table(result)
    if args.out is not None:  # an empty path is refused, not read as "no --out"
        atomic_write(args.out, text if text.endswith("\n") else text + "\n", args.force)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text.rstrip("\n"))
    say_warnings(f"warning: {warning}" for warning in result.warnings)
    if args.format == "csv":  # the table and JSON hold them; a CSV has no place for them
        say_warnings(case_warning_lines(result))
    return 0


_TEXT_SUFFIXES = {".json": "json", ".csv": "csv"}
"""--out suffixes that name one of the text formats econ gains writes."""


def _check_out(out: str | None, format: str) -> None:
    """Refuse an --out file whose suffix names a format other than the one written: the table
    or JSON text went into gains.xlsx (`econ project --out` writes a workbook by its suffix),
    gains.parquet or gains.csv, exit 0, and the file opened nowhere."""
    from pathlib import Path

    from econ.gains import GainsError

    if not out:
        return
    suffix = Path(out).suffix.lower()
    named = _TEXT_SUFFIXES.get(suffix)
    if named == format or (named is None and suffix not in {".xlsx", ".xls", ".parquet"}):
        return
    ext = ".txt" if format == "table" else f".{format}"
    if named is None:
        raise GainsError(
            f"--out {out}: econ gains writes text (--format {format}), not a {suffix} file; "
            f"expected a {ext} file (econ project --out writes workbooks and Parquet)"
        )
    raise GainsError(
        f"--out {out}: a {suffix} file, but --format is {format}; expected --format {named}, "
        f"or a {ext} file"
    )


def result_frame(result: GainValue) -> pd.DataFrame:
    """All figures as rows of section, metric, base, gain, delta (for CSV)."""
    import pandas as pd

    rows = []
    for key, b in result.base.items():
        if key == "warnings":
            continue
        if isinstance(b, dict):
            for part, value in b.items():
                rows.append(
                    (
                        "summary",
                        f"{key}.{part}",
                        value,
                        result.gain[key][part],
                        result.delta[key][part],
                    )
                )
        else:
            rows.append(("summary", key, b, result.gain[key], result.delta.get(key)))
    for key, value in result.value.items():
        rows.append(("value", key, None, None, value))
    for entry in result.bridge:
        rows.append(("bridge", entry["driver"], None, None, entry["npv_usd"]))
    for row in result.ebitda_by_year.itertuples(index=False):
        rows.append(
            ("ebitda_by_year", f"year {row.year}", row.base_usd, row.gain_usd, row.delta_usd)
        )
    return pd.DataFrame(rows, columns=["section", "metric", "base", "gain", "delta"])


def _fmt(fmt: str, value) -> str:
    """A figure, or n/a where it is undefined (None, NaN or infinite; the warnings say why)."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    from econ.cli import table_cell

    return table_cell(fmt, value)


def format_table(result: GainValue) -> str:
    """Base, gain and change side by side; then what the gain is worth, the bridge, EBITDA by year."""
    from econ.cli import summary_rows
    from econ.gains import COMPARED_METRICS, steps_text, year_label
    from econ.text import clipped

    vintages = [
        f"vintage {clipped(v['vintage'])}: "
        + "; ".join(part for part in (steps_text(v["steps"]), v["trajectory"]) if part)
        for v in result.vintage_gains
    ]
    gains = "; ".join(
        part for part in (steps_text(result.steps), result.trajectory, *vintages) if part
    )
    lines = [f"Value of the gains of {result.name}" + (f": {gains}" if gains else "")]
    rows = [("metric", "base", "gain", "change")]

    for key, label, fmt in (row for row in summary_rows() if row[0] in COMPARED_METRICS):
        change = result.delta.get(key)
        if fmt.endswith("%}"):  # a change of a rate, in percentage points ("+23.16 pts")
            change_fmt = "{:+.2f} pts"
            change = None if change is None else change * 100.0
        else:
            change_fmt = fmt.replace("{:", "{:+") if "+" not in fmt else fmt
        rows.append(
            (
                label,
                _fmt(fmt, result.base[key]),
                _fmt(fmt, result.gain[key]),
                _fmt(change_fmt, change),
            )
        )
    lines += _grid(rows)
    lines.append("")
    lines += _grid(
        [("what the gain is worth", "")]
        + [(label, _fmt(fmt, result.value[key])) for key, label, fmt in _VALUE_ROWS]
    )
    lines.append("")
    bridge = [("NPV bridge by driver", "USD")]
    bridge += [(e["driver"], _fmt("{:+,.0f}", e["npv_usd"])) for e in result.bridge]
    bridge.append(("= change in NPV", _fmt("{:+,.0f}", result.delta["npv_usd"])))
    lines += _grid(bridge)
    lines.append("")
    years = [("EBITDA by year", "base", "gain", "change")]
    for row in result.ebitda_by_year.itertuples(index=False):
        years.append(
            (
                year_label(row.year, result.base.get("horizon_months")),
                _fmt("{:,.0f}", row.base_usd),
                _fmt("{:,.0f}", row.gain_usd),
                _fmt("{:+,.0f}", row.delta_usd),
            )
        )
    lines += _grid(years)
    return "\n".join(lines + case_warning_lines(result))


def case_warning_lines(result: GainValue) -> list[str]:
    """The warnings of the projections without and with the gain, "warning [base]: ..." and
    "warning [gain]: ..."."""
    return [
        f"warning [{case}]: {warning}"
        for case in ("base", "gain")
        for warning in getattr(result, case)["warnings"]
    ]


def _grid(rows) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out
