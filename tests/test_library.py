"""The scenario library (econ.library, `econ library ...`, library:NAME[@V]) on SQLite and on a
real PostgreSQL server started by the postgres_socket fixture (tests/conftest.py)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import ROOT

from econ import __version__ as econ_version
from econ.cli import main
from econ.library import LibraryError, Ref, open_library, parse_ref, store
from econ.library.diff import differs, metric_changes, unit_of
from econ.library.store import project_summary, skeleton
from econ.scenario import ScenarioError, load_scenario
from econ.scenario.migrations import MIGRATIONS, Migration

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
SEED_NAME = "deepseek-r1-gb200-nvl72"
HALL = ROOT / "models" / "scenarios" / "hall-10mw-hgx-b200-air.toml"


def econ(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def show_line(ref: str) -> str:
    """The first line `econ library show` writes before a stored text: `# econ library: NAME@V`
    (which `save` reads as the version the file was edited from)."""
    return f"# econ library: {ref}\n"


def edited(tmp_path: Path, old: str, new: str, source: Path = SEED, name: str = "b.toml") -> Path:
    text = source.read_text()
    assert old in text
    path = tmp_path / name
    path.write_bytes(text.replace(old, new, 1).encode())
    return path


def saved_author(name: str, url: str) -> str:
    """How a library records a name given as the author (--author, ECON_AUTHOR): on SQLite as
    given; on PostgreSQL with the connected role beside it where they differ (the test server's
    libraries are opened as `postgres`)."""
    role = sa.engine.make_url(url).username
    return name if url.startswith("sqlite") or name == role else f"{name} (role {role})"


def summary_of(capsys, target) -> dict:
    rc, out, _ = econ(capsys, "project", target, "--format", "json")
    assert rc == 0
    return json.loads(out)["scenarios"][0]["summary"]


# --- versions, exactly as saved -----------------------------------------------------------------


def test_save_history_show_keep_every_version_exactly(library_url, tmp_path, capsys):
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    assert (
        econ(capsys, "library", "save", SEED, "-m", "baseline", "--tag", "q3", "--tag", "a")[0] == 0
    )
    rc, out, _ = econ(capsys, "library", "save", second, "-m", "two racks", "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 2

    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    versions = json.loads(out)["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert [v["parent_version"] for v in versions] == [None, 1]
    assert [v["message"] for v in versions] == ["baseline", "two racks"]
    assert versions[0]["tags"] == ["a", "q3"] and versions[1]["tags"] == []
    assert {v["author"] for v in versions} == {saved_author("ada", library_url)}
    assert versions[0]["schema_version"] == 1
    assert versions[0]["created_utc"] <= versions[1]["created_utc"]
    assert versions[0]["text_sha256"] != versions[1]["text_sha256"]
    assert versions[0]["hardware"] == "gb200-nvl72" and versions[0]["model"] == "deepseek-r1"

    # show prints the text byte for byte, comments included, after a line naming the version;
    # no version means the newest
    rc, out, _ = econ(capsys, "library", "show", f"{SEED_NAME}@1")
    assert rc == 0 and out == show_line(f"{SEED_NAME}@1") + SEED.read_text()
    out = econ(capsys, "library", "show", SEED_NAME)[1]
    assert out == show_line(f"{SEED_NAME}@2") + second.read_text()
    rc, out, _ = econ(capsys, "library", "show", f"{SEED_NAME}@1", "--format", "json")
    assert json.loads(out)["toml"] == SEED.read_text()


def test_missing_name_and_version_exit_3(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    rc, _, err = econ(capsys, "library", "show", f"{SEED_NAME}@7")
    assert rc == 3 and "no version 7" in err and "expected 1 to 1" in err
    rc, _, err = econ(capsys, "library", "history", "deepseek-r1-gb200")
    assert rc == 3 and "did you mean deepseek-r1-gb200-nvl72" in err
    rc, _, err = econ(capsys, "library", "show", f"{SEED_NAME}@x")
    assert rc == 3 and "not a version number" in err
    rc, _, err = econ(capsys, "library", "restore", SEED_NAME)
    assert rc == 3 and "expected NAME@VERSION" in err
    rc, _, err = econ(capsys, "library", "save", SEED, "--tag", "has space")
    assert rc == 3 and "error: tag 'has space': expected a label" in err


def test_save_of_a_library_name_points_to_restore(tmp_path, capsys, monkeypatch):
    """`econ library save library:NAME@V` names no file: it said 'library:NAME@1: file not found'
    while save's help offered library:NAME[@VERSION]; it is refused naming restore, nothing saved.
    A file that has such a name (in an imported folder, say) is still a file."""
    url = f"sqlite:///{tmp_path / 'library.db'}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    assert econ(capsys, "library", "save", SEED)[0] == 0
    for ref, again in ((f"{SEED_NAME}@1", f"{SEED_NAME}@1"), (SEED_NAME, f"{SEED_NAME}@V")):
        rc, out, err = econ(capsys, "library", "save", f"library:{ref}")
        assert rc == 3 and out == "" and "Traceback" not in err
        assert err == (
            f"error: library:{ref}: a version stored in the library, not a file; expected a "
            f"scenario TOML file to save (`econ library restore {again}` saves a stored version "
            "again as the newest)\n"
        )
    with pytest.raises(LibraryError, match="not a file"):
        open_library(url).save_file(f"library:{SEED_NAME}@1")
    assert len(open_library(url, create=False).history(SEED_NAME)) == 1
    monkeypatch.chdir(tmp_path)
    Path(f"library:{SEED_NAME}@1").write_text(SEED.read_text())
    assert econ(capsys, "library", "save", f"library:{SEED_NAME}@1")[0] == 0
    help_text = subprocess.run(
        [sys.executable, "-m", "econ", "library", "save", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    assert "library:NAME" not in help_text


def test_list_filters_by_tag_hardware_and_model(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED, "--tag", "board-q3")
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    econ(capsys, "library", "save", HALL)

    def names(*filters):
        rc, out, _ = econ(capsys, "library", "list", *filters, "--format", "json")
        assert rc == 0
        return [(s["name"], s["version"]) for s in json.loads(out)["scenarios"]]

    hall = load_scenario(HALL)
    assert names() == sorted([(SEED_NAME, 2), (hall.name, 1)])
    assert names("--tag", "board-q3") == [(SEED_NAME, 1)]  # the newest version with the tag
    assert names("--hardware", "gb200-nvl72") == [(SEED_NAME, 2)]
    assert names("--hardware", hall.fleet.hardware) == [(hall.name, 1)]
    assert names("--model", "deepseek-r1") == [(SEED_NAME, 2)]
    assert names("--model", "no-such-model") == []


CATALOG_ROW = "v6.0-6f6e7f09"
"""The MLPerf row the seed's throughput comes from (CoreWeave GB200 NVL72, deepseek-r1 Server,
311,531 tokens/s on 64 GPUs: models/benchmarks/mlperf_inference_llm.csv)."""


def measured_seed(name: str = SEED_NAME) -> str:
    """The seed's text with its throughput read from its MLPerf catalog row, under `name`."""
    text = SEED.read_text().replace(f'name = "{SEED_NAME}"', f'name = "{name}"', 1)
    fixed = "tokens_per_s_per_gpu = 4867.7\n"
    assert fixed in text
    return text.replace(fixed, f'measured = {{ catalog_id = "{CATALOG_ROW}" }}\n', 1)


def test_the_model_key_of_a_catalog_id_is_its_rows_model(library_url, tmp_path, capsys):
    """Found by review: a scenario whose throughput named its MLPerf row by catalog_id got no
    model key unless its name held one (only catalog_query.model and the name were read)."""
    path = tmp_path / "row.toml"
    path.write_text(measured_seed("row-plan"))
    rc, out, err = econ(capsys, "library", "save", path, "--format", "json")
    assert rc == 0 and json.loads(out)["model"] == "deepseek-r1", err
    rc, out, _ = econ(capsys, "library", "list", "--model", "deepseek-r1", "--format", "json")
    assert [s["name"] for s in json.loads(out)["scenarios"]] == ["row-plan"]
    # an id the catalog lacks gives no key (the save is not refused: projecting it is)
    path.write_text(measured_seed("row-plan").replace(CATALOG_ROW, "v6.0-00000000"))
    rc, out, err = econ(capsys, "library", "save", path, "--format", "json")
    assert rc == 0 and json.loads(out)["model"] is None, err


def test_unit_comes_from_the_field_description():
    assert unit_of("fleet.gpu_count") == "GPUs"
    assert unit_of("capex.system_price_usd") == "USD"
    assert unit_of("throughput.steps[0].gain") == "fraction"
    assert unit_of("depreciation.life_years") == "years"  # bracket mid-description
    assert unit_of("vintages[1].fleet.gpu_count") == "GPUs"  # a vintage's plain tables
    assert unit_of("name") is None  # no unit given
    assert unit_of("no.such.path") is None
    stack = load_scenario(
        ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    )
    kinds = [type(t).__name__ for t in stack.financing.tranches]
    convertible = next(
        i for i, t in enumerate(stack.financing.tranches) if hasattr(t, "conversion_price_usd")
    )
    assert (
        unit_of(f"financing.tranches[{convertible}].conversion_price_usd", stack) == "USD/share"
    ), kinds


def test_diff_lists_changed_inputs_with_units_and_every_metric(library_url, tmp_path, capsys):
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    text = second.read_text()
    assert "[utilization]\nshare = 0.7\n" in text
    second.write_text(text.replace("[utilization]\nshare = 0.7\n", "[utilization]\nshare = 0.75\n"))
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", second)
    rc, out, _ = econ(
        capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json"
    )
    assert rc == 0
    diff = json.loads(out)
    assert diff["inputs"] == [
        {"path": "fleet.gpu_count", "old": 72, "new": 144, "unit": "GPUs"},
        {"path": "utilization.share", "old": 0.7, "new": 0.75, "unit": "fraction"},
    ]
    old, new = summary_of(capsys, SEED), summary_of(capsys, second)
    for key in ("npv_usd", "lcot_usd_per_mtok", "capex_usd_total", "tokens_total"):
        metric = diff["metrics"][key]
        assert metric["old"] == old[key] and metric["new"] == new[key]
        assert metric["change"] == pytest.approx(new[key] - old[key], rel=1e-12, abs=1e-9)
    assert diff["metrics"]["gpu_count"]["change"] == 72
    component = "cost_usd_per_mtok_by_component.power"
    assert diff["metrics"][component]["old"] == old["cost_usd_per_mtok_by_component"]["power"]
    # the table form shows the same change
    rc, out, _ = econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2")
    assert rc == 0 and "fleet.gpu_count" in out and "GPUs" in out


def test_diff_shows_a_category_code_old_and_new_without_a_difference(library_url, tmp_path, capsys):
    """Found by review: debt_sizing_constraint 1 -> 3 (debt share -> LTV) printed a change of 2,
    a difference of two codes (econ.engine.CODED_METRICS)."""
    capped = edited(tmp_path, "max_ltv = 0.7", "max_ltv = 0.3")
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", capped)
    refs = f"{SEED_NAME}@1", f"{SEED_NAME}@2"
    rc, out, _ = econ(capsys, "library", "diff", *refs, "--format", "json")
    assert rc == 0
    metrics = json.loads(out)["metrics"]
    assert metrics["debt_sizing_constraint"] == {"old": 1, "new": 3, "change": None}
    assert metrics["debt_usd"]["change"] < 0  # the quantities keep their change
    rc, out, _ = econ(capsys, "library", "diff", *refs)
    [row] = [line.split() for line in out.splitlines() if "debt_sizing" in line]
    assert row == ["debt_sizing_constraint", "1", "(debt_share)", "3", "(ltv)"]
    # an unchanged code is no row, as an unchanged quantity
    rc, out, _ = econ(capsys, "library", "diff", refs[0], refs[0])
    assert rc == 0 and "debt_sizing" not in out


def test_a_version_diffed_with_itself_has_no_changes(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    rc, out, _ = econ(
        capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1", "--format", "json"
    )
    diff = json.loads(out)
    assert diff["inputs"] == []
    assert all(m["change"] in (0, None) for m in diff["metrics"].values())
    # found by review: the table listed the metrics null in both versions as changed
    assert any(m["old"] is m["new"] is None for m in diff["metrics"].values())
    rc, out, _ = econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1")
    assert rc == 0 and out.endswith("metrics\n  no metric changes\n"), out


@pytest.mark.parametrize(
    ("metric", "old", "new", "expected"),
    [
        ("npv_usd", None, None, False),  # undefined in both: no change
        ("npv_usd", None, 1.0, True),  # undefined on one side only
        ("npv_usd", 1.0, None, True),
        ("npv_usd", 1.0, 1.0, False),
        ("npv_usd", 1.0, 2.0, True),
        ("debt_sizing_constraint", None, None, False),
        ("debt_sizing_constraint", 1, 3, True),
    ],
)
def test_a_metric_differs_unless_equal_or_null_on_both_sides(metric, old, new, expected):
    [change] = metric_changes({metric: old}, {metric: new}).values()
    assert differs(metric, change) is expected


# --- library:NAME[@VERSION] everywhere ----------------------------------------------------------


def test_library_names_work_where_files_do(library_url, tmp_path, capsys):
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", second)
    assert summary_of(capsys, f"library:{SEED_NAME}@1") == summary_of(capsys, SEED)
    assert summary_of(capsys, f"library:{SEED_NAME}") == summary_of(capsys, second)
    rc, out, _ = econ(capsys, "validate", f"library:{SEED_NAME}@2")
    assert rc == 0 and "ok" in out
    rc, out, _ = econ(
        capsys,
        "project",
        f"library:{SEED_NAME}@1",
        "--set",
        "fleet.gpu_count=144",
        "--format",
        "json",
    )
    assert json.loads(out)["scenarios"][0]["summary"] == summary_of(capsys, second)
    # --library before the command picks the library, over ECON_LIBRARY
    rc, _, err = econ(
        capsys, "--library", "sqlite:////nonexistent-folder/x.db", "project", f"library:{SEED_NAME}"
    )
    assert rc == 3 and "nonexistent-folder" in err
    # and after it, as `econ library save FILE --library URL` takes it (a usage error before)
    rc, _, err = econ(
        capsys, "project", f"library:{SEED_NAME}", "--library", "sqlite:////nonexistent-folder/x.db"
    )
    assert rc == 3 and "nonexistent-folder" in err
    with pytest.raises(SystemExit) as usage:
        main(["project", f"library:{SEED_NAME}", "--library"])
    assert usage.value.code == 2
    assert "argument --library: expected one argument (URL)" in capsys.readouterr().err


def test_loading_a_library_ref_closes_its_connections(library_url, capsys):
    """`econ project library:NAME` leaves no database connection open behind it (before, each
    ref loaded left one for the garbage collector: psycopg's ResourceWarning)."""
    import gc

    econ(capsys, "library", "save", SEED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        assert econ(capsys, "project", f"library:{SEED_NAME}", "--format", "json")[0] == 0
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_library_scenario_cannot_name_a_file(library_url, tmp_path, capsys):
    curve = tmp_path / "c.toml"
    curve.write_text('name = "curvy"\n[throughput.measured]\ncurve = "runs/vllm.json"\n')
    rc, _, err = econ(capsys, "library", "save", curve)
    assert rc == 3 and "throughput.measured.curve" in err and "no folder on disk" in err
    econ(capsys, "library", "save", SEED)
    rc, _, err = econ(
        capsys, "project", f"library:{SEED_NAME}", "--set", 'throughput.measured={curve="x.csv"}'
    )
    assert rc == 3 and "throughput.measured.curve" in err


def test_a_library_scenario_refuses_an_override_of_a_field_set_elsewhere(library_url, capsys):
    """As a file does (test_batch_rows): the capital stack's tranches carry their own rates, so
    financing.debt_rate_annual changed nothing; from the library it was taken in silence."""
    stack = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    assert econ(capsys, "library", "save", stack)[0] == 0
    name = "deepseek-r1-gb200-nvl72-capital-stack"
    with pytest.raises(
        ScenarioError,
        match="not used: this scenario takes financing.debt_rate_annual from .*tranches",
    ):
        load_scenario(f"library:{name}", {"financing.debt_rate_annual": 0.05})
    rc, _, err = econ(
        capsys, "project", f"library:{name}", "--set", "financing.debt_rate_annual=0.05"
    )
    assert rc == 3 and "financing.debt_rate_annual" in err and "Traceback" not in err
    assert load_scenario(f"library:{name}", {"utilization.share": 0.5}).utilization.share == 0.5


# --- restore, delete, export, import ------------------------------------------------------------


def test_restore_and_soft_delete_lose_nothing(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    rc, out, _ = econ(capsys, "library", "restore", f"{SEED_NAME}@1", "--format", "json")
    restored = json.loads(out)
    assert restored["version"] == 3 and restored["parent_version"] == 2
    assert restored["message"] == "restored from version 1"
    out = econ(capsys, "library", "show", f"{SEED_NAME}@3")[1]
    assert out == show_line(f"{SEED_NAME}@3") + SEED.read_text()

    rc, said, _ = econ(capsys, "library", "delete", SEED_NAME)
    assert rc == 0 and said.startswith(f"deleted {SEED_NAME} (3 versions kept; ")
    assert json.loads(econ(capsys, "library", "list", "--format", "json")[1])["scenarios"] == []
    rc, _, err = econ(capsys, "project", f"library:{SEED_NAME}")
    assert rc == 3 and "deleted" in err and "restore" in err
    # every version is still there and readable
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1, 2, 3]
    assert econ(capsys, "library", "list", "--deleted", "--format", "json")[0] == 0
    assert econ(capsys, "library", "delete", SEED_NAME)[0] == 3  # already deleted
    # restoring brings it back as a new version
    assert econ(capsys, "library", "restore", f"{SEED_NAME}@2")[0] == 0
    assert summary_of(capsys, f"library:{SEED_NAME}")["gpu_count"] == 144


def test_a_save_that_brings_a_deleted_scenario_back_says_so(library_url, capsys):
    """Found by review: a save to a deleted name restored it, printing only 'saved NAME version
    2', so the saver did not learn that a colleague had deleted it."""
    back = f"; {SEED_NAME} had been deleted, and is restored by this save"
    econ(capsys, "library", "save", SEED)
    assert econ(capsys, "library", "delete", SEED_NAME)[0] == 0
    rc, out, _ = econ(capsys, "library", "save", SEED)
    assert rc == 0 and out.startswith(f"saved {SEED_NAME} version 2 (text sha256 ")
    assert out.endswith(f"){back}\n"), out
    rc, out, _ = econ(capsys, "library", "save", SEED)  # no longer deleted: an ordinary save
    assert rc == 0 and "deleted" not in out
    # the Python API's result says it, and so does JSON; restore and migrate bring it back too
    with open_library() as library:
        assert library.save_text(SEED.read_text()).undeleted is False
        library.delete(SEED_NAME)
        saved = library.save_text(SEED.read_text())
        assert saved.undeleted is True and saved.to_json()["undeleted"] is True
        library.delete(SEED_NAME)
    rc, out, _ = econ(capsys, "library", "restore", f"{SEED_NAME}@1")
    assert rc == 0 and out.startswith(f"restored as {SEED_NAME} version 6") and back in out
    rc, out, _ = econ(capsys, "library", "save", SEED, "--format", "json")
    assert rc == 0 and json.loads(out)["undeleted"] is False


def test_an_import_that_brings_a_deleted_scenario_back_says_so(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "delete", SEED_NAME)
    (tmp_path / "team").mkdir()
    changed = edited(tmp_path / "team", "gpu_count = 72", "gpu_count = 144", name="seed.toml")
    rc, out, _ = econ(capsys, "library", "import", changed.parent, "--update", "--format", "json")
    report = json.loads(out)
    assert rc == 0 and report["updated"] == report["restored"] == [str(changed)]
    rc, out, _ = econ(capsys, "library", "import", changed.parent)
    assert rc == 0 and out == f"unchanged: {changed}\n"  # (no longer deleted)


def test_a_file_without_a_name_is_refused_at_save_and_import(library_url, tmp_path, capsys):
    """Found by review: a file without `name` was saved as 'scenario' (the model's default), and
    an unrelated file without one then became its version 2."""
    folder = tmp_path / "team"
    folder.mkdir()
    nameless = folder / "plan.toml"
    lines = SEED.read_text().splitlines(keepends=True)
    nameless.write_text("".join(line for line in lines if not line.startswith("name =")))
    assert econ(capsys, "validate", nameless)[0] == 0  # a valid file, named by default
    for argv in (["save", nameless], ["save", nameless, "--new"], ["import", folder]):
        rc, _, err = econ(capsys, "library", *argv)
        assert rc == 3 and f"{nameless}: name: not given" in err, err
        assert 'expected name = "..." in the file' in err and "Traceback" not in err
        assert _library_tables(library_url) in (None, [])  # nothing saved, nothing created
    # a version stored without a name before this check is restored under the name it has
    assert econ(capsys, "library", "save", _named(tmp_path, "scenario"))[0] == 0
    engine = sa.create_engine(library_url)
    with engine.begin() as conn:
        text = nameless.read_text()  # (stored with its hash, as the econ of then did)
        sha256 = hashlib.sha256(text.encode()).hexdigest()
        conn.execute(sa.update(store.versions).values(toml_text=text, text_sha256=sha256))
    engine.dispose()
    rc, out, _ = econ(capsys, "library", "restore", "scenario@1", "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 2


def test_export_file_names_stay_as_names_come_and_go(library_url, tmp_path, capsys):
    """Names came from the sorted list: "a/b" and "a:b" were a-b.toml and a-b-2.toml, and saving
    "a b" renumbered them, so a second export refused its own files as edited; a name in another
    script was cut to ASCII ('Ünïcødé-план' -> n-c-d.toml)."""
    for name in ("a/b", "a:b"):
        econ(capsys, "library", "save", edited(tmp_path, SEED_NAME, name, name="s.toml"))
    folder = tmp_path / "team"
    assert econ(capsys, "library", "export", folder)[0] == 0
    first = {p.name: p.read_text() for p in folder.iterdir()}
    for name in ("a b", "Ünïcødé-план"):
        econ(capsys, "library", "save", edited(tmp_path, SEED_NAME, name, name="s.toml"))
    rc, out, err = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0, err
    assert sorted(Path(p).name for p in json.loads(out)["unchanged"]) == sorted(first)
    files = {p.name: p.read_text() for p in folder.iterdir()}
    assert {k: files[k] for k in first} == first  # each file still holds its own scenario
    for name, text in files.items():
        scenario_name = tomllib.loads(text)["name"]
        if scenario_name == "Ünïcødé-план":
            assert name == "Ünïcødé-план.toml"
        else:
            digest = hashlib.sha256(scenario_name.encode()).hexdigest()[:8]
            assert name == f"a-b-{digest}.toml"


def test_export_then_import_into_another_library(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", HALL)
    folder = tmp_path / "team"
    folder.mkdir()
    rc, out, _ = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and len(json.loads(out)["written"]) == 2
    # the version's text exactly, after show's first line naming it
    assert (folder / f"{SEED_NAME}.toml").read_text() == show_line(f"{SEED_NAME}@1") + (
        SEED.read_text()
    )
    # exporting again changes nothing; a file edited by hand is not overwritten without --force
    assert (
        json.loads(econ(capsys, "library", "export", folder, "--format", "json")[1])["written"]
        == []
    )
    edited_file = folder / f"{SEED_NAME}.toml"
    edited_file.write_text(SEED.read_text().replace("gpu_count = 72", "gpu_count = 144"))
    rc, _, err = econ(capsys, "library", "export", folder)
    assert rc == 3 and "refusing to overwrite" in err
    assert "gpu_count = 144" in edited_file.read_text()

    # importing: the changed file is refused (nothing imported) until --update
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and edited_file.name in err and "--update" in err
    assert (
        len(
            json.loads(econ(capsys, "library", "history", SEED_NAME, "--format", "json")[1])[
                "versions"
            ]
        )
        == 1
    )
    rc, out, _ = econ(capsys, "library", "import", folder, "--update", "--format", "json")
    report = json.loads(out)
    assert rc == 0 and report["updated"] == [str(edited_file)] and len(report["unchanged"]) == 1
    assert summary_of(capsys, f"library:{SEED_NAME}@2")["gpu_count"] == 144
    # a file equal to an older version is not saved again
    edited_file.write_bytes(SEED.read_bytes())
    report = json.loads(econ(capsys, "library", "import", folder, "--format", "json")[1])
    assert report["added"] == [] and report["updated"] == [] and len(report["unchanged"]) == 2

    # into a fresh SQLite library: the same texts
    other = f"sqlite:///{tmp_path / 'other.db'}"
    rc, out, _ = econ(capsys, "library", "import", folder, "--library", other, "--format", "json")
    assert rc == 0 and len(json.loads(out)["added"]) == 2
    out = econ(capsys, "library", "show", SEED_NAME, "--library", other)[1]
    assert out == show_line(f"{SEED_NAME}@1") + SEED.read_text()


def test_import_of_an_invalid_file_imports_nothing(library_url, tmp_path, capsys):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "a.toml").write_bytes(SEED.read_bytes())
    (folder / "b.toml").write_text('name = "broken"\n[fleet]\ngpu_count = -1\n')
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "b.toml" in err and "fleet.gpu_count" in err
    assert json.loads(econ(capsys, "library", "list", "--format", "json")[1])["scenarios"] == []


def test_import_refuses_a_link_out_of_the_folder_unread(library_url, tmp_path, capsys):
    secret = tmp_path / "outside" / "conf.toml"
    secret.parent.mkdir()
    secret.write_text('password = "hunter2"\n[db]\nuser = "root"\n')
    folder = tmp_path / "team"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.toml").write_bytes(SEED.read_bytes())
    (folder / "conf.toml").symlink_to(secret)
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and f"{folder / 'conf.toml'}: a symbolic link to a file outside" in err
    assert "hunter2" not in err and "password" not in err and str(secret) not in err
    assert "nothing was imported" in err and "Traceback" not in err
    assert econ(capsys, "library", "list", "--format", "json")[1] == '{\n  "scenarios": []\n}\n'
    # the same for a link to a device, and whether the target exists or not
    for target in (Path("/dev/zero"), tmp_path / "outside" / "absent.toml"):
        (folder / "conf.toml").unlink()
        (folder / "conf.toml").symlink_to(target)
        rc, _, err = econ(capsys, "library", "import", folder)
        assert rc == 3 and "a symbolic link to a file outside" in err
    # a link that stays inside the folder is the folder's own file
    (folder / "conf.toml").unlink()
    (folder / "sub" / "hall.toml").write_bytes(HALL.read_bytes())
    (folder / "hall.toml").symlink_to(folder / "sub" / "hall.toml")
    rc, out, err = econ(capsys, "library", "import", folder, "--format", "json")
    assert rc == 0, err
    assert len(json.loads(out)["added"]) == 2


def test_the_library_reads_files_as_validate_does(library_url, tmp_path, capsys):
    # a byte-order mark: `validate` accepts it, and so do save and import (it is not stored)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + SEED.read_bytes())
    assert econ(capsys, "validate", bom)[0] == 0
    rc, _, err = econ(capsys, "library", "save", bom)
    assert rc == 0, err
    out = econ(capsys, "library", "show", SEED_NAME)[1]
    assert out == show_line(f"{SEED_NAME}@1") + SEED.read_text()
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "bom.toml").write_bytes(bom.read_bytes())
    rc, out, _ = econ(capsys, "library", "import", folder, "--format", "json")
    assert rc == 0 and json.loads(out)["unchanged"] == [str(folder / "bom.toml")]
    # a file cut short: `validate` refuses it, and so do save, import and save_text
    short = tmp_path / "min.toml"
    short.write_text('name = "x"\n')
    rc_validate, _, validate_err = econ(capsys, "validate", short)
    rc, _, err = econ(capsys, "library", "save", short)
    assert rc_validate == rc == 3 and "no [fleet] or [throughput] or [capex] or [market]" in err
    assert err == validate_err
    (folder / "min.toml").write_text('name = "x"\n')
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "min.toml: no [fleet]" in err
    with open_library() as library:
        with pytest.raises(ScenarioError, match="no \\[throughput\\] or \\[capex\\] or"):
            library.save_text('name = "x"\n[fleet]\n')
        with pytest.raises(LibraryError, match="no scenario 'x'"):
            library.history("x")


def test_a_version_number_beyond_any_stored_exits_3(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    huge = "99999999999999999999999"  # beyond SQLite's INTEGER: an OverflowError traceback before
    for argv in (
        ["library", "show", f"{SEED_NAME}@{huge}"],
        ["library", "restore", f"{SEED_NAME}@{huge}"],
        ["library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@{huge}"],
        ["project", f"library:{SEED_NAME}@{huge}"],
        ["library", "show", f"{SEED_NAME}@{2**31}"],  # beyond PostgreSQL's INTEGER
    ):
        rc, _, err = econ(capsys, *argv)
        assert rc == 3 and "Traceback" not in err, err
        assert "has no version" in err and "expected 1 to 1" in err
    for version in ("\u00b2", "1" * 5000):  # a superscript digit; more digits than int() reads
        rc, _, err = econ(capsys, "library", "show", f"{SEED_NAME}@{version}")
        assert rc == 3 and "not a version number" in err and len(err) < 500


def test_authors_are_refused_and_messages_escaped_with_control_characters(library_url, capsys):
    osc = "evil\x1b]0;pwned\x07"
    rc, _, err = econ(capsys, "library", "save", SEED, "--author", osc)
    assert rc == 3 and "author 'evil\\x1b]0;pwned\\x07': a control character" in err
    assert "\x1b" not in err
    message = "ok\x1b[31m red\x9b2J \u202e\r\nsecond line"
    assert econ(capsys, "library", "save", SEED, "-m", message)[0] == 0
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME)
    assert rc == 0 and "ok\\x1b[31m red\\x9b2J \\u202e ..." in out
    assert not any(c in out for c in "\x1b\x9b\u202e\r")
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert not any(c in out for c in "\x1b\x9b\u202e\r")
    assert json.loads(out)["versions"][0]["message"] == message  # the same JSON value
    # bytes that are not UTF-8 on the command line arrive as lone surrogates
    rc, _, err = econ(capsys, "library", "save", SEED, "-m", "caf\udce9")
    assert rc == 3 and "is a byte that is not UTF-8" in err and "Traceback" not in err
    rc, _, err = econ(capsys, "library", "save", SEED, "--author", "caf\udce9")
    assert rc == 3 and "is a byte that is not UTF-8" in err


def test_a_long_author_is_counted_in_its_own_characters(library_url, capsys):
    """Found by review: a 201-character author was "(203 characters)", counting repr's quotes."""
    rc, _, err = econ(capsys, "library", "save", SEED, "--author", "a" * 201)
    assert rc == 3 and "... (201 characters): expected a name of 1 to 200 characters" in err
    rc, _, err = econ(capsys, "library", "save", SEED, "-m", "\x00" + "m" * 300)
    assert rc == 3 and "... (301 characters): character 1 is U+0000 NULL" in err


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ({"message": "a\x00b"}, "message 'a\\x00b': character 2 is U+0000 NULL, which a library"),
        ({"author": "a\x00b"}, "author 'a\\x00b': character 2 is U+0000 NULL"),
        ({"message": None}, "message None (NoneType): expected text"),
        ({"base": "2"}, "base = '2' (str): expected a version number, an int 1, 2, ..."),
        ({"base": 2.0}, "base = 2.0 (float): expected a version number"),
        ({"base": True}, "base = True (bool): expected a version number"),
        ({"new": "yes"}, "new = 'yes' (str): expected True or False"),
        ({"tags": ["ok", 3]}, "tag 3 (int): expected a label as text"),
        ({"tags": 3}, "tags = 3: expected a list of labels (or one label as a str)"),
    ],
)
def test_the_python_api_refuses_wrong_arguments_alike_on_both_backends(
    library_url, arguments, expected
):
    """Found by review: base="2" raised a TypeError, and a message holding NUL was saved on
    SQLite but refused by PostgreSQL (a database error)."""
    with open_library() as library:
        with pytest.raises(LibraryError) as caught:
            library.save_text(SEED.read_text(), **arguments)
        assert expected in str(caught.value)
        assert library.list() == []  # nothing saved
        with pytest.raises(LibraryError, match="U\\+0000 NULL"):
            library.save_text(SEED.read_text().replace("#", "#\x00", 1))
    with open_library() as library:
        library.save_file(SEED)
        with pytest.raises(LibraryError, match="message 'x\\\\x00': character 2 is U\\+0000"):
            library.restore(Ref(SEED_NAME, 1), message="x\x00")
        assert len(library.history(SEED_NAME)) == 1


def test_a_str_of_tags_is_one_tag(library_url):
    """Found by review: tags="board" was stored as the tags b, o, a, r, d."""
    with open_library() as library:
        assert library.save_text(SEED.read_text(), tags="board").tags == ["board"]
        assert library.history(SEED_NAME)[0].tags == ["board"]
        assert library.save_file(SEED, tags=("q3", "board", "q3")).tags == ["board", "q3"]


# --- results cache ------------------------------------------------------------------------------


def test_cached_summary_is_reproducible_from_the_stored_text(library_url, monkeypatch):
    with open_library() as library:
        library.save_file(SEED)
        first = library.summary(Ref(SEED_NAME, 1))
        assert first == project_summary(load_scenario(SEED))
        assert library.summary(Ref(SEED_NAME, 1)) == first
        engine = library._engine
        with engine.connect() as conn:
            assert conn.scalar(sa.text("SELECT count(*) FROM results")) == 1
        # another econ version is another cache row, recomputed from the text
        monkeypatch.setattr("econ.library.store.__version__", "9.9.9")
        assert library.summary(Ref(SEED_NAME, 1)) == first
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT econ_version FROM results")).scalars().all()
        assert sorted(v.split("+")[0] for v in rows) == sorted([econ_version, "9.9.9"])


def _results(url: str, sql: str, **params) -> list:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(sql), params)
            return result.all() if result.returns_rows else []
    finally:
        engine.dispose()


def test_the_cache_is_keyed_on_the_engine_source_not_the_version_alone(
    library_url, tmp_path, capsys, monkeypatch
):
    """Teammates on the same econ version but other code must not read each other's results: a
    row cached by other source is never read, so diff agrees with `econ project`."""
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    assert econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2")[0] == 0
    (key,) = _results(library_url, "SELECT DISTINCT econ_version FROM results")[0]
    assert key.startswith(f"{econ_version}+") and len(key) <= 64
    # another engine (same version, other source) caches a different npv for version 2
    monkeypatch.setattr("econ.library.store._package_sha256", lambda: "0" * 64)
    other = store.engine_version()
    assert other != key and other.startswith(f"{econ_version}+")
    _results(
        library_url,
        "UPDATE results SET summary_json = :text, econ_version = :other",
        text=json.dumps({**project_summary(load_scenario(SEED)), "npv_usd": 123.0}),
        other=other,
    )
    monkeypatch.undo()
    monkeypatch.setenv("ECON_LIBRARY", library_url)
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    rc, out, _ = econ(
        capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json"
    )
    assert rc == 0
    npv = json.loads(out)["metrics"]["npv_usd"]
    assert npv["old"] == summary_of(capsys, f"library:{SEED_NAME}@1")["npv_usd"] != 123.0
    assert npv["new"] == summary_of(capsys, f"library:{SEED_NAME}@2")["npv_usd"]


def test_sources_hash_changes_with_any_source_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "engine.py").write_text("RATE = 1\n")
    (tmp_path / "top.py").write_text("")
    before = store.sources_sha256(tmp_path)
    assert store.sources_sha256(tmp_path) == before
    (tmp_path / "pkg" / "engine.py").write_text("RATE = 2\n")
    assert store.sources_sha256(tmp_path) != before


def test_a_summary_is_computed_from_the_catalogs_it_is_cached_under(
    library_url, tmp_path, monkeypatch
):
    """Found by review: the catalog data was cached in-process by path only, so a long-running
    process (the app) kept projecting with the MLPerf rows it had read first after models/
    changed, and cached those summaries under the new catalog version, served to everyone."""
    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    monkeypatch.setenv("ECON_MODELS_DIR", str(models))
    rows = models / "benchmarks" / "mlperf_inference_llm.csv"
    seed_row = ",311531.0,4867.6719,"  # the row's system result and per-GPU figure
    assert rows.read_text().count(seed_row) == 1
    with open_library() as library:
        library.save_text(measured_seed())
        before = library.summary(Ref(SEED_NAME, 1))
        # the row's result halved, as a corrected catalog would: same size, a new mtime
        rows.write_text(rows.read_text().replace(seed_row, ",155765.5,2433.8359,"))
        after = library.summary(Ref(SEED_NAME, 1))
        again = library.summary(Ref(SEED_NAME, 1))
    # what a process started after the change computes (nothing cached, nothing read before)
    env = {**os.environ, "ECON_MODELS_DIR": str(models), "PYTHONPATH": str(ROOT)}
    fresh = subprocess.run(
        [sys.executable, "-m", "econ", "project", f"library:{SEED_NAME}@1", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    expected = json.loads(fresh.stdout)["scenarios"][0]["summary"]
    assert after["npv_usd"] == expected["npv_usd"] != before["npv_usd"]
    assert after == again == expected
    assert _results(library_url, "SELECT count(*) FROM results") == [(2,)]  # one per catalog


def test_no_result_is_cached_when_the_code_running_may_not_be_the_files(library_url, monkeypatch):
    """Found by review: the engine version hashes the package's files when first asked, so a
    process started before an upgrade labelled its old code's results with the new code's hash.
    Here every source file is newer than the process's import of econ (as after `git pull` under
    a running app): a summary is projected, and the cache neither read nor written."""
    import econ as package

    columns = ["scenario_sha256", "econ_version", "catalog_sha256", "summary_json"]
    with open_library() as library:
        library.save_file(SEED)
        expected = library.summary(Ref(SEED_NAME, 1))
        (row,) = _results(library_url, f"SELECT {', '.join(columns)} FROM results")
        key = dict(zip(columns[:3], row[:3], strict=True))
        # a row under the files' engine version, holding a summary they did not compute
        faked = json.dumps({**json.loads(row[3]), "npv_usd": 123.0}, sort_keys=True)
        _results(
            library_url,
            "UPDATE results SET summary_json = :text, summary_sha256 = :check",
            text=faked,
            check=store.summary_sha256(key, faked),
        )
        monkeypatch.setattr(package, "_IMPORTED_NS", 0, raising=False)
        assert library.summary(Ref(SEED_NAME, 1)) == expected  # not the row's
        _results(library_url, "DELETE FROM results")
        assert library.summary(Ref(SEED_NAME, 1)) == expected
        assert store.engine_version() is None
    assert _results(library_url, "SELECT count(*) FROM results") == [(0,)]


def test_the_source_hash_is_withheld_for_a_file_modified_after_the_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    engine = tmp_path / "pkg" / "engine.py"
    engine.write_text("RATE = 1\n")
    (tmp_path / "top.py").write_text("")
    for path in (engine, tmp_path / "top.py"):
        os.utime(path, ns=(10**18, 10**18))  # 2001-09-09
    imported = 10**18 + 1
    assert store.package_sha256(tmp_path, imported) == store.sources_sha256(tmp_path)
    os.utime(engine, ns=(imported, imported))  # written when (or after) the process read it
    assert store.package_sha256(tmp_path, imported) is None
    assert store.package_sha256(tmp_path, imported + 1) == store.sources_sha256(tmp_path)


def test_two_threads_hashing_sources_at_once_each_get_their_hash(tmp_path, monkeypatch):
    """A review: a thread emptying the cache of source hashes between another's insert and its
    read made that read a KeyError. Here thread B hashes its folder right as A stores its hash."""
    import threading

    folders = {name: tmp_path / name for name in ("a", "b")}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / "engine.py").write_text(f"NAME = {name!r}\n")
        os.utime(folder / "engine.py", ns=(10**18, 10**18))  # 2001-09-09
    after = 10**18 + 1  # (read before the import)
    done: dict[str, str] = {}

    def hash_b():
        done["b"] = store.package_sha256(folders["b"], after)

    class Interleaved(dict):
        def __setitem__(self, key, value):
            super().__setitem__(key, value)
            if key[0] == str(folders["a"]):  # B runs now, as far as it can
                other = threading.Thread(target=hash_b)
                other.start()
                other.join(0.5)  # (with the lock, B waits for A: 0.5 s, then A goes on)
                self.thread = other

    cache = Interleaved()
    monkeypatch.setattr(store, "_SOURCE_HASHES", cache)
    assert store.package_sha256(folders["a"], after) == store.sources_sha256(folders["a"])
    cache.thread.join(10)
    assert done["b"] == store.sources_sha256(folders["b"]) != store.sources_sha256(folders["a"])


@pytest.mark.parametrize(
    "damage",
    [
        "{",  # cut short
        "[1, 2]",  # not an object
        '{"npv_usd": 1.0}',  # not today's summary keys
        "[" * 5000 + "]" * 5000,  # deeper than json reads
    ],
)
def test_a_damaged_cache_row_is_recomputed_and_replaced(library_url, capsys, damage):
    econ(capsys, "library", "save", SEED)
    expected = summary_of(capsys, f"library:{SEED_NAME}@1")
    assert econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1")[0] == 0
    _results(library_url, "UPDATE results SET summary_json = :text", text=damage)
    rc, out, err = econ(
        capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1", "--format", "json"
    )
    assert rc == 0 and "Traceback" not in err, err
    assert {k: v["new"] for k, v in json.loads(out)["metrics"].items()}["npv_usd"] == (
        expected["npv_usd"]
    )
    with open_library() as library:
        assert library.summary(Ref(SEED_NAME, 1)) == expected
    (text,) = _results(library_url, "SELECT summary_json FROM results")[0]
    assert json.loads(text) == expected  # the row was replaced


# --- concurrency: separate processes saving the same scenario at once -------------------------


def _save_in_process(url, path, barrier, results):
    barrier.wait()
    with open_library(url) as library:
        results.put(library.save_file(path, message=str(path)).version)


@pytest.mark.parametrize("processes", [6])
def test_concurrent_saves_from_processes_all_get_a_version(library_url, tmp_path, processes):
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(processes), context.Queue()
    files = [
        edited(tmp_path, "gpu_count = 72", f"gpu_count = {72 * (i + 1)}", name=f"s{i}.toml")
        for i in range(processes)
    ]
    workers = [
        context.Process(target=_save_in_process, args=(library_url, f, barrier, results))
        for f in files
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0] * processes
    numbers = sorted(results.get(timeout=5) for _ in range(processes))
    assert numbers == list(range(1, processes + 1))  # no gaps, no duplicates
    with open_library(library_url) as library:
        history = library.history(SEED_NAME)
        texts = {library.get(Ref(SEED_NAME, v.version)).text for v in history}
    assert [v.version for v in history] == list(range(1, processes + 1))
    assert texts == {f.read_text() for f in files}  # no save lost
    assert [v.parent_version for v in history] == [None, *range(1, processes)]


def test_concurrent_cli_saves(library_url, tmp_path):
    """The same through `python -m econ library save` in parallel subprocesses."""
    files = [
        edited(tmp_path, "gpu_count = 72", f"gpu_count = {72 * (i + 1)}", name=f"c{i}.toml")
        for i in range(3)
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "econ", "library", "save", str(f), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for f in files
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1] for o in outputs]
    assert sorted(json.loads(o[0])["version"] for o in outputs) == [1, 2, 3]


# --- bad input: clear messages, exit 3, nothing lost --------------------------------------------


@pytest.mark.parametrize(
    "url, expected",
    [
        ("mysql://u@h/db", "'mysql' databases are not supported"),
        ("not a url", "not a database URL"),
        ("postgresql+psycopg2://u@h/db", "driver 'postgresql+psycopg2' is not supported"),
        ("sqlite:///{tmp}/no/such/folder/lib.db", "does not exist"),
        ("sqlite:///{tmp}", "is a folder"),
    ],
)
def test_wrong_url_exits_3(url, expected, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ECON_LIBRARY", url.format(tmp=tmp_path))
    rc, _, err = econ(capsys, "library", "list")
    assert rc == 3 and expected in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["library", "list", "--library", ""],
        ["--library", "", "library", "list"],
        ["--library", "", "project", f"library:{SEED_NAME}"],
        ["--library", "", "project", SEED],  # refused even where no library is read
        ["library", "save", SEED, "--library", " "],
    ],
)
def test_an_empty_library_url_exits_3(argv, tmp_path, capsys, monkeypatch):
    """Found by review: --library "" fell back to ECON_LIBRARY (or the default) without a word."""
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'env.db'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    rc, out, err = econ(capsys, *argv)
    assert rc == 3 and out == "" and "Traceback" not in err
    assert "--library = '" in err and "an empty URL; expected a library URL, sqlite:///" in err
    assert list(tmp_path.iterdir()) == []  # neither library was created
    with pytest.raises(LibraryError, match="an empty URL"):
        open_library("")


def test_password_is_never_shown(capsys, tmp_path):
    rc, _, err = econ(
        capsys, "library", "list", "--library", f"postgresql://ada:s3cret@/db?host={tmp_path}"
    )
    assert rc == 3 and "s3cret" not in err and "cannot reach" in err


def test_unreachable_server_and_missing_database_exit_3(postgres_socket, tmp_path, capsys):
    rc, _, err = econ(
        capsys, "library", "list", "--library", f"postgresql+psycopg://postgres@/db?host={tmp_path}"
    )
    assert rc == 3 and "cannot reach the database server: it does not answer (no server " in err
    rc, _, err = econ(
        capsys,
        "library",
        "list",
        "--library",
        f"postgresql+psycopg://postgres@/nodb?host={postgres_socket}",
    )
    assert rc == 3 and "nodb" in err
    assert "the database server holds no database of the name the library URL gives" in err


PASSWORD_ROLE, PASSWORD = "econ_pw", "right-Pw-1"
"""A role the test server admits by its password (scram-sha-256), where others log in on trust."""


def password_url(postgres_socket: Path, password: str, database: str = "postgres") -> str:
    """The URL of PASSWORD_ROLE with `password`: its line is put first in the server's
    pg_hba.conf (once), and the server reloaded until it asks that role for its password."""
    import time

    import psycopg

    with psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_roles WHERE rolname = %s", (PASSWORD_ROLE,)
        ).fetchone():
            conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        line = f"local all {PASSWORD_ROLE} scram-sha-256\n"
        if line not in hba.read_text():
            hba.write_text(line + hba.read_text())
            conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 30
    while True:  # (the server reloads its configuration in the background)
        try:
            psycopg.connect(
                host=str(postgres_socket),
                user=PASSWORD_ROLE,
                dbname="postgres",
                password="not-" + PASSWORD,
            ).close()
        except psycopg.OperationalError:
            break
        assert time.monotonic() < deadline, "the server never asked for the password"
        time.sleep(0.05)
    return f"postgresql+psycopg://{PASSWORD_ROLE}:{password}@/{database}?host={postgres_socket}"


def test_a_refused_login_is_told_from_a_server_that_does_not_answer(
    postgres_socket, tmp_path, capsys
):
    """Found by review: a wrong password, a server that does not answer and a missing database
    all said "cannot reach or use the database server" with the driver's text, which names the
    server's socket file (so the app could only say "the server's log says why")."""
    assert (
        econ(capsys, "library", "list", "--library", password_url(postgres_socket, PASSWORD))[0]
        == 0
    )
    for url, said in (
        (password_url(postgres_socket, "wrong-Pw"), "(password authentication failed)"),
        (f"postgresql+psycopg://no_such_role@/postgres?host={postgres_socket}", "(no such role)"),
    ):
        rc, _, err = econ(capsys, "library", "list", "--library", url)
        assert rc == 3 and "Traceback" not in err
        assert f"opening failed: the database server refused the login {said}; nothing " in err
        assert "Expected the user and password of a role the server admits" in err
        assert "wrong-Pw" not in err and ".s.PGSQL" not in err
    rc, _, err = econ(
        capsys, "library", "list", "--library", "postgresql+psycopg://u:p@127.0.0.1:1/econ"
    )
    assert rc == 3 and "cannot reach the database server: it does not answer (connection " in err
    assert "refused the login" not in err


def test_corrupt_file_is_left_untouched(tmp_path, capsys):
    path = tmp_path / "library.db"
    garbage = b"this is not a database\n" * 100
    path.write_bytes(garbage)
    for argv in (["list"], ["save", SEED]):
        rc, _, err = econ(capsys, "library", *argv, "--library", f"sqlite:///{path}")
        assert rc == 3 and "not a readable SQLite library" in err and "left untouched" in err
    assert path.read_bytes() == garbage


def test_a_database_that_is_not_a_library_is_not_changed(tmp_path, capsys):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    rc, _, err = econ(capsys, "library", "list", "--library", f"sqlite:///{path}")
    assert rc == 3 and "not an econ library" in err and "invoices" in err
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert names == ["invoices"]


def test_locked_file_waits_then_exits_3(tmp_path, capsys):
    path = tmp_path / "library.db"
    url = f"sqlite:///{path}?timeout=0.3"
    assert econ(capsys, "library", "save", SEED, "--library", url)[0] == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(120)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc, _, err = econ(capsys, "library", "save", SEED, "--library", url)
        assert rc == 3 and "locked by another process" in err
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--library", url, "--format", "json")
    assert rc == 0 and len(json.loads(out)["versions"]) == 1


def test_sqlite_failures_name_the_file_and_leave_no_new_file(tmp_path, capsys):
    rc, _, err = econ(capsys, "library", "save", SEED, "--library", "sqlite:////dev/full")
    assert rc == 3 and "/dev/full is not a regular file" in err
    # a full disk, made by SQLite's page limit: the tables fit in 12 pages, a version does not
    path = tmp_path / "new.db"
    url = f"sqlite:///{path}"

    def full_disk(dbapi_connection, _record):
        dbapi_connection.execute("PRAGMA max_page_count = 12")

    sa.event.listen(sa.engine.Engine, "connect", full_disk)
    try:
        rc, _, err = econ(capsys, "library", "save", SEED, "--library", url)
        assert rc == 3 and "the disk holding the library file is full" in err
        assert "PostgreSQL" not in err and "server" not in err
        assert not path.exists() and list(tmp_path.iterdir()) == []  # nor a journal
        assert f"econ removed the library file it had just created ({path})" in err
        # a library that existed before is never removed (`list` creates no file: upgrade does)
        sa.event.remove(sa.engine.Engine, "connect", full_disk)
        assert econ(capsys, "library", "upgrade", "--library", url)[0] == 0
        sa.event.listen(sa.engine.Engine, "connect", full_disk)
        rc, _, err = econ(capsys, "library", "save", SEED, "--library", url)
        assert rc == 3 and "disk holding the library file is full" in err
        assert path.exists() and "removed" not in err
    finally:
        sa.event.remove(sa.engine.Engine, "connect", full_disk)


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a 1 MB tmpfs (root may mount one; skipped where it cannot be)."""
    import os
    import shutil

    folder = tmp_path / "full"
    folder.mkdir()
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_failed_first_save_on_a_full_disk_leaves_no_file_nor_journal(full_disk, tmp_path, capsys):
    """Found by review: a large first save onto a full disk left new.db and new.db-journal: the
    journal made the read-only check of the file fail, and the file was kept."""
    big = tmp_path / "big.toml"
    filler = "".join(f"# filler line {i:07d} {'x' * 60}\n" for i in range(9_000))
    big.write_text(SEED.read_text() + filler)  # 0.7 MB: within a scenario file's 1 MB
    taken = full_disk / "taken"  # the disk's 1 MB less 0.6 MB: less than the text needs
    taken.write_bytes(b"\0" * 600_000)
    url = f"sqlite:///{full_disk / 'new.db'}"
    rc, _, err = econ(capsys, "library", "save", big, "--library", url)
    assert rc == 3 and "the disk holding the library file is full" in err, err
    assert "econ removed the library file it had just created" in err
    assert list(full_disk.iterdir()) == [taken]
    # the disk still takes a small library
    assert econ(capsys, "library", "save", SEED, "--library", url)[0] == 0


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("timeout=-1", "timeout='-1': expected the seconds a save waits"),
        ("timeout=nan", "timeout='nan'"),
        ("timeout=abc", "timeout='abc'"),
        ("mode=ro", "?mode=... is not a SQLite library option; expected only ?timeout=S"),
        ("cache=shared", "?cache=... is not a SQLite library option"),
    ],
)
def test_sqlite_url_options_are_checked(tmp_path, capsys, query, expected):
    path = tmp_path / "library.db"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw SAWarning for an ignored option
        rc, _, err = econ(capsys, "library", "list", "--library", f"sqlite:///{path}?{query}")
    assert rc == 3 and expected in err and "Traceback" not in err
    assert not path.exists()


def test_version_numbers_parse():
    assert parse_ref("library:a@3") == Ref("a", 3)
    assert parse_ref("a-b") == Ref("a-b", None)
    assert parse_ref("x@y@2") == Ref("x@y", 2)
    with pytest.raises(LibraryError):
        parse_ref("a@0")
    with pytest.raises(LibraryError):
        parse_ref("@3")


# --- migrations: of the library's tables and of stored scenarios -------------------------------


def _old_library(url: str) -> None:
    """A library at the first revision (0001), with one version saved the way 0001 stored it."""
    from alembic import command

    from econ.library.store import _alembic_config

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        config = _alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        conn.execute(
            sa.text("INSERT INTO scenarios (id, name, created_utc) VALUES (1, :n, :t)"),
            {"n": SEED_NAME, "t": "2025-01-02 03:04:05"},
        )
        conn.execute(
            sa.text(
                "INSERT INTO versions (id, scenario_id, version, toml_text, text_sha256, "
                "scenario_sha256, schema_version, author, message, created_utc) VALUES "
                "(1, 1, 1, :text, :sha256, 'y', 1, 'bob', 'old', :t)"
            ),
            {
                "text": SEED.read_text(),
                "sha256": hashlib.sha256(SEED.read_bytes()).hexdigest(),
                "t": "2025-01-02 03:04:05",
            },
        )
        conn.execute(sa.text("INSERT INTO tags (version_id, tag) VALUES (1, 'fy25')"))
    engine.dispose()


def _revision_of(url: str) -> str:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        revision = conn.scalar(sa.text("SELECT version_num FROM econ_library_revision"))
    engine.dispose()
    return revision


@pytest.mark.parametrize("writer", ["upgrade", "save"])
def test_an_old_library_is_upgraded_by_a_writer_never_by_a_read(library_url, capsys, writer):
    _old_library(library_url)
    # a command that only reads writes nothing, not even an upgrade: it says who upgrades
    for argv in (["list"], ["show", SEED_NAME], ["history", SEED_NAME]):
        rc, _, err = econ(capsys, "library", *argv)
        assert rc == 3 and "is at library revision 0001, older than the revision 0004" in err
        assert "upgraded first by a user allowed to change its tables" in err
        assert "`econ library upgrade`" in err and "Traceback" not in err
    assert econ(capsys, "project", f"library:{SEED_NAME}")[0] == 3
    assert _revision_of(library_url) == "0001"
    if writer == "upgrade":
        rc, out, _ = econ(capsys, "library", "upgrade")
        assert rc == 0 and "upgraded library" in out and "from revision 0001 to 0004" in out
        rc, out, _ = econ(capsys, "library", "upgrade", "--format", "json")
        assert json.loads(out)["previous_revision"] == json.loads(out)["revision"] == "0004"
    else:
        assert econ(capsys, "library", "save", HALL)[0] == 0
    assert _revision_of(library_url) == "0004"
    rc, out, _ = econ(capsys, "library", "list", "--hardware", "gb200-nvl72", "--format", "json")
    assert rc == 0
    [row] = json.loads(out)["scenarios"]
    assert (row["name"], row["author"], row["tags"], row["model"]) == (
        SEED_NAME,
        "bob",
        ["fy25"],
        "deepseek-r1",
    )
    out = econ(capsys, "library", "show", f"{SEED_NAME}@1")[1]
    assert out == show_line(f"{SEED_NAME}@1") + SEED.read_text()
    assert econ(capsys, "library", "save", SEED)[0] == 0
    assert summary_of(capsys, f"library:{SEED_NAME}@1") == summary_of(capsys, SEED)


def test_an_upgrade_gives_no_keys_to_a_text_that_is_no_scenario_today(library_url, capsys):
    """Found by review: revision 0002 filled the keys of an old version holding only `name` and
    `schema_version` (saved before sections were required) from the defaults it validated on:
    generic-gpu, and a model read from its name; docs/library.md says such a text keeps none."""
    _old_library(library_url)
    stub = 'name = "llama2-70b-h200"\nschema_version = 1\n'
    _results(
        library_url,
        "INSERT INTO scenarios (id, name, created_utc) VALUES (2, 'llama2-70b-h200', :t)",
        t="2025-01-02 03:04:05",
    )
    _results(
        library_url,
        "INSERT INTO versions (id, scenario_id, version, toml_text, text_sha256, "
        "scenario_sha256, schema_version, author, message, created_utc) VALUES "
        "(2, 2, 1, :text, :sha256, 'y', 1, 'bob', 'old', :t)",
        text=stub,
        sha256=hashlib.sha256(stub.encode()).hexdigest(),
        t="2025-01-02 03:04:05",
    )
    assert econ(capsys, "library", "upgrade")[0] == 0
    keys = _results(library_url, "SELECT scenario_id, hardware, model FROM versions ORDER BY 1")
    assert keys == [(1, "gb200-nvl72", "deepseek-r1"), (2, None, None)]
    assert store.scenario_keys(stub) is None
    assert store.scenario_keys(SEED.read_text()) == ("gb200-nvl72", "deepseek-r1")


def test_a_library_from_a_newer_econ_is_refused(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    engine = sa.create_engine(library_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE econ_library_revision SET version_num = '9999'"))
    engine.dispose()
    rc, _, err = econ(capsys, "library", "list")
    assert rc == 3 and "newer econ" in err and "9999" in err


def _v0_to_v1(data: dict) -> dict:
    data.setdefault("capex", {})["gpu_price_usd"] = data["capex"].pop("price_per_gpu")
    return data


V0_TEXT = (
    'schema_version = 0\nname = "legacy"\n[fleet]\n[throughput]\n[capex]\n'
    "price_per_gpu = 31000.0  # kept\n[market]\n"
)


def test_stored_scenario_that_no_longer_validates_is_shown_and_migrated(
    library_url, capsys, monkeypatch
):
    # saved while a migration from schema_version 0 existed ...
    monkeypatch.setitem(MIGRATIONS, 0, Migration(0, "capex.price_per_gpu renamed", _v0_to_v1))
    with open_library() as library:
        assert library.save_text(V0_TEXT).schema_version == 0
    # ... then this econ no longer knows version 0: the version is shown, never dropped
    monkeypatch.delitem(MIGRATIONS, 0)
    rc, _, err = econ(capsys, "project", "library:legacy@1")
    assert rc == 3 and "library:legacy@1" in err and "econ library show legacy@1" in err
    assert "kept unchanged" in err and "Traceback" not in err
    assert econ(capsys, "library", "show", "legacy@1") == (0, show_line("legacy@1") + V0_TEXT, "")
    assert econ(capsys, "library", "migrate", "legacy@1")[0] == 3
    # with the migration available, `migrate` saves a current copy as version 2
    monkeypatch.setitem(MIGRATIONS, 0, Migration(0, "capex.price_per_gpu renamed", _v0_to_v1))
    rc, out, _ = econ(capsys, "library", "migrate", "legacy@1", "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 2 and json.loads(out)["schema_version"] == 1
    monkeypatch.delitem(MIGRATIONS, 0)
    assert load_scenario("library:legacy@2").capex.gpu_price_usd == 31000.0
    assert econ(capsys, "library", "show", "legacy@1")[1] == show_line("legacy@1") + V0_TEXT
    rc, _, err = econ(capsys, "library", "migrate", "legacy@2")
    assert rc == 3 and "nothing to migrate" in err


def _v0_gpus_to_v1(data: dict) -> dict:
    """A made-up version 0 whose [fleet] was [gpus] and capex.gpu_price_usd price_per_gpu."""
    if "gpus" in data:
        data["fleet"] = data.pop("gpus")
    return _v0_to_v1(data)


def test_a_stored_version_is_migrated_before_its_overrides_and_checks(
    library_url, capsys, monkeypatch
):
    """Found by review: `--set` was applied to the stored text before the migration, which then
    wrote the old field over the override (31,000, not the 40,000 set); and the checks of the
    required sections read the text as stored, before the migration makes its [fleet]."""
    monkeypatch.setitem(MIGRATIONS, 0, Migration(0, "[gpus] renamed [fleet]", _v0_gpus_to_v1))
    gpus = V0_TEXT.replace("[fleet]", "[gpus]")
    assert "[fleet]" not in gpus
    with open_library() as library:
        assert library.save_text(V0_TEXT).schema_version == 0
        assert library.load(Ref("legacy", 1)).capex.gpu_price_usd == 31000.0
        overridden = library.load(Ref("legacy", 1), {"capex.gpu_price_usd": 40000.0})
        assert overridden.capex.gpu_price_usd == 40000.0
        assert library.save_text(gpus).version == 2  # its [fleet] is the migrated [gpus]
        assert library.load(Ref("legacy", 2)).fleet == overridden.fleet
    override = ["--set", "capex.gpu_price_usd=40000", "--format", "json"]
    rc, out, err = econ(capsys, "project", "library:legacy@1", *override)
    assert rc == 0, err
    capex = json.loads(out)["scenarios"][0]["summary"]["capex_usd_total"]
    assert capex == project_summary(overridden)["capex_usd_total"] == 40000.0 * 72  # 72 GPUs


def _open_in_process(url, barrier, results):
    barrier.wait()
    with open_library(url) as library:
        results.put(len(library.history(SEED_NAME)))


def test_processes_opening_an_old_library_at_once_migrate_it_once(library_url):
    _old_library(library_url)
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [
        context.Process(target=_open_in_process, args=(library_url, barrier, results))
        for _ in range(4)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0] * 4
    assert [results.get(timeout=5) for _ in range(4)] == [1] * 4
    engine = sa.create_engine(library_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM econ_library_revision")).all() == [
            ("0004",)
        ]
        hardware = conn.scalar(sa.text("SELECT hardware FROM versions"))
    engine.dispose()
    assert hardware == "gb200-nvl72"


# --- files export will not read, disks that fill up, names that deceive, reads that create ------


def _release_fifo(path: Path) -> None:
    """Open a FIFO's write end and close it, so a reader blocked on it (a regression) returns."""
    import os

    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # no reader waiting


def _export_within(capsys, folder: Path, *extra, seconds: float = 60.0):
    """`econ library export FOLDER` run in a thread: (rc, err), or a failure if it blocks."""
    import threading

    outcome = {}

    def run():
        outcome["result"] = econ(capsys, "library", "export", folder, *extra)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        _release_fifo(folder / f"{SEED_NAME}.toml")
        thread.join(10)
        pytest.fail(f"econ library export {folder} blocked for {seconds:g} s")
    rc, _, err = outcome["result"]
    return rc, err


def test_export_refuses_a_fifo_a_link_or_a_device_unread(library_url, tmp_path, capsys):
    import os

    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    folder.mkdir()
    target = folder / f"{SEED_NAME}.toml"
    outside = tmp_path / "outside.toml"
    stored = econ(capsys, "library", "show", SEED_NAME)[1].encode()
    outside.write_bytes(stored)  # even a link to an equal file is not followed
    os.mkfifo(target)
    try:
        for make in (
            None,  # the FIFO
            lambda: target.symlink_to("/dev/zero"),
            lambda: target.symlink_to(outside),
            lambda: target.symlink_to(tmp_path / "absent.toml"),
        ):
            if make is not None:
                target.unlink()
                make()
            for extra in ((), ("--force",)):
                rc, err = _export_within(capsys, folder, *extra)
                assert rc == 3 and "Traceback" not in err, err
                assert f"{target}: " in err and "not a regular file" in err
                assert "nothing was written" in err
            assert sorted(p.name for p in folder.iterdir()) == [target.name]
        assert target.readlink() == tmp_path / "absent.toml"
        assert outside.read_bytes() == stored
    finally:
        _release_fifo(target)


def test_export_compares_a_huge_file_without_reading_it(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    folder.mkdir()
    huge = folder / f"{SEED_NAME}.toml"
    with huge.open("wb") as handle:  # sparse: 64 GB that take no disk and no memory
        handle.truncate(64 * 2**30)
    rc, err = _export_within(capsys, folder)
    assert rc == 3 and "refusing to overwrite" in err and str(huge) in err
    assert huge.stat().st_size == 64 * 2**30
    rc, err = _export_within(capsys, folder, "--force")
    out = econ(capsys, "library", "show", SEED_NAME, "--format", "json")[1]
    assert rc == 0
    assert huge.read_text() == show_line(f"{SEED_NAME}@1") + json.loads(out)["toml"]
    # a stored text is never larger than a scenario file econ reads (1 MB), from the API neither
    with open_library() as library, pytest.raises(ScenarioError, match="larger than 1 MB"):
        library.save_text("#" * 2**20 + "\n" + SEED.read_text())


def test_export_to_a_full_disk_writes_no_file(library_url, tmp_path, capsys, monkeypatch):
    import errno

    from econ import files

    for i in range(3):
        econ(capsys, "library", "save", edited(tmp_path, SEED_NAME, f"{SEED_NAME}-{i}"))
    folder = tmp_path / "team"
    folder.mkdir()
    calls = []

    def full_on_the_third(handle, payload):
        calls.append(payload)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        handle.write(payload)

    with monkeypatch.context() as patch:
        patch.setattr(files, "_write_payload", full_on_the_third)
        rc, _, err = econ(capsys, "library", "export", folder)
    assert rc == 3 and "the disk is full" in err and "nothing was written" in err
    assert list(folder.iterdir()) == []  # true: neither the first two files nor a temporary
    rc, out, _ = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and len(json.loads(out)["written"]) == 3


def test_export_creates_a_missing_folder_and_removes_it_when_writing_fails(
    library_url, tmp_path, capsys, monkeypatch
):
    """Found by review: docs/library.md says `econ library export team-scenarios/`, which failed
    unless the folder existed."""
    import errno

    from econ import files

    econ(capsys, "library", "save", SEED)
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as patch:  # a full disk: the folders made are removed again
        patch.setattr(files, "_write_payload", _raise(OSError(errno.ENOSPC, "No space left")))
        rc, _, err = econ(capsys, "library", "export", "out/team-scenarios/")
    assert rc == 3 and "nothing was written" in err and not (tmp_path / "out").exists()
    rc, out, err = econ(capsys, "library", "export", "out/team-scenarios/", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["written"] == [f"out/team-scenarios/{SEED_NAME}.toml"]
    assert (tmp_path / "out" / "team-scenarios" / f"{SEED_NAME}.toml").read_text() == (
        show_line(f"{SEED_NAME}@1") + SEED.read_text()
    )
    # a file in the way is named, and nothing made
    (tmp_path / "plain").write_text("")
    rc, _, err = econ(capsys, "library", "export", "plain/sub")
    assert rc == 3 and "cannot create the folder (plain: a file of that name is in the way" in err
    rc, _, err = econ(capsys, "library", "export", "plain")
    assert rc == 3 and "plain: not a folder" in err


def _raise(exc: BaseException):
    def raising(*_args, **_kwargs):
        raise exc

    return raising


def test_a_json_file_nested_deeper_than_json_reads_gets_the_json_hint(
    library_url, tmp_path, capsys
):
    """Found by review: a small JSON file is told "this is JSON", a 5,000-deep one was not."""
    for depth in (2, 5_000):
        path = tmp_path / f"deep{depth}.json"
        path.write_text('{"name": "x", "a": ' + "[" * depth + "]" * depth + "}")
        for argv in (["library", "save", path], ["validate", path]):
            rc, _, err = econ(capsys, *argv)
            assert rc == 3 and "malformed TOML" in err, err
            assert "this is JSON: a scenario file is TOML" in err, (depth, argv, err)
    path.write_text("name = [[[1]]\n")  # TOML's own brackets: no hint
    rc, _, err = econ(capsys, "library", "save", path)
    assert rc == 3 and "malformed TOML" in err and "this is JSON" not in err


def _named(tmp_path: Path, name: str, file: str = "named.toml") -> Path:
    """The seed scenario saved under `name` (written with TOML escapes: any character fits)."""
    escaped = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else f"\\U{ord(c):08X}"
        for c in name
    )
    return edited(tmp_path, f'name = "{SEED_NAME}"', f'name = "{escaped}"', name=file)


def test_a_name_typed_composed_or_decomposed_is_one_name(library_url, tmp_path, capsys):
    composed, decomposed = "\u00c5-b200", "A\u030a-b200"
    assert econ(capsys, "library", "save", _named(tmp_path, composed))[0] == 0
    rc, out, err = econ(capsys, "library", "save", _named(tmp_path, decomposed), "--format", "json")
    assert rc == 0, err
    assert (json.loads(out)["name"], json.loads(out)["version"]) == (composed, 2)
    for typed in (composed, decomposed):
        rc, out, _ = econ(capsys, "library", "history", typed, "--format", "json")
        assert rc == 0 and len(json.loads(out)["versions"]) == 2
        assert summary_of(capsys, f"library:{typed}@2")["gpu_count"] == 72
    rc, out, _ = econ(capsys, "library", "list", "--format", "json")
    assert [s["name"] for s in json.loads(out)["scenarios"]] == [composed]
    # two files of one import holding the two spellings hold one name
    folder = tmp_path / "team"
    folder.mkdir()
    _named(folder, composed, "a.toml")
    _named(folder, decomposed, "b.toml")
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "both hold scenario" in err


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("A\u200b-B", "character 2 is U+200B ZERO WIDTH SPACE, an invisible format character"),
        # (refused by every scenario, in a file or not: econ.scenario.section)
        ("A-B\u202elmth.exe", "a bidirectional control character ('\\u202e') at character 4"),
        ("A-B\U000e0041", "character 4 is U+E0041 TAG LATIN CAPITAL LETTER A"),
        ("A\u2028B", "character 2 is U+2028 LINE SEPARATOR, a line separator"),
        ("A\u2029B", "character 2 is U+2029 PARAGRAPH SEPARATOR, a paragraph separator"),
        ("A-B\u00a0", "character 4 is U+00A0 NO-BREAK SPACE, a space at the name's end"),
        ("\u3000A-B", "character 1 is U+3000 IDEOGRAPHIC SPACE, a space at the name's start"),
        ("A-B ", "character 4 is U+0020 SPACE, a space at the name's end"),
        ("\u0410pple-b200", "word 'Аpple' mixes Cyrillic and Latin letters (character 1 is U+0410"),
        ("gb200-n\u03bdl72", "word 'nνl72' mixes Latin and Greek letters"),
        # default-ignorable characters that are not format characters, and the braille blank
        ("A\u034f-B", "character 2 is U+034F COMBINING GRAPHEME JOINER, a default-ignorable"),
        ("A-B\ufe0f", "character 4 is U+FE0F VARIATION SELECTOR-16, a default-ignorable"),
        ("A-B\u3164", "character 4 is U+3164 HANGUL FILLER, a default-ignorable character"),
        ("A-B\uffa0", "character 4 is U+FFA0 HALFWIDTH HANGUL FILLER"),
        ("A-B\u17b4", "character 4 is U+17B4 KHMER VOWEL INHERENT AQ, a default-ignorable"),
        ("A-B\u2800", "character 4 is U+2800 BRAILLE PATTERN BLANK, a blank, drawn as nothing"),
        # a letter between digits is in a word with the letters before it
        ("h2\u041e0-b200", "word 'h2О0' mixes Latin and Cyrillic letters"),
        # Latin may join Han and kana, or Han and bopomofo, or Han and hangul; no other mix
        ("\u30e2\u30c7\u30eb\ud55c", "word 'モデル한' mixes Katakana and Hangul"),
        ("GPU\u3105\u3072", "mixes Bopomofo and Hiragana letters"),
    ],
)
def test_a_name_that_can_deceive_is_refused(library_url, tmp_path, capsys, name, expected):
    rc, _, err = econ(capsys, "library", "save", _named(tmp_path, name))
    assert rc == 3 and expected in err and "Traceback" not in err, err
    assert f"named.toml: name = {name!r}: " in err
    assert not any(c in err for c in "\u200b\u202e\U000e0041\u2028\u2029")
    folder = tmp_path / "team"
    folder.mkdir()
    _named(folder, name)
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and expected in err
    with open_library(create=False) as library:
        assert library.list(deleted=True) == []


def test_a_new_name_that_looks_like_a_stored_one_is_refused(library_url, tmp_path, capsys):
    assert econ(capsys, "library", "save", _named(tmp_path, "A-B"))[0] == 0
    for lookalike, detail in [
        ("\u0410-B", " (character 1 is U+0410 CYRILLIC CAPITAL LETTER A where it has U+0041"),
        ("\u0391-\u0392", " (character 1 is U+0391 GREEK CAPITAL LETTER ALPHA"),
        ("\uff21-\uff22", " (character 1 is U+FF21 FULLWIDTH LATIN CAPITAL LETTER A"),
    ]:
        rc, _, err = econ(capsys, "library", "save", _named(tmp_path, lookalike))
        assert rc == 3 and f"name = {lookalike!r}: looks like 'A-B', already in library" in err
        assert detail in err and "nothing was saved" in err
        folder = tmp_path / f"team-{ord(lookalike[0]):x}"  # and in an import
        folder.mkdir()
        _named(folder, lookalike)
        rc, _, err = econ(capsys, "library", "import", folder)
        assert rc == 3 and "looks like 'A-B'" in err
    # two new names of one import that look alike
    folder = tmp_path / "pair"
    folder.mkdir()
    _named(folder, "\u0421-D", "a.toml")
    _named(folder, "C-D", "b.toml")
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "looks like" in err
    rc, out, _ = econ(capsys, "library", "list", "--format", "json")
    assert [s["name"] for s in json.loads(out)["scenarios"]] == ["A-B"]
    # names in other scripts, and words in two scripts side by side, are names like any other
    for name in ("Модель-GB200", "東京タワー-b200", "DeepSeek-R1 на GB200", "\u00c5ngstr\u00f6m"):
        assert econ(capsys, "library", "save", _named(tmp_path, name))[0] == 0, name


def test_look_alikes_in_one_script_and_names_differing_in_case_are_refused(
    library_url, tmp_path, capsys
):
    for name in ("llama2-70b-h200", "run.v2", "model plan"):
        assert econ(capsys, "library", "save", _named(tmp_path, name))[0] == 0
    for lookalike, stored, detail in [
        ("IIama2-70b-h200", "llama2-70b-h200", "character 1 is U+0049 LATIN CAPITAL LETTER I"),
        ("1lama2-70b-h200", "llama2-70b-h200", "character 1 is U+0031 DIGIT ONE"),
        ("llama2-70b-h2OO", "llama2-70b-h200", "character 14 is U+004F LATIN CAPITAL LETTER O"),
        ("llama2\u201370b-h200", "llama2-70b-h200", "character 7 is U+2013 EN DASH"),
        ("llama2\u221270b-h200", "llama2-70b-h200", "character 7 is U+2212 MINUS SIGN"),
        ("llama2\u201170b-h200", "llama2-70b-h200", "U+2011 NON-BREAKING HYPHEN"),
        ("llama2\u201270b-h200", "llama2-70b-h200", "U+2012 FIGURE DASH"),
        ("run\u2024v2", "run.v2", "character 4 is U+2024 ONE DOT LEADER"),
        ("run\uff0ev2", "run.v2", "U+FF0E FULLWIDTH FULL STOP"),
        ("model  plan", "model plan", ""),
    ]:
        rc, _, err = econ(capsys, "library", "save", _named(tmp_path, lookalike))
        assert rc == 3 and f"name = {lookalike!r}: looks like {stored!r}, already in" in err
        assert detail in err and "nothing was saved" in err, err
    # names differing only in letter case read as one name (and export's files of them clash)
    for other_case in ("LLAMA2-70B-H200", "Llama2-70b-h200", "RUN.V2"):
        rc, _, err = econ(capsys, "library", "save", _named(tmp_path, other_case))
        assert rc == 3 and "differs only in letter case from" in err, err
    rc, out, _ = econ(capsys, "library", "list", "--format", "json")
    assert [s["name"] for s in json.loads(out)["scenarios"]] == [
        "llama2-70b-h200",
        "model plan",
        "run.v2",
    ]
    # what UTS #39 allows ("highly restrictive"), a unit's micro sign, and letters that differ
    for name in (
        "GPU\u96c6\u7fa4",  # Latin and Han
        "Llama\u30e2\u30c7\u30eb",  # Latin and katakana
        "H200\uc11c\ubc84",  # Latin and hangul
        "GPU\u6ce8\u97f3\u3105",  # Latin, Han and bopomofo
        "latency-200\u00b5s",  # MICRO SIGN
        "L2-plan",
        "12-plan",  # ('L' and '1' are not drawn alike)
        "run-v2",
    ):
        rc, _, err = econ(capsys, "library", "save", _named(tmp_path, name))
        assert rc == 0, (name, err)


def test_an_import_of_two_look_alike_new_names_names_both_files(library_url, tmp_path, capsys):
    """Found by review: importing new files `new1` and `NEW1` said "'NEW1', already in library"
    of a name only in the same import, without naming its file."""
    folder = tmp_path / "team"
    folder.mkdir()
    _named(folder, "new1", "a.toml")
    _named(folder, "NEW1", "b.toml")
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "already in library" not in err
    assert (
        f"{folder / 'a.toml'}: name = 'new1': differs only in letter case from 'NEW1', the name "
        f"in {folder / 'b.toml'} of the same import"
    ) in err
    assert "nothing was imported" in err
    with open_library() as library:
        assert library.list() == []


def test_skeleton_maps_look_alikes_to_one_text():
    same = ["llama2-70b.h200", "IIama2\u201370b\u2024h2OO", "\uff4c1ama2\u221270b\uff0eh200"]
    assert len({skeleton(name) for name in same}) == 1
    assert skeleton("llama2-70b-h200\u034f\ufe0f\u3164\u2800") == skeleton("llama2-70b-h200")
    assert skeleton("a  b") == skeleton("a\u3000b") == "a b"
    assert skeleton("L2") != skeleton("12") and skeleton("o") != skeleton("0")


def test_names_stored_before_the_checks_still_load_save_and_print_escaped(
    library_url, tmp_path, capsys, monkeypatch
):
    legacy = ["A\u2028B", "A-B\u00a0", "A\u030a", "\u0410-B", "A-B\ufe0f", "IIama", "LLAMA"]
    with monkeypatch.context() as patch:  # an econ from before the checks
        patch.setattr("econ.library.store.name_problem", lambda name: None)
        patch.setattr("econ.library.store.look_keys", lambda name: [("looks like", name)])
        patch.setattr("econ.library.store.unicodedata.normalize", lambda form, text: text)
        for name in legacy:
            assert econ(capsys, "library", "save", _named(tmp_path, name))[0] == 0
    for name in legacy:
        assert econ(capsys, "library", "save", _named(tmp_path, name))[0] == 0, name
        rc, out, _ = econ(capsys, "library", "history", name, "--format", "json")
        assert rc == 0 and [v["version"] for v in json.loads(out)["versions"]] == [1, 2]
        assert summary_of(capsys, f"library:{name}@2")["gpu_count"] == 72
    # the NFC spelling of a name stored decomposed finds it
    assert econ(capsys, "library", "show", "\u00c5@1")[0] == 0
    rc, out, _ = econ(capsys, "library", "list")
    assert "A\\u2028B" in out and "A-B\\xa0" in out and "\u2028" not in out and "\xa0" not in out
    rc, out, _ = econ(capsys, "library", "list", "--format", "json")
    assert "\\u2028" in out and "\u2028" not in out and "\xa0" not in out
    assert {s["name"] for s in json.loads(out)["scenarios"]} == set(legacy)
    rc, out, _ = econ(capsys, "library", "delete", "A\u2028B")
    assert rc == 0 and "deleted A\\u2028B" in out and "$'A\\u2028B@2'" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["list", "--format", "json"],
        ["history", SEED_NAME],
        ["show", SEED_NAME],
        ["diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2"],
        ["export", "{tmp}"],
        ["restore", f"{SEED_NAME}@1"],
        ["delete", SEED_NAME],
        ["migrate", f"{SEED_NAME}@1"],
    ],
)
def test_commands_that_read_never_create_a_library_file(tmp_path, capsys, monkeypatch, argv):
    folder = tmp_path / "libs"
    folder.mkdir()
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    missing = folder / "library.db"
    rc, _, err = econ(capsys, "library", *argv, "--library", f"sqlite:///{missing}")
    assert rc in (0, 3) and "Traceback" not in err
    assert rc == 0 or f"its file {missing} does not exist yet" in err, err
    # a path ending in '/' names a folder: refused, not created as a file named like it
    rc, _, err = econ(capsys, "library", *argv, "--library", f"sqlite:///{folder}/victim/")
    assert rc == 3 and "the path ends in '/', which names a folder" in err
    # an empty file (someone else's) is read as an empty library and left empty
    empty = folder / "empty.db"
    empty.touch()
    econ(capsys, "library", *argv, "--library", f"sqlite:///{empty}")
    assert sorted(p.name for p in folder.iterdir()) == ["empty.db"]
    assert empty.stat().st_size == 0
    # library:NAME anywhere, and the default library, which `list` does not create either
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("ECON_LIBRARY", raising=False)
    assert econ(capsys, "project", f"library:{SEED_NAME}")[0] == 3
    assert econ(capsys, "library", *argv)[0] in (0, 3)
    assert not (tmp_path / "data").exists()


def _library_tables(url: str) -> list[str] | None:
    """The tables of a library (None: its SQLite file does not exist, nor a journal of it)."""
    path = sa.engine.make_url(url).database
    if url.startswith("sqlite"):
        if not any(Path(path + suffix).exists() for suffix in ("", "-journal", "-wal")):
            return None
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        tables = sorted(sa.inspect(conn).get_table_names())
    engine.dispose()
    return tables


def test_a_failed_write_to_a_new_library_creates_nothing(library_url, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n')  # no [fleet], [throughput], ...
    empty = tmp_path / "empty"
    empty.mkdir()
    invalid = tmp_path / "invalid"
    invalid.mkdir()
    (invalid / "bad.toml").write_text('name = "x"\n')
    cases = [
        (["save", bad], "bad.toml"),
        (["save", tmp_path / "missing.toml"], "missing.toml"),
        (["save", SEED, "--tag", ",bad"], "tag ',bad': expected a label"),
        (["save", SEED, "--author", "\x1b[2J"], "author"),
        (["save", SEED, "--base", "2"], "expected no --base for a new name"),  # (refused in the
        (["save", _named(tmp_path, "A\u200b-B")], "U+200B ZERO WIDTH SPACE"),  # transaction)
        (["import", empty], "no *.toml files"),
        (["import", invalid], "bad.toml"),
        (
            ["restore", f"{SEED_NAME}@1"],
            "no econ library yet" if "postgresql" in library_url else "does not exist yet",
        ),
        (["delete", SEED_NAME], "no scenario"),
        (["migrate", f"{SEED_NAME}@1"], "no scenario"),
    ]
    for argv, expected in cases:
        rc, _, err = econ(capsys, "library", *argv)
        assert rc == 3 and expected in err and "Traceback" not in err, (argv, err)
        assert "removed the library file" not in err  # none was made
        assert _library_tables(library_url) in (None, []), argv
    assert econ(capsys, "library", "save", SEED)[0] == 0  # a save that succeeds creates it
    assert "versions" in _library_tables(library_url)


def test_saves_still_create_the_library_file(tmp_path, capsys):
    path = tmp_path / "new.db"
    rc, _, err = econ(capsys, "library", "save", SEED, "--library", f"sqlite:///{path}/")
    assert rc == 3 and "ends in '/'" in err and not path.exists()
    assert econ(capsys, "library", "save", SEED, "--library", f"sqlite:///{path}")[0] == 0
    rc, out, _ = econ(capsys, "library", "list", "--library", f"sqlite:///{path}")
    assert rc == 0 and SEED_NAME in out


def test_exporting_a_library_that_holds_nothing_says_so(library_url, tmp_path, capsys):
    # It exited 0 and printed nothing, as if it had written the team's scenarios.
    folder = tmp_path / "team"
    folder.mkdir()
    rc, out, err = econ(capsys, "library", "export", folder)
    assert rc == 0 and out == "" and list(folder.iterdir()) == []
    assert err.startswith("no scenarios exported: ")
    rc, out, err = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and json.loads(out)["written"] == [] and "no scenarios exported" in err
