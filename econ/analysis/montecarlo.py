"""Monte Carlo: distributions over numeric scenario fields, rank correlation, summary statistics.

A MonteCarloPlan names the distribution of each varied field, an optional rank-correlation matrix
(imposed by Iman-Conover within each sampling block), the sampling (pseudo-random or Sobol), the
number of scenarios and one root seed. Scenario i's inputs depend only on the plan and i (see
econ.analysis.sampling), so results are identical for every executor, worker count and chunk
size. The run keeps per-scenario rows or only streaming summaries: quantiles P5/P10/P50/P90/P95,
mean, standard deviation, probability of loss, value at risk and expected shortfall of NPV.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from econ import strict_json
from econ.analysis.distributions import Discrete, Distribution, Empirical, parse_distribution
from econ.analysis.runner import (
    MAIN_OUTPUTS,
    Job,
    RunResult,
    check_outputs,
    check_run_options,
    default_outputs,
    run,
)
from econ.analysis.sampling import (
    SAMPLINGS,
    SOBOL_BITS,
    SamplingError,
    block_bounds,
    block_count,
    block_generator,
    check_correlation,
    check_seed,
    iman_conover,
    random_unit,
    sobol_balance_note,
    sobol_unit,
)
from econ.analysis.validation import (
    BatchInputError,
    check_rules,
    check_values,
    prepare_columns,
    resolve_path,
    validate_rows,
)
from econ.batch import check_scenario
from econ.scenario.models import Scenario

BLOCK_SIZE = 4096
"""Rows per sampling block: the unit of random streams and of rank correlation."""


@dataclass(frozen=True)
class MonteCarloPlan:
    """What to sample.

    Attributes
    ----------
    distributions : dotted path -> Distribution (kept in the order of the paths, which is the
        order of the sampling dimensions, whatever order they are given in)
    n : number of scenarios
    seed : root seed (non-negative integer)
    sampling : "random", "sobol" (scrambled) or "sobol-plain"
    correlation : Spearman rank correlation matrix over the distributions, or None
    block_size : rows per sampling block
    outputs : engine outputs to keep and summarize
    """

    distributions: Mapping[str, Distribution]
    n: int
    seed: int = 0
    sampling: str = "random"
    correlation: np.ndarray | None = None
    block_size: int = BLOCK_SIZE
    outputs: tuple[str, ...] = MAIN_OUTPUTS
    paths: tuple[str, ...] = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "paths", tuple(self.distributions))
        if not self.distributions:
            raise BatchInputError("a Monte Carlo plan needs at least one distribution (--dist)")
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer):
            hint = (
                f" ({int(self.n)}, not {self.n!r}: a number written 1e4 is a float in Python)"
                if isinstance(self.n, float) and self.n.is_integer() and self.n >= 1
                else ""
            )
            raise SamplingError(
                f"n = {self.n!r}: expected a whole number of scenarios, 1 or more{hint}"
            )
        if self.n < 1:
            raise SamplingError(f"n = {self.n!r}: expected a positive number of scenarios")
        object.__setattr__(self, "seed", check_seed(self.seed))
        if self.sampling not in SAMPLINGS:
            raise SamplingError(
                f"sampling = {self.sampling!r}: expected one of: " + ", ".join(SAMPLINGS)
            )
        if self.sampling.startswith("sobol"):
            most = 2**SOBOL_BITS - (self.sampling == "sobol-plain")  # plain skips the origin
            if self.n > most:
                raise SamplingError(
                    f"n = {self.n:,}: {self.sampling} sampling draws at most {most:,} points; "
                    "expected fewer scenarios, or --sampling random"
                )
        if not isinstance(self.block_size, int) or self.block_size < 1:
            raise SamplingError(f"block size = {self.block_size!r}: expected a positive integer")
        object.__setattr__(self, "outputs", check_outputs(self.outputs))
        for path, dist in self.distributions.items():
            _check_distribution(path, dist)
        if self.correlation is not None:
            c = check_correlation(self.correlation, list(self.paths))
            if c.shape[0] != len(self.paths):
                raise SamplingError(
                    f"rank correlation matrix is {c.shape[0]}x{c.shape[0]}; expected one row per "
                    f"distribution ({len(self.paths)})"
                )
            smallest = self.n if self.n < self.block_size else self.block_size
            if smallest < len(self.paths) + 2:
                raise SamplingError(
                    f"rank correlation of {len(self.paths)} inputs needs at least "
                    f"{len(self.paths) + 2} scenarios per sampling block, got {smallest}"
                )
            object.__setattr__(self, "correlation", c)
        self._by_path()

    def _by_path(self) -> None:
        """The distributions (and the correlation's rows and columns) ordered by path: a
        sampling dimension is a path's place in that order, so the order --dist gives them in
        draws nothing different, and a plan written with its keys sorted (a memo's stamp, a run's
        fingerprint) is the plan that ran."""
        order = sorted(self.paths)
        if list(self.paths) == order:
            return
        place = [self.paths.index(p) for p in order]
        object.__setattr__(self, "distributions", {p: self.distributions[p] for p in order})
        object.__setattr__(self, "paths", tuple(order))
        if self.correlation is not None:
            object.__setattr__(self, "correlation", self.correlation[np.ix_(place, place)])

    def to_dict(self) -> dict:
        return {
            "distributions": {p: d.to_dict() for p, d in self.distributions.items()},
            "n": int(self.n),
            "seed": self.seed,
            "sampling": self.sampling,
            "correlation": None if self.correlation is None else self.correlation.tolist(),
            "block_size": self.block_size,
            "outputs": list(self.outputs),
        }


def _check_distribution(path: str, dist: Distribution) -> None:
    """The distribution's sampled support against the field's bounds and kind."""
    spec = resolve_path(path, what="distribution path")
    if not isinstance(dist, Distribution):
        example = "uniform(LOW, HIGH)"
        if isinstance(dist, tuple | list) and len(dist) == 2:
            example = f"uniform({dist[0]}, {dist[1]})"
        raise BatchInputError(
            f"{path} = {dist!r}: expected a distribution, its text form (e.g. '{example}') or "
            "an econ.analysis.distributions object; a Monte Carlo run draws from a "
            "distribution, and a (low, high) range is for tornado, sobol and morris"
        )
    if spec.kind == "choice":
        if not isinstance(dist, Discrete):
            raise BatchInputError(
                f"{path} = {dist}: {path} is a choice ({', '.join(spec.choices)}); expected "
                f"discrete({', '.join(spec.choices)})"
            )
        unknown = [v for v in dist.values if str(v) not in spec.choices]
        if unknown:
            raise BatchInputError(
                f"{path} = {dist}: {unknown[0]!r} is not a choice; expected one of: "
                + ", ".join(spec.choices)
            )
        return
    if isinstance(dist, Discrete) and not dist.numeric:
        raise BatchInputError(f"{path} = {dist}: expected numbers for a numeric field")
    if spec.kind == "int":
        if isinstance(dist, Discrete):
            draws = np.asarray(dist.values, dtype=float)
        elif isinstance(dist, Empirical):
            draws = dist.sorted_
        else:
            draws = np.array([0.5])
        if np.any(draws != np.round(draws)):
            raise BatchInputError(
                f"{path} = {dist}: {path} takes whole numbers; expected discrete(...) of whole "
                "numbers or an empirical column of whole numbers"
            )
    low, high = dist.support()
    ends = np.array([low, high])
    if spec.outside(ends).any() or not np.all(np.isfinite(ends)):
        if isinstance(dist, Discrete | Empirical):  # (values given one by one: none to truncate)
            bad = [v for v in _values(dist) if spec.outside(np.array([v])).any()] or [high]
            raise BatchInputError(
                f"{path} = {dist}: {bad[0]:g} is one of its values; expected {spec.expected()} "
                "for every value"
            )
        raise BatchInputError(
            f"{path} = {dist}: can draw values from {low:g} to {high:g}; expected {spec.expected()}"
            " for every draw. Narrow the distribution, or truncate it, e.g. normal(MEAN, SD, "
            "low=L, high=H)"
        )


def _values(dist) -> list[float]:
    """The values a discrete or empirical distribution draws from."""
    values = dist.values if isinstance(dist, Discrete) else dist.sorted_
    return np.asarray(values, dtype=float).tolist()


def parse_dists(
    items: Sequence[str], base_dir: str | os.PathLike | None = None, files: bool = True
) -> dict:
    """`PATH=DIST(...)` items into {path: Distribution}; `files`: whether empirical(FILE) may
    read a file (`parse_distribution`)."""
    out: dict[str, Distribution] = {}
    for item in items:
        if "=" not in item:
            raise BatchInputError(
                f"--dist {item!r}: expected PATH=DIST(ARGS), e.g. "
                "market.price_decline_annual=triangular(0.15,0.3,0.5)"
            )
        path, text = (s.strip() for s in item.split("=", 1))
        resolve_path(path, what="distribution path")
        if path in out:
            raise BatchInputError(f"--dist {path} is given twice")
        out[path] = parse_distribution(text, path=path, base_dir=base_dir, files=files)
    return out


def parse_correlations(items: Sequence[str], paths: Sequence[str]) -> np.ndarray | None:
    """`PATH1,PATH2=RHO` items into a rank-correlation matrix over `paths` (None if no items)."""
    if not items:
        return None
    index = {p: i for i, p in enumerate(paths)}
    c = np.eye(len(paths))
    given: dict[tuple[int, int], str] = {}
    for item in items:
        pair, _, rho = item.partition("=")
        names = [s.strip() for s in pair.split(",")]
        if len(names) != 2 or not rho:
            raise BatchInputError(f"--corr {item!r}: expected PATH1,PATH2=RHO")
        for name in names:
            if name not in index:
                raise BatchInputError(
                    f"--corr {item!r}: {name} has no distribution; expected one of: "
                    + ", ".join(paths)
                )
        try:
            value = float(rho)
        except ValueError:
            raise BatchInputError(f"--corr {item!r}: {rho!r} is not a number") from None
        if not -1.0 <= value <= 1.0:  # NaN too
            raise BatchInputError(
                f"--corr {item!r}: {rho.strip()} is not a rank correlation; expected a number "
                "from -1 to 1"
            )
        i, j = index[names[0]], index[names[1]]
        if i == j:
            raise BatchInputError(f"--corr {item!r}: expected two different paths")
        pair = (min(i, j), max(i, j))
        if pair in given:
            raise BatchInputError(
                f"--corr {item!r}: the pair is already given ({given[pair]!r}); expected each "
                "pair once"
            )
        given[pair] = item
        c[i, j] = c[j, i] = value
    return c


def unit_points(plan: MonteCarloPlan, start: int, stop: int) -> np.ndarray:
    """Unit points of scenarios start..stop-1 (whole sampling blocks), correlation applied."""
    d = len(plan.paths)
    count = block_count(plan.n, plan.block_size)
    first, offset = divmod(start, plan.block_size)
    if offset or first >= count:
        raise ValueError(f"chunk start {start} is not the start of a sampling block")
    parts = []
    sobol = None
    if plan.sampling.startswith("sobol"):
        sobol = sobol_unit(plan.seed, start, stop, d, scramble=plan.sampling == "sobol")
    b = first
    while b < count and b * plan.block_size < stop:
        lo, hi = block_bounds(plan.n, plan.block_size, b)
        rng = block_generator(plan.seed, b)
        u = random_unit(rng, hi - lo, d) if sobol is None else sobol[lo - start : hi - start]
        if plan.correlation is not None:
            u = iman_conover(u, plan.correlation, rng)
        parts.append(u)
        b += 1
    return np.vstack(parts)


class MonteCarlo(Job):
    """A Monte Carlo run of `plan` around `base`."""

    kind = "montecarlo"

    def __init__(self, base: Scenario, plan: MonteCarloPlan):
        self.base = check_scenario(base, what="base")
        self.plan_ = plan
        self.n = int(plan.n)
        self.block_size = plan.block_size
        self.outputs = plan.outputs
        self.seed = plan.seed
        # The base's other fields must allow every drawn value: check the rules at the extremes.
        self._check_extremes()

    def _check_extremes(self) -> None:
        ends = {}
        for path, dist in self.plan_.distributions.items():
            if isinstance(dist, Discrete) and not dist.numeric:
                spec = resolve_path(path)
                ends[path] = np.array([spec.choices.index(str(v)) for v in dist.values])
            elif isinstance(dist, Discrete):
                ends[path] = np.unique(np.asarray(dist.values, dtype=float))
            else:
                ends[path] = np.array(dist.support())
        # Every combination of the ends (up to 4,096 of them), else each input's ends in turn.
        sizes = [len(v) for v in ends.values()]
        if np.prod(sizes, dtype=float) <= 4096:
            grid = np.meshgrid(*ends.values(), indexing="ij")
            columns = {p: g.ravel() for p, g in zip(ends, grid, strict=True)}
        else:
            size = max(sizes)
            columns = {p: np.resize(v, size) for p, v in ends.items()}
        n = len(next(iter(columns.values())))
        columns = prepare_columns(self.base, columns)  # a price given clears the other
        where = {"source": "distribution support", "row_label": "draw"}
        check_rules(self.base, columns, n, **where)
        # The models' own rules (all of them) on up to 64 of the extreme combinations.
        picks = np.unique(np.linspace(0, n - 1, min(n, 64)).astype(int))
        validate_rows(self.base, columns, picks.tolist(), **where)

    def values(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """Field values from unit points (one column per distribution)."""
        out = {}
        for j, (path, dist) in enumerate(self.plan_.distributions.items()):
            if isinstance(dist, Discrete) and not dist.numeric:
                spec = resolve_path(path)
                codes = np.array([spec.choices.index(str(v)) for v in dist.values], dtype=np.int8)
                out[path] = codes[dist.index(u[:, j])]
            else:
                out[path] = dist.ppf(u[:, j])
        return out

    def inputs(self, start, stop):
        columns = self.values(unit_points(self.plan_, start, stop))
        where = {"source": "sampled", "row_label": "scenario", "row_offset": start}
        from econ.analysis.validation import field_specs

        specs = field_specs()
        for path, values in columns.items():
            check_values(specs[path], values, **where)
        prepared = prepare_columns(self.base, columns)  # as ScenarioBatch.repeat takes them
        check_rules(self.base, prepared, stop - start, **where)
        size = self.block_size
        first = -(-start // size)
        last = min(block_count(self.n, size), -(-stop // size))
        local = [b * size - start for b in range(first, last)]
        validate_rows(self.base, prepared, local, **where)
        return columns

    def plan(self):
        return self.plan_.to_dict()

    def input_paths(self):
        return self.plan_.paths

    def notes(self):
        note = sobol_balance_note(self.n, self.plan_.sampling)
        return [note] if note else []


def montecarlo(
    base: Scenario,
    distributions: Mapping[str, Distribution | str],
    n: int,
    seed: int = 0,
    sampling: str = "random",
    correlation: np.ndarray | Mapping[tuple[str, str], float] | None = None,
    outputs: Sequence[str] | None = None,
    block_size: int = BLOCK_SIZE,
    keep_rows: bool = False,
    **run_options,
) -> RunResult:
    """Run a Monte Carlo simulation; returns a RunResult with `.summary` (and `.rows` if asked).

    Parameters
    ----------
    base : base scenario
    distributions : path -> Distribution or its text form, e.g. "triangular(0.15, 0.3, 0.5)"
    n : number of scenarios
    seed : root seed
    sampling : "random", "sobol" or "sobol-plain"
    correlation : rank-correlation matrix in distribution order, or {(path1, path2): rho}
    outputs : engine outputs to summarize; default `econ.analysis.runner.default_outputs`:
        MAIN_OUTPUTS, and with `hold_debt=True` covenant_breach_months and first_breach_month
        too (so the summary has the probability of a covenant breach), as `econ montecarlo
        --hold-debt` has
    keep_rows : also return one row per scenario (inputs and outputs)
    run_options : executor, chunk_size, store, progress, exact_limit, overwrite, hold_debt,
        out_file
    """
    check_scenario(base, what="base")
    if not isinstance(distributions, Mapping):
        raise BatchInputError(
            f"distributions is {type(distributions).__name__}; expected a mapping of dotted path "
            "to distribution, e.g. {'utilization.share': 'pert(0.5, 0.7, 0.9)'}"
        )
    dists = {
        p: (parse_distribution(d, path=p) if isinstance(d, str) else d)
        for p, d in distributions.items()
    }
    if isinstance(correlation, Mapping):
        correlation = parse_correlations(
            [f"{a},{b}={rho}" for (a, b), rho in correlation.items()], list(dists)
        )
    check_run_options(run_options, "montecarlo", set_here=("keep_rows", "summarize"))
    if outputs is None:
        outputs = default_outputs(bool(run_options.get("hold_debt", False)))
    plan = MonteCarloPlan(
        dists, n, seed, sampling, correlation, block_size=block_size, outputs=check_outputs(outputs)
    )
    return run(MonteCarlo(base, plan), keep_rows=keep_rows, summarize=True, **run_options)


def summary_json(result: RunResult) -> dict:
    """JSON-ready summary of a Monte Carlo run with its metadata."""
    return {
        "econ_version": result.metadata["econ_version"],
        "metadata": _jsonable(result.metadata),
        **result.summary.as_dict(),
    }


def _jsonable(value):
    return json.loads(strict_json.dumps(value, default=str))
