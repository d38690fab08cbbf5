"""A snapshot's zonemap arrays cached as numpy, so a fresh process skips the manifest.

Every command and every dashboard start is a fresh process, and a snapshot's zonemaps are
the first thing each one needs: at 1,000,000 partitions reading the zstd manifest and
building :class:`~engine.table.model.ZoneMaps` from its Arrow columns costs about a CPU
second for six numeric columns, and more with strings (issue 15). A snapshot never
changes, so its arrays are written once, uncompressed, to
``<home>/cache/zonemaps/<table>/<key>.npz`` and read back with ``numpy.load`` (no pickle:
paths are one UTF-8 block cut at NUL bytes, strings fixed-width unicode).

The key is the table's registration (location and creation time: a table dropped and
created again under the same name is another table), the snapshot id, the manifest file's
identity (size, inode, modification time: a replaced manifest is another one) and
:data:`CACHE_VERSION`. Files are written atomically (temporary file, then rename), and a
file that cannot be read, or that does not match the schema, is ignored and written again;
caching is best effort, so a workspace that cannot be written to only loses the speed-up.
The :data:`KEEP_PER_TABLE` most recently written entries of a table are kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import shutil
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.table.model import ColumnZoneMap, TableSchema, ZoneMaps

__all__ = ["CACHE_VERSION", "KEEP_PER_TABLE", "cache_path", "load", "store", "forget"]

_log = logging.getLogger(__name__)

#: bumped whenever what an entry holds changes (older entries are then never read)
CACHE_VERSION = 1
#: entries kept per table (one per recently loaded snapshot; the oldest written go first)
KEEP_PER_TABLE = 8
_SEP = "\0"  # no path (POSIX or URI) holds a NUL byte
_FIELDS = ("lo", "hi", "valid", "nulls", "cbytes")


def _folder(home: str | os.PathLike, table: str) -> Path:
    return Path(home).expanduser() / "cache" / "zonemaps" / table


def forget(home: str | os.PathLike, table: str) -> None:
    """Delete a dropped table's entries (a table created again under the name has another
    registration, so they would never be read again)."""
    shutil.rmtree(_folder(home, table), ignore_errors=True)


def cache_path(home: str | os.PathLike, table: str, identity: Sequence[str]) -> Path:
    """Where the entry named by ``identity`` (registration, snapshot, manifest stat...)
    lives; the version is part of the name, so an older entry is never read."""
    text = "\0".join([str(CACHE_VERSION), *map(str, identity)])
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return _folder(home, table) / f"{digest}.npz"


def _paths_blob(paths: np.ndarray) -> np.ndarray:
    return np.frombuffer(_SEP.join(map(str, paths)).encode("utf-8"), dtype=np.uint8)


def store(path: Path, schema: TableSchema, zonemaps: ZoneMaps) -> bool:
    """Write ``zonemaps`` to ``path`` atomically; False (and one warning) when it cannot."""
    arrays: dict[str, np.ndarray] = {
        "meta": np.array(json.dumps({"version": CACHE_VERSION, "n": len(zonemaps),
                                     "columns": schema.to_json()})),
        "paths": _paths_blob(zonemaps.paths), "rows": zonemaps.rows, "bytes": zonemaps.bytes,
        "created_seq": zonemaps.created_seq}
    for i, (name, _) in enumerate(schema.columns):
        c = zonemaps.column(name)
        for field, value in zip(_FIELDS, (c.lo, c.hi, c.valid, c.null_count, c.compressed_bytes)):
            arrays[f"c{i}_{field}"] = np.asarray(value)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
        _prune(path.parent)
        return True
    except OSError as exc:
        _log.warning("zonemap cache not written to %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
        return False


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP_PER_TABLE` newest entries of one table's folder."""
    entries = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[KEEP_PER_TABLE:]:
        old.unlink(missing_ok=True)


def load(path: Path, schema: TableSchema) -> ZoneMaps | None:
    """The cached zonemaps at ``path``, or None when there is none, or it is unreadable or
    does not match ``schema`` (the caller then builds them from the manifest and stores
    them again)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            n = int(meta["n"])
            if meta.get("version") != CACHE_VERSION or meta["columns"] != schema.to_json():
                return None
            text = bytes(data["paths"]).decode("utf-8")
            paths = np.array(text.split(_SEP) if n else [], dtype=object)
            columns = {}
            for i, (name, ltype) in enumerate(schema.columns):
                lo, hi, valid, nulls, cbytes = (data[f"c{i}_{f}"] for f in _FIELDS)
                columns[name] = ColumnZoneMap(ltype, lo, hi, valid, nulls, cbytes)
            zm = ZoneMaps(paths=paths, rows=data["rows"], bytes=data["bytes"], columns=columns,
                          created_seq=data["created_seq"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        _log.warning("zonemap cache %s unreadable (%s: %s); rebuilding it", path,
                     type(exc).__name__, exc)
        return None
    lengths = {len(zm.paths), len(zm.rows), len(zm.bytes), len(zm.created_seq)}
    lengths |= {len(getattr(c, f)) for c in zm.columns.values()
                for f in ("lo", "hi", "valid", "null_count", "compressed_bytes")}
    if lengths != {n}:
        _log.warning("zonemap cache %s does not match its header; rebuilding it", path)
        return None
    return zm
