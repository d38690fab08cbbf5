"""Real replay: a generated scenario run on real Parquet files, Spark and DuckDB.

The simulator (:mod:`engine.sim.runner`) prices every policy with a model: bytes per row
per column, partitions cut in memory. This module runs the same batches, queries and
policy decisions on real files, to check that the simulator's ranking of the policies
holds when the bytes and seconds are measured:

* ingestion: each batch is written once as a Parquet file (pyarrow, from the scenario's
  arrays) and ingested with the table layer (:func:`engine.spark.ingest.create_table` /
  :func:`engine.spark.ingest.append_batch`) into a staging table, cut into files of the
  scenario's target size. Ingestion is identical for every policy (the simulator does
  not charge it either), so the new files are then committed as an ``append`` to each
  policy's own table; the files are shared, the snapshots are not;
* policies decide on the real snapshot's zonemaps (read from the Parquet footers), with
  the same hooks, window and feedback as the simulator's loop (period start, ``ingested``,
  ``before_queries``, a decision after each batch's queries of reclustering periods,
  realized saving measured on the next batch's queries);
* reclustering: each proposal becomes an in-memory :class:`engine.plans.plan.Plan` run by the
  Spark executor (:func:`engine.spark.executor.execute_plan`: order, cut, write, verify, commit);
  its bytes read and written and its wall seconds are recorded;
* queries: :func:`engine.scan.pruning.analyze_fragment` gives the files that survive zonemap
  pruning; DuckDB (:mod:`engine.spark.duck_runner`) runs the fragment's predicate (:func:`engine.spark.exact.fragment_sql`)
  over exactly those files, aggregating every projected column so they are read. Per
  query we record the zonemap bytes (projected column chunks of the scanned files, what
  the simulator charges), DuckDB's own ``total_time`` and ``io.total_bytes_read`` from its
  JSON profile, and the wall time around the call.

Only the batches the simulator measures (from the first reclustering period) run DuckDB
by default: earlier batches have the same files under every policy.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.core.errors import InvalidParameterError
from engine.plans.plan import Plan
from engine.policy.base import Policy, PolicyContext, Proposal
from engine.policy.costmodel import for_table, groups_rewrite_cost
from engine.scan.pruning import FragmentScan, analyze_fragment
from engine.sim.driver import HISTORY_LIMIT, BatchDriver, Rewrite
from engine.sim.own_table import column_widths
from engine.sim.runner import compile_scenario
from engine.sim.scan import CompiledFragment
from engine.spark.duck_runner import DuckRunner, probe_file_seconds, query_form_fit
from engine.spark.executor import execute_plan
from engine.spark.ingest import append_batch, create_table
from engine.table.footers import read_partitions
from engine.table.model import Partition, Snapshot, ZoneMaps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.table.store import TableStore

    from engine.core.config import Settings
    from engine.scenarios.generator import Batch, Scenario
    from engine.workload.model import ScanFragment

ProgressFn = Callable[[Mapping[str, Any]], None]
STAGING_TABLE = "replay_ingest"


# --------------------------------------------------------------------------- data
def _filler(ltype: str, width: float, n: int, rng: np.random.Generator) -> pa.Array:
    """Payload for a column the scenario has no data for (e.g. ``l_comment``): values of
    about the modelled compressed width, so projections that read it pay for it."""
    if ltype == "string":
        if width < 1.0:  # flags and modes: a handful of short codes
            vocab = np.array([f"V{i}" for i in range(7)])
        else:  # free text: random strings that do not compress much
            length = max(4, int(width * 1.5))
            letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz ", dtype="S1")
            vocab = np.array([b"".join(rng.choice(letters, length)).decode() for _ in range(4096)])
        return pa.array(vocab[rng.integers(0, len(vocab), n)], pa.string())
    if ltype == "int":
        return pa.array(rng.integers(1, 8, n), pa.int64())
    if ltype == "date":
        return pa.array(rng.integers(8000, 9000, n).astype(np.int32), pa.int32()).cast(pa.date32())
    if ltype == "timestamp":
        return pa.array(rng.integers(0, 10**15, n), pa.timestamp("us"))
    if ltype == "bool":
        return pa.array(rng.integers(0, 2, n).astype(bool), pa.bool_())
    return pa.array(rng.integers(0, 9, n) / 100.0, pa.float64())


def _typed(ltype: str, encoded: np.ndarray) -> pa.Array:
    """A scenario column (encoded by :mod:`engine.core.logical_types`) as a typed Arrow array."""
    if encoded.dtype.kind == "U" or ltype == "string":
        return pa.array(encoded.astype(str), pa.string())
    if ltype == "date":
        return pa.array(np.round(encoded).astype(np.int32), pa.int32()).cast(pa.date32())
    if ltype == "timestamp":
        return pa.array(np.round(encoded).astype(np.int64), pa.timestamp("us"))
    if ltype == "int":
        return pa.array(np.round(encoded).astype(np.int64), pa.int64())
    if ltype == "bool":
        return pa.array(encoded != 0, pa.bool_())
    return pa.array(encoded.astype(np.float64), pa.float64())


def batch_table(scenario: "Scenario", start: int, stop: int) -> pa.Table:
    """Rows ``[start, stop)`` of the scenario's dataset as an Arrow table in ingestion order
    (payload columns filled deterministically from the seed and the row range)."""
    ds = scenario.dataset
    rng = np.random.default_rng([scenario.spec.seed, 9173, start])
    n = stop - start
    arrays, names = [], []
    for name, ltype in ds.schema.columns:
        col = ds.data.get(name)
        arrays.append(_typed(ltype, col[start:stop]) if col is not None
                      else _filler(ltype, float(ds.widths.get(name, 1.0)), n, rng))
        names.append(name)
    return pa.table(arrays, names=names)


# --------------------------------------------------------------------------- DuckDB
@dataclass
class QueryRun:
    """One query over the files that survive pruning."""

    query_id: str
    batch: int
    period: int
    measured: bool
    files_total: int
    files_scanned: int
    zonemap_bytes: float  # projected column-chunk bytes of the scanned files
    rows: int | None = None  # DuckDB's count of matching rows (None: not executed)
    duckdb_seconds: float = 0.0  # DuckDB's profile total_time
    duckdb_bytes_read: float = 0.0  # DuckDB's profile io.total_bytes_read
    wall_seconds: float = 0.0


def form_query_seconds(fit: Mapping[str, float], queries: int, files: float, nbytes: float) -> float:
    """Seconds of ``queries`` queries scanning ``files`` files and ``nbytes`` bytes in all,
    by a :func:`query_form_fit`.

    >>> form_query_seconds({"fixed_s": 0.01, "file_s": 0.001, "bytes_per_s": 1e6}, 10, 100, 2e6)
    2.2
    """
    rate = float(fit.get("bytes_per_s") or 0.0)
    return (queries * float(fit.get("fixed_s", 0.0)) + files * float(fit.get("file_s", 0.0))
            + (nbytes / rate if rate > 0 else 0.0))


# --------------------------------------------------------------------------- records
@dataclass
class ReclusterRun:
    batch: int
    partitions_in: int
    partitions_out: int
    bytes_read: int
    bytes_written: int
    seconds: float  # the executor's own wall time (write, verify, commit)
    layouts: dict[str, int] = field(default_factory=dict)
    groups: int = 0  # the plan's groups (one Spark job for all of them)
    #: Spark's executor CPU seconds and spilled bytes (memory, disk) of the plan's jobs: the
    #: wall time follows the machine's load, the CPU much less
    cpu_seconds: float = 0.0
    memory_spilled: int = 0
    disk_spilled: int = 0


@dataclass
class PolicyReplay:
    """Everything measured for one policy."""

    name: str
    queries: list[QueryRun] = field(default_factory=list)
    reclusters: list[ReclusterRun] = field(default_factory=list)
    uncharged: list[ReclusterRun] = field(default_factory=list)
    decision_seconds: float = 0.0
    ingest_seconds: float = 0.0  # shared by every policy (files ingested once)
    #: wall seconds of the replay's own work per phase (where a long replay's time goes):
    #: commit (the append of the shared files), prune (snapshot, zonemaps, pruning),
    #: duckdb (the query calls), execute (the executor, beyond its own ``seconds``: plan,
    #: snapshot and zonemaps of the result)
    phases: dict[str, float] = field(default_factory=dict)
    #: DuckDB's (fixed s, s per file) on the ingested files (:func:`probe_file_seconds`)
    file_probe: tuple[float, float] = (0.0, 0.0)
    #: DuckDB's fit of the replay's query form on the unmeasured queries (:func:`query_form_fit`)
    query_form: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + float(seconds)

    def totals(self, measured_only: bool = True) -> dict[str, float]:
        qs = [q for q in self.queries if q.measured or not measured_only]
        rs = [r for r in self.reclusters if r.batch >= 0]
        return {
            "queries": float(len(qs)),
            "query_bytes": float(sum(q.zonemap_bytes for q in qs)),
            "query_files": float(sum(q.files_scanned for q in qs)),
            "query_duckdb_seconds": float(sum(q.duckdb_seconds for q in qs)),
            "query_duckdb_bytes": float(sum(q.duckdb_bytes_read for q in qs)),
            "query_wall_seconds": float(sum(q.wall_seconds for q in qs)),
            "recluster_runs": float(len(rs)),
            "recluster_partitions": float(sum(r.partitions_in for r in rs)),
            "recluster_bytes_read": float(sum(r.bytes_read for r in rs)),
            "recluster_bytes_written": float(sum(r.bytes_written for r in rs)),
            "recluster_bytes": float(sum(r.bytes_read + r.bytes_written for r in rs)),
            "recluster_wall_seconds": float(sum(r.seconds for r in rs)),
        }


# --------------------------------------------------------------------------- the loop
class _Lazy(SequenceABC):
    """``FragmentScan`` of each window fragment over one snapshot, computed on access."""

    def __init__(self, zm: "ZoneMaps", frags: Sequence["ScanFragment"]) -> None:
        self.zm, self.frags = zm, frags
        self.memo: dict[int, FragmentScan] = {}

    def __len__(self) -> int:
        return len(self.frags)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i not in self.memo:
            self.memo[i] = analyze_fragment(self.zm, self.frags[i])
        return self.memo[i]


def _dedupe(proposal: Proposal) -> Proposal:
    """Drop a partition named by two groups from the later one (the simulator rewrites it
    once; the executor refuses such a plan)."""
    seen: set[str] = set()
    groups = []
    for g in proposal.groups:
        parts = tuple(p for p in g.partitions if p not in seen)
        seen.update(parts)
        if parts:
            groups.append(dataclasses.replace(g, partitions=parts))
    return dataclasses.replace(proposal, groups=tuple(groups))


def staging_key(scenario: "Scenario") -> dict[str, Any]:
    """What a workdir's ingestion was made for (``batches/ingested.json``)."""
    return {"rows": int(scenario.dataset.rows), "batches": len(scenario.batches),
            "target_rows": int(scenario.spec.target_rows), "preset": scenario.spec.name}


def with_file_widths(scenario: "Scenario", workdir: str) -> tuple["Scenario", dict[str, float]]:
    """``scenario`` whose columns weigh what the workdir's ingested files weigh: each column's
    compressed bytes per row from the staging table's footers
    (:func:`engine.sim.own_table.column_widths`, as the simulator of a user's own table
    sizes its columns), in place of the preset's widths. The TPC-H preset's
    ``TPCH_WIDTHS`` are 16% below the replay's files in all (9,022 against 10,785 MB read
    by NR at 10M rows; per column 0.48x for ``l_comment`` to 3.8x for ``l_linestatus``),
    and the calibrated query rate is per real byte. Unchanged (and no widths) when the
    workdir holds no ingestion of this scenario yet."""
    manifest = os.path.join(workdir, "batches", "ingested.json")
    if not os.path.exists(manifest):
        return scenario, {}
    with open(manifest) as fh:
        saved = json.load(fh)
    if saved.get("key") != staging_key(scenario):
        raise InvalidParameterError(f"{manifest} holds another scenario's ingestion "
                                    f"({saved.get('key')}); use another workdir")
    paths = [p for b in sorted(saved["batches"], key=int) for p in saved["batches"][b]]
    schema, parts = read_partitions(paths)
    widths = column_widths(schema, ZoneMaps.from_partitions(schema, parts), sum(p.rows for p in parts))
    return dataclasses.replace(scenario, dataset=dataclasses.replace(scenario.dataset, widths=widths)), widths


class Staging:
    """Each batch written once as Parquet and ingested once through the table layer into
    a staging table; every policy's table then commits the new files as an append.

    The batches' new files are listed in ``batches/ingested.json``, so a later replay in the
    same workspace (a run split by policy, ``--policies``) reuses the staging table instead
    of ingesting again: ``seconds`` then counts only what this replay ingested."""

    def __init__(self, settings: "Settings", scenario: "Scenario", spark: "SparkSession",
                 workdir: str, store: "TableStore") -> None:
        self.settings, self.scenario, self.spark, self.store = settings, scenario, spark, store
        self.dir = os.path.join(workdir, "batches")
        os.makedirs(self.dir, exist_ok=True)
        self.known: set[str] = set()
        self.batch = -1  # the batch whose files ``parts`` holds
        self.snapshot: Snapshot | None = None
        self.parts: list[Partition] = []
        self.seconds = 0.0  # Spark ingestion (create_table / append_batch)
        self.write_seconds = 0.0  # the batches' source files (pyarrow)
        self.manifest = os.path.join(self.dir, "ingested.json")
        self.key = staging_key(scenario)
        self.done: dict[str, list[str]] = {}
        self.reused = 0  # batches taken from an earlier replay's ingestion
        if os.path.exists(self.manifest):
            with open(self.manifest) as fh:
                saved = json.load(fh)
            if saved.get("key") != self.key:
                raise InvalidParameterError(f"{self.dir} holds another scenario's ingestion "
                                            f"({saved.get('key')}); use another workdir")
            self.done = saved["batches"]

    def _reuse(self, batch: "Batch") -> list[Partition] | None:
        paths = self.done.get(str(batch.index))
        if paths is None:
            return None
        snap = self.store.current_snapshot(STAGING_TABLE)
        by_path = {p.path: p for p in snap.partitions}
        self.snapshot, self.reused = snap, self.reused + 1
        return [by_path[p] for p in paths]

    def new_parts(self, batch: "Batch") -> list[Partition]:
        """The files ``batch`` ingested (ingesting it on the first call)."""
        if batch.index != self.batch:
            reused = self._reuse(batch)
            if reused is not None:
                self.parts, self.batch = reused, batch.index
                self.known.update(p.path for p in reused)
                return self.parts
            if self.reused:  # after reused batches: only this append's files are new
                self.known = {p.path for p in
                              self.store.current_snapshot(STAGING_TABLE).partitions}
            src = os.path.join(self.dir, f"batch-{batch.index:04d}.parquet")
            t0 = time.perf_counter()
            pq.write_table(batch_table(self.scenario, batch.row_start, batch.row_stop), src)
            self.write_seconds += time.perf_counter() - t0
            target = int(self.scenario.spec.target_rows)
            t0 = time.perf_counter()
            if batch.index == 0:
                snap = create_table(self.store, STAGING_TABLE, src, target_rows=target,
                                    spark=self.spark)
            else:
                snap = append_batch(self.store, STAGING_TABLE, src, spark=self.spark,
                                    target_rows=target)
            self.seconds += time.perf_counter() - t0
            self.parts = [p for p in snap.partitions if p.path not in self.known]
            self.known.update(p.path for p in self.parts)
            self.snapshot, self.batch = snap, batch.index
            self.done[str(batch.index)] = [p.path for p in self.parts]
            with open(self.manifest, "w") as fh:
                json.dump({"key": self.key, "batches": self.done}, fh)
        return self.parts


class ReplayRun(BatchDriver):
    """One policy's table of real files through the batch protocol of
    :class:`engine.sim.driver.BatchDriver`: Spark executes its rewrites, DuckDB its queries."""

    def __init__(self, name: str, policy: Policy, settings: "Settings", scenario: "Scenario",
                 compiled: Mapping[str, CompiledFragment], staging: Staging,
                 spark: "SparkSession", duck: DuckRunner, history: int, queries: str,
                 check_all: bool, feedback_per_batch: int | None,
                 store: "TableStore") -> None:
        super().__init__(scenario, policy, settings, compiled, history=history,
                         feedback_per_batch=feedback_per_batch)
        self.name = name
        self.table = f"replay_{name.replace('-', '_')}"
        self.staging, self.spark, self.duck = staging, spark, duck
        self.queries, self.check_all = queries, check_all
        self.store = store
        if self.store.exists(self.table):  # an earlier replay of this policy in the workdir
            self.store.drop(self.table)
        self.record = PolicyReplay(name)
        self.batch_index = -1
        self._zm: tuple[str, Snapshot, ZoneMaps] | None = None

    def snapshot(self) -> tuple[Snapshot, ZoneMaps]:
        snap = self.store.current_snapshot(self.table)
        if self._zm is None or self._zm[0] != snap.id:
            self._zm = (snap.id, snap, snap.zonemaps())
        return self._zm[1], self._zm[2]

    def ingest(self, batch: "Batch") -> list[str]:
        self.batch_index = batch.index
        parts = self.staging.new_parts(batch)
        t0 = time.perf_counter()
        if batch.index == 0:
            self.store.create(self.table, schema=self.staging.snapshot.schema, partitions=parts,
                              operation="create", target_rows=int(self.scenario.spec.target_rows),
                              summary={"source": STAGING_TABLE})
        else:
            self.store.commit(self.table, self.store.current_id(self.table), [], list(parts),
                              "append", {"source": STAGING_TABLE})
        self.record.add("commit", time.perf_counter() - t0)
        return [p.path for p in parts]

    def context(self) -> PolicyContext:
        snap, zm = self.snapshot()
        window = self.history[-self.history_limit:]
        return PolicyContext(table=self.table, snapshot_id=snap.id, zonemaps=zm, window=window,
                             scans=_Lazy(zm, window),
                             settings=for_table(self.settings, self.store.write_target(self.table)),
                             queries_seen=self.queries_seen)

    def query(self, batch: "Batch", fragment: "ScanFragment", compiled: CompiledFragment) -> None:
        """DuckDB over exactly the files that survive zonemap pruning."""
        t0 = time.perf_counter()
        snap, zm = self.snapshot()
        scan = analyze_fragment(zm, fragment)
        rb = zm.read_bytes(list(fragment.columns))
        paths = [str(p) for p in zm.paths[scan.scanned]]
        q = QueryRun(fragment.query_id, batch.index, batch.period, batch.measured, len(zm),
                     len(paths), float(rb[scan.scanned].sum()))
        t1 = time.perf_counter()
        self.record.add("prune", t1 - t0)
        if self.queries == "all" or (self.queries == "measured" and batch.measured):
            q.rows, q.duckdb_seconds, q.duckdb_bytes_read, q.wall_seconds = self.duck.count(
                paths, fragment, [c for c in fragment.columns if c in self.types])
            if self.check_all:
                full, _, _, _ = self.duck.count([str(p) for p in zm.paths], fragment, profile=False)
                if full != q.rows:
                    raise AssertionError(f"{self.name} {fragment.query_id}: {q.rows} rows over the "
                                         f"{len(paths)} unpruned files but {full} over all files")
        self.record.add("duckdb", time.perf_counter() - t1)
        self.record.queries.append(q)

    def execute(self, proposal: Proposal, charged: bool) -> Rewrite | None:
        """Run a proposal with the Spark executor; the rewrite to follow when charged."""
        proposal = _dedupe(proposal)
        if not proposal.groups:
            return None
        t0 = time.perf_counter()
        snap, zm = self.snapshot()
        by_path = {p.path: p for p in snap.partitions}
        old = [by_path[p] for p in proposal.partitions]
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        plan = Plan(id=len(self.record.reclusters) + len(self.record.uncharged) + 1,
                    table=self.table, base_snapshot=snap.id, policy=self.name,
                    params=dict(proposal.params or {}), proposal=proposal, status="running",
                    created_at=now, created_by="replay", updated_at=now, result=None)
        result = execute_plan(self.settings, plan, self.spark, store=self.store)
        layouts: dict[str, int] = {}
        for g in proposal.groups:
            layouts[g.layout] = layouts.get(g.layout, 0) + len(g.partitions)
        measured = result.get("measured") or {}
        run = ReclusterRun(self.batch_index, int(result["partitions_removed"]),
                           int(result["partitions_added"]), int(result["bytes_read"]),
                           int(result["bytes_written"]), float(result["seconds"]), layouts,
                           len(proposal.groups), float(measured.get("executor_cpu_seconds", 0.0)),
                           int(measured.get("memory_bytes_spilled", 0)),
                           int(measured.get("disk_bytes_spilled", 0)))
        if not charged:
            self.record.uncharged.append(run)
            self.record.add("execute", time.perf_counter() - t0 - run.seconds)
            return None
        self.record.reclusters.append(run)
        new_snap, _ = self.snapshot()
        new_parts = [p for p in new_snap.partitions if p.path not in by_path]
        cost_s = groups_rewrite_cost(zm, proposal.groups, self.settings).cpu_seconds
        self.record.add("execute", time.perf_counter() - t0 - run.seconds)
        return Rewrite(ZoneMaps.from_partitions(snap.schema, old),
                       ZoneMaps.from_partitions(snap.schema, new_parts), cost_s)

    def decided(self, seconds: float) -> None:
        self.record.decision_seconds += seconds


def replay_scenario(settings: "Settings", scenario: "Scenario", policies: Mapping[str, Policy],
                    spark: "SparkSession", workdir: str, history: Mapping[str, int] | None = None,
                    queries: str = "measured", progress: ProgressFn | None = None,
                    check_all_files: bool = False, feedback_per_batch: int | None = None,
                    duckdb_threads: int = 1, query_form: bool = False, *,
                    store: "TableStore") -> dict[str, PolicyReplay]:
    """Replay ``scenario`` on real files for each policy (name -> fresh policy instance),
    in the table catalog ``store`` (the workspace's, :attr:`engine.workspace.Workspace.tables`).

    ``queries``: "measured" runs DuckDB on the batches the simulator measures, "all" on
    every batch, "none" only prunes (zonemap bytes without execution). With
    ``check_all_files`` each executed query also runs over every live file and a
    mismatch of the counts raises (pruning must be safe). A policy's table left in the
    workspace of ``settings`` by an earlier replay is dropped; the staging table's
    ingestion is reused (:class:`Staging`). ``duckdb_threads``: 1 by default, as
    ``layout-advisor calibrate`` measures the query rate (per core, like the model's).
    """
    if queries not in ("measured", "all", "none"):
        raise InvalidParameterError(f"queries must be measured, all or none, got {queries!r}")
    history = history or {}
    staging = Staging(settings, scenario, spark, workdir, store)
    duck = DuckRunner(workdir, threads=duckdb_threads)
    compiled = compile_scenario(scenario)
    runs = [ReplayRun(n, p, settings, scenario, compiled, staging, spark, duck,
                      int(history.get(n, HISTORY_LIMIT)), queries, check_all_files,
                      feedback_per_batch, store)
            for n, p in policies.items()]
    for batch in scenario.batches:
        for run in runs:
            run.step(batch)
        if progress is not None:
            progress({"batch": batch.index + 1, "batches": len(scenario.batches),
                      "ingest_seconds": round(staging.seconds, 2),
                      "source_write_seconds": round(staging.write_seconds, 2)})
    for run in runs:
        run.finish()
    snap = store.current_snapshot(STAGING_TABLE)
    probe = (0.0, 0.0)  # its predicate is on l_shipdate: TPC-H-shaped tables only
    if queries != "none" and "l_shipdate" in dict(scenario.schema.columns):
        probe = probe_file_seconds(duck, [p.path for p in snap.partitions])
    form: dict[str, float] = {}
    if query_form and queries != "none":
        unmeasured = [f for b in scenario.batches if not b.measured for f in b.fragments]
        form = query_form_fit(duck, snap.zonemaps(), unmeasured, dict(scenario.schema.columns))
    out = {run.name: run.record for run in runs}
    for rec in out.values():
        rec.ingest_seconds = staging.seconds
        rec.phases["source_write_shared"] = staging.write_seconds
        rec.file_probe = probe
        rec.query_form = form
    return out


def ingest_all(settings: "Settings", scenario: "Scenario", spark: "SparkSession",
               workdir: str, *, store: "TableStore") -> dict[int, list[str]]:
    """Ingest every batch into the workdir's staging table in ``store`` (each once; reused
    by every later replay in the workdir, :class:`Staging`): batch index -> its files."""
    staging = Staging(settings, scenario, spark, workdir, store)
    return {b.index: [p.path for p in staging.new_parts(b)] for b in scenario.batches}


def repeat_queries(scenario: "Scenario", times: int) -> "Scenario":
    """``scenario`` with each batch's queries run ``times`` times (copies named ``ID#k``,
    the same predicate and projection, one after the other as the batch's query mix), so a
    period carries ``times`` x its queries: a table read by a dashboard or a report many
    times between loads, where the generator's 16 queries per batch are few
    (does rewriting pay back with more queries? bench/replay/README.md).

    Example:
    >>> from engine.scenarios.presets import build_scenario
    >>> sc = build_scenario("tpch", rows=20_000, seed=0, overrides={"periods": 2,
    ...                     "batches_per_period": 2, "recluster_start": 2})
    >>> r = repeat_queries(sc, 3)
    >>> len(r.batches[2].fragments) == 3 * len(sc.batches[2].fragments), r.batches[2].fragments[1].query_id
    (True, 'tpch-b003-global-00-Q1#1')
    """
    if int(times) <= 1:
        return scenario
    batches = [dataclasses.replace(b, fragments=tuple(
        f if k == 0 else dataclasses.replace(f, query_id=f"{f.query_id}#{k}")
        for f in b.fragments for k in range(int(times)))) for b in scenario.batches]
    return dataclasses.replace(scenario, batches=batches)


# --------------------------------------------------------------------------- comparison
def ranks(values: Mapping[str, float]) -> dict[str, int]:
    """1 for the smallest value (ties share the better rank).

    >>> ranks({"a": 3.0, "b": 1.0, "c": 3.0})
    {'a': 2, 'b': 1, 'c': 2}
    """
    ordered = sorted(values.values())
    return {k: ordered.index(v) + 1 for k, v in values.items()}
