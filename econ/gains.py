"""What a software throughput gain is worth: value, break-evens and the NPV bridge.

For a base scenario and a gain trajectory (the same scenario with its gains, or with dated steps
added), this module reports the change in levelized cost per token, NPV per GPU, per rack and for the
fleet, IRR, payback, EBITDA by year, the GPUs not bought to serve the same tokens (capex avoided),
a bridge of the NPV change by driver that sums to it, and two break-evens solved by vectorized
bisection over a ScenarioBatch: the annual gain rate that holds margin under a price deflation, and
the gain a given service life needs to earn its cost of capital.

It uses only the public engine API (`econ.project` on Scenarios and ScenarioBatches, scenario
overrides, `ScenarioBatch.repeat`), so it values whatever the engine models.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from econ import strict_json
from econ.batch import ScenarioBatch
from econ.bounds import within_bounds
from econ.engine import CODED_METRICS, Projection, project
from econ.errors import InputError
from econ.index_files import DATE_EXPECTED, FIRST_DATE, LAST_DATE, cell_number, index_date
from econ.market import token_selling_share
from econ.scenario import Scenario, apply_overrides, scenario_to_dict, validate_dict
from econ.scenario.gain_models import MAX_STEP_LABEL_CHARS, NEUTRAL_GAINS, GainStep
from econ.scenario.section import ONE_LINE, field_bounds
from econ.text import clipped, control_character, control_kind, shortened
from econ.units import MONTHS_PER_YEAR, monthly_rate

COMPARED_METRICS = (
    "lcot_usd_per_mtok",
    "breakeven_price_usd_per_mtok",
    "tokens_total",
    "revenue_usd_total",
    "ebitda_usd_total",
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "min_dscr",
    "debt_usd_total",
    "revenue_usd_per_mw_year",
)
"""Summary metrics shown without and with the gains, side by side (CLI and app)."""


class GainsError(InputError):
    """Invalid input to a gains analysis (a step that cannot be read, a bad bracket, ...)."""


BRIDGE_LINES: tuple[tuple[str, str, float], ...] = (
    ("revenue", "revenue_usd", 1.0),
    ("power", "power_usd", -1.0),
    ("facility", "facility_usd", -1.0),
    ("opex", "opex_usd", -1.0),
    ("capex", "capex_usd", -1.0),
    ("disposal", "disposal_usd", 1.0),
    ("tax", "tax_usd", -1.0),
)
"""Drivers of the NPV bridge: (driver, monthly line, sign in the project cash flow). The project
cash flow is exactly revenue - power - facility - opex - capex + disposal - tax (docs/methodology.md),
so the drivers' present values add up to the NPV change."""

REVENUE_SPLIT: tuple[tuple[str, str], ...] = (
    ("token revenue", "token_revenue_usd"),
    ("contract revenue", "contract_revenue_usd"),
    ("spot rental revenue", "spot_revenue_usd"),
)
"""When the engine reports revenue by source in these lines, the bridge splits revenue by them."""

BRIDGE_TOLERANCE = 1e-9
"""Largest gap allowed between the bridge's sum and the NPV change, relative to the sum of the
drivers' absolute present values (floating-point rounding only)."""


OTHER_DRIVER = "other cash-flow lines"
"""Bridge entry for an NPV change that no known line explains; present only when material."""

FINANCING_DRIVER = "financing (loan re-sized)"
"""Bridge entry for the NPV change from sizing the loan again on the gain case's cash flow (to a
minimum DSCR, a maximum LTV, or sculpted): the tax its interest saves changes with the debt. The
other drivers then hold the base case's loan (`npv_bridge`'s `held`)."""


# --- building the cases -----------------------------------------------------------------------


def without_gains(scenario: Scenario, name: str | None = None) -> Scenario:
    """The same scenario with no software gains, validated: no steps, no growth, no table and no
    MLPerf history (NEUTRAL_GAINS), in its own [throughput] and in every vintage's.

    A vintage's own gain fields replace the scenario's, so they are dropped (the vintage then
    takes the scenario's, now neutral): a base case that kept them, or the history's fitted rate,
    valued a growing fleet against itself."""
    data = scenario_to_dict(scenario)
    fields = type(scenario.throughput).model_fields
    neutral = {k: v for k, v in NEUTRAL_GAINS.items() if k in fields}
    own = {k: v for k, v in data.get("throughput", {}).items() if k not in neutral}
    data["throughput"] = {**own, **{k: v for k, v in neutral.items() if v is not None}}
    for vintage in data.get("vintages", []):
        for key in neutral:
            vintage.get("throughput", {}).pop(key, None)
    _drop_sources(data, tuple(f"throughput.{k}" for k, v in neutral.items() if v is None))
    data["name"] = name or f"{scenario.name} without gains"
    return validate_dict(data)


def _drop_sources(data: dict, gone: Sequence[str]) -> None:
    """Drop the [sources] entries of the sections removed from `data` (throughput.history.model
    would name no field)."""
    if isinstance(data.get("sources"), dict):
        data["sources"] = {
            path: text
            for path, text in data["sources"].items()
            if not any(path == g or path.startswith(f"{g}.") for g in gone)
        }


RATE_REPLACES = ("table", "history")
"""Continuous gains that leave throughput.gain_rate_annual unused (a table gives the growth
itself, the MLPerf history sets the rate), which a solved annual rate replaces (`rate_case`)."""


def rate_case(scenario: Scenario) -> Scenario:
    """The scenario whose continuous gain a solved compound annual rate replaces: a table
    trajectory or MLPerf history dropped, in its own [throughput] and in every vintage's, so that
    throughput.gain_rate_annual applies to every row; its steps, rate decay, logistic ceiling
    and cap kept. The scenario itself where no row has either.

    Without it every rate tried changed nothing: a table scenario's break-even rates read
    "unreachable" (or "met at the lowest gain"), a history scenario's were refused."""
    rows = scenario.expand()
    if not any(row.throughput.trajectory == "table" or row.throughput.history for row in rows):
        return scenario
    data = scenario_to_dict(scenario)
    vintages = [vintage.get("throughput", {}) for vintage in data.get("vintages", [])]
    for section in [data["throughput"], *vintages]:
        if section.get("trajectory") == "table":
            section["trajectory"] = "compound"
        for key in RATE_REPLACES:
            section.pop(key, None)
    _drop_sources(data, ("throughput.history",))
    return validate_dict(data)


def with_steps(
    scenario: Scenario, steps: Sequence[Mapping[str, Any]], file: str | None = None
) -> Scenario:
    """The scenario with its throughput steps replaced by `steps` ({month, gain, label, ...}).

    The steps replace those of the scenario's own fleet and those a vintage gives of its own
    (`vintage_steps_replaced` says which): a step's month is a month of the projection, so the
    steps reach the GPUs of every vintage in service in their months. A vintage's other gains
    (its rate, table or history) stay."""
    data = apply_overrides(
        scenario_to_dict(scenario), {"throughput.steps": [dict(s) for s in steps]}, file=file
    )
    for vintage in data.get("vintages", []):
        vintage.get("throughput", {}).pop("steps", None)
    return validate_dict(data, file=file)


def vintage_steps_replaced(scenario: Scenario) -> str | None:
    """What `with_steps` replaces besides the scenario's own steps, for a warning: the steps the
    scenario's vintages give of their own, by vintage; None where no vintage gives any."""
    own = [
        f"vintages[{i}] ({clipped(vintage.name)}): {steps_text(row.throughput.steps) or 'no steps'}"
        for i, (vintage, row) in enumerate(
            zip(scenario.vintages, scenario.expand()[1:], strict=True)
        )
        if "steps" in vintage.throughput
    ]
    if not own:
        return None
    return (
        "the steps given replace the steps of every vintage too, and reach each vintage's GPUs "
        f"in service in their months; replaced: {'; '.join(own)}"
    )


def with_throughput(scenario: Scenario, file: str | None = None, **fields: Any) -> Scenario:
    """The scenario with throughput fields replaced, validated.

    Feeds measured and simulated work into a gain case, e.g. a history fit
    (`gain_rate_annual=history.rate_annual, steps=history.scenario_steps(start_date)`) or the
    simulator's ceiling (`ceiling_tokens_per_s_per_gpu=speed_of_light(...)`, where the scenario
    format has it).
    """
    overrides = {f"throughput.{name}": value for name, value in fields.items()}
    return validate_dict(apply_overrides(scenario_to_dict(scenario), overrides, file=file), file)


def has_gains(scenario: Scenario) -> bool:
    """True when the throughput of the scenario's fleet or of any of its vintages changes over
    time (steps, a rate, a table or MLPerf history)."""
    return any(row.throughput != row.throughput.without_gains() for row in scenario.expand())


def vintage_gains(scenario: Scenario) -> list[dict]:
    """The gains the scenario's vintages give of their own ([vintages.throughput] steps, rate,
    table or history, which replace the scenario's): {vintage, steps, trajectory} for each
    vintage that gives any (`trajectory_text`), in the order of the file."""
    out = []
    rows = scenario.expand()[1:]
    for vintage, row in zip(scenario.vintages, rows, strict=True):
        if set(vintage.throughput) & set(NEUTRAL_GAINS):
            out.append(
                {
                    "vintage": vintage.name,
                    "steps": [s.model_dump(mode="json") for s in row.throughput.steps],
                    "trajectory": trajectory_text(row.throughput),
                }
            )
    return out


_STEP = re.compile(  # (DOTALL: a line feed in the label is refused as the control it is)
    r"^\s*(?P<when>[^:]+?)\s*:\s*(?P<gain>[^:]+?)\s*(?::(?P<label>.*))?$", re.DOTALL
)
_DATE = re.compile(r"^([0-9]{4})-([0-9]{1,2})(?:-([0-9]{1,2}))?$")  # \d takes "２０２５" too


def parse_step(
    text: str, start_date: dt.date, horizon_months: int | None = None, what: str | None = None
) -> dict:
    """Read a step written WHEN:GAIN[:LABEL], e.g. "2026-02:+19.8%" or "5:0.198:v6.1".

    WHEN is a date (YYYY-MM or YYYY-MM-DD; the month after the scenario's start_date month is month 1)
    or a month number. GAIN is a fraction (0.198) or a percentage (+19.8%), within GainStep's
    bounds (above -100%, at most +10,000%); LABEL is at most MAX_STEP_LABEL_CHARS characters.
    Digits are ASCII ones, as in index files: float() and int() read "２０２５" and "٠.١" too.
    Messages start with `what` (default "--step TEXT"), what the user gave.

    Returns
    -------
    dict with month [month], gain [fraction] and label
    """
    step = what or f"--step {shortened(text)}"
    match = _STEP.match(text)
    if not match:
        raise GainsError(f"{step}: expected WHEN:GAIN[:LABEL], e.g. 2026-02:+19.8% or 5:0.198")
    when, written = match["when"], match["gain"]
    date = _DATE.match(when)
    if date:
        # read as index files read dates (the month's first day where none is given), so that a
        # month 13 or a day 99 is refused, not read as another day
        year, month, day = int(date[1]), int(date[2]), int(date[3] or 1)
        if index_date(f"{year:04d}-{month:02d}-{day:02d}") is None:
            expected = (
                DATE_EXPECTED
                if date[3]
                else f"a month YYYY-MM from {FIRST_DATE:%Y-%m} to {LAST_DATE:%Y-%m}"
            )
            raise GainsError(f"{step}: {when!r} is not a date; expected {expected}")
        months = (year - start_date.year) * MONTHS_PER_YEAR + (month - start_date.month)
    elif re.fullmatch(r"[0-9]+", when):
        longest = field_bounds(Scenario, "horizon_months")["le"]
        if len(when.lstrip("0")) > len(str(longest)):  # (int() refuses 4,300 digits and more)
            raise GainsError(
                f"{step}: month {shortened(when)} is beyond any horizon (at most {longest} "
                "months); expected a month within the projection"
            )
        months = int(when)
    else:
        raise GainsError(
            f"{step}: when {shortened(when)} is neither a date (YYYY-MM) nor a month number; "
            "expected e.g. 2026-02 or 5 (month 1 = the first service month)"
        )
    try:  # cell_number: "1_5" is no number, as in index files (float() reads it as 15)
        percent = written.endswith("%")
        gain = cell_number(written[:-1]) / 100.0 if percent else cell_number(written)
    except ValueError:
        raise GainsError(
            f"{step}: gain {shortened(written)} is not a number; expected e.g. +19.8% or 0.198"
        ) from None
    bounds = field_bounds(GainStep, "gain")
    if not math.isfinite(gain) or not within_bounds(gain, bounds):
        low, high = f"{bounds['gt']:+.0%}", f"{bounds['le']:+,.0%}"
        past = (
            "not a finite number"  # (NaN read "at or below -100%", 1e400% "above +10,000%")
            if not math.isfinite(gain)
            else f"at or below {low}"
            if not gain > bounds["gt"]
            else f"above {high}"
        )
        raise GainsError(
            f"{step}: gain {shortened(written)} is {past}; expected a gain above {low} and at "
            f"most {high}"
        )
    label = (match["label"] or "").strip()
    control = control_character(label)
    if control is not None:  # (refused later as the scenario file's throughput.steps[0].label)
        raise GainsError(
            f"{step}: the label holds {control_kind(control[1])} ({control[1]!r}) at character "
            f"{control[0]}; expected {ONE_LINE}"
        )
    if len(label) > MAX_STEP_LABEL_CHARS:
        raise GainsError(
            f"{step}: the label is {len(label):,} characters long; expected a label of at most "
            f"{MAX_STEP_LABEL_CHARS} (e.g. a release name)"
        )
    first = _add_months(start_date, 1)
    if months < 1:
        raise GainsError(
            f"{step}: {when} is month {months}, before the first service month "
            f"({first:%Y-%m}, month 1); expected a later date"
        )
    if horizon_months is not None and months > horizon_months:
        last = _add_months(start_date, horizon_months)
        raise GainsError(
            f"{step}: {when} is month {months}, beyond the horizon of {horizon_months} "
            f"months (last month {last:%Y-%m}); expected a date within the projection"
        )
    return {"month": months, "gain": gain, "label": label}


def bare_fraction_note(text: str) -> str | None:
    """A warning for a step whose gain of +100% or more is written without "%" ("12:30" reads
    as +3,000%, "12:2" as +200%: a percentage typed without its sign), naming what it is read
    as and how to write the percentage; None for any other step (`parse_step` reads it)."""
    match = _STEP.match(text)
    if not match or match["gain"].endswith("%"):
        return None
    try:
        gain = cell_number(match["gain"])
    except ValueError:
        return None
    if not 1.0 <= gain <= field_bounds(GainStep, "gain")["le"]:
        return None
    return (
        f"--step {shortened(text)}: a gain without % is a fraction, so {match['gain']} is "
        f"{gain_text(gain)}; write {match['gain']}% for {gain_text(gain / 100.0)}"
    )


def gain_text(gain: float) -> str:
    """A step's gain as a percentage ("+19.8%"), with as many more decimals as it takes not to
    round a gain above -100% (no step may reach it) to "-100.0%"; as a fraction where the
    percentage overflows."""
    if not math.isfinite(gain * 100.0):
        return f"{gain:+.3g} (a fraction)"
    for decimals in range(1, 17):
        text = f"{gain:+.{decimals}%}"
        if gain <= -1.0 or float(text[:-1]) > -100.0:
            return text
    return f"{gain!r} (a fraction)"


def step_text(step: Mapping[str, Any] | GainStep) -> str:
    """A step in words, e.g. "+19.8% at month 5 (v6.1)", with its rollout where it has one:
    "+20.0% at month 5 rolled out over months 5 to 10" (a ramp of R months reaches the whole
    fleet in month M + R - 1, econ.throughput.trajectory.step_multiplier)."""
    if isinstance(step, GainStep):
        step = step.model_dump()
    month, ramp, label = step["month"], step.get("ramp_months", 0), step.get("label", "")
    text = f"{gain_text(step['gain'])} at month {month}" + (f" ({label})" if label else "")
    if ramp > 1:
        text += f" rolled out over months {month} to {month + ramp - 1}"
    return text


def steps_text(steps: Sequence[Mapping[str, Any] | GainStep]) -> str:
    """Steps in words, comma-separated (`step_text`); "" where there are none."""
    return ", ".join(step_text(step) for step in steps)


def trajectory_text(throughput) -> str:
    """The gains of a throughput section besides its steps, in words, e.g. "+15.0%/year
    compounding from month 1"; "" where it has none (econ.throughput.trajectory's models)."""
    rate, decay = throughput.gain_rate_annual, throughput.rate_decay_annual
    ceiling = throughput.ceiling_tokens_per_s_per_gpu
    if throughput.history is not None:
        text = "the compound rate of the platform's MLPerf history (throughput.history)"
    elif throughput.trajectory == "table":
        text = f"a table of {len(throughput.table)} throughput multipliers (throughput.table)"
    elif throughput.trajectory == "logistic":
        text = f"logistic from {rate:+.1%}/year from month 1, levelling off at the ceiling"
    elif rate:
        text = f"{rate:+.1%}/year compounding from month 1"
        if decay:
            text += f", the rate falling {decay:.1%} a year"
    else:
        text = ""
    if ceiling is not None and (text or throughput.steps):
        text += f"{', ' if text else ''}capped at {ceiling:,.6g} tokens/s per GPU"
    return text


def step_from_catalog(
    scenario: Scenario, from_id: str, to_id: str, when: str | None = None
) -> tuple[dict, list[str]]:
    """A step read from two benchmark catalog rows, dated for the scenario, and its caveats.

    gain = per-GPU(to) / per-GPU(from) - 1 (econ.benchmarks.catalog_step); the step takes effect
    in the month of the later row's publication unless `when` (YYYY-MM or a month number) says
    otherwise. The caveats are the rows' (different system sizes, derived per-GPU figures, same
    submitter and platform, ...) plus any mismatch with the scenario: other silicon than the
    fleet's, or a base throughput that is not the earlier row's per-GPU figure.

    Returns
    -------
    (step, warnings) : step as parse_step gives it ({month, gain, label}); warnings list of str
    """
    from econ.benchmarks import catalog_step, get_row  # catalog I/O, imported on use

    found = catalog_step(from_id, to_id)
    date = when or found.date[:7]
    # (named as given: the step text built here, "2026-13:0.19774918065938873:CoreWeave ...",
    # is no one's input)
    what = (
        f"--step-at {shortened(when)}"
        if when
        else f"the step from catalog row {found.from_id} to {found.to_id}, dated {date} (the "
        "later row's publication)"
    )
    step = parse_step(
        f"{date}:{found.gain!r}:{found.label}", scenario.start_date, scenario.horizon, what
    )
    warnings = list(found.warnings)
    hardware = scenario.fleet.hardware
    keys = {str(get_row(i)["hardware_key"]) for i in (found.from_id, found.to_id)}
    if keys != {hardware}:
        warnings.append(
            f"the catalog rows ran on {', '.join(sorted(k or 'unmapped silicon' for k in keys))}, "
            f"the scenario's fleet is {hardware}"
        )
    base = scenario.throughput.tokens_per_s_per_gpu
    if not math.isclose(base, found.from_tokens_per_s_per_gpu, rel_tol=1e-3):
        warnings.append(
            f"the scenario's base throughput {base:,.1f} tokens/s per GPU is not the earlier "
            f"row's {found.from_tokens_per_s_per_gpu:,.1f}: the step applies the rows' ratio "
            f"({found.gain:+.1%}) to the scenario's figure"
        )
    return step, warnings


def _add_months(start: dt.date, months: int) -> dt.date:
    index = start.year * MONTHS_PER_YEAR + start.month - 1 + months
    return dt.date(index // MONTHS_PER_YEAR, index % MONTHS_PER_YEAR + 1, 1)


# --- the bridge -------------------------------------------------------------------------------


def discount_factors(projection: Projection):
    """v^m at each scenario's discount rate, monthly compounding, 1 in month 0 [fraction (n, T+1)]."""
    rate = monthly_rate(projection.metrics["discount_rate_annual"])
    return np.power(1.0 + rate[:, None], -projection.months[None, :].astype(float))


def npv_bridge(
    base: Projection, gain: Projection, held: Projection | None = None
) -> dict[str, np.ndarray]:
    """NPV change from base to gain case by driver: the PV of the change in each line [USD (n,)].

        bridge_driver = sum_m v^m * s_driver * (line_gain,m - line_base,m)

    with s the line's sign in the project cash flow (BRIDGE_LINES). The project cash flow is the
    signed sum of these lines, so the drivers add up to NPV_gain - NPV_base; the sum is checked
    against the engine's npv_usd: if a cash-flow line the bridge does not know moved the NPV, the
    unexplained part is reported as OTHER_DRIVER rather than lost. Rows of `base` and `gain` must be
    the same scenarios in the same order.

    Where the gain case sizes its loan again (the base case's sized to its cash flow), `held` is
    the gain case holding the base case's loan (econ.analysis.committed): the drivers are then
    the change from base to held, and FINANCING_DRIVER is NPV_gain - NPV_held, what the re-sized
    loan changes (the tax its interest saves); the drivers still add up to NPV_gain - NPV_base.
    """
    if held is not None:
        bridge = npv_bridge(base, held)
        other = bridge.pop(OTHER_DRIVER, None)
        bridge[FINANCING_DRIVER] = gain.metrics["npv_usd"] - held.metrics["npv_usd"]
        if other is not None:
            bridge[OTHER_DRIVER] = other
        return bridge
    if base.lines["revenue_usd"].shape != gain.lines["revenue_usd"].shape:
        raise GainsError(
            f"base {base.lines['revenue_usd'].shape} and gain {gain.lines['revenue_usd'].shape} "
            "projections differ in shape; expected the same scenarios over the same months"
        )
    rates = base.metrics["discount_rate_annual"], gain.metrics["discount_rate_annual"]
    if not np.array_equal(*rates):
        raise GainsError("base and gain cases have different discount rates; expected the same")
    v = discount_factors(base)
    lines = list(BRIDGE_LINES)
    if all(column in base.lines for _, column in REVENUE_SPLIT):
        lines = [(d, c, 1.0) for d, c in REVENUE_SPLIT] + lines[1:]
    bridge = {}
    scale = np.zeros(len(base))
    for driver, column, sign in lines:
        change = sign * (gain.lines[column] - base.lines[column])
        bridge[driver] = np.einsum("ij,ij->i", change, v)
        scale += np.einsum("ij,ij->i", np.abs(gain.lines[column]) + np.abs(base.lines[column]), v)
    total = np.sum(list(bridge.values()), axis=0)
    expected = gain.metrics["npv_usd"] - base.metrics["npv_usd"]
    residual = expected - total
    if np.any(np.abs(residual) > BRIDGE_TOLERANCE * np.maximum(scale, 1.0)):
        # A cash-flow line the bridge does not know (the engine grew one): show it, never hide it.
        bridge[OTHER_DRIVER] = residual
    return bridge


# --- value of a gain --------------------------------------------------------------------------


@dataclass(frozen=True)
class GainValue:
    """Base and gain case of one scenario, their difference and what it is worth.

    Attributes
    ----------
    base, gain : dict  summaries with the keys of `econ project --format json`
        (docs/glossary.md, "Summary keys")
    delta : dict  gain - base for every numeric summary metric (None where either is undefined),
        except those that hold a category's code (`debt_sizing_constraint`: its base and gain
        values are in `base` and `gain`)
    bridge : list of {driver, npv_usd}  NPV change by driver; sums to delta["npv_usd"]
    value : dict  per-GPU, per-rack and fleet figures, GPUs and capex avoided
    ebitda_by_year : DataFrame  year, base_usd, gain_usd, delta_usd (year 1 = months 0-12)
    steps : list of dict  the gain case's steps
    warnings : list of str  about the comparison itself (each case's own are in its summary)
    trajectory : str  the gain case's gains besides its steps, in words (`trajectory_text`)
    vintage_gains : list of dict  the gains the gain case's vintages give of their own
        (`vintage_gains`: vintage, steps, trajectory); the base case has none of them either
    """

    name: str
    base: dict
    gain: dict
    delta: dict
    bridge: list[dict]
    value: dict
    ebitda_by_year: pd.DataFrame
    steps: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trajectory: str = ""
    vintage_gains: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        """JSON-ready object: base, gain, delta, bridge, value, ebitda_by_year, steps,
        trajectory, vintage_gains, warnings."""
        return {
            "name": self.name,
            "base": self.base,
            "gain": self.gain,
            "delta": self.delta,
            "bridge": self.bridge,
            "value": {k: strict_json.number(v) for k, v in self.value.items()},
            "ebitda_by_year": [
                {k: strict_json.number(v) for k, v in row.items()}
                for row in self.ebitda_by_year.to_dict("records")
            ],
            "steps": self.steps,
            "trajectory": self.trajectory,
            "vintage_gains": self.vintage_gains,
            "warnings": self.warnings,
        }


def summary_delta(base: Mapping[str, Any], gain: Mapping[str, Any]) -> dict:
    """gain - base for each numeric summary metric; nested dicts (components) key by key.

    Metrics that hold a category's code (`CODED_METRICS`: what limits the loan's size) are left
    out: a difference of two codes is no quantity (base and gain keep them)."""
    delta: dict[str, Any] = {}
    for key, b in base.items():
        g = gain.get(key)
        if key in CODED_METRICS:
            continue
        if isinstance(b, Mapping):
            delta[key] = summary_delta(b, g or {})
        elif isinstance(b, bool) or isinstance(b, list | str):
            continue
        elif isinstance(b, int | float) and isinstance(g, int | float):
            delta[key] = strict_json.number(g - b)
        elif b is None or g is None:
            delta[key] = None
    return delta


def year_label(year: int, horizon_months, prefix: str = "year ") -> str:
    """A row of EBITDA by year in words: "year 3", or "year 3 (6 months)" where the horizon ends
    within it (a 30-month horizon's year 3 read as a whole year, its EBITDA a third of year
    2's); `prefix` "" for a column headed Year."""
    months = (horizon_months or 0) - MONTHS_PER_YEAR * (int(year) - 1)
    if 0 < months < MONTHS_PER_YEAR:
        return f"{prefix}{year} ({months:.0f} month{'s' if months != 1 else ''})"
    return f"{prefix}{year}"


def _years(months: np.ndarray) -> np.ndarray:
    return np.maximum(months - 1, 0) // MONTHS_PER_YEAR + 1


def value_gain(gain_scenario: Scenario, base_scenario: Scenario | None = None) -> GainValue:
    """Value the gains of a scenario against the same scenario without them (or a given base).

    Parameters
    ----------
    gain_scenario : Scenario  the case with the software gains
    base_scenario : Scenario, optional  the case without; default `without_gains(gain_scenario)`
    """
    base_scenario = base_scenario or without_gains(gain_scenario)
    base_p, gain_p = project(base_scenario), project(gain_scenario)
    base, gain = base_p.summary_records()[0]["summary"], gain_p.summary_records()[0]["summary"]
    held_p = _held_loan(base_scenario, gain_scenario, base_p, base, gain)
    bridge = npv_bridge(base_p, gain_p, held_p)
    market = base_scenario.market
    selling = token_selling_share(market.contract_share, market.spot_sells == "gpu_hours")
    row = value_metrics(base_p, gain_p, selling)
    ebitda = pd.DataFrame(
        {
            "base_usd": _ebitda_by_year(base_p),
            "gain_usd": _ebitda_by_year(gain_p),
        }
    ).fillna(0.0)
    ebitda["delta_usd"] = ebitda["gain_usd"] - ebitda["base_usd"]
    ebitda = ebitda.rename_axis("year").reset_index()
    warnings = []
    same = no_gain_note(base_scenario, gain_scenario, base_p, gain_p)
    if same:
        warnings.append(same)
    if OTHER_DRIVER in bridge:
        warnings.append(
            f"the NPV bridge has {bridge[OTHER_DRIVER][0]:,.2f} USD from cash-flow lines it does "
            "not know; the other drivers are exact"
        )
    rented = rented_out_note(float(selling[0]), float(base_p.metrics["gpu_count"][0]), market)
    if rented:
        warnings.append(rented)
    undefined = undefined_value_note({k: v[0] for k, v in row.items()}, base, gain)
    if undefined:
        warnings.append(undefined)
    return GainValue(
        name=gain_scenario.name,
        base=base,
        gain=gain,
        delta=summary_delta(base, gain),
        bridge=[
            {"driver": driver, "npv_usd": strict_json.number(values[0])}
            for driver, values in bridge.items()
        ],
        value={k: v[0] for k, v in row.items()},
        ebitda_by_year=ebitda,
        steps=[s.model_dump(mode="json") for s in gain_scenario.throughput.steps],
        warnings=warnings,
        trajectory=trajectory_text(gain_scenario.throughput),
        vintage_gains=vintage_gains(gain_scenario),
    )


def no_gain_note(base_scenario, gain_scenario, base_p, gain_p) -> str | None:
    """The warning for a gain case whose throughput is the base case's in effect: the same
    tokens in every month (so every figure the same), whether its sections are the same or its
    gains change nothing (a step of 0%, or steps and growth only in months no GPU serves); None
    where the gain case serves other tokens."""
    if not np.array_equal(base_p.lines["tokens"], gain_p.lines["tokens"]):
        return None
    rows = zip(base_scenario.expand(), gain_scenario.expand(), strict=False)
    if all(base.throughput == gain.throughput for base, gain in rows):
        return "the gain case has the same throughput as the base case: there is no gain to value"
    return (
        "the gain case serves the same tokens as the base case in every month: its gains change "
        "no GPU's throughput while it serves (a gain of 0%, or gains only in months with no GPU "
        "in service), so there is no gain to value"
    )


def _held_loan(base_scenario, gain_scenario, base_p, base, gain) -> Projection | None:
    """The gain case holding the base case's loan, where the gain case sizes another (the
    base case's sized to its cash flow and the debts differ); else None."""
    from econ.analysis.committed import committed_loan, holding

    if base.get("debt_usd") == gain.get("debt_usd"):
        return None
    loan = committed_loan(base_scenario, base, base_p.lines["debt_balance_usd"][0])
    if loan is None:
        return None
    return project(holding(gain_scenario, loan, "the gain case"))


def rented_out_note(selling_share: float, gpu_count: float, market) -> str | None:
    """The warning for a fleet partly or wholly rented out: a gain on the GPUs rented out earns
    the operator nothing, so the GPUs, racks and capex avoided count only those selling tokens;
    None when every GPU sells tokens."""
    if selling_share >= 1.0:
        return None
    how = (
        "spot capacity rents GPU-hours (market.spot_sells = 'gpu_hours')"
        if market.spot_sells == "gpu_hours"
        else ""
    )
    if market.contract_share > 0:
        share = f"{market.contract_share * 100:.4g}%"
        contract = f"{share} of the GPUs are rented under contract (market.contract_share)"
        how = f"{contract} and {how}" if how else contract
    return (
        f"{how}: a throughput gain on GPUs rented out earns the operator nothing, so "
        "gpus_avoided, racks_avoided and capex_avoided_usd count only the "
        f"{selling_share * gpu_count:,.1f} of {gpu_count:,.0f} GPUs that sell tokens"
    )


VALUE_KEYS = (
    "npv_usd_fleet",
    "npv_usd_per_gpu",
    "npv_usd_per_rack",
    "lcot_change_share",
    "tokens_change_share",
    "gpus_avoided",
    "racks_avoided",
    "capex_avoided_usd",
)
"""The figures of what a gain is worth that every case with tokens defines (`value_metrics`)."""
_VALUE_INPUTS = ("npv_usd", "tokens_total", "lcot_usd_per_mtok")


def undefined_value_note(value: Mapping[str, Any], base: Mapping, gain: Mapping) -> str | None:
    """The warning for VALUE_KEYS that are not finite numbers (n/a in tables, null in JSON), with
    the reason: a null input of the base or gain case (whose own warnings say why, e.g. inputs
    that overflow floating point, as a step of +1e308 does), a base case without tokens, or
    arithmetic that overflows; None when every figure is defined."""
    missing = [
        k
        for k in VALUE_KEYS
        if k in value and (value[k] is None or not math.isfinite(float(value[k])))
    ]
    if not missing:
        return None
    reasons = [
        f"the {case} case's {', '.join(nulls)} {'is' if len(nulls) == 1 else 'are'} null (see "
        "its warnings)"
        for case, summary in (("base", base), ("gain", gain))
        if (nulls := [k for k in _VALUE_INPUTS if summary.get(k) is None])
    ]
    if not reasons and base.get("tokens_total") == 0:
        reasons.append("the base case serves no tokens")
    reason = "; ".join(reasons) or "the difference overflows floating point"
    verb = "is" if len(missing) == 1 else "are"
    return f"{', '.join(missing)} {verb} n/a: {reason}"


def _ebitda_by_year(projection: Projection) -> pd.Series:
    """EBITDA summed by year of service (year 1 = months 0-12), from the monthly schedule [USD]."""
    monthly = projection.monthly["ebitda_usd"]
    months = monthly.index.get_level_values("month").to_numpy()
    return monthly.groupby(_years(months)).sum()


def capacity_avoided(gpus, racks, capex_usd, tokens_base, tokens_gain) -> dict[str, np.ndarray]:
    """What the base case would buy in addition to serve the gain case's tokens, per row.

    A row is a fleet bought at once (a scenario without vintages, or one vintage of one): its
    GPUs serve only its own tokens, so each row is scaled by its own change in tokens, and a
    scenario's figure is the sum over its rows (`value_metrics`).

    Parameters
    ----------
    gpus, racks : arrays (k,)  GPUs and racks the row buys [GPUs, racks]
    capex_usd : array (k,)  what the row's GPUs cost [USD]
    tokens_base, tokens_gain : arrays (k,)  the row's tokens over the horizon without and with
        the gain [tokens]

    Returns
    -------
    dict of arrays (k,): gpus_avoided, racks_avoided, capex_avoided_usd. For a gain the row's
    figures times (tokens_gain / tokens_base - 1); for a loss, minus them times
    (tokens_base / tokens_gain - 1), what the case with the loss needs to make up the base's
    tokens; NaN where the row serves no tokens without the gain.
    """
    tokens_b = np.asarray(tokens_base, dtype=float)
    tokens_g = np.asarray(tokens_gain, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(tokens_b > 0, tokens_g / tokens_b, np.nan)
        # a gain: what the base would buy to match it; a loss: minus what it costs to make up
        more = np.where(ratio >= 1.0, ratio - 1.0, 1.0 - 1.0 / ratio)
    return {
        "gpus_avoided": np.asarray(gpus, dtype=float) * more,
        "racks_avoided": np.asarray(racks, dtype=float) * more,
        "capex_avoided_usd": np.asarray(capex_usd, dtype=float) * more,
    }


def _avoided_by_vintage(base: Projection, gain: Projection):
    """`capacity_avoided` summed over each scenario's vintages [arrays (n,)], and which
    scenarios the projections hold vintage rows of (a joined projection may hold some only);
    None when they hold none at all. A row of the base case meets the gain case's row of the
    same vintage in the scenario at the same position (their names differ)."""
    if base.vintages is None or gain.vintages is None:
        return None

    def by_position(projection: Projection) -> pd.DataFrame:
        position = {name: i for i, name in enumerate(projection.names)}
        frame = projection.vintages
        scenario = [position[s] for s in frame.index.get_level_values("scenario")]
        vintage = frame.index.get_level_values("vintage")
        return frame.set_index(pd.MultiIndex.from_arrays([scenario, vintage]))

    rows = by_position(base)
    per_row = capacity_avoided(
        rows["gpu_count"].to_numpy(),
        rows["rack_count"].to_numpy(),
        rows["capex_usd"].to_numpy(),
        rows["tokens"].to_numpy(),
        by_position(gain)["tokens"].reindex(rows.index).to_numpy(),
    )
    scenario = rows.index.get_level_values(0).to_numpy()
    held = np.zeros(len(base.names), dtype=bool)
    held[scenario] = True
    summed = {}
    for key, values in per_row.items():
        total = np.zeros(len(base.names))
        np.add.at(total, scenario, values)  # a vintage's NaN makes its scenario's sum NaN
        summed[key] = total
    return summed, held


def value_metrics(base: Projection, gain: Projection, selling_share) -> dict[str, np.ndarray]:
    """What the gain is worth, per scenario row [arrays (n,)].

    `selling_share` (n,) is the share of each scenario's GPUs that sell tokens
    (`econ.market.token_selling_share`: 1 - market.contract_share, 0 where spot capacity rents
    GPU-hours) [fraction]: a gain on GPUs rented out earns the operator nothing, so only the
    GPUs selling tokens count in the GPUs, racks and capex avoided.

    Keys
    ----
    npv_usd_fleet, npv_usd_per_gpu, npv_usd_per_rack : NPV change [USD]; per GPU and per rack
        over the GPUs and racks of every vintage (the base case's `gpu_count`, `rack_count`)
    gpus_per_rack : GPUs per rack, over every vintage's racks [GPUs/rack]
    lcot_change_usd_per_mtok, lcot_change_share : change in levelized cost [USD/Mtok, fraction]
    tokens_change_share : change in tokens over the horizon [fraction]
    irr_project_change : change in project IRR [fraction/year]
    payback_change_months : change in payback [months]
    gpus_avoided, racks_avoided, capex_avoided_usd : GPUs, racks and capex the base case would
        need in addition to sell the gain case's tokens over the horizon, s * N * (tokens_gain /
        tokens_base - 1) with s the selling share; for a loss (fewer tokens with the steps),
        minus what the case with the loss needs in addition to sell the base case's tokens,
        -s * N * (tokens_base / tokens_gain - 1) [GPUs, racks, USD]. With vintages, the sum of
        each vintage's own (`capacity_avoided`): its GPUs, racks and capex scaled by its own
        change in tokens, as generations in service at different times serve different tokens
    capex_per_gpu_usd : capex over every vintage's GPUs [USD/GPU]
    """
    gpus, racks = base.metrics["gpu_count"], base.metrics["rack_count"]
    per_rack = gpus / racks
    npv = gain.metrics["npv_usd"] - base.metrics["npv_usd"]
    lcot_b, lcot_g = base.metrics["lcot_usd_per_mtok"], gain.metrics["lcot_usd_per_mtok"]
    tokens_b, tokens_g = base.metrics["tokens_total"], gain.metrics["tokens_total"]
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens_ratio = np.where(tokens_b > 0, tokens_g / tokens_b, np.nan)
        lcot_share = np.where(lcot_b > 0, lcot_g / lcot_b - 1.0, np.nan)
    capex_per_gpu = base.metrics["capex_usd_total"] / gpus
    avoided = capacity_avoided(gpus, racks, base.metrics["capex_usd_total"], tokens_b, tokens_g)
    by_vintage = _avoided_by_vintage(base, gain)
    if by_vintage is not None:  # scenarios without vintage rows keep the fleet's figures
        summed, held = by_vintage
        avoided = {key: np.where(held, summed[key], values) for key, values in avoided.items()}
    # every vintage of a scenario sells tokens from the same share of its GPUs (its market's)
    share = np.broadcast_to(np.asarray(selling_share, dtype=float), gpus.shape)
    avoided = {key: share * values for key, values in avoided.items()}
    return {
        "npv_usd_fleet": npv,
        "npv_usd_per_gpu": npv / gpus,
        "npv_usd_per_rack": npv / racks,
        "gpus_per_rack": per_rack,
        "lcot_change_usd_per_mtok": lcot_g - lcot_b,
        "lcot_change_share": lcot_share,
        "tokens_change_share": tokens_ratio - 1.0,
        "irr_project_change": gain.metrics["irr_project_annual"]
        - base.metrics["irr_project_annual"],
        "payback_change_months": gain.metrics["payback_months"] - base.metrics["payback_months"],
        "gpus_avoided": avoided["gpus_avoided"],
        "racks_avoided": avoided["racks_avoided"],
        "capex_per_gpu_usd": capex_per_gpu,
        "capex_avoided_usd": avoided["capex_avoided_usd"],
    }


def life_columns(life_years) -> dict[str, np.ndarray]:
    """Batch columns for a service life equal to the book life: horizon 12 * L months, L years."""
    life = np.asarray(life_years, dtype=float)
    if np.any(~(life > 0)) or np.any(life * MONTHS_PER_YEAR > 600):
        raise GainsError(f"life_years = {life!r}: expected lives above 0 and up to 50 years")
    return {
        "depreciation.life_years": life,
        "horizon_months": np.rint(life * MONTHS_PER_YEAR),
    }


def value_grid(
    gain_scenario: Scenario,
    columns: Mapping[str, Any] | None = None,
    base_scenario: Scenario | None = None,
) -> pd.DataFrame:
    """Value the scenario's gains over a grid of column overrides, all rows in two batch projections.

    Parameters
    ----------
    gain_scenario : Scenario  the case with the gains
    columns : mapping of dotted path to array (n,)  overrides applied to both cases, e.g.
        `life_columns([4, 5, 6])` and "market.price_decline_annual"; arrays broadcast together
    base_scenario : Scenario, optional  default `without_gains(gain_scenario)`

    Returns
    -------
    DataFrame, one row per grid point: the override columns, base_* and gain_* summary metrics,
    the `value_metrics` and one `bridge_<driver>` column per driver [USD]. Unlike `value_gain`'s,
    the grid's bridge does not split off a re-sized loan (FINANCING_DRIVER): where the loan is
    sized to each case's cash flow, bridge_tax holds the change in the tax its interest saves.
    """
    cols = {k: np.asarray(v, dtype=float) for k, v in (columns or {}).items()}
    if "market.price_decline_annual" in cols:
        what = "value_grid's market.price_decline_annual"
        gain_scenario = _declining(gain_scenario, what)
        base_scenario = base_scenario and _declining(base_scenario, what)
    base_scenario = base_scenario or without_gains(gain_scenario)
    n = int(np.broadcast(*cols.values()).size) if cols else 1
    cols = {k: np.broadcast_to(v, (n,)).copy() for k, v in cols.items()}
    base_batch = ScenarioBatch.repeat(base_scenario, n, cols)
    base_p = project(base_batch)
    gain_p = project(ScenarioBatch.repeat(gain_scenario, n, cols))
    bridge = npv_bridge(base_p, gain_p)
    selling = np.empty(n)  # a scenario's rows (its vintages) share its market
    selling[base_batch.row_scenario] = token_selling_share(
        base_batch["market.contract_share"], base_batch.extras["market.spot_sells_gpu_hours"]
    )
    frame = pd.DataFrame(cols)
    for key in ("lcot_usd_per_mtok", "npv_usd", "irr_project_annual", "payback_months"):
        frame[f"base_{key}"] = base_p.metrics[key]
        frame[f"gain_{key}"] = gain_p.metrics[key]
    value = value_metrics(base_p, gain_p, selling)
    for key, values in value.items():
        frame[key] = values
    for driver, values in bridge.items():
        frame[f"bridge_{driver.replace(' ', '_')}"] = values
    return frame


# --- break-evens by vectorized bisection ------------------------------------------------------


@dataclass(frozen=True)
class GainSolution:
    """Solved gains, one per row, with why a row has none.

    Attributes
    ----------
    value : array (n,)  the gain [fraction or fraction/year]; NaN where unsolved
    status : array (n,) of str  "solved"; "met_at_lower_bound" (the target is met even with the
        lowest gain tried, `lower`: no gain is needed); "unreachable" (not met even at `upper`)
    lower, upper : float  the bracket searched
    """

    value: np.ndarray
    status: np.ndarray
    lower: float
    upper: float


def bisect_increasing(
    evaluate: Callable[[np.ndarray], np.ndarray],
    target,
    lower: float,
    upper: float,
    upper_max: float,
    tolerance: float = 1e-9,
    max_iterations: int = 200,
) -> GainSolution:
    """Smallest x with evaluate(x) >= target, row by row, for non-decreasing evaluate [x units (n,)].

    Bisection (R. L. Burden and J. D. Faires, Numerical Analysis, 9th ed., 2011, section 2.1) on
    every row at once: each iteration is one call of `evaluate` on an (n,) array, e.g. one batch
    projection. The upper end doubles its distance from `lower` until the target is met or
    `upper_max` is passed.
    """
    target = np.asarray(target, dtype=float)
    n = target.size
    lo = np.full(n, float(lower))
    hi = np.full(n, float(upper))
    f_lo = evaluate(lo) - target
    f_hi = evaluate(hi) - target
    while True:
        short = (f_hi < 0) & (hi < upper_max)
        if not short.any():
            break
        lo = np.where(short, hi, lo)
        hi = np.where(short, np.minimum(lower + 2.0 * (hi - lower), upper_max), hi)
        f_hi = np.where(short, evaluate(hi) - target, f_hi)
    met_low = f_lo >= 0
    unreachable = ~met_low & ~(f_hi >= 0)
    live = ~met_low & ~unreachable
    for _ in range(max_iterations):
        if not np.any(live & (hi - lo > tolerance)):
            break
        mid = 0.5 * (lo + hi)
        f_mid = evaluate(np.where(live, mid, hi)) - target
        below = live & (f_mid < 0)
        lo = np.where(below, mid, lo)
        hi = np.where(live & ~below, mid, hi)
    value = np.where(live, 0.5 * (lo + hi), np.nan)
    status = np.where(met_low, "met_at_lower_bound", np.where(unreachable, "unreachable", "solved"))
    return GainSolution(value=value, status=status, lower=float(lower), upper=float(upper_max))


def _per_row(batch: ScenarioBatch, per_scenario) -> np.ndarray:
    """A value per scenario spread over the batch's rows (a scenario with vintages has several)."""
    values = np.asarray(per_scenario, dtype=float)
    row_scenario = getattr(batch, "row_scenario", None)
    return values if row_scenario is None else values[row_scenario]


def _solver(
    scenario: Scenario,
    columns: Mapping[str, np.ndarray],
    metric: str,
    variable: str,
    step_month: int | None,
):
    """An evaluate(x) -> metric function over one batch, x the gain rate or a step's gain."""
    n = len(next(iter(columns.values()))) if columns else 1
    if variable == "rate":
        batch = ScenarioBatch.repeat(rate_case(scenario), n, columns)

        def evaluate(x):
            rates = _per_row(batch, x)
            cols = {**batch.columns, "throughput.gain_rate_annual": rates}
            return project(dataclasses.replace(batch, columns=cols)).metrics[metric]

        return evaluate
    if variable != "step":
        raise GainsError(f"variable = {variable!r}: expected one of: rate, step")
    if step_month is None or step_month < 1:
        raise GainsError(f"step_month = {step_month!r}: expected the month of the step, 1 or later")
    step = {"month": int(step_month), "gain": 0.0, "label": "solved step"}
    batch = ScenarioBatch.repeat(_with_step_added(scenario, step), n, columns)
    # each row's steps are in month order, the solved one after those of its month (a vintage
    # with steps of its own has it at another slot); unused slots hold a month beyond any
    rows = np.arange(len(batch.step_months))
    slots = (batch.step_months <= step_month).sum(axis=1) - 1

    def evaluate(x):
        gains = batch.step_gains.copy()
        gains[rows, slots] = _per_row(batch, x)
        return project(dataclasses.replace(batch, step_gains=gains)).metrics[metric]

    return evaluate


def _with_step_added(scenario: Scenario, step: Mapping[str, Any]) -> Scenario:
    """The scenario with `step` added after the steps of its month, to its own fleet's steps
    and to those of each vintage that gives steps of its own (which replace the fleet's), so
    that it reaches the GPUs of every vintage as `with_steps`' steps do."""
    data = scenario_to_dict(scenario)
    sections = [data.setdefault("throughput", {})] + [
        vintage["throughput"]
        for vintage in data.get("vintages", [])
        if "steps" in vintage.get("throughput", {})
    ]
    for section in sections:
        steps = list(section.get("steps", []))
        slot = sum(1 for s in steps if s["month"] <= step["month"])
        section["steps"] = [*steps[:slot], dict(step), *steps[slot:]]
    return validate_dict(data)


def solve_gain(
    scenario: Scenario,
    columns: Mapping[str, Any] | None,
    target,
    *,
    metric: str = "npv_usd",
    variable: str = "rate",
    step_month: int | None = None,
    lower: float = -0.95,
    upper: float = 1.0,
    upper_max: float = 1000.0,
    tolerance: float = 1e-9,
) -> GainSolution:
    """The gain at which `metric` reaches `target`, for each row of a batch [fraction (n,)].

    Parameters
    ----------
    scenario : Scenario  the case to solve on; its gains stay (the variable replaces the annual
        rate, and a table trajectory or MLPerf history with it (`rate_case`), or adds a step)
    columns : mapping of dotted path to array (n,)  batch overrides, broadcast together
    target : array (n,) or scalar  value of `metric` to reach [metric units]
    metric : str  a Projection metric that does not fall as throughput rises (npv_usd,
        ebitda_usd_total, revenue_usd_total, ...)
    variable : "rate" (throughput.gain_rate_annual [fraction/year]) or "step" (a one-time gain in
        `step_month` [fraction])
    lower, upper, upper_max : bracket: start at [lower, upper], widen up to upper_max
    """
    cols = {k: np.asarray(v, dtype=float) for k, v in (columns or {}).items()}
    shapes = [*cols.values(), np.asarray(target, dtype=float)]
    n = int(np.broadcast(*shapes).size)
    cols = {k: np.broadcast_to(v, (n,)).copy() for k, v in cols.items()}
    if not -1.0 < lower < upper <= upper_max:
        raise GainsError(
            f"bracket lower={lower}, upper={upper}, upper_max={upper_max}: expected "
            "-1 < lower < upper <= upper_max"
        )
    evaluate = _solver(scenario, cols, metric, variable, step_month)
    target = np.broadcast_to(np.asarray(target, dtype=float), (n,))
    return bisect_increasing(evaluate, target, lower, upper, upper_max, tolerance)


def _declining(scenario: Scenario, what: str) -> Scenario:
    """The scenario ready for a token price decline imposed on it: one written as a fall factor
    (market.price_fall_factor_annual) given as the decline it means, which the imposed one then
    replaces; refused where a table gives the prices (market.price_table). The batch refused
    both of a decline the caller never set: "row 1: market: price_table is given together with
    a price decline", "row 0: market: price_fall_factor_annual 2 means a decline of 0.5, but
    price_decline_annual is 0.0"."""
    market = scenario.market
    if market.price_table:
        raise GainsError(
            f"{what}: scenario '{clipped(scenario.name)}' gives its token prices as a table "
            "(market.price_table), which sets every month's price, so no annual price decline "
            "can be imposed on it; expected a scenario with market.price_usd_per_mtok and "
            "market.price_decline_annual"
        )
    if market.price_fall_factor_annual is None:
        return scenario
    data = scenario_to_dict(scenario)
    del data["market"]["price_fall_factor_annual"]  # (price_decline_annual holds what it meant)
    _drop_sources(data, ("market.price_fall_factor_annual",))
    return validate_dict(data)


def gain_rate_to_hold_margin(
    scenario: Scenario,
    price_decline_annual,
    *,
    metric: str = "ebitda_usd_total",
    columns: Mapping[str, Any] | None = None,
) -> GainSolution:
    """Annual throughput gain that holds margin under a token price deflation [fraction/year (n,)].

    The reference is the scenario at flat token prices with no annual gain (its steps kept; a
    table trajectory or MLPerf history is replaced by the solved rate, `rate_case`); the
    solution is the compound annual gain at which `metric` (EBITDA over the horizon by default; its
    margin on unchanged costs) is the same under an annual price decline d. Where only token
    revenue depends on price and throughput it is d / (1 - d) (`rate_to_hold_revenue`), which the
    tests check; the solver also covers contracts and ceilings. A scenario whose token prices
    are a table (market.price_table) is refused: the table sets every month's price, so no
    decline can be imposed on it; a fall factor (market.price_fall_factor_annual) gives way to
    the declines imposed.
    """
    what = "the rate that holds margin under a token price decline"
    scenario = _declining(scenario, what)
    scenario = rate_case(scenario)  # a table or history would hold the reference's growth
    decline = np.atleast_1d(np.asarray(price_decline_annual, dtype=float))
    cols = {k: np.asarray(v, dtype=float) for k, v in (columns or {}).items()}
    n = int(np.broadcast(decline, *cols.values()).size)
    cols = {k: np.broadcast_to(v, (n,)).copy() for k, v in cols.items()}
    flat = {
        **cols,
        "market.price_decline_annual": np.zeros(n),
        "throughput.gain_rate_annual": np.zeros(n),
    }
    target = project(ScenarioBatch.repeat(scenario, n, flat)).metrics[metric]
    deflated = {**cols, "market.price_decline_annual": np.broadcast_to(decline, (n,)).copy()}
    return solve_gain(scenario, deflated, target, metric=metric, variable="rate")


def gain_to_earn_cost_of_capital(
    scenario: Scenario,
    life_years,
    *,
    discount_rate_annual=None,
    price_decline_annual=None,
    variable: str = "rate",
    step_month: int | None = None,
    keep_gains: bool = False,
) -> GainSolution:
    """Gain at which an asset serving for L years earns exactly its cost of capital (NPV = 0).

    Service life and book life are both L (horizon 12 * L months); the NPV is at the scenario's
    discount rate unless `discount_rate_annual` is given. Negative solutions mean headroom: the
    asset earns its cost of capital even if throughput falls that much.

    Parameters
    ----------
    scenario : Scenario
    life_years : array (n,)  service and book life [years]
    discount_rate_annual, price_decline_annual : arrays (n,), optional  overrides [fraction/year]
    variable : "rate" (compound annual gain) or "step" (one-time gain in `step_month`)
    keep_gains : bool  keep the scenario's own steps (solve for what is needed on top of them;
        a solved rate replaces the scenario's rate, table or MLPerf history, `rate_case`)
    """
    case = scenario if keep_gains else without_gains(scenario, name=scenario.name)
    cols = life_columns(life_years)
    if discount_rate_annual is not None:
        cols["financing.discount_rate_annual"] = np.asarray(discount_rate_annual, dtype=float)
    if price_decline_annual is not None:
        case = _declining(case, "price_decline_annual")
        cols["market.price_decline_annual"] = np.asarray(price_decline_annual, dtype=float)
    n = int(np.broadcast(*cols.values()).size)
    cols = {k: np.broadcast_to(v, (n,)).copy() for k, v in cols.items()}
    months = cols["horizon_months"]
    if variable == "step" and step_month is not None and step_month > months.min():
        # (the batch refused it as "row 0: the base scenario's throughput step at month 40 is
        # beyond the horizon of 36 months", for every life at once)
        raise GainsError(
            f"step_month = {step_month!r} is after the end of the "
            f"{cols['depreciation.life_years'][months.argmin()]:g}-year life (month "
            f"{months.min():.0f}); expected a step month from 1 to {months.min():.0f}, within "
            "every life solved"
        )
    return solve_gain(case, cols, 0.0, metric="npv_usd", variable=variable, step_month=step_month)


__all__ = [
    "BRIDGE_LINES",
    "COMPARED_METRICS",
    "FINANCING_DRIVER",
    "OTHER_DRIVER",
    "GainSolution",
    "GainValue",
    "GainsError",
    "bare_fraction_note",
    "bisect_increasing",
    "discount_factors",
    "gain_rate_to_hold_margin",
    "gain_text",
    "gain_to_earn_cost_of_capital",
    "has_gains",
    "life_columns",
    "no_gain_note",
    "npv_bridge",
    "parse_step",
    "rate_case",
    "solve_gain",
    "step_text",
    "steps_text",
    "summary_delta",
    "trajectory_text",
    "value_gain",
    "value_grid",
    "value_metrics",
    "vintage_gains",
    "vintage_steps_replaced",
    "capacity_avoided",
    "with_steps",
    "with_throughput",
    "without_gains",
    "year_label",
]
