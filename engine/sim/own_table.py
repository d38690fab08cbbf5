"""The simulator on the user's own table and workload.

The generated presets (:mod:`engine.scenarios.presets`) own their rows; a real table has
zonemaps for every file but rows only on disk. The what-if on the table itself builds a
simulated table from both:

* **one partition per file**, whose zonemap is the file's own (the current snapshot's
  metadata), so NR's query costs are those the pruning evaluator gives on the real table;
* **a stratified row sample** (:mod:`engine.sim.own_sample`: ``fraction`` of each file's
  rows, at least 2), *anchored* to the zonemaps: in each file's sample rows, per column,
  the row holding the smallest sampled value takes the file's true minimum and the row
  holding the largest its true maximum (other values are clipped into [min, max], nulls
  take the minimum). The simulated partition's zonemap is then exactly the file's, and a
  rewrite orders real rows: the new partitions' zonemaps are estimated from the sample.
* bytes at real scale: a column's width is its real compressed bytes over the sample's
  rows, so a sampled partition weighs what its file weighs, and the workspace's
  (calibrated) rates price queries and rewrites as for a real plan;
* the output file size in sample rows: the table's target rows times ``fraction``.

The workload (:func:`own_scenario`) is the paper's shape (WAIR section 6.1): period 1
ingests the table and runs the imported queries (the history every policy starts from:
WAIR's window, QD's and PAW's design workload), no reclustering, not measured; period 2
replays the same queries in ``batches`` batches with reclustering; an optional period 3
replays a *shifted* copy (:func:`shift_fragments`: the predicate moved to another column
of the same type, each range mapped by quantile), the "next month filters another
column" question. Costs are counted from period 2.

:func:`simulate_own` has the signature of :func:`engine.sim.runner.simulate_policies`, so
the API's scenario replay (DD tuned to WAIR's budget) runs it unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.design.paw.designer import design_for_table
from engine.layout.groups import OUTPUT_PARAMS  # the executor's output parameters
from engine.policy.base import PeriodInfo, Policy, PolicyContext, Proposal
from engine.policy.baselines import whole_table_proposal  # the whole-table proposal PTO and QD use
from engine.policy.costmodel import groups_rewrite_cost
from engine.policy.paw import PawPolicy
from engine.scenarios.generator import Batch, Dataset, PeriodSpec, Scenario, ScenarioSpec
from engine.sim.driver import HISTORY_LIMIT, check_modes
from engine.sim.own_sample import PartitionSample
from engine.sim.records import PolicyRun
from engine.sim.runner import ProgressFn, ScanCache, SimRun, compile_scenario
from engine.sim.scan import CompiledFragment
from engine.sim.session import DEFAULT_COLD_START
from engine.sim.table import SimTable
from engine.workload.model import Range, ScanFragment

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.table.model import TableSchema, ZoneMaps

#: the name of the scenario (``scenario.spec.name``) a what-if on a real table carries
OWN_SCENARIO = "own-table"
#: a cut target no partition reaches: each file becomes exactly one simulated partition
_WHOLE = 2**62
#: a row-data column (no statistics, not in the schema) holding each sample row's place in
#: ingestion order: "keep the input order" (PTO's bin-packing) is a sort on it
INGEST_ORDER = "__ingest_order__"


def stat_columns(schema: "TableSchema", zonemaps: "ZoneMaps") -> list[str]:
    """Columns the simulated table carries rows for: non-string orderable columns with a
    zonemap (strings keep their bytes but, as in the presets, no statistics)."""
    out = []
    for name, ltype in schema.columns:
        if ltype in logical_types.ORDERABLE_TYPES and not logical_types.is_string(ltype) \
                and name in zonemaps.columns:
            out.append(name)
    return out


def anchor_sample(sample: PartitionSample, zonemaps: "ZoneMaps") -> dict[str, np.ndarray]:
    """The sample with each file's extreme sampled values moved to the file's zonemap
    bounds (module docstring), so min/max per file equal the real zonemap.

    >>> from types import SimpleNamespace
    >>> s = PartitionSample({"x": np.array([3.0, 5.0, np.nan, 8.0, 9.0])}, np.array([3, 2]), 1.0)
    >>> zm = SimpleNamespace(columns={"x": SimpleNamespace(lo=np.array([1.0, 7.0]),
    ...     hi=np.array([6.0, 12.0]), valid=np.array([True, True]))})
    >>> anchor_sample(s, zm)["x"].tolist()
    [3.0, 6.0, 1.0, 7.0, 12.0]
    """
    pid = np.repeat(np.arange(len(sample.counts)), sample.counts)
    first = sample.starts
    last = first + sample.counts - 1
    out = {}
    for col, values in sample.data.items():
        z = zonemaps.columns[col]
        lo_p = np.where(z.valid, z.lo, np.nan)[pid]
        hi_p = np.where(z.valid, z.hi, np.nan)[pid]
        v = np.asarray(values, dtype=np.float64).copy()
        # nulls take the file's minimum (or, with no bounds, the sampled minimum)
        fallback = np.where(np.isnan(lo_p), np.nanmin(v) if np.isfinite(v).any() else 0.0, lo_p)
        v = np.where(np.isnan(v), fallback, v)
        v = np.where(np.isnan(lo_p), v, np.clip(v, lo_p, np.where(np.isnan(hi_p), np.inf, hi_p)))
        order = np.lexsort((v, pid))  # by file, then value
        valid = z.valid & (sample.counts > 0)
        argmin, argmax = order[first[valid]], order[last[valid]]
        v[argmin] = z.lo[valid]
        v[argmax] = z.hi[valid]
        out[col] = v
    return out


def column_widths(schema: "TableSchema", zonemaps: "ZoneMaps", sample_rows: int) -> dict[str, float]:
    """Bytes per sample row of each column, so sampled partitions weigh what their files
    weigh (a column without per-column sizes gets an equal share of the rest)."""
    n = max(1, int(sample_rows))
    sized = {c: float(zonemaps.columns[c].compressed_bytes.sum()) for c in schema.names
             if c in zonemaps.columns}
    known = sum(sized.values())
    rest = max(0.0, float(zonemaps.bytes.sum()) - known)
    unsized = [c for c in schema.names if sized.get(c, 0.0) <= 0]
    share = rest / len(unsized) if unsized else 0.0
    return {c: (sized[c] if sized.get(c, 0.0) > 0 else share) / n for c in schema.names}


# ------------------------------------------------------------------ the workload
def quantile_map(values_from: np.ndarray, values_to: np.ndarray, x: float) -> float:
    """``x``'s quantile in ``values_from``, read back in ``values_to`` (a range mapped
    from one column to another keeps its selectivity).

    >>> round(quantile_map(np.arange(100.0), np.arange(100.0) * 10, 25.0), 1)
    247.5
    """
    a = np.sort(values_from[np.isfinite(values_from)])
    b = np.sort(values_to[np.isfinite(values_to)])
    if not len(a) or not len(b):
        raise InvalidParameterError("no sampled values to map a range by quantile")
    q = np.searchsorted(a, x, side="left") / len(a)
    return float(np.quantile(b, min(1.0, max(0.0, q))))


def shift_fragments(fragments: Sequence[ScanFragment], source: str, target: str,
                    data: Mapping[str, np.ndarray], types: Mapping[str, str],
                    suffix: str = "~shift") -> list[ScanFragment]:
    """The same queries with their predicate on ``source`` moved to ``target`` (same
    logical type), each bound mapped by quantile over the sampled rows; queries without
    a ``source`` predicate are kept as they are. Ids get ``suffix``."""
    if types.get(source) != types.get(target):
        raise InvalidParameterError(f"shift: {source} is {types.get(source)} but {target} is "
                                    f"{types.get(target)}; pick a column of the same type")
    ltype = types[source]
    src, dst = data[source], data[target]

    def bound(v: Any) -> Any:
        if v is None:
            return None
        enc = quantile_map(src, dst, float(logical_types.encode_scalar(ltype, v)))
        if ltype in ("date", "int"):
            enc = float(round(enc))
        return logical_types.decode_scalar(ltype, enc)

    out = []
    for f in fragments:
        boxes = []
        for box in f.boxes:
            new = {c: r for c, r in box.items() if c != source}
            if source in box:
                r = box[source]
                new[target] = Range(bound(r.min), bound(r.max), r.min_inclusive, r.max_inclusive)
            boxes.append(new)
        columns = tuple(dict.fromkeys(target if c == source else c for c in f.columns))
        out.append(dataclasses.replace(f, query_id=f"{f.query_id}{suffix}", boxes=tuple(boxes),
                                       columns=columns, sql=None,
                                       extra={**dict(f.extra), "workload": "shifted"}))
    return out


def predicate_mix(fragments: Sequence[ScanFragment]) -> tuple[tuple[str, float], ...]:
    """Predicated columns by how many queries filter them, most first (a period's mix)."""
    counts = Counter(c for f in fragments for c in f.predicated_columns)
    return tuple((c, float(n)) for c, n in counts.most_common()) or (("(none)", 1.0),)


def _period(batches: int, fragments: Sequence[ScanFragment], recluster: bool) -> PeriodSpec:
    mix = predicate_mix(fragments)
    return PeriodSpec(batches=batches, predicate_mix=mix, shifting_rate=0.0, queries=bool(fragments),
                      recluster=recluster, oracle_columns=(mix[0][0],) if mix[0][0] != "(none)" else ())


def own_scenario(table: str, schema: "TableSchema", zonemaps: "ZoneMaps", sample: PartitionSample,
                 fragments: Sequence[ScanFragment], target_rows: int, batches: int = 8,
                 shifted: Sequence[ScanFragment] = ()) -> Scenario:
    """The what-if scenario on a real table (module docstring): period 1 ingests the
    sample and runs ``fragments``; period 2 replays them in ``batches`` batches with
    reclustering; period 3 (when ``shifted`` is given) replays ``shifted``."""
    if batches < 1:
        raise InvalidParameterError(f"batches must be >= 1, got {batches}")
    if not fragments:
        raise InvalidParameterError(f"table {table} has no imported workload to replay; "
                                    f"import a query log first (layout-advisor workload import)")
    n = sample.rows
    data = {**anchor_sample(sample, zonemaps), INGEST_ORDER: np.arange(n, dtype=np.float64)}
    replay = [dataclasses.replace(f, query_id=f"{f.query_id}~replay",
                                  extra={**dict(f.extra), "workload": "replay"}) for f in fragments]
    phases = [(list(fragments), 1, False), (replay, batches, True)]
    if shifted:
        phases.append((list(shifted), batches, True))
    periods = tuple(_period(b, frs, rc) for frs, b, rc in phases)
    clock = dt.datetime(2000, 1, 1)
    out: list[Batch] = []
    for p, (frs, b, rc) in enumerate(phases, start=1):
        cuts = np.linspace(0, len(frs), b + 1).round().astype(int)
        for i in range(b):
            first = not out
            out.append(Batch(index=len(out), period=p, batch=i + 1, row_start=0 if first else n,
                             row_stop=n, fragments=tuple(frs[cuts[i]:cuts[i + 1]]), recluster=rc,
                             measured=p >= 2, regenerated=0, clock=clock))
    ds = Dataset(table=table, schema=schema, widths=column_widths(schema, zonemaps, n), data=data,
                 batch_offsets=np.array([0] + [n] * len(out), dtype=np.int64),
                 reference={}, clocks=[clock] * len(out))
    spec = ScenarioSpec(name=OWN_SCENARIO, periods=periods, workloads=(), window={}, unit={},
                        target_rows=max(1, int(target_rows)), measure_from_period=2,
                        description=f"the imported workload of {table} on its current files")
    return Scenario(spec=spec, dataset=ds, batches=out,
                    params={"partition_starts": sample.starts, "sample_fraction": sample.fraction})


# ------------------------------------------------------------------ a fixed design
class DesignOnce(Policy):
    """A whole-table design chosen before the replay (PTO's, designed on the real files
    from the whole imported workload, PTO section 3.1), applied as one full rewrite at the
    start of the first reclustering period, then kept.

    ``layout`` and ``columns``: the design's sort (``"sort"`` or ``"zorder"``); a
    ``partition_by`` column leads a sort key (files then hardly straddle two partition
    values, as partitioned files never do) and is otherwise ignored; ``"binpack"`` keeps
    the input order, which the simulator cannot tell from not rewriting, so nothing is
    proposed. File and row-group sizes are not simulated (the table's target is used).
    """

    name = "pto"

    def __init__(self, layout: str = "sort", columns: tuple[str, ...] = (),
                 partition_by: str | None = None, target_file_bytes: int | None = None,
                 reason: str = "") -> None:
        self.layout = layout
        self.columns = columns
        self.partition_by = partition_by
        self.target_file_bytes = target_file_bytes
        self.reason = reason
        self.due_ = False
        self.applied_ = False

    def key(self) -> tuple[str, tuple[str, ...]]:
        """The layout and key columns the simulator applies."""
        layout, cols = self.layout, tuple(self.columns)
        if layout == "binpack":
            layout, cols = "sort", (INGEST_ORDER,)
        if self.partition_by and layout == "sort":
            cols = (self.partition_by, *[c for c in cols if c != self.partition_by])
        return layout, cols

    def begin_period(self, info: PeriodInfo) -> None:
        self.due_ = info.recluster and not self.applied_

    def before_queries(self, ctx: PolicyContext) -> Proposal | None:
        if not self.due_:
            return None
        self.due_, self.applied_ = False, True
        layout, cols = self.key()
        if layout not in ("sort", "zorder", "hilbert") or not cols:
            self.last_decision_ = {"reason": f"{self.name}: layout {layout} cannot be simulated"}
            return None
        self.last_decision_ = {"reason": self.reason}
        size = {"target_file_bytes": int(self.target_file_bytes)} if self.target_file_bytes else {}
        return whole_table_proposal(ctx, self.name, layout, cols, list(ctx.zonemaps.paths),
                                    self.reason or f"{self.name}: {layout} on {', '.join(cols)}",
                                    layout_params=size, params=self.get_params())

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        return None


# ------------------------------------------------------------------ PAW, unpriced
class PawTreeOnly(PawPolicy):
    """PAW (:class:`engine.policy.paw.PawPolicy`, same parameters) whose design is the
    partition tree alone: the same tree :func:`engine.design.paw.designer.design_for_table`
    fits (same columns, history boxes, sample and scaled ``b_min``), with ``price=False``:
    not priced against the Qd-tree, k-d tree and lower-bound baselines.

    Why: that pricing (PAW section VI's comparison, shown in a real plan's reason) walks
    every history and extended query through four trees and the sample; it does not take
    part in the decision, yet it is most of PAW's time and grows with the leaves (one per
    file) (``bench/ui/README.md``). With precise descriptors
    (``n_mbr`` > 0) or without the simulator's row sampler the registry's design runs.
    """

    name = "paw"

    def _design(self, ctx: PolicyContext, fragments: Sequence[ScanFragment]) -> Proposal | None:
        if self.sampler_ is None or self.n_mbr:
            return super()._design(ctx, fragments)
        zm = ctx.zonemaps
        try:
            design = design_for_table(zm, fragments, delta=self.delta, b_min_rows=self.b_min_rows,
                                      alpha=self.alpha, psi=self.psi, refine=self.refine,
                                      max_columns=self.max_columns, fit_rows=self.fit_rows, seed=self.seed,
                                      sampler=self.sampler_, price=False)
        except InvalidParameterError as e:  # the sampler drew no rows
            self.last_decision_ = {"action": "none", "reason": f"PAW: {e}"}
            return None
        if design is None:
            self.last_decision_ = {"action": "none", "reason": "no window query constrains a numeric, "
                                   "date or timestamp column of the table"}
            return None
        cols = list(design.tree.columns)
        reason = (f"PAW: full repartition into {len(design.tree.leaves_)} partitions over {', '.join(cols)} "
                  f"(b_min = {design.b_min_rows} rows; not priced against the baselines)")
        proposal = whole_table_proposal(ctx, self.name, "paw", cols, list(zm.paths), reason,
                                        layout_params={"tree": design.tree.router_json()}, params=self.get_params())
        self.last_decision_ = {"action": "propose", "reason": reason}
        return dataclasses.replace(proposal, estimated_cost=groups_rewrite_cost(zm, proposal.groups, ctx.settings))


# ------------------------------------------------------------------ the run
class OwnTable(SimTable):
    """A :class:`SimTable` whose first ingestion recreates the real table's files, one
    partition per file (``starts``: each file's first sample row)."""

    def __init__(self, *args: Any, starts: np.ndarray, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.starts = np.asarray(starts, dtype=np.int64)

    def ingest(self, start: int, stop: int) -> np.ndarray:
        if stop <= start:
            return np.zeros(0, dtype=np.int64)
        seg = self.starts[(self.starts >= start) & (self.starts < stop)] - start
        target, self.target_rows = self.target_rows, _WHOLE  # each segment stays whole
        try:
            return self._append(np.arange(start, stop, dtype=np.int64), seg)
        finally:
            self.target_rows = target


def _without_output_params(proposal: Proposal) -> Proposal:
    """``proposal`` with the executor's output parameters taken out of its groups'
    ``layout_params`` (:class:`OwnRun` applies the file size itself; the simulator's
    ``apply_groups`` must not see them)."""
    if not any(OUTPUT_PARAMS & set(g.layout_params) for g in proposal.groups):
        return proposal
    groups = tuple(dataclasses.replace(g, layout_params={k: v for k, v in g.layout_params.items()
                                                         if k not in OUTPUT_PARAMS})
                   for g in proposal.groups)
    return dataclasses.replace(proposal, groups=groups)


class OwnRun(SimRun):
    """:class:`SimRun` on an :class:`OwnTable`; a proposal whose groups name a
    ``target_file_bytes`` (the executor's contract, :class:`engine.policy.base.PlanGroup`)
    is cut at that size, in sample rows of the table's simulated width."""

    def __init__(self, scenario: Scenario, *args: Any, **kw: Any) -> None:
        super().__init__(scenario, *args, **kw)
        ds = scenario.dataset
        self.table = OwnTable(ds.schema, ds.data, ds.widths, scenario.spec.target_rows,
                              starts=scenario.params["partition_starts"])
        self.scans = ScanCache(self.table)

    def execute(self, proposal: Proposal, charged: bool) -> Any:
        sizes = {g.layout_params.get("target_file_bytes") for g in proposal.groups}
        proposal = _without_output_params(proposal)
        if len(sizes) != 1 or not next(iter(sizes)):
            return super().execute(proposal, charged)
        width = sum(self.table.widths.values()) or 1.0
        target, self.table.target_rows = self.table.target_rows, max(1, round(float(sizes.pop()) / width))
        try:
            return super().execute(proposal, charged)
        finally:
            self.table.target_rows = target


def simulate_own(scenario: Scenario, policies: Mapping[str, "Policy"], settings: "Settings",
                 progress: ProgressFn | None = None, act_every: str = "batch",
                 history: int = HISTORY_LIMIT, compiled: Mapping[str, CompiledFragment] | None = None,
                 observer: Callable[..., None] | None = None,
                 feedback: str = "batch", fixed_per: str = "plan",
                 cold_start: str = DEFAULT_COLD_START) -> dict[str, PolicyRun]:
    """:func:`engine.sim.runner.simulate_policies` on the own-table scenario (priced as the
    Spark executor runs a plan unless ``fixed_per="group"``; ``cold_start`` as there)."""
    check_modes(act_every, feedback)
    compiled = compiled or compile_scenario(scenario)
    return {name: OwnRun(scenario, name, policy, settings, compiled, act_every, history, observer,
                         feedback, fixed_per, cold_start).go(progress, i, len(policies))
            for i, (name, policy) in enumerate(policies.items())}
