"""Typed answers of the façade: frozen dataclasses whose ``to_json()`` is what ``--json``
prints and what the dashboard reads (the same keys as the fields, in field order)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

__all__ = ["KMax", "RunEta", "TableView", "WairState"]


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
