"""The control store: WAL mode, append-only audit, atomic transitions, two processes at once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from engine.plans.store import ControlStore
from engine.core.errors import ApprovalError, PlanNotFoundError
from engine.workspace import Workspace


def _store(settings) -> ControlStore:
    return Workspace(settings).control


def test_schema_is_wal_and_plan_roundtrips(settings):
    store = _store(settings)
    conn = sqlite3.connect(settings.control_db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    pid = store.insert_plan("t", "snap-1", "wair", {"alpha": 0.5}, {"groups": []}, "carol")
    row = store.get_plan(pid)
    assert (row.table, row.base_snapshot, row.policy, row.status) == ("t", "snap-1", "wair",
                                                                       "proposed")
    assert row.params == {"alpha": 0.5} and row.created_by == "carol"
    assert [r.id for r in store.list_plans("t")] == [pid]
    assert store.list_plans("other") == []
    entries = store.audit(pid)
    assert [(e["action"], e["actor"], e["from_status"], e["to_status"]) for e in entries] == [
        ("create", "carol", None, "proposed")]
    with pytest.raises(PlanNotFoundError, match="no plan with id 999"):
        store.get_plan(999)


def test_transition_checks_the_from_state_and_audits(settings):
    store = _store(settings)
    pid = store.insert_plan("t", "s", "dd", {}, {}, None)
    store.transition(pid, ("proposed",), "approved", "alice", "approve", "looks good")
    with pytest.raises(ApprovalError, match="plan .* is approved; approve needs it to be proposed"):
        store.transition(pid, ("proposed",), "approved", "bob", "approve")
    store.transition(pid, ("approved",), "running", "alice", "run", result=None)
    store.transition(pid, ("running",), "succeeded", "system", "succeed", result={"rows": 3})
    assert store.get_plan(pid).result == {"rows": 3}
    log = store.audit(pid)
    assert [(e["from_status"], e["to_status"]) for e in log] == [
        (None, "proposed"), ("proposed", "approved"), ("approved", "running"),
        ("running", "succeeded")]
    assert log[1]["reason"] == "looks good" and log[1]["actor"] == "alice"
    assert all(log[i]["ts"] <= log[i + 1]["ts"] for i in range(len(log) - 1))


def test_audit_log_is_append_only_even_through_raw_sql(settings):
    store = _store(settings)
    store.insert_plan("t", "s", "dd", {}, {}, "alice")
    conn = sqlite3.connect(settings.control_db)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE audit SET actor = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM audit")
    conn.close()
    assert store.audit()[0]["actor"] == "alice"


def test_progress_and_policy_state(settings):
    store = _store(settings)
    pid = store.insert_plan("t", "s", "wair", {}, {}, None)
    assert store.progress(pid) is None
    store.start_job(pid, groups_total=3)
    store.set_progress(pid, 1, 3, rows=100, bytes_=2048, message="group 1 of 3")
    prog = store.progress(pid)
    assert (prog["groups_done"], prog["groups_total"], prog["rows"], prog["bytes"]) == (
        1, 3, 100, 2048)
    assert store.policy_state("t", "wair") is None
    store.save_policy_state("t", "wair", {"credit": 1.5, "window": 8})
    store.save_policy_state("t", "wair", {"credit": 2.5, "window": 16})
    assert store.policy_state("t", "wair") == {"credit": 2.5, "window": 16}
    assert store.policy_state("t", "dd") is None


_HAMMER = """
import json, sys
from engine.plans.store import ControlStore
from engine.core.errors import ApprovalError
from engine.security.audit import AuditLog
from engine.security.db import ControlDB
db, worker, n, plan_id = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
control_db = ControlDB(db)
store = ControlStore(control_db, AuditLog(control_db))
created, won = [], 0
for i in range(n):
    created.append(store.insert_plan(f"t{worker}", f"s{i}", "wair", {"i": i}, {}, f"w{worker}"))
    store.save_policy_state("t", "wair", {"by": worker, "i": i})
    try:
        store.transition(plan_id, ("proposed",), "approved", f"w{worker}", "approve")
        won += 1
    except ApprovalError:
        pass
print(json.dumps({"created": created, "won": won}))
"""


def test_two_processes_write_at_once_without_losing_anything(settings):
    """Two OS processes (plain subprocesses: no fork of a JVM-holding test process, no
    re-run of __main__) hammer the same database at once."""
    store = _store(settings)
    contested = store.insert_plan("t", "s", "wair", {}, {}, None)
    procs = [subprocess.Popen([sys.executable, "-c", _HAMMER, str(settings.control_db), str(w),
                               "40", str(contested)], stdout=subprocess.PIPE, text=True)
             for w in (1, 2)]
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=180)
        assert p.returncode == 0
        results.append(json.loads(out))
    ids = [i for r in results for i in r["created"]]
    assert len(ids) == len(set(ids)) == 80
    # exactly one process won the contested approval: the check-and-set is atomic
    assert sum(r["won"] for r in results) == 1
    approvals = [e for e in store.audit(contested) if e["action"] == "approve"]
    assert len(approvals) == 1
    assert len(store.list_plans()) == 81
    assert len(store.audit()) == 81 + 1
