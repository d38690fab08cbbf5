"""Leases: the folders a rewrite is writing, protected from ``gc`` until the writer ends.

Why: a ``gc --older-than 0s --force-retention`` from another process, landing between a
run's verification and its commit, would delete the run's new files (they are referenced
by no snapshot yet), and the run would then commit a snapshot naming missing files.
Retention by file age cannot protect them when the retention is forced to zero, so every
folder a writer gets from :meth:`engine.table.store.TableStore.new_data_dir` is *leased*
first: a small JSON file ``<table folder>/leases/<token>.json`` naming the folder, the
writer's host and pid, and the time. ``gc`` never deletes a file under a folder whose lease
is live, and reads the leases under the table lock after listing the files (a lease is
taken before its folder exists, so a file gc lists always has its lease on disk already).

A lease is live while its writer may still commit: on the writer's own host, while its
pid is alive; from another host (the pid means nothing here), for :data:`FOREIGN_TTL_S`
after it was taken. Nobody has to release a lease: once the writer has committed, its files
are referenced by a snapshot; once it died, the lease is dead and gc deletes the orphans
and the lease file. (A dashboard process stays alive for days: its finished runs' leases
protect only folders that are committed or already removed, and gc drops those leases once
their folder is gone.)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import socket
import time
from dataclasses import dataclass

LEASE_DIR = "leases"
#: a lease taken on another host is honoured this long (a rewrite of a big table on a
#: cluster can take hours; a day covers it and still lets gc clean a crashed run's output)
FOREIGN_TTL_S = 24 * 3600.0


@dataclass(frozen=True)
class Lease:
    """One writer's claim on one folder."""

    path: str  # the lease file
    folder: str  # the leased folder (path or URI, as the writer spells it)
    host: str
    pid: int
    taken_at: float  # seconds since the epoch

    def live(self, now: float | None = None) -> bool:
        """May the writer still commit? (its pid is alive here; elsewhere: not too old)"""
        if self.host != socket.gethostname():
            return (now if now is not None else time.time()) - self.taken_at < FOREIGN_TTL_S
        return pid_alive(self.pid)


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` running on this host? (a pid of someone else's counts as alive)

    Example:
    >>> pid_alive(os.getpid())
    True
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by another user
        return True
    return True


def take(table_dir: str, folder: str) -> Lease:
    """Lease ``folder`` for this process (call before creating the folder)."""
    directory = os.path.join(table_dir, LEASE_DIR)
    os.makedirs(directory, exist_ok=True)
    lease = Lease(path=os.path.join(directory, f"{secrets.token_hex(8)}.json"), folder=folder,
                  host=socket.gethostname(), pid=os.getpid(), taken_at=time.time())
    tmp = lease.path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"folder": folder, "host": lease.host, "pid": lease.pid,
                   "taken_at": dt.datetime.fromtimestamp(lease.taken_at, dt.timezone.utc)
                   .isoformat()}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, lease.path)
    return lease


def read_all(table_dir: str) -> list[Lease]:
    """Every lease of a table (an unreadable lease file is treated as live: when in doubt,
    gc keeps the files; its folder is unknown, so it protects everything of the table)."""
    directory = os.path.join(table_dir, LEASE_DIR)
    if not os.path.isdir(directory):
        return []
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                raw = json.load(handle)
            taken = dt.datetime.fromisoformat(str(raw["taken_at"])).timestamp()
            out.append(Lease(path, str(raw["folder"]), str(raw["host"]), int(raw["pid"]), taken))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, KeyError, TypeError):
            out.append(Lease(path, "", socket.gethostname(), os.getpid(), time.time()))
    return out


def covers(folder: str, path: str) -> bool:
    """Is ``path`` inside leased ``folder``? (an empty folder: an unreadable lease, covers all)

    Example:
    >>> covers("/t/data/plan1-b0-x", "/t/data/plan1-b0-x/g=0/part-0.parquet")
    True
    >>> covers("/t/data/plan1-b0-x", "/t/data/plan1-b0-xy/part-0.parquet")
    False
    """
    root = folder.rstrip("/")
    return not root or path == root or path.startswith(root + "/")
