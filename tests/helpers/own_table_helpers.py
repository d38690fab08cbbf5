"""A lineitem-like table of the user's own, in ingestion order, and a query log over it:
the input of the what-if tests on an own table (engine and dashboard)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from later_queries import later_log

FILES, ROWS_PER_FILE = 24, 400


def write_files(root: Path, seed: int = 3) -> Path:
    """A lineitem-like table in ingestion (order date) order: ship dates trail by up to
    300 days, commit dates by 30-90, one Parquet file per 400 rows."""
    rng = np.random.default_rng(seed)
    n = FILES * ROWS_PER_FILE
    order = np.sort(rng.integers(0, 5 * 365, n))
    start = np.datetime64("1993-01-01")
    ship = start + (order + rng.integers(1, 300, n)).astype("timedelta64[D]")
    commit = start + (order + rng.integers(30, 91, n)).astype("timedelta64[D]")
    root.mkdir(parents=True)
    for i in range(FILES):
        s = slice(i * ROWS_PER_FILE, (i + 1) * ROWS_PER_FILE)
        pq.write_table(pa.table({
            "l_orderkey": pa.array(np.arange(n)[s].astype(np.int64)),
            "l_quantity": pa.array(rng.integers(1, 51, ROWS_PER_FILE).astype(np.int64)),
            "l_shipdate": pa.array(ship[s].astype(object), pa.date32()),
            "l_commitdate": pa.array(commit[s].astype(object), pa.date32()),
            "l_comment": pa.array(rng.choice(["a", "b", "c"], ROWS_PER_FILE)),
        }), root / f"part-{i:03d}.parquet")
    return root


def write_log(path: Path, count: int = 48) -> Path:
    """``count`` l_shipdate range queries on table ``t`` (:func:`later_queries.later_log`)."""
    return Path(later_log(path, count, table="t", measure="l_quantity"))
