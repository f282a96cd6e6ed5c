"""The warnings' texts, string for string, against a recorded file.

Each ready-made scenario runs as a batch whose rows vary the inputs that fire most warnings (no
tokens, no IRR or several roots, no payback or break-even, no debt, sized debt or none, covenant
breaches, DSCR and LLCR below 1, interest added to the loan, a loan larger than its collateral
or settled at the end, contracted power exceeded, GPUs sold early or with debt owed, EBITDA
negative late, ...), so that a change to how the warnings are formatted, or to the reasons
econ.undefined adds for null keys, shows here as a changed line.

Regenerate after an intended change with `python tests/data/make_golden.py` and review the diff.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import ScenarioBatch, load_scenario, project
from econ.analysis.runner import WARNING_SEPARATOR, evaluate
from tests.conftest import ROOT, SCENARIOS

GOLDEN = ROOT / "tests" / "data" / "golden" / "warnings_batches.json"
ROWS = 16
"""Rows per scenario's batch."""


def varied_columns(scenario, n: int = ROWS, seed: int = 3) -> dict[str, np.ndarray]:
    """Inputs of n rows drawn to fire many warnings (the same on every run)."""
    rng = np.random.default_rng(seed)
    horizon = scenario.horizon_months
    columns = {
        "market.price_usd_per_mtok": rng.choice([0.0, 0.05, 0.2, 0.5, 1.0, 3.0], n)
        * rng.uniform(0.5, 1.5, n),
        "market.price_decline_annual": rng.uniform(0.0, 0.8, n),
        "market.contract_usd_per_gpu_hour": rng.uniform(0.5, 6.0, n),
        "market.contract_share": rng.choice([0.0, 0.5, 1.0], n),
        "utilization.share": np.where(rng.random(n) < 0.1, 0.0, rng.uniform(0.05, 1.0, n)),
        "throughput.tokens_per_s_per_gpu": rng.uniform(100, 9000, n),
        "power.price_usd_per_kwh": rng.uniform(0.0, 0.5, n),
        "opex.staff_usd_per_month": rng.uniform(0, 200_000, n),
        "facility.contracted_kw": rng.choice([np.nan, 50.0, 150.0, 20_000.0], n),
        "depreciation.life_years": rng.choice([2.0, 4.0, 6.0, 10.0], n),
        "fleet.retire_month": rng.choice([horizon // 3, horizon // 2, horizon], n),
        "financing.debt_share": rng.choice([0.0, 0.3, 0.7, 0.97, 1.0], n),
        "financing.debt_rate_annual": rng.uniform(0.0, 0.3, n),
        "financing.debt_term_months": rng.choice([12, 36, 60, 84, 120], n),
        "financing.size_to_min_dscr": rng.choice([np.nan, 0.8, 1.3, 2.0], n),
        "financing.max_ltv": rng.choice([np.nan, 0.05, 0.5, 0.9], n),
        "financing.discount_rate_annual": rng.uniform(0.0, 0.3, n),
        "financing.covenants.dscr_floor": rng.choice([np.nan, 1.2, 2.0], n),
    }
    if scenario.financing.tranches:  # the tranches give the debt and its rates
        del columns["financing.debt_share"], columns["financing.debt_rate_annual"]
    return columns


NAN = np.nan
CHOSEN = {
    # Debt sized to nothing by the LTV limit on book value: write-downs bring it to 0 in month 50
    # of the 60-month loan (rows 0, 3), or the book life ends before the loan does (rows 1, 2,
    # 4: a 4-year life, written down or not); covenant floors that the ratios miss by less than
    # their usual decimals show (row 5: DSCR 1.363797 below a 1.3638 floor).
    "deepseek-r1-gb200-nvl72 sized on written-down GPUs": (
        "deepseek-r1-gb200-nvl72",
        {
            "depreciation.impairment.price_drop_threshold": np.array(
                [0.2, 0.2, NAN, 0.2, 0.5, NAN]
            ),
            "depreciation.life_years": np.array([6.0, 4.0, 4.0, 6.0, 4.0, 6.0]),
            "financing.debt_term_months": np.array([60, 60, 60, 84, 60, 60]),
            "financing.covenants.dscr_floor": np.array([NAN, NAN, NAN, NAN, NAN, 1.3638]),
            "financing.covenants.llcr_floor": np.array([NAN, NAN, NAN, NAN, NAN, 1.3638]),
        },
    ),
}
"""Batches of chosen rows, each firing a warning the varied batches miss: name -> (ready-made
scenario, columns)."""


def warnings_of_batches() -> dict[str, list[list[str]]]:
    """Each ready-made scenario's batch, then each CHOSEN batch: its rows' warnings."""
    out = {}
    for path in SCENARIOS:
        scenario = load_scenario(path)
        batch = ScenarioBatch.repeat(scenario, ROWS, varied_columns(scenario))
        out[path.stem] = project(batch, monthly=False).warnings
    for name, (stem, columns) in CHOSEN.items():
        scenario = load_scenario(ROOT / "models" / "scenarios" / f"{stem}.toml")
        batch = ScenarioBatch.repeat(scenario, len(next(iter(columns.values()))), columns)
        out[name] = project(batch, monthly=False).warnings
    return out


def recorded(warnings: dict[str, list[list[str]]]) -> dict:
    """The golden file's content: each distinct text once, and per row the indices of its own."""
    texts = sorted({text for rows in warnings.values() for row in rows for text in row})
    index = {text: i for i, text in enumerate(texts)}
    return {
        "texts": texts,
        "rows": {
            name: [[index[t] for t in row] for row in rows] for name, rows in warnings.items()
        },
    }


@pytest.fixture(scope="module")
def golden() -> dict[str, list[list[str]]]:
    data = json.loads(GOLDEN.read_text())
    texts = data["texts"]
    return {name: [[texts[i] for i in row] for row in rows] for name, rows in data["rows"].items()}


def test_warnings_of_varied_batches_read_as_recorded(golden):
    found = warnings_of_batches()
    assert found.keys() == golden.keys()
    for name, rows in found.items():
        for row, (got, expected) in enumerate(zip(rows, golden[name], strict=True)):
            assert got == expected, (name, row)


def test_the_recorded_batches_fire_many_different_warnings(golden):
    """The recorded file covers the warnings it is meant to (a regenerated file that lost most
    of them would compare nothing)."""
    openings = {text.split(" ")[0] for rows in golden.values() for row in rows for text in row}
    texts = {text for rows in golden.values() for row in rows for text in row}
    assert len(texts) > 200 and len(openings) > 20


def test_a_sweep_keeps_each_rows_warnings_as_the_projection_gives_them(golden):
    """A sweep's `warnings` cell holds the row's warnings, one a line, as formatted above."""
    path = SCENARIOS[0]
    scenario = load_scenario(path)
    columns = varied_columns(scenario)
    out = evaluate(scenario, columns, ROWS, ("npv_usd",), with_warnings=True)
    assert out["warnings"].tolist() == [WARNING_SEPARATOR.join(w) for w in golden[path.stem]]


def test_a_typod_amount_is_quoted_in_exponent_form_not_in_hundreds_of_digits():
    """1e300 USD of staff a month (a typo) was quoted in a warning as 1,095,999,...,176 USD of
    tax losses, 301 digits, and its deferred tax asset alike."""
    import re

    from econ.labels import HUGE, whole

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    for path in ("opex.staff_usd_per_month", "capex.installation_usd_per_gpu"):
        warnings = project(load_scenario(seed, {path: 1e300}), monthly=False).warnings[0]
        (losses,) = [w for w in warnings if "of tax losses are still unused" in w]
        assert re.match(r"\d(\.\d{1,3})?e\+\d{3} USD of tax losses", losses), losses
        assert not any(re.search(r"\d{1,3}(,\d{3}){5,}", w) for w in warnings), path
    assert whole(HUGE * 0.999) == "999,000,000,000" and whole(HUGE) == "1e+12"
    assert whole(-1.5e300) == "-1.5e+300" and whole(np.nan) == "nan"
