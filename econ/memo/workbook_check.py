"""`econ verify` of an exported workbook (econ.workbook): the scenarios are read from the Notes
sheet (`scenario_toml` rows), projected again with this econ, and every figure of the Summary sheet
(one metric per row, read back by econ.workbook.read_summary) and of the Monthly sheet (the cached
results of its formulas and its values) is compared with the projection; the stamp's econ version,
catalogs and scenario hashes are checked too.

The workbook's formulas are checked against the engine to 1e-9 relative when written (see
econ.workbook), so figures here agree within WORKBOOK_TOLERANCE of each sheet column's scale.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from econ import __version__
from econ.errors import InputError
from econ.memo.verify import NotAMemoError, Report, refuse_files
from econ.provenance import catalog_versions, scenario_sha256
from econ.scenario.errors import ScenarioError

WORKBOOK_TOLERANCE = 1e-7
"""Relative difference (to the column's largest magnitude) under which a cell agrees."""
SHEETS = ("Summary", "Monthly", "Notes")
NOTES_COLUMNS = ("section", "scenario", "item", "text")
"""The Notes sheet's columns the stamp and the embedded scenarios are read from."""


def _number(value):
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        value = float(value)
        return value if math.isfinite(value) else None
    return None


def _read(path: Path) -> dict[str, pd.DataFrame]:
    try:
        sheets = pd.read_excel(path, sheet_name=None, engine="openpyxl")
    except Exception as exc:  # openpyxl and zipfile raise many types for a damaged package
        raise NotAMemoError(
            f"{path}: not a readable workbook ({type(exc).__name__}); expected a .xlsx "
            "written by econ"
        ) from None
    missing = [name for name in SHEETS if name not in sheets]
    if missing:
        raise NotAMemoError(
            f"{path}: no {', '.join(missing)} sheet; expected a workbook written by econ"
        )
    return sheets


def verify_workbook(path: Path) -> Report:
    """Recompute an econ workbook and list each figure that differs."""
    from econ.engine import project
    from econ.reporting import flat_summary
    from econ.scenario.io import loads, scenario_to_dict
    from econ.workbook import SCENARIO_TOML_ITEM, WorkbookError, read_summary

    sheets = _read(path)
    try:
        summary = read_summary(sheets["Summary"])
    except WorkbookError as exc:
        raise NotAMemoError(f"{path}: {exc}") from None
    notes = sheets["Notes"].fillna("")
    missing = [column for column in NOTES_COLUMNS if column not in notes.columns]
    if missing:
        raise NotAMemoError(
            f"{path}: the Notes sheet has no {', '.join(repr(c) for c in missing)} column; "
            f"expected the columns {', '.join(NOTES_COLUMNS)} of a workbook written by econ"
        )
    report = Report(str(path), "workbook")
    out = report.differences
    rows = list(zip(notes["section"], notes["scenario"], notes["item"], notes["text"], strict=True))
    prov = {item: text for section, _, item, text in rows if section == "provenance"}
    hashes = {name: text for s, name, item, text in rows if item == "scenario_sha256"}
    tomls = [(name, text) for s, name, item, text in rows if item == SCENARIO_TOML_ITEM]
    if "econ_version" not in prov:
        raise NotAMemoError(f"{path}: no econ stamp in the Notes sheet; expected an econ workbook")
    if not tomls:
        raise NotAMemoError(
            f"{path}: the Notes sheet holds no scenario_toml; the workbook was written by an econ "
            "that did not embed its scenarios, or without them: it cannot be recomputed"
        )
    if str(prov["econ_version"]) != __version__:
        out.append(f"econ_version: made by econ {prov['econ_version']}, this is econ {__version__}")
    for name, version in sorted(catalog_versions().items()):
        report.checked += 1
        stamped = str(prov.get(f"catalog {name}", ""))
        if stamped != version:
            out.append(f"catalogs.{name}: stamped {stamped or 'none'}, now {version}")
    scenarios = []
    for name, text in tomls:
        try:
            scenario = loads(str(text), file=f"{path} (scenario {name})")
            refuse_files(scenario_to_dict(scenario), str(path))
        except ScenarioError as exc:
            raise InputError(
                f"{path}: the embedded scenario {name} no longer validates with econ "
                f"{__version__}: {exc}"
            ) from None
        report.checked += 1
        sha = scenario_sha256(scenario)
        if sha != str(hashes.get(name, "")):
            out.append(
                f"{name}.scenario_sha256: stamped {hashes.get(name) or 'none'}, the embedded "
                f"scenario hashes to {sha} (the scenario was changed)"
            )
        scenarios.append(scenario)
    if "Assumptions" in sheets:
        _compare_inputs(sheets["Assumptions"], scenarios, report)
    else:
        out.append("Assumptions: no such sheet; the inputs shown cannot be checked")
    projection = project(scenarios)
    _compare_frame("Summary", summary, flat_summary(projection), report)
    monthly = projection.monthly.reset_index()
    _compare_frame("Monthly", sheets["Monthly"], monthly, report)
    return report


def _compare_frame(sheet: str, shown: pd.DataFrame, expected: pd.DataFrame, report: Report):
    if len(shown) != len(expected):
        report.differences.append(f"{sheet}: {len(shown)} rows, recomputed {len(expected)}")
        return
    for column in shown.columns:
        if column in ("scenario", "date") or column not in expected.columns:
            continue
        values = expected[column].tolist()
        cells = shown[column].tolist()
        if column == "warnings":
            for k, (cell, value) in enumerate(zip(cells, values, strict=True)):
                report.checked += 1
                if str(cell if isinstance(cell, str) else "") != str(value or ""):
                    report.differences.append(f"{sheet}.{column} row {k + 1}: warnings differ")
            continue
        numbers = [_number(v) for v in values]
        finite = [abs(v) for v in numbers if v is not None]
        scale = max(finite, default=0.0) or 1.0
        for k, (cell, value) in enumerate(zip(cells, numbers, strict=True)):
            report.checked += 1
            got = _number(cell)
            if got is None and value is None:
                continue
            if got is None or value is None or abs(got - value) > WORKBOOK_TOLERANCE * scale:
                where = f"{sheet}.{column}" + (f" row {k + 1}" if len(cells) > 1 else "")
                report.differences.append(f"{where}: shown {cell!r}, recomputed {value!r}")
                break  # one line per column: the first cell that differs


def _compare_inputs(shown: pd.DataFrame, scenarios, report: Report) -> None:
    """Each input the Assumptions sheet shows against the embedded scenario's: the figures are
    the scenario's, so an input edited in the workbook (and recalculated there or not) is an
    input the figures do not rest on. Numbers, text and blanks are compared; lists and dates are
    left to the scenario's hash."""
    from econ.workbook import scenario_inputs

    if "input" not in shown.columns:
        report.differences.append("Assumptions: no 'input' column; expected an econ workbook")
        return
    rows = {str(path): i for i, path in enumerate(shown["input"]) if isinstance(path, str)}
    n = len(scenarios)
    for k, scenario in enumerate(scenarios):
        column = "value" if n == 1 else f"value ({k + 1})"
        if column not in shown.columns:
            report.differences.append(f"Assumptions: no '{column}' column")
            continue
        for path, value in scenario_inputs(scenario):
            if path not in rows or isinstance(value, list | tuple | dict) or hasattr(value, "year"):
                continue
            report.checked += 1
            cell = shown[column].iloc[rows[path]]
            if _same_input(cell, value):
                continue
            where = f"Assumptions.{path}" + ("" if n == 1 else f" (scenario {k + 1})")
            report.differences.append(
                f"{where}: shown {_shown(cell)}, the embedded scenario gives {_shown(value)}"
            )


def _same_input(cell, value) -> bool:
    blank = cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell == ""
    if value is None or value == "":
        return blank
    if isinstance(value, bool):
        return (
            not blank and bool(cell) == value and str(cell).lower() in ("true", "false", "1", "0")
        )
    if isinstance(value, int | float):
        got = _number(cell)
        return got is not None and abs(got - value) <= 1e-12 * max(abs(value), 1.0)
    return str(cell) == str(value)


def _shown(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "a blank"
    return repr(value.item() if hasattr(value, "item") else value)
