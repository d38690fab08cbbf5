"""A snapshot's zonemap arrays cached as numpy, so a fresh process skips the manifest.

Every command and every dashboard start is a fresh process, and a snapshot's zonemaps are
the first thing each one needs: at 1,000,000 partitions reading the zstd manifest and
building :class:`~engine.table.model.ZoneMaps` from its Arrow columns costs about a CPU
second for six numeric columns, and more with strings. A snapshot never
changes, so its arrays are written once, uncompressed, to
``<home>/cache/zonemaps/<table>/<key>/`` (one ``.npy`` per array and ``meta.json``) and
memory-mapped back with ``numpy.load`` (no pickle: paths are Arrow's UTF-8 bytes and
offsets, strings fixed-width unicode).

The key is the table's registration (location and creation time: a table dropped and
created again under the same name is another table), the snapshot id, the manifest file's
identity (size, inode, modification time: a replaced manifest is another one) and
:data:`CACHE_VERSION`. An entry is written atomically (a temporary folder, then renamed),
and one that cannot be read, or that does not match the schema, is ignored and written again;
caching is best effort, so a workspace that cannot be written to only loses the speed-up.
The :data:`KEEP_PER_TABLE` most recently written entries of a table are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from engine.core.cached import read_or_none
from engine.table.model import ColumnZoneMap, TableSchema, ZoneMaps

__all__ = ["CACHE_VERSION", "KEEP_PER_TABLE", "cache_path", "load", "store", "forget"]

_log = logging.getLogger(__name__)

#: bumped whenever what an entry holds changes (older entries are then never read)
CACHE_VERSION = 1
#: entries kept per table (one per recently loaded snapshot; the oldest written go first):
#: an entry is about the arrays' size in memory, hundreds of MB for 1,000,000 partitions
#: (bench/planning/README.md)
KEEP_PER_TABLE = 4
#: a temporary entry folder older than this is a killed writer's, deleted by the next store
STALE_TMP_S = 3600.0
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
    return _folder(home, table) / digest


def store(path: Path, schema: TableSchema, zonemaps: ZoneMaps) -> bool:
    """Write ``zonemaps`` as the entry ``path`` (a folder of ``.npy`` files and
    ``meta.json``, renamed into place whole); False (and one warning) when it cannot."""
    paths = pa.array(np.asarray(zonemaps.paths, dtype=object), pa.large_string())
    arrays: dict[str, np.ndarray] = {
        "path_offsets": np.frombuffer(paths.buffers()[1], dtype=np.int64, count=len(paths) + 1),
        "path_bytes": (np.frombuffer(paths.buffers()[2], dtype=np.uint8)
                       if paths.buffers()[2] is not None else np.zeros(0, np.uint8)),
        "rows": zonemaps.rows, "bytes": zonemaps.bytes, "created_seq": zonemaps.created_seq}
    for i, (name, _) in enumerate(schema.columns):
        c = zonemaps.column(name)
        for field, value in zip(_FIELDS, (c.lo, c.hi, c.valid, c.null_count, c.compressed_bytes)):
            arrays[f"c{i}_{field}"] = np.asarray(value)
    meta = {"version": CACHE_VERSION, "n": len(zonemaps), "columns": schema.to_json()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.mkdir(parents=True)
        for name, value in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(value), allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(path, ignore_errors=True)  # an unreadable entry (mapped ones stay valid)
        try:
            os.rename(tmp, path)
        except OSError:  # another process stored the same entry meanwhile: keep theirs
            if not path.is_dir():
                raise
        _prune(path.parent)
        return True
    except (OSError, ValueError) as exc:
        _log.warning("zonemap cache not written to %s: %s", path, exc)
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP_PER_TABLE` newest entries of one table's folder, and delete
    temporary folders a killed writer left more than :data:`STALE_TMP_S` ago."""
    now = time.time()
    for tmp in folder.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > STALE_TMP_S:
                shutil.rmtree(tmp, ignore_errors=True)
    entries = sorted((p for p in folder.iterdir() if not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[KEEP_PER_TABLE:]:
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def load(path: Path, schema: TableSchema) -> ZoneMaps | None:
    """The cached zonemaps of entry ``path``, or None when there is none, or it is
    unreadable or does not match ``schema`` (the caller then builds them from the manifest
    and stores them again). Arrays are memory-mapped copy-on-write: pages are read as
    they are used, and a write stays private to the process."""
    def array(name: str) -> np.ndarray:
        return np.load(path / f"{name}.npy", mmap_mode="c", allow_pickle=False)

    def read() -> tuple[int, np.ndarray, np.ndarray, ZoneMaps] | None:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        n = int(meta["n"])
        if meta.get("version") != CACHE_VERSION or meta["columns"] != schema.to_json():
            return None
        offsets, data = array("path_offsets"), array("path_bytes")
        paths = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets),
                                                               pa.py_buffer(data)])
        columns = {}
        for i, (name, ltype) in enumerate(schema.columns):
            lo, hi, valid, nulls, cbytes = (array(f"c{i}_{f}") for f in _FIELDS)
            columns[name] = ColumnZoneMap(ltype, lo, hi, valid, nulls, cbytes)
        return n, offsets, data, ZoneMaps(
            paths=np.asarray(paths.to_numpy(zero_copy_only=False), dtype=object),
            rows=array("rows"), bytes=array("bytes"), columns=columns,
            created_seq=array("created_seq"))

    got = read_or_none(read, path, "zonemap cache", _log,
                       errors=(OSError, ValueError, KeyError, TypeError, pa.ArrowException),
                       then="rebuilding it")
    if got is None:
        return None
    n, offsets, data, zm = got
    lengths = {len(zm.paths), len(zm.rows), len(zm.bytes), len(zm.created_seq)}
    lengths |= {len(getattr(c, f)) for c in zm.columns.values()
                for f in ("lo", "hi", "valid", "null_count", "compressed_bytes")}
    if lengths != {n} or len(offsets) != n + 1 or int(offsets[-1]) != len(data):
        _log.warning("zonemap cache %s does not match its header; rebuilding it", path)
        return None
    return zm
