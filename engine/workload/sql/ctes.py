"""CTE inlining: every reference to a non-recursive CTE becomes a subquery of its body.

Spark plans a CTE used twice as two scans, each with the predicates pushed into it from
its own use; inlining the body at each reference lets the scope walk
(:mod:`engine.workload.sql.walk`) see exactly that. A recursive CTE is left in place (its
body is walked for its own scans). ``WITH c(x, y) AS (...)`` keeps its column names as the
subquery's alias columns.

Example:
>>> import sqlglot
>>> inline_ctes(sqlglot.parse_one("with c as (select a from t where a > 1) select * from c x"), {}).sql()
'SELECT * FROM (SELECT a FROM t WHERE a > 1) AS x'
"""

from __future__ import annotations

from sqlglot import exp

from engine.workload.sql.nodes import lower

#: CTE name -> (inlined body, its alias columns)
CteEnv = dict[str, tuple[exp.Expression, list]]


def inline_ctes(node: exp.Expression, env: CteEnv) -> exp.Expression:
    """Replace references to non-recursive CTEs by aliased subqueries of their bodies."""
    env = _bind_ctes(node, env)
    if isinstance(node, exp.Table) and not node.args.get("db") and lower(node.name) in env \
            and isinstance(node.this, exp.Identifier):
        body, cols = env[lower(node.name)]
        alias = exp.TableAlias(this=exp.to_identifier(node.alias_or_name),
                               columns=[c.copy() for c in cols] or None)
        return exp.Subquery(this=body.copy(), alias=alias)
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            new = inline_ctes(value, env)
            if new is not value:
                node.set(key, new)
        elif isinstance(value, list):
            _inline_list(node, key, value, env)
    return node


def _bind_ctes(node: exp.Expression, env: CteEnv) -> CteEnv:
    """``env`` plus the non-recursive CTEs ``node`` defines (removed from ``node``)."""
    with_ = node.args.get("with_")
    if not isinstance(with_, exp.With) or with_.args.get("recursive"):
        return env
    env = dict(env)
    for cte in with_.expressions:
        body = inline_ctes(cte.this, env)
        cols = list(cte.args["alias"].columns) if cte.args.get("alias") else []
        env[lower(cte.alias)] = (body, cols)
    node.set("with_", None)
    return env


def _inline_list(node: exp.Expression, key: str, values: list, env: CteEnv) -> None:
    changed = False
    items = []
    for v in values:
        nv = inline_ctes(v, env) if isinstance(v, exp.Expression) else v
        changed |= nv is not v
        items.append(nv)
    if changed:
        node.set(key, items)
