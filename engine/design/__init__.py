"""Whole-table physical design: how a table should be laid out at all.

Where :mod:`engine.policy` decides *which partitions to repair*, a design answers the
DBA's other question from the workload and the data: the partition column, the sort
scheme, the target file size and the row-group size (PTO, seed 002, in :mod:`.pto`).
The layer sits above :mod:`engine.layout` (it uses the orderings) and below
:mod:`engine.policy` (the ``pto`` policy proposes a design as a plan).
"""
