"""Commit overhead of a rewrite on Iceberg and Delta: the format's commit against the rewrite
itself (goal: the commit < 5% of the rewrite time at 10M rows).

A table of ROWS rows in FILES files (int64 key, date, double, string) is rewritten whole:
read, sorted on the date, written back as FILES new files with pyarrow (a stand-in for the
Spark executor's write, which is slower, so the ratio here is an upper bound), then
committed: the new files' footers read once (as the executor reads them for its zonemaps)
and ``commit_rewrite`` (one format commit, built from those footer statistics). Both parts
are printed; the goal counts their sum.
Run: ``PYTHONPATH=. python bench/formats/bench_commit.py --rows 2000000 --files 20``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake
from pyiceberg.io.pyarrow import parquet_file_to_data_file

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from engine.table.footers import read_partitions  # noqa: E402
from engine.table.formats import delta, iceberg  # noqa: E402


def data(rows: int) -> pa.Table:
    rng = np.random.default_rng(1)
    days = rng.integers(8000, 11000, rows).astype("int32")
    return pa.table({"k": pa.array(np.arange(rows, dtype=np.int64)),
                     "d": pa.array(days, pa.int32()).cast(pa.date32()),
                     "x": pa.array(rng.random(rows)),
                     "s": pa.array(np.char.add("c", (days % 97).astype(str)))})


def rewrite(paths: list[str], out_dir: str, files: int) -> tuple[list[str], float]:
    start = time.perf_counter()
    table = pa.concat_tables([pq.read_table(p.replace("file://", "")) for p in paths]).sort_by("d")
    os.makedirs(out_dir, exist_ok=True)
    step = -(-table.num_rows // files)
    out = []
    for i in range(files):
        path = os.path.join(out_dir, f"part-{i:05d}.parquet")
        pq.write_table(table.slice(i * step, step), path)
        out.append(path)
    return out, time.perf_counter() - start


def commit(fmt, base, out: list[str]) -> tuple[float, float]:
    """(footer read, format commit) seconds."""
    start = time.perf_counter()
    _, added = read_partitions(out)
    mid = time.perf_counter()
    fmt.commit_rewrite(base.id, [p.path for p in base.partitions], added, {"plan_id": "b"})
    return mid - start, time.perf_counter() - mid


def iceberg_rewritten(home: str, table: pa.Table, files: int):
    """An Iceberg table of ``files`` appends, rewritten: (catalog, format, base snapshot,
    new files, rewrite seconds)."""
    catalog = iceberg.workspace_catalog(home)
    tbl = iceberg.create_table(catalog, "b.t", table.schema)
    step = -(-table.num_rows // files)
    for i in range(files):
        tbl.append(table.slice(i * step, step))
    fmt = iceberg.IcebergFormat("t", "b.t", catalog)
    base = fmt.current_snapshot()
    out, t_rewrite = rewrite([p.path for p in base.partitions],
                             fmt.data_location().replace("file://", "") + "/rw", files)
    return catalog, fmt, base, out, t_rewrite


def bench_iceberg(home: str, table: pa.Table, files: int) -> tuple[float, float, float]:
    _, fmt, base, out, t_rewrite = iceberg_rewritten(home, table, files)
    return (t_rewrite, *commit(fmt, base, out))


def bench_iceberg_plain(home: str, table: pa.Table, files: int) -> tuple[float, float, float]:
    """The same commit through pyiceberg's public path alone (the previous round's commit):
    ``Table.transaction()``, an overwrite, every new footer read again by
    ``parquet_file_to_data_file``."""
    catalog, _, base, out, t_rewrite = iceberg_rewritten(home, table, files)
    start = time.perf_counter()
    read_partitions(out)
    mid = time.perf_counter()
    tbl = catalog.load_table("b.t")
    live = {e.data_file.file_path: e.data_file for m in tbl.current_snapshot().manifests(tbl.io)
            for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True)}
    with tbl.transaction() as tx, tx.update_snapshot().overwrite() as ow:
        for p in base.partitions:
            ow.delete_data_file(live[p.path])
        for path in out:
            ow.append_data_file(parquet_file_to_data_file(tbl.io, tbl.metadata, f"file://{path}"))
    return t_rewrite, mid - start, time.perf_counter() - mid


def bench_delta(root: str, table: pa.Table, files: int) -> tuple[float, float, float]:
    step = -(-table.num_rows // files)
    for i in range(files):
        write_deltalake(root, table.slice(i * step, step), mode="append")
    fmt = delta.DeltaFormat("t", root)
    base = fmt.current_snapshot()
    out, t_rewrite = rewrite([p.path for p in base.partitions], os.path.join(root, "rw"), files)
    return (t_rewrite, *commit(fmt, base, out))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--plain", action="store_true",
                        help="also commit through pyiceberg's public path alone (side by side)")
    args = parser.parse_args()
    table = data(args.rows)
    runs = [("iceberg", lambda tmp: bench_iceberg(os.path.join(tmp, "h"), table, args.files)),
            ("delta", lambda tmp: bench_delta(os.path.join(tmp, "dl"), table, args.files))]
    if args.plain:
        runs.insert(1, ("iceberg-plain-pyiceberg",
                        lambda tmp: bench_iceberg_plain(os.path.join(tmp, "p"), table, args.files)))
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in ((n, lambda r=r: r(tmp)) for n, r in runs):
            t_rewrite, t_footers, t_commit = run()
            total = t_footers + t_commit
            print(f"{name}: rows={args.rows} files={args.files} rewrite={t_rewrite:.2f}s "
                  f"footers={t_footers:.3f}s commit={t_commit:.3f}s "
                  f"(footers+commit)/rewrite={100 * total / t_rewrite:.1f}%")


if __name__ == "__main__":
    main()
