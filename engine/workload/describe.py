"""A table's stored workload described for people: one JSON object per scan fragment, a
one-line predicate, and the queries whose predicates cannot prune (with a rewrite that
can).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.workload.boxes import format_predicate
from engine.workload.lint import lint_sql
from engine.workload.model import Range

if TYPE_CHECKING:
    from engine.table.store import TableStore
    from engine.workload.store import WorkloadStore

__all__ = ["SHOW_KEYS", "show_workload", "predicate_text", "lint_workload"]

SHOW_KEYS = ("query_id", "ts", "table", "columns", "boxes")


def show_workload(store: "WorkloadStore", tables: "TableStore", table: str) -> list[dict[str, Any]]:
    """One JSON object per fragment: ``{"query_id", "ts", "table", "columns", "boxes"}``,
    boxes as ``[{COL: {"min", "max", "min_inclusive", "max_inclusive"}}]`` (open ends null,
    dates ISO); an empty ``boxes`` list means the fragment cannot be pruned."""
    stored = store.schema(table)
    if stored is None:
        tables.info(table)  # an unknown table is an error, not an empty list
        return []
    types = dict(stored.columns)
    out = []
    for frag in store.fragments(table):
        data = frag.to_json(types)
        out.append({k: data[k] for k in SHOW_KEYS})
    return out


def predicate_text(boxes: Sequence[Mapping[str, Mapping[str, Any]]]) -> str:
    """One line for the ``boxes`` of a :func:`show_workload` row (values as shown there).

    Example:
    >>> predicate_text([{"l_shipdate": {"min": "1995-01-01", "max": None,
    ...                                 "min_inclusive": True, "max_inclusive": True}}])
    'l_shipdate >= 1995-01-01'
    """
    return format_predicate([{c: Range(b["min"], b["max"], b["min_inclusive"], b["max_inclusive"])
                              for c, b in box.items()} for box in boxes])


def lint_workload(store: "WorkloadStore", tables: "TableStore", table: str) -> list[dict[str, Any]]:
    """The stored queries whose predicates cannot prune, one finding per predicate:
    ``{"query_id", "kind", "column", "predicate", "reason", "rewrite"}``, in log order
    (:mod:`engine.workload.lint`)."""
    schema = tables.current_snapshot(table).schema
    by_query: dict[str, tuple[str, bool]] = {}
    for frag in store.fragments(table):
        sql, ranged = by_query.get(frag.query_id, (frag.sql or "", False))
        by_query[frag.query_id] = (sql or frag.sql or "", ranged or bool(frag.predicated_columns))
    out = []
    for query_id, (sql, ranged) in by_query.items():
        if sql:
            out.extend(f.to_json() for f in lint_sql(sql, table, schema, query_id,
                                                     has_ranges=ranged))
    return out
