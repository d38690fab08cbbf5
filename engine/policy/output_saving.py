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

A policy that priced its own saving (WAIR's equation 3, DD's depth) is held to the same
figure from above (:func:`capped_by_output`): when the output check, which scores the
window on the files the executor will write, losses included, finds less than the policy
predicted, the plan promises the check's figure, the one its run is judged against.

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

__all__ = ["capped_by_output", "priced_by_output"]


def priced_by_output(proposal: "Proposal", check: "OutputCheck", window_queries: int,
                     settings: "Settings") -> "Proposal":
    """``proposal`` with the output check's saving as its predicted saving when its policy
    priced none; else ``proposal`` unchanged.

    Bytes: ``check.bytes_before - check.bytes_after`` over the ``window_queries`` queries;
    CPU-seconds: those bytes at the query scan rate (:func:`engine.policy.costmodel.scan_seconds`);
    break-even: the rewrite's CPU-seconds over the saving per query. A one-group proposal's
    group carries the same bytes (``predicted_saving_bytes``). A design the check does not
    model (a partition column) or finds no saving in (an unmodelled one: a modelled one is
    declined before) promises 0 bytes, still over the ``window_queries`` queries it was
    checked on, so the run's re-estimate replays that window and flags a loss
    (:mod:`engine.plans.delivery`); ``details["saving_from"]`` says why nothing is promised."""
    if proposal.predicted_saving.get("window_queries") or window_queries <= 0:
        return proposal
    if (not check.delivers
            or any((g.layout_params or {}).get("partition_by") for g in proposal.groups)):
        why = ("not priced: the prediction does not model partition directories"
               if check.delivers else f"nothing promised: {check.reason}")
        return dataclasses.replace(
            proposal, predicted_saving={**proposal.predicted_saving, "bytes": 0.0, "cpu_seconds": 0.0,
                                        "money": 0.0, "window_queries": float(window_queries)},
            break_even_queries=None, details={**proposal.details, "saving_from": why})
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


def capped_by_output(proposal: "Proposal", check: "OutputCheck", settings: "Settings") -> "Proposal":
    """``proposal`` with its predicted saving lowered to the output check's when the check
    models the output (``check.modelled``) and finds less; else ``proposal`` unchanged.

    The bytes, CPU-seconds, money and each group's ``predicted_saving_bytes`` are scaled by
    the same factor (check's saving over the policy's); the break-even is recomputed; the
    policy's own figure is kept in ``details["policy_saving_bytes"]``."""
    window = float(proposal.predicted_saving.get("window_queries") or 0.0)
    predicted = float(proposal.predicted_saving.get("bytes") or 0.0)
    checked = float(check.bytes_before - check.bytes_after)
    if not check.modelled or window <= 0 or predicted <= 0 or not 0 < checked < predicted:
        return proposal
    factor = checked / predicted
    saving = {**proposal.predicted_saving,
              **{k: float(v) * factor for k, v in proposal.predicted_saving.items()
                 if k in ("bytes", "cpu_seconds", "money", "bonus_cpu_seconds") and v is not None}}
    groups = tuple(dataclasses.replace(g, predicted_saving_bytes=g.predicted_saving_bytes * factor)
                   if g.predicted_saving_bytes else g for g in proposal.groups)
    seconds = float(saving.get("cpu_seconds") or 0.0)
    cost = float(proposal.estimated_cost.cpu_seconds)
    return dataclasses.replace(
        proposal, groups=groups, predicted_saving=saving,
        break_even_queries=cost / (seconds / window) if seconds > 0 else None,
        details={**proposal.details, "saving_from": "output check", "policy_saving_bytes": predicted})
