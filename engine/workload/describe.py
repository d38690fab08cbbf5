"""A table's stored workload described for people: one JSON object per scan fragment, a
one-line predicate, and the queries whose predicates cannot prune (with a rewrite that
can).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.workload.boxes import format_predicate
from engine.workload.lint import LintFinding, lint_sql
from engine.workload.model import Range, RangeSource

if TYPE_CHECKING:
    from engine.table.store import TableStore
    from engine.workload.store import WorkloadStore

__all__ = ["SHOW_KEYS", "show_workload", "predicate_text", "source_text", "lint_workload"]

SHOW_KEYS = ("query_id", "ts", "table", "columns", "boxes", "sources")


def show_workload(store: "WorkloadStore", tables: "TableStore", table: str) -> list[dict[str, Any]]:
    """One JSON object per fragment: ``{"query_id", "ts", "table", "columns", "boxes",
    "sources"}``, boxes as ``[{COL: {"min", "max", "min_inclusive", "max_inclusive"}}]``
    (open ends null, dates ISO); an empty ``boxes`` list means the fragment cannot be
    pruned. ``sources`` says where each range came from: ``[{"column", "kind", ...}]``
    (:class:`engine.workload.model.RangeSource`: ``direct``, ``propagated`` through an
    equi-join, ``lookup`` in a dimension table at a snapshot, or ``unmapped``: a join that
    gave no range)."""
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


def source_text(sources: Sequence[Mapping[str, Any]]) -> str:
    """One short line for the ``sources`` of a :func:`show_workload` row: the origin of each
    range, notes left out.

    Example:
    >>> source_text([{"column": "ss_sold_date_sk", "kind": "lookup", "via": "d_date_sk",
    ...               "table": "date_dim", "snapshot": "7", "predicate": "d_year = 2000"}])
    'ss_sold_date_sk: lookup date_dim@7'
    """
    parts: dict[str, None] = {}
    for s in sources:
        kind = s.get("kind")
        if kind == "lookup":
            parts.setdefault(f"{s['column']}: lookup {s.get('table')}@{s.get('snapshot')}"
                             + (" (merged)" if s.get("note") else ""))
        elif kind == "propagated":
            parts.setdefault(f"{s['column']}: via {s.get('via')}")
    return "; ".join(parts) or ("direct" if any(s.get("kind") == "direct" for s in sources)
                                else "-")


def lint_workload(store: "WorkloadStore", tables: "TableStore", table: str) -> list[dict[str, Any]]:
    """The stored queries whose predicates cannot prune, one finding per predicate:
    ``{"query_id", "kind", "column", "predicate", "reason", "rewrite"}``, in log order
    (:mod:`engine.workload.lint`). A join whose filter gave the table no range (the other
    table is not registered, or its filter cannot be evaluated) is an ``unmapped-join``
    finding that says what to register; a lookup merged to ``lookup_max_ranges`` ranges is a
    ``widened-lookup`` finding."""
    schema = tables.current_snapshot(table).schema
    by_query: dict[str, tuple[str, bool]] = {}
    notes: dict[str, dict[tuple, LintFinding]] = {}
    for frag in store.fragments(table):
        sql, ranged = by_query.get(frag.query_id, (frag.sql or "", False))
        by_query[frag.query_id] = (sql or frag.sql or "", ranged or bool(frag.predicated_columns))
        for src in frag.sources:
            finding = _source_finding(frag.query_id, src)
            if finding is not None:
                notes.setdefault(frag.query_id, {}).setdefault(
                    (finding.kind, finding.column, finding.predicate), finding)
    out = []
    for query_id, (sql, ranged) in by_query.items():
        joined = list(notes.get(query_id, {}).values())
        if sql:
            found = lint_sql(sql, table, schema, query_id, has_ranges=ranged)
            if joined:  # the join says what is missing better than a guess
                found = [f for f in found if f.kind != "no-prunable-predicate"]
            out.extend(f.to_json() for f in found)
        out.extend(f.to_json() for f in joined)
    return out


def _source_finding(query_id: str, src: RangeSource) -> LintFinding | None:
    if src.kind == "unmapped":
        return LintFinding(query_id, "unmapped-join", src.column, src.predicate or "",
                           f"{src.column} joins {src.via}, but its filter gives {src.column} "
                           "no range", src.note)
    if src.kind == "lookup" and src.note:
        return LintFinding(query_id, "widened-lookup", src.column, src.predicate or "",
                           f"the keys of {src.table}.{src.via} matching it are scattered: "
                           f"{src.note}", "raise the setting lookup_max_ranges, or filter the "
                           "dimension on a column its keys follow")
    return None
