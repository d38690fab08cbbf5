"""Iceberg metadata loading: the advisor's snapshot (partitions + decoded zonemaps) against
pyiceberg's own ``inspect.files()`` on the same table (goal: within 1.5x).

The table holds N data-file entries with bounds on 6 columns (int, date, timestamptz,
decimal, string, double), committed with one fast append; the files themselves are not
written (only metadata is read). Run: ``PYTHONPATH=. python bench/formats/bench_formats.py --files
100000``; results go to bench/formats/README.md by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import os
import sys
import tempfile
import time

import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from pyiceberg.conversions import to_bytes  # noqa: E402
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat  # noqa: E402
from pyiceberg.typedef import Record  # noqa: E402

from engine.table.formats import iceberg  # noqa: E402

SCHEMA = pa.schema([("k", pa.int64()), ("d", pa.date32()), ("ts", pa.timestamp("us", tz="UTC")),
                    ("price", pa.decimal128(12, 2)), ("s", pa.string()), ("x", pa.float64())])


def _bounds(tbl, i: int) -> tuple[dict, dict]:
    lo = {"k": i * 1000, "d": dt.date(2020, 1, 1) + dt.timedelta(days=i % 3000),
          "ts": 1_600_000_000_000_000 + i,
          "price": (decimal.Decimal(i) / 100).quantize(decimal.Decimal("0.01")),
          "s": f"name-{i:07d}", "x": float(i)}
    hi = {"k": i * 1000 + 999, "d": lo["d"] + dt.timedelta(days=30), "ts": lo["ts"] + 999,
          "price": lo["price"] + 1, "s": f"name-{i + 1:07d}", "x": float(i) + 1}
    lower, upper = {}, {}
    for f in tbl.schema().fields:
        conv = (lambda v: (v - dt.date(1970, 1, 1)).days) if f.name == "d" else (lambda v: v)
        lower[f.field_id] = to_bytes(f.field_type, conv(lo[f.name]))
        upper[f.field_id] = to_bytes(f.field_type, conv(hi[f.name]))
    return lower, upper


def build(catalog, n: int):
    tbl = iceberg.create_table(catalog, "bench.t", SCHEMA)
    ids = [f.field_id for f in tbl.schema().fields]
    files = []
    for i in range(n):
        lower, upper = _bounds(tbl, i)
        files.append(DataFile.from_args(
            content=DataFileContent.DATA, file_path=f"{tbl.location()}/data/f{i:07d}.parquet",
            file_format=FileFormat.PARQUET, partition=Record(), record_count=1000,
            file_size_in_bytes=40_000, column_sizes={c: 6000 for c in ids},
            value_counts={c: 1000 for c in ids}, null_value_counts={c: 0 for c in ids},
            nan_value_counts={}, lower_bounds=lower, upper_bounds=upper, spec_id=0))
    with tbl.transaction() as tx, tx.update_snapshot().fast_append() as append:
        for f in files:
            append.append_data_file(f)
    return tbl


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        catalog = iceberg.workspace_catalog(home)
        start = time.perf_counter()
        tbl = build(catalog, args.files)
        built = time.perf_counter() - start
        start = time.perf_counter()
        files = catalog.load_table("bench.t").inspect.files()
        t_inspect = time.perf_counter() - start
        fmt = iceberg.IcebergFormat("t", "bench.t", catalog)
        start = time.perf_counter()
        snap = fmt.table() and fmt._read(fmt.table(), tbl.current_snapshot().snapshot_id)
        t_read = time.perf_counter() - start
        start = time.perf_counter()
        snap.zonemaps()
        t_zm = time.perf_counter() - start
        assert snap.partition_count == files.num_rows == args.files
        print(f"files={args.files} build={built:.1f}s inspect.files()={t_inspect:.2f}s "
              f"advisor snapshot={t_read:.2f}s (+zonemaps {t_zm:.2f}s) "
              f"ratio={(t_read + t_zm) / t_inspect:.2f}x")


if __name__ == "__main__":
    main()
