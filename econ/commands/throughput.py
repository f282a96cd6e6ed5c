"""`econ throughput import|point|history`: measured curves, SLO operating points, gain history.

This module owns the `econ throughput` group; econ/commands/simulate.py adds `simulate` and
`calibrate` to it through `register_throughput`. Thin: parse arguments, call
econ.throughput.importers / operating_point / history, print or write.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import math
import sys

from econ import strict_json  # standard library only
from econ.bounds import MAX_GPU_COUNT
from econ.commands import LazyChoices, Number, add_format, lazy, say_warnings
from econ.errors import InputError, in_file
from econ.labels import counted
from econ.text import clipped, printable

importers = lazy("econ.throughput.importers")  # pandas and the parsers load when a command runs
operating = lazy("econ.throughput.operating_point")
FORMAT_CHOICES = LazyChoices(lambda: importers.FORMATS, first=("auto",))

POINT_COLUMNS = (
    ("concurrency", "conc", "{:g}"),
    ("request_rate_per_s", "req/s", "{:g}"),
    ("output_tokens_per_s", "out tok/s", "{:,.1f}"),
    ("output_tokens_per_s_per_gpu", "out tok/s/GPU", "{:,.1f}"),
    ("gpu_count", "GPUs", "{:g}"),
    ("tokens_per_s_per_user", "tok/s/user", "{:,.1f}"),
    ("ttft_s_p99", "TTFT p99 s", "{:.3f}"),
    ("tpot_s_p99", "TPOT p99 ms", "ms"),
    ("input_tokens_mean", "ISL", "{:,.0f}"),
    ("output_tokens_mean", "OSL", "{:,.0f}"),
)


RUN_GPUS = Number(what="a number of GPUs", whole=True, ge=1, le=MAX_GPU_COUNT)
"""`--gpus` of import and point: a whole number from 1 to MAX_GPU_COUNT, as the importers take
it, refused as the option's value (exit 3, naming --gpus), never as the file's."""

ALLOW_INCOMPLETE_HELP = "import an interrupted MLPerf Endpoints run (state interrupted) anyway"
ENDPOINT_COLUMNS = (
    ("ttft_s_p90", "TTFT p90 s", "{:.3f}"),
    ("ttft_s_p95", "TTFT p95 s", "{:.3f}"),
    ("tpot_s_p90", "TPOT p90 ms", "ms"),
    ("tokens_per_s_per_user_by_concurrency", "tok/s/user v0.7", "{:,.1f}"),
    ("output_tokens_per_s_per_kw_provisioned", "tok/s/kW prov.", "{:,.1f}"),
)


def table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned first column, right-aligned others, a rule under the header; each cell one
    printable line (a benchmark file's model, workload or config may hold escape sequences),
    cut to QUOTED_LIMIT characters (`clipped`: a config of 100,000 characters padded every row
    to its width)."""
    shown = [[clipped(c) for c in row] for row in [header, *rows]]
    widths = [max(len(r[i]) for r in shown) for i in range(len(header))]
    lines = []
    for j, row in enumerate(shown):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fmt(value, pattern: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if pattern == "ms":
        return f"{value * 1000:.1f}"
    return pattern.format(value)


def register(commands) -> None:
    parser = commands.add_parser(
        "throughput", help="import measured throughput curves and pick SLO operating points"
    )
    sub = parser.add_subparsers(dest="throughput_command", metavar="ACTION", required=True)

    p = sub.add_parser(
        "import",
        help="read benchmark result files (vLLM, SGLang, GenAI-Perf, AIPerf, MLPerf, MLPerf "
        "Endpoints, InferenceX, trtllm-bench, generic CSV) or an MLPerf Endpoints submission "
        "folder into one curve",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="result file, or an Endpoints submission folder"
    )
    p.add_argument(
        "--format",
        default="auto",
        choices=FORMAT_CHOICES,
        metavar="FORMAT",
        help="input format: %(choices)s (default %(default)s)",
    )
    p.add_argument("--gpus", type=RUN_GPUS, help="GPUs that served the run (overrides the file)")
    p.add_argument("--allow-incomplete", action="store_true", help=ALLOW_INCOMPLETE_HELP)
    p.add_argument("--out", metavar="CURVE.csv", help="write the curve as CSV")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument(
        "--show",
        choices=("table", "json", "csv"),
        default="table",
        help="what to print: %(choices)s (default %(default)s)",
    )
    p.set_defaults(run=_cmd_import)

    q = sub.add_parser("point", help="the operating point an SLO allows on a curve")
    q.add_argument("files", nargs="+", metavar="CURVE", help="curve CSV, any result file or folder")
    q.add_argument(
        "--input-format",
        default="auto",
        choices=FORMAT_CHOICES,
        metavar="FORMAT",
        help="input format: %(choices)s (default %(default)s)",
    )
    q.add_argument("--gpus", type=RUN_GPUS, help="GPUs that served the run (overrides the file)")
    q.add_argument("--allow-incomplete", action="store_true", help=ALLOW_INCOMPLETE_HELP)
    ttft = q.add_mutually_exclusive_group()
    ttft.add_argument(
        "--ttft-p99-s", type=_limit("seconds"), metavar="S", help="TTFT P99 limit (default: none)"
    )
    ttft.add_argument(
        "--ttft-p99-ms", type=_limit("milliseconds"), metavar="MS", help="the same in milliseconds"
    )
    tpot = q.add_mutually_exclusive_group()
    tpot.add_argument(
        "--tpot-p99-s", type=_limit("seconds"), metavar="S", help="TPOT P99 limit (default: none)"
    )
    tpot.add_argument(
        "--tpot-p99-ms", type=_limit("milliseconds"), metavar="MS", help="the same in milliseconds"
    )
    for stat in ("p90", "p95"):
        q.add_argument(
            f"--ttft-{stat}-s",
            type=_limit("seconds"),
            metavar="S",
            help=f"TTFT {stat.upper()} limit (MLPerf Endpoints: P90 in v1.0, P95 in v0.7)",
        )
    q.add_argument(
        "--tpot-p90-ms", type=_limit("milliseconds"), metavar="MS", help="TPOT P90 limit"
    )
    q.add_argument(
        "--min-tokens-per-s-per-user",
        type=_limit("tokens/s"),
        metavar="TOK_S",
        help="least output speed per user (default: none)",
    )
    reading = q.add_mutually_exclusive_group()
    reading.add_argument(
        "--interpolate",
        action="store_const",
        const="interpolate",
        dest="reading",
        help="interpolate between measured points (the default except on MLPerf Endpoints curves)",
    )
    reading.add_argument(
        "--step",
        action="store_const",
        const="step",
        dest="reading",
        help="only measured points, MLPerf's step-function reading (the default on Endpoints curves)",
    )
    limit = q.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=SECONDS",
        help="other latency limit, e.g. ttft_s_p95=5.77 (%(columns)s)",
    )
    limit.columns = LazyChoices(lambda: operating.LATENCY_COLUMNS)  # for %(columns)s in the help
    q.add_argument(
        "--workload",
        help="pick one model/hardware/workload group, or serving configuration (substring)",
    )
    q.add_argument(
        "--usd-per-gpu-hour",
        type=Number(what="a price", gt=0),
        help="also show the cost per million output tokens",
    )
    add_format(q, ("table", "json"))
    q.set_defaults(run=_cmd_point)

    h = sub.add_parser("history", help="software gains of one platform across MLPerf rounds")
    h.add_argument("--model", required=True, help="benchmark family, e.g. deepseek-r1")
    h.add_argument("--scenario", required=True, help="Server, Offline or Interactive")
    silicon = h.add_mutually_exclusive_group(required=True)
    silicon.add_argument("--hardware", help="hardware key, e.g. gb200-nvl72")
    silicon.add_argument("--accelerator", help="accelerator name substring, e.g. GB200")
    h.add_argument("--submitter", help="submitter substring")
    h.add_argument("--gpus", type=Number(), help="only systems of this many accelerators")
    h.add_argument("--include-preview", action="store_true", help="include Preview results")
    h.add_argument("--start-date", help="scenario start (YYYY-MM-DD): show steps as months")
    add_format(h, ("table", "json"))
    h.set_defaults(run=_cmd_history)

    try:  # the simulator adds `simulate` and `calibrate` to this group when it is installed
        from econ.commands.simulate import register_throughput
    except ImportError:
        return
    register_throughput(sub)


def _cmd_import(args) -> int:
    curve = importers.import_files(
        args.files, args.format, args.gpus, allow_incomplete=args.allow_incomplete
    )
    if args.out:
        path = importers.write_curve_csv(curve, args.out, overwrite=args.force)
        print(f"wrote {path} ({counted(len(curve.points), 'point')})", file=sys.stderr)
    if args.show == "json":
        records = curve.points.replace({math.inf: "inf"}).astype(object)
        records = records.where(records.notna(), None).to_dict("records")
        print(
            strict_json.dumps(
                {
                    "provenance": curve.provenance,
                    "warnings": list(curve.warnings),
                    "points": records,
                },
                indent=2,
            )
        )
    elif args.show == "csv":
        from econ.throughput.importers import curve_csv_text

        sys.stdout.write(curve_csv_text(curve))
    elif not args.out:
        print(_provenance_text(curve.provenance))
        columns = POINT_COLUMNS + tuple(
            c for c in ENDPOINT_COLUMNS if c[0] in curve.points and curve.points[c[0]].notna().any()
        )
        header = ["#"] + [label for _, label, _ in columns] + ["workload", "config"]
        rows = [
            [str(i)]
            + [fmt(row[c], pattern) for c, _, pattern in columns]
            + [row["workload"] or "-", (row["config"] or "-")[:40]]
            for i, row in curve.points.iterrows()
        ]
        print(table(header, rows))
    say_warnings(f"warning: {warning}" for warning in curve.warnings)
    return 0


def _provenance_text(prov: dict) -> str:
    keys = ("format", "tool", "tool_version", "model", "hardware", "precision", "gpu_count_basis")
    keys += ("throughput_window", "tokens_per_s_per_user_definition", "power_basis")
    names = ("tool", "tool_version", "model", "hardware", "precision")  # from the file: clipped
    parts = [
        f"{k}: {clipped(value) if k in names else printable(value, line=True)}"
        for k in keys
        if k in prov
        for value in [prov.get(k) or "-"]
    ]
    parts.append(f"sha256: {str(prov.get('file_sha256', ''))[:16]}...")
    return "; ".join(parts)


_LIMIT_OPTIONS = (
    ("ttft_p99_s", "--ttft-p99-s", "seconds"),
    ("ttft_p99_ms", "--ttft-p99-ms", "milliseconds"),
    ("tpot_p99_s", "--tpot-p99-s", "seconds"),
    ("tpot_p99_ms", "--tpot-p99-ms", "milliseconds"),
    ("ttft_p90_s", "--ttft-p90-s", "seconds"),
    ("ttft_p95_s", "--ttft-p95-s", "seconds"),
    ("tpot_p90_ms", "--tpot-p90-ms", "milliseconds"),
    ("min_tokens_per_s_per_user", "--min-tokens-per-s-per-user", "tokens/s"),
)
"""The SLO options of `econ throughput point`: (argparse dest, option, unit)."""


def _limit_expected(unit: str) -> str:
    return f"a positive finite number of {unit} (leave the option out for no limit)"


def _limit(unit: str) -> Number:
    """An SLO option's type: nan would silently mean "no limit" and inf is none either."""
    return Number(gt=0, expected=_limit_expected(unit))


def _check_limit(option: str, value: float, unit: str) -> None:
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{option} = {value:g}: expected {_limit_expected(unit)}")


def _limits(args) -> tuple[dict, tuple[str, ...]]:
    """The latency limits of --limit and the p90/p95 options, checked; and the warnings of the
    limits in seconds a scenario's throughput.slo would get (econ.plausibility: 80 typed in
    --tpot-p99-s for 80 ms is 80 s, which limits nothing)."""
    from econ.plausibility import SLO_BANDS, slo_warning

    in_seconds = []  # (option, metric, value [s])
    for dest, option, unit in _LIMIT_OPTIONS:
        if getattr(args, dest) is not None:
            _check_limit(option, getattr(args, dest), unit)
            if unit == "seconds":
                in_seconds.append((option, option[2:6], getattr(args, dest)))
    limits = {}
    for text in args.limit:
        name, sep, value = text.partition("=")
        if not sep:
            raise InputError(f"--limit {text!r}; expected NAME=SECONDS, e.g. ttft_s_p95=5.77")
        try:
            limits[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"--limit {text!r}: {value!r} is not a number of seconds") from None
        _check_limit(f"--limit {name.strip()}", limits[name.strip()], "seconds")
        in_seconds.append((f"--limit {name.strip()}", name.strip()[:4], limits[name.strip()]))
    for name, value in (
        ("ttft_s_p90", args.ttft_p90_s),
        ("ttft_s_p95", args.ttft_p95_s),
        ("tpot_s_p90", None if args.tpot_p90_ms is None else args.tpot_p90_ms / 1000.0),
    ):
        if value is not None:
            if name in limits:
                raise InputError(f"{name} is limited twice (by --limit and its own option)")
            limits[name] = value
    warnings = (slo_warning(o, m, value) for o, m, value in in_seconds if m in SLO_BANDS)
    return limits, tuple(w for w in warnings if w)


def _files_named(files: list[str]) -> str:
    """A curve's files as its errors name them (the paths given, as import errors do): all of
    them up to three, else the first three and how many more."""
    more = len(files) - 3
    return ", ".join(files[:3]) + (f" and {more:,} more files" if more > 0 else "")


def _cmd_point(args) -> int:
    latency_limits, limit_warnings = _limits(args)  # checked before any file is read
    curve = importers.import_files(
        args.files, args.input_format, args.gpus, allow_incomplete=args.allow_incomplete
    )
    ttft = args.ttft_p99_s if args.ttft_p99_ms is None else args.ttft_p99_ms / 1000.0
    tpot = args.tpot_p99_s if args.tpot_p99_ms is None else args.tpot_p99_ms / 1000.0
    try:
        point = operating.operating_point(
            curve,
            ttft_p99_s=ttft,
            tpot_p99_s=tpot,
            min_tokens_per_s_per_user=args.min_tokens_per_s_per_user,
            latency_limits=latency_limits,
            workload=args.workload,
            reading=args.reading,
        )
    except InputError as exc:  # the curve's fault: named by its files, as import errors are
        raise in_file(exc, _files_named(args.files)) from None
    point = dataclasses.replace(point, warnings=(*limit_warnings, *point.warnings))
    data = point.to_dict()
    if args.usd_per_gpu_hour is not None:
        if not args.usd_per_gpu_hour > 0:
            raise InputError(f"--usd-per-gpu-hour {args.usd_per_gpu_hour}; expected > 0")
        data["usd_per_gpu_hour"] = args.usd_per_gpu_hour
        data["cost_usd_per_mtok"] = float(
            operating.cost_usd_per_mtok(args.usd_per_gpu_hour, point.tokens_per_s_per_gpu)
        )
    if args.format == "json":
        print(strict_json.dumps(data, indent=2, default=str))
        return 0
    v = point.values
    rows = [
        ["output tokens/s per GPU", fmt(point.tokens_per_s_per_gpu, "{:,.2f}")],
        ["output tokens/s, system", fmt(v["output_tokens_per_s"], "{:,.2f}")],
        ["input tokens/s per GPU", fmt(point.input_tokens_per_s_per_gpu, "{:,.2f}")],
        ["total tokens/s per GPU", fmt(point.total_tokens_per_s_per_gpu, "{:,.2f}")],
        ["tokens/s per user", fmt(point.tokens_per_s_per_user, "{:,.2f}")],
        *[
            [f"{metric} {stat} [{'s' if metric == 'TTFT' else 'ms'}]", fmt(value, pattern)]
            for metric, column, pattern in (("TTFT", "ttft", "{:.3f}"), ("TPOT", "tpot", "ms"))
            for stat in ("p90", "p95", "p99")
            if not math.isnan(value := v[f"{column}_s_{stat}"]) or stat == "p99"
        ],
        ["concurrency", fmt(v["concurrency"], "{:,.2f}")],
        ["request rate [1/s]", _request_rate_text(point, curve.points)],
        ["GPUs", fmt(v["gpu_count"], "{:g}")],
        *[
            [label, fmt(v[column], pattern)]
            for column, label, pattern in (
                ("provisioned_power_kw", "provisioned power [kW]", "{:,.2f}"),
                (
                    "output_tokens_per_s_per_kw_provisioned",
                    "tokens/s per kW (provisioned)",
                    "{:,.2f}",
                ),
                ("j_per_output_token_provisioned", "J per output token (provisioned)", "{:,.4f}"),
            )
            if column in v and not math.isnan(v[column])
        ],
        ["binding limit", point.binding],
        ["interpolated", "yes" if point.interpolated else "no (a measured point)"],
        ["clamped", "yes" if point.clamped else "no"],
        ["between rows", f"{point.bracket[0]} and {point.bracket[1]}"],
        ["group", point.group],
    ]
    if "cost_usd_per_mtok" in data:
        rows.append(["cost [USD per Mtok output]", f"{data['cost_usd_per_mtok']:,.4f}"])
    print(table(["operating point", "value"], rows))
    say_warnings(f"warning: {warning}" for warning in point.warnings)
    return 0


def _request_rate_text(point, points) -> str:
    """The point's request rate; between a measured rate and "all at once" (inf) it is not
    known, and the two measured loads are named instead: 'between 30/s and all at once'."""
    rate = point.values["request_rate_per_s"]
    ends = [points.at[row, "request_rate_per_s"] for row in point.bracket]
    if not (point.interpolated and math.isnan(rate) and any(map(math.isinf, ends))):
        return fmt(rate, "{:,.3f}")
    shown = ["all at once" if math.isinf(end) else fmt(end, "{:,.3g}/s") for end in ends]
    return f"between {shown[0]} and {shown[1]}"


def _cmd_history(args) -> int:
    from econ.throughput.history import gain_history

    history = gain_history(
        model=args.model,
        scenario=args.scenario,
        hardware=args.hardware,
        accelerator=args.accelerator,
        submitter=args.submitter,
        gpus=args.gpus,
        include_preview=args.include_preview,
    )
    start = None
    if args.start_date:
        try:
            start = dt.date.fromisoformat(args.start_date)
        except ValueError:
            raise InputError(f"--start-date {args.start_date!r}; expected YYYY-MM-DD") from None
    data = history.to_dict()
    if start:
        data["scenario_steps"] = history.scenario_steps(start)
        data["scenario_steps_replayed"] = history.scenario_steps(start, replay=True)
    if args.format == "json":
        print(strict_json.dumps(data, indent=2, default=str))
        return 0
    rows = [
        [r["round"], r["published"], r["submitter"], f"{r['accelerator_count']:g}", r["id"],
         f"{r['tokens_per_s_per_gpu']:,.1f}"]
        for r in data["points"]
    ]  # fmt: skip
    print(table(["round", "published", "submitter", "Accel.", "id", "tok/s/GPU"], rows))
    for step in history.steps:
        print(f"step {step['label']} ({step['date']}): {step['gain']:+.1%}")
    low, high = history.rate_annual_low, history.rate_annual_high
    band = "" if math.isnan(low) else f" (95% range {low:+.1%} to {high:+.1%})"
    print(f"compound annual rate: {history.rate_annual:+.1%}{band}")
    if start:
        for step in data["scenario_steps_replayed"]:
            print(f"replayed from {start}: month {step['month']}: {step['gain']:+.1%}")
    say_warnings(f"caveat: {caveat}" for caveat in history.caveats)
    return 0


def build_parser() -> argparse.ArgumentParser:  # for tests and docs
    parser = argparse.ArgumentParser(prog="econ")
    register(parser.add_subparsers(dest="command"))
    return parser
