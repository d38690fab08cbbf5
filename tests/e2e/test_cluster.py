"""A plan runs through a Spark standalone cluster (master + one worker on 127.0.0.1).

The master and the worker are started with the ``spark-class`` launcher shipped inside the
pyspark package; the plan runs in a subprocess (``layout-advisor --spark-master spark://...
plan run ID``) because a test session may already hold a local SparkSession. Both daemons
are stopped in a ``finally``, whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine import api
from engine.policy.base import PlanGroup
from engine.table.store import TableStore
from plan_helpers import insert_plan, make_table, rows_of
from security_helpers import secret_file, sign_in

pytestmark = pytest.mark.cluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class() -> Path:
    import pyspark  # costly import, only when a cluster test runs

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    handle = open(log, "w")
    return subprocess.Popen([str(_spark_class()), *args], stdout=handle, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the group this test created for the daemon
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def _master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as resp:
        return json.loads(resp.read().decode())


def _wait_for_worker(ui_port: int, master: subprocess.Popen, logs: Path,
                     timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if master.poll() is not None:
            raise AssertionError("master exited:\n" + (logs / "master.log").read_text()[-3000:])
        try:
            state = _master_state(ui_port)
            if state.get("aliveworkers", 0) >= 1 or any(
                    w.get("state") == "ALIVE" for w in state.get("workers", [])):
                return
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError("no worker registered:\n" + (logs / "worker.log").read_text()[-3000:])


def test_plan_runs_on_a_standalone_cluster(settings, tmp_path):
    base = make_table(settings, n=3000, rows_per_file=500)
    before_rows = rows_of([p.path for p in base.partitions])
    paths = [p.path for p in base.partitions]
    pid = insert_plan(settings, base, [
        PlanGroup(tuple(paths[:3]), "sort", ("l_shipdate",), "sort on the cluster"),
        PlanGroup(tuple(paths[3:]), "hilbert", ("l_shipdate", "l_commitdate"),
                  "mapInArrow on the cluster's Python workers")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"))

    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(logs), SPARK_WORKER_DIR=str(logs))
    env.pop("SPARK_HOME", None)
    master = worker = None
    try:
        master = _start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui_port)],
                        logs / "master.log", env)
        time.sleep(2)
        worker = _start(["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                         "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                         "--webui-port", str(worker_ui), "--work-dir", str(logs / "work")],
                        logs / "worker.log", env)
        _wait_for_worker(ui_port, master, logs)
        run_env = dict(env, LAYOUT_ADVISOR_SPARK_DRIVER_MEMORY="768m")
        proc = subprocess.run(
            [sys.executable, "-m", "engine", "--home", str(settings.home), "--spark-master",
             f"spark://127.0.0.1:{port}", "plan", "run", str(pid), "--as", "alice",
             "--secret-file", secret_file(tmp_path), "--json"],
            env=run_env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        shown = json.loads(proc.stdout)
        assert shown["status"] == "succeeded"
        # it really ran as an application of this master
        apps = _master_state(ui_port).get("completedapps", []) + \
            _master_state(ui_port).get("activeapps", [])
        assert any(a.get("name") == "layout-advisor" for a in apps), apps
    finally:
        _stop(worker)
        _stop(master)
    store = TableStore(settings)
    after = store.current_snapshot("lineitem")
    assert after.id == shown["result"]["snapshot_id"] and after.summary["plan_id"] == pid
    assert rows_of([p.path for p in after.partitions]).equals(before_rows)
    assert {p.path for p in after.partitions}.isdisjoint(paths)
    assert [g["layout"] for g in shown["result"]["groups"]] == ["sort", "hilbert"]
