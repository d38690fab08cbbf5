"""Garbage collection of a table's data files: what no retained snapshot references.

A file goes only when it is older than the retention (a reader may have started on a
snapshot that named it) and never while a live writer holds the lease of its folder
(:mod:`engine.table.leases`), whatever the retention: a rewrite's new files are named by
no snapshot until its commit. The native format's expiry
(:meth:`engine.table.formats.native.NativeFormat.expire`) walks its own snapshot chain
with the helpers here; an Iceberg or Delta table goes through :func:`collect_foreign`,
which wraps the format's own expiry with the same lease and retention rules.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from typing import Callable, Sequence

from engine.core.errors import InvalidParameterError
from engine.table import fs, leases
from engine.table.formats.base import TableFormat
from engine.table.metadata_io import utc_now

__all__ = ["RUN_DIR", "check_retention", "collect_foreign", "delete_all", "hidden_run_files",
           "live_leases", "remove_empty_dirs", "remove_emptied_run_dirs"]

#: the name of a writer's folder (:meth:`engine.table.store.TableStore.new_data_dir`):
#: ``<tag>-<UTC stamp>-<hex>``
RUN_DIR = re.compile(r"^[A-Za-z0-9_-]+-\d{8}T\d{6}-[0-9a-f]{8}$")


def check_retention(older_than: dt.timedelta) -> None:
    """Refuse a negative retention."""
    if older_than < dt.timedelta(0):
        raise InvalidParameterError("gc: the retention must not be negative")


def live_leases(table_dir: str, dry_run: bool) -> list[str]:
    """Folders leased by writers of the table at ``table_dir`` still alive; dead writers'
    lease files are removed (unless ``dry_run``): their output is an orphan from now on."""
    live = []
    for lease in leases.read_all(table_dir):
        if lease.live():
            live.append(lease.folder)
        elif not dry_run:
            with contextlib.suppress(FileNotFoundError):
                os.remove(lease.path)
    return live


def collect_foreign(fmt: TableFormat, table_dir: str, older_than: dt.timedelta,
                    dry_run: bool) -> list[str]:
    """gc of an Iceberg or Delta table: the format's own expiry (Iceberg
    ``expire_snapshots``; Delta ``VACUUM``, listed as a dry run and then deleted here,
    since VACUUM cannot skip leased folders), plus the orphans under the data location
    that no snapshot ever named (a crashed run's output), never in a live leased folder,
    and the metadata files no version names (:meth:`TableFormat.metadata_orphans`, only
    while no run of ours is committing), and the hidden files a dead run left in its folder
    (:func:`hidden_run_files`), with the same retention and lease rules. Returns the paths,
    sorted; deletes them unless ``dry_run``."""
    delta = fmt.format_name == "delta"
    root = fmt.data_location()
    files = fs.list_files(root) if fs.exists(root) else []
    live = [fs.normalize(q) for q in live_leases(table_dir, dry_run)]
    ever = {fs.normalize(p.path) for h in fmt.history() for p in fmt.snapshot(h.id).partitions}

    def keep(path: str) -> bool:  # a live writer's file that no snapshot named yet
        norm = fs.normalize(path)
        return norm not in ever and any(leases.covers(q, norm) for q in live)

    expired = fmt.expire(older_than, dry_run=dry_run or delta)
    doomed = [p for p in expired if not keep(p)]
    cutoff_s = (utc_now() - older_than).timestamp()
    named = ever | {fs.normalize(p) for p in doomed}
    stray = [p for p in files if fs.normalize(p) not in named and not keep(p)
             and fs.mtime(p) < cutoff_s]
    if not live:  # no run of ours committing
        stray += fmt.metadata_orphans(cutoff_s)
    hidden = hidden_run_files(root, set(files), named, keep, cutoff_s)
    if not dry_run:
        delete_all((doomed if delta else []) + stray + hidden)
        remove_emptied_run_dirs(root, hidden, live)
    return sorted(doomed + stray + hidden)


def delete_all(paths: Sequence[str]) -> None:
    """Delete files (one already gone is fine: another gc got there first)."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            fs.delete_file(path)


def hidden_run_files(root: str, visible: set[str], named: set[str],
                     keep: Callable[[str], bool], cutoff_s: float) -> list[str]:
    """Hidden files (Spark's ``_SUCCESS`` and ``.crc`` checksums, ``_temporary`` attempts,
    an upload's ``.part``) inside writers' folders (:data:`RUN_DIR`) under a foreign
    table's data location, older than ``cutoff_s``, that no snapshot names and no live
    writer's lease covers (``keep``). The orphan listing skips hidden names so that a Delta
    log or Iceberg metadata beside the data is never a candidate; inside a writer's folder
    nothing hidden belongs to the table."""
    if not fs.exists(root):
        return []
    base = fs.normalize(root).rstrip("/") + "/"
    out = []
    for path in fs.list_files(root, include_hidden=True):
        norm = fs.normalize(path)
        if path in visible or not norm.startswith(base):
            continue
        parts = norm[len(base):].split("/")
        if (len(parts) > 1 and RUN_DIR.match(parts[0]) and norm not in named
                and not keep(path) and fs.mtime(path) < cutoff_s):
            out.append(path)
    return out


def remove_emptied_run_dirs(root: str, removed: Sequence[str], live: Sequence[str]) -> None:
    """Remove the writers' folders (and their subfolders) that :func:`hidden_run_files`'
    deletions left empty, never a leased one (local data locations only)."""
    if fs.is_uri(root):
        return
    base = fs.normalize(root).rstrip("/")
    folders = {os.path.join(base, fs.normalize(p)[len(base) + 1:].split("/")[0]) for p in removed}
    for folder in sorted(folders):
        if any(leases.covers(q, folder) for q in live):
            continue
        for dirpath, _dirs, _files in os.walk(folder, topdown=False):
            with contextlib.suppress(OSError):
                if not os.listdir(dirpath):
                    os.rmdir(dirpath)


def remove_empty_dirs(root: str, cutoff_s: float, keep: Sequence[str] = ()) -> None:
    """Remove empty folders older than the cutoff, except leased ones (a writer may be
    about to fill a folder it just made)."""
    kept = [fs.normalize(k) for k in keep]
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        if dirpath == root or any(leases.covers(k, dirpath) for k in kept):
            continue
        with contextlib.suppress(OSError):
            if not os.listdir(dirpath) and os.path.getmtime(dirpath) < cutoff_s:
                os.rmdir(dirpath)
