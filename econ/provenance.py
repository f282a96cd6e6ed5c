"""Provenance stamps: what produced an output, so that a figure can be traced and reproduced.

A stamp holds the package version, a canonical hash of each validated scenario (and of each
measured curve file it reads: the scenario names the file, its hash pins the content), the
versions of the data catalogs shipped in models/, the random seed where the output is random, and
the creation time. Everything except the creation time is a function of the inputs, so two runs of the same
scenario give the same stamp apart from `created_utc`; writers keep that one field apart (its own
CSV column, JSON key, Parquet metadata key, workbook cell) so reruns can be compared byte for byte.

The scenario hash is the SHA-256 of the canonical JSON of the *validated* scenario (defaults filled
in, keys sorted, no whitespace, floats in their shortest round-trip form): two files that differ
only in layout, comments, key order or in spelling out a default hash alike, and any change of an
input changes the hash. Catalog versions hash the files under models/ (each top-level entry apart:
`scenarios`, `benchmarks`, `hardware.toml`, ...) by relative path and content.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econ import __version__
from econ.catalog import catalog_entries, catalog_signature, models_dir
from econ.errors import InputError
from econ.scenario.models import Scenario
from econ.sources import code_fingerprint

CREATED_FIELD = "created_utc"
"""Name of the creation-time field in every output; the only field that differs between reruns."""

CATALOG_HASH_CHARS = 16
"""Hex digits kept of a catalog's SHA-256 (64 bits: collisions are not a practical concern for
telling catalog versions apart, and the stamp stays short enough for a CSV column)."""


class ProvenanceError(InputError):
    """A stamp that cannot be made as asked (e.g. a seed that is not an integer)."""


def canonical_json(scenario: Scenario) -> str:
    """Canonical JSON text of a validated scenario: sorted keys, no whitespace, UTF-8 text.

    Dates become ISO strings, tuples lists, None null; floats are written in Python's shortest
    round-trip form, so equal inputs give equal text on every platform.
    """
    data = scenario.model_dump(mode="json")
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def scenario_sha256(scenario: Scenario) -> str:
    """SHA-256 (64 hex digits) of the scenario's canonical JSON."""
    return hashlib.sha256(canonical_json(scenario).encode("utf-8")).hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_CATALOG_CACHE: dict[tuple, dict[str, str]] = {}


def catalog_versions(root: str | os.PathLike | None = None) -> dict[str, str]:
    """Version of each data catalog under models/: entry name -> first 16 hex of its SHA-256.

    A folder's hash covers every file below it (relative path and content, in sorted order); a
    file's covers its content. Hidden files and caches are skipped (`econ.catalog.catalog_entries`).
    The result is cached while no file's size or modification time changes
    (`econ.catalog.catalog_signature`), and a change makes econ read the catalogs again: the
    data cached from models/ is then dropped, so what is computed next is computed from the files
    these versions name. An absent folder gives an empty dict.
    """
    base = Path(root) if root is not None else models_dir()
    if not base.is_dir():
        return {}
    entries = catalog_entries(base)
    key = catalog_signature(base, entries)
    known = _CATALOG_CACHE.get(key)  # (one look: another thread may empty the cache after it)
    if known is not None:
        return dict(known)
    versions = {}
    for name, files in entries:
        digest = hashlib.sha256()
        for p in files:
            relative = p.relative_to(base).as_posix()
            digest.update(f"{relative}\0{_file_sha256(p)}\n".encode())
        versions[name] = digest.hexdigest()[:CATALOG_HASH_CHARS]
    _CATALOG_CACHE.clear()
    _CATALOG_CACHE[key] = versions
    return dict(versions)


def format_catalogs(catalogs: Mapping[str, str]) -> str:
    """One-line text of catalog versions: `name=hash;name=hash` in name order."""
    return ";".join(f"{name}={version}" for name, version in sorted(catalogs.items()))


def creation_time(now: dt.datetime | None = None) -> str:
    """Creation time as ISO 8601 UTC to the second, e.g. 2026-04-01T12:00:00Z.

    $SOURCE_DATE_EPOCH (reproducible-builds.org) fixes it when set, so a whole output, time
    included, can be reproduced byte for byte.
    """
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        if epoch:
            try:
                now = dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC)
            except ValueError:
                raise ProvenanceError(
                    f"SOURCE_DATE_EPOCH = {epoch!r}: expected whole seconds since 1970-01-01"
                ) from None
        else:
            now = dt.datetime.now(dt.UTC)
    if now.tzinfo is None:
        raise ProvenanceError(f"creation time {now.isoformat()}: expected a time zone (UTC)")
    return now.astimezone(dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Stamp:
    """Provenance of one output.

    Attributes
    ----------
    econ_version : version of the package that produced the output
    econ_code : that version and the start of the SHA-256 of its source files
        (`econ.sources.code_fingerprint`, e.g. 0.1.0+2ddcfb30...): the version is 0.1.0 at every
        commit, the code's hash tells two apart; None where econ's files changed after the
        process imported it (the code that ran is then unknown)
    scenarios : (name, sha256) of each scenario, in output order; sha256 is "" when the scenario
        itself was not given to the writer (only its projection)
    curves : per scenario, (file name, sha256) of each measured curve file its throughput (or a
        vintage's) reads, the content the projection used (`econ.throughput.resolve.curve_sha256`);
        empty where it reads none or was not given
    catalogs : catalog name -> version (see `catalog_versions`)
    seed : random seed of a random output (Monte Carlo), None otherwise
    created_utc : creation time, ISO 8601 UTC; the only field that changes between reruns
    """

    econ_version: str
    scenarios: tuple[tuple[str, str], ...]
    econ_code: str | None = None
    catalogs: Mapping[str, str] = field(default_factory=dict)
    curves: tuple[tuple[tuple[str, str], ...], ...] = ()
    seed: int | None = None
    created_utc: str = ""

    def sha256_of(self, index: int) -> str:
        return self.scenarios[index][1] if index < len(self.scenarios) else ""

    def fields(self) -> dict[str, Any]:
        """The reproducible part (no creation time), JSON-ready."""
        return {
            "econ_version": self.econ_version,
            "econ_code": self.econ_code,
            "scenarios": [
                {"name": name, "sha256": sha} | self._curves_of(k)
                for k, (name, sha) in enumerate(self.scenarios)
            ],
            "catalogs": dict(sorted(self.catalogs.items())),
            "seed": self.seed,
        }

    def _curves_of(self, index: int) -> dict[str, Any]:
        """{"curves": [{"file", "sha256"}, ...]} of scenario `index`, {} when it reads none."""
        curves = self.curves[index] if index < len(self.curves) else ()
        if not curves:
            return {}
        return {"curves": [{"file": name, "sha256": sha} for name, sha in curves]}

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready, the creation time last."""
        return {**self.fields(), CREATED_FIELD: self.created_utc}

    def json_header(self) -> dict[str, Any]:
        """The first keys of a JSON output: `econ_version`, `provenance` (the reproducible part)
        and `created_utc` (on a line of its own once indented)."""
        return {
            "econ_version": self.econ_version,
            "provenance": self.fields(),
            CREATED_FIELD: self.created_utc,
        }

    def metadata(self) -> dict[str, str]:
        """Flat text key/values (Parquet schema metadata, workbook document properties)."""
        return {
            "econ_version": self.econ_version,
            "econ_code": self.econ_code or "",
            "econ_scenarios": json.dumps(self.fields()["scenarios"], ensure_ascii=False),
            "econ_catalogs": format_catalogs(self.catalogs),
            "econ_seed": "" if self.seed is None else str(self.seed),
            f"econ_{CREATED_FIELD}": self.created_utc,
        }


def stamp(
    scenarios: Iterable[Scenario] | None = None,
    names: Iterable[str] | None = None,
    seed: int | None = None,
    created: dt.datetime | str | None = None,
    models: str | os.PathLike | None = None,
) -> Stamp:
    """Provenance stamp of an output made from `scenarios` (or only their `names`).

    Parameters
    ----------
    scenarios : validated scenarios, in output order; their hashes are stamped
    names : scenario names when the scenarios themselves are not at hand (hashes left empty)
    seed : random seed where the output is random
    created : creation time (datetime with time zone, or ISO text); default now (or
        $SOURCE_DATE_EPOCH)
    models : models/ folder whose catalogs are versioned; default `econ.catalog.models_dir()`
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ProvenanceError(f"seed = {seed!r}: expected an integer or None")
    curves: tuple[tuple[tuple[str, str], ...], ...] = ()
    if scenarios is not None:
        scenarios = list(scenarios)
        pairs = tuple((s.name, scenario_sha256(s)) for s in scenarios)
        curves = tuple(curve_files(s) for s in scenarios)
    else:
        pairs = tuple((str(name), "") for name in (names or ()))
    created_text = created if isinstance(created, str) else creation_time(created)
    return Stamp(
        econ_version=__version__,
        econ_code=code_fingerprint(),
        scenarios=pairs,
        catalogs=catalog_versions(models),
        curves=curves,
        seed=seed,
        created_utc=created_text,
    )


def curve_files(scenario: Scenario) -> tuple[tuple[str, str], ...]:
    """(file name, sha256) of each measured curve file the scenario's fleet or a vintage's reads,
    once each, in order; the hash is of the content the projection read (see `Stamp.curves`)."""
    from econ.embedding import curve_paths
    from econ.throughput.resolve import curve_sha256

    return tuple((Path(path).name, curve_sha256(path)) for path in curve_paths(scenario))


__all__ = [
    "CREATED_FIELD",
    "ProvenanceError",
    "Stamp",
    "canonical_json",
    "catalog_versions",
    "creation_time",
    "curve_files",
    "format_catalogs",
    "scenario_sha256",
    "stamp",
]
