"""Data integrity under an adversary: gc racing a run, plans that
never wedge, unpublished metadata, and the commit's re-check of the files it adds."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine import api
from engine.core.errors import DataFileError
from engine.policy.base import PlanGroup
from engine.table import leases
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from plan_helpers import insert_plan, make_table, rows_of
from security_helpers import ROOT, SECRET, secret_file, sign_in

REPO = Path(__file__).resolve().parents[2]


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    env["PYTHONPATH"] = str(REPO)
    return env


def _cli(settings, *args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "--home", str(settings.home), *args],
                          env=_child_env(), capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path))


# -- gc against a running rewrite -----------------------------------------------------------
@pytest.mark.spark
def test_gc_from_another_process_between_verify_and_commit_loses_nothing(
        settings, spark, tmp_path):
    """The race the issue found: a forced zero-retention gc from another process lands
    after the run verified its files and before it commits. The run's folder is leased, so
    gc skips it; the commit succeeds and every row reads back."""
    base = make_table(settings, n=2000, rows_per_file=500)
    before = rows_of([p.path for p in base.partitions])
    chosen = tuple(p.path for p in base.partitions)
    pid = insert_plan(settings, base, [PlanGroup(chosen, "sort", ("l_shipdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="race")
    sign_in(settings, ROOT)
    gc_runs: list[subprocess.CompletedProcess] = []

    def gc_now(event):  # "group 1/1: ..." is reported after verification, before the commit
        if event["message"].startswith("group ") and not gc_runs:
            gc_runs.append(_cli(settings, "table", "gc", "lineitem", "--older-than", "0s",
                                "--force-retention", "--yes", "--as", ROOT, "--secret-file",
                                secret_file(tmp_path), "--json", tmp_path=tmp_path))

    result = api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark,
                          progress=gc_now)
    assert gc_runs and gc_runs[0].returncode == 0, gc_runs[0].stderr[-2000:]
    current = TableStore(settings).current_snapshot("lineitem")
    assert current.id == result["snapshot_id"] != base.id
    assert all(os.path.exists(p.path) for p in current.partitions)
    assert rows_of([p.path for p in current.partitions]).equals(before)
    # the run is over, its process still alive: the committed files stay referenced and
    # the inputs (now unreferenced) go with the next gc
    deleted = api.gc_table(settings, "lineitem", "0s", dry_run=False, force_retention=True,
                           actor=sign_in(settings, ROOT))
    assert set(deleted) >= set(chosen)
    assert rows_of([p.path for p in current.partitions]).equals(before)


def test_gc_skips_a_live_writers_folder_and_cleans_a_dead_ones(settings, tmp_path):
    base = make_table(settings, n=1000, rows_per_file=500)
    store = TableStore(settings)
    mine = store.new_data_dir("lineitem", "plan9-b0")  # leased to this (live) process
    shutil.copyfile(base.partitions[0].path, os.path.join(mine, "part-0.parquet"))
    child = subprocess.run(  # a writer that leases a folder, writes a file and is killed
        [sys.executable, "-c", _LEASE_AND_DIE, str(settings.home), base.partitions[0].path],
        env=_child_env(), capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    dead = child.stdout.strip()
    doomed = store.gc("lineitem", dt.timedelta(0), dry_run=False)
    assert doomed == [os.path.join(dead, "part-0.parquet")]
    assert os.path.exists(os.path.join(mine, "part-0.parquet"))
    assert not os.path.exists(dead) or os.listdir(dead) == []
    assert [lease.folder for lease in leases.read_all(store.table_dir("lineitem"))] == [mine]


_LEASE_AND_DIE = r"""
import os, shutil, signal, sys
from engine.core.config import load_settings
from engine.table.store import TableStore
out = TableStore(load_settings({"home": sys.argv[1]})).new_data_dir("lineitem", "plan8-b0")
shutil.copyfile(sys.argv[2], os.path.join(out, "part-0.parquet"))
print(out, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_commit_refuses_an_added_file_that_vanished_or_changed(settings):
    base = make_table(settings, n=1000, rows_per_file=500)
    store = TableStore(settings)
    out = store.new_data_dir("lineitem", "plan7-b0")
    copy = os.path.join(out, "part-0.parquet")
    shutil.copyfile(base.partitions[0].path, copy)
    _, added = read_partitions([copy], schema=base.schema)
    os.remove(copy)  # what the gc race used to do
    with pytest.raises(DataFileError, match="is gone"):
        store.commit("lineitem", base.id, [base.partitions[0].path], added, "recluster")
    shutil.copyfile(base.partitions[1].path, copy)  # another file under the same name
    with open(copy, "ab") as handle:
        handle.write(b"x")
    with pytest.raises(DataFileError, match="was verified at"):
        store.commit("lineitem", base.id, [base.partitions[0].path], added, "recluster")
    assert store.current_id("lineitem") == base.id


def test_gc_removes_metadata_of_a_snapshot_never_published(settings):
    base = make_table(settings, n=1000, rows_per_file=500)
    store = TableStore(settings)
    mdir = store.info("lineitem").metadata_dir
    ghost = ["snap-00000002.manifest.parquet", "snap-00000002.json", "current.tmp-1234abcd"]
    for name in ghost:  # what a commit killed before its pointer swap leaves
        Path(mdir, name).write_bytes(b"{}")
    assert sorted(os.path.basename(p) for p in store.gc("lineitem", dt.timedelta(days=7),
                                                      dry_run=True)) == sorted(ghost)
    store.gc("lineitem", dt.timedelta(days=7))
    assert not any(Path(mdir, name).exists() for name in ghost)
    assert store.current_id("lineitem") == base.id and Path(mdir, "snap-00000001.json").exists()


# -- plans never wedge ----------------------------------------------------------------------
_START_AND_DIE = r"""
import os, signal, sys
from engine import api
from engine.core.config import load_settings
from engine.plans import approval
from engine.workspace import Workspace
settings = load_settings({"home": sys.argv[1]})
approval.start(Workspace(settings), int(sys.argv[2]), api.authenticate(settings, "alice", sys.argv[3]))
os.kill(os.getpid(), signal.SIGKILL)  # the instant after "running": no other write happened
"""


def test_a_runner_killed_right_after_running_settles_as_failed(settings):
    """The wedge the issue found: killed between "running" and the job record, a plan
    stayed running for good. Both are one transaction now; the plan settles and reruns."""
    base = make_table(settings, n=1000, rows_per_file=500)
    chosen = tuple(p.path for p in base.partitions)
    pid = insert_plan(settings, base, [PlanGroup(chosen, "sort", ("l_shipdate",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="wedge")
    proc = subprocess.run([sys.executable, "-c", _START_AND_DIE, str(settings.home), str(pid),
                           SECRET], env=_child_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    shown = api.show_plan(settings, pid)
    assert shown.status == "failed", shown.status
    assert "died before committing" in shown.result["error"]
    assert [e["action"] for e in shown.audit][-2:] == ["run", "settle"]
    assert api.verify_audit(settings)["ok"]


def test_rollback_targets_leave_out_the_current_snapshot_and_its_twin(settings):
    base = make_table(settings, n=1000, rows_per_file=500)
    root = sign_in(settings, ROOT)  # the control store exists before any recluster
    store = TableStore(settings)
    out = store.new_data_dir("lineitem", "copy")
    copy = os.path.join(out, "part-0.parquet")
    shutil.copyfile(base.partitions[0].path, copy)
    _, added = read_partitions([copy], schema=base.schema)
    store.commit("lineitem", base.id, [base.partitions[0].path], added, "recluster")  # 2
    assert api.rollback_targets(settings, "lineitem") == ["1"]
    api.rollback_table(settings, "lineitem", "1", actor=root)  # 3 == 1
    assert api.rollback_targets(settings, "lineitem") == ["2"]  # never 1, the twin of 3
