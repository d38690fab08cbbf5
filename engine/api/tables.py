"""Tables: create, register, inspect, roll back and clean up tables, and the demo's table.

Everything returned is JSON-friendly (:mod:`engine.table.describe`), except
:func:`load_snapshot` (the engine's :class:`Snapshot`) and the ``*_table`` commands that
publish one. Spark is started only by the commands that read data. A rollback announces
``rollback`` on the workspace (its subscribers store the new snapshot's summaries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from engine.api.results import TableView
from engine.plans import guarded, state
from engine.plans.guarded import MIN_RETENTION
from engine.spark import demo, ingest
from engine.scenarios.demo_log import DEMO_LOG_QUERIES, DEMO_QUERIES_PER_DAY
from engine.spark.demo import DEMO_SCALE, DEMO_WRITERS, make_demo_data, start_spark_early
from engine.scenarios.demo_table import large_file_shape, source_rows
from engine.table import describe, files
from engine.table.describe import parse_duration
from engine.table.files import files_bytes
from engine.workspace import as_workspace, on_settings, on_workspace

if TYPE_CHECKING:
    from engine.security.identity import Identity
    from engine.table.model import Snapshot
    from engine.workspace import Workspace

__all__ = [
    "create_table", "register_table", "append_table", "list_tables", "show_table",
    "table_snapshots", "rollback_table", "gc_table", "drop_table", "load_snapshot",
    "table_info", "parse_duration", "DEMO_TARGET_ROWS", "MIN_RETENTION", "register_iceberg",
    "register_delta", "adopt_iceberg", "table_files", "files_bytes", "rollback_targets",
    "DEMO_SCALE", "DEMO_WRITERS", "DEMO_LOG_QUERIES", "DEMO_QUERIES_PER_DAY",
    "create_demo_table", "make_demo_data", "start_spark_early", "large_file_shape", "source_rows",
    "rollback_and_reset",
]

DEMO_TARGET_ROWS = ingest.DEMO_TARGET_ROWS
make_demo_data = on_settings(make_demo_data)
start_spark_early = on_settings(start_spark_early)


def _on_tables(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(table_store, ...)`` as a function of a workspace (or settings)."""
    def call(ws: "Workspace", *args: Any, **kwargs: Any) -> Any:
        return fn(as_workspace(ws).tables, *args, **kwargs)
    call.__name__, call.__doc__, call.__wrapped__ = fn.__name__, fn.__doc__, fn  # type: ignore[attr-defined]
    return call


create_table = _on_tables(ingest.create_table)
register_table = _on_tables(ingest.register_table)
register_iceberg = _on_tables(ingest.register_iceberg)
adopt_iceberg = _on_tables(ingest.adopt_iceberg)
append_table = _on_tables(ingest.append_batch)
create_demo_table = _on_tables(demo.create_demo_table)
list_tables = _on_tables(describe.list_tables)
show_table = _on_tables(describe.show_table)
table_snapshots = _on_tables(describe.table_snapshots)
load_snapshot = _on_tables(describe.load_snapshot)
table_files = _on_tables(describe.table_files)
rollback_targets = _on_tables(files.rollback_targets)
gc_table = on_workspace(guarded.gc_table)
drop_table = on_workspace(guarded.drop_table)


def table_info(ws: "Workspace", name: str) -> TableView:
    """Where the table lives, how plans treat it and its current size
    (:func:`engine.table.describe.table_info`)."""
    return TableView(**describe.table_info(as_workspace(ws).tables, name))


def register_delta(ws: "Workspace", name: str, path: str) -> "Snapshot":
    """Register the Delta table at ``path`` (partitioned tables included: plans are split
    by partition and new files carry their partition values); rewrites are committed to
    its log in place."""
    return as_workspace(ws).tables.register_delta(name, path)


def rollback_table(ws: "Workspace", name: str, to_snapshot: str,
                   actor: "Identity | None" = None) -> "Snapshot":
    """Publish a new snapshot equal to ``to_snapshot`` (nothing is deleted), as a signed-in
    admin, audited (:func:`engine.plans.guarded.rollback_table`)."""
    ws = as_workspace(ws)
    snap = guarded.rollback_table(ws, name, to_snapshot, actor)
    ws.emit("rollback", name)
    return snap


def rollback_and_reset(ws: "Workspace", table: str, to_snapshot: str,
                       actor: "Identity | None") -> dict[str, Any]:
    """Roll back, then reset WAIR's state if it is newer than ``to_snapshot``
    (:func:`engine.plans.state.rollback_and_reset`): ``{"snapshot", "state_reset"}``."""
    ws = as_workspace(ws)
    out = state.rollback_and_reset(ws, table, to_snapshot, actor)
    ws.emit("rollback", table)
    return out
