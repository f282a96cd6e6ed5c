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

from econ.library import Ref, open_library

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
