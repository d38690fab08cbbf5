"""What a simulation records: per batch and per policy, and the totals the API returns.

Units: bytes (platform independent), CPU-seconds and money from the configured rates
(``Settings.scan_bytes_per_s`` for queries; :func:`engine.policy.costmodel.recluster_cost`
for rewrites). ``recluster_bytes`` is bytes read plus bytes written by reclustering;
``total_bytes = query_bytes + recluster_bytes``. Totals cover the *measured* batches (from
the first reclustering period unless the scenario says otherwise).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class BatchRecord:
    period: int
    batch: int
    index: int
    measured: bool
    queries: int = 0
    partitions: int = 0  # table size when the queries ran
    query_bytes: float = 0.0
    query_bytes_by_workload: dict[str, float] = field(default_factory=dict)
    partitions_scanned: int = 0  # summed over the batch's queries
    partitions_pruned: int = 0
    pruning_rate: float = 0.0  # mean over queries of the pruned share of partitions
    recluster_bytes_read: float = 0.0
    recluster_bytes_written: float = 0.0
    recluster_partitions: int = 0  # partitions rewritten (inputs)
    recluster_groups: int = 0
    recluster_layouts: dict[str, int] = field(default_factory=dict)
    uncharged_bytes: float = 0.0  # the oracle's own sorting, reported apart
    query_cpu_s: float = 0.0
    recluster_cpu_s: float = 0.0  # includes cold_start_s
    cold_start_s: float = 0.0  # the Spark session's cold start billed (engine.sim.session)
    money: float = 0.0
    decision_s: float = 0.0  # wall time the policy took to decide

    @property
    def recluster_bytes(self) -> float:
        return self.recluster_bytes_read + self.recluster_bytes_written

    @property
    def total_bytes(self) -> float:
        return self.query_bytes + self.recluster_bytes

    @property
    def cpu_seconds(self) -> float:
        return self.query_cpu_s + self.recluster_cpu_s

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(recluster_bytes=self.recluster_bytes, total_bytes=self.total_bytes,
                 cpu_seconds=self.cpu_seconds)
        return d


@dataclass
class PolicyRun:
    name: str
    params: dict[str, Any]
    batches: list[BatchRecord] = field(default_factory=list)
    query_bytes: list[float] = field(default_factory=list)  # per measured query
    query_pruning: list[float] = field(default_factory=list)  # per measured query
    query_workload: list[str] = field(default_factory=list)
    feedbacks: list[dict[str, float]] = field(default_factory=list)
    wall_seconds: float = 0.0

    def measured(self) -> list[BatchRecord]:
        return [b for b in self.batches if b.measured]

    def totals(self) -> dict[str, Any]:
        ms = self.measured()
        qb = sum(b.query_bytes for b in ms)
        rr = sum(b.recluster_bytes_read for b in ms)
        rw = sum(b.recluster_bytes_written for b in ms)
        nq = sum(b.queries for b in ms)
        by_wl: dict[str, float] = {}
        for b in ms:
            for k, v in b.query_bytes_by_workload.items():
                by_wl[k] = by_wl.get(k, 0.0) + v
        qcpu = sum(b.query_cpu_s for b in ms)
        rcpu = sum(b.recluster_cpu_s for b in ms)
        cold = sum(b.cold_start_s for b in ms)
        return {
            "query_bytes": qb, "recluster_bytes": rr + rw, "recluster_bytes_read": rr,
            "recluster_bytes_written": rw, "total_bytes": qb + rr + rw,
            "query_bytes_by_workload": by_wl,
            "pruning_rate": float(np.mean(self.query_pruning)) if self.query_pruning else 0.0,
            "queries": nq, "partitions_rewritten": sum(b.recluster_partitions for b in ms),
            "query_cpu_seconds": qcpu, "recluster_cpu_seconds": rcpu, "cpu_seconds": qcpu + rcpu,
            "cold_start_seconds": cold,  # part of recluster_cpu_seconds
            "money": sum(b.money for b in ms),
            "uncharged_bytes": sum(b.uncharged_bytes for b in ms),
            "decision_seconds": sum(b.decision_s for b in self.batches),
            "wall_seconds": self.wall_seconds,
        }

    def to_json(self, per_batch: bool = True) -> dict[str, Any]:
        out = {"policy": self.name, "params": self.params, **self.totals()}
        if per_batch:
            out["batches"] = [
                {"period": b.period, "batch": b.batch, "index": b.index, "measured": b.measured,
                 "queries": b.queries, "partitions": b.partitions,
                 "query_bytes": b.query_bytes, "recluster_bytes": b.recluster_bytes,
                 "total_bytes": b.total_bytes, "pruning_rate": b.pruning_rate,
                 "partitions_scanned": b.partitions_scanned, "partitions_pruned": b.partitions_pruned,
                 "partitions_rewritten": b.recluster_partitions,
                 "query_bytes_by_workload": b.query_bytes_by_workload,
                 "cpu_seconds": b.cpu_seconds, "query_cpu_seconds": b.query_cpu_s,
                 "recluster_cpu_seconds": b.recluster_cpu_s, "cold_start_seconds": b.cold_start_s,
                 "money": b.money,
                 "layouts": b.recluster_layouts, "uncharged_bytes": b.uncharged_bytes}
                for b in self.batches]
        return out
