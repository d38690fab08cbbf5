"""Crash safety: SIGKILL a real writer at each step, for the native,
Iceberg and Delta formats, then check what a user would: the table reads exactly its
previous (or, once published, its new) snapshot, same rows and content hash through the
format's own reader; the plan settles (failed with the reason, or succeeded when the
commit was published); ``gc`` removes every orphan the dead writer left (data files, and
the native metadata of a snapshot that was never published); and a new commit goes through.

The kills are deterministic: :func:`engine.core.faults.crash_point` sends SIGKILL at the
named step when ``LA_CRASH_AT`` says so. Two kinds of victim, to keep the suite
fast: ``plan run`` through the CLI with Spark (the steps of the executor), and a
small Python process committing copied files through the table's format
(:mod:`crash_helpers`: the steps inside a commit, which Spark takes no part in).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import api
from engine.core.faults import CRASH_ENV
from engine.policy.base import PlanGroup
from engine.table import fs, orphans
from engine.table.formats import iceberg
from engine.table.store import TableStore
import format_tables
from crash_helpers import commit_copies
from format_tables import NAME
from plan_helpers import insert_plan
from security_helpers import ROOT, secret_file, sign_in

REPO = Path(__file__).resolve().parents[2]


_make, _read = format_tables.make, format_tables.read


def _files_left(settings) -> tuple[set[str], set[str]]:
    """(data files under the table's data location, files its current snapshot names)."""
    store = TableStore(settings)
    root = store.format(NAME).data_location()
    current = {fs.normalize(p.path) for p in store.current_snapshot(NAME).partitions}
    return {fs.normalize(p) for p in fs.list_files(root)}, current


def _env(point: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAYOUT_ADVISOR_")}
    env.update({CRASH_ENV: point, "PYTHONPATH": str(REPO)})
    return env


def _gc_everything(settings) -> list[str]:
    return api.gc_table(settings, NAME, "0s", dry_run=False, force_retention=True,
                        actor=sign_in(settings, ROOT))


def _metadata_orphans(settings) -> list[str]:
    """Iceberg metadata files no version of the table names (none for other formats)."""
    store = TableStore(settings)
    fmt = store.format(NAME)
    if not isinstance(fmt, iceberg.IcebergFormat):
        return []
    return orphans.metadata_orphans(fmt.table(), time.time() + 60)


def _no_orphans(settings) -> None:
    on_disk, current = _files_left(settings)
    assert on_disk == current, sorted(on_disk ^ current)[:3]
    assert _metadata_orphans(settings) == []
    store = TableStore(settings)
    if store.info(NAME).format == "native":  # no metadata of an unpublished snapshot
        top = int(store.current_id(NAME))
        mdir = store.info(NAME).metadata_dir
        stray = [f for f in os.listdir(mdir) if f.startswith("snap-")
                 and int(f[5:13]) > top or ".tmp-" in f]
        assert stray == []


# -- SIGKILL during `plan run` (Spark) -----------------------------------------------------
SPARK_CASES = [  # (format, point, the snapshot the table must be at, the plan's status)
    ("native", "after_read", "base", "failed"),  # a Hilbert group: its sample job read the data
    ("native", "mid_write", "base", "failed"),
    ("native", "after_write", "base", "failed"),
    ("native", "after_verify", "base", "failed"),
    ("native", "after_commit", "new", "succeeded"),
    ("iceberg", "mid_write", "base", "failed"),
    ("iceberg", "after_verify", "base", "failed"),
    ("delta", "after_commit", "new", "succeeded"),
]


def _wait_for_group(pgid: int, timeout_s: float = 120.0) -> None:
    """Wait until no process of the killed runner's process group is left (its Spark JVM
    notices the dead driver, aborts the job and exits on its own)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise AssertionError(f"processes of group {pgid} still run {timeout_s} s after the kill")


def _run_output(settings, pid: int) -> list[str]:
    """Every file (hidden ones and Spark's ``_temporary`` attempts included) under the
    folders plan ``pid``'s run wrote into."""
    root = fs.local_path(TableStore(settings).data_root(NAME))  # Iceberg's is a URI
    assert os.path.isdir(root), root
    out = []
    for dirpath, _, names in os.walk(root):
        if f"/plan{pid}-b" in dirpath + "/":
            out.extend(os.path.join(dirpath, n) for n in names)
    return out


@pytest.mark.spark
@pytest.mark.parametrize("fmt,point,lands_on,status", SPARK_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in SPARK_CASES])
def test_sigkill_during_plan_run(fmt, point, lands_on, status, settings, spark, tmp_path):
    base = _make(fmt, settings, tmp_path)
    before = _read(fmt, settings)
    chosen = tuple(p.path for p in base.partitions[:3])
    group = (PlanGroup(chosen, "hilbert", ("l_shipdate", "l_commitdate"), "test")
             if point == "after_read" else PlanGroup(chosen, "sort", ("l_shipdate",), "test"))
    pid = insert_plan(settings, base, [group])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="crash test")
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "--home", str(settings.home), "--spark-master",
         "local[1]", "plan", "run", str(pid), "--as", "alice",
         "--secret-file", secret_file(tmp_path)],
        env=_env(point), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=str(tmp_path), start_new_session=True)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, stderr[-2000:]
    _wait_for_group(proc.pid)  # Spark's JVM outlives the driver briefly: let it go first
    if point == "after_verify":  # the group was written and verified before the kill
        assert "[1/1]" in stderr
    if point == "mid_write":  # killed while Spark's job ran, a file of it on disk
        assert "crash point mid_write (during the step)" in stderr, stderr[-2000:]
    left = _run_output(settings, pid)
    if point != "mid_write":  # (the JVM aborts its write job as it exits, removing some)
        assert bool(left) == (point != "after_read"), left[:3]  # the kill left what it wrote

    store = TableStore(settings)
    current = store.current_snapshot(NAME)
    assert (current.id == base.id) == (lands_on == "base")
    assert _read(fmt, settings) == before  # same rows, same content, whichever snapshot
    shown = api.show_plan(settings, pid)  # the dead runner is settled on the next read
    assert shown.status == status, shown
    reason = (shown.result or {}).get("error" if status == "failed" else "note", "")
    assert "runner pid" in reason
    if status == "failed":
        assert "died before committing" in reason

    _gc_everything(settings)
    _no_orphans(settings)
    if lands_on == "base":  # nothing of the dead run is left, not even Spark's attempts
        assert _run_output(settings, pid) == []
    assert _read(fmt, settings) == before
    if point != "after_write":  # one rerun proves the point; each costs a Spark job
        return
    # not wedged: a new plan on the current snapshot runs to the end
    current = store.current_snapshot(NAME)
    again = tuple(p.path for p in current.partitions[-2:])
    pid2 = insert_plan(settings, current, [PlanGroup(again, "sort", ("l_commitdate",), "t")])
    api.approve_plan(settings, pid2, sign_in(settings, "alice"), reason="after the crash")
    api.run_plan(settings, pid2, actor=sign_in(settings, "alice"), spark=spark)
    assert api.show_plan(settings, pid2).status == "succeeded"
    assert _read(fmt, settings) == before


# -- SIGKILL inside a commit (no Spark: copied files committed through the format) ----------
COMMIT_CASES = [("native", "mid_commit"), ("native", "before_pointer"),
                ("iceberg", "mid_commit"), ("delta", "mid_commit")]


def _commit_in_child(settings, point: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "helpers" / "crash_helpers.py"),
                           str(settings.home), NAME],
                          env=_env(point), capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path))


@pytest.mark.parametrize("fmt,point", COMMIT_CASES, ids=[f"{f}-{p}" for f, p in COMMIT_CASES])
def test_sigkill_inside_a_commit(fmt, point, settings, tmp_path):
    base = _make(fmt, settings, tmp_path)
    before = _read(fmt, settings)
    proc = _commit_in_child(settings, point, tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    store = TableStore(settings)
    assert store.current_id(NAME) == base.id  # nothing published
    assert _read(fmt, settings) == before
    on_disk, current = _files_left(settings)
    assert len(on_disk - current) == 2  # the dead writer's copies, referenced by nothing
    if fmt == "iceberg":  # and its manifests and manifest list, never published
        assert len(_metadata_orphans(settings)) >= 2
    dry = api.gc_table(settings, NAME, "0s", dry_run=True, force_retention=True)
    assert {fs.normalize(p) for p in dry} >= on_disk - current
    _gc_everything(settings)
    _no_orphans(settings)
    assert _read(fmt, settings) == before
    # not wedged: the same commit, not crashing this time, publishes the next snapshot
    commit_copies(str(settings.home), NAME)
    assert store.current_id(NAME) != base.id and _read(fmt, settings) == before
