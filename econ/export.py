"""Writers for projections: CSV, Parquet, JSON and Excel, stamped, atomic and safe to open.

This module owns the table outputs; econ.files owns how they reach the disk:

- Formula injection: text the user controls (scenario names, sources, warnings, vintage names) that
  a spreadsheet could read as a formula gets a leading apostrophe (econ.text.neutralize; OWASP,
  "CSV Injection"). The Excel workbook (econ.workbook) stores the same text as string cells, never
  formulas.
- Provenance (econ.provenance): every table carries `econ_version`, `scenario_sha256`,
  `catalog_versions` and `seed` columns; the summary ends with `created_utc`, the only field that
  changes when the same scenario is run again, so reruns are byte-identical apart from it. Parquet
  files carry the stamp in their schema metadata too; JSON has it under `provenance` with
  `created_utc` as its own top-level key.
- Safe writes (econ.files.write_files): all outputs of one call are written to temporary files,
  flushed and renamed together; an existing file is kept unless `overwrite`; a failure (full disk,
  permissions, an exception midway) removes the temporary files and raises ExportError (exit 3 on
  the command line) naming the file and the reason. The tranche tables an earlier output of the
  same name left beside a schedule that has none are removed with it (`stale_paths`), so that the
  files of one output are all of one run.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from econ import strict_json
from econ.embedding import embedded_stamp, named_by_file
from econ.files import WriteError, Written, write_files
from econ.provenance import CREATED_FIELD, Stamp, format_catalogs
from econ.reporting import flat_summary, make_stamp
from econ.scenario.models import Scenario
from econ.text import neutralize

if TYPE_CHECKING:  # (the engine sits below the writers only as a type; pandas loads for tables)
    import pandas as pd

    from econ.engine import Projection

FORMATS = {".csv": "csv", ".parquet": "parquet", ".xlsx": "xlsx", ".json": "json"}
STAMP_COLUMNS = ("econ_version", "scenario_sha256", "catalog_versions", "seed")
"""Provenance columns appended to every table; the summary also ends with `created_utc`."""


ExportError = WriteError
"""An output that cannot be written as asked (unknown suffix, existing file, bad folder, full
disk): the writers' error, under the name this module has always raised."""


def _safe_labels(labels: pd.Index, cell=neutralize) -> pd.Index:
    """Row or column labels with formula-like text neutralized by `cell`: every level's values
    and the levels' names (a header cell a spreadsheet reads is as dangerous as a value cell)."""
    import pandas as pd

    names = [cell(name) for name in labels.names]
    if isinstance(labels, pd.MultiIndex):
        if not len(labels):
            return labels.set_names(names)
        return pd.MultiIndex.from_tuples(
            [tuple(cell(v) for v in key) for key in labels], names=names
        )
    if labels.dtype == object or pd.api.types.is_string_dtype(labels):
        labels = labels.map(cell)
    return labels.set_names(names)


def safe_text(frame: pd.DataFrame, cell=neutralize) -> pd.DataFrame:
    """`frame` with formula-like text neutralized (`cell`, default econ.text.neutralize) in its
    values, its column labels and its index (names included), for writers of CSV and spreadsheet
    cells; `frame` itself where nothing changes."""
    import pandas as pd

    text = [
        i
        for i, dtype in enumerate(frame.dtypes)
        if pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    ]
    cells = {i: frame.iloc[:, i].map(cell) for i in text}
    changed = {i: c for i, c in cells.items() if not c.equals(frame.iloc[:, i])}
    columns, index = _safe_labels(frame.columns, cell), _safe_labels(frame.index, cell)
    same_labels = (
        columns.equals(frame.columns) and columns.names == frame.columns.names
        and index.equals(frame.index) and index.names == frame.index.names
    )  # fmt: skip
    if not changed and same_labels:
        return frame
    frame = frame.copy()
    for i, column in changed.items():  # by position: labels may repeat
        frame.isetitem(i, column)
    frame.columns, frame.index = columns, index
    return frame


def csv_text(frame: pd.DataFrame) -> str:
    """CSV of a frame with formula-like text neutralized, in its values and its header.

    Numbers are written in their shortest round-trip form (Python's repr), so reading the CSV
    gives back the same doubles; undefined values are empty fields. Records end in "\n"; a field
    holding a line break of either kind (CR or LF) is quoted (RFC 4180).
    """
    # Python 3.11's csv module quotes only the characters of the line terminator, so a bare CR
    # in a name would be written unquoted and split the record; write with CRLF records (CR and
    # LF both quoted), then end records in LF: outside quotes every CRLF is a record end.
    text = safe_text(frame).to_csv(index=False, lineterminator="\r\n")
    parts = text.split('"')
    parts[0::2] = [part.replace("\r\n", "\n") for part in parts[0::2]]
    return '"'.join(parts)


# --- Stamped tables -------------------------------------------------------------------------------


def _stamp_values(st: Stamp, rows_per_scenario: Iterable[int]) -> dict[str, list]:
    catalogs = format_catalogs(st.catalogs)
    seed = "" if st.seed is None else str(st.seed)
    hashes = [st.sha256_of(i) for i, count in enumerate(rows_per_scenario) for _ in range(count)]
    n = len(hashes)
    return {
        "econ_version": [st.econ_version] * n,
        "scenario_sha256": hashes,
        "catalog_versions": [catalogs] * n,
        "seed": [seed] * n,
    }


def stamped_tables(projection: Projection, st: Stamp) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monthly schedule and flat summary, each with the provenance columns appended.

    The monthly table has `scenario`, `month`, `date`, then every engine column in engine order;
    the summary ends with `created_utc`.
    """
    monthly = projection.monthly.reset_index()
    rows = (np.asarray(projection.horizon_months, dtype=int) + 1).tolist()
    for name, values in _stamp_values(st, rows).items():
        monthly[name] = values
    return monthly, stamped_summary(projection, st)


def has_tranches(projection: Projection) -> bool:
    """Whether a scenario of the projection has capital-stack tranches (`financing.tranches`)."""
    return bool(projection.tranche_counts.any())


def stamped_tranche_tables(projection: Projection, st: Stamp) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each tranche's monthly lines and its summary (`Projection.tranches`, `tranche_summary`)
    with the provenance columns appended: `scenario`, `tranche`, `kind`, then `month` and `date`
    and the lines (econ.tranche_tables.TRANCHE_COLUMNS), or the summary's figures
    (TRANCHE_METRICS). Scenarios without tranches have no rows."""
    counts = projection.tranche_counts
    horizons = np.asarray(projection.horizon_months, dtype=int)
    tables = []
    for frame, rows in (
        (projection.tranches, counts * (horizons + 1)),
        (projection.tranche_summary, counts),
    ):
        frame = frame.reset_index()
        first = ["scenario", "tranche", "kind"]
        frame = frame[first + [c for c in frame.columns if c not in first]]
        for name, values in _stamp_values(st, rows.tolist()).items():
            frame[name] = values
        tables.append(frame)
    return tables[0], tables[1]


def stamped_summary(projection: Projection, st: Stamp) -> pd.DataFrame:
    """The flat summary with the provenance columns appended, ending with `created_utc`: the
    summary file's table, and `econ project --format csv`'s."""
    summary = flat_summary(projection)
    for name, values in _stamp_values(st, [1] * len(summary)).items():
        summary[name] = values
    summary[CREATED_FIELD] = st.created_utc
    return summary


def projection_json(projection: Projection, st: Stamp) -> str:
    """JSON text of the summaries with provenance: {econ_version, provenance, created_utc,
    scenarios}; `created_utc` is a top-level key on its own line, the rest is reproducible."""
    payload = {**st.json_header(), "scenarios": projection.summary_records()}
    return strict_json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def numbers_as_float(values) -> np.ndarray | None:
    """An object column holding only numbers and empty cells (None, NaN) as float64, NaN where
    empty; None for any other column (text, booleans, dates).

    Arrow types an object column by its values: a metric undefined in every row of one output
    would be typed `null` there and `double` in the next, and files of two scenarios would not
    read as one dataset. A column with no value at all counts as numbers: the tables' text
    columns always hold text (an empty string at least).
    """
    values = np.asarray(values, dtype=object)
    for value in values.tolist():
        if value is None or (isinstance(value, float) and value != value):
            continue
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
            return None
    return np.array([np.nan if v is None else v for v in values.tolist()], dtype=float)


def parquet_bytes(frame: pd.DataFrame, st: Stamp, created: bool = True) -> bytes:
    """Parquet file of a frame with the stamp in its schema metadata (keys `econ_*`; without
    `econ_created_utc` where not `created`: the tranche tables, which a rerun writes byte for
    byte as their CSV); numbers are float64 whatever their values (`numbers_as_float`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    floats = {}
    for i, dtype in enumerate(frame.dtypes):
        if dtype.kind == "O" and (column := numbers_as_float(frame.iloc[:, i])) is not None:
            floats[i] = column
    if floats:
        frame = frame.copy()
        for i, column in floats.items():  # by position: labels may repeat
            frame.isetitem(i, column)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    stamped = st.metadata()
    if not created:
        del stamped[f"econ_{CREATED_FIELD}"]
    metadata = {k.encode(): v.encode("utf-8") for k, v in stamped.items()}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


# --- Output paths ---------------------------------------------------------------------------------


def _is_folder(path: Path) -> bool:
    """Whether `path` is an existing folder; False where the system cannot say (a name too long,
    a NUL byte): the writers' checks (econ.files.check_targets) name that."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


FOLDER_NAMES = ("", ".", "..")
"""Last components of a path that name a folder, not a file: none (the path ends with a
separator: `out/rep.json/`), the folder itself, its parent. pathlib drops the first two
(`Path("out/rep.json/")` is `out/rep.json`), so the path is read as text before."""


def output_kind(path: str | os.PathLike, kind: str | None = None, option: str | None = None) -> str:
    """Format of an output path, by its suffix (FORMATS), or ExportError saying why the path
    names no file of a format: an empty path, a folder (one that exists, or a path ending with a
    separator), a name that is only a suffix (`.csv`), no suffix or an unknown one.

    `kind`: the format asked for (`--csv PATH`), whose suffix the path must end in; `option`:
    the command's option that gave the path, which the message starts with (`--csv '': an empty
    path; expected a file path ending in .csv`).
    """
    text = os.fspath(path)
    named = " ".join(filter(None, (option, text or "''")))
    expected = "expected a file path ending in " + (
        f".{kind}" if kind else "one of: " + ", ".join(FORMATS)
    )
    if not text:
        raise ExportError(f"{named}: an empty path; {expected}")
    path = Path(text)
    if _is_folder(path):
        example = path / f"projection.{kind or 'xlsx'}"
        raise ExportError(f"{named}: is a folder; {expected}, such as {example}")
    suffix = path.suffix.lower()
    last = os.path.basename(text)
    if last in FOLDER_NAMES:
        fits = suffix in FORMATS and (kind is None or FORMATS[suffix] == kind)
        raise ExportError(
            f"{named}: names a folder (it ends with {last or os.sep!r}), and there is no folder "
            f"{path}; {expected}" + (f", such as {path}" if fits else "")
        )
    if path.name.lower() in FORMATS:  # `.csv`: a hidden file's name, with no suffix
        raise ExportError(
            f"{named}: the file name is empty ({path.name!r} is the suffix alone); expected a "
            f"name before the suffix, such as {path.with_name('projection' + path.name)}"
        )
    found = FORMATS.get(suffix)
    if kind is not None and found != kind:
        got = f"'{path.suffix}'" if path.suffix else "no extension"
        raise ExportError(
            f"{named}: expected a file name ending in .{kind} for the {kind} output, got {got}"
        )
    if found is None:
        what = f"unknown output format '{path.suffix}'" if path.suffix else "no extension"
        raise ExportError(f"{named}: {what}; expected one of: " + ", ".join(FORMATS))
    return found


def output_paths(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """Where the monthly schedule and the summary go for an --out path.

    CSV and Parquet hold one table each, so the summary goes beside the schedule as
    `<stem>.summary<suffix>`; an Excel workbook holds both as sheets, a JSON file the summary.
    """
    path = Path(path)
    if output_kind(path) in ("xlsx", "json"):
        return path, None
    return path, path.with_name(f"{path.stem}.summary{path.suffix}")


def tranche_paths(path: str | os.PathLike) -> tuple[Path, Path] | None:
    """Where a capital stack's tranche tables go for a CSV or Parquet --out path: each tranche's
    monthly lines in `<stem>.tranches<suffix>`, their summary in `<stem>.tranches.summary<suffix>`
    (an Excel workbook holds them as sheets; JSON, the summary metrics, has none)."""
    path = Path(path)
    if output_kind(path) in ("xlsx", "json"):
        return None
    stem = f"{path.stem}.tranches"
    return path.with_name(f"{stem}{path.suffix}"), path.with_name(f"{stem}.summary{path.suffix}")


# --- Public writers -------------------------------------------------------------------------------


def output_payloads(
    projection: Projection,
    targets: Mapping[str, str | os.PathLike],
    scenarios: Sequence[Scenario] | None = None,
    seed: int | None = None,
    created=None,
) -> dict[Path, Callable[[], bytes]]:
    """Files to write for `targets` (format -> path; formats: csv, parquet, xlsx, json).

    CSV and Parquet write the monthly schedule to the path and the summary beside it
    (`<stem>.summary<suffix>`), and where a scenario has capital-stack tranches, each tranche's
    monthly lines and their summary (`tranche_paths`). All outputs share one stamp. Where a
    scenario reads a measured curve file no output names a folder of this machine: the tables
    (CSV, Parquet, JSON) hold
    the projection as made, its warnings (the curve's caveats among them) naming the file by its
    name (econ.embedding.named_by_file); the workbook holds the scenario as
    econ.embedding.embeddable gives it (the curve resolved to its figures and named by file name
    and SHA-256), which `econ verify` recomputes without the file; the stamp hashes that scenario
    and lists the curve files read (econ.embedding.embedded_stamp).

    `scenarios` default to those the projection was made from (`Projection.scenarios`), where
    it was made from Scenarios (`project([a, b])`; a batch of columns has none).
    """
    if scenarios is None and projection.scenarios:
        scenarios = projection.scenarios
    if scenarios is not None:
        scenarios = list(scenarios)
        st = embedded_stamp(projection, scenarios, seed=seed, created=created)
        written = named_by_file(projection, scenarios)
    else:
        st = make_stamp(projection, scenarios, seed=seed, created=created)
        written = projection
    tables: dict[str, pd.DataFrame] = {}

    def table(which: str) -> pd.DataFrame:
        if which not in tables and which.startswith("tranche"):
            tables["tranches"], tables["tranche_summary"] = stamped_tranche_tables(written, st)
        elif which not in tables:
            tables["monthly"], tables["summary"] = stamped_tables(written, st)
        return tables[which]

    tranches = has_tranches(written)

    payloads: dict[Path, Callable[[], bytes]] = {}
    for kind, target in targets.items():
        if kind not in FORMATS.values():
            raise ExportError(
                f"unknown output format '{kind}'; expected one of: csv, parquet, xlsx, json"
            )
        output_kind(target, kind)
        monthly_path, summary_path = output_paths(target)
        if kind in ("csv", "parquet"):
            files = {monthly_path: "monthly", summary_path: "summary"}
            if tranches:
                tables_of = ("tranches", "tranche_summary")
                files.update(zip(tranche_paths(target), tables_of, strict=True))
            for path, which in files.items():
                payloads[path] = (
                    (lambda which=which: csv_text(table(which)).encode("utf-8"))
                    if kind == "csv"
                    else (
                        lambda which=which: parquet_bytes(
                            table(which), st, created=not which.startswith("tranche")
                        )
                    )
                )
        elif kind == "json":
            payloads[monthly_path] = lambda: projection_json(written, st).encode("utf-8")
        else:
            from econ.workbook import workbook_bytes

            payloads[monthly_path] = lambda: workbook_bytes(projection, scenarios, stamp=st)
    return payloads


def write_outputs(
    projection: Projection,
    targets: Mapping[str, str | os.PathLike],
    overwrite: bool = False,
    scenarios: Sequence[Scenario] | None = None,
    seed: int | None = None,
    created=None,
) -> Written:
    """Write several formats of one projection at once, all-or-nothing. Returns the paths written.

    A CSV or Parquet output of a projection without tranches writes no tranche tables; those an
    earlier output of the same name left (`stale_paths`) are refused as existing files are, and
    removed with `overwrite` (in the returned list's `removed`): otherwise a capital stack's
    tranche files would stay beside a schedule that has none.

    Parameters
    ----------
    targets : format ("csv", "parquet", "xlsx", "json") -> path
    overwrite : replace existing files (otherwise ExportError before anything is written)
    scenarios : the validated scenarios the projection was made from, in order; they give the
        workbook its Assumptions sheet and live formulas, and every output its scenario hashes.
        Default: `projection.scenarios`. Without any (a `ScenarioBatch.repeat` batch's
        projection) the workbook holds values only.
    seed : random seed to stamp where the projection is random
    created : creation time to stamp (default now)
    """
    payloads = output_payloads(projection, targets, scenarios, seed=seed, created=created)
    return write_files(payloads, overwrite=overwrite, remove=stale_paths(targets, payloads))


def stale_paths(
    targets: Mapping[str, str | os.PathLike], payloads: Iterable[str | os.PathLike]
) -> list[Path]:
    """The files an earlier output of these `targets` may have left that these `payloads` (the
    files of this output, `output_payloads`) do not replace: the tranche tables beside a CSV or
    Parquet target (`tranche_paths`) where this projection has none. Only these names, never
    anything else beside the target."""
    written = {Path(p) for p in payloads}
    return [
        path
        for kind, target in targets.items()
        if kind in ("csv", "parquet")
        for path in tranche_paths(target)
        if path not in written
    ]


def write_projection(
    projection: Projection,
    path: str | os.PathLike,
    overwrite: bool = False,
    *,
    scenarios: Sequence[Scenario] | None = None,
    seed: int | None = None,
    created=None,
) -> Written:
    """Write the monthly schedule and the summary to `path` (.csv, .parquet, .xlsx or .json).

    Refuses to overwrite existing files unless `overwrite`; the files are written atomically.
    As `write_outputs`, removes with `overwrite` the tranche tables of an earlier output of this
    name that this one has none of.
    An .xlsx path gets the full workbook (econ.workbook) with live formulas and the Assumptions
    sheet from `scenarios`, by default the projection's own (`projection.scenarios`: those of
    `project([a, b])`); a projection of a `ScenarioBatch.repeat` batch has none, and its
    workbook holds values only. Returns the paths written.
    """
    return write_outputs(
        projection,
        {output_kind(path): path},
        overwrite=overwrite,
        scenarios=scenarios,
        seed=seed,
        created=created,
    )


__all__ = [
    "FORMATS",
    "STAMP_COLUMNS",
    "ExportError",
    "csv_text",
    "flat_summary",
    "has_tranches",
    "make_stamp",
    "numbers_as_float",
    "output_kind",
    "output_paths",
    "parquet_bytes",
    "projection_json",
    "stamped_summary",
    "stamped_tables",
    "stamped_tranche_tables",
    "stale_paths",
    "tranche_paths",
    "write_outputs",
    "write_projection",
]
