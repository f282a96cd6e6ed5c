"""Sweeps: grids and override tables, checked like scenario files, equal to direct projections."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import load_scenario, project
from econ.analysis.chunks import read_metadata
from econ.analysis.sweeps import GridSweep, TableSweep, parse_grid, sweep
from econ.analysis.validation import BatchInputError, coerce_column, field_specs
from econ.cli import main
from econ.scenario import apply_overrides, scenario_to_dict, validate_dict
from tests.conftest import ROOT

SEED_FILE = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
BASE = validate_dict(
    {
        "name": "sweep",
        "fleet": {"gpu_count": 8},
        "capex": {"system_price_usd": 250000.0, "gpus_per_system": 8},
        "depreciation": {"life_years": 3.0},
        "throughput": {"tokens_per_s_per_gpu": 2000.0},
        "financing": {"debt_share": 0.5},
        "market": {"price_usd_per_mtok": 1.0},
    }
)
METRICS = ("npv_usd", "lcot_usd_per_mtok", "irr_project_annual", "tokens_total", "payback_months")


def direct(overrides: dict) -> dict:
    """Reference: the same scenario built through the pydantic models and projected alone."""
    scenario = validate_dict(apply_overrides(scenario_to_dict(BASE), overrides))
    return {k: float(project(scenario).metrics[k][0]) for k in METRICS}


def test_grid_is_the_cartesian_product_in_order_and_matches_direct_projections():
    grid = {"depreciation.life_years": [2, 3, 4], "financing.discount_rate_annual": [0.08, 0.12]}
    result = sweep(BASE, grid=grid, chunk_size=4)
    rows = result.rows
    assert len(rows) == 6
    expected = list(itertools.product(*grid.values()))
    got = list(
        zip(rows["depreciation.life_years"], rows["financing.discount_rate_annual"], strict=True)
    )
    assert got == expected  # the last path varies fastest
    for i, (life, rate) in enumerate(expected):
        ref = direct({"depreciation.life_years": life, "financing.discount_rate_annual": rate})
        for k in METRICS:
            assert rows[k][i] == pytest.approx(ref[k], rel=1e-12, nan_ok=True), k
    assert rows["name"].tolist()[:2] == ["sweep#0", "sweep#1"]
    assert rows["warnings"].map(type).eq(str).all()


def test_a_gpu_price_sweep_replaces_the_system_price():
    result = sweep(BASE, grid={"capex.gpu_price_usd": [20000, 40000]})
    ref = direct({"capex.gpu_price_usd": 20000, "capex.system_price_usd": None})
    assert result.rows["npv_usd"][0] == pytest.approx(ref["npv_usd"], rel=1e-12)
    assert result.rows["npv_usd"][0] > result.rows["npv_usd"][1]


def test_choice_fields_are_swept_by_name():
    result = sweep(BASE, grid={"financing.debt_rate_quote": ["nominal", "effective"]})
    assert result.rows["financing.debt_rate_quote"].tolist() == ["nominal", "effective"]
    ref = direct({"financing.debt_rate_quote": "effective"})
    assert result.rows["npv_usd"][1] == pytest.approx(ref["npv_usd"], rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_grid_points_by_index_follow_itertools_product(sizes, data):
    paths = ["power.pue", "utilization.share", "financing.tax_rate", "market.price_decline_annual"]
    grid = {
        p: [round(0.1 + 0.2 * k, 2) for k in range(s)] for p, s in zip(paths, sizes, strict=False)
    }
    job = GridSweep(
        BASE, {p: [1.0 + v if p == "power.pue" else v for v in vals] for p, vals in grid.items()}
    )
    start = data.draw(st.integers(0, job.n - 1))
    stop = data.draw(st.integers(start + 1, job.n))
    columns = job.inputs(start, stop)
    product = list(itertools.product(*job.axes.values()))[start:stop]
    for k, path in enumerate(job.axes):
        assert columns[path].tolist() == [p[k] for p in product]


def test_override_table_from_csv(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(
        "name,market.price_usd_per_mtok,financing.debt_rate_quote,fleet.gpu_count\n"
        "cheap,0.5,nominal,8\n"
        "dear,2.0,effective,16\n"
    )
    result = sweep(BASE, table=path)
    rows = result.rows
    assert rows["name"].tolist() == ["cheap", "dear"]
    ref = direct(
        {
            "market.price_usd_per_mtok": 2.0,
            "financing.debt_rate_quote": "effective",
            "fleet.gpu_count": 16,
        }
    )
    assert rows["npv_usd"][1] == pytest.approx(ref["npv_usd"], rel=1e-12)


def test_override_table_from_parquet(tmp_path):
    path = tmp_path / "rows.parquet"
    pd.DataFrame({"utilization.share": [0.5, 0.9]}).to_parquet(path)
    rows = sweep(BASE, table=path).rows
    assert rows["tokens_total"][1] == pytest.approx(rows["tokens_total"][0] * 0.9 / 0.5, rel=1e-12)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "name,capex.gpu_prize_usd\na,1\n",
            "column 'capex.gpu_prize_usd' is not a field.*did you mean capex.gpu_price_usd",
        ),
        (
            "market.price_usd_per_mtok\n0.5\nabc\n",
            "row 2: market.price_usd_per_mtok = 'abc': expected a number",
        ),
        (
            "market.price_usd_per_mtok\n0.5\n-1\n",
            "row 2: market.price_usd_per_mtok = -1: expected a number >= 0",
        ),
        ("utilization.share,power.pue\n,1.2\n", "row 1: utilization.share = empty"),
        ("fleet.gpu_count\n4.5\n", "row 1: fleet.gpu_count = 4.5: expected a whole number >= 1"),
        (
            "financing.debt_rate_quote\nfixed\n",
            "row 1: financing.debt_rate_quote = 'fixed': expected one of: nominal, effective",
        ),
        (
            "market.contract_share\n0.5\n",
            "row 1: market.contract_share = 0.5 but market.contract_usd_per_gpu_hour = 0",
        ),
        (
            "utilization.ramp_months\n48\n",
            "row 1: utilization.ramp_months = 48 months, longer than the horizon of 36",
        ),
        ("name\nx\n", "expected at least one column named by a field path"),
        (  # pandas would rename the second one market.price_usd_per_mtok.1
            "market.price_usd_per_mtok,utilization.share,market.price_usd_per_mtok\n0.2,0.5,0.3\n",
            r"column 'market.price_usd_per_mtok' is repeated \(columns 1 and 3\); expected each "
            "field path once",
        ),
    ],
)
def test_bad_tables_name_the_row_and_column(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(BatchInputError, match=message):
        sweep(BASE, table=path)


@pytest.mark.parametrize(
    "items, message",
    [
        (
            ["capex.gpu_prize_usd=1,2"],
            "grid path 'capex.gpu_prize_usd' is not a field.*did you mean",
        ),
        (["depreciation.life_years"], "expected PATH=V1,V2"),
        (["depreciation.life_years=4,,6"], "empty value"),
        (["depreciation.life_years=4", "depreciation.life_years=5"], "given twice"),
        (["name=a,b"], "not a numeric one"),
        (  # as `econ project --set` refuses it
            ['utilization.share="0.5",0.6'],
            r'--grid utilization.share: "0.5" is a number written as text; expected the number '
            "without quotes",
        ),
        (
            ["utilization.share='half',0.6"],
            "--grid utilization.share: 'half' is text; expected a number",
        ),
    ],
)
def test_bad_grid_arguments(items, message):
    with pytest.raises(BatchInputError, match=message):
        parse_grid(items)


def test_grid_values_are_checked_against_bounds_and_rules():
    with pytest.raises(
        BatchInputError,
        match=r"depreciation.life_years = 40: expected a number >= 0.0833333 and <= 30",
    ):
        GridSweep(BASE, {"depreciation.life_years": [3, 40]})
    with pytest.raises(BatchInputError, match="fleet.gpu_count = 'many': expected a number"):
        GridSweep(BASE, {"fleet.gpu_count": [8, "many"]})
    # 1-year life: the 36-month horizon follows the life, so a 24-month ramp no longer fits.
    with pytest.raises(
        BatchInputError,
        match=r"point 2 of 2 \(depreciation.life_years=1\): utilization.ramp_months = 24 months",
    ):
        GridSweep(
            BASE.model_copy(
                update={"utilization": BASE.utilization.model_copy(update={"ramp_months": 24})}
            ),
            {"depreciation.life_years": [3, 1]},
        )


def test_bounds_come_from_the_models():
    specs = field_specs()
    assert specs["utilization.share"].ge == 0 and specs["utilization.share"].le == 1
    assert specs["capex.gpu_price_usd"].gt == 0 and specs["capex.gpu_price_usd"].nullable
    assert specs["financing.debt_rate_quote"].choices == ("nominal", "effective")
    np.testing.assert_array_equal(coerce_column("utilization.share", ["0.5", 1]), [0.5, 1.0])


def test_table_needs_rows():
    with pytest.raises(BatchInputError, match="no rows"):
        TableSweep(BASE, pd.DataFrame({"utilization.share": []}))


# --- command line ---------------------------------------------------------------------------


def test_cli_sweep_json(capsys):
    code = main(
        [
            "sweep",
            str(SEED_FILE),
            "--grid",
            "depreciation.life_years=4,6",
            "--grid",
            "market.price_decline_annual=0.2,0.4",
            "--format",
            "json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["scenarios"]) == 4
    first = data["scenarios"][0]
    assert first["inputs"] == {"depreciation.life_years": 4.0, "market.price_decline_annual": 0.2}
    assert set(first["summary"]["cost_usd_per_mtok_by_component"]) >= {"power", "opex"}
    ref = project(
        load_scenario(SEED_FILE, ["depreciation.life_years=4", "market.price_decline_annual=0.2"])
    )
    assert first["summary"]["npv_usd"] == pytest.approx(float(ref.metrics["npv_usd"][0]), rel=1e-12)
    assert data["metadata"]["scenario_hash"]
    # the warnings whole, as `econ project` gives them (the sizing one holds "; " itself)
    assert first["summary"]["warnings"] == list(ref.warnings[0])
    assert any("; " in w for w in first["summary"]["warnings"])


def test_cli_sweep_writes_parquet_with_metadata(tmp_path, capsys):
    out = tmp_path / "sweep.parquet"
    args = [
        "sweep",
        str(SEED_FILE),
        "--grid",
        "financing.discount_rate_annual=0.08,0.1,0.12",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    frame = pd.read_parquet(out)
    assert len(frame) == 3 and "npv_usd" in frame
    meta = read_metadata(out)
    assert meta["kind"] == "sweep" and meta["engine"]["engine"] == "serial"
    assert meta["plan"]["grid"]["financing.discount_rate_annual"] == [0.08, 0.1, 0.12]
    assert not (tmp_path / "sweep.parquet.chunks").exists()
    assert main(args) == 3  # never overwrites without --force
    assert "exists" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0


def test_cli_sweep_csv_and_bad_input(tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    assert (
        main(["sweep", str(SEED_FILE), "--grid", "utilization.share=0.5,0.9", "--out", str(out)])
        == 0
    )
    assert len(pd.read_csv(out)) == 2
    assert json.loads((tmp_path / "sweep.meta.json").read_text())["kind"] == "sweep"
    capsys.readouterr()
    assert main(["sweep", str(SEED_FILE), "--grid", "utilization.share=0.5,1.5"]) == 3
    err = capsys.readouterr().err
    assert "utilization.share = 1.5" in err and "Traceback" not in err


SIMPLE_PATHS = [
    p
    for p, spec in field_specs().items()
    if spec.kind != "choice"
    and p.count(".") == 1
    and p.split(".")[0] in ("power", "opex", "market", "financing", "throughput", "utilization")
    and not p.startswith("market.contract")
]


@settings(max_examples=50, deadline=None)
@given(path=st.sampled_from(SIMPLE_PATHS), value=st.floats(-2, 1e4, allow_nan=False))
def test_column_checks_accept_exactly_what_the_models_accept(path, value):
    """Invariants: the vectorized column checks never refuse a value the models accept, and with
    the pydantic backstop on the row, the checks refuse exactly what the models refuse."""
    from econ.analysis.validation import check_columns

    if field_specs()[path].kind == "int":
        value = float(round(value))
    try:
        validate_dict(apply_overrides(scenario_to_dict(BASE), {path: value}))
        accepted = True
    except Exception:  # noqa: BLE001 - any validation error means "rejected"
        accepted = False

    def passes(sample_rows: int) -> bool:
        try:
            check_columns(BASE, {path: coerce_column(path, [value])}, 1, sample_rows=sample_rows)
        except BatchInputError:
            return False
        return True

    assert passes(8) == accepted, (path, value)
    assert passes(0) or not accepted, (path, value)


def test_a_table_task_carries_only_its_rows():
    job = TableSweep(BASE, pd.DataFrame({"utilization.share": np.linspace(0.1, 0.9, 9)}))
    part = job.view(3, 6)
    assert len(part.columns["utilization.share"]) == 3
    np.testing.assert_array_equal(
        part.inputs(3, 6)["utilization.share"], job.inputs(3, 6)["utilization.share"]
    )


def test_a_rule_over_a_whole_table_names_the_table_not_its_contents():
    """A value that breaks a rule between fields (a loan given both as an amount and a share)
    names the section and the rule, not a dump of every financing field."""
    from econ.analysis.validation import BatchInputError

    base = load_scenario(ROOT / "models" / "scenarios" / "llama2-70b-h200.toml")
    with pytest.raises(BatchInputError) as info:
        sweep(base, grid={"financing.debt_usd": [1e6]})
    assert str(info.value) == (
        "grid, point 1 of 1 (financing.debt_usd=1000000): financing: debt_usd is 1,000,000 and debt_share is 0.5 given; give the "
        "term loan either as debt_usd (an amount) or as debt_share (a share of capex), and no "
        "tranches"
    )


# --- size, repeats, streaming ---------------------------------------------------------------


def test_a_quoted_choice_name_is_still_a_choice():
    assert parse_grid(['financing.debt_rate_quote="nominal",effective']) == {
        "financing.debt_rate_quote": ["nominal", "effective"]
    }


@pytest.mark.parametrize(
    "grid, message",
    [
        (
            {"depreciation.life_years": [4, 4.0, 6]},
            r"grid depreciation.life_years: value 2 \(4.0\) repeats value 1 \(4\); expected each "
            "value once",
        ),
        (
            {"financing.covenants.dscr_floor": [1.2, "none", "none"]},
            r"value 3 \(none\) repeats value 2 \(none\)",
        ),
        ({"financing.debt_rate_quote": ["nominal", "effective", "nominal"]}, "value 3"),
    ],
)
def test_a_repeated_grid_value_is_refused(grid, message):
    """Two identical grid points would count twice in any statistic of the sweep."""
    with pytest.raises(BatchInputError, match=message):
        GridSweep(BASE, grid)


def test_cli_refuses_repeated_and_quoted_grid_values(capsys):
    assert main(["sweep", str(SEED_FILE), "--grid", "depreciation.life_years=4,4.0,6"]) == 3
    err = capsys.readouterr().err
    assert "value 2 (4.0) repeats value 1 (4)" in err and "Traceback" not in err
    assert main(["sweep", str(SEED_FILE), "--grid", 'utilization.share="0.5",0.6']) == 3
    assert "a number written as text" in capsys.readouterr().err


HUGE_GRID = {  # 10^10 points
    path: list(np.linspace(lo, hi, 100))
    for path, lo, hi in [
        ("utilization.share", 0.5, 0.9),
        ("market.price_decline_annual", 0.1, 0.6),
        ("market.price_usd_per_mtok", 0.2, 0.4),
        ("financing.discount_rate_annual", 0.05, 0.15),
        ("power.price_usd_per_kwh", 0.06, 0.11),
    ]
}


def test_chunk_bounds_of_a_huge_grid_hold_nothing_per_point():
    """A chunk needs only its first and last row: 10^10 grid points took 74.5 GiB of bounds
    (one int64 per point) before the first chunk, and ended in numpy's MemoryError."""
    import tracemalloc

    from econ.analysis.runner import chunk_bounds

    job = GridSweep(BASE, HUGE_GRID)
    assert job.n == 10**10
    tracemalloc.start()
    try:
        bounds = chunk_bounds(job, 16_384)
        first, last = bounds[0], bounds[-1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert len(bounds) == -(-(10**10) // 16_384)
    assert first[:2] == (0, 16_384) and list(first[2]) == list(range(16_384))
    assert last[1] == 10**10 and last[0] == (len(bounds) - 1) * 16_384
    # the last chunk's rows from their index alone (the last --grid varies fastest)
    prices = HUGE_GRID["power.price_usd_per_kwh"]
    got = job.inputs(last[0], last[0] + 2)["power.price_usd_per_kwh"].tolist()
    assert got == [prices[last[0] % 100], prices[(last[0] + 1) % 100]]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), block=st.integers(1, 700), chunk=st.integers(1, 3000))
def test_chunk_bounds_by_index_are_the_whole_blocks_of_the_run(n, block, chunk):
    """Reference: every block start listed, then grouped (the former implementation)."""
    from econ.analysis.runner import ChunkBounds

    starts = np.arange(max(1, n // block), dtype=np.int64) * block
    per = max(1, -(-chunk // block))
    expected = [
        (int(starts[k]), int(starts[k + per]) if k + per < len(starts) else n,
         [int(b) for b in starts[k : k + per]])
        for k in range(0, len(starts), per)
    ]  # fmt: skip
    got = [(a, b, list(c)) for a, b, c in ChunkBounds(n, block, chunk)]
    assert got == expected


def test_cli_refuses_a_grid_beyond_what_can_run_naming_its_size(tmp_path, capsys):
    grid = [f"--grid={p}=" + ",".join(f"{v:.6g}" for v in vs) for p, vs in HUGE_GRID.items()]
    # 10^10 rows kept in memory (printed): refused, with the way to stream them
    assert main(["sweep", str(SEED_FILE), *grid]) == 3
    err = capsys.readouterr().err
    assert "the sweep has 10,000,000,000 scenarios, whose rows would take about" in err
    assert "expected at most 2 GB" in err and "--out FILE.parquet" in err
    # docs/batch.md quotes it up to its "..." (it said 15,600.0 GB where econ printed 15,680.0)
    page = " ".join((ROOT / "docs" / "batch.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"without `--out` are refused as `([^`]*) \.\.\.`", page)
    assert quoted and quoted.group(1) in " ".join(err.split()), quoted
    assert "Traceback" not in err and "MemoryError" not in err
    # 10^12 points even streamed to a file: beyond any run
    out = tmp_path / "rows.parquet"
    more = [*grid, "--grid=power.pue=" + ",".join(f"{1.1 + k / 1000:.4f}" for k in range(100))]
    assert main(["sweep", str(SEED_FILE), *more, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "has 1,000,000,000,000 scenarios; expected at most 10,000,000,000 in one run" in err
    assert not out.exists() and not (tmp_path / "rows.parquet.chunks").exists()


def test_a_sweep_written_with_out_streams_its_rows_with_their_names(tmp_path, monkeypatch):
    """Beyond 50 rows, --out with the table format keeps no row in memory: the file is written
    from the chunk files, names included, and equals the rows a kept sweep returns."""
    from econ.analysis import runner

    kept = []
    real = runner.run

    def spy(job, *args, **kwargs):
        kept.append(kwargs.get("keep_rows", True))
        return real(job, *args, **kwargs)

    monkeypatch.setattr(runner, "run", spy)
    shares = [float(f"{v:.4f}") for v in np.linspace(0.5, 0.9, 60)]
    out = tmp_path / "rows.parquet"
    grid = "utilization.share=" + ",".join(str(v) for v in shares)
    assert (
        main(["sweep", str(SEED_FILE), "--grid", grid, "--out", str(out), "--chunk-size", "16"])
        == 0
    )
    assert kept == [False]
    written = pd.read_parquet(out)
    expected = real(GridSweep(load_scenario(SEED_FILE), {"utilization.share": shares})).rows
    assert written["name"].tolist() == [f"deepseek-r1-gb200-nvl72#{i}" for i in range(60)]
    assert list(written.columns) == list(expected.columns)
    np.testing.assert_array_equal(written["npv_usd"], expected["npv_usd"])


def test_a_table_sweep_names_its_rows_in_every_chunk(tmp_path):
    table = pd.DataFrame({"name": list("abcde"), "utilization.share": np.linspace(0.5, 0.9, 5)})
    rows = sweep(BASE, table=table, chunk_size=2).rows
    assert rows["name"].tolist() == list("abcde")
    assert list(rows.columns[:3]) == ["scenario", "name", "utilization.share"]


def test_a_sweep_over_an_input_that_moves_no_output_says_so(capsys):
    """depreciation.factor is read only by declining-balance depreciation: on a straight-line
    scenario every row is the same, which a table alone would not say."""
    result = sweep(BASE, grid={"depreciation.factor": [1.5, 2.0]})
    assert result.metadata["notes"] == [
        f"none of the outputs ({len(result.job.outputs)}) changes across the 2 scenarios: "
        "depreciation.factor has no effect on them in sweep"
    ]
    assert "notes" not in sweep(BASE, grid={"utilization.share": [0.5, 0.6]}).metadata
    assert main(["sweep", str(SEED_FILE), "--grid", "depreciation.factor=1.5,2"]) == 0
    assert "note: none of the outputs" in capsys.readouterr().err


def test_batch_metadata_carries_the_scenario_hash_econ_project_gives(capsys):
    """scenario_hash (SHA-256 of the TOML text of the scenario run) is not econ project's
    provenance sha256 (of its canonical JSON), so batch outputs could not be joined to project
    or library stamps: scenario_sha256 is that hash of the base scenario, loan held or not."""
    from econ.provenance import scenario_sha256

    expected = scenario_sha256(load_scenario(SEED_FILE))
    for extra in ([], ["--hold-debt"]):
        args = ["sweep", str(SEED_FILE), "--grid", "utilization.share=0.6", "--format", "json"]
        assert main([*args, *extra]) == 0
        metadata = json.loads(capsys.readouterr().out)["metadata"]
        assert metadata["scenario_sha256"] == expected


def test_sweep_names_a_grid_or_table_of_the_wrong_kind():
    """'float' object is not iterable; expected str, bytes or os.PathLike object; a string's
    characters taken as grid values."""
    from econ.errors import InputError

    with pytest.raises(BatchInputError, match=r"grid utilization.share = 0.8: expected a list"):
        sweep(BASE, grid={"utilization.share": 0.8})
    with pytest.raises(BatchInputError, match="grid financing.debt_rate_quote = 'effective'"):
        sweep(BASE, grid={"financing.debt_rate_quote": "effective"})
    with pytest.raises(BatchInputError, match="table is int; expected a DataFrame, a mapping"):
        sweep(BASE, table=5)
    with pytest.raises(InputError, match=r"base is str '.*\.toml'; expected a Scenario"):
        sweep(str(SEED_FILE), grid={"utilization.share": [0.8]})
    rows = sweep(BASE, table={"utilization.share": [0.6, 0.8]}).rows  # a mapping is a table
    assert rows["utilization.share"].tolist() == [0.6, 0.8]


@pytest.mark.parametrize(
    "text, line",
    [
        # every row one field too many: pandas took the first field as the row's index and put
        # 0.3 in utilization.share and 9 in the price, and the sweep ran on them
        ("utilization.share,market.price_usd_per_mtok\n0.6,0.3,9\n0.7,0.3,9\n", 2),
        ("utilization.share,market.price_usd_per_mtok\n0.6,0.3\n\n0.7,0.3\n0.8,0.3,9\n", 5),
    ],
)
def test_a_table_row_wider_than_its_header_is_refused_naming_the_line(tmp_path, capsys, text, line):
    path = tmp_path / "rows.csv"
    path.write_text(text)
    with pytest.raises(BatchInputError, match=f"rows.csv: line {line} has 3 fields; expected 2"):
        sweep(BASE, table=path)
    capsys.readouterr()
    assert main(["sweep", str(SEED_FILE), "--overrides", str(path), "--format", "csv"]) == 3
    captured = capsys.readouterr()
    assert f"line {line} has 3 fields" in captured.err and not captured.out
    assert "Traceback" not in captured.err


def test_a_table_as_written_keeps_its_columns(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("utilization.share,market.price_usd_per_mtok\n0.6,0.3\n0.7,0.4\n")
    rows = sweep(BASE, table=path).rows
    assert rows["utilization.share"].tolist() == [0.6, 0.7]
    assert rows["market.price_usd_per_mtok"].tolist() == [0.3, 0.4]


@pytest.mark.parametrize(
    "values", [[[0.6, 0.7], [0.8, 0.9]], [[0.6, 0.7]], np.array([[0.6, 0.7], [0.8, 0.9]])]
)
def test_grid_values_nested_in_lists_are_refused(values):
    # [[0.6, 0.7]] was flattened into two grid values without a word
    with pytest.raises(
        BatchInputError,
        match=r"grid utilization.share, value 1: utilization.share = .*0.6, 0.7.*: expected a "
        "number",
    ):
        sweep(BASE, grid={"utilization.share": values})


def test_an_unknown_grid_path_is_named_without_listing_every_path():
    # Found by review: `--grid nope=1` printed all 137 numeric paths (about 4 kB)
    with pytest.raises(BatchInputError) as info:
        parse_grid(["nope=1"])
    message = str(info.value)
    assert "grid path 'nope' is not a field of the scenario" in message
    assert "SECTION.FIELD with SECTION one of capex, depreciation" in message
    assert "capex.gpu_price_usd" not in message and len(message) < 400
    with pytest.raises(BatchInputError) as info:  # a known section: its fields, and the nearest
        parse_grid(["capex.gpu_prise_usd=1"])
    assert "did you mean capex.gpu_price_usd" in str(info.value)
    assert "expected one of capex's: capex.gpu_price_usd" in str(info.value)
    assert "power.pue" not in str(info.value)


def test_an_override_table_that_is_a_folder_is_called_one(tmp_path, capsys):
    seed = str(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    assert main(["sweep", seed, "--overrides", str(tmp_path)]) == 3
    assert f"{tmp_path}: a folder; expected a CSV or Parquet override table file" in (
        capsys.readouterr().err
    )
    assert main(["sweep", seed, "--overrides", str(tmp_path / "no.csv")]) == 3
    assert "no.csv: not found" in capsys.readouterr().err


# --- chunk files against the free disk space ----------------------------------------------------


def _free_bytes(monkeypatch, free: int) -> None:
    """The disk of every folder has `free` bytes free."""
    import shutil

    real = shutil.disk_usage

    def fake(path):
        return real(path)._replace(free=free)

    monkeypatch.setattr(shutil, "disk_usage", fake)


SHARES_60 = "utilization.share=" + ",".join(f"{v:.4f}" for v in np.linspace(0.5, 0.9, 60))


def test_a_streamed_sweep_whose_chunk_files_exceed_the_free_disk_is_refused(
    tmp_path, monkeypatch, capsys
):
    """A 144,000,000-point sweep with --out started at once, its chunk files (some 37 GB)
    bound to fill the disk hours later; now the run is refused before it starts."""
    _free_bytes(monkeypatch, 10_000)
    out = tmp_path / "rows.parquet"
    assert main(["sweep", str(SEED_FILE), "--grid", SHARES_60, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: the sweep writes its 60 rows to chunk files in {out}.chunks: about "
    )
    # the --out file beside them counts too (round 25: it was left out)
    assert f"bytes per row), and then to {out} from them, about " in err
    assert " on the same disk: " in err
    assert " in all, more than the 9.8 kB free on that disk; free some space" in err
    assert len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written, no folder


def test_chunk_files_are_announced_when_no_progress_bar_shows(tmp_path, monkeypatch, capsys):
    from econ.analysis import runner

    monkeypatch.setattr(runner, "ANNOUNCE_BYTES", 1)
    out = tmp_path / "rows.parquet"
    assert main(["sweep", str(SEED_FILE), "--grid", SHARES_60, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "rows to chunk files" in line]
    assert len(said) == 1 and said[0].startswith(
        f"the sweep writes its 60 rows to chunk files in {out}.chunks: about "
    )
    assert said[0].endswith(" free)")


def test_the_chunk_files_estimate_is_near_the_files_written(tmp_path):
    from econ.analysis.runner import chunk_bounds, chunk_files_bytes, run

    grid = {
        "utilization.share": list(np.linspace(0.5, 0.9, 40)),
        "market.price_usd_per_mtok": list(np.linspace(0.2, 0.4, 50)),
    }
    job = GridSweep(load_scenario(SEED_FILE), grid)
    result = run(job, store=tmp_path / "c", keep_rows=False, chunk_size=512)
    written = sum(p.stat().st_size for p in (tmp_path / "c").glob("chunk-*.parquet"))
    estimate, per_row = chunk_files_bytes(job, chunk_bounds(job, 512), result.metadata)
    assert 0.67 < estimate / written < 1.5
    assert 20 < per_row < 8 * len(job.outputs) + 200  # outputs that repeat compress


def test_the_rows_have_a_range_index_and_a_scenario_column():
    # the docstring said `scenario` was the index; other code reads it as a column
    rows = sweep(BASE, grid={"utilization.share": [0.5, 0.6, 0.7]}).rows
    assert isinstance(rows.index, pd.RangeIndex)
    assert rows.columns[:3].tolist() == ["scenario", "name", "utilization.share"]
    assert rows["scenario"].tolist() == [0, 1, 2]


def test_a_resumed_table_sweep_whose_rows_were_renamed_is_refused(tmp_path, capsys):
    """The plan hashed the value columns, not `name`: the second run read the chunk files of
    the first and printed alpha and beta again."""
    table = tmp_path / "names.csv"
    chunks = tmp_path / "ck"
    argv = ["sweep", str(SEED_FILE), "--overrides", str(table), "--chunks", str(chunks)]
    table.write_text("name,utilization.share\nalpha,0.6\nbeta,0.8\n")
    assert main([*argv, "--format", "csv"]) == 0
    assert "alpha" in capsys.readouterr().out
    table.write_text("name,utilization.share\ngamma,0.6\ndelta,0.8\n")
    assert main([*argv, "--format", "csv"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {chunks} holds chunks of another run, which differs in ")
    assert "plan: the names of the override table's rows;" in err
    assert main([*argv, "--format", "csv", "--force"]) == 0
    out = capsys.readouterr().out
    assert "gamma" in out and "delta" in out and "alpha" not in out
    table.write_text("name,utilization.share\ngamma,0.6\ndelta,0.8\n")  # the same again
    assert main([*argv, "--format", "csv"]) == 0
    assert "gamma" in capsys.readouterr().out


@pytest.mark.parametrize("missing", [None, float("nan"), "", "  "])
def test_an_empty_name_in_an_overrides_table_is_refused_naming_its_row(missing):
    """A null name in a Parquet table made a row named "None" (or empty) in silence."""
    table = pd.DataFrame({"name": ["a", missing], "utilization.share": [0.5, 0.6]})
    with pytest.raises(BatchInputError) as info:
        sweep(BASE, table=table)
    assert str(info.value).startswith("overrides: row 2: name is empty; expected a name in every")


# --- the Markdown report shows names as typed ----------------------------------------------------

INJECTED_NAMES = [
    "![t](http://203.0.113.9/t.png)|<script>alert(1)</script>",  # the review's name
    "a :smile: b_ *c* `d` $e$ &lt; ~f~ [g]: http://h.example \\| i",
    "a\nb",  # a line feed (refused in an override table; a Python caller's frame has one)
]


def markdown_cells(row: str) -> list[str]:
    """A GFM table row's cells as a Markdown reader splits them: at each pipe that no backslash
    escapes, `\\x` being one character (cmark-gfm's table_cell, micromark's table)."""
    assert row.startswith("| ") and row.endswith(" |"), row
    cells, current = [], ""
    for token in re.findall(r"\\.|[^\\|]+|\|", row[1:-1]):
        if token == "|":
            cells.append(current)
            current = ""
        else:
            current += token
    return [*cells, current]


def as_read(markdown: str) -> str:
    """What a reader shows of escaped Markdown text: each escaped character as itself, without
    the invisible word joiners (econ.text.markdown_text)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def live(markdown: str) -> str | None:
    """Markdown that a viewer would draw as an image, a link, HTML, code, emphasis, maths or an
    emoji (a character no backslash escapes), or None."""
    bare = re.sub(r"\\.", "", markdown)
    found = re.search(r"[\[\]<`*$~]|(?<![\w])_|_(?![\w])|https?:|:\w+:|&\w+;", bare)
    return found.group() if found else None


def test_report_table_cells_are_shown_as_typed():
    from econ.analysis.report import markdown_table

    frame = pd.DataFrame({"name": INJECTED_NAMES, "npv_usd": [1.5e6, -2.0, float("nan")]})
    lines = markdown_table(frame).split("\n")
    assert len(lines) == 2 + len(INJECTED_NAMES)  # a line feed in a name ends no row
    assert markdown_cells(lines[0]) == [" name ", " npv_usd "]
    for line, name, npv in zip(lines[2:], INJECTED_NAMES, ["1,500,000", "-2", "n/a"], strict=True):
        cells = markdown_cells(line)
        assert len(cells) == 2, line  # the pipe in a name adds no cell
        assert live(cells[0]) is None, cells[0]
        assert as_read(cells[0].strip()) == name.replace("\n", "\\n")  # the line feed escaped
        assert cells[1].strip() == npv


def test_sweep_and_montecarlo_reports_show_names_as_typed(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    name = INJECTED_NAMES[0]
    table = tmp_path / "rows.csv"
    table.write_text(f'name,utilization.share\n"{name}",0.6\nplain,0.7\n', encoding="utf-8")
    scenario = "<b>bold</b> ![s](http://203.0.113.9/s.png)"
    named = ["--set", f"name={json.dumps(scenario)}"]
    prefix = tmp_path / "sweep (1)"
    argv = ["sweep", str(SEED_FILE), *named, "--overrides", str(table), "--report", str(prefix)]
    assert main(argv) == 0, capsys.readouterr().err
    text = (tmp_path / "sweep (1).md").read_text(encoding="utf-8")
    heading, _, _, _, header, _, first, second, *rest = text.split("\n")
    assert as_read(heading) == f"# Sweep: {scenario}" and live(heading[2:]) is None
    widths = {len(markdown_cells(row)) for row in (header, first, second)}
    assert widths == {len(header.split(" | "))}  # the header's own cells: no pipe in it
    assert as_read(markdown_cells(first)[0].strip()) == name and live(first) is None
    # the chart's link stays one link, its name's space and parentheses encoded
    assert "![npv_usd](sweep%20%281%29-histogram.png)" in rest
    argv = ["montecarlo", str(SEED_FILE), *named, "--dist", "utilization.share=uniform(0.5,0.9)"]
    assert main([*argv, "-n", "20", "--report", str(tmp_path / "mc")]) == 0
    heading = (tmp_path / "mc.md").read_text(encoding="utf-8").split("\n")[0]
    assert as_read(heading) == f"# Monte Carlo: {scenario}" and live(heading[2:]) is None


def test_a_montecarlo_chart_titled_with_a_name_holding_dollar_signs_is_drawn(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    name = "a $\\foo{$ b"  # matplotlib's maths between the dollars: a ParseFatalException
    argv = ["montecarlo", str(SEED_FILE), "--set", f"name={json.dumps(name)}", "-n", "20"]
    argv += ["--dist", "utilization.share=uniform(0.5,0.9)", "--report", str(tmp_path / "mc")]
    assert main(argv) == 0, capsys.readouterr().err
    assert (tmp_path / "mc-histogram.png").read_bytes()[:4] == b"\x89PNG"
    heading = (tmp_path / "mc.md").read_text(encoding="utf-8").split("\n")[0]
    assert as_read(heading) == f"# Monte Carlo: {name}"
