"""Measure the cost model's rates on the configured Spark and DuckDB (WAIR section 4.2).

WAIR trades ``t_r(P)``, the cost of reclustering the partitions P, against the scan time
it saves; both must be the machine's, not constants. ``t_r`` is "a function of the
aggregate size of P" (section 4.2); on Spark, where one plan is one job, it is

    t_rewrite(B) = rewrite_fixed_s + B / rewrite_read_bytes_per_s + B / sort_bytes_per_s

fitted by least squares over a few sizes: the executor's own rewrite
(:func:`engine.spark.executor.rewrite`) of synthetic lineitem-like files of B bytes, and a
read-only pass over the same files (its slope is the read rate; the rewrite's slope minus
it, the sort-and-write rate). On the query side a per-query fixed cost and a scan rate are
fitted the same way from DuckDB scanning 1..n of the files (section 4.2's ``t_read`` when
the log carries no measured duration).

The result is stored in the workspace (``calibration.json``: the rates, the points they
were fitted on, the date and the Spark master) and read by
:func:`engine.core.config.load_settings` under the configured values, which override it.
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
from engine.spark import executor
from engine.spark.session import get_spark
from engine.table.footers import read_partitions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_ROWS = (50_000, 200_000, 800_000)
DEFAULT_REPEAT = 3
ROWS_PER_FILE = 50_000
#: the rates calibration writes (all Settings fields)
RATE_KEYS = ("rewrite_fixed_s", "rewrite_read_bytes_per_s", "sort_bytes_per_s",
             "query_fixed_s", "query_scan_bytes_per_s")


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


def rates_from_points(points: Sequence[dict[str, float]]) -> dict[str, float]:
    """The model's rates from measured (bytes, rewrite s, read s, query s) points.

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
    fixed, per_byte = fit_line(b, [p["rewrite_s"] for p in points])
    _, read_per_byte = fit_line(b, [p["read_s"] for p in points])
    if not 0 < read_per_byte < per_byte:
        # the read pass does not grow with size above the noise: its slope is not
        # separable; the whole slope goes to sort-and-write and the read rate stays
        # uncalibrated (0: ``scan_bytes_per_s`` applies)
        read_per_byte = 0.0
    sort_per_byte = max(per_byte - read_per_byte, 1e-12)
    q_fixed, q_per_byte = fit_line(b, [p["query_s"] for p in points])
    # a query time that does not grow with size (noise above the slope): the scan rate is
    # not separable; 0 leaves ``scan_bytes_per_s`` in effect instead of an absurd rate
    return {"rewrite_fixed_s": fixed,
            "rewrite_read_bytes_per_s": 1.0 / read_per_byte if read_per_byte else 0.0,
            "sort_bytes_per_s": 1.0 / sort_per_byte, "query_fixed_s": q_fixed,
            "query_scan_bytes_per_s": 1.0 / q_per_byte if q_per_byte > 1e-12 else 0.0}


def _make_files(spark: "SparkSession", root: str, rows: int) -> list[str]:
    """Lineitem-like rows in ingestion order (dates wander, quantities random), written
    by Spark into files of ROWS_PER_FILE rows."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    df = spark.range(rows).select(
        F.col("id").alias("l_orderkey"),
        F.date_add(F.lit("1992-01-01").cast("date"), (F.col("id") * 2526 / rows).cast("int"))
        .alias("l_orderdate"),
        F.date_add(F.lit("1992-01-01").cast("date"),
                   ((F.col("id") * 2526 / rows) + F.rand(7) * 120).cast("int")).alias("l_shipdate"),
        (F.rand(11) * 50).cast("decimal(12,2)").alias("l_quantity"),
        (F.rand(13) * 100000).alias("l_extendedprice"),
        F.concat(F.lit("note "), (F.rand(17) * 1000).cast("int").cast("string")).alias("l_comment"))
    df.coalesce(1).write.mode("overwrite").option("maxRecordsPerFile", ROWS_PER_FILE).parquet(root)
    return executor.list_data_files(spark, root)


def _duckdb_scan_seconds(paths: Sequence[str], repeat: int = 3) -> float:
    """Median seconds of a filtering aggregate over ``paths`` in DuckDB (one thread, so
    the rate is per core like the model's)."""
    files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    query = (f"SELECT count(*), sum(l_extendedprice) FROM read_parquet([{files}]) "
             "WHERE l_shipdate >= DATE '1995-01-01'")
    con.execute(query).fetchall()  # untimed: the first run reads the files from disk
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        con.execute(query).fetchall()
        times.append(time.perf_counter() - t)
    con.close()
    return statistics.median(times)


def _measure_once(spark: "SparkSession", schema: Any, parts: Sequence[Any],
                  paths: Sequence[str], out: str) -> tuple[float, float, float]:
    """(read-only pass s, rewrite wall s, rewrite executor CPU s) of one size, once."""
    group = PlanGroup(tuple(paths), "sort", ("l_shipdate",))
    t = time.perf_counter()
    with executor.session_conf(spark, executor.JOB_CONF):
        executor.content_checksum(spark.read.parquet(*paths))
    read_s = time.perf_counter() - t
    run = executor.rewrite(spark, schema, [(group, list(parts))], out, ROWS_PER_FILE, None)
    return read_s, run.measured["wall_seconds"], run.measured["executor_cpu_seconds"]


def measure(settings: Settings, spark: "SparkSession | None" = None,
            rows: Sequence[int] = DEFAULT_ROWS, repeat: int = DEFAULT_REPEAT) -> dict[str, Any]:
    """Measure the points (each size ``repeat`` times, the median kept: one run disturbed
    by other work on the machine no longer bends the line) and fit the rates (nothing
    stored); see the module docstring."""
    if int(repeat) < 1:
        raise InvalidParameterError(f"repeat must be >= 1, got {repeat}")
    if len(rows) < 2 or any(int(r) <= 0 for r in rows):
        raise InvalidParameterError(f"--rows needs two or more positive sizes, got {list(rows)}")
    spark = spark or get_spark(settings)
    work = Path(settings.home) / "calibration" / uuid.uuid4().hex[:8]
    points = []
    try:
        for i, n in enumerate([min(rows)] + sorted(int(r) for r in rows)):  # first: warm-up
            src = str(work / f"in-{n}-{i}")
            paths = _make_files(spark, src, n)
            schema, parts = read_partitions(paths)
            nbytes = sum(p.bytes for p in parts)
            runs = [_measure_once(spark, schema, parts, paths, str(work / f"out-{n}-{i}-{k}"))
                    for k in range(1 if i == 0 else repeat)]
            if i == 0:
                continue
            points.append({"rows": n, "bytes": nbytes, "repeat": len(runs),
                           "read_s": round(statistics.median(r[0] for r in runs), 4),
                           "rewrite_s": round(statistics.median(r[1] for r in runs), 4),
                           "rewrite_cpu_s": round(statistics.median(r[2] for r in runs), 4),
                           "query_s": round(_duckdb_scan_seconds(paths), 5)})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "spark_master": settings.spark_master, "rates": rates_from_points(points),
            "points": points}


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
