"""The dashboard's only door to the engine: ``engine.api`` calls behind Streamlit caches.

Every number a page shows comes from ``engine.api`` through this module; :mod:`app.views`
reshapes it into frames and labels. Immutable things (settings, a snapshot of a table, the
workload's fragments) are cached as resources and must never be mutated by a page;
derived metrics are cached as data keyed by the snapshot id, so a new snapshot (after a
run or a rollback) is a new cache entry and nothing stale is shown. Nothing is opened at
import time: the first call does the work.

A user mistake surfaces as :class:`engine.core.errors.AdvisorError`; pages catch it through
:func:`app.components.guard` and show ``st.error`` with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from app import charts, views
from engine import api
from engine.core.config import CONFIG_FILE_NAME, ENV_PREFIX, Settings
from engine.core.errors import AdvisorError

__all__ = ["AdvisorError"]


# --------------------------------------------------------------------------- settings

def _env_key() -> tuple[tuple[str, str], ...]:
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))
    home = Path(os.environ.get(ENV_PREFIX + "HOME") or ".layout-advisor").expanduser()
    cfg = home / CONFIG_FILE_NAME
    stamp = str(cfg.stat().st_mtime_ns) if cfg.is_file() else ""
    return env + (("__config_mtime__", stamp),)


@st.cache_resource(show_spinner=False, max_entries=8)
def _workspace_for(env_key: tuple[tuple[str, str], ...]) -> api.Workspace:
    env = {k: v for k, v in env_key if not k.startswith("__")}
    return api.open_workspace(environ=env)


def workspace() -> api.Workspace:
    """The dashboard's workspace, opened once per configuration (environment and config
    file) like the CLI's (file < environment): its stores and memos are shared by every
    page of the session."""
    return _workspace_for(_env_key())


def settings() -> Settings:
    """Workspace settings, resolved like the CLI (file < environment)."""
    return workspace().settings


def home() -> str:
    return str(Path(settings().home).expanduser().resolve())


def sign_in(name: str, secret: str) -> Any:
    """Authenticate an approver; the identity is the ``actor`` of every guarded call.
    A wrong secret raises (an AdvisorError, audited, after a growing delay)."""
    return api.authenticate(workspace(), name.strip(), secret)


def session_alive(identity: Any) -> bool:
    """Whether a signed-in session is still valid (it expires after inactivity)."""
    try:
        api.check_session(workspace(), identity)
    except AdvisorError:
        return False
    return True


def sign_out(identity: Any) -> None:
    api.sign_out(workspace(), identity)


def oidc_providers() -> list[tuple[str | None, str]]:
    """``[(provider, label)]`` configured in Streamlit's secrets ``[auth]`` for ``st.login``:
    ``(None, host)`` for a provider written directly in ``[auth]`` (``st.login()``), and
    ``(name, name)`` per ``[auth.NAME]`` section (``st.login(name)``). Empty without
    ``[auth]`` (no secrets file, or no section): the dashboard then offers only the
    approvers' password sign-in."""
    try:
        auth = st.secrets.get("auth") if "auth" in st.secrets else None
    except (FileNotFoundError, OSError, AttributeError, KeyError, ValueError):
        return []  # no secrets.toml at all (Streamlit raises its own not-found error types)
    if not isinstance(auth, Mapping):
        return []
    providers: list[tuple[str | None, str]] = []
    if "client_id" in auth:
        host = str(auth.get("server_metadata_url", "")).split("://")[-1].split("/")[0]
        providers.append((None, host or "your identity provider"))
    providers += [(str(k), str(k)) for k, v in auth.items() if isinstance(v, Mapping)]
    return providers


def sign_in_oidc(claims: Mapping[str, Any]) -> Any:
    """The identity of the approver linked to the OIDC account in ``claims`` (``st.user``'s:
    ``iss``, ``sub``, ``email``, ``email_verified``), or None when none is linked (read-only).
    An unverified email link raises an AdvisorError (audited)."""
    return api.sign_in_oidc(workspace(), claims)


def has_admin() -> bool:
    """Whether the workspace has an admin (without one, nothing can be approved)."""
    return api.has_admin(workspace())


# --------------------------------------------------------------------------- tables

def list_tables() -> list[str]:
    """Names of the workspace's tables (cheap: not cached, so new tables appear at once)."""
    return list(table_labels())


def table_labels() -> dict[str, str]:
    """Each table's name with its format and catalog, as the table picker shows it."""
    return {t["name"]: views.table_label(t) for t in api.list_tables(workspace())}


def table_snapshots(table: str) -> pd.DataFrame:
    """The table's snapshot history, newest first, with a ``current`` flag."""
    return views.snapshot_history(api.table_snapshots(workspace(), table))


def snapshot_history(table: str) -> pd.DataFrame:
    """The snapshot history the table's format records (Iceberg snapshots, Delta versions,
    native headers), newest first, as the dashboard shows it."""
    return views.snapshot_history_frame(api.snapshot_history(workspace(), table))


def rollback_targets(table: str) -> list[str]:
    """Snapshots a rollback would change anything with, newest first (never the current
    snapshot's twin)."""
    return api.rollback_targets(workspace(), table)


#: session-state key of the current snapshot id the sidebar read at the start of this run
RUN_CURRENT_KEY = "_la_run_current_snapshot"


def current_from(snaps: pd.DataFrame, table: str) -> str:
    """The current snapshot's id in a :func:`table_snapshots` frame."""
    if snaps.empty:
        raise AdvisorError(f"table {table!r} has no snapshot")
    cur = snaps[snaps["current"].astype(bool)]
    return str((cur if not cur.empty else snaps).iloc[0]["id"])


def remember_current(table: str, snaps: pd.DataFrame) -> None:
    """Keep the current snapshot id the sidebar just read for the rest of this script run,
    so the page's many cache keys do not each read the table's history again (a run or a
    rollback reruns the script, which reads it afresh)."""
    st.session_state[RUN_CURRENT_KEY] = (table, current_from(snaps, table))


def current_snapshot_id(table: str) -> str:
    memo = st.session_state.get(RUN_CURRENT_KEY)
    if memo is not None and memo[0] == table:
        return str(memo[1])
    return current_from(table_snapshots(table), table)


@st.cache_resource(show_spinner=False, max_entries=16)
def _snapshot(home_: str, table: str, snapshot_id: str) -> Any:
    return api.load_snapshot(workspace(), table, snapshot_id)


def snapshot(table: str, snapshot_id: str | None = None) -> Any:
    """The immutable :class:`engine.table.model.Snapshot` (a shared handle: do not mutate)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _snapshot(home(), table, sid)


def rollback_table(table: str, to_snapshot_id: str, actor: Any) -> dict[str, Any]:
    """Make ``to_snapshot_id`` current again (a new snapshot; nothing is deleted) and reset
    WAIR's learned state when it is newer than that snapshot; the engine checks that
    ``actor`` is a signed-in admin. Returns ``{"snapshot", "state_reset"}``."""
    out = api.rollback_and_reset(workspace(), table, to_snapshot_id, actor=actor)
    clear_caches()
    return dict(out)


# --------------------------------------------------------------------------- analysis

@st.cache_data(show_spinner=False, max_entries=16)
def _column_summaries(home_: str, table: str, snapshot_id: str) -> dict[str, Any]:
    # stored per snapshot by the engine: a fresh server loads it instead of recomputing
    return dict(api.column_summaries(workspace(), table, snapshot_id=snapshot_id))


def analyze(table: str, snapshot_id: str | None = None) -> list[dict[str, Any]]:
    """Per-column clustering metrics of a snapshot (average depth, overlaps, histogram...,
    ``span_share``: how wide a partition is against the column's whole range)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _column_summaries(home(), table, sid)["columns"]


def snapshot_header(table: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """``{"id", "operation", "created_at", "partitions", "rows", "bytes"}`` of a snapshot,
    from its stored summary (no manifest read)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _column_summaries(home(), table, sid)["snapshot"]


@st.cache_data(show_spinner=False, max_entries=16)
def _predicate_scope(home_: str, table: str, column: str, snapshot_id: str,
                     where: str) -> dict[str, Any]:
    mask = api.predicate_partitions(workspace(), table, where, snapshot_id=snapshot_id)
    scoped = api.analyze(workspace(), table, columns=[column], snapshot_id=snapshot_id,
                         where=where)[0]
    return {"mask": mask, "metrics": scoped}


def predicate_scope(table: str, column: str, where: str,
                    snapshot_id: str | None = None) -> dict[str, Any]:
    """The partitions a SQL predicate may touch (``mask``) and ``column``'s clustering
    metrics over just those (``metrics``, an :class:`engine.api.ColumnClustering`:
    Snowflake's clustering depth with a predicate)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _predicate_scope(home(), table, column, sid, where)


@st.cache_data(show_spinner=False, max_entries=32)
def _column_clustering(home_: str, table: str, column: str,
                       snapshot_id: str) -> "api.ColumnClustering":
    # from the stored summary: per-partition depths and overlaps as numpy arrays (no
    # sweep in a fresh process, no million-element lists)
    return api.stored_column_clustering(workspace(), table, column, snapshot_id=snapshot_id)


def column_clustering(table: str, column: str,
                      snapshot_id: str | None = None) -> "api.ColumnClustering":
    """Per-partition overlaps and depths of one column (numpy arrays, -1 where unknown),
    with the depth profile."""
    sid = snapshot_id or current_snapshot_id(table)
    return _column_clustering(home(), table, column, sid)


@st.cache_data(show_spinner=False, max_entries=32)
def _ep_metrics(home_: str, table: str, column: str, snapshot_id: str) -> dict[str, Any]:
    return dict(api.ep_metrics(workspace(), table, column, snapshot_id=snapshot_id))


def ep_metrics(table: str, column: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """The patent's EP-file view of one column (EP regions, sub-ranges, DD-EP selection)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _ep_metrics(home(), table, column, sid)


@st.cache_data(show_spinner=False, max_entries=64)
def _partition_order(home_: str, table: str, column: str, snapshot_id: str, sort: str,
                     descending: bool, min_depth: float, where: str) -> dict[str, Any]:
    clus = _column_clustering(home_, table, column, snapshot_id)
    mask = _predicate_scope(home_, table, column, snapshot_id, where)["mask"] if where else None
    zm = _snapshot(home_, table, snapshot_id).zonemaps()
    return api.partition_page(zm, column, clus.depths, clus.overlaps, sort=sort,
                              descending=descending, min_depth=min_depth, mask=mask,
                              offset=0, limit=max(len(zm), 1))


def partition_order(table: str, column: str, snapshot_id: str | None, sort: str,
                    descending: bool, min_depth: float, where: str = "") -> dict[str, Any]:
    """:func:`engine.api.partition_page` of every matching partition (``index`` holds the
    whole order), cached per sort and filter: the Partitions page slices its pages from
    it, so paging never sorts again."""
    sid = snapshot_id or current_snapshot_id(table)
    return _partition_order(home(), table, column, sid, sort, descending, min_depth, where)


@st.cache_data(show_spinner=False, max_entries=16)
def _partition_marks(home_: str, table: str, column: str, snapshot_id: str, order_by: str,
                     color_by: str) -> dict[str, Any]:
    zm = _snapshot(home_, table, snapshot_id).zonemaps()
    clus = _column_clustering(home_, table, column, snapshot_id)
    cz, n = zm.column(column), len(zm)
    order = views.partition_order(zm, column, order_by)
    value = np.asarray(clus.depths if color_by == "depth" else clus.overlaps, dtype=float)
    category = charts.depth_bin_labels(value[order] if color_by == "depth" else value[order] + 1)
    valid = cz.valid[order]
    return charts.segment_marks(cz.lo[order][valid], cz.hi[order][valid], np.arange(n)[valid],
                                category[valid], order[valid], value[order][valid], color_by)


def partition_marks(table: str, column: str, snapshot_id: str | None, order_by: str,
                    color_by: str) -> dict[str, Any]:
    """The Partitions page's segment marks (:func:`app.charts.segment_marks`: neighbouring
    partitions of one colour joined past a few thousand), cached per column, order and
    colour: at 1,000,000 partitions binning and joining is too slow for every rerun."""
    sid = snapshot_id or current_snapshot_id(table)
    return _partition_marks(home(), table, column, sid, order_by, color_by)


@st.cache_data(show_spinner=False, max_entries=32)
def _ep_overview(home_: str, table: str, column: str, snapshot_id: str,
                 keep: tuple[int, ...]) -> dict[str, Any]:
    return api.ep_overview(workspace(), table, column, snapshot_id=snapshot_id, keep=keep)


def ep_overview(table: str, column: str, snapshot_id: str | None = None,
                keep: Sequence[int] = ()) -> dict[str, Any]:
    """:func:`engine.api.ep_overview` (the deepest EP files, not all 125,000 at 1M), cached;
    ``keep``: EP files to include whatever their depth (DD-EP's selection)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _ep_overview(home(), table, column, sid, tuple(sorted(int(i) for i in keep)))


@st.cache_data(show_spinner=False, max_entries=64)
def _partition_details(home_: str, table: str, snapshot_id: str, index: int) -> dict[str, Any]:
    return api.partition_details(workspace(), table, index, snapshot_id=snapshot_id)


def partition_details(table: str, index: int, snapshot_id: str | None = None) -> dict[str, Any]:
    """One partition's path, size and zonemap on every column, read from one row of the
    zonemap arrays (:func:`engine.api.partition_details`)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _partition_details(home(), table, sid, int(index))


# --------------------------------------------------------------------------- workload

def workload_key(table: str) -> str:
    """A cheap fingerprint of the table's imported workload and of how it is scored: it
    changes when a log is imported, and when ``prune_row_groups`` is switched in the
    workspace's file (every cache keyed by it holds file-level or row-group answers)."""
    ws = workspace()
    return f"{api.workload_version(ws, table)}:{'row-groups' if ws.settings.prune_row_groups else 'files'}"


@st.cache_resource(show_spinner=False, max_entries=8)
def _fragments(home_: str, table: str, wkey: str) -> tuple[Any, ...]:
    return tuple(api.workload_fragments(workspace(), table))


def fragments(table: str) -> tuple[Any, ...]:
    """The table's scan fragments (shared immutable handles), oldest first."""
    return _fragments(home(), table, workload_key(table))


@st.cache_resource(show_spinner=False, max_entries=8)
def _distinct(home_: str, table: str, wkey: str) -> Any:
    return api.workload_distinct(workspace(), table)


def distinct(table: str) -> Any:
    """The distinct statements of :func:`fragments` with their counts
    (:func:`engine.api.workload_distinct`, a shared immutable handle): the pages aggregate
    over its few thousand rows instead of every query of a busy log."""
    return _distinct(home(), table, workload_key(table))


@st.cache_resource(show_spinner=False, max_entries=8)
def _range_sources(home_: str, table: str, wkey: str) -> dict[str, str]:
    return views.range_sources(_fragments(home_, table, wkey), api.source_text,
                               _distinct(home_, table, wkey))


def range_sources(table: str) -> dict[str, str]:
    """Query id -> where its ranges came from (:func:`app.views.range_sources`), once per
    workload version (a shared dict: do not mutate)."""
    return _range_sources(home(), table, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _pruning(home_: str, table: str, snapshot_id: str, wkey: str) -> pd.DataFrame:
    # stored per snapshot and workload version by the engine (a fresh server loads it)
    return views.pruning_frame(api.pruning_summary(workspace(), table, snapshot_id=snapshot_id))


def pruning(table: str, snapshot_id: str | None = None) -> pd.DataFrame:
    """One row per scan fragment: scanned, pruned, fully covered, boundary, bytes..."""
    sid = snapshot_id or current_snapshot_id(table)
    return _pruning(home(), table, sid, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _pruning_unit(home_: str, table: str, snapshot_id: str, wkey: str) -> dict[str, Any]:
    return api.pruning_unit(workspace(), table, snapshot_id).to_json()


def pruning_unit(table: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """What the pruning figures of a snapshot count (:func:`engine.api.pruning_unit`):
    ``label`` is the line shown beside them; keyed like :func:`pruning` (the
    ``prune_row_groups`` setting is part of the workload key)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _pruning_unit(home(), table, sid, workload_key(table))


@st.cache_resource(show_spinner=False, max_entries=64)
def _fragment_scan(home_: str, table: str, snapshot_id: str, wkey: str, query_id: str) -> Any:
    # the cached fragments: api.fragment_scan would read the whole stored workload again
    frag = next((f for f in _fragments(home_, table, wkey) if f.query_id == query_id), None)
    if frag is None:
        return api.fragment_scan(workspace(), table, query_id, snapshot_id=snapshot_id)  # its error
    return api.query_scan(workspace(), table, frag, snapshot_id=snapshot_id)


def fragment_scan(table: str, query_id: str, snapshot_id: str | None = None) -> Any:
    """Per-partition outcome (:class:`engine.scan.pruning.FragmentScan`) of one query."""
    sid = snapshot_id or current_snapshot_id(table)
    return _fragment_scan(home(), table, sid, workload_key(table), query_id)


@st.cache_data(show_spinner=False, max_entries=16)
def _workload_summary(home_: str, table: str, snapshot_id: str,
                      wkey: str) -> dict[str, Any] | None:
    frags = _fragments(home_, table, wkey)
    if not frags:
        return None
    return views.workload_summary(_pruning(home_, table, snapshot_id, wkey), frags,
                                  _distinct(home_, table, wkey))


def workload_summary(table: str, snapshot_id: str | None = None) -> dict[str, Any] | None:
    """Totals of the workload over a snapshot, or None when no workload was imported;
    computed once per snapshot and workload version."""
    if not fragments(table):
        return None
    sid = snapshot_id or current_snapshot_id(table)
    return _workload_summary(home(), table, sid, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=8)
def _workload_views(home_: str, table: str, snapshot_id: str, wkey: str) -> dict[str, Any]:
    return views.workload_views(_fragments(home_, table, wkey),
                                _pruning(home_, table, snapshot_id, wkey),
                                _distinct(home_, table, wkey))


def workload_views(table: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """Column frequency, waste per column, the query picker's labels and the timestamps,
    computed once per snapshot and workload version."""
    sid = snapshot_id or current_snapshot_id(table)
    return _workload_views(home(), table, sid, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _query_order(home_: str, table: str, snapshot_id: str, wkey: str, sort: str,
                 descending: bool) -> np.ndarray:
    per_query = _pruning(home_, table, snapshot_id, wkey)
    return api.query_page(per_query, sort=sort, descending=descending,
                          limit=max(len(per_query), 1))["index"]


def query_order(table: str, sort: str, descending: bool,
                snapshot_id: str | None = None) -> np.ndarray:
    """Every row of :func:`pruning` ordered by ``sort`` (:func:`engine.api.query_page`),
    once per sort: the Workload page's table slices its pages from it."""
    sid = snapshot_id or current_snapshot_id(table)
    return _query_order(home(), table, sid, workload_key(table), sort, descending)


def clear_caches() -> None:
    """Forget cached metrics (after an action that changed the workspace) and the current
    snapshot id remembered for this run."""
    st.cache_data.clear()
    st.session_state.pop(RUN_CURRENT_KEY, None)
