"""Resale index files: published used-GPU resale values by age, as shares of the new price.

An index file (models/market/resale_index.csv ships one) has one point a row:

    series,gpu,age_months,share,share_low,share_high,as_of,source
    GLRI/ResidualGuide,H100,12,0.625,0.60,0.65,2026-01-08,"..."

`series` is PUBLISHER/NAME, so a series belongs to one publisher; a *curve* is one (series, gpu).
`share` is the resale value at that age as a share of the new hardware price, `share_low` and
`share_high` the published range (empty where none is published), `as_of` the date the figure
was published. Within a curve ages strictly increase down the file and shares do not rise with
age. Curves of different publishers are never averaged (the two shipped H100 curves differ by
15 to 18 points of share at the same age).

The formulas the curves feed are in econ.resale; this module reads, checks and looks up files,
turns a scenario's market section into per-row curves for the batch, and gives the curve as a
DataFrame for the app.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from econ.catalog import catalog_cache
from econ.errors import InputError
from econ.index_files import (
    DATE_EXPECTED,
    cell,
    cell_number,
    data_rows,
    index_date,
    modified_stamp,
    point_warnings,
    read_text,
)
from econ.labels import counted
from econ.resale import MAX_AGE_MONTHS, resale_share
from econ.text import clipped

COLUMNS = ("series", "gpu", "age_months", "share", "share_low", "share_high", "as_of", "source")
"""Columns of a resale index file, in order."""

SERIES_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"
GPU_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
INDEX_FILE = "resale_index.csv"


class ResaleIndexError(InputError):
    """A resale index file, a resale table or a resale series choice that cannot be used."""


@dataclass(frozen=True)
class ResalePoint:
    series: str
    gpu: str
    age_months: int
    share: float
    share_low: float | None
    share_high: float | None
    as_of: dt.date
    source: str
    line: int = field(default=0, compare=False, repr=False)
    """the file's line the point was read from (0: not read from a file), for warnings"""


@dataclass(frozen=True)
class ResaleCurve:
    """The points of one (series, gpu), in age order."""

    series: str
    gpu: str
    points: tuple[ResalePoint, ...]

    @property
    def publisher(self) -> str:
        return self.series.split("/", 1)[0]

    @property
    def ages(self) -> np.ndarray:
        return np.array([p.age_months for p in self.points], dtype=float)

    def shares(self, which: str = "share") -> np.ndarray:
        """Mid (`share`), `share_low` or `share_high` of each point; a missing low/high is NaN."""
        return np.array(
            [np.nan if getattr(p, which) is None else getattr(p, which) for p in self.points]
        )

    @property
    def has_band(self) -> bool:
        return any(p.share_low is not None or p.share_high is not None for p in self.points)


def catalog_path() -> Path:
    from econ.catalog import models_dir

    return models_dir() / "market" / INDEX_FILE


# --- reading ------------------------------------------------------------------------------------


def read_index(path: str | os.PathLike) -> tuple[ResalePoint, ...]:
    """Points of a resale index file, validated; errors name the file, the line and the column."""
    return parse_index(read_text(path, "resale index file", ResaleIndexError), str(path))


def parse_index(text: str, name: str = "<resale index>") -> tuple[ResalePoint, ...]:
    points: list[ResalePoint] = []
    last: dict[tuple[str, str], tuple[ResalePoint, int]] = {}
    for line, cells in data_rows(text, name, COLUMNS, "resale index file", ResaleIndexError):
        point = _point(name, line, cells)
        key = (point.series, point.gpu)
        if key in last:
            _check_order(name, line, point, *last[key])
        last[key] = (point, line)
        points.append(point)
    if not points:
        raise ResaleIndexError(
            f"{name}: no data rows; expected one point a row ({', '.join(COLUMNS)})"
        )
    return tuple(points)


def _check_order(name: str, line: int, point: ResalePoint, before: ResalePoint, at: int) -> None:
    """Ages strictly increasing down a curve, shares (and their low and high) not rising."""

    def refuse(column: str, said: str, expected: str) -> ResaleIndexError:
        return ResaleIndexError(
            f"{name}: line {line}, column {column}: {said} line {at} of the same series "
            f"{point.series}, gpu {point.gpu}; expected {expected}"
        )

    if point.age_months <= before.age_months:
        order = "repeats" if point.age_months == before.age_months else "comes before"
        raise refuse(
            "age_months",
            f"age {point.age_months} {order} the age on",
            "strictly increasing ages within a curve",
        )
    for column in ("share", "share_low", "share_high"):
        # against the younger age's figure as used: a point without a range is its share at
        # every band position, so a band rising past an age with no range between is refused
        now, then = getattr(point, column), _used(before, column)
        if now is not None and now > then:
            said = "" if getattr(before, column) is not None else " (its share: no range given)"
            raise refuse(
                column,
                f"{now:g} is above the {then:g}{said} of the younger age on",
                "shares that do not rise with age (a used GPU does not gain value as it ages)",
            )


def _used(point: ResalePoint, column: str) -> float:
    """A point's share, low or high as the curve uses it: the share where no range is given."""
    value = getattr(point, column)
    return point.share if value is None else value


def _point(name: str, line: int, cells: list[str]) -> ResalePoint:
    def bad(column: str, text: str, expected: str) -> ResaleIndexError:
        return ResaleIndexError(
            f"{name}: line {line}, column {column}: {cell(text)}; expected {expected}"
        )

    series, gpu, age_text, share_text, low_text, high_text, as_of_text, source = cells
    if not re.match(SERIES_PATTERN, series):
        raise bad("series", series, "a series name PUBLISHER/NAME, e.g. GLRI/ResidualGuide")
    if not re.match(GPU_PATTERN, gpu):
        raise bad("gpu", gpu, "a GPU name such as H100 (letters, digits, '.', '_', '-')")
    age_expected = f"a whole number of months from 0 to {MAX_AGE_MONTHS}"
    try:
        age = cell_number(age_text, int)
    except ValueError:
        raise bad("age_months", age_text, age_expected) from None
    if not 0 <= age <= MAX_AGE_MONTHS:
        raise bad("age_months", age_text, age_expected)

    def share(column: str, text: str, optional: bool) -> float | None:
        if optional and not text:
            return None
        what = "a share of the new price from 0 to 1" + (" (or empty)" if optional else "")
        try:
            value = cell_number(text)
        except ValueError:
            raise bad(column, text, what) from None
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise bad(column, text, what)
        return value

    mid = share("share", share_text, False)
    low = share("share_low", low_text, True)
    high = share("share_high", high_text, True)
    if low is not None and low > mid:
        raise bad("share_low", low_text, f"a low share at or below the share {mid:g}")
    if high is not None and high < mid:
        raise bad("share_high", high_text, f"a high share at or above the share {mid:g}")
    as_of = index_date(as_of_text)
    if as_of is None:
        raise bad("as_of", as_of_text, f"the publication date, {DATE_EXPECTED}")
    if not source:
        raise bad("source", source, "the publication (URL or name) and date the point comes from")
    return ResalePoint(series, gpu.upper(), age, mid, low, high, as_of, source, line)


def date_warnings(points, name: str = "<resale index>", today: dt.date | None = None) -> list[str]:
    """Warnings about points read, not refused, as they may be right: a publication date (as_of)
    after `today` (default: the computer's date), most likely a mistyped year, as a rental index
    point's date after today is warned of (econ.rental_index.price_warnings)."""
    today = today or dt.date.today()
    later = [
        (
            f"{f'line {p.line}, ' if p.line else ''}{clipped(p.series)} {clipped(p.gpu)} age "
            f"{p.age_months} months",
            f"as_of {p.as_of} is after today ({today})",
            f"as_of {p.as_of}",
        )
        for p in points
        if p.as_of > today
    ]
    expected = "expected the date the curve was published (a mistyped year?)"
    return point_warnings(name, [(later, f"dated after today ({today})", expected)])


def load_catalog(path: str | os.PathLike | None = None) -> tuple[ResalePoint, ...]:
    """The shipped resale index (models/market/resale_index.csv), or another index file."""
    if path is not None and not os.fspath(path):  # Path("") would read the folder "."
        return read_index(path)  # which refuses it by name
    target = Path(path) if path is not None else catalog_path()
    return _cached(str(target), modified_stamp(target))


@catalog_cache(maxsize=8)
def _cached(path: str, stamp) -> tuple[ResalePoint, ...]:
    return read_index(path)


# --- curves -------------------------------------------------------------------------------------


def curves(points) -> dict[tuple[str, str], ResaleCurve]:
    """Points grouped by (series, gpu), each in age order."""
    groups: dict[tuple[str, str], list[ResalePoint]] = {}
    for p in points:
        groups.setdefault((p.series, p.gpu), []).append(p)
    return {
        key: ResaleCurve(*key, tuple(sorted(group, key=lambda p: p.age_months)))
        for key, group in sorted(groups.items())
    }


def find_curve(points, series: str, gpu: str, where: str = "") -> ResaleCurve:
    """The curve of a series and GPU, or an error listing what the index has."""
    found = curves(points)
    prefix = f"{where}: " if where else ""
    names = sorted({k[0] for k in found})
    if series not in names:
        raise ResaleIndexError(
            f"{prefix}resale series {series!r} is not in the resale index; expected one of: "
            + ", ".join(names)
        )
    gpus = sorted(k[1] for k in found if k[0] == series)
    if gpu.upper() not in gpus:
        raise ResaleIndexError(
            f"{prefix}resale series {series} has no points for gpu {gpu}; it has: "
            + ", ".join(gpus)
        )
    return found[(series, gpu.upper())]


def curve_frame(curve: ResaleCurve | None = None, *, ages=None, table=None, band: float = 0.0):
    """A resale curve by age in months as a DataFrame (for plots: the app's market page).

    Give a curve of the index (`find_curve`) or a scenario's `market.resale_value_table` (a
    sequence of points with age_months, share and optional share_low, share_high). Columns:
    age_months, share, share_low, share_high and share_at_band (the curve at band position
    `band`, econ.resale.band_shares), by month of age 0..`ages` (default: the last point + 12).
    """
    table_ages, mid, low, high = _arrays(curve, table)
    return _frame(table_ages, mid, low, high, ages, band)


def scenario_curve_frame(scenario, ages=None):
    """A scenario's own resale curve (its resale_value_table, or its resale_series for its own
    fleet's GPU) at its market.resale_band, as `curve_frame` gives it; None without one."""
    table = row_table(scenario.market, scenario.fleet.hardware)
    if table is None:
        return None
    return _frame(
        table.ages,
        table.share,
        table.share_low,
        table.share_high,
        scenario.horizon if ages is None else ages,
        scenario.market.resale_band,
    )


def _frame(table_ages, mid, low, high, ages, band):
    import pandas as pd

    from econ.resale import band_shares

    count = int(table_ages[-1]) + 12 if ages is None else int(ages)
    months = np.arange(count + 1, dtype=float)
    by = {
        "share": resale_share(table_ages, mid, months),
        "share_low": resale_share(table_ages, np.where(np.isnan(low), mid, low), months),
        "share_high": resale_share(table_ages, np.where(np.isnan(high), mid, high), months),
    }
    by["share_at_band"] = band_shares(
        by["share"], by["share_low"], by["share_high"], np.asarray(band)
    )
    return pd.DataFrame({"age_months": months.astype(int), **by})


def _arrays(curve, table):
    if (curve is None) == (table is None):
        raise ValueError("give exactly one of a resale curve and a resale table")
    if curve is not None:
        return curve.ages, curve.shares(), curve.shares("share_low"), curve.shares("share_high")
    pick = lambda p, name: np.nan if getattr(p, name) is None else getattr(p, name)  # noqa: E731
    return (
        np.array([p.age_months for p in table], dtype=float),
        np.array([p.share for p in table], dtype=float),
        np.array([pick(p, "share_low") for p in table], dtype=float),
        np.array([pick(p, "share_high") for p in table], dtype=float),
    )


@dataclass(frozen=True)
class RowTable:
    """A batch row's resale table: ages [months] and mid, low and high shares (low and high
    are the mid where no range is given), with the warning naming its series."""

    ages: np.ndarray
    share: np.ndarray
    share_low: np.ndarray
    share_high: np.ndarray
    warning: str | None


def row_table(market, hardware: str) -> RowTable | None:
    """A row's resale table from its scenario's market section, or None without one.

    Parameters
    ----------
    market : the scenario's Market section (resale_value_table or resale_series)
    hardware : the row's fleet.hardware key (the series' default GPU: h100-sxm -> H100)
    """
    if market.resale_series is None and not market.resale_value_table:
        return None
    from econ.rental_index import gpu_of_hardware

    warning = None
    if market.resale_series is not None:
        gpu = market.resale_series_gpu or gpu_of_hardware(hardware)
        curve = find_curve(load_catalog(), market.resale_series, gpu, "market.resale_series")
        ages, mid, low, high = _arrays(curve, None)
        band = "with a low-high band" if curve.has_band else "with no published range"
        warning = (
            f"resale value from index series {curve.series} (publisher {curve.publisher}), "
            f"{curve.gpu}: {counted(len(curve.points), 'point')} at ages "
            + ", ".join(f"{p.age_months}" for p in curve.points)
            + f" months, published {max(p.as_of for p in curve.points)}, {band}"
            + ("" if curve.has_band else " (market.resale_band has no effect)")
            + f"; held at {curve.points[-1].share:g} of the new price after "
            f"{curve.points[-1].age_months} months"
        )
    else:
        ages, mid, low, high = _arrays(None, market.resale_value_table)
    return RowTable(
        ages=ages,
        share=mid,
        share_low=np.where(np.isnan(low), mid, low),
        share_high=np.where(np.isnan(high), mid, high),
        warning=warning,
    )


__all__ = [
    "COLUMNS",
    "ResaleCurve",
    "ResaleIndexError",
    "ResalePoint",
    "RowTable",
    "catalog_path",
    "curve_frame",
    "curves",
    "date_warnings",
    "find_curve",
    "load_catalog",
    "parse_index",
    "read_index",
    "row_table",
    "scenario_curve_frame",
]
