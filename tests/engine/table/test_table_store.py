"""Snapshot store: register in place, commit/conflict, atomic pointer, rollback, GC, locking.

No Spark here: data files are written with pyarrow, the store only reads footers.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.core.errors import (CommitConflictError, DataFileError, InvalidParameterError,
                                SnapshotNotFoundError, TableExistsError, TableNotFoundError)
from engine.table import footers
from engine.table.formats.native_files import clear_snapshot_cache
from engine.spark.ingest import register_table
from engine.table.store import TableStore

SIX_TYPES = {"i": "int", "f": "float", "d": "decimal", "dt": "date", "ts": "timestamp", "s": "string"}


def six_type_table(start: int, n: int) -> pa.Table:
    """n rows of all six clustering types, values depending on the row number."""
    rows = range(start, start + n)
    return pa.table({
        "i": pa.array([r * 3 for r in rows], pa.int64()),
        "f": pa.array([r / 7.0 for r in rows], pa.float64()),
        "d": pa.array([decimal.Decimal(r) / 100 for r in rows], pa.decimal128(12, 2)),
        "dt": pa.array([dt.date(2001, 1, 1) + dt.timedelta(days=(r * 37) % 3000) for r in rows]),
        "ts": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=r * 61) for r in rows],
                       pa.timestamp("us")),
        "s": pa.array([f"key-{(r * 7919) % 1000:04d}" for r in rows]),
    })


def write_files(folder: Path, count: int, rows: int = 100, nested: bool = False) -> list[str]:
    paths = []
    for k in range(count):
        sub = folder / (f"year={2000 + k % 2}" if nested else "")
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"part-{k}.parquet"
        pq.write_table(six_type_table(k * rows, rows), path, row_group_size=max(rows // 3, 1))
        paths.append(str(path))
    return paths


def digest(paths: list[str]) -> dict[str, str]:
    return {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


def new_files(tmp: Path, name: str, start: int, count: int = 1, rows: int = 100) -> list[str]:
    out = []
    tmp.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        path = tmp / f"{name}-{k}.parquet"
        pq.write_table(six_type_table(start + k * rows, rows), path)
        out.append(str(path))
    return out


def test_register_in_place_reads_footers_and_leaves_files_untouched(settings, tmp_path):
    src = tmp_path / "dataset"
    paths = write_files(src, 4, nested=True)
    before = digest(paths)
    listing_before = sorted(os.listdir(src))
    snap = register_table(TableStore(settings), "events", str(src))
    assert digest(paths) == before
    assert sorted(os.listdir(src)) == listing_before  # nothing written into the dataset
    assert snap.id == "1" and snap.parent is None and snap.operation == "register"
    assert sorted(p.path for p in snap.partitions) == sorted(paths)
    assert [p.created_seq for p in snap.partitions] == [0, 1, 2, 3]
    assert dict(snap.schema.columns) == SIX_TYPES
    for p in snap.partitions:
        table = pq.read_table(p.path)
        assert p.rows == table.num_rows and p.bytes == os.path.getsize(p.path)
        for col in SIX_TYPES:
            mm = pc.min_max(table[col]).as_py()
            assert p.columns[col].min == mm["min"], col
            assert p.columns[col].max == mm["max"], col
            assert p.columns[col].null_count == 0
            assert p.columns[col].compressed_bytes > 0
    info = TableStore(settings).info("events")
    assert not info.managed and info.location == str(src)
    assert info.metadata_dir.startswith(str(settings.home))


def test_register_glob_and_errors(settings, tmp_path):
    paths = write_files(tmp_path / "d", 3)
    snap = register_table(TableStore(settings), "g", str(tmp_path / "d" / "part-[01].parquet"))
    assert sorted(p.path for p in snap.partitions) == sorted(paths[:2])
    with pytest.raises(TableExistsError):
        register_table(TableStore(settings), "g", str(tmp_path / "d"))
    with pytest.raises(DataFileError, match="no such file"):
        register_table(TableStore(settings), "h", str(tmp_path / "missing"))
    bad = tmp_path / "bad" / "x.parquet"
    bad.parent.mkdir()
    bad.write_bytes(b"PAR1 this is not parquet at all")
    with pytest.raises(DataFileError, match="x.parquet"):
        register_table(TableStore(settings), "h", str(bad))
    assert not TableStore(settings).exists("h")
    with pytest.raises(InvalidParameterError):
        register_table(TableStore(settings), "../evil", str(tmp_path / "d"))


def test_register_glob_counts_each_file_once_through_links(settings, tmp_path):
    """A recursive glob does not follow folder links (a ``self -> .`` loop, a ``latest``
    alias of a dated folder) and names a linked file once: every row is registered once."""
    day = tmp_path / "d" / "2024-05-01"
    paths = write_files(day, 2, rows=3)
    (tmp_path / "d" / "self").symlink_to(".")
    (tmp_path / "d" / "latest").symlink_to(day)
    os.link(paths[0], day / "hard-alias.parquet")
    (day / "soft-alias.parquet").symlink_to(paths[1])
    snap = register_table(TableStore(settings), "linked", str(tmp_path / "d" / "**" / "*.parquet"))
    assert sorted(p.path for p in snap.partitions) == sorted(
        [str(day / "hard-alias.parquet"), paths[1]])
    assert sum(p.rows for p in snap.partitions) == 6


def test_commit_replaces_partitions_in_place_and_detects_conflicts(settings, tmp_path):
    paths = write_files(tmp_path / "d", 4)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    base = store.current_snapshot("t")
    out_dir = store.new_data_dir("t", "recluster")
    assert out_dir.startswith(store.info("t").data_root) and os.path.isdir(out_dir)
    assert not out_dir.startswith(str(tmp_path / "d"))  # never inside the user's dataset
    added = new_files(Path(out_dir), "new", 100, count=2)
    _, parts = footers.read_partitions(added, schema=base.schema, first_seq=store.next_seq("t"))
    snap = store.commit("t", base.id, [paths[1], paths[2]], parts, "recluster", {"plan": 7})
    assert snap.id == "2" and snap.parent == "1" and snap.operation == "recluster"
    assert [p.path for p in snap.partitions] == [paths[0], *added, paths[3]]
    assert [p.created_seq for p in snap.partitions] == [0, 4, 5, 3]
    assert snap.summary["plan"] == 7
    # the old snapshot object and the old snapshot file are untouched
    assert [p.path for p in base.partitions] == paths
    assert [p.path for p in store.snapshot("t", "1").partitions] == paths
    with pytest.raises(CommitConflictError, match="based on snapshot 1"):
        store.commit("t", base.id, [paths[0]], [], "recluster")
    with pytest.raises(CommitConflictError, match="not in snapshot"):
        store.commit("t", snap.id, [paths[1]], [], "recluster")
    with pytest.raises(CommitConflictError, match="twice"):
        store.commit("t", snap.id, [], parts[:1], "append")
    assert store.current_id("t") == "2"
    # row-group statistics are kept for the added partitions, and for the registered ones
    groups = store.row_groups("t")
    assert set(groups) == {p.path for p in snap.partitions}
    assert sum(g["rows"] for g in groups[paths[0]]) == 100 and len(groups[paths[0]]) == 4  # 33+33+33+1
    first = groups[paths[0]][0]["columns"]["i"]
    assert first["min"] == 0 and first["max"] == 3 * 32


def test_reload_equals_written_snapshot_and_zonemaps(settings, tmp_path):
    write_files(tmp_path / "d", 3)
    snap = register_table(TableStore(settings), "t", str(tmp_path / "d"))
    clear_snapshot_cache()
    loaded = TableStore(settings).current_snapshot("t")
    assert loaded.partitions == snap.partitions
    assert loaded.schema == snap.schema
    zm = loaded.zonemaps()
    assert zm.column("dt").lo.tolist() == [
        float((p.columns["dt"].min - dt.date(1970, 1, 1)).days) for p in loaded.partitions]
    assert zm.column("s").hi.tolist() == [p.columns["s"].max for p in loaded.partitions]
    assert zm.column("d").lo.tolist() == [float(p.columns["d"].min) for p in loaded.partitions]
    assert zm.column("i").valid.all()
    # the fast columnar view equals the reference construction from Partition objects
    from engine.table.model import ZoneMaps

    ref = ZoneMaps.from_partitions(loaded.schema, loaded.partitions)
    for col in SIX_TYPES:
        assert zm.column(col).lo.tolist() == ref.column(col).lo.tolist()
        assert zm.column(col).null_count.tolist() == ref.column(col).null_count.tolist()


def test_pointer_is_swapped_atomically_and_history_follows_parents(settings, tmp_path):
    paths = write_files(tmp_path / "d", 2)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    mdir = store.info("t").metadata_dir
    for _ in range(3):
        cur = store.current_snapshot("t")
        store.commit("t", cur.id, [cur.partitions[0].path], [], "recluster") if cur.partition_count > 1 \
            else store.commit("t", cur.id, [], [], "noop")
    # a half-written snapshot that never got published is invisible
    Path(mdir, "snap-00000099.json").write_text("{not json")
    hist = store.history("t")
    assert [h["id"] for h in hist] == ["1", "2", "3", "4"]
    assert [h["parent"] for h in hist] == [None, "1", "2", "3"]
    assert set(hist[0]) == {"id", "parent", "created_at", "operation", "partition_count"}
    assert json.loads(Path(mdir, "current").read_text())["id"] == "4"
    assert not [f for f in os.listdir(mdir) if ".tmp-" in f]
    with pytest.raises(SnapshotNotFoundError):
        store.snapshot("t", "42")
    with pytest.raises(TableNotFoundError, match="nope"):
        store.current_snapshot("nope")
    assert paths  # the registered files still exist
    assert all(os.path.exists(p) for p in paths)


def test_rollback_publishes_a_new_snapshot_equal_to_the_old_one(settings, tmp_path):
    paths = write_files(tmp_path / "d", 3)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    out = new_files(Path(store.new_data_dir("t", "recluster")), "n", 500, count=1)
    _, parts = footers.read_partitions(out, schema=store.current_snapshot("t").schema)
    store.commit("t", "1", paths[:2], parts, "recluster")
    back = store.rollback("t", "1", actor="alice")
    assert back.id == "3" and back.parent == "2" and back.operation == "rollback"
    assert back.summary["rolled_back_to"] == "1" and back.summary["actor"] == "alice"
    assert [p.path for p in back.partitions] == paths
    assert back.partitions == store.snapshot("t", "1").partitions
    assert [h["operation"] for h in store.history("t")] == ["register", "recluster", "rollback"]
    # the reclustered snapshot is still there to roll forward to
    fwd = store.rollback("t", "2")
    assert [p.path for p in fwd.partitions] == [*out, paths[2]]
    with pytest.raises(SnapshotNotFoundError):
        store.rollback("t", "17")


def test_gc_deletes_only_unreferenced_files_and_never_user_files(settings, tmp_path):
    paths = write_files(tmp_path / "d", 3)
    before = digest(paths)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    schema = store.current_snapshot("t").schema
    first = new_files(Path(store.new_data_dir("t", "recluster")), "a", 500, count=2)
    _, parts = footers.read_partitions(first, schema=schema)
    store.commit("t", "1", paths[:2], parts, "recluster")  # snapshot 2 drops two user files
    second = new_files(Path(store.new_data_dir("t", "recluster")), "b", 900, count=1)
    _, parts2 = footers.read_partitions(second, schema=schema)
    store.commit("t", "2", first[:1], parts2, "recluster")  # snapshot 3 drops first[0]
    crashed = Path(store.new_data_dir("t", "recluster")) / "orphan.parquet"  # a crashed writer
    crashed.write_bytes(b"partial")
    for lease in (Path(store.table_dir("t")) / "leases").glob("*.json"):  # the writer died
        lease.unlink()

    # long retention: everything was current recently -> nothing to delete
    assert store.gc("t", dt.timedelta(days=7)) == []
    # zero retention, dry run: only first[0] (unreferenced now) and the orphan; no user file
    doomed = store.gc("t", dt.timedelta(0), dry_run=True)
    assert sorted(doomed) == sorted([first[0], str(crashed)])
    assert os.path.exists(first[0])
    deleted = store.gc("t", dt.timedelta(0))
    assert sorted(deleted) == sorted(doomed)
    assert not os.path.exists(first[0]) and not crashed.exists()
    assert digest(paths) == before  # the user's dataset is byte-identical
    current = store.current_snapshot("t")
    assert all(os.path.exists(p.path) for p in current.partitions)
    # snapshot 2 lost a file: rolling back to it is refused with a clear message
    with pytest.raises(DataFileError, match="cannot be restored"):
        store.rollback("t", "2")
    # snapshot 1 (the user's files) can always be restored
    assert [p.path for p in store.rollback("t", "1").partitions] == paths
    with pytest.raises(InvalidParameterError):
        store.gc("t", dt.timedelta(days=-1))


def test_gc_keeps_recent_unreferenced_output_of_a_running_writer(settings, tmp_path):
    write_files(tmp_path / "d", 1)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    inflight = Path(store.new_data_dir("t", "recluster")) / "part-0.parquet"
    inflight.write_bytes(b"being written")
    assert store.gc("t", dt.timedelta(hours=1)) == []
    old = time.time() - 7200
    os.utime(inflight, (old, old))
    assert store.gc("t", dt.timedelta(0)) == []  # its writer (this process) holds the lease
    for lease in (Path(store.table_dir("t")) / "leases").glob("*.json"):  # the writer died
        lease.unlink()
    assert store.gc("t", dt.timedelta(hours=1)) == [str(inflight)]


def test_drop_registered_keeps_user_files(settings, tmp_path):
    paths = write_files(tmp_path / "d", 2)
    before = digest(paths)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    store = TableStore(settings)
    store.drop("t")
    assert not store.exists("t") and store.list_tables() == []
    assert digest(paths) == before


_WORKER = r"""
import sys
from engine.core.config import load_settings
from engine.core.errors import CommitConflictError
from engine.table.store import TableStore
store = TableStore(load_settings({"home": sys.argv[1]}))
done = 0
while done < int(sys.argv[2]):
    base = store.current_id("t")
    try:
        store.commit("t", base, [], [], "noop", {"worker": sys.argv[3]})
        done += 1
    except CommitConflictError:
        pass
"""


def test_two_processes_committing_at_once_never_lose_a_commit(settings, tmp_path):
    write_files(tmp_path / "d", 1)
    register_table(TableStore(settings), "t", str(tmp_path / "d"))
    n = 15
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(settings.home), str(n), w])
             for w in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = TableStore(settings)
    hist = store.history("t")
    assert len(hist) == 1 + 2 * n
    assert [h["id"] for h in hist] == [str(i) for i in range(1, 2 * n + 2)]
    workers = [store.snapshot("t", h["id"]).summary.get("worker") for h in hist[1:]]
    assert workers.count("a") == n and workers.count("b") == n
