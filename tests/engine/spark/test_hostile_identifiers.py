"""Column names and paths are data: whatever a Parquet file's column is called, the SQL
the engine writes (DuckDB for calibration and replay, Spark for rewrites and checks) reads
that column and nothing else, and never runs a statement hidden in the name."""

from __future__ import annotations

import datetime as dt
import os

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.spark import calibrate_queries as cq
from engine.spark.duck_runner import DuckRunner
from engine.spark.exact import duckdb_counts, fragment_sql
from engine.workload.model import Range, ScanFragment
from engine.workload.sql.render import spark_identifier, sql_identifier

#: the attack as reported: a name closing the quoted identifier and writing a file
INJECT = "k\") from (select 1 as k); copy (select 42 as pwned) to 'x.csv'; select max(\"k"
HOSTILE = (INJECT, "a`b) as x, 1 as `pwn", "o'neil \"q\"", "line\nbreak", "dot.ted", "k")
ROWS = 40


def _table(directory, files=3):
    """``files`` files of ROWS rows; every hostile column holds the row number."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in range(files):
        base = np.arange(f * ROWS, (f + 1) * ROWS, dtype=np.int64)
        cols = {name: pa.array(base + j, pa.int64()) for j, name in enumerate(HOSTILE)}
        cols["d"] = pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=int(v)) for v in base],
                             pa.date32())
        path = directory / f"f{f}.parquet"
        pq.write_table(pa.table(cols), path)
        paths.append(str(path))
    return paths


def _frag(qid, column, lo, hi, columns=HOSTILE):
    return ScanFragment(qid, "t", ({column: Range(lo, hi, True, True)},), tuple(columns))


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """A working directory to find any file an injected COPY would write."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_identifiers_double_their_quote_character():
    assert sql_identifier('a"b') == '"a""b"' and spark_identifier("a`b") == "`a``b`"
    con = duckdb.connect()
    for name in HOSTILE:  # DuckDB reads each back as one column of exactly that name
        rel = con.execute(f"SELECT 7 AS {sql_identifier(name)}")
        assert [d[0] for d in rel.description] == [name] and rel.fetchall() == [(7,)]


@pytest.mark.parametrize("column", HOSTILE, ids=range(len(HOSTILE)))
def test_duckdb_counts_of_a_hostile_column_are_right_and_run_nothing_else(tmp_path, cwd, column):
    paths = _table(tmp_path / "t")
    j = HOSTILE.index(column)
    # the column holds row + j: rows 10..29 (of 120) have it in [10 + j, 29 + j]
    rows, matches = duckdb_counts(paths, [_frag("q", column, 10 + j, 29 + j)])
    assert sorted(rows.values()) == [ROWS] * 3
    assert matches[:, 0].tolist() == [20, 0, 0]
    assert os.listdir(cwd) == []


def test_the_fragment_predicate_quotes_every_column():
    sql = fragment_sql(_frag("q", INJECT, 1, 2))
    assert sql == ('(("k"") from (select 1 as k); copy (select 42 as pwned) to \'x.csv\'; '
                   'select max(""k" IS NOT NULL AND "k"") from (select 1 as k); copy (select 42 '
                   'as pwned) to \'x.csv\'; select max(""k" >= 1 AND "k"") from (select 1 as k); '
                   'copy (select 42 as pwned) to \'x.csv\'; select max(""k" <= 2))')


def test_the_query_probe_on_hostile_columns_measures_them_and_writes_nothing(tmp_path, cwd):
    paths = _table(tmp_path / "t", files=4)
    frags = [_frag("a", INJECT, 0, 4 * ROWS), _frag("b", HOSTILE[1], ROWS, 2 * ROWS),
             _frag("c", HOSTILE[3], 0, 10, columns=("d", HOSTILE[3]))]
    got = cq.measure_fragments(paths, frags, repeat=1)
    assert {p["columns"] for p in got["points"]} == {1, 2, len(HOSTILE)}
    assert os.listdir(cwd) == []
    # the aggregates read the named columns: the SQL of a projection sums each of them
    con = duckdb.connect()
    sql = cq.query_sql(paths, list(HOSTILE), numeric=HOSTILE, where=fragment_sql(frags[0]))
    total = sum(range(4 * ROWS))
    assert con.execute(sql).fetchall() == [(4 * ROWS, *[total + j * 4 * ROWS for j in range(len(HOSTILE))])]
    assert os.listdir(cwd) == []


def test_the_replay_runner_counts_a_hostile_predicate(tmp_path, cwd):
    paths = _table(tmp_path / "t")
    duck = DuckRunner(str(tmp_path / "work"))
    n, _, _, _ = duck.count(paths, _frag("q", INJECT, 5, 84), columns=HOSTILE)
    assert n == 80 and os.listdir(cwd) == []


def test_probe_files_go_into_a_folder_whose_name_holds_a_quote(tmp_path):
    con = duckdb.connect()
    paths = cq.make_files(con, tmp_path / "it's", 10, 2)
    assert [pq.ParquetFile(p).metadata.num_rows for p in paths] == [10, 10]


def _hostile_table(settings, layout, columns):
    """A registered table of 4 files whose columns are the hostile names (ints) and a
    timestamp without time zone named like a statement, with one approved plan."""
    from engine import api
    from engine.policy.base import PlanGroup
    from engine.table.footers import read_partitions
    from engine.table.store import TableStore
    from plan_helpers import insert_plan
    from security_helpers import sign_in

    store = TableStore(settings)
    root = store.managed_location("hostile")
    os.makedirs(root, exist_ok=True)
    paths = []
    for f in range(4):
        base = np.arange(f * ROWS, (f + 1) * ROWS, dtype=np.int64)[::-1]
        cols = {name: pa.array((base * 7919 + j) % (4 * ROWS), pa.int64())
                for j, name in enumerate(HOSTILE)}
        cols[TS] = pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=int(v) * 61)
                             for v in base], pa.timestamp("us"))
        paths.append(f"{root}/ingest-{f}.parquet")
        pq.write_table(pa.table(cols), paths[-1])
    schema, parts = read_partitions(paths)
    base = store.create("hostile", schema=schema, partitions=parts, operation="create",
                        target_rows=2 * ROWS)
    pid = insert_plan(settings, base, [PlanGroup(tuple(paths), layout, tuple(columns), "t")])
    for approver in ("alice", "bob"):  # the proposer did not sign in: two approvals
        if api.show_plan(settings, pid).status == "proposed":
            api.approve_plan(settings, pid, sign_in(settings, approver), reason="hostile names")
    return store, paths, pid


TS = "ts`) as x, date_part('SECOND', `k"


@pytest.mark.spark
@pytest.mark.parametrize("layout,columns", [("sort", (HOSTILE[1],)), ("zorder", (TS, INJECT))],
                         ids=["sort", "zorder"])
def test_a_rewrite_by_hostile_columns_keeps_every_row(settings, spark, tmp_path, cwd, layout, columns):
    from engine import api
    from security_helpers import sign_in

    store, paths, pid = _hostile_table(settings, layout, columns)
    before = pq.ParquetDataset(paths).read().sort_by(HOSTILE[0])
    api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    new = [p.path for p in store.current_snapshot("hostile").partitions]
    assert new and not set(new) & set(paths)
    after = pq.ParquetDataset(new).read().select(before.column_names).sort_by(HOSTILE[0])
    assert after.equals(before)
    if layout == "sort":  # each file sorted on the back-quoted column
        for p in new:
            v = pq.read_table(p).column(HOSTILE[1]).to_pylist()
            assert v == sorted(v)
    assert os.listdir(cwd) == []


def test_calibrate_queries_on_a_table_with_a_hostile_column_measures_it(settings, tmp_path, cwd):
    """The reported attack end to end: a Parquet column named like a statement, a query
    log naming it as a quoted identifier, ``calibrate --queries-on``."""
    import json

    from engine.cli import main

    data = tmp_path / "data"
    data.mkdir()
    for f in range(16):
        base = np.arange(f * 500, (f + 1) * 500, dtype=np.int64)
        pq.write_table(pa.table({INJECT: base, "v": base * 2.0}), data / f"f{f:02d}.parquet")
    ident = sql_identifier(INJECT)
    log = tmp_path / "q.jsonl"
    log.write_text("".join(json.dumps({"id": f"q{i}", "sql": f"SELECT sum(v), max({ident}) FROM h "
                                       f"WHERE {ident} >= 0 AND {ident} < {4000 + 1000 * i}"}) + "\n"
                           for i in range(6)))
    home = str(settings.home)
    assert main(["--home", home, "table", "register", "h", f"{data}/*.parquet"]) == 0
    assert main(["--home", home, "workload", "import", "h", str(log)]) == 0
    assert main(["--home", home, "calibrate", "--queries-on", "h", "--repeat", "1"]) == 0
    stored = json.loads((settings.home / "calibration.json").read_text())
    # query i keeps the 8 + 2i files its range covers (not all 16): the bounds were read
    assert {8, 10, 12, 14} <= {p["files"] for p in stored["queries"]["points"]}
    assert os.listdir(cwd) == []
