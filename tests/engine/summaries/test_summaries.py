"""Per-snapshot summaries (engine.summaries.store): the numbers are the engine's own, they
are stored once and loaded afterwards (a fresh process included), and a new snapshot, a
new workload or a table created again under the same name never reuses an old file."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from engine import api
from engine.summaries import store as summaries
from engine.core.config import load_settings
from engine.core.errors import ColumnNotFoundError
from engine.table.model import ColumnStats, Partition, TableSchema
from engine.table.store import TableStore
from security_helpers import sign_in

SCHEMA = TableSchema((("k", "int"), ("d", "date")))


def _partitions(n: int, width: int, folder: str = "/data/t") -> list[Partition]:
    """``n`` partitions of ``k`` ranges [i*10, i*10 + width]: width 9 are disjoint, wider overlap."""
    day = dt.date(2024, 1, 1)
    return [Partition(path=f"{folder}/part-{i:03d}.parquet", rows=100, bytes=1000,
                      columns={"k": ColumnStats(i * 10, i * 10 + width, 0, 100),
                               "d": ColumnStats(day + dt.timedelta(days=i), day + dt.timedelta(days=i + 3), 0, 4)},
                      created_seq=i)
            for i in range(n)]


@pytest.fixture
def settings(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    s = load_settings({"home": str(home)}, environ={})
    TableStore(s).create("t", schema=SCHEMA, partitions=_partitions(8, 25), operation="create")
    log = tmp_path / "q.jsonl"
    log.write_text("\n".join(json.dumps({"id": f"q{i}", "ts": f"2024-03-0{i + 1}T00:00:00",
                                          "sql": f"SELECT * FROM t WHERE k BETWEEN {i * 10} AND {i * 10 + 5}"})
                             for i in range(4)) + "\n")
    api.import_workload(s, "t", str(log))
    return s


def test_summaries_hold_the_engines_numbers(settings):
    stored = api.column_summaries(settings, "t")
    shares = api.span_shares(settings, "t")
    fresh = {r.column: r.to_json() for r in api.analyze(settings, "t")}
    assert [c["column"] for c in stored["columns"]] == list(fresh)
    for col in stored["columns"]:
        want = fresh[col["column"]]
        assert col["average_depth"] == pytest.approx(want["average_depth"])
        assert col["average_overlaps"] == pytest.approx(want["average_overlaps"])
        assert col["partition_depth_histogram"] == json.loads(json.dumps(want["partition_depth_histogram"]))
        assert col["span_share"] == pytest.approx(shares[col["column"]])
    assert stored["snapshot"] == {"id": "1", "operation": "create",
                                  "created_at": stored["snapshot"]["created_at"],
                                  "partitions": 8, "rows": 800, "bytes": 8000}
    # hand-checked: k ranges [10i, 10i + 25] overlap their two neighbours on each side
    k = next(c for c in stored["columns"] if c["column"] == "k")
    assert k["average_overlaps"] == pytest.approx(sum(min(i, 2) + min(7 - i, 2) for i in range(8)) / 8)
    per_query = api.pruning_summary(settings, "t")
    assert per_query == json.loads(json.dumps(api.pruning(settings, "t", selectivity=True)))
    assert [q["scanned"] for q in per_query] == [1, 2, 3, 3]  # [10i, 10i+5] meets partitions i-2..i


def test_a_stored_summary_is_loaded_not_recomputed(settings, monkeypatch):
    first = api.column_summaries(settings, "t")
    pruned = api.pruning_summary(settings, "t")

    def boom(*_a, **_k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(summaries, "analyze_with_arrays", boom)
    monkeypatch.setattr(summaries, "pruning_summaries", boom)
    assert api.column_summaries(settings, "t") == first
    assert api.pruning_summary(settings, "t") == pruned
    assert api.warm_summaries(settings, "t") == {"columns_s": pytest.approx(0, abs=0.5),
                                                 "pruning_s": pytest.approx(0, abs=0.5)}


def test_new_snapshot_workload_or_table_gets_its_own_summary(settings, tmp_path):
    store = TableStore(settings)
    before = api.column_summaries(settings, "t")
    base = store.current_snapshot("t")
    rewritten = _partitions(8, 9, str(tmp_path / "rewrite"))
    (tmp_path / "rewrite").mkdir()
    for part in rewritten:  # a commit checks that the files it adds exist
        Path(part.path).write_bytes(b"\0" * part.bytes)
    snap = store.commit("t", base.id, [p.path for p in base.partitions], rewritten, "recluster", {})
    after = api.column_summaries(settings, "t")
    assert after["snapshot"]["id"] == snap.id != before["snapshot"]["id"]
    k_before = next(c for c in before["columns"] if c["column"] == "k")
    k_after = next(c for c in after["columns"] if c["column"] == "k")
    assert k_after["average_overlaps"] == 0 < k_before["average_overlaps"]
    assert api.column_summaries(settings, "t", snapshot_id=base.id) == before  # still stored
    trend = api.clustering_trend(settings, "t", columns="K")
    assert [r["k.average_overlaps"] for r in trend] == [k_before["average_overlaps"], 0.0]
    assert trend[0]["pruning_rate"] < trend[1]["pruning_rate"]

    one_query = tmp_path / "one.jsonl"
    one_query.write_text(json.dumps({"id": "z", "sql": "SELECT * FROM t WHERE k < 5"}) + "\n")
    api.import_workload(settings, "t", str(one_query), replace=True)  # a new workload version
    assert [q["query_id"] for q in api.pruning_summary(settings, "t")] == ["z"]

    store.drop("t")
    store.create("t", schema=SCHEMA, partitions=_partitions(3, 100), operation="create")
    again = api.column_summaries(settings, "t")
    assert again["snapshot"]["id"] == "1" and again["snapshot"]["partitions"] == 3


def _stored_files(settings, kind: str) -> set[str]:
    folder = Path(settings.home) / "cache" / "summaries" / "t"
    return {p.name for p in folder.glob(f"{kind}-*.json")}


def test_an_import_and_a_rollback_store_the_summaries_of_the_new_state(settings, tmp_path, monkeypatch):
    """The data-changing commands warm the summaries, so the dashboard's first
    visit only loads them (the fixture's import already stored both)."""
    assert len(_stored_files(settings, "pruning")) == 1 and len(_stored_files(settings, "columns")) == 1
    root = sign_in(settings, "root")  # the control store exists before a reclustered snapshot
    store = TableStore(settings)
    base = store.current_snapshot("t")
    snaps = []
    for name, width in (("a", 9), ("b", 15)):  # two rewrites (a rollback needs the files)
        rewritten = _partitions(8, width, str(tmp_path / name))
        (tmp_path / name).mkdir()
        for part in rewritten:
            Path(part.path).write_bytes(b"\0" * part.bytes)
        snaps.append(store.commit("t", (snaps[-1] if snaps else base).id,
                                  [p.path for p in (snaps[-1] if snaps else base).partitions],
                                  rewritten, "recluster", {}))
    assert len(_stored_files(settings, "pruning")) == 1  # a bare store commit does not warm
    back = api.rollback_table(settings, "t", snaps[0].id, actor=root)
    assert len(_stored_files(settings, "pruning")) == 2 and len(_stored_files(settings, "columns")) == 2

    def boom(*_a, **_k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(summaries, "analyze_with_arrays", boom)
    monkeypatch.setattr(summaries, "pruning_summaries", boom)
    assert api.column_summaries(settings, "t")["snapshot"]["id"] == back.id  # loaded, not computed
    assert [q["scanned"] for q in api.pruning_summary(settings, "t")] == [1, 1, 1, 1]


def test_a_failed_warm_never_fails_the_import(settings, tmp_path, monkeypatch, caplog):
    def broken(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(summaries, "warm_summaries", broken)
    log = tmp_path / "more.jsonl"
    log.write_text(json.dumps({"id": "z", "ts": "2024-04-01T00:00:00",
                               "sql": "SELECT * FROM t WHERE k < 5"}) + "\n")
    with caplog.at_level("WARNING"):
        report = api.import_workload(settings, "t", str(log), append=True)
    assert report["fragments"] == 1
    assert [r.getMessage() for r in caplog.records] == [
        "dashboard summaries of t not stored: OSError: disk full"]


def test_column_clustering_without_partition_lists_is_the_rest_of_the_full_answer(settings):
    """The dashboard asks without the per-partition Python lists (costly at 1M)."""
    full = api.column_clustering(settings, "t", "k").to_json()
    lean = api.column_clustering(settings, "t", "k", partition_lists=False).to_json()
    dropped = {"paths", "rows", "bytes", "created_seq", "min", "max"}
    assert set(full) - set(lean) == dropped
    assert lean == {key: value for key, value in full.items() if key not in dropped}


def test_stored_partition_arrays_equal_the_fresh_ones(settings, monkeypatch):
    """The per-partition depths, overlaps and constant flags are stored as numpy
    beside the JSON (never million-element JSON lists) and read back equal."""
    summary = api.column_summaries(settings, "t")
    (npz,) = (Path(settings.home) / "cache" / "summaries" / "t").glob("columns-*.npz")
    assert "depths" not in json.dumps(summary)
    for column in ("k", "d"):
        fresh = api.column_clustering(settings, "t", column, partition_lists=False).to_json()
        stored = api.stored_column_clustering(settings, "t", column.upper()).to_json()
        for name in ("depths", "overlaps", "constant"):
            assert isinstance(stored[name], np.ndarray), name
            assert stored[name].tolist() == fresh[name], (column, name)
        assert {k: v for k, v in stored.items()
                if k not in ("depths", "overlaps", "constant", "span_share")} == \
            json.loads(json.dumps({k: v for k, v in fresh.items()
                                   if k not in ("depths", "overlaps", "constant")}))
    # hand-checked: k ranges [10i, 10i + 25]: partition i meets i-2..i+2 within 0..7
    assert api.column_partition_arrays(settings, "t", "k")["overlaps"].tolist() == \
        [2, 3, 4, 4, 4, 4, 3, 2]

    def boom(*_a, **_k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(summaries, "analyze_with_arrays", boom)  # a fresh read: loaded
    assert api.column_partition_arrays(settings, "t", "d")["depths"].tolist() == \
        api.column_clustering(settings, "t", "d").depths
    assert npz.exists()


def test_a_corrupt_array_file_is_recomputed(settings):
    want = api.column_partition_arrays(settings, "t", "k")
    (npz,) = (Path(settings.home) / "cache" / "summaries" / "t").glob("columns-*.npz")
    npz.write_bytes(b"PK\x03\x04 broken")
    got = api.column_partition_arrays(settings, "t", "k")
    assert all(np.array_equal(got[k], want[k]) for k in want)
    with np.load(npz) as data:  # written again, whole
        assert data["columns"].tolist() == ["k", "d"]
    npz.unlink()  # missing: recomputed too
    assert api.column_partition_arrays(settings, "t", "k")["depths"].tolist() == want["depths"].tolist()
    with pytest.raises(ColumnNotFoundError, match="no clustering summary"):
        api.column_partition_arrays(settings, "t", "nope")


def test_an_older_version_file_is_ignored(settings, monkeypatch):
    """A summary stored by an older SUMMARY_VERSION (version 1 held no arrays) is another
    key: never read, so a page never meets a file without its arrays."""
    monkeypatch.setattr(summaries, "SUMMARY_VERSION", 1)
    old_json, _ = summaries._columns_paths(api.Workspace(settings), "t", "1")
    old_json.parent.mkdir(parents=True, exist_ok=True)
    old_json.write_text(json.dumps({"snapshot": {"id": "1"}, "columns": [{"column": "bogus"}]}))
    monkeypatch.setattr(summaries, "SUMMARY_VERSION", 2)
    new_json, _ = summaries._columns_paths(api.Workspace(settings), "t", "1")
    assert new_json != old_json
    assert [c["column"] for c in api.column_summaries(settings, "t")["columns"]] == ["k", "d"]
    assert api.column_partition_arrays(settings, "t", "k")["depths"].shape == (8,)
