"""Input distributions for Monte Carlo and sensitivity: parsing, checking and inverse CDFs.

Every distribution is sampled by its inverse cumulative distribution function (quantile function)
applied to points of the unit interval, so plain random sampling, Sobol sequences and rank
correlation (which reorders the unit points) share one code path (Devroye, *Non-Uniform Random
Variate Generation*, 1986, section II.2.1, the inversion method).

Text form, as on the command line (`--dist PATH=TEXT`):

    uniform(LOW, HIGH)
    triangular(LOW, MODE, HIGH)
    pert(LOW, MODE, HIGH[, lambda=4])
    normal(MEAN, SD[, low=L][, high=H])          truncated to [L, H] when given
    lognormal(MU, SIGMA[, low=L][, high=H])      MU, SIGMA of log(X); or mean=M, sd=S of X
    discrete(V1:P1, V2:P2, ...)  or  discrete(V1, V2, ...)   equal weights
    empirical(FILE[, COLUMN])    resampling of a CSV or Parquet column (default: the PATH)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from econ.errors import InputError
from econ.text import clipped, shortened


def _special():
    """scipy.special, imported on first use: a sweep, or draws from uniform and triangular
    distributions, need none of it (it takes about 0.15 s to import)."""
    from scipy import special

    return special


U_MIN = 2.0**-53
"""Smallest unit point the samplers produce (and 1 - U_MIN the largest): the support of a
distribution as sampled is [ppf(U_MIN), ppf(1 - U_MIN)], which is what bounds are checked on."""


class DistributionError(InputError):
    """A distribution that cannot be parsed or whose parameters are invalid."""


@dataclass(frozen=True)
class Distribution:
    """Base of the distributions: `ppf(u)` maps unit points to values."""

    name: ClassVar[str] = ""

    def ppf(self, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def support(self) -> tuple[float, float]:
        """Smallest and largest values the samplers can produce."""
        ends = self.ppf(np.array([U_MIN, 1.0 - U_MIN]))
        return float(ends[0]), float(ends[1])

    def mean(self) -> float:
        raise NotImplementedError

    def var(self) -> float:
        raise NotImplementedError

    def params(self) -> dict:
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"dist": self.name, **self.params()}

    def __str__(self) -> str:
        args = ", ".join(f"{k}={_fmt(v)}" for k, v in self.params().items())
        return f"{self.name}({args})"


def _fmt(value) -> str:
    if isinstance(value, list | tuple):
        return (
            "[" + ", ".join(_fmt(v) for v in value[:6]) + (", ..." if len(value) > 6 else "") + "]"
        )
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [low, high]."""

    low: float
    high: float
    name: ClassVar[str] = "uniform"

    def __post_init__(self):
        _finite(self, low=self.low, high=self.high)
        if not self.low < self.high:
            raise DistributionError(
                f"{self}: expected low < high, got {self.low:g} >= {self.high:g}"
            )

    def ppf(self, u):
        return self.low + (self.high - self.low) * np.asarray(u, dtype=float)

    def mean(self):
        return (self.low + self.high) / 2

    def var(self):
        return (self.high - self.low) ** 2 / 12

    def params(self):
        return {"low": self.low, "high": self.high}


@dataclass(frozen=True)
class Triangular(Distribution):
    """Triangular on [low, high] with its mode at `mode`.

    Inverse CDF: low + sqrt(u (high-low)(mode-low)) below u = (mode-low)/(high-low), else
    high - sqrt((1-u)(high-low)(high-mode)) (Evans, Hastings & Peacock, *Statistical
    Distributions*, 3rd ed., 2000, ch. 40).
    """

    low: float
    mode: float
    high: float
    name: ClassVar[str] = "triangular"

    def __post_init__(self):
        _finite(self, low=self.low, mode=self.mode, high=self.high)
        _ordered(self, self.low, self.mode, self.high)

    def ppf(self, u):
        u = np.asarray(u, dtype=float)
        a, c, b = self.low, self.mode, self.high
        split = (c - a) / (b - a)
        with np.errstate(invalid="ignore"):
            left = a + np.sqrt(u * (b - a) * (c - a))
            right = b - np.sqrt((1.0 - u) * (b - a) * (b - c))
        return np.where(u < split, left, right)

    def mean(self):
        return (self.low + self.mode + self.high) / 3

    def var(self):
        a, c, b = self.low, self.mode, self.high
        return (a * a + b * b + c * c - a * b - a * c - b * c) / 18

    def params(self):
        return {"low": self.low, "mode": self.mode, "high": self.high}


@dataclass(frozen=True)
class Pert(Distribution):
    """PERT: a beta distribution on [low, high] with its mode at `mode` and shape `lamb` (4).

    alpha = 1 + lamb (mode-low)/(high-low), beta = 1 + lamb (high-mode)/(high-low); mean
    (low + lamb mode + high)/(lamb + 2) (Malcolm et al., Operations Research 7 (1959) 646-669;
    Vose, *Risk Analysis*, 3rd ed., 2008, section III.7). Inverse CDF by the inverse regularized
    incomplete beta function (`beta_ppf`: tables checked against scipy's betaincinv).
    """

    low: float
    mode: float
    high: float
    lamb: float = 4.0
    name: ClassVar[str] = "pert"

    def __post_init__(self):
        _finite(self, low=self.low, mode=self.mode, high=self.high, **{"lambda": self.lamb})
        _ordered(self, self.low, self.mode, self.high)
        if not self.lamb > 0:
            raise DistributionError(f"{self}: expected lambda > 0, got {self.lamb:g}")

    @property
    def alpha(self) -> float:
        return 1 + self.lamb * (self.mode - self.low) / (self.high - self.low)

    @property
    def beta(self) -> float:
        return 1 + self.lamb * (self.high - self.mode) / (self.high - self.low)

    def ppf(self, u):
        x = beta_ppf(self.alpha, self.beta, np.asarray(u, dtype=float))
        return self.low + (self.high - self.low) * x

    def mean(self):
        return (self.low + self.lamb * self.mode + self.high) / (self.lamb + 2)

    def var(self):
        a, b = self.alpha, self.beta
        return (self.high - self.low) ** 2 * a * b / ((a + b) ** 2 * (a + b + 1))

    def params(self):
        return {"low": self.low, "mode": self.mode, "high": self.high, "lambda": self.lamb}


def beta_ppf(alpha: float, beta: float, u: np.ndarray) -> np.ndarray:
    """Quantiles of the beta(alpha, beta) distribution on [0, 1] at unit points `u`.

    Points in [U_MIN, 1 - U_MIN] (all the samplers produce) go through piecewise polynomial
    tables of the quantile function (`_beta_table`): about 16 ns per point against 1.2 us for
    the iterative inverse regularized incomplete beta function (scipy.special.betaincinv), and
    within `BETA_TABLE_TOLERANCE` of it (a few units in the last place); other points, and
    shapes whose table misses that tolerance, go through betaincinv itself. Which path a point
    takes depends on the point and the shapes only, never on the array size, so a scenario's
    value does not depend on the chunking.
    """
    table = _beta_table(float(alpha), float(beta))
    fast = (u >= U_MIN) & (u <= 1.0 - U_MIN)
    if table is None or not fast.any():
        return _beta_ppf_exact(alpha, beta, u)
    if fast.all():
        return table(u)
    x = np.empty(u.shape)
    x[fast] = table(u[fast])
    x[~fast] = _beta_ppf_exact(alpha, beta, u[~fast])
    return x


def _beta_ppf_exact(alpha: float, beta: float, u: np.ndarray) -> np.ndarray:
    x = _special().betaincinv(alpha, beta, u)
    # The solver gives up (NaN) far below the samplers' smallest point 2**-53: the end of the
    # range is the answer there.
    return np.where(np.isnan(x) & (u < 0.5), 0.0, np.where(np.isnan(x) & (u >= 0.5), 1.0, x))


BETA_TABLE_PIECES = 32
"""Polynomial pieces per half of the unit interval in the beta quantile tables."""
BETA_TABLE_DEGREE = 12
"""Degree of each piece (interpolation at the Chebyshev points of the piece)."""
BETA_TABLE_TOLERANCE = 1e-13
"""Largest accepted difference from betaincinv, relative to min(x, 1 - x) (plus 2**-50)."""


class _BetaTable:
    """Quantile function of beta(alpha, beta), alpha, beta >= 1, as piecewise polynomials.

    The incomplete beta function is x**alpha times a function analytic at 0 (B_x(a, b) =
    x**a / a 2F1(a, 1 - b; a + 1; x), DLMF 8.17.7), so the quantile is analytic in
    v = u**(1/alpha), with x(0) = 0 and x ~ (u alpha B(alpha, beta))**(1/alpha) near 0: on
    u <= 1/2 the table holds x / v as polynomials in v on `BETA_TABLE_PIECES` equal pieces of
    [U_MIN**(1/alpha), 2**(-1/alpha)].
    On u > 1/2 the same is done for 1 - x = quantile of beta(beta, alpha) at 1 - u (I_x(a, b) =
    1 - I_(1-x)(b, a)), so both tails keep their relative accuracy. Each piece interpolates
    betaincinv at the piece's Chebyshev points (Trefethen, *Approximation Theory and
    Approximation Practice*, 2013, ch. 4) and is evaluated by Horner's rule in monomials of the
    local coordinate t in [-1, 1].
    """

    def __init__(self, alpha: float, beta: float):
        pieces, degree = BETA_TABLE_PIECES, BETA_TABLE_DEGREE
        nodes = np.cos(np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1))
        # Chebyshev coefficients -> monomial coefficients in t, column j for T_j.
        to_monomial = np.zeros((degree + 1, degree + 1))
        for j in range(degree + 1):
            mono = np.polynomial.chebyshev.cheb2poly(np.eye(degree + 1)[j])
            to_monomial[: len(mono), j] = mono
        self.power = np.empty(2)
        self.start = np.empty(2)
        self.width = np.empty(2)
        coefs = []
        for half, (p, q) in enumerate(((alpha, beta), (beta, alpha))):
            self.power[half] = 1.0 / p
            lo = np.power(U_MIN, 1.0 / p)
            self.start[half] = lo
            self.width[half] = (np.power(0.5, 1.0 / p) - lo) / pieces
            v = lo + self.width[half] * (np.arange(pieces)[:, None] + (nodes + 1.0) / 2.0)
            ratio = _special().betaincinv(p, q, np.power(v, p)) / v
            cheb = np.polynomial.chebyshev.chebfit(nodes, ratio.T, degree)
            coefs.append((to_monomial @ cheb).T)
        # Row k: piece k of the lower half; row pieces + k: piece k of the upper half.
        self.coefs = np.ascontiguousarray(np.vstack(coefs).T)  # (degree + 1, 2 pieces)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """Quantiles at u in [U_MIN, 1 - U_MIN]."""
        pieces = BETA_TABLE_PIECES
        upper = (u > 0.5).astype(np.intp)
        v = np.power(np.where(upper, 1.0 - u, u), self.power[upper])
        s = (v - self.start[upper]) / self.width[upper]
        k = np.clip(s.astype(np.intp), 0, pieces - 1)
        t = 2.0 * (s - k) - 1.0
        k += upper * pieces
        y = self.coefs[-1].take(k)
        for row in self.coefs[-2::-1]:
            y *= t
            y += row.take(k)
        y *= v
        return np.where(upper, 1.0 - y, y)


@lru_cache(maxsize=64)
def _beta_table(alpha: float, beta: float) -> _BetaTable | None:
    """The table of beta(alpha, beta), or None where it is not accurate enough (or shapes < 1)."""
    if not (alpha >= 1.0 and beta >= 1.0 and math.isfinite(alpha + beta)):
        return None
    table = _BetaTable(alpha, beta)
    # Check points: both ends and t = -1, -1/2, 0, 1/2 of every piece, in each half.
    grid = (np.arange(BETA_TABLE_PIECES)[:, None] + np.array([0.0, 0.25, 0.5, 0.75])).ravel()
    u = [np.array([U_MIN, 0.5, 1.0 - U_MIN])]
    for half in range(2):
        v = table.start[half] + table.width[half] * grid
        w = np.power(v, 1.0 / table.power[half])
        u.append(w if half == 0 else 1.0 - w)
    u = np.concatenate(u)
    u = u[(u >= U_MIN) & (u <= 1.0 - U_MIN)]
    exact = _beta_ppf_exact(alpha, beta, u)
    error = np.abs(table(u) - exact)
    if np.all(error <= BETA_TABLE_TOLERANCE * np.minimum(exact, 1.0 - exact) + 2.0**-50):
        return table
    return None


@dataclass(frozen=True)
class Normal(Distribution):
    """Normal with mean and standard deviation, optionally truncated to [low, high].

    Truncation by inversion: x = mean + sd * ndtri(F(lo) + u (F(hi) - F(lo))) with F the
    standard normal CDF (Devroye 1986, section II.2.1 applied to the truncated CDF).
    """

    mean_: float
    sd: float
    low: float = -math.inf
    high: float = math.inf
    name: ClassVar[str] = "normal"

    def __post_init__(self):
        _finite(self, mean=self.mean_, sd=self.sd)
        if not self.sd > 0:
            raise DistributionError(f"{self}: expected sd > 0, got {self.sd:g}")
        _truncation(self, self.low, self.high)
        if math.isfinite(self.low) or math.isfinite(self.high):
            lo, hi = self._cdf_range()
            if not hi - lo > 0:
                # (found here rather than when drawing, so the message names the input)
                raise DistributionError(f"{self}: the truncation range has no probability")

    def _cdf_range(self) -> tuple[float, float]:
        ndtr = _special().ndtr
        lo = ndtr((self.low - self.mean_) / self.sd)
        hi = ndtr((self.high - self.mean_) / self.sd)
        return float(lo), float(hi)

    def ppf(self, u):
        u = np.asarray(u, dtype=float)
        if math.isinf(self.low) and math.isinf(self.high):
            return self.mean_ + self.sd * _special().ndtri(u)
        lo, hi = self._cdf_range()
        if hi - lo <= 0:
            raise DistributionError(f"{self}: the truncation range has no probability")
        x = self.mean_ + self.sd * _special().ndtri(lo + u * (hi - lo))
        return np.clip(x, self.low, self.high)

    def mean(self):
        if math.isinf(self.low) and math.isinf(self.high):
            return self.mean_
        a, b = (self.low - self.mean_) / self.sd, (self.high - self.mean_) / self.sd
        ndtr = _special().ndtr
        z = ndtr(b) - ndtr(a)
        return self.mean_ + self.sd * (_phi(a) - _phi(b)) / z

    def var(self):
        if math.isinf(self.low) and math.isinf(self.high):
            return self.sd**2
        a, b = (self.low - self.mean_) / self.sd, (self.high - self.mean_) / self.sd
        ndtr = _special().ndtr
        z = ndtr(b) - ndtr(a)
        pa, pb = _phi(a), _phi(b)
        ta = a * pa if math.isfinite(a) else 0.0
        tb = b * pb if math.isfinite(b) else 0.0
        return self.sd**2 * (1 + (ta - tb) / z - ((pa - pb) / z) ** 2)

    def params(self):
        out = {"mean": self.mean_, "sd": self.sd}
        out |= {k: v for k, v in (("low", self.low), ("high", self.high)) if math.isfinite(v)}
        return out


def _phi(x: float) -> float:
    return 0.0 if math.isinf(x) else math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Log-normal: log(X) is normal with mean mu and standard deviation sigma; optionally
    truncated to [low, high] (values of X). Mean exp(mu + sigma^2/2), variance
    (exp(sigma^2) - 1) exp(2 mu + sigma^2) (Johnson, Kotz & Balakrishnan, *Continuous Univariate
    Distributions* vol. 1, 2nd ed., 1994, ch. 14)."""

    mu: float
    sigma: float
    low: float = 0.0
    high: float = math.inf
    name: ClassVar[str] = "lognormal"

    def __post_init__(self):
        _finite(self, mu=self.mu, sigma=self.sigma)
        if not self.sigma > 0:
            raise DistributionError(f"{self}: expected sigma > 0, got {self.sigma:g}")
        if self.low < 0:
            raise DistributionError(f"{self}: expected low >= 0 for a log-normal, got {self.low:g}")
        _truncation(self, self.low, self.high)

    @classmethod
    def from_mean_sd(cls, mean: float, sd: float, low: float = 0.0, high: float = math.inf):
        """The log-normal whose values have this mean and standard deviation (untruncated)."""
        # (checked here, by the names given: an infinite mean reads as "mu = inf" below)
        _finite(cls, mean=mean, sd=sd)
        if not (mean > 0 and sd > 0):
            raise DistributionError(
                f"lognormal(mean={mean:g}, sd={sd:g}): expected mean > 0 and sd > 0"
            )
        with np.errstate(over="ignore"):
            sigma2 = math.log1p((np.float64(sd) / mean) ** 2)
        if not math.isfinite(sigma2):
            raise DistributionError(
                f"lognormal(mean={mean:g}, sd={sd:g}): sd / mean is too large for a log-normal "
                "(its sigma would be infinite); expected a smaller sd for this mean"
            )
        return cls(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), low, high)

    @property
    def _normal(self) -> Normal:
        lo = math.log(self.low) if self.low > 0 else -math.inf
        hi = math.log(self.high) if math.isfinite(self.high) else math.inf
        return Normal(self.mu, self.sigma, lo, hi)

    def ppf(self, u):
        return np.exp(self._normal.ppf(u))

    def mean(self):
        if self.low == 0 and math.isinf(self.high):
            return math.exp(self.mu + self.sigma**2 / 2)
        raise NotImplementedError("moments of a truncated log-normal")

    def var(self):
        if self.low == 0 and math.isinf(self.high):
            return math.expm1(self.sigma**2) * math.exp(2 * self.mu + self.sigma**2)
        raise NotImplementedError("moments of a truncated log-normal")

    def params(self):
        out = {"mu": self.mu, "sigma": self.sigma}
        out |= {k: v for k, v in (("low", self.low), ("high", self.high)) if 0 < v < math.inf}
        return out


DISCRETE_SUM_TOLERANCE = 1e-9
"""How far from 1 the probabilities of a discrete distribution may sum (rounding of typed
decimals)."""


@dataclass(frozen=True)
class Discrete(Distribution):
    """Finite set of values with probabilities (equal when not given).

    Values may be numbers or choice names; `ppf` returns the value's index into `values` when
    `labels` is set (choice fields), else the value.
    """

    values: tuple
    probs: tuple[float, ...]
    name: ClassVar[str] = "discrete"
    cumulative: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not self.values:
            raise DistributionError("discrete(): expected at least one value")
        if len(self.probs) != len(self.values):
            raise DistributionError(f"{self}: expected one probability per value")
        # A NaN value would pass min and max (Python's skip it) and reach the field check as
        # None; an infinite one would be told to truncate a normal.
        for position, value in enumerate(self.values, start=1):
            if _is_number(value) and not math.isfinite(value):
                raise DistributionError(
                    f"{self.name}: value {position} is {_fmt(value)}; expected finite numbers"
                )
        for position, prob in enumerate(self.probs, start=1):
            if _is_number(prob) and not math.isfinite(prob):
                raise DistributionError(
                    f"{self.name}: the probability of value {position} is {_fmt(prob)}; "
                    "expected finite numbers >= 0 that sum to 1"
                )
        probs = np.asarray(self.probs, dtype=float)
        if (probs < 0).any():
            raise DistributionError(
                f"{self}: expected probabilities >= 0, got {shortened(list(self.probs))}"
            )
        if abs(probs.sum() - 1.0) > DISCRETE_SUM_TOLERANCE:
            raise DistributionError(
                f"{self}: probabilities sum to {float(probs.sum())!r}; expected them to sum to 1 "
                f"(within {DISCRETE_SUM_TOLERANCE:g})"
            )
        cumulative = np.cumsum(probs)
        cumulative[-1] = 1.0
        object.__setattr__(self, "cumulative", cumulative)

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, int | float) for v in self.values)

    def index(self, u) -> np.ndarray:
        """Index of the value drawn at each unit point."""
        return np.minimum(
            np.searchsorted(self.cumulative, np.asarray(u, dtype=float), side="right"),
            len(self.values) - 1,
        )

    def ppf(self, u):
        if not self.numeric:
            raise DistributionError(f"{self}: names have no numeric values; map them to choices")
        return np.asarray(self.values, dtype=float)[self.index(u)]

    def support(self):
        if not self.numeric:
            return (math.nan, math.nan)
        values = [v for v, p in zip(self.values, self.probs, strict=True) if p > 0]
        return float(min(values)), float(max(values))

    def mean(self):
        return float(np.dot(np.asarray(self.values, dtype=float), self.probs))

    def var(self):
        v = np.asarray(self.values, dtype=float)
        return float(np.dot((v - self.mean()) ** 2, self.probs))

    def params(self):
        return {"values": list(self.values), "probs": list(self.probs)}


@dataclass(frozen=True)
class Empirical(Distribution):
    """Resampling of observed values: each observation equally likely (the bootstrap
    distribution, Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 6)."""

    data: tuple[float, ...]
    source: str = ""
    name: ClassVar[str] = "empirical"
    sorted_: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        values = np.asarray(self.data, dtype=float)
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise DistributionError(
                f"empirical({self.source}): expected at least one value, all finite numbers"
            )
        object.__setattr__(self, "sorted_", np.sort(values))

    def ppf(self, u):
        m = len(self.sorted_)
        index = np.minimum((np.asarray(u, dtype=float) * m).astype(np.int64), m - 1)
        return self.sorted_[index]

    def mean(self):
        return float(self.sorted_.mean())

    def var(self):
        return float(self.sorted_.var())

    def params(self):
        return {"source": self.source, "count": len(self.sorted_)}

    def to_dict(self):
        # The data set is part of the sampling plan: a different file must not resume a run.
        digest = _digest(self.sorted_)
        return {
            "dist": self.name,
            "source": self.source,
            "count": len(self.sorted_),
            "sha256": digest,
        }


def _digest(values: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(values, dtype="<f8").tobytes()).hexdigest()


def _is_number(value) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def _finite(dist, **params) -> None:
    for key, value in params.items():
        if not isinstance(value, int | float) or not math.isfinite(value):
            shown = _fmt(value) if isinstance(value, float) else repr(value)
            raise DistributionError(f"{dist.name}: {key} = {shown}; expected a finite number")


def _ordered(dist, low, mode, high) -> None:
    if not low < high:
        raise DistributionError(
            f"{dist.name}(low={low:g}, mode={mode:g}, high={high:g}): expected low < high"
        )
    if not low <= mode <= high:
        raise DistributionError(
            f"{dist.name}(low={low:g}, mode={mode:g}, high={high:g}): expected low <= mode <= high"
        )


def _truncation(dist, low, high) -> None:
    """Truncation bounds: numbers, -inf and +inf standing for no bound."""
    for key, value, unbounded in (("low", low, -math.inf), ("high", high, math.inf)):
        if math.isnan(value) or (math.isinf(value) and value != unbounded):
            raise DistributionError(
                f"{dist.name}: truncation {key} = {value:g}; expected a finite number (or no "
                f"{key}= for no bound)"
            )
    if not low < high:
        raise DistributionError(
            f"{dist.name}: truncation low={low:g}, high={high:g}; expected low < high"
        )


_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)


def parse_distribution(
    text: str, path: str = "", base_dir: str | Path | None = None, files: bool = True
) -> Distribution:
    """Parse the text form of a distribution (see the module docstring).

    Parameters
    ----------
    text : e.g. "triangular(0.15, 0.3, 0.5)"
    path : the dotted field path it is for (names errors; default column of `empirical`)
    base_dir : folder that relative `empirical` file names are resolved against
    files : whether `empirical(FILE)` may open a file; False where the text comes from someone
        else (a memo's stamp), so that it cannot make econ read this machine's files
    """
    where = f"{clipped(path)}={clipped(text)}" if path else clipped(text)  # (a value cut to 80)
    match = _CALL.match(text)
    # the kinds this source may give: not empirical where it may not read files
    kinds = [n for n in PARSERS if files or n != "empirical"]
    if not match:
        raise DistributionError(
            f"{where}: expected NAME(ARGS), one of: " + ", ".join(f"{n}(...)" for n in kinds)
        )
    name, body = match.group(1).lower(), match.group(2)
    if name not in PARSERS:
        raise DistributionError(
            f"{where}: unknown distribution {shortened(name)}; expected one of: " + ", ".join(kinds)
        )
    args = [a.strip() for a in body.split(",")] if body.strip() else []
    if name == "empirical" and not files:
        raise DistributionError(
            f"{where}: empirical(FILE) reads a file on this machine, which a distribution from "
            "this source may not do; expected a distribution with its parameters, e.g. "
            "triangular(LOW, MODE, HIGH)"
        )
    try:
        return PARSERS[name](args, path, base_dir)
    except DistributionError as exc:
        raise DistributionError(f"{where}: {exc}") from None


def _split(args: list[str], names: tuple[str, ...], optional: tuple[str, ...] = ()):
    positional, keywords = [], {}
    for arg in args:
        if "=" in arg:
            key, value = (s.strip() for s in arg.split("=", 1))
            if key.lower() in keywords:  # the last one would silently win
                raise DistributionError(f"argument {shortened(key.lower())} given twice")
            keywords[key.lower()] = value
        elif keywords:
            raise DistributionError("positional arguments must come before keyword arguments")
        else:
            positional.append(arg)
    allowed = names + optional
    if len(positional) > len(allowed):
        raise DistributionError(
            f"expected at most {len(allowed)} arguments ({', '.join(allowed)}), "
            f"got {len(positional)}"
        )
    values = dict(zip(allowed, positional, strict=False))
    for key, value in keywords.items():
        if key not in allowed:
            raise DistributionError(
                f"unknown argument {shortened(key)}; expected: {', '.join(allowed)}"
            )
        if key in values:
            raise DistributionError(f"argument {shortened(key)} given twice")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise DistributionError(
            f"missing {', '.join(missing)}; expected ({', '.join(names)}"
            + (f"[, {', '.join(optional)}]" if optional else "")
            + ")"
        )
    return {k: _number(k, v) for k, v in values.items()}


def _number(key: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DistributionError(f"{key} = {shortened(text)}; expected a number") from None
    return value


def _uniform(args, path, base_dir):
    v = _split(args, ("low", "high"))
    return Uniform(v["low"], v["high"])


def _triangular(args, path, base_dir):
    v = _split(args, ("low", "mode", "high"))
    return Triangular(v["low"], v["mode"], v["high"])


def _pert(args, path, base_dir):
    v = _split(args, ("low", "mode", "high"), ("lambda",))
    return Pert(v["low"], v["mode"], v["high"], v.get("lambda", 4.0))


def _normal(args, path, base_dir):
    v = _split(args, ("mean", "sd"), ("low", "high"))
    return Normal(v["mean"], v["sd"], v.get("low", -math.inf), v.get("high", math.inf))


def _lognormal(args, path, base_dir):
    keys = {a.split("=", 1)[0].strip().lower() for a in args if "=" in a}
    if keys & {"mean", "sd"}:
        v = _split(args, ("mean", "sd"), ("low", "high"))
        return LogNormal.from_mean_sd(
            v["mean"], v["sd"], v.get("low", 0.0), v.get("high", math.inf)
        )
    v = _split(args, ("mu", "sigma"), ("low", "high"))
    return LogNormal(v["mu"], v["sigma"], v.get("low", 0.0), v.get("high", math.inf))


def _discrete(args, path, base_dir):
    if not args:
        raise DistributionError("expected at least one value")
    values, probs = [], []
    weighted = [":" in a for a in args]
    if any(weighted) and not all(weighted):
        raise DistributionError("give a probability for every value (V:P) or for none")
    for arg in args:
        value, _, prob = arg.partition(":")
        value = _value(value.strip())
        if value in values:  # (weights say how likely a value is, not repeats)
            raise DistributionError(
                f"value {shortened(value)} given twice; expected each value once, with a "
                "probability (V:P) to make it more likely"
            )
        values.append(value)
        if prob:
            probs.append(_number("probability", prob.strip()))
    if not probs:
        probs = [1.0 / len(values)] * len(values)
    return Discrete(tuple(values), tuple(probs))


def _value(text: str):
    try:
        number = float(text)
    except ValueError:
        return text.strip("'\"")
    return (
        int(number)
        if number.is_integer() and "." not in text and "e" not in text.lower()
        else number
    )


def _empirical(args, path, base_dir):
    if not 1 <= len(args) <= 2:
        raise DistributionError("expected empirical(FILE) or empirical(FILE, COLUMN)")
    file = Path(args[0].strip("'\""))
    if base_dir is not None and not file.is_absolute():
        file = Path(base_dir) / file
    column = args[1].strip("'\"") if len(args) == 2 else path
    return Empirical(tuple(read_column(file, column)), source=f"{file}:{column}")


def read_column(file: Path, column: str) -> np.ndarray:
    """Finite numbers of one column of a CSV or Parquet file (errors name file, column, row)."""
    import pandas as pd

    from econ.files import (
        MAX_TABLE_BYTES,
        ReadError,
        check_regular,
        read_csv_table,
        read_parquet_table,
    )

    if not file.is_file():
        raise DistributionError(f"{file}: file not found")
    expected = "a CSV or Parquet file of values"

    def present(names) -> list[str]:
        # (the messages name the file, the column and the row, never what the file holds)
        if column not in names:
            raise DistributionError(
                f"{file}: no column '{column}' among its {len(names)}; expected a CSV or "
                "Parquet file with that column (or give it: empirical(FILE, COLUMN))"
            )
        return [column]

    try:
        check_regular(file, MAX_TABLE_BYTES, expected)  # (read whole: its size first)
        if file.suffix.lower() == ".parquet":  # (that column only, its values counted first)
            frame = read_parquet_table(file, expected, present)
        else:  # (a row wider than the header would read the next column's values)
            frame = read_csv_table(file, expected)
            present(frame.columns)
    except DistributionError:
        raise
    except ReadError as exc:
        raise DistributionError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any reader failure is a bad input file
        raise DistributionError(
            f"{file}: cannot be read as CSV or Parquet ({type(exc).__name__})"
        ) from None
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DistributionError(
            f"{file}: row {row + 1}, column {column}: not a finite number; expected a finite "
            "number in every row"
        )
    return values


PARSERS = {
    "uniform": _uniform,
    "triangular": _triangular,
    "pert": _pert,
    "normal": _normal,
    "lognormal": _lognormal,
    "discrete": _discrete,
    "empirical": _empirical,
}
