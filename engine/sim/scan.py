"""Fast, exact zonemap pruning for the simulator's ground truth.

A fragment is compiled once (its boxes encoded with :mod:`engine.core.logical_types`) and then
evaluated against many zonemap versions: a partition is scanned when some box intersects
it on every constrained column. A column without statistics (``valid`` False) might match,
as in :mod:`engine.scan.pruning`. Bytes are projection-aware (:meth:`ZoneMaps.read_bytes`).

The policies see :class:`engine.scan.pruning.FragmentScan` objects computed by
``engine.scan.pruning.analyze_fragment`` (utilization included); this module only measures
what a query reads, which is what the simulator charges.

Partitions written with row groups of their own statistics (PAW's precise descriptors as STR
row groups, seed 001 §V-A) are priced as
:func:`engine.design.paw.descriptors.row_group_cost` prices them: a
file is read iff the query meets one of its row groups, and only the row groups met are
read. The same pruning as files (:func:`scanned_mask`) runs on the row groups' zonemaps, so
disjunctions, open bounds and columns outside the tree are handled as for files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from engine.core import logical_types

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class Bound:
    column: str
    lo: float | str | None
    hi: float | str | None
    lo_inc: bool
    hi_inc: bool


@dataclass(frozen=True)
class CompiledFragment:
    query_id: str
    columns: tuple[str, ...]
    boxes: tuple[tuple[Bound, ...], ...]  # empty tuple: no predicate, scans everything
    empty: bool = False  # a contradiction: scans nothing


def _enc(ltype: str, v: object) -> float | str | None:
    if v is None:
        return None
    e = logical_types.encode_scalar(ltype, v)
    return None if isinstance(e, float) and math.isnan(e) else e


def compile_fragment(fragment: "ScanFragment", types: Mapping[str, str]) -> CompiledFragment:
    """Encode a fragment's boxes for repeated evaluation."""
    boxes = []
    for box in fragment.boxes:
        bounds = []
        dead = False
        for col, r in box.items():
            ltype = types.get(col)
            if ltype is None:  # a column the table does not have cannot prune it
                continue
            lo, hi = _enc(ltype, r.min), _enc(ltype, r.max)
            if lo is not None and hi is not None and (lo > hi or (lo == hi and not (r.min_inclusive and r.max_inclusive))):
                dead = True
            bounds.append(Bound(col, lo, hi, r.min_inclusive, r.max_inclusive))
        if not dead:
            boxes.append(tuple(bounds))
    empty = bool(fragment.boxes) and not boxes
    if any(len(b) == 0 for b in boxes):
        boxes = []  # an unconstrained box: everything might match
    return CompiledFragment(fragment.query_id, tuple(fragment.columns), tuple(boxes), empty)


def box_mask(zm: "ZoneMaps", box: Sequence[Bound]) -> np.ndarray:
    """Partitions that might hold rows of one box (conjunction of ranges)."""
    m = np.ones(len(zm), dtype=bool)
    for b in box:
        cz = zm.columns.get(b.column)
        if cz is None:
            continue
        hit = np.ones(len(zm), dtype=bool)
        if b.lo is not None:
            hit &= (cz.hi >= b.lo) if b.lo_inc else (cz.hi > b.lo)
        if b.hi is not None:
            hit &= (cz.lo <= b.hi) if b.hi_inc else (cz.lo < b.hi)
        m &= hit | ~cz.valid
    return m


def scanned_mask(zm: "ZoneMaps", cf: CompiledFragment) -> np.ndarray:
    """Partitions the fragment must read (zonemap pruning, conservative)."""
    if cf.empty:
        return np.zeros(len(zm), dtype=bool)
    if not cf.boxes:
        return np.ones(len(zm), dtype=bool)
    m = np.zeros(len(zm), dtype=bool)
    for box in cf.boxes:
        m |= box_mask(zm, box)
    return m


@dataclass(frozen=True)
class QueryCost:
    bytes: float
    scanned: int
    total: int


def query_cost(zm: "ZoneMaps", cf: CompiledFragment, read_bytes: np.ndarray | None = None,
               row_groups: "tuple[ZoneMaps, np.ndarray] | None" = None) -> QueryCost:
    """Bytes and partitions one query reads over ``zm``; ``row_groups`` (the row groups'
    zonemaps and each one's partition position in ``zm``, :meth:`SimTable.row_group_zonemaps`)
    prices the partitions that have them by the row groups met."""
    mask = scanned_mask(zm, cf)
    rb = zm.read_bytes(list(cf.columns)) if read_bytes is None else read_bytes
    if row_groups is None:
        return QueryCost(float(rb[mask].sum()), int(mask.sum()), len(zm))
    rg_zm, rg_pos = row_groups
    whole = mask.copy()
    whole[rg_pos] = False  # partitions with row groups: priced by their row groups below
    met = scanned_mask(rg_zm, cf) & mask[rg_pos]
    nbytes = float(rb[whole].sum()) + float(rg_zm.read_bytes(list(cf.columns))[met].sum())
    return QueryCost(nbytes, int(whole.sum()) + len(np.unique(rg_pos[met])), len(zm))
