"""The dashboard as a Streamlit ``st.App``: :mod:`app.streamlit_app` plus a start-up hook.

``streamlit run app/server.py`` serves exactly ``streamlit_app.py`` (same pages, same
arguments); the difference is the lifespan hook, which at server start warms the process
once: it imports the engine and the libraries the pages use (``engine.api`` pulls
sqlglot, pandas...: seconds on two shared cores) before the first session can run, then,
in a background thread, decodes every table's workload log and stores or loads its
per-snapshot summaries
(:func:`engine.api.warm_summaries`), reading each table's current snapshot once. Without it the first browser visit pays all of that before its page draws anything
(Streamlit runs no app code before a session opens). The server accepts connections at
once the imports are done; a visit during the warm-up waits for the log it is decoding
(one decoding per process) and reads the summaries it stores.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any, AsyncIterator

import streamlit as st

SCRIPT = Path(__file__).resolve().parent / "streamlit_app.py"


def import_engine() -> None:
    """Import the engine and the libraries the pages use, before any session runs.

    Not in the background thread: plotly peeks at ``sys.modules["pandas"]`` without
    importing it, so a page drawn while another thread is still importing pandas meets a
    partially initialised module ("has no attribute 'Series'"; seen in the Chromium test).
    """
    import pandas  # noqa: F401, PLC0415
    import plotly.graph_objects  # noqa: F401, PLC0415

    from engine import api  # noqa: F401, PLC0415 - the slow import this hook exists to move
    # the pages' own modules (their charts register plotly's template): half a second of
    # every server's first visit otherwise
    from app import components, plan_service, services  # noqa: F401, PLC0415


def warm_up() -> None:
    """Warm every table's summaries (errors are left to the pages, which report them
    where the user looks)."""
    try:
        from engine import api  # noqa: PLC0415 - imported by import_engine already
        from engine.core.config import ENV_PREFIX, load_settings  # noqa: PLC0415

        env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIX)}
        settings = load_settings(environ=env)
        for table in api.list_tables(settings):
            # the log decoded first (once per process, the pages' first read), then the
            # summaries (which read it when they are computed)
            api.workload_distinct(settings, table["name"])
            api.warm_summaries(settings, table["name"])
    except Exception:  # noqa: BLE001 - a page shows the same error with its context
        pass


@contextlib.asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    import_engine()
    threading.Thread(target=warm_up, name="dashboard-warm-up", daemon=True).start()
    yield


app = st.App(str(SCRIPT), lifespan=lifespan)
