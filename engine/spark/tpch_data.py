"""TPC-H sample data with WAIR's widened ship-date gap (section 6.2.1, footnote 6).

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

DuckDB does the join and the rewrite, so this lives in the layer that may import it; the
query log over this data is :mod:`engine.scenarios.tpch`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import duckdb

from engine.core.errors import EnvironmentCheckError, InvalidParameterError
from engine.scenarios.tpch import TPCH_CURRENT_DATE, WAIR_MAX_GAP
from engine.workload.sql.render import sql_literal

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
        gap = f"(1 + {_mix(int(seed))} % {int(max_gap)})::INTEGER"
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
                    FROM read_parquet({sql_literal(lineitem)}) l
                    JOIN read_parquet({sql_literal(orders)}) o ON l.l_orderkey = o.o_orderkey
                  )
                  SELECT {select} FROM j
                  ORDER BY j.o_orderdate, j.l_orderkey, j.l_linenumber
                ) TO {sql_literal(str(out))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)
            """
            con.execute(sql)
            rows = con.execute(f"SELECT count(*) FROM read_parquet({sql_literal(str(out))})").fetchone()[0]
        finally:
            con.close()
    result = {"path": str(out), "rows": int(rows), "bytes": out.stat().st_size,
              "seconds": round(time.time() - start, 2)}
    say(f"wrote {result['rows']:,} rows ({result['bytes'] / 2**20:.1f} MiB) to {out}")
    return result
