"""A table's identity in the workspace: ``<home>/tables/<name>/table.json``.

:class:`TableInfo` says where a table's data lives, where its workspace metadata lives,
whether the advisor manages the data, which format stores the table and how big its
micro-partitions should be. It is written once, when the table is created or registered,
and read by every command that opens the table.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

from engine.core.errors import DataFileError
from engine.table.metadata_io import read_json, write_atomic

__all__ = ["TABLE_FILE", "TableInfo", "read_info", "write_info"]

TABLE_FILE = "table.json"


@dataclass(frozen=True)
class TableInfo:
    """Where a table lives and how big its micro-partitions should be."""

    name: str
    location: str  # data root (path or URI); for registered tables, the user's dataset
    metadata_dir: str
    managed: bool
    target_rows: int | None
    target_bytes: int | None
    created_at: str
    #: "native" (the snapshot chain of engine.table.formats.native) | "iceberg" | "delta"
    format: str = "native"
    #: Iceberg: the pyiceberg catalog's name (None: the workspace's SQLite catalog)
    catalog: str | None = None
    #: Iceberg: NAMESPACE.TABLE in that catalog
    identifier: str | None = None

    @property
    def data_root(self) -> str:
        """Where the advisor may write data files: the location of a managed table, the
        workspace's ``data/`` folder of a registered one (never inside the user's dataset)."""
        if self.managed:
            return self.location
        return os.path.join(os.path.dirname(self.metadata_dir), "data")

    @property
    def table_dir(self) -> str:
        """The table's folder in the workspace (``table.json``, ``metadata/``, ``leases/``)."""
        return os.path.dirname(self.metadata_dir)


def write_info(table_dir: str, info: TableInfo) -> None:
    """Write ``table.json`` (the table's identity: format, location, catalog) atomically."""
    write_atomic(os.path.join(table_dir, TABLE_FILE), json.dumps(asdict(info), indent=1).encode())


def read_info(table_dir: str) -> TableInfo:
    """The ``table.json`` of the table folder ``table_dir``, checked to belong to this
    workspace; a damaged or foreign description is a DataFileError naming the file."""
    path = os.path.join(table_dir, TABLE_FILE)
    data = read_json(path, "table description", "restore it from a backup")
    try:
        info = TableInfo(**data)
    except TypeError as exc:
        raise DataFileError(f"{path}: the table description is damaged ({exc}); restore "
                            "it from a backup") from None
    _check_own_workspace(info, os.path.join(table_dir, "metadata"), path)
    return info


def _check_own_workspace(info: TableInfo, here: str, path: str) -> None:
    """Refuse a table described by another workspace's ``table.json`` (a copied or moved
    workspace): its snapshots name the original's files by absolute path, so a commit or a
    gc here would change the original table."""
    recorded = info.metadata_dir
    same = os.path.realpath(recorded) == os.path.realpath(here) or (
        os.path.exists(recorded) and os.path.exists(here) and os.path.samefile(recorded, here))
    if not same:
        raise DataFileError(
            f"{path}: table {info.name!r} belongs to the workspace at "
            f"{os.path.dirname(os.path.dirname(os.path.dirname(recorded)))} (this workspace "
            "was copied or moved from there) and its snapshots name that workspace's files, so "
            "changing it here would change the original; use the original workspace, or "
            f"remove {os.path.dirname(path)} here and create or register the table again")
