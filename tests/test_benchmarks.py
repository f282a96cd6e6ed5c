"""The MLPerf catalog: the shipped copy, derived per-GPU figures recomputed from system totals,
the provenance checks (silicon, availability, derived, open division, 99/99.9 duplicates, system
sizes), catalog queries a scenario can take its throughput from, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from econ.benchmarks import (
    CatalogError,
    accelerators,
    benchmarks_dir,
    catalog_curve,
    catalog_throughput,
    compare_rows,
    filter_catalog,
    generation_of,
    get_row,
    load_catalog,
    row_checks,
    row_id,
)
from econ.cli import main
from econ.throughput.operating_point import operating_point

SEED = {
    "model": "deepseek-r1",
    "submitter": "CoreWeave",
    "accelerator": "GB200",
    "scenario": "Server",
    "round": "v6.0",
}


@pytest.fixture(scope="module")
def catalog() -> pd.DataFrame:
    return load_catalog()


def test_catalog_is_an_exact_copy_of_the_reference_data(shared_data: Path):
    for name in (
        "mlperf_inference_llm.csv",
        "mlperf_inference_v6.1.csv",
        "mlperf_latency_constraints.csv",
    ):
        assert (benchmarks_dir() / name).read_bytes() == (shared_data / name).read_bytes()


def test_every_source_column_is_kept(shared_data: Path, catalog):
    source = pd.read_csv(shared_data / "mlperf_inference_llm.csv")
    assert list(catalog.columns[1 : 1 + len(source.columns)]) == list(source.columns)
    rows = catalog[catalog["catalog_file"] == "mlperf_inference_llm.csv"]
    pd.testing.assert_frame_equal(
        rows[source.columns].reset_index(drop=True), source, check_dtype=False
    )


def test_derived_per_gpu_figures_recomputed_from_system_totals(catalog):
    rows = catalog[
        (catalog["metric_unit"] == "tokens/s")
        & (catalog["accelerator_count"] > 0)
        & (catalog["catalog_file"] == "mlperf_inference_llm.csv")
    ]
    assert len(rows) > 1000
    recomputed = rows["result"] / rows["accelerator_count"]
    # a dual-GPU board (accelerators.csv) is one accelerator and two GPUs
    gpus = rows["accelerator_count"] * rows["gpus_per_accelerator"]
    assert np.allclose(rows["tokens_per_s_per_gpu"], rows["result"] / gpus, rtol=0, atol=0)
    assert (rows["gpus_per_accelerator"] == 1).sum() == len(rows) - 14
    listed = rows["per_accelerator"]
    # the source lists per_accelerator rounded to 4 decimals
    assert (np.abs(listed - recomputed) <= 5e-5 + 1e-9).all(), "the source per_accelerator agrees"
    others = catalog[catalog["metric_unit"] != "tokens/s"]
    assert others["tokens_per_s_per_gpu"].isna().all(), "samples/s rows get no token figure"


def test_seed_case_row(catalog):
    # DESIGN.md §8: MLPerf v6.0, CoreWeave, 64 GPUs, Server 311,531 tok/s = 4,867.7 tok/s/GPU
    value, prov, warnings = catalog_throughput(SEED, hardware="gb200-nvl72")
    assert value == pytest.approx(311531 / 64)
    assert round(value, 1) == 4867.7
    assert prov["accelerator_count"] == 64 and prov["availability"] == "available"
    assert prov["per_gpu_basis"].startswith("derived")
    assert any("derived, not submitted: 311,531 tokens/s system total / 64" in w for w in warnings)
    assert any("64 GPUs is not a whole number of 72-GPU NVL72 racks" in w for w in warnings)
    assert not any("silicon mismatch" in w for w in warnings)
    by_id = catalog_throughput(prov["id"], hardware="gb200-nvl72")
    assert by_id[0] == value and by_id[1] == prov
    assert catalog_throughput(prov["id"][:9])[0] == value, "a unique id prefix is enough"


def test_silicon_generation_check(catalog):
    gb300 = filter_catalog(
        catalog,
        model="deepseek-r1",
        accelerator="GB300",
        gpus=72,
        submitter="Nebius",
        scenario="Server",
    )
    checks = row_checks(gb300.iloc[0], hardware="gb200-nvl72")
    assert any("silicon mismatch" in c and "Blackwell Ultra" in c for c in checks)
    b200 = filter_catalog(
        catalog,
        model="deepseek-r1",
        accelerator="B200",
        submitter="Dell",
        round="v6.0",
        scenario="Server",
    )
    checks = row_checks(b200.iloc[0], hardware="gb200-nvl72")
    assert any("same generation (Blackwell) but a different system" in c for c in checks)
    assert generation_of("gb200-nvl72") == "Blackwell"
    assert generation_of("no-such-gpu") == ""


def test_every_accelerator_has_a_generation_and_known_hardware_keys(shared_data: Path, catalog):
    table = accelerators()
    names = set(catalog["accelerator"].dropna())
    assert names <= set(table["accelerator"]), names - set(table["accelerator"])
    assert table["generation"].notna().all() and table["source"].notna().all()
    specs = pd.read_csv(shared_data / "hardware_specs.csv")
    keys = set(table["hardware_key"].dropna())
    assert keys == set(specs["key"]), "every mapped key is a hardware_specs key and vice versa"
    for key, generation in zip(specs["key"], specs["generation"], strict=True):
        assert generation_of(key) == generation


def test_preview_open_inferred_and_offline_flags(catalog):
    preview = catalog[catalog["availability"] == "preview"].iloc[0]
    assert any(c.startswith("Preview:") for c in row_checks(preview))
    opened = catalog[
        (catalog["division"] == "open") & catalog["notes"].str.contains("substitution", na=False)
    ].iloc[0]
    checks = row_checks(opened)
    assert any("open division" in c and "model substitution" in c for c in checks)
    inferred = catalog[catalog["inferred_flag"] == 1].iloc[0]
    assert any("inferred" in c for c in row_checks(inferred))
    offline = catalog[catalog["scenario_normalized"] == "Offline"].iloc[0]
    assert any("Offline scenario" in c for c in row_checks(offline))


def test_99_and_999_rows_of_one_run(catalog):
    dups = catalog[catalog["duplicate_of"] != ""]
    assert len(dups) > 100
    for row in dups.head(20).itertuples():
        base = get_row(row.duplicate_of, catalog)
        assert base["result"] == row.result and base["accuracy_target"] == 99.0
        assert row.accuracy_target == 99.9 and base["system_name"] == row.system_name
    row = dups.iloc[0]
    assert any(
        f"repeats the result of the 99 row {row['duplicate_of']}" in c for c in row_checks(row)
    )
    base = get_row(row["duplicate_of"], catalog)
    assert any("repeats this result" in c for c in row_checks(base, catalog=catalog))


def test_system_size_checks(catalog):
    nebius = filter_catalog(
        catalog,
        submitter="Nebius",
        accelerator="GB300",
        gpus=8,
        model="deepseek-r1",
        scenario="Server",
    )
    assert any(
        "system name says 4 accelerators but the submission counts 8" in c
        for c in row_checks(nebius.iloc[0])
    )
    coreweave = catalog_throughput(SEED)[1]["id"]
    nvidia = filter_catalog(
        catalog,
        model="deepseek-r1",
        submitter="NVIDIA",
        accelerator="GB200",
        round="v6.0",
        scenario="Server",
    )
    caveats = compare_rows([coreweave, nvidia["id"].iloc[0]])
    assert any("different system sizes: 64, 72" in c for c in caveats)
    assert any("different submitters" in c for c in caveats)


def test_unusable_rows_and_bad_queries(catalog):
    samples = catalog[catalog["metric_unit"] == "samples/s"].iloc[0]
    with pytest.raises(CatalogError, match="not tokens/s"):
        catalog_throughput(samples["id"])
    query = {"model": "deepseek-r1", "accelerator": "GB200", "scenario": "Server"}
    hits = filter_catalog(catalog, **query)
    hits = hits[hits["duplicate_of"] == ""]
    assert len(hits) > 4, "v5.1, v6.0 and v6.1 rows"
    with pytest.raises(CatalogError, match=f"matches {len(hits)} rows; expected one"):
        catalog_throughput(query)
    with pytest.raises(CatalogError, match="matches no row"):
        catalog_throughput({"model": "deepseek-r1", "accelerator": "L40S"})
    with pytest.raises(
        CatalogError, match="round 'v9.9' is not in the catalog; valid: .*v4.0.*v6.1"
    ):
        filter_catalog(catalog, round="v9.9")
    with pytest.raises(CatalogError, match="unknown filter"):
        filter_catalog(catalog, colour="red")
    with pytest.raises(CatalogError, match="no catalog row has id"):
        get_row("v6.0-zzzzzzzz", catalog)
    with pytest.raises(CatalogError, match="matches .* rows"):
        get_row("v6.0-", catalog)
    with pytest.raises(CatalogError, match="expected a row id or a mapping"):
        catalog_throughput(42)


def test_ids_are_unique_and_stable(catalog):
    assert catalog["id"].is_unique
    for record in catalog.head(50).to_dict("records"):
        assert row_id(record) == record["id"]
    shuffled = catalog.sample(frac=1.0, random_state=1)
    assert sorted(row_id(r) for r in shuffled.to_dict("records")) == sorted(catalog["id"])


def test_catalog_row_as_a_curve_meets_its_own_slo():
    curve = catalog_curve(SEED)
    point = operating_point(curve, ttft_p99_s=2.0, tpot_p99_s=0.080)
    assert point.tokens_per_s_per_gpu == pytest.approx(311531 / 64)
    assert point.clamped, "one measured point: looser limits cannot raise it"
    assert any("derived, not submitted" in w for w in point.warnings)
    checked = catalog_curve(SEED, hardware="gb300-nvl72")
    assert any("silicon mismatch" in w for w in checked.warnings)


def test_cli_list_show(capsys):
    args = [
        "benchmarks",
        "list",
        "--model",
        "deepseek-r1",
        "--accelerator",
        "gb200",
        "--scenario",
        "Server",
    ]
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = filter_catalog(model="deepseek-r1", accelerator="gb200", scenario="Server")
    assert data["count"] == len(expected) > 4
    assert {r["submitter"] for r in data["rows"]} == set(expected["submitter"])
    assert {"NVIDIA", "CoreWeave", "Google"} <= set(expected["submitter"])
    assert main(args) == 0
    assert "v6.0" in capsys.readouterr().out
    assert main([*args, "--format", "csv"]) == 0
    assert len(pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))) == len(expected)
    row = data["rows"][0]["id"]
    assert main(["benchmarks", "show", row, "--hardware", "gb300-nvl72", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert any("silicon mismatch" in w for w in shown["warnings"])
    assert main(["benchmarks", "show", row]) == 0
    assert "check: per-GPU figure derived" in capsys.readouterr().out
    assert main(["benchmarks", "show", "nope"]) == 3
    assert "no catalog row has id" in capsys.readouterr().err
    assert main(["benchmarks", "list", "--round", "v1"]) == 3
    assert "v4.0, v4.1" in capsys.readouterr().err


def test_the_list_shows_every_digit_of_a_large_result_and_no_nan(capsys):
    """Found by a data review: 1,598,510 tokens/s printed as 1.59851e+06, and a row without an
    availability as "nan"."""
    from econ.cli import main
    from econ.labels import plain_number

    assert plain_number(1_598_510.0) == "1,598,510"
    assert plain_number(2631.93) == "2,631.93" and plain_number(0.1075) == "0.1075"
    assert main(["benchmarks", "list", "--model", "deepseek-r1", "--scenario", "Server"]) == 0
    out = capsys.readouterr().out
    assert "1,598,510" in out and "e+0" not in out
    assert " nan " not in out


def test_a_hardware_key_the_catalog_does_not_know_is_refused(catalog, capsys):
    """A CLI review: `--hardware gb300` (not a key) listed 0 rows with exit 0, where a typo in
    --round lists the valid values; `show ID --hardware nope` gave only a note."""
    from econ.benchmarks import check_hardware_key

    with pytest.raises(CatalogError, match="hardware 'gb300' is not a hardware key.*gb300-nvl72"):
        check_hardware_key("gb300", catalog)
    check_hardware_key("GB300-NVL72", catalog)  # case aside, a key
    # the app's filter on a scenario's own hardware key lists no row rather than failing
    assert filter_catalog(catalog, hardware="my-own-asic").empty
    assert main(["benchmarks", "list", "--hardware", "gb300"]) == 3
    assert "valid: b200-sxm" in capsys.readouterr().err
    row = catalog["id"].iloc[0]
    assert main(["benchmarks", "show", row, "--hardware", "nope"]) == 3
    assert "hardware 'nope' is not a hardware key" in capsys.readouterr().err


def test_a_vendor_claims_division_is_a_dash_and_one_row_is_singular(capsys):
    # The Endpoints claim has no division: the table printed "nan", and "1 rows".
    assert main(["benchmarks", "list", "--round", "MLPerf Endpoints"]) == 0
    captured = capsys.readouterr()
    claim = [line for line in captured.out.splitlines() if line.startswith("claim-")]
    assert len(claim) == 1 and " nan " not in claim[0] and "CoreWeave    -" in claim[0]
    assert captured.err.startswith("1 row;")


def test_an_nvl4_system_is_named_as_one_not_as_a_partial_rack(catalog):
    """A CLI review: Lambda's 4x GB300 (GB300 NVL4) and the GB200 NVL4 rows are catalogued under
    the NVL72 keys for their silicon, and the check called 4 GPUs "not a whole number of 72-GPU
    NVL72 racks"."""
    nvl4 = catalog[catalog["system_name"].str.contains("NVL4")]
    assert set(nvl4["hardware_key"]) == {"gb200-nvl72", "gb300-nvl72"} and len(nvl4) >= 8
    for _, row in nvl4.iterrows():
        checks = row_checks(row)
        assert any(c.startswith("an NVL4 system (4 GPUs in one NVLink domain)") for c in checks)
        assert not any("not a whole number of 72-GPU" in c for c in checks)
