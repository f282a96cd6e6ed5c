"""Risk: which inputs move the result most (tornado), and the spread of outcomes when inputs are
uncertain (Monte Carlo histogram with quantiles, fan chart of cumulative cash). Runs on demand.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from econ.analysis.runner import HELD_NOTE
from econ.analysis.sampling import (  # a browser holds whole numbers up to MAX_SEED
    MAX_SEED,
    sobol_balance_note,
)
from econ.analysis.sensitivity import output_notes
from econ.labels import counted
from econ.ui import charts, common, compute, risk
from econ.ui.fmt import (
    MONEY_SCALES,
    USD_PER_UNIT,
    format_value,
    literal,
    metric_kind,
    metric_label,
    short_number,
)
from econ.ui.form import (
    box_format,
    find,
    grouped_caption,
    path_label,
    shown_value,
    stored_path_label,
)

TORNADO = "econ.tornado_result"
MONTECARLO = "econ.mc_result"
MC_TABLE = "econ.mc_table"
MC_STARTING = "econ.mc_starting"
"""The starting rows the Monte Carlo table was last given (the scenario's own values)."""
OUTPUTS = (
    "npv_usd",
    "lcot_usd_per_mtok",
    "irr_project_annual",
    "irr_equity_annual",
    "payback_months",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    "ebitda_usd_total",
)
TORNADO_DEFAULTS = (
    "market.price_usd_per_mtok",
    "market.price_decline_annual",
    "utilization.share",
    "throughput.tokens_per_s_per_gpu",
    "capex.system_price_usd",
    "capex.gpu_price_usd",
    "depreciation.life_years",
    "power.price_usd_per_kwh",
    "financing.discount_rate_annual",
    "financing.debt_rate_annual",
)


def _output_label(output: str) -> str:
    """An Output box's option, money in the display scale the charts use."""
    return metric_label(output, common.money())


def _display(values: pd.Series, output: str, money: str) -> tuple[pd.Series, str, str]:
    """Values in display units, axis format and axis title of an output."""
    kind = metric_kind(output)
    if kind == "usd":
        return values / MONEY_SCALES[money], charts.usd_format(money), metric_label(output, money)
    if kind == USD_PER_UNIT:  # per GPU, per rack: whole USD whatever the money scale
        return values, charts.usd_format("USD"), metric_label(output)
    if kind == "pct":
        return values * 100, ",.1f", metric_label(output).replace("[%/year]", "[% per year]")
    return values, ",.4g", metric_label(output)


def _spelled(value: float) -> str:
    """A distribution's number as typed: 12 significant digits, the float's last-digit noise
    dropped (4867.7 x 0.8 is 3894.1600000000003) but nothing rounded that a scenario states:
    6084.625, not "6084.62"; a decline of 0.325, not "0.33"."""
    return f"{value:.12g}"


def default_distributions(base, paths: list[str]) -> pd.DataFrame:
    """Starting rows of the Monte Carlo table: ranges around the base values, each row's mode
    the scenario's own value and its ends the stated offsets from it, all written in full (the
    table shows the numbers the run draws from, and `econ montecarlo --dist` with the same text
    draws the same)."""
    rows = []
    decline = base.market.price_decline_annual
    if "market.price_decline_annual" in paths:
        ends = (max(0.0, decline - 0.15), decline, min(0.95, decline + 0.3))
        rows.append(("market.price_decline_annual", f"pert({', '.join(map(_spelled, ends))})"))
    share = base.utilization.share
    if "utilization.share" in paths:
        ends = (max(0.0, share - 0.15), min(1.0, share + 0.1))
        rows.append(("utilization.share", f"uniform({', '.join(map(_spelled, ends))})"))
    tokens = base.throughput.tokens_per_s_per_gpu
    if "throughput.tokens_per_s_per_gpu" in paths:
        ends = (tokens * 0.8, tokens, tokens * 1.25)
        rows.append(
            ("throughput.tokens_per_s_per_gpu", f"triangular({', '.join(map(_spelled, ends))})")
        )
    return pd.DataFrame(rows, columns=["path", "distribution"])


def _clip_note(path: str, bounds: tuple) -> str:
    low, high = (shown_value(path, b) for b in bounds)
    return f"{path_label(path)} {low:,.6g} to {high:,.6g}"


def _held_info(held) -> None:
    """What loan a run held, above its results."""
    if held is not None:
        note = held["note"]
        st.info(note[0].upper() + note[1:] + ".", icon=":material/account_balance:")


def _stale(stored, current, hold: bool) -> None:
    if stored != (current.text, hold):
        st.info(
            "These results are for an earlier version of the scenario or of the loan setting; "
            "run again.",
            icon=":material/history:",
        )


def cushion_section(current) -> None:
    """The price cushion of the scenario's loan held as sized, where it has debt."""
    from econ.memo.figures import breach_price_text, cushion_words

    cushion = compute.attempt(
        lambda: compute.price_cushion(current.text), "Price cushion", busy="Searching prices..."
    )
    if cushion is None:
        return
    price, base = cushion["price_usd_per_mtok"], cushion["base_usd_per_mtok"]
    help_text = (
        "The month-1 token price below which the loan, held as sized, breaches a covenant "
        "(the price path's decline kept); as the memo's price cushion."
    )
    if price is None:
        st.caption(f"Price cushion: n/a ({cushion['reason']}).", help=help_text)
        return
    share = cushion["cushion_share"]
    # The memo's words and rounding: the price shown rounded up, never itself in breach.
    delta = cushion_words(share, base, "the scenario's")
    if share < 0:  # the scenario's own price is below the breach price
        help_text += (
            f" The scenario's own month-1 price, {base:,.4f}, is below it: the loan as sized "
            "already breaches a covenant at the scenario's price (Results: covenant breach "
            "months and the first breach)."
        )
        colour, arrow = "red", "off"
    else:
        colour, arrow = "off", "down"
    st.columns(3)[0].metric(
        "Covenant breached below [USD/M tokens]",
        breach_price_text(price),
        delta,
        delta_color=colour,
        delta_arrow=arrow,
        border=True,
        help=help_text,
    )


def tornado_section(current, paths: list[str], money: str, hold: bool) -> None:
    st.subheader("Tornado: one input at a time")
    ss = st.session_state
    cols = st.columns([3, 1, 1])
    defaults = [p for p in TORNADO_DEFAULTS if p in paths][:8]
    key = common.keep("econ.tornado_paths", defaults)
    ss[key] = [p for p in ss[key] if p in paths]
    chosen = cols[0].multiselect(
        "Inputs", paths, key=key, format_func=path_label, help="Numeric fields the scenario sets"
    )
    pct = cols[1].number_input(
        "Swing [± %]",
        value=None,
        key=common.keep("econ.tornado_pct", 20.0),
        step=5.0,
        help="Each input at its base value minus and plus this percentage of it: relative, so "
        "20 swings a 70% utilization to 56% and 84%, not 50% and 90%",
    )
    output = cols[2].selectbox(
        "Output",
        OUTPUTS,
        format_func=_output_label,
        key=common.keep("econ.tornado_output", "npv_usd"),
    )
    if st.button("Run the tornado", icon=":material/play_arrow:"):
        if not chosen:
            st.error("Pick at least one input.", icon=":material/error:")
        elif pct is None or not 0 < pct < 100:
            st.error(
                (
                    "“Swing [± %]” is empty"
                    if pct is None
                    else f"“Swing [± %]”: {pct:g} is out of range"
                )
                + "; expected a percentage above 0 and below 100.",
                icon=":material/error:",
            )
        else:
            bounded = compute.attempt(
                lambda: risk.bounded_ranges(current.scenario, chosen, pct), "Tornado ranges"
            )
            result = None
            if bounded is not None:
                result = compute.attempt(
                    lambda: risk.tornado(current.scenario, bounded[0], OUTPUTS, hold),
                    "Tornado",
                    busy="Projecting the low and high cases...",
                )
            if result is not None:
                held = result.run.metadata.get("held_loan")
                # the held loan's note is _held_info's, shown once
                notes = [n for n in result.run.notes if not n.startswith(HELD_NOTE)]
                ss[TORNADO] = ((current.text, hold), pct, result.table, bounded, held, notes)
    if TORNADO not in ss:
        st.caption("Pick inputs and run: each is set to its low and high value, the others kept.")
        return
    stored, swing, table, (ranges, clipped), held, notes = ss[TORNADO]
    _held_info(held)
    if clipped:
        st.info(
            "Swings clipped to what the field accepts: "
            + "; ".join(_clip_note(p, ranges[p]) for p in clipped)
            + ".",
            icon=":material/vertical_align_center:",
        )
    _stale(stored, current, hold)
    rows = table[table["output"] == output].copy()
    if rows.empty:
        return
    scale_rows = rows.copy()
    scale_rows["input"] = [path_label(p) for p in scale_rows["input"]]
    scale_rows["output_low"], fmt, title = _display(rows["output_low"], output, money)
    scale_rows["output_high"], _, _ = _display(rows["output_high"], output, money)
    scale_rows["output_base"], _, _ = _display(rows["output_base"], output, money)
    if np.isnan(float(rows["output_base"].iloc[0])):
        # no base to run a bar from: the chart drew its axes and no bar, with no word why
        _undefined_base(rows, output, swing, money)
    else:
        charts.show(charts.tornado(scale_rows, swing, title, fmt))
        st.caption(
            "Bars run from the base result (rule) to the result with the input low and high."
        )
    _tornado_notes(rows, output_notes(notes, output, OUTPUTS))  # (not other outputs' ties)


def _undefined_base(rows: pd.DataFrame, output: str, swing: float, money: str) -> None:
    """Where the output is undefined (n/a) for the scenario itself, as the capital stack's equity
    IRR, the tornado has no base for its bars: said, with each input's results at its ends."""
    kind, label = metric_kind(output), _output_label(output)
    st.warning(
        f"{label} is n/a for the scenario as it stands, so the tornado has no base "
        "result to run its bars from; each input's results at its ends are below.",
        icon=":material/warning:",
    )
    ends = pd.DataFrame(
        {
            "Input": [path_label(p) for p in rows["input"]],
            f"{label}, input −{swing:g}%": [
                format_value(v, kind, money) for v in rows["output_low"]
            ],
            f"{label}, input +{swing:g}%": [
                format_value(v, kind, money) for v in rows["output_high"]
            ],
        }
    )
    common.table(ends, hide_index=True)


def _tornado_notes(rows: pd.DataFrame, notes: list[str]) -> None:
    """Under the chart, the notes `econ sensitivity --method tornado` prints: each input's of
    the output shown (its table's `note`: an end that sells the GPUs at book value, a tie, no
    effect, undefined at an end) and the run's (`note: ...` lines: ties, inputs that move no
    output, a base that sells at book value), in econ.analysis.sensitivity's words, the inputs
    and outputs by their labels (`tornado_words`)."""
    lines = [f"{path_label(i)}: {n}" for i, n in zip(rows["input"], rows["note"], strict=True) if n]
    lines += [tornado_words(note, rows["input"]) for note in notes]
    if lines:
        st.info(
            "Notes, as `econ sensitivity` prints them:\n"
            + "\n".join(f"- {literal(line)}" for line in lines),
            icon=":material/info:",
        )


def _mc_rows() -> dict[str, str]:
    table = st.session_state.get(MC_TABLE)
    out = {}
    if table is None:
        return out
    for row in table.to_dict("records"):
        path, dist = row.get("path"), row.get("distribution")
        if isinstance(path, str) and path and isinstance(dist, str) and dist.strip():
            out[path] = dist.strip()
    return out


def _mc_table_problems() -> list[str]:
    """What the distribution table says that _mc_rows would drop without a word: an input given
    twice (the CLI refuses a repeated --dist), a row with an input but no distribution and one
    with a distribution but no input (the run went ahead without it)."""
    table = st.session_state.get(MC_TABLE)
    if table is None:
        return []
    problems, seen = [], set()
    for number, row in enumerate(table.to_dict("records"), 1):
        path, dist = row.get("path"), row.get("distribution")
        if not (isinstance(path, str) and path):
            if isinstance(dist, str) and dist.strip():
                problems.append(
                    f"Row {number}, {dist.strip()}: the input is empty; pick one or delete the row"
                )
            continue
        if not (isinstance(dist, str) and dist.strip()):
            problems.append(
                f"Row {number}, {stored_path_label(path)}: the distribution is empty; "
                "give one or delete the row"
            )
        elif path in seen:
            problems.append(
                f"{stored_path_label(path)} is given twice (row {number}); "
                "expected one distribution per input"
            )
        seen.add(path)
    return problems


FEW_DRAWS = 100
"""Fewer Monte Carlo scenarios than this get a warning that their statistics say little."""


def _mc_inputs(distributions: dict[str, str], n, seed, sampling: str) -> tuple:
    """What a Monte Carlo run was given: its distributions, scenarios, seed and sampling."""
    return (tuple(sorted(distributions.items())), n, seed, sampling)


def _mc_inputs_text(inputs: tuple) -> str:
    """A run's inputs in words: "Utilization › Share [fraction] uniform(0.55, 0.80), ...;
    2,000 scenarios, seed 0, random sampling"."""
    distributions, n, seed, sampling = inputs
    given = ", ".join(f"{stored_path_label(p)} {d}" for p, d in distributions) or "none"
    scenarios = counted(n, "scenario") if n is not None else "no scenario count"
    return f"{given}; {scenarios}, seed {seed}, {sampling} sampling"


def montecarlo_section(current, paths: list[str], money: str, hold: bool) -> None:
    st.subheader("Monte Carlo: all inputs uncertain at once")
    ss = st.session_state
    # The starting rows follow the scenario until edited: kept, another scenario's rows drew
    # its throughput (4,867.7 tokens/s per GPU on gpt-oss-120b-b200's 11,232) without a word.
    starting = default_distributions(current.scenario, paths)
    table = ss.get(MC_TABLE)
    if not isinstance(table, pd.DataFrame) or table.equals(ss.get(MC_STARTING)):
        ss[MC_TABLE] = starting
    ss[MC_STARTING] = starting
    # A grid keyed by its content: once an edit is stored the grid starts afresh from it, so
    # Streamlit never re-applies old edits to the new table (and edits survive page switches).
    digest = hashlib.sha1(ss[MC_TABLE].to_json().encode()).hexdigest()[:10]
    edited = st.data_editor(
        ss[MC_TABLE],
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            # Distributions are typed in stored units (a share as 0.6, not 60 %): so is the label.
            # Neither column is `required`: the browser leaves out an added row with a required
            # cell empty, so the run went ahead without it; sent, _mc_table_problems names it.
            "path": st.column_config.SelectboxColumn(
                "Input", options=paths, format_func=stored_path_label
            ),
            "distribution": st.column_config.TextColumn(
                "Distribution",
                help="uniform(LOW, HIGH), triangular(LOW, MODE, HIGH), pert(LOW, MODE, HIGH), "
                "normal(MEAN, SD[, low=L][, high=H]), lognormal(MU, SIGMA), discrete(V1:P1, ...)",
            ),
        },
        key=f"econ.mc_editor.{digest}",
    )
    if not edited.equals(ss[MC_TABLE]):
        ss[MC_TABLE] = edited.reset_index(drop=True)
        st.rerun()
    cols = st.columns(4)
    # the ranges are checked by whole_number_input, not by the boxes: a box's own maximum made
    # the browser drop 1e20 without a word and the run went ahead with the seed before it
    n_key, seed_key = common.keep("econ.mc_n", 2000), common.keep("econ.mc_seed", 0)
    n = common.whole_number_input(
        cols[0],
        "Scenarios",
        step=1000,
        within=(1, risk.MAX_SCENARIOS),
        key=n_key,
        help=f"1 to {risk.MAX_SCENARIOS:,}",
    )
    grouped_caption(cols[0], n, "scenarios", integer=True)
    seed = common.whole_number_input(
        cols[1],
        "Seed",
        within=(0, MAX_SEED),
        key=seed_key,
        help=f"0 to {MAX_SEED:,}, the largest whole number a browser holds exactly (a larger "
        "one is refused; the run names the seed it used)",
    )
    sampling = cols[2].selectbox(
        "Sampling",
        ["random", "sobol"],
        key=common.keep("econ.mc_sampling", "random"),
        format_func=lambda s: {"random": "Random", "sobol": "Sobol (quasi-random)"}[s],
    )
    output = cols[3].selectbox(
        "Output", OUTPUTS, format_func=_output_label, key=common.keep("econ.mc_output", "npv_usd")
    )
    inputs = _mc_inputs(_mc_rows(), n, seed, sampling)
    failed = False
    if st.button("Run the Monte Carlo", icon=":material/play_arrow:"):
        failed = True  # until the run's results are stored
        # a box that refused its value says so under it; an empty one is named here
        problems = [
            f"“{label}” is empty; expected a whole number from {low:,} to {high:,}"
            for label, key, value, low, high in (
                ("Scenarios", n_key, n, 1, risk.MAX_SCENARIOS),
                ("Seed", seed_key, seed, 0, MAX_SEED),
            )
            if value is None and not common.refused(key, value)
        ]
        blocked = common.refused(n_key, n) or common.refused(seed_key, seed)
        distributions = _mc_rows()
        problems += _mc_table_problems()
        if not distributions and not problems:
            problems.append("Give at least one input with a distribution")
        problems += [
            f"{stored_path_label(path)}: {risk.FILE_REFUSED}"
            for path in risk.file_distributions(distributions)
        ]
        if problems or blocked:
            for problem in problems:
                st.error(literal(problem), icon=":material/error:")
        else:
            bar = st.progress(0.0, text="Sampling and projecting...")

            def report(done: int, total: int) -> None:
                bar.progress(done / total, text=f"Chunk {done} of {total}")

            result = compute.attempt(
                lambda: risk.montecarlo(
                    current.scenario, distributions, int(n), int(seed), sampling, report, hold
                ),
                "Monte Carlo",
                words=mc_words(distributions),
            )
            bar.empty()
            if result is not None:
                fan = compute.attempt(
                    lambda: risk.fan(  # the run's base: the held loan's where one is held
                        result.job.base, result.rows, list(distributions), "cash_flow_project_usd"
                    ),
                    "Fan chart",
                    busy="Projecting the fan of cumulative cash...",
                )
                held = result.metadata.get("held_loan")
                ss[MONTECARLO] = (
                    (current.text, hold),
                    result.rows,
                    result.summary,
                    fan,
                    result.seconds,
                    held,
                    inputs,
                    # the held loan's note is _held_info's, the Sobol note the page's own
                    [n for n in result.notes if not n.startswith(HELD_NOTE)],
                )
                failed = False
    if MONTECARLO not in ss:
        st.caption(
            "Give distributions and run. The rows start around the scenario's own values, "
            "written in full. A row is `econ montecarlo`'s `--dist PATH=DISTRIBUTION` as "
            "written here: on the same scenario, the same distributions, count, seed and "
            "sampling (and the loan toggle as `--hold-debt`) give the same draws and figures as "
            "the command line."
        )
        return
    stored, rows, summary, fan, seconds, held, ran, notes = ss[MONTECARLO]
    if failed or ran != inputs:
        # the results below are not of the inputs shown above: say whose they are
        st.warning(
            ("This run failed (above). " if failed else "")
            + "The results below are the previous run's, of other inputs than those above: "
            + literal(_mc_inputs_text(ran))
            + ". Run again for the inputs above.",
            icon=":material/history:",
        )
    _stale(stored, current, hold)
    st.caption(f"{counted(len(rows), 'scenario')}, seed {ran[2]}, in {seconds:.2f} s.")
    # as `econ montecarlo` notes it
    balance = sobol_balance_note(len(rows), ran[3])
    if balance is not None:
        st.info(literal(balance[0].upper() + balance[1:] + "."), icon=":material/info:")
    # the run's other notes, as `econ montecarlo` prints them: an input that takes one value,
    # inputs that move no output (a histogram of one bar said nothing of why)
    words = mc_words([p for p, _ in ran[0]])
    others = [words(n) for n in notes if n != balance]
    if others:
        st.info(
            "Notes, as `econ montecarlo` prints them:\n"
            + "\n".join(f"- {literal(n)}" for n in others),
            icon=":material/info:",
        )
    if len(rows) < FEW_DRAWS:
        st.warning(
            f"Only {counted(len(rows), 'scenario')}: quantiles, value at risk and the "
            "probability of loss from so few draws say little.",
            icon=":material/warning:",
        )
    _held_info(held)
    metric = summary.metrics.get(output)
    values, fmt, title = _display(rows[output].astype(float), output, money)
    left, right = st.columns(2)
    with left:
        # binned here: 50 bars reach the browser, not every scenario (100,000 rows took seconds
        # to send and bin there, with no indicator)
        finite = values.to_numpy(dtype=float)
        counts, edges = np.histogram(finite[np.isfinite(finite)], bins=50)
        frame = pd.DataFrame({"low": edges[:-1], "high": edges[1:], "count": counts})
        hist = (
            alt.Chart(frame)
            .mark_bar(opacity=0.8)
            .encode(
                x=alt.X("low:Q", title=title, axis=alt.Axis(format=fmt)),
                x2="high:Q",
                y=alt.Y("count:Q", title="Scenarios"),
                y2=alt.datum(0),
                tooltip=[
                    alt.Tooltip("low:Q", title="From", format=fmt),
                    alt.Tooltip("high:Q", title="To", format=fmt),
                    alt.Tooltip("count:Q", title="Scenarios", format=","),
                ],
            )
        )
        layers = [hist]
        if metric is not None:
            for q in (0.05, 0.5, 0.95):
                value = metric.quantiles.get(q)
                if value is not None:
                    shown, _, _ = _display(pd.Series([value]), output, money)
                    layers.append(charts.rule(float(shown.iloc[0]), f"P{round(q * 100)}", axis="x"))
        charts.show(alt.layer(*layers))
        st.caption("Rules: P5, P50 and P95.")
    with right:
        if fan is not None and len(fan):
            band = charts.money(fan, [c for c in fan.columns if c != "month"], money)
            fmt_money = charts.usd_format(money)
            outer = (
                alt.Chart(band)
                .mark_area(opacity=0.25)
                .encode(
                    x=alt.X(
                        "month:Q",
                        title="Month (0 = purchase)",
                        # the horizon's own end, not Vega's round 80 for 72 months
                        scale=alt.Scale(domain=[0, float(band["month"].max())], nice=False),
                    ),
                    y=alt.Y(
                        "p5:Q",
                        title=f"Cumulative project cash [{money}]",
                        axis=alt.Axis(format=fmt_money),
                    ),
                    y2="p95:Q",
                )
            )
            inner = (
                alt.Chart(band).mark_area(opacity=0.45).encode(x="month:Q", y="p25:Q", y2="p75:Q")
            )
            median = (
                alt.Chart(band)
                .mark_line(strokeWidth=2)
                .encode(
                    x="month:Q",
                    y="p50:Q",
                    tooltip=[
                        "month:Q",
                        alt.Tooltip("p5:Q", format=fmt_money),
                        alt.Tooltip("p50:Q", format=fmt_money),
                        alt.Tooltip("p95:Q", format=fmt_money),
                    ],
                )
            )
            charts.show(alt.layer(outer, inner, median, charts.zero_line()))
            st.caption(
                f"Fan of cumulative project cash over the first {min(len(rows), risk.FAN_DRAWS)} "
                "draws: P5-P95 (light), P25-P75 (dark), median (line); grey line: zero."
            )
    if metric is not None:
        stats = [("Mean", metric.mean), ("Std. deviation", metric.std)]
        stats += [(f"P{round(q * 100)}", v) for q, v in metric.quantiles.items()]
        kind = metric_kind(output)
        table = pd.DataFrame(
            [{"statistic": k, title: format_value(v, kind, money)} for k, v in stats]
        )
        if metric.undefined:
            st.warning(undefined_words(output, metric.undefined, len(rows)))
        risk_figures = summary.risk or {}
        if risk_figures:
            # a row of its own across the page: in a narrower column the tiles broke their
            # numbers across two lines at 1440 px
            loss = risk_figures.get("probability_of_loss")
            c = st.columns(3)
            c[0].metric(
                "Probability of loss (NPV < 0)",
                "n/a" if loss is None else f"{loss:.1%}",
                border=True,
            )
            c[1].metric(
                f"Value at risk, 95% [{money}]",
                format_value(risk_figures.get("value_at_risk_95_usd"), "usd", money),
                border=True,
                help=VAR_HELP,
            )
            c[2].metric(
                f"Expected shortfall, 95% [{money}]",
                format_value(risk_figures.get("expected_shortfall_95_usd"), "usd", money),
                border=True,
                help=SHORTFALL_HELP,
            )
        breach = summary.covenant_breach_probability
        if breach is not None:
            st.columns(3)[0].metric(
                "Probability of a covenant breach", f"{breach:.1%}", border=True
            )
        st.columns([2, 3])[0].dataframe(table, hide_index=True, width="stretch")


UNDEFINED_WHY = {
    "payback_months": "the cumulative project cash flow never turns positive within the horizon "
    "in them, the worst outcome, not a missing one",
}
"""Why an output is undefined in a draw, where that says how the draw fared (a payback)."""


def undefined_words(output: str, undefined: int, total: int) -> str:
    """The warning over a Monte Carlo's statistics where draws leave `output` undefined: how many,
    why where it says how they fared, and that the statistics are of the others only (185 of 200
    draws of gpt-oss-120b-b200 never pay back; its "P50 payback 47.1 months" is of the 15 that
    do)."""
    text = f"{counted(undefined, 'scenario')}: {_output_label(output)} undefined (not counted)"
    if output in UNDEFINED_WHY:
        text += f": {UNDEFINED_WHY[output]}"
    if undefined < total:
        return (
            text + f". The statistics are of the other {counted(total - undefined, 'scenario')}"
            f" of {total:,} only."
        )
    return text + "."


VAR_HELP = (
    "The loss of NPV that 95% of the scenarios do not exceed: minus the 5th percentile (P5) of "
    "NPV. Positive: the worst 5% of scenarios lose at least this much. Negative: even the "
    "worst 5% gain, by at least this much (the P5 NPV is above zero)."
)
SHORTFALL_HELP = (
    "The average loss of NPV in the worst 5% of scenarios: minus their mean NPV. Positive: "
    "they lose this much on average. Negative: they still gain this much on average."
)
FRACTION_HINT = (
    "{label} is typed in the distribution as a fraction, as the scenario stores it: 0.65 for 65 %"
)


EMPIRICAL_WHOLE = " or an empirical column of whole numbers"
"""What econ.analysis.montecarlo offers a whole-number field besides discrete(...), which the
app refuses (it reads no file on the server)."""


def _named(text: str, name: str, label: str) -> tuple[str, int]:
    """`text` with `name` (a dotted path or an output's key, as a word of its own) as `label`,
    and how many times it was found."""
    return re.subn(rf"(?<![\w.]){re.escape(name)}(?![\w.])", label, text)


def tornado_words(text: str, paths) -> str:
    """A tornado run's note (`econ sensitivity`'s) in the page's words: the inputs by their labels
    in the unit the note's values are in ("Utilization › Share [fraction] moves no output ...
    between 0.56 and 0.84"), the outputs by theirs ("NPV [USD]"), not by their dotted paths and
    keys beside the labelled lines above them."""
    for path in sorted(paths, key=len, reverse=True):
        text = _named(text, path, stored_path_label(path))[0]
    for output in sorted(OUTPUTS, key=len, reverse=True):
        text = _named(text, output, metric_label(output))[0]
    return text


def mc_words(paths) -> Callable[[str], str]:
    """A Monte Carlo message in the page's words: the inputs by the table's labels (not their
    dotted paths), and for a percent field a reminder that its distribution is a fraction."""

    def words(text: str) -> str:
        # the app reads no file (FILE_REFUSED): not offered as a way out
        text = text.replace(EMPIRICAL_WHOLE, "")
        hints = []
        for path in sorted(paths, key=len, reverse=True):
            label = stored_path_label(path)
            text, found = _named(text, path, label)
            f = find(path)
            out_of_bounds = re.search(r"(≤|<=|at most) ?1(\.0)?\b", text)
            typed_percent = re.search(r"\d%", text)  # uniform(55%, 80%): "'55%'; expected a number"
            if found and (out_of_bounds or typed_percent) and f is not None and f.scale != 1:
                hints.append(FRACTION_HINT.format(label=label))
        return text + "".join(f". {hint}" for hint in hints)

    return words


DATA_TABLE = "econ.data_table"
MAX_STEPS = 50
"""The most values an axis of the data table takes (2,500 cells in all)."""


def _axis(where, name: str, paths: list[str], default: str, scenario):
    """One axis of the data table: the input and its values (from, to, steps) in its shown unit."""
    path = where.selectbox(
        f"{name} input",
        paths,
        format_func=path_label,
        key=common.keep(f"econ.dt_{name}", default if default in paths else paths[0]),
    )
    node: object = scenario
    for part in path.split("."):
        node = getattr(node, part, None)
    f = find(path)
    scale = f.scale if f is not None else 1.0
    stored = float(node) if isinstance(node, int | float) else 0.0
    # +-20% of the scenario's value, within the field's bounds (a share at most 100%)
    defaults = [v * scale for v in risk.field_clipped(path, stored * 0.8, stored * 1.2)]
    # from and to get twice the room of steps: in thirds of a third of the page their values
    # were cut at 1440 px ("56.(" for 56.00)
    c = where.columns([2, 2, 1])
    integer = f is not None and f.kind == "int"
    # the boxes show as many decimals as the field's values need (a token price to 4), and the
    # defaults are rounded to them: the grid is computed at the values the boxes show
    fmt = "%.0f" if integer else (box_format(f, node) if f is not None else "%.4f")
    decimals = int(fmt[2:-1])
    # kept across page switches, as the page's other boxes are (an emptied box: the default);
    # they start afresh at +-20% when the scenario's value changes (kept, the old range showed
    # in the new value's format: 0.26 for the 0.2609 the grid ran at), and what is typed is
    # taken to the decimals shown
    ends = []
    for box, label, end, default in (
        (c[0], "from", "lo", defaults[0]),
        (c[1], "to", "hi", defaults[1]),
    ):
        default = round(default, decimals)
        key = common.follow(f"econ.dt_{name}_{end}.{path}", default)
        value = box.number_input(label, value=None, format=fmt, key=key)
        ends.append(default if value is None else round(value, decimals))
    low, high = ends
    # checked here, in the unit the boxes show: the grid's own check said "utilization.share =
    # 1.5: expected a number >= 0 and <= 1" for a "from" of 150 in "Utilization › Share [%]",
    # and "value 2 (0.56) repeats value 1 (0.56)" for a "from" equal to the "to"
    problems = [
        (box, f"“{label}”: {problem}")
        for box, label, end in ((c[0], "from", low), (c[1], "to", high))
        if (problem := risk.bound_problem(path, end / scale if scale != 1 else end))
    ]
    if not problems and low == high:
        both = f"{low:,.{decimals}f}"
        problems.append((c[1], f"“from” and “to” are both {both}; expected two different values"))
    for box, problem in problems:
        box.error(literal(f"{path_label(path)}, {problem}"), icon=":material/error:")
    # the range is checked by whole_number_input, not by the box: the box's own minimum and
    # maximum made the browser drop 1 and 51 without a word
    steps_key = common.keep(f"econ.dt_{name}_n.{path}", 5)
    steps = common.whole_number_input(
        c[2], "steps", within=(2, MAX_STEPS), key=steps_key, help=f"2 to {MAX_STEPS}"
    )
    if problems or common.refused(steps_key, steps):
        return path, None, None  # its message is under the box
    steps = 5 if steps is None else steps
    shown = [float(f"{v:.10g}") for v in risk.axis_values(low, high, steps, integer)]
    return path, shown, [v / scale if scale != 1 else v for v in shown]


def data_table_section(current, paths: list[str], money: str, hold: bool) -> None:
    st.subheader("Data table: two inputs, one output")
    st.caption(
        "Like a spreadsheet's two-way data table: the output for every pair of values of two "
        "inputs, the others kept; projected as one batch (econ.analysis sweep)."
    )
    ss = st.session_state
    left, right = st.columns(2)  # each axis half the page; the output on a row of its own
    row_path, row_shown, row_values = _axis(
        left, "Row", paths, "utilization.share", current.scenario
    )
    col_path, col_shown, col_values = _axis(
        right, "Column", paths, "market.price_usd_per_mtok", current.scenario
    )
    output = st.columns(2)[0].selectbox(
        "Output",
        OUTPUTS,
        format_func=_output_label,
        key=common.keep("econ.dt_output", "npv_usd"),
    )
    if (
        st.button("Compute the data table", icon=":material/grid_on:")
        and row_values is not None
        and col_values is not None
    ):
        table = compute.attempt(
            lambda: risk.data_table(
                current.scenario, row_path, row_values, col_path, col_values, output, hold
            ),
            "Data table",
            busy=f"Projecting {len(row_values) * len(col_values)} scenarios...",
        )
        if table is not None:
            table.index, table.columns = row_shown, col_shown
            ss[DATA_TABLE] = ((current.text, hold), row_path, col_path, output, table)
    if DATA_TABLE not in ss:
        return
    stored, row_path, col_path, output, table = ss[DATA_TABLE]
    _held_info(table.attrs.get("held_loan"))
    _stale(stored, current, hold)
    kind = metric_kind(output)
    shown = table.map(lambda v: format_value(v, kind, money))
    shown.index = [short_number(v) for v in table.index]
    shown.columns = [short_number(v) for v in table.columns]
    shown.index.name = f"{path_label(row_path)} ↓ / {path_label(col_path)} →"
    st.markdown(f"**{metric_label(output, money)}**")
    common.table(shown, width="stretch")
    export = table.copy()  # the grid's values in the form's units, labelled as the form does
    export.index.name = f"{path_label(row_path)} ↓ / {path_label(col_path)} → ({output})"
    st.download_button(
        "Download the data table (CSV)",
        export.to_csv().encode(),
        file_name=f"data-table-{output}.csv",
        mime="text/csv",
        icon=":material/csv:",
        on_click="ignore",
    )


def render() -> None:
    st.title("Risk")
    current = common.require_scenario("risk analyses")
    if current is None:
        return
    money = common.money()
    paths = compute.attempt(lambda: risk.numeric_paths(current.scenario), "Inputs")
    if not paths:
        return
    hold = st.toggle(
        compute.HOLD_LOAN_BOX.strip('"'),
        key=common.keep("econ.risk_hold_debt", False),
        help="Every case, cell and draw below borrows the loan the base case sizes, instead of "
        "sizing its own: a lender's stress test of the committed loan (its DSCR is that loan's "
        "cover). The Monte Carlo adds the probability of a covenant breach.",
    )
    cushion_section(current)
    tornado_section(current, paths, money, hold)
    st.divider()
    data_table_section(current, paths, money, hold)
    st.divider()
    montecarlo_section(current, paths, money, hold)


if __name__ == "__main__":
    common.run_page(render)
