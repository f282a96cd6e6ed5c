"""Power and fleet: what the hall earns per MW, rack and m², how many racks a power budget holds
(and which limit binds), the fleet's vintages, and when replacing the fleet pays best.
"""

from __future__ import annotations

import math
import re

import altair as alt
import pandas as pd
import streamlit as st

from econ.ui import charts, common, compute, state
from econ.ui.fmt import (
    MONEY_SCALES,
    format_metric,
    format_value,
    is_missing,
    literal,
    metric_label,
    readable,
    readable_warning,
)

DENSITY_HINTS = ("_per_mw", "_per_rack", "_per_m2", "joules_per_token", "power_cost")


def density_keys(summary: dict) -> list[str]:
    """Density metrics the engine reports (econ.engine.DENSITY_COLUMNS when it declares them)."""
    try:
        from econ.engine import DENSITY_COLUMNS
    except ImportError:
        DENSITY_COLUMNS = ()
    keys = [k for k in DENSITY_COLUMNS if k in summary]
    keys += [k for k in summary if k not in keys and any(h in k for h in DENSITY_HINTS)]
    return keys


def why_missing(summary: dict, keys: list[str]) -> list[str]:
    """The projection's warnings that say why a tile of `keys` reads "n/a" (the engine reports an
    undefined metric as null with a warning naming it: no tokens served, an overflow)."""
    missing = [k for k in keys if is_missing(summary.get(k))]
    return [w for w in summary.get("warnings") or () if any(k in w for k in missing)]


def density(current, money: str) -> None:
    result = compute.attempt(lambda: compute.projection(current.text), "Projection")
    if result is None:
        return
    summary = result["summary"]
    keys = density_keys(summary)
    for start in range(0, len(keys), 5):
        cols = st.columns(5)
        for col, key in zip(cols, keys[start : start + 5], strict=False):
            col.metric(metric_label(key, money), format_metric(key, summary, money), border=True)
    st.caption(
        "Rated figures use the fleet at full load; delivered figures the tokens served over the "
        "horizon per MW-year of capacity in service (docs/power.md)."
    )
    why = why_missing(summary, keys)
    if why:
        st.warning(
            "\n".join(f"- {literal(readable_warning(w))}" for w in why), icon=":material/warning:"
        )
    vintages = result.get("vintages")
    if vintages is not None and len(vintages):
        st.subheader("Fleet vintages")
        common.table(readable(vintages, money), hide_index=True, width="stretch")


def fleet_capex_parts(scenario, gpus: int) -> dict[str, float]:
    """The capex of `scenario` for `gpus` GPUs by part [USD]: the GPUs' at its prices per GPU
    (econ.capex) and, where its hall is an air hall retrofitted for liquid racks, the retrofit of
    the racks they fill (econ.facility.liquid_retrofit_capex_usd, the engine's own function, at
    the scenario's price per rack)."""
    from econ.capex import hardware_usd_per_gpu
    from econ.density import racks_in_service
    from econ.facility import HALL_COOLING, RACK_COOLING, liquid_retrofit_capex_usd

    c, f = scenario.capex, scenario.facility
    gpu_price = math.nan if c.gpu_price_usd is None else c.gpu_price_usd
    system = math.nan if c.system_price_usd is None else c.system_price_usd
    hardware = float(hardware_usd_per_gpu(gpu_price, system, c.gpus_per_system))
    parts = {
        "hardware": gpus * hardware,
        "spares": gpus * hardware * c.spares_share,
        "networking": gpus * c.networking_usd_per_gpu,
        "storage": gpus * c.storage_usd_per_gpu,
        "installation": gpus * c.installation_usd_per_gpu,
    }
    retrofit = float(
        liquid_retrofit_capex_usd(
            racks_in_service(gpus, scenario.fleet.gpus_per_rack),
            f.liquid_retrofit_usd_per_rack,
            RACK_COOLING.index(f.rack_cooling),
            HALL_COOLING.index(f.hall_cooling),
        )
    )
    if retrofit:
        parts["liquid retrofit"] = retrofit
    return parts


def after_use(fields: dict) -> state.Validation:
    """The scenario "Use N GPUs" would make (`fields` applied to the current one as
    `_apply_sizing` applies them), validated as the sidebar validates the current one."""
    import copy

    data = copy.deepcopy(st.session_state[state.DATA])
    for path, value in fields.items():
        state.set_path(data, path, state.plain(value))
    return state.validate(data)


HALL_WORDS = {
    "air": "air-cooled",
    "liquid": "liquid-cooled",
    "air_retrofit_liquid": "air-cooled, retrofitted for liquid racks",
}
"""The halls of econ.facility.HALL_COOLING in words."""


def capex_after_use(after, gpus: int) -> tuple[float | None, dict[str, float]]:
    """What Results shows as capex once the sized fleet is used (the engine's capex_usd_total of
    the scenario `after_use` gives, projected), and its parts; the part the GPUs and a retrofit
    do not explain (an owned hall's build, vintages, a construction loan's interest) as "other"."""
    parts = fleet_capex_parts(after, gpus)
    result = compute.attempt(
        lambda: compute.projection(state.scenario_text(after)), "Capex with the sized fleet"
    )
    if result is None:
        return None, parts
    total = result["summary"]["capex_usd_total"]
    if total is None:
        return None, parts
    other = total - sum(parts.values())
    if abs(other) >= 0.005:
        parts["other (an owned hall, vintages, construction interest)"] = other
    return total, parts


_OPTION_WORDS = {
    "--basis utility": "the utility meter as the budget's basis",
    "--hall-max-kw-per-rack": "the hall limit per rack",
    "--pue": "the PUE",
    "--cooling liquid": "a liquid hall cooling",
    "--retrofit-liquid": "a liquid retrofit",
    "--floor-m2": "the floor space",
    "--budget-usd": "the capex budget",
}
"""`econ size` options as this page names its inputs (the library's messages name the options)."""


def _grouped(number: str) -> str:
    """A number of a message with thousands separators ("6000" -> "6,000"), as the page's
    tiles write it; text that is no number as it is."""
    try:
        return f"{float(number):,.6g}"
    except ValueError:
        return number


_FILE_WORDS = (
    (re.compile(r", as [a-z_]+\.[a-z_]+ takes in a scenario file"), ""),
    (re.compile(r"; leave the option out for (a hall without a limit)"), r"; empty the box for \1"),
    (re.compile(r"\braise hall_max_kw_per_rack\b"), "raise the hall limit per rack"),
    (re.compile(r"models/racks\.toml kw_per_rack\b"), "the rack catalog's kW per rack"),
    (re.compile(r"models/racks\.toml kw_per_system x "), "the rack catalog's kW per system x "),
    (re.compile(r" \(--max-load-share 1; ([^)]*)\)"), r" (\1)"),
    (  # the page has no price-per-rack box: the way out here is an empty budget
        re.compile(r"; expected --capex-usd-per-rack$"),
        "; expected the capex budget box empty for it (this page takes no price per rack; "
        "econ size --capex-usd-per-rack does)",
    ),
)
"""Words of a scenario file or of `econ size` that this page says with its boxes."""


def page_words(text: str) -> str:
    """A sizing message or warning in this page's words: its inputs, not `econ size` options
    nor the scenario file's field names."""
    text = re.sub(r" \(command line: [^)]*\)", "", text)  # options this page does not have
    for pattern, words in _FILE_WORDS:
        text = pattern.sub(words, text)
    text = re.sub(
        r"--mw (?:= )?([^\s:]+)", lambda m: f"the budget of {_grouped(m.group(1))} MW", text
    )
    for option, words in _OPTION_WORDS.items():
        text = text.replace(option, words)
    return text


LEFT = "econ.size_left"
"""Session key: what the last "Use N GPUs" left describing the previous hardware."""


def _apply_sizing(fields: dict, hardware: str, basis: str = "", left: tuple[str, ...] = ()) -> None:
    """Callback of "Use N GPUs": the sized fleet and the fields that go with its hardware and
    hall (econ.racks.sized_fleet_fields) become the scenario's, each field changed cited as a
    sidebar edit is (old value and source kept) with the sizing it came from."""
    from econ.ui.form import mark_edited

    data = st.session_state[state.DATA]
    how = "from the Power and fleet page" + (f": {basis}" if basis else "")
    for path, value in fields.items():
        state.set_path(data, path, state.plain(value))
        mark_edited(path, how)
    gpus = fields.get("fleet.gpu_count", state.get_path(data, "fleet.gpu_count", 0))
    st.session_state[state.NOTICE] = f"The fleet is now {gpus:,} GPUs of {hardware}."
    st.session_state[LEFT] = (hardware, tuple(left))


def scaled_text(scenario, fields: dict) -> str:
    """What "Use N GPUs" scales with the fleet (econ.racks.scaled_fixed_amounts), in words:
    "Amounts the scenario sized for its 72 GPUs scale with the fleet: Opex › Staff [USD/month]:
    3,600 → 1,335,600 (50 USD per GPU-month kept)"; empty where it scales nothing."""
    from econ.racks import scaled_fixed_amounts
    from econ.ui.form import path_label

    parts = []
    for path, old, new, why in scaled_fixed_amounts(scenario, fields):
        if path not in fields:
            continue
        if isinstance(new, tuple):  # the tranches: their own words say which amounts
            parts.append(f"{path_label(path)}: {why}")
        else:
            parts.append(f"{path_label(path)}: {old:,.0f} → {new:,.0f} ({why})")
    if not parts:
        return ""
    count = scenario.fleet.gpu_count
    return (
        f"Amounts the scenario sized for its {count:,} GPUs scale with the fleet: "
        + "; ".join(parts)
        + "."
    )


def _left_text(hardware: str, old: str, left) -> str:
    """What "Use N GPUs" leaves describing the old hardware, for st.warning: the hardware's names
    come from the scenario (a link's `fleet.hardware` may hold markdown), so shown as typed."""
    return literal(
        f"Still the scenario's, describing {old} rather than {hardware}: "
        + "; ".join(left)
        + ". Check them on the Scenario page."
    )


def sizing(current, money: str) -> None:
    st.subheader("Size a hall from its power budget")
    racks = compute.attempt(compute.racks, "Rack catalog (models/racks.toml)")
    if not racks:
        return
    keys = list(racks)
    scenario = current.scenario
    hardware = scenario.fleet.hardware
    ss = st.session_state
    key = common.follow("econ.size_hw", hardware if hardware in keys else keys[0], keys)
    cols = st.columns(4)
    chosen = cols[0].selectbox(
        "Hardware", keys, key=key, format_func=lambda k: f"{k} ({racks[k]['name']})"
    )
    mw = cols[1].number_input(
        "Power budget [MW]",
        value=None,
        key=common.keep("econ.size_mw", 10.0),
        step=1.0,
        help="The hall's power: critical IT load, or at the utility meter (see basis)",
    )
    basis = cols[2].selectbox(
        "Budget measured at",
        ["it", "utility"],
        key=common.keep("econ.size_basis", "it"),
        format_func=lambda b: {"it": "IT load (critical)", "utility": "utility meter"}[b],
    )
    # For the scenario's hardware the boxes start from its own hall (an air hall retrofitted for
    # liquid racks is "Air" with the retrofit on) and PUE, the hall Use keeps unless another is
    # chosen (Use sets the sized hall: econ.racks.sized_fleet_fields); other hardware
    # starts in its racks' own hall at the catalog's PUE, the hall Use sets with it.
    own = chosen == hardware
    own_hall = scenario.facility.hall_cooling
    own_cooling = "air" if own_hall == "air_retrofit_liquid" else own_hall
    cooling = cols[3].selectbox(
        "Hall cooling",
        ["rack's own", "air", "liquid"],
        key=common.follow("econ.size_cooling", own_cooling if own else "rack's own"),
        format_func=str.capitalize,
    )
    rack_cooling = racks[chosen]["cooling"]
    hall = rack_cooling if cooling == "rack's own" else cooling
    from econ.racks import can_retrofit

    retrofittable = can_retrofit(rack_cooling, hall)
    retrofit_key = common.follow("econ.size_retrofit", own and own_hall == "air_retrofit_liquid")
    sized_hall = "air_retrofit_liquid" if retrofittable and ss[retrofit_key] else hall
    own_pue = scenario.power.pue if own and sized_hall == own_hall else None
    cols = st.columns(4)
    pue = cols[0].number_input(
        "PUE",
        value=None,
        key=common.follow("econ.size_pue", own_pue),
        placeholder="by cooling",
        help="Empty: the rack catalog's PUE for the hall's cooling. It starts at the "
        "scenario's PUE while the hardware and hall are the scenario's.",
    )
    limit = cols[1].number_input(
        "Hall limit per rack [kW]",
        value=None,
        key=common.keep("econ.size_limit"),
        placeholder="none",
    )
    floor = cols[2].number_input(
        "Floor space [m²]",
        value=None,
        key=common.keep("econ.size_floor"),
        placeholder="not limiting",
    )
    budget = cols[3].number_input(
        "Capex budget [USD]",
        value=None,
        key=common.keep("econ.size_budget"),
        placeholder="not limiting",
        step=1e6,
    )
    retrofit = st.toggle(
        "Retrofit liquid cooling in an air hall",
        key=retrofit_key,
        disabled=not retrofittable,
        help="Liquid-cooled racks in an air hall, at the rack catalog's liquid retrofit price"
        + (
            ""
            if retrofittable
            else f" (for liquid-cooled racks in an air hall: {chosen} racks are "
            f"{rack_cooling}-cooled and the hall is {hall}-cooled)"
        ),
    )
    retrofit = retrofit and retrofittable
    if mw is None:
        st.error("Give the power budget in MW.", icon=":material/error:")
        return
    from econ.ui.checks import power_budget_warning

    odd = power_budget_warning(float(mw))
    if odd:
        st.warning(odd, icon=":material/report:")
    args = {
        "mw": float(mw),
        "hardware": chosen,
        "basis": basis,
        "cooling": None if cooling == "rack's own" else cooling,
        "retrofit_liquid": bool(retrofit),
        "pue": pue,
        "hall_max_kw_per_rack": limit,
        "floor_m2": floor,
        "budget_usd": budget,
    }
    result = compute.attempt(lambda: compute.sizing(**args), "Sizing", words=page_words)
    if result is None:
        return
    from econ.racks import sized_fleet_fields

    fields, stays = sized_fleet_fields(result, current.scenario)
    old = current.scenario.fleet.hardware
    cols = st.columns(5)
    cols[0].metric("Racks", f"{result['racks']:,}", border=True)
    cols[1].metric("GPUs", f"{result['gpus']:,}", border=True)
    cols[2].metric(
        "Binding limit",
        (", ".join(result["binding_limits"]) or result["binding_limit"]).capitalize(),
        border=True,
    )
    cols[3].metric("IT power used [kW]", f"{result['it_kw']:,.0f}", border=True)
    after = after_use(fields)
    refused = not after.ok
    total, parts = (None, {}) if refused else capex_after_use(after.scenario, result["gpus"])
    old_price = chosen != old and "capex.gpu_price_usd" not in fields
    cols[4].metric(
        f"Capex at {literal(old)}'s price [{money}]" if old_price else f"Capex [{money}]",
        "n/a" if total is None else format_value(total, "usd", money),
        border=True,
        help="The scenario's capex with this fleet, what Results shows after Use (the "
        "scenario projected with the fields Use sets): the GPUs sized here times the price "
        "per GPU "
        + (
            f"the scenario gives for {literal(old)}: the rack catalog has no price for {chosen}"
            if old_price
            else f"of {chosen} from the rack catalog"
            if chosen != old
            else "the scenario gives"
        )
        + ", plus the scenario's spares share of that, its networking, storage and installation "
        "per GPU, in an air hall retrofitted for liquid racks the retrofit per rack, and the rest "
        "of its capex (an owned hall, vintages, construction interest); the caption below gives "
        "each part",
    )
    limits = [
        {
            "limit": name.capitalize(),
            "racks it allows": "not limiting" if racks_ is None else f"{racks_:,}",
            "binds": "Yes" if name in result["binding_limits"] else "",
        }
        for name, racks_ in result["racks_by_limit"].items()
    ]
    units = {"it_kw": "IT power [kW]", "utility_kw": "Utility power [kW]", "floor_m2": "Floor [m²]"}
    units["budget_usd"] = "Budget [USD]"
    stranded = [
        {"capacity": units.get(k, k), "left over": f"{v:,.1f}"}
        for k, v in result["stranded"].items()
        if v is not None
    ]
    left, right = st.columns(2)
    left.markdown("**Racks each limit allows** (the smallest binds)")
    common.table(pd.DataFrame(limits), where=left, hide_index=True, width="stretch")
    right.markdown("**Stranded capacity**")
    common.table(pd.DataFrame(stranded), where=right, hide_index=True, width="stretch")
    catalog_price = (
        f"The rack catalog has no price for {chosen}: no capex budget limit can be checked for it."
        if is_missing(result.get("capex_usd"))
        else f"The capex, {format_value(result['capex_usd'], 'usd', money)} {money} "
        f"({', '.join(result.get('capex_includes') or ['racks'])}, at the rack catalog's "
        "prices), is what the capex budget limit is checked against."
    )
    if refused:
        capex = (
            "Capex: n/a, since the scenario this fleet would make is not valid: "
            + literal(after.message)
            + " "
        )
    else:
        capex = (
            "Capex: "
            + ", ".join(f"{name} {format_value(v, 'usd', money)}" for name, v in parts.items())
            + f" {money} (the scenario's prices per GPU and per rack, after Use). "
        )
    st.caption(capex + catalog_price)
    rack = result["rack"]
    given = result["pue_source"] == "--pue"
    pue_source = (
        "the scenario's"
        if given and result["pue"] == scenario.power.pue
        else "the PUE box"
        if given
        else result["pue_source"]
    )
    st.caption(
        f"{rack['name']}: {rack['gpus_per_rack']} GPUs and {rack['kw_per_rack']:g} kW per rack, "
        f"{rack['cooling']}-cooled; hall {HALL_WORDS[result['hall_cooling']]}, PUE "
        f"{result['pue']:g} ({pue_source})."
    )
    # what the budget is and how the racks are counted against it, as `econ size` says it
    st.caption(page_words(f"Basis: {result['sizing_basis']}."))
    for warning in result["warnings"]:
        st.warning(literal(readable_warning(page_words(warning))), icon=":material/warning:")
    done = st.session_state.pop(LEFT, None)  # what the last Use left: said once, after it
    if done and done[0] == old and done[1]:
        st.warning(_left_text(old, "the previous hardware", done[1]), icon=":material/warning:")
    sets = ", ".join(fields)
    scaled = scaled_text(current.scenario, fields)
    if scaled:
        st.info(literal(scaled), icon=":material/straighten:")  # (tranche names: the scenario's)
    if stays:
        st.warning(
            literal(f"Using this fleet sets {sets}. ") + _left_text(chosen, old, stays),
            icon=":material/warning:",
        )
    st.button(
        f"Use {result['gpus']:,} GPUs of {chosen} as the scenario's fleet",
        on_click=_apply_sizing,
        args=(
            fields,
            chosen,
            f"sized for a {float(mw):,.6g} MW budget at the "
            f"{'IT load' if basis == 'it' else 'utility meter'} "
            f"({', '.join(result['binding_limits']) or result['binding_limit']} binding)",
            stays,
        ),
        disabled=not result["gpus"],
        icon=":material/input:",
        help=f"Sets {sets or 'nothing new'}, cited in the scenario's sources as edits from this "
        "page: the fleet, and where the hardware or hall changes the rack catalog's cooling, "
        "power and price per GPU and the sized hall's cooling and PUE; amounts sized for the "
        "old fleet (staff, contracted or owned kW, a loan or tranche given in USD) scale with "
        "it. Throughput and the other prices per GPU stay the scenario's.",
    )


REFRESH_ON_OPEN_ROW_MONTHS = 200_000
"""Largest refresh analysis (econ.fleet.RefreshSize.row_months) the page runs as it opens; a
larger one waits for its button. A shared link opens the page without a click, and the analysis'
time and memory grow with its rows x months: a link of 116 characters (one vintage, 600 months:
600 cases of 2 rows, 721,200 row-months) cost the server 8 s and 730 MB on each opening, one of
10 vintages (4.0 million) 27 s and 1.6 GB. The ready-made h200-fleet-gb300-refresh has 8,030; a
vintage over 20 years (240 months) 115,680."""
REFRESH_ASKED = "econ.refresh_asked"
"""Session key: the refresh (scenario text, vintage, months, envelope) whose button was pressed."""


def _refresh_asked(text: str, vintage: str, months: tuple[int, int], mw, vintages: int) -> bool:
    """Whether to run the refresh now: at most REFRESH_ON_OPEN_ROW_MONTHS at once, a larger one
    once its button is pressed (kept for the same inputs while the page reruns)."""
    size = compute.attempt(lambda: compute.refresh_size(text, vintage, months), "Refresh analysis")
    if size is None:
        return False
    asked = (text, vintage, months, mw)
    ss = st.session_state
    if size.row_months <= REFRESH_ON_OPEN_ROW_MONTHS or ss.get(REFRESH_ASKED) == asked:
        return True
    st.info(
        f"This refresh projects {size.cases:,} cases (keeping the fleet, and refreshing in each "
        f"month from {months[0]} to {months[1]}) of up to {size.rows:,} rows (the fleet and its "
        f"{vintages:,} vintage{'s' if vintages != 1 else ''}) over {size.months:,} months: "
        f"{size.row_months:,} row-months, more than the {REFRESH_ON_OPEN_ROW_MONTHS:,} the page "
        "projects as it opens. Narrow the months, or run it: the largest take minutes.",
        icon=":material/hourglass:",
    )
    if not st.button("Run the refresh analysis", icon=":material/play_arrow:"):
        return False
    ss[REFRESH_ASKED] = asked
    return True


def refresh(current, money: str) -> None:
    scenario = current.scenario
    st.subheader("Fleet refresh")
    if not scenario.vintages:
        st.info(
            "The scenario has no vintages. Add the next generation as a vintage (Scenario page, "
            "Vintages) to find the month at which replacing the fleet pays best.",
            icon=":material/info:",
        )
        return
    names = [v.name for v in scenario.vintages]
    cols = st.columns(4)
    vintage = cols[0].selectbox(
        "Replace the fleet by", names, key=common.keep("econ.refresh_vintage", names[0])
    )
    if vintage not in names:
        return
    first = compute.attempt(
        lambda: compute.earliest_refresh(current.text, vintage), "Earliest refresh month"
    )
    if first is None:
        return
    from econ.fleet import last_refresh_month

    last = last_refresh_month(scenario, vintage)
    if first > last:
        st.error(
            f"The first month the fleet can be refreshed in, month {first} (the vintage's "
            "purchase month, or the month after the old fleet's), is after the last, month "
            f"{last} (the horizon's last month, or the month before the vintage's own retire "
            "month)."
        )
        return
    # no min_value: a box given one kept a 0 typed in it on screen while the page went on
    # with the month before, saying nothing; the checks below refuse it in words
    start = common.whole_number_input(
        cols[1], "From month", key=common.keep("econ.refresh_from", first)
    )
    stop = common.whole_number_input(cols[2], "To month", key=common.keep("econ.refresh_to", last))
    mw = cols[3].number_input(
        "IT power envelope [MW]",
        value=None,
        key=common.keep("econ.refresh_mw"),
        placeholder="the installed fleet's",
    )
    if start is None or stop is None:
        st.error("Give the first and last candidate months.", icon=":material/error:")
        return
    # the boxes' own words; the library's would name months, not the boxes
    before = [(box, month) for box, month in (("From", start), ("To", stop)) if month < 1]
    wrong = (
        f"{before[0][0]} month {before[0][1]} is before month 1; expected a month from 1 to {last}."
        if before
        else f"From month {start} is after To month {stop}; expected the first candidate month at "
        "or before the last."
        if start > stop
        else f"To month {stop} is after the horizon's last month, {last}; expected a month from "
        f"1 to {last}."
        if stop > last
        else None
    )
    if wrong:
        st.error(wrong, icon=":material/error:")
        return
    months = (int(start), int(stop))
    if not _refresh_asked(current.text, vintage, months, mw, len(names)):
        return
    result = compute.attempt(
        lambda: compute.refresh(current.text, vintage, months, mw), "Refresh analysis"
    )
    if result is None:
        return
    for warning in result["warnings"]:
        st.warning(literal(warning), icon=":material/warning:")
    cols = st.columns(3)
    cols[0].metric("Best refresh month", str(result["best_month"]), border=True)
    cols[1].metric(
        f"NPV, keep to the horizon [{money}]",
        format_value(result["npv_keep_usd"], "usd", money),
        border=True,
    )
    cols[2].metric(
        f"NPV, refresh at the best month [{money}]",
        format_value(result["npv_best_usd"], "usd", money),
        delta=format_value(result["gain_usd"], "usd", money),
        border=True,
    )
    table = charts.money(result["table"], ["npv_usd"], money)
    chart = charts.lines(
        table,
        "refresh_month",
        {"npv_usd": "Refresh in this month"},
        "Refresh month",
        f"NPV [{money}]",
        charts.usd_format(money),
        x_type="Q",
    )
    keep = result["npv_keep_usd"] / MONEY_SCALES[money]
    charts.show(alt.layer(chart, charts.rule(keep, "keep to the horizon")))
    with st.expander("Every candidate month"):
        common.table(readable(result["table"], money), hide_index=True, width="stretch")


def render() -> None:
    st.title("Power and fleet")
    current = common.require_scenario("power and fleet figures")
    if current is None:
        return
    money = common.money()
    density(current, money)
    st.divider()
    sizing(current, money)
    st.divider()
    refresh(current, money)


if __name__ == "__main__":
    common.run_page(render)
