"""Typed answers of the façade: frozen dataclasses whose ``to_json()`` is what ``--json``
prints and what the dashboard reads (the same keys as the fields, in field order; a
:class:`PlanView` prints the keys of its kind, :class:`ColumnClustering` and
:class:`WhatIfReport` the keys their answer carries, as their docstrings say)."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ColumnClustering", "KMax", "PlanSummary", "PlanView", "RunEta", "TableView",
           "WairState", "WhatIfReport"]


@dataclass(frozen=True)
class _Result:
    def to_json(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class KMax(_Result):
    """The k_max WAIR uses on a table's current snapshot when none is given (section 4.4:
    at most this many partitions per group): ``memory_budget_bytes`` over the median
    partition's bytes, at least 2; ``derived`` True (it was not given)."""

    k_max: int
    derived: bool
    memory_budget_bytes: int
    median_partition_bytes: float


@dataclass(frozen=True)
class RunEta(_Result):
    """A run's progress and ETA: groups verified of all, rows written of the plan's rows,
    ``fraction`` done (0..1), ``elapsed_s`` and ``predicted_s`` (the plan's modelled rewrite
    CPU-seconds), ``eta_s`` (0 once it ended), ``calibrated`` (priced with measured rates),
    the job's last ``message``."""

    id: int
    status: str
    groups_done: int
    groups_total: int
    rows_written: int
    rows_total: int
    fraction: float
    elapsed_s: float
    predicted_s: float
    eta_s: float
    calibrated: bool
    message: str


@dataclass(frozen=True)
class WairState(_Result):
    """What WAIR remembers on a table, in the words the dashboard shows. ``saved`` False:
    nothing learned yet. ``credit_cpu_s``: equation 5's net of past rewrites (realized
    savings minus reclustering costs), ``debt_cpu_s``: equation 2's outstanding cost,
    ``windows``: the latest window closes, ``plans``: WAIR's latest plans on the table."""

    table: str
    saved: bool
    window_size: int | None
    window_start: Any
    runs: int
    realized_cpu_s: float
    predicted_cpu_s: float
    cost_cpu_s: float
    credit_cpu_s: float
    debt_cpu_s: float
    windows_closed: int
    windows: Sequence[Mapping[str, Any]]
    plans: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class TableView(_Result):
    """Where a table lives and its current size: its registration (``location``,
    ``managed``, ``format``, ``catalog``, ``identifier``, ``metadata_dir``, target file size,
    ``created_at``), how plans treat it (``partitioned``: plans are split by partition;
    ``merge_on_read``: files with delete files or deletion vectors, never rewritten;
    ``spec_misfits``: files of an older partition spec, left out of plans; each
    ``{path: reason}``), the columns without statistics, and the current snapshot's id,
    operation, partitions, rows, bytes and ``columns`` (``[{"name", "type"}]``)."""

    name: str
    location: str
    managed: bool
    format: str
    catalog: str | None
    identifier: str | None
    partitioned: bool
    merge_on_read: Mapping[str, str]
    spec_misfits: Mapping[str, str]
    columns_without_stats: Sequence[str]
    columns_from_footers: Sequence[str]
    metadata_dir: str | None
    target_rows: int | None
    target_bytes: int | None
    created_at: str
    snapshot: str
    operation: str
    partitions: int
    rows: int
    bytes: int
    columns: Sequence[Mapping[str, str]]


#: the keys of a :class:`PlanView`'s JSON, in order, for each kind of answer
_NO_ACTION_KEYS = ("id", "status", "table", "base_snapshot", "policy", "reason", "explanation",
                   "curve", "details")
_PREVIEW_KEYS = ("id", "status", "table", "base_snapshot", "policy", "params",
                 "partition_count", "groups", "estimated_cost", "predicted_saving",
                 "break_even_queries", "curve", "details", "effective_params", "regressions",
                 "rewrite_price")
_STORED_KEYS = ("id", "status", "table", "base_snapshot", "policy", "params", "groups",
                "partition_count", "estimated_cost", "predicted_saving", "break_even_queries",
                "curve", "details", "created_at", "created_by", "updated_at", "result",
                "predicted_rewrite_seconds", "rewrite_price", "audit", "progress")


@dataclass(frozen=True)
class PlanView(_Result):
    """A plan as the façade answers it: a stored plan, a preview, or a policy's refusal.

    Three kinds, told by ``status``, each with its own JSON keys (:meth:`to_json` prints
    exactly those, in this order; the fields of the other kinds stay None and are left out,
    even where a present key's value is None):

    - ``"no-action"`` (the policy declined; ``id`` None): ``id, status, table,
      base_snapshot, policy, reason, explanation, curve, details``;
    - ``"preview"`` (nothing stored; ``id`` None): ``id, status, table, base_snapshot,
      policy, params, partition_count, groups, estimated_cost, predicted_saving,
      break_even_queries, curve, details, effective_params, regressions, rewrite_price``;
    - any other status (a stored plan: proposed, approved, running, succeeded, failed,
      rejected, stale, cancelled, rolled-back): ``id, status, table, base_snapshot, policy,
      params, groups, partition_count, estimated_cost, predicted_saving,
      break_even_queries, curve, details, created_at, created_by, updated_at, result,
      predicted_rewrite_seconds, rewrite_price, audit, progress``, then ``duplicate_of``
      only when it is set.

    Fields:

    - ``id``: the stored plan's id, None for a preview or a refusal; ``status``: its state
      (``engine.plans.plan``), ``"preview"`` or ``"no-action"``;
    - ``table``, ``base_snapshot`` (the snapshot id the plan was decided on), ``policy``;
    - ``params``: the policy parameters as given (an open mapping: each policy has its own);
      ``effective_params`` (preview): the parameters the policy ran with, defaults filled in;
    - ``groups``: one mapping per rewrite group (``partitions``: file paths, ``layout``,
      ``columns``, ``reason``, ``layout_params``, ``predicted_saving_bytes``);
      ``partition_count``: the files the plan rewrites (micro-partitions, section 3);
    - ``estimated_cost``: the rewrite's ``bytes_read`` and ``bytes_written`` (bytes),
      ``cpu_seconds`` (CPU-seconds) and ``money``; ``predicted_saving``: per window of
      ``window_queries`` queries, ``bytes``, ``cpu_seconds``, ``money`` (section 4.2);
      ``break_even_queries``: queries until the saving pays the cost (None: never);
    - ``curve``: ``[cut, net cost in CPU-seconds]`` pairs (Algorithm 2's cut search);
      ``details``: the policy's evidence (an open mapping: each policy records its own);
    - no-action: ``reason`` (the policy's own words, or the format's) and ``explanation``
      (``why``, ``what_would_change`` and the numbers behind them);
    - preview: ``regressions``: the predicted losses of queries the rewrite slows
      (``bytes``, ``cpu_seconds``, ``queries``, ``columns``);
    - ``rewrite_price`` (preview and stored): the price per cell the rewrite was priced with
      (``source``, ``cell_bytes``, ``label``), None when the plan does not record one;
    - stored: ``created_at``, ``updated_at`` (ISO-8601 UTC), ``created_by`` (the proposer,
      who may not approve it); ``result``: the run's result (new ``snapshot_id``, groups,
      ``cost_check``, ``re_estimated``, ``realized``; or ``error``), None before a run;
      ``predicted_rewrite_seconds``: ``warm`` and ``cold`` (fresh Spark session) wall
      seconds and the ``cold_start_s`` between them; ``audit``: the plan's audit entries,
      oldest first; ``progress``: the last run's progress record, None if never run;
      ``duplicate_of``: set by ``create_plan`` when the proposal equals a plan still waiting
      on the same snapshot (this plan, returned instead of a new one).
    """

    id: int | None
    status: str
    table: str
    base_snapshot: str
    policy: str
    curve: Sequence[Sequence[float]]
    details: Mapping[str, Any]
    params: Mapping[str, Any] | None = None
    groups: Sequence[Mapping[str, Any]] | None = None
    partition_count: int | None = None
    estimated_cost: Mapping[str, float] | None = None
    predicted_saving: Mapping[str, float] | None = None
    break_even_queries: float | None = None
    reason: str | None = None
    explanation: Mapping[str, Any] | None = None
    effective_params: Mapping[str, Any] | None = None
    regressions: Mapping[str, Any] | None = None
    rewrite_price: Mapping[str, Any] | None = None
    created_at: str | None = None
    created_by: str | None = None
    updated_at: str | None = None
    result: Mapping[str, Any] | None = None
    predicted_rewrite_seconds: Mapping[str, float | None] | None = None
    audit: Sequence[Mapping[str, Any]] | None = None
    progress: Mapping[str, Any] | None = None
    duplicate_of: int | None = None

    @property
    def stored(self) -> bool:
        """Whether this is a stored plan (not a preview, not a refusal)."""
        return self.status not in ("preview", "no-action")

    def to_json(self) -> dict[str, Any]:
        """The keys of this kind of answer, in order (see the class docstring)."""
        keys = (_NO_ACTION_KEYS if self.status == "no-action" else
                _PREVIEW_KEYS if self.status == "preview" else _STORED_KEYS)
        out = {k: deepcopy(getattr(self, k)) for k in keys}
        if self.stored and self.duplicate_of is not None:
            out["duplicate_of"] = self.duplicate_of
        return out


@dataclass(frozen=True)
class PlanSummary(_Result):
    """One row of the plan list: ``groups`` and ``partitions`` are counts (rewrite groups,
    files rewritten), ``estimated_cpu_seconds`` the rewrite's predicted CPU-seconds,
    ``predicted_saving_cpu_seconds`` the CPU-seconds saved per window (section 4.2),
    ``created_at`` and ``updated_at`` ISO-8601 UTC, ``created_by`` the proposer;
    ``underdelivered`` whether its run saved less than promised (None before a run,
    :mod:`engine.plans.delivery`)."""

    id: int
    status: str
    table: str
    base_snapshot: str
    policy: str
    groups: int
    partitions: int
    estimated_cpu_seconds: float
    predicted_saving_cpu_seconds: float
    created_at: str
    created_by: str | None
    updated_at: str
    underdelivered: bool | None = None


@dataclass(frozen=True)
class ColumnClustering(_Result):
    """One column's clustering metrics over a snapshot's zonemaps (WAIR section 2.2 and
    Figure 3: Snowflake's overlap and depth, ``SYSTEM$CLUSTERING_INFORMATION``), as
    :func:`engine.api.analyze` answers per column and :func:`engine.api.column_clustering`
    / :func:`engine.api.stored_column_clustering` answer with per-partition arrays.

    Always present (partitions are micro-partitions, section 2; counts are partitions):

    - ``column``, ``type`` (its logical type); ``snapshot``: the snapshot id measured;
    - ``total_partition_count``: partitions with known min/max on the column (with
      ``where``, of those the predicate may touch); ``unknown_partition_count``: the
      others, left out of every metric; ``total_constant_partition_count``: min == max;
    - ``average_overlaps``: mean number of OTHER partitions whose [min, max] meets a
      partition's; ``average_depth``: mean over partitions of the most partitions covering
      one value of its range, itself included (both rounded to 4 decimals; 1.0 depth and
      0.0 overlaps: perfectly clustered); ``max_depth``: the deepest partition's depth;
    - ``partition_depth_histogram``: Snowflake's buckets (``"00000"`` .. ``"00016"`` one per
      depth, then powers of two) -> partition count;
    - ``depth_profile``: ``[start, end, depth]`` segments over the column's domain (values
      decoded: ISO strings for dates and timestamps), coarsened to at most 2,000 keeping each
      bucket's peak; ``deepest_ranges``: the deepest ``{"start", "end", "depth"}`` ranges;
    - ``verdict``: ``"green"``, ``"amber"``, ``"red"`` or ``"grey"`` (nothing known) and its
      ``reason`` in words.

    Optional (None when the answer does not carry them):

    - ``where`` (a SQL predicate) and ``where_partition_count``: :func:`engine.api.analyze`
      scoped to the partitions the predicate may touch;
    - ``ep``: the patent's EP-file summary (``ep_file_partitions``, ``ep_file_count``,
      ``average_local_depth``, ``average_ep_overlap``, ``average_ep_depth``,
      ``subrange_count``, ``deepest_subrange``);
    - ``span_share`` (stored answers): a partition's mean [min, max] width as a share of the
      column's range, 0..1, None for strings (:func:`engine.api.span_shares`);
    - per partition, in snapshot order: ``overlaps``, ``depths`` (-1 where unknown),
      ``constant`` (lists from :func:`engine.api.column_clustering`, numpy int32/bool
      arrays from :func:`engine.api.stored_column_clustering`); with partition lists also
      ``paths``, ``rows``, ``bytes`` (file bytes), ``created_seq`` and the decoded ``min``
      and ``max`` (None where unknown).

    ``json_keys``: the keys :meth:`to_json` prints, in order (:meth:`from_json` keeps those
    of the answer it wraps); empty: every field that is not None, in field order.
    """

    column: str
    type: str
    total_partition_count: int
    total_constant_partition_count: int
    average_overlaps: float
    average_depth: float
    partition_depth_histogram: Mapping[str, int]
    max_depth: int
    depth_profile: Sequence[Sequence[Any]]
    deepest_ranges: Sequence[Mapping[str, Any]]
    unknown_partition_count: int
    verdict: str
    reason: str
    snapshot: str
    where: str | None = None
    where_partition_count: int | None = None
    ep: Mapping[str, Any] | None = None
    span_share: float | None = None
    overlaps: "Sequence[int] | np.ndarray | None" = None
    depths: "Sequence[int] | np.ndarray | None" = None
    constant: "Sequence[bool] | np.ndarray | None" = None
    paths: Sequence[str] | None = None
    rows: Sequence[int] | None = None
    bytes: Sequence[int] | None = None
    created_seq: Sequence[int] | None = None
    min: Sequence[Any] | None = None
    max: Sequence[Any] | None = None
    json_keys: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ColumnClustering":
        """The answer of a domain function (a dict), its keys and their order kept."""
        return cls(**data, json_keys=tuple(data))

    def to_json(self) -> dict[str, Any]:
        """The keys of :attr:`json_keys` (see the class docstring), values copied."""
        keys = self.json_keys or tuple(f.name for f in fields(self)
                                       if f.name != "json_keys" and getattr(self, f.name) is not None)
        return {k: deepcopy(getattr(self, k)) for k in keys}


_WHATIF_OPTIONAL = ("check", "dd_tuning", "pto")


@dataclass(frozen=True)
class WhatIfReport(_Result):
    """The what-if on a table (:func:`engine.api.whatif_table`): its imported workload
    replayed on a simulated copy under several policies, costs in CPU-seconds as WAIR
    prices them (section 4.2: queries' scan time plus reclustering's rewrite time; section
    6's cumulative cost per policy).

    - ``table``, ``snapshot`` (the current snapshot replayed), ``rows`` (the table's rows),
      ``seed`` (of the sample and the replay);
    - ``sample``: ``rows`` sampled, ``fraction`` of each file (0..1), ``files`` (the
      snapshot's), simulated ``columns``, ``target_rows`` (rows of one rewritten file in
      the simulated copy), ``reused`` (kept from an earlier what-if);
    - ``shift``: ``{"from", "to"}`` columns of the shifted replay, None without one;
    - ``scenario``: the replayed scenario's summary (``periods``: ``period``,
      ``predicate``, ``queries``, ``batches``, ``recluster``);
    - ``policies``: name -> ``label`` and the replay's totals and per-batch records
      (CPU-seconds, bytes, pruning rate); ``comparison``: per policy ``recluster_share``
      (0..1 of its CPU-seconds) and its reductions against NR (0..1, None without NR's cost);
    - ``rates``: ``scan_bytes_per_s`` and ``sort_bytes_per_s`` (bytes per CPU-second),
      ``price_per_cpu_hour`` (money), ``cold_start_s`` (a fresh Spark session, seconds);
      ``cold_start``: which replayed rewrites pay it (``"first"``, ``"every"``, ``"none"``);
    - ``estimated``: what is exact and what comes from the sample, in sentences;
    - ``seconds``: the what-if's wall seconds; ``timings``: ``sample_s``, ``pto_design_s``,
      ``replay_s`` and ``policies`` (name -> seconds);
    - optional (None and left out of :meth:`to_json` when absent): ``check`` (NR's
      ``simulated_bytes`` beside ``real_zonemap_bytes`` of the real files, and their
      ``ratio``), ``dd_tuning`` (DD's parameters tuned to WAIR's reclustering budget),
      ``pto`` (PTO's design on the real files: layout, ``why``, ``design_rows``,
      ``simulated_layout``, ``simulated_columns``, ``reused``).
    """

    table: str
    snapshot: str
    rows: int
    seed: int
    sample: Mapping[str, Any]
    shift: Mapping[str, str] | None
    scenario: Mapping[str, Any]
    policies: Mapping[str, Mapping[str, Any]]
    comparison: Mapping[str, Mapping[str, float | None]]
    rates: Mapping[str, float]
    cold_start: str
    estimated: Sequence[str]
    seconds: float
    timings: Mapping[str, Any]
    check: Mapping[str, float] | None = None
    dd_tuning: Mapping[str, Any] | None = None
    pto: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields in order; ``check``, ``dd_tuning`` and ``pto`` only when present."""
        out = asdict(self)
        for name in _WHATIF_OPTIONAL:
            if out[name] is None:
                del out[name]
        return out
