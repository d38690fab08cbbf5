"""Open one dashboard page in Streamlit's AppTest on a chosen sidebar table, shared by the
AppTests of the DBA controls (test_app_lazy, test_app_whatif_compare)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")


def open_page(page: str, table: str, timeout: float = 120) -> AppTest:
    """The app opened on ``table``, switched to ``app_pages/{page}.py``, with no exception."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["table"] = table
    at.run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at
