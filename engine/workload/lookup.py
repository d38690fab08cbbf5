"""Dimension lookups: a filter on a registered dimension table, turned into key ranges.

A star query filters the dimension, not the fact table: ``ss_sold_date_sk = d_date_sk and
d_year = 2000``. Zonemaps on ``store_sales`` can prune only with a range on
``ss_sold_date_sk``, so the filter is evaluated on ``date_dim``'s own data and the keys
that satisfy it become ranges of the fact column (MTO, SIGMOD 2021, section 4: join-induced
predicates). The keys come back as *runs*: maximal sequences of matching keys with no
non-matching key of the dimension between them, in key order, each an inclusive
``[lo, hi]``; ``d_year = 2000`` is one run ``[2451545, 2451910]`` of ``d_date_sk`` (Julian
day numbers). Scattered keys give many runs: past ``max_ranges`` the runs are merged across
the smallest gaps (a gap counted in the dimension's distinct keys between two runs) until at
most ``max_ranges`` remain, and the source says so. Merging keeps every matching key inside a
range (the ranges only widen, never lose a row), and it spends the widening where it admits
the fewest non-matching keys: ``d_dom = 1`` over three years (36 one-day runs) gives sixteen
ranges that skip the fifteen widest gaps, not one range over the three years.

The data is read through a port, :class:`DimensionSource`, so this layer stays free of any
query engine: its DuckDB implementation is :class:`engine.spark.dimensions.DuckDimensionSource`,
and the workspace hands it in. The filter reaches the port as a :class:`DimensionPredicate`
built here from the query's AST by a whitelist: column names quoted, every constant (folded
first, :func:`engine.workload.folding.fold`) a named parameter, only comparisons, boolean
connectives, ``BETWEEN``, ``IN`` lists, ``LIKE``, ``IS NULL``, arithmetic, casts and a few
scalar functions; anything else makes that conjunct not evaluable (it is left out, which
widens the ranges, never narrows them).

Results are cached per (dimension, snapshot, key, predicate): a changed dimension table has
a new snapshot id, so its lookups are made again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, MutableMapping, Protocol, Sequence

from sqlglot import exp

from engine.table.model import TableSchema
from engine.workload.folding import NOT_CONSTANT, fold

#: the default cap on the ranges one lookup may give a fact column
MAX_RANGES_DEFAULT = 16

_T = exp.DataType.Type
_CONNECTIVES = (exp.And, exp.Or, exp.Not, exp.Paren)
_PREDICATES = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In, exp.Like,
               exp.ILike, exp.Is)
_SCALARS = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.Cast, exp.TryCast,
            exp.Substring, exp.Upper, exp.Lower, exp.Trim, exp.Length, exp.Abs, exp.Coalesce,
            exp.Year, exp.Month, exp.Day, exp.Extract, exp.Round, exp.Floor, exp.Ceil,
            exp.DPipe, exp.Concat)
_LEAVES = (exp.Null, exp.Boolean)
_WORD = re.compile(r"^[A-Za-z_]+$")


class DimensionLookupError(Exception):
    """A dimension's data could not answer a lookup (unreadable files, a type the filter
    cannot compare with): the join keeps no range and says why."""


@dataclass(frozen=True, slots=True)
class DimensionInfo:
    """A registered table that may serve as a dimension: its columns and current snapshot;
    ``version`` tells this snapshot from any other the name ever had (a table dropped and
    registered again may reuse snapshot ids): lookups are cached by it."""

    table: str
    schema: TableSchema
    snapshot: str
    version: str = ""


@dataclass(frozen=True, slots=True)
class DimensionPredicate:
    """A filter on one dimension, safe to run: ``sql`` is a boolean expression in DuckDB's
    dialect whose identifiers are quoted and whose constants are the named parameters
    ``$p1, $p2, ...`` given in ``params``; ``text`` is the filter as the query wrote it."""

    sql: str
    params: Mapping[str, Any]
    text: str


@dataclass(frozen=True, slots=True)
class KeyRuns:
    """The matching keys of a lookup as inclusive ranges ``(lo, hi)``, ascending; ``total``
    is how many runs there are in all (more than ``len(runs)`` when they were merged across
    the smallest gaps) and ``lo``/``hi`` the smallest and largest matching key (None when
    nothing matches)."""

    runs: tuple[tuple[Any, Any], ...]
    total: int
    lo: Any = None
    hi: Any = None


class DimensionSource(Protocol):
    """The port a dimension's data is read through (implemented over DuckDB in
    :mod:`engine.spark.dimensions`)."""

    def describe(self, table: str) -> DimensionInfo | None:
        """The registered table ``table`` (lower case), or None when none is registered."""

    def key_runs(self, info: DimensionInfo, key: str, predicate: DimensionPredicate,
                 limit: int) -> KeyRuns:
        """The runs of ``key`` values whose rows satisfy ``predicate``; past ``limit`` runs,
        merged across the smallest gaps (the number of the dimension's distinct keys strictly
        between two runs; of equal gaps the one at lower keys is merged first) until
        ``limit`` ranges remain. Raises :class:`DimensionLookupError` when the data cannot
        say."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """What one lookup gives a fact column: ``runs`` (empty: no key matches), the snapshot
    read, and ``note`` when the runs were merged to fewer ranges."""

    runs: tuple[tuple[Any, Any], ...]
    snapshot: str
    note: str | None = None


class DimensionLookups:
    """Lookups over a :class:`DimensionSource`, at most ``max_ranges`` ranges each, cached.

    ``cache`` (a dict the workspace keeps for its lifetime) is keyed by dimension and
    snapshot, so it never answers for data that changed; :meth:`info` is read once per
    instance (one import).
    """

    def __init__(self, source: DimensionSource, max_ranges: int = MAX_RANGES_DEFAULT,
                 cache: MutableMapping[tuple, Lookup] | None = None) -> None:
        self.source = source
        self.max_ranges = max(1, int(max_ranges))
        self.cache: MutableMapping[tuple, Lookup] = {} if cache is None else cache
        self._infos: dict[str, DimensionInfo | None] = {}

    def info(self, table: str) -> DimensionInfo | None:
        """The registered dimension ``table``, or None."""
        table = table.lower()
        if table not in self._infos:
            self._infos[table] = self.source.describe(table)
        return self._infos[table]

    def lookup(self, info: DimensionInfo, key: str, predicate: DimensionPredicate) -> Lookup:
        """The runs of ``info.table.key`` under ``predicate`` (raises DimensionLookupError)."""
        ckey = (info.table, info.snapshot, info.version, key, predicate.sql,
                tuple(sorted((k, repr(v)) for k, v in predicate.params.items())), self.max_ranges)
        hit = self.cache.get(ckey)
        if hit is not None:
            return hit
        found = self.source.key_runs(info, key, predicate, self.max_ranges)
        if found.total > len(found.runs):
            result = Lookup(tuple(found.runs), info.snapshot,
                            f"{found.total} key runs merged to {len(found.runs)} ranges across "
                            f"the smallest gaps (setting lookup_max_ranges: {self.max_ranges})")
        else:
            result = Lookup(tuple(found.runs), info.snapshot)
        self.cache[ckey] = result
        return result


def dimension_predicate(conjuncts: Sequence[exp.Expression], schema: TableSchema
                        ) -> tuple[DimensionPredicate | None, list[exp.Expression]]:
    """The evaluable part of ``conjuncts`` (each over ``schema``'s columns only) as one
    predicate, and the conjuncts left out. None when nothing is evaluable.

    Example:
    >>> import sqlglot
    >>> schema = TableSchema((("d_date_sk", "int"), ("d_year", "int"), ("d_moy", "int")))
    >>> pred, left = dimension_predicate([sqlglot.parse_one("d_year = 1999 + 1"),
    ...                                   sqlglot.parse_one("d_moy between 11 and 12")], schema)
    >>> pred.sql, dict(pred.params), pred.text
    ('"d_year" = $p1 AND "d_moy" BETWEEN $p2 AND $p3', {'p1': 2000, 'p2': 11, 'p3': 12}, \
'd_year = 1999 + 1 AND d_moy BETWEEN 11 AND 12')
    >>> dimension_predicate([sqlglot.parse_one("my_udf(d_year) = 1")], schema)[0] is None
    True
    """
    names = {n.lower(): n for n in schema.names}
    params: dict[str, Any] = {}
    parts, texts, left = [], [], []
    for conj in conjuncts:
        trial: dict[str, Any] = dict(params)
        rendered = _render(conj, names, trial)
        if rendered is None:
            left.append(conj)
            continue
        params = trial
        parts.append(rendered)
        texts.append(_plain(conj))
    if not parts:
        return None, left
    sql = exp.and_(*[exp.Paren(this=p) if isinstance(p, exp.Or) else p for p in parts])
    return DimensionPredicate(sql.sql("duckdb"), params, " AND ".join(texts)), left


def _plain(node: exp.Expression) -> str:
    """``node`` as text without table qualifiers (the dimension is named beside it)."""
    new = node.copy()
    for col in new.find_all(exp.Column):
        col.set("table", None)
    return new.sql()


def _render(node: exp.Expression, names: Mapping[str, str],
            params: dict[str, Any]) -> exp.Expression | None:
    """``node`` rebuilt from whitelisted parts, or None when any part is not allowed."""
    if isinstance(node, exp.Column):
        name = names.get((node.name or "").lower())
        return None if name is None or isinstance(node.this, exp.Star) else \
            exp.column(name, quoted=True)
    if node.find(exp.Column) is None and not isinstance(node, _LEAVES):
        if node.find(exp.Select, exp.Placeholder, exp.Parameter) is not None:
            return None
        value = fold(node)
        if value is NOT_CONSTANT:
            return None
        if value is None:
            return exp.Null()
        key = f"p{len(params) + 1}"
        params[key] = value
        return exp.Placeholder(this=key)
    if isinstance(node, _LEAVES):
        return node.copy()
    if isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")
                                     or node.args.get("field")):
        return None
    if not isinstance(node, _CONNECTIVES + _PREDICATES + _SCALARS):
        return None
    new = node.copy()
    for key, value in list(new.args.items()):
        if isinstance(value, exp.Expression):
            done = _render_arg(value, names, params)
            if done is None:
                return None
            new.set(key, done)
        elif isinstance(value, list):
            items = [_render_arg(v, names, params) if isinstance(v, exp.Expression) else v
                     for v in value]
            if any(i is None for i in items):
                return None
            new.set(key, items)
    return new


def _render_arg(node: exp.Expression, names: Mapping[str, str],
                params: dict[str, Any]) -> exp.Expression | None:
    if isinstance(node, exp.DataType):  # a cast's target: the generator spells the type
        return None if node.this == _T.USERDEFINED or node.find(exp.Column) else node.copy()
    if isinstance(node, exp.Var):  # EXTRACT's unit, a bare keyword
        return node.copy() if _WORD.match(node.name or "") else None
    return _render(node, names, params)
