"""Does a plan keep its promise on tables the tool did not build? Predicted, verified and
realized savings of WAIR's plan, side by side, on:

* an Iceberg table written by pyiceberg with its default properties,
* a Delta table written by deltalake with its defaults,
* a folder of Parquet files,

each ``--files`` files of ``--rows`` rows in ingestion order, unclustered on ``ip``, and a
"large files" folder (``--big-files`` files of ``--big-rows`` rows in row groups of
``--big-row-group`` rows, every file spanning the whole range: all pruning inside files,
row-group pruning on). The workload: ``--queries`` range queries of 1% of ``ip``.

For each table: the plan's shape (files, rows per file, row groups), the window's bytes
by file statistics before and after the run, predicted / verified / realized savings and
their ratios, and DuckDB's bytes and seconds on the verified sample. Bytes are exact;
seconds are noisy on a shared machine. Writes ``results.json`` beside this script.

    .venv/bin/python bench/promise/bench_promise.py            # the README's figures
    .venv/bin/python bench/promise/bench_promise.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake

from engine import api
from engine.core.config import load_settings
from engine.table.formats import iceberg

HERE = Path(__file__).resolve().parent
SECRET = "bench secret for the promise benchmark"


def table_data(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(np.arange(n), pa.int64()),
                     "ip": pa.array(rng.integers(0, 1_000_000, n), pa.int64()),
                     "bytes": pa.array(rng.integers(0, 10_000, n), pa.int64()),
                     "note": pa.array([f"row-{i % 97}" for i in range(n)])})


def log(path: Path, table: str, queries: int) -> str:
    rng = np.random.default_rng(9)
    lines = []
    for i in range(queries):
        lo = int(rng.integers(0, 990_000))
        lines.append(f"-- ts: 2024-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00\nSELECT sum(bytes) FROM "
                     f"{table} WHERE ip BETWEEN {lo} AND {lo + 10_000};")
    path.write_text("\n".join(lines))
    return str(path)


def make_tables(settings, root: Path, args: argparse.Namespace) -> list[str]:
    data = table_data(args.files * args.rows, 5)
    catalog = iceberg.workspace_catalog(str(settings.home))
    catalog.create_namespace_if_not_exists("ns")
    tbl = catalog.create_table("ns.ice", schema=data.schema)
    for i in range(0, data.num_rows, args.rows):
        tbl.append(data.slice(i, args.rows))
    api.register_iceberg(settings, "ice", "ns.ice")
    for i in range(0, data.num_rows, args.rows):
        write_deltalake(str(root / "delta"), data.slice(i, args.rows), mode="append")
    api.register_delta(settings, "dl", str(root / "delta"))
    folder = root / "folder"
    folder.mkdir()
    for i in range(args.files):
        pq.write_table(data.slice(i * args.rows, args.rows), folder / f"part-{i:04d}.parquet")
    api.register_table(settings, "pf", str(folder))
    big = root / "big"
    big.mkdir()
    big_data = table_data(args.big_files * args.big_rows, 6)
    for i in range(args.big_files):
        pq.write_table(big_data.slice(i * args.big_rows, args.big_rows), big / f"big-{i}.parquet",
                       row_group_size=args.big_row_group)
    api.register_table(settings, "big", str(big))
    return ["ice", "dl", "pf", "big"]


def measure(settings, table: str, root: Path, args: argparse.Namespace, carol, alice, bob) -> dict:
    if table == "big":
        settings = dataclasses.replace(settings, prune_row_groups=True)
    api.import_workload(settings, table, log(root / f"{table}.sql", table, args.queries))
    plan = api.create_plan(settings, table, "wair", {"window": args.queries}, created_by=carol)
    if not plan.groups:
        return {"table": table, "no_plan": plan.reason}
    t0 = time.perf_counter()
    checked = api.verify_plan(settings, plan.id, alice)
    verify_s = time.perf_counter() - t0
    if api.approve_plan(settings, plan.id, alice, reason="bench").status == "proposed":
        api.approve_plan(settings, plan.id, bob, reason="bench")
    result = api.run_plan(settings, plan.id, actor=alice)
    real = result["re_estimated"]
    predicted = float(plan.predicted_saving["bytes"])
    shapes = plan.details["output"]["groups"]
    return {"table": table, "groups": len(plan.groups),
            "files_in": sum(len(g["partitions"]) for g in plan.groups),
            "files_out": result["partitions_added"],
            "shape": shapes[0], "bytes_before": real["bytes_before"],
            "bytes_after": real["bytes_after"], "predicted": predicted,
            "verified": checked.verified_bytes, "realized": real["saving_bytes"],
            "realized_over_predicted": real["saving_bytes"] / predicted if predicted else None,
            "verified_over_realized": (checked.verified_bytes / real["saving_bytes"]
                                       if real["saving_bytes"] else None),
            "sample": checked.sample, "verify_seconds": verify_s,
            "delivery": result["delivery"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=48)
    p.add_argument("--rows", type=int, default=4_000)
    p.add_argument("--big-files", dest="big_files", type=int, default=4)
    p.add_argument("--big-rows", dest="big_rows", type=int, default=250_000)
    p.add_argument("--big-row-group", dest="big_row_group", type=int, default=25_000)
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.files, args.rows, args.big_files, args.big_rows, args.big_row_group = 8, 1_000, 2, 20_000, 2_000
    root = Path(tempfile.mkdtemp(prefix="la-bench-promise-"))
    settings = load_settings({"home": str(root / "home")}, environ={})
    api.add_approver(settings, "alice", SECRET, admin=True)
    alice = api.authenticate(settings, "alice", SECRET)
    api.add_approver(settings, "bob", SECRET, actor=alice)
    bob = api.authenticate(settings, "bob", SECRET)
    api.add_approver(settings, "carol", SECRET, actor=alice)
    carol = api.authenticate(settings, "carol", SECRET)  # proposes; alice and bob approve
    rows = [measure(settings, t, root, args, carol, alice, bob)
            for t in make_tables(settings, root, args)]
    out = {"args": vars(args), "tables": rows}
    (HERE / "results.json").write_text(json.dumps(out, indent=1, default=str))
    for r in rows:
        if "no_plan" in r:
            print(f"{r['table']:>4}: no plan ({r['no_plan']})")
            continue
        s = r["sample"]
        print(f"{r['table']:>4}: {r['files_in']} -> {r['files_out']} files "
              f"({r['shape']['rows_per_file']:,} rows, {r['shape']['row_groups_per_file']} row groups); "
              f"window {r['bytes_before'] / 2**20:.1f} -> {r['bytes_after'] / 2**20:.1f} MiB; "
              f"realized/predicted {r['realized_over_predicted']:.2f}, verified/realized "
              f"{r['verified_over_realized']:.2f}; DuckDB on the sample {s['duck_bytes_before'] / 2**20:.1f}"
              f" -> {s['duck_bytes_after'] / 2**20:.1f} MiB, {s['duck_seconds_before']:.3f} -> "
              f"{s['duck_seconds_after']:.3f} s; verify {r['verify_seconds']:.1f} s; "
              f"underdelivered {r['delivery']['underdelivered']}")


if __name__ == "__main__":
    main()
