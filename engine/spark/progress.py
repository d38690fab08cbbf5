"""The run's measured cost, its progress, and its cancellation.

:class:`JobMetrics` reads the job group's cost from Spark's status store,
:class:`WriteWatcher` reports tasks and rows while the write runs (:func:`write_message`),
and :class:`CancelWatcher` stops a run an approver cancelled: it tags the run's Spark jobs, cancels them when a request appears
(:func:`request_cancel`), and the executor's check before the commit turns the request into
:class:`RunCancelled`, after the executor's cleanup removed what was written.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from engine.core.errors import ExecutionError
from engine.core.faults import injected
from engine.core.periodic import Periodic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the task metrics summed over a job group's stages besides CPU time and bytes (Spark's
#: ``StageData`` getters -> the measured result's keys): a sort that does not fit the
#: execution memory spills, and a spill costs far more than the priced sort
STAGE_SUMS = {"memoryBytesSpilled": "memory_bytes_spilled",
              "diskBytesSpilled": "disk_bytes_spilled",
              "shuffleWriteBytes": "shuffle_write_bytes",
              "shuffleReadBytes": "shuffle_read_bytes"}
#: the same, in milliseconds (Spark's unit) -> seconds
STAGE_MS = {"executorRunTime": "executor_run_seconds", "jvmGcTime": "jvm_gc_seconds"}


def stage_totals(stages: "list[Any]") -> dict[str, Any]:
    """Sum the task metrics of ``stages`` (objects with Spark's ``StageData`` getters) into
    the measured result's keys: CPU seconds, bytes read and written, rows written, spill
    bytes (memory and disk), shuffle bytes, task run time and GC time.

    Example (two stages; the second spilled):
    >>> class St:
    ...     def __init__(self, **kw): self.kw = kw
    ...     def __getattr__(self, name): return lambda: self.kw.get(name, 0)
    >>> t = stage_totals([St(executorCpuTime=2_000_000_000, inputBytes=10, executorRunTime=2500),
    ...                   St(executorCpuTime=500_000_000, memoryBytesSpilled=300,
    ...                      diskBytesSpilled=40, shuffleWriteBytes=7, jvmGcTime=250)])
    >>> (t["executor_cpu_seconds"], t["bytes_read"], t["memory_bytes_spilled"],
    ...  t["disk_bytes_spilled"], t["shuffle_write_bytes"], t["executor_run_seconds"],
    ...  t["jvm_gc_seconds"])
    (2.5, 10, 300, 40, 7, 2.5, 0.25)
    """
    cpu_ns = read = written = rows_out = 0
    sums = dict.fromkeys(STAGE_SUMS.values(), 0)
    ms = dict.fromkeys(STAGE_MS.values(), 0)
    for st in stages:
        cpu_ns += int(st.executorCpuTime())
        read += int(st.inputBytes())
        written += int(st.outputBytes())
        rows_out += int(st.outputRecords())
        for getter, key in STAGE_SUMS.items():
            sums[key] += int(getattr(st, getter)())
        for getter, key in STAGE_MS.items():
            ms[key] += int(getattr(st, getter)())
    return {"executor_cpu_seconds": round(cpu_ns / 1e9, 3), "bytes_read": read,
            "bytes_written": written, "rows_written": rows_out, **sums,
            **{k: round(v / 1e3, 3) for k, v in ms.items()}}


class JobMetrics:
    """Wall time, executor CPU time, bytes read and written, spill and shuffle bytes and
    the jobs of a job group.

    Spark's status store keeps each stage's task metrics (also with the UI disabled); the
    jobs are found through the job group this object sets on the calling thread.
    """

    def __init__(self, spark: "SparkSession", label: str) -> None:
        self.spark, self.group = spark, f"la-{label}-{uuid.uuid4().hex[:8]}"
        self.started = time.perf_counter()
        spark.sparkContext.setJobGroup(self.group, label, interruptOnCancel=False)

    def close(self) -> dict[str, Any]:
        sc = self.spark.sparkContext
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        wall = time.perf_counter() - self.started
        tracker, store = sc.statusTracker(), sc._jsc.sc().statusStore()
        jobs = sorted(tracker.getJobIdsForGroup(self.group))
        stages = []
        for job in jobs:
            info = tracker.getJobInfo(job)
            for sid in (info.stageIds if info else []):
                try:
                    stages.append(store.lastStageAttempt(int(sid)))
                except Exception:  # noqa: BLE001 - a skipped stage has no attempt
                    continue
        return {"wall_seconds": round(wall, 3), **stage_totals(stages),
                "spark_jobs": len(jobs)}


class WriteWatcher(Periodic):
    """Polls Spark while the write runs: tasks done and rows written so far.

    Rows are what Spark's writer counts (the stages' ``outputRecords``, as its tasks write).
    With ``rows_at_task_end`` (the Arrow writer, :mod:`engine.spark.arrow_write`, whose
    pyarrow files Spark does not count) they are the shuffled rows read by its finished
    write tasks (those that shuffle nothing on): such a task writes every row it reads
    before it ends, so the count advances task by task. Read from Spark's status store: the
    tasks' own row counts reach the driver only with the job's result."""

    def __init__(self, spark: "SparkSession", report: Callable[[int, int, int], None],
                 rows_at_task_end: bool = False) -> None:
        self.spark, self.report = spark, report
        self.rows_at_task_end = rows_at_task_end
        self._finished: dict[int, int] = {}  # task id -> shuffled rows it read, once finished
        super().__init__(self._poll, 1.0, "la-write-watch")

    def _poll(self) -> None:
        """One look at the active stages (a failed look is skipped by :class:`Periodic`)."""
        sc = self.spark.sparkContext
        store = sc._jsc.sc().statusStore()
        done = total = rows = 0
        for sid in sc.statusTracker().getActiveStageIds():
            st = store.lastStageAttempt(int(sid))
            done += int(st.numCompleteTasks())
            total += int(st.numTasks())
            rows += int(st.outputRecords())
            if self.rows_at_task_end:
                self._count_finished(sc, store, st)
        if total:
            self.report(done, total, rows + sum(self._finished.values()))

    def _count_finished(self, sc: Any, store: Any, st: Any) -> None:
        """Add the stage's newly finished tasks' shuffled rows read to ``_finished``."""
        v1 = sc._jvm.org.apache.spark.status.api.v1
        success = sc._jvm.java.util.ArrayList()
        success.add(v1.TaskStatus.SUCCESS)
        tasks = store.taskList(int(st.stageId()), int(st.attemptId()), 0, int(st.numTasks()),
                               v1.TaskSorting.ID, success)
        for i in range(int(tasks.size())):
            task = tasks.apply(i)
            tid = int(task.taskId())
            if tid not in self._finished:
                metrics = task.taskMetrics()
                m = metrics.get() if metrics.isDefined() else None
                # a task that shuffles its rows on (a stage before the write) wrote no file
                moved = m is not None and int(m.shuffleWriteMetrics().recordsWritten())
                self._finished[tid] = (int(m.shuffleReadMetrics().recordsRead())
                                       if m is not None and not moved else 0)


# ------------------------------------------------------------------ messages and cancel
#: the progress message while the write runs (the executor's, read back by the ETA)
WRITE_MESSAGE = "writing: {done}/{tasks} tasks, {rows:,} rows written"
_WRITE_RE = re.compile(r"writing: (\d+)/(\d+) tasks, ([\d,]+) rows written")


def write_message(done: int, tasks: int, rows: int) -> str:
    """The progress message of a running write.

    >>> write_message(3, 8, 12000)
    'writing: 3/8 tasks, 12,000 rows written'
    """
    return WRITE_MESSAGE.format(done=done, tasks=tasks, rows=rows)


def parse_write_message(message: str | None) -> tuple[int, int, int] | None:
    """(tasks done, tasks, rows written) of :func:`write_message`'s text, else None.

    >>> parse_write_message(write_message(3, 8, 12000)), parse_write_message("starting")
    ((3, 8, 12000), None)
    """
    m = _WRITE_RE.search(message or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3).replace(",", ""))) if m else None


class RunCancelled(ExecutionError):
    """A run stopped because an approver cancelled it: nothing was committed and the
    files it wrote were removed (the executor's own cleanup)."""


def cancel_request_path(home: str | Path, plan_id: int) -> Path:
    """Where a cancel request for ``plan_id`` is left in the workspace (any process may
    write it; the runner's :class:`CancelWatcher` polls it). A file, not the control
    store: the Spark layer sits below the plans layer and reads no plan state."""
    return Path(home).expanduser() / "runs" / f"cancel-plan-{int(plan_id)}.json"


def request_cancel(home: str | Path, plan_id: int, who: str, reason: str | None = None) -> dict[str, Any]:
    """Leave a cancel request (who, when, why) for ``plan_id``'s runner; returns it."""
    path = cancel_request_path(home, plan_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    request = {"plan_id": int(plan_id), "by": who, "at": utc_iso(), "reason": reason or ""}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(request))
    os.replace(tmp, path)  # a reader sees the whole request or none
    return request


def read_cancel_request(home: str | Path, plan_id: int) -> dict[str, Any] | None:
    """The pending cancel request for ``plan_id`` (None if there is none)."""
    try:
        return json.loads(cancel_request_path(home, plan_id).read_text())
    except (FileNotFoundError, ValueError):
        return None


def clear_cancel_request(home: str | Path, plan_id: int) -> None:
    cancel_request_path(home, plan_id).unlink(missing_ok=True)


def utc_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


#: with the test fault ``hold-before-commit`` (:mod:`engine.core.faults`), seconds a run
#: waits at its last cancel check for a cancel request
HOLD_LIMIT_S = 120.0


class CancelWatcher(Periodic):
    """Watches for a cancel request while a plan runs, and stops its Spark jobs.

    On entry every Spark job the running thread submits is tagged ``la-plan-<id>``
    (``SparkContext.addJobTag``); every ``poll_s`` (a :class:`~engine.core.periodic.Periodic`
    tick) it reads :func:`cancel_request_path` and, when a request appears, cancels the jobs
    with that tag (``cancelJobsWithTag``: running tasks are killed, the write raises).
    :meth:`check` raises :class:`RunCancelled` once a request was seen; the executor calls
    it before the commit, after which a request comes too late. On exit, an error raised by
    the cancelled job is reported as :class:`RunCancelled` (chained to Spark's error).
    """

    def __init__(self, spark: "SparkSession", home: str | Path, plan_id: int,
                 poll_s: float = 0.5) -> None:
        self.spark, self.home, self.plan_id = spark, home, int(plan_id)
        self.tag = f"la-plan-{self.plan_id}"
        self.request: dict[str, Any] | None = None
        self._seen = threading.Event()
        super().__init__(self._poll, poll_s, f"la-cancel-{self.plan_id}")

    def __enter__(self) -> "CancelWatcher":
        self.spark.sparkContext.addJobTag(self.tag)
        super().__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        super().__exit__(exc_type, exc, tb)
        try:
            self.spark.sparkContext.removeJobTag(self.tag)
        except Exception:  # noqa: BLE001 - the session may be stopping; nothing to undo
            pass
        if exc is not None and self.request is not None and not isinstance(exc, RunCancelled):
            raise self.cancelled() from exc
        return False

    def _poll(self) -> None:
        """One look for a request; the first one found cancels the tagged jobs (later
        ticks do nothing: the jobs are cancelled and :meth:`check` stops the run)."""
        if self._seen.is_set():
            return
        request = read_cancel_request(self.home, self.plan_id)
        if request is None:
            return
        self.request = request
        self._seen.set()
        try:
            self.spark.sparkContext.cancelJobsWithTag(self.tag)
        except Exception:  # noqa: BLE001 - no job running: check() still stops the run
            pass

    def cancelled(self) -> RunCancelled:
        req = self.request or {}
        return RunCancelled(f"plan {self.plan_id} cancelled by {req.get('by', '?')} at "
                            f"{req.get('at', '?')}: nothing was committed and the files it "
                            "wrote were removed")

    def check(self) -> None:
        """Raise :class:`RunCancelled` if a cancel request arrived (the executor's last
        call before the commit; with the test fault ``hold-before-commit``, wait for one
        first, so a test cancels a written and verified run without depending on timing)."""
        if injected("hold-before-commit"):
            self._seen.wait(HOLD_LIMIT_S)
        if self.request is None:
            self.request = read_cancel_request(self.home, self.plan_id)
        if self.request is not None:
            raise self.cancelled()
