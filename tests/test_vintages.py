"""Fleet vintages: a scenario holding several GPU generations bought at their own months."""

from __future__ import annotations

import numpy as np
import pytest

from econ import load_scenario, project
from econ.cli import main
from econ.scenario import ScenarioError, apply_overrides, validate_dict
from tests.conftest import ROOT

LLAMA = ROOT / "models" / "scenarios" / "llama2-70b-h200.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"

BASE = {
    "name": "hall",
    "horizon_months": 48,
    "fleet": {"gpu_count": 64, "retire_month": 30},
    "throughput": {"tokens_per_s_per_gpu": 4000.0, "steps": [{"month": 20, "gain": 0.1}]},
    "capex": {"gpu_price_usd": 30000.0},
    "depreciation": {"life_years": 4.0},
    "power": {"kw_per_gpu": 1.4},
    "facility": {"colo_usd_per_kw_month": 150.0},
    "opex": {"staff_usd_per_month": 10000.0, "maintenance_share_of_capex_annual": 0.02},
    "financing": {"debt_share": 0.5, "debt_term_months": 36},
    "market": {"price_usd_per_mtok": 0.5, "price_decline_annual": 0.2},
}
NEW = {
    "name": "next-gen",
    "fleet": {
        "gpu_count": 72,
        "purchase_month": 29,
        "retire_month": None,
        "deployment_ramp_months": 2,
    },
    "throughput": {"tokens_per_s_per_gpu": 9000.0},
    "capex": {"system_price_usd": 3.0e6, "gpus_per_system": 72},
    "power": {"kw_per_gpu": 1.9},
}
OPERATING = [
    "gpus_in_service",
    "tokens",
    "revenue_usd",
    "power_usd",
    "facility_usd",
    "opex_usd",
    "capex_usd",
    "disposal_usd",
    "depreciation_usd",
    "interest_usd",
    "principal_usd",
    "ebitda_usd",
    "debt_balance_usd",
]


def test_vintages_sum_to_the_fleet():
    fleet = validate_dict({**BASE, "vintages": [NEW]})
    old_alone = validate_dict({**BASE, "name": "old"})
    new_alone = validate_dict(
        apply_overrides(
            {
                **BASE,
                "name": "new",
                **{k: {**BASE.get(k, {}), **v} for k, v in NEW.items() if k != "name"},
            },
            {"capex.gpu_price_usd": None},
        )
    )
    together = project([fleet, old_alone, new_alone])
    monthly = together.monthly
    for column in OPERATING:
        combined = monthly.loc["old", column].to_numpy() + monthly.loc["new", column].to_numpy()
        if column in ("opex_usd", "ebitda_usd"):
            # Staff are charged once for the fleet, from its first month in service to its last
            # (the old GPUs serve months 1-30, the new from 30): remove the second charge. Alone,
            # the old GPUs' staff stop after month 30, the new ones' start in month 30 (issue 16).
            staff = np.where(np.arange(49) == 30, 10000.0, 0.0)
            combined = combined + (-staff if column == "opex_usd" else staff)
        assert np.allclose(
            monthly.loc["hall", column].to_numpy(), combined, rtol=1e-12, atol=1e-6
        ), column
    summary = together.summary
    assert summary.loc["hall", "capex_usd_total"] == pytest.approx(64 * 30000 + 3.0e6)
    assert summary.loc["hall", "gpu_count"] == 136


def test_vintage_timing_and_table():
    result = project(validate_dict({**BASE, "vintages": [NEW]}))
    monthly = result.monthly.loc["hall"]
    assert monthly.capex_usd.iloc[29] == pytest.approx(3.0e6)
    assert monthly.gpus_in_service.iloc[29] == 64  # old GPUs serve through month 30, new from 30
    assert monthly.gpus_in_service.iloc[30] == pytest.approx(64 + 36)
    assert monthly.gpus_in_service.iloc[31] == pytest.approx(72)
    table = result.vintages.loc["hall"]
    assert list(table.index) == ["base", "next-gen"]
    assert table.loc["next-gen", "purchase_month"] == 29
    assert table.loc["base", "retire_month"] == 30
    # The old GPUs are sold at book value when retired, before the end of their life.
    assert any(w.startswith("[base] sold in month 30") for w in result.warnings[0])


@pytest.mark.parametrize(
    ("vintage", "message"),
    [
        (
            {"name": "late", "fleet": {"purchase_month": 48}},
            "vintages[0] (late): fleet.purchase_month is 48, at or after the end of the horizon",
        ),
        (
            {"name": "odd", "fleet": {"purchase_month": 10, "retire_month": 5}},
            "vintages[0] (odd): fleet.retire_month is 5",
        ),
        (
            {"name": "neg", "capex": {"gpu_price_usd": -1}},
            "vintages[0] (neg): capex.gpu_price_usd = -1",
        ),
        ({"name": "typo", "powr": {}}, "vintages[0].powr: unknown field"),
    ],
)
def test_bad_vintages(vintage, message):
    with pytest.raises(ScenarioError) as info:
        validate_dict({**BASE, "vintages": [vintage]}, file="hall.toml")
    assert message in str(info.value)


def test_repeat_keeps_vintages():
    from econ import ScenarioBatch

    fleet = validate_dict({**BASE, "vintages": [NEW]})
    prices = np.array([0.3, 0.5, 0.9])
    repeated = project(ScenarioBatch.repeat(fleet, 3, {"market.price_usd_per_mtok": prices}))
    one_by_one = project(
        [
            validate_dict(
                {
                    **BASE,
                    "name": f"p{p}",
                    "vintages": [NEW],
                    "market": {**BASE["market"], "price_usd_per_mtok": p},
                }
            )
            for p in prices
        ]
    )
    assert np.allclose(repeated.metrics["npv_usd"], one_by_one.metrics["npv_usd"], rtol=1e-12)
    assert repeated.vintages.shape[0] == 6


def test_each_row_takes_the_value_where_an_override_of_the_file_would():
    """The new generation gives its own throughput, price, power draw and dates: a column over
    those fields varies the scenario's own fleet only, as `--set` would; a field it inherits
    (utilization, the power price) varies both."""
    fleet = validate_dict({**BASE, "vintages": [NEW]})
    assert fleet.takes_own_value("throughput.tokens_per_s_per_gpu") == (True, False)
    assert fleet.takes_own_value("capex.gpu_price_usd") == (True, False)  # NEW gives a system price
    assert fleet.takes_own_value("fleet.purchase_month") == (True, False)  # dates are its own
    assert fleet.takes_own_value("fleet.gpus_per_rack") == (True, True)
    assert fleet.takes_own_value("power.price_usd_per_kwh") == (True, True)
    assert fleet.takes_own_value("market.price_usd_per_mtok") == (True, True)


@pytest.mark.parametrize(
    ("path", "values"),
    [
        ("throughput.tokens_per_s_per_gpu", [4000.0, 3000.0, 6000.0]),
        ("capex.gpu_price_usd", [30000.0, 20000.0]),
        ("power.kw_per_gpu", [1.4, 1.1]),
        ("fleet.retire_month", [30, 24, 36]),
        ("utilization.share", [0.5, 0.9]),
        ("power.price_usd_per_kwh", [0.05, 0.12]),
    ],
)
def test_a_batch_row_is_the_scenario_with_that_override(path, values):
    from econ import ScenarioBatch

    fleet = validate_dict({**BASE, "vintages": [NEW]})
    batch = ScenarioBatch.repeat(fleet, len(values), {path: np.array(values, dtype=float)})
    together = project(batch, monthly=False)
    for row, value in enumerate(values):
        alone = project(validate_dict(apply_overrides({**BASE, "vintages": [NEW]}, {path: value})))
        for key in ("npv_usd", "tokens_total", "capex_usd_total", "debt_usd"):
            assert together.metrics[key][row] == pytest.approx(alone.metrics[key][0], rel=1e-12), (
                key,
                value,
            )


def _other_gpus(**given):
    vintage = {"name": "gb300", "fleet": {"hardware": "gb300-nvl72", "purchase_month": 29}}
    return validate_dict(
        {**BASE, "fleet": {**BASE["fleet"], "hardware": "h200-sxm"}, "vintages": [
            {**vintage, **given}
        ]}
    )  # fmt: skip


def test_a_vintage_on_other_gpus_is_warned_of_each_figure_it_takes_from_the_fleet():
    bare = _other_gpus().borrowed_figures()
    assert bare[0] is None
    assert bare[1] == (
        "this vintage runs on gb300-nvl72, not the scenario's h200-sxm, but takes the scenario's "
        "throughput.tokens_per_s_per_gpu = 4,000, capex.gpu_price_usd = 30,000, "
        "power.kw_per_gpu = 1.4: figures of the other GPUs; expected the vintage's own in "
        "[vintages.throughput], [vintages.capex], [vintages.power]"
    )
    # Each section given (by any field that says the same thing) drops out of the warning.
    own = _other_gpus(throughput=NEW["throughput"], capex=NEW["capex"]).borrowed_figures()
    assert own[1].endswith("takes the scenario's power.kw_per_gpu = 1.4: a figure of the other "
                           "GPUs; expected the vintage's own in [vintages.power]")  # fmt: skip
    whole = {"throughput": NEW["throughput"], "capex": NEW["capex"], "power": NEW["power"]}
    assert _other_gpus(**whole).borrowed_figures() == (None, None)
    # On the fleet's own hardware the fleet's figures are the vintage's too: nothing to say.
    same = validate_dict({**BASE, "vintages": [{"name": "more", "fleet": {"purchase_month": 29}}]})
    assert same.borrowed_figures() == (None, None)


def test_the_projection_and_validate_carry_the_warning(tmp_path, capsys):
    from econ.cli import main
    from econ.scenario import save_scenario

    scenario = _other_gpus(capex=NEW["capex"])
    [warnings] = project(scenario, monthly=False).warnings
    [said] = [w for w in warnings if "this vintage runs on" in w]
    assert said.startswith("[gb300] this vintage runs on gb300-nvl72")
    assert "throughput.tokens_per_s_per_gpu = 4,000, power.kw_per_gpu = 1.4:" in said
    assert "capex" not in said
    file = save_scenario(scenario, tmp_path / "two-gpus.toml")
    assert main(["validate", str(file)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"warning [hall/gb300]: {said.removeprefix('[gb300] ')}" in err


# --- a vintage's own rack cooling -----------------------------------------------------------------


def test_the_refresh_scenario_validates_without_a_warning(capsys):
    # Its H200 racks (air) and GB300 NVL72 racks (liquid) share one liquid hall: each row gives
    # its racks' cooling, and `econ validate` warned of the H200 racks counted as liquid before.
    assert main(["validate", str(REFRESH)]) == 0
    assert "warning" not in capsys.readouterr().err
    rows = load_scenario(REFRESH).expand()
    assert [row.facility.rack_cooling for row in rows] == ["air", "liquid"]
    warnings = project(load_scenario(REFRESH), monthly=False).warnings[0]
    assert not any("rack_cooling" in w for w in warnings)


def test_a_vintage_gives_its_racks_cooling_alone():
    vintage = {**NEW, "facility": {"colo_usd_per_kw_month": 100.0}}
    with pytest.raises(ScenarioError, match="'colo_usd_per_kw_month' is a field of the site"):
        validate_dict({**BASE, "vintages": [vintage]})
    liquid = {**NEW, "facility": {"rack_cooling": "liquid"}}
    with pytest.raises(ScenarioError, match="rack_cooling is 'liquid' but hall_cooling is 'air'"):
        validate_dict({**BASE, "vintages": [liquid]})


def test_a_single_fleet_of_air_racks_counted_as_liquid_is_still_warned_of():
    liquid = {"facility.rack_cooling": "liquid", "facility.hall_cooling": "liquid"}
    warnings = project(load_scenario(LLAMA, liquid), monthly=False).warnings[0]
    assert any(
        w.startswith("facility.rack_cooling is 'liquid' but h200-sxm racks are air-cooled")
        for w in warnings
    )


def test_a_retrofit_is_priced_on_the_liquid_cooled_racks_alone():
    def capex(hall: str) -> float:
        scenario = load_scenario(REFRESH, {"facility.hall_cooling": hall})
        return float(project(scenario).monthly["capex_usd"].sum())

    scenario = load_scenario(REFRESH)
    gb300 = scenario.expand()[1].fleet
    racks = gb300.gpu_count / gb300.gpus_per_rack  # 10; the H200 fleet's 32 racks are air-cooled
    retrofit = racks * scenario.facility.liquid_retrofit_usd_per_rack
    assert capex("air_retrofit_liquid") - capex("liquid") == pytest.approx(retrofit, abs=1e-6)
    # a vintage sweep of the scenario's rack cooling leaves the vintage's own
    assert scenario.takes_own_value("facility.rack_cooling") == (True, False)
