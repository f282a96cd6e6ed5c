"""The app's Library page through Streamlit's AppTest: save the current scenario, browse, load a
version into the editor, diff two versions with their metric changes, restore, and a bad library
answered with st.error."""

from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from econ import load_scenario, project
from econ.library import Ref, open_library
from econ.ui import state
from econ.ui.fmt import format_change

APP = str(ROOT / "app.py")
PAGE = "econ/ui/pages/library.py"
SEED_NAME = "deepseek-r1-gb200-nvl72"  # the app's default scenario


@pytest.fixture
def library_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'library.db'}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    monkeypatch.setenv("ECON_AUTHOR", "ada")
    return url


def library_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def by_label(elements, label: str):
    found = [w for w in elements if w.label == label]
    assert found, f"no {label!r}; have {[w.label for w in elements]}"
    return found[0]


def save(at: AppTest, message: str) -> AppTest:
    by_label(at.text_input, "Message").input(message)
    by_label(at.button, "Save as a new version").click().run()
    assert not at.exception, at.exception
    return at


def test_save_load_diff_restore(library_url):
    at = library_page()
    assert [i.value for i in at.info] == ["The library is empty."]
    save(at, "baseline")
    assert any("version 1" in s.value for s in at.success)
    with open_library(library_url) as library:
        [info] = library.history(SEED_NAME)
        assert (info.message, info.author) == ("baseline", "ada")

    # an edit, saved as version 2, then the diff shows it with the metric changes
    at.session_state[state.DATA]["fleet"]["gpu_count"] = 144
    at.run()
    save(at, "two racks")
    with open_library(library_url) as library:
        assert [v.version for v in library.history(SEED_NAME)] == [1, 2]
        expected = (
            library.summary(Ref(SEED_NAME, 2))["npv_usd"]
            - library.summary(Ref(SEED_NAME, 1))["npv_usd"]
        )
    frames = [f.value for f in at.dataframe]
    inputs = next(f for f in frames if "path" in f.columns)
    assert inputs.to_dict("records") == [
        {"input": "Fleet › GPU count [GPUs]", "old": "72", "new": "144", "path": "fleet.gpu_count"}
    ]
    metrics = next(f for f in frames if "metric" in f.columns).set_index("metric")
    # labelled and formatted as the Results page shows them (in the money setting)
    assert metrics.loc["NPV [USD]", "change"] == format_change(expected, "usd")
    assert metrics.loc["NPV [USD]", "change"][0] in "+-"  # a difference carries its sign
    assert metrics.loc["GPUs", "change"] == "+72"

    # load version 1 into the editor
    by_label(at.selectbox, "Version").select(1).run()
    by_label(at.button, "Load into the editor").click().run()
    assert not at.exception, at.exception
    assert at.session_state[state.BASE_NAME] == f"library:{SEED_NAME}@1"
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] == 72
    assert at.query_params["scenario"] == f"library:{SEED_NAME}@1"  # the link names the version

    # restore version 1 as version 3
    by_label(at.selectbox, "Version").select(1).run()
    by_label(at.button, "Restore as newest").click().run()
    assert any("as version 3" in s.value for s in at.success)
    with open_library(library_url) as library:
        history = library.history(SEED_NAME)
        assert [v.version for v in history] == [1, 2, 3]
        assert library.get(Ref(SEED_NAME, 3)).text == library.get(Ref(SEED_NAME, 1)).text


def test_a_category_code_shows_old_and_new_without_a_difference(library_url):
    """Found by review: debt_sizing_constraint 1 -> 3 was a difference of two codes."""
    at = library_page()
    save(at, "baseline")
    at.session_state[state.DATA]["financing"]["max_ltv"] = 0.3  # the LTV cap sizes the debt
    at.run()
    save(at, "ltv cap")
    frames = [f.value for f in at.dataframe]
    metrics = next(f for f in frames if "metric" in f.columns).set_index("metric")
    sized = metrics.loc[[m for m in metrics.index if m.startswith("Debt sized by")]]
    assert sized.to_dict("records") == [{"old": "1 (debt_share)", "new": "3 (ltv)", "change": ""}]
    assert metrics.loc["Debt [USD]", "change"][0] == "-"


def test_a_metric_undefined_in_one_version_is_a_change(library_url):
    """The page left out every metric null on one side (a payback reached, then never), which
    `econ library diff` lists; a metric null in both is no change in either."""
    at = library_page()
    save(at, "baseline")
    at.session_state[state.DATA]["market"]["price_usd_per_mtok"] = 0.01  # never pays back
    at.run()
    save(at, "a price too low")
    with open_library(library_url) as library:
        old, new = (library.summary(Ref(SEED_NAME, v)) for v in (1, 2))
    assert old["payback_months"] is not None and new["payback_months"] is None
    frames = [f.value for f in at.dataframe]
    metrics = next(f for f in frames if "metric" in f.columns).set_index("metric")
    assert metrics.loc["Payback [months]"].to_dict() == {
        "old": f"{old['payback_months']:.1f}",
        "new": "n/a",
        "change": "n/a",
    }
    both = [k for k, v in old.items() if v is None and new.get(k) is None]
    assert both and not [m for m in metrics.index if m.startswith("Rental earnings")]


def test_a_save_that_brings_a_deleted_scenario_back_says_so(library_url):
    at = library_page()
    save(at, "baseline")
    with open_library(library_url) as library:
        library.delete(SEED_NAME)
    save(at, "again")
    assert [s.value for s in at.success] == [
        f"Saved {SEED_NAME} version 2; it had been deleted, and is restored by this save."
    ]


def test_search_filters_the_list(library_url):
    at = library_page()
    save(at, "baseline for the board")
    by_label(at.text_input, "Search").input("nothing like this").run()
    assert [i.value for i in at.info] == ["No scenario in the library matches."]
    by_label(at.text_input, "Search").input("board").run()
    assert at.dataframe[0].value["name"].tolist() == [SEED_NAME]


def test_search_finds_a_tag_of_an_older_version(library_url):
    """A restore makes a version without the tags of the one restored: the search, of each
    scenario's newest version, found nothing where `econ library list --tag board` finds
    version 1 (an outside review)."""
    at = library_page()
    by_label(at.text_input, "Tags").input("board")
    save(at, "for the board")
    at.session_state[state.DATA]["fleet"]["gpu_count"] = 144
    at.run()
    save(at, "two racks")
    by_label(at.text_input, "Search").input("board").run()
    assert at.dataframe[0].value[["name", "version"]].values.tolist() == [[SEED_NAME, 1]]


def test_a_corrupt_library_is_an_error_not_an_exception(tmp_path, monkeypatch):
    path = tmp_path / "library.db"
    path.write_bytes(b"not a database" * 50)
    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{path}")
    at = library_page()
    assert any("not a readable SQLite library" in e.value for e in at.error)
    assert path.read_bytes() == b"not a database" * 50


def _page_texts(at: AppTest) -> list[str]:
    kinds = ("caption", "error", "warning", "info", "success", "markdown", "title", "exception")
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        ("empty", "The library is a SQLite file on the server (ECON_LIBRARY)"),
        ("corrupt", "the app's library: not a readable SQLite library"),
        ("folder", "the library file is a folder; expected a library file"),
        ("no folder", "the library file's folder does not exist"),
        ("server", "the app's library: opening failed"),
    ],
)
def test_the_library_page_names_no_server_path_or_password(tmp_path, monkeypatch, setup, said):
    """Found by review: the page's caption showed the library's URL, with the server's path to
    its file, and its errors named the file, its folder or the database server."""
    folder = tmp_path / "private-data"
    folder.mkdir()
    path = folder / "library.db"
    url = f"sqlite:///{path}"
    if setup == "corrupt":
        path.write_bytes(b"not a database" * 50)
    elif setup == "folder":
        path.mkdir()
    elif setup == "no folder":
        url = f"sqlite:///{folder / 'absent' / 'library.db'}"
    elif setup == "server":  # (nothing listens on port 1: refused at once)
        url = "postgresql+psycopg://ada:s3cret@127.0.0.1:1/econ"
    monkeypatch.setenv("ECON_LIBRARY", url)
    at = library_page()
    texts = [literal_text(t) for t in _page_texts(at)]
    for text in texts:
        for hidden in ("private-data", "sqlite:", "postgresql", "s3cret", "127.0.0.1"):
            assert hidden not in text, text
    assert any(said in t for t in texts), texts


def test_the_library_page_tells_a_refused_login_from_a_server_that_does_not_answer(
    postgres_socket, monkeypatch
):
    """Found by review: with a wrong password in ECON_LIBRARY the page said only "cannot be used
    as asked just now; the server's log says why" (the driver's message names the server's
    socket file, which the page does not show), as it did for a server that does not answer."""
    from test_library import PASSWORD, PASSWORD_ROLE, password_url

    wrong = password_url(postgres_socket, "wrong-Pw")
    for url, said in (
        (
            wrong,
            "the app's library: opening failed: the database server refused the login "
            "(password authentication failed)",
        ),
        (
            "postgresql+psycopg://ada:s3cret@127.0.0.1:1/econ",
            "the app's library: opening failed: cannot reach the database server: it does not "
            "answer (connection refused",
        ),
    ):
        monkeypatch.setenv("ECON_LIBRARY", url)
        texts = [literal_text(t) for t in _page_texts(library_page())]
        assert any(said in t for t in texts), texts
        for text in texts:
            assert "server's log" not in text
            for hidden in (
                "wrong-Pw",
                PASSWORD,
                PASSWORD_ROLE,
                "s3cret",
                str(postgres_socket),
                "127.0.0.1",
                "postgresql",
            ):
                assert hidden not in text, text


def literal_text(text: str) -> str:
    """Text as the page wrote it, without the escapes `econ.ui.fmt.literal` adds."""
    return text.replace("\\", "").replace("\u2060", "")


def test_a_library_message_with_an_unknown_location_is_not_shown(tmp_path, monkeypatch):
    from econ.ui.saving import UNSAYABLE, library_message

    monkeypatch.setenv("ECON_LIBRARY", f"sqlite:///{tmp_path / 'library.db'}")
    said = library_message(
        f"library sqlite:///{tmp_path / 'library.db'}: no scenario 'x' in it; expected one"
    )
    assert said == "the app's library: no scenario 'x' in it; expected one"
    # a form of the location the page does not know (a driver quoting a linked path): not shown
    assert library_message("cannot open /srv/other/library.db (disk I/O error)") == UNSAYABLE


def test_visiting_the_library_page_creates_no_library_file(library_url, tmp_path):
    """Reading creates nothing (as `econ library list`): the file appears with the first save."""
    at = library_page()
    assert not (tmp_path / "library.db").exists()
    assert any("empty" in i.value for i in at.info), [i.value for i in at.info]
    save(at, "first")
    assert (tmp_path / "library.db").exists()
    assert [i.version for i in open_library(library_url).history(SEED_NAME)] == [1]


def test_a_shared_link_names_a_library_version(library_url):
    seed = ROOT / "models" / "scenarios" / f"{SEED_NAME}.toml"
    with open_library(library_url) as library:
        library.save_file(seed)
        library.save_text(seed.read_text().replace("gpu_count = 72", "gpu_count = 144", 1))
    scenario = load_scenario(f"library:{SEED_NAME}@1", {"depreciation.life_years": 4.0})
    npv = project(scenario).summary_records()[0]["summary"]["npv_usd"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["scenario"] = f"library:{SEED_NAME}@1"
    at.query_params["edits"] = state.encode({"depreciation": {"life_years": 4.0}})
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[state.BASE_NAME] == f"library:{SEED_NAME}@1"
    assert at.session_state[state.DATA]["fleet"]["gpu_count"] == 72
    assert [m.value for m in at.metric if m.label == "NPV [USD]"] == [f"{npv:,.0f}"]
    assert at.session_state[state.DATA]["depreciation"]["life_years"] == 4.0


def test_a_link_to_a_missing_library_version_shows_the_default_with_an_error(library_url):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["scenario"] = f"library:{SEED_NAME}@9"
    at.run()
    assert not at.exception, at.exception
    shown = [literal_text(e.value) for e in at.error]  # (a colon escaped after "library")
    assert any(f"library:{SEED_NAME}@9" in e for e in shown), shown
    assert at.session_state[state.BASE_NAME] == SEED_NAME


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (f"library:{SEED_NAME}@9", "no such scenario version in this app's scenario library"),
        ("library:nothing@1", "no such scenario version in this app's scenario library"),
        (f"library:{SEED_NAME}@x", "which is not a scenario library version; expected library:"),
    ],
)
def test_a_link_to_the_library_names_no_server_path(library_url, tmp_path, name, said):
    """The library's own messages name its database (its file, or a URL): not the page's."""
    with open_library(library_url) as library:
        library.save_file(ROOT / "models" / "scenarios" / f"{SEED_NAME}.toml")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["scenario"] = name
    at.run()
    assert not at.exception, at.exception
    shown = [literal_text(e.value) for e in at.error]  # (a colon escaped after "library")
    assert any(said in e for e in shown), shown
    assert not any(str(tmp_path) in e or "sqlite" in e for e in shown), shown


def test_the_scenario_page_saves_to_the_library(library_url):
    """'Keep in this session' is gone: the Scenario page saves a version in the library."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("econ/ui/pages/scenario.py").run()
    assert not [b for b in at.button if b.label == "Keep"]
    by_label(at.text_input, "Message for the library").input("from the editor")
    by_label(at.button, "Save to library").click().run()
    assert not at.exception, at.exception
    with open_library(library_url) as library:
        [info] = library.history(SEED_NAME)
        assert (info.version, info.message) == (1, "from the editor")
        stored = library.get(Ref(SEED_NAME, 1)).text
    # What was saved is the scenario being edited: it projects to the same NPV as the seed.
    seed = load_scenario(ROOT / "models" / "scenarios" / f"{SEED_NAME}.toml")
    saved = state.validate_in_app(state.parse_toml(stored))
    assert project(saved).metrics["npv_usd"][0] == project(seed).metrics["npv_usd"][0]


def test_a_save_clears_the_message_and_tags_for_the_next(library_url):
    """The boxes kept the last text, so the next save silently reused its tags."""
    at = library_page()
    by_label(at.text_input, "Tags").input("board, q3")
    save(at, "baseline")
    assert by_label(at.text_input, "Message").value == ""
    assert by_label(at.text_input, "Tags").value == ""
    with open_library(library_url) as library:
        [info] = library.history(SEED_NAME)
        assert info.tags == ["board", "q3"] or sorted(info.tags) == ["board", "q3"]
