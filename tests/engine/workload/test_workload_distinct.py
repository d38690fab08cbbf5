"""A busy log repeats a few statements many times: the store decodes each distinct statement
once and gives the same fragments as decoding every row, and its distinct statements with
their counts stand for the log exactly."""

from __future__ import annotations

import datetime as dt
import json
import types

from engine.table.model import TableSchema
from engine.workload.model import Range, RangeSource, ScanFragment
from engine.workload.store import DistinctFragments, WorkloadStore

SCHEMA = TableSchema((("a", "int"), ("d", "date"), ("s", "string")))


def repeated_log() -> list[ScanFragment]:
    """Three statements logged 9 times out of order, one without a filter, an id with a
    quote and a backslash, a missing timestamp, a repeated query id."""
    one = ScanFragment("q", "t", ({"d": Range(dt.date(2024, 1, 1), dt.date(2024, 2, 1), True, False)},),
                       ("d", "a"), sql="SELECT a FROM t WHERE d >= DATE '2024-01-01'",
                       sources=(RangeSource("d", "direct"),))
    two = ScanFragment("q", "t", ({"a": Range(1, 5)}, {"a": Range(9, None), "s": Range("x", "y")}),
                       ("a", "s"), sql="SELECT s FROM t WHERE a BETWEEN 1 AND 5 OR (a >= 9 AND s BETWEEN 'x' AND 'y')",
                       sources=(RangeSource("a", "propagated", "b"), RangeSource("s", "direct")))
    bare = ScanFragment("q", "t", (), ("a",), sql="SELECT a FROM t")
    rows = [(one, "1", "2024-03-01T10:00:00"), (two, "2", "2024-03-01T09:00:00"),
            (one, "3", "2024-03-01T08:00:00"), (bare, 'q"4\\x', None), (two, "5", "2024-03-01T11:00:00"),
            (one, "6", "2024-03-01T10:00:00"), (bare, "7", "2024-03-01T07:00:00"),
            (two, "2", "2024-03-02T00:00:00"), (one, "9", None)]
    return [f.relogged(qid, ts) for f, qid, ts in rows]


def store_with(tmp_path, frags) -> WorkloadStore:
    store = WorkloadStore(types.SimpleNamespace(home=str(tmp_path)))
    store.replace("t", frags, SCHEMA)
    return store


def decoded_row_by_row(store: WorkloadStore) -> list[ScanFragment]:
    """The reference: every stored row parsed and decoded on its own, ordered by time."""
    lines = store.path("t").read_text().splitlines()
    kinds = dict(TableSchema.from_json(json.loads(lines[0])["schema"]).columns)
    frags = [ScanFragment.from_json(kinds, json.loads(line)) for line in lines[1:]]
    def key(i):
        ts = frags[i].ts
        return (0, dt.datetime.min) if not ts else (1, dt.datetime.fromisoformat(ts))
    return [frags[i] for i in sorted(range(len(frags)), key=lambda i: (key(i), i))]


def test_repeated_statements_decode_to_the_fragments_of_a_row_by_row_read(tmp_path) -> None:
    store = store_with(tmp_path, repeated_log())
    got = store.fragments("t")
    assert got == decoded_row_by_row(store)
    assert [f.query_id for f in got][:3] == ['q"4\\x', "9", "7"]  # no timestamp first


def test_distinct_statements_count_every_query_once(tmp_path) -> None:
    store = store_with(tmp_path, repeated_log())
    frags, distinct = store.fragments("t"), store.distinct("t")
    assert len(distinct.fragments) == 3 and int(distinct.counts.sum()) == len(frags) == 9
    assert sorted(distinct.counts.tolist()) == [2, 3, 4]
    for frag, code in zip(frags, distinct.of_query.tolist()):
        rep = distinct.fragments[code]
        assert (rep.boxes, rep.sql, rep.sources, rep.columns) == (frag.boxes, frag.sql, frag.sources, frag.columns)
    # each statement's representative is its first query in the log's order
    firsts = {}
    for j, code in enumerate(distinct.of_query.tolist()):
        firsts.setdefault(code, j)
    assert [distinct.fragments[c].query_id for c in sorted(firsts)] == \
        [frags[firsts[c]].query_id for c in sorted(firsts)]
    # the same grouping as comparing the fragments themselves
    again = DistinctFragments.of(frags)
    assert again.counts.tolist() == distinct.counts.tolist()
    assert again.of_query.tolist() == distinct.of_query.tolist()


def test_a_row_in_another_layout_is_still_read(tmp_path) -> None:
    store = store_with(tmp_path, repeated_log()[:2])
    path = store.path("t")
    header, *rows = path.read_text().splitlines()
    moved = json.loads(rows[0])
    moved = {"table": moved.pop("table"), **moved}  # keys in another order
    path.write_text("\n".join([header, json.dumps(moved), *rows[1:], ""]))
    assert store.fragments("t") == decoded_row_by_row(store)
    assert int(store.distinct("t").counts.sum()) == 2


def test_an_empty_or_missing_log_has_no_statement(tmp_path) -> None:
    store = WorkloadStore(types.SimpleNamespace(home=str(tmp_path)))
    assert store.fragments("t") == [] and store.distinct("t").fragments == ()
    store.replace("t", [], SCHEMA)
    assert store.fragments("t") == [] and len(store.distinct("t").counts) == 0
