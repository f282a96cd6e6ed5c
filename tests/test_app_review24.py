"""The twenty-fourth review of the app (its report's items by number), through Streamlit's
AppTest; what needs a browser is in tests/test_browser_review24.py.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from econ import load_scenario
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.ui import state
from econ.ui.form import path_label
from econ.ui.state import BASE_NAME
from tests.test_app import APP, errors, go, shown, widget

SEED = ready_made_scenarios()[DEFAULT_SCENARIO]


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def infos(at: AppTest) -> str:
    return "\n".join(shown(i.value) for i in at.info)


# --- 1. the tornado's notes, as `econ sensitivity` prints them, under its chart -------------------


def test_the_tornado_shows_the_notes_the_command_line_prints(app: AppTest):
    from econ.analysis import tornado
    from econ.analysis.sensitivity import percent_ranges
    from econ.ui.pages.risk import tornado_words

    go(app, "risk")
    widget(app.button, "Run the tornado").click().run()
    assert not app.exception and not errors(app), errors(app)
    inputs = app.session_state["econ.tornado_result"][2]["input"].unique().tolist()
    base = load_scenario(SEED)
    # the command line's run: `econ sensitivity SEED --method tornado --vary ... --pct 20`
    run = tornado(base, percent_ranges(base, inputs, 20.0), outputs=("npv_usd",))
    notes = [(i, n) for i, n in zip(run.table["input"], run.table["note"], strict=True) if n]
    # a longer life sells the GPUs at book value at the horizon: the +20% NPV rests on it
    assert (
        "depreciation.life_years",
        "at high, the remaining book value is assumed sold at book value",
    ) in notes
    text = infos(app)
    for path, note in notes:
        assert f"{path_label(path)}: {note}" in text, text
    for note in run.run.notes:  # the run's `note:` lines (here: the tied inputs of npv_usd)
        assert tornado_words(note, inputs) in text, text  # by labels, as the lines above


# --- 2. the gains page shows the base and gain cases' own warnings --------------------------------


def test_the_gains_page_shows_each_cases_warnings_labelled_as_the_command_line_does(
    app: AppTest, capsys
):
    from econ.cli import main
    from econ.ui.fmt import readable_warning

    go(app, "gains")
    assert not errors(app), errors(app)
    warnings = "\n".join(shown(w.value) for w in app.warning)
    assert main(["gains", DEFAULT_SCENARIO]) == 0
    printed = capsys.readouterr()
    cli = [
        line.split(": ", 1)
        for line in (printed.out + printed.err).splitlines()
        if line.startswith("warning [")
    ]
    # the tile's "n/a" change in payback: the base case never pays back, and the CLI says so
    assert [
        "warning [base]",
        "cumulative project cash flow never turns positive within the "
        "horizon: payback_months is null",
    ] in cli
    assert {case for case, _ in cli} == {"warning [base]", "warning [gain]"}
    for case, text in cli:
        label = {"warning [base]": "Base case", "warning [gain]": "Gain case"}[case]
        assert f"{label}: {readable_warning(text)}" in warnings, (label, text)


# --- 3. a file of the wrong type or too large is refused by the app, with a message --------------


@pytest.mark.parametrize(
    ("page", "name", "said"),
    [
        (
            "scenario",
            "seed.json",
            "seed.json: a .json file; expected .toml (scenario files); nothing was read. The "
            "current scenario is unchanged.",
        ),
        (
            "market",
            "index.json",
            "index.json: a .json file; expected .csv or .txt (rental index files); nothing was "
            "read",
        ),
        ("scenario", "seed", "seed: a file without a suffix; expected .toml (scenario files)"),
    ],
)
def test_a_file_of_a_type_the_box_does_not_read_is_refused_naming_it(app, page, name, said):
    go(app, page)
    # a scenario's text: what a box's `type` left to the browser, the app now checks itself
    app.get("file_uploader")[0].upload(name, SEED.read_bytes(), "application/json").run()
    assert not app.exception
    assert any(said in e for e in errors(app)), errors(app)
    if page == "scenario":
        assert app.session_state[BASE_NAME] == DEFAULT_SCENARIO  # the current one kept


def test_an_upload_just_over_the_limit_names_its_size_and_the_limit(app: AppTest):
    go(app, "scenario")
    content = SEED.read_bytes() + b"#" * (1024 * 1024)  # 1 MB (1,048,576 bytes) and the seed's
    app.get("file_uploader")[0].upload("big.toml", content, "application/toml").run()
    # in bytes, where in MB to one decimal it would read "1.0 MB is larger than the 1 MB limit"
    said = (
        f"big.toml: {len(content):,} bytes is larger than the 1 MB (1,048,576 bytes) limit for "
        "scenario files; nothing was read. The current scenario is unchanged."
    )
    assert said in errors(app), errors(app)
    app.get("file_uploader")[0].upload("big.toml", b"#" * (3 << 20), "application/toml").run()
    assert any(e.startswith("big.toml: 3 MB is larger than the 1 MB limit") for e in errors(app))


# --- 5. saves and restores from the app carry the author typed in the session -----------------------


@pytest.fixture
def library_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'library.db'}"
    monkeypatch.setenv("ECON_LIBRARY", url)
    monkeypatch.delenv("ECON_AUTHOR", raising=False)
    return url


def test_the_author_box_names_who_saves_and_restores_and_is_kept_across_pages(app, library_url):
    from econ.library import open_library
    from econ.library.store import login_name

    go(app, "scenario")
    box = widget(app.text_input, "Author")
    assert box.value == "" and box.proto.placeholder == login_name()  # the server's account
    widget(app.button, "Save to library").click().run()  # empty: as before the box
    widget(app.text_input, "Author").input("ada").run()
    app.session_state[state.DATA]["fleet"]["gpu_count"] = 144
    app.run()
    widget(app.button, "Save to library").click().run()
    assert not app.exception and not errors(app), errors(app)
    go(app, "library")
    assert widget(app.text_input, "Author").value == "ada"  # kept from the Scenario page
    widget(app.text_input, "Author").input("  bob ").run()
    widget(app.text_input, "Message").input("three racks")
    app.session_state[state.DATA]["fleet"]["gpu_count"] = 216
    widget(app.button, "Save as a new version").click().run()
    widget(app.selectbox, "Version").set_value(1).run()
    widget(app.button, "Restore as newest").click().run()
    assert not app.exception and not errors(app), errors(app)
    with open_library(library_url) as library:
        history = library.history(DEFAULT_SCENARIO)
    assert [(v.version, v.author) for v in history] == [
        (1, login_name()),
        (2, "ada"),
        (3, "bob"),
        (4, "bob"),
    ]


def test_an_author_the_library_refuses_is_an_error_and_nothing_is_saved(app, library_url):
    from econ.library import open_library

    go(app, "scenario")
    widget(app.text_input, "Author").input("x" * 300).run()
    widget(app.button, "Save to library").click().run()
    assert not app.exception
    assert any("author" in e and "expected a name of 1 to" in e for e in errors(app)), errors(app)
    with open_library(library_url) as library:
        assert library.list() == []


def test_an_upload_over_its_limit_is_said_in_the_unit_each_size_reads_best():
    """A 2 MB file over a 512 kB limit was said as '2,097,152 bytes is larger than the 512 kB
    (524,288 bytes) limit': the check compared 2 (MB) with 512 (kB). Bytes are kept for a size
    that reads as the limit in the same unit ('1.0 MB' over '1 MB')."""
    from types import SimpleNamespace

    from econ.ui.common import upload_problem

    big = SimpleNamespace(name="a.csv", size=2 * 2**20)
    assert upload_problem(big, 512 * 2**10, "x") == (
        "a.csv: 2 MB is larger than the 512 kB limit for x; nothing was read"
    )
    just_over = SimpleNamespace(name="b.toml", size=2**20 + 10)
    assert upload_problem(just_over, 2**20, "scenario files") == (
        "b.toml: 1,048,586 bytes is larger than the 1 MB (1,048,576 bytes) limit for scenario "
        "files; nothing was read"
    )
