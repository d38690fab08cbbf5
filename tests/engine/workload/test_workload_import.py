"""Log reading, import report, strict mode, persistence, the API and the CLI (real table)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import threading
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.core.errors import (
    DataFileError, InvalidParameterError, TableNotFoundError, WorkloadParseError,
)
from engine.table.model import TableSchema
from engine.table.store import TableStore
from engine.workload.importer import import_log, normalize_ts, read_log, split_sql
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore
from security_helpers import ROOT, sign_in


@pytest.fixture
def table(settings, tmp_path: Path) -> str:
    """A registered 2-file Parquet table `li` with int, decimal, date, timestamp, string columns."""
    data = tmp_path / "data"
    data.mkdir()
    for part in range(2):
        n = 50
        pq.write_table(pa.table({
            "l_orderkey": pa.array(range(part * n, (part + 1) * n), pa.int64()),
            "l_quantity": pa.array([Decimal(i % 50) for i in range(n)], pa.decimal128(15, 2)),
            "l_shipdate": pa.array([dt.date(1994, 1, 1) + dt.timedelta(days=i + 100 * part)
                                    for i in range(n)], pa.date32()),
            "l_ts": pa.array([dt.datetime(2020, 1, 1, i % 24) for i in range(n)], pa.timestamp("us")),
            "l_shipmode": pa.array(["MAIL" if i % 2 else "AIR" for i in range(n)], pa.string()),
        }), data / f"part-{part}.parquet")
    api.register_table(settings, "li", str(data))
    return "li"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


SQL_LOG = """-- nightly report
-- ts: 2024-03-01T10:00:00+01:00
select l_orderkey from li where l_shipdate >= date '1994-01-01' + interval '1' month
  and l_comment_free = 'x;y' or l_quantity < 5;
-- ts: 2024-03-01T08:00:00Z
select sum(l_quantity) from li where l_shipmode in ('MAIL', 'AIR');
select * from orders;
select from where;
select nope from li;
/* trailing ; comment */ select l_ts from li where cast(l_ts as date) = date '2020-01-01'
"""


def test_split_sql_lines_quotes_comments_and_ts() -> None:
    text = "-- ts: 2024-01-01\nselect ';' as a, \"x;y\" from t; /* ; */\n\n  select 'it''s' ;select `a;b` from u -- ; \n;"
    entries = list(split_sql(text))
    assert [(e.line, e.column) for e in entries] == [(2, 1), (4, 3), (4, 19)]
    assert entries[0].sql == "select ';' as a, \"x;y\" from t" and entries[0].ts == "2024-01-01"
    assert entries[1].sql == "select 'it''s'" and entries[1].ts is None
    assert entries[2].sql.startswith("select `a;b` from u")
    assert list(split_sql("-- only a comment\n/* and another */\n")) == []


def test_normalize_ts() -> None:
    assert normalize_ts("2024-03-01T10:00:00+01:00") == "2024-03-01T09:00:00"
    assert normalize_ts("2024-03-01") == "2024-03-01T00:00:00"
    assert normalize_ts(0) == "1970-01-01T00:00:00"
    assert normalize_ts(1_700_000_000_000) == normalize_ts(1_700_000_000)
    with pytest.raises(ValueError):
        normalize_ts("yesterday")


def test_import_sql_log_reports_and_persists(settings, table, tmp_path) -> None:
    path = _write(tmp_path, "log.sql", SQL_LOG.replace("l_comment_free", "l_shipmode"))
    report = import_log(TableStore(settings), WorkloadStore(settings), table, path)
    assert report.statements == 6
    assert report.fragments == 3
    assert report.ignored == 1  # `select * from orders`
    assert [line for line, _ in report.skipped] == [8, 9]
    assert "cannot parse" in report.skipped[0][1] and "'nope'" in report.skipped[1][1]

    frags = WorkloadStore(settings).fragments(table)
    # ordered by ts (none first, then 08:00 UTC, then 09:00 UTC), import order on ties
    assert [f.query_id for f in frags] == ["log:10", "log:6", "log:3"]
    assert [f.ts for f in frags] == [None, "2024-03-01T08:00:00", "2024-03-01T09:00:00"]
    q3 = frags[2]
    assert q3.boxes == (
        {"l_shipdate": Range(dt.date(1994, 2, 1), None), "l_shipmode": Range("x;y", "x;y")},
        {"l_quantity": Range(None, Decimal("5"), True, False)})
    assert frags[0].boxes == ({"l_ts": Range(dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 2),
                                             True, False)},)
    assert frags[1].columns == ("l_quantity", "l_shipmode")


def test_strict_mode_names_file_line_and_column(settings, table, tmp_path) -> None:
    path = _write(tmp_path, "log.sql", SQL_LOG.replace("l_comment_free", "l_shipmode"))
    with pytest.raises(WorkloadParseError) as err:
        import_log(TableStore(settings), WorkloadStore(settings), table, path, strict=True)
    assert err.value.file == path and err.value.line == 8
    assert str(err.value).startswith(f"{path}:8:")
    assert WorkloadStore(settings).fragments(table) == []  # nothing persisted

    path = _write(tmp_path, "cols.sql", "select 1 from li;\n\n  select l_orderkey,\n nope from li;")
    with pytest.raises(WorkloadParseError, match=r"cols.sql:3: unknown column 'nope'") as err:
        import_log(TableStore(settings), WorkloadStore(settings), table, path, strict=True)
    assert err.value.line == 3


def test_parse_error_position_is_absolute(settings, table, tmp_path) -> None:
    path = _write(tmp_path, "pos.sql", "select 1 from li;\n\n   select l_orderkey\n   from li where (;")
    with pytest.raises(WorkloadParseError) as err:
        import_log(TableStore(settings), WorkloadStore(settings), table, path, strict=True)
    assert err.value.line == 4 and err.value.column is not None and err.value.column > 10


def test_import_jsonl_with_ids_and_stats(settings, table, tmp_path) -> None:
    lines = [
        {"ts": "2024-01-02T00:00:00", "sql": "select l_orderkey from li where l_orderkey between 10 and 20",
         "id": "A1", "duration_ms": 12.5, "bytes_scanned": 2048, "user": "alice"},
        "not json at all",
        {"ts": 1704067200, "sql": "select l_shipmode from li where l_shipmode = 'AIR'"},
        {"ts": "2024-01-03", "nosql": 1},
        {"ts": "2024-01-04", "sql": "select * from li where l_orderkey > 'x' and bogus(1"},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n\n"
    path = _write(tmp_path, "log.jsonl", text)
    report = api.import_workload(settings, table, path)
    assert report["statements"] == 5 and report["fragments"] == 2
    assert [s["line"] for s in report["skipped"]] == [2, 4, 5]
    assert report["skipped"][0]["reason"].startswith("invalid JSON")
    frags = api.workload_fragments(settings, table)
    assert [f.query_id for f in frags] == ["log:3", "A1"]  # 2024-01-01 before 2024-01-02
    a1 = frags[1]
    assert (a1.duration_ms, a1.bytes_scanned, a1.user) == (12.5, 2048, "alice")
    assert a1.boxes == ({"l_orderkey": Range(10, 20)},)

    with pytest.raises(WorkloadParseError, match=r"log.jsonl:2:.*invalid JSON"):
        import_log(TableStore(settings), WorkloadStore(settings), table, path, strict=True)


def test_gzip_log(settings, table, tmp_path) -> None:
    path = tmp_path / "log.sql.gz"
    path.write_bytes(gzip.compress(b"select l_orderkey from li where l_orderkey = 3;"))
    report = import_log(TableStore(settings), WorkloadStore(settings), table, str(path))
    assert report.fragments == 1


def test_empty_and_missing_files(settings, table, tmp_path) -> None:
    for name, text in (("empty.sql", ""), ("comments.sql", "-- nothing\n/* here */\n"),
                       ("empty.jsonl", "\n\n")):
        path = _write(tmp_path, name, text)
        with pytest.raises(WorkloadParseError, match="empty"):
            import_log(TableStore(settings), WorkloadStore(settings), table, path)
    with pytest.raises(DataFileError, match="no such file"):
        import_log(TableStore(settings), WorkloadStore(settings), table, str(tmp_path / "missing.sql"))
    with pytest.raises(TableNotFoundError):
        import_log(TableStore(settings), WorkloadStore(settings), "nosuch", _write(tmp_path, "x.sql", "select 1;"))


def test_append_replace_clear(settings, table, tmp_path) -> None:
    a = _write(tmp_path, "a.sql", "select l_orderkey from li where l_orderkey < 5;")
    b = _write(tmp_path, "b.sql", "select l_orderkey from li where l_orderkey > 5;\n"
                                  "select l_orderkey from li where l_orderkey = 5;")
    import_log(TableStore(settings), WorkloadStore(settings), table, a)
    import_log(TableStore(settings), WorkloadStore(settings), table, b)
    assert [f.query_id for f in api.workload_fragments(settings, table)] == ["a:1", "b:1", "b:2"]
    v1 = api.workload_version(settings, table)
    import_log(TableStore(settings), WorkloadStore(settings), table, a, replace=True)
    assert [f.query_id for f in api.workload_fragments(settings, table)] == ["a:1"]
    assert api.workload_version(settings, table) != v1
    api.clear_workload(settings, table, actor=sign_in(settings, ROOT))
    assert api.workload_fragments(settings, table) == []
    assert api.workload_version(settings, table) == "none"


def test_store_roundtrip_all_types_and_atomic_file(settings) -> None:
    schema = TableSchema((("i", "int"), ("f", "float"), ("d", "decimal"), ("dt", "date"),
                          ("ts", "timestamp"), ("s", "string")))
    frag = ScanFragment(
        query_id="q", table="t", columns=("i", "s"), ts="2024-01-01T00:00:00", sql="select 1",
        boxes=({"i": Range(1, 2), "f": Range(None, 1.5, True, False), "d": Range(Decimal("0.05"), None),
                "dt": Range(dt.date(1994, 1, 1), dt.date(1995, 1, 1), True, False),
                "ts": Range(dt.datetime(2020, 1, 1, 10, 30), None, False, True),
                "s": Range("AIR", "AIR")},))
    store = WorkloadStore(settings)
    store.append("t", [frag], schema)
    assert store.fragments("t") == [frag]  # decoded with the schema stored in the header
    assert store.fragments("t", schema) == [frag]
    lines = store.path("t").read_text().splitlines()
    assert json.loads(lines[0])["schema"] == schema.to_json() and len(lines) == 2
    assert not [p for p in store.root.iterdir() if p.suffix == ".tmp"]


def test_concurrent_appends_lose_nothing(settings) -> None:
    schema = TableSchema((("i", "int"),))
    store = WorkloadStore(settings)

    def work(k: int) -> None:
        for j in range(10):
            WorkloadStore(settings).append(
                "t", [ScanFragment(f"{k}-{j}", "t", ({"i": Range(j, j)},), ("i",))], schema)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(f.query_id for f in store.fragments("t")) == sorted(
        f"{k}-{j}" for k in range(4) for j in range(10))


def test_show_workload_json_shape(settings, table, tmp_path) -> None:
    path = _write(tmp_path, "s.sql", "-- ts: 2024-01-01T00:00:00\nselect l_quantity from li "
                  "where l_shipdate < date '1994-03-01' and l_quantity >= 2.5;\nselect count(*) from li;")
    api.import_workload(settings, table, path)
    rows = api.show_workload(settings, table)
    assert rows[1] == {"query_id": "s:2", "ts": "2024-01-01T00:00:00", "table": "li",
                       "columns": ["l_quantity", "l_shipdate"],
                       "boxes": [{"l_shipdate": {"min": None, "max": "1994-03-01",
                                                 "min_inclusive": True, "max_inclusive": False},
                                  "l_quantity": {"min": "2.5", "max": None,
                                                 "min_inclusive": True, "max_inclusive": True}}],
                       "sources": [{"column": "l_shipdate", "kind": "direct"},
                                   {"column": "l_quantity", "kind": "direct"}]}
    assert rows[0]["boxes"] == [] and rows[0]["columns"] == [] and rows[0]["sources"] == []
    with pytest.raises(TableNotFoundError):
        api.show_workload(settings, "nosuch")


# --- CLI -------------------------------------------------------------------------------------

def _cli(settings, *argv: str) -> int:
    return main(["--home", str(settings.home), *argv])


def test_cli_import_and_show(settings, table, tmp_path, capsys) -> None:
    path = _write(tmp_path, "log.sql", SQL_LOG.replace("l_comment_free", "l_shipmode"))
    assert _cli(settings, "workload", "import", table, path) == 0
    out = capsys.readouterr().out
    assert "6 statements, 3 fragments, 2 skipped" in out
    assert "skipped line 8: cannot parse SQL" in out and "skipped line 9: unknown column 'nope'" in out

    assert _cli(settings, "workload", "show", table) == 0
    out = capsys.readouterr().out
    assert "3 scan fragments of li" in out
    assert "l_shipdate >= 1994-02-01 AND l_shipmode = x;y OR l_quantity < 5" in out

    assert _cli(settings, "workload", "show", table, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["query_id"] for d in data] == ["log:10", "log:6", "log:3"]

    assert _cli(settings, "workload", "import", table, path, "--replace", "--json") == 0
    assert json.loads(capsys.readouterr().out)["fragments"] == 3
    assert len(api.workload_fragments(settings, table)) == 3


def test_cli_skipped_list_is_capped(settings, table, tmp_path, capsys) -> None:
    path = _write(tmp_path, "bad.sql", "\n".join(f"select nope{i} from li;" for i in range(15)))
    assert _cli(settings, "workload", "import", table, path) == 0
    out = capsys.readouterr().out
    assert out.count("skipped line") == 10 and "... and 5 more" in out


@pytest.mark.parametrize("name,text,match", [
    ("garbage.sql", "select 1 from li;\nthis is not sql at all;", r"garbage.sql:2:22: cannot parse SQL"),
    ("words.sql", "select 1 from li;\n  hello world;", r"words.sql:2:3: cannot parse SQL: not a statement"),
    ("unknown.sql", "select l_nope from li;", r"unknown.sql:1: unknown column 'l_nope'"),
    ("empty.sql", "", r"empty.sql: no SQL statements found"),
    ("bad.jsonl", '{"sql": "select 1 from li"}\n{oops\n', r"bad.jsonl:2:2: invalid JSON"),
], ids=["garbage", "words", "unknown-column", "empty", "bad-jsonl"])
def test_cli_strict_errors_exit_2_one_line(settings, table, tmp_path, capsys, name, text, match) -> None:
    path = _write(tmp_path, name, text)
    assert _cli(settings, "workload", "import", table, path, "--strict") == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in captured.err
    assert err.startswith("layout-advisor: error: ")
    assert re.search(match, err), err


def test_cli_unknown_table_and_dialect(settings, table, tmp_path, capsys) -> None:
    path = _write(tmp_path, "q.sql", "select 1 from li;")
    assert _cli(settings, "workload", "import", "nosuch", path) == 2
    assert "no table named 'nosuch'" in capsys.readouterr().err
    assert _cli(settings, "workload", "import", table, path, "--dialect", "klingon") == 2
    err = capsys.readouterr().err
    assert "unknown SQL dialect 'klingon'" in err and "Traceback" not in err
    assert _cli(settings, "workload", "show", "nosuch") == 2


def test_a_log_imported_twice_is_refused_unless_append_or_replace(settings, table, tmp_path,
                                                                  capsys) -> None:
    a = _write(tmp_path, "a.sql", "select l_orderkey from li where l_orderkey < 5;")
    import_log(TableStore(settings), WorkloadStore(settings), table, a)
    with pytest.raises(InvalidParameterError, match=r"a\.sql: 1 of its queries are already "
                                                    r"imported into li \(e\.g\. a:1\); add "
                                                    r"--append .* or --replace"):
        import_log(TableStore(settings), WorkloadStore(settings), table, a)
    assert [f.query_id for f in api.workload_fragments(settings, table)] == ["a:1"]
    assert _cli(settings, "workload", "import", table, a) == 2
    assert "already imported" in capsys.readouterr().err
    assert _cli(settings, "workload", "import", table, a, "--append") == 0
    assert [f.query_id for f in api.workload_fragments(settings, table)] == ["a:1", "a:1"]
    assert _cli(settings, "workload", "import", table, a, "--replace") == 0
    assert [f.query_id for f in api.workload_fragments(settings, table)] == ["a:1"]
