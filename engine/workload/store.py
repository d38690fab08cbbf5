"""Persistence of a table's scan fragments: ``<home>/workloads/<table>.jsonl``.

The file is JSON Lines: a header line ``{"format": ..., "version": 1, "table": ...,
"schema": [[name, type], ...]}`` followed by one :meth:`ScanFragment.to_json` object per
line, in import order. The header's schema lets readers decode typed bounds (dates,
decimals) without opening the table. Every change rewrites the file to a temporary name
and publishes it with ``os.replace`` under an exclusive lock, so a reader sees either the
old or the new workload, never half of one, and two imports never lose each other's
fragments.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator, Sequence

import numpy as np

from engine.core.errors import DataFileError
from engine.table.model import TableSchema
from engine.table.store import validate_name
from engine.workload.model import ScanFragment

FORMAT = "layout-advisor-workload"
VERSION = 1


def _ts_key(ts: str | None) -> tuple[int, dt.datetime]:
    """Sort key: fragments without a timestamp first, then by time (UTC)."""
    if not ts:
        return (0, dt.datetime.min)
    try:
        moment = dt.datetime.fromisoformat(ts)
    except ValueError:
        return (0, dt.datetime.min)
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return (1, moment)



def _records(path: Path) -> Iterator[tuple[str, dict, TableSchema | None]]:
    """The workload file's non-blank lines, parsed: ``(line, data, schema)``, ``schema``
    set only for the header line; a corrupt line is a DataFileError naming it."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFileError(f"{path}:{lineno}: corrupt workload file ({exc.msg})") from None
            header = lineno == 1 and data.get("format") == FORMAT
            yield line, data, TableSchema.from_json(data.get("schema", [])) if header else None


@dataclass(frozen=True)
class DistinctFragments:
    """A workload's distinct statements and how often each was logged.

    ``fragments[i]`` is statement ``i`` as its first query logged it (in the order of
    :meth:`WorkloadStore.fragments`), ``counts[i]`` how many queries logged it (int64, sums
    to the log's length) and ``of_query[j]`` the statement of the ``j``-th fragment of
    :meth:`WorkloadStore.fragments` (int64). Two queries log the same statement when their
    stored rows agree on everything but the query id and the timestamp (same SQL, ranges,
    sources). A busy log repeats a few thousand statements tens of thousands of times: what
    depends only on the statement (predicated columns, pruning, where its ranges come from)
    is computed over these rows and weighted or expanded by ``counts`` / ``of_query``.

    Example:
    >>> from engine.workload.model import Range
    >>> a = ScanFragment("q1", "t", ({"x": Range(1, 2)},), ("x",))
    >>> d = DistinctFragments.of([a, a.relogged("q2", None), ScanFragment("q3", "t", (), ())])
    >>> [f.query_id for f in d.fragments], d.counts.tolist(), d.of_query.tolist()
    (['q1', 'q3'], [2, 1], [0, 0, 1])
    """

    fragments: tuple[ScanFragment, ...]
    counts: np.ndarray
    of_query: np.ndarray

    @classmethod
    def of(cls, fragments: Sequence[ScanFragment]) -> "DistinctFragments":
        """The distinct statements of ``fragments`` (any sequence, e.g. a test's): equal
        when every field but ``query_id`` and ``ts`` is equal."""
        seen: dict[tuple, int] = {}
        of_query = np.empty(len(fragments), dtype=np.int64)
        for j, f in enumerate(fragments):
            key = (f.table, f.columns, tuple(tuple(b.items()) for b in f.boxes), f.sql,
                   f.duration_ms, f.bytes_scanned, f.user, f.sources)
            try:
                of_query[j] = seen.setdefault(key, len(seen))
            except TypeError:  # an unhashable bound: a statement of its own
                of_query[j] = seen.setdefault((j, id(f)), len(seen))
        return cls._from_codes(fragments, of_query)

    @classmethod
    def _from_codes(cls, fragments: Sequence[ScanFragment],
                    codes: np.ndarray) -> "DistinctFragments":
        """Statements numbered in order of first appearance in ``fragments``."""
        codes = np.asarray(codes, dtype=np.int64)
        if not len(codes):
            return cls((), np.zeros(0, dtype=np.int64), codes)
        _, first = np.unique(codes, return_index=True)
        first.sort()
        renumber = np.empty(int(codes.max()) + 1, dtype=np.int64)
        renumber[codes[first]] = np.arange(len(first))
        of_query = renumber[codes]
        return cls(tuple(fragments[i] for i in first),
                   np.bincount(of_query, minlength=len(first)).astype(np.int64), of_query)


#: a stored row written by :meth:`ScanFragment.to_json` starts with its id and timestamp;
#: the rest of the line is the statement (rows of one statement share it verbatim)
_HEAD = re.compile(r'\{"query_id": ("(?:[^"\\]|\\.)*"), "ts": ("(?:[^"\\]|\\.)*"|null), ')


def _json_string(token: str) -> str | None:
    """A JSON string (or ``null``) token as Python, without the parser when it has no escape."""
    if token == "null":
        return None
    return token[1:-1] if "\\" not in token else json.loads(token)


def _decode(path: Path, types: dict[str, str] | None
            ) -> tuple[tuple[ScanFragment, ...], DistinctFragments, TableSchema | None]:
    """Every fragment of the log at ``path`` (ordered by timestamp, then line), its distinct
    statements, and the header's schema; ``types``: the column types to decode bounds
    with (None: the header's). Each distinct statement is parsed and decoded once, its
    repeats share the decoded ranges (:meth:`ScanFragment.relogged`); a row in another
    layout is parsed whole. A corrupt line is a DataFileError naming it."""
    stored: TableSchema | None = None
    frags: list[ScanFragment] = []
    codes: list[int] = []
    statements: dict[str, int] = {}
    templates: list[ScanFragment] = []
    memo: dict = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            head = _HEAD.match(line)
            if head is not None:
                body = line[head.end():].rstrip()
                code = statements.get(body)
                if code is not None:
                    frags.append(templates[code].relogged(_json_string(head.group(1)),
                                                          _json_string(head.group(2))))
                    codes.append(code)
                    continue
                text = "{" + body
            else:
                text = line
            try:
                data = json.loads(text)
                if head is not None:
                    data["query_id"] = _json_string(head.group(1))
                    data["ts"] = _json_string(head.group(2))
            except json.JSONDecodeError as exc:
                raise DataFileError(f"{path}:{lineno}: corrupt workload file ({exc.msg})") from None
            if lineno == 1 and data.get("format") == FORMAT:
                stored = TableSchema.from_json(data.get("schema", []))
                continue
            if types is None:
                types = dict((stored or TableSchema(())).columns)
            frag = ScanFragment.from_json(types, data, memo)
            code = len(templates)
            templates.append(frag)
            if head is not None:
                statements[body] = code
            frags.append(frag)
            codes.append(code)
    times: dict[str | None, tuple[int, dt.datetime]] = {}  # a busy log repeats its seconds
    for f in frags:
        if f.ts not in times:
            times[f.ts] = _ts_key(f.ts)
    order = sorted(range(len(frags)), key=lambda i: (times[frags[i].ts], i))
    ordered = tuple(frags[i] for i in order)
    return ordered, DistinctFragments._from_codes(ordered, np.asarray(codes, np.int64)[order]
                                                  if codes else np.zeros(0, np.int64)), stored


#: the last log decoded in this process, by (path, version, schema): a dashboard's pages and
#: a plan decision read the same log again and again; fragments are immutable, and a new
#: version (any write changes the file's size or mtime) is decoded afresh
_READ: dict[tuple, tuple[tuple[ScanFragment, ...], DistinctFragments]] = {}
#: one decoding at a time: a dashboard's start-up warm-up and its first page ask for the
#: same log at once, and the second waits for the first's answer instead of decoding again
_DECODING = threading.Lock()


class WorkloadStore:
    """Scan fragments of every table of a workspace, one JSONL file per table."""

    def __init__(self, settings: Any) -> None:
        self.root = Path(settings.home) / "workloads"

    def path(self, table: str) -> Path:
        return self.root / f"{validate_name(table)}.jsonl"

    def version(self, table: str) -> str:
        """A cheap fingerprint that changes whenever the table's workload changes."""
        try:
            st = self.path(table).stat()
        except FileNotFoundError:
            return "none"
        return f"{st.st_mtime_ns}:{st.st_size}"

    # reading -----------------------------------------------------------------------------
    def _read(self, table: str) -> tuple[TableSchema | None, list[dict]]:
        path = self.path(table)
        if not path.is_file():
            return None, []
        schema, rows = None, []
        for _, data, header in _records(path):
            if header is not None:
                schema = header
                continue
            rows.append(data)
        return schema, rows

    def schema(self, table: str) -> TableSchema | None:
        """The schema the stored bounds were encoded with (None when nothing is stored)."""
        try:
            with self.path(table).open(encoding="utf-8") as fh:
                first = fh.readline()
        except FileNotFoundError:
            return None
        try:
            data = json.loads(first) if first.strip() else {}
        except json.JSONDecodeError:
            return self._read(table)[0]  # reports the corrupt line
        return TableSchema.from_json(data["schema"]) if data.get("format") == FORMAT else None

    def _decoded(self, table: str, schema: TableSchema | None
                 ) -> tuple[tuple[ScanFragment, ...], DistinctFragments]:
        key = (str(self.path(table)), self.version(table), schema)
        found = _READ.get(key)
        if found is not None:
            return found
        with _DECODING:
            found = _READ.get(key)
            if found is not None:
                return found
            path = self.path(table)
            if path.is_file():
                found = _decode(path, dict(schema.columns) if schema else None)[:2]
            else:
                found = ((), DistinctFragments._from_codes((), np.zeros(0, np.int64)))
            _READ.clear()  # one table's log at a time: a busy log is tens of MB decoded
            _READ[key] = found
        return found

    def fragments(self, table: str, schema: TableSchema | None = None) -> list[ScanFragment]:
        """The table's fragments, ordered by timestamp then import order ([] if none)."""
        return list(self._decoded(table, schema)[0])

    def distinct(self, table: str, schema: TableSchema | None = None) -> DistinctFragments:
        """The distinct statements of :meth:`fragments` with how often each was logged
        (:class:`DistinctFragments`), decoded with them once per workload version."""
        return self._decoded(table, schema)[1]

    # writing -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, table: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".{table}.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def writing(self, table: str, schema: TableSchema, keep: bool = True,
                stored_ids: bool = False) -> Iterator["WorkloadWriter"]:
        """Stream a new version of the table's workload, under the table's lock: the stored
        fragments first when ``keep`` (re-encoded when ``schema`` differs from theirs), then
        every row the caller writes. The version is published with ``os.replace`` when the
        block ends without an exception and discarded otherwise (also when ``keep`` and
        nothing was written: the stored workload is unchanged). One row is held at a time;
        with ``stored_ids`` the stored query ids are collected in ``writer.stored_ids``."""
        header = {"format": FORMAT, "version": VERSION, "table": table, "schema": schema.to_json()}
        with self._locked(table):
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{table}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(header) + "\n")
                    writer = WorkloadWriter(fh)
                    if keep:
                        self._copy_stored(table, schema, writer, stored_ids)
                    stored = writer.rows
                    yield writer
                    fh.flush()
                    os.fsync(fh.fileno())
                if keep and writer.rows == stored:
                    os.unlink(tmp)
                else:
                    os.replace(tmp, self.path(table))
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                raise

    def _copy_stored(self, table: str, schema: TableSchema, writer: "WorkloadWriter",
                     ids: bool) -> None:
        """Stored fragment lines into ``writer``, line by line (verbatim when the schema is
        the same, re-encoded otherwise)."""
        path = self.path(table)
        if not path.is_file():
            return
        types = dict(schema.columns)
        old: dict[str, str] | None = None  # the stored types when they differ
        for line, data, header in _records(path):
            if header is not None:
                old = None if header == schema else dict(header.columns)
                continue
            if ids:
                writer.stored_ids.add(str(data.get("query_id")))
            if old is None:
                writer.write_line(line if line.endswith("\n") else line + "\n")
            else:
                writer.write(ScanFragment.from_json(old, data).to_json(types))

    def append(self, table: str, fragments: Sequence[ScanFragment], schema: TableSchema) -> None:
        """Add fragments after the stored ones (stored bounds are re-encoded with ``schema``)."""
        types = dict(schema.columns)
        with self.writing(table, schema) as writer:
            for f in fragments:
                writer.write(f.to_json(types))

    def replace(self, table: str, fragments: Sequence[ScanFragment], schema: TableSchema) -> None:
        """Make ``fragments`` the table's whole workload."""
        types = dict(schema.columns)
        with self.writing(table, schema, keep=False) as writer:
            for f in fragments:
                writer.write(f.to_json(types))

    def clear(self, table: str) -> None:
        """Forget the table's workload (no error when there is none)."""
        with self._locked(table):
            with contextlib.suppress(FileNotFoundError):
                self.path(table).unlink()


class WorkloadWriter:
    """The rows of a workload version being written (:meth:`WorkloadStore.writing`)."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh
        self.rows = 0
        self.stored_ids: set[str] = set()

    def write(self, row: dict) -> None:
        """One fragment row (:meth:`ScanFragment.to_json`)."""
        self._fh.write(json.dumps(row, default=str) + "\n")
        self.rows += 1

    def write_line(self, line: str) -> None:
        """One fragment row already encoded as a JSON line (ending in a line end)."""
        self._fh.write(line)
        self.rows += 1
