"""Approvals that cannot be edited into existence, proposers who cannot approve their own
plans, and a security policy the acting process cannot loosen.

A user who can write ``control.db`` (everyone who proposes plans can) edits it here as an
attacker would: a forged approve entry with a recomputed hash, an approver inserted or
promoted, an approved plan's partitions changed. Each must be refused by the run gate and
reported by ``audit verify``.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import ApprovalError
from engine.policy.base import PlanGroup
from engine.security import certs, keys
from engine.security.chain import append_entry
from engine.security.db import utc_now
from engine.security.identity import hash_secret
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, SECRET, ensure_account, secret_file, sign_in


@pytest.fixture
def table(settings):
    return make_table(settings, n=2000, rows_per_file=500)


def _plan(settings, snap, created_by="tester", signed=True) -> int:
    paths = tuple(p.path for p in snap.partitions[:2])
    return insert_plan(settings, snap, [PlanGroup(paths, "sort", ("l_shipdate",), "test")],
                       created_by=created_by, signed=signed)


def _raw(settings) -> sqlite3.Connection:
    conn = sqlite3.connect(settings.control_db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def _problems(settings, pin=None) -> list[str]:
    return api.verify_audit(settings, pin=pin)["problems"]


# -- approvals edited into control.db ------------------------------------------------------
def test_a_forged_approval_with_a_recomputed_hash_is_refused_and_reported(settings, table):
    alice = sign_in(settings, "alice")
    pid = _plan(settings, table)
    with _raw(settings) as conn:  # what a workspace user can do with sqlite3
        conn.execute("BEGIN IMMEDIATE")
        append_entry(conn, pid, "bob", "approve", "proposed", "approved", None, utc_now())
        conn.execute("UPDATE plans SET status = 'approved' WHERE id = ?", (pid,))
        conn.execute("COMMIT")
    assert api.verify_audit(settings)["ok"] is False
    assert f"plan {pid} is approved but carries 0 valid approval signature(s) of the 1 it " \
           "needs" in _problems(settings)
    with pytest.raises(ApprovalError, match=f"plan {pid} is marked approved but carries 0 "
                                            "valid approval signature"):
        api.run_plan(settings, pid, actor=alice)


def test_a_plan_changed_after_approval_cannot_run(settings, table):
    alice = sign_in(settings, "alice")
    pid = _plan(settings, table)
    assert api.approve_plan(settings, pid, alice).status == "approved"
    assert api.verify_audit(settings)["ok"]
    with _raw(settings) as conn:
        proposal = json.loads(conn.execute("SELECT proposal FROM plans WHERE id = ?",
                                           (pid,)).fetchone()[0])
        proposal["groups"][0]["partitions"] = [p.path for p in table.partitions]  # all of them
        conn.execute("UPDATE plans SET proposal = ? WHERE id = ?", (json.dumps(proposal), pid))
    with pytest.raises(ApprovalError, match=f"plan {pid} was changed after it was approved"):
        api.run_plan(settings, pid, actor=alice)
    assert any(f"plan {pid}: its proposal changed after 'alice' signed it" in p
               for p in _problems(settings))


def test_an_inserted_or_promoted_approver_grants_nothing_and_is_reported(settings, table):
    root, alice = sign_in(settings, ROOT, admin=True), sign_in(settings, "alice")
    # alice promotes herself to admin in the table
    with _raw(settings) as conn:
        conn.execute("UPDATE approvers SET role = 'admin' WHERE name = 'alice'")
    with pytest.raises(ApprovalError, match="'alice' may not act: its certificate does not "
                                            "verify with 'root''s key"):
        api.rollback_table(settings, "lineitem", table.id, actor=alice)
    problems = _problems(settings)
    assert "approver 'alice' is admin in the approvers table but the audit log added it as " \
           "approver" in problems
    # mallory inserts herself as an approver, with a key and a certificate she signs herself
    private, public = keys.new_key_pair()
    with _raw(settings) as conn:
        conn.execute("UPDATE approvers SET role = 'approver' WHERE name = 'alice'")
        conn.execute(
            "INSERT INTO approvers(name, role, secret_hash, created_at, created_by, updated_at,"
            " public_key, sealed_key, cert, certified_by) VALUES (?,?,?,?,?,?,?,?,?,?)",
            ("mallory", "approver", hash_secret(SECRET),
             utc_now(), ROOT, utc_now(), public,
             keys.seal(private, SECRET, "mallory", (1, 64, 1)),
             certs.issue(private, "mallory", "approver", public, ROOT), ROOT))
    mallory = api.authenticate(settings, "mallory", SECRET)  # the secret matches her hash ...
    pid = _plan(settings, table)
    with pytest.raises(ApprovalError, match="'mallory' may not act: its certificate does not "
                                            "verify"):
        api.approve_plan(settings, pid, mallory)  # ... but the gate wants a certified key
    problems = _problems(settings)
    assert "approver 'mallory' (approver) is in the approvers table but the audit log never " \
           "added it" in problems
    assert any(p.startswith("approver 'mallory': its certificate does not verify")
               for p in problems)
    assert api.approve_plan(settings, pid, alice).status == "approved"  # the real ones still can
    del root


def test_a_replaced_root_is_caught_by_the_pin(settings, tmp_path, capsys):
    ensure_account(settings, "alice")
    pin = api.verify_audit(settings)["root"]
    home = ["--home", str(settings.home)]
    assert main([*home, "audit", "verify", "--pin", pin]) == 0
    assert f"root admin key {pin}" in capsys.readouterr().out
    # the whole approvers table rewritten consistently: a new self-certified root
    private, public = keys.new_key_pair()
    with _raw(settings) as conn:
        conn.execute("UPDATE approvers SET public_key = ?, cert = ? WHERE name = ?",
                     (public, certs.issue(private, ROOT, "admin", public, ROOT), ROOT))
    assert main([*home, "audit", "verify", "--pin", pin]) == 2
    out = capsys.readouterr().out
    assert f"no root admin has the pinned key fingerprint {pin}" in out
    # and the real root can no longer sign in: its sealed key does not match the public key
    with pytest.raises(ApprovalError, match="signing key of 'root' does not open"):
        api.authenticate(settings, ROOT, SECRET)


def test_the_private_key_is_stored_only_sealed_by_the_secret(settings, table):
    alice = sign_in(settings, "alice")
    with _raw(settings) as conn:
        row = dict(conn.execute("SELECT * FROM approvers WHERE name = 'alice'").fetchone())
    raw_private = alice.signing_key.private_bytes_raw().hex()
    assert raw_private not in json.dumps(row)
    assert keys.unseal(row["sealed_key"], "not the secret", "alice") is None
    # a new secret re-seals the same key: approvals still verify
    api.change_secret(settings, "alice", "a brand new secret", alice)
    again = api.authenticate(settings, "alice", "a brand new secret")
    assert keys.public_hex(again.signing_key) == row["public_key"]
    assert api.approve_plan(settings, _plan(settings, table), again).status == "approved"


def test_a_store_made_before_signed_approvals_migrates_at_sign_in(settings, table, capsys,
                                                                   tmp_path):
    ensure_account(settings, "alice")
    pid = _plan(settings, table)
    with _raw(settings) as conn:  # as an older version left it: no keys, no certificates
        conn.execute("UPDATE approvers SET public_key = NULL, sealed_key = NULL, cert = NULL,"
                     " certified_by = NULL")
    root = api.authenticate(settings, ROOT, SECRET)  # the first admin becomes the root
    alice = api.authenticate(settings, "alice", SECRET)
    with pytest.raises(ApprovalError, match=r"'alice' may not act: its signing key is not "
                                            r"certified by an admin \(`layout-advisor approvers "
                                            r"certify alice --as ADMIN`\)"):
        api.approve_plan(settings, pid, alice)
    assert main(["--home", str(settings.home), "approvers", "certify", "alice", "--as", ROOT,
                 "--secret-file", secret_file(tmp_path)]) == 0
    assert "certified alice as approver (key " in capsys.readouterr().out
    tester = api.authenticate(settings, "tester", SECRET)
    assert tester and api.certify_approver(settings, "tester", root)["role"] == "approver"
    assert api.approve_plan(settings, pid, alice).status == "proposed"  # tester's old proposal:
    # signed by a key tester no longer has, so unsigned -> two approvers
    assert api.approve_plan(settings, pid, root).status == "approved"
    actions = [e["action"] for e in api.audit_log(settings) if e["plan_id"] is None]
    assert actions.count("approver-key") == 3 and actions.count("approver-certify") == 2


# -- proposers who did not sign in -----------------------------------------------------------
def test_an_unsigned_proposal_needs_two_different_approvers(settings, table):
    alice, bob = sign_in(settings, "alice"), sign_in(settings, "bob")
    pid = _plan(settings, table, created_by="carol", signed=False)  # carol: a name, no sign-in
    first = api.approve_plan(settings, pid, alice)
    assert first.status == "proposed"
    assert first.audit[-1]["reason"] == ("approval 1 of 2 (the proposer did not sign in, so two "
                                         "different approvers must approve)")
    with pytest.raises(ApprovalError, match="'alice' has approved plan .* already"):
        api.approve_plan(settings, pid, alice)
    assert api.approve_plan(settings, pid, bob).status == "approved"


def test_cli_plan_create_without_as_cannot_be_self_approved(settings, tmp_path, capsys):
    """The OS user proposes (no --as) and, as approver of the same name, approves alone:
    the plan stays proposed until a second, different approver approves it."""
    make_table(settings, n=4000, rows_per_file=500)
    me = api.default_actor()
    ensure_account(settings, me)
    ensure_account(settings, "bob")
    home = ["--home", str(settings.home)]
    assert main([*home, "plan", "create", "lineitem", "--policy", "dd", "--key", "l_shipdate",
                 "--json"]) == 0
    pid = json.loads(capsys.readouterr().out)["id"]
    # the recorded proposer name is the OS user: the same name is refused outright ...
    with pytest.raises(ApprovalError, match="cannot approve it"):
        api.approve_plan(settings, pid, sign_in(settings, me))
    ensure_account(settings, "carol")
    secret = secret_file(tmp_path)
    assert main([*home, "plan", "approve", str(pid), "--as", "bob", "--secret-file", secret]) == 0
    assert api.show_plan(settings, pid).status == "proposed"  # ... and one approval is not enough
    assert main([*home, "plan", "approve", str(pid), "--as", "carol", "--secret-file", secret]) == 0
    assert api.show_plan(settings, pid).status == "approved"


def test_dashboard_store_signed_out_then_approve_needs_two(settings, monkeypatch):
    """The dashboard's service path: store a plan while nobody is signed in, sign in,
    approve: one approval leaves it proposed."""
    import app.plan_service as plan_service
    import app.services as services

    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    monkeypatch.setattr(services, "workspace", lambda: api.open_workspace(settings.home))
    monkeypatch.setattr(plan_service, "workspace", lambda: api.open_workspace(settings.home))
    make_table(settings, n=4000, rows_per_file=500)
    ensure_account(settings, "alice")
    stored = plan_service.create_plan("lineitem", "dd", {"key": "l_shipdate"},
                                      plan_service.default_proposer())
    alice = services.sign_in("alice", SECRET)
    assert plan_service.approve_plan(stored["id"], alice)["status"] == "proposed"
    plan_service.reject_plan(stored["id"], alice, "store it signed in")
    # signed in, the proposer signs: then one other approver is enough
    signed = plan_service.create_plan("lineitem", "dd", {"key": "l_shipdate"}, alice)
    assert signed["id"] is not None and api.show_plan(settings, signed["id"]).created_by == "alice"
    bob = sign_in(settings, "bob")
    assert plan_service.approve_plan(signed["id"], bob)["status"] == "approved"


# -- the security policy -------------------------------------------------------------------
def test_env_cannot_switch_off_dual_approval_and_admin_policy_is_signed(settings, table,
                                                                       monkeypatch, tmp_path,
                                                                       capsys):
    root, alice, bob = sign_in(settings, ROOT), sign_in(settings, "alice"), sign_in(settings, "bob")
    home = ["--home", str(settings.home)]
    secret = secret_file(tmp_path)
    assert main([*home, "approvers", "policy", "--dual-approval-bytes", "1", "--as", ROOT,
                 "--secret-file", secret]) == 0
    assert "two approvers above" in capsys.readouterr().out
    monkeypatch.setenv("LAYOUT_ADVISOR_DUAL_APPROVAL_BYTES", "0")
    assert main([*home, "approvers", "policy", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["effective"]["dual_approval_bytes"] == 1 and shown["set_by"] == ROOT
    pid = _plan(settings, table)
    assert api.approve_plan(api.open_workspace(settings.home), pid, alice).status == "proposed"
    assert api.approve_plan(settings, pid, bob).status == "approved"
    # the stored row edited to switch it off is not signed by an admin: the defaults apply
    with _raw(settings) as conn:
        conn.execute("UPDATE security_policy SET body = ?", (json.dumps(
            {"separation_of_duties": False, "dual_approval_bytes": 0,
             "dual_approval_cpu_seconds": 0.0, "auth_delay_s": 0.0}),))
    policy = api.security_policy(settings)
    assert policy["effective"]["separation_of_duties"] is True
    assert "not signed by a certified admin" in policy["problem"]
    assert any("security policy is not signed" in p for p in _problems(settings))
    # an approver is not an admin
    assert main([*home, "approvers", "policy", "--auth-delay-s", "0", "--as", "alice",
                 "--secret-file", secret]) == 2
    assert "'alice' is an approver; approvers needs an admin" in capsys.readouterr().err
    del root
