"""The demo's query log: a workload that makes WAIR's ideas visible on the demo table.

The sample log of :mod:`engine.scenarios.tpch` is a steady TPC-H mix: mostly ``l_shipdate``
ranges, so every WAIR group is "sort l_shipdate". The demo log adds what a real workload
has and what section 4.4's hybrid layouts (savings signatures + DBSCAN) exist for:

* **hot and cold ranges**: most date ranges start in the recent months of the data (Zipf,
  alpha 2, WAIR's local workload), the rest anywhere (its global workload);
* **a shift between two date columns**: over the log's weeks the share of ``l_commitdate``
  filters grows and the share of ``l_shipdate`` filters shrinks (WAIR's periods P5/P6
  move the workload the same way); the commit-date filters look at the oldest era of the
  data and the ship-date-only ones at the newest, so each column's hot partitions differ;
* **an independent second predicate column**: ``l_suppkey`` ranges, alone and together
  with a ship-date range on the oldest ship dates. Supplier keys are uniform in every micro-partition (ingestion
  follows the order date), so every partition is a boundary partition of such a filter.

A partition then owes its saving to ship-date filters alone (a sort on ``l_shipdate``),
to ship-date and supplier filters together (a Hilbert curve over both), to commit-date
filters (a sort on ``l_commitdate``) or to many columns at once (a Qd-tree). Ranges are
read from the data's Parquet footer, so they fit any scale; the log is deterministic for
a seed.

The log is as busy as a dashboard table: :data:`DEMO_QUERIES_PER_DAY` queries a day over
:data:`DEMO_DAYS` days by default. Most of them (:data:`DASHBOARD_SHARE`) are dashboard
panels refreshed again and again: :data:`PANELS` fixed statements per template, each on a
hot range drawn once per log, so a panel's SQL text is the same at every refresh (the
importer parses each distinct text once). The rest are ad hoc queries drawn one by one
(hot with probability ``local_share``, else anywhere). Both follow the template mix of
:data:`MIX`, so the shift to ``l_commitdate`` moves the dashboards too. Arrival times are
uniform over the days, so any day holds about the daily rate.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from typing import Any

import pyarrow.parquet as pq

from engine.core.errors import InvalidParameterError
from engine.scenarios import tpch

#: days the demo log covers
DEMO_DAYS = 28
#: queries a day in the demo log by default: a busy dashboard table
DEMO_QUERIES_PER_DAY = 2_000
#: the demo log's default size (``layout-advisor demo --queries``)
DEMO_LOG_QUERIES = DEMO_QUERIES_PER_DAY * DEMO_DAYS
#: share of the queries that are dashboard refreshes (the rest are ad hoc)
DASHBOARD_SHARE = 0.85
#: fixed statements (panels) per template on the dashboards
PANELS = 3

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
MIX = (("ship", 0.44, 0.38), ("ship_supplier", 0.30, 0.26), ("supplier", 0.08, 0.02),
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
                  start: str = "2024-03-04T08:00:00+00:00", days: float = DEMO_DAYS,
                  local_share: float = 0.9, dashboard_share: float = DASHBOARD_SHARE
                  ) -> list[dict]:
    """The demo's query log for the lineitem Parquet ``data``: [{"id", "ts", "sql",
    "template", "source"}], timestamps ascending over ``days``; ``source`` is "dashboard"
    (one of the :data:`PANELS` fixed statements of its template) or "adhoc".

    >>> make_demo_log("missing.parquet", count=0)
    Traceback (most recent call last):
    ...
    engine.core.errors.InvalidParameterError: query count must be positive, got 0
    """
    if count <= 0:
        raise InvalidParameterError(f"query count must be positive, got {count}")
    if not 0.0 <= dashboard_share <= 1.0:
        raise InvalidParameterError(f"dashboard share must be within [0, 1], got {dashboard_share}")
    rng = random.Random(seed)
    bounds = column_bounds(data, ("l_shipdate", "l_commitdate", "l_suppkey", "l_partkey"))
    panels = dashboard_panels(bounds, seed)
    t0 = dt.datetime.fromisoformat(start)
    offsets = sorted(rng.random() * days * 86400 for _ in range(count))
    names = [name for name, _, _ in MIX]
    out = []
    for k, offset in enumerate(offsets):
        kind = rng.choices(names, weights=_weights(k / max(count - 1, 1)))[0]
        if rng.random() < dashboard_share:
            sql, source = panels[kind][rng.randrange(PANELS)], "dashboard"
        else:
            sql, source = _render(kind, rng, bounds, local_share), "adhoc"
        ts = (t0 + dt.timedelta(seconds=round(offset))).isoformat()
        out.append({"id": f"d{k + 1:06d}", "ts": ts, "sql": sql, "template": kind,
                    "source": source})
    return out


def dashboard_panels(bounds: dict, seed: int = 11) -> dict[str, list[str]]:
    """The dashboards' fixed statements: :data:`PANELS` per template of :data:`MIX`, each
    on a hot range (``local_share`` 1), drawn once for the log's ``seed``."""
    rng = random.Random(f"panels-{seed}")
    return {name: [_render(name, rng, bounds, 1.0) for _ in range(PANELS)] for name, _, _ in MIX}


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
    (the newest orders' partitions), ship-date-and-supplier filters and commit-date filters
    (with four more columns) on the oldest; supplier filters touch every partition."""
    span = rng.choice((30, 60, 90))
    ship_lo, ship_hi = bounds["l_shipdate"]
    commit_lo, commit_hi = bounds["l_commitdate"]
    supp_lo, supp_hi = (int(v) for v in bounds["l_suppkey"])
    if kind == "ship":
        a = _start(rng, ship_lo, ship_hi, span, 1.0, local_share)
        return tpch.Q1.format(a=a.isoformat(), days=span)
    if kind == "ship_supplier":
        a = _start(rng, ship_lo, ship_hi, span, 0.0, local_share)
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
