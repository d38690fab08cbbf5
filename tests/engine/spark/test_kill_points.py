"""Kill points of a run's commit: SIGINT (to the process, or to its process group as a
terminal's Ctrl-C sends it), SIGTERM and SIGKILL, before the commit, inside it (before and
right after the format's atomic write) and right after it, on Iceberg (pyiceberg's SQL
catalog), Delta (deltalake) and the native chain.

After every kill, what a user checks: the table is at its previous snapshot or at the new
one (never anything else), the format's own reader (pyiceberg, delta-rs; for the native chain
the files its snapshot names) and the advisor's snapshot read the same rows as before the
run, every file the current snapshot names exists, and the plan says what happened
(``failed`` with nothing committed, or ``succeeded`` with the committed snapshot). A commit
that happened is never undone by a cleanup: this is what deleted committed files before
SIGINT and SIGTERM were deferred across the commit.

The victim is ``plan run`` through the plan service and the executor, with Spark's work
replaced by byte copies (:mod:`kill_victim`), forked from one server process per format so
that the imports are paid once; the signal lands on a named pause point, not on a timer.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import format_tables
import kill_victim
from engine.policy.base import PlanGroup
from engine.table import fs
from engine.table.store import TableStore
from engine.workspace import Workspace
from format_tables import NAME
from plan_helpers import insert_plan

REPO = Path(__file__).resolve().parents[3]

INT, TERM, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGKILL
#: (where the signal lands, the signal, sent to the process group?). The moments: the
#: executor before the commit; the format before its write (inside the deferred section);
#: the format right after its write returned (still inside); the executor right after the
#: commit was recorded (outside the section). SIGKILL before the commit is
#: tests/e2e/test_crash.py's; the process group matters where the commit is near.
CASES = [("after_verify", INT, False), ("after_verify", TERM, False),
         ("mid_commit", INT, False), ("mid_commit", TERM, False), ("mid_commit", KILL, False),
         *[(moment, signum, group) for moment in ("published", "after_commit")
           for signum, group in ((INT, False), (INT, True), (TERM, False), (KILL, False))]]
#: the moments inside the deferred section: the run goes on after the signal
DEFERRED = ("mid_commit", "published")


def expected(moment: str, signum: int) -> str:
    """Which snapshot the table must be at: "new" once the write is inevitable (SIGINT and
    SIGTERM inside the section wait for it) or done; "old" otherwise."""
    if moment == "after_verify":
        return "old"
    if moment == "mid_commit":
        return "old" if signum == signal.SIGKILL else "new"
    return "new"


class Server:
    """The fork server of :mod:`kill_victim`, one per test."""

    def __init__(self, cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LAYOUT_ADVISOR_", "LA_"))}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "tests" / "helpers")])
        self.proc = subprocess.Popen([sys.executable, kill_victim.__file__], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=str(cwd), bufsize=1)
        self.err: list[str] = []
        assert self._line(self.proc.stdout, 300) == "ready", self._errors()

    def _line(self, stream, timeout_s: float = 120.0) -> str:
        ready, _, _ = select.select([stream], [], [], timeout_s)
        assert ready, f"no answer in {timeout_s} s: {self._errors()}"
        return stream.readline().strip()

    def _errors(self) -> str:
        return "".join(self.err)[-3000:]

    def wait_for(self, text: str) -> None:
        """Read the runs' stderr until a line holding ``text``."""
        while True:
            line = self._line(self.proc.stderr)
            self.err.append(line + "\n")
            if text in line:
                return
            assert "run failed" not in line and "run interrupted" not in line, self._errors()

    def run(self, home: str, plan_id: int, pause: str, signum: int, group: bool) -> int:
        """Fork one run paused at ``pause``, signal it there, let it go on; its status."""
        self.proc.stdin.write(json.dumps({"home": home, "plan": plan_id, "pause": pause}) + "\n")
        self.proc.stdin.flush()
        child = json.loads(self._line(self.proc.stdout))["child"]
        self.wait_for(f"paused at {pause}")
        (os.killpg if group else os.kill)(child, signum)
        # inside the deferred section the run must go on to the commit; elsewhere it stays
        # paused until the signal itself ends the pause (a KeyboardInterrupt) or the process
        resume = pause in DEFERRED and signum != KILL
        self.proc.stdin.write("resume\n" if resume else "wait\n")
        self.proc.stdin.flush()
        status = json.loads(self._line(self.proc.stdout))["status"]
        while True:  # whatever the run said after the pause
            ready, _, _ = select.select([self.proc.stderr], [], [], 0.2)
            if not ready:
                return status
            self.err.append(self.proc.stderr.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _run_files(settings, plan_id: int) -> list[str]:
    """The files left in the folder(s) plan ``plan_id``'s run wrote into."""
    root = fs.local_path(TableStore(settings).data_root(NAME))
    return [os.path.join(d, n) for d, _, names in os.walk(root)
            if f"/plan{plan_id}-b" in d + "/" for n in names]


def _tool_rows(settings) -> tuple[int, str]:
    """The rows of the advisor's current snapshot, read from the files it names."""
    snap = TableStore(settings).current_snapshot(NAME)
    return format_tables.digest(pa.concat_tables(
        [pq.read_table(fs.local_path(p.path)) for p in snap.partitions]))


@pytest.mark.parametrize("fmt", ["iceberg", "delta", "native"])
def test_no_kill_point_loses_a_committed_file(fmt, settings, tmp_path):
    format_tables.make(fmt, settings, tmp_path, n=40, per_file=10)
    rows = format_tables.read(fmt, settings)
    home = str(settings.home)
    server = Server(tmp_path)
    try:
        for moment, signum, group in CASES:
            case = f"{fmt} {signal.Signals(signum).name}{' (group)' if group else ''} at {moment}"
            before = TableStore(settings).current_snapshot(NAME)
            chosen = tuple(p.path for p in before.partitions[:2])
            pid = insert_plan(settings, before, [PlanGroup(chosen, "sort", ("l_shipdate",),
                                                           "kill")])
            book = Workspace(settings).plans
            book.move(pid, ("proposed",), "approved", "tester", "approve", "kill test")

            status = server.run(home, pid, moment, signum, group)

            # SIGINT: KeyboardInterrupt (exit 130); SIGTERM and SIGKILL end the process
            assert status == (130 if signum == INT else -signum), (case, status, server._errors())
            now = TableStore(settings).current_snapshot(NAME)
            lands = "old" if now.id == before.id else "new"
            assert lands == expected(moment, signum), case
            if lands == "new":  # the plan's own commit, on top of the base
                assert str(now.summary.get("plan_id", now.summary.get("la.plan-id"))) == str(pid)
            missing = [p.path for p in now.partitions if not fs.exists(p.path)]
            assert missing == [], (case, missing[:3])
            assert format_tables.read(fmt, settings) == rows, case  # the format's reader
            assert _tool_rows(settings) == rows, case  # the advisor's snapshot
            plan = Workspace(settings).plans.get(pid)  # a dead runner is settled here
            assert plan.status == ("succeeded" if lands == "new" else "failed"), \
                (case, plan.status, plan.result)
            if lands == "old" and signum == INT:  # the interrupted run removed its files
                assert _run_files(settings, pid) == [], case
            if lands == "new":  # the committed files are all there, the snapshot recorded
                assert len(_run_files(settings, pid)) == 2, case
                assert plan.result["snapshot_id"] == now.id, case
            if lands == "new" and signum == INT:  # the run itself recorded the commit
                assert "KeyboardInterrupt" in plan.result["error"], case
    finally:
        server.close()
