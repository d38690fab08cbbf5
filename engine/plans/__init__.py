"""The plan lifecycle: a policy's proposal stored, approved, run on Spark and measured.

``plan`` (a plan and its states), ``gate`` (who may approve, reject, run or roll back),
``store`` (the SQLite control store: plans, audit log, job progress, policy state),
``feedback`` (realized vs predicted savings; policy state loaded and saved), ``service``
(create / preview / run: the one owner of a decision's window and of policy state).
"""
