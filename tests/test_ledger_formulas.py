"""The ledger identities the engine composes: opex, token revenue per unit of price, income
before tax, cash flows and net income (econ.opex, econ.market, econ.tax, econ.cashflow)."""

from __future__ import annotations

import numpy as np
import pytest

from econ import cashflow, market, opex, tax
from econ.units import nominal_monthly_rate


def test_opex_of_a_small_site():
    # Staff 5,000 a month; maintenance 2% + insurance 1% a year of 1.2 M USD capex = 3,000 a month;
    # software 10 USD per GPU-month on 72 GPUs = 720.
    open_ = np.array([[False, True, True]])
    serving = np.array([[False, True, False]])
    gpus = np.array([[0.0, 72.0, 0.0]])
    out = opex.opex_usd_per_month(
        np.array([5_000.0]),
        open_,
        np.array([0.02]),
        np.array([0.01]),
        np.array([1.2e6]),
        serving,
        gpus,
        np.array([10.0]),
    )
    assert out[0].tolist() == pytest.approx([0.0, 8_720.0, 5_000.0])


def test_opex_shares_are_charged_as_a_twelfth_a_month():
    out = opex.opex_usd_per_month(
        np.zeros(2), np.ones((2, 2), bool), np.array([0.06, 0.12]), np.zeros(2),
        np.array([100.0, 100.0]), np.ones((2, 2), bool), np.zeros((2, 2)), np.zeros(2),
    )  # fmt: skip
    assert out[:, 1].tolist() == pytest.approx((nominal_monthly_rate([0.06, 0.12]) * 100).tolist())


def test_maintenance_starts_when_the_warranty_runs_out():
    # The seed's GB200 NVL72 rack: 3,535,600 USD capitalized, in service from month 1 with a
    # 3-year warranty; support after it at 10% of the hardware's price a year (the low end of
    # 10-20% for IT hardware out of warranty, nettsup.com; docs/ready_made.md):
    # 3,535,600 * 0.10 / 12 = 29,463.33 USD a month from month 37, nothing before.
    months = np.arange(73)[None, :]
    serving = (months >= 1) & (months <= 72)
    args = (np.zeros(1), serving, np.array([0.10]), np.zeros(1), np.array([3_535_600.0]),
            serving, np.zeros((1, 73)), np.zeros(1))  # fmt: skip
    out = opex.opex_usd_per_month(*args, warranty_months=np.array([36]), service_start_month=1)
    assert out[0, :37].tolist() == [0.0] * 37
    assert out[0, 37:].tolist() == pytest.approx([29_463.333333333332] * 36, rel=1e-15)
    # No warranty (0) charges it from the first month in service, as before the input existed.
    assert (
        opex.opex_usd_per_month(*args).tolist()
        == opex.opex_usd_per_month(*args, warranty_months=0, service_start_month=1).tolist()
    )


@pytest.mark.parametrize("warranty", [0, 1, 12, 36, 71, 72, 200])
def test_maintenance_over_a_life_is_the_months_after_the_warranty(warranty):
    """Property: maintenance paid = s / 12 * K * (months in service after the warranty), counted
    from each fleet's own first month (a vintage bought later starts its warranty later);
    insurance is paid in every month in service whatever the warranty."""
    months = np.arange(73)[None, :]
    start = np.array([1, 19])
    serving = (months >= start[:, None]) & (months <= 72)
    capex = np.array([1.2e6, 3.0e6])

    def total(maintenance, insurance):
        return opex.opex_usd_per_month(
            np.zeros(2), serving, np.full(2, maintenance), np.full(2, insurance), capex,
            serving, np.zeros((2, 73)), np.zeros(2), np.full(2, warranty), start,
        ).sum(axis=1)  # fmt: skip

    after = np.maximum(serving.sum(axis=1) - warranty, 0)
    assert total(0.12, 0.0).tolist() == pytest.approx((0.01 * capex * after).tolist(), rel=1e-12)
    insured = 0.006 / 12 * capex * serving.sum(axis=1)
    assert (total(0.12, 0.006) - total(0.12, 0.0)).tolist() == pytest.approx(insured.tolist())


def test_revenue_per_token_price_follows_the_price_path():
    tokens = np.array([[0.0, 2e6, 2e6], [0.0, 2e6, 2e6]])
    price = np.array([[0.5, 0.5, 0.25], [0.5, 0.5, 0.25]])
    units = market.revenue_per_token_price_usd(
        tokens, price, np.array([0.25, 0.0]), np.array([False, True])
    )
    assert units[0].tolist() == pytest.approx([0.0, 1.5, 0.75])
    assert units[1].tolist() == [0.0, 0.0, 0.0]  # spot sells GPU-hours
    # token revenue = month-1 price x units (revenue_by_source's token line)
    revenue = market.revenue_by_source(tokens, np.ones_like(tokens), np.ones_like(tokens), price,
                                       np.array([0.25, 0.25]), np.zeros(2))["token_usd"]  # fmt: skip
    assert revenue[0] == pytest.approx(0.5 * units[0])


def test_income_before_tax_and_cash_flows():
    ebitda, dep, interest, gain = 1_000.0, 300.0, 100.0, 50.0
    assert tax.income_before_tax_usd(ebitda, dep, interest, gain) == 650.0
    project = cashflow.project_cash_flow_usd(ebitda, 2_000.0, 400.0, 136.5)
    assert project == pytest.approx(1_000 - 2_000 + 400 - 136.5)
    assert cashflow.equity_cash_flow_usd(project, 1_200.0) == pytest.approx(project + 1_200)
    assert cashflow.cash_flow_available_for_debt_service_usd(ebitda, 136.5) == 863.5
    assert cashflow.net_income_usd(650.0, 136.5, 10.0) == 503.5


def test_the_engine_charges_maintenance_after_each_fleets_warranty():
    """The seed with a 3-year warranty: no maintenance in months 1-36, 10% a year of the rack's
    capitalized cost from month 37 (its only fleet enters service in month 1)."""
    from conftest import ROOT

    from econ import project
    from econ.scenario import load_scenario

    seed = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
    plain = {"opex.maintenance_share_of_capex_annual": 0.0, "opex.warranty_months": 0}
    with_support = {"opex.maintenance_share_of_capex_annual": 0.10, "opex.warranty_months": 36}
    lines = [
        project(load_scenario(seed, overrides)).monthly.droplevel("scenario")
        for overrides in (plain, with_support)
    ]
    extra = lines[1]["opex_usd"] - lines[0]["opex_usd"]
    capex = lines[0]["capex_usd"].sum()
    assert extra.loc[:36].abs().max() < 1e-6
    assert extra.loc[37:72].to_numpy() == pytest.approx(0.10 / 12 * capex, rel=1e-12)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-1, "-1 is below 0; expected a whole number from 0 to 600 [months]"),
        (601, "601 is above 600; expected a whole number from 0 to 600 [months]"),
        (36.5, "36.5 is not a whole number; expected a whole number from 0 to 600 [months]"),
        ("36", "a number written as text"),
    ],
)
def test_a_bad_warranty_is_refused_naming_the_field(value, expected, tmp_path, capsys):
    import tomli_w
    from conftest import ROOT

    from econ.cli import main
    from econ.scenario import read_toml

    data = read_toml(ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml")
    data.setdefault("opex", {})["warranty_months"] = value
    path = tmp_path / "bad.toml"
    path.write_text(tomli_w.dumps(data))
    assert main(["validate", str(path)]) == 3
    err = capsys.readouterr().err
    assert "opex.warranty_months" in err and expected in err and "Traceback" not in err
