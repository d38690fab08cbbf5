"""Python values -> SQL literal text: the one renderer for every SQL the engine writes.

The inverse of what :mod:`engine.workload.folding` reads: a rendered literal folds back to
the same value, so a generated query log re-imports to the fragments it was written from
(:meth:`engine.scenarios.generator.Scenario.to_sql_log`), and the exact-utilization
cross-checks (DuckDB) see the same bounds as the zonemap evaluator. The text is portable
across sqlglot, Spark and DuckDB: ``DATE '...'``, ``TIMESTAMP '...'``, ``'...'`` with
quotes doubled, numbers as Python writes them (``repr`` keeps every digit of a float).

Example:
>>> import datetime as dt
>>> [sql_literal(v) for v in (dt.date(1994, 1, 1), dt.datetime(1994, 1, 1, 10, 30), "O'Neil", 24, 0.07, True)]
["DATE '1994-01-01'", "TIMESTAMP '1994-01-01 10:30:00'", "'O''Neil'", '24', '0.07', 'TRUE']

Identifiers (column names come from the table's files and the query logs: any text, a
quote, a newline or a whole statement) are always quoted, the quote character doubled
inside: :func:`sql_identifier` for DuckDB and standard SQL, :func:`spark_identifier` for
Spark SQL and ``functions.col``. No other spelling of a name may reach SQL text.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any


def sql_literal(value: Any) -> str:
    """``value`` as a SQL literal (strings, and anything unrecognised, as quoted text)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def sql_identifier(name: str) -> str:
    """``name`` as a double-quoted identifier (DuckDB, standard SQL), ``"`` doubled inside.

    Example:
    >>> print(sql_identifier('k") from t; select ("x'))
    "k"") from t; select (""x"
    """
    return '"' + str(name).replace('"', '""') + '"'


def spark_identifier(name: str) -> str:
    """``name`` as a back-quoted Spark identifier, the back quote doubled inside: one
    column whatever it holds (a dot is not a struct field, a back quote does not end it).

    Example:
    >>> print(spark_identifier("a.b`c"))
    `a.b``c`
    """
    return "`" + str(name).replace("`", "``") + "`"
