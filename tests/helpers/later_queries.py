"""A query log of queries imported after a run (WAIR section 4.3), shared by the
realized-savings tests of the engine (test_wair_realized) and of the dashboard
(test_app_realized), and the imported log of the what-if on a table (test_whatif_own)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np


def later_log(path: Path, count: int, table: str = "lineitem", measure: str = "l_extendedprice") -> str:
    """``count`` l_shipdate queries on ``table`` (summing ``measure``) after the run, each
    with a measured scan (``bytes_scanned`` 1000 + i) and duration (40 ms); written to
    ``path``, returned."""
    rng = np.random.default_rng(5)
    t0 = dt.datetime(2024, 6, 1, 8, 0, 0)
    lines = []
    for i in range(count):
        lo = dt.date(1993, 1, 1) + dt.timedelta(days=int(rng.integers(0, 4 * 365)))
        hi = lo + dt.timedelta(days=int(rng.integers(30, 91)))
        sql = (f"SELECT sum({measure}) FROM {table} WHERE l_shipdate >= DATE "
               f"'{lo.isoformat()}' AND l_shipdate < DATE '{hi.isoformat()}'")
        lines.append(json.dumps({"id": f"late{i:03d}", "sql": sql, "duration_ms": 40.0,
                                 "bytes_scanned": 1000 + i,
                                 "ts": (t0 + dt.timedelta(minutes=i)).isoformat()}))
    Path(path).write_text("\n".join(lines) + "\n")
    return str(path)
