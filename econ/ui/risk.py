"""Batch analysis for the Risk page: tornado and Monte Carlo through econ.analysis, with progress.

The runs go through `econ.analysis` (the same code as `econ sensitivity` and `econ montecarlo`, so
a seed gives the same draws as the command line); this module adds a serial executor that reports
each finished chunk to a progress bar, and the monthly cash-flow quantiles of a sample of the
draws for the fan chart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from econ.analysis.executors import SerialExecutor
from econ.scenario import Scenario

MAX_SCENARIOS = 100_000
"""Largest Monte Carlo run the app starts (larger runs belong to `econ montecarlo`)."""

FAN_DRAWS = 400
"""Draws projected month by month for the fan chart."""

FAN_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)

_READS_A_FILE = re.compile(r"^\s*empirical\s*\(", re.IGNORECASE)
"""A distribution that draws from a file's column (`empirical(FILE[, COLUMN])`), in the
spelling econ.analysis.distributions accepts (any case, spaces around the name)."""
FILE_REFUSED = (
    "empirical(FILE) reads a file on the server, and the app's visitors may not name the "
    "server's files; give a distribution by its parameters instead, e.g. triangular(LOW, MODE, "
    "HIGH) (econ montecarlo on the command line reads your own files)"
)


def file_distributions(distributions: Mapping[str, str]) -> list[str]:
    """Paths whose distribution would read a file (`empirical(...)`), which the app refuses
    before anything is parsed or opened."""
    return [
        path
        for path, text in distributions.items()
        if isinstance(text, str) and _READS_A_FILE.match(text)
    ]


class ProgressExecutor(SerialExecutor):
    """Runs chunks one after another in this process and calls `report(done, total)` after each."""

    def __init__(self, report: Callable[[int, int], None]):
        self.report = report

    def map_unordered(self, func, tasks):
        tasks = list(tasks)
        for i, task in enumerate(tasks):
            result = func(task)
            self.report(i + 1, len(tasks))
            yield result


def numeric_paths(base: Scenario) -> list[str]:
    """Numeric fields a batch can vary that the base scenario sets (tornado and Monte Carlo)."""
    from econ.analysis.validation import field_specs

    out = []
    for path, spec in field_specs().items():
        if spec.kind == "choice":
            continue
        node: object = base
        for part in path.split("."):
            node = getattr(node, part, None)
        if node is not None:
            out.append(path)
    return out


def bounded_ranges(
    base: Scenario, paths: Sequence[str], pct: float
) -> tuple[dict[str, tuple], list[str]]:
    """+-pct percent around each path's base value, clipped to the field's declared bounds
    (e.g. utilization.share <= 1); the notes say which swings were clipped and to what."""
    from econ.analysis.sensitivity import UnmovedRange, percent_ranges
    from econ.analysis.validation import BatchInputError
    from econ.ui.fmt import number_format
    from econ.ui.form import path_label, shown_value

    def unmoved(path: str, value) -> BatchInputError:  # in the page's words: no --range or --pct
        if value == 0:
            why = f"is 0 in the scenario, and ±{pct:g}% of 0 is 0"
            instead = "take it out of Inputs (the data table below takes a range of it)"
        else:
            shown = number_format(shown_value(path, value))
            why = f"is {shown} in the scenario, and ±{pct:g}% of it rounds to it both ways"
            instead = "give a wider swing, or take it out of Inputs"
        return BatchInputError(
            f"{path_label(path)} {why}, so the tornado cannot swing it; {instead}"
        )

    try:
        swung = percent_ranges(base, list(paths), pct)
    except UnmovedRange as exc:
        raise unmoved(exc.path, exc.value) from None
    ranges, notes = {}, []
    for path, (low, high) in swung.items():
        if low == high:  # a swing too small for a float (±1e-14% of 0.3261): the run refused
            # "range market.price_usd_per_mtok=0.3261,0.3261: LOW equals HIGH", in --range's words
            raise unmoved(path, low)
        ranges[path] = field_clipped(path, low, high)
        if ranges[path] != (low, high):
            notes.append(path)
    return ranges, notes


def field_clipped(path: str, low: float, high: float) -> tuple[float, float]:
    """(low, high) of a dotted path clipped to the field's declared bounds (utilization.share
    at most 1), in the field's stored unit."""
    import math

    from econ.analysis.validation import field_specs

    spec = field_specs().get(path)
    if spec is None:
        return low, high
    integer = spec.kind == "int"
    if spec.ge is not None:
        low, high = max(low, spec.ge), max(high, spec.ge)
    if spec.gt is not None and low <= spec.gt:
        low = spec.gt + 1 if integer else math.nextafter(spec.gt, math.inf)
    if spec.le is not None:
        low, high = min(low, spec.le), min(high, spec.le)
    if spec.lt is not None and high >= spec.lt:
        high = spec.lt - 1 if integer else math.nextafter(spec.lt, -math.inf)
    if integer:  # a whole-number field's bound as a whole number: 12, not the 12.0 declared
        low, high = (int(v) if float(v).is_integer() else v for v in (low, high))
    return low, high


def bound_problem(path: str, value: float) -> str | None:
    """What is wrong with `value` (stored unit) for a dotted path's declared bounds, in the unit
    the form shows it ("150 % is above 100 % (expected at most 100 %)" for a share of 1.5);
    None when it is within them."""
    from econ.analysis.validation import field_specs
    from econ.bounds import bound_text, number_text, past_bound, within_bounds
    from econ.ui.form import BOUND_KEYS, unit_message

    spec = field_specs().get(path)
    if spec is None:
        return None
    for kind, key in BOUND_KEYS.items():
        bound = getattr(spec, key)
        if bound is not None and not within_bounds(value, {key: bound}):
            error = {"input": value, "type": kind, "ctx": {key: bound}}
            return unit_message(path, error) or past_bound(
                number_text(value), key, bound_text(bound)
            )
    return None


def tornado(
    base: Scenario, ranges: Mapping[str, tuple], outputs: Sequence[str], hold_debt: bool = False
):
    """One-at-a-time swings over `ranges` (from bounded_ranges); where `hold_debt`, every case
    holds the base case's sized loan (`econ.analysis.committed.hold_job`)."""
    from econ.analysis import tornado as run_tornado

    return run_tornado(base, dict(ranges), outputs=tuple(outputs), hold_debt=hold_debt)


def montecarlo(
    base: Scenario,
    distributions: Mapping[str, str],
    n: int,
    seed: int,
    sampling: str,
    report: Callable[[int, int], None],
    hold_debt: bool = False,
):
    """econ.analysis.montecarlo keeping every row, with progress after each chunk; where
    `hold_debt`, every scenario holds the base case's sized loan and the loan's breach figures
    are outputs too (as `econ montecarlo --hold-debt`)."""
    from econ.analysis import montecarlo as run_montecarlo
    from econ.analysis.montecarlo import BLOCK_SIZE
    from econ.analysis.runner import default_outputs
    from econ.analysis.validation import BatchInputError

    refused = file_distributions(distributions)
    if refused:  # the page says so first; this guards any other caller in the app
        raise BatchInputError(f"{', '.join(refused)}: {FILE_REFUSED}")
    from econ.analysis.distributions import parse_distribution

    return run_montecarlo(
        base,
        # parsed as from a visitor, whose messages list no empirical(...)
        {p: parse_distribution(d, path=p, files=False) for p, d in distributions.items()},
        n,
        seed=seed,
        sampling=sampling,
        outputs=default_outputs(hold_debt),
        keep_rows=True,
        executor=ProgressExecutor(report),
        chunk_size=BLOCK_SIZE,
        hold_debt=hold_debt,
    )


def fan(base: Scenario, rows: pd.DataFrame, paths: Sequence[str], line: str) -> pd.DataFrame:
    """Quantiles over draws of the cumulative monthly `line` (first FAN_DRAWS draws) [USD].

    Returns one row per month with columns month, p5, p25, p50, p75, p95.
    """
    from econ.analysis.validation import prepare_columns
    from econ.batch import ScenarioBatch
    from econ.engine import project

    sample = rows.head(FAN_DRAWS)
    columns = {p: sample[p].to_numpy() for p in paths}
    batch = ScenarioBatch.repeat(base, len(sample), prepare_columns(base, columns))
    result = project(batch)
    cumulative = np.cumsum(np.asarray(result.lines[line], dtype=float), axis=1)
    # a month no draw defines (every value NaN: a price near the float limit overflows) has
    # no band, and numpy is not asked for one (it warns "All-NaN slice")
    bands = np.full((len(FAN_QUANTILES), cumulative.shape[1]), np.nan)
    defined = ~np.isnan(cumulative).all(axis=0)
    if defined.any():
        bands[:, defined] = np.nanquantile(cumulative[:, defined], FAN_QUANTILES, axis=0)
    frame = pd.DataFrame({"month": result.months})
    for q, band in zip(FAN_QUANTILES, bands, strict=True):
        frame[f"p{round(q * 100)}"] = band
    return frame[frame["month"] <= int(result.horizon_months.max())]


MAX_TABLE_CELLS = 2_500
"""Largest two-way data table the app projects (50 x 50)."""


def axis_values(low: float, high: float, steps: int, integer: bool = False) -> list[float]:
    """`steps` evenly spaced values from low to high (whole numbers, deduplicated, for ints)."""
    values = np.linspace(float(low), float(high), int(steps)).tolist()
    if integer:
        values = list(dict.fromkeys(int(round(v)) for v in values))
    return values


def data_table(
    base: Scenario,
    row_path: str,
    row_values: Sequence[float],
    column_path: str,
    column_values: Sequence[float],
    output: str,
    hold_debt: bool = False,
) -> pd.DataFrame:
    """A spreadsheet's two-way data table: `output` for every (row value, column value) pair,
    projected as one grid sweep (econ.analysis.sweep, one batch). Rows are indexed by the row
    input's values, columns by the column input's (stored units). Where `hold_debt`, every cell
    holds the base case's sized loan, and ``attrs["held_loan"]`` says what is held."""
    from econ.analysis import sweep
    from econ.analysis.validation import BatchInputError

    if row_path == column_path:
        raise BatchInputError(f"{row_path} is both the row and the column input; pick two inputs")
    cells = len(row_values) * len(column_values)
    if cells > MAX_TABLE_CELLS:
        raise BatchInputError(
            f"{len(row_values)} x {len(column_values)} = {cells:,} cells; expected at most "
            f"{MAX_TABLE_CELLS:,}"
        )
    grid = {row_path: list(row_values), column_path: list(column_values)}
    result = sweep(base, grid=grid, hold_debt=hold_debt)
    rows = result.rows
    table = rows.pivot_table(index=row_path, columns=column_path, values=output, aggfunc="first")
    table = table.reindex(index=list(row_values), columns=list(column_values))
    table.attrs["held_loan"] = result.metadata.get("held_loan")
    return table
