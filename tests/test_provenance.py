"""Provenance stamps and reproducibility: scenario hashes, catalog versions, creation time, and
byte-identical outputs when the same scenario is run twice (the creation time aside)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import threading
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import econ
from econ import catalog, provenance
from econ.export import write_outputs
from econ.provenance import CREATED_FIELD, ProvenanceError
from econ.scenario import loads
from econ.sources import code_fingerprint
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
T1 = dt.datetime(2026, 4, 1, 12, 0, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2027, 5, 2, 13, 30, 5, tzinfo=dt.UTC)


def test_sha256_reference_vector():
    # FIPS 180-4 example "abc": the digest the scenario hash relies on.
    assert hashlib.sha256(b"abc").hexdigest() == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_scenario_hash_is_sha256_of_canonical_json():
    scenario = econ.load_scenario(SEED)
    text = provenance.canonical_json(scenario)
    assert json.loads(text) == scenario.model_dump(mode="json")
    # Sorted keys and no layout whitespace: the text is its own canonical form.
    canonical = json.dumps(
        json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert text == canonical
    expected = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert provenance.scenario_sha256(scenario) == expected
    assert len(expected) == 64


def test_hash_ignores_layout_and_spelled_out_defaults():
    plain = loads('name = "x"\n[capex]\ngpu_price_usd = 30000.0\n[utilization]\nshare = 0.5\n')
    reordered = loads(
        '# comment\nname = "x"\n[utilization]\nramp_months = 0\nshare = 0.50\n'
        "[capex]\ngpu_price_usd = 3e4\n"
    )
    assert provenance.scenario_sha256(plain) == provenance.scenario_sha256(reordered)


def test_hash_changes_with_any_input():
    base = econ.load_scenario(SEED)
    changed = econ.load_scenario(SEED, {"market.price_usd_per_mtok": 0.3262})
    renamed = econ.load_scenario(SEED, {"name": "other"})
    hashes = {provenance.scenario_sha256(s) for s in (base, changed, renamed)}
    assert len(hashes) == 3


def test_catalog_versions(tmp_path: Path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "a.toml").write_bytes(b"x = 1\n")
    (tmp_path / "hardware.toml").write_bytes(b"h = 2\n")
    (tmp_path / ".hidden").write_bytes(b"ignored")
    versions = provenance.catalog_versions(tmp_path)
    assert set(versions) == {"scenarios", "hardware.toml"}
    # The documented recipe: sha256 over "relative path NUL file sha256 newline", 16 hex digits.
    file_hash = hashlib.sha256(b"x = 1\n").hexdigest()
    recipe = hashlib.sha256(f"scenarios/a.toml\0{file_hash}\n".encode()).hexdigest()[:16]
    assert versions["scenarios"] == recipe
    (tmp_path / "scenarios" / "a.toml").write_bytes(b"x = 2\n")
    assert provenance.catalog_versions(tmp_path)["scenarios"] != recipe
    assert provenance.catalog_versions(tmp_path)["hardware.toml"] == versions["hardware.toml"]
    assert provenance.catalog_versions(tmp_path / "absent") == {}


def test_catalogs_under_a_hidden_folder_are_versioned(tmp_path: Path):
    """Found by review: files were skipped when any folder of their absolute path started with
    '.', so a models/ folder installed under ~/.local or a .venv hashed every folder catalog as
    empty, and the results cached under that version outlived any change to the MLPerf rows."""
    base = tmp_path / ".venv" / "models"
    (base / "benchmarks" / ".git").mkdir(parents=True)
    (base / "benchmarks" / "rows.csv").write_bytes(b"a,1\n")
    (base / "benchmarks" / ".git" / "HEAD").write_bytes(b"ignored")  # hidden below models/
    file_hash = hashlib.sha256(b"a,1\n").hexdigest()
    recipe = hashlib.sha256(f"benchmarks/rows.csv\0{file_hash}\n".encode()).hexdigest()[:16]
    assert provenance.catalog_versions(base) == {"benchmarks": recipe}


def test_catalog_data_is_read_again_once_the_catalog_version_changes(tmp_path, monkeypatch):
    """The loaders' caches (econ.catalog.catalog_cache) follow the signature catalog_versions
    reads: a changed models/ is read again, not served from what was read before."""
    import shutil

    from econ.hardware import get_hardware

    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    monkeypatch.setenv("ECON_MODELS_DIR", str(models))
    catalog = models / "hardware.toml"
    before = provenance.catalog_versions()
    power = get_hardware("gb200-nvl72").gpu_tdp_w
    text = catalog.read_text()
    line = f"gpu_tdp_w = {power:g}"
    start = text.index("[hardware.gb200-nvl72]")
    at = text.index(line, start)
    catalog.write_text(text[:at] + f"gpu_tdp_w = {power + 1:g}" + text[at + len(line) :])
    assert get_hardware("gb200-nvl72").gpu_tdp_w == power  # read once: the catalog is not re-read
    assert provenance.catalog_versions()["hardware.toml"] != before["hardware.toml"]
    assert get_hardware("gb200-nvl72").gpu_tdp_w == power + 1  # read again under the new version


def _look_in_a_thread(files) -> tuple[threading.Thread, list]:
    """`catalog_signature` of models/ in a thread, over the catalog files `files` yields."""
    seen: list = []
    look = threading.Thread(
        target=lambda: seen.append(catalog.catalog_signature(None, [("hardware.toml", files)]))
    )
    look.start()
    return look, seen


@pytest.fixture
def one_catalog(tmp_path, monkeypatch) -> Path:
    """A models/ folder of one catalog file, the one econ reads, its signature seen."""
    monkeypatch.setenv("ECON_MODELS_DIR", str(tmp_path))
    path = tmp_path / "hardware.toml"
    path.write_text("a = 1\n")
    catalog.catalog_signature()
    return path


def test_a_look_at_models_from_before_a_change_does_not_put_its_signature_back(one_catalog):
    """A review: a thread that looked at models/ before a change and finished after a thread
    that saw the change wrote its older signature over the newer one, so every later look
    counted a change (and emptied every cache) again."""
    looked, go = threading.Event(), threading.Event()

    def files():
        yield one_catalog  # (looked at: stat'ed, before the change)
        looked.set()
        assert go.wait(10)

    look, seen = _look_in_a_thread(files())
    assert looked.wait(10)
    one_catalog.write_text("a = 22\n")  # a change another thread sees first
    newer = catalog.catalog_signature()
    go.set()
    look.join(10)
    assert seen[0] != newer  # the older look saw the file before the change
    generation = catalog._GENERATION
    assert catalog.catalog_signature() == newer
    assert catalog.catalog_generation() == generation  # no change counted: there is none


def test_a_look_that_sees_a_change_empties_the_caches_whatever_started_later(one_catalog):
    """The other order: a look that started first but saw the change (a newer look, finished
    before, saw the folder as it was) empties the caches: data from before is never served."""
    started, go = threading.Event(), threading.Event()

    def files():
        started.set()
        assert go.wait(10)
        yield one_catalog  # (looked at after the change)

    look, seen = _look_in_a_thread(files())
    assert started.wait(10)
    older = catalog.catalog_signature()  # started later, saw no change
    generation = catalog._GENERATION
    one_catalog.write_text("a = 22\n")
    go.set()
    look.join(10)
    assert seen[0] != older
    assert catalog._GENERATION == generation + 1


def test_catalog_versions_emptied_by_another_thread_meanwhile_are_computed(
    one_catalog, monkeypatch
):
    """The cache of catalog versions, emptied by another thread between the look that found
    the versions there and the read of them, was a KeyError."""
    versions = provenance.catalog_versions()

    class EmptiedMeanwhile(dict):
        def __contains__(self, key):
            found = super().__contains__(key)
            self.clear()  # (another thread's write of other versions)
            return found

    monkeypatch.setattr(provenance, "_CATALOG_CACHE", EmptiedMeanwhile(provenance._CATALOG_CACHE))
    assert provenance.catalog_versions() == versions


def test_shipped_catalogs_are_versioned():
    versions = provenance.catalog_versions()
    for name in ("scenarios", "benchmarks"):
        assert len(versions[name]) == 16


def test_creation_time(monkeypatch):
    assert provenance.creation_time(T1) == "2026-04-01T12:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert provenance.creation_time() == "1970-01-01T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ProvenanceError, match="SOURCE_DATE_EPOCH = 'yesterday'"):
        provenance.creation_time()
    with pytest.raises(ProvenanceError, match="time zone"):
        provenance.creation_time(dt.datetime(2026, 1, 1))


@pytest.mark.parametrize("seed", [1.5, True, "7"])
def test_bad_seed(seed):
    with pytest.raises(ProvenanceError, match="seed"):
        provenance.stamp(names=["x"], seed=seed)


def test_stamp_fields_keep_the_time_apart():
    scenario = econ.load_scenario(SEED)
    stamp = provenance.stamp([scenario], seed=42, created=T1)
    assert stamp.seed == 42 and stamp.created_utc == "2026-04-01T12:00:00Z"
    assert CREATED_FIELD not in stamp.fields()
    assert list(stamp.to_dict())[-1] == CREATED_FIELD
    assert stamp.fields()["scenarios"] == [
        {"name": scenario.name, "sha256": provenance.scenario_sha256(scenario)}
    ]


def _export(folder: Path, created, path=SEED) -> dict[str, Path]:
    folder.mkdir()
    scenario = econ.load_scenario(path)
    targets = {
        "csv": folder / "p.csv",
        "json": folder / "p.json",
        "parquet": folder / "p.parquet",
        "xlsx": folder / "p.xlsx",
    }
    write_outputs(econ.project(scenario), targets, scenarios=[scenario], created=created)
    return targets


def test_reruns_are_byte_identical_apart_from_the_time(tmp_path: Path):
    # The same scenario as a differently laid out file: same validated inputs.
    copy = tmp_path / "copy.toml"
    copy.write_text("# a copy with a comment\n" + SEED.read_text())
    a = _export(tmp_path / "a", T1)
    b = _export(tmp_path / "b", T2, path=copy)
    assert (tmp_path / "a" / "p.csv").read_bytes() == (tmp_path / "b" / "p.csv").read_bytes()

    def without_time(path: Path) -> tuple[str, set[str]]:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        times = set(frame.pop(CREATED_FIELD))
        return frame.to_csv(index=False), times

    summary_a, time_a = without_time(tmp_path / "a" / "p.summary.csv")
    summary_b, time_b = without_time(tmp_path / "b" / "p.summary.csv")
    assert summary_a == summary_b
    assert time_a == {"2026-04-01T12:00:00Z"} and time_b == {"2027-05-02T13:30:05Z"}

    lines_a = a["json"].read_text().splitlines()
    lines_b = b["json"].read_text().splitlines()
    differ = [(x, y) for x, y in zip(lines_a, lines_b, strict=True) if x != y]
    assert differ == [
        ('  "created_utc": "2026-04-01T12:00:00Z",', '  "created_utc": "2027-05-02T13:30:05Z",')
    ]


def test_same_time_gives_identical_files_in_every_format(tmp_path: Path):
    a = _export(tmp_path / "a", T1)
    b = _export(tmp_path / "b", T1)
    for kind in ("csv", "json", "xlsx"):
        assert a[kind].read_bytes() == b[kind].read_bytes(), kind


def test_outputs_carry_the_stamp(tmp_path: Path):
    targets = _export(tmp_path / "a", T1)
    scenario = econ.load_scenario(SEED)
    sha = provenance.scenario_sha256(scenario)
    monthly = pd.read_csv(targets["csv"], dtype={"seed": str})
    assert set(monthly["scenario_sha256"]) == {sha}
    assert set(monthly["econ_version"]) == {econ.__version__}
    assert "scenarios=" in monthly["catalog_versions"][0]
    payload = json.loads(targets["json"].read_text())
    assert payload["provenance"]["scenarios"][0]["sha256"] == sha
    assert payload[CREATED_FIELD] == "2026-04-01T12:00:00Z"
    for path in (targets["parquet"], tmp_path / "a" / "p.summary.parquet"):
        metadata = pq.read_schema(path).metadata
        assert metadata[b"econ_version"] == econ.__version__.encode()
        assert json.loads(metadata[b"econ_scenarios"])[0]["sha256"] == sha
        assert metadata[b"econ_created_utc"] == b"2026-04-01T12:00:00Z"
        assert b"benchmarks=" in metadata[b"econ_catalogs"]
    frame = pd.read_parquet(targets["parquet"])
    assert set(frame["scenario_sha256"]) == {sha}


def test_outputs_name_the_code_that_made_them(tmp_path: Path, monkeypatch):
    """econ_version is 0.1.0 at every commit, so a JSON or Parquet file could not say which code
    made it (a batch run's metadata and the library's results could): the stamp carries the
    code's fingerprint, and null where the code that ran is unknown."""
    code = code_fingerprint()
    assert code and code.startswith(f"{econ.__version__}+")
    targets = _export(tmp_path / "a", T1)
    assert json.loads(targets["json"].read_text())["provenance"]["econ_code"] == code
    assert pq.read_schema(targets["parquet"]).metadata[b"econ_code"] == code.encode()
    monkeypatch.setattr(provenance, "code_fingerprint", lambda: None)  # files changed under it
    assert provenance.stamp([econ.load_scenario(SEED)], created=T1).fields()["econ_code"] is None


def test_random_outputs_carry_their_seed(tmp_path: Path):
    scenario = econ.load_scenario(SEED)
    out = tmp_path / "mc.csv"
    write_outputs(econ.project(scenario), {"csv": out}, scenarios=[scenario], seed=20260401)
    assert set(pd.read_csv(out)["seed"]) == {20260401}
    summary = pd.read_csv(tmp_path / "mc.summary.csv")
    assert summary["seed"][0] == 20260401


def test_workbook_notes_hold_the_stamp(tmp_path: Path):
    from openpyxl import load_workbook

    targets = _export(tmp_path / "a", T1)
    notes = load_workbook(targets["xlsx"], read_only=True)["Notes"]
    rows = {(r[0], r[2]): r[3] for r in notes.iter_rows(min_row=2, values_only=True)}
    scenario = econ.load_scenario(SEED)
    assert rows[("provenance", "scenario_sha256")] == provenance.scenario_sha256(scenario)
    assert rows[("provenance", CREATED_FIELD)] == "2026-04-01T12:00:00Z"
    assert rows[("provenance", "econ_version")] == econ.__version__
    # the code that wrote it, as in the document properties (before, those alone had it)
    assert rows[("provenance", "econ_code")] == code_fingerprint()
    assert rows[("provenance", "econ_code")].startswith(f"{econ.__version__}+")
    frame = pd.read_excel(io.BytesIO(targets["xlsx"].read_bytes()), sheet_name="Notes")
    assert "catalog scenarios" in set(frame["item"])
