"""Per-snapshot summaries the dashboard opens with: computed once, stored, loaded cheaply.

The Overview's numbers (every column's clustering metrics, Snowflake's
``SYSTEM$CLUSTERING_INFORMATION`` fields, and the stored workload's pruning per query) cost
one sweep over the partitions per column and one pruning pass over the workload: seconds
at the SF 1 demo (3,001 partitions, 600 queries) on two shared cores, once per dashboard
process, and again for every snapshot the trend covers. They depend only on an immutable
snapshot and, for the pruning, on the workload's version, so they are computed the first
time anyone asks (or by :func:`warm_summaries` right after a build, a commit or an import)
and stored as JSON under ``<home>/cache/summaries/<table>/``; any later process, a freshly
started dashboard included, loads them in milliseconds without reading the table's
manifests.

A stored summary is found by the table's registration (its location and creation time: a
table dropped and created again under the same name is another table), the snapshot id,
for the pruning the workload's version, :data:`SUMMARY_VERSION` (bumped whenever what a
summary holds changes) and a digest of the code that computes the numbers (the metrics and
pruning modules): after an upgrade older files are simply ignored. Files are written atomically
(temporary file, then rename), and an unreadable one is recomputed, so two processes
warming the same snapshot at once cannot leave a broken file behind.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import logging
import os
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from engine.summaries import analysis as analysis_module
from engine.summaries.analysis import (analyze_with_arrays, column_clustering, pruning_summaries,
                                 span_shares)
from engine.core.cached import read_or_none
from engine.core.errors import ColumnNotFoundError
from engine.metrics import overlap as overlap_module
from engine.metrics import profile as profile_module
from engine.metrics import sweep as sweep_module
from engine.scan import batched as batched_module
from engine.scan import counts as counts_module
from engine.scan import endpoints as endpoints_module
from engine.scan import estimate as estimate_module
from engine.scan import fragment_scan as fragment_scan_module
from engine.scan import pruning as pruning_module
from engine.scan import window as window_module

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["SUMMARY_VERSION", "PARTITION_ARRAYS", "column_summaries", "column_partition_arrays",
           "stored_column_clustering", "pruning_summary", "pruning_fields", "warm_summaries",
           "warm_after_change", "subscribe_warming", "warm_listener"]

_log = logging.getLogger(__name__)

#: bumped whenever the content of a stored summary changes (older files are ignored)
SUMMARY_VERSION = 2  # 2: per-partition arrays stored beside the JSON (.npz)


def _jsonable(value: Any) -> Any:
    """numpy scalars as Python numbers, dates as ISO strings (what the JSON round trip keeps)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def _folder(ws: "Workspace", table: str) -> Path:
    return Path(ws.settings.home).expanduser() / "cache" / "summaries" / table


#: the modules whose code decides a summary's numbers: an edit to any of them (a new
#: verdict rule, a pruning fix) makes every stored summary stale, so their source is part
#: of the key
_CODE = (analysis_module, overlap_module, profile_module, sweep_module, pruning_module,
         counts_module, batched_module, endpoints_module, estimate_module, fragment_scan_module,
         window_module)


@functools.cache
def _code_key() -> str:
    """Digest of the source of :data:`_CODE` and of this module (read once per process)."""
    digest = hashlib.sha256()
    for module in (*_CODE, sys.modules[__name__]):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


def _key(ws: "Workspace", table: str, snapshot_id: str, *extra: str) -> str:
    """Hex digest naming one summary: registration, snapshot, extras, version, code."""
    info = ws.tables.info(table)
    text = "\0".join([str(SUMMARY_VERSION), _code_key(), info.location, info.created_at,
                      str(snapshot_id), *extra])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _write_atomic(path: Path, write: Callable[[Any], None]) -> None:
    """``write(handle)`` into a temporary file beside ``path``, then renamed over it (two
    processes storing the same summary at once each rename a whole file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("wb") as handle:
            write(handle)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _dump(path: Path, value: Any) -> Any:
    """``value`` written at ``path`` as JSON (atomically) and returned as read back, so a
    fresh and a stored answer are the same objects."""
    text = json.dumps(value, default=_jsonable, separators=(",", ":"))
    _write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))
    return json.loads(text)


def _stored(path: Path, compute: Callable[[], Any]) -> Any:
    """The JSON at ``path``, or ``compute()`` written there first (atomically)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        pass
    return _dump(path, compute())


def _snapshot_id(ws: "Workspace", table: str, snapshot_id: str | None) -> str:
    return str(snapshot_id) if snapshot_id is not None else ws.tables.current_id(table)


#: a column's per-partition arrays in the summary's ``.npz`` (``c<i>_<name>``, column i of
#: the JSON's ``columns``): int32 depths and overlaps (-1 where unknown), bool constant
PARTITION_ARRAYS = ("depths", "overlaps", "constant")


def _columns_paths(ws: "Workspace", table: str, sid: str) -> tuple[Path, Path]:
    """(the JSON, the per-partition arrays) of a snapshot's column summary: one key."""
    stem = f"columns-{_key(ws, table, sid)}"
    folder = _folder(ws, table)
    return folder / f"{stem}.json", folder / f"{stem}.npz"


def _compute_columns(ws: "Workspace", table: str, sid: str
                     ) -> tuple[dict[str, Any], dict[str, dict[str, np.ndarray]]]:
    """Compute and store a snapshot's column summary: the arrays first, then the JSON (a
    JSON on disk means its arrays were written). Returns (the JSON as read back, per
    column its arrays)."""
    json_path, npz_path = _columns_paths(ws, table, sid)
    snap = ws.tables.snapshot(table, sid)
    shares = span_shares(ws, table, snapshot_id=sid)
    rows, arrays = [], {}
    for data, clustering in analyze_with_arrays(ws, table, snapshot_id=sid):
        row = dict(data)
        row["span_share"] = shares.get(row["column"])
        rows.append(row)
        arrays[row["column"]] = {"depths": clustering.depths.astype(np.int32),
                                 "overlaps": clustering.overlaps.astype(np.int32),
                                 "constant": np.asarray(clustering.constant, dtype=bool)}
    members = {"columns": np.array([r["column"] for r in rows], dtype=np.str_)}
    for i, row in enumerate(rows):
        for name in PARTITION_ARRAYS:
            members[f"c{i}_{name}"] = arrays[row["column"]][name]
    _write_atomic(npz_path, lambda handle: np.savez(handle, **members))
    summary = _dump(json_path, {
        "snapshot": {"id": snap.id, "operation": snap.operation, "created_at": snap.created_at,
                     "partitions": snap.partition_count, "rows": snap.total_rows,
                     "bytes": snap.total_bytes},
        "columns": rows})
    return summary, arrays


def column_summaries(ws: "Workspace", table: str,
                     snapshot_id: str | None = None) -> dict[str, Any]:
    """A snapshot's header and every orderable column's clustering metrics, stored once.

    ``{"snapshot": {"id", "operation", "created_at", "partitions", "rows", "bytes"},
    "columns": [...]}``: each column is the :func:`engine.api.analyze` object (average
    depth and overlaps, depth histogram and profile, verdict...) plus ``span_share``
    (:func:`engine.api.span_shares`). The current snapshot when ``snapshot_id`` is None.
    The per-partition arrays are stored beside it (:func:`column_partition_arrays`), not
    in the JSON: at 1,000,000 partitions they would be million-element lists."""
    sid = _snapshot_id(ws, table, snapshot_id)
    json_path, _ = _columns_paths(ws, table, sid)
    try:
        with json_path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return _compute_columns(ws, table, sid)[0]


def _load_arrays(path: Path, names: list[str], n: int, column: str) -> dict[str, np.ndarray] | None:
    """``column``'s arrays from the summary's ``.npz``; None when missing, unreadable or
    not the summary's (other columns, other length)."""
    def read() -> dict[str, np.ndarray] | None:
        with np.load(path, allow_pickle=False) as data:
            if data["columns"].tolist() != names:
                return None
            i = names.index(column)
            return {name: data[f"c{i}_{name}"] for name in PARTITION_ARRAYS}

    out = read_or_none(read, path, "stored partition arrays", _log,
                       errors=(OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile))
    if out is None or any(a.shape != (n,) for a in out.values()):
        return None
    return out


def column_partition_arrays(ws: "Workspace", table: str, column: str,
                            snapshot_id: str | None = None) -> dict[str, np.ndarray]:
    """``column``'s per-partition ``depths``, ``overlaps`` (int32, -1 where the partition's
    statistics are unknown) and ``constant`` (bool), in snapshot order, from the stored
    summary (computed and stored first when missing, unreadable or of another version).
    ``column`` must be one :func:`column_summaries` covers (an orderable column)."""
    sid = _snapshot_id(ws, table, snapshot_id)
    summary = column_summaries(ws, table, sid)
    names = [c["column"] for c in summary["columns"]]
    name = next((c for c in names if c.lower() == column.lower()), None)
    if name is None:
        raise ColumnNotFoundError(f"no clustering summary for column {column!r}; summarised "
                                  f"columns are: {', '.join(names)}")
    _, npz_path = _columns_paths(ws, table, sid)
    loaded = _load_arrays(npz_path, names, int(summary["snapshot"]["partitions"]), name)
    if loaded is None:
        loaded = _compute_columns(ws, table, sid)[1][name]
    return loaded


def stored_column_clustering(ws: "Workspace", table: str, column: str,
                             snapshot_id: str | None = None) -> dict[str, Any]:
    """:func:`engine.api.column_clustering` with ``partition_lists=False``, from the stored
    summary: the column's summary object (with ``span_share``) plus its per-partition
    arrays as numpy (:func:`column_partition_arrays`), never million-element lists; a
    fresh process loads it without a sweep. Columns the summary does not cover are
    computed (:func:`engine.api.column_clustering`)."""
    sid = _snapshot_id(ws, table, snapshot_id)
    summary = column_summaries(ws, table, sid)
    row = next((c for c in summary["columns"] if c["column"].lower() == column.lower()), None)
    if row is None:
        data = column_clustering(ws, table, column, snapshot_id=sid, partition_lists=False)
        return {**data, **{k: np.asarray(data[k]) for k in PARTITION_ARRAYS}}
    return {**row, **column_partition_arrays(ws, table, row["column"], sid)}


#: the per-query fields a repeated statement does not share
_PER_QUERY = ("query_id", "ts")


def _compact_pruning(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-query pruning rows stored once per distinct row: a busy log repeats a few
    thousand statements tens of thousands of times, and a statement's pruning is the same
    for each of its queries (only the id and the time differ). ``{"distinct": [row, ...],
    "of_query": [i, ...], "query_id": [...], "ts": [...]}``; :func:`_expand_pruning` gives
    the rows back, equal and with their keys in the same order.

    >>> rows = [{"query_id": "a", "ts": None, "scanned": 2}, {"query_id": "b", "ts": "t",
    ...         "scanned": 2}, {"query_id": "c", "ts": None, "scanned": 1}]
    >>> packed = _compact_pruning(rows)
    >>> len(packed["distinct"]), _expand_pruning(packed) == rows
    (2, True)
    """
    seen: dict[str, int] = {}
    distinct: list[dict[str, Any]] = []
    of_query: list[int] = []
    for row in rows:
        shared = {k: v for k, v in row.items() if k not in _PER_QUERY}
        key = json.dumps([list(row), shared], default=_jsonable, sort_keys=True)
        code = seen.get(key)
        if code is None:
            code = seen[key] = len(distinct)
            distinct.append(row)
        of_query.append(code)
    return {"distinct": distinct, "of_query": of_query,
            "query_id": [row.get("query_id") for row in rows],
            "ts": [row.get("ts") for row in rows]}


def _expand_pruning(packed: Any) -> list[dict[str, Any]]:
    """The per-query rows of :func:`_compact_pruning`'s answer (a list is returned as is)."""
    if isinstance(packed, list):
        return packed
    distinct = packed["distinct"]
    out = []
    for code, query_id, ts in zip(packed["of_query"], packed["query_id"], packed["ts"]):
        row = dict(distinct[code])
        if "query_id" in row:
            row["query_id"] = query_id
        if "ts" in row:
            row["ts"] = ts
        out.append(row)
    return out


def pruning_summary(ws: "Workspace", table: str,
                    snapshot_id: str | None = None) -> list[dict[str, Any]]:
    """The stored workload's pruning over a snapshot, one object per scan fragment, as
    :func:`engine.api.pruning` with ``selectivity=True`` returns it (computed by
    :func:`engine.summaries.analysis.pruning_summaries`: one-range queries by prefix sums); stored once per
    snapshot, workload version (an import makes a new version) and the
    ``prune_row_groups`` setting (file-level and row-group answers differ)."""
    return _expand_pruning(_stored_pruning(ws, table, snapshot_id))


def _stored_pruning(ws: "Workspace", table: str, snapshot_id: str | None) -> Any:
    """:func:`pruning_summary`'s stored form (:func:`_compact_pruning`), computed first
    when missing."""
    sid = _snapshot_id(ws, table, snapshot_id)
    version = ws.workloads.version(table)
    level = "row-groups" if ws.settings.prune_row_groups else "files"
    path = _folder(ws, table) / f"pruning-{_key(ws, table, sid, version, level)}.json"
    # stored once per distinct row: a busy log's file is a fifth of the size and loads in
    # a fraction of the time
    return _stored(path, lambda: _compact_pruning(pruning_summaries(ws, table, snapshot_id=sid)))


def pruning_fields(ws: "Workspace", table: str, names: tuple[str, ...],
                   snapshot_id: str | None = None) -> dict[str, list[Any]]:
    """The fields ``names`` of every row of :func:`pruning_summary`, one list per name in
    the rows' order, without making the rows (the trend over snapshots reads two fields
    of tens of thousands of rows per snapshot)."""
    packed = _stored_pruning(ws, table, snapshot_id)
    if isinstance(packed, list):
        return {name: [row[name] for row in packed] for name in names}
    out = {}
    for name in names:
        if name in _PER_QUERY:
            out[name] = list(packed[name])
            continue
        values = [row[name] for row in packed["distinct"]]
        out[name] = [values[code] for code in packed["of_query"]]
    return out


def warm_summaries(ws: "Workspace", table: str,
                   snapshot_id: str | None = None) -> dict[str, float]:
    """Compute and store both summaries of a snapshot (the current one by default) now,
    so that the first dashboard visit only loads them: run after a build, a commit, a
    rollback or a workload import. Returns the seconds each took (near 0 when stored)."""
    sid = _snapshot_id(ws, table, snapshot_id)
    out = {}
    start = time.perf_counter()
    column_summaries(ws, table, sid)
    out["columns_s"] = round(time.perf_counter() - start, 3)
    start = time.perf_counter()
    _stored_pruning(ws, table, sid)  # stored: the rows are made when a page asks
    out["pruning_s"] = round(time.perf_counter() - start, 3)
    return out


def warm_after_change(ws: "Workspace", table: str) -> dict[str, float] | None:
    """:func:`warm_summaries` for the current snapshot after a commit, a rollback or a
    workload import, so the dashboard's next first visit only loads. Optional
    by nature: a failure here must never fail the command that changed the data, so it is
    logged as one warning line and None is returned (the dashboard then computes the
    summaries on its first visit, as before)."""
    try:
        return warm_summaries(ws, table)
    except Exception as exc:  # noqa: BLE001 - warming is best effort, never the command's fault
        _log.warning("dashboard summaries of %s not stored: %s: %s", table,
                     type(exc).__name__, exc)
        return None


def subscribe_warming(events: Any) -> None:
    """Store the current snapshot's summaries after every ``commit``, ``rollback`` and
    ``import`` a workspace's ``events`` announce (:func:`warm_after_change`, synchronously,
    in the emitting thread), so the dashboard's next first visit only loads them."""
    for event in ("commit", "rollback", "import"):
        events.subscribe(event, warm_listener)


def warm_listener(ws: Any, table: str) -> None:
    """The workspace listener of :func:`subscribe_warming`: :func:`warm_after_change`."""
    warm_after_change(ws, table)
