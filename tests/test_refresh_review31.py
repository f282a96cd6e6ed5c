"""Fleet refresh and vintages: a fleet-refresh review's findings.

`econ refresh` of a vintage with its own fleet.retire_month: every case buys the new fleet in
its refresh month, so the cases from the vintage's own retire month on bought it at or after it
retired: the whole analysis was refused as the scenario's own error, "vintages[0] (gb300):
fleet.retire_month is 60; expected a month after the purchase month (60)", a purchase month the
file does not give (it gives 18), and no month was valued.

Staff were all charged to the scenario's own fleet, so `Projection.vintages` gave a fleet retired
early the staff of the vintages that followed it.
"""

from __future__ import annotations

import pytest

from econ.cli import main
from econ.fleet import RefreshError, refresh_analysis
from econ.scenario import load_scenario, read_toml, validate_dict
from tests.conftest import ROOT

FILE = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"


@pytest.fixture
def retiring(tmp_path):
    """The ready-made refresh case with its GB300s retired in month 60 (bought in month 18)."""
    text = FILE.read_text()
    assert text.count("purchase_month = 18\n") == 1
    path = tmp_path / "retiring.toml"
    path.write_text(
        text.replace("purchase_month = 18\n", "purchase_month = 18\nretire_month = 60\n")
    )
    return path


def test_the_default_window_ends_before_the_vintages_own_retire_month(retiring, capsys):
    result = refresh_analysis(load_scenario(retiring), "gb300")
    assert result.table.index[0] == 18 and result.table.index[-1] == 59
    # the GB300s bought in month 18 are sold in month 60 at book: 34,284,000 x 30/72
    assert any("the new fleet's in month 60 (14,285,000 USD)" in w for w in result.warnings)
    assert main(["refresh", str(retiring), "--vintage", "gb300", "--from-month", "50"]) == 0
    assert "refresh in month 50" in capsys.readouterr().out


def test_a_month_at_or_after_the_vintages_retire_month_is_refused_in_its_words(retiring, capsys):
    assert main(["refresh", str(retiring), "--vintage", "gb300", "--to-month", "65"]) == 3
    err = capsys.readouterr().err
    assert err == (
        "error: refresh month 60 is at or after month 60, the fleet.retire_month of vintage "
        "'gb300': the new fleet is bought in the refresh month and retired in that month; "
        "expected refresh months before 60 (or no retire_month in the vintage: kept to the "
        "horizon)\n"
    )
    assert main(["refresh", str(retiring), "--vintage", "gb300", "--from-month", "62"]) == 3
    assert "is after the last candidate month (the horizon - 1, or the month before the " in (
        capsys.readouterr().err
    )
    data = read_toml(retiring)
    with pytest.raises(RefreshError, match="refresh month 61 is at or after month 60"):
        refresh_analysis(validate_dict(data), "gb300", months=[30, 61])


def test_each_vintage_carries_the_staff_of_its_own_months_in_service():
    """Staff were all charged to the scenario's own fleet: the H200s retired in month 18 of 72
    carried the GB300s' staff for 54 more months (54 x 51,200 = 2,764,800 USD), EBITDA
    19,744,610 USD in `Projection.vintages` for the 22,509,407 they earned, the GB300s
    51,214,172 for 48,449,372. Now each month's staff are shared by the GPUs in service: here
    one fleet at a time, so each carries its own months', and the scenario's total is unchanged."""
    from econ.engine import project

    scenario = load_scenario(FILE)
    result = project([scenario])
    table = result.vintages.loc[scenario.name]
    lines = result.lines
    ebitda = lines["ebitda_usd"][0]
    assert table.loc["base", "ebitda_usd"] == pytest.approx(ebitda[:19].sum(), rel=1e-12)
    assert table.loc["gb300", "ebitda_usd"] == pytest.approx(ebitda[19:].sum(), rel=1e-12)
    # by hand: revenue less power, colocation and opex of the H200s' 18 months
    h200 = (80_095.36 + 258_214.1 + 51_200 + 48_128_000 * 0.016 / 12) * 18
    assert table.loc["base", "ebitda_usd"] == pytest.approx(30_675_642.8 - h200, abs=10)
    assert result.metrics["ebitda_usd_total"][0] == pytest.approx(70_958_778.7, abs=1)


def test_overlapping_vintages_share_the_staff_by_gpus_in_service(tmp_path):
    """The H200s kept to month 24: in months 19-24 both fleets serve, 1,024 and 720 GPUs, and
    share that month's 51,200 USD of staff 1,024 : 720."""
    from econ.engine import project

    path = tmp_path / "overlap.toml"
    path.write_text(FILE.read_text().replace("retire_month = 18\n", "retire_month = 24\n", 1))
    scenario = load_scenario(path)
    table = project([scenario]).vintages.loc[scenario.name]
    staff_h200 = 51_200 * (18 + 6 * 1024 / 1744)
    own = project([validate_dict({**read_toml(path), "vintages": []})])
    # the H200s alone to month 24 with all of the staff, less the GB300s' share of 6 months
    alone = own.lines["ebitda_usd"][0][:25].sum()
    assert table.loc["base", "ebitda_usd"] == pytest.approx(
        alone + 51_200 * 24 - staff_h200, rel=1e-12
    )


def test_the_old_fleets_sale_leaves_out_a_vintage_retired_in_the_same_month(tmp_path, capsys):
    """A third vintage of 64 H200s (bought in month 6, retired in month 30) sold in month 30
    beside the old fleet: the table's sale_proceeds_usd and the book-value warning counted its
    1,804,800 USD as the old fleet's (25,868,800 USD for the H200s' 48,128,000 x 30/60 =
    24,064,000)."""
    text = FILE.read_text()
    extra = (
        '[[vintages]]\nname = "h200-more"\n\n[vintages.fleet]\ngpu_count = 64\n'
        "purchase_month = 6\nretire_month = 30\n\n"
    )
    path = tmp_path / "three.toml"
    path.write_text(text.replace("[sources]\n", extra + "[sources]\n", 1))
    result = refresh_analysis(load_scenario(path), "gb300", months=[29, 30, 31])
    assert result.table.sale_proceeds_usd.tolist() == pytest.approx(
        [48_128_000 * f / 60 for f in (31, 30, 29)], rel=1e-12
    )
    result = refresh_analysis(load_scenario(path), "gb300", months=[30])
    assert any("the old fleet's sale in month 30 (24,064,000 USD)" in w for w in result.warnings)


def test_a_floor_too_small_for_the_overlap_of_two_vintages_is_refused(tmp_path):
    """The H200s kept to month 24 beside the GB300s bought in month 18: 32 + 10 racks stand on
    the floor in months 19-24, 105 m² at 2.5 m² a rack. facility.floor_m2 = 80 was accepted, as
    each fleet alone fits it (80 and 25 m²); facility.critical_kw is checked at that peak."""
    from econ.scenario import ScenarioError

    data = {**read_toml(FILE), "fleet": {**read_toml(FILE)["fleet"], "retire_month": 24}}
    data["facility"] = {**data["facility"], "floor_m2": 80.0}
    with pytest.raises(ScenarioError) as caught:
        validate_dict(data)
    assert (
        "facility.floor_m2 = 80 m² is below the floor the fleet and its vintages need in month "
        "19: 42 racks in service (base 32, gb300 10) x 2.5 m² = 105 m²; expected a floor that "
        "holds every rack in service at once"
    ) in str(caught.value)
    validate_dict({**data, "facility": {**data["facility"], "floor_m2": 105.0}})
    # no overlap (the ready-made refresh in month 18): the larger fleet alone, 80 m², fits
    validate_dict({**read_toml(FILE), "facility": {**data["facility"], "floor_m2": 80.0}})


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (
            ["gb300", "gb300"],
            "vintage name 'gb300' is used more than once (vintages[0] and vintages[1]); "
            "expected a distinct name for each vintage",
        ),
        (["base"], "vintages[0].name = 'base': the name of the scenario's own fleet"),
    ],
)
def test_a_vintage_named_as_another_or_as_the_fleet_is_refused(names, said, tmp_path, capsys):
    """Two vintages named 'gb300' were projected, the vintage table indexed twice by the same
    name, and `econ refresh --vintage gb300` dropped both from its cases (replacing only the
    first); a vintage named 'base' shared the own fleet's name in the table and warnings."""
    data = read_toml(FILE)
    vintage = data["vintages"][0]
    data["vintages"] = [{**vintage, "name": name} for name in names]
    from econ.scenario import ScenarioError

    with pytest.raises(ScenarioError) as caught:
        validate_dict(data)
    assert said in str(caught.value)
    text = FILE.read_text().replace('name = "gb300"', f'name = "{names[0]}"')
    if len(names) > 1:
        start = text.index("[[vintages]]")
        end = text.index("[sources]")
        text = text[:end] + text[start:end] + text[end:]
    path = tmp_path / "named.toml"
    path.write_text(text)
    assert main(["project", str(path), "--format", "json"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and said in err and err.count("\n") == 1
