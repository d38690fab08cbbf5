"""The Spark executor on real Parquet files: rows kept, scans lowered, failures leave nothing.

The verification faults (``drop-row``, ``swap-rows``, ``fail-group:N``) come from :mod:`engine.core.faults`;
a crash between the verification and the commit (``after_verify``) is one of the SIGKILL
cases of tests/e2e/test_crash.py.
"""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from engine import api
from engine.core.errors import ExecutionError
from engine.core.faults import FAULT_ENV
from engine.policy.base import PlanGroup
from engine.spark.executor import boundaries, range_partition
from engine.table.store import TableStore
from engine.workspace import Workspace
from plan_helpers import insert_plan, make_table, rows_of, shipdate_fragments
from security_helpers import sign_in

pytestmark = pytest.mark.spark


def _files_under(root: str) -> set[str]:
    out = set()
    for dirpath, _, names in os.walk(root):
        out.update(os.path.join(dirpath, n) for n in names if n.endswith(".parquet"))
    return out


def _bytes_scanned(snapshot, fragments) -> int:
    """Independent oracle: bytes of the partitions whose l_shipdate zonemap meets a range."""
    total = 0
    for frag in fragments:
        rng = frag.boxes[0]["l_shipdate"]
        for p in snapshot.partitions:
            st = p.columns["l_shipdate"]
            if not (st.max < rng.min or st.min > rng.max):
                total += p.bytes
    return total


def _approved(settings, snap, groups) -> int:
    pid = insert_plan(settings, snap, groups)
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="test")
    return pid


def _run_written(settings, spark, pid, group_write: str):
    """Run plan ``pid``: through the api with the product's options ("packed"), else by
    the executor itself with ``ExecutorOptions(group_write=...)``, the way a benchmark
    selects the other many-group write."""
    from engine.plans.plan import Plan
    from engine.spark.executor import execute_plan
    from engine.spark.options import ExecutorOptions

    options = (ExecutorOptions(writer="arrow") if group_write == "arrow"
               else ExecutorOptions(group_write=group_write, writer="spark"))
    if options == ExecutorOptions():
        return api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    plan = Plan.from_row(Workspace(settings).control.get_plan(pid))
    return execute_plan(settings, plan, spark=spark, store=TableStore(settings),
                        options=options)


def test_sort_run_keeps_every_row_and_lowers_bytes_scanned(settings, spark):
    base = make_table(settings, n=4000, rows_per_file=500)  # 8 files
    chosen = [p.path for p in base.partitions[1:7]]  # 6 of 8: the others must stay as they are
    pid = _approved(settings, base, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",), "test")])
    events = []
    result = api.run_plan(settings, pid, progress=events.append, spark=spark,
                          actor=sign_in(settings, "alice"))

    store = TableStore(settings)
    after = store.current_snapshot("lineitem")
    assert after.id == result["snapshot_id"] != base.id and after.parent == base.id
    assert after.operation == "recluster" and after.summary["plan_id"] == pid
    # exactly the plan's partitions were replaced; untouched ones kept in place
    after_paths = [p.path for p in after.partitions]
    assert after_paths[0] == base.partitions[0].path
    assert after_paths[-1] == base.partitions[-1].path
    assert not set(chosen) & set(after_paths)
    new = [p for p in after.partitions if p.path not in {q.path for q in base.partitions}]
    assert 5 <= len(new) <= 7  # as many outputs as inputs, give or take one
    assert sum(p.rows for p in new) == 3000
    # the new files are sorted ranges: their l_shipdate zonemaps do not overlap
    spans = sorted((p.columns["l_shipdate"].min, p.columns["l_shipdate"].max) for p in new)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    for p in new:  # and each file in order (a one-group job sorts without partitionBy)
        dates = pq.read_table(p.path, columns=["l_shipdate"]).column(0).to_pylist()
        assert dates == sorted(dates), p.path
    # every row kept: the multiset of rows is unchanged
    before_rows = rows_of([p.path for p in base.partitions])
    after_rows = rows_of(after_paths)
    assert len(after_rows) == 4000
    assert before_rows.equals(after_rows)
    # the base snapshot is still readable as it was (its files are untouched)
    assert rows_of([p.path for p in store.snapshot("lineitem", base.id).partitions]).equals(
        before_rows)
    # shipdate range queries scan fewer bytes
    frags = shipdate_fragments("lineitem", n=30)
    assert _bytes_scanned(after, frags) < 0.6 * _bytes_scanned(base, frags)
    # progress after every group, recorded in the control store too
    assert [e["groups_done"] for e in events if not e["message"].startswith("writing")] == [
        0, 1, 1]
    # measured with Spark's task metrics: one write job and one verification job
    measured = result["measured"]
    assert measured["spark_jobs"] <= 2, measured
    assert measured["bytes_written"] > 0 and measured["executor_cpu_seconds"] > 0
    # Spark's spill and shuffle bytes are recorded (a 3,000-row sort spills nothing here;
    # forcing a spill needs its own session's memory settings: stage_totals' doctest)
    for key in ("memory_bytes_spilled", "disk_bytes_spilled", "shuffle_read_bytes"):
        assert isinstance(measured[key], int) and measured[key] >= 0, (key, measured)
    assert measured["shuffle_write_bytes"] > 0  # the sort's exchange
    assert 0 < measured["executor_run_seconds"] and 0 <= measured["jvm_gc_seconds"]
    prog = api.plan_progress(settings, pid)
    assert (prog["status"], prog["groups_done"], prog["groups_total"], prog["rows"]) == (
        "succeeded", 1, 1, 3000)
    shown = api.show_plan(settings, pid)
    assert shown.result["snapshot_id"] == after.id
    assert [e["action"] for e in shown.audit] == ["create", "approve", "run", "succeed"]
    # the prediction-error history lists the run: predicted beside measured, with the error
    history = api.prediction_history(settings, "lineitem")
    (run,) = history["runs"]
    check = shown.result["cost_check"]
    assert run["plan_id"] == pid and run["measured_seconds"] == check["measured_wall_seconds"] > 0
    assert run["error"] == pytest.approx(
        (run["predicted_seconds"] - run["measured_seconds"]) / run["measured_seconds"])
    assert history["summary"]["runs"] == 1 and run["spark_jobs"] == measured["spark_jobs"]
    # bytes read: the input files' own bytes (the job reads each whole); Spark's task metric,
    # which misses small Parquet files, is kept beside it
    inputs = sum(p.bytes for p in base.partitions if p.path in set(chosen))
    assert check["measured_bytes_read"] == result["bytes_read"] == inputs > 0
    assert check["spark_input_bytes"] == measured["bytes_read"]


def test_hilbert_and_zorder_groups_in_one_commit(settings, spark):
    base = make_table(settings, n=3000, rows_per_file=500)  # 6 files
    paths = [p.path for p in base.partitions]
    groups = [PlanGroup(tuple(paths[:3]), "hilbert", ("l_shipdate", "l_commitdate"), "blend"),
              PlanGroup(tuple(paths[3:]), "zorder", ("l_shipdate", "l_quantity"), "blend")]
    pid = _approved(settings, base, groups)
    result = api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    store = TableStore(settings)
    after = store.current_snapshot("lineitem")
    assert int(after.id) == int(base.id) + 1  # ONE snapshot for both groups
    assert [g["layout"] for g in result["groups"]] == ["hilbert", "zorder"]
    assert all(2 <= g["outputs"] <= 4 for g in result["groups"])
    assert rows_of([p.path for p in after.partitions]).equals(rows_of(paths))
    assert {p.path for p in after.partitions}.isdisjoint(paths)


def _one_group_per_file(base) -> list[PlanGroup]:
    return [PlanGroup((p.path,), "sort", ("l_shipdate" if i % 2 else "l_commitdate",))
            for i, p in enumerate(base.partitions)]


@pytest.mark.parametrize("groups", [1, 10])
def test_checksum_mismatch_fails_commits_nothing_and_removes_written_files(
        settings, spark, monkeypatch, groups):
    """A lost row is refused with one group and with more than 8 (both observe a
    constant number of sums), naming the group."""
    base = make_table(settings, n=2000, rows_per_file=2000 // max(4, groups))
    root = TableStore(settings).info("lineitem").data_root
    files_before = _files_under(root)
    dirs_before = set(os.listdir(root))
    plan = ([PlanGroup(tuple(p.path for p in base.partitions), "sort", ("l_shipdate",))]
            if groups == 1 else _one_group_per_file(base))
    assert len(plan) == groups
    pid = _approved(settings, base, plan)
    monkeypatch.setenv(FAULT_ENV, "drop-row")
    rows = 2000 // groups
    with pytest.raises(ExecutionError, match=rf"group \d+: verification failed: input {rows} "
                                             rf"rows .* written {rows - 1} rows"):
        api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    assert TableStore(settings).current_id("lineitem") == base.id
    assert _files_under(root) == files_before and set(os.listdir(root)) == dirs_before
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed" and "verification failed" in shown.result["error"]
    assert shown.audit[-1]["action"] == "fail"


@pytest.mark.parametrize("mode", ["packed", "partition_by", "arrow"])
def test_a_row_moved_to_another_group_is_refused(settings, spark, monkeypatch, mode):
    """``swap-rows`` keeps every group's row count and the plan's checksum: only the tagged
    checksum sees it (engine.spark.verification); the second read names group 0. In every
    many-group write (``ExecutorOptions.group_write``, ``ExecutorOptions.writer``)."""
    base = make_table(settings, n=2000, rows_per_file=200)  # 10 files, 10 groups
    root = TableStore(settings).info("lineitem").data_root
    dirs_before = set(os.listdir(root))
    pid = _approved(settings, base, _one_group_per_file(base))
    monkeypatch.setenv(FAULT_ENV, "swap-rows")
    with pytest.raises(ExecutionError, match=r"group 0: verification failed: input 200 rows "
                                             r"\(checksum (-?\d+)\), written 200 rows "
                                             r"\(checksum (?!\1\))"):
        _run_written(settings, spark, pid, mode)
    assert TableStore(settings).current_id("lineitem") == base.id
    assert set(os.listdir(root)) == dirs_before


@pytest.mark.parametrize("groups", [2, 10])
def test_failure_in_a_later_group_removes_earlier_groups_too(settings, spark, monkeypatch,
                                                            groups):
    base = make_table(settings, n=2000, rows_per_file=200 if groups > 4 else 500)
    root = TableStore(settings).info("lineitem").data_root
    dirs_before = set(os.listdir(root))
    paths = [p.path for p in base.partitions]
    plan = ([PlanGroup(tuple(paths[:2]), "sort", ("l_shipdate",)),
             PlanGroup(tuple(paths[2:]), "sort", ("l_commitdate",))]
            if groups == 2 else _one_group_per_file(base))
    pid = _approved(settings, base, plan)
    monkeypatch.setenv(FAULT_ENV, f"fail-group:{groups - 1}")
    with pytest.raises(ExecutionError, match=f"injected failure after group {groups - 1}"):
        api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    assert TableStore(settings).current_id("lineitem") == base.id
    assert set(os.listdir(root)) == dirs_before
    assert api.plan_progress(settings, pid)["groups_done"] == groups
    assert api.show_plan(settings, pid).status == "failed"


def test_driver_side_ranges_land_one_per_partition(spark):
    from pyspark.sql import functions as F  # pyspark: costly import, only when Spark tests run

    assert boundaries([1, 2, 3, 4, 5, 6, 7, 8], 4) == [3, 5, 7]
    assert boundaries([1, 1, 1, 1, 2, 2], 3) == [1, 2]  # ties never split across files
    df = spark.range(0, 1000).withColumn("k", (F.col("id") * 7919) % 1000)
    cuts = boundaries(list(range(1000)), 5)
    parted = range_partition(spark, df, F.col("k"), cuts, 5)
    spans = (parted.groupBy(F.spark_partition_id().alias("p"))
             .agg(F.min("k").alias("lo"), F.max("k").alias("hi"), F.count("*").alias("n"))
             .orderBy("p").collect())
    assert [(r["p"], r["lo"], r["hi"], r["n"]) for r in spans] == [
        (0, 0, 199, 200), (1, 200, 399, 200), (2, 400, 599, 200), (3, 600, 799, 200),
        (4, 800, 999, 200)]


def test_a_run_makes_partitions_of_its_inputs_only(settings, spark, monkeypatch):
    """On a zonemap-cache hit the executor makes a ``Partition`` for the plan's inputs only
    (:func:`engine.spark.executor.plan_inputs`), not one per file of the table: at
    1,000,000 files the old walk (``{p.path: p for p in current.partitions}``) cost about 5
    CPU-s per run. The run still rewrites exactly those inputs."""
    from engine.spark.executor import execute_plan
    from engine.plans.plan import Plan
    from engine.table.formats.native_files import clear_snapshot_cache
    from engine.table.manifest import ManifestPartitions

    base = make_table(settings, n=2000, rows_per_file=100)  # 20 files
    chosen = [p.path for p in base.partitions[5:8]]
    pid = insert_plan(settings, base, [PlanGroup(tuple(chosen), "sort", ("l_shipdate",))])
    plan = Plan.from_row(Workspace(settings).control.get_plan(pid))
    clear_snapshot_cache()
    TableStore(settings).current_snapshot("lineitem")  # writes the zonemap-cache entry
    clear_snapshot_cache()  # a fresh process: the cache is hit
    made: list[int] = []
    one = ManifestPartitions._one

    def counted(self, i):
        made.append(i)
        return one(self, i)

    monkeypatch.setattr(ManifestPartitions, "_one", counted)
    result = execute_plan(settings, plan, spark=spark, store=TableStore(settings))
    monkeypatch.undo()
    assert sorted(made) == [5, 6, 7]  # the old walk made all 20
    assert result["partitions_removed"] == 3 and result["rows"] == 300
    after = TableStore(settings).current_snapshot("lineitem")
    assert not set(chosen) & {p.path for p in after.partitions}
    assert len(after.partitions) == 17 + result["partitions_added"]


@pytest.mark.parametrize("mode", ["packed", "partition_by", "arrow"])
def test_many_groups_each_keep_their_rows_in_order_in_either_write(settings, spark,
                                                                    monkeypatch, mode):
    """A plan of four groups, one cut into two key ranges, written with (group, key) packed
    into one long and one open file per group of a task ("packed"), sorted by (group,
    key) for ``partitionBy`` ("partition_by", ``ExecutorOptions.group_write``), or sorted
    and written by pyarrow in each task (``ExecutorOptions.writer`` "arrow"): every
    group's files hold exactly its input rows, each file in its group's key order."""
    from engine.spark import slicing, writing

    monkeypatch.setattr(slicing, "MIN_SLICE_ROWS", 0)  # small groups sliced, as big ones are
    packed: list[int] = []  # "packed" sorts on one long per row: its path is taken
    real_key = writing.packed_key
    monkeypatch.setattr(writing, "packed_key",
                        lambda specs, types: packed.append(len(specs)) or real_key(specs, types))
    base = make_table(settings, n=4000, rows_per_file=250)  # 16 files
    paths = [p.path for p in base.partitions]
    keys = ["l_shipdate", "l_commitdate", "l_shipdate", "l_commitdate"]
    spans = [paths[:10], paths[10:11], paths[11:14], paths[14:]]
    pid = _approved(settings, base, [PlanGroup(tuple(s), "sort", (k,))
                                     for s, k in zip(spans, keys)])
    result = _run_written(settings, spark, pid, mode)
    assert [g["rows"] for g in result["groups"]] == [2500, 250, 750, 500]
    for group, span, key in zip(result["groups"], spans, keys):
        assert rows_of(group["files"]).equals(rows_of(span)), group["index"]
        for f in group["files"]:
            values = pq.read_table(f, columns=[key]).column(0).to_pylist()
            assert values == sorted(values), f
    assert 10 <= len(result["groups"][0]["files"]) <= 11  # 2,500 rows in files of 250, 2 ranges
    assert packed == ([4] if mode == "packed" else [])
    after = TableStore(settings).current_snapshot("lineitem")
    assert {p.path for p in after.partitions} == {f for g in result["groups"] for f in g["files"]}


def test_a_group_too_small_to_slice_writes_the_files_the_model_counts(settings, spark):
    """The sample demo's plan (one sort group, 88,000 rows, target 2,000 rows per file) wrote
    46 files where the cost model counts 44: the group was cut into 4 slices at cuts
    estimated from the zonemaps, and each slice but the last ended in a partial file. A
    group below ``slicing.MIN_SLICE_ROWS`` is sorted in one task: exactly the model's
    ``ceil(rows / rows per file)`` files, every one full but the last."""
    from engine.core.config import Settings
    from engine.policy.costmodel import group_files

    base = make_table(settings, n=4000, rows_per_file=250)  # 16 files of 250: 4 tasks' worth
    paths = tuple(p.path for p in base.partitions)
    pid = _approved(settings, base, [PlanGroup(paths, "sort", ("l_shipdate",))])
    result = api.run_plan(settings, pid, spark=spark, actor=sign_in(settings, "alice"))
    files = result["groups"][0]["files"]
    model = group_files(4000, sum(p.bytes for p in base.partitions),
                        Settings(target_rows=250, target_mb=0))
    assert len(files) == model == 16
    assert sorted(pq.ParquetFile(f).metadata.num_rows for f in files) == [250] * 16
    dates = [pq.read_table(f, columns=["l_shipdate"]).column(0).to_pylist()
             for f in sorted(files, key=lambda f: pq.read_table(f, columns=["l_shipdate"])
                             .column(0)[0].as_py())]
    assert sum(dates, []) == sorted(sum(dates, []))  # one sorted run cut into 16 files


def test_the_packed_key_sorts_as_group_then_key_nulls_first(spark):
    """``writing.packed_key``: one long per row that sorts exactly as (group,
    key) with nulls first, for dates (before 1970 too) and the ends of the int range, and
    each group on its own column; hand-checked values."""
    import datetime as dt

    from types import SimpleNamespace as S

    from engine.spark import writing
    from engine.spark.jobspec import GROUP_COLUMN

    day = dt.date
    rows = [(0, day(1992, 1, 2), 5), (0, None, -(2 ** 31)), (0, day(1969, 12, 31), 0),
            (1, None, None), (1, day(1970, 1, 1), 2 ** 31 - 1), (1, day(2000, 1, 1), -(2 ** 31)),
            (1, day(1999, 1, 1), None), (2, day(1970, 1, 1), 7), (0, day(1970, 1, 2), 1)]
    df = spark.createDataFrame(rows, f"{GROUP_COLUMN} int, d date, i int")
    types = {"d": "date", "i": "int"}
    specs = [S(index=0, group=S(layout="sort", columns=("d",))),
             S(index=1, group=S(layout="sort", columns=("i",))),
             S(index=2, group=S(layout="sort", columns=("d",)))]
    assert writing.packs(specs, types)
    # ties (two null keys of group 1) broken by d, nulls first: a stable expectation
    got = df.withColumn("k", writing.packed_key(specs, types)).orderBy("k", "d").collect()
    by_hand = [(0, None, -(2 ** 31)), (0, day(1969, 12, 31), 0), (0, day(1970, 1, 2), 1),
               (0, day(1992, 1, 2), 5),  # group 0 on d, nulls first
               (1, None, None), (1, day(1999, 1, 1), None), (1, day(2000, 1, 1), -(2 ** 31)),
               (1, day(1970, 1, 1), 2 ** 31 - 1),  # group 1 on i: the int range's two ends
               (2, day(1970, 1, 1), 7)]
    assert [(r[GROUP_COLUMN], r["d"], r["i"]) for r in got] == by_hand
    k = {(r[GROUP_COLUMN], r["d"], r["i"]): r["k"] for r in got}
    assert k[(0, None, -(2 ** 31))] == 0  # group 0, a null date
    assert k[(0, day(1969, 12, 31), 0)] == 2 ** 31 - 1 + 1  # day -1
    assert k[(1, day(2000, 1, 1), -(2 ** 31))] == 2 ** 33 + 1  # group 1, the smallest int
    assert k[(2, day(1970, 1, 1), 7)] == 2 * 2 ** 33 + 2 ** 31 + 1
