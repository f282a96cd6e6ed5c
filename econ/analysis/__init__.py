"""Batch analysis on top of the engine: sweeps, Monte Carlo, sensitivity, chunked executors.

Public API (re-exports):

- sweep(base, grid=... | table=..., **run_options) -> RunResult (.rows: one row per scenario)
- montecarlo(base, {path: dist}, n, seed=0, sampling="random", correlation=None, ...) -> RunResult
  (.summary: quantiles, moments, NPV risk)
- tornado(base, {path: (low, high)}), sobol(base, {path: dist}, n), morris(...) -> SensitivityResult;
  percent_ranges(base, paths, pct) -> {path: (low, high)}, ranges of +-pct % around the base
- make_executor("serial" | "process" | "dask", workers=None, scheduler=None)
- run(job, executor=None, chunk_size=16384, store=None, ...) -> RunResult: the chunked driver

run_options: executor, chunk_size, store (chunk folder: resume), progress, exact_limit, overwrite,
hold_debt (every scenario holds the base case's sized loan: econ.analysis.committed).
"""

from econ.analysis.distributions import parse_distribution
from econ.analysis.executors import make_executor
from econ.analysis.montecarlo import MonteCarlo, MonteCarloPlan, montecarlo
from econ.analysis.runner import RunResult, run
from econ.analysis.sensitivity import (
    SensitivityResult,
    morris,
    percent_ranges,
    sobol,
    tornado,
)
from econ.analysis.sweeps import GridSweep, TableSweep, sweep

__all__ = [
    "GridSweep",
    "MonteCarlo",
    "MonteCarloPlan",
    "RunResult",
    "SensitivityResult",
    "TableSweep",
    "make_executor",
    "montecarlo",
    "morris",
    "parse_distribution",
    "percent_ranges",
    "run",
    "sobol",
    "sweep",
    "tornado",
]
