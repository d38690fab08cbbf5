"""Helpers for the plan, executor and cluster tests: a tiny lineitem-like table made of
real Parquet files, plans stored through the real control store, row multisets via DuckDB.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Sequence

import numpy as np

from engine.policy.codec import proposal_to_json
from engine.policy.base import CostEstimate, PlanGroup, Proposal
from engine.policy.costmodel import recluster_cost_groups
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from engine.workspace import Workspace

EPOCH = dt.date(1992, 1, 1)


def lineitem_arrow(n: int = 4000, seed: int = 7):
    """Rows in ingestion (order date) order; ship dates trail by 1..1000 days, so every
    ingestion-ordered partition spans years of ship dates (the demo's situation)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    order_days = np.sort(rng.integers(0, 2400, n))
    ship = order_days + rng.integers(1, 1000, n)
    commit = order_days + rng.integers(30, 90, n)
    return pa.table({
        "l_orderkey": pa.array(np.arange(n, dtype=np.int64)),
        "l_orderdate": pa.array([EPOCH + dt.timedelta(days=int(d)) for d in order_days],
                                pa.date32()),
        "l_shipdate": pa.array([EPOCH + dt.timedelta(days=int(d)) for d in ship], pa.date32()),
        "l_commitdate": pa.array([EPOCH + dt.timedelta(days=int(d)) for d in commit],
                                 pa.date32()),
        "l_quantity": pa.array(np.round(rng.random(n) * 50, 2)),
        "l_comment": pa.array([None if i % 17 == 0 else f"note {i % 101}" for i in range(n)]),
    })


def make_table(settings, name: str = "lineitem", n: int = 4000, rows_per_file: int = 500,
               data=None):
    """A managed table of ``n / rows_per_file`` ingestion-ordered Parquet files; ``data``
    (a pyarrow table, default :func:`lineitem_arrow` of ``n`` rows) gives the rows."""
    import pyarrow.parquet as pq

    store = TableStore(settings)
    data = lineitem_arrow(n) if data is None else data
    n = data.num_rows
    root = store.managed_location(name)
    os.makedirs(os.path.join(root, "ingest"), exist_ok=True)
    paths = []
    for i in range(0, n, rows_per_file):
        path = os.path.join(root, "ingest", f"part-{i // rows_per_file:05d}.parquet")
        pq.write_table(data.slice(i, rows_per_file), path)
        paths.append(path)
    schema, parts = read_partitions(paths)
    return store.create(name, schema=schema, partitions=parts, operation="create",
                        target_rows=rows_per_file)


def insert_plan(settings, snapshot, groups: Sequence[PlanGroup], policy: str = "wair",
                created_by: str = "tester", predicted_bytes: float = 0.0,
                signed: bool = True) -> int:
    """Store a hand-made proposal as a proposed plan (what a policy would have stored),
    signed by ``created_by`` as a signed-in proposer (an approver account made on first
    use) unless ``signed`` is False (then it needs two approvers)."""
    by_path = {p.path: p for p in snapshot.partitions}
    cost = recluster_cost_groups([sum(by_path[p].bytes for p in g.partitions) for g in groups],
                                 settings)
    proposal = Proposal(policy=policy, params={}, groups=tuple(groups), estimated_cost=cost,
                        predicted_saving={"bytes": predicted_bytes, "cpu_seconds": 0.0,
                                          "window_queries": 0.0})
    ws = Workspace(settings)
    plan_id = ws.control.insert_plan(snapshot.table, snapshot.id, policy, {},
                                     proposal_to_json(proposal), created_by)
    if signed:
        from engine.security.signing import PROPOSE, sign_plan
        from security_helpers import sign_in

        sign_plan(ws, plan_id, sign_in(settings, created_by), PROPOSE)
    return plan_id


def rows_of(paths: Sequence[str]):
    """All rows of ``paths`` as a DataFrame in a canonical order (for multiset equality)."""
    import duckdb

    con = duckdb.connect()
    files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    df = con.execute(f"SELECT * FROM read_parquet([{files}]) "
                     "ORDER BY ALL NULLS FIRST").fetchdf()
    con.close()
    return df.reset_index(drop=True)


def shipdate_fragments(table: str, n: int = 20, width_days: int = 60, seed: int = 3):
    """Queries with a range on l_shipdate (the workload WAIR targets in the demo)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        lo = EPOCH + dt.timedelta(days=int(rng.integers(100, 3000)))
        out.append(ScanFragment(
            query_id=f"q{i}", table=table,
            boxes=({"l_shipdate": Range(lo, lo + dt.timedelta(days=width_days))},),
            columns=("l_shipdate", "l_quantity")))
    return out
