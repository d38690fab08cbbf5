"""The human-expert baseline's file sizes (PTO Algorithm 4, section 4.1.2).

For a partition candidate with ``parts`` partitions (no partitioning: 1):
TFS = size / min(max(parts, files_max), max(partFiles_min x parts, files_min)), clamped
to [TFS_min, TFS_max]; RGS = min(RGS_max, TFS / 4, max(RGS_min, 100K rows x bytes per
row)). Constants (section 4.1.2 (6)): files_min 30, files_max 10K, partFiles_min 10,
TFS 32-512 MB, RGS 8-128 MB. The constants are the paper's for SF 10K; on a smaller
table :class:`ExpertBounds.scaled` scales the byte bounds to the table's TFS grid.

Example (Table 2, 1 GB = 1024 MB):
>>> b = ExpertBounds()
>>> round(expert_sizes(74.5 * 1024 * MB, 25, b)[0] / MB, 1)   # customer, c_nationkey
305.2
>>> round(expert_sizes(1.6 * 1024 * 1024 * MB, 2466, b)[0] / MB, 1)   # lineitem
167.8
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.design.pto.candidates import MB


@dataclass(frozen=True)
class ExpertBounds:
    """Algorithm 4's constants (bytes and counts)."""

    tfs_min: float = 32 * MB
    tfs_max: float = 512 * MB
    rgs_min: float = 8 * MB
    rgs_max: float = 128 * MB
    files_min: int = 30
    files_max: int = 10_000
    part_files_min: int = 10
    rg_rows: int = 100_000

    @classmethod
    def scaled(cls, tfs_grid: list[int]) -> "ExpertBounds":
        """The paper's bounds moved to a scaled TFS grid (ours): TFS in [grid min, grid
        max], RGS in the same ratio to TFS as the paper's (8/32, 128/512)."""
        lo, hi = float(min(tfs_grid)), float(max(tfs_grid))
        return cls(tfs_min=lo, tfs_max=hi, rgs_min=lo / 4, rgs_max=hi / 4)


def expert_sizes(table_bytes: float, parts: int, bounds: ExpertBounds = ExpertBounds(),
                 bytes_per_row: float = 0.0) -> tuple[float, float]:
    """(TFS, RGS) in bytes for a table of ``table_bytes`` split into ``parts`` partitions.

    Example (customer at SF 10K: 1.5G rows, 53 bytes a row -> RGS_min wins):
    >>> round(expert_sizes(74.5 * 1024 * MB, 25, bytes_per_row=74.5 * 1024 * MB / 1.5e9)[1] / MB, 1)
    8.0
    """
    b = bounds
    files = min(max(parts, b.files_max), max(b.part_files_min * parts, b.files_min))  # line 2
    tfs = min(b.tfs_max, max(b.tfs_min, table_bytes / files))  # line 3
    rgs = min(b.rgs_max, tfs / 4, max(b.rgs_min, b.rg_rows * bytes_per_row))  # line 4
    return tfs, rgs
