"""Row-group pruning in the product's scan analysis: files written with
several row groups (PAW's STR row groups) are charged only the row groups a query meets.

Real Parquet files written by pyarrow; checked by hand on a small case, against a brute
force over each file's own footer statistics (and its rows) on random data, and against
DuckDB's row-group counters."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from duckdb_helpers import connect as duckdb_connect
from duckdb_helpers import parquet_list_sql as duckdb_files
from duckdb_helpers import profiled_query as duckdb_profiled
from engine import api
from engine.cli import main as cli_main
from engine.design.paw.descriptors import str_order
from engine.scan import rowgroups
from engine.scan.pruning import analyze_fragment, analyze_workload, fragment_summary
from engine.table.store import TableStore
from engine.workload.model import ScanFragment
from engine.workload.store import WorkloadStore
from rowgroup_helpers import chunk_bytes, rowgroup_table, xy_fragment

_table, _chunk_bytes = rowgroup_table, chunk_bytes


def _frag(qid: str, *boxes: dict, table: str = "t") -> ScanFragment:
    return xy_fragment(qid, *boxes, table=table)


def _groups(settings, snap, name="t"):
    return rowgroups.for_snapshot(TableStore(settings), name, snap)


# -- by hand ---------------------------------------------------------------------------------
def test_a_file_is_charged_only_the_row_groups_a_query_meets(settings):
    """File 0: x = 0..29 in 3 row groups [0,9] [10,19] [20,29]; file 1: x = 100..129, one."""
    a = np.arange(30, dtype=float)
    snap = _table(settings, "t", [(pa.table({"x": a, "y": a}), 10),
                                  (pa.table({"x": a + 100, "y": a}), 30)])
    groups = _groups(settings, snap)
    assert groups is not None and len(groups) == 3 and groups.total == 4  # file 1's lone group is not held
    assert groups.start.tolist() == [0, 3, 3]
    zm = snap.zonemaps()
    inside, gap, both = (_frag("in", {"x": (12.0, 15.0)}), _frag("gap", {"x": (9.2, 9.8)}),
                         _frag("both", {"x": (25.0, 105.0)}))
    file_level = [analyze_fragment(zm, f) for f in (inside, gap, both)]
    rg_level = list(analyze_workload(zm, [inside, gap, both], groups))
    read = zm.read_bytes(["x", "y"])
    # each row group is charged its own chunks' bytes, which sum to the file's
    chunks = _chunk_bytes(snap.partitions[0].path)
    assert len(chunks) == 3 and sum(chunks) == read[0] and len(set(chunks)) > 1  # not a third each
    # file level: the whole of file 0 for the first two
    assert [s.index.tolist() for s in file_level] == [[0], [0], [0, 1]]
    # row-group level: file 0's 2nd row group; nothing in the gap; file 0's 3rd + file 1
    assert [s.index.tolist() for s in rg_level] == [[0], [], [0, 1]]
    assert rg_level[0].bytes_scanned == chunks[1]
    assert rg_level[1].bytes_scanned == 0.0
    assert rg_level[2].bytes_scanned == chunks[2] + read[1]
    assert [s.row_groups for s in rg_level] == [(1, 4), (0, 4), (2, 4)]
    # utilization stays the share of the file's rows that match: 4 of 30 rows (x = 12..15)
    assert rg_level[0].util[0] == pytest.approx((15 - 12) / 9 * 10 / 30)
    summary = fragment_summary(rg_level[0])
    assert (summary["row_groups_read"], summary["row_groups"], summary["scanned"]) == (1, 4, 1)
    assert summary["wasted_bytes"] == pytest.approx(chunks[1] - rg_level[0].util[0] * read[0])
    # a row-group file written before the sizes were kept (sizes 0): bytes shared by rows
    old = dataclasses.replace(groups, zonemaps=dataclasses.replace(
        groups.zonemaps, bytes=np.zeros(3, np.int64),
        columns={c: dataclasses.replace(v, compressed_bytes=np.zeros(3, np.int64))
                 for c, v in groups.zonemaps.columns.items()}))
    (by_rows,) = analyze_workload(zm, [inside], old)
    assert by_rows.bytes_scanned == pytest.approx(read[0] / 3)
    # no boxes: everything read, every row group counted
    (everything,) = analyze_workload(zm, [_frag("all")], groups)
    assert everything.bytes_scanned == pytest.approx(read.sum()) and everything.row_groups == (4, 4)


def test_api_and_cli_keep_the_file_level_answer_selectable(settings, capsys):
    a = np.arange(30, dtype=float)
    snap = _table(settings, "t", [(pa.table({"x": a, "y": a}), 10)])
    WorkloadStore(settings).append("t", [_frag("q", {"x": (12.0, 15.0)})], snap.schema)
    files = api.pruning(settings, "t", row_groups=False)
    rgs = api.pruning(settings, "t", row_groups=True)
    assert "row_groups" not in files[0] and rgs[0]["row_groups_read"] == 1
    assert rgs[0]["bytes_scanned"] == _chunk_bytes(snap.partitions[0].path)[1]
    assert cli_main(["--home", str(settings.home), "pruning", "t", "--row-groups"]) == 0
    assert "1 of 3 row groups read (67% skipped)" in capsys.readouterr().out
    assert cli_main(["--home", str(settings.home), "pruning", "t", "--files"]) == 0
    assert "row groups" not in capsys.readouterr().out


# -- brute force on random STR-ordered files, and DuckDB's counters ---------------------------
def _brute(paths: list[str], frag: ScanFragment) -> tuple[list[int], list[float], int, bool]:
    """From the footers alone: (files read, bytes of the x and y chunks of the row groups met
    per file read, row groups read), and
    whether every row group holding a matching row was read (from the rows themselves)."""
    files, charged, n_read, sound = [], [], 0, True
    for f, path in enumerate(paths):
        pf = pq.ParquetFile(path)
        meta = pf.metadata
        names = [meta.schema.column(j).name for j in range(meta.num_columns)]
        met_rows, met = 0.0, 0
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            st = {c: rg.column(names.index(c)).statistics for c in ("x", "y")}
            hit = any(all((r.max is None or st[c].min <= r.max) and (r.min is None or st[c].max >= r.min)
                          for c, r in box.items()) for box in frag.boxes)
            rows = pf.read_row_group(g, columns=["x", "y"])
            truth = any(np.all([((r.min is None) | (rows.column(c).to_numpy() >= (r.min or 0)))
                                & ((r.max is None) | (rows.column(c).to_numpy() <= (r.max or 0)))
                                for c, r in box.items()], axis=0).any() for box in frag.boxes)
            sound &= hit or not truth
            if hit:
                met += 1
                met_rows += sum(rg.column(names.index(c)).total_compressed_size for c in ("x", "y"))
        if met:
            files.append(f)
            charged.append(met_rows)
            n_read += met
    return files, charged, n_read, sound


def test_row_group_pruning_equals_a_brute_force_over_the_footers_and_duckdb(settings, tmp_path):
    rng = np.random.default_rng(11)
    files = []
    for i in range(6):  # clustered files of 300 rows, STR-ordered into row groups of 100 or one of 300
        centre = rng.uniform(0, 80, 2)
        x = np.vstack([rng.uniform(centre, centre + 20, (150, 2)),
                       rng.uniform(centre + [0, 60], centre + [20, 80], (150, 2))])
        x = x[np.concatenate(str_order(x, 3))]
        files.append((pa.table({"x": x[:, 0], "y": x[:, 1]}), 300 if i == 5 else 100))
    snap = _table(settings, "t", files)
    paths = [p.path for p in snap.partitions]
    zm = snap.zonemaps()
    groups = _groups(settings, snap)
    assert groups.total == 5 * 3 + 1
    frags = []
    for k in range(60):
        lo = rng.uniform(0, 150, 2)
        hi = lo + rng.uniform(1, 40, 2)
        box = {"x": (lo[0], hi[0]), "y": (lo[1], hi[1])}
        if k % 5 == 0:
            box["y"] = (None, hi[1])  # an open bound
        boxes = [box] if k % 7 else [box, {"x": (hi[0] + 10, hi[0] + 15)}]  # an OR
        frags.append(_frag(f"q{k}", *boxes))
    read = zm.read_bytes(["x", "y"])
    con, prof = duckdb_connect(tmp_path)
    fewer = 0
    for frag, scan in zip(frags, analyze_workload(zm, frags, groups)):
        want_files, want_share, want_rgs, sound = _brute(paths, frag)
        assert sound, frag.query_id
        assert scan.index.tolist() == want_files, frag.query_id
        assert scan.scanned_bytes.tolist() == want_share
        assert scan.row_groups == (want_rgs, 16)
        fewer += scan.bytes_scanned < analyze_fragment(zm, frag).bytes_scanned
        if len(frag.boxes) == 1 and all(r.min is not None for r in frag.boxes[0].values()):
            where = " AND ".join(f"{c} BETWEEN {r.min} AND {r.max}" for c, r in frag.boxes[0].items())
            _, _, counters = duckdb_profiled(
                con, f"SELECT count(*) FROM read_parquet({duckdb_files(paths)}) WHERE {where}", prof)
            assert counters["row_groups"] == want_rgs, frag.query_id
    assert fewer >= 10  # the row groups pay off on this data


def test_the_setting_turns_row_groups_on_for_the_dashboard_and_the_policies(tmp_path, monkeypatch):
    from engine.core.config import load_settings
    from engine.plans import service
    from engine.workspace import Workspace

    settings = load_settings({"home": str(tmp_path / "home"), "target_rows": 30, "prune_row_groups": True})
    a = np.arange(30, dtype=float)
    snap = _table(settings, "t", [(pa.table({"x": a, "y": a}), 10), (pa.table({"x": a + 100, "y": a}), 10)])
    WorkloadStore(settings).append("t", [_frag("q", {"x": (12.0, 15.0)}), _frag("r", {"x": (101.0, 102.0)})],
                                   snap.schema)
    from engine.summaries.analysis import pruning_summaries

    (q, r) = pruning_summaries(api.Workspace(settings), "t")
    assert (q["row_groups_read"], q["row_groups"], r["row_groups_read"]) == (1, 6, 1)
    chunks = [_chunk_bytes(p.path) for p in snap.partitions]
    assert q["bytes_scanned"] == chunks[0][1]
    assert api.pruning(settings, "t", row_groups=False)[0]["scanned"] == 1  # still selectable
    seen = []  # the policies' context (ctx.scans) is built with the row groups

    def spy(zonemaps, window, row_groups=None):
        scans = analyze_workload(zonemaps, window, row_groups)
        seen.append([s.bytes_scanned for s in scans])
        return scans

    monkeypatch.setattr(service, "analyze_workload", spy)
    service.decide(Workspace(settings), "t", "wair", {})
    assert seen == [[chunks[0][1], chunks[1][0]]]


def test_the_stored_pruning_summary_follows_the_setting(tmp_path):
    """The dashboard's stored pruning summary is kept per level: switching
    ``prune_row_groups`` in the same workspace gives the other level's answer, not the
    file stored under the first setting."""
    from engine.summaries.store import pruning_summary
    from engine.core.config import load_settings

    files = load_settings({"home": str(tmp_path / "home"), "target_rows": 30,
                           "prune_row_groups": False})
    a = np.arange(30, dtype=float)
    snap = _table(files, "t", [(pa.table({"x": a, "y": a}), 10)])
    WorkloadStore(files).append("t", [_frag("q", {"x": (12.0, 15.0)})], snap.schema)
    read = snap.zonemaps().read_bytes(["x", "y"])[0]
    assert pruning_summary(api.Workspace(files), "t")[0]["bytes_scanned"] == read
    groups = dataclasses.replace(files, prune_row_groups=True)
    assert pruning_summary(api.Workspace(groups), "t")[0]["bytes_scanned"] == _chunk_bytes(snap.partitions[0].path)[1]
    assert pruning_summary(api.Workspace(files), "t")[0]["bytes_scanned"] == read  # both stay stored


def test_realized_feedback_compares_snapshots_at_the_same_level(tmp_path):
    """The same rows written as 1 row group (before) and as 3 (after, e.g. a PAW plan with
    n_mbr = 3): with the setting, a query inside one row group reads a third of the new file."""
    from engine.core.config import load_settings
    from engine.plans.feedback import compare_snapshots

    a = np.arange(30, dtype=float)
    for on in (True, False):
        settings = load_settings({"home": str(tmp_path / f"home{on}"), "prune_row_groups": on})
        before = _table(settings, "before", [(pa.table({"x": a, "y": a}), 30)])
        after = _table(settings, "after", [(pa.table({"x": a, "y": a}), 10)])
        got = compare_snapshots(TableStore(settings), before, after, [_frag("q", {"x": (12.0, 15.0)}, table="t")])
        read, read_after = (s.zonemaps().read_bytes(["x", "y"])[0] for s in (before, after))
        assert got["bytes_before"] == read  # one row group: the same at both levels
        assert got["bytes_after"] == (_chunk_bytes(after.partitions[0].path)[1] if on else read_after)


def test_an_open_format_table_reads_its_row_groups_from_the_footers(settings, tmp_path):
    """A Delta table (its log keeps file statistics only): the files' footers give the row groups."""
    from deltalake import WriterProperties
    from format_helpers import delta_table

    a = np.arange(30, dtype=float)
    path = str(tmp_path / "delta")
    delta_table(path, pa.table({"x": a, "y": a}), 30, writer_properties=WriterProperties(max_row_group_size=10))
    store = TableStore(settings)
    snap = store.register_delta("d", path)
    (part,) = snap.partitions
    assert pq.ParquetFile(part.path.removeprefix("file://")).metadata.num_row_groups == 3
    groups = rowgroups.for_snapshot(store, "d", snap)
    assert (len(groups), groups.total) == (3, 3)
    (scan,) = analyze_workload(snap.zonemaps(), [_frag("q", {"x": (12.0, 15.0)}, table="d")], groups)
    assert scan.row_groups == (1, 3)
    assert scan.bytes_scanned == _chunk_bytes(part.path)[1]
    assert rowgroups.for_snapshot(store, "d", snap, max_footer_files=0) is None  # too many: file level


def test_row_groups_are_computed_once_per_snapshot_and_cached_on_disk(settings, monkeypatch):
    """A snapshot's row groups are kept on the snapshot object and on disk; a fresh
    process (a new snapshot object) memory-maps them instead of reading the row-group files
    and matching the paths again; another snapshot gets its own entry."""
    a = np.arange(30, dtype=float)
    snap = _table(settings, "t", [(pa.table({"x": a, "y": a}), 10), (pa.table({"x": a + 100, "y": a}), 30),
                                  (pa.table({"x": a + 200, "y": a}), 15)])
    store = TableStore(settings)
    first = rowgroups.for_snapshot(store, "t", snap)
    assert rowgroups.for_snapshot(store, "t", snap) is first  # same object: kept on the snapshot
    entries = list((settings.home / "cache" / "zonemaps" / "t" / ".rowgroups").iterdir())
    assert len(entries) == 1

    def no_reading(*args, **kwargs):
        raise AssertionError("read the row-group files again")

    monkeypatch.setattr(TableStore, "row_group_zonemaps", no_reading)
    monkeypatch.setattr(rowgroups.RowGroupMaps, "of", no_reading)
    fresh = dataclasses.replace(snap)  # what a new process loads: nothing remembered on it
    again = rowgroups.for_snapshot(store, "t", fresh)
    assert again is not first
    assert (again.start.tolist(), again.total) == ([0, 3, 3, 5], 6) == (first.start.tolist(), first.total)
    assert again.zonemaps.paths.tolist() == first.zonemaps.paths.tolist()
    assert again.zonemaps.bytes.tolist() == first.zonemaps.bytes.tolist()
    assert again.zonemaps.column("x").hi.tolist() == first.zonemaps.column("x").hi.tolist() == [9, 19, 29, 214, 229]
    frag = _frag("q", {"x": (12.0, 15.0)}, {"x": (220.0, 221.0)})
    (s1,), (s2,) = analyze_workload(snap.zonemaps(), [frag], first), analyze_workload(fresh.zonemaps(), [frag], again)
    assert (s1.index.tolist(), s1.scanned_bytes.tolist(), s1.row_groups) == \
        (s2.index.tolist(), s2.scanned_bytes.tolist(), s2.row_groups) == ([0, 2], s1.scanned_bytes.tolist(), (2, 6))
    # a table whose files all hold one row group caches that answer too (None)
    one = _table(settings, "one", [(pa.table({"x": a, "y": a}), 30)])
    monkeypatch.undo()
    assert rowgroups.for_snapshot(store, "one", one) is None
    monkeypatch.setattr(TableStore, "row_group_zonemaps", no_reading)
    assert rowgroups.for_snapshot(store, "one", dataclasses.replace(one)) is None


@pytest.mark.spark
def test_exact_counts_and_per_partition_output_honour_the_row_groups(settings, spark, capsys):
    """``pruning --exact --row-groups`` and ``--per-partition`` at row-group level.
    File 0: x = 0..29 in row groups [0,9] [10,19] [20,29]; file 1: x = 100..129 in one."""
    import json

    a = np.arange(30, dtype=float)
    snap = _table(settings, "t", [(pa.table({"x": a, "y": a}), 10), (pa.table({"x": a + 100, "y": a}), 30)])
    WorkloadStore(settings).append("t", [_frag("in", {"x": (12.0, 15.0)}), _frag("gap", {"x": (9.2, 9.8)}),
                                         _frag("both", {"x": (25.0, 105.0)})], snap.schema)
    chunks = _chunk_bytes(snap.partitions[0].path)
    read = snap.zonemaps().read_bytes(["x", "y"])
    est = api.pruning(settings, "t", row_groups=True)
    exact = api.pruning(settings, "t", exact=True, row_groups=True, spark=spark)
    files = api.pruning(settings, "t", exact=True, row_groups=False, spark=spark)
    for e, x in zip(est, exact):  # the same files, bytes and row groups as the estimate
        assert (x["scanned"], x["bytes_scanned"], x["row_groups_read"], x["row_groups"]) == \
            (e["scanned"], e["bytes_scanned"], e["row_groups_read"], e["row_groups"])
    assert [x["bytes_scanned"] for x in exact] == [chunks[1], 0, chunks[2] + read[1]]
    assert [f["bytes_scanned"] for f in files] == [read[0], read[0], read[0] + read[1]]
    # utilization from the true counts: 4 of file 0's 30 rows (12..15); 5 + 6 of 30 each for "both"
    assert exact[0]["average_utilization"] == pytest.approx(4 / 30, abs=1e-6)
    assert exact[2]["average_utilization"] == pytest.approx((5 / 30 + 6 / 30) / 2, abs=1e-6)
    # wasted: what is charged beyond the matching rows' share of the file
    assert exact[0]["wasted_bytes"] == pytest.approx(chunks[1] - 4 / 30 * read[0])
    # --per-partition at row-group level: the bytes each file is charged, 0 where pruned
    assert cli_main(["--home", str(settings.home), "pruning", "t", "--row-groups", "--per-partition",
                     "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["per_partition"]["bytes_charged"] for r in rows] == \
        [[chunks[1], 0.0], [0.0, 0.0], [chunks[2], read[1]]]
    assert [r["per_partition"]["scanned"] for r in rows] == [[True, False], [False, False], [True, True]]
    assert rows[0]["per_partition"]["read_bytes"] == read.tolist()  # each whole file, as before
    assert cli_main(["--home", str(settings.home), "pruning", "t", "--files", "--per-partition", "--json"]) == 0
    assert "bytes_charged" not in json.loads(capsys.readouterr().out)[0]["per_partition"]
