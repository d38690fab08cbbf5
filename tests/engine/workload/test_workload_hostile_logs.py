"""Hostile query logs: PostgreSQL dollar quoting and placeholders split right and in one pass,
gzip bombs of blanks and over-long statements are skipped with a counted reason, and reading
or importing a log holds memory bounded by the limits, not by the log's size (measured with
tracemalloc: allocations, not time)."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.core import config
from engine.core.errors import WorkloadParseError
from engine.table.store import TableStore
from engine.workload import importer, logread
from engine.workload.importer import import_log, read_log, split_sql
from engine.workload.store import WorkloadStore

MiB = 1024 * 1024


@pytest.fixture
def table(settings, tmp_path: Path) -> str:
    """A registered one-file table `li` (l_orderkey int64, l_shipmode string)."""
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(pa.table({"l_orderkey": pa.array(range(100), pa.int64()),
                             "l_shipmode": pa.array(["AIR", "MAIL"] * 50)}),
                   data / "part-0.parquet")
    api.register_table(settings, "li", str(data))
    return "li"


def _peak(fn) -> tuple[object, int]:
    """fn()'s result and the peak bytes Python allocated while it ran."""
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- PostgreSQL: dollar quotes and placeholders -----------------------------------------------

def _pg_log(n: int) -> tuple[str, list[tuple[int, str, str]]]:
    """A script of n statements cycling through placeholders, ``$$`` and ``$tag$`` bodies
    holding ``;`` and quotes, identifiers with ``$`` and ``-- ts:`` comments; the expected
    (line, statement, ts) of each."""
    shapes = [
        "select l_orderkey from li where l_orderkey between $1 and $2",
        "select $$it's; a body$$ as b, l_orderkey from li where l_orderkey = $1",
        "select $fn$ begin; return $$x;y$$; end $fn$ from li",
        "select a$b, $1::int from li where l_shipmode = 'AIR;' and c$ = $2",
        "select 1 from li where l_shipmode = $q$don't; stop$q$",
    ]
    text, expected, line = [], [], 1
    for i in range(n):
        sql = shapes[i % len(shapes)].replace("$1", f"${i % 9 + 1}")
        ts = f"2024-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}"
        text.append(f"-- ts: {ts}\n{sql};\n")
        expected.append((line + 1, sql, ts))
        line += 2
    return "".join(text), expected


@pytest.mark.parametrize("chunk", [7, 64, logread.CHUNK_BYTES], ids=["7B", "64B", "1MiB"])
def test_dollar_quotes_and_placeholders_split_right(tmp_path, monkeypatch, chunk) -> None:
    text, expected = _pg_log(400)
    path = tmp_path / "pg.sql"
    path.write_text(text)
    monkeypatch.setattr(logread, "CHUNK_BYTES", chunk)  # every construct across a boundary
    entries = list(read_log(str(path)))
    assert [(e.line, e.sql, e.ts) for e in entries] == expected
    assert all(e.error is None and e.column == 1 for e in entries)


def test_sql_log_with_placeholders_is_read_in_bounded_memory(tmp_path, monkeypatch) -> None:
    """3 MiB of ``$1`` statements read 256 KiB at a time: the reader holds about a chunk,
    not the script (nor a copy of its rest at every ``$``)."""
    path = tmp_path / "big.sql"
    line = ("select l_orderkey from li where l_orderkey in ("
            + ", ".join(f"${i}" for i in range(1, 400)) + ") and x = $$a;b$$;\n")
    path.write_text(line * (3 * MiB // len(line)))
    monkeypatch.setattr(logread, "CHUNK_BYTES", 256 * 1024)
    count, peak = _peak(lambda: sum(1 for _ in read_log(str(path))))
    assert count == 3 * MiB // len(line)
    assert peak < 1.5 * MiB, peak


# --- caps: blanks, long lines, long statements -----------------------------------------------

def _capped(settings, **limits):
    return config.replace(settings, **limits)


def test_gzip_of_blanks_is_skipped_with_a_counted_reason(settings, table, tmp_path) -> None:
    """A small .jsonl.gz that inflates to 24 MiB of blanks (blank lines, then one line of
    spaces) around two queries: the blank lines are skipped, the line of spaces is one
    counted skip, and the read never holds the inflated text."""
    q = json.dumps({"sql": "select l_orderkey from li where l_orderkey < 5"})
    body = (q + "\n" + "\n" * (8 * MiB) + " " * (16 * MiB) + "\n" + q + "\n").encode()
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(body, 9))
    assert path.stat().st_size < MiB
    capped = _capped(settings, workload_max_line_bytes=MiB)
    report, peak = _peak(lambda: api.import_workload(capped, table, str(path)))
    assert (report["statements"], report["fragments"], report["skipped_count"]) == (3, 2, 1)
    reason = "line longer than 1048576 bytes (setting workload_max_line_bytes)"
    assert report["skipped"] == [{"line": 8 * MiB + 2, "reason": reason}]
    assert report["skip_reasons"] == {reason: 1}
    assert peak < 8 * MiB, peak


@pytest.mark.parametrize("fmt", ["sql", "jsonl"])
def test_over_long_statement_is_skipped_and_the_next_one_imports(settings, table, tmp_path,
                                                                 capsys, fmt) -> None:
    long = ("select l_orderkey from li where l_shipmode in ("
            + ", ".join(f"'m;{i}'" for i in range(20_000)) + ")")
    short = "select l_orderkey from li where l_orderkey = 7"
    path = tmp_path / f"long.{fmt}"
    if fmt == "sql":
        path.write_text(f"{short};\n{long};\n{short};\n")
    else:
        path.write_text("".join(json.dumps({"sql": s}) + "\n" for s in (short, long, short)))
    capped = _capped(settings, workload_max_statement_chars=50_000)
    report = api.import_workload(capped, table, str(path))
    reason = "statement longer than 50000 characters (setting workload_max_statement_chars)"
    assert (report["statements"], report["fragments"]) == (3, 2)
    assert report["skipped"] == [{"line": 2, "reason": reason}]
    assert report["skip_reasons"] == {reason: 1}
    assert [f.query_id for f in api.workload_fragments(capped, table)] == ["long:1", "long:3"]

    with pytest.raises(WorkloadParseError, match=rf"long\.{fmt}:2: statement longer than 50000"):
        import_log(TableStore(capped), WorkloadStore(capped), table, str(path), strict=True,
                   replace=True, limits=importer.ReadLimits(max_statement_chars=50_000))
    assert len(api.workload_fragments(capped, table)) == 2  # a refused import changes nothing


def test_over_long_statement_is_not_held_while_read(tmp_path) -> None:
    """A 16 Mi-character statement (a quoted literal holding ``;``) is scanned to its end
    without being held, and the statement after it is read."""
    path = tmp_path / "huge.sql"
    path.write_text("select '" + "x;" * (8 * MiB) + "' from li;\nselect 2 from li;\n")
    entries, peak = _peak(lambda: list(read_log(str(path))))
    assert [(e.line, e.sql, e.error) for e in entries] == [
        (1, None, "statement longer than 1048576 characters (setting "
                  "workload_max_statement_chars)"),
        (2, "select 2 from li", None)]
    assert peak < 8 * MiB, peak


def test_cli_counts_skip_reasons(settings, table, tmp_path, capsys) -> None:
    path = tmp_path / "bad.jsonl"
    lines = (["{oops"] * 12 + [json.dumps({"sql": "select nope from li"})] * 3
             + ["[" * 100_000])
    path.write_text("\n".join(lines) + "\n")
    assert main(["--home", str(settings.home), "workload", "import", table, str(path)]) == 0
    out = capsys.readouterr().out
    assert "16 statements, 0 fragments, 16 skipped" in out
    assert "  1 skipped: invalid JSON: nested too deeply" in out
    assert "  12 skipped: invalid JSON: Expecting property name enclosed in double quotes" in out
    assert "  3 skipped: unknown column 'nope'" in out


# --- a large log: counts right, memory flat ---------------------------------------------------

def _generated_jsonl(path: Path, n: int, bad_every: int) -> int:
    """n lines over 40 distinct statements (literals vary in 40 shapes), one bad JSON line
    every ``bad_every``; returns the number of bad lines."""
    bad = 0
    with path.open("w") as fh:
        for i in range(n):
            if i % bad_every == bad_every - 1:
                fh.write('{"sql": \n')
                bad += 1
                continue
            k = i % 40
            sql = (f"select l_orderkey from li where l_orderkey between {k} and {k + 10}"
                   if k % 4 else f"select count(*) from li where l_shipmode = 'M{k}'")
            fh.write(json.dumps({"ts": 1_700_000_000 + i, "id": f"q{i}", "sql": sql,
                                 "duration_ms": 5, "user": "u"}) + "\n")
    return bad


def test_large_generated_log_imports_with_correct_counts(settings, table, tmp_path,
                                                         monkeypatch) -> None:
    path = tmp_path / "big.jsonl"
    n = 6_000
    bad = _generated_jsonl(path, n, bad_every=97)
    monkeypatch.setattr(importer, "MAX_SKIPPED_LISTED", 50)
    report, peak = _peak(lambda: import_log(TableStore(settings), WorkloadStore(settings),
                                            table, str(path)).to_dict())
    good = n - bad
    assert (report["statements"], report["fragments"], report["skipped_count"]) == (n, good, bad)
    assert len(report["skipped"]) == 50 and report["skipped"][0]["line"] == 97
    assert report["skip_reasons"] == {"invalid JSON: Expecting value": bad}
    # the import streams fragments to the workload file: memory does not hold them (all
    # 6,000 fragments held in memory take about 7 MiB)
    assert peak < 4 * MiB, peak
    store = WorkloadStore(settings)
    lines = store.path(table).read_text().splitlines()
    assert len(lines) == good + 1  # the header, then one fragment per good line
    assert all(line == json.dumps(json.loads(line)) for line in lines[1:200])  # plain JSON
    rows = [json.loads(x) for x in lines[1:3]]
    assert [r["query_id"] for r in rows] == ["q0", "q1"]
    assert rows[1]["boxes"] == [{"l_orderkey": {"min": 1, "max": 11, "min_inclusive": True,
                                                "max_inclusive": True}}]
    assert (rows[1]["duration_ms"], rows[1]["user"], rows[1]["ts"]) == (5.0, "u",
                                                                        "2023-11-14T22:13:21")
    frags = api.workload_fragments(settings, table)
    assert len(frags) == good and len({f.query_id for f in frags}) == good


def test_split_sql_keeps_its_contract() -> None:
    """The in-memory splitter of a whole script: positions, metadata, ``$`` in identifiers."""
    entries = list(split_sql("select a$b$ from t;\n  -- id: Q7\n select $x$;$x$"))
    assert [(e.line, e.column, e.sql, e.id) for e in entries] == [
        (1, 1, "select a$b$ from t", None), (3, 2, "select $x$;$x$", "Q7")]


@pytest.mark.parametrize("body", [
    "'" * 300_001, '"' * 300_000, ";" * 300_000, "$" * 300_000, "$a" * 150_000,
    "/" * 300_000, "''" * 150_000 + "; x", "\\" * 150_001 + "'",
], ids=["quotes", "double-quotes", "semicolons", "dollars", "dollar-a", "slashes",
        "doubled-quotes", "backslashes"])
def test_runs_of_one_character_split_like_short_ones(body) -> None:
    """Runs of a quote, ``;``, ``$`` or ``\\`` are scanned a run at a time, and read in
    small pieces they split exactly as the whole text does."""
    text = f"select 1 from t;\nselect {body};\nselect 2 from t"
    splitter = logread.SqlSplitter(backslash_escapes=True, max_statement_chars=10**9)
    pieces = [e for i in range(0, len(text), 4099) for e in splitter.feed(text[i:i + 4099])]
    pieces += list(splitter.close())
    whole = list(split_sql(text, backslash_escapes=True, max_statement_chars=10**9))
    assert [(e.line, e.column, e.sql) for e in pieces] == [(e.line, e.column, e.sql) for e in whole]
    assert whole[0].sql == "select 1 from t"


def test_each_distinct_statement_is_analysed_once_within_the_memo(settings, table, tmp_path,
                                                                   monkeypatch) -> None:
    """Repeated statements are analysed once while the memo holds them; past its size the
    least recently used is analysed again, and the counts are the same either way."""
    calls = []
    analyse = importer.extract_fragments
    monkeypatch.setattr(importer, "extract_fragments",
                        lambda sql, *a, **k: calls.append(sql) or analyse(sql, *a, **k))
    monkeypatch.setattr(importer, "MEMO_ENTRIES", 3)
    path = tmp_path / "memo.jsonl"
    for distinct in (3, 4):
        sqls = [f"select l_orderkey from li where l_orderkey = {i % distinct}" for i in range(40)]
        path.write_text("".join(json.dumps({"sql": s}) + "\n" for s in sqls))
        calls.clear()
        report = import_log(TableStore(settings), WorkloadStore(settings), table, str(path),
                            replace=True)
        assert (report.statements, report.fragments) == (40, 40)
        assert len(calls) == (3 if distinct == 3 else 40)  # cycling 4 through 3 slots: all miss
