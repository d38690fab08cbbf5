"""The dashboard on a workspace whose ``control.db`` is gone beside a reclustered table.

The control store refuses to create itself afresh there (the plans and audit log behind the
reclustered snapshots would be silently lost, ``engine.security.db.ControlDB``). The
dashboard used to stop on that error in its sidebar's sign-in box, so no page opened,
not even the read-only ones (found by review7 while benchmarking). Every page must open,
the sidebar must say what is missing and what to do, and nothing may be created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine import api
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from plan_helpers import insert_plan, make_table

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")
PAGES = ("partitions", "workload", "recommendation", "approve_run", "whatif", "design", "audit")


@pytest.fixture
def orphaned(settings, monkeypatch):
    """A table with a recluster snapshot (as a plan run commits it), then control.db removed."""
    snap = make_table(settings, n=1000, rows_per_file=250)
    log = settings.home.parent / "q.sql"
    log.write_text("".join(f"SELECT l_quantity FROM lineitem WHERE l_orderkey BETWEEN {lo} AND "
                           f"{lo + 99};\n" for lo in (0, 300, 700)))
    assert api.import_workload(settings, "lineitem", str(log))["fragments"] == 3
    pid = insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                                  ("l_shipdate",), "t")])
    first = snap.partitions[0]
    TableStore(settings).commit(snap.table, snap.id, [first.path], [first], "recluster",
                                {"plan_id": pid})
    for suffix in ("", "-wal", "-shm"):
        settings.control_db.with_name("control.db" + suffix).unlink(missing_ok=True)
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(settings.home))
    return settings


def _sidebar_errors(at: AppTest) -> list[str]:
    return [e.value for e in at.sidebar.error]


def test_every_page_opens_and_the_sidebar_says_control_db_is_missing(orphaned):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["table"] = "lineitem"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # the read-only overview still shows the table's numbers
    assert at.title[0].value == "Overview"
    assert [m for m in at.metric if m.label == "Bytes scanned"]
    assert [m for m in at.metric if m.label == "Average depth"]
    (problem,) = _sidebar_errors(at)
    assert "unavailable" in problem and "control.db is missing" in problem
    assert "lineitem" in problem and "restore control.db from a backup" in problem
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert any("control.db is missing" in e for e in _sidebar_errors(at)), page
    assert not orphaned.control_db.exists()  # the dashboard created nothing

