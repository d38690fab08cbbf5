"""Policies by name: the one registry of real plans and the simulator.

* Plan policies (:func:`policy_names`, the CLI's ``--policy`` choices): ``wair``, ``dd``,
  ``dd-ep``, ``greedy`` (WAIR's Algorithm 1), built by :func:`make_policy`. The CLI, the
  API and the dashboard give parameters as a flat dict (``alpha``, ``window``, ``key``, ...);
  :func:`plan_params` normalizes it (``key`` is WAIR's ``fixed_key``). Each policy accepts
  only the keywords of its ``__init__`` (:meth:`Policy.param_names`); an unknown one is
  refused with the list of accepted names, so a typo never silently falls back to a default.
* Simulated variants (:data:`SIM_POLICIES`, WAIR section 6.3 and 6.9), built by
  :func:`make_sim_policy`: ``nr``, ``nn``, ``qd``, ``oracle`` are the baselines of
  :mod:`engine.policy.baselines`; ``dd`` and ``dd-ep`` get each period's oracle key
  (:class:`OracleKeyed`); ``wair`` is the standard WAIR (standard cost model, hybrid layout)
  and ``fk``, ``fw``, ``aggressive`` its section 6.9 variants:

  - ``fk``: fixed key, no hybrid layout (the first reclustering period's key throughout);
  - ``fw``: fixed window (no doubling/halving), a fixed number of partitions per batch
    (one batch's worth of partitions);
  - ``aggressive``: alpha = 0.5, credit allowance c = 10;
  - ``wair-static``: WAIR with its window fixed at the initial 50 queries -- not in the
    paper; a reference point for the adaptive window (``engine/policy/wair/state.py``).
  - ``paw`` (not a WAIR variant): the whole table re-partitioned by a PAW tree at
    each reclustering period's start, like ``qd``.

  The two facts these variants take from a scenario (one batch's worth of partitions, the
  first reclustering period's key) are explicit arguments: ``engine.sim.variants`` reads them off a scenario.

Example:
>>> make_policy("dd", {"key": "l_shipdate", "depth-threshold": 8}).get_params()
{'key': 'l_shipdate', 'depth_threshold': 8.0, 'max_partitions': 100}
>>> plan_params("wair", {"key": "l_shipdate", "alpha": None})
{'fixed_key': 'l_shipdate'}
>>> "window" in policy_class("greedy").param_names(), "window" in policy_class("dd").param_names()
(True, False)
>>> make_sim_policy("fw", partitions_per_batch=7, first_key="l_shipdate").fixed_partitions_per_batch
7
"""

from __future__ import annotations

from typing import Any, Mapping

from engine.core.errors import InvalidParameterError
from engine.policy.base import Policy
from engine.policy.baselines import NewDataSort, NoRecluster, Oracle, OracleKeyed, QdTreeRepartition
from engine.policy.boundary import GreedyBoundaryPolicy
from engine.policy.dd import DDPolicy
from engine.policy.dd_ep import DDEPPolicy
from engine.policy.paw import PawPolicy
from engine.policy.pto import PtoPolicy
from engine.policy.wair import WairPolicy

#: the policies a plan can use, by name
PLAN_POLICIES: dict[str, type[Policy]] = {
    "wair": WairPolicy,
    "dd": DDPolicy,
    "dd-ep": DDEPPolicy,
    "greedy": GreedyBoundaryPolicy,  # WAIR's Algorithm 1
    "paw": PawPolicy,  # PAW (seed 001): a whole-table partition tree
    "pto": PtoPolicy,  # PTO's whole-table design (seed 002)
}

#: the simulator's variants, in display order, and their labels
SIM_POLICIES = ("nr", "nn", "qd", "dd", "dd-ep", "wair", "fk", "fw", "aggressive", "wair-static",
                "paw",  # PAW: a full repartition at each period start, like QD
                "oracle")
DEFAULT_SIM_POLICIES = ("nr", "nn", "qd", "dd", "wair", "oracle")
LABELS = {"nr": "NR", "nn": "NN", "qd": "QD", "dd": "DD", "dd-ep": "DD-EP", "wair": "WAIR",
          "fk": "WAIR-FK", "fw": "WAIR-FW", "aggressive": "WAIR-aggr", "wair-static": "WAIR-W50",
          "paw": "PAW",
          "oracle": "Oracle"}
#: the workload-aware variants (WAIR and its ablations): they look at a long query history
WAIR_FAMILY = ("wair", "fk", "fw", "aggressive", "wair-static")


def policy_names() -> list[str]:
    """The names :func:`make_policy` accepts (plan policies)."""
    return list(PLAN_POLICIES)


def policy_class(name: str) -> type[Policy]:
    """The class of the plan policy ``name``; its ``param_names()`` are the keywords it takes."""
    key = (name or "").strip().lower()
    if key not in PLAN_POLICIES:
        raise InvalidParameterError(
            f"unknown policy {name!r}; policies are: {', '.join(PLAN_POLICIES)}")
    return PLAN_POLICIES[key]


def plan_params(name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A flat parameter dict from the CLI, the API or the dashboard in the policy's terms:
    unset (None) values dropped, dashes as underscores, and ``key`` (a fixed sort key) as
    WAIR's ``fixed_key``."""
    out = {k.replace("-", "_"): v for k, v in (params or {}).items() if v is not None}
    if "key" in out and (name or "").strip().lower() == "wair":
        out["fixed_key"] = out.pop("key")
    return out


def make_policy(name: str, params: Mapping[str, Any] | None = None) -> Policy:
    """Build the plan policy ``name`` with ``params`` (None values are dropped: defaults apply)."""
    given = {k.replace("-", "_"): v for k, v in (params or {}).items() if v is not None}
    return _build(policy_class(name), name, given)


def make_sim_policy(name: str, params: Mapping[str, Any] | None = None, *,
                    partitions_per_batch: int, first_key: str) -> Policy:
    """A fresh policy for one simulated run of the variant ``name``; ``params`` override
    the variant's defaults. ``partitions_per_batch``: partitions one batch's ingestion
    creates (DD's K, DD-EP's threshold, WAIR-FW's cut); ``first_key``: the first
    reclustering period's key (WAIR-FK's fixed key)."""
    key = name.strip().lower()
    given = dict(params or {})
    if key == "nr":
        return NoRecluster()
    if key == "nn":
        return _build(NewDataSort, name, given)
    if key == "qd":
        return _build(QdTreeRepartition, name, given)
    if key == "oracle":
        return Oracle()
    if key == "paw":  # rows come from the simulator's sampler (Policy.bind_sampler)
        return _build(PawPolicy, name, given)
    if key == "dd":
        return OracleKeyed(DDPolicy(
            depth_threshold=float(given.get("depth_threshold", 4)),
            max_partitions=int(given.get("max_partitions", partitions_per_batch))))
    if key == "dd-ep":
        return OracleKeyed(DDEPPolicy(
            partition_threshold=int(given.get("partition_threshold", partitions_per_batch))))
    if key in WAIR_FAMILY:
        preset: dict[str, Any] = {
            "wair": {},
            "fk": {"hybrid": False, "fixed_key": first_key},
            "fw": {"adaptive_window": False, "fixed_partitions_per_batch": partitions_per_batch},
            "aggressive": {"alpha": 0.5, "credit_allowance_c": 10.0},
            "wair-static": {"adaptive_window": False},
        }[key]
        return _build(WairPolicy, name, {**preset, **given})
    raise InvalidParameterError(f"unknown policy {name!r}; policies are: {', '.join(SIM_POLICIES)}")


def _build(cls: type[Policy], name: str, given: Mapping[str, Any]) -> Policy:
    """``cls(**given)`` after checking every name against ``cls.param_names()``."""
    known = sorted(cls.param_names())
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidParameterError(
            f"policy {name} does not take {', '.join(unknown)}; it takes: {', '.join(known)}")
    try:
        return cls(**given)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidParameterError):
            raise
        raise InvalidParameterError(f"policy {name}: {exc}") from None
