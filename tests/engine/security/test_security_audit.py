"""The tamper-evident control store: a hash-chained audit log that
`audit verify` checks, plans whose status was set behind the store's back, and a missing,
replaced or damaged control.db reported instead of silently recreated."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import ControlStoreError
from engine.security.audit import AuditLog
from engine.policy.base import PlanGroup
from engine.security.chain import GENESIS_HASH, entry_hash
from engine.security.db import ControlDB
from engine.table.store import TableStore
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, sign_in


def _raw(settings) -> sqlite3.Connection:
    return sqlite3.connect(settings.control_db, isolation_level=None)


def _drop_triggers(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("DROP TRIGGER audit_no_delete")


@pytest.fixture
def decided(settings):
    """A table and three plans: approved, rejected, proposed (8 plan and admin entries)."""
    snap = make_table(settings, n=1000, rows_per_file=250)
    paths = tuple(p.path for p in snap.partitions[:2])
    pids = [insert_plan(settings, snap, [PlanGroup(paths, "sort", ("l_shipdate",), "t")])
            for _ in range(3)]
    alice = sign_in(settings, "alice")
    api.reject_plan(settings, pids[1], alice, reason="no")
    api.approve_plan(settings, pids[0], alice, reason="fine")
    return pids


def test_every_entry_carries_the_hash_of_the_previous(settings, decided):
    entries = api.audit_log(settings)
    assert entries[0]["prev_hash"] == GENESIS_HASH
    for before, entry in zip(entries, entries[1:]):
        assert entry["prev_hash"] == before["hash"]
        assert entry["hash"] == entry_hash(before["hash"], entry)
    report = api.verify_audit(settings)
    assert report == {"ok": True, "entries": len(entries), "head": entries[-1]["hash"],
                      "root": report["root"], "problems": []}
    assert len(report["root"]) == 64  # the root admin's key fingerprint


@pytest.mark.parametrize("tamper,needle", [
    ("UPDATE audit SET actor = 'mallory' WHERE action = 'approve'",
     r"audit entry \d+: its content was edited \(action 'approve' by 'mallory'\)"),
    ("DELETE FROM audit WHERE action = 'reject'",
     r"audit entry \d+: does not follow the entry before it"),
    ("DELETE FROM audit WHERE id = (SELECT max(id) FROM audit)",
     r"audit entries \d+\.\.\d+ were deleted from the end of the log"),
    ("UPDATE audit SET reason = 'saves money' WHERE action = 'approve'",
     r"its content was edited"),
], ids=["edit-actor", "delete-middle", "delete-last", "edit-reason"])
def test_verify_detects_edits_and_deletions_after_the_triggers_are_dropped(
        settings, decided, capsys, tamper, needle):
    home = str(settings.home)
    assert main(["--home", home, "audit", "verify"]) == 0
    assert "audit log intact" in capsys.readouterr().out
    with _raw(settings) as conn:
        _drop_triggers(conn)
        conn.execute(tamper)
    Workspace(settings).control  # the next call recreates the triggers ...
    report = api.verify_audit(settings)  # ... but the damage is found
    assert not report["ok"]
    assert any(re.search(needle, p) for p in report["problems"]), report
    assert main(["--home", home, "audit", "verify"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("audit log damaged:")


def test_a_plan_status_set_in_sqlite_is_reported(settings, decided, capsys):
    with _raw(settings) as conn:
        conn.execute("UPDATE plans SET status = 'approved' WHERE id = ?", (decided[2],))
    report = api.verify_audit(settings)
    assert report["problems"] == [
        f"plan {decided[2]}: status 'approved' was set without an audit entry (the log last "
        "moved it to 'proposed')",
        f"plan {decided[2]} is approved but carries 0 valid approval signature(s) of the 1 "
        "it needs"]
    assert main(["--home", str(settings.home), "audit", "verify", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_a_store_made_before_the_chain_is_chained_once(settings, tmp_path):
    legacy = tmp_path / "legacy.db"
    with sqlite3.connect(legacy) as conn:
        conn.executescript("""
            CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, plan_id INTEGER,
              ts TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, from_status TEXT,
              to_status TEXT, reason TEXT);
            INSERT INTO audit(plan_id, ts, actor, action, to_status)
              VALUES (NULL, 't1', 'root', 'note', NULL), (NULL, 't2', 'root', 'note', NULL);
        """)
    log = AuditLog(ControlDB(legacy))
    entries = log.entries()
    assert [e["prev_hash"] for e in entries] == [GENESIS_HASH, entries[0]["hash"]]
    assert log.verify()["ok"]
    with pytest.raises(sqlite3.DatabaseError, match="append-only"), sqlite3.connect(legacy) as c:
        c.execute("UPDATE audit SET actor = 'x'")


def _recluster(settings, snap, plan_id: int):
    """Publish a snapshot as a plan run would (operation recluster, summary plan_id)."""
    store = TableStore(settings)
    first = snap.partitions[0]
    return store.commit(snap.table, snap.id, [first.path], [first], "recluster",
                        {"plan_id": plan_id})


def test_a_missing_control_store_beside_reclustered_tables_is_an_error(settings, capsys):
    snap = make_table(settings, n=1000, rows_per_file=250)
    pid = insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                                  ("l_shipdate",), "t")])
    _recluster(settings, snap, pid)
    settings.control_db.unlink()
    for suffix in ("-wal", "-shm"):
        settings.control_db.with_name("control.db" + suffix).unlink(missing_ok=True)
    with pytest.raises(ControlStoreError, match=r"control.db is missing, but table\(s\) "
                                                r"lineitem carry reclustered snapshots"):
        Workspace(settings).control
    assert not settings.control_db.exists()  # nothing was created
    assert main(["--home", str(settings.home), "plan", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "restore control.db from a backup" in err
    # reads that do not need the control store keep working
    assert main(["--home", str(settings.home), "table", "list"]) == 0


def test_a_replaced_control_store_is_found_by_verify(settings, tmp_path):
    snap = make_table(settings, n=1000, rows_per_file=250)
    pristine = tmp_path / "fresh.db"
    ControlDB(pristine)  # an empty store made elsewhere
    pid = insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                                  ("l_shipdate",), "t")])
    new = _recluster(settings, snap, pid)
    shutil.copy(pristine, settings.control_db)
    for suffix in ("-wal", "-shm"):
        settings.control_db.with_name("control.db" + suffix).unlink(missing_ok=True)
    report = api.verify_audit(settings)
    assert report["problems"] == [
        f"table lineitem snapshot {new.id} was written by plan {pid}, which this control "
        f"store does not know: {settings.control_db} was replaced"]


def test_a_damaged_control_store_is_one_line(settings, capsys):
    settings.home.mkdir(parents=True)
    settings.control_db.write_bytes(b"this is not a database, just bytes" * 100)
    assert main(["--home", str(settings.home), "plan", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"control store {settings.control_db} cannot be used (file is not a database)" in err


def test_admin_actions_are_in_the_chain(settings):
    root = sign_in(settings, ROOT)
    api.add_approver(settings, "bob", "bob's long secret", actor=root)
    api.remove_approver(settings, "bob", root)
    actions = [(e["actor"], e["action"], e["reason"]) for e in api.audit_log(settings)]
    assert actions[-2:] == [(ROOT, "approver-add", "bob as approver"),
                            (ROOT, "approver-remove", "bob")]
    assert api.verify_audit(settings)["ok"]
