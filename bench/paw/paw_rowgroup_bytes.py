"""Row-group pruning's bytes: each row group charged its own chunks against the
file's bytes shared by rows, on pyarrow-written files in STR order.

A native table of ``--files`` files of ``--rows`` rows each over two clustered columns (x, y)
written in STR order (``descriptors.str_order``) with ``--groups`` row groups, plus a
compressible payload column whose width varies with the data (a text that repeats more in
some regions); ``--queries`` random boxes on x and y, each projecting x, y and the payload.
Prints per query the bytes charged at file level, at row-group level with the row share
(forced by zeroing the stored sizes) and with each row group's own chunk sizes,
and checks the last against a brute force over the footers (pyarrow
``total_compressed_size`` of the row groups a query's box meets).

    PYTHONPATH=. python bench/paw/paw_rowgroup_bytes.py --files 40 --rows 5000 --groups 3 --queries 200
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from engine.core.config import load_settings  # noqa: E402 - after the path
from engine.design.paw.descriptors import str_order  # noqa: E402
from engine.scan import rowgroups  # noqa: E402
from engine.scan.pruning import analyze_workload  # noqa: E402
from engine.table.footers import read_partitions  # noqa: E402
from engine.table.store import TableStore  # noqa: E402
from engine.workload.model import Range, ScanFragment  # noqa: E402

COLUMNS = ("x", "y", "payload")


def write_table(home: str, files: int, rows: int, groups: int, seed: int):
    rng = np.random.default_rng(seed)
    settings = load_settings({"home": home}, environ={})
    store = TableStore(settings)
    root = store.managed_location("t")
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    paths = []
    for i in range(files):
        centre = rng.uniform(0, 90, 2)
        x = rng.uniform(centre, centre + 10, (rows, 2))
        x = x[np.concatenate(str_order(x, groups))]
        # the payload repeats a few words where x is small and is random text elsewhere, so
        # row groups of the same row count differ in compressed size
        words = np.where(x[:, 0] < centre[0] + 5, "same words again",
                         [f"{v:.9f}-{w:.9f}" for v, w in rng.uniform(size=(rows, 2))])
        path = os.path.join(root, "data", f"part-{i:05d}.parquet")
        pq.write_table(pa.table({"x": x[:, 0], "y": x[:, 1], "payload": words}), path,
                       row_group_size=-(-rows // groups))
        paths.append(path)
    schema, parts = read_partitions(paths)
    return store, store.create("t", schema=schema, partitions=parts, operation="create", target_rows=rows)


def brute_bytes(paths: list[str], frag: ScanFragment) -> float:
    total = 0.0
    for path in paths:
        meta = pq.ParquetFile(path).metadata
        names = [meta.schema.column(j).name for j in range(meta.num_columns)]
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            st = {c: rg.column(names.index(c)).statistics for c in ("x", "y")}
            if all(st[c].min <= r.max and st[c].max >= r.min for c, r in frag.boxes[0].items()):
                total += sum(rg.column(names.index(c)).total_compressed_size for c in COLUMNS)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--groups", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        store, snap = write_table(home, args.files, args.rows, args.groups, args.seed)
        groups = rowgroups.for_snapshot(store, "t", snap)
        zeros = np.zeros(len(groups), np.int64)
        by_rows = dataclasses.replace(groups, zonemaps=dataclasses.replace(
            groups.zonemaps, bytes=zeros,
            columns={c: dataclasses.replace(v, compressed_bytes=zeros) for c, v in groups.zonemaps.columns.items()}))
        rng = np.random.default_rng(args.seed + 1)
        frags = []
        for k in range(args.queries):
            lo = rng.uniform(0, 100, 2)
            hi = lo + rng.uniform(0.5, 8, 2)
            frags.append(ScanFragment(f"q{k}", "t", ({"x": Range(lo[0], hi[0]), "y": Range(lo[1], hi[1])},), COLUMNS))
        zm = snap.zonemaps()
        level = {name: [s.bytes_scanned for s in analyze_workload(zm, frags, g)]
                 for name, g in (("files", None), ("row share", by_rows), ("own sizes", groups))}
        paths = [p.path for p in snap.partitions]
        brute = [brute_bytes(paths, f) for f in frags]
        assert level["own sizes"] == brute, "row-group bytes differ from the footers' brute force"
        q = len(frags)
        print(f"{args.files} files x {args.rows} rows, {args.groups} STR row groups each, {q} queries "
              f"(x, y, payload projected); bytes per query:")
        for name, vals in level.items():
            print(f"  {name:<10} {sum(vals) / q:12,.0f}")
        share, own = np.array(level["row share"]), np.array(level["own sizes"])
        read = share > 0
        rel = own[read] / share[read] - 1
        print(f"  own sizes vs row share: total {own.sum() / share.sum() - 1:+.1%}; per query "
              f"{np.percentile(rel, 5):+.1%} .. {np.percentile(rel, 95):+.1%} (5th..95th percentile); "
              f"equal to the footers' brute force on all {q} queries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
