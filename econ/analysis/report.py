"""Short reports of batch runs: a Markdown table plus a PNG chart (histogram or tornado).

matplotlib is optional and imported only here, when a report is asked for; without it the
report fails with a message saying how to install it. Charts are drawn on a matplotlib Figure,
not through pyplot: a report chooses no backend (a notebook's own is left as it is) and shows
nothing; savefig renders the PNG.

Every text a report writes goes through `cell` (econ.text.markdown_text, one line): names
come from files others wrote (an override table's names, a scenario's name), and in a
Markdown viewer `![t](http://host/t.png)` would load a remote image, `<script>` would be HTML,
a `|` would add a cell and a line feed would end the row.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from econ.analysis.output import OutputError, cell_text, risk_text
from econ.analysis.stats import RunSummary, quantile_label
from econ.files import atomic_write, check_targets, refuse_empty_path
from econ.text import markdown_text


def _figure(width_in: float, height_in: float):
    """A matplotlib Figure of that size [inches] and its one Axes, drawn without pyplot: no
    backend is chosen or switched (a notebook's plt.show() keeps its own) and no figure is
    registered with pyplot's manager, so nothing needs closing; savefig renders the PNG with Agg
    all the same."""
    try:
        figure = importlib.import_module("matplotlib.figure")
    except ImportError as exc:
        raise OutputError(
            f"reports need the optional package matplotlib ({exc}); install it with: "
            "pip install 'econ[report]'"
        ) from None
    fig = figure.Figure(figsize=(width_in, height_in))
    return fig, fig.subplots()


def _prefix_expected(example: str, chart: str) -> str:
    return f"a file prefix, e.g. {example} for {example}.md and {example}-{chart}.png"


def report_targets(prefix: str | os.PathLike, overwrite: bool, chart: str) -> tuple[Path, Path]:
    """The Markdown and PNG paths of a report (`PREFIX.md`, `PREFIX-<chart>.png`), checked as
    econ.files checks every target: the command line calls it before a run starts. A prefix that
    is empty or names a folder (`.`, `..`, `sub/`, an existing folder) is refused."""
    refuse_empty_path(prefix, "--report", "prefix", _prefix_expected("report", chart))
    given = os.fspath(prefix)
    prefix = Path(given)
    if prefix.suffix.lower() in (".md", ".png"):
        prefix = prefix.with_suffix("")  # (".." of "..md")
    # Path("sub/") is Path("sub"): the report went to sub.md beside the folder; "." was a
    # ValueError traceback and ".." wrote "...md"
    names = (os.path.basename(given), prefix.name)
    if any(name in ("", ".", "..") for name in names) or os.path.isdir(given):
        raise OutputError(
            f"--report {given} (prefix= from Python) names a folder; expected "
            + _prefix_expected(os.path.join(given, "report"), chart)
        )
    md, png = prefix.with_suffix(".md"), prefix.with_name(f"{prefix.name}-{chart}.png")
    check_targets([md, png], overwrite)
    return md, png


def _save(fig, png: Path) -> None:
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    atomic_write(png, buffer.getvalue(), overwrite=True)


def cell(value) -> str:
    """Text as a report writes it in a table cell, a heading or a line: shown as typed
    (econ.text.markdown_text, on one line)."""
    return markdown_text(value, line=True)


def _image(alt: str, png: Path) -> str:
    """The Markdown of the chart beside the report: its name as a link target (a space or a
    parenthesis in a file name would end the link)."""
    return f"![{cell(alt)}]({quote(png.name)})"


def markdown_table(frame: pd.DataFrame) -> str:
    """The frame as a Markdown table, its cells written as the terminal's tables write them
    (econ.analysis.output.cell_text: 5,631 and -1,649,020, not -1.64902e+06), numbers aligned
    right and text left."""
    header = "| " + " | ".join(map(cell, frame.columns)) + " |"
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    rule = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    rows = [
        "| " + " | ".join(cell(cell_text(v)) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows])


def summary_frame(summary: RunSummary) -> pd.DataFrame:
    """One row per output: count, undefined, mean, std, min, quantiles, max."""
    return pd.DataFrame([{"output": name, **m.as_dict()} for name, m in summary.metrics.items()])


def risk_figures(summary: RunSummary) -> dict[str, float | None]:
    """The run's figures beside the per-output table, by their JSON keys: NPV's probability of
    loss, value at risk and expected shortfall, and the probability of a covenant breach where
    first_breach_month is an output."""
    out = dict(summary.risk)
    if summary.covenant_breach_probability is not None:
        out["probability_of_covenant_breach"] = summary.covenant_breach_probability
    return out


def summary_csv_frame(summary: RunSummary) -> pd.DataFrame:
    """summary_frame, then one row per risk figure (`risk_figures`): its name under `output`,
    its value under `value` (empty in the per-output rows, as the statistics are in its rows)."""
    frame = summary_frame(summary)
    for name in ("count", "undefined"):  # whole numbers, left empty in the risk rows
        frame[name] = frame[name].astype("Int64")
    risk = risk_figures(summary)
    if not risk:
        return frame
    extra = pd.DataFrame({"output": list(risk), "value": pd.array(list(risk.values()), "Float64")})
    return pd.concat([frame, extra], ignore_index=True)


def _held(metadata: dict) -> list[str]:
    """The line that says what loan a run held (`hold_debt`), or none."""
    held = metadata.get("held_loan")
    if held is None:
        return []
    note = held["note"]
    return ["", cell(f"Held loan: {note[0].upper()}{note[1:]}.")]


def _notes(notes: list[str]) -> list[str]:
    """The run's notes under a table, as the command line prints them (`note: ...`), but the
    held loan's, which `_held` gives: a tornado whose base sells its GPUs at book value rests
    every bar on that sale, and the report did not say so."""
    from econ.analysis.runner import HELD_NOTE

    shown = [n for n in notes if not n.startswith(HELD_NOTE)]
    return ["", "Notes:", "", *(f"- {cell(n)}" for n in shown)] if shown else []


def montecarlo_report(
    summary: RunSummary,
    metadata: dict,
    prefix: str | os.PathLike,
    metric: str = "npv_usd",
    overwrite: bool = False,
) -> list[Path]:
    """Markdown summary table and a histogram of `metric` with its P5, P50 and P95 marked (of
    the first output that has one where `metric` has none; no chart where no output has a value
    in any scenario, and the Markdown says so)."""
    md, png = report_targets(prefix, overwrite, "histogram")
    if metric not in summary.histograms:
        metric = next(iter(summary.histograms), metric)
    if metric in summary.histograms:
        _histogram(summary, metadata, metric, png)
        chart = _image(metric, png)
    else:
        chart = (
            f"No histogram: no output has a value in any of the {summary.n:,} scenarios "
            "(each is null, with its reason in the scenarios' warnings)."
        )
    risk = "\n".join(
        f"- {cell(k)}: {risk_text(k, v)}" for k, v in risk_figures(summary).items() if v is not None
    )
    text = "\n".join(
        [
            f"# Monte Carlo: {cell(metadata.get('scenario', ''))}",
            "",
            cell(
                f"{summary.n:,} scenarios, seed {metadata.get('seed')}, sampling "
                f"{metadata.get('plan', {}).get('sampling')}, quantiles "
                f"{summary.quantile_method}; econ {metadata.get('econ_version')}, scenario hash "
                f"{metadata.get('scenario_hash', '')[:12]}."
            ),
            *_held(metadata),
            "",
            markdown_table(summary_frame(summary)),
            "",
            risk,
            "",
            chart,
            "",
        ]
    )
    atomic_write(md, text, overwrite=True)
    return [md, png] if metric in summary.histograms else [md]


def _histogram(summary: RunSummary, metadata: dict, metric: str, png: Path) -> None:
    counts, edges = summary.histograms[metric]
    fig, ax = _figure(7, 4)
    ax.stairs(counts, edges, fill=True, alpha=0.6)
    stats = summary.metrics[metric]
    for q in (0.05, 0.5, 0.95):
        if q in stats.quantiles:
            value = stats.quantiles[q]
            ax.axvline(value, color="k", linestyle="--", linewidth=0.8)
            ax.annotate(quantile_label(q).upper(), (value, ax.get_ylim()[1] * 0.95), ha="center")
    if metric == "npv_usd":
        ax.axvline(0.0, color="red", linewidth=1)
    ax.set_xlabel(metric)
    ax.set_ylabel("scenarios")
    # as typed: matplotlib reads text between two $ as maths ("$\\foo$" was a traceback)
    ax.set_title(f"{metadata.get('scenario', '')}: {summary.n:,} scenarios", parse_math=False)
    _save(fig, png)


def sensitivity_report(result, prefix: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Markdown table of a sensitivity result and a chart of its first output: tornado bars,
    Sobol index bars or Morris mu* against sigma."""
    chart = {"tornado": "tornado", "sobol": "sobol", "morris": "morris"}[result.method]
    md, png = report_targets(prefix, overwrite, chart)
    table = result.table
    output = table["output"].iloc[0]
    part = table[table["output"] == output]
    fig, ax = _figure(7, 0.5 * len(part) + 1.5)
    if result.method == "tornado":
        base = float(part["output_base"].iloc[0])
        part = part.iloc[::-1]
        y = np.arange(len(part))
        low = part["output_low"].to_numpy(dtype=float) - base
        high = part["output_high"].to_numpy(dtype=float) - base
        # each input's longer bar first and its shorter over it: where both ends fall on one side
        # of the base (the seed's life ±10% both raise its NPV) the high bar hid the low one
        first = np.abs(np.nan_to_num(low)) >= np.abs(np.nan_to_num(high))
        colours = np.array(["tab:blue", "tab:orange"])
        ax.barh(y, np.where(first, low, high), left=base, color=colours[(~first).astype(int)])
        ax.barh(y, np.where(first, high, low), left=base, color=colours[first.astype(int)])
        patch = importlib.import_module("matplotlib.patches").Patch  # (matplotlib is there)
        ends = zip(colours, ("low", "high"), strict=True)
        ax.legend(
            handles=[patch(color=c, label=f"input at {e}") for c, e in ends], loc="lower right"
        )
        ax.axvline(base, color="k", linewidth=0.8)
        ax.set_yticks(y, part["input"])
        ax.set_xlabel(output)
        if np.isnan(base):  # (the capital stack's equity IRR): an empty chart, unexplained
            ax.text(
                0.5,
                0.5,
                f"{output} is n/a for the base scenario:\nno base to run bars from (see the table)",
                transform=ax.transAxes,
                ha="center",
                va="center",
                parse_math=False,
            )
    elif result.method == "sobol":
        y = np.arange(len(part))
        ax.barh(
            y - 0.2, part["first_order"], 0.4, xerr=part["first_order_conf"], label="first order"
        )
        ax.barh(y + 0.2, part["total"], 0.4, xerr=part["total_conf"], label="total")
        ax.set_yticks(y, part["input"])
        ax.set_xlabel(f"Sobol index of {output}")
        ax.legend(loc="lower right")
    else:
        ax.scatter(part["mu_star"], part["sigma"])
        for _, row in part.iterrows():
            ax.annotate(row["input"], (row["mu_star"], row["sigma"]))
        ax.set_xlabel("mu* (mean absolute elementary effect)")
        ax.set_ylabel("sigma")
    ax.set_title(f"{result.method}: {output}")
    _save(fig, png)
    meta = result.run.metadata
    text = "\n".join(
        [
            f"# Sensitivity ({cell(result.method)}): {cell(meta.get('scenario', ''))}",
            "",
            cell(
                f"econ {meta.get('econ_version')}, scenario hash "
                f"{meta.get('scenario_hash', '')[:12]}, {result.run.job.n:,} engine runs."
            ),
            *_held(meta),
            "",
            markdown_table(table),
            *_notes(result.run.notes),
            "",
            _image(chart, png),
            "",
        ]
    )
    atomic_write(md, text, overwrite=True)
    return [md, png]


def sweep_report(
    rows: pd.DataFrame,
    metadata: dict,
    prefix: str | os.PathLike,
    metric: str = "npv_usd",
    overwrite: bool = False,
    columns: list[str] | None = None,
) -> list[Path]:
    """Markdown table of a sweep (at most 200 rows) and a histogram of `metric` over it."""
    md, png = report_targets(prefix, overwrite, "histogram")
    values = rows[metric].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    fig, ax = _figure(7, 4)
    ax.hist(values, bins=min(60, max(5, len(values) // 5)))
    ax.set_xlabel(metric)
    ax.set_ylabel("scenarios")
    _save(fig, png)
    shown = rows[columns] if columns else rows
    text = "\n".join(
        [
            f"# Sweep: {cell(metadata.get('scenario', ''))}",
            "",
            cell(f"{len(rows):,} scenarios; econ {metadata.get('econ_version')}."),
            *_held(metadata),
            "",
            markdown_table(shown.head(200)),
            "",
            _image(metric, png),
            "",
        ]
    )
    atomic_write(md, text, overwrite=True)
    return [md, png]
