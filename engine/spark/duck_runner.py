"""DuckDB over a table's files as the real replay measures queries
(:mod:`engine.replay.runner`): each query profiled, the fixed and per-file cost of opening
files probed, and the replay's own query form fitted.

DuckDB is imported here, in the one layer that runs work on data (Spark and DuckDB).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Mapping, Sequence

import duckdb
import numpy as np

from engine.scan.pruning import analyze_fragment
from engine.spark.exact import fragment_sql, sql_literal
from engine.table import fs
from engine.workload.sql.render import sql_identifier

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment


class DuckRunner:
    """A DuckDB connection that profiles every query (its JSON profile is read back after each)."""

    def __init__(self, workdir: str, threads: int = 1) -> None:
        os.makedirs(workdir, exist_ok=True)
        self.con = duckdb.connect()
        self.con.execute(f"SET threads={int(threads)}")
        self.con.execute("SET enable_object_cache=false")
        self.con.execute("SET enable_profiling='no_output'")  # read back per query

    def count(self, paths: Sequence[str], fragment: "ScanFragment",
              columns: Sequence[str] | None = None, profile: bool = True) -> tuple[int, float, float, float]:
        """(matching rows, DuckDB seconds, DuckDB bytes read, wall seconds) of the fragment's
        predicate over ``paths``, reading ``columns`` (the projection) as aggregates."""
        if not paths:
            return 0, 0.0, 0.0, 0.0
        files = "[" + ", ".join(sql_literal(fs.local_path(p)) for p in paths) + "]"
        aggs = "".join(f", MAX({sql_identifier(c)})" for c in (columns or ()))
        sql = f"SELECT COUNT(*){aggs} FROM read_parquet({files}) WHERE {fragment_sql(fragment)}"
        t0 = time.perf_counter()
        row = self.con.execute(sql).fetchall()[0]
        wall = time.perf_counter() - t0
        secs = nbytes = 0.0
        if profile:
            try:
                prof = json.loads(self.con.get_profiling_information(format="json"))
                secs = float(prof.get("query", {}).get("total_time", 0.0) or 0.0)
                nbytes = float(prof.get("io", {}).get("total_bytes_read", 0.0) or 0.0)
            except (AttributeError, ValueError, RuntimeError):  # an older DuckDB: wall time only
                pass
        return int(row[0]), secs, nbytes, wall


def probe_file_seconds(duck: DuckRunner, paths: Sequence[str], sizes: Sequence[int] = (1, 50, 200, 500),
                       repeat: int = 3) -> tuple[float, float]:
    """(fixed s, s per file) of DuckDB opening ``paths``: the median time of a query whose
    predicate no file's statistics can meet (nothing past the footers is read), over the
    first n files for each n in ``sizes``, fitted by least squares.

    The simulator prices a query as ``query_fixed_s`` + bytes / ``query_scan_bytes_per_s``
    (``layout-advisor calibrate``: 1 to 16 files of 50,000 rows), which has no term per
    file scanned; this measures the one the replay's queries pay (bench/replay/README.md),
    on files outside the measured queries' choice (every ingested file)."""
    sizes = sorted({min(int(n), len(paths)) for n in sizes if n > 0})
    if len(sizes) < 2:
        return 0.0, 0.0
    xs, ys = [], []
    for n in sizes:
        files = "[" + ", ".join(sql_literal(fs.local_path(p)) for p in paths[:n]) + "]"
        sql = f"SELECT COUNT(*) FROM read_parquet({files}) WHERE l_shipdate < DATE '1000-01-01'"
        duck.con.execute(sql).fetchall()  # untimed: the files from disk into the page cache
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            duck.con.execute(sql).fetchall()
            times.append(time.perf_counter() - t0)
        xs.append(float(n))
        ys.append(float(np.median(times)))
    slope, intercept = np.polyfit(xs, ys, 1)
    return max(0.0, float(intercept)), max(0.0, float(slope))


def query_form_fit(duck: DuckRunner, zm: "ZoneMaps", fragments: Sequence["ScanFragment"],
                   types: Mapping[str, str]) -> dict[str, float]:
    """DuckDB's seconds for the replay's own query form, fitted per query as
    ``fixed + per_file x files scanned + bytes / rate`` (least squares, terms clamped at 0)
    over ``fragments`` run on the table whose zonemaps are ``zm``.

    Meant for the first period's queries, which the replay does not measure, on the
    ingested files: a calibration of the query side in the form the measured queries take
    (every projected column aggregated, strings included, over many small files), outside
    the measured period, to set beside ``calibrate``'s one numeric query form."""
    files, nbytes, secs = [], [], []
    for frag in fragments:
        scan = analyze_fragment(zm, frag)
        paths = [str(p) for p in zm.paths[scan.scanned]]
        if not paths:
            continue
        rb = zm.read_bytes(list(frag.columns))
        _, _, _, wall = duck.count(paths, frag, [c for c in frag.columns if c in types], profile=False)
        files.append(float(len(paths)))
        nbytes.append(float(rb[scan.scanned].sum()))
        secs.append(wall)
    if len(secs) < 3:
        return {"queries": float(len(secs)), "fixed_s": 0.0, "file_s": 0.0, "bytes_per_s": 0.0}
    a = np.c_[np.ones(len(secs)), files, nbytes]
    coef = np.linalg.lstsq(a, np.asarray(secs), rcond=None)[0]
    if (coef < 0).any():  # a negative term: refit without it
        keep = coef >= 0
        coef = np.zeros(3)
        coef[keep] = np.linalg.lstsq(a[:, keep], np.asarray(secs), rcond=None)[0]
        coef = np.maximum(coef, 0.0)
    return {"queries": float(len(secs)), "fixed_s": float(coef[0]), "file_s": float(coef[1]),
            "bytes_per_s": 1.0 / float(coef[2]) if coef[2] > 0 else 0.0,
            "seconds": float(sum(secs))}
