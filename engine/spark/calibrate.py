"""Measure the cost model's rates on the configured Spark and DuckDB (WAIR section 4.2).

WAIR trades ``t_r(P)``, the cost of reclustering the partitions P, against the scan time
it saves; both must be the machine's, not constants. ``t_r`` is "a function of the
aggregate size of P" (section 4.2); on Spark, where one plan is one job, it is

    t_rewrite(B) = rewrite_fixed_s + B / rewrite_read_bytes_per_s + B / sort_bytes_per_s

fitted by least squares over a few sizes (1/16, 1/4 and all of ``--max-rows``, default
1.6M rows: :func:`default_rows`; runs interleaved across sizes and kinds, medians kept:
:func:`measure`): the executor's own rewrite
(:func:`engine.spark.executor.rewrite`) of synthetic lineitem-like files of B bytes, and a
read-only pass over the same files (its slope is the read rate; the rewrite's slope minus
it, the sort-and-write rate). On the query side a per-query fixed cost and a scan rate are
fitted the same way from DuckDB scanning 1..n of the files (section 4.2's ``t_read`` when
the log carries no measured duration).

Layout terms (:class:`engine.policy.costmodel.RewriteTerms`, why each exists is written
there): at the smallest size the same rewrite is also run writing ``FILES_FACTOR`` times
as many output files (the seconds per extra file are ``file_s``; the sort points are
corrected by ``file_s`` per file before the byte rates are fitted), at the smallest and
the largest size as one Hilbert group (the Hilbert run minus the sort run at the same size
and file count is ``fitted_job_s + B / fitted_key_bytes_per_s``, a line over the two sizes),
and at the two largest sizes as ``GROUPS_PROBE`` sort groups of whole input files, at the
largest also as ``GROUPS_PROBE_MANY`` (minus the sort run: ``multi_group_s + (G - 1)
group_s + B / multi_group_bytes_per_s``, :func:`_nonnegative_fit`).

The demo-shaped probe (round 8, :data:`DEMO_PROBE`): the terms above were fitted on runs of
50,000-row files, and the once-per-plan term they gave (880 ms in round 7's quiet
calibration) was a third of the demo-like plan's 2.35 s, which it over-predicted by 54%.
So the same many-group difference is also measured on the demo plan's own shape: 86,000
rows in files of 2,000 rows, as one sort group and as 6 groups writing 2,000-row files
(:func:`_demo_round`), and fitted together with the large runs, every difference weighted
by its plan's time (the goal is a relative error: ±30% of a plan's wall time), its size in
the plans' unit (cells x the calibration table's bytes per cell).

The unit (round 7): B is the calibration table's compressed bytes, and the table's bytes
per cell (row x column) are stored as ``rewrite_cell_bytes``; plans price a group at rows x
columns x that (:func:`engine.policy.costmodel.work_bytes`), so a table that compresses
better or worse than the synthetic one is priced by its work, not by its file sizes
(bench/README_executor.md, round 7: most of round 6's 10M-row miss was this).

The cold probe (round 9, :func:`cold_start`): a CLI ``plan run`` starts its own Spark
session, and its first rewrite job pays the JIT and the Python workers' start-up, which the
warm runs above never see (round 8, quiet: the sample demo plan 10.8 s from the CLI against
2.4 s warm). So the session's FIRST job is a rewrite of the demo-shaped rows in files the
driver wrote (:func:`_arrow_files`: no Spark job before it), and every repetition rewrites
the same files warm; the first less the warm median is ``cold_start_s`` (a rate, shown by
``calibrate --show``; plans state their price warm and with it: a fresh session's).
A session that had already rewritten (``executor.session_fresh``) measures none.

The calibration table (round 9): every column nullable, as Spark writes a rewrite's files,
so that no calibration run pays the executor's type-restoring pass that plans on nullable
tables never pay (:func:`_make_files`).

The result is stored in the workspace (``calibration.json``: the rates, the layout terms,
the points they were fitted on, the date and the Spark master); the rates are read by
:func:`engine.core.config.load_settings` under the configured values, which override them.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import statistics
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import duckdb
import numpy as np

from engine.core.config import CALIBRATION_FILE_NAME, Settings
from engine.core.errors import InvalidParameterError
from engine.policy.base import PlanGroup
from engine.policy.costmodel import TERM_KEYS
from engine.spark import calibrate_queries, executor, footers_parallel
from engine.spark.session import get_spark
from engine.table.footers import read_partitions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the largest size calibrated by default: 1.6M rows (~26 MB) keeps ``calibrate --repeat 3``
#: near two minutes on 2 cores and is within 7x of a 10M-row plan (round 6 stopped at 800k)
DEFAULT_MAX_ROWS = 1_600_000
#: the sizes calibrated below the largest: 1/16 and 1/4 of it (a 16x range for the lines)
SIZE_FRACTIONS = (1 / 16, 1 / 4, 1.0)
DEFAULT_REPEAT = 3
ROWS_PER_FILE = 50_000
#: the rates calibration writes (all Settings fields); ``rewrite_cell_bytes`` is the unit
#: they are in (the calibration table's compressed bytes per row x column)
RATE_KEYS = ("rewrite_fixed_s", "rewrite_read_bytes_per_s", "sort_bytes_per_s",
             "query_fixed_s", "query_scan_bytes_per_s", "rewrite_cell_bytes", "query_file_s",
             "cold_start_s")
#: the per-file run writes this many times as many files as the sort run
FILES_FACTOR = 20
#: the fitted ordering calibration times (a two-column curve, as the demo's plans use)
FITTED_PROBE = ("hilbert", ("l_shipdate", "l_orderdate"))
#: the many-group run: the sort run's rows cut into this many groups of whole input files
#: (or one per input file when fewer), their sort keys alternating like a mixed plan's
GROUPS_PROBE = 8
#: ... and at the largest size also into this many groups (one input file each at 1.6M): two
#: group counts separate a cost paid once by any plan of two or more groups from a cost per
#: group (round 7, load 10: 8 groups cost 4.5 s more than one, 50 groups 4.3 s)
GROUPS_PROBE_MANY = 32
GROUP_KEYS = ("l_shipdate", "l_orderdate")
#: the demo plan's shape (issue 11: 43 partitions, 86k rows): (rows, rows per input and
#: output file, groups); its one-group and many-group runs are :func:`_demo_round`'s
DEMO_PROBE = (86_000, 2_000, 6)
__all__ = ["DEFAULT_MAX_ROWS", "RATE_KEYS", "TERM_KEYS", "default_rows", "fit_line", "load",
           "measure", "rates_from_points", "save", "terms_from_points"]


def default_rows(max_rows: int = DEFAULT_MAX_ROWS) -> tuple[int, ...]:
    """The sizes calibrated up to ``max_rows``: 1/16, 1/4 and all of it, in whole input
    files (``ROWS_PER_FILE``), at least one file each and distinct.

    Calibrate near the plans' size: a line fitted on small sizes carries its noise 10x
    out (round 6's 50k-800k calibration was 5-50% under at 10M rows, though most of that was
    the unit: bench/README_executor.md, round 7).

    Example:
    >>> default_rows(), default_rows(400_000)
    ((100000, 400000, 1600000), (50000, 100000, 400000))
    """
    if int(max_rows) < 2 * ROWS_PER_FILE:
        raise InvalidParameterError(f"--max-rows must be at least {2 * ROWS_PER_FILE:,} "
                                    f"(two input files), got {max_rows}")
    sizes = sorted({max(1, round(max_rows * f / ROWS_PER_FILE)) * ROWS_PER_FILE
                    for f in SIZE_FRACTIONS})
    return tuple(sizes)


DEFAULT_ROWS = default_rows()


def fit_line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``y = a + b x``; (a, b), the intercept clamped at 0.

    Example:
    >>> a, b = fit_line([1, 2, 3], [3, 5, 7])
    >>> round(a, 6), round(b, 6)
    (1.0, 2.0)
    """
    if len(x) < 2:
        raise InvalidParameterError("calibration needs at least two sizes")
    a_mat = np.vstack([np.ones(len(x)), np.asarray(x, dtype=float)]).T
    (a, b), *_ = np.linalg.lstsq(a_mat, np.asarray(y, dtype=float), rcond=None)
    return round(max(0.0, float(a)), 6), float(b)


def terms_from_points(points: Sequence[dict[str, float]],
                      demo: dict[str, float] | None = None) -> dict[str, float]:
    """The layout terms from the points that carry a many-files run (``files_s``,
    ``files_n`` against ``rewrite_s``, ``files``) and a Hilbert run (``fitted_s``), and the
    demo-shaped probe ``demo`` (its one-group ``sort_s`` and many-group ``groups_s``).

    ``file_s`` is the mean extra seconds per extra file (clamped at 0). The Hilbert
    overheads are a line over bytes; a slope lost in noise (<= 0) leaves the key rate at 0
    and the mean overhead as the fixed cost.

    Example:
    >>> pts = [{"bytes": 1e6, "rewrite_s": 3.0, "files": 1, "files_s": 4.9, "files_n": 20,
    ...         "fitted_s": 4.5}, {"bytes": 9e6, "rewrite_s": 7.0, "files": 9, "fitted_s": 12.5}]
    >>> t = terms_from_points(pts)
    >>> round(t["file_s"], 3), round(t["fitted_job_s"], 3), round(t["fitted_key_bytes_per_s"])
    (0.1, 1.0, 2000000)
    """
    extra = [(p["files_s"] - p["rewrite_s"]) / (p["files_n"] - p["files"])
             for p in points if "files_s" in p and p["files_n"] > p["files"]]
    file_s = max(0.0, statistics.fmean(extra)) if extra else 0.0
    fitted = [(p["bytes"], p["fitted_s"] - p["rewrite_s"]) for p in points if "fitted_s" in p]
    job, key_rate = _overhead_line(fitted)
    # the many-group runs minus the sort run of the same rows (corrected for any difference
    # in files): once ``multi_group_s`` + (G - 1) extra groups x ``group_s`` + the plan's
    # bytes at the extra rate of a write partitioned by group
    grouped = [(1.0, p[f"{k}_n"] - 1, p["bytes"],
                p[f"{k}_s"] - p["rewrite_s"]
                - file_s * (p.get(f"{k}_files", p["files"]) - p["files"]), p[f"{k}_s"])
               for p in points for k in ("groups", "groups2")
               if f"{k}_s" in p and p[f"{k}_n"] > 1]
    if demo and demo.get("groups_n", 0) > 1:
        # in the plans' unit: cells x the calibration table's bytes per cell (the demo's
        # small files hold more compressed bytes per cell than the large runs' files)
        cell = (sum(p["bytes"] for p in points) / sum(p["cells"] for p in points)
                if points and all(p.get("cells") for p in points) else 0.0)
        size = demo["cells"] * cell if cell else demo["bytes"]
        grouped.append((1.0, demo["groups_n"] - 1, size,
                        demo["groups_s"] - demo["sort_s"]
                        - file_s * (demo["groups_files"] - demo["sort_files"]),
                        demo["groups_s"]))
    # weighted by 1 / the plan's seconds: the fit minimises errors relative to each plan's
    # time, so a 2 s demo plan counts as much as a 7 s large one
    once, group_s, multi_per_byte = _nonnegative_fit(
        [tuple(v / max(r[-1], 1e-9) for v in r[:-1]) for r in grouped])
    return {"fitted_job_s": round(job, 6), "fitted_key_bytes_per_s": key_rate,
            "file_s": round(file_s, 6), "multi_group_s": round(once, 6),
            "group_s": round(group_s, 6),
            "multi_group_bytes_per_s": 1.0 / multi_per_byte if multi_per_byte > 1e-12 else 0.0}


def _nonnegative_fit(rows: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """Least squares ``d = sum_j c_j x_j`` (no intercept) over rows (x_1 .. x_k, d), every
    ``c_j >= 0``: the best fit over the subsets of terms whose own fit is non-negative (an
    exact NNLS for the few terms calibration has; a term noise would make negative is 0).

    Example (d = 0.5 + 0.1 (G - 1) + 2e-6 B, exactly; then one group count and an
    overhead that shrinks with B: neither a per-group nor a per-byte part is separable):
    >>> rows = [(1, 7, 1e6, 3.2), (1, 7, 4e6, 9.2), (1, 31, 4e6, 11.6)]
    >>> [round(c, 6) for c in _nonnegative_fit(rows)]
    [0.5, 0.1, 2e-06]
    >>> [round(c, 6) for c in _nonnegative_fit([(1, 7, 1e6, 1.4), (1, 7, 4e6, 0.7)])]
    [1.05, 0.0, 0.0]
    """
    if not rows:
        return (0.0, 0.0, 0.0)
    x = np.array([r[:-1] for r in rows], dtype=float)
    d = np.array([r[-1] for r in rows], dtype=float)
    k = x.shape[1]
    best, best_err = np.zeros(k), float(d @ d)
    for mask in range(1, 2 ** k):
        cols = [j for j in range(k) if mask >> j & 1]
        if len(cols) > len(rows) or np.linalg.matrix_rank(x[:, cols]) < len(cols):
            continue
        c, *_ = np.linalg.lstsq(x[:, cols], d, rcond=None)
        if np.any(c < 0):
            continue
        err = float(np.sum((d - x[:, cols] @ c) ** 2))
        if err < best_err - 1e-12:
            best, best_err = np.zeros(k), err
            best[cols] = c
    return tuple(float(v) for v in best)


def _overhead_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(seconds, bytes per second) of an overhead measured at a few sizes: a line over
    bytes; a slope lost in noise (<= 0) leaves the rate at 0 and the mean overhead as the
    fixed part; one size gives its overhead and no rate.

    Example:
    >>> [round(v, 6) for v in _overhead_line([(1e6, 1.5), (9e6, 5.5)])]
    [1.0, 2000000.0]
    >>> [round(v, 6) for v in _overhead_line([(1e6, 1.4), (9e6, 1.2)])]
    [1.3, 0.0]
    """
    if len(points) >= 2:
        fixed, per_byte = fit_line([b for b, _ in points], [d for _, d in points])
        if per_byte > 1e-12:
            return fixed, 1.0 / per_byte
        return max(0.0, statistics.fmean(d for _, d in points)), 0.0
    if points:
        return max(0.0, points[0][1]), 0.0
    return 0.0, 0.0


def rates_from_points(points: Sequence[dict[str, float]],
                      file_s: float = 0.0) -> dict[str, float]:
    """The model's rates from measured (bytes, rewrite s, read s, query s) points; with
    ``file_s``, each rewrite point is first corrected by ``file_s`` per output file
    (``files``) so the per-file term is not counted again in the byte rates.

    Example:
    >>> pts = [{"bytes": b, "rewrite_s": 2 + b / 1e6 + b / 5e5, "read_s": 0.5 + b / 1e6,
    ...         "query_s": 0.01 + b / 1e8} for b in (1e6, 4e6, 9e6)]
    >>> r = rates_from_points(pts)
    >>> round(r["rewrite_fixed_s"], 3), round(r["rewrite_read_bytes_per_s"]), round(r["sort_bytes_per_s"])
    (2.0, 1000000, 500000)
    >>> round(r["query_fixed_s"], 3), round(r["query_scan_bytes_per_s"])
    (0.01, 100000000)
    """
    b = [p["bytes"] for p in points]
    fixed, per_byte = fit_line(b, [p["rewrite_s"] - file_s * p.get("files", 0)
                                   for p in points])
    _, read_per_byte = fit_line(b, [p["read_s"] for p in points])
    if not 0 < read_per_byte < per_byte:
        # the read pass does not grow with size above the noise: its slope is not
        # separable; the whole slope goes to sort-and-write and the read rate stays
        # uncalibrated (0: ``scan_bytes_per_s`` applies)
        read_per_byte = 0.0
    sort_per_byte = max(per_byte - read_per_byte, 1e-12)
    q_fixed, q_per_byte = fit_line(b, [p["query_s"] for p in points])
    cells = sum(p.get("cells", 0) for p in points)
    # a query time that does not grow with size (noise above the slope): the scan rate is
    # not separable; 0 leaves ``scan_bytes_per_s`` in effect instead of an absurd rate
    return {"rewrite_fixed_s": fixed,
            "rewrite_read_bytes_per_s": 1.0 / read_per_byte if read_per_byte else 0.0,
            "sort_bytes_per_s": 1.0 / sort_per_byte, "query_fixed_s": q_fixed,
            "query_scan_bytes_per_s": 1.0 / q_per_byte if q_per_byte > 1e-12 else 0.0,
            # the unit of the rewrite rates: points without cells (before round 7) give 0,
            # plans then price compressed bytes as before
            "rewrite_cell_bytes": (round(sum(b) / cells, 6)
                                   if cells and all("cells" in p for p in points) else 0.0)}


def _make_files(spark: "SparkSession", root: str, rows: int,
                rows_per_file: int = 0, nullable: bool = True) -> list[str]:
    """Lineitem-like rows in ingestion order (dates wander, quantities random), written
    by Spark into files of ``rows_per_file`` (default ROWS_PER_FILE) rows.

    Every column nullable (round 9), as Spark writes every rewrite's files: until round 8
    the columns built from ``spark.range`` were written NOT NULL, so every calibration
    rewrite paid the executor's type-restoring pass (``arrow_types.restore_files``: the
    new files rewritten by pyarrow to give them the inputs' non-null fields), which plans
    on tables of nullable columns (the demo's, the bench's, anything Spark or DuckDB
    ingested) never pay: 0.42 s of a 2.60 s sort at 400k rows, about a third of the
    1.6M-row point (bench/README_executor.md, round 9). ``nullable=False`` is the round-8
    table, for comparison.
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    # "when id >= 0" is always true but unknown to the optimizer: the column stays nullable
    live = (lambda c: F.when(F.col("id") >= 0, c)) if nullable else (lambda c: c)
    df = spark.range(rows).select(
        live(F.col("id")).alias("l_orderkey"),
        live(F.date_add(F.lit("1992-01-01").cast("date"), (F.col("id") * 2526 / rows).cast("int")))
        .alias("l_orderdate"),
        live(F.date_add(F.lit("1992-01-01").cast("date"),
                        ((F.col("id") * 2526 / rows) + F.rand(7) * 120).cast("int")))
        .alias("l_shipdate"),
        live((F.rand(11) * 50).cast("decimal(12,2)")).alias("l_quantity"),
        live(F.rand(13) * 100000).alias("l_extendedprice"),
        live(F.concat(F.lit("note "), (F.rand(17) * 1000).cast("int").cast("string")))
        .alias("l_comment"))
    df.coalesce(1).write.mode("overwrite").option(
        "maxRecordsPerFile", rows_per_file or ROWS_PER_FILE).parquet(root)
    return executor.list_data_files(spark, root)


def _arrow_files(root: Path, rows: int, rows_per_file: int) -> list[str]:
    """The calibration table's rows (as :func:`_make_files` draws them, every column
    nullable) written by pyarrow on the driver: the cold probe's inputs must exist before
    the session's first Spark job, so that its first rewrite is the session's first job,
    as a CLI ``plan run``'s is."""
    import pyarrow as pa  # the driver's writer (write_slices): no Spark job

    rng = np.random.default_rng(7)
    ids = np.arange(rows, dtype=np.int64)
    day = (ids * 2526 // rows).astype("int32")
    start = np.datetime64("1992-01-01", "D").astype("int64")
    table = pa.table({
        "l_orderkey": pa.array(ids),
        "l_orderdate": pa.array(start + day, pa.int32()).cast(pa.date32()),
        "l_shipdate": pa.array(start + day + (rng.random(rows) * 120).astype("int32"),
                               pa.int32()).cast(pa.date32()),
        "l_quantity": pa.array(np.round(rng.random(rows) * 50, 2)).cast(
            pa.decimal128(12, 2), safe=False),
        "l_extendedprice": pa.array(rng.random(rows) * 100000),
        "l_comment": pa.array([f"note {v}" for v in (rng.random(rows) * 1000).astype(int)])})
    return write_slices(table, root, rows_per_file)


def write_slices(table: Any, root: Path, rows_per_file: int) -> list[str]:
    """Write an Arrow table as files of ``rows_per_file`` rows (``part-00000.parquet``, ...)
    under ``root`` with pyarrow on the driver (no Spark job); their paths, in row order.
    Calibrate's cold probe and ``bench/bench_executor.py`` lay out their inputs this way."""
    import pyarrow.parquet as pq

    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(0, table.num_rows, rows_per_file):
        path = root / f"part-{i // rows_per_file:05d}.parquet"
        pq.write_table(table.slice(i, rows_per_file), path)
        paths.append(str(path))
    return paths


def cold_start(first_s: float, warm_s: Sequence[float], fresh: bool) -> float | None:
    """The cold-start term: the session's first rewrite job less the median of the same
    rewrite warm (clamped at 0); None when the session was not fresh (a rewrite had run in
    it already: its first job measured nothing cold).

    Example:
    >>> cold_start(9.5, [2.0, 1.5, 2.5], True), cold_start(9.5, [2.0], False)
    (7.5, None)
    """
    if not fresh or not warm_s:
        return None
    return round(max(0.0, first_s - statistics.median(warm_s)), 4)


def _duckdb_scan_seconds(paths: Sequence[str], repeat: int = 3) -> float:
    """Median seconds of a filtering aggregate over ``paths`` in DuckDB (one thread, so
    the rate is per core like the model's)."""
    files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    query = (f"SELECT count(*), sum(l_extendedprice) FROM read_parquet([{files}]) "
             "WHERE l_shipdate >= DATE '1995-01-01'")
    seconds = calibrate_queries.timed_median(con, query, repeat)  # after one untimed read
    con.close()
    return seconds


def timed_rewrite(spark: "SparkSession", schema: Any, parts: Sequence[Any], out: str,
                  layout: str = "sort", columns: Sequence[str] = ("l_shipdate",),
                  rows_per_file: int | None = ROWS_PER_FILE,
                  target_bytes: int | None = None) -> tuple[float, Any]:
    """(wall s, the executor's run) of the executor's rewrite of one group into ``out``
    and the new files' footers (zonemaps): what a plan run pays per job besides the commit.
    Nothing is committed and ``out`` is removed. The one timed rewrite of calibrate, of
    ``calibrate --rewrite-on`` (:mod:`engine.spark.calibrate_rewrite`) and of
    ``bench/calibration_table_probe.py`` (which reads the run's phases)."""
    group = PlanGroup(tuple(p.path for p in parts), layout, tuple(columns))
    t = time.perf_counter()
    try:
        run = executor.rewrite(spark, schema, [(group, list(parts))], out, rows_per_file,
                               target_bytes)
        for g in run.groups:
            footers_parallel.read_partitions(spark, g.files, schema=schema)
        wall = time.perf_counter() - t
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return wall, run


def _rewrite_once(spark: "SparkSession", schema: Any, parts: Sequence[Any], out: str,
                  layout: str = "sort", columns: Sequence[str] = ("l_shipdate",),
                  rows_per_file: int = ROWS_PER_FILE) -> tuple[float, float, int]:
    """(wall s, executor CPU s, output files) of :func:`timed_rewrite`."""
    wall, run = timed_rewrite(spark, schema, parts, out, layout, columns, rows_per_file)
    return wall, run.measured["executor_cpu_seconds"], sum(g.outputs for g in run.groups)


def _measure_once(spark: "SparkSession", schema: Any, parts: Sequence[Any],
                  paths: Sequence[str], out: str) -> tuple[float, float, float, int]:
    """(read-only pass s, rewrite wall s, rewrite executor CPU s, files) of one size."""
    t = time.perf_counter()
    with executor.session_conf(spark, executor.JOB_CONF):
        executor.content_checksum(spark.read.parquet(*paths))
    read_s = time.perf_counter() - t
    return (read_s, *_rewrite_once(spark, schema, parts, out))


def _rewrite_groups(spark: "SparkSession", schema: Any, parts: Sequence[Any], out: str,
                    n_groups: int, rows_per_file: int = 0) -> tuple[float, int, int]:
    """(wall s, groups, output files) of a plan of ``n_groups`` sort groups of whole input
    files (keys alternating over ``GROUP_KEYS``) in one job, with the new footers."""
    n_groups = max(1, min(n_groups, len(parts)))
    cuts = [round(i * len(parts) / n_groups) for i in range(n_groups + 1)]
    pairs = [(PlanGroup(tuple(p.path for p in parts[a:b]), "sort",
                        (GROUP_KEYS[i % len(GROUP_KEYS)],)), list(parts[a:b]))
             for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    t = time.perf_counter()
    run = executor.rewrite(spark, schema, pairs, out, rows_per_file or ROWS_PER_FILE, None)
    for g in run.groups:
        footers_parallel.read_partitions(spark, g.files, schema=schema)
    wall = time.perf_counter() - t
    shutil.rmtree(out, ignore_errors=True)
    return wall, len(pairs), sum(g.outputs for g in run.groups)


def _demo_round(spark: "SparkSession", schema: Any, parts: Sequence[Any],
                out: str) -> dict[str, float]:
    """One repetition of the demo-shaped probe (:data:`DEMO_PROBE`): its rows as one sort
    group, then as its groups (keys alternating), both into files of its file size, one
    right after the other."""
    _, per_file, n_groups = DEMO_PROBE
    sort_s, _, sort_files = _rewrite_once(spark, schema, parts, f"{out}-sort",
                                          rows_per_file=per_file)
    groups_s, groups_n, groups_files = _rewrite_groups(spark, schema, parts, f"{out}-groups",
                                                       n_groups, per_file)
    return {"sort_s": sort_s, "sort_files": sort_files, "groups_s": groups_s,
            "groups_n": groups_n, "groups_files": groups_files}


def _round_of(spark: "SparkSession", schema: Any, parts: Sequence[Any], paths: Sequence[str],
              n: int, out: str, fitted: bool, many_files: bool,
              groups: int = 0, many_groups: int = 0) -> dict[str, float]:
    """One repetition at one size, its kinds of run one right after the other (read-only
    pass, sort rewrite, then the Hilbert run when ``fitted``, the many-files run when
    ``many_files`` and the many-group runs when ``groups`` > 1): a load change on the shared
    machine hits the runs whose differences make the layout terms alike."""
    read_s, wall, cpu, files = _measure_once(spark, schema, parts, paths, f"{out}-sort")
    got = {"read_s": read_s, "rewrite_s": wall, "rewrite_cpu_s": cpu, "files": files}
    if groups > 1 and len(parts) > 1:
        got["groups_s"], got["groups_n"], got["groups_files"] = _rewrite_groups(
            spark, schema, parts, f"{out}-groups", groups)
    if many_groups > groups > 1 and len(parts) > groups:
        got["groups2_s"], got["groups2_n"], got["groups2_files"] = _rewrite_groups(
            spark, schema, parts, f"{out}-groups2", many_groups)
    if fitted:
        layout, cols = FITTED_PROBE
        got["fitted_s"] = _rewrite_once(spark, schema, parts, f"{out}-fit", layout, cols)[0]
    if many_files:
        per_file = max(1, min(n, ROWS_PER_FILE) // FILES_FACTOR)
        files_s, _, files_n = _rewrite_once(spark, schema, parts, f"{out}-files",
                                            rows_per_file=per_file)
        got.update(files_s=files_s, files_n=files_n)
    return got


def _median_point(n: int, nbytes: int, rounds: Sequence[dict[str, float]],
                  query_s: float, columns: int) -> dict[str, float]:
    """The point of one size: the median of each kind of run over its repetitions."""
    point: dict[str, float] = {"rows": n, "bytes": nbytes, "cells": n * columns,
                               "repeat": len(rounds)}
    for key, digits in (("read_s", 4), ("rewrite_s", 4), ("rewrite_cpu_s", 4),
                        ("fitted_s", 4), ("files_s", 4), ("groups_s", 4),
                        ("groups2_s", 4)):
        if key in rounds[0]:
            point[key] = round(statistics.median(r[key] for r in rounds), digits)
    point["files"] = rounds[0]["files"]
    for key in ("files_n", "groups_n", "groups_files", "groups2_n", "groups2_files"):
        if key in rounds[0]:
            point[key] = rounds[0][key]
    point["query_s"] = round(query_s, 5)
    return point


def measure(settings: Settings, spark: "SparkSession | None" = None,
            rows: Sequence[int] = DEFAULT_ROWS, repeat: int = DEFAULT_REPEAT) -> dict[str, Any]:
    """Measure the points and fit the rates (nothing stored); see the module docstring.

    Robust to load: the runs are interleaved (each repetition runs every size and every
    kind of run once, A B C A B C rather than A A B B C C), and each point keeps the
    median of its ``repeat`` runs per kind; so a slow spell on a shared machine costs one
    run of each kind a little, instead of bending one size's point or one layout term.
    The many-group run is made at the two largest sizes (``GROUPS_PROBE`` groups), and at
    the largest also with ``GROUPS_PROBE_MANY`` groups.
    """
    if int(repeat) < 1:
        raise InvalidParameterError(f"repeat must be >= 1, got {repeat}")
    if len(rows) < 2 or any(int(r) <= 0 for r in rows):
        raise InvalidParameterError(f"--rows needs two or more positive sizes, got {list(rows)}")
    spark = spark or get_spark(settings)
    fresh = executor.session_fresh(spark)  # no rewrite job yet in this JVM
    work = Path(settings.home) / "calibration" / uuid.uuid4().hex[:8]
    sizes = sorted(int(r) for r in rows)
    demo_rows, demo_per_file, _ = DEMO_PROBE
    try:
        # the cold probe first (round 9): the session's first rewrite job, on files the
        # driver wrote (no Spark job before it), then the same rewrite warm in every round
        cold_paths = _arrow_files(work / "in-cold", demo_rows, demo_per_file)
        cold_schema, cold_parts = read_partitions(cold_paths)
        first_s = _rewrite_once(spark, cold_schema, cold_parts, str(work / "out-cold"),
                                rows_per_file=demo_per_file)[0]
        executor.note_rewrite(spark)
        cold_warm: list[float] = []
        inputs = []
        for i, n in enumerate(sizes):
            paths = _make_files(spark, str(work / f"in-{n}-{i}"), n)
            schema, parts = read_partitions(paths)
            inputs.append((n, paths, schema, parts))
        # warm-up, untimed: the smallest size's sort and Hilbert runs (JIT, Python workers)
        n, paths, schema, parts = inputs[0]
        _round_of(spark, schema, parts, paths, n, str(work / "warm"), True, False,
                  GROUPS_PROBE)
        demo_paths = _make_files(spark, str(work / "in-demo"), demo_rows, demo_per_file)
        demo_schema, demo_parts = read_partitions(demo_paths)
        demo_rounds = []
        rounds: list[list[dict[str, float]]] = [[] for _ in inputs]
        for k in range(int(repeat)):
            cold_warm.append(_rewrite_once(spark, cold_schema, cold_parts,
                                           str(work / f"out-cold-{k}"),
                                           rows_per_file=demo_per_file)[0])
            demo_rounds.append(_demo_round(spark, demo_schema, demo_parts,
                                           str(work / f"out-demo-{k}")))
            for i, (n, paths, schema, parts) in enumerate(inputs):
                rounds[i].append(_round_of(spark, schema, parts, paths, n,
                                           str(work / f"out-{i}-{k}"),
                                           fitted=i in (0, len(inputs) - 1),
                                           many_files=i == 0,
                                           groups=GROUPS_PROBE if i >= len(inputs) - 2 else 0,
                                           many_groups=(GROUPS_PROBE_MANY
                                                        if i == len(inputs) - 1 else 0)))
        points = [_median_point(n, sum(p.bytes for p in parts), rounds[i],
                                _duckdb_scan_seconds(paths), len(schema.columns))
                  for i, (n, paths, schema, parts) in enumerate(inputs)]
        # the query side in the workload's shape (round 8): its three terms replace the
        # one-form query fit above (engine.spark.calibrate_queries)
        queries = calibrate_queries.measure(work / "queries", int(repeat))
        demo = {"rows": demo_rows, "bytes": sum(p.bytes for p in demo_parts),
                "cells": demo_rows * len(demo_schema.columns), "files_in": len(demo_parts),
                "repeat": len(demo_rounds),
                **{k: round(statistics.median(r[k] for r in demo_rounds), 4)
                   for k in ("sort_s", "groups_s")},
                **{k: demo_rounds[0][k] for k in ("sort_files", "groups_n", "groups_files")}}
        cold = {"fresh": fresh, "rows": demo_rows, "files_in": len(cold_parts),
                "first_s": round(first_s, 4),
                "warm_s": round(statistics.median(cold_warm), 4), "repeat": len(cold_warm),
                "cold_start_s": cold_start(first_s, cold_warm, fresh)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    terms = terms_from_points(points, demo)
    # a session that was not fresh measured no cold start: the term stays uncalibrated
    start = {} if cold["cold_start_s"] is None else {"cold_start_s": cold["cold_start_s"]}
    return {"measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "spark_master": settings.spark_master,
            "rates": {**rates_from_points(points, terms["file_s"]), **queries["rates"],
                      **start},
            "terms": terms, "points": points, "queries": queries, "demo_probe": demo,
            "cold_probe": cold}


def save(settings: Settings, calibration: dict[str, Any]) -> Path:
    """Write the calibration into the workspace (read back by ``load_settings``)."""
    path = Path(settings.home) / CALIBRATION_FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibration, indent=2, sort_keys=True))
    return path


def load(settings: Settings) -> dict[str, Any] | None:
    """The stored calibration, or None before the first ``calibrate``."""
    path = Path(settings.home) / CALIBRATION_FILE_NAME
    return json.loads(path.read_text()) if path.is_file() else None
