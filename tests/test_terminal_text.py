"""Text from files someone else wrote never reaches a terminal raw, and no message grows with the
input (econ.text: printable, clipped, listed; the review of terminal escape injection).

A shared scenario, benchmark file, market index, library entry or file name may hold an escape
sequence (ESC [2K erases the line, a CR goes back to its start, OSC 0 sets the window title, the
one-byte CSI U+009B does what ESC [ does) or a bidirectional override (U+202E shows what follows
backwards). Each test gives one such input to the command that read it raw before, and checks
that the output holds the escaped form, never the character; then the path rule of memo cases and
--allow-paths, and messages that stayed short however long the input.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.cli import main
from econ.text import TERMINAL_CONTROLS, clipped, listed, printable
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
CURVE = ROOT / "tests" / "data" / "throughput" / "generic_curve_hand_example.csv"
VLLM = ROOT / "tests" / "data" / "throughput" / "vllm_bench_serve_sweep.jsonl"
RAW = ("\x1b", "\r", "\x07", "\x9b", "\u202e")
"""Characters that must never reach the terminal from a file's text."""


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process: a CompletedProcess-like result with the exit code."""

    def call(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["econ", *args], code, out, err)

    return call


@pytest.fixture
def library(tmp_path, monkeypatch):
    """A library of its own (a SQLite file), as ECON_LIBRARY."""
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    monkeypatch.setenv("ECON_AUTHOR", "ada")


def no_raw(text: str) -> bool:
    return not any(char in text for char in RAW)


def seed_with(tmp_path, old: str, new: str, name: str = "s.toml"):
    text = SEED.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# --- the helper -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Kb", "a\\x1b[2Kb"),
        ("\r/tmp/x.toml: ok", "\\r/tmp/x.toml: ok"),
        ("\x1b]0;T\x07", "\\x1b]0;T\\x07"),
        ("csi\x9b2J del\x7f nul\x00", "csi\\x9b2J del\\x7f nul\\x00"),
        ("safe-\u202egnp.exe \u2066x\u2069", "safe-\\u202egnp.exe \\u2066x\\u2069"),
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),
        ("plain é 集 ≤ 1 \\x1b", "plain é 集 ≤ 1 \\x1b"),
    ],
)
def test_printable_escapes_what_acts_on_a_terminal(text, shown):
    assert printable(text) == shown


def test_printable_one_line_escapes_every_unprintable_character():
    assert printable("a\nb\tc\u200bd\u2028e\xa0f g", line=True) == (
        "a\\nb\\tc\\u200bd\\u2028e\\xa0f g"
    )


@given(st.text())
def test_printable_is_idempotent_and_leaves_no_control(text):
    once, line = printable(text), printable(text, line=True)
    assert printable(once) == once and printable(line, line=True) == line
    assert not TERMINAL_CONTROLS.search(once) and line.isprintable()


def test_clipped_and_listed_keep_messages_short():
    assert clipped("a" * 100_000) == "a" * 80 + "... (100,000 characters)"
    assert clipped("x\x1by") == "x\\x1by"
    names = [f"c{i}" for i in range(1_000_000)]
    assert listed(names) == "c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 ... and 999,990 more"
    assert listed(["a\x1b", "b"]) == "a\\x1b, b"
