"""PTO's candidate space: partition columns, sort schemes, file and row-group sizes.

* Partition columns (section 3.2.2): INT, VARCHAR and DATE columns ranked by
  <f(c), 100 - avgSel(c)> descending; guardrails: the table holds at least
  ``min_table_rows`` (10,000) rows and 10 <= NDV(c) <= 4,000; the top k (3) and always
  NULL (no partitioning).
* Sort schemes (Algorithm 1): columns with f(c) >= 5% of the table's fragments, ranked
  the same way (capped at 8 columns, ours, what was cut is reported); every non-empty
  subset scored by an equal-weight sum of min-max normalised avgDistClustSize
  (Algorithm 2), union frequency and 100 - union selectivity (the paper omits
  ``scorePowerSet``; our reading); the top k become Z-order,
  a plain sort for one column, and a major-minor sort when a DECIMAL is in the set
  (``decimal_forces_sort``, Spark-Iceberg cannot Z-order decimals); padded with
  BIN-PACKING to k; BIN-PACKING alone when the shortlist is empty.
* TFS and RGS (section 3.2.5, Fig. 3): 5 powers of two of the file size, and per TFS the
  row-group sizes TFS / (2i), i = 1..5, plus TFS itself: 1, 2, 4, 6, 8, 10 row groups.
  4 x 3 x 5 x 6 = 360 layouts; the training set is the 12 (partition x sort) pairs, each
  with a random (TFS, RGS) drawn with a fixed seed.

Example (Table 5's counts):
>>> [space_size(p, s, t, r) for p, s, t, r in [(4, 3, 5, 6), (2, 1, 5, 6), (3, 2, 5, 6),
...                                            (4, 3, 3, 6), (4, 3, 5, 3)]]
[360, 60, 180, 216, 180]
>>> [g // MB for g in paper_tfs_grid()]
[32, 64, 128, 256, 512]
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from engine.design.pto.stats import WorkloadStats

MB = 1 << 20
PARTITION_TYPES = ("int", "string", "date")
#: row groups per file of the RGS candidates: RGS = TFS / n (section 3.2.5 with 2i, Fig. 3)
ROW_GROUPS_PER_FILE = (1, 2, 4, 6, 8, 10)
MAX_SHORTLIST = 8
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SortScheme:
    """``kind`` is "binpack" (input order), "sort" (major-minor) or "zorder"."""

    kind: str
    columns: tuple[str, ...] = ()
    avg_dist_clust_size: float = 0.0
    score: float = 0.0

    @property
    def label(self) -> str:
        if self.kind == "binpack":
            return "binpack"
        return f"{self.kind}({', '.join(self.columns)})"


BINPACK = SortScheme("binpack")


@dataclass(frozen=True)
class Layout:
    """One candidate layout: <partition column, sort scheme, TFS, RGS> (section 2.2)."""

    partition: str | None
    sort: SortScheme
    tfs_bytes: int
    rgs_bytes: int

    def describe(self) -> dict[str, Any]:
        return {"partition_by": self.partition, "sort": self.sort.label, "sort_kind": self.sort.kind,
                "sort_columns": list(self.sort.columns), "target_file_bytes": int(self.tfs_bytes),
                "row_group_bytes": int(self.rgs_bytes)}


@dataclass
class SortCandidates:
    """Algorithm 1's output with its evidence."""

    schemes: list[SortScheme]
    shortlist: list[str]
    cut: list[str] = field(default_factory=list)  # shortlisted columns beyond the cap
    scored: list[SortScheme] = field(default_factory=list)  # every subset, best first


def space_size(partitions: int, sorts: int, tfs: int, rgs: int) -> int:
    """The number of candidate layouts (Table 5)."""
    return partitions * sorts * tfs * rgs


def partition_candidates(stats: WorkloadStats, types: dict[str, str], n_table: int, top_k: int = 3,
                         min_table_rows: int = 10_000, min_parts: int = 10,
                         max_parts: int = 4_000) -> list[str | None]:
    """The top-k partition columns passing the guardrails, then None (no partitioning).

    Only columns some fragment filters on are ranked (a column no query uses cannot skip).

    Example:
    >>> s = WorkloadStats([], {"a": 3, "b": 3, "c": 1}, {"a": 5.0, "b": 1.0, "c": 1.0},
    ...                   {"a": 10, "b": 4_000, "c": 4_001})
    >>> partition_candidates(s, {"a": "int", "b": "date", "c": "int"}, 10_000)
    ['b', 'a', None]
    >>> partition_candidates(s, {"a": "int", "b": "date", "c": "int"}, 9_999)
    [None]
    """
    if n_table < min_table_rows:
        return [None]
    ok = [c for c in stats.freq if types.get(c) in PARTITION_TYPES
          and min_parts <= stats.ndv.get(c, 0) <= max_parts]
    return [*stats.ranked(ok)[:top_k], None]


def shortlist(stats: WorkloadStats, threshold: float = 0.05) -> list[str]:
    """Columns used by at least ``threshold`` of the table's fragments, ranked (Alg. 1 l. 3)."""
    n = len(stats.fragments)
    return stats.ranked(c for c, f in stats.freq.items() if n and f >= threshold * n)


def score_power_set(subsets: Sequence[tuple[str, ...]], clust: Sequence[float],
                    stats: WorkloadStats) -> np.ndarray:
    """Equal-weight sum of min-max normalised avgDistClustSize, union frequency and
    100 - union selectivity (Algorithm 1 line 10, ``scorePowerSet``)."""
    unions = [stats.union(s) for s in subsets]
    parts = [np.asarray(clust, dtype=float), np.array([u.n_queries for u in unions], dtype=float),
             np.array([100.0 - u.avg_sel for u in unions])]
    total = np.zeros(len(subsets))
    for p in parts:
        span = p.max() - p.min() if len(p) else 0.0
        total += (p - p.min()) / span if span > 0 else 0.0
    return total / 3.0


def sort_candidates(stats: WorkloadStats, types: dict[str, str],
                    clust_size: Callable[[tuple[str, ...]], float], top_k: int = 3,
                    threshold: float = 0.05, max_columns: int = MAX_SHORTLIST,
                    decimal_forces_sort: bool = True) -> SortCandidates:
    """Algorithm 1: the top-k sort schemes (padded with BIN-PACKING to k).

    ``clust_size(subset)`` is Algorithm 2's estimate for a column subset.
    """
    ranked = shortlist(stats, threshold)
    short, cut = ranked[:max_columns], ranked[max_columns:]
    if cut:
        log.info("PTO sort shortlist capped at %d columns (2^%d - 1 subsets); cut: %s",
                 max_columns, max_columns, ", ".join(cut))
    if not short:
        return SortCandidates([BINPACK], [], cut)
    subsets = [s for r in range(1, len(short) + 1) for s in itertools.combinations(short, r)]
    clust = [clust_size(s) for s in subsets]
    scores = score_power_set(subsets, clust, stats)
    # best score first; ties: fewer columns, then the shortlist's order (stable)
    order = sorted(range(len(subsets)), key=lambda i: (-scores[i], len(subsets[i]), i))
    scored = [SortScheme(_kind(subsets[i], types, decimal_forces_sort), subsets[i], clust[i],
                         float(scores[i])) for i in order]
    schemes = scored[:top_k]
    schemes += [BINPACK] * (top_k - len(schemes))
    return SortCandidates(schemes, short, cut, scored)


def _kind(columns: tuple[str, ...], types: dict[str, str], decimal_forces_sort: bool) -> str:
    if len(columns) == 1:
        return "sort"
    if decimal_forces_sort and any(types.get(c) == "decimal" for c in columns):
        return "sort"
    return "zorder"


def paper_tfs_grid() -> list[int]:
    """The paper's TFS candidates: the powers of two in [32, 512] MB (section 4.1.3)."""
    return [MB << i for i in range(5, 10)]


def scaled_tfs_grid(table_bytes: int, files_min: int = 8, floor_bytes: int = 64 << 10) -> list[int]:
    """Five powers of two of the file size, scaled to the table (ours):
    the largest is the power of two nearest below table_bytes / ``files_min`` (so even the
    largest TFS gives a few files), capped at the paper's 512 MB, at least
    16 x ``floor_bytes``; each step halves it. At TPC-H SF 1 lineitem (~200 MB) this is
    1-16 MB, the bench's grid; a multi-terabyte table gets the paper's 32-512 MB.

    Example:
    >>> [g // MB for g in scaled_tfs_grid(200 * MB)]
    [1, 2, 4, 8, 16]
    >>> scaled_tfs_grid(1 << 50) == paper_tfs_grid()
    True
    """
    top = 1 << max(0, int(np.floor(np.log2(max(1, table_bytes / files_min)))))
    top = min(512 * MB, max(16 * floor_bytes, top))
    return [top >> i for i in range(4, -1, -1)]


def rgs_for(tfs: int, per_file: Sequence[int] = ROW_GROUPS_PER_FILE) -> list[int]:
    """The RGS candidates of one TFS: TFS / n for n row groups per file.

    Example:
    >>> [r // MB for r in rgs_for(32 * MB, (1, 2, 4, 8))]
    [32, 16, 8, 4]
    """
    return [max(1, tfs // n) for n in per_file]


def enumerate_layouts(partitions: Sequence[str | None], sorts: Sequence[SortScheme],
                      tfs_grid: Sequence[int],
                      per_file: Sequence[int] = ROW_GROUPS_PER_FILE) -> list[Layout]:
    """The candidate space: partitions x sorts x TFS x RGS (Fig. 3)."""
    return [Layout(p, s, t, r) for p in partitions for s in _dedup(sorts) for t in tfs_grid
            for r in rgs_for(t, per_file)]


def training_layouts(partitions: Sequence[str | None], sorts: Sequence[SortScheme],
                     tfs_grid: Sequence[int], per_file: Sequence[int] = ROW_GROUPS_PER_FILE,
                     seed: int = 0, budget: int = 0) -> list[Layout]:
    """One layout per (partition, sort) pair with a random (TFS, RGS), fixed seed (s. 4.1.3).

    ``budget`` (ours, 0 = the paper): if the pairs are fewer than ``budget``, add more random
    sizes of the pairs, one pair at a time in turn, until ``budget`` labels (or every
    candidate). The paper's 12 labels are 4 partition candidates x 3 sort schemes; a table
    with one partition candidate gets 6, one random size per pair, so the effect of the
    size can be confounded with the partition column (TPC-H orders, bench/pto/README.md).

    Example: two pairs, budget 4 -> every pair gets a second size
    >>> g = [64, 128]
    >>> t = training_layouts([None], [SortScheme("sort", ("a",)), BINPACK], g, (1,), budget=4)
    >>> len(t), len(set(t)), sorted({(x.sort.label, x.tfs_bytes) for x in t}) == sorted(
    ...     {(s, f) for s in ("sort(a)", "binpack") for f in g})
    (4, 4, True)
    """
    rng = np.random.default_rng(seed)
    out = []
    pairs = [(p, s) for p in partitions for s in _dedup(sorts)]
    for p, s in pairs:
        t = int(tfs_grid[rng.integers(len(tfs_grid))])
        rgs = rgs_for(t, per_file)
        out.append(Layout(p, s, t, int(rgs[rng.integers(len(rgs))])))
    sizes = [(int(t), int(r)) for t in tfs_grid for r in rgs_for(t, per_file)]
    left = {pair: [x for x in sizes if Layout(*pair, *x) not in out] for pair in pairs}
    while len(out) < budget and any(left.values()):
        for pair in pairs:
            if len(out) < budget and left[pair]:
                out.append(Layout(*pair, *left[pair].pop(int(rng.integers(len(left[pair]))))))
    return out


def _dedup(sorts: Sequence[SortScheme]) -> list[SortScheme]:
    """Sort schemes with BIN-PACKING padding kept as distinct slots only once each.

    The paper pads to k with bin-packing; repeated bin-packing slots would be the same
    layout, so they collapse (the count of distinct layouts is what gets enumerated)."""
    seen: dict[str, SortScheme] = {}
    for s in sorts:
        seen.setdefault(s.label, s)
    return list(seen.values())
