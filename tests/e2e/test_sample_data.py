"""The committed demo table and query log, and the scripts that make them."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.scenarios import demo_log, tpch
from engine.spark import tpch_data
from engine.spark.ingest import DEMO_TARGET_ROWS

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "lineitem.parquet"
QUERIES = ROOT / "sample_data" / "lineitem_queries.jsonl"
COLUMNS = ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
           "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate",
           "l_receiptdate", "l_shipinstruct", "l_shipmode", "o_orderdate"]


def check_lineitem(path: Path, max_gap: int = 1000) -> None:
    """TPC-H rules after WAIR's widening, checked with DuckDB over the whole file."""
    con = duckdb.connect()
    stats = con.execute(f"""
        SELECT count(*),
               min(l_shipdate - o_orderdate), max(l_shipdate - o_orderdate),
               min(l_receiptdate - l_shipdate), max(l_receiptdate - l_shipdate),
               min(l_commitdate - o_orderdate),
               count(*) FILTER (WHERE (l_shipdate > DATE '1995-06-17') <> (l_linestatus = 'O')),
               count(*) FILTER (WHERE (l_receiptdate > DATE '1995-06-17') <> (l_returnflag = 'N')),
               count(DISTINCT l_shipdate - o_orderdate)
        FROM read_parquet('{path}')""").fetchone()
    rows, gap_lo, gap_hi, rec_lo, rec_hi, commit_lo, bad_status, bad_flag, gaps = stats
    assert rows > 0
    assert gap_lo >= 1 and gap_hi <= max_gap
    assert gaps > 0.9 * min(max_gap, rows)  # the gap really spreads over 1..max_gap
    assert 1 <= rec_lo and rec_hi <= 30  # TPC-H: receipt 1..30 days after shipping
    assert commit_lo >= 1  # never committed before the order
    assert bad_status == 0 and bad_flag == 0
    order = con.execute(f"SELECT o_orderdate FROM read_parquet('{path}')").fetchnumpy()["o_orderdate"]
    assert (np.diff(order.astype("datetime64[D]").astype(np.int64)) >= 0).all()  # ingestion order


def test_committed_demo_table():
    assert DATA.stat().st_size < 12 * 2**20
    meta = pq.ParquetFile(DATA)
    assert [c for c in COLUMNS if c not in meta.schema_arrow.names] == []
    assert 150_000 <= meta.metadata.num_rows <= 300_000
    check_lineitem(DATA)
    # about 100 micro-partitions at the demo size
    assert 80 <= -(-meta.metadata.num_rows // DEMO_TARGET_ROWS) <= 150


def _ship_ranges(queries):
    pat = re.compile(r"l_shipdate >= DATE '(\S+)' AND l_shipdate < DATE '\S+' \+ INTERVAL '(\d+)' (DAY|MONTH)")
    for q in queries:
        m = pat.search(q["sql"])
        if m:
            a = dt.date.fromisoformat(m.group(1))
            n = int(m.group(2))
            b = a + dt.timedelta(days=n) if m.group(3) == "DAY" else _add_months(a, n)
            yield a, b


def _add_months(d: dt.date, n: int) -> dt.date:
    y, m = divmod(d.month - 1 + n, 12)
    return d.replace(year=d.year + y, month=m + 1)


def test_committed_query_log():
    queries = [json.loads(line) for line in QUERIES.read_text().splitlines()]
    assert 200 <= len(queries) <= 600
    assert all(set(q) >= {"id", "ts", "sql"} for q in queries)
    assert len({q["id"] for q in queries}) == len(queries)
    times = [dt.datetime.fromisoformat(q["ts"]) for q in queries]
    assert times == sorted(times) and dt.timedelta(days=14) < times[-1] - times[0] < dt.timedelta(days=35)
    mentions = Counter(c for q in queries for c in ("l_shipdate", "l_commitdate", "l_receiptdate",
                                                      "l_quantity", "l_discount") if c in q["sql"])
    assert mentions["l_shipdate"] > 0.5 * len(queries)
    assert all(mentions[c] > 0 for c in ("l_commitdate", "l_receiptdate", "l_quantity", "l_discount"))
    # every single-table query runs on the sample data (DuckDB), and returns rows
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineitem AS SELECT * FROM read_parquet('{DATA}')")
    single = [q for q in queries if "orders" not in q["sql"] and "part" not in q["sql"].replace("l_partkey", "")]
    assert len(single) > 0.6 * len(queries)
    for q in single:
        con.execute(q["sql"]).fetchall()


def test_dashboard_story_shipdate_ranges_hit_many_boundary_partitions():
    """Ingested in o_orderdate order, a ship-date range scans many 2,000-row partitions, all
    of them boundary partitions; sorted on l_shipdate it would scan a handful."""
    table = pq.read_table(DATA, columns=["l_shipdate"])
    n = table.num_rows
    chunks = [table.slice(i, DEMO_TARGET_ROWS)["l_shipdate"] for i in range(0, n, DEMO_TARGET_ROWS)]
    zones = [(pc.min(c).as_py(), pc.max(c).as_py()) for c in chunks]
    ordered = pc.sort_indices(table["l_shipdate"])
    srt = table.take(ordered)["l_shipdate"]
    sorted_zones = [(pc.min(srt.slice(i, DEMO_TARGET_ROWS)).as_py(), pc.max(srt.slice(i, DEMO_TARGET_ROWS)).as_py())
                    for i in range(0, n, DEMO_TARGET_ROWS)]
    queries = [json.loads(line) for line in QUERIES.read_text().splitlines()]
    scanned, sorted_scanned, boundary = [], [], []
    for a, b in _ship_ranges(queries):
        hit = [lo < b and hi >= a for lo, hi in zones]
        inside = [lo >= a and hi < b for lo, hi in zones]
        scanned.append(np.mean(hit))
        boundary.append(sum(h and not i for h, i in zip(hit, inside)) / max(sum(hit), 1))
        sorted_scanned.append(np.mean([lo < b and hi >= a for lo, hi in sorted_zones]))
    assert len(scanned) > 100
    assert np.mean(scanned) > 0.3 and np.mean(sorted_scanned) < 0.06
    assert np.mean(scanned) > 8 * np.mean(sorted_scanned)
    assert np.mean(boundary) > 0.95


def test_make_tpch_script_end_to_end(tmp_path):
    out = tmp_path / "li.parquet"
    proc = subprocess.run([sys.executable, str(ROOT / "sample_data" / "make_tpch.py"), "--scale", "0.002",
                           "--out", str(out), "--no-comment", "--max-gap", "500"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "l_comment" not in pq.ParquetFile(out).schema_arrow.names
    check_lineitem(out, max_gap=500)
    again = tmp_path / "again.parquet"
    tpch_data.make_lineitem(0.002, again, max_gap=500, comment=False)
    assert pq.read_table(again).equals(pq.read_table(out))  # deterministic


def test_make_queries_is_deterministic_and_fits_the_data(tmp_path):
    out1, out2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (out1, out2):
        proc = subprocess.run([sys.executable, str(ROOT / "sample_data" / "make_queries.py"),
                               "--data", str(DATA), "--count", "50", "--seed", "3", "--out", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    assert out1.read_text() == out2.read_text()
    lo, hi = tpch.date_bounds(DATA)["l_shipdate"]
    for a, b in _ship_ranges(json.loads(line) for line in out1.read_text().splitlines()):
        assert lo.replace(day=1) <= a and b <= hi + dt.timedelta(days=31)  # months start on the 1st
    other = tpch.make_queries(50, seed=4, data=DATA)
    assert [q["sql"] for q in other] != [json.loads(line)["sql"] for line in out1.read_text().splitlines()]
    with pytest.raises(Exception):
        tpch.make_queries(0)


def test_demo_log_shifts_to_commit_dates_and_filters_suppliers():
    """The demo log (``layout-advisor demo``): deterministic, every statement runs on the
    data, ship-date filters give way to commit-date ones over the weeks, and supplier-key
    filters (uniform in every partition) run throughout."""
    log = demo_log.make_demo_log(DATA, count=1000)
    assert log == demo_log.make_demo_log(DATA, count=1000)
    times = [dt.datetime.fromisoformat(q["ts"]) for q in log]
    assert times == sorted(times)
    first, last = log[:250], log[-250:]

    def share(queries, column):
        return sum(column in q["sql"] for q in queries) / len(queries)

    deals = [sum(q["template"] == "commit_deals" for q in part) / len(part) for part in (first, last)]
    assert deals[1] > deals[0] + 0.15  # the workload moves to l_commitdate (with four more columns)
    assert min(share(first, "l_suppkey"), share(last, "l_suppkey")) > 0.3
    # hot ranges: ship-date filters mostly in the newest year of ship dates, commit-date
    # filters mostly in the oldest year of commit dates
    bounds = demo_log.column_bounds(DATA, ("l_shipdate", "l_commitdate"))
    ship = [dt.date.fromisoformat(m) for q in log if q["template"] == "ship"
            for m in re.findall(r"l_shipdate >= DATE '(\S+)'", q["sql"])]
    commit = [dt.date.fromisoformat(m) for q in log if q["template"] == "commit_deals"
              for m in re.findall(r"l_commitdate >= DATE '(\S+)'", q["sql"])]
    year = dt.timedelta(days=365)
    assert np.mean([d > bounds["l_shipdate"][1] - year for d in ship]) > 0.8
    assert np.mean([d < bounds["l_commitdate"][0] + year for d in commit]) > 0.8
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineitem AS SELECT * FROM read_parquet('{DATA}')")
    for sql in sorted({q["sql"] for q in log if q["source"] == "dashboard"}) + [
            q["sql"] for q in log[::25]]:
        con.execute(sql).fetchall()


def test_docker_image_starts_on_the_committed_sample():
    """The image's default command is the fast start (`demo --sample`, seconds, the
    committed 200k rows); the README's Docker line says how to get the SF 1 demo."""
    cmd = next(line for line in (ROOT / "Dockerfile").read_text().splitlines()
               if line.startswith("CMD "))
    args = json.loads(cmd[len("CMD "):])
    assert args[:2] == ["layout-advisor", "demo"] and "--sample" in args
    assert args[args.index("--address") + 1] == "0.0.0.0"
    readme = (ROOT / "README.md").read_text()
    docker = readme[readme.index("In Docker:"):][:400]
    assert "--sample" in docker and "layout-advisor demo --port 8501 --address 0.0.0.0" in docker
