"""The approval gate: who may approve, what may run, staleness, audit, dead runners."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import (
    ApprovalError, AuthenticationError, PlanError, PlanNotFoundError, StalePlanError,
)
from engine.plans import approval
from engine.policy.base import PlanGroup
from engine.security import gate
from engine.table.store import TableStore
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, SECRET, ensure_account, secret_file, sign_in


@pytest.fixture
def table(settings):
    return make_table(settings, n=2000, rows_per_file=500)


@pytest.fixture
def alice(settings):
    return sign_in(settings, "alice")


@pytest.fixture
def bob(settings):
    return sign_in(settings, "bob")


def _plan(settings, snap, signed: bool = True) -> int:
    paths = tuple(p.path for p in snap.partitions[:2])
    return insert_plan(settings, snap, [PlanGroup(paths, "sort", ("l_shipdate",), "test")],
                       signed=signed)


def test_a_name_is_not_an_identity(settings, table):
    pid = _plan(settings, table, signed=False)
    with pytest.raises(ApprovalError, match="no approvers exist yet; create the first admin "
                                            "with `layout-advisor approvers add NAME --admin`"):
        api.reject_plan(settings, pid, "alice")
    ensure_account(settings, "alice")
    with pytest.raises(ApprovalError, match=r"'alice' is not signed in; sign in first"):
        api.approve_plan(settings, pid, "alice")  # a typed name grants nothing
    with pytest.raises(ApprovalError, match="an approver is required; sign in first"):
        api.approve_plan(settings, pid, None)
    forged = api.Identity(name="alice", role="admin", token="guessed")
    with pytest.raises(AuthenticationError, match="session of 'alice' has expired"):
        api.approve_plan(settings, pid, forged)
    assert api.show_plan(settings, pid).status == "proposed"


def test_unapproved_and_rejected_plans_refuse_to_run(settings, table, alice, bob):
    pid = _plan(settings, table)
    with pytest.raises(ApprovalError, match=f"plan {pid} is not approved; run "
                                            f"`layout-advisor plan approve {pid} --as NAME`"):
        api.run_plan(settings, pid, actor=alice)
    api.reject_plan(settings, pid, bob, reason="too expensive")
    with pytest.raises(ApprovalError, match=f"plan {pid} was rejected and cannot run"):
        api.run_plan(settings, pid, actor=alice)
    with pytest.raises(ApprovalError, match="only a proposed plan can be approved"):
        api.approve_plan(settings, pid, alice)
    assert TableStore(settings).current_id("lineitem") == table.id


def test_stale_plan_refuses_to_run_and_to_be_approved(settings, table, alice):
    store = TableStore(settings)
    proposed = _plan(settings, table)
    approved = _plan(settings, table)
    api.approve_plan(settings, approved, alice)
    store.rollback("lineitem", table.id)  # publishes snapshot 2: the base is no longer current
    shown = api.show_plan(settings, proposed)
    assert shown.status == "stale"
    stale_entry = shown.audit[-1]
    assert (stale_entry["actor"], stale_entry["action"], stale_entry["to_status"]) == (
        "system", "stale", "stale")
    assert "moved from snapshot 1 to 2" in stale_entry["reason"]
    with pytest.raises(StalePlanError, match="stale .*moved from snapshot 1 to 2.*create a new plan"):
        api.approve_plan(settings, proposed, alice)
    with pytest.raises(StalePlanError, match=f"plan {approved} is stale and cannot run"):
        api.run_plan(settings, approved, actor=alice)
    assert [p.status for p in api.list_plans(settings, "lineitem")] == ["stale", "stale"]
    # a plan made on the new snapshot is fine
    fresh = _plan(settings, store.current_snapshot("lineitem"))
    assert api.show_plan(settings, fresh).status == "proposed"


def test_audit_records_every_transition_with_who_when_why(settings, table, alice, bob):
    a = _plan(settings, table)
    b = _plan(settings, table)
    api.approve_plan(settings, a, alice, reason="saves 40% of scans")
    api.reject_plan(settings, b, bob, reason="wrong key")
    log_a = api.audit_log(settings, a)
    assert [(e["action"], e["actor"], e["from_status"], e["to_status"], e["reason"])
            for e in log_a] == [
        ("create", "tester", None, "proposed", "policy wair on snapshot 1"),
        ("approve", "alice", "proposed", "approved", "saves 40% of scans")]
    assert all(e["ts"] for e in log_a)
    everything = api.audit_log(settings)
    assert [e["plan_id"] for e in everything if e["plan_id"] is not None] == [a, b, a, b]
    admin = [(e["actor"], e["action"], e["reason"]) for e in everything if e["plan_id"] is None]
    assert admin == [(ROOT, "approver-add", f"{ROOT} as admin"), (ROOT, "sign-in", None),
                     (ROOT, "approver-add", "alice as approver"), ("alice", "sign-in", None),
                     (ROOT, "sign-in", None), (ROOT, "approver-add", "bob as approver"),
                     ("bob", "sign-in", None),
                     # the signed proposer of a, then of b (plan_helpers.insert_plan)
                     (ROOT, "sign-in", None), (ROOT, "approver-add", "tester as approver"),
                     ("tester", "sign-in", None), ("tester", "sign-in", None)]
    assert everything[-1]["reason"] == "wrong key"
    with pytest.raises(PlanNotFoundError):
        api.audit_log(settings, 999)


def test_approved_plan_may_be_revoked_but_not_run_twice(settings, table, alice, bob):
    pid = _plan(settings, table)
    api.approve_plan(settings, pid, alice)
    api.reject_plan(settings, pid, bob, reason="changed my mind")
    assert api.show_plan(settings, pid).status == "rejected"
    ws = Workspace(settings)
    other = _plan(settings, table)
    api.approve_plan(settings, other, alice)
    approval.start(ws, other, bob)
    with pytest.raises(PlanError, match="is running; only an approved plan can run"):
        approval.start(ws, other, bob)


_START_AND_DIE = """
import sys
from engine import api
from engine.core.config import load_settings
from engine.plans import approval
from engine.workspace import Workspace
settings = load_settings({"home": sys.argv[1]})
ws = Workspace(settings)
approval.start(ws, int(sys.argv[2]), api.authenticate(settings, "bob", sys.argv[3]))
ws.control.start_job(int(sys.argv[2]), 1)
# exits without finishing: a crashed runner
"""


def test_a_dead_runner_is_settled_as_failed(settings, table, alice, bob):
    pid = _plan(settings, table)
    api.approve_plan(settings, pid, alice)
    proc = subprocess.run([sys.executable, "-c", _START_AND_DIE, str(settings.home), str(pid),
                           SECRET],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed"
    assert "died before committing" in shown.result["error"]
    assert shown.audit[-1]["action"] == "settle"


def test_cli_gate_errors_are_one_line_exit_2(settings, table, capsys, monkeypatch, tmp_path):
    ensure_account(settings, "alice")
    monkeypatch.setenv("LAYOUT_ADVISOR_SECRET_FILE", secret_file(tmp_path))
    pid = _plan(settings, table)
    home = str(settings.home)
    assert main(["--home", home, "plan", "approve", str(pid), "--as", "mallory"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "wrong name or secret for 'mallory'" in err
    assert main(["--home", home, "plan", "run", str(pid), "--as", "alice"]) == 2
    assert "is not approved" in capsys.readouterr().err
    assert main(["--home", home, "plan", "approve", str(pid), "--as", "alice",
                 "--reason", "ok"]) == 0
    assert f"plan {pid} approved by alice" in capsys.readouterr().out
    assert main(["--home", home, "plan", "audit", str(pid), "--json"]) == 0
    import json

    entries = json.loads(capsys.readouterr().out)
    assert [e["action"] for e in entries] == ["create", "approve"]
    assert entries[-1]["actor"] == "alice"
    assert main(["--home", home, "plan", "list"]) == 0
    assert "approved" in capsys.readouterr().out
    assert main(["--home", home, "plan", "show", "42"]) == 2
    assert "no plan with id 42" in capsys.readouterr().err


def test_require_approver_is_the_one_rule_for_every_guarded_action(settings, alice):
    admin = sign_in(settings, "carol", admin=True)
    for action in ("approve", "reject", "run"):
        assert api.require_approver(settings, alice, action) == "alice"
    for action in ("rollback", "gc", "drop", "workload-clear", "approvers"):
        with pytest.raises(ApprovalError, match=f"'alice' is an approver; {action} needs an admin"):
            api.require_approver(settings, alice, action)
        assert api.require_approver(settings, admin, action) == "carol"
    with pytest.raises(ApprovalError, match="an approver is required"):
        api.require_approver(settings, None, "rollback")
    with pytest.raises(ValueError, match="unknown guarded action"):
        gate.require(Workspace(settings), alice, "format-disk")


def test_start_run_reports_a_refusal_from_its_thread(settings, table, alice):
    pid = _plan(settings, table)
    run = api.start_run(settings, pid, actor=alice)
    run.wait(120)
    assert run.done and run.result is None
    assert isinstance(run.error, ApprovalError) and "is not approved" in str(run.error)
    assert run.progress()["status"] == api.plan_progress(settings, pid)["status"] == "proposed"
