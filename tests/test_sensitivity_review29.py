"""Tornado charts and the Risk and Compare pages as a finance analyst checked them (review 29)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from econ import load_scenario
from econ.analysis.sensitivity import percent_ranges, tornado
from tests.conftest import ROOT

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


# --- 1. both ends of an input on one side of the base: the shorter bar is not hidden ------------


def _life_tornado():
    """The seed's tornado of depreciation.life_years ±10%: both ends raise the NPV (5.4 years to
    -128,080 USD through earlier deductions, 6.6 years to -28,004 through the sale at book
    value), so both bars run right of the base's -162,599."""
    base = load_scenario(SEED_FILE)
    table = tornado(base, percent_ranges(base, ["depreciation.life_years"], 10.0), ("npv_usd",))
    row = table.table.iloc[0]
    assert row["output_base"] < row["output_low"] < row["output_high"]
    return table


def test_the_apps_tornado_draws_the_shorter_bar_over_the_longer():
    # Drawn in data order, the high bar (base to -28,004) covered the low one (base to -128,080):
    # the chart showed the life moving the NPV one way only, and the legend's low colour nowhere.
    vl_convert = pytest.importorskip("vl_convert")
    from econ.ui import charts

    rows = _life_tornado().table
    svg = vl_convert.vegalite_to_svg(charts.tornado(rows, 10.0, "NPV [USD]", ",.0f").to_json())
    drawn = re.findall(r'aria-roledescription="bar"[^>]*fill="(#[0-9a-f]{6})"', svg)
    low, high = charts.TORNADO_COLOURS
    assert drawn == [high, low], drawn  # the longer (high) first, the shorter (low) over it
    assert charts.TORNADO_BASE_COLOUR not in charts.TORNADO_COLOURS


def test_the_reports_tornado_draws_the_shorter_bar_over_the_longer(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from econ.analysis import report

    figures = []
    monkeypatch.setattr(report, "_save", lambda fig, png: figures.append(fig))
    report.sensitivity_report(_life_tornado(), tmp_path / "life")
    (ax,) = figures[0].axes
    bars = [(p.get_x(), p.get_width(), p.get_facecolor()) for p in ax.patches]
    assert len(bars) == 2
    (left, long_width, long_colour), (left2, short_width, short_colour) = bars
    assert left == left2 and 0 < short_width < long_width  # the shorter drawn last, on top
    legend = {t.get_text(): h.get_facecolor() for t, h in zip(*_legend(ax), strict=True)}
    assert short_colour == legend["input at low"] and long_colour == legend["input at high"]


def _legend(ax):
    legend = ax.get_legend()
    return legend.get_texts(), legend.legend_handles


# --- 2. an input the Risk page's swing cannot move is refused in the page's words --------------


@pytest.mark.parametrize(
    ("path", "pct", "said"),
    [
        (
            "capex.storage_usd_per_gpu",
            20.0,
            "Capex › Storage [USD/GPU] is 0 in the scenario, and ±20% of 0 is 0, so the tornado "
            "cannot swing it; take it out of Inputs (the data table below takes a range of it)",
        ),
        (
            "fleet.gpu_count",
            0.5,
            "Fleet › GPU count [GPUs] is 72 in the scenario, and ±0.5% of it rounds to it both "
            "ways, so the tornado cannot swing it; give a wider swing, or take it out of Inputs",
        ),
    ],
)
def test_an_input_the_swing_cannot_move_is_named_by_its_label_without_cli_options(path, pct, said):
    # The page showed econ sensitivity's message: the dotted path and "give its range instead:
    # --range capex.storage_usd_per_gpu=LOW,HIGH", an option the page does not have.
    from tests.test_app import errors, widget
    from tests.test_app_review2 import open_app

    at = open_app(page="risk")
    widget(at.multiselect, "Inputs").set_value([path, "utilization.share"]).run()
    widget(at.number_input, "Swing [± %]").set_value(pct).run()
    widget(at.button, "Run the tornado").click().run()
    assert not at.exception
    assert errors(at) == [f"Tornado ranges: {said}"], errors(at)
    assert "econ.tornado_result" not in at.session_state


def test_the_command_line_keeps_its_words_for_an_input_that_would_not_move():
    from econ.analysis.sensitivity import UnmovedRange

    base = load_scenario(SEED_FILE)
    with pytest.raises(UnmovedRange, match=r"--range capex.storage_usd_per_gpu=LOW,HIGH") as exc:
        percent_ranges(base, ["capex.storage_usd_per_gpu"], 10.0)
    assert (exc.value.path, exc.value.value) == ("capex.storage_usd_per_gpu", 0)


# --- 3. under the chart of one output, that output's notes only ---------------------------------


def test_the_notes_under_the_tornado_are_of_the_output_shown():
    # The seed's default tornado ties price, utilization and throughput on NPV, and utilization
    # and throughput on LCOT: under the chart of NPV the page listed LCOT's tie too.
    from econ.ui.fmt import metric_label
    from econ.ui.pages.risk import _output_label
    from tests.test_app import shown, widget
    from tests.test_app_review2 import open_app

    at = open_app(page="risk")
    widget(at.button, "Run the tornado").click().run()
    assert not at.exception
    for output, other in (("npv_usd", "lcot_usd_per_mtok"), ("lcot_usd_per_mtok", "npv_usd")):
        at.selectbox(key="econ.tornado_output").set_value(output).run()
        notes = " ".join(shown(i.value) for i in at.info if "Notes, as" in i.value)
        # (named by their labels, as the lines above them: review 31)
        said, unsaid = metric_label(output), metric_label(other)
        assert f" move {said} by the same swing" in notes, (_output_label(output), notes)
        assert f" move {unsaid} by the same swing" not in notes, notes


# --- 4. Compare: differences over different horizons are said to be so -------------------------


def test_compare_says_when_the_horizons_and_start_dates_differ():
    # The seed (72 months from 2026-04-01) against gpt-oss-120b-b200 (48 months from 2026-01-01):
    # "Revenue over the horizon − base" read -3,124,838 USD with no word that the horizons differ.
    from tests.test_app_review2 import open_app

    at = open_app(page="compare")
    at.multiselect[0].set_value(["current scenario", "gpt-oss-120b-b200"]).run()
    assert not at.exception
    infos = [i.value for i in at.info if "horizons differ" in i.value]
    assert len(infos) == 1, [i.value for i in at.info]
    assert "deepseek-r1-gb200-nvl72 (current) 72 months, gpt-oss-120b-b200 48 months" in infos[0]
    assert (
        "(deepseek-r1-gb200-nvl72 (current) 2026-04-01, gpt-oss-120b-b200 2026-01-01)" in infos[0]
    )
    # the same horizon and start: nothing said
    at.multiselect[0].set_value(["current scenario", "deepseek-r1-gb200-nvl72-macrs"]).run()
    assert not [i.value for i in at.info if "differ (" in i.value]


def test_the_compare_results_csv_gives_percentages_in_the_unit_of_their_label(monkeypatch):
    # "Project IRR [%/year]" held the fraction 0.0814 (and its difference 0.161 for 16.1 points),
    # where the inputs' CSV gives a 70 % share as 70.
    import econ.export
    from econ import project
    from tests.test_app_review2 import open_app

    written = []
    real = econ.export.csv_text
    monkeypatch.setattr(econ.export, "csv_text", lambda frame: written.append(frame) or real(frame))
    at = open_app(page="compare")
    at.multiselect[0].set_value(["current scenario", "llama2-70b-h200"]).run()
    assert not at.exception
    results = [f for f in written if "key" in f.columns][-1]  # (the last run's)
    row = results.set_index("key").loc["irr_project_annual"]
    seed = project(load_scenario(SEED_FILE)).summary.iloc[0]
    llama = project(load_scenario(ROOT / "models/scenarios/llama2-70b-h200.toml")).summary.iloc[0]
    assert row["metric"] == "Project IRR [%/year]"
    assert row["deepseek-r1-gb200-nvl72 (current)"] == pytest.approx(seed.irr_project_annual * 100)
    difference = row["llama2-70b-h200 - deepseek-r1-gb200-nvl72 (current)"]
    assert difference == pytest.approx((llama.irr_project_annual - seed.irr_project_annual) * 100)
    npv = results.set_index("key").loc["npv_usd"]  # money stays in USD
    assert npv["deepseek-r1-gb200-nvl72 (current)"] == pytest.approx(seed.npv_usd)


# --- 5. a percent swing is relative, and says so ----------------------------------------------


def test_the_swing_says_it_is_a_percentage_of_the_base_value_not_points(capsys):
    # On a field shown in % ("Utilization › Share [%]", 70%), "±20%" read as 50% to 90% as well
    # as the 56% to 84% the tornado runs; neither help said which.
    from econ.cli import main
    from tests.test_app import widget
    from tests.test_app_review2 import open_app

    at = open_app(page="risk")
    assert "56% and 84%, not 50% and 90%" in widget(at.number_input, "Swing [± %]").help
    base = load_scenario(SEED_FILE)
    assert percent_ranges(base, ["utilization.share"], 20.0) == {"utilization.share": (0.56, 0.84)}
    assert percent_ranges(base, ["utilization.share"], 10.0) == {"utilization.share": (0.63, 0.77)}
    with pytest.raises(SystemExit):
        main(["sensitivity", "--help"])
    assert "(a utilization of 0.7 swings to 0.63 and 0.77)" in " ".join(
        capsys.readouterr().out.split()
    )


# --- 6. a range whose two ends are both refused counts them as values ---------------------------


def test_a_range_with_both_ends_out_of_bounds_counts_values_not_rows(capsys):
    # "(2 of 2 rows)" after "value 1": a --vary has two ends, no rows.
    from econ.cli import main

    assert main(["sensitivity", str(SEED_FILE), "--vary", "utilization.share", "--pct", "200"]) == 3
    assert capsys.readouterr().err == (
        "error: --vary utilization.share --pct 200: range utilization.share, value 1: "
        "utilization.share = -0.7: expected a number >= 0 and <= 1 (2 of 2 values)\n"
    )


# --- 7. the report says what the command line notes --------------------------------------------


def test_the_tornado_report_gives_the_runs_notes(tmp_path):
    # With a 7-year life over the seed's 72 months every bar rests on selling the GPUs at book
    # value; the command line said so in a note, the report (table and chart only) did not.
    pytest.importorskip("matplotlib")
    from econ.analysis.report import sensitivity_report

    base = load_scenario(SEED_FILE, {"depreciation.life_years": 7})
    paths = ["utilization.share", "market.price_usd_per_mtok"]
    result = tornado(base, percent_ranges(base, paths, 10.0), ("npv_usd",), hold_debt=True)
    sold = [n for n in result.run.notes if "is assumed sold at book value" in n]
    assert len(sold) == 1
    md, _ = sensitivity_report(result, tmp_path / "life7")
    text = md.read_text()
    assert f"- {sold[0]}" in text
    assert "move npv_usd by the same swing" in text  # the tie, as the CLI notes it
    assert text.lower().count("every scenario holds") == 1  # the held loan once, on its own line


# --- 8. an output undefined for the scenario itself: no base for the bars, and said -------------


def test_a_tornado_of_an_output_undefined_at_base_says_so_and_gives_the_ends():
    # The capital stack's equity IRR is n/a for the scenario itself: the chart drew axes and no
    # bar (each runs from the base), under the caption "Bars run from the base result".
    from econ.analysis.sensitivity import tornado as run_tornado
    from econ.ui.fmt import format_value
    from econ.ui.form import path_label
    from tests.test_app import shown, widget
    from tests.test_app_review2 import open_app

    name = "deepseek-r1-gb200-nvl72-capital-stack"
    at = open_app(scenario=name, page="risk")
    widget(at.multiselect, "Inputs").set_value(["market.price_usd_per_mtok"]).run()
    widget(at.button, "Run the tornado").click().run()
    at.selectbox(key="econ.tornado_output").set_value("irr_equity_annual").run()
    assert not at.exception
    warned = [shown(w.value) for w in at.warning if "no base result" in w.value]
    assert warned == [
        "Equity IRR [%/year] is n/a for the scenario as it stands, so the tornado has no base "
        "result to run its bars from; each input's results at its ends are below."
    ], [w.value for w in at.warning]
    assert not [c for c in at.get("vega_lite_chart") if "input −20%" in c.proto.spec]
    base = load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")
    path = "market.price_usd_per_mtok"
    cli = run_tornado(base, percent_ranges(base, [path], 20.0), ("irr_equity_annual",)).table
    (ends,) = [d.value for d in at.dataframe if "Input" in d.value.columns]
    assert list(ends.iloc[0]) == [
        path_label(path),
        format_value(cli["output_low"].iloc[0], "pct"),
        format_value(cli["output_high"].iloc[0], "pct"),
    ]


def test_the_reports_tornado_of_an_output_undefined_at_base_says_why_it_has_no_bars(
    tmp_path, monkeypatch
):
    pytest.importorskip("matplotlib")
    from econ.analysis import report

    base = load_scenario(
        ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72-capital-stack.toml"
    )
    paths = ["market.price_usd_per_mtok"]
    result = tornado(base, percent_ranges(base, paths, 10.0), ("irr_equity_annual",))
    assert np.isnan(result.table["output_base"].iloc[0])
    figures = []
    monkeypatch.setattr(report, "_save", lambda fig, png: figures.append(fig))
    report.sensitivity_report(result, tmp_path / "equity")
    (ax,) = figures[0].axes
    assert [t.get_text() for t in ax.texts] == [
        "irr_equity_annual is n/a for the base scenario:\nno base to run bars from (see the table)"
    ]
