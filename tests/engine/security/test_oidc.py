"""OpenID Connect sign-in (Streamlit's st.login): an admin links
an approver to a provider account (issuer + subject, or issuer + verified email), and the
claims of the ID token (what Streamlit's ``st.user`` holds after ``st.login``) sign that
approver in. Everything runs on a real control.db and real plans; the gate is the one the
password sign-in goes through.

What is not here: a browser round trip through a real provider (docs/security.md, "Sign in
with an identity provider", and tests/e2e/test_oidc_browser.py); the AppTest below seeds ``st.user`` the way Streamlit's testing API
documents (``AppTest.user``), which is what the callback would have stored.
"""

from __future__ import annotations

import textwrap
import time

import pytest
from streamlit.testing.v1 import AppTest

from engine import api
from engine.cli import main
from engine.core.errors import ApprovalError, AuthenticationError, InvalidParameterError
from engine.policy.base import PlanGroup
from engine.security import gate
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import ROOT, SECRET, secret_file, sign_in

ISSUER = "https://id.example.com/realms/data"
OTHER = "https://evil.example.org"


def claims(sub: str = "u-123", iss: str = ISSUER, **extra) -> dict:
    """ID-token claims as Streamlit's st.user holds them after st.login."""
    return {"is_logged_in": True, "iss": iss, "sub": sub, "aud": "layout-advisor",
            "provider": "keycloak", **extra}


def actions(settings) -> list[tuple[str, str, str]]:
    return [(a["actor"], a["action"], a["reason"] or "") for a in api.audit_log(settings)]


@pytest.fixture
def root(settings):
    return sign_in(settings, ROOT)


@pytest.fixture
def plan_id(settings):
    snap = make_table(settings, n=2000, rows_per_file=500)
    groups = [PlanGroup(tuple(p.path for p in snap.partitions[:2]), "sort", ("l_shipdate",),
                        "test")]
    return insert_plan(settings, snap, groups, created_by="carol")


def test_linked_subject_signs_in_and_may_approve(settings, root, plan_id):
    sign_in(settings, "alice")
    linked = api.link_oidc(settings, "alice", ISSUER + "/", subject="u-123", actor=root)
    assert linked == {"name": "alice", "issuer": ISSUER, "kind": "sub", "value": "u-123"}
    identity = api.sign_in_oidc(settings, claims())
    assert (identity.name, identity.role) == ("alice", "approver")
    assert api.check_session(settings, identity) == "alice"
    assert gate.require(Workspace(settings), identity, "approve") == "alice"
    with pytest.raises(ApprovalError, match="signing key of 'alice', which only that "
                                            "approver's secret unlocks"):
        api.approve_plan(settings, plan_id, identity)  # approvals are signed
    with pytest.raises(AuthenticationError, match="wrong secret for 'alice'"):
        api.unlock_signing_key(settings, identity, "not her secret")
    time.sleep(0.05)  # past the failed attempt's delay (auth_delay_s)
    identity = api.unlock_signing_key(settings, identity, SECRET)
    assert api.approve_plan(settings, plan_id, identity).status == "approved"
    with pytest.raises(ApprovalError, match="'alice' is an approver; rollback needs an admin"):
        gate.require(Workspace(settings), identity, "rollback")
    log = actions(settings)
    assert ("root", "approver-link", f"alice to sub u-123 of {ISSUER}") in log
    assert ("alice", "sign-in", f"OIDC subject of {ISSUER}") in log
    assert log[-1][:2] == ("alice", "approve")
    assert api.verify_audit(settings)["ok"]


def test_unlinked_account_reads_only(settings, root, plan_id):
    sign_in(settings, "alice")
    api.link_oidc(settings, "alice", ISSUER, subject="u-123", actor=root)
    assert api.sign_in_oidc(settings, claims(sub="u-999", email="eve@example.com",
                                             email_verified=True)) is None
    assert actions(settings)[-1] == ("oidc:eve@example.com", "sign-in-unlinked",
                                     f"subject u-999 of {ISSUER}: no approver linked; "
                                     "read-only")
    # no identity: the gate refuses every change, and the plan stays proposed
    for action in ("approve", "run", "rollback"):
        with pytest.raises(ApprovalError, match="an approver is required; sign in first"):
            gate.require(Workspace(settings), None, action)
    with pytest.raises(ApprovalError, match="an approver is required"):
        api.approve_plan(settings, plan_id, None)
    assert api.show_plan(settings, plan_id).status == "proposed"


def test_issuer_is_part_of_the_link(settings, root):
    sign_in(settings, "alice")
    api.link_oidc(settings, "alice", ISSUER, subject="u-123", actor=root)
    api.link_oidc(settings, "alice", ISSUER, email="Alice@Example.com", actor=root)
    # the same subject and the same verified email at another provider map to nobody
    assert api.sign_in_oidc(settings, claims(iss=OTHER, email="alice@example.com",
                                             email_verified=True)) is None
    assert actions(settings)[-1][:2] == ("oidc:alice@example.com", "sign-in-unlinked")
    assert OTHER in actions(settings)[-1][2]


def test_email_link_needs_a_verified_email(settings, root):
    sign_in(settings, "bob", admin=True)
    api.link_oidc(settings, "bob", ISSUER, email="Bob@Example.com", actor=root)
    for flag in (False, "false", None):
        extra = {} if flag is None else {"email_verified": flag}
        with pytest.raises(AuthenticationError, match="does not say that bob@example.com is "
                                                      "verified"):
            api.sign_in_oidc(settings, claims(sub="other-sub", email="BOB@example.com",
                                              **extra))
    assert actions(settings)[-1] == ("bob", "sign-in-failed", f"OIDC email bob@example.com "
                                     f"of {ISSUER} is not verified by the provider")
    for flag in (True, "true"):  # OIDC Core 5.1 says boolean; some providers send a string
        identity = api.sign_in_oidc(settings, claims(sub="other-sub", email="bob@example.com",
                                                     email_verified=flag))
        assert (identity.name, identity.role) == ("bob", "admin")
    assert gate.require(Workspace(settings), identity, "rollback") == "bob"


def test_subject_link_wins_over_email_link(settings, root):
    sign_in(settings, "alice")
    sign_in(settings, "bob")
    api.link_oidc(settings, "alice", ISSUER, subject="u-1", actor=root)
    api.link_oidc(settings, "bob", ISSUER, email="shared@example.com", actor=root)
    identity = api.sign_in_oidc(settings, claims(sub="u-1", email="shared@example.com",
                                                 email_verified=False))
    assert identity.name == "alice"


def test_claims_without_issuer_or_subject_are_refused(settings, root):
    with pytest.raises(AuthenticationError, match="token has no 'sub' claim"):
        api.sign_in_oidc(settings, {"is_logged_in": True, "iss": ISSUER, "email": "a@b.c"})
    with pytest.raises(AuthenticationError, match="token has no 'iss' claim"):
        api.sign_in_oidc(settings, {"is_logged_in": True, "sub": "u-1"})


def test_linking_is_an_admins_audited_action(settings, root):
    alice = sign_in(settings, "alice")
    with pytest.raises(ApprovalError, match="'alice' is an approver; approvers needs an admin"):
        api.link_oidc(settings, "alice", ISSUER, subject="u-1", actor=alice)
    with pytest.raises(ApprovalError, match="an approver is required"):
        api.link_oidc(settings, "alice", ISSUER, subject="u-1")
    with pytest.raises(ApprovalError, match="no approver named 'nobody'"):
        api.link_oidc(settings, "nobody", ISSUER, subject="u-1", actor=root)
    with pytest.raises(InvalidParameterError, match="must be an https:// .or http://. URL"):
        api.link_oidc(settings, "alice", "id.example.com", subject="u-1", actor=root)
    with pytest.raises(InvalidParameterError, match="not both and not neither"):
        api.link_oidc(settings, "alice", ISSUER, subject="u-1", email="a@b.c", actor=root)
    api.link_oidc(settings, "alice", ISSUER, subject="u-1", actor=root)
    sign_in(settings, "bob")
    with pytest.raises(ApprovalError, match="linked to 'alice' already; unlink it first"):
        api.link_oidc(settings, "bob", ISSUER, subject="u-1", actor=root)
    assert api.unlink_oidc(settings, ISSUER, subject="u-1", actor=root)["name"] == "alice"
    assert api.sign_in_oidc(settings, claims(sub="u-1")) is None
    assert ("root", "approver-unlink", f"alice from sub u-1 of {ISSUER}") in actions(settings)
    # removing an approver removes its links
    api.link_oidc(settings, "bob", ISSUER, subject="u-2", actor=root)
    api.remove_approver(settings, "bob", root)
    assert api.list_oidc_links(settings) == []
    assert api.sign_in_oidc(settings, claims(sub="u-2")) is None
    assert api.verify_audit(settings)["ok"]


def test_cli_link_unlink_links(settings, root, tmp_path, capsys):
    sign_in(settings, "alice")
    home = ["--home", str(settings.home)]
    auth = ["--as", ROOT, "--secret-file", secret_file(tmp_path)]
    assert main([*home, "approvers", "link", "alice", "--oidc", ISSUER, "u-7", *auth]) == 0
    assert f"linked alice to the OIDC sub u-7 of {ISSUER}" in capsys.readouterr().out
    assert main([*home, "approvers", "links"]) == 0
    out = capsys.readouterr().out
    assert "alice" in out and ISSUER in out and "u-7" in out
    assert api.sign_in_oidc(settings, claims(sub="u-7")).name == "alice"
    assert main([*home, "approvers", "link", "alice", "--oidc", "nohttp", "u-8", *auth]) == 2
    assert "OIDC issuer 'nohttp' must be an https://" in capsys.readouterr().err
    (tmp_path / "wrong").mkdir()
    wrong = ["--as", ROOT, "--secret-file", secret_file(tmp_path / "wrong", "not the secret")]
    assert main([*home, "approvers", "link", "alice", "--oidc", ISSUER, "u-8", *wrong]) == 2
    assert main([*home, "approvers", "unlink", "--oidc", ISSUER, "u-7", *auth]) == 0
    assert [link["value"] for link in api.list_oidc_links(settings)] == []


# --------------------------------------------------------------------------- the dashboard

#: the dashboard's real sign-in area (app.components.sign_in_box) and, under it, what a page
#: does with the identity: the approve button is enabled only for a signed-in approver
PAGE = textwrap.dedent("""
    import streamlit as st
    from app import components, plan_service
    components.sign_in_box()
    identity = components.signed_in()
    plan_id = int(st.session_state["plan_id"])
    if st.button("Approve", key="approve", disabled=identity is None):
        with components.guard(stop=False):
            plan_service.approve_plan(plan_id, identity, "via OIDC", st.session_state.get("secret"))
            st.success("approved")
""")

AUTH_SECRETS = {"auth": {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-long-random-string-for-tests",
    "keycloak": {"client_id": "layout-advisor", "client_secret": "s3cret",
                 "server_metadata_url": ISSUER + "/.well-known/openid-configuration"},
}}


def page(settings, plan_id, user: dict | None, secrets: dict | None = None) -> AppTest:
    at = AppTest.from_string(PAGE, default_timeout=60)
    at.session_state["plan_id"] = plan_id
    if user is not None:
        at.user = user
    if secrets:
        at.secrets = secrets
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def dashboard_env(settings, monkeypatch):
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    monkeypatch.setenv("LAYOUT_ADVISOR_AUTH_DELAY_S", "0.01")


def test_dashboard_linked_oidc_user_approves(settings, root, plan_id, dashboard_env):
    sign_in(settings, "alice")
    api.link_oidc(settings, "alice", ISSUER, subject="u-123", actor=root)
    at = page(settings, plan_id, claims(email="alice@example.com"), AUTH_SECRETS)
    assert any("Signed in as **alice** (approver) with keycloak" in c.value for c in at.caption)
    assert not at.button(key="approve").disabled
    at.session_state["secret"] = SECRET  # the provider's sign-in cannot unlock her key
    at.button(key="approve").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value for s in at.success] == ["approved"]
    assert api.show_plan(settings, plan_id).status == "approved"
    log = actions(settings)
    assert ("alice", "sign-in", f"OIDC subject of {ISSUER}") in log
    assert log[-1] == ("alice", "approve", "via OIDC")
    # reruns reuse the session: one sign-in entry, not one per rerun
    assert log.count(("alice", "sign-in", f"OIDC subject of {ISSUER}")) == 1


def test_dashboard_unlinked_oidc_user_reads_only(settings, root, plan_id, dashboard_env):
    at = page(settings, plan_id, claims(sub="u-404", email="eve@example.com"), AUTH_SECRETS)
    assert any("Signed in with keycloak as **eve@example.com**: read-only" in c.value
               for c in at.caption)
    assert any("No approver is linked to this account" in i.value for i in at.info)
    assert f"approvers link NAME --oidc {ISSUER} u-404 --as ADMIN" in at.code[0].value
    assert at.button(key="approve").disabled
    at.run()  # a rerun does not audit the visit again
    unlinked = [a for a in actions(settings) if a[1] == "sign-in-unlinked"]
    assert len(unlinked) == 1
    assert api.show_plan(settings, plan_id).status == "proposed"


def test_dashboard_unverified_email_link_is_refused(settings, root, plan_id, dashboard_env):
    sign_in(settings, "alice")
    api.link_oidc(settings, "alice", ISSUER, email="alice@example.com", actor=root)
    at = page(settings, plan_id, claims(sub="x", email="alice@example.com",
                                        email_verified=False), AUTH_SECRETS)
    assert any("does not say that alice@example.com is verified" in i.value for i in at.info)
    assert at.button(key="approve").disabled
    assert actions(settings)[-1][:2] == ("alice", "sign-in-failed")


def test_dashboard_offers_the_provider_when_auth_is_configured(settings, root, plan_id,
                                                               dashboard_env):
    at = page(settings, plan_id, {"is_logged_in": False}, AUTH_SECRETS)
    assert at.button(key="oidc_login_keycloak").label == "Sign in with keycloak"
    assert at.text_input(key="signin_name") is not None  # the password sign-in stays
    bare = page(settings, plan_id, None)
    assert not [b for b in bare.button if b.key.startswith("oidc_login")]
    bare.text_input(key="signin_name").input("root")
    bare.text_input(key="signin_secret").input(SECRET).run()
    bare.button(key="signin").click().run()
    assert any("Signed in as **root** (admin)" in c.value for c in bare.caption)
