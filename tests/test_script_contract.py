"""What a script reading econ's outputs relies on: reproducible stamps, fixed column types,
warnings beside machine-readable output, provenance, JSON types and number text.

The commands run in-process through `econ.cli.main`, as in tests/test_cli.py.
"""

from __future__ import annotations

import json
import math
import subprocess

import pytest

from econ.cli import main
from tests.conftest import ROOT

SCENARIOS = ROOT / "models" / "scenarios"
SEED = SCENARIOS / "deepseek-r1-gb200-nvl72.toml"
STACK = SCENARIOS / "deepseek-r1-gb200-nvl72-capital-stack.toml"
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


@pytest.fixture
def run(capsys):
    """`econ ARGS...` in this process: a CompletedProcess-like result with the exit code."""

    def call(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["econ", *args], code, out, err)

    return call


# --- batch metadata: the creation time of every other output ----------------------------------


BATCH_RUNS = {
    "sweep": ("sweep", SEED, "--grid", "utilization.share=0.5,0.9"),
    "montecarlo": ("montecarlo", SEED, "-n", "8", "--dist", "utilization.share=uniform(0.5,0.9)"),
    "sensitivity": ("sensitivity", SEED, "--range", "utilization.share=0.5,0.9"),
}


@pytest.mark.parametrize("kind", sorted(BATCH_RUNS))
def test_batch_metadata_reproduces_with_source_date_epoch(kind, run, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    outputs = []
    for k in (1, 2):
        printed = run(*BATCH_RUNS[kind], "--format", "json")
        assert printed.returncode == 0, printed.stderr
        written = run(*BATCH_RUNS[kind], "--out", tmp_path / f"rows{k}.csv")
        assert written.returncode == 0, written.stderr
        outputs.append((printed.stdout, (tmp_path / f"rows{k}.meta.json").read_bytes()))
    assert outputs[0] == outputs[1]
    metadata = json.loads(outputs[0][1])
    assert metadata["created_utc"] == "2026-01-01T00:00:00Z"
    assert "created" not in metadata
    assert json.loads(outputs[0][0])["metadata"]["created_utc"] == "2026-01-01T00:00:00Z"


# --- Parquet: one schema whatever the scenario ------------------------------------------------


def _schemas(paths):
    import pyarrow.parquet as pq

    return [pq.read_schema(p).remove_metadata() for p in paths]


@pytest.mark.parametrize("table", ["summary", "monthly"])
def test_projection_parquet_schema_is_the_same_for_every_scenario(table, run, tmp_path):
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    paths = []
    for k, scenario in enumerate((SEED, STACK)):
        out = tmp_path / f"p{k}.parquet"
        assert run("project", scenario, "--out", out).returncode == 0
        paths.append(out if table == "monthly" else tmp_path / f"p{k}.summary.parquet")
    first, second = _schemas(paths)
    assert first.equals(second), set(first) ^ set(second)
    numeric = [f for f in first if f.name not in ("scenario", "month", "date", "warnings")]
    text = {"econ_version", "scenario_sha256", "catalog_versions", "seed", "created_utc"}
    assert {f.name for f in numeric if not pa.types.is_float64(f.type)} <= text
    both = pa.concat_tables([pq.read_table(p) for p in paths])  # was: cast double to null
    assert both.num_rows == sum(pq.read_metadata(p).num_rows for p in paths)
    assert ds.dataset([str(p) for p in paths]).to_table().num_rows == both.num_rows


def test_batch_rows_keep_numbers_of_no_value_as_float64():
    import numpy as np
    import pyarrow as pa

    from econ.analysis.chunks import to_arrow

    table = to_arrow(
        {
            "npv_usd": np.array([None, None], dtype=object),
            "name": np.array(["a", "b"], dtype=object),
        },
        {},
    )
    assert table.schema.field("npv_usd").type == pa.float64()
    assert pa.types.is_string(table.schema.field("name").type)


@pytest.mark.parametrize("kind", ["sweep", "montecarlo"])
def test_batch_rows_parquet_schema_is_the_same_for_every_scenario(kind, run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = []
    for k, scenario in enumerate((SEED, STACK)):
        out = tmp_path / f"r{k}.parquet"
        args = list(BATCH_RUNS[kind])
        args[1] = scenario
        assert run(*args, "--out", out).returncode == 0
        paths.append(out)
    first, second = _schemas(paths)
    assert first.equals(second)
    assert pa.concat_tables([pq.read_table(p) for p in paths]).num_rows > 0


# --- CSV output: the warnings on stderr, as the table words them ------------------------------


def test_gains_csv_says_the_warnings_of_both_cases_on_stderr(run):
    table = run("gains", SEED)
    said = run("gains", SEED, "--format", "csv")
    assert said.returncode == 0
    expected = [line for line in table.stdout.splitlines() if line.startswith("warning [")]
    assert expected and any(line.startswith("warning [gain]: ") for line in expected)
    assert [line for line in said.stderr.splitlines() if line.startswith("warning [")] == expected
    assert "warning" not in said.stdout


def test_simulate_csv_says_the_simulators_warning_on_stderr(run):
    args = ("throughput", "simulate", "--hardware", "mi325x", "--model", "deepseek-r1")
    args += ("--scenario", "server")
    table = run(*args)
    said = run(*args, "--format", "csv")
    assert said.returncode == 0
    expected = [line for line in table.stdout.splitlines() if line.startswith("warning: ")]
    assert any("outside the calibrated" in line for line in expected)
    assert said.stderr.splitlines() == expected
    assert "warning" not in said.stdout


def test_project_csv_says_the_warnings_on_stderr(run):
    table = run("project", SEED)
    said = run("project", SEED, "--format", "csv")
    expected = [line for line in table.stdout.splitlines() if line.startswith("warning [")]
    assert expected and said.stderr.splitlines() == expected


def test_sensitivity_csv_says_why_a_figure_is_missing(run):
    args = ("sensitivity", SEED, "--range", "utilization.share=0.5,0.9")
    table = run(*args)
    said = run(*args, "--format", "csv")
    expected = [line for line in table.stdout.splitlines() if line.startswith("n/a: ")]
    assert expected and [line for line in said.stderr.splitlines() if line.startswith("n/a")] == (
        expected
    )
    assert "n/a" not in said.stdout


# --- JSON: numbers as numbers, the seed an integer, the summary in project's order -------------


def _json(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_tornado_plan_holds_numbers_and_choice_names(run):
    plan = _json(
        run(
            "sensitivity", SEED, "--range", "utilization.share=0.5,0.9",
            "--range", "financing.debt_rate_quote=effective,nominal",
            "--vary", "market.price_usd_per_mtok", "--format", "json",
        )
    )["metadata"]["plan"]  # fmt: skip
    assert plan["ranges"]["utilization.share"] == [0.5, 0.9]
    assert plan["ranges"]["financing.debt_rate_quote"] == ["effective", "nominal"]
    low, high = plan["ranges"]["market.price_usd_per_mtok"]
    assert isinstance(low, float) and isinstance(high, float) and low < high


@pytest.mark.parametrize("method", ["morris", "sobol"])
def test_sensitivity_seed_is_an_integer_in_the_metadata_and_the_plan(method, run):
    size = ("--trajectories", "4") if method == "morris" else ("-n", "8")
    metadata = _json(
        run(
            "sensitivity", SEED, "--method", method, "--seed", "5", *size,
            "--dist", "utilization.share=uniform(0.5,0.9)", "--format", "json",
        )
    )["metadata"]  # fmt: skip
    assert metadata["seed"] == 5 and metadata["plan"]["seed"] == 5
    assert isinstance(metadata["seed"], int) and isinstance(metadata["plan"]["seed"], int)


def test_sweep_summary_keys_come_in_the_order_of_project(run):
    project = _json(run("project", SEED, "--format", "json"))["scenarios"][0]["summary"]
    sweep = _json(run("sweep", SEED, "--grid", "utilization.share=0.5,0.9", "--format", "json"))
    for scenario in sweep["scenarios"]:
        assert list(scenario["summary"]) == list(project)


# --- CSV numbers: the shortest text that reads back as the same double -------------------------


def _numbers_are_shortest(text: str) -> list[str]:
    """Number fields of a CSV that are not in their shortest round-trip form."""
    import csv
    import io

    longer = []
    for record in csv.reader(io.StringIO(text)):
        for field in record:
            try:
                value = float(field)
            except ValueError:
                continue
            if not math.isfinite(value):
                continue
            shortest = {repr(value)} | ({str(int(value))} if value.is_integer() else set())
            if field not in shortest:  # an integer column writes 720, a float one 720.0
                longer.append(field)
    return longer


def test_curve_csv_writes_the_shortest_round_trip_numbers(run):
    curve = ROOT / "tests" / "data" / "throughput" / "generic_curve_hand_example.csv"
    said = run("throughput", "import", curve, "--show", "csv")
    assert said.returncode == 0
    assert "0.10000000000000001" not in said.stdout and ",0.1," in said.stdout
    assert _numbers_are_shortest(said.stdout) == []


def test_refresh_csv_writes_the_shortest_round_trip_numbers(run):
    scenario = SCENARIOS / "h200-fleet-gb300-refresh.toml"
    said = run("refresh", scenario, "--vintage", "gb300", "--format", "csv")
    assert said.returncode == 0
    assert said.stdout.startswith("refresh_month,npv_usd,")
    assert _numbers_are_shortest(said.stdout) == []


# --- provenance: stdout carries what the files carry ------------------------------------------


def test_project_csv_on_stdout_is_the_summary_file(run, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    out = tmp_path / "seed.csv"
    said = run("project", SEED, "--format", "csv", "--out", out)
    assert said.returncode == 0
    assert said.stdout == (tmp_path / "seed.summary.csv").read_text()
    header = said.stdout.splitlines()[0].split(",")
    stamp = ["econ_version", "scenario_sha256", "catalog_versions", "seed", "created_utc"]
    assert header[-5:] == stamp


@pytest.mark.parametrize(
    "args",
    [
        ("gains", SEED),
        ("lease-vs-own", SEED, "--price", "4.0", "--term-months", "36"),
        ("refresh", SCENARIOS / "h200-fleet-gb300-refresh.toml", "--vintage", "gb300"),
    ],
    ids=lambda args: args[0],
)
def test_scenario_json_outputs_carry_the_provenance_of_project(args, run, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    project = _json(run("project", args[1], "--format", "json"))
    payload = _json(run(*args, "--format", "json"))
    assert list(payload)[:3] == ["econ_version", "provenance", "created_utc"]
    assert payload["provenance"] == project["provenance"]
    assert payload["created_utc"] == project["created_utc"] == "2026-01-01T00:00:00Z"
