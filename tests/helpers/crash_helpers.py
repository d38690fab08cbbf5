"""The victim of the commit-level crash tests (tests/e2e/test_crash.py): copy two of a table's
files into a fresh leased folder and commit them through the table's format, as the
executor's ``_commit`` does, without Spark. Run in a child process
(``python tests/helpers/crash_helpers.py HOME TABLE``) so a crash point can SIGKILL it, or called
in-process for the commit that must go through afterwards. Imports only the engine."""

from __future__ import annotations

import shutil
import sys

from engine.core.config import load_settings
from engine.table import fs
from engine.table.footers import read_partitions
from engine.table.model import Snapshot
from engine.table.store import TableStore


def commit_copies(home: str, name: str) -> Snapshot:
    """Replace the first two files of ``name`` by byte copies, in one commit."""
    store = TableStore(load_settings({"home": home}))
    snap = store.current_snapshot(name)
    chosen = list(snap.partitions[:2])
    out = store.new_data_dir(name, "crash-test")
    copies = []
    for i, p in enumerate(chosen):
        copies.append(f"{out}/part-{i}.parquet")
        shutil.copyfile(fs.local_path(p.path), fs.local_path(copies[-1]))
    _, added = read_partitions(copies, schema=snap.schema)
    return store.format(name).commit_rewrite(snap.id, [p.path for p in chosen], added,
                                             {"plan_id": "crash-test"})


if __name__ == "__main__":
    print("committed", commit_copies(sys.argv[1], sys.argv[2]).id)
