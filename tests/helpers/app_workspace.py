"""A small demo-like workspace for the dashboard tests (AppTest, browser, UI benchmark).

A lineitem-like Parquet file is generated (rows arrive in order date order, ship dates
trail by up to 400 days, so ``l_shipdate`` is poorly clustered and ``l_orderkey`` well),
turned into a managed table with the engine API, and given a query log that mostly
filters ``l_shipdate`` ranges (some ``l_commitdate``). Everything goes through
``engine.api``, exactly as the CLI would do it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from engine import api
from engine.core.config import load_settings
from security_helpers import ensure_account

CONFIG = """target_rows = {target_rows}
spark_master = "local[2]"
spark_driver_memory = "1g"
spark_shuffle_partitions = 4
"""


def write_lineitem(path: Path, rows: int = 6000, seed: int = 7) -> Path:
    """A lineitem-like Parquet file in ingestion (order date) order."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("1992-01-01")
    order_day = np.sort(rng.integers(0, 6 * 365, rows))
    orderdate = start + order_day.astype("timedelta64[D]")
    ship = orderdate + rng.integers(1, 400, rows).astype("timedelta64[D]")
    commit = orderdate + rng.integers(30, 91, rows).astype("timedelta64[D]")
    receipt = ship + rng.integers(1, 31, rows).astype("timedelta64[D]")
    table = pa.table({
        "l_orderkey": pa.array(np.arange(rows, dtype=np.int64) // 4 + 1),
        "l_partkey": pa.array(rng.integers(1, 20_000, rows).astype(np.int64)),
        "l_quantity": pa.array(rng.integers(1, 51, rows).astype(np.int64)),
        "l_extendedprice": pa.array(np.round(rng.uniform(900, 100_000, rows), 2)),
        "l_discount": pa.array(np.round(rng.integers(0, 11, rows) / 100, 2)),
        "l_returnflag": pa.array(rng.choice(["A", "N", "R"], rows)),
        "l_shipdate": pa.array(ship.astype("datetime64[D]").astype(object), pa.date32()),
        "l_commitdate": pa.array(commit.astype("datetime64[D]").astype(object), pa.date32()),
        "l_receiptdate": pa.array(receipt.astype("datetime64[D]").astype(object), pa.date32()),
        "l_shipmode": pa.array(rng.choice(["AIR", "MAIL", "RAIL", "SHIP", "TRUCK"], rows)),
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def write_queries(path: Path, table: str, count: int = 60, seed: int = 11) -> Path:
    """A JSONL query log: ~80 % l_shipdate ranges of 30-90 days, the rest l_commitdate."""
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2024, 3, 1, 8, 0, 0)
    lines = []
    for i in range(count):
        col = "l_shipdate" if rng.random() < 0.8 else "l_commitdate"
        lo = dt.date(1993, 1, 1) + dt.timedelta(days=int(rng.integers(0, 4 * 365)))
        hi = lo + dt.timedelta(days=int(rng.integers(30, 91)))
        sql = (f"SELECT sum(l_extendedprice * l_discount) FROM {table} "
               f"WHERE {col} >= DATE '{lo.isoformat()}' AND {col} < DATE '{hi.isoformat()}'")
        ts = (t0 + dt.timedelta(minutes=7 * i)).isoformat()
        lines.append(json.dumps({"id": f"q{i:03d}", "ts": ts, "sql": sql}))
    path.write_text("\n".join(lines) + "\n")
    return path


def init_home(home: Path, target_rows: int = 500) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "layout-advisor.toml").write_text(CONFIG.format(target_rows=target_rows))
    return home


def build_table(home: Path, name: str, rows: int = 6000, queries: int = 60,
                target_rows: int = 500, spark=None) -> None:
    """Create table ``name`` in workspace ``home`` and import its query log."""
    init_home(home, target_rows)
    settings = load_settings({"home": str(home)}, environ={})
    for approver in ("alice", "bob"):  # real accounts (secret: security_helpers.SECRET)
        ensure_account(settings, approver)
    src = write_lineitem(home.parent / "src" / f"{name}.parquet", rows)
    api.create_table(settings, name, str(src))
    if queries:
        api.import_workload(settings, name, str(write_queries(home.parent / f"{name}_queries.jsonl",
                                                              name, queries)))


APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")


def plan_page(table: str, plan_id: int | None = None, timeout: float = 120) -> AppTest:
    """The dashboard's Approve & run page for ``table`` (with ``plan_id`` selected), run
    once and without an exception, as a DBA opens it."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["table"] = table
    if plan_id is not None:
        at.session_state["selected_plan"] = plan_id
    at.run()
    at.switch_page("app_pages/approve_run.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def engine_settings(workspace, monkeypatch):
    """Settings of the test module's ``workspace`` fixture, as the dashboard resolves them."""
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(workspace))
    return load_settings()
