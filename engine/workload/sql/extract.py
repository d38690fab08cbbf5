"""SQL -> scan fragments: every scan of one table in a statement, with the ranges it asks for.

This is what PTO calls a *scan fragment* (PTO, section 3.1, Table 1): the filter an
optimizer would push into one scan operator of the table, here as a union of per-column
range boxes (see :mod:`engine.workload.model`) plus the table columns the scan reads.

Like sqlglot's optimizer, the work is a sequence of small steps, each in its own module,
composed here:

1. :mod:`~engine.workload.sql.parse`: sqlglot parses the text into statements;
2. :mod:`~engine.workload.sql.ctes`: non-recursive CTEs are inlined at each reference (a
   CTE used twice is two scans, as Spark plans it);
3. :mod:`~engine.workload.sql.walk`: each SELECT becomes a scope
   (:mod:`~engine.workload.sql.scopes`), its columns are resolved to sources
   (:mod:`~engine.workload.sql.columns`) and outer conjuncts are pushed into derived tables
   (:mod:`~engine.workload.sql.pushdown`); every scan of the table ends with its conjuncts
   and the columns it reads;
4. :mod:`~engine.workload.sql.normalize`: a scan's conjuncts become a capped DNF of boxes
   (:mod:`engine.workload.boxes`), whose leaves are per-column ranges with constants
   folded and coerced to the column type (:mod:`~engine.workload.sql.ranges`).

Ranges also arrive through joins (:mod:`~engine.workload.sql.joins`): a predicate on a
column equal to one of the table's is copied onto it, and a filter on a registered dimension
table is looked up in its data when ``lookups`` is given (:mod:`engine.workload.lookup`).
Each fragment lists where its ranges came from in ``sources``.

Anything not understood -- column-to-column comparisons, functions of columns, LIKE,
IS NULL, ``<>``, NOT IN, subquery predicates -- is *no range*: the conjunct drops out,
which widens the fragment and never narrows it.

Results:
* ``boxes == ()``: no usable predicate, the scan cannot be pruned;
* every box contradictory (``x < 1 AND x > 5``, ``WHERE 1 = 0``): one box holding
  :func:`engine.workload.boxes.empty_range` (``min > max``) on one column: matches nothing.

Example:
>>> from engine.table.model import TableSchema
>>> schema = TableSchema((("l_shipdate", "date"), ("l_quantity", "int")))
>>> [f] = extract_fragments("select l_quantity from lineitem where l_shipdate >= "
...                         "date '1994-01-01' and l_quantity < 24", "lineitem", schema, "q1")
>>> f.boxes[0]["l_quantity"]
Range(min=None, max=24, min_inclusive=True, max_inclusive=False)
>>> f.columns
('l_shipdate', 'l_quantity')
"""

from __future__ import annotations

from functools import partial

from sqlglot import exp

from engine.table.model import TableSchema
from engine.workload import boxes as bx
from engine.workload.boxes import Box
from engine.workload.lookup import DimensionLookups
from engine.workload.model import RangeSource, ScanFragment
from engine.workload.sql.columns import Resolver
from engine.workload.sql.ctes import inline_ctes
from engine.workload.sql.joins import origin
from engine.workload.sql.normalize import to_dnf
from engine.workload.sql.parse import parse_error, parse_statements
from engine.workload.sql.ranges import ScanRanges
from engine.workload.sql.scopes import Scan
from engine.workload.sql.walk import ScanWalker


def extract_fragments(sql: str, table: str, schema: TableSchema, query_id: str,
                      dialect: str | None = None, ts: str | None = None,
                      lookups: DimensionLookups | None = None) -> list[ScanFragment]:
    """One :class:`ScanFragment` per scan of ``table`` in ``sql`` (see the module docs);
    ``lookups`` evaluates filters on registered dimension tables (None: no lookups)."""
    out: list[ScanFragment] = []
    for stmt in parse_statements(sql, dialect):
        try:
            out.extend(_statement_fragments(stmt, sql, table, schema, query_id, ts, lookups))
        except RecursionError:
            raise parse_error("statement nested too deeply to analyse") from None
    return out


def _statement_fragments(stmt: exp.Expression, sql: str, table: str, schema: TableSchema,
                         query_id: str, ts: str | None,
                         lookups: DimensionLookups | None) -> list[ScanFragment]:
    if stmt.find(exp.With) is not None:  # (a recursive rewrite: only when there is a WITH)
        stmt = inline_ctes(stmt, {})
    walker = ScanWalker(table, schema, lookups)
    walker.statement(stmt)
    out = []
    for scan in walker.scans:
        columns = schema.names if scan.star else [n for n in schema.names if n in scan.columns]
        boxes, sources = scan_boxes(scan, schema, walker.resolver)
        out.append(ScanFragment(query_id=query_id, table=table, boxes=boxes,
                                columns=tuple(columns), ts=ts, sql=sql.strip(),
                                sources=sources))
    return out


def scan_boxes(scan: Scan, schema: TableSchema, resolver: Resolver, cap: int = bx.DEFAULT_CAP
               ) -> tuple[tuple[Box, ...], tuple[RangeSource, ...]]:
    """The AND of a scan's conjuncts as boxes (``()`` when no box constrains anything), and
    where the ranges of the predicated columns came from."""
    column_of = partial(resolver.scan_column, scan=scan)
    ranges = ScanRanges(schema, column_of)
    parts, found, empty = [], {}, {}
    for conj in scan.conjuncts:
        part = to_dnf(conj, ranges, cap)
        parts.append(part)
        src = origin(conj) or RangeSource("", "direct")
        if src.kind == "unmapped" or not part:  # a note, or no key matched: name the column
            cols = [c for c in (column_of(n) for n in conj.find_all(exp.Column)) if c]
            if not part:
                empty.update(dict.fromkeys(cols))
        else:
            cols = list(dict.fromkeys(c for box in part for c in box))
        for col in cols:
            entry = RangeSource(col, *[getattr(src, k) for k in RangeSource.__slots__[1:]])
            found.setdefault(entry, None)
    result = bx.and_boxes(*parts, cap=cap)
    if not result:
        col = next(iter(empty), None) or next(iter(ranges.seen), None) \
            or next(iter(schema.orderable()), None) or schema.names[0]
        return ({col: bx.empty_range(schema.type_of(col))},), _kept(found, {col})
    if any(not b for b in result):
        return (), _kept(found, set())
    return tuple(result), _kept(found, {c for box in result for c in box})


def _kept(found: dict[RangeSource, None], predicated: set[str]) -> tuple[RangeSource, ...]:
    """The sources of the columns the boxes constrain, and every note."""
    return tuple(s for s in found if s.column in predicated or s.kind == "unmapped")
