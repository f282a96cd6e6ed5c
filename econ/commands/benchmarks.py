"""`econ benchmarks list|show`: browse the MLPerf catalog and see each row's provenance checks.

Thin: parse arguments, call econ.benchmarks, print.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from econ.commands import Number, add_format, examples, lazy
from econ.commands.throughput import table
from econ.labels import plain_number

bench = lazy("econ.benchmarks")  # pandas and the catalog load when a command runs

LIST_COLUMNS = (
    "id", "round", "submitter", "division", "availability", "accelerator", "accelerator_count",
    "benchmark", "scenario", "result", "metric_unit", "tokens_per_s_per_gpu", "duplicate_of",
)  # fmt: skip


def register(commands) -> None:
    parser = commands.add_parser(
        "benchmarks", help="browse the MLPerf Inference LLM catalog (v4.0 to v6.1, vendor claims)"
    )
    sub = parser.add_subparsers(dest="benchmarks_command", metavar="ACTION", required=True)

    p = sub.add_parser(
        "list",
        help="catalog rows matching filters",
        **examples(
            "econ benchmarks list --model deepseek-r1 --scenario Server --round v6.1",
            "econ benchmarks list --hardware gb200-nvl72 --no-duplicates --limit 10",
        ),
    )
    p.add_argument("--model", help="benchmark or model name substring, e.g. deepseek-r1")
    p.add_argument("--accelerator", help="accelerator name substring, e.g. GB200")
    p.add_argument("--hardware", help="hardware key, e.g. gb200-nvl72")
    p.add_argument("--submitter", help="submitter substring")
    p.add_argument("--round", help="e.g. v6.1")
    p.add_argument("--scenario", help="Server, Offline or Interactive")
    p.add_argument("--division", help="closed or open")
    p.add_argument("--availability", help="available, preview or rdi")
    p.add_argument(
        "--gpus",
        type=Number(what="a number", gt=0),
        help="accelerator count, as MLPerf counts them (the table's Accel. column; a dual-GPU "
        "board is one)",
    )
    p.add_argument(
        "--no-duplicates", action="store_true", help="hide 99.9 rows that repeat a 99 row"
    )
    p.add_argument(
        "--limit",
        type=Number(int, what="a number of rows", ge=1),
        metavar="N",
        help="show at most N rows (default: all)",
    )
    add_format(p)
    p.set_defaults(run=_cmd_list)

    s = sub.add_parser(
        "show",
        help="one row: every source column and its provenance checks",
        **examples("econ benchmarks show v6.1-d60624bb --hardware gb300-nvl72"),
    )
    s.add_argument("id", help="row id (or a unique prefix)")
    s.add_argument("--hardware", help="scenario hardware key, for the silicon check")
    add_format(s, ("table", "json"))
    s.set_defaults(run=_cmd_show)


def _cmd_list(args) -> int:
    filters = {
        k: getattr(args, k)
        for k in (
            "model", "accelerator", "hardware", "submitter", "round", "scenario", "division",
            "availability", "gpus",
        )
    }  # fmt: skip
    catalog = bench.load_catalog()
    bench.check_hardware_key(args.hardware, catalog)
    rows = bench.filter_catalog(catalog, **filters)
    if args.no_duplicates:
        rows = rows[rows["duplicate_of"] == ""]
    total = len(rows)
    gaps = _partial_rounds(args.round)
    if args.limit is not None:
        rows = rows.head(args.limit)
    if args.format == "csv":
        from econ.export import csv_text

        sys.stdout.write(csv_text(rows))
    elif args.format == "json":
        records = rows.astype(object).where(rows.notna(), None).to_dict("records")
        data = {"count": total, "rows": records, "partial_rounds": gaps}
        print(json.dumps(data, indent=2, allow_nan=False, default=str))
    else:
        header = ["id", "round", "submitter", "div", "avail", "accelerator", "Accel.",
                  "benchmark", "scenario", "result", "unit", "tok/s/GPU", "flags"]  # fmt: skip
        body = []
        for r in rows.itertuples():
            flags = "".join(
                f
                for f, on in (
                    ("C", r.kind == "vendor claim"),
                    ("P", r.availability == "preview"),
                    ("R", r.availability == "rdi"),
                    ("O", r.division == "open"),
                    ("D", bool(r.duplicate_of)),
                    ("I", r.inferred_flag == 1),
                    ("M", bench.mixed_accelerators(r.accelerator)),
                    ("B", r.gpus_per_accelerator > 1),
                )
                if on
            )
            body.append(
                [
                    r.id, r.round, r.submitter,
                    r.division if isinstance(r.division, str) and r.division else "-",
                    r.availability if isinstance(r.availability, str) and r.availability else "-",
                    (r.accelerator or "-")[:34] if isinstance(r.accelerator, str) else "-",
                    "-" if math.isnan(r.accelerator_count) else f"{r.accelerator_count:g}",
                    r.benchmark, r.scenario, plain_number(r.result), r.metric_unit,
                    "-" if np.isnan(r.tokens_per_s_per_gpu) else f"{r.tokens_per_s_per_gpu:,.1f}",
                    flags or "-",
                ]
            )  # fmt: skip
        if body:
            print(table(header, body))
        print(
            f"{total} row{'' if total == 1 else 's'}"
            + (f" (showing {len(rows)})" if len(rows) < total else "")
            + "; flags: C vendor claim (no result file), P preview, R RDI (research, development or "
            "internal), O open division, D 99.9 row repeating a 99 row, I inferred, M mixed "
            "accelerators (tok/s/GPU averages two chips), B boards of several GPUs (tok/s/GPU "
            "divides by Accel. x GPUs per board); Accel.: accelerators as MLPerf counts them",
            file=sys.stderr,
        )
        for note in _gap_notes(gaps, total):
            print(note, file=sys.stderr)
    return 0


def _partial_rounds(round_filter: str | None) -> dict[str, str]:
    """The rounds the catalog holds only in part among those a list spans (`--round`'s, else
    all), with what is known to be missing (econ.benchmarks.known_gaps)."""
    gaps = bench.known_gaps()
    if not round_filter:
        return gaps
    return {r: gap for r, gap in gaps.items() if r.lower() == round_filter.lower()}


def _gap_notes(gaps: dict[str, str], total: int) -> list[str]:
    """The notes under a list that spans a round the catalog holds only in part: a result not
    listed may still have been published (with no row matching, that is said first)."""
    if not gaps:
        return []
    rounds = " and ".join(gaps)
    if total == 0:
        which = "a round" if len(gaps) == 1 else "rounds"
        what = f"no row matches in {rounds}, {which} the catalog holds only in part"
    else:
        what = f"the catalog holds {rounds} only in part"
    notes = [
        f"note: {what} (some submitters' results are missing): a result not listed may still "
        "have been published"
    ]
    if len(gaps) == 1:
        notes += [f"note: {r}: {gap}" for r, gap in gaps.items()]
    return notes


def _cmd_show(args) -> int:
    catalog = bench.load_catalog()
    row = bench.get_row(args.id, catalog)
    bench.check_hardware_key(args.hardware, catalog)
    checks = bench.row_checks(row, hardware=args.hardware, catalog=catalog)
    if args.format == "json":
        data = {
            "provenance": bench.provenance(row),
            "row": {
                k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()
            },
            "warnings": checks,
        }
        print(json.dumps(data, indent=2, allow_nan=False, default=str))
        return 0
    width = max(len(str(key)) for key in row.index)
    for key, value in row.items():
        if (isinstance(value, float) and math.isnan(value)) or value == "":
            value = "-"
        print(f"{key:<{width}}  {value}")
    for check in checks:
        print(f"check: {check}")
    return 0
