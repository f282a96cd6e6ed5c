"""Batch throughput: Monte Carlo summaries at 1 and 10 million scenarios, serial and on Dask.

In one run:
1. 1,000,000-scenario Monte Carlo (six input distributions, 72-month scenarios, summary only)
   on one core, end to end: sampling, validation, projection, streaming summary;
2. the same on a Dask LocalCluster of two single-threaded worker processes: scaling efficiency
   = (serial time / Dask time) / 2, and a check that both summaries are identical;
3. peak memory (max RSS of a fresh process) of a 10,000,000-scenario summary-only run;
4. the per-scenario ratio against the naive per-scenario pandas ledger of bench_engine.py;
5. the same Monte Carlo on the ready-made scenarios users run (bench_engine.READY_MADE: the seed,
   its capital stack, a 10 MW hall), `--n-ready` scenarios each, as ratios to the naive ledger.

    .venv/bin/python benchmarks/bench_batch.py [--n 1000000] [--big 10000000] [--naive 300]
        [--n-ready 100000] [--repeat 3] [--skip-dask] [--skip-memory] [--skip-naive]
        [--write-partial]
    .venv/bin/python benchmarks/bench_batch.py --warnings 20000 [--repeat 3]

`--warnings N` only times, for each ready-made scenario on N rows of bench_engine's random
inputs, formatting the warnings (as a sweep keeps them, one cell of lines per row) against the
projection that precedes it, and prints the table (it writes nothing).

The serial run also reports how its time splits between the engine (econ.engine.project) and
everything around it (sampling, validation, batch set-up, summaries). Writes
benchmarks/results/bench_batch.md when every part ran (a partial run only prints its table).
"""

from __future__ import annotations

import os

# One BLAS/OpenMP thread per process (targets are per core; the Dask workers get the same). The
# thread pools are sized when numpy is first imported, so this must come before any import that
# loads numpy; setting it later, e.g. under `if __name__ == "__main__"`, has no effect.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_engine import BASE, READY_MADE, naive_ledger  # noqa: E402

import econ.analysis.runner as runner  # noqa: E402
from econ.analysis.executors import make_executor  # noqa: E402
from econ.analysis.montecarlo import montecarlo  # noqa: E402

DISTRIBUTIONS = {
    "throughput.tokens_per_s_per_gpu": "uniform(2000, 8000)",
    "utilization.share": "triangular(0.4, 0.7, 0.95)",
    "capex.gpu_price_usd": "pert(30000, 43000, 60000)",
    "market.price_usd_per_mtok": "lognormal(mean=0.5, sd=0.15, low=0.1, high=2)",
    "market.price_decline_annual": "uniform(0, 0.5)",
    "financing.discount_rate_annual": "normal(0.10, 0.02, low=0.04, high=0.16)",
}
CHUNK = 16_384


def run_mc(n: int, executor=None, seed: int = 1, base=BASE):
    return montecarlo(base, distributions(base), n, seed=seed, executor=executor, chunk_size=CHUNK)


def distributions(base) -> dict[str, str]:
    """DISTRIBUTIONS, with the GPU price as a system price where the scenario prices systems."""
    if base.capex.system_price_usd is None:
        return DISTRIBUTIONS
    per = base.capex.gpus_per_system
    out = {k: v for k, v in DISTRIBUTIONS.items() if k != "capex.gpu_price_usd"}
    out["capex.system_price_usd"] = f"pert({30000 * per}, {43000 * per}, {60000 * per})"
    return out


def ready_made_rates(n: int, repeat: int) -> dict[str, tuple[float, int]]:
    """Serial Monte Carlo of each READY_MADE scenario: (seconds per scenario, horizon months)."""
    from econ import load_scenario

    out = {}
    for label, name in READY_MADE.items():
        scenario = load_scenario(HERE.parent / "models" / "scenarios" / f"{name}.toml")
        run_mc(min(n, CHUNK), base=scenario)  # warm-up: curves, catalogs, caches
        seconds = min(_timed(lambda s=scenario: run_mc(n, base=s))[0] for _ in range(repeat))
        out[label] = (seconds / n, scenario.horizon)
    return out


def timed_serial(n: int) -> tuple[object, float, float]:
    """A serial run: (result, seconds, seconds inside econ.engine.project)."""
    inner = runner.project
    spent = [0.0]

    def project(*args, **kwargs):
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - began

    runner.project = project
    try:
        start = time.perf_counter()
        result = run_mc(n)
        seconds = time.perf_counter() - start
    finally:
        runner.project = inner
    return result, seconds, spent[0]


def warnings_times(n: int, repeat: int) -> dict[str, tuple[float, float, int]]:
    """Per READY_MADE scenario on n rows of bench_engine's random inputs: (seconds projecting
    without monthly lines, seconds formatting every row's warnings into a sweep's cell, warnings),
    the fastest of `repeat` runs each."""
    from bench_engine import ready_made_batches

    from econ import project

    out = {}
    for label, (batch, _) in ready_made_batches(n).items():
        _ = project(batch.slice(0, min(n, 256)), monthly=False).warnings  # warm-up
        times = []
        for _ in range(max(1, repeat)):
            projected, projection = _timed(lambda b=batch: project(b, monthly=False))
            formatted, _ = _timed(
                lambda p=projection: [runner.WARNING_SEPARATOR.join(w) for w in p.warnings]
            )
            times.append((projected, formatted))
        count = sum(len(w) for w in projection.warnings)
        out[label] = (min(t[0] for t in times), min(t[1] for t in times), count)
    return out


def print_warnings_times(n: int, repeat: int) -> None:
    print(f"| scenario ({n:,} rows) | projection [s] | warnings [s] | warnings / projection |")
    print("|---|---:|---:|---:|")
    for label, (projected, formatted, count) in warnings_times(n, repeat).items():
        print(
            f"| {label} ({count:,} warnings) | {projected:.3f} | {formatted:.3f} | "
            f"{formatted / projected:.2f} |"
        )


def _timed(run):
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def child_peak(n: int) -> dict:
    """Run n scenarios in a fresh process and report its time and peak RSS."""
    code = "\n".join(
        [
            "import json, resource, sys, time",
            f"sys.path.insert(0, {str(HERE)!r})",
            "from bench_batch import run_mc",
            f"t = time.perf_counter(); r = run_mc({n}); s = time.perf_counter() - t",
            "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
            "print(json.dumps({'seconds': s, 'peak_kib': peak, 'method': r.summary.quantile_method}))",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=HERE.parent
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--big", type=int, default=10_000_000)
    parser.add_argument("--naive", type=int, default=300)
    parser.add_argument(
        "--repeat", type=int, default=3, help="serial and Dask runs each; the fastest counts"
    )
    parser.add_argument("--skip-dask", action="store_true", help="no Dask LocalCluster run")
    parser.add_argument("--skip-memory", action="store_true", help="no --big peak-memory run")
    parser.add_argument("--skip-naive", action="store_true", help="no naive pandas ledger")
    parser.add_argument(
        "--n-ready", type=int, default=100_000, help="scenarios per ready-made scenario (0: none)"
    )
    parser.add_argument(
        "--write-partial",
        action="store_true",
        help="write the results file even when a part was skipped (the text says which)",
    )
    parser.add_argument(
        "--warnings",
        type=int,
        default=0,
        metavar="N",
        help="only time formatting the warnings of N rows per ready-made scenario, and print it",
    )
    args = parser.parse_args()
    if args.warnings > 0:
        print_warnings_times(args.warnings, args.repeat)
        return

    run_mc(CHUNK)  # warm up imports and caches
    serial, serial_s, engine_s = min(
        (timed_serial(args.n) for _ in range(max(1, args.repeat))), key=lambda r: r[1]
    )
    serial_rate = args.n / serial_s
    per = serial_s / args.n * 1e6
    engine_per = engine_s / args.n * 1e6
    npv = serial.summary.metrics["npv_usd"]
    rows = [
        f"| serial, one core | {args.n:,} | {serial_s:.1f} | {serial_rate:,.0f} | "
        ">= 50,000 per core |"
    ]
    notes = [
        f"- Serial run: {per:.1f} µs per scenario, of which {engine_per:.1f} µs in the engine "
        f"(econ.engine.project) and {per - engine_per:.1f} µs around it (sampling, validation, "
        "batch set-up, summaries).",
    ]

    if not args.skip_dask:
        start = time.perf_counter()
        executor = make_executor("dask", workers=2)
        startup_s = time.perf_counter() - start
        with executor:
            run_mc(4 * CHUNK, executor)  # workers import econ once
            dask_s, dask = min(
                (_timed(lambda: run_mc(args.n, executor)) for _ in range(max(1, args.repeat))),
                key=lambda r: r[0],
            )
        same = json.dumps(serial.summary.as_dict(), default=str) == json.dumps(
            dask.summary.as_dict(), default=str
        )
        efficiency = serial_s / dask_s / 2
        rows.append(
            f"| Dask LocalCluster, 2 workers x 1 thread | {args.n:,} | {dask_s:.1f} | "
            f"{args.n / dask_s:,.0f} | |"
        )
        notes.append(
            f"- Scaling efficiency on 2 Dask workers: **{efficiency:.1%}** (target >= 80%); "
            f"cluster start-up {startup_s:.1f} s not counted. Summaries identical to the serial "
            f"run: {same}."
        )

    if not args.skip_memory:
        big = child_peak(args.big)
        peak_gib = big["peak_kib"] / 2**20
        rows.append(
            f"| serial, fresh process (peak memory run) | {args.big:,} | {big['seconds']:.1f} | "
            f"{args.big / big['seconds']:,.0f} | |"
        )
        notes.append(
            f"- Peak memory (max RSS) at {args.big:,} scenarios: **{peak_gib:.2f} GiB** (target "
            f"< 2 GB); quantiles {big['method']}."
        )

    ratio_rows = []
    if not args.skip_naive:
        rng = np.random.default_rng(7)
        inputs = [
            {
                "throughput.tokens_per_s_per_gpu": rng.uniform(2000, 8000),
                "utilization.share": rng.uniform(0.4, 0.95),
                "capex.gpu_price_usd": rng.uniform(30000, 60000),
                "market.price_usd_per_mtok": rng.uniform(0.2, 1.0),
                "market.price_decline_annual": rng.uniform(0.0, 0.5),
                "financing.discount_rate_annual": rng.uniform(0.06, 0.15),
            }
            for _ in range(args.naive)
        ]
        start = time.perf_counter()
        for row in inputs:
            naive_ledger(row)
        naive_per = (time.perf_counter() - start) / args.naive
        notes.append(
            f"- Naive per-scenario ledger (pandas + numpy-financial, {args.naive} scenarios): "
            f"{naive_per * 1e6:,.0f} µs per scenario; batch Monte Carlo end to end {per:.1f} µs "
            f"per scenario: **{naive_per / (serial_s / args.n):,.0f}x** faster per scenario on "
            "one core."
        )
        ratio_rows.append(
            f"| synthetic base (bench_engine's BASE) | 72 | **{naive_per * 1e6 / per:,.0f}x** | "
            f"{per:.1f} | {args.n:,} |"
        )
        if args.n_ready > 0:
            for label, (seconds, horizon) in ready_made_rates(args.n_ready, args.repeat).items():
                ratio_rows.append(
                    f"| {label} | {horizon} | **{naive_per / seconds:,.0f}x** | "
                    f"{seconds * 1e6:.1f} | {args.n_ready:,} |"
                )

    notes.append(
        f"- NPV of the {args.n:,}-scenario run: P5 {npv.quantiles[0.05]:,.0f}, P50 "
        f"{npv.quantiles[0.5]:,.0f}, P95 {npv.quantiles[0.95]:,.0f} USD; probability of loss "
        f"{serial.summary.risk['probability_of_loss']:.1%}."
    )
    skipped = [
        part for part, flag in (("Dask", args.skip_dask), ("memory", args.skip_memory)) if flag
    ]
    headline = (
        [
            "Monte Carlo end to end, per scenario, against the naive pandas + numpy-financial "
            "ledger timed in the same run (which models the synthetic base only, so the "
            "ready-made scenarios' ratios flatter it):",
            "",
            "| scenario | months | batch vs naive ledger | µs per scenario | scenarios |",
            "|---|---:|---:|---:|---:|",
            *ratio_rows,
            "",
        ]
        if ratio_rows
        else []
    )
    lines = [
        "## Batch: Monte Carlo summaries (six input distributions)",
        "",
        *headline,
        *(
            [f"Partial run: {', '.join(skipped)} skipped; sizes as in the tables.", ""]
            if skipped
            else []
        ),
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; chunks of {CHUNK:,} scenarios; "
        f"fastest of {max(1, args.repeat)} runs (serial and Dask each).",
        "End to end: sampling (inverse CDFs), validation of the drawn values, projection, streaming "
        "summary (moments, quantiles, NPV risk).",
        "",
        "| run | scenarios | seconds | scenarios/s | target |",
        "|---|---:|---:|---:|---|",
        *rows,
        "",
        *notes,
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if (args.skip_dask or args.skip_memory or args.skip_naive) and not args.write_partial:
        print("(partial run: benchmarks/results/bench_batch.md left as it was)")
        return
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_batch.md").write_text(text)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
