"""Average distinct sort-cluster size by iterative Bernoulli sampling (PTO Algorithm 2).

A sort cluster of a column set S is a group of rows with equal values of S (``GROUP BY S
COUNT(*)``). Large clusters skip well, so Algorithm 1 scores column sets by the average
of the *distinct* cluster sizes (the SQL's ``AVG(DISTINCT sortClustSize)``), estimated on
a Bernoulli sample scaled up with a Good-Turing heuristic; the rate grows tenfold until
fewer than 95% of the distinct sizes are singletons (section 3.2.4).

Our reading: ``|dcs|`` counts the distinct cluster *sizes* and
``numSingletons`` the *clusters* of size 1; it is the only reading reproducing Fig. 2.
``gt_mode="clusters"`` (|dcs| = number of clusters) is kept for comparison. Clamps
(ours, needed): delta in [0, 1] (Fig. 2's own numbers give 13,388); scaleUp =
|table|/|sample| when every distinct size is a singleton count.

Example (Fig. 2 at 0.1%: cluster sizes 100, 3, 250, 15, 1 of a 369,000-row table):
>>> s = gt_step([100, 3, 250, 15, 1], n_table=369_000)
>>> s.n_distinct, s.avg_sample, s.scale_up, s.n_clusters_orig, round(s.delta_raw), s.avg_orig
(5, 73.8, 1.25, 5.25, 13388, 73800.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from engine.core.errors import InvalidParameterError

GT_MODES = ("sizes", "clusters")
#: convergence: stop when fewer than this share of distinct sizes are singletons (line 13)
SINGLETON_SHARE = 0.95
#: or when the sample holds more than this share of the table (line 13)
SAMPLE_SHARE = 0.95


@dataclass(frozen=True)
class GtStep:
    """One iteration of Algorithm 2's loop (lines 5-13)."""

    rate: float
    n_sample: int
    n_distinct: int  # |distClustSizes_samp|
    avg_sample: float  # avgDistClustSize_samp
    singletons: int  # numSingletons
    scale_up: float
    n_clusters_orig: float  # numDistClust_orig
    delta_raw: float  # |table| / numDistClust_orig^2 before the clamp
    delta: float
    avg_orig: float
    converged: bool

    @property
    def singleton_ratio(self) -> float:
        return self.singletons / self.n_distinct if self.n_distinct else 0.0


def gt_step(cluster_sizes: Sequence[int] | np.ndarray, n_table: int, rate: float = 0.0,
            gt_mode: str = "sizes") -> GtStep:
    """Lines 6-13 of Algorithm 2 for one sample's cluster sizes."""
    if gt_mode not in GT_MODES:
        raise InvalidParameterError(f"gt_mode must be one of {', '.join(GT_MODES)}, got {gt_mode!r}")
    sizes = np.asarray(cluster_sizes, dtype=np.int64)
    n_sample = int(sizes.sum())
    if n_sample == 0:
        return GtStep(rate, 0, 0, 0.0, 0, 1.0, 0.0, 0.0, 0.0, 0.0, False)
    distinct = distinct_sizes(sizes)
    dcs = len(distinct) if gt_mode == "sizes" else len(sizes)
    avg_samp = float(distinct.mean()) if gt_mode == "sizes" else float(sizes.mean())
    singles = int((sizes == 1).sum())
    upper = n_table / n_sample
    scale_up = min(dcs / (dcs - singles), upper) if dcs > singles else upper  # line 9 (+ clamp)
    n_orig = min(scale_up * singles + dcs - singles, float(n_table))  # line 10
    delta_raw = n_table / n_orig ** 2  # line 11
    delta = min(1.0, max(0.0, delta_raw))  # ours: clamp to [0, 1]
    avg_orig = avg_samp * (delta * upper + (1 - delta) * n_orig / dcs)  # line 12
    converged = singles / dcs < SINGLETON_SHARE or n_sample / n_table > SAMPLE_SHARE
    return GtStep(rate, n_sample, dcs, avg_samp, singles, scale_up, n_orig, delta_raw, delta,
                  avg_orig, converged)


def distinct_sizes(sizes: np.ndarray) -> np.ndarray:
    """``np.unique(sizes)`` (sorted distinct values), by a ``bincount`` when the sizes are
    non-negative and at most a few times as many as there are (cluster sizes always are:
    each is at most the sample's rows): linear instead of a sort or a hash of up to
    millions of clusters, and the same array."""
    if len(sizes) and sizes.min() >= 0 and sizes.max() <= max(4 * len(sizes), 1 << 16):
        return np.flatnonzero(np.bincount(sizes))
    return np.unique(sizes)


def estimate(sampler: Callable[[float], np.ndarray], n_table: int, rate_min: float = 1e-5,
             max_rate: float = 1.0, gt_mode: str = "sizes") -> list[GtStep]:
    """Algorithm 2's loop for one column set: ``sampler(rate)`` returns the cluster sizes
    of a Bernoulli sample at ``rate``; the rate grows tenfold until convergence or
    ``max_rate`` (ours). Returns every step; the last one holds the estimate."""
    if not 0 < rate_min <= max_rate <= 1:
        raise InvalidParameterError(f"need 0 < rate_min <= max_rate <= 1, got {rate_min}, {max_rate}")
    steps: list[GtStep] = []
    rate = rate_min
    while True:
        step = gt_step(sampler(rate), n_table, rate, gt_mode)
        steps.append(step)
        if step.converged or rate >= max_rate:
            return steps
        rate = min(max_rate, rate * 10.0)


def column_factor(data: Mapping[str, np.ndarray], column: str, cache: dict | None = None
                  ) -> tuple[int, np.ndarray]:
    """(number of distinct values, each row's value index) of one column, memoised.

    A hash factorisation (pyarrow ``dictionary_encode``, NULL/NaN one group as in GROUP BY):
    4x faster than ``np.unique``'s sort on 6M rows; a GROUP BY needs equality, not order."""
    cache = {} if cache is None else cache
    if ("factor", column) not in cache:
        cache[("factor", column)] = factorize(data[column])
    return cache[("factor", column)]


def factorize(values: np.ndarray) -> tuple[int, np.ndarray]:
    """(k, codes in [0, k)) with equal codes iff equal values; NaN is one value."""
    enc = pa.array(np.asarray(values), from_pandas=True).dictionary_encode(null_encoding="encode")
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return len(enc.dictionary), codes


def group_codes(data: Mapping[str, np.ndarray], columns: Sequence[str], cache: dict | None = None,
                rows: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """(code range, one int64 code per row of ``rows``, default all), codes equal iff the
    rows agree on every column (a GROUP BY key): mixed radix over the columns'
    factorisations, compacted only when the radix product would leave int64."""
    n = len(next(iter(data.values()))) if rows is None else len(rows)
    codes, k_all = None, 1
    for col in columns:
        k, inv = column_factor(data, col, cache)
        part = inv if rows is None else inv[rows]
        if codes is None:  # the first column's codes are its factorisation (copied: memoised)
            codes = part.copy() if rows is None else part
        else:
            if k_all * k >= 2 ** 62:
                k_all, codes = factorize(codes)
                codes = np.require(codes, requirements="W")  # an Arrow buffer may be read-only
            codes *= k  # in place: one pass and no temporary of n int64 per column
            codes += part
        k_all *= k
    return k_all, (np.zeros(n, dtype=np.int64) if codes is None else codes)


def cluster_sizes(k: int, codes: np.ndarray) -> np.ndarray:
    """``GROUP BY`` counts of ``codes`` in [0, k): a ``bincount`` (linear) when the range is
    at most a few times the rows, else a sort (``np.unique``)."""
    if k <= max(4 * len(codes), 1 << 16):
        counts = np.bincount(codes, minlength=0)
        return counts[counts > 0]
    return np.unique(codes, return_counts=True)[1]


def bernoulli_sampler(data: Mapping[str, np.ndarray], columns: Sequence[str], seed: int = 0,
                      cache: dict | None = None) -> Callable[[float], np.ndarray]:
    """A sampler for :func:`estimate`: ``TABLESAMPLE BERNOULLI(rate)`` then ``GROUP BY
    columns COUNT(*)``; only the sampled rows are grouped, as in the paper's SQL.

    One uniform draw per row and seed, memoised in ``cache``: the sample at ``rate`` is the
    rows whose draw is below ``rate``, each a Bernoulli sample, nested as the rate grows
    (a row kept at 0.1% is kept at 1%), so the escalation draws once per table, not
    once per step and subset."""
    cache = {} if cache is None else cache
    n = len(next(iter(data.values())))
    if ("uniform", seed, n) not in cache:
        cache[("uniform", seed, n)] = np.random.default_rng(seed).random(n)
    u = cache[("uniform", seed, n)]

    def sample(rate: float) -> np.ndarray:
        rows = None if rate >= 1.0 else sampled_rows(u, rate, cache, (seed, n))
        if rows is not None and not len(rows):
            return np.zeros(0, np.int64)
        return cluster_sizes(*group_codes(data, columns, cache, rows))
    return sample


def sampled_rows(u: np.ndarray, rate: float, cache: dict, key: tuple) -> np.ndarray:
    """The rows whose draw is below ``rate``, memoised per (seed, rows, rate): every column
    set walks the same rates (``rate_min`` x 10^i), so the comparison over all rows runs
    once per rate, not once per rate and subset (most of Algorithm 2's time when
    a shortlist has many subsets)."""
    if ("rows", key, rate) not in cache:
        cache[("rows", key, rate)] = np.flatnonzero(u < rate)
    return cache[("rows", key, rate)]


def avg_dist_clust_size(data: Mapping[str, np.ndarray], columns: Sequence[str], n_table: int,
                        rate_min: float = 1e-5, seed: int = 0, gt_mode: str = "sizes",
                        cache: dict | None = None) -> list[GtStep]:
    """Algorithm 2 for one column set over in-memory rows (the whole table or a sample of
    it: ``n_table`` is the table's cardinality, rates are relative to the rows given)."""
    return estimate(bernoulli_sampler(data, columns, seed, cache), n_table, rate_min, gt_mode=gt_mode)


def exact_avg_dist_clust_size(data: Mapping[str, np.ndarray], columns: Sequence[str]) -> float:
    """The exact ``AVG(DISTINCT COUNT(*))`` over the full rows (the bench's reference)."""
    sizes = cluster_sizes(*group_codes(data, columns))
    return float(np.unique(sizes).mean()) if len(sizes) else 0.0
