"""Measure the simulator's economics with DuckDB: per preset, the
query scan rate, the layout-independent cost of a query and the rewrite cost, in the
simulator's own byte unit (rows x the preset's column widths), so the constants can be
stored in ``engine/scenarios/presets.py`` (``SIM_CALIBRATION``) with their provenance.

WAIR's prototype runs on DuckDB (section 5.2), so DuckDB is the engine whose ratios the
simulator should follow. Everything runs with ``SET threads = 1`` so wall seconds are CPU
seconds (the unit of the paper's cost model). For each preset:

1. the preset's data, in ingestion order, is written as Parquet files of 100k rows (one
   row group each, snappy, DuckDB's default). Not the simulator's partition size: the
   simulator cuts ~1,700 tiny partitions whatever the rows, and DuckDB's per-file overhead would then be what
   is measured; the rates are per simulator byte, which is what the simulator charges;
2. **scan rate**: each query template's projection (``sum`` of its columns) over 1, 2, 5
   and 10 files without a filter; the slope of seconds against simulator bytes, median
   over the templates;
3. **layout-independent cost**: 24 of the scenario's generated queries; the rows each one
   selects (its boxes evaluated in numpy) are loaded into an in-memory table and the
   query's shape (aggregation, plus a join to a small dimension table where the template
   reads the join key: orders for TPC-H's order key, item for DSB's item key; distinct
   counts for Mirrors) is timed on them alone. No scan, no pruning: what every layout
   pays. Fitted as ``fixed + per_row x rows selected``; the simulator charges
   ``fixed + per_row x`` the mean rows its own queries select
   (:func:`engine.scenarios.presets.calibrated_settings`);
4. **rewrite**: ``COPY (SELECT * FROM files ORDER BY key) TO parquet`` over 1 .. 10 files;
   intercept (fixed) and slope against simulator bytes of all columns.

Usage::

    python bench/sim/sim_calibration.py --rows 1000000          # prints a SIM_CALIBRATION dict
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.economics import sample_fragments, selected_mask  # noqa: E402

SORT_KEY = {"tpch": "l_shipdate", "dsb": "ss_sold_date_sk", "mirrors": "subnet",
            "tpch2": "l_shipdate"}
FRACTIONS = (0.1, 0.2, 0.5, 1.0)
FILE_ROWS = 100_000


def timed(con: duckdb.DuckDBPyConnection, sql: str, repeat: int = 3) -> float:
    """Median wall seconds of ``sql`` (results fetched)."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        con.execute(sql).fetchall()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def write_files(sc: Any, out: Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The data in ingestion order as Parquet files of ``target_rows``; returns the paths,
    the rows per file and the simulator bytes per row of each column (schema order)."""
    ds = sc.dataset
    n = int(ds.batch_offsets[-1])
    step = FILE_ROWS
    cols = [c for c, _ in ds.schema.columns]
    rng = np.random.default_rng(0)
    paths, rows = [], []
    for i, start in enumerate(range(0, n, step)):
        stop = min(n, start + step)
        arrays = {}
        for c in cols:
            if c in ds.data:
                arrays[c] = pa.array(np.asarray(ds.data[c][start:stop], dtype=np.float64))
            else:  # payload-only columns: random values of about their width
                arrays[c] = pa.array(rng.integers(0, 2**40, stop - start).astype(np.float64))
        path = out / f"p{i:05d}.parquet"
        pq.write_table(pa.table(arrays), path, row_group_size=stop - start, compression="snappy")
        paths.append(str(path))
        rows.append(stop - start)
    widths = np.array([float(ds.widths.get(c, 0.0)) for c in cols])
    return paths, np.array(rows, dtype=np.float64), widths


def file_list(paths: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{p}'" for p in paths) + "]"


def slope_intercept(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    b, a = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(b), float(a)


def scan_rate(con, sc, paths, rows, widths) -> dict[str, Any]:
    cols = [c for c, _ in sc.dataset.schema.columns]
    slopes = []
    templates = {t.name: t for w in sc.spec.workloads for t in w.templates}
    for t in templates.values():
        proj = [c for c in t.columns if c in cols]
        w = sum(widths[cols.index(c)] for c in proj)
        xs, ys = [], []
        for f in FRACTIONS:
            k = max(1, int(round(f * len(paths))))
            sel = ", ".join(f"sum({c})" for c in proj)
            xs.append(float(rows[:k].sum() * w))
            ys.append(timed(con, f"SELECT {sel} FROM read_parquet({file_list(paths[:k])})"))
        slopes.append(slope_intercept(xs, ys)[0])
    b = statistics.median(slopes)
    return {"scan_bytes_per_s": 1.0 / b if b > 0 else None, "templates": len(slopes)}


def _dims(con, sc) -> None:
    """Small dimension tables for the join shapes."""
    data = sc.dataset.data
    if "l_orderkey" in data:
        keys = np.unique(data["l_orderkey"])
        con.execute("CREATE OR REPLACE TABLE orders AS SELECT * FROM "
                    "(SELECT unnest(?::DOUBLE[]) AS o_orderkey, unnest(?::INT[]) AS o_priority)",
                    [keys.tolist(), (np.arange(keys.size) % 5).tolist()])
    if "ss_item_sk" in data:
        con.execute("CREATE OR REPLACE TABLE item AS SELECT i::DOUBLE AS i_item_sk, "
                    "i % 10 AS i_category FROM range(1, 18001) t(i)")


def shape_sql(preset: str, columns: Sequence[str]) -> str:
    """The query's work on its selected rows (table ``sel``): aggregation and a join."""
    aggs = ", ".join(f"sum({c})" for c in columns) or "count(*)"
    if preset == "mirrors":
        distinct = ", ".join(f"count(DISTINCT {c})" for c in columns if c in ("ip", "path_hash")) \
            or "count(*)"
        return f"SELECT status, {distinct} FROM sel GROUP BY status" if "status" in columns \
            else f"SELECT {distinct} FROM sel"
    if "l_orderkey" in columns:
        return (f"SELECT o.o_priority, {aggs} FROM sel JOIN orders o ON sel.l_orderkey = "
                "o.o_orderkey GROUP BY o.o_priority")
    if "ss_item_sk" in columns:
        return (f"SELECT i.i_category, {aggs} FROM sel JOIN item i ON sel.ss_item_sk = "
                "i.i_item_sk GROUP BY i.i_category")
    return f"SELECT {aggs} FROM sel"


def fixed_cost(con, sc, preset: str, n_queries: int = 24) -> dict[str, Any]:
    data = sc.dataset.data
    _dims(con, sc)
    costs, selected = [], []
    for frag in sample_fragments(sc, n_queries):
        mask = selected_mask(sc, frag)
        cols = [c for c in frag.columns if c in data]
        table = pa.table({c: pa.array(np.asarray(data[c])[mask]) for c in cols}) if cols else \
            pa.table({"x": pa.array(np.zeros(int(mask.sum())))})
        con.register("sel_arrow", table)
        con.execute("CREATE OR REPLACE TABLE sel AS SELECT * FROM sel_arrow")
        con.unregister("sel_arrow")
        costs.append(timed(con, shape_sql(preset, cols)))
        selected.append(int(mask.sum()))
    per_row, fixed = slope_intercept(selected, costs)
    return {"query_fixed_s": max(0.0, fixed), "query_seconds_per_row": max(0.0, per_row),
            "query_mean_s": statistics.mean(costs), "queries": len(costs),
            "mean_rows_selected": float(np.mean(selected))}


def rewrite_cost(con, sc, preset, paths, rows, widths, out: Path) -> dict[str, Any]:
    xs, ys = [], []
    row_bytes = float(widths.sum())
    for f in FRACTIONS:
        k = max(1, int(round(f * len(paths))))
        target = out / f"rewrite_{k}.parquet"
        sql = (f"COPY (SELECT * FROM read_parquet({file_list(paths[:k])}) ORDER BY "
               f"{SORT_KEY[preset]}) TO '{target}' (FORMAT parquet, COMPRESSION snappy)")
        xs.append(float(rows[:k].sum() * row_bytes))
        ys.append(timed(con, sql, repeat=2))
    b, a = slope_intercept(xs, ys)
    return {"rewrite_bytes_per_s": 1.0 / b if b > 0 else None, "rewrite_fixed_s": max(0.0, a),
            "points": [[x, y] for x, y in zip(xs, ys)]}


def calibrate(preset: str, rows: int, seed: int) -> dict[str, Any]:
    sc = build_scenario(preset, rows=rows, seed=seed)
    with tempfile.TemporaryDirectory(prefix=f"simcal-{preset}-") as tmp:
        out = Path(tmp)
        paths, per_file, widths = write_files(sc, out)
        con = duckdb.connect()
        con.execute("SET threads = 1")
        res = {"files": len(paths), "rows": int(per_file.sum()),
               **scan_rate(con, sc, paths, per_file, widths),
               **fixed_cost(con, sc, preset),
               **rewrite_cost(con, sc, preset, paths, per_file, widths, out)}
        con.close()
    return res


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--presets", default="tpch,dsb,mirrors,tpch2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = {"measured": dt.date.today().isoformat(), "duckdb": duckdb.__version__,
           "rows": args.rows, "threads": 1}
    for preset in args.presets.split(","):
        t0 = time.perf_counter()
        out[preset] = calibrate(preset, args.rows, args.seed)
        print(f"{preset}: {json.dumps(out[preset])} ({time.perf_counter() - t0:.0f} s)", flush=True)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
