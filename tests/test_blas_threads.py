"""IRR and NPV independent of the BLAS thread count (econ.blas.one_blas_thread).

A threaded BLAS may split the solver's grid products differently with two threads than with one
and change an IRR's last bits: a Dask run (one BLAS thread per worker) then differs from a serial
run (the machine's default). The solver runs its products with one thread whatever the caller's
setting, so the bits are the same under 1 and 2 threads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from econ import excel
from econ.blas import blas_threads, one_blas_thread
from tests.conftest import ROOT

CHILD = """
import hashlib, json, sys
import numpy as np
from econ.blas import blas_threads
from econ.excel import irr_batch, npv_batch, xirr_batch
from tests.test_blas_threads import project_flows

outside = sorted(set(blas_threads().values()))
digest = hashlib.sha256()
for months in (73, 121):
    flows = project_flows(6000, months, seed=months)
    digest.update(irr_batch(flows).tobytes())
    digest.update(npv_batch(0.01, flows).tobytes())
dates = np.datetime64("2026-01-01") + 30 * np.arange(25)
digest.update(xirr_batch(project_flows(3000, 25, seed=3), dates).tobytes())
print(json.dumps({"threads": outside, "digest": digest.hexdigest()}))
"""


def project_flows(n: int, months: int, seed: int) -> np.ndarray:
    """GPU-project-like monthly flows [USD]: capex at month 0, declining noisy margins, a few
    repair months (several sign changes in about a tenth of the series)."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, months)
    capex = rng.uniform(2e6, 4e6, n)
    margin = capex[:, None] * rng.uniform(0.02, 0.05, (n, 1)) * (1 - 0.01) ** t
    flows = np.empty((n, months))
    flows[:, 0] = -capex
    flows[:, 1:] = margin * rng.normal(1.0, 0.15, (n, months - 1))
    flows[:, 1:] -= (rng.random((n, months - 1)) < 0.002) * capex[:, None] * 0.1
    return flows


def run_child(threads: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_irr_npv_xirr_bits_are_the_same_under_one_and_two_blas_threads():
    one, two = run_child(1), run_child(2)
    if two["threads"] != [2]:
        pytest.skip(f"BLAS would not take two threads here ({two['threads']})")
    assert one["threads"] == [1]
    assert one["digest"] == two["digest"]


def _can_use_two_threads() -> bool:
    with threadpool_limits(2, user_api="blas"):
        return set(blas_threads().values()) == {2}


needs_two = pytest.mark.skipif(not _can_use_two_threads(), reason="BLAS takes one thread here")


@needs_two
def test_the_solver_runs_with_one_blas_thread_and_gives_the_caller_its_setting_back(
    monkeypatch,
):
    seen = []
    solve = excel._solve_periodic

    def spy(flows, guess):
        seen.append(set(blas_threads().values()))
        return solve(flows, guess)

    monkeypatch.setattr(excel, "_solve_periodic", spy)
    flows = project_flows(500, 73, seed=1)
    with threadpool_limits(2, user_api="blas"):
        rates = excel.irr_batch(flows)
        after = set(blas_threads().values())
    with threadpool_limits(1, user_api="blas"):
        same = excel.irr_batch(flows)
    assert seen == [{1}, {1}]
    assert after == {2}
    assert rates.tobytes() == same.tobytes()
    np.testing.assert_allclose(excel.npv_batch(rates, flows), 0.0, atol=1e-6)


@needs_two
def test_one_thread_for_every_python_thread_inside_and_restored_when_the_last_leaves():
    """Streamlit sessions and Dask worker threads run the solver concurrently: a thread that
    entered first and is still alive must not stop another from getting one thread, and no
    thread may restore the setting while another is inside."""
    first_inside, first_may_leave, first_left = (threading.Event() for _ in range(3))
    second_may_leave = threading.Event()
    seen = {}

    def first():
        with one_blas_thread():
            seen["first"] = set(blas_threads().values())
            first_inside.set()
            first_may_leave.wait(10)
        first_left.set()
        second_may_leave.wait(10)  # alive while the second thread works

    def second():
        first_inside.wait(10)
        with one_blas_thread():
            first_may_leave.set()
            first_left.wait(10)
            seen["second, the first gone"] = set(blas_threads().values())
        seen["after both"] = set(blas_threads().values())
        with one_blas_thread():  # again, while the first thread is alive but outside
            seen["second again"] = set(blas_threads().values())
        second_may_leave.set()

    with threadpool_limits(2, user_api="blas"):
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert not any(t.is_alive() for t in threads)
        assert seen == {
            "first": {1},
            "second, the first gone": {1},
            "after both": {2},
            "second again": {1},
        }
        assert set(blas_threads().values()) == {2}


@needs_two
def test_serial_with_two_blas_threads_and_dask_workers_with_one_give_the_same_rows():
    pytest.importorskip("distributed")
    from econ import load_scenario
    from econ.analysis import make_executor, montecarlo

    base = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    dists = {
        "market.price_decline_annual": "triangular(0.15,0.3,0.5)",
        "throughput.tokens_per_s_per_gpu": "normal(4867.7,500,low=3000)",
        "financing.debt_rate_annual": "pert(0.09,0.1075,0.13)",
    }
    options = {
        "n": 3000,
        "seed": 11,
        "keep_rows": True,
        "chunk_size": 1024,
        "correlation": {("market.price_decline_annual", "throughput.tokens_per_s_per_gpu"): -0.4},
    }
    with threadpool_limits(2, user_api="blas"):
        serial = montecarlo(base, dists, **options)
    with make_executor("dask", workers=2) as executor:
        dask = montecarlo(base, dists, executor=executor, **options)
    # Most rows have a project IRR, so the bit-for-bit comparison covers the solver.
    assert serial.rows["irr_project_annual"].notna().sum() > 1500
    pd.testing.assert_frame_equal(serial.rows, dask.rows, check_exact=True)
