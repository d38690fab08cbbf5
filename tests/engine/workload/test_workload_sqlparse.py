"""SQL -> scan fragments: golden fixtures, bound tables per operator and type, NOT, folding."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from engine.core.errors import WorkloadParseError
from engine.table.model import TableSchema
from engine.workload import boxes as bx
from engine.workload.model import Range
from engine.workload.sql.extract import extract_fragments

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "workloads"

LINEITEM = TableSchema((
    ("l_orderkey", "int"), ("l_partkey", "int"), ("l_suppkey", "int"), ("l_linenumber", "int"),
    ("l_quantity", "decimal"), ("l_extendedprice", "decimal"), ("l_discount", "decimal"),
    ("l_tax", "decimal"), ("l_returnflag", "string"), ("l_linestatus", "string"),
    ("l_shipdate", "date"), ("l_commitdate", "date"), ("l_receiptdate", "date"),
    ("l_shipinstruct", "string"), ("l_shipmode", "string"), ("l_comment", "string")))
ORDERS = TableSchema((
    ("o_orderkey", "int"), ("o_custkey", "int"), ("o_orderstatus", "string"),
    ("o_totalprice", "decimal"), ("o_orderdate", "date"), ("o_orderpriority", "string"),
    ("o_clerk", "string"), ("o_shippriority", "int"), ("o_comment", "string")))
TYPES = TableSchema((("i", "int"), ("f", "float"), ("d", "decimal"), ("dt", "date"),
                     ("ts", "timestamp"), ("s", "string"), ("b", "bool")))
SCHEMAS = {"lineitem": LINEITEM, "orders": ORDERS, "t": TYPES}


def _load_fixture(path: Path) -> tuple[str, str, list[dict]]:
    table, sql_lines, expect_lines, in_expect = None, [], [], False
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("-- table:"):
            table = stripped.split(":", 1)[1].strip()
        elif stripped == "-- expect:":
            in_expect = True
        elif in_expect:
            expect_lines.append(stripped[2:] if stripped.startswith("--") else stripped)
        else:
            sql_lines.append(line)
    assert table and expect_lines, f"{path.name}: needs '-- table:' and '-- expect:'"
    return table, "\n".join(sql_lines), json.loads("\n".join(expect_lines))


def _canonical(fragment, schema: TableSchema) -> dict:
    types = dict(schema.columns)
    boxes = sorted(json.dumps({c: bx.format_range(r, types[c]) for c, r in sorted(box.items())})
                   for box in fragment.boxes)
    return {"columns": list(fragment.columns), "boxes": boxes}


def _expected(entry: dict) -> dict:
    boxes = sorted(json.dumps(dict(sorted(b.items()))) for b in entry["boxes"])
    return {"columns": entry["columns"], "boxes": boxes}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.sql")), ids=lambda p: p.stem)
def test_golden_fixture(path: Path) -> None:
    table, sql, expected = _load_fixture(path)
    schema = SCHEMAS[table]
    frags = extract_fragments(sql, table, schema, "q1")
    assert [_canonical(f, schema) for f in frags] == [_expected(e) for e in expected]
    assert all(f.query_id == "q1" and f.table == table for f in frags)


def test_fixture_set_covers_required_queries() -> None:
    names = {p.stem for p in FIXTURES.glob("*.sql")}
    for required in ("tpch_q01", "tpch_q03", "tpch_q04", "tpch_q06", "tpch_q12", "tpch_q14",
                     "tpch_q19", "cte_filter_pushdown", "self_join_aliases"):
        assert required in names


def _one_box(where: str, schema: TableSchema = TYPES, table: str = "t") -> tuple:
    [frag] = extract_fragments(f"select * from {table} where {where}", table, schema, "q")
    return frag.boxes


R = Range
D = Decimal


@pytest.mark.parametrize("where,col,expected", [
    # int
    ("i = 5", "i", R(5, 5)),
    ("i < 5", "i", R(None, 5, True, False)),
    ("i <= 5", "i", R(None, 5)),
    ("i > 5", "i", R(5, None, False, True)),
    ("i >= 5", "i", R(5, None)),
    ("i between 2 and 7", "i", R(2, 7)),
    ("5 < i", "i", R(5, None, False, True)),
    ("5 >= i", "i", R(None, 5)),
    ("i < 24.5", "i", R(None, 24)),  # an int below 24.5 is at most 24
    ("i >= 24.5", "i", R(25, None)),
    ("i > '7'", "i", R(7, None, False, True)),
    ("i <=> 3", "i", R(3, 3)),
    ("cast(i as bigint) < 9", "i", R(None, 9, True, False)),
    # float
    ("f = 1.5", "f", R(1.5, 1.5)),
    ("f < 2", "f", R(None, 2.0, True, False)),
    ("f between -1.25 and 1e2", "f", R(-1.25, 100.0)),
    # decimal
    ("d = 0.06 - 0.01", "d", R(D("0.05"), D("0.05"))),
    ("d > 1/4", "d", R(D("0.25"), None, False, True)),
    ("d <= 3 * 0.1", "d", R(None, D("0.3"))),
    # date
    ("dt = date '1994-01-01'", "dt", R(dt.date(1994, 1, 1), dt.date(1994, 1, 1))),
    ("dt < '1994-03-01'", "dt", R(None, dt.date(1994, 3, 1), True, False)),
    ("dt >= cast('1994-01-01' as date)", "dt", R(dt.date(1994, 1, 1), None)),
    ("dt > timestamp '1994-01-01 10:00:00'", "dt", R(dt.date(1994, 1, 2), None)),
    ("dt <= timestamp '1994-01-01 10:00:00'", "dt", R(None, dt.date(1994, 1, 1))),
    ("dt < date '1994-01-01' + interval '1' year", "dt", R(None, dt.date(1995, 1, 1), True, False)),
    ("dt >= date '1998-12-01' - interval '90' day", "dt", R(dt.date(1998, 9, 2), None)),
    ("dt < date '1994-01-31' + interval '1' month", "dt", R(None, dt.date(1994, 2, 28), True, False)),
    ("dt < interval '3' month + date '1993-07-01'", "dt", R(None, dt.date(1993, 10, 1), True, False)),
    ("dt > date '1994-01-01' + (- interval '1' day)", "dt", R(dt.date(1993, 12, 31), None, False, True)),
    ("dt >= add_months(date '1994-01-31', 1)", "dt", R(dt.date(1994, 2, 28), None)),
    # timestamp
    ("ts >= timestamp '2020-01-01 10:30:00'", "ts", R(dt.datetime(2020, 1, 1, 10, 30), None)),
    ("ts < date '2020-01-02'", "ts", R(None, dt.datetime(2020, 1, 2), True, False)),
    ("ts < timestamp '2020-01-01 10:00:00' + interval '2' hour", "ts",
     R(None, dt.datetime(2020, 1, 1, 12), True, False)),
    ("cast(ts as date) = date '2020-01-05'", "ts",
     R(dt.datetime(2020, 1, 5), dt.datetime(2020, 1, 6), True, False)),
    ("cast(ts as date) > date '2020-01-05'", "ts", R(dt.datetime(2020, 1, 6), None)),
    # string
    ("s = 'MAIL'", "s", R("MAIL", "MAIL")),
    ("s >= 'b' and s < 'c'", "s", R("b", "c", True, False)),
    ("'x' > s", "s", R(None, "x", True, False)),
    # bool
    ("b = true", "b", R(True, True)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bound_table(where: str, col: str, expected: Range) -> None:
    boxes = _one_box(where)
    assert boxes == ({col: expected},)
    assert type(boxes[0][col].min if expected.min is not None else boxes[0][col].max) is \
        type(expected.min if expected.min is not None else expected.max)


@pytest.mark.parametrize("where", [
    "i <> 5", "i != 5", "i not in (1, 2)", "s like 'ab%'", "i = f", "abs(i) < 3", "i + 1 < 3",
    "i is null", "i is not null", "i < (select 3)", "i in (select 1)", "dt < current_date",
    "s = 5", "dt > 7", "not (s like 'x')", "coalesce(i, 0) = 1", "i = null",
    "exists (select 1 from u where u.x = t.i)",
], ids=lambda v: v)
def test_no_range(where: str) -> None:
    assert _one_box(where) == ()


@pytest.mark.parametrize("where,expected", [
    ("not (i < 5)", ({"i": R(5, None)},)),
    ("not (i >= 5)", ({"i": R(None, 5, True, False)},)),
    ("not (i <> 5)", ({"i": R(5, 5)},)),
    ("not not (i = 5)", ({"i": R(5, 5)},)),
    ("not (i between 1 and 3)", ({"i": R(None, 1, True, False)}, {"i": R(3, None, False, True)})),
    ("not (i < 1 or i > 3)", ({"i": R(1, 3)},)),
    ("not (i < 1 and s = 'a')", ()),  # i >= 1 OR s <> 'a': the second disjunct is unbounded
    ("not (i < 1 and f < 0)", ({"i": R(1, None)}, {"f": R(0.0, None)})),
    ("not (i = 1)", ()),
    ("not (i in (1, 2))", ()),
], ids=lambda v: v if isinstance(v, str) else "")
def test_not_pushdown(where: str, expected: tuple) -> None:
    assert _one_box(where) == expected


def test_in_list_and_tuple_in() -> None:
    assert _one_box("i in (3, 1, 3)") == ({"i": R(3, 3)}, {"i": R(1, 1)})
    assert _one_box("(i, s) in ((1, 'a'), (2, 'b'))") == (
        {"i": R(1, 1), "s": R("a", "a")}, {"i": R(2, 2), "s": R("b", "b")})


def test_dnf_of_or_of_ands_and_widening_or() -> None:
    boxes = _one_box("(i < 3 or i > 8) and (s = 'a' or s = 'b')")
    assert len(boxes) == 4
    assert {"i": R(None, 3, True, False), "s": R("a", "a")} in boxes
    # an OR with an arm on another column cannot be bounded on i alone: two boxes stay
    assert _one_box("i < 3 or f > 1") == ({"i": R(None, 3, True, False)},
                                          {"f": R(1.0, None, False, True)})
    # an OR with an unconstrained arm is unconstrained
    assert _one_box("i < 3 or s like 'a%'") == ()


def test_dnf_cap_falls_back_to_hull() -> None:
    values = ", ".join(str(v) for v in range(100))
    boxes = _one_box(f"i in ({values}) and dt >= date '2000-01-01'")
    assert boxes == ({"i": R(0, 99), "dt": R(dt.date(2000, 1, 1), None)},)
    # a product over the cap collapses too: 10 x 10 boxes > 64
    a = " or ".join(f"i = {v}" for v in range(10))
    b = " or ".join(f"f = {v}" for v in range(10))
    boxes = _one_box(f"({a}) and ({b})")
    assert boxes == ({"i": R(0, 9), "f": R(0.0, 9.0)},)


def test_contradiction_is_a_single_empty_box() -> None:
    boxes = _one_box("i > 5 and i < 2")
    assert len(boxes) == 1 and list(boxes[0]) == ["i"] and bx.is_empty(boxes[0]["i"])
    boxes = _one_box("1 = 0")
    assert len(boxes) == 1 and all(bx.is_empty(r) for r in boxes[0].values())
    assert _one_box("1 = 1") == ()
    assert _one_box("i = 24.5") == ({"i": bx.empty_range("int")},)


def test_qualified_and_case_insensitive_columns() -> None:
    f1, f2 = extract_fragments("SELECT T.I FROM db.T AS x, t WHERE X.S = 'z' and t.F > 1",
                               "t", TYPES, "q")
    assert f1.boxes == ({"s": R("z", "z")},) and f1.columns == ("s",)
    assert f2.boxes == ({"f": R(1.0, None, False, True)},) and f2.columns == ("i", "f")


def test_projected_columns() -> None:
    def cols(sql: str) -> list[tuple[str, ...]]:
        return [f.columns for f in extract_fragments(sql, "t", TYPES, "q")]

    assert cols("select count(*) from t") == [()]
    assert cols("select * from t") == [TYPES.names and tuple(TYPES.names)]
    assert cols("select x.* from t x join u on x.i = u.i") == [tuple(TYPES.names)]
    assert cols("select u.* from t x join u on x.i = u.i") == [("i",)]
    assert cols("select upper(s), i + 1 as j from t where f > 0 group by 1, 2 order by j") == \
        [("i", "f", "s")]
    assert cols("select k from (select i as k, s as unused from t) q") == [("i",)]
    assert cols("select 1 from u where exists (select * from t where t.i = u.i)") == [("i",)]


def test_unknown_columns_raise_naming_the_column() -> None:
    with pytest.raises(WorkloadParseError, match="nope"):
        extract_fragments("select nope from t where i = 1", "t", TYPES, "q")
    with pytest.raises(WorkloadParseError, match="x.nope"):
        extract_fragments("select 1 from t x join u on x.nope = u.a", "t", TYPES, "q")
    # an unqualified unknown name next to a table of unknown schema may be that table's
    assert len(extract_fragments("select nope from t join u on t.i = u.i", "t", TYPES, "q")) == 1
    # a select-list alias is not a column
    assert len(extract_fragments("select i * 2 as twice from t order by twice", "t", TYPES, "q")) == 1


def test_garbage_sql_raises_with_position() -> None:
    with pytest.raises(WorkloadParseError) as err:
        extract_fragments("select from where (", "t", TYPES, "q")
    assert "cannot parse" in str(err.value)
    with pytest.raises(WorkloadParseError):
        extract_fragments("select * from t where s = 'unterminated", "t", TYPES, "q")


def test_metadata_passes_through() -> None:
    [f] = extract_fragments("select i from t where i = 1", "t", TYPES, "q7",
                            ts="2024-01-01T00:00:00")
    assert (f.query_id, f.table, f.ts, f.sql) == ("q7", "t", "2024-01-01T00:00:00",
                                                  "select i from t where i = 1")


def test_dialects() -> None:
    [f] = extract_fragments("select `i` from t where dt >= date_add('2020-01-01', 3)", "t", TYPES,
                            "q", dialect="spark")
    assert f.boxes == ({"dt": R(dt.date(2020, 1, 4), None)},)
    [f] = extract_fragments("select i from t where dt < dateadd(day, -1, '2020-01-01'::date)",
                            "t", TYPES, "q", dialect="snowflake")
    assert f.boxes == ({"dt": R(None, dt.date(2019, 12, 31), True, False)},)


def test_update_and_insert_select() -> None:
    [f] = extract_fragments("update t set s = 'x' where i between 1 and 2", "t", TYPES, "q")
    assert f.boxes == ({"i": R(1, 2)},)
    [f] = extract_fragments("insert into u select i from t where f < 0", "t", TYPES, "q")
    assert f.boxes == ({"f": R(None, 0.0, True, False)},) and f.columns == ("i", "f")
    assert extract_fragments("insert into t values (1, 2)", "t", TYPES, "q") == []
    assert extract_fragments("create view v as select * from t where i = 1", "t", TYPES, "q") == []
    [f] = extract_fragments("create table u as select i from t where i = 1", "t", TYPES, "q")
    assert f.boxes == ({"i": R(1, 1)},)


@pytest.mark.parametrize("sql,expected", [
    # ON filters only the null-supplying side of an outer join; WHERE filters every side
    ("select * from u right join t on u.a = t.i and t.f > 1", [()]),
    ("select * from t right join u on u.a = t.i and t.f > 1", [({"f": R(1.0, None, False, True)},)]),
    ("select * from t full join u on t.i = u.a and t.f > 1 where t.i = 2", [({"i": R(2, 2)},)]),
    ("select * from u left anti join t on u.a = t.i and t.f > 1", [({"f": R(1.0, None, False, True)},)]),
    ("select * from u left join (select * from t) x on u.a = x.i and x.f > 1",
     [({"f": R(1.0, None, False, True)},)]),
    ("select * from t join u on t.i = u.a and t.f > 1", [({"f": R(1.0, None, False, True)},)]),
    # INTERSECT / EXCEPT branches keep their own filters
    ("select i from t where f > 1 intersect select i from t where f < 5",
     [({"f": R(1.0, None, False, True)},), ({"f": R(None, 5.0, True, False)},)]),
    # a window function above blocks pushdown into the derived table
    ("select * from (select i, row_number() over (order by f) as r from t) q where i = 1", [()]),
    # a pushed filter is renamed through column aliases of the derived table
    ("select * from (select i as j from t) as q(k) where k > 3", [({"i": R(3, None, False, True)},)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_join_kinds_and_pushdown(sql: str, expected: list) -> None:
    assert [f.boxes for f in extract_fragments(sql, "t", TYPES, "q")] == expected
