"""Sensitivity: tornado (one at a time), Sobol first-order and total indices, Morris screening.

The estimators are pure functions of model outputs, so they are tested on analytic functions
(Ishigami) as well as used on the engine:

- tornado: each input set to its low and then its high value, the others at base; the swing
  |y(high) - y(low)| ranks the inputs (Eschenbach, Interfaces 22 (1992) 40-60);
- Sobol indices from a Saltelli design: matrices A and B of N points each (the first and last d
  coordinates of a 2d-dimensional sequence) and A_B^i (A with column i from B), N (d + 2) runs;
  first order S_i = mean((f(B) - f0) (f(A_B^i) - f(A))) / V (Saltelli et al., Computer Physics
  Communications 181 (2010) 259-270, table 2 (b), centred on f0, the mean of f over A and B, so
  that adding a constant to f changes nothing, as it changes no index), total ST_i = mean((f(A) - f(A_B^i))^2) / (2V)
  (Jansen, Computer Physics Communications 117 (1999) 35-43; Saltelli 2010 table 2 (f)), with V
  the variance of f over A and B; confidence intervals by bootstrap over the N rows (Archer,
  Saltelli & Sobol, J. Statist. Comput. Simul. 58 (1997) 99-120);
- Morris elementary effects on r trajectories of a p-level grid, summarized by mu, mu* (mean
  absolute effect) and sigma (Morris, Technometrics 33 (1991) 161-174; Campolongo, Cariboni &
  Saltelli, Environ. Model. Softw. 22 (2007) 1509-1518).
"""

from __future__ import annotations

import reprlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from econ.analysis.distributions import Discrete, Distribution, Uniform, parse_distribution
from econ.analysis.montecarlo import _check_distribution
from econ.analysis.runner import (
    UNMOVED_RELATIVE,
    Job,
    RunResult,
    check_outputs,
    check_run_options,
    check_size,
    run,
)
from econ.analysis.sampling import (
    SAMPLINGS,
    SOBOL_BITS,
    SamplingError,
    block_generator,
    check_seed,
    random_unit,
    sobol_balance_note,
    sobol_unit,
)
from econ.analysis.validation import (
    BatchInputError,
    check_columns,
    coerce_column,
    field_specs,
    refuse_quoted_number,
    resolve_path,
)
from econ.batch import check_scenario
from econ.scenario.models import Scenario

DEFAULT_OUTPUTS = ("npv_usd", "lcot_usd_per_mtok", "irr_project_annual")
ROWS_NEEDED = ("keep_rows", "summarize")
"""Run options the sensitivity methods set themselves: they read every row of their design."""
METHODS = ("tornado", "sobol", "morris")
INPUT_COLUMNS = ("low", "high", "base")
"""The columns of a tornado's table that hold the input's values, not figures of the output."""
RANDOM_BLOCK = 4096


# --- estimators on plain arrays -------------------------------------------------------------


def tornado_swings(y_base: float, y_low: np.ndarray, y_high: np.ndarray) -> np.ndarray:
    """Swing of each input: |y(high) - y(low)| [output units]."""
    return np.abs(np.asarray(y_high, dtype=float) - np.asarray(y_low, dtype=float))


TIE_RELATIVE = 1e-9
"""Tornado swings of one output within this share of its largest swing are ties. Inputs that
move an output through one product (price, utilization and throughput all scale the seed's
revenue) give swings equal but for the engine's last bits (1.4e-15 relative on the seed's NPV),
whose order is noise; 1e-9 is far above that and far below any difference worth a rank (the
bound `UNMOVED_RELATIVE` puts on "no effect")."""

SWING_FINITE, SWING_UNDEFINED, SWING_UNDEFINED_BOTH, SWING_NONE = 0, 1, 2, 3
"""Kinds of tornado swing, in rank order: a finite swing that moves the output, an output
undefined at one end (no swing, but a value at the other end), an output undefined at both
ends (nothing measured: it says nothing of the input's effect), an input with no effect."""


def tornado_ranks(swings: np.ndarray, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order and ranks of one output's tornado inputs, given in the inputs' order.

    Finite swings come first, largest first; then the inputs whose output is undefined at one
    end, then those whose output is undefined at both, each in the order given; then those with
    no effect. Ties share a rank, the smallest of their
    places ("1, 1, 1, 4"), and keep the order given: finite swings within `TIE_RELATIVE` of the
    largest swing of the output from the first (largest) swing of their group, and all inputs
    with no effect.

    Parameters
    ----------
    swings : array (d,)  |y(high) - y(low)| [output units], NaN where undefined
    kinds : int array (d,)  SWING_FINITE, SWING_UNDEFINED, SWING_UNDEFINED_BOTH or SWING_NONE

    Returns
    -------
    (order, ranks) : int arrays (d,)  input indices in table order, and each row's rank
    """
    swings, kinds = np.asarray(swings, dtype=float), np.asarray(kinds)
    finite = np.flatnonzero(kinds == SWING_FINITE)
    by_size = finite[np.argsort(-swings[finite], kind="stable")]
    tolerance = TIE_RELATIVE * swings[by_size[0]] if by_size.size else 0.0
    groups: list[list[int]] = []
    for i in by_size.tolist():
        if groups and swings[groups[-1][0]] - swings[i] <= tolerance:
            groups[-1].append(i)
        else:
            groups.append([i])
    for kind in (SWING_UNDEFINED, SWING_UNDEFINED_BOTH):
        groups += [[i] for i in np.flatnonzero(kinds == kind).tolist()]
    flat = np.flatnonzero(kinds == SWING_NONE).tolist()
    groups += [flat] if flat else []
    order, ranks = [], []
    for group in groups:
        ranks += [len(order) + 1] * len(group)
        order += sorted(group)
    return np.array(order, dtype=np.intp), np.array(ranks, dtype=np.int64)


def sobol_indices(
    f_a: np.ndarray, f_b: np.ndarray, f_ab: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """First-order (Saltelli 2010) and total (Jansen 1999) Sobol indices.

    The first-order estimator is Saltelli's, mean(f(B) (f(A_B^i) - f(A))) / V, with f(B) centred
    on the mean of f over A and B: its expectation is the same, but uncentred its error grows
    with the output's mean (revenue and EBITDA = revenue - a constant gave utilization's
    first-order index as 0.35 and 0.46 from the same 1,024 random points; both are 0.61 centred,
    0.60 exact).

    Parameters
    ----------
    f_a, f_b : arrays (N,)  outputs on matrices A and B
    f_ab : array (d, N)  outputs on A_B^i, i = 0..d-1

    Returns
    -------
    (first, total) : arrays (d,)  [fraction of output variance]
    """
    f_a, f_b, f_ab = (np.asarray(x, dtype=float) for x in (f_a, f_b, f_ab))
    variance = np.var(np.concatenate([f_a, f_b]))
    if not variance > 0:
        nan = np.full(f_ab.shape[0], np.nan)
        return nan, nan.copy()
    centred = f_b - np.mean(np.concatenate([f_a, f_b]))
    first = np.mean(centred[None, :] * (f_ab - f_a[None, :]), axis=1) / variance
    total = 0.5 * np.mean((f_a[None, :] - f_ab) ** 2, axis=1) / variance
    return first, total


def sobol_bootstrap(
    f_a: np.ndarray,
    f_b: np.ndarray,
    f_ab: np.ndarray,
    resamples: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Half-widths of bootstrap percentile intervals of the first and total indices."""
    n = len(f_a)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31 - 2,)))
    firsts, totals = [], []
    for _ in range(resamples):
        idx = rng.integers(0, n, n)
        s1, st = sobol_indices(f_a[idx], f_b[idx], f_ab[:, idx])
        firsts.append(s1)
        totals.append(st)
    tail = (1 - level) / 2 * 100

    def half(x):
        # an index undefined in every resample (an output that does not vary) has no interval
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "All-NaN slice": NaN, as meant
            upper, lower = np.nanpercentile(x, [100 - tail, tail], axis=0)
        return (upper - lower) / 2

    return half(np.array(firsts)), half(np.array(totals))


def morris_trajectories(d: int, r: int, levels: int = 4, seed: int = 0) -> np.ndarray:
    """Unit points of r Morris trajectories, array (r (d + 1), d) on the grid {0, 1/(p-1), ..., 1}.

    Each trajectory starts at a random grid point from which every coordinate can move by
    delta = p / (2 (p - 1)), then moves one coordinate at a time, in random order and direction
    (Morris 1991, section 4; Saltelli et al., *Global Sensitivity Analysis: The Primer*, 2008,
    section 3.3, matrix B*).
    """
    if levels < 2 or levels % 2:
        raise SamplingError(f"Morris levels = {levels}: expected an even number >= 2")
    if r < 2:
        raise SamplingError(f"Morris trajectories = {r}: expected at least 2")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31 - 3,)))
    delta = levels / (2 * (levels - 1))
    starts = np.arange(levels // 2) / (levels - 1)  # grid values from which x + delta <= 1
    out = []
    for _ in range(r):
        x = rng.choice(starts, size=d)
        signs = rng.choice([-1.0, 1.0], size=d)
        point = np.where(signs > 0, x, x + delta)  # so every move stays on the grid in [0, 1]
        rows = [point.copy()]
        for factor in rng.permutation(d):
            point[factor] += signs[factor] * delta
            rows.append(point.copy())
        out.append(np.array(rows))
    return np.vstack(out)


def morris_effects(
    unit: np.ndarray, y: np.ndarray, d: int, counts: bool = False
) -> tuple[np.ndarray, ...]:
    """mu, mu* and sigma of the elementary effects of each input (per unit of its range).

    Parameters
    ----------
    unit : array (r (d + 1), d)  trajectory points in the unit cube (as from morris_trajectories)
    y : array (r (d + 1),)  model output at each point
    counts : also return how many of each input's r effects are defined (finite): the effects
        behind its mu, mu* and sigma
    """
    unit = np.asarray(unit, dtype=float).reshape(-1, d + 1, d)
    y = np.asarray(y, dtype=float).reshape(-1, d + 1)
    dx = np.diff(unit, axis=1)  # (r, d, d): one coordinate changes per step
    moved = np.argmax(np.abs(dx), axis=2)
    step = np.take_along_axis(dx, moved[..., None], axis=2)[..., 0]
    effect = np.diff(y, axis=1) / step
    effects = np.full((unit.shape[0], d), np.nan)
    rows = np.arange(unit.shape[0])[:, None]
    effects[rows, moved] = effect
    # Over each input's finite effects; NaN where it has none (the output is null along all its
    # moves, as an IRR that is not unique), and sigma NaN below two.
    finite = np.isfinite(effects)
    count = finite.sum(axis=0)
    values = np.where(finite, effects, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.where(count > 0, values.sum(axis=0) / count, np.nan)
        mu_star = np.where(count > 0, np.abs(values).sum(axis=0) / count, np.nan)
        spread = np.where(finite, effects - mu, 0.0)
        sigma = np.where(count > 1, np.sqrt((spread**2).sum(axis=0) / (count - 1)), np.nan)
    if counts:
        return mu, mu_star, sigma, count
    return mu, mu_star, sigma


def ishigami(x: np.ndarray, a: float = 7.0, b: float = 0.1) -> np.ndarray:
    """Ishigami & Homma test function sin x1 + a sin^2 x2 + b x3^4 sin x1 on [-pi, pi]^3
    (Proc. ISUMA 1990, 398-403); its Sobol indices have closed forms (`ishigami_indices`)."""
    x = np.asarray(x, dtype=float)
    return np.sin(x[:, 0]) + a * np.sin(x[:, 1]) ** 2 + b * x[:, 2] ** 4 * np.sin(x[:, 0])


def ishigami_indices(a: float = 7.0, b: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form first-order and total Sobol indices of the Ishigami function
    (Sobol' & Levitan, Comput. Phys. Commun. 117 (1999) 52-61)."""
    pi = np.pi
    v1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * pi**8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / v, np.array([v1 + v13, v2, v13]) / v


# --- designs ---------------------------------------------------------------------------------


def unit_points(seed: int, start: int, stop: int, d: int, sampling: str) -> np.ndarray:
    """Points start..stop-1 of a d-dimensional unit sequence, addressed by index."""
    if sampling.startswith("sobol"):
        return sobol_unit(seed, start, stop, d, scramble=sampling == "sobol")
    parts = []
    for block in range(start // RANDOM_BLOCK, (stop - 1) // RANDOM_BLOCK + 1):
        u = random_unit(block_generator(seed, block), RANDOM_BLOCK, d)
        lo = max(start - block * RANDOM_BLOCK, 0)
        hi = min(stop - block * RANDOM_BLOCK, RANDOM_BLOCK)
        parts.append(u[lo:hi])
    return np.vstack(parts)


def saltelli_unit(
    seed: int, n_base: int, d: int, sampling: str, start: int, stop: int
) -> np.ndarray:
    """Rows start..stop-1 of the Saltelli design, order A, B, A_B^0 .. A_B^(d-1), N rows each."""
    rows = np.arange(start, stop)
    group, j = rows // n_base, rows % n_base
    lo, hi = int(j.min()), int(j.max()) + 1
    points = unit_points(seed, lo, hi, 2 * d, sampling)[j - lo]
    a, b = points[:, :d], points[:, d:]
    out = a.copy()
    is_b = group == 1
    out[is_b] = b[is_b]
    for i in range(d):
        mask = group == 2 + i
        out[mask, i] = b[mask, i]
    return out


def _values(dists: Mapping[str, Distribution], unit: np.ndarray) -> dict[str, np.ndarray]:
    out = {}
    specs = field_specs()
    for k, (path, dist) in enumerate(dists.items()):
        if isinstance(dist, Discrete) and not dist.numeric:
            codes = np.array([specs[path].choices.index(str(v)) for v in dist.values], np.int8)
            out[path] = codes[dist.index(unit[:, k])]
        else:
            out[path] = dist.ppf(unit[:, k])
    return out


class DesignJob(Job):
    """Precomputed override rows (tornado, Morris): small designs held whole."""

    def __init__(self, kind, base, columns, outputs, plan, source):
        self.kind = kind
        self.base = base
        self.columns = columns
        self.n = len(next(iter(columns.values())))
        self.outputs = outputs
        self._plan = plan
        check_columns(base, columns, self.n, source=source, row_label="run", sample_rows=16)

    def inputs(self, start, stop):
        return {p: v[start:stop] for p, v in self.columns.items()}

    def input_paths(self):
        return tuple(self.columns)

    def plan(self):
        return self._plan


class _Planned(Job):
    """A design's size before it is built, for `check_size`."""

    def __init__(self, kind, n, paths, outputs):
        self.kind, self.n, self._paths, self.outputs = kind, n, paths, outputs

    def input_paths(self):
        return self._paths


class SaltelliJob(Job):
    """The N (d + 2) runs of a Saltelli design, rows computed from their index."""

    kind = "sobol"

    def __init__(self, base, dists, n_base, seed, sampling, outputs):
        self.base = base
        self.dists = dict(dists)
        self.n_base = n_base
        self.seed = seed
        self.sampling = sampling
        self.outputs = outputs
        self.n = n_base * (len(self.dists) + 2)

    def input_paths(self):
        return tuple(self.dists)

    def notes(self):
        note = sobol_balance_note(self.n_base, self.sampling, "base samples")
        return [note] if note else []

    def inputs(self, start, stop):
        unit = saltelli_unit(self.seed, self.n_base, len(self.dists), self.sampling, start, stop)
        columns = _values(self.dists, unit)
        check_columns(
            self.base,
            columns,
            stop - start,
            source="Sobol design",
            row_label="run",
            row_offset=start,
            sample_rows=4,
        )
        return columns

    def plan(self):
        return {
            "method": "sobol",
            "distributions": {p: d.to_dict() for p, d in self.dists.items()},
            "n_base": self.n_base,
            "seed": self.seed,
            "sampling": self.sampling,
            "outputs": list(self.outputs),
        }


# --- engine-level analyses --------------------------------------------------------------------


@dataclass
class SensitivityResult:
    """A sensitivity table (one row per output and input) and the run behind it."""

    method: str
    table: pd.DataFrame
    run: RunResult

    def as_dict(self) -> dict:
        records = self.table.astype(object).where(self.table.notna(), None).to_dict("records")
        return {
            "econ_version": self.run.metadata["econ_version"],
            "method": self.method,
            "metadata": self.run.metadata,
            "results": records,
        }


def parse_ranges(items: Sequence[str]) -> dict[str, tuple]:
    """`PATH=LOW,HIGH` items into {path: (low, high)} (TOML values: numbers or choice names)."""
    from econ.scenario.io import parse_override

    out = {}
    for item in items:
        path, _, raw = item.partition("=")
        path = path.strip()
        parts = [p.strip() for p in raw.split(",")]
        if len(parts) != 2 or not all(parts):
            raise BatchInputError(f"--range {item!r}: expected PATH=LOW,HIGH")
        resolve_path(path, what="range path")
        if path in out:
            raise BatchInputError(f"--range {path} is given twice; give each input once")
        values = tuple(parse_override(f"{path}={p}")[1] for p in parts)
        for text, value in zip(parts, values, strict=True):
            refuse_quoted_number("--range", path, text, value)
        out[path] = values
    return out


def combine_inputs(*given: tuple[str, Mapping]) -> dict:
    """The inputs of several options, e.g. ("--range", ranges), ("--vary", ranges), ("--dist",
    distributions), as one mapping; an input that two of them give is refused, never silently
    replaced by the later one."""
    out: dict = {}
    source: dict[str, str] = {}
    for option, inputs in given:
        for path, value in inputs.items():
            if path in out:
                raise BatchInputError(
                    f"{path} is given twice, by {source[path]} and {option}; give each input once"
                )
            out[path] = value
            source[path] = option
    return out


def check_range(path: str, pair) -> np.ndarray:
    """The (low, high) of an input's range as field values (a choice by its index), refused
    where it does not span a range: LOW equal to HIGH (the input would not move), or above it."""
    spec = resolve_path(path, what="range path")
    try:
        low, high = pair
    except (TypeError, ValueError):
        raise BatchInputError(f"range {path} = {pair!r}: expected (LOW, HIGH)") from None
    shown = f"{path}={_show(low)},{_show(high)}"
    for end, value in (("LOW", low), ("HIGH", high)):
        if _no_value(value):  # `--range PATH=nan,1.3` was taken, its low end "no covenant"
            raise BatchInputError(
                f"range {shown}: {end} is {_show(value)}; expected a number at both ends (a "
                "range cannot leave the field empty)"
            )
    values = coerce_column(
        path, [low, high], source=f"range {path}", row_label="value", row_offset=1
    )
    if spec.kind == "choice":
        if values[0] == values[1]:
            raise BatchInputError(
                f"range {shown}: the same choice twice, so {path} would not move; expected two "
                "different choices"
            )
    elif values[0] == values[1]:
        raise BatchInputError(
            f"range {shown}: LOW equals HIGH, so {path} would not move; expected LOW < HIGH"
        )
    elif values[0] > values[1]:
        raise BatchInputError(f"range {shown}: LOW is above HIGH; expected LOW < HIGH")
    return values


def _no_value(value) -> bool:
    """None, NaN, or text that is empty, "none" or "nan": no end of a range."""
    if value is None:
        return True
    if isinstance(value, str):
        text = value.strip().lower()
        return text in ("", "none") or text.lstrip("+-") == "nan"
    return isinstance(value, float | np.floating) and bool(np.isnan(value))


def _plan_value(value):
    """A range end as the plan's JSON holds it: a number as a number, a choice by its name."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return int(value)
    return float(value)


def _show(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class UnmovedRange(BatchInputError):
    """An input that +-pct% of its base value would not move (a base of 0, or a whole number
    that rounds back to itself): `path` and its base `value`, for a caller that words it in its
    own terms (the app's Risk page has no --range)."""

    def __init__(self, message: str, path: str = "", value=None):
        super().__init__(message)
        self.path, self.value = path, value


def percent_ranges(base: Scenario, paths: Sequence[str], pct: float) -> dict[str, tuple]:
    """Ranges of +-pct percent around each path's base value (whole numbers for int fields)."""
    if not pct > 0:
        raise BatchInputError(f"--pct {pct!r}: expected a percentage above 0")
    out = {}
    for path in paths:
        spec = resolve_path(path, what="--vary path")
        if path in out:
            raise BatchInputError(f"--vary {path} is given twice; give each input once")
        if spec.kind == "choice":
            raise BatchInputError(f"{path} is a choice; give its values with --range {path}=A,B")
        value = _base(base, path)
        if value is None:
            raise BatchInputError(
                f"{path} is not set in the base scenario; give --range {path}=LOW,HIGH"
            )
        if value == 0:
            raise UnmovedRange(
                f"{path} is 0 in the base scenario, and +-{pct:g}% of 0 is 0, so it would not "
                f"move; give its range instead: --range {path}=LOW,HIGH",
                path,
                value,
            )
        low, high = (_decimal(value * (1 + sign * pct / 100)) for sign in (-1, 1))
        if spec.kind == "int":
            low, high = round(low), round(high)
            if low == high:
                raise UnmovedRange(
                    f"{path} is {value} in the base scenario, and +-{pct:g}% of it rounds to "
                    f"{low} both ways (a whole-number field), so it would not move; give a "
                    f"larger --pct or its range: --range {path}=LOW,HIGH",
                    path,
                    value,
                )
        out[path] = (min(low, high), max(low, high))
    return out


def _decimal(value: float) -> float:
    """A product of decimals rounded to the 15 significant digits a double holds of a decimal:
    0.3261 x 0.9 is 0.29349, where the product's binary error printed 0.29349000000000003 (and
    6 x 1.1 6.6000000000000005) in the tornado's table."""
    return float(f"{value:.15g}")


def _base(base: Scenario, path: str):
    node: object = base
    for part in path.split("."):
        node = getattr(node, part)
    return node


def tornado(
    base: Scenario,
    ranges: Mapping[str, tuple],
    outputs: Sequence[str] = DEFAULT_OUTPUTS,
    **run_options,
) -> SensitivityResult:
    """One-at-a-time sensitivity: each input at its low and high value, the others at base.

    Returns a table with, per output and input: low, high, output at low, high and base, swing,
    rank and note; rows sorted by output then rank (`tornado_ranks`). Rank 1 is the largest
    swing; swings equal within `TIE_RELATIVE` share a rank, noted "tied", in the order the
    inputs were given; an input whose output is undefined (NaN) at an end has no swing and ranks
    after every finite swing, noted "undefined at low" (high), and one undefined at both ends
    after those, noted "undefined at low and high" (nothing measured); an input that leaves the
    output as it was (its swing 0, up to the engine's last bits) ranks last, noted "no effect": a
    flat input never heads a tornado whose other inputs make the output undefined. An end that
    sells the GPUs before the end of their useful life, at book value, where the base does not
    is noted too (`BOOK_SALE`).
    """
    base = check_scenario(base, what="base")
    outputs = check_outputs(outputs)
    check_run_options(run_options, "tornado", set_here=ROWS_NEEDED)
    if not isinstance(ranges, Mapping):
        shown = _shown_paths(ranges)
        raise BatchInputError(
            f"ranges is {type(ranges).__name__} {reprlib.repr(ranges)}; expected a mapping of "
            f"dotted path to (low, high), e.g. {{{shown[0]!r}: (0.5, 0.9)}}, or "
            f"percent_ranges(base, {shown!r}, 10) for 10% either side of the base's values"
        )
    if not ranges:
        raise BatchInputError("a tornado needs at least one input range (--range or --vary)")
    paths = list(ranges)
    d = len(paths)
    specs = {p: resolve_path(p, what="range path") for p in paths}
    base_values = {}
    for p in paths:
        value = _base(base, p)
        base_values[p] = specs[p].choices.index(value) if specs[p].kind == "choice" else value
    columns = {}
    for k, path in enumerate(paths):
        low, high = check_range(path, ranges[path])
        base_value = np.nan if base_values[path] is None else base_values[path]
        column = np.full(2 * d + 1, base_value, dtype=float)
        column[1 + 2 * k] = low
        column[2 + 2 * k] = high
        columns[path] = column.astype(np.int8) if specs[path].kind == "choice" else column
    plan = {
        "method": "tornado",
        "ranges": {p: [_plan_value(v) for v in r] for p, r in ranges.items()},
        "outputs": list(outputs),
    }
    job = DesignJob("tornado", base, columns, outputs, plan, source="tornado")
    job.with_warnings = True  # for the ends that sell the GPUs at book value (`_book_sale`)
    job.runs_base = True  # scenario 0
    result = run(job, **run_options)
    rows = result.rows
    sold = _book_sale(rows, d)
    records = []
    for name in outputs:
        y = rows[name].to_numpy(dtype=float)
        y_low, y_high = y[1::2], y[2::2]
        swings = tornado_swings(y[0], y_low, y_high)
        kinds = np.array([_swing_kind(lo, hi) for lo, hi in zip(y_low, y_high, strict=True)])
        order, ranks = tornado_ranks(swings, kinds)
        tied = np.bincount(ranks)[ranks] > 1
        for k, rank, shares in zip(order.tolist(), ranks.tolist(), tied.tolist(), strict=True):
            path = paths[k]
            low, high = ranges[path]
            notes = [_swing_note(y_low[k], y_high[k])]
            notes.append(TIED if shares and kinds[k] == SWING_FINITE else "")
            notes.append(sold[k])
            records.append(
                {
                    "output": name,
                    "input": path,
                    "low": low,
                    "high": high,
                    "base": _base(base, path),
                    "output_low": y_low[k],
                    "output_high": y_high[k],
                    "output_base": y[0],
                    "swing": float(swings[k]),
                    "rank": rank,
                    "note": "; ".join(n for n in notes if n),
                }
            )
        _note_ties(result.metadata, name, [paths[k] for k in order], ranks, kinds[order])
    for k, path in enumerate(paths):
        ends = [rows[name].to_numpy(dtype=float)[[0, 1 + 2 * k, 2 + 2 * k]] for name in outputs]
        if all(_unmoved(y) for y in ends):
            low, high = ranges[path]
            result.metadata.setdefault("notes", []).append(
                f"{path} {UNMOVED} ({', '.join(outputs)}) between {low} and {high}: it "
                f"has no effect on {base.name}"
            )
    if _sells_at_book(rows, 0):
        result.metadata.setdefault("notes", []).append(
            f"{base.name} sells its GPUs before the end of their useful life: at every point of "
            "the tornado the remaining book value is assumed sold at book value (see econ "
            "project's warnings)"
        )
    table = pd.DataFrame(records)
    return SensitivityResult("tornado", table.reset_index(drop=True), result)


TIED = "tied"
"""The tornado's note on an input whose swing equals another's (within `TIE_RELATIVE`): they
share a rank."""

UNMOVED = "moves no output"
"""How the run's note on an input without effect words it."""

BOOK_SALE = "is assumed sold at book value"
"""How econ.engine's warning `sold_before_life` ends: the horizon ends before the useful life,
and the remaining book value is taken as the sale price."""


def _book_sale(rows: pd.DataFrame, d: int) -> list[str]:
    """Per tornado input, the note naming the ends whose scenario sells the GPUs before the end
    of their useful life at book value where the base does not: a longer `depreciation.life_years`
    raises the NPV mostly through that assumption, which `econ project` warns of."""
    if _sells_at_book(rows, 0):
        return [""] * d  # (said once, in the run's notes)
    out = []
    for k in range(d):
        ends = [
            end
            for end, row in (("low", 1 + 2 * k), ("high", 2 + 2 * k))
            if _sells_at_book(rows, row)
        ]
        out.append(f"at {' and '.join(ends)}, the remaining book value {BOOK_SALE}" if ends else "")
    return out


def _sells_at_book(rows: pd.DataFrame, row: int) -> bool:
    if "warnings" not in rows:  # (chunks kept by a run without them)
        return False
    return BOOK_SALE in str(rows["warnings"].iloc[row] or "")


def _note_ties(metadata: dict, output: str, inputs, ranks, kinds) -> None:
    """A run note per group of tied finite swings: which inputs share which rank."""
    for rank in sorted(set(ranks[(kinds == SWING_FINITE)].tolist())):
        tied = [p for p, r in zip(inputs, ranks, strict=True) if r == rank]
        if len(tied) > 1:
            metadata.setdefault("notes", []).append(
                f"{', '.join(tied)}{TIE_NOTE.format(output=output)} (within {TIE_RELATIVE:g} of "
                f"its largest): they share rank {rank}, in the order given"
            )


TIE_NOTE = " move {output} by the same swing"
"""The words of a run's note on tied inputs that name the output (`_note_ties`)."""


def output_notes(notes: Sequence[str], output: str, outputs: Sequence[str]) -> list[str]:
    """A tornado run's notes that concern `output`, of a run over `outputs`: all but the notes
    on tied swings of the other outputs (a chart of NPV listed the inputs tied on LCOT)."""
    others = [TIE_NOTE.format(output=o) for o in outputs if o != output]
    return [n for n in notes if not any(o in n for o in others)]


NO_EFFECT = "no effect"
"""The tornado's note on an input whose low and high give the same output (it ranks last)."""


def _swing_kind(y_low: float, y_high: float) -> int:
    if not (np.isfinite(y_low) or np.isfinite(y_high)):
        return SWING_UNDEFINED_BOTH
    if not (np.isfinite(y_low) and np.isfinite(y_high)):
        return SWING_UNDEFINED
    if _unmoved(np.array([y_low, y_high], dtype=float)):
        return SWING_NONE
    return SWING_FINITE


def _swing_note(y_low: float, y_high: float) -> str:
    """'' for a finite swing that moves the output, else why the swing does not rank by size."""
    kind = _swing_kind(y_low, y_high)
    if kind in (SWING_UNDEFINED, SWING_UNDEFINED_BOTH):
        undefined = [end for end, y in (("low", y_low), ("high", y_high)) if not np.isfinite(y)]
        return f"undefined at {' and '.join(undefined)}"
    return NO_EFFECT if kind == SWING_NONE else ""


def _unmoved(values: np.ndarray) -> bool:
    """Whether outputs are all defined and equal up to the engine's last bits."""
    if not np.isfinite(values).all():
        return False
    size = max(float(np.abs(values).max()), 1.0)
    return float(values.max() - values.min()) <= UNMOVED_RELATIVE * size


def sobol(
    base: Scenario,
    distributions: Mapping[str, Distribution | str | tuple],
    n: int = 1024,
    seed: int = 0,
    sampling: str = "sobol",
    outputs: Sequence[str] = DEFAULT_OUTPUTS,
    resamples: int = 200,
    **run_options,
) -> SensitivityResult:
    """Sobol first-order and total indices of each output, N (d + 2) engine runs.

    `distributions` maps each input to a Distribution, its text form, or a (low, high) range
    (uniform). Inputs are independent. An output undefined (null) at some point of the design
    has no indices: they are null, `used` says at how many of the N base samples it is defined
    at every point, and the run's notes say why (`UNDEFINED_SOBOL`).
    """
    outputs = check_outputs(outputs)
    check_run_options(run_options, "sobol", set_here=ROWS_NEEDED)
    dists = _dists(distributions, "sobol")
    seed = check_seed(seed)
    if sampling not in SAMPLINGS:
        raise SamplingError(f"sampling = {sampling!r}: expected one of: " + ", ".join(SAMPLINGS))
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise SamplingError(f"n = {n!r}: expected at least 2 base samples")
    most = 2**SOBOL_BITS - (sampling == "sobol-plain")  # plain skips the origin
    if sampling.startswith("sobol") and n > most:
        raise SamplingError(
            f"n = {n:,}: {sampling} sampling draws at most {most:,} base samples; expected fewer"
        )
    job = SaltelliJob(base, dists, n, seed, sampling, outputs)
    result = run(job, **run_options)
    d = len(dists)
    records = []
    for name in outputs:
        y = result.rows[name].to_numpy().reshape(d + 2, n)
        f_a, f_b, f_ab = y[0], y[1], y[2:]
        ok = np.isfinite(y).all(axis=0)
        nan = np.full(d, np.nan)
        s1, st, c1, ct = nan, nan, nan, nan
        if ok.all():
            s1, st = sobol_indices(f_a, f_b, f_ab)
            if resamples:
                c1, ct = sobol_bootstrap(f_a, f_b, f_ab, resamples, seed=seed)
        else:
            result.metadata.setdefault("notes", []).append(
                UNDEFINED_SOBOL.format(output=name, used=int(ok.sum()), n=n)
            )
        for k, path in enumerate(dists):
            records.append(
                {
                    "output": name,
                    "input": path,
                    "distribution": str(dists[path]),
                    "first_order": s1[k],
                    "first_order_conf": c1[k],
                    "total": st[k],
                    "total_conf": ct[k],
                    "used": int(ok.sum()),
                }
            )
    return SensitivityResult("sobol", pd.DataFrame(records), result)


UNDEFINED_SOBOL = (
    "{output} has a value at every point of the Sobol design in {used:,} of the {n:,} base "
    "samples only: its Sobol indices are null. Leaving out the samples where it is undefined "
    "makes the inputs dependent, and the estimates are not Sobol indices; analyse an output "
    "defined in every scenario, such as npv_usd or mirr_project_annual, or narrow the ranges "
    "to where {output} is defined"
)
"""The run's note on an output undefined at some point of a Sobol design, whose indices are
null: Saltelli's and Jansen's estimators need f at A, B and every A_B^i of the same independent
sample, and the samples where an output is defined everywhere are not one (the seed's project
IRR, defined at all points in 4,251 of 16,384 samples, gave first-order indices of 0.599 and
0.521, summing to 1.12)."""


def morris(
    base: Scenario,
    distributions: Mapping[str, Distribution | str | tuple],
    trajectories: int = 20,
    levels: int = 4,
    seed: int = 0,
    outputs: Sequence[str] = DEFAULT_OUTPUTS,
    **run_options,
) -> SensitivityResult:
    """Morris screening: mu, mu* and sigma of elementary effects, r (d + 1) engine runs.

    Grid levels are mapped through each input's distribution, so inputs need bounded
    distributions (ranges); effects are per unit of the input's quantile range.
    """
    outputs = check_outputs(outputs)
    check_run_options(run_options, "morris", set_here=ROWS_NEEDED)
    dists = _dists(distributions, "morris")
    for path, dist in dists.items():
        if not isinstance(dist, Discrete) and not np.all(
            np.isfinite(dist.ppf(np.array([0.0, 1.0])))
        ):
            raise BatchInputError(f"{path} = {dist}: Morris screening needs a bounded distribution")
    d = len(dists)
    seed = check_seed(seed)  # "5" from the command line: the plan and metadata hold 5
    # the design is held whole, built trajectory by trajectory: its size is checked first
    check_size(_Planned("morris", trajectories * (d + 1), tuple(dists), outputs), keep_rows=True)
    unit = morris_trajectories(d, trajectories, levels, seed)
    columns = _values(dists, unit)
    plan = {
        "method": "morris",
        "distributions": {p: x.to_dict() for p, x in dists.items()},
        "trajectories": trajectories,
        "levels": levels,
        "seed": seed,
        "outputs": list(outputs),
    }
    job = DesignJob("morris", base, columns, outputs, plan, source="Morris design")
    job.seed = seed  # the metadata's seed, as Monte Carlo's and Sobol's
    result = run(job, **run_options)
    records = []
    for name in outputs:
        mu, mu_star, sigma, used = morris_effects(
            unit, result.rows[name].to_numpy(), d, counts=True
        )
        for k, path in enumerate(dists):
            records.append(
                {
                    "output": name,
                    "input": path,
                    "distribution": str(dists[path]),
                    "mu": mu[k],
                    "mu_star": mu_star[k],
                    "sigma": sigma[k],
                    "used": int(used[k]),
                }
            )
    table = pd.DataFrame(records)
    return SensitivityResult("morris", table, result)


def _dists(distributions, caller: str) -> dict[str, Distribution]:
    if not isinstance(distributions, Mapping):
        shown = _shown_paths(distributions)
        raise BatchInputError(
            f"distributions is {type(distributions).__name__} {reprlib.repr(distributions)}; "
            f"{caller}() expects a mapping of dotted path to a distribution, its text form or a "
            f"(low, high) range, e.g. {{{shown[0]!r}: (0.5, 0.9)}}"
        )
    if not distributions:
        raise BatchInputError("expected at least one input (--range, --vary or --dist)")
    out = {}
    for path, spec in distributions.items():
        if isinstance(spec, Distribution):
            dist = spec
        elif isinstance(spec, str):
            dist = parse_distribution(spec, path=path)
        else:
            check_range(path, spec)
            low, high = spec
            field = resolve_path(path)
            if field.kind == "choice":
                dist = Discrete((low, high), (0.5, 0.5))
            elif field.kind == "int":
                dist = Discrete(
                    tuple(range(int(low), int(high) + 1)),
                    tuple([1 / (int(high) - int(low) + 1)] * (int(high) - int(low) + 1)),
                )
            else:
                dist = Uniform(float(low), float(high))
        _check_distribution(path, dist)
        out[path] = dist
    return out


def analyze_function(
    func: Callable[[np.ndarray], np.ndarray],
    distributions: Sequence[Distribution],
    n: int = 1024,
    seed: int = 0,
    sampling: str = "sobol",
) -> tuple[np.ndarray, np.ndarray]:
    """Sobol first-order and total indices of a vectorized function of d inputs (for tests and
    for checking the estimators on known functions). `func` maps (rows, d) values to (rows,)."""
    d = len(distributions)
    unit = saltelli_unit(check_seed(seed), n, d, sampling, 0, n * (d + 2))
    values = np.column_stack([dist.ppf(unit[:, k]) for k, dist in enumerate(distributions)])
    y = np.asarray(func(values), dtype=float).reshape(d + 2, n)
    return sobol_indices(y[0], y[1], y[2:])


def _shown_paths(value) -> list[str]:
    """The dotted paths a list (or other iterable) given where a mapping goes seems to hold,
    for the example of an error; utilization.share where it holds none."""
    items = [value] if isinstance(value, str) else value
    try:
        paths = [p for p in list(items)[:3] if isinstance(p, str)]
    except TypeError:
        paths = []
    return paths or ["utilization.share"]
