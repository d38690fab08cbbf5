"""Query-log import: read a ``.sql`` or JSON Lines log, extract scan fragments, persist them.

Two log formats:

* ``.sql`` (any other suffix whose first character is not ``{``): statements separated by
  ``;`` -- quotes, quoted identifiers and comments respected. A comment ``-- ts: <ISO>``
  (also ``-- id: ...``, ``-- user: ...``) before or inside a statement attaches to it.
* ``.jsonl`` / ``.ndjson`` / ``.json``: one object per line,
  ``{"ts", "sql", optional "id", "duration_ms", "bytes_scanned", "user"}``; a given ``id``
  becomes the query id. ``ts`` is ISO-8601 or epoch seconds (milliseconds above 1e11).

Either may be gzip-compressed (``.gz``). Query ids default to ``<file stem>:<line>``.

The log is streamed (:mod:`engine.workload.logread`): a line or statement over the limits
(:class:`~engine.workload.logread.ReadLimits`, settings ``workload_max_line_bytes`` and
``workload_max_statement_chars``) is skipped with a counted reason, each distinct statement
text is analysed once (a memo bounded in entries and bytes), and fragments are written
to the workload file as they come (:meth:`WorkloadStore.writing`), so an import's memory does
not grow with the log.

As with sqlglot's ``ErrorLevel``, the default is lenient: an unparseable statement, an
unknown column or a bad JSON line is skipped and reported with its line number, and the
rest of a 100,000-query log still imports. ``strict=True`` raises
:class:`WorkloadParseError` (file, line, column) on the first such statement instead.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any, Iterator

from engine.core.errors import InvalidParameterError, WorkloadParseError
from engine.table.store import TableStore
from engine.workload.logread import (
    JSONL_SUFFIXES, LogEntry, ReadLimits, log_entries, normalize_ts, split_sql,
)
from engine.workload.model import ScanFragment
from engine.workload.sql.extract import extract_fragments
from engine.workload.store import WorkloadStore

__all__ = ["JSONL_SUFFIXES", "ImportReport", "LogEntry", "ReadLimits", "extract_entries",
           "import_log", "normalize_ts", "read_log", "split_sql"]

#: distinct statement texts whose analysis is kept (least recently used dropped first) ...
MEMO_ENTRIES = 50_000
#: ... and the bytes they may hold together, estimated as MEMO_ENTRY_BYTES plus three
#: copies of the text (the key, the fragments' ``sql``, their encoded rows): about 2 KB
#: per entry measured for 90-character statements
MEMO_BYTES = 128 * 1024 * 1024
MEMO_ENTRY_BYTES = 1536
#: skipped statements listed with their line in a report (all are counted)
MAX_SKIPPED_LISTED = 1000
#: distinct skip reasons counted one by one; the rest are counted under OTHER_REASONS
MAX_SKIP_REASONS = 50
OTHER_REASONS = "other reasons"


@dataclass
class ImportReport:
    """What an import did: statements read, fragments stored, statements skipped (every one
    counted in ``skipped_count`` and by reason in ``skip_reasons``; the first
    :data:`MAX_SKIPPED_LISTED` listed with their line) and statements not reading the table."""

    table: str
    file: str
    statements: int
    fragments: int
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    ignored: int = 0  # statements that do not scan the table
    skipped_count: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)  # reason -> statements

    def skip(self, line: int, reason: str) -> None:
        """Count one skipped statement (listed while the list is short)."""
        self.skipped_count += 1
        if len(self.skipped) < MAX_SKIPPED_LISTED:
            self.skipped.append((line, reason))
        if reason not in self.skip_reasons and len(self.skip_reasons) >= MAX_SKIP_REASONS:
            reason = OTHER_REASONS
        self.skip_reasons[reason] = self.skip_reasons.get(reason, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["skipped"] = [{"line": line, "reason": reason} for line, reason in self.skipped]
        return data


# --- reading --------------------------------------------------------------------------------

def read_log(path: str, dialect: str | None = None,
             limits: ReadLimits | None = None) -> Iterator[LogEntry]:
    """Entries of a ``.sql`` or JSON Lines log (malformed or over-long entries carry ``error``)."""
    yield from log_entries(Path(path), dialect, limits)[0]


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


@dataclass(slots=True)
class _Analysed:
    """One distinct statement text's fragments (query id "") or the error it raised, and its
    fragments' stored rows once they have been encoded."""

    fragments: list[ScanFragment]
    error: WorkloadParseError | None = None
    rows: list["_RowEncoder"] | None = None


class _Analyser:
    """Entry -> fragments, each distinct statement text analysed once: the memo keeps the
    most recently used texts up to :data:`MEMO_ENTRIES` and :data:`MEMO_BYTES`, so a log of
    repeated dashboard queries costs one parse per query shape and a log of distinct ones
    holds a bounded memo. Skipped entries are counted in ``report`` (or raised if strict)."""

    def __init__(self, table: str, schema: Any, file: str, dialect: str | None, strict: bool,
                 sql_file: bool, report: ImportReport, lookups: Any = None) -> None:
        self.table, self.schema, self.file, self.dialect = table, schema, file, dialect
        self.lookups = lookups  # engine.workload.lookup.DimensionLookups, or None
        self.strict, self.sql_file, self.report = strict, sql_file, report
        self.memo: OrderedDict[str, _Analysed] = OrderedDict()
        self.bytes = 0  # estimated, see MEMO_BYTES

    def analyse(self, entry: LogEntry) -> _Analysed | None:
        """The entry's analysis, or None when it is skipped (counted in the report)."""
        self.report.statements += 1
        if entry.error is not None:
            if self.strict:
                raise WorkloadParseError(entry.error, self.file, entry.line,
                                         entry.column if entry.column != 1 else None)
            self.report.skip(entry.line, entry.error)
            return None
        sql = entry.sql or ""
        got = self.memo.get(sql)
        if got is None:
            got = self._extract(sql)
            self.memo[sql] = got
            self.bytes += MEMO_ENTRY_BYTES + 3 * len(sql)
            while len(self.memo) > MEMO_ENTRIES or (self.bytes > MEMO_BYTES and len(self.memo) > 1):
                old, _ = self.memo.popitem(last=False)
                self.bytes -= MEMO_ENTRY_BYTES + 3 * len(old)
        else:
            self.memo.move_to_end(sql)
        if got.error is not None:
            exc = got.error
            reason = exc.args[0] if exc.args else "cannot parse"
            line, column = _position(entry, exc, self.sql_file)
            if self.strict:
                raise WorkloadParseError(reason, self.file, line, column) from None
            self.report.skip(line, reason)
            return None
        if not got.fragments:
            self.report.ignored += 1
        return got

    def _extract(self, sql: str) -> _Analysed:
        try:
            return _Analysed(extract_fragments(sql, self.table, self.schema, "", self.dialect,
                                               lookups=self.lookups))
        except WorkloadParseError as exc:
            # kept in the memo: without its traceback, which holds the parser's frames
            exc.__context__ = exc.__cause__ = None
            return _Analysed([], exc.with_traceback(None))


class _RowEncoder:
    """A template fragment's stored row as JSON text with slots for the fields that vary
    per query (:data:`_PER_QUERY`): :meth:`line` equals ``json.dumps`` of the row with
    those fields set, at the cost of encoding a few scalars (the boxes, columns and SQL
    text are encoded once per distinct statement)."""

    __slots__ = ("pieces", "tail", "defaults")

    def __init__(self, row: dict[str, Any]) -> None:
        self.pieces: list[tuple[str, str]] = []  # (JSON text before the value, key)
        self.defaults = {k: row[k] for k in _PER_QUERY if k in row}
        text = "{"
        for i, (key, value) in enumerate(row.items()):
            text += ("" if i == 0 else ", ") + json.dumps(key) + ": "
            if key in _PER_QUERY:
                self.pieces.append((text, key))
                text = ""
            else:
                text += json.dumps(value, default=str)
        self.tail = text + "}\n"

    def line(self, values: dict[str, Any]) -> str:
        """The row's JSON line with ``values`` (absent keys keep the template's value)."""
        out = []
        for before, key in self.pieces:
            value = values[key] if key in values else self.defaults[key]
            out.append(before)
            out.append("null" if value is None else encode_basestring_ascii(value)
                       if type(value) is str else json.dumps(value, default=str))
        out.append(self.tail)
        return "".join(out)


_PER_QUERY = frozenset({"query_id", "ts", "duration_ms", "bytes_scanned", "user"})


def _extras(entry: LogEntry) -> dict[str, Any]:
    return {k: v for k, v in (("duration_ms", entry.duration_ms),
                               ("bytes_scanned", entry.bytes_scanned),
                               ("user", entry.user)) if v is not None}


def _stem(file: str) -> str:
    return Path(file).name.split(".")[0] or "q"


def extract_entries(entries: Iterator[LogEntry], table: str, schema: Any, file: str,
                    dialect: str | None = None, strict: bool = False,
                    sql_file: bool = True, lookups: Any = None
                    ) -> tuple[list[ScanFragment], ImportReport]:
    """Fragments of every entry plus the report (no IO, all fragments in memory: for tests
    and small logs; :func:`import_log` streams)."""
    stem = _stem(file)
    report = ImportReport(table=table, file=str(file), statements=0, fragments=0)
    analyser = _Analyser(table, schema, str(file), dialect, strict, sql_file, report, lookups)
    out: list[ScanFragment] = []
    for entry in entries:
        got = analyser.analyse(entry)
        if got is None:
            continue
        qid = entry.id or f"{stem}:{entry.line}"
        extras = _extras(entry)
        out.extend(dataclasses.replace(f, query_id=qid, ts=entry.ts, **extras)
                   for f in got.fragments)
    report.fragments = len(out)
    if report.statements == 0:
        raise WorkloadParseError("no SQL statements found: the file is empty", file)
    return out, report


def import_log(tables: TableStore, workloads: WorkloadStore, table: str, path: str,
               dialect: str | None = None, strict: bool = False, replace: bool = False,
               append: bool = False, limits: ReadLimits | None = None,
               lookups: Any = None) -> ImportReport:
    """Import a query log into the table's workload (added to it, or replacing it).

    A log whose query ids are already in the workload (the same file imported twice: ids
    default to ``<file stem>:<line>``) is refused unless ``append`` (import them again) or
    ``replace`` says what to do: a doubled workload silently doubles every saving.
    ``tables`` gives the table's current schema, ``workloads`` receives the fragments,
    streamed into a new version of its file that is published only when the whole log
    imported (a strict error or a refusal leaves the workload as it was). ``limits`` bound
    a line and a statement (defaults of :class:`ReadLimits`). ``lookups``
    (:class:`engine.workload.lookup.DimensionLookups`) turns filters on registered dimension
    tables into ranges.
    """
    schema = tables.current_snapshot(table).schema
    entries, sql_file = log_entries(Path(path), dialect, limits)
    types = dict(schema.columns)
    stem = _stem(str(path))
    report = ImportReport(table=table, file=str(path), statements=0, fragments=0)
    analyser = _Analyser(table, schema, str(path), dialect, strict, sql_file, report, lookups)
    check = not replace and not append
    again, example = 0, None  # query ids already in the workload
    with workloads.writing(table, schema, keep=not replace, stored_ids=check) as writer:
        for entry in entries:
            got = analyser.analyse(entry)
            if got is None:
                continue
            if got.rows is None:
                got.rows = [_RowEncoder(f.to_json(types)) for f in got.fragments]
            qid = entry.id or f"{stem}:{entry.line}"
            if check and got.rows and qid in writer.stored_ids:
                again += 1
                example = qid if example is None else min(example, qid)
                continue
            values = {"query_id": qid, "ts": entry.ts, **_extras(entry)}
            for encoder in got.rows:
                writer.write_line(encoder.line(values))
                report.fragments += 1
        if report.statements == 0:
            raise WorkloadParseError("no SQL statements found: the file is empty", str(path))
        if again:
            raise InvalidParameterError(
                f"{path}: {again} of its queries are already imported into {table} "
                f"(e.g. {example}); add --append to import them again or --replace to "
                "replace the workload")
    return report
