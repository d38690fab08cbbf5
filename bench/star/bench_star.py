"""The TPC-DS journey end to end: a star schema built by ``layout-advisor demo --tpcds``, its
star-query log imported with dimension lookups, WAIR, DD and PTO plans on ``store_sales``,
and the log's real queries (joins to ``date_dim`` and ``item``, aggregations, as written)
timed with DuckDB over the live files before and after each plan's run.

For each policy, a fresh workspace:

1. ``layout-advisor --home HOME demo --tpcds SF --no-ui`` (a subprocess, the user's command;
   the TPC-DS files ``tpcgen-cli`` generated for the first workspace are copied into the
   others' ``sample`` folder, so the generator runs once; every table is built anew);
2. the plan: ``engine.api.create_plan`` by a signed-in proposer (what ``plan create
   --policy P --as carol`` calls; PTO after ``design_pto``, what ``design pto`` shows),
   approved by the demo's admin ``dba`` (and a second approver when the plan needs two),
   run on Spark (``plan run``);
3. the star queries timed over the files of ``store_sales``, ``date_dim`` and ``item`` as
   built and over the live files after the run (the superseded files stay until ``table
   gc``), the two layouts interleaved query by query and run by run, so the machine's load
   falls on both alike: each query ``--repeat`` times on each, the median kept; DuckDB's
   own ``total_time`` and ``io.total_bytes_read`` from its JSON profile, and the
   ``store_sales`` scan's ``bytes_scanned`` and row groups (what the join's dynamic filter
   on ``ss_sold_date_sk`` and the row groups' statistics left to read); one thread, no
   object cache.

Also per policy: files and bytes of ``store_sales`` before and after, the files the plan
rewrote, the run's seconds, and what the file statistics say the workload scans (the plan's
re-estimate). Bytes are exact; seconds are noisy on a shared machine (compare the two sides
of one policy, measured together, not one policy's seconds with another's). Writes
``results.json`` beside this script.

    .venv/bin/python bench/star/bench_star.py                 # SF 0.1 (the demo's default)
    .venv/bin/python bench/star/bench_star.py --policies wair --repeat 1   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from engine import api
from engine.core.config import load_settings
from engine.spark.exact import sql_literal
from engine.table import fs

HERE = Path(__file__).resolve().parent
SECRET = "bench secret for the star benchmark"
FACT = "store_sales"
TABLES = ("store_sales", "date_dim", "item")
POLICIES = ("wair", "dd", "pto")
MIB = 2 ** 20


def log_queries(path: Path) -> list[str]:
    """The statements of a ``-- ts:`` log, in order, without their trailing semicolon."""
    out = []
    for chunk in path.read_text().split("-- ts:")[1:]:
        sql = chunk.split("\n", 1)[1].strip()
        out.append(sql[:-1] if sql.endswith(";") else sql)
    return out


def build(home: Path, scale: float, sample: Path | None) -> dict:
    """The demo's TPC-DS workspace at ``home`` (the user's command); returns its seconds."""
    if sample is not None:
        target = home / "sample" / sample.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(sample, target)
    env = {**os.environ, "LAYOUT_ADVISOR_DEMO_SECRET": SECRET}
    cmd = [str(Path(sys.executable).parent / "layout-advisor"), "--home", str(home), "demo",
           "--tpcds", f"{scale:g}", "--no-ui"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    lines = [ln for ln in done.stderr.splitlines() if "lookups" in ln or "micro-partitions," in ln]
    return {"seconds": took, "command": " ".join(cmd[1:]), "said": lines}


def live(ws, table: str) -> list[tuple[str, int]]:
    """(local path, bytes) of ``table``'s live files."""
    return [(fs.local_path(p.path), int(p.bytes)) for p in api.load_snapshot(ws, table).partitions]


def connection(files: dict[str, list[str]]) -> duckdb.DuckDBPyConnection:
    """A profiled DuckDB connection (one thread, no object cache) whose views name the
    star schema's tables over ``files``."""
    con = duckdb.connect()
    con.execute("SET threads=1")
    con.execute("SET enable_object_cache=false")
    for table, paths in files.items():
        listed = "[" + ", ".join(sql_literal(p) for p in paths) + "]"
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({listed})")
    con.execute("SET enable_profiling='no_output'")
    return con


def time_queries(sides: dict[str, dict[str, list[str]]], queries: list[str],
                 repeat: int) -> dict[str, dict]:
    """The log's queries over each side's files (``{"before": {table: paths}, "after":
    ...}``), the sides interleaved query by query and run by run (the machine's load then
    falls on both alike): per query the median DuckDB seconds of ``repeat`` runs and the
    bytes read (the same every run), summed over the log."""
    cons = {side: connection(files) for side, files in sides.items()}
    out = {side: {"per_query_seconds": [], "per_query_bytes": [], "per_query_fact_bytes": [],
                  "fact_row_groups_read": 0, "fact_row_groups": 0, "result_rows": 0}
           for side in sides}
    for sql in queries:
        runs: dict[str, list] = {side: [] for side in sides}
        for _ in range(repeat):
            for side, con in cons.items():
                rows = len(con.execute(sql).fetchall())
                prof = json.loads(con.get_profiling_information(format="json"))
                runs[side].append((float(prof["query"]["total_time"]),
                                   float(prof["io"]["total_bytes_read"]), prof, rows))
        for side, got in runs.items():
            o = out[side]
            o["per_query_seconds"].append(statistics.median(r[0] for r in got))
            o["per_query_bytes"].append(got[0][1])
            scanned, read, total = fact_scan(got[0][2])
            o["per_query_fact_bytes"].append(scanned)
            o["fact_row_groups_read"] += read
            o["fact_row_groups"] += total
            o["result_rows"] += got[0][3]
    for con in cons.values():
        con.close()
    for o in out.values():
        o["seconds"] = sum(o["per_query_seconds"])
        o["bytes"] = sum(o["per_query_bytes"])
        o["fact_bytes_scanned"] = sum(o["per_query_fact_bytes"])
    return out


def fact_scan(profile: dict) -> tuple[float, int, int]:
    """(bytes scanned, row groups scanned, row groups there were) of the profile's scans of
    ``store_sales`` (the TABLE_SCAN operators that read ``ss_`` columns): what the join's
    dynamic filter (the date keys' min/max and Bloom filter, pushed into the fact scan)
    and the row groups' statistics left to read."""
    out = [0.0, 0, 0]
    top = profile.get("operator") or []
    stack = list(top) if isinstance(top, list) else [top]
    while stack:
        node = stack.pop()
        stack.extend(node.get("children") or [])
        extra = node.get("extra_info") or {}
        cols = extra.get("Projections") or ""
        cols = " ".join(cols) if isinstance(cols, list) else str(cols)
        if node.get("type") == "TABLE_SCAN" and "ss_" in cols:
            out[0] += float(node.get("bytes_scanned", 0) or 0)
            out[1] += int(node.get("row_groups_scanned", 0) or 0)
            out[2] += int(node.get("total_row_groups_to_scan", 0) or 0)
    return out[0], out[1], out[2]


def people(ws):
    """The demo's admin ``dba`` (secret from the environment the demo was given), plus the
    proposer ``carol`` and a second approver ``bob``."""
    dba = api.authenticate(ws, "dba", SECRET)
    api.add_approver(ws, "bob", SECRET, actor=dba)
    api.add_approver(ws, "carol", SECRET, actor=dba)
    return dba, api.authenticate(ws, "bob", SECRET), api.authenticate(ws, "carol", SECRET)


def plan_and_run(ws, policy: str, options: dict) -> dict:
    dba, bob, carol = people(ws)
    design = None
    if policy == "pto":  # what `design pto store_sales` shows before the plan
        d = api.design_pto(ws, FACT, max_design_rows=options.get("max_design_rows"))
        best = d["candidates"][0]
        design = {"partition_by": best["partition_by"], "sort": best["sort"],
                  "target_file_bytes": best["target_file_bytes"], "reason": d["reason"]}
    t0 = time.perf_counter()
    plan = api.create_plan(ws, FACT, policy, options, created_by=carol)
    plan_s = time.perf_counter() - t0
    if plan.id is None:
        return {"no_plan": plan.reason, "plan_seconds": plan_s, "design": design}
    if api.approve_plan(ws, plan.id, dba, reason="bench").status == "proposed":
        api.approve_plan(ws, plan.id, bob, reason="bench")
    t0 = time.perf_counter()
    result = api.run_plan(ws, plan.id, actor=dba)
    run_s = time.perf_counter() - t0
    real = result.get("re_estimated") or {}
    return {"plan_id": plan.id, "plan_seconds": plan_s, "run_seconds": run_s, "design": design,
            "groups": len(plan.groups),
            "layouts": [(g.get("layout"), g.get("columns"), len(g["partitions"]))
                        for g in plan.groups],
            "files_in": sum(len(g["partitions"]) for g in plan.groups),
            "files_out": result.get("partitions_added"),
            "predicted_saving_bytes": float((plan.predicted_saving or {}).get("bytes", 0.0)),
            "stats_bytes_before": real.get("bytes_before"),
            "stats_bytes_after": real.get("bytes_after"),
            "delivery": result.get("delivery")}


def one_policy(root: Path, policy: str, args, sample: Path | None) -> tuple[dict, Path]:
    home = root / policy
    built = build(home, args.scale, sample)
    ws = api.Workspace(load_settings({"home": str(home)}, environ={}))
    log = next((home / "sample").glob("tpcds-sf*/store_sales_star_queries.sql"))
    queries = log_queries(log)
    before_files = {t: [p for p, _ in live(ws, t)] for t in TABLES}
    files_before = live(ws, FACT)
    options = {"max_design_rows": args.pto_design_rows} if policy == "pto" and args.pto_design_rows else {}
    ran = plan_and_run(ws, policy, options)
    files_after = live(ws, FACT)
    # the superseded files stay until `table gc`: both layouts are read in the same run
    missing = [p for p in before_files[FACT] if not Path(p).is_file()]
    if missing:
        raise SystemExit(f"{len(missing)} files of the table as built are gone (first: {missing[0]})")
    after_files = {t: [p for p, _ in live(ws, t)] for t in TABLES}
    timed = time_queries({"before": before_files, "after": after_files}, queries, args.repeat)
    before, after = timed["before"], timed["after"]
    return {"policy": policy, "build": built, "queries": len(queries), **ran,
            "files_before": len(files_before), "bytes_before": sum(b for _, b in files_before),
            "files_after": len(files_after), "bytes_after": sum(b for _, b in files_after),
            "duck_before": before, "duck_after": after}, log.parent


def show(rows: list[dict]) -> None:
    print(f"{'policy':<6} {'files':>11} {'rewritten':>9} {'run s':>6} "
          f"{'DuckDB s before':>15} {'after':>7} {'change':>7} {'MiB read before':>15} "
          f"{'after':>7} {'change':>7} {'store_sales MiB':>15} {'after':>7} {'row groups':>17}")
    for r in rows:
        b, a = r["duck_before"], r["duck_after"]
        if "no_plan" in r:
            print(f"{r['policy']:<6} no plan: {r['no_plan']}")
            continue
        print(f"{r['policy']:<6} {r['files_before']:>5}->{r['files_after']:<5} "
              f"{r['files_in']:>9} {r['run_seconds']:>6.1f} {b['seconds']:>15.2f} "
              f"{a['seconds']:>7.2f} {a['seconds'] / b['seconds'] - 1:>+7.1%} "
              f"{b['bytes'] / MIB:>15.1f} {a['bytes'] / MIB:>7.1f} {a['bytes'] / b['bytes'] - 1:>+7.1%} "
              f"{b['fact_bytes_scanned'] / MIB:>15.1f} {a['fact_bytes_scanned'] / MIB:>7.1f} "
              f"{b['fact_row_groups_read']:>8}->{a['fact_row_groups_read']:<8}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=0.1, help="TPC-DS scale factor (default 0.1)")
    p.add_argument("--policies", default=",".join(POLICIES),
                   help=f"comma-separated, of {', '.join(POLICIES)} (default all)")
    p.add_argument("--repeat", type=int, default=3, help="runs per query, the median kept (default 3)")
    p.add_argument("--pto-design-rows", dest="pto_design_rows", type=int, default=0,
                   help="PTO's max_design_rows (default 0: every row, the paper's)")
    p.add_argument("--keep", action="store_true", help="keep the workspaces (printed)")
    args = p.parse_args()
    policies = [x.strip() for x in args.policies.split(",") if x.strip()]
    bad = [x for x in policies if x not in POLICIES]
    if bad:
        p.error(f"--policies: unknown {', '.join(bad)} (choose from {', '.join(POLICIES)})")
    root = Path(tempfile.mkdtemp(prefix="la-bench-star-"))
    rows, sample = [], None
    try:
        for policy in policies:
            row, generated = one_policy(root, policy, args, sample)
            sample = sample or generated
            rows.append(row)
            show([row])
            sys.stdout.flush()
    finally:
        if args.keep:
            print(f"workspaces kept under {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    out = {"args": vars(args), "policies": rows}
    (HERE / "results.json").write_text(json.dumps(out, indent=1, default=str))
    print()
    show(rows)


if __name__ == "__main__":
    main()
