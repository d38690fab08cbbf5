"""What every step of a rewrite job shares: the helper column names and the driver-side
plan of each group (:class:`GroupSpec`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.workload.sql.render import spark_identifier

if TYPE_CHECKING:
    from engine.policy.base import PlanGroup
    from engine.table.model import Partition

KEY_COLUMN = "__la_key"  # a fitted ordering's key
PID_COLUMN = "__la_pid"  # the shuffle target
GROUP_COLUMN = "__la_g"  # the row's group
PART_COLUMN = "__la_part"  # the physical partition a file must not straddle
ORD_COLUMN = "__la_ord"  # binpack: the input file's position in its group
ROW_COLUMN = "__la_row"  # binpack: the row's position in its file
SIDE_COLUMN = "__la_side"  # verification: 0 inputs, 1 written files
FILE_COLUMN = "__la_file"  # the row's input file (index into the job's file list)
#: layouts whose key is an engine.layout ordering fitted on a sample
FITTED = ("hilbert", "zorder", "qdtree", "paw")
#: layouts whose rows belong to tree leaves: a file never holds two leaves (fine keys
#: ``leaf << FINE_SHIFT | rank``, as QdTree.fine_keys and PawOrdering.fine_keys)
LEAVES = ("qdtree", "paw")
#: bits of the first column's rank in a Qd-tree fine key (QdTree.fine_keys)
FINE_SHIFT = 17


def q(column: str) -> str:
    """A column name quoted for Spark, back quotes doubled inside (names may hold dots,
    spaces, quotes or SQL text: :func:`engine.workload.sql.render.spark_identifier`)."""
    return spark_identifier(column)


@dataclass
class GroupSpec:
    """Driver-side plan of one group inside the job."""

    index: int
    group: "PlanGroup"
    partitions: list["Partition"]
    rows: int
    bytes_in: int
    ordering_json: dict[str, Any] | None = None
    key_dtype: str = "long"
    sample_keys: Any = None
    fit: dict[str, Any] = field(default_factory=dict)
    cuts: list[Any] = field(default_factory=list)  # range cuts between the group's slices
    cut_on: str = ""  # column the cuts compare (a key column, KEY_COLUMN or ORD_COLUMN)
    buckets: list[int] = field(default_factory=list)  # one per slice
