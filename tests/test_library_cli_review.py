"""`econ library` as a team used it (a review of docs/library.md run by two people): a save of a
copy `show` wrote is checked against the version it came from without --base; a save with no base
over a colleague's version says so; `diff` writes numbers that differ differently and leaves out
floating-point noise; tables line up wide characters."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

import pytest
from test_library import SEED, SEED_NAME, econ, edited

from econ.commands.library import _cells, _table
from econ.library import Ref, open_library
from econ.library.diff import differs, metric_changes

HEADER_1 = f"# econ library: {SEED_NAME}@1\n"


def shown(capsys, ref: str, path) -> str:
    """`econ library show REF > PATH`: what it wrote."""
    rc, out, err = econ(capsys, "library", "show", ref)
    assert rc == 0, err
    path.write_text(out)
    return out


# --- save checks a copy `show` wrote against the version it came from -----------------------


def test_show_names_the_version_and_saving_it_unedited_stores_the_same_text(
    library_url, tmp_path, capsys
):
    econ(capsys, "library", "save", SEED)
    copy = tmp_path / "copy.toml"
    assert shown(capsys, SEED_NAME, copy) == HEADER_1 + SEED.read_text()
    rc, out, err = econ(capsys, "library", "save", copy, "--format", "json")
    assert rc == 0 and err == "", err
    saved = json.loads(out)
    assert saved["version"] == 2 and saved["parent_version"] == 1
    # the stored text is the seed's, without show's line: its sha256 is the seed file's
    assert saved["text_sha256"] == hashlib.sha256(SEED.read_bytes()).hexdigest()
    with open_library(library_url) as library:
        assert library.get(Ref(SEED_NAME, 2)).text == SEED.read_text()
    # JSON gives the stored text alone
    rc, out, _ = econ(capsys, "library", "show", f"{SEED_NAME}@2", "--format", "json")
    assert json.loads(out)["toml"] == SEED.read_text()


def test_a_stale_copy_is_refused_without_base(library_url, tmp_path, capsys, monkeypatch):
    """The review: ada and bob each `show NAME@1 > file`; ada saves (version 2); bob's plain
    `save` of his edited copy was version 3, exit 0, ada's change reverted."""
    econ(capsys, "library", "save", SEED)
    ada, bob = tmp_path / "ada.toml", tmp_path / "bob.toml"
    shown(capsys, f"{SEED_NAME}@1", ada)
    shown(capsys, f"{SEED_NAME}@1", bob)
    ada.write_text(ada.read_text().replace("gpu_count = 72", "gpu_count = 144"))
    assert econ(capsys, "library", "save", ada)[0] == 0
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    bob.write_text(bob.read_text().replace("share = 0.7\n", "share = 0.75\n"))
    rc, out, err = econ(capsys, "library", "save", bob)
    assert rc == 3 and out == ""
    # the message --base 1 gives, with the diff to merge, and where the 1 came from
    assert re.search(
        rf"{re.escape(str(bob))}: --base 1: '{SEED_NAME}' is now at version 2 \(saved by "
        rf"'ada( \(role \w+\))?' at ",
        err,
    )
    assert f"`econ library diff {SEED_NAME}@1 {SEED_NAME}@2` shows them" in err
    assert f"this file's first line, '{HEADER_1.strip()}'" in err
    with open_library(library_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1, 2]
    # merged, and saved against version 2 by an explicit --base, which wins over the line
    bob.write_text(bob.read_text().replace("gpu_count = 72", "gpu_count = 144"))
    rc, out, err = econ(capsys, "library", "save", bob, "--base", "2")
    assert rc == 0 and "version 3" in out and err == "", err
    with open_library(library_url) as library:
        stored = library.get(Ref(SEED_NAME, 3)).text
    assert not stored.startswith("# econ library:") and "gpu_count = 144" in stored


def test_an_explicit_base_that_is_stale_is_refused_even_with_a_current_first_line(
    library_url, tmp_path, capsys
):
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", SEED)
    copy = tmp_path / "copy.toml"
    shown(capsys, SEED_NAME, copy)  # @2, the newest
    rc, _, err = econ(capsys, "library", "save", copy, "--base", "1")
    assert rc == 3 and "--base 1:" in err and "first line" not in err


@pytest.mark.parametrize("number", ["7", "2147483648", "999999999999"])
def test_a_first_line_naming_a_version_beyond_the_newest_says_which_is(
    library_url, tmp_path, capsys, number
):
    """Found by review: '# econ library: NAME@999999999999' (past the versions column's range)
    said "expected a version number, 1, 2, ..."; it is a number, of no version stored."""
    econ(capsys, "library", "save", SEED)
    copy = tmp_path / "copy.toml"
    copy.write_text(f"# econ library: {SEED_NAME}@{number}\n" + SEED.read_text())
    for argv in (["save", copy], ["save", SEED, "--base", number]):
        rc, _, err = econ(capsys, "library", *argv)
        assert rc == 3 and "Traceback" not in err
        assert f"--base {number}: '{SEED_NAME}' has no version {number} (its newest is 1)" in err
        assert "expected a version number" not in err
    with open_library(library_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1]


def test_a_first_line_naming_another_scenario_is_no_base(library_url, tmp_path, capsys):
    """A copy saved under a new name (a fork): the line names where it came from, not a
    version of the new name."""
    econ(capsys, "library", "save", SEED)
    fork = tmp_path / "fork.toml"
    text = shown(capsys, SEED_NAME, fork)
    fork.write_text(text.replace(f'name = "{SEED_NAME}"', 'name = "fork"'))
    rc, out, err = econ(capsys, "library", "save", fork)
    assert rc == 0 and "saved fork version 1" in out
    assert f"its first line names {SEED_NAME}@1, not this file's scenario; saved with no" in err
    with open_library(library_url) as library:
        assert library.get(Ref("fork", 1)).text == SEED.read_text().replace(
            f'name = "{SEED_NAME}"', 'name = "fork"'
        )


def test_new_with_a_first_line_is_refused_as_new(library_url, tmp_path, capsys):
    econ(capsys, "library", "save", SEED)
    copy = tmp_path / "copy.toml"
    shown(capsys, SEED_NAME, copy)
    rc, _, err = econ(capsys, "library", "save", copy, "--new")
    assert rc == 3 and f"--new: '{SEED_NAME}' is already in library" in err


def test_a_save_with_no_base_over_another_authors_version_says_so(
    library_url, tmp_path, capsys, monkeypatch
):
    """A file that names no version (a plain copy, an export) is saved as before, with a note
    when the version it follows is a colleague's: econ cannot tell whether it was merged."""
    econ(capsys, "library", "save", SEED)
    rc, _, err = econ(capsys, "library", "save", SEED)  # over ada's own: no note
    assert rc == 0 and err == ""
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    rc, out, err = econ(capsys, "library", "save", SEED, "--format", "json")
    assert rc == 0 and json.loads(out)["version"] == 3
    assert err.startswith(f"note: {SEED} names no version it was edited from, and the version ")
    # (on PostgreSQL the name given is stored with the role connected: 'ada (role postgres)')
    assert re.search(rf"{SEED_NAME}@2, was saved by 'ada( \(role \w+\))?' at ", err)
    assert f"`econ library diff {SEED_NAME}@2 {SEED_NAME}@3` shows what this save undid" in err
    assert f"`econ library restore {SEED_NAME}@2` brings it back" in err
    # --base says which version it follows: no note
    rc, _, err = econ(capsys, "library", "save", SEED, "--base", "3", "--author", "cy")
    assert rc == 0 and err == ""


# --- diff: numbers that differ read differently; noise is no change --------------------------


def test_diff_writes_changed_inputs_so_that_they_differ(library_url, tmp_path, capsys):
    """The review: 310000.4 against 310000 both read '310,000', 0.07900004 against 0.079 both
    '0.079'; money is written with cents, every number with its thousands grouped."""
    econ(capsys, "library", "save", SEED)
    text = SEED.read_text()
    for old, new in (
        ("system_price_usd = 3100000.0", "system_price_usd = 3100000.4"),
        ("price_usd_per_kwh = 0.0806", "price_usd_per_kwh = 0.08060004"),
        ("colo_usd_per_kw_month = 194.95", "colo_usd_per_kw_month = 194.9"),
        ("gpu_count = 72", "gpu_count = 14400"),
    ):
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "b.toml").write_text(text)
    assert econ(capsys, "library", "save", tmp_path / "b.toml")[0] == 0
    rc, out, _ = econ(capsys, "library", "diff", f"{SEED_NAME}@1", f"{SEED_NAME}@2")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if "." in line[:30]}
    assert rows["capex.system_price_usd"][:2] == ["3,100,000.00", "3,100,000.40"]
    assert rows["power.price_usd_per_kwh"][:2] == ["0.08060000", "0.08060004"]
    assert rows["facility.colo_usd_per_kw_month"][:2] == ["194.95", "194.90"]
    assert rows["fleet.gpu_count"][:2] == ["72", "14,400"]


@pytest.mark.parametrize(
    ("values", "money", "exact", "expected"),
    [
        ([310000.4, 310000], False, True, ["310,000.4", "310,000.0"]),
        ([0.07900004, 0.079], False, True, ["0.07900004", "0.07900000"]),
        ([6115200, 6115207], False, True, ["6,115,200", "6,115,207"]),
        ([15191.1, 15191], True, True, ["15,191.10", "15,191.00"]),
        ([1e-30, 2e-30], False, True, ["1e-30", "2e-30"]),
        (["a", None], False, True, ["a", "null"]),
        # a metric: six significant digits of the largest, the change at the same places
        ([6115200.0, 6115207.25, 7.25], True, False, ["6,115,200.00", "6,115,207.25", "7.25"]),
        ([1.3, 1.35, 0.05000000000000004], False, False, ["1.30", "1.35", "0.05"]),
        ([None, 0.5, None], False, False, ["null", "0.5", "null"]),
        # more places where six digits would write two different values alike
        ([1.3, 1.3000001, 1e-7], False, False, ["1.3000000", "1.3000001", "0.0000001"]),
    ],
)
def test_diff_cells(values, money, exact, expected):
    assert _cells(values, money=money, exact=exact) == expected


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        (1.3, 1.3 - 7.1e-15, False),  # the review's min_dscr: floating-point noise
        (6115207.0, 6115207.0 * (1 + 5e-10), False),
        (1.3, 1.3 * (1 + 2e-9), True),
        (0.0, 1e-20, True),  # no tolerance of a value 0: relative to the larger
        (None, 1.3, True),
    ],
)
def test_diff_hides_metric_noise_within_1e_9(old, new, shown):
    [change] = metric_changes({"min_dscr": old}, {"min_dscr": new}).values()
    assert differs("min_dscr", change) is shown


# --- tables line up wide characters ----------------------------------------------------------


def columns(line: str) -> list[int]:
    """Terminal columns at which each cell after the first starts (two spaces apart), a
    character of East Asian Width W or F counting two (as a terminal draws them)."""
    starts, column, blanks = [], 0, 0
    for char in line:
        if blanks >= 2 and char != " ":
            starts.append(column)
        blanks = blanks + 1 if char == " " else 0
        column += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return starts


def test_a_table_lines_up_wide_characters():
    rows = [["名前", "1"], ["🚀plan", "2"], ["plain", "3"]]
    lines = _table(["name", "version"], rows).splitlines()
    # '名前' is 4 columns, '🚀plan' 6 (the widest): the second column starts at 6 + 2 everywhere
    assert [columns(line) for line in lines] == [[8]] * 5


def test_library_list_lines_up_wide_names(library_url, tmp_path, capsys):
    for name in ("名前", "GPU集群"):
        econ(capsys, "library", "save", edited(tmp_path, f'"{SEED_NAME}"', f'"{name}"'))
    rc, out, _ = econ(capsys, "library", "list")
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 4
    # 'GPU集群' is 7 columns (3 + 2 x 2), the widest name: version starts at 9 on every line
    assert {columns(line)[0] for line in lines} == {9}


# --- import reads show's first line as save does ----------------------------------------------


def test_import_of_an_unedited_copy_show_wrote_is_unchanged(library_url, tmp_path, capsys):
    """The line is show's, not the scenario's: import stores (and compares) the text after it,
    as save does; it used to store the line too, so an unedited copy read as changed."""
    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    folder.mkdir()
    shown(capsys, SEED_NAME, folder / "seed.toml")
    rc, out, err = econ(capsys, "library", "import", folder, "--format", "json")
    assert rc == 0 and err == "", err
    assert json.loads(out)["unchanged"] == [str(folder / "seed.toml")]


def test_import_update_of_a_stale_copy_is_refused(library_url, tmp_path, capsys, monkeypatch):
    """ada shows version 1 into the team's folder and edits it; bob saves version 2 meanwhile;
    ada's `import --update` used to store version 3 over bob's, exit 0, his change undone."""
    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    folder.mkdir()
    copy = folder / "seed.toml"
    shown(capsys, SEED_NAME, copy)
    copy.write_text(copy.read_text().replace("gpu_count = 72", "gpu_count = 144"))
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    assert (
        econ(capsys, "library", "save", edited(tmp_path, "share = 0.7\n", "share = 0.75\n"))[0] == 0
    )
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    rc, out, err = econ(capsys, "library", "import", folder, "--update")
    assert rc == 3 and out == ""
    assert re.search(
        rf"{re.escape(str(copy))}: its first line '{re.escape(HEADER_1.strip())}': "
        rf"'{SEED_NAME}' is now at version 2 \(saved by 'bob( \(role \w+\))?' at ",
        err,
    )
    assert f"expected the line to name {SEED_NAME}@2, once the changes since version 1" in err
    assert err.rstrip().endswith("nothing was imported") and "--base" not in err
    with open_library(library_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1, 2]
    # merged and the line moved on: imported as version 3, the line not stored
    merged = copy.read_text().replace("share = 0.7\n", "share = 0.75\n")
    copy.write_text(merged.replace(f"{SEED_NAME}@1", f"{SEED_NAME}@2", 1))
    rc, out, err = econ(capsys, "library", "import", folder, "--update", "--format", "json")
    assert rc == 0 and err == "" and json.loads(out)["updated"] == [str(copy)], err
    with open_library(library_url) as library:
        assert library.get(Ref(SEED_NAME, 3)).text == merged.removeprefix(HEADER_1)


def test_import_notes_a_first_line_of_another_scenario_and_an_unchecked_update(
    library_url, tmp_path, capsys, monkeypatch
):
    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    folder.mkdir()
    fork = folder / "fork.toml"
    text = shown(capsys, SEED_NAME, fork)
    fork.write_text(text.replace(f'name = "{SEED_NAME}"', 'name = "fork"'))
    plain = edited(folder, "gpu_count = 72", "gpu_count = 144", name="plain.toml")
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    rc, out, err = econ(capsys, "library", "import", folder, "--update", "--format", "json")
    assert rc == 0, err
    assert json.loads(out) == {  # (stdout: the JSON alone; the notes are on stderr)
        "added": [str(fork)],
        "updated": [str(plain)],
        "unchanged": [],
        "restored": [],
    }
    notes = err.splitlines()
    assert notes[0] == (
        f"note: {fork}: its first line names {SEED_NAME}@1, not this file's scenario; imported "
        "with no base"
    )
    assert notes[1].startswith(f"note: {plain} names no version it was edited from, and the ")
    assert f"`econ library diff {SEED_NAME}@1 {SEED_NAME}@2` shows what this import undid" in err
    with open_library(library_url) as library:  # (the Python API gives the same notes)
        assert library.get(Ref("fork", 1)).text.startswith("# The seed case")
        edited(folder, "gpu_count = 72", "gpu_count = 216", name="plain.toml")
        assert (
            library.import_folder(folder, update=True, author="cy")
            .notes[1]
            .startswith(f"note: {plain} names no version")
        )


# --- export writes show's first line, which import reads -------------------------------------


def test_an_edited_export_of_an_older_version_is_refused_by_import_update(
    library_url, tmp_path, capsys, monkeypatch
):
    """Found by review: export wrote the texts without '# econ library: NAME@V', so ada's export,
    edited while bob saved a version, was imported with --update over bob's version (exit 0),
    his change undone; a copy `show` wrote was refused."""
    econ(capsys, "library", "save", SEED)
    folder = tmp_path / "team"
    assert econ(capsys, "library", "export", folder)[0] == 0
    exported = folder / f"{SEED_NAME}.toml"
    assert exported.read_text() == HEADER_1 + SEED.read_text()
    # unedited, it is the stored version: nothing to import, nothing to write again
    rc, out, err = econ(capsys, "library", "import", folder, "--update", "--format", "json")
    assert rc == 0 and json.loads(out)["unchanged"] == [str(exported)], err
    rc, out, _ = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and json.loads(out) == {"written": [], "unchanged": [str(exported)]}
    # ada edits her export; bob saves version 2 meanwhile; her --update is refused
    exported.write_text(exported.read_text().replace("gpu_count = 72", "gpu_count = 144"))
    monkeypatch.setenv("ECON_AUTHOR", "bob")
    bob = edited(tmp_path, "share = 0.7\n", "share = 0.75\n")
    assert econ(capsys, "library", "save", bob)[0] == 0
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    rc, out, err = econ(capsys, "library", "import", folder, "--update")
    assert rc == 3 and out == "" and "Traceback" not in err
    assert (
        f"{exported}: its first line '{HEADER_1.strip()}': '{SEED_NAME}' is now at version 2" in err
    )
    assert err.rstrip().endswith("nothing was imported")
    with open_library(library_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1, 2]


def test_an_export_written_without_the_first_line_only_gets_the_line(library_url, tmp_path, capsys):
    """A folder exported before export wrote the line holds each text alone: the next export
    adds the line (without --force), and changes nothing else; an edited file is still refused."""
    econ(capsys, "library", "save", SEED)
    econ(capsys, "library", "save", edited(tmp_path, SEED_NAME, "other-plan", name="o.toml"))
    folder = tmp_path / "team"
    folder.mkdir()
    kept, changed = folder / f"{SEED_NAME}.toml", folder / "other-plan.toml"
    kept.write_bytes(SEED.read_bytes())
    changed.write_text(SEED.read_text().replace(SEED_NAME, "other-plan").replace("72", "73"))
    rc, _, err = econ(capsys, "library", "export", folder)
    assert (
        rc == 3
        and f"refusing to overwrite files whose content differs from the library: {changed};" in err
    )
    assert kept.read_bytes() == SEED.read_bytes()  # nothing written
    changed.unlink()
    rc, out, err = econ(capsys, "library", "export", folder, "--format", "json")
    assert rc == 0 and sorted(json.loads(out)["written"]) == sorted([str(changed), str(kept)])
    assert kept.read_text() == HEADER_1 + SEED.read_text()


def test_export_writes_no_first_line_for_a_name_the_line_cannot_hold():
    from econ.library.store import export_text

    assert export_text("a-plan", 3, "x = 1\n") == "# econ library: a-plan@3\nx = 1\n"
    for name in ("team@q3", "line\nbreak", "esc\x1b[2J"):  # stored before names were checked
        assert export_text(name, 3, "x = 1\n") == "x = 1\n"


def test_history_of_a_deleted_scenario_says_it_is_deleted(tmp_path, capsys, monkeypatch):
    """`econ library history` of a deleted scenario printed its versions and nothing else, so the
    scenario read as in use until library:NAME was refused; a note on stderr now says it is
    deleted and how to bring it back (the table and the JSON, whose versions say deleted, as
    before)."""
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    assert econ(capsys, "library", "save", SEED)[0] == 0
    rc, out, err = econ(capsys, "library", "history", SEED_NAME)
    assert rc == 0 and err == ""
    assert econ(capsys, "library", "delete", SEED_NAME)[0] == 0
    rc, deleted_out, err = econ(capsys, "library", "history", SEED_NAME)
    assert rc == 0 and deleted_out == out
    assert err == (
        f"note: {SEED_NAME} is deleted, so library:{SEED_NAME} is refused; "
        f"`econ library restore {SEED_NAME}@1` brings it back\n"
    )
