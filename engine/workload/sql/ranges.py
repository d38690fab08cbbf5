"""One comparison -> per-column ranges of one scan, with constants folded and coerced.

``column op constant`` (either side; the operator is flipped when the column is on the
right) becomes a one-box list ``[{column: Range}]``. The constant is folded
(:func:`engine.workload.folding.fold`) and coerced to the column's logical type as its
nearest representable neighbours (:func:`engine.workload.folding.coerce`), so the range is
exact and never narrower than the predicate. The column may sit under an order-preserving,
injective cast (``CAST(int_col AS DOUBLE)``); ``CAST(ts AS DATE)`` and ``DATE(ts)`` become a
range of whole days of the timestamp. Two constants compare to TRUE or FALSE (``1 = 0``);
anything else (column-to-column, functions of columns, ``<>``, non-constant bounds) is TRUE:
no range.

Example:
>>> import datetime as dt
>>> day_range(">=", (dt.date(1995, 3, 15), dt.date(1995, 3, 15)))
Range(min=datetime.datetime(1995, 3, 15, 0, 0), max=None, min_inclusive=True, max_inclusive=True)
>>> value_range("<", (24, 25))
Range(min=None, max=24, min_inclusive=True, max_inclusive=True)
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from sqlglot import exp

from engine.table.model import TableSchema
from engine.workload import boxes as bx
from engine.workload.boxes import Box
from engine.workload.folding import NOT_CONSTANT, coerce, fold
from engine.workload.model import Range

_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_T = exp.DataType.Type
_WIDENING_CASTS: dict[str, set] = {  # order-preserving, injective casts of a column
    "int": set(exp.DataType.INTEGER_TYPES) | {_T.DOUBLE, _T.FLOAT, _T.DECIMAL, _T.BIGDECIMAL},
    "float": {_T.DOUBLE, _T.FLOAT},
    "date": {_T.DATE, _T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMPNTZ,
             _T.DATETIME},
    "timestamp": {_T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMPNTZ, _T.DATETIME},
    "string": set(exp.DataType.TEXT_TYPES),
}
_DAY = dt.timedelta(days=1)


class ScanRanges:
    """The leaf of :func:`engine.workload.sql.normalize.to_dnf` for one scan.

    ``column_of(node)`` names the scan's column when ``node`` is a reference to it.
    ``seen`` lists the predicated columns in first-seen order.
    """

    def __init__(self, schema: TableSchema, column_of: Callable[[exp.Expression], str | None]) -> None:
        self.schema = schema
        self.column_of = column_of
        self.seen: dict[str, None] = {}

    def __call__(self, op: str, left: exp.Expression, right: exp.Expression) -> list[Box]:
        col = self._cast_column(left)
        other = right
        if col is None:
            col = self._cast_column(right)
            other, op = left, _FLIP[op]
        if col is None:
            return constant_compare(op, fold(left), fold(right))
        name, cast = col
        value = fold(other)
        if value is NOT_CONSTANT or op == "<>":
            return bx.TRUE
        self.seen.setdefault(name)
        if cast == "date":  # CAST(ts AS DATE) op d  ->  a range of whole days of ts
            near = coerce("date", value)
            r = None if near is None else day_range(op, near)
        else:
            near = coerce(self.schema.type_of(name), value)
            r = None if near is None else value_range(op, near)
        if near is None:
            return bx.TRUE
        return bx.FALSE if r is None or bx.is_empty(r) else [{name: r}]

    def _cast_column(self, node: exp.Expression) -> tuple[str, str] | None:
        """(column, cast) when ``node`` is a column of the scan, maybe under a harmless cast.

        ``cast`` is "" for the column itself and "date" for a timestamp cast to a date
        (order-preserving but not injective: a range of whole days)."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Column):
            return self._under_cast(node)
        if isinstance(node, (exp.TsOrDsToDate, exp.Date)) and isinstance(node.this, exp.Column) \
                and not node.args.get("format"):
            return self._under_date(node)
        if not isinstance(node, exp.Column):
            return None
        name = self.column_of(node)
        return None if name is None else (name, "")

    def _under_cast(self, node: exp.Cast) -> tuple[str, str] | None:
        inner = self._cast_column(node.this)
        if inner is None:
            return None
        ltype = self.schema.type_of(inner[0])
        if node.to.this in _WIDENING_CASTS.get(ltype, set()):
            return inner
        if ltype == "timestamp" and node.to.this == _T.DATE:
            return inner[0], "date"
        return None

    def _under_date(self, node: exp.Expression) -> tuple[str, str] | None:
        inner = self._cast_column(node.this)
        if inner and self.schema.type_of(inner[0]) == "timestamp":
            return inner[0], "date"
        if inner and self.schema.type_of(inner[0]) == "date":
            return inner
        return None


def value_range(op: str, near: tuple[Any, Any]) -> Range | None:
    """The range of ``column op value`` given the value's nearest representable neighbours."""
    below, above = near
    exact = below == above
    if op == "=":
        return Range(below, below) if exact else None
    if op == ">":
        return Range(below, None, False, True) if exact else Range(above, None)
    if op == ">=":
        return Range(above, None)
    if op == "<":
        return Range(None, below, True, False) if exact else Range(None, below)
    if op == "<=":
        return Range(None, below)
    return None


def day_range(op: str, near: tuple[Any, Any]) -> Range | None:
    """``CAST(ts AS DATE) op value`` as a timestamp range (value coerced to dates)."""
    below, above = near
    if op == "=":
        return Range(_midnight(below), _midnight(below) + _DAY, True, False) if below == above else None
    if op in (">", ">="):
        start = above + _DAY if (op == ">" and below == above) else above
        return Range(_midnight(start), None)
    if op in ("<", "<="):
        end = below + _DAY if (op == "<=" or below != above) else below
        return Range(None, _midnight(end), True, False)
    return None


def _midnight(d: dt.date) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day)


def constant_compare(op: str, a: Any, b: Any) -> list[Box]:
    """``1 = 1`` -> TRUE, ``1 = 0`` -> FALSE; anything not both constant -> TRUE (no range)."""
    if a is NOT_CONSTANT or b is NOT_CONSTANT or a is None or b is None:
        return bx.TRUE
    try:
        result = {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                  ">=": a >= b}[op]
    except TypeError:
        return bx.TRUE
    return bx.TRUE if result else bx.FALSE
