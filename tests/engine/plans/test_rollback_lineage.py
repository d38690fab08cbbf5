"""After a rollback, the plans it undid are those whose commit is no longer in the current
snapshot's lineage (its parent chain, through restoring commits), not those with a larger
snapshot id: Iceberg's ids are random, and a roll forward brings a later commit back.

The Iceberg case makes the ids run against the commits (each new snapshot id smaller than
the one before), so an order of ids would pick exactly the wrong plans."""

from __future__ import annotations

import itertools

import pytest

import format_tables
from crash_helpers import commit_copies
from engine.plans import approval
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from engine.workspace import Workspace
from format_tables import NAME
from plan_helpers import insert_plan

ROOT = "root"


@pytest.fixture
def falling_iceberg_ids(monkeypatch):
    """Every new Iceberg snapshot gets a smaller id than the one before."""
    from pyiceberg.table import metadata

    ids = itertools.count(9_000_000, -1_000)
    monkeypatch.setattr(metadata, "_generate_snapshot_id", lambda: next(ids))


def _run_by_hand(settings) -> tuple[int, str]:
    """A plan on the current snapshot, moved to running, committed (two files copied,
    through the format's commit), then marked succeeded as a run marks it."""
    store = TableStore(settings)
    snap = store.current_snapshot(NAME)
    pid = insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                                 ("l_shipdate",), "test")])
    book = Workspace(settings).plans
    book.move(pid, ("proposed",), "running", "alice", "run", "lineage test")
    done = commit_copies(str(settings.home), NAME)
    book.succeed(pid, {"snapshot_id": done.id})
    return pid, done.id


def _rollback(settings, to: str) -> None:
    """What ``table rollback`` does after the gate: the format's rollback, then the plans."""
    ws = Workspace(settings)
    snap = ws.tables.rollback(NAME, to, actor=ROOT)
    approval.undo_rolled_back(ws.plans, NAME, to, snap.id, ROOT)


def _statuses(settings, *pids: int) -> list[str]:
    book = Workspace(settings).plans
    return [book.get(p).status for p in pids]


@pytest.mark.parametrize("fmt", ["iceberg", "native", "delta"])
def test_rollback_and_roll_forward_follow_the_lineage(fmt, settings, tmp_path, request):
    if fmt == "iceberg":
        request.getfixturevalue("falling_iceberg_ids")
    base = format_tables.make(fmt, settings, tmp_path, n=40, per_file=10)
    first, first_snap = _run_by_hand(settings)
    second, second_snap = _run_by_hand(settings)
    if fmt == "iceberg":  # the ids run against the commits
        assert int(second_snap) < int(first_snap) < int(base.id)

    _rollback(settings, first_snap)  # undoes the second only
    assert _statuses(settings, first, second) == ["succeeded", "rolled-back"]

    _rollback(settings, second_snap)  # forward again
    assert _statuses(settings, first, second) == ["succeeded", "succeeded"]
    back = Workspace(settings).control.audit(second)[-1]
    assert (back["actor"], back["action"], back["from_status"], back["to_status"]) == (
        ROOT, "rollback", "rolled-back", "succeeded")

    _rollback(settings, base.id)  # before both
    assert _statuses(settings, first, second) == ["rolled-back", "rolled-back"]


def test_lineage_follows_restoring_commits(settings, tmp_path):
    """Delta's RESTORE and the native chain's rollback publish a new snapshot whose parent
    is the one rolled back from; its lineage continues at the restored one."""
    base = format_tables.make("delta", settings, tmp_path, n=20, per_file=10)  # versions 0, 1
    commit_copies(str(settings.home), NAME)  # version 2
    fmt = TableStore(settings).format(NAME)
    assert fmt.lineage() == ["2", "1", "0"]
    fmt.rollback(base.id)  # version 3 restores 1
    assert fmt.lineage() == ["3", "1", "0"]
