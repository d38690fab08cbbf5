"""Predicate pushdown: outer conjuncts moved into derived tables and set-operation branches.

A conjunct of an outer scope that reads only one derived table's columns filters that
table's rows as well: it is renamed to the inner query's output names
(:func:`into_derived`) and then rewritten over the inner SELECT's sources by substituting
the projections (:func:`through_projection`), as an optimizer pushes a filter into a
subquery. It is not pushed through LIMIT/OFFSET/FETCH, QUALIFY, DISTINCT ON, window
functions, aggregates or subqueries, where filtering first would change the result. A
conjunct that cannot be pushed simply stays out, which widens the fragment, never narrows
it.

Example:
>>> import sqlglot
>>> inner = sqlglot.parse_one("select l_quantity as q, l_tax from lineitem")
>>> [c.sql() for c in through_projection(inner, [sqlglot.parse_one("q > 3")])]
['l_quantity > 3']
>>> through_projection(sqlglot.parse_one("select sum(x) as q from t"), [sqlglot.parse_one("q > 3")])
[]
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from engine.workload.sql.nodes import has_query, is_star, lower, output_names
from engine.workload.sql.scopes import Source

_BLOCKERS = ("limit", "offset", "fetch", "qualify")


def through_projection(select: exp.Select, pushed: list[exp.Expression]) -> list[exp.Expression]:
    """Rewrite conjuncts over this select's outputs into conjuncts over its sources."""
    if not pushed or _blocks_pushdown(select):
        return []
    projections: dict[str, exp.Expression] = {}
    star = False
    for p in select.expressions:
        if is_star(p):
            star = True
        else:
            projections.setdefault(lower(p.alias_or_name), p.unalias())
    out = []
    for conj in pushed:
        new = _substitute(conj, projections, star)
        if new is not None:
            out.append(new)
    return out


def _blocks_pushdown(select: exp.Select) -> bool:
    """True when filtering the select's input would change its output rows."""
    distinct = select.args.get("distinct")
    if any(select.args.get(k) for k in _BLOCKERS) or \
            isinstance(distinct, exp.Distinct) and distinct.args.get("on"):
        return True
    return any(p.find(exp.Window) for p in select.expressions)


def _substitute(conj: exp.Expression, projections: dict[str, exp.Expression],
                star: bool) -> exp.Expression | None:
    """``conj`` with each output column replaced by its projection; None when one cannot be."""
    ok = True
    new = conj.copy()
    for col in list(new.find_all(exp.Column)):
        target = projections.get(lower(col.name))
        if target is None:
            if not star:
                ok = False
            continue
        if target.find(exp.AggFunc) or target.find(exp.Window) or has_query(target):
            return None
        repl = target.copy()
        if col is new:
            new = repl
        else:
            col.replace(exp.Paren(this=repl) if isinstance(repl, exp.Binary) else repl)
    return new if ok else None


def into_derived(src: Source, candidates: list[exp.Expression],
                 source_of: Callable[[exp.Column], Source | None]
                 ) -> tuple[list[exp.Expression], set[str] | None]:
    """The conjuncts to push into derived ``src`` (in its inner names) and the inner demand.

    ``candidates`` are the conjuncts that filter ``src`` in its scope; only those whose
    every column is bound to ``src`` (by ``source_of``) move in.
    """
    rename: dict[str, str] | None = None
    if src.outputs is not None and src.inner_names is not None:
        rename = dict(zip(src.outputs, src.inner_names))
    elif src.passthrough:  # SELECT * inside: names pass through unchanged
        rename = {}
    if rename is None:
        return [], None
    push = [rename_columns(strip_qualifiers(c), rename) for c in candidates
            if _only_from(c, src, source_of)]
    inner_demand = None if src.demand is None else {
        rename.get(d, d) for d in src.demand if d in rename or src.passthrough}
    return push, inner_demand


def into_branch(setop: exp.SetOperation, branch: exp.Expression, pushed: list[exp.Expression],
                demand: set[str] | None
                ) -> tuple[list[exp.Expression], set[str] | None] | None:
    """Conjuncts and demand of a set operation, renamed to one branch's output names.

    Nothing is pushed past the set operation's own LIMIT/OFFSET/FETCH. None when the
    names are unknown (a star) or the arities differ: the branch is then walked with
    nothing pushed and every output demanded.
    """
    if any(setop.args.get(k) for k in ("limit", "offset", "fetch")):
        pushed = []
    first, names = output_names(setop), output_names(branch)
    if first is None or names is None or len(names) != len(first):
        return None
    rename = dict(zip(first, names))
    return ([rename_columns(c, rename) for c in pushed],
            None if demand is None else {rename[d] for d in demand if d in rename})


def _only_from(conj: exp.Expression, src: Source,
               source_of: Callable[[exp.Column], Source | None]) -> bool:
    """True when every column of ``conj`` resolves to derived source ``src``."""
    if has_query(conj) or conj.find(exp.AggFunc):
        return False
    cols = list(conj.find_all(exp.Column))
    return bool(cols) and all(source_of(c) is src for c in cols)


def rename_columns(conj: exp.Expression, mapping: dict[str, str]) -> exp.Expression:
    """A copy of ``conj`` with column names mapped (lower-case keys)."""
    new = conj.copy()
    for col in new.find_all(exp.Column):
        target = mapping.get(lower(col.name))
        if target is not None and target != lower(col.name):
            col.set("this", exp.to_identifier(target))
    return new


def strip_qualifiers(conj: exp.Expression) -> exp.Expression:
    """A copy of ``conj`` with its columns unqualified (the inner scope has other aliases)."""
    new = conj.copy()
    for col in new.find_all(exp.Column):
        for key in ("table", "db", "catalog"):
            col.set(key, None)
    return new
