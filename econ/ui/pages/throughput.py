"""Throughput: where tokens/s per GPU comes from. The MLPerf catalog with provenance badges, a
measured curve from an uploaded benchmark file with its SLO operating point, and the simulated
curve with the speed-of-light headroom; any of them can become the scenario's throughput.
"""

from __future__ import annotations

import math
import re

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from econ.ui import charts, common, compute
from econ.ui.fmt import literal, number_format

CURVE_FILE = "econ.curve_file"
CURVE_UPLOAD = "econ.curve_upload"
CURVE_ERROR = "econ.curve_error"
CURVE_GPUS = "econ.curve_gpus"
ANY = "any"


def _any_label(option: str) -> str:
    """An option as a filter box shows it: "Any" for no filter, others as they are."""
    return "Any" if option == ANY else option


WORKLOADS = ("MLPerf server", "MLPerf interactive", "MLPerf offline", "custom lengths")
CATALOG_COLUMNS = {
    "id": "Row ID",
    "kind": "Kind",
    "round": "MLPerf round",
    "submitter": "Submitter",
    "division": "Division",
    "availability": "Availability",
    "accelerator": "Accelerator",
    "accelerator_count": "Accelerators [count]",
    "benchmark": "Benchmark",
    "scenario": "MLPerf scenario",
    "result": "Result [in its unit]",
    "metric_unit": "Result unit",
    "tokens_per_s_per_gpu": "Output [tokens/s per GPU]",
    "duplicate_of": "Duplicate of",
}
"""The catalog's columns shown, with their labels and units."""


def _choice(key: str, options: list, default):
    """Seed a kept selectbox with a value that is one of its options."""
    common.keep(key, default)
    if st.session_state[key] not in options:
        st.session_state[key] = default if default in options else options[0]
    return key


def own_model(scenario, frame: pd.DataFrame | None) -> tuple[str | None, str]:
    """The model the scenario says it serves, and where it says so (econ.ui.checks.stated_model;
    its measured curve file read for its model)."""
    from econ.ui.checks import stated_model

    measured = scenario.throughput.measured
    curve = ""
    if measured is not None and measured.curve:
        curve = compute.curve_model(str(measured.curve), measured.format)
    return stated_model(scenario, frame, curve)


def model_box(where, scenario, frame, options: list, key: str, known: str):
    """The Model select box, started on the scenario's own model (`own_model`, matched to the
    options by catalog key: "deepseek-r1" for "DeepSeek-R1"); empty, with a hint, where the
    scenario names none of `options`. `known` ends the hint: "the catalog has rows of".
    Returns (the model chosen, the scenario's model or None, where the scenario says it)."""
    from econ.throughput.match import model_key_of

    wanted, said = own_model(scenario, frame)
    if wanted is not None and wanted not in options:
        key_of = model_key_of(wanted)
        wanted = next((o for o in options if model_key_of(o) == key_of), key_of or wanted)
    model = where.selectbox(
        "Model",
        options,
        index=None,
        key=common.follow(key, wanted, options),
        placeholder="choose the scenario's model",
        format_func=_any_label,
        help=f"Starts on the scenario's model ({literal(wanted)}, from {said})"
        if wanted in options
        else f"The scenario names no model {known}: choose one",
    )
    return model, wanted, said


def no_model_hint(scenario, what: str) -> str:
    """Why no model is chosen: the scenario does not say which it serves (its name may hint)."""
    from econ.ui.checks import scenario_model

    hint = scenario_model(scenario)
    named = f" Its name or description mentions {hint}." if hint else ""
    return (
        "The scenario does not say which model it serves (no simulated source, catalog row or "
        f"measured curve names one), so none is preselected: choose the model to see {what}."
        + named
    )


def warnings_box(warnings, where=None) -> None:
    """Warnings in one box, each once, in the app's words (no command-line options or paths),
    as plain text (they may quote the file)."""
    where = where if where is not None else st
    seen = list(dict.fromkeys(literal(compute.app_text(w)) for w in warnings))
    if len(seen) == 1:
        where.warning(seen[0], icon=":material/warning:")
    elif seen:
        where.warning("\n".join(f"- {w}" for w in seen), icon=":material/warning:")


def _number(value, digits: str = ",.1f") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return format(value, digits)


def current_figure(scenario) -> None:
    t = scenario.throughput
    cols = st.columns([1, 3])
    cols[0].metric(
        "Scenario throughput [tokens/s per GPU]",
        _number(t.tokens_per_s_per_gpu),
        border=True,
        help="throughput.tokens_per_s_per_gpu; a measured or simulated source replaces it",
    )
    with cols[1]:
        if getattr(t, "measured", None) is not None:
            st.info("The scenario takes its throughput from a measured source at its SLO.")
        if getattr(t, "simulated", None) is not None:
            st.info("The scenario takes its throughput from the simulator at its SLO.")
        source = scenario.sources.get("throughput.tokens_per_s_per_gpu") or t.source
        st.caption(
            f"Source: {literal(source)}" if source else "No source given for the throughput."
        )


def badges(row: pd.Series, hardware: str) -> None:
    """Provenance badges of one catalog row (docs/throughput.md §5: availability, derived,
    silicon)."""
    availability = str(row.get("availability") or "unknown")
    if availability == "available":
        st.badge("Available", icon=":material/check_circle:", color="green")
    elif availability == "preview":
        st.badge("Preview", icon=":material/hourglass_top:", color="orange")
    elif availability == "rdi":
        st.badge("RDI: not a product", icon=":material/science:", color="red")
    else:
        st.badge("Availability unknown", icon=":material/help:", color="gray")
    if row.get("kind") == "vendor claim":
        st.badge("Vendor claim: no result file", icon=":material/campaign:", color="red")
        st.badge("Per-GPU unverified: system ÷ GPUs", icon=":material/calculate:", color="red")
    else:
        st.badge("Per-GPU derived: system ÷ GPUs", icon=":material/calculate:", color="orange")
    generation = str(row.get("generation") or "")
    wanted = compute.generation(hardware) if hardware else ""
    if row.get("hardware_key") == hardware:
        st.badge(f"Same hardware ({literal(hardware)})", icon=":material/memory:", color="green")
    elif generation and wanted and generation == wanted:
        st.badge(
            f"Same generation ({generation}), other system",
            icon=":material/memory:",
            color="orange",
        )
    elif generation and wanted:
        st.badge(
            f"{literal(generation)} ≠ scenario's {literal(wanted)}",
            icon=":material/memory:",
            color="red",
        )
    else:
        st.badge(f"Generation: {generation or 'unknown'}", icon=":material/memory:", color="gray")
    if row.get("division") == "open":
        st.badge("Open division", icon=":material/science:", color="orange")
    if row.get("duplicate_of"):
        st.badge("99.9 row repeating a 99 row", icon=":material/content_copy:", color="gray")


def scenario_row(rows: pd.DataFrame, scenario) -> str | None:
    """The catalog row the scenario's throughput came from: its id in the source, else the row
    whose tokens/s per GPU is the scenario's (to 0.05), else None."""
    source = scenario.throughput.source or ""
    for row_id in rows["id"]:
        if str(row_id) in source:
            return str(row_id)
    close = rows[
        (rows["tokens_per_s_per_gpu"] - scenario.throughput.tokens_per_s_per_gpu).abs() < 0.05
    ]
    return str(close["id"].iloc[0]) if len(close) else None


def catalog_tab(scenario) -> None:
    frame = compute.attempt(compute.catalog, "The MLPerf catalog")
    if frame is None:
        return
    hardware = scenario.fleet.hardware
    cols = st.columns(5)
    families = [ANY] + sorted(f for f in frame["benchmark_family"].dropna().unique() if f)
    model, wanted, where = model_box(
        cols[0], scenario, frame, families, "econ.cat_model", "the catalog has rows of"
    )
    scenarios = [ANY] + sorted(frame["scenario_normalized"].dropna().unique())
    mlperf = cols[1].selectbox(
        "MLPerf scenario",
        scenarios,
        key=_choice("econ.cat_scn", scenarios, ANY),
        format_func=str.capitalize,
    )
    rounds = [ANY] + sorted(frame["round"].dropna().unique())
    round_ = cols[2].selectbox(
        "Round", rounds, key=_choice("econ.cat_round", rounds, ANY), format_func=_any_label
    )
    availabilities = [ANY, "available", "preview"]
    availability = cols[3].selectbox(
        "Availability",
        availabilities,
        key=_choice("econ.cat_avail", availabilities, ANY),
        format_func=str.capitalize,
    )
    same = cols[4].toggle(
        "Same hardware",  # "Scenario's hardware only" was cut in its column
        key=common.keep("econ.cat_same", True),
        help=f"Only rows that ran on the scenario's hardware, {literal(hardware)}",
    )
    if model is None:
        st.info(
            no_model_hint(scenario, "its rows")
            if wanted is None
            else f"The catalog has no rows of the scenario's model, {literal(wanted)} (from "
            f"{where}): choose a model to see rows of another.",
            icon=":material/help:",
        )
        return
    filters = {
        "model": None if model == ANY else model,
        "scenario": None if mlperf == ANY else mlperf,
        "round": None if round_ == ANY else round_,
        "availability": None if availability == ANY else availability,
        "hardware": hardware if same else None,
    }
    from econ.benchmarks import filter_catalog

    rows = compute.attempt(
        lambda: filter_catalog(frame, **{k: v for k, v in filters.items() if v}), "Catalog filter"
    )
    if rows is None:
        return
    rows = rows[rows["tokens_per_s_per_gpu"].notna()]
    st.caption(
        f"{len(rows)} rows with a tokens/s result. Per-GPU figures are derived from system totals."
    )
    if rows.empty:
        st.info("No catalog row matches these filters.", icon=":material/filter_alt_off:")
        return
    shown = rows[[c for c in CATALOG_COLUMNS if c in rows.columns]]
    common.table(
        shown,
        hide_index=True,
        height=260,
        column_config={
            name: st.column_config.Column(label) for name, label in CATALOG_COLUMNS.items()
        }
        | {
            "tokens_per_s_per_gpu": st.column_config.NumberColumn(
                CATALOG_COLUMNS["tokens_per_s_per_gpu"],
                format="localized",
                help="The result over the accelerator count (derived from the system's total)",
            ),
            "result": st.column_config.NumberColumn(
                CATALOG_COLUMNS["result"],
                format="localized",
                help="As submitted: the system's total",
            ),
            "accelerator_count": st.column_config.NumberColumn(
                CATALOG_COLUMNS["accelerator_count"], format="%d"
            ),
        },
    )
    ids = list(rows["id"])
    labels = {
        r.id: f"{r.round} {r.submitter} {r.accelerator_count:g}x {r.accelerator} {r.scenario}: "
        f"{r.tokens_per_s_per_gpu:,.1f} tok/s/GPU"
        for r in rows.itertuples()
    }
    own = scenario_row(rows, scenario)
    picked = st.selectbox(
        "Row",
        ids,
        format_func=lambda i: labels.get(i, i) + (" (the scenario's)" if i == own else ""),
        key=common.follow("econ.cat_row", own or ids[0], ids),
    )
    row = rows[rows["id"] == picked].iloc[0]
    with st.container(horizontal=True):
        badges(row, hardware)
    checks = compute.attempt(lambda: compute.row_checks(picked, hardware), "Provenance checks")
    if checks:  # the row's provenance checks in one box
        checks = [literal(c) for c in checks]
        text = checks[0] if len(checks) == 1 else "\n".join(f"- {c}" for c in checks)
        st.warning(text, icon=":material/policy:")
    source = catalog_source(row)
    st.button(
        f"Use {row['tokens_per_s_per_gpu']:,.1f} tokens/s per GPU in the scenario",
        on_click=common.use_throughput,
        args=(float(row["tokens_per_s_per_gpu"]), source),
        icon=":material/input:",
    )


def catalog_source(row: pd.Series) -> str:
    """The source recorded with a catalog row's throughput: its id (which finds the row again),
    round, division, submitter, model, MLPerf scenario, system, availability and the system total
    the per-GPU figure was derived from: "MLPerf catalog row v5.1-8bcb3291 (v5.1 closed, NVIDIA,
    deepseek-r1 Server, 72x NVIDIA GB200, available): 2,327.5 tokens/s per GPU derived from the
    system's 167,578 tokens/s"."""

    def text(key: str) -> str:
        value = row.get(key)
        return "" if value is None or pd.isna(value) else str(value)

    kind = "vendor claim" if row.get("kind") == "vendor claim" else "MLPerf catalog row"
    count = row.get("accelerator_count")
    system = f"{count:g}x {text('accelerator')}" if pd.notna(count) else text("accelerator")
    facts = [
        " ".join(w for w in (text("round"), text("division")) if w),
        text("submitter"),
        " ".join(w for w in (text("benchmark"), text("scenario")) if w),
        system,
        text("availability"),
    ]
    derived = ""
    if pd.notna(row.get("result")):
        derived = f" derived from the system's {row['result']:,.0f} {text('metric_unit')}".rstrip()
    return (
        f"{kind} {row['id']} ({', '.join(f for f in facts if f)}): "
        f"{row['tokens_per_s_per_gpu']:,.1f} tokens/s per GPU{derived}"
    )


def _curve_uploaded() -> None:
    ss = st.session_state
    file = ss.get(CURVE_UPLOAD)
    if file is None:
        return
    problem = common.upload_problem(file, compute.MAX_UPLOAD_BYTES, "benchmark files")
    if problem:
        ss.pop(CURVE_FILE, None)  # no message of an earlier file stays beside this one
        ss[CURVE_ERROR] = (_upload_id(file), problem)
        return
    ss[CURVE_FILE] = (file.name, file.getvalue())
    _clear_gpus()


def _upload_id(file) -> str:
    """Which upload `file` is: Streamlit's id of it (the same name uploaded again is another)."""
    return str(getattr(file, "file_id", "") or file.name)


def _refusal() -> str | None:
    """Why the file in the upload box was not read, while the box holds it: a refusal shown only
    on the run of its upload vanished at the next edit, leaving the box naming a file beside
    "Upload a benchmark result"."""
    ss = st.session_state
    refused = ss.get(CURVE_ERROR)
    file = ss.get(CURVE_UPLOAD)
    if refused is None or file is None or _upload_id(file) != refused[0]:
        ss.pop(CURVE_ERROR, None)
        return None
    return refused[1]


def _forget_curve() -> None:
    st.session_state.pop(CURVE_FILE, None)
    _clear_gpus()


def typed_gpus() -> int | None:
    """The GPU count typed in "GPUs that served it" as its box takes it (a whole number from 1 to
    MAX_GPU_COUNT), for the Simulated curve tab's overlay, which is drawn beside the Measured
    curve tab's box; None when empty or refused (the overlay then reads the file's count)."""
    from econ.throughput.importers import MAX_GPU_COUNT
    from econ.ui.form import whole_number

    value = st.session_state.get(CURVE_GPUS)
    if value is None:
        return None
    try:
        number = whole_number(value)
    except ValueError:
        return None
    return number if 1 <= number <= MAX_GPU_COUNT else None


def _clear_gpus() -> None:
    """A new file, or none, starts from the GPU count its file states: a count typed for one
    file would divide another's throughput."""
    common.set_kept(CURVE_GPUS, None)


def frontier_chart(points: pd.DataFrame, label: str) -> alt.Chart:
    from econ.throughput.operating_point import pareto_frontier

    frame = points[["tokens_per_s_per_user", "output_tokens_per_s_per_gpu"]].copy()
    frame["frontier"] = np.where(
        pareto_frontier(
            frame["tokens_per_s_per_user"].to_numpy(float),
            frame["output_tokens_per_s_per_gpu"].to_numpy(float),
        ),
        "frontier",
        "dominated",
    )
    frame["curve"] = label
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("tokens_per_s_per_user:Q", title="Tokens/s per user (interactivity)"),
            y=alt.Y(
                "output_tokens_per_s_per_gpu:Q",
                title="Output tokens/s per GPU",
                axis=alt.Axis(format=",.0f"),
            ),
            color=alt.Color("curve:N", title=None),
            shape=alt.Shape("frontier:N", title=None),
            order="tokens_per_s_per_user:Q",
            tooltip=[
                alt.Tooltip("tokens_per_s_per_user:Q", title="tok/s per user", format=",.1f"),
                alt.Tooltip("output_tokens_per_s_per_gpu:Q", title="tok/s per GPU", format=",.1f"),
                "frontier:N",
            ],
        )
    )


def endpoints_chart(points: pd.DataFrame, label: str) -> alt.Chart:
    """MLPerf Endpoints' published chart: system tokens/s against tokens/s per user, as steps.

    "step-before" holds each point's system throughput back to the previous point's per-user
    speed: what the system delivers at least that fast per user (rules v1.0 §5.2, no interpolation).
    """
    frame = points[["tokens_per_s_per_user", "output_tokens_per_s", "concurrency"]].copy()
    frame = frame.dropna(subset=["tokens_per_s_per_user", "output_tokens_per_s"])
    frame["curve"] = label
    base = alt.Chart(frame).encode(
        x=alt.X("tokens_per_s_per_user:Q", title="Tokens/s per user"),
        y=alt.Y(
            "output_tokens_per_s:Q", title="System output tokens/s", axis=alt.Axis(format=",.0f")
        ),
        color=alt.Color("curve:N", title=None),
        order="tokens_per_s_per_user:Q",
        tooltip=[
            alt.Tooltip("concurrency:Q", title="concurrency", format=",.0f"),
            alt.Tooltip("tokens_per_s_per_user:Q", title="tok/s per user", format=",.1f"),
            alt.Tooltip("output_tokens_per_s:Q", title="system tok/s", format=",.1f"),
        ],
    )
    return alt.layer(base.mark_line(interpolate="step-before"), base.mark_point(filled=True))


def endpoints_inputs() -> tuple[tuple[tuple[str, float], ...] | None, str]:
    """The MLPerf Endpoints limits (TTFT P90 in v1.0, P95 in v0.7; TPOT P90; None when one is
    refused under its box) and the reading."""
    cols = st.columns(4)
    ttft90 = _optional(
        "econ.curve_ttft90", "TTFT P90 limit [s]", "MLPerf Endpoints v1.0's TTFT", cols[0]
    )
    ttft95 = _optional(
        "econ.curve_ttft95", "TTFT P95 limit [s]", "MLPerf Endpoints v0.7's TTFT", cols[1]
    )
    tpot90 = _optional(
        "econ.curve_tpot90",
        "TPOT P90 limit [ms]",
        "1000 / tokens/s per user (v1.0)",
        cols[2],
        1000.0,
    )
    interpolate = cols[3].toggle(
        "Interpolate (not official)",
        key=common.keep("econ.curve_interpolate", False),
        help="MLPerf Endpoints reads its curve in steps: only measured points count. On: "
        "read between measured points along the frontier.",
    )
    named = (("ttft_s_p90", ttft90), ("ttft_s_p95", ttft95), ("tpot_s_p90", tpot90))
    reading = "interpolate" if interpolate else "step"
    if any(v is REFUSED for _, v in named):
        return None, reading
    return tuple((k, v) for k, v in named if v is not None), reading


_OTHER_STATISTIC = re.compile(r"; set a limit on a statistic it reports \(([^()]*)\)")
"""The library's advice on a limit the curve has no statistic for, which names limits (TTFT p50,
E2E mean) the page has no box for."""


def page_limits(message: str) -> str:
    """A message of the operating point in the page's terms: a limit on a statistic the curve
    lacks is emptied, or the per-user speed limited instead; the boxes set p99 (P90 and P95 for
    MLPerf Endpoints files), not the statistics the curve reports, which are named as such."""
    return _OTHER_STATISTIC.sub(
        r"; empty that box or limit the tokens/s per user instead (this page's latency limits "
        r"are p99, and P90 or P95 for MLPerf Endpoints files; the curve reports \1)",
        message,
    )


_LATENCY = re.compile(r"^(ttft|tpot)_s_p(\d+)$")


def binding_label(binding: str, limits: dict[str, float]) -> str:
    """The operating point's binding limits as the SLO boxes name them, with their values and
    units ("TPOT p99 ≤ 20 ms", "Tokens/s per user ≥ 50"); "Highest measured load" when none."""
    out = []
    for name in (n.strip() for n in str(binding or "").split(",")):
        limit = limits.get(name)
        found = _LATENCY.match(name)
        if found:
            what, pct = found.group(1).upper(), found.group(2)
            shown = f"p{pct}" if pct == "99" else f"P{pct}"
            if limit is None or not math.isfinite(limit):
                out.append(f"{what} {shown}")
            elif what == "TPOT":
                out.append(f"{what} {shown} ≤ {number_format(limit * 1000, digits=4)} ms")
            else:
                out.append(f"{what} {shown} ≤ {number_format(limit, digits=4)} s")
        elif name == "tokens_per_s_per_user":
            at_least = "" if limit is None else f" ≥ {number_format(limit, digits=4)}"
            out.append("Tokens/s per user" + at_least)
        elif name:
            out.append(name[:1].upper() + name[1:])
    return ", ".join(out) or "none"


def point_mark(x: float, y: float, label: str) -> alt.Chart:
    frame = pd.DataFrame({"x": [x], "y": [y], "label": [label]})
    return (
        alt.Chart(frame)
        .mark_point(shape="diamond", size=300, filled=True, color="#f58518")
        .encode(x="x:Q", y="y:Q", tooltip=["label:N", alt.Tooltip("y:Q", format=",.1f")])
    )


REFUSED = "refused"
"""What `_optional` returns for a limit of 0 or less, refused under its box."""


def _optional(key: str, label: str, help_text: str, where, scale: float = 1.0, default=None):
    value = where.number_input(
        label, value=None, key=common.keep(key, default), help=help_text, placeholder="no limit"
    )
    if value is not None and value <= 0:  # refused here, in the box's words and unit
        where.error(
            literal(
                f"“{label}”: {number_format(value)} is not above 0; expected a limit above 0, "
                "or empty for no limit"
            ),
            icon=":material/error:",
        )
        return REFUSED
    return None if value is None else value / scale


def slo_inputs(scenario, prefix: str):
    """The TTFT, TPOT and per-user speed limits (seconds, seconds, tokens/s; None for no limit);
    None when a box holds a limit of 0 or less (refused under it)."""
    slo = getattr(scenario.throughput, "slo", None)
    cols = st.columns(3)
    ttft = _optional(
        f"{prefix}.ttft",
        "TTFT p99 limit [s]",
        "Time to first token, 99th percentile; empty = no limit",
        cols[0],
        default=getattr(slo, "ttft_p99_s", None),
    )
    tpot_default = getattr(slo, "tpot_p99_s", None)
    tpot = _optional(
        f"{prefix}.tpot",
        "TPOT p99 limit [ms]",
        "Time per output token, 99th percentile; empty = no limit",
        cols[1],
        scale=1000.0,
        default=None if tpot_default is None else tpot_default * 1000.0,
    )
    user = _optional(
        f"{prefix}.user",
        "Minimum tokens/s per user",
        "Interactivity floor; empty = none",
        cols[2],
        default=getattr(slo, "min_tokens_per_s_per_user", None),
    )
    limits = (ttft, tpot, user)
    return None if any(v is REFUSED for v in limits) else limits


def measured_tab(scenario) -> None:
    ss = st.session_state
    st.file_uploader(
        f"Benchmark output file ({common.upload_limit_mb()} MB at most)",
        key=CURVE_UPLOAD,
        on_change=_curve_uploaded,
        help="vLLM / SGLang bench_serving JSON(L), GenAI-Perf or AIPerf export (JSON or CSV), "
        "MLPerf LoadGen summary or detail log, MLPerf Endpoints result_summary.json (or a .zip of "
        "a submission tree), InferenceX JSON, trtllm-bench report, or a generic CSV with units "
        "in the headers.",
    )
    refused = _refusal()
    if refused:
        st.error(literal(refused), icon=":material/error:")
    if CURVE_FILE not in ss:
        st.info(
            "Upload a benchmark result to see its curve and SLO operating point.",
            icon=":material/upload_file:",
        )
        return
    from econ.throughput.importers import MAX_GPU_COUNT

    name, content = ss[CURVE_FILE]
    head = st.columns([3, 1, 1])
    head[0].markdown(f"**{literal(name)}** ({len(content):,} bytes)")
    gpus = common.whole_number_input(
        head[1],
        "GPUs that served it",
        within=(1, MAX_GPU_COUNT),
        key=common.keep(CURVE_GPUS),
        placeholder="from the file",
        help="Overrides the GPU count the file states or implies; empty = the file's",
    )
    head[2].button("Forget this file", on_click=_forget_curve, icon=":material/delete:")
    if gpus is None and ss.get(CURVE_GPUS) is not None:
        return  # refused under the box: not read with the file's count instead
    # (the reader's messages begin with the file's name)
    curve = compute.attempt(lambda: compute.curve(name, content, gpus), "Reading the file")
    if curve is None:
        return
    prov = curve.provenance
    tags = st.container(horizontal=True)
    with tags:
        st.badge(
            literal(prov.get("format") or prov.get("tool") or "unknown format"),
            icon=":material/description:",
            color="blue",
        )
        if prov.get("tool_version"):
            st.badge(f"version {literal(prov['tool_version'])}", color="gray")
        basis = str(prov.get("gpu_count_basis") or "")
        if basis:
            st.badge(
                f"GPUs: {literal(basis)}",
                icon=":material/memory:",
                color="green" if "file" in basis else "orange",
            )
        for key in ("model", "hardware", "precision"):
            if prov.get(key):
                st.badge(f"{key}: {literal(prov[key])}", color="gray")
        if prov.get("file_sha256"):
            st.badge(f"sha256 {str(prov['file_sha256'])[:12]}…", color="gray")
    # the file's and the operating point's warnings in one box, here, filled once both are known
    box, notes = st.empty(), list(curve.warnings)
    points = curve.points
    workloads = sorted({w for w in points.get("workload", pd.Series(dtype=str)).fillna("") if w})
    workload = None
    if len(workloads) > 1:
        workload = st.selectbox(
            "Workload", workloads, key=_choice("econ.curve_workload", workloads, workloads[0])
        )
    limits = slo_inputs(scenario, "econ.curve_slo")
    endpoints = prov.get("curve_reading") == "step"
    latency_limits, reading = endpoints_inputs() if endpoints else ((), None)
    if points["tokens_per_s_per_user"].notna().sum() == 0:
        notes.append("The file reports no per-user speed, so there is no curve to plot.")
    point = None
    if limits is not None and latency_limits is not None:  # (else refused under its box)
        point = compute.attempt(
            lambda: compute.measured_point(
                name, content, gpus, *limits, workload, latency_limits, reading
            ),
            "Operating point",
            words=page_limits,
        )
    if endpoints:
        shown = points if workload is None else points[points["workload"] == workload]
        chart = endpoints_chart(shown, name)
        if point is not None:
            chart = alt.layer(
                chart,
                point_mark(
                    point.tokens_per_s_per_user,
                    point.values["output_tokens_per_s"],
                    "SLO operating point",
                ),
            )
        charts.show(chart)
        st.caption(
            "MLPerf Endpoints chart: steps, no interpolation. Tokens/s per user: "
            + literal(
                f"{prov.get('tokens_per_s_per_user_definition', 'n/a')}; throughput window: "
                f"{prov.get('throughput_window', 'n/a')}."
            )
        )
    else:
        chart = frontier_chart(
            points.dropna(subset=["tokens_per_s_per_user", "output_tokens_per_s_per_gpu"]), name
        )
        if point is not None:
            chart = alt.layer(
                chart,
                point_mark(
                    point.tokens_per_s_per_user, point.tokens_per_s_per_gpu, "SLO operating point"
                ),
            )
        own = scenario.throughput.tokens_per_s_per_gpu
        top = points["output_tokens_per_s_per_gpu"].max()
        if pd.notna(top) and own <= 3 * float(top):
            chart = alt.layer(chart, charts.rule(own, "scenario"))
        else:  # the scenario's line would pin the axis and flatten the curve on its floor
            st.caption(f"The scenario's {own:,.1f} tokens/s per GPU is off this chart's scale.")
        charts.show(chart)
    if point is not None:
        notes += point.warnings
        if point.clamped and not any("clamped" in w for w in point.warnings):
            notes.append(
                "The SLO is looser than the highest measured load: the point is clamped to it."
            )
    warnings_box(notes, box)
    if point is None:
        return
    cols = st.columns(4)
    cols[0].metric(
        "Measured operating point [tokens/s per GPU]",
        _number(point.tokens_per_s_per_gpu),
        border=True,
    )
    cols[1].metric("Tokens/s per user", _number(point.tokens_per_s_per_user), border=True)
    cols[2].metric("Binding limit", binding_label(point.binding, point.limits), border=True)
    cols[3].metric("Interpolated", "yes" if point.interpolated else "no, measured", border=True)
    st.caption(point_figures(point))
    if endpoints:
        v = point.values
        cols = st.columns(4)
        cols[0].metric("System output tokens/s", _number(v["output_tokens_per_s"]), border=True)
        cols[1].metric("Concurrency", _number(v["concurrency"], ",.0f"), border=True)
        cols[2].metric(
            "Tokens/s per kW (provisioned)",
            _number(v.get("output_tokens_per_s_per_kw_provisioned")),
            border=True,
            help="Provisioned power (MLPerf Endpoints Appendix E, TDP-based), not measured",
        )
        cols[3].metric(
            "J per token (provisioned)",
            _number(v.get("j_per_output_token_provisioned"), ",.3f"),
            border=True,
            help="Provisioned power / system output tokens/s; not a measured energy",
        )
    source = measured_source(name, prov, point, workload, gpus, points)
    allowed, note = curve_fits(prov, points, scenario, name)
    st.button(
        f"Use {point.tokens_per_s_per_gpu:,.1f} tokens/s per GPU in the scenario",
        on_click=common.use_throughput,
        args=(float(point.tokens_per_s_per_gpu), source + note),
        icon=":material/input:",
        key="econ.use_measured",
        disabled=not allowed,
    )


POINT_LATENCIES = (
    ("TTFT", "ttft", "s", 1.0),
    ("TPOT", "tpot", "ms", 1000.0),
    ("E2E", "e2e", "s", 1.0),
)
"""The latencies shown at an operating point: (name, column prefix, unit, factor from seconds)."""


def point_figures(point) -> str:
    """The operating point's latencies, load and GPU count, as the curve gives them (interpolated
    with the throughput between its measured points): "At this point: TTFT p50 0.181 s, p99
    0.4527 s; TPOT p50 124.3 ms, p99 146 ms; concurrency 64; GPUs 8" (the request rate is the
    offered one, as the curve's column is). Percentiles the file lacks are left out."""
    v = point.values

    def known(column: str) -> float | None:
        value = v.get(column)
        return float(value) if value is not None and math.isfinite(value) else None

    parts = []
    for name, column, unit, factor in POINT_LATENCIES:
        stats = [
            f"{stat} {number_format(value * factor, digits=4)} {unit}"
            for stat in ("p50", "p90", "p95", "p99")
            if (value := known(f"{column}_s_{stat}")) is not None
        ]
        if stats:
            parts.append(f"{name} " + ", ".join(stats))
    for column, label, unit in (
        ("concurrency", "concurrency", ""),
        ("request_rate_per_s", "offered request rate", "/s"),
        ("gpu_count", "GPUs", ""),
    ):
        if (value := known(column)) is not None:
            parts.append(f"{label} {number_format(value, digits=4)}{unit}")
    if not parts:
        return "At this point: the file reports no latency, load or GPU count."
    return (
        "At this point: "
        + "; ".join(parts)
        + (" (interpolated between measured points)" if point.interpolated else "")
    )


def measured_source(
    name: str, prov, point, workload: str | None, gpus: int | None = None, points=None
) -> str:
    """The source recorded with a measured throughput: the file (its SHA-256's first 12 hex
    digits), the tool, model and hardware it states (`points`: its rows, where a file states them
    per row), the limits that chose the point, whether it lies between measured points, the
    workload and where the GPU count came from (`gpus`: the count typed in the page's box), so
    that the figure can be found again from the file and read for what it measured."""
    from econ.text import clipped
    from econ.throughput.match import QUOTED_NAME_LIMIT, stated

    limits = {k: v for k, v in point.limits.items() if v is not None and math.isfinite(v)}
    chosen = binding_label(",".join(limits), limits) if limits else "no limit: the highest load"
    sha = str(prov.get("file_sha256") or "")
    rows = points if points is not None else pd.DataFrame()
    said = {
        key: clipped(stated(prov, rows, key), QUOTED_NAME_LIMIT) for key in ("model", "hardware")
    }
    unsaid = [key for key, value in said.items() if not value]
    what = [str(prov.get("tool") or prov.get("format") or "")]
    if said["model"] and said["hardware"]:
        what.append(f"{said['model']} on {said['hardware']}")
    else:
        what += [f"{key} {said[key]}" for key in said if said[key]]
    if unsaid:
        what.append(f"{' and '.join(unsaid)} not stated")
    facts = "; ".join(w for w in ([f"sha256 {sha[:12]}"] if sha else []) + what if w)
    return (
        f"measured: {name} ({facts})"
        + f" at the SLO operating point ({chosen})"
        + (", interpolated between measured points" if point.interpolated else "")
        + (f", workload {workload}" if workload else "")
        + gpu_count_source(str(prov.get("gpu_count_basis") or ""), gpus)
    )


USER_BASIS = "given by the user"
"""The importers' basis of a GPU count passed to them: in the app, the "GPUs that served it" box."""


def gpu_count_source(basis: str, gpus: int | None) -> str:
    """Where the GPU count came from, for the source: ", GPU count from num_gpus" (the file's
    field), ', GPU count 8 typed in "GPUs that served it"' (the box)."""
    if not basis:
        return ""
    if basis == USER_BASIS:
        return f', GPU count {f"{gpus:,} " if gpus else ""}typed in "GPUs that served it"'
    return ", GPU count unknown" if basis == "unknown" else f", GPU count from {basis}"


def curve_fits(prov, points, scenario, name: str) -> tuple[bool, str]:
    """Compare the curve's model and hardware with the scenario's: (may it be used, note for the
    source). A difference needs the user's explicit confirmation before "Use" is enabled."""
    from econ.ui.checks import curve_mismatches, joined

    differences, unknowns = curve_mismatches(prov, points, scenario)
    if unknowns:
        st.info(
            literal(
                f"{name} does not state its {joined(unknowns)}, so it cannot be checked against "
                f"the scenario ({scenario.fleet.hardware}); make sure it measured the scenario's."
            ),
            icon=":material/help:",
        )
    if not differences:
        return True, ""
    st.warning(
        "This curve is not of the scenario's model and hardware:\n\n"
        + "\n".join(f"- {literal(d)}" for d in differences)
        + "\n\nIts throughput would stand for a different deployment.",
        icon=":material/compare_arrows:",
    )
    confirmed = st.checkbox(
        "Use it anyway: I confirm this curve stands for the scenario's deployment",
        key=f"econ.curve_confirm.{name}",
    )
    return confirmed, " (model/hardware differ from the scenario's; confirmed in the app)"


def simulated_tab(scenario) -> None:
    hardware_keys = compute.attempt(compute.hardware_keys, "Hardware catalog")
    models = compute.attempt(compute.llm_keys, "Model catalog")
    if not hardware_keys or not models:
        return
    cols = st.columns(4)
    fleet_hw = scenario.fleet.hardware
    simulated = getattr(scenario.throughput, "simulated", None)
    own_hw = (getattr(simulated, "hardware", "") or fleet_hw) if simulated else fleet_hw
    hardware = cols[0].selectbox(
        "Hardware",
        hardware_keys,
        index=None,
        key=common.follow("econ.sim_hw", own_hw, hardware_keys),
        placeholder="choose hardware",
    )
    catalog = compute.attempt(compute.catalog, "The MLPerf catalog")
    model, wanted, where = model_box(
        cols[1], scenario, catalog, models, "econ.sim_model", "the simulator knows"
    )
    if model is None or hardware is None:
        st.info(
            no_model_hint(scenario, "its simulated curve")
            if wanted is None
            else f"The simulator does not know the scenario's model, {literal(wanted)} (from "
            f"{where}): choose a model and hardware to simulate."
            if model is None
            else "Choose the hardware to simulate.",
            icon=":material/help:",
        )
        return
    found = compute.attempt(lambda: compute.precisions(hardware), "Precisions")
    if found is None:
        return
    native, default_precision = found
    precision = cols[2].selectbox(
        "Precision",
        native,
        key=_choice(f"econ.sim_precision.{hardware}", native, default_precision),
        format_func=str.upper,
    )
    kind = cols[3].selectbox(
        "Workload", WORKLOADS, key=_choice("econ.sim_workload", list(WORKLOADS), WORKLOADS[0])
    )
    limits = {"tpot_limit_s": None, "ttft_limit_s": None}
    if kind != "custom lengths":
        preset = compute.attempt(
            lambda: compute.workload(model, kind.split()[-1]),
            f"MLPerf {kind.split()[-1]} workload of {model}",
        )
        if preset is None:
            return
        isl, osl = preset["input_tokens"], preset["output_tokens"]
        limits = {
            k: (preset[k] if math.isfinite(preset[k]) else None)
            for k in ("tpot_limit_s", "ttft_limit_s")
        }
        tpot_text = (
            "none" if limits["tpot_limit_s"] is None else f"{limits['tpot_limit_s'] * 1000:g} ms"
        )
        ttft_text = "none" if limits["ttft_limit_s"] is None else f"{limits['ttft_limit_s']:g} s"
        st.caption(
            f"MLPerf lengths {isl:,.0f} in / {osl:,.0f} out; p99 limits TPOT {tpot_text}, "
            f"TTFT {ttft_text}"
        )
    else:
        c = st.columns(4)
        isl = c[0].number_input(
            "Input tokens per request",
            value=None,
            key=common.keep("econ.sim_isl", 1000.0),
            min_value=1.0,
        )
        osl = c[1].number_input(
            "Output tokens per request",
            value=None,
            key=common.keep("econ.sim_osl", 1000.0),
            min_value=1.0,
        )
        tpot = _optional(
            "econ.sim_tpot",
            "TPOT p99 limit [ms]",
            "Time per output token, 99th percentile; empty = no limit",
            c[2],
            scale=1000.0,
        )
        ttft = _optional(
            "econ.sim_ttft",
            "TTFT p99 limit [s]",
            "Time to first token, 99th percentile; empty = no limit",
            c[3],
        )
        if not isl or not osl:
            st.error(
                "Give the input and output tokens per request (both above 0).",
                icon=":material/error:",
            )
            return
        if REFUSED in (tpot, ttft):  # (said under its box)
            return
        limits = {"tpot_limit_s": tpot, "ttft_limit_s": ttft}
    sim = compute.attempt(
        lambda: compute.simulation(
            hardware,
            model,
            precision,
            isl,
            osl,
            limits["tpot_limit_s"],
            limits["ttft_limit_s"],
            None,
        ),
        "Simulation",
    )
    if sim is None:
        return
    point, light = sim["point"], sim["speed_of_light"]
    if not point["meets_slo"]:
        st.error(
            "No parallelism layout meets this SLO; the closest point is shown: "
            f"{point['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU at TPOT p99 "
            f"{point['tpot_s_p99'] * 1000:,.1f} ms, TTFT p99 {point['ttft_s_p99']:,.2f} s. Loosen "
            "the limits.",
            icon=":material/error:",
        )
    cols = st.columns(4)
    cols[0].metric(
        "Simulated operating point [tokens/s per GPU]",
        _number(point["tokens_per_s_per_gpu"], ",.0f"),
        border=True,
    )
    cols[1].metric("Speed of light [tokens/s per GPU]", _number(light, ",.0f"), border=True)
    headroom = sim["headroom"]
    cols[2].metric(
        "Headroom to speed of light",
        "n/a" if not math.isfinite(headroom) else f"{headroom:+.0%}",
        border=True,
        help="How far software could still raise throughput on this hardware before physics stops it",
    )
    cols[3].metric(
        "Layout",
        f"{point['instance_gpus']} GPUs, TP {point['tensor_parallel']}",
        border=True,
        help=f"Concurrency {point['concurrency']:,.0f}",
    )
    band = sim.get("error_band")
    if band is not None:
        q = band["quantiles_tokens_per_s_per_gpu"]
        text = (
            f"Out-of-sample error band: {q['p05']:,.0f} to {q['p95']:,.0f} tokens/s per GPU "
            f"(5th to 95th percentile; median error {band['median_abs_error']:.1%} over "
            f"{band['predictions']} predictions, {band['basis']}"
            + ("; widened to reach this pair's own MLPerf result" if band["widened"] else "")
            + "). Monte Carlo: "
            f"`throughput.tokens_per_s_per_gpu={band['montecarlo_dist_lognormal']}`"
        )
        if band["calibrated_pair"]:
            st.caption(text)
        else:
            st.warning(
                f"{model} on {hardware} is outside the calibrated hardware × model pairs: the "
                f"coefficients never saw this model on this hardware. {text}",
                icon=":material/warning:",
            )
    chart = frontier_chart(sim["points"], f"simulated {hardware} / {model}")
    layers = [
        chart,
        point_mark(
            point["tokens_per_s_per_user"], point["tokens_per_s_per_gpu"], "SLO operating point"
        ),
        charts.rule(light, "speed of light"),
        charts.rule(scenario.throughput.tokens_per_s_per_gpu, "scenario", dash=(1, 3)),
    ]
    ss = st.session_state
    if CURVE_FILE in ss:
        name, content = ss[CURVE_FILE]
        try:
            measured = compute.curve(name, content, typed_gpus())
        except Exception:  # noqa: BLE001 - the Measured curve tab shows why, once
            measured = None
            st.caption(
                f"{literal(name)} is not drawn here: it cannot be read (the Measured curve tab "
                "says why)."
            )
        if measured is not None:
            pts = measured.points.dropna(
                subset=["tokens_per_s_per_user", "output_tokens_per_s_per_gpu"]
            )
            if len(pts):
                layers.append(frontier_chart(pts, f"measured {name}"))
            else:  # said, not left out silently
                unknown = measured.points["output_tokens_per_s_per_gpu"].isna().all()
                st.caption(
                    f"{literal(name)} is not drawn here: "
                    + (
                        'its GPU count is unknown (type it in "GPUs that served it" on the '
                        "Measured curve tab)"
                        if unknown
                        else "it reports no tokens/s per user"
                    )
                    + "."
                )
    charts.show(alt.layer(*layers))
    st.caption(
        "Lines: throughput-interactivity envelopes; diamond: the SLO operating point; dashed rules: "
        "the speed of light (all efficiencies at 1) and the scenario's throughput. "
        f"Coefficients: {sim['provenance'].get('efficiency', '')} {sim['provenance'].get('calibration_source', '')}"
        + (
            f"; model efficiency {eta:.3f} (fitted across hardware)."
            if isinstance(eta := sim["provenance"].get("model_efficiency"), int | float)
            else "."
        )
    )
    for warning in sim["warnings"]:
        st.warning(warning, icon=":material/warning:")
    st.button(
        f"Use {point['tokens_per_s_per_gpu']:,.1f} tokens/s per GPU in the scenario",
        on_click=common.use_throughput,
        args=(
            float(point["tokens_per_s_per_gpu"]),
            f"simulated: {model} on {hardware} at {precision}, {kind}",
        ),
        icon=":material/input:",
        key="econ.use_simulated",
    )


def render() -> None:
    st.title("Throughput")
    current = common.require_scenario("throughput sources")
    if current is None:
        return
    scenario = current.scenario
    current_figure(scenario)
    catalog, measured, simulated = st.tabs(
        ["Benchmark catalog", "Measured curve", "Simulated curve"]
    )
    with catalog:
        catalog_tab(scenario)
    with measured:
        measured_tab(scenario)
    with simulated:
        simulated_tab(scenario)


if __name__ == "__main__":
    common.run_page(render)
