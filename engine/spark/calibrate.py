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
group_s + B / multi_group_bytes_per_s``,
:func:`engine.spark.calibrate_fit.nonnegative_fit`).

The demo-shaped probe (:data:`DEMO_PROBE`): terms fitted on runs of 50,000-row files alone
over-predict a small plan of many small files (bench/executor/README.md). So the same
many-group difference is also measured on the demo plan's own shape: 86,000 rows in
files of 2,000 rows, as one sort group and as 6 groups writing 2,000-row files
(:func:`_demo_round`), and fitted together with the large runs, every difference weighted
by its plan's time (the goal is a relative error: ±30% of a plan's wall time), its size in
the plans' unit (cells x the calibration table's bytes per cell).

The unit: B is the calibration table's compressed bytes, and the table's bytes
per cell (row x column) are stored as ``rewrite_cell_bytes``; plans price a group at rows x
columns x that (:func:`engine.policy.costmodel.work_bytes`), so a table that compresses
better or worse than the synthetic one is priced by its work, not by its file sizes
(bench/executor/README.md).

The cold probe (:func:`engine.spark.calibrate_fit.cold_start`): a CLI ``plan run``
starts its own Spark session, and its first rewrite job pays the JIT and the Python
workers' start-up, which the warm runs above never see (bench/executor/README.md). So the
session's FIRST job is a rewrite of the demo-shaped rows in files the driver wrote
(:func:`engine.spark.calibrate_inputs.arrow_files`: no Spark job before it), and every
repetition rewrites the same files warm; the first less the warm median is
``cold_start_s`` (a rate, shown by ``calibrate --show``; plans state their price warm and
with it: a fresh session's).
A session that had already rewritten (``executor.session_fresh``) measures none.

The calibration table: every column nullable, as Spark writes a rewrite's files,
so that no calibration run pays the executor's type-restoring pass that plans on nullable
tables never pay (:func:`engine.spark.calibrate_inputs.make_files`).

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

from engine.core.config import CALIBRATION_FILE_NAME, Settings
from engine.core.errors import InvalidParameterError
from engine.policy.base import PlanGroup
from engine.policy.costmodel import TERM_KEYS
from engine.spark import calibrate_queries, executor, footers_parallel
from engine.spark.calibrate_fit import cold_start, rates_from_points, terms_from_points
from engine.spark.calibrate_inputs import ROWS_PER_FILE, arrow_files, make_files
from engine.spark.session import get_spark
from engine.table.footers import read_partitions
from engine.workload.sql.render import sql_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the largest size calibrated by default: 1.6M rows (~26 MB) keeps ``calibrate --repeat 3``
#: near two minutes on 2 cores and is within 7x of a 10M-row plan
DEFAULT_MAX_ROWS = 1_600_000
#: the sizes calibrated below the largest: 1/16 and 1/4 of it (a 16x range for the lines)
SIZE_FRACTIONS = (1 / 16, 1 / 4, 1.0)
DEFAULT_REPEAT = 3
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
#: group (bench/executor/README.md)
GROUPS_PROBE_MANY = 32
GROUP_KEYS = ("l_shipdate", "l_orderdate")
#: the demo plan's shape (about 43 partitions, 86k rows): (rows, rows per input and
#: output file, groups); its one-group and many-group runs are :func:`_demo_round`'s
DEMO_PROBE = (86_000, 2_000, 6)
__all__ = ["DEFAULT_MAX_ROWS", "RATE_KEYS", "TERM_KEYS", "default_rows", "load", "measure",
           "save", "timed_rewrite"]


def default_rows(max_rows: int = DEFAULT_MAX_ROWS) -> tuple[int, ...]:
    """The sizes calibrated up to ``max_rows``: 1/16, 1/4 and all of it, in whole input
    files (``ROWS_PER_FILE``), at least one file each and distinct.

    Calibrate near the plans' size: a line fitted on small sizes carries its noise 10x
    out (bench/executor/README.md).

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


def _duckdb_scan_seconds(paths: Sequence[str], repeat: int = 3) -> float:
    """Median seconds of a filtering aggregate over ``paths`` in DuckDB (one thread, so
    the rate is per core like the model's)."""
    files = ", ".join(sql_literal(str(p)) for p in paths)
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
    Nothing is committed and ``out`` is removed. The one timed rewrite of calibrate and of
    ``calibrate --rewrite-on`` (:mod:`engine.spark.calibrate_rewrite`)."""
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
        # the cold probe first: the session's first rewrite job, on files the
        # driver wrote (no Spark job before it), then the same rewrite warm in every round
        cold_paths = arrow_files(work / "in-cold", demo_rows, demo_per_file)
        cold_schema, cold_parts = read_partitions(cold_paths)
        first_s = _rewrite_once(spark, cold_schema, cold_parts, str(work / "out-cold"),
                                rows_per_file=demo_per_file)[0]
        executor.note_rewrite(spark)
        cold_warm: list[float] = []
        inputs = []
        for i, n in enumerate(sizes):
            paths = make_files(spark, str(work / f"in-{n}-{i}"), n, ROWS_PER_FILE)
            schema, parts = read_partitions(paths)
            inputs.append((n, paths, schema, parts))
        # warm-up, untimed: the smallest size's sort and Hilbert runs (JIT, Python workers)
        n, paths, schema, parts = inputs[0]
        _round_of(spark, schema, parts, paths, n, str(work / "warm"), True, False,
                  GROUPS_PROBE)
        demo_paths = make_files(spark, str(work / "in-demo"), demo_rows, demo_per_file)
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
        # the query side in the workload's shape: its three terms replace the
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
