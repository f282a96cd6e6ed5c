"""The Curve: a throughput-latency curve with provenance, whatever produced it.

Measured results (MLPerf, vLLM, SGLang, GenAI-Perf/AIPerf, InferenceX, trtllm-bench, a generic CSV)
and the simulator all produce a Curve, so scenarios and the operating-point logic use one type.

`points` is a DataFrame with one row per operating point (a concurrency or request rate) and these
columns; a column a source does not report is NaN, never 0:

| column | unit |
|---|---|
| concurrency | requests in flight (max concurrency of the run) |
| request_rate_per_s | offered request rate [1/s]; inf for "all at once" |
| output_tokens_per_s | output tokens per second, whole system [tokens/s] |
| total_tokens_per_s | input + output tokens per second, whole system [tokens/s] |
| output_tokens_per_s_per_gpu | output_tokens_per_s / gpu_count [tokens/s/GPU] |
| ttft_s_mean, ttft_s_p50, ttft_s_p90, ttft_s_p95, ttft_s_p99 | time to first token [s] |
| tpot_s_mean, tpot_s_p50, tpot_s_p90, tpot_s_p95, tpot_s_p99 | time per output token after the first (ITL) [s] |
| tokens_per_s_per_user | output tokens per second seen by one request, 1 / TPOT [tokens/s] |
| gpu_count | GPUs serving [GPUs] |
| input_tokens_mean, output_tokens_mean | ISL and OSL per request [tokens] |

`provenance` records where the figures came from: tool, tool_version, file, file_sha256, model,
hardware, precision, and any flags (e.g. derived_per_gpu, availability) with warnings.

Measured curves (econ.throughput.importers) add the optional columns in `OPTIONAL_COLUMNS`: the
input-token rate and end-to-end latency, the run's size, labels that keep different workloads and
serving configurations apart, and per-point provenance (a curve can merge several files):

| column | unit |
|---|---|
| input_tokens_per_s | input (prompt) tokens per second, whole system [tokens/s] |
| e2e_s_mean, e2e_s_p50, e2e_s_p90, e2e_s_p95, e2e_s_p99 | request latency, first byte sent to last token received [s] |
| duration_s | measured duration of the run [s] |
| completed_requests | requests that finished without error [requests] |
| workload | what was served (dataset, ISL/OSL); points of different workloads are not one curve |
| config | how it was served (e.g. offloading, replicas); a frontier may span configurations |
| tool, tool_version, source_file, file_sha256, model, hardware, precision | per-point provenance |
| warnings | the point's own warnings (those naming it) joined by " | "; the rest: Curve.warnings |

MLPerf Endpoints curves (importers.mlperf_endpoints) also fill:

| column | unit |
|---|---|
| failed_requests | samples that failed [requests] |
| tokens_per_s_per_user_p90 | 1 / TPOT p90, Endpoints v1.0's tps_per_user [tokens/s] |
| tokens_per_s_per_user_by_concurrency | system tokens/s / concurrency, Endpoints v0.7's [tokens/s] |
| output_tokens_per_s_loadgen_window, output_tokens_per_s_full_duration | system output tokens/s over the LoadGen window and over the whole run [tokens/s] |
| provisioned_power_kw | provisioned (TDP-based, Appendix E) power of the system, not measured [kW] |
| output_tokens_per_s_per_kw_provisioned | output_tokens_per_s / provisioned_power_kw [tokens/s/kW] |
| j_per_output_token_provisioned | provisioned power / output_tokens_per_s [J/token] |
| achieved_request_rate_per_s | completed requests / s the client achieved (its `qps`) [1/s] |
| curve_reading | "step": read between points as steps, not interpolated (the Endpoints rules) |
| tokens_per_s_per_user_definition | which per-user speed `tokens_per_s_per_user` holds; "" = 1 / mean TPOT |
| throughput_window | the window output_tokens_per_s counts over (`duration_ns` or the LoadGen one) |
| power_basis | what the power columns are (provisioned, not measured) |

These four text columns also stand in `provenance` when every point shares them, so a curve
written as CSV and read back keeps them (`SHARED_PROVENANCE_COLUMNS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

LATENCY_STATS = ("mean", "p50", "p90", "p95", "p99")
CURVE_COLUMNS = (
    "concurrency",
    "request_rate_per_s",
    "output_tokens_per_s",
    "total_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    *(f"ttft_s_{s}" for s in LATENCY_STATS),
    *(f"tpot_s_{s}" for s in LATENCY_STATS),
    "tokens_per_s_per_user",
    "gpu_count",
    "input_tokens_mean",
    "output_tokens_mean",
)


NUMERIC_OPTIONAL_COLUMNS = (
    "input_tokens_per_s",
    "e2e_s_mean",
    "e2e_s_p50",
    "e2e_s_p90",
    "e2e_s_p95",
    "e2e_s_p99",
    "duration_s",
    "completed_requests",
    "failed_requests",
    "tokens_per_s_per_user_p90",
    "tokens_per_s_per_user_by_concurrency",
    "output_tokens_per_s_loadgen_window",
    "output_tokens_per_s_full_duration",
    "provisioned_power_kw",
    "output_tokens_per_s_per_kw_provisioned",
    "j_per_output_token_provisioned",
    "achieved_request_rate_per_s",
)
CURVE_READINGS = ("interpolate", "step")
"""How a curve is read between its measured points (`curve_reading`)."""
SHARED_PROVENANCE_COLUMNS = (
    "curve_reading",
    "tokens_per_s_per_user_definition",
    "throughput_window",
    "power_basis",
)
"""Point columns that say how a curve's figures are to be read; also provenance keys."""
TEXT_OPTIONAL_COLUMNS = (
    "workload",
    "config",
    "tool",
    "tool_version",
    "source_file",
    "file_sha256",
    "model",
    "hardware",
    "precision",
    "warnings",
    *SHARED_PROVENANCE_COLUMNS,
)
OPTIONAL_COLUMNS = NUMERIC_OPTIONAL_COLUMNS + TEXT_OPTIONAL_COLUMNS


def with_all_columns(points: pd.DataFrame) -> pd.DataFrame:
    """The points with every contract and optional column present (NaN or "" where absent), in order.

    Extra columns a producer added are kept after the known ones.
    """
    frame = points.copy()
    for name in CURVE_COLUMNS + NUMERIC_OPTIONAL_COLUMNS:
        frame[name] = pd.to_numeric(frame[name], errors="coerce") if name in frame else float("nan")
    for name in TEXT_OPTIONAL_COLUMNS:
        frame[name] = frame[name].fillna("").astype(str) if name in frame else ""
    known = list(CURVE_COLUMNS + OPTIONAL_COLUMNS)
    return frame[known + [c for c in frame.columns if c not in known]].reset_index(drop=True)


def shared_provenance(points: pd.DataFrame) -> dict[str, str]:
    """The SHARED_PROVENANCE_COLUMNS every point fills, as provenance: `curve_reading` when all
    points share one, the others as their distinct values joined by "; " (as a merged curve's
    `model`); a column some point leaves empty says nothing about the curve."""
    shared = {}
    for column in SHARED_PROVENANCE_COLUMNS:
        values = points[column].fillna("").astype(str) if column in points else pd.Series([""])
        distinct = sorted(set(values))
        if not distinct or "" in distinct:
            continue
        if column != "curve_reading" or len(distinct) == 1:
            shared[column] = "; ".join(distinct)
    return shared


@dataclass(frozen=True)
class Curve:
    """Operating points of one serving configuration, with where they came from."""

    points: pd.DataFrame
    provenance: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def pareto_frontier(tokens_per_s_per_user, tokens_per_s_per_gpu):
    """Mask of the points no other point beats on both axes [bool (K,)].

    Point i is dominated when some j has u_j >= u_i and x_j >= x_i with one inequality strict
    (Pareto optimality). Points with a NaN or infinite coordinate are never on the frontier; of
    exact duplicates the first is kept. One sort, O(K log K): measured curves and the simulator's
    envelope over thousands of layouts and loads use the same function.

    Parameters
    ----------
    tokens_per_s_per_user : array (K,)  per-user output speed [tokens/s]
    tokens_per_s_per_gpu : array (K,)  output throughput per GPU [tokens/s/GPU]
    """
    u = np.asarray(tokens_per_s_per_user, dtype=float)
    x = np.asarray(tokens_per_s_per_gpu, dtype=float)
    finite = np.isfinite(u) & np.isfinite(x)
    keep = np.zeros(u.shape, dtype=bool)
    index = np.flatnonzero(finite)
    if index.size == 0:
        return keep
    # Highest user speed first, then highest throughput; a stable sort keeps the first twin first.
    order = index[np.lexsort((-x[index], -u[index]))]
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(x[order])[:-1]))
    keep[order] = x[order] > best_before
    return keep
