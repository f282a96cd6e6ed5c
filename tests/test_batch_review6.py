"""Defects a data scientist's review of the batch commands found (sweeps, Monte Carlo, sensitivity):
each fails on the code before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from econ import load_scenario
from econ.analysis import montecarlo, percent_ranges, sobol, tornado
from econ.analysis.montecarlo import parse_correlations
from econ.analysis.sensitivity import morris
from econ.cli import main
from econ.errors import InputError
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


@pytest.fixture(scope="module")
def base():
    return load_scenario(SEED)


def test_a_report_of_outputs_null_in_every_scenario_has_no_chart(tmp_path, capsys):
    # a utilization of 0-10 %: no project IRR anywhere (it was a StopIteration traceback)
    args = ["montecarlo", str(SEED), "--dist", "utilization.share=uniform(0,0.1)", "-n", "50"]
    code = main([*args, "--output", "irr_project_annual", "--report", str(tmp_path / "mc")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "irr_project_annual      0         50" in out.out  # the summary table still prints
    text = (tmp_path / "mc.md").read_text()
    assert "No histogram: no output has a value in any of the 50 scenarios" in text
    assert not (tmp_path / "mc-histogram.png").exists()


def test_a_morris_design_too_large_to_hold_is_refused_before_it_is_built(tmp_path, capsys):
    # it grew by about 9 MB/s for 10 minutes, building the design in a Python loop
    args = ["sensitivity", str(SEED), "--method", "morris", "--range", "utilization.share=0.5,0.9"]
    assert main([*args, "--trajectories", "1000000000", "--output", "npv_usd"]) == 3
    err = capsys.readouterr().err
    assert "the Morris design has 2,000,000,000 scenarios" in err
    assert "expected at most 2 GB" in err and "give fewer trajectories or fewer inputs" in err


def test_one_output_may_be_a_string_and_a_repeated_output_is_refused(base, capsys):
    run = montecarlo(base, {"utilization.share": "uniform(0.5,0.9)"}, n=8, outputs="npv_usd")
    assert list(run.summary.metrics) == ["npv_usd"]  # not "n", "p", "v", ...
    with pytest.raises(InputError, match="output 'npv_usd' is given more than once"):
        tornado(base, {"utilization.share": (0.5, 0.9)}, outputs=["npv_usd", "npv_usd"])
    args = ["sensitivity", str(SEED), "--range", "utilization.share=0.5,0.9"]
    assert main([*args, "--output", "npv_usd", "--output", "npv_usd"]) == 3
    assert "given more than once" in capsys.readouterr().err


def test_percent_ranges_is_where_the_messages_say(base):
    ranges = percent_ranges(base, ["utilization.share"], 10)
    share = base.utilization.share
    assert ranges["utilization.share"] == pytest.approx((share * 0.9, share * 1.1))


@pytest.mark.parametrize(
    "items, message",
    [
        (["a,b=0.5", "b,a=-0.5"], "the pair is already given ('a,b=0.5')"),
        (["a,b=0.5", "a,b=0.5"], "the pair is already given"),
        (["a,b=nan"], "'a,b=nan': nan is not a rank correlation; expected a number from -1 to 1"),
        (["a,b=1.5"], "1.5 is not a rank correlation"),
    ],
)
def test_a_correlation_is_given_once_and_between_minus_one_and_one(items, message):
    with pytest.raises(InputError) as raised:
        parse_correlations(items, ["a", "b"])
    assert message in str(raised.value)
    c = parse_correlations(["a,b=-1"], ["a", "b"])  # the bounds themselves are correlations
    assert c.tolist() == [[1.0, -1.0], [-1.0, 1.0]]


def test_an_index_undefined_in_every_resample_warns_nothing(base):
    # a choice input that moves no output here: its indices are NaN, with no numpy warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = sobol(
            base,
            {"depreciation.method": "discrete(straight_line,macrs_gds)"},
            n=8,
            outputs=["lcot_usd_per_mtok"],
            resamples=20,
        )
    assert len(result.table) == 1


def test_morris_within_the_limit_still_runs(base):
    result = morris(base, {"utilization.share": (0.5, 0.9)}, trajectories=4, outputs=["npv_usd"])
    row = result.table.iloc[0]
    assert row["mu_star"] > 0 and np.isfinite(row["sigma"])


def test_out_and_chunks_naming_one_path_are_refused_before_the_run(tmp_path, capsys):
    # it ran everything, wrote chunk files into the path, then failed: "is a folder"
    same = tmp_path / "same.parquet"
    args = ["sweep", str(SEED), "--grid", "utilization.share=0.5,0.6"]
    assert main([*args, "--out", str(same), "--chunks", str(same)]) == 3
    assert "name the same path" in capsys.readouterr().err
    assert not same.exists()


def test_a_chunk_folder_econ_did_not_write_is_not_overwritten(tmp_path, capsys):
    args = ["sweep", str(SEED), "--grid", "utilization.share=0.5,0.6", "--format", "json"]
    # chunk files with no manifest: kept unless --force
    folder = tmp_path / "pre"
    folder.mkdir()
    (folder / "chunk-000000.parquet").write_bytes(b"someone's file")
    assert main([*args, "--chunks", str(folder)]) == 3
    assert "holds chunk files but no manifest.json" in capsys.readouterr().err
    assert (folder / "chunk-000000.parquet").read_bytes() == b"someone's file"
    assert main([*args, "--chunks", str(folder), "--force"]) == 0
    capsys.readouterr()
    assert (folder / "chunk-000000.parquet").read_bytes() != b"someone's file"
    # a manifest.json of another tool: one short message, the file kept
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "webpack"}')
    assert main([*args, "--chunks", str(other)]) == 3
    err = capsys.readouterr().err
    assert "its manifest.json was not written by econ (it names no run)" in err
    assert len(err) < 400, err
    assert (other / "manifest.json").read_text() == '{"name": "webpack"}'


def _priced_per_gpu(base, price):
    from econ import project
    from econ.scenario import apply_overrides, scenario_to_dict, validate_dict

    data = apply_overrides(
        scenario_to_dict(base), {"capex.gpu_price_usd": price, "capex.system_price_usd": None}
    )
    return float(project(validate_dict(data)).summary["npv_usd"].iloc[0])


def test_a_gpu_price_varies_on_a_base_priced_per_system_in_every_command(base):
    # the seed gives capex.system_price_usd: a GPU price replaces it, as in a sweep (Monte Carlo
    # refused every draw, and the tornado its base run, as "give exactly one" of the two prices)
    from econ import project

    assert base.capex.system_price_usd is not None and base.capex.gpu_price_usd is None
    result = tornado(base, {"capex.gpu_price_usd": (30_000, 50_000)}, outputs=["npv_usd"])
    row = result.table.iloc[0]
    assert row["output_low"] == pytest.approx(_priced_per_gpu(base, 30_000), rel=1e-12)
    assert row["output_high"] == pytest.approx(_priced_per_gpu(base, 50_000), rel=1e-12)
    assert row["output_base"] == pytest.approx(project(base).summary["npv_usd"].iloc[0])
    run = montecarlo(
        base,
        {"capex.gpu_price_usd": "uniform(30000,50000)"},
        n=4,
        outputs=["npv_usd"],
        keep_rows=True,
    )
    for price, npv in run.rows[["capex.gpu_price_usd", "npv_usd"]].head(2).itertuples(index=False):
        assert npv == pytest.approx(_priced_per_gpu(base, price), rel=1e-12)


@pytest.mark.parametrize(
    "varied, option",
    [
        (["sweep", "--grid", "utilization.share=0.5,0.6"], "--grid"),
        (["montecarlo", "--dist", "utilization.share=uniform(0.5,0.6)", "-n", "8"], "--dist"),
        (
            ["sensitivity", "--method", "sobol", "-n", "8", "--range", "utilization.share=0.5,0.6"],
            "--range",
        ),
    ],
)
def test_a_set_path_that_is_also_varied_is_said_to_be_replaced(varied, option, capsys):
    # the --set value was dropped without a word (it may be there for the base to validate: an
    # input price beside a cached one, tests/test_token_mix.py); the note is the run's since
    # round 27 (a tornado's base keeps the --set value: tests/test_batch_review27.py)
    command, *rest = varied
    assert main([command, str(SEED), *rest, "--set", "utilization.share=0.9"]) == 0
    err = capsys.readouterr().err
    assert (
        "note: utilization.share is set by an override of the base (--set) and varied by the "
        "run: the varied values replace the override in every scenario"
    ) in err


def test_a_sweep_row_summary_is_econ_projects_summary(tmp_path, capsys):
    # horizon_months was left out where it was varied, and whole numbers came as floats (72.0)
    import json

    assert main(["sweep", str(SEED), "--grid", "horizon_months=48,84", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["scenarios"]
    assert main(["project", str(SEED), "--set", "horizon_months=48", "--format", "json"]) == 0
    alone = json.loads(capsys.readouterr().out)["scenarios"][0]["summary"]
    swept = rows[0]["summary"]
    assert list(swept) == list(alone)
    for key, value in alone.items():
        assert type(swept[key]) is type(value), key
        if isinstance(value, float):
            assert swept[key] == pytest.approx(value, rel=1e-12), key
        elif key != "warnings":
            assert swept[key] == value, key
    assert swept["horizon_months"] == 48 and swept["gpu_count"] == 72


def test_true_and_false_are_not_numbers_in_any_batch_input(base, capsys):
    # a grid, a range and a table took true and false for 1 and 0; --set and repeat refused them
    from econ.analysis import sweep

    assert main(["sweep", str(SEED), "--grid", "utilization.share=true,false"]) == 3
    assert "utilization.share = true: expected a number, not true or false" in (
        capsys.readouterr().err
    )
    assert main(["sensitivity", str(SEED), "--range", "utilization.share=0.5,true"]) == 3
    assert "not true or false" in capsys.readouterr().err
    for column in ([0.5, False], np.array([True, False])):
        with pytest.raises(InputError, match="expected a number, not true or false"):
            sweep(base, table={"utilization.share": column})


def test_an_input_that_never_varies_is_not_said_to_have_no_effect(tmp_path, capsys):
    # "utilization.share has no effect on them" where it took one value in every scenario
    args = ["montecarlo", str(SEED), "--dist", "utilization.share=discrete(0.5)", "-n", "10"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "utilization.share takes one value in all 10 scenarios" in err
    assert "no effect" not in err
    table = tmp_path / "t.csv"
    table.write_text("name,utilization.share\nfoo,0.5\nbar,0.5\n")
    assert main(["sweep", str(SEED), "--overrides", str(table)]) == 0
    assert "takes one value in all 2 scenarios" in capsys.readouterr().err
    # an input that varies and moves nothing is still said to have no effect
    args = ["sweep", str(SEED), "--grid", "market.contract_term_months=12,24"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "has no effect on them" in err and "takes one value" not in err


def test_each_sweep_row_has_the_catalog_warnings_of_its_own_values(base):
    # the rows carried the base's: "36 is not a whole number of systems" on a row of 72 GPUs,
    # and nothing on a row of 36 from a base of 72
    from econ import project
    from econ.analysis import sweep
    from econ.scenario import apply_overrides, scenario_to_dict, validate_dict

    def odd(warnings) -> list[str]:
        return [w for w in warnings if "is not a whole number of gb200-nvl72 systems" in w]

    alone = (
        project(validate_dict(apply_overrides(scenario_to_dict(base), {"fleet.gpu_count": 36})))
        .summary["warnings"]
        .iloc[0]
    )
    assert len(odd(alone)) == 1
    rows = sweep(base, grid={"fleet.gpu_count": [36, 72]}).rows
    warnings = [str(w) for w in rows["warnings"]]
    assert odd(alone)[0] in warnings[0] and not odd([warnings[1]])
    base36 = validate_dict(apply_overrides(scenario_to_dict(base), {"fleet.gpu_count": 36}))
    rows = sweep(base36, grid={"fleet.gpu_count": [72, 36]}).rows
    warnings = [str(w) for w in rows["warnings"]]
    assert not odd([warnings[0]]) and odd(alone)[0] in warnings[1]
    cooled = sweep(base, grid={"facility.rack_cooling": ["air", "liquid"]}).rows
    assert "facility.rack_cooling is 'air'" in str(cooled["warnings"].iloc[0])
    assert "facility.rack_cooling is" not in str(cooled["warnings"].iloc[1])


def test_an_override_table_names_each_scenario_once(base, tmp_path, capsys):
    from econ.analysis import sweep

    table = tmp_path / "d.csv"
    table.write_text("name,utilization.share\nfoo,0.5\nfoo,0.6\n")
    assert main(["sweep", str(SEED), "--overrides", str(table)]) == 3
    assert "row 2: name 'foo' is also the name of row 1" in capsys.readouterr().err
    with pytest.raises(InputError, match="name 'a' is also the name of row 1"):
        sweep(base, table={"name": ["a", "b", "a"], "utilization.share": [0.5, 0.6, 0.7]})


def test_a_json_file_is_told_a_scenario_is_toml(tmp_path, capsys):
    scenario = tmp_path / "s.json"
    scenario.write_text('{"name": "x", "fleet": {"gpu_count": 8}}')
    assert main(["project", str(scenario)]) == 3
    err = capsys.readouterr().err
    assert "malformed TOML" in err and "this is JSON: a scenario file is TOML" in err
    scenario.write_text("name = [unclosed")  # not JSON either: no such hint
    assert main(["project", str(scenario)]) == 3
    assert "this is JSON" not in capsys.readouterr().err


def test_reports_write_figures_as_the_terminal_does(tmp_path, capsys):
    """A second data scientist's review: the Markdown report wrote "-165,555" beside
    "-1.64902e+06" in one column, "value_at_risk_95_usd: 1.50606e+06" and a probability of loss
    of "0.547" where the terminal said 54.70%, and aligned its text columns right."""
    import re

    from econ.analysis.output import cell_text

    args = ["montecarlo", str(SEED), "--dist", "utilization.share=uniform(0.5,0.9)", "-n", "400"]
    assert main([*args, "--output", "npv_usd", "--report", str(tmp_path / "mc"), "--format",
                 "json"]) == 0  # fmt: skip
    data = __import__("json").loads(capsys.readouterr().out)
    text = (tmp_path / "mc.md").read_text()
    assert not re.search(r"\d[eE][+-]\d", text)
    [row] = [line for line in text.splitlines() if line.startswith("| npv_usd |")]
    stats = data["metrics"]["npv_usd"]
    for key in ("mean", "min", "max"):
        assert f"| {cell_text(stats[key])} " in row + " "
    assert abs(stats["min"]) >= 1e6 and cell_text(stats["min"]).count(",") == 2
    risk = data["npv_risk"]
    assert f"- probability_of_loss: {risk['probability_of_loss']:.2%}" in text
    assert f"- value_at_risk_95_usd: {risk['value_at_risk_95_usd']:,.0f}" in text
    assert "|---|---:|" in text  # the output names left, the counts right
