"""A stratified row sample of a real table's files, for the what-if on the table itself.

The simulator needs rows only where zonemaps are not enough: a rewrite orders the rows of
its partitions (sort, Hilbert, Qd-tree, PAW) and the new partitions' zonemaps come from
where those rows land. Every file contributes its own share of rows (``fraction`` of its
row count, at least two so that both of its zonemap bounds can be carried), so the
sample is stratified by partition: sample row ``i`` belongs to the file it was read from,
and the simulated table starts with one partition per file (:mod:`engine.sim.own_table`).

Files are read with pyarrow through :mod:`engine.table.fs` (local paths and URIs), one
at a time and only the requested columns; values are encoded as in
:mod:`engine.core.logical_types` (NaN where null). ``read="row_group"`` (the default) reads
one row group per file, drawn with probability proportional to its rows, and samples the
file's share from it: a file of many row groups (a 128 MB file holds several) is not read
whole. A file of one row group (the demo's 2,000-row micro-partitions) is read as before.
``read="file"`` reads every file whole (uniform within the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table import fs

#: how each file's rows are read: one row group (default) or the whole file
SAMPLE_READS = ("row_group", "file")


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


def _read_rows(path: str, columns: Sequence[str], read: str, want: int,
               rng: np.random.Generator) -> "pa.Table":
    """The rows a file's sample of ``want`` rows is drawn from: one row group (drawn by
    rows; the whole file when that group holds fewer than ``want``) or the whole file."""
    filesystem, local = fs.filesystem(str(path))
    if read == "file":
        return pq.read_table(local, columns=list(columns), filesystem=filesystem)
    with filesystem.open_input_file(local) as handle:
        pf = pq.ParquetFile(handle)
        meta = pf.metadata
        sizes = np.array([meta.row_group(i).num_rows for i in range(meta.num_row_groups)], dtype=np.float64)
        if len(sizes) <= 1 or not sizes.sum():
            return pf.read(columns=list(columns))
        group = int(rng.choice(len(sizes), p=sizes / sizes.sum()))
        if sizes[group] < want:
            return pf.read(columns=list(columns))
        return pf.read_row_group(group, columns=list(columns))


def read_partition_sample(paths: Sequence[str], rows: np.ndarray, types: Mapping[str, str],
                          columns: Sequence[str], fraction: float, seed: int = 0,
                          read: str = "row_group") -> PartitionSample:
    """``per_file_counts(rows, fraction)`` rows of ``columns`` from each file, drawn
    uniformly without replacement (kept in file order) from one of its row groups
    (``read="row_group"``) or from the whole file (``read="file"``)."""
    if not len(paths):
        raise InvalidParameterError("the table has no files to sample")
    if read not in SAMPLE_READS:
        raise InvalidParameterError(f"sample_read must be one of {', '.join(SAMPLE_READS)}, got {read!r}")
    rng = np.random.default_rng(seed)
    counts = per_file_counts(rows, fraction)
    parts: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    got = np.zeros(len(paths), dtype=np.int64)
    for i, path in enumerate(paths):
        table = _read_rows(path, columns, read, int(counts[i]), rng)
        n = table.num_rows
        k = min(int(counts[i]), n)
        idx = np.sort(rng.choice(n, size=k, replace=False)) if k < n else np.arange(n)
        taken = table.take(idx)
        for c in columns:
            parts[c].append(logical_types.encode_arrow(types[c], taken.column(c))[0])
        got[i] = k
    data = {c: np.concatenate(v) if v else np.zeros(0) for c, v in parts.items()}
    return PartitionSample(data=data, counts=got, fraction=float(fraction))
