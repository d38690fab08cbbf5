"""The reclustering cost model: bytes -> CPU-seconds -> money (WAIR section 4.2).

WAIR expresses both sides of its trade-off in CPU time. The cost of reclustering a set of
micro-partitions, ``t_r(P)``, "depends on whether P fits in memory. If they fit, we perform
an in-memory quicksort [...] Otherwise, we fall back to an external merge sort. In both
cases, t_r(P) is expressed as a function of the aggregate size of P."

Here, for ``B`` bytes and the rates of :class:`engine.core.config.Settings`:

* read:  ``B / scan_bytes_per_s`` (fetch the partitions);
* sort and write, in memory (``B <= memory_budget_bytes``): ``B / sort_bytes_per_s``;
* sort and write, external (``B > memory_budget_bytes``): the data is cut into
  ``runs = ceil(B / memory_budget_bytes)`` sorted runs that are merged pairwise, which takes
  ``passes = ceil(log2(runs))`` merge passes; each pass re-reads and re-writes everything,
  so the sort costs ``external_sort_penalty * passes * B / sort_bytes_per_s`` (an
  ``n log n`` shape above the budget, a step at the budget).

``bytes_read = bytes_written = B``; money is ``cpu_seconds / 3600 * price_per_cpu_hour``.

Calibrated (``layout-advisor calibrate``, :mod:`engine.spark.calibrate`): the executor runs
a plan as one Spark job, so a plan pays ``rewrite_fixed_s`` once (job start, planning,
verification, commit) plus the read (``rewrite_read_bytes_per_s``, else
``scan_bytes_per_s``) and the sort-and-write rate, all fitted by least squares on the
configured Spark's wall time; with the defaults (fixed cost 0) the model is the paper's.
WAIR's memory limit k_max (section 3.3) exists to stay on the cheap side of that step:
:func:`recluster_cost_groups` prices a selection split into groups, each sorted on its own.

Example:
>>> from engine.core.config import Settings
>>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, memory_budget_bytes=1000)
>>> recluster_cost(500, s).cpu_seconds  # 500/100 + 500/50
15.0
>>> recluster_cost(4000, s).cpu_seconds  # 4 runs -> 2 passes: 40 + 2.0 * 2 * 80
360.0
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.base import CostEstimate

if TYPE_CHECKING:
    from engine.core.config import Settings


def money(cpu_seconds: float, settings: "Settings") -> float:
    """Money for ``cpu_seconds`` of compute at ``settings.price_per_cpu_hour``."""
    return float(cpu_seconds) / 3600.0 * settings.price_per_cpu_hour


def scan_seconds(nbytes: float, settings: "Settings") -> float:
    """CPU-seconds to scan ``nbytes`` at ``settings.scan_bytes_per_s`` (WAIR's t_read
    when a query's measured duration is not known)."""
    return float(nbytes) / settings.scan_bytes_per_s


def merge_passes(total_bytes: float, settings: "Settings") -> int:
    """Merge passes of an external sort of ``total_bytes``; 0 when it fits in memory."""
    budget = float(settings.memory_budget_bytes)
    if total_bytes <= budget:
        return 0
    runs = math.ceil(total_bytes / budget)
    return max(1, math.ceil(math.log2(runs)))


def sort_seconds(total_bytes: float, settings: "Settings") -> float:
    """CPU-seconds to sort and write ``total_bytes`` (in memory, or external merge sort)."""
    base = float(total_bytes) / settings.sort_bytes_per_s
    passes = merge_passes(total_bytes, settings)
    return base if passes == 0 else settings.external_sort_penalty * passes * base


def read_rate(settings: "Settings") -> float:
    """Bytes per second a rewrite reads: the calibrated rate, else ``scan_bytes_per_s``."""
    return float(getattr(settings, "rewrite_read_bytes_per_s", 0.0) or settings.scan_bytes_per_s)


def query_seconds(nbytes: float, settings: "Settings") -> float:
    """Seconds of one query scanning ``nbytes``: the calibrated per-query fixed cost plus
    the calibrated scan rate (``scan_bytes_per_s`` until calibrated).

    Example:
    >>> from engine.core.config import Settings
    >>> query_seconds(2e6, Settings(query_fixed_s=0.01, query_scan_bytes_per_s=1e8))
    0.03
    """
    rate = float(settings.query_scan_bytes_per_s or settings.scan_bytes_per_s)
    return float(settings.query_fixed_s) + float(nbytes) / rate


def recluster_seconds_array(total_bytes: np.ndarray, settings: "Settings") -> np.ndarray:
    """Vectorized :func:`recluster_cost` CPU-seconds for many set sizes at once."""
    b = np.asarray(total_bytes, dtype=np.float64)
    budget = float(settings.memory_budget_bytes)
    runs = np.ceil(np.maximum(b, 1.0) / budget)
    passes = np.where(b > budget, np.maximum(1.0, np.ceil(np.log2(np.maximum(runs, 1.0)))), 0.0)
    base = b / settings.sort_bytes_per_s
    sort = np.where(passes > 0, settings.external_sort_penalty * passes * base, base)
    return settings.rewrite_fixed_s + b / read_rate(settings) + sort


def recluster_cost(total_bytes: float, settings: "Settings") -> CostEstimate:
    """Estimated cost of reading, sorting and rewriting ``total_bytes`` as one set."""
    if total_bytes < 0 or not math.isfinite(total_bytes):
        raise InvalidParameterError(f"recluster size must be a finite number >= 0, got {total_bytes}")
    cpu = (settings.rewrite_fixed_s + float(total_bytes) / read_rate(settings)
           + sort_seconds(total_bytes, settings))
    return CostEstimate(bytes_read=float(total_bytes), bytes_written=float(total_bytes),
                        cpu_seconds=cpu, money=money(cpu, settings))


def recluster_cost_groups(group_bytes: Sequence[float], settings: "Settings") -> CostEstimate:
    """Cost of reclustering several groups, each sorted on its own (k_max splitting), in
    ONE job: the fixed cost is paid once, not per group.

    Example:
    >>> from engine.core.config import Settings
    >>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0)
    >>> recluster_cost_groups([100, 200], s).cpu_seconds  # 2 + 300/100 + 300/50
    11.0
    """
    parts = [recluster_cost(float(b), settings) for b in group_bytes]
    cpu = sum(p.cpu_seconds for p in parts) - settings.rewrite_fixed_s * max(0, len(parts) - 1)
    total = float(sum(p.bytes_read for p in parts))
    return CostEstimate(bytes_read=total, bytes_written=total, cpu_seconds=cpu,
                        money=money(cpu, settings))


