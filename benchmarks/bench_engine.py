"""Engine throughput: 100,000 scenarios x 72 months, against a naive per-scenario pandas ledger.

The naive way is what a careful analyst would write without vectorizing: one pandas DataFrame per
scenario, numpy-financial for the loan and the IRR. Both run here on the same scenarios; the naive
ledger is timed on a sample and scaled per scenario (said in the output), and its NPVs are compared
with the engine's to show both compute the same thing.

Besides the synthetic base, the engine runs the ready-made scenarios users run (READY_MADE: the
seed, the seed with its capital stack, a 10 MW hall), each on `--n-ready` rows with the same
random inputs, and each is reported as a ratio to the naive ledger's time per scenario in the same
run. The naive ledger models the synthetic base (one loan, no capital stack, no hall), so for the
richer scenarios the ratio flatters the naive side.

    .venv/bin/python benchmarks/bench_engine.py [--n 100000] [--n-ready 20000] [--naive 300]

Writes benchmarks/results/bench_engine.md.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: no BLAS threads either

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import numpy_financial as npf
import pandas as pd

from econ import ScenarioBatch, engine, memory, project
from econ.scenario import validate_dict

HERE = Path(__file__).resolve().parent
READY_MADE = {
    "seed (DeepSeek-R1 on one GB200 NVL72 rack)": "deepseek-r1-gb200-nvl72",
    "seed with its capital stack (DDTL, notes, convertibles, covenants)": (
        "deepseek-r1-gb200-nvl72-capital-stack"
    ),
    "10 MW hall (GB300 NVL72, liquid)": "hall-10mw-gb300-nvl72-liquid",
}
"""Ready-made scenarios (models/scenarios/NAME.toml) timed besides the synthetic base."""
BASE = validate_dict(
    {
        "name": "bench",
        "horizon_months": 72,
        "fleet": {"gpu_count": 72},
        "capex": {"gpu_price_usd": 43000.0, "installation_usd_per_gpu": 1750.0},
        "depreciation": {"life_years": 6.0},
        "throughput": {"tokens_per_s_per_gpu": 4867.7},
        "power": {"kw_per_gpu": 1.87, "pue": 1.1, "price_usd_per_kwh": 0.08},
        "facility": {"colo_usd_per_kw_month": 195.0},
        "opex": {"staff_usd_per_month": 5000.0},
        "financing": {
            "debt_share": 0.6,
            "debt_rate_annual": 0.1,
            "debt_term_months": 60,
            "tax_rate": 0.21,
            "discount_rate_annual": 0.12,
            # the naive ledger spreads each year's tax over its months: the same convention
            "tax_payment": "monthly",
        },
        "market": {"price_usd_per_mtok": 0.5, "price_decline_annual": 0.2},
    }
)


def random_columns(n: int, seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "throughput.tokens_per_s_per_gpu": rng.uniform(2000, 8000, n),
        "utilization.share": rng.uniform(0.4, 0.95, n),
        "capex.gpu_price_usd": rng.uniform(30000, 60000, n),
        "market.price_usd_per_mtok": rng.uniform(0.2, 1.0, n),
        "market.price_decline_annual": rng.uniform(0.0, 0.5, n),
        "financing.discount_rate_annual": rng.uniform(0.06, 0.15, n),
    }


def ready_made_batches(n: int) -> dict[str, tuple[ScenarioBatch, int]]:
    """The READY_MADE scenarios as batches of n rows with random_columns' inputs, and horizons."""
    from econ import load_scenario

    out = {}
    for label, name in READY_MADE.items():
        scenario = load_scenario(HERE.parent / "models" / "scenarios" / f"{name}.toml")
        columns = random_columns(n)
        if scenario.capex.system_price_usd is not None:  # priced per system: vary that instead
            columns["capex.system_price_usd"] = (
                columns.pop("capex.gpu_price_usd") * scenario.capex.gpus_per_system
            )
        out[label] = ScenarioBatch.repeat(scenario, n, columns), scenario.horizon
    return out


def naive_ledger(row: dict[str, float]) -> dict[str, float]:
    """One scenario as a pandas ledger, computing the engine's main summary metrics.

    Returns NPV, LCOT, project and equity IRR (annual, numpy-financial), payback and minimum DSCR.
    The break-even price (a root search over whole ledgers) is left out, which favours this side.
    """
    s = BASE
    df = pd.DataFrame(index=pd.RangeIndex(0, 73, name="month"))
    service = (df.index >= 1).astype(float)
    gpus = s.fleet.gpu_count * service
    df["tokens"] = (
        gpus * row["throughput.tokens_per_s_per_gpu"] * row["utilization.share"] * 730 * 3600
    )
    price = row["market.price_usd_per_mtok"] * (1 - row["market.price_decline_annual"]) ** (
        np.maximum(df.index - 1, 0) / 12
    )
    df["revenue"] = df.tokens * price / 1e6
    df["power"] = gpus * s.power.kw_per_gpu * s.power.pue * 730 * s.power.price_usd_per_kwh
    df["facility"] = gpus * s.power.kw_per_gpu * s.facility.colo_usd_per_kw_month
    df["opex"] = s.opex.staff_usd_per_month * service
    capex = (row["capex.gpu_price_usd"] + s.capex.installation_usd_per_gpu) * s.fleet.gpu_count
    df["capex"] = np.where(df.index == 0, capex, 0.0)
    df["depreciation"] = capex / 72 * service
    debt = s.financing.debt_share * capex
    rate = s.financing.debt_rate_annual / 12
    per = np.arange(1, 73)
    in_term = per <= 60
    df["interest"] = np.r_[
        0.0, np.where(in_term, -npf.ipmt(rate, np.minimum(per, 60), 60, debt), 0.0)
    ]
    df["principal"] = np.r_[
        0.0, np.where(in_term, -npf.ppmt(rate, np.minimum(per, 60), 60, debt), 0.0)
    ]
    df["ebitda"] = df.revenue - df.power - df.facility - df.opex
    taxable = (df.ebitda - df.depreciation - df.interest).to_numpy()
    annual = np.add.reduceat(taxable[1:], np.arange(0, 72, 12))
    annual[0] += taxable[0]
    taxed = np.maximum(np.maximum.accumulate(np.cumsum(annual)), 0)
    annual_tax = np.diff(taxed, prepend=0.0) * s.financing.tax_rate
    df["tax"] = np.r_[0.0, np.repeat(annual_tax / 12, 12)]
    df["cash_flow"] = df.ebitda - df.capex - df.tax
    df["equity"] = df.cash_flow - df.interest - df.principal + np.where(df.index == 0, debt, 0.0)
    service_due = df.interest + df.principal
    dscr = ((df.ebitda - df.tax) / service_due.where(service_due > 0)).min()
    monthly = (1 + row["financing.discount_rate_annual"]) ** (1 / 12) - 1
    factor = (1 + monthly) ** -df.index.to_numpy()
    costs = df.capex + df.power + df.facility + df.opex
    cumulative = df.cash_flow.cumsum()
    paid_back = cumulative[cumulative >= 0]
    return {
        "npv_usd": npf.npv(monthly, df.cash_flow.to_numpy()),
        "lcot_usd_per_mtok": (costs * factor).sum() / (df.tokens * factor).sum() * 1e6,
        "irr_project_annual": (1 + npf.irr(df.cash_flow.to_numpy())) ** 12 - 1,
        "irr_equity_annual": (1 + npf.irr(df.equity.to_numpy())) ** 12 - 1,
        "payback_month": paid_back.index[0] if len(paid_back) else np.nan,
        "min_dscr": dscr,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument(
        "--naive", type=int, default=300, help="scenarios timed with the naive ledger"
    )
    parser.add_argument(
        "--n-ready", type=int, default=20_000, help="rows of each ready-made scenario (0: none)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs of each; the fastest counts")
    parser.add_argument(
        "--engine-only", action="store_true", help="print the engine's seconds as JSON, no more"
    )
    args = parser.parse_args()
    columns = random_columns(args.n)
    batch = ScenarioBatch.repeat(BASE, args.n, columns)
    warm = min(args.n, engine.CHUNK_SCENARIOS)  # imports, caches and one chunk's memory
    project(ScenarioBatch.repeat(BASE, warm, {k: v[:warm] for k, v in columns.items()}))

    def fastest(run):
        times = []
        for _ in range(max(args.repeat, 1)):
            start = time.perf_counter()
            out = run()
            times.append(time.perf_counter() - start)
        return min(times), out

    # chunks of engine.CHUNK_SCENARIOS
    engine_s, result = fastest(lambda: project(batch, monthly=False))
    if args.engine_only:
        print(json.dumps({"seconds": engine_s}))
        return
    # The allocator settings (econ.memory) compared in fresh processes, with them and without,
    # in alternating rounds so that a busy spell on the machine slows both alike.
    def fresh(keep: str) -> float:
        done = subprocess.run(
            [sys.executable, __file__, "--n", str(args.n), "--repeat", "1", "--engine-only"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, memory.ENV_SWITCH: keep},
        )
        return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]

    kept_s = plain_s = float("inf")
    for _ in range(max(args.repeat, 1)):
        kept_s, plain_s = min(kept_s, fresh("1")), min(plain_s, fresh("0"))
    ready = {}
    if args.n_ready > 0:
        for small, _ in ready_made_batches(min(args.n_ready, 256)).values():
            project(small, monthly=False)  # warm-up: throughput curves, catalogs, caches
        # Interleaved (each scenario once per round), so that a busy spell on a shared machine
        # slows all alike and the ratios between them (the capital stack's to the seed's) hold.
        batches = ready_made_batches(args.n_ready)
        best = dict.fromkeys(batches, float("inf"))
        for _ in range(max(args.repeat, 1)):
            for label, (ready_batch, _) in batches.items():
                start = time.perf_counter()
                project(ready_batch, monthly=False)
                best[label] = min(best[label], time.perf_counter() - start)
        ready = {label: (best[label] / args.n_ready, batches[label][1]) for label in batches}
    sample = args.naive
    naive_s, naive = fastest(
        lambda: [naive_ledger({k: float(v[i]) for k, v in columns.items()}) for i in range(sample)]
    )
    gaps = {}
    for key in ("npv_usd", "lcot_usd_per_mtok", "min_dscr"):
        theirs = np.array([x[key] for x in naive])
        ours = result.metrics[key][:sample]
        gaps[key] = np.nanmax(np.abs(theirs - ours) / np.abs(theirs).clip(1e-12))

    months = 72
    per_engine = engine_s / args.n
    per_naive = naive_s / sample
    ratio_rows = [
        f"| synthetic base (bench_engine's BASE) | {months} | **{per_naive / per_engine:,.0f}x** | "
        f"{per_engine * 1e6:.1f} | {args.n:,} |",
        *(
            f"| {label} | {horizon} | **{per_naive / per:,.0f}x** | {per * 1e6:.1f} | "
            f"{args.n_ready:,} |"
            for label, (per, horizon) in ready.items()
        ),
    ]
    seed_per = next((per for label, (per, _) in ready.items() if label.startswith("seed (")), None)
    stack_per = next((per for label, (per, _) in ready.items() if "capital stack" in label), None)
    stack_note = (
        [
            f"The capital stack costs {stack_per / seed_per:.2f}x the plain seed per scenario "
            "(the same rows and inputs, `project(batch, monthly=False)`).",
            "",
        ]
        if seed_per and stack_per
        else []
    )
    lines = [
        "## Engine: scenarios x months",
        "",
        "Per scenario, against the naive pandas + numpy-financial ledger timed in the same run "
        f"({per_naive * 1e6:,.0f} µs per scenario on this machine):",
        "",
        "| scenario | months | engine vs naive ledger | engine µs per scenario | rows |",
        "|---|---:|---:|---:|---:|",
        *ratio_rows,
        "",
        *stack_note,
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}, pandas {pd.__version__}; one process, one BLAS thread; "
        f"fastest of {max(args.repeat, 1)} runs of each after a one-chunk warm-up (the ready-made "
        "scenarios in interleaved rounds). The naive "
        "ledger models the synthetic base only (one loan, no capital stack, no hall), so the "
        "ratios of the ready-made scenarios flatter it. The synthetic base in detail:",
        "",
        "| what | scenarios | seconds | scenario-months/s | µs per scenario |",
        "|---|---:|---:|---:|---:|",
        f"| `econ.project` (chunks of {engine.CHUNK_SCENARIOS:,}) | {args.n:,} | {engine_s:.2f} | {args.n * months / engine_s:,.0f} | {engine_s / args.n * 1e6:.1f} |",
        f"| naive pandas ledger + numpy-financial IRR (sample) | {sample:,} | {naive_s:.2f} | {sample * months / naive_s:,.0f} | {per_naive * 1e6:.0f} |",
        f"| `econ.project` in a fresh process, econ's allocator settings | {args.n:,} | {kept_s:.2f} | {args.n * months / kept_s:,.0f} | {kept_s / args.n * 1e6:.1f} |",
        f"| the same, allocator left at glibc's defaults (`{memory.ENV_SWITCH}=0`) | {args.n:,} | {plain_s:.2f} | {args.n * months / plain_s:,.0f} | {plain_s / args.n * 1e6:.1f} |",
        "",
        f"Per scenario the engine is **{per_naive / per_engine:,.0f}x** faster than the naive ledger "
        f"(naive timed on {sample} scenarios and scaled). Both compute LCOT, NPV, project and equity "
        f"IRR, payback and minimum DSCR; the engine also solves the after-tax break-even price. "
        f"Largest relative differences on the sampled scenarios: "
        + ", ".join(f"{k} {v:.1e}" for k, v in gaps.items())
        + ".",
        "",
        f"econ's allocator settings (`econ.memory.keep_freed_memory`: chunk arrays reuse heap pages "
        f"instead of page-faulting fresh mappings) make the engine {plain_s / kept_s:.2f}x as "
        "fast as glibc's defaults (the last two rows: fresh processes, with and without them in "
        f"alternating rounds, fastest of {max(args.repeat, 1)} each).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_engine.md").write_text(text)


if __name__ == "__main__":
    main()
