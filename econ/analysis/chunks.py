"""Per-chunk Parquet files of a batch run, so an interrupted run resumes where it stopped.

A chunk directory holds `manifest.json` (what run it belongs to) and one `chunk-NNNNNN.parquet`
per finished chunk, each written atomically (temporary file, then rename) with the run's metadata
in its Parquet schema (econ version, scenario hash, seed, sampling plan, engine, chunk range).
Rerunning the same run finds the finished chunks and computes only the others; a directory that
belongs to a different run (other plan, seed, scenario, version or chunk size) is refused unless
the caller asks to start over.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from econ import strict_json
from econ.errors import InputError
from econ.files import FROM_PYTHON, atomic_write, make_folder, reason, remove_stale_temporaries

MANIFEST = "manifest.json"
METADATA_KEY = b"econ"


RUN_IDENTITY = (
    ("kind", "kind of run"),
    ("scenario_hash", "base scenario"),
    ("plan", "plan"),
    ("seed", "seed"),
    ("n", "number of scenarios"),
    ("chunk_size", "chunk size"),
    ("econ_version", "econ version"),
)
"""Metadata that identifies a run (econ.analysis.runner.Job.metadata), with names for people."""


PLAN_PARTS = {
    "sha256": "the values of the override table",
    "names_sha256": "the names of the override table's rows",
}
"""Names for people of plan entries that are hashes (econ.analysis.sweeps.TableSweep.plan)."""


def run_differences(previous: Mapping, current: Mapping) -> list[str]:
    """What differs between the run a chunk folder holds and this one, in words, e.g.
    "plan: distributions of market.price_decline_annual" or "seed 42 in the folder, 7 now"."""
    current = json.loads(strict_json.dumps(current, default=str))  # as the manifest holds it
    out = []
    for key, label in RUN_IDENTITY:
        old, new = previous.get(key), current.get(key)
        if old == new:
            continue
        if key == "plan" and isinstance(old, dict) and isinstance(new, dict):
            for part in sorted(set(old) | set(new)):
                a, b = old.get(part), new.get(part)
                if a == b:
                    continue
                if isinstance(a, dict) and isinstance(b, dict):
                    paths = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))
                    out.append(f"plan: {part} of {', '.join(paths)}")
                else:
                    out.append(f"plan: {PLAN_PARTS.get(part, part)}")
        elif key == "scenario_hash":
            names = (previous.get("scenario"), current.get("scenario"))
            named = (
                f" ('{names[0]}' in the folder, '{names[1]}' now)" if len(set(names)) > 1 else ""
            )
            out.append(f"{label}{named}: its contents differ")
        else:
            out.append(f"{label} {old} in the folder, {new} now")
    return out or ["its fingerprint (a folder written by another econ version)"]


class ChunkStoreError(InputError):
    """A chunk directory that cannot be used for this run."""


class ChunkStore:
    """Chunk files of one run in `directory`.

    Parameters
    ----------
    directory : folder of the chunk files (created if missing)
    metadata : JSON-ready run metadata; `metadata["fingerprint"]` identifies the run
    overwrite : discard chunk files of another run instead of refusing
    """

    def __init__(self, directory: str | os.PathLike, metadata: Mapping, overwrite: bool = False):
        self.directory = Path(directory)
        self.metadata = dict(metadata)
        self.fingerprint = str(metadata["fingerprint"])
        try:
            not_a_folder = self.directory.exists() and not self.directory.is_dir()
            parent_missing = not self.directory.parent.is_dir()
        except OSError as exc:  # e.g. a name longer than the file system allows
            raise ChunkStoreError(f"{self.directory}: cannot use it: {reason(exc)}") from None
        if not_a_folder:
            raise ChunkStoreError(f"{self.directory}: exists and is not a folder")
        if parent_missing:
            raise ChunkStoreError(
                f"{self.directory}: folder {self.directory.parent} does not exist"
            )
        made = not self.directory.exists()
        make_folder(self.directory)
        # Chunk files are written without a scan of the folder each; a killed run's are removed here.
        remove_stale_temporaries(self.directory, r"chunk-[0-9]{6}\.parquet", time.time())
        manifest = self.directory / MANIFEST
        previous = {}
        if manifest.exists():
            try:
                previous = json.loads(manifest.read_text())
            except (OSError, json.JSONDecodeError):
                previous = {}
            if previous.get("fingerprint") != self.fingerprint:
                if not overwrite and "fingerprint" not in previous:
                    raise ChunkStoreError(
                        f"{self.directory}: its {MANIFEST} was not written by econ (it names no "
                        f"run); use --force to replace it and discard the folder's chunk files "
                        f"{FROM_PYTHON}, or choose another folder"
                    )
                if not overwrite:
                    raise ChunkStoreError(
                        f"{self.directory} holds chunks of another run, which differs in "
                        + "; ".join(run_differences(previous, self.metadata))
                        + f"; use --force to discard them {FROM_PYTHON}, or choose another "
                        "folder"
                    )
                self.clear()
        elif next(self.directory.glob("chunk-*.parquet"), None) is not None:
            if not overwrite:
                raise ChunkStoreError(
                    f"{self.directory} holds chunk files but no {MANIFEST} saying which run wrote "
                    f"them; use --force to discard them {FROM_PYTHON}, or choose another folder"
                )
            self.clear()
        atomic_write(
            manifest, strict_json.dumps(self.metadata, indent=2, default=str), overwrite=True
        )
        # econ made the folder, for this run or for an earlier one whose manifest it held
        self.made = made or "fingerprint" in previous

    def discard(self, count: int) -> None:
        """Delete what the run wrote: its chunk files (indices below `count`) and its manifest,
        then the folder where econ made it (`made`) and nothing else is left in it. Never a
        file econ did not write: `econ montecarlo --out r.parquet` removed r.parquet.chunks with
        everything in it, a user's files too. A file that cannot be removed is left."""
        for index in self.indices(count):
            with contextlib.suppress(OSError):
                self.path(index).unlink()
        with contextlib.suppress(OSError):
            (self.directory / MANIFEST).unlink()
        if self.made:
            with contextlib.suppress(OSError):  # not empty: files that are not the run's
                self.directory.rmdir()

    def path(self, index: int) -> Path:
        return self.directory / f"chunk-{index:06d}.parquet"

    def clear(self) -> None:
        for path in self.directory.glob("chunk-*.parquet"):
            path.unlink()

    def indices(self, count: int) -> list[int]:
        """Indices below `count` that have a chunk file, in order: one listing of the folder,
        not one look-up per chunk of the run."""
        found = []
        for path in self.directory.glob("chunk-*.parquet"):
            digits = path.name[len("chunk-") : -len(".parquet")]
            if len(digits) >= 6 and digits.isdigit() and int(digits) < count:
                found.append(int(digits))
        return sorted(found)

    def done(self, index: int, start: int, stop: int) -> bool:
        """True when chunk `index` was written by this run, complete."""
        import pyarrow.parquet as pq

        path = self.path(index)
        if not path.is_file():
            return False
        try:
            meta = pq.read_schema(path).metadata or {}
            info = json.loads(meta.get(METADATA_KEY, b"{}"))
            rows = pq.ParquetFile(path).metadata.num_rows
        except Exception:  # noqa: BLE001 - an unreadable file is recomputed
            return False
        return (
            info.get("fingerprint") == self.fingerprint
            and info.get("chunk") == [index, start, stop]
            and rows == stop - start
        )

    def write(
        self, index: int, start: int, stop: int, rows: Mapping[str, np.ndarray], engine: dict
    ):
        """Write chunk `index` atomically with the run metadata."""
        table = to_arrow(rows, {**self.metadata, "engine": engine, "chunk": [index, start, stop]})
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        # No fsync: a chunk is a resumable cache, checked (rows, range, run) before it is reused.
        atomic_write(self.path(index), buffer.getvalue(), overwrite=True, sync=False, clean=False)

    def read(self, index: int) -> dict[str, np.ndarray]:
        import pyarrow.parquet as pq

        table = pq.read_table(self.path(index))
        return {name: _to_numpy(table.column(name)) for name in table.column_names}

    def iter_tables(self, count: int) -> Iterator:
        import pyarrow.parquet as pq

        for index in range(count):
            yield pq.read_table(self.path(index))


def _to_numpy(column) -> np.ndarray:
    import pyarrow as pa

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return np.asarray(column.to_pylist(), dtype=object)
    return column.to_numpy()


def to_arrow(rows: Mapping[str, np.ndarray], metadata: Mapping):
    """Arrow table of the row columns with `metadata` (JSON) in the schema under b"econ"."""
    import pyarrow as pa

    from econ.export import numbers_as_float

    arrays = {}
    for name, values in rows.items():
        values = np.asarray(values)
        if values.dtype == object:  # numbers stay float64 even where none has a value
            floats = numbers_as_float(values)
            values = values.tolist() if floats is None else floats
        arrays[name] = pa.array(values)
    table = pa.table(arrays)
    payload = strict_json.dumps(dict(metadata), default=str).encode()
    return table.replace_schema_metadata({METADATA_KEY: payload})


def read_metadata(path: str | os.PathLike) -> dict:
    """The run metadata stored in a Parquet file written by econ."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta.get(METADATA_KEY, b"{}"))
