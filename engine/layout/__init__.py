"""Row orderings for reclustering (sort key, Z-order, Hilbert, Qd-tree) and the savings
signatures that choose among them per group (WAIR section 4.4), and the one "plan group ->
fitted ordering" (:mod:`engine.layout.groups`) the simulator and the executor share. Pure
numpy/scikit-learn: no Spark here; the executor ships a fitted ordering's JSON to Spark
workers. Importing the package imports every layout module, which registers each ordering
class under its kind (:func:`engine.layout.base.ordering_classes`)."""

from engine.layout.base import (
    KINDS,
    NotFittedError,
    Ordering,
    RankCodec,
    make_ordering,
    ordering_classes,
    ordering_from_json,
)
from engine.layout.groups import build_ordering, ordering_for_group
from engine.layout.hilbert import Hilbert, hilbert_decode, hilbert_encode
from engine.layout.paw import PawOrdering
from engine.layout.qdtree import QdLeaf, QdTree
from engine.layout.signatures import (
    Anchor,
    LayoutChoice,
    SavingsClusterer,
    dbscan_cosine,
    project_2d,
    projection_2d,
    savings_signatures,
)
from engine.layout.sortkey import SortKey
from engine.layout.zorder import ZOrder, deinterleave_bits, interleave_bits

__all__ = [
    "KINDS", "NotFittedError", "Ordering", "RankCodec", "make_ordering", "ordering_classes", "ordering_from_json",
    "build_ordering", "ordering_for_group",
    "Hilbert", "hilbert_decode", "hilbert_encode", "PawOrdering", "QdLeaf", "QdTree", "Anchor", "LayoutChoice",
    "SavingsClusterer", "dbscan_cosine", "project_2d", "projection_2d", "savings_signatures",
    "SortKey", "ZOrder", "deinterleave_bits", "interleave_bits",
]
