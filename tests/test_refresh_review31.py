"""`econ refresh` of a vintage with its own fleet.retire_month: a fleet-refresh review's findings.

Every case buys the new fleet in its refresh month, so the cases from the vintage's own retire
month on bought it at or after it retired: the whole analysis was refused as the scenario's own
error, "vintages[0] (gb300): fleet.retire_month is 60; expected a month after the purchase month
(60)", a purchase month the file does not give (it gives 18), and no month was valued.
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
