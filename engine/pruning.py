"""Pruning analysis: which partitions each scan fragment prunes, scans, fully covers.

CONTRACT (other modules code against it; the implementation fills in the functions):

``analyze_fragment(zonemaps, fragment) -> FragmentScan`` works on the driver with numpy
only, conservatively (a missing bound means "might match"). Utilization is the estimated
fraction of a scanned partition's rows that match (uniform within the zonemap range),
1.0 for fully covered partitions and 0.0 for pruned ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FragmentScan:
    """Per-partition outcome of one fragment over one snapshot (arrays align with ZoneMaps)."""

    query_id: str
    scanned: np.ndarray  # bool
    fully_covered: np.ndarray  # bool, subset of scanned
    utilization: np.ndarray  # float in [0, 1]; 0 where pruned
    read_bytes: np.ndarray  # float: projection-aware bytes read per partition if scanned
    predicated_columns: tuple[str, ...]

    @property
    def boundary(self) -> np.ndarray:
        return self.scanned & ~self.fully_covered

    @property
    def pruned(self) -> np.ndarray:
        return ~self.scanned

    @property
    def bytes_scanned(self) -> float:
        return float(self.read_bytes[self.scanned].sum())

    @property
    def pruning_rate(self) -> float:
        n = len(self.scanned)
        return float((~self.scanned).sum() / n) if n else 0.0
