"""Query-log import: read a ``.sql`` or JSON Lines log, extract scan fragments, persist them.

Two log formats:

* ``.sql`` (any other suffix whose first character is not ``{``): statements separated by
  ``;`` -- quotes, quoted identifiers and comments respected. A comment ``-- ts: <ISO>``
  (also ``-- id: ...``, ``-- user: ...``) before or inside a statement attaches to it.
* ``.jsonl`` / ``.ndjson`` / ``.json``: one object per line,
  ``{"ts", "sql", optional "id", "duration_ms", "bytes_scanned", "user"}``; a given ``id``
  becomes the query id. ``ts`` is ISO-8601 or epoch seconds (milliseconds above 1e11).

Either may be gzip-compressed (``.gz``). Query ids default to ``<file stem>:<line>``.

As with sqlglot's ``ErrorLevel``, the default is lenient: an unparseable statement, an
unknown column or a bad JSON line is skipped and reported with its line number, and the
rest of a 100,000-query log still imports. ``strict=True`` raises
:class:`WorkloadParseError` (file, line, column) on the first such statement instead.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from engine.core.errors import DataFileError, InvalidParameterError, WorkloadParseError
from engine.table.store import TableStore
from engine.workload.model import ScanFragment
from engine.workload.sql.extract import extract_fragments
from engine.workload.store import WorkloadStore

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_MEMO_SIZE = 10_000
_META = re.compile(r"^\s*(ts|id|user)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_BACKSLASH_DIALECTS = {"mysql", "spark", "spark2", "hive", "databricks", "bigquery", "doris",
                       "starrocks", "clickhouse"}


@dataclass
class LogEntry:
    """One statement of a log: its text and where it starts (1-based line and column)."""

    line: int
    sql: str | None
    ts: str | None = None
    id: str | None = None
    duration_ms: float | None = None
    bytes_scanned: int | None = None
    user: str | None = None
    column: int = 1
    error: str | None = None  # set when the entry itself is malformed (bad JSON line)


@dataclass
class ImportReport:
    table: str
    file: str
    statements: int
    fragments: int
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    ignored: int = 0  # statements that do not scan the table

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["skipped"] = [{"line": line, "reason": reason} for line, reason in self.skipped]
        return data


# --- timestamps ----------------------------------------------------------------------------

def normalize_ts(value: Any) -> str | None:
    """ISO-8601 (naive UTC) from an ISO string or epoch seconds/milliseconds; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"invalid ts {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000.0 if abs(value) > 1e11 else float(value)
        try:
            moment = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):  # NaN, inf, beyond year 9999
            raise ValueError(f"invalid ts {value!r}: epoch timestamp out of range "
                             "(years 1..9999)") from None
        return moment.isoformat()
    if isinstance(value, str):
        text = value.strip()
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"invalid ts {value!r} (expected ISO-8601)") from None
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return moment.isoformat()
    raise ValueError(f"invalid ts {value!r}")


# --- reading --------------------------------------------------------------------------------

def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataFileError(f"{path}: is a directory, expected a .sql or .jsonl file") from None
    if path.suffix == ".gz" or raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFileError(f"{path}: corrupt gzip file ({exc})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _is_jsonl(path: Path, text: str) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(JSONL_SUFFIXES):
        return True
    if name.endswith(".sql"):
        return False
    return text.lstrip().startswith("{")


def split_sql(text: str, backslash_escapes: bool = False) -> Iterator[LogEntry]:
    """Statements of a SQL script, each with its start line/column and ``-- ts:`` metadata."""
    i, n = 0, len(text)
    line, col = 1, 1
    start = None  # (index, line, col) of the current statement's first significant char
    meta: dict[str, str] = {}

    def advance(k: int) -> None:
        nonlocal i, line, col
        for ch in text[i:i + k]:
            if ch == "\n":
                line, col = line + 1, 1
            else:
                col += 1
        i += k

    def finish(end: int) -> LogEntry | None:
        nonlocal start, meta
        entry = None
        if start is not None:
            sql = text[start[0]:end].rstrip()
            entry = LogEntry(line=start[1], column=start[2], sql=sql, ts=meta.get("ts"),
                             id=meta.get("id"), user=meta.get("user"))
        start, meta = None, {}
        return entry

    while i < n:
        ch = text[i]
        if ch == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            m = _META.match(text[i + 2:end])
            if m:
                meta[m.group(1).lower()] = m.group(2)
            advance(end - i)
            continue
        if ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            advance((n if end < 0 else end + 2) - i)
            continue
        if ch.isspace():
            advance(1)
            continue
        if ch == ";":
            entry = finish(i)
            advance(1)
            if entry is not None:
                yield entry
            continue
        if start is None:
            start = (i, line, col)
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if backslash_escapes and ch != "`" and text[j] == "\\":
                    j += 2
                    continue
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            advance(min(j + 1, n) - i)
            continue
        if ch == "$":
            m = re.match(r"\$([A-Za-z_]\w*)?\$", text[i:])
            if m:
                end = text.find(m.group(0), i + len(m.group(0)))
                advance((n if end < 0 else end + len(m.group(0))) - i)
                continue
        advance(1)
    entry = finish(n)
    if entry is not None:
        yield entry


def _measure(data: dict, key: str, kind: type) -> Any:
    """A finite, non-negative number field of a JSON log line (None when absent); NaN,
    infinities (JSON's ``Infinity``), negatives and non-numbers are refused by name.

    Example:
    >>> _measure({"bytes_scanned": 10}, "bytes_scanned", int)
    10
    >>> _measure({"bytes_scanned": float("inf")}, "bytes_scanned", int)
    Traceback (most recent call last):
    ...
    ValueError: invalid bytes_scanned inf: a finite number of at least 0 is required
    """
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"invalid {key} {value!r}: a finite number of at least 0 is required")
    return kind(value)


def _jsonl_entries(text: str) -> Iterator[LogEntry]:
    for lineno, raw in enumerate(io.StringIO(text), 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield LogEntry(line=lineno, sql=None, column=exc.colno, error=f"invalid JSON: {exc.msg}")
            continue
        if not isinstance(data, dict):
            yield LogEntry(line=lineno, sql=None, error="expected a JSON object with a 'sql' field")
            continue
        sql = data.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            yield LogEntry(line=lineno, sql=None, error="missing or empty 'sql' field")
            continue
        try:
            ts = normalize_ts(data.get("ts"))
            duration = _measure(data, "duration_ms", float)
            scanned = _measure(data, "bytes_scanned", int)
        except (TypeError, ValueError) as exc:
            yield LogEntry(line=lineno, sql=None, error=str(exc))
            continue
        qid = data.get("id")
        user = data.get("user")
        yield LogEntry(line=lineno, sql=sql, ts=ts, id=None if qid is None else str(qid),
                       duration_ms=duration, bytes_scanned=scanned,
                       user=None if user is None else str(user))


def _sql_entries(text: str, dialect: str | None) -> Iterator[LogEntry]:
    for entry in split_sql(text, backslash_escapes=_lower(dialect) in _BACKSLASH_DIALECTS):
        if entry.ts is not None:
            try:
                entry.ts = normalize_ts(entry.ts)
            except ValueError as exc:
                entry.error = str(exc)
        yield entry


def _load(path: str, dialect: str | None) -> tuple[Iterator[LogEntry], bool]:
    """(entries, is_sql_file): the file is read once, up front (missing file fails here)."""
    p = Path(path)
    text = _open_text(p)
    if _is_jsonl(p, text):
        return _jsonl_entries(text), False
    return _sql_entries(text, dialect), True


def read_log(path: str, dialect: str | None = None) -> Iterator[LogEntry]:
    """Entries of a ``.sql`` or JSON Lines log (malformed entries carry ``error``)."""
    yield from _load(path, dialect)[0]


def _lower(text: str | None) -> str:
    return (text or "").lower()


# --- import ---------------------------------------------------------------------------------

def _position(entry: LogEntry, exc: WorkloadParseError, sql_file: bool) -> tuple[int, int | None]:
    """Absolute (line, column) in the log of an error at (exc.line, exc.column) in a statement."""
    if not sql_file or not exc.line:
        return entry.line, None
    line = entry.line + exc.line - 1
    column = exc.column
    if column is not None and exc.line == 1:
        column = entry.column + column - 1
    return line, column


def extract_entries(entries: Iterator[LogEntry], table: str, schema: Any, file: str,
                    dialect: str | None = None, strict: bool = False,
                    sql_file: bool = True) -> tuple[list[ScanFragment], ImportReport]:
    """Fragments of every entry plus the report (no IO: used by import and by tests)."""
    stem = Path(file).name.split(".")[0] or "q"
    report = ImportReport(table=table, file=str(file), statements=0, fragments=0)
    out: list[ScanFragment] = []
    seen: dict[str, list[ScanFragment]] = {}  # repeated query texts are analysed once
    for entry in entries:
        report.statements += 1
        if entry.error is not None:
            if strict:
                raise WorkloadParseError(entry.error, file, entry.line,
                                         entry.column if entry.column != 1 else None)
            report.skipped.append((entry.line, entry.error))
            continue
        qid = entry.id or f"{stem}:{entry.line}"
        try:
            template = seen.get(entry.sql or "")
            if template is None:
                template = extract_fragments(entry.sql or "", table, schema, "", dialect)
                if len(seen) < _MEMO_SIZE:
                    seen[entry.sql or ""] = template
            frags = [dataclasses.replace(f, query_id=qid, ts=entry.ts) for f in template]
        except WorkloadParseError as exc:
            reason = exc.args[0] if exc.args else "cannot parse"
            line, column = _position(entry, exc, sql_file)
            if strict:
                raise WorkloadParseError(reason, file, line, column) from None
            report.skipped.append((line, reason))
            continue
        if not frags:
            report.ignored += 1
        extras = {k: v for k, v in (("duration_ms", entry.duration_ms),
                                     ("bytes_scanned", entry.bytes_scanned),
                                     ("user", entry.user)) if v is not None}
        out.extend(dataclasses.replace(f, **extras) if extras else f for f in frags)
    report.fragments = len(out)
    if report.statements == 0:
        raise WorkloadParseError("no SQL statements found: the file is empty", file)
    return out, report


def import_log(tables: TableStore, workloads: WorkloadStore, table: str, path: str,
               dialect: str | None = None, strict: bool = False, replace: bool = False,
               append: bool = False) -> ImportReport:
    """Import a query log into the table's workload (added to it, or replacing it).

    A log whose query ids are already in the workload (the same file imported twice: ids
    default to ``<file stem>:<line>``) is refused unless ``append`` (import them again) or
    ``replace`` says what to do: a doubled workload silently doubles every saving.
    ``tables`` gives the table's current schema, ``workloads`` receives the fragments.
    """
    schema = tables.current_snapshot(table).schema
    entries, sql_file = _load(path, dialect)
    fragments, report = extract_entries(entries, table, schema, str(path), dialect=dialect,
                                        strict=strict, sql_file=sql_file)
    store = workloads
    if not replace and not append:
        known = {f.query_id for f in store.fragments(table)}
        again = sorted({f.query_id for f in fragments} & known)
        if again:
            raise InvalidParameterError(
                f"{path}: {len(again)} of its queries are already imported into {table} "
                f"(e.g. {again[0]}); add --append to import them again or --replace to "
                "replace the workload")
    if replace:
        store.replace(table, fragments, schema)
    elif fragments:
        store.append(table, fragments, schema)
    return report
