"""Join-induced predicates: ranges a source gets through equi-joins and dimension lookups.

Within one SELECT, the conjuncts that filter a source (its WHERE, the ON clauses that may
drop its rows by :func:`~engine.workload.sql.scopes.join_targets`, and what was pushed in
from outside) hold together for every row the source contributes. So when they hold
``s.x = b.y`` and a predicate on ``b.y`` alone, the same predicate holds on ``s.x``: it is
copied onto ``s.x`` (*propagated*). Equalities chain (``s.x = b.y and b.y = c.z``), and the
implied conjuncts of a derived table are pushed into it like any other
(:mod:`engine.workload.sql.pushdown`), which carries them through CTEs and subqueries. An
ON clause of an outer join filters only its null-supplying side, so a predicate on the
preserved side never reaches the other side through it.

When ``s.x`` equals the key ``d.k`` of a registered dimension ``d`` and the conjuncts filter
``d`` on other columns (``d_year = 2000``), the filter is evaluated on ``d``'s data
(:mod:`engine.workload.lookup`) and the matching keys become a conjunct on ``s.x``:
``x BETWEEN lo AND hi OR ...``. A join to a table that is not registered, or whose filter
cannot be evaluated, gives nothing and leaves a note.

Implied conjuncts carry their origin as a :class:`engine.workload.model.RangeSource` in
``node.meta[TAG]`` (the column is filled in when the fragment is built). A note is a
conjunct ``x = x`` tagged ``unmapped``: it gives no range, and it travels into derived
tables as the implied conjuncts do, so the scan of the table receives it.
"""

from __future__ import annotations

from typing import Any, Iterator

import sqlglot
from sqlglot import exp

from engine.workload.lookup import (DimensionInfo, DimensionLookupError, DimensionLookups,
                                    dimension_predicate)
from engine.workload.model import RangeSource
from engine.workload.sql.columns import Resolver
from engine.workload.sql.nodes import chain, conjuncts, has_query, lower, unwrap
from engine.workload.sql.render import sql_literal
from engine.workload.sql.scopes import Scope, Source

#: the ``meta`` key of an implied conjunct's origin
TAG = "range_source"
_MAX_NOTED = 3  # filters quoted in one note

Key = tuple  # (id(source) or None, qualifier, lower-case name)


def origin(node: exp.Expression) -> RangeSource | None:
    """The origin of an implied conjunct (None: the query wrote it)."""
    return node.meta.get(TAG) if node.meta else None


def _is_note(node: exp.Expression) -> bool:
    o = origin(node)
    return o is not None and o.kind == "unmapped"


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _equality(conj: exp.Expression) -> tuple[exp.Column, exp.Column] | None:
    """The two columns of ``a = b``, else None."""
    if not isinstance(conj, exp.EQ) or _is_note(conj):
        return None
    a, b = _bare(conj.this), _bare(conj.expression)
    if isinstance(a, exp.Column) and isinstance(b, exp.Column) \
            and not isinstance(a.this, exp.Star) and not isinstance(b.this, exp.Star):
        return a, b
    return None


def _usable(conj: exp.Expression) -> bool:
    """A conjunct that may be copied or evaluated: no subquery, aggregate or window."""
    return not has_query(conj) and conj.find(exp.AggFunc, exp.Window) is None \
        and not _is_note(conj)


class _Classes:
    """Union-find over column keys."""

    def __init__(self) -> None:
        self.parent: dict[Key, Key] = {}

    def find(self, k: Key) -> Key:
        self.parent.setdefault(k, k)
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, a: Key, b: Key) -> None:
        self.parent[self.find(a)] = self.find(b)


class JoinRanges:
    """Implied conjuncts for the sources of one statement's scopes."""

    def __init__(self, resolver: Resolver, lookups: DimensionLookups | None = None) -> None:
        self.resolver = resolver
        self.lookups = lookups

    # column identity -------------------------------------------------------------------
    def _dimension(self, src: Source) -> DimensionInfo | None:
        if self.lookups is None or src.kind != "other" or not src.name:
            return None
        return self.lookups.info(src.name)

    def key(self, col: exp.Column, scope: Scope) -> tuple[Key, Source | None]:
        """A column's identity in ``scope``: its bound source and name. An unqualified name
        of unknown binding names one source of the scope (SQL refuses an ambiguous one): the
        registered dimension whose schema has it, else the one derived table whose outputs
        a star hides when no table of unknown schema could have it. Else it is known by its
        name only."""
        hit = self.resolver.binding(col)
        if hit is not None:
            return (id(hit[0]), "", lower(hit[1])), hit[0]
        name, qual = lower(col.name), lower(col.table)
        if not qual:
            dims, hidden, unknown = [], [], False
            for s in scope.sources.values():
                info = self._dimension(s)
                if info is not None:
                    if name in {n.lower() for n in info.schema.names}:
                        dims.append(s)
                elif s.kind == "derived" and s.outputs is None:
                    hidden.append(s)
                elif s.kind == "other":
                    unknown = True
            owners = dims or ([] if unknown else hidden)
            if len(owners) == 1:
                return (id(owners[0]), "", name), owners[0]
        return (None, qual, name), None

    # the implied conjuncts of one source -------------------------------------------------
    def implied(self, src: Source, scope: Scope,
                filters: list[exp.Expression]) -> list[exp.Expression]:
        """Conjuncts over ``src``'s columns implied by ``filters`` (which filter ``src``)."""
        if src.kind not in ("scan", "derived") or not filters:
            return []
        keys: dict[int, tuple[Key, Source | None]] = {}
        classes = _Classes()
        for conj in filters:
            pair = _equality(conj)
            if pair is not None:
                a, b = (self._key_of(c, scope, keys) for c in pair)
                classes.union(a, b)
        reps: dict[Key, exp.Column] = {}  # class root -> a column of src in that class
        for conj in filters:
            for col in self._columns(conj):
                k = self._key_of(col, scope, keys)
                if keys[id(col)][1] is src and k in classes.parent:
                    if self.resolver.binding(col) is None:  # known by elimination
                        self.resolver.bind_to(col, src, k[2])
                    reps.setdefault(classes.find(k), col)
        out = self._semi_joins(src, scope, filters, keys, classes, reps)
        if reps:
            out += self._propagated(src, scope, filters, keys, classes, reps)
            out += self._looked_up(src, scope, filters, keys, classes, reps)
        return out

    def _key_of(self, col: exp.Column, scope: Scope,
                keys: dict[int, tuple[Key, Source | None]]) -> Key:
        if id(col) not in keys:
            keys[id(col)] = self.key(col, scope)
        return keys[id(col)][0]

    @staticmethod
    def _columns(conj: exp.Expression) -> Iterator[exp.Column]:
        for col in conj.find_all(exp.Column):
            if not isinstance(col.this, exp.Star):
                yield col

    def target(self, rep: exp.Column) -> exp.Column:
        """A copy of ``rep`` bound as ``rep`` is (a column of an implied conjunct)."""
        new = rep.copy()
        self.resolver.bind_like(new, rep)
        return new

    def _propagated(self, src: Source, scope: Scope, filters: list[exp.Expression],
                    keys: dict, classes: _Classes, reps: dict[Key, exp.Column]
                    ) -> list[exp.Expression]:
        """Predicates on columns equal to ``src``'s, copied onto ``src``'s columns."""
        out = []
        for conj in filters:
            if _equality(conj) is not None or not _usable(conj):
                continue
            cols = list(self._columns(conj))
            roots = [classes.find(self._key_of(c, scope, keys)) if
                     self._key_of(c, scope, keys) in classes.parent else None for c in cols]
            foreign = [c for c in cols if keys[id(c)][1] is not src]
            if not cols or not foreign or any(r not in reps for r in roots):
                continue
            new = conj.copy()
            mapping = dict(zip((id(c) for c in conj.find_all(exp.Column)
                                if not isinstance(c.this, exp.Star)),
                               (c for c in new.find_all(exp.Column)
                                if not isinstance(c.this, exp.Star))))
            via = []
            for col, root in zip(cols, roots):
                if keys[id(col)][1] is src:
                    self.resolver.bind_like(mapping[id(col)], col)
                    continue
                via.append(col.sql())
                target = self.target(reps[root])
                if mapping[id(col)] is new:
                    new = target
                else:
                    mapping[id(col)].replace(target)
            new.meta[TAG] = origin(conj) or RangeSource("", "propagated", ", ".join(via))
            out.append(new)
        return out

    def _looked_up(self, src: Source, scope: Scope, filters: list[exp.Expression],
                   keys: dict, classes: _Classes, reps: dict[Key, exp.Column]
                   ) -> list[exp.Expression]:
        """Dimension filters turned into key ranges of ``src``'s columns, and notes."""
        out: list[exp.Expression] = []
        mapped: set[Key] = set()
        for root, rep in reps.items():
            members = [(k, s) for cid, (k, s) in keys.items()
                       if k in classes.parent and classes.find(k) == root and s is not src]
            seen: set[Key] = set()
            for k, dim in members:
                if k in seen or dim is None:
                    continue
                seen.add(k)
                if dim.kind == "derived":  # (SELECT k FROM dim WHERE ...) AS d
                    found = self._derived_keys(dim, k[2], rep)
                elif self._dimension(dim) is not None:
                    found = [self._lookup(dim, k[2], rep, scope, filters, keys)]
                else:
                    continue
                for expr in found:
                    if expr is not None:
                        out.append(expr)
                        if not _is_note(expr):
                            mapped.add(root)
            if root not in mapped:
                note = self._unmapped(rep, root, members, scope, filters, keys, classes)
                if note is not None:
                    out.append(note)
        return out

    # keys that come out of a subquery -------------------------------------------------------
    def _semi_joins(self, src: Source, scope: Scope, filters: list[exp.Expression],
                    keys: dict, classes: _Classes, reps: dict[Key, exp.Column]
                    ) -> list[exp.Expression]:
        """``x IN (SELECT k FROM dim WHERE ...)`` on a column of ``src`` (or one equal to it)."""
        out: list[exp.Expression] = []
        for conj in filters:
            if not isinstance(conj, exp.In) or conj.args.get("query") is None:
                continue
            col = _bare(conj.this)
            if not isinstance(col, exp.Column) or isinstance(col.this, exp.Star):
                continue
            k = self._key_of(col, scope, keys)
            rep = col if keys[id(col)][1] is src else (
                reps.get(classes.find(k)) if k in classes.parent else None)
            if rep is None:
                continue
            found = simple_dimension(conj.args["query"], None)
            if found is not None:
                out.extend(self._subquery_keys(*found, rep))
        return out

    def _derived_keys(self, dim: Source, output: str, rep: exp.Column) -> list[exp.Expression]:
        """The keys a derived table ``(SELECT k ... FROM dim WHERE ...)`` outputs as ``output``."""
        if dim.query is None:
            return []
        inner = output
        if dim.outputs is not None and dim.inner_names is not None and output in dim.outputs:
            inner = dim.inner_names[dim.outputs.index(output)]
        found = simple_dimension(dim.query, inner)
        return [] if found is None else self._subquery_keys(*found, rep)

    def _subquery_keys(self, table: str, key: str, conjs: list[exp.Expression],
                       rep: exp.Column) -> list[exp.Expression]:
        """What ``key`` values of ``SELECT key FROM table WHERE conjs`` imply for ``rep``: a
        lookup when ``table`` is registered, else the conjuncts on ``key`` itself copied
        onto ``rep`` and a note for the others."""
        itself = table == self.resolver.table  # the table being extracted is no dimension
        info = self.lookups.info(table) if self.lookups is not None and not itself else None
        if info is not None:
            return [self._evaluate(info, key, conjs, rep)] if conjs else []
        own = [c for c in conjs if all(lower(x.name) == key for x in self._columns(c))]
        out = []
        for conj in own:
            new = conj.copy()
            for col in list(new.find_all(exp.Column)):
                target = self.target(rep)
                if col is new:
                    new = target
                else:
                    col.replace(target)
            new.meta[TAG] = RangeSource("", "propagated", f"{table}.{key}")
            out.append(new)
        rest = [c for c in conjs if not any(c is o for o in own)]
        if rest and not itself:
            out.append(self._note(rep, f"{table}.{key}", "; ".join(c.sql() for c in rest[:_MAX_NOTED]),
                                  f"register {table} (`layout-advisor table register {table} "
                                  "PATH`) to turn its filter into ranges"))
        return out

    def _lookup(self, dim: Source, key: str, rep: exp.Column, scope: Scope,
                filters: list[exp.Expression], keys: dict) -> exp.Expression | None:
        info = self._dimension(dim)
        real_key = {n.lower(): n for n in info.schema.names}.get(key)
        if real_key is None:
            return None
        own = []
        for conj in filters:  # the conjuncts over this dimension's columns (or implied for it)
            cols = list(self._columns(conj))
            if not cols or not _usable(conj) or all(lower(c.name) == key for c in cols):
                continue  # (one on the key itself: propagation carries it)
            mine = [keys[id(c)][1] is dim for c in cols if self._key_of(c, scope, keys)]
            if all(mine):
                own.append(conj)
            elif any(mine):
                part = self._project(conj, dim, scope, keys)
                if part is not None:
                    own.append(part)
        if not own:
            return None
        return self._evaluate(info, real_key, own, rep)

    def _project(self, node: exp.Expression, dim: Source, scope: Scope,
                 keys: dict) -> exp.Expression | None:
        """What ``node`` implies for ``dim``'s columns alone (None: nothing): an AND keeps
        its parts on ``dim``; an OR implies the OR of its branches' parts when every branch
        has one (``(cd_x = 'M' and ss_p < 5) or (cd_x = 'S' and ss_p > 9)`` implies
        ``cd_x = 'M' or cd_x = 'S'``)."""
        node = _bare(node)
        if isinstance(node, (exp.And, exp.Or)):
            parts = [self._project(c, dim, scope, keys) for c in chain(node, type(node))]
            if isinstance(node, exp.Or):
                return None if any(p is None for p in parts) else exp.or_(*parts)
            parts = [p for p in parts if p is not None]
            return exp.and_(*parts) if parts else None
        cols = list(self._columns(node))
        if cols and all(self.key(c, scope)[1] is dim for c in cols):
            return node.copy()
        return None

    def _evaluate(self, info: DimensionInfo, key: str, conjs: list[exp.Expression],
                  rep: exp.Column) -> exp.Expression:
        """The keys of ``info.table`` satisfying ``conjs`` as a conjunct on ``rep``, or a note."""
        real_key = {n.lower(): n for n in info.schema.names}.get(key.lower())
        where = f"{info.table}.{real_key or key}"
        pred, left = dimension_predicate(conjs, info.schema)
        if pred is None or real_key is None:
            return self._note(rep, where, "; ".join(c.sql() for c in left[:_MAX_NOTED]),
                              f"the filter on {info.table} cannot be evaluated on its data")
        try:
            found = self.lookups.lookup(info, real_key, pred)
        except DimensionLookupError as exc:
            return self._note(rep, where, pred.text, f"looking it up in {info.table} failed: {exc}")
        expr = _runs_expression(self.target(rep), found.runs, self)
        expr.meta[TAG] = RangeSource("", "lookup", real_key, info.table, found.snapshot,
                                     pred.text, found.note)
        return expr

    def _unmapped(self, rep: exp.Column, root: Key, members: list[tuple[Key, Source | None]],
                  scope: Scope, filters: list[exp.Expression], keys: dict,
                  classes: _Classes) -> exp.Expression | None:
        """A note when ``rep`` joins a table that is not registered and the query filters
        other columns of tables that are not registered (a filter on the joined column
        itself is propagated, not noted)."""
        joined = [(k, s) for k, s in members if s is None or
                  (s.kind == "other" and self._dimension(s) is None)]
        if not joined:
            return None
        filtered = []
        for conj in filters:
            if _equality(conj) is not None or not _usable(conj):
                continue
            cols = list(self._columns(conj))
            owners = [keys[id(c)][1] for c in cols if self._key_of(c, scope, keys)]
            if all(keys[id(c)][0] in classes.parent and classes.find(keys[id(c)][0]) == root
                   for c in cols):
                continue
            if owners and all(o is None or (o.kind == "other" and self._dimension(o) is None)
                              for o in owners):
                filtered.append(conj.sql())
        if not filtered:
            return None
        tables = sorted({s.name for k, s in joined if s is not None and s.name}) or sorted(
            {s.name for s in scope.sources.values() if s.kind == "other" and s.name
             and self._dimension(s) is None})
        k, s = joined[0]
        via = f"{s.name}.{k[2]}" if s is not None and s.name else (f"{k[1]}.{k[2]}" if k[1] else k[2])
        if len(tables) == 1:
            advice = (f"register {tables[0]} (`layout-advisor table register {tables[0]} PATH`) "
                      "to turn its filter into ranges")
        elif tables:
            advice = ("register the table it belongs to (one of " + ", ".join(tables)
                      + ") to turn its filter into ranges")
        else:
            advice = "register the table it belongs to to turn its filter into ranges"
        return self._note(rep, via, "; ".join(filtered[:_MAX_NOTED]), advice)

    def _note(self, rep: exp.Column, via: str, predicate: str, note: str) -> exp.Expression:
        carrier = exp.EQ(this=self.target(rep), expression=self.target(rep))
        carrier.meta[TAG] = RangeSource("", "unmapped", via, None, None, predicate or None, note)
        return carrier


def simple_dimension(query: exp.Expression, output: str | None
                     ) -> tuple[str, str, list[exp.Expression]] | None:
    """(table, key, conjuncts) when ``query`` is ``SELECT key [AS output] ... FROM table
    [alias] WHERE conjuncts`` over one plain table (``output`` None: the only projection):
    every value it outputs there is a ``key`` of a ``table`` row that satisfies the
    conjuncts kept (those over the table's columns, without subqueries). GROUP BY, HAVING,
    DISTINCT and LIMIT only remove rows, so they do not matter.

    Example:
    >>> import sqlglot
    >>> t, k, c = simple_dimension(sqlglot.parse_one(
    ...     "select d.d_date_sk as sk from date_dim d where d.d_year = 2000"), "sk")
    >>> t, k, [x.sql() for x in c]
    ('date_dim', 'd_date_sk', ['d.d_year = 2000'])
    """
    q = unwrap(query)
    from_ = q.args.get("from_") if isinstance(q, exp.Select) else None
    if from_ is None or q.args.get("joins") or q.args.get("with_") \
            or not isinstance(from_.this, exp.Table) or not isinstance(from_.this.this, exp.Identifier):
        return None
    table, alias = from_.this, lower(from_.this.alias_or_name)
    if output is None:
        projs = q.expressions if len(q.expressions) == 1 else []
    else:
        projs = [p for p in q.expressions if lower(p.alias_or_name) == output][:1]
    col = projs[0].unalias() if projs else None
    if not isinstance(col, exp.Column) or isinstance(col.this, exp.Star) \
            or lower(col.table) not in ("", alias):
        return None
    where = q.args.get("where")
    kept = [c for c in (conjuncts(where.this) if where is not None else []) if _usable(c)
            and all(lower(x.table) in ("", alias) for x in c.find_all(exp.Column))]
    return lower(table.name), lower(col.name), kept


def _runs_expression(target: exp.Column, runs: tuple[tuple[Any, Any], ...],
                     joins: JoinRanges) -> exp.Expression:
    """``target BETWEEN lo AND hi OR target = v OR ...``; when there is no run,
    ``target IS NULL AND FALSE``: nothing matches, and the column names the contradiction."""
    parts: list[exp.Expression] = []
    for lo, hi in runs:
        col = joins.target(target)
        if lo == hi:
            parts.append(exp.EQ(this=col, expression=_literal(lo)))
        else:
            parts.append(exp.Between(this=col, low=_literal(lo), high=_literal(hi)))
    if not parts:
        return exp.And(this=exp.Is(this=target, expression=exp.Null()), expression=exp.false())
    return exp.or_(*parts, copy=False) if len(parts) > 1 else parts[0]


def _literal(value: Any) -> exp.Expression:
    return sqlglot.parse_one(sql_literal(value))
