"""A market price table that does not span the projection: the price held flat is warned about,
as a rental series says how it is extended (docs/market.md), and a scenario priced by a table runs
in batches (its unset month-1 price no longer reads back as given beside the table)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from econ.batch import ScenarioBatch
from econ.cli import main
from econ.engine import project
from econ.gains import value_gain, with_steps
from econ.scenario import load_scenario, scenario_to_dict, validate_dict
from tests.conftest import ROOT

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"


def _priced_by(table: list[dict], **market) -> object:
    """The seed (one GB200 NVL72 rack, 72 months from 2026-04) with its token price from
    `table` instead of a price and a decline."""
    data = scenario_to_dict(load_scenario(SEED))
    for name in ("price_usd_per_mtok", "price_decline_annual", "rental_usd_per_gpu_hour"):
        data["market"].pop(name, None)
    data["market"].update(price_table=table, **market)
    data["throughput"]["steps"] = []
    return validate_dict(data)


def _token_price(scenario) -> np.ndarray:
    """The engine's token price by month, from its revenue and tokens [USD/Mtok]."""
    monthly = project(scenario).monthly
    return (monthly["token_revenue_usd"] / monthly["tokens"] * 1e6).to_numpy()


def _table_warnings(scenario) -> list[str]:
    return [w for w in project(scenario).warnings[0] if "_table" in w]


def test_a_table_ending_before_the_horizon_says_its_last_price_is_held():
    scenario = _priced_by(
        [{"month": 1, "price_usd_per_mtok": 0.5}, {"month": 13, "price_usd_per_mtok": 0.3}]
    )
    held = scenario.horizon - 13  # months 14 to the horizon
    (warning,) = _table_warnings(scenario)
    assert warning == (
        f"market.price_table ends at month 13; its last price 0.3 USD/Mtok is held for the "
        f"{held} months to the horizon"
    )
    doc = " ".join((ROOT / "docs" / "market.md").read_text().split())
    assert f"`{warning}` (a {scenario.horizon}-month horizon)" in doc
    price = _token_price(scenario)
    np.testing.assert_allclose(price[13:], 0.3, rtol=1e-12)  # what the warning says
    assert price[12] > 0.3


def test_a_table_starting_late_says_its_first_price_is_held_before_it():
    scenario = _priced_by(
        [{"month": 5, "price_usd_per_mtok": 0.5}, {"month": 200, "price_usd_per_mtok": 0.3}]
    )
    (warning,) = _table_warnings(scenario)
    assert warning == (
        "market.price_table starts at month 5; its first price 0.5 USD/Mtok is held for the 4 "
        "months before it"
    )
    assert f"`{warning}`" in " ".join((ROOT / "docs" / "market.md").read_text().split())
    np.testing.assert_allclose(_token_price(scenario)[1:6], 0.5, rtol=1e-12)


@pytest.mark.parametrize(
    "when, said, price",
    [
        (
            ["2024-01-01", "2024-06-15"],
            "every point is dated before month 1, its last at "
            "2024-06-15 (month -22); its last price 0.3 USD/Mtok",
            0.3,
        ),  # fmt: skip
        (
            ["2040-01-01", "2041-01-01"],
            "every point is dated after the horizon (month 72), its "
            "first at 2040-01-01 (month 165); its first price 0.5 USD/Mtok",
            0.5,
        ),  # fmt: skip
    ],
)
def test_a_table_dated_outside_the_projection_is_held_flat_for_all_of_it(when, said, price):
    table = [
        {"date": dt.date.fromisoformat(d), "price_usd_per_mtok": p}
        for d, p in zip(when, (0.5, 0.3), strict=True)
    ]
    scenario = _priced_by(table)
    assert scenario.start_date == dt.date(2026, 4, 1) and scenario.horizon == 72
    (warning,) = _table_warnings(scenario)
    assert warning == f"market.price_table: {said} is held for all 72 months of the projection"
    if price == 0.3:  # the example of docs/market.md
        assert f"`{warning}`" in " ".join((ROOT / "docs" / "market.md").read_text().split())
    np.testing.assert_allclose(_token_price(scenario)[1:], price, rtol=1e-12)


def test_a_rental_table_is_warned_alike_and_a_table_spanning_the_horizon_is_not():
    rental = [
        {"date": dt.date(2026, 6, 1), "price_usd_per_gpu_hour": 3.0},
        {"date": dt.date(2027, 1, 15), "price_usd_per_gpu_hour": 2.0},
    ]
    spanning = [{"month": 1, "price_usd_per_mtok": 0.5}, {"month": 72, "price_usd_per_mtok": 0.2}]
    scenario = _priced_by(spanning, spot_sells="gpu_hours", rental_table=rental)
    # start 2026-04: 2026-06 is month 2, 2027-01 month 9 (a table's dates count whole months)
    assert _table_warnings(scenario) == [
        "market.rental_table starts at 2026-06-01 (month 2); its first price 3 USD/GPU-hour is "
        "held for the month before it; it ends at 2027-01-15 (month 9); its last price 2 "
        f"USD/GPU-hour is held for the {72 - 9} months to the horizon"
    ]
    monthly = project(scenario).monthly
    rental = (monthly["spot_revenue_usd"] / (monthly["gpus_in_service"] * 730.0 * 0.7)).to_numpy()
    np.testing.assert_allclose(rental[9:], 2.0, rtol=1e-9)


def test_vintages_get_the_table_warning_once():
    refresh = load_scenario(ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml")
    data = scenario_to_dict(refresh)
    data["market"] = {"price_table": [{"month": 1, "price_usd_per_mtok": 0.3}]}
    warnings = _table_warnings(validate_dict(data))
    assert warnings == [
        f"[base] market.price_table ends at month 1; its last price 0.3 USD/Mtok is held for "
        f"the {refresh.horizon - 1} months to the horizon"
    ]


def test_a_table_priced_scenario_runs_in_batches_and_counts_each_rows_horizon(tmp_path, capsys):
    table = [{"month": 1, "price_usd_per_mtok": 0.5}, {"month": 13, "price_usd_per_mtok": 0.3}]
    scenario = _priced_by(table)
    assert validate_dict(scenario_to_dict(scenario)) == scenario  # was refused: price and table
    batch = project(ScenarioBatch.repeat(scenario, 3, {"horizon_months": [12, 36, 72]}))
    held = [[w for w in ws if "price_table" in w] for ws in batch.warnings]
    assert held[0] == []  # the table reaches past a 12-month horizon
    assert "held for the 23 months to the horizon" in held[1][0]
    assert "held for the 59 months to the horizon" in held[2][0]
    for i, months in enumerate((12, 36, 72)):
        alone = project(validate_dict({**scenario_to_dict(scenario), "horizon_months": months}))
        assert batch.metrics["npv_usd"][i] == pytest.approx(alone.metrics["npv_usd"][0], abs=0.005)
        assert [w for w in alone.warnings[0] if "price_table" in w] == held[i]
    # a gains analysis of it (scenario_to_dict, then the same without the gains)
    step = {"month": 20, "gain": 0.1}
    assert value_gain(with_steps(scenario, [step])).delta["npv_usd"] > 0
    # and a Monte Carlo of the command line
    path = tmp_path / "table.toml"
    from econ.scenario.io import dumps

    path.write_text(dumps(scenario))
    args = ["montecarlo", str(path), "--dist", "utilization.share=uniform(0.5, 0.8)", "-n", "16"]
    assert main(args) == 0, capsys.readouterr().err
