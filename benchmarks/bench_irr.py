"""Benchmark: econ.excel.irr_batch against per-series loops of numpy-financial and pyxirr.

100,000 synthetic GPU-project series of 73 monthly flows (month 0 = purchase): a negative
first flow (capex), a short ramp that may be negative, then mostly positive monthly margins that
decline with token-price deflation, with an occasional negative month (a repair or a refresh)
that gives the series more than one sign change.

``irr_batch`` runs on all 100,000 series. The per-series loops are timed on subsets (the first
2,000 series for ``numpy_financial.irr``, the first 20,000 for ``pyxirr.irr``) and scaled per
series, because a full numpy-financial loop would take about a minute. The script prints a
markdown table and writes it, with machine information, to ``benchmarks/results/bench_irr.md``.

BLAS keeps numpy's default thread count (one per core), as in a user's session: the solver's
grid scans are matrix products, which it runs with one BLAS thread whatever the caller's setting
(``econ.blas.one_blas_thread``), so its results do not depend on the thread count. The script
also times ``econ.excel.irr`` on the pyxirr loop's 20,000 series with the default threads and
with the caller limiting BLAS to one thread, and checks that both give the same bits.

Run: ``.venv/bin/python benchmarks/bench_irr.py``
"""

from __future__ import annotations

import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import numpy_financial as npf
import pyxirr
from threadpoolctl import threadpool_info, threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from econ.excel import irr, irr_batch, npv_batch  # noqa: E402

N_SERIES = 100_000
N_MONTHS = 73
N_NUMPY_FINANCIAL = 2_000
N_PYXIRR = 20_000
SEED = 42
RESULTS = Path(__file__).resolve().parent / "results" / "bench_irr.md"


def gpu_project_flows(n: int, months: int, seed: int) -> np.ndarray:
    """Monthly project cash flows [USD], shape (n, months)."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, months)
    capex = rng.uniform(2e6, 4e6, n)  # one NVL72-class rack, installed
    margin = capex * rng.uniform(0.02, 0.05, n)  # first-year monthly EBITDA
    deflation = rng.uniform(0.0, 0.02, n)  # monthly decline of the margin
    ramp = np.minimum(1.0, t[None, :] / rng.integers(1, 4, n)[:, None])
    flows = np.empty((n, months))
    flows[:, 0] = -capex
    flows[:, 1:] = (margin[:, None] * ramp * (1 - deflation[:, None]) ** t
                    * rng.normal(1.0, 0.15, (n, months - 1)))
    flows[:, 1] -= capex * rng.uniform(0, 0.03, n)  # commissioning month, sometimes negative
    repair = rng.random((n, months - 1)) < 0.002
    flows[:, 1:] -= repair * capex[:, None] * 0.1
    return flows


def sign_changes(flows: np.ndarray) -> np.ndarray:
    signs = np.sign(flows)
    changes = np.zeros(flows.shape[0], dtype=int)
    last = signs[:, 0].copy()
    for t in range(1, flows.shape[1]):
        s = signs[:, t]
        changes += (s != 0) & (last != 0) & (s != last)
        last = np.where(s != 0, s, last)
    return changes


def best_of(func, repeats: int) -> tuple[float, object]:
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    flows = gpu_project_flows(N_SERIES, N_MONTHS, SEED)
    several = (sign_changes(flows) > 1).mean()
    threads = sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})

    irr_batch(flows[:1000])  # warm-up
    t_batch, ours = best_of(lambda: irr_batch(flows), repeats=3)

    sub = flows[:N_NUMPY_FINANCIAL]
    t_npf, ref_npf = best_of(lambda: np.array([npf.irr(row) for row in sub]), repeats=1)
    sub = flows[:N_PYXIRR]
    t_pyx, ref_pyx = best_of(
        lambda: np.array([pyxirr.irr(row) for row in sub], dtype=float), repeats=2)

    # The issue-20 measure: econ.excel.irr on the pyxirr loop's series, default BLAS threads,
    # and the same with the caller limiting BLAS to one thread (same bits expected).
    t_irr, irr_default = best_of(lambda: irr(sub, 0.01), repeats=3)
    with threadpool_limits(1, user_api="blas"):
        t_irr_one, irr_one = best_of(lambda: irr(sub, 0.01), repeats=3)
    same_bits = irr_default.tobytes() == irr_one.tobytes()

    per_batch = t_batch / N_SERIES
    per_npf = t_npf / N_NUMPY_FINANCIAL
    per_pyx = t_pyx / N_PYXIRR

    changes = sign_changes(flows)

    def agreement(reference: np.ndarray) -> str:
        mine, single = ours[:reference.size], changes[:reference.size] == 1
        both = np.isfinite(mine) & np.isfinite(reference)
        differ = both & ~single & (np.abs(mine - reference) > 1e-9)
        return (f"max abs diff {np.max(np.abs(mine - reference)[both & single]):.1e} on "
                f"{(both & single).sum():,} one-sign-change series; other root on "
                f"{differ.sum():,} of {(~single).sum():,} several-sign-change series")

    rows = [
        ("`econ.excel.irr_batch` (screened matrix scan, Newton)", N_SERIES, t_batch, per_batch,
         1.0, "reference"),
        (f"`econ.excel.irr` on the {N_PYXIRR:,} pyxirr series, default BLAS threads",
         N_PYXIRR, t_irr, t_irr / N_PYXIRR, t_irr / N_PYXIRR / per_batch,
         f"pyxirr loop / this = {t_pyx / t_irr:.1f}x"),
        (f"`econ.excel.irr` on the same {N_PYXIRR:,}, BLAS limited to 1 thread by the caller",
         N_PYXIRR, t_irr_one, t_irr_one / N_PYXIRR, t_irr_one / N_PYXIRR / per_batch,
         f"pyxirr loop / this = {t_pyx / t_irr_one:.1f}x; "
         f"same bits as with the default threads: {'yes' if same_bits else 'NO'}"),
        ("loop of `pyxirr.irr`", N_PYXIRR, t_pyx, per_pyx, per_pyx / per_batch,
         agreement(ref_pyx)),
        ("loop of `numpy_financial.irr`", N_NUMPY_FINANCIAL, t_npf, per_npf,
         per_npf / per_batch, agreement(ref_npf)),
    ]
    lines = [
        "# IRR benchmark: `irr_batch` vs per-series loops",
        "",
        f"{N_SERIES:,} series x {N_MONTHS} monthly flows (negative first flow, mostly positive "
        f"flows; {several:.1%} of series change sign more than once). The loops run on the "
        f"first {N_PYXIRR:,} (pyxirr) and {N_NUMPY_FINANCIAL:,} (numpy-financial) series; "
        f"times per series are scaled to {N_SERIES:,}. Best of 3 (irr_batch), 2 (pyxirr), "
        "1 (numpy-financial) runs.",
        "",
        "| method | series timed | time [s] | per series [us] | time for 100k [s] "
        "| irr_batch is faster by | agreement with irr_batch |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, count, total, per, ratio, note in rows:
        lines.append(f"| {name} | {count:,} | {total:.3f} | {per * 1e6:.2f} | "
                     f"{per * N_SERIES:.2f} | {ratio:,.1f}x | {note} |")
    found = np.isfinite(ours).mean()
    scale = np.abs(flows).sum(axis=1)
    residual = np.nanmax(np.abs(npv_batch(ours, flows)) / scale)
    lines += [
        "",
        f"irr_batch found a rate for {found:.2%} of series; max |NPV at the rate| / "
        f"sum |flows| = {residual:.1e}. Where a series changes sign more than once, irr_batch "
        "returns the root nearest its guess (0.01 per month); the loops' Newton iterations "
        "(guess 0.1) sometimes land on a farther root, hence the differences counted above.",
        "",
        "Targets: >= 5x faster than the pyxirr loop, >= 300x faster than the numpy-financial "
        f"loop: {'met' if per_pyx / per_batch >= 5 else 'MISSED'} / "
        f"{'met' if per_npf / per_batch >= 300 else 'MISSED'}; `econ.excel.irr` on "
        f"{N_PYXIRR:,} series with the default BLAS threads >= 5x the pyxirr loop: "
        f"{t_pyx / t_irr:.1f}x, {'met' if t_pyx / t_irr >= 5 else 'MISSED'}; "
        f"the same bits with one BLAS thread: {'met' if same_bits else 'MISSED'}.",
        "",
        "Machine: "
        f"{cpu_model()}, {os.cpu_count()} logical cores (BLAS threads by default: "
        f"{', '.join(map(str, threads)) or 'no BLAS found'}; the solver's grid scans, matrix "
        "products, run with one); "
        f"Python {platform.python_version()}, "
        f"numpy {np.__version__}, numpy-financial {version('numpy-financial')}, "
        f"pyxirr {version('pyxirr')}; "
        f"{platform.system()} {platform.release()}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(RESULTS)


if __name__ == "__main__":
    main()
