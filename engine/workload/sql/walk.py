"""The scope walk: every scan of the table in a statement and the conjuncts that filter it.

Statements: queries, CTAS and INSERT ... SELECT (their queries), DELETE and UPDATE (a scan
of every column with the statement's WHERE); MERGE and CREATE VIEW yield nothing.

Each SELECT is a :class:`~engine.workload.sql.scopes.Scope`. The predicate of a scan is the
AND of the WHERE conjuncts, the ON conjuncts of the joins that filter it
(:func:`~engine.workload.sql.scopes.join_targets`) and the conjuncts pushed down from outer
scopes through derived tables (:mod:`engine.workload.sql.pushdown`), plus what those imply
through equi-joins and dimension lookups (:mod:`engine.workload.sql.joins`). The walk also tracks
which outputs of a derived table the outer query reads (its *demand*), so a projection
nobody asks for does not count as a read of the table's columns.

The order of the walk is part of the result: scans are numbered in the order their FROM
items are met, and a column resolves in the first scope that binds it.
"""

from __future__ import annotations

from sqlglot import exp

from engine.table.model import TableSchema
from engine.workload.lookup import DimensionLookups
from engine.workload.sql.columns import Resolver
from engine.workload.sql.joins import JoinRanges
from engine.workload.sql.nodes import (QUERY_TYPES, OnQuery, conjuncts, lower, nested_queries,
                                       unwrap)
from engine.workload.sql.pushdown import into_branch, into_derived, through_projection
from engine.workload.sql.scopes import Scan, Scope, Source, from_items, join_targets, make_source

_SKIPPED_CLAUSES = ("from_", "joins", "with_")


class ScanWalker:
    """Walks one statement; ``scans`` holds the scans of ``table`` found, in order."""

    def __init__(self, table: str, schema: TableSchema,
                 lookups: DimensionLookups | None = None) -> None:
        self.resolver = Resolver(table, schema)
        self.joins = JoinRanges(self.resolver, lookups)
        self.table = self.resolver.table
        self.scans: list[Scan] = []

    # statements ------------------------------------------------------------------------
    def statement(self, stmt: exp.Expression) -> None:
        """Walk ``stmt`` (CTEs already inlined)."""
        if isinstance(stmt, (exp.Delete, exp.Update)) and isinstance(stmt.this, exp.Table):
            select = exp.Select(expressions=[exp.Star()]).from_(stmt.this.copy())
            if stmt.args.get("where"):
                select.set("where", stmt.args["where"].copy())
            self.query(select, None, "root", [], None)
            return
        if isinstance(stmt, QUERY_TYPES):
            self.query(stmt, None, "root", [], None)
            return
        if isinstance(stmt, exp.Create) and lower(stmt.args.get("kind")) == "view":
            return  # defining a view reads nothing; its uses are inlined by the queries
        for q in nested_queries(stmt):
            self.query(q, None, "root", [], None)

    def query(self, q: exp.Expression, parent: Scope | None, kind: str,
              pushed: list[exp.Expression], demand: set[str] | None) -> None:
        """Walk a query of kind root/cte/derived/scalar/exists with conjuncts pushed into it."""
        q = unwrap(q)
        with_ = q.args.get("with_")
        if isinstance(with_, exp.With):  # recursive CTE: walk the bodies for their own scans
            for cte in with_.expressions:
                self.query(cte.this, parent, "cte", [], None)
        if isinstance(q, exp.SetOperation):
            for branch in (q.this, q.expression):
                branch_pushed, branch_demand = into_branch(q, branch, pushed, demand) or ([], None)
                self.query(branch, parent, kind, branch_pushed, branch_demand)
            return
        if isinstance(q, exp.Select):
            self.select(q, parent, kind, pushed, demand)
            return
        for n in nested_queries(q):
            self.query(n, parent, "scalar", [], None)

    # one SELECT ------------------------------------------------------------------------
    def select(self, q: exp.Select, parent: Scope | None, kind: str,
               pushed: list[exp.Expression], demand: set[str] | None) -> None:
        """Bind the sources of ``q``, resolve its columns, then walk its subqueries."""
        scope = Scope(q, parent, {}, {lower(p.alias) for p in q.expressions if p.alias})
        nested: list[tuple[exp.Expression, str]] = []

        def on_query(node: exp.Expression) -> None:
            nested.append((node, "exists" if isinstance(node.parent, exp.Exists) else "scalar"))

        items = from_items(q)
        order, applies = self._sources(scope, items, on_query)
        where = conjuncts(q.args["where"].this) if q.args.get("where") else []
        own_pushed = through_projection(q, pushed)

        wanted = None if demand is None or q.args.get("distinct") else demand
        star_sources = self._resolve_clauses(q, scope, order, wanted, on_query)
        for _, join in items:
            if join is not None and join.args.get("on") is not None:
                self.resolver.resolve_all(join.args["on"], scope, on_query)
        for c in own_pushed:
            self.resolver.resolve_all(c, scope, on_query)
        if star_sources and kind != "exists":
            self._read_stars(q, star_sources, wanted)

        filters = {}
        for src in order:  # what filters each source, and what that implies through joins
            if src.kind in ("scan", "derived"):
                own = where + own_pushed + applies[id(src)]
                filters[id(src)] = own + self.joins.implied(src, scope, own)
            if src.kind == "scan":
                src.scan.conjuncts = filters[id(src)]
        for node, ctx in nested:
            self.query(node, scope, ctx, [], set() if ctx == "exists" else None)
        for src in order:  # derived tables: push down conjuncts over their columns only
            if src.kind == "derived":
                push, inner_demand = into_derived(src, filters[id(src)], self.resolver.source_of)
                self.query(src.query, scope.parent, "derived", push, inner_demand)

    def _sources(self, scope: Scope, items: list[tuple[exp.Expression, exp.Join | None]],
                 on_query: OnQuery) -> tuple[list[Source], dict[int, list[exp.Expression]]]:
        """The scope's sources in FROM order, and the ON conjuncts that filter each."""
        order: list[Source] = []
        applies: dict[int, list[exp.Expression]] = {}
        for node, join in items:
            src = make_source(node, self.table, on_query)
            if src.kind == "scan":
                self.scans.append(src.scan)
            scope.sources[src.alias] = src
            order.append(src)
            applies[id(src)] = []
            if join is None:
                continue
            on = conjuncts(join.args.get("on"))
            for t in join_targets(join, order):
                applies[id(t)].extend(on)
            for ident in join.args.get("using") or []:  # USING columns are read by both sides
                self.resolver.read_using(order, lower(ident.name))
        return order, applies

    def _resolve_clauses(self, q: exp.Select, scope: Scope, order: list[Source],
                         wanted: set[str] | None, on_query: OnQuery) -> list[Source]:
        """Resolve the columns of every clause but FROM/JOIN, skipping projections nobody
        asks for; returns the sources a star projection reads."""
        star_sources: list[Source] = []
        for key, value in q.args.items():
            if key in _SKIPPED_CLAUSES:
                continue
            for v in value if isinstance(value, list) else [value]:
                if not isinstance(v, exp.Expression):
                    continue
                if key == "expressions":
                    if isinstance(v, exp.Star):
                        star_sources.extend(order)
                        continue
                    if isinstance(v, exp.Column) and isinstance(v.this, exp.Star):
                        src = scope.sources.get(lower(v.table))
                        if src is not None:
                            star_sources.append(src)
                        continue
                    if wanted is not None and lower(v.alias_or_name) not in wanted:
                        continue
                self.resolver.resolve_all(v, scope, on_query)
        return star_sources

    def _read_stars(self, q: exp.Select, star_sources: list[Source], wanted: set[str] | None) -> None:
        """A star reads its sources whole, or only the wanted names that pass through it."""
        if wanted is None:
            self.resolver.read_star(star_sources)
            return
        explicit = {lower(p.alias_or_name) for p in q.expressions}
        self.resolver.read_through_star(star_sources, sorted(wanted - explicit))
