"""Small helpers over sqlglot's AST shared by the extraction steps.

Names are compared lower-case (SQL identifiers are case-insensitive unless quoted, and the
workload's query logs do not rely on quoting to tell columns apart). A *scope-local* walk
visits the nodes of one SELECT and hands every nested query to a callback instead of
descending into it, so each query is analysed once, in its own scope.

Example:
>>> import sqlglot
>>> [c.sql() for c in conjuncts(sqlglot.parse_one("select 1 where (a > 1 and b < 2) and c").args["where"].this)]
['a > 1', 'b < 2', 'c']
>>> output_names(sqlglot.parse_one("select a, b + 1 as B2 from t"))
['a', 'b2']
>>> output_names(sqlglot.parse_one("select * from t")) is None
True
"""

from __future__ import annotations

from typing import Callable, Iterator

from sqlglot import exp

QUERY_TYPES = (exp.Select, exp.SetOperation)
#: receives each nested query a scope-local walk meets (to analyse it in its own scope)
OnQuery = Callable[[exp.Expression], None]


def lower(name: str | None) -> str:
    """``name`` lower-cased; ``None`` -> ``""``."""
    return (name or "").lower()


def unwrap(node: exp.Expression) -> exp.Expression:
    """``node`` without the unaliased parentheses and subquery wrappers around it."""
    while isinstance(node, (exp.Subquery, exp.Paren)) and isinstance(node.this, exp.Expression) \
            and not node.args.get("alias"):
        node = node.this
    return node


def is_star(projection: exp.Expression) -> bool:
    """True for ``*`` and ``alias.*``."""
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star))


def has_query(node: exp.Expression) -> bool:
    """True when ``node`` contains a query (a subquery predicate, a scalar subquery)."""
    return any(True for _ in node.find_all(*QUERY_TYPES))


def output_names(query: exp.Expression) -> list[str] | None:
    """Lower-case output column names of a query; None when a star hides them."""
    query = unwrap(query)
    while isinstance(query, exp.SetOperation):
        query = unwrap(query.this)
    if not isinstance(query, exp.Select):
        return None
    names = []
    for proj in query.expressions:
        if is_star(proj):
            return None
        names.append(lower(proj.alias_or_name))
    return names


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """Top-level AND operands (parentheses looked through), iteratively."""
    out, stack = [], [node] if node is not None else []
    while stack:
        cur = stack.pop()
        if isinstance(cur, exp.Paren):
            stack.append(cur.this)
        elif isinstance(cur, exp.And):
            stack.extend([cur.expression, cur.this])
        else:
            out.append(cur)
    return out


def chain(node: exp.Expression, kind: type) -> list[exp.Expression]:
    """Operands of a chain of one connective ``kind`` (``a OR (b OR c)`` -> a, b, c)."""
    out, stack = [], [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, exp.Paren) and isinstance(cur.this, kind):
            stack.append(cur.this)
        elif isinstance(cur, kind):
            stack.extend([cur.expression, cur.this])
        else:
            out.append(cur)
    return out


def walk_local(node: exp.Expression, on_query: OnQuery) -> Iterator[exp.Expression]:
    """Yield the nodes of ``node`` that belong to its scope; hand nested queries to ``on_query``."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur is not node and isinstance(cur, QUERY_TYPES):
            on_query(cur)
            continue
        if isinstance(cur, exp.Lambda):
            continue
        yield cur
        for child in reversed(list(cur.iter_expressions())):
            stack.append(child)


def nested_queries(node: exp.Expression) -> list[exp.Expression]:
    """The outermost queries inside ``node`` (not ``node`` itself), in document order."""
    found: list[exp.Expression] = []
    for _ in walk_local(node, found.append):
        pass
    return found
