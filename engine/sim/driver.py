"""The batch protocol: one policy's pass over a scenario, batch by batch.

The simulator (:mod:`engine.sim.runner`, in memory) and the real replay
(:mod:`engine.replay.runner`, Parquet files, Spark and DuckDB) drive policies through the same
steps; only how a table ingests, executes a rewrite and answers a query differs, and those
are the abstract methods of :class:`BatchDriver`. Per batch (:meth:`BatchDriver.step`):

1. period start (the period's first batch): ``policy.begin_period(PeriodInfo)`` with the
   period's oracle key and the previous period's queries;
2. ingestion (:meth:`BatchDriver.ingest`), then ``policy.ingested(new paths)``;
3. in reclustering periods, ``policy.before_queries(ctx)`` (QD's full repartition at a
   period start, the oracle's full sort), executed and charged unless the policy's
   ``charged`` is False;
4. the batch's queries (:meth:`BatchDriver.query`); each one also measures the realized
   saving of earlier rewrites (:class:`Pending`) and delivers the feedback that is due
   (``policy.observe``); with ``act_every="query"`` a decision follows every query;
5. in reclustering periods, the decision: ``policy.propose(ctx)``, executed
   (:meth:`BatchDriver.execute`).

Feedback on an executed proposal: the bytes each later query would read over the rewritten
partitions' old zonemaps minus over their replacements, priced at scan rate like WAIR's
equation 3 (:meth:`Pending.add`). With ``feedback="batch"`` it is followed for one batch's
worth of queries (at most the proposal's window) and the realized saving is extrapolated
to the window's length (``window_queries``), so predicted and realized are compared per
window at the next decision point; ``feedback="window"`` waits for the whole window. What
is still pending at the end is delivered by :meth:`BatchDriver.finish`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.base import Feedback, PeriodInfo, Policy, PolicyContext, Proposal
from engine.policy.costmodel import read_seconds
from engine.sim.scan import CompiledFragment, query_cost

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scenarios.generator import Batch, Scenario
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

ACT_MODES = ("batch", "query")
FEEDBACK_MODES = ("batch", "window")
HISTORY_LIMIT = 1024  # fragments offered to a policy as its window (most recent last)


@dataclass(frozen=True)
class Rewrite:
    """An executed, charged proposal: the rewritten partitions' zonemaps before and after
    and the modelled reclustering cost."""

    old_zonemaps: "ZoneMaps"
    new_zonemaps: "ZoneMaps"
    cost_s: float
    #: row groups of the old / new partitions that have them (PAW's STR row groups), with
    #: each one's position in the zonemaps above (:meth:`SimTable.row_group_zonemaps_of`)
    old_row_groups: "tuple[ZoneMaps, np.ndarray] | None" = None
    new_row_groups: "tuple[ZoneMaps, np.ndarray] | None" = None


@dataclass
class Pending:
    """An executed proposal whose realized saving is being measured on later queries."""

    predicted_s: float
    cost_s: float
    old_zm: "ZoneMaps"
    new_zm: "ZoneMaps"
    target: int  # queries to follow before the feedback is due
    scale_to: int = 0  # extrapolate the realized saving to this many queries (0: no)
    saved_s: float = 0.0
    n: int = 0
    old_row_groups: "tuple[ZoneMaps, np.ndarray] | None" = None  # as in :class:`Rewrite`
    new_row_groups: "tuple[ZoneMaps, np.ndarray] | None" = None

    @property
    def realized_s(self) -> float:
        if self.scale_to and self.n:
            return self.saved_s * self.scale_to / self.n
        return self.saved_s

    def add(self, cf: CompiledFragment, settings: "Settings") -> None:
        """Measure one later query on the old and the new partitions."""
        before = query_cost(self.old_zm, cf, None, self.old_row_groups)
        after = query_cost(self.new_zm, cf, None, self.new_row_groups)
        # the bill's rule (files and bytes), as WAIR's t_read prices the prediction
        self.saved_s += (read_seconds(before.bytes, before.scanned, settings)
                         - read_seconds(after.bytes, after.scanned, settings))
        self.n += 1

    def feedback(self) -> Feedback:
        return Feedback(predicted_saving_cpu_s=self.predicted_s,
                        realized_saving_cpu_s=self.realized_s,
                        recluster_cost_cpu_s=self.cost_s, queries=self.scale_to or self.n)


def queries_per_batch(scenario: "Scenario") -> int:
    """The median number of queries of a batch with queries (at least 1)."""
    counts = [len(b.fragments) for b in scenario.batches if b.fragments]
    return max(1, int(np.median(counts)) if counts else 1)


def check_modes(act_every: str, feedback: str) -> None:
    if act_every not in ACT_MODES:
        raise InvalidParameterError(
            f"act_every must be one of {', '.join(ACT_MODES)}, got {act_every!r}")
    if feedback not in FEEDBACK_MODES:
        raise InvalidParameterError(
            f"feedback must be one of {', '.join(FEEDBACK_MODES)}, got {feedback!r}")


class BatchDriver(ABC):
    """One policy's table and loop state; subclasses say how the table ingests, rewrites
    and answers queries (see the module docstring for the protocol)."""

    def __init__(self, scenario: "Scenario", policy: Policy, settings: "Settings",
                 compiled: Mapping[str, CompiledFragment], history: int = HISTORY_LIMIT,
                 act_every: str = "batch", feedback: str = "batch",
                 feedback_per_batch: int | None = None) -> None:
        check_modes(act_every, feedback)
        self.scenario, self.policy, self.settings = scenario, policy, settings
        self.compiled = compiled
        self.history_limit = history
        self.act_every = act_every
        self.feedback = feedback
        self.feedback_per_batch = feedback_per_batch or queries_per_batch(scenario)
        self.types = dict(scenario.schema.columns)
        self.history: list["ScanFragment"] = []
        self.period_frags: dict[int, list["ScanFragment"]] = {}
        self.queries_seen = 0
        self.pending: list[Pending] = []

    # ------------------------------------------------------------------ the table
    @abstractmethod
    def ingest(self, batch: "Batch") -> Sequence[str]:
        """Append the batch's rows; returns the paths of the new partitions."""

    @abstractmethod
    def context(self) -> PolicyContext:
        """What the policy sees now: the table's zonemaps and the window of recent queries."""

    @abstractmethod
    def execute(self, proposal: Proposal, charged: bool) -> Rewrite | None:
        """Rewrite the proposal's partitions; a :class:`Rewrite` to follow when ``charged``."""

    @abstractmethod
    def query(self, batch: "Batch", fragment: "ScanFragment", compiled: CompiledFragment) -> None:
        """Run (or price) one query on the current table and record it."""

    # ------------------------------------------------------------------ records (optional)
    def queries_done(self, batch: "Batch") -> None:
        """After the batch's queries, before its decision."""

    def decided(self, seconds: float) -> None:
        """A policy call (``before_queries`` or ``propose``) took ``seconds``."""

    def observed(self, pending: Pending, feedback: Feedback) -> None:
        """``feedback`` on ``pending`` was delivered to the policy."""

    # ------------------------------------------------------------------ the protocol
    def step(self, batch: "Batch") -> None:
        """One batch of the scenario (module docstring, steps 1-5)."""
        if batch.batch == 1:
            period = self.scenario.period(batch.period)
            prev = self.period_frags.get(batch.period - 1) or self.history
            self.policy.begin_period(PeriodInfo(
                period=batch.period, recluster=batch.recluster,
                oracle_layout=period.oracle_layout, oracle_columns=tuple(period.oracle_columns),
                history=list(prev), target_rows=self.scenario.spec.target_rows,
                types=self.types))
        self.policy.ingested(list(self.ingest(batch)))
        if batch.recluster:
            self._act(self.policy.before_queries, self.policy.charged)
        for frag in batch.fragments:
            cf = self.compiled[frag.query_id]
            self.query(batch, frag, cf)
            for p in self.pending:
                p.add(cf, self.settings)
            self.history.append(frag)
            self.period_frags.setdefault(batch.period, []).append(frag)
            self.queries_seen += 1
            self.deliver()
            if self.act_every == "query" and batch.recluster:
                self._act(self.policy.propose)
        self.queries_done(batch)
        if self.act_every == "batch" and batch.recluster:
            self._act(self.policy.propose)

    def finish(self) -> None:
        """Deliver the feedback still pending at the end of the scenario."""
        self.deliver(final=True)

    def deliver(self, final: bool = False) -> None:
        """Give the policy the feedback whose queries are complete (all measured ones when
        ``final``)."""
        keep = []
        for p in self.pending:
            if p.n >= p.target or (final and p.n > 0):
                fb = p.feedback()
                self.policy.observe(fb)
                self.observed(p, fb)
            elif not final:
                keep.append(p)
        self.pending = keep

    def _act(self, decide: Callable[[PolicyContext], Proposal | None],
             charged: bool = True) -> None:
        t0 = time.perf_counter()
        proposal = decide(self.context())
        self.decided(time.perf_counter() - t0)
        if proposal is None or not proposal.groups:
            return
        rewrite = self.execute(proposal, charged)
        if rewrite is not None:
            self.pending.append(self._pending(proposal, rewrite))

    def _pending(self, proposal: Proposal, rewrite: Rewrite) -> Pending:
        """Follow ``rewrite`` for the proposal's window of queries, or for one batch's worth
        extrapolated to the window (``feedback="batch"``)."""
        predicted = float(proposal.predicted_saving.get("cpu_seconds", 0.0) or 0.0)
        target = int(proposal.predicted_saving.get("window_queries", 0) or 0)
        per_batch = self.feedback_per_batch
        scale_to = 0
        if target <= 0:
            target = per_batch
        elif self.feedback == "batch" and target > per_batch:
            target, scale_to = per_batch, target
        return Pending(predicted, rewrite.cost_s, rewrite.old_zonemaps, rewrite.new_zonemaps,
                       target, scale_to, old_row_groups=rewrite.old_row_groups,
                       new_row_groups=rewrite.new_row_groups)
