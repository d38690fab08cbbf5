"""Range and box algebra for scan fragments: intersection, hull, emptiness, capped DNF.

A *box list* is a disjunction of boxes; a box is a ``dict`` column -> :class:`Range` (a
conjunction). ``TRUE`` is ``[{}]`` (one unconstrained box: nothing can be pruned) and
``FALSE`` is ``[]`` (no box: nothing matches). Every operation keeps at most ``cap`` boxes:
past the cap the list collapses to its bounding hull, which only ever *widens* the
predicate. Widening is always safe for pruning; narrowing never is.

Example:
>>> a = [{"x": Range(1, 5)}]
>>> b = [{"x": Range(3, 9)}, {"x": Range(7, 8)}]
>>> and_boxes(a, b)
[{'x': Range(min=3, max=5, min_inclusive=True, max_inclusive=True)}]
>>> hull([{"x": Range(1, 2)}, {"x": Range(5, 6)}])
[{'x': Range(min=1, max=6, min_inclusive=True, max_inclusive=True)}]
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Iterable

from engine.core.logical_types import to_json_value
from engine.workload.model import Range

Box = dict[str, Range]
TRUE: list[Box] = [{}]
FALSE: list[Box] = []
DEFAULT_CAP = 64

# One value pair (low, high) with low < high for every logical type: an "empty range" marker
# Range(min=high, max=low) of the column's own type (so it serialises like any other bound).
_EMPTY_PAIR: dict[str, tuple[Any, Any]] = {
    "int": (0, 1),
    "float": (0.0, 1.0),
    "decimal": (decimal.Decimal(0), decimal.Decimal(1)),
    "date": (dt.date(1970, 1, 1), dt.date(1970, 1, 2)),
    "timestamp": (dt.datetime(1970, 1, 1), dt.datetime(1970, 1, 2)),
    "string": ("", "a"),
    "bool": (False, True),
}


def empty_range(ltype: str) -> Range:
    """A range that contains no value: ``min > max`` (e.g. ``Range(1, 0)`` for ints).

    Used for a fragment whose every box is contradictory (``x < 1 AND x > 5``,
    ``WHERE 1 = 0``): the fragment is then a single box holding this range, and a pruning
    evaluator that honours :func:`is_empty` prunes every partition.
    """
    lo, hi = _EMPTY_PAIR.get(ltype, _EMPTY_PAIR["string"])
    return Range(hi, lo, True, True)


def is_empty(r: Range) -> bool:
    """True when no value lies in ``r`` (min above max, or equal with an open end)."""
    if r.min is None or r.max is None:
        return False
    try:
        if r.min > r.max:
            return True
        return r.min == r.max and not (r.min_inclusive and r.max_inclusive)
    except TypeError:  # incomparable bounds (should not happen: both coerced to one type)
        return False


def intersect(a: Range, b: Range) -> Range:
    """The range of values in both ``a`` and ``b``."""
    if a.min is None:
        lo, lo_inc = b.min, b.min_inclusive
    elif b.min is None or a.min > b.min:
        lo, lo_inc = a.min, a.min_inclusive
    elif b.min > a.min:
        lo, lo_inc = b.min, b.min_inclusive
    else:
        lo, lo_inc = a.min, a.min_inclusive and b.min_inclusive
    if a.max is None:
        hi, hi_inc = b.max, b.max_inclusive
    elif b.max is None or a.max < b.max:
        hi, hi_inc = a.max, a.max_inclusive
    elif b.max < a.max:
        hi, hi_inc = b.max, b.max_inclusive
    else:
        hi, hi_inc = a.max, a.max_inclusive and b.max_inclusive
    return Range(lo, hi, lo_inc if lo is not None else True, hi_inc if hi is not None else True)


def span(a: Range, b: Range) -> Range:
    """The smallest range holding both ``a`` and ``b`` (their convex hull)."""
    if a.min is None or b.min is None:
        lo, lo_inc = None, True
    elif a.min < b.min:
        lo, lo_inc = a.min, a.min_inclusive
    elif b.min < a.min:
        lo, lo_inc = b.min, b.min_inclusive
    else:
        lo, lo_inc = a.min, a.min_inclusive or b.min_inclusive
    if a.max is None or b.max is None:
        hi, hi_inc = None, True
    elif a.max > b.max:
        hi, hi_inc = a.max, a.max_inclusive
    elif b.max > a.max:
        hi, hi_inc = b.max, b.max_inclusive
    else:
        hi, hi_inc = a.max, a.max_inclusive or b.max_inclusive
    return Range(lo, hi, lo_inc, hi_inc)


def _and_box(a: Box, b: Box) -> Box | None:
    """Conjunction of two boxes, or None when it is empty."""
    out = dict(a)
    for col, r in b.items():
        merged = intersect(out[col], r) if col in out else r
        if is_empty(merged):
            return None
        out[col] = merged
    return out


def hull(boxes: list[Box]) -> list[Box]:
    """One box spanning all ``boxes``: only columns constrained in every box stay bounded."""
    if not boxes:
        return FALSE
    common = [c for c in boxes[0] if all(c in b for b in boxes[1:])]
    out: Box = {}
    for col in common:
        r = boxes[0][col]
        for b in boxes[1:]:
            r = span(r, b[col])
        if r.min is not None or r.max is not None:
            out[col] = r
    return [out]


def _key(box: Box) -> tuple:
    return tuple(sorted((c, repr(r)) for c, r in box.items()))


def _dedupe(boxes: Iterable[Box]) -> list[Box]:
    seen: dict[tuple, Box] = {}
    for b in boxes:
        seen.setdefault(_key(b), b)
    return list(seen.values())


def or_boxes(*parts: list[Box], cap: int = DEFAULT_CAP) -> list[Box]:
    """Disjunction. Any unconstrained box makes the whole union unconstrained."""
    out: list[Box] = []
    for part in parts:
        for b in part:
            if not b:
                return [{}]
            out.append(b)
    out = _dedupe(out)
    return hull(out) if len(out) > cap else out


def and_boxes(*parts: list[Box], cap: int = DEFAULT_CAP) -> list[Box]:
    """Conjunction by distributing over the unions (DNF), collapsing to hulls past ``cap``."""
    acc: list[Box] = [{}]
    for part in parts:
        if not part:
            return FALSE
        if len(acc) * len(part) > cap:
            acc, part = hull(acc), hull(part)
        nxt = [m for a in acc for b in part if (m := _and_box(a, b)) is not None]
        acc = _dedupe(nxt)
        if not acc:
            return FALSE
    return acc


def _fmt(value: Any, ltype: str) -> str:
    return str(to_json_value(ltype, value))


def format_range(r: Range, ltype: str = "string") -> str:
    """Interval notation: ``[1994-01-01, 1995-01-01)``, ``(-inf, 24)``, ``[MAIL, MAIL]``."""
    lo = "-inf" if r.min is None else _fmt(r.min, ltype)
    hi = "+inf" if r.max is None else _fmt(r.max, ltype)
    left = "[" if r.min is not None and r.min_inclusive else "("
    right = "]" if r.max is not None and r.max_inclusive else ")"
    return f"{left}{lo}, {hi}{right}"


def format_predicate(boxes: Iterable[Box], types: dict[str, str] | None = None) -> str:
    """A compact one-line form of a fragment's boxes, for text output.

    >>> format_predicate([{"x": Range(1, 1)}, {"x": Range(None, 5, True, False), "y": Range(2, None)}])
    'x = 1 OR x < 5 AND y >= 2'
    >>> format_predicate([])
    'TRUE (no range)'
    """
    types = types or {}
    ors = []
    for box in boxes:
        ands = []
        for col, r in box.items():
            t = types.get(col, "string")
            if is_empty(r):
                ands.append(f"{col} in {{}} (matches nothing)")
            elif r.min is not None and r.min == r.max:
                ands.append(f"{col} = {_fmt(r.min, t)}")
            elif r.min is None and r.max is not None:
                ands.append(f"{col} {'<=' if r.max_inclusive else '<'} {_fmt(r.max, t)}")
            elif r.max is None and r.min is not None:
                ands.append(f"{col} {'>=' if r.min_inclusive else '>'} {_fmt(r.min, t)}")
            else:
                ands.append(f"{col} in {format_range(r, t)}")
        ors.append(" AND ".join(ands) if ands else "TRUE")
    return " OR ".join(ors) if ors else "TRUE (no range)"
