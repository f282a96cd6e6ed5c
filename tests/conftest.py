"""Shared fixtures: paths of the repository, its ready-made scenarios and ../shared data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a landing never fails on a new random draw);
# HYPOTHESIS_RANDOM=1 make test explores new ones, and a failure found so is kept as a test case.
settings.register_profile("econ", derandomize=os.environ.get("HYPOTHESIS_RANDOM") != "1")
settings.load_profile("econ")

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "models" / "scenarios").glob("*.toml"))
SHARED_DATA = ROOT.parent / "shared" / "data"
needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"reference data folder {SHARED_DATA} is absent"
)
"""Mark of a test that reads the real sample files of ../shared/data in place."""


def econ_in_process(capsys, *args) -> subprocess.CompletedProcess:
    """`econ ARGS...` run in this process through econ.cli.main (a subprocess per call costs
    seconds): a CompletedProcess with the exit code, argparse's usage errors and --help as their
    SystemExit code, and what the command printed after the call began."""
    from econ.cli import main

    capsys.readouterr()  # drop what earlier calls printed
    words = [str(a) for a in args]
    try:
        code = main(words)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["econ", *words], code, out, err)


@pytest.fixture(scope="session", autouse=True)
def _private_library(tmp_path_factory):
    """No test reads or writes the user's scenario library: ECON_LIBRARY points at a session
    file (tests of the library set their own)."""
    import os

    previous = os.environ.get("ECON_LIBRARY")
    os.environ["ECON_LIBRARY"] = f"sqlite:///{tmp_path_factory.mktemp('library') / 'library.db'}"
    yield
    if previous is None:
        os.environ.pop("ECON_LIBRARY", None)
    else:
        os.environ["ECON_LIBRARY"] = previous


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data folder {SHARED_DATA} is absent")
    return SHARED_DATA


# --- A real PostgreSQL server for the scenario library's tests ----------------------------------
# Debian's postgresql package (`make test` installs it): initdb in a temporary folder, the server
# on a Unix socket in that folder and no TCP at all, run as the `postgres` user when we are root,
# stopped when the session ends.

PG_BIN = max(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    default=Path("/usr/lib/postgresql/15/bin"),
)
"""Binaries of the newest Debian PostgreSQL installed (15 on Debian 12)."""


def _as_postgres(command: list[str]) -> list[str]:
    import os

    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres_socket():
    """Folder of a running PostgreSQL server's Unix socket (superuser `postgres`, trust auth)."""
    import os
    import shutil
    import subprocess
    import tempfile

    if not (PG_BIN / "initdb").exists():
        message = f"PostgreSQL binaries not found in {PG_BIN}; `make system-packages` installs them"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    # Not under pytest's tmp_path: its folders are private to root, and the server runs as postgres.
    base = Path(tempfile.mkdtemp(prefix="econ-pg-"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    data = base / "data"
    run = {"check": True, "capture_output": True, "text": True}
    subprocess.run(
        _as_postgres(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        **run,
    )
    options = (
        f"-k {base} -c listen_addresses='' -c fsync=off -c shared_buffers=16MB "
        "-c max_connections=40"
    )
    subprocess.run(
        _as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(base / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        **run,
    )
    try:
        yield base
    finally:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def library_url(request, tmp_path, monkeypatch):
    """A new library on a SQLite file, then on a new PostgreSQL database, as ECON_LIBRARY, with
    ECON_AUTHOR=ada."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'library.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    monkeypatch.setenv("ECON_LIBRARY", url)
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    return url


@pytest.fixture
def postgres_url(postgres_socket, request):
    """URL of a new, empty database on the session's PostgreSQL server."""
    import re

    import psycopg

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    with psycopg.connect(
        host=str(postgres_socket), user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@/{name}?host={postgres_socket}"
