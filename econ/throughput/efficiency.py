"""Efficiency coefficients of the throughput simulator and the calibrations stored in
models/calibration (read here, below both the simulator that uses them and the calibration that
fits and saves them)."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from econ.catalog import models_dir
from econ.errors import InputError
from econ.hardware import load_hardware_catalog


class CalibrationError(InputError):
    """Invalid calibration data, workloads or stored coefficients."""


@dataclass(frozen=True)
class Efficiency:
    """Efficiency coefficients multiplying the roofline terms (fitted by econ.throughput.calibration).

    Each field may be a float or an array broadcasting against the workload arrays.
    """

    bandwidth: float = 0.7
    """Achieved / peak HBM bandwidth in decode [fraction]."""
    compute: float = 0.5
    """Achieved / dense peak FLOP/s in decode GEMMs [fraction]."""
    prefill: float = 0.5
    """Achieved / dense peak FLOP/s in prefill [fraction]."""
    overlap: float = 4.0
    """Exponent p of the smooth maximum (t_mem^p + t_compute^p)^(1/p); 1 adds, large p overlaps."""
    step_overhead_s: float = 2e-3
    """Fixed time per forward step: scheduling, sampling, kernel launch gaps [s]."""
    layer_overhead_s: float = 1e-5
    """Fixed time per layer per step: small kernels, norms, synchronisation [s]."""
    token_overhead_s: float = 2e-5
    """Time per decoded token per GPU share that scales with neither bytes nor FLOPs: sampling over
    the vocabulary, logits processing, scheduling and detokenization [s]."""
    moe_imbalance: float = 0.2
    """Extra expert work on the busiest GPU over the mean [fraction]."""
    communication: float = 0.6
    """Achieved / peak link bandwidth in collectives [fraction]."""
    memory_reserve: float = 0.1
    """HBM kept for activations, workspace and fragmentation [fraction]."""
    tpot_tail: float = 1.3
    """p99 / mean time per output token: steps that carry prefill chunks and the batch swings of
    Poisson arrivals make some requests' TPOT longer than the mean [ratio]."""
    model_efficiency: float = 1.0
    """Speed of one model's serving stack against the hardware's coefficients, which every model on
    a hardware shares; each step time is divided by it. Fitted per model across hardware
    (models/calibration/models.toml), not per hardware; 1 where none is stored [ratio]."""


PRIOR = Efficiency()
"""The default coefficients (the calibration's prior), used where no calibration is stored."""


def calibration_dir() -> Path:
    return models_dir() / "calibration"


def _read_toml(path: Path, what: str) -> dict | None:
    """A stored TOML file's tables; None when the file does not exist."""
    if not path.is_file():
        return None
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"{what} {path} is not valid TOML: {exc}") from exc


def _read_calibration(key: str, directory: Path | None = None) -> dict:
    directory = Path(directory) if directory is not None else calibration_dir()
    path = directory / f"{key}.toml"
    raw = _read_toml(path, "calibration file")
    if raw is None:
        return {}
    out = {}
    for precision, table in raw.get("precision", {}).items():
        # a model's efficiency lives in models.toml, never in a hardware's file
        names = {f.name for f in fields(Efficiency)} - {"model_efficiency"}
        unknown = set(table) - names - {"source", "fitted_on", "data", "rows", "median_abs_error"}
        if unknown:
            raise CalibrationError(
                f"{path}: precision.{precision} has unknown fields {', '.join(sorted(unknown))}"
            )
        values = {k: table[k] for k in names if k in table}
        for k, v in values.items():
            if not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise CalibrationError(
                    f"{path}: precision.{precision}.{k} must be a non-negative number, got {v!r}"
                )
        info = {
            k: table[k]
            for k in ("source", "fitted_on", "data", "rows", "median_abs_error")
            if k in table
        }
        out[precision] = (Efficiency(**values), info)
    return out


def load_efficiency(hardware: str, precision: str, directory: Path | None = None):
    """(Efficiency, provenance) for a hardware and precision; the defaults, labelled uncalibrated,
    when no calibration is stored."""
    stored = _read_calibration(hardware, directory)
    if precision in stored:
        eff, info = stored[precision]
        return eff, {"efficiency": "calibrated", **{f"calibration_{k}": v for k, v in info.items()}}
    return PRIOR, {"efficiency": "default coefficients (no calibration stored)"}


MODEL_EFFICIENCY_FILE = "models.toml"
MODEL_INFO_FIELDS = ("source", "fitted_on", "data", "rows", "hardware", "median_abs_error")


def model_efficiency_path(directory: Path | None = None) -> Path:
    return (Path(directory) if directory is not None else calibration_dir()) / MODEL_EFFICIENCY_FILE


def load_model_efficiencies(directory: Path | None = None) -> dict[str, tuple[float, dict]]:
    """model -> (efficiency, provenance) from models/calibration/models.toml; {} when none is
    stored."""
    path = model_efficiency_path(directory)
    raw = _read_toml(path, "model efficiency file")
    if raw is None:
        return {}
    out = {}
    for model, table in raw.get("model", {}).items():
        unknown = set(table) - {"efficiency", *MODEL_INFO_FIELDS}
        if unknown:
            raise CalibrationError(
                f"{path}: model.{model} has unknown fields {', '.join(sorted(unknown))}"
            )
        value = table.get("efficiency")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (math.isfinite(value) and value > 0)
        ):
            raise CalibrationError(
                f"{path}: model.{model}.efficiency must be a positive number, got {value!r}"
            )
        out[model] = (float(value), {k: table[k] for k in MODEL_INFO_FIELDS if k in table})
    return out


def load_model_efficiency(model: str, directory: Path | None = None) -> tuple[float, dict]:
    """(efficiency, provenance) of one model; 1 (labelled) when none is stored."""
    stored = load_model_efficiencies(directory)
    if model in stored:
        value, info = stored[model]
        return value, {
            "model_efficiency": value,
            **{f"model_efficiency_{k}": v for k, v in info.items()},
        }
    return 1.0, {"model_efficiency": "none stored (1)"}


def load_all_efficiencies(directory: Path | None = None) -> dict[str, dict]:
    """hardware -> precision -> (Efficiency, info) for every stored calibration."""
    return {
        key: stored
        for key in load_hardware_catalog()
        if (stored := _read_calibration(key, directory))
    }
