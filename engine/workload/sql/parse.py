"""SQL text -> sqlglot statements; syntax errors become :class:`WorkloadParseError`.

The error carries the line and column *within the statement text*; the importer
(:mod:`engine.workload.importer`) offsets them to the log file's position.

Example:
>>> [type(s).__name__ for s in parse_statements("select 1; delete from t")]
['Select', 'Delete']
>>> parse_statements("selec x")
Traceback (most recent call last):
...
engine.core.errors.WorkloadParseError: cannot parse SQL: not a statement (starts with 'selec')
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from engine.core.errors import InvalidParameterError, WorkloadParseError

# Statement classes; the names vary across the supported sqlglot versions (>= 25).
_STATEMENT_TYPES = tuple(getattr(exp, n) for n in (
    "Query", "DML", "DDL", "Command", "Set", "Use", "Describe", "Analyze", "Transaction",
    "Commit", "Rollback", "Show", "Cache", "Uncache", "Pragma", "Grant", "Revoke", "Drop",
    "Alter", "Kill", "Refresh", "LoadData", "Summarize", "TruncateTable", "Comment", "Declare",
    "Execute", "Export") if hasattr(exp, n))
_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")
_CLASS = re.compile(r"<class 'sqlglot\.[\w.]*\.(\w+)'>")


def parse_error(message: str, line: int | None = None, column: int | None = None) -> WorkloadParseError:
    """A :class:`WorkloadParseError` positioned within the statement text."""
    err = WorkloadParseError(message)
    err.line, err.column = line, column
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
        raise _syntax_error(exc) from None
    except ValueError as exc:  # unknown dialect name
        raise InvalidParameterError(f"unknown SQL dialect {dialect!r}: {exc}") from None
    except RecursionError:
        raise parse_error("cannot parse SQL: statement nested too deeply") from None
    finally:
        logger.setLevel(level)
    out = [p for p in parsed if p is not None]
    for stmt in out:
        if not isinstance(stmt, _STATEMENT_TYPES):
            word = sql.strip().split(None, 1)[0] if sql.strip() else ""
            raise parse_error(f"cannot parse SQL: not a statement (starts with {word[:30]!r})", 1, 1)
    return out


def _syntax_error(exc: ParseError | TokenError) -> WorkloadParseError:
    """sqlglot's first error as one readable line: tokens and classes shown by their text."""
    errors = (exc.errors if isinstance(exc, ParseError) else None) or [{}]
    first = errors[0]
    desc = first.get("description") or (str(exc).splitlines() or ["syntax error"])[0]
    desc = _TOKEN.sub(lambda m: "end of statement" if m.group(1) == "SENTINEL" else repr(m.group(2)),
                      desc)
    desc = _CLASS.sub(r"\1", desc)
    return parse_error(f"cannot parse SQL: {desc}", first.get("line"), first.get("col"))
