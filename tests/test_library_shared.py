"""The library shared by a team: imports racing a save, lock waits, roles and their grants
(docs/library.md, "A team on PostgreSQL"), read-only users, passwords kept out of every message,
and library URLs that would lose work. PostgreSQL cases run on the server that the postgres_socket
fixture (tests/conftest.py) starts; the others on SQLite files too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import ROOT
from test_library import HALL, SEED, SEED_NAME, _old_library, econ, edited, saved_author

from econ.library import LibraryError, hide_credentials, open_library
from econ.library.store import _prepare, read_scenario_text
from econ.scenario import ScenarioError

DOCS = ROOT / "docs" / "library.md"
SECRET = "S3cretPW-ada"


def _superuser(postgres_socket, database: str = "postgres"):
    import psycopg

    return psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname=database, autocommit=True
    )


def _database(url: str) -> str:
    return sa.engine.make_url(url).database


def _tables(postgres_socket, database: str) -> list[str]:
    """The tables of a database's schema public."""
    with _superuser(postgres_socket, database) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        return [r[0] for r in rows]


def _wait_for_lock_waiter(postgres_socket, database: str, timeout_s: float = 60) -> None:
    """Return once a session of `database` waits for a lock (fail after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    with _superuser(postgres_socket) as conn:
        while time.monotonic() < deadline:
            waiting = conn.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = %s AND wait_event_type = 'Lock'",
                (database,),
            ).fetchone()[0]
            if waiting:
                return
            time.sleep(0.05)
    pytest.fail(f"no session of {database} waited for a lock within {timeout_s} s")


# --- 1. an import racing a save of the same name (PostgreSQL) -----------------------------------


@pytest.mark.parametrize("held_text", ["differing", "equal"])
def test_an_import_waits_for_a_save_under_way_and_compares_with_it(
    postgres_url, postgres_socket, tmp_path, monkeypatch, held_text
):
    """A save of a new name is held open (uncommitted) while `econ library import` of a folder
    holding that name starts in another process: the import waits for the save's lock, then skips
    an equal text and refuses a differing one. Before, it saw no row, reported "added" and stored
    its text as version 2 over the other's version 1 without --update."""
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    monkeypatch.setenv("ECON_LIBRARY", postgres_url)
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / f"{SEED_NAME}.toml").write_bytes(SEED.read_bytes())
    other = SEED if held_text == "equal" else edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    held, release, errors = threading.Event(), threading.Event(), []

    def other_save():  # another user's save, holding its transaction open
        try:
            with open_library(postgres_url) as library:
                library.upgrade()  # (the library exists: its first write is not rehearsed)
                item = _prepare(read_scenario_text(other), str(other))

                def run(conn):
                    library._insert(conn, item, "bob's save", [], "bob")
                    held.set()
                    assert release.wait(60)

                library._transaction(run, "saving")
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)
            held.set()

    saver = threading.Thread(target=other_save)
    saver.start()
    importer = None
    try:
        assert held.wait(60) and not errors, errors
        importer = subprocess.Popen(
            [sys.executable, "-m", "econ", "library", "import", str(folder), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for_lock_waiter(postgres_socket, _database(postgres_url))
    finally:
        release.set()
        saver.join(60)
    assert not errors, errors
    out, err = importer.communicate(timeout=120)
    with open_library(postgres_url) as library:
        history = library.history(SEED_NAME)
    assert [(v.version, v.author) for v in history] == [(1, "bob")], (out, err)
    if held_text == "equal":
        assert importer.returncode == 0, err
        assert json.loads(out) == {
            "added": [],
            "updated": [],
            "unchanged": [str(folder / f"{SEED_NAME}.toml")],
            "restored": [],
        }
    else:
        assert importer.returncode == 3 and "Traceback" not in err
        assert "differ from every stored version" in err and "--update" in err


# --- 10. a save blocked by another's row lock gives up (PostgreSQL) -----------------------------


def test_a_save_blocked_by_a_held_row_lock_stops_waiting(postgres_url, postgres_socket):
    with open_library(postgres_url) as library:
        library.save_file(SEED)
    held, release = threading.Event(), threading.Event()

    def hold():  # a session that locked the scenario's row and stays in its transaction
        with _superuser(postgres_socket, _database(postgres_url)) as conn:
            with conn.transaction():
                conn.execute("SELECT id FROM scenarios WHERE name = %s FOR UPDATE", (SEED_NAME,))
                held.set()
                release.wait(20)  # long enough that a save that waits on succeeds after it

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        started = time.monotonic()
        with open_library(postgres_url, timeout_s=0.5) as library:
            with pytest.raises(LibraryError) as caught:
                library.save_file(SEED)
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join(30)
    message = str(caught.value)
    assert "saving failed: another save holds the scenario" in message
    assert "did not finish within 0.5 s" in message and "nothing was changed" in message
    assert waited < 15
    with open_library(postgres_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1]


def test_a_save_whose_commit_loses_the_connection_does_not_say_nothing_changed(
    postgres_url, monkeypatch
):
    """The server commits a save, then the connection drops before its reply reaches econ: the
    version is stored, and econ said 'nothing was changed' (a user trusting it saves again). The
    message now says the write may have been made and how to tell."""
    import psycopg

    with open_library(postgres_url) as library:
        library.save_file(SEED)
    commit = psycopg.Connection.commit

    def commit_then_drop(self):  # the COMMIT reached the server; its reply never came back
        commit(self)
        self.pgconn.finish()
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(psycopg.Connection, "commit", commit_then_drop)
    with open_library(postgres_url) as library:
        with pytest.raises(LibraryError) as caught:
            library.save_file(SEED, message="second")
    monkeypatch.undo()
    message = str(caught.value)
    assert "saving failed" in message and "nothing was changed" not in message
    assert "the connection was lost while the server was committing the write" in message
    assert "`econ library history NAME`" in message
    with open_library(postgres_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1, 2]


# --- 9 and 5. roles: the documented grants, their messages, a reader's diff (PostgreSQL) -------


def _team_sql(block: int) -> list[str]:
    """The statements of a SQL block of docs/library.md's "A team on PostgreSQL", one per line:
    0 the superuser's, 1 the owner's grants, 2 the owner's tightening of older grants."""
    section = DOCS.read_text().split("## A team on PostgreSQL", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    assert len(blocks) == 3, "expected the superuser's block, the owner's, the tightening"
    return [line for line in blocks[block].splitlines() if line.strip()]


def _owner_grants() -> list[str]:
    """The statements docs/library.md tells the library's owner to run, one per line."""
    return _team_sql(1)


def _create_roles(postgres_socket, database: str) -> None:
    """The roles of the docs' first block (without passwords: the test server trusts its socket),
    the database handed to econ_owner as `CREATE DATABASE econ OWNER econ_owner` does."""
    with _superuser(postgres_socket) as conn:
        existing = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles")}
        for role, options in (
            ("econ_owner", "LOGIN"),
            ("econ_team", "NOLOGIN"),
            ("econ_readers", "NOLOGIN"),
            ("bob", "LOGIN"),
            ("carol", "LOGIN"),
        ):
            if role not in existing:
                conn.execute(f"CREATE ROLE {role} {options}")
        conn.execute("GRANT econ_team TO bob")
        conn.execute("GRANT econ_readers TO carol")
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO econ_owner')


def test_a_team_with_the_documented_grants(postgres_url, postgres_socket, tmp_path, capsys):
    database = _database(postgres_url)
    _create_roles(postgres_socket, database)
    socket = postgres_socket

    def as_role(role: str) -> str:
        return f"postgresql+psycopg://{role}@/{database}?host={socket}"

    def run(role: str, *argv):
        return econ(capsys, *argv, "--library", as_role(role))

    # a member reads the empty database as an empty library, creating nothing
    rc, _, err = run("bob", "library", "list")
    assert rc == 0 and "its database holds no econ library yet" in err
    assert _tables(socket, database) == []
    with _superuser(socket) as conn:
        version = int(conn.execute("SHOW server_version_num").fetchone()[0])
    if version >= 150000:  # a member saving first into the empty database may not create tables
        rc, _, err = run("bob", "library", "save", SEED, "--author", "bob")
        assert rc == 3 and "permission denied for schema public" in err
        assert "the database's owner" in err and "GRANT CREATE ON SCHEMA public TO bob" in err
        assert 'docs/library.md, "A team on PostgreSQL"' in err and "Traceback" not in err

    # the owner creates the tables, as the docs say
    rc, out, _ = run("econ_owner", "library", "upgrade")
    assert rc == 0 and "created library" in out and "at revision 0004" in out
    assert run("econ_owner", "library", "save", SEED, "--author", "ada")[0] == 0
    # before the grants: PostgreSQL's reason and what to ask the owner for
    rc, _, err = run("bob", "library", "list")
    assert rc == 3 and "permission denied for table" in err
    assert "ask them for `GRANT SELECT ON ALL TABLES IN SCHEMA public TO bob; " in err
    assert "GRANT UPDATE (deleted_utc, deleted_by) ON scenarios TO bob; " in err
    assert "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO bob`" in err
    assert 'docs/library.md, "A team on PostgreSQL"' in err

    import psycopg

    with psycopg.connect(host=str(socket), user="econ_owner", dbname=database) as conn:
        for statement in _owner_grants():
            conn.execute(statement)

    # a member saves (a new version of an existing name, and a new name), deletes, restores
    second = edited(tmp_path, "gpu_count = 72", "gpu_count = 144")
    rc, out, err = run("bob", "library", "save", second, "--author", "bob", "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 2, err
    assert run("bob", "library", "save", HALL, "--author", "bob")[0] == 0
    assert run("bob", "library", "delete", SEED_NAME, "--author", "bob")[0] == 0
    assert run("bob", "library", "restore", f"{SEED_NAME}@2", "--author", "bob")[0] == 0
    folder = tmp_path / "team"
    folder.mkdir()
    assert run("bob", "library", "export", folder)[0] == 0
    assert run("bob", "library", "import", folder, "--author", "bob")[0] == 0

    # a reader lists, shows and diffs (the summaries it may not cache are recomputed) ...
    rc, out, _ = run("carol", "library", "list", "--format", "json")
    assert rc == 0 and len(json.loads(out)["scenarios"]) == 2
    rc, out, err = run(
        "carol", "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json"
    )
    assert rc == 0, err
    assert json.loads(out)["metrics"]["gpu_count"]["change"] == 72
    # ... and cannot save
    rc, _, err = run("carol", "library", "save", SEED, "--author", "carol")
    assert rc == 3 and "permission denied for table" in err and "TO carol" in err


def test_only_the_owner_upgrades_an_old_library(postgres_url, postgres_socket, capsys):
    _old_library(postgres_url)  # tables created by the superuser, at revision 0001
    database = _database(postgres_url)
    _create_roles(postgres_socket, database)
    with _superuser(postgres_socket, database) as conn:
        conn.execute("GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO econ_team")
    url = f"postgresql+psycopg://bob@/{database}?host={postgres_socket}"
    # bob's read writes nothing: it says who upgrades the library
    rc, _, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 3 and "is at library revision 0001, older than the revision 0004" in err
    assert "(on PostgreSQL, the role that owns them): `econ library upgrade --library '" in err
    # bob's save would upgrade it, which only the owner may
    rc, _, err = econ(capsys, "library", "save", SEED, "--library", url)
    assert rc == 3 and "opening failed: must be owner of table" in err
    assert "the library's owner (the role that created its tables) to open it first" in err
    owner = f"postgresql+psycopg://econ_owner@/{database}?host={postgres_socket}"
    with _superuser(postgres_socket, database) as conn:
        for table in _tables(postgres_socket, database):
            conn.execute(f"ALTER TABLE {table} OWNER TO econ_owner")
    assert econ(capsys, "library", "upgrade", "--library", owner)[0] == 0
    rc, out, _ = econ(capsys, "library", "list", "--library", url)
    assert rc == 0 and SEED_NAME in out


@pytest.mark.parametrize("who", ["postgres", "reader"])
def test_reads_of_an_empty_database_write_nothing(
    postgres_url, postgres_socket, tmp_path, capsys, who
):
    """As a missing SQLite file does, an empty database reads as an empty library: no table is
    created (not even by the superuser), and a role that may only read (no CREATE on schema
    public) is not refused. An old library is not upgraded by a read."""
    database = _database(postgres_url)
    with _superuser(postgres_socket) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchone():
            conn.execute("CREATE ROLE reader LOGIN")
        conn.execute(f'GRANT CONNECT ON DATABASE "{database}" TO reader')
    with _superuser(postgres_socket, database) as conn:
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")  # (PostgreSQL < 15 grants it)
        conn.execute("GRANT USAGE ON SCHEMA public TO reader")
    url = f"postgresql+psycopg://{who}@/{database}?host={postgres_socket}"
    for argv in (
        ["list"],
        ["list", "--format", "json"],
        ["history", SEED_NAME],
        ["show", SEED_NAME],
        ["diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2"],
        ["export", tmp_path],
        ["restore", f"{SEED_NAME}@1"],
        ["delete", SEED_NAME],
        ["migrate", f"{SEED_NAME}@1"],
    ):
        rc, out, err = econ(capsys, "library", *argv, "--library", url)
        assert rc in (0, 3) and "Traceback" not in err and "permission denied" not in err, err
        assert rc == 0 or "its database holds no econ library yet" in err, (argv, err)
        assert _tables(postgres_socket, database) == [], argv
    rc, _, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 0 and "no scenarios: its database holds no econ library yet" in err
    rc, _, err = econ(capsys, "--library", url, "project", f"library:{SEED_NAME}")
    assert rc == 3 and "its database holds no econ library yet" in err
    assert list(tmp_path.iterdir()) == [] and _tables(postgres_socket, database) == []
    # an old library, which the reader may read: a read says who upgrades it, and changes nothing
    _old_library(postgres_url)
    with _superuser(postgres_socket, database) as conn:
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    rc, _, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 3 and "at library revision 0001, older than the revision 0004" in err
    assert "`econ library upgrade --library " in err and "permission denied" not in err
    with _superuser(postgres_socket, database) as conn:
        assert conn.execute("SELECT version_num FROM econ_library_revision").fetchone()[0] == "0001"
    assert "results" not in _tables(postgres_socket, database)


# --- 5. a read-only SQLite file ------------------------------------------------------------------


def test_diff_works_on_a_library_that_may_not_be_written(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path / 'library.db'}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))

    def read_only(dbapi_connection, _record):  # as a read-only file is, for root too
        dbapi_connection.execute("PRAGMA query_only = ON")

    sa.event.listen(sa.engine.Engine, "connect", read_only)
    try:
        rc, _, err = econ(capsys, "library", "save", SEED)
        assert rc == 3 and "read-only" in err  # the library is read-only indeed
        rc, out, err = econ(
            capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2", "--format", "json"
        )
    finally:
        sa.event.remove(sa.engine.Engine, "connect", read_only)
    assert rc == 0 and err == ""
    assert json.loads(out)["metrics"]["gpu_count"]["change"] == 72
    with sa.create_engine(url).connect() as conn:
        assert conn.scalar(sa.text("SELECT count(*) FROM results")) == 0


# --- 6. list and history read no texts ------------------------------------------------------------


def test_list_and_history_never_read_the_texts(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED, "--tag", "q3")
    econ(capsys, "library", "save", edited(tmp_path, "gpu_count = 72", "gpu_count = 144"))
    econ(capsys, "library", "save", HALL)
    statements: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        statements.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", record)
    try:
        rc, listed, _ = econ(capsys, "library", "list", "--format", "json")
        rc_tag, tagged, _ = econ(capsys, "library", "list", "--tag", "q3", "--format", "json")
        rc_history, history, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", record)
    assert rc == rc_tag == rc_history == 0
    assert statements and not [s for s in statements if "toml_text" in s]
    names = [(s["name"], s["version"], s["tags"]) for s in json.loads(listed)["scenarios"]]
    hall_name = next(n for n, _, _ in names if n != SEED_NAME)
    assert names == sorted([(SEED_NAME, 2, []), (hall_name, 1, [])])
    assert [(s["name"], s["version"]) for s in json.loads(tagged)["scenarios"]] == [(SEED_NAME, 1)]
    assert [v["version"] for v in json.loads(history)["versions"]] == [1, 2]


# --- 7. a name holding '@' -------------------------------------------------------------------------


def test_a_name_holding_the_version_separator_is_refused(library_url, tmp_path, capsys):
    at = tmp_path / "at.toml"
    at.write_text(SEED.read_text().replace(f'name = "{SEED_NAME}"', 'name = "team/ada@q3"', 1))
    assert 'name = "team/ada@q3"' in at.read_text()
    rc, _, err = econ(capsys, "library", "save", at)
    assert rc == 3 and f"{at}: name = 'team/ada@q3': expected a name without '@'" in err
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "a.toml").write_bytes(SEED.read_bytes())
    (folder / "at.toml").write_bytes(at.read_bytes())
    rc, _, err = econ(capsys, "library", "import", folder)
    assert rc == 3 and "expected a name without '@'" in err
    assert json.loads(econ(capsys, "library", "list", "--format", "json")[1])["scenarios"] == []


# --- 10. a library missing a table -----------------------------------------------------------------


def test_a_library_missing_a_table_says_what_was_expected(library_url, capsys):
    econ(capsys, "library", "save", SEED)
    engine = sa.create_engine(library_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE tags"))
    engine.dispose()
    rc, _, err = econ(capsys, "library", "list")
    assert rc == 3 and "table tags missing, though econ_library_revision says" in err
    assert "Expected every table of an econ library (results, scenarios, tags, versions)" in err


# --- 2. passwords ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql+psycopg://ada:pw@h:5432x/db", "postgresql+psycopg://ada:***@h:5432x/db"),
        ("postgresql://ada:my@pw/x@127.0.0.1/db", "postgresql://ada:***@127.0.0.1/db"),
        (
            "postgresql://ada@h/db?password=pw&sslmode=x",
            "postgresql://ada@h/db?password=***&sslmode=x",
        ),
        ("--library postgresql://a:pw@h/db project", "--library postgresql://a:***@h/db project"),
        ("postgresql+psycopg://ada@/db?host=/run/pg", "postgresql+psycopg://ada@/db?host=/run/pg"),
        ("sqlite:////home/ada/lib.db", "sqlite:////home/ada/lib.db"),
        # found by review: the colon after a URL ending in its password was taken as the password's
        (
            "library pg://h/db?password=p:w: opening failed",
            "library pg://h/db?password=***: opening failed",
        ),
        ("= 'pg://h/db?password=pw': not a URL", "= 'pg://h/db?password=***': not a URL"),
        ("(pg://h/db?password=pw).", "(pg://h/db?password=***)."),
        ("pg://h/db?password=pw", "pg://h/db?password=***"),
    ],
)
def test_hide_credentials(text, shown):
    assert hide_credentials(text) == shown


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+psycopg://ada:{SECRET}@db.example:5432x/econ",  # not parsed: quoted before
        f"postgresql+psycopg://ada:my@{SECRET}@127.0.0.1:1/econ",  # an '@' in the password
        "postgresql+psycopg://ada@/nodb?password=" + SECRET + "&host={socket}",
        "postgresql+psycopg://ada@/nodb?password=" + SECRET + "&sslmode=bogus&host={socket}",
        f"postgres://ada:{SECRET}@db.example/econ",
    ],
)
@pytest.mark.parametrize("how", ["--library", "ECON_LIBRARY"])
def test_no_message_shows_a_password(url, how, tmp_path, capsys, monkeypatch):
    url = url.format(socket=tmp_path)
    if how == "--library":
        rc, _, err = econ(capsys, "library", "list", "--library", url)
    else:
        monkeypatch.setenv("ECON_LIBRARY", url)
        rc, _, err = econ(capsys, "project", f"library:{SEED_NAME}")
    assert rc == 3 and err.startswith("error: ") and "Traceback" not in err
    assert SECRET not in err and "S3cret" not in err and "***" in err


def test_a_library_option_after_the_command_is_echoed_without_its_password(capsys):
    """--library after the command is taken (it was a usage error that echoed the URL with its
    password hidden); a library that cannot be reached is named without the password still."""
    url = f"postgresql+psycopg://ada:{SECRET}@127.0.0.1:5499/econ"
    rc, _, err = econ(capsys, "project", f"library:{SEED_NAME}", "--library", url)
    assert rc == 3 and SECRET not in err and "127.0.0.1:5499" in err, err
    with pytest.raises(SystemExit) as caught:  # a usage error elsewhere hides it too
        econ(capsys, "project", f"library:{SEED_NAME}", "--library", url, "--bogus")
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "unrecognized arguments: --bogus" in err
    assert SECRET not in err


def test_an_at_in_the_password_is_refused_whole(capsys):
    url = f"postgresql+psycopg://ada:my@{SECRET}@127.0.0.1:1/econ"
    rc, _, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 3 and "more than one '@' before the host" in err and "%40" in err


# --- 3, 4, 10. URLs that would lose work or that name the wrong scheme ----------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite://team2.db", "not a SQLite library URL (a host after sqlite://); expected "),
        ("sqlite://", "an in-memory SQLite database, whose saves are lost when the command ends"),
        ("sqlite:///:memory:", "an in-memory SQLite database"),
        ("sqlite://?timeout=5", "an in-memory SQLite database"),
        ("postgres://ada@db.example/econ", "write postgresql+psycopg:// where postgres:// is"),
    ],
)
def test_library_urls_that_would_lose_work_exit_3(url, expected, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    for argv in (
        ["library", "save", SEED, "--library", url],
        ["--library", url, "project", f"library:{SEED_NAME}"],
    ):
        rc, out, err = econ(capsys, *argv)
        assert rc == 3 and expected in err and "Traceback" not in err, err
        assert "saved" not in out
    monkeypatch.setenv("ECON_LIBRARY", url)
    rc, _, err = econ(capsys, "project", f"library:{SEED_NAME}")
    assert rc == 3 and f"ECON_LIBRARY = {url}" in err and expected in err
    assert list(Path(tmp_path).iterdir()) == []  # no team2.db, nothing else


# --- 8. an edit of a stale copy (--base) -----------------------------------------------------------


def test_a_save_based_on_an_older_version_is_refused(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED, "--author", "ada")
    bob = edited(tmp_path, "gpu_count = 72", "gpu_count = 144", name="bob.toml")
    rc, out, err = econ(capsys, "library", "save", bob, "--author", "bob", "--base", "1")
    assert rc == 0 and "version 2" in out, err
    # ada edited her copy of version 1: saved over bob's version 2, his change would be lost
    ada = edited(tmp_path, "share = 0.7", "share = 0.75", name="ada.toml")
    rc, _, err = econ(capsys, "library", "save", ada, "--base", "1")
    bob_saved = saved_author("bob", library_url)
    assert rc == 3 and f"{ada}: --base 1: '{SEED_NAME}' is now at version 2" in err
    assert f"(saved by '{bob_saved}' at " in err
    assert "expected --base 2" in err and f"econ library diff {SEED_NAME}@1 {SEED_NAME}@2" in err
    for base, expected in (("3", "has no version 3"), ("0", "expected a version number")):
        rc, _, err = econ(capsys, "library", "save", ada, "--base", base)
        assert rc == 3 and expected in err
    rc, _, err = econ(capsys, "library", "save", HALL, "--base", "1")
    assert rc == 3 and "has no version in library" in err
    rc, out, _ = econ(capsys, "library", "history", SEED_NAME, "--format", "json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1, 2]
    # once merged, with the newest as its base, the save goes through
    assert econ(capsys, "library", "save", ada, "--base", "2")[0] == 0


def test_a_save_of_a_new_scenario_is_refused_once_a_colleague_holds_the_name(
    library_url, tmp_path, capsys
):
    # --new: the file was written as a new scenario; whoever saves the name first keeps it
    rc, out, err = econ(capsys, "library", "save", SEED, "--new", "--author", "bob")
    assert rc == 0 and "version 1" in out, err
    ada = edited(tmp_path, "share = 0.7", "share = 0.75", name="ada.toml")
    rc, _, err = econ(capsys, "library", "save", ada, "--new")
    assert rc == 3 and f"{ada}: --new: '{SEED_NAME}' is already in library" in err
    bob_saved = saved_author("bob", library_url)
    assert f"at version 1 (saved by '{bob_saved}' at " in err
    assert f"econ library show {SEED_NAME}" in err
    assert "nothing was saved" in err and "Traceback" not in err
    rc, _, err = econ(capsys, "library", "save", ada, "--new", "--base", "1")
    assert rc == 3 and "expected one of them" in err
    with open_library(library_url) as library:
        assert [v.author for v in library.history(SEED_NAME)] == [bob_saved]
        library.delete(SEED_NAME, author="bob")
        # a deleted name is free again: --new brings its history back, as a plain save does
        info = library.save_file(ada, new=True, author="ada")
        assert (info.version, info.parent_version) == (2, 1)


@pytest.mark.parametrize("name", ["-rf", "our scenario"])
def test_a_suggested_command_works_when_pasted(name, tmp_path, capsys, monkeypatch):
    # Found by review: the hint `econ library restore -rf@1` fails as printed (an option), and a
    # name with a space would split in two.
    import shlex

    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    path = edited(tmp_path, 'name = "deepseek-r1-gb200-nvl72"', f'name = "{name}"')
    assert econ(capsys, "library", "save", path)[0] == 0
    rc, out, _ = econ(capsys, "library", "delete", "--", name)
    assert rc == 0
    hint = re.search(r"`(econ library restore [^`]*)` brings it back", out).group(1)
    argv = shlex.split(hint)
    assert argv[:3] == ["econ", "library", "restore"]
    assert econ(capsys, *argv[1:])[0] == 0
    assert econ(capsys, "library", "show", "--", f"{name}@2")[0] == 0  # restored as version 2


def _pasted(capsys, message: str, verb: str) -> tuple[list[str], tuple[int, str, str]]:
    """The `econ library VERB ...` a message suggests, split as a shell splits it, and what
    running it gives."""
    import shlex

    hint = re.search(rf"`(econ library {verb} [^`]*)`", message)
    assert hint, message
    argv = shlex.split(hint.group(1))
    return argv, econ(capsys, *argv[1:])


def test_suggested_commands_name_the_library_given_by_url(
    library_url, tmp_path, capsys, monkeypatch
):
    """Found by review: after `save --base 1 --library URL` the hint was `econ library diff
    NAME@1 NAME@2`, which pasted reads ECON_LIBRARY's library (or the default), not URL's."""
    url = library_url
    decoy = f"sqlite:///{tmp_path / 'decoy.db'}"  # another library, holding the same name
    monkeypatch.setenv("ECON_LIBRARY", decoy)
    assert econ(capsys, "library", "save", HALL)[0] == 0
    ada = edited(tmp_path, "gpu_count = 72", "gpu_count = 144", name="ada.toml")
    for path in (SEED, ada):
        assert econ(capsys, "library", "save", path, "--library", url)[0] == 0

    # a save over a stale base suggests the diff: pasted, it reads URL's library
    rc, _, err = econ(capsys, "library", "save", ada, "--base", "1", "--library", url)
    assert rc == 3
    argv, (rc, out, _) = _pasted(capsys, err, "diff")
    assert argv[3:5] == ["--library", url] and rc == 0 and "fleet.gpu_count" in out
    # --new on a held name suggests show; a missing version, history; a missing name, list
    rc, _, err = econ(capsys, "library", "save", ada, "--new", "--library", url)
    argv, (rc, out, _) = _pasted(capsys, err, "show")
    assert rc == 0 and "gpu_count = 144" in out
    rc, _, err = econ(capsys, "library", "show", f"{SEED_NAME}@9", "--library", url)
    argv, (rc, out, _) = _pasted(capsys, err, "history")
    assert rc == 0 and "2" in out.splitlines()[-1]
    rc, _, err = econ(capsys, "library", "history", "no-such", "--library", url)
    argv, (rc, out, _) = _pasted(capsys, err, "list")
    assert rc == 0 and SEED_NAME in out
    # a name starting with '-': the options come before `--`
    dash = edited(tmp_path, f'name = "{SEED_NAME}"', 'name = "-rf"', name="dash.toml")
    assert econ(capsys, "library", "save", dash, "--library", url)[0] == 0
    rc, out, _ = econ(capsys, "library", "delete", "--library", url, "--", "-rf")
    argv, (rc, _, err) = _pasted(capsys, out, "restore")
    assert argv[3:6] == ["--library", url, "--"] and rc == 0, err
    # a deleted scenario named by `econ --library URL project library:NAME`
    assert econ(capsys, "library", "delete", SEED_NAME, "--library", url)[0] == 0
    rc, _, err = econ(capsys, "--library", url, "project", f"library:{SEED_NAME}")
    assert rc == 3
    argv, (rc, _, err) = _pasted(capsys, err, "restore")
    assert rc == 0, err
    with open_library(decoy) as library:  # nothing pasted reached the other library
        assert [len(library.history(i.name)) for i in library.list()] == [1]


def test_a_suggested_command_withholds_a_password(postgres_url, tmp_path, capsys, monkeypatch):
    """A URL holding a password is not printed: the command says --library URL, and why."""
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    url = postgres_url.replace("postgres@", f"postgres:{SECRET}@")  # (trust: any password)
    ada = edited(tmp_path, "gpu_count = 72", "gpu_count = 144", name="ada.toml")
    for path in (SEED, ada):
        assert econ(capsys, "library", "save", path, "--library", url)[0] == 0
    rc, _, err = econ(capsys, "library", "save", ada, "--base", "1", "--library", url)
    assert rc == 3 and SECRET not in err
    assert f"`econ library diff --library URL {SEED_NAME}@1 {SEED_NAME}@2`" in err
    assert "(URL: the --library URL you gave, not shown as it holds a password)" in err
    # a note naming two commands says so once (found by review: twice in one message)
    rc, _, err = econ(capsys, "library", "save", ada, "--library", url, "--author", "bob")
    assert rc == 0 and err.startswith("note: ") and SECRET not in err
    assert f"`econ library restore --library URL {SEED_NAME}@2` brings it back" in err
    assert err.count("(URL: the --library URL you gave, not shown as it holds a password)") == 1


def test_concurrent_saves_of_look_alike_new_names_store_one(library_url, tmp_path, monkeypatch):
    """Found by review: three `econ library save` at once of plan-N, PLAN-N and pIan-N into one
    PostgreSQL library stored two look-alikes in 3 of 5 tries: each read the stored names before
    any had added its own. Here every save is held, once it has read the names, until all three
    have (or 3 s have passed: a save holding the names' lock makes the others wait for it).
    (PLAN-N beside pIan-N is allowed: neither one skeleton nor one name but for case.)"""
    from econ.library.store import Library

    names = ["plan-N", "pIan-N", "p1an-N"]  # (each pair looks alike: one skeleton, plan-N)
    files = [
        edited(tmp_path, f'name = "{SEED_NAME}"', f'name = "{n}"', name=f"p{i}.toml")
        for i, n in enumerate(names)
    ]
    barrier = threading.Barrier(len(names))
    check = Library._refuse_lookalike

    def held(self, item, looks, added=None):
        try:
            barrier.wait(timeout=3)
        except threading.BrokenBarrierError:
            pass
        return check(self, item, looks, added)

    # an existing library: the first writes to a new one queue for the lock creating its tables
    with open_library(library_url) as library:
        library.upgrade()
    monkeypatch.setattr(Library, "_refuse_lookalike", held)
    outcomes: list = []

    def save(path):
        try:
            with open_library(library_url) as library:
                outcomes.append(library.save_file(path).name)
        except Exception as exc:  # (checked below, not lost in the thread)
            outcomes.append(exc)

    threads = [threading.Thread(target=save, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    saved = [o for o in outcomes if isinstance(o, str)]
    refused = [o for o in outcomes if not isinstance(o, str)]
    assert len(saved) == 1 and len(refused) == 2, outcomes
    assert all(isinstance(e, ScenarioError) for e in refused), refused
    assert all("already in library" in str(e) for e in refused), refused
    with open_library(library_url) as library:
        assert [i.name for i in library.list()] == saved


@pytest.mark.parametrize(
    "url", ["postgresql+psycopg://ada:pw@db.example:5432", "postgresql://ada@db.example/"]
)
def test_a_url_naming_no_database_is_refused(url, capsys, monkeypatch):
    """A PostgreSQL URL without its database opened the one named like the user: a superuser's
    first save made the library in the maintenance database 'postgres' (where teammates never
    look), and another user was told the server 'holds no database of the name the library URL
    gives' though it gave none. It is refused before any connection; PGDATABASE or ?dbname=
    still name one."""
    monkeypatch.delenv("PGDATABASE", raising=False)
    rc, out, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 3 and out == "" and "pw" not in err
    assert err.startswith("error: --library = postgresql") and err.count("\n") == 1
    assert "names no database; expected postgresql+psycopg://USER@HOST/DATABASE" in err
    with pytest.raises(LibraryError, match="names no database"):
        open_library(url)
    # a database named otherwise: the host is tried (and is not known)
    with pytest.raises(LibraryError, match="the host name is not known"):
        open_library("postgresql+psycopg://ada@db.example/?dbname=econ")
    monkeypatch.setenv("PGDATABASE", "econ")
    with pytest.raises(LibraryError, match="the host name is not known"):
        open_library(url)
