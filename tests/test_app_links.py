"""What reaches the app from outside it: shared links bounded before they are used (size once
decompressed, nesting, text lengths), text from links and files shown as typed (never as markdown
images or links), page scripts that work when Streamlit runs them alone, Monte Carlo
distributions that would name a server file refused, long quoted values cut before the app's
message patterns read them, values of the wrong type shown as errors (never a traceback), and
messages that name no server folder. Through Streamlit's AppTest.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
import zlib

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from econ.catalog import DEFAULT_SCENARIO, models_dir, ready_made_scenarios
from econ.scenario import read_toml
from econ.scenario.errors import shortened
from econ.ui import compute, form, risk, state
from econ.ui.fmt import literal
from econ.ui.streamlit_app import PAGES
from tests.conftest import ROOT
from tests.test_app import APP, errors, go, metric, shown, summary_of, widget


def raw_link(text: str) -> str:
    """The `edits` of a link holding `text` as its JSON, whatever it is (state.encode checks)."""
    return base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")


def nested(levels: int) -> str:
    """Edits {"fleet": {"a": {"a": ... 1}}}: `levels` tables inside the fleet's."""
    return '{"fleet":' + '{"a":' * levels + "1" + "}" * levels + "}"


def opened(edits: str, scenario: str | None = DEFAULT_SCENARIO, page: str | None = None):
    at = AppTest.from_file(APP, default_timeout=90)
    if scenario:
        at.query_params["scenario"] = scenario
    at.query_params["edits"] = edits
    at.run()
    assert not at.exception, at.exception
    if page is not None:
        go(at, page)
    return at


def shows_the_default(at: AppTest) -> None:
    assert at.sidebar.selectbox[0].value == DEFAULT_SCENARIO
    assert metric(at, "NPV [USD]") == f"{summary_of().npv_usd:,.0f}"


# --- nesting (report #3) -----------------------------------------------------------------------------


def test_a_66_character_link_nested_800_deep_says_why_and_opens_the_default():
    edits = raw_link(nested(800))
    assert len(edits) == 66  # the reviewer's link: a RecursionError traceback before
    at = opened(edits)
    assert any("levels deep" in e and "nest about six" in e for e in errors(at)), errors(at)
    shows_the_default(at)


@pytest.mark.parametrize("levels", [state.MAX_DEPTH - 1, state.MAX_DEPTH, 5_000])
def test_decoded_edits_may_nest_as_deep_as_the_bound_and_no_deeper(levels):
    text = raw_link(nested(levels))
    if levels + 1 <= state.MAX_DEPTH:  # the edits' own table is a level too
        assert state.decode(text)["fleet"]
    else:
        with pytest.raises(state.LinkError, match=f"more than {state.MAX_DEPTH} levels deep"):
            state.decode(text)


def test_too_deep_counts_without_recursion():
    deep: object = 1
    for _ in range(100_000):  # far past Python's recursion limit
        deep = [deep]
    assert state.too_deep(deep)
    assert not state.too_deep({"financing": {"tranches": [{"floating": {"spread": 0.02}}]}})


@pytest.mark.parametrize("levels", [500, 5_000])
def test_an_uploaded_scenario_nested_deeper_than_a_scenario_says_why(levels):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "scenario")
    content = ("[" + ".".join(["a"] * levels) + "]\n").encode()
    at.get("file_uploader")[0].upload("deep.toml", content, "application/toml").run()
    assert not at.exception, at.exception
    assert any("deep.toml" in e and "nested" in e for e in errors(at)), errors(at)
    go(at, "results")
    shows_the_default(at)


# --- size (report #4) --------------------------------------------------------------------------------


@pytest.mark.parametrize("chars", [1_000_000, 8_000_000])
def test_a_short_link_that_inflates_to_megabytes_is_refused_unread(chars):
    edits = raw_link(json.dumps({"name": "A" * chars}))
    assert len(edits) <= 2 * state.MAX_LINK_CHARS  # short enough to pass the length check
    with pytest.raises(state.LinkError, match="once decompressed"):
        state.decode(edits)
    at = opened(edits)  # took 34 s (1 MB) and over 120 s (8 MB) of server time per rerun
    assert any("65,536 bytes" in e for e in errors(at)), errors(at)
    shows_the_default(at)


def test_edits_up_to_the_decompressed_bound_are_read():
    padding = state.MAX_LINK_JSON_BYTES - len(json.dumps({"x": ""}))
    assert state.decode(raw_link(json.dumps({"x": "A" * padding}))) == {"x": "A" * padding}
    with pytest.raises(state.LinkError, match="once decompressed"):
        state.decode(raw_link(json.dumps({"x": "A" * (padding + 1)})))


@pytest.mark.parametrize(
    ("edits", "reason"),
    [
        ({"name": "n" * 201}, "a name of 201 characters; expected at most 200"),
        ({"description": "d" * 5_001}, "a description of 5,001 characters; expected at most 5,000"),
        (
            {"sources": {"market.price_usd_per_mtok": "s" * 2_001}},
            "a source of 2,001 characters; expected at most 2,000",
        ),
        ({"sources": {"p" * 201: "s"}}, "field path 201 characters long"),
    ],
)
def test_text_fields_of_a_link_are_bounded(edits, reason):
    with pytest.raises(state.LinkError, match=reason):
        state.decode(state.encode(edits))


def test_text_fields_at_their_bounds_pass():
    edits = {
        "name": "n" * 200,
        "description": "d" * 5_000,
        "sources": {"market.price_usd_per_mtok": "s" * 2_000},
    }
    assert state.decode(state.encode(edits)) == edits


def test_a_link_with_a_too_long_name_says_why_and_opens_the_default():
    at = opened(state.encode({"name": "A" * 1_000}))
    assert any("a name of 1,000 characters" in e for e in errors(at)), errors(at)
    shows_the_default(at)


def test_the_app_writes_no_link_it_would_refuse_to_open():
    import random

    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "scenario")
    words = random.Random(0).choices(["gpu", "rack", "token", "price", "hall", "lease"], k=1_500)
    widget(at.text_input, "Description").set_value(" ".join(words)).run()
    assert not at.exception, at.exception
    edits = at.query_params.get("edits")
    assert not edits or state.decode(edits[0] if isinstance(edits, list) else edits)


# --- pages run alone (report #5) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "script", sorted(p.name for p in (ROOT / "econ" / "ui" / "pages").glob("[!_]*.py"))
)
def test_a_page_script_run_alone_sets_up_the_session_instead_of_failing(script):
    """Streamlit runs a page's script alone when a fresh `econ app` server is first asked for a
    page address (it finds econ/ui/pages/ beside the main script): KeyError 'econ.data' before."""
    at = AppTest.from_file(str(ROOT / "econ" / "ui" / "pages" / script), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert at.title and at.title[0].value
    assert at.sidebar.selectbox[0].value == DEFAULT_SCENARIO  # the router's sidebar is there


# --- markdown (report #6) ----------------------------------------------------------------------------

IMAGE = "![x](http://127.0.0.1:9/pixel.png?leak=1)"
LINK = "[re-enter your SSO password](https://evil.example/login)"
INJECTED = {
    "name": "evil [n](https://evil.example/name)",
    "description": f"Plan {IMAGE} **Action required:** {LINK} https://evil.example/bare "
    "www.evil.example mail@evil.example <https://evil.example/auto> `code` $x$",
    "sources": {"market.price_usd_per_mtok": "[s](https://evil.example/source)"},
    # (the Power page's sizing quoted it raw in its warnings: review 27)
    "fleet": {
        "hardware": f"gb200-nvl72 [Session expired: sign in again](https://evil.example/login) {IMAGE}"
    },
}
INVALID = {
    "market": {"price_usd_per_mtok": f"{IMAGE} {LINK}"},
    "[k](https://evil.example/key)": 1,
}


def markdown_texts(node) -> list[str]:
    """Every text of the page that Streamlit renders as markdown: bodies of markdown, captions
    and alerts, labels and help of elements and widgets."""
    out = []
    proto = getattr(node, "proto", None)
    for field in ("body", "label", "help"):
        value = getattr(proto, field, None)
        if isinstance(value, str) and value:
            out.append(value)
    for child in (getattr(node, "children", None) or {}).values():
        out += markdown_texts(child)
    return out


LIVE = re.compile(r"\]\(|(?i:https?|mailto):|www\.|\w@\w|<https?")


def live_markup(text: str) -> str | None:
    """Markdown that would render as an image or a link (escaped characters are not)."""
    found = LIVE.search(re.sub(r"\\.", "", text))
    return found.group(0) if found else None


def assert_shown_as_typed(at: AppTest) -> None:
    texts = markdown_texts(at._tree)
    live = [t for t in texts if live_markup(t)]
    assert not live, live


def test_literal_escapes_every_markup_and_keeps_words():
    text = literal(INJECTED["description"] + " debt_share _i_ # h")
    assert live_markup(text) is None
    assert "debt_share" in text and "\\_i\\_" in text
    assert shown(text) == INJECTED["description"] + " debt_share _i_ # h"


STREAMLIT_MARKUP = (
    "A :red[redtext] B :material/warning: C :smile: D :+1: E :streamlit: F :small[sm] "
    "G :blue-badge[bb] H :foo[dropped] I :foo{#dropped .too} J ratio:small library:red@2 "
    "K a -> b -- c >= d <= e <-> f ~= g 12:30 key:value"
)
"""What Streamlit's markdown (1.6x) draws besides CommonMark: directives (colours, badges,
sizes; a known name alone is an empty span, an unknown one loses its label and attributes),
icons, emoji shortcodes and arrows between spaces."""


def streamlit_markup(source: str) -> str | None:
    """The first part of markdown source that Streamlit's markdown would draw (its frontend,
    StreamlitMarkdown: source.replaceAll(":material/", ...) before parsing; remark-directive's
    text directives, a colon not escaped then a name, which starts with anything but a space or
    a punctuation mark; remark-emoji and the icon plugins on the parsed text, where escapes are
    gone; arrows between spaces), or None."""
    patterns = [r":material/", r"(?<!\\):[^\s!-/:-@\[-`{-~]", r":[\w+-][\w+-]*:"]
    parsed = re.sub(r"\\(.)", r"\1", source)  # the text a parser leaves of the escapes
    for pattern, text in zip(patterns, [source, source, parsed], strict=True):
        found = re.search(pattern, text)
        if found:
            return found.group()
    found = re.search(r"(?:^|\s)(<->|->|<-|--|>=|<=|~=)(?:\s|$)", parsed)
    return found.group(1) if found else None


def test_literal_shows_streamlits_own_markup_as_typed():
    # a shared link's description drew "redtext" in red, a warning icon and a smiling face
    assert streamlit_markup(STREAMLIT_MARKUP) == ":material/"
    text = literal(STREAMLIT_MARKUP)
    assert streamlit_markup(text) is None, text
    assert shown(text) == STREAMLIT_MARKUP
    # a field's path and a colon before a space are left as they were
    plain = "market.price_usd_per_mtok, ok: done"
    assert literal(plain) == plain


@pytest.mark.parametrize("page", [name for name, _, _ in PAGES])
def test_a_name_description_and_source_from_a_link_are_shown_as_typed(page):
    at = opened(state.encode(INJECTED), page=page)
    assert not errors(at), errors(at)
    assert_shown_as_typed(at)
    if page == "results":  # the description is there, as text
        assert any("evil.example/login" in t for t in markdown_texts(at._tree))


def test_the_power_pages_sizing_warnings_show_the_scenarios_hardware_as_typed():
    # Review 27: "Using this fleet sets ... Still the scenario's, describing {fleet.hardware}
    # rather than ..." put a link's hardware in st.warning as markdown: a clickable "Session
    # expired" link, and an image fetched from wherever it named.
    at = opened(state.encode(INJECTED), page="power")
    quoted = [w.value for w in at.warning if "Still the scenario's, describing" in w.value]
    assert quoted and all("evil.example/login" in w for w in quoted), quoted
    assert (
        shown(quoted[0]).count(INJECTED["fleet"]["hardware"]) >= 2
    )  # (and "of ...", "priced for ...")
    assert_shown_as_typed(at)


@pytest.mark.parametrize("page", ["results", "scenario", "library"])
def test_values_echoed_in_validation_messages_are_shown_as_typed(page):
    at = opened(state.encode(INVALID), page=page)
    # the value is echoed (its first 80 characters, as ScenarioError quotes one)
    assert any("pixel.png?leak=1) [re-enter" in e for e in errors(at)), errors(at)
    assert_shown_as_typed(at)


# --- Monte Carlo files (report #1) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["empirical(/etc/passwd)", "  EMPIRICAL ( /etc/passwd , root )", "Empirical(x.csv)"]
)
def test_the_monte_carlo_refuses_a_distribution_that_reads_a_file(monkeypatch, text):
    from econ.analysis import distributions

    opened_files = []
    monkeypatch.setitem(distributions.PARSERS, "empirical", lambda *args: opened_files.append(args))
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    go(at, "risk")
    at.session_state["econ.mc_table"] = pd.DataFrame(
        [("market.price_decline_annual", text), ("utilization.share", "uniform(0.5, 0.8)")],
        columns=["path", "distribution"],
    )
    at.run()
    widget(at.button, "Run the Monte Carlo").click().run()
    assert not at.exception, at.exception
    assert any(
        "Market › Price decline" in e and "reads a file on the server" in e for e in errors(at)
    ), errors(at)
    assert not opened_files
    assert "econ.mc_result" not in at.session_state
    assert not any("root:" in e for e in errors(at))


def test_the_apps_monte_carlo_call_refuses_files_too():
    from econ.analysis.validation import BatchInputError
    from econ.scenario import Scenario

    with pytest.raises(BatchInputError, match="reads a file on the server"):
        risk.montecarlo(
            Scenario(), {"utilization.share": "empirical(/etc/passwd)"}, 10, 0, "random", print
        )


# --- a long quoted value (review 4, #1) -----------------------------------------------------------

OLD_NAME = r"(?:[a-z][a-z0-9_]*_[a-z0-9_]*|[a-z]+)"
OLD_NAMED_VALUE = (
    rf"\b({OLD_NAME}(?: x {OLD_NAME}){{0,3}})(=| is )({form._VALUE}(?: x {form._VALUE}){{0,3}})"
)
"""form._NAMED_VALUE with the name as it was written before: seconds of backtracking on a
60,000-character "a_a_..." value."""


@settings(max_examples=300)
@given(text=hs.text(alphabet="ab1_= is,;).'x", max_size=40))
def test_the_named_value_pattern_finds_what_it_found_before(text):
    def found(pattern):
        return [(m.span(), m.groups()) for m in re.finditer(pattern, text)]

    assert found(form._NAMED_VALUE) == found(OLD_NAMED_VALUE)


class Spy:
    """A compiled pattern that records the length of every text it is given."""

    def __init__(self, pattern: re.Pattern, seen: list[int]):
        self.pattern, self.seen = pattern, seen

    def __getattr__(self, name):
        method = getattr(self.pattern, name)

        def call(*args, **kwargs):
            self.seen.append(max((len(a) for a in args if isinstance(a, str)), default=0))
            return method(*args, **kwargs)

        return call


def long_method(chars: int) -> dict:
    return {"depreciation": {"method": ("a_" * chars)[:chars]}}


def test_a_long_quoted_value_reaches_the_message_patterns_cut(monkeypatch):
    seen: list[int] = []
    for name in ("_EXACTLY_ONE", "_NAMED_VALUE", "_FIELD_NAME", "_LABEL"):
        monkeypatch.setattr(form, name, Spy(getattr(form, name), seen))
    data = state.merge(read_toml(ready_made_scenarios()[DEFAULT_SCENARIO]), long_method(5_000))
    result = state.validate(data)
    assert not result.ok and seen
    assert max(seen) < 1_000, max(seen)  # the 5,000-character value is not read whole
    [message] = result.errors["depreciation.method"]
    assert message.startswith("unknown depreciation method 'a_a_a_")
    assert "... (5,002 characters); valid methods: straight_line" in message
    assert "a_" * 100 not in result.message  # nor shown whole in the scenario's message


@pytest.mark.parametrize(
    "message",
    [
        "unknown depreciation method 'macrs'; valid methods: straight_line, economic",
        "tranche 'senior': give exactly one of amount_usd and share_of_capex; neither is given",
        "the scenario's name isn't 'x'",
        'hardware "it\'s" is not in the catalog',
        "a path ending in 'C:\\\\' and an unclosed ' quote",
        "name 'x" + "y" * 70 + "' and 'z'",  # 80 characters with its quotes: kept whole
    ],
)
def test_quoted_values_shortened_leaves_ordinary_messages_alone(message):
    assert form.quoted_values_shortened(message) == message


def test_exactly_one_of_two_fields_is_said_by_the_form_s_labels():
    """The section's words (econ.scenario.section.exactly_one) in the form's: its labels, and
    the values in the form's units."""
    from econ.scenario.section import exactly_one

    both = exactly_one({"gpu_price_usd": 40_000.0, "system_price_usd": 3_100_000.0})
    neither = exactly_one({"gpu_price_usd": None, "system_price_usd": None})
    labels = "“Capex › GPU price [USD/GPU]” and “Capex › System price [USD]”"
    assert form.app_message("capex", both) == (
        f"{labels} are both given (40,000 USD/GPU and 3,100,000 USD); give exactly one: clear "
        "one of them"
    )
    said = form.app_message("capex", neither)
    assert said == f"{labels} are both empty; give exactly one of them"
    cents = exactly_one({"gpu_price_usd": 40_000.25, "system_price_usd": 3_100_000.0})
    assert "(40,000.25 USD/GPU and 3,100,000 USD)" in form.app_message("capex", cents)


def test_quoted_values_shortened_cuts_each_long_value_as_scenario_errors_do():
    long, its = "b" * 500, "it's " + "b" * 500  # repr quotes the second with "
    message = f"names {long!r} and {its!r} (a 'tag'); expected '{long}\\'s'"
    assert form.quoted_values_shortened(message) == (
        f"names {shortened(long)} and {shortened(its)} (a 'tag'); "
        f"expected '{'b' * 79}... (505 characters)"  # an escaped quote does not close it
    )


def test_a_155_character_link_with_a_63000_character_choice_shows_it_cut():
    edits = state.encode(long_method(63_000))
    assert len(edits) < 200  # the reviewer's link: 19 s of CPU at every rerun before
    at = opened(edits, scenario="deepseek-r1-gb200-nvl72", page="scenario")
    assert any("(63,002 characters)" in e for e in errors(at)), errors(at)
    assert not any("a_" * 100 in e for e in errors(at))


# --- links that broke the Scenario page (review 4, #2) --------------------------------------------

CRAFTED = [
    # (edits, what the page says; the reviewer's first link verbatim: sources = [1, 2])
    ("eNqrVirOLy1KTi1Wsoo21DGKrQUANuwFwg", "“Sources” holds a list; expected a table of names"),
    (
        state.encode({"throughput": {"steps": [{"month": "a"}]}}),
        "“Throughput › Steps”, row 1, Month: 'a' is not a number; expected a whole number",
    ),
    (
        state.encode({"capex": {"payments": [{"month": 1, "share": "abc"}]}}),
        "“Capex › Payments”, row 1, Share [%]: 'abc' is not a number; expected a number",
    ),
    (
        state.encode({"throughput": {"measured": {"catalog_query": [1]}}}),
        "“Throughput › Measured › Catalog query” holds a list; expected a table of names",
    ),
]


@pytest.mark.parametrize(("edits", "said"), CRAFTED)
def test_a_link_with_a_value_of_the_wrong_type_shows_an_error_not_a_traceback(edits, said):
    at = opened(edits, scenario="deepseek-r1-gb200-nvl72", page="scenario")
    assert any(said in e for e in errors(at)), errors(at)
    before = state.merge(
        read_toml(ready_made_scenarios()["deepseek-r1-gb200-nvl72"]), state.decode(edits)
    )
    assert at.session_state[state.DATA] == before  # kept as the link gave it, not overwritten


def test_a_grid_keeps_a_cell_that_is_not_a_number_and_says_so():
    steps = form.find("throughput.steps")
    frame = pd.DataFrame([{"month": "a", "gain": 19.8}, {"month": 3, "gain": "x"}])
    problems: list[str] = []
    rows = form._rows_from_frame(steps, frame, problems)
    assert rows == [{"month": "a", "gain": 0.198}, {"month": 3, "gain": "x"}]
    assert problems == [
        "“Throughput › Steps”, row 1, Month: 'a' is not a number; expected a whole number",
        "“Throughput › Steps”, row 2, Gain [%]: 'x' is not a number; expected a number",
    ]


def test_a_page_that_fails_shows_why_without_a_traceback(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(form.Form, "section", broken)
    at = opened(state.encode({}), page="scenario")
    assert "Showing this page failed (RuntimeError): boom" in errors(at), errors(at)
    go(at, "results")  # the other pages still work
    assert not errors(at), errors(at)


# --- server paths (review 4, #3) ------------------------------------------------------------------


@pytest.fixture
def elsewhere_temp(monkeypatch, tmp_path):
    """A temporary folder that is not a parent of models/: app_text's removal of upload folders
    (a folder inside the system's temporary folder) hid a checkout placed inside that folder, and
    would not hide one anywhere else."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_app_text_names_files_of_the_models_folder_from_models(elsewhere_temp):
    folder = models_dir()
    for shown_folder in {str(folder), str(folder.resolve())}:
        text = compute.app_text(f"throughput.measured: {shown_folder}/hardware.toml: a TOML file")
        assert text == "throughput.measured: models/hardware.toml: a TOML file"


def test_a_link_naming_a_models_file_shows_no_server_path(elsewhere_temp):
    edits = state.encode({"throughput": {"measured": {"curve": "../hardware.toml"}}})
    at = opened(edits, scenario="deepseek-r1-gb200-nvl72")
    said = [e for e in errors(at) if "hardware.toml" in e]
    assert said and all("throughput.measured: models/hardware.toml: " in e for e in said), said
    folder = models_dir()
    assert not any(str(folder) in e or str(folder.resolve()) in e for e in errors(at))
