"""Run a plan on Spark: every group in ONE rewrite job, verified, ONE commit.

The caller (``engine.plans.service.run_plan``) owns the plan's state transitions; this
module owns the files: it checks the plan against the current snapshot, runs the rewrite
job (:func:`engine.spark.rewrite.rewrite`: one scan, one shuffle and write, one
verification aggregate), reads the new files' zonemaps, and only when every group is
verified commits ONE snapshot through the table's format, replacing exactly the plan's
partitions (:class:`engine.spark.commit.BatchFiles`: the critical section). Any failure
before the format's write returns commits nothing and deletes what was written; from that
moment on nothing is deleted: SIGINT and SIGTERM wait until the commit is recorded, and a
check after the commit that fails is reported as "committed, verification failed"
(:class:`engine.core.errors.CommitVerificationError`). The progress event of a commit
carries ``committed`` (the snapshot id) and ``final`` (the plan's last batch).

``partial_progress_groups`` = N > 0 processes the groups in batches of N, each batch
written, verified and committed on its own (Iceberg's ``partial-progress.enabled``): a
failure keeps the batches already committed.

The job's steps live in their own modules: :mod:`engine.spark.reading` (one scan, group
from the file path), :mod:`engine.spark.fitting` (Hilbert, Z-order, Qd-tree, PAW keys),
:mod:`engine.spark.slicing` (file sizes, key ranges, tasks), :mod:`engine.spark.writing`
(shuffle, sort, write), :mod:`engine.spark.verification` (rows and checksums per group),
:mod:`engine.spark.progress` (Spark's task metrics, progress while writing),
:mod:`engine.spark.hadoop_files` (listing, moving, removing files).

Before anything is written, every input's footer is read (:func:`reading.check_inputs`): a
file deleted under the table, or inputs whose Arrow types differ, refuse the run in one
line. A job that fails because an input vanished while it ran is reported the same way,
naming the file (:func:`_named_failure`).

Test hooks: crash points and the verification faults ``drop-row`` / ``fail-group:N``, all in
:mod:`engine.core.faults` (never set them in production).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import DataFileError, ExecutionError, PlanError, StalePlanError
from engine.core.faults import crash_point, injected
from engine.policy.costmodel import batches
from engine.spark import arrow_types, footers_parallel, reading
from engine.spark.checksum import content_checksum
from engine.spark.commit import BatchFiles
from engine.spark.hadoop_files import list_data_files, remove_dir
from engine.spark.options import DEFAULT_OPTIONS, ExecutorOptions
from engine.spark.progress import CancelWatcher, write_message
from engine.spark.rewrite import GroupResult, RewriteResult, rewrite
from engine.spark.session import get_spark
from engine.spark.slicing import boundaries
from engine.spark.writing import JOB_CONF, range_partition, session_conf
from engine.table.store import TableStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.plans.plan import Plan
    from engine.table.model import Partition, Snapshot, TableSchema

#: names other modules import from here (kept when the executor was split into modules)
__all__ = ["JOB_CONF", "GroupResult", "RewriteResult", "boundaries",
           "content_checksum", "execute_plan", "SparkExecutor", "list_data_files", "note_rewrite",
           "range_partition", "rewrite", "session_conf", "session_fresh"]

ProgressFn = Callable[[Mapping[str, Any]], None]

#: the Spark applications (one per JVM) of this process that have run a rewrite job: the
#: first rewrite of a fresh session pays the JIT and the Python workers' start-up, which the calibrated
#: price of a warm job does not hold (``cold_start_s`` does: :mod:`engine.spark.calibrate`)
_WARM_APPS: set[str] = set()


def session_fresh(spark: "SparkSession") -> bool:
    """Whether no rewrite job has run yet in ``spark``'s application (this JVM), so the
    next one pays the cold start: a CLI ``plan run`` starts its own session (fresh); the
    dashboard's stays up (fresh only for its first run)."""
    return spark.sparkContext.applicationId not in _WARM_APPS


def note_rewrite(spark: "SparkSession") -> None:
    """Record that a rewrite job ran in ``spark``'s application (its session is warm)."""
    _WARM_APPS.add(spark.sparkContext.applicationId)


def plan_inputs(snapshot: "Snapshot", paths: Sequence[str]) -> dict[str, "Partition"]:
    """The snapshot's :class:`Partition` of each of ``paths`` it holds (a path it lacks is
    left out: the plan is stale), made for these paths only.

    The snapshot's paths are read from its zonemap arrays, in snapshot order, and only the
    plan's rows of ``snapshot.partitions`` are made into objects: a dict over every
    partition would make one ``Partition`` per file of the table on every run (seconds at
    1,000,000 files, and on a zonemap-cache hit a read of the manifest).

    Example (a snapshot of three partitions, a plan naming two and one it lacks):
    >>> from engine.table.model import Partition, Snapshot, TableSchema
    >>> parts = tuple(Partition(f"/t/p{i}.parquet", 10, 100, {}) for i in range(3))
    >>> snap = Snapshot("1", None, "", "create", "t", TableSchema((("i", "int"),)), parts)
    >>> sorted(plan_inputs(snap, ["/t/p2.parquet", "/t/p0.parquet", "/t/gone.parquet"]))
    ['/t/p0.parquet', '/t/p2.parquet']
    """
    wanted = set(paths)
    rows = [i for i, p in enumerate(snapshot.zonemaps().paths.tolist()) if p in wanted]
    parts = snapshot.partitions
    return {p.path: p for p in (parts[i] for i in rows)}


def _validate_groups(plan: "Plan", by_path: Mapping[str, "Partition"]) -> None:
    seen: set[str] = set()
    for i, group in enumerate(plan.groups):
        if not group.partitions:
            raise PlanError(f"plan {plan.id}: group {i} has no partitions")
        for path in group.partitions:
            if path not in by_path:
                raise StalePlanError(f"plan {plan.id}: partition {path} is not in base "
                                     f"snapshot {plan.base_snapshot}")
            if path in seen:
                raise PlanError(f"plan {plan.id}: partition {path} is in two groups")
            seen.add(path)


def execute_plan(settings: "Settings", plan: "Plan", spark: "SparkSession | None" = None,
                 progress: ProgressFn | None = None,
                 approvers: Sequence[str] = (),
                 may_commit: Callable[[], None] | None = None, *,
                 store: TableStore,
                 options: ExecutorOptions = DEFAULT_OPTIONS) -> dict[str, Any]:
    """Rewrite the plan's groups in one job and commit one snapshot; returns the result.

    The caller (``engine.plans.service.run_plan``) owns the plan's state transitions; this
    function owns the files: it writes, verifies, commits, and on any failure removes what
    it wrote (and has not committed) before re-raising. With
    ``settings.partial_progress_groups`` = N > 0 the groups are committed N at a time.
    ``may_commit()`` is called just before each commit and raises to stop it (the caller's
    plan was settled by someone else meanwhile: a runner taken for dead must not commit).
    A cancel request (:class:`engine.spark.progress.CancelWatcher`) stops the Spark jobs
    and raises ``RunCancelled`` before the next commit, after the same cleanup. ``store``:
    the home's table catalog (:attr:`engine.workspace.Workspace.tables`); ``options``: the
    executor's strategies (:class:`engine.spark.options.ExecutorOptions`).
    """
    info = store.info(plan.table)
    target = store.write_target(plan.table)  # the sizes the plan was priced at
    current = store.current_snapshot(plan.table)
    if current.id != plan.base_snapshot:
        raise StalePlanError(f"plan {plan.id} is based on snapshot {plan.base_snapshot} but "
                             f"table {plan.table} is at {current.id}; create a new plan")
    by_path = plan_inputs(current, plan.partitions)  # the plan's inputs only
    _validate_groups(plan, by_path)
    # before anything is written (not even the run's folder) or Spark started:
    arrow_types.refuse_unsupported(reading.check_inputs(list(plan.partitions)),
                                   plan.partitions[0])
    spark = spark or get_spark(settings)
    fresh = session_fresh(spark)
    with CancelWatcher(spark, settings.home, plan.id) as watch:
        total = len(plan.groups)
        state = {"done": 0, "rows": 0, "bytes": 0}
        started = time.perf_counter()

        def report(message: str, **extra: Any) -> None:
            if progress is not None:
                progress({"groups_done": state["done"], "groups_total": total,
                          "rows": state["rows"], "bytes": state["bytes"], "message": message,
                          **extra})

        def on_write(done: int, tasks: int, rows: int) -> None:
            report(write_message(done, tasks, rows))

        results: list[GroupResult] = []
        snapshots: list[str] = []
        measured: list[dict[str, Any]] = []
        base_id = plan.base_snapshot
        report(f"rewriting {len(plan.partitions)} partitions in {total} groups")
        for batch in batches(total, settings):  # the batches the plan was priced by
            inputs = [p for i in batch for p in plan.groups[i].partitions]
            out_dir = store.new_data_dir(plan.table, f"plan{plan.id}-b{batch.start}")
            final = batch.stop >= total
            # removed on any failure until the format's write returns, never after it
            with BatchFiles(store.format(plan.table), plan.table, out_dir,
                            lambda d: remove_dir(spark, d)) as files:
                pairs = [(plan.groups[i], [by_path[p] for p in plan.groups[i].partitions])
                         for i in batch]
                try:
                    run = rewrite(spark, current.schema, pairs, out_dir, info.target_rows,
                                  info.target_bytes, progress=on_write, first_index=batch.start,
                                  options=options, target=target)
                except Exception as exc:
                    raise _named_failure(exc, inputs) from None
                finally:
                    note_rewrite(spark)  # warm now, whether the job succeeded or not
                added = _footers(spark, store, plan.table, current.schema, run.groups)
                for r, group in zip(run.groups, (plan.groups[i] for i in batch)):
                    state["done"] += 1
                    state["rows"] += r.rows
                    state["bytes"] += r.bytes_in
                    report(f"group {r.index + 1}/{total}: {r.inputs} -> {r.outputs} files, "
                           f"{r.rows} rows, {group.layout} on {', '.join(group.columns)}")
                    if injected("fail-group", r.index):
                        raise ExecutionError(f"injected failure after group {r.index} (test fault)")
                crash_point("after_verify")
                watch.check()  # a cancel request stops the run here, before the commit
                if may_commit is not None:
                    may_commit()
                snapshot = files.commit(base_id, inputs, added, {
                    "plan_id": plan.id, "policy": plan.policy, "groups": len(batch),
                    "approver": ", ".join(approvers) or None, "created_by": plan.created_by,
                    "removed": len(inputs), "added": len(added),
                    "rows": sum(r.rows for r in run.groups)},
                    # each commit's event, sent the moment it is done (a failing progress
                    # sink is ignored there: it must not turn the commit into a failure)
                    on_commit=lambda sid: report(f"committed snapshot {sid}",
                                                 committed=sid, final=final))
            base_id = snapshot.id
            snapshots.append(snapshot.id)
            results.extend(run.groups)
            measured.append(run.measured)
        return _result(plan, snapshots, results, measured, time.perf_counter() - started,
                       fresh)


def _named_failure(exc: Exception, inputs: Sequence[str]) -> Exception:
    """A failed rewrite job as the user should see it: when an input file is gone (deleted
    under the running job), one line naming it instead of Spark's stack of Java frames;
    otherwise the error itself (an AdvisorError is already one line)."""
    missing = reading.missing_input(inputs)
    if missing is not None:
        return DataFileError(reading.missing_message(missing))
    return exc


def _footers(spark: "SparkSession", store: TableStore, table: str, schema: "TableSchema",
             groups: Sequence[GroupResult]) -> list["Partition"]:
    """The new files' zonemaps (from their footers), in group order; fills bytes_out."""
    next_seq = store.next_seq(table)
    added: list["Partition"] = []
    for r in groups:
        _, parts = footers_parallel.read_partitions(spark, r.files, schema=schema,
                                                    first_seq=next_seq)
        next_seq += len(parts)
        r.bytes_out = sum(p.bytes for p in parts)
        r.files = [p.path for p in parts]
        added.extend(parts)
    return added


#: the job metrics summed over a plan's batches into its measured result
#: (:class:`engine.spark.progress.JobMetrics`)
MEASURED_SUMS = ("executor_cpu_seconds", "bytes_read", "bytes_written", "spark_jobs",
                 "memory_bytes_spilled", "disk_bytes_spilled", "shuffle_write_bytes",
                 "shuffle_read_bytes", "executor_run_seconds", "jvm_gc_seconds")


def _result(plan: "Plan", snapshots: Sequence[str], results: Sequence[GroupResult],
            measured: Sequence[Mapping[str, Any]], seconds: float,
            fresh: bool | None = None) -> dict[str, Any]:
    """The run's result as stored with the plan (additive JSON: older keys kept);
    ``measured`` sums :data:`MEASURED_SUMS` over the batches (Spark's memory and disk
    spill bytes among them); ``measured["fresh_session"]``: the run's first job was its
    Spark session's first rewrite (:func:`session_fresh`), so its wall time holds the
    cold start."""
    total = {k: sum(m.get(k, 0) for m in measured) for k in MEASURED_SUMS}
    for k in ("executor_cpu_seconds", "executor_run_seconds", "jvm_gc_seconds"):
        total[k] = round(total[k], 3)
    total["wall_seconds"] = round(seconds, 3)
    total["fresh_session"] = fresh
    return {
        "snapshot_id": snapshots[-1],
        "snapshots": list(snapshots),
        "base_snapshot": plan.base_snapshot,
        "groups": [asdict(r) for r in results],
        "partitions_removed": len(plan.partitions),
        "partitions_added": sum(r.outputs for r in results),
        "rows": sum(r.rows for r in results),
        "bytes_read": sum(r.bytes_in for r in results),
        "bytes_written": sum(r.bytes_out for r in results),
        "seconds": round(seconds, 3),
        "measured": total,
    }


class SparkExecutor:
    """The :class:`engine.plans.ports.Executor` that rewrites on Spark (:func:`execute_plan`),
    over one home's settings and table catalog; the workspace wires it
    (:attr:`engine.workspace.Workspace.executor`); ``options``: its strategies
    (:class:`engine.spark.options.ExecutorOptions`, the product's by default)."""

    def __init__(self, settings: "Settings", store: TableStore,
                 options: ExecutorOptions = DEFAULT_OPTIONS) -> None:
        self.settings, self.store, self.options = settings, store, options

    def execute_plan(self, plan: "Plan", spark: "SparkSession | None" = None,
                     progress: ProgressFn | None = None, approvers: Sequence[str] = (),
                     may_commit: Callable[[], None] | None = None) -> dict[str, Any]:
        """:func:`execute_plan` of ``plan`` on this home."""
        return execute_plan(self.settings, plan, spark=spark, progress=progress,
                            approvers=approvers, may_commit=may_commit, store=self.store,
                            options=self.options)

    def verify_sample(self, plan: "Plan", indices: Sequence[int], fragments: Sequence[Any],
                      spark: "SparkSession | None" = None) -> Any:
        """:func:`engine.spark.verify_sample.measure_sample` on this home."""
        from engine.spark.verify_sample import measure_sample

        return measure_sample(self.store, plan, indices, fragments,
                              spark or get_spark(self.settings), self.settings.prune_row_groups)
