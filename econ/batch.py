"""ScenarioBatch: many scenarios as a struct of numpy arrays, one row per scenario.

Every numeric scenario field is a column named by its dotted path (`capex.gpu_price_usd`); choices
(`Literal` fields) are stored as the index of the choice. Sweeps and Monte Carlo replace columns of a
batch built from one base scenario, so a million scenarios never become a million pydantic objects.
"""

from __future__ import annotations

import datetime as dt
import os
import reprlib
import sys
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel

from econ import memory
from econ.errors import InputError, in_file
from econ.financing import balance_schedule_table
from econ.plausibility import rack_fit_warnings, rack_size_warnings, reference_code
from econ.scenario.depreciation_models import (
    METHOD_INPUTS,
    compile_policies,
    inputs_without_effect,
    no_effect_warnings,
    policy_inputs,
)
from econ.scenario.financing_models import compile_tranches
from econ.scenario.gain_models import compile_throughput
from econ.scenario.market_models import compile_market
from econ.scenario.models import Scenario, set_elsewhere_message
from econ.text import LISTED_LIMIT, listed
from econ.throughput.resolve import at_slo, resolve_history, resolve_throughput


@cache
def field_kinds() -> dict[str, tuple[str, tuple]]:
    """Dotted path -> (kind, choices) for the scalar fields the engine reads.

    kind is "float", "int" or "choice"; strings, dates, lists and tables are not batch columns.
    """
    kinds: dict[str, tuple[str, tuple]] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            annotation = info.annotation
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
            base = args[0] if union and len(args) == 1 else annotation
            path = prefix + name
            if isinstance(base, type) and issubclass(base, BaseModel):
                walk(base, path + ".")
            elif base is float or base is int:
                kinds[path] = (base.__name__, ())
            elif typing.get_origin(base) is typing.Literal:
                kinds[path] = ("choice", typing.get_args(base))

    walk(Scenario, "")
    return kinds


@dataclass(frozen=True)
class ScenarioBatch:
    """n scenarios as numpy columns; a scenario with vintages takes one row per vintage.

    Attributes
    ----------
    names, start_dates, horizon_months : arrays (n,)  per scenario: name, month 0 (datetime64[M]),
        resolved horizon [months]
    columns : dotted path -> array (rows,)  every numeric field, per row; None (absent) is NaN
    row_scenario : int array (rows,)  the scenario each row belongs to; rows of a scenario are
        contiguous and in order
    row_names : array (rows,)  "base" for a scenario's own fleet, else the vintage's name
    step_months, step_gains : arrays (rows, k)  throughput steps, padded with month 10**6, gain 0
    extras : arrays (rows, ...) of inputs that are not numeric columns: depreciation tables and
        flags (compile_policies), throughput steps' ramps and tables (compile_throughput), price
        tables (compile_market)
    row_warnings : per row, warnings about its inputs (e.g. the provenance of a measured curve)
    stack : the capital stack of every scenario, one mapping per tranche with arrays (n, ...)
        (econ.scenario.financing_models.compile_tranches), for econ.capital.stack_schedule
    """

    names: np.ndarray
    start_dates: np.ndarray
    columns: Mapping[str, np.ndarray]
    step_months: np.ndarray
    step_gains: np.ndarray
    horizon_months: np.ndarray
    row_scenario: np.ndarray
    row_names: np.ndarray
    extras: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    row_warnings: tuple[tuple[str, ...], ...] = ()
    stack: tuple[dict, ...] = ()
    scenarios: tuple[Scenario, ...] = field(default=(), repr=False)

    @property
    def n(self) -> int:
        """Number of scenarios."""
        return len(self.names)

    @property
    def rows(self) -> int:
        """Number of rows (vintages of all scenarios)."""
        return len(self.row_scenario)

    @property
    def source_file(self) -> str | None:
        """The scenario file every scenario of the batch was read from, if they share one."""
        files = {s.source_file for s in self.scenarios}
        return files.pop() if len(files) == 1 else None

    @property
    def one_row_per_scenario(self) -> bool:
        return self.rows == self.n

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        # The dataclass repr printed every column and row warning: 413,642 characters for
        # ScenarioBatch.repeat(base, 100_000), flooding a notebook cell.
        from econ.labels import counted, first_names

        horizon = ""
        if self.n:
            low, high = int(self.horizon_months.min()), int(self.horizon_months.max())
            span = counted(high, "month") if low == high else f"{low}-{high} months"
            horizon = f", horizon {span}"
        return (
            f"<ScenarioBatch: {counted(self.n, 'scenario')}, {counted(self.rows, 'row')}"
            f"{horizon}; [{first_names(self.names, self.n)}]; {counted(len(self.columns), 'column')}; "
            "see .names, .columns, .row_warnings>"
        )

    def __getitem__(self, path: str) -> np.ndarray:
        return self.columns[path]

    def slice(self, start: int, stop: int) -> ScenarioBatch:
        """Scenarios start..stop-1 (with all their rows) as a batch of their own."""
        # (rows are in scenario order: a search, not a scan of every row for each of many chunks)
        first, last = np.searchsorted(self.row_scenario, (start, stop))
        take = slice(int(first), int(max(first, last)))
        return ScenarioBatch(
            names=self.names[start:stop],
            start_dates=self.start_dates[start:stop],
            columns={path: values[take] for path, values in self.columns.items()},
            step_months=self.step_months[take],
            step_gains=self.step_gains[take],
            horizon_months=self.horizon_months[start:stop],
            row_scenario=self.row_scenario[take] - start,
            row_names=self.row_names[take],
            extras={k: v[take] for k, v in self.extras.items()},
            row_warnings=self.row_warnings[take],
            stack=tuple(
                {k: v[start:stop] if isinstance(v, np.ndarray) else v for k, v in t.items()}
                for t in self.stack
            ),
            scenarios=self.scenarios[start:stop],
        )

    @classmethod
    def from_scenarios(cls, scenarios: Scenario | Iterable[Scenario]) -> ScenarioBatch:
        """Compile validated scenarios into a batch (in order; vintages become extra rows)."""
        items = _scenario_items(scenarios)
        if not items:
            raise InputError(NO_SCENARIOS)
        check_distinct_names(items)
        expanded = [s.expand() for s in items]
        rows = [row for group in expanded for row in group]
        borrowed = [warning for s in items for warning in s.borrowed_figures()]
        rack_sizes = [warning for s in items for warning in rack_size_warnings(s)]
        rack_fits = [found for s in items for found in rack_fit_warnings(s)]
        row_scenario = np.repeat(np.arange(len(items)), [len(g) for g in expanded])
        columns = {}
        for path, (kind, choices) in field_kinds().items():
            raw = [_get(s, path) for s in rows]
            if kind == "choice":
                # -1 where the choice sits in an optional section that is left out
                columns[path] = np.array(
                    [-1 if v is None else choices.index(v) for v in raw], dtype=np.int8
                )
            else:
                columns[path] = np.array([np.nan if v is None else v for v in raw], dtype=float)
        starts = [row.start_date for row in rows]
        throughput = compile_throughput([row.throughput for row in rows], starts)
        market = compile_market([row.market for row in rows], starts)
        series_warnings = _rental_series(rows, items, row_scenario, columns, market)
        resale_warnings = _resale_tables(rows, items, row_scenario, market)
        first_rows = np.r_[True, row_scenario[1:] != row_scenario[:-1]]
        series_warnings = [
            (*(table_warnings(row.market, row.start_date, row.horizon) if first else ()), *a, *b)
            for row, first, a, b in zip(
                rows, first_rows, series_warnings, resale_warnings, strict=True
            )
        ]
        # a fixed throughput's MLPerf reference (econ.plausibility), set below; -1: measured or
        # simulated
        references = np.full(len(rows), -1, dtype=np.int64)
        extras = {
            "financing.balance_schedule": balance_schedule_table(
                [row.financing.balance_schedule for row in rows]
            ),
            **compile_payments([row.capex for row in rows]),
            **compile_policies([row.depreciation for row in rows]),
            **{f"throughput.{k}": v for k, v in throughput.items()},
            **{f"market.{k}": v for k, v in market.items()},
            "throughput.catalog_reference": references,
        }
        # Measured and simulated sources become a number here, once per distinct source.
        row_warnings = []
        unused = no_effect_warnings([row.depreciation for row in rows])
        # per hardware, rack cooling, GPU count and power section (sections are frozen)
        hardware_warnings: dict[tuple, tuple[str, ...]] = {}
        for i, row in enumerate(rows):
            try:
                fitted = resolve_history(row.throughput, row.fleet.hardware)
                resolved = resolve_throughput(
                    row.throughput, row.fleet.hardware, (row.name, row.description)
                )
            except InputError as exc:
                raise in_file(exc, items[row_scenario[i]].source_file) from None
            history_warnings = ()
            if fitted is not None:
                columns["throughput.gain_rate_annual"][i] = fitted.rate_annual
                history_warnings = (
                    f"software gains from MLPerf history: {fitted.rate_annual:+.1%} a year "
                    f"({fitted.description})",
                    *(f"history: {c}" for c in fitted.caveats),
                )
            defaults = items[row_scenario[i]].default_sections
            if defaults:
                history_warnings = (
                    "sections taken from defaults (not given in the scenario): "
                    + ", ".join(defaults),
                    *history_warnings,
                )
            key = (row.fleet.hardware, row.facility.rack_cooling, row.fleet.gpu_count, row.power)
            if key not in hardware_warnings:
                from econ.racks import catalog_warnings  # the catalogs load only here

                hardware_warnings[key] = catalog_warnings(*key)
            history_warnings = (*hardware_warnings[key], *history_warnings)
            history_warnings = (*rack_fits[i], *history_warnings)
            if rack_sizes[i]:
                history_warnings = (rack_sizes[i], *history_warnings)
            if borrowed[i]:
                history_warnings = (borrowed[i], *history_warnings)
            history_warnings = (*series_warnings[i], *history_warnings, *unused[i])
            if resolved is None:
                references[i] = reference_code(row.fleet.hardware)
                row_warnings.append(history_warnings)
                continue
            columns["throughput.tokens_per_s_per_gpu"][i] = resolved.tokens_per_s_per_gpu
            try:
                ratio_warnings = _input_ratio(row, resolved, columns, i)
            except InputError as exc:
                raise in_file(exc, items[row_scenario[i]].source_file) from None
            history_warnings = (*ratio_warnings, *history_warnings)
            ceiling = columns["throughput.ceiling_tokens_per_s_per_gpu"]
            if np.isnan(ceiling[i]) and resolved.speed_of_light_tokens_per_s_per_gpu is not None:
                # The simulator's physical ceiling caps the scenario's software gains.
                ceiling[i] = resolved.speed_of_light_tokens_per_s_per_gpu
            row_warnings.append(
                (
                    f"throughput from {resolved.source}: {resolved.tokens_per_s_per_gpu:,.1f} "
                    f"tokens/s per GPU {at_slo(row.throughput.slo, resolved)}",
                    *(f"throughput: {w}" for w in resolved.warnings),
                    *history_warnings,
                )
            )
        return cls(
            names=np.array([s.name for s in items], dtype=object),
            start_dates=np.array(
                [
                    np.datetime64(dt.date(s.start_date.year, s.start_date.month, 1), "M")
                    for s in items
                ]
            ),
            columns=columns,
            step_months=extras.pop("throughput.step_months"),
            step_gains=extras.pop("throughput.step_gains"),
            horizon_months=np.array([s.horizon for s in items], dtype=np.int64),
            row_scenario=row_scenario,
            row_names=np.array(_row_names(items), dtype=object),
            extras=extras,
            row_warnings=tuple(row_warnings),
            stack=tuple(
                compile_tranches([s.financing.stack for s in items], [s.start_date for s in items])
            ),
            scenarios=tuple(items),
        )

    @classmethod
    def repeat(
        cls,
        scenario: Scenario,
        n: int,
        columns: Mapping[str, ArrayLike] | None = None,
        *,
        validate: bool = True,
    ) -> ScenarioBatch:
        """n copies of one scenario with some columns replaced (for sweeps and Monte Carlo).

        A replaced column applies where an override of the scenario's field would
        (`Scenario.takes_own_value`): to its own fleet and to each vintage that does not give the
        field itself, so row i is the scenario with the field set to the i-th value.

        Parameters
        ----------
        scenario : the base scenario
        n : number of scenarios
        columns : dotted path -> n values or one for all (or a pandas DataFrame of n rows whose
            columns are dotted paths); numbers, or names for choice fields. Overriding one of
            capex.gpu_price_usd and capex.system_price_usd clears the other.
        validate : check the replaced values against the scenario's rules, vectorized
            (econ.analysis.validation.check_columns: bounds, whole numbers, choices, cross-field
            rules, pydantic on sample rows); False only for values already checked (the jobs of
            econ.analysis check theirs chunk by chunk)
        """
        scenario = check_scenario(scenario)
        n = _count(n)
        columns = _given_columns(columns)
        elsewhere = scenario.set_elsewhere()
        for path in columns:
            if path in elsewhere:
                raise InputError(
                    f"{path} cannot be varied for scenario '{scenario.name}': "
                    + set_elsewhere_message(path, elsewhere[path])
                )
        kinds = field_kinds()
        for path, values in columns.items():
            if path not in kinds:
                import difflib

                close = difflib.get_close_matches(str(path), list(kinds), n=1)
                hint = (
                    f"did you mean {close[0]}?"
                    if close
                    else "expected the dotted path of one, e.g. utilization.share"
                )
                raise InputError(f"column {path!r} is not a numeric scenario field; {hint}")
            shape = np.shape(values)
            if shape not in ((), (1,), (n,)):
                got = f"{shape[0]:,} values" if len(shape) == 1 else f"an array of shape {shape}"
                raise InputError(
                    f"column {path} has {got}; expected {n:,} (one per scenario) or a single "
                    "value for all"
                )
        refuse_series_compiled(scenario, columns)
        refuse_source_resolved(scenario, columns)
        one = check_repeat_size(scenario, n)  # before any array of n rows is made
        if RESALE_BAND_PATH in columns and not scenario.market.has_resale:
            raise InputError(
                f"{RESALE_BAND_PATH} is varied but scenario '{scenario.name}' gives no resale "
                "table, so the band would change nothing; expected market.resale_value_table or "
                "market.resale_series (with share_low and share_high for a band)"
            )
        # validation imports this module: loaded here, once the batch code is in place
        from econ.analysis.validation import check_columns, given_column, prepare_columns

        columns = prepare_columns(
            scenario,
            {
                path: np.broadcast_to(given_column(path, values), (n,))
                for path, values in columns.items()
            },
        )
        if validate:
            check_columns(scenario, columns, n)
        per = one.rows
        cols = {path: np.tile(values, n) for path, values in one.columns.items()}
        series_contract = one.extras.get("market.series_contract_usd_per_gpu_hour")
        if series_contract is not None:  # the file's own prices: the series' is set below
            cols[CONTRACT_PATH] = np.tile(
                [row.market.contract_usd_per_gpu_hour for row in scenario.expand()], n
            )
        for path, values in columns.items():
            values = np.repeat(values.astype(cols[path].dtype, copy=False), per)
            taken = np.tile(scenario.takes_own_value(path), n) if per > 1 else True
            cols[path] = np.where(taken, values, cols[path])
        horizon = np.repeat(one.horizon_months, n)
        if "horizon_months" in columns or "depreciation.life_years" in columns:
            first = np.arange(n) * per
            life_months = np.maximum(1, np.rint(cols["depreciation.life_years"][first] * 12))
            explicit = cols["horizon_months"][first]
            horizon = np.where(np.isnan(explicit), life_months, explicit).astype(np.int64)
        extras = dict(one.extras)
        if series_contract is not None and horizon.max() > scenario.horizon:
            # A series is compiled up to the horizon: a longer one takes its prices that far
            # (at integer months the table's values do not depend on how far it goes).
            longest = scenario.model_copy(update={"horizon_months": int(horizon.max())})
            extras.update(
                {k: v for k, v in cls.from_scenarios(longest).extras.items() if k in SERIES_KEYS}
            )
        extras = {k: np.tile(v, (n,) + (1,) * (v.ndim - 1)) for k, v in extras.items()}
        if series_contract is not None:
            # The series' extrapolated prices move with a sampled band, as compiled ones do, and
            # so does a first contract priced from them (a row's own contract price does not).
            shift = cols[BAND_PATH] - np.tile(one.columns[BAND_PATH], n)
            extras["market.rental_table_usd_per_gpu_hour"] = extras[
                "market.rental_table_usd_per_gpu_hour"
            ] * np.exp(shift[:, None] * np.nan_to_num(extras["market.rental_table_log_sd"]))
            cols[CONTRACT_PATH] = contract_from_series(
                cols[CONTRACT_PATH],
                extras["market.series_contract_usd_per_gpu_hour"]
                * np.exp(shift * extras["market.contract_log_sd"]),
            )
        return cls(
            names=np.array([f"{scenario.name}#{i}" for i in range(n)], dtype=object),
            start_dates=np.repeat(one.start_dates, n),
            columns=cols,
            step_months=np.tile(one.step_months, (n, 1)),
            step_gains=np.tile(one.step_gains, (n, 1)),
            horizon_months=horizon,
            row_scenario=np.repeat(np.arange(n), per),
            row_names=np.tile(one.row_names, n),
            extras=extras,
            row_warnings=_method_input_rows(
                scenario,
                _catalog_rows(
                    scenario,
                    _rack_size_rows(scenario, _horizon_rows(scenario, one, horizon, per), columns),
                    cols,
                    columns,
                ),
                cols,
                columns,
            ),
            stack=tuple(
                {
                    k: np.repeat(v, n, axis=0) if isinstance(v, np.ndarray) else v
                    for k, v in t.items()
                }
                for t in one.stack
            ),
        )


REPEAT_ADVICE = (
    "build it in parts (a repeat of each slice of the columns, projected with monthly=False "
    "and joined), or run it with econ.analysis (sweep, montecarlo), which runs in chunks"
)
"""What to do instead of a `repeat` batch too large to hold."""


def check_repeat_size(
    scenario: Scenario, n: int, subject: str = "a batch", advice: str = REPEAT_ADVICE
) -> ScenarioBatch:
    """Refuse a `ScenarioBatch.repeat` of n scenarios whose arrays would take more than
    econ.memory.MAX_BATCH_BYTES, before they are made (`econ.memory.check_batch_memory`: 10^9
    scenarios grew to 22 GB and were killed with no message); returns the scenario as a batch
    of one, whose arrays are measured (`repeat` builds on it).

    Per scenario: every array of its rows (columns, extras, throughput steps, the capital
    stack's, row bookkeeping) and its name `NAME#i`, a Python string.
    """
    one = ScenarioBatch.from_scenarios(scenario)
    arrays = [
        *one.columns.values(),
        *one.extras.values(),
        one.step_months,
        one.step_gains,
        one.horizon_months,
        one.start_dates,
        one.row_scenario,
        one.row_names,
        *(v for tranche in one.stack for v in tranche.values() if isinstance(v, np.ndarray)),
    ]
    per_scenario = sum(a.nbytes for a in arrays) + 8 * (1 + one.rows)  # + name, row warnings
    per_scenario += sys.getsizeof(f"{scenario.name}#{n}")
    subject = f"{subject} of {n:,} scenarios of '{scenario.name}' ({per_scenario:,} bytes each)"
    memory.check_batch_memory(subject, n, per_scenario, "scenarios", advice)
    return one


def _rack_size_rows(scenario: Scenario, row_warnings: list, columns) -> list:
    """The rows' warnings without those of fleet.gpus_per_rack (not given, or contradicting the
    rack catalog: `econ.plausibility.rack_size_warnings`, `rack_fit_warnings`) where the batch
    varies what they read: each row then has its own value, which a vintage that gives none
    takes."""
    fit_paths = ("facility.hall_cooling", "facility.hall_max_kw_per_rack", "facility.rack_cooling")
    given = set()
    if "fleet.gpus_per_rack" in columns:
        given = {w for w in rack_size_warnings(scenario) if w}
    if "fleet.gpus_per_rack" in columns or any(p in columns for p in fit_paths):
        given |= {w for found in rack_fit_warnings(scenario) for w in found}
    if not given:
        return row_warnings
    return [tuple(w for w in warnings if w not in given) for warnings in row_warnings]


METHOD_INPUT_PATHS = tuple(
    f"depreciation.{side}{name}" for side in ("", "tax.") for name in ("method", *METHOD_INPUTS)
)
"""Paths `econ.scenario.depreciation_models.inputs_without_effect` reads."""


def _method_input_rows(scenario: Scenario, row_warnings: list, cols, columns) -> list:
    """Each row's warnings with those of depreciation inputs of no effect (a tax bonus share
    under the tax method "book") from its own values where a batch varies what they read."""
    varied = [p for p in METHOD_INPUT_PATHS if p in columns]
    if not varied:
        return row_warnings
    policies = [row.depreciation for row in scenario.expand()]
    old = no_effect_warnings(policies)
    n = len(row_warnings) // len(policies)
    values = {k: np.tile(v, n) for k, v in policy_inputs(policies).items()}
    kinds = field_kinds()
    for path in varied:
        column = cols[path]
        if kinds[path][0] == "choice":  # codes to names (-1, a section left out: None)
            column = np.array(kinds[path][1] + (None,), dtype=object)[column.astype(np.int64)]
        values[path.removeprefix("depreciation.")] = column
    new = inputs_without_effect(values)
    out = []
    for r, warnings in enumerate(row_warnings):
        base = old[r % len(policies)]
        out.append((*[w for w in warnings if w not in base], *new[r]))
    return out


CATALOG_PATHS = (
    "fleet.gpu_count",
    "facility.rack_cooling",
    "power.kw_per_gpu",
    "power.kw_per_gpu_definition",
    "power.host_overhead_share",
)
"""Batch paths that `econ.racks.catalog_warnings` reads."""


def _catalog_rows(scenario: Scenario, row_warnings: list, cols, columns) -> list:
    """Each row's warnings with the hardware-catalog ones of its own values where a batch varies
    what they read (a GPU count that is not a whole number of systems, ...): the base's would
    otherwise stand for every row. Keyed by the values, so each combination is checked once."""
    varied = [p for p in CATALOG_PATHS if p in columns]
    if not varied:
        return row_warnings
    from econ.analysis.validation import resolve_path
    from econ.racks import catalog_warnings

    bases = list(scenario.expand())
    specs = {p: resolve_path(p) for p in varied}
    choices = {p: spec.choices for p, spec in specs.items() if spec.kind == "choice"}
    found: dict[tuple, tuple[str, ...]] = {}

    def warnings_of(row, values: dict) -> tuple[str, ...]:
        key = (row.fleet.hardware, row.facility.rack_cooling, row.fleet.gpu_count, row.power)
        if values:
            power = {
                k.removeprefix("power."): v for k, v in values.items() if k.startswith("power.")
            }
            key = (
                key[0],
                values.get("facility.rack_cooling", key[1]),
                int(values.get("fleet.gpu_count", key[2])),
                row.power.model_copy(update=power) if power else row.power,
            )
        if key not in found:
            found[key] = catalog_warnings(*key)
        return found[key]

    out = []
    for r, warnings in enumerate(row_warnings):
        row = bases[r % len(bases)]
        values = {}
        for path in varied:
            value = cols[path][r].item()
            values[path] = choices[path][int(value)] if path in choices else value
        old, new = set(warnings_of(row, {})), warnings_of(row, values)
        kept = [w for w in warnings if w not in old]
        at = next((i for i, w in enumerate(warnings) if w in old), 0)
        out.append((*kept[:at], *new, *kept[at:]))
    return out


def check_scenario(value, what: str = "scenario") -> Scenario:
    """`value` if it is a Scenario, else InputError saying what it is and how to get one."""
    if isinstance(value, Scenario):
        return value
    raise InputError(f"{what} is {_described(value)}; expected a Scenario{_scenario_hint(value)}")


def check_distinct_names(scenarios: Sequence[Scenario]) -> None:
    """InputError when two scenarios of a batch share a name: names are the keys of a
    projection's output (a summary row per name, the monthly and yearly frames by name and
    month), so two scenarios of one name would be read as one, their years added together."""
    positions: dict[str, list[int]] = {}
    for i, scenario in enumerate(scenarios):
        positions.setdefault(scenario.name, []).append(i)
    for name, found in positions.items():
        if len(found) > 1:
            at = (
                ", ".join(map(str, found[:-1])) + f" and {found[-1]}"
                if len(found) <= LISTED_LIMIT
                else listed(found)
            )
            every = "both" if len(found) == 2 else "all"
            raise InputError(
                f"scenarios {at} (counted from 0) are {every} named {name!r}; names are the keys "
                "of a projection's output (one summary row per name, the monthly and yearly "
                "frames by name and month), so they would be read as one scenario: expected "
                "distinct names (set `name`, e.g. load_scenario(path, {'name': 'cheap', ...}) "
                "or scenario.model_copy(update={'name': 'cheap'}))"
            )


def _scenario_items(scenarios) -> tuple[Scenario, ...]:
    """One Scenario or an iterable of them as a tuple; anything else is InputError (a path, a
    dict or a DataFrame would otherwise be iterated: its characters, keys or column names)."""
    if isinstance(scenarios, Scenario):
        return (scenarios,)
    expected = "expected a Scenario, a list of Scenarios or a ScenarioBatch"
    if isinstance(scenarios, str | bytes | os.PathLike | Mapping) or _is_frame(scenarios):
        raise InputError(f"got {_described(scenarios)}; {expected}{_scenario_hint(scenarios)}")
    try:
        items = tuple(scenarios)
    except TypeError:
        raise InputError(f"got {_described(scenarios)}; {expected}") from None
    for i, item in enumerate(items):
        check_scenario(item, what=f"item {i}")
    return items


def _described(value) -> str:
    """What a value is, for an error: a path in full, a table by its type alone."""
    if isinstance(value, str | os.PathLike):
        return f"{type(value).__name__} {str(value)!r}"
    if isinstance(value, Mapping) or type(value).__module__.startswith("pandas"):
        return f"a {type(value).__name__}"
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _scenario_hint(value) -> str:
    if isinstance(value, str | os.PathLike):
        return f" (econ.load_scenario({str(value)!r}) reads a scenario file)"
    if isinstance(value, Mapping):
        return (
            " (econ.scenario.validate_dict(data) checks a dict of a scenario's fields; "
            "econ.load_scenario(path, overrides) applies dotted-path changes to a file)"
        )
    if _is_frame(value):
        return (
            " (a table of field values, one row per scenario, goes to "
            "ScenarioBatch.repeat(base, len(frame), frame) or "
            "econ.analysis.sweep(base, table=frame))"
        )
    return ""


def _is_frame(value) -> bool:
    """A pandas DataFrame (pandas is not imported for this: a frame exists only if it was)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def _count(n) -> int:
    """The number of scenarios of `repeat`: a whole number, 1 or more (a batch of none has no
    horizon to project, and nothing in econ builds one)."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise InputError(f"n = {n!r}: expected the number of scenarios, a whole number 1 or more")
    if n == 0:
        raise InputError(f"n = 0: {NO_SCENARIOS}; expected the number of scenarios, 1 or more")
    return int(n)


NO_SCENARIOS = "a batch needs at least one scenario, got none"


def _given_columns(columns) -> dict[str, ArrayLike]:
    """`repeat`'s columns as a dict: a mapping, or a DataFrame's columns."""
    if columns is None:
        return {}
    if _is_frame(columns):
        return {path: columns[path].to_numpy() for path in columns.columns}
    if not isinstance(columns, Mapping):
        raise InputError(
            f"columns is {_described(columns)}; expected a mapping of dotted path to values "
            "(n values or one for all), e.g. {'utilization.share': shares}, or a DataFrame "
            "whose columns are dotted paths"
        )
    return dict(columns)


BAND_PATH = "market.rental_series_band_sigmas"
CONTRACT_PATH = "market.contract_usd_per_gpu_hour"
SERIES_COMPILED = (
    "market.rental_series_term_months",
    "market.rental_decline_annual",
    "market.rental_floor_usd_per_gpu_hour",
)
"""Fields a rental series is compiled with, so a batch cannot vary them column by column."""
SERIES_KEYS = (
    "market.rental_table_months",
    "market.rental_table_usd_per_gpu_hour",
    "market.rental_table_log_sd",
)
"""Extras of a row's rental table compiled from its series (`_rental_series`)."""


def refuse_series_compiled(scenario: Scenario, paths: Iterable[str]) -> None:
    """Refuse a batch column of a field a rental series is compiled with (SERIES_COMPILED), on
    a scenario priced from market.rental_series: the column would change nothing."""
    fixed = [p for p in SERIES_COMPILED if p in paths]
    if fixed and scenario.market.rental_series is not None:
        raise InputError(
            f"{fixed[0]} cannot be varied in a batch of a scenario priced from "
            f"market.rental_series: the series is turned into prices when the scenario is "
            f"compiled; expected one scenario per value, or {BAND_PATH} for its error band"
        )


def refuse_source_resolved(scenario: Scenario, paths: Iterable[str]) -> None:
    """Refuse a batch column of a field a measured or simulated throughput source is resolved
    with (its own fields, and the SLO that picks its operating point), on a scenario that takes
    its throughput from one: the source becomes one tokens/s per GPU when the scenario is
    compiled, so the column would change nothing (a sweep of throughput.simulated.input_tokens
    over 100, 500 and 2,000 gave one NPV three times)."""
    source = next(
        (n for n in ("measured", "simulated") if getattr(scenario.throughput, n) is not None),
        None,
    )
    if source is None:
        return
    prefixes = (f"throughput.{source}.", "throughput.slo.")
    fixed = [p for p in paths if str(p).startswith(prefixes)]
    if fixed:
        raise InputError(
            f"{fixed[0]} cannot be varied in a batch of scenario '{scenario.name}': its "
            f"throughput.{source} source is resolved to one tokens/s per GPU when the scenario is "
            f"compiled, so the column would change nothing; expected one scenario per value "
            f"(econ project --set {fixed[0]}=...), or throughput.tokens_per_s_per_gpu varied on a "
            "copy without the source"
        )


TABLES = (
    ("price_table", "price_usd_per_mtok", "USD/Mtok"),
    ("rental_table", "price_usd_per_gpu_hour", "USD/GPU-hour"),
)
"""The market's price tables: (field, price field of a point, unit)."""


def table_warnings(market, start_date: dt.date, horizon_months: int) -> tuple[str, ...]:
    """Where a market price table does not span months 1 to the horizon, the price it holds flat
    before its first point or after its last (`econ.market.table_price_path` holds them), as
    the warning of a rental series says how that series is extended."""
    from econ.labels import counted
    from econ.scenario.gain_models import table_months

    out = []
    for name, price_field, unit in TABLES:
        points = getattr(market, name)
        if not points:
            continue
        months = table_months(points, start_date)
        first, last = points[0], points[-1]
        first_price = f"{getattr(first, price_field):,.4g} {unit}"
        last_price = f"{getattr(last, price_field):,.4g} {unit}"
        months_of = f"all {counted(horizon_months, 'month')} of the projection"

        def at(point, month: int) -> str:
            return f"month {month}" if point.date is None else f"{point.date} (month {month})"

        def the(count: int) -> str:
            return "the month" if count == 1 else f"the {counted(count, 'month')}"

        if months[-1] < 1:
            out.append(
                f"market.{name}: every point is dated before month 1, its last at "
                f"{at(last, months[-1])}; its last price {last_price} is held for {months_of}"
            )
        elif months[0] > horizon_months:
            out.append(
                f"market.{name}: every point is dated after the horizon (month {horizon_months}), "
                f"its first at {at(first, months[0])}; its first price {first_price} is held "
                f"for {months_of}"
            )
        else:
            held = []
            before = months[0] - 1  # whole months (days are ignored)
            if before > 0:
                held.append(
                    f"starts at {at(first, months[0])}; its first price {first_price} is held "
                    f"for {the(before)} before it"
                )
            after = horizon_months - months[-1]
            if after > 0:
                held.append(
                    f"ends at {at(last, months[-1])}; its last price {last_price} is held for "
                    f"{the(after)} to the horizon"
                )
            if held:
                out.append(f"market.{name} " + "; it ".join(held))
    return tuple(out)


def _horizon_rows(scenario: Scenario, one: ScenarioBatch, horizon, per: int) -> list:
    """The repeated rows' warnings, with the table warnings (`table_warnings`) of each row's own
    horizon where a batch varies it: the base's would otherwise count the wrong months."""
    rows = list(one.row_warnings) * len(horizon)
    market = scenario.market
    if not (market.price_table or market.rental_table):
        return rows
    base = table_warnings(market, scenario.start_date, scenario.horizon)
    found = {scenario.horizon: base}
    for i, months in enumerate(horizon.tolist()):
        if months not in found:
            found[months] = table_warnings(market, scenario.start_date, months)
        if found[months] != base:  # a scenario's first row holds its table warnings
            warnings = rows[i * per]
            at = next((k for k, w in enumerate(warnings) if w in base), 0)
            kept = [w for w in warnings if w not in base]
            rows[i * per] = (*kept[:at], *found[months], *kept[at:])
    return rows


def _rental_series(rows, items, row_scenario, columns, market) -> list[tuple[str, ...]]:
    """Rows whose market names a rental index series get its points (and the decay beyond them)
    as their rental table, in place of the compiled one; returns each row's warnings.

    Adds extras market.rental_table_log_sd (the s.e. of ln price at each table point), and
    market.series_contract_usd_per_gpu_hour (the series' month-1 price, NaN for a row without a
    series) with its market.contract_log_sd: a row that gives no contract price of its own
    (market.contract_usd_per_gpu_hour 0) has its first contract at that price, and a sampled
    band moves the extrapolated prices and that price (`repeat`).
    """
    warnings: list[tuple[str, ...]] = [() for _ in rows]
    if all(row.market.rental_series is None for row in rows):
        return warnings  # without loading the index module
    from econ.rental_index import resolve_series

    resolved = {}
    for i, row in enumerate(rows):
        if row.market.rental_series is None:
            continue
        try:
            series = resolve_series(row.market, row.fleet.hardware, row.start_date, row.horizon)
        except InputError as exc:
            raise in_file(exc, items[row_scenario[i]].source_file) from None
        resolved[i] = series
        warnings[i] = (series.warning,)
    if not resolved:
        return warnings
    width = max(market["rental_table_months"].shape[1], *(r.months.size for r in resolved.values()))
    for key in ("rental_table_months", "rental_table_usd_per_gpu_hour"):
        old = market[key]
        market[key] = np.full((len(rows), width), np.nan)
        market[key][:, : old.shape[1]] = old
    market["rental_table_log_sd"] = np.full((len(rows), width), np.nan)
    market["series_contract_usd_per_gpu_hour"] = np.full(len(rows), np.nan)
    market["contract_log_sd"] = np.zeros(len(rows))
    for i, series in resolved.items():
        k = series.months.size
        market["rental_table_months"][i] = np.nan
        market["rental_table_usd_per_gpu_hour"][i] = np.nan
        market["rental_table_months"][i, :k] = series.months
        market["rental_table_usd_per_gpu_hour"][i, :k] = series.prices
        market["rental_table_log_sd"][i, :k] = series.log_sd
        market["series_contract_usd_per_gpu_hour"][i] = series.month1_usd_per_gpu_hour
        market["contract_log_sd"][i] = series.month1_log_sd
    price = columns[CONTRACT_PATH]
    price[:] = contract_from_series(price, market["series_contract_usd_per_gpu_hour"])
    return warnings


def contract_from_series(contract_usd_per_gpu_hour, series_usd_per_gpu_hour) -> np.ndarray:
    """The first contract's price of each row [USD/GPU-hour]: the row's own, or where it gives
    none (0) and names a rental series, the series' month-1 price (NaN for rows without one),
    as `econ.scenario.market_models.Market` reads a scenario priced from a series."""
    series = np.asarray(series_usd_per_gpu_hour, dtype=float)
    own = np.asarray(contract_usd_per_gpu_hour, dtype=float)
    return np.where(np.isfinite(series) & (own <= 0), series, own)


def _input_ratio(row: Scenario, resolved, columns, i: int) -> tuple[str, ...]:
    """A measured or simulated source's input tokens per output token, where the scenario does
    not give its own; the warning saying where it came from."""
    ratio = columns["throughput.input_tokens_per_output_token"]
    if not np.isnan(ratio[i]):
        return ()
    if resolved.input_tokens_per_output_token is not None:
        ratio[i] = resolved.input_tokens_per_output_token
        return (
            f"throughput: {ratio[i]:.4g} input tokens per output token, from "
            f"{resolved.input_ratio_source}",
        )
    if row.market.charges_input_tokens:
        raise InputError(
            f"throughput.input_tokens_per_output_token is not set and {resolved.source} records "
            "no input tokens (neither input token rates nor input lengths), but "
            f"market.input_price_usd_per_mtok is {row.market.input_price_usd_per_mtok:g}; "
            "expected the input tokens served per output token"
        )
    return ()


RESALE_BAND_PATH = "market.resale_band"

RESALE_TABLE_KEYS = (
    "resale_table_ages",
    "resale_table_share",
    "resale_table_share_low",
    "resale_table_share_high",
)
"""Extras market.<key> (rows, k): each row's resale table points (econ.resale_index.row_table),
NaN-padded; all NaN where the scenario gives no resale table."""


def _resale_tables(rows, items, row_scenario, market) -> list[tuple[str, ...]]:
    """Each row's resale value table (market.resale_value_table or the points of its
    resale_series for the row's GPU) into `market` as RESALE_TABLE_KEYS; returns each row's
    warnings. The band (market.resale_band) stays a column, applied by the engine."""
    from econ.resale_index import row_table

    tables, warnings = [], []
    for i, row in enumerate(rows):
        try:
            table = row_table(row.market, row.fleet.hardware)
        except InputError as exc:
            raise in_file(exc, items[row_scenario[i]].source_file) from None
        tables.append(table)
        warnings.append(() if table is None or table.warning is None else (table.warning,))
    width = max([1, *(t.ages.size for t in tables if t is not None)])
    for key in RESALE_TABLE_KEYS:
        market[key] = np.full((len(rows), width), np.nan)
    for i, table in enumerate(tables):
        if table is None:
            continue
        k = table.ages.size
        market["resale_table_ages"][i, :k] = table.ages
        market["resale_table_share"][i, :k] = table.share
        market["resale_table_share_low"][i, :k] = table.share_low
        market["resale_table_share_high"][i, :k] = table.share_high
    return warnings


def compile_payments(capexes) -> dict[str, np.ndarray]:
    """Capex payment schedules as arrays (rows, k): months after purchase (NaN padding) and
    shares (0 padding); no schedule is one payment of the whole capex in the purchase month."""
    schedules = [[(p.month, p.share) for p in c.payments] or [(0, 1.0)] for c in capexes]
    k = max(len(s) for s in schedules)
    months = np.full((len(schedules), k), np.nan)
    shares = np.zeros((len(schedules), k))
    for i, schedule in enumerate(schedules):
        months[i, : len(schedule)] = [m for m, _ in schedule]
        shares[i, : len(schedule)] = [s for _, s in schedule]
    return {"capex.payment_months": months, "capex.payment_shares": shares}


def _row_names(items: Sequence[Scenario]) -> list[str]:
    return [name for s in items for name in ["base", *(v.name for v in s.vintages)]]


def _get(scenario: Scenario, path: str):
    node = scenario
    for part in path.split("."):
        node = getattr(node, part, None)  # an optional section left out gives None
    return node
