"""A fresh process's row-group load (``engine.scan.rowgroups.for_snapshot``) with and
without the round-7 disk cache, on a native table of N files (metadata only), a share of
them with several row groups (PAW's STR row groups).

Every CLI command is a fresh interpreter: with ``prune_row_groups`` on, it reads the
snapshot's ``.rowgroups.parquet``, keeps the multi-row-group files' row groups and matches
them to their files (1.8 CPU-s at 1M files). The cache stores the result once per
snapshot. Times, in fresh processes run interleaved (imports and the snapshot's own zonemap
load excluded, the zonemap cache warm in both):

* ``cold``: the row-group cache folder deleted first (what the first process pays, and
  the cost without the cache);
* ``cached``: the entry present (every later process).

    PYTHONPATH=. python bench/paw/paw_rowgroup_cache.py --home /tmp/rgc --files 1000000 --multi 0.1 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from bench.planning.bench_zonemap_cache import CHILD_PREAMBLE, one, report  # noqa: E402 - after the path

CHILD = CHILD_PREAMBLE + """
from engine.scan import rowgroups
store = TableStore(settings)
snap = store.current_snapshot(sys.argv[2])
snap.zonemaps()
c, t = cpu(), time.perf_counter()
groups = rowgroups.for_snapshot(store, sys.argv[2], snap)
print(json.dumps({"load_s": time.perf_counter() - t, "load_cpu_s": cpu() - c,
                  "files": len(snap.zonemaps()), "row_groups_held": len(groups), "total": groups.total}))
"""


def build(home: Path, table: str, n: int, multi: float, groups: int) -> None:
    """A native table of ``n`` files of 1,000 rows over a clustered column ``x`` (file i holds
    [1000 i, 1000 i + 999]); a ``multi`` share of them has ``groups`` row groups splitting
    that range evenly. Written at the metadata level (manifest and row-group file), as
    ``bench_zonemap_cache.py`` does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.core.config import load_settings
    from engine.table import manifest
    from engine.table.model import ColumnStats, Partition, TableSchema
    from engine.table.store import TableStore

    schema = TableSchema((("x", "float"),))
    settings = load_settings({"home": str(home)}, environ={})
    one = Partition("/nonexistent/part-0.parquet", 1, 1, {"x": ColumnStats(0.0, 0.0, 0, 1)})
    snap = TableStore(settings).create(table, schema=schema, partitions=[one], operation="register",
                                       managed=False, location="/nonexistent")
    info = TableStore(settings).info(table)
    header = json.loads(Path(info.metadata_dir, f"snap-{int(snap.id):08d}.json").read_text())
    rng = np.random.default_rng(0)
    lo = np.arange(n, dtype=np.float64) * 1000.0
    paths = pa.array([f"/nonexistent/f{i:07d}.parquet" for i in range(n)], pa.string())
    has = rng.uniform(size=n) < multi
    rg_name = f"snap-{int(snap.id):08d}.rowgroups.parquet"
    man = pa.table({"path": paths, "rows": np.full(n, 1000, np.int64), "bytes": np.full(n, 8000, np.int64),
                    "created_seq": np.arange(n, dtype=np.int64),
                    "rg_file": pa.array(np.where(has, rg_name, None).tolist(), pa.string()),
                    "c0_min": lo, "c0_max": lo + 999.0, "c0_nulls": np.zeros(n, np.int64),
                    "c0_cbytes": np.full(n, 8000, np.int64)}, schema=manifest.manifest_schema(schema))
    pq.write_table(man, os.path.join(info.metadata_dir, header["manifest"]), compression="zstd")
    owner = np.repeat(np.flatnonzero(has), groups)
    k = np.tile(np.arange(groups), int(has.sum()))
    rg_lo = lo[owner] + k * (1000.0 / groups)
    size = np.full(len(owner), 8000 // groups, np.int64)
    rg = pa.table({"path": paths.take(pa.array(owner)), "row_group": k.astype(np.int32),
                   "rows": np.full(len(owner), 1000 // groups, np.int64), "c0_min": rg_lo,
                   "c0_max": rg_lo + 1000.0 / groups - 1.0, "c0_nulls": np.zeros(len(owner), np.int64),
                   "c0_bytes": size})
    pq.write_table(rg, os.path.join(info.metadata_dir, rg_name), compression="zstd")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="a workspace folder (created)")
    ap.add_argument("--table", default="t")
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--multi", type=float, default=0.1, help="share of files with several row groups")
    ap.add_argument("--groups", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    if not (Path(args.home) / "tables" / args.table).exists():
        build(Path(args.home), args.table, args.files, args.multi, args.groups)
    cache = Path(args.home) / "cache" / "zonemaps" / args.table / ".rowgroups"
    runs: dict[str, list[dict]] = {"cold": [], "cached": []}
    one(args.home, args.table, ROOT, CHILD)  # warms the zonemap cache
    for _ in range(args.runs):
        for name in runs:
            if name == "cold":
                shutil.rmtree(cache, ignore_errors=True)
            runs[name].append(one(args.home, args.table, ROOT, CHILD))
    report(runs, ("files", "row_groups_held"), ("load_s", "load_cpu_s"), digits=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
