"""Scenario presets of WAIR section 6.2 with synthetic numpy data: ``tpch``, ``dsb``, ``mirrors``.

The data is generated in numpy from the benchmarks' distributions (no dbgen here), fully
determined by ``rows`` and ``seed``:

* ``tpch`` (6.2.1): TPC-H ``lineitem``, 72 monthly batches by ``o_orderdate``;
  ``l_shipdate = o_orderdate + U[1, 1000]`` days (the widened gap of footnote 6, instead
  of 121), ``l_commitdate = o_orderdate + U[30, 90]``, ``l_receiptdate = l_shipdate +
  U[1, 30]``. Within a month orders arrive in random date order (dbgen order), an order's
  lines together. Six periods of 12 batches: P1-P2 the initial pool (P2 runs queries as
  warm-up), reclustering from P3; shifting 25% in P2-P3, 75% from P4; ``l_commitdate`` in
  P5, a 2:1 ``l_shipdate``/``l_commitdate`` mix in P6. Two sub-workloads of the 8
  lineitem templates filtering the date (Q1, Q3, Q6, Q7, Q12, Q14, Q15, Q20): ``global``
  (uniform over the whole date range) and ``local`` (Zipf alpha = 2 toward recent months);
  selectivity two months (61 days). Oracle keys (section 6.3): ``l_shipdate`` in P3-P4,
  ``l_commitdate`` in P5, Hilbert over both in P6.
* ``dsb`` (6.2.2): a ``store_sales``-like fact table. The initial dataset (a third of the
  rows, as SF 240 of the final 720) arrives with the first batch as the benchmark's
  generator writes it: in ticket order, 8-16 lines a ticket sharing one sale date, the
  dates uniform over the whole six-year range, so every slice of it spans every date
  (``tpcgen-cli tpcds`` SF 1 ``store_sales``: every 2% slice spans all 1,827 dates). Then 72
  monthly refresh runs, each holding the sales of its month in random order within the
  month (as DSB's refresh runs insert the sales of their date range); P1-P2 expand the
  pool. ``initial_pool="refresh-runs"`` keeps the earlier variant without the initial
  dataset, whose pool is the first 24 refresh runs: the table then arrives clustered on
  the date, NR prunes 96% and no policy has anything to win, which measures what each
  policy spends for nothing. ``refresh_dates="spread"`` spreads every refresh run over
  the six-year range, where no reclustering-free layout prunes. 30 templates per batch,
  each a two-month ``ss_sold_date_sk`` window drawn from a Gaussian (sigma = 2 months)
  around a reference month that advances one month per batch, plus ranges on two or three
  other columns; 100% shifting. Oracle key ``ss_sold_date_sk``.
* ``mirrors`` (6.2.3): a web access log (``ts``, IPv4 as an integer, its /16 ``subnet``,
  ``status``, ``resp_bytes``, ``path_hash`` plus user agent and path payload), 120 daily
  batches in timestamp order, traffic Zipf-skewed over ~1000 active /16 subnets. Needle
  queries (unblocking tickets) on one /16 subnet chosen among the active ones (distinct
  IPs, user agents, paths), some also on a narrow recent time window (a few hours within
  the last week); about 0.1% selectivity. Four 30-day periods; the first month is the
  pool, reclustering from day 31; QD repartitions at each month end.

* ``tpch2``: the ``tpch`` data with two independent predicate columns queried 1:1 in every
  period, ``l_shipdate`` (two-month windows) and ``l_partkey`` (windows of 2% of the part
  keys, about the same selectivity), no predicate switch; oracle key a Hilbert order over
  both. Here one sort key serves only half the queries, so hybrid layouts matter (the
  FK ablation's setting).

``build_scenario(preset, rows, seed, overrides)`` applies the dashboard/CLI overrides listed
by :func:`scenario_parameters`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Mapping

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.table.model import TableSchema
from engine.scenarios.generator import (Dataset, Distribution, ExtraPredicate, PeriodSpec,
                                        QueryTemplate, Scenario, ScenarioSpec, SubWorkload,
                                        generate, month_starts)

DAY = 1.0
MONTH_DAYS = 30.44
US_PER_HOUR = 3600e6
US_PER_DAY = 86400e6

PRESETS = ("tpch", "dsb", "mirrors", "tpch2")
DEFAULT_ROWS = {"tpch": 1_000_000, "dsb": 1_000_000, "mirrors": 1_000_000, "tpch2": 1_000_000}
PARTITIONS_PER_BATCH = {"tpch": 24, "dsb": 24, "mirrors": 8, "tpch2": 24}
PARTKEY_WINDOW = 0.02  # tpch2: an l_partkey window covers 2% of the part keys

#: The simulator's economics per preset, measured with DuckDB by ``bench/sim/sim_calibration.py``
#: (rates per simulator byte; see :mod:`engine.sim.economics`). Provenance in "measured".
SIM_CALIBRATION: dict[str, Any] = {
    "rows": 1_000_000,
    "measured": "2026-11-23 by bench/sim/sim_calibration.py --rows 1000000 (DuckDB 2.0.0, threads=1, 2-core shared machine at load ~20, Parquet files of 100k rows, snappy)",
    "presets": {
        "tpch": {
            "scan_bytes_per_s": 93250000.0,
            "query_fixed_s": 0.002667,
            "query_seconds_per_row": 3.382e-07,
            "rewrite_bytes_per_s": 9685000.0,
            "rewrite_fixed_s": 0.0,
            "mean_rows_selected": 20620.0,
            "query_mean_s": 0.009641
        },
        "dsb": {
            "scan_bytes_per_s": 122800000.0,
            "query_fixed_s": 0.0146,
            "query_seconds_per_row": 0.0,
            "rewrite_bytes_per_s": 9434000.0,
            "rewrite_fixed_s": 0.2337,
            "mean_rows_selected": 673.3,
            "query_mean_s": 0.01392
        },
        "mirrors": {
            "scan_bytes_per_s": 284300000.0,
            "query_fixed_s": 0.0009606,
            "query_seconds_per_row": 1.368e-06,
            "rewrite_bytes_per_s": 22300000.0,
            "rewrite_fixed_s": 0.0,
            "mean_rows_selected": 765.7,
            "query_mean_s": 0.002008
        },
        "tpch2": {
            "scan_bytes_per_s": 66120000.0,
            "query_fixed_s": 0.0,
            "query_seconds_per_row": 1.008e-06,
            "rewrite_bytes_per_s": 7597000.0,
            "rewrite_fixed_s": 0.1974,
            "mean_rows_selected": 19530.0,
            "query_mean_s": 0.01255
        }
    }
}


def _target_rows(rows: int, n_batches: int, per_batch: int) -> int:
    return max(50, int(rows // max(1, n_batches * per_batch)))


def _epoch_days(d: dt.date) -> float:
    return float(logical_types.encode_scalar("date", d))


def _split_by_weights(total: int, weights: np.ndarray) -> np.ndarray:
    """Integer counts summing to ``total`` proportional to ``weights``."""
    w = np.asarray(weights, dtype=np.float64)
    raw = total * w / w.sum()
    counts = np.floor(raw).astype(np.int64)
    counts[np.argsort(-(raw - counts))[: total - counts.sum()]] += 1
    return counts


# --------------------------------------------------------------------------- TPC-H

TPCH_SCHEMA = TableSchema((
    ("l_orderkey", "int"), ("l_partkey", "int"), ("l_suppkey", "int"), ("l_linenumber", "int"),
    ("l_quantity", "int"), ("l_extendedprice", "float"), ("l_discount", "float"), ("l_tax", "float"),
    ("l_returnflag", "string"), ("l_linestatus", "string"), ("l_shipdate", "date"),
    ("l_commitdate", "date"), ("l_receiptdate", "date"), ("l_shipinstruct", "string"),
    ("l_shipmode", "string"), ("l_comment", "string"),
))
# compressed Parquet bytes per row (approximate, dictionary/RLE encoded where TPC-H allows)
TPCH_WIDTHS = {"l_orderkey": 4.0, "l_partkey": 4.0, "l_suppkey": 2.5, "l_linenumber": 0.4,
               "l_quantity": 0.8, "l_extendedprice": 4.0, "l_discount": 0.5, "l_tax": 0.4,
               "l_returnflag": 0.2, "l_linestatus": 0.1, "l_shipdate": 1.6, "l_commitdate": 1.6,
               "l_receiptdate": 1.6, "l_shipinstruct": 0.3, "l_shipmode": 0.4, "l_comment": 16.0}

TPCH_TEMPLATES = (
    QueryTemplate("Q1", ("l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag",
                         "l_linestatus")),
    QueryTemplate("Q3", ("l_orderkey", "l_extendedprice", "l_discount")),
    QueryTemplate("Q6", ("l_extendedprice", "l_discount", "l_quantity"),
                  (ExtraPredicate("l_discount", fraction=0.2), ExtraPredicate("l_quantity", fraction=0.5))),
    QueryTemplate("Q7", ("l_orderkey", "l_suppkey", "l_extendedprice", "l_discount")),
    QueryTemplate("Q12", ("l_orderkey", "l_shipmode", "l_commitdate", "l_receiptdate")),
    QueryTemplate("Q14", ("l_partkey", "l_extendedprice", "l_discount")),
    QueryTemplate("Q15", ("l_suppkey", "l_extendedprice", "l_discount")),
    QueryTemplate("Q20", ("l_partkey", "l_suppkey", "l_quantity")),
)


def tpch_dataset(rows: int, n_batches: int, seed: int, max_gap_days: int = 1000) -> Dataset:
    """``lineitem`` in monthly ``o_orderdate`` batches (orders in random order within a month)."""
    rng = np.random.default_rng([seed, 101])
    starts = month_starts(dt.date(1992, 1, 1), n_batches)
    days = np.array([(starts[i + 1] - starts[i]).days for i in range(n_batches)], dtype=np.int64)
    first_day = np.array([_epoch_days(s) for s in starts[:-1]])
    rows_per_month = _split_by_weights(rows, days)
    odate_parts, order_parts = [], []
    n_orders = 0
    for m in range(n_batches):
        want = int(rows_per_month[m])
        if want == 0:
            continue
        lines = rng.integers(1, 8, want // 4 + 8)
        while lines.sum() < want:
            lines = np.concatenate([lines, rng.integers(1, 8, want // 4 + 8)])
        cs = np.cumsum(lines)
        k = int(np.searchsorted(cs, want)) + 1
        lines = lines[:k].copy()
        lines[-1] -= int(cs[k - 1]) - want
        # dbgen order within a month: orders arrive with random dates, an order's lines together
        dates = first_day[m] + np.floor(rng.uniform(0, 1, k) * days[m])
        odate_parts.append(np.repeat(dates, lines))
        order_parts.append(np.repeat(np.arange(n_orders, n_orders + k), lines))
        n_orders += k
    odate = np.concatenate(odate_parts)
    o_rep = np.concatenate(order_parts)
    n = int(odate.size)
    orderkey = (rng.permutation(n_orders) + 1) * 4.0
    sf = max(n / 6_000_000, 1e-3)
    partkey = rng.integers(1, max(2, int(200_000 * sf)) + 1, n).astype(np.float64)
    quantity = rng.integers(1, 51, n).astype(np.float64)
    ship = odate + rng.integers(1, max_gap_days + 1, n)
    data = {
        "l_orderkey": orderkey[o_rep],
        "l_partkey": partkey,
        "l_suppkey": rng.integers(1, max(2, int(10_000 * sf)) + 1, n).astype(np.float64),
        "l_quantity": quantity,
        "l_extendedprice": np.round(quantity * (900.0 + (partkey % 2000) / 2.0 + 0.01 * (partkey % 100)), 2),
        "l_discount": rng.integers(0, 11, n) / 100.0,
        "l_shipdate": ship,
        "l_commitdate": odate + rng.integers(30, 91, n),
        "l_receiptdate": ship + rng.integers(1, 31, n),
    }
    offsets = np.concatenate([[0], np.cumsum(rows_per_month)]).astype(np.int64)
    month_end = np.array([_epoch_days(starts[i + 1]) - 1 for i in range(n_batches)])
    clocks = [dt.datetime.combine(starts[i + 1], dt.time()) - dt.timedelta(hours=1) for i in range(n_batches)]
    return Dataset("lineitem", TPCH_SCHEMA, TPCH_WIDTHS, data, offsets,
                   {"l_shipdate": month_end, "l_commitdate": month_end, "l_receiptdate": month_end},
                   clocks)


def _tpch_spec(rows: int, seed: int, o: Mapping[str, Any]) -> tuple[ScenarioSpec, Dataset]:
    n_periods = int(o.get("periods", 6))
    per = int(o.get("batches_per_period", 12))
    start = int(o.get("recluster_start", 3))
    if not 1 <= start <= n_periods:
        raise InvalidParameterError(f"recluster_start must be a period within 1..{n_periods}, got {start}")
    switch = bool(o.get("predicate_switch", True))
    rate_all = o.get("shifting_rate")
    profile = o.get("profile", "paper")
    ds = tpch_dataset(rows, n_periods * per, seed, int(o.get("max_gap_days", 1000)))
    two = profile == "two-column"
    periods = []
    for i in range(1, n_periods + 1):
        col_mix: tuple[tuple[str, float], ...] = (("l_shipdate", 1.0),)
        layout, key = "sort", ("l_shipdate",)
        if two:
            col_mix = (("l_shipdate", 1.0), ("l_partkey", 1.0))
            layout, key = "hilbert", ("l_shipdate", "l_partkey")
        elif profile == "paper" and switch and n_periods >= start + 2:
            if i == n_periods - 1:
                col_mix, key = (("l_commitdate", 1.0),), ("l_commitdate",)
            elif i == n_periods:
                col_mix = (("l_shipdate", 2.0), ("l_commitdate", 1.0))
                layout, key = "hilbert", ("l_shipdate", "l_commitdate")
        if profile == "sensitivity":
            rate = 0.75
            queries = True
        else:
            rate = 0.25 if i <= start else 0.75
            queries = i >= start - 1 or i >= n_periods
        if rate_all is not None:
            rate = float(rate_all)
        periods.append(PeriodSpec(per, col_mix, rate, queries=queries, recluster=i >= start,
                                  oracle_layout=layout, oracle_columns=key))
    window = float(o.get("selectivity", 61.0))
    global_dist = Distribution("uniform")
    local_dist = Distribution("zipf", 2.0)
    if o.get("distribution"):
        dist = Distribution(str(o["distribution"]), float(o.get("distribution_param") or 0.0))
        local_dist = dist
        if o.get("workload") == "global":
            global_dist = dist
    which = o.get("workload", "local" if profile == "sensitivity" else "both")
    subs = []
    if which in ("both", "global"):
        subs.append(SubWorkload("global", TPCH_TEMPLATES, global_dist))
    if which in ("both", "local"):
        subs.append(SubWorkload("local", TPCH_TEMPLATES, local_dist))
    if not subs:
        raise InvalidParameterError(f"workload must be both, global or local, got {which!r}")
    parts = float(ds.data["l_partkey"].max())
    part_window = max(1.0, float(np.floor(PARTKEY_WINDOW * parts)))
    spec = ScenarioSpec(
        name="tpch2" if two else "tpch", periods=tuple(periods), workloads=tuple(subs),
        window={"l_shipdate": window, "l_commitdate": window, "l_receiptdate": window,
                "l_partkey": part_window},
        unit={"l_shipdate": MONTH_DAYS, "l_commitdate": MONTH_DAYS, "l_receiptdate": MONTH_DAYS,
              "l_partkey": part_window},
        seed=seed, target_rows=int(o.get("target_rows") or _target_rows(ds.rows, ds.n_batches,
                                                                         PARTITIONS_PER_BATCH["tpch"])),
        measure_from_period=o.get("measure_from_period"),
        description="TPC-H lineitem, monthly o_orderdate batches, l_shipdate gap up to 1000 days")
    return spec, ds


# --------------------------------------------------------------------------- DSB

DSB_SCHEMA = TableSchema((
    ("ss_sold_date_sk", "date"), ("ss_sold_time_sk", "int"), ("ss_item_sk", "int"),
    ("ss_customer_sk", "int"), ("ss_cdemo_sk", "int"), ("ss_hdemo_sk", "int"), ("ss_addr_sk", "int"),
    ("ss_store_sk", "int"), ("ss_promo_sk", "int"), ("ss_ticket_number", "int"), ("ss_quantity", "int"),
    ("ss_wholesale_cost", "float"), ("ss_list_price", "float"), ("ss_sales_price", "float"),
    ("ss_ext_discount_amt", "float"), ("ss_ext_sales_price", "float"), ("ss_net_paid", "float"),
    ("ss_net_profit", "float"),
))
DSB_WIDTHS = {"ss_sold_date_sk": 1.5, "ss_sold_time_sk": 2.5, "ss_item_sk": 2.5, "ss_customer_sk": 3.5,
              "ss_cdemo_sk": 3.0, "ss_hdemo_sk": 1.5, "ss_addr_sk": 3.0, "ss_store_sk": 0.5,
              "ss_promo_sk": 1.0, "ss_ticket_number": 4.0, "ss_quantity": 0.8, "ss_wholesale_cost": 2.0,
              "ss_list_price": 2.5, "ss_sales_price": 2.5, "ss_ext_discount_amt": 3.0,
              "ss_ext_sales_price": 3.0, "ss_net_paid": 3.0, "ss_net_profit": 3.5}
DSB_FILTERS = {  # column -> fraction of its domain a template's range covers
    "ss_item_sk": 0.1, "ss_customer_sk": 0.05, "ss_store_sk": 0.25, "ss_promo_sk": 0.3,
    "ss_quantity": 0.2, "ss_sales_price": 0.2, "ss_net_profit": 0.3}
DSB_MEASURES = ("ss_ext_sales_price", "ss_net_paid", "ss_net_profit", "ss_quantity", "ss_sales_price",
                "ss_ext_discount_amt", "ss_list_price", "ss_wholesale_cost")


def dsb_templates(n: int = 30, seed: int = 7) -> tuple[QueryTemplate, ...]:
    """``n`` fact-table scans: the date window plus ranges on 2-3 other columns."""
    rng = np.random.default_rng(seed)
    cols = list(DSB_FILTERS)
    out = []
    for i in range(n):
        k = 2 + int(rng.integers(0, 2))
        picked = [cols[j] for j in sorted(rng.choice(len(cols), size=k, replace=False))]
        measures = [DSB_MEASURES[j] for j in sorted(rng.choice(len(DSB_MEASURES), size=2, replace=False))]
        keys = ["ss_item_sk", "ss_customer_sk"] if i % 3 == 0 else ["ss_item_sk"]
        out.append(QueryTemplate(f"D{i + 1:02d}", tuple(dict.fromkeys(keys + measures)),
                                 tuple(ExtraPredicate(c, fraction=DSB_FILTERS[c]) for c in picked)))
    return tuple(out)


#: the initial dataset's share of all rows (SF 240 of the final 720, WAIR section 6.2.2)
DSB_INITIAL_SHARE = 1.0 / 3.0
#: lines per ticket of the benchmark's generator (TPC-DS ``store_sales``: 8 to 16)
DSB_TICKET_LINES = (8, 16)
DSB_POOLS = ("generator", "refresh-runs")


def dsb_initial_dates(rng: np.random.Generator, n: int, d0: float, d1: float) -> np.ndarray:
    """Sale dates of ``n`` rows in the generator's ticket order: tickets of 8-16 lines,
    each ticket one date drawn uniformly from the days ``[d0, d1)``."""
    lines = rng.integers(DSB_TICKET_LINES[0], DSB_TICKET_LINES[1] + 1, n // DSB_TICKET_LINES[0] + 1)
    tickets = np.repeat(np.arange(len(lines)), lines)[:n]
    return np.floor(rng.uniform(d0, d1, len(lines)))[tickets]


def dsb_dataset(rows: int, n_batches: int, seed: int, months: int | None = None,
                refresh_dates: str = "month", initial_pool: str = "generator") -> Dataset:
    """``store_sales`` in ingestion order: with ``initial_pool="generator"`` the initial
    dataset (:data:`DSB_INITIAL_SHARE` of the rows, ticket order, dates over the whole
    range) first, ingested with batch 0; then the refresh runs: batch ``i`` holds the
    sales of month ``i`` in random order (``refresh_dates="month"``), or sales dates spread
    over the whole range (``"spread"``). ``initial_pool="refresh-runs"``: no initial
    dataset, every row in a refresh run."""
    if refresh_dates not in ("month", "spread"):
        raise InvalidParameterError(f"refresh_dates must be month or spread, got {refresh_dates!r}")
    if initial_pool not in DSB_POOLS:
        raise InvalidParameterError(f"initial_pool must be one of {', '.join(DSB_POOLS)}, got {initial_pool!r}")
    rng = np.random.default_rng([seed, 202])
    months = months or n_batches
    starts = month_starts(dt.date(1998, 1, 1), max(months, n_batches))
    d0, d1 = _epoch_days(starts[0]), _epoch_days(starts[months])
    n_init = int(round(rows * DSB_INITIAL_SHARE)) if initial_pool == "generator" else 0
    per_batch = _split_by_weights(rows - n_init, np.ones(n_batches))
    n = rows - n_init
    # the initial dataset draws from streams of its own; without it the draws are the
    # earlier variant's, in its order
    col_rng, date_rng = ((np.random.default_rng([seed, 204]), np.random.default_rng([seed, 203]))
                         if n_init else (rng, rng))
    item = col_rng.integers(1, 18_001, rows).astype(np.float64)
    qty = col_rng.integers(1, 101, rows).astype(np.float64)
    price = np.round(col_rng.uniform(1.0, 200.0, rows), 2)
    if refresh_dates == "month":
        first = np.array([_epoch_days(starts[i]) for i in range(n_batches)])
        length = np.array([_epoch_days(starts[i + 1]) for i in range(n_batches)]) - first
        batch = np.repeat(np.arange(n_batches), per_batch)
        sold = first[batch] + np.floor(date_rng.uniform(0.0, 1.0, n) * length[batch])
    else:
        sold = np.floor(date_rng.uniform(d0, d1, n))
    if n_init:  # first in the table, ingested with batch 0
        sold = np.concatenate([dsb_initial_dates(date_rng, n_init, d0, d1), sold])
        per_batch[0] += n_init
    n = rows
    rng = col_rng
    data = {
        "ss_sold_date_sk": sold,
        "ss_item_sk": item,
        "ss_customer_sk": rng.integers(1, 500_001, n).astype(np.float64),
        "ss_store_sk": rng.integers(1, 101, n).astype(np.float64),
        "ss_promo_sk": rng.integers(1, 301, n).astype(np.float64),
        "ss_quantity": qty,
        "ss_sales_price": price,
        "ss_net_profit": np.round(qty * price * rng.uniform(-0.5, 0.5, n), 2),
    }
    offsets = np.concatenate([[0], np.cumsum(per_batch)]).astype(np.int64)
    mid = np.array([_epoch_days(starts[i]) + 14 for i in range(n_batches)])
    clocks = [dt.datetime.combine(starts[i], dt.time()) + dt.timedelta(days=27) for i in range(n_batches)]
    return Dataset("store_sales", DSB_SCHEMA, DSB_WIDTHS, data, offsets, {"ss_sold_date_sk": mid}, clocks)


def _dsb_spec(rows: int, seed: int, o: Mapping[str, Any]) -> tuple[ScenarioSpec, Dataset]:
    n_periods = int(o.get("periods", 6))
    per = int(o.get("batches_per_period", 12))
    start = int(o.get("recluster_start", 3))
    if not 1 <= start <= n_periods:
        raise InvalidParameterError(f"recluster_start must be a period within 1..{n_periods}, got {start}")
    pool = str(o.get("initial_pool") or "generator")
    ds = dsb_dataset(rows, n_periods * per, seed, refresh_dates=str(o.get("refresh_dates") or "month"),
                     initial_pool=pool)
    rate = float(o["shifting_rate"]) if o.get("shifting_rate") is not None else 1.0
    key = ("ss_sold_date_sk",)
    periods = tuple(PeriodSpec(per, (("ss_sold_date_sk", 1.0),), rate, queries=i >= start - 1,
                               recluster=i >= start, oracle_layout="sort", oracle_columns=key)
                    for i in range(1, n_periods + 1))
    dist = Distribution(str(o.get("distribution") or "gaussian"),
                        float(o.get("distribution_param") or 2.0))
    n_templates = int(o.get("templates", 30))
    spec = ScenarioSpec(
        name="dsb", periods=periods, workloads=(SubWorkload("dsb", dsb_templates(n_templates), dist),),
        window={"ss_sold_date_sk": float(o.get("selectivity", 61.0))},
        unit={"ss_sold_date_sk": MONTH_DAYS}, seed=seed,
        target_rows=int(o.get("target_rows") or _target_rows(ds.rows, ds.n_batches, PARTITIONS_PER_BATCH["dsb"])),
        measure_from_period=o.get("measure_from_period"),
        description=("DSB-like store_sales: an initial dataset in the generator's ticket order, "
                     if pool == "generator" else "DSB-like store_sales, ")
                    + "monthly refresh runs, Gaussian(2) dates")
    return spec, ds


# --------------------------------------------------------------------------- Mirrors

MIRRORS_SCHEMA = TableSchema((
    ("ts", "timestamp"), ("ip", "int"), ("subnet", "int"), ("status", "int"), ("resp_bytes", "int"),
    ("path_hash", "int"), ("method", "string"), ("path", "string"), ("user_agent", "string"),
    ("referer", "string"),
))
MIRRORS_WIDTHS = {"ts": 3.0, "ip": 3.5, "subnet": 1.2, "status": 0.2, "resp_bytes": 3.0,
                  "path_hash": 3.0, "method": 0.1, "path": 28.0, "user_agent": 12.0, "referer": 4.0}
SUBNET_WINDOW = float(1 << 16)

MIRRORS_TEMPLATES = (
    QueryTemplate("distinct_ips", ("ip",)),
    QueryTemplate("ua_counts", ("ip", "user_agent")),
    QueryTemplate("path_freq", ("ip", "path_hash", "path")),
    QueryTemplate("ua_per_ip", ("ip", "user_agent", "status")),
    QueryTemplate("recent_ips", ("ip", "ts", "status"),
                  (ExtraPredicate("ts", kind="recent", length=6 * US_PER_HOUR, lookback=7 * US_PER_DAY),)),
    QueryTemplate("recent_paths", ("ip", "ts", "path_hash", "resp_bytes"),
                  (ExtraPredicate("ts", kind="recent", length=2 * US_PER_HOUR, lookback=3 * US_PER_DAY),)),
    QueryTemplate("distinct_ips_b", ("ip", "subnet")),
    QueryTemplate("ua_counts_b", ("ip", "user_agent", "ts")),
    QueryTemplate("recent_ua", ("ip", "user_agent", "ts"),
                  (ExtraPredicate("ts", kind="recent", length=12 * US_PER_HOUR, lookback=7 * US_PER_DAY),)),
    QueryTemplate("status_scan", ("ip", "status", "resp_bytes")),
)


def mirrors_dataset(rows: int, n_batches: int, seed: int, n_subnets: int = 1000) -> Dataset:
    """Daily access-log batches in timestamp order; traffic Zipf(1.1) over active /16 subnets."""
    rng = np.random.default_rng([seed, 303])
    day0 = dt.datetime(2024, 6, 1)
    weekday = np.array([1.0 if (day0 + dt.timedelta(days=i)).weekday() < 5 else 0.7 for i in range(n_batches)])
    per_day = _split_by_weights(rows, weekday * rng.uniform(0.85, 1.15, n_batches))
    n = rows
    subnets = np.sort(rng.choice(np.arange(1 << 8, 224 << 8), size=n_subnets, replace=False))
    pop = 1.0 / np.arange(1, n_subnets + 1) ** 1.1
    pop_perm = rng.permutation(n_subnets)
    sub = subnets[pop_perm[rng.choice(n_subnets, size=n, p=pop / pop.sum())]]
    host = np.minimum(65535, np.floor(rng.pareto(1.2, n) * 200)).astype(np.int64)
    ip = (sub.astype(np.int64) << 16) + host
    day_of_row = np.repeat(np.arange(n_batches), per_day)
    t0 = float(logical_types.encode_scalar("timestamp", day0))
    ts = t0 + day_of_row * US_PER_DAY + np.floor(rng.uniform(0, US_PER_DAY, n) / 1e6) * 1e6
    order = np.lexsort((ts,))  # log replay: timestamp order
    status = rng.choice([200, 206, 301, 304, 403, 404, 500], size=n, p=[.78, .04, .03, .08, .03, .035, .005])
    data = {
        "ts": ts[order],
        "ip": ip[order].astype(np.float64),
        "subnet": sub[order].astype(np.float64),
        "status": status[order].astype(np.float64),
        "resp_bytes": np.floor(rng.lognormal(9.0, 2.5, n))[order],
        "path_hash": rng.integers(0, 1 << 31, n)[order].astype(np.float64),
    }
    offsets = np.concatenate([[0], np.cumsum(per_day)]).astype(np.int64)
    day_end = np.array([t0 + (i + 1) * US_PER_DAY - 1e6 for i in range(n_batches)])
    clocks = [day0 + dt.timedelta(days=i + 1) - dt.timedelta(minutes=30) for i in range(n_batches)]
    return Dataset("access_log", MIRRORS_SCHEMA, MIRRORS_WIDTHS, data, offsets, {"ts": day_end}, clocks)


def _mirrors_spec(rows: int, seed: int, o: Mapping[str, Any]) -> tuple[ScenarioSpec, Dataset]:
    n_periods = int(o.get("periods", 4))
    per = int(o.get("batches_per_period", 30))
    start = int(o.get("recluster_start", 2))
    if not 1 <= start <= n_periods:
        raise InvalidParameterError(f"recluster_start must be a period within 1..{n_periods}, got {start}")
    ds = mirrors_dataset(rows, n_periods * per, seed, int(o.get("subnets", 1000)))
    rate = float(o["shifting_rate"]) if o.get("shifting_rate") is not None else 0.7
    periods = tuple(PeriodSpec(per, (("ip", 1.0),), rate, queries=True, recluster=i >= start,
                               oracle_layout="sort", oracle_columns=("ip",))
                    for i in range(1, n_periods + 1))
    dist = Distribution(str(o.get("distribution") or "distinct"), float(o.get("distribution_param") or 0.0))
    spec = ScenarioSpec(
        name="mirrors", periods=periods, workloads=(SubWorkload("tickets", MIRRORS_TEMPLATES, dist),),
        window={"ip": float(o.get("selectivity", SUBNET_WINDOW))}, unit={"ip": SUBNET_WINDOW},
        seed=seed, aligned=True,
        target_rows=int(o.get("target_rows") or _target_rows(ds.rows, ds.n_batches,
                                                             PARTITIONS_PER_BATCH["mirrors"])),
        measure_from_period=o.get("measure_from_period"),
        description="web access log, daily batches in ts order, needle queries on /16 subnets")
    return spec, ds


# --------------------------------------------------------------------------- entry points

def _tpch2_spec(rows: int, seed: int, o: Mapping[str, Any]) -> tuple[ScenarioSpec, Dataset]:
    """``tpch`` with the two-column profile (module docstring)."""
    return _tpch_spec(rows, seed, {**o, "profile": "two-column"})


_BUILDERS: dict[str, Callable[[int, int, Mapping[str, Any]], tuple[ScenarioSpec, Dataset]]] = {
    "tpch": _tpch_spec, "dsb": _dsb_spec, "mirrors": _mirrors_spec, "tpch2": _tpch2_spec}

OVERRIDE_KEYS = ("periods", "batches_per_period", "recluster_start", "shifting_rate", "distribution",
                 "distribution_param", "selectivity", "predicate_switch", "workload", "profile",
                 "target_rows", "measure_from_period", "templates", "subnets", "max_gap_days",
                 "refresh_dates", "initial_pool")


def list_presets() -> list[dict[str, Any]]:
    """The presets with their one-line descriptions and default sizes."""
    desc = {"tpch": "TPC-H lineitem: monthly batches, l_shipdate 1000-day gap, 6 periods x 12, "
                    "predicate switch to l_commitdate (P5) and a 2:1 mix (P6)",
            "dsb": "DSB-like store_sales: an unclustered initial dataset (the generator's ticket "
                   "order) then monthly refresh runs; Gaussian(2) date windows on an advancing "
                   "month + 2-3 other predicates, 100% shifting",
            "mirrors": "web access log: daily batches, needle queries on /16 subnets and narrow "
                       "time windows, ~0.1% selectivity",
            "tpch2": "TPC-H lineitem with two independent predicate columns queried 1:1 "
                     "(l_shipdate, l_partkey): where hybrid layouts matter"}
    return [{"name": p, "description": desc[p], "default_rows": DEFAULT_ROWS[p]} for p in PRESETS]


def build_scenario(preset: str, rows: int | None = None, seed: int = 0,
                   overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Generate the scenario of a preset (deterministic for ``rows``, ``seed``, ``overrides``)."""
    if preset not in _BUILDERS:
        raise InvalidParameterError(f"unknown preset {preset!r}; presets are: {', '.join(PRESETS)}")
    o = {k: v for k, v in (overrides or {}).items() if v is not None}
    unknown = sorted(set(o) - set(OVERRIDE_KEYS))
    if unknown:
        raise InvalidParameterError(f"unknown scenario parameter(s) {', '.join(unknown)}; "
                                    f"accepted: {', '.join(OVERRIDE_KEYS)}")
    rows = int(rows or DEFAULT_ROWS[preset])
    if rows < 100:
        raise InvalidParameterError(f"rows must be at least 100, got {rows}")
    if o.get("shifting_rate") is not None and not 0 <= float(o["shifting_rate"]) <= 1:
        raise InvalidParameterError(f"shifting_rate must be within [0, 1], got {o['shifting_rate']}")
    for key in ("periods", "batches_per_period"):
        if key in o and int(o[key]) < 1:
            raise InvalidParameterError(f"{key} must be >= 1, got {o[key]}")
    spec, ds = _BUILDERS[preset](rows, int(seed), o)
    return generate(spec, ds, {"preset": preset, "rows": rows, "seed": int(seed), **o})


def scenario_parameters(preset: str = "tpch") -> list[dict[str, Any]]:
    """Form schema for the dashboard's what-if page: name, kind, default, choices, help."""
    defaults = {"tpch": (6, 12, 3, 61.0), "dsb": (6, 12, 3, 61.0), "mirrors": (4, 30, 2, SUBNET_WINDOW)}
    periods, per, start, sel = defaults.get(preset, defaults["tpch"])
    dist = {"tpch": "zipf", "dsb": "gaussian", "mirrors": "distinct"}.get(preset, "zipf")
    dparam = {"tpch": 2.0, "dsb": 2.0, "mirrors": 0.0}.get(preset, 2.0)
    return [
        {"name": "preset", "kind": "choice", "default": preset, "choices": list(PRESETS),
         "help": "workload and data (WAIR section 6.2)"},
        {"name": "rows", "kind": "int", "default": DEFAULT_ROWS.get(preset, 1_000_000), "min": 1000,
         "help": "total rows ingested over the scenario"},
        {"name": "periods", "kind": "int", "default": periods, "min": 1, "help": "number of periods"},
        {"name": "batches_per_period", "kind": "int", "default": per, "min": 1,
         "help": "batches per period (one ingestion + query mix + reclustering step each)"},
        {"name": "recluster_start", "kind": "int", "default": start, "min": 1,
         "help": "first period in which policies may recluster (earlier periods form the initial pool)"},
        {"name": "shifting_rate", "kind": "float", "default": None, "min": 0.0, "max": 1.0,
         "help": "share of queries regenerated between batches (empty: the preset's schedule)"},
        {"name": "distribution", "kind": "choice", "default": dist,
         "choices": ["uniform", "gaussian", "zipf"] + (["distinct"] if preset == "mirrors" else []),
         "help": "predicate placement: uniform, Gaussian around the reference, Zipf toward recent data"},
        {"name": "distribution_param", "kind": "float", "default": dparam, "min": 0.0,
         "help": "sigma (Gaussian, in months) or alpha (Zipf)"},
        {"name": "selectivity", "kind": "float", "default": sel, "min": 1.0,
         "help": "query window length (days for date predicates; IP addresses for mirrors)"},
        {"name": "predicate_switch", "kind": "bool", "default": True,
         "help": "TPC-H: switch to l_commitdate in the next-to-last period and a 2:1 mix in the last"},
        {"name": "seed", "kind": "int", "default": 0, "help": "random seed (data and queries)"},
    ]
