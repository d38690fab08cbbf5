"""Column resolution: which source of which scope each column reference reads.

A qualified column belongs to the source of that alias; an unqualified one to the only scan
of the table whose schema has it (other tables' schemas are unknown: a name of the table's
schema is assumed to be the table's, as in TPC-H where names carry a table prefix), or to
the only derived table that outputs it; otherwise to an outer scope (correlated
subqueries). A column qualified with the table's alias but missing from its schema raises
:class:`WorkloadParseError`, as does an unqualified unknown name in a scope that reads only
the table.

Resolving a column records it: on a scan, as a column the scan reads; on a derived table,
as an output demanded from it (so that only demanded projections of the inner query count
as read).
"""

from __future__ import annotations

from sqlglot import exp

from engine.core.errors import WorkloadParseError
from engine.table.model import TableSchema
from engine.workload.sql.nodes import OnQuery, lower, walk_local
from engine.workload.sql.scopes import Scan, Scope, Source


def demand(src: Source, name: str) -> None:
    """Record that output ``name`` of derived ``src`` is read (no-op when all are)."""
    if src.demand is not None:
        src.demand.add(name)


class Resolver:
    """Binds column references to sources, for the scans of one table in one statement."""

    def __init__(self, table: str, schema: TableSchema) -> None:
        self.table = lower(table)
        self.schema = schema
        self.names = {lower(n): n for n in schema.names}  # lower case -> real name
        # id(Column) -> (source, column name, the Column itself: kept alive so ids stay unique)
        self._resolved: dict[int, tuple[Source, str, exp.Column]] = {}

    # queries of the bindings -----------------------------------------------------------
    def source_of(self, col: exp.Column) -> Source | None:
        """The source ``col`` was bound to, if any."""
        hit = self._resolved.get(id(col))
        return hit[0] if hit else None

    def binding(self, col: exp.Column) -> tuple[Source, str] | None:
        """(source, column name) ``col`` was bound to: the real name on a scan, the lower-case
        output name on a derived table, the lower-case name on another table."""
        hit = self._resolved.get(id(col))
        return (hit[0], hit[1]) if hit else None

    def bind_like(self, new: exp.Column, like: exp.Column) -> None:
        """Bind ``new`` (a copy made for an implied conjunct) as ``like`` is bound."""
        hit = self._resolved.get(id(like))
        if hit is not None:
            self._resolved[id(new)] = (hit[0], hit[1], new)

    def bind_to(self, col: exp.Column, src: Source, name: str) -> None:
        """Bind ``col`` to ``src`` (a column of a derived table whose outputs a star hides,
        known to be ``src``'s by elimination)."""
        self._bind(col, src, lower(name))

    def scan_column(self, node: exp.Expression, scan: Scan) -> str | None:
        """The real column name when ``node`` is a column bound to ``scan``."""
        hit = self._resolved.get(id(node))
        if hit is None or hit[0].scan is not scan:
            return None
        return hit[1]

    # reads not tied to one column reference ----------------------------------------------
    def read_using(self, sources: list[Source], name: str) -> None:
        """``JOIN ... USING (name)``: every source so far reads ``name``."""
        for src in sources:
            if src.kind == "scan" and name in self.names:
                src.scan.columns.setdefault(self.names[name])
            elif src.kind == "derived":
                demand(src, name)

    def read_star(self, sources: list[Source]) -> None:
        """``SELECT *`` with every output wanted: the sources are read whole."""
        for src in sources:
            if src.kind == "scan":
                src.scan.star = True
            elif src.kind == "derived":
                src.demand = None

    def read_through_star(self, sources: list[Source], names: list[str]) -> None:
        """Outputs ``names`` of a ``SELECT *`` are wanted: read them from the star's sources."""
        for name in names:
            for src in sources:
                if src.kind == "scan" and name in self.names:
                    src.scan.columns.setdefault(self.names[name])
                elif src.kind == "derived" and (src.outputs is None or name in src.outputs):
                    demand(src, name)

    # column references ------------------------------------------------------------------
    def resolve_all(self, node: exp.Expression, scope: Scope, on_query: OnQuery) -> None:
        """Resolve every column of ``node`` in ``scope``; nested queries go to ``on_query``."""
        for n in walk_local(node, on_query):
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                self.lookup(n, scope)

    def lookup(self, col: exp.Column, scope: Scope) -> None:
        """Resolve ``col`` from ``scope`` outwards; record it on a scan or derived source."""
        if id(col) in self._resolved:
            return
        name, qual = lower(col.name), lower(col.table)
        s: Scope | None = scope
        while s is not None:
            sources = list(s.sources.values())
            if qual:
                src = next((x for x in sources if x.alias == qual), None)
                if src is None:
                    s = s.parent
                    continue
                self._bind(col, src, name)
                return
            if not self._lookup_here(col, name, s, sources):
                return
            s = s.parent
        if not qual and scope.sources and all(x.kind == "scan" for x in scope.sources.values()):
            raise WorkloadParseError(f"unknown column {col.name!r} of table {self.table!r}"
                                     f"{self._known()}")

    def _lookup_here(self, col: exp.Column, name: str, s: Scope, sources: list[Source]) -> bool:
        """Try an unqualified ``name`` in scope ``s``; True to go on to the enclosing scope."""
        scans = [x for x in sources if x.kind == "scan" and name in self.names]
        derived = [x for x in sources if x.kind == "derived" and x.outputs is not None
                   and name in x.outputs]
        unknown = [x for x in sources if x.kind == "other"
                   or (x.kind == "derived" and x.outputs is None)]
        if len(scans) + len(derived) == 1:
            self._bind(col, (scans + derived)[0], name)
            return False
        if scans or derived:
            return False  # ambiguous
        if len(unknown) == 1 and unknown[0].kind == "derived":
            self._bind(col, unknown[0], name)  # through a derived table's star
            return False
        if unknown:
            for x in unknown:
                if x.kind == "derived":
                    demand(x, name)
            if name not in self.names:
                return False  # belongs to a table whose schema we do not know
            # a name of the table's schema: may be an outer reference to a scan of it
            # (``exists (select * from lineitem where l_orderkey = o_orderkey)`` for orders)
        return name not in s.aliases

    def _bind(self, col: exp.Column, src: Source, name: str) -> None:
        if src.kind == "scan":
            if name not in self.names:
                raise WorkloadParseError(
                    f"unknown column {col.sql()!r} of table {self.table!r}{self._known()}")
            real = self.names[name]
            src.scan.columns.setdefault(real)
            self._resolved[id(col)] = (src, real, col)
        else:
            demand(src, name)
            self._resolved[id(col)] = (src, name, col)

    def _known(self) -> str:
        names = self.schema.names
        more = f", ... ({len(names)} in all)" if len(names) > 8 else ""
        return f"; columns are: {', '.join(names[:8])}{more}"
