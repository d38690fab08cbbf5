"""DD's threshold tuned by grid search to WAIR's reclustering budget, as the paper does:
"We tune DD via grid search and select the optimal threshold at an overall reclustering
cost comparable to WAIR" (WAIR, section 6.3). Each candidate is one simulated run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.policy.base import Policy
from engine.sim.variants import partitions_per_batch, scenario_policy

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.scenarios.generator import Scenario
    from engine.sim.records import PolicyRun


def dd_grid(scenario: "Scenario") -> list[dict[str, Any]]:
    """DD's (depth threshold, partitions per cycle) candidates, around one batch's worth."""
    ppb = partitions_per_batch(scenario)
    grid = [{"depth_threshold": t, "max_partitions": ppb} for t in (4, 16, 64, 256)]
    grid += [{"depth_threshold": 4, "max_partitions": max(1, k)} for k in (ppb // 4, ppb // 2, 2 * ppb)]
    return grid


def tune_dd(scenario: "Scenario", settings: "Settings", budget_bytes: float,
            run: Callable[[Policy], "PolicyRun"], grid: Sequence[Mapping[str, Any]] | None = None
            ) -> tuple["PolicyRun", dict[str, Any]]:
    """Pick DD's parameters whose reclustering bytes are closest to ``budget_bytes`` (WAIR's),
    among those within 25% the one with the lowest total cost. ``run(policy)`` simulates one
    candidate. Returns the chosen run and the search record."""
    tried = []
    best = None
    for g in grid or dd_grid(scenario):
        r = run(scenario_policy("dd", scenario, g))
        t = r.totals()
        gap = abs(math.log((t["recluster_bytes"] + 1.0) / (budget_bytes + 1.0)))
        tried.append({**g, "recluster_bytes": t["recluster_bytes"], "total_bytes": t["total_bytes"],
                      "log_gap": gap})
        key = (0 if gap <= math.log(1.25) else 1, t["total_bytes"] if gap <= math.log(1.25) else gap)
        if best is None or key < best[0]:
            best = (key, r, g)
    assert best is not None
    return best[1], {"budget_bytes": budget_bytes, "chosen": dict(best[2]), "grid": tried}
