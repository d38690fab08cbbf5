"""The policies the simulator compares (WAIR section 6.3), by name, for one scenario.

``nr``, ``nn``, ``qd``, ``oracle`` are the baselines of :mod:`engine.policy.baselines`;
``dd`` and ``dd-ep`` are H3's data-driven policies given each period's oracle key (for a
Hilbert mix they select by depth on the first key column and rewrite in the Hilbert
order, as the paper's DD "adopts a Hilbert-composed key"); ``wair`` is the standard WAIR
(standard cost model, hybrid layout) and ``fk``, ``fw``, ``aggressive`` its section 6.9
variants, which are plain :class:`engine.policy.wair.WairParams` sets:

* ``fk``: fixed key, no hybrid layout (the first reclustering period's key throughout);
* ``fw``: fixed window (no doubling/halving), a fixed number of partitions per batch
  (one batch's worth of partitions);
* ``aggressive``: alpha = 0.5, credit allowance c = 10;
* ``wair-static``: WAIR with its window fixed at the initial 50 queries (no doubling or
  halving) -- not in the paper; a reference point for the adaptive window (see
  ``bench/README_sim.md`` and ``engine/policy/wair_state.py`` for how the window adapts).

DD's threshold is tuned by grid search to WAIR's reclustering budget (:func:`tune_dd`), as
the paper does: "We tune DD via grid search and select the optimal threshold at an overall
reclustering cost comparable to WAIR".
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import InvalidParameterError
from engine.policy.base import PolicyContext, Proposal
from engine.policy.baselines import NewDataSort, NoRecluster, Oracle, OracleKeyed, QdTreeRepartition

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.sim.records import PolicyRun
    from engine.scenarios.generator import Scenario

SIM_POLICIES = ("nr", "nn", "qd", "dd", "dd-ep", "wair", "fk", "fw", "aggressive", "wair-static", "oracle")
DEFAULT_POLICIES = ("nr", "nn", "qd", "dd", "wair", "oracle")
LABELS = {"nr": "NR", "nn": "NN", "qd": "QD", "dd": "DD", "dd-ep": "DD-EP", "wair": "WAIR",
          "fk": "WAIR-FK", "fw": "WAIR-FW", "aggressive": "WAIR-aggr", "wair-static": "WAIR-W50",
          "oracle": "Oracle"}


class _Rekeyed:
    """A single-key policy whose groups are rewritten in the period's (multi-column) layout."""

    def __init__(self, inner: Any, columns: tuple[str, ...], layout: str) -> None:
        self.inner, self.columns, self.layout = inner, columns, layout
        self.name = inner.name

    @property
    def params(self) -> dict[str, Any]:
        return {"key": list(self.columns), "layout": self.layout,
                **{k: getattr(self.inner, k) for k in ("depth_threshold", "max_partitions",
                                                        "partition_threshold") if hasattr(self.inner, k)}}

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        p = self.inner.propose(ctx)
        if p is None or (self.layout == "sort" and len(self.columns) == 1):
            return p
        groups = tuple(dataclasses.replace(g, layout=self.layout, columns=self.columns) for g in p.groups)
        return dataclasses.replace(p, groups=groups)

    def observe(self, feedback: Any) -> None:
        self.inner.observe(feedback)


def partitions_per_batch(scenario: "Scenario") -> int:
    b = scenario.dataset
    rows = b.rows / max(1, b.n_batches)
    return max(1, math.ceil(rows / scenario.spec.target_rows))


def first_recluster_key(scenario: "Scenario") -> str:
    for p in scenario.spec.periods:
        if p.recluster and p.oracle_columns:
            return p.oracle_columns[0]
    return scenario.spec.periods[0].predicate_mix[0][0]


def make_sim_policy(name: str, scenario: "Scenario", params: Mapping[str, Any] | None = None) -> Any:
    """A fresh policy instance for one simulated run (``params`` override its defaults)."""
    key = name.strip().lower()
    params = dict(params or {})
    if key == "nr":
        return NoRecluster()
    if key == "nn":
        return NewDataSort(**params)
    if key == "qd":
        return QdTreeRepartition(**params)
    if key == "oracle":
        return Oracle()
    ppb = partitions_per_batch(scenario)
    if key == "dd":
        from engine.policy.dd import DDPolicy

        th = float(params.get("depth_threshold", 4))
        k = int(params.get("max_partitions", ppb))

        def dd(cols: tuple[str, ...], layout: str) -> Any:
            return _Rekeyed(DDPolicy(key=cols[0], depth_threshold=th, max_partitions=k), cols, layout)
        return OracleKeyed("dd", dd)
    if key == "dd-ep":
        from engine.policy.dd_ep import DDEPPolicy

        thr = int(params.get("partition_threshold", ppb))

        def ddep(cols: tuple[str, ...], layout: str) -> Any:
            return _Rekeyed(DDEPPolicy(key=cols[0], partition_threshold=thr), cols, layout)
        return OracleKeyed("dd-ep", ddep)
    if key in ("wair", "fk", "fw", "aggressive", "wair-static"):
        from engine.policy.wair import WairParams, WairPolicy

        preset: dict[str, Any] = {
            "wair": {},
            "fk": {"hybrid": False, "fixed_key": first_recluster_key(scenario)},
            "fw": {"adaptive_window": False, "fixed_partitions_per_batch": ppb},
            "aggressive": {"alpha": 0.5, "credit_allowance_c": 10.0},
            "wair-static": {"adaptive_window": False},
        }[key]
        preset.update(params)
        policy = WairPolicy(WairParams(**preset))
        policy.name = key
        return policy
    raise InvalidParameterError(f"unknown policy {name!r}; policies are: {', '.join(SIM_POLICIES)}")


def dd_grid(scenario: "Scenario") -> list[dict[str, Any]]:
    """DD's (depth threshold, partitions per cycle) candidates, around one batch's worth."""
    ppb = partitions_per_batch(scenario)
    grid = [{"depth_threshold": t, "max_partitions": ppb} for t in (4, 16, 64, 256)]
    grid += [{"depth_threshold": 4, "max_partitions": max(1, k)} for k in (ppb // 4, ppb // 2, 2 * ppb)]
    return grid


def tune_dd(scenario: "Scenario", settings: "Settings", budget_bytes: float,
            run: Callable[[Any], "PolicyRun"], grid: Sequence[Mapping[str, Any]] | None = None
            ) -> tuple["PolicyRun", dict[str, Any]]:
    """Pick DD's parameters whose reclustering bytes are closest to ``budget_bytes`` (WAIR's),
    among those within 25% the one with the lowest total cost. Returns the chosen run and
    the search record."""
    tried = []
    best = None
    for g in grid or dd_grid(scenario):
        r = run(make_sim_policy("dd", scenario, g))
        t = r.totals()
        gap = abs(math.log((t["recluster_bytes"] + 1.0) / (budget_bytes + 1.0)))
        tried.append({**g, "recluster_bytes": t["recluster_bytes"], "total_bytes": t["total_bytes"],
                      "log_gap": gap})
        key = (0 if gap <= math.log(1.25) else 1, t["total_bytes"] if gap <= math.log(1.25) else gap)
        if best is None or key < best[0]:
            best = (key, r, g)
    assert best is not None
    return best[1], {"budget_bytes": budget_bytes, "chosen": dict(best[2]), "grid": tried}
