"""CLI for the catalogs and the throughput simulator.

`register(subparsers)` adds the top-level `econ hardware list` and `econ llms list`.
`register_throughput(throughput_subparsers)` adds `econ throughput simulate` and
`econ throughput calibrate` to the `throughput` group that econ/commands/throughput.py owns.
No formulas here: parse, call the library, print or write.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path

from econ import strict_json  # standard library only
from econ.commands import Number, add_format, examples, lazy, say_warnings
from econ.errors import InputError
from econ.files import atomic_write  # standard library only

_GPUS = Number(int, field="models:Fleet.gpu_count", what="a number of GPUs")
cal = lazy("econ.throughput.calibration")
sim = lazy("econ.throughput.simulator")
errorbands = lazy("econ.throughput.errorbands")

EXIT_OK = 0
SCENARIO_CHOICES = ("offline", "server", "interactive")


def register(subparsers) -> None:
    """Top-level `hardware` and `llms` commands."""
    hw = subparsers.add_parser("hardware", help="the accelerator catalog (models/hardware.toml)")
    hw_sub = hw.add_subparsers(dest="hardware_command", metavar="SUBCOMMAND", required=True)
    hl = hw_sub.add_parser(
        "list",
        help="list catalog hardware",
        **examples("econ hardware list", "econ hardware list --format json"),
    )
    add_format(hl, ("table", "json"))
    hl.set_defaults(run=cmd_hardware_list)

    lm = subparsers.add_parser("llms", help="the model architecture catalog (models/llms.toml)")
    lm_sub = lm.add_subparsers(dest="llms_command", metavar="SUBCOMMAND", required=True)
    ll = lm_sub.add_parser(
        "list", help="list catalog models", **examples("econ llms list --format json")
    )
    add_format(ll, ("table", "json"))
    ll.set_defaults(run=cmd_llms_list)


def register_throughput(throughput_subparsers) -> None:
    """`simulate` and `calibrate` under the `econ throughput` group."""
    s = throughput_subparsers.add_parser(
        "simulate",
        help="simulate a throughput-latency curve, its operating point and speed of light",
        description=(
            "Simulate the upper envelope over parallelism layouts for a hardware/model pair, the "
            "operating point under p99 TPOT/TTFT limits and the speed of light at those limits."
        ),
    )
    s.add_argument("--hardware", required=True, help="catalog key, see `econ hardware list`")
    s.add_argument("--model", required=True, help="catalog key, see `econ llms list`")
    s.add_argument(
        "--precision", help="bf16, fp8 or fp4 (default: the hardware's lowest native precision)"
    )
    s.add_argument(
        "--scenario",
        choices=SCENARIO_CHOICES,
        help="use MLPerf's latency limits and lengths for this model",
    )
    s.add_argument("--isl", type=Number(), help="input tokens per request (mean)")
    s.add_argument("--osl", type=Number(), help="output tokens per request (mean)")
    s.add_argument("--tpot-ms", type=Number(), help="p99 time-per-output-token limit [ms]")
    s.add_argument("--ttft-s", type=Number(), help="p99 time-to-first-token limit [s]")
    s.add_argument("--gpus", type=_GPUS, help="fix the instance size instead of searching layouts")
    s.add_argument("--tp", type=_GPUS, help="attention tensor-parallel degree (with --gpus)")
    s.add_argument("--max-gpus", type=_GPUS, help="largest instance the envelope searches")
    s.add_argument("--disaggregated", action="store_true", help="separate prefill and decode GPUs")
    s.add_argument(
        "--draft-tokens",
        type=Number(int, what="a number", ge=0),
        help="speculative draft tokens per step",
    )
    s.add_argument("--accepted-tokens", type=Number(), help="tokens kept per step with speculation")
    s.add_argument(
        "--coefficients",
        choices=("calibrated", "default", "speed-of-light"),
        default="calibrated",
        help="efficiency coefficients: stored calibration, the uncalibrated defaults, or all at 1 "
        "(default %(default)s)",
    )
    s.add_argument(
        "--points",
        type=Number(int, what="a number", ge=2),
        help="concurrency points (default 64, the simulator's) of the printed curve; the "
        "operating point is searched on the 40-point grid the calibration was fitted and "
        "validated on",
    )
    add_format(s)
    s.add_argument("--out", metavar="PATH", help="write the curve as CSV")
    s.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    s.set_defaults(run=cmd_simulate)

    c = throughput_subparsers.add_parser(
        "calibrate",
        help="refit the simulator's efficiency coefficients to MLPerf rows and write them",
    )
    c.add_argument(
        "--hardware",
        action="append",
        metavar="KEY",
        help="hardware to refit (repeatable; default: every catalog entry)",
    )
    c.add_argument("--rows", help="MLPerf rows CSV (default: models/calibration/mlperf_rows.csv)")
    c.add_argument("--out-dir", help="where to write <hardware>.toml (default models/calibration)")
    c.add_argument(
        "--starts",
        type=Number(int, what="a number", ge=1),
        default=4,
        help="starting points per fit (default %(default)s)",
    )
    c.add_argument("--force", action="store_true", help="overwrite existing calibration files")
    c.set_defaults(run=cmd_calibrate)


# ---------------------------------------------------------------------------------------------------


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_hardware_list(args) -> int:
    from econ.hardware import load_hardware_catalog
    from econ.racks import load_racks

    catalog = load_hardware_catalog()
    racks = load_racks().racks
    calibrated = cal.load_all_efficiencies()
    if args.format == "json":
        out = []
        for key, hw in catalog.items():
            record = hw.model_dump()
            # the figure `econ size` and the scenario warnings use: the rack's maximum with its
            # share of the scale-out network (not power.all_in_kw_per_gpu, a published figure)
            record["rack_kw_per_gpu_all_in"] = (
                racks[key].kw_per_gpu_all_in if key in racks else None
            )
            record["default_precision"] = hw.default_precision
            record["native_precisions"] = list(hw.native_precisions)
            record["calibration"] = {
                p: info.get("source", "") for p, (_, info) in calibrated.get(key, {}).items()
            }
            out.append(record)
        print(strict_json.dumps(out, indent=2))
        return EXIT_OK
    rows = [
        [
            "key",
            "name",
            "HBM GB usable",
            "TB/s",
            "BF16/FP8/FP4 TFLOP/s",
            "scale-up",
            "default",
            "kW/GPU published",
            "kW/GPU max+net",
            "calibration",
        ]
    ]
    for key, hw in catalog.items():
        t = hw.dense_tflops
        peaks = "/".join(f"{v:g}" if v else "-" for v in (t.bf16, t.fp8, t.fp4))
        source = (
            calibrated.get(key, {}).get(hw.default_precision, (None, {}))[1].get("source", "none")
        )
        rows.append(
            [
                key,
                hw.name,
                f"{hw.hbm_gb_usable:g}",
                f"{hw.hbm_bandwidth_tb_per_s:g}",
                peaks,
                f"{hw.scaleup_domain_gpus} GPUs",
                hw.default_precision,
                f"{hw.power.all_in_kw_per_gpu:g}" if hw.power.all_in_kw_per_gpu else "-",
                f"{racks[key].kw_per_gpu_all_in:g}" if key in racks else "-",
                source.split(" (")[0],
            ]
        )
    print(_table(rows))
    print(textwrap.fill(HARDWARE_POWER_NOTE, width=100))
    return EXIT_OK


HARDWARE_POWER_NOTE = (
    "kW/GPU published: models/hardware.toml power.all_in_kw_per_gpu, a published all-in figure "
    "(SemiAnalysis: a typical load, GPU with its share of host and network). kW/GPU max+net: "
    "models/racks.toml kw_per_gpu_all_in, the rack at its maximum with its share of the "
    "scale-out network, what econ size and the scenario power warnings count."
)


def cmd_llms_list(args) -> int:
    from econ.llms import load_llm_catalog

    catalog = load_llm_catalog()
    if args.format == "json":
        out = []
        for llm in catalog.values():
            record = llm.model_dump()
            record["active_params_b_derived"] = llm.active_params / 1e9
            out.append(record)
        print(strict_json.dumps(out, indent=2))
        return EXIT_OK
    rows = [["key", "name", "params B", "active B", "layers", "attention", "experts", "KV B/token"]]
    for key, m in catalog.items():
        experts = f"{m.experts_per_token}/{m.routed_experts}" if m.is_moe else "dense"
        rows.append(
            [
                key,
                m.name,
                f"{m.params_total_b:g}",
                f"{m.params_active_b:g}",
                str(m.layers),
                m.attention.upper(),
                experts,
                f"{m.kv_bytes_per_token_bf16:,.0f}",
            ]
        )
    print(_table(rows))
    return EXIT_OK


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item"):
        return _json_safe(value.item())
    return value


def simulation_request(args) -> dict:
    """Lengths, limits and options of a `simulate` call, from the scenario and explicit flags."""
    hw, llm, precision = sim.resolve(args.hardware, args.model, args.precision)
    isl, osl = args.isl, args.osl
    tpot = None if args.tpot_ms is None else args.tpot_ms / 1000.0
    ttft = args.ttft_s
    draft, accepted = args.draft_tokens, args.accepted_tokens
    if args.scenario:
        w = cal.get_workload(llm.key, args.scenario)
        isl = w.input_tokens if isl is None else isl
        osl = w.output_tokens if osl is None else osl
        if tpot is None and math.isfinite(w.tpot_limit_s):
            tpot = w.tpot_limit_s
        if ttft is None and math.isfinite(w.ttft_limit_s):
            ttft = w.ttft_limit_s
        draft = w.draft_tokens if draft is None else draft
        accepted = w.accepted_tokens if accepted is None else accepted
    if isl is None or osl is None:
        raise sim.SimulatorError(
            "give --isl and --osl (input and output tokens per request), or --scenario "
            f"{'|'.join(SCENARIO_CHOICES)} to use MLPerf's lengths for {llm.key!r}"
        )
    if args.tpot_ms is not None and not args.tpot_ms > 0:
        raise sim.SimulatorError(f"--tpot-ms must be a positive number of ms, got {args.tpot_ms!r}")
    draft = 0 if draft is None else draft
    accepted = 1.0 if accepted is None else accepted
    if args.points is None:
        args.points = sim.DEFAULT_POINTS
    if args.points < 2 or args.points > 4096:
        raise sim.SimulatorError(f"--points must be from 2 to 4096, got {args.points}")
    efficiency = {
        "calibrated": None,
        "default": sim.Efficiency(),
        "speed-of-light": sim.SPEED_OF_LIGHT,
    }[args.coefficients]
    return {
        "hardware": hw,
        "model": llm,
        "precision": precision,
        "input_tokens": isl,
        "output_tokens": osl,
        "tpot_limit_s": tpot,
        "ttft_limit_s": ttft,
        "draft_tokens": draft,
        "accepted_tokens": accepted,
        "efficiency": efficiency,
    }


def cmd_simulate(args) -> int:
    if args.out:
        from econ.throughput.importers import curve_csv_path

        curve_csv_path(args.out)  # before the simulation, as a bad --gpus is
    req = simulation_request(args)
    common = {
        "input_tokens": req["input_tokens"],
        "output_tokens": req["output_tokens"],
        "draft_tokens": req["draft_tokens"],
        "accepted_tokens": req["accepted_tokens"],
    }
    hw, llm, precision = req["hardware"], req["model"], req["precision"]
    # --gpus fixes the layout of the curve, the operating point, the speed of light and the band
    layout = {"gpus": args.gpus, "tensor_parallel": args.tp}
    if args.gpus is not None:
        curve = sim.simulate_curve(
            hw,
            llm,
            precision,
            points=args.points,
            efficiency=req["efficiency"],
            disaggregated=args.disaggregated,
            **layout,
            **common,
        )
        max_gpus = None
    else:
        if args.tp is not None:
            raise sim.SimulatorError("--tp needs --gpus")
        curve = sim.simulate_envelope(
            hw,
            llm,
            precision,
            max_gpus=args.max_gpus,
            points=args.points,
            efficiency=req["efficiency"],
            disaggregated=args.disaggregated,
            **common,
        )
        max_gpus = args.max_gpus
    search = {
        "tpot_limit_s": req["tpot_limit_s"],
        "ttft_limit_s": req["ttft_limit_s"],
        "efficiency": req["efficiency"],
        "disaggregated": args.disaggregated,
        **common,
    }
    point = sim.operating_point(hw, llm, precision, max_gpus=max_gpus, **layout, **search)
    light = sim.speed_of_light(
        hw,
        llm,
        precision,
        tpot_limit_s=req["tpot_limit_s"],
        ttft_limit_s=req["ttft_limit_s"],
        max_gpus=max_gpus,
        **layout,
        **common,
    )
    if args.out:
        atomic_write(args.out, curve.points.to_csv(index=False), args.force)
        print(f"wrote {args.out}", file=sys.stderr)
    result = {
        "hardware": hw.key,
        "model": llm.key,
        "precision": precision,
        "scenario": args.scenario,
        "scenario_changed_by": _scenario_changed_by(args, llm.key),
        "coefficients": args.coefficients,
        "input_tokens": req["input_tokens"],
        "output_tokens": req["output_tokens"],
        "tpot_limit_s": req["tpot_limit_s"],
        "ttft_limit_s": req["ttft_limit_s"],
        **point.as_dict(),
        "speed_of_light_tokens_per_s_per_gpu": light,
        "headroom_to_speed_of_light": float(
            sim.headroom_to_speed_of_light(point.tokens_per_s_per_gpu, light)
        ),
        "provenance": curve.provenance,
        "warnings": list(curve.warnings),
        "error_band": None,
    }
    if args.ttft_s is not None:  # as `econ throughput point --ttft-p99-s` warns of it
        from econ.plausibility import slo_warning

        slip = slo_warning("--ttft-s", "ttft", args.ttft_s)
        result["warnings"] += [slip] if slip else []
    if req["efficiency"] is None:  # the band is of the calibrated coefficients' predictions
        band, warnings = calibrated_band(
            hw, llm, precision, point, search, fixed=args.gpus is not None
        )
        result["error_band"] = band.as_dict()
        result["warnings"] += warnings
    if args.format == "json":
        result["curve"] = curve.points.to_dict(orient="records")
        print(json.dumps(_json_safe(result), indent=2, allow_nan=False))
    elif args.format == "csv":
        sys.stdout.write(curve.points.to_csv(index=False))
        say_warnings(f"warning: {w}" for w in result["warnings"])
    else:
        print(_simulate_table(result, curve))
    return EXIT_OK


def calibrated_band(hw, llm, precision, point, search: dict, fixed: bool = False):
    """The band of a prediction by the calibrated coefficients and its warnings: a pair outside
    the calibrated ones, the pair's own MLPerf miss, a layout larger than the calibration's
    (`fixed`: the point's layout was fixed by --gpus, which the search up to --max-gpus needs
    dropped)."""
    band, layout, scenario = errorbands.simulated_band(hw, llm, precision, point, search)
    warnings = []
    if not band.calibrated_pair:
        warnings.append(
            f"{llm.key} on {hw.key} is outside the calibrated hardware x model pairs: the "
            f"coefficients never saw this model on this hardware (median out-of-sample error "
            f"{band.median_abs_error:.0%})"
        )
    warnings += band.warnings
    if layout:
        gpus = errorbands.calibrated_gpus(hw.key, llm.key, scenario)[0]
        warnings.append(f"{layout} (--max-gpus {gpus}{' without --gpus' if fixed else ''})")
    return band, warnings


def _limit_text(value, scale, unit) -> str:
    return "none" if value is None else f"{value * scale:g} {unit}"


SCENARIO_OVERRIDES = (
    ("--isl", "isl", "input_tokens", 1.0),
    ("--osl", "osl", "output_tokens", 1.0),
    ("--tpot-ms", "tpot_ms", "tpot_limit_s", 1000.0),
    ("--ttft-s", "ttft_s", "ttft_limit_s", 1.0),
    ("--draft-tokens", "draft_tokens", "draft_tokens", 1.0),
    ("--accepted-tokens", "accepted_tokens", "accepted_tokens", 1.0),
)
"""Options that can change an MLPerf --scenario's workload: (option, argparse dest, the
workload's field, option units per field unit)."""


def _scenario_changed_by(args, model: str) -> list[str]:
    """The options that set an MLPerf --scenario's workload to something else than MLPerf's."""
    if not args.scenario:
        return []
    w = cal.get_workload(model, args.scenario)
    return [
        option
        for option, dest, name, scale in SCENARIO_OVERRIDES
        if getattr(args, dest) is not None
        and not math.isclose(getattr(args, dest), getattr(w, name) * scale, rel_tol=1e-9)
    ]


GIVEN_COEFFICIENTS = {
    "default": "uncalibrated defaults (the fit's priors; no model efficiency)",
    "speed-of-light": "speed of light (every efficiency 1, no overheads, full overlap, no tail)",
}
"""What the table says of --coefficients other than the calibration (the provenance: 'given')."""


def _model_efficiency_text(provenance: dict) -> str:
    value = provenance.get("model_efficiency")
    if isinstance(value, int | float):
        return f"; model efficiency {value:.3f} (fitted across hardware)"
    return ""


def _simulate_table(result: dict, curve) -> str:
    r = result
    lines = [
        f"{r['model']} on {r['hardware']} at {r['precision'].upper()}"
        + (f", MLPerf {r['scenario']}" if r["scenario"] else "")
        + (
            f" changed by {', '.join(r['scenario_changed_by'])} (not MLPerf's workload)"
            if r["scenario_changed_by"]
            else ""
        ),
        f"lengths: {r['input_tokens']:,.0f} in / {r['output_tokens']:,.0f} out; p99 limits: TPOT "
        f"{_limit_text(r['tpot_limit_s'], 1000, 'ms')}, TTFT {_limit_text(r['ttft_limit_s'], 1, 's')}",
        (
            f"coefficients: {r['provenance'].get('efficiency', '')} "
            f"{r['provenance'].get('calibration_source', '')}".rstrip()
            if r["coefficients"] == "calibrated"
            else f"coefficients: {GIVEN_COEFFICIENTS[r['coefficients']]}"
        )
        + _model_efficiency_text(r["provenance"]),
        "",
        f"operating point: {r['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU, "
        f"{r['tokens_per_s_per_user']:,.1f} tokens/s per user, TPOT p99 "
        f"{r['tpot_s_p99'] * 1000:,.1f} ms, TTFT p99 {r['ttft_s_p99']:,.2f} s, concurrency "
        f"{r['concurrency']:,.0f} on {r['instance_gpus']} GPUs (tp {r['tensor_parallel']})",
        f"speed of light:  {r['speed_of_light_tokens_per_s_per_gpu']:,.0f} tokens/s per GPU "
        f"(headroom {r['headroom_to_speed_of_light']:+.0%})",
        *_band_lines(r["error_band"]),
        "",
        "envelope (tokens/s per user -> tokens/s per GPU):",
    ]
    pts = curve.points
    step = max(1, len(pts) // 12)
    rows = [["tok/s/user", "tok/s/GPU", "TPOT p99 ms", "TTFT p99 s", "concurrency", "GPUs", "tp"]]
    for _, p in pts.iloc[::step].iterrows():
        rows.append(
            [
                f"{p.tokens_per_s_per_user:,.1f}",
                f"{p.output_tokens_per_s_per_gpu:,.0f}",
                f"{p.tpot_s_p99 * 1000:,.1f}",
                f"{p.ttft_s_p99:,.2f}",
                f"{p.concurrency:,.0f}",
                f"{p.instance_gpus:.0f}",
                f"{p.tensor_parallel:.0f}",
            ]
        )
    lines.append(_table(rows))
    lines += [f"warning: {w}" for w in r["warnings"]]
    return "\n".join(lines)


def _band_lines(band: dict | None) -> list[str]:
    if band is None:
        return ["error band:      none (bands are of the calibrated coefficients' predictions)"]
    q = band["quantiles_tokens_per_s_per_gpu"]
    widened = (
        ", widened to this pair's own MLPerf result (see the warnings)" if band["widened"] else ""
    )
    return [
        f"error band:      {q['p05']:,.0f} to {q['p95']:,.0f} tokens/s per GPU (5th-95th "
        f"percentile, median {q['p50']:,.0f}{widened}); {band['label']}, median out-of-sample "
        f"error {band['median_abs_error']:.1%} over {band['predictions']} predictions "
        f"({band['basis']})",
        "Monte Carlo:     --dist throughput.tokens_per_s_per_gpu="
        f"{band['montecarlo_dist_lognormal']} (5th and 95th percentiles at the band's ends; "
        "the empirical band: --format json, montecarlo_dist_empirical)",
    ]


def cmd_calibrate(args) -> int:
    from econ.hardware import load_hardware_catalog

    rows = cal.load_rows(args.rows) if args.rows else None
    directory = Path(args.out_dir) if args.out_dir else None
    if args.starts < 1 or args.starts > 32:
        raise cal.CalibrationError(f"--starts must be from 1 to 32, got {args.starts}")
    target_dir = directory or cal.calibration_dir()
    if directory is not None and not directory.is_dir():
        raise InputError(f"--out-dir {directory} is not a folder")
    keys = args.hardware or list(load_hardware_catalog())
    existing = [k for k in keys if (target_dir / f"{k}.toml").exists()]
    if existing and not args.force:
        raise InputError(
            f"calibration files exist for {', '.join(existing)} in {target_dir}; pass --force to "
            "overwrite them"
        )
    written = cal.calibrate(
        args.hardware, rows=rows, directory=directory, starts=args.starts, rows_source=args.rows
    )
    if not written:
        raise cal.CalibrationError(
            f"{args.rows or cal.rows_path()} holds no calibration target of "
            f"{', '.join(keys)} (a closed, available row of a model with an MLPerf workload) and "
            "none of them has a sibling fitted on it; nothing written"
        )
    table = [["hardware", "precision", "source", "rows", "in-sample median abs error"]]
    for key, tables in written.items():
        for precision, t in tables.items():
            table.append(
                [key, precision, t["source"], str(t["rows"]), f"{t['median_abs_error']:.1%}"]
            )
    print(_table(table))
    print(
        "in-sample: each fit's error on its own rows; docs/simulator.md gives the out-of-sample "
        "errors (a round ahead, and each hardware predicted by its sibling's fit)"
    )
    targets = cal.calibration_targets(cal.load_rows() if rows is None else rows)
    fitted = [
        k for k, tables in written.items() if any(t["source"] == "fit" for t in tables.values())
    ]
    for key in fitted:
        caveat = cal.fit_caveat(key, targets)
        if caveat:
            print(f"warning: {caveat}", file=sys.stderr)
    missing = sorted(set(keys) - set(written))
    for key in missing:
        print(
            f"warning: {key}: no measurements and no calibrated sibling; not written",
            file=sys.stderr,
        )
    return EXIT_OK
