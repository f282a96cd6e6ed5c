"""The scenario library as a review on a real PostgreSQL 15 server found it (review 25): a file
saved with CRLF line ends shown by `econ library show` and saved back; `econ app --library URL`;
a URL typed where a name or file belongs; a read behind a table lock; the app's Author box on
PostgreSQL; the words of a few refusals. PostgreSQL cases run on the server that the
postgres_socket fixture (tests/conftest.py) starts."""

from __future__ import annotations

import hashlib
import json
import tomllib

import pytest
from conftest import ROOT
from test_library import econ

from econ.library import LibraryError, Ref, open_library

LLAMA = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
LLAMA_NAME = "llama2-70b-h200"


# --- 1. show of a file saved with CRLF line ends, saved back ---------------------------------------


def test_a_crlf_file_shown_saves_back_as_the_same_text(library_url, tmp_path, capsys):
    """The review: `show` wrote each CR as the two characters `\\r`, so that its output no
    longer read as TOML ("malformed TOML ... line 3, column 19") and could not be saved back."""
    crlf = tmp_path / "crlf.toml"
    crlf.write_bytes(LLAMA.read_bytes().replace(b"\n", b"\r\n"))
    rc, out, err = econ(capsys, "library", "save", crlf, "--format", "json")
    assert rc == 0, err
    stored_sha256 = json.loads(out)["text_sha256"]
    assert stored_sha256 == hashlib.sha256(crlf.read_bytes()).hexdigest()  # kept as saved

    rc, out, err = econ(capsys, "library", "show", LLAMA_NAME)
    assert rc == 0, err
    assert "\\r" not in out
    shown = tmp_path / "shown.toml"
    shown.write_bytes(out.encode())  # as `> shown.toml` writes it
    first, rest = out.split("\n", 1)
    assert first == f"# econ library: {LLAMA_NAME}@1"
    assert rest.encode() == crlf.read_bytes()  # every line end as stored: CR LF
    assert tomllib.loads(out)["name"] == LLAMA_NAME

    rc, out, err = econ(capsys, "library", "save", shown, "--format", "json")
    assert rc == 0, err
    saved = json.loads(out)
    assert (saved["version"], saved["parent_version"]) == (2, 1)  # its first line read as --base
    assert saved["text_sha256"] == stored_sha256  # the same text, byte for byte
    with open_library(library_url) as library:
        assert library.get(Ref(LLAMA_NAME, 2)).text == crlf.read_bytes().decode()


def test_show_still_escapes_a_carriage_return_that_ends_no_line(tmp_path, capsys, monkeypatch):
    """A CR alone (which TOML allows nowhere, in a version stored before texts were checked)
    could overwrite what a terminal shows: it stays an escape."""
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    text = LLAMA.read_text().replace("\n", "\r\n", 2)
    with open_library() as library:
        library.save_text(text)
        # written behind econ's back, as an older econ could have stored it
        library._engine.dispose()
    import sqlite3

    with sqlite3.connect(tmp_path / "library.db") as conn:
        bad = text.replace("\r\n", "\rX\r\n", 1)
        conn.execute(
            "UPDATE versions SET toml_text = ?, text_sha256 = ?",
            (bad, hashlib.sha256(bad.encode()).hexdigest()),
        )
    rc, out, err = econ(capsys, "library", "show", LLAMA_NAME)
    assert rc == 0, err
    assert "\\rX\r\n" in out and "\rX" not in out


# --- 2. econ app --library URL ---------------------------------------------------------------------


class Executed(Exception):
    """What `econ app` ran instead of replacing the test process with Streamlit."""


@pytest.mark.parametrize("where", ["before", "after"])
def test_econ_app_hands_its_library_to_the_app_out_of_sight(
    where, postgres_url, capsys, monkeypatch
):
    """The review: `econ --library URL app` and `econ app --library URL` opened the default
    library, the URL silently ignored. The app gets it as ECON_LIBRARY, in its environment:
    never on its command line, which `ps` shows every user of the machine (a password)."""
    from streamlit.testing.v1 import AppTest

    from econ import cli

    secret = "Pw-review25"
    url = postgres_url.replace("postgres@", f"postgres:{secret}@")  # (the test server trusts)
    with open_library(url) as library:
        library.save_file(LLAMA)
    seen = {}

    def execv(path, argv):
        seen.update(argv=list(argv), environ=dict(cli.os.environ))
        raise Executed

    monkeypatch.setattr(cli.os, "execv", execv)
    monkeypatch.setattr(cli.os, "chdir", lambda folder: None)
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{ROOT / 'no-such-folder' / 'library.db'}")
    argv = ["--library", url, "app"] if where == "before" else ["app", "--library", url]
    with pytest.raises(Executed):
        cli.main(argv)
    assert seen["environ"]["ECON_LIBRARY"] == url
    assert not any(secret in part for part in seen["argv"])

    # the app started with that environment reads that library
    monkeypatch.setenv("ECON_LIBRARY", seen["environ"]["ECON_LIBRARY"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("econ/ui/pages/library.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "a PostgreSQL database" in " ".join(c.value for c in at.caption)
    frames = [f.value for f in at.dataframe]
    assert any(LLAMA_NAME in set(f.get("name", [])) for f in frames), frames


# --- 3. a library URL typed where a name or a file belongs -----------------------------------------

TYPED_URL = "postgresql+psycopg://bob:bobpw-25@127.0.0.1:55432/econ"


@pytest.mark.parametrize(
    "argv",
    [
        ["library", "history", TYPED_URL],
        ["library", "show", TYPED_URL],
        ["library", "show", f"{TYPED_URL}@1"],
        ["library", "restore", TYPED_URL],
        ["library", "restore", f"{TYPED_URL}@1"],
        ["library", "diff", TYPED_URL, "x@1"],
        ["library", "tag", f"{TYPED_URL}@1", "t"],
        ["library", "delete", TYPED_URL],
        ["library", "save", TYPED_URL],
        ["project", TYPED_URL],
        ["validate", TYPED_URL],
        ["project", f"library:{TYPED_URL}"],
    ],
)
def test_a_url_typed_as_a_name_or_file_is_quoted_without_its_password(argv, library_url, capsys):
    """The review: each of these printed the URL with its password (a file path writes its
    '//' as '/', which the password's pattern did not read as a URL)."""
    with open_library() as library:
        library.save_file(LLAMA)  # (a library that exists: "no scenario" named in full)
    rc, out, err = econ(capsys, *argv)
    assert rc == 3 and err.startswith("error: ") and "Traceback" not in err, err
    assert "bobpw" not in out + err and "bob:***@127.0.0.1" in err


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql+psycopg:/bob:pw@h/db: file not found", "postgresql+psycopg:/bob:***@h/db: "),
        ("'pg://bob:pw@h/db': version 'h/db'", "'pg://bob:***@h/db': version 'h/db'"),
        # no URL: left as it is
        ("a.toml: name = 'x@1': expected", "a.toml: name = 'x@1': expected"),
        ("note: /srv/a:b@c.toml: read", "note: /srv/a:b@c.toml: read"),
    ],
)
def test_hide_credentials_reads_a_url_quoted_as_a_path(text, shown):
    from econ.library import hide_credentials

    assert hide_credentials(text).startswith(shown)


# --- 4. a read behind a table lock waits as long as a save, then says why ---------------------------


def test_a_read_behind_a_table_lock_stops_waiting(postgres_url, postgres_socket, capsys):
    """The review: `library list` waited 75 s behind a session's LOCK TABLE (until it ended)
    where a save stops after 30 s with a clear message."""
    import threading

    import psycopg
    import sqlalchemy as sa

    with open_library(postgres_url) as library:
        library.save_file(LLAMA)
    database = sa.engine.make_url(postgres_url).database
    held, release = threading.Event(), threading.Event()

    def hold():  # a session holding a table lock in an open transaction
        with psycopg.connect(
            host=str(postgres_socket), user="postgres", dbname=database, autocommit=True
        ) as conn:
            with conn.transaction():
                conn.execute("LOCK TABLE versions")  # (ACCESS EXCLUSIVE: reads wait for it)
                held.set()
                release.wait(20)  # (the old code waited for it, then read)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        with open_library(postgres_url, timeout_s=0.5, create=False) as library:
            with pytest.raises(LibraryError) as caught:
                library.list()
    finally:
        release.set()
        holder.join(60)
    message = str(caught.value)
    assert "reading failed: another session holds a lock on the library's tables" in message
    assert "did not finish within 0.5 s" in message and "LOCK TABLE" in message
    with open_library(postgres_url, create=False) as library:  # and once it is released
        assert [i.name for i in library.list()] == [LLAMA_NAME]


# --- 5. the app's Author box names who a save records, on PostgreSQL the role -----------------------


def test_the_author_placeholder_is_what_a_save_records_on_postgresql(
    postgres_url, postgres_socket, monkeypatch
):
    """The review: on PostgreSQL the placeholder showed the server's login account (root)
    while a save was recorded as the database role (bob)."""
    import psycopg
    import sqlalchemy as sa
    from test_app_library import SEED_NAME, by_label, library_page, save

    from econ.library.store import login_name

    role = "r25_bob"
    database = sa.engine.make_url(postgres_url).database
    with psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO {role}')  # (it creates the tables)
    url = f"postgresql+psycopg://{role}@/{database}?host={postgres_socket}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    assert login_name() != role

    at = library_page()
    assert by_label(at.text_input, "Author").proto.placeholder == role
    save(at, "first")
    monkeypatch.setenv("ECON_AUTHOR", "ada")  # a name given: stored with the role beside it
    at.run()
    assert by_label(at.text_input, "Author").proto.placeholder == f"ada (role {role})"
    save(at, "second")
    with open_library(url) as library:
        authors = [v.author for v in library.history(SEED_NAME)]
    assert authors == [role, f"ada (role {role})"]  # what the placeholders said


# --- 6. the words of a few refusals -----------------------------------------------------------------


def test_a_missing_password_points_to_where_a_password_is_given(
    postgres_socket, tmp_path, capsys, monkeypatch
):
    """The review: libpq's "fe_sendauth: no password supplied" was "cannot reach or use the
    database server ... Expected a running PostgreSQL server that accepts this user"."""
    from test_library import PASSWORD_ROLE, password_url

    from econ.library.store import hide_location

    password_url(postgres_socket, "x")  # (the role, asked for its password by the server)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))
    url = f"postgresql+psycopg://{PASSWORD_ROLE}@/postgres?host={postgres_socket}"
    rc, _, err = econ(capsys, "library", "list", "--library", url)
    assert rc == 3 and "Traceback" not in err
    assert (
        "opening failed: the database server refused the login (it asks for a password, and "
        "none was given); nothing was changed. Expected the role's password: in the library URL"
    ) in err
    assert "in PGPASSWORD, or in the .pgpass file" in err
    assert "cannot reach or use" not in err
    # the app shows it as it is (no path or URL left once the library is named)
    assert hide_location(err.removeprefix("error: ").strip(), url) is not None


def test_a_sqlite_file_holding_only_a_view_is_not_made_a_library(tmp_path, capsys):
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE VIEW sales AS SELECT 1 AS amount")
    for argv in (["list"], ["save", LLAMA]):
        rc, _, err = econ(capsys, "library", *argv, "--library", f"sqlite:///{path}")
        assert rc == 3 and "is a database but not an econ library (it has view sales)" in err
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert names == ["sales"]


@pytest.mark.parametrize(
    ("statements", "held"),
    [
        (["CREATE VIEW sales AS SELECT 1 AS amount"], "view sales"),
        (
            ["CREATE SCHEMA billing", "CREATE TABLE billing.orders (id int)"],
            "table billing.orders",
        ),
        (
            ["CREATE TABLE invoices (id int)", "CREATE VIEW v AS SELECT 1"],
            "tables invoices, view v",
        ),
    ],
)
def test_a_database_holding_views_or_other_schemas_is_not_made_a_library(
    statements, held, postgres_url, postgres_socket, capsys
):
    """The review: only the tables of schema public were looked at, so econ added its tables
    beside a database's views and other schemas' tables."""
    import psycopg
    import sqlalchemy as sa

    database = sa.engine.make_url(postgres_url).database
    with psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname=database, autocommit=True
    ) as conn:
        for statement in statements:
            conn.execute(statement)
    for argv in (["list"], ["save", LLAMA]):
        rc, _, err = econ(capsys, "library", *argv, "--library", postgres_url)
        assert rc == 3 and f"is a database but not an econ library (it has {held})" in err, err
    with psycopg.connect(host=str(postgres_socket), user="postgres", dbname=database) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename = 'econ_library_revision'"
        ).fetchone()[0]
    assert tables == 0  # nothing created


def test_an_extensions_views_are_not_the_databases_own(postgres_url, postgres_socket, capsys):
    """pg_stat_statements puts two views in schema public: a database with only an extension's
    objects is still empty to econ."""
    import psycopg
    import sqlalchemy as sa

    database = sa.engine.make_url(postgres_url).database
    with psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname=database, autocommit=True
    ) as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'"
        ).fetchone():
            pytest.skip("pg_stat_statements is not installed with this PostgreSQL")
        conn.execute("CREATE EXTENSION pg_stat_statements")
    rc, _, err = econ(capsys, "library", "save", LLAMA, "--library", postgres_url)
    assert rc == 0, err


def test_an_unknown_revision_is_not_called_a_newer_econs(library_url, capsys):
    """The review: a revision econ never wrote ('zzzz') was "written by a newer econ"."""
    import sqlalchemy as sa

    assert econ(capsys, "library", "save", LLAMA)[0] == 0
    engine = sa.create_engine(library_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE econ_library_revision SET version_num = 'zzzz'"))
    engine.dispose()
    for argv in (["list"], ["save", LLAMA]):
        rc, _, err = econ(capsys, "library", *argv)
        assert rc == 3 and "written by a newer econ" not in err, err
        assert "econ_library_revision holds 'zzzz', which is not a library revision econ " in err
        assert "knows 0001 to 0004" in err and "restore the library from a backup" in err


def test_a_members_save_on_an_older_library_names_the_owners_upgrade(
    postgres_url, postgres_socket, capsys
):
    """The review: a member's save on a library whose revision row lags its tables (here set
    back to 0003 by hand) asked for GRANTs the member already had: the save upgrades the
    library first, which only the owner of its tables may."""
    import psycopg
    import sqlalchemy as sa
    from test_library_shared import _create_roles, _owner_grants

    database = sa.engine.make_url(postgres_url).database
    _create_roles(postgres_socket, database)

    def as_role(role: str) -> str:
        return f"postgresql+psycopg://{role}@/{database}?host={postgres_socket}"

    assert econ(capsys, "library", "save", LLAMA, "--library", as_role("econ_owner"))[0] == 0
    with psycopg.connect(host=str(postgres_socket), user="econ_owner", dbname=database) as conn:
        for statement in _owner_grants():
            conn.execute(statement)
    assert econ(capsys, "library", "save", LLAMA, "--library", as_role("bob"))[0] == 0
    with psycopg.connect(host=str(postgres_socket), user="econ_owner", dbname=database) as conn:
        conn.execute("UPDATE econ_library_revision SET version_num = '0003'")

    rc, _, err = econ(capsys, "library", "save", LLAMA, "--library", as_role("bob"))
    assert rc == 3 and "Traceback" not in err
    assert "opening failed: permission denied for table results" in err
    assert "ask them for `GRANT" not in err
    assert (
        "Expected the library's owner (the role that created its tables) to open it first with "
        "this econ, which upgrades the tables (it is at library revision 0003, older than the "
        "revision 0004 econ "
    ) in err
    assert "`econ library upgrade --library " in err and "as the role that owns them" in err


def test_the_author_placeholder_of_a_library_that_cannot_be_opened(monkeypatch):
    """No library to ask (a server that does not answer): ECON_AUTHOR, as before, asked once."""
    import econ.library
    from econ.ui import saving

    monkeypatch.setenv("ECON_LIBRARY", "postgresql+psycopg://bob@127.0.0.1:1/econ")
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    opened, open_library = [], econ.library.open_library
    monkeypatch.setattr(
        econ.library, "open_library", lambda *a, **k: opened.append(a) or open_library(*a, **k)
    )
    saving._recorded_author.clear()
    assert saving.default_author() == "ada"
    assert saving.default_author() == "ada"
    assert len(opened) == 1  # the failure is kept: a later rerun does not wait for the server
