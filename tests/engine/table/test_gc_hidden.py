"""gc of the hidden files a dead run left in its folder of an Iceberg or Delta table (issue
10, "gc removes what a crashed run left"): Spark's ``_SUCCESS`` and ``.crc`` checksums, its
``_temporary`` attempts and an upload's ``.part``. Real registered tables (deltalake, a
pyiceberg SQLite catalog), real lease files; the retention and the dry run hold as for
every other orphan, and a live writer's folder and the format's own hidden folders
(``_delta_log``, Iceberg's ``metadata``) are never touched."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from engine import api
from engine.core.errors import InvalidParameterError
from engine.table import leases
from format_helpers import (delta_scan, digest, iceberg_scan, local, registered_delta,
                            registered_iceberg)
from plan_helpers import lineitem_arrow
from security_helpers import sign_in

OLD = time.time() - 30 * 86400  # older than the 7-day minimum retention
HIDDEN = (".part-00000.snappy.parquet.crc", "_SUCCESS", ".upload-1.parquet.part",
          "_temporary/0/_temporary/attempt_1/part-00001.snappy.parquet",
          "_temporary/0/_temporary/attempt_1/.part-00001.snappy.parquet.crc")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _run_folder(store, name: str, tag: str, dead: bool, mtime: float) -> tuple[str, list[str]]:
    """A writer's folder (new_data_dir, leased) holding one unnamed data file and the hidden
    files Spark leaves, all at ``mtime``; ``dead``: its lease names a pid that has exited."""
    folder = local(store.new_data_dir(name, tag))
    written = []
    for rel in ("part-00000.snappy.parquet", *HIDDEN):
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(b"x" * 16)
        os.utime(path, (mtime, mtime))
        written.append(path)
    if dead:
        for lease in leases.read_all(store.table_dir(name)):
            if local(lease.folder) == folder:
                raw = json.load(open(lease.path))
                json.dump({**raw, "pid": _dead_pid()}, open(lease.path, "w"))
    return folder, written


def _table(kind: str, settings, tmp_path):
    data = lineitem_arrow(200)
    if kind == "delta":
        path = str(tmp_path / "li")
        store, _ = registered_delta(settings, path, data, 100)
        return store, data, lambda: delta_scan(path), os.path.join(path, "_delta_log")
    catalog, store, _ = registered_iceberg(settings, data, 100)
    location = local(catalog.load_table("ns.lineitem").metadata.location)
    return store, data, lambda: iceberg_scan(catalog), os.path.join(location, "metadata")


def _tree(folder: str) -> dict[str, float]:
    return {os.path.join(d, n): os.path.getmtime(os.path.join(d, n))
            for d, _, names in os.walk(folder) for n in names}


@pytest.mark.parametrize("kind", ["delta", "iceberg"])
def test_gc_removes_hidden_files_of_dead_runs_and_keeps_live_and_young_ones(kind, settings,
                                                                           tmp_path):
    store, data, scan, format_dir = _table(kind, settings, tmp_path)
    dead, dead_files = _run_folder(store, "li", "plan3-b0", dead=True, mtime=OLD)
    live, live_files = _run_folder(store, "li", "plan4-b0", dead=False, mtime=OLD)
    young, young_files = _run_folder(store, "li", "plan5-b0", dead=True, mtime=time.time())
    format_before = _tree(format_dir)

    with pytest.raises(InvalidParameterError, match="minimum retention of 7 days"):
        api.gc_table(settings, "li", older_than="1d")
    listed = api.gc_table(settings, "li", older_than="7d", dry_run=True)
    assert {local(p) for p in listed} >= set(dead_files)  # the hidden ones with the data file
    assert not {local(p) for p in listed} & set(live_files + young_files)
    assert all(os.path.exists(p) for p in dead_files)  # a dry run deletes nothing

    deleted = api.gc_table(settings, "li", older_than="7d", dry_run=False,
                           actor=sign_in(settings, "root"))
    assert {local(p) for p in deleted} == {local(p) for p in listed}
    assert not os.path.exists(dead)  # nothing left of the dead run, its folder included
    assert all(os.path.exists(p) for p in live_files + young_files)
    assert _tree(format_dir) == format_before  # the format's own hidden files untouched
    assert scan() == digest(data)
