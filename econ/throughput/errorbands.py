"""The simulator's out-of-sample error, and the error band every calibrated prediction carries.

Two checks predict MLPerf results the coefficients were never fitted on (docs/simulator.md):

- by round: coefficients fitted by the same code on the rounds up to v6.0 only
  (models/calibration/before-v6.1/; the shipped ones in models/calibration/ have seen v6.1) predict
  the best per-GPU result of MLPerf Inference v6.1 (the benchmark catalog's closed, available rows)
  per hardware, model and scenario: the error of predicting one round ahead;
- leave one system out: each hardware predicted with its sibling's coefficients (H100 <-> H200,
  B200 <-> B300, GB200 <-> GB300, MI300X <-> MI325X), on the calibration targets.

Each prediction's error is the ratio r = measured / predicted. `benchmarks/validate_simulator.py`
writes them to models/calibration/out_of_sample_errors.csv. A prediction for a hardware x model
pair the calibration data holds (a *calibrated pair*) takes its band from the by-round errors of
calibrated pairs; any other prediction from the errors outside calibrated pairs (by round on
pairs the fit never saw, and every leave-one-system-out prediction), and says so. The band is
the predicted value times the 5th to 95th percentiles of r (linear interpolation between order
statistics, Hyndman and Fan 1996, definition 7, numpy's default). As a Monte Carlo input it is
either the empirical distribution (every observed r, equal weights) or a lognormal with
mu = ln(predicted) + median(ln r) and sigma = IQR(ln r) / 1.349 (the interquartile range of a
normal distribution is 1.349 sigma), which is robust to the few large misses but thinner-tailed
than the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from econ.catalog import models_dir
from econ.errors import InputError
from econ.files import read_noted_csv

ERRORS_FILE = "out_of_sample_errors.csv"
TEST_ROUND = "v6.1"
BY_ROUND = "by round"
LEAVE_ONE_OUT = "leave one system out"
BAND_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
NORMAL_IQR = 1.349
"""Interquartile range of a standard normal distribution: 2 x 0.6745."""
ERROR_COLUMNS = (
    "check", "round", "hardware", "model", "scenario", "calibrated_pair", "measured",
    "predicted", "ratio",
)  # fmt: skip


class ErrorBandError(InputError):
    """Out-of-sample errors that cannot be read or used."""


def errors_path() -> Path:
    return models_dir() / "calibration" / ERRORS_FILE


# --- computing the errors (the validation script calls these) -----------------------------------


def round_targets(test_round: str = TEST_ROUND, catalog: pd.DataFrame | None = None):
    """Calibration targets of one MLPerf round from the benchmark catalog: the best per-GPU
    closed, available tokens/s result per (hardware, model, scenario) on catalog hardware and
    models with an MLPerf workload (virtualized and CTS systems left out, as in the fit)."""
    from econ.benchmarks import PUBLISHED, load_catalog
    from econ.hardware import load_hardware_catalog
    from econ.throughput import calibration as cal

    frame = load_catalog() if catalog is None else catalog
    workloads = cal.load_workloads()
    d = frame[
        (frame["round"] == test_round)
        & (frame["kind"] == PUBLISHED)
        & (frame["division"] == "closed")
        & (frame["metric_unit"] == "tokens/s")
        & frame["hardware_key"].isin(list(load_hardware_catalog()))
        & frame["benchmark_family"].isin(list(workloads))
        & ~frame["accelerator"].fillna("").str.contains("Virtualized|CTS")
    ]
    if d.empty:
        raise ErrorBandError(f"the benchmark catalog has no usable rows of round {test_round!r}")
    rows = pd.DataFrame(
        {
            "hardware": d["hardware_key"],
            "model": d["benchmark_family"],
            "scenario": d["scenario_normalized"],
            "round": d["round"],
            "availability": d["availability"],
            "accelerator_count": d["accelerator_count"],
            "per_accelerator": d["tokens_per_s_per_gpu"],
            "submitter": d["submitter"],
            "source": d["source"],
        }
    )
    return cal.calibration_targets(rows, workloads)


def _fitted_pairs(targets: pd.DataFrame, fits: dict) -> set[tuple[str, str]]:
    """(hardware, model) pairs of `targets` whose hardware has a fit (not a transfer) in `fits`."""
    fitted = {
        key
        for key, by_precision in fits.items()
        if any(info.get("source") == "fit" for _, info in by_precision.values())
    }
    return {
        (h, m) for h, m in zip(targets["hardware"], targets["model"], strict=True) if h in fitted
    }


def calibrated_pairs() -> set[tuple[str, str]]:
    """(hardware, model) pairs the stored coefficients were fitted on."""
    from econ.throughput import calibration as cal

    return _fitted_pairs(cal.calibration_targets(cal.load_rows()), cal.load_all_efficiencies())


def out_of_sample_errors(test_round: str = TEST_ROUND) -> pd.DataFrame:
    """Every out-of-sample prediction (ERROR_COLUMNS).

    By round: the test round's targets predicted by the held-out coefficients
    (`calibration.holdout_dir`, fitted by the same code on the earlier rounds only), a calibrated
    pair being one that fit saw. The shipped coefficients are fitted on every round, the test
    round included, so on it they are in sample. Leave one system out: the shipped calibration
    targets predicted by the sibling's shipped coefficients."""
    from econ.throughput import calibration as cal

    holdout = cal.holdout_dir(test_round)
    held = cal.load_all_efficiencies(holdout)
    held_models = {m: v for m, (v, _) in cal.load_model_efficiencies(holdout).items()}
    if not held or not held_models:
        raise ErrorBandError(
            f"{holdout}: no held-out coefficients (benchmarks/validate_simulator.py "
            "--refit-holdout)"
        )
    for key, by_precision in held.items():
        for precision, (_, info) in by_precision.items():
            if test_round in str(info.get("data", "")):
                raise ErrorBandError(
                    f"{holdout}/{key}.toml precision.{precision} was fitted on data naming "
                    f"{test_round}; the by-round check needs coefficients fitted before it"
                )
    rows = cal.load_rows()
    early = rows[[cal._round_key(r) < cal._round_key(test_round) for r in rows["round"]]]
    parts = []
    for check, targets, fits, models, pairs, loso in (
        (BY_ROUND, round_targets(test_round), held, held_models,
         _fitted_pairs(cal.calibration_targets(early), held), False),
        (LEAVE_ONE_OUT, cal.calibration_targets(rows), cal.load_all_efficiencies(), None, set(),
         True),
    ):  # fmt: skip
        batch = cal.PredictionBatch.build(targets)
        predicted = batch.predict(
            cal.efficiency_by_row(targets, fits, leave_one_out=loso, model_efficiencies=models)
        )
        frame = targets[["round", "hardware", "model", "scenario", "measured"]].copy()
        frame.insert(0, "check", check)
        frame["calibrated_pair"] = [
            (h, m) in pairs for h, m in zip(frame["hardware"], frame["model"], strict=True)
        ]
        frame["predicted"] = predicted
        frame["ratio"] = frame["measured"] / frame["predicted"]
        parts.append(frame)
    out = pd.concat(parts, ignore_index=True)
    return out[list(ERROR_COLUMNS)]


# --- reading them and making bands ---------------------------------------------------------------


@lru_cache(maxsize=4)
def _load(path: str, stamp: float) -> pd.DataFrame:
    try:
        frame = read_noted_csv(path)
    except FileNotFoundError:
        raise ErrorBandError(
            f"{path}: out-of-sample errors missing (run benchmarks/validate_simulator.py)"
        ) from None
    missing = [c for c in ERROR_COLUMNS if c not in frame.columns]
    if missing:
        raise ErrorBandError(f"{path}: lacks columns {', '.join(missing)}")
    ratio = pd.to_numeric(frame["ratio"], errors="coerce")
    bad = ~(ratio > 0) & frame["predicted"].notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ErrorBandError(f"{path}: row {i + 2}: ratio must be a positive number")
    frame["calibrated_pair"] = frame["calibrated_pair"].astype(str).str.lower() == "true"
    return frame[ratio > 0]


def load_errors(path: str | Path | None = None) -> pd.DataFrame:
    """The stored out-of-sample errors (rows with a prediction)."""
    path = Path(path) if path is not None else errors_path()
    stamp = path.stat().st_mtime if path.is_file() else 0.0
    return _load(str(path), stamp).copy()


def band_ratios(calibrated_pair: bool, errors: pd.DataFrame | None = None) -> np.ndarray:
    """measured / predicted of the out-of-sample predictions a band is drawn from [ratio (n,)]:
    by-round errors of calibrated pairs, or every error outside them."""
    errors = load_errors() if errors is None else errors
    pick = errors["calibrated_pair"] == calibrated_pair
    if calibrated_pair:
        pick &= errors["check"] == BY_ROUND
    ratios = errors.loc[pick, "ratio"].to_numpy(dtype=float)
    if len(ratios) < 5:
        raise ErrorBandError(
            f"only {len(ratios)} out-of-sample errors for "
            f"{'calibrated' if calibrated_pair else 'uncalibrated'} pairs; a band needs 5"
        )
    return ratios


@dataclass(frozen=True)
class ErrorBand:
    """A prediction's band from out-of-sample errors.

    Attributes
    ----------
    predicted : the simulator's figure [tokens/s/GPU]
    calibrated_pair : whether the hardware x model pair is in the calibration data
    quantiles : {0.05: ..., 0.95: ...} of predicted x r [tokens/s/GPU]
    median_abs_error : median |1/r - 1|, the error of the prediction relative to the measurement
    predictions : how many out-of-sample predictions the band rests on
    basis : which checks they come from
    ratios : the observed r [ratio (n,)]
    """

    predicted: float
    calibrated_pair: bool
    quantiles: dict[float, float]
    median_abs_error: float
    predictions: int
    basis: str
    ratios: tuple[float, ...]

    @property
    def low(self) -> float:
        return self.quantiles[BAND_QUANTILES[0]]

    @property
    def high(self) -> float:
        return self.quantiles[BAND_QUANTILES[-1]]

    def lognormal(self) -> tuple[float, float]:
        """(mu, sigma) of ln(throughput): ln(predicted) + median ln r, IQR(ln r) / 1.349."""
        logs = np.log(np.asarray(self.ratios))
        q25, q50, q75 = np.quantile(logs, [0.25, 0.5, 0.75])
        return math.log(self.predicted) + float(q50), float(q75 - q25) / NORMAL_IQR

    def montecarlo_lognormal(self) -> str:
        """`--dist` text of the lognormal fit (econ.analysis.distributions syntax)."""
        mu, sigma = self.lognormal()
        return f"lognormal({mu:.6g}, {sigma:.6g})"

    def montecarlo_empirical(self) -> str:
        """`--dist` text of the empirical band: predicted x each observed r, equal weights."""
        values = sorted(self.predicted * r for r in self.ratios)
        return "discrete(" + ", ".join(f"{v:.6g}" for v in values) + ")"

    def description(self) -> str:
        where = (
            "a calibrated hardware x model pair"
            if self.calibrated_pair
            else "OUTSIDE the calibrated hardware x model pairs"
        )
        return (
            f"out-of-sample error band (5th-95th percentile): {self.low:,.0f} to {self.high:,.0f} "
            f"tokens/s per GPU around {self.predicted:,.0f}; {where}: median error "
            f"{self.median_abs_error:.1%} over {self.predictions} predictions ({self.basis})"
        )

    def as_dict(self) -> dict:
        mu, sigma = self.lognormal()
        return {
            "predicted_tokens_per_s_per_gpu": self.predicted,
            "calibrated_pair": self.calibrated_pair,
            "quantiles_tokens_per_s_per_gpu": {
                f"p{round(q * 100):02d}": v for q, v in self.quantiles.items()
            },  # fmt: skip
            "median_abs_error": self.median_abs_error,
            "predictions": self.predictions,
            "basis": self.basis,
            "lognormal_mu": mu,
            "lognormal_sigma": sigma,
            "montecarlo_dist_lognormal": self.montecarlo_lognormal(),
            "montecarlo_dist_empirical": self.montecarlo_empirical(),
        }


def error_band(
    hardware: str, model: str, tokens_per_s_per_gpu: float, errors: pd.DataFrame | None = None
) -> ErrorBand:
    """The band of a calibrated prediction of `model` on `hardware` [tokens/s/GPU]."""
    if not (tokens_per_s_per_gpu > 0 and math.isfinite(tokens_per_s_per_gpu)):
        raise ErrorBandError(
            f"predicted throughput {tokens_per_s_per_gpu!r}: expected a positive number of "
            "tokens/s per GPU"
        )
    in_pair = (hardware, model) in calibrated_pairs()
    errors = load_errors() if errors is None else errors
    ratios = band_ratios(in_pair, errors)
    values = tokens_per_s_per_gpu * np.quantile(ratios, BAND_QUANTILES)
    rounds = ", ".join(sorted(set(errors.loc[errors["check"] == BY_ROUND, "round"])))
    basis = (
        f"MLPerf {rounds} predicted by coefficients fitted on earlier rounds"
        if in_pair
        else f"MLPerf {rounds} on pairs the fit never saw, and leave one system out"
    )
    return ErrorBand(
        predicted=float(tokens_per_s_per_gpu),
        calibrated_pair=in_pair,
        quantiles={q: float(v) for q, v in zip(BAND_QUANTILES, values, strict=True)},
        median_abs_error=float(np.median(np.abs(1.0 / ratios - 1.0))),
        predictions=len(ratios),
        basis=basis,
        ratios=tuple(float(r) for r in ratios),
    )


__all__ = [
    "BAND_QUANTILES",
    "BY_ROUND",
    "ErrorBand",
    "ErrorBandError",
    "LEAVE_ONE_OUT",
    "TEST_ROUND",
    "band_ratios",
    "calibrated_pairs",
    "error_band",
    "errors_path",
    "load_errors",
    "out_of_sample_errors",
    "round_targets",
]
