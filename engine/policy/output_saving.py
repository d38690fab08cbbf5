"""A whole-table design's predicted saving, priced at the shape the executor writes.

PAW (seed 001) and PTO (seed 002) choose a whole-table layout by their own objectives (PAW's
accessed rows of δ-similar queries, PTO's labelled scan cost) and propose it as one group
whose saving they leave unpriced (``window_queries`` 0,
:func:`engine.policy.baselines.whole_table_proposal`). The plan still promises something:
the window's queries read less from the rewritten files. That figure is the output check's
(:func:`engine.policy.output_check.check_output`: the window scored on the files before and
on the files the executor writes, row groups included when the scan analysis charges them,
``settings.prune_row_groups``), so it is the plan's predicted saving, the one the run's
realized saving is judged against (:mod:`engine.plans.delivery`).

A design with a physical partition column (``partition_by``) is left unpriced: the zonemap
prediction does not model partition directories, and a saving it cannot see is not promised.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from engine.policy.costmodel import money, scan_seconds

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.policy.base import Proposal
    from engine.policy.output_check import OutputCheck

__all__ = ["priced_by_output"]


def priced_by_output(proposal: "Proposal", check: "OutputCheck", window_queries: int,
                     settings: "Settings") -> "Proposal":
    """``proposal`` with the output check's saving as its predicted saving when its policy
    priced none; else ``proposal`` unchanged.

    Bytes: ``check.bytes_before - check.bytes_after`` over the ``window_queries`` queries;
    CPU-seconds: those bytes at the query scan rate (:func:`engine.policy.costmodel.scan_seconds`);
    break-even: the rewrite's CPU-seconds over the saving per query. A one-group proposal's
    group carries the same bytes (``predicted_saving_bytes``)."""
    if (proposal.predicted_saving.get("window_queries") or window_queries <= 0
            or not check.delivers
            or any((g.layout_params or {}).get("partition_by") for g in proposal.groups)):
        return proposal
    saved = float(check.bytes_before - check.bytes_after)
    seconds = scan_seconds(saved, settings)
    groups = proposal.groups
    if len(groups) == 1:
        groups = (dataclasses.replace(groups[0], predicted_saving_bytes=saved),)
    cost = float(proposal.estimated_cost.cpu_seconds)
    return dataclasses.replace(
        proposal, groups=groups,
        predicted_saving={"bytes": saved, "cpu_seconds": seconds, "money": money(seconds, settings),
                          "window_queries": float(window_queries)},
        break_even_queries=cost / (seconds / window_queries) if seconds > 0 else None,
        details={**proposal.details, "saving_from": "output check"})
