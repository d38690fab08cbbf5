"""A cold process's snapshot load with and without the zonemap cache.

Every CLI command and every dashboard start is a fresh interpreter whose first step is
the current snapshot's zonemaps. This times exactly that step (``TableStore(...)
.current_snapshot(table).zonemaps()``, imports excluded) in fresh processes, runs
interleaved:

* ``manifest``: the cache folder deleted first, so the manifest is read, the arrays built
  and the cache entry written (what the first process after a commit pays);
* ``cached``: the entry present (every later process);
* with ``--code DIR`` also the same step in another checkout (e.g. main before the cache).

    .venv/bin/python bench/ui/bench_ui_scale.py --partitions 1000000 --home /tmp/ws --pages overview
    .venv/bin/python bench/planning/bench_zonemap_cache.py --home /tmp/ws --runs 5 --code /tmp/main
    .venv/bin/python bench/planning/bench_zonemap_cache.py --home /tmp/mixed --table mixed --mixed 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: a child's first lines: imports, ``cpu()`` (this process's CPU seconds), ``settings`` of the
#: workspace argv[1] (also used by bench/paw/paw_rowgroup_cache.py)
CHILD_PREAMBLE = """
import json, resource, sys, time
from engine.core.config import load_settings
from engine.table.store import TableStore
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
settings = load_settings({"home": sys.argv[1]}, environ={})
"""
CHILD = CHILD_PREAMBLE + """
c, t = cpu(), time.perf_counter()
zm = TableStore(settings).current_snapshot(sys.argv[2]).zonemaps()
print(json.dumps({"load_s": time.perf_counter() - t, "load_cpu_s": cpu() - c, "partitions": len(zm),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def one(home: str, table: str, code: Path, child: str = CHILD) -> dict:
    """The JSON line ``child`` prints, run in a fresh interpreter on ``code`` (argv: home, table)."""
    out = subprocess.run([sys.executable, "-c", child, home, table], capture_output=True, text=True,
                         cwd=str(code), env={**os.environ, "PYTHONPATH": str(code)})
    if out.returncode != 0:
        raise SystemExit(f"load failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def build_mixed(home: Path, n: int, table: str) -> None:
    """A native table whose one snapshot holds ``bench_planning.mixed_manifest(n)`` (16
    columns of every type, strings included), written at the metadata level as
    bench_ui_scale.py does."""
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from manifest_helpers import mixed_manifest
    from engine.core.config import load_settings
    from engine.table.model import ColumnStats, Partition
    from engine.table.store import TableStore

    schema, manifest_table, _ = mixed_manifest(n)
    settings = load_settings({"home": str(home)}, environ={})
    one = Partition("/nonexistent/part-0.parquet", 1, 1, {c: ColumnStats(None, None, 0, 1)
                                                          for c in schema.names})
    snap = TableStore(settings).create(table, schema=schema, partitions=[one], operation="register",
                                       managed=False, location="/nonexistent")
    info = TableStore(settings).info(table)
    header = json.loads(Path(info.metadata_dir, f"snap-{int(snap.id):08d}.json").read_text())
    pq.write_table(manifest_table, os.path.join(info.metadata_dir, header["manifest"]),
                   compression="zstd")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="a workspace (e.g. bench_ui_scale.py's --home)")
    ap.add_argument("--table", default="lineitem")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--code", action="append", default=[], help="another checkout to time too")
    ap.add_argument("--mixed", type=int, metavar="N",
                    help="first build table --table in --home from bench_planning's mixed-type "
                         "manifest of N partitions (16 columns, strings included)")
    args = ap.parse_args(argv)
    if args.mixed and not (Path(args.home) / "tables" / args.table).exists():
        build_mixed(Path(args.home), args.mixed, args.table)
    cache = Path(args.home) / "cache" / "zonemaps" / args.table
    variants = {"manifest": ROOT, "cached": ROOT, **{f"code:{c}": Path(c) for c in args.code}}
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for _ in range(args.runs):
        for name, code in variants.items():
            if name == "manifest":
                shutil.rmtree(cache, ignore_errors=True)
            runs[name].append(one(args.home, args.table, code))
    report(runs, ("partitions",), ("load_s", "load_cpu_s", "peak_rss_mb"))
    return 0


def report(runs: dict[str, list[dict]], same: tuple[str, ...], timed: tuple[str, ...], digits: int = 2) -> None:
    """One JSON line per variant: the ``same`` fields of its first run, the min and median of
    each ``timed`` field, the runs and the load average."""
    for name, rows in runs.items():
        out = {"variant": name, **{k: rows[0][k] for k in same}, "runs": len(rows),
               "load_average": round(os.getloadavg()[0], 1)}
        for key in timed:
            vals = [r[key] for r in rows]
            out[f"{key}_min"], out[f"{key}_median"] = round(min(vals), digits), round(statistics.median(vals), digits)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
