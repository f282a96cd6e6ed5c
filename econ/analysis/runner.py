"""The chunked batch driver shared by sweeps, Monte Carlo and sensitivity designs.

A job says how many scenarios it has and what overrides scenario i gets (`job.inputs(start,
stop)`, computed from the indices alone); the driver splits the rows into chunks of whole sampling
blocks, sends `run_chunk` tasks to an executor, writes finished chunks to a ChunkStore when asked
(resume after interruption), and collects rows and/or streaming summaries. Nothing in the results
depends on the executor, the number of workers or the chunk size.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from econ import __version__, strict_json
from econ.analysis.chunks import ChunkStore
from econ.analysis.executors import Executor, ExecutorError, SerialExecutor
from econ.analysis.stats import REPR_OUTPUTS, RunSummary, SummaryAccumulator, summarize_chunk
from econ.analysis.validation import field_specs
from econ.batch import ScenarioBatch, check_repeat_size, check_scenario
from econ.engine import COMPONENTS, WARNING_SEPARATOR, project
from econ.errors import InputError
from econ.files import WriteError
from econ.labels import counted
from econ.memory import MAX_BATCH_BYTES, check_batch_memory
from econ.provenance import CREATED_FIELD, creation_time
from econ.scenario.io import OVERRIDDEN, dumps
from econ.scenario.models import Scenario
from econ.sources import code_fingerprint

DEFAULT_CHUNK_SIZE = 16_384
"""Rows per chunk: 4 sampling blocks, 4 of the engine's own chunks (econ.engine.CHUNK_SCENARIOS)."""
EXACT_LIMIT = 1_000_000
"""Largest run whose quantiles are exact (all values kept); above it a sketch is used."""
MAX_SCENARIOS = 10_000_000_000
"""Most scenarios one run takes (10^10: some 70 hours on one core, docs/batch.md "Limits")."""
MAX_ROW_BYTES = MAX_BATCH_BYTES
"""Most memory [bytes] the rows of a run that keeps them in memory may take (about 1.3 million
sweep rows; econ.memory.MAX_BATCH_BYTES): larger runs write their rows to a file chunk by chunk
instead."""
SCENARIOS_PER_S_PER_CORE = 40_000
"""Throughput of one core [scenarios/s] (benchmarks/bench_batch.py), for the time a refused
run would have taken."""
ROW_TEXT_BYTES = 1_000
"""Memory of a sweep row's name and warnings text [bytes] (the seed's warnings are 874 characters)."""

MAIN_OUTPUTS = (
    "npv_usd",
    "lcot_usd_per_mtok",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    "tokens_total",
    "revenue_usd_total",
    "ebitda_usd_total",
)
"""Outputs summarized by default in Monte Carlo runs and analysed by sensitivity."""

LOAN_STRESS_OUTPUTS = ("covenant_breach_months", "first_breach_month")
"""Added to a Monte Carlo run's default outputs where it holds the base case's loan
(`hold_debt`): how often and how long the committed loan is in breach."""


def default_outputs(hold_debt: bool = False) -> tuple[str, ...]:
    """A Monte Carlo run's outputs when none are asked for: MAIN_OUTPUTS, and where the run
    holds the base case's loan LOAN_STRESS_OUTPUTS too."""
    return MAIN_OUTPUTS + (LOAN_STRESS_OUTPUTS if hold_debt else ())


HELD_NOTE = "held loan: "
"""The start of the note (`RunResult.notes`) saying what loan a run holds (`hold_debt`), which
the CLI prints as it is, where it prints the others as `note: ...`."""


def output_names() -> tuple[str, ...]:
    """Every scalar output of the engine: summary metrics, then `cost_usd_per_mtok_<component>`."""
    from econ.engine import SUMMARY_COLUMNS

    metrics = [
        c for c in SUMMARY_COLUMNS if c not in ("cost_usd_per_mtok_by_component", "warnings")
    ]
    return tuple(metrics) + tuple(f"cost_usd_per_mtok_{c}" for c in COMPONENTS)


def check_outputs(names) -> tuple[str, ...]:
    """The outputs to keep, checked: engine outputs, each once (one name alone may be a str)."""
    valid = output_names()
    names = (names,) if isinstance(names, str) else tuple(names)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(
            f"output {', '.join(map(repr, repeated))} is given more than once; expected each "
            "output once"
        )
    for name in names:
        if name not in valid:
            import difflib

            close = difflib.get_close_matches(str(name), valid, n=1)
            mean = f" (did you mean {close[0]}?)" if close else ""
            raise InputError(
                f"output '{name}' is not an engine output{mean}; expected one of: "
                + ", ".join(valid)
            )
    if not names:
        raise InputError("expected at least one output")
    return names


def scenario_hash(scenario: Scenario) -> str:
    """SHA-256 of the scenario's canonical TOML text."""
    return hashlib.sha256(dumps(scenario).encode()).hexdigest()


def evaluate(
    base: Scenario,
    columns: Mapping[str, np.ndarray],
    n: int,
    outputs: tuple[str, ...],
    with_warnings: bool = False,
) -> dict[str, np.ndarray]:
    """Project n copies of `base` with `columns` overridden; return the asked outputs (n,).

    The columns are a job's `inputs`, which the job has checked: not validated again here.
    """
    batch = ScenarioBatch.repeat(base, n, columns, validate=False)
    projection = project(batch, monthly=False)  # summaries only: no (n, months) lines kept
    out = {}
    for name in outputs:
        if name.startswith("cost_usd_per_mtok_"):
            out[name] = np.asarray(projection.components[name.removeprefix("cost_usd_per_mtok_")])
        else:
            out[name] = np.asarray(projection.metrics[name], dtype=float)
    if with_warnings:
        # one line each: a warning may itself hold "; " (sweep_json splits them again)
        out["warnings"] = np.array(
            [WARNING_SEPARATOR.join(w) for w in projection.warnings], dtype=object
        )
    return out


class Job:
    """What a batch run computes. Subclasses set the fields and implement `inputs` and `plan`.

    Attributes
    ----------
    kind : "sweep", "montecarlo", "tornado", "sobol", "morris"
    base : the base scenario
    n : number of scenarios
    block_size : rows per sampling block (chunks are whole blocks)
    outputs : engine outputs kept per scenario
    seed : root seed (None when nothing is random)
    with_warnings : keep each scenario's warnings (sweeps)
    runs_base : one scenario is the base as it is (a tornado's scenario 0), so a field an
        override of the base sets is run at that value even where the job varies it
    """

    kind = "job"
    base: Scenario
    n: int
    block_size: int = 1
    outputs: tuple[str, ...] = MAIN_OUTPUTS
    seed: int | None = None
    with_warnings: bool = False
    runs_base: bool = False

    def inputs(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Overrides of scenarios start..stop-1, checked by the job (econ.analysis.validation):
        the driver passes them to `ScenarioBatch.repeat` without validating them again."""
        raise NotImplementedError

    def input_record(self, columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Input columns as stored in result rows (choice fields by name)."""
        specs = field_specs()
        out = {}
        for path, values in columns.items():
            spec = specs[path]
            if spec.kind == "choice":
                out[path] = np.asarray(spec.choices, dtype=object)[np.asarray(values, dtype=int)]
            else:
                out[path] = np.asarray(values, dtype=float)
        return out

    def plan(self) -> dict:
        raise NotImplementedError

    def view(self, start: int, stop: int) -> Job:
        """What a chunk task carries: the job, or a lighter copy holding only rows start..stop-1
        (override tables), so no task pickles the whole table."""
        return self

    def row_names(self, start: int, stop: int) -> np.ndarray | None:
        """Names of scenarios start..stop-1 when the rows carry a `name` column (sweeps)."""
        return None

    def input_paths(self) -> tuple[str, ...]:
        """The field paths the job varies (the input columns of its rows)."""
        return ()

    def notes(self) -> list[str]:
        """What the run says of its plan before it runs (a Sobol run of other than 2^m points):
        the first of its `notes`."""
        return []

    def metadata(self, chunk_size: int) -> dict:
        plan = self.plan()
        digest = scenario_hash(self.base)
        identity = {
            "econ_version": __version__,
            "kind": self.kind,
            "scenario_hash": digest,
            "seed": self.seed,
            "plan": plan,
            "n": self.n,
            "chunk_size": chunk_size,
        }
        # (hashed, never read: a grid's none stays NaN here, so earlier chunk folders resume)
        fingerprint = hashlib.sha256(
            json.dumps(identity, sort_keys=True, default=str).encode()
        ).hexdigest()
        return {
            **identity,
            "scenario": self.base.name,
            "overridden": overridden(self.base),
            "fingerprint": fingerprint,
            # The code that ran (econ_version is 0.1.0 at every commit): the client's, which
            # every Dask worker's is checked against. Not part of the fingerprint (the run's
            # inputs): chunk folders resume as before.
            "econ_code": code_fingerprint(),
            # Not part of the fingerprint: a resumed run is the same run. The key and form of
            # every other output's stamp, fixed by $SOURCE_DATE_EPOCH like theirs.
            CREATED_FIELD: creation_time(),
        }


def replaced_overrides(job: Job, metadata: dict) -> list[str]:
    """Mark the base's overridden fields (`metadata["overridden"]`) that the job varies in every
    scenario as ``"replaced": true``, and say so: their value was never run. `econ montecarlo
    --set utilization.share=0.5 --dist 'utilization.share=uniform(0.6,0.9)'` recorded 0.5 as
    the value run, and the note that the draws replaced it went to stderr alone. A tornado runs
    its base (`runs_base`): there the override is the base value its ranges are around."""
    given = metadata.get("overridden") or {}
    paths = [p for p in job.input_paths() if p in given] if not job.runs_base else []
    if not paths:
        return []
    metadata["overridden"] = {
        p: {**entry, "replaced": True} if p in paths else entry for p, entry in given.items()
    }
    one = len(paths) == 1
    return [
        f"{', '.join(paths)} {'is' if one else 'are'} set by "
        f"{'an override' if one else 'overrides'} of the base (--set) and varied by the run: "
        f"the varied values replace the {'override' if one else 'overrides'} in every scenario"
    ]


def overridden(scenario: Scenario) -> dict[str, dict]:
    """The base scenario's fields set by an override (`--set`, `load_scenario(path, {...})`), as
    its [sources] record them: {path: {"value": the value run, "source": "overridden (was: ...)"}}.
    An output file then says what was set, not only the scenario's hash."""
    data = scenario.model_dump(mode="json")
    out = {}
    for path, note in sorted(scenario.sources.items()):
        if not note.startswith(f"{OVERRIDDEN} ("):
            continue
        node = data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        out[path] = {"value": node, "source": note}
    return out


@dataclass(frozen=True)
class ChunkTask:
    job: Job
    index: int
    start: int
    stop: int
    blocks: Sequence[int]
    keep_rows: bool
    summarize: bool
    exact: bool


@dataclass
class ChunkResult:
    index: int
    start: int
    stop: int
    rows: dict[str, np.ndarray] | None
    summary: object | None
    seconds: float


def run_chunk(task: ChunkTask) -> ChunkResult:
    """Compute one chunk: inputs, projection, rows and/or summary. Runs in the workers."""
    began = time.perf_counter()
    job = task.job
    columns = job.inputs(task.start, task.stop)
    outputs = evaluate(job.base, columns, task.stop - task.start, job.outputs, job.with_warnings)
    return _result(task, columns, outputs, began)


def _result(task: ChunkTask, columns, outputs, began) -> ChunkResult:
    job = task.job
    rows = None
    if task.keep_rows:
        rows = {"scenario": np.arange(task.start, task.stop, dtype=np.int64)}
        names = job.row_names(task.start, task.stop)
        if names is not None:
            rows["name"] = names
        rows |= job.input_record(columns)
        rows |= outputs
    summary = None
    if task.summarize:
        metrics = {k: v for k, v in outputs.items() if k != "warnings"}
        summary = summarize_chunk(metrics, task.start, task.stop, np.array(task.blocks), task.exact)
    return ChunkResult(
        task.index, task.start, task.stop, rows, summary, time.perf_counter() - began
    )


@dataclass
class RunResult:
    """Rows (one per scenario, when kept) and summary (when asked) of a batch run.

    `rows` is the DataFrame of one row per scenario; a run that kept none (keep_rows=False)
    raises RowsNotKeptError there, saying how to get them, where it gave None and
    `result.rows["npv_usd"]` failed as "'NoneType' object is not subscriptable". `kept_rows` is
    the same DataFrame, or None, for code that asks whether there are rows."""

    job: Job
    metadata: dict
    kept_rows: pd.DataFrame | None = None
    summary: RunSummary | None = None
    chunks: int = 0
    resumed: int = 0
    seconds: float = 0.0
    store: ChunkStore | None = field(default=None, repr=False)

    @property
    def rows(self) -> pd.DataFrame:
        """One row per scenario (the inputs it was given and its outputs), in scenario order."""
        if self.kept_rows is None:
            where = (
                f"its chunk files in {self.store.directory} hold them: write them to a file "
                "with econ.analysis.output.write_rows(result, PATH), or rerun with "
                "keep_rows=True"
                if self.store is not None
                else "rerun with keep_rows=True (or with store=DIR to keep them on disk)"
            )
            summary = "; its summary is .summary" if self.summary is not None else ""
            raise RowsNotKeptError(
                f"this {self.job.kind} run kept no rows (keep_rows=False){summary}; {where}"
            )
        return self.kept_rows

    @property
    def notes(self) -> list[str]:
        """What the run found worth saying about its inputs and options: the loan it holds
        (hold_debt, starting HELD_NOTE), a chunk size rounded up to whole sampling blocks, a
        Sobol run of other than 2^m points, an input that moves no output, tied tornado swings,
        GPUs sold at book value. The lines the CLI prints (`held loan: ...`, `note: ...`), kept
        in `metadata["notes"]`."""
        return list(self.metadata.get("notes", []))

    def __repr__(self) -> str:
        # The dataclass repr printed the metadata and the summary whole (some 17,000 characters
        # for a Monte Carlo run), flooding a notebook cell.
        outputs = list(self.job.outputs)
        shown = ", ".join(outputs[:REPR_OUTPUTS])
        more = f", ... ({len(outputs) - REPR_OUTPUTS} more)" if len(outputs) > REPR_OUTPUTS else ""
        see = [".rows"] if self.kept_rows is not None else []
        see += [".summary"] if self.summary is not None else []
        kept = (
            f"{counted(len(self.kept_rows), 'row')} kept"
            if self.kept_rows is not None
            else "no rows kept (keep_rows=False)"
        )
        return (
            f"<RunResult: {self.job.kind}, {counted(self.job.n, 'scenario')}, "
            f"{counted(len(outputs), 'output')} [{shown}{more}]; {kept}"
            f"{', summary' if self.summary is not None else ''}; "
            f"{counted(len(self.notes), 'note')}{' (.notes)' if self.notes else ''}; "
            f"see {', '.join([*see, '.metadata'])}>"
        )


class ChunkBounds(Sequence):
    """(start, stop, block starts) of each chunk of a run, computed from the chunk's index:
    whole sampling blocks, about `chunk_size` rows each. Nothing is held per scenario or per
    chunk, so a run of 10^10 scenarios has its bounds in a few bytes (the block starts of a
    chunk are a `range`)."""

    def __init__(self, n: int, block_size: int, chunk_size: int):
        self.n = int(n)
        self.block_size = int(block_size)
        self.blocks = 0 if self.n <= 0 else max(1, self.n // self.block_size)
        self.per = max(1, -(-chunk_size // self.block_size))
        self.count = -(-self.blocks // self.per)

    @property
    def rows_per_chunk(self) -> int:
        """Rows of every chunk but the last: the chunk size asked, rounded up to whole sampling
        blocks (what a run records as its `chunk_size`)."""
        return self.per * self.block_size

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.count))]
        if index < 0:
            index += self.count
        if not 0 <= index < self.count:
            raise IndexError(index)
        first = index * self.per
        last = min(first + self.per, self.blocks)  # one past the chunk's last block
        start = first * self.block_size
        stop = self.n if last == self.blocks else last * self.block_size
        return start, stop, range(start, last * self.block_size, self.block_size)


def chunk_size_notes(job: Job, chunk_size: int, bounds: ChunkBounds) -> list[str]:
    """The note of a chunk size that is not whole sampling blocks, rounded up to them (where
    the run has more rows than the size asked): the run used 4,096 rows per chunk for
    chunk_size=100 unsaid."""
    rows = bounds.rows_per_chunk
    if rows == chunk_size or job.n <= chunk_size:
        return []
    return [
        f"--chunk-size {chunk_size:,} (chunk_size= from Python) is rounded up to {rows:,} rows, "
        f"whole sampling blocks of {job.block_size:,} rows, so that the draws do not depend on "
        "the chunk size"
    ]


def chunk_bounds(job: Job, chunk_size: int) -> ChunkBounds:
    """(start, stop, block starts) of each chunk: whole sampling blocks, about chunk_size rows."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk size = {chunk_size!r}: expected a positive integer")
    return ChunkBounds(job.n, job.block_size, chunk_size)


def row_bytes(job: Job) -> int:
    """Memory of one row of the job's results [bytes]: 8 per number (scenario index, inputs,
    outputs), and a sweep's name and warnings text."""
    numbers = 1 + len(job.input_paths()) + len(job.outputs)
    return 8 * numbers + (ROW_TEXT_BYTES if job.with_warnings else 0)


def check_size(job: Job, keep_rows: bool) -> None:
    """Refuse a run larger than can run: more than MAX_SCENARIOS scenarios, or rows kept in
    memory beyond MAX_ROW_BYTES. The message names the size and what was expected."""
    n = job.n
    if n > MAX_SCENARIOS:
        hours = n / SCENARIOS_PER_S_PER_CORE / 3600
        took = f"{hours / 24 / 365.25:,.0f} years" if hours > 24 * 365.25 else f"{hours:,.0f} hours"
        raise InputError(
            f"{_what(job)} has {n:,} scenarios; expected at most {MAX_SCENARIOS:,} in one run "
            f"(at about {SCENARIOS_PER_S_PER_CORE:,} scenarios/s per core it would take some "
            f"{took} on one core): run fewer scenarios, or split the run"
        )
    if keep_rows:
        subject = f"{_what(job)} has {n:,} scenarios, whose rows"
        check_batch_memory(subject, n, row_bytes(job), "rows", _advice(job))


def _what(job: Job) -> str:
    return {
        "sweep": "the sweep",
        "montecarlo": "the Monte Carlo run",
        "sobol": "the Sobol design",
        "morris": "the Morris design",
        "tornado": "the tornado",
    }.get(job.kind, "the run")


def _advice(job: Job) -> str:
    if job.kind == "sweep":
        return (
            "write the rows to a file, streamed chunk by chunk (econ sweep --out FILE.parquet "
            "with --format table and no --report; in Python, run(job, keep_rows=False, "
            "store=DIR) and econ.analysis.output.write_rows)"
        )
    if job.kind == "sobol":
        return "give fewer base samples (-n) or fewer inputs"
    if job.kind == "morris":
        return "give fewer trajectories or fewer inputs"
    return "keep only the summary (keep_rows=False), or write the rows with --out FILE"


SAMPLE_ROWS = 1024
"""Rows (rounded up to whole sampling blocks) projected to measure a run's chunk files."""
ANNOUNCE_BYTES = 100_000_000
"""Chunk files of at least this many bytes are announced on stderr before a run that shows no
progress bar (a log file, a pipe)."""
FILE_BYTES = 65_536
"""Bytes of a chunk file beyond its rows and metadata (footer, schema, page headers), at most."""


CSV_NUMBER_BYTES = 25
"""Most bytes of a number in a CSV rows file: the longest shortest-round-trip form of a double
("-2.2250738585072014e-308", 24 characters) and its comma."""


def chunk_files_bound(job: Job, bounds: ChunkBounds, metadata: Mapping) -> int:
    """An upper bound of a run's chunk files [bytes], from the row's memory (`row_bytes`: 8 per
    number, 1 kB of a sweep row's text) and each file's metadata, with nothing projected."""
    # + 100 for the engine and the chunk range
    stamp = len(strict_json.dumps(dict(metadata), default=str).encode()) + 100
    return job.n * row_bytes(job) + len(bounds) * (stamp + FILE_BYTES)


def out_file_bound(job: Job, bounds: ChunkBounds, metadata: Mapping, out_file) -> int:
    """An upper bound of the rows file `out_file` [bytes] (`econ.analysis.output.write_rows`),
    with nothing projected: a Parquet one as the chunk files it is written from; a CSV one at
    CSV_NUMBER_BYTES a number, the text and the metadata sidecar."""
    if Path(out_file).suffix.lower() == ".parquet":
        return chunk_files_bound(job, bounds, metadata)
    numbers = 1 + len(job.input_paths()) + len(job.outputs)
    text = ROW_TEXT_BYTES if job.with_warnings else 0
    sidecar = len(strict_json.dumps(dict(metadata), indent=2, default=str).encode())
    return job.n * (CSV_NUMBER_BYTES * numbers + text) + sidecar + FILE_BYTES


def _sample_rows(job: Job) -> tuple[dict[str, np.ndarray], int]:
    """The rows of the run's first SAMPLE_ROWS scenarios (whole sampling blocks), projected."""
    start, stop, blocks = ChunkBounds(job.n, job.block_size, SAMPLE_ROWS)[0]
    task = ChunkTask(job.view(start, stop), 0, start, stop, blocks, True, False, True)
    return run_chunk(task).rows, stop - start


def writer_sizes(size, count: int) -> tuple[float, float]:
    """Bytes per row and per file of a writer whose file of the sample's first k rows takes
    `size(k)` bytes: from the sample whole and half."""
    half = max(1, count // 2)
    whole = size(count)
    per_row = (whole - size(half)) / (count - half) if count > half else float(whole)
    per_row = max(per_row, 1.0)
    return per_row, max(0.0, whole - count * per_row)


def _chunk_files_total(
    job: Job, bounds: ChunkBounds, metadata: Mapping, rows, count: int
) -> tuple[int, float]:
    """Size of the run's chunk files [bytes] and their bytes per row, from the sample `rows`
    (its first `count` rows) written as a run writes chunk files (their writer, its metadata)."""
    import io

    import pyarrow.parquet as pq

    from econ.analysis.chunks import to_arrow

    stamp = {**metadata, "chunk": [len(bounds), job.n, job.n]}

    def size(k: int) -> int:
        buffer = io.BytesIO()
        pq.write_table(to_arrow({c: v[:k] for c, v in rows.items()}, stamp), buffer)
        return buffer.tell()

    per_row, per_file = writer_sizes(size, count)
    return int(len(bounds) * per_file + job.n * per_row), per_row


def chunk_files_bytes(job: Job, bounds: ChunkBounds, metadata: Mapping) -> tuple[int, float]:
    """Estimated size of a run's chunk files [bytes], and their bytes per row, measured.

    The run's first SAMPLE_ROWS scenarios are projected and written as chunk files are (their
    writer, the run's metadata), once whole and once half: the difference is the bytes per
    row, the rest the bytes per file. Outputs that repeat across scenarios compress, so a
    sweep's row takes 70-260 bytes rather than the 8 per number it holds in memory.
    """
    return _chunk_files_total(job, bounds, metadata, *_sample_rows(job))


def _out_file_bytes(job: Job, rows, count: int, metadata: Mapping, out_file, chunks: int) -> int:
    """Estimated size of the rows file `out_file` [bytes], from the sample `rows`: a Parquet file
    about as large as the chunk files it is written from (`chunks` bytes: the same writer, one
    row group a chunk), a CSV file as the sample's CSV text (`output.csv_rows_bytes`)."""
    if Path(out_file).suffix.lower() == ".parquet":
        return chunks
    from econ.analysis.output import csv_rows_bytes, tidy_rows

    return csv_rows_bytes(tidy_rows(pd.DataFrame(rows)), job.n, metadata)


@dataclass(frozen=True)
class _Disk:
    """The disk of a folder files go to: its free bytes and its device number."""

    free: int
    device: int


def _disk(folder: Path) -> _Disk:
    import os
    import shutil

    return _Disk(shutil.disk_usage(folder).free, os.stat(folder).st_dev)


def check_space(
    job: Job,
    bounds: ChunkBounds,
    metadata: Mapping,
    store: str | Path,
    announce: bool,
    out_file: str | Path | None = None,
) -> None:
    """Refuse a run whose chunk files would not fit in the free space of the chunk folder's
    disk, naming both sizes (a 10^9-row sweep's files take 100-250 GB, and the disk would fill
    hours into the run); with `out_file`, the rows file written from them after the run too,
    on its own disk or beside them on the same one (both are there while it is written). With
    `announce` and stderr not a terminal (no progress bar shows), chunk files of ANNOUNCE_BYTES
    or more are announced there, once. Where the bounds (`chunk_files_bound`, `out_file_bound`)
    fit and say nothing, nothing is projected; otherwise the files are measured
    (`chunk_files_bytes`). Chunk files already in the folder (a run resumed) count as written.
    A missing folder that cannot be created is refused as such (WriteError), before the free
    space of a disk it would never be on is read: `/proc/x` read as a full disk."""
    import os

    from econ.files import make_folder, size_text

    folder = Path(store)
    try:
        missing = not os.path.lexists(folder) and folder.parent.is_dir()
    except (OSError, ValueError):  # (the chunk store names the folder and what is wrong)
        missing = False
    if missing:
        make_folder(folder).rmdir()  # made by the chunk store once the run is accepted
    try:
        disk = _disk(folder if folder.is_dir() else folder.parent)
        written = 0
        if folder.is_dir():
            written = sum(p.stat().st_size for p in folder.glob("chunk-*.parquet"))
    except OSError:
        return  # the chunk store says what is wrong with the folder
    out_disk = None
    if out_file is not None:
        try:
            out_disk = _disk(Path(out_file).absolute().parent)
        except OSError:
            pass  # the writer says what is wrong with the output's folder
    announce = announce and not sys.stderr.isatty()
    bound = chunk_files_bound(job, bounds, metadata) - written
    out_bound = out_file_bound(job, bounds, metadata, out_file) if out_disk else 0
    if not _short(disk, bound, out_disk, out_bound) and not (announce and bound >= ANNOUNCE_BYTES):
        return
    rows, count = _sample_rows(job)
    total, per_row = _chunk_files_total(job, bounds, metadata, rows, count)
    need = max(0, total - written)
    out_need = 0
    if out_disk is not None:
        out_need = _out_file_bytes(job, rows, count, metadata, out_file, total)
    short = _short(disk, need, out_disk, out_need)
    if short is not None:
        needs = _Need(need, written, per_row, out_need)
        raise InputError(_space_refusal(job, folder, out_file, short, disk, out_disk, needs))
    if announce and need >= ANNOUNCE_BYTES:
        print(
            f"{_what(job)} writes its {job.n:,} rows to chunk files in {folder}: about "
            f"{size_text(need)} ({size_text(disk.free)} free)",
            file=sys.stderr,
        )


def _short(disk: _Disk, need: int, out_disk: _Disk | None, out_need: int) -> str | None:
    """Which disk is short of space: "chunks", "both" (the chunk files and the rows file on one
    disk), "out", or None where everything fits."""
    if out_disk is not None and out_disk.device == disk.device:
        return "both" if need + out_need > disk.free else None
    if need > disk.free:
        return "chunks"
    if out_disk is not None and out_need > out_disk.free:
        return "out"
    return None


class _Need(NamedTuple):
    """What a run's files need [bytes]: its chunk files still to write, those written already
    (a run resumed), their bytes per row, and the rows file (--out) written from them."""

    chunks: int
    written: int
    per_row: float
    out: int


def _space_refusal(job, folder, out_file, short, disk, out_disk, need: _Need) -> str:
    """The refusal of a run whose files would not fit, naming each size and the space free."""
    from econ.files import size_text

    rows = f"{_what(job)} writes its {job.n:,} rows"
    if short == "out" or (short == "both" and need.chunks == 0):  # (a finished run's kept)
        need_text, free_text = _compared_sizes(need.out, out_disk.free)
        where = "on another disk" if short == "out" else "all written, on the same disk"
        return (
            f"{rows} to {out_file} after the run, from its chunk files in {folder} ({where}): "
            f"about {need_text}, {_room(free_text, out_disk.free)}; free some space there, give "
            "--out a file on another disk (out_file= from Python), or run fewer scenarios"
        )
    more = " more" if need.written else ""
    detail = f"{need.per_row:,.0f} bytes per row" + (
        f"; {size_text(need.written)} written already" if need.written else ""
    )
    chunks = f"{rows} to chunk files in {folder}: about "
    if short == "chunks":
        need_text, free_text = _compared_sizes(need.chunks, disk.free)
        return (
            f"{chunks}{need_text}{more} ({detail}), {_room(free_text, disk.free)}; free some "
            "space, keep the chunk files on another disk (--chunks DIR; store= from Python), or "
            "run fewer scenarios"
        )
    need_text, free_text = _compared_sizes(need.chunks + need.out, disk.free)
    return (
        f"{chunks}{size_text(need.chunks)}{more} ({detail}), and then to {out_file} from them, "
        f"about {size_text(need.out)}, on the same disk: {need_text} in all, "
        f"{_room(free_text, disk.free)}; free some space, put --out or the chunk files "
        "(--chunks DIR) on another disk (out_file=, store= from Python), or run fewer scenarios"
    )


def _room(free_text: str, free: int) -> str:
    return (
        f"more than the {free_text} free on that disk"
        if free
        else "and the disk is full (no space left on device)"
    )


def _compared_sizes(larger: int, smaller: int) -> tuple[str, str]:
    """Two byte counts in one unit with the decimals that tell them apart: "2.04 MB" and
    "2.00 MB", where size_text gave "2.0 MB" beside "2 MB", which read as no more."""
    from econ.files import size_text

    for unit, name in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB")):
        if smaller >= unit:
            for decimals in (1, 2, 3):
                texts = (f"{larger / unit:,.{decimals}f}", f"{smaller / unit:,.{decimals}f}")
                if texts[0] != texts[1]:
                    return f"{texts[0]} {name}", f"{texts[1]} {name}"
            return f"{larger:,} bytes", f"{smaller:,} bytes"
    return size_text(larger), size_text(smaller)


def check_store(store: str | Path | None) -> None:
    """Refuse a chunk folder given as an empty path, which wrote the chunk files and their
    manifest into the current folder (`--chunks ""`, an unset variable in a script)."""
    from econ.files import refuse_empty_path

    refuse_empty_path(
        store, "--chunks", "store", "a folder for the chunk files (leave it out to keep none)"
    )


def check_run_options(options: Mapping, caller: str, set_here: Sequence[str] = ()) -> None:
    """InputError naming `caller` (montecarlo, sweep, ...) for an option `run` does not take, or
    one the caller sets itself, with the nearest valid name; Python's TypeError named `run()`,
    which the caller never called."""
    import difflib
    import inspect

    valid = [p for p in inspect.signature(run).parameters if p != "job" and p not in set_here]
    for name in options:
        if name in valid:
            continue
        if name in set_here:
            why = f"{caller}() sets {name} itself"
        else:
            close = difflib.get_close_matches(str(name), valid, n=1)
            why = f"{caller}() takes no option {name!r}" + (
                f" (did you mean {close[0]}?)" if close else ""
            )
        raise InputError(f"{why}; its run options are: {', '.join(valid)}")


def run(
    job: Job,
    executor: Executor | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    store: str | Path | None = None,
    keep_rows: bool = True,
    summarize: bool = False,
    exact_limit: int = EXACT_LIMIT,
    progress: bool = False,
    overwrite: bool = False,
    hold_debt: bool = False,
    out_file: str | Path | None = None,
) -> RunResult:
    """Run a job in chunks through an executor.

    Parameters
    ----------
    job : the scenarios to run
    executor : where chunks run (default: serially in this process)
    chunk_size : rows per chunk, rounded up to whole sampling blocks (said in the notes)
    store : chunk folder; finished chunks are written there and reused by a rerun
    keep_rows : return one row per scenario (inputs and outputs) as a DataFrame
    summarize : return streaming summary statistics of the outputs
    exact_limit : runs up to this many scenarios get exact quantiles, larger ones a sketch
    progress : show a progress bar on stderr
    overwrite : let `store` discard the chunks of a different run
    hold_debt : every scenario holds the base case's sized loan instead of sizing its own
        (`econ.analysis.committed.hold_job`); the metadata's ``held_loan`` says what is held,
        and the first of the result's `notes` says it in a sentence
    out_file : the rows file to be written from the chunk files after the run
        (`econ.analysis.output.write_rows`; the CLI's --out): with `store`, its disk is
        checked for room before the run, beside the chunk files'. The run does not write it.
    """
    began = time.perf_counter()
    check_scenario(job.base, what="base")
    check_store(store)
    if executor is not None and not isinstance(executor, Executor):
        raise ExecutorError(
            f"executor is {type(executor).__module__}.{type(executor).__name__}; expected an "
            'econ executor: make_executor("serial" | "process" | "dask", workers=N), or for a '
            'Dask cluster of your own make_executor("dask", scheduler=ADDRESS), e.g. '
            "scheduler=client.scheduler.address for a distributed.Client"
        )
    executor = executor or SerialExecutor()
    executor.check_open()  # before any chunk folder is made
    given = job.base
    held = None
    if hold_debt:
        from econ.analysis.committed import hold_job

        job, held = hold_job(job)
    check_size(job, keep_rows)
    bounds = chunk_bounds(job, chunk_size)
    # each chunk is one ScenarioBatch.repeat, refused there beyond its memory: here, not mid-run
    check_repeat_size(
        job.base,
        min(job.n, bounds.rows_per_chunk),
        "a chunk",
        f"give a smaller chunk size (--chunk-size; chunk_size= from Python; the default is "
        f"{DEFAULT_CHUNK_SIZE:,})",
    )
    metadata = job.metadata(bounds.rows_per_chunk)  # the chunks run, not the size asked
    if bounds.rows_per_chunk != chunk_size:
        metadata["chunk_size_asked"] = chunk_size
    notes = [
        *([f"{HELD_NOTE}{held['note']}"] if held is not None else []),
        *replaced_overrides(job, metadata),
        *chunk_size_notes(job, chunk_size, bounds),
        *job.notes(),
    ]
    if notes:
        metadata["notes"] = notes
    # The hash `econ project` and library stamps give the base scenario, to join outputs on
    # (scenario_hash, of the TOML text of the scenario run, held loan included, names the chunks):
    # of the scenario as written files embed it, a measured curve resolved to its figures.
    from econ.embedding import embeddable
    from econ.provenance import scenario_sha256

    metadata["scenario_sha256"] = scenario_sha256(embeddable(given))
    if held is not None:
        metadata["held_loan"] = held
    engine = executor.describe()
    if store is not None:
        check_space(
            job, bounds, {**metadata, "engine": engine}, store, not progress, out_file=out_file
        )
    chunk_store = ChunkStore(store, metadata, overwrite=overwrite) if store is not None else None
    exact = job.n <= exact_limit
    metadata["engine"] = engine
    rows: dict[int, dict[str, np.ndarray]] = {}
    summaries = SummaryAccumulator(job.n)
    keep = keep_rows or chunk_store is not None
    resumed = resumed_rows = 0
    finished: set[int] = set()  # chunks whose file of this run is reused
    if chunk_store is not None:
        for index in chunk_store.indices(len(bounds)):
            start, stop, blocks = bounds[index]
            if not chunk_store.done(index, start, stop):
                continue
            finished.add(index)
            resumed += 1
            resumed_rows += stop - start
            task = ChunkTask(job, index, start, stop, blocks, keep, summarize, exact)
            stored = chunk_store.read(index)
            done = _from_rows(task, stored)
            if keep_rows:
                rows[index] = stored
            if summarize:
                summaries.add(done.summary)

    def tasks():
        # Built as the executor asks for them: a view of the job (an override table's rows)
        # exists only for the chunks in flight.
        for index in range(len(bounds)):
            if index in finished:
                continue
            start, stop, blocks = bounds[index]
            yield ChunkTask(
                job.view(start, stop), index, start, stop, blocks, keep, summarize, exact
            )

    from tqdm import tqdm

    bar = tqdm(
        total=job.n,
        initial=resumed_rows,
        unit=" scenarios",
        unit_scale=True,
        desc=job.kind,
        file=sys.stderr,
        disable=not progress,
        smoothing=0.1,
    )
    try:
        for result in executor.map_unordered(run_chunk, tasks()):
            if chunk_store is not None:
                try:
                    chunk_store.write(result.index, result.start, result.stop, result.rows, engine)
                except WriteError as exc:
                    raise ChunkWriteError(exc, chunk_store.directory) from None
            if keep_rows:
                rows[result.index] = result.rows
            if summarize:
                summaries.add(result.summary)
            bar.update(result.stop - result.start)
    finally:
        bar.close()

    frame = None
    if keep_rows:
        frame = pd.DataFrame(
            {name: np.concatenate([rows[i][name] for i in range(len(bounds))]) for name in rows[0]}
        )
    summary = summaries.result() if summarize else None
    note = unmoved_note(job, frame, summary)
    if note is not None:
        metadata.setdefault("notes", []).append(note)
    return RunResult(
        job=job,
        metadata=metadata,
        kept_rows=frame,
        summary=summary,
        chunks=len(bounds),
        resumed=resumed,
        seconds=time.perf_counter() - began,
        store=chunk_store,
    )


class RowsNotKeptError(InputError):
    """`RunResult.rows` of a run that kept none (keep_rows=False)."""


class ChunkWriteError(WriteError):
    """A chunk file that could not be written in the middle of a run (a full disk, most
    often). The chunks finished before it are kept and a rerun resumes from them: `folder`,
    `saved` (chunk files) and `saved_bytes` say what is left where."""

    def __init__(self, error: WriteError, folder: Path):
        self.folder = Path(folder)
        files = list(self.folder.glob("chunk-*.parquet"))
        self.saved = len(files)
        self.saved_bytes = sum(_size(f) for f in files)
        from econ.files import size_text

        # The writer's "nothing was written" holds for that file, not for the run.
        why = str(error).removesuffix("; nothing was written")
        kept = (
            f"the {counted(self.saved, 'finished chunk')} "
            f"({size_text(self.saved_bytes)}) {'is' if self.saved == 1 else 'are'} kept in "
            f"{self.folder}"
            if self.saved
            else f"no chunk had finished (none is kept in {self.folder})"
        )
        super().__init__(f"{why}; {kept}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


UNMOVED_RELATIVE = 1e-9
"""Outputs whose spread over a run is within this share of their size count as unmoved (the
engine's sums differ in their last bits between rows of equal inputs)."""


def unmoved_note(job: Job, frame: pd.DataFrame | None, summary: RunSummary | None) -> str | None:
    """A note where no output moves across a sweep's or Monte Carlo run's scenarios: the inputs
    it varies have no effect on the scenario, which a plain table would not say."""
    if job.n < 2 or job.kind not in ("sweep", "montecarlo"):
        return None
    if summary is not None:
        spans = [(m.minimum, m.maximum) for m in summary.metrics.values() if m.count]
    elif frame is not None:
        spans = []
        for name in job.outputs:
            values = frame[name].to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            if values.size:
                spans.append((float(values.min()), float(values.max())))
    else:
        return None
    if not spans or any(
        hi - lo > UNMOVED_RELATIVE * max(abs(lo), abs(hi), 1.0) for lo, hi in spans
    ):
        return None
    paths = ", ".join(job.input_paths())
    if all(_constant(job, frame, path) for path in job.input_paths()):
        # nothing varied, so nothing can be said of the inputs' effect
        return (
            f"{paths} {'takes' if len(job.input_paths()) == 1 else 'take'} one value in all "
            f"{job.n:,} scenarios: they are the same scenario"
        )
    outputs = f"({', '.join(job.outputs)})" if len(job.outputs) <= 4 else f"({len(job.outputs)})"
    return (
        f"none of the outputs {outputs} changes across the {job.n:,} scenarios: {paths} "
        f"{'has' if len(job.input_paths()) == 1 else 'have'} no effect on them in {job.base.name}"
    )


def _constant(job: Job, frame: pd.DataFrame | None, path: str) -> bool:
    """Whether an input takes one value in every scenario of the run (a one-value discrete
    distribution; a table whose rows repeat one value)."""
    if frame is not None and path in frame.columns:
        return frame[path].nunique(dropna=False) <= 1
    distribution = getattr(getattr(job, "plan_", None), "distributions", {}).get(path)
    values = getattr(distribution, "values", None)
    return values is not None and len(set(values)) == 1


def _from_rows(task: ChunkTask, stored: Mapping[str, np.ndarray]) -> ChunkResult:
    """A finished chunk rebuilt from its file: the same summary as when it was computed."""
    outputs = {name: stored[name] for name in task.job.outputs}
    summary = None
    if task.summarize:
        summary = summarize_chunk(outputs, task.start, task.stop, np.array(task.blocks), task.exact)
    return ChunkResult(task.index, task.start, task.stop, dict(stored), summary, 0.0)
