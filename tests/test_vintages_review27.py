"""How much work a scenario's vintages can ask for: a security review's findings.

`vintages` had no bound, and each is about 20 characters of a link: a 232-character link of 40
vintages over 600 months made `econ refresh` take 84 s and 5 GB (each case projected all its rows
at once), the Power page ran that refresh as it opened, and 3,600 vintages took 20 s to validate.
Now a scenario holds at most MAX_VINTAGES, the engine projects chunks of whole scenarios bounded by
rows x months and counts a chunk's rows in its memory guard, and the Power page runs a refresh
above REFRESH_ON_OPEN_ROW_MONTHS only when asked.
"""

from __future__ import annotations

import numpy as np
import pytest
import tomli_w

from econ import ScenarioBatch, load_scenario, project
from econ.cli import main
from econ.scenario import ScenarioError, read_toml, validate_dict
from econ.scenario.models import MAX_VINTAGES
from econ.ui import state
from tests.conftest import ROOT
from tests.test_app import errors, metric, shown, widget
from tests.test_app_links import opened

SEED = ROOT / "models" / "scenarios" / "deepseek-r1-gb200-nvl72.toml"
REFRESH = ROOT / "models" / "scenarios" / "h200-fleet-gb300-refresh.toml"
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


# --- the engine's chunks and memory guard -------------------------------------------------------


def test_chunks_are_whole_scenarios_within_a_bound_of_rows_by_months(monkeypatch):
    # A refresh projected its 601 cases of 41 rows over 601 months in one chunk (5 GB of working
    # arrays): chunks now hold whole scenarios up to CHUNK_ROW_MONTHS, and find the same figures.
    from econ import engine
    from econ.fleet import refresh_analysis

    scenario = load_scenario(REFRESH)
    whole = refresh_analysis(scenario, "gb300")
    chunks = []
    original = engine._project

    def spy(b, monthly=True):
        chunks.append((b.n, b.rows * (int(b.horizon_months.max()) + 1)))
        return original(b, monthly)

    monkeypatch.setattr(engine, "_project", spy)
    monkeypatch.setattr(engine, "CHUNK_ROW_MONTHS", 10 * 73, raising=False)
    chunked = refresh_analysis(scenario, "gb300")
    assert len(chunks) > 5 and sum(n for n, _ in chunks) == 55  # the keep case and 54 months
    assert all(size <= 10 * 73 for _, size in chunks), chunks
    assert chunked.best_month == whole.best_month
    for key in ("npv_usd", "sale_proceeds_usd"):
        np.testing.assert_allclose(chunked.table[key], whole.table[key], rtol=1e-9)
    assert chunked.warnings == whole.warnings


def test_a_chunk_holds_one_scenario_at_least_and_rows_of_one_row_scenarios_alike(monkeypatch):
    from econ import engine

    seed = load_scenario(SEED)
    batch = ScenarioBatch.repeat(seed, 5, {"market.price_usd_per_mtok": np.linspace(0.2, 0.6, 5)})
    monkeypatch.setattr(engine, "CHUNK_ROW_MONTHS", 2 * 73)
    assert engine.chunk_bounds(batch) == [(0, 2), (2, 4), (4, 5)]
    monkeypatch.setattr(engine, "CHUNK_ROW_MONTHS", 1)  # smaller than any scenario
    assert engine.chunk_bounds(batch) == [(i, i + 1) for i in range(5)]
    many = ScenarioBatch.from_scenarios(
        [validate_dict({**with_vintages(2, 72), "name": f"s{i}"}) for i in range(3)]
    )
    monkeypatch.setattr(engine, "CHUNK_ROW_MONTHS", 7 * 73)  # 3 rows each: two fit
    assert engine.chunk_bounds(many) == [(0, 2), (2, 3)]
    assert engine.chunk_rows(many, engine.chunk_bounds(many)).tolist() == [6, 3]


def test_the_monthly_memory_guard_counts_each_vintages_rows(monkeypatch):
    # The guard counted scenarios: one scenario of 50 vintages over 600 months was counted as
    # one row's lines, whatever its rows took to project.
    from econ import engine, memory
    from econ.errors import InputError

    scenario = validate_dict(with_vintages(MAX_VINTAGES, financing={"repayment": "level_payment"}))
    lines = engine.monthly_memory_bytes(1, 601)
    monkeypatch.setattr(memory, "physical_bytes", lambda: lines + 2**20)  # 51 rows need more
    with pytest.raises(InputError) as refused:
        project(scenario)
    message = str(refused.value)
    assert "the working arrays of a chunk of 51 rows" in message
    assert "a row for each scenario and each of its vintages" in message
    working, rows = engine.chunk_working_bytes(ScenarioBatch.from_scenarios(scenario))
    assert rows == 51 and working > 2**20
    monkeypatch.setattr(memory, "physical_bytes", lambda: lines + working)
    assert len(project(scenario).monthly) == 601


# --- the Power page's refresh ---------------------------------------------------------------------


def test_refresh_size_counts_the_cases_rows_and_months_before_building_them():
    from econ.fleet import RefreshSize, refresh_scenarios, refresh_size

    scenario = validate_dict(with_vintages(1, financing={"repayment": "level_payment"}))
    assert refresh_size(scenario, "v0") == RefreshSize(cases=600, rows=2, months=601)
    assert refresh_size(scenario, "v0").row_months == 721_200
    assert refresh_size(scenario, "v0", range(10, 20)).cases == 11
    ready = load_scenario(REFRESH)
    keep, cases, _, _ = refresh_scenarios(ready, "gb300")
    batch = ScenarioBatch.from_scenarios([keep, *cases])
    size = refresh_size(ready, "gb300")
    assert (size.cases, size.months) == (batch.n, int(batch.horizon_months.max()) + 1)
    assert batch.rows <= size.cases * size.rows  # (the keep case has the old fleet alone)


def test_the_power_page_runs_a_large_refresh_only_when_asked():
    # A 116-character link (one vintage, 600 months) ran 600 cases as the page opened: 8 s and
    # 730 MB of the server's each time; 10 vintages 27 s and 1.6 GB. Above the bound the page
    # says what the refresh would project and waits for its button.
    from econ.ui.pages.power import REFRESH_ON_OPEN_ROW_MONTHS

    edits = {"horizon_months": 320, "financing": {"repayment": "level_payment"}}
    edits["vintages"] = [{"name": "next"}]
    at = opened(state.encode(edits), page="power")
    asked = [shown(i.value) for i in at.info if "row-months" in i.value]
    assert asked and "320 cases" in asked[0] and "205,440 row-months" in asked[0], asked
    assert f"more than the {REFRESH_ON_OPEN_ROW_MONTHS:,}" in asked[0]
    assert not [m for m in at.metric if m.label == "Best refresh month"]
    widget(at.button, "Run the refresh analysis").click().run()
    assert not at.exception, at.exception
    assert metric(at, "Best refresh month")
    at.run()  # another run of the page keeps it
    assert metric(at, "Best refresh month")
    assert not [i for i in at.info if "row-months" in i.value]


def test_the_power_page_runs_a_small_refresh_as_it_opens():
    at = opened(
        state.encode({"name": "refresh"}), scenario="h200-fleet-gb300-refresh", page="power"
    )
    assert metric(at, "Best refresh month")
    assert not [i for i in at.info if "row-months" in i.value]
