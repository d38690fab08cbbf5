"""Whole-table layout design (issue 12: PAW; PTO joins at merge).

Sits between ``layout`` and ``policy``: a designer builds a partitioning of a table from
its data and workload (using ``layout`` orderings such as the greedy Qd-tree), and a policy
turns the design into a plan.
"""
