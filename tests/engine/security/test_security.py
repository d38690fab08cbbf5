"""Identities and approvals: Argon2id secrets, sessions, roles, separation of
duties, dual approval, the growing delay, and the CLI that reads secrets safely."""

from __future__ import annotations

import io
import sqlite3
import time

import pytest

from engine import api
from engine.cli import main
from engine.core.config import replace
from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.policy.base import PlanGroup
from engine.security import identity
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, SECRET, ensure_account, secret_file, sign_in


@pytest.fixture
def table(settings):
    return make_table(settings, n=2000, rows_per_file=500)


def _plan(settings, snap, created_by="tester") -> int:
    paths = tuple(p.path for p in snap.partitions[:2])
    return insert_plan(settings, snap, [PlanGroup(paths, "sort", ("l_shipdate",), "test")],
                       created_by=created_by)


def test_secrets_are_stored_as_argon2id_hashes_only(settings):
    api.add_approver(settings, "ada", SECRET, admin=True)
    with sqlite3.connect(settings.control_db) as conn:
        stored = conn.execute("SELECT secret_hash FROM approvers WHERE name = 'ada'").fetchone()[0]
        dump = "\n".join(conn.iterdump())
    assert stored.startswith("$argon2id$v=19$")
    assert SECRET not in dump
    assert api.list_approvers(settings)[0].keys() == {"name", "role", "created_at",
                                                      "created_by", "updated_at"}


def test_first_admin_only_while_none_exists_then_admins_manage(settings):
    with pytest.raises(ApprovalError, match="no admin exists yet; create the first one"):
        api.add_approver(settings, "alice", SECRET)
    api.add_approver(settings, ROOT, SECRET, admin=True)
    with pytest.raises(ApprovalError, match="an admin exists already"):
        api.add_approver(settings, "mallory", SECRET, admin=True)
    alice = sign_in(settings, "alice")
    with pytest.raises(ApprovalError, match="'alice' is an approver; approvers needs an admin"):
        api.add_approver(settings, "mallory", SECRET, actor=alice)
    root = api.authenticate(settings, ROOT, SECRET)
    with pytest.raises(ApprovalError, match="'root' is the last admin"):
        api.remove_approver(settings, ROOT, root)
    api.remove_approver(settings, "alice", root)
    assert [a["name"] for a in api.list_approvers(settings)] == [ROOT]
    with pytest.raises(AuthenticationError, match="no longer an approver|expired"):
        api.check_session(settings, alice)  # removal ends the sessions at once
    with pytest.raises(InvalidParameterError, match="at least 8 characters"):
        api.add_approver(settings, "bob", "short", actor=root)


def test_a_failed_sign_in_refuses_the_next_attempt_until_its_delay_passed(settings):
    settings = replace(settings, auth_delay_s=0.3)
    ensure_account(settings, "alice")
    with pytest.raises(AuthenticationError, match="wrong name or secret for 'alice'"):
        api.authenticate(settings, "alice", "not the secret")
    # another process (a fresh workspace object) sees the failure: even the right secret is
    # refused, unchecked, with the time to retry at; nothing slept in the failing process
    with pytest.raises(AuthenticationError, match=r"'alice' has 1 failed sign-in\(s\) in a "
                                                  r"row: the next attempt is accepted from "
                                                  r"\d\d:\d\d:\d\d UTC \(in 0\.\d s\)"):
        api.authenticate(Workspace(settings), "alice", SECRET)
    time.sleep(0.35)
    with pytest.raises(AuthenticationError, match="wrong name or secret for 'alice'"):
        api.authenticate(settings, "alice", "not the secret")
    with pytest.raises(AuthenticationError, match=r"2 failed sign-in\(s\).*\(in 0\.[3-6] s\)"):
        api.authenticate(settings, "alice", SECRET)  # the delay doubled: 0.6 s
    time.sleep(0.65)
    failed = [e for e in api.audit_log(settings) if e["action"] == "sign-in-failed"]
    assert [(e["actor"], e["reason"]) for e in failed] == [("alice", "wrong name or secret")] * 2
    api.authenticate(settings, "alice", SECRET)  # a success resets the count
    assert Workspace(settings).security.audit.failures_since_sign_in("alice", 3600) == 0
    with pytest.raises(AuthenticationError, match="wrong name or secret for 'nobody'"):
        api.authenticate(settings, "nobody", SECRET)  # same answer for unknown names


def test_the_environment_cannot_loosen_the_stored_policy(settings, monkeypatch):
    """LAYOUT_ADVISOR_AUTH_DELAY_S=0 (or any loosening) in the acting process changes
    nothing: the admin's stored delay applies."""
    root = sign_in(settings, ROOT)
    ensure_account(settings, "alice")
    api.set_security_policy(settings, {"auth_delay_s": 5.0}, root)
    monkeypatch.setenv("LAYOUT_ADVISOR_AUTH_DELAY_S", "0")
    monkeypatch.setenv("LAYOUT_ADVISOR_SEPARATION_OF_DUTIES", "false")
    monkeypatch.setenv("LAYOUT_ADVISOR_DUAL_APPROVAL_BYTES", "0")
    ws = api.open_workspace(settings.home)
    assert api.security_policy(ws)["effective"] == {
        "separation_of_duties": True, "dual_approval_bytes": 100 * 1024**3,
        "dual_approval_cpu_seconds": 0.0, "auth_delay_s": 5.0}
    with pytest.raises(AuthenticationError, match="wrong name or secret"):
        api.authenticate(ws, "alice", "not the secret")
    with pytest.raises(AuthenticationError, match=r"next attempt is accepted from .* \(in [45]\.\d s\)"):
        api.authenticate(ws, "alice", SECRET)


def test_sessions_expire_after_inactivity(settings, table):
    short = replace(settings, session_idle_s=0.3)
    alice = sign_in(short, "alice")
    assert api.check_session(short, alice) == "alice"
    time.sleep(0.5)
    with pytest.raises(AuthenticationError, match="session of 'alice' has expired"):
        api.approve_plan(short, _plan(short, table), alice)
    api.sign_out(settings, sign_in(settings, "bob"))


def test_the_proposer_cannot_approve_unless_separation_is_off(settings, table):
    alice = sign_in(settings, "alice")
    pid = _plan(settings, table, created_by="alice")
    with pytest.raises(ApprovalError, match=r"'alice' proposed plan \d+ and cannot approve it \(separation of duties\)"):
        api.approve_plan(settings, pid, alice)
    assert api.show_plan(settings, pid).status == "proposed"
    # the acting process cannot switch it off: only an admin's stored policy can
    relaxed = replace(settings, separation_of_duties=False, dual_approval_bytes=0)
    with pytest.raises(ApprovalError, match="separation of duties"):
        api.approve_plan(relaxed, pid, alice)
    api.set_security_policy(settings, {"separation_of_duties": False}, sign_in(settings, ROOT))
    assert api.approve_plan(settings, pid, alice).status == "approved"
    audit = api.audit_log(settings)
    assert [(e["actor"], e["action"]) for e in audit if e["action"] == "policy-set"] == [
        (ROOT, "policy-set")]
    # a process may still tighten it
    other = _plan(settings, table, created_by="alice")
    strict = replace(settings, separation_of_duties=True)
    with pytest.raises(ApprovalError, match="separation of duties"):
        api.approve_plan(strict, other, alice)


def test_big_plans_need_two_distinct_approvers(settings, table):
    strict = replace(settings, dual_approval_bytes=1)  # every plan is "big"
    alice, bob = sign_in(strict, "alice"), sign_in(strict, "bob")
    pid = _plan(strict, table)
    first = api.approve_plan(strict, pid, alice, reason="looks right")
    assert first.status == "proposed"
    with pytest.raises(ApprovalError, match="'alice' has approved plan .* already"):
        api.approve_plan(strict, pid, alice)
    with pytest.raises(ApprovalError, match="is not approved"):
        api.run_plan(strict, pid, actor=alice)
    assert api.approve_plan(strict, pid, bob).status == "approved"
    entries = [(e["actor"], e["action"], e["to_status"], e["reason"])
               for e in api.audit_log(strict, pid)]
    assert entries[1:] == [("alice", "approve", "proposed", "approval 1 of 2: looks right"),
                           ("bob", "approve", "approved", None)]
    # below the threshold one approval is enough
    small = _plan(settings, table)
    assert api.approve_plan(settings, small, alice).status == "approved"


def test_a_status_set_behind_the_store_cannot_run(settings, table):
    alice = sign_in(settings, "alice")
    pid = _plan(settings, table)
    with sqlite3.connect(settings.control_db) as conn:
        conn.execute("UPDATE plans SET status = 'approved' WHERE id = ?", (pid,))
    with pytest.raises(ApprovalError, match="marked approved but its audit trail has no approval"):
        api.run_plan(settings, pid, actor=alice)


def test_failure_delay_doubles_and_is_capped():
    assert [identity.failure_delay(n, 0.5) for n in (0, 1, 2, 3)] == [0.0, 0.5, 1.0, 2.0]
    assert identity.failure_delay(50, 1.0) == identity.MAX_DELAY_S


# -- the command line --------------------------------------------------------------------
def test_cli_bootstrap_admin_from_stdin_then_approver_with_secret_file(settings, tmp_path,
                                                                      capsys, monkeypatch):
    home = str(settings.home)
    monkeypatch.setattr("sys.stdin", io.StringIO(SECRET + "\n"))
    assert main(["--home", home, "approvers", "add", "ada", "--admin"]) == 0
    assert capsys.readouterr().out.strip() == "added admin ada"
    monkeypatch.setattr("sys.stdin", io.StringIO("another secret 123\n"))
    assert main(["--home", home, "approvers", "add", "ben", "--as", "ada",
                 "--secret-file", secret_file(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "added approver ben"
    assert main(["--home", home, "approvers", "list"]) == 0
    listed = capsys.readouterr().out
    assert "ada" in listed and "ben" in listed and SECRET not in listed
    api.authenticate(settings, "ben", "another secret 123")
    # without a terminal and without a file there is no secret: one line, exit 2
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["--home", home, "approvers", "remove", "ben", "--as", "ada"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no secret for 'ada'" in err and "--secret-file" in err


def test_cli_wrong_secret_is_exit_2_audited_and_not_echoed(settings, tmp_path, capsys):
    ensure_account(settings, "alice")
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("guess-guess-guess\n")
    code = main(["--home", str(settings.home), "approvers", "passwd", "alice", "--as", "alice",
                 "--secret-file", str(wrong)])
    captured = capsys.readouterr()
    assert code == 2
    assert "wrong name or secret for 'alice'" in captured.err
    assert "guess-guess-guess" not in captured.err + captured.out
    assert api.audit_log(settings)[-1]["action"] == "sign-in-failed"


def test_cli_secret_is_never_an_argument():
    with pytest.raises(SystemExit) as exc:
        main(["plan", "approve", "1", "--as", "alice", "--secret", SECRET])
    assert exc.value.code == 2


def test_cli_passwd_changes_the_secret_and_ends_sessions(settings, tmp_path, capsys, monkeypatch):
    alice = sign_in(settings, "alice")
    monkeypatch.setattr("sys.stdin", io.StringIO("a brand new secret\n"))
    assert main(["--home", str(settings.home), "approvers", "passwd", "alice", "--as", "alice",
                 "--secret-file", secret_file(tmp_path)]) == 0
    assert "secret of alice changed" in capsys.readouterr().out
    with pytest.raises(AuthenticationError):
        api.check_session(settings, alice)
    api.authenticate(settings, "alice", "a brand new secret")
    with pytest.raises(AuthenticationError):
        api.authenticate(settings, "alice", SECRET)


def test_environment_no_longer_makes_approvers(settings, table, tmp_path, capsys, monkeypatch):
    pid = _plan(settings, table)
    monkeypatch.setenv("LAYOUT_ADVISOR_APPROVERS", "mallory")
    assert main(["--home", str(settings.home), "plan", "approve", str(pid), "--as", "mallory",
                 "--secret-file", secret_file(tmp_path)]) == 2
    assert "approvers are no longer configured" in capsys.readouterr().err
    monkeypatch.delenv("LAYOUT_ADVISOR_APPROVERS")
    assert main(["--home", str(settings.home), "plan", "approve", str(pid), "--as", "mallory",
                 "--secret-file", secret_file(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "wrong name or secret for 'mallory'" in err
    assert ("no approver exists yet; create the first admin with `layout-advisor approvers "
            "add NAME --admin`" in err) == (not Workspace(settings).security.approvers.approvers())
    assert api.show_plan(settings, pid).status == "proposed"


def test_sign_in_before_any_approver_says_how_to_begin(settings):
    """A fresh workspace or Docker image: the refusal names the command that creates the
    first admin; once an approver exists, the answer no longer says whether any exist."""
    with pytest.raises(AuthenticationError, match="create the first admin with `layout-advisor "
                       "approvers add NAME --admin`"):
        api.authenticate(settings, "alice", SECRET)
    ensure_account(settings, "alice")
    with pytest.raises(AuthenticationError, match="failed sign-ins are audited") as err:
        api.authenticate(settings, "bob", SECRET)
    assert "first admin" not in str(err.value)


def test_rollback_is_an_admins_action_and_is_audited(settings, table):
    from engine.table.store import TableStore

    alice, root = sign_in(settings, "alice"), sign_in(settings, ROOT)
    TableStore(settings).rollback("lineitem", table.id)  # snapshot 2
    with pytest.raises(ApprovalError, match="'alice' is an approver; rollback needs an admin"):
        api.rollback_table(settings, "lineitem", "1", actor=alice)
    snap = api.rollback_table(settings, "lineitem", "1", actor=root)
    assert snap.id == "3" and snap.summary["actor"] == ROOT
    last = api.audit_log(settings)[-1]
    assert (last["actor"], last["action"], last["reason"]) == (
        ROOT, "rollback", "table lineitem: snapshot 2 -> 3 (equal to 1)")


def test_demo_admin_secret_is_printed_once_and_stored_hashed(settings, capsys):
    from engine.cli.demo import DEMO_ADMIN, ensure_demo_admin

    ensure_demo_admin(settings)
    err = capsys.readouterr().err
    generated = err.split("generated secret ")[1].split()[0]
    assert api.authenticate(settings, DEMO_ADMIN, generated).role == "admin"
    assert generated.encode() not in settings.control_db.read_bytes()
    ensure_demo_admin(settings)  # an admin exists: nothing printed, nothing changed
    assert capsys.readouterr().err == ""


def test_demo_admin_takes_the_secret_from_the_environment(settings, capsys, monkeypatch):
    from engine.cli.demo import DEMO_ADMIN, ensure_demo_admin

    monkeypatch.setenv("LAYOUT_ADVISOR_DEMO_SECRET", "the demo's own secret")
    ensure_demo_admin(settings)
    err = capsys.readouterr().err
    assert "LAYOUT_ADVISOR_DEMO_SECRET" in err and "the demo's own secret" not in err
    assert api.authenticate(settings, DEMO_ADMIN, "the demo's own secret").name == DEMO_ADMIN


def test_a_rolled_back_plan_says_so(settings, table):
    from engine.plans import approval
    from engine.table.store import TableStore

    alice, root = sign_in(settings, "alice"), sign_in(settings, ROOT)
    pid, other = _plan(settings, table), _plan(settings, table)
    api.approve_plan(settings, pid, alice)
    ws = Workspace(settings)
    book = ws.plans
    approval.start(ws, pid, alice)
    first = table.partitions[0]
    done = TableStore(settings).commit("lineitem", table.id, [first.path], [first], "recluster",
                                       {"plan_id": pid})
    book.succeed(pid, {"snapshot_id": done.id})
    api.rollback_table(settings, "lineitem", table.id, actor=root)
    shown = api.show_plan(settings, pid)
    assert shown.status == "rolled-back"
    last = shown.audit[-1]
    assert (last["actor"], last["action"], last["from_status"], last["to_status"]) == (
        ROOT, "rollback", "succeeded", "rolled-back")
    assert last["reason"] == "table lineitem rolled back to snapshot 1 (snapshot 3)"
    assert api.show_plan(settings, other).status == "stale"  # untouched by the rollback
    assert api.verify_audit(settings)["ok"]
