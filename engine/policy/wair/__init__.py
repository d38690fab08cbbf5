"""WAIR, workload-aware incremental reclustering (the WAIR paper, sections 3-4).

One decision is a pipeline of small steps, each in its own module: ``savings`` (eq. 3, 6),
``cut`` (Algorithm 2, eq. 1 and 4), ``state`` (the window of section 4.2, the budgets of
eq. 2 and 5), ``groups`` (section 4.4's hybrid layouts); ``policy`` composes them.
"""

from engine.policy.wair.cut import algorithm2_cut
from engine.policy.wair.policy import WairParams, WairPolicy
from engine.policy.wair.savings import partition_savings

__all__ = ["WairParams", "WairPolicy", "algorithm2_cut", "partition_savings"]
