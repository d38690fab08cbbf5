"""The run's measured cost and its progress, from Spark's own status store."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, Callable

from engine.core.periodic import Periodic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

class JobMetrics:
    """Wall time, executor CPU time, bytes read and written and the jobs of a job group.

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
        cpu_ns = read = written = rows_out = 0
        for job in jobs:
            info = tracker.getJobInfo(job)
            for sid in (info.stageIds if info else []):
                try:
                    st = store.lastStageAttempt(int(sid))
                except Exception:  # noqa: BLE001 - a skipped stage has no attempt
                    continue
                cpu_ns += int(st.executorCpuTime())
                read += int(st.inputBytes())
                written += int(st.outputBytes())
                rows_out += int(st.outputRecords())
        return {"wall_seconds": round(wall, 3), "executor_cpu_seconds": round(cpu_ns / 1e9, 3),
                "bytes_read": read, "bytes_written": written, "rows_written": rows_out,
                "spark_jobs": len(jobs)}


class WriteWatcher(Periodic):
    """Polls Spark while the write runs: tasks done and rows written so far."""

    def __init__(self, spark: "SparkSession", report: Callable[[int, int, int], None]) -> None:
        self.spark, self.report = spark, report
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
        if total:
            self.report(done, total, rows)

