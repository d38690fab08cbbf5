"""A running plan whose runner is on another host (plans never wedge, on any host
configuration): the job record's heartbeat decides, with a real control.db and
the real clock (the timeout made small for the test).

The remote runner is a job record naming another host: this process cannot ask that host
whether the pid lives, exactly the situation of a dashboard beside a cluster's driver.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace

import pytest

from engine import api
from engine.core.config import CONFIG_FILE_NAME, load_settings
from engine.core.errors import ExecutionError
from engine.plans.heartbeat import Heartbeat
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table
from security_helpers import sign_in

TIMEOUT_S = 1.0
REMOTE = "runner-7.cluster.example"


@pytest.fixture
def settings(settings):
    """The workspace's settings with ``runner_timeout_s`` made small (a setting, so every
    reader of the workspace sees it)."""
    return replace(settings, runner_timeout_s=TIMEOUT_S)


def _running_elsewhere(settings, base) -> int:
    """An approved plan moved to running, its job record naming a runner on REMOTE."""
    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions[:2]),
                                                 "sort", ("l_shipdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="heartbeat test")
    control = Workspace(settings).control
    control.transition(pid, ("approved",), "running", "alice", "run", job_groups=1)
    _remote_beat(settings, pid)
    return pid


def _remote_beat(settings, pid: int, at: float | None = None) -> None:
    """What the remote runner's heartbeat writes (its host, its pid, its clock)."""
    with sqlite3.connect(settings.control_db) as conn:
        conn.execute("UPDATE jobs SET host = ?, pid = ?, heartbeat_at = ? WHERE plan_id = ?",
                     (REMOTE, 4242, time.time() if at is None else at, pid))


def test_a_remote_runner_that_stops_beating_is_settled_failed(settings):
    base = make_table(settings, n=1000, rows_per_file=250)
    pid = _running_elsewhere(settings, base)
    assert api.show_plan(settings, pid).status == "running"  # beat just now: alive
    time.sleep(TIMEOUT_S * 0.6)
    _remote_beat(settings, pid)  # still beating: still running past the first timeout
    time.sleep(TIMEOUT_S * 0.6)
    assert api.show_plan(settings, pid).status == "running"
    time.sleep(TIMEOUT_S * 1.1)  # silent for longer than the timeout
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed", shown
    error = shown.result["error"]
    assert error.startswith(f"abandoned: runner pid 4242 on host {REMOTE} sent no heartbeat")
    assert f"(timeout {TIMEOUT_S:.0f} s)" in error and "before committing" in error
    assert shown.audit[-1]["action"] == "settle" and shown.audit[-1]["actor"] == "system"
    assert TableStore(settings).current_id("lineitem") == base.id
    assert api.verify_audit(settings)["ok"]


def test_a_silent_remote_runner_whose_commit_landed_is_settled_succeeded(settings):
    base = make_table(settings, n=1000, rows_per_file=250)
    pid = _running_elsewhere(settings, base)
    _remote_beat(settings, pid, at=time.time() - 10 * TIMEOUT_S)
    store = TableStore(settings)  # the remote runner committed, then went silent
    kept = base.partitions[0]
    store.commit("lineitem", base.id, removed=[kept.path], added=[kept],
                 operation="recluster", summary={"plan_id": pid})
    shown = api.show_plan(settings, pid)
    assert shown.status == "succeeded", shown
    assert "after committing" in shown.result["note"] and REMOTE in shown.result["note"]


def test_the_runner_beats_and_refuses_to_commit_once_settled(settings):
    base = make_table(settings, n=1000, rows_per_file=250)
    pid = insert_plan(settings, base, [PlanGroup((base.partitions[0].path,), "sort",
                                                 ("l_shipdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="heartbeat test")
    control = Workspace(settings).control
    control.transition(pid, ("approved",), "running", "alice", "run", job_groups=1)
    first = control.progress(pid)["heartbeat_at"]
    with Heartbeat(control, pid, TIMEOUT_S, interval_s=0.05) as beat:
        time.sleep(0.4)
        assert control.progress(pid)["heartbeat_at"] > first  # the thread beats
        beat.may_commit()  # still running: the commit may go ahead
        # a reader elsewhere took this runner for gone (its record, seen from there)
        with sqlite3.connect(settings.control_db) as conn:
            conn.execute("UPDATE jobs SET host = ?, heartbeat_at = ? WHERE plan_id = ?",
                         (REMOTE, time.time() - 10 * TIMEOUT_S, pid))
        assert api.show_plan(settings, pid).status == "failed"
        with pytest.raises(ExecutionError, match=f"plan {pid} was settled as failed while it ran"):
            beat.may_commit()


def test_a_record_without_heartbeat_falls_back_to_its_last_update(settings):
    """A job written before heartbeats existed (heartbeat_at NULL) is judged by updated_at."""
    base = make_table(settings, n=1000, rows_per_file=250)
    pid = _running_elsewhere(settings, base)
    with sqlite3.connect(settings.control_db) as conn:
        conn.execute("UPDATE jobs SET heartbeat_at = NULL, updated_at = ? WHERE plan_id = ?",
                     ("2020-01-01T00:00:00+00:00", pid))
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed" and "abandoned" in shown.result["error"]


def test_the_timeout_is_the_workspaces_setting(settings):
    """The same silent runner: alive for a workspace whose ``layout-advisor.toml`` allows
    60 s, settled for one that allows TIMEOUT_S (no module constant decides)."""
    base = make_table(settings, n=1000, rows_per_file=250)
    pid = _running_elsewhere(settings, base)
    _remote_beat(settings, pid, at=time.time() - 10 * TIMEOUT_S)
    (settings.home / CONFIG_FILE_NAME).write_text("runner_timeout_s = 60\n")
    patient = load_settings({"home": str(settings.home)}, environ={})
    assert patient.runner_timeout_s == 60.0
    assert api.show_plan(patient, pid).status == "running"
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed"
    assert f"(timeout {TIMEOUT_S:.0f} s)" in shown.result["error"]
