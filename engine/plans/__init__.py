"""The plan lifecycle: a policy's proposal stored, approved, run on Spark and measured.

``plan`` (a plan and its states), ``approval`` (approve, reject, start a run, as the
gate of :mod:`engine.security` allows), ``store`` (plans, job progress, policy state in the
control database; each change audited in the same transaction),
``feedback`` (realized vs predicted savings; policy state loaded and saved), ``service``
(create / preview / run: the one owner of a decision's window and of policy state; each
function takes the :class:`~engine.workspace.Workspace`), ``ports`` (the :class:`Executor`
protocol the service runs plans through; the workspace wires Spark's).
"""
