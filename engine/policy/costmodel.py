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

Layout terms (:class:`RewriteTerms`, measured by ``calibrate`` on the same Spark; all 0,
so the plain model above, until measured). The paper's ``t_r(P)`` is a function of bytes
only because WAIR always sorts; our executor also writes fitted orderings and cuts files,
and bytes alone under-price a plan of fitted groups and many small files
(bench/executor/README.md). So a plan also pays:

* ``fitted_job_s`` once per plan with any Hilbert / Z-order / Qd-tree / PAW group: the
  executor's extra Spark job that samples the key columns to fit the curve or tree (one
  job for all fitted groups of the plan, so paid once, like ``rewrite_fixed_s``);
* ``B_fitted / fitted_key_bytes_per_s``: the Python key function (Arrow UDF) run on every
  row of the fitted groups; priced per work byte like the rest (below);
* ``file_s`` per output file: each file is a writer open/close, a footer and a commit
  entry; a plan of many small files (the demo's 43 files of 2,000 rows) pays it visibly.
  The sort points ``calibrate`` fits the byte rates on are corrected for it first, so it is
  not counted twice.
* for a plan of two or more groups, ``multi_group_s`` once, ``group_s`` per group beyond
  the first and ``B / multi_group_bytes_per_s``: the executor writes such a plan partitioned
  by group, with a sort key per group and a group-tagged checksum, which costs more than one
  sort of the same bytes.

The terms are settings (``fitted_job_s``, ``fitted_key_bytes_per_s``, ``file_s``,
``multi_group_s``, ``group_s``, ``multi_group_bytes_per_s``; stored by ``calibrate``,
overridable like every rate); every policy prices its proposal with them through
:func:`groups_rewrite_cost` (each group's size from the zonemaps, its layout, and its output
files from :func:`group_files`, the executor's own file-size rule).

The size a group is priced at (:func:`work_bytes`): once calibrated, rows x
columns x ``rewrite_cell_bytes`` (the calibration table's compressed bytes per cell), not
the group's own compressed bytes: the executor's work follows rows and columns, while
compressed bytes per row change with the data and the file size, so a rate per compressed
byte measured on one table misprices another. Uncalibrated (0), the compressed bytes, the
paper's "aggregate size of P". A table measured by ``calibrate --rewrite-on`` has its own
price per cell, put in ``settings.rewrite_cell_bytes`` by the plan service (the table price
resolver); the functions here price whatever the settings hold. The measured terms and the
prediction errors with and without them: bench/executor/README.md.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.layout.output import WriteTarget, output_shape
from engine.policy.base import CostEstimate

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.policy.base import PlanGroup
    from engine.table.model import ZoneMaps

#: layouts whose key is fitted on a sample and computed by a Python function (the
#: executor's ``engine.spark.jobspec.FITTED``; spark is above policy, so named here)
FITTED_LAYOUTS = ("hilbert", "zorder", "qdtree", "paw")


@dataclass(frozen=True)
class RewriteTerms:
    """The executor's costs beyond bytes (see the module docstring), 0 = not measured.

    Read from the settings (``calibration.json``'s ``terms`` merged by
    :func:`engine.core.config.load_settings`, or configured), else given explicitly
    (``bench/executor/bench_executor.py`` reads them from the calibration file).
    """

    fitted_job_s: float = 0.0
    fitted_key_bytes_per_s: float = 0.0
    file_s: float = 0.0
    multi_group_s: float = 0.0
    group_s: float = 0.0
    multi_group_bytes_per_s: float = 0.0

    @classmethod
    def from_settings(cls, settings: "Settings") -> "RewriteTerms":
        """The terms the settings carry (calibrated, or configured; 0 = not calibrated)."""
        return cls(**{k: float(getattr(settings, k)) for k in TERM_KEYS})

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> "RewriteTerms":
        """The terms of a mapping (a calibration file's ``terms``); missing ones are 0."""
        return cls(**{k: float((values or {}).get(k) or 0.0) for k in TERM_KEYS})


#: the layout terms, in the order ``calibrate`` stores and shows them
TERM_KEYS = ("fitted_job_s", "fitted_key_bytes_per_s", "file_s", "multi_group_s", "group_s",
             "multi_group_bytes_per_s")
#: the terms an older calibration file may lack (loaded as 0, ``calibrate --show`` says so)
GROUP_TERM_KEYS = ("multi_group_s", "group_s", "multi_group_bytes_per_s")


def money(cpu_seconds: float, settings: "Settings") -> float:
    """Money for ``cpu_seconds`` of compute at ``settings.price_per_cpu_hour``."""
    return float(cpu_seconds) / 3600.0 * settings.price_per_cpu_hour


def query_scan_rate(settings: "Settings") -> float:
    """Bytes per second a query scans its projected column chunks at: the calibrated
    ``query_scan_bytes_per_s`` (``calibrate``, :mod:`engine.spark.calibrate_queries`), else
    ``scan_bytes_per_s``. The one rate both sides of WAIR's trade use: the bill of a query
    (:func:`query_seconds`) and the value of the bytes a rewrite saves (:func:`scan_seconds`),
    so a saving is never valued at another rate than the bill it reduces.

    Example:
    >>> from engine.core.config import Settings
    >>> query_scan_rate(Settings(scan_bytes_per_s=1e8)), query_scan_rate(Settings(query_scan_bytes_per_s=5e8))
    (100000000.0, 500000000.0)
    """
    return float(settings.query_scan_bytes_per_s or settings.scan_bytes_per_s)


def scan_seconds(nbytes: float, settings: "Settings") -> float:
    """CPU-seconds to scan ``nbytes`` of projected column chunks (WAIR's t_read when a
    query's measured duration is not known; the value of bytes a rewrite saves), at
    :func:`query_scan_rate`, the rate queries are billed at.

    Example:
    >>> from engine.core.config import Settings
    >>> scan_seconds(2e6, Settings(scan_bytes_per_s=1e8)), scan_seconds(2e6, Settings(query_scan_bytes_per_s=4e8))
    (0.02, 0.005)
    """
    return float(nbytes) / query_scan_rate(settings)


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
    return float(settings.rewrite_read_bytes_per_s or settings.scan_bytes_per_s)


def read_seconds(nbytes: float, files: float, settings: "Settings") -> float:
    """The part of a query's bill a layout can change: ``query_file_s`` per file scanned and
    its projected bytes at :func:`query_scan_rate` (:func:`query_seconds` without the
    per-query fixed cost). WAIR's ``t_read(Q)`` when the log has no duration, and what a
    later query's saving is measured in, so the saving and the bill are one rule.

    Example (300 files x 0.5 ms + 1 GB at 500 MB/s):
    >>> from engine.core.config import Settings
    >>> read_seconds(1e9, 300, Settings(query_file_s=0.0005, query_scan_bytes_per_s=5e8))
    2.15
    """
    return float(files) * float(settings.query_file_s) + scan_seconds(nbytes, settings)


def query_seconds(nbytes: float, settings: "Settings", files: float = 0.0) -> float:
    """Seconds of one query scanning ``nbytes`` of projected column chunks in ``files``
    files (those that survive pruning): the calibrated per-query fixed cost, ``query_file_s``
    per file and the bytes at :func:`query_scan_rate` (:mod:`engine.spark.calibrate_queries`
    measures the three on the workload's query shapes; 0, 0 and ``scan_bytes_per_s`` until
    calibrated).

    Example (10 ms + 40 files x 0.5 ms + 2 MB at 100 MB/s):
    >>> from engine.core.config import Settings
    >>> query_seconds(2e6, Settings(query_fixed_s=0.01, query_scan_bytes_per_s=1e8))
    0.03
    >>> query_seconds(2e6, Settings(query_fixed_s=0.01, query_file_s=0.0005,
    ...                             query_scan_bytes_per_s=1e8), files=40)
    0.05
    """
    return float(settings.query_fixed_s) + read_seconds(nbytes, files, settings)


def recluster_seconds_array(total_bytes: np.ndarray, settings: "Settings",
                            fixed: bool = True) -> np.ndarray:
    """Vectorized :func:`recluster_cost` CPU-seconds for many set sizes at once; with
    ``fixed=False`` without ``rewrite_fixed_s`` (what each group of a job adds to it: the
    job's fixed cost is paid once per job, :func:`batch_counts`)."""
    b = np.asarray(total_bytes, dtype=np.float64)
    budget = float(settings.memory_budget_bytes)
    runs = np.ceil(np.maximum(b, 1.0) / budget)
    passes = np.where(b > budget, np.maximum(1.0, np.ceil(np.log2(np.maximum(runs, 1.0)))), 0.0)
    base = b / settings.sort_bytes_per_s
    sort = np.where(passes > 0, settings.external_sort_penalty * passes * base, base)
    return (settings.rewrite_fixed_s if fixed else 0.0) + b / read_rate(settings) + sort


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




def output_files(total_bytes: float, settings: "Settings") -> int:
    """Files a group of ``total_bytes`` is written into: ``target_mb`` apart, else 1
    (the row target needs rows, which a bytes-only caller does not have)."""
    target = float(settings.target_mb) * 2**20
    return max(1, math.ceil(float(total_bytes) / target)) if target > 0 else 1


def write_target_of(settings: "Settings") -> WriteTarget:
    """The file sizes the settings price a plan's output at: ``target_rows``, else
    ``target_mb`` (a table's own, once :func:`for_table` has set them); neither set: the
    table sets none, and each group keeps its inputs' granularity
    (:func:`engine.layout.output.output_shape`).

    Example:
    >>> from engine.core.config import Settings
    >>> write_target_of(Settings()).file_rows, write_target_of(Settings(target_rows=0)).file_rows
    (100000, None)
    """
    rows = int(settings.target_rows) if settings.target_rows and settings.target_rows > 0 else None
    nbytes = int(float(settings.target_mb) * 2**20) or None
    return WriteTarget(file_rows=rows, file_bytes=None if rows else nbytes,
                       source="target_rows" if rows else "target_mb")


def group_files(rows: int, nbytes: int, settings: "Settings",
                params: Mapping[str, Any] | None = None,
                input_file_rows: Sequence[int] | np.ndarray | None = None,
                layout: str = "sort") -> int:
    """Output files of a group of ``rows`` rows and ``nbytes`` bytes, as the executor writes
    them (:func:`engine.layout.output.output_shape` under :func:`write_target_of`): the
    group's ``layout_params``, the settings' targets (``target_rows`` wins over
    ``target_mb``), else the median of ``input_file_rows`` (the rows of each input file;
    not given: the group is one input file). At least 1.

    Example:
    >>> from engine.core.config import Settings
    >>> group_files(250_000, 10_000_000, Settings())  # 100,000 rows per file
    3
    >>> group_files(250_000, 10_000_000, Settings(), {"target_file_bytes": 1_000_000})
    10
    >>> group_files(250_000, 10_000_000, Settings(target_rows=0), None, [50_000] * 5)
    5
    """
    file_rows = np.asarray(input_file_rows if input_file_rows is not None else [int(rows)],
                           dtype=np.int64)
    return output_shape(file_rows, int(nbytes), write_target_of(settings), params, layout).files


def for_table(settings: "Settings", target: WriteTarget) -> "Settings":
    """The settings a table's plans are priced under: the table's own file target
    (:meth:`engine.table.store.TableStore.write_target`: its format's properties, a native
    table's target) in place of the workspace's ``target_rows`` / ``target_mb``, because
    the executor cuts a plan's output files with the table's. A table that sets none
    gets neither, and :func:`group_files` keeps each group's input granularity, as the
    executor writes it.

    Example (a table of 2,000-row files in a workspace whose default is 100,000):
    >>> from engine.core.config import Settings
    >>> t = for_table(Settings(), WriteTarget(file_rows=2_000))
    >>> t.target_rows, t.target_mb, group_files(86_000, 3_500_000, t)
    (2000, 0.0, 43)
    >>> group_files(86_000, 3_500_000, Settings())  # the workspace's 100,000 rows
    1
    >>> group_files(86_000, 3_500_000, for_table(Settings(), WriteTarget(file_bytes=2**20)))
    4
    >>> group_files(86_000, 3_500_000, for_table(Settings(), WriteTarget()), None, [4_300] * 20)
    20
    """
    from dataclasses import replace  # the one place settings are re-targeted

    return replace(settings, target_rows=int(target.file_rows or 0),
                   target_mb=float(target.file_bytes or 0) / 2**20 if not target.file_rows else 0.0)


def batches(n_groups: int, settings: "Settings") -> list[range]:
    """The plan's groups as the executor runs them: all in one job, or with
    ``partial_progress_groups`` = N > 0 in consecutive batches of N, each its own job,
    verification and commit. The executor runs exactly these (``engine.spark.executor``), so
    the model and the run cannot disagree on where the fixed costs fall.

    Example:
    >>> from engine.core.config import Settings
    >>> [list(b) for b in batches(5, Settings(partial_progress_groups=2))]
    [[0, 1], [2, 3], [4]]
    >>> [list(b) for b in batches(3, Settings())]
    [[0, 1, 2]]
    """
    step = int(getattr(settings, "partial_progress_groups", 0) or 0)
    step = n_groups if step <= 0 else step
    return [range(i, min(n_groups, i + step)) for i in range(0, n_groups, max(1, step))]


def batch_counts(n_groups: np.ndarray, settings: "Settings") -> np.ndarray:
    """``len(batches(n, settings))`` for many group counts at once: the jobs the executor
    runs for a plan of n groups (0 for no group), each paying the fixed cost.

    Example:
    >>> from engine.core.config import Settings
    >>> batch_counts(np.array([0, 1, 4, 5]), Settings(partial_progress_groups=2)).tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> batch_counts(np.array([0, 1, 5]), Settings()).tolist()
    [0.0, 1.0, 1.0]
    """
    n = np.asarray(n_groups, dtype=np.float64)
    step = int(getattr(settings, "partial_progress_groups", 0) or 0)
    return np.ceil(n / step) if step > 0 else np.minimum(n, 1.0)


def layout_seconds(layouts: Sequence[str], group_bytes: Sequence[float],
                   files: Sequence[int], terms: RewriteTerms) -> float:
    """Seconds a plan pays beyond its bytes (module docstring: fitted job, key function,
    output files, and for a plan of two or more groups its extra groups and bytes).

    Example (10 files x 0.05 s, the fitted job 1 s and its 300 bytes at 100 B/s; then,
    for a plan of several groups, 2 extra groups x 0.25 s and its 600 bytes at 300 B/s):
    >>> t = RewriteTerms(fitted_job_s=1.0, fitted_key_bytes_per_s=100.0, file_s=0.05)
    >>> layout_seconds(["sort", "hilbert", "zorder"], [300, 200, 100], [4, 3, 3], t)
    4.5
    >>> t = RewriteTerms(file_s=0.05, group_s=0.25, multi_group_bytes_per_s=300.0)
    >>> layout_seconds(["sort", "hilbert", "zorder"], [300, 200, 100], [4, 3, 3], t)
    3.0
    >>> layout_seconds(["sort"], [300], [4], t)  # one group: no group terms
    0.2
    """
    fitted = [float(b) for k, b in zip(layouts, group_bytes) if k in FITTED_LAYOUTS]
    seconds = terms.file_s * float(sum(files))
    if fitted:
        seconds += terms.fitted_job_s
        if terms.fitted_key_bytes_per_s > 0:
            seconds += sum(fitted) / terms.fitted_key_bytes_per_s
    if len(layouts) > 1:
        seconds += terms.multi_group_s + terms.group_s * (len(layouts) - 1)
        if terms.multi_group_bytes_per_s > 0:
            seconds += float(sum(group_bytes)) / terms.multi_group_bytes_per_s
    return seconds


def plan_rewrite_cost(group_bytes: Sequence[float], settings: "Settings",
                      layouts: Sequence[str] | None = None, files: Sequence[int] | None = None,
                      terms: RewriteTerms | None = None) -> CostEstimate:
    """A plan's rewrite cost: :func:`recluster_cost_groups` plus the layout terms.

    ``layouts`` (default all ``"sort"``) and ``files`` (default :func:`output_files`) per
    group; ``terms`` default to the settings' (all 0 before calibration, when this is
    exactly :func:`recluster_cost_groups`). With ``partial_progress_groups`` = N > 0 the
    executor runs every batch of N groups as a job of its own (:func:`batches`), so each
    batch is priced as a plan and the batches are summed: the fixed cost, the fitted job
    and the many-group terms are paid once per batch, not once per plan.

    Example:
    >>> from engine.core.config import Settings
    >>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0)
    >>> plan_rewrite_cost([100, 200], s).cpu_seconds  # no terms: the bytes-only model
    11.0
    >>> t = RewriteTerms(fitted_job_s=1.0, fitted_key_bytes_per_s=100.0, file_s=0.5)
    >>> plan_rewrite_cost([100, 200], s, ["sort", "hilbert"], [1, 2], t).cpu_seconds
    15.5
    >>> from dataclasses import replace  # one group per batch: the fixed cost twice
    >>> plan_rewrite_cost([100, 200], replace(s, partial_progress_groups=1)).cpu_seconds
    13.0
    """
    layouts = list(layouts) if layouts is not None else ["sort"] * len(group_bytes)
    if len(layouts) != len(group_bytes):
        raise InvalidParameterError(f"{len(layouts)} layouts for {len(group_bytes)} groups")
    files = list(files) if files is not None else [output_files(b, settings) for b in group_bytes]
    terms = terms if terms is not None else RewriteTerms.from_settings(settings)
    sizes = [float(b) for b in group_bytes]
    cpu = 0.0
    for batch in batches(len(sizes), settings):
        part = [sizes[i] for i in batch]
        cpu += (recluster_cost_groups(part, settings).cpu_seconds
                + layout_seconds([layouts[i] for i in batch], part, [files[i] for i in batch],
                                 terms))
    total = float(sum(sizes))
    return CostEstimate(bytes_read=total, bytes_written=total,
                        cpu_seconds=cpu, money=money(cpu, settings))


def work_bytes(rows: float, nbytes: float, columns: int, settings: "Settings") -> float:
    """The size a group is priced at: ``rows x columns x rewrite_cell_bytes`` once
    calibrated (the calibration table's compressed bytes per cell), else its compressed
    bytes (the paper's ``t_r`` of "the aggregate size of P").

    Why cells: the executor's work is per row and per column (decode, shuffle, sort,
    encode), while compressed bytes per row move with the data and the file size (the same
    rows take fewer bytes per row in larger files; bench/executor/README.md), so a rate per
    compressed byte measured on one table misprices another.

    Example:
    >>> from engine.core.config import Settings
    >>> work_bytes(1000, 9500, 6, Settings(rewrite_cell_bytes=2.75))  # 1000 x 6 x 2.75
    16500.0
    >>> work_bytes(1000, 9500, 6, Settings())  # not calibrated: the compressed bytes
    9500.0
    """
    return float(work_bytes_array(np.array([rows], dtype=np.float64),
                                  np.array([nbytes], dtype=np.float64), columns, settings)[0])


def work_bytes_array(rows: np.ndarray, nbytes: np.ndarray, columns: int,
                     settings: "Settings") -> np.ndarray:
    """:func:`work_bytes` for many partitions at once (WAIR's Algorithm 2 ranks and prices
    them one by one, so its cut must see the sizes the plan is later priced at).

    Example:
    >>> from engine.core.config import Settings
    >>> work_bytes_array(np.array([10, 20]), np.array([95, 190]), 6,
    ...                  Settings(rewrite_cell_bytes=2.5)).tolist()
    [150.0, 300.0]
    >>> work_bytes_array(np.array([10, 20]), np.array([95, 190]), 6, Settings()).tolist()
    [95.0, 190.0]
    >>> work_bytes_array(np.array([0, 20]), np.array([95, 190]), 6,  # no row count: its bytes
    ...                  Settings(rewrite_cell_bytes=2.5)).tolist()
    [95.0, 300.0]
    """
    r = np.asarray(rows, dtype=np.float64)
    b = np.asarray(nbytes, dtype=np.float64)
    cell = float(settings.rewrite_cell_bytes)
    if cell > 0 and columns > 0:
        return np.where(r > 0, r * (int(columns) * cell), b)
    return b.copy()


def sized_rewrite_cost(sizes: Sequence[tuple[float, float]], columns: int,
                       settings: "Settings", layouts: Sequence[str] | None = None,
                       files: Sequence[int] | None = None,
                       terms: RewriteTerms | None = None) -> CostEstimate:
    """:func:`plan_rewrite_cost` of groups given as (rows, compressed bytes) of a table of
    ``columns`` columns: priced at :func:`work_bytes`, reading and writing the real bytes.

    Example (a calibration table of 2.5 B per cell; 100 rows x 4 columns = 1,000 work bytes
    and 200 x 4 = 2,000, whatever their compressed 300 and 500 bytes):
    >>> from engine.core.config import Settings
    >>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0,
    ...              rewrite_cell_bytes=2.5)
    >>> c = sized_rewrite_cost([(100, 300), (200, 500)], 4, s)
    >>> c.cpu_seconds, c.bytes_read  # 2 + 3000/100 + 3000/50
    (92.0, 800.0)
    """
    priced = [work_bytes(r, b, columns, settings) for r, b in sizes]
    real = float(sum(b for _, b in sizes))
    files = list(files) if files is not None else [output_files(b, settings) for _, b in sizes]
    cost = plan_rewrite_cost(priced, settings, layouts, files, terms)
    return CostEstimate(bytes_read=real, bytes_written=real, cpu_seconds=cost.cpu_seconds,
                        money=cost.money)


def groups_rewrite_cost(zonemaps: "ZoneMaps", groups: Sequence["PlanGroup"],
                        settings: "Settings") -> CostEstimate:
    """What the policies price a proposal with: :func:`sized_rewrite_cost` over the groups'
    rows and bytes (from the zonemaps of their partitions, priced at :func:`work_bytes`),
    layouts and output files (:func:`group_files`). A partition missing from ``zonemaps``
    counts 0 bytes.

    Example (two groups of 100 and 200 bytes, 1 file each; the Hilbert group pays the
    fitted job and the key function, both files pay ``file_s``):
    >>> import numpy as np
    >>> from engine.core.config import Settings
    >>> from engine.policy.base import PlanGroup
    >>> from engine.table.model import ZoneMaps
    >>> zm = ZoneMaps(np.array(["a", "b", "c"], dtype=object), np.array([1, 1, 1]),
    ...               np.array([100, 150, 50]), {})
    >>> s = Settings(scan_bytes_per_s=100.0, sort_bytes_per_s=50.0, rewrite_fixed_s=2.0,
    ...              fitted_job_s=1.0, fitted_key_bytes_per_s=100.0, file_s=0.5)
    >>> g = [PlanGroup(("a",), "sort", ("x",)), PlanGroup(("b", "c"), "hilbert", ("x", "y"))]
    >>> groups_rewrite_cost(zm, g, s).cpu_seconds  # 2 + 3 + 6, + 1 + 200/100 + 2 x 0.5
    15.0
    """
    index = {str(p): i for i, p in enumerate(zonemaps.paths)}
    sizes, files = [], []
    for g in groups:
        idx = [index[p] for p in g.partitions if p in index]
        b, r = int(zonemaps.bytes[idx].sum()), int(zonemaps.rows[idx].sum())
        sizes.append((float(r), float(b)))
        files.append(group_files(r, b, settings, g.layout_params, zonemaps.rows[idx], g.layout))
    return sized_rewrite_cost(sizes, len(zonemaps.columns), settings,
                              [g.layout for g in groups], files)
