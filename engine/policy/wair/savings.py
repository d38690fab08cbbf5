"""WAIR's per-partition saving estimate: equation 3, the beta bonus (equation 6) and the
per-column split behind savings signatures (section 4.4).

For a query Q of the sliding window and a partition P that Q scans, reclustering P would
save (equation 3)::

    dt(P | Q) = (1 - u) * size_read(P) / size_read(Q) * t_read(Q)

``u`` is P's utilization for Q (from the pruning analysis; only boundary partitions have
u < 1, so only they can save anything), ``size_read`` is projection-aware
(``FragmentScan.read_bytes``: the compressed bytes of the columns Q reads, summed over what
Q scans), and ``t_read(Q)`` is Q's measured duration when the log has it, else its priced
read time ``read_seconds(size_read(Q), files scanned)``: the query's bill without its fixed
cost, at the calibrated per-file cost and scan rate (uncalibrated the per-file
cost is 0 and the formula reduces to the saved bytes at scan rate).

Equation 6 adds ``beta * |d pruned(P | Q)|``: the price a user pays per extra pruned
partition. We estimate that reclustering a boundary partition of utilization u turns
``(1 - u)`` of a partition's worth of rows into prunable rows (its u matching share ends up
packed into u of a partition after the sort), so ``|d pruned(P | Q)| ~ 1 - u``. beta is in
CPU-seconds per pruned partition, so the bonus adds to the saving in the same unit.

Section 4.4 splits each query's saving equally over the columns in its predicate; summed
over the window this gives, per partition, the vector s_P whose unit-normalized form is the
savings signature.

Everything is vectorized and streamed: per distinct query outcome we take the index array
of its boundary partitions from the sparse scan (most partitions are pruned by most
queries) and accumulate with ``np.bincount``; identical queries are folded once with their
count, so memory is O(partitions + distinct queries).

Example (two partitions, one query reading 100 bytes in 1 s; P0 is a boundary partition
with u = 0.25 and 40 bytes read, P1 is fully covered):
>>> import numpy as np
>>> from engine.core.config import Settings
>>> from engine.scan.pruning import FragmentScan
>>> scan = FragmentScan("q1", np.array([True, True]), np.array([False, True]),
...                     np.array([0.25, 1.0]), np.array([40.0, 60.0]), ("a",))
>>> b = savings_breakdown(2, [scan], [1.0], Settings())
>>> b.saving_cpu.tolist()  # (1 - 0.25) * 40 / 100 * 1 s
[0.3, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import read_seconds as priced_read_seconds

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scan.pruning import FragmentScan
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class SavingsBreakdown:
    """Per-partition estimates over one window (arrays align with the ZoneMaps)."""

    saving_cpu: np.ndarray  # equation 3 summed over the window, CPU-seconds
    bonus: np.ndarray  # equation 6's beta * |d pruned|, CPU-seconds
    bytes_saved: np.ndarray  # (1 - u) * size_read(P), summed over the window
    prunable: np.ndarray  # sum of (1 - u): estimated extra pruned partitions
    hits: np.ndarray  # number of window queries for which P is a boundary partition
    per_column: np.ndarray  # [n, d] split of saving_cpu + bonus over ``columns``
    columns: list[str]
    queries: int  # fragments of the window that were used
    read_seconds: float = 0.0  # sum of t_read(Q) over those fragments (eq. 5's mean query cost)

    @property
    def mean_query_seconds(self) -> float:
        """The window's mean query cost, CPU-seconds (0 without queries)."""
        return self.read_seconds / self.queries if self.queries else 0.0

    @property
    def total(self) -> np.ndarray:
        """What Algorithm 2 ranks by: saving plus performance bonus."""
        return self.saving_cpu + self.bonus


def _t_read(duration_s: float | None, size_q: float, files: int, settings: "Settings") -> float:
    """Measured read time of a query if known, else its priced read time (its files and
    bytes, :func:`engine.policy.costmodel.read_seconds`)."""
    if duration_s is not None and duration_s > 0:
        return float(duration_s)
    return priced_read_seconds(size_q, files, settings)


def _distinct(scans: Sequence["FragmentScan"], durations_s: Sequence[float | None]
              ) -> Iterator[tuple["FragmentScan", list[float | None]]]:
    """Each distinct pruning outcome once with the durations of the queries sharing it:
    :meth:`engine.scan.pruning.WindowScans.distinct` when the window offers it (identical
    fragments pruned once), else one outcome per scan."""
    distinct = getattr(scans, "distinct", None)
    if distinct is None:
        for scan, dur in zip(scans, durations_s):
            yield scan, [dur]
        return
    for scan, positions in distinct():
        yield scan, [durations_s[i] for i in positions]


def savings_breakdown(n: int, scans: Sequence["FragmentScan"],
                      durations_s: Sequence[float | None], settings: "Settings",
                      beta: float = 0.0, columns: Sequence[str] | None = None) -> SavingsBreakdown:
    """Equation 3 (+ beta) for ``n`` partitions and the window's scans.

    ``durations_s[i]`` is the measured read time of scan i in seconds (None: estimate).
    ``columns`` fixes the column order of ``per_column`` (others are appended in first-seen
    order); queries without a predicated column cannot be helped by any clustering key
    and are skipped.

    Streaming: each distinct pruning outcome is visited once and folded into
    per-partition sums through its boundary partitions only; queries sharing an outcome
    (same boxes and projection) add their read times, since eq. 3 is linear in
    t_read(Q): ``sum_i w * t_i / size = w * (sum_i t_i) / size``. Memory is
    O(partitions x predicated columns + distinct queries), never partitions x queries.
    """
    if len(scans) != len(durations_s):
        raise InvalidParameterError(
            f"window has {len(durations_s)} fragments but {len(scans)} pruning results")
    if beta < 0:
        raise InvalidParameterError(f"beta must be >= 0, got {beta}")
    cols: dict[str, int] = {c: i for i, c in enumerate(columns or ())}
    acc: dict[tuple[int, ...], _Accumulator] = {}
    used = 0
    read_total = 0.0
    for scan, durs in _distinct(scans, durations_s):
        if scan.n != n:
            raise InvalidParameterError(
                f"pruning result of query {scan.query_id!r} has {scan.n} partitions, "
                f"the snapshot has {n}; analyze the window against the same snapshot")
        if not scan.predicated_columns:
            continue
        used += len(durs)
        read_s = scan.scanned_bytes  # row groups' share under row-group pruning
        size_q = float(read_s.sum())
        t_read = sum(_t_read(d, size_q, scan.scanned_count, settings) for d in durs)
        read_total += t_read
        if scan.index.size == 0:
            continue
        keep = ~scan.covered & (scan.util < 1.0)  # boundary partitions that can gain
        if not keep.any() or size_q <= 0:
            continue
        idx = scan.index[keep]
        gain = 1.0 - scan.util[keep]
        waste = scan.waste[keep]
        seconds = waste * (t_read / size_q)
        key = tuple(cols.setdefault(c, len(cols)) for c in dict.fromkeys(scan.predicated_columns))
        if key not in acc:
            acc[key] = _Accumulator(n)
        acc[key].add(idx, seconds, waste, gain, len(durs))
    names = list(cols)
    per_column = np.zeros((n, len(names)), dtype=np.float64)
    saving, saved_bytes, prunable = np.zeros(n), np.zeros(n), np.zeros(n)
    hits = np.zeros(n, dtype=np.int64)
    for key, a in acc.items():
        a.flush()
        saving += a.seconds
        saved_bytes += a.waste
        prunable += a.gain
        hits += a.hits
        share = (a.seconds + beta * a.gain) / len(key)
        for j in key:
            per_column[:, j] += share
    return SavingsBreakdown(saving, beta * prunable, saved_bytes, prunable, hits,
                            per_column, names, used, read_total)


class _Accumulator:
    """Running per-partition sums for the queries of one predicated-column set.

    Index/value arrays are buffered and folded in with ``np.bincount`` every ~4M entries,
    so memory stays bounded however many (query, boundary partition) pairs the window has.
    A distinct outcome shared by ``count`` queries adds its bytes and gains ``count``
    times (its seconds already sum the queries' read times).
    """

    FLUSH_AT = 4_000_000

    def __init__(self, n: int) -> None:
        self.n = n
        self.seconds, self.waste, self.gain = np.zeros(n), np.zeros(n), np.zeros(n)
        self.hits = np.zeros(n, dtype=np.int64)
        self._buf: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]] = []
        self._pending = 0

    def add(self, idx: np.ndarray, seconds: np.ndarray, waste: np.ndarray, gain: np.ndarray,
            count: int = 1) -> None:
        self._buf.append((idx, seconds, waste, gain, count))
        self._pending += idx.size
        if self._pending >= self.FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if not self._buf:
            return
        idx = np.concatenate([b[0] for b in self._buf])
        n = self.n
        self.seconds += np.bincount(idx, weights=np.concatenate([b[1] for b in self._buf]), minlength=n)
        if all(b[4] == 1 for b in self._buf):
            waste = np.concatenate([b[2] for b in self._buf])
            gain = np.concatenate([b[3] for b in self._buf])
            self.hits += np.bincount(idx, minlength=n)
        else:
            counts = np.concatenate([np.full(b[0].size, b[4], dtype=np.int64) for b in self._buf])
            waste = np.concatenate([b[2] * b[4] for b in self._buf])
            gain = np.concatenate([b[3] * b[4] for b in self._buf])
            self.hits += np.bincount(idx, weights=counts, minlength=n).astype(np.int64)
        self.waste += np.bincount(idx, weights=waste, minlength=n)
        self.gain += np.bincount(idx, weights=gain, minlength=n)
        self._buf, self._pending = [], 0


def partition_savings(zonemaps: "ZoneMaps", window_scans: Sequence["FragmentScan"],
                      window: Sequence["ScanFragment"], settings: "Settings",
                      beta: float = 0.0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-partition estimated saving (CPU-s, eq. 3 + eq. 6 bonus) over the window, its
    per-column split ``[n, d]`` and the column names of that split.

    ``window`` and ``window_scans`` align; a fragment's ``duration_ms`` is used as t_read.
    """
    b = breakdown_for_window(zonemaps, window_scans, window, settings, beta)
    return b.total, b.per_column, b.columns


def breakdown_for_window(zonemaps: "ZoneMaps", window_scans: Sequence["FragmentScan"],
                         window: Sequence["ScanFragment"], settings: "Settings",
                         beta: float = 0.0) -> SavingsBreakdown:
    """:func:`savings_breakdown` with durations taken from the fragments, columns ordered
    as in the zonemaps."""
    if len(window) != len(window_scans):
        raise InvalidParameterError(
            f"window has {len(window)} fragments but {len(window_scans)} pruning results")
    durations = [None if f.duration_ms is None else float(f.duration_ms) / 1000.0
                 for f in window]
    used_cols: dict[str, None] = {}
    # a lazy window (WindowScans) names its fragments: read them, not the scans (which
    # would prune the whole window once more)
    for f in getattr(window_scans, "fragments", window_scans):
        for c in f.predicated_columns:
            used_cols.setdefault(c, None)
    ordered = [c for c in zonemaps.columns if c in used_cols]
    return savings_breakdown(len(zonemaps), window_scans, durations, settings, beta, ordered)
