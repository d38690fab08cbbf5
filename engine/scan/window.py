"""A window's pruning outcomes, computed lazily: :class:`WindowScans` and
:func:`analyze_workload`.

Identical fragments are pruned once (:func:`fragment_key`), batches of fragments go
through the batched evaluator (:mod:`engine.scan.batched`), outcomes are memoised up to a
bound, and with row groups (:mod:`engine.scan.rowgroups`) each outcome is refined to the
row groups a query meets.
"""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np

from engine.scan.batched import analyze_fragments
from engine.scan.endpoints import analyze_fragment
from engine.scan.fragment_scan import FragmentScan
from engine.scan.rowgroups import RowGroupMaps, refine

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


def fragment_key(fragment: "ScanFragment") -> tuple:
    """What makes two fragments' pruning identical: their boxes (column order kept: it
    fixes the float arithmetic) and the columns they read."""
    boxes = tuple(tuple(box.items()) for box in fragment.boxes)
    return boxes, tuple(dict.fromkeys([*fragment.columns, *fragment.predicated_columns]))


#: fragments a lazy window prunes together (a batch of ~1,000 scanned partitions each
#: holds ~17 MB of results before the memo)
BATCH_FRAGMENTS = 1024


class _Memo:
    """Pruning outcomes by :func:`fragment_key`, at most ``entries`` scanned partitions
    in all (the oldest outcome goes first)."""

    def __init__(self, entries: int) -> None:
        self.scans: dict[tuple, FragmentScan] = {}
        self.size, self.entries = 0, entries

    def put(self, key: tuple, scan: FragmentScan) -> None:
        self.scans[key] = scan
        self.size += scan.index.size
        while self.size > self.entries and len(self.scans) > 1:
            self.size -= self.scans.pop(next(iter(self.scans))).index.size


class WindowScans(SequenceABC):
    """The :class:`FragmentScan` of each fragment of a window, computed on access.

    Identical fragments (same boxes and projection, :func:`fragment_key`) are pruned
    once; up to ``memo_entries`` scanned partitions are kept in a memo (oldest dropped
    first), so a small window is analyzed once and a window of 100,000 queries over
    1,000,000 partitions streams in O(partitions + queries) memory. :meth:`distinct`
    yields each distinct outcome once with the positions of its fragments: what the
    streaming savings fold (``engine.policy.wair.savings``).
    """

    def __init__(self, zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                 memo_entries: int = 20_000_000, row_groups: "RowGroupMaps | None" = None) -> None:
        self.zonemaps = zonemaps
        self.row_groups = row_groups
        self.fragments = list(fragments)
        self._keys = [fragment_key(f) for f in self.fragments]
        self._memo = _Memo(memo_entries)
        self._bytes: dict[tuple, float] = {}  # bytes scanned per key: kept past the memo

    def __len__(self) -> int:
        return len(self.fragments)

    def _scan(self, i: int) -> FragmentScan:
        key = self._keys[i]
        scan = self._memo.scans.get(key)
        if scan is None:
            scan = self._refined(analyze_fragment(self.zonemaps, self.fragments[i]), i)
            self._memo.put(key, scan)
            self._bytes[key] = scan.bytes_scanned
        return scan

    def _scans(self, positions: Sequence[int]) -> list[FragmentScan]:
        """The outcomes at ``positions`` (first fragment's query id), the ones not in the
        memo pruned together by :func:`engine.scan.batched.analyze_fragments`."""
        todo: dict[tuple, int] = {}
        for i in positions:
            key = self._keys[i]
            if key not in self._memo.scans:
                todo.setdefault(key, i)
        fresh = dict(zip(todo, (self._refined(scan, i) for scan, i in zip(
            analyze_fragments(self.zonemaps, [self.fragments[i] for i in todo.values()]),
            todo.values()))))
        for key, scan in fresh.items():
            self._memo.put(key, scan)
            self._bytes[key] = scan.bytes_scanned
        return [fresh.get(self._keys[i]) or self._memo.scans.get(self._keys[i]) or self._scan(i)
                for i in positions]

    def _refined(self, scan: FragmentScan, i: int) -> FragmentScan:
        """The file-level outcome charged by row groups when the window has them."""
        if self.row_groups is None:
            return scan
        return refine(scan, self.row_groups, self.fragments[i], self.zonemaps.rows)

    def bytes_scanned(self) -> np.ndarray:
        """``[scan.bytes_scanned for scan in self]`` without pruning again what was pruned
        once: one float per distinct fragment is kept whatever the memo drops (a window of
        100,000 queries over 1,000,000 partitions holds ~85 M scanned entries, beyond the
        memo: iterating it a second time prunes it a second time)."""
        missing = [i for i, k in enumerate(self._keys) if k not in self._bytes]
        for start in range(0, len(missing), BATCH_FRAGMENTS):
            self._scans(missing[start:start + BATCH_FRAGMENTS])
        return np.array([self._bytes[k] for k in self._keys], dtype=np.float64)

    def _named(self, scan: FragmentScan, i: int) -> FragmentScan:
        qid = self.fragments[i].query_id
        return scan if scan.query_id == qid else scan.renamed(qid)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return WindowScans._view(self, range(len(self))[i])
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._named(self._scan(i), i)

    def __iter__(self) -> Iterator[FragmentScan]:
        """Every fragment's outcome in order, pruned :data:`BATCH_FRAGMENTS` at a time."""
        for start in range(0, len(self), BATCH_FRAGMENTS):
            positions = range(start, min(start + BATCH_FRAGMENTS, len(self)))
            for i, scan in zip(positions, self._scans(positions)):
                yield self._named(scan, i)

    @classmethod
    def _view(cls, parent: "WindowScans", positions: range) -> "WindowScans":
        view = object.__new__(cls)
        view.zonemaps = parent.zonemaps
        view.row_groups = parent.row_groups
        view.fragments = [parent.fragments[p] for p in positions]
        view._keys = [parent._keys[p] for p in positions]
        view._memo = parent._memo  # shared: a slice reuses what the whole has analyzed
        view._bytes = parent._bytes
        return view

    def distinct(self) -> Iterator[tuple[FragmentScan, list[int]]]:
        """Each distinct outcome once, in first-seen order, with the positions of the
        fragments that share it (the scan carries the first one's query id); pruned
        :data:`BATCH_FRAGMENTS` distinct fragments at a time."""
        members: dict[tuple, list[int]] = {}
        for i, key in enumerate(self._keys):
            members.setdefault(key, []).append(i)
        groups = list(members.values())
        for start in range(0, len(groups), BATCH_FRAGMENTS):
            block = groups[start:start + BATCH_FRAGMENTS]
            for positions, scan in zip(block, self._scans([p[0] for p in block])):
                yield self._named(scan, positions[0]), positions


def analyze_workload(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"],
                     row_groups: "RowGroupMaps | None" = None) -> WindowScans:
    """:func:`engine.scan.endpoints.analyze_fragment` for every fragment, in order,
    computed lazily (a :class:`WindowScans`: iterate it, index it, or fold its
    :meth:`~WindowScans.distinct` outcomes). With ``row_groups``
    (:mod:`engine.scan.rowgroups`) files of several row groups are charged only the row
    groups a query meets; None keeps the file level."""
    return WindowScans(zonemaps, fragments, row_groups=row_groups)
