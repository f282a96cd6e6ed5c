"""Market: GPU-hour rental index series by generation and contract term (one line per series,
never averaged across publishers), each extended beyond its last point by its fitted decay with the
error band, the scenario's own price per GPU-hour against them, pricing the scenario from a series,
and an index file of your own (read by the reader `econ market import` uses).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from pathlib import Path

import streamlit as st

from econ.scenario import ScenarioError
from econ.ui import charts, common, compute, state
from econ.ui.fmt import format_value, literal

GPUS = "econ.market_gpus"
TERMS = "econ.market_terms"
SERIES = "econ.market_series"
BAND = "econ.market_band"
OWN = "econ.market_own"
SHOWN_INDEX = "econ.market_index"
UPLOAD = "econ.market_upload"
UPLOADED = "econ.market_uploaded"
UPLOAD_ERROR = "econ.market_upload_error"
USE_CURVE = "econ.market_use_curve"
USE_DECLINE = "econ.market_use_decline"
USE_FLOOR = "econ.market_use_floor"
USE_FIRST = "econ.market_use_first_contract"
BEFORE = "econ.market_before"

MAX_INDEX_BYTES = 1024 * 1024
"""Largest index file the page reads (the shipped index of 35 points is 5 kB)."""
SHIPPED, MINE, BOTH = "Shipped index", "Your file", "Both"
SCENARIO_LINES = {
    "market_rental_usd_per_gpu_hour": "This scenario: market rental price",
    "contract_usd_per_gpu_hour": "This scenario: contract price",
    "spot_usd_per_gpu_hour": "This scenario: spot GPU-hours, earned per GPU-hour in service",
    "token_usd_per_gpu_hour": "This scenario: tokens, earned per GPU-hour in service",
}
PUBLISHED, FITTED, OWN_PATH = (
    "published points",
    "fitted decay (beyond the last point)",
    "this scenario",
)
SERIES_PATHS = (
    "market.rental_series",
    "market.rental_series_gpu",
    "market.rental_series_term_months",
    "market.rental_usd_per_gpu_hour",
    "market.rental_table",
    "market.rental_decline_annual",
    "market.rental_floor_usd_per_gpu_hour",
    "market.contract_usd_per_gpu_hour",
)
"""Fields "Use this series" may change (and "Back to the rental price before" restores)."""


# --- formatting (this page's own; econ/ui/fmt.py holds the app-wide ones) ---------------------


def term_label(term: int) -> str:
    return "on-demand" if term == 0 else f"{term}-month contracts"


def curve_label(key: tuple, uploaded: bool = False) -> str:
    """(series, gpu, term[, from your file]) as the legend names it."""
    series, gpu, term = key[:3]
    mine = uploaded or (len(key) > 3 and key[3])
    return f"{series} · {gpu} · {term_label(term)}" + (" (your file)" if mine else "")


def series_name(key: tuple) -> str:
    return key[0] + (" (your file)" if len(key) > 3 and key[3] else "")


def usd_hour(value) -> str:
    return "n/a" if value is None or value != value else f"{value:,.2f}"


def in_app_words(message: str) -> str:
    """A library message with the scenario's fields named by their form labels, not their paths."""
    from econ.ui.form import find

    def label(name: str) -> str | None:
        found = find(f"market.{name}")
        return f"“{found.label}”" if found is not None else None

    def dotted(match: re.Match) -> str:
        return label(match.group(1)) or match.group(0)

    def bare(match: re.Match) -> str:
        return label(match.group(0)) or match.group(0)

    text = re.sub(
        r", for Monte Carlo: --dist market\.(\w+)=(.*)$",
        r"; Monte Carlo (Risk page) can sample market.\1 as \2",
        compute.app_text(message),
    )
    text = re.sub(r"\bmarket\.([a-z_]+)", dotted, text)
    return re.sub(r"\b(?:rental|contract|spot)_[a-z_]+\b", bare, text)


# --- library calls, cached ---------------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def shipped_points():
    from econ.rental_index import load_catalog

    return load_catalog()


@st.cache_data(max_entries=8, show_spinner=False)
def uploaded_points(name: str, content: bytes):
    """An uploaded index file read as `econ market import` reads one (econ.rental_index)."""
    from econ.rental_index import parse_index_bytes

    return parse_index_bytes(content, name)


@st.cache_data(max_entries=64, show_spinner=False)
def extension(curve, until: dt.date):
    from econ.price_paths import extension as extend

    return extend(curve, until)


@st.cache_data(max_entries=32, show_spinner=False)
def price_paths(text: str):
    from econ.price_paths import scenario_price_paths
    from econ.scenario import loads

    return scenario_price_paths(loads(text), compute.projection(text)["monthly"])


@st.cache_data(max_entries=32, show_spinner=False)
def series_check(data_text: str) -> str:
    """The rental price a candidate scenario would take from its series: its warning text, or
    RentalIndexError / ScenarioError saying why the series cannot price it."""
    from econ.rental_index import resolve_series
    from econ.scenario.io import parse_toml

    scenario = state.validate_in_app(parse_toml(data_text))
    found = resolve_series(
        scenario.market, scenario.fleet.hardware, scenario.start_date, scenario.horizon
    )
    return found.warning


# --- the index shown ---------------------------------------------------------------------------


def _index_uploaded() -> None:
    ss = st.session_state
    file = ss.get(UPLOAD)
    ss.pop(UPLOADED, None)  # no figure of an earlier file stays beside this one's message
    if file is None:
        return
    name = Path(file.name).name
    problem = common.upload_problem(file, MAX_INDEX_BYTES, "rental index files", (".csv", ".txt"))
    if problem:
        ss[UPLOAD_ERROR] = problem
        return
    content = file.getvalue()
    if not content.strip():
        ss[UPLOAD_ERROR] = f"{name}: the file is empty; expected a rental index CSV"
        return
    ss[UPLOADED] = (name, content)
    _reset(TERMS, SERIES)  # the file's series of the GPUs shown join them, not the last pick


def index_curves() -> dict:
    """The curves of the index the user chose to see, keyed (series, gpu, term, from your file):
    a curve of the shipped index and one of your file with the same name stay two curves."""
    from econ.rental_index import curves

    def tagged(points, mine: bool) -> dict:
        return {(*key, mine): curve for key, curve in curves(points).items()}

    ss = st.session_state
    with st.expander("Your own index file", icon=":material/upload_file:"):
        st.file_uploader(
            f"Rental index CSV ({MAX_INDEX_BYTES // (1024 * 1024)} MB at most)",
            key=UPLOAD,
            on_change=_index_uploaded,
            help="One dated point a row, with the header date, series, gpu, term_months, "
            "usd_per_gpu_hour, source (series as PUBLISHER/INDEX, term 0 = on-demand), checked "
            "as `econ market import` checks it. It is shown beside the shipped index; a "
            "scenario can name only a series of the shipped index.",
        )
    if UPLOAD_ERROR in ss:
        st.error(literal(ss.pop(UPLOAD_ERROR)), icon=":material/error:")
    shipped = compute.attempt(shipped_points, "Shipped rental index") or ()
    mine = ()
    if UPLOADED in ss:
        name, content = ss[UPLOADED]
        mine = compute.attempt(lambda: uploaded_points(name, content), "Rental index file") or ()
        if mine:
            from econ.labels import counted

            st.success(
                f"{literal(name)}: {counted(len(mine), 'point')} read and checked.",
                icon=":material/check_circle:",
            )
            from econ.rental_index import price_warnings

            for warning in price_warnings(mine, name):  # read, as `econ market import` reads them
                st.warning(literal(warning), icon=":material/warning:")
    if not mine:
        return tagged(shipped, False)
    choice = st.radio(
        "Index shown",
        [SHIPPED, MINE, BOTH],
        horizontal=True,
        key=common.keep(SHOWN_INDEX, BOTH),
    )
    if choice == SHIPPED:
        return tagged(shipped, False)
    if choice == MINE:
        return tagged(mine, True)
    clash = set(curves(mine)) & set(curves(shipped))
    if clash:
        st.caption(
            "Your file has curves of the same series, GPU and term as the shipped index; each "
            "is its own line: " + literal("; ".join(curve_label(k) for k in sorted(clash)))
        )
    return {**tagged(shipped, False), **tagged(mine, True)}


def _choice(key: str, options: list, default: list) -> str:
    """Key of a multiselect kept across page switches, its value kept to the options there are
    now (a value no longer offered would make the widget fail); empty falls back to `default`."""
    ss = st.session_state
    common.keep(key, default)
    ss[key] = [v for v in (ss.get(key) or []) if v in options] or default
    return key


def _reset(*keys: str) -> None:
    """Callback: a new GPU or term choice shows every series it has (not the earlier pick's)."""
    ss = st.session_state
    for key in keys:
        ss.pop(key, None)
        ss.get(common.KEPT, {}).pop(key, None)


def pick_curves(found: dict, scenario_gpu: str) -> dict:
    gpus = sorted({k[1] for k in found})
    cols = st.columns([2, 2, 3])
    chosen_gpus = cols[0].multiselect(
        "GPU generation",
        gpus,
        key=_choice(GPUS, gpus, [scenario_gpu] if scenario_gpu in gpus else gpus[:1]),
        on_change=_reset,
        args=(TERMS, SERIES),
        help="Series are published per GPU; several generations can be shown together.",
    )
    terms = sorted({k[2] for k in found if k[1] in chosen_gpus})
    chosen_terms = cols[1].multiselect(
        "Contract term",
        terms,
        key=_choice(TERMS, terms, terms),
        format_func=term_label,
        on_change=_reset,
        args=(SERIES,),
    )
    names = sorted({k[0] for k in found if k[1] in chosen_gpus and k[2] in chosen_terms})
    chosen = cols[2].multiselect(
        "Series (publisher/index)",
        names,
        key=_choice(SERIES, names, names),
        help="Each series is one publisher's index; points of different publishers are never "
        "averaged (they differ by more than 2 USD/GPU-hour at the same date).",
    )
    return {
        k: c
        for k, c in found.items()
        if k[1] in chosen_gpus and k[2] in chosen_terms and k[0] in chosen
    }


# --- the chart ---------------------------------------------------------------------------------


def chart_frames(shown, until: dt.date, band: bool):
    """Long frames of the published points, the fitted extensions and the bands; and per curve
    the fit or why there is none."""
    import pandas as pd

    from econ.rental_index import RentalIndexError

    points, fitted, bands, fits = [], [], [], {}
    for key, curve in shown.items():
        label = curve_label(key)
        for p in curve.points:
            points.append(
                {
                    "date": pd.Timestamp(p.date),
                    "price": p.usd_per_gpu_hour,
                    "line": label,
                    "kind": PUBLISHED,
                    "source": p.source,
                }
            )
        try:
            ext = extension(curve, until)
        except RentalIndexError:
            fits[key] = None
            continue
        fits[key] = ext.fit
        for i, day in enumerate(ext.dates):
            row = {"date": pd.Timestamp(day), "line": label, "kind": FITTED}
            fitted.append({**row, "price": float(ext.mid[i]), "source": ext.fit.description()})
            if band and i > 0:  # the series' own last point does not move
                bands.append({**row, "low": float(ext.low[i]), "high": float(ext.high[i])})
    return pd.DataFrame(points), pd.DataFrame(fitted), pd.DataFrame(bands), fits


def fit_cautions(shown, fits, until: dt.date) -> list[str]:
    """Cautions for the fitted decays drawn further past their points than these span, one per
    wording (series alike in points and span share one)."""
    from econ.rental_index import extrapolation_caution

    said: dict[str, list[str]] = {}
    for key, fit in fits.items():
        curve = shown[key]
        caution = fit and extrapolation_caution(curve, float(curve.years([until])[0]))
        if caution:
            said.setdefault(caution, []).append(curve_label(key))
    return [f"Caution, {'; '.join(labels)}: {caution}." for caution, labels in said.items()]


def price_chart(points, fitted, bands, own):
    import altair as alt
    import pandas as pd

    lines = pd.concat([f for f in (points, fitted, own) if len(f)], ignore_index=True)
    order = list(dict.fromkeys(lines["line"]))
    colour = alt.Color(
        "line:N",
        title="Line",
        sort=order,
        scale=alt.Scale(domain=order),
        legend=charts.wrapped_legend(
            orient="bottom",
            columns=1,
            symbolType="stroke",
            symbolOpacity=1,
            symbolStrokeWidth=3,
        ),
    )
    dash = alt.StrokeDash(
        "kind:N",
        title="Kind",
        scale=alt.Scale(domain=[PUBLISHED, FITTED, OWN_PATH], range=[[1, 0], [6, 4], [1, 3]]),
        legend=charts.wrapped_legend(orient="top", columns=1, symbolStrokeWidth=2),
    )
    y = alt.Y("price:Q", title="Price [USD/GPU-hour]", axis=alt.Axis(format=",.2f"))
    x = alt.X("date:T", title="Date")
    tooltip = [
        alt.Tooltip("date:T", title="Date"),
        alt.Tooltip("line:N", title="Line"),
        alt.Tooltip("price:Q", title="Price [USD/GPU-hour]", format=",.2f"),
        alt.Tooltip("source:N", title="Source"),
    ]
    layers = []  # the lines first: the legend's symbols are theirs
    base = alt.Chart(lines).encode(x=x, y=y, color=colour, strokeDash=dash, tooltip=tooltip)
    width = alt.condition(
        alt.FieldEqualPredicate(field="kind", equal=OWN_PATH), alt.value(3.5), alt.value(2)
    )
    layers.append(base.mark_line().encode(detail="line:N", strokeWidth=width))
    if len(bands):
        layers.append(
            alt.Chart(bands)
            .mark_area(opacity=0.15)
            .encode(
                x=x,
                y=alt.Y("low:Q", title="Price [USD/GPU-hour]"),
                y2="high:Q",
                color=colour,
                tooltip=[
                    alt.Tooltip("date:T", title="Date"),
                    alt.Tooltip("line:N", title="Band of"),
                    alt.Tooltip("low:Q", title="5th percentile [USD/GPU-hour]", format=",.2f"),
                    alt.Tooltip("high:Q", title="95th percentile [USD/GPU-hour]", format=",.2f"),
                ],
            )
        )
    if len(points):
        layers.append(
            alt.Chart(points)
            .mark_point(filled=True, size=45)
            .encode(x=x, y=y, color=colour, tooltip=tooltip)
        )
    return alt.layer(*layers).properties(height=640)


def own_frame(paths, wanted: dict[str, str]):
    import pandas as pd

    rows = []
    for column, label in wanted.items():
        values = paths[["date", column]].dropna()
        for date, value in zip(values["date"], values[column], strict=True):
            rows.append(
                {
                    "date": pd.Timestamp(date),
                    "price": float(value),
                    "line": label,
                    "kind": OWN_PATH,
                    "source": "the scenario's projection",
                }
            )
    return pd.DataFrame(rows)


def decay_label(fit) -> str:
    """The fit's model, and where the prices rise what `econ market show` says of it: a rising
    series is held flat (its 0.0% decline is not a flat market)."""
    if fit is None:
        return "too few points (3 needed)"
    model = {"floor": "to a floor", "log-linear": "log-linear"}[fit.model]
    if fit.decline_held_at_zero:
        return f"{model}, held flat: the prices rise {fit.trend_annual:+.1%} a year"
    if fit.trend_rate_annual > 0:
        return f"{model}, though the prices rise {fit.trend_annual:+.1%} a year"
    return model


def curves_table(shown, fits):
    import pandas as pd

    from econ.price_paths import band_percent

    rows = []
    for key, curve in shown.items():
        fit = fits.get(key)
        last = curve.points[-1]
        low, high = band_percent(fit) if fit is not None else (None, None)
        rows.append(
            {
                "Series": series_name(key),
                "Publisher": curve.publisher,
                "GPU": key[1],
                "Term": term_label(key[2]),
                "Points": len(curve.points),
                "First": curve.points[0].date.isoformat(),
                "Last": last.date.isoformat(),
                "Last price [USD/GPU-hour]": usd_hour(last.usd_per_gpu_hour),
                "Decay fitted": decay_label(fit),
                "Premium decline [%/year]": ""
                if fit is None
                else format_value(fit.decline_annual, "pct"),  # never "-0.0%"
                "Floor [USD/GPU-hour]": ""
                if fit is None or fit.model != "floor"
                else usd_hour(fit.floor_usd_per_gpu_hour),
                "Band beyond the last point [%]": ""
                if fit is None
                else f"{low:+.1%} to {high:+.1%}",
            }
        )
    return pd.DataFrame(rows)


def points_table(shown):
    import pandas as pd

    rows = [
        {
            "Date": p.date.isoformat(),
            "Series": series_name(key),
            "GPU": key[1],
            "Term": term_label(key[2]),
            "Price [USD/GPU-hour]": usd_hour(p.usd_per_gpu_hour),
            "Source": p.source,
        }
        for key, curve in shown.items()
        for p in curve.points
    ]
    return pd.DataFrame(rows)


def scenario_lines(scenario, paths) -> dict[str, str]:
    """The scenario's lines worth drawing: those with a figure in some month."""
    return {
        column: label
        for column, label in SCENARIO_LINES.items()
        if column in paths and paths[column].notna().any()
    }


def scenario_caption(scenario, wanted) -> str:
    m = scenario.market
    parts = []
    if "token_usd_per_gpu_hour" in wanted:
        parts.append(
            "The scenario sells tokens: its line is the token revenue of a month divided by the "
            "GPU-hours of the GPUs selling tokens in that month (throughput × utilization × "
            "token price), the token price equivalent of a GPU-hour, which is the figure "
            "comparable with a rental price. A GPU-hour rented on contract earns the index price "
            "whether or not it serves; a GPU selling tokens earns only while it serves."
        )
    if "spot_usd_per_gpu_hour" in wanted:
        parts.append(
            "Spot GPU-hours earn the market rental price times utilization, shown per GPU-hour "
            "in service."
        )
    if "contract_usd_per_gpu_hour" in wanted:
        renew = (
            f"renewed every {m.contract_term_months} months at the market rental price"
            if m.contract_term_months
            else "one contract for the whole horizon"
        )
        parts.append(f"Contracts ({m.contract_share:.0%} of the GPUs): {renew}.")
    if m.rental_series:
        from econ.rental_index import gpu_of_hardware

        gpu = (m.rental_series_gpu or gpu_of_hardware(scenario.fleet.hardware)).upper()
        parts.append(
            f"The market rental price comes from the series {m.rental_series} ({gpu}, "
            f"{term_label(m.rental_series_term_months)})."
        )
    return " ".join(parts)


# --- pricing the scenario from a series ---------------------------------------------------------


def _candidate(data: dict, key, gpu_default: str, decline: float, floor: float, first: bool):
    series, gpu, term = key
    out = copy.deepcopy(data)
    market = out.setdefault("market", {})
    market["rental_series"] = series
    market["rental_series_term_months"] = int(term)
    if gpu == gpu_default:
        market.pop("rental_series_gpu", None)
    else:
        market["rental_series_gpu"] = gpu
    for name, empty in (("rental_usd_per_gpu_hour", 0.0), ("rental_table", [])):
        if name in market:
            market[name] = empty
    market["rental_decline_annual"] = float(decline)
    market["rental_floor_usd_per_gpu_hour"] = float(floor)
    if first:
        market["contract_usd_per_gpu_hour"] = 0.0
    return out


def _use_series(candidate: dict, description: str) -> None:
    from econ.ui.form import EDITED, mark_edited

    ss = st.session_state
    ss[BEFORE] = {p: copy.deepcopy(state.get_path(ss[state.DATA], p, None)) for p in SERIES_PATHS}
    ss[state.DATA] = candidate
    for path in SERIES_PATHS:
        mark_edited(path)
    sources = candidate.setdefault("sources", {})
    if isinstance(sources, dict):
        sources["market.rental_series"] = (
            f"{EDITED} {dt.date.today().isoformat()} from the Market page: {description}"
        )
    ss[state.NOTICE] = f"The scenario's rental price now comes from {description}."


def _back() -> None:
    """Callback: the rental price fields as they were before "Use this series"."""
    from econ.ui.form import mark_edited

    ss = st.session_state
    before = ss.pop(BEFORE, {})
    market = ss[state.DATA].setdefault("market", {})
    for path, value in before.items():
        name = path.split(".", 1)[1]
        if value is None:  # no field takes None: the field was not given
            market.pop(name, None)
        else:
            market[name] = value
        mark_edited(path)
    ss[state.NOTICE] = "The scenario's rental price is back to what it was."


def _market_value(data: dict, name: str):
    """A market field of the scenario being edited (valid or not), else the model's default."""
    from econ.scenario.market_models import Market

    value = state.get_path(data, f"market.{name}", state.MISSING)
    return Market.model_fields[name].default if value is state.MISSING else value


def _given(value, scale: float = 1.0) -> float | None:
    """A number field's value as the page shows it, or None (an empty box) where it is unset or
    0, which means "none" for the series' decline and floor."""
    number = _number(value)
    return number * scale if number else None


def _number(value, default: float = 0.0) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )


def use_section(points) -> None:
    """Price the scenario being edited from a shipped series; works on an invalid scenario too
    (a GPU-hour scenario with no rental price yet is made valid by choosing its series here)."""
    from econ.rental_index import curves, gpu_of_hardware

    ss = st.session_state
    data = ss[state.DATA]
    get = lambda name: _market_value(data, name)  # noqa: E731
    share = _number(get("contract_share"))
    spot = get("spot_sells")
    st.subheader("Price this scenario from a series")
    if spot != "gpu_hours" and share <= 0:
        st.info(
            "This scenario sells tokens, so a rental series would change none of its revenue. "
            "To price GPU-hours from a series, choose “GPU-hours” under “Spot sells” or give a "
            "“Contract share” on the Scenario page (Market tab).",
            icon=":material/info:",
        )
        common.page_link("scenario", "Open the Scenario page", ":material/tune:")
        return
    found = curves(points)
    keys = list(found)
    hardware = state.get_path(data, "fleet.hardware", "")
    gpu_default = gpu_of_hardware(hardware) if isinstance(hardware, str) and hardware else ""
    current_key = None
    if get("rental_series"):
        current_key = (get("rental_series"), str(get("rental_series_gpu") or gpu_default).upper(),
                       int(_number(get("rental_series_term_months"))))  # fmt: skip
    if current_key in found:
        st.caption(f"Now priced from {literal(curve_label(current_key))}.")
    default = (
        current_key
        if current_key in found
        else next((k for k in keys if k[1] == gpu_default), keys[0])
    )
    if ss.get(USE_CURVE) not in keys:
        ss.pop(USE_CURVE, None)
    cols = st.columns([3, 1, 1])
    key = cols[0].selectbox(
        "Series, GPU and term",
        keys,
        index=keys.index(default),
        format_func=curve_label,
        key=USE_CURVE,
        help="Series of the shipped index (models/market/rental_index.csv), the one a scenario "
        "file names.",
    )
    decline = cols[1].number_input(
        "Decline beyond the last point [%/year]",
        min_value=0.0,
        step=5.0,
        placeholder="the fitted decay",
        key=common.follow(USE_DECLINE, _given(get("rental_decline_annual"), 100.0)),
        help="Empty (or 0) = the fitted decay of the series; otherwise the premium over the "
        "floor falls by this much a year after the series' last point (needed for a series of "
        "fewer than 3 points).",
    )
    floor = cols[2].number_input(
        "Floor [USD/GPU-hour]",
        min_value=0.0,
        step=0.1,
        format="%.2f",
        placeholder="none",
        key=common.follow(USE_FLOOR, _given(get("rental_floor_usd_per_gpu_hour"))),
        help="What the price declines towards (with a decline above 0), e.g. the hourly cost "
        "of ownership; at or below the series' last price. Empty (or 0): no floor.",
    )
    contract_price = _number(get("contract_usd_per_gpu_hour"))
    first = False
    if share > 0 and contract_price > 0:
        first = st.checkbox(
            f"Price the first contract at the series' month-1 price too (instead of "
            f"{contract_price:,.2f} USD/GPU-hour)",
            key=common.keep(USE_FIRST, False),
        )
    decline, floor = (decline or 0.0) / 100.0, floor or 0.0  # empty: fitted decay, no floor
    candidate = _candidate(data, key, gpu_default, decline, floor, first)
    try:
        warning = series_check(state.toml_text(candidate))
    except Exception as exc:  # noqa: BLE001 - the reason is shown, the scenario is kept
        if isinstance(exc, ScenarioError) and not common.validation().ok:
            st.info(
                "The scenario has problems a rental series does not fix (listed at the top of "
                "the page); fix them on the Scenario page, then choose its series here.",
                icon=":material/info:",
            )
        else:
            st.error(
                literal(f"{curve_label(key)} cannot price this scenario: {in_app_words(str(exc))}"),
                icon=":material/error:",
            )
        return
    term = int(_number(get("contract_term_months")))
    # (a contract price of 0 is the series' month-1 price: a series in use prices it already)
    if share > 0 and not term and spot != "gpu_hours" and not first and contract_price > 0:
        st.warning(
            "The contracts run for the whole horizon at their own price and the other GPUs "
            "sell tokens, so the series would change no revenue: tick the box above to price "
            "the first contract from it.",
            icon=":material/warning:",
        )
    curve = found[key]
    description = (
        f"{curve_label(key)} ({curve.publisher}; {len(curve.points)} points "
        f"{curve.points[0].date} to {curve.points[-1].date}, models/market/rental_index.csv)"
    )
    st.caption(literal(in_app_words(warning[:1].upper() + warning[1:]) + "."))
    buttons = st.columns([1, 1, 2])
    buttons[0].button(
        "Use this series",
        on_click=_use_series,
        args=(candidate, description),
        icon=":material/input:",
        type="primary",
    )
    if BEFORE in ss and get("rental_series"):
        buttons[1].button("Back to the rental price before", on_click=_back, icon=":material/undo:")


# --- the page ----------------------------------------------------------------------------------


def render() -> None:
    from econ.rental_index import gpu_of_hardware

    st.title("Market")
    st.caption(
        "GPU-hour rental indices by GPU generation and contract term, as published (each "
        "point with its source; one line per series, never averaged across publishers), the "
        "fitted decay beyond each series' last point with its error band, and this scenario's "
        "own price per GPU-hour against them (docs/market.md)."
    )
    current = common.require_scenario("the scenario's price path")
    found = index_curves()
    if not found:
        return
    scenario = current.scenario if current is not None else None
    gpu = "H100"
    if scenario is not None:
        m = scenario.market
        gpu = (m.rental_series_gpu or gpu_of_hardware(scenario.fleet.hardware)).upper()
    shown = pick_curves(found, gpu)
    toggles = st.columns(2)
    band = toggles[0].toggle(
        "Fitted decay with its 5th–95th percentile band",
        key=common.keep(BAND, True),
        help="Beyond each series' last point, its fitted decay (dashed) and the band of the "
        "fit's residuals in log price (shaded), as a scenario using the series is extended.",
    )
    show_own = toggles[1].toggle(
        "This scenario's price", key=common.keep(OWN, True), disabled=scenario is None
    )
    until = dt.date.today().replace(day=1)
    own = None
    wanted = {}
    if scenario is not None:
        end = scenario.start_date
        total = end.year * 12 + end.month - 1 + scenario.horizon
        until = max(until, dt.date(total // 12, total % 12 + 1, 1))
        if show_own:
            paths = compute.attempt(
                lambda: price_paths(current.text),
                "The scenario's price path",
                words=in_app_words,
            )
            if paths is not None:
                wanted = scenario_lines(scenario, paths)
                own = own_frame(paths, wanted)
    if not shown:
        st.info("Choose a GPU, a term and a series to see the index.", icon=":material/info:")
    import pandas as pd

    pts, fitted, bands, fits = chart_frames(shown, until, band)
    if not band:
        fitted = pd.DataFrame()
    own = own if own is not None else pd.DataFrame()
    if len(pts) or len(own):
        st.altair_chart(price_chart(pts, fitted, bands, own), width="stretch")
        notes = []
        if band and len(fitted):
            notes.append(
                "Dashed: the fitted decay through each series' last point, monthly up to the "
                "scenario's last month; shaded: its 5th to 95th percentile band."
            )
        unfitted = [curve_label(k) for k, f in fits.items() if f is None]
        if band and unfitted:
            notes.append("Too few points to fit a decay (3 needed): " + "; ".join(unfitted) + ".")
        if band and len(fitted):
            notes.extend(fit_cautions(shown, fits, until))
        if scenario is not None and wanted:
            notes.append(scenario_caption(scenario, wanted))
        st.caption(literal(" ".join(notes)))
    if shown:
        st.subheader("Series shown")
        common.table(curves_table(shown, fits), hide_index=True, width="stretch")
        with st.expander("Points and their sources", icon=":material/format_quote:"):
            common.table(points_table(shown), hide_index=True, width="stretch")
    shipped = compute.attempt(shipped_points, "Shipped rental index") or ()
    if shipped:
        use_section(shipped)
    from econ.ui.pages import market_resale

    market_resale.render_section(current)


if __name__ == "__main__":
    common.run_page(render)
