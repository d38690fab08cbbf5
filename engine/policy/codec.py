"""A :class:`~engine.policy.base.Proposal` as JSON and back.

The plan store keeps a policy's proposal as one JSON document; the executor, the CLI and the
dashboard read it back. Numbers are stored as plain floats (numpy scalars and tuples become
JSON values through :func:`engine.core.jsonable.plain_json`), so a round trip gives an equal
proposal.

Example:
>>> from engine.policy.base import CostEstimate, PlanGroup, Proposal
>>> group = PlanGroup(partitions=("a.parquet",), layout="sort", columns=("l_shipdate",))
>>> p = Proposal(policy="dd", params={"key": "l_shipdate"}, groups=(group,),
...              estimated_cost=CostEstimate(10.0, 10.0, 0.5, 0.0),
...              predicted_saving={"bytes": 4.0}, curve=((0, 0.0), (1, -2.5)))
>>> proposal_to_json(p)["groups"][0]["columns"]
['l_shipdate']
>>> proposal_from_json(proposal_to_json(p)) == p
True
"""

from __future__ import annotations

from typing import Any, Mapping

from engine.core.jsonable import plain_json
from engine.policy.base import CostEstimate, PlanGroup, Proposal

__all__ = ["group_to_json", "group_from_json", "proposal_to_json", "proposal_from_json"]


def group_to_json(group: PlanGroup) -> dict[str, Any]:
    """One plan group as a JSON object."""
    return {
        "partitions": list(group.partitions),
        "layout": group.layout,
        "columns": list(group.columns),
        "reason": group.reason,
        "layout_params": dict(group.layout_params),
        "predicted_saving_bytes": float(group.predicted_saving_bytes),
    }


def group_from_json(data: Mapping[str, Any]) -> PlanGroup:
    """The inverse of :func:`group_to_json` (missing optional fields take their defaults)."""
    return PlanGroup(partitions=tuple(data["partitions"]), layout=data["layout"],
                     columns=tuple(data["columns"]), reason=data.get("reason", ""),
                     layout_params=dict(data.get("layout_params") or {}),
                     predicted_saving_bytes=float(data.get("predicted_saving_bytes", 0.0)))


def proposal_to_json(proposal: Proposal) -> dict[str, Any]:
    """The proposal as stored with a plan."""
    cost = proposal.estimated_cost
    return {
        "policy": proposal.policy,
        "params": plain_json(dict(proposal.params)),
        "groups": [group_to_json(g) for g in proposal.groups],
        "estimated_cost": {"bytes_read": float(cost.bytes_read),
                           "bytes_written": float(cost.bytes_written),
                           "cpu_seconds": float(cost.cpu_seconds), "money": float(cost.money)},
        "predicted_saving": plain_json(dict(proposal.predicted_saving)),
        "break_even_queries": (None if proposal.break_even_queries is None
                               else float(proposal.break_even_queries)),
        "curve": [[int(c), float(v)] for c, v in proposal.curve],
        "details": plain_json(dict(proposal.details)),
    }


def proposal_from_json(data: Mapping[str, Any]) -> Proposal:
    """The inverse of :func:`proposal_to_json`."""
    cost = data.get("estimated_cost") or {}
    return Proposal(
        policy=data["policy"], params=dict(data.get("params") or {}),
        groups=tuple(group_from_json(g) for g in data.get("groups", [])),
        estimated_cost=CostEstimate(float(cost.get("bytes_read", 0.0)),
                                    float(cost.get("bytes_written", 0.0)),
                                    float(cost.get("cpu_seconds", 0.0)),
                                    float(cost.get("money", 0.0))),
        predicted_saving=dict(data.get("predicted_saving") or {}),
        break_even_queries=data.get("break_even_queries"),
        curve=tuple((int(c), float(v)) for c, v in data.get("curve", [])),
        details=dict(data.get("details") or {}))
