"""Unit-cube sampling by scenario index: random streams per block, Sobol points, rank correlation.

Reproducibility rule: the inputs of scenario i depend only on the root seed, the sampling plan and
i, never on how scenarios are split into chunks or spread over workers. Scenarios are grouped in
fixed sampling blocks of `block_size` rows (the last block takes the remainder); block b draws
from its own stream, the child b of the root seed (`numpy.random.SeedSequence(seed,
spawn_key=(b,))`, O'Neill's PCG64 generator), and rank correlation is imposed within each block.
Chunks are made of whole blocks, so any chunking gives the same numbers.

Sobol points are addressed by index as well: point i of one scrambled sequence per run (the
scrambling is drawn from the root seed), generated from i by skipping ahead, so a chunk starting
at row 40,960 draws points 40,960 onwards.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from econ.blas import one_blas_thread
from econ.errors import InputError
from econ.text import shortened

SAMPLINGS = ("random", "sobol", "sobol-plain")
"""random: pseudo-random points; sobol: Sobol sequence with linear matrix scrambling and a
digital shift (Owen-type randomization, Matousek 1998); sobol-plain: the unscrambled sequence
without its first point (the origin, which maps to -inf for unbounded distributions)."""

SOBOL_BITS = 30
"""Bits of the Sobol points: sequences of up to 2**30 (about 1.07e9) points."""

_SOBOL_STREAM = 2**31 - 1
"""Spawn key of the stream that draws the Sobol scrambling (apart from every block's stream)."""


class SamplingError(InputError):
    """A sampling plan that cannot be drawn (bad seed, size, correlation matrix)."""


MAX_SEED = 2**53 - 1
"""The largest root seed: the largest whole number a double, JSON readers (JavaScript's
Number.MAX_SAFE_INTEGER) and the app's Seed box hold exactly, so a seed written to a run's
metadata reads back as the seed run (the app's Seed box takes the same)."""


def check_seed(seed) -> int:
    """The seed as an int from 0 to MAX_SEED, or SamplingError naming the value."""
    expected = f"expected a non-negative integer up to {MAX_SEED:,} (2^53 - 1)"
    if isinstance(seed, str) and re.fullmatch(r"\+?[0-9]+", seed.strip()):
        digits = seed.strip().lstrip("+").lstrip("0") or "0"
        if len(digits) <= len(str(MAX_SEED)):  # (int() refuses texts of over 4,300 digits)
            return check_seed(int(digits))
        shown = digits if len(digits) <= 40 else f"{digits[:40]}... ({len(digits):,} digits)"
        raise SamplingError(f"seed = {shown}: {expected}")
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        if 0 <= seed <= MAX_SEED:
            return int(seed)
        seed = int(seed)
    raise SamplingError(f"seed = {shortened(seed)}: {expected}")


def block_starts(n: int, block_size: int) -> np.ndarray:
    """First row of each sampling block: whole blocks of `block_size`, the last one takes the
    remainder (so a short tail never forms a block of its own)."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    count = max(1, n // block_size)
    return np.arange(count, dtype=np.int64) * block_size


def block_count(n: int, block_size: int) -> int:
    """Number of sampling blocks of n rows (the last one takes the remainder)."""
    return 0 if n <= 0 else max(1, n // block_size)


def block_bounds(n: int, block_size: int, block: int) -> tuple[int, int]:
    """First row and one past the last row of sampling block `block`, from its index alone."""
    lo = block * block_size
    return lo, (n if block + 1 >= block_count(n, block_size) else lo + block_size)


def block_generator(seed: int, block: int) -> np.random.Generator:
    """The random stream of sampling block `block`: child `block` of the root seed."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(block,))))


def random_unit(rng: np.random.Generator, size: int, d: int) -> np.ndarray:
    """(size, d) points strictly inside (0, 1): 52-bit grid cell midpoints, so no inverse CDF
    sees 0 or 1."""
    u = rng.random((size, d))
    return (np.floor(u * 2.0**52) + 0.5) * 2.0**-52


def sobol_unit(seed: int, start: int, stop: int, d: int, scramble: bool = True) -> np.ndarray:
    """Points start..stop-1 of a d-dimensional Sobol sequence, strictly inside (0, 1).

    Direction numbers of Joe & Kuo (SIAM J. Sci. Comput. 30 (2008) 2635-2654) as shipped by
    scipy.stats.qmc.Sobol; with `scramble`, linear matrix scrambling plus a digital shift drawn
    from the root seed (Matousek, J. Complexity 14 (1998) 527-556), and points moved to the
    middle of their 2**-30 cell. Without it, point 0 (the origin) is skipped.
    """
    if stop - start <= 0:
        return np.zeros((0, d))
    skip = 0 if scramble else 1
    if stop + skip > 2**SOBOL_BITS:
        raise SamplingError(f"Sobol sampling is limited to {2**SOBOL_BITS:,} points, got {stop:,}")
    from scipy.stats import qmc  # only Sobol sampling needs scipy.stats (0.5 s to import)

    stream = np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(_SOBOL_STREAM,)))
    )
    engine = qmc.Sobol(d, scramble=scramble, bits=SOBOL_BITS, rng=stream)
    if start + skip:
        engine.fast_forward(start + skip)
    with warnings.catch_warnings():
        # scipy warns when a draw is not a power of two: chunks are parts of one longer sequence.
        warnings.simplefilter("ignore", UserWarning)
        points = engine.random(stop - start)
    if scramble:
        points = points + 2.0 ** -(SOBOL_BITS + 1)
    return points


def sobol_balance_note(n: int, sampling: str, what: str = "scenarios") -> str | None:
    """A run's note where it draws a number of Sobol points that is not a power of 2: the
    sequence's balance (every dyadic box of the unit cube holding its share of the points) holds
    for the first 2^m points only, so the draws of other runs are less even than Sobol's."""
    if not sampling.startswith("sobol") or n < 1 or n & (n - 1) == 0:
        return None
    below = 1 << (n.bit_length() - 1)
    return (
        f"{sampling} sampling of {n:,} {what}, not a power of 2: Sobol points are balanced "
        f"only in runs of 2^m, such as {below:,} or {2 * below:,}"
    )


def normal_scores(n: int) -> np.ndarray:
    """Van der Waerden scores ndtri(i / (n + 1)), i = 1..n (Iman & Conover 1982, section 3)."""
    from scipy import special

    return special.ndtri(np.arange(1, n + 1) / (n + 1.0))


def spearman_to_pearson(rank_corr: np.ndarray) -> np.ndarray:
    """Pearson correlation of normal scores that gives Spearman rank correlation `rank_corr`:
    2 sin(pi rho_s / 6) (Pearson 1907; Kruskal, JASA 53 (1958) 814-861, eq. 4.4)."""
    return 2.0 * np.sin(np.pi * np.asarray(rank_corr, dtype=float) / 6.0)


def check_correlation(matrix: np.ndarray, names: list[str] | None = None) -> np.ndarray:
    """A valid rank-correlation matrix (symmetric, unit diagonal, entries in [-1, 1], positive
    definite once mapped to normal scores), or SamplingError saying what is wrong: a matrix that
    is not positive definite itself is inconsistent, one that is but whose normal scores'
    matrix is not cannot be imposed by Iman-Conover; each message gives the smallest
    eigenvalue of the matrix it speaks of."""
    c = np.asarray(matrix, dtype=float)
    d = c.shape[0]
    names = names or [str(i) for i in range(d)]
    if c.shape != (d, d) or not np.allclose(c, c.T) or not np.allclose(np.diag(c), 1.0):
        raise SamplingError(
            "rank correlation matrix must be square, symmetric, with 1 on the diagonal"
        )
    off = np.abs(c - np.eye(d)) > 1.0
    if off.any():
        i, j = np.argwhere(off)[0]
        raise SamplingError(
            f"rank correlation of {names[i]} and {names[j]} is {c[i, j]:g}; expected -1..1"
        )
    whole = np.abs(c - np.eye(d)) == 1.0
    if whole.any():
        # Two inputs in lockstep: the matrix is singular, which Iman-Conover cannot impose
        # (it needs the Cholesky factor of a positive definite matrix).
        i, j = np.argwhere(whole)[0]
        raise SamplingError(
            f"rank correlation of {names[i]} and {names[j]} is {c[i, j]:g}: a correlation of "
            "exactly -1 or 1 makes the correlation matrix singular (only positive "
            "semi-definite), which rank correlation cannot impose; expected a value strictly "
            f"between -1 and 1 (e.g. {0.99 * np.sign(c[i, j]):g} for inputs that move almost "
            "in lockstep)"
        )
    target = spearman_to_pearson(c)
    np.fill_diagonal(target, 1.0)
    scores = _definiteness(np.linalg.eigvalsh(target).min())
    if scores is None:
        return c
    pairs = ", ".join(
        f"{names[i]}~{names[j]}={c[i, j]:g}" for i in range(d) for j in range(i + 1, d) if c[i, j]
    )
    typed_min = np.linalg.eigvalsh(c).min()
    typed = _definiteness(typed_min)
    if typed is not None:
        raise SamplingError(
            f"rank correlations are inconsistent: the correlation matrix is {typed}, so no "
            f"inputs can have all of them at once; bring some of them closer to 0: {pairs}"
        )
    # The matrix typed is a correlation matrix; the one Iman-Conover factors is not.
    raise SamplingError(
        f"rank correlations {pairs} form a positive definite matrix (smallest eigenvalue "
        f"{typed_min:.3g}), but Iman-Conover imposes them as correlations 2 sin(pi rho / 6) of "
        f"normal scores, and the normal scores' correlation matrix is {scores}: this method "
        "cannot impose these rank correlations; bring some of them closer to 0"
    )


def _definiteness(smallest: float) -> str | None:
    """None for a positive definite matrix, given its smallest eigenvalue; else what it is."""
    if smallest > 1e-10:
        return None
    if smallest > -1e-10:
        return (
            f"singular (only positive semi-definite: smallest eigenvalue {smallest:.2g}, zero "
            "but for rounding)"
        )
    return f"not positive semi-definite (smallest eigenvalue {smallest:.3g})"


def iman_conover(u: np.ndarray, rank_corr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Reorder each column of `u` so the columns have the target rank correlation.

    The marginal values of every column are kept; only their pairing changes. Method of Iman &
    Conover (Commun. Statist. Simul. Comput. 11 (1982) 311-334): random permutations of normal
    scores R, with sample correlation T = Q Q' and target P P', become R (Q^-1)' P', whose
    columns have exactly the target correlation; each input column is then sorted into the rank
    order of the matching column. The target is the Pearson correlation of normal scores that
    gives the requested Spearman correlation (`spearman_to_pearson`).

    Parameters
    ----------
    u : array (n, d)  sampled unit points (or values), one column per input
    rank_corr : array (d, d)  target Spearman rank correlation
    rng : random stream for the permutations of the scores
    """
    n, d = u.shape
    if n < d + 2:
        raise SamplingError(
            f"rank correlation of {d} inputs needs at least {d + 2} scenarios per block, got {n}"
        )
    scores = normal_scores(n)
    r = np.column_stack([rng.permutation(scores) for _ in range(d)])
    # One BLAS thread: the ranks of `shaped` (the sampled inputs) must not depend on how a
    # threaded BLAS splits the products, or a Dask run would sample other inputs than a serial one.
    with one_blas_thread():
        t = np.corrcoef(r, rowvar=False)
        target = spearman_to_pearson(rank_corr)
        np.fill_diagonal(target, 1.0)
        q = np.linalg.cholesky(t)
        p = np.linalg.cholesky(target)
        shaped = r @ np.linalg.inv(q).T @ p.T
    out = np.empty_like(u)
    for j in range(d):
        ranks = np.argsort(np.argsort(shaped[:, j], kind="stable"), kind="stable")
        out[:, j] = np.sort(u[:, j], kind="stable")[ranks]
    return out


def spearman(x: np.ndarray) -> np.ndarray:
    """Spearman rank correlation matrix of the columns of x (no ties expected)."""
    ranks = np.argsort(np.argsort(x, axis=0, kind="stable"), axis=0, kind="stable")
    return np.corrcoef(ranks, rowvar=False)
