"""Streaming summary statistics of Monte Carlo outputs: moments, quantiles, tail risk.

Memory stays bounded whatever the number of scenarios: each chunk is reduced to per-block moments
(count, mean, sum of squared deviations, min, max, count below zero) and, for large runs, to a
quantile sketch; the driver merges them. Results do not depend on chunking or on the order in
which chunks finish: block moments are merged sequentially in block order (Chan, Golub & LeVeque,
"Algorithms for computing the sample variance", The American Statistician 37 (1983) 242-247), and
sketch counts are integers, whose sums do not depend on order.

Quantiles are exact (`numpy.quantile`, linear interpolation, Hyndman & Fan type 7) while all
values fit in `exact_limit`; above it they come from a log-bucketed sketch whose quantiles are
within a relative error `relative_accuracy` of a true order statistic (DDSketch: Masson, Rim & Lee,
"DDSketch: a fast and fully-mergeable quantile sketch with relative-error guarantees", PVLDB 12
(2019) 2195-2205).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

QUANTILES = (0.05, 0.10, 0.50, 0.90, 0.95)
"""Reported quantiles: P5, P10, P50, P90, P95."""

RISK_LEVEL = 0.95
"""Confidence level of value at risk and expected shortfall of NPV."""

SKETCH_RELATIVE_ACCURACY = 1e-4
SKETCH_ZERO = 1e-12
"""Values of magnitude below this count as zero in the sketch."""


@dataclass
class BlockMoments:
    """Moments of one metric per sampling block, arrays (blocks,)."""

    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    below_zero: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, starts: np.ndarray) -> BlockMoments:
        """Moments of `values` split at block `starts` (relative to values[0]); NaN is skipped.

        Blocks of equal length are reduced together as rows of a 2-D array (each row summed in the
        same pairwise order as alone), an unequal last block on its own: a block's moments are the
        same whichever chunk it is in.
        """
        starts = np.asarray(starts, dtype=np.int64)
        bounds = np.append(starts, len(values))
        sizes = np.diff(bounds)
        if len(sizes) == 0:
            return cls(*(np.zeros(0) for _ in range(6)))
        size = sizes[0]
        equal = int(np.argmax(sizes != size)) if np.any(sizes != size) else len(sizes)
        parts = [values[: equal * size].reshape(equal, size)] if equal else []
        parts += [
            values[a:b][None, :] for a, b in zip(bounds[equal:-1], bounds[equal + 1 :], strict=True)
        ]
        return cls.concat(cls._rows(p) for p in parts)

    @classmethod
    def _rows(cls, rows: np.ndarray) -> BlockMoments:
        finite = np.isfinite(rows)
        if finite.all():  # the usual case: the same sums as below, without the masked copies
            count = np.full(rows.shape[0], float(rows.shape[1]))
            mean = rows.sum(axis=1) / count
            deviation = rows - mean[:, None]
            m2 = np.sum(deviation * deviation, axis=1)
            below = np.count_nonzero(rows < 0, axis=1).astype(float)
            return cls(count, mean, m2, rows.min(axis=1), rows.max(axis=1), below)
        count = finite.sum(axis=1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, np.where(finite, rows, 0.0).sum(axis=1) / count, 0.0)
            deviation = np.where(finite, rows - mean[:, None], 0.0)
        m2 = np.sum(deviation * deviation, axis=1)
        lo = np.where(finite, rows, np.inf).min(axis=1)
        hi = np.where(finite, rows, -np.inf).max(axis=1)
        below = np.count_nonzero(finite & (rows < 0), axis=1).astype(float)
        return cls(count, mean, m2, lo, hi, below)

    @staticmethod
    def concat(items: Iterable[BlockMoments]) -> BlockMoments:
        items = list(items)
        return BlockMoments(
            *(np.concatenate([getattr(i, f) for i in items]) for f in BlockMoments._fields())
        )

    @staticmethod
    def _fields() -> tuple[str, ...]:
        return ("count", "mean", "m2", "minimum", "maximum", "below_zero")

    def total(self) -> tuple[float, float, float, float, float, float]:
        """(count, mean, m2, min, max, below_zero) of all blocks, merged in block order."""
        running = RunningMoments()
        running.add(self)
        return running.total()


@dataclass
class RunningMoments:
    """Moments of the blocks added so far, merged one block at a time in the order added
    (Chan, Golub & LeVeque 1983): adding a run's blocks chunk by chunk gives the same bits as
    merging them all at once, and holds six numbers whatever the number of blocks."""

    count: float = 0.0
    mean: float = 0.0
    m2: float = 0.0
    minimum: float = np.inf
    maximum: float = -np.inf
    below_zero: float = 0.0

    def add(self, blocks: BlockMoments) -> None:
        n, mean, m2 = self.count, self.mean, self.m2
        for nb, mb, m2b in zip(blocks.count, blocks.mean, blocks.m2, strict=True):
            if nb == 0:
                continue
            total = n + nb
            delta = mb - mean
            mean = mean + delta * nb / total
            m2 = m2 + m2b + delta * delta * n * nb / total
            n = total
        self.count, self.mean, self.m2 = n, mean, m2
        if len(blocks.minimum):
            self.minimum = min(self.minimum, float(blocks.minimum.min()))
            self.maximum = max(self.maximum, float(blocks.maximum.max()))
        self.below_zero += float(blocks.below_zero.sum())

    def total(self) -> tuple[float, float, float, float, float, float]:
        return self.count, self.mean, self.m2, self.minimum, self.maximum, self.below_zero


class _Buckets:
    """Dense bucket counts from key `offset` on: merging aligns two arrays, no per-key loop."""

    __slots__ = ("counts", "offset")

    def __init__(self, offset: int = 0, counts: np.ndarray | None = None):
        self.offset = offset
        self.counts = np.zeros(0, dtype=np.int64) if counts is None else counts

    @classmethod
    def of_keys(cls, keys: np.ndarray) -> _Buckets:
        if keys.size == 0:
            return cls()
        low = int(keys.min())
        return cls(low, np.bincount(keys - low).astype(np.int64))

    def merge(self, other: _Buckets) -> None:
        if other.counts.size == 0:
            return
        if self.counts.size == 0:
            self.offset, self.counts = other.offset, other.counts.copy()
            return
        low = min(self.offset, other.offset)
        high = max(self.offset + self.counts.size, other.offset + other.counts.size)
        merged = np.zeros(high - low, dtype=np.int64)
        merged[self.offset - low : self.offset - low + self.counts.size] += self.counts
        merged[other.offset - low : other.offset - low + other.counts.size] += other.counts
        self.offset, self.counts = low, merged

    def nonzero(self) -> tuple[np.ndarray, np.ndarray]:
        keys = np.flatnonzero(self.counts)
        return keys + self.offset, self.counts[keys]

    # Sent between processes as (keys, counts) of the occupied buckets: a chunk's buckets are
    # sparse over the range they span.
    def __getstate__(self):
        keys, counts = self.nonzero()
        return keys.astype(np.int64), counts

    def __setstate__(self, state):
        keys, counts = state
        if keys.size == 0:
            self.offset, self.counts = 0, np.zeros(0, dtype=np.int64)
            return
        self.offset = int(keys[0])
        self.counts = np.zeros(int(keys[-1]) - self.offset + 1, dtype=np.int64)
        self.counts[keys - self.offset] = counts


@dataclass
class QuantileSketch:
    """Mergeable quantile sketch with relative accuracy (DDSketch, Masson et al. 2019).

    A value x > 0 goes to bucket ceil(log_gamma(x)), gamma = (1 + a) / (1 - a); the bucket's
    representative value 2 gamma^k / (gamma + 1) is within a relative error a of every value in
    it. Negative values use a mirrored set of buckets; |x| < SKETCH_ZERO counts as zero. Memory
    grows with the spread of the values (log of max/min over log gamma), not with their number.
    """

    relative_accuracy: float = SKETCH_RELATIVE_ACCURACY
    positive: _Buckets = field(default_factory=_Buckets)
    negative: _Buckets = field(default_factory=_Buckets)
    zero: int = 0

    @property
    def gamma(self) -> float:
        return (1 + self.relative_accuracy) / (1 - self.relative_accuracy)

    @property
    def count(self) -> int:
        return int(self.zero + self.positive.counts.sum() + self.negative.counts.sum())

    def add(self, values: np.ndarray) -> QuantileSketch:
        values = values[np.isfinite(values)]
        log_gamma = np.log(self.gamma)
        self.zero += int(np.count_nonzero(np.abs(values) < SKETCH_ZERO))
        for store, part in (
            (self.positive, values[values >= SKETCH_ZERO]),
            (self.negative, -values[values <= -SKETCH_ZERO]),
        ):
            keys = np.ceil(np.log(part) / log_gamma).astype(np.int64)
            store.merge(_Buckets.of_keys(keys))
        return self

    def merge(self, other: QuantileSketch) -> QuantileSketch:
        self.positive.merge(other.positive)
        self.negative.merge(other.negative)
        self.zero += other.zero
        return self

    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """Bucket values in ascending order and their counts."""
        g = self.gamma
        value = lambda k: 2 * np.power(g, k.astype(float)) / (g + 1)  # noqa: E731
        neg_keys, neg_counts = self.negative.nonzero()
        pos_keys, pos_counts = self.positive.nonzero()
        zero = [self.zero] if self.zero else []
        values = np.concatenate([-value(neg_keys[::-1]), [0.0] * len(zero), value(pos_keys)])
        counts = np.concatenate([neg_counts[::-1], zero, pos_counts]).astype(np.int64)
        return values, counts

    def quantile(self, q: float | Iterable[float]) -> np.ndarray:
        """Quantiles at rank q (n - 1), interpolated between the two neighbouring order
        statistics as numpy's linear method does; NaN for an empty sketch."""
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        values, counts = self._sorted()
        n = counts.sum()
        if n == 0:
            return np.full(qs.shape, np.nan)
        cumulative = np.cumsum(counts)
        rank = qs * (n - 1)
        lo = np.floor(rank).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        v_lo = values[np.searchsorted(cumulative, lo, side="right")]
        v_hi = values[np.searchsorted(cumulative, hi, side="right")]
        return v_lo + (rank - lo) * (v_hi - v_lo)

    def tail_mean(self, threshold: float) -> float:
        """Mean of the values at or below `threshold`, from bucket values."""
        values, counts = self._sorted()
        keep = values <= threshold
        total = counts[keep].sum()
        return float(np.dot(values[keep], counts[keep]) / total) if total else np.nan

    def histogram(self, bins: int = 60) -> tuple[np.ndarray, np.ndarray]:
        """Counts on `bins` equal-width bins between the extreme bucket values."""
        values, counts = self._sorted()
        return _histogram(values, bins, counts)


@dataclass
class MetricSummary:
    """Summary of one output over all scenarios (NaN where a metric is undefined is counted in
    `undefined`, never averaged)."""

    name: str
    count: int
    undefined: int
    mean: float
    std: float
    minimum: float
    maximum: float
    quantiles: dict[float, float]
    below_zero: int

    def as_dict(self) -> dict:
        out = {
            "count": self.count,
            "undefined": self.undefined,
            "mean": self.mean,
            "std": self.std,
            "min": self.minimum,
        }
        out |= {quantile_label(q): v for q, v in self.quantiles.items()}
        out["max"] = self.maximum
        return {k: _clean(v) for k, v in out.items()}


def quantile_label(q: float) -> str:
    return f"p{round(q * 100):g}"


def _clean(value):
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if not np.isfinite(value) else value
    return int(value) if isinstance(value, np.integer) else value


@dataclass
class ChunkSummary:
    """What a chunk contributes to the run's summary: per-block moments of each metric, and either
    the metric values (exact quantiles) or sketches."""

    start: int
    stop: int
    moments: dict[str, BlockMoments]
    values: dict[str, np.ndarray] | None = None
    sketches: dict[str, QuantileSketch] | None = None


def summarize_chunk(
    metrics: Mapping[str, np.ndarray],
    start: int,
    stop: int,
    block_starts: np.ndarray,
    exact: bool,
    relative_accuracy: float = SKETCH_RELATIVE_ACCURACY,
) -> ChunkSummary:
    """Reduce one chunk's metrics (rows start..stop-1) to a ChunkSummary.

    `block_starts` are the run's block starts that fall in [start, stop).
    """
    local = np.asarray(block_starts) - start
    moments = {
        name: BlockMoments.of(np.asarray(v, dtype=float), local) for name, v in metrics.items()
    }
    if exact:
        values = {name: np.asarray(v, dtype=float) for name, v in metrics.items()}
        return ChunkSummary(start, stop, moments, values=values)
    sketches = {
        name: QuantileSketch(relative_accuracy).add(np.asarray(v, dtype=float))
        for name, v in metrics.items()
    }
    return ChunkSummary(start, stop, moments, sketches=sketches)


REPR_OUTPUTS = 4
"""How many output names repr(RunSummary) and repr(RunResult) show."""


@dataclass
class RunSummary:
    """Summary statistics of a Monte Carlo run, with the NPV risk figures."""

    n: int
    metrics: dict[str, MetricSummary]
    quantile_method: str
    risk: dict[str, float | None]
    histograms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    covenant_breach_probability: float | None = None
    """Share of scenarios with a covenant breach, where first_breach_month is an output."""

    def __repr__(self) -> str:
        # The dataclass repr printed every metric's quantiles and histogram (some 16,000
        # characters), flooding a notebook cell.
        names = list(self.metrics)
        shown = ", ".join(names[:REPR_OUTPUTS])
        if len(names) > REPR_OUTPUTS:
            shown += f", ... ({len(names) - REPR_OUTPUTS} more)"
        return (
            f"<RunSummary: {self.n:,} scenarios, {len(names)} metrics [{shown}], "
            f"{self.quantile_method} quantiles; see .metrics[name] (.mean, .quantiles, ...), "
            ".risk, .as_dict()>"
        )

    def as_dict(self) -> dict:
        out = {
            "scenarios": self.n,
            "quantile_method": self.quantile_method,
            "metrics": {name: m.as_dict() for name, m in self.metrics.items()},
            "npv_risk": {k: _clean(v) for k, v in self.risk.items()},
        }
        if self.covenant_breach_probability is not None:
            out["probability_of_covenant_breach"] = self.covenant_breach_probability
        return out


class SummaryAccumulator:
    """Merges chunk summaries as they arrive (any order) in bounded memory.

    Sketch counts are merged at once. Per-block moments are merged in block order as soon as
    the chunks before them have arrived (a chunk that finishes early waits, with the few others
    in flight), so they take the same memory for 10^4 and 10^10 scenarios; for exact runs, the
    metric values (at most `exact_limit` per metric) are kept by chunk and put in order at the end.
    """

    def __init__(self, n: int):
        self.n = n
        self.names: list[str] | None = None
        self.running: dict[str, RunningMoments] = {}
        self.waiting: dict[int, ChunkSummary] = {}
        self.next_start = 0
        self.values: dict[int, dict[str, np.ndarray]] = {}
        self.sketches: dict[str, QuantileSketch] | None = None

    def add(self, chunk: ChunkSummary) -> None:
        if self.names is None:
            self.names = list(chunk.moments)
            self.running = {name: RunningMoments() for name in self.names}
        self.waiting[chunk.start] = chunk
        while self.next_start in self.waiting:
            self._merge(self.waiting.pop(self.next_start))
        if chunk.values is not None:
            self.values[chunk.start] = chunk.values
        if chunk.sketches is not None:
            if self.sketches is None:
                self.sketches = {
                    k: QuantileSketch(v.relative_accuracy) for k, v in chunk.sketches.items()
                }
            for name, sketch in chunk.sketches.items():
                self.sketches[name].merge(sketch)

    def _merge(self, chunk: ChunkSummary) -> None:
        for name, moments in chunk.moments.items():
            self.running[name].add(moments)
        self.next_start = chunk.stop

    def result(
        self,
        quantiles: tuple[float, ...] = QUANTILES,
        risk_metric: str = "npv_usd",
        risk_level: float = RISK_LEVEL,
        histogram_bins: int = 60,
    ) -> RunSummary:
        if self.names is None:
            raise ValueError("no chunks to summarize")
        for start in sorted(self.waiting):  # chunks after a gap (a partial set of chunks)
            self._merge(self.waiting.pop(start))
        starts = sorted(self.values)
        names = self.names
        exact = self.sketches is None
        out: dict[str, MetricSummary] = {}
        histograms = {}
        risk: dict[str, float | None] = {}
        tail_q = 1 - risk_level
        for name in names:
            count, mean, m2, lo, hi, below = self.running[name].total()
            if exact:
                values = np.concatenate([self.values[s][name] for s in starts])
                finite = values[np.isfinite(values)]
                # One selection for the reported quantiles and, for the risk metric, the tail one.
                asked = (*quantiles, tail_q) if name == risk_metric else quantiles
                qs = np.quantile(finite, asked) if finite.size else np.full(len(asked), np.nan)
                qs, tail_cut = qs[: len(quantiles)], qs[-1]
                histograms[name] = _histogram(finite, histogram_bins) if finite.size else None
            else:
                sketch = self.sketches[name]
                # A sketch's value is its bucket's, within the relative accuracy of the order
                # statistic: below the exact minimum or above the maximum it reads as a value no
                # scenario has (min_dscr P5 1.299916 under a minimum of 1.3).
                qs = sketch.quantile(quantiles)
                qs = np.clip(qs, lo, hi) if count else qs
                histograms[name] = sketch.histogram(histogram_bins) if sketch.count else None
            out[name] = MetricSummary(
                name=name,
                count=int(count),
                undefined=int(self.n - count),
                mean=mean if count else np.nan,
                std=_std(count, m2, lo, hi),
                minimum=lo if count else np.nan,
                maximum=hi if count else np.nan,
                quantiles=dict(zip(quantiles, (float(v) for v in qs), strict=True)),
                below_zero=int(below),
            )
            if name == risk_metric and count:
                if exact:
                    cut = float(tail_cut)
                    shortfall = float(finite[finite <= cut].mean())
                else:
                    cut = float(sketch.quantile(tail_q)[0])
                    shortfall = sketch.tail_mean(cut)
                    cut = float(np.clip(cut, lo, hi))
                    shortfall = float(np.clip(shortfall, lo, cut))  # a mean of values <= cut
                pct = f"{round(risk_level * 100):g}"
                risk = {
                    "probability_of_loss": below / count,
                    f"value_at_risk_{pct}_usd": -cut,
                    f"expected_shortfall_{pct}_usd": -shortfall,
                }
        breach = out.get("first_breach_month")  # null exactly where no covenant is breached
        histograms = {k: v for k, v in histograms.items() if v is not None}
        if exact:
            method = "exact (linear interpolation)"
        else:
            accuracy = next(iter(self.sketches.values())).relative_accuracy
            method = f"sketch (relative error <= {accuracy:g})"
        return RunSummary(
            n=self.n,
            metrics=out,
            quantile_method=method,
            risk=risk,
            histograms=histograms,
            covenant_breach_probability=None if breach is None else breach.count / self.n,
        )


def _std(count: float, m2: float, lo: float, hi: float) -> float:
    """Sample standard deviation from the merged moments; exactly 0 where every value is the
    same (the merged squared deviations keep the rounding of the block means: 0.0079 for a
    constant 5.6e15, 2.8e-17 for a constant cost per token)."""
    if count < 2:
        return np.nan
    return 0.0 if lo == hi else float(np.sqrt(m2 / (count - 1)))


def combine(chunks: Iterable[ChunkSummary], n: int, **options) -> RunSummary:
    """Merge chunk summaries (any order) into the run's summary."""
    accumulator = SummaryAccumulator(n)
    for chunk in chunks:
        accumulator.add(chunk)
    return accumulator.result(**options)


CONSTANT_BIN_RELATIVE = 0.005
"""Half the width of the one bin of an output that takes a single value, as a share of that
value (of 1 where the value is 0 or too small for its share to widen the range)."""


def _histogram(values: np.ndarray, bins: int, weights: np.ndarray | None = None):
    """numpy.histogram of finite values; one bin where they are all equal, or too close together
    for `bins` bins of finite width.

    A single value v gets the bin v +- CONSTANT_BIN_RELATIVE |v|: numpy's own v +- 0.5 is v
    itself for |v| above 2^52 (a run's 5.6e15 tokens), where np.histogram raised "Too many bins
    for data range" and the run ended in a traceback after all its work.
    """
    lo, hi = float(np.min(values)), float(np.max(values))
    if lo == hi:
        half = abs(lo) * CONSTANT_BIN_RELATIVE
        if not lo - half < lo + half:
            half = 0.5  # numpy's width around 0 (and subnormal values)
        return np.histogram(values, bins=1, range=(lo - half, lo + half), weights=weights)
    try:
        return np.histogram(values, bins=bins, range=(lo, hi), weights=weights)
    except ValueError:  # a range too narrow for `bins` finite-width bins
        return np.histogram(values, bins=1, range=(lo, hi), weights=weights)
