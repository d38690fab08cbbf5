"""A running plan's heartbeat: how a reader on another host knows its runner is gone.

A reader on the runner's host asks the operating system whether the runner's pid lives
(:func:`engine.table.leases.pid_alive`); a reader on another host (a dashboard beside a
cluster's driver, two machines sharing one workspace) cannot. So the runner refreshes
``jobs.heartbeat_at`` every :data:`~engine.plans.store.HEARTBEAT_S` seconds from a daemon
thread while Spark works, and a reader elsewhere settles a plan whose heartbeat is older
than the ``runner_timeout_s`` setting (after looking whether its commit landed,
as for a dead local runner: :meth:`engine.plans.plan.PlanBook.get`).

A runner only slow to beat (a stalled JVM, a network partition) may find its plan settled
when it is about to commit: :meth:`Heartbeat.may_commit`, called just before the commit,
refuses then, so a plan reported failed never gains a commit afterwards.
"""

from __future__ import annotations

from engine.core.errors import ExecutionError
from engine.core.periodic import Periodic
from engine.plans import store as control_store
from engine.plans.plan import RUNNING
from engine.plans.store import ControlStore


class Heartbeat(Periodic):
    """Beats for ``plan_id`` while the ``with`` block runs (a daemon thread); ``timeout_s``
    is the workspace's ``runner_timeout_s`` (named in the refusal of :meth:`may_commit`)."""

    def __init__(self, control: ControlStore, plan_id: int, timeout_s: float,
                 interval_s: float | None = None) -> None:
        self.control, self.plan_id, self.timeout_s = control, int(plan_id), float(timeout_s)
        super().__init__(lambda: control.heartbeat(self.plan_id),
                         control_store.HEARTBEAT_S if interval_s is None else interval_s,
                         f"la-heartbeat-{plan_id}")

    def may_commit(self) -> None:
        """Beat once more and refuse (ExecutionError) when the plan is no longer running:
        a reader took this runner for gone and settled the plan meanwhile."""
        status = self.control.heartbeat(self.plan_id)
        if status != RUNNING:
            raise ExecutionError(
                f"plan {self.plan_id} was settled as {status} while it ran (its runner was "
                f"taken for gone after {self.timeout_s:.0f} s without a heartbeat, the "
                "runner_timeout_s setting); nothing was committed")
