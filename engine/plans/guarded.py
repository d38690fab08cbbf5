"""Guarded changes to a table and its workload: roll back, clean up files, drop, forget the
workload. Each is done by a signed-in identity whose role allows it
(:func:`engine.security.gate.require`: the CLI and the dashboard share the rule) and audited in
the control store; a wrong table or snapshot is reported before the identity.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from engine.core.errors import InvalidParameterError
from engine.plans.approval import undo_rolled_back
from engine.security.gate import require
from engine.table.describe import parse_duration

if TYPE_CHECKING:
    from engine.security.identity import Identity
    from engine.table.model import Snapshot
    from engine.workspace import Workspace

__all__ = ["MIN_RETENTION", "rollback_table", "gc_table", "drop_table", "clear_workload"]

#: shortest gc retention without ``force_retention`` (Delta VACUUM's default)
MIN_RETENTION = dt.timedelta(days=7)


def rollback_table(ws: "Workspace", name: str, to_snapshot: str,
                   actor: "Identity | None" = None) -> "Snapshot":
    """Publish a new snapshot equal to ``to_snapshot`` (nothing is deleted), as a signed-in
    admin (:func:`engine.security.gate.require`: the CLI and the dashboard share the rule);
    audited. A wrong table or snapshot is reported before the identity."""
    store = ws.tables
    store.snapshot(name, str(to_snapshot))
    control = ws.control
    who = require(ws, actor, "rollback")
    snap = store.rollback(name, str(to_snapshot), actor=who)
    control.record(who, "rollback", f"table {name}: snapshot {snap.parent} -> {snap.id} "
                                    f"(equal to {to_snapshot})")
    undo_rolled_back(ws.plans, name, str(to_snapshot), snap.id, who)
    return snap


def gc_table(ws: "Workspace", name: str, older_than: str | dt.timedelta = "7d",
             dry_run: bool = True, actor: "Identity | None" = None,
             force_retention: bool = False) -> list[str]:
    """The data files no retained snapshot references: listed (``dry_run``, the default,
    needs no sign-in) or deleted by a signed-in admin, audited.

    A retention below :data:`MIN_RETENTION` (7 days, as Delta's VACUUM) is refused unless
    ``force_retention``: a shorter one can delete the files of a run still committing or of
    a snapshot someone may want to roll back to.
    """
    keep = parse_duration(older_than)
    if keep < MIN_RETENTION and not force_retention:
        raise InvalidParameterError(
            f"--older-than {older_than} is below the minimum retention of "
            f"{MIN_RETENTION.days} days; add --force-retention to go below it")
    store = ws.tables
    if dry_run:
        return store.gc(name, keep, dry_run=True)
    control = ws.control
    who = require(ws, actor, "gc")
    deleted = store.gc(name, keep, dry_run=False)
    control.record(who, "gc", f"table {name}: deleted {len(deleted)} file(s) not referenced "
                              f"by snapshots of the last {keep}")
    return deleted


def drop_table(ws: "Workspace", name: str, actor: "Identity | None" = None) -> None:
    """Forget a table, as a signed-in admin (audited); a managed table's data goes too, a
    registered table's files stay."""
    store = ws.tables
    store.info(name)  # an unknown table is reported before the identity
    control = ws.control
    who = require(ws, actor, "drop")
    store.drop(name)
    control.record(who, "drop", f"table {name}")


def clear_workload(ws: "Workspace", table: str, actor: "Identity | None" = None) -> None:
    """Forget every imported fragment of ``table``, as a signed-in admin (audited): the
    workload is what every plan is decided from."""
    control = ws.control
    who = require(ws, actor, "workload-clear")
    ws.workloads.clear(table)
    control.record(who, "workload-clear", f"table {table}")
