"""Exact utilization in one Spark pass equals DuckDB's COUNT(*) per file and predicate."""

from __future__ import annotations

import datetime as dt
import decimal
import random

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from engine.spark.exact import canonical_path, duckdb_counts, exact_scans
from engine.table.footers import read_partitions
from engine.table.model import Snapshot
from engine.workload.model import Range, ScanFragment

pytestmark = pytest.mark.spark

D0 = dt.date(2021, 1, 1)
T0 = dt.datetime(2021, 1, 1)
COLUMNS = ("i", "f", "m", "d", "t", "s")


def write_table(directory, files=4, rows=300, seed=5):
    """Files in 'ingestion order' with overlapping ranges and some NULLs, all types."""
    rng = random.Random(seed)
    paths = []
    for k in range(files):
        def maybe(v):
            return None if rng.random() < 0.05 else v
        base = k * 20
        ints = [maybe(base + rng.randint(0, 60)) for _ in range(rows)]
        table = pa.table({
            "i": pa.array(ints, pa.int64()),
            "f": pa.array([maybe(round(rng.uniform(base, base + 50), 3)) for _ in range(rows)], pa.float64()),
            "m": pa.array([maybe(decimal.Decimal(rng.randint(0, 9999)) / 100) for _ in range(rows)],
                          pa.decimal128(8, 2)),
            "d": pa.array([maybe(D0 + dt.timedelta(days=base + rng.randint(0, 90))) for _ in range(rows)],
                          pa.date32()),
            "t": pa.array([maybe(T0 + dt.timedelta(minutes=base * 60 + rng.randint(0, 5000))) for _ in range(rows)],
                          pa.timestamp("us")),
            "s": pa.array([maybe(rng.choice("abcdefgh") + rng.choice("xyz'")) for _ in range(rows)], pa.string()),
        })
        path = directory / f"part {k:03d}.parquet"  # a space: Spark reports it escaped
        pq.write_table(table, path)
        paths.append(str(path))
    schema, parts = read_partitions(paths)
    snap = Snapshot("1", None, "2021-01-01T00:00:00Z", "register", "t", schema, tuple(parts))
    return paths, snap


def duck_literal(v):
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v}'"
    if isinstance(v, dt.date):
        return f"DATE '{v}'"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


def duck_predicate(fragment):
    """Written independently of engine.spark.exact.fragment_sql on purpose."""
    if not fragment.boxes:
        return "TRUE"
    ors = []
    for box in fragment.boxes:
        ands = ["TRUE"]
        for c, r in box.items():
            if r.min is not None:
                ands.append(f"{c} {'>=' if r.min_inclusive else '>'} {duck_literal(r.min)}")
            if r.max is not None:
                ands.append(f"{c} {'<=' if r.max_inclusive else '<'} {duck_literal(r.max)}")
            ands.append(f"{c} IS NOT NULL")
        ors.append("(" + " AND ".join(ands) + ")")
    return " OR ".join(ors)


bounds = {
    "i": st.integers(-5, 130),
    "f": st.floats(-5, 130, allow_nan=False).map(lambda x: round(x, 2)),
    "m": st.integers(-100, 10100).map(lambda k: decimal.Decimal(k) / 100),
    "d": st.integers(-5, 160).map(lambda k: D0 + dt.timedelta(days=k)),
    "t": st.integers(-100, 9000).map(lambda k: T0 + dt.timedelta(minutes=k)),
    "s": st.text(alphabet="abcdefghxyz'", min_size=1, max_size=2),
}


@st.composite
def fragments(draw, qid):
    n_boxes = draw(st.integers(0, 2))
    boxes = []
    for _ in range(n_boxes):
        cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=2, unique=True))
        box = {}
        for c in cols:
            a, b = draw(st.none() | bounds[c]), draw(st.none() | bounds[c])
            if a is not None and b is not None and a > b:
                a, b = b, a
            box[c] = Range(a, b, draw(st.booleans()), draw(st.booleans()))
        boxes.append(box)
    return ScanFragment(qid, "t", tuple(boxes), ("i", "s"))


@hsettings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_exact_utilization_equals_duckdb_count(spark, tmp_path_factory, data):
    directory = tmp_path_factory.mktemp("exact")
    paths, snap = write_table(directory, seed=data.draw(st.integers(0, 10**6)))
    frags = [data.draw(fragments(f"q{k}")) for k in range(20)]
    scans = exact_scans(spark, snap, frags)
    zm = snap.zonemaps()
    con = duckdb.connect()
    for frag, scan in zip(frags, scans):
        pred = duck_predicate(frag)
        for p, path in enumerate(zm.paths):
            n, hits = con.execute(
                f"SELECT COUNT(*), COUNT(*) FILTER (WHERE {pred}) FROM read_parquet(?)",
                [path]).fetchone()
            assert zm.rows[p] == n
            if scan.scanned[p]:
                assert scan.utilization[p] == pytest.approx(hits / n), (frag, path)
            else:
                assert hits == 0, (frag, path)  # zonemap pruning is conservative
                assert scan.utilization[p] == 0.0
            if scan.fully_covered[p]:
                assert hits == n


def test_one_pass_counts_match_duckdb_and_paths_with_spaces(spark, tmp_path):
    paths, snap = write_table(tmp_path, files=3, rows=200, seed=11)
    frags = [
        ScanFragment("a", "t", ({"d": Range(D0, D0 + dt.timedelta(days=30))},), ("d",)),
        ScanFragment("b", "t", ({"s": Range("c", "e", True, False)}, {"i": Range(None, 10)}), ("s",)),
        ScanFragment("c", "t", (), ("i",)),
        ScanFragment("e", "t", ({"t": Range(T0 + dt.timedelta(hours=30), None, False, True),
                                 "m": Range(decimal.Decimal("10.5"), decimal.Decimal("80"))},), ("t",)),
    ]
    scans = exact_scans(spark, snap, frags)
    rows, matches = duckdb_counts(paths, frags)
    zm = snap.zonemaps()
    for i, scan in enumerate(scans):
        expect = np.where(scan.scanned, matches[:, i] / zm.rows, 0.0)
        assert scan.utilization.tolist() == pytest.approx(expect.tolist())
    assert scans[2].utilization.tolist() == [1.0, 1.0, 1.0]  # no predicate: every row
    assert 0 < scans[0].utilization.max() < 1  # a real, partial match somewhere
    assert sorted(rows) == sorted(canonical_path(p) for p in paths)


def test_canonical_path_spellings():
    assert canonical_path("file:///tmp/a%20b.parquet") == "/tmp/a b.parquet"
    assert canonical_path("file:/tmp/x.parquet") == "/tmp/x.parquet"
    assert canonical_path("/tmp/x.parquet") == "/tmp/x.parquet"
    assert canonical_path("s3a://bucket/k%3D1/x.parquet") == "s3a://bucket/k=1/x.parquet"
