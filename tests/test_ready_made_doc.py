"""docs/ready_made.md's headline table says what the engine prints now.

The "after" side of each cell (right of the arrow) is compared with `econ project` of that ready-made
scenario at the rounding the table shows, so the page cannot drift from the code unnoticed (it did
once: the capital stack's equity IRR read 6.7% where the engine gave 436.4%).
"""

from __future__ import annotations

import math
import re

import pytest

from econ import load_scenario, project
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "ready_made.md"
COLUMNS = (
    "npv_usd",
    "irr_project_annual",
    "irr_equity_annual",
    "breakeven_price_usd_per_mtok",
    "min_dscr",
    "debt_usd",
    "cost_usd_per_gpu_hour",
)


def _rows() -> dict[str, list[str]]:
    text = PAGE.read_text()
    table = text[text.index("| scenario | NPV [USD]") :].split("\n\n")[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = re.match(r"`([^`]+)`", cells[0]).group(1)
        rows[name] = [c.split("→")[-1].strip() for c in cells[1:]]
    return rows


def _parse(cell: str) -> tuple[float | None, float]:
    """A shown figure as (value, half its last digit): 2.47M, -163k, 8.1%, 0.3368, null."""
    if cell in ("null", "n/a"):
        return None, 0.0
    text = cell.replace("−", "-").replace(",", "")
    scale = {"k": 1e3, "M": 1e6, "%": 1e-2}.get(text[-1], 1.0)
    number = text.rstrip("kM%")
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number) * scale, 0.5 * 10.0**-decimals * scale


def test_the_page_lists_every_headline_scenario_once():
    rows = _rows()
    assert len(rows) >= 8
    assert all((ROOT / "models" / "scenarios" / f"{name}.toml").is_file() for name in rows)


@pytest.mark.parametrize("name", sorted(_rows()))
def test_each_after_figure_is_the_engines_at_the_shown_rounding(name):
    shown = _rows()[name]
    summary = project(load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")).summary
    for key, cell in zip(COLUMNS, shown, strict=True):
        value, half = _parse(cell)
        actual = summary[key].iloc[0]
        if value is None:
            assert actual is None or math.isnan(actual), f"{name} {key}: page null, engine {actual}"
        else:
            assert abs(actual - value) <= half * 1.000001, (
                f"{name} {key}: page {cell}, engine {actual}"
            )


STRUCTURAL = {"schema_version", "horizon_months", "capex.gpus_per_system", "fleet.gpus_per_rack"}
"""Numbers that describe the file or the hardware's packaging, not an economic input."""


@pytest.mark.parametrize("path", sorted((ROOT / "models" / "scenarios").glob("*.toml")), ids=str)
def test_every_number_a_ready_made_scenario_sets_has_a_source(path):
    """README: each ready-made scenario records the source of every input in [sources]. The
    workbook's provenance column flagged the loan tenor of four of them 'no source'."""
    from econ.workbook import _explicit_paths, _source_of, scenario_inputs

    scenario = load_scenario(path)
    explicit = _explicit_paths(scenario)
    unsourced = [
        name
        for name, value in scenario_inputs(scenario)
        if name in explicit
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and name not in STRUCTURAL
        and not _source_of(name, scenario.sources)
    ]
    assert unsourced == []


def _equity_roots(name: str) -> str:
    """The equity IRR roots the engine's warning lists for a ready-made scenario, as the docs
    write them (Unicode minus): '−43.96% (rises), −0.92% (falls)'."""
    warnings = project(load_scenario(ROOT / "models" / "scenarios" / f"{name}.toml")).warnings[0]
    (line,) = [w for w in warnings if w.startswith("equity cash flows change sign")]
    roots = re.search(r"NPV as the rate rises: ([^)]*\)(?:, [^)]*\))*)", line).group(1)
    return roots.replace("-", "−")


def test_the_prose_quotes_the_engines_irr_roots():
    # The worked examples of the IRR policy quote the roots the warnings list; they went stale
    # twice as the tax schedule changed.
    seed = _equity_roots("deepseek-r1-gb200-nvl72")
    assert f'"{seed}"' in (ROOT / "docs" / "methodology.md").read_text()
    stack = _equity_roots("deepseek-r1-gb200-nvl72-capital-stack")
    (low, _), (high, _) = (r.split(" ", 1) for r in stack.split(", "))
    page = " ".join((ROOT / "docs" / "methodology.md").read_text().split())
    assert f"NPV is zero at {low} (rising) and at {high} a year (falling)" in page
    ready = " ".join(PAGE.read_text().split())
    assert f"at {float(high[:-1]):.1f}% (falling)" in ready


def test_the_retrofit_sensitivity_is_the_engines():
    """The GB300 hall's NPV at other retrofit prices, as the page quotes them; in the rented hall
    the retrofit is written off by the horizon whatever its life."""
    text = " ".join(PAGE.read_text().split())
    quoted = re.search(
        r"\(NPV, million USD.*?\): (-?[\d.]+) at 50,000 USD per rack, (-?[\d.]+) at 250,000 and "
        r"(-?[\d.]+) at 500,000, each written off over the case's 5 years",
        text,
    )
    assert quoted, "the retrofit sensitivity sentence moved or changed shape"
    hall = ROOT / "models" / "scenarios" / "hall-10mw-gb300-nvl72-liquid.toml"
    cases = (
        {},
        {"facility.liquid_retrofit_usd_per_rack": 250_000.0},
        {"facility.liquid_retrofit_usd_per_rack": 500_000.0},
    )
    for said, changes in zip(quoted.groups(), cases, strict=True):
        for life in (None, 5.0, 50.0):
            given = changes if life is None else {**changes, "facility.retrofit_life_years": life}
            npv = project(load_scenario(hall, given), monthly=False).metrics["npv_usd"][0]
            assert f"{npv / 1e6:.2f}" == said, given


def test_the_opex_comparison_is_the_engines_under_the_settings_it_names():
    """The seed's NPV without and with its assumed staff and insurance, with its old debt
    (70% in level payments, not sized), at monthly and at quarterly tax payments, as quoted."""
    from econ.scenario import read_toml, validate_dict

    text = " ".join(PAGE.read_text().split())
    quoted = re.search(
        r"With the seed's old debt \(70% of capex in level payments, not sized\) and its income "
        r"tax paid monthly \(`financing.tax_payment = \"monthly\"`\), the same inputs took its NPV "
        r"from (\S+) to (\S+) USD; with the scenario's own quarterly tax payments \(the default\) "
        r"that comparison reads (\S+) to (\S+) USD",
        text,
    )
    assert quoted, "the opex comparison sentence moved or changed shape"
    seed = read_toml(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    assert seed["financing"]["debt_share"] == 0.7
    said = iter(quoted.groups())
    for tax_payment in ("monthly", "quarterly"):
        for opex in (False, True):
            data = {**seed, "opex": dict(seed["opex"]), "financing": dict(seed["financing"])}
            for sized in ("size_to_min_dscr", "max_ltv"):
                data["financing"].pop(sized, None)
            data["financing"].update(repayment="level_payment", tax_payment=tax_payment)
            if not opex:
                data["opex"].update(staff_usd_per_month=0.0, insurance_share_of_capex_annual=0.0)
            npv = project(validate_dict(data), monthly=False).metrics["npv_usd"][0]
            value, half = _parse(next(said))
            assert abs(npv - value) <= half, (tax_payment, opex, npv)
