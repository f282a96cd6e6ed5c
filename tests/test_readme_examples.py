"""The README's command-line examples work when pasted, in the order the README gives them.

Each line of the README's `sh` blocks (less `make`, `source` and comments) runs from a fresh
folder that sees the checkout's `models/` and `tests/` as the README's reader does from the
checkout. A plain `econ ...` line runs in this process through `econ.cli.main` (a new interpreter
per line would cost seconds each); a line with shell syntax (a redirection, `&&`, `sed`) runs in
bash with the virtual environment's `econ` first on PATH. Later lines use what earlier ones wrote
(`curve.csv`, the library's versions), as they do for a reader.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, econ_in_process

SHELL_OPERATOR = re.compile(r"[|&;<>()]+")


def readme_commands() -> list[str]:
    """The command lines of README.md's `sh` blocks, without comments, `make` and `source`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#") and line.split()[0] not in ("make", "source"):
                lines.append(line)
    return lines


def test_readme_has_the_examples_this_test_runs():
    commands = readme_commands()
    assert len(commands) >= 30, commands
    assert any(c.startswith("econ project ") for c in commands)
    assert any(" > " in c for c in commands)  # a shell line too: both paths below are exercised


@pytest.fixture
def reader_folder(tmp_path, monkeypatch):
    """A folder where models/ and tests/ are the checkout's, a private library, no colour."""
    for name in ("models", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    return tmp_path


def words_of(line: str) -> list[str]:
    """The line's words as the shell splits them, operators (`>`, `&&`) as words of their own."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def run_line(line: str, capsys) -> tuple[int, str]:
    """Run one README line as the reader would; the exit code and what it printed."""
    words = words_of(line)
    if words[0] != "econ" or any(SHELL_OPERATOR.fullmatch(w) for w in words):
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        done = subprocess.run(
            ["bash", "-c", line], capture_output=True, text=True, env=dict(os.environ, PATH=path)
        )
        return done.returncode, done.stdout + done.stderr
    args = []
    for word in words[1:]:  # the shell's glob expansion
        args.extend(sorted(glob.glob(word)) if any(c in word for c in "*?[") else [word])
    done = econ_in_process(capsys, *args)
    return done.returncode, done.stdout + done.stderr


def test_every_readme_example_works_when_pasted(reader_folder, capsys):
    failed = []
    for line in readme_commands():
        code, printed = run_line(line, capsys)
        if code != 0 or "Traceback" in printed:
            failed.append(f"{line}\n  exit {code}: {printed[-600:]}")
    assert not failed, "README examples that fail:\n" + "\n".join(failed)
    # The files the README says the examples write are there, in the reader's folder.
    for name in ("h200.xlsx", "curve.csv", "my_index.csv", "memo.pdf", "scenario.schema.json"):
        assert (reader_folder / name).is_file(), name
