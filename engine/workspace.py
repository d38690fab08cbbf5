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

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Mapping

from engine.core.config import Settings, load_settings

if TYPE_CHECKING:
    from engine.plans.store import ControlStore
    from engine.table.store import TableStore
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
    def control(self) -> "ControlStore":
        from engine.plans.store import ControlStore
        return ControlStore(self.settings)

    def emit(self, event: str, table: str) -> None:
        """Tell the subscribers that ``event`` happened to ``table``."""
        self.events.emit(self, event, table)
