"""Shared setup of the Iceberg and Delta tests: real tables (a pyiceberg SQL catalog on
SQLite in the test's workspace, deltalake tables in temporary folders), a rewrite group
written by hand, and the formats' own readers reduced to (row count, content hash)."""

from __future__ import annotations

import hashlib
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake
from pyiceberg.transforms import IdentityTransform

from engine import api
from engine.table.footers import read_partitions
from engine.table.formats import iceberg
from engine.table.store import TableStore

IDENT = "ns.lineitem"


def digest(table: pa.Table) -> tuple[int, str]:
    """(rows, order-independent content hash) of an Arrow table."""
    rows = sorted(repr(r) for r in table.to_pylist())
    return len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()


def local(path: str) -> str:
    """A data file's local path (Iceberg names files by ``file://`` URI)."""
    return path.replace("file://", "")


# -- Iceberg -------------------------------------------------------------------------------
def iceberg_table(settings, data: pa.Table, rows_per_file: int, ident: str = IDENT,
                  identity: str | None = None, properties: dict | None = None):
    """(catalog, table) of the workspace catalog holding ``data``, one append per
    ``rows_per_file`` rows (one data file each, or one per value of the ``identity``
    partition column)."""
    catalog = iceberg.workspace_catalog(str(settings.home))
    catalog.create_namespace_if_not_exists(ident.rsplit(".", 1)[0])
    tbl = catalog.create_table(ident, schema=data.schema, properties=properties or {})
    if identity:
        with tbl.update_spec() as spec:
            spec.add_field(identity, IdentityTransform(), identity)
        tbl = catalog.load_table(ident)
    for i in range(0, data.num_rows, rows_per_file):
        tbl.append(data.slice(i, rows_per_file))
    return catalog, catalog.load_table(ident)


def iceberg_scan(catalog, ident: str = IDENT) -> tuple[int, str]:
    """What pyiceberg's own reader returns, as :func:`digest`."""
    return digest(catalog.load_table(ident).scan().to_arrow())


def live_data_files(tbl) -> dict:
    """The current snapshot's live DataFiles by path, read the plain pyiceberg way."""
    return {e.data_file.file_path: e.data_file for m in tbl.current_snapshot().manifests(tbl.io)
            for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True)}


def delete_data_file(catalog, ident: str, path: str) -> None:
    """Another writer's overwrite that deletes the live data file ``path``."""
    other = catalog.load_table(ident)
    with other.transaction() as tx, tx.update_snapshot().overwrite() as ow:
        ow.delete_data_file(live_data_files(other)[path])


# -- Delta ---------------------------------------------------------------------------------
def delta_table(path: str, data: pa.Table, rows_per_file: int, **kwargs) -> None:
    """A Delta table at ``path``: one append (one file per partition) per ``rows_per_file``."""
    for i in range(0, data.num_rows, rows_per_file):
        write_deltalake(path, data.slice(i, rows_per_file), mode="append", **kwargs)


def delta_scan(path: str) -> tuple[int, str]:
    """What deltalake's own reader returns, as :func:`digest`."""
    return digest(pa.table(DeltaTable(path).to_pyarrow_table()))


# -- a rewrite group by hand -------------------------------------------------------------------
def rewrite_file(store: TableStore, name: str, paths: Sequence[str], tag: str,
                 key: str = "l_shipdate") -> list:
    """One file of ``paths``' rows sorted by ``key`` under the table's data location (a
    stand-in for one group of the executor); its footer statistics as partitions."""
    rows = pa.concat_tables([pq.read_table(local(p)) for p in paths]).sort_by(key)
    out = f"{store.new_data_dir(name, tag)}/part-0.parquet"
    pq.write_table(rows, local(out))
    return read_partitions([out])[1]


# -- registered tables ---------------------------------------------------------------------
def registered_iceberg(settings, data: pa.Table, rows_per_file: int, name: str = "li"):
    """(catalog, store, base snapshot) of ``data`` as an Iceberg table registered as ``name``."""
    catalog, _ = iceberg_table(settings, data, rows_per_file)
    base = api.register_iceberg(settings, name, IDENT)
    return catalog, TableStore(settings), base


def registered_delta(settings, path: str, data: pa.Table, rows_per_file: int,
                     name: str = "li"):
    """(store, base snapshot) of ``data`` as a Delta table at ``path`` registered as ``name``."""
    delta_table(path, data, rows_per_file)
    base = api.register_delta(settings, name, path)
    return TableStore(settings), base
