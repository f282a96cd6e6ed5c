"""Sweeps: a base scenario and a grid (cartesian product) or a table of override rows.

Each scenario of a sweep is the base with some numeric fields replaced; the output is one summary
row per scenario (its inputs, every engine output and its warnings). Grid points are addressed by
index (`numpy.unravel_index` in C order: the last grid path varies fastest), so any chunk of a
million-point grid is built without the others.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from econ.analysis.runner import Job, RunResult, check_run_options, output_names, run
from econ.analysis.validation import (
    BatchInputError,
    check_columns,
    coerce_column,
    refuse_quoted_number,
    resolve_path,
    row_overrides,
)
from econ.batch import check_scenario
from econ.files import (
    MAX_TABLE_BYTES,
    ReadError,
    check_regular,
    read_csv_table,
    read_failure,
    read_parquet_table,
)
from econ.scenario.io import parse_override
from econ.scenario.models import Scenario
from econ.scenario.section import NONE_WORD, control_problem
from econ.text import shortened

NAME_COLUMN = "name"
"""Optional column of an override table with each scenario's name."""


class GridSweep(Job):
    """The cartesian product of values per path.

    Parameters
    ----------
    base : base scenario
    grid : dotted path -> values (numbers, or choice names for choice fields), in order
    outputs : engine outputs per row (default: all)
    """

    kind = "sweep"
    with_warnings = True

    def __init__(self, base: Scenario, grid: Mapping[str, Sequence], outputs=None):
        if not isinstance(grid, Mapping):
            raise BatchInputError(
                f"grid is {type(grid).__name__}; expected a mapping of dotted path to a list of "
                "values, e.g. {'utilization.share': [0.6, 0.8]}"
            )
        if not grid:
            raise BatchInputError("a grid sweep needs at least one path=values")
        for path, values in grid.items():
            if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
                raise BatchInputError(
                    f"grid {path} = {values!r}: expected a list of values, e.g. [{values!r}] "
                    "for one"
                )
        self.base = check_scenario(base, what="base")
        self.axes = {
            path: coerce_column(
                path,
                values,
                source=f"grid {path}",
                row_label="value",
                row_offset=1,
                nan_is_empty=False,  # none leaves the field empty, a NaN is refused
            )
            for path, values in grid.items()
        }
        for path, values in self.axes.items():
            if len(values) == 0:
                raise BatchInputError(f"grid {path}: expected at least one value")
            _refuse_repeats(path, values, list(grid[path]))
        self.shape = tuple(len(v) for v in self.axes.values())
        self.n = math.prod(self.shape)  # a Python int: numpy's product would wrap at 2^63
        self.outputs = tuple(outputs or output_names())
        if self.n <= 1_000_000:  # fail before running when the grid is small enough to check
            self._checked(0, self.n)

    def _columns(self, start: int, stop: int) -> dict[str, np.ndarray]:
        index = np.unravel_index(np.arange(start, stop), self.shape)
        return {path: values[i] for (path, values), i in zip(self.axes.items(), index, strict=True)}

    def _checked(self, start: int, stop: int) -> dict[str, np.ndarray]:
        columns = self._columns(start, stop)
        check_columns(
            self.base,
            columns,
            stop - start,
            source="grid",
            row_label=lambda row: self.point_label(start + row),
        )
        return columns

    def point_label(self, index: int) -> str:
        """Grid point `index` (from 0) as messages name it: counted from 1, as the values of a
        --grid are, with its values (`point 2 (market.contract_share=0.5, ...)`). A cross-field
        error said `grid, point 2` counted from 0, naming neither field nor value."""
        values = self._columns(index, index + 1)
        shown = ", ".join(
            f"{path}={_point_value(value)}" for path, value in row_overrides(values, 0).items()
        )
        return f"point {index + 1} of {self.n:,} ({shown})"

    def inputs(self, start, stop):
        return self._checked(start, stop)

    def row_names(self, start, stop):
        return default_names(self.base, start, stop)

    def input_paths(self):
        return tuple(self.axes)

    def plan(self):
        specs = {p: resolve_path(p) for p in self.axes}
        return {
            "grid": {
                p: (
                    [specs[p].choices[int(i)] for i in v]
                    if specs[p].kind == "choice"
                    else [x if math.isnan(x) else int(x) for x in v.tolist()]  # 72, not 72.0
                    if specs[p].kind == "int"
                    else v.tolist()
                )
                for p, v in self.axes.items()
            },
            "outputs": list(self.outputs),
        }


def _point_value(value) -> str:
    """A grid value as --grid takes it: none for an empty field, 0.5, 72, a choice's name."""
    if value is None:
        return NONE_WORD
    return f"{value:.15g}" if isinstance(value, float) else str(value)


def _refuse_unprintable_names(names: np.ndarray, source: str, row_offset: int) -> None:
    """Refuse a name holding a control character, as a scenario's name is refused: the names
    are printed on terminals (an escape sequence would rewrite the screen) and written to files
    and reports."""
    for row, name in enumerate(names.tolist()):
        problem = control_problem(name)
        if problem:
            raise BatchInputError(
                f"{source}: row {row + row_offset}: {NAME_COLUMN} = {shortened(name)}: {problem}"
            )


def _refuse_repeated_names(names: np.ndarray, source: str, row_offset: int) -> None:
    """Refuse a name given to two rows of an override table: each row is a scenario, found by
    its name in the results."""
    first: dict[str, int] = {}
    for row, name in enumerate(names.tolist()):
        if name in first:
            raise BatchInputError(
                f"{source}, row {row + row_offset}: name {shortened(name)} is also the name of row "
                f"{first[name] + row_offset}; expected each scenario's name once"
            )
        first[name] = row


class TableSweep(Job):
    """One scenario per row of an override table (columns are dotted paths; `name` optional)."""

    kind = "sweep"
    with_warnings = True

    def __init__(
        self,
        base: Scenario,
        table: pd.DataFrame | Mapping[str, Sequence],
        source: str = "overrides",
        outputs=None,
        row_offset: int = 1,
    ):
        try:
            frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(dict(table))
        except ValueError as exc:  # scalars, or columns of different lengths
            raise BatchInputError(
                f"{source}: {exc}; expected a list of values per dotted path, one per scenario, "
                "all of the same length"
            ) from None
        self.base = base
        self.source = source
        self.row_offset = row_offset
        self.n = len(frame)
        if self.n == 0:
            raise BatchInputError(f"{source}: the table has no rows")
        paths = [c for c in frame.columns if c != NAME_COLUMN]
        if not paths:
            raise BatchInputError(f"{source}: expected at least one column named by a field path")
        for path in paths:
            resolve_path(str(path), what=f"{source}: column")
        self.columns = {
            str(p): coerce_column(
                str(p), frame[p].to_numpy(dtype=object), source=source, row_offset=row_offset
            )
            for p in paths
        }
        self.names = None
        if NAME_COLUMN in frame.columns:
            given = frame[NAME_COLUMN]
            empty = given.isna() | (given.astype(str).str.strip() == "")
            if empty.any():  # (astype(str) would name it "None" or "nan")
                row = int(np.flatnonzero(empty.to_numpy())[0]) + row_offset
                raise BatchInputError(
                    f"{source}: row {row}: {NAME_COLUMN} is empty; expected a name in every row "
                    f"(or no {NAME_COLUMN} column, for names made from the base's)"
                )
            self.names = given.astype(str).to_numpy(dtype=object)
        if self.names is not None:
            _refuse_unprintable_names(self.names, source, row_offset)
            _refuse_repeated_names(self.names, source, row_offset)
        self.outputs = tuple(outputs or output_names())
        check_columns(
            base, self.columns, self.n, source=source, row_offset=row_offset, sample_rows=64
        )
        self._offset = 0

    def inputs(self, start, stop):
        return {p: v[start - self._offset : stop - self._offset] for p, v in self.columns.items()}

    def view(self, start, stop):
        part = copy.copy(self)
        part.columns = {p: v[start:stop] for p, v in self.columns.items()}
        part.names = None if self.names is None else self.names[start:stop]
        part._offset = start
        return part

    def row_names(self, start, stop):
        if self.names is None:
            return default_names(self.base, start, stop)
        return self.names[start - self._offset : stop - self._offset]

    def input_paths(self):
        return tuple(self.columns)

    def plan(self):
        import hashlib

        digest = hashlib.sha256()
        for path, values in self.columns.items():
            digest.update(path.encode())
            digest.update(np.ascontiguousarray(values).tobytes())
        plan = {
            "table": self.source,
            "columns": list(self.columns),
            "rows": self.n,
            "sha256": digest.hexdigest(),
            "outputs": list(self.outputs),
        }
        if self.names is not None:
            # The names are stored in the chunk files' rows: a resumed run whose table renamed
            # its rows would print the old names. (A table without names keeps the plan, and
            # the chunk folders, of before.)
            text = json.dumps(self.names.tolist(), ensure_ascii=False)
            plan["names_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        return plan


def _refuse_repeats(path: str, values: np.ndarray, given: list) -> None:
    """A grid value given twice (4 and 4.0 alike) would be two identical scenarios, counted
    twice in any statistic of the sweep: refused, naming both positions."""
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    repeats = np.flatnonzero(first[inverse.ravel()] != np.arange(len(values)))
    if repeats.size:
        j = int(repeats[0])
        i = int(first[inverse.ravel()[j]])
        raise BatchInputError(
            f"grid {path}: value {j + 1} ({given[j]}) repeats value {i + 1} ({given[i]}); "
            "expected each value once"
        )


def parse_grid(items: Sequence[str]) -> dict[str, list]:
    """`PATH=V1,V2,...` items into {path: [values]}; values in TOML syntax (numbers, names)."""
    grid: dict[str, list] = {}
    for item in items:
        if "=" not in item:
            raise BatchInputError(f"--grid {item!r}: expected PATH=V1,V2,...")
        path, raw = (s.strip() for s in item.split("=", 1))
        if path in grid:
            raise BatchInputError(f"--grid {path} is given twice; list all its values once")
        resolve_path(path, what="grid path")
        values = []
        for text in raw.split(","):
            text = text.strip()
            if not text:
                raise BatchInputError(f"--grid {item!r}: empty value; expected PATH=V1,V2,...")
            value = parse_override(f"{path}={text}")[1]
            refuse_quoted_number("--grid", path, text, value)
            values.append(value)
        grid[path] = values
    return grid


TABLE_EXPECTED = "a CSV or Parquet override table"


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """An override table from CSV or Parquet (errors name the file)."""
    if not os.fspath(path):  # Path("") is the current folder: ".: a folder"
        raise BatchInputError(f"'': an empty path; expected {TABLE_EXPECTED} file")
    path = Path(path)
    if not path.is_file():
        found = (
            "a folder" if path.is_dir() else "not a regular file" if path.exists() else "not found"
        )
        raise BatchInputError(f"{path}: {found}; expected a CSV or Parquet override table file")
    try:  # (a table is read whole: its size is checked first, as read_csv_table checks it)
        check_regular(path, MAX_TABLE_BYTES, TABLE_EXPECTED)
    except (ReadError, OSError) as exc:
        raise BatchInputError(read_failure(path, exc, TABLE_EXPECTED)) from None
    try:
        if path.suffix.lower() == ".parquet":  # (its values are counted before they are read)
            return read_parquet_table(path, TABLE_EXPECTED, lambda names: _once(path, names))
        # pandas renames a repeated header (x, x.1): read the header as written first
        import csv

        with open(path, newline="", encoding="utf-8-sig", errors="replace") as file:
            _once(path, [c.strip() for c in next(csv.reader(file), [])])
        return read_csv_table(path, TABLE_EXPECTED)  # (refuses a row wider than the header)
    except BatchInputError:
        raise
    except ReadError as exc:
        raise BatchInputError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any parser failure is a bad input file
        raise BatchInputError(f"{path}: cannot be read as a table ({exc})") from None


def _once(path: Path, header: list[str]) -> list[str]:
    """The columns of a table, refusing one named twice."""
    seen: dict[str, int] = {}
    for k, name in enumerate(header, start=1):
        if name in seen:
            raise BatchInputError(
                f"{path}: column '{name}' is repeated (columns {seen[name]} and {k}); expected "
                "each field path once"
            )
        seen[name] = k
    return header


def sweep_job(
    base: Scenario,
    grid: Mapping[str, Sequence] | None = None,
    table: pd.DataFrame | str | os.PathLike | None = None,
) -> GridSweep | TableSweep:
    """The job of a grid or table sweep (exactly one of them), checked before anything runs."""
    if (grid is None) == (table is None):
        raise BatchInputError("give a grid or an override table (exactly one)")
    check_scenario(base, what="base")
    if grid is not None:
        return GridSweep(base, grid)
    if isinstance(table, Mapping):
        return TableSweep(base, table)
    if not isinstance(table, pd.DataFrame | str | os.PathLike):
        raise BatchInputError(
            f"table is {type(table).__name__}; expected a DataFrame, a mapping of dotted path to "
            "one value per scenario, or the path of a CSV or Parquet file"
        )
    source = str(table) if not isinstance(table, pd.DataFrame) else "overrides"
    frame = table if isinstance(table, pd.DataFrame) else read_table(table)
    return TableSweep(base, frame, source=source)


def sweep(
    base: Scenario,
    grid: Mapping[str, Sequence] | None = None,
    table: pd.DataFrame | str | os.PathLike | None = None,
    **run_options,
) -> RunResult:
    """Run a grid or table sweep; `run_options` go to `econ.analysis.runner.run`.

    Returns the RunResult; `.rows` is a DataFrame of one row per scenario, in order, with a
    RangeIndex and the columns `scenario` (the scenario's position in the sweep, 0, 1, ...:
    a column, not the index), `name`, the overridden inputs, every engine output and
    `warnings`.
    """
    check_run_options(run_options, "sweep")
    return run(sweep_job(base, grid, table), **run_options)


def default_names(base: Scenario, start: int, stop: int) -> np.ndarray:
    """Names of scenarios start..stop-1 of a sweep without its own names: `<base>#<index>`."""
    return np.array([f"{base.name}#{i}" for i in range(start, stop)], dtype=object)
