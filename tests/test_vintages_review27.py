"""How much work a scenario's vintages can ask for: a security review's findings.

`vintages` had no bound, and each is about 20 characters of a link: a 232-character link of 40
vintages over 600 months made `econ refresh` take 84 s and 5 GB, and 3,600 vintages took 20 s to
validate. Now a scenario holds at most MAX_VINTAGES.
"""

from __future__ import annotations

import pytest
import tomli_w

from econ.cli import main
from econ.scenario import ScenarioError, read_toml, validate_dict
from econ.scenario.models import MAX_VINTAGES
from econ.ui import state
from tests.conftest import ROOT
from tests.test_app import errors
from tests.test_app_links import opened

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
TOO_MANY = f"{MAX_VINTAGES + 1} vintages; expected at most 50 (one GPU generation a year over the "
TOO_MANY += "longest horizon, 600 months)"


def with_vintages(n: int, horizon: int = 600, **sections) -> dict:
    """The seed over `horizon` months with n vintages of its own hardware (about 20 characters
    of a link each)."""
    data = read_toml(SEED)
    data.update(horizon_months=horizon, vintages=[{"name": f"v{i}"} for i in range(n)])
    for name, fields in sections.items():
        data[name] = {**data.get(name, {}), **fields}
    return data


# --- the bound ------------------------------------------------------------------------------------


def test_a_scenario_holds_at_most_fifty_vintages_one_a_year_over_the_longest_horizon():
    assert MAX_VINTAGES == 50
    assert len(validate_dict(with_vintages(MAX_VINTAGES)).vintages) == MAX_VINTAGES
    with pytest.raises(ScenarioError, match=TOO_MANY.replace("(", r"\(").replace(")", r"\)")):
        validate_dict(with_vintages(MAX_VINTAGES + 1))


def test_econ_project_refuses_a_file_of_too_many_vintages_with_exit_3(tmp_path, capsys):
    # `econ project vint300.toml --out x.xlsx` took 31 s and 4.4 GB
    file = tmp_path / "vintages.toml"
    file.write_text(tomli_w.dumps(with_vintages(300)))
    assert main(["project", str(file)]) == 3
    err = capsys.readouterr().err
    assert "300 vintages; expected at most 50" in err and "Traceback" not in err


def test_a_link_of_thousands_of_vintages_is_refused_before_any_is_validated():
    # 3,600 vintages fit a link of 11,752 characters and took 20.6 s and 768 MB to open
    edits = state.encode({"vintages": [{"name": f"v{i}"} for i in range(3600)]})
    at = opened(edits)
    assert any("3,600 vintages; expected at most 50" in e for e in errors(at)), errors(at)
