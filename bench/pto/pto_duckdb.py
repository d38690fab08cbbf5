"""PTO's real check (seed 002 section 4.2, with Presto there): write layouts as real
Parquet files and run the workload's queries with DuckDB over each.

Used by ``bench/pto/pto_replication.py --duckdb``. A layout is written exactly as PTO's
labels place it (:func:`engine.design.pto.labels.place` on the *full* table, rate 1):
one directory per layout, files cut per partition value, each file's row groups written
one by one at the label's cut points, so the files are the ones the label counted.
Two measurements per layout, three runs each (min and median seconds), DuckDB with one
thread (the machine is shared; ratios are measured side by side in one run):

* **fragments**: every scan fragment of the table as ``SELECT COUNT(*) ... WHERE
  <fragment>``: DuckDB's profiler gives the row groups it scanned and the bytes it read;
  beside them the label's own count (row groups and rows its min/max cannot prune);
  the counts must agree across layouts (the same rows, whatever the layout);
* **workload**: the 22 TPC-H queries with every benched table as a view over its
  layout's files (the others as generated); the results must agree across layouts.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.design.pto import labels
from engine.design.pto.candidates import Layout
from engine.design.pto.data import TableData
from engine.spark.exact import fragment_sql
from engine.workload.model import ScanFragment

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "helpers"))
from duckdb_helpers import connect, parquet_list_sql, profiled_query  # noqa: E402,F401 (tests/)

RUNS = 3


def write_layout(arrow: pa.Table, table: TableData, layout: Layout, root: Path) -> list[str]:
    """``arrow``'s rows as ``layout``'s files under ``root`` (row ids of ``table``, the
    same rows in the same order); returns the file paths."""
    root.mkdir(parents=True, exist_ok=True)
    arrow = plain_strings(arrow)
    pl = labels.place_layout(layout, table)
    n = len(pl.rows)
    file_bounds = np.append(pl.file_starts, n)
    paths = []
    for i in range(pl.n_files):
        lo, hi = int(file_bounds[i]), int(file_bounds[i + 1])
        chunk = arrow.take(pa.array(pl.rows[lo:hi]))
        starts = pl.rg_starts[(pl.rg_starts >= lo) & (pl.rg_starts < hi)] - lo
        path = root / f"part-{i:06d}.parquet"
        with pq.ParquetWriter(path, arrow.schema) as w:
            for a, b in zip(starts, np.append(starts[1:], hi - lo)):
                w.write_table(chunk.slice(int(a), int(b - a)), row_group_size=int(b - a))
        paths.append(str(path))
    return paths


def plain_strings(arrow: pa.Table) -> pa.Table:
    """``string_view`` columns (tpchgen-cli writes them) as ``string``: Arrow's ``take``
    has no kernel for views; the values are the same."""
    fields = [pa.field(f.name, pa.string(), f.nullable) if pa.types.is_string_view(f.type) else f
              for f in arrow.schema]
    return arrow.cast(pa.schema(fields))








def fragment_check(con: Any, prof: Path, paths: Sequence[str], table: TableData, layout: Layout,
                   fragments: Sequence[ScanFragment]) -> dict[str, Any]:
    """Every fragment over ``paths``, three runs; DuckDB's counters beside the label's."""
    pl = labels.place_layout(layout, table)
    boxes = [table.encode_fragment(f) for f in fragments]
    label_rows = label_rgs = 0
    for b in boxes:
        r, _, g = pl.scan(b)
        label_rows, label_rgs = label_rows + r, label_rgs + g
    runs, counts, duck = [], [], {"row_groups": 0, "row_groups_total": 0, "bytes": 0}
    for run in range(RUNS):
        total = 0.0
        for f in fragments:
            sql = f"SELECT COUNT(*) FROM read_parquet({parquet_list_sql(paths)}) WHERE {fragment_sql(f)}"
            rows, secs, c = profiled_query(con, sql, prof)
            total += secs
            if run == 0:
                counts.append(int(rows[0][0]))
                for k in duck:
                    duck[k] += c[k]
        runs.append(total)
    return {"files": len(paths), "row_groups_written": pl.n_row_groups,
            "label_row_groups": label_rgs, "label_rows_read": label_rows,
            "duckdb_row_groups": duck["row_groups"], "duckdb_bytes": duck["bytes"],
            "min_s": min(runs), "median_s": statistics.median(runs), "counts": counts}


def scan_counters(prof: Path) -> dict[str, int]:
    """Rows scanned, row groups scanned, files read and bytes read by one query: DuckDB's
    JSON profile (``query`` totals; files summed over the TABLE_SCAN operators' ``Total
    Files Read``, which counts every file whose footer the scan opened)."""
    p = json.loads(prof.read_text())
    q = p.get("query", p)
    files = 0
    stack = list(p.get("operator", p.get("children", [])))
    while stack:
        op = stack.pop()
        stack.extend(op.get("children", []))
        n = op.get("extra_info", {}).get("Total Files Read") if isinstance(op.get("extra_info"), dict) else None
        files += int(n) if n is not None and str(n).isdigit() else 0
    return {"rows": int(q.get("total_rows_scanned", 0)), "row_groups": int(q.get("total_row_groups_scanned", 0)),
            "files": files, "bytes": int(p.get("io", {}).get("total_bytes_read", 0))}


def workload_check(con: Any, queries: Mapping[int, str], views: Mapping[str, Sequence[str]],
                   prof: Path | None = None) -> dict[str, Any]:
    """The queries with each table a view over ``views[table]``; three runs. With ``prof``
    (the connection's profile file, :func:`connect`), the first run's scan counters summed
    over the queries (:func:`scan_counters`): rows read, row groups, files opened, bytes."""
    for name, paths in views.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({parquet_list_sql(paths)})")
    runs, results = [], {}
    scans = {"rows": 0, "row_groups": 0, "files": 0, "bytes": 0}
    for run in range(RUNS):
        total = 0.0
        for qid, sql in queries.items():
            t0 = time.perf_counter()
            rows = con.execute(sql).fetchall()
            total += time.perf_counter() - t0
            if run == 0:
                results[qid] = sorted(map(repr, rows))
                if prof is not None:
                    for k, v in scan_counters(prof).items():
                        scans[k] += v
        runs.append(total)
    return {"min_s": min(runs), "median_s": statistics.median(runs), "runs_s": runs, "results": results,
            **({"scans": scans} if prof is not None else {})}
