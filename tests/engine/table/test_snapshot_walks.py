"""Commands a user waits on at 1,000,000 partitions read a snapshot's arrays, not one
``Partition`` per file (``Snapshot.partitions``): ``table files``, a commit and a
rollback. On a zonemap-cache hit such a walk would also read the manifest. The
results stay what the walk gave: a commit's manifest is compared with the one the
partition list made (``manifest.partitions_to_table``)."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.table import manifest
from engine.table.formats.native_files import clear_snapshot_cache
from engine.table.manifest import ManifestPartitions
from engine.table.model import ColumnStats, Partition, TableSchema
from engine.table.store import TableStore

SCHEMA = TableSchema((("i", "int"), ("m", "decimal"), ("d", "date"), ("s", "string")))


def _parts(folder: Path, n: int, offset: int = 0, write: bool = False) -> list[Partition]:
    """n partitions with every kind of bound (unknown ones too); with ``write`` their
    files exist with the sizes they claim (a commit checks the files it adds)."""
    out = []
    for k in range(n):
        i = k + offset
        unknown = i % 7 == 3
        p = Partition(f"{folder}/p{i:04d}.parquet", 10 + i, 100 + i, {
            "i": ColumnStats(None if unknown else i, None if unknown else 2 * i, 0, 8),
            "m": ColumnStats(decimal.Decimal(f"{i}.5"), decimal.Decimal(f"{i + 1}.25"), 1, 4),
            "d": ColumnStats(dt.date(2024, 1, 1) + dt.timedelta(days=i), dt.date(2025, 1, 1), 0, 4),
            "s": ColumnStats(f"é{i:03d}", None if unknown else f"z{i}", 2, 16)}, 1000 + i)
        if write:
            Path(p.path).parent.mkdir(parents=True, exist_ok=True)
            Path(p.path).write_bytes(b"x" * p.bytes)
        out.append(p)
    return out


def _by_walk(base: list[Partition], removed: set[str], added: list[Partition]) -> list[Partition]:
    """The partition list the store's commit built before (added in the first removed slot)."""
    at = min((i for i, p in enumerate(base) if p.path in removed), default=len(base))
    out = [p for p in base[:at] if p.path not in removed] + added
    return out + [p for p in base[at:] if p.path not in removed]


@pytest.mark.parametrize("removed", [[], [0], [19], [0, 19], [3, 4, 5, 11], list(range(20)), [7, 2]],
                         ids=["none", "first", "last", "ends", "middle", "all", "unordered"])
@pytest.mark.parametrize("n_added", [0, 1, 3])
def test_a_spliced_manifest_equals_the_partition_lists(tmp_path, removed, n_added):
    base_parts = _parts(tmp_path, 20)
    table = manifest.partitions_to_table(SCHEMA, base_parts)
    loaded = list(ManifestPartitions(SCHEMA, table))  # as a snapshot holds them
    added = _parts(tmp_path, n_added, offset=100)
    rg_files = {p.path: ("snap-2.rowgroups.parquet" if k == 0 else None) for k, p in enumerate(added)}
    gone = {base_parts[i].path for i in removed}
    want = manifest.partitions_to_table(SCHEMA, _by_walk(loaded, gone, added), rg_files)
    mask = np.isin(np.arange(20), removed)
    got = manifest.splice(SCHEMA, table, mask, added, rg_files)
    assert got.equals(want)
    assert got.column("path").to_pylist() == [p.path for p in _by_walk(base_parts, gone, added)]


def test_files_commit_and_rollback_make_no_partition_per_file(settings, tmp_path, monkeypatch):
    """On a zonemap-cache hit none of them makes a ``Partition`` of the snapshot, and each
    gives what the walk gave."""
    base_parts = _parts(tmp_path / "data", 30, write=True)
    store = TableStore(settings)
    first = store.create("t", schema=SCHEMA, partitions=base_parts, operation="register",
                         managed=False, location=str(tmp_path / "data"))
    clear_snapshot_cache()
    TableStore(settings).current_snapshot("t")  # writes the zonemap-cache entry
    clear_snapshot_cache()  # a fresh process: the cache is hit

    def walked(self, i):
        raise AssertionError("a Partition object was made from the snapshot")

    monkeypatch.setattr(ManifestPartitions, "_one", walked)
    assert api.table_files(settings, "t") == [p.path for p in base_parts]

    added = _parts(tmp_path / "data", 2, offset=200, write=True)
    removed = [base_parts[9].path, base_parts[4].path, base_parts[5].path]
    snap = TableStore(settings).commit("t", first.id, removed, added, operation="recluster")
    monkeypatch.undo()
    want = _by_walk(base_parts, set(removed), added)
    assert api.table_files(settings, "t") == [p.path for p in want]
    assert [(p.path, p.rows, p.bytes, p.created_seq, dict(p.columns)) for p in snap.partitions] == \
        [(p.path, p.rows, p.bytes, p.created_seq, dict(p.columns)) for p in want]
    assert [p.path for p in want][4:6] == [added[0].path, added[1].path]  # in the first removed slot
    assert snap.summary["removed"] == 3 and snap.summary["added"] == 2

    clear_snapshot_cache()
    TableStore(settings).snapshot("t", first.id)
    clear_snapshot_cache()
    monkeypatch.setattr(ManifestPartitions, "_one", walked)
    back = TableStore(settings).rollback("t", first.id)
    monkeypatch.undo()
    assert [p.path for p in back.partitions] == [p.path for p in base_parts]
    info = TableStore(settings).info("t")
    assert pq.read_table(f"{info.metadata_dir}/{TableStore(settings).format('t').header(back.id)['manifest']}") \
        .equals(pq.read_table(f"{info.metadata_dir}/snap-00000001.manifest.parquet"))


def _shown_by_walk(snap) -> list[dict]:
    """show_table's partitions as the walk over Partition objects built them."""
    from engine.core import logical_types

    types = dict(snap.schema.columns)
    return [{"path": p.path, "rows": p.rows, "bytes": p.bytes,
             "columns": {c: {"min": logical_types.to_json_value(types[c], s.min),
                             "max": logical_types.to_json_value(types[c], s.max),
                             "nulls": s.null_count} for c, s in p.columns.items()}}
            for p in snap.partitions]


def test_table_show_reads_columns_not_partitions_and_shows_the_same(settings, tmp_path, monkeypatch):
    parts = _parts(tmp_path / "data", 12)
    schema = TableSchema(SCHEMA.columns + (("f", "float"),))
    for k, p in enumerate(parts):  # a float column with NaN and unknown bounds too
        p.columns["f"] = ColumnStats(float("nan") if k % 5 == 1 else -1.5 * k, None if k == 2 else 0.5, 0, 8)
    TableStore(settings).create("t", schema=schema, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path / "data"))
    clear_snapshot_cache()
    want = _shown_by_walk(TableStore(settings).current_snapshot("t"))
    assert want[1]["columns"]["f"]["min"] is None and want[3]["columns"]["m"]["min"] == "3.5"
    clear_snapshot_cache()  # a fresh process: the zonemap cache is hit

    def walked(self, i):
        raise AssertionError("a Partition object was made from the snapshot")

    monkeypatch.setattr(ManifestPartitions, "_one", walked)
    shown = api.show_table(settings, "t")
    assert shown["partitions"] == want
    assert [type(p["rows"]) for p in shown["partitions"]] == [int] * 12
