"""The one façade the dashboard and the CLI call.

Open a workspace once (:func:`open_workspace`: one per CLI command, one per dashboard
session) and pass it first to every function: ``ws = api.open_workspace(); api.analyze(ws,
"lineitem")``. Tests and scripts may pass :class:`~engine.core.config.Settings` instead
(:func:`engine.workspace.as_workspace`). Each area lives in its own module (``tables``,
``workload``, ``analysis``, ``plans``, ``whatif``, ``security``, ``calibration``; typed
answers in ``results``); this package re-exports their public names (each module's
``__all__``).
"""

from __future__ import annotations

from typing import Any, Mapping

from engine.api import analysis, calibration, plans, results, security, tables, whatif, workload
from engine.api.analysis import *  # noqa: F401,F403 - the façade re-exports its modules
from engine.api.calibration import *  # noqa: F401,F403
from engine.api.plans import *  # noqa: F401,F403
from engine.api.results import *  # noqa: F401,F403
from engine.api.security import *  # noqa: F401,F403
from engine.api.tables import *  # noqa: F401,F403
from engine.api.whatif import *  # noqa: F401,F403
from engine.api.workload import *  # noqa: F401,F403
from engine.workspace import Workspace, as_workspace


def open_workspace(home: str | None = None, overrides: Mapping[str, Any] | None = None,
                   environ: Mapping[str, str] | None = None) -> Workspace:
    """The workspace of ``home``: its settings (defaults < file < environment <
    ``overrides``) and its stores, each built at most once (:meth:`Workspace.open`)."""
    return Workspace.open(home, overrides, environ)


__all__ = ["open_workspace", "Workspace", "as_workspace", *tables.__all__, *workload.__all__,
           *analysis.__all__, *plans.__all__, *whatif.__all__, *security.__all__,
           *calibration.__all__, *results.__all__]
