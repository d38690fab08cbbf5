"""The policy interface and the proposal it returns.

A policy looks at a table snapshot's zonemaps, a window of recent scan fragments with their
pruning analysis, and its own state, and returns a :class:`Proposal` or None. The same
policies drive real plans (``engine.plan``) and the simulator (``engine.sim``). After a
proposal is executed, the caller reports what happened with :meth:`Policy.observe`
(realized savings feed WAIR's credit and adaptive window).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from engine.config import Settings
    from engine.pruning import FragmentScan
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

LAYOUT_KINDS = ("sort", "zorder", "hilbert", "qdtree")


@dataclass(frozen=True)
class PlanGroup:
    """Partitions rewritten together with one ordering.

    ``partitions`` are file paths; ``layout`` one of LAYOUT_KINDS; ``columns`` the key
    columns in priority order; ``layout_params`` anything the ordering needs beyond the
    columns (e.g. a Qd-tree's cut candidates); ``reason`` says why, for a human.
    """

    partitions: tuple[str, ...]
    layout: str
    columns: tuple[str, ...]
    reason: str = ""
    layout_params: Mapping[str, Any] = field(default_factory=dict)
    predicted_saving_bytes: float = 0.0


@dataclass(frozen=True)
class CostEstimate:
    bytes_read: float
    bytes_written: float
    cpu_seconds: float
    money: float


@dataclass(frozen=True)
class Proposal:
    """What a policy wants done, with its estimates and the evidence behind them."""

    policy: str
    params: Mapping[str, Any]
    groups: tuple[PlanGroup, ...]
    estimated_cost: CostEstimate
    predicted_saving: Mapping[str, float]  # bytes, cpu_seconds, money per window; window_queries
    break_even_queries: float | None = None
    curve: Sequence[tuple[int, float]] = ()  # Algorithm 2: (cut, net cost in CPU-seconds)
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def partitions(self) -> tuple[str, ...]:
        return tuple(p for g in self.groups for p in g.partitions)


@dataclass(frozen=True)
class PolicyContext:
    """Everything a policy may look at for one decision."""

    table: str
    snapshot_id: str
    zonemaps: "ZoneMaps"
    window: Sequence["ScanFragment"]  # most recent last
    scans: Sequence["FragmentScan"]  # pruning analysis of each window fragment, same order
    settings: "Settings"
    queries_seen: int = 0  # queries since the policy started (for the allowance c * |Q|)


@dataclass(frozen=True)
class Feedback:
    """What a run achieved, measured with zonemaps before and after on later queries."""

    predicted_saving_cpu_s: float
    realized_saving_cpu_s: float
    recluster_cost_cpu_s: float
    queries: int


class Policy(Protocol):
    name: str

    def propose(self, ctx: PolicyContext) -> Proposal | None: ...

    def observe(self, feedback: Feedback) -> None: ...
