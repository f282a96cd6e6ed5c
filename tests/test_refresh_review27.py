"""`econ refresh`, `econ size` and whole-number options: an infrastructure review's findings.

The refresh sized its new fleet and the default envelope on the raw power.kw_per_gpu, not the IT
load per GPU its power.kw_per_gpu_definition gives; it dropped the scenario's own warnings; its
default window ignored the old fleet's purchase month. Whole-number options exited 2 on nan and
inf; `econ size` said nothing of a retrofitted air hall's power distribution and took a rack at
1e308 USD. Sections are numbered as the review's findings (the first, `econ throughput simulate
--gpus`, is tested in test_simulator.py).
"""

from __future__ import annotations

import pytest

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
    with pytest.raises(RefreshError, match=r"\(72 GPUs x 1\.8333 kW of IT load\); expected at "):
        refresh_analysis(scenario, "gb300", power_mw=0.1)
