"""A stratified row sample of a real table's files, for the what-if on the table itself.

The simulator needs rows only where zonemaps are not enough: a rewrite orders the rows of
its partitions (sort, Hilbert, Qd-tree, PAW) and the new partitions' zonemaps come from
where those rows land. Every file contributes its own share of rows (``fraction`` of its
row count, at least two so that both of its zonemap bounds can be carried), so the
sample is stratified by partition: sample row ``i`` belongs to the file it was read from,
and the simulated table starts with one partition per file (:mod:`engine.sim.own_table`).

Files are read with pyarrow through :mod:`engine.table.fs` (local paths and URIs), one
at a time and only the requested columns; values are encoded as in
:mod:`engine.core.logical_types` (NaN where null).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pyarrow.parquet as pq

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table import fs


@dataclass(frozen=True)
class PartitionSample:
    """Sample rows in file order: ``data[col][starts[p]:starts[p + 1]]`` came from file ``p``."""

    data: Mapping[str, np.ndarray]
    counts: np.ndarray  # sample rows per file
    fraction: float  # the share of each file's rows drawn

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    @property
    def rows(self) -> int:
        return int(self.counts.sum())


def per_file_counts(rows: np.ndarray, fraction: float) -> np.ndarray:
    """Rows drawn from each file: ``round(rows * fraction)``, at least 2 (both zonemap
    bounds), at most the file's rows.

    >>> per_file_counts(np.array([1000, 10, 1]), 0.01).tolist()
    [10, 2, 1]
    """
    want = np.maximum(2, np.round(np.asarray(rows, dtype=np.float64) * fraction)).astype(np.int64)
    return np.minimum(want, np.asarray(rows, dtype=np.int64))


def sample_fraction(total_rows: int, max_rows: int) -> float:
    """The share of rows to draw so that about ``max_rows`` are drawn (1.0 for a small table).

    >>> sample_fraction(6_000_000, 200_000), sample_fraction(1_000, 200_000)
    (0.03333333333333333, 1.0)
    """
    if max_rows < 1:
        raise InvalidParameterError(f"sample_rows must be >= 1, got {max_rows}")
    return 1.0 if total_rows <= max_rows else max_rows / float(total_rows)


def read_partition_sample(paths: Sequence[str], rows: np.ndarray, types: Mapping[str, str],
                          columns: Sequence[str], fraction: float, seed: int = 0) -> PartitionSample:
    """``per_file_counts(rows, fraction)`` rows of ``columns`` from each file, drawn
    uniformly without replacement (kept in file order)."""
    if not len(paths):
        raise InvalidParameterError("the table has no files to sample")
    rng = np.random.default_rng(seed)
    counts = per_file_counts(rows, fraction)
    parts: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    got = np.zeros(len(paths), dtype=np.int64)
    for i, path in enumerate(paths):
        filesystem, local = fs.filesystem(str(path))
        table = pq.read_table(local, columns=list(columns), filesystem=filesystem)
        n = table.num_rows
        k = min(int(counts[i]), n)
        idx = np.sort(rng.choice(n, size=k, replace=False)) if k < n else np.arange(n)
        taken = table.take(idx)
        for c in columns:
            parts[c].append(logical_types.encode_arrow(types[c], taken.column(c))[0])
        got[i] = k
    data = {c: np.concatenate(v) if v else np.zeros(0) for c, v in parts.items()}
    return PartitionSample(data=data, counts=got, fraction=float(fraction))
