"""What one scan fragment does to one snapshot: :class:`FragmentScan` (the partitions it
scans, fully covers and how much of each it uses) and :func:`fragment_summary`, its
per-query counts for reports.

Every pruning evaluator (:mod:`engine.scan.estimate`, :mod:`engine.scan.endpoints`,
:mod:`engine.scan.batched`, row-group refinement in :mod:`engine.scan.rowgroups`)
returns this one type, so policies, views and the simulator read them alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class FragmentScan:
    """Outcome of one fragment over one snapshot, held sparsely.

    Only the partitions the fragment scans are stored: ``index`` (sorted partition
    positions in ZoneMaps order), and aligned with it ``covered`` (fully covered) and
    ``util`` (utilization in [0, 1]). Everything else is pruned: utilization 0. Memory is
    O(scanned partitions), not O(partitions), so a window of 100,000 queries over
    1,000,000 partitions fits. ``read_bytes`` is the dense, shared, read-only
    projection-aware bytes per partition (one array per distinct projection).

    The constructor takes dense per-partition arrays (for callers that build a scan
    themselves); :meth:`sparse` builds one from the index. The
    properties ``scanned``, ``fully_covered`` and ``utilization`` are dense *views* built
    on each access (O(partitions) each): for callers that need them, not for loops over
    a large window.

    >>> s = FragmentScan("q", np.array([True, False, True]), np.array([True, False, False]),
    ...                  np.array([1.0, 0.0, 0.25]), np.array([5.0, 6.0, 7.0]), ("a",))
    >>> s.index.tolist(), s.boundary_index.tolist(), s.utilization.tolist()
    ([0, 2], [2], [1.0, 0.0, 0.25])
    """

    __slots__ = ("query_id", "n", "index", "covered", "util", "read_bytes", "predicated_columns",
                 "charged", "row_groups")

    def __init__(self, query_id: str, scanned: np.ndarray, fully_covered: np.ndarray,
                 utilization: np.ndarray, read_bytes: np.ndarray,
                 predicated_columns: tuple[str, ...]) -> None:
        scanned = np.asarray(scanned, dtype=bool)
        idx = np.flatnonzero(scanned)
        self._set(query_id, len(scanned), idx, np.asarray(fully_covered, dtype=bool)[idx],
                  np.asarray(utilization, dtype=np.float64)[idx], read_bytes, predicated_columns)

    def _set(self, query_id: str, n: int, index: np.ndarray, covered: np.ndarray,
             util: np.ndarray, read_bytes: np.ndarray, predicated: tuple[str, ...],
             charged: np.ndarray | None = None, row_groups: tuple[int, int] | None = None) -> None:
        for name, value in (("query_id", query_id), ("n", int(n)), ("index", index),
                            ("covered", covered), ("util", util), ("read_bytes", read_bytes),
                            ("predicated_columns", tuple(predicated)), ("charged", charged),
                            ("row_groups", row_groups)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FragmentScan is immutable")

    @classmethod
    def sparse(cls, query_id: str, n: int, index: np.ndarray, covered: np.ndarray,
               util: np.ndarray, read_bytes: np.ndarray,
               predicated_columns: tuple[str, ...], charged: np.ndarray | None = None,
               row_groups: tuple[int, int] | None = None) -> "FragmentScan":
        """A scan from its scanned partitions (``index`` sorted, unique, within ``n``).

        ``charged`` (aligned with ``index``) is what each scanned partition costs when
        less than its whole ``read_bytes`` is read (row-group pruning,
        :mod:`engine.scan.rowgroups`); ``row_groups`` is then (row groups read, row groups
        of the table)."""
        scan = object.__new__(cls)
        scan._set(query_id, n, np.asarray(index, dtype=np.int64), np.asarray(covered, dtype=bool),
                  np.asarray(util, dtype=np.float64), read_bytes, predicated_columns,
                  None if charged is None else np.asarray(charged, dtype=np.float64), row_groups)
        return scan

    def renamed(self, query_id: str) -> "FragmentScan":
        """The same outcome for another (identical) query: arrays shared, not copied."""
        return FragmentScan.sparse(query_id, self.n, self.index, self.covered, self.util,
                                   self.read_bytes, self.predicated_columns, self.charged,
                                   self.row_groups)

    def __repr__(self) -> str:
        return (f"FragmentScan({self.query_id!r}, n={self.n}, scanned={self.index.size}, "
                f"covered={int(self.covered.sum())})")

    # dense views (O(partitions) per access)
    @property
    def scanned(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.index] = True
        return out

    @property
    def fully_covered(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.index[self.covered]] = True
        return out

    @property
    def utilization(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float64)
        out[self.index] = self.util
        return out

    @property
    def boundary(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.boundary_index] = True
        return out

    @property
    def pruned(self) -> np.ndarray:
        return ~self.scanned

    # sparse accessors (O(scanned))
    @property
    def boundary_index(self) -> np.ndarray:
        """Scanned partitions that are not fully covered (WAIR's boundary partitions)."""
        return self.index[~self.covered]

    @property
    def scanned_count(self) -> int:
        return int(self.index.size)

    @property
    def scanned_bytes(self) -> np.ndarray:
        """Bytes each scanned partition costs (aligned with ``index``): its whole
        ``read_bytes``, or only its row groups' share under row-group pruning."""
        return self.read_bytes[self.index] if self.charged is None else self.charged

    @property
    def waste(self) -> np.ndarray:
        """Bytes each scanned partition reads that the query does not need (aligned with
        ``index``): ``(1 - u) * read_bytes``, or under row-group pruning what is charged
        beyond the matching share ``u * read_bytes`` (``util`` stays the share of the
        whole partition's rows)."""
        read = self.read_bytes[self.index]
        if self.charged is None:
            return (1.0 - self.util) * read
        return np.maximum(self.charged - self.util * read, 0.0)

    @property
    def bytes_scanned(self) -> float:
        return float(self.scanned_bytes.sum())

    @property
    def pruning_rate(self) -> float:
        return float((self.n - self.index.size) / self.n) if self.n else 0.0


def fragment_summary(scan: FragmentScan) -> dict[str, Any]:
    """Per-query counts for reports: partitions scanned, pruned, fully covered, boundary,
    the pruning rate, projection-aware bytes scanned, and the bytes a perfect layout
    would not have read (``wasted_bytes = sum((1 - u) * read_bytes)`` over scanned ones).
    O(scanned partitions): works on the sparse scan."""
    used = scan.util
    covered = int(scan.covered.sum())
    out = {
        "query_id": scan.query_id,
        "partitions": scan.n,
        "scanned": scan.scanned_count,
        "pruned": scan.n - scan.scanned_count,
        "fully_covered": covered,
        "boundary": scan.scanned_count - covered,
        "pruning_rate": round(scan.pruning_rate, 6),
        "bytes_scanned": scan.bytes_scanned,
        "wasted_bytes": float(scan.waste.sum()),
        "average_utilization": round(float(used.mean()), 6) if len(used) else 0.0,
        "predicated_columns": list(scan.predicated_columns),
    }
    if scan.row_groups is not None:  # row-group pruning (engine.scan.rowgroups)
        out["row_groups_read"], out["row_groups"] = scan.row_groups
    return out
