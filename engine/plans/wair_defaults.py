"""WAIR's defaults that depend on the table, for the forms that offer them.

``k_max`` (the most partitions sorted together, section 3.3's "memory capacity for
reclustering micro-partitions") is derived from the memory budget and the table's median
partition unless set (:func:`engine.policy.wair.groups.derived_k_max`):
the CLI's ``plan preview/create`` without ``--k-max`` uses it, and the dashboard's
Recommendation page shows the same number as its default (not the paper's 64, which is
2 GiB over 32 MB partitions, whatever the table).

The first window (:func:`first_window`), when no window is given and WAIR has no saved
state on the table, is a day of the table's queries: the plan service starts WAIR with it,
so a busy table's plan pays back within a day of its queries, not within 50 of them.
"""

from __future__ import annotations

import bisect
import datetime as dt
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.policy.registry import make_policy
from engine.policy.wair.groups import derived_k_max

if TYPE_CHECKING:
    from engine.workload.model import ScanFragment
    from engine.workspace import Workspace

__all__ = ["WINDOW_SPAN_S", "first_window", "wair_k_max", "wair_window"]


def wair_k_max(ws: "Workspace", table: str) -> dict[str, Any]:
    """``{"k_max", "derived", "memory_budget_bytes", "median_partition_bytes"}``: the k_max
    WAIR uses on ``table``'s current snapshot when none is given (``derived`` True): the
    memory budget over the median partition's bytes, at least 2."""
    zm = ws.tables.current_snapshot(table).zonemaps()
    median = float(np.median(zm.bytes)) if len(zm.bytes) else 0.0
    return {"k_max": derived_k_max(None, zm, ws.settings.memory_budget_bytes), "derived": True,
            "memory_budget_bytes": int(ws.settings.memory_budget_bytes), "median_partition_bytes": median}


#: the stretch of the log WAIR's first window covers when no window is given: one day
WINDOW_SPAN_S = 86_400.0


def first_window(fragments: Sequence["ScanFragment"], default: int, most: int,
                 span_s: float = WINDOW_SPAN_S) -> int:
    """WAIR's first window on a table when none is given and the policy has no saved state:
    the fragments of the log's last ``span_s`` seconds (a day: the cycle of a dashboard
    table) within ``[default, most]``; ``default`` when the log's timestamps span less
    than that (too little history to know the table's daily rate) or are missing.

    Section 4.2 gives no initial size and sizes windows in queries: a window of 50 queries
    is twenty minutes of a table queried 3,000 times a day, and no rewrite pays back in
    twenty minutes, while a day is how often such a table's dashboards repeat.
    ``fragments`` are ordered by time (:meth:`engine.workload.store.WorkloadStore.fragments`).

    >>> from types import SimpleNamespace as F
    >>> log = [F(ts=f"2024-03-0{d}T{h:02d}:00:00") for d in (1, 2, 3) for h in range(0, 24, 2)]
    >>> first_window(log, 5, 100), first_window(log, 20, 100), first_window(log, 5, 8)
    (12, 20, 8)
    >>> first_window(log[:12], 5, 100)  # one day of history: the default
    5
    """
    times = [t for t in (_moment(f.ts) for f in fragments) if t is not None]
    if not times or (times[-1] - times[0]).total_seconds() < span_s:
        return int(default)
    since = times[-1] - dt.timedelta(seconds=span_s)
    recent = len(times) - bisect.bisect_right(times, since)
    return int(min(max(recent, default), most))


def wair_window(ws: "Workspace", table: str) -> int | None:
    """The window WAIR's next decision on ``table`` starts from when none is given:
    :func:`first_window` over the table's queries, or None once WAIR keeps a state on the
    table (its own adaptive window applies, section 4.2). The dashboard's default, as the
    CLI's without ``--window``."""
    if ws.control.policy_state(table, "wair"):
        return None
    defaults = make_policy("wair").get_params()
    return first_window(list(ws.workloads.fragments(table)), int(defaults["window"]),
                        int(defaults["max_window"]))


def _moment(ts: str | None) -> dt.datetime | None:
    """A fragment's timestamp as naive UTC (None when absent or not ISO-8601)."""
    if not ts:
        return None
    try:
        moment = dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    return moment.astimezone(dt.timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment
