"""GPU-hour rental index series: reading dated index files, fitting a decay, extending a series.

An index file (models/market/rental_index.csv ships one) has one dated point a row:

    date,series,gpu,term_months,usd_per_gpu_hour,source
    2026-05-13,CCIR/CRI-T2IF,H100,0,3.29,"CCIR ... as of 2026-05-13; ccir.io/tiers"

`series` is PUBLISHER/INDEX, so a series belongs to one publisher; `term_months` is 0 for
on-demand prices and the contract term otherwise. A curve is one (series, gpu, term): points of
different publishers are never averaged, since the published H100 indices differ by more than
2 USD/GPU-hour at the same date (CCIR's tier 1 and tier 3 rates of 2026-05-13: 6.88 and 2.72).

The decay fitted to a curve (docs/market.md), with t in years since the curve's first point:

    floor model (4 points or more):     P(t) = F + A e^(-k t)        F >= 0, A >= 0, k >= 0
    log-linear model (3 points):        P(t) = A e^(-k t)                     A > 0, k >= 0

by least squares on ln P (price errors are proportional: a quote 10% off is as wrong at 8 USD
as at 2), with residual standard error s = sqrt(SSR / (n - p)) in ln P. A floor fit that is
degenerate (its floor, or its premium's change over the points, a negligible share of the lowest
price) is the log-linear model in disguise and is reported as that. A rising series is held flat
(k = 0): the fit says so and gives the unconstrained trend of ln P beside it. Beyond the last point
(t_L, P_L) the curve is extended by the fitted shape through the last point,

    P(t) = P_L * f(t) / f(t_L)

and its band is P(t) * exp(z s): z = -1.645, 0, +1.645 gives the low, mid and high (5th, 50th,
95th percentile of a normal error in ln P). Shifting t's origin rescales A only, so the decline
rate and floor are those of generation age as well.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
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
    POINT_WARNINGS_LIMIT,
    cell,
    cell_number,
    data_rows,
    decode,
    index_date,
    modified_stamp,
    point_warnings,
    read_text,
)
from econ.labels import counted, duration
from econ.plausibility import MAX_PLAUSIBLE_USD_PER_GPU_HOUR  # (an index point's bound too)
from econ.text import clipped, neutralize, restore

COLUMNS = ("date", "series", "gpu", "term_months", "usd_per_gpu_hour", "source")
"""Columns of an index file, in order."""

SERIES_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"
"""A series name: PUBLISHER/INDEX (letters, digits, '.', '_', '-')."""

GPU_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
MAX_TERM_MONTHS = 120
DAYS_PER_YEAR = 365.25
BAND_Z = 1.6448536269514722
"""Standard normal 95th percentile: the band's low and high are exp(-/+ z s) times the mid."""
FLOOR_MODEL_MIN_POINTS = 4
FIT_MIN_POINTS = 3
MAX_RATE_ANNUAL = 20.0
"""Upper bound of the fitted decay rate k [1/year] (a premium halving every 13 days)."""
RATE_GRID = np.geomspace(1e-3, MAX_RATE_ANNUAL, 48)
"""Decay rates k [1/year] at which the floor fit first profiles the sum of squares, a premium
halving every 690 years to every 13 days; the best ones are then refined in all three parameters."""
NEGLIGIBLE_SHARE = 1e-6
"""A floor fit whose floor, or whose premium's change over the points A (1 - e^(-k span)), is
below this share of the lowest price is degenerate: the log-linear model (F = 0) or a constant."""
INDEX_FILE = "rental_index.csv"
JUMP_FACTOR = 5.0
"""Consecutive points of a series this many times apart, or more, are warned of (read, not
refused): the shipped series move by at most 38% between points."""
JUMP_SHOWN_DIGITS = 6
"""A jump of up to 10^6 times is said in figures (25 times, 1/10 of); a larger one as its power
of ten ("about 1e+620 times": 1e300 after 1e-320, whose ratio a float does not hold)."""


class RentalIndexError(InputError):
    """An index file or a series choice that cannot be used."""


@dataclass(frozen=True)
class IndexPoint:
    date: dt.date
    series: str
    gpu: str
    term_months: int
    usd_per_gpu_hour: float
    source: str
    line: int = field(default=0, compare=False, repr=False)
    """the file's line the point was read from (0: not read from a file), for warnings"""

    @property
    def publisher(self) -> str:
        return self.series.split("/", 1)[0]


def catalog_path() -> Path:
    from econ.catalog import models_dir

    return models_dir() / "market" / INDEX_FILE


# --- reading ------------------------------------------------------------------------------------


def read_index(path: str | os.PathLike) -> tuple[IndexPoint, ...]:
    """Points of an index file, validated; errors name the file, the row (line) and the column."""
    return parse_index(read_text(path, "rental index file", RentalIndexError), str(path))


def parse_index_bytes(content: bytes, name: str = "<index>") -> tuple[IndexPoint, ...]:
    """Points of an index file's bytes (UTF-8, a byte-order mark allowed), as `read_index`."""
    return parse_index(decode(content, name, "rental index file", RentalIndexError), name)


def parse_index(text: str, name: str = "<index>") -> tuple[IndexPoint, ...]:
    points = []
    last: dict[tuple[str, str, int], tuple[dt.date, int]] = {}
    for line, cells in data_rows(text, name, COLUMNS, "rental index file", RentalIndexError):
        point = _point(name, line, cells)
        key = (point.series, point.gpu, point.term_months)
        if key in last and not point.date > last[key][0]:
            earlier_date, earlier_line = last[key]
            order = "repeats" if point.date == earlier_date else "comes before"
            raise RentalIndexError(
                f"{name}: line {line}, column date: {point.date} {order} the date on line "
                f"{earlier_line} of the same series {point.series}, gpu {point.gpu}, term "
                f"{point.term_months} months; expected strictly increasing dates within a series"
            )
        last[key] = (point.date, line)
        points.append(point)
    if not points:
        raise RentalIndexError(
            f"{name}: no data rows; expected one dated point a row ({', '.join(COLUMNS)})"
        )
    return tuple(points)


def _point(name: str, line: int, cells: list[str]) -> IndexPoint:
    def bad(column: str, text: str, expected: str) -> RentalIndexError:
        return RentalIndexError(
            f"{name}: line {line}, column {column}: {cell(text)}; expected {expected}"
        )

    date_text, series, gpu, term_text, price_text, source = cells
    date = index_date(date_text)
    if date is None:
        raise bad("date", date_text, DATE_EXPECTED)
    if not re.match(SERIES_PATTERN, series):
        raise bad("series", series, "a series name PUBLISHER/INDEX, e.g. CCIR/CRI-T2IF")
    if not re.match(GPU_PATTERN, gpu):
        raise bad("gpu", gpu, "a GPU name such as H100 (letters, digits, '.', '_', '-')")
    term_expected = f"a whole number of months from 0 (on-demand) to {MAX_TERM_MONTHS}"
    try:
        term = cell_number(term_text, int)
    except ValueError:
        raise bad("term_months", term_text, term_expected) from None
    if not 0 <= term <= MAX_TERM_MONTHS:
        raise bad("term_months", term_text, term_expected)
    try:
        price = cell_number(price_text)
    except ValueError:
        raise bad(
            "usd_per_gpu_hour", price_text, "a number, the price in USD per GPU-hour"
        ) from None
    if not math.isfinite(price) or price <= 0:
        raise bad("usd_per_gpu_hour", price_text, "a finite price above 0 [USD/GPU-hour]")
    if not source:
        raise bad("source", source, "the publication (URL or name) and date the point comes from")
    # index_csv writes formula-like text behind an apostrophe; the copy reads back as it was
    return IndexPoint(date, series, gpu.upper(), term, price, restore(source), line)


def price_warnings(points, name: str = "<index>", today: dt.date | None = None) -> list[str]:
    """Warnings about points that are read, not refused, as they may be right: a price above
    MAX_PLAUSIBLE_USD_PER_GPU_HOUR (a price per node-hour, per month or in cents is a number
    above 0 as well), a price JUMP_FACTOR times or more above or below the series' point before
    it (a typo such as 25 for 2.5), and a date after `today` (default: the computer's date).

    Each reason warns of up to POINT_WARNINGS_LIMIT points one by one, in file order; a reason
    with more points gets one warning with their count and the first of them."""
    today = today or dt.date.today()
    # for each reason, (where, what, in short) of each point warned of
    high: list[tuple[str, str, str]] = []
    jumps: list[tuple[str, str, str]] = []
    later: list[tuple[str, str, str]] = []
    before: dict[tuple[str, str, int], IndexPoint] = {}
    for p in points:
        where = (
            f"{_line(p)}{p.date} {clipped(p.series)} {clipped(p.gpu)} term {p.term_months} months"
        )
        price = p.usd_per_gpu_hour
        if price > MAX_PLAUSIBLE_USD_PER_GPU_HOUR:
            shown = f"{price:.10g} USD/GPU-hour"
            high.append(
                (
                    where,
                    f"{shown} is above {MAX_PLAUSIBLE_USD_PER_GPU_HOUR:g} (the highest published "
                    "price econ ships is 13.52)",
                    shown,
                )
            )
        key = (p.series, p.gpu, p.term_months)
        last = before.get(key)
        ratio = 1.0 if last is None else price / last.usd_per_gpu_hour  # 0 when it underflows
        if ratio == 0 or max(ratio, 1.0 / ratio) >= JUMP_FACTOR:
            times = _jump_text(ratio, price, last.usd_per_gpu_hour)
            jumps.append(
                (
                    where,
                    f"{price:.10g} USD/GPU-hour is {times} the point before it "
                    f"({last.usd_per_gpu_hour:.10g} on {last.date}{_on_line(last)})",
                    f"{price:.10g} after {last.usd_per_gpu_hour:.10g}",
                )
            )
        before[key] = p
        if p.date > today:
            later.append((where, f"the date {p.date} is after today ({today})", ""))
    reasons = (
        (
            high,
            f"above {MAX_PLAUSIBLE_USD_PER_GPU_HOUR:g} USD/GPU-hour",
            "expected a price per GPU-hour in USD, not per node of several GPUs, per month or "
            "in cents",
        ),
        (
            jumps,
            f"{JUMP_FACTOR:g}x or more above or below the point before them",
            f"expected no jump of {JUMP_FACTOR:g}x or more between consecutive points (a "
            "mistyped price?)",
        ),
        (
            later,
            f"dated after today ({today})",
            "expected the date the price was published or quoted (a mistyped year?)",
        ),
    )
    return point_warnings(name, reasons)


def _jump_text(ratio: float, price: float, before: float) -> str:
    """`price`, `ratio` times the price `before` it, as a warning says it: "12.5 times", "1/10
    of", beyond JUMP_SHOWN_DIGITS either way "about 1e+620 times", "about 1e-320 times" (in
    powers of ten: the ratio of 1e300 to 1e-320 is beyond a float, its logarithm is not)."""
    digits = math.log10(price) - math.log10(before)
    if abs(digits) > JUMP_SHOWN_DIGITS:
        return f"about 1e{digits:+.0f} times"
    return f"{ratio:.3g} times" if ratio > 1 else f"1/{1.0 / ratio:.3g} of"


def _line(point: IndexPoint) -> str:
    return f"line {point.line}, " if point.line else ""


def _on_line(point: IndexPoint) -> str:
    return f", line {point.line}" if point.line else ""


def load_catalog(path: str | os.PathLike | None = None) -> tuple[IndexPoint, ...]:
    """The shipped index (models/market/rental_index.csv), or another index file."""
    if path is not None and not os.fspath(path):  # Path("") would read the folder "."
        return read_index(path)  # which refuses it by name
    target = Path(path) if path is not None else catalog_path()
    return _cached(str(target), modified_stamp(target))


@catalog_cache(maxsize=8)
def _cached(path: str, stamp) -> tuple[IndexPoint, ...]:
    return read_index(path)


def index_csv(points) -> str:
    """The points as an index file (the validated copy `econ market import --out` writes); text a
    spreadsheet could read as a formula gets a leading apostrophe (econ.text.neutralize), which
    `parse_index` removes, so the copy reads back to the same points."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in points:
        writer.writerow(
            [
                p.date.isoformat(),
                neutralize(p.series),
                neutralize(p.gpu),
                p.term_months,
                repr(p.usd_per_gpu_hour),
                neutralize(p.source),
            ]
        )
    return out.getvalue()


# --- series -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """The points of one (series, gpu, term), in date order."""

    series: str
    gpu: str
    term_months: int
    points: tuple[IndexPoint, ...]

    @property
    def publisher(self) -> str:
        return self.series.split("/", 1)[0]

    @property
    def dates(self) -> list[dt.date]:
        return [p.date for p in self.points]

    @property
    def prices(self) -> np.ndarray:
        return np.array([p.usd_per_gpu_hour for p in self.points])

    def years(self, dates) -> np.ndarray:
        """Years since the curve's first point [year]."""
        first = self.points[0].date
        return np.array([(d - first).days / DAYS_PER_YEAR for d in dates], dtype=float)


def curves(points) -> dict[tuple[str, str, int], Curve]:
    """Points grouped by (series, gpu, term), each in date order."""
    groups: dict[tuple[str, str, int], list[IndexPoint]] = {}
    for p in points:
        groups.setdefault((p.series, p.gpu, p.term_months), []).append(p)
    return {
        key: Curve(*key, tuple(sorted(group, key=lambda p: p.date)))
        for key, group in sorted(groups.items())
    }


def find_curve(points, series: str, gpu: str, term_months: int, where: str = "") -> Curve:
    """The curve of a series, or an error listing what the index has."""
    found = curves(points)
    prefix = f"{where}: " if where else ""
    names = sorted({k[0] for k in found})
    if series not in names:
        raise RentalIndexError(
            f"{prefix}rental series {series!r} is not in the index; expected one of: "
            + ", ".join(names)
        )
    gpus = sorted({k[1] for k in found if k[0] == series})
    if gpu.upper() not in gpus:
        raise RentalIndexError(
            f"{prefix}rental series {series} has no points for gpu {gpu}; it has: "
            + ", ".join(gpus)
        )
    terms = sorted(k[2] for k in found if k[0] == series and k[1] == gpu.upper())
    if term_months not in terms:
        raise RentalIndexError(
            f"{prefix}rental series {series} ({gpu.upper()}) has no term of {term_months} months; "
            "its terms are " + ", ".join(f"{t} months" for t in terms) + " (0 = on-demand)"
        )
    return found[(series, gpu.upper(), term_months)]


def gpu_of_hardware(hardware: str) -> str:
    """The index GPU name of a hardware catalog key: its first part, upper case (h100-sxm -> H100)."""
    return hardware.split("-", 1)[0].upper()


# --- the fit ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecayFit:
    """A decay fitted to a curve's points: P(t) = F + A e^(-k t), t in years since its first point.

    model : "floor" (F fitted) or "log-linear" (F = 0)
    floor_usd_per_gpu_hour, amplitude_usd_per_gpu_hour : F, A [USD/GPU-hour]
    rate_annual : k [1/year]; the premium over the floor falls by 1 - e^(-k) a year
    sigma_log : residual standard error of ln P about this fit (NaN when no degrees of freedom
        are left); where the decline is held at 0 it is the scatter about the flat fit, with the
        held rate still counted among the parameters
    points, parameters : n and p
    trend_rate_annual : slope b of ln P by unconstrained ordinary least squares [1/year]
        (positive: the prices rise; -k of the log-linear fit where that is not held)
    trend_sigma_log : residual standard error of ln P about that trend (n - 2 degrees of freedom)
    """

    model: str
    floor_usd_per_gpu_hour: float
    amplitude_usd_per_gpu_hour: float
    rate_annual: float
    sigma_log: float
    points: int
    parameters: int
    trend_rate_annual: float = math.nan
    trend_sigma_log: float = math.nan

    @property
    def decline_annual(self) -> float:
        """Annual decline of the premium over the floor, 1 - e^(-k) [fraction/year]."""
        return -math.expm1(-self.rate_annual)

    @property
    def trend_annual(self) -> float:
        """Annual change of the price by the unconstrained log-linear trend, e^b - 1
        [fraction/year]: +0.847 for prices rising 84.7% a year."""
        return math.expm1(self.trend_rate_annual)

    @property
    def decline_held_at_zero(self) -> bool:
        """True where the prices rise (b > 0) and the log-linear fit holds the decline at 0:
        a rising series is extended flat, never upwards."""
        return self.model == "log-linear" and self.trend_rate_annual > 0

    def value(self, years) -> np.ndarray:
        t = np.asarray(years, dtype=float)
        return self.floor_usd_per_gpu_hour + self.amplitude_usd_per_gpu_hour * np.exp(
            -self.rate_annual * t
        )

    def band_factors(self) -> dict[str, float]:
        """Multipliers of the extrapolated mid price: low (5th), mid, high (95th percentile)."""
        s = self.sigma_log if math.isfinite(self.sigma_log) else 0.0
        return {"low": math.exp(-BAND_Z * s), "mid": 1.0, "high": math.exp(BAND_Z * s)}

    def trend_text(self) -> str:
        """The unconstrained trend in words: "+84.7% a year by an unconstrained log-linear fit
        (residual s.e. of ln price 0.05998)"."""
        sigma = f"{self.trend_sigma_log:.4g}" if math.isfinite(self.trend_sigma_log) else "n/a"
        return (
            f"{self.trend_annual:+.1%} a year by an unconstrained log-linear fit (residual s.e. "
            f"of ln price {sigma})"
        )

    def description(self) -> str:
        sigma = f"{self.sigma_log:.4g}" if math.isfinite(self.sigma_log) else "n/a"
        counts = f"({self.points} points, {self.parameters} parameters)"
        if self.decline_held_at_zero:
            return (
                f"log-linear fit P = {self.amplitude_usd_per_gpu_hour:.4g} (t in years), decline "
                f"held at 0 as the prices rise {self.trend_text()}; residual s.e. of ln price "
                f"about this flat fit {sigma} " + counts
            )
        if self.model == "floor":
            shape = (
                f"P = {self.floor_usd_per_gpu_hour:.4g} + {self.amplitude_usd_per_gpu_hour:.4g} "
                f"e^(-{self.rate_annual:.4g} t)"
            )
        elif self.rate_annual > 0:
            shape = f"P = {self.amplitude_usd_per_gpu_hour:.4g} e^(-{self.rate_annual:.4g} t)"
        else:  # a flat series (no rise: that is held above)
            shape = f"P = {self.amplitude_usd_per_gpu_hour:.4g}"
        return (
            f"{self.model} fit {shape} (t in years), premium decline "
            f"{self.decline_annual:.1%} a year, residual s.e. of ln price {sigma} " + counts
        )


def fit_decay(years, prices) -> DecayFit:
    """Least-squares decay of price by age, in ln price (see the module docstring).

    Parameters
    ----------
    years : array (n,)  distinct ages of the points [year]
    prices : array (n,)  prices > 0 [USD/GPU-hour]

    Four points or more fit the floor model, three the log-linear one; fewer are refused. A
    degenerate floor fit (`NEGLIGIBLE_SHARE`) gives way to the log-linear one.
    """
    t = np.asarray(years, dtype=float)
    p = np.asarray(prices, dtype=float)
    if t.shape != p.shape or t.ndim != 1:
        raise RentalIndexError(f"years {t.shape} and prices {p.shape}: expected two arrays (n,)")
    if not np.all(np.isfinite(p) & (p > 0)) or not np.all(np.isfinite(t)):
        raise RentalIndexError("prices: expected finite prices above 0 at finite ages")
    n = t.size
    if n < FIT_MIN_POINTS:
        raise RentalIndexError(
            f"{counted(n, 'point')}: too few to fit a decay; expected at least {FIT_MIN_POINTS}"
        )
    if len(np.unique(t)) != n:
        raise RentalIndexError("years: expected distinct ages, one point per date")
    loglinear = _fit_loglinear(t, p)
    if n < FLOOR_MODEL_MIN_POINTS:
        return loglinear
    floor = _fit_floor(t, p, loglinear)
    if floor is None:
        return loglinear
    # The floor model nests the log-linear one (F = 0): keep it only where the search found a
    # sum of squares no larger (a local minimum above it would be a worse fit, not a better one).
    ssr = lambda f: f.sigma_log**2 * (f.points - f.parameters)  # noqa: E731
    return floor if ssr(floor) <= ssr(loglinear) * (1 + 1e-9) + 1e-300 else loglinear


def extrapolation_caution(curve: Curve, until_years: float) -> str | None:
    """Why a decay fitted to `curve` is weak ground where it is carried past the last point by
    more than the points span (up to `until_years`, years since the first point), else None.

    The band (exp(+/- z s)) is the scatter of the points about the fit; it leaves out the
    uncertainty of the fitted rate k, whose effect on ln P grows with the distance from the
    points, so a few weeks of points say little about prices years later.
    """
    ages = curve.years(curve.dates)
    span, beyond = float(ages[-1] - ages[0]), float(until_years - ages[-1])
    if beyond <= span:
        return None
    return (
        f"the fit rests on {counted(len(curve.points), 'point')} over {duration(span)} and is "
        f"carried {duration(beyond)} past them: its band is the points' scatter, not the "
        "uncertainty of the decline rate, which so short a series cannot pin down"
    )


def _sigma(residuals: np.ndarray, parameters: int) -> float:
    dof = residuals.size - parameters
    return float(np.sqrt(np.sum(residuals**2) / dof)) if dof > 0 else float("nan")


def _fit_loglinear(t: np.ndarray, p: np.ndarray) -> DecayFit:
    # ln P = a + b t by ordinary least squares; a rising series (b > 0) is held flat (k = 0).
    y = np.log(p)
    tc = t - t.mean()
    slope = float(np.dot(tc, y - y.mean()) / np.dot(tc, tc))
    trend_sigma = _sigma(y - y.mean() - slope * tc, 2)
    k = min(max(-slope, 0.0), MAX_RATE_ANNUAL) + 0.0  # (+ 0.0: no -0.0 for a flat series)
    a = float(np.mean(y + k * t))
    residuals = y - (a - k * t)
    return DecayFit(
        "log-linear", 0.0, math.exp(a), k, _sigma(residuals, 2), t.size, 2, slope, trend_sigma
    )


def _profile(t: np.ndarray, p: np.ndarray, rates: np.ndarray, iterations: int = 30):
    """For each decay rate k of `rates` (K,): the floor F and amplitude A that minimize the sum of
    squares of ln P at that k, and that sum [arrays (K,)]. F + A e^(-k t) is linear in F and A,
    so each row starts from weighted linear least squares in P (weights 1/P^2: relative errors,
    as in ln P) and is refined by damped Gauss-Newton steps in ln P, within the bounds of the fit
    (0 <= F below the lowest price, A > 0); all rows at once."""
    y = np.log(p)
    low = float(p.min())
    top, tiny = low * (1 - 1e-12), low * 1e-12
    x = np.exp(-np.outer(rates, t))
    w = 1.0 / p**2
    sw, sx, sxx = w.sum(), x @ w, (x * x) @ w
    sp, sxp = float(w @ p), x @ (w * p)
    det = sw * sxx - sx * sx
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(det > 0, (sxx * sp - sx * sxp) / det, 0.0)
        amplitude = np.where(det > 0, (sw * sxp - sx * sp) / det, float(p[0]))
    floor, amplitude = np.clip(floor, 0.0, top), np.maximum(amplitude, tiny)

    def ssr(floor, amplitude):
        return np.sum((np.log(floor[:, None] + amplitude[:, None] * x) - y) ** 2, axis=1)

    cost, damping = ssr(floor, amplitude), np.full(rates.shape, 1e-3)
    for _ in range(iterations):
        model = floor[:, None] + amplitude[:, None] * x
        r = np.log(model) - y
        d_floor, d_amplitude = 1.0 / model, x / model
        a11, a22 = np.sum(d_floor**2, axis=1), np.sum(d_amplitude**2, axis=1)
        a12 = np.sum(d_floor * d_amplitude, axis=1)
        g1, g2 = np.sum(d_floor * r, axis=1), np.sum(d_amplitude * r, axis=1)
        b11, b22 = a11 * (1 + damping), a22 * (1 + damping)
        det = b11 * b22 - a12 * a12
        with np.errstate(divide="ignore", invalid="ignore"):
            step_floor = np.where(det > 0, (a12 * g2 - b22 * g1) / det, 0.0)
            step_amplitude = np.where(det > 0, (a12 * g1 - b11 * g2) / det, 0.0)
        trial_floor = np.clip(floor + step_floor, 0.0, top)
        trial_amplitude = np.maximum(amplitude + step_amplitude, tiny)
        trial = ssr(trial_floor, trial_amplitude)
        better = trial < cost
        floor = np.where(better, trial_floor, floor)
        amplitude = np.where(better, trial_amplitude, amplitude)
        cost = np.where(better, trial, cost)
        damping = np.where(better, damping / 3.0, damping * 4.0)
    return floor, amplitude, cost


def _fit_floor(t: np.ndarray, p: np.ndarray, loglinear: DecayFit) -> DecayFit | None:
    """The floor model by least squares in ln P (with the trend of `loglinear`), or None where
    it is degenerate (`NEGLIGIBLE_SHARE`). The sum of squares is first profiled over `RATE_GRID`
    (`_profile`); the best local minima of that profile (three at most) are then refined in F, A
    and k together by scipy's trust-region reflective least_squares, with the analytic Jacobian."""
    from scipy.optimize import least_squares

    y = np.log(p)
    low = float(p.min())
    floors, amplitudes, costs = _profile(t, p, RATE_GRID)
    padded = np.concatenate([[np.inf], costs, [np.inf]])
    minima = np.flatnonzero((costs <= padded[:-2]) & (costs <= padded[2:]))
    minima = minima[np.argsort(costs[minima], kind="stable")][:3]

    def residuals(x):
        floor, amplitude, k = x
        return np.log(floor + amplitude * np.exp(-k * t)) - y

    def jacobian(x):
        floor, amplitude, k = x
        decay = np.exp(-k * t)
        model = floor + amplitude * decay
        return np.column_stack([1.0 / model, decay / model, -amplitude * t * decay / model])

    best = None
    for j in minima:
        try:
            result = least_squares(
                residuals,
                x0=[floors[j], amplitudes[j], RATE_GRID[j]],
                jac=jacobian,
                bounds=([0.0, 0.0, 0.0], [low * (1 - 1e-12), np.inf, MAX_RATE_ANNUAL]),
                x_scale="jac",
                xtol=1e-15,
                ftol=1e-15,
                gtol=1e-15,
                max_nfev=2000,
            )
        except ValueError:
            continue
        if np.all(np.isfinite(result.fun)) and (best is None or result.cost < best.cost):
            best = result
    if best is None:
        return None
    floor, amplitude, k = (float(v) for v in best.x)
    span = float(t.max() - t.min())
    change = amplitude * -math.expm1(-k * span)
    if floor < NEGLIGIBLE_SHARE * low or change < NEGLIGIBLE_SHARE * low:
        return None
    return DecayFit(
        "floor",
        floor,
        amplitude,
        k,
        _sigma(best.fun, 3),
        t.size,
        3,
        loglinear.trend_rate_annual,
        loglinear.trend_sigma_log,
    )


def extend(fit: DecayFit, last_years: float, last_price: float, years) -> np.ndarray:
    """The fitted shape through the last point: P_L f(t) / f(t_L) [USD/GPU-hour]."""
    return last_price * fit.value(years) / float(fit.value(last_years))


def extend_by_decline(
    decline_annual: float, floor_usd_per_gpu_hour: float, last_years: float, last_price, years
):
    """A given decline beyond the last point: F + (P_L - F)(1 - d)^(t - t_L) [USD/GPU-hour]."""
    t = np.asarray(years, dtype=float) - last_years
    return (
        floor_usd_per_gpu_hour + (last_price - floor_usd_per_gpu_hour) * (1.0 - decline_annual) ** t
    )


# --- a scenario's rental price from a series ----------------------------------------------------


@dataclass(frozen=True)
class ResolvedSeries:
    """A series turned into one scenario row's rental table (months from the first day of month 0).

    months, prices : arrays (k,)  the series' points then one point a month beyond the last one,
        up to the horizon [month, USD/GPU-hour]
    log_sd : array (k,)  residual s.e. of ln price at each point: 0 at the series' own points,
        the fit's s at the extrapolated ones (what rental_series_band_sigmas multiplies)
    month1_usd_per_gpu_hour : the price in month 1, the first contract's where the scenario
        gives no contract price (whatever its contract share: a batch may vary the share)
    month1_log_sd : log_sd of that price
    """

    curve: Curve
    fit: DecayFit | None
    months: np.ndarray
    prices: np.ndarray
    log_sd: np.ndarray
    month1_usd_per_gpu_hour: float
    month1_log_sd: float
    warning: str


def _add_months(start: dt.date, months: int) -> dt.date:
    total = start.year * 12 + start.month - 1 + months
    return dt.date(total // 12, total % 12 + 1, 1)


def resolve_series(market, hardware: str, start_date: dt.date, horizon_months: int,
                   points=None) -> ResolvedSeries | None:  # fmt: skip
    """A scenario's market rental price from its `rental_series` (None when it names none).

    Parameters
    ----------
    market : econ.scenario.market_models.Market
    hardware : the fleet's hardware key (the default GPU of the series)
    start_date : the scenario's month 0; horizon_months : its last month
    points : the index (default: the shipped catalog)
    """
    from econ.market import table_price_path
    from econ.scenario.financing_models import months_after

    if market.rental_series is None:
        return None
    index = load_catalog() if points is None else points
    gpu = market.rental_series_gpu or gpu_of_hardware(hardware)
    term = market.rental_series_term_months
    where = f"market.rental_series = {market.rental_series!r}"
    curve = find_curve(index, market.rental_series, gpu, term, where)
    start = dt.date(start_date.year, start_date.month, 1)
    own_months = np.array([months_after(start, d) for d in curve.dates])
    last, last_month = curve.points[-1], float(own_months[-1])
    beyond = np.array([m for m in range(horizon_months + 1) if m > last_month], dtype=float)
    beyond_dates = [_add_months(start, int(m)) for m in beyond]
    t = curve.years(beyond_dates)
    t_last = float(curve.years([last.date])[0])
    decline = market.rental_decline_annual
    fit, sigma = None, 0.0
    if decline > 0:
        floor = market.rental_floor_usd_per_gpu_hour
        if floor > last.usd_per_gpu_hour:
            raise RentalIndexError(
                f"{where}: rental_floor_usd_per_gpu_hour {floor} is above the series' last price "
                f"{last.usd_per_gpu_hour} ({last.date}); expected a floor at or below it"
            )
        extended = extend_by_decline(decline, floor, t_last, last.usd_per_gpu_hour, t)
        how = (
            f"by the scenario's rental_decline_annual {decline:.1%} a year towards "
            f"rental_floor_usd_per_gpu_hour {floor:g}"
        )
    else:
        try:
            fit = fit_decay(curve.years(curve.dates), curve.prices)
        except RentalIndexError as exc:
            raise RentalIndexError(
                f"{where} ({curve.gpu}, term {term} months): {exc}. Give "
                "market.rental_decline_annual (and rental_floor_usd_per_gpu_hour) to extend it "
                "beyond its last point instead"
            ) from None
        sigma = fit.sigma_log if math.isfinite(fit.sigma_log) else 0.0
        extended = extend(fit, t_last, last.usd_per_gpu_hour, t)
        how = f"by a {fit.description()}"
    z = market.rental_series_band_sigmas
    months = np.concatenate([own_months, beyond])
    prices = np.concatenate([curve.prices, extended * math.exp(z * sigma)])
    log_sd = np.concatenate([np.zeros(own_months.size), np.full(beyond.size, sigma)])
    month1 = float(table_price_path(months[None, :], prices[None, :], np.array([1]))[0, 0])
    month1_sd = sigma if 1 in beyond else 0.0
    kind = "on-demand" if term == 0 else f"{term}-month contracts"
    if beyond.size:
        band = (
            f"; its error band (5th-95th percentile) is x{math.exp(-BAND_Z * sigma):.3f} to "
            f"x{math.exp(BAND_Z * sigma):.3f}, for Monte Carlo: --dist "
            "market.rental_series_band_sigmas=normal(0, 1, low=-4, high=4)"
            if sigma > 0
            else ""
        )
        tail = f"extrapolated beyond {last.date} {how}{band}"
        caution = None if fit is None else extrapolation_caution(curve, float(t[-1]))
        if caution:
            tail += f"; caution: {caution} (market.rental_decline_annual sets the decline instead)"
    else:
        tail = f"not extrapolated (the horizon ends before the last point, {last.date})"
    if own_months[0] > 1:
        tail += f"; held at its first price before {curve.points[0].date}"
    warning = (
        f"rental price from index series {curve.series} (publisher {curve.publisher}), "
        f"{curve.gpu} {kind}: {counted(len(curve.points), 'point')} {curve.points[0].date} to "
        f"{last.date}; " + tail
    )
    return ResolvedSeries(curve, fit, months, prices, log_sd, month1, month1_sd, warning)


__all__ = [
    "POINT_WARNINGS_LIMIT",
    "BAND_Z",
    "COLUMNS",
    "Curve",
    "DecayFit",
    "IndexPoint",
    "RentalIndexError",
    "catalog_path",
    "curves",
    "extend",
    "extend_by_decline",
    "extrapolation_caution",
    "find_curve",
    "fit_decay",
    "gpu_of_hardware",
    "index_csv",
    "load_catalog",
    "parse_index",
    "parse_index_bytes",
    "price_warnings",
    "read_index",
    "resolve_series",
    "ResolvedSeries",
]
