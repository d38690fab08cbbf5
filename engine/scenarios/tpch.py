"""TPC-H sample data and a TPC-H-shaped query log, as in WAIR's evaluation (section 6.2.1).

``make_lineitem`` generates real TPC-H ``lineitem`` and ``orders`` with ``tpchgen-cli``
(offline; DuckDB's tpch extension cannot be downloaded here), joins them for
``o_orderdate``, and orders the rows by ``o_orderdate``: the ingestion order of WAIR's
monthly batches. WAIR's footnote 6 widens the gap between ``o_orderdate`` and
``l_shipdate`` from TPC-H's 1..121 days to up to 1,000 days "to create a larger mismatch
between ingestion order and query predicates": every micro-partition then spans years of
ship dates, which is the clustering problem the advisor exists for.

How the other dates follow (the footnote is silent; this is our reading): TPC-H draws
``l_commitdate`` and ``l_receiptdate`` relative to the ship date's neighbourhood
(commit = order + 30..90, receipt = ship + 1..30), and Q12 compares them with each other.
By default both are shifted by the same delta as the ship date, so each line keeps TPC-H's
commit/ship/receipt relationships (Q12's predicates keep their meaning) and
``l_commitdate`` becomes as poorly clustered under ``o_orderdate`` ingestion as
``l_shipdate`` (WAIR's periods P5/P6 move the workload to it); a shifted commit date is
never earlier than the day after the order (about 2% of lines are clamped). ``commit_mode="tpch"``
keeps TPC-H's commit date instead. ``l_linestatus`` and ``l_returnflag`` are recomputed
from the new dates with TPC-H's rules (CURRENTDATE = 1995-06-17) so Q1 stays consistent.

The gap is drawn uniformly in 1..max_gap from a hash of (l_orderkey, l_linenumber, seed):
deterministic, independent of the engine's hash function version.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

from engine.core.errors import EnvironmentCheckError, InvalidParameterError

TPCH_CURRENT_DATE = "1995-06-17"
TPCH_MAX_GAP = 121
WAIR_MAX_GAP = 1000
DEMO_SCALE = 0.033  # ~200k lineitem rows: ~100 micro-partitions of 2,000 rows
DEMO_QUERIES = 300
LINEITEM_COLUMNS = (
    "l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
    "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate",
    "l_receiptdate", "l_shipinstruct", "l_shipmode",
)


def tpchgen_binary() -> str:
    """The ``tpchgen-cli`` next to this Python (the venv), else on PATH."""
    local = Path(sys.executable).parent / "tpchgen-cli"
    if local.exists():
        return str(local)
    found = shutil.which("tpchgen-cli")
    if not found:
        raise EnvironmentCheckError("tpchgen-cli not found: pip install tpchgen-cli")
    return found


def _mix(seed: int) -> str:
    """SQL for a deterministic 31-bit hash of (l_orderkey, l_linenumber, seed)."""
    return (f"((((l_orderkey::HUGEINT * 1103515245 + l_linenumber * 40503 + {seed * 7919 + 12345}) "
            f"% 2147483647) * 48271 + {seed}) % 2147483647)")


def make_lineitem(scale: float, out: str | os.PathLike, max_gap: int = WAIR_MAX_GAP, seed: int = 1,
                  comment: bool = True, commit_mode: str = "shift", threads: int = 2,
                  progress: Callable[[str], None] | None = None) -> dict:
    """Generate widened-gap ``lineitem`` (+ ``o_orderdate``) ordered by ``o_orderdate``.

    Writes one Parquet file (DuckDB with order preserved: one file, so the ingestion
    order is the row order). Returns {"path", "rows", "bytes", "seconds"}.
    """
    import time

    import duckdb

    if scale <= 0:
        raise InvalidParameterError(f"scale must be positive, got {scale}")
    if not 1 <= max_gap <= 10_000:
        raise InvalidParameterError(f"max gap must be within 1..10000 days, got {max_gap}")
    if commit_mode not in ("shift", "tpch"):
        raise InvalidParameterError("commit mode must be 'shift' or 'tpch'")
    say = progress or (lambda _m: None)
    start = time.time()
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tpchgen-") as tmp:
        say(f"generating TPC-H lineitem and orders at scale {scale} with tpchgen-cli")
        subprocess.run([tpchgen_binary(), "parquet", "-s", str(scale), "--tables", "lineitem,orders",
                        "-o", tmp], check=True, capture_output=True)
        say(f"joining o_orderdate and widening the l_shipdate gap to 1..{max_gap} days (DuckDB)")
        gap = f"(1 + {_mix(seed)} % {max_gap})::INTEGER"
        delta = "(j.new_ship - j.l_shipdate)::INTEGER"
        commit = (f"GREATEST(j.l_commitdate + {delta}, j.o_orderdate + 1)" if commit_mode == "shift"
                  else "j.l_commitdate")
        receipt = f"(j.l_receiptdate + {delta})"
        keep = [c for c in LINEITEM_COLUMNS if c not in (
            "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate")]
        select = ", ".join(
            [f"j.{c}" for c in keep[:8]]
            + [f"CASE WHEN {receipt} <= DATE '{TPCH_CURRENT_DATE}' THEN "
               f"(CASE WHEN j.l_returnflag IN ('R', 'A') THEN j.l_returnflag "
               f"WHEN {_mix(seed + 1)} % 2 = 0 THEN 'R' ELSE 'A' END) ELSE 'N' END AS l_returnflag",
               f"CASE WHEN j.new_ship > DATE '{TPCH_CURRENT_DATE}' THEN 'O' ELSE 'F' END AS l_linestatus",
               "j.new_ship AS l_shipdate", f"{commit} AS l_commitdate", f"{receipt} AS l_receiptdate"]
            + [f"j.{c}" for c in keep[8:]]
            + (["j.l_comment"] if comment else [])
            + ["j.o_orderdate"])
        con = duckdb.connect()
        try:
            con.execute(f"SET threads = {int(threads)}")
            con.execute("SET preserve_insertion_order = true")
            con.execute("SET enable_progress_bar = false")
            lineitem = os.path.join(tmp, "lineitem.parquet")
            orders = os.path.join(tmp, "orders.parquet")
            sql = f"""
                COPY (
                  WITH j AS (
                    SELECT l.*, o.o_orderdate, (o.o_orderdate + {gap}) AS new_ship
                    FROM read_parquet('{lineitem}') l
                    JOIN read_parquet('{orders}') o ON l.l_orderkey = o.o_orderkey
                  )
                  SELECT {select} FROM j
                  ORDER BY j.o_orderdate, j.l_orderkey, j.l_linenumber
                ) TO '{out}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)
            """
            con.execute(sql)
            rows = con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]
        finally:
            con.close()
    result = {"path": str(out), "rows": int(rows), "bytes": out.stat().st_size,
              "seconds": round(time.time() - start, 2)}
    say(f"wrote {result['rows']:,} rows ({result['bytes'] / 2**20:.1f} MiB) to {out}")
    return result


# ---------------------------------------------------------------------- queries
Q1 = """SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty, SUM(l_extendedprice) AS sum_base_price,
  SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, AVG(l_quantity) AS avg_qty,
  AVG(l_discount) AS avg_disc, COUNT(*) AS count_order
FROM lineitem
WHERE l_shipdate >= DATE '{a}' AND l_shipdate < DATE '{a}' + INTERVAL '{days}' DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus"""

Q6 = """SELECT SUM(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE '{a}' AND l_shipdate < DATE '{a}' + INTERVAL '{months}' MONTH
  AND l_discount BETWEEN {disc} - 0.01 AND {disc} + 0.01 AND l_quantity < {qty}"""

Q12 = """SELECT l_shipmode,
  SUM(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count,
  SUM(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END) AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN ('{m1}', '{m2}')
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE '{a}' AND l_receiptdate < DATE '{a}' + INTERVAL '{months}' MONTH
GROUP BY l_shipmode
ORDER BY l_shipmode"""

Q14 = """SELECT 100.00 * SUM(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
  / SUM(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey AND l_shipdate >= DATE '{a}' AND l_shipdate < DATE '{a}' + INTERVAL '1' MONTH"""

COMMIT_SCAN = """SELECT l_shipmode, COUNT(*) AS late_lines, SUM(l_extendedprice) AS late_value
FROM lineitem
WHERE l_commitdate BETWEEN DATE '{a}' AND DATE '{b}' AND l_receiptdate > l_commitdate
GROUP BY l_shipmode
ORDER BY late_lines DESC"""

SHIP_COMMIT = """SELECT l_linestatus, COUNT(*) AS lines, AVG(l_discount) AS avg_disc
FROM lineitem
WHERE l_shipdate BETWEEN DATE '{a}' AND DATE '{b}' AND l_commitdate BETWEEN DATE '{c}' AND DATE '{d}'
GROUP BY l_linestatus"""

QTY_DISC = """SELECT COUNT(*) AS lines, AVG(l_extendedprice) AS avg_price
FROM lineitem
WHERE l_quantity BETWEEN {q1} AND {q2} AND l_discount >= {disc}"""

# (template, weight): mostly l_shipdate, as in WAIR's TPC-H setup
TEMPLATE_MIX = (("q1", 0.22), ("q6", 0.22), ("q14", 0.18), ("q12", 0.12), ("commit", 0.12),
                ("ship_commit", 0.08), ("qty_disc", 0.06))
SHIP_MODES = ("AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK")


def date_bounds(data: str | os.PathLike | None) -> dict[str, tuple[dt.date, dt.date]]:
    """min/max of the date columns from a lineitem Parquet footer (TPC-H defaults otherwise)."""
    cols = ("l_shipdate", "l_commitdate", "l_receiptdate", "o_orderdate")
    if data is None or not Path(data).exists():
        lo, hi = dt.date(1992, 1, 2), dt.date(1998, 8, 2)
        return {"l_shipdate": (lo, hi + dt.timedelta(days=WAIR_MAX_GAP)),
                "l_commitdate": (lo, hi + dt.timedelta(days=WAIR_MAX_GAP)),
                "l_receiptdate": (lo, hi + dt.timedelta(days=WAIR_MAX_GAP + 30)),
                "o_orderdate": (lo, hi)}
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(str(data)).metadata
    names = [meta.schema.column(j).name for j in range(meta.num_columns)]
    out = {}
    for col in cols:
        j = names.index(col)
        stats = [meta.row_group(r).column(j).statistics for r in range(meta.num_row_groups)]
        out[col] = (min(s.min for s in stats), max(s.max for s in stats))
    return out


def _zipf_month(rng: random.Random, months: int, alpha: float = 2.0) -> int:
    weights = [1.0 / (k ** alpha) for k in range(1, months + 1)]
    return rng.choices(range(months), weights=weights)[0]


def _pick_start(rng: random.Random, lo: dt.date, hi: dt.date, span: int, recent: dt.date,
                local_share: float) -> dt.date:
    """A range start: skewed to recent months (Zipf, alpha 2) or uniform over the domain."""
    last = hi - dt.timedelta(days=span)
    if rng.random() < local_share:
        month = _zipf_month(rng, 24)
        start = recent - dt.timedelta(days=30 * (month + 1)) + dt.timedelta(days=rng.randrange(30))
    else:
        start = lo + dt.timedelta(days=rng.randrange(max((last - lo).days, 1)))
    return min(max(start, lo), last)


def make_queries(count: int = DEMO_QUERIES, seed: int = 7, data: str | os.PathLike | None = None,
                 start: str = "2024-03-04T08:00:00+00:00", days: float = 21.0,
                 local_share: float = 0.6) -> list[dict]:
    """A deterministic query log: [{"id", "ts", "sql", "template"}], timestamps ascending.

    Ranges are realistic for the data: most are one to three months wide (WAIR's default
    selectivity is a two-month interval), starts are either skewed toward recent months
    (``local_share``, Zipf with alpha 2 as in WAIR's local workload) or uniform over the
    whole range (its global workload).
    """
    if count <= 0:
        raise InvalidParameterError(f"query count must be positive, got {count}")
    rng = random.Random(seed)
    bounds = date_bounds(data)
    recent = bounds["o_orderdate"][1]
    t0 = dt.datetime.fromisoformat(start)
    offsets = sorted(rng.random() * days * 86400 for _ in range(count))
    names = [n for n, _ in TEMPLATE_MIX]
    weights = [w for _, w in TEMPLATE_MIX]
    out = []
    for k, offset in enumerate(offsets):
        kind = rng.choices(names, weights=weights)[0]
        ts = (t0 + dt.timedelta(seconds=round(offset))).isoformat()
        sql = _render(kind, rng, bounds, recent, local_share)
        out.append({"id": f"q{k + 1:04d}", "ts": ts, "sql": sql, "template": kind})
    return out


def _render(kind: str, rng: random.Random, bounds: dict, recent: dt.date, local_share: float) -> str:
    ship_lo, ship_hi = bounds["l_shipdate"]
    if kind == "q1":
        span = rng.choice((30, 45, 60, 60, 90))
        a = _pick_start(rng, ship_lo, ship_hi, span, recent, local_share)
        return Q1.format(a=a.isoformat(), days=span)
    if kind == "q6":
        months = rng.choice((1, 2, 2, 3))
        a = _pick_start(rng, ship_lo, ship_hi, 31 * months, recent, local_share).replace(day=1)
        return Q6.format(a=a.isoformat(), months=months, disc=f"0.0{rng.randint(2, 9)}",
                         qty=rng.choice((24, 25)))
    if kind == "q14":
        a = _pick_start(rng, ship_lo, ship_hi, 31, recent, local_share).replace(day=1)
        return Q14.format(a=a.isoformat())
    if kind == "q12":
        lo, hi = bounds["l_receiptdate"]
        months = rng.choice((1, 2, 3))
        a = _pick_start(rng, lo, hi, 31 * months, recent, local_share).replace(day=1)
        m1, m2 = rng.sample(SHIP_MODES, 2)
        return Q12.format(a=a.isoformat(), months=months, m1=m1, m2=m2)
    if kind == "commit":
        lo, hi = bounds["l_commitdate"]
        span = rng.choice((30, 60, 60, 90))
        a = _pick_start(rng, lo, hi, span, recent, local_share)
        return COMMIT_SCAN.format(a=a.isoformat(), b=(a + dt.timedelta(days=span - 1)).isoformat())
    if kind == "ship_commit":
        span = rng.choice((60, 90, 120))
        a = _pick_start(rng, ship_lo, ship_hi, span, recent, local_share)
        c = a + dt.timedelta(days=rng.randint(-30, 30))
        return SHIP_COMMIT.format(a=a.isoformat(), b=(a + dt.timedelta(days=span)).isoformat(),
                                  c=c.isoformat(), d=(c + dt.timedelta(days=span)).isoformat())
    if kind == "qty_disc":
        q1 = rng.randint(1, 40)
        return QTY_DISC.format(q1=q1, q2=q1 + rng.randint(3, 10), disc=f"0.0{rng.randint(5, 9)}")
    raise InvalidParameterError(f"unknown template {kind!r}")


def write_jsonl(queries: Iterable[dict], out: str | os.PathLike) -> int:
    """Write {"id", "ts", "sql"} lines (the template name is kept as a hint); returns the count."""
    n = 0
    with open(out, "w", encoding="utf-8") as handle:
        for q in queries:
            handle.write(json.dumps({"id": q["id"], "ts": q["ts"], "sql": q["sql"],
                                     "template": q.get("template")}) + "\n")
            n += 1
    return n


def scale_for_rows(rows: int) -> float:
    """Scale factor giving about ``rows`` lineitem rows (SF 1 = 6,001,215 rows)."""
    return max(0.001, math.ceil(rows / 6_001_215 * 10_000) / 10_000)


def default_demo_paths() -> dict[str, Any]:
    """Where the committed demo files live (repository checkout)."""
    root = Path(__file__).resolve().parents[2] / "sample_data"
    return {"lineitem": root / "lineitem.parquet", "queries": root / "lineitem_queries.jsonl"}
