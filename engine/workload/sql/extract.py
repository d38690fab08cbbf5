"""SQL -> scan fragments: every scan of one table in a statement, with the ranges it asks for.

This is what PTO calls a *scan fragment* (seed 002, section 3.1, Table 1): the filter an
optimizer would push into one scan operator of the table, here as a union of per-column
range boxes (see :mod:`engine.workload.model`) plus the table columns the scan reads.

How a statement is read (sqlglot parses it; everything else is here, small and explicit):

1. Non-recursive CTEs are inlined at each reference (a CTE used twice is two scans, as
   Spark plans it); a recursive CTE's body is still walked for its own scans.
2. Each SELECT is a scope with its FROM/JOIN sources: scans of the table, derived tables
   (subqueries in FROM, inlined CTEs), or other tables whose schema we do not know.
3. The predicate of a scan is the AND of the WHERE conjuncts, the ON conjuncts of inner
   joins (and of the join whose null-supplying side the scan is), and conjuncts pushed
   down from outer scopes through derived tables (renamed through the projection; never
   through LIMIT, window functions, aggregates or DISTINCT ON).
4. The predicate becomes a capped DNF of per-column ranges (:mod:`engine.workload.boxes`);
   constants are folded (:mod:`engine.workload.folding`) and coerced to the column type.
   Anything not understood -- column-to-column comparisons, functions of columns, LIKE,
   IS NULL, ``<>``, NOT IN, subquery predicates -- is *no range*: the conjunct drops out,
   which widens the fragment and never narrows it.

The table is matched by name, whatever its catalog/database qualifier. Statements:
queries, CTAS and INSERT ... SELECT (their queries), DELETE and UPDATE (a scan of every
column with the statement's WHERE); MERGE and CREATE VIEW yield nothing.

Column resolution: a qualified column belongs to the source of that alias; an unqualified
one to the only scan of the table whose schema has it (other tables' schemas are unknown:
a name of the table's schema is assumed to be the table's, as in TPC-H where names carry a
table prefix); otherwise to an outer scope (correlated subqueries). A column qualified with
the table's alias but missing from its schema raises :class:`WorkloadParseError`, as does
an unqualified unknown name in a scope that reads only the table.

Results:
* ``boxes == ()``: no usable predicate, the scan cannot be pruned;
* every box contradictory (``x < 1 AND x > 5``, ``WHERE 1 = 0``): one box holding
  :func:`engine.workload.boxes.empty_range` (``min > max``) on one column: matches nothing.

Example:
>>> from engine.table.model import TableSchema
>>> schema = TableSchema((("l_shipdate", "date"), ("l_quantity", "int")))
>>> [f] = extract_fragments("select l_quantity from lineitem where l_shipdate >= "
...                         "date '1994-01-01' and l_quantity < 24", "lineitem", schema, "q1")
>>> f.boxes[0]["l_quantity"]
Range(min=None, max=24, min_inclusive=True, max_inclusive=False)
>>> f.columns
('l_shipdate', 'l_quantity')
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from engine.core.errors import InvalidParameterError, WorkloadParseError
from engine.table.model import TableSchema
from engine.workload import boxes as bx
from engine.workload.boxes import Box
from engine.workload.folding import NOT_CONSTANT, coerce, fold
from engine.workload.model import Range, ScanFragment

DNF_CAP = bx.DEFAULT_CAP

_QUERY_TYPES = (exp.Select, exp.SetOperation)
_OPS: dict[type, str] = {exp.EQ: "=", exp.NullSafeEQ: "=", exp.NEQ: "<>", exp.LT: "<",
                         exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_NEGATE = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_T = exp.DataType.Type
_WIDENING_CASTS: dict[str, set] = {  # order-preserving, injective casts of a column
    "int": set(exp.DataType.INTEGER_TYPES) | {_T.DOUBLE, _T.FLOAT, _T.DECIMAL, _T.BIGDECIMAL},
    "float": {_T.DOUBLE, _T.FLOAT},
    "date": {_T.DATE, _T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMPNTZ,
             _T.DATETIME},
    "timestamp": {_T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMPNTZ, _T.DATETIME},
    "string": set(exp.DataType.TEXT_TYPES),
}


# --- scopes ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Scan:
    """One scan of the table being extracted."""

    alias: str
    conjuncts: list[exp.Expression] = field(default_factory=list)
    columns: dict[str, None] = field(default_factory=dict)
    star: bool = False
    seen: dict[str, None] = field(default_factory=dict)  # predicated columns, first-seen


@dataclass(eq=False)
class _Source:
    alias: str  # lower case
    kind: str  # "scan" | "derived" | "other"
    scan: _Scan | None = None
    query: exp.Expression | None = None  # derived: the inner query
    outputs: list[str] | None = None  # derived: output names, None when unknown (star)
    inner_names: list[str] | None = None  # derived: the inner query's own output names
    demand: set[str] | None = field(default_factory=set)  # None = every output
    passthrough: bool = False  # derived with a star and no column aliases: names unchanged


@dataclass(eq=False)
class _Scope:
    select: exp.Select
    parent: "_Scope | None"
    sources: dict[str, _Source]
    aliases: set[str]


def _lower(name: str | None) -> str:
    return (name or "").lower()


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Subquery, exp.Paren)) and isinstance(node.this, exp.Expression) \
            and not node.args.get("alias"):
        node = node.this
    return node


def _output_names(query: exp.Expression) -> list[str] | None:
    """Lower-case output column names of a query; None when a star hides them."""
    query = _unwrap(query)
    while isinstance(query, exp.SetOperation):
        query = _unwrap(query.this)
    if not isinstance(query, exp.Select):
        return None
    names = []
    for proj in query.expressions:
        if isinstance(proj, exp.Star) or (isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star)):
            return None
        names.append(_lower(proj.alias_or_name))
    return names


def _conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
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


def _chain(node: exp.Expression, kind: type) -> list[exp.Expression]:
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


def _walk_local(node: exp.Expression, on_query: Callable[[exp.Expression], None]):
    """Yield the nodes of ``node`` that belong to its scope; hand nested queries to ``on_query``."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur is not node and isinstance(cur, _QUERY_TYPES):
            on_query(cur)
            continue
        if isinstance(cur, exp.Lambda):
            continue
        yield cur
        for child in reversed(list(cur.iter_expressions())):
            stack.append(child)


# --- CTE inlining ------------------------------------------------------------------------

def _inline_ctes(node: exp.Expression, env: dict[str, tuple[exp.Expression, list]]) -> exp.Expression:
    """Replace references to non-recursive CTEs by aliased subqueries of their bodies."""
    with_ = node.args.get("with_") if isinstance(node, exp.Expression) else None
    if isinstance(with_, exp.With) and not with_.args.get("recursive"):
        env = dict(env)
        for cte in with_.expressions:
            body = _inline_ctes(cte.this, env)
            cols = list(cte.args["alias"].columns) if cte.args.get("alias") else []
            env[_lower(cte.alias)] = (body, cols)
        node.set("with_", None)
    if isinstance(node, exp.Table) and not node.args.get("db") and _lower(node.name) in env \
            and isinstance(node.this, exp.Identifier):
        body, cols = env[_lower(node.name)]
        alias = exp.TableAlias(this=exp.to_identifier(node.alias_or_name),
                               columns=[c.copy() for c in cols] or None)
        return exp.Subquery(this=body.copy(), alias=alias)
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            new = _inline_ctes(value, env)
            if new is not value:
                node.set(key, new)
        elif isinstance(value, list):
            changed = False
            items = []
            for v in value:
                nv = _inline_ctes(v, env) if isinstance(v, exp.Expression) else v
                changed |= nv is not v
                items.append(nv)
            if changed:
                node.set(key, items)
    return node


# --- the extractor -----------------------------------------------------------------------

class _Extractor:
    def __init__(self, table: str, schema: TableSchema, cap: int = DNF_CAP) -> None:
        self.table = _lower(table)
        self.schema = schema
        self.types = {_lower(n): (n, t) for n, t in schema.columns}
        self.cap = cap
        self.scans: list[_Scan] = []
        # id(Column) -> (source, column name, the Column itself: kept alive so ids stay unique)
        self.resolved: dict[int, tuple[_Source, str, exp.Column]] = {}

    # statements ------------------------------------------------------------------------
    def statement(self, stmt: exp.Expression) -> None:
        if stmt.find(exp.With) is not None:  # (recursive walk: only when there is a WITH)
            stmt = _inline_ctes(stmt, {})
        if isinstance(stmt, (exp.Delete, exp.Update)) and isinstance(stmt.this, exp.Table):
            select = exp.Select(expressions=[exp.Star()]).from_(stmt.this.copy())
            if stmt.args.get("where"):
                select.set("where", stmt.args["where"].copy())
            self.query(select, None, "root", [], None)
            return
        if isinstance(stmt, _QUERY_TYPES):
            self.query(stmt, None, "root", [], None)
            return
        if isinstance(stmt, exp.Create) and _lower(stmt.args.get("kind")) == "view":
            return  # defining a view reads nothing; its uses are inlined by the queries
        roots: list[exp.Expression] = []
        for _ in _walk_local(stmt, roots.append):
            pass
        for q in roots:
            self.query(q, None, "root", [], None)

    def query(self, q: exp.Expression, parent: _Scope | None, kind: str,
              pushed: list[exp.Expression], demand: set[str] | None) -> None:
        q = _unwrap(q)
        with_ = q.args.get("with_")
        if isinstance(with_, exp.With):  # recursive CTE: walk the bodies for their own scans
            for cte in with_.expressions:
                self.query(cte.this, parent, "cte", [], None)
        if isinstance(q, exp.SetOperation):
            if any(q.args.get(k) for k in ("limit", "offset", "fetch")):
                pushed = []
            first = _output_names(q)
            for branch in (q.this, q.expression):
                names = _output_names(branch)
                if first is None or names is None or len(names) != len(first):
                    self.query(branch, parent, kind, [], None)
                    continue
                rename = dict(zip(first, names))
                self.query(branch, parent, kind, [_rename(c, rename) for c in pushed],
                           None if demand is None else {rename[d] for d in demand if d in rename})
            return
        if isinstance(q, exp.Select):
            self.select(q, parent, kind, pushed, demand)
            return
        nested: list[exp.Expression] = []
        for _ in _walk_local(q, nested.append):
            pass
        for n in nested:
            self.query(n, parent, "scalar", [], None)

    def select(self, q: exp.Select, parent: _Scope | None, kind: str,
               pushed: list[exp.Expression], demand: set[str] | None) -> None:
        scope = _Scope(q, parent, {}, {_lower(p.alias) for p in q.expressions if p.alias})
        nested: list[tuple[exp.Expression, str]] = []

        def on_query(node: exp.Expression) -> None:
            ctx = "exists" if isinstance(node.parent, exp.Exists) else "scalar"
            nested.append((node, ctx))

        # sources, and which ON conjuncts apply to which of them
        from_ = q.args.get("from_")
        joins = q.args.get("joins") or []
        items = ([(from_.this, None)] if from_ is not None else []) + [(j.this, j) for j in joins]
        order: list[_Source] = []
        applies: dict[int, list[exp.Expression]] = {}
        for src_node, join in items:
            src = self._source(src_node, scope, on_query)
            scope.sources[src.alias] = src
            order.append(src)
            applies[id(src)] = []
            if join is None:
                continue
            on = _conjuncts(join.args.get("on"))
            side, jkind = _lower(join.side), _lower(join.kind)
            if side == "full":
                targets = []
            elif side == "left" or jkind in ("semi", "anti"):
                targets = [src]
            elif side == "right":
                targets = order[:-1]
            else:
                targets = order
            for t in targets:
                applies[id(t)].extend(on)
            for ident in join.args.get("using") or []:  # USING columns are read by both sides
                for t in order:
                    if t.kind == "scan" and _lower(ident.name) in self.types:
                        t.scan.columns.setdefault(self.types[_lower(ident.name)][0])
                    elif t.kind == "derived":
                        self._demand(t, _lower(ident.name))

        where = _conjuncts(q.args["where"].this) if q.args.get("where") else []
        own_pushed = self._accept_pushed(q, pushed)

        # columns of this scope (skipping projections nobody asks for)
        wanted = None if demand is None or q.args.get("distinct") else demand
        star_sources: list[_Source] = []
        for key, value in q.args.items():
            if key in ("from_", "joins", "with_"):
                continue
            values = value if isinstance(value, list) else [value]
            for v in values:
                if not isinstance(v, exp.Expression):
                    continue
                if key == "expressions":
                    if isinstance(v, exp.Star):
                        star_sources.extend(order)
                        continue
                    if isinstance(v, exp.Column) and isinstance(v.this, exp.Star):
                        src = scope.sources.get(_lower(v.table))
                        if src is not None:
                            star_sources.append(src)
                        continue
                    if wanted is not None and _lower(v.alias_or_name) not in wanted:
                        continue
                self._resolve_all(v, scope, on_query)
        for _, join in items:
            if join is not None and join.args.get("on") is not None:
                self._resolve_all(join.args["on"], scope, on_query)
        for c in own_pushed:
            self._resolve_all(c, scope, on_query)
        if star_sources and kind != "exists":
            if wanted is None:
                for src in star_sources:
                    if src.kind == "scan":
                        src.scan.star = True
                    elif src.kind == "derived":
                        src.demand = None
            else:
                explicit = {_lower(p.alias_or_name) for p in q.expressions}
                for name in sorted(wanted - explicit):  # names passing through the star
                    for src in star_sources:
                        if src.kind == "scan" and name in self.types:
                            src.scan.columns.setdefault(self.types[name][0])
                        elif src.kind == "derived" and (src.outputs is None or name in src.outputs):
                            self._demand(src, name)

        # scans of the table in this scope
        for src in order:
            if src.kind != "scan":
                continue
            src.scan.conjuncts = where + own_pushed + applies[id(src)]

        for node, ctx in nested:
            self.query(node, scope, ctx, [], set() if ctx == "exists" else None)

        # derived tables: push down conjuncts over their columns only, then walk them
        for src in order:
            if src.kind != "derived":
                continue
            push = []
            rename: dict[str, str] | None = None
            if src.outputs is not None and src.inner_names is not None:
                rename = dict(zip(src.outputs, src.inner_names))
            elif src.passthrough:  # SELECT * inside: names pass through unchanged
                rename = {}
            if rename is not None:
                for c in where + own_pushed + applies[id(src)]:
                    if self._only_from(c, src):
                        push.append(_rename(_strip_qualifiers(c), rename))
                inner_demand = None if src.demand is None else {
                    rename.get(d, d) for d in src.demand if d in rename or src.passthrough}
            else:
                inner_demand = None
            self.query(src.query, scope.parent, "derived", push, inner_demand)

    def _source(self, node: exp.Expression, scope: _Scope, on_query) -> _Source:
        alias = _lower(node.alias_or_name) if isinstance(node, exp.Expression) else ""
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if _lower(node.name) == self.table:
                scan = _Scan(alias)
                self.scans.append(scan)
                return _Source(alias, "scan", scan=scan)
            return _Source(alias, "other")
        if isinstance(node, exp.Subquery) and isinstance(_unwrap(node.this), _QUERY_TYPES):
            inner = node.this
            inner_names = _output_names(inner)
            alias_cols = node.args["alias"].columns if node.args.get("alias") else []
            outputs = [_lower(c.name) for c in alias_cols] if alias_cols else inner_names
            if alias_cols and inner_names is not None and len(alias_cols) != len(inner_names):
                outputs = None
            return _Source(alias, "derived", query=inner, outputs=outputs,
                           inner_names=inner_names if outputs is not None else None,
                           passthrough=outputs is None and not alias_cols)
        for _ in _walk_local(node, on_query):  # LATERAL, UNNEST, VALUES, table functions
            pass
        return _Source(alias or f"#{id(node)}", "other")

    # pushdown ------------------------------------------------------------------------------
    def _accept_pushed(self, q: exp.Select, pushed: list[exp.Expression]) -> list[exp.Expression]:
        """Rewrite conjuncts over this select's outputs into conjuncts over its sources."""
        if not pushed:
            return []
        if any(q.args.get(k) for k in ("limit", "offset", "fetch", "qualify")) or \
                isinstance(q.args.get("distinct"), exp.Distinct) and q.args["distinct"].args.get("on"):
            return []
        if any(p.find(exp.Window) for p in q.expressions):
            return []
        projections = {}
        star = False
        for p in q.expressions:
            if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
                star = True
            else:
                projections.setdefault(_lower(p.alias_or_name), p.unalias())
        out = []
        for c in pushed:
            ok = True
            new = c.copy()
            for col in list(new.find_all(exp.Column)):
                target = projections.get(_lower(col.name))
                if target is None:
                    if not star:
                        ok = False
                    continue
                if target.find(exp.AggFunc) or target.find(exp.Window) or \
                        any(True for _ in target.find_all(*_QUERY_TYPES)):
                    ok = False
                    break
                repl = target.copy()
                if col is new:
                    new = repl
                else:
                    col.replace(exp.Paren(this=repl) if isinstance(repl, exp.Binary) else repl)
            if ok:
                out.append(new)
        return out

    def _only_from(self, conj: exp.Expression, src: _Source) -> bool:
        """True when every column of ``conj`` resolves to derived source ``src``."""
        if any(True for _ in conj.find_all(*_QUERY_TYPES)) or conj.find(exp.AggFunc):
            return False
        cols = list(conj.find_all(exp.Column))
        return bool(cols) and all(self.resolved.get(id(c), (None,))[0] is src for c in cols)

    # column resolution ---------------------------------------------------------------------
    def _resolve_all(self, node: exp.Expression, scope: _Scope, on_query) -> None:
        for n in _walk_local(node, on_query):
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                self._lookup(n, scope)

    def _demand(self, src: _Source, name: str) -> None:
        if src.demand is not None:
            src.demand.add(name)

    def _lookup(self, col: exp.Column, scope: _Scope):
        """Resolve ``col`` from ``scope`` outwards; record it on a scan or derived source."""
        if id(col) in self.resolved:
            return self.resolved[id(col)]
        name, qual = _lower(col.name), _lower(col.table)
        s: _Scope | None = scope
        while s is not None:
            sources = list(s.sources.values())
            if qual:
                src = next((x for x in sources if x.alias == qual), None)
                if src is None:
                    s = s.parent
                    continue
                return self._bind(col, src, name)
            scans = [x for x in sources if x.kind == "scan" and name in self.types]
            derived = [x for x in sources if x.kind == "derived" and x.outputs is not None
                       and name in x.outputs]
            unknown = [x for x in sources if x.kind == "other"
                       or (x.kind == "derived" and x.outputs is None)]
            if len(scans) + len(derived) == 1:
                return self._bind(col, (scans + derived)[0], name)
            if scans or derived:
                return None  # ambiguous
            if len(unknown) == 1 and unknown[0].kind == "derived":
                return self._bind(col, unknown[0], name)  # through a derived table's star
            if unknown:
                for x in unknown:
                    if x.kind == "derived":
                        self._demand(x, name)
                if name not in self.types:
                    return None  # belongs to a table whose schema we do not know
                # a name of the table's schema: may be an outer reference to a scan of it
                # (``exists (select * from lineitem where l_orderkey = o_orderkey)`` for orders)
            if name in s.aliases:
                return None
            s = s.parent
        if not qual and scope.sources and all(x.kind == "scan" for x in scope.sources.values()):
            raise WorkloadParseError(f"unknown column {col.name!r} of table {self.table!r}"
                                     f"{self._known()}")
        return None

    def _known(self) -> str:
        names = self.schema.names
        more = f", ... ({len(names)} in all)" if len(names) > 8 else ""
        return f"; columns are: {', '.join(names[:8])}{more}"

    def _bind(self, col: exp.Column, src: _Source, name: str):
        if src.kind == "scan":
            if name not in self.types:
                raise WorkloadParseError(
                    f"unknown column {col.sql()!r} of table {self.table!r}{self._known()}")
            real = self.types[name][0]
            src.scan.columns.setdefault(real)
            self.resolved[id(col)] = (src, real, col)
        else:
            self._demand(src, name)
            self.resolved[id(col)] = (src, name, col)
        return self.resolved[id(col)]

    # predicates -> boxes --------------------------------------------------------------------
    def fragment_boxes(self, scan: _Scan) -> tuple[Box, ...]:
        result = bx.and_boxes(*[self._dnf(c, False, scan) for c in scan.conjuncts], cap=self.cap)
        if not result:
            col = next(iter(scan.seen), None) or next(iter(self.schema.orderable()), None) \
                or self.schema.names[0]
            return ({col: bx.empty_range(self.schema.type_of(col))},)
        if any(not b for b in result):
            return ()
        return tuple(result)

    def _dnf(self, node: exp.Expression, neg: bool, scan: _Scan) -> list[Box]:
        if isinstance(node, exp.Paren):
            return self._dnf(node.this, neg, scan)
        if isinstance(node, exp.Not):
            return self._dnf(node.this, not neg, scan)
        if isinstance(node, (exp.And, exp.Or)):
            parts = [self._dnf(c, neg, scan) for c in _chain(node, type(node))]
            conj = isinstance(node, exp.And) != neg
            return bx.and_boxes(*parts, cap=self.cap) if conj else bx.or_boxes(*parts, cap=self.cap)
        if isinstance(node, exp.Boolean):
            return bx.TRUE if bool(node.this) != neg else bx.FALSE
        if type(node) in _OPS:
            op = _OPS[type(node)]
            if neg:
                if isinstance(node, exp.NullSafeEQ):
                    return bx.TRUE
                op = _NEGATE[op]
            return self._compare(op, node.this, node.expression, scan)
        if isinstance(node, exp.Between) and not node.args.get("symmetric"):
            lo, hi, x = node.args["low"], node.args["high"], node.this
            if neg:
                return bx.or_boxes(self._compare("<", x, lo, scan), self._compare(">", x, hi, scan),
                                   cap=self.cap)
            return bx.and_boxes(self._compare(">=", x, lo, scan), self._compare("<=", x, hi, scan),
                                cap=self.cap)
        if isinstance(node, exp.In) and not neg and not node.args.get("query") \
                and not node.args.get("unnest") and not node.args.get("field"):
            return self._in_list(node, scan)
        return bx.TRUE

    def _in_list(self, node: exp.In, scan: _Scan) -> list[Box]:
        lhs = node.this
        parts = []
        for item in node.expressions:
            if isinstance(lhs, exp.Tuple):
                rhs = item.this if isinstance(item, exp.Paren) else item
                rvals = rhs.expressions if isinstance(rhs, exp.Tuple) else [rhs]
                if len(rvals) != len(lhs.expressions):
                    return bx.TRUE
                parts.append(bx.and_boxes(*[self._compare("=", a, b, scan)
                                            for a, b in zip(lhs.expressions, rvals)], cap=self.cap))
            else:
                parts.append(self._compare("=", lhs, item, scan))
        return bx.or_boxes(*parts, cap=self.cap) if parts else bx.FALSE

    def _column_of(self, node: exp.Expression, scan: _Scan) -> tuple[str, str] | None:
        """(column, cast) when ``node`` is a column of ``scan``, maybe under a harmless cast.

        ``cast`` is "" for the column itself and "date" for a timestamp cast to a date
        (order-preserving but not injective: handled by the caller)."""
        while isinstance(node, exp.Paren):
            node = node.this
        cast = ""
        if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Column):
            target = node.to.this
            inner = self._column_of(node.this, scan)
            if inner is None:
                return None
            ltype = self.schema.type_of(inner[0])
            if target in _WIDENING_CASTS.get(ltype, set()):
                return inner
            if ltype == "timestamp" and target == _T.DATE:
                return inner[0], "date"
            return None
        if isinstance(node, (exp.TsOrDsToDate, exp.Date)) and isinstance(node.this, exp.Column) \
                and not node.args.get("format"):
            inner = self._column_of(node.this, scan)
            if inner and self.schema.type_of(inner[0]) == "timestamp":
                return inner[0], "date"
            if inner and self.schema.type_of(inner[0]) == "date":
                return inner
            return None
        if not isinstance(node, exp.Column):
            return None
        hit = self.resolved.get(id(node))
        if hit is None or hit[0].scan is not scan:
            return None
        return hit[1], cast

    def _compare(self, op: str, left: exp.Expression, right: exp.Expression, scan: _Scan) -> list[Box]:
        col = self._column_of(left, scan)
        other = right
        if col is None:
            col = self._column_of(right, scan)
            other, op = left, _FLIP[op]
        if col is None:
            return _constant_compare(op, fold(left), fold(right))
        name, cast = col
        value = fold(other)
        if value is NOT_CONSTANT or op == "<>":
            return bx.TRUE
        scan.seen.setdefault(name)
        ltype = self.schema.type_of(name)
        if cast == "date":  # CAST(ts AS DATE) op d  ->  a range of whole days of ts
            near = coerce("date", value)
            if near is None:
                return bx.TRUE
            r = _day_range(op, near)
            return bx.FALSE if r is None or bx.is_empty(r) else [{name: r}]
        near = coerce(ltype, value)
        if near is None:
            return bx.TRUE
        r = _range(op, near)
        return bx.FALSE if r is None or bx.is_empty(r) else [{name: r}]


def _range(op: str, near: tuple[Any, Any]) -> Range | None:
    """The range of ``column op value`` given the value's nearest representable neighbours."""
    below, above = near
    exact = below == above
    if op == "=":
        return Range(below, below) if exact else None
    if op == ">":
        return Range(below, None, False, True) if exact else Range(above, None)
    if op == ">=":
        return Range(above, None)
    if op == "<":
        return Range(None, below, True, False) if exact else Range(None, below)
    if op == "<=":
        return Range(None, below)
    return None


def _day_range(op: str, near: tuple[Any, Any]) -> Range | None:
    """``CAST(ts AS DATE) op value`` as a timestamp range (value coerced to dates)."""
    below, above = near
    midnight = lambda d: dt.datetime(d.year, d.month, d.day)  # noqa: E731
    day = dt.timedelta(days=1)
    if op == "=":
        return Range(midnight(below), midnight(below) + day, True, False) if below == above else None
    if op in (">", ">="):
        start = above + day if (op == ">" and below == above) else above
        return Range(midnight(start), None)
    if op in ("<", "<="):
        end = below + day if (op == "<=" or below != above) else below
        return Range(None, midnight(end), True, False)
    return None


def _constant_compare(op: str, a: Any, b: Any) -> list[Box]:
    """``1 = 1`` -> TRUE, ``1 = 0`` -> FALSE; anything not both constant -> TRUE (no range)."""
    if a is NOT_CONSTANT or b is NOT_CONSTANT or a is None or b is None:
        return bx.TRUE
    try:
        result = {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                  ">=": a >= b}[op]
    except TypeError:
        return bx.TRUE
    return bx.TRUE if result else bx.FALSE


def _rename(conj: exp.Expression, mapping: dict[str, str]) -> exp.Expression:
    new = conj.copy()
    for col in new.find_all(exp.Column):
        target = mapping.get(_lower(col.name))
        if target is not None and target != _lower(col.name):
            col.set("this", exp.to_identifier(target))
    return new


def _strip_qualifiers(conj: exp.Expression) -> exp.Expression:
    new = conj.copy()
    for col in new.find_all(exp.Column):
        for key in ("table", "db", "catalog"):
            col.set(key, None)
    return new


# --- public ------------------------------------------------------------------------------

_STATEMENT_TYPES = tuple(getattr(exp, n) for n in (
    "Query", "DML", "DDL", "Command", "Set", "Use", "Describe", "Analyze", "Transaction",
    "Commit", "Rollback", "Show", "Cache", "Uncache", "Pragma", "Grant", "Revoke", "Drop",
    "Alter", "Kill", "Refresh", "LoadData", "Summarize", "TruncateTable", "Comment", "Declare",
    "Execute", "Export") if hasattr(exp, n))


def _parse_error(message: str, line: int | None = None, column: int | None = None) -> WorkloadParseError:
    err = WorkloadParseError(message)
    err.line, err.column = line, column  # within the statement text; the importer offsets them
    return err


def parse_statements(sql: str, dialect: str | None = None) -> list[exp.Expression]:
    """Parse SQL text with sqlglot; errors become WorkloadParseError with line and column.

    A bare expression (``selec x`` parses as ``selec AS x``) is not a statement: garbage.
    """
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "falling back to Command" warnings, once per query
    try:
        parsed = sqlglot.parse(sql, read=dialect or None)
    except (ParseError, TokenError) as exc:
        errors = getattr(exc, "errors", None) or [{}]
        first = errors[0]
        desc = first.get("description") or (str(exc).splitlines() or ["syntax error"])[0]
        desc = re.sub(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>",
                      lambda m: "end of statement" if m.group(1) == "SENTINEL" else repr(m.group(2)),
                      desc)
        desc = re.sub(r"<class 'sqlglot\.[\w.]*\.(\w+)'>", r"\1", desc)
        raise _parse_error(f"cannot parse SQL: {desc}", first.get("line"), first.get("col")) from None
    except ValueError as exc:  # unknown dialect name
        raise InvalidParameterError(f"unknown SQL dialect {dialect!r}: {exc}") from None
    except RecursionError:
        raise _parse_error("cannot parse SQL: statement nested too deeply") from None
    finally:
        logger.setLevel(level)
    out = [p for p in parsed if p is not None]
    for stmt in out:
        if not isinstance(stmt, _STATEMENT_TYPES):
            word = sql.strip().split(None, 1)[0] if sql.strip() else ""
            raise _parse_error(f"cannot parse SQL: not a statement (starts with {word[:30]!r})", 1, 1)
    return out


def extract_fragments(sql: str, table: str, schema: TableSchema, query_id: str,
                      dialect: str | None = None, ts: str | None = None) -> list[ScanFragment]:
    """One :class:`ScanFragment` per scan of ``table`` in ``sql`` (see the module docs)."""
    out: list[ScanFragment] = []
    for stmt in parse_statements(sql, dialect):
        ex = _Extractor(table, schema)
        try:
            ex.statement(stmt)
            for scan in ex.scans:
                columns = schema.names if scan.star else [n for n in schema.names if n in scan.columns]
                out.append(ScanFragment(query_id=query_id, table=table,
                                        boxes=ex.fragment_boxes(scan), columns=tuple(columns),
                                        ts=ts, sql=sql.strip()))
        except RecursionError:
            raise _parse_error("statement nested too deeply to analyse") from None
    return out
