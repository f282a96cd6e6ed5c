"""An outside provenance review (review 25): the copied figures are faithful, but the catalog's
gaps went unsaid, a [%] row of the memo printed a bare 1, reference figures were changed or added
without a word, untraceable citations stood behind the figures that decide the seed's NPV sign,
anonymous hosted pages behind market series, and a few source texts said more than they knew.
"""

from __future__ import annotations

import csv
import html as html_module
import json
import re

import pandas as pd
import pytest

from econ.cli import main
from tests.conftest import ROOT, SCENARIOS

BENCHMARKS = ROOT / "models" / "benchmarks"


def _words(text: str) -> str:
    return " ".join(text.split())


# --- 1. The MLPerf catalog is partial for v5.1 and v6.0, and says so ----------------------------


def _catalog_file() -> pd.DataFrame:
    return pd.read_csv(BENCHMARKS / "mlperf_inference_llm.csv")


def test_the_rounds_known_to_lack_results_are_the_ones_the_data_lacks():
    """AMD's blog posts report MI355X results in v5.1 (Llama 2 70B) and v6.0 (Llama 2 70B,
    gpt-oss-120b); the copied file has no MI355X row in either round and no AMD-submitted row in
    v6.0. Those two rounds, and only they, carry a known gap."""
    from econ.benchmarks import known_gaps

    rows = _catalog_file()
    for round_ in ("v5.1", "v6.0"):
        in_round = rows[rows["round"] == round_]
        assert not in_round["accelerator"].fillna("").str.contains("MI355X").any()
    assert "AMD" not in set(rows.loc[rows["round"] == "v6.0", "submitter"])
    gaps = known_gaps()
    assert sorted(gaps) == ["v5.1", "v6.0"]
    assert "rocm.blogs.amd.com/artificial-intelligence/mlperf-inference-v5.1" in gaps["v5.1"]
    assert "rocm.blogs.amd.com/artificial-intelligence/mlperf-inference-v6.0" in gaps["v6.0"]
    assert "no row AMD submitted" in gaps["v6.0"]


def test_a_list_of_no_row_in_a_partial_round_says_the_result_may_exist(capsys):
    assert main(["benchmarks", "list", "--round", "v6.0", "--accelerator", "MI355X"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("0 rows;")
    assert (
        "note: no row matches in v6.0, a round the catalog holds only in part (some submitters' "
        "results are missing): a result not listed may still have been published"
    ) in err
    assert "note: v6.0: " in err and "mlperf-inference-v6.0" in err
    # a list over every round names both partial rounds, with rows found or not
    assert main(["benchmarks", "list", "--accelerator", "MI355X", "--limit", "1"]) == 0
    assert "note: the catalog holds v5.1 and v6.0 only in part" in capsys.readouterr().err
    # a complete round says nothing of the kind
    assert main(["benchmarks", "list", "--round", "v6.1", "--limit", "1"]) == 0
    assert "only in part" not in capsys.readouterr().err
    # the JSON names the partial rounds a list spans
    assert main(["benchmarks", "list", "--round", "V5.1", "--format", "json", "--limit", "1"]) == 0
    assert list(json.loads(capsys.readouterr().out)["partial_rounds"]) == ["v5.1"]


def test_the_docs_say_the_catalog_is_partial_and_no_longer_state_a_gap_as_fact():
    readme = (ROOT / "README.md").read_text()
    assert "MLPerf catalog (v4.0 to v6.1, vendor claims; v5.1 and v6.0 lack some submitters'" in (
        readme
    )
    catalog_readme = _words((BENCHMARKS / "README.md").read_text())
    assert "**The catalog is not complete.**" in catalog_readme
    throughput = _words((ROOT / "docs" / "throughput.md").read_text())
    assert "It is not complete: v5.1 and v6.0 lack some submitters' results" in throughput
    simulator = _words((ROOT / "docs" / "simulator.md").read_text())
    assert "no round before" not in simulator
    assert "the catalog has no MI355X row before v6.1" in simulator
    assert "the catalog has no AMD gpt-oss-120b or DeepSeek-R1 row before v6.1" in simulator
    assert simulator.count("only in part") >= 2


# --- 6. `econ benchmarks list`: MLPerf's accelerator count, boards and mixed chips --------------


def _listed(capsys, *args: str) -> list[list[str]]:
    assert main(["benchmarks", "list", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    assert "Accel." in header and "GPUs" not in header
    return [dict(zip(header, re.split(r"\s{2,}", line.strip()), strict=True)) for line in lines[2:]]


def test_the_count_column_is_the_accelerators_and_a_board_of_two_gpus_is_flagged(capsys):
    """MAXSUN's Arc Pro B60 Dual: MLPerf counts 4 boards, the per-GPU figure divides by their 8
    GPUs (accelerators.csv: gpus_per_accelerator 2)."""
    boards = pd.read_csv(BENCHMARKS / "accelerators.csv").set_index("accelerator")
    source = _catalog_file()
    dual = source[source["accelerator"] == "[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo"]
    first = dual.iloc[0]
    per_board = boards.loc[first["accelerator"], "gpus_per_accelerator"]
    assert per_board == 2
    rows = _listed(capsys, "--accelerator", "B60 Dual", "--round", first["round"])
    shown = next(r for r in rows if float(r["result"].replace(",", "")) == first["result"])
    assert shown["Accel."] == f"{first['accelerator_count']:g}" == "4"
    per_gpu = first["result"] / (first["accelerator_count"] * per_board)
    assert shown["tok/s/GPU"] == f"{per_gpu:,.1f}"
    assert "B" in shown["flags"] and "M" not in shown["flags"]


@pytest.mark.parametrize(
    ("submitter", "accelerator"),
    [("MangoBoost", "MI300X 192GB HBM3 (x32)"), ("Cisco", "H200-SXM-141GB + AMD")],
)
def test_a_system_of_two_chips_is_flagged_in_the_list(capsys, submitter, accelerator):
    rows = _listed(capsys, "--submitter", submitter, "--accelerator", accelerator)
    assert rows and all("M" in r["flags"] for r in rows)
    # the one-chip rows of the same submitter are not
    rows = _listed(capsys, "--submitter", submitter, "--hardware", "mi325x" if
                   submitter == "MangoBoost" else "h200-sxm")  # fmt: skip
    assert rows and not any("M" in r["flags"] for r in rows)


def test_the_footer_says_what_the_columns_and_new_flags_mean(capsys):
    assert main(["benchmarks", "list", "--round", "v6.1", "--limit", "1"]) == 0
    err = capsys.readouterr().err
    assert "M mixed accelerators (tok/s/GPU averages two chips)" in err
    assert "B boards of several GPUs (tok/s/GPU divides by Accel. x GPUs per board)" in err
    assert "Accel.: accelerators as MLPerf counts them" in err


# --- 2. Every [%] row of Key assumptions is a percentage -------------------------------------------


def _memo_document(path):
    from econ.memo.build import build_memo
    from econ.memo.render import html
    from econ.scenario import load_scenario

    memo = build_memo(load_scenario(path), created="2026-01-01T00:00:00Z")
    return memo, html(memo)


def _value_of(scenario, path: str):
    node = scenario
    for part in path.split("."):
        node = getattr(node, part)
    return node


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_percent_row_of_key_assumptions_shows_its_fraction_as_a_percentage(path):
    """The MACRS memo's "Depreciation › Tax › Bonus share [%]" read "1" (its unit, "fraction of
    cost", escaped the value's percent rule while the label's caught it); "Insurance share of
    capex [%/year]" read "1.60%" without its "a year"."""
    memo, document = _memo_document(path)
    section = document.split('<section id="assumptions">', 1)[1].split("</section>", 1)[0]
    cells = re.findall(
        r'<tr><td title="([^"]*)">([^<]*)</td><td class="[^"]*">([^<]*)</td><td>([^<]*)</td>',
        section,
    )
    sources = {p: html_module.unescape(source) for p, _, _, source in cells}
    percent = [(p, html_module.unescape(label), value) for p, label, value, _ in cells
               if re.search(r"\[%(/year)?\]$", html_module.unescape(label))]  # fmt: skip
    assert percent, "no [%] row in Key assumptions"
    for field, label, value in percent:
        shown = re.fullmatch(r"(-?[\d,]+\.\d+)%( a year)?", value)
        assert shown, (label, value)
        assert bool(shown.group(2)) == label.endswith("[%/year]"), (label, value)
        expected = float(_value_of(memo.scenario, field)) * 100
        assert float(shown.group(1).replace(",", "")) == pytest.approx(expected, abs=5e-5), label
    if path.stem.endswith("-macrs"):
        rows = {label: value for _, label, value in percent}
        assert rows["Depreciation › Tax › Bonus share [%]"] == "100.00%"
    # 7. the covenant's test window never carries the DSCR floor's source (the capital stack
    # cited the whole section with a source on the floor alone)
    window = sources.get("financing.covenants.test_months")
    if window is not None:
        assert "floor" not in window.lower(), window


# --- 4. Staff and insurance: econ's own assumptions, which decide the seed's NPV sign -----------


def test_no_ready_made_scenario_cites_the_untraceable_peer_model():
    from econ.scenario import load_scenario

    for path in SCENARIOS:
        text = path.read_text()
        assert "GPUCloudScenario" not in text and "peer model" not in text, path.name
        sources = load_scenario(path).sources
        staff = sources["opex.staff_usd_per_month"]
        insurance = sources["opex.insurance_share_of_capex_annual"]
        for source in (staff, insurance):
            assert source.startswith("assumption of econ's own (no published source backs it)")
        assert "4 x 150,000 / 1,000 / 12 = USD 50 per GPU-month" in staff
        assert "insurance 1.6% of capex a year" in insurance and "x 0.016 / 12" in insurance


def test_the_arithmetic_the_sources_state_is_the_scenario_s_own():
    from econ import load_scenario, project

    for path in SCENARIOS:
        scenario = load_scenario(path)
        staff = scenario.sources["opex.staff_usd_per_month"]
        gpus, monthly = re.search(r"; ([\d,]+) GPUs x 50 = USD ([\d,]+) a month", staff).groups()
        assert 4 * 150_000 / 1_000 / 12 == 50.0
        assert int(gpus.replace(",", "")) * 50 == float(monthly.replace(",", ""))
        assert scenario.opex.staff_usd_per_month == float(monthly.replace(",", ""))
        assert scenario.opex.insurance_share_of_capex_annual == 0.016
    seed = SCENARIOS[[p.stem for p in SCENARIOS].index("deepseek-r1-gb200-nvl72")]
    scenario = load_scenario(seed)
    said = re.search(r"the rack's ([\d,]+) USD: ([\d,.]+) USD a month",
                     scenario.sources["opex.insurance_share_of_capex_annual"])  # fmt: skip
    result = project(scenario)
    capex = result.metrics["capex_usd_total"][0]
    assert float(said.group(1).replace(",", "")) == capex
    assert float(said.group(2).replace(",", "")) == round(capex * 0.016 / 12, 2)
    # the first month in service pays staff and that twelfth, and nothing else of opex
    first = result.monthly.reset_index().set_index("month").loc[1, "opex_usd"]
    assert first == pytest.approx(scenario.opex.staff_usd_per_month + capex * 0.016 / 12)


def test_ready_made_md_gives_the_seed_s_npv_with_and_without_them_as_the_engine_does():
    from econ import load_scenario, project

    text = _words((ROOT / "docs" / "ready_made.md").read_text())
    quoted = re.search(
        r"The seed as shipped has an NPV of (\S+) USD; without staff \(`--set "
        r"opex.staff_usd_per_month=0`\) it is (\S+) USD, without insurance \(`--set "
        r"opex.insurance_share_of_capex_annual=0`\) (\S+) USD, and without both (\S+) USD",
        text,
    )
    assert quoted, "the NPV-sign sentence moved or changed shape"
    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    cases = (
        {},
        {"opex.staff_usd_per_month": 0.0},
        {"opex.insurance_share_of_capex_annual": 0.0},
        {"opex.staff_usd_per_month": 0.0, "opex.insurance_share_of_capex_annual": 0.0},
    )
    npvs = []
    for said, changes in zip(quoted.groups(), cases, strict=True):
        npv = project(load_scenario(seed, changes), monthly=False).metrics["npv_usd"][0]
        assert float(said.replace("−", "-").replace(",", "")) == round(npv), (changes, npv)
        npvs.append(npv)
    assert npvs[0] < 0 < npvs[3]  # the sign they decide
    assert "**These two unsourced inputs decide the sign of the seed's NPV.**" in text


# --- 3. reference_figures.csv: every row that differs from the reference data says so ----------

FIGURES = ROOT / "models" / "reference_figures.csv"


def _figure_rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_row_changed_or_added_in_econ_is_flagged_in_the_file(shared_data):
    shared = {tuple(r.values()) for r in _figure_rows(shared_data / "reference_figures.csv")}
    shared_items = {r["item"] for r in _figure_rows(shared_data / "reference_figures.csv")}
    differing = [r for r in _figure_rows(FIGURES) if tuple(r.values()) not in shared]
    assert len(differing) == 5  # review 26 added NVIDIA's GB200 scalable unit design power
    for row in differing:
        flag = "changed in econ" if row["item"] in shared_items else "added in econ"
        assert flag in row["source"], row["item"]


def test_the_added_rows_name_the_page_they_come_from():
    rows = {r["item"]: r for r in _figure_rows(FIGURES)}
    added = [r for r in rows.values() if "added in econ" in r["source"]]
    assert len(added) == 4
    for row in added:
        pages = re.findall(r"docs\.nvidia\.com/dgx-superpod/\S+?\.html", row["source"])
        assert pages, row["item"]  # a page, not only a domain
        assert row["quality"] == "primary"
    changed = rows["GB200 NVL72 rack power"]
    assert "changed in econ" in changed["source"] and changed["quality"] == "secondary"
    # the models README lists each of them
    readme = _words((ROOT / "models" / "README.md").read_text())
    for item in (
        "GB200 NVL72 rack power, 120 kW",
        "DGX SuperPOD B300 (XDR) air-cooled rack",
        "Compute-fabric links per GPU, 1 + 1",
        "Cooling of a DGX GB200 rack, hybrid",
        "DGX SuperPOD GB200 scalable unit thermal design power, 1.2 MW",
    ):
        assert item in readme, item


def test_the_fabric_row_s_links_per_gpu_are_its_cable_counts_over_its_gpus():
    row = next(r for r in _figure_rows(FIGURES) if r["item"].startswith("Compute-fabric links"))
    counts = re.findall(r"(\d+) GPUs, (\d+)(?: node-leaf and | \+ )(\d+)", row["source"])
    assert len(counts) == 2  # B200 and B300 XDR
    for gpus, node_leaf, leaf_spine in counts:
        assert int(node_leaf) / int(gpus) == int(leaf_spine) / int(gpus) == 1
    assert row["value"] == "1 + 1"


# --- 5. Market series that rest on anonymously hosted pages say so -------------------------------

HOSTED = ("pages.dev", "theinformationmachine.fyi")


@pytest.mark.parametrize("name", ["rental_index.csv", "resale_index.csv"])
def test_every_market_point_from_an_anonymous_page_is_marked_unverified(name):
    rows = list(csv.DictReader(open(ROOT / "models" / "market" / name, newline="")))
    hosted = [r for r in rows if any(h in r["source"] for h in HOSTED)]
    assert hosted
    for row in rows:
        marked = "UNVERIFIED: rests on" in row["source"]
        assert marked == (row in hosted), row["source"]


def test_market_md_names_each_unverified_series_and_counts_its_points():
    from econ import rental_index, resale_index

    text = (ROOT / "docs" / "market.md").read_text()
    table = text[text.index("**Rows that rest on unverified pages.**") :].split("\n\n")[1]
    rental = [p for p in rental_index.load_catalog() if any(h in p.source for h in HOSTED)]
    resale = [p for p in resale_index.load_catalog() if any(h in p.source for h in HOSTED)]
    assert len(rental) == 10 and "Ten rental points" in text
    for series in {p.series for p in rental} | {p.series for p in resale}:
        assert f"`{series}`" in table, series
    # the table's counts are the points marked in the files: the rental rows' "(7: ...)", "(2)",
    # "(1)", the resale row's "all 7"
    counted = sum(int(n) for n in re.findall(r"\((\d+)(?::[^)]*)?\)", table))
    assert counted == len(rental)
    assert int(re.search(r"\| all (\d+) \|", table)[1]) == len(resale)


# --- 8. Source texts that said more than they knew ------------------------------------------------


def _sources(stem: str) -> dict[str, str]:
    from econ.scenario import load_scenario

    return load_scenario(ROOT / "models" / "scenarios" / f"{stem}.toml").sources


SEED_FAMILY = ("deepseek-r1-gb200-nvl72", "deepseek-r1-gb200-nvl72-macrs",
               "deepseek-r1-gb200-nvl72-capital-stack")  # fmt: skip


@pytest.mark.parametrize("stem", SEED_FAMILY)
def test_the_seed_s_gpu_count_is_not_said_to_be_the_mlperf_entry_s(stem):
    """MLPerf's CoreWeave v6.0 entry, the throughput's source, ran 64 GPUs, not a 72-GPU rack."""
    catalog = _catalog_file()
    entry = catalog[(catalog["round"] == "v6.0") & (catalog["submitter"] == "CoreWeave")
                    & (catalog["benchmark"] == "deepseek-r1") & (catalog["scenario"] == "Server")
                    & catalog["system_name"].str.contains("GB200")]  # fmt: skip
    assert entry["accelerator_count"].tolist() == [64.0]
    source = _sources(stem)["fleet.gpu_count"]
    assert "the unit MLPerf's CoreWeave entry" not in source
    assert "v6.0 entry, the throughput's source, ran 64" in source


def test_each_networking_source_states_the_arithmetic_of_its_figure():
    """The TCO sheet gives 8.8-12.8% of cluster capex; the scenarios take about 10% of the price
    per GPU. Each says so, with the figures its scenario holds."""
    from econ.scenario import load_scenario

    checked = 0
    for path in SCENARIOS:
        scenario = load_scenario(path)
        source = scenario.sources["capex.networking_usd_per_gpu"]
        if "8.8-12.8%" not in source:
            continue  # (the H200 cases derive theirs from the sheet's all-in figure)
        assert "not of cluster capex" in source
        capex = scenario.capex
        per_gpu = capex.system_price_usd / capex.gpus_per_system
        said = re.search(r"= ([\d,]+) USD x 10% = ([\d,]+), (?:rounded to|taken as) ([\d,]+)",
                         source)  # fmt: skip
        number = [float(x.replace(",", "")) for x in said.groups()]
        assert number == [round(per_gpu), round(per_gpu * 0.1), capex.networking_usd_per_gpu]
        total = per_gpu + capex.networking_usd_per_gpu + capex.installation_usd_per_gpu
        share = re.search(r"that is ([\d.]+)% of the ([\d,]+) USD per GPU", source).groups()
        assert float(share[0]) == round(100 * capex.networking_usd_per_gpu / total, 1)
        assert float(share[1].replace(",", "")) == round(total)
        checked += 1
    assert checked == 6  # the seed and its two twins, the two B200 cases, the GB300 hall


def test_figures_read_through_a_fork_name_the_fork_as_their_catalog_rows_do():
    catalog = _catalog_file()
    forked = catalog[catalog["source"].str.contains("gbeezybez", na=False)]
    rows = {
        "6.0-0015": "deepseek-r1-gb200-nvl72",  # CoreWeave GB200 NVL72, deepseek-r1 Server
        "6.0-0078": "h200-fleet-gb300-refresh",  # NVIDIA GB300 NVL72, llama2-70b-99 Server
    }
    for row, stem in rows.items():
        assert forked["source"].str.contains(f"[{row}]", regex=False).any()
        key = (
            "vintages" if stem == "h200-fleet-gb300-refresh" else "throughput.tokens_per_s_per_gpu"
        )
        source = _sources(stem)[key]
        assert row in source and "github.com/gbeezybez/inference_results_v6.0" in source
    for stem in SEED_FAMILY:
        assert "gbeezybez" in _sources(stem)["throughput.tokens_per_s_per_gpu"]


def test_a_scenario_without_a_step_does_not_source_a_gain_beyond_one():
    from econ.scenario import load_scenario

    for path in SCENARIOS:
        scenario = load_scenario(path)
        source = scenario.sources.get("throughput.gain_rate_annual", "")
        if not scenario.throughput.steps:
            assert "beyond the" not in source and "measured step in" not in source, path.name


def test_the_llm_catalog_says_why_its_notes_say_mean_where_the_reference_data_says_median():
    text = (ROOT / "models" / "llms.toml").read_text()
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    assert 'the notes\' "mean ~N output tokens per MLPerf sample" reads "median ~N"' in header
    assert "the median over submissions\n# of each run's mean" in header
    assert "median ~" not in text.replace('"median ~N"', "")


def test_the_calibration_rows_say_their_scenario_column_is_the_normalized_one():
    rows = (ROOT / "models" / "calibration" / "mlperf_rows.csv").read_text().splitlines()
    assert "its scenario_normalized is the scenario column here" in rows[0]
    assert "llama2-70b-interactive rows, submitted as Server, read Interactive" in rows[0]
    shared = _catalog_file()
    interactive = shared[shared["benchmark_family"] == "llama2-70b-interactive"]
    assert set(interactive["scenario"]) == {"Server", "Offline"}  # as submitted
    copied = pd.read_csv(ROOT / "models" / "calibration" / "mlperf_rows.csv", skiprows=1)
    copied = copied[copied["benchmark_family"] == "llama2-70b-interactive"]
    assert len(copied) and set(copied["scenario"]) == {"Interactive"}


def test_hardware_list_labels_its_memory_column_usable(capsys):
    from econ.hardware import get_hardware

    assert main(["hardware", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    assert "HBM GB usable" in header
    b300 = dict(zip(header, re.split(r"\s{2,}", next(x for x in lines if x.startswith("b300-sxm"))
                                     .strip()), strict=False))  # fmt: skip
    hw = get_hardware("b300-sxm")
    assert hw.hbm_gb_usable != hw.hbm_gb_nominal
    assert b300["HBM GB usable"] == f"{hw.hbm_gb_usable:g}"
