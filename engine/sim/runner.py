"""Run a scenario against policies over in-memory tables.

For each policy, a :class:`SimRun` (the batch protocol of :mod:`engine.sim.driver` over a
fresh :class:`SimTable`) replays the scenario batch by batch: ingestion appends the
batch's rows in natural order, cut to target size; each query is charged the
projection-aware bytes of the partitions its zonemap pruning keeps (:mod:`engine.sim.scan`;
of the row groups it keeps in partitions written with STR row groups, PAW's ``n_mbr``);
a proposal is applied in memory (:mod:`engine.sim.apply`) and priced by the shared cost
model. A query also pays a layout-independent cost (``Settings.query_fixed_s``: its joins,
aggregation and planning, which no layout prunes; :func:`batch_query_seconds`). A charged
rewrite also pays a fresh Spark session's ``Settings.cold_start_s`` as ``cold_start`` says
(:mod:`engine.sim.session`: the first of the run by default, every one, or none).

When policies decide: once per batch, after its queries (``act_every="batch"``, the
default). WAIR's paper triggers Algorithm 2 "right after completing each query"; the
generator's batch has "an optional reclustering phase" after the query mix (footnote 5:
"reclustering is invoked after each batch but may decide to take no action"). We follow
the batch form for every policy so all of them see the same decision points and the same
window; ``act_every="query"`` runs the per-query form (slower; only queries of
reclustering periods trigger decisions).

Feedback (:class:`engine.sim.driver.Pending`): by default (``feedback="batch"``) an
executed proposal is followed for one batch's worth of queries and its realized saving
extrapolated to its window. The paper compares "after completing a window W of queries",
but it decides after every query, so windows complete continuously; with decisions once
per batch, waiting for a whole window of hundreds of queries (``feedback="window"``,
available) delays WAIR's credit and window updates by dozens of batches (see
``bench/sim/README.md`` for the measured effect).

The scan analysis handed to policies (``ctx.scans``) is computed lazily with
:func:`engine.scan.pruning.analyze_fragment` on the current zonemaps and cached until the
table changes, so a policy that reads only its last W fragments pays for W.
"""

from __future__ import annotations

import time
from collections.abc import Sequence as SequenceABC
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.base import Feedback, Policy, PolicyContext, Proposal
from engine.policy.baselines import NewDataSort, Oracle
from engine.policy.costmodel import for_table, money, query_seconds
from engine.policy.wair import WairPolicy
from engine.table.info import WriteTarget
from engine.scan.pruning import FragmentScan, analyze_fragment
from engine.scan.rowgroups import RowGroupMaps, refine
from engine.sim.apply import FIXED_PER, ApplyResult, apply_groups, dataset_sampler
from engine.sim.driver import HISTORY_LIMIT, BatchDriver, Pending, Rewrite, check_modes
from engine.sim.records import BatchRecord, PolicyRun
from engine.sim.scan import CompiledFragment, compile_fragment, query_cost
from engine.sim.session import DEFAULT_COLD_START, ColdStart
from engine.sim.table import SimTable

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scenarios.generator import Batch, Scenario
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

ProgressFn = Callable[[Mapping[str, Any]], None]


class ScanCache:
    """Incremental :func:`engine.scan.pruning.analyze_fragment` results per fragment.

    Partitions are immutable and their ids grow, so a fragment's outcome on a partition
    never changes: each fragment remembers the partitions it scans (sparse: most are
    pruned) with their coverage and utilization, and the first partition id it has not
    seen. A :class:`FragmentScan` over the live partitions is assembled from that, after
    analyzing only the partitions created since.
    """

    def __init__(self, table: SimTable) -> None:
        self.table = table
        self._state: dict[str, tuple[int, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._sub: dict[int, "ZoneMaps"] = {}  # zonemaps of live partitions with id >= key
        self._sub_version = -1

    def forget(self, keep: set[str]) -> None:
        for qid in [q for q in self._state if q not in keep]:
            del self._state[qid]

    def scan(self, frag: "ScanFragment", zm: "ZoneMaps", live: np.ndarray,
             read_bytes: np.ndarray) -> FragmentScan:
        upto, spids, cov, util = self._state.get(
            frag.query_id, (0, np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0)))
        fresh = live[live >= upto]
        if fresh.size:
            if self._sub_version != self.table.version:
                self._sub, self._sub_version = {}, self.table.version
            sub_zm = self._sub.get(upto)
            if sub_zm is None:
                sub_zm = self._sub[upto] = self.table.zonemaps_of(fresh)
            sub = analyze_fragment(sub_zm, frag)
            spids = np.concatenate([spids, fresh[sub.index]])
            cov = np.concatenate([cov, sub.covered])
            util = np.concatenate([util, sub.util])
        upto = self.table.next_pid
        pos = np.searchsorted(live, spids)
        pos_c = np.minimum(pos, max(len(live) - 1, 0))
        alive = (pos < len(live)) & (live[pos_c] == spids) if len(live) else np.zeros(len(spids), bool)
        spids, cov, util, pos = spids[alive], cov[alive], util[alive], pos[alive]
        self._state[frag.query_id] = (upto, spids, cov, util)
        # ids grow and ``live`` is sorted, so ``pos`` is sorted and unique: the sparse scan
        # as is, no dense arrays of the live partitions
        return FragmentScan.sparse(frag.query_id, len(live), pos, cov, util, read_bytes,
                                   frag.predicated_columns)


class LazyScans(SequenceABC):
    """``FragmentScan`` of each window fragment over one zonemaps version, computed on access."""

    def __init__(self, run: "SimRun", zm: "ZoneMaps", live: np.ndarray,
                 fragments: Sequence["ScanFragment"]) -> None:
        self._run, self._zm, self._live, self._frags = run, zm, live, fragments
        self._memo: dict[int, FragmentScan] = {}
        self._groups: RowGroupMaps | None | bool = False  # False: not looked up yet

    def _row_groups(self) -> RowGroupMaps | None:
        """The live partitions' row groups when ``settings.prune_row_groups`` asks for the
        product's row-group scan analysis (as ``plans.service.decide`` does on a real table)."""
        if self._groups is False:
            rg = self._run.table.row_group_zonemaps() if self._run.settings.prune_row_groups else None
            self._groups = None if rg is None else RowGroupMaps.build(self._zm, rg[0], rg[1])
        return self._groups  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._frags)

    def _one(self, i: int) -> FragmentScan:
        scan = self._memo.get(i)
        if scan is None:
            f = self._frags[i]
            rb = self._run.read_bytes(self._zm, tuple(f.columns))
            scan = self._run.scans.scan(f, self._zm, self._live, rb)
            scan = self._memo[i] = refine(scan, self._row_groups(), f, self._zm.rows)
        return scan

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._one(i)


class SimRun(BatchDriver):
    """One policy's pass over the scenario on an in-memory :class:`SimTable`."""

    def __init__(self, scenario: "Scenario", name: str, policy: Policy, settings: "Settings",
                 compiled: Mapping[str, CompiledFragment], act_every: str = "batch",
                 history: int = HISTORY_LIMIT, observer: Callable[..., None] | None = None,
                 feedback: str = "batch", fixed_per: str = "plan",
                 cold_start: str = DEFAULT_COLD_START) -> None:
        super().__init__(scenario, policy, settings, compiled, history=history,
                         act_every=act_every, feedback=feedback)
        if fixed_per not in FIXED_PER:
            raise InvalidParameterError(f"fixed_per must be one of {', '.join(FIXED_PER)}, got {fixed_per!r}")
        self.name = name
        self.observer = observer
        self.fixed_per = fixed_per  # where a rewrite's fixed cost is paid (engine.sim.apply)
        # which rewrites pay the Spark session's cold start (engine.sim.session)
        self.cold = ColdStart(cold_start, settings.cold_start_s)
        ds = scenario.dataset
        policy.bind_sampler(dataset_sampler(ds.data))  # PAW designs on the table's rows
        self.table = SimTable(ds.schema, ds.data, ds.widths, scenario.spec.target_rows)
        self.scans = ScanCache(self.table)
        self._rb_cache: dict[tuple[str, ...], np.ndarray] = {}
        self._rb_version = -1
        self.run = PolicyRun(name, run_params(policy))
        self.rec = BatchRecord(0, 0, 0, False)  # the batch in progress
        self._pruned_share: list[float] = []  # its queries' pruned shares

    # ------------------------------------------------------------------ the table
    def context(self) -> PolicyContext:
        zm, live = self.table.zonemaps()
        window = self.history[-self.history_limit:]
        if len(self.history) > 2 * self.history_limit:
            del self.history[: len(self.history) - self.history_limit]
            self.scans.forget({f.query_id for f in self.history})
        # priced at the files the simulated table writes (engine.layout.output), as the
        # planner prices a real table at its own target
        priced = for_table(self.settings, WriteTarget(file_rows=self.table.target_rows,
                                                      source="the scenario's target rows"))
        return PolicyContext(table=self.scenario.table, snapshot_id=f"sim-v{self.table.version}",
                             zonemaps=zm, window=window, scans=LazyScans(self, zm, live, window),
                             settings=priced, queries_seen=self.queries_seen)

    def ingest(self, batch: "Batch") -> list[str]:
        new = self.table.ingest(batch.row_start, batch.row_stop)
        return [self.table.path(int(p)) for p in new]

    def execute(self, proposal: Proposal, charged: bool) -> Rewrite | None:
        rec = self.rec
        before_paths = [p for g in proposal.groups for p in g.partitions]
        old_pids = np.unique(np.array([self.table.pid_of(p) for p in before_paths], dtype=np.int64))
        old_zm = self.table.zonemaps_of(old_pids)
        old_rg = self.table.row_group_zonemaps_of(old_pids)
        res: ApplyResult = apply_groups(self.table, proposal.groups, self.settings, self.fixed_per)
        if not charged:
            rec.uncharged_bytes += res.bytes_read + res.bytes_written
            return None
        rec.recluster_bytes_read += res.bytes_read
        rec.recluster_bytes_written += res.bytes_written
        cold = self.cold.charge()  # a bill, not a price: the feedback's cost stays warm
        rec.recluster_cpu_s += res.cpu_seconds + cold
        rec.cold_start_s += cold
        rec.money += res.money + money(cold, self.settings)
        rec.recluster_partitions += len(res.old_pids)
        rec.recluster_groups += res.groups
        for k, v in res.layouts.items():
            rec.recluster_layouts[k] = rec.recluster_layouts.get(k, 0) + v
        return Rewrite(old_zm, self.table.zonemaps_of(res.new_pids), res.cpu_seconds, old_rg,
                       self.table.row_group_zonemaps_of(np.sort(res.new_pids)))

    def query(self, batch: "Batch", fragment: "ScanFragment", compiled: CompiledFragment) -> None:
        """Charge the projection-aware bytes of the partitions the query's pruning keeps."""
        rec, table = self.rec, self.table
        zm, _ = table.zonemaps()
        cost = query_cost(zm, compiled, self.read_bytes(zm, compiled.columns), table.row_group_zonemaps())
        if self.observer is not None:
            self.observer(batch=batch, fragment=fragment, table=table, cost=cost)
        rec.queries += 1
        rec.partitions = cost.total
        rec.query_bytes += cost.bytes
        wl = str(fragment.extra.get("workload", "all"))
        rec.query_bytes_by_workload[wl] = rec.query_bytes_by_workload.get(wl, 0.0) + cost.bytes
        rec.partitions_scanned += cost.scanned
        rec.partitions_pruned += cost.total - cost.scanned
        share = 1.0 - cost.scanned / cost.total if cost.total else 0.0
        self._pruned_share.append(share)
        if batch.measured:
            self.run.query_bytes.append(cost.bytes)
            self.run.query_pruning.append(share)
            self.run.query_workload.append(wl)

    def read_bytes(self, zm: "ZoneMaps", columns: tuple[str, ...]) -> np.ndarray:
        if self._rb_version != self.table.version:
            self._rb_cache, self._rb_version = {}, self.table.version
        rb = self._rb_cache.get(columns)
        if rb is None:
            rb = self._rb_cache[columns] = zm.read_bytes(list(columns))
        return rb

    # ------------------------------------------------------------------ records
    def queries_done(self, batch: "Batch") -> None:
        rec = self.rec
        if not batch.fragments:
            rec.partitions = self.table.n_partitions
        rec.pruning_rate = float(np.mean(self._pruned_share)) if self._pruned_share else 0.0
        rec.query_cpu_s = batch_query_seconds(rec.queries, rec.query_bytes, self.settings,
                                             rec.partitions_scanned)
        rec.money += money(rec.query_cpu_s, self.settings)

    def decided(self, seconds: float) -> None:
        self.rec.decision_s += seconds

    def observed(self, pending: Pending, feedback: Feedback) -> None:
        self.run.feedbacks.append({
            "predicted_cpu_s": pending.predicted_s, "realized_cpu_s": pending.realized_s,
            "measured_cpu_s": pending.saved_s, "measured_queries": float(pending.n),
            "cost_cpu_s": pending.cost_s, "queries": float(pending.scale_to or pending.n)})

    # ------------------------------------------------------------------ the loop
    def go(self, progress: ProgressFn | None = None, index: int = 0,
           n_policies: int = 1) -> PolicyRun:
        """Every batch of the scenario, then the pending feedback; the run's record."""
        sc = self.scenario
        t_start = time.perf_counter()
        for batch in sc.batches:
            self.rec = BatchRecord(batch.period, batch.batch, batch.index, batch.measured)
            self._pruned_share = []
            self.step(batch)
            self.run.batches.append(self.rec)
            if progress is not None:
                progress({"policy": self.name, "policy_index": index, "policies": n_policies,
                          "batch": batch.index + 1, "batches": len(sc.batches),
                          "period": batch.period, "query_bytes": self.rec.query_bytes,
                          "recluster_bytes": self.rec.recluster_bytes})
        self.finish()
        self.run.wall_seconds = time.perf_counter() - t_start
        return self.run


def batch_query_seconds(queries: int, nbytes: float, settings: "Settings", files: float = 0.0) -> float:
    """CPU-seconds of ``queries`` queries scanning ``nbytes`` in ``files`` partitions in all:
    each pays the layout-independent ``query_fixed_s`` (joins, aggregation, planning: measured
    per preset, :data:`engine.scenarios.presets.SIM_CALIBRATION`, or by ``calibrate``), each
    partition scanned ``query_file_s`` and the bytes the query scan rate
    (:func:`engine.policy.costmodel.query_seconds`; ``scan_bytes_per_s`` until calibrated).

    >>> from engine.core.config import Settings
    >>> round(batch_query_seconds(4, 2e6, Settings(query_fixed_s=0.01, scan_bytes_per_s=1e8)), 6)
    0.06
    >>> round(batch_query_seconds(4, 2e6, Settings(query_fixed_s=0.01, query_file_s=0.001,
    ...                                            scan_bytes_per_s=1e8), files=30), 6)
    0.09
    """
    if queries <= 0:
        return 0.0
    return (queries - 1) * float(settings.query_fixed_s) + query_seconds(nbytes, settings, files)


def run_params(policy: Policy) -> dict[str, Any]:
    """The parameters a run reports (``params`` in the simulator's JSON, unchanged since it
    was first printed): WAIR's validated record; for NN and the oracle the key they start
    with (empty until a period gives one); nothing for the others."""
    if isinstance(policy, WairPolicy):
        return policy.params.to_json()
    if isinstance(policy, (NewDataSort, Oracle)):
        return {"columns": list(policy.columns_), "layout": policy.layout_}
    return {}


def compile_scenario(scenario: "Scenario") -> dict[str, CompiledFragment]:
    types = dict(scenario.schema.columns)
    return {f.query_id: compile_fragment(f, types) for b in scenario.batches for f in b.fragments}


def simulate_policies(scenario: "Scenario", policies: Mapping[str, Policy], settings: "Settings",
                      progress: ProgressFn | None = None, act_every: str = "batch",
                      history: int = HISTORY_LIMIT,
                      compiled: Mapping[str, CompiledFragment] | None = None,
                      observer: Callable[..., None] | None = None,
                      feedback: str = "batch", fixed_per: str = "plan",
                      cold_start: str = DEFAULT_COLD_START) -> dict[str, PolicyRun]:
    """Replay ``scenario`` once per policy (name -> Policy instance); deterministic.

    ``fixed_per``: a rewrite pays ``rewrite_fixed_s`` once per plan, as the Spark executor
    runs it (the default), or per group, as the presets' DuckDB economics measured it
    (:mod:`engine.sim.apply`). ``cold_start``: which charged rewrites also pay
    ``settings.cold_start_s``, the Spark session's start (:mod:`engine.sim.session`:
    ``"first"`` of each policy's run, the default, ``"every"`` or ``"none"``).

    ``observer(batch=, fragment=, table=, cost=)`` is called for every query (tests use it
    to check the charged bytes against a brute-force evaluation)."""
    check_modes(act_every, feedback)
    compiled = compiled or compile_scenario(scenario)
    out: dict[str, PolicyRun] = {}
    for i, (name, policy) in enumerate(policies.items()):
        run = SimRun(scenario, name, policy, settings, compiled, act_every, history, observer,
                     feedback, fixed_per, cold_start)
        out[name] = run.go(progress, i, len(policies))
    return out
