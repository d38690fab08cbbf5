"""Run a scenario against policies over in-memory tables.

For each policy, a fresh :class:`SimTable` replays the scenario batch by batch:

1. period start: period-aware baselines get :class:`engine.policy.baselines.PeriodInfo`;
2. ingestion: the batch's rows are appended in natural order, cut to target size;
3. ``before_queries`` (QD's full repartition at a period start, the oracle's full sort);
4. the batch's queries run: each is charged the projection-aware bytes of the partitions
   its zonemap pruning keeps (:mod:`engine.sim.scan`);
5. reclustering (only in periods that allow it): the policy gets a
   :class:`engine.policy.base.PolicyContext` and its proposal is applied in memory
   (:mod:`engine.sim.apply`) and priced by the shared cost model.

When policies decide: once per batch, after its queries (``act_every="batch"``, the
default). WAIR's paper triggers Algorithm 2 "right after completing each query"; the
generator's batch has "an optional reclustering phase" after the query mix (footnote 5:
"reclustering is invoked after each batch but may decide to take no action"). We follow
the batch form for every policy so all of them see the same decision points and the same
window; ``act_every="query"`` runs the per-query form (slower; only queries of
reclustering periods trigger decisions).

Feedback: each executed proposal is followed on later queries: the bytes each would read
over the rewritten partitions' old zonemaps minus over their replacements, priced at scan
rate like equation 3. By default (``feedback="batch"``) it is followed for one batch's
worth of queries (at most its window) and the realized saving is reported extrapolated to
the window's length (``window_queries``), so predicted and realized are compared per
window, at the next decision point. The paper compares "after completing a window W of
queries", but it decides after every query, so windows complete continuously; with
decisions once per batch, waiting for a whole window of hundreds of queries
(``feedback="window"``, available) delays WAIR's credit and window updates by dozens of
batches (see ``bench/README_sim.md`` for the measured effect).
Then ``observe(Feedback)`` is called (WAIR's credit and window adaptation); pending
feedback is delivered at the end.

The scan analysis handed to policies (``ctx.scans``) is computed lazily with
:func:`engine.scan.pruning.analyze_fragment` on the current zonemaps and cached until the
table changes, so a policy that reads only its last W fragments pays for W.
"""

from __future__ import annotations

import time
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.base import Feedback, PolicyContext, Proposal
from engine.policy.baselines import PeriodInfo
from engine.policy.costmodel import money, scan_seconds
from engine.sim.apply import ApplyResult, apply_groups
from engine.sim.records import BatchRecord, PolicyRun
from engine.sim.scan import CompiledFragment, compile_fragment, query_cost
from engine.sim.table import SimTable

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scan.pruning import FragmentScan
    from engine.table.model import ZoneMaps
    from engine.scenarios.generator import Scenario
    from engine.workload.model import ScanFragment

ACT_MODES = ("batch", "query")
FEEDBACK_MODES = ("batch", "window")
HISTORY_LIMIT = 1024  # fragments offered to a policy as its window (most recent last)
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
             read_bytes: np.ndarray) -> "FragmentScan":
        from engine.scan.pruning import FragmentScan, analyze_fragment

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
            hit = sub.scanned
            spids = np.concatenate([spids, fresh[hit]])
            cov = np.concatenate([cov, sub.fully_covered[hit]])
            util = np.concatenate([util, sub.utilization[hit]])
        upto = self.table.next_pid
        pos = np.searchsorted(live, spids)
        pos_c = np.minimum(pos, max(len(live) - 1, 0))
        alive = (pos < len(live)) & (live[pos_c] == spids) if len(live) else np.zeros(len(spids), bool)
        spids, cov, util, pos = spids[alive], cov[alive], util[alive], pos[alive]
        self._state[frag.query_id] = (upto, spids, cov, util)
        n = len(live)
        scanned = np.zeros(n, dtype=bool)
        covered = np.zeros(n, dtype=bool)
        utilization = np.zeros(n, dtype=np.float64)
        scanned[pos] = True
        covered[pos] = cov
        utilization[pos] = util
        return FragmentScan(frag.query_id, scanned, covered, utilization, read_bytes,
                            frag.predicated_columns)


class LazyScans(SequenceABC):
    """``FragmentScan`` of each window fragment over one zonemaps version, computed on access."""

    def __init__(self, run: "_Run", zm: "ZoneMaps", live: np.ndarray,
                 fragments: Sequence["ScanFragment"]) -> None:
        self._run, self._zm, self._live, self._frags = run, zm, live, fragments
        self._memo: dict[int, "FragmentScan"] = {}

    def __len__(self) -> int:
        return len(self._frags)

    def _one(self, i: int) -> "FragmentScan":
        scan = self._memo.get(i)
        if scan is None:
            f = self._frags[i]
            rb = self._run.read_bytes(self._zm, tuple(f.columns))
            scan = self._memo[i] = self._run.scans.scan(f, self._zm, self._live, rb)
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


@dataclass
class _Pending:
    """An executed proposal whose realized saving is being measured on later queries."""

    predicted_s: float
    cost_s: float
    old_zm: "ZoneMaps"
    new_zm: "ZoneMaps"
    target: int
    scale_to: int = 0  # extrapolate the realized saving to this many queries (0: no)
    saved_s: float = 0.0
    n: int = 0

    @property
    def realized_s(self) -> float:
        if self.scale_to and self.n:
            return self.saved_s * self.scale_to / self.n
        return self.saved_s

    def add(self, cf: CompiledFragment, settings: "Settings") -> None:
        before = query_cost(self.old_zm, cf).bytes
        after = query_cost(self.new_zm, cf).bytes
        self.saved_s += scan_seconds(before - after, settings)
        self.n += 1


class _Run:
    """One policy's pass over the scenario."""

    def __init__(self, scenario: "Scenario", name: str, policy: Any, settings: "Settings",
                 compiled: Mapping[str, CompiledFragment], act_every: str, history: int,
                 observer: Callable[..., None] | None = None, feedback: str = "batch") -> None:
        self.sc, self.name, self.policy, self.settings = scenario, name, policy, settings
        self.observer = observer
        self.feedback = feedback
        self.compiled = compiled
        self.act_every = act_every
        self.history_limit = history
        ds = scenario.dataset
        self.table = SimTable(ds.schema, ds.data, ds.widths, scenario.spec.target_rows)
        self.types = dict(ds.schema.columns)
        self.history: list["ScanFragment"] = []
        self.queries_seen = 0
        self.pending: list[_Pending] = []
        self.scans = ScanCache(self.table)
        self._rb_cache: dict[tuple[str, ...], np.ndarray] = {}
        self._rb_version = -1
        self.run = PolicyRun(name, _policy_params(policy))

    # ------------------------------------------------------------------ helpers
    def context(self) -> PolicyContext:
        zm, live = self.table.zonemaps()
        window = self.history[-self.history_limit:]
        if len(self.history) > 2 * self.history_limit:
            del self.history[: len(self.history) - self.history_limit]
            self.scans.forget({f.query_id for f in self.history})
        return PolicyContext(table=self.sc.table, snapshot_id=f"sim-v{self.table.version}", zonemaps=zm,
                             window=window, scans=LazyScans(self, zm, live, window),
                             settings=self.settings, queries_seen=self.queries_seen)

    def execute(self, proposal: Proposal | None, rec: BatchRecord, charged: bool = True) -> None:
        if proposal is None or not proposal.groups:
            return
        before_paths = [p for g in proposal.groups for p in g.partitions]
        old_pids = np.unique(np.array([self.table.pid_of(p) for p in before_paths], dtype=np.int64))
        old_zm = self.table.zonemaps_of(old_pids)
        res: ApplyResult = apply_groups(self.table, proposal.groups, self.settings)
        if not charged:
            rec.uncharged_bytes += res.bytes_read + res.bytes_written
            return
        rec.recluster_bytes_read += res.bytes_read
        rec.recluster_bytes_written += res.bytes_written
        rec.recluster_cpu_s += res.cpu_seconds
        rec.money += res.money
        rec.recluster_partitions += len(res.old_pids)
        rec.recluster_groups += res.groups
        for k, v in res.layouts.items():
            rec.recluster_layouts[k] = rec.recluster_layouts.get(k, 0) + v
        predicted = float(proposal.predicted_saving.get("cpu_seconds", 0.0) or 0.0)
        target = int(proposal.predicted_saving.get("window_queries", 0) or 0)
        per_batch = max(1, self._queries_per_batch())
        scale_to = 0
        if target <= 0:
            target = per_batch
        elif self.feedback == "batch" and target > per_batch:
            target, scale_to = per_batch, target
        self.pending.append(_Pending(predicted, res.cpu_seconds, old_zm,
                                     self.table.zonemaps_of(res.new_pids), target, scale_to))

    def _queries_per_batch(self) -> int:
        counts = [len(b.fragments) for b in self.sc.batches if b.fragments]
        return int(np.median(counts)) if counts else 1

    def deliver(self, final: bool = False) -> None:
        keep = []
        for p in self.pending:
            if p.n >= p.target or (final and p.n > 0):
                fb = Feedback(predicted_saving_cpu_s=p.predicted_s, realized_saving_cpu_s=p.realized_s,
                              recluster_cost_cpu_s=p.cost_s, queries=p.scale_to or p.n)
                self.policy.observe(fb)
                self.run.feedbacks.append({"predicted_cpu_s": p.predicted_s, "realized_cpu_s": p.realized_s,
                                           "measured_cpu_s": p.saved_s, "measured_queries": float(p.n),
                                           "cost_cpu_s": p.cost_s, "queries": float(p.scale_to or p.n)})
            elif not final:
                keep.append(p)
        self.pending = keep

    def decide(self, rec: BatchRecord) -> None:
        t0 = time.perf_counter()
        proposal = self.policy.propose(self.context())
        rec.decision_s += time.perf_counter() - t0
        self.execute(proposal, rec)

    def read_bytes(self, zm: "ZoneMaps", columns: tuple[str, ...]) -> np.ndarray:
        if self._rb_version != self.table.version:
            self._rb_cache, self._rb_version = {}, self.table.version
        rb = self._rb_cache.get(columns)
        if rb is None:
            rb = self._rb_cache[columns] = zm.read_bytes(list(columns))
        return rb

    # ------------------------------------------------------------------ the loop
    def go(self, progress: ProgressFn | None, index: int, n_policies: int) -> PolicyRun:
        sc, table = self.sc, self.table
        t_start = time.perf_counter()
        period_frags: dict[int, list["ScanFragment"]] = {}
        for batch in sc.batches:
            period = sc.period(batch.period)
            rec = BatchRecord(batch.period, batch.batch, batch.index, batch.measured)
            if batch.batch == 1 and hasattr(self.policy, "begin_period"):
                prev = period_frags.get(batch.period - 1) or self.history
                self.policy.begin_period(PeriodInfo(
                    period=batch.period, recluster=batch.recluster, oracle_layout=period.oracle_layout,
                    oracle_columns=tuple(period.oracle_columns), history=list(prev),
                    target_rows=sc.spec.target_rows, types=self.types))
            new = table.ingest(batch.row_start, batch.row_stop)
            if hasattr(self.policy, "ingested"):
                self.policy.ingested([table.path(int(p)) for p in new])
            if batch.recluster and hasattr(self.policy, "before_queries"):
                t0 = time.perf_counter()
                proposal = self.policy.before_queries(self.context())
                rec.decision_s += time.perf_counter() - t0
                self.execute(proposal, rec, charged=getattr(self.policy, "charged", True))
            pruned_share = []
            for frag in batch.fragments:
                cf = self.compiled[frag.query_id]
                zm, _ = table.zonemaps()
                cost = query_cost(zm, cf, self.read_bytes(zm, cf.columns))
                if self.observer is not None:
                    self.observer(batch=batch, fragment=frag, table=table, cost=cost)
                rec.queries += 1
                rec.partitions = cost.total
                rec.query_bytes += cost.bytes
                wl = str(frag.extra.get("workload", "all"))
                rec.query_bytes_by_workload[wl] = rec.query_bytes_by_workload.get(wl, 0.0) + cost.bytes
                rec.partitions_scanned += cost.scanned
                rec.partitions_pruned += cost.total - cost.scanned
                share = 1.0 - cost.scanned / cost.total if cost.total else 0.0
                pruned_share.append(share)
                if batch.measured:
                    self.run.query_bytes.append(cost.bytes)
                    self.run.query_pruning.append(share)
                    self.run.query_workload.append(wl)
                for p in self.pending:
                    p.add(cf, self.settings)
                self.history.append(frag)
                period_frags.setdefault(batch.period, []).append(frag)
                self.queries_seen += 1
                self.deliver()
                if self.act_every == "query" and batch.recluster:
                    self.decide(rec)
            if not batch.fragments:
                rec.partitions = table.n_partitions
            rec.pruning_rate = float(np.mean(pruned_share)) if pruned_share else 0.0
            rec.query_cpu_s = scan_seconds(rec.query_bytes, self.settings)
            rec.money += money(rec.query_cpu_s, self.settings)
            if self.act_every == "batch" and batch.recluster:
                self.decide(rec)
            self.run.batches.append(rec)
            if progress is not None:
                progress({"policy": self.name, "policy_index": index, "policies": n_policies,
                          "batch": batch.index + 1, "batches": len(sc.batches), "period": batch.period,
                          "query_bytes": rec.query_bytes, "recluster_bytes": rec.recluster_bytes})
        self.deliver(final=True)
        self.run.wall_seconds = time.perf_counter() - t_start
        return self.run


def _policy_params(policy: Any) -> dict[str, Any]:
    params = getattr(policy, "params", None)
    if params is not None and hasattr(params, "to_json"):
        return dict(params.to_json())
    if isinstance(params, Mapping):
        return dict(params)
    out = {}
    for k in ("key", "depth_threshold", "max_partitions", "partition_threshold", "columns", "layout"):
        if hasattr(policy, k):
            v = getattr(policy, k)
            out[k] = list(v) if isinstance(v, tuple) else v
    inner = getattr(policy, "inner", None)
    if inner is not None:
        out.update(_policy_params(inner))
    return out


def compile_scenario(scenario: "Scenario") -> dict[str, CompiledFragment]:
    types = dict(scenario.schema.columns)
    return {f.query_id: compile_fragment(f, types) for b in scenario.batches for f in b.fragments}


def simulate_policies(scenario: "Scenario", policies: Mapping[str, Any], settings: "Settings",
                      progress: ProgressFn | None = None, act_every: str = "batch",
                      history: int = HISTORY_LIMIT,
                      compiled: Mapping[str, CompiledFragment] | None = None,
                      observer: Callable[..., None] | None = None,
                      feedback: str = "batch") -> dict[str, PolicyRun]:
    """Replay ``scenario`` once per policy (name -> Policy instance); deterministic.

    ``observer(batch=, fragment=, table=, cost=)`` is called for every query (tests use it
    to check the charged bytes against a brute-force evaluation)."""
    if act_every not in ACT_MODES:
        raise InvalidParameterError(f"act_every must be one of {', '.join(ACT_MODES)}, got {act_every!r}")
    if feedback not in FEEDBACK_MODES:
        raise InvalidParameterError(f"feedback must be one of {', '.join(FEEDBACK_MODES)}, got {feedback!r}")
    compiled = compiled or compile_scenario(scenario)
    out: dict[str, PolicyRun] = {}
    for i, (name, policy) in enumerate(policies.items()):
        out[name] = _Run(scenario, name, policy, settings, compiled, act_every, history, observer,
                         feedback).go(
            progress, i, len(policies))
    return out
