"""The approve-and-run flow through the dashboard, end to end, on real Spark and Parquet:

store WAIR's plan (proposed) -> approve as a configured approver -> run with progress
(succeeded) -> the new snapshot is in the history and the sidebar -> an older plan turns
stale and says so -> roll back in one click.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_workspace import build_table, engine_settings, plan_page  # noqa: F401 (fixture)
from security_helpers import ROOT, SECRET

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, spark) -> Path:
    home = tmp_path_factory.mktemp("flow") / "home"
    build_table(home, "flow", rows=6000, queries=80)
    return home


def approve_page() -> AppTest:
    return plan_page("flow", timeout=300)


def frame_with(at: AppTest, column: str):
    """The first dataframe on the page that has ``column``."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column on the page")


def sign_in(at: AppTest, name: str, secret: str = SECRET) -> AppTest:
    """Sign in through the sidebar as a user would."""
    at.sidebar.text_input(key="signin_name").input(name)
    at.sidebar.text_input(key="signin_secret").input(secret).run()
    at.sidebar.button(key="signin").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_store_approve_run_rollback(engine_settings):
    from engine import api

    # 1. Recommendation stores the plan as proposed; a second click stores no duplicate, and a
    #    second plan (greedy Algorithm 1's, which goes stale later) comes from the API
    rec = AppTest.from_file(APP, default_timeout=300)
    rec.session_state["table"] = "flow"
    rec.run()
    rec.switch_page("app_pages/recommendation.py").run()
    assert not rec.exception
    if not [b for b in rec.button if b.key == "rec_store"]:
        pytest.fail("WAIR proposed nothing on the flow table: " + " ".join(i.value for i in rec.info))
    rec.button(key="rec_store").click().run()
    rec.button(key="rec_store").click().run()
    assert len(api.list_plans(engine_settings, "flow")) == 1
    assert any("Already stored as plan" in i.value for i in rec.info)
    assert api.create_plan(engine_settings, "flow", "greedy").id is not None
    plans = api.list_plans(engine_settings, "flow")
    assert [p.status for p in plans] == ["proposed", "proposed"]
    first, second = plans[0].id, plans[1].id
    base = api.load_snapshot(engine_settings, "flow").id

    # 2. Approve the first one as alice, signed in (a wrong secret is refused first)
    at = approve_page()
    assert at.button(key="approve").disabled
    sign_in(at, "alice", "not her secret")
    assert any("secret" in i.value.lower() for i in at.sidebar.info)
    sign_in(at, "alice")
    assert any("Signed in as" in c.value and "alice" in c.value for c in at.sidebar.caption)
    at.selectbox(key="plan_pick").set_value(first).run()
    at.text_input(key="decision_reason").set_value("looks right").run()
    at.button(key="approve").click().run()
    assert not at.exception
    # stored while nobody was signed in: nobody knows who proposed it, so one approval is
    # not enough; a second, different approver approves it
    assert api.show_plan(engine_settings, first).status == "proposed"
    api.approve_plan(engine_settings, first, api.authenticate(engine_settings, "bob", SECRET))
    assert api.show_plan(engine_settings, first).status == "approved"

    # 3. Run it: progress, then succeeded and a new current snapshot
    at.selectbox(key="plan_pick").set_value(first).run()
    at.button(key="run").click().run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    plan = api.show_plan(engine_settings, first)
    assert plan.status == "succeeded", plan.result
    new_id = plan.result["snapshot_id"]
    assert api.load_snapshot(engine_settings, "flow").id == new_id != base
    assert any(f"`{new_id}`" in s.value for s in at.success)  # the page reran onto the result
    at = approve_page()
    at.selectbox(key="plan_pick").set_value(first).run()
    # the snapshot history is the format's, newest first: the run's snapshot names its plan,
    # approver and the files it replaced
    history = frame_with(at, "files removed")
    formats = api.snapshot_history(engine_settings, "flow")
    assert history["id"].tolist() == [str(h["id"]) for h in reversed(formats)]
    top = history.iloc[0]
    assert (top["id"], bool(top["current"]), top["plan"], top["approver"]) == (
        str(new_id), True, str(first), "alice, bob")
    assert top["files removed"] == plan.partition_count and top["files added"] >= 1
    # rows after each snapshot as the format records them, blank where it does not (the
    # native format's headers keep no row total)
    shown = [None if pd.isna(v) else int(v) for v in history["total rows"]]
    assert shown == [h["total_rows"] for h in reversed(formats)]
    assert any(new_id in s.value for s in at.success)  # "New snapshot `N`: ..."
    realized = frame_with(at, "CPU time saved")
    assert realized.shape[0] == 2 and realized["bytes saved"].iloc[1] not in ("0 B", "–")
    assert any(o.startswith(f"{new_id} · recluster") and "(current)" in o
               for o in at.sidebar.selectbox[1].options)

    learned = api.wair_state(engine_settings, "flow")
    # the run's replay of its own decision window is not learned from:
    # WAIR learns from the queries imported after it (tests/app/test_app_realized.py)
    assert learned.saved and learned.runs == 0
    assert learned.plans[-1]["id"] == first

    # 4. The other plan was made against the old snapshot: stale, said plainly; the two
    #    plans side by side, each exportable as JSON and as a runbook
    at.selectbox(key="plan_pick").set_value(second).run()
    assert not at.exception
    assert any("stale" in e.value for e in at.error)
    assert api.show_plan(engine_settings, second).status == "stale"
    compared = frame_with(at, f"plan {first}")
    row = compared.set_index("").loc["partitions rewritten"]
    assert row[f"plan {second}"] == f"{api.show_plan(engine_settings, second).partition_count:,}"
    assert row[f"plan {first}"] == f"{plan.partition_count:,}"
    runbook = api.plan_runbook(engine_settings, first)
    assert f"plan {first}" in runbook and "## Groups" in runbook and "## Result" in runbook
    assert runbook.count("\n| ") - 1 == len(plan.groups)  # header + one row per group
    assert json.loads(api.plan_json(engine_settings, first))["id"] == first

    # 5. Roll back to the base snapshot, confirmed, as an admin (an approver may not)
    sign_in(at, "alice")
    assert at.button(key="rollback").disabled
    at.sidebar.button(key="signout").click().run()
    sign_in(at, ROOT)
    at.selectbox(key="rollback_target").set_value(str(base)).run()
    assert at.button(key="rollback").disabled  # asks for confirmation first
    at.checkbox(key="rollback_confirm").check().run()
    at.button(key="rollback").click().run()
    assert not at.exception
    snaps = api.table_snapshots(engine_settings, "flow")
    assert snaps[-1]["operation"] == "rollback"
    # WAIR learned from a run the rollback undid: its memory is reset, and the page says so
    assert api.wair_state(engine_settings, "flow").runs == 0
    assert any("reset" in s.value for s in at.success)
    assert any(a["action"] == "policy-reset" for a in api.audit_log(engine_settings))
    restored = api.load_snapshot(engine_settings, "flow")
    original = api.load_snapshot(engine_settings, "flow", base)
    assert sorted(p.path for p in restored.partitions) == sorted(p.path for p in original.partitions)
    audit = api.audit_log(engine_settings, first)
    assert [a["actor"] for a in audit if a["action"] == "approve"] == ["alice", "bob"]


def test_actions_need_a_signed_in_approver(engine_settings, workspace):
    at = approve_page()
    assert any("Sign in as an approver" in w.value for w in at.warning)
    for key in ("approve", "reject", "run", "rollback"):
        for b in at.button:
            if b.key == key:
                assert b.disabled
    from engine import api
    from engine.core.errors import ApprovalError

    with pytest.raises(ApprovalError):  # nobody signed in: WAIR's memory stays
        api.reset_policy_state(engine_settings, "flow", None)
    bob = api.authenticate(engine_settings, "bob", SECRET)
    with pytest.raises(ApprovalError):  # an approver is not an admin: no rollback
        api.rollback_and_reset(engine_settings, "flow", str(api.table_snapshots(engine_settings,
                                                                                  "flow")[0]["id"]), bob)
