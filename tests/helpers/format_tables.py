"""Small tables of each format for the crash and input tests: made through the format's
own writer (pyiceberg appends, deltalake appends, native Parquet files), and read back
through the format's own reader (not the advisor's snapshot), as (rows, content hash)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

from engine import api
from engine.table.formats import iceberg
from engine.table.store import TableStore
from plan_helpers import lineitem_arrow, make_table

IDENT = "ns.lineitem"
NAME = "lineitem"


def digest(table: pa.Table) -> tuple[int, str]:
    """(rows, order-independent content hash)."""
    rows = sorted(repr(r) for r in table.to_pylist())
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def make(fmt: str, settings, tmp_path: Path, n: int = 2000, per_file: int = 500):
    """A table ``lineitem`` of ``n`` rows in files of ``per_file`` rows; its base snapshot."""
    data = lineitem_arrow(n)
    if fmt == "native":
        return make_table(settings, NAME, n=n, rows_per_file=per_file)
    if fmt == "iceberg":
        tbl = iceberg.create_table(iceberg.workspace_catalog(str(settings.home)), IDENT,
                                   data.schema)
        for i in range(0, n, per_file):
            tbl.append(data.slice(i, per_file))
        return api.register_iceberg(settings, NAME, IDENT)
    path = str(tmp_path / "delta_li")
    for i in range(0, n, per_file):
        write_deltalake(path, data.slice(i, per_file), mode="append")
    return api.register_delta(settings, NAME, path)


def read(fmt: str, settings) -> tuple[int, str]:
    """The table's rows through the format's own reader."""
    store = TableStore(settings)
    if fmt == "iceberg":
        catalog = iceberg.workspace_catalog(str(settings.home))
        return digest(catalog.load_table(IDENT).scan().to_arrow())
    if fmt == "delta":
        return digest(DeltaTable(store.info(NAME).location).to_pyarrow_table())
    snap = store.current_snapshot(NAME)
    return digest(pa.concat_tables([pq.read_table(p.path) for p in snap.partitions]))
