"""The policy interface and the proposal it returns.

A policy looks at a table snapshot's zonemaps, a window of recent scan fragments with their
pruning analysis, and its own state, and returns a :class:`Proposal` or None. The same
policies drive real plans (``engine.plans.service``) and the simulator (``engine.sim``).
After a proposal is executed, the caller reports what happened with :meth:`Policy.observe`
(realized savings feed WAIR's credit and adaptive window).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scan.pruning import FragmentScan
    from engine.scan.rowgroups import RowGroupMaps
    from engine.table.model import ZoneMaps

from engine.workload.model import ScanFragment

#: ``sampler(zonemaps, columns, max_rows, seed)``: at most ``max_rows`` rows drawn uniformly
#: from the partitions of ``zonemaps``, as ``{column: encoded array}`` (the encoding of
#: :mod:`engine.core.logical_types`); see :meth:`Policy.bind_sampler`
RowSampler = Callable[["ZoneMaps", Sequence[str], int, int], Mapping[str, Any]]

LAYOUT_KINDS = ("sort", "zorder", "hilbert", "qdtree", "paw", "binpack")


@dataclass(frozen=True)
class PlanGroup:
    """Partitions rewritten together with one ordering.

    ``partitions`` are file paths; ``layout`` one of LAYOUT_KINDS; ``columns`` the key
    columns in priority order; ``layout_params`` anything the ordering needs beyond the
    columns (e.g. a Qd-tree's cut candidates); ``reason`` says why, for a human.

    The executor's contract: a layout
    kind joins LAYOUT_KINDS when :func:`engine.layout.groups.ordering_for_group` can build
    it and the executor can write it (PAW adds ``"paw"``: rows routed to the partition
    tree's leaves; PTO adds ``"binpack"``: no reordering, files packed to size). Besides
    the ordering's own parameters, ``layout_params`` may carry the physical design the
    executor honours for the group's output: ``target_file_bytes`` (file size),
    ``row_group_bytes`` (Parquet row-group size) and ``partition_by`` (a column: no output
    file straddles two of its values). Absent keys keep today's behaviour.
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
    #: the row groups ``scans`` were charged with (``prune_row_groups``), None at file level;
    #: a policy that scores a change (WAIR's losses) scores it at the same level as its gains
    row_groups: "RowGroupMaps | None" = None


@dataclass(frozen=True)
class Feedback:
    """What a run achieved, measured with zonemaps before and after on later queries."""

    predicted_saving_cpu_s: float
    realized_saving_cpu_s: float
    recluster_cost_cpu_s: float
    queries: int


@dataclass(frozen=True)
class PeriodInfo:
    """What the simulator tells period-aware baselines at a period start (WAIR, section 6.1)."""

    period: int
    recluster: bool
    oracle_layout: str
    oracle_columns: tuple[str, ...]
    history: Sequence[ScanFragment] = ()  # the previous period's queries
    target_rows: int = 0
    types: Mapping[str, str] = field(default_factory=dict)


class Policy(ABC):
    """A reclustering policy: the one interface of real plans and the simulator.

    Conventions of scikit-learn estimators: every parameter is an explicit keyword of
    ``__init__``, stored unchanged under its own name (:meth:`get_params` lists them, and the
    registry refuses any other name); state learned from decisions and feedback ends in
    ``_`` (``last_decision_``, WAIR's ``state_``); no ``**kwargs``.

    Only :meth:`propose` is required. Every other method is a hook with a no-op default, so
    callers (``engine.plans.service``, ``engine.sim.driver``) call them unconditionally:

    * :meth:`decision_window`: how many of the most recent fragments the next decision looks
      at; WAIR closes the windows of queries that ``queries_seen`` completed (section 4.2)
      and answers its adaptive size; None means "no window of my own": the caller decides.
    * :meth:`observe`: realized against predicted savings of an executed proposal.
    * :meth:`state` / :meth:`load_state`: the learned state as JSON, persisted between
      decisions by the plan store (empty for policies without memory).
    * :meth:`begin_period`, :meth:`ingested`, :meth:`before_queries`: the simulator's batch
      protocol (period starts, newly ingested partitions, a rewrite before a batch's queries).
    * :meth:`bind_sampler`: where the policy draws table rows when zonemaps are not enough
      (PAW designs its tree on a row sample); a caller whose partitions are not files (the
      simulator) binds its own :data:`RowSampler`; unbound, a policy reads the files.
    """

    name: ClassVar[str]
    #: whether the simulator charges this policy's rewrites to its cost (the oracle's are not)
    charged: ClassVar[bool] = True

    #: what the last decision was and why; policies assign a new dict (this shared default
    #: is read-only, so no instance can mutate it)
    last_decision_: Mapping[str, Any] = MappingProxyType({})

    @abstractmethod
    def propose(self, ctx: PolicyContext) -> Proposal | None:
        """A proposal for ``ctx``, or None (and the reason in ``last_decision_``)."""

    def decision_window(self, queries_seen: int) -> int | None:
        return None

    def observe(self, feedback: Feedback) -> None:
        return None

    def state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:
        return None

    def begin_period(self, info: PeriodInfo) -> None:
        return None

    def ingested(self, paths: Sequence[str]) -> None:
        return None

    def before_queries(self, ctx: PolicyContext) -> Proposal | None:
        return None

    def bind_sampler(self, sampler: RowSampler | None) -> None:
        """Rows of the table come from ``sampler`` (None: the snapshot's files). PAW uses it
        in the simulator; policies that only read zonemaps ignore it."""
        return None

    @property
    def last_decision(self) -> dict[str, Any]:
        """What the last :meth:`propose` decided and why (``{}`` before the first)."""
        return dict(self.last_decision_)

    @classmethod
    def param_names(cls) -> list[str]:
        """The keyword parameters of ``__init__``: the only names a policy accepts."""
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    def get_params(self) -> dict[str, Any]:
        """The parameters as given (scikit-learn's ``get_params``), for plans and reports."""
        return {name: getattr(self, name) for name in self.param_names()}
