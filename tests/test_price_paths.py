"""A scenario's prices per GPU-hour beside the rental index (econ.price_paths): the token price
equivalent of a GPU-hour against the seed's cited figures, contract and spot GPU-hours against the
engine's rental curve, the identity with the projected revenue, a series' own points, and an index
curve's extension through its last point with its band.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ import rental_index as ri
from econ.catalog import DEFAULT_SCENARIO, ready_made_scenarios
from econ.engine import project
from econ.price_paths import (
    extension,
    month_starts,
    scenario_price_paths,
    sells_gpu_hours,
    uses_market_rental,
)
from econ.scenario import load_scenario
from econ.units import HOURS_PER_MONTH
from tests.conftest import ROOT

SEED = ready_made_scenarios()[DEFAULT_SCENARIO]
H200 = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"


def test_token_price_equivalent_of_a_gpu_hour_is_the_seeds_cited_figures():
    # MLPerf Inference v6.0, CoreWeave GB200 NVL72 server: 4,867.7 tokens/s per GPU (derived);
    # the seed's token price 0.3261 USD/Mtok and utilization 70%: month 1, before any gain or
    # decline, 4867.7 * 3600 s * 0.70 * 0.3261 / 10^6 = 4.00014 USD per GPU-hour in service.
    paths = scenario_price_paths(load_scenario(SEED))
    assert paths["token_usd_per_gpu_hour"].iloc[0] == pytest.approx(
        4867.7 * 3600 * 0.70 * 0.3261 / 1e6, rel=1e-9
    )
    assert paths["token_usd_per_gpu_hour"].iloc[0] == pytest.approx(4.00014, abs=5e-6)
    # a token scenario has no GPU-hour lines and takes no market rental price
    for column in ("market_rental_usd_per_gpu_hour", "contract_usd_per_gpu_hour"):
        assert paths[column].isna().all()
    assert not sells_gpu_hours(load_scenario(SEED))


def test_token_equivalent_follows_the_price_decline_month_by_month():
    scenario = load_scenario(SEED, ["throughput.steps=[]", "throughput.gain_rate_annual=0"])
    paths = scenario_price_paths(scenario)
    month = paths["month"].to_numpy()
    expected = 4867.7 * 3600 * 0.70 * 0.3261 / 1e6 * (1 - 0.3) ** ((month - 1) / 12)
    np.testing.assert_allclose(paths["token_usd_per_gpu_hour"], expected, rtol=1e-9)


GPU_HOURS = [
    'market.spot_sells="gpu_hours"',
    "market.contract_share=0.5",
    "market.contract_usd_per_gpu_hour=2.9",
    "market.contract_term_months=0",
    "market.rental_usd_per_gpu_hour=3.0",
    "market.rental_decline_annual=0.35",
    "market.rental_floor_usd_per_gpu_hour=1.2",
]


def test_contract_and_spot_gpu_hours_against_the_engines_rental_curve():
    scenario = load_scenario(H200, GPU_HOURS)
    assert sells_gpu_hours(scenario) and uses_market_rental(scenario)
    paths = scenario_price_paths(scenario)
    month = paths["month"].to_numpy()
    # econ.market.rental_price_usd_per_gpu_hour: P_m = F + (P_1 - F)(1 - d)^((m - 1) / 12)
    market = 1.2 + (3.0 - 1.2) * 0.65 ** ((month - 1) / 12)
    np.testing.assert_allclose(paths["market_rental_usd_per_gpu_hour"], market, rtol=1e-12)
    np.testing.assert_allclose(paths["contract_usd_per_gpu_hour"], 2.9, rtol=1e-12)
    share = scenario.utilization.share
    # spot GPU-hours earn the market price while they serve (no ramp after the deployment)
    served = (
        paths["month"] > scenario.fleet.deployment_ramp_months + scenario.utilization.ramp_months
    )
    np.testing.assert_allclose(
        paths.loc[served, "spot_usd_per_gpu_hour"], share * market[served.to_numpy()], rtol=1e-9
    )
    assert paths["token_usd_per_gpu_hour"].isna().all()


@settings(max_examples=15, deadline=None)
@given(
    contract=st.sampled_from([0.0, 0.3, 1.0]),
    spot=st.sampled_from(["tokens", "gpu_hours"]),
    term=st.sampled_from([0, 12]),
)
def test_per_gpu_hour_figures_times_the_gpu_hours_are_the_revenue(contract, spot, term):
    scenario = load_scenario(
        H200,
        [
            f'market.spot_sells="{spot}"',
            f"market.contract_share={contract}",
            "market.contract_usd_per_gpu_hour=2.9",
            f"market.contract_term_months={term}",
            "market.rental_usd_per_gpu_hour=3.0",
            "market.rental_decline_annual=0.35",
            "market.rental_floor_usd_per_gpu_hour=1.2",
        ],
    )
    monthly = project(scenario).monthly.reset_index()
    paths = scenario_price_paths(scenario, monthly)
    served = monthly[monthly["month"] >= 1].reset_index(drop=True)
    hours = served["gpus_in_service"].to_numpy() * HOURS_PER_MONTH
    rebuilt = (
        paths["contract_usd_per_gpu_hour"].fillna(0).to_numpy() * contract
        + paths["spot_usd_per_gpu_hour"].fillna(0).to_numpy() * (1 - contract)
        + paths["token_usd_per_gpu_hour"].fillna(0).to_numpy() * (1 - contract)
    ) * hours
    np.testing.assert_allclose(rebuilt, served["revenue_usd"].to_numpy(), rtol=1e-9, atol=1e-6)
    assert uses_market_rental(scenario) == (
        (spot == "gpu_hours" and contract < 1) or (contract > 0 and term > 0)
    )


def _exact_index(tmp_path, monkeypatch):
    """H200 12-month points exactly on P = 1.2 + 3 e^(-0.7 t), on month starts."""
    dates = [dt.date(2025, m, 1) for m in (1, 4, 7, 10)] + [dt.date(2026, 1, 1)]
    body = "".join(
        f"{d},Pub/Exact,H200,12,{1.2 + 3.0 * math.exp(-0.7 * (d - dates[0]).days / 365.25):.15f},"
        "closed form\n"
        for d in dates
    )
    path = tmp_path / "index.csv"
    path.write_text(",".join(ri.COLUMNS) + "\n" + body)
    monkeypatch.setattr(ri, "catalog_path", lambda: path)
    return dates


def test_a_series_prices_the_market_at_its_own_points(tmp_path, monkeypatch):
    dates = _exact_index(tmp_path, monkeypatch)
    scenario = load_scenario(
        H200,
        [
            *GPU_HOURS[:4],
            'market.rental_series="Pub/Exact"',
            "market.rental_series_term_months=12",
            "start_date=2025-01-01",
        ],
    )
    paths = scenario_price_paths(scenario).set_index("month")
    for d in dates[1:]:
        month = (d.year - 2025) * 12 + d.month - 1
        t = (d - dates[0]).days / 365.25
        assert paths.loc[month, "market_rental_usd_per_gpu_hour"] == pytest.approx(
            1.2 + 3.0 * math.exp(-0.7 * t), rel=1e-12
        )


def test_an_extension_runs_through_the_last_point_with_the_fits_band(tmp_path, monkeypatch):
    _exact_index(tmp_path, monkeypatch)
    curve = ri.curves(ri.load_catalog())[("Pub/Exact", "H200", 12)]
    ext = extension(curve, dt.date(2027, 1, 1))
    assert ext.dates[0] == dt.date(2026, 1, 1) and ext.dates[-1] == dt.date(2027, 1, 1)
    assert len(ext.dates) == 13
    assert ext.mid[0] == pytest.approx(curve.points[-1].usd_per_gpu_hour, rel=1e-12)
    t = curve.years(ext.dates)
    np.testing.assert_allclose(ext.mid, 1.2 + 3.0 * np.exp(-0.7 * t), rtol=1e-6)
    s = ext.fit.sigma_log if math.isfinite(ext.fit.sigma_log) else 0.0
    np.testing.assert_allclose(ext.low, ext.mid * math.exp(-1.6448536269514722 * s))
    np.testing.assert_allclose(ext.high, ext.mid * math.exp(1.6448536269514722 * s))


def test_a_noisy_curve_has_a_band_of_its_residuals():
    curve = ri.curves(ri.load_catalog())[("CCIR/CRI-T2IF", "H200", 0)]
    ext = extension(curve, dt.date(2027, 6, 1))
    fit = ri.fit_decay(curve.years(curve.dates), curve.prices)
    assert ext.fit == fit and fit.sigma_log > 0
    assert np.all(ext.low < ext.mid) and np.all(ext.mid < ext.high)
    np.testing.assert_allclose(ext.high / ext.mid, math.exp(1.6448536269514722 * fit.sigma_log))


def test_a_curve_of_one_point_has_no_extension():
    curve = ri.curves(ri.load_catalog())[("SemiAnalysis/TCO", "GB200", 36)]
    with pytest.raises(ri.RentalIndexError, match="too few"):
        extension(curve, dt.date(2030, 1, 1))


def test_month_starts():
    assert month_starts(dt.date(2026, 11, 15), dt.date(2027, 2, 1)) == (
        dt.date(2026, 12, 1),
        dt.date(2027, 1, 1),
        dt.date(2027, 2, 1),
    )
    assert month_starts(dt.date(2026, 1, 1), dt.date(2026, 1, 31)) == ()
