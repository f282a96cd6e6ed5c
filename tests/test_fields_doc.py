"""docs/fields.md, the reference of every scenario field: current with the models, complete against
the JSON schema (`econ schema`), and its minimal scenario validates and projects."""

from __future__ import annotations

import math
import re
import tomllib

from econ import load_scenario, project
from econ.cli import main as econ
from econ.labels import FIELD_LABELS, SHOWN_UNITS
from econ.scenario import json_schema
from scripts import fields_doc
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "fields.md"


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def schema_paths() -> set[str]:
    """Every field path of the JSON schema, walked on its own (not through the script's walk of
    the models): `fleet.gpu_count`, a list's items as `financing.tranches[].name`, each member of
    a union (a tranche's kinds) at the same path."""
    schema = json_schema()
    defs = schema["$defs"]
    found: set[str] = set()

    def walk(node: dict, path: str) -> None:
        if "$ref" in node:
            walk(defs[node["$ref"].rpartition("/")[2]], path)
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in node.get(key, ()):
                walk(branch, path)
        if "items" in node and isinstance(node["items"], dict):
            walk(node["items"], f"{path}[]")
        for name, child in node.get("properties", {}).items():
            child_path = f"{path}.{name}" if path else name
            found.add(child_path)
            walk(child, child_path)

    walk(schema, "")
    return found


def page_rows() -> dict[str, list[str]]:
    """The page's table rows by field path: [label, type, unit, default, allowed, description]."""
    rows = {}
    for line in page().splitlines():
        match = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if match:
            rows.setdefault(match.group(1), match.group(2).split(" | "))
    return rows


def test_committed_page_is_what_the_models_give():
    assert fields_doc.main(["--check"]) == 0, "run scripts/fields_doc.py and commit docs/fields.md"


def test_the_check_fails_on_a_stale_page(tmp_path, monkeypatch):
    stale = tmp_path / "fields.md"
    stale.write_text(page().replace("`fleet.gpu_count`", "`fleet.gpus`"), encoding="utf-8")
    monkeypatch.setattr(fields_doc, "TARGET", stale)
    monkeypatch.setattr(fields_doc, "ROOT", tmp_path)
    assert fields_doc.main(["--check"]) == 1


def test_every_schema_field_is_on_the_page():
    text = page()
    paths = schema_paths()
    assert len(paths) > 250  # the walk reached every section, tranche kind and vintage
    missing = []
    for path in sorted(paths):
        bare = path.replace("[]", "")
        if not any(f"`{form}`" in text for form in (path, f"[{bare}]", f"[[{bare}]]")):
            missing.append(path)
    assert not missing, missing


def test_every_field_on_the_page_is_a_schema_field():
    assert set(page_rows()) <= schema_paths()


def test_labels_and_units_are_econs():
    rows = page_rows()
    assert (
        rows["throughput.tokens_per_s_per_gpu"][0]
        == FIELD_LABELS["throughput.tokens_per_s_per_gpu"]
    )
    assert rows["market.price_usd_per_mtok"][2] == SHOWN_UNITS["USD per million tokens"]
    # a field the report found named nowhere in docs/: its unit, default and range from the model
    assert rows["facility.colo_usd_per_kw_month"][2:5] == ["USD/kW-month", "0", "0 ≤ x"]
    assert rows["utilization.churn_annual"][2:5] == ["fraction/year", "0", "0 ≤ x < 1"]


def minimal_example() -> str:
    section = page().split("## A minimal scenario", 1)[1]
    return re.search(r"```toml\n(.*?)```", section, flags=re.S).group(1)


def test_minimal_example_validates_and_projects(tmp_path, capsys):
    path = tmp_path / "first.toml"
    path.write_text(minimal_example(), encoding="utf-8")
    assert econ(["validate", str(path)]) == 0
    # validate's warnings on the inputs (the rack and hardware catalogs contradicted, a field that
    # has no effect): none for a first-time user to puzzle over
    assert capsys.readouterr().err == ""
    assert econ(["project", str(path)]) == 0
    summary = project(load_scenario(path)).summary.iloc[0]
    data = tomllib.loads(minimal_example())
    fleet, capex = data["fleet"], data["capex"]
    systems = fleet["gpu_count"] / capex["gpus_per_system"]
    assert summary["capex_usd_total"] == systems * capex["system_price_usd"]
    assert math.isfinite(summary["npv_usd"])
    assert math.isfinite(summary["lcot_usd_per_mtok"])
