"""Workload façade: import query logs, list and show the table's scan fragments.

Returned values are JSON-friendly except :func:`workload_fragments`, which gives the
engine's :class:`ScanFragment` objects (for pruning, policies and the dashboard).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engine.api.summaries import warm_after_change
from engine.core.config import Settings
from engine.plans.gate import require
from engine.plans.identity import Identity
from engine.plans.store import ControlStore
from engine.table.store import TableStore
from engine.workload.boxes import format_predicate
from engine.workload.importer import import_log
from engine.workload.lint import lint_sql
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore

__all__ = ["import_workload", "workload_fragments", "show_workload", "workload_version",
           "clear_workload", "predicate_text", "lint_workload"]

SHOW_KEYS = ("query_id", "ts", "table", "columns", "boxes")


def import_workload(settings: Settings, table: str, path: str, dialect: str | None = None,
                    strict: bool = False, replace: bool = False,
                    append: bool = False) -> dict[str, Any]:
    """Import a ``.sql`` / ``.jsonl`` log for ``table``; the import report as a dict:
    ``{"table", "file", "statements", "fragments", "skipped": [{"line", "reason"}], "ignored"}``.
    Queries already imported are refused unless ``append`` or ``replace``."""
    report = import_log(settings, table, path, dialect=dialect, strict=strict,
                        replace=replace, append=append).to_dict()
    warm_after_change(settings, table)
    return report


def workload_fragments(settings: Settings, table: str) -> list[ScanFragment]:
    """The table's scan fragments, ordered by timestamp then import order."""
    return WorkloadStore(settings).fragments(table)


def show_workload(settings: Settings, table: str) -> list[dict[str, Any]]:
    """One JSON object per fragment: ``{"query_id", "ts", "table", "columns", "boxes"}``,
    boxes as ``[{COL: {"min", "max", "min_inclusive", "max_inclusive"}}]`` (open ends null,
    dates ISO); an empty ``boxes`` list means the fragment cannot be pruned."""
    store = WorkloadStore(settings)
    stored = store.schema(table)
    if stored is None:
        TableStore(settings).info(table)  # an unknown table is an error, not an empty list
        return []
    types = dict(stored.columns)
    out = []
    for frag in store.fragments(table):
        data = frag.to_json(types)
        out.append({k: data[k] for k in SHOW_KEYS})
    return out


def workload_version(settings: Settings, table: str) -> str:
    """A fingerprint that changes whenever the table's workload changes (for caches)."""
    return WorkloadStore(settings).version(table)


def clear_workload(settings: Settings, table: str, actor: "Identity | None" = None) -> None:
    """Forget every imported fragment of ``table``, as a signed-in admin (audited): the
    workload is what every plan is decided from."""
    control = ControlStore(settings)
    who = require(settings, actor, "workload-clear", control)
    WorkloadStore(settings).clear(table)
    control.record(who, "workload-clear", f"table {table}")


def predicate_text(boxes: Sequence[Mapping[str, Mapping[str, Any]]]) -> str:
    """One line for the ``boxes`` of a :func:`show_workload` row (values as shown there).

    Example:
    >>> predicate_text([{"l_shipdate": {"min": "1995-01-01", "max": None,
    ...                                 "min_inclusive": True, "max_inclusive": True}}])
    'l_shipdate >= 1995-01-01'
    """
    return format_predicate([{c: Range(b["min"], b["max"], b["min_inclusive"], b["max_inclusive"])
                              for c, b in box.items()} for box in boxes])


def lint_workload(settings: Settings, table: str) -> list[dict[str, Any]]:
    """The stored queries whose predicates cannot prune, one finding per predicate:
    ``{"query_id", "kind", "column", "predicate", "reason", "rewrite"}``, in log order
    (:mod:`engine.workload.lint`)."""
    schema = TableStore(settings).current_snapshot(table).schema
    by_query: dict[str, tuple[str, bool]] = {}
    for frag in WorkloadStore(settings).fragments(table):
        sql, ranged = by_query.get(frag.query_id, (frag.sql or "", False))
        by_query[frag.query_id] = (sql or frag.sql or "", ranged or bool(frag.predicated_columns))
    out = []
    for query_id, (sql, ranged) in by_query.items():
        if sql:
            out.extend(f.to_json() for f in lint_sql(sql, table, schema, query_id,
                                                     has_ranges=ranged))
    return out
