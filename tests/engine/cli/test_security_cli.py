"""What a user sees of the trust rules on the command line: a named proposer signs
in, an old ``approvers = [...]`` gets a migration line instead of a refusal, the dashboard
binds this machine only unless told otherwise (with a warning), refuses a taken port, and
SIGTERM to ``layout-advisor ui`` frees its port and leaves no process behind."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine import api
from engine.cli import main
from engine.cli.ui import DEFAULT_ADDRESS, exposure_warning, streamlit_command, wait_until_ready
from engine.core.errors import ApprovalError
from engine.policy.base import PlanGroup
from plan_helpers import insert_plan, make_table
from security_helpers import ensure_account, secret_file, sign_in

REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_plan_create_as_a_name_signs_in_and_that_name_cannot_approve(settings, tmp_path, capsys):
    snap = make_table(settings, n=4000, rows_per_file=500)
    ensure_account(settings, "alice")
    home = str(settings.home)
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "dd", "--key",
                 "l_shipdate", "--as", "alice", "--secret-file", str(tmp_path / "nope")]) == 2
    assert "--secret-file" in capsys.readouterr().err
    assert api.list_plans(settings, "lineitem") == []  # refused before anything was stored
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "dd", "--key",
                 "l_shipdate", "--as", "alice", "--secret-file", secret_file(tmp_path),
                 "--json"]) == 0
    plans = api.list_plans(settings, "lineitem")
    assert plans and plans[-1].created_by == "alice" and snap.id == plans[-1].base_snapshot
    with pytest.raises(ApprovalError, match="'alice' proposed plan .* cannot approve it"):
        api.approve_plan(settings, plans[-1].id, sign_in(settings, "alice"))


def test_an_old_approvers_list_gets_one_migration_line_and_the_command_runs(settings, capsys):
    make_table(settings, n=1000, rows_per_file=500)
    (Path(settings.home) / "layout-advisor.toml").write_text('approvers = ["alice", "bob"]\n')
    assert main(["--home", str(settings.home), "table", "list"]) == 0
    out, err = capsys.readouterr()
    assert "lineitem" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("layout-advisor: warning: ")
    assert "`approvers = [...]` is ignored" in lines[0] and "approvers add NAME" in lines[0]


def test_ui_binds_this_machine_by_default_and_warns_when_exposed(settings, capsys):
    cmd = streamlit_command(8501, None, None)
    assert not any(a.startswith("--server.address") for a in cmd)  # the caller decides
    assert DEFAULT_ADDRESS == "127.0.0.1" and exposure_warning("127.0.0.1") is None
    assert "0.0.0.0" in exposure_warning("0.0.0.0")


def test_ui_refuses_a_port_in_use_before_starting_anything(settings, capsys):
    settings.home.mkdir(parents=True, exist_ok=True)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["--home", str(settings.home), "ui", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"--port {port}: 127.0.0.1:{port} is not available" in err


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_to_ui_stops_streamlit_and_frees_the_port(settings, tmp_path):
    settings.home.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen([sys.executable, "-m", "engine", "--home", str(settings.home), "ui",
                             "--port", str(port), "--address", "0.0.0.0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert wait_until_ready(port, timeout_s=180, process=proc), proc.stderr.read()
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert children  # the Streamlit server, in its own process group
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = proc.stderr.read()
    assert "warning: the dashboard listens on 0.0.0.0" in err
    deadline = time.monotonic() + 10
    while any(_group_alive(int(c)) for c in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_group_alive(int(c)) for c in children)  # Streamlit and all it started
    with socket.socket() as probe:  # the port is free again (for a server, as Streamlit binds)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("0.0.0.0", port))
        probe.listen(1)


def test_the_dashboards_audit_page_shows_the_log_and_a_broken_chain(settings):
    """The audit page (app/app_pages/audit.py) under Streamlit's AppTest: entries newest
    first with a Markdown-looking reason shown as plain text; an edit made in SQLite behind
    the store's back turns the banner into an error naming the problem."""
    snap = make_table(settings, n=1000, rows_per_file=500)
    pid = insert_plan(settings, snap, [PlanGroup((snap.partitions[0].path,), "sort",
                                                 ("l_shipdate",), "t")])
    evil = "![x](http://evil.example/a.png) **bold**"
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason=evil)
    app = str(REPO / "app" / "streamlit_app.py")

    def open_audit() -> AppTest:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        at.switch_page("app_pages/audit.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    at = open_audit()
    assert at.title[0].value == "Audit log" and "intact" in at.success[0].value
    entries = next(f.value for f in at.dataframe if "action" in f.value.columns)
    assert list(entries["action"])[0] == "approve" and "create" in list(entries["action"])
    assert list(entries["id"]) == sorted(entries["id"], reverse=True)  # newest first
    assert list(entries["reason"])[0] == evil  # the raw text, in a table cell
    assert not any("evil.example" in m.value for m in at.markdown)
    with sqlite3.connect(settings.home / "control.db") as conn:
        conn.execute("DROP TRIGGER audit_no_update")
        conn.execute("UPDATE audit SET actor = 'mallory' WHERE action = 'approve'")
    at = open_audit()
    assert at.error and "tampered" in at.error[0].value
    problems = next(f.value for f in at.dataframe if "problem" in f.value.columns)
    assert len(problems) >= 1
