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
calibrated pairs, provided its hardware's generation is among theirs (they are all of Blackwell
parts today) and it is at the hardware's default precision, which the calibration assumes the
rows ran; any other prediction, a calibrated pair of another generation or precision included
(whose coefficients are transferred, untested out of sample), from the
errors outside calibrated pairs (by round on pairs the fit never saw, and every
leave-one-system-out prediction), and says so. The band is the predicted value times the 5th to
95th percentiles of r (linear interpolation between order statistics, Hyndman and Fan 1996,
definition 7, numpy's default), its provenance the checks and hardware of those predictions.

A pair with its own MLPerf results is then checked against them: a prediction of an MLPerf
scenario's workload against that scenario's calibration target (the best per-GPU result of the
latest round), any other against every target of the pair (measured / the shipped coefficients'
prediction at MLPerf's workload, the validation's "calibrated" figure). Where such a ratio falls
outside the sample's 5th-95th percentiles the band is widened to reach it and a warning names the
measured figure and the miss: a sample of other pairs' errors says nothing about a pair the model
is known to miss.

As a Monte Carlo input the band is a lognormal whose 5th and 95th percentiles are the band's ends,
mu = (ln low + ln high) / 2 and sigma = (ln high - ln low) / (2 z_0.95) with z_0.95 = 1.6449 (its
median is the geometric mean of the ends, not the sample's median), or the empirical
distribution (the prediction times every observed r of the sample and of the pair's own results,
equal weights), which keeps the heavy tail.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from econ.catalog import catalog_cache, models_dir
from econ.errors import InputError
from econ.files import read_noted_csv

ERRORS_FILE = "out_of_sample_errors.csv"
TEST_ROUND = "v6.1"
BY_ROUND = "by round"
LEAVE_ONE_OUT = "leave one system out"
BAND_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
Z_95 = NormalDist().inv_cdf(BAND_QUANTILES[-1])
"""95th percentile of a standard normal distribution, 1.6449: the band's ends are the lognormal's
5th and 95th percentiles."""
CALIBRATED_SAMPLE = "calibrated pairs"
OUTSIDE_SAMPLE = "outside calibrated pairs"
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

    return _fitted_pairs(shipped_targets(), cal.load_all_efficiencies())


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


@catalog_cache(maxsize=4)
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


def _sample(calibrated_pair: bool, errors: pd.DataFrame) -> pd.DataFrame:
    """The out-of-sample predictions a band is drawn from: by-round errors of calibrated pairs, or
    every error outside them."""
    pick = errors["calibrated_pair"] == calibrated_pair
    if calibrated_pair:
        pick &= errors["check"] == BY_ROUND
    sample = errors.loc[pick]
    if len(sample) < 5:
        raise ErrorBandError(
            f"only {len(sample)} out-of-sample errors for "
            f"{'calibrated' if calibrated_pair else 'uncalibrated'} pairs; a band needs 5"
        )
    return sample


def band_ratios(calibrated_pair: bool, errors: pd.DataFrame | None = None) -> np.ndarray:
    """measured / predicted of the out-of-sample predictions a band is drawn from [ratio (n,)]:
    by-round errors of calibrated pairs, or every error outside them."""
    errors = load_errors() if errors is None else errors
    return _sample(calibrated_pair, errors)["ratio"].to_numpy(dtype=float)


def _generations(hardware) -> list[str]:
    from econ.hardware import get_hardware

    return sorted({get_hardware(h).generation for h in hardware})


def _basis(sample: pd.DataFrame) -> str:
    """Which predictions a band rests on: checks, rounds and hardware."""
    parts = []
    for check, part in sample.groupby("check", sort=False):
        hardware = sorted(set(part["hardware"]))
        where = f"{', '.join(hardware)} ({', '.join(_generations(hardware))})"
        if check == BY_ROUND:
            rounds = ", ".join(sorted(set(part["round"])))
            kind = (
                "calibrated pairs" if part["calibrated_pair"].all() else "pairs the fit never saw"
            )
            parts.append(
                f"{len(part)} of MLPerf {rounds} predicted by coefficients fitted on earlier "
                f"rounds, on {kind} of {where}"
            )
        else:
            parts.append(f"{len(part)} {check} on {where}")
    return "; ".join(parts)


# --- the pair's own results ----------------------------------------------------------------------


@catalog_cache(maxsize=2)
def _shipped_targets(path: str, stamp: float) -> pd.DataFrame:
    from econ.throughput import calibration as cal

    return cal.calibration_targets(cal.load_rows(path))


def shipped_targets() -> pd.DataFrame:
    """The calibration targets of the shipped MLPerf rows (models/calibration/mlperf_rows.csv):
    the best per-GPU result of the latest round per hardware, model and scenario."""
    from econ.throughput import calibration as cal

    path = cal.rows_path()
    return _shipped_targets(str(path), path.stat().st_mtime if path.is_file() else 0.0).copy()


@dataclass(frozen=True)
class PairResult:
    """One MLPerf result of the predicted pair and the prediction it is compared with.

    Attributes
    ----------
    scenario, round, submitter : the calibration target's MLPerf scenario, round and submitter
    gpus : its system's accelerator count [GPUs]
    measured : its per-GPU result [tokens/s/GPU]
    predicted : the prediction compared with it [tokens/s/GPU]: the one at hand when it is of
        the same MLPerf workload (`direct`), else the shipped coefficients' at MLPerf's workload
    direct : whether `predicted` is the prediction at hand
    """

    scenario: str
    round: str
    submitter: str
    gpus: int
    measured: float
    predicted: float
    direct: bool

    @property
    def ratio(self) -> float:
        """measured / predicted [ratio]."""
        return self.measured / self.predicted

    def text(self) -> str:
        miss = self.predicted / self.measured - 1.0
        where = (
            f"this prediction, {self.predicted:,.0f},"
            if self.direct
            else (
                f"the shipped coefficients' prediction at MLPerf's workload, {self.predicted:,.0f},"
            )
        )
        return (
            f"MLPerf {self.round} {self.scenario} measured {self.measured:,.0f} tokens/s per GPU "
            f"({self.submitter}, {self.gpus} GPUs) and {where} is {abs(miss):.0%} "
            f"{'above' if miss > 0 else 'below'} it"
        )

    def as_dict(self) -> dict:
        return {
            "scenario": self.scenario,
            "round": self.round,
            "submitter": self.submitter,
            "gpus": self.gpus,
            "measured_tokens_per_s_per_gpu": self.measured,
            "predicted_tokens_per_s_per_gpu": self.predicted,
            "direct": self.direct,
            "ratio": self.ratio,
        }


def pair_results(
    hardware: str, model: str, predicted: float | None = None, scenario: str | None = None
) -> tuple[PairResult, ...]:
    """The pair's own MLPerf results and the predictions they check.

    With `scenario` (a prediction of that MLPerf scenario's workload, see `mlperf_scenario`) and
    a calibration target of it: that target against `predicted`. Otherwise every target of the
    pair against the shipped coefficients' prediction at MLPerf's workload and layouts up to the
    submission's GPU count (what docs/simulator.md lists as "calibrated"). Empty for a pair
    without MLPerf results."""
    from econ.throughput import calibration as cal

    targets = shipped_targets()
    pair = targets[(targets["hardware"] == hardware) & (targets["model"] == model)]
    if scenario is not None and predicted is not None and (pair["scenario"] == scenario).any():
        pair = pair[pair["scenario"] == scenario]
        against, direct = np.array([float(predicted)]), True
    elif len(pair):
        against = cal.PredictionBatch.build(pair).predict(
            cal.efficiency_by_row(pair, cal.load_all_efficiencies())
        )
        direct = False
    else:
        return ()
    return tuple(
        PairResult(
            r.scenario,
            r.round,
            str(r.submitter),
            int(r.accelerator_count),
            float(r.measured),
            float(p),
            direct,
        )  # fmt: skip
        for r, p in zip(pair.itertuples(index=False), against, strict=True)
        if np.isfinite(p) and p > 0
    )


def mlperf_scenario(
    hardware: str,
    model: str,
    precision: str,
    *,
    input_tokens: float,
    output_tokens: float,
    tpot_limit_s: float | None,
    ttft_limit_s: float | None,
    draft_tokens: int = 0,
    accepted_tokens: float = 1.0,
    scenario: str | None = None,
) -> str | None:
    """The MLPerf scenario ("Offline", "Server", "Interactive") whose workload a simulation
    reproduces: its mean lengths, p99 limits (None = none) and speculation, at the hardware's
    default precision, which the calibration assumes the submissions ran. Only then is the pair's
    result of that scenario a direct check of the prediction. `scenario` restricts the search to
    one; None when nothing matches."""
    from econ.hardware import get_hardware
    from econ.throughput import calibration as cal

    if precision != get_hardware(hardware).default_precision:
        return None
    workloads = cal.load_workloads().get(model, {})
    names = [scenario.strip().capitalize()] if scenario else list(workloads)
    asked = (
        input_tokens, output_tokens, math.inf if tpot_limit_s is None else tpot_limit_s,
        math.inf if ttft_limit_s is None else ttft_limit_s, draft_tokens, accepted_tokens,
    )  # fmt: skip
    for name in names:
        w = workloads.get(name)
        if w is None:
            continue
        expected = (
            w.input_tokens, w.output_tokens, w.tpot_limit_s, w.ttft_limit_s, w.draft_tokens,
            w.accepted_tokens,
        )  # fmt: skip
        if all(
            a == b or math.isclose(a, b, rel_tol=1e-9) for a, b in zip(asked, expected, strict=True)
        ):
            return name
    return None


def _latest_round_rows(hardware: str, model: str, result: PairResult) -> pd.DataFrame:
    """Every available result of the pair's scenario in the target's round (shipped rows)."""
    from econ.throughput import calibration as cal

    rows = cal.load_rows()
    return rows[
        (rows["hardware"] == hardware)
        & (rows["model"] == model)
        & (rows["scenario"] == result.scenario)
        & (rows["round"] == result.round)
        & (rows["availability"] == "available")
    ]


def calibrated_gpus(
    hardware: str, model: str, scenario: str | None = None
) -> tuple[int, str] | None:
    """Most GPUs of a calibration target, which the fit and the validation searched layouts up
    to, and whose target(s) those are: the pair's target of `scenario` (a prediction of that
    MLPerf workload), else every target of the pair, else of the hardware; None for hardware
    without any."""
    targets = shipped_targets()
    mine = targets[targets["hardware"] == hardware]
    pair = mine[mine["model"] == model]
    same = pair[pair["scenario"] == scenario]
    for rows, whose in (
        (same, f"the calibration row of {model} {scenario} on {hardware} uses"),
        (pair, f"the calibration rows of {model} on {hardware} use"),
        (mine, f"the calibration rows of {hardware} use"),
    ):
        if len(rows):
            return int(rows["accelerator_count"].max()), whose
    return None


def layout_warning(
    hardware: str,
    model: str,
    instance_gpus: int,
    tensor_parallel: int,
    within: Callable[[int], float],
    scenario: str | None = None,
) -> str | None:
    """A warning when an operating point's instance is larger than the calibration targets'
    (`calibrated_gpus`): the fit and the validation never searched such layouts. `within(n)` is
    the same search limited to n GPUs [tokens/s/GPU], quoted beside it (for an MLPerf scenario's
    workload, the figure docs/simulator.md validates)."""
    limit = calibrated_gpus(hardware, model, scenario)
    if limit is None or instance_gpus <= limit[0]:
        return None
    gpus, whose = limit
    return (
        f"extrapolated beyond the calibrated layouts: {whose} at most {gpus} GPUs and this "
        f"operating point {instance_gpus} (tp {tensor_parallel}); limited to {gpus} GPUs the "
        f"simulator predicts {within(gpus):,.0f} tokens/s per GPU"
    )


# --- the band ------------------------------------------------------------------------------------


WIDER_GENERATION = "of a generation the calibrated-pair errors lack"
WIDER_PRECISION = "at a precision its MLPerf rows did not run"


@dataclass(frozen=True)
class ErrorBand:
    """A prediction's band from out-of-sample errors and the pair's own results.

    Attributes
    ----------
    predicted : the simulator's figure [tokens/s/GPU]
    calibrated_pair : whether the hardware x model pair is in the calibration data
    quantiles : {0.05: ..., 0.95: ...} of predicted x r [tokens/s/GPU]; the 5th and 95th are the
        band's ends, widened to the pair's own results where these fall outside
    median_abs_error : median |1/r - 1| of the sample, the error of a prediction relative to its
        measurement
    predictions : how many out-of-sample predictions the band rests on
    basis : which checks, rounds and hardware they come from
    ratios : the observed r of the sample [ratio (n,)]
    sample : CALIBRATED_SAMPLE or OUTSIDE_SAMPLE, the errors the band is drawn from
    sample_ends : the sample's 5th and 95th percentiles before any widening [tokens/s/GPU]
    pair : the pair's own MLPerf results the band was checked against
    warnings : what the band's user must hear (the pair's miss, a generation the sample lacks,
        results of the round below the band)
    wider_because : why a calibrated pair's band is the wider one (OUTSIDE_SAMPLE): its
        generation, or a precision other than the one its MLPerf rows ran
    """

    predicted: float
    calibrated_pair: bool
    quantiles: dict[float, float]
    median_abs_error: float
    predictions: int
    basis: str
    ratios: tuple[float, ...]
    sample: str = CALIBRATED_SAMPLE
    sample_ends: tuple[float, float] = (math.nan, math.nan)
    pair: tuple[PairResult, ...] = ()
    warnings: tuple[str, ...] = ()
    wider_because: str = WIDER_GENERATION

    @property
    def low(self) -> float:
        return self.quantiles[BAND_QUANTILES[0]]

    @property
    def high(self) -> float:
        return self.quantiles[BAND_QUANTILES[-1]]

    @property
    def widened(self) -> bool:
        """Whether the pair's own results moved an end of the band beyond the sample's."""
        return self.low < self.sample_ends[0] or self.high > self.sample_ends[1]

    @property
    def label(self) -> str:
        """Short: which pair and which sample."""
        if not self.calibrated_pair:
            return "OUTSIDE the calibrated pairs"
        if self.sample == CALIBRATED_SAMPLE:
            return "calibrated pair"
        return f"calibrated pair {self.wider_because} (wider band)"

    def lognormal(self) -> tuple[float, float]:
        """(mu, sigma) of ln(throughput) whose 5th and 95th percentiles are the band's ends:
        mu = (ln low + ln high) / 2, sigma = (ln high - ln low) / (2 z_0.95)."""
        low, high = math.log(self.low), math.log(self.high)
        return (low + high) / 2.0, (high - low) / (2.0 * Z_95)

    def montecarlo_lognormal(self) -> str:
        """`--dist` text of the lognormal fit (econ.analysis.distributions syntax)."""
        mu, sigma = self.lognormal()
        return f"lognormal({mu:.9g}, {sigma:.9g})"

    def montecarlo_empirical(self) -> str:
        """`--dist` text of the empirical band: predicted x each observed r of the sample and of
        the pair's own results, equal weights."""
        ratios = (*self.ratios, *(r.ratio for r in self.pair))
        values = sorted(self.predicted * r for r in ratios)
        return "discrete(" + ", ".join(f"{v:.6g}" for v in values) + ")"

    def description(self) -> str:
        if not self.calibrated_pair:
            where = "OUTSIDE the calibrated hardware x model pairs"
        elif self.sample == CALIBRATED_SAMPLE:
            where = "a calibrated hardware x model pair"
        else:
            where = (
                f"a calibrated hardware x model pair {self.wider_because}, so the band of the "
                "predictions outside calibrated pairs"
            )
        widened = (
            f"; widened from {self.sample_ends[0]:,.0f} to {self.sample_ends[1]:,.0f} to reach "
            "this pair's own MLPerf result"
            if self.widened
            else ""
        )
        return (
            f"out-of-sample error band (5th-95th percentile): {self.low:,.0f} to {self.high:,.0f} "
            f"tokens/s per GPU around {self.predicted:,.0f}; {where}: median error "
            f"{self.median_abs_error:.1%} over {self.predictions} predictions ({self.basis})"
            + widened
        )

    def as_dict(self) -> dict:
        mu, sigma = self.lognormal()
        return {
            "predicted_tokens_per_s_per_gpu": self.predicted,
            "calibrated_pair": self.calibrated_pair,
            "label": self.label,
            "quantiles_tokens_per_s_per_gpu": {
                f"p{round(q * 100):02d}": v for q, v in self.quantiles.items()
            },  # fmt: skip
            "sample": self.sample,
            "sample_p05_p95_tokens_per_s_per_gpu": list(self.sample_ends),
            "widened": self.widened,
            "median_abs_error": self.median_abs_error,
            "predictions": self.predictions,
            "basis": self.basis,
            "pair_results": [r.as_dict() for r in self.pair],
            "warnings": list(self.warnings),
            "lognormal_mu": mu,
            "lognormal_sigma": sigma,
            "montecarlo_dist_lognormal": self.montecarlo_lognormal(),
            "montecarlo_dist_empirical": self.montecarlo_empirical(),
        }


_SCENARIO_KEYS = (
    "input_tokens",
    "output_tokens",
    "tpot_limit_s",
    "ttft_limit_s",
    "draft_tokens",
    "accepted_tokens",
)
"""The operating point's arguments that say which MLPerf scenario's workload it reproduces."""


def simulated_band(hw, llm, precision: str, point, search: dict):
    """(band, layout warning or None, MLPerf scenario or None) of the simulator's operating
    `point` of `llm` on `hw`, found with the keyword arguments `search` (lengths, latency limits,
    draft tokens, efficiency...; not max_gpus): the band checked against the pair's own MLPerf
    results where the workload is a scenario's, and the warning of a layout larger than the
    calibration rows'. `econ throughput simulate`, a scenario's throughput.simulated and the
    app's Throughput page report these."""
    from econ.throughput import simulator as sim

    scenario = mlperf_scenario(
        hw.key, llm.key, precision, **{k: search[k] for k in _SCENARIO_KEYS if k in search}
    )
    band = error_band(
        hw.key, llm.key, float(point.tokens_per_s_per_gpu), scenario=scenario, precision=precision
    )
    layout = layout_warning(
        hw.key,
        llm.key,
        point.instance_gpus,
        point.tensor_parallel,
        lambda gpus: (
            sim.operating_point(
                hw, llm, precision, max_gpus=gpus, strict=False, **search
            ).tokens_per_s_per_gpu
        ),
        scenario,
    )
    return band, layout, scenario


def error_band(
    hardware: str,
    model: str,
    tokens_per_s_per_gpu: float,
    errors: pd.DataFrame | None = None,
    *,
    scenario: str | None = None,
    own_results: bool = True,
    precision: str | None = None,
) -> ErrorBand:
    """The band of a calibrated prediction of `model` on `hardware` [tokens/s/GPU].

    `scenario`: the MLPerf scenario whose workload the prediction reproduces (`mlperf_scenario`),
    whose result then checks it directly. `own_results` False leaves the pair's own results out
    (the sample's band alone). `precision` other than the hardware's default, which the
    calibration assumes its MLPerf rows ran, takes the wider band: no out-of-sample error
    measures a prediction at a precision whose coefficients are transferred."""
    if not (tokens_per_s_per_gpu > 0 and math.isfinite(tokens_per_s_per_gpu)):
        raise ErrorBandError(
            f"predicted throughput {tokens_per_s_per_gpu!r}: expected a positive number of "
            "tokens/s per GPU"
        )
    from econ.hardware import get_hardware

    predicted = float(tokens_per_s_per_gpu)
    in_pair = (hardware, model) in calibrated_pairs()
    errors = load_errors() if errors is None else errors
    warnings = []
    use_calibrated = in_pair
    wider_because = WIDER_GENERATION
    if in_pair:
        hw = get_hardware(hardware)
        covered = _generations(_sample(True, errors)["hardware"])
        if hw.generation not in covered:
            use_calibrated = False
            warnings.append(
                f"{model} on {hardware} is a calibrated pair, but the out-of-sample errors of "
                f"calibrated pairs are all of {', '.join(covered)} hardware, not {hw.generation}: "
                "its band is the wider one of the predictions outside calibrated pairs"
            )
        elif precision is not None and precision != hw.default_precision:
            use_calibrated, wider_because = False, WIDER_PRECISION
            warnings.append(
                f"{model} on {hardware} is a calibrated pair at {hw.default_precision.upper()}, "
                f"the precision the calibration assumes its MLPerf rows ran, not at "
                f"{precision.upper()}, whose coefficients are transferred from that fit and "
                "which no out-of-sample error measures: its band is the wider one of the "
                "predictions outside calibrated pairs"
            )
    sample = _sample(use_calibrated, errors)
    ratios = sample["ratio"].to_numpy(dtype=float)
    values = predicted * np.quantile(ratios, BAND_QUANTILES)
    ends = (float(values[0]), float(values[-1]))
    own = pair_results(hardware, model, predicted, scenario) if own_results else ()
    values[0] = min([values[0], *(predicted * r.ratio for r in own)])
    values[-1] = max([values[-1], *(predicted * r.ratio for r in own)])
    for r in own:
        if not ends[0] <= predicted * r.ratio <= ends[1]:
            advice = (
                "; where the workload is MLPerf's, the measured figure is the better input "
                "(throughput.measured, an MLPerf catalog row)"
                if r.direct
                else ""
            )
            warnings.append(
                f"the simulator misses {model} on {hardware}: {r.text()}; the band is widened "
                f"from {ends[0]:,.0f}-{ends[1]:,.0f} to reach it{advice}"
            )
    direct = [r for r in own if r.direct]
    if direct:
        rows = _latest_round_rows(hardware, model, direct[0])["per_accelerator"].astype(float)
        below = rows[rows < values[0] * (1.0 - 1e-9)]  # the best, the band's end, is not below
        if len(below):
            warnings.append(
                f"{len(below)} of {len(rows)} MLPerf {direct[0].round} {direct[0].scenario} "
                f"results of {model} on {hardware} lie below the band (lowest {below.min():,.0f} "
                "tokens/s per GPU): the band is of the best result of a round, which the fit's "
                "targets are; less tuned stacks reach less"
            )
    return ErrorBand(
        predicted=predicted,
        calibrated_pair=in_pair,
        quantiles={q: float(v) for q, v in zip(BAND_QUANTILES, values, strict=True)},
        median_abs_error=float(np.median(np.abs(1.0 / ratios - 1.0))),
        predictions=len(ratios),
        basis=_basis(sample),
        ratios=tuple(float(r) for r in ratios),
        sample=CALIBRATED_SAMPLE if use_calibrated else OUTSIDE_SAMPLE,
        sample_ends=ends,
        pair=own,
        warnings=tuple(warnings),
        wider_because=wider_because,
    )


__all__ = [
    "BAND_QUANTILES",
    "BY_ROUND",
    "CALIBRATED_SAMPLE",
    "ErrorBand",
    "ErrorBandError",
    "LEAVE_ONE_OUT",
    "OUTSIDE_SAMPLE",
    "PairResult",
    "TEST_ROUND",
    "Z_95",
    "band_ratios",
    "calibrated_gpus",
    "calibrated_pairs",
    "error_band",
    "errors_path",
    "layout_warning",
    "simulated_band",
    "load_errors",
    "mlperf_scenario",
    "out_of_sample_errors",
    "pair_results",
    "round_targets",
    "shipped_targets",
]
