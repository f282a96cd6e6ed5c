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

import functools
import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.text import (
    BIDI_CONTROLS,
    TERMINAL_CONTROLS,
    clipped,
    control_character,
    listed,
    printable,
)
from tests.conftest import ROOT, econ_in_process

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
CURVE = ROOT / "tests" / "data" / "throughput" / "generic_curve_hand_example.csv"
VLLM = ROOT / "tests" / "data" / "throughput" / "vllm_bench_serve_sweep.jsonl"
RAW = ("\x1b", "\r", "\x07", "\x9b", "\u202e")
"""Characters that must never reach the terminal from a file's text."""


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process (`tests.conftest.econ_in_process`)."""
    return functools.partial(econ_in_process, capsys)


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


# --- scenario files: keys, file names, names ------------------------------------------------------

FAKE = "\x1b[2K\r/tmp/x.toml: ok (fine, 72 months)\x1b[8m"
FAKE_TOML = "\\u001b[2K\\r/tmp/x.toml: ok (fine, 72 months)\\u001b[8m"
FAKE_SHOWN = "\\x1b[2K\\r/tmp/x.toml: ok (fine, 72 months)\\x1b[8m"


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("[fleet]\n", f'[fleet]\n"gpu{FAKE_TOML}" = 1\n', "fleet.gpu"),
        ("schema_version = 1\n", f'schema_version = 1\n"top{FAKE_TOML}" = 1\n', "top"),
        ("[sources]\n", f'[sources]\n"utilization.share{FAKE_TOML}" = "x"\n', "sources."),
    ],
)
def test_scenario_keys_are_escaped_in_errors(run, tmp_path, old, new, path):
    result = run("validate", seed_with(tmp_path, old, new))
    assert result.returncode == 3 and result.stderr.startswith("error: ")
    assert no_raw(result.stderr) and no_raw(result.stdout)
    assert f"{path}" in result.stderr and FAKE_SHOWN in result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_name_with_an_escape_is_escaped(run, tmp_path):
    bad = tmp_path / "a\x1b]0;PWNED\x07.toml"
    bad.write_text("not = [toml", encoding="utf-8")
    result = run("validate", bad)
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "a\\x1b]0;PWNED\\x07.toml" in result.stderr


def test_library_import_escapes_file_names(run, tmp_path, library):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a\x1b]0;PWNED\x07\x1b[2J.toml").write_text("not = [toml", encoding="utf-8")
    result = run("library", "import", folder)
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "a\\x1b]0;PWNED\\x07\\x1b[2J.toml" in result.stderr


def test_sources_naming_no_field_quotes_the_key_escaped_and_short(run, tmp_path):
    hidden = seed_with(tmp_path, "[sources]\n", '[sources]\n"utilization.\\u200bshare" = "x"\n')
    result = run("validate", hidden)
    assert result.returncode == 3 and "sources names 'utilization.\\u200bshare'" in result.stderr
    assert "\u200b" not in result.stderr
    long = seed_with(tmp_path, "[sources]\n", f'[sources]\n"{"k" * 100_000}" = "x"\n', "l.toml")
    result = run("validate", long)
    assert result.returncode == 3 and len(result.stderr) < 2_000
    assert "(100,002 characters)" in result.stderr  # (the key quoted: 100,000 and two quotes)


def test_a_name_with_a_bidirectional_override_is_refused(run, tmp_path):
    path = seed_with(tmp_path, 'name = "deepseek-r1-gb200-nvl72"', 'name = "safe-\\u202egnp.exe"')
    result = run("validate", path)
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "name = 'safe-\\u202egnp.exe': a bidirectional control character" in result.stderr
    result = run("project", SEED, "--set", 'name="a\u2066b"')
    assert result.returncode == 3 and "\u2066" not in result.stderr


# --- benchmark files ------------------------------------------------------------------------------

ESC_CURVE = (
    "concurrency,output_tokens_per_s,gpu_count,tpot_ms_p99,ttft_s_p99,workload,config,model,"
    "hardware\n"
    '1,90,2,12,0.1,"w\x1b[31mRED",c\x1b]0;T\x07,"m\rFAKE",h\x1b[2J\n'
    "4,300,2,15,0.15,w,c,m,h\n"
)


def test_throughput_import_escapes_the_file_text(run, tmp_path):
    path = tmp_path / "esccurve.csv"
    path.write_bytes(ESC_CURVE.encode())
    result = run("throughput", "import", path)
    assert result.returncode == 0 and no_raw(result.stdout) and no_raw(result.stderr)
    for shown in ("w\\x1b[31mRED", "c\\x1b]0;T\\x07", "m\\rFAKE", "h\\x1b[2J"):
        assert shown in result.stdout
    # the CSV written keeps the file's text: data, not a terminal
    out = tmp_path / "copy.csv"
    assert run("throughput", "import", path, "--out", out).returncode == 0
    assert "w\x1b[31mRED" in out.read_text(encoding="utf-8")


def test_throughput_point_escapes_the_group(run, tmp_path):
    path = tmp_path / "esccurve.csv"
    path.write_bytes(ESC_CURVE.encode())
    result = run("throughput", "point", path, "--ttft-p99-s", "2", "--workload", "w\x1b[31mRED")
    assert result.returncode == 0 and no_raw(result.stdout) and no_raw(result.stderr)
    assert "m\\rFAKE | h\\x1b[2J | w\\x1b[31mRED" in result.stdout


def test_vllm_model_id_is_escaped(run, tmp_path):
    lines = []
    for line in VLLM.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["model_id"] = "org/model\x1b]0;PWNED\x07\x1b[2J"
        lines.append(json.dumps(record))
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("throughput", "import", path)
    assert result.returncode == 0 and no_raw(result.stdout)
    assert "model: org/model\\x1b]0;PWNED\\x07\\x1b[2J" in result.stdout


def test_ignored_columns_of_a_scenario_curve_are_escaped(run, tmp_path):
    (tmp_path / "curve.csv").write_bytes(
        b"concurrency,output_tokens_per_s,gpu_count,tpot_ms_p99,ttft_s_p99,"
        b'"junk\x1b]0;PWNED\x07\x1b[2J"\n1,90,2,12,0.1,1\n4,300,2,15,0.15,1\n'
    )
    scenario = seed_with(
        tmp_path, "tokens_per_s_per_gpu = 4867.7", 'measured = { curve = "curve.csv" }'
    )
    for fmt in ("table", "csv"):
        result = run("project", scenario, "--format", fmt)
        assert result.returncode == 0 and no_raw(result.stdout) and no_raw(result.stderr)
        assert "columns ignored (not part of the curve format): junk\\x1b]0;PWNED" in (
            result.stdout + result.stderr
        )


def test_many_ignored_columns_make_one_short_warning(run, tmp_path):
    extra = ",".join(f"c{i}" for i in range(100_000))  # (a million made a warning of 8.9 MB)
    cells = ",".join("1" for _ in range(100_000))
    (tmp_path / "wide.csv").write_text(
        f"concurrency,output_tokens_per_s,gpu_count,{extra}\n1,90,2,{cells}\n4,300,2,{cells}\n",
        encoding="utf-8",
    )
    result = run("throughput", "import", tmp_path / "wide.csv")
    assert result.returncode == 0
    (warning,) = [w for w in result.stderr.splitlines() if "columns ignored" in w]
    assert len(warning) < 400 and warning.endswith("c8, c9 ... and 99,990 more")


# --- market index files ---------------------------------------------------------------------------

INDEX = "date,series,gpu,term_months,usd_per_gpu_hour,source\n{rows}"


@pytest.mark.parametrize(
    "source",
    ['"src\x1b[2K\rA/B  2025-02-01  0.0100  fake"', "pub\u202etxt", '"two\r\nlines"', "c1\x9b2J"],
)
def test_market_index_text_with_control_characters_is_refused(run, tmp_path, source):
    index = tmp_path / "esc.csv"
    rows = f"2025-01-01,A/B,H100,0,2.5,{source}\n2025-02-01,A/B,H100,0,2.4,ok\n"
    index.write_text(INDEX.format(rows=rows), encoding="utf-8")
    out = tmp_path / "copy.csv"
    for args in (
        ("market", "show", "A/B", "--index", index),
        ("market", "import", index, "--out", out),
    ):
        result = run(*args)
        assert result.returncode == 3 and no_raw(result.stderr) and not result.stdout
        assert f"error: {index}: line 2, column source: a " in result.stderr
        assert "character" in result.stderr and "fake" not in result.stderr
    assert not out.exists()


def test_resale_index_text_with_control_characters_is_refused(run, tmp_path):
    index = tmp_path / "resale.csv"
    index.write_text(
        "series,gpu,age_months,share,share_low,share_high,as_of,source\n"
        "A/B,H100,12,0.6,,,2025-01-01,x\x1b]0;T\x07\n",
        encoding="utf-8",
    )
    result = run("market", "resale", "A/B", "--index", index)
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "line 2, column source: a control character ('\\x1b')" in result.stderr


def test_market_table_escapes_its_cells(run, tmp_path):
    from econ.commands.market import _table

    assert _table(["source"], [["a\x1b[2Kb"]]).splitlines()[2] == "a\\x1b[2Kb"
    index = tmp_path / "lines.csv"  # a source may span lines; the table shows it on one
    rows = '2025-01-01,A/B,H100,0,2.5,"two\nlines"\n2025-02-01,A/B,H100,0,2.4,ok\n'
    index.write_text(INDEX.format(rows=rows), encoding="utf-8")
    result = run("market", "show", "A/B", "--index", index)
    assert result.returncode == 0 and "2.5000        two\\nlines" in result.stdout


# --- library texts, sweep columns, the app --------------------------------------------------------


def test_library_show_escapes_stored_comments(run, tmp_path, library):
    path = tmp_path / "c.toml"
    comment = "# a comment \x9b2J with \u202e in it\n"
    path.write_text(comment + SEED.read_text(encoding="utf-8"), encoding="utf-8")
    assert run("library", "save", path).returncode == 0
    result = run("library", "show", "deepseek-r1-gb200-nvl72")
    assert result.returncode == 0 and no_raw(result.stdout)
    # (after the line naming the version, which `econ library save` reads as its base)
    header = "# econ library: deepseek-r1-gb200-nvl72@1\n"
    assert result.stdout.startswith(header + "# a comment \\x9b2J with \\u202e in it\n")
    exact = json.loads(run("library", "show", "deepseek-r1-gb200-nvl72", "--format", "json").stdout)
    assert exact["toml"].startswith(comment)  # JSON gives the text as saved


def test_sweep_overrides_columns_are_escaped(run, tmp_path):
    table = tmp_path / "ov.csv"
    table.write_bytes(b"utilization.share\x1b]0;PWNED\x07\n0.5\n")
    result = run("sweep", SEED, "--overrides", table)
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "column 'utilization.share\\x1b]0;PWNED\\x07' is not a field" in result.stderr
    result = run("sweep", SEED, "--grid", "utilization.share\x1b[2J=0.5,0.6")
    assert result.returncode == 3 and no_raw(result.stderr)
    assert "grid path 'utilization.share\\x1b[2J' is not a field" in result.stderr
    # the message itself, as the Python API raises it (the command line's printer is a net)
    from econ.analysis.validation import BatchInputError, resolve_path

    with pytest.raises(BatchInputError) as refused:
        resolve_path("utilization.share\x1b[2J", "grid path")
    assert no_raw(str(refused.value)) and "'utilization.share\\x1b[2J'" in str(refused.value)


@pytest.mark.parametrize(
    ("name", "char", "position"),
    [
        ("x\x1b]0;PWNED\x07\x1b[31mRED\x1b[2K", "'\\x1b'", 2),  # the review's file
        ("a\nb", "'\\n'", 2),  # a quoted CSV cell across two lines
        ("safe-\u202egnp", "'\\u202e'", 6),
    ],
)
def test_sweep_overrides_names_with_controls_are_refused_as_scenario_names_are(
    run, tmp_path, name, char, position
):
    # the names went to the table on stdout raw: the terminal's title set, the text turned red
    table = tmp_path / "ov.csv"
    quoted = name.replace('"', '""')
    table.write_text(f'name,market.price_usd_per_mtok\nok,0.4\n"{quoted}",0.5\n', encoding="utf-8")
    result = run("sweep", SEED, "--overrides", table)
    assert result.returncode == 3 and no_raw(result.stdout + result.stderr)
    assert result.stdout == ""
    said = f"{table}: row 2: name = {name!r}: "
    assert said in result.stderr, result.stderr
    # in the words a scenario's own name is refused with (`--set name=...`)
    seed = run("project", SEED, "--set", f"name={json.dumps(name)}")
    assert seed.returncode == 3
    expected = seed.stderr.split(f" (over {SEED.name}): ", 1)[1]
    assert expected.startswith(f"a control character ({char}) at character {position}; ") or (
        expected.startswith(f"a bidirectional control character ({char}) at character {position}")
    )
    assert result.stderr.split(said, 1)[1] == expected


def test_app_literal_escapes_controls():
    from econ.ui.fmt import literal

    shown = literal("safe-\u202egnp.exe \x1b[31mred")
    assert no_raw(shown) and "u202egnp.exe" in shown and "x1b" in shown


# --- memo cases obey the path rule of --set -------------------------------------------------------


def test_memo_case_cannot_read_a_file_outside_the_scenario_folder(run, tmp_path):
    folder, outside = tmp_path / "scenarios", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    scenario = folder / "seed.toml"
    scenario.write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    secret = outside / "creds.csv"
    secret.write_text("concurrency,output_tokens_per_s\n1,zzz-secret-value\n", encoding="utf-8")
    for target in (secret, "../outside/creds.csv"):
        case = f'x=throughput.measured.curve="{target}"'
        result = run("memo", scenario, "--out", tmp_path / "m.html", "--case", case)
        assert result.returncode == 3, result.stderr
        assert "case x: throughput.measured.curve" in result.stderr
        assert "must stay inside" in result.stderr and "zzz-secret-value" not in result.stderr
        assert not (tmp_path / "m.html").exists()


def test_memo_case_paths_resolve_against_the_scenario_folder(run, tmp_path, monkeypatch):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario = folder / "seed.toml"
    scenario.write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "curve.csv").write_text(CURVE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the scenario's folder: curve.csv is not here
    case = 'measured=throughput.measured.curve="curve.csv"'
    result = run("memo", scenario, "--out", tmp_path / "m.html", "--case", case)
    assert result.returncode == 0, result.stderr


def test_memo_case_of_a_library_scenario_names_no_file(run, tmp_path, library):
    assert run("library", "save", SEED).returncode == 0
    case = f'x=throughput.measured.curve="{CURVE}"'
    result = run(
        "memo", "library:deepseek-r1-gb200-nvl72", "--out", tmp_path / "m.html", "--case", case
    )
    assert result.returncode == 3
    assert "a library scenario has no folder on disk, so a case cannot name a file" in result.stderr


# --- --allow-paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "said"),
    [
        ("", "--allow-paths '': an empty value; expected a folder"),
        ("/nonexistent/econ-test", "--allow-paths /nonexistent/econ-test: does not exist"),
        (str(SEED), f"--allow-paths {SEED}: is not a folder"),
    ],
)
def test_allow_paths_must_name_an_existing_folder(run, folder, said):
    before, after = ("--allow-paths", folder, "project", SEED), ("project", SEED, "--allow-paths")
    for args in (before, (*after, folder)):
        result = run(*args)
        assert result.returncode == 3 and said in result.stderr and not result.stdout
        assert "Traceback" not in result.stderr


# --- message sizes --------------------------------------------------------------------------------


def test_out_of_order_steps_name_the_first_one(run):
    steps = ", ".join(f"{{month = {m}, gain = 0.0}}" for m in [5, 3, *range(10, 100_000)])
    result = run("project", SEED, "--set", f"throughput.steps=[{steps}]")
    assert result.returncode == 3 and len(result.stderr) < 2_000
    assert "steps must be in month order; step 2 is month 3, after month 5" in result.stderr


def test_a_long_library_name_is_cut(run, library):
    result = run("project", "library:" + "a" * 100_000)
    assert result.returncode == 3 and len(result.stderr) < 2_000
    assert "(100,002 characters)" in result.stderr


def test_control_character_finds_exactly_the_controls_it_names():
    """Every character of the Basic Multilingual Plane and the astral ones around the private use
    planes: found alone and after text (1-based position) exactly when Unicode calls it a
    control (Cc) or it is a bidirectional control, and never when `allowed` names it."""
    for code in (*range(0x10000), *range(0xE0000, 0xE0080), 0x10FFFF):
        char = chr(code)
        control = unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS
        assert control_character(char) == ((1, char) if control else None), hex(code)
        assert control_character("ab" + char + "\x1b") == ((3, char) if control else (4, "\x1b"))
        assert control_character(char, allowed=char) is None
    assert control_character("a\tb\nc", "\n\t") is None
    assert control_character("a\tb\nc\r", "\n\t") == (6, "\r")
