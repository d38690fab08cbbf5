"""Predicate -> capped DNF of boxes: NOT pushed to the leaves, AND/OR as box algebra.

``NOT`` is pushed down by De Morgan (``NOT (a AND b)`` -> ``NOT a OR NOT b``) and into the
comparisons (``NOT x < 5`` -> ``x >= 5``); ``BETWEEN`` and ``IN`` lists expand to their
comparisons. Each comparison is handed to a *leaf* callback (:mod:`engine.workload.sql.ranges`
turns it into per-column ranges); AND and OR combine the leaves' box lists with
:func:`engine.workload.boxes.and_boxes` / :func:`~engine.workload.boxes.or_boxes`, which keep
at most ``cap`` boxes by widening to the hull. Anything else (LIKE, IS NULL, NOT IN, a
negated null-safe equality, subquery predicates) is TRUE: no range, never narrowing.

Example:
>>> import sqlglot
>>> from engine.workload import boxes as bx
>>> from engine.workload.sql.ranges import value_range
>>> leaf = lambda op, col, value: [{col.name: value_range(op, (int(value.name),) * 2)}]
>>> bx.format_predicate(to_dnf(sqlglot.parse_one("not (x >= 5 and x <= 9) or y <= 2"), leaf))
'x < 5 OR x > 9 OR y <= 2'
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from engine.workload import boxes as bx
from engine.workload.boxes import Box
from engine.workload.sql.nodes import chain

#: ``leaf(op, left, right)``: the boxes of one comparison ``left op right``
Leaf = Callable[[str, exp.Expression, exp.Expression], list[Box]]

OPS: dict[type, str] = {exp.EQ: "=", exp.NullSafeEQ: "=", exp.NEQ: "<>", exp.LT: "<",
                        exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_NEGATE = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def to_dnf(node: exp.Expression, leaf: Leaf, cap: int = bx.DEFAULT_CAP,
           neg: bool = False) -> list[Box]:
    """The boxes of ``node`` (of ``NOT node`` when ``neg``), at most ``cap`` of them."""
    if isinstance(node, exp.Paren):
        return to_dnf(node.this, leaf, cap, neg)
    if isinstance(node, exp.Not):
        return to_dnf(node.this, leaf, cap, not neg)
    if isinstance(node, (exp.And, exp.Or)):
        parts = [to_dnf(c, leaf, cap, neg) for c in chain(node, type(node))]
        conj = isinstance(node, exp.And) != neg
        return bx.and_boxes(*parts, cap=cap) if conj else bx.or_boxes(*parts, cap=cap)
    if isinstance(node, exp.Boolean):
        return bx.TRUE if bool(node.this) != neg else bx.FALSE
    if type(node) in OPS:
        return _comparison(node, leaf, neg)
    if isinstance(node, exp.Between) and not node.args.get("symmetric"):
        return _between(node, leaf, cap, neg)
    if isinstance(node, exp.In) and not neg and not node.args.get("query") \
            and not node.args.get("unnest") and not node.args.get("field"):
        return _in_list(node, leaf, cap)
    return bx.TRUE


def _comparison(node: exp.Expression, leaf: Leaf, neg: bool) -> list[Box]:
    op = OPS[type(node)]
    if neg:
        if isinstance(node, exp.NullSafeEQ):
            return bx.TRUE  # NOT (x <=> v) also holds for NULLs: no range
        op = _NEGATE[op]
    return leaf(op, node.this, node.expression)


def _between(node: exp.Between, leaf: Leaf, cap: int, neg: bool) -> list[Box]:
    lo, hi, x = node.args["low"], node.args["high"], node.this
    if neg:
        return bx.or_boxes(leaf("<", x, lo), leaf(">", x, hi), cap=cap)
    return bx.and_boxes(leaf(">=", x, lo), leaf("<=", x, hi), cap=cap)


def _in_list(node: exp.In, leaf: Leaf, cap: int) -> list[Box]:
    """``x IN (a, b)`` -> ``x = a OR x = b``; ``(x, y) IN ((a, b), ...)`` likewise per tuple."""
    lhs = node.this
    parts = []
    for item in node.expressions:
        if isinstance(lhs, exp.Tuple):
            rhs = item.this if isinstance(item, exp.Paren) else item
            rvals = rhs.expressions if isinstance(rhs, exp.Tuple) else [rhs]
            if len(rvals) != len(lhs.expressions):
                return bx.TRUE
            parts.append(bx.and_boxes(*[leaf("=", a, b) for a, b in zip(lhs.expressions, rvals)],
                                      cap=cap))
        else:
            parts.append(leaf("=", lhs, item))
    return bx.or_boxes(*parts, cap=cap) if parts else bx.FALSE
