"""Streaming query-log reading: statements of a ``.sql`` or JSON Lines log in bounded memory.

A log is read in chunks of :data:`CHUNK_BYTES` (decompressed on the fly when gzip), never
whole, so the memory a read holds is bounded by the limits below and not by the log's size:

* a JSON Lines log is cut into lines as bytes; a line longer than ``max_line_bytes`` is
  dropped while it is read (its bytes are never held) and becomes one entry whose
  ``error`` says so; runs of blank lines are skipped at C speed (a gzip bomb of blanks costs
  its decompression and nothing else);
* a ``.sql`` log goes through :class:`SqlSplitter`, a resumable scanner over the decoded
  text: it keeps only the current statement, so a statement longer than
  ``max_statement_chars`` is scanned to its end without being held and becomes one entry
  whose ``error`` says so. JSON Lines statements have the same limit.

The scanner is linear in the log's size: every construct (quotes, quoted identifiers,
comments, PostgreSQL dollar-quoted strings ``$$...$$`` / ``$tag$...$tag$``) is matched with
compiled patterns at a position in the buffer, never on a copy of the rest of the text, and
an unfinished construct resumes where the previous chunk ended. ``$1``-style placeholders
are ordinary text. As in PostgreSQL's lexer, a ``$`` right after an identifier character
does not open a dollar quote (identifiers may contain ``$``), and a tag is at most
:data:`MAX_DOLLAR_TAG` characters.
"""

from __future__ import annotations

import codecs
import datetime as dt
import gzip
import json
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

from engine.core.errors import DataFileError

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
#: bytes read (after decompression) at a time
CHUNK_BYTES = 1 << 20
#: longest dollar-quote tag recognised (PostgreSQL identifiers are at most 63 bytes)
MAX_DOLLAR_TAG = 63
#: a ``--`` comment longer than this many characters carries no ``ts:``/``id:``/``user:``
META_COMMENT_CHARS = 1024
MAX_LINE_BYTES_DEFAULT = 8 * 1024 * 1024
MAX_STATEMENT_CHARS_DEFAULT = 1024 * 1024
BACKSLASH_DIALECTS = {"mysql", "spark", "spark2", "hive", "databricks", "bigquery", "doris",
                      "starrocks", "clickhouse"}

_META = re.compile(r"\s*(ts|id|user)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_BLANK_BYTES = re.compile(rb"[ \t\r\n\f\v]*")
_SPACE = re.compile(r"\s+")
#: text in a statement that cannot start or end anything: all but ; quotes -- /* and a
#: ``$`` that may open a dollar quote (placeholders ``$1`` and ``a$b`` are plain text)
_PLAIN = re.compile(r"(?:[^;'\"`$/\-]+|-(?!-)|/+(?!\*)|\$(?![A-Za-z_$])|(?<=[\w$])[\w$]+)+")
_PLAIN_SPAN = 1 << 16
#: what follows a ``;`` before the next statement can start: more ``;`` and blanks
_EMPTY_STATEMENTS = re.compile(r"[;\s]*")
_DOLLAR = re.compile(r"\$(?:[A-Za-z_]\w{0,%d})?\$" % (MAX_DOLLAR_TAG - 1))
_DOLLAR_PREFIX = re.compile(r"\$(?:[A-Za-z_]\w{0,%d})?\Z" % (MAX_DOLLAR_TAG - 1))
_IDENT_CHAR = re.compile(r"[\w$]")


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """What one log entry may hold: ``max_line_bytes`` per line of a JSON Lines log,
    ``max_statement_chars`` per statement (both formats). Longer ones are skipped with a
    counted reason (settings ``workload_max_line_bytes``, ``workload_max_statement_chars``)."""

    max_line_bytes: int = MAX_LINE_BYTES_DEFAULT
    max_statement_chars: int = MAX_STATEMENT_CHARS_DEFAULT

    def line_reason(self) -> str:
        return (f"line longer than {self.max_line_bytes} bytes "
                "(setting workload_max_line_bytes)")

    def statement_reason(self) -> str:
        return (f"statement longer than {self.max_statement_chars} characters "
                "(setting workload_max_statement_chars)")


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


# --- timestamps and measures -----------------------------------------------------------------

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


# --- files -----------------------------------------------------------------------------------

def open_binary(path: Path) -> IO[bytes]:
    """The log's bytes as a stream, decompressed when it is gzip (by suffix or magic bytes)."""
    try:
        fh: IO[bytes] = open(path, "rb")
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataFileError(f"{path}: is a directory, expected a .sql or .jsonl file") from None
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if path.suffix == ".gz" or fh.peek(2)[:2] == b"\x1f\x8b":  # type: ignore[attr-defined]
        return gzip.GzipFile(fileobj=fh, mode="rb")
    return fh


def read_chunks(fh: IO[bytes], path: Path) -> Iterator[bytes]:
    """:data:`CHUNK_BYTES` at a time until the end; a corrupt gzip stream is a
    :class:`DataFileError` naming the file."""
    with fh:
        while True:
            try:
                chunk = fh.read(CHUNK_BYTES)
            except (OSError, EOFError, zlib.error) as exc:
                raise DataFileError(f"{path}: corrupt gzip file ({exc})") from None
            if not chunk:
                return
            yield chunk


def is_jsonl(path: Path) -> bool:
    """JSON Lines by name (``.jsonl``, ``.ndjson``, ``.json``, also gzipped); ``.sql`` is
    SQL; any other name is JSON Lines when its first non-blank character is ``{`` (found
    without holding more than one chunk)."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(JSONL_SUFFIXES):
        return True
    if name.endswith(".sql"):
        return False
    for chunk in read_chunks(open_binary(path), path):
        text = chunk.lstrip(b" \t\r\n\f\v")
        if text.startswith(codecs.BOM_UTF8):
            text = text[len(codecs.BOM_UTF8):].lstrip(b" \t\r\n\f\v")
        if text:
            return text.startswith(b"{")
    return False


# --- JSON Lines ------------------------------------------------------------------------------

def byte_lines(chunks: Iterator[bytes], max_line_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, bytes without the line end)`` of every non-blank line, or
    ``(line number, None)`` for a line longer than ``max_line_bytes`` (whose bytes are
    dropped as they arrive: at most one chunk plus one line is ever held).

    Example:
    >>> list(byte_lines(iter([b"a\\n\\n   \\nbc", b"d\\n" + b"x" * 9 + b"\\ne"]), 5))
    [(1, b'a'), (4, b'bcd'), (5, None), (6, b'e')]
    """
    lineno, buf, pos = 1, b"", 0
    skipping = False  # inside a line already reported as too long
    for chunk in chunks:
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            skipping, lineno, chunk = False, lineno + 1, chunk[nl + 1:]
        buf, pos = buf[pos:] + chunk, 0
        while True:
            blank_end = _BLANK_BYTES.match(buf, pos).end()  # type: ignore[union-attr]
            last = buf.rfind(b"\n", pos, blank_end)
            if last >= 0:  # whole blank lines: count them, skip them
                lineno += buf.count(b"\n", pos, last + 1)
                pos = last + 1
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            yield lineno, (None if nl - pos > max_line_bytes else buf[pos:nl])
            lineno, pos = lineno + 1, nl + 1
        if len(buf) - pos > max_line_bytes:
            yield lineno, None
            skipping, buf, pos = True, b"", 0
    if not skipping and buf[pos:].strip():
        yield lineno, buf[pos:]


def jsonl_entries(path: Path, limits: ReadLimits) -> Iterator[LogEntry]:
    """Entries of a JSON Lines log, one per non-blank line (malformed ones carry ``error``)."""
    for lineno, raw in byte_lines(read_chunks(open_binary(path), path), limits.max_line_bytes):
        if raw is None:
            yield LogEntry(line=lineno, sql=None, error=limits.line_reason())
            continue
        if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
            if not raw.strip():
                continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFileError(f"{path}:{lineno}: not UTF-8 text (byte {exc.start + 1} of "
                                "the line)") from None
        yield _json_entry(lineno, text, limits)


def _json_entry(lineno: int, text: str, limits: ReadLimits) -> LogEntry:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return LogEntry(line=lineno, sql=None, column=exc.colno, error=f"invalid JSON: {exc.msg}")
    except RecursionError:
        return LogEntry(line=lineno, sql=None, error="invalid JSON: nested too deeply")
    if not isinstance(data, dict):
        return LogEntry(line=lineno, sql=None, error="expected a JSON object with a 'sql' field")
    sql = data.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        return LogEntry(line=lineno, sql=None, error="missing or empty 'sql' field")
    if len(sql) > limits.max_statement_chars:
        return LogEntry(line=lineno, sql=None, error=limits.statement_reason())
    try:
        ts = normalize_ts(data.get("ts"))
        duration = _measure(data, "duration_ms", float)
        scanned = _measure(data, "bytes_scanned", int)
    except (TypeError, ValueError) as exc:
        return LogEntry(line=lineno, sql=None, error=str(exc))
    qid = data.get("id")
    user = data.get("user")
    return LogEntry(line=lineno, sql=sql, ts=ts, id=None if qid is None else str(qid),
                    duration_ms=duration, bytes_scanned=scanned,
                    user=None if user is None else str(user))


# --- SQL scripts -----------------------------------------------------------------------------

_CODE, _LINE_COMMENT, _BLOCK_COMMENT, _QUOTE, _DOLLAR_BODY = range(5)


class SqlSplitter:
    """Resumable ``;`` splitter of a SQL script fed in pieces (:meth:`feed`, then
    :meth:`close`): yields each statement with its start line/column and ``-- ts:``
    metadata. Holds the current statement (up to ``max_statement_chars``) and the piece
    being scanned, nothing else; a longer statement is scanned to its end and yielded as an
    entry with ``error``."""

    def __init__(self, backslash_escapes: bool = False,
                 max_statement_chars: int = MAX_STATEMENT_CHARS_DEFAULT) -> None:
        self.backslash = backslash_escapes
        self.limits = ReadLimits(max_statement_chars=max_statement_chars)
        self.buf, self.base, self.pos = "", 0, 0  # buf[0] is character `base` of the script
        self.mode, self.closer = _CODE, ""  # the quote char or dollar tag that ends the mode
        self.line, self.line_start, self.counted = 1, 0, 0  # line of `counted`, its start
        self.start: tuple[int, int, int] | None = None  # (index, line, column) of the statement
        self.overlong = False
        self.comment: int | None = None  # where a possible ``-- ts:`` comment starts
        self.meta: dict[str, str] = {}

    # positions -------------------------------------------------------------------------
    def _count_to(self, i: int) -> None:
        """Count the line ends up to buffer index ``i`` (each character once)."""
        c = self.counted - self.base
        n = self.buf.count("\n", c, i)
        if n:
            self.line += n
            self.line_start = self.base + self.buf.rfind("\n", c, i) + 1
        self.counted = self.base + i

    def _finish(self, end: int) -> LogEntry | None:
        entry = None
        if self.start is not None:
            index, line, column = self.start
            if self.overlong or self.base + end - index > self.limits.max_statement_chars:
                entry = LogEntry(line=line, column=column, sql=None,
                                 error=self.limits.statement_reason())
            else:
                sql = self.buf[index - self.base:end].rstrip()
                entry = LogEntry(line=line, column=column, sql=sql)
            entry.ts, entry.id, entry.user = (self.meta.get(k) for k in ("ts", "id", "user"))
        self.start, self.overlong, self.meta = None, False, {}
        return entry

    # scanning --------------------------------------------------------------------------
    def feed(self, text: str, final: bool = False) -> Iterator[LogEntry]:
        """Statements completed by ``text`` (all the rest when ``final``)."""
        self.buf += text
        buf, n = self.buf, len(self.buf)
        pos = self.pos
        while pos < n:
            mode = self.mode
            if mode == _CODE:
                ch = buf[pos]
                if ch.isspace():
                    pos = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]
                    continue
                if ch in "-/" and pos + 1 == n and not final:
                    break  # `--` or `/*` may start in the next piece
                if ch == "-" and buf.startswith("--", pos):
                    self.mode, self.comment, pos = _LINE_COMMENT, pos + self.base, pos + 2
                    continue
                if ch == "/" and buf.startswith("/*", pos):
                    self.mode, pos = _BLOCK_COMMENT, pos + 2
                    continue
                if ch == ";":
                    self.pos = pos
                    entry = self._finish(pos)
                    if entry is not None:
                        yield entry
                    pos = _EMPTY_STATEMENTS.match(buf, pos + 1).end()  # type: ignore[union-attr]
                    continue
                if self.start is None:
                    self._count_to(pos)
                    self.start = (self.base + pos, self.line, self.base + pos - self.line_start + 1)
                if ch in "'\"`":
                    self.mode, self.closer, pos = _QUOTE, ch, pos + 1
                    continue
                if ch == "$" and not (pos > 0 and _IDENT_CHAR.match(buf, pos - 1)):
                    m = _DOLLAR.match(buf, pos)
                    if m:
                        self.mode, self.closer, pos = _DOLLAR_BODY, m.group(0), m.end()
                        continue
                    if not final and n - pos <= MAX_DOLLAR_TAG + 1 \
                            and _DOLLAR_PREFIX.match(buf, pos):
                        break  # the tag may end in the next piece
                # plain text, at most PLAIN_SPAN at a time (bounds the regex engine's stack)
                limit = min(n, pos + _PLAIN_SPAN)
                m = _PLAIN.match(buf, pos, limit)
                if m is None:
                    pos += 1
                    continue
                end = m.end()
                if end == limit and buf[end - 1] in "-/$":
                    if end - 1 > pos:
                        pos = end - 1  # look at it again with what follows it
                        continue
                    if limit == n and not final:
                        break  # `--`, `/*` or a dollar quote may start in the next piece
                pos = end
            elif mode == _LINE_COMMENT:
                end = buf.find("\n", pos)
                if end < 0 and not final:
                    pos = n
                    if self.comment is not None and n - (self.comment - self.base) > META_COMMENT_CHARS:
                        self.comment = None
                    break
                end = n if end < 0 else end
                if self.comment is not None:
                    m = _META.match(buf, self.comment - self.base + 2, end)
                    if m and end - (self.comment - self.base) <= META_COMMENT_CHARS:
                        self.meta[m.group(1).lower()] = m.group(2)
                self.mode, self.comment, pos = _CODE, None, end
            elif mode == _BLOCK_COMMENT:
                end = buf.find("*/", pos)
                if end < 0:
                    pos = n if final else max(pos, n - 1)
                    break
                self.mode, pos = _CODE, end + 2
            elif mode == _QUOTE:
                pos = self._quote(buf, pos, n, final)
                if self.mode == _QUOTE:
                    break
            else:  # _DOLLAR_BODY
                end = buf.find(self.closer, pos)
                if end < 0:
                    pos = n if final else max(pos, n - len(self.closer) + 1)
                    break
                self.mode, pos = _CODE, end + len(self.closer)
        self.pos = pos
        if final:
            entry = self._finish(n)
            if entry is not None:
                yield entry
            return
        self._trim()

    def _quote(self, buf: str, pos: int, n: int, final: bool) -> int:
        """Scan a quoted string or identifier from ``pos``; the position after its closing
        quote (mode back to code), or where to resume when it goes on in the next piece."""
        q = self.closer
        while True:
            j = buf.find(q, pos)
            if self.backslash and q != "`":
                k = buf.find("\\", pos, n if j < 0 else j)
                if k >= 0:  # a run of r backslashes: pairs, then one escaping what follows
                    r = _run(buf, k, n, "\\")
                    if k + r >= n and not final:
                        return k + r - r % 2
                    pos = k + r + r % 2
                    continue
            if j < 0:
                return n
            r = _run(buf, j, n, q)  # r quotes: doubled ones stay inside, an odd one closes
            if j + r >= n and not final:
                return j + r - r % 2  # the run may go on in the next piece
            if r % 2 == 0:
                pos = j + r
                continue
            self.mode = _CODE
            return j + r

    def _trim(self) -> None:
        """Drop what no later statement needs: text before the current statement (or the
        whole of an over-long one), keeping one character of look-behind."""
        keep = self.pos - 1 if self.pos > 0 else 0
        if self.start is not None and not self.overlong:
            if self.base + self.pos - self.start[0] > self.limits.max_statement_chars:
                self.overlong = True
            else:
                keep = min(keep, self.start[0] - self.base)
        if self.comment is not None:
            keep = min(keep, self.comment - self.base)
        if keep > 0:
            self._count_to(max(keep, self.counted - self.base))
            self.buf = self.buf[keep:]
            self.base += keep
            self.pos -= keep

    def close(self) -> Iterator[LogEntry]:
        """The statement still open at the end of the script, if any."""
        yield from self.feed("", final=True)


def _run(text: str, i: int, n: int, ch: str) -> int:
    """How many times ``ch`` repeats from ``text[i]`` (at least 1), counted at C speed up to
    :data:`_PLAIN_SPAN` characters at a time."""
    r = 0
    while True:
        end = min(n, i + r + _PLAIN_SPAN)
        piece = text[i + r:end]
        more = len(piece) - len(piece.lstrip(ch))
        r += more
        if more < len(piece) or end == n:
            return r


def split_sql(text: str, backslash_escapes: bool = False,
              max_statement_chars: int = MAX_STATEMENT_CHARS_DEFAULT) -> Iterator[LogEntry]:
    """Statements of a SQL script, each with its start line/column and ``-- ts:`` metadata.

    Example:
    >>> [(e.line, e.column, e.sql) for e in split_sql("select $1;\\n select $$a;b$$ from t")]
    [(1, 1, 'select $1'), (2, 2, 'select $$a;b$$ from t')]
    """
    splitter = SqlSplitter(backslash_escapes, max_statement_chars)
    yield from splitter.feed(text, final=True)


def sql_entries(path: Path, dialect: str | None, limits: ReadLimits) -> Iterator[LogEntry]:
    """Entries of a SQL script read in chunks (``-- ts:`` comments normalised)."""
    splitter = SqlSplitter((dialect or "").lower() in BACKSLASH_DIALECTS,
                           limits.max_statement_chars)
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    offset = 0  # bytes decoded before the current chunk
    chunks = read_chunks(open_binary(path), path)
    while True:
        chunk = next(chunks, None)
        try:
            text = decoder.decode(chunk or b"", final=chunk is None)
        except UnicodeDecodeError as exc:
            pending = len(decoder.getstate()[0]) if chunk is not None else 0
            raise DataFileError(f"{path}: not UTF-8 text (byte "
                                f"{max(offset - pending, 0) + exc.start})") from None
        for entry in splitter.feed(text, final=chunk is None):
            if entry.ts is not None and entry.error is None:
                try:
                    entry.ts = normalize_ts(entry.ts)
                except ValueError as exc:
                    entry.error = str(exc)
            yield entry
        if chunk is None:
            return
        offset += len(chunk)


def log_entries(path: Path, dialect: str | None = None,
                limits: ReadLimits | None = None) -> tuple[Iterator[LogEntry], bool]:
    """(entries, is_sql_file) of a log. The file is opened here, so a missing file or a
    directory fails at once; the entries are read as they are consumed."""
    limits = limits or ReadLimits()
    open_binary(path).close()
    if is_jsonl(path):
        return jsonl_entries(path, limits), False
    return sql_entries(path, dialect, limits), True
