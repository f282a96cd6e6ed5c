"""What keeps a library's versions as saved (docs/library.md, "A team on PostgreSQL", "Who saved
it", "What keeps versions as saved"): the least grants a member needs, each member operation run
under them on a real PostgreSQL server and the server refusing a member's UPDATE of what econ
only inserts; a version's text checked against its SHA-256 on every read; cached results checked
against theirs; who a version records as its author; what a read-only folder or disk is called;
export's file names of names longer than 255 bytes. PostgreSQL cases run on the server the
postgres_socket fixture (tests/conftest.py) starts."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import types
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_library import SEED, SEED_NAME, _named, _old_library, econ, edited
from test_library import _results as _execute  # a statement run as the library's owner
from test_library_shared import _create_roles, _database, _owner_grants, _superuser, _team_sql

from econ.library import Ref, open_library, store
from econ.library.store import project_summary
from econ.provenance import catalog_versions, scenario_sha256

TAMPERED = "gpu_count = 7272"
"""What the tampering below writes into a stored text (no message may quote it)."""


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _gpu_change(capsys, old: str, new: str) -> float:
    rc, out, err = econ(capsys, "library", "diff", old, new, "--format", "json")
    assert rc == 0, err
    return json.loads(out)["metrics"]["gpu_count"]["change"]


# --- 1a. the documented grants: every member operation, and no UPDATE of what econ inserts ------


def _member_may_not(socket: Path, database: str, statement: str) -> None:
    """`statement`, run by the member bob, is refused by the server for want of a privilege."""
    import psycopg

    with psycopg.connect(host=str(socket), user="bob", dbname=database, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)


OLD_GRANTS = [
    "GRANT USAGE ON SCHEMA public TO econ_team, econ_readers;",
    "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO econ_team;",
    "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO econ_team;",
    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO econ_readers;",
    "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE ON TABLES "
    "TO econ_team;",
]
"""The owner's grants of docs/library.md before members lost UPDATE, which the docs' third block
tightens."""


def test_the_docs_grant_members_what_econ_names_in_its_messages():
    statements = _owner_grants()
    for grant in store.member_grants("econ_team"):
        assert f"{grant};" in statements
    team = [s for s in statements if s.endswith("TO econ_team;") and "DEFAULT" not in s]
    assert not [s for s in team if "UPDATE ON" in s or "DELETE" in s or "ALL PRIVILEGES" in s]


@pytest.mark.parametrize("grants", ["documented", "tightened"])
def test_a_member_does_every_operation_and_cannot_change_what_is_stored(
    postgres_url, postgres_socket, tmp_path, capsys, monkeypatch, grants
):
    """Found by review: the documented grants (SELECT, INSERT, UPDATE on all tables) let any
    member `UPDATE versions SET toml_text = ...` (show and project then used the changed text)
    and `UPDATE results SET summary_json = ...` (diff then served it)."""
    import psycopg

    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    database, socket = _database(postgres_url), postgres_socket
    _create_roles(socket, database)

    def as_role(role: str) -> str:
        return f"postgresql+psycopg://{role}@/{database}?host={socket}"

    def run(role: str, *argv):
        return econ(capsys, "library", *argv, "--library", as_role(role))

    assert run("econ_owner", "upgrade")[0] == 0
    assert run("econ_owner", "save", SEED, "--author", "ada")[0] == 0
    statements = _owner_grants() if grants == "documented" else OLD_GRANTS + _team_sql(2)
    with psycopg.connect(host=str(socket), user="econ_owner", dbname=database) as conn:
        for statement in statements:
            conn.execute(statement)

    # every member operation the docs list: save (a new version; a new name, tagged)
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    rc, out, err = run("bob", "save", second, "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 2, err
    new_name = _named(tmp_path, "bobs-plan")
    assert run("bob", "save", new_name, "--tag", "board-2026q3")[0] == 0
    rc, out, _ = run("bob", "list", "--tag", "board-2026q3", "--format", "json")
    assert [s["name"] for s in json.loads(out)["scenarios"]] == ["bobs-plan"]
    # a label on a version saved before
    assert run("bob", "tag", f"{SEED_NAME}@1", "board-2026q4")[0] == 0
    # delete, and undelete by a save and by restore
    assert run("bob", "delete", SEED_NAME)[0] == 0
    rc, out, err = run("bob", "save", second, "--format", "json")
    assert rc == 0 and json.loads(out)["undeleted"] is True, err
    assert run("bob", "delete", SEED_NAME)[0] == 0
    rc, out, err = run("bob", "restore", f"{SEED_NAME}@1", "--format", "json")
    assert rc == 0 and json.loads(out)["undeleted"] is True, err
    # import: a new name, and a changed text with --update
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "new.toml").write_bytes(_named(tmp_path, "imported-plan", "x.toml").read_bytes())
    (folder / "seed.toml").write_bytes(
        edited(tmp_path, "gpu_count = 72", "gpu_count = 216", name="y.toml").read_bytes()
    )
    rc, out, err = run("bob", "import", folder, "--update", "--format", "json")
    assert rc == 0, err
    assert (len(json.loads(out)["added"]), len(json.loads(out)["updated"])) == (1, 1)
    assert run("bob", "export", tmp_path / "out")[0] == 0
    # the results cache: bob's diff stores both summaries
    with _superuser(socket, database) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 0
    rc, out, err = run("bob", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json")
    assert rc == 0 and json.loads(out)["metrics"]["gpu_count"]["change"] == 72, err
    with _superuser(socket, database) as conn:
        cached = conn.execute("SELECT count(*) FROM results").fetchone()[0]
    assert cached == 2
    # the author is the role the server authenticated, not the client's login
    rc, out, _ = run("bob", "history", SEED_NAME, "--format", "json")
    authors = [v["author"] for v in json.loads(out)["versions"]]
    assert authors == ["ada (role econ_owner)", "bob", "bob", "bob", "bob"]

    # what econ only inserts, a member may not change; nor rename a scenario, nor delete
    for statement in (
        "UPDATE versions SET toml_text = replace(toml_text, 'gpu_count = 72', 'gpu_count = 7')",
        "UPDATE versions SET author = 'carol'",
        "UPDATE results SET summary_json = '{}'",
        "UPDATE tags SET tag = 'board-2027'",
        "UPDATE scenarios SET name = 'other'",
        "UPDATE econ_library_revision SET version_num = '0001'",
        "INSERT INTO econ_library_revision VALUES ('9999')",
        "DELETE FROM versions",
        "DELETE FROM results",
        "DELETE FROM scenarios",
    ):
        _member_may_not(socket, database, statement)

    # a result the owner changes by hand: the server records the owner as its writer (bob's
    # rows are the owner's now); bob recomputes it (and may not replace it: he caches his own) ...
    faked = '{"gpu_count": 1}'
    _execute(as_role("econ_owner"), "UPDATE results SET summary_json = :faked", faked=faked)
    rc, out, err = run("bob", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json")
    assert rc == 0 and json.loads(out)["metrics"]["gpu_count"]["change"] == 72, err
    read = "SELECT written_by, summary_json FROM results ORDER BY written_by, summary_json"
    left = _execute(as_role("econ_owner"), read)
    assert [(who, text == faked) for who, text in left] == [
        ("bob", False),
        ("bob", False),
        ("econ_owner", True),
        ("econ_owner", True),
    ]
    # ... and the owner's own diff replaces its rows with the summaries recomputed
    rc, out, err = run("econ_owner", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2")
    assert rc == 0, err
    left = _execute(as_role("econ_owner"), read)
    assert all(json.loads(text)["gpu_count"] in (72, 144) for _, text in left)


def _team(postgres_url, postgres_socket, capsys):
    """A library of the seed saved by econ_owner, the documented grants given: (the URL of a
    role, econ run as a role)."""
    import psycopg

    database, socket = _database(postgres_url), postgres_socket
    _create_roles(socket, database)

    def as_role(role: str) -> str:
        return f"postgresql+psycopg://{role}@/{database}?host={socket}"

    def run(role: str, *argv):
        return econ(capsys, "library", *argv, "--library", as_role(role))

    assert run("econ_owner", "save", SEED)[0] == 0
    with psycopg.connect(host=str(socket), user="econ_owner", dbname=database) as conn:
        for statement in _owner_grants():
            conn.execute(statement)
    return as_role, run


def test_a_member_cannot_plant_a_result_that_others_are_served(
    postgres_url, postgres_socket, capsys, monkeypatch
):
    """Found by review: a member may INSERT into results and summary_sha256 is a public formula,
    so bob inserted a well-formed summary (NPV 99,999,999) for a key nobody had cached, and every
    reader's `diff` and the app's Library page showed it. The server now records who wrote a row
    (results.written_by, set by a trigger to current_user: migration 0004), and a reader trusts
    only the rows of the library's owner and its own."""
    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    as_role, run = _team(postgres_url, postgres_socket, capsys)
    with open_library(as_role("bob"), create=False) as library:
        scenario = library.load(Ref(SEED_NAME, 1))
        true_npv = project_summary(scenario)["npv_usd"]
    # the key any member can compute (docs/library.md, "What it keeps")
    catalogs = json.dumps(catalog_versions(), sort_keys=True).encode()
    key = {
        "scenario_sha256": scenario_sha256(scenario),
        "econ_version": store.engine_version(),
        "catalog_sha256": hashlib.sha256(catalogs).hexdigest(),
    }
    forged = {**project_summary(scenario), "npv_usd": 99_999_999.0}
    text = json.dumps(forged, sort_keys=True)
    plant = (
        "INSERT INTO results (scenario_sha256, econ_version, catalog_sha256, summary_json, "
        "summary_sha256, created_utc) VALUES (:scenario_sha256, :econ_version, :catalog_sha256, "
        ":text, :check, now())"
    )
    _execute(as_role("bob"), plant, **key, text=text, check=store.summary_sha256(key, text))

    def npv(role: str) -> float:
        rc, out, err = run(role, "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1", "--format", "json")
        assert rc == 0, err
        return json.loads(out)["metrics"]["npv_usd"]["new"]

    assert npv("carol") == npv("econ_owner") == true_npv  # a reader, the owner
    # the server writes down who inserted a row, whatever the statement says
    impersonate = plant.replace("created_utc)", "created_utc, written_by)").replace(
        "now())", "now(), 'econ_owner')"
    )
    other = {**key, "scenario_sha256": "0" * 64}
    _execute(
        as_role("bob"), impersonate, **other, text=text, check=store.summary_sha256(other, text)
    )
    rows = _execute(
        as_role("econ_owner"), "SELECT scenario_sha256, written_by FROM results ORDER BY 1, 2"
    )
    assert rows == sorted(
        [("0" * 64, "bob"), (key["scenario_sha256"], "bob"), (key["scenario_sha256"], "econ_owner")]
    )
    assert npv("carol") == true_npv
    # (bob is served his own row: he fooled only himself)
    assert npv("bob") == 99_999_999.0


def test_a_reader_never_asks_to_write_a_result(postgres_url, postgres_socket, capsys):
    """Found by review: a role granted SELECT alone made every diff try to INSERT into results;
    PostgreSQL logged "permission denied for table results" and the statement each time."""
    as_role, run = _team(postgres_url, postgres_socket, capsys)
    log = postgres_socket / "log"
    before = log.read_text(errors="replace").count("permission denied for table results")
    rc, out, err = run("carol", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1", "--format", "json")
    assert rc == 0 and json.loads(out)["metrics"], err
    assert _execute(as_role("econ_owner"), "SELECT count(*) FROM results") == [(0,)]
    after = log.read_text(errors="replace").count("permission denied for table results")
    assert after == before


def test_an_upgrade_keeps_the_grants_on_results(postgres_url, postgres_socket, capsys):
    """Revision 0004 alters the results table (it does not make it anew): a member's grants on
    it still hold after the owner upgrades, and the member's results are cached as its own."""
    from alembic import command

    from econ.library.store import _alembic_config

    database, socket = _database(postgres_url), postgres_socket
    _create_roles(socket, database)
    owner = f"postgresql+psycopg://econ_owner@/{database}?host={socket}"
    _old_library(owner)
    engine = sa.create_engine(owner)
    with engine.begin() as conn:
        config = _alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
    engine.dispose()
    import psycopg

    with psycopg.connect(host=str(socket), user="econ_owner", dbname=database) as conn:
        for statement in _owner_grants():
            conn.execute(statement)
    rc, out, _ = econ(capsys, "library", "upgrade", "--library", owner)
    assert rc == 0 and "from revision 0003 to 0004" in out
    bob = owner.replace("econ_owner@", "bob@")
    rc, _, err = econ(
        capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1", "--library", bob
    )
    assert rc == 0, err
    assert _execute(owner, "SELECT written_by FROM results") == [("bob",)]


# --- 1b. a version's text changed behind econ's back is refused at every read -------------------


def test_a_text_changed_in_the_database_is_refused_wherever_it_is_read(
    library_url, tmp_path, capsys
):
    """Found by review: `UPDATE versions SET toml_text = replace(...)` silently changed what
    show, project library:NAME@V and diff read; text_sha256 was never checked."""
    original = SEED.read_text()
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    _execute(
        library_url,
        "UPDATE versions SET toml_text = replace(toml_text, 'gpu_count = 72', :new) "
        "WHERE version = 1",
        new=TAMPERED,
    )
    changed = original.replace("gpu_count = 72", TAMPERED, 1)
    expected = (
        f"'{SEED_NAME}' version 1: the stored text does not match its SHA-256 (text_sha256 "
        f"{_sha256(original)[:16]}..., the text hashes to {_sha256(changed)[:16]}...): the "
        "library was changed outside econ; nothing was read from that version"
    )
    out_folder = tmp_path / "out"
    for argv in (
        ["library", "show", f"{SEED_NAME}@1"],
        ["library", "show", f"{SEED_NAME}@1", "--format", "json"],
        ["project", f"library:{SEED_NAME}@1"],
        ["library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2"],
        ["library", "restore", f"{SEED_NAME}@1"],
        ["library", "migrate", f"{SEED_NAME}@1"],
        ["library", "tag", f"{SEED_NAME}@1", "board-2026q3"],
    ):
        rc, out, err = econ(capsys, *argv)
        assert rc == 3 and expected in err, (argv, err)
        assert "restore the library from a backup" in err and "Traceback" not in err
        assert TAMPERED not in out + err
    # export reads the newest version only: version 2 is intact; changed too, it is refused
    assert econ(capsys, "library", "export", out_folder)[0] == 0
    _execute(
        library_url,
        "UPDATE versions SET toml_text = toml_text || :more WHERE version = 2",
        more="\n# changed\n",
    )
    rc, _, err = econ(capsys, "library", "export", tmp_path / "other", "--force")
    assert rc == 3 and f"'{SEED_NAME}' version 2: the stored text does not match" in err
    assert not (tmp_path / "other").exists()
    # what reads no text still works, and nothing was saved by the refused restore
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert rc == 0 and [v["version"] for v in json.loads(out)["versions"]] == [1, 2]


# --- 1c. a cached result changed by hand is recomputed, not served ------------------------------


def test_a_cached_result_changed_by_hand_is_recomputed(library_url, tmp_path, capsys):
    """Found by review: `UPDATE results SET summary_json = ...` faked the metrics `library diff`
    served."""
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    old, new = f"{SEED_NAME}@1", f"{SEED_NAME}@2"
    assert _gpu_change(capsys, old, new) == 72
    rows = _execute(
        library_url,
        "SELECT r.scenario_sha256, econ_version, catalog_sha256, summary_json, summary_sha256, "
        "v.version FROM results r JOIN versions v ON v.scenario_sha256 = r.scenario_sha256 "
        "ORDER BY v.version",
    )
    assert [row[5] for row in rows] == [1, 2]
    for row in rows:  # the check: SHA-256 over the key and the summary, joined by NUL
        assert row[4] == _sha256("\0".join(row[:4]))
    first, second = rows
    # a summary changed by hand (its hash left as it was)
    faked = json.loads(second[3]) | {"gpu_count": 7200}
    _execute(
        library_url,
        "UPDATE results SET summary_json = :text WHERE scenario_sha256 = :key",
        text=json.dumps(faked, sort_keys=True),
        key=second[0],
    )
    assert _gpu_change(capsys, old, new) == 72
    # replaced by the recomputed summary (this user may UPDATE results)
    [(text,)] = _execute(
        library_url, "SELECT summary_json FROM results WHERE scenario_sha256 = :k", k=second[0]
    )
    assert text == second[3]
    # a row copied from another key, its hash with it: bound to its key, it fails the check
    _execute(
        library_url,
        "UPDATE results SET summary_json = :text, summary_sha256 = :check "
        "WHERE scenario_sha256 = :key",
        text=first[3],
        check=first[4],
        key=second[0],
    )
    assert _gpu_change(capsys, old, new) == 72


def test_an_upgrade_drops_the_results_cached_without_a_hash(library_url, capsys):
    """Revision 0003 adds results.summary_sha256; the rows cached before it have none and would
    never pass the check, so they are dropped (a cache: recomputed when next needed)."""
    from alembic import command

    from econ.library.store import _alembic_config

    _old_library(library_url)
    engine = sa.create_engine(library_url)
    with engine.begin() as conn:
        config = _alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, "0002")
        conn.execute(
            sa.text(
                "INSERT INTO results VALUES ('a', 'b', 'c', '{\"gpu_count\": 1}', "
                "'2025-01-02 03:04:05')"
            )
        )
    engine.dispose()
    rc, out, _ = econ(capsys, "library", "upgrade")
    assert rc == 0 and "from revision 0002 to 0004" in out
    assert _execute(library_url, "SELECT count(*) FROM results") == [(0,)]
    assert econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@1")[0] == 0
    assert _execute(library_url, "SELECT count(summary_sha256) FROM results") == [(1,)]


# --- 2. who saved it ----------------------------------------------------------------------------


def test_on_postgresql_the_author_is_the_connected_role(
    postgres_url, tmp_path, capsys, monkeypatch
):
    """Found by review: the author defaulted to the client machine's login name (everyone showed
    as `root` on the team server). The test server's libraries are opened as `postgres`."""
    monkeypatch.setenv("ECON_LIBRARY", postgres_url)
    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    monkeypatch.setattr("getpass.getuser", lambda: "root")
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    assert econ(capsys, "library", "save", SEED)[0] == 0
    assert econ(capsys, "library", "save", second, "--author", "ada")[0] == 0
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    assert econ(capsys, "library", "save", SEED)[0] == 0
    assert econ(capsys, "library", "save", SEED, "--author", "postgres")[0] == 0
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert [v["author"] for v in json.loads(out)["versions"]] == [
        "postgres",
        "ada (role postgres)",
        "bob (role postgres)",
        "postgres",
    ]
    assert econ(capsys, "library", "delete", SEED_NAME)[0] == 0
    assert _execute(postgres_url, "SELECT deleted_by FROM scenarios") == [("bob (role postgres)",)]
    # the name given and the role fit the column together: " (role postgres)" is 16 characters
    rc, _, err = econ(capsys, "library", "save", SEED, "--author", "a" * 185)
    assert rc == 3 and "expected a name of at most 184 characters" in err
    assert econ(capsys, "library", "save", SEED, "--author", "a" * 184)[0] == 0


def test_on_sqlite_the_author_is_the_name_given_else_the_login(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    monkeypatch.setattr("getpass.getuser", lambda: "ada-login")
    assert econ(capsys, "library", "save", SEED)[0] == 0
    assert econ(capsys, "library", "save", SEED, "--author", "a" * 200)[0] == 0
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    assert econ(capsys, "library", "save", SEED)[0] == 0
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert [v["author"] for v in json.loads(out)["versions"]] == ["ada-login", "a" * 200, "bob"]


# --- 3. a read-only folder or disk is named as such ---------------------------------------------


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a chmod 0555 folder anyway")
def test_a_new_library_in_a_read_only_folder_names_the_folder(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        rc, _, err = econ(capsys, "library", "save", SEED, "--library", f"sqlite:///{folder}/x.db")
    finally:
        folder.chmod(0o755)
    assert rc == 3 and f"folder {folder} cannot be written" in err and "Traceback" not in err


def _unwritable(monkeypatch, *paths: Path) -> None:
    """os.access says `paths` may not be written, as it does for a non-root user of a chmod
    0555 folder or 0444 file (root is let write anyway)."""
    real = os.access
    denied = {str(p) for p in paths}

    def access(path, mode, *args, **kwargs):
        if str(path) in denied and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_a_new_file_in_a_folder_econ_may_not_write(tmp_path, capsys, monkeypatch):
    """Found by review: `save --library sqlite:////ro/none.db` into a read-only folder said
    "cannot open the file (unable to open database file); expected a readable, writable file"."""
    folder = tmp_path / "ro"
    folder.mkdir()
    library = folder / "none.db"
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):  # as SQLite fails there for a user other than root
        if str(database) == str(library):
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", connect)  # (what SQLAlchemy calls)
    _unwritable(monkeypatch, folder)
    rc, _, err = econ(capsys, "library", "save", SEED, "--library", f"sqlite:///{library}")
    assert rc == 3 and "Traceback" not in err
    assert (
        f"saving failed: folder {folder} cannot be written, so the library file cannot be "
        "created in it (unable to open database file); nothing was changed" in err
    )
    assert "expected a readable, writable file" not in err and not library.exists()


def _query_only(dbapi_connection, _record):  # SQLite's "attempt to write a readonly database"
    dbapi_connection.execute("PRAGMA query_only = ON")


@pytest.mark.parametrize("cause", ["disk", "folder", "file"])
def test_a_library_that_cannot_be_written_names_what_is_read_only(
    tmp_path, capsys, monkeypatch, cause
):
    """Found by review: a library file on a read-only mount was called "the file is read-only"
    though its mode let it be written."""
    library = tmp_path / "lib" / "library.db"
    library.parent.mkdir()
    url = f"sqlite:///{library}"
    assert econ(capsys, "library", "save", SEED, "--library", url)[0] == 0
    if cause == "disk":
        real = os.statvfs

        def statvfs(path):
            if str(path) in (str(library), str(library.parent)):
                return types.SimpleNamespace(f_flag=real(path).f_flag | os.ST_RDONLY)
            return real(path)

        monkeypatch.setattr(os, "statvfs", statvfs)
    else:
        _unwritable(monkeypatch, library.parent if cause == "folder" else library)
    sa.event.listen(sa.engine.Engine, "connect", _query_only)
    try:
        rc, _, err = econ(capsys, "library", "save", SEED, "--library", url)
    finally:
        sa.event.remove(sa.engine.Engine, "connect", _query_only)
    assert rc == 3 and "Traceback" not in err
    expected = {
        "disk": f"saving failed: the disk holding folder {library.parent} is read-only (mounted "
        "read-only: attempt to write a readonly database); nothing was changed",
        "folder": f"saving failed: folder {library.parent} cannot be written (SQLite writes its "
        "journal beside the library file",
        "file": "saving failed: the file is read-only; nothing was changed",
    }[cause]
    assert expected in err
    assert ("the file is read-only" in err) == (cause == "file")


# --- 4. export's file names fit 255 bytes -------------------------------------------------------


def test_export_names_longer_than_255_bytes(library_url, tmp_path, capsys):
    """Found by review: a name of 200 Han characters (600 bytes of UTF-8) failed the whole export
    with "the file name is too long"."""
    names = ["名" * 200, "名" * 199 + "人", "é" * 130, "plan-" + "x" * 195]
    for i, name in enumerate(names):
        assert econ(capsys, "library", "save", _named(tmp_path, name, f"{i}.toml"))[0] == 0
    folder = tmp_path / "out"
    rc, out, err = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0, err
    files = sorted(p.name for p in folder.iterdir())
    digests = [hashlib.sha256(n.encode()).hexdigest()[:8] for n in names]
    # 250 bytes for the stem, less '-' and 8 hex digits: 80 Han characters (240 bytes), 120 é
    assert files == sorted(
        [
            f"{'名' * 80}-{digests[0]}.toml",
            f"{'名' * 80}-{digests[1]}.toml",
            f"{'é' * 120}-{digests[2]}.toml",
            f"plan-{'x' * 195}.toml",  # 205 bytes: kept as it is
        ]
    )
    assert all(len(f.encode()) <= 255 for f in files)
    # the same files on the next export, and they import into another library as they were
    rc, out, _ = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and json.loads(out)["written"] == []
    with open_library(f"sqlite:///{tmp_path / 'other.db'}") as other:
        other.import_folder(folder)
        assert sorted(i.name for i in other.list()) == sorted(names)
