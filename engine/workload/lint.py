"""Workload lint: queries whose predicates cannot prune, why, and the rewrite that would.

Zonemap pruning needs a predicate that compares a column itself with constants. The scan
fragment extractor (:mod:`engine.workload.sql.extract`) conservatively gives no range for
anything else, so those queries read every partition whatever the layout: no reclustering
can help them, but a small rewrite of the query can. The checks, per statement:

* ``function-on-column``: a function or arithmetic wraps the column (``YEAR(d) = 1995``,
  ``q + 1 > 5``, ``CAST(x AS VARCHAR) = '1'``, ``SUBSTRING(s, 1, 2) = 'AI'``); the rewrite
  states the same condition on the bare column where a standard one exists;
* ``like-pattern``: ``LIKE`` gives no range here; a prefix pattern is a range on the column;
* ``or-across-tables``: an ``OR`` between a column of this table and one of another table
  cannot be pushed into either scan; a ``UNION`` of two queries can;
* ``no-prunable-predicate``: the query filters, but nothing on a column of this table with
  statistics is left to prune with.

Example:
>>> from engine.table.model import TableSchema
>>> schema = TableSchema((("l_shipdate", "date"), ("l_quantity", "int")))
>>> [f.rewrite for f in lint_sql("SELECT * FROM lineitem WHERE YEAR(l_shipdate) = 1995",
...                             "lineitem", schema, "q1")]
["l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1996-01-01'"]
>>> [f.rewrite for f in lint_sql("SELECT * FROM lineitem WHERE l_quantity + 1 > 5",
...                             "lineitem", schema, "q2")]
['l_quantity > 4']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterator

from sqlglot import exp

from engine.table.model import TableSchema
from engine.workload.sql.nodes import conjuncts, lower
from engine.workload.sql.parse import parse_statements

_COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_FLIP = {exp.GT: "<", exp.GTE: "<=", exp.LT: ">", exp.LTE: ">=", exp.EQ: "="}
_OP = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.EQ: "="}


@dataclass(frozen=True)
class LintFinding:
    """One predicate that cannot prune, with the reason and a rewrite that would."""

    query_id: str
    kind: str
    column: str | None
    predicate: str
    reason: str
    rewrite: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def lint_sql(sql: str, table: str, schema: TableSchema, query_id: str,
             has_ranges: bool | None = None, dialect: str | None = None) -> list[LintFinding]:
    """The findings for one query's SQL over ``table``. ``has_ranges`` says whether the
    extracted scan fragment kept a range on some column (None: not known); a filtering
    query with none gets a ``no-prunable-predicate`` finding."""
    columns = {lower(n) for n in schema.names}
    findings: list[LintFinding] = []
    filters = False
    for stmt in parse_statements(sql, dialect):
        for condition in _conditions(stmt):
            filters = True
            for pred in conjuncts(condition):
                findings.extend(_check(pred, columns, schema, query_id))
    if filters and has_ranges is False and not findings:
        findings.append(LintFinding(
            query_id, "no-prunable-predicate", None, "",
            f"the query filters, but on no column of {table} that has statistics",
            "add a range on a column of this table (e.g. the date the rows are looked up by)"))
    return findings


def _conditions(stmt: exp.Expression) -> Iterator[exp.Expression]:
    for where in stmt.find_all(exp.Where):
        yield where.this
    for join in stmt.find_all(exp.Join):
        if join.args.get("on") is not None:
            yield join.args["on"]


def _check(pred: exp.Expression, columns: set[str], schema: TableSchema,
           query_id: str) -> list[LintFinding]:
    if isinstance(pred, exp.Or):
        return _or_across(pred, columns, query_id)
    if isinstance(pred, exp.Like):
        return _like(pred, columns, query_id)
    if not isinstance(pred, _COMPARISONS):
        return []
    left, right = pred.left, pred.right
    if _is_constant(right) and not isinstance(left, exp.Column):
        wrapped, constant, op = left, right, _OP[type(pred)]
    elif _is_constant(left) and not isinstance(right, exp.Column):
        wrapped, constant, op = right, left, _FLIP[type(pred)]
    else:
        return []
    column = _single_column(wrapped, columns)
    if column is None:
        return []
    column = schema.resolve(column)
    if _is_harmless_cast(wrapped, column, schema):
        return []
    return [LintFinding(query_id, "function-on-column", column, pred.sql(),
                        f"{wrapped.sql()} hides {column} from its zonemap: no partition can be "
                        "skipped", _rewrite(wrapped, column, op, constant))]


def _rewrite(wrapped: exp.Expression, column: str, op: str, constant: exp.Expression) -> str | None:
    """The same condition on the bare column, for the common shapes."""
    value = constant.to_py() if isinstance(constant, exp.Literal) else None
    if isinstance(wrapped, (exp.Year, exp.Extract)) and _year_part(wrapped) and isinstance(value, int):
        lo, hi = f"DATE '{value:04d}-01-01'", f"DATE '{value + 1:04d}-01-01'"
        return {"=": f"{column} >= {lo} AND {column} < {hi}", ">=": f"{column} >= {lo}",
                ">": f"{column} >= {hi}", "<": f"{column} < {lo}", "<=": f"{column} < {hi}"}[op]
    if isinstance(wrapped, (exp.Add, exp.Sub)) and isinstance(value, (int, float)):
        other = wrapped.right if isinstance(wrapped.left, exp.Column) else wrapped.left
        if isinstance(other, exp.Literal) and isinstance(other.to_py(), (int, float)):
            k = other.to_py()
            bound = value - k if isinstance(wrapped, exp.Add) else value + k
            return f"{column} {op} {bound:g}"
    if isinstance(wrapped, exp.Cast):
        return f"compare {column} with a constant of its own type ({column} {op} ...)"
    return f"state the condition on {column} itself as a range ({column} {op} ...)"


def _year_part(node: exp.Expression) -> bool:
    if isinstance(node, exp.Year):
        return True
    unit = node.this
    return unit is not None and unit.name.lower() == "year"


def _like(pred: exp.Like, columns: set[str], query_id: str) -> list[LintFinding]:
    column = _single_column(pred.this, columns) if isinstance(pred.this, exp.Column) else None
    pattern = pred.expression.to_py() if isinstance(pred.expression, exp.Literal) else None
    if column is None or not isinstance(pattern, str):
        return []
    prefix = pattern.split("%", 1)[0].split("_", 1)[0]
    if prefix and prefix != pattern:
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return [LintFinding(query_id, "like-pattern", column, pred.sql(),
                            "LIKE gives no range to prune with",
                            f"{column} >= '{prefix}' AND {column} < '{upper}' AND {pred.sql()}")]
    return [LintFinding(query_id, "like-pattern", column, pred.sql(),
                        "a pattern that starts with a wildcard matches anywhere: no partition can "
                        "be skipped", None)]


def _or_across(pred: exp.Or, columns: set[str], query_id: str) -> list[LintFinding]:
    names = {lower(c.name) for c in pred.find_all(exp.Column)}
    ours, others = names & columns, names - columns
    if not ours or not others:
        return []
    return [LintFinding(query_id, "or-across-tables", sorted(ours)[0], pred.sql(),
                        f"an OR between {', '.join(sorted(ours))} and another table's "
                        f"{', '.join(sorted(others))} cannot be pushed into either scan",
                        "split it into a UNION of two queries, each filtering one table")]


def _single_column(node: exp.Expression, columns: set[str]) -> str | None:
    """The one column of this table ``node`` references, else None."""
    found = {lower(c.name) for c in node.find_all(exp.Column)}
    mine = found & columns
    return next(iter(mine)) if len(found) == 1 and mine else None


def _is_constant(node: exp.Expression) -> bool:
    return node.find(exp.Column) is None and not isinstance(node, exp.Subquery) \
        and node.find(exp.Select) is None


def _is_harmless_cast(node: exp.Expression, column: str, schema: TableSchema) -> bool:
    """Casts the extractor reads through (widening numbers, timestamps to dates): those
    prune already, so they are not findings."""
    if not isinstance(node, exp.Cast) or not isinstance(node.this, exp.Column):
        return False
    target = node.to.this
    ltype = schema.type_of(column)
    numeric = {exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.DECIMAL,
               *exp.DataType.INTEGER_TYPES}
    temporal = {exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME}
    return (ltype in ("int", "float", "decimal") and target in numeric) or \
        (ltype in ("date", "timestamp") and target in temporal)
