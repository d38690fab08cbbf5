"""PAW: data partitioning robust to δ-similar workloads (seed 001).

Definitions (:mod:`.similarity`), Alg. 1 (:mod:`.group_split`), Alg. 2 (:mod:`.axis_split`),
Alg. 3 with Ψ, the partition tree, router, unknown δ and k-d refinement (:mod:`.tree`).
"""

from engine.design.paw.boxes import DBox
from engine.design.paw.group_split import GroupSplit, multi_group_split
from engine.design.paw.similarity import dist_box, estimate_delta, extend, is_delta_similar, min_similar_delta
from engine.design.paw.tree import PawLeaf, PawTree

__all__ = ["DBox", "GroupSplit", "PawLeaf", "PawTree", "dist_box", "estimate_delta", "extend",
           "is_delta_similar", "min_similar_delta", "multi_group_split"]
