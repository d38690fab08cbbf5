"""A running plan's ETA and its cancellation.

The Spark level: :class:`CancelWatcher` stops a running Spark job tagged with the plan (the
job's tasks block on a file that never appears, so the job is running when the request
arrives, whatever the machine's load). The plan level: a real run on real Parquet files
is held before its commit by the test hook (``LA_FAULT=hold-before-commit``: wait for a cancel
request) after writing and verifying its files; ``plan cancel ID --as bob`` stops it and
the table, its files and the audit log are checked."""

from __future__ import annotations

import os
import threading
import time

import pytest

from engine import api
from engine.cli import main
from engine.core.errors import ApprovalError, PlanError
from engine.core.faults import FAULT_ENV
from engine.core.periodic import Periodic
from engine.policy.base import PlanGroup
from engine.spark.progress import (
    CancelWatcher, RunCancelled, cancel_request_path, request_cancel,
)
from engine.table.store import TableStore
from engine.workspace import Workspace
from app_workspace import plan_page
from plan_helpers import insert_plan, make_table, rows_of
from security_helpers import SECRET, ensure_account, secret_file, sign_in

pytestmark = pytest.mark.spark
WAIT_S = 120.0  # an upper bound for a blocked wait, never a speed goal
ROWS = 1000


def _files_under(root: str) -> set[str]:
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names
            if n.endswith(".parquet")}


def _held_run(settings, spark, monkeypatch):
    """An approved sort plan over the whole table, running and held before its commit
    (files written and verified); returns (base snapshot, plan id, run, data root, files)."""
    base = make_table(settings, n=ROWS, rows_per_file=500)
    root = TableStore(settings).info("lineitem").data_root
    files_before = _files_under(root)
    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                                 ("l_shipdate",))])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    ensure_account(settings, "bob")
    monkeypatch.setenv(FAULT_ENV, "hold-before-commit")
    run = api.start_run(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    _until(lambda: (lambda e: e.groups_done == e.groups_total)(api.run_eta(settings, pid)),
           "the run to verify its files")
    return base, pid, run, root, files_before


def _until(check, what: str, limit_s: float = WAIT_S):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


def test_the_watcher_cancels_a_running_spark_job_tagged_with_the_plan(spark, tmp_path):
    started, never = tmp_path / "started", tmp_path / "never-created"

    def block(rows):
        import os as _os
        import time as _time
        open(started, "w").close()
        deadline = _time.time() + WAIT_S
        while not _os.path.exists(never) and _time.time() < deadline:
            _time.sleep(0.05)
        yield sum(1 for _ in rows)

    outcome: dict = {}

    def job() -> None:
        try:
            with CancelWatcher(spark, tmp_path, 7, poll_s=0.1):
                spark.sparkContext.parallelize(range(4), 2).mapPartitions(block).collect()
        except BaseException as exc:  # noqa: BLE001 - inspected below
            outcome["error"] = exc

    thread = threading.Thread(target=job)
    thread.start()
    _until(started.exists, "the Spark task to start")
    request_cancel(tmp_path, 7, "alice", "wrong plan")
    thread.join(WAIT_S)
    assert not thread.is_alive()
    error = outcome.get("error")
    assert isinstance(error, RunCancelled), repr(error)
    assert "cancelled by alice" in str(error)
    assert "cancel" in str(error.__cause__).lower()  # Spark's own error: the job was cancelled
    assert not never.exists()  # the tasks did not end on their own
    tracker = spark.sparkContext.statusTracker()
    assert not [j for j in tracker.getActiveJobsIds()]
    assert "la-plan-7" not in spark.sparkContext.getJobTags()
    # the watch is a Periodic tick: its thread ends with the block
    assert not [t for t in threading.enumerate() if t.name == "la-cancel-7"]


def test_the_watcher_polls_as_a_periodic_tick_and_stops_with_its_block(spark, tmp_path):
    """No job to cancel: the request is still seen by the tick, check() stops the run, and
    the polling thread is gone once the block ends."""
    watcher = CancelWatcher(spark, tmp_path, 8, poll_s=0.05)
    assert isinstance(watcher, Periodic)
    with pytest.raises(RunCancelled, match="cancelled by carol"):
        with watcher:
            assert watcher.request is None
            request_cancel(tmp_path, 8, "carol")
            _until(lambda: watcher.request is not None, "the tick to see the request")
            assert [t for t in threading.enumerate() if t.name == "la-cancel-8"]
            watcher.check()
    assert not [t for t in threading.enumerate() if t.name == "la-cancel-8"]
    assert "la-plan-8" not in spark.sparkContext.getJobTags()


def test_cancel_stops_the_run_removes_its_files_and_settles_the_plan(settings, spark, tmp_path,
                                                                     monkeypatch):
    base = make_table(settings, n=ROWS, rows_per_file=500)
    root = TableStore(settings).info("lineitem").data_root
    files_before, dirs_before = _files_under(root), set(os.listdir(root))
    rows_before = rows_of([p.path for p in base.partitions])
    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                                 ("l_shipdate",))])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    ensure_account(settings, "bob")
    monkeypatch.setenv(FAULT_ENV, "hold-before-commit")  # the run waits before its commit for the cancel
    run = api.start_run(settings, pid, actor=sign_in(settings, "alice"), spark=spark)

    # progress with an ETA while it runs; written and verified files wait for the commit
    eta = _until(lambda: (lambda e: e if e.groups_done == e.groups_total else None)(
        api.run_eta(settings, pid)), "the run to verify its files")
    assert eta.status == "running" and eta.rows_total == ROWS
    assert eta.rows_written == ROWS and 0.9 < eta.fraction < 1.0
    assert eta.eta_s == pytest.approx(api.eta_seconds(eta.elapsed_s, eta.predicted_s,
                                                         eta.fraction))
    assert eta.predicted_s == pytest.approx(api.show_plan(settings, pid).estimated_cost
                                               ["cpu_seconds"])
    assert _files_under(root) - files_before  # the rewrite's files exist now

    monkeypatch.setenv("LAYOUT_ADVISOR_SECRET_FILE", secret_file(tmp_path))
    assert main(["--home", str(settings.home), "plan", "cancel", str(pid), "--as", "bob",
                 "--reason", "maintenance window over"]) == 0
    run.wait(WAIT_S)
    assert run.done and isinstance(run.error, RunCancelled)

    # the table is at its previous snapshot, with exactly its files and rows
    assert TableStore(settings).current_id("lineitem") == base.id
    assert _files_under(root) == files_before and set(os.listdir(root)) == dirs_before
    assert rows_of([p.path for p in base.partitions]).equals(rows_before)
    # the plan is cancelled, by bob, audited with who and when
    shown = api.show_plan(settings, pid)
    assert shown.status == "cancelled"
    assert shown.result["cancelled_by"] == "bob" and shown.result["cancelled_at"]
    actions = [(e["action"], e["actor"], e["to_status"]) for e in shown.audit]
    assert ("cancel-request", "bob", None) in actions
    assert actions[-1] == ("cancel", "bob", "cancelled")
    # one transition settles it: running -> cancelled, never through failed
    moves = [(e["action"], e["to_status"]) for e in shown.audit if e["to_status"]]
    assert moves[-2:] == [("run", "running"), ("cancel", "cancelled")], moves
    assert "failed" not in [to for _, to in moves]
    assert "maintenance window over" in shown.audit[-1]["reason"]
    assert not cancel_request_path(settings.home, pid).exists()
    assert api.verify_audit(settings)["ok"]
    # and a cancelled plan cannot be cancelled again
    assert main(["--home", str(settings.home), "plan", "cancel", str(pid), "--as", "bob"]) == 2


def test_a_run_left_failed_by_its_cancellation_is_settled_cancelled_by_the_canceller(
        settings, tmp_path):
    """The runner gone before it could settle its cancel (the plan failed with the
    cancellation as its error): settle_cancelled moves it, once, under the canceller."""
    base = make_table(settings, n=1000, rows_per_file=500)
    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                                 ("l_shipdate",))])
    book = Workspace(settings).plans
    book.move(pid, ("proposed",), "running", "alice", "run")
    request_cancel(settings.home, pid, "bob", "wrong table")
    book.fail(pid, f"plan {pid} cancelled by bob at 2026-01-01: nothing was committed")
    out = api.settle_cancelled(settings, pid)
    assert (out["status"], out["cancelled"], out["by"]) == ("cancelled", True, "bob")
    shown = api.show_plan(settings, pid)
    assert shown.result["cancelled_by"] == "bob"
    assert [(e["action"], e["actor"], e["to_status"]) for e in shown.audit][-1] == (
        "cancel", "bob", "cancelled")
    assert shown.audit[-1]["reason"].endswith(f"snapshot {base.id} (wrong table)")
    assert not cancel_request_path(settings.home, pid).exists()
    again = api.settle_cancelled(settings, pid)  # idempotent, still says who and when
    assert (again["status"], again["by"]) == ("cancelled", "bob")
    assert len(api.show_plan(settings, pid).audit) == len(shown.audit)


def test_cancel_needs_a_signed_in_approver_and_a_running_plan(settings, tmp_path, monkeypatch):
    base = make_table(settings, n=1000, rows_per_file=500)
    pid = insert_plan(settings, base, [PlanGroup(tuple(p.path for p in base.partitions), "sort",
                                                 ("l_shipdate",))])
    with pytest.raises(PlanError, match="is proposed; only a running plan can be cancelled"):
        api.cancel_plan(settings, pid, sign_in(settings, "alice"))
    with pytest.raises(ApprovalError):
        api.cancel_plan(settings, pid, None)
    monkeypatch.setenv("LAYOUT_ADVISOR_SECRET_FILE", secret_file(tmp_path))
    assert main(["--home", str(settings.home), "plan", "cancel", str(pid), "--as", "alice"]) == 2
    assert api.show_plan(settings, pid).status == "proposed"


def test_the_dashboard_shows_the_eta_and_its_cancel_button_stops_the_run(settings, spark,
                                                                        monkeypatch):
    base, pid, run, root, files_before = _held_run(settings, spark, monkeypatch)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    at = plan_page("lineitem", pid, WAIT_S)
    assert at.button(key="cancel_run").disabled  # nobody signed in
    at.sidebar.text_input(key="signin_name").input("bob")
    at.sidebar.text_input(key="signin_secret").input(SECRET).run()
    at.sidebar.button(key="signin").click().run()
    assert not at.exception, [e.value for e in at.exception]
    eta = api.run_eta(settings, pid)
    line = next(c.value for c in at.caption if "rows written" in c.value)
    assert (f"group {eta.groups_done} of {eta.groups_total} verified · "
            f"{eta.rows_written:,} of {eta.rows_total:,} rows written") in line
    assert "left (" in line
    assert at.get("progress")[0].value == int(eta.fraction * 100)  # Streamlit keeps percent

    at.text_input(key="cancel_reason").input("wrong table")
    at.button(key="cancel_run").click().run(timeout=WAIT_S)
    assert not at.exception, [e.value for e in at.exception]
    run.wait(WAIT_S)
    assert isinstance(run.error, RunCancelled)
    shown = api.show_plan(settings, pid)
    assert shown.status == "cancelled" and shown.result["cancelled_by"] == "bob"
    assert shown.audit[-1]["reason"].endswith("(wrong table)")
    assert TableStore(settings).current_id("lineitem") == base.id
    assert _files_under(root) == files_before
    shown_text = " ".join(w.value for w in at.warning) + " ".join(i.value for i in at.info)
    assert "Cancelled by bob" in shown_text and "cancelled by bob" in shown_text
