"""Dense boxes over a fixed list of numeric dimensions (PAW §III-B descriptors).

A query box ``{column: (lo, hi, lo_inc, hi_inc)}`` (the shape of ``QdTree`` boxes and of
``ScanFragment.boxes`` with encoded values; ``None`` is an open end) becomes a :class:`DBox`:
arrays ``lo``/``hi`` with ±inf for an open end and inclusive flags per dimension. PAW needs
intersection, containment of points, and exact box subtraction (the IP router, §IV-D).

Example:
>>> a = DBox.closed([0, 0], [10, 10])
>>> b = DBox.closed([5, 5], [20, 20])
>>> a.intersects(b), a.intersect(b).lo.tolist(), len(a.subtract(b))
(True, [5.0, 5.0], 2)
>>> all(p.intersects(b) is False for p in a.subtract(b))
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

Bound = tuple[Any, Any, bool, bool]


@dataclass(frozen=True)
class DBox:
    """An axis-parallel box: per dimension ``lo``..``hi`` with inclusive flags."""

    lo: np.ndarray
    hi: np.ndarray
    lo_inc: np.ndarray
    hi_inc: np.ndarray

    @classmethod
    def closed(cls, lo: Sequence[float], hi: Sequence[float]) -> "DBox":
        """A box with every bound inclusive."""
        lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        ones = np.ones(len(lo_a), dtype=bool)
        return cls(lo_a, hi_a, ones, ones.copy())

    @classmethod
    def everything(cls, d: int) -> "DBox":
        """The unconstrained box (−inf, inf) in ``d`` dimensions."""
        return cls.closed([-math.inf] * d, [math.inf] * d)

    @classmethod
    def from_bounds(cls, box: Mapping[str, Any], columns: Sequence[str]) -> "DBox":
        """From ``{column: (lo, hi[, lo_inc, hi_inc])}`` or ``Range``; absent columns are open."""
        out = cls.everything(len(columns))
        lo, hi, li, hi_inc = out.lo.copy(), out.hi.copy(), out.lo_inc.copy(), out.hi_inc.copy()
        for j, col in enumerate(columns):
            if col not in box:
                continue
            b = box[col]
            if hasattr(b, "min_inclusive"):
                b = (b.min, b.max, b.min_inclusive, b.max_inclusive)
            b = tuple(b) if len(tuple(b)) == 4 else (*tuple(b), True, True)
            if b[0] is not None and not (isinstance(b[0], float) and math.isnan(b[0])):
                lo[j], li[j] = float(b[0]), bool(b[2])
            if b[1] is not None and not (isinstance(b[1], float) and math.isnan(b[1])):
                hi[j], hi_inc[j] = float(b[1]), bool(b[3])
        return cls(lo, hi, li, hi_inc)

    def to_bounds(self, columns: Sequence[str]) -> dict[str, list[Any]]:
        """JSON-plain ``{column: [lo, hi, lo_inc, hi_inc]}`` (``None`` for an infinite end)."""
        return {c: [None if math.isinf(self.lo[j]) else float(self.lo[j]),
                    None if math.isinf(self.hi[j]) else float(self.hi[j]),
                    bool(self.lo_inc[j]), bool(self.hi_inc[j])] for j, c in enumerate(columns)}

    @classmethod
    def from_json(cls, bounds: Mapping[str, Sequence[Any]], columns: Sequence[str]) -> "DBox":
        """Inverse of :meth:`to_bounds`."""
        return cls.from_bounds({c: tuple(b) for c, b in bounds.items()}, columns)

    @property
    def d(self) -> int:
        return len(self.lo)

    def is_empty(self) -> bool:
        """True when some dimension holds no value."""
        return bool(np.any((self.lo > self.hi) | ((self.lo == self.hi) & ~(self.lo_inc & self.hi_inc))))

    def intersect(self, other: "DBox") -> "DBox":
        """The box of points in both (may be empty)."""
        lo = np.maximum(self.lo, other.lo)
        lo_inc = np.where(self.lo > other.lo, self.lo_inc,
                          np.where(other.lo > self.lo, other.lo_inc, self.lo_inc & other.lo_inc))
        hi = np.minimum(self.hi, other.hi)
        hi_inc = np.where(self.hi < other.hi, self.hi_inc,
                          np.where(other.hi < self.hi, other.hi_inc, self.hi_inc & other.hi_inc))
        return DBox(lo, hi, lo_inc, hi_inc)

    def intersects(self, other: "DBox") -> bool:
        """Whether the two boxes share a point."""
        return not self.intersect(other).is_empty()

    def contains_box(self, other: "DBox") -> bool:
        """Whether every point of ``other`` (non-empty) lies in this box."""
        lo_ok = (other.lo > self.lo) | ((other.lo == self.lo) & (self.lo_inc | ~other.lo_inc))
        hi_ok = (other.hi < self.hi) | ((other.hi == self.hi) & (self.hi_inc | ~other.hi_inc))
        return bool(np.all(lo_ok & hi_ok))

    def contains(self, x: np.ndarray) -> np.ndarray:
        """Row mask of the points ``x`` (rows × d) inside the box."""
        lo_ok = np.where(self.lo_inc, x >= self.lo, x > self.lo)
        hi_ok = np.where(self.hi_inc, x <= self.hi, x < self.hi)
        return np.all(lo_ok & hi_ok, axis=1)

    def subtract(self, other: "DBox") -> list["DBox"]:
        """``self − other`` as at most ``2·d`` disjoint boxes (exact, bounds' flags honoured).

        Peels one slab below and one above ``other`` per dimension, then narrows the rest
        to ``other``'s range on that dimension.
        """
        if not self.intersects(other):
            return [] if self.is_empty() else [self]
        pieces: list[DBox] = []
        rest = self
        for j in range(self.d):
            below = _replace(rest, j, hi=(other.lo[j], not other.lo_inc[j]))
            above = _replace(rest, j, lo=(other.hi[j], not other.hi_inc[j]))
            pieces += [p for p in (below, above) if not p.is_empty()]
            rest = _replace(rest, j, lo=(max(rest.lo[j], other.lo[j]), _lo_inc(rest, other, j)),
                            hi=(min(rest.hi[j], other.hi[j]), _hi_inc(rest, other, j)))
        return pieces


def _lo_inc(a: DBox, b: DBox, j: int) -> bool:
    if a.lo[j] > b.lo[j]:
        return bool(a.lo_inc[j])
    if b.lo[j] > a.lo[j]:
        return bool(b.lo_inc[j])
    return bool(a.lo_inc[j] and b.lo_inc[j])


def _hi_inc(a: DBox, b: DBox, j: int) -> bool:
    if a.hi[j] < b.hi[j]:
        return bool(a.hi_inc[j])
    if b.hi[j] < a.hi[j]:
        return bool(b.hi_inc[j])
    return bool(a.hi_inc[j] and b.hi_inc[j])


def _replace(box: DBox, j: int, lo: tuple[float, bool] | None = None,
             hi: tuple[float, bool] | None = None) -> DBox:
    """``box`` with dimension ``j``'s low and/or high bound replaced."""
    out = DBox(box.lo.copy(), box.hi.copy(), box.lo_inc.copy(), box.hi_inc.copy())
    if lo is not None:
        out.lo[j], out.lo_inc[j] = lo
    if hi is not None:
        out.hi[j], out.hi_inc[j] = hi
    return out


def covered(box: DBox, covers: Sequence[DBox]) -> bool:
    """Whether ``box`` lies inside the union of ``covers`` (exact, by repeated subtraction)."""
    rest = [] if box.is_empty() else [box]
    for c in covers:
        rest = [p for r in rest for p in r.subtract(c)]
        if not rest:
            return True
    return not rest


def mbr(boxes: Sequence[DBox]) -> DBox:
    """The minimum bounding box of closed boxes."""
    return DBox.closed(np.min([b.lo for b in boxes], axis=0), np.max([b.hi for b in boxes], axis=0))


def stack(boxes: Sequence[DBox], d: int) -> tuple[np.ndarray, ...]:
    """Boxes as four (m × d) arrays lo, hi, lo_inc, hi_inc for vectorised tests."""
    if not boxes:
        z = np.zeros((0, d))
        return z, z.copy(), z.astype(bool), z.astype(bool)
    return (np.stack([b.lo for b in boxes]), np.stack([b.hi for b in boxes]),
            np.stack([b.lo_inc for b in boxes]), np.stack([b.hi_inc for b in boxes]))


def touching(q: tuple[np.ndarray, ...], region: DBox) -> np.ndarray:
    """Mask of the stacked boxes ``q`` that share a point with ``region``."""
    lo, hi, lo_inc, hi_inc = q
    below = (hi < region.lo) | ((hi == region.lo) & ~(hi_inc & region.lo_inc))
    above = (lo > region.hi) | ((lo == region.hi) & ~(lo_inc & region.hi_inc))
    own_empty = (lo > hi) | ((lo == hi) & ~(lo_inc & hi_inc))
    return ~np.any(below | above | own_empty, axis=1)
