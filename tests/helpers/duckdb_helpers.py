"""DuckDB over Parquet files with its JSON profile read back after each query: the row
groups it scanned and the bytes it read, to check that a layout's files prune as planned
(one thread: the machine is shared)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

import duckdb


def parquet_list_sql(paths: Sequence[str]) -> str:
    """``paths`` as a DuckDB list literal for ``read_parquet``."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def profiled_query(con: Any, sql: str, prof: Path) -> tuple[Any, float, dict[str, int]]:
    """Result, seconds and DuckDB's scan counters of one query."""
    t0 = time.perf_counter()
    rows = con.execute(sql).fetchall()
    secs = time.perf_counter() - t0
    p = json.loads(prof.read_text())
    q = p.get("query", p)
    return rows, secs, {"row_groups": int(q.get("total_row_groups_scanned", 0)),
                        "row_groups_total": int(q.get("total_row_groups_to_scan", 0)),
                        "bytes": int(p.get("io", {}).get("total_bytes_read", 0))}


def connect(tmp: Path) -> tuple[Any, Path]:
    """A one-thread connection that profiles every query into ``tmp/duckdb_profile.json``."""
    con = duckdb.connect()
    con.execute("SET threads = 1")
    prof = tmp / "duckdb_profile.json"
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{prof}'")
    con.execute("SET profiling_mode = 'detailed'")
    return con, prof
