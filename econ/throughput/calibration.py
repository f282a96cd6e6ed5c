"""Calibration of the throughput simulator: fitted efficiency coefficients per hardware and precision.

Owns the MLPerf workload definitions (models/calibration/mlperf_workloads.toml), the calibration data
(models/calibration/mlperf_rows.csv, copied from ../shared with sources), the fit, and the stored
coefficients (models/calibration/<hardware>.toml, with the data and date they came from).

The fit minimises, in log space, the misses of the predicted MLPerf per-GPU throughput plus Gaussian
priors on the coefficients, with a robust (soft-L1) loss, bounds and several starts
(scipy.optimize.least_squares; Branch, Coleman and Li, SIAM J. Sci. Comput. 21(1), 1999, for the
trust-region reflective method). Hardware without measurements borrows its sibling's coefficients
(H100 <-> H200, B200 <-> B300, GB200 <-> GB300, MI300X <-> MI325X, MI355X <- MI325X), and a precision
without measurements borrows the measured precision of the same hardware; both are labelled.
"""

from __future__ import annotations

import datetime as dt
import math
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from econ.catalog import models_dir, validation_problems
from econ.files import atomic_write, make_folder, read_noted_csv
from econ.hardware import get_hardware, load_hardware_catalog
from econ.llms import get_llm
from econ.throughput.efficiency import (
    PRIOR,
    CalibrationError,
    Efficiency,
    calibration_dir,
    load_all_efficiencies,
    load_efficiency,
    load_model_efficiencies,
    model_efficiency_path,
)
from econ.throughput.simulator import (
    DEFAULT_POINTS,
    FITTED_FIELDS,
    SEARCH_POINTS,
    SPEED_OF_LIGHT,
    best_under_slo,
    concurrency_grid,
    parallel_configs,
    serve,
    slo_margin,
    stack_systems,
    system_arrays,
)

SCENARIOS = ("Offline", "Server", "Interactive")
MODEL_ROUNDS = 3
"""Alternations of the per-hardware fits and the per-model efficiencies in a full calibration."""
CALIBRATION_POINTS = SEARCH_POINTS
"""Concurrency points per layout in the fit (the edge of the SLO is interpolated between them):
the simulator's operating-point search uses the same grid, so the CLI prints the fitted figures."""
DATA_SIGMA_LOG = 0.10
"""Scatter assumed for a measured per-GPU figure (about 10%), which weighs data against priors."""

PRIOR_SIGMA_LOG = {
    "bandwidth": 0.3,
    "compute": 0.5,
    "prefill": 0.5,
    "overlap": 0.7,
    "step_overhead_s": 1.5,
    "layer_overhead_s": 1.5,
    "token_overhead_s": 1.5,
    "moe_imbalance": 1.0,
    "communication": 0.5,
    "tpot_tail": 0.3,
}
"""Prior standard deviations of log coefficients: bandwidth efficiency is well known (70-90% of
peak in memory-bound GEMV), overheads only to an order of magnitude."""
BOUNDS = {
    "bandwidth": (0.2, 1.0),
    "compute": (0.05, 1.0),
    "prefill": (0.05, 1.0),
    "overlap": (1.0, 32.0),
    "step_overhead_s": (1e-5, 0.05),
    "layer_overhead_s": (1e-8, 3e-4),
    "token_overhead_s": (1e-8, 5e-4),
    "moe_imbalance": (0.01, 3.0),
    "communication": (0.05, 1.0),
    "tpot_tail": (1.0, 4.0),
}

MIN_TARGETS_PER_COEFFICIENT = 2
"""Calibration targets per fitted coefficient below which a fit is called under-determined: the
usual rule of thumb for a least-squares fit whose coefficients the data should pin down."""

METHOD_NOTES = """
## Method and limits

- Model: `econ/throughput/simulator.py` (roofline terms x fitted efficiencies; docstrings cite the
  formulas). Precision per MLPerf row is assumed to be the hardware's lowest native precision (FP4
  on Blackwell, FP8 on Hopper and MI300X/MI325X), which is what the submissions of the covered
  rounds ran, and FP4 on MI355X (assumed: its v6.1 rows do not state the precision); KV cache in
  FP8.
- Fit: per hardware, the coefficients in log space with Gaussian priors, soft-L1 loss, bounds and
  four starts (`econ throughput calibrate`). Few targets per hardware ({rows}) against
  {coefficients} coefficients: every fit is under-determined by the rule of at least
  {per_coefficient} targets per coefficient, which `econ throughput calibrate` warns of. The priors carry the
  coefficients the data does not pin down, a refit of one hardware alone can land on quite
  different coefficients that match its rows as well, and the error that command prints is in
  sample (the fit's own rows), which says little on its own; predictions for models outside a
  hardware's rows rest on those priors and are unreliable (the out-of-sample checks above
  measure them). The leave-one-system-out column predicts each hardware with its sibling's
  coefficients (a fit that never saw it): that is the error to expect for hardware without
  measurements. The per-model efficiencies are fitted on every hardware's rows, the left-out
  one's included, so that column is slightly optimistic for them.
- Per-model efficiency: one factor per model across all hardware divides its step times; it is
  fitted with the hardware coefficients (alternating: every hardware fitted with the model
  factors held, then each factor moved by the median log miss of its targets over all hardware).
  Why it is needed: at the predicted operating points of gpt-oss-120b the roofline terms (weight
  and KV bytes, FLOPs, the expected share of experts a batch touches, 1 - (1 - k/E)^tokens, and
  the expert-parallel all-to-all, absent on the one-GPU layout Offline picks) are a fraction of
  the step (B200 Offline before this factor: one GPU, 2,287 sequences, memory 36 ms and compute
  13 ms of a 112 ms step, the rest fitted per-token overhead); measured gpt-oss-120b Offline
  reaches 0.8-1.0 times the per-GPU throughput of Llama-2-70B on every hardware of rounds up to
  v6.0 with 14 times fewer active parameters, so what is missing is per-token software cost of
  that model's stack, which coefficients shared by every model on a hardware cannot hold.
- Input lengths are estimates (see `models/calibration/mlperf_workloads.toml`); output lengths are
  means: per run, result / completed samples per second from its loadgen log, and the median of
  those over submissions (`mlperf_latency_constraints.csv`, whose column calls it a median).
  Latencies are modelled as means with a fixed p99/mean factor for TPOT (fitted, prior 1.3) and an
  exponential tail for the TTFT queueing wait.
- Not modelled: pipeline parallelism, CPU/host limits, power capping, prefix caching, and
  kernel quality per hardware x model pair (one set of coefficients per hardware and one
  efficiency per model; a model whose stack is much less tuned on one vendor's hardware, such as
  gpt-oss-120b and DeepSeek-R1 on AMD MI300X/MI355X, which only a few v6.1 rows of the catalog
  cover (it lacks AMD's v6.0 results), is the main source of the remaining misses).
"""


# ---------------------------------------------------------------------------------------------------
# Workloads and rows


class _Limits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    ttft_limit_s: float = Field(..., gt=0, description="p99 time to first token limit [s]")
    tpot_limit_s: float = Field(..., gt=0, description="p99 time per output token limit [s]")
    draft_tokens: int = Field(0, ge=0, le=16, description="Speculative draft tokens per step")
    accepted_tokens: float = Field(1.0, ge=1.0, description="Tokens kept per step [tokens]")


class _Workload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    input_tokens: float = Field(..., ge=1, description="Mean prompt length [tokens]")
    input_source: str = Field(..., min_length=1)
    output_tokens: float = Field(..., ge=1, description="Mean output length per sample [tokens]")
    server: _Limits | None = None
    interactive: _Limits | None = None
    source: str = Field(..., min_length=1)


@dataclass(frozen=True)
class Workload:
    """One MLPerf scenario of one model: lengths, p99 limits (inf for Offline), speculation."""

    model: str
    scenario: str
    input_tokens: float
    output_tokens: float
    ttft_limit_s: float
    tpot_limit_s: float
    draft_tokens: int
    accepted_tokens: float
    source: str


def workloads_path() -> Path:
    return models_dir() / "calibration" / "mlperf_workloads.toml"


def rows_path() -> Path:
    return models_dir() / "calibration" / "mlperf_rows.csv"


def holdout_dir(test_round: str) -> Path:
    """Where the coefficients fitted on the rounds before `test_round` are kept
    (models/calibration/before-<round>/): the shipped ones have seen that round, so only these can
    predict it out of sample."""
    return models_dir() / "calibration" / f"before-{test_round}"


def load_workloads(path: str | Path | None = None) -> dict[str, dict[str, Workload]]:
    """model -> scenario ("Offline", "Server", "Interactive") -> Workload."""
    path = Path(path) if path is not None else workloads_path()
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError as exc:
        raise CalibrationError(f"workload file {path} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"workload file {path} is not valid TOML: {exc}") from exc
    out: dict[str, dict[str, Workload]] = {}
    for model, table in raw.get("workloads", {}).items():
        try:
            w = _Workload(**table)
        except (ValidationError, TypeError) as exc:
            detail = validation_problems(exc) if isinstance(exc, ValidationError) else str(exc)
            raise CalibrationError(f"{path}: workloads.{model}: {detail}") from exc
        scenarios = {
            "Offline": Workload(
                model,
                "Offline",
                w.input_tokens,
                w.output_tokens,
                math.inf,
                math.inf,
                0,
                1.0,
                w.source,
            )
        }
        for name, limits in (("Server", w.server), ("Interactive", w.interactive)):
            if limits is not None:
                scenarios[name] = Workload(
                    model,
                    name,
                    w.input_tokens,
                    w.output_tokens,
                    limits.ttft_limit_s,
                    limits.tpot_limit_s,
                    limits.draft_tokens,
                    limits.accepted_tokens,
                    w.source,
                )
        out[model] = scenarios
    return out


def get_workload(model: str, scenario: str, path: str | Path | None = None) -> Workload:
    """The MLPerf workload of a model and scenario; unknown ones list what exists."""
    workloads = load_workloads(path)
    if model not in workloads:
        raise CalibrationError(
            f"model {model!r} has no MLPerf workload; models with one: {', '.join(sorted(workloads))}"
        )
    name = scenario.strip().capitalize()
    if name not in workloads[model]:
        raise CalibrationError(
            f"MLPerf has no {scenario!r} scenario for {model!r}; it has "
            f"{', '.join(s.lower() for s in workloads[model])}"
        )
    return workloads[model][name]


ROW_COLUMNS = ("hardware", "model", "scenario", "round", "availability", "accelerator_count")
ROW_SCENARIOS = ("Offline", "Server", "Interactive")
ROUND_PATTERN = r"v\d+(\.\d+)*"


def load_rows(path: str | Path | None = None) -> pd.DataFrame:
    """The MLPerf rows shipped for calibration (models/calibration/mlperf_rows.csv)."""
    path = Path(path) if path is not None else rows_path()
    try:
        rows = read_noted_csv(path)
    except FileNotFoundError as exc:
        raise CalibrationError(f"calibration data {path} does not exist") from exc
    except IsADirectoryError as exc:
        raise CalibrationError(f"calibration data {path} is a folder; expected a CSV file") from exc
    except pd.errors.EmptyDataError as exc:
        raise CalibrationError(
            f"calibration data {path} is empty; expected a CSV of MLPerf rows with the columns "
            f"{', '.join((*ROW_COLUMNS, 'per_accelerator'))}"
        ) from exc
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise CalibrationError(
            f"calibration data {path} is not a readable CSV ({exc}); expected MLPerf rows as "
            "models/calibration/mlperf_rows.csv holds them"
        ) from exc
    missing = [c for c in (*ROW_COLUMNS, "per_accelerator") if c not in rows.columns]
    if missing:
        raise CalibrationError(f"{path} lacks columns {', '.join(missing)}")
    per_gpu = pd.to_numeric(rows["per_accelerator"], errors="coerce").to_numpy(dtype=float)
    gpus = pd.to_numeric(rows["accelerator_count"], errors="coerce").to_numpy(dtype=float)
    rounds = rows["round"].astype(str)
    checks = (
        (
            "per_accelerator",
            ~(np.isfinite(per_gpu) & (per_gpu > 0)),
            "a positive number of tokens/s per GPU",
        ),
        (
            "accelerator_count",
            ~(np.isfinite(gpus) & (gpus >= 1) & (gpus == np.round(gpus))),
            "a whole number of GPUs, at least 1",
        ),
        ("round", ~rounds.str.fullmatch(ROUND_PATTERN).to_numpy(), "a round such as v6.1"),
        (
            "scenario",
            ~rows["scenario"].isin(ROW_SCENARIOS).to_numpy(),
            f"one of {', '.join(ROW_SCENARIOS)}",
        ),
    )
    for column, bad, expected in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            row = rows.iloc[i]
            raise CalibrationError(
                f"{path}: data row {i + 1} ({row['hardware']} {row['model']} {row['scenario']}): "
                f"{column} must be {expected}, got {row[column]}"
            )
    return rows


def _round_key(value: str) -> tuple[int, ...]:
    return tuple(int(x) for x in str(value).lstrip("v").split(".") if x.isdigit())


def calibration_targets(
    rows: pd.DataFrame, workloads: dict | None = None, availability=("available",)
) -> pd.DataFrame:
    """One target per (hardware, model, scenario): the best per-GPU result of the latest round
    (of the closed division where the rows state theirs, as the calibration files say).

    The latest round is the state of the serving software on the date of the fit; the best result
    is what a well-tuned stack reaches (medians mix in untuned submissions).
    """
    workloads = load_workloads() if workloads is None else workloads
    catalog = load_hardware_catalog()
    d = rows[rows["availability"].isin(availability)].copy()
    if "division" in d:  # open-division results run modified models: never a target
        d = d[d["division"] == "closed"]
    d = d[d["hardware"].isin(catalog) & d["model"].isin(workloads)]
    d = d[[s in workloads[m] for m, s in zip(d["model"], d["scenario"], strict=True)]]
    d["_round"] = d["round"].map(_round_key)
    latest = d.groupby(["hardware", "model", "scenario"])["_round"].transform("max")
    d = d[d["_round"] == latest]
    idx = d.groupby(["hardware", "model", "scenario"])["per_accelerator"].idxmax()
    best = d.loc[idx].reset_index(drop=True)
    out = pd.DataFrame(
        {
            "hardware": best["hardware"],
            "model": best["model"],
            "scenario": best["scenario"],
            "round": best["round"],
            "submitter": best.get("submitter", ""),
            "accelerator_count": best["accelerator_count"].astype(int),
            "measured": best["per_accelerator"].astype(float),
            "source": best.get("source", ""),
        }
    )
    w = [workloads[m][s] for m, s in zip(out["model"], out["scenario"], strict=True)]
    out["input_tokens"] = [x.input_tokens for x in w]
    out["output_tokens"] = [x.output_tokens for x in w]
    out["tpot_limit_s"] = [x.tpot_limit_s for x in w]
    out["ttft_limit_s"] = [x.ttft_limit_s for x in w]
    out["draft_tokens"] = [x.draft_tokens for x in w]
    out["accepted_tokens"] = [x.accepted_tokens for x in w]
    out["precision"] = [catalog[h].default_precision for h in out["hardware"]]
    return out.sort_values(["hardware", "model", "scenario"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------
# Batched prediction


def _as_batch_field(value):
    a = np.asarray(value, dtype=float)
    return a[:, None, None] if a.ndim == 1 else a


@dataclass(frozen=True)
class PredictionBatch:
    """Targets laid out as (rows, layouts, concurrency) arrays for one vectorized prediction."""

    system: object
    gpus: np.ndarray
    tensor_parallel: np.ndarray
    layout_ok: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    tpot_limit_s: np.ndarray
    ttft_limit_s: np.ndarray
    draft_tokens: np.ndarray
    accepted_tokens: np.ndarray
    points: int

    @classmethod
    def build(cls, targets: pd.DataFrame, points: int = CALIBRATION_POINTS) -> PredictionBatch:
        """Each target searches the layouts of its hardware up to its submission's GPU count."""
        systems, layouts = [], []
        for r in targets.itertuples(index=False):
            hw, llm = get_hardware(r.hardware), get_llm(r.model)
            systems.append(system_arrays(hw, llm, r.precision))
            layouts.append(parallel_configs(llm, hw, int(r.accelerator_count)))
        k = max(len(c) for c in layouts)
        gpus = np.ones((len(layouts), k))
        tp = np.ones((len(layouts), k))
        ok = np.zeros((len(layouts), k), dtype=bool)
        for i, c in enumerate(layouts):
            gpus[i, : len(c)], tp[i, : len(c)], ok[i, : len(c)] = c[:, 0], c[:, 1], True
        system = stack_systems(systems)
        system = type(system)(*(f[:, :, None] for f in system))

        def col(name):
            return targets[name].to_numpy(dtype=float)[:, None, None]

        return cls(
            system,
            gpus[:, :, None],
            tp[:, :, None],
            ok[:, :, None],
            col("input_tokens"),
            col("output_tokens"),
            col("tpot_limit_s"),
            col("ttft_limit_s"),
            col("draft_tokens"),
            col("accepted_tokens"),
            points,
        )

    def predict(self, efficiency: Efficiency) -> np.ndarray:
        """Best tokens/s per GPU of each target under its SLO (NaN where nothing fits or meets it)."""
        eff = Efficiency(
            **{f.name: _as_batch_field(getattr(efficiency, f.name)) for f in fields(efficiency)}
        )
        cap = serve(
            self.system,
            1.0,
            self.input_tokens,
            self.output_tokens,
            self.tensor_parallel,
            self.gpus,
            eff,
        )["max_concurrency"]
        c = concurrency_grid(cap[..., 0], self.points)
        m = serve(
            self.system,
            c,
            self.input_tokens,
            self.output_tokens,
            self.tensor_parallel,
            self.gpus,
            eff,
            draft_tokens=self.draft_tokens,
            accepted_tokens=self.accepted_tokens,
        )
        margin = slo_margin(m, self.tpot_limit_s, self.ttft_limit_s)
        thr = np.broadcast_to(m["output_tokens_per_s_per_gpu"], c.shape)
        fits = np.broadcast_to(m["fits"], c.shape) & self.layout_ok
        best, _ = best_under_slo(thr, np.broadcast_to(margin, c.shape), fits)
        out = best.max(axis=1)
        return np.where(np.isfinite(out), out, np.nan)


# ---------------------------------------------------------------------------------------------------
# Fit


def _to_x(eff: Efficiency) -> np.ndarray:
    return np.log([getattr(eff, f) for f in FITTED_FIELDS])


def _from_x(x, base: Efficiency = PRIOR) -> Efficiency:
    return Efficiency(
        **{
            **{f.name: getattr(base, f.name) for f in fields(base)},
            **dict(zip(FITTED_FIELDS, np.exp(x), strict=True)),
        }
    )


def residuals(x, batch: PredictionBatch, measured: np.ndarray, prior: Efficiency = PRIOR):
    """Data misses log(predicted / measured) / sigma, then prior terms (log c - log c0) / sigma_c."""
    predicted = batch.predict(_from_x(x, prior))
    # a target the coefficients cannot serve at all counts as a large miss, not a crash
    miss = np.where(np.isfinite(predicted), np.log(np.maximum(predicted, 1e-9) / measured), -5.0)
    prior_x = _to_x(prior)
    sigma = np.array([PRIOR_SIGMA_LOG[f] for f in FITTED_FIELDS])
    return np.concatenate([miss / DATA_SIGMA_LOG, (x - prior_x) / sigma])


@dataclass(frozen=True)
class FitResult:
    efficiency: Efficiency
    rows: int
    median_abs_error: float
    cost: float
    predicted: np.ndarray | None = None
    """Best tokens/s per GPU of each target with the fitted coefficients [tokens/s/GPU (rows,)]."""


def with_model_efficiencies(base: Efficiency, models, efficiencies: dict[str, float]) -> Efficiency:
    """`base` with model_efficiency as a (rows,) array: each target's model efficiency (1 for a
    model without one)."""
    return replace(base, model_efficiency=np.array([efficiencies.get(m, 1.0) for m in models]))


def update_model_efficiencies(
    models, measured, predicted, efficiencies: dict[str, float]
) -> dict[str, float]:
    """One step of the per-model fit: each model's efficiency times exp(median ln(measured /
    predicted)) over its targets on every hardware, the median so that one weak submission moves it
    little. Alternated with the per-hardware fits (block coordinate descent, Bertsekas, "Nonlinear
    Programming", 2nd ed., 1999, §2.7); a model without a finite prediction keeps its value."""
    frame = pd.DataFrame(
        {
            "model": np.asarray(models),
            "log_ratio": np.log(np.asarray(measured, dtype=float) / np.asarray(predicted)),
        }
    )
    frame = frame[np.isfinite(frame["log_ratio"])]
    step = frame.groupby("model")["log_ratio"].median()
    return {
        m: float(v * math.exp(step[m])) if m in step.index else v for m, v in efficiencies.items()
    }


def fit_targets(
    targets: pd.DataFrame,
    prior: Efficiency = PRIOR,
    starts: int = 4,
    seed: int = 0,
    start: Efficiency | None = None,
) -> FitResult:
    """Fit the coefficients to targets (usually one hardware's) from several starts; keep the best.

    With `start`, one local fit from those coefficients instead: a continuation that stays in the
    basin of an earlier fit (few targets against ten coefficients leave near-equal optima, and a
    fresh multi-start could jump between them on a small change of the data)."""
    from scipy.optimize import least_squares

    if len(targets) == 0:
        raise CalibrationError("no calibration targets to fit")
    batch = PredictionBatch.build(targets)
    measured = targets["measured"].to_numpy(dtype=float)
    lo = np.log([BOUNDS[f][0] for f in FITTED_FIELDS])
    hi = np.log([BOUNDS[f][1] for f in FITTED_FIELDS])
    rng = np.random.default_rng(seed)
    x0s = [np.clip(_to_x(prior if start is None else start), lo + 1e-9, hi - 1e-9)]
    if start is None:
        x0s += [lo + (hi - lo) * rng.uniform(0.15, 0.85, size=lo.size) for _ in range(starts - 1)]
    best = None
    for x0 in x0s:
        res = least_squares(
            residuals,
            x0,
            bounds=(lo, hi),
            loss="cauchy",
            f_scale=1.0,
            args=(batch, measured, prior),
            diff_step=1e-3,
            max_nfev=200,
        )
        if best is None or res.cost < best.cost:
            best = res
    eff = _from_x(best.x, prior)
    predicted = batch.predict(eff)
    err = float(np.nanmedian(np.abs(predicted / measured - 1.0)))
    # the model efficiencies are inputs of the fit, not hardware coefficients
    eff = replace(eff, model_efficiency=PRIOR.model_efficiency)
    return FitResult(eff, len(targets), err, float(best.cost), predicted)


# ---------------------------------------------------------------------------------------------------
# Storage


def _efficiency_table(eff: Efficiency) -> dict:
    return {
        f.name: float(getattr(eff, f.name)) for f in fields(eff) if f.name != "model_efficiency"
    }


def save_model_efficiencies(tables: dict[str, dict], directory: Path | None = None) -> Path:
    """Write models/calibration/models.toml atomically: model -> {efficiency, provenance}."""
    path = model_efficiency_path(directory)
    make_folder(path.parent, parents=True)
    text = (
        "# Per-model efficiencies of the throughput simulator: each step time of a model is divided\n"
        "# by its efficiency on top of the hardware's coefficients. Written by `econ throughput\n"
        "# calibrate` (all hardware), fitted with them on the same rows.\n"
        + tomli_w.dumps({"model": tables})
    )
    return atomic_write(path, text, overwrite=True)


def save_calibration(key: str, tables: dict[str, dict], directory: Path | None = None) -> Path:
    """Write models/calibration/<key>.toml atomically (temp file + rename)."""
    directory = Path(directory) if directory is not None else calibration_dir()
    make_folder(directory, parents=True)
    path = directory / f"{key}.toml"
    body = {"hardware": key, "precision": tables}
    text = (
        f"# Fitted efficiency coefficients of the throughput simulator for {key}.\n"
        "# Written by `econ throughput calibrate`; each precision says where its figures came from.\n"
        + tomli_w.dumps(body)
    )
    return atomic_write(path, text, overwrite=True)


def efficiency_by_row(
    targets: pd.DataFrame,
    fits: dict,
    leave_one_out: bool = False,
    model_efficiencies: dict[str, float] | None = None,
) -> Efficiency:
    """Coefficients per target as (rows,) arrays: the target hardware's own calibration, or with
    `leave_one_out` its sibling's (which never saw it); defaults where neither exists. Calibrated
    rows carry their model's efficiency (default: the stored ones), default rows 1."""
    catalog = load_hardware_catalog()
    if model_efficiencies is None:
        model_efficiencies = {m: v for m, (v, _) in load_model_efficiencies().items()}
    per_row = []
    for r in targets.itertuples(index=False):
        key = r.hardware
        if leave_one_out:
            key = catalog[key].sibling
            own = fits.get(key, {}).get(r.precision)
            if own is None or own[1].get("source") != "fit":
                per_row.append(_any_fit(fits.get(key, {})) or PRIOR)
                continue
        entry = fits.get(key, {}).get(r.precision)
        per_row.append(entry[0] if entry else PRIOR)
    per_row = [
        e if e is PRIOR else replace(e, model_efficiency=model_efficiencies.get(m, 1.0))
        for e, m in zip(per_row, targets["model"], strict=True)
    ]
    return Efficiency(
        **{f.name: np.array([getattr(e, f.name) for e in per_row]) for f in fields(Efficiency)}
    )


def _any_fit(by_precision: dict) -> Efficiency | None:
    for eff, info in by_precision.values():
        if info.get("source") == "fit":
            return eff
    return None


def calibrate(
    hardware: list[str] | None = None,
    rows: pd.DataFrame | None = None,
    directory: Path | None = None,
    today: dt.date | None = None,
    starts: int = 4,
    model_rounds: int | None = None,
    before_round: str | None = None,
    rows_source: str | Path | None = None,
) -> dict[str, dict]:
    """Fit every hardware with targets, transfer to those without, write the files; returns the
    tables written, hardware -> precision -> table. With `before_round` (e.g. "v6.1"), only the
    rows of earlier rounds are used: the held-out fit that predicts that round out of sample.
    `rows_source` names where given `rows` were read (each table's `data` says it); the
    shipped rows file when `rows` is None.

    A calibration of all hardware also fits the per-model efficiencies: `model_rounds` (default
    MODEL_ROUNDS) times, every hardware is fitted with the current model efficiencies (a
    multi-start fit first, then local fits from the previous coefficients) and each model's
    efficiency then moves by the median miss of its targets; a last fit of the hardware follows,
    and models/calibration/models.toml is written. A calibration of some hardware keeps the
    stored model efficiencies (model_rounds 0)."""
    catalog = load_hardware_catalog()
    keys = list(catalog) if hardware is None else hardware
    for key in keys:
        get_hardware(key)
    given_rows = rows is not None
    rows = load_rows() if rows is None else rows
    if before_round is not None:
        rows = rows[[_round_key(r) < _round_key(before_round) for r in rows["round"]]]
    targets = calibration_targets(rows)
    today = (today or dt.date.today()).isoformat()
    if rows_source is None and given_rows:
        source = "rows given to calibrate()"
    else:
        path = Path(rows_source) if rows_source is not None else rows_path()
        shipped = models_dir().parent
        source = str(path.relative_to(shipped) if path.is_relative_to(shipped) else path)
    data_note = (
        f"{source}"
        " (MLPerf Inference closed, available; best per-GPU result of the latest round per "
        "hardware, model and scenario"
        + (
            f"; rows of rounds up to {max(targets['round'], key=_round_key)} only)"
            if before_round is not None and len(targets)
            else ")"
        )
    )
    written: dict[str, dict] = {}
    fitted: dict[str, tuple[str, dict]] = {}
    if model_rounds is None:
        model_rounds = MODEL_ROUNDS if hardware is None else 0
    if model_rounds:
        model_eff = dict.fromkeys(sorted(set(targets["model"])), 1.0)
    else:
        model_eff = {m: v for m, (v, _) in load_model_efficiencies().items()}
    fit_keys = [key for key in keys if (targets["hardware"] == key).any()]
    results: dict[str, FitResult] = {}
    for step in range(model_rounds + 1 if fit_keys else 0):
        # after the first multi-start fit, each round continues from the previous coefficients
        results = {
            key: fit_targets(
                sub := targets[targets["hardware"] == key],
                prior=with_model_efficiencies(PRIOR, sub["model"], model_eff),
                starts=starts,
                start=results[key].efficiency if results else None,
            )
            for key in fit_keys
        }
        fitted_rows = pd.concat([targets[targets["hardware"] == key] for key in fit_keys])
        predicted = np.concatenate([results[key].predicted for key in fit_keys])
        if step < model_rounds:
            model_eff = update_model_efficiencies(
                fitted_rows["model"], fitted_rows["measured"], predicted, model_eff
            )
    for key in fit_keys:
        sub = targets[targets["hardware"] == key]
        result = results[key]
        precision = catalog[key].default_precision
        scenarios = ", ".join(
            f"{m} {s} ({r})"
            for m, s, r in zip(sub["model"], sub["scenario"], sub["round"], strict=True)
        )
        table = {
            "source": "fit",
            "fitted_on": today,
            "data": f"{data_note}: {scenarios}",
            "rows": result.rows,
            "median_abs_error": round(result.median_abs_error, 4),
            **_efficiency_table(result.efficiency),
        }
        fitted[key] = (precision, table)
    for key in keys:
        if key in fitted:
            precision, table = fitted[key]
            source_key = key
        else:
            sibling = catalog[key].sibling
            if sibling not in fitted:
                continue
            precision, table = fitted[sibling]
            table = {**table, "source": f"transferred from {sibling} {precision} (no measurements)"}
            source_key = sibling
        tables = {}
        for p in catalog[key].native_precisions:
            if p == precision and source_key == key:
                tables[p] = table
            else:
                note = table["source"] if source_key != key else ""
                tables[p] = {
                    **table,
                    "source": note
                    or f"transferred from {key} {precision} fit (no {p.upper()} measurements)",
                }
        save_calibration(key, tables, directory)
        written[key] = tables
    if model_rounds and fit_keys:
        save_model_efficiencies(
            _model_tables(fitted_rows, predicted, model_eff, data_note, today), directory
        )
    return written


def _model_tables(fitted_rows, predicted, model_eff, data_note, today) -> dict[str, dict]:
    err = np.abs(predicted / fitted_rows["measured"].to_numpy() - 1.0)
    tables = {}
    for model, value in model_eff.items():
        mine = (fitted_rows["model"] == model).to_numpy()
        hardware = sorted(set(fitted_rows.loc[mine, "hardware"]))
        rounds = sorted(set(fitted_rows.loc[mine, "round"]), key=_round_key)
        tables[model] = {
            "efficiency": float(value),
            "source": "fit",
            "fitted_on": today,
            "data": f"{data_note}: {int(mine.sum())} targets of rounds {', '.join(rounds)}",
            "rows": int(mine.sum()),
            "hardware": ", ".join(hardware),
            "median_abs_error": round(float(np.nanmedian(err[mine])), 4),
        }
    return tables


def method_notes(targets: pd.DataFrame) -> str:
    """METHOD_NOTES with the targets per hardware and the coefficients of the fit filled in."""
    counts = targets.groupby("hardware").size()
    return METHOD_NOTES.format(
        rows=f"{counts.min()}-{counts.max()}" if len(counts) else "none",
        coefficients=len(FITTED_FIELDS),
        per_coefficient=MIN_TARGETS_PER_COEFFICIENT,
    )


def fit_caveat(key: str, targets: pd.DataFrame) -> str | None:
    """A warning when the fit of hardware `key` has fewer targets than
    MIN_TARGETS_PER_COEFFICIENT per fitted coefficient (None otherwise): the priors then set
    what the rows do not pin down, and models outside its rows are predicted from them."""
    mine = targets[targets["hardware"] == key]
    needed = MIN_TARGETS_PER_COEFFICIENT * len(FITTED_FIELDS)
    if len(mine) >= needed:
        return None
    models = ", ".join(sorted(set(mine["model"])))
    return (
        f"{key}: {len(mine)} calibration targets for {len(FITTED_FIELDS)} fitted coefficients "
        f"(fewer than {needed}, {MIN_TARGETS_PER_COEFFICIENT} per coefficient): the fit is "
        "under-determined. The priors set what these rows do not pin down, another start or a "
        "refit of this hardware alone can land on quite different coefficients that match the "
        "rows as well, its median error is in sample (these rows), and its predictions for "
        f"models other than {models} are unreliable (docs/simulator.md gives the out-of-sample "
        "errors)"
    )


__all__ = [
    "CalibrationError",
    "Efficiency",
    "FitResult",
    "PredictionBatch",
    "SPEED_OF_LIGHT",
    "Workload",
    "calibrate",
    "calibration_targets",
    "efficiency_by_row",
    "fit_caveat",
    "fit_targets",
    "method_notes",
    "save_model_efficiencies",
    "update_model_efficiencies",
    "with_model_efficiencies",
    "get_workload",
    "holdout_dir",
    "load_all_efficiencies",
    "load_efficiency",
    "load_model_efficiencies",
    "load_rows",
    "load_workloads",
    "DEFAULT_POINTS",
]
