"""The app's own caches (st.cache_data) follow a change of models/ as econ's do (a library
review: a server left running across a `git pull` of new MLPerf rows showed the old figures,
econ's caches being emptied and the app's not)."""

from __future__ import annotations

import shutil

from econ.ui import compute
from tests.conftest import ROOT

MLPERF = "benchmarks/mlperf_inference_llm.csv"


def test_a_changed_catalog_empties_the_apps_caches(tmp_path, monkeypatch):
    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    monkeypatch.setenv("ECON_MODELS_DIR", str(models))
    compute.drop_stale_caches()
    before = compute.catalog()
    first = before["result"].iloc[0]
    compute.drop_stale_caches()  # nothing changed: the cached table stays
    assert compute.catalog().equals(before)
    text = (models / MLPERF).read_text(encoding="utf-8")
    head, rows = text.split("\n", 1)
    row = rows.split("\n", 1)[0]
    cells = row.split(",")
    cells[cells.index(str(float(first)))] = str(2 * float(first))
    (models / MLPERF).write_text(head + "\n" + rows.replace(row, ",".join(cells), 1), "utf-8")
    assert compute.catalog()["result"].iloc[0] == first  # still the cached table
    compute.drop_stale_caches()  # as every run of the app does
    assert compute.catalog()["result"].iloc[0] == 2 * first
