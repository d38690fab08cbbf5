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
from typing import Mapping

from engine.core.errors import DataFileError
from engine.table.metadata_io import read_json, write_atomic

__all__ = ["TABLE_FILE", "TableInfo", "WriteTarget", "read_info", "write_info", "write_target"]

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


@dataclass(frozen=True)
class WriteTarget:
    """A table's own sizes for the files a rewrite writes, each ``None`` when the table
    sets none; ``source`` names where they come from (a format property, the native
    table's target)."""

    file_rows: int | None = None
    file_bytes: int | None = None
    row_group_rows: int | None = None
    row_group_bytes: int | None = None
    source: str = ""

    @property
    def sets_file_size(self) -> bool:
        return bool(self.file_rows and self.file_rows > 0) or bool(self.file_bytes and self.file_bytes > 0)



#: the format properties the output model reads: (property, WriteTarget field, source name)
WRITE_PROPERTIES = (
    ("write.target-file-size-bytes", "file_bytes", "Iceberg write.target-file-size-bytes"),
    ("write.parquet.row-group-limit", "row_group_rows", "Iceberg write.parquet.row-group-limit"),
    ("write.parquet.row-group-size-bytes", "row_group_bytes", "Iceberg write.parquet.row-group-size-bytes"),
    ("delta.targetFileSize", "file_bytes", "Delta delta.targetFileSize"),
)

_UNITS = {"b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30}


def _size(text: str) -> int | None:
    """A size property: bytes, or a number with a unit (``128mb``, as Delta accepts)."""
    t = str(text).strip().lower().replace(" ", "")
    digits = t.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = t[len(digits):] or "b"
    try:
        value = int(float(digits) * _UNITS[unit])
    except (ValueError, KeyError):
        return None
    return value if value > 0 else None


def write_target(info: TableInfo, properties: Mapping[str, str]) -> WriteTarget:
    """The table's own output sizes: its format's properties (:data:`WRITE_PROPERTIES`)
    first, then the target rows or bytes the table was created with; a field stays None
    when neither sets it (a table registered with the format's defaults).

    Example:
    >>> i = TableInfo("t", "/d", "/w/t/metadata", False, None, None, "now", "iceberg")
    >>> write_target(i, {}).sets_file_size
    False
    >>> t = write_target(i, {"write.target-file-size-bytes": "134217728"})
    >>> t.file_bytes, t.source
    (134217728, 'Iceberg write.target-file-size-bytes')
    >>> write_target(i, {"delta.targetFileSize": "64mb"}).file_bytes
    67108864
    """
    fields: dict[str, int] = {}
    sources: list[str] = []
    for prop, field, source in WRITE_PROPERTIES:
        value = _size(properties[prop]) if prop in properties else None
        if value and field not in fields:
            fields[field] = value
            sources.append(source)
    if "file_bytes" not in fields:
        if info.target_rows:
            fields["file_rows"] = int(info.target_rows)
            sources.append("the table's target rows")
        elif info.target_bytes:
            fields["file_bytes"] = int(info.target_bytes)
            sources.append("the table's target bytes")
    return WriteTarget(source=", ".join(sources), **fields)


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
