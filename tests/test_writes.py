"""Every writer of econ on a folder that cannot be written, a full disk and a name too long; the
Monte Carlo and sweep `.meta.json` sidecar refused like its output; stale temporary files of a
killed run removed; file permissions from the umask; formula injection behind leading spaces,
zero-width and format characters and full-width signs, read back through LibreOffice.

Real failures, not mocks: as root, chmod does not stop a write, so the unwritable folders are
`/sys` (no new files, even for root), a read-only tmpfs and a 64 KiB tmpfs filled to the last
byte (both mounted here, skipped where mounting is not permitted).
"""

from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

import econ
from econ.cli import main
from econ.export import csv_text, write_outputs
from econ.files import WriteError, atomic_write, file_mode, remove_stale_temporaries, write_files
from econ.scenario import save_scenario
from econ.text import looks_like_formula, neutralize, restore
from econ.workbook import workbook_bytes
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
CURVE_FILE = ROOT / "tests" / "data" / "throughput" / "inferencex_agg_fixed.json"
LONG_NAME = "x" * 296 + ".csv"  # 300 characters: more than the 255 bytes a file name may hold

MC = ["montecarlo", str(SEED), "-n", "64", "--dist", "utilization.share=uniform(0.5,0.9)"]
SWEEP = ["sweep", str(SEED), "--grid", "utilization.share=0.5,0.9"]


def _commands(out: Path) -> dict[str, list[str]]:
    """Every command with an --out, writing to `out` (suffix adapted)."""
    return {
        "project-csv": ["project", str(SEED), "--out", str(out.with_suffix(".csv"))],
        "project-xlsx": ["project", str(SEED), "--out", str(out.with_suffix(".xlsx"))],
        "project-json": ["project", str(SEED), "--out", str(out.with_suffix(".json"))],
        "export-parquet": ["export", str(SEED), "--parquet", str(out.with_suffix(".parquet"))],
        "throughput-import": [
            "throughput",
            "import",
            str(CURVE_FILE),
            "--out",
            str(out.with_suffix(".csv")),
        ],
        "montecarlo-csv": [*MC, "--out", str(out.with_suffix(".csv"))],
        "montecarlo-parquet": [*MC, "--out", str(out.with_suffix(".parquet"))],
        "sweep-csv": [*SWEEP, "--out", str(out.with_suffix(".csv"))],
        "gains": ["gains", str(SEED), "--format", "json", "--out", str(out.with_suffix(".json"))],
    }


COMMANDS = list(_commands(Path("x")))


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err


def _mount(folder: Path, options: str) -> None:
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()})")


@pytest.fixture
def read_only(tmp_path: Path):
    folder = tmp_path / "ro"
    folder.mkdir()
    _mount(folder, "ro,size=64k")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> None:
    """Fill the disk of `folder` to the last byte (a file `filler`)."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


@pytest.fixture
def full_disk(tmp_path: Path):
    folder = tmp_path / "full"
    folder.mkdir()
    _mount(folder, "size=64k")
    _fill(folder)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- Item 11: write failures are exit 3 with the path and the reason --------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_read_only_folder(command, read_only: Path, capsys):
    argv = _commands(read_only / "out")[command]
    code, err = _run(argv, capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert str(read_only) in err and "the file system is read-only" in err
    assert _names(read_only) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_full_disk(command, full_disk: Path, capsys):
    argv = _commands(full_disk / "out")[command]
    code, err = _run(argv, capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert str(full_disk) in err and "the disk is full (no space left on device)" in err
    left = [
        n for n in _names(full_disk) if n not in ("filler", "out.csv.chunks", "out.parquet.chunks")
    ]
    assert left == []  # no output, no sidecar, no temporary file
    for chunks in full_disk.glob("*.chunks"):  # a run's chunk folder may stay, without temporaries
        assert not any(p.name.endswith(".tmp") for p in chunks.iterdir())


def test_full_disk_at_the_final_write_of_a_run(
    full_disk: Path, tmp_path: Path, capsys, monkeypatch
):
    # The chunks go to a disk with room; only the rows file and its sidecar hit the full disk.
    # Full before the run, it is refused then, with nothing computed (round 25: the run ran and
    # then failed to write)...
    chunks = tmp_path / "chunks"
    argv = [*MC, "--chunks", str(chunks), "--out", str(full_disk / "rows.csv")]
    code, err = _run(argv, capsys)
    assert code == 3 and "Traceback" not in err
    assert err.startswith(f"error: the Monte Carlo run writes its 64 rows to {full_disk}/rows.csv")
    assert "and the disk is full (no space left on device)" in err
    assert not chunks.exists() and _names(full_disk) == ["filler"]
    # ... and filled during the run (by another program), the write fails with nothing written
    # and says how much room the file needs.
    from econ.analysis import output

    (full_disk / "filler").unlink()
    real = output.write_rows

    def write_rows(*args, **kwargs):
        _fill(full_disk)
        return real(*args, **kwargs)

    monkeypatch.setattr(output, "write_rows", write_rows)
    code, err = _run(argv, capsys)
    assert code == 3 and "Traceback" not in err
    assert f"{full_disk / 'rows.csv'}: cannot write it: the disk is full" in err
    assert f"; {full_disk / 'rows.csv'} needs about " in err and ", and its disk is full; " in err
    assert "rerun it with --out on another disk (the chunk files are reused)" in err
    assert _names(full_disk) == ["filler"]  # neither the rows nor rows.meta.json
    monkeypatch.undo()
    (full_disk / "filler").unlink()
    assert main(argv) == 0  # the same command, rerun with room, resumes from its chunks
    assert _names(full_disk) == ["rows.csv", "rows.meta.json"]


@pytest.mark.parametrize("command", COMMANDS)
def test_name_too_long(command, tmp_path: Path, capsys):
    argv = _commands(tmp_path / LONG_NAME)[command]
    code, err = _run(argv, capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert "the file name is too long for the file system" in err
    assert LONG_NAME[:-4] in err  # names the path
    assert _names(tmp_path) == []


@pytest.mark.parametrize("command", ["project-csv", "throughput-import", "sweep-csv"])
def test_folder_without_new_files(command, capsys):
    # /sys takes no new files, even from root; /proc/econ-test does not exist.
    code, err = _run(_commands(Path("/sys/econ-test"))[command], capsys)
    assert code == 3 and "Traceback" not in err
    assert "/sys/econ-test" in err and "permission denied" in err
    code, err = _run(_commands(Path("/proc/econ-test/x"))[command], capsys)
    assert code == 3 and "Traceback" not in err
    assert "folder /proc/econ-test does not exist" in err


def test_a_name_just_under_the_limit_is_written(tmp_path: Path):
    # 255 bytes is a valid name; its temporary file (longer by 14) must not be what fails.
    target = tmp_path / ("y" * 251 + ".csv")
    assert atomic_write(target, "a\n") == target
    assert target.read_text() == "a\n"
    assert _names(tmp_path) == [target.name]


def test_a_nul_byte_in_a_path_is_a_write_error(tmp_path: Path):
    with pytest.raises(WriteError, match="NUL byte"):
        atomic_write(str(tmp_path / "a\0b.csv"), "x")


# --- Item 12: the sidecar follows the output's rule, checked before anything is written -------------


@pytest.mark.parametrize("argv", [MC, SWEEP], ids=["montecarlo", "sweep"])
def test_sidecar_is_never_overwritten_without_force(argv, tmp_path: Path, capsys):
    out, sidecar = tmp_path / "rows.csv", tmp_path / "rows.meta.json"
    sidecar.write_text("keep me")
    code, err = _run([*argv, "--out", str(out)], capsys)
    assert code == 3 and "Traceback" not in err
    assert f"{sidecar} exists; use --force to overwrite" in err
    # refused before the run: no rows, no chunk folder, the sidecar as it was
    assert _names(tmp_path) == ["rows.meta.json"] and sidecar.read_text() == "keep me"
    assert main([*argv, "--out", str(out), "--force"]) == 0
    assert json.loads(sidecar.read_text())["kind"] in ("montecarlo", "sweep")
    assert len(pd.read_csv(out)) > 1


def test_existing_report_is_refused_before_the_run(tmp_path: Path, capsys):
    report = tmp_path / "r.md"
    report.write_text("keep me")
    argv = [*SWEEP, "--out", str(tmp_path / "rows.csv"), "--report", str(tmp_path / "r")]
    code, err = _run(argv, capsys)
    assert code == 3 and f"{report} exists; use --force to overwrite" in err
    assert _names(tmp_path) == ["r.md"] and report.read_text() == "keep me"


def test_several_existing_outputs_exist(tmp_path: Path, capsys):
    """Two files named together took the verb of one: "rows.csv, rows.meta.json exists"."""
    out, sidecar = tmp_path / "rows.csv", tmp_path / "rows.meta.json"
    md, png = tmp_path / "r.md", tmp_path / "r-histogram.png"
    for path in (out, sidecar, md, png):
        path.write_text("keep me")
    code, err = _run([*SWEEP, "--out", str(out)], capsys)
    assert code == 3 and f"{out}, {sidecar} exist; use --force to overwrite" in err
    code, err = _run([*MC, "--report", str(tmp_path / "r")], capsys)
    assert code == 3 and f"{md}, {png} exist; use --force to overwrite" in err


@pytest.mark.parametrize("argv", [MC, SWEEP], ids=["montecarlo", "sweep"])
def test_an_out_whose_chunk_folder_cannot_be_made_is_named_not_the_folder(argv, capsys):
    """`--out /proc/x.parquet` said "/proc/x.parquet.chunks: cannot create the folder", a
    folder the user never named."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc, a folder that takes no new folder")
    out = "/proc/econ-test.parquet"
    code, err = _run([*argv, "--out", out], capsys)
    assert code == 3 and "Traceback" not in err
    assert err.startswith(
        f"error: {out}: cannot write it: the folder of its chunk files beside it "
        "(econ-test.parquet.chunks) cannot be created: "
    )
    assert err.rstrip().endswith(
        "choose another place for --out, or keep the chunk files elsewhere with --chunks DIR"
    )


def test_sidecar_refused_when_it_appears_during_the_run(tmp_path: Path, monkeypatch):
    # Checked again at the write: a sidecar created while the run computed is not replaced and
    # the rows file is not written either.
    from econ.analysis import output

    out, sidecar = tmp_path / "rows.csv", tmp_path / "rows.meta.json"
    checked = output.check_out(out, overwrite=False)
    sidecar.write_text("keep me")

    class Result:
        metadata = {"kind": "sweep"}
        rows = pd.DataFrame({"name": ["a"], "npv_usd": [1.0]})
        store = None

    with pytest.raises(WriteError, match="rows.meta.json exists"):
        output.write_rows(Result(), checked)
    assert _names(tmp_path) == ["rows.meta.json"] and sidecar.read_text() == "keep me"


# --- Item 13: stale temporaries and file modes ---------------------------------------------------------


def _aged(path: Path, seconds: float) -> Path:
    path.write_bytes(b"partial")
    when = time.time() - seconds
    os.utime(path, (when, when))
    return path


def test_stale_temporaries_of_the_same_output_are_removed(tmp_path: Path, capsys):
    stale = [_aged(tmp_path / ".x.csv.ab12cd_4.tmp", 3600)]
    stale.append(_aged(tmp_path / ".x.summary.csv.zz99yy88.tmp", 60))
    kept = [
        _aged(tmp_path / ".y.csv.ab12cd34.tmp", 3600),  # another output's
        _aged(tmp_path / ".x.csv.ab12cd34.tmp.bak", 3600),  # not our pattern
        _aged(tmp_path / ".x.csv.short.tmp", 3600),  # not mkstemp's 8 characters
        _aged(tmp_path / "x.csv.ab12cd34.tmp", 3600),  # no leading dot
        _aged(tmp_path / ".x.csv.newer999.tmp", -3600),  # not older than this run
    ]
    assert main(["project", str(SEED), "--out", str(tmp_path / "x.csv")]) == 0
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in kept)
    assert {"x.csv", "x.summary.csv"} <= set(_names(tmp_path))


def test_temporary_of_a_live_writer_is_kept(tmp_path: Path):
    import fcntl

    live = _aged(tmp_path / ".x.csv.live0000.tmp", 3600)
    with live.open("rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # as write_files holds it while writing
        assert remove_stale_temporaries(tmp_path, r"x\.csv", time.time()) == []
    assert remove_stale_temporaries(tmp_path, r"x\.csv", time.time()) == [live]


def test_temporary_of_a_killed_run_is_removed_at_the_next_run(tmp_path: Path):
    target = tmp_path / "big.csv"
    script = textwrap.dedent(
        f"""
        import sys, time
        from econ.files import Stream, write_files

        def forever(handle):
            handle.write(b"scenario,npv_usd\\n" * 1000)
            handle.flush()
            print("writing", flush=True)
            time.sleep(600)

        write_files({{{str(target)!r}: Stream(forever)}})
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout.readline().strip() == "writing"
        (temporary,) = [p for p in tmp_path.iterdir() if p.name.startswith(".big.csv.")]
        time.sleep(0.05)  # the next run starts strictly after the temporary was last written
        # While the writer lives, its temporary is not stale, whatever its age.
        assert remove_stale_temporaries(tmp_path, r"big\.csv", time.time()) == []
        child.kill()
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert temporary.exists()  # a killed run leaves it behind ...
    atomic_write(target, "scenario,npv_usd\n")  # ... and the next run of the same output removes it
    assert _names(tmp_path) == ["big.csv"]


def test_chunk_folder_temporaries_are_removed_when_the_run_resumes(tmp_path: Path):
    chunks = tmp_path / "chunks"
    chunks.mkdir()
    stale = _aged(chunks / ".chunk-000003.parquet.k9x8w7v6.tmp", 3600)
    other = _aged(chunks / ".notes.txt.k9x8w7v6.tmp", 3600)
    assert main([*MC, "--chunks", str(chunks), "--format", "json"]) == 0
    assert not stale.exists() and other.exists()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_every_writer_gives_files_the_mode_of_the_umask(umask, tmp_path: Path, capsys):
    previous = os.umask(umask)
    try:
        assert file_mode() == 0o666 & ~umask
        for name, argv in _commands(tmp_path / "out").items():
            folder = tmp_path / name
            folder.mkdir()
            argv = [a.replace(str(tmp_path / "out"), str(folder / "out")) for a in argv]
            assert main(argv) == 0, capsys.readouterr().err
        save_scenario(econ.load_scenario(SEED), tmp_path / "saved.toml")
        simulate = ["throughput", "simulate", "--hardware", "h200-sxm", "--model", "llama2-70b"]
        curve = tmp_path / "simulated.csv"
        assert main([*simulate, "--isl", "128", "--osl", "256", "--out", str(curve)]) == 0
    finally:
        os.umask(previous)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "chunks" not in p.parent.name]
    assert len(files) >= 14
    assert {p.suffix for p in files} >= {".csv", ".parquet", ".xlsx", ".json", ".toml"}
    modes = {str(p.relative_to(tmp_path)): oct(p.stat().st_mode & 0o777) for p in files}
    assert set(modes.values()) == {oct(0o666 & ~umask)}, modes


def test_file_mode_does_not_change_the_umask():
    previous = os.umask(0o027)
    try:
        assert file_mode() == 0o640
        assert os.umask(0o027) == 0o027
    finally:
        os.umask(previous)


def test_replaced_file_gets_the_mode_of_a_new_file(tmp_path: Path):
    target = tmp_path / "a.csv"
    target.write_text("old")
    target.chmod(0o600)
    previous = os.umask(0o022)
    try:
        write_files({target: b"new"}, overwrite=True)
    finally:
        os.umask(previous)
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o777 == 0o644


# --- Item 14: formula injection behind leading characters ---------------------------------------------

HIDDEN = {
    "space": " =1+1",
    "two spaces and plus": "  +1+1",
    "tab then space": "\t =1",
    "no-break space": "\u00a0=1+1",
    "narrow no-break space": "\u202f=1+1",
    "ideographic space": "\u3000=1+1",
    "line separator": "\u2028=1+1",
    "paragraph separator": "\u2029@SUM(1)",
    "zero-width space": "\u200b=1+1",
    "zero-width joiner": "\u200d-1+1",
    "word joiner": "\u2060=1+1",
    "soft hyphen": "\u00ad=1+1",
    "byte-order mark": "\ufeff=1+1",
    "line feed": "\n=1+1",
    "full-width equals": "\uff1d1+1",
    "full-width plus": "\uff0b1+1",
    "full-width minus": "\uff0d1+1",
    "full-width at": "\uff20SUM(1)",
    "small equals": "\ufe661+1",
    "space and full-width equals": " \uff1d1+1",
    "BOM, NBSP and full-width at": "\ufeff\u00a0\uff20SUM(1)",
}
PLAIN = ["plain", " leading space", "\u00a0name", "\ufeffname", "a=1", "\uff11\uff12", "", " "]


@pytest.mark.parametrize("text", HIDDEN.values(), ids=HIDDEN.keys())
def test_hidden_formula_is_neutralized(text):
    assert looks_like_formula(text)
    assert neutralize(text) == "'" + text


@pytest.mark.parametrize("text", PLAIN)
def test_text_without_a_formula_is_kept(text):
    assert not looks_like_formula(text)
    assert neutralize(text) == text


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.sampled_from(" \t\u00a0\u3000\u200b\u200c\u2060\ufeff\u00ad\u2028"), max_size=4),
    st.sampled_from("=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b"),
    st.text(max_size=10),
)
def test_any_invisible_prefix_before_a_sign_is_neutralized(prefix, sign, rest):
    assert neutralize(prefix + sign + rest) == "'" + prefix + sign + rest


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
def test_neutralize_adds_one_apostrophe_or_nothing(text):
    out = neutralize(text)
    assert out in (text, "'" + text)
    assert (out != text) == looks_like_formula(text.lstrip("'"))
    assert not looks_like_formula(out)  # what is written never reads as a formula


APOSTROPHES = ["'=1", "''=1", "' =1", "'\uff1d1", "'", "''", "'plain", "'=", "a'=1"]
"""Text that starts as neutralized text does, or nearly."""


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from([*HIDDEN.values(), *PLAIN, *APOSTROPHES]),
        st.builds(
            lambda n, rest: "'" * n + rest,
            st.integers(1, 3),
            st.one_of(st.text(max_size=8), st.sampled_from([*HIDDEN.values(), *PLAIN])),
        ),
    )
)
def test_restore_gives_back_what_neutralize_was_given(text):
    # restore reads a file neutralize wrote: every text comes back as it was
    assert restore(neutralize(text)) == text


def test_no_two_texts_are_written_alike():
    """`=1` and `'=1` were both written `'=1`: two scenarios of those names were one key of the
    CSV (146 monthly rows under it; found by review), and `restore` gave `=1` for both. Text
    that starts with apostrophes before formula-like text gets one more."""
    assert neutralize("=1") == "'=1"
    assert neutralize("'=1") == "''=1"
    assert neutralize("''=1") == "'''=1"
    assert neutralize("'plain") == "'plain" and neutralize("'") == "'"
    texts = [*HIDDEN.values(), *PLAIN, *APOSTROPHES]
    assert len({neutralize(t) for t in texts}) == len(set(texts))


@pytest.mark.parametrize("name", HIDDEN.values(), ids=HIDDEN.keys())
def test_hidden_formula_names_in_the_csv_outputs(tmp_path: Path, name: str):
    if any(ord(c) < 32 for c in name):  # a control character: refused in a name before any write
        with pytest.raises(econ.ScenarioError, match="control character"):
            econ.load_scenario(SEED, {"name": name})
        return
    scenario = econ.load_scenario(SEED, {"name": name, "description": name})
    out = tmp_path / "x.csv"
    write_outputs(econ.project(scenario), {"csv": out}, scenarios=[scenario])
    for path in (out, tmp_path / "x.summary.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        column = rows[0].index("scenario")
        assert {row[column] for row in rows[1:]} == {"'" + name.replace("\r", "")}


@pytest.mark.parametrize("name", [" =1+1", "\uff1d1+1", "\u200b=1+1"])
def test_hidden_formula_names_in_a_curve_csv(tmp_path: Path, name: str):
    from econ.throughput.importers import import_file, write_curve_csv

    curve = import_file(CURVE_FILE)
    curve.points["config"] = name
    path = write_curve_csv(curve, tmp_path / "curve.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["config"] for row in rows} == {"'" + name}


@pytest.mark.parametrize("name", [" =1+1", "\uff1d1+1", "\ufeff@SUM(1)", "'quoted"])
def test_workbook_text_cells_are_quote_prefixed_like_the_csv(tmp_path: Path, name: str):
    # The workbook stores text as string cells (never formulas) and marks with the quote-prefix
    # style exactly what the CSV writers neutralize, so editing the cell in Excel keeps it text.
    scenario = econ.load_scenario(SEED, {"name": name})
    path = tmp_path / "x.xlsx"
    path.write_bytes(workbook_bytes(econ.project(scenario), [scenario]))
    book = load_workbook(path)
    for sheet, coordinate in (("Monthly", "A2"), ("Summary", "C2")):
        cell = book[sheet][coordinate]
        assert cell.value == name and cell.data_type == "s"
        assert cell.quotePrefix
    plain = econ.load_scenario(SEED, {"name": " plain"})
    path.write_bytes(workbook_bytes(econ.project(plain), [plain]))
    assert not load_workbook(path)["Summary"]["C2"].quotePrefix


# --- LibreOffice reads our CSV with "trim spaces" and "evaluate formulas" on -----------------------------

CSV_IMPORT = "CSV:44,34,76,1,,0,false,true,false,false,true,-1,true"
"""LibreOffice CSV filter options: comma, double quote, UTF-8, from line 1, standard cells,
quoted fields not forced to text, special numbers detected, trim spaces on (token 11), evaluate
formulas on (token 13): the settings under which `" =1+1"` becomes a formula."""


def _libreoffice(files: list[Path], outdir: Path) -> dict[str, object]:
    """Open each CSV in LibreOffice Calc headless with CSV_IMPORT and save it as .xlsx; returns
    the first sheet of each, by file stem (openpyxl: data type 'f' is a formula, 's' text)."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed; `make test` installs it")
    profile = Path(tempfile.mkdtemp(prefix="lo-profile-"))
    try:
        command = [
            "soffice",
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            f"--infilter={CSV_IMPORT}",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(outdir),
            *map(str, files),
        ]
        subprocess.run(command, check=True, capture_output=True, timeout=600)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return {path.stem: load_workbook(outdir / f"{path.stem}.xlsx").active for path in files}


def test_libreoffice_reads_neutralized_text_as_text(tmp_path: Path):
    texts = [t for t in HIDDEN.values() if "\n" not in t and "\u2028" not in t]
    frame = pd.DataFrame({"k": range(len(texts)), "name": texts})
    ours = tmp_path / "ours.csv"
    ours.write_text(csv_text(frame), encoding="utf-8")
    raw = tmp_path / "raw.csv"  # the same cells without neutralization: the control
    raw.write_text(frame.to_csv(index=False, lineterminator="\n"), encoding="utf-8")
    sheets = _libreoffice([ours, raw], tmp_path / "lo")
    cells = {k: [row[1] for row in sheet.iter_rows(min_row=2)] for k, sheet in sheets.items()}
    formulas_raw = [t for t, c in zip(texts, cells["raw"], strict=True) if c.data_type == "f"]
    assert " =1+1" in formulas_raw  # the options really trim and evaluate: the test can fail
    for text, cell in zip(texts, cells["ours"], strict=True):
        assert (cell.data_type, cell.value) == ("s", "'" + text)


def test_libreoffice_reads_the_project_csv_without_formulas(tmp_path: Path, capsys):
    # Through the CLI: a scenario named " =1+1" written by `econ project --out`.
    out = tmp_path / "seed.csv"
    argv = ["project", str(SEED), "--set", 'name=" =1+1"', "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    sheets = _libreoffice([out, tmp_path / "seed.summary.csv"], tmp_path / "lo")
    for sheet in sheets.values():
        assert not [c.coordinate for row in sheet.iter_rows() for c in row if c.data_type == "f"]
        assert sheet["A2"].value == "' =1+1"
