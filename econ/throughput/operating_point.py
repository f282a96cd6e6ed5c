"""The operating point a service-level objective allows on a throughput-latency curve.

A serving configuration traded along its load axis gives points of (tokens/s per user, output
tokens/s per GPU). Only the Pareto frontier matters: a point with both less per-user speed and
less per-GPU throughput than another is never the best choice (the InferenceX presentation of
throughput against interactivity; Pareto 1906). Along the frontier, ordered by per-GPU throughput,
each column is interpolated linearly between neighbouring measured points; piecewise-linear
interpolation never overshoots its data, so it preserves monotone data (Fritsch & Carlson 1980,
doi:10.1137/0717021), and it never extrapolates: an SLO looser than the highest measured load is
clamped to that point and flagged; an SLO no measured point meets is an error carrying the
closest point.

MLPerf Endpoints publishes its curve as a step function and forbids interpolation between measured
points (Endpoints rules v1.0 §5.2). `reading="step"` follows it: the operating point is the
measured point of highest per-GPU throughput that meets every limit, among all measured points
(not only the frontier: a point slower per user may still be the one that meets a TTFT limit).
A curve whose provenance says `curve_reading = "step"` (the Endpoints importers) is read that way
unless `reading="interpolate"` is asked for.

Constraints are upper limits on latency statistics (TTFT, TPOT, end-to-end; any of mean, p50,
p90, p95, p99) and a lower limit on tokens/s per user. The operating point is the largest per-GPU
output throughput on the frontier satisfying all of them, or the best measured point satisfying
them when that is larger: the frontier is built on per-user speed and per-GPU throughput alone, so
a point it drops (slower per user) may be the one meeting a TTFT limit. Everything is vectorized
over a leading scenario axis of limits; `operating_point` is the one-scenario form that raises when
no point fits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from econ.errors import InputError
from econ.labels import apart, counted
from econ.text import LISTED_LIMIT, shortened
from econ.throughput.curve import (
    CURVE_READINGS,
    LATENCY_STATS,
    Curve,
    pareto_frontier,
    with_all_columns,
)
from econ.units import SECONDS_PER_HOUR, TOKENS_PER_MTOK

LATENCY_COLUMNS = (
    *(f"{m}_s_{s}" for m in ("ttft", "tpot") for s in LATENCY_STATS),
    "e2e_s_mean",
    "e2e_s_p99",
)
USER_COLUMN = "tokens_per_s_per_user"
GPU_COLUMN = "output_tokens_per_s_per_gpu"
INTERPOLATED_COLUMNS = (
    "concurrency",
    "request_rate_per_s",
    "output_tokens_per_s",
    "total_tokens_per_s",
    "input_tokens_per_s",
    GPU_COLUMN,
    USER_COLUMN,
    "gpu_count",
    "input_tokens_mean",
    "output_tokens_mean",
    *(f"{m}_s_{s}" for m in ("ttft", "tpot") for s in LATENCY_STATS),
    "e2e_s_mean",
    "e2e_s_p99",
)
PROVISIONED_COLUMNS = (
    "provisioned_power_kw",
    "output_tokens_per_s_per_kw_provisioned",
    "j_per_output_token_provisioned",
)
"""Provisioned-power figures of MLPerf Endpoints curves, recomputed at the operating point."""
EXTRA_COLUMNS = ("tokens_per_s_per_user_p90", "tokens_per_s_per_user_by_concurrency")
"""Other columns some curves carry, read at the operating point when present."""
READINGS = CURVE_READINGS
_REL_TOL = 1e-9


class OperatingPointError(InputError):
    """A curve or SLO from which no operating point can be taken (message says why)."""


class NoFeasiblePointError(OperatingPointError):
    """No measured point meets the SLO; `closest` holds the point that comes nearest."""

    def __init__(self, message: str, closest: dict):
        super().__init__(message)
        self.closest = closest


def _with_slack(upper_limits: np.ndarray) -> np.ndarray:
    """Upper limits loosened by _REL_TOL of their size, so that a value printed rounded to its
    limit meets it. By |L|: the per-user speed enters negated (-u <= -L), and L (1 + tol) would
    tighten it, refusing a point exactly at its minimum speed."""
    return upper_limits + _REL_TOL * np.abs(upper_limits)


def _knots_within(m: np.ndarray, lim: np.ndarray) -> np.ndarray:
    """Whether each measured point meets every limit, per scenario [bool (n, K)]; NaN fails."""
    free = np.isnan(lim)[:, :, None]  # (n, C, 1)
    return (free | (m[None, :, :] <= _with_slack(lim)[:, :, None])).all(axis=1)


def feasible_position(knots, upper_limits):
    """Largest fractional frontier position t in [0, K-1] where every interpolated metric is
    within its limit, per scenario [(n,), NaN where none is].

    Metric c at t = k + s (0 <= s <= 1) is m_c[k] + s (m_c[k+1] - m_c[k]); on each segment the
    set of s meeting m <= L is an interval found in closed form, the intervals of all metrics
    are intersected, and the last non-empty one gives t. A NaN knot value makes its segments
    infeasible for that metric.

    Parameters
    ----------
    knots : array (C, K)  metric values at the frontier points, ordered by throughput
    upper_limits : array (n, C)  limits (m <= L); NaN = no limit on that metric
    """
    m = np.asarray(knots, dtype=float)
    lim = np.asarray(upper_limits, dtype=float)
    n, k = lim.shape[0], m.shape[1]
    free = np.isnan(lim)[:, :, None]  # (n, C, 1)
    limit = lim[:, :, None]
    knot_all = _knots_within(m, lim)  # (n, K)
    if k == 1:
        return np.where(knot_all[:, 0], 0.0, np.nan)
    m0, m1 = m[:, :-1][None], m[:, 1:][None]  # (1, C, K-1)
    d = m1 - m0
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (limit - m0) / d
    lo = np.where(d < 0, np.maximum(cross, 0.0), 0.0)
    hi = np.where(d > 0, np.minimum(cross, 1.0), 1.0)
    flat_ok = m0 <= _with_slack(limit)
    nan_seg = np.isnan(m0) | np.isnan(m1)
    lo = np.where(free, 0.0, np.where(d == 0, np.where(flat_ok, 0.0, 2.0), lo))
    hi = np.where(free, 1.0, np.where(d == 0, np.where(flat_ok, 1.0, -1.0), hi))
    lo = np.where(nan_seg & ~free, 2.0, lo)
    hi = np.where(nan_seg & ~free, -1.0, hi)
    seg_lo, seg_hi = lo.max(axis=1, initial=0.0), hi.min(axis=1, initial=1.0)  # (n, K-1)
    seg_ok = seg_hi >= seg_lo - 1e-12
    position = np.where(seg_ok, np.arange(k - 1)[None, :] + np.clip(seg_hi, 0.0, 1.0), np.nan)
    knot_position = np.where(knot_all, np.arange(k)[None, :].astype(float), np.nan)
    both = np.concatenate([position, knot_position], axis=1)
    best = np.full(n, np.nan)
    has = ~np.isnan(both).all(axis=1)
    best[has] = np.nanmax(both[has], axis=1)
    return best


def step_position(knots, upper_limits):
    """Largest index of a measured point meeting every limit, per scenario [(n,), NaN where none].

    The step-function reading of MLPerf Endpoints (rules v1.0 §5.2): between measured points the
    curve holds the last measured value, so only measured points are candidates. A NaN knot
    value fails its limit.

    Parameters
    ----------
    knots : array (C, K)  metric values at the candidate points, ordered by throughput
    upper_limits : array (n, C)  limits (m <= L); NaN = no limit on that metric
    """
    m = np.asarray(knots, dtype=float)
    k = m.shape[1]
    within = _knots_within(m, np.asarray(upper_limits, dtype=float))
    index = np.where(within, np.arange(k)[None, :], -1).max(axis=1, initial=-1)
    return np.where(index >= 0, index.astype(float), np.nan)


def interpolate_at(values, position):
    """Linear interpolation of frontier values at fractional positions [(n,)].

    Parameters
    ----------
    values : array (K,)  a column at the frontier points, ordered by throughput
    position : array (n,)  t in [0, K-1]; NaN gives NaN

    Between a finite value and an infinite one (a request rate of 30/s and "all at once") the
    value is not known: NaN, not inf.
    """
    v = np.asarray(values, dtype=float)
    t = np.asarray(position, dtype=float)
    k0 = np.clip(np.floor(np.nan_to_num(t)), 0, max(len(v) - 2, 0)).astype(int)
    k1 = np.minimum(k0 + 1, len(v) - 1)
    s = np.nan_to_num(t) - k0
    with np.errstate(invalid="ignore"):  # inf - inf between two "all at once" rates
        out = v[k0] + s * (v[k1] - v[k0])
    # exact knots and equal neighbours (incl. inf) must not be spoiled by NaN/inf arithmetic
    out = np.where((s == 0) | (v[k0] == v[k1]), v[k0], np.where(s == 1, v[k1], out))
    unknown = np.isinf(out) & (v[k0] != v[k1]) & (s > 0) & (s < 1)
    return np.where(np.isnan(t) | unknown, np.nan, out)


def cost_usd_per_mtok(usd_per_gpu_hour, tokens_per_s_per_gpu):
    """Cost of a million output tokens from an hourly GPU cost [USD/Mtok].

    cost = price_per_gpu_hour / (tokens_per_s_per_gpu x 3600 s/h / 1e6 tokens/Mtok); the definition
    used for the seed scenario's price (its TOML's sources) and InferenceX's cost per token.

    Parameters
    ----------
    usd_per_gpu_hour : array  cost or price of one GPU for one hour [USD/GPU-h]
    tokens_per_s_per_gpu : array  output throughput per GPU [tokens/s/GPU]
    """
    rate = np.asarray(tokens_per_s_per_gpu, dtype=float) * SECONDS_PER_HOUR / TOKENS_PER_MTOK
    with np.errstate(divide="ignore"):
        return np.where(rate > 0, np.asarray(usd_per_gpu_hour, dtype=float) / rate, np.nan)


@dataclass(frozen=True)
class OperatingPoint:
    """The point an SLO allows, interpolated on the frontier, with how it was obtained."""

    tokens_per_s_per_gpu: float
    """Output tokens per second per GPU at the operating point [tokens/s/GPU]."""
    input_tokens_per_s_per_gpu: float
    total_tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    values: dict[str, float]
    """Every interpolated curve column (latencies in s, concurrency, ...)."""
    binding: str
    """The limit that stops higher load, or "highest measured load" when clamped."""
    interpolated: bool
    clamped: bool
    bracket: tuple[int, int]
    """Row numbers (in the curve's points) of the measured points around the operating point."""
    limits: dict[str, float]
    group: str
    provenance: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        def clean(v):
            if isinstance(v, float) and math.isnan(v):
                return None
            if isinstance(v, float) and math.isinf(v):
                return "inf"
            return v

        return {
            "tokens_per_s_per_gpu": clean(self.tokens_per_s_per_gpu),
            "input_tokens_per_s_per_gpu": clean(self.input_tokens_per_s_per_gpu),
            "total_tokens_per_s_per_gpu": clean(self.total_tokens_per_s_per_gpu),
            "tokens_per_s_per_user": clean(self.tokens_per_s_per_user),
            "input_share_of_total_tokens": clean(
                self.input_tokens_per_s_per_gpu / self.total_tokens_per_s_per_gpu
                if self.total_tokens_per_s_per_gpu > 0
                else math.nan
            ),
            "values": {k: clean(v) for k, v in self.values.items()},
            "binding": self.binding,
            "interpolated": self.interpolated,
            "clamped": self.clamped,
            "bracket": list(self.bracket),
            "limits": {k: clean(v) for k, v in self.limits.items()},
            "group": self.group,
            "provenance": self.provenance,
            "warnings": list(self.warnings),
        }


def _limits(
    ttft_p99_s, tpot_p99_s, min_tokens_per_s_per_user, latency_limits
) -> dict[str, np.ndarray]:
    limits: dict[str, object] = {}
    if ttft_p99_s is not None:
        limits["ttft_s_p99"] = ttft_p99_s
    if tpot_p99_s is not None:
        limits["tpot_s_p99"] = tpot_p99_s
    for name, value in (latency_limits or {}).items():
        if name not in LATENCY_COLUMNS:
            raise OperatingPointError(
                f"unknown latency limit {name!r}; expected one of {', '.join(LATENCY_COLUMNS)}"
            )
        if name in limits:
            raise OperatingPointError(f"latency limit {name!r} given twice")
        limits[name] = value
    if min_tokens_per_s_per_user is not None:
        limits[USER_COLUMN] = min_tokens_per_s_per_user
    out = {}
    for name, value in limits.items():
        array = np.atleast_1d(np.asarray(value, dtype=float))
        if array.ndim != 1 or (array[~np.isnan(array)] <= 0).any() or np.isinf(array).any():
            raise OperatingPointError(
                f"limit {name} = {value!r}; expected a positive finite number (or NaN for no "
                "limit) per scenario"
            )
        out[name] = array
    return out


def group_labels(points: pd.DataFrame) -> pd.Series:
    """'model | hardware | workload' of each point: points of different groups are not one curve."""
    return points["model"] + " | " + points["hardware"] + " | " + points["workload"]


def _groups_shown(groups: list[str]) -> str:
    """Group labels (text from the file) as a message quotes them: each cut short and escaped,
    the first LISTED_LIMIT, then how many more."""
    more = len(groups) - LISTED_LIMIT
    shown = "; ".join(shortened(g) for g in groups[:LISTED_LIMIT])
    return shown + (f" ... and {more:,} more" if more > 0 else "")


def select_group(curve: Curve, workload: str | None = None) -> tuple[pd.DataFrame, str]:
    """The points of one model, hardware and workload; `workload` picks by substring of that
    group label or of a point's serving configuration (`config`: a file of several deployments,
    such as llm-d's no-features / base / kvcache runs, is narrowed to one of them)."""
    points = with_all_columns(curve.points)
    labels = group_labels(points)
    if workload is not None:
        text = workload.lower()
        configs = points["config"].fillna("").astype(str)
        in_config = configs.str.lower().str.contains(text, regex=False)
        chosen = labels.str.lower().str.contains(text, regex=False) | in_config
        groups = list(dict.fromkeys(labels[chosen]))
        if len(groups) != 1:
            named = list(dict.fromkeys(configs[configs != ""]))
            raise OperatingPointError(
                f"workload {shortened(workload)} matches {len(groups)} of the curve's groups; "
                f"expected a text of exactly one of: {_groups_shown(list(dict.fromkeys(labels)))}"
                + (f" (or of a serving configuration: {_groups_shown(named)})" if named else "")
            )
        group = groups[0]
        if in_config[chosen].all():  # narrowed to the configurations named: they join the label
            group = f"{group} | {'; '.join(dict.fromkeys(configs[chosen]))}"
        return points[chosen], group
    groups = list(dict.fromkeys(labels))
    if len(groups) > 1:
        raise OperatingPointError(
            f"the curve mixes {len(groups)} model/hardware/workload groups, which are not one "
            f"curve: {_groups_shown(groups)}; choose one (--workload TEXT)"
        )
    return points, groups[0]


def _frontier(points: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    warnings = []
    if points[GPU_COLUMN].isna().all():
        raise OperatingPointError(
            "the curve has no per-GPU throughput (its GPU count is unknown); import it with the "
            "GPU count (--gpus N)"
        )
    usable = points[points[GPU_COLUMN].notna()]
    if usable[USER_COLUMN].notna().any():
        missing = usable[USER_COLUMN].isna()
        if missing.any():
            warnings.append(
                f"{int(missing.sum())} points without tokens/s per user (no TPOT) left out of "
                "the frontier"
            )
        mask = pareto_frontier(usable[USER_COLUMN], usable[GPU_COLUMN])
        frontier = usable[mask].sort_values(GPU_COLUMN, kind="stable")
        below = int((~mask).sum() - missing.sum())
        if below > 0:
            warnings.append(
                f"{counted(below, 'measured point')} {'is' if below == 1 else 'are'} below the "
                "frontier (another point is faster per user and per GPU): not interpolated "
                "between, but still taken as measured points when one meets the SLO with more "
                "throughput"
            )
    else:
        warnings.append(
            "no point reports tokens/s per user (non-streaming runs): no frontier, no "
            "interpolation; the operating point is the best measured point meeting the SLO"
        )
        frontier = usable.sort_values(GPU_COLUMN, kind="stable")
    return frontier, warnings


def _reading(curve: Curve, reading: str | None) -> str:
    chosen = reading or curve.provenance.get("curve_reading") or "interpolate"
    if chosen not in READINGS:
        raise OperatingPointError(f"reading {chosen!r}; expected one of {', '.join(READINGS)}")
    return chosen


def _candidates(points: pd.DataFrame, reading: str) -> tuple[pd.DataFrame, list[str]]:
    """The points an operating point may sit on: the frontier, or every measured point (step)."""
    if reading == "interpolate":
        return _frontier(points)
    if points[GPU_COLUMN].isna().all():
        return _frontier(points)  # raises with the reason
    usable = points[points[GPU_COLUMN].notna()].sort_values(GPU_COLUMN, kind="stable")
    return usable, [
        "step reading (MLPerf Endpoints rules §5.2): the operating point is a measured point, "
        "never an interpolation between points (--interpolate reads between them)"
    ]


def _knots(frontier: pd.DataFrame, limits: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Constraint metrics as upper limits: latencies as they are, user speed negated."""
    names = list(limits)
    knots = (
        np.vstack(
            [
                -frontier[n].to_numpy(dtype=float)
                if n == USER_COLUMN
                else frontier[n].to_numpy(dtype=float)
                for n in names
            ]
        )
        if names
        else np.zeros((0, len(frontier)))
    )
    n = max((len(a) for a in limits.values()), default=1)
    upper = (
        np.column_stack(
            [
                -np.broadcast_to(limits[c], n)
                if c == USER_COLUMN
                else np.broadcast_to(limits[c], n)
                for c in names
            ]
        )
        if names
        else np.zeros((n, 0))
    )
    return knots, upper


def operating_points(
    curve: Curve,
    ttft_p99_s=None,
    tpot_p99_s=None,
    min_tokens_per_s_per_user=None,
    *,
    latency_limits: Mapping[str, object] | None = None,
    workload: str | None = None,
    reading: str | None = None,
) -> dict[str, np.ndarray]:
    """Operating points of one curve for n SLOs at once [dict of (n,) arrays].

    Each limit is a scalar or an array (n,) [s for latencies, tokens/s for the per-user speed];
    NaN in a row means no limit for that scenario. Returns every column in INTERPOLATED_COLUMNS,
    plus `input_tokens_per_s_per_gpu`, `total_tokens_per_s_per_gpu`, `position` (fractional
    frontier index; NaN where the answer is a measured point), `feasible`, `clamped` and
    `from_measured` (bool: the best measured point meeting every limit beat the frontier's
    interpolation), `measured_row` (its row in the curve's points, else NaN) and
    `frontier_tokens_per_s_per_gpu` (the frontier's answer). Infeasible rows hold NaN. `reading` is
    "interpolate" (along the frontier), "step" (measured points only) or None (the curve's own
    `curve_reading`, else interpolate). Curves with provisioned power also get
    PROVISIONED_COLUMNS, and the EXTRA_COLUMNS they carry.
    """
    limits = _limits(ttft_p99_s, tpot_p99_s, min_tokens_per_s_per_user, latency_limits)
    reading = _reading(curve, reading)
    points, _ = select_group(curve, workload)
    frontier, _ = _candidates(points, reading)
    for name in limits:
        if name != USER_COLUMN and frontier[name].isna().all():
            raise OperatingPointError(
                f"the curve reports no {name} on its frontier points; set a limit on a "
                f"statistic it reports ({', '.join(c for c in LATENCY_COLUMNS if frontier[c].notna().any()) or 'none'})"
            )
    knots, upper = _knots(frontier, limits)
    if reading == "step" or not frontier[USER_COLUMN].notna().any():
        position = step_position(knots, upper)  # measured points only
    else:
        position = feasible_position(knots, upper)
    columns = INTERPOLATED_COLUMNS + tuple(
        c
        for c in EXTRA_COLUMNS + PROVISIONED_COLUMNS[:1]
        if c in frontier and frontier[c].notna().any()
    )
    out = {c: interpolate_at(frontier[c].to_numpy(dtype=float), position) for c in columns}
    out["frontier_tokens_per_s_per_gpu"] = out[GPU_COLUMN].copy()
    # The frontier is built on (per-user speed, per-GPU throughput) alone: a point it drops
    # (slower per user) may be the one meeting a TTFT limit, above what the frontier allows.
    # Never return less than the best measured point meeting every limit.
    measured = points[points[GPU_COLUMN].notna()].sort_values(GPU_COLUMN, kind="stable")
    index = step_position(*_knots(measured, limits))
    best = interpolate_at(measured[GPU_COLUMN].to_numpy(dtype=float), index)
    from_measured = ~np.isnan(index) & (
        np.isnan(position) | (best > out[GPU_COLUMN] * (1 + _REL_TOL))
    )
    if reading == "step":
        from_measured[:] = False  # the step reading's candidates are already every point
    for c in columns:
        out[c] = np.where(
            from_measured, interpolate_at(measured[c].to_numpy(dtype=float), index), out[c]
        )
    rows = measured.index.to_numpy(dtype=float)
    out["measured_row"] = np.where(
        from_measured, rows[np.nan_to_num(index).astype(int)] if len(rows) else np.nan, np.nan
    )
    out["from_measured"] = from_measured
    if PROVISIONED_COLUMNS[0] in out:
        kw = out[PROVISIONED_COLUMNS[0]]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[PROVISIONED_COLUMNS[1]] = out["output_tokens_per_s"] / kw
            out[PROVISIONED_COLUMNS[2]] = kw * 1000.0 / out["output_tokens_per_s"]
    gpus = out["gpu_count"]
    out["input_tokens_per_s_per_gpu"] = out["input_tokens_per_s"] / gpus
    out["total_tokens_per_s_per_gpu"] = out["total_tokens_per_s"] / gpus
    out["position"] = np.where(from_measured, np.nan, position)
    out["feasible"] = ~np.isnan(position) | from_measured
    last = len(frontier) - 1
    at_top = position >= last
    binding = np.zeros_like(at_top)
    if reading == "interpolate":  # a step reading binds only by the next point's breach
        for c in range(len(limits)):
            value = interpolate_at(knots[c], position)
            binding |= np.isclose(value, upper[:, c], rtol=1e-6, atol=0.0)
    out["clamped"] = at_top & ~binding & ~from_measured & out["feasible"]
    return out


def operating_point(
    curve: Curve,
    ttft_p99_s: float | None = None,
    tpot_p99_s: float | None = None,
    min_tokens_per_s_per_user: float | None = None,
    *,
    latency_limits: Mapping[str, float] | None = None,
    workload: str | None = None,
    reading: str | None = None,
) -> OperatingPoint:
    """The highest per-GPU output throughput meeting the SLO: on the curve's frontier, or a
    measured point off it when that is higher (never less than a measured point meeting the SLO).

    Parameters
    ----------
    curve : Curve  measured or simulated points
    ttft_p99_s : float  limit on p99 time to first token [s]
    tpot_p99_s : float  limit on p99 time per output token [s]
    min_tokens_per_s_per_user : float  lower limit on per-user output speed [tokens/s]
    latency_limits : {column: limit}  other latency limits, e.g. {"ttft_s_p95": 5.77} [s]
    workload : str  picks one model/hardware/workload group when the curve holds several
    reading : "interpolate" | "step" | None  between measured points along the frontier, or only
        measured points (MLPerf Endpoints); None takes the curve's `curve_reading`

    Raises
    ------
    NoFeasiblePointError  no measured point meets the SLO (`.closest` is the nearest point)
    OperatingPointError  the curve cannot give a per-GPU point (no GPU count, missing statistic)
    """
    limits = _limits(ttft_p99_s, tpot_p99_s, min_tokens_per_s_per_user, latency_limits)
    for name, array in limits.items():
        if len(array) != 1:
            raise OperatingPointError(f"limit {name} has {len(array)} values; expected one")
        if np.isnan(array[0]):  # NaN is "no limit" only in the vectorized form, row by row
            raise OperatingPointError(
                f"limit {name} = nan; expected a positive finite number (None for no limit)"
            )
    reading = _reading(curve, reading)
    points, group = select_group(curve, workload)
    frontier, warnings = _candidates(points, reading)
    batch = operating_points(
        curve,
        ttft_p99_s,
        tpot_p99_s,
        min_tokens_per_s_per_user,
        latency_limits=latency_limits,
        workload=workload,
        reading=reading,
    )
    scalar = {k: float(v[0]) for k, v in batch.items()}
    named_limits = {k: float(v[0]) for k, v in limits.items()}
    if not batch["feasible"][0]:
        raise _no_point(points, named_limits)
    if batch["from_measured"][0]:
        row = int(scalar["measured_row"])
        measured = points[points[GPU_COLUMN].notna()].sort_values(GPU_COLUMN, kind="stable")
        k = list(measured.index).index(row)
        interpolated, bracket = False, (row, row)
        binding = (
            _step_binding(measured.iloc[k + 1], named_limits)
            if k < len(measured) - 1
            else "highest measured load"
        )
        frontier_value = scalar["frontier_tokens_per_s_per_gpu"]
        config = measured["config"].iloc[k]
        warnings.append(
            f"the best measured point meeting the SLO (row {row}"
            + (f", {config}" if config else "")
            + f": {scalar[GPU_COLUMN]:,.1f} tokens/s per GPU) is used: "
            + (
                "no point interpolated on the frontier meets the SLO"
                if math.isnan(frontier_value)
                else f"the frontier allows only {frontier_value:,.1f} by interpolation"
            )
            + " (a point slower per user, left off the frontier, meets the limits)"
        )
    else:
        position = scalar["position"]
        k0 = int(math.floor(position))
        k1 = min(k0 + 1, len(frontier) - 1)
        interpolated = not float(position).is_integer()
        rows = frontier.index.to_numpy()
        bracket = (int(rows[k0]), int(rows[k1] if interpolated else rows[k0]))
        if interpolated:
            configs = {frontier["config"].iloc[k0], frontier["config"].iloc[k1]}
            if len(configs) > 1:
                warnings.append(
                    "the operating point lies between points of different serving "
                    f"configurations ({' vs '.join(sorted(configs))}); it is an interpolation, "
                    "not a measured setup"
                )
        binding = "highest measured load"
        for name, limit in named_limits.items():
            value = scalar[name]
            if not math.isnan(limit) and math.isclose(value, limit, rel_tol=1e-6):
                binding = name
        steps = reading == "step" or not frontier[USER_COLUMN].notna().any()
        if steps and k0 < len(frontier) - 1:  # measured points only: the next one's breach
            binding = _step_binding(frontier.iloc[k0 + 1], named_limits)
    clamped = bool(batch["clamped"][0])
    if clamped:
        warnings.append(
            "the SLO allows more load than the highest measured point: throughput is clamped to "
            "that point, not extrapolated (measure higher concurrency to know more)"
        )
    if not named_limits:
        warnings.append("no SLO given: the operating point is the highest measured throughput")
    osl = frontier["output_tokens_mean"].dropna()
    if len(osl) > 1 and osl.max() > 1.25 * osl.min():
        warnings.append(
            f"output length per request varies along the frontier ({osl.min():.0f} to "
            f"{osl.max():.0f} tokens): the points may not share one workload"
        )
    values = {
        c: scalar[c]
        for c in INTERPOLATED_COLUMNS + EXTRA_COLUMNS + PROVISIONED_COLUMNS
        if c in scalar
    }
    return OperatingPoint(
        tokens_per_s_per_gpu=scalar[GPU_COLUMN],
        input_tokens_per_s_per_gpu=scalar["input_tokens_per_s_per_gpu"],
        total_tokens_per_s_per_gpu=scalar["total_tokens_per_s_per_gpu"],
        tokens_per_s_per_user=scalar[USER_COLUMN],
        values=values,
        binding=binding,
        interpolated=interpolated,
        clamped=clamped,
        bracket=bracket,
        limits=named_limits,
        group=group,
        provenance=dict(curve.provenance),
        warnings=tuple(dict.fromkeys(list(curve.warnings) + warnings)),
    )


def _breaks(name: str, value: float, limit: float) -> bool:
    """Whether a point's value breaks its limit (a minimum per-user speed, else a maximum
    latency), with the slack the operating point allows; an unreported value breaks it."""
    if math.isnan(value):
        return True
    if name == USER_COLUMN:
        return value < limit - _REL_TOL * abs(limit)
    return value > limit + _REL_TOL * abs(limit)


def _step_binding(next_point: pd.Series, limits: dict[str, float]) -> str:
    """The limits the next measured point (more throughput) breaks, which stop the step reading."""
    broken = [
        name for name, limit in limits.items() if _breaks(name, float(next_point[name]), limit)
    ]
    return ", ".join(broken) or "highest measured load"


def _violation(frame: pd.DataFrame, limits: dict[str, float]) -> np.ndarray:
    """max over limits of value/limit (latencies) or limit/value (per-user speed); >1 breaks."""
    ratios = []
    for name, limit in limits.items():
        v = frame[name].to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(limit / v if name == USER_COLUMN else v / limit)
    if not ratios:
        return np.zeros(len(frame))
    return np.nanmax(np.where(np.isnan(np.vstack(ratios)), np.inf, np.vstack(ratios)), axis=0)


def _no_point(points, limits) -> NoFeasiblePointError:
    candidates = points[points[GPU_COLUMN].notna()]
    score = _violation(candidates, limits)
    best = int(np.argmin(score))
    row = candidates.iloc[best]
    closest = {
        "row": int(candidates.index[best]),
        "source_file": row["source_file"],
        GPU_COLUMN: float(row[GPU_COLUMN]),
        USER_COLUMN: float(row[USER_COLUMN]),
        "concurrency": float(row["concurrency"]),
        "request_rate_per_s": float(row["request_rate_per_s"]),
        **{name: float(row[name]) for name in limits},
        "worst_ratio_to_limit": float(score[best]),
    }
    broken = [
        f"{name} not reported"
        if math.isnan(float(row[name]))
        else "{} = {} (limit {})".format(name, *apart(float(row[name]), limit))
        for name, limit in limits.items()
        if _breaks(name, float(row[name]), limit)
    ] or [  # not reached while feasibility and this check share _breaks; never an empty list
        "every limit met within rounding ("
        + ", ".join(f"{name} = {row[name]:.6g}" for name in limits)
        + ")"
    ]
    where = ", ".join(
        p
        for p in (
            f"concurrency {row['concurrency']:g}" if not math.isnan(row["concurrency"]) else "",
            f"request rate {row['request_rate_per_s']:g}/s"
            if not math.isnan(row["request_rate_per_s"])
            else "",
            f"file {row['source_file']}" if row["source_file"] else "",
        )
        if p
    )
    slo = ", ".join(
        f"{k} <= {v:g}" if k != USER_COLUMN else f"{k} >= {v:g}" for k, v in limits.items()
    )
    message = (
        f"no measured point meets the SLO ({slo}); "
        f"the closest is row {closest['row']} ({where}): {row[GPU_COLUMN]:.4g} tokens/s per GPU "
        f"with {'; '.join(broken)}. Relax the SLO or measure lower load"
    )
    return NoFeasiblePointError(message, closest)
