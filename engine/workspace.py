"""The workspace: one home's settings and the stores over it, opened once.

A :class:`Workspace` is built once per CLI command and once per dashboard session
(:meth:`Workspace.open`). It owns every store of the home (the table catalog, the workload
store, the control store) and builds each at most once, on first use: a command that
never touches the control store never creates ``control.db``. Nothing else constructs a
store; functions below the façade take the workspace (or the one store they need).

It also carries the home's events: ``commit`` (a rewrite or append published a new
snapshot), ``rollback`` and ``import`` (a workload was imported or cleared). Caches such as
the per-snapshot summaries subscribe to them instead of being warmed by the façade.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Mapping

from engine.core.config import Settings, load_settings
from engine.summaries.store import subscribe_warming

if TYPE_CHECKING:
    from engine.plans.plan import PlanBook
    from engine.plans.ports import Executor
    from engine.plans.store import ControlStore
    from engine.security.db import ControlDB
    from engine.security.store import SecurityStore
    from engine.table.store import TableStore
    from engine.workload.lookup import DimensionSource
    from engine.workload.store import WorkloadStore

#: The events a workspace emits; each listener is called as ``listener(workspace, table)``.
EVENTS = ("commit", "rollback", "import")

Listener = Callable[["Workspace", str], None]


@dataclass
class Events:
    """Synchronous publish/subscribe of the workspace's events (see :data:`EVENTS`)."""

    _listeners: dict[str, list[Listener]] = field(default_factory=lambda: defaultdict(list))

    def subscribe(self, event: str, listener: Listener) -> None:
        if event not in EVENTS:
            raise ValueError(f"unknown workspace event {event!r}; expected one of {EVENTS}")
        self._listeners[event].append(listener)

    def emit(self, workspace: "Workspace", event: str, table: str) -> None:
        for listener in list(self._listeners.get(event, ())):
            listener(workspace, table)


class Workspace:
    """The settings of one home and its stores, each built at most once (lazily)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.events = Events()
        self._caches: dict[str, Any] = {}
        # the dashboard's stored summaries follow every commit, rollback and import
        subscribe_warming(self.events)

    def cache(self, name: str, factory: Callable[[], Any]) -> Any:
        """The workspace's cache ``name`` (made by ``factory()`` on first use): the memo a
        domain module keeps for as long as the workspace lives, one CLI command or one
        dashboard session, instead of a process-wide global."""
        if name not in self._caches:
            self._caches[name] = factory()
        return self._caches[name]

    @classmethod
    def open(cls, home: str | None = None, overrides: Mapping[str, Any] | None = None,
             environ: Mapping[str, str] | None = None) -> "Workspace":
        """Resolve the settings (defaults < file < environment < ``overrides``) for ``home``
        and open the workspace over them."""
        flags = dict(overrides or {})
        if home is not None:
            flags["home"] = home
        return cls(load_settings(flags, environ=environ))

    @cached_property
    def tables(self) -> "TableStore":
        from engine.table.store import TableStore
        return TableStore(self.settings)

    @cached_property
    def workloads(self) -> "WorkloadStore":
        from engine.workload.store import WorkloadStore
        return WorkloadStore(self.settings)

    @cached_property
    def control_db(self) -> "ControlDB":
        """The control database (``control.db``) that :attr:`control` and :attr:`security`
        share; opening it beside reclustered tables whose file is gone is an error."""
        from engine.security.db import ControlDB
        return ControlDB(self.settings.control_db, tables=self.tables)

    @cached_property
    def control(self) -> "ControlStore":
        """Plans, job records and policy state (audited in :attr:`security`'s log)."""
        from engine.plans.store import ControlStore
        return ControlStore(self.control_db, self.security.audit)

    @cached_property
    def security(self) -> "SecurityStore":
        """Approvers, sessions, OIDC links and the hash-chained audit log."""
        from engine.security.approvers import ApproverStore
        from engine.security.audit import AuditLog
        from engine.security.oidc import OidcLinks
        from engine.security.sessions import SessionStore
        from engine.security.store import SecurityStore
        db = self.control_db
        return SecurityStore(db, AuditLog(db), ApproverStore(db), SessionStore(db),
                             OidcLinks(db))

    @cached_property
    def plans(self) -> "PlanBook":
        """The plans of the home, read with their state settled (over :attr:`control` and
        :attr:`tables`)."""
        from engine.plans.plan import PlanBook
        return PlanBook(self.settings, self.control, self.tables)

    @cached_property
    def executor(self) -> "Executor":
        """The :class:`~engine.plans.ports.Executor` that runs plans: Spark's. Importing it
        does not start Spark; a run starts a session only when it needs one."""
        from engine.spark.executor import SparkExecutor
        return SparkExecutor(self.settings, self.tables)

    @cached_property
    def dimensions(self) -> "DimensionSource":
        """The :class:`~engine.workload.lookup.DimensionSource` a workload import evaluates
        dimension filters with: DuckDB over the registered tables' current files."""
        from engine.spark.dimensions import DuckDimensionSource
        return DuckDimensionSource(self.tables)

    def emit(self, event: str, table: str) -> None:
        """Tell the subscribers that ``event`` happened to ``table``."""
        self.events.emit(self, event, table)


def as_workspace(ws_or_settings: "Workspace | Settings") -> Workspace:
    """``ws_or_settings`` itself when it is a workspace, else a workspace over those settings
    (the façade's functions accept either, for tests and scripts)."""
    return ws_or_settings if isinstance(ws_or_settings, Workspace) else Workspace(ws_or_settings)


def on_settings(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(settings, ...)`` as a function of a workspace (or of settings): the façade's
    adapter for the domain functions written over :class:`Settings` alone."""
    @functools.wraps(fn)
    def call(ws: "Workspace | Settings", *args: Any, **kwargs: Any) -> Any:
        return fn(as_workspace(ws).settings, *args, **kwargs)
    return call


def on_workspace(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(workspace, ...)`` callable with a workspace or with settings
    (:func:`as_workspace`): the façade's adapter for the domain functions over a workspace."""
    @functools.wraps(fn)
    def call(ws: "Workspace | Settings", *args: Any, **kwargs: Any) -> Any:
        return fn(as_workspace(ws), *args, **kwargs)
    return call
