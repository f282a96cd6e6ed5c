"""What every page shares: the sidebar (scenario picker, main inputs, display units, share link),
the current scenario's validation for this run, and the guard pages use before projecting.
"""

from __future__ import annotations

import copy
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from econ.scenario import Scenario, ScenarioError
from econ.text import neutralize
from econ.ui import compute, state
from econ.ui.fmt import COUNT_WORDS, MONEY_SCALES, header, literal
from econ.ui.form import Form, find, path_label, whole_number

VALIDATION = "econ.validation"

MAIN_INPUTS = (
    "fleet.racks",
    "fleet.gpu_count",
    "throughput.tokens_per_s_per_gpu",
    "utilization.share",
    "depreciation.life_years",
    "power.price_usd_per_kwh",
    "facility.colo_usd_per_kw_month",
    "market.price_usd_per_mtok",
    "market.price_decline_annual",
    "financing.debt_share",
    "financing.debt_rate_annual",
    "financing.discount_rate_annual",
)
"""The levers an operator moves most (the Scenario page edits every field), each labelled as
every message names it: its section and the form's label (`path_label`, "Depreciation › Life
[years]"), the sidebar having no tab to say the section (tests/test_app_review23.py)."""

STACK_SETS = ("financing.debt_share", "financing.debt_rate_annual")
"""Levers a capital stack (financing.tranches) replaces: its tranches set the debt and its cost,
and a debt share beside them makes the scenario invalid."""


def stack_caption(tranches) -> str:
    """What sets the financing of a scenario with a capital stack, and where to edit it."""
    parts = []
    for tranche in tranches if isinstance(tranches, list) else ():
        if not isinstance(tranche, dict):
            continue
        name = literal(str(tranche.get("name") or tranche.get("type") or "tranche"))
        share = tranche.get("share_of_capex")
        amount = tranche.get("amount_usd")
        if isinstance(share, int | float) and not isinstance(share, bool):
            parts.append(f"{name} {share:.0%} of capex")
        elif isinstance(amount, int | float) and not isinstance(amount, bool):
            parts.append(f"{name} {amount:,.0f} USD")
        else:
            parts.append(f"{name} (the rest)" if tranche.get("type") == "equity" else name)
    listed = f" ({'; '.join(parts)})" if parts else ""
    return (
        ":material/account_balance: Debt share and loan rate: this scenario's capital stack sets "
        f"its financing{listed}, so these levers do not apply. Edit the tranches on the Scenario "
        "page, Financing tab, “Tranches (TOML)”."
    )


PICKER = "econ.picker"
PAGES = {}
"""Page name -> st.Page, filled by the router (for links between pages)."""


@dataclass
class Current:
    """The current scenario of this run: valid (scenario and its TOML text) or why not."""

    validation: state.Validation

    @property
    def scenario(self) -> Scenario | None:
        return self.validation.scenario

    @property
    def text(self) -> str:
        return state.scenario_text(self.validation.scenario)


def validation() -> state.Validation:
    """The current scenario validated once per run (callbacks have already applied the edits)."""
    ss = st.session_state
    if VALIDATION not in ss or ss[VALIDATION][0] is not ss.get("econ.run"):
        ss[VALIDATION] = (ss.get("econ.run"), state.current())
    return ss[VALIDATION][1]


def money() -> str:
    return st.session_state.get(state.MONEY, "USD")


ROUTING = "econ.routing"
"""Set while the router (econ.ui.streamlit_app.main) runs a page."""


def run_page(render: Callable[[], None] | None) -> None:
    """What a page script does when run: its `render()` when the router runs it, else the
    router itself, which sets up the session (the scenario from the link, the sidebar) and runs
    the page the address names.

    Streamlit finds econ/ui/pages/ beside the script `econ app` runs and, until a first session
    has called st.navigation, serves a page address (/scenario) by running that page's script
    alone; without this the first visitor after a restart met a KeyError instead of the page.

    A page that fails shows why as `st.error` (compute.failed, as for a library call), never
    Streamlit's traceback, which names the server's files; st.rerun and st.stop pass through.
    """
    if st.session_state.get(ROUTING):
        if render is not None:
            try:
                render()
            except Exception as exc:  # noqa: BLE001 - a reason on the page, never a traceback
                compute.failed(exc, "Showing this page")
        return
    from econ.ui.streamlit_app import main

    main()


def page_link(name: str, label: str, icon: str | None = None, where=None) -> None:
    where = where if where is not None else st
    page = PAGES.get(name)
    if page is not None:
        where.page_link(page, label=label, icon=icon)


def require_scenario(what: str = "this page") -> Current | None:
    """The valid current scenario, or an st.error saying why there is none (then None)."""
    v = validation()
    if v.ok:
        return Current(v)
    st.error(
        f"The scenario is not valid, so {what} cannot be computed. Your inputs are kept; fix "
        f"them here or on the Scenario page.\n\n{literal(v.message)}",
        icon=":material/error:",
    )
    page_link("scenario", "Open the Scenario page", ":material/tune:")
    return None


# --- sidebar ------------------------------------------------------------------------------------


def _picker_options() -> list[str]:
    saved = st.session_state.get(state.SAVED, {})
    return list(state.ready_made()) + [state.SAVED_PREFIX + n for n in saved]


def _pick() -> None:
    choice = st.session_state.get(PICKER)
    if not choice:
        return
    try:
        if choice.startswith(state.SAVED_PREFIX):
            state.load_saved(choice.removeprefix(state.SAVED_PREFIX))
        else:
            state.load_ready_made(choice)
    except (ScenarioError, KeyError, tomllib.TOMLDecodeError) as exc:
        st.session_state["econ.pick_error"] = str(exc)


PAINTED = "econ.painted"
"""Set once a run of this session has finished (the router, after the page)."""
FIRST_PAINT_S = 0.3
"""Seconds a browser session's first run leaves the browser to draw the page's first figures
before the rest of the page is computed (first_figures_drawn)."""


def first_figures_drawn() -> None:
    """Called by a page once its first figures are drawn (the Results page after its headline
    tiles): on a browser session's first run, waits FIRST_PAINT_S.

    That run's browser is still loading the code of each kind of element as it meets one, and
    on a machine of two cores the rest of the page (charts, tables, the sidebar's checks: 1-2 s
    of the server's work) competed with it for the processor, so the headline figures showed
    0.4-2.5 s after the server had sent them. Left the processor first, the browser draws them
    at once, and the whole page is drawn no later: the browser does that work either way
    (measured by benchmarks/bench_cold.py; docs/app.md). No wait in AppTest or other runs
    without a browser (st.context.url empty), nor after a session's first run."""
    if st.context.url and not st.session_state.get(PAINTED):
        time.sleep(FIRST_PAINT_S)


def sidebar() -> None:
    ss = st.session_state
    bar = st.sidebar
    options = _picker_options()
    name = ss.get(state.BASE_NAME, "")
    wanted = name if name in options else None
    if ss.get(PICKER) != wanted:
        ss[PICKER] = wanted
    bar.selectbox(
        "Ready-made scenario",
        options,
        index=None,
        key=PICKER,
        placeholder=name or "choose a scenario",
        on_change=_pick,
        help="Start from a ready-made scenario (models/scenarios) or one kept in this session. "
        "Upload your own TOML on the Scenario page.",
    )
    if "econ.pick_error" in ss:
        bar.error(literal(ss.pop("econ.pick_error")), icon=":material/error:")
    v = validation()
    shown = v.scenario or state.shown()
    if v.ok:
        bar.caption(literal(shown.description or shown.name))
        ss[CHECKS_SLOT] = (bar.empty(), shown)  # input_checks fills it once the page is drawn
    else:
        ss.pop(CHECKS_SLOT, None)
        count = sum(len(m) for m in v.errors.values()) or 1
        bar.error(
            f"{count} problem{'s' if count > 1 else ''} in the scenario; see the Scenario page.",
            icon=":material/error:",
        )
    if state.edited():
        bar.caption(":material/edit: edited; the Scenario page can reset or save it")

    bar.subheader("Main inputs")
    form = Form("side", v.errors)
    racks_given = state.get_path(ss[state.DATA], "fleet.racks", None) is not None
    tranches = state.get_path(ss[state.DATA], "financing.tranches", None)
    for path in MAIN_INPUTS:
        if path == "fleet.racks" and not racks_given:
            continue
        if path == "fleet.gpu_count" and racks_given:
            continue
        if path in STACK_SETS and tranches:
            if path == STACK_SETS[0]:
                bar.caption(stack_caption(tranches))
            continue
        f = find(path)
        if f is not None:
            form.widget(f, bar, label=path_label(path))

    with bar.expander(
        "Display and sharing",
        icon=":material/settings:",
        key=keep(SHARE_OPEN, False),
        on_change=_keep_open,
    ):
        st.radio(
            "Money in",
            list(MONEY_SCALES),
            key=state.MONEY,
            horizontal=True,
            help="Scale of amounts of money in charts and tables (NPV, capex, revenue, debt); "
            "prices and amounts per unit (per GPU, per rack, per M tokens) stay in USD.",
        )
        st.caption(
            "The address bar holds this scenario (the ready-made base and your edits): copy it to "
            "share or bookmark it."
        )
        ss[SHARE_SLOT] = st.empty()


SHARE_OPEN = "econ.share_open"
SHARE_SLOT = "econ.share_slot"
CHECKS_SLOT = "econ.checks_slot"


def input_checks() -> None:
    """The sidebar's warnings on inputs no real deployment has, drawn in the slot the sidebar left
    under the scenario's description. Called after the page: the first check reads the whole MLPerf
    catalog (0.1-0.2 s), which the page's figures need not wait for."""
    slot, shown = st.session_state.pop(CHECKS_SLOT, (None, None))
    if slot is None:
        return
    from econ.ui.checks import sanity_warnings

    odd = sanity_warnings(shown)
    if odd:
        slot.warning(
            "Check these inputs:\n" + "\n".join(f"- {w}" for w in odd),
            icon=":material/report:",
        )


def _keep_open() -> None:
    """The expander's open state is kept under SHARE_OPEN (so an input change does not close it)."""


def share_box(page_path: str, params: dict[str, str]) -> None:
    """Fill the sidebar's share box with the link of this run's state (after the page ran and its
    edits were applied), so it always equals the address bar."""
    slot = st.session_state.pop(SHARE_SLOT, None)
    if slot is not None and st.context.url:
        slot.code(state.share_url(page_path, params), language=None, wrap_lines=True)


STYLE = """
<style>
/* Metric tiles: values, labels and changes wrap instead of being cut ("257,300,…"), shrink on
   narrow screens, and columns of tiles wrap to the next line when a tile would be narrower than
   150 px; on narrow screens the open sidebar overlays the page instead of squeezing it. */
[data-testid="stMetricValue"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] .stMarkdownEllipsis,
[data-testid="stMetricDelta"] .stMarkdownEllipsis,
[data-testid="stMetricValue"] > div, [data-testid="stMetricLabel"] > div {
  overflow: visible !important; text-overflow: clip !important; white-space: normal !important;
}
[data-testid="stMetricValue"] p, [data-testid="stMetricLabel"] p, [data-testid="stMetricDelta"] p {
  white-space: normal !important; overflow-wrap: anywhere;
}
[data-testid="stMetricDelta"] { height: auto !important; }
[data-testid="stMetricValue"] { font-size: clamp(1.15rem, 0.9rem + 1.2vw, 2.1rem); line-height: 1.15; }
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stMetric"]) {
  flex-wrap: wrap;
}
[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] [data-testid="stMetric"])
  > [data-testid="stColumn"] { min-width: 150px; }
@media (max-width: 900px) {
  section[data-testid="stSidebar"][data-collapsed="false"] { position: fixed; z-index: 999990; }
}
[data-testid="stSidebarUserContent"] [data-testid="stElementContainer"]:has(.econ-narrow) {
  display: none;
}
/* Upload boxes: Streamlit's line under the button states the server's upload limit, not the
   box's; each box's label states its own, which the page checks (upload_problem). */
[data-testid="stFileUploaderDropzoneInstructions"] { display: none !important; }
/* Print (any page): no sidebar, header or toolbar; the page full width; tiles, charts and tables
   not cut across pages. */
@media print {
  section[data-testid="stSidebar"], header[data-testid="stHeader"], [data-testid="stToolbar"],
  [data-testid="stSidebarCollapsedControl"], [data-testid="stStatusWidget"],
  [data-testid="stBaseButton-secondary"], [data-testid="stDownloadButton"],
  [data-testid="stFileUploader"] { display: none !important; }
  [data-testid="stMain"], [data-testid="stMainBlockContainer"], .block-container {
    margin: 0 !important; padding: 0.5cm !important; max-width: 100% !important;
    width: 100% !important; overflow: visible !important;
  }
  [data-testid="stMetric"], [data-testid="stVegaLiteChart"], [data-testid="stTable"], tr,
  [data-testid="stAlert"] { break-inside: avoid; }
  [data-testid="stDataFrame"], [data-testid="stTable"], [data-testid="stDataFrameResizable"] {
    overflow: visible !important; max-height: none !important; height: auto !important;
  }
}
</style>
"""


NARROW_PX = 900
"""Below this window width the sidebar starts collapsed. Streamlit's own "auto" collapses it only
at 768 px and below (its `md` breakpoint), which leaves 800 px screens with half the page covered."""

NARROW_SCRIPT = f"""
<span class="econ-narrow"></span>
<script>
(() => {{
  // Once per page load, and only when the user has not opened or closed the sidebar themselves
  // (Streamlit keeps that choice in localStorage under stSidebarCollapsed-...).
  if (window.econNarrowDone || window.innerWidth >= {NARROW_PX}) return;
  window.econNarrowDone = true;
  const chosen = () => Object.keys(localStorage).filter(k => k.startsWith("stSidebarCollapsed-"));
  if (chosen().length) return;
  const collapse = (tries) => {{
    const bar = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && button && bar.dataset.collapsed === "false") {{
      button.click();
      // not the user's choice: a wider window later opens the sidebar as Streamlit would
      setTimeout(() => chosen().forEach(k => localStorage.removeItem(k)), 0);
    }} else if (tries > 0 && !(bar && bar.dataset.collapsed === "true")) {{
      setTimeout(() => collapse(tries - 1), 100);
    }}
  }};
  collapse(50);
}})();
</script>
"""


NARROW_SCRIPT_SENT = "econ.narrow_script_sent"


def style() -> None:
    """The app's stylesheet: tiles that wrap, the sidebar on narrow screens, the print view; and
    the sidebar collapsed when the page opens in a window narrower than NARROW_PX."""
    st.html(STYLE)
    # The script acts once, when the page loads (a new browser tab is a new session); drawn at
    # every rerun it cost the browser about 0.4 s per rerun (benchmarks/bench_cold.py).
    if not st.session_state.get(NARROW_SCRIPT_SENT):
        st.session_state[NARROW_SCRIPT_SENT] = True
        st.sidebar.html(NARROW_SCRIPT, unsafe_allow_javascript=True)


def notices() -> None:
    ss = st.session_state
    if state.NOTICE in ss:
        st.toast(literal(ss.pop(state.NOTICE)), icon=":material/save:")
    if state.BROWSER_RESET in ss:
        st.warning(
            f"The browser sent {ss.pop(state.BROWSER_RESET)} fields back empty at once, as it "
            "does when a click lands while the page is still updating; they were not applied, "
            "and the scenario is as it was. Check that your last edit shows.",
            icon=":material/undo:",
        )
    if state.LINK_ERROR in ss:
        st.error(
            f"{literal(ss.pop(state.LINK_ERROR))}. The default scenario is shown instead.",
            icon=":material/link_off:",
        )


KEPT = "econ.kept"


def keep(key: str, default=None) -> str:
    """Key of a page widget whose value should survive page switches (Streamlit drops the state
    of widgets that are not drawn): seeds it from the session's copy; `remember_all` saves it."""
    ss = st.session_state
    store = ss.setdefault(KEPT, {})
    if key not in ss:
        ss[key] = store.get(key, default)
    store.setdefault(key, ss[key])
    ss.setdefault("econ.kept_keys", set()).add(key)
    return key


def follow(key: str, default, options: list | None = None) -> str:
    """Key of a kept widget seeded with the scenario's own value (`default`; None for no
    choice): the widget follows the scenario when that value changes (another scenario, a Use
    that set it), and keeps the user's choice while it does not. With `options`, a kept value
    that is not one of them gives way to the default (None where that is not one either)."""
    ss = st.session_state
    keep(key, default)
    marker = key + ".for"
    fits = options is None or default in options
    if marker not in ss or ss[marker] != default:
        ss[marker] = default
        ss[key] = default if fits else None
    elif options is not None and ss[key] is not None and ss[key] not in options:
        ss[key] = default if fits else None
    return key


def whole_number_input(
    where,
    label: str,
    *,
    key: str,
    min_value: int | None = None,
    max_value: int | None = None,
    step: int = 1,
    within: tuple[int, int] | None = None,
    **kwargs,
) -> int | None:
    """A number box for a whole number: its value as an int; None when empty, or when refused
    with a message under the box naming it ("“Step month”: 2.5 is not a whole number; expected
    a whole number"), also when outside `within` (checked here, not by the box, so that 0 is
    refused in words rather than left at the box's minimum; every refusal then names the range:
    "“Seed”: 1e+20 is beyond 9,007,199,254,740,991, ...; expected a whole number from 0 to
    9,007,199,254,740,991"). A decimal box that shows no decimals, as the scenario form's:
    Streamlit's whole-number box reads "1e12" as 1 (econ.ui.form.whole_number)."""
    value = where.number_input(
        label,
        value=None,
        step=float(step),
        format="%.0f",
        min_value=None if min_value is None else float(min_value),
        max_value=None if max_value is None else float(max_value),
        key=key,
        **kwargs,
    )
    if value is None:
        return None
    expected = "a whole number"
    if within is not None:
        expected = f"a whole number from {within[0]:,} to {within[1]:,}"
    try:
        number = whole_number(value)
        if within is not None and not within[0] <= number <= within[1]:
            past = f"below {within[0]:,}" if number < within[0] else f"above {within[1]:,}"
            raise ValueError(f"{number:,} is {past}; expected {expected}")
    except ValueError as exc:
        # whole_number's own "expected ..." gives way to the box's range
        said = str(exc).rsplit("; expected ", 1)[0]
        where.error(literal(f"“{label}”: {said}; expected {expected}"), icon=":material/error:")
        return None
    return number


EDITED_SUFFIX = "-edited-"
"""What an edited scenario's downloads carry after its name, before the start of its SHA-256."""


def export_stem(scenario: Scenario) -> str:
    """The start of the current scenario's download names: its name, and when it is edited
    (`state.edited`) "-edited-" and the first 8 hex digits of its SHA-256, the hash stamped in
    the files (`econ.provenance.scenario_sha256`): "deepseek-r1-gb200-nvl72-edited-3f2a1b9c", so
    that an edited scenario's files neither overwrite nor pass for the unedited one's, and two
    sets of edits differ."""
    from econ.provenance import scenario_sha256

    stem = compute.file_stem(scenario.name)
    if state.edited():
        stem += EDITED_SUFFIX + scenario_sha256(scenario)[:8]
    return stem


def refused(key: str, value) -> bool:
    """True when a `whole_number_input` box holds a value it refused (its message is under it),
    False when it is empty or taken."""
    return value is None and st.session_state.get(key) is not None


def set_kept(key: str, value) -> None:
    """Set a kept widget's value (`keep`) from a callback, in the page's state and the session's
    copy alike, so that neither brings back the old one."""
    st.session_state[key] = value
    st.session_state.setdefault(KEPT, {})[key] = value


def remember_all() -> None:
    ss = st.session_state
    store = ss.setdefault(KEPT, {})
    for key in ss.get("econ.kept_keys", ()):
        if key in ss:
            store[key] = ss[key]


def use_throughput(value: float, source: str) -> None:
    """Callback: make `value` the scenario's fixed throughput, citing `source`."""
    from econ.ui.form import mark_edited

    data = st.session_state[state.DATA]
    state.set_path(data, "throughput.tokens_per_s_per_gpu", float(value))
    state.set_path(data, "throughput.source", source)
    changed = ["throughput.source"]
    for name in ("measured", "simulated"):
        if state.get_path(data, f"throughput.{name}", None) is not None:
            state.set_path(data, f"throughput.{name}", None)
            changed.append(f"throughput.{name}")
    # cited as a sidebar edit is (old value and source kept), naming where the figure came from;
    # the description's edit note then lists it
    mark_edited("throughput.tokens_per_s_per_gpu", f"from the Throughput page: {source}")
    for path in changed:
        mark_edited(path, "from the Throughput page")
    st.session_state[state.NOTICE] = f"Throughput set to {value:,.1f} tokens/s per GPU ({source})."


_WORDS = "|".join(word for _, word in COUNT_WORDS)
_NUMBER = rf"[+-]?\d[\d,]*(\.\d+)?(e[+-]?\d+)?(%|x| pts| ({_WORDS}))?"
_NUMBER_TEXT = re.compile(rf"{_NUMBER}( to {_NUMBER})?")
"""A number as fmt writes it with its sign ("-0.0011", "+16,520", "+0.4 pts", "-12.5%"), or a
range of two ("+1.0% to +3.5%"): a spreadsheet reads it as a number (or an error), never as a
call, so it keeps its sign."""


def _cell_text(value):
    """`value` neutralized for a spreadsheet (econ.text.neutralize) unless a signed number."""
    if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value):
        return value
    return neutralize(value)


def spreadsheet_safe(frame):
    """`frame` with formula-like text neutralized in its text cells, column labels and index
    (`econ.export.safe_text`, signed numbers as fmt writes them kept): what Streamlit's table
    toolbar writes with "Download as CSV" (the frame's own column names, not the headers shown).
    A frame with no such text comes back as it is, so a normal table looks unchanged."""
    from econ.export import safe_text

    return safe_text(frame, cell=_cell_text)


def _safe_data(data):
    """`data` (a frame or a pandas Styler) with spreadsheet_safe text; a Styler keeps its
    styles and formats, which pandas holds by position."""
    from pandas.io.formats.style import Styler

    if not isinstance(data, Styler):
        return spreadsheet_safe(data)
    safe = spreadsheet_safe(data.data)
    if safe is data.data:
        return data
    styled = copy.copy(data)  # (Styler's shallow copy: its styles, formats and hidden parts)
    styled.data, styled.columns, styled.index = safe, safe.columns, safe.index
    return styled


def table(data, rows: int | None = None, keep=(), where=None, **kwargs) -> None:
    """st.dataframe with sentence-case headers (fmt.header; the frame's own names stay, for code
    that reads them; names in `keep`, such as scenario names, as they are) and, given `rows`,
    tall enough to show that many rows without scrolling; in the container `where` if given.

    Its text is spreadsheet_safe: the table's toolbar downloads it as CSV, and a scenario name
    from a shared link can be formula-like; `column_config` is given by the names as passed."""
    from pandas.io.formats.style import Styler

    data = _safe_data(data)
    frame = data.data if isinstance(data, Styler) else data
    keep = {_cell_text(name) for name in keep}
    config = {
        name: st.column_config.Column(header(name))
        for name in frame.columns
        if name not in keep and header(name) != str(name)
    }
    given = kwargs.pop("column_config", {}) or {}
    config.update({_cell_text(name): value for name, value in given.items()})
    if rows is not None:
        kwargs.setdefault("height", table_height(rows))
    if isinstance(kwargs.get("height"), int):
        # rows of a known height: Streamlit's own follows the theme's font (33 px at its 15 px),
        # and a height counted in 35 px rows left an empty row under the last
        kwargs.setdefault("row_height", ROW_PX)
    (where or st).dataframe(data, column_config=config or None, **kwargs)


ROW_PX = 35
"""Height of a table's row and of its header [px], as `table` sets them."""


def table_height(rows: int) -> int:
    """Height of a table showing `rows` rows and its header without scrolling [px]."""
    return 3 + ROW_PX * (rows + 1)


def upload_limit_mb(limit_bytes: int | None = None) -> int:
    """An upload limit in whole MB (1,048,576 bytes), as a box's label states it: the benchmark
    files' unless `limit_bytes` is given."""
    limit = compute.MAX_UPLOAD_BYTES if limit_bytes is None else limit_bytes
    return max(1, limit // (1024 * 1024))


def upload_problem(file, limit_bytes: int, what: str, suffixes: tuple[str, ...] = ()) -> str | None:
    """Why the app does not read an uploaded file, naming it: larger than its box's limit, or
    (where `suffixes` are given, e.g. (".toml",)) not of a type the box reads; None if neither.

    The boxes leave both checks to the app: a box given its own limit or types (max_upload_size,
    type) has the browser refuse a file unsent, marked only by a red "!" whose tooltip says why,
    while the page keeps showing the last file read. Each box takes what the server takes
    (server.maxUploadSize in .streamlit/config.toml), and the page says in an st.error what is
    wrong with the file."""
    from pathlib import Path

    from econ.files import size_text

    name = Path(file.name).name
    suffix = Path(name).suffix.lower()
    if suffixes and suffix not in suffixes:
        kind = f"a {suffix} file" if suffix else "a file without a suffix"
        return f"{name}: {kind}; expected {' or '.join(suffixes)} ({what}); nothing was read"
    if file.size > limit_bytes:
        size, limit = size_text(file.size), size_text(limit_bytes)
        (size_number, size_unit), (limit_number, limit_unit) = size.split(), limit.split()
        if size_unit == limit_unit and float(size_number) <= float(limit_number):
            # "1.0 MB" over "1 MB" reads as no more: in bytes (numbers in one unit compared)
            size, limit = f"{file.size:,} bytes", f"{limit} ({limit_bytes:,} bytes)"
        return f"{name}: {size} is larger than the {limit} limit for {what}; nothing was read"
    return None
