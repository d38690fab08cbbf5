"""How much busier a workload must be before a declined rewrite pays (WAIR, equation 4).

Algorithm 2 picks the cut with the smallest net cost ``cost_r(c) - S(c) / alpha``, where
``S(c)`` is the saving of the ``c`` partitions ranked first over the window. When that
smallest net is not negative WAIR proposes nothing, and its cut is the *least bad* cut at
today's rate of queries, often a single partition whose fixed rewrite cost dominates. That
cut says little about when a rewrite would pay: the same queries arriving ``k`` times as
often save ``k * S(c)``, and the first cut to pay is the one with the smallest
``alpha * cost_r(c) / S(c)``, usually a larger one.

:func:`break_even` reads that off the net curve and the ranked savings (the cost of each
cut is ``net(c) + S(c) / alpha``, so nothing is priced twice): the factor ``k``, its cut,
that cut's cost and saving, and the number of queries per window at which it pays.

Example: three partitions saving 0.5, 0.3 and 0.1 CPU-s; the cuts cost 2, 2.2 and 3 CPU-s.
The net is smallest at cut 2 (2.2 - 0.8 = 1.4), and the same cut pays first: 2.75 times as
many queries, i.e. 28 queries where the window saw 10.
>>> b = break_even([1.5, 1.4, 2.1], [0.5, 0.3, 0.1], alpha=1.0, window_queries=10)
>>> round(b["factor"], 6), b["cut"], round(b["cost_cpu_s"], 6), b["queries"]
(2.75, 2, 2.2, 28)
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


def break_even(net: Sequence[float], ranked_savings: Sequence[float], alpha: float,
               window_queries: int) -> dict[str, Any] | None:
    """The cut that pays first as the workload gets busier, or None if no cut saves anything.

    ``net``: Algorithm 2's net cost of every cut ``c = 1..n`` (CPU-s, equation 4);
    ``ranked_savings``: each partition's saving over the window, in the curve's rank order.
    Returns ``{"factor", "cut", "cost_cpu_s", "saving_cpu_s", "queries"}``: the cut pays when
    the window's queries arrive more than ``factor`` times as often, i.e. at ``queries`` (the
    smallest whole number above ``factor * window_queries``) queries like these per window.
    """
    net_a = np.asarray(net, dtype=np.float64)
    saved = np.cumsum(np.asarray(ranked_savings, dtype=np.float64))
    if net_a.shape != saved.shape:
        raise ValueError(f"{net_a.size} net costs but {saved.size} savings")
    if not (saved > 0).any():
        return None
    cost = net_a + saved / alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(saved > 0, alpha * cost / saved, np.inf)
    i = int(np.argmin(factor))
    k = float(factor[i])
    return {"factor": k, "cut": i + 1, "cost_cpu_s": float(cost[i]),
            "saving_cpu_s": float(saved[i]),
            "queries": math.floor(k * window_queries) + 1 if window_queries > 0 else None}
