"""The peer benchmark's data, logs and Iceberg tables (``bench_peers.py`` runs them).

* :func:`batches`: real TPC-H ``lineitem`` joined to ``o_orderdate`` (``tpchgen-cli`` +
  DuckDB, :func:`engine.spark.tpch_data.make_lineitem`: WAIR's 1..1000-day ship-date gap,
  section 6.2.1) in ingestion order, split into the first batch (the table the methods
  rewrite) and a second ingestion batch (the newest orders, appended later);
* :func:`drift_log`: a drifting log: ship-date ranges whose hot point moves from the
  oldest to the newest ship dates over the log's weeks (WAIR's periods move the same
  way), half of them with a supplier range;
* :func:`write_log`: a log as JSONL with ``FROM lineitem`` renamed for a registered table;
* :class:`IcebergCopies`: fresh copies of the same data as Iceberg tables of one
  workspace's pyiceberg SQL catalog (one ``append`` per file, as the Delta table is
  written), their live files, and the full sort by ``l_shipdate`` (pyiceberg overwrite).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from engine.scenarios import demo_log
from engine.spark.exact import sql_literal
from engine.spark.tpch_data import make_lineitem
from engine.table.formats import iceberg


def batches(root: Path, scale: float, second_share: float) -> tuple[pa.Table, pa.Table, Path]:
    """(first batch, second batch, the first batch as one Parquet file: the logs' bounds).
    The second batch is the newest ``second_share`` of the rows (by ``o_orderdate``)."""
    made = make_lineitem(scale, root / "lineitem.parquet")
    data = pq.read_table(made["path"])
    n1 = int(round(data.num_rows * (1 - second_share)))
    first = root / "batch1.parquet"
    pq.write_table(data.slice(0, n1), first)
    return data.slice(0, n1), data.slice(n1), first


def drift_log(data: Path, count: int, seed: int = 23, days: float = 28.0,
              start: str = "2024-03-04T08:00:00+00:00") -> list[dict]:
    """``count`` queries over ``days``: 30-90-day ``l_shipdate`` ranges starting within
    :data:`demo_log.HOT_DAYS` of a point that moves linearly from the oldest (first query)
    to the newest (last query) ship dates of ``data``; every other query also filters 2% of
    the supplier keys (:data:`demo_log.SHIP_SUPPLIER`). Deterministic for a seed."""
    rng = random.Random(seed)
    bounds = demo_log.column_bounds(data, ("l_shipdate", "l_suppkey"))
    lo, hi = bounds["l_shipdate"]
    s_lo, s_hi = (int(v) for v in bounds["l_suppkey"])
    t0 = dt.datetime.fromisoformat(start)
    out = []
    for k in range(count):
        p = k / max(count - 1, 1)
        span = rng.choice((30, 60, 90))
        last = hi - dt.timedelta(days=span)
        centre = lo + dt.timedelta(days=round(p * (last - lo).days))
        a = centre + dt.timedelta(days=rng.randrange(demo_log.HOT_DAYS) - round(p * demo_log.HOT_DAYS))
        a = min(max(a, lo), last)
        if k % 2:
            width = max(1, round((s_hi - s_lo) * 0.02))
            s1 = rng.randint(s_lo, max(s_lo, s_hi - width))
            sql = demo_log.SHIP_SUPPLIER.format(a=a, days=span, s1=s1, s2=s1 + width)
        else:
            sql = (f"SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem\n"
                   f"WHERE l_shipdate >= DATE '{a}' AND l_shipdate < DATE '{a}' + INTERVAL '{span}' DAY")
        ts = (t0 + dt.timedelta(seconds=round(p * days * 86400))).isoformat()
        out.append({"id": f"r{k + 1:04d}", "ts": ts, "sql": sql})
    return out


def write_log(queries: list[dict], path: Path, table: str = "lineitem") -> Path:
    """``queries`` as JSONL, ``lineitem`` renamed ``table`` in every statement."""
    with path.open("w") as fh:
        for q in queries:
            sql = q["sql"].replace("FROM lineitem", f"FROM {table}")
            fh.write(json.dumps({"id": q["id"], "ts": q["ts"], "sql": sql}) + "\n")
    return path


class IcebergCopies:
    """Iceberg tables ``ns.<name>`` in the workspace catalog of ``home`` holding ``data``
    written as one append per ``file_rows`` rows (pyiceberg 0.x writes one file per append
    under its 512 MiB target)."""

    def __init__(self, home: Path, data: pa.Table, file_rows: int) -> None:
        self.catalog = iceberg.workspace_catalog(str(home))
        self.catalog.create_namespace_if_not_exists("ns")
        self.data, self.file_rows = data, file_rows

    def copy(self, name: str) -> str:
        tbl = self.catalog.create_table(f"ns.{name}", schema=self.data.schema)
        for i in range(0, self.data.num_rows, self.file_rows):
            tbl.append(self.data.slice(i, self.file_rows))
        return f"ns.{name}"

    def live_files(self, identifier: str) -> dict[str, int]:
        """{path: bytes} of the table's current snapshot."""
        files = self.catalog.load_table(identifier).inspect.files()
        return dict(zip(files.column("file_path").to_pylist(),
                        files.column("file_size_in_bytes").to_pylist()))

    def sort(self, identifier: str) -> None:
        """Overwrite the table sorted by ``l_shipdate``, files of the input's mean size
        (``write.target-file-size-bytes``; what Iceberg's sort strategy does)."""
        files = self.live_files(identifier)
        target = int(sum(files.values()) / len(files))
        tbl = self.catalog.load_table(identifier)
        with tbl.transaction() as tx:
            tx.set_properties({"write.target-file-size-bytes": str(target)})
        con = duckdb.connect()
        con.execute("SET threads=2")
        paths = "[" + ", ".join(sql_literal(p.removeprefix("file://")) for p in files) + "]"
        rows = con.sql(f"SELECT * FROM read_parquet({paths}) ORDER BY l_shipdate").fetch_arrow_table()
        con.close()
        self.catalog.load_table(identifier).overwrite(rows.cast(self.data.schema))
