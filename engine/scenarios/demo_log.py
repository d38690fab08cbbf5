"""The demo's query log: a workload that makes WAIR's ideas visible on the demo table.

The sample log of :mod:`engine.scenarios.tpch` is a steady TPC-H mix: mostly ``l_shipdate``
ranges, so every WAIR group is "sort l_shipdate". The demo log adds what a real workload
has and what section 4.4's hybrid layouts (savings signatures + DBSCAN) exist for:

* **hot and cold ranges**: most date ranges start in the recent months of the data (Zipf,
  alpha 2, WAIR's local workload), the rest anywhere (its global workload);
* **a shift between two date columns**: over the log's weeks the share of ``l_commitdate``
  filters grows and the share of ``l_shipdate`` filters shrinks (WAIR's periods P5/P6
  move the workload the same way); the commit-date filters look at an older era of the
  data than the ship-date ones, so each column's hot partitions differ;
* **an independent second predicate column**: ``l_suppkey`` ranges, alone and together
  with a ship-date range. Supplier keys are uniform in every micro-partition (ingestion
  follows the order date), so every partition is a boundary partition of such a filter.

A partition then owes its saving to ship-date filters alone (a sort on ``l_shipdate``),
to ship-date and supplier filters together (a Hilbert curve over both), to commit-date
filters (a sort on ``l_commitdate``) or to many columns at once (a Qd-tree). Ranges are
read from the data's Parquet footer, so they fit any scale; the log is deterministic for
a seed.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from typing import Any

import pyarrow.parquet as pq

from engine.core.errors import InvalidParameterError
from engine.scenarios import tpch

DEMO_LOG_QUERIES = 600

SUPPLIER_SCAN = """SELECT l_suppkey, COUNT(*) AS lines, SUM(l_extendedprice) AS value
FROM lineitem
WHERE l_suppkey BETWEEN {s1} AND {s2}
GROUP BY l_suppkey"""

SHIP_SUPPLIER = """SELECT l_suppkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE '{a}' AND l_shipdate < DATE '{a}' + INTERVAL '{days}' DAY
  AND l_suppkey BETWEEN {s1} AND {s2}
GROUP BY l_suppkey"""

COMMIT_DEALS = """SELECT l_suppkey, SUM(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_commitdate >= DATE '{a}' AND l_commitdate < DATE '{a}' + INTERVAL '{days}' DAY
  AND l_discount BETWEEN {disc} - 0.01 AND {disc} + 0.01 AND l_quantity < {qty}
  AND l_suppkey BETWEEN {s1} AND {s2} AND l_partkey BETWEEN {p1} AND {p2}
GROUP BY l_suppkey"""

#: (template, weight at the start of the log, weight at its end): the date shift
MIX = (("ship", 0.40, 0.34), ("ship_supplier", 0.30, 0.26), ("supplier", 0.12, 0.06),
       ("commit_deals", 0.04, 0.34), ("commit", 0.14, 0.0))

#: hot ranges start within this many days of their end of the data
HOT_DAYS = 240


def column_bounds(data: str | os.PathLike, columns: tuple[str, ...]) -> dict[str, tuple[Any, Any]]:
    """min/max of ``columns`` from a Parquet footer (every row group's statistics)."""
    meta = pq.ParquetFile(str(data)).metadata
    names = [meta.schema.column(j).name for j in range(meta.num_columns)]
    out = {}
    for col in columns:
        if col not in names:
            raise InvalidParameterError(f"{data}: column {col} not found (the demo needs TPC-H lineitem)")
        j = names.index(col)
        stats = [meta.row_group(r).column(j).statistics for r in range(meta.num_row_groups)]
        out[col] = (min(s.min for s in stats), max(s.max for s in stats))
    return out


def _weights(progress: float) -> list[float]:
    """The template weights at ``progress`` (0 = first query, 1 = last): linear between."""
    return [start + (end - start) * progress for _, start, end in MIX]


def make_demo_log(data: str | os.PathLike, count: int = DEMO_LOG_QUERIES, seed: int = 11,
                  start: str = "2024-03-04T08:00:00+00:00", days: float = 28.0,
                  local_share: float = 0.9) -> list[dict]:
    """The demo's query log for the lineitem Parquet ``data``: [{"id", "ts", "sql",
    "template"}], timestamps ascending over ``days``.

    >>> make_demo_log("missing.parquet", count=0)
    Traceback (most recent call last):
    ...
    engine.core.errors.InvalidParameterError: query count must be positive, got 0
    """
    if count <= 0:
        raise InvalidParameterError(f"query count must be positive, got {count}")
    rng = random.Random(seed)
    bounds = column_bounds(data, ("l_shipdate", "l_commitdate", "l_suppkey", "l_partkey"))
    t0 = dt.datetime.fromisoformat(start)
    offsets = sorted(rng.random() * days * 86400 for _ in range(count))
    names = [name for name, _, _ in MIX]
    out = []
    for k, offset in enumerate(offsets):
        kind = rng.choices(names, weights=_weights(k / max(count - 1, 1)))[0]
        sql = _render(kind, rng, bounds, local_share)
        ts = (t0 + dt.timedelta(seconds=round(offset))).isoformat()
        out.append({"id": f"d{k + 1:04d}", "ts": ts, "sql": sql, "template": kind})
    return out


def _start(rng: random.Random, lo: dt.date, hi: dt.date, span: int, hot_at: float,
           local_share: float) -> dt.date:
    """A range start: hot (within :data:`HOT_DAYS` around the point ``hot_at`` of the
    column's domain, 0 = oldest, 1 = newest) with probability ``local_share``, else
    anywhere (cold)."""
    last = hi - dt.timedelta(days=span)
    if rng.random() < local_share:
        width = (last - lo).days
        center = lo + dt.timedelta(days=round(hot_at * width))
        start = center + dt.timedelta(days=rng.randrange(HOT_DAYS) - round(hot_at * HOT_DAYS))
    else:
        start = lo + dt.timedelta(days=rng.randrange(max((last - lo).days, 1)))
    return min(max(start, lo), last)


def _ranges(rng: random.Random, lo: int, hi: int, share: float) -> tuple[int, int]:
    """A key range covering about ``share`` of ``[lo, hi]``."""
    width = max(1, round((hi - lo) * share))
    first = rng.randint(lo, max(lo, hi - width))
    return first, first + width


def _render(kind: str, rng: random.Random, bounds: dict, local_share: float) -> str:
    """One query of template ``kind``. Ship-date filters are hot on the newest ship dates
    (the newest orders' partitions), ship-date-and-supplier filters on the middle ones,
    commit-date filters (with four more columns) on the oldest; supplier filters touch
    every partition."""
    span = rng.choice((30, 60, 90))
    ship_lo, ship_hi = bounds["l_shipdate"]
    commit_lo, commit_hi = bounds["l_commitdate"]
    supp_lo, supp_hi = (int(v) for v in bounds["l_suppkey"])
    if kind == "ship":
        a = _start(rng, ship_lo, ship_hi, span, 1.0, local_share)
        return tpch.Q1.format(a=a.isoformat(), days=span)
    if kind == "ship_supplier":
        a = _start(rng, ship_lo, ship_hi, span, 0.5, local_share)
        s1, s2 = _ranges(rng, supp_lo, supp_hi, 0.01)
        return SHIP_SUPPLIER.format(a=a.isoformat(), days=span, s1=s1, s2=s2)
    if kind == "supplier":
        s1, s2 = _ranges(rng, supp_lo, supp_hi, 0.01)
        return SUPPLIER_SCAN.format(s1=s1, s2=s2)
    if kind == "commit_deals":
        a = _start(rng, commit_lo, commit_hi, span, 0.0, local_share)
        s1, s2 = _ranges(rng, supp_lo, supp_hi, 0.2)
        p1, p2 = _ranges(rng, *(int(v) for v in bounds["l_partkey"]), 0.2)
        return COMMIT_DEALS.format(a=a.isoformat(), days=span, disc=f"0.0{rng.randint(2, 9)}",
                                   qty=rng.choice((24, 25)), s1=s1, s2=s2, p1=p1, p2=p2)
    if kind == "commit":
        a = _start(rng, commit_lo, commit_hi, span, 0.0, local_share)
        return tpch.COMMIT_SCAN.format(a=a.isoformat(), b=(a + dt.timedelta(days=span - 1)).isoformat())
    raise InvalidParameterError(f"unknown demo template {kind!r}")
