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
  pruning; DuckDB runs the fragment's predicate (:func:`engine.spark.exact.fragment_sql`)
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.policy.base import Proposal
    from engine.table.model import Snapshot, ZoneMaps
    from engine.scenarios.generator import Scenario
    from engine.workload.model import ScanFragment

ProgressFn = Callable[[Mapping[str, Any]], None]
STAGING_TABLE = "replay_ingest"


# --------------------------------------------------------------------------- data
def _filler(ltype: str, width: float, n: int, rng: np.random.Generator) -> "pa.Array":
    """Payload for a column the scenario has no data for (e.g. ``l_comment``): values of
    about the modelled compressed width, so projections that read it pay for it."""
    import pyarrow as pa

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


def _typed(ltype: str, encoded: np.ndarray) -> "pa.Array":
    """A scenario column (encoded by :mod:`engine.core.logical_types`) as a typed Arrow array."""
    import pyarrow as pa

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


def batch_table(scenario: "Scenario", start: int, stop: int) -> "pa.Table":
    """Rows ``[start, stop)`` of the scenario's dataset as an Arrow table in ingestion order
    (payload columns filled deterministically from the seed and the row range)."""
    import pyarrow as pa

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


class DuckRunner:
    """A DuckDB connection that profiles every query (its JSON profile is read back after each)."""

    def __init__(self, workdir: str, threads: int = 1) -> None:
        import duckdb

        os.makedirs(workdir, exist_ok=True)
        self.con = duckdb.connect()
        self.con.execute(f"SET threads={int(threads)}")
        self.con.execute("SET enable_object_cache=false")
        self.con.execute("SET enable_profiling='no_output'")  # read back per query

    def count(self, paths: Sequence[str], fragment: "ScanFragment",
              columns: Sequence[str] | None = None, profile: bool = True) -> tuple[int, float, float, float]:
        """(matching rows, DuckDB seconds, DuckDB bytes read, wall seconds) of the fragment's
        predicate over ``paths``, reading ``columns`` (the projection) as aggregates."""
        from engine.spark.exact import fragment_sql, sql_literal
        from engine.table import fs

        if not paths:
            return 0, 0.0, 0.0, 0.0
        files = "[" + ", ".join(sql_literal(fs.local_path(p)) for p in paths) + "]"
        aggs = "".join(f', MAX("{c}")' for c in (columns or ()))
        sql = f"SELECT COUNT(*){aggs} FROM read_parquet({files}) WHERE {fragment_sql(fragment)}"
        t0 = time.perf_counter()
        row = self.con.execute(sql).fetchall()[0]
        wall = time.perf_counter() - t0
        secs = nbytes = 0.0
        if profile:
            try:
                prof = json.loads(self.con.get_profiling_information(format="json"))
                secs = float(prof.get("query", {}).get("total_time", 0.0) or 0.0)
                nbytes = float(prof.get("io", {}).get("total_bytes_read", 0.0) or 0.0)
            except (AttributeError, ValueError, RuntimeError):  # an older DuckDB: wall time only
                pass
        return int(row[0]), secs, nbytes, wall


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


@dataclass
class PolicyReplay:
    """Everything measured for one policy."""

    name: str
    queries: list[QueryRun] = field(default_factory=list)
    reclusters: list[ReclusterRun] = field(default_factory=list)
    uncharged: list[ReclusterRun] = field(default_factory=list)
    decision_seconds: float = 0.0
    ingest_seconds: float = 0.0  # shared by every policy (files ingested once)

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
class _Lazy(Sequence):
    """``FragmentScan`` of each window fragment over one snapshot, computed on access."""

    def __init__(self, zm: "ZoneMaps", frags: Sequence["ScanFragment"]) -> None:
        self.zm, self.frags, self.memo = zm, frags, {}

    def __len__(self) -> int:
        return len(self.frags)

    def __getitem__(self, i):  # type: ignore[override]
        from engine.scan.pruning import analyze_fragment

        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i not in self.memo:
            self.memo[i] = analyze_fragment(self.zm, self.frags[i])
        return self.memo[i]


def _dedupe(proposal: "Proposal") -> "Proposal":
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


class _PolicyState:
    """One policy's table and loop state (mirrors ``engine.sim.runner._Run``)."""

    def __init__(self, name: str, policy: Any, table: str, history_limit: int) -> None:
        self.name, self.policy, self.table = name, policy, table
        self.history_limit = history_limit
        self.history: list["ScanFragment"] = []
        self.queries_seen = 0
        self.pending: list[Any] = []
        self.period_frags: dict[int, list["ScanFragment"]] = {}
        self.record = PolicyReplay(name)
        self._zm: tuple[str, Any, "ZoneMaps"] | None = None

    def snapshot(self, settings: "Settings") -> tuple["Snapshot", "ZoneMaps"]:
        from engine.table.store import TableStore

        snap = TableStore(settings).current_snapshot(self.table)
        if self._zm is None or self._zm[0] != snap.id:
            self._zm = (snap.id, snap, snap.zonemaps())
        return self._zm[1], self._zm[2]


def _append_to(settings: "Settings", table: str, parts: Sequence[Any]) -> None:
    from engine.table.store import TableStore

    store = TableStore(settings)
    store.commit(table, store.current_id(table), [], list(parts), "append", {"source": STAGING_TABLE})


def replay_scenario(settings: "Settings", scenario: "Scenario", policies: Mapping[str, Any],
                    spark: "SparkSession", workdir: str, history: Mapping[str, int] | None = None,
                    queries: str = "measured", progress: ProgressFn | None = None,
                    check_all_files: bool = False, feedback_per_batch: int | None = None
                    ) -> dict[str, PolicyReplay]:
    """Replay ``scenario`` on real files for each policy (name -> fresh policy instance).

    ``queries``: "measured" runs DuckDB on the batches the simulator measures, "all" on
    every batch, "none" only prunes (zonemap bytes without execution). With
    ``check_all_files`` each executed query also runs over every live file and a
    mismatch of the counts raises (pruning must be safe). The workspace of ``settings``
    must be empty of tables named ``replay_*``.
    """
    from engine.scan.pruning import analyze_fragment
    from engine.sim.runner import HISTORY_LIMIT, compile_scenario
    from engine.spark.ingest import append_batch, create_table
    from engine.table.store import TableStore

    if queries not in ("measured", "all", "none"):
        raise InvalidParameterError(f"queries must be measured, all or none, got {queries!r}")
    history = history or {}
    store = TableStore(settings)
    stage = os.path.join(workdir, "batches")
    os.makedirs(stage, exist_ok=True)
    duck = DuckRunner(workdir)
    compiled = compile_scenario(scenario)
    target = int(scenario.spec.target_rows)
    states = [_PolicyState(n, p, f"replay_{n.replace('-', '_')}", int(history.get(n, HISTORY_LIMIT)))
              for n, p in policies.items()]
    per_batch = feedback_per_batch or max(1, int(np.median([len(b.fragments) for b in scenario.batches
                                                            if b.fragments] or [1])))
    types = dict(scenario.schema.columns)
    known: set[str] = set()
    ingest_seconds = 0.0
    for batch in scenario.batches:
        # ---- ingestion: once through the table layer, then shared with every policy table
        import pyarrow.parquet as pq

        src = os.path.join(stage, f"batch-{batch.index:04d}.parquet")
        pq.write_table(batch_table(scenario, batch.row_start, batch.row_stop), src)
        t0 = time.perf_counter()
        if batch.index == 0:
            snap = create_table(settings, STAGING_TABLE, src, target_rows=target, spark=spark)
        else:
            snap = append_batch(settings, STAGING_TABLE, src, spark=spark, target_rows=target)
        ingest_seconds += time.perf_counter() - t0
        new_parts = [p for p in snap.partitions if p.path not in known]
        known.update(p.path for p in new_parts)
        for st in states:
            if batch.index == 0:
                store.create(st.table, schema=snap.schema, partitions=new_parts, operation="create",
                             target_rows=target, summary={"source": STAGING_TABLE})
            else:
                _append_to(settings, st.table, new_parts)
        new_paths = [p.path for p in new_parts]
        period = scenario.period(batch.period)
        for st in states:
            _batch_step(settings, scenario, st, batch, period, new_paths, types, spark, duck,
                        compiled, per_batch, queries, check_all_files, analyze_fragment)
        if progress is not None:
            progress({"batch": batch.index + 1, "batches": len(scenario.batches),
                      "ingest_seconds": round(ingest_seconds, 2)})
    for st in states:
        _deliver(st, final=True)
    out = {st.name: st.record for st in states}
    for rec in out.values():
        rec.ingest_seconds = ingest_seconds
    return out


def _batch_step(settings: "Settings", scenario: "Scenario", st: _PolicyState, batch: Any,
                period: Any, new_paths: Sequence[str], types: Mapping[str, str],
                spark: "SparkSession", duck: DuckRunner, compiled: Mapping[str, Any],
                per_batch: int, queries: str, check_all: bool, analyze_fragment: Any) -> None:
    from engine.policy.baselines import PeriodInfo

    pol = st.policy
    if batch.batch == 1 and hasattr(pol, "begin_period"):
        prev = st.period_frags.get(batch.period - 1) or st.history
        pol.begin_period(PeriodInfo(
            period=batch.period, recluster=batch.recluster, oracle_layout=period.oracle_layout,
            oracle_columns=tuple(period.oracle_columns), history=list(prev),
            target_rows=scenario.spec.target_rows, types=types))
    if hasattr(pol, "ingested"):
        pol.ingested(list(new_paths))
    if batch.recluster and hasattr(pol, "before_queries"):
        t0 = time.perf_counter()
        proposal = pol.before_queries(_context(settings, st))
        st.record.decision_seconds += time.perf_counter() - t0
        _execute(settings, st, proposal, batch.index, spark, per_batch,
                 charged=getattr(pol, "charged", True))
    run_duck = queries == "all" or (queries == "measured" and batch.measured)
    for frag in batch.fragments:
        snap, zm = st.snapshot(settings)
        scan = analyze_fragment(zm, frag)
        rb = zm.read_bytes(list(frag.columns))
        paths = [str(p) for p in zm.paths[scan.scanned]]
        q = QueryRun(frag.query_id, batch.index, batch.period, batch.measured, len(zm),
                     len(paths), float(rb[scan.scanned].sum()))
        if run_duck:
            q.rows, q.duckdb_seconds, q.duckdb_bytes_read, q.wall_seconds = duck.count(
                paths, frag, [c for c in frag.columns if c in types])
            if check_all:
                full, _, _, _ = duck.count([str(p) for p in zm.paths], frag, profile=False)
                if full != q.rows:
                    raise AssertionError(f"{st.name} {frag.query_id}: {q.rows} rows over the "
                                         f"{len(paths)} unpruned files but {full} over all files")
        st.record.queries.append(q)
        cf = compiled[frag.query_id]
        for p in st.pending:
            p.add(cf, settings)
        st.history.append(frag)
        st.period_frags.setdefault(batch.period, []).append(frag)
        st.queries_seen += 1
        _deliver(st)
    if batch.recluster:
        t0 = time.perf_counter()
        proposal = pol.propose(_context(settings, st))
        st.record.decision_seconds += time.perf_counter() - t0
        _execute(settings, st, proposal, batch.index, spark, per_batch)


def _context(settings: "Settings", st: _PolicyState) -> Any:
    from engine.policy.base import PolicyContext

    snap, zm = st.snapshot(settings)
    window = st.history[-st.history_limit:]
    return PolicyContext(table=st.table, snapshot_id=snap.id, zonemaps=zm, window=window,
                         scans=_Lazy(zm, window), settings=settings, queries_seen=st.queries_seen)


def _execute(settings: "Settings", st: _PolicyState, proposal: "Proposal | None", batch: int,
             spark: "SparkSession", per_batch: int, charged: bool = True) -> None:
    """Run a proposal with the Spark executor and start following its realized saving."""
    from engine.spark.executor import execute_plan
    from engine.plans.plan import Plan
    from engine.policy.costmodel import recluster_cost
    from engine.sim.runner import _Pending
    from engine.table.model import ZoneMaps

    if proposal is None or not proposal.groups:
        return
    proposal = _dedupe(proposal)
    if not proposal.groups:
        return
    snap, zm = st.snapshot(settings)
    by_path = {p.path: p for p in snap.partitions}
    old = [by_path[p] for p in proposal.partitions]
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    plan = Plan(id=len(st.record.reclusters) + len(st.record.uncharged) + 1, table=st.table,
                base_snapshot=snap.id, policy=st.name, params=dict(proposal.params or {}),
                proposal=proposal, status="running", created_at=now, created_by="replay",
                updated_at=now, result=None)
    result = execute_plan(settings, plan, spark)
    layouts: dict[str, int] = {}
    for g in proposal.groups:
        layouts[g.layout] = layouts.get(g.layout, 0) + len(g.partitions)
    run = ReclusterRun(batch, int(result["partitions_removed"]), int(result["partitions_added"]),
                       int(result["bytes_read"]), int(result["bytes_written"]),
                       float(result["seconds"]), layouts)
    if not charged:
        st.record.uncharged.append(run)
        return
    st.record.reclusters.append(run)
    new_snap, _ = st.snapshot(settings)
    old_paths = set(by_path)
    new_parts = [p for p in new_snap.partitions if p.path not in old_paths]
    group_bytes = [sum(by_path[p].bytes for p in g.partitions) for g in proposal.groups]
    cost_s = sum(recluster_cost(float(b), settings).cpu_seconds for b in group_bytes)
    predicted = float(proposal.predicted_saving.get("cpu_seconds", 0.0) or 0.0)
    target = int(proposal.predicted_saving.get("window_queries", 0) or 0)
    scale_to = 0
    if target <= 0:
        target = per_batch
    elif target > per_batch:
        target, scale_to = per_batch, target
    st.pending.append(_Pending(predicted, cost_s, ZoneMaps.from_partitions(snap.schema, old),
                               ZoneMaps.from_partitions(snap.schema, new_parts), target, scale_to))


def _deliver(st: _PolicyState, final: bool = False) -> None:
    from engine.policy.base import Feedback

    keep = []
    for p in st.pending:
        if p.n >= p.target or (final and p.n > 0):
            st.policy.observe(Feedback(predicted_saving_cpu_s=p.predicted_s,
                                       realized_saving_cpu_s=p.realized_s,
                                       recluster_cost_cpu_s=p.cost_s, queries=p.scale_to or p.n))
        elif not final:
            keep.append(p)
    st.pending = keep


# --------------------------------------------------------------------------- comparison
def ranks(values: Mapping[str, float]) -> dict[str, int]:
    """1 for the smallest value (ties share the better rank).

    >>> ranks({"a": 3.0, "b": 1.0, "c": 3.0})
    {'a': 2, 'b': 1, 'c': 2}
    """
    ordered = sorted(values.values())
    return {k: ordered.index(v) + 1 for k, v in values.items()}
