"""Inputs a scenario takes but no deployment has: the bands econ's warnings hold them to, each from
the data econ ships (models/), and the warnings, each naming the slip that most likely made the
figure (a price per token typed per million tokens, a monthly rent typed per hour, a price per MW
typed per kW, a load in W typed in kW, milliseconds typed as seconds).

A figure outside its band may still be right (a market may yet get there), so these are warnings;
what is physically impossible is refused by the scenario models (econ.scenario). Other checks of
the same kind live beside the inputs they read: the rack and hardware catalogs' in
`econ.racks.catalog_warnings`, software gains' in econ.scenario.gain_models (STEPS_WARN_FACTOR).

`input_warnings(batch)` reads a ScenarioBatch's columns, so each row of a sweep or Monte Carlo
run is checked on its own values; econ.engine adds them to every projection's warnings, and
econ.batch those of `rack_size_warnings`. `scenario_warnings(scenario)` gives both, row by row.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from econ.catalog import (
    ACCELERATORS_FILE,
    CLAIMS_FILE,
    RESULTS_FILE,
    V61_FILE,
    benchmarks_dir,
    catalog_cache,
    models_dir,
)
from econ.errors import InputError
from econ.labels import HUGE, compact, plain_number
from econ.scenario.power_models import CBRE_COLO_USD_PER_KW_MONTH

if TYPE_CHECKING:
    from econ.batch import ScenarioBatch
    from econ.scenario import Scenario

HOURS_PER_MONTH = 730.0
"""Hours in an average month, 8,760 / 12 [h]: a monthly GPU rent over it is a price per hour."""

# --- the bands ------------------------------------------------------------------------------------

MIN_PLAUSIBLE_USD_PER_MTOK = 0.01
"""The lowest output-token price taken without a warning [USD per million tokens]: a fourteenth of
the lowest price a ready-made scenario derives (0.1408, a B200 serving gpt-oss-120b that earns the
3-year B200 rental of 3.70 USD/GPU-hour, models/scenarios/gpt-oss-120b-b200.toml) and a
fifty-third of the cost of serving DeepSeek-R1 on H200 (0.53, models/reference_figures.csv). A
price per token (6e-07 for 0.6) or per thousand tokens (0.0006) typed here falls below it."""
MAX_PLAUSIBLE_USD_PER_MTOK = 100.0
"""The highest output-token price taken without a warning [USD per million tokens]: 189 times the
cost of serving DeepSeek-R1 on H200 (0.53, models/reference_figures.csv), 307 times the highest
price a ready-made scenario derives (0.3261, a GB200 earning the 3-year GB200 rental of 4.00
USD/GPU-hour) and ten times the list price of a frontier model's output tokens (GPT-4o, 10.00;
docs/market.md). A price per billion tokens typed here is 1,000 times the price per million."""
MIN_PLAUSIBLE_USD_PER_GPU_HOUR = 0.1
"""The lowest GPU-hour rental price taken without a warning [USD/GPU-hour]: a seventeenth of the
lowest price of the rental index econ ships (1.70, SemiAnalysis's one-year H100 rental, 2025-10,
models/market/rental_index.csv). A price per GPU-minute typed here falls below it."""
MAX_PLAUSIBLE_USD_PER_GPU_HOUR = 100.0
"""The highest GPU-hour rental price taken without a warning [USD/GPU-hour]: over 7 times the
highest price of the rental index econ ships (CCIR's tier-1 GB200 rate, 13.52, 2026-05-13) and 12
times the 2023 peak of H100 rentals (above 8, models/reference_figures.csv); a figure above it is
most likely a price per month, per node of several GPUs or in cents (docs/market.md)."""
MIN_PLAUSIBLE_HARDWARE_USD_PER_GPU = 1_000.0
"""The lowest hardware price per GPU taken without a warning [USD/GPU]: a twenty-fifth of the
lowest GPU price models/reference_figures.csv holds (an H100 at 25,000 USD, Raymond James via Epoch
AI, 2023). A price typed in thousands of USD (3,100 for a 3.1 million USD rack: 43 USD per GPU)
or one GPU's price typed as a system's falls below it."""
MAX_PLAUSIBLE_HARDWARE_USD_PER_GPU = 700_000.0
"""The highest hardware price per GPU taken without a warning [USD/GPU]: ten times the highest
that models/reference_figures.csv gives (a GB200 NVL72 rack at the 5 million USD some quote,
69,444 USD per GPU). A rack's price typed per GPU, a price in cents or one with three zeros too
many (3.1e9 for a 3.1 million USD rack: 43 million USD per GPU) falls above it."""
LIKELY_HARDWARE_USD_PER_GPU = (5_000.0, 100_000.0)
"""Where a slip's reading of a hardware price outside the band must land to be offered as what
was meant [USD/GPU]: a fifth of an H100's 25,000 to 1.44 times the 69,444 per GPU of a 5 million
USD GB200 NVL72 rack (models/reference_figures.csv)."""
COLO_WARN_FACTOR = 10.0
"""How far from CBRE's colocation price (CBRE_COLO_USD_PER_KW_MONTH, 184.06 USD/kW-month) a price
may be before it is warned of [ratio]: 18.41 to 1,840.60 USD/kW-month. CBRE's other figures
econ ships are within 20% of it (North America H2 2025: 194.95; global average 2025-Q1: 217.30;
models/reference_figures.csv); a price per MW-month is 1,000 times, one per W-month a thousandth
and one per kW-year 12 times the price per kW-month."""
CONTRACTED_KW_WARN_FACTOR = 10.0
"""How many times the fleet's full-load IT power a colocation contract may be before it is warned
of [ratio]: a contract below the load is billed at the overage rate and warned of by the engine;
one ten times above it pays for nine idle tenths, or is a figure in W typed in kW (1,000 times)."""
THROUGHPUT_WARN_FACTOR = 3.0
"""How many times the most output tokens/s per GPU of any MLPerf result in econ's catalog on the
same hardware (`best_measured`) a fixed throughput may be before it is warned of [ratio]: the
largest same-hardware gain in the MLPerf history is 3.02x a year apart (STEPS_WARN_FACTOR's
reason). The importers refuse a measured figure above the simulator's speed of light; the
simulator takes half a second to import, too long for every projection."""
LOWEST_BEST_TOKENS_PER_S_PER_GPU = 5_000.0
"""At or below the `best_measured` figure of every hardware (the lowest is MI300X's 6,667; a test
holds it so) [tokens/s/GPU]: a fixed throughput up to THROUGHPUT_WARN_FACTOR times it cannot be
warned of, so it is checked without reading the catalog (some 20 ms of every projection)."""
MAX_PLAUSIBLE_TPOT_P99_S = 1.0
"""The longest p99 time per output token taken without a warning [s]: five times the loosest
TPOT p99 limit of an MLPerf Inference LLM benchmark (200 ms, llama2-70b and mixtral-8x7b Server;
models/benchmarks/mlperf_latency_constraints.csv). 80 typed for 80 ms is 80 s, no limit at all."""
MAX_PLAUSIBLE_TTFT_P99_S = 60.0
"""The longest p99 time to first token taken without a warning [s]: ten times the loosest TTFT p99
limit of an MLPerf Inference LLM benchmark (6,000 ms, llama3.1-405b Server;
models/benchmarks/mlperf_latency_constraints.csv)."""

SLO_BANDS = {
    "ttft": (MAX_PLAUSIBLE_TTFT_P99_S, 6000.0),
    "tpot": (MAX_PLAUSIBLE_TPOT_P99_S, 200.0),
}
"""For each latency metric, the longest limit taken without a warning [s] and the loosest p99
limit of an MLPerf Inference LLM benchmark it is reckoned from [ms]."""

RENTAL_PRICES = (
    "market.contract_usd_per_gpu_hour",
    "market.rental_usd_per_gpu_hour",
    "market.rental_floor_usd_per_gpu_hour",
)
"""The GPU-hour prices held to the rental band (0, their default, is a price not given)."""


# --- the MLPerf catalog's best figure per hardware ------------------------------------------------

_SUFFIX = re.compile(r"-99(\.9)?$")


def _rows(folder: Path, name: str) -> list[dict[str, str]]:
    """The rows of a file of models/benchmarks; InputError naming it where it cannot be read."""
    path = folder / name
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(
            f"{path}: the MLPerf catalog cannot be read ({type(exc).__name__}); expected the "
            "files econ ships in models/benchmarks"
        ) from None


def best_measured() -> dict[str, tuple[float, str]]:
    """The most output tokens/s per GPU of any result in econ's MLPerf catalog, per hardware key
    ("" for any hardware, mapped or not), and what it is ("mixtral-8x7b Offline, v4.1, ...").

    The figures of `econ.benchmarks.load_catalog` (result / GPU count of its tokens/s rows; a
    test holds the two to each other), read with the csv module: a projection checks its
    throughput against them, and `econ project` does not load pandas."""
    return _best_measured(str(benchmarks_dir()))


@catalog_cache(maxsize=4)
def _best_measured(benchmarks: str) -> dict[str, tuple[float, str]]:
    folder = Path(benchmarks)
    table = _rows(folder, ACCELERATORS_FILE)
    keys = {row["accelerator"]: row["hardware_key"] for row in table}
    # a dual-GPU board is one accelerator and two GPUs (load_catalog's gpu_count)
    gpus = {row["accelerator"]: float(row.get("gpus_per_accelerator") or 1) for row in table}
    best: dict[str, tuple[float, str]] = {}
    for name in (RESULTS_FILE, V61_FILE, CLAIMS_FILE):
        for row in _rows(folder, name):
            if row["metric_unit"].lower() != "tokens/s":
                continue
            try:
                count = float(row["accelerator_count"]) * gpus.get(row["accelerator"], 1.0)
                value = float(row["result"]) / count
            except (ValueError, ZeroDivisionError):
                continue
            if not np.isfinite(value) or value <= 0:
                continue
            family = row.get("benchmark_family") or _SUFFIX.sub("", row["benchmark"])
            what = f"{family} {row['scenario']}, {row['round']}, {row['submitter']}"
            for key in {keys.get(row["accelerator"], ""), ""}:
                if value > best.get(key, (0.0, ""))[0]:
                    best[key] = (value, what)
    return best


def reference_keys() -> tuple[str, ...]:
    """The hardware catalog's keys (models/hardware.toml) after "", any hardware: a fixed
    throughput's code into them is the extra "throughput.catalog_reference" of a ScenarioBatch
    (0 for a key outside the
    catalog), read without the MLPerf catalog, which is read only for a figure that may be
    warned of (LOWEST_BEST_TOKENS_PER_S_PER_GPU)."""
    from econ.hardware import catalog_keys

    return ("", *catalog_keys())


def reference_code(hardware: str) -> int:
    """`hardware`'s code into `reference_keys` (0, any hardware, for a key outside the catalog)."""
    keys = reference_keys()
    return keys.index(hardware) if hardware in keys else 0


def reference(hardware: str) -> tuple[float, str, str]:
    """The MLPerf figure a fixed throughput on `hardware` is held to: (tokens/s per GPU, what it
    is, the hardware it was measured on: `hardware`, or "" for the catalog's best on any
    hardware where `hardware` has no MLPerf result)."""
    found = best_measured()
    key = hardware if hardware in found else ""
    return (*found[key], key)


# --- the warnings ---------------------------------------------------------------------------------


def _figure(value: float) -> str:
    """A figure as given (`plain_number`), or in exponent form from HUGE on: a typo's 1e23
    tokens/s is read by no one digit by digit, and the app's tiles and captions show none so."""
    return compact(value) if abs(value) >= HUGE else plain_number(value)


def _times(ratio: float) -> str:
    """How many times: 241.4, 4,000.0, 6.085e+18."""
    return compact(ratio) if ratio >= HUGE else f"{ratio:,.1f}"


def _slips(value: float, low: float, high: float, unit: str, readings) -> str:
    """The readings (what, factor, note) of `value` that put it inside [low, high], in words:
    "a price per month (2 USD/GPU-hour at 730 hours a month) or in cents (14.6 USD/GPU-hour)"."""
    return " or ".join(
        f"{what} ({_figure(value * factor)} {unit}{note})"
        for what, factor, note in readings
        if low <= value * factor <= high
    )


def token_price_message(value: float) -> str:
    low, high = MIN_PLAUSIBLE_USD_PER_MTOK, MAX_PLAUSIBLE_USD_PER_MTOK
    if value < low:
        side = f"below {low:g}, a fourteenth of the lowest price a ready-made scenario derives"
        readings = (("a price per token", 1e6, ""), ("a price per thousand tokens", 1e3, ""))
    else:
        side = (
            f"above {high:g}, 189 times the cost of serving DeepSeek-R1 on H200 (0.53, "
            "models/reference_figures.csv) and ten times GPT-4o's list price for output tokens "
            "(10.00, OpenAI API pricing)"
        )
        readings = (("a price per billion tokens", 1e-3, ""),)
    slip = _slips(value, low, high, "USD per million", readings)
    return (
        f"market.price_usd_per_mtok = {_figure(value)} USD per million output tokens is "
        f"{side}; expected a price per million tokens" + (f": was it {slip}?" if slip else "")
    )


def rental_price_message(path: str, value: float) -> str:
    low, high = MIN_PLAUSIBLE_USD_PER_GPU_HOUR, MAX_PLAUSIBLE_USD_PER_GPU_HOUR
    if value < low:
        side = (
            f"below {low:g}, a seventeenth of the lowest price of the rental index econ ships "
            "(1.70, one-year H100)"
        )
        readings = (("a price per GPU-minute", 60.0, ""),)
    else:
        side = (
            f"above {high:g}, over 7 times the highest price of the rental index econ ships "
            "(13.52, CCIR's tier-1 GB200 rate)"
        )
        readings = (
            ("a price per month", 1 / HOURS_PER_MONTH, f" at {HOURS_PER_MONTH:g} hours a month"),
            ("a price per 8-GPU node", 1 / 8, ""),
            ("a price in cents", 1 / 100, ""),
        )
    slip = _slips(value, low, high, "USD/GPU-hour", readings)
    return (
        f"{path} = {_figure(value)} USD/GPU-hour is {side}; expected a price per GPU-hour "
        "in USD" + (f": was it {slip}?" if slip else "")
    )


def hardware_price_message(gpu_price: float, system_price: float, gpus_per_system: int) -> str:
    """The warning of a hardware price per GPU outside the band: `capex.gpu_price_usd` where it
    is given (not NaN), else `capex.system_price_usd` over `gpus_per_system`."""
    from econ.capex import hardware_usd_per_gpu

    low, high = MIN_PLAUSIBLE_HARDWARE_USD_PER_GPU, MAX_PLAUSIBLE_HARDWARE_USD_PER_GPU
    per_system = np.isnan(gpu_price)
    per_gpu = float(hardware_usd_per_gpu(gpu_price, system_price, gpus_per_system))
    if per_gpu < low:
        side = (
            f"below {low:,.0f}, a twenty-fifth of an H100's 25,000 (the lowest GPU price of "
            "models/reference_figures.csv)"
        )
        readings = [("a price in thousands of USD", 1e3, "")]
        if per_system and gpus_per_system > 1:
            readings.append(("one GPU's price typed as the system's", gpus_per_system, ""))
    else:
        side = (
            f"above {high:,.0f}, ten times the highest of models/reference_figures.csv (a GB200 "
            "NVL72 rack at 5 million USD, 69,444 per GPU)"
        )
        readings = [("a price in cents", 1e-2, ""), ("a price with three zeros too many", 1e-3, "")]
        if not per_system:
            readings.append(("the price of an 8-GPU server typed per GPU", 1 / 8, ""))
            readings.append(("the price of a 72-GPU rack typed per GPU", 1 / 72, ""))
    slip = _slips(per_gpu, *LIKELY_HARDWARE_USD_PER_GPU, "USD per GPU", readings)
    given = (
        f"capex.system_price_usd = {_figure(system_price)} USD for a system of "
        f"{gpus_per_system:,} GPUs is {_figure(per_gpu)} USD per GPU,"
        if per_system
        else f"capex.gpu_price_usd = {_figure(gpu_price)} USD per GPU is"
    )
    return f"{given} {side}; expected the hardware's price in USD" + (
        f": was it {slip}?" if slip else ""
    )


def throughput_message(value: float, hardware: str) -> str:
    best, what, measured_on = reference(hardware)
    on = f"on {measured_on}" if measured_on else "on any hardware"
    return (
        f"throughput.tokens_per_s_per_gpu = {_figure(value)} is {_times(value / best)} times "
        f"the most output tokens/s per GPU of any MLPerf result in econ's catalog {on} "
        f"({best:,.0f}: {what}); more than {THROUGHPUT_WARN_FACTOR:g} times is beyond the "
        "largest same-hardware gain in the MLPerf history (3.02x a year apart): expected output "
        "tokens per second per GPU (a system's or a rack's figure divided by its GPUs)"
    )


def slo_message(path: str, value: float, limit: float, loosest_ms: float) -> str:
    return (
        f"{path} = {_figure(value)} s is above {limit:g} s, "
        f"{limit * 1000 / loosest_ms:g} times the loosest p99 limit of an MLPerf Inference LLM "
        f"benchmark ({loosest_ms:,.0f} ms, models/benchmarks/mlperf_latency_constraints.csv): "
        f"the limit is in seconds, so {_figure(value)} s barely limits anything; was it "
        f"{_figure(value)} ms ({_figure(value / 1000)} s)?"
    )


def slo_warning(path: str, metric: str, value_s: float) -> str | None:
    """The warning of a latency limit [s] of `metric` ('ttft' or 'tpot') above its SLO_BANDS
    bound, named `path` (a scenario field or a command's option); None within it."""
    limit, loosest_ms = SLO_BANDS[metric]
    return slo_message(path, value_s, limit, loosest_ms) if value_s > limit else None


def colo_price_message(value: float) -> str:
    low = CBRE_COLO_USD_PER_KW_MONTH / COLO_WARN_FACTOR
    high = CBRE_COLO_USD_PER_KW_MONTH * COLO_WARN_FACTOR
    if value < low:
        side = f"below {low:,.2f}, a tenth of"
        readings = (("a price per W-month", 1e3, ""),)
    else:
        side = f"above {high:,.2f}, ten times"
        readings = (("a price per MW-month", 1e-3, ""), ("a price per kW-year", 1 / 12, ""))
    slip = _slips(value, low, high, "USD/kW-month", readings)
    return (
        f"facility.colo_usd_per_kw_month = {_figure(value)} USD/kW-month is {side} "
        f"CBRE's {CBRE_COLO_USD_PER_KW_MONTH:g} (North America, 250-500 kW, H2 2024); expected a "
        "price per kW of IT capacity per month" + (f": was it {slip}?" if slip else "")
    )


FREE_COLOCATION = (
    "facility.mode is 'colocation' and facility.colo_usd_per_kw_month is 0 (its default): the "
    "racks' hall costs nothing, no rent and no build; expected the price per kW of IT capacity "
    f"per month, e.g. CBRE's {CBRE_COLO_USD_PER_KW_MONTH:g} (North America, 250-500 kW, H2 "
    "2024), or mode 'owned' with the hall's capex"
)


def contracted_message(contracted_kw: float, load_kw: float, several: bool) -> str:
    whose = "the fleet and its vintages, all in service at once" if several else "the fleet"
    in_kw = contracted_kw / 1000
    hint = (
        f"; was it {_figure(contracted_kw)} W ({_figure(in_kw)} kW)?"
        if load_kw / 2 <= in_kw <= CONTRACTED_KW_WARN_FACTOR * load_kw
        else ""
    )
    return (
        f"facility.contracted_kw = {_figure(contracted_kw)} kW is "
        f"{_times(contracted_kw / load_kw)} times the full-load IT power of {whose} "
        f"({_figure(load_kw)} kW): every contracted kW is billed each month, drawn or not; "
        f"expected the contract in kW{hint}"
    )


def _first_rows(b: ScenarioBatch) -> np.ndarray:
    return np.flatnonzero(np.r_[True, b.row_scenario[1:] != b.row_scenario[:-1]])


def _outside(values: np.ndarray, low: float, high: float) -> np.ndarray:
    return (values > 0) & ((values < low) | (values > high))


def input_warnings(b: ScenarioBatch) -> tuple[list[list[str]], list[list[str]]]:
    """The warnings of the batch's implausible inputs: (per row: prices, throughput and SLO of a
    fleet or vintage; per scenario: its facility). Flags are computed on whole columns, and only
    the flagged rows' messages are written."""
    from econ.capex import hardware_usd_per_gpu
    from econ.facility import FACILITY_MODES
    from econ.power import it_kw_per_gpu

    rows: list[list[str]] = [[] for _ in range(b.rows)]
    sites: list[list[str]] = [[] for _ in range(b.n)]

    def add(out, mask, message) -> None:
        for r in np.flatnonzero(mask).tolist():
            out[r].append(message(r))

    price = b["market.price_usd_per_mtok"]
    add(
        rows,
        _outside(price, MIN_PLAUSIBLE_USD_PER_MTOK, MAX_PLAUSIBLE_USD_PER_MTOK),
        lambda r: token_price_message(float(price[r])),
    )
    for path in RENTAL_PRICES:
        values = b[path]
        add(
            rows,
            _outside(values, MIN_PLAUSIBLE_USD_PER_GPU_HOUR, MAX_PLAUSIBLE_USD_PER_GPU_HOUR),
            lambda r, path=path, values=values: rental_price_message(path, float(values[r])),
        )
    gpu_price, system_price = b["capex.gpu_price_usd"], b["capex.system_price_usd"]
    per_system = b["capex.gpus_per_system"]
    add(
        rows,
        _outside(
            hardware_usd_per_gpu(gpu_price, system_price, per_system),
            MIN_PLAUSIBLE_HARDWARE_USD_PER_GPU,
            MAX_PLAUSIBLE_HARDWARE_USD_PER_GPU,
        ),
        lambda r: hardware_price_message(
            float(gpu_price[r]), float(system_price[r]), int(per_system[r])
        ),
    )
    code = b.extras.get("throughput.catalog_reference")
    tokens = b["throughput.tokens_per_s_per_gpu"]
    if code is not None and np.any(
        (code >= 0) & (tokens > THROUGHPUT_WARN_FACTOR * LOWEST_BEST_TOKENS_PER_S_PER_GPU)
    ):
        keys = reference_keys()
        best = np.array([reference(k)[0] for k in keys])
        fixed = code >= 0
        limit = np.where(fixed, best[np.where(fixed, code, 0)], np.inf)
        add(
            rows,
            tokens > THROUGHPUT_WARN_FACTOR * limit,
            lambda r: throughput_message(float(tokens[r]), keys[int(code[r])]),
        )
    for metric in ("tpot", "ttft"):
        path = f"throughput.slo.{metric}_p99_s"
        values = b[path]
        add(
            rows,
            values > SLO_BANDS[metric][0],
            lambda r, p=path, m=metric, v=values: slo_warning(p, m, float(v[r])),
        )

    first = _first_rows(b)
    colocation = b["facility.mode"][first] == FACILITY_MODES.index("colocation")
    colo = b["facility.colo_usd_per_kw_month"][first]
    add(sites, colocation & (colo == 0), lambda i: FREE_COLOCATION)
    low = CBRE_COLO_USD_PER_KW_MONTH / COLO_WARN_FACTOR
    high = CBRE_COLO_USD_PER_KW_MONTH * COLO_WARN_FACTOR
    add(sites, colocation & _outside(colo, low, high), lambda i: colo_price_message(float(colo[i])))
    contracted = b["facility.contracted_kw"][first]
    if np.isfinite(contracted).any():
        per_gpu = it_kw_per_gpu(
            b["power.kw_per_gpu"],
            b["power.kw_per_gpu_definition"],
            b["power.host_overhead_share"],
            b["power.pue"],
        )
        load = np.add.reduceat(b["fleet.gpu_count"] * per_gpu, first)
        several = np.diff(np.r_[first, b.rows]) > 1
        add(
            sites,
            colocation & (contracted > CONTRACTED_KW_WARN_FACTOR * load),
            lambda i: contracted_message(float(contracted[i]), float(load[i]), bool(several[i])),
        )
    return rows, sites


def scenario_warnings(scenario: Scenario) -> tuple[tuple[str, ...], ...]:
    """For each row of `scenario.expand()`, the warnings of this module a projection of the
    scenario gives it (those of its facility on the first row, the fleet's): for a caller that
    lists a scenario's warnings row by row without projecting it, as `econ validate` does."""
    from econ.batch import ScenarioBatch

    rows, (site,) = input_warnings(ScenarioBatch.from_scenarios(scenario))
    sizes = rack_size_warnings(scenario)
    fits = rack_fit_warnings(scenario)
    return tuple(
        (*(site if r == 0 else ()), *found, *((size,) if size else ()), *fit)
        for r, (found, size, fit) in enumerate(zip(rows, sizes, fits, strict=True))
    )


def validate_warnings(scenario: Scenario) -> tuple[tuple[str, str], ...]:
    """What `econ validate` warns of a scenario's inputs, as (whose, warning): whose is the
    scenario's name for a warning of the whole scenario (a DSCR covenant floor below 1.0x), else
    the name of the row of `scenario.expand()` it is of (its fleet, a vintage). Per row: a
    figure per GPU a vintage borrows from the fleet (`Scenario.borrowed_figures`), what the
    catalogs contradict (`econ.racks.catalog_warnings`), depreciation inputs without effect and
    this module's (`scenario_warnings`). `econ refresh` gives those of the case it picks."""
    from econ.financing import dscr_floor_warning
    from econ.racks import catalog_warnings
    from econ.scenario.depreciation_models import no_effect_warnings

    low_floor = dscr_floor_warning(scenario.financing.covenants.dscr_floor)
    out = [(scenario.name, low_floor)] if low_floor else []
    rows = scenario.expand()
    unused = no_effect_warnings([row.depreciation for row in rows])
    slips = scenario_warnings(scenario)
    for row, borrowed, no_effect, slip in zip(
        rows, scenario.borrowed_figures(), unused, slips, strict=True
    ):
        found = catalog_warnings(
            row.fleet.hardware, row.facility.rack_cooling, row.fleet.gpu_count, row.power
        )
        found = (*((borrowed,) if borrowed else ()), *found, *no_effect, *slip)
        out += [(row.name, warning) for warning in found]
    return tuple(out)


def rack_fit_warnings(scenario: Scenario) -> tuple[tuple[str, ...], ...]:
    """For each row of `scenario.expand()`, what its fleet.gpus_per_rack contradicts in the rack
    catalog, with the bounds and warnings of `econ size` (econ.racks.rack_fit_warnings): a
    rack-scale system split or doubled, part of a system, more systems than a rack holds, an
    air-cooled rack above the densest air cools."""
    from econ.racks import load_racks
    from econ.racks import rack_fit_warnings as fit

    catalog = load_racks(models_dir() / "racks.toml")
    # a row whose size is not given has `rack_size_warnings`' word on it, the catalog's size
    return tuple(
        ()
        if not_given
        else fit(
            row.fleet.hardware,
            row.fleet.gpus_per_rack,
            row.facility.hall_cooling,
            row.facility.hall_max_kw_per_rack,
            catalog,
            row.facility.rack_cooling,
        )
        for row, not_given in zip(scenario.expand(), rack_size_warnings(scenario), strict=True)
    )


def rack_size_warnings(scenario: Scenario) -> tuple[str | None, ...]:
    """For each row of `scenario.expand()`, a warning where fleet.gpus_per_rack is not given for
    the row's hardware (the default 72, or a vintage on other hardware taking the scenario's) and
    the rack catalog (models/racks.toml) holds another number of that hardware's GPUs per rack:
    racks, revenue per rack-year and fleet.racks would count racks of the wrong size; else None.

    A warning rather than the catalog's figure as the default: a file that gives fleet.racks
    without gpus_per_rack would then buy other GPUs than it does today, without a word."""
    from econ.racks import load_racks

    racks = load_racks(models_dir() / "racks.toml").racks
    own = scenario.fleet
    own_given = "gpus_per_rack" in own.model_fields_set
    out: list[str | None] = []
    for i, row in enumerate(scenario.expand()):
        if i == 0:
            given, source = own_given, "the default"
        else:
            vintage = scenario.vintages[i - 1].fleet
            same = vintage.get("hardware", own.hardware) == own.hardware
            given = "gpus_per_rack" in vintage or (same and own_given)
            source = f"the scenario's fleet ({own.hardware})" if own_given else "the default"
        rack = racks.get(row.fleet.hardware)
        per_rack = row.fleet.gpus_per_rack
        if given or rack is None or rack.gpus_per_rack == per_rack:
            out.append(None)
            continue
        racks_given = (
            f"; fleet.racks = {row.fleet.racks:,} buys {row.fleet.gpu_count:,} GPUs at {per_rack} "
            f"a rack, {row.fleet.racks * rack.gpus_per_rack:,} in the catalog's racks"
            if row.fleet.racks is not None
            else ""
        )
        out.append(
            f"fleet.gpus_per_rack is not given: {per_rack} GPUs per rack from {source}, but "
            f"models/racks.toml gives {row.fleet.hardware} racks of {rack.gpus_per_rack} GPUs "
            f"({rack.name}); racks and revenue per rack-year count racks of {per_rack}"
            f"{racks_given}; expected fleet.gpus_per_rack = {rack.gpus_per_rack} (or the racks "
            "of this site)"
        )
    return tuple(out)
