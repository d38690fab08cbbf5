"""Why not just z-order? Layout Advisor's WAIR plan beside the tools a data engineer would
pick instead, each on its own fresh copy of one Delta table, with one query log:

* ``wair``: the table registered in a fresh workspace, the log imported, WAIR's plan created
  by a signed-in proposer, approved by two other approvers, run (``engine.api``);
* ``zorder``: delta-rs ``DeltaTable.optimize.z_order(["l_shipdate", "l_suppkey"])``, defaults;
* ``zorder_sized``: the same with ``target_size`` = the input's mean file size;
* ``compact``: delta-rs ``DeltaTable.optimize.compact()``;
* ``sort``: a full sort by ``l_shipdate`` (what Iceberg's sort strategy does): DuckDB reads
  the live files and streams sorted Arrow batches, deltalake overwrites the table with
  files of the input's mean size (``target_file_size``).

The table: TPC-H ``lineitem``-like rows generated here (numpy; no ``tpchgen-cli``) in
ingestion order (``o_orderdate``), ship dates 1..1000 days after the order (WAIR's widened
gap, section 6.2.1), written by deltalake as ``--files`` appends of equal size. The log:
the demo's generator (:func:`engine.scenarios.demo_log.make_demo_log`, ``--queries``).

Measured per method: live files and bytes before/after (``get_add_actions``), files and
bytes rewritten (removed) and written (added), rewrite wall seconds (``--repeat`` fresh
copies; min and median), the workload's bytes scanned by the Delta file statistics after
(``engine.scan.pruning.analyze_fragments`` over the copy's snapshot), DuckDB's bytes read
and seconds running the workload over the live files (``DuckRunner.count``, profiled, one
thread), and the break-even: rewrite seconds / DuckDB seconds saved per run of the
workload. Bytes are exact; seconds are noisy on a shared machine. Writes
``results.json`` beside this script.

    .venv/bin/python bench/peers/bench_peers.py --quick   # 200k rows in 40 files, 300 queries
    .venv/bin/python bench/peers/bench_peers.py           # 1.5M rows in 60 files, 3 repeats
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

from engine import api
from engine.core.config import load_settings
from engine.scan.pruning import analyze_fragments
from engine.scenarios import demo_log, tpch
from engine.spark.duck_runner import DuckRunner
from engine.spark.exact import sql_literal
from engine.spark.session import get_spark

HERE = Path(__file__).resolve().parent
SECRET = "bench secret for the peer benchmark"
EPOCH = dt.date(1992, 1, 1)
ORDER_DAYS = 2405  # TPC-H o_orderdate: 1992-01-01 .. 1998-08-02
METHODS = ("wair", "zorder", "zorder_sized", "compact", "sort")
MODES = ("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN")
SHIPMODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")


def lineitem(n: int, seed: int = 3) -> pa.Table:
    """``n`` TPC-H-like lineitem rows (+ ``o_orderdate``) in order-date order: key domains
    scaled as TPC-H's (``n / 6M`` = the scale factor), ship = order + 1..1000 days,
    commit = ship - 30..30 days (at least the day after the order), receipt = ship + 1..30."""
    rng = np.random.default_rng(seed)
    sf = n / 6_000_000
    order = np.sort(rng.integers(0, ORDER_DAYS, n))
    ship = order + rng.integers(1, 1001, n)
    commit = np.maximum(ship + rng.integers(-30, 31, n), order + 1)
    receipt = ship + rng.integers(1, 31, n)
    current = (dt.date.fromisoformat(tpch.TPCH_CURRENT_DATE) - EPOCH).days

    def dates(days: np.ndarray) -> pa.Array:
        return pa.array((days + (EPOCH - dt.date(1970, 1, 1)).days).astype("int32")).cast(pa.date32())

    qty = rng.integers(1, 51, n).astype(np.float64)
    price = np.round(qty * rng.uniform(900, 2100, n), 2)
    flag = np.where(receipt <= current, np.where(rng.random(n) < 0.5, "R", "A"), "N")
    return pa.table({
        "l_orderkey": pa.array(np.arange(n, dtype=np.int64) // 4 + 1),
        "l_partkey": pa.array(rng.integers(1, max(1000, int(200_000 * sf)) + 1, n)),
        "l_suppkey": pa.array(rng.integers(1, max(100, int(10_000 * sf)) + 1, n)),
        "l_linenumber": pa.array((np.arange(n) % 4 + 1).astype(np.int32)),
        "l_quantity": pa.array(qty),
        "l_extendedprice": pa.array(price),
        "l_discount": pa.array(np.round(rng.integers(0, 11, n) / 100, 2)),
        "l_tax": pa.array(np.round(rng.integers(0, 9, n) / 100, 2)),
        "l_returnflag": pa.array(flag),
        "l_linestatus": pa.array(np.where(ship > current, "O", "F")),
        "l_shipdate": dates(ship),
        "l_commitdate": dates(commit),
        "l_receiptdate": dates(receipt),
        "l_shipinstruct": pa.array(np.array(MODES)[rng.integers(0, len(MODES), n)]),
        "l_shipmode": pa.array(np.array(SHIPMODES)[rng.integers(0, len(SHIPMODES), n)]),
        "l_comment": pa.array([f"carefully final deposits {i % 997}" for i in range(n)]),
        "o_orderdate": dates(order),
    })


def live_files(path: Path) -> dict[str, int]:
    """{path: size in bytes} of the Delta table's live files."""
    actions = DeltaTable(str(path)).get_add_actions(flatten=True)
    actions = pa.table(actions) if not isinstance(actions, pa.Table) else actions
    return dict(zip(actions.column("path").to_pylist(), actions.column("size_bytes").to_pylist()))


def rewrite_sort(path: Path) -> None:
    """Overwrite the table sorted by ``l_shipdate``, files of the input's mean size."""
    dt_ = DeltaTable(str(path))
    uris = dt_.file_uris()
    target = int(np.mean(list(live_files(path).values())))
    con = duckdb.connect()
    con.execute("SET threads=2")
    files = "[" + ", ".join(sql_literal(u.removeprefix("file://")) for u in uris) + "]"
    reader = con.sql(f"SELECT * FROM read_parquet({files}) ORDER BY l_shipdate").to_arrow_reader()
    write_deltalake(dt_, reader, mode="overwrite", target_file_size=target)
    con.close()


class Wair:
    """A fresh workspace per copy: proposer carol, approvers alice and bob. The process's
    Spark session is started first and its start timed apart (``spark_start_seconds``),
    then one untimed plan is run on ``warm_table`` (its seconds are ``warm_up_seconds``):
    the rewrite seconds are ``plan create`` + ``plan run`` on a warm session."""

    def __init__(self, root: Path, log: Path, queries: int, warm_table: Path) -> None:
        self.root, self.log, self.queries, self.n = root, log, queries, 0
        self.warm_table = warm_table
        self.spark_start_seconds: float | None = None
        self.warm_up_seconds: float | None = None

    def warm(self) -> None:
        if self.spark_start_seconds is None:
            t0 = time.perf_counter()
            get_spark(load_settings({"home": str(self.root / "home-0")}, environ={}))
            self.spark_start_seconds = time.perf_counter() - t0
            self.warm_up_seconds = self.rewrite(self.warm_table).get("seconds")

    def rewrite(self, path: Path) -> dict:
        self.n += 1
        ws = load_settings({"home": str(self.root / f"home-{self.n}")}, environ={})
        api.add_approver(ws, "alice", SECRET, admin=True)
        alice = api.authenticate(ws, "alice", SECRET)
        api.add_approver(ws, "bob", SECRET, actor=alice)
        api.add_approver(ws, "carol", SECRET, actor=alice)
        bob, carol = api.authenticate(ws, "bob", SECRET), api.authenticate(ws, "carol", SECRET)
        api.register_delta(ws, "lineitem", str(path))
        api.import_workload(ws, "lineitem", str(self.log))
        t0 = time.perf_counter()
        plan = api.create_plan(ws, "lineitem", "wair", {"window": self.queries}, created_by=carol)
        plan_s = time.perf_counter() - t0
        if not plan.groups:
            return {"seconds": plan_s, "plan_seconds": plan_s, "no_plan": plan.reason}
        if api.approve_plan(ws, plan.id, alice, reason="bench").status == "proposed":
            api.approve_plan(ws, plan.id, bob, reason="bench")
        t1 = time.perf_counter()
        api.run_plan(ws, plan.id, actor=alice)
        run_s = time.perf_counter() - t1
        return {"seconds": plan_s + run_s, "plan_seconds": plan_s, "run_seconds": run_s,
                "groups": len(plan.groups), "shape": plan.details["output"]["groups"][0]}


def rewrite(method: str, path: Path, wair: Wair) -> dict:
    if method == "wair":
        return wair.rewrite(path)
    if method == "zorder":
        DeltaTable(str(path)).optimize.z_order(["l_shipdate", "l_suppkey"])
    elif method == "zorder_sized":
        target = int(np.mean(list(live_files(path).values())))
        DeltaTable(str(path)).optimize.z_order(["l_shipdate", "l_suppkey"], target_size=target)
    elif method == "compact":
        DeltaTable(str(path)).optimize.compact()
    elif method == "sort":
        rewrite_sort(path)
    return {}


def workload_cost(ws, name: str, path: Path, fragments, duck: DuckRunner) -> dict:
    """Bytes scanned by the Delta file statistics and DuckDB's bytes and seconds over the
    live files, summed over the workload."""
    zonemaps = api.register_delta(ws, name, str(path)).zonemaps()
    stats_bytes = sum(s.bytes_scanned for s in analyze_fragments(zonemaps, fragments))
    uris = [u.removeprefix("file://") for u in DeltaTable(str(path)).file_uris()]
    duck.count(uris, fragments[0], fragments[0].columns)  # untimed: files into the page cache
    secs = nbytes = wall = 0.0
    for frag in fragments:
        _, s, b, w = duck.count(uris, frag, frag.columns)
        secs, nbytes, wall = secs + s, nbytes + b, wall + w
    return {"stats_bytes": stats_bytes, "duck_bytes": nbytes, "duck_seconds": secs, "duck_wall": wall}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_500_000)
    p.add_argument("--files", type=int, default=60)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--repeat", type=int, default=3, help="fresh copies rewritten per method")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--quick", action="store_true", help="200,000 rows in 40 files, one rewrite each")
    args = p.parse_args()
    if args.quick:
        args.rows, args.files, args.repeat = 200_000, 40, 1
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            p.exit(2, f"--methods: unknown method {m!r}; methods are {', '.join(METHODS)}\n")
    if args.rows < args.files or args.files < 1 or args.queries < 1 or args.repeat < 1:
        p.exit(2, "--rows must be at least --files, and --files, --queries, --repeat positive\n")

    root = Path(tempfile.mkdtemp(prefix="la-bench-peers-"))
    data = lineitem(args.rows)
    pq.write_table(data, root / "lineitem.parquet")
    log = root / "demo_log.jsonl"
    tpch.write_jsonl(demo_log.make_demo_log(root / "lineitem.parquet", count=args.queries), log)
    base = root / "base"
    per_file = -(-args.rows // args.files)
    for i in range(0, args.rows, per_file):
        write_deltalake(str(base), data.slice(i, per_file), mode="append")
    before_files = live_files(base)

    ws = load_settings({"home": str(root / "measure")}, environ={})
    api.register_delta(ws, "lineitem", str(base))
    report = api.import_workload(ws, "lineitem", str(log))
    fragments = api.workload_fragments(ws, "lineitem")
    duck = DuckRunner(str(root / "duck"), threads=1)
    before = workload_cost(ws, "before", base, fragments, duck)
    warm_table = root / "warm"  # the first few files: one untimed WAIR run warms the executor
    for i in range(0, min(args.rows, 8 * per_file), per_file):
        write_deltalake(str(warm_table), data.slice(i, per_file), mode="append")
    wair = Wair(root, log, args.queries, warm_table)

    rows = []
    for method in methods:
        seconds, extra, copy = [], {}, None
        for k in range(args.repeat):
            copy = root / f"{method}-{k}"
            shutil.copytree(base, copy)
            if method == "wair":
                wair.warm()
            t0 = time.perf_counter()
            extra = rewrite(method, copy, wair)
            seconds.append(extra.pop("seconds", time.perf_counter() - t0))
        after_files = live_files(copy)
        removed = {f: s for f, s in before_files.items() if f not in after_files}
        added = {f: s for f, s in after_files.items() if f not in before_files}
        after = workload_cost(ws, f"after_{method}", copy, fragments, duck)
        saved = before["duck_seconds"] - after["duck_seconds"]
        rows.append({"method": method, "files_before": len(before_files), "files_after": len(after_files),
                     "files_rewritten": len(removed), "bytes_rewritten": sum(removed.values()),
                     "files_written": len(added), "bytes_written": sum(added.values()),
                     "bytes_before": sum(before_files.values()), "bytes_after": sum(after_files.values()),
                     "rewrite_seconds": seconds, "rewrite_min": min(seconds),
                     "rewrite_median": statistics.median(seconds), **after,
                     "duck_seconds_saved": saved,
                     "break_even_runs": (statistics.median(seconds) / saved) if saved > 0 else None,
                     **extra})
    out = {"args": vars(args), "rows": args.rows, "fragments": len(fragments),
           "import": {k: report[k] for k in ("statements", "fragments", "skipped_count")},
           "before": before, "spark_start_seconds": wair.spark_start_seconds,
           "wair_warm_up_seconds": wair.warm_up_seconds, "methods": rows}
    (HERE / "results.json").write_text(json.dumps(out, indent=1, default=str))
    mib = 2 ** 20
    print(f"before: {len(before_files)} files, {sum(before_files.values()) / mib:.1f} MiB; workload by "
          f"statistics {before['stats_bytes'] / mib:.1f} MiB, DuckDB {before['duck_bytes'] / mib:.1f} MiB "
          f"{before['duck_seconds']:.2f} s ({len(fragments)} fragments)")
    for r in rows:
        be = f"{r['break_even_runs']:.1f}" if r["break_even_runs"] is not None else "never"
        print(f"{r['method']:>8}: {r['files_rewritten']} -> {r['files_written']} files, "
              f"{r['bytes_rewritten'] / mib:.1f} MiB rewritten; rewrite {r['rewrite_min']:.1f} / "
              f"{r['rewrite_median']:.1f} s; statistics {r['stats_bytes'] / mib:.1f} MiB; DuckDB "
              f"{r['duck_bytes'] / mib:.1f} MiB {r['duck_seconds']:.2f} s (saved {r['duck_seconds_saved']:.2f} s);"
              f" break-even {be} runs {r.get('no_plan', '')}")


if __name__ == "__main__":
    main()
