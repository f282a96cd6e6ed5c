"""Generate ``schedule_libreoffice_cases.csv``: depreciation schedules recalculated by LibreOffice.

Run once by hand when the case list changes (the test suite never runs LibreOffice)::

    .venv/bin/python tests/data/depreciation/generate_schedule_cases.py

It draws random assets (fixed seed) and asks LibreOffice Calc (Debian package
``libreoffice-calc-nogui``, headless: ``soffice --headless --convert-to csv``) for each period
of their schedules, written as spreadsheet formulas in a flat OpenDocument file (``.fods``,
plain XML):

* ``declining_balance`` by year: ``VDB(cost; salvage; life; k-1; MIN(k; life); factor; no_switch)``
  and, for some assets, by month: ``VDB(cost; salvage; life; a/12; MIN((a+1)/12; life); ...)``
  (the fractional periods of VDB are the monthly proration econ uses);
* ``sum_of_years_digits`` by year: ``SYD(cost; salvage; life; k)``;
* ``fixed_declining_balance`` by DB period: ``DB(cost; salvage; life; p; first_year_months)``;
* ``straight_line`` by month: ``SLN(cost; salvage; 12 life)``.

Columns of the output:

``case``  case number; ``method``; ``cost``, ``salvage``, ``life_years``, ``factor``,
``no_switch``, ``first_year_months``, ``in_service_month`` (the month econ starts the schedule,
drawn at random so the tests also exercise the offset); ``unit`` (``year``, ``month`` or
``db_period``) and ``index`` (1-based); ``expected`` (LibreOffice's value, full precision);
``formula``; ``source`` (the LibreOffice version).
"""

from __future__ import annotations

import csv
import html
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "schedule_libreoffice_cases.csv"
SEED = 20260301

FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="cases">
{rows}
</table:table></office:spreadsheet></office:body></office:document>
"""
# CSV export: comma, double quote, UTF-8, from line 1, full precision rather than as shown.
CSV_FILTER = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false"


def num(x: float) -> str:
    """Number text used both in the formula and in the case columns."""
    text = f"{float(x):.12g}"
    return "0" if text == "-0" else text


def r6(x: float) -> float:
    return float(f"{x:.6g}")


def cases(rng: np.random.Generator) -> list[dict]:
    out: list[dict] = []
    u = rng.uniform

    def asset(method, **kw):
        base = dict(
            case=len({c["case"] for c in out}) + 1,
            method=method,
            factor="",
            no_switch="",
            first_year_months="",
            in_service_month=int(rng.integers(1, 7)),
        )
        base.update(kw)
        return base

    def add(row, unit, index, formula):
        out.append(dict(row, unit=unit, index=index, formula=formula))

    for i in range(30):  # declining balance by year; the first 6 also by month
        cost = r6(u(1e3, 5e6))
        salvage = r6(cost * u(0, 0.3)) if rng.random() < 0.8 else 0.0
        life = (
            float(rng.integers(2, 9))
            if rng.random() < 0.75
            else float(rng.choice([2.5, 3.25, 4.5, 5.5, 6.75]))
        )
        factor = float(rng.choice([1.0, 1.5, 2.0, 2.5])) if rng.random() < 0.8 else r6(u(0.5, 3))
        no_switch = bool(rng.random() < 0.25)
        row = asset(
            "declining_balance",
            cost=cost,
            salvage=salvage,
            life_years=life,
            factor=factor,
            no_switch=no_switch,
        )
        args = f"{num(cost)};{num(salvage)};{num(life)}"
        tail = f"{num(factor)};{1 if no_switch else 0}"
        for k in range(1, int(np.ceil(life)) + 1):
            add(row, "year", k, f"VDB({args};{k - 1};MIN({k};{num(life)});{tail})")
        if i < 6:
            for a in range(int(np.ceil(life * 12))):
                add(row, "month", a + 1, f"VDB({args};{a}/12;MIN({a + 1}/12;{num(life)});{tail})")

    for _ in range(16):  # sum of years' digits by year
        cost = r6(u(1e3, 5e6))
        salvage = r6(cost * u(0, 0.3)) if rng.random() < 0.8 else 0.0
        life = (
            float(rng.integers(1, 9)) if rng.random() < 0.8 else float(rng.choice([3.5, 4.5, 5.5]))
        )
        row = asset("sum_of_years_digits", cost=cost, salvage=salvage, life_years=life)
        for k in range(1, int(np.floor(life)) + 1):
            add(row, "year", k, f"SYD({num(cost)};{num(salvage)};{num(life)};{k})")

    for _ in range(16):  # fixed declining balance by DB period
        cost = r6(u(1e3, 5e6))
        salvage = r6(cost * u(0.02, 0.4))
        life = int(rng.integers(2, 9))
        month = int(rng.integers(1, 13))
        row = asset(
            "fixed_declining_balance",
            cost=cost,
            salvage=salvage,
            life_years=float(life),
            first_year_months=month,
        )
        for p in range(1, life + (1 if month < 12 else 0) + 1):
            add(row, "db_period", p, f"DB({num(cost)};{num(salvage)};{life};{p};{month})")

    for _ in range(8):  # straight line by month
        cost = r6(u(1e3, 5e6))
        salvage = r6(cost * u(0, 0.3))
        life = float(rng.choice([3.0, 4.0, 5.0, 5.5, 6.0, 7.0]))
        row = asset("straight_line", cost=cost, salvage=salvage, life_years=life)
        add(row, "month", 1, f"SLN({num(cost)};{num(salvage)};{num(life)}*12)")
    return out


def recalculate(formulas: list[str]) -> tuple[list[str], str]:
    version = subprocess.run(
        ["soffice", "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    rows = "\n".join(
        '<table:table-row><table:table-cell table:formula="'
        + html.escape("of:=" + f)
        + '" office:value-type="float" office:value="0"/>'
        "</table:table-row>"
        for f in formulas
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "cases.fods"
        src.write_text(FODS.format(rows=rows), encoding="utf-8")
        # A private profile: never share or lock the user's LibreOffice profile.
        profile = (Path(tmp) / "profile").as_uri()
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation={profile}",
                "--headless",
                "--convert-to",
                CSV_FILTER,
                "--outdir",
                tmp,
                str(src),
            ],
            capture_output=True,
            check=True,
            timeout=600,
        )
        lines = (Path(tmp) / "cases.csv").read_text(encoding="utf-8").splitlines()
    if len(lines) != len(formulas):
        sys.exit(f"LibreOffice returned {len(lines)} rows for {len(formulas)} formulas")
    return [line.strip().strip('"') for line in lines], " ".join(version.split()[:2])


def main() -> None:
    rows = cases(np.random.default_rng(SEED))
    values, version = recalculate([r["formula"] for r in rows])
    columns = [
        "case",
        "method",
        "cost",
        "salvage",
        "life_years",
        "factor",
        "no_switch",
        "first_year_months",
        "in_service_month",
        "unit",
        "index",
        "expected",
        "formula",
        "source",
    ]
    with OUT.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row, text in zip(rows, values, strict=True):
            try:
                value = float(text)
            except ValueError:
                sys.exit(f"LibreOffice answered {text!r} to {row['formula']}")
            record = dict(
                row,
                expected=repr(value),
                formula="=" + row["formula"],
                source=f"{version} headless recalculation",
            )
            for key in ("cost", "salvage", "life_years", "factor"):
                if record[key] != "":
                    record[key] = num(record[key])
            if record["no_switch"] != "":
                record["no_switch"] = "TRUE" if record["no_switch"] else "FALSE"
            writer.writerow([record[c] for c in columns])
    print(f"wrote {len(rows)} periods of {rows[-1]['case']} assets to {OUT}")


if __name__ == "__main__":
    main()
