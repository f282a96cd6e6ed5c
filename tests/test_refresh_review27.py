"""`econ refresh`, `econ size` and whole-number options: an infrastructure review's findings.

The refresh sized its new fleet and the default envelope on the raw power.kw_per_gpu, not the IT
load per GPU its power.kw_per_gpu_definition gives; it dropped the scenario's own warnings; its
default window ignored the old fleet's purchase month. Whole-number options exited 2 on nan and
inf; `econ size` said nothing of a retrofitted air hall's power distribution and took a rack at
1e308 USD. Sections are numbered as the review's findings (the first, `econ throughput simulate
--gpus`, is tested in test_simulator.py).
"""

from __future__ import annotations

import json

import pytest

from econ.cli import main
from econ.fleet import RefreshError, refresh_analysis
from econ.scenario import load_scenario, read_toml, validate_dict
from tests.conftest import ROOT

FILE = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"


def _with(fleet_power: dict | None = None, vintage_power: dict | None = None):
    """The ready-made refresh case with its fleet's and its GB300 vintage's power sections
    changed (the vintage's replaced whole)."""
    data = read_toml(FILE)
    data["power"].update(fleet_power or {})
    if vintage_power is not None:
        data["vintages"][0]["power"] = vintage_power
    return validate_dict(data)


# --- 2. The envelope and the new fleet on the IT boundary -----------------------------------------

CHIP_ONLY = {"kw_per_gpu": 1.0, "kw_per_gpu_definition": "chip_only", "host_overhead_share": 0.37}
"""The H200s' 1.37 kW of IT load per GPU given as the chip's 1.0 kW and a 37% host share."""


@pytest.mark.parametrize(
    ("fleet_power", "vintage_power"),
    [
        # 1.37 kW of IT load as 1.0 kW of chip and a 37% host share
        (CHIP_ONLY, {"kw_per_gpu": 1.8333, "kw_per_gpu_definition": "chip_plus_host"}),
        # the GB300s' 1.8333 kW of IT load given at the meter: x PUE 1.2
        ({}, {"kw_per_gpu": 1.8333 * 1.2, "kw_per_gpu_definition": "utility_meter"}),
    ],
    ids=["chip_only-fleet", "utility_meter-vintage"],
)
def test_the_refresh_sizes_on_it_load_whatever_boundary_the_power_is_given_on(
    fleet_power, vintage_power
):
    """The ready-made case places 10 GB300 racks (720 GPUs) in the H200s' 1,402.88 kW. Given
    the same IT loads on another boundary, the refresh counted the raw figures: 1,024 kW and 504
    GPUs (NPV 5.71M instead of 8.62M) for chip-only H200s, 576 GPUs for GB300s at the meter,
    while `econ project` of either file gives the ready-made NPV."""
    base = refresh_analysis(load_scenario(FILE), "gb300", months=[18])
    scenario = _with(fleet_power, vintage_power)
    result = refresh_analysis(scenario, "gb300", months=[18])
    assert result.table.new_gpu_count.iloc[0] == base.table.new_gpu_count.iloc[0] == 720
    assert result.npv_best_usd == pytest.approx(base.npv_best_usd, rel=1e-9)
    assert result.npv_keep_usd == pytest.approx(base.npv_keep_usd, rel=1e-9)


def test_an_envelope_of_the_installed_it_load_is_no_expansion():
    """`--mw 1.40288`, the chip-only H200s' IT load, was said to be 1.4x the installed fleet's
    1.02 MW (1,024 x the chip's 1.0 kW), a refresh holding an expansion's gain."""
    scenario = _with(CHIP_ONLY, {"kw_per_gpu": 1.8333, "kw_per_gpu_definition": "chip_plus_host"})
    result = refresh_analysis(scenario, "gb300", months=[18], power_mw=1.024 * 1.37)
    assert not [w for w in result.warnings if "envelope" in w]
    larger = refresh_analysis(scenario, "gb300", months=[18], power_mw=2.0)
    assert [w for w in larger.warnings if "envelope" in w] == [
        "the envelope of 2 MW is 1.4x the installed fleet's 1.4 MW: 1,080 new GPUs replace "
        "1,024, so the gain holds an expansion's, not only the refresh's"
    ]


def test_an_envelope_too_small_names_the_it_load_per_gpu():
    scenario = _with({}, {"kw_per_gpu": 1.8333 * 1.2, "kw_per_gpu_definition": "utility_meter"})
    with pytest.raises(
        RefreshError, match=r"\(72 GPUs x 1\.8333 kW of IT load, [0-9.]+ kW\); expected at "
    ):
        refresh_analysis(scenario, "gb300", power_mw=0.1)


# --- 3. The scenario's own warnings ---------------------------------------------------------------


def test_the_refresh_says_the_warnings_validate_gives_its_case():
    """A GB300 vintage without a power section of its own takes the H200s' 1.37 kW, 33% below
    the rack catalog's; without fleet.gpus_per_rack it takes the H200s' 32 and places 23 racks
    of 32 (736 GPUs, not a whole number of NVL72 systems). `econ validate` and `econ project`
    warned of both; the refresh, whose answer rests on them, said neither."""
    data = read_toml(FILE)
    del data["vintages"][0]["power"]
    borrowed = refresh_analysis(validate_dict(data), "gb300", months=[18])
    assert borrowed.table.new_gpu_count.iloc[0] == 1008  # 1,402.88 kW / (72 x 1.37 kW): 14 racks
    said = borrowed.warnings[1:]
    assert len(said) == 2
    assert said[0].startswith("[gb300] this vintage runs on gb300-nvl72, not the scenario's")
    assert said[1].startswith("[gb300] power.kw_per_gpu gives 1.37 kW of IT load per GPU, 33%")
    data = read_toml(FILE)
    del data["vintages"][0]["fleet"]["gpus_per_rack"]
    unracked = refresh_analysis(validate_dict(data), "gb300", months=[18])
    assert unracked.table.new_gpu_count.iloc[0] == 736
    said = unracked.warnings[1:]
    assert said[0].startswith("[gb300] fleet.gpu_count = 736 is not a whole number of gb300-nvl72")
    assert said[1].startswith("[gb300] fleet.gpus_per_rack is not given: 32 GPUs per rack")
    assert len(set(unracked.warnings)) == len(unracked.warnings)


def test_the_cli_says_the_cases_warnings_on_stderr_and_in_json(tmp_path, capsys):
    data = FILE.read_text().replace("[vintages.power]\nkw_per_gpu = 1.8333\n", "")
    assert "[vintages.power]" not in data
    path = tmp_path / "nopow.toml"
    path.write_text(data)
    args = ["refresh", str(path), "--vintage", "gb300", "--to-month", "18"]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[1].startswith("warning: [gb300] this vintage runs on gb300-nvl72")
    assert main([*args, "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert warnings[1].startswith("[gb300] this vintage runs on gb300-nvl72")
    assert len(warnings) == len(err) == 3


# --- 4. The default window starts after the old fleet's purchase ----------------------------------

LATE = {"fleet.purchase_month": 24, "fleet.retire_month": 30}
"""The H200s bought in month 24, after the GB300s' month 18."""


def test_the_default_window_starts_after_the_old_fleets_purchase(capsys):
    """It started at the vintage's month 18, and the case of month 18 was refused as the
    scenario's: "fleet.retire_month is 18; expected a month after the purchase month (24)", a
    month the user had not given (they gave 30)."""
    result = refresh_analysis(load_scenario(FILE, LATE), "gb300")
    assert result.table.index[0] == 25 and result.table.index[-1] == 71
    overrides = [f"--set={k}={v}" for k, v in LATE.items()]
    assert main(["refresh", str(FILE), "--vintage", "gb300", *overrides, "--to-month", "26"]) == 0
    assert "refresh in month 25" in capsys.readouterr().out


def test_the_apps_refresh_window_starts_where_the_commands_does():
    """The Power page seeded its "From month" box with the vintage's month 18, which the
    analysis then refused (the H200s are bought in month 24)."""
    from econ.ui import compute
    from econ.ui.state import scenario_text

    text = scenario_text(load_scenario(FILE, LATE))
    assert compute.earliest_refresh(text, "gb300") == 25
    assert compute.earliest_refresh(FILE.read_text(), "gb300") == 18


@pytest.mark.parametrize("option", ["--from-month", "--to-month"])
def test_a_month_before_the_old_fleet_can_retire_is_refused_by_name(option, capsys):
    overrides = [f"--set={k}={v}" for k, v in LATE.items()]
    assert main(["refresh", str(FILE), "--vintage", "gb300", *overrides, option, "20"]) == 3
    assert capsys.readouterr().err == (
        f"error: {option} = 20: expected a month from 25, the first the old fleet can retire in "
        "(the month after fleet.purchase_month = 24)\n"
    )
    with pytest.raises(RefreshError, match="refresh month 20 is before month 25, the first the"):
        refresh_analysis(load_scenario(FILE, LATE), "gb300", months=[20, 30])


# --- 5. Whole-number options given nan or inf -----------------------------------------------------

SIM = ["throughput", "simulate", "--hardware", "h200-sxm", "--model", "llama2-70b"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["refresh", str(FILE), "--vintage", "gb300", "--from-month", "nan"], "--from-month = nan"),
        (["refresh", str(FILE), "--vintage", "gb300", "--to-month", "inf"], "--to-month = inf"),
        (["size", "--hardware", "gb300-nvl72", "--systems-per-rack", "nan"], "--systems-per-rack"),
        ([*SIM, "--scenario", "server", "--gpus", "nan"], "--gpus = nan"),
        ([*SIM, "--scenario", "server", "--points", "nan"], "--points = nan"),
        ([*SIM, "--scenario", "server", "--max-gpus", "inf"], "--max-gpus = inf"),
        ([*SIM, "--scenario", "server", "--draft-tokens", "-inf"], "--draft-tokens = -inf"),
        (["app", "--port", "nan"], "--port = nan"),
    ],
)
def test_a_whole_number_option_given_nan_or_inf_exits_3_naming_it(argv, said, capsys):
    """They exited 2 with argparse's "invalid int value: 'nan'", while docs/inputs.md says any
    number option given nan or inf exits 3 naming the option."""
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and "expected a finite" in err, err


def test_a_whole_number_option_given_a_fraction_exits_3_and_text_stays_a_usage_error(capsys):
    refresh = ["refresh", str(FILE), "--vintage", "gb300"]
    assert main([*refresh, "--to-month", "20.5"]) == 3
    assert capsys.readouterr().err == (
        "error: --to-month = 20.5: expected a whole number (a month from 1 to 600)\n"
    )
    assert main([*refresh, "--to-month", "2e1", "--format", "json"]) == 0  # 20, as `whole` takes
    assert json.loads(capsys.readouterr().out)["months"][-1]["refresh_month"] == 20
    with pytest.raises(SystemExit) as usage:
        main([*refresh, "--to-month", "abc"])
    assert usage.value.code == 2


# --- 6. A retrofitted air hall's power distribution -----------------------------------------------


def test_liquid_racks_in_a_retrofitted_air_hall_warn_of_its_power_distribution(capsys):
    """`econ size --cooling air --retrofit-liquid` placed 132 kW GB300 racks in an air hall
    without a word of its power distribution, which docs/ready_made.md says such racks need
    rebuilt (the air-cooled 28.6 kW B200 rack above 20 kW is warned of)."""
    argv = ["size", "--mw", "10", "--hardware", "gb300-nvl72", "--cooling", "air"]
    assert main([*argv, "--retrofit-liquid", "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    said = [w for w in warnings if "retrofitted" in w]
    assert len(said) == 1 and said[0].startswith(
        "gb300-nvl72: a 132 kW rack in an air hall retrofitted for liquid cooling, above the 20 "
        "kW per rack air halls are commonly built for (models/racks.toml "
        "halls.air.legacy_max_kw_per_rack"
    )
    assert "power distribution needs rebuilding" in said[0]
    # a hall limit given says what the hall feeds, and is enforced instead (as for air racks)
    rated = [*argv, "--retrofit-liquid", "--hall-max-kw-per-rack", "140", "--format", "json"]
    assert main(rated) == 0
    assert not [w for w in json.loads(capsys.readouterr().out)["warnings"] if "retrofitted" in w]
    liquid = ["size", "--mw", "10", "--hardware", "gb300-nvl72", "--format", "json"]
    assert main(liquid) == 0
    assert not [w for w in json.loads(capsys.readouterr().out)["warnings"] if "retrofitted" in w]


# --- 7. A price per rack beyond the catalog's bound -----------------------------------------------


def test_a_price_per_rack_above_the_catalogs_bound_is_refused_with_it(capsys):
    """`--capex-usd-per-rack 1e308 --budget-usd 1e308` exited 0 and printed a 309-digit capex."""
    argv = ["size", "--mw", "10", "--hardware", "gb300-nvl72", "--budget-usd", "1e308"]
    assert main([*argv, "--capex-usd-per-rack", "1e308"]) == 3
    assert capsys.readouterr().err.startswith(
        "error: --capex-usd-per-rack = 1e+308: expected a price above 0 and at most 50,000,000 "
        "USD per rack (MAX_USD_PER_RACK, the bound models/racks.toml's capex_usd_per_rack takes"
    )
    assert main([*argv, "--capex-usd-per-rack", "5e7"]) == 0


# --- 8. The book-value warning on a share of cost -------------------------------------------------


def test_the_book_value_warning_says_a_sale_value_share_is_of_cost_at_any_age():
    """The warning sent users to depreciation.sale_value_share to price the sale, while a share
    of cost gives the same proceeds at any refresh month (24,064,000 USD at each of 18-71 at
    0.4); a resale table prices the GPUs by their age."""
    warning = refresh_analysis(load_scenario(FILE), "gb300", months=[18]).warnings[0]
    assert (
        "a resale table prices a sale by the GPUs' age in the refresh month, while "
        "depreciation.sale_value_share is a share of cost at any age (the same proceeds in every "
        "refresh month)"
    ) in warning
    shared = load_scenario(FILE, {"depreciation.sale_value_share": 0.4})
    proceeds = refresh_analysis(shared, "gb300", months=[18, 40, 71]).table.sale_proceeds_usd
    assert proceeds.nunique() == 1
