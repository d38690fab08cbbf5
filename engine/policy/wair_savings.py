"""WAIR's per-partition saving estimate: equation 3, the beta bonus (equation 6) and the
per-column split behind savings signatures (section 4.4).

For a query Q of the sliding window and a partition P that Q scans, reclustering P would
save (equation 3)::

    dt(P | Q) = (1 - u) * size_read(P) / size_read(Q) * t_read(Q)

``u`` is P's utilization for Q (from the pruning analysis; only boundary partitions have
u < 1, so only they can save anything), ``size_read`` is projection-aware
(``FragmentScan.read_bytes``: the compressed bytes of the columns Q reads, summed over what
Q scans), and ``t_read(Q)`` is Q's measured duration when the log has it, else
``scan_seconds(size_read(Q))`` (then the formula reduces to the saved bytes at scan rate).

Equation 6 adds ``beta * |d pruned(P | Q)|``: the price a user pays per extra pruned
partition. We estimate that reclustering a boundary partition of utilization u turns
``(1 - u)`` of a partition's worth of rows into prunable rows (its u matching share ends up
packed into u of a partition after the sort), so ``|d pruned(P | Q)| ~ 1 - u``. beta is in
CPU-seconds per pruned partition, so the bonus adds to the saving in the same unit.

Section 4.4 splits each query's saving equally over the columns in its predicate; summed
over the window this gives, per partition, the vector s_P whose unit-normalized form is the
savings signature.

Everything is vectorized: per query we take the index array of its boundary partitions
(most partitions are pruned by most queries) and accumulate with ``np.bincount``.

Example (two partitions, one query reading 100 bytes in 1 s; P0 is a boundary partition
with u = 0.25 and 40 bytes read, P1 is fully covered):
>>> import numpy as np
>>> from engine.config import Settings
>>> from engine.pruning import FragmentScan
>>> scan = FragmentScan("q1", np.array([True, True]), np.array([False, True]),
...                     np.array([0.25, 1.0]), np.array([40.0, 60.0]), ("a",))
>>> b = savings_breakdown(2, [scan], [1.0], Settings())
>>> b.saving_cpu.tolist()  # (1 - 0.25) * 40 / 100 * 1 s
[0.3, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from engine.errors import InvalidParameterError
from engine.policy.costmodel import scan_seconds

if TYPE_CHECKING:
    from engine.config import Settings
    from engine.pruning import FragmentScan
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

    @property
    def total(self) -> np.ndarray:
        """What Algorithm 2 ranks by: saving plus performance bonus."""
        return self.saving_cpu + self.bonus


def _t_read(duration_s: float | None, size_q: float, settings: "Settings") -> float:
    """Measured read time of a query if known, else its bytes at scan rate."""
    if duration_s is not None and duration_s > 0:
        return float(duration_s)
    return scan_seconds(size_q, settings)


def savings_breakdown(n: int, scans: Sequence["FragmentScan"],
                      durations_s: Sequence[float | None], settings: "Settings",
                      beta: float = 0.0, columns: Sequence[str] | None = None) -> SavingsBreakdown:
    """Equation 3 (+ beta) for ``n`` partitions and the window's scans.

    ``durations_s[i]`` is the measured read time of scan i in seconds (None: estimate).
    ``columns`` fixes the column order of ``per_column`` (others are appended in first-seen
    order); queries without a predicated column cannot be helped by any clustering key
    and are skipped.
    """
    if len(scans) != len(durations_s):
        raise InvalidParameterError(
            f"window has {len(durations_s)} fragments but {len(scans)} pruning results")
    if beta < 0:
        raise InvalidParameterError(f"beta must be >= 0, got {beta}")
    cols: dict[str, int] = {c: i for i, c in enumerate(columns or ())}
    groups: dict[tuple[int, ...], tuple[list[np.ndarray], list[np.ndarray]]] = {}
    idx_all: list[np.ndarray] = []
    save_all: list[np.ndarray] = []
    bytes_all: list[np.ndarray] = []
    gain_all: list[np.ndarray] = []
    used = 0
    for scan, dur in zip(scans, durations_s):
        if len(scan.scanned) != n:
            raise InvalidParameterError(
                f"pruning result of query {scan.query_id!r} has {len(scan.scanned)} partitions, "
                f"the snapshot has {n}; analyze the window against the same snapshot")
        if not scan.predicated_columns:
            continue
        idx = np.flatnonzero(scan.boundary)
        used += 1
        if idx.size == 0:
            continue
        u = scan.utilization[idx]
        keep = u < 1.0
        if not keep.all():
            idx, u = idx[keep], u[keep]
            if idx.size == 0:
                continue
        read_p = np.asarray(scan.read_bytes[idx], dtype=np.float64)
        size_q = float(scan.read_bytes[scan.scanned].sum())
        if size_q <= 0:
            continue
        waste = (1.0 - u) * read_p
        seconds = (_t_read(dur, size_q, settings) / size_q) * waste
        gain = 1.0 - u
        value = seconds + beta * gain
        key = tuple(cols.setdefault(c, len(cols)) for c in dict.fromkeys(scan.predicated_columns))
        g = groups.setdefault(key, ([], []))
        g[0].append(idx)
        g[1].append(value)
        idx_all.append(idx)
        save_all.append(seconds)
        bytes_all.append(waste)
        gain_all.append(gain)
    names = list(cols)
    per_column = np.zeros((n, len(names)), dtype=np.float64)
    if not idx_all:
        z = np.zeros(n, dtype=np.float64)
        return SavingsBreakdown(z, z.copy(), z.copy(), z.copy(), np.zeros(n, dtype=np.int64),
                                per_column, names, used)
    idx_cat = np.concatenate(idx_all)
    saving = np.bincount(idx_cat, weights=np.concatenate(save_all), minlength=n)
    saved_bytes = np.bincount(idx_cat, weights=np.concatenate(bytes_all), minlength=n)
    prunable = np.bincount(idx_cat, weights=np.concatenate(gain_all), minlength=n)
    hits = np.bincount(idx_cat, minlength=n).astype(np.int64)
    for key, (idxs, vals) in groups.items():
        share = np.bincount(np.concatenate(idxs), weights=np.concatenate(vals), minlength=n)
        share /= len(key)
        for j in key:
            per_column[:, j] += share
    return SavingsBreakdown(saving, beta * prunable, saved_bytes, prunable, hits,
                            per_column, names, used)


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
    for s in window_scans:
        for c in s.predicated_columns:
            used_cols.setdefault(c, None)
    ordered = [c for c in zonemaps.columns if c in used_cols]
    return savings_breakdown(len(zonemaps), window_scans, durations, settings, beta, ordered)
