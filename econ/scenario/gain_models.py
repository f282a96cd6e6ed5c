"""Pydantic section of a scenario's [throughput] table: tokens/s per GPU and its gain trajectory.

`Throughput` is a drop-in superset of the section in models.py (today's fields keep their names and
meaning: tokens_per_s_per_gpu, gain_rate_annual, steps [{month, gain, label}], source) and adds the
trajectory models of econ.throughput.trajectory: a decaying compound rate, a logistic approach to a
speed-of-light ceiling, a table (e.g. fitted to benchmark history), rollout ramps for steps and a
cap at the ceiling. `compile_throughput` turns sections into the padded arrays the engine needs.

A scenario file:

    [throughput]
    tokens_per_s_per_gpu = 4867.7
    trajectory = "logistic"
    gain_rate_annual = 0.4
    ceiling_tokens_per_s_per_gpu = 9000.0
    steps = [{ month = 5, gain = 0.198, label = "v6.1 serving stack", ramp_months = 2 }]
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from econ.scenario.errors import BoundError
from econ.scenario.section import Section as _Section
from econ.scenario.section import exactly_one

TRAJECTORIES = ("compound", "logistic", "table")
"""Trajectory choices; their order is the integer code in a ScenarioBatch column (as in
econ.throughput.trajectory.TRAJECTORIES)."""

MAX_GAIN_RATE_ANNUAL = 4.0
"""The largest compound annual software gain a scenario takes (5x a year) [fraction/year]. In the
MLPerf Inference history shipped in models/benchmarks (v4.0 to v6.1, closed division, the best
tokens/s per GPU of each round), the largest gain on the same silicon a year apart is 3.02x:
DeepSeek-R1 Server on B200-SXM-180GB, 2,324 tokens/s per GPU in v5.1 (2025-09-09, NVIDIA) to
7,015 in v6.1 (2026-09-16, CoreWeave), the benchmark's first year (GB300 2.93x, GB200 2.55x);
fitted over all their rounds (`throughput.history`), no platform exceeds +204% a year. 5x a year
is above all of them, and a rate typed in percent (15 for 15%) far above. (The half-year jump
of v5.1 to v6.0 on B200, 2.78x, annualizes to +524%: a one-off step, which `throughput.steps`
gives as such.)"""
GAIN_RATE_WARN_ANNUAL = 1.0
"""A compound annual gain above which a projection warns (more than doubling every year):
only DeepSeek-R1 Server on Blackwell in its first year reached it in the MLPerf history."""

STEPS_WARN_FACTOR = 3.0
"""A compound factor of a scenario's throughput steps above which a projection warns: the
largest gain on the same silicon in the MLPerf history (models/benchmarks) is 3.02x a year apart
and its largest one-off jump 2.78x, half a year apart (v5.1 to v6.0 on B200); a step of 1e6 (a
percentage typed as a fraction's number) is far above."""

MAX_STEP_GAIN = 100.0
"""The largest gain of one throughput step (+10,000%, 101 times the throughput before it)
[fraction]. The largest one-off jump in the MLPerf history is 2.78x (see STEPS_WARN_FACTOR,
which warns from 3x); a bound 36 times above it still takes any percentage typed as a fraction's
number (19.8 for +19.8% is +1,980%, warned), and keeps the projection's figures finite: a step
of +1e308% made every figure n/a."""
MAX_STEP_LABEL_CHARS = 200
"""Characters of a step's label (a release name, "v6.1 serving stack"): it heads `econ gains`
and a memo's table, where 100,000 characters are no label."""

STEP_PADDING_MONTH = 10**6
"""Month held by unused step slots (beyond any horizon), as in econ.batch."""

NEUTRAL_GAINS: Mapping[str, Any] = MappingProxyType(
    {
        "trajectory": "compound",
        "gain_rate_annual": 0.0,
        "rate_decay_annual": 0.0,
        "table": (),
        "steps": (),
        "history": None,
    }
)
"""[throughput] fields that, set to these values, remove every software gain: no growth, no
table, no steps, and no MLPerf history (which sets the compound rate; None: not given). The
ceiling stays: at or above today's throughput, it caps nothing without gains."""


def months_after(start: dt.date, date: dt.date) -> int:
    """Whole months from the month of `start` (month 0) to the month of `date`; days are ignored."""
    return (date.year - start.year) * 12 + (date.month - start.month)


class GainStep(_Section):
    """A dated step change in throughput per GPU, e.g. a serving-stack release."""

    month: int = Field(
        ..., ge=1, description="Month the gain takes effect (1 = first service month) [month]"
    )
    gain: float = Field(
        ...,
        gt=-1.0,
        le=MAX_STEP_GAIN,
        description="Relative change in tokens/s per GPU at full rollout, e.g. 0.198 for +19.8%; "
        "above -1 (-100%) and at most 100 (+10,000%) [fraction]",
    )
    label: str = Field(
        "",
        max_length=MAX_STEP_LABEL_CHARS,
        description="What the step is, e.g. a software release (at most 200 characters)",
    )
    ramp_months: int = Field(
        0,
        ge=0,
        le=600,
        description="Months for the release to reach the whole fleet, linearly from `month`; "
        "0 or 1 = all GPUs at once [months]",
    )


class TrajectoryPoint(_Section):
    """A point of a tabulated trajectory: throughput relative to tokens_per_s_per_gpu at a time."""

    month: int | None = Field(
        None, ge=-600, le=1200, description="Month of the point (0 = purchase month) [month]"
    )
    date: dt.date | None = Field(
        None, description="Date of the point instead of `month` (day ignored)"
    )
    multiplier: float = Field(
        ..., gt=0, description="Tokens/s per GPU over tokens_per_s_per_gpu at this time [ratio]"
    )

    @model_validator(mode="after")
    def _month_or_date(self) -> TrajectoryPoint:
        if (self.month is None) == (self.date is None):
            raise ValueError(exactly_one({"month": self.month, "date": self.date}))
        return self


def check_time_order(points: Sequence, what: str) -> None:
    """Points share one time key (month or date) and are strictly increasing in it."""
    keys = {"month" if p.month is not None else "date" for p in points}
    if len(keys) > 1:
        raise ValueError(f"{what} mixes months and dates; expected one kind for every point")
    times = [p.month if p.month is not None else p.date for p in points]
    for i in range(1, len(times)):
        if not times[i] > times[i - 1]:
            raise ValueError(
                f"{what} must be in strictly increasing time order, got {times[i - 1]} then "
                f"{times[i]} at points {i - 1} and {i}"
            )


class MeasuredThroughput(_Section):
    """Throughput from a measured curve: a benchmark output file or an MLPerf catalog row."""

    curve: str = Field(
        "",
        description="Benchmark output file (vLLM, SGLang, GenAI-Perf, AIPerf, MLPerf, InferenceX, "
        "trtllm-bench or generic CSV), relative to the scenario file",
    )
    format: str = Field("auto", description="Format of the file; auto-detected by default")
    gpus: int | None = Field(None, gt=0, description="GPUs that served the run [GPUs]")
    workload: str = Field("", description="Workload to pick when the file holds several")
    catalog_id: str = Field("", description="MLPerf catalog row id, e.g. v6.0-6f6e7f09")
    catalog_query: dict[str, str | int | float] = Field(
        {},
        description="MLPerf catalog filter (model, accelerator, submitter, round, scenario, ...)",
    )

    @model_validator(mode="after")
    def _one_source(self) -> MeasuredThroughput:
        given = {n: getattr(self, n) or None for n in ("curve", "catalog_id", "catalog_query")}
        if sum(value is not None for value in given.values()) != 1:
            raise ValueError(exactly_one(given))
        return self


class SimulatedThroughput(_Section):
    """Throughput from the calibrated roofline simulator (econ.throughput.simulator)."""

    model: str = Field(
        ..., min_length=1, description="Model key, e.g. deepseek-r1 (econ llms list)"
    )
    hardware: str = Field("", description="Hardware key; default: fleet.hardware")
    precision: str = Field(
        "", description="Weight precision; default: the hardware's lowest native"
    )
    mlperf_scenario: Literal["", "offline", "server", "interactive"] = Field(
        "", description="Use MLPerf's lengths and latency limits for this model and scenario"
    )
    input_tokens: float | None = Field(None, gt=0, description="Input tokens per request [tokens]")
    output_tokens: float | None = Field(
        None, gt=0, description="Output tokens per request [tokens]"
    )

    @model_validator(mode="after")
    def _lengths(self) -> SimulatedThroughput:
        if not self.mlperf_scenario and (self.input_tokens is None or self.output_tokens is None):
            raise ValueError(
                "give input_tokens and output_tokens, or mlperf_scenario to use MLPerf's lengths"
            )
        return self


class HistoryTrajectory(_Section):
    """A compound software-gain rate fitted to a platform's MLPerf history (econ.throughput.history)."""

    model: str = Field(..., min_length=1, description="MLPerf benchmark family, e.g. deepseek-r1")
    scenario: Literal["Server", "Offline", "Interactive"] = Field(
        "Server", description="MLPerf scenario"
    )
    hardware: str = Field("", description="Hardware key; default: fleet.hardware")
    submitter: str = Field(
        "", description="Only this submitter's rows; default: the best per round"
    )


class ServiceLevel(_Section):
    """Latency limits the operating point must meet (measured or simulated throughput)."""

    ttft_p99_s: float | None = Field(None, gt=0, description="p99 time to first token [s]")
    tpot_p99_s: float | None = Field(None, gt=0, description="p99 time per output token [s]")
    min_tokens_per_s_per_user: float | None = Field(
        None, gt=0, description="Minimum tokens/s seen by one request [tokens/s]"
    )
    latency_limits: dict[str, float] = Field(
        {}, description="Other limits by curve column, e.g. ttft_s_p95 = 5.77 [s]"
    )


class Throughput(_Section):
    """Tokens/s per GPU while serving, and how software changes it on the installed hardware.

    The figure is `tokens_per_s_per_gpu`, or, when `measured` or `simulated` is given, the
    operating point of that curve under `slo` (which then replaces `tokens_per_s_per_gpu`).

    g_m = min(C, base_m * prod_k steps_k,m), tokens/s_m = tokens_per_s_per_gpu * g_m, where base is
    the trajectory (compound with optional rate decay, logistic to the ceiling, or a table).
    """

    tokens_per_s_per_gpu: float = Field(
        1000.0, gt=0, description="Output tokens per second per GPU while serving [tokens/s/GPU]"
    )
    trajectory: Literal["compound", "logistic", "table"] = Field(
        "compound",
        description="Base trajectory: compound (rate, optionally decaying), logistic (rate "
        "levelling off at the ceiling) or table (multipliers by month or date)",
    )
    gain_rate_annual: float = Field(
        0.0,
        gt=-1.0,
        le=MAX_GAIN_RATE_ANNUAL,
        description="Compound annual software gain in tokens/s per GPU from month 1; for the "
        "logistic trajectory, its initial rate. At most 4 (5x a year): the largest same-hardware "
        "gain a year apart in the MLPerf Inference history shipped in models/benchmarks is 3.0x "
        "(DeepSeek-R1 Server on B200, v5.1 to v6.1), so a rate typed in percent (15 for 15%) is "
        "refused; above 1 (doubling every year) the projection warns [fraction/year]",
    )
    rate_decay_annual: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        description="Share of the compound gain rate lost each year (Gompertz curve); 0 = the rate "
        "holds [fraction/year]",
    )
    ceiling_tokens_per_s_per_gpu: float | None = Field(
        None,
        gt=0,
        description="Ceiling on tokens/s per GPU, e.g. the simulator's speed of light; caps every "
        "trajectory and is the logistic's asymptote; none = no cap [tokens/s/GPU]",
    )
    table: tuple[TrajectoryPoint, ...] = Field(
        (),
        description="Trajectory as (month or date, multiplier) points, e.g. fitted to benchmark "
        "history; interpolated monotonically in log space, held flat outside",
    )
    steps: tuple[GainStep, ...] = Field(
        (), description="Dated step changes in tokens/s per GPU, in month order"
    )
    source: str = Field("", description="Where the throughput figure comes from")
    input_tokens_per_output_token: float | None = Field(
        None,
        ge=0,
        le=100_000,
        description="Input (prompt) tokens served per output token, e.g. the workload's mean "
        "input length over its mean output length; default: from the measured curve's input "
        "and output token rates or lengths, or the simulator's input and output lengths [ratio]",
    )
    measured: MeasuredThroughput | None = Field(
        None, description="Take the throughput from a measured curve at the SLO"
    )
    simulated: SimulatedThroughput | None = Field(
        None, description="Take the throughput from the simulator at the SLO"
    )
    slo: ServiceLevel = Field(ServiceLevel(), description="Latency limits of the operating point")
    history: HistoryTrajectory | None = Field(
        None,
        description="Take gain_rate_annual from the platform's MLPerf history (compound trajectory)",
    )

    @field_validator("gain_rate_annual", mode="before")
    @classmethod
    def _rate_is_a_fraction(cls, value):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and math.isfinite(value) and value > MAX_GAIN_RATE_ANNUAL:
            history = "beyond any same-hardware gain a year apart in the MLPerf history"
            raise BoundError(
                f"a compound gain of {value:g} a year ({value + 1:g}x) is above "
                f"{MAX_GAIN_RATE_ANNUAL:g} ({MAX_GAIN_RATE_ANNUAL + 1:g}x a year), {history} "
                f"(3.0x); expected a fraction ({value / 100:g} for {value:g}%)",
                ("le", MAX_GAIN_RATE_ANNUAL),
                f"{MAX_GAIN_RATE_ANNUAL + 1:g}x a year, {history}, 3.0x",
            )
        return value

    @field_validator("steps")
    @classmethod
    def _steps_in_order(cls, steps: tuple[GainStep, ...]) -> tuple[GainStep, ...]:
        for i in range(1, len(steps)):
            if steps[i].month < steps[i - 1].month:  # (the first one: 100,000 steps can be given)
                raise ValueError(
                    f"steps must be in month order; step {i + 1} is month {steps[i].month}, "
                    f"after month {steps[i - 1].month}"
                )
        return steps

    @field_validator("table")
    @classmethod
    def _table_in_order(cls, table: tuple[TrajectoryPoint, ...]) -> tuple[TrajectoryPoint, ...]:
        check_time_order(table, "table")
        return table

    @model_validator(mode="after")
    def _consistent(self) -> Throughput:
        if self.measured is not None and self.simulated is not None:
            raise ValueError("give measured or simulated throughput, not both")
        if self.history is not None and (
            self.gain_rate_annual != 0 or self.trajectory != "compound"
        ):
            raise ValueError(
                "history sets the compound gain rate; expected trajectory 'compound' and no "
                f"gain_rate_annual, got {self.trajectory!r} and {self.gain_rate_annual}"
            )
        ceiling = self.ceiling_tokens_per_s_per_gpu
        if ceiling is not None and ceiling < self.tokens_per_s_per_gpu:
            raise ValueError(
                f"ceiling_tokens_per_s_per_gpu is {ceiling:g}, below today's tokens_per_s_per_gpu "
                f"of {self.tokens_per_s_per_gpu:g}; expected a ceiling at or above today's "
                "throughput"
            )
        if self.trajectory == "logistic":
            if ceiling is None:
                raise ValueError(
                    "trajectory is 'logistic' but ceiling_tokens_per_s_per_gpu is not set; "
                    "expected the ceiling the throughput levels off at"
                )
            if self.gain_rate_annual < 0:
                raise ValueError(
                    f"trajectory is 'logistic' with gain_rate_annual {self.gain_rate_annual}; "
                    "expected an initial rate of 0 or more"
                )
        if self.rate_decay_annual > 0 and self.trajectory != "compound":
            raise ValueError(
                f"rate_decay_annual is {self.rate_decay_annual} with trajectory "
                f"'{self.trajectory}'; rate decay applies to the compound trajectory only"
            )
        if self.trajectory == "table":
            if not self.table:
                raise ValueError(
                    "trajectory is 'table' but table is empty; expected (month or date, "
                    "multiplier) points"
                )
            if self.gain_rate_annual != 0:
                raise ValueError(
                    f"trajectory is 'table' with gain_rate_annual {self.gain_rate_annual}; the "
                    "table gives the growth, expected gain_rate_annual = 0"
                )
        elif self.table:
            raise ValueError(
                f"table has {len(self.table)} points but trajectory is '{self.trajectory}'; "
                "set trajectory = 'table' to use it"
            )
        return self

    @property
    def ceiling_ratio(self) -> float:
        """Ceiling over today's tokens/s per GPU; inf when there is none [ratio]."""
        if self.ceiling_tokens_per_s_per_gpu is None:
            return math.inf
        return self.ceiling_tokens_per_s_per_gpu / self.tokens_per_s_per_gpu

    def without_gains(self) -> Throughput:
        """The same section with no software gains (NEUTRAL_GAINS): compound at 0, no steps, no
        table, no MLPerf history."""
        return self.model_copy(update=dict(NEUTRAL_GAINS))

    def horizon_problems(self, horizon_months: int, start_date: dt.date | None = None) -> list[str]:
        """Messages for inputs that do not fit a horizon (for the Scenario-level validator).

        Steps released after the horizon are errors (they would silently do nothing). A table
        whose points all lie after the horizon is too, when the start date is known.
        """
        problems = []
        horizon = f"{horizon_months} month{'s' if horizon_months != 1 else ''}"
        months = f"a month from 1 to {horizon_months}" if horizon_months > 1 else "month 1"
        for i, step in enumerate(self.steps):
            if step.month > horizon_months:
                problems.append(
                    f"throughput.steps[{i}] at month {step.month} is beyond the horizon of "
                    f"{horizon}; expected {months}"
                )
        if self.table and start_date is not None:
            first = table_months(self.table, start_date)[0]
            if first > horizon_months:
                problems.append(
                    f"throughput.table starts at month {first}, beyond the horizon of "
                    f"{horizon}; expected points within the projection"
                )
        return problems


def table_months(points: Sequence, start_date: dt.date) -> list[int]:
    """Month index (0 = month of start_date) of each point given by month or by date."""
    return [p.month if p.month is not None else months_after(start_date, p.date) for p in points]


def compile_throughput(
    sections: Sequence[Throughput], start_dates: Sequence[dt.date]
) -> dict[str, np.ndarray]:
    """Arrays the engine needs beyond the scalar batch columns, one row per scenario.

    Returns
    -------
    dict of arrays:
        trajectory : int8 (n,)  code into TRAJECTORIES
        ceiling_ratio : float (n,)  ceiling / tokens_per_s_per_gpu, inf when none [ratio]
        step_months : int64 (n, k)  padded with STEP_PADDING_MONTH [month]
        step_gains : float (n, k)  padded with 0 [fraction]
        step_ramp_months : float (n, k)  padded with 0 [months]
        table_months : float (n, k2)  padded with NaN [month]
        table_multipliers : float (n, k2)  padded with NaN [ratio]
    """
    n = len(sections)
    if n != len(start_dates):
        raise ValueError(
            f"got {n} throughput sections and {len(start_dates)} start dates; expected one each"
        )
    k = max([1, *(len(s.steps) for s in sections)])
    k2 = max([1, *(len(s.table) for s in sections)])
    out = {
        "trajectory": np.array([TRAJECTORIES.index(s.trajectory) for s in sections], np.int8),
        "ceiling_ratio": np.array([s.ceiling_ratio for s in sections], dtype=float),
        "step_months": np.full((n, k), STEP_PADDING_MONTH, dtype=np.int64),
        "step_gains": np.zeros((n, k)),
        "step_ramp_months": np.zeros((n, k)),
        "table_months": np.full((n, k2), np.nan),
        "table_multipliers": np.full((n, k2), np.nan),
    }
    for row, (section, start) in enumerate(zip(sections, start_dates, strict=True)):
        for j, step in enumerate(section.steps):  # compiling inputs, not projecting
            out["step_months"][row, j] = step.month
            out["step_gains"][row, j] = step.gain
            out["step_ramp_months"][row, j] = step.ramp_months
        if section.table:
            length = len(section.table)
            out["table_months"][row, :length] = table_months(section.table, start)
            out["table_multipliers"][row, :length] = [p.multiplier for p in section.table]
    return out


__all__ = [
    "NEUTRAL_GAINS",
    "STEP_PADDING_MONTH",
    "TRAJECTORIES",
    "GainStep",
    "Throughput",
    "TrajectoryPoint",
    "compile_throughput",
    "months_after",
    "table_months",
]
