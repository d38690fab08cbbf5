"""Which of a rewritten group's partitions feed each new file, without a files x partitions
matrix.

A group cut along its key columns (:mod:`engine.policy.impact`) writes file ``j`` from the
slice ``s_i(j) = (j // slices ** i) % slices`` of each cut key ``i``: the partitions whose
key range overlaps every such slice can contribute rows to it (when none does, every
partition may). A non-key column's range in the file is the union of these partitions'
ranges. Held as one boolean mask per file that is ``files x partitions`` bytes (10 GB for
a group of 100,000 partitions written as 100,000 files); here:

* :class:`SourceMasks` gives file ``j``'s mask on demand (O(partitions) memory);
* :func:`source_bounds` gives every file's union of a column at once: each partition
  overlaps a contiguous run of slices per key, so the union is a range-minimum (and
  -maximum) update over the slice grid, answered with a sparse table, O(n log n) per
  key column for one key and O(n x slices) at worst for several.

Example (three partitions on key [0, 4], [4, 8], [8, 10]; two files cut at 5):
>>> import numpy as np
>>> lo, hi = np.array([0., 4., 8.]), np.array([4., 8., 10.])
>>> masks = SourceMasks([(lo, hi, np.array([0., 5., 10.]), 0)], slices=2, files=2)
>>> masks[0].tolist(), masks[1].tolist()
([True, True, False], [False, True, True])
>>> b = source_bounds([(lo, hi, np.array([0., 5., 10.]), 0)], 2, 2, np.array([1., 2., 3.]),
...                   np.array([1., 5., 9.]), np.array([True, True, True]))
>>> b.lo.tolist(), b.hi.tolist(), b.has.tolist()
([1.0, 2.0], [5.0, 9.0], [True, True])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: one cut key column: its partitions' lo and hi (float64), its ``slices + 1`` cut points,
#: and its place ``i`` among the group's keys (file ``j`` is in slice
#: ``(j // slices ** i) % slices`` of it; with a ``radix``, :func:`file_slice`)
KeyCut = tuple[np.ndarray, np.ndarray, np.ndarray, int]


def file_slice(j: np.ndarray | int, place: int, slices: int, radix: Sequence[int] | None = None):
    """File ``j``'s slice of the key at ``place``: ``(j // slices ** place) % slices``, or
    with ``radix`` (the slices of each key place, :func:`engine.policy.impact.key_grid`)
    the mixed-radix digit ``(j // prod(radix[:place])) % radix[place]``."""
    if radix is None:
        return (j // slices ** place) % slices
    return (j // int(np.prod(radix[:place], dtype=np.int64))) % int(radix[place])


class SourceMasks(Sequence[np.ndarray]):
    """Per new file, the boolean mask of the group's partitions that can contribute rows to
    it (every partition when none overlaps its slices), computed when asked for: memory is
    one mask, not one per file. ``keys``: the cut key columns (:data:`KeyCut`)."""

    def __init__(self, keys: Sequence[KeyCut], slices: int, files: int,
                 radix: Sequence[int] | None = None) -> None:
        self._keys = [(np.asarray(lo, np.float64), np.asarray(hi, np.float64), np.asarray(c, np.float64),
                       int(place)) for lo, hi, c, place in keys]
        self._slices = int(slices)
        self._radix = None if radix is None else [int(r) for r in radix]
        self._n = len(self._keys[0][0]) if self._keys else 0
        self._files = int(files)

    def __len__(self) -> int:
        return self._files

    def __getitem__(self, j: int) -> np.ndarray:  # type: ignore[override]
        if not 0 <= j < self._files:
            raise IndexError(j)
        mask = np.ones(self._n, dtype=bool)
        for lo, hi, cuts, place in self._keys:
            s = file_slice(j, place, self._slices, self._radix)
            mask &= (lo <= cuts[s + 1]) & (hi >= cuts[s])
        return mask if mask.any() else np.ones(self._n, dtype=bool)


@dataclass(frozen=True, slots=True)
class SourceBounds:
    """Per new file: the union ``[lo, hi]`` of a column over its source partitions whose
    bound is known, and whether any is (``has``; where False, lo and hi are undefined)."""

    lo: np.ndarray
    hi: np.ndarray
    has: np.ndarray


def slice_runs(lo: np.ndarray, hi: np.ndarray, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per partition, the first and last slice ``s`` whose ``[cuts[s], cuts[s + 1]]`` its
    ``[lo, hi]`` overlaps (closed; ``first > last`` when none). The cuts ascend, so the
    slices a range overlaps are contiguous."""
    first = np.searchsorted(cuts[1:], lo, side="left")
    last = np.searchsorted(cuts[:-1], hi, side="right") - 1
    return first, last


def range_reduce(first: np.ndarray, last: np.ndarray, values: np.ndarray, size: int,
                 op: np.ufunc, empty: float) -> np.ndarray:
    """``out[s] = op.reduce(values[p] for p with first[p] <= s <= last[p])``, ``empty``
    where none: each run written into the two power-of-two blocks that cover it (a sparse
    table in reverse), then pushed down level by level. O(n + size log size) time,
    O(size log size) memory. ``op`` is ``np.minimum`` or ``np.maximum``."""
    out = np.full(size, empty, dtype=np.float64)
    ok = first <= last
    first, last, values = first[ok], last[ok], values[ok]
    if size == 0 or first.size == 0:
        return out
    length = last - first + 1
    level = np.floor(np.log2(length)).astype(np.int64)
    level[(1 << (level + 1)) <= length] += 1  # floating log2 at exact powers of two
    level[(1 << level) > length] -= 1
    top = int(level.max())
    table = np.full((top + 1, size), empty, dtype=np.float64)
    op.at(table, (level, first), values)
    op.at(table, (level, last - (1 << level) + 1), values)
    for k in range(top, 0, -1):
        half = 1 << (k - 1)
        op(table[k - 1], table[k], out=table[k - 1])
        op(table[k - 1][half:], table[k][:size - half], out=table[k - 1][half:])
    return table[0]


def source_bounds(keys: Sequence[KeyCut], slices: int, files: int, lo: np.ndarray, hi: np.ndarray,
                  valid: np.ndarray, radix: Sequence[int] | None = None) -> SourceBounds:
    """The union of a column (``lo``, ``hi``, ``valid`` per partition of the group; numbers
    or strings) over each new file's sources (:class:`SourceMasks`, the same partitions),
    for all files at once: identical to ``min(lo[mask & valid])`` and
    ``max(hi[mask & valid])`` per file. Bounds are reduced as ranks among the column's
    distinct values, so strings go through the same float64 sparse table. ``radix``: the
    slices of each key place (None: ``slices`` for every key)."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    valid = np.asarray(valid, dtype=bool)
    n = len(lo)
    runs = [slice_runs(k_lo, k_hi, cuts) for k_lo, k_hi, cuts, _ in keys]
    sizes = [slices if radix is None else int(radix[place]) for _, _, _, place in keys]
    every = np.arange(n)
    sourced = _cell_reduce(runs, every, sizes, np.ones(n), np.maximum, 0.0) > 0
    v = every[valid]
    lo_values, lo_rank = np.unique(lo[v], return_inverse=True)
    hi_values, hi_rank = np.unique(hi[v], return_inverse=True)
    c_lo = _cell_reduce(runs, v, sizes, np.asarray(lo_rank, np.float64).ravel(), np.minimum, np.inf)
    c_hi = _cell_reduce(runs, v, sizes, np.asarray(hi_rank, np.float64).ravel(), np.maximum, -np.inf)
    has_cell = np.isfinite(c_lo)
    j = np.arange(files)
    cell = np.zeros(files, dtype=np.int64)  # the file's slice of each cut key, as one index
    for i, (_, _, _, place) in enumerate(keys):
        cell += file_slice(j, place, slices, radix) * int(np.prod(sizes[:i], dtype=np.int64))
    own = sourced[cell]  # a cell no partition overlaps takes every partition
    has = np.where(own, has_cell[cell], v.size > 0)
    at_lo = np.where(own & has, c_lo[cell], 0.0)
    at_hi = np.where(own & has, c_hi[cell], len(hi_values) - 1)
    if v.size == 0:  # no known bound anywhere: has is all False, the bounds undefined
        return SourceBounds(np.resize(lo, files), np.resize(hi, files), has)
    return SourceBounds(lo_values[at_lo.astype(np.int64)], hi_values[at_hi.astype(np.int64)], has)


def _cell_reduce(runs: list[tuple[np.ndarray, np.ndarray]], members: np.ndarray, sizes: Sequence[int],
                 values: np.ndarray, op: np.ufunc, empty: float) -> np.ndarray:
    """``op`` of ``values`` (one per partition in ``members``) over every cell of the
    grid of ``sizes[i]`` slices per run (cell index ``sum(s_i * prod(sizes[:i]))``) the
    partition's runs cover. The last key is a :func:`range_reduce`; earlier keys are
    walked slice by slice over the partitions whose run covers it."""
    if not runs:
        return np.array([op.reduce(values) if values.size else empty])
    first, last = runs[-1]
    if len(runs) == 1:
        return range_reduce(first[members], last[members], values, int(sizes[-1]), op, empty)
    inner = int(np.prod(sizes[:-1], dtype=np.int64))
    out = np.full(inner * int(sizes[-1]), empty, dtype=np.float64)
    for s in range(int(sizes[-1])):
        here = (first[members] <= s) & (last[members] >= s)
        if here.any():
            out[s * inner:(s + 1) * inner] = _cell_reduce(runs[:-1], members[here], sizes[:-1], values[here],
                                                          op, empty)
    return out
