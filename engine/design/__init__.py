"""Whole-table physical design: how a table should be laid out at all.

Where :mod:`engine.policy` decides *which partitions to repair*, a design answers the
DBA's other question from the workload and the data: a partitioning robust to workloads
that drift (PAW, :mod:`.paw`) or the partition column, sort scheme, target file
size and row-group size predicted from sampled layouts (PTO, :mod:`.pto`).
The layer sits above :mod:`engine.layout` (it uses the orderings, e.g. the greedy
Qd-tree) and below :mod:`engine.policy` (the ``paw`` and ``pto`` policies turn a design
into a plan).
"""
