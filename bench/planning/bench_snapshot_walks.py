"""Commands that walked ``Snapshot.partitions`` at 1,000,000 partitions, before and after.

On a zonemap-cache hit (:mod:`engine.table.zonemap_cache`) a snapshot's ``partitions``
are made from its manifest on access, one ``Partition`` object per file: a walk over all of
them reads the manifest and costs seconds at 1M, where the zonemap arrays are already in
memory. This times, in fresh processes with the cache warm (imports excluded), the
commands a user waits on that did such a walk:

* ``files``: ``api.table_files`` (``layout-advisor table files``);
* ``show``: ``api.show_table`` (``layout-advisor table show``; minutes at 1M, so not in
  the default steps);
* ``commit``: ``TableStore.commit`` removing ``--remove`` partitions and adding one real
  file (what Approve and run ends with), then a rollback to the base, untimed;
* ``inputs``: the Spark executor's look-up of a plan's ``--remove`` input partitions
  (``engine.spark.executor.plan_inputs``; before, a dict over every
  partition), and their rows and bytes as the job's group specs sum them;
* ``rollback``: ``TableStore.rollback`` to the first snapshot, with ``fs.exists`` answering
  True (the bench's table is metadata only; the one ``exists`` per file is the same I/O
  before and after and is not what is measured), then a commit back to where it was, untimed.

Each step leaves the table's content as it found it (new snapshots equal to the old ones
are added). With ``--code DIR`` the same steps run in another checkout too (e.g. ``main`` before the
change), interleaved A B A B so that load changes hit both alike.

    .venv/bin/python bench/ui/bench_ui_scale.py --partitions 1000000 --home /tmp/ws --pages overview
    .venv/bin/python bench/planning/bench_snapshot_walks.py --home /tmp/ws --runs 3 --code /tmp/main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, os, resource, sys, time
import pyarrow as pa, pyarrow.parquet as pq
from engine.core.config import load_settings
from engine.table import fs
from engine.table.model import ColumnStats, Partition
from engine.table.store import TableStore
from engine import api
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
home, table, step, remove, extra = sys.argv[1:6]
settings = load_settings({"home": home}, environ={})
store = TableStore(settings)
def added():
    path = os.path.join(extra, "added.parquet")
    if not os.path.exists(path):
        os.makedirs(extra, exist_ok=True)
        pq.write_table(pa.table({"x": [1, 2, 3]}), path)
    schema = store.current_snapshot(table).schema
    return [Partition(path, 3, os.path.getsize(path), {c: ColumnStats(None, None, 0, 0) for c in schema.names})]
out = {}
if step == "warm":  # load the current snapshot once: its zonemap-cache entry is written
    store.current_snapshot(table).zonemaps()
elif step == "files":
    c, t = cpu(), time.perf_counter()
    files = api.table_files(settings, table)
    out = {"s": time.perf_counter() - t, "cpu_s": cpu() - c, "files": len(files)}
elif step == "show":
    c, t = cpu(), time.perf_counter()
    shown = api.show_table(settings, table)
    out = {"s": time.perf_counter() - t, "cpu_s": cpu() - c, "partitions": len(shown["partitions"])}
elif step == "commit":
    base = store.current_snapshot(table)
    new = added()
    removed = base.zonemaps().paths[:int(remove)].tolist()
    c, t = cpu(), time.perf_counter()
    # "append", not "recluster": a reclustered snapshot without the plans behind it makes
    # the workspace refuse to create its control store (the dashboard would not open)
    snap = store.commit(table, base.id, removed, new, operation="append")
    out = {"s": time.perf_counter() - t, "cpu_s": cpu() - c, "partitions": len(snap.zonemaps())}
    fs.exists = lambda path: True  # metadata only: the base's files do not exist
    store.rollback(table, base.id)
elif step == "inputs":  # the executor's look-up of a plan's --remove input partitions
    snap = store.current_snapshot(table)
    paths = snap.zonemaps().paths[len(snap.zonemaps()) // 2:][:int(remove)].tolist()
    c, t = cpu(), time.perf_counter()
    try:
        from engine.spark.executor import plan_inputs
        by_path = plan_inputs(snap, paths)
    except ImportError:  # before: one Partition per file of the table
        by_path = {p.path: p for p in snap.partitions}
    parts = [by_path[p] for p in paths]
    sizes = (sum(p.rows for p in parts), sum(p.bytes for p in parts))  # as group_specs
    out = {"s": time.perf_counter() - t, "cpu_s": cpu() - c, "partitions": len(parts)}
elif step == "rollback":
    first = store.history(table)[0]["id"]
    here = store.current_snapshot(table).id
    fs.exists = lambda path: True
    c, t = cpu(), time.perf_counter()
    snap = store.rollback(table, first)
    out = {"s": time.perf_counter() - t, "cpu_s": cpu() - c, "partitions": len(snap.zonemaps())}
    store.rollback(table, here)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def one(home: str, table: str, step: str, remove: int, code: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, home, table, step, str(remove),
                          str(Path(home).parent / "bench-snapshot-walks")],
                         capture_output=True, text=True, cwd=str(code),
                         env={**os.environ, "PYTHONPATH": str(code)})
    if out.returncode != 0:
        raise SystemExit(f"{step} failed in {code}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="a workspace built by bench_ui_scale.py")
    ap.add_argument("--table", default="lineitem")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--remove", type=int, default=100, help="partitions a commit removes")
    ap.add_argument("--steps", default="files,commit,rollback")
    ap.add_argument("--code", action="append", default=[],
                    help="another checkout to time as well (repeatable)")
    args = ap.parse_args(argv)
    codes = {"this": ROOT, **{Path(c).name or c: Path(c) for c in args.code}}
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.runs):
        for step in args.steps.split(","):
            for label, code in codes.items():
                one(args.home, args.table, "warm", args.remove, code)
                row = one(args.home, args.table, step, args.remove, code)
                results.setdefault((step, label), []).append(row)
                print(json.dumps({"step": step, "code": label, **{k: round(v, 2) for k, v in row.items()},
                                  "load": round(os.getloadavg()[0], 1)}), flush=True)
    for (step, label), rows in results.items():
        print(json.dumps({"step": step, "code": label, "runs": len(rows),
                          "median_cpu_s": round(statistics.median(r["cpu_s"] for r in rows), 2),
                          "median_s": round(statistics.median(r["s"] for r in rows), 2),
                          "peak_rss_mb": round(max(r["peak_rss_mb"] for r in rows))}))
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
