"""What the plan service needs from the layers that do the work, as protocols.

The service (:mod:`engine.plans.service`) owns a plan's life; rewriting the files is an
executor's job. The service depends on :class:`Executor` only; the workspace wires the
implementation (:attr:`engine.workspace.Workspace.executor`: the Spark executor,
:class:`engine.spark.executor.SparkExecutor`), so plans never imports an engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from engine.plans.plan import Plan

__all__ = ["Executor", "ProgressFn"]

#: called with each progress event: ``groups_done``, ``groups_total``, ``rows``, ``bytes``,
#: ``message``
ProgressFn = Callable[[Mapping[str, Any]], None]


class Executor(Protocol):
    """Rewrites a plan's groups and commits one snapshot (or one per batch of groups).

    The executor owns the files, the caller the plan's state transitions: it checks the plan
    against the table's current snapshot, writes, verifies and commits, and on any failure
    removes what it wrote and has not committed before re-raising.
    """

    def execute_plan(self, plan: "Plan", spark: Any = None, progress: ProgressFn | None = None,
                     approvers: Sequence[str] = (),
                     may_commit: Callable[[], None] | None = None) -> dict[str, Any]:
        """Run ``plan``; returns its result (``snapshot_id``, ``groups``, ``measured``, ...).

        ``spark``: a session to reuse (None: the executor starts its own when it needs one);
        ``progress``: called as the work advances; ``approvers``: recorded with the commit;
        ``may_commit()``: called just before each commit, raises to stop it. A cancel request
        raises :class:`engine.spark.progress.RunCancelled` after the same cleanup."""
        ...

    def verify_sample(self, plan: "Plan", indices: Sequence[int], fragments: Sequence[Any],
                      spark: Any = None) -> Any:
        """Rewrite the groups ``indices`` of ``plan`` into a scratch folder exactly as the
        run would (never committed, removed afterwards) and measure ``fragments`` on their
        inputs and outputs (:class:`engine.spark.verify_sample.SampleMeasure`)."""
        ...
