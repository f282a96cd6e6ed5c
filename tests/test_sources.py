"""The fingerprint of the econ code running (econ.sources), which a batch run records in its
metadata and checks each Dask worker's against (tests/test_batch_faults.py runs real workers)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import econ
from econ.analysis.montecarlo import montecarlo
from econ.scenario import load_scenario
from econ.sources import HASH_CHARS, code_fingerprint, short, sources_sha256
from tests.conftest import ROOT

PACKAGE = Path(econ.__file__).parent


@pytest.fixture
def copy(tmp_path) -> Path:
    folder = tmp_path / "econ"
    shutil.copytree(PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_the_fingerprint_is_the_version_and_the_sources_hash_and_stays_put():
    code = code_fingerprint()
    assert code == f"{econ.__version__}+{sources_sha256(PACKAGE)[:HASH_CHARS]}"
    assert code_fingerprint() == code
    assert code_fingerprint.__wrapped__() == code  # computed again, not only cached


def test_it_is_the_library_results_key_of_the_same_code():
    from econ.library.store import engine_version

    assert code_fingerprint() == engine_version()


def test_the_hash_changes_with_a_file_s_bytes_and_only_with_them(copy):
    before = sources_sha256(copy)
    assert sources_sha256(copy) == before
    assert before == sources_sha256(PACKAGE)  # the folder's place is not hashed
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "stale.py").write_text("x = 1\n")
    (copy / "notes.txt").write_text("not code\n")
    assert sources_sha256(copy) == before
    units = copy / "units.py"
    text = units.read_bytes()
    units.write_bytes(text + b"# a comment\n")
    assert sources_sha256(copy) != before
    units.write_bytes(text)
    assert sources_sha256(copy) == before
    (copy / "units.py").rename(copy / "units2.py")  # same bytes, another file
    assert sources_sha256(copy) != before


def test_no_fingerprint_names_files_changed_after_econ_was_imported(monkeypatch):
    monkeypatch.setattr(econ, "_IMPORTED_NS", 0)  # every file is newer than the import
    assert code_fingerprint.__wrapped__() is None
    assert short(None) == "unknown (its econ files changed after it started)"


def test_a_message_shows_the_version_and_twelve_hex_digits():
    assert short("0.1.0+" + "0123456789abcdef" * 2) == "0.1.0+0123456789ab"


def test_a_run_records_its_code_beside_its_version():
    base = load_scenario(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    result = montecarlo(base, {"market.price_decline_annual": "uniform(0.2,0.3)"}, 8)
    assert result.metadata["econ_version"] == econ.__version__
    assert result.metadata["econ_code"] == code_fingerprint()
