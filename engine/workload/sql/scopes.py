"""Scopes: one per SELECT, with its FROM/JOIN sources and which ON clauses filter which.

A source is one of three kinds:

* ``scan``: the table being extracted (matched by name, whatever its catalog/database
  qualifier); it owns a :class:`Scan`, which becomes one scan fragment;
* ``derived``: a subquery in FROM or an inlined CTE, with its output names (renamed by the
  alias's column list) so that outer conjuncts can be pushed into it;
* ``other``: any other table (schema unknown), LATERAL, UNNEST, VALUES, table functions.

Join sides follow SQL's null-supplying rule: an ON conjunct filters the scan only where it
cannot turn a non-match into a NULL-padded row (:func:`join_targets`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from sqlglot import exp

from engine.workload.sql.nodes import (QUERY_TYPES, OnQuery, lower, nested_queries, output_names,
                                       unwrap)


@dataclass(eq=False)
class Scan:
    """One scan of the table being extracted: the conjuncts that filter it, the columns it reads."""

    alias: str
    conjuncts: list[exp.Expression] = field(default_factory=list)
    columns: dict[str, None] = field(default_factory=dict)  # real names, an ordered set
    star: bool = False


@dataclass(eq=False)
class Source:
    """A FROM/JOIN item of a scope."""

    alias: str  # lower case
    kind: str  # "scan" | "derived" | "other"
    scan: Scan | None = None
    query: exp.Expression | None = None  # derived: the inner query
    outputs: list[str] | None = None  # derived: output names, None when unknown (star)
    inner_names: list[str] | None = None  # derived: the inner query's own output names
    demand: set[str] | None = field(default_factory=set)  # None = every output
    passthrough: bool = False  # derived with a star and no column aliases: names unchanged
    name: str = ""  # other: the table's name (lower case), "" for anything but a plain table


@dataclass(eq=False)
class Scope:
    """One SELECT: its sources by alias, its projection aliases, and the enclosing scope."""

    select: exp.Select
    parent: "Scope | None"
    sources: dict[str, Source]
    aliases: set[str]


def from_items(select: exp.Select) -> list[tuple[exp.Expression, exp.Join | None]]:
    """The FROM item and each JOIN's item, with the join that brought it (None for FROM)."""
    from_ = select.args.get("from_")
    joins = select.args.get("joins") or []
    return ([(from_.this, None)] if from_ is not None else []) + [(j.this, j) for j in joins]


def make_source(node: exp.Expression, table: str, on_query: OnQuery) -> Source:
    """The :class:`Source` of one FROM item; a scan when it names ``table`` (lower case)."""
    alias = lower(node.alias_or_name) if isinstance(node, exp.Expression) else ""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        if lower(node.name) == table:
            return Source(alias, "scan", scan=Scan(alias))
        return Source(alias, "other", name=lower(node.name))
    if isinstance(node, exp.Subquery) and isinstance(unwrap(node.this), QUERY_TYPES):
        return _derived(node, alias)
    for query in nested_queries(node):  # LATERAL, UNNEST, VALUES, table functions
        on_query(query)
    return Source(alias or f"#{id(node)}", "other")


def _derived(node: exp.Subquery, alias: str) -> Source:
    inner = node.this
    inner_names = output_names(inner)
    alias_cols = node.args["alias"].columns if node.args.get("alias") else []
    outputs = [lower(c.name) for c in alias_cols] if alias_cols else inner_names
    if alias_cols and inner_names is not None and len(alias_cols) != len(inner_names):
        outputs = None
    return Source(alias, "derived", query=inner, outputs=outputs,
                  inner_names=inner_names if outputs is not None else None,
                  passthrough=outputs is None and not alias_cols)


def join_targets(join: exp.Join, sources: list[Source]) -> list[Source]:
    """The sources an ON clause filters; ``sources`` ends with the joined one.

    Inner (and comma) joins: every source so far. LEFT, SEMI, ANTI: the joined side only
    (the ON cannot drop a row of the preserved side). RIGHT: the sources before it. FULL:
    none (both sides are preserved).
    """
    side, kind = lower(join.side), lower(join.kind)
    if side == "full":
        return []
    if side == "left" or kind in ("semi", "anti"):
        return [sources[-1]]
    if side == "right":
        return sources[:-1]
    return list(sources)
