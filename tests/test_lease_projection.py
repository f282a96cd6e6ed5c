"""econ.lease.lease_vs_own_of_projection: leasing against owning a projected fleet, the model
`econ lease-vs-own` prints, usable from the Python API and the app."""

from __future__ import annotations

import json

import numpy as np
import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.errors import InputError
from econ.lease import RENTER_COSTS, lease_vs_own_of_projection
from econ.units import HOURS_PER_MONTH
from tests.conftest import SCENARIOS

SEED = next(p for p in SCENARIOS if p.stem == "deepseek-r1-gb200-nvl72")


def compare(scenario, price, **kw):
    projection = project(scenario)
    args = dict(term_months=12, upfront_share=0.0, renter_pays=RENTER_COSTS)
    args.update(kw)
    return projection, lease_vs_own_of_projection(
        projection.lines,
        projection.months,
        projection.horizon_months,
        np.array([float(scenario.fleet.gpu_count)]),
        price,
        tax_rate=np.array([args.pop("tax", 0.0)]),
        discount_rate_annual=np.array([args.pop("rate", 0.0)]),
        **args,
    )


def test_without_tax_discount_or_debt_the_advantage_is_capital_less_rent():
    # The renter bears every operating cost, so they cancel: owning costs capex less the sale
    # proceeds; leasing costs the rent, gpus x price x 730 h in each of the horizon's months.
    scenario = load_scenario(SEED, {"financing.debt_share": 0.0})
    projection, r = compare(scenario, 2.0)
    lines, horizon = projection.lines, int(projection.horizon_months[0])
    capital = lines["capex_usd"].sum() - lines["disposal_usd"].sum()
    rent = scenario.fleet.gpu_count * 2.0 * HOURS_PER_MONTH * horizon
    assert r["pv_cost_own_usd"][0] == pytest.approx(capital + lines["opex_usd"].sum()
                                                    + lines["power_usd"].sum()
                                                    + lines["facility_usd"].sum(), rel=1e-12)  # fmt: skip
    assert r["lease_advantage_usd"][0] == pytest.approx(capital - rent, rel=1e-9)
    # break-even rent recovers the capital over the horizon's GPU-hours
    hours = scenario.fleet.gpu_count * HOURS_PER_MONTH * horizon
    assert r["breakeven_usd_per_gpu_hour"][0] == pytest.approx(capital / hours, rel=1e-9)


def test_at_the_break_even_price_leasing_and_owning_cost_the_same():
    scenario = load_scenario(SEED)
    _, first = compare(scenario, 3.0, tax=0.21, rate=0.12, upfront_share=0.25, renter_pays=())
    price = float(first["breakeven_usd_per_gpu_hour"][0])
    _, second = compare(scenario, price, tax=0.21, rate=0.12, upfront_share=0.25, renter_pays=())
    assert second["lease_advantage_usd"][0] == pytest.approx(
        0.0, abs=1e-9 * first["pv_cost_own_usd"][0]
    )


def test_the_command_prints_the_library_figures(capsys):
    scenario = load_scenario(SEED)
    _, r = compare(
        scenario, 4.0, tax=scenario.financing.tax_rate,
        rate=scenario.financing.discount_rate_annual, term_months=36, upfront_share=0.25,
        renter_pays=("power", "facility"),
    )  # fmt: skip
    args = ["lease-vs-own", str(SEED), "--price", "4.0", "--term-months", "36"]
    args += ["--renter-pays", "power,facility"]
    assert main([*args, "--upfront-share", "0.25", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    for key, value in r.items():
        assert printed[key] == pytest.approx(float(value[0]), rel=1e-15)


def test_unknown_renter_cost_is_refused():
    with pytest.raises(InputError, match="renter_pays: unknown cost 'rent'; expected names"):
        compare(load_scenario(SEED), 1.0, renter_pays=("rent",))
