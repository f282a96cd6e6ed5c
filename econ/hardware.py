"""Accelerator catalog: loads and validates models/hardware.toml, and owns the precision vocabulary.

Each entry is one accelerator as deployed (an HGX board GPU, an NVL72 rack GPU, an MI3xx OAM): memory,
bandwidth, dense peak per precision, scale-up domain, scale-out NIC, power and the sibling whose
calibration it borrows when it has no measurements. Figures and sources come from
../shared/data/hardware_specs.csv and reference_figures.csv (copied, sources kept). One row of
models/reference_figures.csv differs from the reference data's: the GB200 NVL72 rack power (120 kW,
unchanged) is labelled secondary, its source naming the blog and press that state it, as no NVIDIA
document stating 120 kW was found where the reference data cites "NVIDIA GB200 NVL72 spec".

Precisions are named "bf16", "fp8" and "fp4" ("mxfp4" and "nvfp4" are accepted as "fp4"). A hardware
runs a precision natively when its datasheet gives a dense peak for it; the default precision is the
lowest it runs natively (FP4 on Blackwell and MI355X, FP8 on Hopper and MI300X/MI325X).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from econ.catalog import catalog_cache, load_toml_table, models_dir
from econ.errors import InputError

Precision = Literal["bf16", "fp8", "fp4"]
PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
"""Precisions from widest to narrowest."""
PRECISION_ALIASES = {"mxfp4": "fp4", "nvfp4": "fp4", "bfloat16": "bf16", "fp16": "bf16"}

WEIGHT_BYTES_PER_PARAM = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}
"""Bytes stored per weight [bytes]. FP4 counts NVFP4's block scale: 4 bits + one 8-bit scale per 16
values = 4.5 bits (NVIDIA, "Introducing NVFP4", 2025); MXFP4 (4.25 bits, OCP MX spec v1.0) is slightly
smaller, so the figure is an upper bound for it."""

KV_BYTES_PER_ELEMENT = {"bf16": 2.0, "fp8": 1.0, "fp4": 1.0}
"""KV-cache bytes per element [bytes]: FP8 cache with FP8 or FP4 weights, as the MLPerf submissions
and TensorRT-LLM/vLLM deployments of these precisions run (FP4 KV caches are not in common use)."""


class HardwareError(InputError):
    """Unknown hardware, an unsupported precision or an invalid hardware catalog."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DenseTflops(_Section):
    bf16: float = Field(..., gt=0, description="Dense BF16 peak [TFLOP/s]")
    fp8: float = Field(..., gt=0, description="Dense FP8 peak [TFLOP/s]")
    fp4: float | None = Field(
        None, gt=0, description="Dense FP4 peak, absent if not native [TFLOP/s]"
    )


class PowerFigures(_Section):
    all_in_kw_per_gpu: float | None = Field(
        None, gt=0, description="Power per GPU including its host share [kW]"
    )
    all_in_source: str = ""
    system_kw: float | None = Field(None, gt=0, description="Power of one system or rack [kW]")
    gpus_per_system: int | None = Field(None, gt=0, description="GPUs in that system [GPUs]")
    system_source: str = ""

    @model_validator(mode="after")
    def _sources(self) -> PowerFigures:
        if self.all_in_kw_per_gpu is not None and not self.all_in_source:
            raise ValueError("all_in_kw_per_gpu needs all_in_source")
        if (self.system_kw is None) != (self.gpus_per_system is None):
            raise ValueError("system_kw and gpus_per_system go together")
        if self.system_kw is not None and not self.system_source:
            raise ValueError("system_kw needs system_source")
        return self


class Hardware(_Section):
    """One accelerator as deployed."""

    key: str
    name: str
    vendor: str
    generation: str
    hbm_gb_nominal: float = Field(..., gt=0, description="HBM capacity on the datasheet [GB]")
    hbm_gb_usable: float = Field(..., gt=0, description="HBM capacity usable by software [GB]")
    hbm_bandwidth_tb_per_s: float = Field(..., gt=0, description="HBM bandwidth [TB/s]")
    dense_tflops: DenseTflops
    scaleup_gb_per_s: float = Field(
        ...,
        gt=0,
        description="Scale-up (NVLink / Infinity Fabric) bandwidth per GPU per direction [GB/s]",
    )
    scaleup_domain_gpus: int = Field(..., gt=0, description="GPUs in one scale-up domain [GPUs]")
    scaleout_gbit_per_s: float = Field(..., gt=0, description="Scale-out NIC per GPU [Gbit/s]")
    gpu_tdp_w: float = Field(..., gt=0, description="GPU board power [W]")
    gpus_per_rack: int | None = Field(None, gt=0, description="GPUs per rack [GPUs]")
    gpus_per_rack_source: str = ""
    sibling: str = Field("", description="Hardware whose calibration this one borrows")
    notes: str = ""
    sources: str = Field(..., min_length=1)
    power: PowerFigures = PowerFigures()

    @model_validator(mode="after")
    def _consistent(self) -> Hardware:
        if self.hbm_gb_usable > self.hbm_gb_nominal:
            raise ValueError(
                f"hbm_gb_usable {self.hbm_gb_usable} exceeds hbm_gb_nominal {self.hbm_gb_nominal}"
            )
        if self.gpus_per_rack is not None and not self.gpus_per_rack_source:
            raise ValueError("gpus_per_rack needs gpus_per_rack_source")
        return self

    @property
    def native_precisions(self) -> tuple[str, ...]:
        """Precisions with a datasheet dense peak, widest first."""
        return tuple(p for p in PRECISIONS if getattr(self.dense_tflops, p) is not None)

    @property
    def default_precision(self) -> str:
        """The lowest precision this hardware runs natively."""
        return self.native_precisions[-1]

    def peak_flops(self, precision: str) -> float:
        """Dense peak at `precision` [FLOP/s]; raises HardwareError when not native."""
        p = normalize_precision(precision, self)
        return float(getattr(self.dense_tflops, p)) * 1e12

    @property
    def hbm_bytes(self) -> float:
        return self.hbm_gb_usable * 1e9

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.hbm_bandwidth_tb_per_s * 1e12

    @property
    def scaleup_bytes_per_s(self) -> float:
        return self.scaleup_gb_per_s * 1e9

    @property
    def scaleout_bytes_per_s(self) -> float:
        return self.scaleout_gbit_per_s * 1e9 / 8.0


def normalize_precision(precision: str, hardware: Hardware | None = None) -> str:
    """Canonical precision name; with `hardware`, also check that it runs it natively."""
    p = PRECISION_ALIASES.get(str(precision).strip().lower(), str(precision).strip().lower())
    if p not in PRECISIONS:
        raise HardwareError(
            f"precision {precision!r} is unknown; expected one of {', '.join(PRECISIONS)} "
            f"(aliases: {', '.join(sorted(PRECISION_ALIASES))})"
        )
    if hardware is not None and p not in hardware.native_precisions:
        raise HardwareError(
            f"hardware {hardware.key!r} has no native {p.upper()} support; it runs "
            f"{', '.join(x.upper() for x in hardware.native_precisions)}"
        )
    return p


def _catalog_path(path: str | Path | None) -> Path:
    return Path(path) if path is not None else models_dir() / "hardware.toml"


def load_hardware_catalog(path: str | Path | None = None) -> dict[str, Hardware]:
    """All hardware entries of a catalog file (default models/hardware.toml), keyed by name."""
    return dict(_load(str(_catalog_path(path))))


@catalog_cache(maxsize=8)
def _load(path: str) -> tuple[tuple[str, Hardware], ...]:
    entries = load_toml_table(
        path, "hardware", lambda key, fields: Hardware(key=key, **fields), HardwareError, "hardware"
    )
    keys = {k for k, _ in entries}
    for key, hw in entries:
        if hw.sibling and hw.sibling not in keys:
            raise HardwareError(
                f"{path}: hardware.{key}.sibling: {hw.sibling!r} is not in the catalog; "
                f"expected one of {', '.join(sorted(keys))}"
            )
    return tuple(entries)


DEFAULT_KEY = "generic-gpu"
"""fleet.hardware when a scenario names none: a label, not a catalog entry."""


def unknown_key_warning(key: str, path: str | Path | None = None) -> str | None:
    """A warning where a scenario's hardware key (fleet.hardware, or a vintage's) is not in the
    catalog, else None.

    Such a key is allowed (a GPU of one's own, with throughput, power and prices given in the
    scenario), but a typo of a catalog key would otherwise pass unnoticed: the warning names
    the value and the nearest catalog keys.
    """
    if key == DEFAULT_KEY:
        return None
    keys = _keys(str(_catalog_path(path)))
    if key in keys:
        return None
    import difflib

    near = difflib.get_close_matches(key, keys, n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(k) for k in near)}?)" if near else ""
    return (
        f"hardware {key!r} is not in the hardware catalog ({_catalog_path(path).name})"
        f"{hint}; a key of one's own is allowed where the scenario gives throughput and power"
    )


def catalog_keys(path: str | Path | None = None) -> tuple[str, ...]:
    """The hardware catalog's keys, in file order, read without building its entries."""
    return tuple(_keys(str(_catalog_path(path))))


@catalog_cache(maxsize=8)
def _keys(path: str) -> list[str]:
    """The catalog's keys, read without building its entries (a projection's check of its
    hardware key should not cost the catalog's validation); an unreadable catalog has none."""
    import tomllib

    try:
        return list(tomllib.loads(Path(path).read_text(encoding="utf-8")).get("hardware", {}))
    except (OSError, tomllib.TOMLDecodeError):
        return []


def get_hardware(key: str, path: str | Path | None = None) -> Hardware:
    """One catalog entry; an unknown key raises HardwareError listing the valid ones."""
    catalog = load_hardware_catalog(path)
    if key not in catalog:
        raise HardwareError(
            f"hardware {key!r} is not in the catalog {_catalog_path(path)}; "
            f"expected one of {', '.join(sorted(catalog))}"
        )
    return catalog[key]
