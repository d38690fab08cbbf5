"""Workload: import a query log, read it back, lint it, forget it.

An import announces ``import`` on the workspace (its subscribers store the dashboard's
summaries of the new workload version); clearing a workload is a guarded change
(:mod:`engine.plans.guarded`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.plans import guarded
from engine.spark import tpcds_data
from engine.spark.tpcds_data import TPCDS_TABLES
from engine.workload import describe
from engine.workload.describe import predicate_text, source_text
from engine.workload.importer import ReadLimits, import_log
from engine.workload.lookup import DimensionLookups
from engine.workspace import as_workspace, on_settings, on_workspace

if TYPE_CHECKING:
    from engine.workload.model import ScanFragment
    from engine.workload.store import DistinctFragments
    from engine.workspace import Workspace

__all__ = ["import_workload", "workload_fragments", "workload_distinct", "show_workload",
           "workload_version",
           "clear_workload", "predicate_text", "source_text", "lint_workload",
           "dimension_lookups", "make_tpcds_demo_data", "TPCDS_TABLES"]


def import_workload(ws: "Workspace", table: str, path: str, dialect: str | None = None,
                    strict: bool = False, replace: bool = False,
                    append: bool = False) -> dict[str, Any]:
    """Import a ``.sql`` / ``.jsonl`` log for ``table``; the import report as a dict:
    ``{"table", "file", "statements", "fragments", "skipped": [{"line", "reason"}], "ignored",
    "skipped_count", "skip_reasons": {reason: statements}}`` (``skipped`` lists the first
    1000). Queries already imported are refused unless ``append`` or ``replace``. Lines and
    statements are bounded by the settings ``workload_max_line_bytes`` and
    ``workload_max_statement_chars``."""
    ws = as_workspace(ws)
    limits = ReadLimits(ws.settings.workload_max_line_bytes,
                        ws.settings.workload_max_statement_chars)
    report = import_log(ws.tables, ws.workloads, table, path, dialect=dialect, strict=strict,
                        replace=replace, append=append, limits=limits,
                        lookups=dimension_lookups(ws)).to_dict()
    ws.emit("import", table)
    return report


def dimension_lookups(ws: "Workspace") -> DimensionLookups:
    """The lookups an import evaluates dimension filters with: the registered tables read
    by :attr:`Workspace.dimensions`, at most ``lookup_max_ranges`` ranges per lookup, cached
    per dimension snapshot for the workspace's lifetime (:mod:`engine.workload.lookup`)."""
    ws = as_workspace(ws)
    return DimensionLookups(ws.dimensions, ws.settings.lookup_max_ranges,
                            ws.cache("dimension-lookups", dict))


def workload_fragments(ws: "Workspace", table: str) -> "list[ScanFragment]":
    """The table's scan fragments, ordered by timestamp then import order."""
    return as_workspace(ws).workloads.fragments(table)


def workload_distinct(ws: "Workspace", table: str) -> "DistinctFragments":
    """The distinct statements of :func:`workload_fragments` with how often each was logged
    (:class:`engine.workload.store.DistinctFragments`: ``fragments``, ``counts``,
    ``of_query``), decoded with them once per workload version: what depends only on the
    statement is computed over its few thousand rows, not the log's tens of thousands."""
    return as_workspace(ws).workloads.distinct(table)


def show_workload(ws: "Workspace", table: str) -> list[dict[str, Any]]:
    """One JSON object per fragment (:func:`engine.workload.describe.show_workload`)."""
    ws = as_workspace(ws)
    return describe.show_workload(ws.workloads, ws.tables, table)


def workload_version(ws: "Workspace", table: str) -> str:
    """A fingerprint that changes whenever the table's workload changes (for caches)."""
    return as_workspace(ws).workloads.version(table)


def lint_workload(ws: "Workspace", table: str) -> list[dict[str, Any]]:
    """The stored queries whose predicates cannot prune
    (:func:`engine.workload.describe.lint_workload`)."""
    ws = as_workspace(ws)
    return describe.lint_workload(ws.workloads, ws.tables, table)


clear_workload = on_workspace(guarded.clear_workload)
#: TPC-DS store_sales, date_dim and item (tpcgen-cli) and a star-query log over them
make_tpcds_demo_data = on_settings(tpcds_data.make_tpcds_demo_data)
