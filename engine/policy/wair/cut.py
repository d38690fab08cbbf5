"""Algorithm 2's cut: which prefix of the partitions ranked by saving to recluster.

WAIR sorts the partitions by estimated saving (descending) and evaluates *every* cut: the
first ``cut`` partitions cost ``cost_r`` to recluster and save the sum of their savings.
The cut with the smallest net cost wins, and reclustering happens only if that net is
negative (equation 1). With the aggressiveness factor alpha (equation 4, "savings at least
alpha times the cost"), alpha = 1 is the standard model, alpha < 1 is more proactive,
alpha > 1 more conservative. The paper's order (``rule="paper"``, selectable): Algorithm 2
picks the cut that minimises ``cost_r - savings`` (section 4.2), and equation 4 then decides
whether that cut is reclustered (section 4.3). ``rule="scaled"`` (the default, a departure by
choice) picks the cut minimising ``cost_r - savings / alpha`` instead, which with alpha != 1
can be another cut (alpha < 1: a longer one, alpha > 1: a shorter one). It is the default
because it is better or equal in every measured case but alpha = 2 (below), and because the
break-even explanation and the busier what-if model "each query k times" as alpha / k,
which chooses the cut a k-times busier window would get only under it. Either way the curve returned is the
equation 4 net ``cost_r - savings / alpha`` of every cut, so "act iff the chosen cut's net
is negative" is equation 4 at the chosen cut. Measured in the simulator
(``bench/sim/README.md``, ``cut_rule.py``): with alpha = 0.5 the scaled rule cuts NR's CPU by
38.2% against 31.5% on TPC-H (73.5 / 71.3% on Mirrors, 58.7 / 58.5% on DSB); with alpha = 2
the paper's order is as good or slightly better (21.0 / 20.8% on TPC-H).

The cost of a prefix respects the memory limit k_max (section 3.3): the prefix is split,
in rank order, into consecutive chunks of at most k_max partitions, each sorted on its own;
a chunk larger than the memory budget pays the external merge sort (see
:mod:`engine.policy.costmodel`). All cuts are evaluated in O(n) with cumulative sums.

Example (three partitions of 10 bytes saving 5, 3, 0.5 CPU-s; reclustering costs 0.2 s
per byte here):
>>> import numpy as np
>>> from engine.core.config import Settings
>>> s = Settings(scan_bytes_per_s=10.0, sort_bytes_per_s=10.0, memory_budget_bytes=10**9)
>>> order, cut, curve = algorithm2_cut(np.array([0.5, 5.0, 3.0]), np.full(3, 10.0), s, 64)
>>> order.tolist(), cut, [round(v, 6) for _, v in curve]
([1, 2, 0], 2, [-3.0, -4.0, -2.5])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import batch_counts, recluster_seconds_array

if TYPE_CHECKING:
    from engine.core.config import Settings


def prefix_costs(part_bytes_ranked: np.ndarray, settings: "Settings", k_max: int) -> np.ndarray:
    """CPU-seconds to recluster the first c partitions (c = 1..n), split in chunks of k_max,
    priced as the executor runs them: every chunk is a group of one job, and the job's
    fixed cost ``rewrite_fixed_s`` is paid once per job: once, or with
    ``partial_progress_groups`` = N > 0 once per batch of N chunks
    (:func:`engine.policy.costmodel.batch_counts`, the batches ``costmodel.batches`` gives
    the executor).
    The layout terms are not part of the cut (the layouts are chosen after it); the plan
    is priced with them afterwards (``groups_rewrite_cost``).
    """
    if k_max < 1:
        raise InvalidParameterError(f"k_max must be >= 1, got {k_max}")
    b = np.asarray(part_bytes_ranked, dtype=np.float64)
    n = b.size
    if n == 0:
        return np.zeros(0)
    cb = np.concatenate([[0.0], np.cumsum(b)])  # cb[c] = bytes of the first c
    cuts = np.arange(1, n + 1)
    full = cuts // k_max  # complete chunks inside the prefix
    chunk_ends = np.arange(k_max, n + 1, k_max)
    chunk_bytes = cb[chunk_ends] - cb[chunk_ends - k_max]
    chunk_cost = np.concatenate([[0.0], np.cumsum(recluster_seconds_array(chunk_bytes, settings,
                                                                          fixed=False))])
    rest_bytes = cb[cuts] - cb[full * k_max]
    rest_cost = np.where(rest_bytes > 0, recluster_seconds_array(rest_bytes, settings,
                                                                 fixed=False), 0.0)
    chunks = full + (cuts % k_max > 0)  # groups in the prefix
    return (chunk_cost[full] + rest_cost
            + settings.rewrite_fixed_s * batch_counts(chunks, settings))


CUT_RULES = ("paper", "scaled")


def algorithm2_cut(savings: np.ndarray, part_bytes: np.ndarray, settings: "Settings",
                   k_max: int, alpha: float = 1.0,
                   rule: str = "scaled") -> tuple[np.ndarray, int, list[tuple[int, float]]]:
    """Rank by saving, evaluate every cut, return ``(order, cut*, curve)``.

    ``order`` ranks the input indices by saving (descending, ties by index); ``curve`` is
    every ``(cut, net)`` with equation 4's ``net(cut) = cost_r(first cut) - savings(first
    cut) / alpha``; ``cut*`` (0 when there is nothing to rank) is the argmin over
    ``cut = 1..n`` of ``cost_r - savings`` (``rule="paper"``: Algorithm 2, then equation 4)
    or of ``net`` itself (``rule="scaled"``). The caller acts only if
    ``curve[cut* - 1][1] < 0``, i.e. the chosen cut saves more than alpha x its cost.
    """
    if not alpha > 0:
        raise InvalidParameterError(f"alpha must be > 0, got {alpha}")
    if rule not in CUT_RULES:
        raise InvalidParameterError(f"cut_rule must be one of {', '.join(CUT_RULES)}, got {rule!r}")
    s = np.asarray(savings, dtype=np.float64)
    b = np.asarray(part_bytes, dtype=np.float64)
    if s.shape != b.shape:
        raise InvalidParameterError("savings and partition sizes must have the same length")
    if s.size == 0:
        return np.zeros(0, dtype=np.int64), 0, []
    order = np.argsort(-s, kind="stable")
    cost, saved = prefix_costs(b[order], settings, k_max), np.cumsum(s[order])
    net = cost - saved / alpha
    cut = int(np.argmin(cost - saved if rule == "paper" else net)) + 1
    curve = list(zip(range(1, s.size + 1), net.tolist()))
    return order, cut, curve


def thin_curve(curve: list[tuple[int, float]], cut: int, max_points: int = 400) -> list[tuple[int, float]]:
    """At most ~max_points of the curve for storage and charts, always keeping the first,
    the last and the chosen cut."""
    if len(curve) <= max_points:
        return list(curve)
    keep = set(np.linspace(0, len(curve) - 1, max_points).round().astype(int).tolist())
    if cut >= 1:
        keep.add(cut - 1)
    return [curve[i] for i in sorted(keep)]
