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


PRIOR = Efficiency()
"""The default coefficients (the calibration's prior), used where no calibration is stored."""


def calibration_dir() -> Path:
    return models_dir() / "calibration"


def _read_calibration(key: str, directory: Path | None = None) -> dict:
    directory = Path(directory) if directory is not None else calibration_dir()
    path = directory / f"{key}.toml"
    if not path.is_file():
        return {}
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"calibration file {path} is not valid TOML: {exc}") from exc
    out = {}
    for precision, table in raw.get("precision", {}).items():
        names = {f.name for f in fields(Efficiency)}
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


def load_all_efficiencies(directory: Path | None = None) -> dict[str, dict]:
    """hardware -> precision -> (Efficiency, info) for every stored calibration."""
    return {
        key: stored
        for key in load_hardware_catalog()
        if (stored := _read_calibration(key, directory))
    }
