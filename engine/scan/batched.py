"""Batched pruning: the fragments of a whole window at once.

Per query, the per-fragment path (:mod:`engine.scan.endpoints`) pays some fifty numpy
calls on arrays of ~k elements: at 100,000 queries that Python overhead, not the
arithmetic, is the cost. The batched path
takes every fragment whose boxes each constrain a column of the zonemaps; a fragment of
several boxes (an OR, an IN list) is split into one-box parts that are batched with the
rest (others, with no box or an unconstrained one, go through the per-fragment path):

1. each range's prepared bounds (one Python call per range: value encoding);
2. per column, the two binary searches of every range on it at once
   (``np.searchsorted`` with arrays of bounds); per box the column with the fewest
   candidates drives, as there;
3. fragments grouped by (driving column, box columns in order); per group, chunks of
   fragments whose candidate windows are laid end to end: the driving column's arrays
   read from its sorted copy (contiguous), the other columns gathered by position, the
   bounds repeated per element; :func:`~engine.scan.estimate.column_match` and
   :func:`~engine.scan.estimate.column_fraction` then run once per column over the
   chunk with the same element-wise arithmetic as the per-fragment path, so the bits
   agree (property-tested);
4. the scanned elements sorted by (fragment, partition) and cut into one sparse
   :class:`FragmentScan` per fragment;
5. a several-box fragment's parts merged per partition (:func:`_merge_boxes`): scanned
   by some box, covered by some box, utilization accumulated box by box in the
   fragment's order with :func:`~engine.scan.estimate.evaluate_boxes`'s
   ``min(util + box_util, 1)``. A box that does not scan a partition adds exactly 0.0
   there, so skipping it keeps the bits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from engine.scan.endpoints import analyze_fragment, column_index, sorted_column
from engine.scan.estimate import (
    EMPTY_BOX,
    box_bounds,
    cached_read_bytes,
    column_fraction,
    column_match,
    prepared_column,
)
from engine.scan.fragment_scan import FragmentScan

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


#: candidate elements evaluated together: ~30 temporaries of this length must stay in
#: the CPU caches (larger batches spill to memory and lose the gain over the
#: per-fragment path; bench/planning/README.md)
BATCH_ELEMENTS = 65_536

def _boxes(zonemaps: "ZoneMaps", fragment: "ScanFragment"
           ) -> list[tuple[int, tuple[str, ...], list[tuple | None]]] | None:
    """(box number, columns, bounds) of every box of ``fragment`` that can match (boxes
    with an empty range dropped: they add nothing), or None for the per-fragment path (no
    box, or a box that restricts nothing: every partition is a candidate)."""
    if not fragment.boxes:
        return None
    out = []
    for k, box in enumerate(fragment.boxes):
        parsed = box_bounds(zonemaps, box) if box else None
        if parsed is None:
            return None
        if parsed is not EMPTY_BOX:
            out.append((k, *parsed))
    return out


def _windows(zonemaps: "ZoneMaps", column: str, fa: np.ndarray, fb: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Candidate windows ``order[j:q]`` of many ranges on one column (``q >= j``)."""
    ix = column_index(zonemaps, column)
    q = np.searchsorted(ix.lo_sorted, fb, side="right")
    j = np.searchsorted(ix.pmax, fa, side="left")
    return j, np.maximum(q, j)


def ragged_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` in numpy."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


#: one group's bounds per box column: (fa, a_inc, fb, b_inc) arrays over its fragments,
#: None for a column outside the zonemaps
_Bounds = list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None]


def _eval_chunk(zonemaps: "ZoneMaps", columns: tuple[str, ...], drive: int, bounds: _Bounds,
                j: np.ndarray, q: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scanned (fragment, position, covered, utilization) of a chunk of one-box fragments
    sharing ``columns`` and the driving column ``columns[drive]``, grouped by fragment
    (positions in window order); ``bounds`` are the chunk's bounds, ``j``/``q`` its
    candidate windows.

    Two passes: which candidates might match and which are covered (every element), then
    the matching fraction only for the scanned, not covered ones (a range much wider
    than its partitions covers most of what it scans, whose utilization is 1 whatever
    the fraction): the same arithmetic per element as :func:`evaluate_boxes`, on fewer."""
    m = len(j)
    ix = column_index(zonemaps, columns[drive])
    lengths = q - j
    win = ragged_ranges(j, lengths)
    frag = np.repeat(np.arange(m), lengths)
    pos = ix.order[win]
    if ix.always.size:  # unknown bounds: candidates of every range
        frag = np.concatenate([frag, np.repeat(np.arange(m), ix.always.size)])
        pos = np.concatenate([pos, np.tile(ix.always, m)])
    srcs = [None if bounds[c] is None else _Source(zonemaps, column, pos, win if c == drive else None)
            for c, column in enumerate(columns)]
    per_el = [None if b is None else _per_element(b, lengths, ix.always.size) for b in bounds]
    b_might = np.ones(pos.size, bool)
    b_cov = b_might.copy()
    for c, src in enumerate(srcs):
        if src is None:  # outside the zonemaps: might match, never covers
            b_cov[:] = False
            continue
        fa, a_inc, fb, b_inc = per_el[c]
        might, cov = column_match(src.prep.kind, src.lo, src.hi, src.read("no_nulls"),
                                  src.valid(), src.unknown_might(), fa, a_inc, fb, b_inc)
        b_might &= might
        b_cov &= cov
    covered = b_cov & b_might
    util = covered.astype(np.float64)
    part = np.flatnonzero(b_might & ~covered)
    b_frac = None
    for c, src in enumerate(srcs):
        if src is None:
            frac = np.ones(part.size)
        else:
            fa, _, fb, _ = per_el[c]
            frac = column_fraction(src.prep.kind, src.prep.finite, src.lo[part], src.hi[part],
                                   src.read("inv_width", part), src.read("frac_floor", part),
                                   src.read("nonnull_share", part), _at(fa, part), _at(fb, part))
        b_frac = frac if b_frac is None else b_frac * frac
    util[part] = b_frac
    keep = np.flatnonzero(b_might)
    if ix.always.size:  # two runs sorted by fragment: a stable sort merges them
        keep = keep[np.argsort(frag[keep], kind="stable")]
    return frag[keep], pos[keep], covered[keep], util[keep]


def _at(value: Any, el: np.ndarray) -> Any:
    """A per-element bound at the elements ``el`` (a scalar bound as it is)."""
    return value[el] if isinstance(value, np.ndarray) else value


class _Source:
    """Where a chunk's elements read one column's prepared arrays: the driving column's
    window elements from its sorted copy (contiguous), every other element by position.
    ``lo`` and ``hi`` are read for every element; the rest on demand, for all or some."""

    def __init__(self, zonemaps: "ZoneMaps", column: str, pos: np.ndarray,
                 win: np.ndarray | None) -> None:
        self.prep = prepared_column(zonemaps, column)
        self.srt = None if win is None else sorted_column(zonemaps, column)
        self.pos, self.win = pos, win
        self.lo, self.hi = self.read("lo"), self.read("hi")

    def read(self, name: str, el: np.ndarray | None = None) -> np.ndarray | None:
        """The prepared array ``name`` at every element, or at the elements ``el``."""
        dense = getattr(self.prep, name)
        if dense is None:
            return None
        if self.win is None:
            return dense[self.pos] if el is None else dense[self.pos[el]]
        srt, w = getattr(self.srt, name), self.win.size
        if el is None:
            head = srt[self.win]
            return np.concatenate([head, dense[self.pos[w:]]]) if self.pos.size > w else head
        out = np.empty(el.size, dtype=dense.dtype)
        inside = el < w
        out[inside] = srt[self.win[el[inside]]]
        out[~inside] = dense[self.pos[el[~inside]]]
        return out

    def valid(self) -> np.ndarray | None:
        """Known bounds (None: all known); the window's partitions all have them."""
        if self.prep.valid is None:
            return None
        if self.win is None:
            return self.prep.valid[self.pos]
        rest = self.pos[self.win.size:]
        return None if not rest.size else np.concatenate([np.ones(self.win.size, bool),
                                                          self.prep.valid[rest]])

    def unknown_might(self) -> np.ndarray | None:
        """Unknown bounds that might match, where :meth:`valid` is given."""
        if self.valid() is None or self.prep.unknown_might is None:
            return None
        if self.win is None:
            return self.prep.unknown_might[self.pos]
        return np.concatenate([np.zeros(self.win.size, bool),
                               self.prep.unknown_might[self.pos[self.win.size:]]])


def _per_element(bounds: tuple[np.ndarray, ...], lengths: np.ndarray, always: int
                 ) -> tuple[Any, ...]:
    """A chunk's (fa, a_inc, fb, b_inc) repeated over its elements (window elements
    fragment by fragment, then ``always`` elements per fragment); an inclusive flag the
    whole chunk shares stays one bool (a plain comparison instead of a select)."""
    out: list[Any] = []
    for k, arr in enumerate(bounds):
        if k in (1, 3) and (arr.all() or not arr.any()):
            out.append(bool(arr[0]) if arr.size else True)
            continue
        el = np.repeat(arr, lengths)
        out.append(np.concatenate([el, np.repeat(arr, always)]) if always else el)
    return tuple(out)


def analyze_fragments(zonemaps: "ZoneMaps", fragments: Sequence["ScanFragment"]
                      ) -> list[FragmentScan]:
    """:func:`analyze_fragment` of every fragment, batched over the fragments (see the
    module notes): the same results, bit for bit, in far fewer numpy calls. What a
    caller pruning many queries against one snapshot should use (``WindowScans`` does).
    """
    out: list[FragmentScan | None] = [None] * len(fragments)
    groups: dict[tuple[str, ...], list[tuple[_Target, list]]] = {}
    pending: dict[int, list[_Part]] = {}  # several-box fragments: their boxes' parts
    for i, frag in enumerate(fragments):
        boxes = _boxes(zonemaps, frag)
        if boxes is None:
            out[i] = analyze_fragment(zonemaps, frag)
        elif not boxes:  # every box holds an empty range
            out[i] = _scan_of(zonemaps, frag, np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0))
        else:
            several = len(boxes) > 1
            if several:
                pending[i] = []
            for k, columns, bounds in boxes:
                groups.setdefault(columns, []).append(((i, k if several else None), bounds))
    for columns, members in groups.items():
        bounds = _group_bounds(members, len(columns))
        for drive, j, q, chosen in _drive(zonemaps, columns, bounds):
            sub = [None if b is None else tuple(a[chosen] for a in b) for b in bounds]
            _eval_group(zonemaps, columns, drive, [members[k][0] for k in chosen], sub, j, q,
                        fragments, out, pending)
    for i, parts in pending.items():
        out[i] = _scan_of(zonemaps, fragments[i], *_merge_boxes(parts))
    return out  # type: ignore[return-value]  # every slot is filled above


#: who a batched one-box evaluation is for: (fragment position, box number), the box
#: number None when the fragment has one box (its scan is final)
_Target = tuple[int, "int | None"]
#: one box's scanned partitions: (box number, positions, covered, utilization)
_Part = tuple[int, np.ndarray, np.ndarray, np.ndarray]


def _merge_boxes(parts: list[_Part]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, covered, utilization) of a several-box fragment from its boxes' scanned
    partitions, exactly as :func:`evaluate_boxes` folds boxes: scanned by any, covered by any
    (then utilization 1), else ``util = min(util + box_util, 1.0)`` in box order. Boxes
    that do not scan a partition are skipped there: adding their 0.0 changes no bit (the
    running utilization is in [0, 1])."""
    box = np.concatenate([np.full(p[1].size, p[0], dtype=np.int64) for p in parts])
    pos = np.concatenate([p[1] for p in parts])
    cov = np.concatenate([p[2] for p in parts])
    util = np.concatenate([p[3] for p in parts])
    o = np.lexsort((box, pos))  # by partition, then box order
    pos, cov, util = pos[o], cov[o], util[o]
    first = np.ones(pos.size, dtype=bool)
    first[1:] = pos[1:] != pos[:-1]
    starts = np.flatnonzero(first)
    index = pos[starts]
    if index.size == pos.size:  # no partition scanned by two boxes: nothing to fold
        return index, cov, util
    covered = np.logical_or.reduceat(cov, starts)
    acc = util[starts].copy()
    group = np.cumsum(first) - 1
    rank = np.arange(pos.size) - starts[group]
    for r in range(1, int(rank.max()) + 1):  # the r-th box scanning each partition
        el = np.flatnonzero(rank == r)
        acc[group[el]] = np.minimum(acc[group[el]] + util[el], 1.0)
    acc[covered] = 1.0
    return index, covered, acc


def _group_bounds(members: list[tuple[_Target, list]], width: int) -> _Bounds:
    """Per box column, the prepared bounds of every member as arrays."""
    out: _Bounds = []
    for c in range(width):
        if members[0][1][c] is None:
            out.append(None)
            continue
        fa, a_inc, fb, b_inc = zip(*(b[c] for _, b in members))
        out.append((np.array(fa, dtype=np.float64), np.array(a_inc, dtype=bool),
                    np.array(fb, dtype=np.float64), np.array(b_inc, dtype=bool)))
    return out


def _drive(zonemaps: "ZoneMaps", columns: tuple[str, ...], bounds: _Bounds
           ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """The vectorised look-ups of one group: every range's window on every column of the
    box (two ``searchsorted`` calls per column for all ranges), then per fragment the
    column with the fewest candidates (the first on ties, as :mod:`engine.scan.endpoints` does).
    Yields (driving column, j, q, member positions) per driving column."""
    m = len(next(b for b in bounds if b is not None)[0])
    counts = np.full((m, len(columns)), np.iinfo(np.int64).max, dtype=np.int64)
    js, qs = np.zeros_like(counts), np.zeros_like(counts)
    for c, column in enumerate(columns):
        if bounds[c] is not None:
            js[:, c], qs[:, c] = _windows(zonemaps, column, bounds[c][0], bounds[c][2])
            counts[:, c] = qs[:, c] - js[:, c] + column_index(zonemaps, column).always.size
    drive = np.argmin(counts, axis=1)
    for c in np.unique(drive):
        chosen = np.flatnonzero(drive == c)
        yield int(c), js[chosen, c], qs[chosen, c], chosen


def _eval_group(zonemaps: "ZoneMaps", columns: tuple[str, ...], drive: int,
                positions: list[_Target], bounds: _Bounds, j: np.ndarray, q: np.ndarray,
                fragments: Sequence["ScanFragment"], out: list,
                pending: dict[int, list[_Part]]) -> None:
    """Evaluate the boxes at ``positions`` (one group, one driving column) in chunks of
    about :data:`BATCH_ELEMENTS` candidates; store a one-box fragment's scan in ``out``,
    a box of a several-box fragment in ``pending`` (merged once all its boxes are in)."""
    ix = column_index(zonemaps, columns[drive])
    extra, kind = ix.always.size, ix.sort_kind
    sizes = np.cumsum(q - j + extra)
    start = 0
    while start < len(positions):
        base = sizes[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(sizes, base + BATCH_ELEMENTS, side="right")))
        part = [None if b is None else tuple(a[start:stop] for a in b) for b in bounds]
        frag, pos, cov, util = _eval_chunk(zonemaps, columns, drive, part,
                                           j[start:stop], q[start:stop])
        cuts = np.searchsorted(frag, np.arange(stop - start + 1))
        for k, (i, box) in enumerate(positions[start:stop]):
            a, b = cuts[k], cuts[k + 1]
            if box is not None:  # merged (and sorted) with the fragment's other boxes
                pending[i].append((box, pos[a:b].copy(), cov[a:b].copy(), util[a:b].copy()))
                continue
            o = np.argsort(pos[a:b], kind=kind) + a  # one small sort per fragment
            out[i] = _scan_of(zonemaps, fragments[i], pos[o], cov[o], util[o])
        start = stop


def _scan_of(zonemaps: "ZoneMaps", fragment: "ScanFragment", index: np.ndarray,
             covered: np.ndarray, util: np.ndarray) -> FragmentScan:
    predicated = fragment.predicated_columns
    read = cached_read_bytes(zonemaps, tuple(dict.fromkeys([*fragment.columns, *predicated])))
    return FragmentScan.sparse(fragment.query_id, len(zonemaps), index, covered, util, read,
                               predicated)
