"""A running plan: its progress with an ETA, and cancelling it.

``run_eta(ws, id)`` blends the calibrated cost model's prediction of the rewrite
time with the progress so far (rows written over the plan's rows while the write runs,
then the verified groups): early in a run the model speaks, later the observed rate.

``cancel_plan(ws, id, actor)`` lets a signed-in approver stop a running plan from
any process (the dashboard, or ``layout-advisor plan cancel ID --as NAME``): the request
is audited and left for the runner (:mod:`engine.spark.progress`), which cancels the run's
Spark jobs, removes what it wrote and stops before the commit, so the table stays at its
previous snapshot; the runner then settles the plan ``cancelled`` in one audited transition
under the canceller's name, with who asked and when (:func:`engine.plans.service.run_plan`;
:func:`settle_cancelled` for a runner gone before it could). A request that
arrives after the commit is too late: the plan stays ``succeeded`` and the audit says so.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import statistics
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import ApprovalError, PlanError
from engine.plans.plan import CANCELLED, FAILED, RUNNING, SUCCEEDED
from engine.plans.cost_check import priced_with_calibration
from engine.security import gate
from engine.spark.progress import (
    RunCancelled, clear_cancel_request, parse_write_message, read_cancel_request, request_cancel,
)

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["CANCELLED", "RunCancelled", "cancel_plan", "settle_cancelled", "run_eta", "eta_seconds",
           "after_commit", "prediction_history", "prediction_summary", "PREDICTION_TOLERANCE"]

#: share of a run's work taken by the write (the rest: verification, footers, commit)
WRITE_SHARE = 0.9
#: below this share done, the ETA is the model's alone
MIN_OBSERVED = 0.05


def eta_seconds(elapsed_s: float, predicted_s: float, fraction: float) -> float:
    """Seconds left: the model's remainder ``predicted - elapsed`` blended with the observed
    rate's remainder ``elapsed * (1 - f) / f``, weighted by the share done ``f``.

    >>> eta_seconds(10.0, 30.0, 0.0)
    20.0
    >>> eta_seconds(10.0, 30.0, 0.5)  # half done in 10 s: 10 s observed, 20 s modelled
    15.0
    >>> eta_seconds(50.0, 30.0, 0.0)
    0.0
    """
    model_left = max(0.0, predicted_s - elapsed_s)
    f = min(1.0, max(0.0, fraction))
    if f < MIN_OBSERVED:
        return model_left
    observed_left = elapsed_s * (1.0 - f) / f
    return f * observed_left + (1.0 - f) * model_left


def _plan_rows(ws: "Workspace", plan: Any) -> int:
    """Rows of the plan's partitions in its base snapshot (read once per plan)."""
    rows_of = ws.cache("plan-rows", dict)  # per plan id: a base snapshot never changes
    key = int(plan.id)
    if key not in rows_of:
        snap = ws.tables.snapshot(plan.table, plan.base_snapshot)
        wanted = set(plan.partitions)
        zonemaps = snap.zonemaps()  # arrays: no Partition object per file
        rows_of[key] = sum(int(rows) for path, rows in zip(zonemaps.paths, zonemaps.rows)
                              if path in wanted)
    return rows_of[key]


def _elapsed(started_at: str | None) -> float:
    if not started_at:
        return 0.0
    start = dt.datetime.fromisoformat(str(started_at).replace("Z", "+00:00"))
    if start.tzinfo is None:
        start = start.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (dt.datetime.now(dt.timezone.utc) - start).total_seconds())


def run_eta(ws: "Workspace", id: int) -> dict[str, Any]:
    """A run's progress and ETA: ``status``, ``groups_done``/``groups_total``,
    ``rows_written``/``rows_total``, ``fraction`` done, ``elapsed_s``, ``predicted_s`` (the
    plan's modelled rewrite time), ``eta_s`` (:func:`eta_seconds`; 0 once it ended),
    ``calibrated`` (rates measured by ``layout-advisor calibrate``), ``message``."""
    book = ws.plans
    plan = book.get(int(id))
    prog = book.control.progress(plan.id) or {}
    rows_total = _plan_rows(ws, plan)
    done, total = int(prog.get("groups_done") or 0), int(prog.get("groups_total") or len(plan.groups))
    write = parse_write_message(prog.get("message"))
    rows_written = write[2] if write else (rows_total if total and done >= total else 0)
    if plan.status != RUNNING:
        fraction = 1.0 if plan.status == SUCCEEDED else 0.0
    elif total and done >= total:
        fraction = WRITE_SHARE + (1 - WRITE_SHARE) / 2  # verified; footers and commit left
    elif write:
        fraction = WRITE_SHARE * min(1.0, rows_written / rows_total) if rows_total else 0.0
    else:
        fraction = 0.0  # starting Spark, reading, fitting
    elapsed = _elapsed(prog.get("started_at")) if plan.status == RUNNING else 0.0
    predicted = float(plan.proposal.estimated_cost.cpu_seconds)
    return {"id": plan.id, "status": plan.status, "groups_done": done, "groups_total": total,
            "rows_written": int(rows_written), "rows_total": int(rows_total),
            "fraction": float(fraction), "elapsed_s": elapsed, "predicted_s": predicted,
            "eta_s": eta_seconds(elapsed, predicted, fraction) if plan.status == RUNNING else 0.0,
            "calibrated": bool(priced_with_calibration(plan)), "message": prog.get("message") or ""}


def cancel_plan(ws: "Workspace", id: int, actor: object, reason: str | None = None,
                wait_s: float = 120.0, poll_s: float = 0.2) -> dict[str, Any]:
    """Ask the runner of plan ``id`` to stop (a signed-in approver: whoever may run may
    cancel), wait up to ``wait_s`` for it to stop, and settle the plan (see the module
    docstring). Returns :func:`settle_cancelled`'s answer, or ``status`` "running" with
    ``cancel`` "requested" if the runner has not stopped yet (the request stands)."""
    book = ws.plans
    name = gate.require(ws, actor, "run")
    plan = book.get(int(id))
    if plan.status != RUNNING:
        raise PlanError(f"plan {plan.id} is {plan.status}; only a running plan can be cancelled")
    request = request_cancel(ws.settings.home, plan.id, name, reason)
    book.control.record(name, "cancel-request", reason or "cancel requested", plan_id=plan.id)
    deadline = time.monotonic() + max(0.0, wait_s)
    while book.get(plan.id).status == RUNNING and time.monotonic() < deadline:
        time.sleep(poll_s)
    if book.get(plan.id).status == RUNNING:
        return {"id": plan.id, "status": RUNNING, "cancel": "requested", **request}
    return settle_cancelled(ws, plan.id)


def settle_cancelled(ws: "Workspace", id: int) -> dict[str, Any]:
    """Settle a cancelled run whose runner could not: the runner itself settles a cancel
    as ``cancelled`` in one transition (:func:`engine.plans.service.run_plan`); a run left
    ``failed`` with the cancellation as its error (its runner gone before it could settle
    it) becomes ``cancelled`` here, under the canceller's name (audited); a run that
    committed first stays ``succeeded`` and the audit records the late request.
    Idempotent; the request is removed once settled. Returns ``id``, ``status``,
    ``cancelled`` and, once cancelled or settled, who asked (``by``) and when (``at``)."""
    book = ws.plans
    plan = book.get(int(id))
    request = read_cancel_request(ws.settings.home, plan.id)
    if request is None or plan.status == RUNNING:
        return _settled(plan)
    error = str((plan.result or {}).get("error", ""))
    if plan.status == FAILED and "cancelled by" in error:
        with contextlib.suppress(ApprovalError):  # settled by the other side meanwhile
            book.cancel(plan.id, (FAILED,), request, error)
    elif plan.status == SUCCEEDED:
        book.control.record(str(request.get("by")), "cancel-too-late",
                            f"the run committed before the cancel requested at "
                            f"{request.get('at')} took effect", plan_id=plan.id)
    clear_cancel_request(ws.settings.home, plan.id)
    return {**_settled(book.get(plan.id)), "by": str(request.get("by")),
            "at": str(request.get("at"))}


def _settled(plan: Any) -> dict[str, Any]:
    """A plan's cancel outcome; who cancelled it and when, read back from its result."""
    out: dict[str, Any] = {"id": plan.id, "status": plan.status, "cancelled": plan.status == CANCELLED}
    if plan.status == CANCELLED:
        out.update(by=(plan.result or {}).get("cancelled_by"), at=(plan.result or {}).get("cancelled_at"))
    return out


def after_commit(run: Any, then: Callable[[], None]) -> threading.Thread:
    """Call ``then()`` once a background run (:class:`engine.plans.service.BackgroundRun`:
    ``wait()``, ``error``, ``result``) has ended with a commit, in a daemon thread; a failed,
    refused or cancelled run calls nothing. Returns the thread (joined by tests)."""
    def work() -> None:
        run.wait()
        if run.error is None and run.result is not None:
            then()

    thread = threading.Thread(target=work, name="warm-summaries-after-run", daemon=True)
    thread.start()
    return thread


#: a prediction counts as good within this relative error (section 2's goal)
PREDICTION_TOLERANCE = 0.30


def prediction_history(ws: "Workspace", table: str | None = None) -> dict[str, Any]:
    """Every run's predicted rewrite time beside the measured one, oldest first.

    Each run stores ``cost_check`` (:func:`engine.plans.cost_check.cost_check`) in its
    result; this lists them with the relative error ``(predicted - measured) / measured``
    and summarizes: runs, median and mean absolute error, runs within
    :data:`PREDICTION_TOLERANCE`. Runs before any calibration are marked as such.
    """
    runs = []
    for plan in ws.plans.list(table):
        check = (plan.result or {}).get("cost_check")
        if not check:
            continue
        runs.append({"plan_id": plan.id, "table": plan.table, "policy": plan.policy,
                     "status": plan.status, "ran_at": plan.updated_at,
                     "groups": len(plan.groups), "partitions": len(plan.partitions),
                     "bytes": float(check.get("predicted_bytes_read", 0.0) or 0.0),
                     "predicted_seconds": float(check.get("predicted_seconds", 0.0) or 0.0),
                     "measured_seconds": float(check.get("measured_wall_seconds", 0.0) or 0.0),
                     "measured_cpu_seconds": float(check.get("measured_cpu_seconds", 0.0) or 0.0),
                     "spark_jobs": int(check.get("spark_jobs", 0) or 0),
                     "calibrated": check.get("calibrated"), "error": check.get("error"),
                     # the run's session, and which prediction it was compared with
                     "fresh_session": check.get("fresh_session"),
                     "compared_with": check.get("compared_with", "warm"),
                     "predicted_warm_seconds": check.get("predicted_warm_seconds"),
                     "predicted_cold_seconds": check.get("predicted_cold_seconds")})
    return {"runs": runs, "summary": prediction_summary(runs)}


def prediction_summary(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of :func:`prediction_history`'s runs: how many, how many with an error,
    the median and mean of ``|error|`` (None without one; the median of an even count is the
    mean of the middle two, as the savings history's,
    :func:`engine.plans.savings_history.summarize`) and how many are within
    :data:`PREDICTION_TOLERANCE`.

    >>> s = prediction_summary([{"error": e} for e in (0.1, -0.5, None, 0.2, -0.3)])
    >>> s["runs"], s["with_error"], round(s["median_abs_error"], 6), round(s["mean_abs_error"], 6)
    (5, 4, 0.25, 0.275)
    >>> s["within_tolerance"], prediction_summary([])["median_abs_error"]
    (3, None)
    """
    errors = [abs(float(r["error"])) for r in runs if r["error"] is not None]
    return {"runs": len(runs), "with_error": len(errors),
            "median_abs_error": statistics.median(errors) if errors else None,
            "mean_abs_error": statistics.fmean(errors) if errors else None,
            "within_tolerance": sum(e <= PREDICTION_TOLERANCE for e in errors),
            "tolerance": PREDICTION_TOLERANCE}
