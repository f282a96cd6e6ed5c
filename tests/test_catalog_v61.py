"""MLPerf Inference v6.1 in the benchmark catalog: every row checked against its own fields (derived
per-GPU = system / count, platform and nodes from the source, availability, generation), Qwen3-VL
rows that never give tokens/s, the seed's +19.8% step read from two catalog rows by `econ gains`
and the app, and the MLPerf Endpoints figure as a vendor claim whose warning reaches a scenario."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from econ import load_scenario, project
from econ.benchmarks import (
    VENDOR_CLAIM,
    CatalogError,
    accelerators,
    catalog_curve,
    catalog_step,
    catalog_throughput,
    filter_catalog,
    load_catalog,
    row_checks,
)
from econ.cli import main
from econ.errors import InputError
from econ.gains import step_from_catalog
from tests.conftest import ROOT

SEED_SCENARIO = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
V61 = "mlperf_inference_v6.1.csv"


@pytest.fixture(scope="module")
def catalog() -> pd.DataFrame:
    return load_catalog()


@pytest.fixture(scope="module")
def v61(catalog) -> pd.DataFrame:
    return catalog[catalog["catalog_file"] == V61]


@pytest.fixture
def source(shared_data: Path) -> pd.DataFrame:
    return pd.read_csv(shared_data / V61)


def _one(catalog, **filters) -> pd.Series:
    rows = filter_catalog(catalog, **filters)
    assert len(rows) == 1, rows[["id", "submitter", "accelerator_count"]]
    return rows.iloc[0]


def seed_rows(catalog) -> tuple[pd.Series, pd.Series]:
    query = {"model": "deepseek-r1", "submitter": "CoreWeave", "scenario": "Server"}
    v60 = _one(catalog, **query, round="v6.0", accelerator="GB200", division="closed")
    v61_row = _one(catalog, **query, round="v6.1", accelerator="GB200", division="closed")
    return v60, v61_row


# --- the rows, each checked against its own fields ------------------------------------------------


def test_all_400_rows_with_every_source_column(v61, source):
    assert len(source) == 400 and len(v61) == 400
    same = [c for c in source.columns if c != "metric_unit"]
    pd.testing.assert_frame_equal(v61[same].reset_index(drop=True), source[same], check_dtype=False)
    # units only lower-cased, as the other rounds write them
    assert (v61["metric_unit"].to_numpy() == source["metric_unit"].str.lower().to_numpy()).all()
    assert (v61["round"] == "v6.1").all() and (v61["published"] == "2026-09-16").all()
    assert v61["id"].str.match(r"^v6\.1-[0-9a-f]{8}$").all() and v61["id"].is_unique


def test_derived_per_gpu_is_system_over_count(v61, source):
    tokens = source[(source["metric_unit"] == "Tokens/s") & (source["accelerator_count"] > 0)]
    rows = v61.loc[v61["metric_unit"] == "tokens/s"]
    rows = rows[rows["accelerator_count"] > 0]
    assert len(rows) == len(tokens) > 300
    expected = tokens["result"].to_numpy() / tokens["accelerator_count"].to_numpy()
    np.testing.assert_array_equal(rows["tokens_per_s_per_gpu"].to_numpy(), expected)
    # the file rounds its per_accelerator to 2 decimals; it agrees with the recomputed figure
    assert (np.abs(tokens["per_accelerator"].to_numpy() - expected) <= 0.005 + 1e-9).all()
    cpu = v61[v61["accelerator_count"] == 0]
    assert len(cpu) == (source["accelerator_count"] == 0).sum() > 0
    assert cpu["tokens_per_s_per_gpu"].isna().all()
    for _, row in cpu.iterrows():
        assert any("no accelerator named" in c for c in row_checks(row))
        with pytest.raises(CatalogError, match="no accelerator count"):
            catalog_throughput(row["id"])


def test_fields_read_from_the_source_column(v61, source):
    for (_, row), text in zip(v61.iterrows(), source["source"], strict=True):
        location = re.search(r"Location \./(\w+)/[^/]+/results/([^/]+)/([^/]+)/([^/]+)/", text)
        division, platform, benchmark, scenario = location.groups()
        assert row["platform"] == platform and row["division"] == division
        # some result folders spell llama3.1 with an underscore
        assert row["benchmark"] == benchmark.replace("3_1", "3.1")
        assert row["scenario"] == scenario
        assert row["host_count"] == int(re.search(r"number_of_nodes (\d+)", text)[1])
        inferred = int(re.search(r"inferred (\d)", text)[1])
        assert row["inferred_flag"] == inferred
        flagged = any("inferred" in c for c in row_checks(row))
        assert flagged == (inferred == 1)
        family = re.sub(r"-99(\.9)?$", "", row["benchmark"])
        assert row["benchmark_family"] == family
        target = re.search(r"-(99(?:\.9)?)$", row["benchmark"])
        assert (
            (row["accuracy_target"] == float(target[1]))
            if target
            else pd.isna(row["accuracy_target"])
        )


def test_availability_division_and_generation_checks(v61):
    table = accelerators()
    assert set(v61["accelerator"]) <= set(table["accelerator"])
    assert (v61["generation"] != "").all(), "every v6.1 accelerator has a generation"
    for _, row in v61.iterrows():
        checks = row_checks(row)
        availability = row["availability"]
        assert any(c.startswith("Preview") for c in checks) == (availability == "preview")
        assert any(c.startswith("RDI") for c in checks) == (availability == "rdi")
        assert any(c.startswith("open division") for c in checks) == (row["division"] == "open")
        mixed = bool(re.search(r" \+ | and ", row["accelerator"]))
        assert any(c.startswith("mixed accelerators") for c in checks) == mixed
    assert set(v61["availability"]) == {"available", "preview", "rdi"}
    assert v61.loc[v61["accelerator"] == "NVIDIA Vera Rubin", "generation"].eq("Rubin").all()
    mi355x = v61[v61["accelerator"] == "AMD Instinct MI355X 288GB HBM3e"]
    assert len(mi355x) > 0 and (mi355x["hardware_key"] == "mi355x").all()


def test_qwen3_vl_rows_never_give_tokens_per_second(v61, source):
    qwen = v61[v61["benchmark"].str.startswith("qwen3-vl")]
    assert len(qwen) == source["benchmark"].str.startswith("qwen3-vl").sum() > 40
    assert set(qwen["metric_unit"]) == {"queries/s", "samples/s"}
    assert qwen["tokens_per_s_per_gpu"].isna().all()
    for row_id in qwen["id"]:
        with pytest.raises(CatalogError, match="not tokens/s"):
            catalog_throughput(row_id)
    with pytest.raises(CatalogError, match="not tokens/s"):
        catalog_curve(qwen["id"].iloc[0])
    row = qwen.iloc[0]
    assert any("not usable as a token throughput" in c for c in row_checks(row))


# --- the seed's step as a catalog fact -----------------------------------------------------------


def test_seed_step_from_two_catalog_rows(catalog):
    v60, v61_row = seed_rows(catalog)
    assert (v60["accelerator_count"], v61_row["accelerator_count"]) == (64, 72)
    before = v60["result"] / v60["accelerator_count"]
    after = v61_row["result"] / v61_row["accelerator_count"]
    assert round(before, 1) == 4867.7 and after == pytest.approx(5830.25)
    step = catalog_step(v60["id"], v61_row["id"])
    assert step.gain == pytest.approx(after / before - 1)
    assert round(step.gain, 3) == 0.198
    assert step.date == "2026-09-16"
    text = "\n".join(step.warnings)
    assert "different system sizes: 64, 72" in text
    assert "per-GPU figures derived, not submitted: 311,531 / 64 = 4,867.67" in text
    assert "419,778 / 72 = 5,830.25" in text
    assert "same submitter (CoreWeave) and platform (NVIDIA GB200)" in text
    with pytest.raises(CatalogError, match="give the earlier row first"):
        catalog_step(v61_row["id"], v60["id"])
    other = _one(catalog, model="gpt-oss-120b", submitter="CoreWeave", scenario="Server",
                 round="v6.1", accelerator="GB200")  # fmt: skip
    with pytest.raises(CatalogError, match="different benchmarks"):
        catalog_step(v60["id"], other["id"])


def test_step_from_catalog_dates_the_step_and_checks_the_scenario(catalog):
    v60, v61_row = seed_rows(catalog)
    scenario = load_scenario(SEED_SCENARIO)
    step, warnings = step_from_catalog(scenario, v60["id"], v61_row["id"])
    # the scenario starts 2026-04; v6.1 was published 2026-09-16: month 5, as the seed says
    assert scenario.start_date.isoformat() == "2026-04-01" and step["month"] == 5
    assert step["gain"] == pytest.approx(catalog_step(v60["id"], v61_row["id"]).gain)
    assert not any("base throughput" in w for w in warnings), "the seed's base is the v6.0 row"
    assert not any("the scenario's fleet is" in w for w in warnings)
    elsewhere = load_scenario(
        SEED_SCENARIO, {"fleet.hardware": "b200-sxm", "throughput.tokens_per_s_per_gpu": 5000.0}
    )
    _, warnings = step_from_catalog(elsewhere, v60["id"], v61_row["id"], when="12")
    assert any("the scenario's fleet is b200-sxm" in w for w in warnings)
    assert any("base throughput 5,000.0" in w for w in warnings)


def test_cli_gains_step_from_catalog(catalog, capsys):
    v60, v61_row = seed_rows(catalog)
    args = ["gains", str(SEED_SCENARIO), "--step-from-catalog", v60["id"], v61_row["id"]]
    assert main([*args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    (step,) = data["steps"]
    assert step["month"] == 5
    assert step["gain"] == pytest.approx(catalog_step(v60["id"], v61_row["id"]).gain)
    assert any("different system sizes: 64, 72" in w for w in data["warnings"])
    assert "warning: the compared rows have different system sizes" in captured.err
    # the step's value: the same as the scenario with that step typed in
    typed = ["gains", str(SEED_SCENARIO), "--step", f"5:{step['gain']!r}", "--format", "json"]
    assert main(typed) == 0
    assert json.loads(capsys.readouterr().out)["value"] == data["value"]
    assert main([*args, "--step-at", "2026-12", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"][0]["month"] == 8
    assert main(["gains", str(SEED_SCENARIO), "--step-from-catalog", v60["id"], "nope"]) == 3
    assert "no catalog row has id" in capsys.readouterr().err
    assert main(["gains", str(SEED_SCENARIO), "--step-at", "2026-12"]) == 3
    assert "give --step-from-catalog" in capsys.readouterr().err


# --- the MLPerf Endpoints figure, a vendor claim -------------------------------------------------


def claim_row(catalog) -> pd.Series:
    claims = catalog[catalog["kind"] == VENDOR_CLAIM]
    assert len(claims) == 1
    return claims.iloc[0]


def test_endpoints_figure_is_a_vendor_claim_with_its_source(catalog, shared_data):
    row = claim_row(catalog)
    figures = pd.read_csv(shared_data / "reference_figures.csv")
    seed = figures[figures["item"].str.contains("MLPerf Endpoints system throughput")].iloc[0]
    assert row["result"] == float(seed["value"]) == 441740
    assert "68 GPUs" in seed["unit"] and row["accelerator_count"] == 68
    assert "16384 concurrent" in seed["unit"] and row["concurrency"] == 16384
    assert "TTFT P95 5.77 s" in seed["unit"] and row["ttft_p95_ms"] == pytest.approx(5770)
    assert row["output_tokens_per_request_min"] == 2000
    assert seed["source"] in row["source"] and row["as_of"] == seed["as_of"]
    assert row["id"].startswith("claim-") and row["published"] == "2026-10"
    value, prov, warnings = catalog_throughput(row["id"])
    assert value == pytest.approx(441740 / 68) and round(value) == 6496
    assert prov["kind"] == VENDOR_CLAIM and prov["per_gpu_basis"].startswith("unverified")
    assert any(
        w.startswith("vendor claim, not a published result file")
        and "per-GPU 6,496 tokens/s unverified (announced system total 441,740 / 68 GPUs)" in w
        for w in warnings
    )
    assert not any(w.startswith("per-GPU figure derived") for w in warnings)
    curve = catalog_curve(row["id"])
    point = curve.points.iloc[0]
    assert point["ttft_s_p95"] == pytest.approx(5.77) and point["concurrency"] == 16384


def test_a_scenario_resting_on_the_claim_carries_its_warning(catalog, tmp_path):
    row = claim_row(catalog)
    text = SEED_SCENARIO.read_text().replace(
        "tokens_per_s_per_gpu = 4867.7",
        f'measured = {{ catalog_id = "{row["id"]}" }}\nslo = {{ latency_limits = {{ ttft_s_p95 = 6.0 }} }}',
    )
    path = tmp_path / "claim.toml"
    path.write_text(text)
    summary = project(load_scenario(path)).summary_records()[0]["summary"]
    warnings = summary["warnings"]
    assert any("vendor claim, not a published result file" in w for w in warnings), warnings
    assert any("per-GPU 6,496 tokens/s unverified" in w for w in warnings)
    fixed = project(load_scenario(SEED_SCENARIO, {"throughput.tokens_per_s_per_gpu": 441740 / 68}))
    tokens = fixed.summary_records()[0]["summary"]["tokens_total"]
    assert summary["tokens_total"] == pytest.approx(tokens, rel=1e-12), "the claim's per-GPU figure"
    # a TTFT P95 limit below the claim's 5.77 s: no operating point
    tight = text.replace("ttft_s_p95 = 6.0", "ttft_s_p95 = 5.0")
    path.write_text(tight)
    with pytest.raises(InputError, match="throughput.measured"):
        project(load_scenario(path))


def test_cli_benchmarks_flags_the_claim(catalog, capsys):
    row = claim_row(catalog)
    assert main(["benchmarks", "show", row["id"], "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["provenance"]["tool"] == "vendor claim (catalog)"
    assert any("vendor claim" in w for w in shown["warnings"])
    assert main(["benchmarks", "list", "--model", "deepseek-r1", "--scenario", "Endpoints"]) == 0
    captured = capsys.readouterr()
    assert row["id"] in captured.out and "C vendor claim" in captured.err
