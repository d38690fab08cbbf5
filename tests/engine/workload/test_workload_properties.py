"""Property: a fragment never narrows its query. Every row DuckDB returns for a random WHERE
clause lies inside one of the extracted boxes (and a fragment with no boxes keeps all rows)."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from engine.table.model import TableSchema
from engine.workload.sql.extract import extract_fragments

SCHEMA = TableSchema((("i", "int"), ("f", "float"), ("d", "date"), ("ts", "timestamp"),
                      ("s", "string")))
BASE = dt.date(2020, 1, 1)


def _rows(n: int = 300) -> list[tuple]:
    rnd = random.Random(7)
    out = []
    for _ in range(n):
        def maybe(v):
            return None if rnd.random() < 0.08 else v
        out.append((maybe(rnd.randint(-3, 12)), maybe(rnd.randint(-20, 60) / 4),
                    maybe(BASE + dt.timedelta(days=rnd.randint(0, 40))),
                    maybe(dt.datetime(2020, 1, 1) + dt.timedelta(minutes=rnd.randint(0, 60 * 24 * 10))),
                    maybe(rnd.choice(["", "a", "ab", "b", "ba", "c", "MAIL", "AIR"]))))
    return out


ROWS = _rows()


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute("create table t (i integer, f double, d date, ts timestamp, s varchar)")
    c.executemany("insert into t values (?, ?, ?, ?, ?)", ROWS)
    yield c
    c.close()


OPS = ["=", "<", "<=", ">", ">=", "<>"]
int_lit = st.one_of(st.integers(-4, 13).map(str), st.sampled_from(["2.5", "-0.5", "1 + 2", "10 - 3.5", "'4'"]))
float_lit = st.one_of(st.integers(-24, 64).map(lambda v: str(v / 4)), st.sampled_from(["0.06 - 0.01", "3"]))
date_lit = st.one_of(
    st.integers(-2, 42).map(lambda k: f"date '{(BASE + dt.timedelta(days=k)).isoformat()}'"),
    st.integers(0, 40).map(lambda k: f"date '2020-01-01' + interval '{k}' day"),
    st.sampled_from(["date '2020-02-01' - interval '1' month", "cast('2020-01-15' as date)",
                     "timestamp '2020-01-10 12:00:00'"]))
ts_lit = st.one_of(
    st.integers(0, 240).map(lambda h: f"timestamp '{(dt.datetime(2020, 1, 1) + dt.timedelta(hours=h)).isoformat(sep=' ')}'"),
    st.integers(0, 10).map(lambda k: f"date '2020-01-{k + 1:02d}'"))
str_lit = st.sampled_from(["''", "'a'", "'ab'", "'b'", "'aa'", "'c'", "'MAIL'", "'AIR'", "'z'"])
COLS = {"i": int_lit, "f": float_lit, "d": date_lit, "ts": ts_lit, "s": str_lit}


@st.composite
def atom(draw):
    col = draw(st.sampled_from(sorted(COLS)))
    lit = COLS[col]
    expr = col if col != "ts" or draw(st.booleans()) else "cast(ts as date)"
    if expr == "cast(ts as date)":
        lit = date_lit
    kind = draw(st.sampled_from(["cmp", "cmp", "cmp", "rev", "between", "in", "notin", "null", "colcol"]))
    if kind == "cmp":
        return f"{expr} {draw(st.sampled_from(OPS))} {draw(lit)}"
    if kind == "rev":
        return f"{draw(lit)} {draw(st.sampled_from(OPS))} {expr}"
    if kind == "between":
        return f"{expr} between {draw(lit)} and {draw(lit)}"
    if kind in ("in", "notin"):
        items = ", ".join(draw(st.lists(lit, min_size=1, max_size=4)))
        return f"{expr} {'not ' if kind == 'notin' else ''}in ({items})"
    if kind == "null":
        return f"{col} is {draw(st.sampled_from(['', 'not ']))}null"
    return "i < f"


predicate = st.recursive(
    atom(),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: f"({p[0]} and {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} or {p[1]})"),
        inner.map(lambda p: f"not ({p})")),
    max_leaves=8)


def _inside(row: tuple, box: dict) -> bool:
    values = dict(zip(SCHEMA.names, row))
    for col, r in box.items():
        v = values[col]
        if v is None:
            return False
        if r.min is not None and (v < r.min or (v == r.min and not r.min_inclusive)):
            return False
        if r.max is not None and (v > r.max or (v == r.max and not r.max_inclusive)):
            return False
    return True


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=predicate)
def test_fragment_never_narrows_the_query(con, where: str) -> None:
    sql = f"select * from t where {where}"
    [frag] = extract_fragments(sql, "t", SCHEMA, "q")
    matched = con.execute(sql).fetchall()
    if not frag.boxes:
        return
    for row in matched:
        assert any(_inside(row, box) for box in frag.boxes), (sql, row, frag.boxes)


def test_simple_conjunctions_are_exact(con) -> None:
    """Without unsupported atoms, the boxes select exactly DuckDB's rows (precision check)."""
    for where in ["i >= 2 and i < 7 and s in ('a', 'ab')", "d between date '2020-01-05' and "
                  "date '2020-01-05' + interval '10' day or f > 10", "not (i < 3 or i > 9)",
                  "cast(ts as date) = date '2020-01-04'", "i < 2.5 and f >= 0.06 - 0.01"]:
        sql = f"select * from t where {where}"
        [frag] = extract_fragments(sql, "t", SCHEMA, "q")
        expected = sorted(map(repr, con.execute(sql).fetchall()))
        got = sorted(repr(r) for r in ROWS if any(_inside(r, b) for b in frag.boxes))
        assert got == expected, where
